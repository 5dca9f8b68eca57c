/*
 * txg.c — transaction groups, the sync thread, transactions and the
 * dirty-data throttle.
 *
 * Theory.  Every change belongs to a transaction group (txg).  At any
 * moment one txg is OPEN: dmu_tx_assign() joins it and takes a hold,
 * dmu_tx_commit() drops the hold.  The sync thread closes the open txg
 * (QUIESCING: it waits until the closed one has no holds left), then
 * SYNCS it by calling the pool layer's sync function, which writes every
 * block dirtied in that txg and finally the uberblock.  Writers keep
 * filling the next txg while one syncs, so at most two txgs have unsynced
 * changes at a time: the one syncing and the open one.
 *
 * While a txg quiesces, new transactions wait for it (the next txg is
 * numbered but nobody joins it yet).  So no tx of txg N+1 changes a block
 * before a tx of N that is still running: if one could, and the older tx
 * then changed that block too, its change would have to go to the newer
 * txg's copy (the one readers see) and txg N on disk would hold the rest
 * of its transaction without it — half a transaction after a crash, a
 * directory entry without its inode (DESIGN.md invariant 9).  Quiescing
 * lasts as long as the longest running tx (one file operation), so the
 * wait is short.  A
 * thread that already holds a tx of the quiescing txg and assigns another
 * joins that txg instead of waiting for itself; it is not throttled
 * either (each thread's holds are counted, dmu_tx_mine).  A txg is synced when its
 * dirty data passes a sixteenth of the limit (32 MiB by default), when it
 * has been open for the timeout, or when somebody waits for it
 * (txg_wait_synced); and, on a pool that met ENOSPC in the last 30 s,
 * 150 ms after a tx that frees joined it (so that a delete makes room at
 * once), while empty txgs every 150 ms let deferred frees mature on an
 * idle pool (txg_frees_maturing: frees are usable only TXG_DEFER_SIZE
 * txgs after their own).  The trigger is low so that a stream keeps the sync
 * thread busy from its first megabytes on, in parallel with the writers,
 * and an fsync at its end finds little left to write; it only matters
 * while the sync thread is idle: when writers outrun it, each txg grows
 * with what arrives while the one before syncs, so the fixed cost of a
 * txg (metadata, space maps, uberblocks, flushes) stays a small share.
 * A txg is synced, too, when the space estimates of its txs reach a
 * quarter of the free space seen at the last space check
 * (txg_space_due): the estimates are worst cases (a 4 KiB write may
 * reserve a megabyte for indirect blocks), and on a small pool a stream
 * of small writes would otherwise make every writer wait for a sync
 * long before the pool is full.
 *
 * The write throttle: dirty bytes of all unsynced txgs are counted.  Above
 * 60% of dpo_dirty_max each new tx is delayed, the delay growing smoothly
 * towards the limit (delay = 50us * (dirty - 60%) / (max - dirty), at most
 * 100 ms); at the limit, writers wait until a sync brings it down.  So a
 * fast writer settles at the rate the devices take, without stalls.
 *
 * A sync that fails suspends the pool: every later tx fails with EIO and
 * nothing more is written, so that what is on disk stays a committed txg
 * (DESIGN.md invariant 8).
 */
#include "dmu_impl.h"

#include <time.h>

#define TXG_DIRTY_MAX_DEFAULT (512 * MiB)
#define TXG_DIRTY_SYNC_DIV   16      /* sync when max/16 was written in the open txg */
#define TXG_DIRTY_RECORD_DIV 2       /* or when its dirty records take max/2 */
#define TXG_DELAY_MIN_PCT    60
#define TXG_DELAY_BASE_NS    50000ULL
#define TXG_DELAY_MAX_NS     100000000ULL
#define TXG_DEFER_SYNC_NS    150000000ULL    /* an empty txg for maturing frees */
#define TXG_DEFER_SYNCS      4               /* at most this many in a row */
#define TXG_SHORT_NS         30000000000ULL  /* "short of space": ENOSPC this recently */
#define DMU_DATA_SHIFT       17              /* dmu_tx_hold_write's windows */
#define DMU_SHARED_SHIFT     19
#define DMU_SHARED_SLOTS     4096
#define TXG_SPACE_SYNC_DIV   4               /* sync when the open txg's estimates
                                                reach this part of the free space */

static void *txg_sync_thread(void *arg);

static uint32_t dmu_pools_open;         /* atomic: pools of this process */

