/*
 * dsl_snap.c — snapshots: taking them, naming them, reading them, and the
 * hooks through which the pool keeps the blocks they hold.
 * Destroy, rollback and clones are in dsl_snap_destroy.c, renames, holds and
 * bookmarks in dsl_snap_hold.c, dead lists in
 * dsl_deadlist.c.
 *
 * Theory.  A snapshot is a MOS object (a ZAP of its user properties) with
 * a dsl_snap_phys_t bonus: its own copy of the file system's root block
 * as written in the snapshot's txg (the copy has an empty intent-log
 * header: a snapshot never replays, and a clone or rollback must not
 * inherit a log that names blocks of the live file system), the txg,
 * its neighbours in the file system's chain of snapshots, its dead list,
 * clones and holds.  The file system's bonus names the newest snapshot
 * and its txg (dd_prev_snap_txg) and a table of snapshot names.
 *
 * Taking a snapshot copies one block and rewrites a few MOS objects,
 * whatever the file system holds: that is a sync task, run after the file
 * system's object set has written its blocks for the txg, so the root it
 * copies holds every change made before the command.  From then on the
 * object set's sync keeps (instead of freeing) each block born at or
 * before that txg, and the sync hook below puts it on the file system's
 * dead list (dsl_deadlist.c) — the one bookkeeping cost snapshots add to
 * writing, proportional to what is overwritten, not to how many snapshots
 * there are.
 *
 * A snapshot's object set is opened read-only from its root for .zfs,
 * diff and send, shared between users and counted, so that a snapshot in
 * use is not destroyed under them.
 */
#include "dsl_impl.h"
#include "tarn_array.h"

/* ---- MOS records ---- */

/* "a" sep "b" into buf, cut at len (names are checked for length before). */
void
dsl_join(char *buf, size_t len, const char *a, char sep, const char *b)
{
	if (snprintf(buf, len, "%s%c%s", a, sep, b) >= (int)len)
		buf[len - 1] = '\0';
}

int
dsl_snap_read(objset_t *mos, uint64_t obj, dsl_snap_phys_t *sp)
{
	dmu_object_info_t doi;
	int e = dmu_object_info(mos, obj, &doi);
	if (e == 0 && doi.doi_type != DMU_OT_DSL_SNAP)
		return (SET_ERROR(ENOENT));
	if (e == 0)
		e = dmu_bonus_read(mos, obj, sp, sizeof (*sp));
	return (e);
}

int
dsl_snap_write(objset_t *mos, uint64_t obj, const dsl_snap_phys_t *sp, dmu_tx_t *tx)
{
	return (dmu_bonus_write(mos, obj, sp, sizeof (*sp), tx));
}

int
dsl_head_write(objset_t *mos, uint64_t obj, const dsl_dataset_phys_t *dd, dmu_tx_t *tx)
{
	return (dmu_bonus_write(mos, obj, dd, sizeof (*dd), tx));
}

/* "ds<obj>" -> obj (0 when name is not a dataset's key). */
uint64_t
dsl_key_obj(const char *name)
{
	size_t pl = strlen(DSL_OS_PREFIX);
	if (strncmp(name, DSL_OS_PREFIX, pl) != 0 || name[pl] < '0' || name[pl] > '9')
		return (0);
	char *end;
	uint64_t obj = strtoull(name + pl, &end, 10);
	return (*end == '\0' ? obj : 0);
}

int
dsl_feature_check(dsl_pool_t *dp, char *err, size_t errlen)
{
	if (spa_features(dp->dp_spa) & SPA_FEATURE_SNAPSHOTS)
		return (0);
	(void) snprintf(err, errlen, "pool must be upgraded to use snapshots "
	    "(feature snapshots: 'zpool upgrade')");
	return (SET_ERROR(ENOTSUP));
}

/*
 * Split "fs@snap" (sep '@') or "fs#bm" (sep '#'): the file system's object
 * and the part after sep.  ENOENT "dataset does not exist".
 */
int
dsl_split_at(dsl_pool_t *dp, const char *name, char sep, uint64_t *fsobj, char *fsname,
    const char **tail, char *err, size_t errlen)
{
	const char *at = strchr(name, sep);
	if (at == NULL || at == name || at[1] == '\0' || (size_t)(at - name) >= DSL_NAME_MAX) {
		(void) snprintf(err, errlen, "invalid name");
		return (SET_ERROR(EINVAL));
	}
	(void) snprintf(fsname, DSL_NAME_MAX, "%.*s", (int)(at - name), name);
	*tail = at + 1;
	return (dsl_lookup(dp, fsname, fsobj, err, errlen));
}

