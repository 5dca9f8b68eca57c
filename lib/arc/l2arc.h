/*
 * l2arc.h — the second-level cache: clean blocks the ARC evicts, kept
 * on cache devices (an SSD, a USB stick) in a ring, found again by the
 * block's identity, verified on every hit, and found again after an
 * import or a restart (the ring's chunk headers are the index).
 *
 * One l2arc_t per pool holds its cache devices.  The dmu feeds it what
 * the ARC evicts (l2arc_feed copies the block into a write buffer; a
 * writer thread puts full buffers on a device at most lo_write_max
 * bytes a second), and asks it before reading a block from the pool
 * (l2arc_read).  A block is named by its arc_key (first DVA and birth)
 * and the first word of its checksum in the block pointer: a pool
 * rewound to an older txg that wrote other bytes at the same place and
 * birth does not hit.  A hit is checked against the hash of the bytes
 * written (XXH3-64): a damaged or vanished device costs a miss, counted,
 * never bad data.  Theory, format and locking: the top of l2arc.c,
 * docs/DESIGN.md "The L2ARC", docs/FORMAT.md "Cache devices".
 */
#ifndef TARN_L2ARC_H
#define TARN_L2ARC_H

#include "tarn_util.h"
#include "vdev.h"

typedef struct l2arc l2arc_t;

#define L2ARC_WRITE_MAX_DEFAULT (32 * MiB)  /* bytes a second */
#define L2ARC_BLOCK_MAX         (1 * MiB)   /* larger blocks are not cached */

typedef struct l2arc_opts {
	uint64_t lo_pool_guid;      /* devices of another pool are formatted anew */
	uint64_t lo_write_max;      /* bytes a second; 0: L2ARC_WRITE_MAX_DEFAULT */
	uint64_t lo_idle_ms;        /* a part-full buffer is written after this; 0: 1000 */
} l2arc_opts_t;

l2arc_t *l2arc_create(const l2arc_opts_t *o);
/* Write what is pending (as l2arc_flush), stop the writer, drop every device. */
void l2arc_destroy(l2arc_t *l2);

/* The smallest device (whole leaf, labels included) a cache can use. */
uint64_t l2arc_min_size(void);
/*
 * Use leaf (open, readable and writable) as a cache device.  A device
 * whose ring belongs to this pool is read back: its blocks hit at once
 * (persistent L2ARC); any other is formatted anew.  ENOSPC: smaller
 * than l2arc_min_size; EEXIST: already in use; EIO.
 */
int l2arc_dev_add(l2arc_t *l2, vdev_t *leaf, uint64_t dev_guid);
/*
 * Stop using leaf: its blocks are forgotten; waits for reads from it
 * that are under way.  ENOENT when it is not one of the devices.
 */
int l2arc_dev_remove(l2arc_t *l2, vdev_t *leaf);
int l2arc_ndevs(l2arc_t *l2);

/*
 * A block the cache may hold: true when it did, and buf[0..size) now
 * holds its bytes, verified.  False (a miss) otherwise, and after an
 * I/O error or bad bytes (counted; the entry is dropped).
 */
bool l2arc_read(l2arc_t *l2, uint64_t key, uint64_t bpck, void *buf, uint32_t size);
/*
 * Offer a block leaving the ARC: copied into the write buffer unless it
 * is cached already, too big, or the buffer is full (counted as dropped:
 * the feed never waits for the device).
 */
void l2arc_feed(l2arc_t *l2, uint64_t key, uint64_t bpck, const void *buf, uint32_t size);
/* Whether l2arc_feed would take such a block now (a cheap look, before making its bytes). */
bool l2arc_wants(l2arc_t *l2, uint64_t key, uint64_t bpck, uint32_t size);
/*
 * A hit whose bytes the caller found bad (its block pointer's checksum):
 * forget the block and count it as l2arc_read counts bad bytes.
 */
void l2arc_bad(l2arc_t *l2, uint64_t key, uint64_t bpck);
/* Write what is pending now and wait for it (export, tests). */
void l2arc_flush(l2arc_t *l2);
void l2arc_set_write_max(l2arc_t *l2, uint64_t bytes_per_sec);

typedef struct l2arc_stats {
	uint64_t ls_hits, ls_misses;        /* reads asked while a device was there */
	uint64_t ls_read_bytes;             /* bytes of hits */
	uint64_t ls_feeds, ls_feed_drops;   /* blocks offered, and not taken (buffer full) */
	uint64_t ls_writes, ls_write_bytes; /* chunks and bytes written to the devices */
	uint64_t ls_size;                   /* bytes of the blocks the index names */
	uint64_t ls_asize;                  /* bytes of the devices those take */
	uint64_t ls_hdr_size;               /* RAM of the index */
	uint64_t ls_blocks;                 /* blocks the index names */
	uint64_t ls_cksum_bad, ls_io_errors;
	uint64_t ls_rebuild_blocks;         /* found again at l2arc_dev_add */
	uint64_t ls_dev_size;               /* ring bytes of every device */
	uint64_t ls_write_max;
} l2arc_stats_t;
void l2arc_stats(l2arc_t *l2, l2arc_stats_t *out);

#endif
