/*
 * spa_task.c — sync tasks and the dataset layer's hooks into the sync.
 *
 * Theory.  Some changes must be made where the sync can see the state of
 * a txg as it is written: a snapshot takes the root block its file
 * system's object set gets in this very txg, a destroy of a snapshot
 * frees blocks and rewrites dead lists in the same txg that drops its
 * name.  A sync task is such a change: the caller (lib/dsl, in open
 * context, holding its own lock) queues fn for the open txg through a
 * MOS tx it assigns, and waits for the txg; the sync thread runs every
 * task of the txg in pass 1, after the object sets have written their
 * blocks and before the MOS is written, with a syncing tx on the MOS.
 * Whatever the tasks change lands in that one txg, so each task is all
 * or nothing across a crash, and several changes made by one task
 * (`zfs snapshot -r`, a range destroy) are one.
 *
 * The hooks are how the pool, which knows object sets only as names and
 * roots, lets the dataset layer above keep snapshots: when a registered
 * object set opens (it learns the txg of its newest snapshot, so its sync
 * keeps the blocks a snapshot still holds), after it synced (the blocks
 * it kept go to a dead list), and when a scan needs every root.
 */
#include "spa_impl.h"

typedef struct spa_sync_task {
	uint64_t st_txg;
	spa_sync_task_fn_t st_fn;
	void    *st_arg;
	int      st_result;
	bool     st_ran;
} spa_sync_task_t;

void
spa_task_init(spa_t *spa)
{
	pthread_mutex_init(&spa->spa_task_lock, NULL);
	tarn_array_init(&spa->spa_tasks, sizeof (spa_sync_task_t *));
}

void
spa_task_fini(spa_t *spa)
{
	tarn_array_fini(&spa->spa_tasks);
	pthread_mutex_destroy(&spa->spa_task_lock);
}

int
spa_sync_task(spa_t *spa, spa_sync_task_fn_t fn, void *arg)
{
	if (spa->spa_readonly)
		return (SET_ERROR(EROFS));
	dmu_tx_t *tx = dmu_tx_create(spa->spa_mos);
	dmu_tx_hold_space(tx, 1 * MiB);
	dmu_tx_mark_netfree(tx);        /* destroys must work on a full pool */
	int e = dmu_tx_assign(tx, TXG_WAIT);
	if (e != 0) {
		dmu_tx_abort(tx);
		return (e);
	}
	spa_sync_task_t task = { .st_txg = dmu_tx_get_txg(tx), .st_fn = fn, .st_arg = arg };
	spa_sync_task_t *tp = &task;
	pthread_mutex_lock(&spa->spa_task_lock);
	*(spa_sync_task_t **)tarn_array_push(&spa->spa_tasks) = tp;
	pthread_mutex_unlock(&spa->spa_task_lock);
	dmu_tx_commit(tx);
	e = txg_wait_synced(spa->spa_dp, task.st_txg);
	pthread_mutex_lock(&spa->spa_task_lock);
	bool ran = task.st_ran;
	if (!ran) {             /* the sync failed before the tasks: take it back */
		for (size_t i = 0; i < tarn_array_len(&spa->spa_tasks); i++) {
			if (*(spa_sync_task_t **)tarn_array_get(&spa->spa_tasks, i) == tp) {
				tarn_array_remove(&spa->spa_tasks, i);
				break;
			}
		}
	}
	pthread_mutex_unlock(&spa->spa_task_lock);
	if (e != 0)
		return (e);
	return (ran ? task.st_result : SET_ERROR(EIO));
}

int
spa_sync_tasks_run(spa_t *spa, uint64_t txg)
{
	for (;;) {
		spa_sync_task_t *t = NULL;
		pthread_mutex_lock(&spa->spa_task_lock);
		for (size_t i = 0; i < tarn_array_len(&spa->spa_tasks); i++) {
			spa_sync_task_t *c = *(spa_sync_task_t **)tarn_array_get(&spa->spa_tasks, i);
			if (c->st_txg == txg) {
				t = c;
				tarn_array_remove(&spa->spa_tasks, i);
				break;
			}
		}
		pthread_mutex_unlock(&spa->spa_task_lock);
		if (t == NULL)
			return (0);
		dmu_tx_t *tx = dmu_tx_create_syncing(spa->spa_mos, txg);
		int r = t->st_fn(t->st_arg, tx);
		dmu_tx_commit(tx);
		/*
		 * An I/O error inside a task fails the sync (the pool suspends);
		 * a refusal (the task's own checks) is only its result.
		 */
		__atomic_add_fetch(&spa->spa_task_gen, 1, __ATOMIC_RELEASE);
		pthread_mutex_lock(&spa->spa_task_lock);
		t->st_result = r;
		t->st_ran = true;
		pthread_mutex_unlock(&spa->spa_task_lock);
		if (r == EIO || r == ECKSUM || r == ENOSPC)
			return (r);
	}
}

bool
spa_set_dsl_hooks(spa_t *spa, const spa_dsl_hooks_t *hooks)
{
	return (__atomic_exchange_n(&spa->spa_dsl_hooks, hooks, __ATOMIC_ACQ_REL) == NULL);
}

int
spa_os_synced(spa_t *spa, const char *name, objset_t *os, uint64_t txg)
{
	const spa_dsl_hooks_t *h = __atomic_load_n(&spa->spa_dsl_hooks, __ATOMIC_ACQUIRE);
	if (h == NULL || h->sdh_synced == NULL || dmu_objset_prev_snap_txg(os) == 0)
		return (0);
	dmu_tx_t *tx = dmu_tx_create_syncing(spa->spa_mos, txg);
	int e = h->sdh_synced(spa, name, os, tx);
	dmu_tx_commit(tx);
	return (e);
}