/* The snapshot object of "fs@snap" (lock held). */
int
dsl_snap_lookup(dsl_pool_t *dp, const char *name, uint64_t *headp, uint64_t *snapp,
    char *err, size_t errlen)
{
	char fs[DSL_NAME_MAX];
	const char *snap;
	uint64_t head;
	int e = dsl_split_at(dp, name, '@', &head, fs, &snap, err, errlen);
	if (e != 0)
		return (e);
	dsl_dataset_phys_t dd;
	if ((e = dsl_phys_read(dp, head, &dd)) != 0)
		return (e);
	uint64_t obj = 0;
	e = dd.dd_snap_zap == 0 ? SET_ERROR(ENOENT) :
	    zap_lookup_int(dp->dp_mos, dd.dd_snap_zap, snap, &obj);
	if (e == ENOENT)
		(void) snprintf(err, errlen, "dataset does not exist");
	if (e != 0)
		return (e);
	if (headp != NULL)
		*headp = head;
	*snapp = obj;
	return (0);
}

/* ---- the pool's hooks ---- */

static void
dsl_hook_opened(spa_t *spa, const char *name, objset_t *os)
{
	uint64_t obj = dsl_key_obj(name);
	dsl_dataset_phys_t dd;
	if (obj != 0 && dmu_bonus_read(spa_meta_objset(spa), obj, &dd, sizeof (dd)) == 0)
		dmu_objset_set_prev_snap_txg(os, dd.dd_prev_snap_txg);
}

static int
dsl_hook_synced(spa_t *spa, const char *name, objset_t *os, dmu_tx_t *tx)
{
	blkptr_t *bps;
	size_t n = dmu_objset_dead_take(os, &bps);
	uint64_t obj = dsl_key_obj(name);
	int e = 0;
	if (n > 0 && obj != 0) {
		dsl_dataset_phys_t dd;
		e = dmu_bonus_read(spa_meta_objset(spa), obj, &dd, sizeof (dd));
		if (e == 0 && dd.dd_deadlist == 0)
			e = SET_ERROR(EIO);     /* kept blocks with nowhere to put them */
		if (e == 0)
			e = dsl_dl_insert(spa, dd.dd_deadlist, bps, n, tx);
	}
	tarn_free(bps);
	return (e);
}

typedef struct dsl_roots_arg {
	spa_t *spa;
	objset_t *mos;
	spa_root_fn_t fn;
	void *arg;
} dsl_roots_arg_t;

static int
dsl_roots_walk(dsl_roots_arg_t *ra, uint64_t obj, int depth)
{
	dsl_dataset_phys_t dd;
	int e = dmu_bonus_read(ra->mos, obj, &dd, sizeof (dd));
	if (e != 0 || depth > DSL_NAME_MAX)
		return (e);
	if (dd.dd_snap_zap != 0) {
		zap_cursor_t zc;
		zap_attribute_t za;
		zap_cursor_init(&zc, ra->mos, dd.dd_snap_zap, 0);
		while (e == 0 && (e = zap_cursor_retrieve(&zc, &za)) == 0) {
			dsl_snap_phys_t sp;
			char key[32];
			if (dsl_snap_read(ra->mos, za.za_first_integer, &sp) == 0) {
				(void) snprintf(key, sizeof (key), DSL_OS_PREFIX "%" PRIu64,
				    za.za_first_integer);
				e = ra->fn(ra->arg, key, &sp.ds_bp, sp.ds_prev_txg + 1);
			}
			zap_cursor_advance(&zc);
		}
		zap_cursor_fini(&zc);
		if (e == ENOENT)
			e = 0;
	}
	zap_cursor_t zc;
	zap_attribute_t za;
	zap_cursor_init(&zc, ra->mos, dd.dd_child_zap, 0);
	while (e == 0 && (e = zap_cursor_retrieve(&zc, &za)) == 0) {
		e = dsl_roots_walk(ra, za.za_first_integer, depth + 1);
		zap_cursor_advance(&zc);
	}
	zap_cursor_fini(&zc);
	return (e == ENOENT ? 0 : e);
}

static int
dsl_hook_roots(spa_t *spa, objset_t *mos, spa_root_fn_t fn, void *arg)
{
	uint64_t root;
	if (spa_dir_lookup(spa, DSL_DIR_ROOT, &root) != 0)
		return (0);
	dsl_roots_arg_t ra = { spa, mos, fn, arg };
	return (dsl_roots_walk(&ra, root, 0));
}

static const spa_dsl_hooks_t dsl_hooks = {
	.sdh_opened = dsl_hook_opened,
	.sdh_synced = dsl_hook_synced,
	.sdh_roots = dsl_hook_roots,
};

/*
 * Object sets the pool opened before the hooks were installed (at import,
 * the intent-log claim opens every one): tell them their snapshot txg now.
 * No such object set has freed anything yet: nothing writes to a file
 * system before the dataset layer is open on its pool.
 */