dmu_pool_t *
dmu_pool_create(zio_ctx_t *zc, uint64_t last_synced_txg, const dmu_pool_opts_t *opts,
    dmu_pool_sync_fn_t sync_fn, dmu_pool_space_fn_t space_fn, void *arg)
{
	dmu_pool_t *dp = tarn_alloc(sizeof (*dp));
	dp->dp_zio = zc;
	if (opts != NULL)
		dp->dp_opts = *opts;
	if (dp->dp_opts.dpo_dirty_max == 0)
		dp->dp_opts.dpo_dirty_max = TXG_DIRTY_MAX_DEFAULT;
	if (dp->dp_opts.dpo_cache_max == 0)
		dp->dp_opts.dpo_cache_max = 1 * GiB;
	dp->dp_arc = dp->dp_opts.dpo_arc;
	if (dp->dp_arc == NULL) {
		dp->dp_arc = arc_create(arc_default_min(dp->dp_opts.dpo_cache_max),
		    dp->dp_opts.dpo_cache_max);
		dp->dp_arc_own = true;
	}
	if (dp->dp_opts.dpo_txg_timeout_ms == 0)
		dp->dp_opts.dpo_txg_timeout_ms = 5000;
	dp->dp_sync_fn = sync_fn;
	dp->dp_space_fn = space_fn;
	dp->dp_arg = arg;
	pthread_mutex_init(&dp->dp_lock, NULL);
	pthread_cond_init(&dp->dp_sync_cv, NULL);
	pthread_cond_init(&dp->dp_synced_cv, NULL);
	pthread_cond_init(&dp->dp_quiesce_cv, NULL);
	pthread_cond_init(&dp->dp_dirty_cv, NULL);
	pthread_cond_init(&dp->dp_open_cv, NULL);
	dp->dp_synced_txg = last_synced_txg;
	dp->dp_open_txg = last_synced_txg + 1;
	dp->dp_open_time = tarn_now_ns();
	dp->dp_stats.dps_dirty_max = dp->dp_opts.dpo_dirty_max;
	__atomic_add_fetch(&dmu_pools_open, 1, __ATOMIC_RELAXED);
	return (dp);
}

void
dmu_pool_start(dmu_pool_t *dp)
{
	tarn_mutex_lock(&dp->dp_lock, TXG);
	VERIFY(!dp->dp_running);
	dp->dp_running = true;
	tarn_mutex_unlock(&dp->dp_lock);
	VERIFY0(tarn_thread_create(&dp->dp_thread, NULL, txg_sync_thread, dp));
}

void
dmu_pool_stop(dmu_pool_t *dp, bool sync)
{
	tarn_mutex_lock(&dp->dp_lock, TXG);
	bool running = dp->dp_running;
	tarn_mutex_unlock(&dp->dp_lock);
	if (!running)
		return;
	if (sync && !dmu_pool_suspended(dp))
		(void) txg_wait_synced(dp, 0);
	tarn_mutex_lock(&dp->dp_lock, TXG);
	dp->dp_exit = true;
	pthread_cond_broadcast(&dp->dp_sync_cv);
	tarn_mutex_unlock(&dp->dp_lock);
	pthread_join(dp->dp_thread, NULL);
	tarn_mutex_lock(&dp->dp_lock, TXG);
	dp->dp_running = false;
	/* wake anyone still waiting: nothing more will sync */
	dp->dp_suspended = dp->dp_suspended || sync == false;
	pthread_cond_broadcast(&dp->dp_synced_cv);
	pthread_cond_broadcast(&dp->dp_dirty_cv);
	pthread_cond_broadcast(&dp->dp_open_cv);
	tarn_mutex_unlock(&dp->dp_lock);
}

void
dmu_pool_destroy(dmu_pool_t *dp, bool sync)
{
	dmu_pool_stop(dp, sync);
	VERIFY3P(dp->dp_objsets, ==, NULL);
	pthread_mutex_destroy(&dp->dp_lock);
	pthread_cond_destroy(&dp->dp_sync_cv);
	pthread_cond_destroy(&dp->dp_synced_cv);
	pthread_cond_destroy(&dp->dp_quiesce_cv);
	pthread_cond_destroy(&dp->dp_dirty_cv);
	pthread_cond_destroy(&dp->dp_open_cv);
	if (dp->dp_arc_own)
		arc_destroy(dp->dp_arc);
	for (int i = 0; i < TXG_SIZE; i++)
		tarn_free(dp->dp_shared_seen[i]);
	tarn_free(dp);
	/* the last pool closed (an export): its cache's memory goes back */
	if (__atomic_sub_fetch(&dmu_pools_open, 1, __ATOMIC_RELAXED) == 0)
		dmu_buf_release();
}

zio_ctx_t *
dmu_pool_zio(dmu_pool_t *dp)
{
	return (dp->dp_zio);
}

void
dmu_pool_set_synced_cb(dmu_pool_t *dp, void (*fn)(void *, uint64_t), void *arg)
{
	tarn_mutex_lock(&dp->dp_lock, TXG);
	dp->dp_synced_cb = fn;
	dp->dp_synced_arg = arg;
	tarn_mutex_unlock(&dp->dp_lock);
}

