/*
 * zio.c — the block I/O pipeline: one block's trip to the devices and
 * back (zio.h is the contract; compress.c and blkptr.c hold the pieces).
 *
 * Theory of the zio pipeline
 * --------------------------
 * Write.  A block of lsize bytes goes through these stages, all on the
 * context's worker pool (taskq) so that many blocks proceed at once:
 *
 *   1. compress  (zp_compress != off) — kept only if it saves >= 1/8;
 *                the stored form is zero padded to a multiple of 512, so
 *                psize is what the checksum covers and what is written;
 *   2. checksum  zp_checksum over the psize stored bytes;
 *   3. allocate  zp_copies DVAs through the space layer, on distinct
 *                top-level vdevs where there are enough; or, for a
 *                rewrite_ok write over a block born in this same txg with
 *                the same number of DVAs and the same allocated size on
 *                each, reuse its DVAs (later sync passes converge so);
 *   4. write     every copy with vdev_write on its top-level vdev (mirror
 *                sides and RAID-Z columns are the vdev layer's business);
 *                the copies are separate work items, written in parallel;
 *   5. done      the last copy to finish fills the caller's bp.  If every
 *                copy failed the write fails with EIO and fresh DVAs are
 *                given back; if one failed the block is still readable
 *                and reads/scrub heal the other.  A replaced bp born in
 *                this txg is freed at once (it was never committed).
 *
 * Read.  DVAs are tried in order.  vdev_read gets a verify callback (the
 * block checksum over psize bytes), so inside one DVA the vdev layer
 * already tries every mirror side and RAID-Z reconstruction and repairs
 * bad children.  When a DVA fails (EIO or ECKSUM) the next is tried;
 * once one verifies, the DVAs that failed before it are rewritten with
 * the good bytes (self-heal across ditto copies) unless the context is
 * read-only or the caller said NOHEAL; such a rewrite is counted in the
 * context's zs_heal_* and in vs_repaired_bytes of that DVA's top-level
 * vdev (repairs inside a mirror/raidz are counted by the vdev layer on
 * the leaves).  A scrub read (ZIO_FLAG_SCRUB)
 * reads and verifies every DVA with VDEV_IO_SCRUB and repairs all bad
 * ones.  Only verified bytes are decompressed into the caller's buffer;
 * when no copy verifies (or verified bytes do not decompress) the read
 * fails with ECKSUM (EIO when every copy failed with EIO), the buffer is
 * zeroed, and the context's error callback hears of it unless the read
 * was SPECULATIVE.
 *
 * Batches and threads.  A batch is a queue of work items (a write's
 * stages 1-3, a copy's write, a read) plus a count of unfinished
 * operations.  Queued items are run by "runners" on the taskq: a runner
 * pops and runs items of its batch until the queue is empty.  A batch
 * has at most one runner less than the taskq has threads (a new item
 * starts one only below that; the waiter is the last worker), so a batch
 * of many blocks costs a few dispatches and wake-ups, not one per block,
 * and does not keep more threads busy than there are CPUs.
 * zio_batch_wait() does not just sleep: while items are queued it pops
 * and runs them itself.  So a wait never depends on a free worker — it
 * is safe to wait on a batch from a worker thread (the dmu does), and
 * every item that is not queued is being run by some thread that does
 * not block on the taskq.  The batch is reference counted (the waiter
 * plus one per runner not yet finished) and freed by whoever drops the
 * last reference.
 *
 * Delayed devices (`tarn inject -D`).  The vdev layer charges each leaf
 * I/O a service time that the issuing thread sleeps out after the call
 * (vdev.h).  A batch's write copies and reads defer that sleep
 * (vdev_inject_defer) and fold the completion time into the batch
 * before they are reported done; zio_batch_wait sleeps once, for the
 * latest.  So all blocks of a batch are in the devices' queues at once,
 * as an asynchronous issuer's are, and adjacent ones merge there
 * (vdev_queue.c); a batch still returns no sooner than its I/O would
 * have completed.
 *
 * Device changes.  Every call into the vdev tree (vdev_read,
 * vdev_write, vdev_flush, the top-level lookup before them) holds the
 * tree lock as reader for that one call (vdev.h, vdev_tree_enter_read),
 * never nested, so a device change (attach, replace, a leaf reopened)
 * waits for the I/O in flight and I/O waits for the change.  Each
 * vdev_io_t carries the block's birth txg (vio_txg), so the vdev layer
 * can tell which leaves missed it; heal writes say VDEV_IO_REPAIR.
 */
#include "zio.h"

#include <pthread.h>

struct zio_ctx {
	vdev_t *zc_root;
	metaslab_class_t *zc_mc;
	metaslab_class_t *zc_class[VDEV_BIAS_COUNT]; /* [NORMAL] is zc_mc; others
	                                 set before I/O starts, NULL: none */
	taskq_t *zc_tq;
	bool zc_readonly;             /* atomic */
	bool zc_deflate;              /* set before object sets open */
	zio_error_fn_t zc_error_fn;   /* set before I/O starts */
	void *zc_error_arg;
	zio_stats_t zc_stats;         /* atomic counters */
};

