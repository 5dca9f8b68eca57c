/*
 * zil.c — the intent log: in-memory records (itxs), commit to a chain of
 * log blocks, the header kept by each txg sync, claim at import and
 * replay at mount (zil.h is the contract).
 *
 * Theory of the intent log
 * ------------------------
 * What is logged (DESIGN.md invariant 10).  The file system logs the
 * changes it can replay (writes, creates, removes, links, renames,
 * setattrs, and with the log_xattr_punch feature xattrs and hole punches:
 * lib/posix/posix_zil.c).  Any other change is "unlogged": the file
 * system notes its txg, and a commit while any unlogged change is not yet
 * in a synced txg waits for a txg sync instead of writing the log.  So
 * whenever the log is written, every change since the last synced txg is
 * a logged record, and replaying the records on top of the synced state
 * gives exactly the state at the commit.  (A record names an object that
 * exists in the synced state or that a create earlier in the log made,
 * which replay gives the object number the original got; freed object
 * numbers are reused only after a sync.)
 *
 * Records in memory.  An itx names (object, range, txg, mtime); its data
 * is read from the object when the commit writes it, so writes cost no
 * copy.  Data read later may be newer than the write: replay then writes
 * newer bytes first and the same or newer bytes after, and the final
 * state is the same.  Itxs of synced txgs are dropped.  Contiguous writes
 * to one object in one txg merge into one itx.
 *
 * The chain.  The header (in the objset_phys, written by each txg sync)
 * names the first log block; each block names the next one, which is
 * allocated before the block is written (the "open" block).  The bp of
 * a block carries its allocation txg as birth and (chain GUID, sequence
 * number) as a verifier that the block must repeat, with its own XXH3
 * checksum inside; a block that does not verify ends the chain.  A
 * commit fills the open block (and more, each allocated as the previous
 * one fills), writes them, flushes the devices (the vdev layer lets the
 * committing thread do that work itself when no other thread is free to:
 * see vdev_children_flush), and returns.  A block is never written twice.  Group commit: one committer at a time takes
 * every pending itx; callers that arrive meanwhile wait and the next
 * committer takes theirs.
 *
 * Freeing.  The sync of txg frees, from the head of the chain, written
 * blocks whose records are all of txgs <= txg and that were allocated in
 * txgs before txg, and points the header at the first block left (or at
 * the open block).  If that sync does not commit, the previous header
 * still names the freed blocks, which deferred frees keep intact; a
 * block born in txg itself would be allocatable again at once (the space
 * layer's rule for blocks no committed tree names), yet the previous
 * header may name it, so it waits for the next sync.  The
 * first commit of a log with no chain allocates the first block, sets
 * the header and waits for that txg: the header must name the chain
 * before a block of it can matter.
 *
 * Claim and replay.  Blocks allocated after the last committed txg are
 * free in the loaded space maps, so import claims each block of the
 * chain that verifies and was born after it (metaslab_claim, in the first
 * txg, before anything else allocates) and records in the header where
 * the claimed chain ends and whether its unwritten end block is
 * allocated on disk (born in a committed txg) and so ours to free.  The
 * mount replays the records of txgs >= the claim txg, waits for a sync,
 * then frees the chain.  A chain claimed by an earlier import is read
 * back only up to the recorded end (a block past it might verify and
 * still not be ours).
 */
#include "zil.h"
#include "tarn_array.h"

#include <pthread.h>
#include <sys/random.h>

#define ZIL_MIN_BLOCK    (8 * KiB)
#define ZIL_MAX_BLOCK    (128 * KiB)
#define ZIL_BLOCK_ALIGN  (4 * KiB)
#define ZIL_MAX_COMMIT   (16 * MiB)    /* more pending data: sync the txg */
#define ZIL_MAX_ITX_LEN  (1 * MiB)     /* merge writes up to this */
#define ZIL_MAX_CHAIN    (1ULL << 24)  /* blocks a walk follows at most */

typedef struct zil_itx {
	struct zil_itx *itx_next;
	uint32_t itx_type;            /* ZIL_LR_* */
	uint64_t itx_txg, itx_obj, itx_off, itx_len;
	uint64_t itx_mtime[2];        /* WRITE: the file's mtime after it */
	void    *itx_payload;         /* other types: the record's data */
	uint32_t itx_plen;
} zil_itx_t;

/* A block of the chain: written (or claimed), freed once max_txg is synced. */
typedef struct zil_lwb {
	blkptr_t lwb_bp;
	uint64_t lwb_max_txg;
} zil_lwb_t;

/* Replay progress: the record at zr_pos has its effect in txg zr_txg. */
typedef struct zil_rpos {
	uint64_t zr_pos;
	uint64_t zr_txg;
} zil_rpos_t;

struct zil {
	objset_t *zl_os;
	dmu_pool_t *zl_dp;
	zio_ctx_t *zl_zc;
	bool zl_readonly;
	bool zl_xattr_punch;          /* ZIL_LR_XATTR and ZIL_LR_PUNCH allowed */
	pthread_mutex_t zl_lock;
	pthread_cond_t zl_cv;
	/* pending itxs (zl_lock) */
	zil_itx_t *zl_head, *zl_tail;
	uint64_t zl_itx_seq;          /* itxs ever added (merges count too) */
	uint64_t zl_itx_bytes;
	uint64_t zl_unlogged_txg;     /* newest txg with an unlogged change */
	/* commit (zl_lock) */
	bool zl_committing;
	uint64_t zl_committed_seq;
	uint64_t zl_force_txg;        /* until this txg syncs, commits sync txgs */
	/* chain (zl_lock; changed by the committer and by zil_sync) */
	uint64_t zl_guid;
	uint64_t zl_seq;              /* seq of the open block */
	blkptr_t zl_open;             /* next block to write; hole: no chain */
	tarn_array_t zl_lwb;          /* zil_lwb_t, oldest first */
	zil_header_t zl_header;       /* as last given to the dmu */
	bool zl_replay;               /* a claimed chain waits for replay */
	bool zl_drop_open;            /* zil_release_open: the next sync frees zl_open */
	/* replay progress: (position, txg holding its effect), oldest first */
	tarn_array_t zl_rpos;         /* zil_rpos_t */
	uint64_t zl_last_bytes;       /* size of the last commit (block sizing) */
	uint8_t *zl_wbuf;             /* the committer's block buffer (ZIL_MAX_BLOCK) */
	zil_stats_t zl_stats;
};

