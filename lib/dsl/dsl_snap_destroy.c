/*
 * dsl_snap_destroy.c — destroying snapshots, rolling back, clones.
 *
 * Theory.  Destroying snapshot S (older neighbour P taken in txg p, newer
 * neighbour N, a snapshot or the file system) frees exactly the blocks no
 * one else holds: those born after p that N no longer has, which are
 * N's dead-list bucket p (dsl_deadlist.c); S's own dead list moves into
 * N's by reference.  The work is the freed blocks plus a few MOS objects.
 * A batch (`destroy fs@a%c`, `-r`) is one sync task: all or nothing.
 *
 * Rollback to the newest snapshot S frees what the file system wrote
 * since S — the blocks of its tree born after S's txg, found by a walk
 * that skips every subtree born earlier — gives it a fresh copy of S's
 * root, and empties its dead list (the blocks on it are live again).
 * The caller has closed the file system's users; its object set is
 * evicted from the pool first and reopened by the next user.
 *
 * A clone is a new file system whose first root is a copy of its
 * origin snapshot's; its dead list starts with boundaries 0 and the
 * origin's txg, so the blocks it frees that the origin still holds (born
 * before that txg) are kept apart and never freed by it.  Promote turns
 * that around: the origin and the snapshots before it move to the clone,
 * whose bucket of origin blocks is split again at their txgs, and the old
 * file system becomes the clone of the origin (its own dead lists already
 * have those boundaries).
 */
#include "dsl_impl.h"
#include "tarn_array.h"

/* ---- one snapshot, in syncing context ---- */

int
dsl_snap_destroy_one_sync(dsl_pool_t *dp, uint64_t obj, dmu_tx_t *tx, uint64_t *freed)
{
	objset_t *mos = dp->dp_mos;
	spa_t *spa = dp->dp_spa;
	dsl_snap_phys_t sp, np;
	dsl_dataset_phys_t dd;
	int e = dsl_snap_read(mos, obj, &sp);
	if (e == 0)
		e = dsl_phys_read(dp, sp.ds_head_obj, &dd);
	if (e == 0 && sp.ds_next_obj != 0)
		e = dsl_snap_read(mos, sp.ds_next_obj, &np);
	if (e != 0)
		return (e);
	uint64_t ndl = sp.ds_next_obj != 0 ? np.ds_deadlist : dd.dd_deadlist;
	e = dsl_dl_free_range(spa, ndl, sp.ds_prev_txg, sp.ds_txg, tx, freed);
	if (e == 0)
		e = dsl_dl_merge(mos, ndl, sp.ds_deadlist, tx);
	if (e == 0 && sp.ds_prev_obj != 0) {
		dsl_snap_phys_t pp;
		e = dsl_snap_read(mos, sp.ds_prev_obj, &pp);
		pp.ds_next_obj = sp.ds_next_obj;
		if (e == 0)
			e = dsl_snap_write(mos, sp.ds_prev_obj, &pp, tx);
	}
	if (e == 0 && sp.ds_next_obj != 0) {
		np.ds_prev_obj = sp.ds_prev_obj;
		np.ds_prev_txg = sp.ds_prev_txg;
		e = dsl_snap_write(mos, sp.ds_next_obj, &np, tx);
	} else if (e == 0) {
		dd.dd_prev_snap_obj = sp.ds_prev_obj;
		dd.dd_prev_snap_txg = sp.ds_prev_txg;
		char key[32];
		dsl_os_key(sp.ds_head_obj, key, sizeof (key));
		objset_t *os = spa_objset_find(spa, key);
		if (os != NULL)
			dmu_objset_set_prev_snap_txg(os, sp.ds_prev_txg);
	}
	char name[ZAP_MAXNAMELEN];
	if (e == 0)
		e = zap_value_search(mos, dd.dd_snap_zap, obj, 0, name, sizeof (name));
	if (e == 0)
		e = zap_remove(mos, dd.dd_snap_zap, name, tx);
	if (e == 0)
		e = dsl_head_write(mos, sp.ds_head_obj, &dd, tx);
	if (e == 0 && sp.ds_holds_zap != 0)
		e = zap_destroy(mos, sp.ds_holds_zap, tx);
	if (e == 0 && sp.ds_clones_zap != 0)
		e = zap_destroy(mos, sp.ds_clones_zap, tx);
	if (e == 0)
		e = zap_destroy(mos, obj, tx);
	if (e == 0) {
		zio_free(dmu_pool_zio(spa_dmu_pool(spa)), &sp.ds_bp, dmu_tx_get_txg(tx));
		dsl_history(dp, dmu_tx_get_txg(tx), "destroy", name, obj, "snapshot");
	}
	return (e);
}

/* ---- destroy (zfs destroy fs@a,b%c [-rRdnv]) ---- */

typedef struct dsl_sd_task {
	dsl_pool_t *dp;
	uint64_t *objs;         /* oldest first within each file system */
	int      n;
	int      flags;
	uint64_t freed;
	char    *err;
	size_t   errlen;
} dsl_sd_task_t;