void
dmu_pool_set_dirty_max(dmu_pool_t *dp, uint64_t bytes)
{
	tarn_mutex_lock(&dp->dp_lock, TXG);
	__atomic_store_n(&dp->dp_opts.dpo_dirty_max, bytes ? bytes : TXG_DIRTY_MAX_DEFAULT,
	    __ATOMIC_RELAXED);
	dp->dp_stats.dps_dirty_max = dp->dp_opts.dpo_dirty_max;
	pthread_cond_broadcast(&dp->dp_dirty_cv);       /* a higher limit lets writers on */
	pthread_cond_signal(&dp->dp_sync_cv);           /* a lower one may want a sync */
	tarn_mutex_unlock(&dp->dp_lock);
}

void
dmu_pool_set_error_cb(dmu_pool_t *dp, dmu_error_fn_t fn, void *arg)
{
	tarn_mutex_lock(&dp->dp_lock, TXG);
	dp->dp_error_cb = fn;
	dp->dp_error_arg = arg;
	tarn_mutex_unlock(&dp->dp_lock);
}

void
dmu_pool_report_error(dmu_pool_t *dp, objset_t *os, uint64_t obj, uint8_t level,
    uint64_t blkid, int error)
{
	tarn_mutex_lock(&dp->dp_lock, TXG);
	dmu_error_fn_t fn = dp->dp_error_cb;
	void *arg = dp->dp_error_arg;
	tarn_mutex_unlock(&dp->dp_lock);
	if (fn != NULL)
		fn(arg, os, obj, level, blkid, error);
}

bool
dmu_pool_suspended(dmu_pool_t *dp)
{
	tarn_mutex_lock(&dp->dp_lock, TXG);
	bool s = dp->dp_suspended;
	tarn_mutex_unlock(&dp->dp_lock);
	return (s);
}

int
dmu_pool_sync_error(dmu_pool_t *dp)
{
	tarn_mutex_lock(&dp->dp_lock, TXG);
	int e = dp->dp_suspended ? (dp->dp_sync_error != 0 ? dp->dp_sync_error : EIO) : 0;
	tarn_mutex_unlock(&dp->dp_lock);
	return (e);
}

void
dmu_pool_stats(dmu_pool_t *dp, dmu_pool_stats_t *out)
{
	tarn_mutex_lock(&dp->dp_lock, TXG);
	*out = dp->dp_stats;
	out->dps_dirty = dp->dp_dirty_total;
	tarn_mutex_unlock(&dp->dp_lock);
	arc_stats_t as;
	arc_stats(dp->dp_arc, &as);
	out->dps_cache_bytes = as.as_size;
}

arc_t *
dmu_pool_arc(dmu_pool_t *dp)
{
	return (dp->dp_arc);
}

void
dmu_pool_set_l2arc(dmu_pool_t *dp, l2arc_t *l2)
{
	__atomic_store_n(&dp->dp_l2arc, l2, __ATOMIC_RELEASE);
}

l2arc_t *
dmu_pool_l2arc(dmu_pool_t *dp)
{
	return (__atomic_load_n(&dp->dp_l2arc, __ATOMIC_ACQUIRE));
}

/* Did a tx or a space check meet ENOSPC in the last 30 s? (dp_lock held) */
static bool
txg_short_of_space(dmu_pool_t *dp, uint64_t now)
{
	return (dp->dp_enospc_ns != 0 && now - dp->dp_enospc_ns < TXG_SHORT_NS);
}

void
txg_frees_maturing(dmu_pool_t *dp, bool maturing, bool arm)
{
	tarn_mutex_lock(&dp->dp_lock, TXG);
	uint64_t txg = __atomic_load_n(&dp->dp_syncing_txg, __ATOMIC_ACQUIRE);
	bool empty = txg != 0 && dp->dp_dirty[TXG_IDX(txg)] == 0;
	/*
	 * A txg with changes re-arms the count; an empty one only uses it up,
	 * so that its own metadata frees cannot keep empty txgs going forever.
	 */
	if (!maturing)
		dp->dp_defer_syncs = 0;
	else if (!empty && (arm || txg_short_of_space(dp, tarn_now_ns())))
		dp->dp_defer_syncs = TXG_DEFER_SYNCS;
	else if (dp->dp_defer_syncs > 0)
		dp->dp_defer_syncs--;
	tarn_mutex_unlock(&dp->dp_lock);
}

/* Account dirty bytes to txg (called when a dirty record is created). */
void
dmu_pool_dirty_add(dmu_pool_t *dp, uint64_t txg, uint64_t bytes)
{
	tarn_mutex_lock(&dp->dp_lock, TXG);
	dp->dp_dirty[TXG_IDX(txg)] += bytes;
	dp->dp_dirty_total += bytes;
	if (txg == dp->dp_open_txg &&
	    dp->dp_dirty[TXG_IDX(txg)] >= dp->dp_opts.dpo_dirty_max / TXG_DIRTY_RECORD_DIV)
		pthread_cond_signal(&dp->dp_sync_cv);
	tarn_mutex_unlock(&dp->dp_lock);
}

