/*
 * dmu.h — objects and transactions.
 *
 * An object set is an array of objects (dnodes) stored in its meta-dnode;
 * each object is a tree of block pointers over equal-sized blocks (holes
 * cost nothing) plus a small bonus buffer.  Changes are made inside a
 * transaction (dmu_tx) that belongs to one transaction group; a txg moves
 * open → quiescing → syncing, and the sync writes every dirty block
 * bottom-up through zio.  The pool layer drives the sync (it owns the
 * uberblock); this layer owns dirty data, the write throttle and the
 * txg thread.  Theory: the comments at the top of txg.c and dbuf.c.
 */
#ifndef TARN_DMU_H
#define TARN_DMU_H

#include "tarn_util.h"
#include "format.h"
#include "zio.h"
#include "arc.h"
#include "l2arc.h"

#define DNODE_SHIFT            9
#define DNODE_SIZE             (1 << DNODE_SHIFT)          /* 512 */
#define DNODE_BLOCK_SIZE       (16 * KiB)                  /* 32 dnodes */
#define DN_MAX_BONUSLEN        320
#define DN_INDIRECT_SHIFT      17                          /* 128 KiB indirects */
#define DMU_META_DNODE_OBJECT  0
#define DMU_MAX_OBJECT         (1ULL << 48)
#define DMU_OBJECT_END         UINT64_MAX                  /* "to the end" */

typedef struct dmu_pool dmu_pool_t;
typedef struct objset objset_t;
typedef struct dmu_tx dmu_tx_t;

/* ---- the pool of object sets and its transaction groups ---- */

/*
 * The pool layer's sync function: write everything dirty in txg (by
 * calling dmu_objset_sync() for each object set, as many passes as it
 * takes), then the uberblock.  A non-zero return suspends the pool.
 */
typedef int (*dmu_pool_sync_fn_t)(void *arg, uint64_t txg);
/* Bytes still available for new data (after slop); for ENOSPC checks. */
typedef uint64_t (*dmu_pool_space_fn_t)(void *arg, bool netfree);

typedef struct dmu_pool_opts {
	uint64_t dpo_dirty_max;      /* bytes of dirty data before writers wait; 0 = default */
	/*
	 * The ARC that caches the pool's clean blocks: the daemon's, shared
	 * by all its pools (not owned).  NULL: the pool makes its own of
	 * dpo_cache_max bytes (0 = 1 GiB), for tools that open one pool.
	 */
	arc_t   *dpo_arc;
	uint64_t dpo_cache_max;      /* bytes of the pool's own ARC; 0 = default */
	uint64_t dpo_txg_timeout_ms; /* sync at least this often; 0 = 5000 */
	uint64_t dpo_pool_guid;      /* set by the pool layer: part of a block's ARC key */
} dmu_pool_opts_t;

dmu_pool_t *dmu_pool_create(zio_ctx_t *zc, uint64_t last_synced_txg,
    const dmu_pool_opts_t *opts, dmu_pool_sync_fn_t sync_fn,
    dmu_pool_space_fn_t space_fn, void *arg);
/* Start the txg sync thread (a read-only pool never starts it). */
void dmu_pool_start(dmu_pool_t *dp);
/*
 * Stop the sync thread; when `sync` is true, sync everything dirty first.
 * Without sync (abandon after a simulated power cut) unsynced changes
 * are dropped when the object sets are closed.
 */
void dmu_pool_stop(dmu_pool_t *dp, bool sync);
/* Stop (as above) and free dp.  Object sets must be closed first. */
void dmu_pool_destroy(dmu_pool_t *dp, bool sync);
zio_ctx_t *dmu_pool_zio(dmu_pool_t *dp);

/* Wait until txg (0: the currently open one) is on disk.  EIO if suspended. */
int txg_wait_synced(dmu_pool_t *dp, uint64_t txg);
/*
 * From the pool's sync: after txg, deferred frees are (true) or are not
 * maturing.  Frees become allocatable only some txgs after their own, so
 * the sync thread then syncs a few txgs even without dirty data, at a
 * short interval, and space freed on an idle pool comes back within a
 * second instead of at the next write.  A txg with changes starts such a
 * run when arm (the pool layer: the frees matter) or when the pool met
 * ENOSPC lately; empty txgs continue it while frees are maturing.
 */
