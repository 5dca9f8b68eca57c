/*
 * Unit tests of the dmu write path's memory bounds on a real pool of
 * file vdevs: blocks that were only ever written whole leave the cache
 * once their txg is on disk beyond a small share of it (dbuf.c,
 * "Written-only blocks"), read back intact from disk, and blocks that
 * were read stay cached as before; a stream is synced as soon as it
 * passes a sixteenth of the dirty limit (txg.c), not at the timeout or
 * at the end; small writes into one window of an object in one txg share
 * their space estimates.
 */
#include "tt.h"
#include "spa.h"
#include "dmu.h"
#include "tt_pool.h"

#include <time.h>

static tt_pool_devs_t devs;

#define BS     (128 * KiB)

static dmu_pool_stats_t
pstats(spa_t *spa)
{
	dmu_pool_stats_t st;
	dmu_pool_stats(spa_dmu_pool(spa), &st);
	return (st);
}

/* Write [0, len) of obj in 1 MiB transactions, the way a file stream does. */
static void
stream_write(objset_t *os, uint64_t obj, const uint8_t *data, uint64_t len)
{
	for (uint64_t off = 0; off < len; off += MiB) {
		uint64_t n = MIN(MiB, len - off);
		dmu_tx_t *tx = dmu_tx_create(os);
		dmu_tx_hold_write(tx, obj, off, n);
		TT_OK(dmu_tx_assign(tx, TXG_WAIT));
		TT_OK(dmu_write(os, obj, off, n, data + off, tx));
		dmu_tx_commit(tx);
	}
}

/*
 * A 96 MiB stream into a pool whose cache may hold 256 MiB: once synced,
 * the cache keeps the blocks only written, since they fit its free room
 * (the bound past the free room: test_dmu_read's stream_scan_resistant);
 * all of it reads back, and what was read stays cached.
 */
static void
test_written_only_bounded(void)
{
	const uint64_t cache = 256 * MiB, len = 96 * MiB;
	dmu_pool_opts_t o = { .dpo_cache_max = cache };
	tt_pool_files(&devs, 2, 256 * MiB);
	spa_t *spa = tt_pool_create(&devs, "wtest", "mirror", &o);
	objset_t *os;
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	uint8_t *data = tarn_alloc(len), *rb = tarn_alloc(len);
	tt_fill(data, len, 5);
	uint64_t obj;
	dmu_tx_t *tx = dmu_tx_create(os);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_object_alloc(os, DMU_OT_TEST, BS, DMU_OT_NONE, 0, tx, &obj));
	dmu_tx_commit(tx);
	uint64_t t0 = pstats(spa).dps_txgs_synced;
	stream_write(os, obj, data, len);
	/* visible before the sync, from the dirty blocks */
	TT_OK(dmu_read(os, obj, len - MiB, MiB, rb));
	TT_CHECK(memcmp(rb, data + len - MiB, MiB) == 0);
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	dmu_pool_stats_t st = pstats(spa);
	printf("  %" PRIu64 " MiB written in %" PRIu64 " txgs; cache %" PRIu64 " KiB\n",
	    (uint64_t)(len / MiB), st.dps_txgs_synced - t0, (uint64_t)(st.dps_cache_bytes / KiB));
	/* cached: the written-only blocks (in the free room), within the limit */
	TT_CHECK(st.dps_cache_bytes >= len * 3 / 4 && st.dps_cache_bytes <= cache);
	/* the stream's blocks are on disk and read back intact */
	TT_OK(dmu_read(os, obj, 0, len, rb));
	TT_CHECK(memcmp(rb, data, len) == 0);
	/* blocks that were read are cached like any other */
	st = pstats(spa);
	TT_CHECK(st.dps_cache_bytes >= len);
	/* written again (whole blocks over cached ones) and synced: all still right */
	tt_fill(data, len, 6);
	stream_write(os, obj, data, len);
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	memset(rb, 0, len);
	TT_OK(dmu_read(os, obj, 0, len, rb));
	TT_CHECK(memcmp(rb, data, len) == 0);
	uint64_t blocks = 0, errors = 0;
	TT_OK(spa_verify_all(spa, true, &blocks, &errors));
	TT_EQ(errors, 0);
	spa_close(spa);
	/* and after a reopen */
	spa = tt_pool_reopen(&devs, 0, NULL);
	TT_OK(spa_objset_open(spa, "t", &os));
	memset(rb, 0, len);
	TT_OK(dmu_read(os, obj, 0, len, rb));
	TT_CHECK(memcmp(rb, data, len) == 0);
	spa_close(spa);
	tarn_free(data);
	tarn_free(rb);
	tt_pool_files_remove(&devs);
}

/*
 * Twice the sync trigger (dirty limit / 16), an eighth of the limit, with
 * nobody waiting and a txg timeout of a minute: the sync thread writes
 * out all but less than the trigger by itself within moments (a trigger
 * of a quarter of the limit would leave it all dirty until the timeout).
 */