static void
dsl_hooks_catch_up(spa_t *spa, objset_t *mos, uint64_t obj, int depth)
{
	dsl_dataset_phys_t dd;
	char key[32];
	if (depth > DSL_NAME_MAX || dmu_bonus_read(mos, obj, &dd, sizeof (dd)) != 0)
		return;
	(void) snprintf(key, sizeof (key), DSL_OS_PREFIX "%" PRIu64, obj);
	objset_t *os = spa_objset_find(spa, key);
	if (os != NULL)
		dmu_objset_set_prev_snap_txg(os, dd.dd_prev_snap_txg);
	zap_cursor_t zc;
	zap_attribute_t za;
	zap_cursor_init(&zc, mos, dd.dd_child_zap, 0);
	for (; zap_cursor_retrieve(&zc, &za) == 0; zap_cursor_advance(&zc))
		dsl_hooks_catch_up(spa, mos, za.za_first_integer, depth + 1);
	zap_cursor_fini(&zc);
}

void
dsl_snap_hooks_install(spa_t *spa)
{
	uint64_t root;
	if (spa_set_dsl_hooks(spa, &dsl_hooks) && spa_dir_lookup(spa, DSL_DIR_ROOT, &root) == 0)
		dsl_hooks_catch_up(spa, spa_meta_objset(spa), root, 0);
}

/* ---- taking snapshots ---- */

typedef struct dsl_snap_task {
	dsl_pool_t *dst_dp;
	dsl_snap_req_t *dst_reqs;
	int      dst_n;
	const dsl_prop_setting_t *dst_props;
	int      dst_nprops;
	char    *dst_err;
	size_t   dst_errlen;
} dsl_snap_task_t;

/* Boundaries of the new dead list of a file system after a snapshot in txg. */
static int
dsl_snap_new_deadlist(objset_t *mos, const dsl_dataset_phys_t *dd, uint64_t txg, dmu_tx_t *tx,
    uint64_t *dlp)
{
	uint64_t *keys = NULL;
	int n = 0, e = 0;
	if (dd->dd_deadlist != 0) {
		e = dsl_dl_keys(mos, dd->dd_deadlist, &keys, &n);
	} else {
		keys = tarn_alloc(sizeof (uint64_t) * 3);
		keys[n++] = 0;
		if (dd->dd_prev_snap_txg != 0)
			keys[n++] = dd->dd_prev_snap_txg;     /* a clone: its origin */
	}
	if (e == 0) {
		keys = tarn_realloc(keys, sizeof (uint64_t) * (size_t)(n + 1));
		keys[n++] = txg;
		e = dsl_dl_create(mos, keys, n, tx, dlp);
	}
	tarn_free(keys);
	return (e);
}

/* Take one snapshot in syncing context. */
static int
dsl_snap_take(dsl_snap_task_t *t, const dsl_snap_req_t *r, dmu_tx_t *tx)
{
	dsl_pool_t *dp = t->dst_dp;
	objset_t *mos = dp->dp_mos;
	spa_t *spa = dp->dp_spa;
	uint64_t txg = dmu_tx_get_txg(tx), obj, tmp;
	dsl_dataset_phys_t dd;
	char key[32];
	int e = dsl_phys_read(dp, r->dsr_head, &dd);
	if (e != 0)
		return (e);
	if (dd.dd_snap_zap != 0 && zap_lookup_int(mos, dd.dd_snap_zap, r->dsr_snap, &tmp) == 0) {
		(void) snprintf(t->dst_err, t->dst_errlen, "dataset already exists");
		return (SET_ERROR(EEXIST));
	}
	(void) snprintf(key, sizeof (key), DSL_OS_PREFIX "%" PRIu64, r->dsr_head);
	blkptr_t root;
	if ((e = spa_objset_root(spa, key, &root)) != 0)
		return (e);
	dsl_snap_phys_t sp;
	memset(&sp, 0, sizeof (sp));
	uint64_t space[3];
	if ((e = dmu_objset_copy_root(spa_dmu_pool(spa), &root, txg, &sp.ds_bp, space)) != 0)
		return (e);
	sp.ds_referenced = space[0];
	sp.ds_lreferenced = space[1];
	sp.ds_preferenced = space[2];
	sp.ds_head_obj = r->dsr_head;
	sp.ds_prev_obj = dd.dd_prev_snap_obj;
	sp.ds_prev_txg = dd.dd_prev_snap_txg;
	sp.ds_txg = txg;
	sp.ds_creation = r->dsr_creation != 0 ? r->dsr_creation : tarn_wall_sec();
	sp.ds_guid = r->dsr_guid != 0 ? r->dsr_guid : tarn_guid();
	sp.ds_deadlist = dd.dd_deadlist;
	e = zap_create_bonus(mos, DMU_OT_DSL_SNAP, DMU_OT_DSL_SNAP, sizeof (sp), tx, &obj);
	if (e == 0 && sp.ds_deadlist == 0)      /* the first: nothing dead yet */
		e = dsl_dl_create(mos, (const uint64_t[]){ 0, dd.dd_prev_snap_txg },
		    dd.dd_prev_snap_txg ? 2 : 1, tx, &sp.ds_deadlist);
	if (e == 0)
		e = dsl_snap_write(mos, obj, &sp, tx);
	if (e == 0)
		e = dsl_snap_new_deadlist(mos, &dd, txg, tx, &dd.dd_deadlist);
	if (e == 0 && dd.dd_snap_zap == 0)
		e = zap_create(mos, DMU_OT_ZAP, tx, &dd.dd_snap_zap);
	if (e == 0)
		e = zap_add_int(mos, dd.dd_snap_zap, r->dsr_snap, obj, tx);
	if (e == 0 && dd.dd_prev_snap_obj != 0) {
		dsl_snap_phys_t prev;
		e = dsl_snap_read(mos, dd.dd_prev_snap_obj, &prev);
		prev.ds_next_obj = obj;
		if (e == 0)
			e = dsl_snap_write(mos, dd.dd_prev_snap_obj, &prev, tx);
	}
	dd.dd_prev_snap_obj = obj;
	dd.dd_prev_snap_txg = txg;
	if (e == 0)
		e = dsl_head_write(mos, r->dsr_head, &dd, tx);
	for (int i = 0; e == 0 && i < t->dst_nprops; i++)
		e = dsl_prop_user_store(dp, obj, t->dst_props[i].dps_name,
		    t->dst_props[i].dps_value, tx);
	if (e != 0)
		return (e);
	objset_t *os = spa_objset_find(spa, key);
	if (os != NULL)
		dmu_objset_set_prev_snap_txg(os, txg);
	dsl_history(dp, txg, "snapshot", r->dsr_name, obj, NULL);
	return (0);
}

