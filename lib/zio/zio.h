/*
 * zio.h — one block's trip to and from the devices.
 *
 * Write: (zero check by caller) → compress → checksum → allocate copies
 * (space layer) → write every copy (vdev layer), the CPU work on a
 * worker pool so that many blocks proceed in parallel.
 * Read: read one copy → verify its checksum (the vdev layer tries other
 * mirror sides / RAID-Z reconstructions itself) → on failure try the
 * other copies (DVAs) → rewrite copies that were bad (self-heal) →
 * decompress.  A block that cannot be read intact returns EIO/ECKSUM and
 * is reported through the context's error callback; it is never returned.
 * It does not know what a block means.
 * Theory: the comment at the top of zio.c.
 */
#ifndef TARN_ZIO_H
#define TARN_ZIO_H

#include "tarn_util.h"
#include "format.h"
#include "taskq.h"
#include "vdev.h"
#include "space.h"

typedef struct zio_ctx zio_ctx_t;

/* Called for every block that could not be read intact. */
typedef void (*zio_error_fn_t)(void *arg, const blkptr_t *bp, int error);

/*
 * Context shared by all I/O of one pool: the opened vdev tree, the
 * metaslab class to allocate from, and a worker pool of nthreads
 * (0 = one per online CPU).  Set the error callback before I/O starts.
 */
zio_ctx_t *zio_ctx_create(vdev_t *root, metaslab_class_t *mc, int nthreads);
void zio_ctx_destroy(zio_ctx_t *zc);
void zio_ctx_set_readonly(zio_ctx_t *zc, bool readonly); /* no heal writes */
void zio_ctx_set_error_cb(zio_ctx_t *zc, zio_error_fn_t fn, void *arg);
taskq_t *zio_ctx_taskq(zio_ctx_t *zc);
/*
 * Space accounting in data bytes (feature space_deflate): when set,
 * zio_bp_dsize() deflates each copy by its top-level vdev's ratio
 * (vdev_deflate_ratio); when clear it is the allocated size.  Set once,
 * before any object set is opened.
 */
void zio_ctx_set_deflate(zio_ctx_t *zc, bool deflate);
/* The bytes a block counts for in used/referenced (0 for a hole). */
uint64_t zio_bp_dsize(zio_ctx_t *zc, const blkptr_t *bp);
/* The vdev tree and the normal allocation class (for the intent log's own I/O). */
vdev_t *zio_ctx_root(zio_ctx_t *zc);
metaslab_class_t *zio_ctx_class(zio_ctx_t *zc);
/*
 * Allocation classes (ZFS's log and special devices).  The pool gives
 * the context its log and special classes (auxiliary classes of the
 * normal one, space.h) before I/O starts; zio_ctx_class_of answers the
 * class of a kind when it has vdevs, else NULL (NORMAL: the normal class).
 * Which blocks go where: zio_prop_wants_special, and the intent log
 * (lib/zil) allocates from the log class.
 */
void zio_ctx_set_class(zio_ctx_t *zc, vdev_alloc_bias_t bias, metaslab_class_t *mc);
metaslab_class_t *zio_ctx_class_of(zio_ctx_t *zc, vdev_alloc_bias_t bias);
/*
 * Allocate *ndvas copies of psize bytes: all from `first` when it is
 * given and has room, else from the normal class, with fewer copies
 * rather than none (*ndvas is lowered).  ENOSPC when not one copy fits.
 */
int zio_alloc_class(zio_ctx_t *zc, metaslab_class_t *first, uint64_t psize, int *ndvas,
    uint64_t txg, dva_t *dvas);

/* Counters of a context (all uint64_t, updated atomically). */
typedef struct zio_stats {
	uint64_t zs_writes;        /* blocks written */
	uint64_t zs_write_bytes;   /* psize bytes written, all copies */
	uint64_t zs_reads;         /* blocks read intact */
	uint64_t zs_read_failures; /* blocks that could not be read */
	uint64_t zs_heal_writes;   /* ditto copies rewritten by self-heal */
	uint64_t zs_heal_bytes;    /* bytes repaired (ditto and vdev level) */
} zio_stats_t;
void zio_ctx_stats(zio_ctx_t *zc, zio_stats_t *out);

