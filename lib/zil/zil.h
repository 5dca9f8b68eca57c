/*
 * zil.h — the intent log of one file system: what fsync makes durable
 * without syncing a whole transaction group.
 *
 * The file system above tells the log about each change: a file write
 * is logged (zil_log_write: which bytes of which object, in which txg);
 * any other change is "unlogged" (zil_log_unlogged: its txg).  zil_commit
 * then makes every change made so far durable: when every unsynced
 * change is a logged write it appends records with the written bytes to
 * a chain of log blocks and flushes the devices; otherwise (or when there
 * is a lot to write) it waits for a txg sync.  After a crash the next
 * import claims the log blocks written since the last committed txg
 * (zil_claim, before anything else allocates) and the next mount replays
 * their records (zil_replay) through the file system's write function.
 * On-disk form: format.h (zil_header_t, zil_block_t, zil_lr_t) and
 * docs/FORMAT.md; theory: the comment at the top of zil.c.
 */
#ifndef TARN_ZIL_H
#define TARN_ZIL_H

#include "tarn_util.h"
#include "format.h"
#include "dmu.h"

typedef struct zil zil_t;

/*
 * The log of object set os (a file system), from the header in its
 * objset_phys.  A read-only log never writes: zil_commit returns 0.
 */
zil_t *zil_open(objset_t *os, bool readonly);
/* Free the in-memory state (after the pool's last sync). */
void zil_close(zil_t *zl);

/*
 * Import, before the pool allocates anything: claim the blocks of the
 * chain written after the last committed txg, so that first_txg (the
 * first txg of this import) records them as allocated, and note in the
 * header what the next mount must replay.  A chain claimed by an earlier
 * import is only read back.  Returns 0 or EIO (the header cannot be
 * followed at all; the log is then treated as empty).
 */
int zil_claim(zil_t *zl, uint64_t first_txg);
/* Import with a rewind: forget the log (its records are newer than the txg). */
void zil_discard(zil_t *zl, uint64_t txg);

/* Log a write of [off, off+len) of obj made in txg, mtime after it. */
void zil_log_write(zil_t *zl, uint64_t obj, uint64_t off, uint64_t len, uint64_t txg,
    const uint64_t mtime[2]);
/* Log obj's new times in txg: atime, mtime, ctime as (s, ns) pairs. */
void zil_log_times(zil_t *zl, uint64_t obj, const uint64_t t[6], uint64_t txg);
/*
 * Log a record of another type (ZIL_LR_CREATE..ZIL_LR_PUNCH) about obj
 * made in txg: payload (len <= ZIL_LR_MAXPAYLOAD bytes, copied) is the
 * file system's; replay hands it back as the record's data.
 */
void zil_log_op(zil_t *zl, uint32_t type, uint64_t obj, uint64_t txg, const void *payload,
    uint32_t len);
/* A change in txg that the log does not record. */
void zil_log_unlogged(zil_t *zl, uint64_t txg);
/*
 * May the log hold the records of feature log_xattr_punch (ZIL_LR_XATTR,
 * ZIL_LR_PUNCH)?  Off until the pool's owner says so (the feature is
 * enabled); a NULL log may hold nothing.
 */
void zil_set_xattr_punch(zil_t *zl, bool on);
bool zil_xattr_punch(const zil_t *zl);

/*
 * Make every change logged or noted so far durable (fsync).  Concurrent
 * callers share one log write (group commit).  Returns 0, or the error of
 * the txg sync it fell back to (EIO when the pool is suspended).
 */
int zil_commit(zil_t *zl);

/* Syncing context of txg, before the object sets sync: free log blocks
 * whose records txg makes durable and write the header. */
void zil_sync(zil_t *zl, uint64_t txg);

/*
 * Free the chain's open (allocated, unwritten) block in the next syncs,
 * commits held off meanwhile; the next commit starts a new chain.  For a
 * log device that is leaving the pool (spa_vdev_remove).  0 or the sync's
 * error.
 */
int zil_release_open(zil_t *zl);

/* True when a claimed chain waits for zil_replay. */
bool zil_replay_needed(zil_t *zl);
/*
 * Replay the claimed records (oldest first) through fn, then wait for
 * the txg that holds their effect and drop the chain.  fn returns 0 to go
 * on; an error stops the replay and is returned (the chain stays claimed
 * and the next mount tries again).  *nrec (may be NULL) counts the
 * records given to fn.
 */
typedef int (*zil_replay_fn_t)(void *arg, const zil_lr_t *lr, const void *data);
int zil_replay(zil_t *zl, zil_replay_fn_t fn, void *arg, uint64_t *nrec);

/* The file system is being destroyed in tx's txg: free every log block. */
void zil_destroy(zil_t *zl, dmu_tx_t *tx);

typedef struct zil_stats {
	uint64_t zs_commits;        /* zil_commit calls */
	uint64_t zs_log_writes;     /* commits served by the log */
	uint64_t zs_txg_syncs;      /* commits served by a txg sync */
	uint64_t zs_blocks;         /* log blocks written */
	uint64_t zs_bytes;          /* bytes of log blocks written */
	uint64_t zs_records;        /* records written */
} zil_stats_t;
void zil_get_stats(zil_t *zl, zil_stats_t *out);

/*
 * Walk a chain from its header (tests, fuzzing, tools): fn sees each
 * block that verifies, in order, with its bytes; the walk stops at the
 * first block that does not (or after max blocks).  *nblocks counts them.
 */
typedef int (*zil_block_fn_t)(void *arg, const blkptr_t *bp, const zil_block_t *blk);
int zil_walk(zil_t *zl, uint64_t max, zil_block_fn_t fn, void *arg, uint64_t *nblocks);
/*
 * Check one log block's bytes against the bp that names it (the
 * verification a read applies): 0 or ECKSUM.  For fuzzing.
 */
int zil_block_verify(const blkptr_t *bp, const void *buf, uint64_t size);
/*
 * Iterate the records of a verified block: fn(arg, lr, data) for each;
 * EINVAL when a record is malformed (the rest is skipped).
 */
int zil_block_records(const zil_block_t *blk, uint64_t size, zil_replay_fn_t fn, void *arg);

/*
 * Scrub and resilver (spa_scan): read through zc, with flags (ZIO_FLAG_SCRUB:
 * every mirror side and RAID-Z column verified, bad ones rewritten), every
 * block of the claimed chain that header zh names: the records a crash
 * left for the next mount to replay, which no block tree points to.  An
 * unclaimed chain (a live log, freed within a txg or two) is not read, nor
 * is a claimed chain's unwritten end block.  A claimed block that does not
 * read intact is an error, and the chain cannot be followed past it.
 */
typedef struct zil_scan_stat {
	uint64_t zss_blocks;        /* blocks read intact */
	uint64_t zss_bytes;         /* their allocated bytes */
	uint64_t zss_errors;        /* claimed blocks not read intact */
} zil_scan_stat_t;
void zil_scan(zio_ctx_t *zc, const zil_header_t *zh, int flags, zil_scan_stat_t *st);

#endif