void txg_frees_maturing(dmu_pool_t *dp, bool maturing, bool arm);
/* Ask for the open txg to be synced soon, without waiting. */
void txg_kick(dmu_pool_t *dp);
uint64_t txg_last_synced(dmu_pool_t *dp);
uint64_t txg_open_txg(dmu_pool_t *dp);
/*
 * Would a tx needing `space` bytes fit now, leaving `keep` free?  Waits
 * for up to a few txg syncs as dmu_tx_assign does (their frees and
 * worst-case estimates); 0, ENOSPC, or EIO when the pool is suspended.
 */
int dmu_pool_space_wait(dmu_pool_t *dp, uint64_t space, uint64_t keep);
/*
 * Somebody was refused for want of space: for a while, txgs holding frees
 * sync quickly and their frees mature without waiting for other changes.
 */
void dmu_pool_note_enospc(dmu_pool_t *dp);
/* The worst-case space estimates of the txgs not yet synced. */
uint64_t dmu_pool_space_pending(dmu_pool_t *dp);
/* True (and writes fail with EIO) after a sync failed. */
bool dmu_pool_suspended(dmu_pool_t *dp);
/* The error of the sync that suspended the pool (0: not suspended). */
int dmu_pool_sync_error(dmu_pool_t *dp);
/* Testing hook: called after each txg is on disk (txg, arg). */
void dmu_pool_set_synced_cb(dmu_pool_t *dp, void (*fn)(void *, uint64_t), void *arg);
/* Change the pool's dirty-data limit (dpo_dirty_max; 0: the default) for the txgs to come. */
void dmu_pool_set_dirty_max(dmu_pool_t *dp, uint64_t bytes);

typedef struct dmu_pool_stats {
	uint64_t dps_dirty;          /* bytes dirty now */
	uint64_t dps_dirty_max;
	uint64_t dps_delays;         /* writers delayed by the throttle */
	uint64_t dps_waits;          /* writers that waited for the limit */
	uint64_t dps_quiesce_waits;  /* txs that waited for a closing txg */
	uint64_t dps_cache_bytes;    /* the ARC's size (all its pools' when shared) */
	uint64_t dps_txgs_synced;
} dmu_pool_stats_t;
void dmu_pool_stats(dmu_pool_t *dp, dmu_pool_stats_t *out);
/* The ARC the pool's blocks are cached in. */
arc_t *dmu_pool_arc(dmu_pool_t *dp);
/*
 * The pool's L2ARC (its cache devices), set once when it gets its first
 * cache device and kept until the pool closes: the caller destroys it
 * only after dmu_pool_destroy.  Blocks the ARC evicts are fed to it (as
 * the datasets' secondarycache allows), and reads ask it before the pool.
 */
void dmu_pool_set_l2arc(dmu_pool_t *dp, l2arc_t *l2);
l2arc_t *dmu_pool_l2arc(dmu_pool_t *dp);
/*
 * At most bytes of freed block buffers are kept faulted in for reuse
 * (process-wide; default and ceiling 512 MiB), and chunks faulted in
 * ahead of need take at most half as much again (at most 32 MiB); the
 * excess is given back at once.  The daemon ties it to its arc_max
 * (host_arc.c).  When the last pool of the process closes, all of them
 * go back to the kernel, and so do glibc's free pages.
 */
void dmu_buf_warm_max(uint64_t bytes);

/* ---- object sets ---- */

typedef enum dmu_objset_type {
	DMU_OST_NONE = 0,
	DMU_OST_META = 1,      /* the MOS */
	DMU_OST_ZFS = 2,       /* a file system */
	DMU_OST_TEST = 3,      /* tarn-stress */
} dmu_objset_type_t;

/* Default block properties for an objset's writes. */
typedef struct dmu_objset_props {
	uint8_t osp_checksum;   /* concrete; default ZIO_CHECKSUM_DEFAULT */
	uint8_t osp_compress;   /* concrete; default ZIO_COMPRESS_OFF */
	int16_t osp_level;      /* level (gzip 1..9, zstd 1..19, zstd-fast-N: -N); 0 = default */
	uint8_t osp_copies;     /* data copies 1..3; metadata gets +1 (max 3) */
	bool    osp_is_mos;     /* pool metadata: every block 3 copies */
	uint8_t osp_primarycache;   /* DMU_CACHE_*: what the ARC keeps of it */
	uint8_t osp_secondarycache; /* DMU_CACHE_*: what the L2ARC is fed of it */
	uint32_t osp_special_small; /* level-0 data blocks up to this size go to the
	                               special class (special_small_blocks; 0: none) */
	uint8_t osp_logbias;    /* DMU_LOGBIAS_*: whether its intent log uses log devices */
} dmu_objset_props_t;

