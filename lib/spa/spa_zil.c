/*
 * spa_zil.c — the pool's side of the intent logs (lib/zil): one log per
 * registered file system, claimed at import before anything allocates,
 * given each txg's sync, closed with the pool.
 */
#include "spa_impl.h"

zil_t *
spa_objset_zil(spa_t *spa, objset_t *os)
{
	zil_t *zl = NULL;
	if (!(spa->spa_features & SPA_FEATURE_INTENT_LOG) ||
	    dmu_objset_type(os) != DMU_OST_ZFS)
		return (NULL);
	tarn_mutex_lock(&spa->spa_lock, SPA);
	for (int i = 0; i < SPA_NOS(spa); i++) {
		spa_os_t *so = &SPA_OS(spa, i);
		if (so->so_os != os)
			continue;
		if (so->so_zil == NULL) {
			so->so_zil = zil_open(os, spa->spa_readonly);
			zil_set_xattr_punch(so->so_zil,
			    (spa->spa_features & SPA_FEATURE_LOG_XATTR_PUNCH) != 0);
		}
		zl = so->so_zil;
		break;
	}
	tarn_mutex_unlock(&spa->spa_lock);
	return (zl);
}

typedef struct spa_claim_arg {
	bool rewind;
	uint64_t first_txg;
} spa_claim_arg_t;

static int
spa_zil_claim_os(spa_t *spa, objset_t *os, void *arg)
{
	spa_claim_arg_t *ca = arg;
	zil_t *zl = os != NULL ? spa_objset_zil(spa, os) : NULL;
	if (zl == NULL)
		return (0);
	if (ca->rewind)
		zil_discard(zl, ca->first_txg);
	else
		(void) zil_claim(zl, ca->first_txg);
	return (0);
}

/*
 * Import (the dmu not started yet, so nothing has allocated): claim the
 * log blocks of every file system, or with a rewind forget them.
 */
int
spa_zil_claim_all(spa_t *spa, bool rewind)
{
	if (!(spa->spa_features & SPA_FEATURE_INTENT_LOG))
		return (0);
	spa_claim_arg_t ca = { .rewind = rewind, .first_txg = txg_open_txg(spa->spa_dp) };
	return (spa_foreach_objset(spa, spa_zil_claim_os, &ca));
}

void
spa_zil_sync(spa_t *spa, uint64_t txg)
{
	tarn_mutex_lock(&spa->spa_lock, SPA);
	for (int i = 0; i < SPA_NOS(spa); i++)
		if (SPA_OS(spa, i).so_zil != NULL)
			zil_sync(SPA_OS(spa, i).so_zil, txg);
	tarn_mutex_unlock(&spa->spa_lock);
}

/*
 * Every file system's log gives back its open block (a log device is
 * leaving).  The logs are taken under spa_lock, released without it
 * (each waits for syncs, which take spa_lock).
 */
int
spa_zil_release_all(spa_t *spa)
{
	int err = 0;
	tarn_mutex_lock(&spa->spa_lock, SPA);
	int n = SPA_NOS(spa);
	zil_t **zls = tarn_alloc(sizeof (zil_t *) * (size_t)MAX(n, 1));
	for (int i = 0; i < n; i++)
		zls[i] = SPA_OS(spa, i).so_zil;
	tarn_mutex_unlock(&spa->spa_lock);
	for (int i = 0; i < n && err == 0; i++)
		if (zls[i] != NULL)
			err = zil_release_open(zls[i]);
	tarn_free(zls);
	return (err);
}

void
spa_zil_close_all(spa_t *spa)
{
	for (int i = 0; i < SPA_NOS(spa); i++) {
		zil_close(SPA_OS(spa, i).so_zil);
		SPA_OS(spa, i).so_zil = NULL;
	}
}