int
dsl_snap_take_one(dsl_pool_t *dp, const dsl_snap_req_t *r, dmu_tx_t *tx, char *err,
    size_t errlen)
{
	dsl_snap_task_t t = { .dst_dp = dp, .dst_err = err, .dst_errlen = errlen };
	return (dsl_snap_take(&t, r, tx));
}

static int
dsl_snap_sync(void *arg, dmu_tx_t *tx)
{
	dsl_snap_task_t *t = arg;
	/* all checks first: a refusal must leave nothing half done */
	for (int i = 0; i < t->dst_n; i++) {
		dsl_dataset_phys_t dd;
		uint64_t tmp;
		int e = dsl_phys_read(t->dst_dp, t->dst_reqs[i].dsr_head, &dd);
		if (e == 0 && dd.dd_snap_zap != 0 &&
		    zap_lookup_int(t->dst_dp->dp_mos, dd.dd_snap_zap, t->dst_reqs[i].dsr_snap,
		    &tmp) == 0) {
			(void) snprintf(t->dst_err, t->dst_errlen, "dataset already exists");
			return (SET_ERROR(EEXIST));
		}
		if (e != 0)
			return (e);
		/* written for this txg already (pass 1), or the copied root would be stale */
		char key[32];
		dsl_os_key(t->dst_reqs[i].dsr_head, key, sizeof (key));
		objset_t *live = spa_objset_find(t->dst_dp->dp_spa, key);
		if (live != NULL && dmu_objset_is_dirty(live, dmu_tx_get_txg(tx)))
			return (SET_ERROR(EAGAIN));
	}
	for (int i = 0; i < t->dst_n; i++) {
		int e = dsl_snap_take(t, &t->dst_reqs[i], tx);
		if (e != 0)
			return (e == EEXIST || e == ENOENT ? SET_ERROR(EIO) : e);
	}
	return (0);
}

typedef struct dsl_snap_collect {
	dsl_pool_t *dp;
	tarn_array_t *reqs;
	const char *snap;
	int err;
	char *errbuf;
	size_t errlen;
} dsl_snap_collect_t;

static int
dsl_snap_add_req(dsl_pool_t *dp, tarn_array_t *reqs, const char *fs, const char *snap,
    char *err, size_t errlen)
{
	dsl_snap_req_t r;
	memset(&r, 0, sizeof (r));
	int e = dsl_lookup(dp, fs, &r.dsr_head, err, errlen);
	if (e != 0)
		return (e);
	if (snprintf(r.dsr_name, sizeof (r.dsr_name), "%s@%s", fs, snap) >=
	    (int)sizeof (r.dsr_name) || strlen(snap) >= sizeof (r.dsr_snap)) {
		(void) snprintf(err, errlen, "name is too long");
		return (SET_ERROR(ENAMETOOLONG));
	}
	(void) snprintf(r.dsr_snap, sizeof (r.dsr_snap), "%s", snap);
	for (size_t i = 0; i < tarn_array_len(reqs); i++) {
		if (TARN_ARRAY_AT(reqs, dsl_snap_req_t, i).dsr_head == r.dsr_head) {
			(void) snprintf(err, errlen, "multiple snapshots of same fs not allowed");
			return (SET_ERROR(EINVAL));
		}
	}
	*(dsl_snap_req_t *)tarn_array_push(reqs) = r;
	return (0);
}