/* logbias values (zfs's names): latency uses the log devices, throughput does not */
enum { DMU_LOGBIAS_LATENCY = 0, DMU_LOGBIAS_THROUGHPUT = 1 };

/* primarycache / secondarycache values (zfs's names: all, metadata, none) */
enum { DMU_CACHE_ALL = 0, DMU_CACHE_METADATA = 1, DMU_CACHE_NONE = 2 };

/* A new empty object set (dirty in the open txg until first synced). */
int dmu_objset_create(dmu_pool_t *dp, dmu_objset_type_t type,
    const dmu_objset_props_t *props, objset_t **osp);
/* Open the object set whose objset_phys bp names.  Verifies it. */
int dmu_objset_open(dmu_pool_t *dp, const blkptr_t *bp,
    const dmu_objset_props_t *props, objset_t **osp);
/* Close; the caller has made sure it has nothing dirty (or the pool is gone). */
void dmu_objset_close(objset_t *os);
dmu_objset_type_t dmu_objset_type(objset_t *os);
/* Does the ARC keep the object set's data (primarycache=all)? */
bool dmu_objset_caches_data(objset_t *os);
dmu_pool_t *dmu_objset_pool(objset_t *os);
void dmu_objset_set_props(objset_t *os, const dmu_objset_props_t *props);
int dmu_objset_logbias(objset_t *os);   /* DMU_LOGBIAS_* (atomic read) */

/*
 * Syncing context: write everything os has dirty in txg and return the
 * new bp of its objset_phys in *bp (unchanged if nothing was dirty).
 * `pass` counts from 1; in passes > 1 blocks born in txg are rewritten
 * in place.  Returns 0 or the first I/O error (ENOSPC, EIO).
 */
int dmu_objset_sync(objset_t *os, uint64_t txg, int pass, blkptr_t *bp);
/* True when os has changes in txg not yet written by dmu_objset_sync. */
bool dmu_objset_is_dirty(objset_t *os, uint64_t txg);
/* After the uberblock of txg is on disk: drop txg's dirty state. */
void dmu_objset_sync_done(objset_t *os, uint64_t txg);
/*
 * Bytes the object set's blocks take (every object and the meta-dnode;
 * not the objset_phys block itself; zio_bp_dsize), as of the last sync
 * pass that ran.  Persisted in objset_phys (os_used).  For lib/dsl.
 */
void dmu_objset_space(objset_t *os, uint64_t *usedp);
/*
 * Logical (uncompressed) and stored (compressed) bytes of every block
 * below the objset_phys, each block once: zfs's logicalreferenced, and
 * lsize / psize is its refcompressratio.  Exact on pools created with
 * the feature logical_space.
 */
void dmu_objset_logical(objset_t *os, uint64_t *lsizep, uint64_t *psizep);

/*
 * Snapshots (for lib/dsl).  From now on, blocks born at or before txg
 * that the object set frees are kept: its sync collects them instead,
 * and dmu_objset_dead_take hands them over (caller frees *bps), to be
 * called after each dmu_objset_sync.  0 (the default) frees everything.
 */
void dmu_objset_set_prev_snap_txg(objset_t *os, uint64_t txg);
uint64_t dmu_objset_prev_snap_txg(objset_t *os);
size_t dmu_objset_dead_take(objset_t *os, blkptr_t **bps);
/*
 * Syncing context of txg: write a copy of the objset_phys block at src
 * with an empty intent-log header (a snapshot's root, or a new file
 * system's first root from a snapshot), its new bp in *out.  The blocks
 * below are shared, not copied.  space (may be NULL): its os_used, os_lsize
 * and os_psize.
 */
int dmu_objset_copy_root(dmu_pool_t *dp, const blkptr_t *src, uint64_t txg, blkptr_t *out,
    uint64_t space[3]);

/* Block pointer of the objset as last synced (hole if never). */
const blkptr_t *dmu_objset_rootbp(objset_t *os);
/*
 * The intent log's header of a file system (lib/zil): as last set (read
 * from the objset_phys at open).  Setting it makes the objset dirty in
 * txg, whose sync writes it: call in syncing context of txg before the
 * object sets sync, or in open context with a tx assigned to txg.
 */
void dmu_objset_zil_header(objset_t *os, zil_header_t *out);
void dmu_objset_set_zil_header(objset_t *os, const zil_header_t *zh, uint64_t txg);

/* ---- objects ---- */