#define ZIL_STAT_ADD(zl, f, n) __atomic_add_fetch(&(zl)->zl_stats.f, (n), __ATOMIC_RELAXED)

zil_t *
zil_open(objset_t *os, bool readonly)
{
	zil_t *zl = tarn_alloc(sizeof (*zl));
	zl->zl_os = os;
	zl->zl_dp = dmu_objset_pool(os);
	zl->zl_zc = dmu_pool_zio(zl->zl_dp);
	zl->zl_readonly = readonly;
	pthread_mutex_init(&zl->zl_lock, NULL);
	pthread_cond_init(&zl->zl_cv, NULL);
	dmu_objset_zil_header(os, &zl->zl_header);
	zl->zl_replay = zl->zl_header.zh_claim_txg != 0;
	zl->zl_last_bytes = ZIL_MIN_BLOCK;
	tarn_array_init(&zl->zl_lwb, sizeof (zil_lwb_t));
	tarn_array_init(&zl->zl_rpos, sizeof (zil_rpos_t));
	return (zl);
}

static void
zil_itxs_free(zil_itx_t *itx)
{
	while (itx != NULL) {
		zil_itx_t *next = itx->itx_next;
		tarn_free(itx->itx_payload);
		tarn_free(itx);
		itx = next;
	}
}

void
zil_close(zil_t *zl)
{
	if (zl == NULL)
		return;
	tarn_dprintf("zil: %" PRIu64 " commits, %" PRIu64 " by the log, %" PRIu64
	    " by txg syncs, %" PRIu64 " blocks, %" PRIu64 " bytes, %" PRIu64 " records\n",
	    zl->zl_stats.zs_commits, zl->zl_stats.zs_log_writes, zl->zl_stats.zs_txg_syncs,
	    zl->zl_stats.zs_blocks, zl->zl_stats.zs_bytes, zl->zl_stats.zs_records);
	zil_itxs_free(zl->zl_head);
	tarn_free(zl->zl_wbuf);
	tarn_array_fini(&zl->zl_lwb);
	tarn_array_fini(&zl->zl_rpos);
	pthread_mutex_destroy(&zl->zl_lock);
	pthread_cond_destroy(&zl->zl_cv);
	tarn_free(zl);
}