static int
dsl_sd_check(dsl_pool_t *dp, uint64_t obj, int flags, char *err, size_t errlen, bool *defer)
{
	dsl_snap_phys_t sp;
	int e = dsl_snap_read(dp->dp_mos, obj, &sp);
	*defer = false;
	if (e != 0)
		return (e);
	if (sp.ds_nclones > 0 && !(flags & (DSL_DESTROY_CLONES | DSL_DESTROY_DEFER))) {
		(void) snprintf(err, errlen, "snapshot has dependent clones");
		return (SET_ERROR(EEXIST));
	}
	if (sp.ds_userrefs > 0 && !(flags & DSL_DESTROY_DEFER)) {
		(void) snprintf(err, errlen, "dataset is busy");
		return (SET_ERROR(EBUSY));
	}
	/* -d: held or cloned, it is marked and goes with the last hold or clone */
	if (sp.ds_userrefs > 0 || sp.ds_nclones > 0) {
		*defer = true;
		return (0);
	}
	if (dsl_snap_is_open(dp->dp_spa, obj)) {
		(void) snprintf(err, errlen, "dataset is busy");
		return (SET_ERROR(EBUSY));
	}
	return (0);
}

static int
dsl_sd_sync(void *arg, dmu_tx_t *tx)
{
	dsl_sd_task_t *t = arg;
	bool defer;
	for (int i = 0; i < t->n; i++) {
		int e = dsl_sd_check(t->dp, t->objs[i], t->flags, t->err, t->errlen, &defer);
		if (e != 0)
			return (e);
	}
	for (int i = 0; i < t->n; i++) {
		int e = dsl_sd_check(t->dp, t->objs[i], t->flags, t->err, t->errlen, &defer);
		if (e == 0 && defer) {
			dsl_snap_phys_t sp;
			e = dsl_snap_read(t->dp->dp_mos, t->objs[i], &sp);
			sp.ds_flags |= DSL_SNAP_F_DEFER_DESTROY;
			if (e == 0)
				e = dsl_snap_write(t->dp->dp_mos, t->objs[i], &sp, tx);
		} else if (e == 0) {
			e = dsl_snap_destroy_one_sync(t->dp, t->objs[i], tx, &t->freed);
		}
		if (e != 0)
			return (SET_ERROR(EIO));
	}
	return (0);
}

typedef struct dsl_sd_sel {
	uint64_t ss_head;
	uint64_t ss_obj;
	uint64_t ss_txg;
	char     ss_name[DSL_NAME_MAX];
} dsl_sd_sel_t;

static int
dsl_sd_sel_cmp(const void *a, const void *b)
{
	const dsl_sd_sel_t *x = a, *y = b;
	if (x->ss_head != y->ss_head)
		return (x->ss_head < y->ss_head ? -1 : 1);
	return (x->ss_txg < y->ss_txg ? -1 : x->ss_txg > y->ss_txg);
}

/*
 * Space a batch would free: for each run of neighbouring snapshots of one
 * file system, the blocks born after the run's older neighbour that the
 * state after the run no longer has — the dead lists of the run's later
 * members and of its successor, from that boundary up.
 */
static uint64_t
dsl_sd_wouldfree(dsl_pool_t *dp, const dsl_sd_sel_t *sel, int n)
{
	uint64_t total = 0;
	for (int i = 0; i < n; ) {
		dsl_snap_ent_t *chain;
		int nc;
		if (dsl_snap_chain(dp, sel[i].ss_head, &chain, &nc) != 0)
			return (total);
		dsl_dataset_phys_t dd;
		(void) dsl_phys_read(dp, sel[i].ss_head, &dd);
		int j = i;
		while (j < n && sel[j].ss_head == sel[i].ss_head)
			j++;
		for (int c = 0; c < nc; ) {
			bool in = false;
			for (int k = i; k < j && !in; k++)
				in = sel[k].ss_obj == chain[c].se_obj;
			if (!in) {
				c++;
				continue;
			}
			uint64_t lo = chain[c].se_phys.ds_prev_txg, b = 0;
			int end = c;
			for (;;) {
				bool nin = false;
				for (int k = i; k < j && end + 1 < nc && !nin; k++)
					nin = sel[k].ss_obj == chain[end + 1].se_obj;
				if (!nin)
					break;
				end++;
			}
			for (int d = c + 1; d <= end + 1; d++) {
				uint64_t dl = d < nc ? chain[d].se_phys.ds_deadlist : dd.dd_deadlist;
				(void) dsl_dl_space(dp->dp_mos, dl, lo, UINT64_MAX, &b, NULL, NULL);
				total += b;
			}
			c = end + 1;
		}
		tarn_free(chain);
		i = j;
	}
	return (total);
}

typedef struct dsl_sd_collect {
	dsl_pool_t *dp;
	tarn_array_t *sel;
	const char *snap;
} dsl_sd_collect_t;