typedef struct dmu_object_info {
	dmu_object_type_t doi_type;
	dmu_object_type_t doi_bonus_type;
	uint32_t doi_data_block_size;
	uint32_t doi_bonus_size;
	uint8_t  doi_indirection;       /* nlevels */
	uint64_t doi_max_offset;        /* (maxblkid + 1) * block size */
	uint64_t doi_physical_bytes;    /* taken on disk (zio_bp_dsize), as last synced */
	uint64_t doi_fill_count;        /* non-hole blocks, as last synced */
} dmu_object_info_t;

/*
 * Allocate an unused object number (lowest free slot near a hint) with
 * block size blksz (512 B .. 1 MiB, power of 2) and a bonus buffer of
 * bonuslen (<= DN_MAX_BONUSLEN) bytes.
 */
int dmu_object_alloc(objset_t *os, dmu_object_type_t type, uint32_t blksz,
    dmu_object_type_t bonustype, uint32_t bonuslen, dmu_tx_t *tx, uint64_t *objp);
/* The same for a chosen number; EEXIST when in use. */
int dmu_object_claim(objset_t *os, uint64_t obj, dmu_object_type_t type,
    uint32_t blksz, dmu_object_type_t bonustype, uint32_t bonuslen, dmu_tx_t *tx);
/* Free the object and all its blocks; ENOENT if not allocated. */
int dmu_object_free(objset_t *os, uint64_t obj, dmu_tx_t *tx);
int dmu_object_info(objset_t *os, uint64_t obj, dmu_object_info_t *doi);
/* Change the block size while the object has at most one block. */
int dmu_object_set_blocksize(objset_t *os, uint64_t obj, uint32_t blksz, dmu_tx_t *tx);
/* Next allocated object after *objp (start with 0); ESRCH at the end. */
int dmu_object_next(objset_t *os, uint64_t *objp);
/* Above every object number os has used (objects are below it). */
uint64_t dmu_object_limit(objset_t *os);
/* The same, looking only below `below` (the cost is one probe per number looked at). */
int dmu_object_next_below(objset_t *os, uint64_t *objp, uint64_t below);

/*
 * Read len bytes at off; holes and offsets past the end read as zeros.
 * EIO/ECKSUM when a block cannot be read intact; ENOENT for no object.
 */
int dmu_read(objset_t *os, uint64_t obj, uint64_t off, uint64_t len, void *buf);
/*
 * The same from the cache alone: EAGAIN (buf partly written) when a
 * level-0 block of the range is not cached.  No read-ahead, no ARC
 * statistics, no change to any block's standing in the ARC: for copies
 * the reader did not ask for (the FUSE layer's read-around).
 */
int dmu_read_if_cached(objset_t *os, uint64_t obj, uint64_t off, uint64_t len, void *buf);
int dmu_write(objset_t *os, uint64_t obj, uint64_t off, uint64_t len,
    const void *buf, dmu_tx_t *tx);
/*
 * Sequential reads start read-ahead of the blocks beyond them in the
 * background; dmu_objset_close waits for it.  This waits until no
 * read-ahead of os is in flight (tests: a failure counted by read-ahead
 * has been counted by the time it returns).
 */
void dmu_objset_readahead_wait(objset_t *os);

/*
 * Zero-copy reads ("loans").  Between dmu_loan_begin(dl, buf, size) and
 * dmu_loan_end(dl), on the calling thread, a dmu_read whose destination
 * lies inside [buf, buf + size) may, instead of copying a cached block's
 * bytes there, lend them: it records a segment (offset in buf, pointer,
 * length) and keeps the block held.  Bytes of buf not covered by a
 * segment were written as usual.  The lent bytes stay valid and
 * unchanged until dmu_loan_end (writers to the object wait for it), so
 * the caller must do nothing between the read and dmu_loan_end but
 * consume them (e.g. write a FUSE reply): no transactions, no writes.
 * Small pieces (< DMU_LOAN_MIN) and pieces beyond DMU_LOAN_SEGS are
 * copied.  One loan per thread at a time, and each byte of buf read at
 * most once during it (a segment hides what a later read copies there).
 */