#define ZIO_STAT_ADD(zc, field, n) \
	__atomic_add_fetch(&(zc)->zc_stats.field, (n), __ATOMIC_RELAXED)

/* ---- context ---- */

zio_ctx_t *
zio_ctx_create(vdev_t *root, metaslab_class_t *mc, int nthreads)
{
	zio_ctx_t *zc = tarn_alloc(sizeof (*zc));
	zc->zc_root = root;
	zc->zc_mc = mc;
	zc->zc_class[VDEV_BIAS_NORMAL] = mc;
	zc->zc_tq = taskq_create("zio", nthreads);
	return (zc);
}

void
zio_ctx_destroy(zio_ctx_t *zc)
{
	taskq_destroy(zc->zc_tq);
	tarn_free(zc);
}

void
zio_ctx_set_readonly(zio_ctx_t *zc, bool readonly)
{
	__atomic_store_n(&zc->zc_readonly, readonly, __ATOMIC_RELAXED);
}

void
zio_ctx_set_error_cb(zio_ctx_t *zc, zio_error_fn_t fn, void *arg)
{
	zc->zc_error_fn = fn;
	zc->zc_error_arg = arg;
}

void
zio_ctx_set_deflate(zio_ctx_t *zc, bool deflate)
{
	zc->zc_deflate = deflate;
}

uint64_t
zio_bp_dsize(zio_ctx_t *zc, const blkptr_t *bp)
{
	if (BP_IS_HOLE(bp))
		return (0);
	int n = MIN((int)bp->bp_ndvas, SPA_DVAS_PER_BP);
	uint64_t sum = 0;
	if (!zc->zc_deflate) {
		for (int d = 0; d < n; d++)
			sum += DVA_ASIZE(&bp->bp_dva[d]);
		return (sum);
	}
	vdev_tree_enter_read(zc->zc_root);
	for (int d = 0; d < n; d++) {
		const dva_t *dva = &bp->bp_dva[d];
		vdev_t *top = vdev_lookup_top(zc->zc_root, dva->dva_vdev);
		uint64_t ratio = top != NULL ? vdev_deflate_ratio(top) : VDEV_DEFLATE_UNIT;
		sum += (DVA_ASIZE(dva) / VDEV_DEFLATE_UNIT) * ratio;
	}
	vdev_tree_exit(zc->zc_root);
	return (sum);
}

taskq_t *
zio_ctx_taskq(zio_ctx_t *zc)
{
	return (zc->zc_tq);
}

vdev_t *
zio_ctx_root(zio_ctx_t *zc)
{
	return (zc->zc_root);
}

metaslab_class_t *
zio_ctx_class(zio_ctx_t *zc)
{
	return (zc->zc_mc);
}

void
zio_ctx_set_class(zio_ctx_t *zc, vdev_alloc_bias_t bias, metaslab_class_t *mc)
{
	VERIFY(bias > VDEV_BIAS_NORMAL && bias < VDEV_BIAS_COUNT);
	zc->zc_class[bias] = mc;
}

metaslab_class_t *
zio_ctx_class_of(zio_ctx_t *zc, vdev_alloc_bias_t bias)
{
	metaslab_class_t *mc = zc->zc_class[bias];
	return (mc != NULL && metaslab_class_ngroups(mc) > 0 ? mc : NULL);
}

bool
zio_prop_wants_special(const zio_prop_t *zp, uint64_t lsize)
{
	return (zp->zp_special ||
	    (zp->zp_blevel == 0 && zp->zp_small_blocks != 0 && lsize <= zp->zp_small_blocks));
}

int
zio_alloc_class(zio_ctx_t *zc, metaslab_class_t *first, uint64_t psize, int *ndvas,
    uint64_t txg, dva_t *dvas)
{
	/* a preferred class gets every copy or nothing: then the normal class */
	if (first != NULL && first != zc->zc_mc &&
	    metaslab_alloc(first, psize, *ndvas, txg, dvas) == 0)
		return (0);
	/*
	 * Extra copies are best effort: when free space is too short or
	 * too fragmented for all of them, fewer copies beat a failed
	 * sync (which would suspend the pool).
	 */
	int err;
	while ((err = metaslab_alloc(zc->zc_mc, psize, *ndvas, txg, dvas)) == ENOSPC &&
	    *ndvas > 1)
		(*ndvas)--;
	return (err);
}