static int
dsl_snap_collect_cb(void *arg, const char *name, int depth)
{
	dsl_snap_collect_t *c = arg;
	if (depth == 0)
		return (0);     /* the named one is already in */
	tarn_mutex_lock(&c->dp->dp_lock, DSL_POOL);
	c->err = dsl_snap_add_req(c->dp, c->reqs, name, c->snap, c->errbuf, c->errlen);
	tarn_mutex_unlock(&c->dp->dp_lock);
	return (c->err);
}

int
dsl_snapshot_create(dsl_pool_t *dp, const char *const *names, int n, bool recursive,
    const dsl_prop_setting_t *props, int nprops, char *err, size_t errlen)
{
	err[0] = '\0';
	tarn_array_t reqs = TARN_ARRAY_INIT(dsl_snap_req_t);
	int e = 0;
	for (int i = 0; i < nprops && e == 0; i++) {
		if (!dsl_prop_user_name(props[i].dps_name)) {
			(void) snprintf(err, errlen, "property '%s' can not be set on snapshots",
			    props[i].dps_name);
			e = SET_ERROR(EINVAL);
		} else {
			e = dsl_prop_user_check(props[i].dps_name, props[i].dps_value, err, errlen);
		}
	}
	for (int i = 0; i < n && e == 0; i++)
		e = dsl_snap_name_validate(names[i], '@', err, errlen);
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	if (e == 0)
		e = dsl_writable(dp, err, errlen);
	if (e == 0)
		e = dsl_feature_check(dp, err, errlen);
	for (int i = 0; i < n && e == 0; i++) {
		const char *at = strchr(names[i], '@');
		if (at == NULL || at[1] == '\0' || at == names[i]) {
			(void) snprintf(err, errlen, "empty component or misplaced '@' or '#' "
			    "delimiter in name");
			e = SET_ERROR(EINVAL);
			break;
		}
		char fs[DSL_NAME_MAX];
		(void) snprintf(fs, sizeof (fs), "%.*s", (int)(at - names[i]), names[i]);
		e = dsl_snap_add_req(dp, &reqs, fs, at + 1, err, errlen);
		if (e == 0 && recursive) {
			dsl_snap_collect_t c = { dp, &reqs, at + 1, 0, err, errlen };
			tarn_mutex_unlock(&dp->dp_lock);
			(void) dsl_dataset_iter(dp, fs, -1, dsl_snap_collect_cb, &c);
			tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
			e = c.err;
		}
	}
	/* snapshot_limit is checked by the host (host_op_snap.c) before this */
	size_t nr = tarn_array_len(&reqs);
	dsl_snap_req_t *rv = tarn_array_base(&reqs);
	if (e == 0) {
		dsl_snap_task_t t = { dp, rv, (int)nr, props, nprops, err, errlen };
		e = spa_sync_task(dp->dp_spa, dsl_snap_sync, &t);
	}
	tarn_mutex_unlock(&dp->dp_lock);
	tarn_array_fini(&reqs);
	return (e);
}

/* ---- reading snapshots and their space ---- */

static int
dsl_snap_ent_cmp(const void *a, const void *b)
{
	uint64_t x = ((const dsl_snap_ent_t *)a)->se_phys.ds_txg;
	uint64_t y = ((const dsl_snap_ent_t *)b)->se_phys.ds_txg;
	return (x < y ? -1 : x > y);
}

/* The snapshots of file system head, oldest first (caller frees). */
int
dsl_snap_chain(dsl_pool_t *dp, uint64_t head, dsl_snap_ent_t **out, int *np)
{
	dsl_dataset_phys_t dd;
	*out = NULL;
	*np = 0;
	int e = dsl_phys_read(dp, head, &dd);
	if (e != 0 || dd.dd_snap_zap == 0)
		return (e);
	tarn_array_t a = TARN_ARRAY_INIT(dsl_snap_ent_t);
	zap_cursor_t zc;
	zap_attribute_t za;
	zap_cursor_init(&zc, dp->dp_mos, dd.dd_snap_zap, 0);
	while ((e = zap_cursor_retrieve(&zc, &za)) == 0) {
		dsl_snap_ent_t *s = tarn_array_push(&a);
		s->se_obj = za.za_first_integer;
		(void) snprintf(s->se_name, sizeof (s->se_name), "%s", za.za_name);
		if ((e = dsl_snap_read(dp->dp_mos, s->se_obj, &s->se_phys)) != 0)
			break;
		zap_cursor_advance(&zc);
	}
	zap_cursor_fini(&zc);
	if (e != ENOENT) {
		tarn_array_fini(&a);
		return (e);
	}
	tarn_array_sort(&a, dsl_snap_ent_cmp);
	size_t n;
	*out = tarn_array_steal(&a, &n);
	*np = (int)n;
	return (0);
}

