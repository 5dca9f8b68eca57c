/*
 * spa_history.c — the pool's command history and its format version.
 *
 * History: every command that changed the pool is appended, with its
 * time, to a MOS object named "history" in the pool directory: 512-byte
 * records (u64 time, char cmd[496], u64 reserved) in a ring of
 * SPA_HISTORY_MAX records; the bonus holds the number ever written.  It
 * exists only when the pool has the `history` feature (format version 2);
 * a version-1 pool records nothing until it is upgraded.
 */
#include "spa_impl.h"

#define SPA_HISTORY_MAX   8192
#define SPA_HISTORY_BLKSZ (16 * KiB)

typedef struct spa_history_rec {
	uint64_t shr_time;
	char     shr_cmd[496];
	uint64_t shr_reserved;
} spa_history_rec_t;
_Static_assert(sizeof (spa_history_rec_t) == 512, "history records are 512 bytes");

void spa_history_init(spa_t *spa) { }
int spa_history_load(spa_t *spa) { return (0); }
int spa_history_sync(spa_t *spa, uint64_t txg) { return (0); }
void spa_history_fini(spa_t *spa) { }

uint64_t
spa_features(const spa_t *spa)
{
	return (spa->spa_features);
}

int
spa_history_log(spa_t *spa, const char *cmdline)
{
	if (spa->spa_readonly || !(spa->spa_features & SPA_FEATURE_HISTORY) || spa->spa_mos == NULL)
		return (0);
	objset_t *mos = spa->spa_mos;
	/* One appender at a time; never spa_lock here: the sync thread takes it. */
	static pthread_mutex_t history_lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&history_lock);
	dmu_tx_t *tx = dmu_tx_create(mos);
	dmu_tx_hold_space(tx, 3 * SPA_HISTORY_BLKSZ);
	int e = dmu_tx_assign(tx, TXG_WAIT);
	uint64_t obj = 0, count = 0;
	if (e == 0 && spa_dir_lookup(spa, "history", &obj) != 0) {
		e = dmu_object_alloc(mos, DMU_OT_UINT8, SPA_HISTORY_BLKSZ, DMU_OT_UINT64,
		    sizeof (uint64_t), tx, &obj);
		if (e == 0)
			e = spa_dir_add(spa, "history", obj, tx);
	}
	if (e == 0)
		e = dmu_bonus_read(mos, obj, &count, sizeof (count));
	if (e == 0) {
		spa_history_rec_t rec;
		memset(&rec, 0, sizeof (rec));
		rec.shr_time = tarn_wall_sec();
		snprintf(rec.shr_cmd, sizeof (rec.shr_cmd), "%s", cmdline);
		e = dmu_write(mos, obj, (count % SPA_HISTORY_MAX) * sizeof (rec), sizeof (rec),
		    &rec, tx);
		count++;
		if (e == 0)
			e = dmu_bonus_write(mos, obj, &count, sizeof (count), tx);
	}
	dmu_tx_commit(tx);
	pthread_mutex_unlock(&history_lock);
	return (e);
}

int
spa_history_get(spa_t *spa, spa_history_ent_t **entsp, int *np)
{
	*entsp = NULL;
	*np = 0;
	uint64_t obj, count = 0;
	if (spa_dir_lookup(spa, "history", &obj) != 0)
		return (0);
	int e = dmu_bonus_read(spa->spa_mos, obj, &count, sizeof (count));
	if (e != 0)
		return (e);
	uint64_t n = MIN(count, SPA_HISTORY_MAX), first = count - n;
	spa_history_ent_t *ents = tarn_alloc(sizeof (*ents) * (n + 1));
	for (uint64_t i = 0; i < n && e == 0; i++) {
		spa_history_rec_t rec;
		e = dmu_read(spa->spa_mos, obj, ((first + i) % SPA_HISTORY_MAX) * sizeof (rec),
		    sizeof (rec), &rec);
		ents[i].she_time = rec.shr_time;
		rec.shr_cmd[sizeof (rec.shr_cmd) - 1] = '\0';
		snprintf(ents[i].she_cmd, sizeof (ents[i].she_cmd), "%s", rec.shr_cmd);
	}
	if (e != 0) {
		tarn_free(ents);
		return (e);
	}
	*entsp = ents;
	*np = (int)n;
	return (0);
}

int
spa_upgrade(spa_t *spa, uint64_t version, char *err, size_t errlen)
{
	if (version == 0)
		version = SPA_VERSION;
	if (version > SPA_VERSION) {
		snprintf(err, errlen, "version %" PRIu64 " is newer than this software supports "
		    "(%llu)", version, (unsigned long long)SPA_VERSION);
		return (SET_ERROR(ENOTSUP));
	}
	if (version < spa->spa_version) {
		snprintf(err, errlen, "pool is already at version %" PRIu64 "; it cannot be "
		    "downgraded", spa->spa_version);
		return (SET_ERROR(EINVAL));
	}
	if (spa->spa_readonly) {
		snprintf(err, errlen, "pool is read-only");
		return (SET_ERROR(EROFS));
	}
	pthread_mutex_lock(&spa->spa_vdev_lock);
	spa->spa_version = version;
	if (version >= SPA_VERSION_2)
		spa->spa_features |= SPA_FEATURES_ALL;
	int e = txg_wait_synced(spa->spa_dp, 0);   /* uberblocks carry the new version */
	if (e == 0) {
		spa->spa_config_txg = spa_last_synced_txg(spa) + 1;
		e = spa_write_labels(spa, POOL_STATE_ACTIVE, false);
	}
	pthread_mutex_unlock(&spa->spa_vdev_lock);
	if (e != 0)
		snprintf(err, errlen, "cannot write the new version: %s", tarn_strerror(e));
	return (e);
}