void
zil_get_stats(zil_t *zl, zil_stats_t *out)
{
	uint64_t *dst = (uint64_t *)out;
	const uint64_t *src = (const uint64_t *)&zl->zl_stats;
	for (size_t i = 0; i < sizeof (*out) / sizeof (uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

static void
zil_lwb_add(zil_t *zl, const blkptr_t *bp, uint64_t max_txg)
{
	zil_lwb_t *lwb = tarn_array_push(&zl->zl_lwb);
	lwb->lwb_bp = *bp;
	lwb->lwb_max_txg = max_txg;
}

/* ---- block verification and reading ---- */

int
zil_block_verify(const blkptr_t *bp, const void *buf, uint64_t size)
{
	if (size < ZIL_BLOCK_HDR || size != bp->bp_psize)
		return (SET_ERROR(ECKSUM));
	const zil_block_t *blk = buf;
	if (blk->zlb_magic != ZIL_BLOCK_MAGIC ||
	    blk->zlb_guid != bp->bp_cksum_val.zc_word[0] ||
	    blk->zlb_seq != bp->bp_cksum_val.zc_word[1] ||
	    blk->zlb_used < ZIL_BLOCK_HDR || blk->zlb_used > size)
		return (SET_ERROR(ECKSUM));
	zil_block_t h = *blk;
	memset(&h.zlb_cksum, 0, sizeof (h.zlb_cksum));
	/* checksum of the header (cksum zeroed) then the records */
	zio_cksum_t a, b;
	zio_checksum_compute(ZIO_CHECKSUM_XXH3_128, &h, sizeof (h), &a);
	zio_checksum_compute(ZIO_CHECKSUM_XXH3_128, (const uint8_t *)buf + ZIL_BLOCK_HDR,
	    blk->zlb_used - ZIL_BLOCK_HDR, &b);
	a.zc_word[2] = b.zc_word[0];
	a.zc_word[3] = b.zc_word[1];
	return (zio_cksum_equal(&a, &blk->zlb_cksum) ? 0 : SET_ERROR(ECKSUM));
}

static void
zil_block_seal(zil_block_t *blk)
{
	memset(&blk->zlb_cksum, 0, sizeof (blk->zlb_cksum));
	zio_cksum_t a, b;
	zio_checksum_compute(ZIO_CHECKSUM_XXH3_128, blk, sizeof (*blk), &a);
	zio_checksum_compute(ZIO_CHECKSUM_XXH3_128, (const uint8_t *)blk + ZIL_BLOCK_HDR,
	    blk->zlb_used - ZIL_BLOCK_HDR, &b);
	a.zc_word[2] = b.zc_word[0];
	a.zc_word[3] = b.zc_word[1];
	blk->zlb_cksum = a;
}

static int
zil_verify_cb(void *arg, const void *buf, uint64_t size)
{
	return (zil_block_verify(arg, buf, size));
}

/* Is bp shaped like a log block pointer?  (zio_read_raw checks the rest.) */
static bool
zil_bp_sane(const blkptr_t *bp)
{
	return (!BP_IS_HOLE(bp) && bp->bp_type == DMU_OT_INTENT_LOG && bp->bp_ndvas == 1 &&
	    bp->bp_psize >= ZIL_MIN_BLOCK && bp->bp_psize <= ZIL_MAX_BLOCK &&
	    bp->bp_psize % ZIL_BLOCK_ALIGN == 0);
}

/* Read and verify the block bp names into buf (bp_psize bytes). */
static int
zil_read_block(zil_t *zl, const blkptr_t *bp, void *buf)
{
	if (!zil_bp_sane(bp))
		return (SET_ERROR(ECKSUM));
	return (zio_read_raw(zl->zl_zc, bp, buf, zil_verify_cb, (void *)bp,
	    ZIO_FLAG_SPECULATIVE | (zl->zl_readonly ? ZIO_FLAG_NOHEAL : 0)));
}

void
zil_scan(zio_ctx_t *zc, const zil_header_t *zh, int flags, zil_scan_stat_t *st)
{
	memset(st, 0, sizeof (*st));
	if (zh->zh_claim_txg == 0)
		return;
	blkptr_t bp = zh->zh_log;
	void *buf = tarn_alloc_aligned(ZIL_MAX_BLOCK);
	for (uint64_t n = 0; !BP_IS_HOLE(&bp) && n < ZIL_MAX_CHAIN; n++) {
		if (bp.bp_cksum_val.zc_word[1] >= zh->zh_claim_seq)
			break;                          /* past the claimed part */
		if (!zil_bp_sane(&bp) ||
		    zio_read_raw(zc, &bp, buf, zil_verify_cb, &bp, flags) != 0) {
			st->zss_errors++;
			break;
		}
		const zil_block_t *blk = buf;
		st->zss_blocks++;
		st->zss_bytes += DVA_ASIZE(&bp.bp_dva[0]);
		const blkptr_t *next = &blk->zlb_next;
		if (BP_IS_HOLE(next) || next->bp_cksum_val.zc_word[0] != blk->zlb_guid ||
		    next->bp_cksum_val.zc_word[1] != blk->zlb_seq + 1)
			break;                          /* the claim ended here too */
		bp = *next;
	}
	tarn_free(buf);
}

/*
 * Follow the chain from the header.  For each block that verifies (at
 * most max, and only below seq end when end != 0) fn(arg, bp, blk);
 * *endbp gets the bp of the first block not visited.
 */
typedef int (*zil_walk_fn_t)(zil_t *zl, void *arg, const blkptr_t *bp, const zil_block_t *blk);
static int
zil_walk_impl(zil_t *zl, const zil_header_t *zh, uint64_t max, uint64_t end,
    zil_walk_fn_t fn, void *arg, uint64_t *nblocks, blkptr_t *endbp)
{
	blkptr_t bp = zh->zh_log;
	uint64_t n = 0;
	int err = 0;
	void *buf = tarn_alloc_aligned(ZIL_MAX_BLOCK);
	while (!BP_IS_HOLE(&bp) && n < max && err == 0) {
		if (end != 0 && bp.bp_cksum_val.zc_word[1] >= end)
			break;
		if (zil_read_block(zl, &bp, buf) != 0)
			break;
		const zil_block_t *blk = buf;
		const blkptr_t *next = &blk->zlb_next;
		err = fn(zl, arg, &bp, blk);
		n++;
		/* the next block must continue this chain */
		if (!BP_IS_HOLE(next) && (next->bp_cksum_val.zc_word[0] != blk->zlb_guid ||
		    next->bp_cksum_val.zc_word[1] != blk->zlb_seq + 1)) {
			BP_ZERO(&bp);
			break;
		}
		bp = *next;
	}
	tarn_free(buf);
	if (nblocks != NULL)
		*nblocks = n;
	if (endbp != NULL)
		*endbp = bp;
	return (err);
}

typedef struct zil_walk_pub {
	zil_block_fn_t fn;
	void *arg;
} zil_walk_pub_t;

static int
zil_walk_pub_cb(zil_t *zl, void *arg, const blkptr_t *bp, const zil_block_t *blk)
{
	zil_walk_pub_t *w = arg;
	return (w->fn(w->arg, bp, blk));
}

int
zil_walk(zil_t *zl, uint64_t max, zil_block_fn_t fn, void *arg, uint64_t *nblocks)
{
	zil_header_t zh;
	dmu_objset_zil_header(zl->zl_os, &zh);
	zil_walk_pub_t w = { fn, arg };
	return (zil_walk_impl(zl, &zh, max, zh.zh_claim_txg != 0 ? zh.zh_claim_seq : 0,
	    zil_walk_pub_cb, &w, nblocks, NULL));
}

int
zil_block_records(const zil_block_t *blk, uint64_t size, zil_replay_fn_t fn, void *arg)
{
	const uint8_t *p = (const uint8_t *)blk + ZIL_BLOCK_HDR;
	const uint8_t *end = (const uint8_t *)blk + MIN(blk->zlb_used, size);
	for (uint32_t i = 0; i < blk->zlb_nrec; i++) {
		if ((size_t)(end - p) < sizeof (zil_lr_t))
			return (SET_ERROR(EINVAL));
		zil_lr_t lr;
		memcpy(&lr, p, sizeof (lr));
		if (lr.lr_reclen < sizeof (lr) || lr.lr_reclen % 8 != 0 ||
		    lr.lr_reclen > (size_t)(end - p) ||
		    lr.lr_type < ZIL_LR_WRITE || lr.lr_type > ZIL_LR_MAX ||
		    (lr.lr_type == ZIL_LR_TIMES && lr.lr_len != 6 * sizeof (uint64_t)) ||
		    lr.lr_len > lr.lr_reclen - sizeof (lr) ||
		    lr.lr_off + lr.lr_len < lr.lr_off)
			return (SET_ERROR(EINVAL));
		int err = fn(arg, &lr, p + sizeof (lr));
		if (err != 0)
			return (err);
		p += lr.lr_reclen;
	}
	return (0);
}

/* ---- logging ---- */

/* Drop the itxs of synced txgs from the head (zl_lock held). */
static void
zil_itx_trim(zil_t *zl)
{
	uint64_t synced = txg_last_synced(zl->zl_dp);
	while (zl->zl_head != NULL && zl->zl_head->itx_txg <= synced) {
		zil_itx_t *old = zl->zl_head;
		zl->zl_head = old->itx_next;
		zl->zl_itx_bytes -= MIN(zl->zl_itx_bytes, old->itx_len);
		tarn_free(old->itx_payload);
		tarn_free(old);
	}
	if (zl->zl_head == NULL)
		zl->zl_tail = NULL;
}

static zil_itx_t *
zil_itx_append(zil_t *zl, uint32_t type, uint64_t obj, uint64_t txg)
{
	zil_itx_t *itx = tarn_alloc(sizeof (*itx));
	itx->itx_type = type;
	itx->itx_txg = txg;
	itx->itx_obj = obj;
	if (zl->zl_tail != NULL)
		zl->zl_tail->itx_next = itx;
	else
		zl->zl_head = itx;
	zl->zl_tail = itx;
	return (itx);
}

void
zil_log_write(zil_t *zl, uint64_t obj, uint64_t off, uint64_t len, uint64_t txg,
    const uint64_t mtime[2])
{
	if (zl == NULL || zl->zl_readonly || len == 0)
		return;
	tarn_mutex_lock(&zl->zl_lock, ZIL);
	zil_itx_trim(zl);
	zil_itx_t *t = zl->zl_tail;
	if (t != NULL && t->itx_type == ZIL_LR_WRITE && t->itx_obj == obj &&
	    t->itx_txg == txg && t->itx_off + t->itx_len == off &&
	    t->itx_len + len <= ZIL_MAX_ITX_LEN) {
		t->itx_len += len;
	} else {
		t = zil_itx_append(zl, ZIL_LR_WRITE, obj, txg);
		t->itx_off = off;
		t->itx_len = len;
	}
	t->itx_mtime[0] = mtime[0];
	t->itx_mtime[1] = mtime[1];
	zl->zl_itx_bytes += len;
	zl->zl_itx_seq++;
	tarn_mutex_unlock(&zl->zl_lock);
}

void
zil_log_times(zil_t *zl, uint64_t obj, const uint64_t t[6], uint64_t txg)
{
	zil_log_op(zl, ZIL_LR_TIMES, obj, txg, t, 6 * sizeof (uint64_t));
}

void
zil_log_op(zil_t *zl, uint32_t type, uint64_t obj, uint64_t txg, const void *payload,
    uint32_t len)
{
	if (zl == NULL || zl->zl_readonly)
		return;
	VERIFY(type > ZIL_LR_WRITE && type <= ZIL_LR_MAX && len <= ZIL_LR_MAXPAYLOAD);
	VERIFY(type < ZIL_LR_XATTR || zl->zl_xattr_punch);
	tarn_mutex_lock(&zl->zl_lock, ZIL);
	zil_itx_trim(zl);
	zil_itx_t *itx = zl->zl_tail;
	/* times of one file in one txg: the newest are enough */
	if (type == ZIL_LR_TIMES && itx != NULL && itx->itx_type == ZIL_LR_TIMES &&
	    itx->itx_obj == obj && itx->itx_txg == txg && itx->itx_plen == len) {
		memcpy(itx->itx_payload, payload, len);
	} else {
		itx = zil_itx_append(zl, type, obj, txg);
		itx->itx_payload = tarn_alloc(MAX(len, 1));
		memcpy(itx->itx_payload, payload, len);
		itx->itx_plen = len;
	}
	zl->zl_itx_seq++;
	tarn_mutex_unlock(&zl->zl_lock);
}

void
zil_set_xattr_punch(zil_t *zl, bool on)
{
	if (zl != NULL)
		zl->zl_xattr_punch = on;
}

bool
zil_xattr_punch(const zil_t *zl)
{
	return (zl != NULL && zl->zl_xattr_punch && !zl->zl_readonly);
}

void
zil_log_unlogged(zil_t *zl, uint64_t txg)
{
	if (zl == NULL || zl->zl_readonly)
		return;
	tarn_mutex_lock(&zl->zl_lock, ZIL);
	if (txg > zl->zl_unlogged_txg)
		zl->zl_unlogged_txg = txg;
	tarn_mutex_unlock(&zl->zl_lock);
}

/* ---- writing the chain ---- */

static uint64_t
zil_block_size(uint64_t want)
{
	want = P2ROUNDUP(want + ZIL_BLOCK_HDR, ZIL_BLOCK_ALIGN);
	return (MIN(MAX(want, ZIL_MIN_BLOCK), ZIL_MAX_BLOCK));
}

/*
 * Allocate a log block of size bytes in the open txg, named by *bp with
 * (guid, seq) as its verifier.  first: it starts a new chain, so the
 * header names it in that same txg (returned in *txgp).
 */
static int
zil_alloc_block(zil_t *zl, uint64_t size, uint64_t guid, uint64_t seq, bool first,
    blkptr_t *bp, uint64_t *txgp)
{
	dmu_tx_t *tx = dmu_tx_create(zl->zl_os);
	dmu_tx_hold_space(tx, size);      /* never into the pool's reserve */
	int err = dmu_tx_assign(tx, first ? TXG_WAIT : TXG_NOTHROTTLE);
	if (err != 0) {
		dmu_tx_abort(tx);
		return (err);
	}
	uint64_t txg = dmu_tx_get_txg(tx);
	dva_t dva;
	/*
	 * The log class when the pool has usable log devices, else (or full)
	 * the normal one; logbias=throughput: the normal one always.
	 */
	int ndvas = 1;
	metaslab_class_t *mc = dmu_objset_logbias(zl->zl_os) == DMU_LOGBIAS_THROUGHPUT ?
	    NULL : zio_ctx_class_of(zl->zl_zc, VDEV_BIAS_LOG);
	err = zio_alloc_class(zl->zl_zc, mc, size, &ndvas, txg, &dva);
	if (err == 0) {
		BP_ZERO(bp);
		bp->bp_dva[0] = dva;
		bp->bp_lsize = bp->bp_psize = (uint32_t)size;
		bp->bp_cksum = ZIO_CHECKSUM_XXH3_128;
		bp->bp_comp = ZIO_COMPRESS_OFF;
		bp->bp_type = DMU_OT_INTENT_LOG;
		bp->bp_ndvas = 1;
		bp->bp_birth = bp->bp_phys_birth = txg;
		bp->bp_fill = 1;
		bp->bp_cksum_val.zc_word[0] = guid;
		bp->bp_cksum_val.zc_word[1] = seq;
	}
	if (err == 0 && first) {
		tarn_mutex_lock(&zl->zl_lock, ZIL);
		zl->zl_guid = guid;
		zl->zl_seq = seq;
		zl->zl_open = *bp;
		memset(&zl->zl_header, 0, sizeof (zl->zl_header));
		zl->zl_header.zh_log = *bp;
		dmu_objset_set_zil_header(zl->zl_os, &zl->zl_header, txg);
		tarn_mutex_unlock(&zl->zl_lock);
	}
	dmu_tx_commit(tx);
	*txgp = txg;
	return (err);
}

/*
 * Start a chain: the first block, named by the header of the txg it was
 * allocated in, which must sync before the chain is used.
 */
static int
zil_create(zil_t *zl)
{
	uint64_t guid = 0, txg = 0;
	while (guid == 0) {
		if (getrandom(&guid, sizeof (guid), 0) != sizeof (guid))
			guid = tarn_now_ns() ^ ((uint64_t)(uintptr_t)zl << 16);
	}
	blkptr_t bp;
	int err = zil_alloc_block(zl, zil_block_size(zl->zl_last_bytes), guid, 1, true,
	    &bp, &txg);
	if (err == 0)
		err = txg_wait_synced(zl->zl_dp, txg);
	return (err);
}

/* A log block being filled. */
typedef struct zil_wblock {
	uint8_t *wb_buf;
	uint64_t wb_cap;
	uint64_t wb_max_txg;
	uint64_t wb_commit_left;      /* bytes of the commit not yet placed */
	bool wb_wrote;                /* a block went out: flush before returning */
} zil_wblock_t;

/*
 * Write the open block (filled in wb) naming a newly allocated next
 * block, and make that one the open block.  On failure the chain may be
 * broken at the open block: commits sync txgs until a sync moved the
 * header past it (zl_force_txg).
 */
static int
zil_issue_block(zil_t *zl, zil_wblock_t *wb, uint64_t next_size)
{
	zil_block_t *blk = (zil_block_t *)wb->wb_buf;
	blkptr_t cur = zl->zl_open, next;
	uint64_t txg;
	int err = zil_alloc_block(zl, next_size, zl->zl_guid, zl->zl_seq + 1, false, &next, &txg);
	if (err != 0)
		return (err);
	blk->zlb_magic = ZIL_BLOCK_MAGIC;
	blk->zlb_guid = zl->zl_guid;
	blk->zlb_seq = zl->zl_seq;
	blk->zlb_next = next;
	memset((uint8_t *)blk + blk->zlb_used, 0, wb->wb_cap - blk->zlb_used);
	zil_block_seal(blk);
	err = zio_write_raw(zl->zl_zc, &cur, wb->wb_buf);
	wb->wb_wrote = true;
	tarn_mutex_lock(&zl->zl_lock, ZIL);
	zil_lwb_add(zl, &cur, err == 0 ? wb->wb_max_txg : 0);
	zl->zl_open = next;
	zl->zl_seq++;
	if (err != 0)
		zl->zl_force_txg = txg_open_txg(zl->zl_dp);
	tarn_mutex_unlock(&zl->zl_lock);
	if (err == 0) {
		ZIL_STAT_ADD(zl, zs_blocks, 1);
		ZIL_STAT_ADD(zl, zs_bytes, cur.bp_psize);
	}
	return (err);
}

/* Start filling the open block. */
static void
zil_wblock_start(zil_t *zl, zil_wblock_t *wb)
{
	wb->wb_cap = zl->zl_open.bp_psize;
	memset(wb->wb_buf, 0, ZIL_BLOCK_HDR);
	((zil_block_t *)wb->wb_buf)->zlb_used = ZIL_BLOCK_HDR;
	wb->wb_max_txg = 0;
}

/* Make room for a record of need bytes: issue the block if it is full. */
static int
zil_wblock_room(zil_t *zl, zil_wblock_t *wb, uint64_t need)
{
	zil_block_t *blk = (zil_block_t *)wb->wb_buf;
	if (wb->wb_cap - blk->zlb_used >= need)
		return (0);
	int err = zil_issue_block(zl, wb, zil_block_size(wb->wb_commit_left + need));
	if (err == 0)
		zil_wblock_start(zl, wb);
	return (err);
}

static int
zil_write_payload(zil_t *zl, zil_wblock_t *wb, const zil_itx_t *itx)
{
	uint64_t need = sizeof (zil_lr_t) + P2ROUNDUP(itx->itx_plen, 8);
	int err = zil_wblock_room(zl, wb, need);
	if (err != 0)
		return (err);
	zil_block_t *blk = (zil_block_t *)wb->wb_buf;
	zil_lr_t lr = {
		.lr_type = itx->itx_type,
		.lr_reclen = (uint32_t)need,
		.lr_txg = itx->itx_txg,
		.lr_obj = itx->itx_obj,
		.lr_len = itx->itx_plen,
	};
	uint8_t *p = wb->wb_buf + blk->zlb_used;
	memcpy(p, &lr, sizeof (lr));
	memcpy(p + sizeof (lr), itx->itx_payload, itx->itx_plen);
	memset(p + sizeof (lr) + itx->itx_plen, 0, need - sizeof (lr) - itx->itx_plen);
	blk->zlb_used += (uint32_t)need;
	blk->zlb_nrec++;
	wb->wb_max_txg = MAX(wb->wb_max_txg, itx->itx_txg);
	ZIL_STAT_ADD(zl, zs_records, 1);
	return (0);
}

/* Place one itx's records (its current data) into blocks, issuing full ones. */
static int
zil_write_itx(zil_t *zl, zil_wblock_t *wb, const zil_itx_t *itx)
{
	if (itx->itx_type != ZIL_LR_WRITE)
		return (zil_write_payload(zl, wb, itx));
	uint64_t off = itx->itx_off, left = itx->itx_len;
	while (left > 0) {
		int err = zil_wblock_room(zl, wb, sizeof (zil_lr_t) + MIN(left, 1024));
		if (err != 0)
			return (err);
		zil_block_t *blk = (zil_block_t *)wb->wb_buf;
		uint64_t room = wb->wb_cap - blk->zlb_used;
		uint64_t n = MIN(left, (room - sizeof (zil_lr_t)) & ~7ULL);
		uint8_t *p = wb->wb_buf + blk->zlb_used;
		err = dmu_read(zl->zl_os, itx->itx_obj, off, n, p + sizeof (zil_lr_t));
		if (err == ENOENT)
			return (0);     /* the object is gone: nothing to replay */
		if (err != 0)
			return (err);
		zil_lr_t lr = {
			.lr_type = ZIL_LR_WRITE,
			.lr_reclen = (uint32_t)(sizeof (zil_lr_t) + P2ROUNDUP(n, 8)),
			.lr_txg = itx->itx_txg,
			.lr_obj = itx->itx_obj,
			.lr_off = off,
			.lr_len = n,
			.lr_mtime = { itx->itx_mtime[0], itx->itx_mtime[1] },
		};
		memcpy(p, &lr, sizeof (lr));
		memset(p + sizeof (lr) + n, 0, lr.lr_reclen - sizeof (lr) - n);
		blk->zlb_used += lr.lr_reclen;
		blk->zlb_nrec++;
		wb->wb_max_txg = MAX(wb->wb_max_txg, itx->itx_txg);
		wb->wb_commit_left -= MIN(wb->wb_commit_left, n);
		ZIL_STAT_ADD(zl, zs_records, 1);
		off += n;
		left -= n;
	}
	return (0);
}

/* Write itxs (of txgs after synced) to the chain and flush. */
static int
zil_write_chain(zil_t *zl, zil_itx_t *itxs, uint64_t bytes, uint64_t synced)
{
	int err = 0;
	if (BP_IS_HOLE(&zl->zl_open) && (err = zil_create(zl)) != 0)
		return (err);
	if (zl->zl_wbuf == NULL)
		zl->zl_wbuf = tarn_alloc_aligned(ZIL_MAX_BLOCK);
	zil_wblock_t wb = { .wb_buf = zl->zl_wbuf, .wb_commit_left = bytes };
	zil_wblock_start(zl, &wb);
	uint64_t total = 0;
	for (zil_itx_t *itx = itxs; itx != NULL && err == 0; itx = itx->itx_next) {
		if (itx->itx_txg <= synced)
			continue;
		err = zil_write_itx(zl, &wb, itx);
		total += itx->itx_len;
	}
	if (err == 0 && ((zil_block_t *)wb.wb_buf)->zlb_nrec > 0) {
		/* size the next block for this commit or what queued meanwhile */
		uint64_t queued = __atomic_load_n(&zl->zl_itx_bytes, __ATOMIC_RELAXED);
		zl->zl_last_bytes = MIN(MAX(total, queued), ZIL_MAX_BLOCK);
		err = zil_issue_block(zl, &wb, zil_block_size(zl->zl_last_bytes +
		    sizeof (zil_lr_t)));
	}
	if (err == 0 && wb.wb_wrote)
		err = zio_flush(zl->zl_zc);
	return (err);
}

/* Must this commit sync a txg rather than write the log? (zl_lock held) */
static bool
zil_must_sync(zil_t *zl, uint64_t synced)
{
	return (zl->zl_unlogged_txg > synced || zl->zl_force_txg > synced ||
	    zl->zl_itx_bytes > ZIL_MAX_COMMIT || zl->zl_replay ||
	    (BP_IS_HOLE(&zl->zl_open) && tarn_array_len(&zl->zl_lwb) > 0));
}

int
zil_commit(zil_t *zl)
{
	if (zl->zl_readonly)
		return (0);
	ZIL_STAT_ADD(zl, zs_commits, 1);
	int err = 0;
	tarn_mutex_lock(&zl->zl_lock, ZIL);
	uint64_t target = zl->zl_itx_seq, utxg = zl->zl_unlogged_txg;
	for (;;) {
		uint64_t synced = txg_last_synced(zl->zl_dp);
		if (zl->zl_committed_seq >= target && utxg <= synced)
			break;
		if (zl->zl_committing) {
			pthread_cond_wait(&zl->zl_cv, &zl->zl_lock);
			continue;
		}
		zl->zl_committing = true;
		bool sync = zil_must_sync(zl, synced);
		zil_itx_t *itxs = zl->zl_head;
		uint64_t bytes = zl->zl_itx_bytes, upto = zl->zl_itx_seq;
		zl->zl_head = zl->zl_tail = NULL;
		zl->zl_itx_bytes = 0;
		tarn_mutex_unlock(&zl->zl_lock);

		if (!sync) {
			err = zil_write_chain(zl, itxs, bytes, synced);
			if (err == 0)
				ZIL_STAT_ADD(zl, zs_log_writes, 1);
		}
		if (sync || err != 0) {
			err = txg_wait_synced(zl->zl_dp, 0);
			ZIL_STAT_ADD(zl, zs_txg_syncs, 1);
		}
		zil_itxs_free(itxs);

		tarn_mutex_lock(&zl->zl_lock, ZIL);
		zl->zl_committing = false;
		pthread_cond_broadcast(&zl->zl_cv);
		if (err != 0) {
			/* the records taken are lost: later commits sync txgs */
			zl->zl_force_txg = MAX(zl->zl_force_txg, txg_open_txg(zl->zl_dp));
			break;
		}
		zl->zl_committed_seq = MAX(zl->zl_committed_seq, upto);
		if (sync)
			utxg = 0;      /* the sync covered every change before the call */
	}
	tarn_mutex_unlock(&zl->zl_lock);
	return (err);
}

/* ---- syncing context ---- */

void
zil_sync(zil_t *zl, uint64_t txg)
{
	if (zl->zl_readonly)
		return;
	metaslab_class_t *mc = zio_ctx_class(zl->zl_zc);
	tarn_mutex_lock(&zl->zl_lock, ZIL);
	/*
	 * A block born in txg itself is not freed yet: the header of txg - 1,
	 * still the committed one until this sync ends, may name it (it was
	 * the open block then), and a free in the txg of birth would make its
	 * space allocatable at once, to a log block written before this
	 * txg commits.  Freed in a later txg, its space waits out the deferral.
	 */
	size_t n = 0;
	while (n < tarn_array_len(&zl->zl_lwb)) {
		const zil_lwb_t *lwb = tarn_array_get(&zl->zl_lwb, n);
		if (lwb->lwb_max_txg > txg || lwb->lwb_bp.bp_birth >= txg)
			break;
		metaslab_free(mc, &lwb->lwb_bp.bp_dva[0], lwb->lwb_bp.bp_birth, txg);
		n++;
	}
	tarn_array_remove_range(&zl->zl_lwb, 0, n);
	if (zl->zl_drop_open && !zl->zl_replay && !zl->zl_committing &&
	    !BP_IS_HOLE(&zl->zl_open) && zl->zl_open.bp_birth < txg) {
		/*
		 * Never written; the last written block names it as its next,
		 * and a walk stops there once the space holds anything else.
		 */
		metaslab_free(mc, &zl->zl_open.bp_dva[0], zl->zl_open.bp_birth, txg);
		BP_ZERO(&zl->zl_open);
	}
	if (BP_IS_HOLE(&zl->zl_open))
		zl->zl_drop_open = false;
	if (zl->zl_replay) {
		/* replay progress whose effect this txg commits */
		uint64_t pos = 0;
		size_t k = 0;
		while (k < tarn_array_len(&zl->zl_rpos) &&
		    TARN_ARRAY_AT(&zl->zl_rpos, zil_rpos_t, k).zr_txg <= txg)
			pos = TARN_ARRAY_AT(&zl->zl_rpos, zil_rpos_t, k++).zr_pos;
		tarn_array_remove_range(&zl->zl_rpos, 0, k);
		if (pos > zl->zl_header.zh_replay_pos) {
			zl->zl_header.zh_replay_pos = pos;
			dmu_objset_set_zil_header(zl->zl_os, &zl->zl_header, txg);
		}
	} else {
		zil_header_t zh;
		memset(&zh, 0, sizeof (zh));
		zh.zh_log = tarn_array_len(&zl->zl_lwb) > 0 ?
		    TARN_ARRAY_AT(&zl->zl_lwb, zil_lwb_t, 0).lwb_bp : zl->zl_open;
		if (memcmp(&zh, &zl->zl_header, sizeof (zh)) != 0) {
			zl->zl_header = zh;
			dmu_objset_set_zil_header(zl->zl_os, &zh, txg);
		}
	}
	tarn_mutex_unlock(&zl->zl_lock);
}

/*
 * Give back the chain's open block (a log device is leaving): the next
 * sync that finds no commit running frees it (a commit writes into the
 * open block without zl_lock) and the header stops naming it; the
 * chain's written blocks go as their records become durable.  The next
 * commit starts a new chain wherever the allocator puts it.  Does not
 * wait: the caller syncs.
 */
void
zil_release_open(zil_t *zl)
{
	if (zl->zl_readonly)
		return;
	tarn_mutex_lock(&zl->zl_lock, ZIL);
	zl->zl_drop_open = !BP_IS_HOLE(&zl->zl_open);
	tarn_mutex_unlock(&zl->zl_lock);
}

/* ---- claim, replay, destroy ---- */

typedef struct zil_claim_arg {
	uint64_t first_txg;
	bool claim;                   /* claim blocks (first import) */
	bool stopped;                 /* a claim failed: the chain ends there */
	uint64_t end_seq;
} zil_claim_arg_t;

static int
zil_claim_cb(zil_t *zl, void *arg, const blkptr_t *bp, const zil_block_t *blk)
{
	zil_claim_arg_t *ca = arg;
	if (ca->claim && bp->bp_birth >= ca->first_txg &&
	    metaslab_claim(zio_ctx_class(zl->zl_zc), &bp->bp_dva[0], ca->first_txg) != 0) {
		ca->stopped = true;
		ca->end_seq = blk->zlb_seq;
		return (SET_ERROR(EEXIST));
	}
	zil_lwb_add(zl, bp, UINT64_MAX);      /* freed after the replay */
	ca->end_seq = blk->zlb_seq + 1;
	return (0);
}

int
zil_claim(zil_t *zl, uint64_t first_txg)
{
	zil_header_t zh = zl->zl_header;
	if (BP_IS_HOLE(&zh.zh_log))
		return (0);
	bool claimed = zh.zh_claim_txg != 0;
	zil_claim_arg_t ca = { .first_txg = claimed ? zh.zh_claim_txg : first_txg,
		.claim = !claimed && !zl->zl_readonly,
		.end_seq = zh.zh_log.bp_cksum_val.zc_word[1] };
	blkptr_t endbp;
	tarn_mutex_lock(&zl->zl_lock, ZIL);
	(void) zil_walk_impl(zl, &zh, ZIL_MAX_CHAIN, claimed ? zh.zh_claim_seq : 0,
	    zil_claim_cb, &ca, NULL, &endbp);
	if (!claimed) {
		zh.zh_claim_txg = first_txg;
		zh.zh_claim_seq = ca.end_seq;
		zh.zh_flags = 0;
		/* an unwritten end block born in a committed txg is allocated */
		if (!ca.stopped && !BP_IS_HOLE(&endbp) && endbp.bp_birth < first_txg &&
		    zil_bp_sane(&endbp))
			zh.zh_flags |= ZH_F_END_ALLOCATED;
		if (!zl->zl_readonly) {
			zl->zl_header = zh;
			dmu_objset_set_zil_header(zl->zl_os, &zh, first_txg);
		}
	}
	if ((zh.zh_flags & ZH_F_END_ALLOCATED) && !BP_IS_HOLE(&endbp) &&
	    endbp.bp_cksum_val.zc_word[1] == zh.zh_claim_seq)
		zil_lwb_add(zl, &endbp, UINT64_MAX);
	zl->zl_replay = !zl->zl_readonly;
	tarn_mutex_unlock(&zl->zl_lock);
	return (0);
}

void
zil_discard(zil_t *zl, uint64_t txg)
{
	tarn_mutex_lock(&zl->zl_lock, ZIL);
	if (!BP_IS_HOLE(&zl->zl_header.zh_log) || zl->zl_header.zh_claim_txg != 0) {
		memset(&zl->zl_header, 0, sizeof (zl->zl_header));
		dmu_objset_set_zil_header(zl->zl_os, &zl->zl_header, txg);
	}
	zl->zl_replay = false;
	tarn_mutex_unlock(&zl->zl_lock);
}

bool
zil_replay_needed(zil_t *zl)
{
	tarn_mutex_lock(&zl->zl_lock, ZIL);
	bool r = zl->zl_replay;
	tarn_mutex_unlock(&zl->zl_lock);
	return (r);
}

typedef struct zil_replay_arg {
	zil_replay_fn_t fn;
	void *arg;
	zil_t *zl;
	uint64_t claim_txg;
	uint64_t done_pos;            /* replayed and committed before */
	uint64_t block_seq, index;    /* position of the record at hand */
	uint64_t nrec;
} zil_replay_arg_t;

static int
zil_replay_lr(void *arg, const zil_lr_t *lr, const void *data)
{
	zil_replay_arg_t *ra = arg;
	zil_t *zl = ra->zl;
	uint64_t pos = (ra->block_seq << 24) | ++ra->index;
	if (lr->lr_txg < ra->claim_txg || pos <= ra->done_pos)
		return (0);        /* in a committed txg already */
	ra->nrec++;
	int err = ra->fn(ra->arg, lr, data);
	if (err != 0)
		return (err);
	/* its effect is in the open txg or an older one */
	uint64_t txg = txg_open_txg(zl->zl_dp);
	tarn_mutex_lock(&zl->zl_lock, ZIL);
	TARN_ARRAY_APPEND(&zl->zl_rpos, zil_rpos_t, ((zil_rpos_t){ .zr_pos = pos, .zr_txg = txg }));
	tarn_mutex_unlock(&zl->zl_lock);
	return (0);
}

static int
zil_replay_block(zil_t *zl, void *arg, const blkptr_t *bp, const zil_block_t *blk)
{
	zil_replay_arg_t *ra = arg;
	ra->block_seq = blk->zlb_seq;
	ra->index = 0;
	int err = zil_block_records(blk, bp->bp_psize, zil_replay_lr, arg);
	return (err == EINVAL ? 0 : err);   /* a malformed record ends that block */
}

int
zil_replay(zil_t *zl, zil_replay_fn_t fn, void *arg, uint64_t *nrec)
{
	if (nrec != NULL)
		*nrec = 0;
	if (!zil_replay_needed(zl))
		return (0);
	zil_header_t zh = zl->zl_header;
	zil_replay_arg_t ra = { .fn = fn, .arg = arg, .claim_txg = zh.zh_claim_txg,
		.zl = zl, .done_pos = zh.zh_replay_pos };
	int err = zil_walk_impl(zl, &zh, ZIL_MAX_CHAIN, zh.zh_claim_seq, zil_replay_block,
	    &ra, NULL, NULL);
	if (nrec != NULL)
		*nrec = ra.nrec;
	if (err == 0)
		err = txg_wait_synced(zl->zl_dp, 0);
	if (err != 0)
		return (err);
	tarn_mutex_lock(&zl->zl_lock, ZIL);
	for (size_t i = 0; i < tarn_array_len(&zl->zl_lwb); i++)
		TARN_ARRAY_AT(&zl->zl_lwb, zil_lwb_t, i).lwb_max_txg = 0;
	zl->zl_replay = false;
	tarn_array_clear(&zl->zl_rpos);
	tarn_mutex_unlock(&zl->zl_lock);
	/* the next sync frees the chain and clears the header */
	return (txg_wait_synced(zl->zl_dp, 0));
}

void
zil_destroy(zil_t *zl, dmu_tx_t *tx)
{
	uint64_t txg = dmu_tx_get_txg(tx);
	metaslab_class_t *mc = zio_ctx_class(zl->zl_zc);
	tarn_mutex_lock(&zl->zl_lock, ZIL);
	for (size_t i = 0; i < tarn_array_len(&zl->zl_lwb); i++) {
		const blkptr_t *bp = &TARN_ARRAY_AT(&zl->zl_lwb, zil_lwb_t, i).lwb_bp;
		if (bp->bp_birth <= txg)
			metaslab_free(mc, &bp->bp_dva[0], bp->bp_birth, txg);
	}
	tarn_array_clear(&zl->zl_lwb);
	if (!BP_IS_HOLE(&zl->zl_open) && zl->zl_open.bp_birth <= txg)
		metaslab_free(mc, &zl->zl_open.bp_dva[0], zl->zl_open.bp_birth, txg);
	BP_ZERO(&zl->zl_open);
	zl->zl_replay = false;
	zl->zl_readonly = true;       /* nothing more is logged */
	tarn_mutex_unlock(&zl->zl_lock);
}