/* Referenced bytes of the state before s (its previous snapshot or a clone's origin). */
static uint64_t
dsl_snap_prev_ref(dsl_pool_t *dp, uint64_t head, uint64_t prev_obj)
{
	dsl_snap_phys_t p;
	if (prev_obj == 0) {
		dsl_dataset_phys_t dd;
		if (dsl_phys_read(dp, head, &dd) != 0 || dd.dd_origin_obj == 0)
			return (0);
		prev_obj = dd.dd_origin_obj;
	}
	return (dsl_snap_read(dp->dp_mos, prev_obj, &p) == 0 ? p.ds_referenced : 0);
}

static uint64_t
dsl_sub(uint64_t a, uint64_t b, uint64_t c)
{
	return (a + c > b ? a + c - b : 0);
}

/*
 * Fill info of snapshot obj (named snap of file system fs): its next
 * state's dead list (a newer snapshot's, or the file system's) gives
 * `used`, its own and its predecessor's `written`.  A few MOS reads,
 * whatever the number of snapshots.
 */
static void
dsl_snap_fill(dsl_pool_t *dp, const char *fs, const char *snap, uint64_t head, uint64_t obj,
    const dsl_snap_phys_t *sp, dsl_snap_info_t *out)
{
	dsl_dataset_phys_t dd;
	dsl_snap_phys_t np;
	memset(out, 0, sizeof (*out));
	dsl_join(out->dsi_name, sizeof (out->dsi_name), fs, '@', snap);
	out->dsi_obj = obj;
	out->dsi_txg = sp->ds_txg;
	out->dsi_creation = sp->ds_creation;
	out->dsi_guid = sp->ds_guid;
	out->dsi_referenced = sp->ds_referenced;
	out->dsi_lreferenced = sp->ds_lreferenced;
	out->dsi_preferenced = sp->ds_preferenced;
	out->dsi_userrefs = sp->ds_userrefs;
	out->dsi_nclones = sp->ds_nclones;
	out->dsi_defer_destroy = (sp->ds_flags & DSL_SNAP_F_DEFER_DESTROY) != 0;
	uint64_t next_dl = 0;
	if (sp->ds_next_obj != 0 && dsl_snap_read(dp->dp_mos, sp->ds_next_obj, &np) == 0)
		next_dl = np.ds_deadlist;
	else if (sp->ds_next_obj == 0 && dsl_phys_read(dp, head, &dd) == 0)
		next_dl = dd.dd_deadlist;
	(void) dsl_dl_space(dp->dp_mos, next_dl, sp->ds_prev_txg, sp->ds_txg - 1, &out->dsi_used,
	    NULL, NULL);
	uint64_t dead = 0;
	(void) dsl_dl_space(dp->dp_mos, sp->ds_deadlist, 0, UINT64_MAX, &dead, NULL, NULL);
	out->dsi_written = dsl_sub(sp->ds_referenced,
	    dsl_snap_prev_ref(dp, head, sp->ds_prev_obj), dead);
}

int
dsl_snapshot_list(dsl_pool_t *dp, const char *fs, dsl_snap_info_t **out, int *np, char *err,
    size_t errlen)
{
	*out = NULL;
	*np = 0;
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	uint64_t head;
	dsl_snap_ent_t *chain = NULL;
	int n = 0;
	int e = dsl_lookup(dp, fs, &head, err, errlen);
	if (e == 0)
		e = dsl_snap_chain(dp, head, &chain, &n);
	if (e == 0 && n > 0) {
		*out = tarn_alloc(sizeof (dsl_snap_info_t) * (size_t)n);
		for (int i = 0; i < n; i++)
			dsl_snap_fill(dp, fs, chain[i].se_name, head, chain[i].se_obj,
			    &chain[i].se_phys, &(*out)[i]);
		*np = n;
	}
	tarn_mutex_unlock(&dp->dp_lock);
	tarn_free(chain);
	return (e);
}

int
dsl_snapshot_info(dsl_pool_t *dp, const char *snap, dsl_snap_info_t *out, char *err,
    size_t errlen)
{
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	uint64_t head, obj;
	dsl_snap_phys_t sp;
	int e = dsl_snap_lookup(dp, snap, &head, &obj, err, errlen);
	if (e == 0)
		e = dsl_snap_read(dp->dp_mos, obj, &sp);
	if (e == 0) {
		const char *at = strchr(snap, '@');
		char fs[DSL_NAME_MAX];
		(void) snprintf(fs, sizeof (fs), "%.*s", (int)(at - snap), snap);
		dsl_snap_fill(dp, fs, at + 1, head, obj, &sp, out);
	}
	tarn_mutex_unlock(&dp->dp_lock);
	return (e);
}