static void
test_stream_syncs_early(void)
{
	const uint64_t dmax = 64 * MiB, len = dmax / 8;
	dmu_pool_opts_t o = { .dpo_dirty_max = dmax, .dpo_txg_timeout_ms = 60000 };
	tt_pool_files(&devs, 1, 256 * MiB);
	spa_t *spa = tt_pool_create(&devs, "wtest", NULL, &o);
	objset_t *os;
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	uint8_t *data = tarn_alloc(len), *rb = tarn_alloc(len);
	tt_fill(data, len, 9);
	uint64_t obj;
	dmu_tx_t *tx = dmu_tx_create(os);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_object_alloc(os, DMU_OT_TEST, BS, DMU_OT_NONE, 0, tx, &obj));
	dmu_tx_commit(tx);
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	uint64_t t0 = pstats(spa).dps_txgs_synced;
	stream_write(os, obj, data, len);
	/* no one waits: the sync thread must catch up by itself */
	int i;
	for (i = 0; i < 500 && (pstats(spa).dps_txgs_synced == t0 ||
	    pstats(spa).dps_dirty >= dmax / 16); i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	uint64_t n = pstats(spa).dps_txgs_synced - t0;
	printf("  %" PRIu64 " MiB in %" PRIu64 " txgs within %d ms, unasked\n",
	    (uint64_t)(len / MiB), n, i * 10);
	/* what is left is less than the trigger (it waits for the timeout) */
	TT_CHECK(n >= 1);
	TT_CHECK(pstats(spa).dps_dirty < dmax / 16);
	TT_OK(dmu_read(os, obj, 0, len, rb));
	TT_CHECK(memcmp(rb, data, len) == 0);
	spa_close(spa);
	tarn_free(data);
	tarn_free(rb);
	tt_pool_files_remove(&devs);
}

/* One 4 KiB write of obj at off in a tx of its own. */
static void
small_write(objset_t *os, uint64_t obj, uint64_t off, const uint8_t *data)
{
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_write(tx, obj, off, 4 * KiB);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_write(os, obj, off, 4 * KiB, data, tx));
	dmu_tx_commit(tx);
}

/*
 * 256 4 KiB writes into one 512 KiB window of an object in one txg
 * reserve their indirect and dnode blocks once, and their data once per
 * 128 KiB window (txg.c, "windows"), not ~960 KiB each; a write in
 * another window is charged its whole worst case; all of it lands.
 */
static void
test_small_writes_share(void)
{
	dmu_pool_opts_t o = { .dpo_txg_timeout_ms = 60000 };
	tt_pool_files(&devs, 1, 256 * MiB);
	spa_t *spa = tt_pool_create(&devs, "wtest", NULL, &o);
	dmu_pool_t *dp = spa_dmu_pool(spa);
	objset_t *os;
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	uint8_t *data = tarn_alloc(MiB), *rb = tarn_alloc(MiB);
	tt_fill(data, MiB, 3);
	uint64_t obj;
	dmu_tx_t *tx = dmu_tx_create(os);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_object_alloc(os, DMU_OT_TEST, 4 * KiB, DMU_OT_NONE, 0, tx, &obj));
	dmu_tx_commit(tx);
	TT_OK(txg_wait_synced(dp, 0));
	uint64_t synced = txg_last_synced(dp);
	for (int i = 0; i < 128; i++) {      /* every block of [0, 512K), in two passes */
		uint64_t b = (uint64_t)(i * 37) % 128;
		small_write(os, obj, b * 4 * KiB, data + b * 4 * KiB);
	}
	for (int b = 0; b < 128; b++)
		small_write(os, obj, (uint64_t)b * 4 * KiB, data + (uint64_t)b * 4 * KiB);
	uint64_t pending = dmu_pool_space_pending(dp);
	printf("  256 writes of 4 KiB in one 512 KiB window: %" PRIu64 " KiB estimated\n",
	    (uint64_t)(pending / KiB));
	TT_EQ(txg_last_synced(dp), synced);      /* all in one txg */
	TT_CHECK(pending >= 960 * KiB && pending <= 2 * MiB);
	small_write(os, obj, 512 * KiB, data + 512 * KiB);   /* the next window */
	TT_CHECK(dmu_pool_space_pending(dp) >= pending + 768 * KiB);
	TT_OK(txg_wait_synced(dp, 0));
	TT_EQ(dmu_pool_space_pending(dp), 0);
	TT_OK(dmu_read(os, obj, 0, 512 * KiB + 4 * KiB, rb));
	TT_CHECK(memcmp(rb, data, 512 * KiB + 4 * KiB) == 0);
	uint64_t blocks = 0, errors = 0;
	TT_OK(spa_verify_all(spa, true, &blocks, &errors));
	TT_EQ(errors, 0);
	spa_close(spa);
	tarn_free(data);
	tarn_free(rb);
	tt_pool_files_remove(&devs);
}

static void
cleanup(void)
{
	tt_tmpdir_cleanup();
}

TT_MAIN(
	{ "written_only_bounded", test_written_only_bounded },
	{ "stream_syncs_early", test_stream_syncs_early },
	{ "small_writes_share", test_small_writes_share },
	{ "cleanup", cleanup },
)