static void
dsl_sd_add(dsl_pool_t *dp, tarn_array_t *sel, const char *name)
{
	uint64_t head, obj;
	char err[64];
	dsl_snap_phys_t sp;
	if (dsl_snap_lookup(dp, name, &head, &obj, err, sizeof (err)) != 0 ||
	    dsl_snap_read(dp->dp_mos, obj, &sp) != 0)
		return;
	for (size_t i = 0; i < tarn_array_len(sel); i++)
		if (TARN_ARRAY_AT(sel, dsl_sd_sel_t, i).ss_obj == obj)
			return;
	dsl_sd_sel_t *s = tarn_array_push(sel);
	s->ss_head = head;
	s->ss_obj = obj;
	s->ss_txg = sp.ds_txg;
	(void) snprintf(s->ss_name, sizeof (s->ss_name), "%s", name);
}

static int
dsl_sd_collect_cb(void *arg, const char *name, int depth)
{
	dsl_sd_collect_t *c = arg;
	char full[DSL_NAME_MAX + ZAP_MAXNAMELEN];
	(void) snprintf(full, sizeof (full), "%s@%s", name, c->snap);
	tarn_mutex_lock(&c->dp->dp_lock, DSL_POOL);
	dsl_sd_add(c->dp, c->sel, full);
	tarn_mutex_unlock(&c->dp->dp_lock);
	return (0);
}

/* -R: destroy the clones of every selected snapshot (file systems, recursively). */
static int
dsl_sd_clones(dsl_pool_t *dp, tarn_array_t *sel, int flags, dsl_name_fn_t visit, void *varg,
    char *err, size_t errlen)
{
	int e = 0;
	for (size_t i = 0; i < tarn_array_len(sel) && e == 0; i++) {
		char clones[4096];
		dsl_sd_sel_t *s = tarn_array_get(sel, i);
		e = dsl_snapshot_clones(dp, s->ss_name, clones, sizeof (clones));
		for (char *c = strtok(clones, ","); e == 0 && c != NULL; c = strtok(NULL, ",")) {
			if (visit != NULL)
				visit(varg, c);
			if (!(flags & DSL_DESTROY_DRYRUN))
				e = dsl_dataset_destroy(dp, c, true, err, errlen);
		}
	}
	return (e);
}

int
dsl_snapshot_destroy(dsl_pool_t *dp, const char *const *names, int n, int flags,
    uint64_t *reclaim, dsl_name_fn_t visit, void *visit_arg, char *err, size_t errlen)
{
	err[0] = '\0';
	tarn_array_t sel = TARN_ARRAY_INIT(dsl_sd_sel_t);
	int e = 0;
	for (int i = 0; i < n && e == 0; i++) {
		const char *at = strchr(names[i], '@');
		if (at == NULL) {
			(void) snprintf(err, errlen, "invalid name");
			e = SET_ERROR(EINVAL);
			break;
		}
		tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
		dsl_sd_add(dp, &sel, names[i]);
		tarn_mutex_unlock(&dp->dp_lock);
		if (flags & DSL_DESTROY_RECURSIVE) {
			char fs[DSL_NAME_MAX];
			(void) snprintf(fs, sizeof (fs), "%.*s", (int)(at - names[i]), names[i]);
			dsl_sd_collect_t c = { dp, &sel, at + 1 };
			(void) dsl_dataset_iter(dp, fs, -1, dsl_sd_collect_cb, &c);
		}
	}
	if (e == 0 && tarn_array_len(&sel) == 0) {
		(void) snprintf(err, errlen, "could not find any snapshots to destroy; check "
		    "snapshot names.");
		e = SET_ERROR(ENOENT);
	}
	tarn_array_sort(&sel, dsl_sd_sel_cmp);
	if (e == 0 && (flags & DSL_DESTROY_CLONES))
		e = dsl_sd_clones(dp, &sel, flags, visit, visit_arg, err, errlen);
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	size_t ns = tarn_array_len(&sel);
	dsl_sd_sel_t *sv = tarn_array_base(&sel);
	if (e == 0 && !(flags & DSL_DESTROY_DRYRUN))
		e = dsl_writable(dp, err, errlen);
	for (size_t i = 0; e == 0 && i < ns && dp->dp_busy_fn != NULL; i++)
		e = dp->dp_busy_fn(dp->dp_busy_arg, sv[i].ss_name, err, errlen);
	bool defer;
	for (size_t i = 0; e == 0 && i < ns; i++) {
		int fl = (flags & DSL_DESTROY_DRYRUN) ? flags | DSL_DESTROY_CLONES : flags;
		e = dsl_sd_check(dp, sv[i].ss_obj, fl, err, errlen, &defer);
	}
	for (size_t i = 0; e == 0 && i < ns && visit != NULL; i++)
		visit(visit_arg, sv[i].ss_name);
	uint64_t freed = 0;
	if (e == 0 && (flags & DSL_DESTROY_DRYRUN)) {
		freed = dsl_sd_wouldfree(dp, sv, (int)ns);
	} else if (e == 0) {
		uint64_t *objs = tarn_alloc(sizeof (uint64_t) * (ns + 1));
		for (size_t i = 0; i < ns; i++)
			objs[i] = sv[i].ss_obj;
		dsl_sd_task_t t = { dp, objs, (int)ns, flags, 0, err, errlen };
		e = spa_sync_task(dp->dp_spa, dsl_sd_sync, &t);
		freed = t.freed;
		tarn_free(objs);
	}
	tarn_mutex_unlock(&dp->dp_lock);
	tarn_array_fini(&sel);
	if (reclaim != NULL)
		*reclaim = freed;
	return (e);
}