#define DMU_LOAN_SEGS 64
#define DMU_LOAN_MIN  (16 * KiB)
typedef struct dmu_loan_seg {
	uint64_t    dls_off;        /* offset in the loan's buffer */
	uint64_t    dls_len;
	const void *dls_data;       /* the lent bytes */
	void       *dls_db;         /* private: the held block */
} dmu_loan_seg_t;
typedef struct dmu_loan {
	uint8_t        *dl_buf;
	size_t          dl_size;
	int             dl_nsegs;   /* segments, in increasing dls_off */
	dmu_loan_seg_t  dl_segs[DMU_LOAN_SEGS];
} dmu_loan_t;
void dmu_loan_begin(dmu_loan_t *dl, void *buf, size_t size);
void dmu_loan_end(dmu_loan_t *dl);

/*
 * Views: a read of one block's bytes in place, without a copy, for small
 * metadata lookups that would otherwise copy a whole block (ZAP leaves).
 * dmu_view holds the block holding [off, off + len) (EINVAL when the range
 * crosses a block boundary or lies past the object's end), reading it
 * when it is not cached, and points dv_data at off.  Writers of the
 * object wait until dmu_view_end, so the bytes stay unchanged; the holder
 * must not write, free or resize the object meanwhile (it would wait for
 * itself).  Any number of views per thread, beside a loan too.
 */
typedef struct dmu_view {
	const void *dv_data;
	void       *dv_db;          /* private: the held block */
} dmu_view_t;
int dmu_view(objset_t *os, uint64_t obj, uint64_t off, uint64_t len, dmu_view_t *dv);
void dmu_view_end(dmu_view_t *dv);

/* Make [off, off+len) a hole (len DMU_OBJECT_END: to the end, and shrink). */
int dmu_free_range(objset_t *os, uint64_t obj, uint64_t off, uint64_t len, dmu_tx_t *tx);
/* Bonus buffer: len must equal the object's bonus length (or be less for read). */
int dmu_bonus_read(objset_t *os, uint64_t obj, void *buf, uint32_t len);
int dmu_bonus_write(objset_t *os, uint64_t obj, const void *buf, uint32_t len, dmu_tx_t *tx);

/* ---- transactions ---- */

#define TXG_WAIT    1
#define TXG_NOWAIT  2
#define TXG_NOTHROTTLE 3   /* neither delayed nor held at the dirty limit
                              (the intent log pinning a txg; no data) */

dmu_tx_t *dmu_tx_create(objset_t *os);
/* Syncing context: a tx that dirties txg itself (pool layer only). */
dmu_tx_t *dmu_tx_create_syncing(objset_t *os, uint64_t txg);
/* Holds estimate the space a tx may use; they do not lock anything. */
void dmu_tx_hold_write(dmu_tx_t *tx, uint64_t obj, uint64_t off, uint64_t len);
void dmu_tx_hold_free(dmu_tx_t *tx, uint64_t obj, uint64_t off, uint64_t len);
void dmu_tx_hold_bonus(dmu_tx_t *tx, uint64_t obj);
void dmu_tx_hold_space(dmu_tx_t *tx, uint64_t bytes);
/*
 * While on, every tx of os may use the pool's reserve as a netfree tx
 * does: an intent-log replay re-does changes that were admitted (and
 * acknowledged) before a crash, and must work on a full pool.
 */
void dmu_objset_replaying(objset_t *os, bool on);
/* The tx frees more than it writes: it may use the pool's reserve. */
void dmu_tx_mark_netfree(dmu_tx_t *tx);
/*
 * Join the open txg.  TXG_WAIT waits out the dirty-data limit (writers
 * are delayed smoothly above 60% of it); TXG_NOWAIT returns ERESTART
 * instead.  ENOSPC when the held space is not available; EIO when the
 * pool is suspended.  On error the tx is still to be aborted.
 */
int dmu_tx_assign(dmu_tx_t *tx, int how);
void dmu_tx_commit(dmu_tx_t *tx);
void dmu_tx_abort(dmu_tx_t *tx);
uint64_t dmu_tx_get_txg(const dmu_tx_t *tx);

/* ---- traversal (dmu_traverse.c) ---- */

/*
 * Visit every block pointer of os (objset_phys, meta-dnode tree, every
 * object's tree), reading and verifying each block on the way (with
 * zio flags `zflags`, e.g. ZIO_FLAG_SCRUB).  fn sees each non-hole bp
 * with its object and level; a non-zero return stops the walk.  Errors
 * reading a block are counted in *errors and the walk goes on.
 */
typedef int (*dmu_traverse_fn_t)(void *arg, objset_t *os, uint64_t obj,
    const blkptr_t *bp, uint64_t blkid);