void
zio_ctx_stats(zio_ctx_t *zc, zio_stats_t *out)
{
	uint64_t *dst = (uint64_t *)out;
	const uint64_t *src = (const uint64_t *)&zc->zc_stats;
	for (size_t i = 0; i < sizeof (*out) / sizeof (uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

static bool
zio_ctx_readonly(zio_ctx_t *zc)
{
	return (__atomic_load_n(&zc->zc_readonly, __ATOMIC_RELAXED));
}

/* ---- batches: a work queue helped by its waiter ---- */

typedef struct zio_work zio_work_t;
struct zio_work {
	zio_work_t *zw_next;
	void (*zw_fn)(zio_work_t *zw);
};

struct zio_batch {
	zio_ctx_t *zb_ctx;
	pthread_mutex_t zb_lock;
	pthread_cond_t zb_cv;         /* zb_pending reached 0 */
	zio_work_t *zb_head;          /* queued items, guarded by zb_lock */
	zio_work_t *zb_tail;
	int zb_pending;               /* operations not done, zb_lock */
	int zb_refs;                  /* waiter + runners, zb_lock */
	int zb_runners;               /* runners dispatched and not done, zb_lock */
	int zb_max_runners;           /* the taskq's threads less one */
	int zb_error;                 /* first error, zb_lock */
	uint64_t zb_until;            /* delayed I/O of its items completes (ns), zb_lock */
	uint64_t zb_gen;              /* and the oldest generation of it, zb_lock */
};

zio_batch_t *
zio_batch_create(zio_ctx_t *zc)
{
	zio_batch_t *b = tarn_alloc(sizeof (*b));
	b->zb_ctx = zc;
	pthread_mutex_init(&b->zb_lock, NULL);
	pthread_cond_init(&b->zb_cv, NULL);
	b->zb_refs = 1;
	/* the waiter runs items too: with it, as many threads as the taskq has */
	b->zb_max_runners = MAX(taskq_nthreads(zc->zc_tq) - 1, 1);
	return (b);
}

static void
zio_batch_rele(zio_batch_t *b)
{
	pthread_mutex_lock(&b->zb_lock);
	bool last = --b->zb_refs == 0;
	pthread_mutex_unlock(&b->zb_lock);
	if (!last)
		return;
	ASSERT3P(b->zb_head, ==, NULL);
	pthread_mutex_destroy(&b->zb_lock);
	pthread_cond_destroy(&b->zb_cv);
	tarn_free(b);
}

/* Pop the next queued item; caller holds zb_lock. */
static zio_work_t *
zio_batch_pop(zio_batch_t *b)
{
	zio_work_t *zw = b->zb_head;
	if (zw != NULL) {
		b->zb_head = zw->zw_next;
		if (b->zb_head == NULL)
			b->zb_tail = NULL;
		zw->zw_next = NULL;
	}
	return (zw);
}

/*
 * Run queued items until there are none.  The runner count drops under
 * the same lock as the pop that found the queue empty, so an item queued
 * meanwhile either is popped here or starts a new runner.
 */
static void
zio_batch_runner(void *arg)
{
	zio_batch_t *b = arg;
	for (;;) {
		pthread_mutex_lock(&b->zb_lock);
		zio_work_t *zw = zio_batch_pop(b);
		if (zw == NULL)
			b->zb_runners--;
		pthread_mutex_unlock(&b->zb_lock);
		if (zw == NULL)
			break;
		zw->zw_fn(zw);
	}
	zio_batch_rele(b);
}

/* Queue an item, and a runner for it when the batch has fewer than its share. */
static void
zio_batch_enqueue(zio_batch_t *b, zio_work_t *zw)
{
	pthread_mutex_lock(&b->zb_lock);
	zw->zw_next = NULL;
	if (b->zb_tail != NULL)
		b->zb_tail->zw_next = zw;
	else
		b->zb_head = zw;
	b->zb_tail = zw;
	bool start = b->zb_runners < b->zb_max_runners;
	if (start) {
		b->zb_runners++;
		b->zb_refs++;
	}
	pthread_mutex_unlock(&b->zb_lock);
	if (start)
		taskq_dispatch(b->zb_ctx->zc_tq, zio_batch_runner, b);
}

static void
zio_batch_op_start(zio_batch_t *b)
{
	pthread_mutex_lock(&b->zb_lock);
	b->zb_pending++;
	pthread_mutex_unlock(&b->zb_lock);
}

/*
 * Take this thread's deferred completion time (vdev_inject_defer) into
 * the batch's, before the operation that issued it is reported done.
 */
static void
zio_batch_fold(zio_batch_t *b)
{
	uint64_t gen, until = vdev_inject_take(&gen);
	if (until == 0)
		return;
	pthread_mutex_lock(&b->zb_lock);
	if (b->zb_until == 0 || gen < b->zb_gen)
		b->zb_gen = gen;
	b->zb_until = MAX(b->zb_until, until);
	pthread_mutex_unlock(&b->zb_lock);
}

static void
zio_batch_op_done(zio_batch_t *b, int error)
{
	zio_batch_fold(b);
	pthread_mutex_lock(&b->zb_lock);
	if (error != 0 && b->zb_error == 0)
		b->zb_error = error;
	ASSERT3S(b->zb_pending, >, 0);
	if (--b->zb_pending == 0)
		pthread_cond_broadcast(&b->zb_cv);
	pthread_mutex_unlock(&b->zb_lock);
}

int
zio_batch_wait(zio_batch_t *b)
{
	pthread_mutex_lock(&b->zb_lock);
	while (b->zb_pending > 0) {
		zio_work_t *zw = zio_batch_pop(b);
		if (zw == NULL) {
			pthread_cond_wait(&b->zb_cv, &b->zb_lock);
			continue;
		}
		pthread_mutex_unlock(&b->zb_lock);
		zw->zw_fn(zw);
		pthread_mutex_lock(&b->zb_lock);
	}
	int err = b->zb_error;
	uint64_t until = b->zb_until, gen = b->zb_gen;
	pthread_mutex_unlock(&b->zb_lock);
	zio_batch_rele(b);
	vdev_inject_wait(until, gen);   /* the items' delayed I/O (vdev.h) */
	return (err);
}

/* ---- write ---- */

typedef struct zio_wjob zio_wjob_t;

typedef struct zio_wcopy {
	zio_work_t wc_work;
	zio_wjob_t *wc_job;
	int wc_index;
	int wc_error;
} zio_wcopy_t;

struct zio_wjob {
	zio_work_t wj_work;           /* stages 1-3 */
	zio_batch_t *wj_batch;
	uint64_t wj_txg;
	zio_prop_t wj_prop;
	const void *wj_data;
	uint64_t wj_lsize;
	blkptr_t *wj_bp;              /* the caller's, written at the end */
	bool wj_rewrite_ok;
	bool wj_inplace;              /* DVAs reused */
	blkptr_t wj_new;              /* the bp being built */
	void *wj_pbuf;                /* the psize bytes written */
	void *wj_cbuf;                /* compressed copy, or NULL */
	int wj_left;                  /* copies not done (atomic) */
	zio_wcopy_t wj_copy[SPA_DVAS_PER_BP];
};

static bool
zio_prop_valid(const zio_prop_t *zp, uint64_t lsize)
{
	return (lsize != 0 && lsize <= SPA_MAXBLOCKSIZE &&
	    IS_P2ALIGNED(lsize, SPA_MINBLOCKSIZE) &&
	    zp->zp_checksum >= ZIO_CHECKSUM_OFF &&
	    zp->zp_checksum < ZIO_CHECKSUM_FUNCTIONS &&
	    zp->zp_compress >= ZIO_COMPRESS_OFF &&
	    zp->zp_compress < ZIO_COMPRESS_FUNCTIONS &&
	    zp->zp_copies >= 1 && zp->zp_copies <= SPA_DVAS_PER_BP &&
	    zp->zp_type < DMU_OT_NUMTYPES && zp->zp_blevel <= BP_MAX_LEVEL &&
	    zp->zp_psize <= lsize && IS_P2ALIGNED(zp->zp_psize, SPA_MINBLOCKSIZE) &&
	    (zp->zp_psize == 0 || zp->zp_psize == lsize || zp->zp_compress != ZIO_COMPRESS_OFF));
}

/* Stages 1 and 2: compress and checksum into wj_new / wj_pbuf. */
static void
zio_write_transform(zio_wjob_t *wj)
{
	const zio_prop_t *zp = &wj->wj_prop;
	blkptr_t *bp = &wj->wj_new;
	uint64_t lsize = wj->wj_lsize, psize = lsize;
	int comp = ZIO_COMPRESS_OFF;

	wj->wj_pbuf = (void *)wj->wj_data;
	if (zp->zp_psize != 0) {
		/* already in stored form (a received -c block) */
		psize = zp->zp_psize;
		comp = psize < lsize ? zp->zp_compress : ZIO_COMPRESS_OFF;
	} else if (zp->zp_compress != ZIO_COMPRESS_OFF) {
		wj->wj_cbuf = tarn_alloc_aligned(lsize);
		psize = zio_compress(zp->zp_compress, zp->zp_level,
		    wj->wj_data, wj->wj_cbuf, lsize);
		if (psize < lsize) {
			comp = zp->zp_compress;
			wj->wj_pbuf = wj->wj_cbuf;
		} else {
			psize = lsize;
			tarn_free(wj->wj_cbuf);
			wj->wj_cbuf = NULL;
		}
	}
	BP_ZERO(bp);
	bp->bp_lsize = (uint32_t)lsize;
	bp->bp_psize = (uint32_t)psize;
	bp->bp_cksum = zp->zp_checksum;
	bp->bp_comp = (uint8_t)comp;
	bp->bp_type = zp->zp_type;
	bp->bp_level = zp->zp_blevel;
	bp->bp_ndvas = zp->zp_copies;
	bp->bp_birth = bp->bp_phys_birth = wj->wj_txg;
	bp->bp_fill = zp->zp_blevel == 0 ? 1 : wj->wj_bp->bp_fill;
	zio_checksum_compute(zp->zp_checksum, wj->wj_pbuf, psize, &bp->bp_cksum_val);
}

/*
 * May the old bp's DVAs be overwritten in place?  Only a block born in
 * this txg (never part of a committed tree) whose every DVA is at least
 * as large as the new data needs: a smaller block is written at the
 * start of the old allocation (a RAID-Z block of a smaller size uses a
 * prefix of the sectors of a larger one), which keeps its allocated size.
 * A block that got fewer copies than asked for (a nearly full pool) keeps
 * that number.  This is what makes later sync passes converge: they
 * allocate nothing.
 */
static bool
zio_write_can_reuse(zio_wjob_t *wj)
{
	const blkptr_t *old = wj->wj_bp;
	vdev_t *root = wj->wj_batch->zb_ctx->zc_root;
	if (!wj->wj_rewrite_ok || BP_IS_HOLE(old) ||
	    old->bp_phys_birth != wj->wj_txg ||
	    old->bp_ndvas == 0 || old->bp_ndvas > wj->wj_new.bp_ndvas ||
	    (old->bp_flags & BP_F_ENCRYPTED) != 0)
		return (false);
	for (int i = 0; i < old->bp_ndvas; i++) {
		const dva_t *d = &old->bp_dva[i];
		vdev_t *top = d->dva_vdev < (uint64_t)vdev_children(root) ?
		    vdev_lookup_top(root, d->dva_vdev) : NULL;
		if (top == NULL || DVA_ASIZE(d) <
		    vdev_psize_to_asize(top, wj->wj_new.bp_psize))
			return (false);
	}
	return (true);
}

static void zio_write_copy(zio_work_t *zw);
static void zio_write_done(zio_wjob_t *wj);

static void
zio_write_finish(zio_wjob_t *wj, int error)
{
	zio_batch_t *b = wj->wj_batch;
	tarn_free(wj->wj_cbuf);
	tarn_free(wj);
	zio_batch_op_done(b, error);
}

/* Stages 1-3, then the copies: the first inline, the others queued. */
static void
zio_write_start(zio_work_t *zw)
{
	zio_wjob_t *wj = (zio_wjob_t *)zw;
	zio_ctx_t *zc = wj->wj_batch->zb_ctx;

	if (!zio_prop_valid(&wj->wj_prop, wj->wj_lsize)) {
		zio_write_finish(wj, SET_ERROR(EINVAL));
		return;
	}
	zio_write_transform(wj);
	blkptr_t *bp = &wj->wj_new;
	if (zio_write_can_reuse(wj)) {
		wj->wj_inplace = true;
		bp->bp_ndvas = wj->wj_bp->bp_ndvas;
		memcpy(bp->bp_dva, wj->wj_bp->bp_dva, sizeof (bp->bp_dva));
	} else {
		metaslab_class_t *mc = zio_prop_wants_special(&wj->wj_prop, wj->wj_lsize) ?
		    zio_ctx_class_of(zc, VDEV_BIAS_SPECIAL) : NULL;
		int ndvas = bp->bp_ndvas;
		int err = zio_alloc_class(zc, mc, bp->bp_psize, &ndvas, wj->wj_txg,
		    bp->bp_dva);
		bp->bp_ndvas = (uint8_t)ndvas;
		if (err != 0) {
			zio_write_finish(wj, err);
			return;
		}
	}
	int n = bp->bp_ndvas;
	wj->wj_left = n;
	for (int i = 0; i < n; i++) {
		wj->wj_copy[i].wc_work.zw_fn = zio_write_copy;
		wj->wj_copy[i].wc_job = wj;
		wj->wj_copy[i].wc_index = i;
	}
	for (int i = 1; i < n; i++)
		zio_batch_enqueue(wj->wj_batch, &wj->wj_copy[i].wc_work);
	zio_write_copy(&wj->wj_copy[0].wc_work);
}

static void
zio_write_copy(zio_work_t *zw)
{
	zio_wcopy_t *wc = (zio_wcopy_t *)zw;
	zio_wjob_t *wj = wc->wc_job;
	zio_ctx_t *zc = wj->wj_batch->zb_ctx;
	const dva_t *d = &wj->wj_new.bp_dva[wc->wc_index];
	vdev_io_t io = {
		.vio_offset = d->dva_offset,
		.vio_size = wj->wj_new.bp_psize,
		.vio_buf = wj->wj_pbuf,
		.vio_txg = wj->wj_txg,
	};
	bool deferred = vdev_inject_defer(true);
	vdev_tree_enter_read(zc->zc_root);
	vdev_t *top = vdev_lookup_top(zc->zc_root, d->dva_vdev);
	wc->wc_error = top != NULL ? vdev_write(top, &io) : SET_ERROR(ENXIO);
	vdev_tree_exit(zc->zc_root);
	(void) vdev_inject_defer(deferred);
	zio_batch_fold(wj->wj_batch);
	if (__atomic_sub_fetch(&wj->wj_left, 1, __ATOMIC_ACQ_REL) == 0)
		zio_write_done(wj);
}

/* Stage 5, run by whichever copy finished last. */
static void
zio_write_done(zio_wjob_t *wj)
{
	zio_ctx_t *zc = wj->wj_batch->zb_ctx;
	blkptr_t *bp = &wj->wj_new;
	int good = 0;
	for (int i = 0; i < bp->bp_ndvas; i++)
		good += wj->wj_copy[i].wc_error == 0;
	if (good == 0) {
		if (!wj->wj_inplace) {
			for (int i = 0; i < bp->bp_ndvas; i++)
				metaslab_free(zc->zc_mc, &bp->bp_dva[i],
				    wj->wj_txg, wj->wj_txg);
		}
		zio_write_finish(wj, SET_ERROR(EIO));
		return;
	}
	if (!wj->wj_inplace && wj->wj_rewrite_ok &&
	    !BP_IS_HOLE(wj->wj_bp) && wj->wj_bp->bp_phys_birth == wj->wj_txg)
		zio_free(zc, wj->wj_bp, wj->wj_txg);
	*wj->wj_bp = *bp;
	ZIO_STAT_ADD(zc, zs_writes, 1);
	ZIO_STAT_ADD(zc, zs_write_bytes, bp->bp_psize * (uint64_t)good);
	zio_write_finish(wj, 0);
}

void
zio_batch_write(zio_batch_t *b, uint64_t txg, const zio_prop_t *zp,
    const void *data, uint64_t lsize, blkptr_t *bp, bool rewrite_ok)
{
	zio_wjob_t *wj = tarn_alloc(sizeof (*wj));
	wj->wj_work.zw_fn = zio_write_start;
	wj->wj_batch = b;
	wj->wj_txg = txg;
	wj->wj_prop = *zp;
	wj->wj_data = data;
	wj->wj_lsize = lsize;
	wj->wj_bp = bp;
	wj->wj_rewrite_ok = rewrite_ok;
	zio_batch_op_start(b);
	zio_batch_enqueue(b, &wj->wj_work);
}

int
zio_write(zio_ctx_t *zc, uint64_t txg, const zio_prop_t *zp,
    const void *data, uint64_t lsize, blkptr_t *bp, bool rewrite_ok)
{
	zio_batch_t *b = zio_batch_create(zc);
	zio_batch_write(b, txg, zp, data, lsize, bp, rewrite_ok);
	return (zio_batch_wait(b));
}

/* ---- read ---- */

static int
zio_read_verify(void *arg, const void *buf, uint64_t size)
{
	const blkptr_t *bp = arg;
	zio_cksum_t zc;
	if (bp->bp_cksum == ZIO_CHECKSUM_OFF)
		return (0);
	zio_checksum_compute(bp->bp_cksum, buf, size, &zc);
	return (zio_cksum_equal(&zc, &bp->bp_cksum_val) ? 0 : SET_ERROR(ECKSUM));
}

static int
zio_read_dva(zio_ctx_t *zc, const blkptr_t *bp, int i, void *buf, int vflags)
{
	const dva_t *d = &bp->bp_dva[i];
	vdev_io_t io = {
		.vio_offset = d->dva_offset,
		.vio_size = bp->bp_psize,
		.vio_buf = buf,
		.vio_flags = vflags,
		.vio_verify = zio_read_verify,
		.vio_verify_arg = (void *)bp,
		.vio_txg = bp->bp_phys_birth,
	};
	vdev_tree_enter_read(zc->zc_root);
	vdev_t *top = vdev_lookup_top(zc->zc_root, d->dva_vdev);
	int err = top != NULL ? vdev_read(top, &io) : SET_ERROR(EIO);
	vdev_tree_exit(zc->zc_root);
	if (io.vio_repaired != 0)
		ZIO_STAT_ADD(zc, zs_heal_bytes, io.vio_repaired);
	return (err == 0 || err == ECKSUM ? err : SET_ERROR(EIO));
}

int
zio_read_raw(zio_ctx_t *zc, const blkptr_t *bp, void *buf, vdev_verify_fn_t verify,
    void *arg, int flags)
{
	bool heal = !(flags & ZIO_FLAG_NOHEAL) && !zio_ctx_readonly(zc);
	vdev_io_t io = {
		.vio_offset = bp->bp_dva[0].dva_offset,
		.vio_size = bp->bp_psize,
		.vio_buf = buf,
		.vio_flags = ((flags & ZIO_FLAG_SCRUB) ? VDEV_IO_SCRUB : 0) |
		    (heal ? 0 : VDEV_IO_NOHEAL) |
		    ((flags & ZIO_FLAG_SPECULATIVE) ? VDEV_IO_PROBE : 0),
		.vio_verify = verify,
		.vio_verify_arg = arg,
		.vio_txg = bp->bp_phys_birth,
	};
	vdev_tree_enter_read(zc->zc_root);
	int err = blkptr_validate(bp, zc->zc_root) != 0 ? SET_ERROR(ECKSUM) : 0;
	vdev_t *top = err == 0 ? vdev_lookup_top(zc->zc_root, bp->bp_dva[0].dva_vdev) : NULL;
	if (err == 0)
		err = top != NULL ? vdev_read(top, &io) : SET_ERROR(EIO);
	vdev_tree_exit(zc->zc_root);
	if (io.vio_repaired != 0)
		ZIO_STAT_ADD(zc, zs_heal_bytes, io.vio_repaired);
	return (err);
}

int
zio_write_raw(zio_ctx_t *zc, const blkptr_t *bp, const void *buf)
{
	int err = 0, good = 0;
	for (int i = 0; i < bp->bp_ndvas; i++) {
		vdev_io_t io = {
			.vio_offset = bp->bp_dva[i].dva_offset,
			.vio_size = bp->bp_psize,
			.vio_buf = (void *)buf,
			.vio_txg = bp->bp_phys_birth,
		};
		vdev_tree_enter_read(zc->zc_root);
		vdev_t *top = vdev_lookup_top(zc->zc_root, bp->bp_dva[i].dva_vdev);
		int e = top != NULL ? vdev_write(top, &io) : SET_ERROR(ENXIO);
		vdev_tree_exit(zc->zc_root);
		if (e == 0)
			good++;
		else if (err == 0)
			err = e;
	}
	if (good > 0) {
		ZIO_STAT_ADD(zc, zs_writes, 1);
		ZIO_STAT_ADD(zc, zs_write_bytes, (uint64_t)bp->bp_psize * good);
	}
	return (good > 0 ? 0 : err);
}

/* Rewrite DVA i (which failed) with the verified bytes in buf. */
static void
zio_heal_dva(zio_ctx_t *zc, const blkptr_t *bp, int i, void *buf)
{
	const dva_t *d = &bp->bp_dva[i];
	vdev_io_t io = {
		.vio_offset = d->dva_offset,
		.vio_size = bp->bp_psize,
		.vio_buf = buf,
		.vio_flags = VDEV_IO_REPAIR,
		.vio_txg = bp->bp_phys_birth,
	};
	vdev_tree_enter_read(zc->zc_root);
	vdev_t *top = vdev_lookup_top(zc->zc_root, d->dva_vdev);
	int err = top != NULL ? vdev_write(top, &io) : SET_ERROR(ENXIO);
	vdev_tree_exit(zc->zc_root);
	if (err == 0) {
		ZIO_STAT_ADD(zc, zs_heal_writes, 1);
		ZIO_STAT_ADD(zc, zs_heal_bytes, bp->bp_psize);
		vdev_stat_repaired(top, bp->bp_psize);
	}
}

/*
 * Read bp's psize stored bytes into pbuf from the first DVA that
 * verifies (every DVA when scrubbing), healing the ones that failed.
 */
static int
zio_read_dvas(zio_ctx_t *zc, const blkptr_t *bp, void *pbuf, int flags)
{
	int errs[SPA_DVAS_PER_BP] = { 0 };
	int good = -1, neio = 0;
	bool scrub = (flags & ZIO_FLAG_SCRUB) != 0;
	bool heal = !(flags & ZIO_FLAG_NOHEAL) && !zio_ctx_readonly(zc);
	int vflags = (scrub ? VDEV_IO_SCRUB : 0) | (heal ? 0 : VDEV_IO_NOHEAL) |
	    ((flags & ZIO_FLAG_SPECULATIVE) ? VDEV_IO_PROBE : 0);
	void *scratch = NULL;

	for (int i = 0; i < bp->bp_ndvas; i++) {
		void *dst = pbuf;
		if (good >= 0) {
			if (scratch == NULL)
				scratch = tarn_alloc_aligned(bp->bp_psize);
			dst = scratch;
		}
		errs[i] = zio_read_dva(zc, bp, i, dst, vflags);
		neio += errs[i] == EIO;
		if (errs[i] == 0 && good < 0) {
			good = i;
			if (!scrub)
				break;
		}
	}
	tarn_free(scratch);
	if (good < 0)
		return (neio == bp->bp_ndvas ? SET_ERROR(EIO) : SET_ERROR(ECKSUM));
	for (int i = 0; heal && i < bp->bp_ndvas; i++) {
		if (errs[i] != 0)
			zio_heal_dva(zc, bp, i, pbuf);
	}
	return (0);
}

/*
 * A read failed: zero the buffer (when bp's lsize can be trusted, i.e.
 * bp passed validation) and report the block.
 */
static int
zio_read_failed(zio_ctx_t *zc, const blkptr_t *bp, void *buf, int flags,
    int err, bool bp_valid)
{
	if (bp_valid)
		memset(buf, 0, bp->bp_lsize);
	ZIO_STAT_ADD(zc, zs_read_failures, 1);
	if (!(flags & ZIO_FLAG_SPECULATIVE) && zc->zc_error_fn != NULL)
		zc->zc_error_fn(zc->zc_error_arg, bp, err);
	return (err);
}

int
zio_read(zio_ctx_t *zc, const blkptr_t *bp, void *buf, int flags)
{
	if (BP_IS_HOLE(bp) && bp->bp_lsize <= SPA_MAXBLOCKSIZE) {
		memset(buf, 0, bp->bp_lsize);
		return (0);
	}
	/*
	 * A bp that cannot be ours is as bad as a block that does not
	 * verify; its lsize may be garbage, so buf is left alone.
	 */
	vdev_tree_enter_read(zc->zc_root);
	int verr = blkptr_validate(bp, zc->zc_root);
	vdev_tree_exit(zc->zc_root);
	if (verr != 0)
		return (zio_read_failed(zc, bp, buf, flags, SET_ERROR(ECKSUM), false));
	bool compressed = bp->bp_comp != ZIO_COMPRESS_OFF && !(flags & ZIO_FLAG_STORED);
	void *pbuf = compressed ? tarn_alloc_aligned(bp->bp_psize) : buf;
	int err = zio_read_dvas(zc, bp, pbuf, flags);
	if (err == 0 && compressed && zio_decompress(bp->bp_comp, pbuf,
	    bp->bp_psize, buf, bp->bp_lsize) != 0)
		err = SET_ERROR(ECKSUM);
	if (compressed)
		tarn_free(pbuf);
	if (err != 0)
		return (zio_read_failed(zc, bp, buf, flags, err, true));
	ZIO_STAT_ADD(zc, zs_reads, 1);
	return (0);
}

int
zio_stored_form(const blkptr_t *bp, int level, const void *lbuf, void *pbuf)
{
	if (bp->bp_comp == ZIO_COMPRESS_OFF) {
		if (bp->bp_psize != bp->bp_lsize)
			return (SET_ERROR(EINVAL));
		memcpy(pbuf, lbuf, bp->bp_psize);
		return (0);
	}
	/* zio_compress writes up to lsize bytes: pbuf is only psize */
	void *c = tarn_alloc_aligned(bp->bp_lsize);
	uint64_t n = zio_compress(bp->bp_comp, level, lbuf, c, bp->bp_lsize);
	int err = n == bp->bp_psize ? 0 : SET_ERROR(EINVAL);
	if (err == 0)
		memcpy(pbuf, c, n);
	tarn_free(c);
	return (err);
}

int
zio_stored_decode(const blkptr_t *bp, const void *pbuf, void *lbuf)
{
	if (zio_read_verify((void *)bp, pbuf, bp->bp_psize) != 0)
		return (SET_ERROR(ECKSUM));
	if (bp->bp_comp == ZIO_COMPRESS_OFF) {
		if (lbuf != pbuf)
			memcpy(lbuf, pbuf, bp->bp_lsize);
		return (0);
	}
	return (zio_decompress(bp->bp_comp, pbuf, bp->bp_psize, lbuf, bp->bp_lsize) != 0 ?
	    SET_ERROR(ECKSUM) : 0);
}

typedef struct zio_rjob {
	zio_work_t rj_work;
	zio_batch_t *rj_batch;
	blkptr_t rj_bp;
	void *rj_buf;
	int rj_flags;
	int *rj_err;
} zio_rjob_t;

static void
zio_read_run(zio_work_t *zw)
{
	zio_rjob_t *rj = (zio_rjob_t *)zw;
	zio_batch_t *b = rj->rj_batch;
	bool deferred = vdev_inject_defer(true);   /* queued with the batch's others */
	int err = zio_read(b->zb_ctx, &rj->rj_bp, rj->rj_buf, rj->rj_flags);
	(void) vdev_inject_defer(deferred);
	if (rj->rj_err != NULL)
		*rj->rj_err = err;
	tarn_free(rj);
	zio_batch_op_done(b, err);
}

void
zio_batch_read(zio_batch_t *b, const blkptr_t *bp, void *buf, int flags, int *err)
{
	zio_rjob_t *rj = tarn_alloc(sizeof (*rj));
	rj->rj_work.zw_fn = zio_read_run;
	rj->rj_batch = b;
	rj->rj_bp = *bp;
	rj->rj_buf = buf;
	rj->rj_flags = flags;
	rj->rj_err = err;
	zio_batch_op_start(b);
	zio_batch_enqueue(b, &rj->rj_work);
}

/* ---- free and flush ---- */

void
zio_free(zio_ctx_t *zc, const blkptr_t *bp, uint64_t txg)
{
	if (BP_IS_HOLE(bp))
		return;
	for (int i = 0; i < bp->bp_ndvas && i < SPA_DVAS_PER_BP; i++) {
		if (DVA_IS_VALID(&bp->bp_dva[i]))
			metaslab_free(zc->zc_mc, &bp->bp_dva[i], bp->bp_phys_birth, txg);
	}
}

int
zio_flush(zio_ctx_t *zc)
{
	vdev_tree_enter_read(zc->zc_root);
	int err = vdev_flush(zc->zc_root);
	vdev_tree_exit(zc->zc_root);
	return (err);
}