/* ---- clones ---- */

int
dsl_snapshot_clones(dsl_pool_t *dp, const char *snap, char *buf, size_t len)
{
	buf[0] = '\0';
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	uint64_t head, obj;
	dsl_snap_phys_t sp;
	char err[64];
	int e = dsl_snap_lookup(dp, snap, &head, &obj, err, sizeof (err));
	if (e == 0)
		e = dsl_snap_read(dp->dp_mos, obj, &sp);
	tarn_mutex_unlock(&dp->dp_lock);
	if (e != 0 || sp.ds_clones_zap == 0)
		return (e);
	tarn_array_t objs = TARN_ARRAY_INIT(uint64_t);
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	zap_cursor_t zc;
	zap_attribute_t za;
	zap_cursor_init(&zc, dp->dp_mos, sp.ds_clones_zap, 0);
	while (zap_cursor_retrieve(&zc, &za) == 0) {
		TARN_ARRAY_APPEND(&objs, uint64_t, za.za_first_integer);
		zap_cursor_advance(&zc);
	}
	zap_cursor_fini(&zc);
	tarn_mutex_unlock(&dp->dp_lock);
	size_t used = 0;
	for (size_t i = 0; i < tarn_array_len(&objs); i++) {
		char key[32], name[DSL_NAME_MAX];
		dsl_os_key(TARN_ARRAY_AT(&objs, uint64_t, i), key, sizeof (key));
		if (dsl_dataset_key_name(dp, key, name, sizeof (name)) != 0)
			continue;
		int w = snprintf(buf + used, len - used, "%s%s", used ? "," : "", name);
		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
	}
	tarn_array_fini(&objs);
	return (0);
}

int
dsl_dataset_origin(dsl_pool_t *dp, const char *fs, char *buf, size_t len)
{
	buf[0] = '\0';
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	uint64_t head;
	dsl_dataset_phys_t dd;
	dsl_snap_phys_t sp;
	char hname[DSL_NAME_MAX], sname[ZAP_MAXNAMELEN], key[32];
	int e = dsl_lookup(dp, fs, &head, NULL, 0);
	if (e == 0)
		e = dsl_phys_read(dp, head, &dd);
	if (e == 0 && dd.dd_origin_obj != 0) {
		e = dsl_snap_read(dp->dp_mos, dd.dd_origin_obj, &sp);
		dsl_dataset_phys_t od;
		if (e == 0)
			e = dsl_phys_read(dp, sp.ds_head_obj, &od);
		if (e == 0)
			e = zap_value_search(dp->dp_mos, od.dd_snap_zap, dd.dd_origin_obj, 0, sname,
			    sizeof (sname));
		tarn_mutex_unlock(&dp->dp_lock);
		dsl_os_key(sp.ds_head_obj, key, sizeof (key));
		if (e == 0)
			e = dsl_dataset_key_name(dp, key, hname, sizeof (hname));
		if (e == 0)
			(void) snprintf(buf, len, "%s@%s", hname, sname);
		return (e);
	}
	tarn_mutex_unlock(&dp->dp_lock);
	return (e);
}

typedef struct dsl_clone_task {
	dsl_pool_t *dp;
	const char *name;
	uint64_t origin;
	const dsl_prop_setting_t *props;
	int      nprops;
	char    *err;
	size_t   errlen;
} dsl_clone_task_t;

static int
dsl_clone_sync(void *arg, dmu_tx_t *tx)
{
	dsl_clone_task_t *t = arg;
	uint64_t obj;
	return (dsl_clone_create_tx(t->dp, t->name, t->origin, t->props, t->nprops, tx, &obj,
	    t->err, t->errlen));
}