/* Account bytes written into txg (dmu_write's length: what the writers sent). */
void
dmu_pool_written_add(dmu_pool_t *dp, uint64_t txg, uint64_t bytes)
{
	uint64_t trigger = __atomic_load_n(&dp->dp_opts.dpo_dirty_max, __ATOMIC_RELAXED) /
	    TXG_DIRTY_SYNC_DIV;
	uint64_t now = __atomic_add_fetch(&dp->dp_written[TXG_IDX(txg)], bytes,
	    __ATOMIC_RELAXED);
	if (now >= trigger && now - bytes < trigger) {
		tarn_mutex_lock(&dp->dp_lock, TXG);
		if (txg == dp->dp_open_txg)
			pthread_cond_signal(&dp->dp_sync_cv);
		tarn_mutex_unlock(&dp->dp_lock);
	}
}

/*
 * The open txg's space estimates (worst cases: a 4 KiB write may reserve
 * a megabyte for the indirect blocks it could dirty) have reached a
 * quarter of the free space (dp_lock held).  Left open until its
 * timeout, such a txg would soon make every tx wait for a sync in
 * dmu_space_wait_locked (estimates of unsynced txgs beyond the free
 * space) though the pool is far from full; synced now, in the
 * background, its estimates are gone before they add up.
 */
static bool
txg_space_due(dmu_pool_t *dp)
{
	return (dp->dp_avail_seen != 0 && dp->dp_space_pending[TXG_IDX(dp->dp_open_txg)] >=
	    dp->dp_avail_seen / TXG_SPACE_SYNC_DIV);
}

static bool
txg_should_sync(dmu_pool_t *dp, uint64_t now)
{
	uint64_t open = dp->dp_open_txg;
	uint64_t dirty = dp->dp_dirty[TXG_IDX(open)];
	uint64_t written = __atomic_load_n(&dp->dp_written[TXG_IDX(open)], __ATOMIC_RELAXED);
	if (dp->dp_kick || dp->dp_wait_txg >= open)
		return (true);
	if (written >= dp->dp_opts.dpo_dirty_max / TXG_DIRTY_SYNC_DIV ||
	    dirty >= dp->dp_opts.dpo_dirty_max / TXG_DIRTY_RECORD_DIV)
		return (true);
	if (dirty > 0 && now - dp->dp_open_time >=
	    dp->dp_opts.dpo_txg_timeout_ms * 1000000ULL)
		return (true);
	/*
	 * Frees on a pool that said ENOSPC lately: sync them soon, so that a
	 * delete on a full pool makes room in a second, not at the timeout.
	 */
	if (dp->dp_frees_txg == open && dirty > 0 && txg_short_of_space(dp, now) &&
	    now - dp->dp_open_time >= TXG_DEFER_SYNC_NS)
		return (true);
	/* Frees of an idle pool mature only as (empty) txgs go by. */
	if (dp->dp_defer_syncs > 0 && dirty == 0 && now - dp->dp_open_time >= TXG_DEFER_SYNC_NS)
		return (true);
	/* Writers blocked on the limit need a sync even for little data. */
	if (dirty > 0 && dp->dp_dirty_total >= dp->dp_opts.dpo_dirty_max)
		return (true);
	if (dirty > 0 && txg_space_due(dp))
		return (true);
	return (false);
}

static void
txg_timedwait(dmu_pool_t *dp, uint64_t ns)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t t = (uint64_t)ts.tv_nsec + ns;
	ts.tv_sec += t / 1000000000ULL;
	ts.tv_nsec = t % 1000000000ULL;
	pthread_cond_timedwait(&dp->dp_sync_cv, &dp->dp_lock, &ts);
}

