/*
 * spa_history.c — the pool's history (zpool history) and its format
 * version.
 *
 * History: every command that changed the pool, and (for history -i) the
 * internal events behind them (a dataset created in txg N, a scan set up
 * or done, a feature enabled), is appended with its time to a MOS object
 * named "history" in the pool directory: 512-byte records in a ring of
 * SPA_HISTORY_MAX records; the bonus holds the number ever written.  It
 * exists only when the pool has the `history` feature (format version 2);
 * a version-1 pool records nothing until it is upgraded.
 *
 * A record is one of two layouts (docs/FORMAT.md "History"), told apart
 * by its last word: 0, the first layout (time and a command line of up to
 * 495 bytes, nothing else known), or SPA_HIST_V2: time, text (a command
 * line, or an internal event's words), the host, and for commands the
 * user, for internal events the txg.  The text comes first in both, so
 * software that knows only the first layout still reads the text.
 *
 * Records are appended in open context, each in a small MOS transaction
 * of its own, by one appender at a time (history_lock).  Callers hold no
 * lock that the sync thread may need.
 */
#include "spa_impl.h"

#include <stdarg.h>
#include <unistd.h>

#define SPA_HISTORY_MAX   8192
#define SPA_HISTORY_BLKSZ (16 * KiB)
#define SPA_HIST_V2       (1ULL << 63)    /* shr_info: the second layout */

typedef struct spa_history_rec {
	uint64_t shr_time;
	union {
		char shr_cmd[496];              /* first layout: the command */
		struct {
			char     shr_text[400];
			char     shr_host[64];
			uint64_t shr_txg;       /* internal events */
			uint32_t shr_uid;       /* commands */
			uint32_t shr_kind;      /* SPA_HIST_CMD / SPA_HIST_INTERNAL */
			uint64_t shr_pad[2];
		};
	};
	uint64_t shr_info;                      /* 0 or SPA_HIST_V2 */
} spa_history_rec_t;
_Static_assert(sizeof (spa_history_rec_t) == SPA_HISTORY_RECSIZE,
    "history records are 512 bytes");

void spa_history_init(spa_t *spa) { }
int spa_history_load(spa_t *spa) { return (0); }
int spa_history_sync(spa_t *spa, uint64_t txg) { return (0); }
void spa_history_fini(spa_t *spa) { }

uint64_t
spa_features(const spa_t *spa)
{
	return (spa->spa_features);
}

/*
 * Append rec (time and layout filled in here) in a MOS transaction;
 * with txg_tag the record's shr_txg is the txg of that transaction.
 */
static int
history_append(spa_t *spa, spa_history_rec_t *rec, bool txg_tag)
{
	if (spa->spa_readonly || !(spa->spa_features & SPA_FEATURE_HISTORY) ||
	    spa->spa_mos == NULL || spa->spa_dp == NULL || dmu_pool_suspended(spa->spa_dp))
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
		rec->shr_time = tarn_wall_sec();
		rec->shr_info = SPA_HIST_V2;
		if (txg_tag)
			rec->shr_txg = dmu_tx_get_txg(tx);
		if (gethostname(rec->shr_host, sizeof (rec->shr_host)) != 0)
			rec->shr_host[0] = '\0';
		rec->shr_host[sizeof (rec->shr_host) - 1] = '\0';
		e = dmu_write(mos, obj, (count % SPA_HISTORY_MAX) * sizeof (*rec), sizeof (*rec),
		    rec, tx);
		count++;
		if (e == 0)
			e = dmu_bonus_write(mos, obj, &count, sizeof (count), tx);
	}
	dmu_tx_commit(tx);
	pthread_mutex_unlock(&history_lock);
	return (e);
}

int
spa_history_log_as(spa_t *spa, const char *cmdline, uint32_t uid)
{
	spa_history_rec_t rec;
	memset(&rec, 0, sizeof (rec));
	rec.shr_kind = SPA_HIST_CMD;
	rec.shr_uid = uid;
	snprintf(rec.shr_text, sizeof (rec.shr_text), "%s", cmdline);
	return (history_append(spa, &rec, false));
}

int
spa_history_log(spa_t *spa, const char *cmdline)
{
	return (spa_history_log_as(spa, cmdline, (uint32_t)getuid()));
}

int
spa_history_log_internal(spa_t *spa, uint64_t txg, const char *fmt, ...)
{
	spa_history_rec_t rec;
	va_list ap;
	memset(&rec, 0, sizeof (rec));
	rec.shr_kind = SPA_HIST_INTERNAL;
	rec.shr_txg = txg;
	va_start(ap, fmt);
	(void) vsnprintf(rec.shr_text, sizeof (rec.shr_text), fmt, ap);
	va_end(ap);
	return (history_append(spa, &rec, txg == 0));
}

int
spa_history_decode(const void *buf, size_t len, spa_history_ent_t *ent)
{
	spa_history_rec_t rec;
	memset(ent, 0, sizeof (*ent));
	if (len != sizeof (rec))
		return (SET_ERROR(EINVAL));
	memcpy(&rec, buf, sizeof (rec));
	ent->she_time = rec.shr_time;
	if (rec.shr_info == 0) {
		rec.shr_cmd[sizeof (rec.shr_cmd) - 1] = '\0';
		snprintf(ent->she_cmd, sizeof (ent->she_cmd), "%s", rec.shr_cmd);
		return (0);
	}
	if (rec.shr_info != SPA_HIST_V2 || rec.shr_kind > SPA_HIST_INTERNAL)
		return (SET_ERROR(EIO));
	rec.shr_text[sizeof (rec.shr_text) - 1] = '\0';
	rec.shr_host[sizeof (rec.shr_host) - 1] = '\0';
	snprintf(ent->she_cmd, sizeof (ent->she_cmd), "%s", rec.shr_text);
	snprintf(ent->she_host, sizeof (ent->she_host), "%s", rec.shr_host);
	ent->she_kind = (int)rec.shr_kind;
	ent->she_long = true;
	ent->she_uid = rec.shr_uid;
	ent->she_txg = rec.shr_txg;
	return (0);
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
	int kept = 0;
	for (uint64_t i = 0; i < n && e == 0; i++) {
		spa_history_rec_t rec;
		e = dmu_read(spa->spa_mos, obj, ((first + i) % SPA_HISTORY_MAX) * sizeof (rec),
		    sizeof (rec), &rec);
		/* a record of neither layout is skipped: the others still show */
		if (e == 0 && spa_history_decode(&rec, sizeof (rec), &ents[kept]) == 0)
			kept++;
	}
	if (e != 0) {
		tarn_free(ents);
		return (e);
	}
	*entsp = ents;
	*np = kept;
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
	tarn_mutex_lock(&spa->spa_vdev_lock, SPA_VDEV);
	spa->spa_version = version;
	if (version >= SPA_VERSION_2)
		spa->spa_features |= SPA_FEATURES_ALL;
	int e = txg_wait_synced(spa->spa_dp, 0);   /* uberblocks carry the new version */
	if (e == 0) {
		spa->spa_config_txg = spa_last_synced_txg(spa) + 1;
		e = spa_write_labels(spa, POOL_STATE_ACTIVE, false);
	}
	tarn_mutex_unlock(&spa->spa_vdev_lock);
	if (e != 0)
		snprintf(err, errlen, "cannot write the new version: %s", tarn_strerror(e));
	return (e);
}