#define TRAVERSE_DATA    0x01   /* also read level-0 data blocks */
/*
 * Blocks born before min_txg are skipped with everything below them (an
 * indirect block is rewritten whenever a child changes, so its birth is
 * at least its children's): a resilver of a device that was away since
 * txg T walks only what changed since T.  Blocks that fail to read are
 * reported to the pool's error callback with their object and block id.
 */
int dmu_traverse(objset_t *os, int flags, int zflags, uint64_t min_txg,
    dmu_traverse_fn_t fn, void *arg, uint64_t *errors);

/*
 * Every allocated object of os as last synced, in order, with its type
 * and bonus (fn's non-zero return stops the scan), reading the dnode
 * blocks in parallel batches: a count of a million objects costs a read
 * of their dnode blocks, not a lookup per object.  EAGAIN when os has
 * changes not yet synced (the caller then asks object by object).
 */
typedef int (*dmu_scan_fn_t)(void *arg, uint64_t obj, dmu_object_type_t type,
    dmu_object_type_t bonustype, uint32_t bonuslen, const void *bonus);
int dmu_object_scan(objset_t *os, dmu_scan_fn_t fn, void *arg);

/*
 * Called for every block of an object that could not be read intact
 * (open-context reads and traversals; not speculative ones): the object
 * set, object, level and block id, and the error.
 */
typedef void (*dmu_error_fn_t)(void *arg, objset_t *os, uint64_t obj, uint8_t level,
    uint64_t blkid, int error);
void dmu_pool_set_error_cb(dmu_pool_t *dp, dmu_error_fn_t fn, void *arg);
void dmu_pool_report_error(dmu_pool_t *dp, objset_t *os, uint64_t obj, uint8_t level,
    uint64_t blkid, int error);

/* ---- send (dmu_send.c) and receive ---- */

/* An object as a send stream describes it. */
typedef struct dmu_send_object {
	uint64_t    dso_obj;
	uint8_t     dso_type, dso_bonustype, dso_nlevels, dso_checksum, dso_compress;
	bool        dso_new;            /* allocated after the walk's from_txg */
	uint32_t    dso_blksz;
	uint32_t    dso_bonuslen;
	uint64_t    dso_maxblkid;
	const void *dso_bonus;
} dmu_send_object_t;
/* A level-0 block: logical bytes, or as stored (DMU_SEND_STORED). */
typedef struct dmu_send_block {
	uint64_t    dsb_obj, dsb_blkid;
	uint32_t    dsb_lsize;
	uint32_t    dsb_psize;          /* bytes at dsb_data */
	uint8_t     dsb_comp;           /* compression of dsb_data (OFF: logical bytes) */
	uint8_t     dsb_cksum;          /* the block's checksum algorithm */
	const void *dsb_data;
} dmu_send_block_t;
typedef struct dmu_send_cb {
	int (*dsc_object)(void *arg, const dmu_send_object_t *o);
	int (*dsc_freeobjects)(void *arg, uint64_t first, uint64_t count);
	int (*dsc_block)(void *arg, const dmu_send_block_t *b);
	int (*dsc_free)(void *arg, uint64_t obj, uint64_t off, uint64_t len);
} dmu_send_cb_t;
#define DMU_SEND_STORED 0x01    /* blocks as stored (compressed), not decompressed */
/*
 * Report what of os (as last synced) changed after from_txg (0: all),
 * in object and offset order, skipping what lies before (resume_obj,
 * resume_off) (0, 0: nothing); dmu_send.c has the theory.  A callback's
 * non-zero return stops the walk and is returned; read errors are
 * reported to the pool's error callback and returned (EIO, ECKSUM).
 */
int dmu_send_walk(objset_t *os, uint64_t from_txg, int flags, uint64_t resume_obj,
    uint64_t resume_off, const dmu_send_cb_t *cb, void *arg);
/*
 * Receive: write one whole level-0 block whose stored form is known
 * (send -c / -w): buf holds its lsize logical bytes (what readers see),
 * stored its psize bytes compressed with comp, written as they are by the
 * txg's sync instead of being compressed again (cksum: the algorithm,
 * 0: the object set's).  A later change to the block in the same txg
 * drops the stored form.
 */
int dmu_write_stored(objset_t *os, uint64_t obj, uint64_t off, uint32_t lsize,
    const void *buf, const void *stored, uint32_t psize, uint8_t comp, uint8_t cksum,
    dmu_tx_t *tx);
/* The allocation txg of an object (dn_gen), and whether it exists. */
int dmu_object_gen(objset_t *os, uint64_t obj, uint64_t *gen);

#endif