/*
 * Space a file system's snapshots hold (every dead list of its chain and
 * its own; a clone's blocks born before its origin are the origin's),
 * its `written`, and its number of snapshots.  Lock held.
 */
int
dsl_snap_head_space(dsl_pool_t *dp, uint64_t head, uint64_t refer, uint64_t *usedsnap,
    uint64_t *written, uint64_t *nsnaps)
{
	dsl_dataset_phys_t dd;
	dsl_snap_ent_t *chain;
	int n;
	*usedsnap = 0;
	*written = refer;
	*nsnaps = 0;
	int e = dsl_phys_read(dp, head, &dd);
	if (e != 0 || dd.dd_deadlist == 0)
		return (e);
	/* a clone's blocks born before its origin (buckets below its txg) are the origin's */
	uint64_t lo = 0, b = 0;
	dsl_snap_phys_t op;
	if (dd.dd_origin_obj != 0 && dsl_snap_read(dp->dp_mos, dd.dd_origin_obj, &op) == 0)
		lo = op.ds_txg;
	/*
	 * The snapshots' own dead lists change only in sync tasks: their sum is
	 * kept per file system until the pool's next task (spa_sync_task_gen),
	 * so the space refresh after every txg reads only the file system's.
	 */
	uint64_t gen = spa_sync_task_gen(dp->dp_spa);
	dsl_snap_sum_t *c = NULL;
	for (size_t i = 0; i < tarn_array_len(&dp->dp_snap_sums) && c == NULL; i++) {
		dsl_snap_sum_t *x = tarn_array_get(&dp->dp_snap_sums, i);
		if (x->dss_head == head)
			c = x;
	}
	if (c == NULL) {
		c = tarn_array_push(&dp->dp_snap_sums);
		c->dss_head = head;
		c->dss_gen = UINT64_MAX;
	}
	if (c->dss_gen != gen) {
		if ((e = dsl_snap_chain(dp, head, &chain, &n)) != 0)
			return (e);
		c->dss_sum = 0;
		for (int i = 0; i < n && e == 0; i++) {
			e = dsl_dl_space(dp->dp_mos, chain[i].se_phys.ds_deadlist, lo, UINT64_MAX,
			    &b, NULL, NULL);
			c->dss_sum += b;
		}
		tarn_free(chain);
		if (e != 0)
			return (e);
		c->dss_n = (uint64_t)n;
		c->dss_gen = gen;
	}
	*usedsnap = c->dss_sum;
	n = (int)c->dss_n;
	if (e == 0)
		e = dsl_dl_space(dp->dp_mos, dd.dd_deadlist, lo, UINT64_MAX, &b, NULL, NULL);
	*usedsnap += b;
	uint64_t dead = 0;
	if (e == 0)
		e = dsl_dl_space(dp->dp_mos, dd.dd_deadlist, 0, UINT64_MAX, &dead, NULL, NULL);
	*written = dsl_sub(refer, dsl_snap_prev_ref(dp, head, dd.dd_prev_snap_obj), dead);
	*nsnaps = (uint64_t)n;
	return (e);
}

int
dsl_dataset_written_since(dsl_pool_t *dp, const char *name, const char *snap, uint64_t *out,
    char *err, size_t errlen)
{
	char full[DSL_NAME_MAX], fs[DSL_NAME_MAX];
	const char *at = strchr(name, '@');
	(void) snprintf(fs, sizeof (fs), "%.*s", at ? (int)(at - name) : (int)strlen(name), name);
	if (strchr(snap, '@') == NULL)
		dsl_join(full, sizeof (full), fs, '@', snap);
	else if (snap[0] == '@')
		(void) snprintf(full, sizeof (full), "%s%s", fs, snap);
	else
		(void) snprintf(full, sizeof (full), "%s", snap);
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	uint64_t head, head2, from, to = 0;
	dsl_snap_ent_t *chain = NULL;
	int n = 0;
	int e = dsl_snap_lookup(dp, full, &head, &from, err, errlen);
	if (e == 0 && at != NULL)
		e = dsl_snap_lookup(dp, name, &head2, &to, err, errlen);
	else if (e == 0)
		e = dsl_lookup(dp, fs, &head2, err, errlen);
	if (e == 0 && head2 != head) {
		(void) snprintf(err, errlen, "not an earlier snapshot from the same fs");
		e = SET_ERROR(EXDEV);
	}
	if (e == 0)
		e = dsl_snap_chain(dp, head, &chain, &n);
	int fi = -1, ti = n;            /* ti = n: the file system itself */
	for (int i = 0; e == 0 && i < n; i++) {
		if (chain[i].se_obj == from)
			fi = i;
		if (chain[i].se_obj == to)
			ti = i;
	}
	if (e == 0 && (fi < 0 || fi > ti)) {
		(void) snprintf(err, errlen, "not an earlier snapshot from the same fs");
		e = SET_ERROR(EXDEV);
	}
	uint64_t refer = 0, dead = 0, b;
	if (e == 0 && ti < n) {
		refer = chain[ti].se_phys.ds_referenced;
	} else if (e == 0) {
		objset_t *os;
		if ((e = dsl_os_get(dp, head, &os)) == 0)
			dmu_objset_space(os, &refer);
	}
	/* blocks alive at `from` that died before `to`: buckets below from's txg */
	uint64_t ftxg = e == 0 ? chain[fi].se_phys.ds_txg : 0;
	for (int i = fi + 1; e == 0 && i <= ti; i++) {
		uint64_t dl = chain[i < n ? i : 0].se_phys.ds_deadlist;
		if (i == n) {
			dsl_dataset_phys_t dd;
			e = dsl_phys_read(dp, head, &dd);
			dl = dd.dd_deadlist;
		}
		if (e == 0)
			e = dsl_dl_space(dp->dp_mos, dl, 0, ftxg - 1, &b, NULL, NULL);
		dead += b;
	}
	if (e == 0)
		*out = dsl_sub(refer, chain[fi].se_phys.ds_referenced, dead);
	tarn_mutex_unlock(&dp->dp_lock);
	tarn_free(chain);
	return (e);
}