/* Properties of a block being written. */
typedef struct zio_prop {
	uint8_t zp_checksum;      /* concrete enum zio_checksum */
	uint8_t zp_compress;      /* concrete enum zio_compress */
	int16_t zp_level;         /* level (zstd 1..19, -N zstd-fast-N; gzip), 0 = default */
	uint8_t zp_copies;        /* 1..3 */
	uint8_t zp_type;          /* dmu_object_type_t */
	uint8_t zp_blevel;        /* indirection level of the block */
	bool    zp_special;       /* metadata: the special class when the pool has one */
	uint32_t zp_small_blocks; /* level-0 blocks of at most this lsize go to the
	                             special class too (special_small_blocks; 0: none) */
	uint32_t zp_psize;        /* non-zero: the data is already stored form (zp_psize
	                             bytes compressed with zp_compress): no transform */
} zio_prop_t;

/* Does a block of lsize with these properties belong in the special class? */
bool zio_prop_wants_special(const zio_prop_t *zp, uint64_t lsize);

/* Read flags */
#define ZIO_FLAG_SCRUB     0x01   /* read and verify every copy; repair */
#define ZIO_FLAG_NOHEAL    0x02
#define ZIO_FLAG_SPECULATIVE 0x04 /* failure is expected: no error report,
                                     errors not counted on the vdevs */
#define ZIO_FLAG_STORED    0x08   /* the block as stored: bp_psize bytes, verified,
                                     not decompressed */

/*
 * Read the block bp points to into buf (bp_lsize bytes), verified and
 * decompressed.  A hole reads as zeros.  Returns 0, EIO or ECKSUM.
 * A bp that fails blkptr_validate is ECKSUM (reported, buf untouched);
 * after any other failure buf is zeroed.  Scrub/heal: zio.c's theory.
 */
int zio_read(zio_ctx_t *zc, const blkptr_t *bp, void *buf, int flags);

/*
 * A batch of asynchronous writes: each write's data must stay valid and
 * unchanged until zio_batch_wait() returns.  bp receives the new block
 * pointer.  When rewrite_ok is set and *bp already names a block born in
 * txg (physical birth) whose allocated size equals what the new data
 * needs, the same DVAs are overwritten in place (later sync passes
 * converge this way); otherwise new space is allocated and, if *bp was a
 * block born in this txg, it is freed at once.  The caller frees older
 * blocks itself.
 *
 * Details (zio.c has the theory):
 * - lsize is a non-zero multiple of 512 up to SPA_MAXBLOCKSIZE (else
 *   EINVAL).  The caller turns all-zero blocks into holes itself.
 * - With rewrite_ok false the input *bp is ignored (it may be garbage).
 * - On success *bp is filled whole: DVAs, sizes, algorithms, type,
 *   level, birth = phys_birth = txg, the checksum, flags 0.  bp_fill is
 *   1 for a level-0 block; for an indirect block (zp_blevel > 0) the
 *   input bp_fill is kept, so the caller sets it before or after.
 * - On failure *bp is left as it was and nothing stays allocated.
 *   ENOSPC from allocation; EIO when no copy could be written (a write
 *   that reached at least one copy succeeds; reads heal the others).
 * - Waiting for a batch is safe on a worker thread of zio_ctx_taskq():
 *   the waiter runs its own batch's queued work itself.
 */
typedef struct zio_batch zio_batch_t;
zio_batch_t *zio_batch_create(zio_ctx_t *zc);
void zio_batch_write(zio_batch_t *b, uint64_t txg, const zio_prop_t *zp,
    const void *data, uint64_t lsize, blkptr_t *bp, bool rewrite_ok);
/* Queue a read of bp into buf (bp_lsize bytes); *err gets the result. */
void zio_batch_read(zio_batch_t *b, const blkptr_t *bp, void *buf, int flags, int *err);
/* Wait for all, free the batch; returns the first error (ENOSPC, EIO...). */
int zio_batch_wait(zio_batch_t *b);

/* Synchronous single write (a batch of one). */
int zio_write(zio_ctx_t *zc, uint64_t txg, const zio_prop_t *zp,
    const void *data, uint64_t lsize, blkptr_t *bp, bool rewrite_ok);