int
dsl_clone_create_tx(dsl_pool_t *dp, const char *name, uint64_t origin,
    const dsl_prop_setting_t *props, int nprops, dmu_tx_t *tx, uint64_t *objp, char *err,
    size_t errlen)
{
	objset_t *mos = dp->dp_mos;
	uint64_t obj, tmp, txg = dmu_tx_get_txg(tx);
	if (dsl_lookup(dp, name, &tmp, NULL, 0) == 0) {
		(void) snprintf(err, errlen, "dataset already exists");
		return (SET_ERROR(EEXIST));
	}
	dsl_clone_task_t tt = { dp, name, origin, props, nprops, err, errlen }, *t = &tt;
	dsl_snap_phys_t sp;
	int e = dsl_snap_read(mos, t->origin, &sp);
	if (e != 0)
		return (e);
	e = dsl_create_obj_tx(dp, t->name, t->props, t->nprops, tx, &obj, t->err, t->errlen);
	if (e != 0)
		return (e == ENOENT ? e : SET_ERROR(EIO));
	*objp = obj;
	dsl_dataset_phys_t dd;
	blkptr_t root;
	char key[32], ck[32];
	if ((e = dsl_phys_read(dp, obj, &dd)) != 0)
		return (e);
	dd.dd_origin_obj = t->origin;
	dd.dd_prev_snap_txg = sp.ds_txg;
	e = dsl_dl_create(mos, (const uint64_t[]){ 0, sp.ds_txg }, 2, tx, &dd.dd_deadlist);
	if (e == 0)
		e = dsl_head_write(mos, obj, &dd, tx);
	if (e == 0)
		e = dmu_objset_copy_root(spa_dmu_pool(dp->dp_spa), &sp.ds_bp, txg, &root, NULL);
	dsl_os_key(obj, key, sizeof (key));
	if (e == 0)
		e = spa_objset_register_sync(dp->dp_spa, key, &root, tx);
	if (e == 0 && sp.ds_clones_zap == 0)
		e = zap_create(mos, DMU_OT_ZAP, tx, &sp.ds_clones_zap);
	(void) snprintf(ck, sizeof (ck), "%" PRIx64, obj);
	if (e == 0)
		e = zap_add_int(mos, sp.ds_clones_zap, ck, obj, tx);
	sp.ds_nclones++;
	if (e == 0)
		e = dsl_snap_write(mos, t->origin, &sp, tx);
	if (e == 0)
		dsl_history(dp, txg, "clone", t->name, obj, "origin %" PRIu64, t->origin);
	return (e == 0 ? 0 : SET_ERROR(EIO));
}

int
dsl_clone_create(dsl_pool_t *dp, const char *snap, const char *fs, bool parents,
    const dsl_prop_setting_t *props, int nprops, char *err, size_t errlen)
{
	err[0] = '\0';
	int e = dsl_create_check(dp, fs, props, nprops, err, errlen);
	if (e == 0)
		e = dsl_writable(dp, err, errlen);
	if (e != 0)
		return (e);
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	uint64_t head, origin;
	e = dsl_feature_check(dp, err, errlen);
	if (e == 0)
		e = dsl_snap_lookup(dp, snap, &head, &origin, err, errlen);
	if (e == 0)
		e = dsl_create_parents(dp, fs, parents, err, errlen);
	if (e == 0) {
		dsl_clone_task_t t = { dp, fs, origin, props, nprops, err, errlen };
		e = spa_sync_task(dp->dp_spa, dsl_clone_sync, &t);
	}
	uint64_t obj;
	objset_t *os;
	if (e == 0 && (e = dsl_lookup(dp, fs, &obj, err, errlen)) == 0)
		e = dsl_os_get(dp, obj, &os);
	tarn_mutex_unlock(&dp->dp_lock);
	return (e);
}

/* ---- promote ---- */

typedef struct dsl_promote_task {
	dsl_pool_t *dp;
	uint64_t clone;
	char    *err;
	size_t   errlen;
} dsl_promote_task_t;

/* Move clone obj from snapshot from's clone table to snapshot to's. */
static int
dsl_clone_relink(objset_t *mos, uint64_t snap, uint64_t drop, uint64_t add, dmu_tx_t *tx)
{
	dsl_snap_phys_t sp;
	char ck[32];
	int e = dsl_snap_read(mos, snap, &sp);
	(void) snprintf(ck, sizeof (ck), "%" PRIx64, drop);
	if (e == 0)
		(void) zap_remove(mos, sp.ds_clones_zap, ck, tx);
	(void) snprintf(ck, sizeof (ck), "%" PRIx64, add);
	if (e == 0)
		e = zap_add_int(mos, sp.ds_clones_zap, ck, add, tx);
	return (e);
}

/* The clone's dead lists: split its bucket of origin blocks at the moved snapshots' txgs. */
static int
dsl_promote_rebucket(dsl_pool_t *dp, uint64_t clone, uint64_t otxg, const uint64_t *keys,
    int nk, dmu_tx_t *tx)
{
	dsl_snap_ent_t *own;
	int n;
	dsl_dataset_phys_t cd;
	int e = dsl_snap_chain(dp, clone, &own, &n);
	if (e == 0)
		e = dsl_phys_read(dp, clone, &cd);
	for (int i = 0; i < n && e == 0; i++)
		e = dsl_dl_rebucket(dp->dp_spa, own[i].se_phys.ds_deadlist, otxg, keys, nk, tx);
	if (e == 0)
		e = dsl_dl_rebucket(dp->dp_spa, cd.dd_deadlist, otxg, keys, nk, tx);
	tarn_free(own);
	return (e);
}