static void *
txg_sync_thread(void *arg)
{
	dmu_pool_t *dp = arg;
	tarn_mutex_lock(&dp->dp_lock, TXG);
	for (;;) {
		uint64_t now = tarn_now_ns();
		while (!dp->dp_exit && !dp->dp_suspended && !txg_should_sync(dp, now)) {
			txg_timedwait(dp, 100 * 1000000ULL);
			now = tarn_now_ns();
			/* between syncs: what the cache freed goes back (rate-limited) */
			tarn_mutex_unlock(&dp->dp_lock);
			tarn_mem_trim();
			tarn_mutex_lock(&dp->dp_lock, TXG);
		}
		if (dp->dp_suspended || (dp->dp_exit &&
		    dp->dp_dirty[TXG_IDX(dp->dp_open_txg)] == 0 &&
		    dp->dp_wait_txg < dp->dp_open_txg))
			break;
		/* Quiesce: close the open txg and wait for its holds. */
		uint64_t txg = dp->dp_open_txg;
		dp->dp_open_txg = txg + 1;
		dp->dp_kick = false;
		dp->dp_quiescing_txg = txg;
		while (dp->dp_holds[TXG_IDX(txg)] > 0)
			pthread_cond_wait(&dp->dp_quiesce_cv, &dp->dp_lock);
		dp->dp_quiescing_txg = 0;
		dp->dp_open_time = tarn_now_ns();
		pthread_cond_broadcast(&dp->dp_open_cv);
		__atomic_store_n(&dp->dp_syncing_txg, txg, __ATOMIC_RELEASE);
		tarn_mutex_unlock(&dp->dp_lock);

		uint64_t t0 = tarn_now_ns();
		int err = dp->dp_sync_fn(dp->dp_arg, txg);
		tarn_dprintf("txg %" PRIu64 ": synced %" PRIu64 " dirty bytes in %" PRIu64 " ms\n",
		    txg, dp->dp_dirty[TXG_IDX(txg)], (tarn_now_ns() - t0) / 1000000);

		tarn_mutex_lock(&dp->dp_lock, TXG);
		__atomic_store_n(&dp->dp_syncing_txg, 0, __ATOMIC_RELEASE);
		if (err != 0) {
			/* always said (the daemon's log): every write fails from here on */
			fprintf(stderr, "txg %" PRIu64 " sync failed: %s; pool suspended\n",
			    txg, tarn_strerror(err));
			dp->dp_suspended = true;
			dp->dp_sync_error = err;
			pthread_cond_broadcast(&dp->dp_synced_cv);
			pthread_cond_broadcast(&dp->dp_dirty_cv);
			pthread_cond_broadcast(&dp->dp_open_cv);
			break;
		}
		dp->dp_synced_txg = txg;
		dp->dp_dirty_total -= dp->dp_dirty[TXG_IDX(txg)];
		dp->dp_dirty[TXG_IDX(txg)] = 0;
		__atomic_store_n(&dp->dp_written[TXG_IDX(txg)], 0, __ATOMIC_RELAXED);
		dp->dp_space_pending[TXG_IDX(txg)] = 0;
		if (dp->dp_shared_seen[TXG_IDX(txg)] != NULL)
			memset(dp->dp_shared_seen[TXG_IDX(txg)], 0,
			    DMU_SHARED_SLOTS * sizeof (uint64_t));
		dp->dp_stats.dps_txgs_synced++;
		pthread_cond_broadcast(&dp->dp_synced_cv);
		pthread_cond_broadcast(&dp->dp_dirty_cv);
		void (*cb)(void *, uint64_t) = dp->dp_synced_cb;
		void *cbarg = dp->dp_synced_arg;
		if (cb != NULL) {
			tarn_mutex_unlock(&dp->dp_lock);
			cb(cbarg, txg);
			tarn_mutex_lock(&dp->dp_lock, TXG);
		}
	}
	/* the thread ends here; dmu_pool_destroy joins it */
	tarn_mutex_unlock(&dp->dp_lock);
	return (NULL);
}

int
txg_wait_synced(dmu_pool_t *dp, uint64_t txg)
{
	int err = 0;
	tarn_mutex_lock(&dp->dp_lock, TXG);
	if (txg == 0)
		txg = dp->dp_open_txg;
	if (!dp->dp_running) {
		tarn_mutex_unlock(&dp->dp_lock);
		return (dp->dp_synced_txg >= txg ? 0 : SET_ERROR(EROFS));
	}
	if (txg > dp->dp_wait_txg)
		dp->dp_wait_txg = txg;
	pthread_cond_broadcast(&dp->dp_sync_cv);
	while (dp->dp_synced_txg < txg && !dp->dp_suspended)
		pthread_cond_wait(&dp->dp_synced_cv, &dp->dp_lock);
	if (dp->dp_synced_txg < txg)
		err = SET_ERROR(EIO);
	tarn_mutex_unlock(&dp->dp_lock);
	return (err);
}

void
txg_kick(dmu_pool_t *dp)
{
	tarn_mutex_lock(&dp->dp_lock, TXG);
	dp->dp_kick = true;
	pthread_cond_broadcast(&dp->dp_sync_cv);
	tarn_mutex_unlock(&dp->dp_lock);
}

uint64_t
txg_last_synced(dmu_pool_t *dp)
{
	tarn_mutex_lock(&dp->dp_lock, TXG);
	uint64_t t = dp->dp_synced_txg;
	tarn_mutex_unlock(&dp->dp_lock);
	return (t);
}

uint64_t
txg_open_txg(dmu_pool_t *dp)
{
	tarn_mutex_lock(&dp->dp_lock, TXG);
	uint64_t t = dp->dp_open_txg;
	tarn_mutex_unlock(&dp->dp_lock);
	return (t);
}

/* ---- transactions ---- */

dmu_tx_t *
dmu_tx_create(objset_t *os)
{
	dmu_tx_t *tx = tarn_alloc(sizeof (*tx));
	tx->tx_os = os;
	return (tx);
}