/* ---- snapshots' object sets, read-only and shared ---- */

typedef struct dsl_snap_open {
	spa_t    *so_spa;
	uint64_t  so_obj;
	objset_t *so_os;
	int       so_refs;
} dsl_snap_open_t;

static pthread_mutex_t dsl_snap_open_lock = PTHREAD_MUTEX_INITIALIZER;
static tarn_array_t dsl_snap_opens = TARN_ARRAY_INIT(dsl_snap_open_t);

bool
dsl_snap_is_open(spa_t *spa, uint64_t obj)
{
	bool open = false;
	pthread_mutex_lock(&dsl_snap_open_lock);
	for (size_t i = 0; i < tarn_array_len(&dsl_snap_opens) && !open; i++) {
		dsl_snap_open_t *o = tarn_array_get(&dsl_snap_opens, i);
		open = o->so_spa == spa && o->so_obj == obj;
	}
	pthread_mutex_unlock(&dsl_snap_open_lock);
	return (open);
}

int
dsl_snapshot_objset_open(dsl_pool_t *dp, const char *snap, objset_t **osp, char *err,
    size_t errlen)
{
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	uint64_t head, obj;
	dsl_snap_phys_t sp;
	int e = dsl_snap_lookup(dp, snap, &head, &obj, err, errlen);
	if (e == 0)
		e = dsl_snap_read(dp->dp_mos, obj, &sp);
	pthread_mutex_lock(&dsl_snap_open_lock);
	for (size_t i = 0; e == 0 && i < tarn_array_len(&dsl_snap_opens); i++) {
		dsl_snap_open_t *o = tarn_array_get(&dsl_snap_opens, i);
		if (o->so_spa == dp->dp_spa && o->so_obj == obj) {
			o->so_refs++;
			*osp = o->so_os;
			pthread_mutex_unlock(&dsl_snap_open_lock);
			tarn_mutex_unlock(&dp->dp_lock);
			return (0);
		}
	}
	objset_t *os = NULL;
	if (e == 0) {
		dmu_objset_props_t p = { .osp_checksum = ZIO_CHECKSUM_DEFAULT,
			.osp_compress = ZIO_COMPRESS_OFF, .osp_copies = 1 };
		e = dmu_objset_open(spa_dmu_pool(dp->dp_spa), &sp.ds_bp, &p, &os);
		if (e != 0)
			(void) snprintf(err, errlen, "cannot open snapshot: %s", strerror(e));
	}
	if (e == 0) {
		dsl_snap_open_t *o = tarn_array_push(&dsl_snap_opens);
		o->so_spa = dp->dp_spa;
		o->so_obj = obj;
		o->so_os = os;
		o->so_refs = 1;
		*osp = os;
	}
	pthread_mutex_unlock(&dsl_snap_open_lock);
	tarn_mutex_unlock(&dp->dp_lock);
	return (e);
}

void
dsl_snapshot_objset_close(dsl_pool_t *dp, objset_t *os)
{
	(void) dp;
	objset_t *close = NULL;
	pthread_mutex_lock(&dsl_snap_open_lock);
	for (size_t i = 0; i < tarn_array_len(&dsl_snap_opens); i++) {
		dsl_snap_open_t *o = tarn_array_get(&dsl_snap_opens, i);
		if (o->so_os == os) {
			if (--o->so_refs == 0) {
				close = os;
				tarn_array_remove_swap(&dsl_snap_opens, i);
			}
			break;
		}
	}
	pthread_mutex_unlock(&dsl_snap_open_lock);
	if (close != NULL)
		dmu_objset_close(close);
}