static int
dsl_promote_sync(void *arg, dmu_tx_t *tx)
{
	dsl_promote_task_t *t = arg;
	dsl_pool_t *dp = t->dp;
	objset_t *mos = dp->dp_mos;
	dsl_dataset_phys_t cd, hd;
	dsl_snap_phys_t op;
	dsl_snap_ent_t *hchain = NULL, *cchain = NULL;
	int hn = 0, cn = 0, k = -1;
	int e = dsl_phys_read(dp, t->clone, &cd);
	uint64_t origin = cd.dd_origin_obj;
	if (e == 0 && origin == 0) {
		(void) snprintf(t->err, t->errlen, "not a cloned filesystem");
		return (SET_ERROR(EINVAL));
	}
	if (e == 0)
		e = dsl_snap_read(mos, origin, &op);
	uint64_t head = op.ds_head_obj;
	if (e == 0)
		e = dsl_phys_read(dp, head, &hd);
	if (e == 0)
		e = dsl_snap_chain(dp, head, &hchain, &hn);
	if (e == 0)
		e = dsl_snap_chain(dp, t->clone, &cchain, &cn);
	for (int i = 0; e == 0 && i < hn; i++)
		if (hchain[i].se_obj == origin)
			k = i;
	uint64_t tmp;
	for (int i = 0; e == 0 && i <= k; i++) {
		if (cd.dd_snap_zap != 0 && zap_lookup_int(mos, cd.dd_snap_zap, hchain[i].se_name,
		    &tmp) == 0) {
			(void) snprintf(t->err, t->errlen, "snapshot name conflict: '%s'",
			    hchain[i].se_name);
			e = SET_ERROR(EEXIST);
		}
	}
	if (e != 0 || k < 0) {
		tarn_free(hchain);
		tarn_free(cchain);
		return (e != 0 ? e : SET_ERROR(EIO));
	}
	uint64_t *keys = tarn_alloc(sizeof (uint64_t) * (size_t)(k + 2));
	keys[0] = 0;
	for (int i = 0; i < k; i++)
		keys[i + 1] = hchain[i].se_phys.ds_txg;
	e = dsl_promote_rebucket(dp, t->clone, op.ds_txg, keys, k + 1, tx);
	tarn_free(keys);
	/* the snapshots up to the origin move to the clone */
	if (e == 0 && cd.dd_snap_zap == 0)
		e = zap_create(mos, DMU_OT_ZAP, tx, &cd.dd_snap_zap);
	for (int i = 0; e == 0 && i <= k; i++) {
		dsl_snap_phys_t sp = hchain[i].se_phys;
		sp.ds_head_obj = t->clone;
		if (i == k)
			sp.ds_next_obj = cn > 0 ? cchain[0].se_obj : 0;
		e = zap_remove(mos, hd.dd_snap_zap, hchain[i].se_name, tx);
		if (e == 0)
			e = zap_add_int(mos, cd.dd_snap_zap, hchain[i].se_name, hchain[i].se_obj, tx);
		if (e == 0)
			e = dsl_snap_write(mos, hchain[i].se_obj, &sp, tx);
	}
	if (e == 0 && cn > 0) {
		cchain[0].se_phys.ds_prev_obj = origin;
		e = dsl_snap_write(mos, cchain[0].se_obj, &cchain[0].se_phys, tx);
	} else if (e == 0) {
		cd.dd_prev_snap_obj = origin;
	}
	/* the old head is now the clone of the origin, its own snapshots after it */
	if (e == 0 && k + 1 < hn) {
		hchain[k + 1].se_phys.ds_prev_obj = 0;
		e = dsl_snap_write(mos, hchain[k + 1].se_obj, &hchain[k + 1].se_phys, tx);
	} else if (e == 0) {
		hd.dd_prev_snap_obj = 0;
	}
	uint64_t older = hd.dd_origin_obj;
	hd.dd_origin_obj = origin;
	cd.dd_origin_obj = older;
	if (e == 0)
		e = dsl_clone_relink(mos, origin, t->clone, head, tx);
	if (e == 0 && older != 0)
		e = dsl_clone_relink(mos, older, head, t->clone, tx);
	if (e == 0)
		e = dsl_head_write(mos, head, &hd, tx);
	if (e == 0)
		e = dsl_head_write(mos, t->clone, &cd, tx);
	if (e == 0) {
		char key[32];
		dsl_os_key(t->clone, key, sizeof (key));
		dsl_history(dp, dmu_tx_get_txg(tx), "promote", key, t->clone, NULL);
	}
	tarn_free(hchain);
	tarn_free(cchain);
	return (e == 0 ? 0 : SET_ERROR(EIO));
}

int
dsl_dataset_promote(dsl_pool_t *dp, const char *fs, char *err, size_t errlen)
{
	err[0] = '\0';
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	uint64_t obj;
	int e = dsl_writable(dp, err, errlen);
	if (e == 0)
		e = dsl_lookup(dp, fs, &obj, err, errlen);
	if (e == 0) {
		dsl_promote_task_t t = { dp, obj, err, errlen };
		e = spa_sync_task(dp->dp_spa, dsl_promote_sync, &t);
	}
	tarn_mutex_unlock(&dp->dp_lock);
	return (e);
}