dmu_tx_t *
dmu_tx_create_syncing(objset_t *os, uint64_t txg)
{
	dmu_tx_t *tx = dmu_tx_create(os);
	tx->tx_txg = txg;
	tx->tx_syncing = true;
	tx->tx_assigned = true;
	return (tx);
}

/*
 * Txs of one txg that write the same object within one aligned window
 * share space: within a DMU_DATA_SHIFT (128 KiB) window, the data span
 * the first one reserved (its records, rounded out to 128 KiB, cover
 * every record of the window for records up to 128 KiB); within a
 * DMU_SHARED_SHIFT (512 KiB) window, their indirect blocks (one maps at
 * least 1024 blocks of at least 512 bytes) and the object's dnode block.
 * So only the first tx of a txg to write a window reserves its share,
 * and on a small pool a stream of small writes no longer sums worst
 * cases of a megabyte each past the free space.  The windows a txg has
 * charged are kept in a direct-mapped table (a window pushed out is
 * charged again: more reserved, never less).
 */
static uint64_t
dmu_shared_key(const objset_t *os, uint64_t obj, uint64_t window, int kind)
{
	uint64_t k = (uint64_t)(uintptr_t)os * 0x9E3779B97F4A7C15ULL;
	k ^= (obj + 0x632BE59BD9B4E019ULL) * 0xBF58476D1CE4E5B9ULL;
	k ^= (window * 2 + (uint64_t)kind + 1) * 0x94D049BB133111EBULL;
	k ^= k >> 31;
	return (k != 0 ? k : 1);
}

/* The part of tx_space this tx must add to txg's estimates (dp_lock held). */
static uint64_t
dmu_tx_space_charge(dmu_pool_t *dp, dmu_tx_t *tx)
{
	uint64_t charge = tx->tx_space;
	for (int i = 0; i < 2; i++) {
		if (tx->tx_shared_key[i] == 0)
			continue;
		uint64_t **tab = &dp->dp_shared_seen[TXG_IDX(tx->tx_txg)];
		if (*tab == NULL)
			*tab = tarn_alloc(DMU_SHARED_SLOTS * sizeof (uint64_t));
		uint64_t *slot = &(*tab)[tx->tx_shared_key[i] % DMU_SHARED_SLOTS];
		if (*slot == tx->tx_shared_key[i])
			charge -= tx->tx_shared[i];
		else
			*slot = tx->tx_shared_key[i];
	}
	return (charge);
}

void
dmu_tx_hold_write(dmu_tx_t *tx, uint64_t obj, uint64_t off, uint64_t len)
{
	/*
	 * A worst case that stays cheap to compute: every record touched
	 * (rounded out to the largest usual record), in all its copies, plus
	 * a quarter for indirect blocks of small-block objects, plus one
	 * changed indirect block per level in two copies, plus the dnode block.
	 */
	uint64_t copies = tx->tx_os->os_props.osp_copies ? tx->tx_os->os_props.osp_copies : 1;
	uint64_t rec = SPA_OLD_MAXBLOCKSIZE;
	uint64_t span = len == 0 ? 0 : P2ROUNDUP(off + len, rec) - P2ALIGN(off, rec);
	uint64_t data = span * copies + span / 4;
	uint64_t shared = 2 * 3 * (1ULL << DN_INDIRECT_SHIFT) + 2 * DNODE_BLOCK_SIZE;
	tx->tx_space += data + shared;
	/* the tx's only write, within one window of each kind: may share */
	bool one = !tx->tx_writes && len > 0 && span == rec &&
	    (off >> DMU_SHARED_SHIFT) == ((off + len - 1) >> DMU_SHARED_SHIFT);
	tx->tx_shared_key[0] = one ? dmu_shared_key(tx->tx_os, obj, off >> DMU_DATA_SHIFT, 0) : 0;
	tx->tx_shared_key[1] = one ? dmu_shared_key(tx->tx_os, obj, off >> DMU_SHARED_SHIFT, 1) : 0;
	tx->tx_shared[0] = one ? data : 0;
	tx->tx_shared[1] = one ? shared : 0;
	tx->tx_writes = true;
}

void
dmu_tx_hold_free(dmu_tx_t *tx, uint64_t obj, uint64_t off, uint64_t len)
{
	tx->tx_space += 2 * DNODE_BLOCK_SIZE;
}

void
dmu_tx_hold_bonus(dmu_tx_t *tx, uint64_t obj)
{
	tx->tx_space += DNODE_BLOCK_SIZE;
}

void
dmu_tx_hold_space(dmu_tx_t *tx, uint64_t bytes)
{
	tx->tx_space += bytes;
}

void
dmu_objset_replaying(objset_t *os, bool on)
{
	__atomic_store_n(&os->os_replaying, on, __ATOMIC_RELAXED);
}

void
dmu_tx_mark_netfree(dmu_tx_t *tx)
{
	tx->tx_netfree = true;
}

uint64_t
dmu_tx_get_txg(const dmu_tx_t *tx)
{
	ASSERT(tx->tx_assigned);
	return (tx->tx_txg);
}