/* ---- registered object sets changed by dataset sync tasks ---- */

static int
spa_os_key(const char *name, char *key, size_t len)
{
	if (snprintf(key, len, "os:%s", name) >= (int)len)
		return (SET_ERROR(ENAMETOOLONG));
	return (0);
}

int
spa_objset_register_sync(spa_t *spa, const char *name, const blkptr_t *bp, dmu_tx_t *tx)
{
	char key[SPA_DIR_NAMELEN];
	int e = spa_os_key(name, key, sizeof (key));
	uint64_t obj = 0;
	if (e == 0)
		e = dmu_object_alloc(spa->spa_mos, DMU_OT_DSL_DATASET, SPA_MINBLOCKSIZE,
		    DMU_OT_DSL_DATASET, sizeof (blkptr_t), tx, &obj);
	if (e == 0)
		e = dmu_bonus_write(spa->spa_mos, obj, bp, sizeof (*bp), tx);
	if (e == 0)
		e = spa_dir_add(spa, key, obj, tx);
	return (e);
}

int
spa_objset_root(spa_t *spa, const char *name, blkptr_t *bp)
{
	char key[SPA_DIR_NAMELEN];
	uint64_t obj;
	int e = spa_os_key(name, key, sizeof (key));
	if (e == 0)
		e = spa_dir_lookup(spa, key, &obj);
	if (e == 0)
		e = dmu_bonus_read(spa->spa_mos, obj, bp, sizeof (*bp));
	return (e);
}

int
spa_objset_set_root_sync(spa_t *spa, const char *name, const blkptr_t *bp, dmu_tx_t *tx)
{
	char key[SPA_DIR_NAMELEN];
	uint64_t obj;
	int e = spa_os_key(name, key, sizeof (key));
	if (e == 0)
		e = spa_dir_lookup(spa, key, &obj);
	if (e != 0)
		return (e);
	tarn_mutex_lock(&spa->spa_lock, SPA);
	for (int i = 0; i < SPA_NOS(spa); i++) {
		if (strcmp(SPA_OS(spa, i).so_name, name) == 0) {
			tarn_mutex_unlock(&spa->spa_lock);
			return (SET_ERROR(EBUSY));      /* still open: evict first */
		}
	}
	tarn_mutex_unlock(&spa->spa_lock);
	return (dmu_bonus_write(spa->spa_mos, obj, bp, sizeof (*bp), tx));
}

int
spa_objset_evict(spa_t *spa, const char *name)
{
	objset_t *os = spa_objset_find(spa, name);
	if (os == NULL)
		return (0);
	/* Its intent log describes changes to the state being replaced: drop it. */
	zil_t *zl = spa_objset_zil(spa, os);
	if (zl != NULL) {
		dmu_tx_t *tx = dmu_tx_create(spa->spa_mos);
		dmu_tx_hold_space(tx, 64 * KiB);
		dmu_tx_mark_netfree(tx);
		int e = dmu_tx_assign(tx, TXG_WAIT);
		if (e != 0) {
			dmu_tx_abort(tx);
			return (e);
		}
		zil_destroy(zl, tx);
		uint64_t txg = dmu_tx_get_txg(tx);
		dmu_tx_commit(tx);
		if ((e = txg_wait_synced(spa->spa_dp, txg)) != 0)
			return (e);
	}
	int e = spa_os_unregister(spa, name, &os, &zl);
	if (e != 0)
		return (e);
	zil_close(zl);
	if (os != NULL)
		dmu_objset_close(os);
	return (0);
}

objset_t *
spa_objset_find(spa_t *spa, const char *name)
{
	objset_t *os = NULL;
	tarn_mutex_lock(&spa->spa_lock, SPA);
	for (int i = 0; i < SPA_NOS(spa) && os == NULL; i++)
		if (strcmp(SPA_OS(spa, i).so_name, name) == 0)
			os = SPA_OS(spa, i).so_os;
	tarn_mutex_unlock(&spa->spa_lock);
	return (os);
}

/*
 * Take name out of the registry of open object sets (spa_lock), handing
 * back its object set and log (NULL when it was not open) for the caller
 * to close.  EBUSY while it has changes not yet synced.
 */
int
spa_os_unregister(spa_t *spa, const char *name, objset_t **osp, zil_t **zlp)
{
	*osp = NULL;
	*zlp = NULL;
	tarn_mutex_lock(&spa->spa_lock, SPA);
	for (int i = 0; i < SPA_NOS(spa); i++) {
		if (strcmp(SPA_OS(spa, i).so_name, name) != 0)
			continue;
		objset_t *os = SPA_OS(spa, i).so_os;
		uint64_t t = txg_open_txg(spa->spa_dp);
		if (os != NULL && (dmu_objset_is_dirty(os, t) || dmu_objset_is_dirty(os, t - 1))) {
			tarn_mutex_unlock(&spa->spa_lock);
			return (SET_ERROR(EBUSY));
		}
		*osp = os;
		*zlp = SPA_OS(spa, i).so_zil;
		tarn_array_remove_swap(&spa->spa_os, (size_t)i);
		break;
	}
	tarn_mutex_unlock(&spa->spa_lock);
	return (0);
}

uint64_t
spa_sync_task_gen(spa_t *spa)
{
	return (__atomic_load_n(&spa->spa_task_gen, __ATOMIC_ACQUIRE));
}