/* Unlink a file system that is going away from its origin; drop its lists (lock held). */
int
dsl_head_destroy_tx(dsl_pool_t *dp, uint64_t obj, dmu_tx_t *tx)
{
	objset_t *mos = dp->dp_mos;
	dsl_dataset_phys_t dd;
	int e = dsl_phys_read(dp, obj, &dd);
	if (e != 0)
		return (e);
	if (dd.dd_origin_obj != 0) {
		dsl_snap_phys_t sp;
		char ck[32];
		(void) snprintf(ck, sizeof (ck), "%" PRIx64, obj);
		e = dsl_snap_read(mos, dd.dd_origin_obj, &sp);
		if (e == 0 && sp.ds_clones_zap != 0)
			(void) zap_remove(mos, sp.ds_clones_zap, ck, tx);
		if (e == 0 && sp.ds_nclones > 0)
			sp.ds_nclones--;
		if (e == 0)
			e = dsl_snap_write(mos, dd.dd_origin_obj, &sp, tx);
	}
	if (e == 0)
		e = dsl_dl_destroy(mos, dd.dd_deadlist, tx);
	if (e == 0 && dd.dd_snap_zap != 0)
		e = zap_destroy(mos, dd.dd_snap_zap, tx);
	if (e == 0 && dd.dd_bookmark_zap != 0)
		e = zap_destroy(mos, dd.dd_bookmark_zap, tx);
	return (e);
}

/* ---- rollback ---- */

typedef struct dsl_rb_task {
	dsl_pool_t *dp;
	uint64_t head, snap;
	char    *err;
	size_t   errlen;
} dsl_rb_task_t;

typedef struct dsl_rb_free {
	zio_ctx_t *zc;
	uint64_t txg;
	blkptr_t root;
} dsl_rb_free_t;

static int
dsl_rb_free_cb(void *arg, objset_t *os, uint64_t obj, const blkptr_t *bp, uint64_t blkid)
{
	dsl_rb_free_t *f = arg;
	if (!BP_IS_HOLE(bp) && !bp_equal(bp, &f->root))
		zio_free(f->zc, bp, f->txg);
	return (0);
}

static int
dsl_rb_sync(void *arg, dmu_tx_t *tx)
{
	dsl_rb_task_t *t = arg;
	dsl_pool_t *dp = t->dp;
	objset_t *mos = dp->dp_mos;
	spa_t *spa = dp->dp_spa;
	dmu_pool_t *pool = spa_dmu_pool(spa);
	uint64_t txg = dmu_tx_get_txg(tx);
	dsl_dataset_phys_t dd;
	dsl_snap_phys_t sp;
	char key[32];
	dsl_os_key(t->head, key, sizeof (key));
	int e = dsl_phys_read(dp, t->head, &dd);
	if (e == 0)
		e = dsl_snap_read(mos, t->snap, &sp);
	if (e == 0 && dd.dd_prev_snap_obj != t->snap) {
		(void) snprintf(t->err, t->errlen, "more recent snapshots or bookmarks exist");
		return (SET_ERROR(EEXIST));
	}
	dsl_rb_free_t f = { dmu_pool_zio(pool), txg, { { { 0 } } } };
	blkptr_t fresh;
	if (e == 0)
		e = spa_objset_root(spa, key, &f.root);
	if (e != 0)
		return (e);
	/* what the file system wrote since the snapshot: born after its txg */
	if (!BP_IS_HOLE(&f.root)) {
		dmu_objset_props_t p = { .osp_checksum = ZIO_CHECKSUM_DEFAULT,
			.osp_compress = ZIO_COMPRESS_OFF, .osp_copies = 1 };
		objset_t *old;
		uint64_t errors = 0;
		e = dmu_objset_open(pool, &f.root, &p, &old);
		if (e == 0) {
			e = dmu_traverse(old, 0, 0, sp.ds_txg + 1, dsl_rb_free_cb, &f, &errors);
			dmu_objset_close(old);
		}
		if (e == 0 && errors != 0)
			e = SET_ERROR(EIO);
		if (e != 0)
			return (e);
	}
	e = dmu_objset_copy_root(pool, &sp.ds_bp, txg, &fresh, NULL);
	if (e == 0)
		e = spa_objset_set_root_sync(spa, key, &fresh, tx);
	if (e != 0)
		return (e);
	if (!BP_IS_HOLE(&f.root))
		zio_free(f.zc, &f.root, txg);
	/* blocks dead since the snapshot are live again: forget them, keep the boundaries */
	uint64_t *keys;
	int nk;
	e = dsl_dl_keys(mos, dd.dd_deadlist, &keys, &nk);
	if (e == 0)
		e = dsl_dl_destroy(mos, dd.dd_deadlist, tx);
	if (e == 0)
		e = dsl_dl_create(mos, keys, nk, tx, &dd.dd_deadlist);
	if (e == 0)
		e = dsl_head_write(mos, t->head, &dd, tx);
	if (e == 0)
		dsl_history(dp, txg, "rollback", key, t->head, "to %" PRIu64, t->snap);
	if (e == 0)
		tarn_free(keys);
	return (e == 0 ? 0 : SET_ERROR(EIO));
}