/* Sleep for the throttle delay appropriate to the dirty level (no lock held). */
static void
dmu_tx_delay(uint64_t dirty, uint64_t max)
{
	uint64_t min = max * TXG_DELAY_MIN_PCT / 100;
	if (dirty <= min)
		return;
	uint64_t ns = dirty >= max ? TXG_DELAY_MAX_NS :
	    TXG_DELAY_BASE_NS * (dirty - min) / (max - dirty);
	if (ns > TXG_DELAY_MAX_NS)
		ns = TXG_DELAY_MAX_NS;
	struct timespec ts = { .tv_sec = ns / 1000000000ULL, .tv_nsec = ns % 1000000000ULL };
	nanosleep(&ts, NULL);
}

/*
 * The txs a thread holds (of one pool at a time: a thread holding txs of
 * two pools counts only the first's), so that a second assign while the
 * first's txg quiesces joins that txg instead of waiting for itself.
 */
struct dmu_tx_mine {
	dmu_pool_t *tm_dp;
	uint64_t    tm_txg;
	uint32_t    tm_n;
};
static __thread struct dmu_tx_mine dmu_tx_mine;

/* The txg this thread already holds in dp (dp_lock held), else 0. */
static uint64_t
dmu_tx_mine_txg(dmu_pool_t *dp)
{
	struct dmu_tx_mine *m = &dmu_tx_mine;
	if (m->tm_n == 0 || m->tm_dp != dp)
		return (0);
	/* a hold of this thread keeps its txg open or quiescing */
	VERIFY(m->tm_txg == dp->dp_open_txg || m->tm_txg == dp->dp_quiescing_txg);
	VERIFY3U(dp->dp_holds[TXG_IDX(m->tm_txg)], >, 0);
	return (m->tm_txg);
}

/* Space estimates of the txgs not yet synced (dp_lock held). */
static uint64_t
dmu_space_pending_locked(dmu_pool_t *dp)
{
	uint64_t pending = 0;
	for (int i = 0; i < TXG_SIZE; i++)
		pending += dp->dp_space_pending[i];
	return (pending);
}

/*
 * Would `space` more bytes fit, leaving `keep` free, beside what unsynced
 * txgs may still take?  Called with dp_lock held, which it may drop and
 * retake.  A tx that frees may dip into half of the reserve (so a full
 * pool can delete), never into all of it (the pool layer's space_fn).
 * Frees pending in syncing txgs may make room, and the estimates of
 * unsynced txs are worst cases (many small ops from several threads can
 * reserve more than a small pool holds): let those txgs land, a few times
 * while the space would fit once nothing else is pending, before ENOSPC.
 * A thread holding a tx (mine) cannot wait for a sync.
 */
static int
dmu_space_wait_locked(dmu_pool_t *dp, uint64_t space, uint64_t keep, bool netfree, bool mine)
{
	if (dp->dp_space_fn == NULL)
		return (0);
	uint64_t pending = dmu_space_pending_locked(dp);
	uint64_t avail = dp->dp_space_fn(dp->dp_arg, netfree);
	dp->dp_avail_seen = avail;
	for (int tries = 0; space + keep + pending > avail; tries++) {
		if (pending == 0 || tries == 8 || (tries > 0 && space + keep > avail) || mine) {
			dp->dp_enospc_ns = tarn_now_ns();
			return (SET_ERROR(ENOSPC));
		}
		tarn_mutex_unlock(&dp->dp_lock);
		(void) txg_wait_synced(dp, 0);
		tarn_mutex_lock(&dp->dp_lock, TXG);
		avail = dp->dp_space_fn(dp->dp_arg, netfree);
		pending = dmu_space_pending_locked(dp);
	}
	return (0);
}

int
dmu_pool_space_wait(dmu_pool_t *dp, uint64_t space, uint64_t keep)
{
	tarn_mutex_lock(&dp->dp_lock, TXG);
	int err = dp->dp_suspended ? SET_ERROR(EIO) :
	    dmu_space_wait_locked(dp, space, keep, false, dmu_tx_mine_txg(dp) != 0);
	tarn_mutex_unlock(&dp->dp_lock);
	return (err);
}

void
dmu_pool_note_enospc(dmu_pool_t *dp)
{
	tarn_mutex_lock(&dp->dp_lock, TXG);
	dp->dp_enospc_ns = tarn_now_ns();
	tarn_mutex_unlock(&dp->dp_lock);
}

uint64_t
dmu_pool_space_pending(dmu_pool_t *dp)
{
	tarn_mutex_lock(&dp->dp_lock, TXG);
	uint64_t pending = dmu_space_pending_locked(dp);
	tarn_mutex_unlock(&dp->dp_lock);
	return (pending);
}