/*
 * Blocks that carry their own checksum (intent-log blocks): read bp's
 * first DVA (bp_psize bytes, no decompression) checking it with verify
 * instead of bp_cksum_val (mirror sides and RAID-Z reconstructions are
 * tried as for any read; ZIO_FLAG_SCRUB / SPECULATIVE / NOHEAL as for
 * zio_read),
 * and write buf to every DVA of an already allocated bp.  ECKSUM when bp
 * fails blkptr_validate.
 */
int zio_read_raw(zio_ctx_t *zc, const blkptr_t *bp, void *buf, vdev_verify_fn_t verify,
    void *arg, int flags);
int zio_write_raw(zio_ctx_t *zc, const blkptr_t *bp, const void *buf);

/*
 * A block's stored form away from its DVAs (the L2ARC keeps it on a cache
 * device).  zio_stored_form: the bp_psize bytes bp points to, made from
 * the block's logical bytes (compressed again with bp's algorithm at
 * level, or copied); EINVAL when that does not give bp_psize bytes (the
 * block was written at another level).  Nothing is checksummed here:
 * zio_stored_decode checks the stored bytes against bp's checksum (ECKSUM)
 * and gives the logical block, as a read from the pool would (pbuf may
 * be lbuf for an uncompressed block).
 */
int zio_stored_form(const blkptr_t *bp, int level, const void *lbuf, void *pbuf);
int zio_stored_decode(const blkptr_t *bp, const void *pbuf, void *lbuf);

/* Free every DVA of bp in txg (deferred unless born in txg). */
void zio_free(zio_ctx_t *zc, const blkptr_t *bp, uint64_t txg);

/* Flush every leaf. */
int zio_flush(zio_ctx_t *zc);

/* ---- compression (compress.c) ---- */
/*
 * Compress src[0..lsize) into dst (capacity lsize).  Returns the
 * compressed size rounded up to 512 bytes (dst zero-padded up to it), or
 * lsize when compression does not save at least 1/8 (the block is then
 * stored uncompressed and dst holds nothing useful).  level 0 is the
 * algorithm's default (zstd 3, gzip 6; lz4 has none).  Stored form:
 * docs/FORMAT.md "Compressed blocks".
 */
uint64_t zio_compress(int alg, int level, const void *src, void *dst, uint64_t lsize);
/* EINVAL when the data does not decompress to exactly lsize bytes. */
int zio_decompress(int alg, const void *src, uint64_t psize, void *dst, uint64_t lsize);
const char *zio_compress_name(int alg);
/*
 * Zero-length encoding (zle.c): the payload of a zle block.  compress
 * returns its length, 0 when it does not fit in cap; decompress EINVAL
 * unless src decodes to exactly dlen bytes.
 */
size_t zio_zle_compress(const void *src, size_t slen, void *dst, size_t cap);
int zio_zle_decompress(const void *src, size_t slen, void *dst, size_t dlen);
/*
 * Parse a compression property value: "on" (= lz4), "off", "lz4", "zle",
 * "zstd", "zstd-1".."zstd-19", "zstd-fast" (= zstd-fast-1),
 * "zstd-fast-N" (N 1..10, 20..100 by tens, 500, 1000: level -N), "gzip",
 * "gzip-1".."gzip-9".  Returns the algorithm and sets *level (0 =
 * default; level may be NULL), or -1.
 */
int zio_compress_parse(const char *name, int *level);
/* N of a zstd-fast-N that zfs has: 1..10, 20..100 by tens, 500, 1000. */
bool zio_zstd_fast_valid(int n);

/* Debug text for a block pointer ("L0 DVA[0]=<0:1000:200> ..."). */
void blkptr_describe(const blkptr_t *bp, char *buf, size_t len);
/*
 * Structural validation of a bp read from disk before it is followed:
 * sizes, types, vdev ids within the pool, offsets within the vdev.
 * EINVAL when it cannot be a bp this pool wrote.  A hole (birth 0) is
 * valid only when the whole bp is zero.  With root NULL only the checks
 * that need no vdev tree are made.
 */
#define BP_MAX_LEVEL 15   /* deepest indirection a valid bp may claim */
int blkptr_validate(const blkptr_t *bp, vdev_t *root);

#endif
