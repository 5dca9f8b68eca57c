/*
 * dmu_tt.h — helpers the dmu's read and cache tests share: the pool's
 * zio counters, and an object written whole and synced.  Include after
 * tt.h, tt_pool.h and dmu.h.
 */
#ifndef TARN_DMU_TT_H
#define TARN_DMU_TT_H

static inline zio_stats_t
tt_zstats(spa_t *spa)
{
	zio_stats_t st;
	zio_ctx_stats(dmu_pool_zio(spa_dmu_pool(spa)), &st);
	return (st);
}

/* A new test object of len bytes in blocks of bs, written from data and synced. */
static inline uint64_t
tt_object_write(spa_t *spa, objset_t *os, const uint8_t *data, uint64_t len, uint32_t bs)
{
	uint64_t obj;
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_write(tx, 0, 0, len);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_object_alloc(os, DMU_OT_TEST, bs, DMU_OT_NONE, 0, tx, &obj));
	TT_OK(dmu_write(os, obj, 0, len, data, tx));
	dmu_tx_commit(tx);
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	return (obj);
}

#endif