int
dmu_tx_assign(dmu_tx_t *tx, int how)
{
	dmu_pool_t *dp = tx->tx_os->os_dp;
	VERIFY(!tx->tx_assigned);
	tarn_mutex_lock(&dp->dp_lock, TXG);
	if (!dp->dp_running) {
		tarn_mutex_unlock(&dp->dp_lock);
		return (SET_ERROR(EROFS));
	}
	uint64_t mine = dmu_tx_mine_txg(dp);
	if (mine != 0)
		how = TXG_NOTHROTTLE;   /* waiting would wait for ourselves */
	/* The limit: wait (or give up) until a sync brings dirty data down. */
	while (dp->dp_dirty_total >= dp->dp_opts.dpo_dirty_max && !dp->dp_suspended &&
	    how != TXG_NOTHROTTLE) {
		if (how == TXG_NOWAIT) {
			tarn_mutex_unlock(&dp->dp_lock);
			return (SET_ERROR(ERESTART));
		}
		dp->dp_stats.dps_waits++;
		pthread_cond_signal(&dp->dp_sync_cv);
		pthread_cond_wait(&dp->dp_dirty_cv, &dp->dp_lock);
	}
	if (dp->dp_suspended) {
		tarn_mutex_unlock(&dp->dp_lock);
		return (SET_ERROR(EIO));
	}
	uint64_t dirty = dp->dp_dirty_total, max = dp->dp_opts.dpo_dirty_max;
	if (how == TXG_WAIT && dirty > max * TXG_DELAY_MIN_PCT / 100) {
		dp->dp_stats.dps_delays++;
		tarn_mutex_unlock(&dp->dp_lock);
		dmu_tx_delay(dirty, max);
		tarn_mutex_lock(&dp->dp_lock, TXG);
		if (dp->dp_suspended) {
			tarn_mutex_unlock(&dp->dp_lock);
			return (SET_ERROR(EIO));
		}
	}
	/* Space: what is free, less what unsynced txgs may still take. */
	bool netfree = tx->tx_netfree ||
	    __atomic_load_n(&tx->tx_os->os_replaying, __ATOMIC_RELAXED);
	if (tx->tx_space > 0 &&
	    dmu_space_wait_locked(dp, tx->tx_space, 0, netfree, mine != 0) != 0) {
		tarn_mutex_unlock(&dp->dp_lock);
		return (SET_ERROR(ENOSPC));
	}
	/* A closing txg: wait until its holds are gone (theory above). */
	if (mine == 0 && dp->dp_quiescing_txg != 0 && !dp->dp_suspended) {
		dp->dp_stats.dps_quiesce_waits++;
		while (dp->dp_quiescing_txg != 0 && !dp->dp_suspended)
			pthread_cond_wait(&dp->dp_open_cv, &dp->dp_lock);
	}
	if (dp->dp_suspended) {
		tarn_mutex_unlock(&dp->dp_lock);
		return (SET_ERROR(EIO));
	}
	tx->tx_txg = mine != 0 ? mine : dp->dp_open_txg;
	dp->dp_holds[TXG_IDX(tx->tx_txg)]++;
	bool due = tx->tx_txg == dp->dp_open_txg && txg_space_due(dp);
	dp->dp_space_pending[TXG_IDX(tx->tx_txg)] += dmu_tx_space_charge(dp, tx);
	if (!due && tx->tx_txg == dp->dp_open_txg && txg_space_due(dp))
		pthread_cond_signal(&dp->dp_sync_cv);   /* the estimates are due a sync */
	tx->tx_assigned = true;
	struct dmu_tx_mine *m = &dmu_tx_mine;
	if (m->tm_n == 0 || m->tm_dp == dp) {
		m->tm_dp = dp;
		m->tm_txg = tx->tx_txg;
		m->tm_n++;
		tx->tx_mine = m;
	}
	tarn_mutex_unlock(&dp->dp_lock);
	return (0);
}

void
dmu_tx_commit(dmu_tx_t *tx)
{
	dmu_pool_t *dp = tx->tx_os->os_dp;
	if (tx->tx_assigned && !tx->tx_syncing) {
		tarn_mutex_lock(&dp->dp_lock, TXG);
		VERIFY3U(dp->dp_holds[TXG_IDX(tx->tx_txg)], >, 0);
		if (tx->tx_netfree)
			dp->dp_frees_txg = tx->tx_txg;
		if (tx->tx_mine != NULL) {
			/* committed by the thread that assigned it, or another */
			VERIFY3U(tx->tx_mine->tm_n, >, 0);
			tx->tx_mine->tm_n--;
		}
		if (--dp->dp_holds[TXG_IDX(tx->tx_txg)] == 0)
			pthread_cond_broadcast(&dp->dp_quiesce_cv);
		tarn_mutex_unlock(&dp->dp_lock);
	}
	tarn_free(tx);
}

void
dmu_tx_abort(dmu_tx_t *tx)
{
	/* Changes made under an assigned tx cannot be undone: commit it. */
	dmu_tx_commit(tx);
}