typedef struct dsl_later {
	tarn_array_t names;     /* of char[DSL_NAME_MAX] */
} dsl_later_t;

int
dsl_dataset_rollback(dsl_pool_t *dp, const char *snap, bool destroy_later, bool destroy_clones,
    dsl_name_fn_t visit, void *visit_arg, char *err, size_t errlen)
{
	err[0] = '\0';
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	uint64_t head, obj;
	dsl_snap_ent_t *chain = NULL;
	int n = 0;
	int e = dsl_writable(dp, err, errlen);
	if (e == 0)
		e = dsl_snap_lookup(dp, snap, &head, &obj, err, errlen);
	if (e == 0)
		e = dsl_snap_chain(dp, head, &chain, &n);
	tarn_mutex_unlock(&dp->dp_lock);
	/* the snapshots after it */
	const char *at = e == 0 ? strchr(snap, '@') : NULL;
	char fs[DSL_NAME_MAX];
	(void) snprintf(fs, sizeof (fs), "%.*s", at ? (int)(at - snap) : 0, snap);
	int me = -1;
	for (int i = 0; i < n; i++)
		if (chain[i].se_obj == obj)
			me = i;
	if (e == 0 && me + 1 < n) {
		char **later = tarn_alloc(sizeof (char *) * (size_t)(n - me));
		int nl = 0;
		for (int i = me + 1; i < n; i++) {
			later[nl] = tarn_alloc(DSL_NAME_MAX + ZAP_MAXNAMELEN);
			(void) snprintf(later[nl++], DSL_NAME_MAX + ZAP_MAXNAMELEN, "%s@%s", fs,
			    chain[i].se_name);
		}
		if (!destroy_later) {
			for (int i = 0; i < nl && visit != NULL; i++)
				visit(visit_arg, later[i]);
			(void) snprintf(err, errlen, "more recent snapshots or bookmarks exist");
			e = SET_ERROR(EEXIST);
		} else {
			e = dsl_snapshot_destroy(dp, (const char *const *)later, nl,
			    destroy_clones ? DSL_DESTROY_CLONES : 0, NULL, NULL, NULL, err, errlen);
		}
		for (int i = 0; i < nl; i++)
			tarn_free(later[i]);
		tarn_free(later);
	}
	tarn_free(chain);
	if (e != 0)
		return (e);
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	char key[32];
	dsl_os_key(head, key, sizeof (key));
	e = txg_wait_synced(spa_dmu_pool(dp->dp_spa), 0);
	if (e == 0)
		e = spa_objset_evict(dp->dp_spa, key);
	if (e == EBUSY)
		(void) snprintf(err, errlen, "dataset is busy");
	if (e == 0) {
		dsl_rb_task_t t = { dp, head, obj, err, errlen };
		e = spa_sync_task(dp->dp_spa, dsl_rb_sync, &t);
	}
	tarn_mutex_unlock(&dp->dp_lock);
	return (e);
}

/* Every snapshot of file system head (lock held): check only, or destroy them. */
int
dsl_snap_destroy_head_locked(dsl_pool_t *dp, uint64_t head, bool check, char *err,
    size_t errlen)
{
	dsl_snap_ent_t *chain;
	int n;
	int e = dsl_snap_chain(dp, head, &chain, &n);
	if (e != 0 || n == 0)
		return (e);
	uint64_t *objs = tarn_alloc(sizeof (uint64_t) * (size_t)n);
	bool defer;
	for (int i = 0; i < n && e == 0; i++) {
		objs[i] = chain[i].se_obj;
		e = dsl_sd_check(dp, objs[i], 0, err, errlen, &defer);
	}
	if (e == 0 && !check) {
		dsl_sd_task_t t = { dp, objs, n, 0, 0, err, errlen };
		e = spa_sync_task(dp->dp_spa, dsl_sd_sync, &t);
	}
	tarn_free(objs);
	tarn_free(chain);
	return (e);
}

/*
 * After a clone went (lock held): its origin, marked by destroy -d, goes
 * too once nothing holds it, as zfs does.
 */
int
dsl_snap_destroy_deferred_locked(dsl_pool_t *dp, uint64_t obj)
{
	dsl_snap_phys_t sp;
	if (obj == 0 || dsl_snap_read(dp->dp_mos, obj, &sp) != 0 ||
	    !(sp.ds_flags & DSL_SNAP_F_DEFER_DESTROY) || sp.ds_userrefs > 0 ||
	    sp.ds_nclones > 0)
		return (0);
	char err[256];
	dsl_sd_task_t t = { dp, &obj, 1, 0, 0, err, sizeof (err) };
	return (spa_sync_task(dp->dp_spa, dsl_sd_sync, &t));
}
