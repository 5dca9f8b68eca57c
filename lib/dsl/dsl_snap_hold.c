/*
 * dsl_snap_hold.c — renaming snapshots, holds and bookmarks.
 *
 * Theory.  A rename moves one entry in the file system's table of
 * snapshot names; a snapshot open under .zfs (dsl_snap_is_open) is busy.
 * Holds are tags in a per-snapshot table counted in ds_userrefs; a held
 * snapshot is not destroyed, and the release of the last hold of one
 * marked by destroy -d destroys it in the same sync task, so the two are
 * one txg.  Renames and holds are sync tasks whose checks run again in
 * syncing context, so a batch (-r) is all or nothing.  A bookmark is a
 * record (guid, txg, creation) in the file system's bookmark table: what
 * an incremental send needs of a snapshot, holding no blocks.
 */
#include "dsl_impl.h"

/* ---- rename, holds, bookmarks ---- */

typedef struct dsl_snap_rename_task {
	dsl_pool_t *dp;
	uint64_t *heads;
	int      n;
	const char *from, *to;
	char    *err;
	size_t   errlen;
} dsl_snap_rename_task_t;

static int
dsl_snap_rename_sync(void *arg, dmu_tx_t *tx)
{
	dsl_snap_rename_task_t *t = arg;
	objset_t *mos = t->dp->dp_mos;
	uint64_t obj;
	for (int i = 0; i < t->n; i++) {
		dsl_dataset_phys_t dd;
		int e = dsl_phys_read(t->dp, t->heads[i], &dd);
		if (e == 0 && dd.dd_snap_zap != 0 && zap_lookup_int(mos, dd.dd_snap_zap, t->to,
		    &obj) == 0) {
			(void) snprintf(t->err, t->errlen, "dataset already exists");
			return (SET_ERROR(EEXIST));
		}
		if (e == 0 && (dd.dd_snap_zap == 0 || zap_lookup_int(mos, dd.dd_snap_zap, t->from,
		    &obj) != 0)) {
			(void) snprintf(t->err, t->errlen, "dataset does not exist");
			return (SET_ERROR(ENOENT));
		}
		if (e != 0)
			return (e);
		if (dsl_snap_is_open(t->dp->dp_spa, obj)) {
			(void) snprintf(t->err, t->errlen, "dataset is busy");
			return (SET_ERROR(EBUSY));
		}
	}
	for (int i = 0; i < t->n; i++) {
		dsl_dataset_phys_t dd;
		int e = dsl_phys_read(t->dp, t->heads[i], &dd);
		if (e == 0)
			e = zap_lookup_int(mos, dd.dd_snap_zap, t->from, &obj);
		if (e == 0)
			e = zap_remove(mos, dd.dd_snap_zap, t->from, tx);
		if (e == 0)
			e = zap_add_int(mos, dd.dd_snap_zap, t->to, obj, tx);
		if (e != 0)
			return (SET_ERROR(EIO));
	}
	return (0);
}

typedef struct dsl_heads_collect {
	dsl_pool_t *dp;
	tarn_array_t heads;
	const char *snap;
} dsl_heads_collect_t;

/* Descendants that have a snapshot of that name (-r). */
static int
dsl_heads_cb(void *arg, const char *name, int depth)
{
	dsl_heads_collect_t *c = arg;
	char full[DSL_NAME_MAX + ZAP_MAXNAMELEN];
	(void) snprintf(full, sizeof (full), "%s@%s", name, c->snap);
	uint64_t head, obj;
	char err[64];
	tarn_mutex_lock(&c->dp->dp_lock, DSL_POOL);
	if (depth > 0 && dsl_snap_lookup(c->dp, full, &head, &obj, err, sizeof (err)) == 0)
		TARN_ARRAY_APPEND(&c->heads, uint64_t, head);
	tarn_mutex_unlock(&c->dp->dp_lock);
	return (0);
}

static int
dsl_snap_name_check(const char *snap, char *err, size_t errlen)
{
	char full[DSL_NAME_MAX + 8];
	(void) snprintf(full, sizeof (full), "x@%s", snap);
	return (dsl_snap_name_validate(full, '@', err, errlen));
}

int
dsl_snapshot_rename(dsl_pool_t *dp, const char *oldname, const char *newname, bool recursive,
    char *err, size_t errlen)
{
	err[0] = '\0';
	const char *oat = strchr(oldname, '@'), *nat = strchr(newname, '@');
	if (oat == NULL) {
		(void) snprintf(err, errlen, "invalid name");
		return (SET_ERROR(EINVAL));
	}
	const char *to = nat ? nat + 1 : newname;
	if (nat != NULL && (nat - newname != oat - oldname ||
	    strncmp(oldname, newname, (size_t)(oat - oldname)) != 0)) {
		(void) snprintf(err, errlen, "snapshots must be part of same dataset");
		return (SET_ERROR(EXDEV));
	}
	int e = dsl_snap_name_check(to, err, errlen);
	if (e != 0)
		return (e);
	char fs[DSL_NAME_MAX];
	(void) snprintf(fs, sizeof (fs), "%.*s", (int)(oat - oldname), oldname);
	dsl_heads_collect_t c = { dp, TARN_ARRAY_INIT(uint64_t), oat + 1 };
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	uint64_t head, obj;
	e = dsl_writable(dp, err, errlen);
	if (e == 0)
		e = dsl_snap_lookup(dp, oldname, &head, &obj, err, errlen);
	if (e == 0)
		TARN_ARRAY_APPEND(&c.heads, uint64_t, head);
	tarn_mutex_unlock(&dp->dp_lock);
	if (e == 0 && recursive)
		(void) dsl_dataset_iter(dp, fs, -1, dsl_heads_cb, &c);
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	if (e == 0) {
		dsl_snap_rename_task_t t = { dp, tarn_array_base(&c.heads),
			(int)tarn_array_len(&c.heads), oat + 1, to, err, errlen };
		e = spa_sync_task(dp->dp_spa, dsl_snap_rename_sync, &t);
	}
	tarn_mutex_unlock(&dp->dp_lock);
	tarn_array_fini(&c.heads);
	return (e);
}

/* Holds: a task per call, so that a release and a deferred destroy are one txg. */
typedef struct dsl_hold_task {
	dsl_pool_t *dp;
	uint64_t *snaps;
	int      n;
	const char *tag;
	bool     release;
	char    *err;
	size_t   errlen;
} dsl_hold_task_t;

static int
dsl_hold_sync(void *arg, dmu_tx_t *tx)
{
	dsl_hold_task_t *t = arg;
	objset_t *mos = t->dp->dp_mos;
	uint64_t v;
	for (int i = 0; i < t->n; i++) {        /* checks first */
		dsl_snap_phys_t sp;
		int e = dsl_snap_read(mos, t->snaps[i], &sp);
		if (e != 0)
			return (e);
		bool has = sp.ds_holds_zap != 0 && zap_lookup_int(mos, sp.ds_holds_zap, t->tag,
		    &v) == 0;
		if (!t->release && has) {
			(void) snprintf(t->err, t->errlen, "tag already exists on this dataset");
			return (SET_ERROR(EEXIST));
		}
		if (t->release && !has) {
			(void) snprintf(t->err, t->errlen, "no such tag on this dataset");
			return (SET_ERROR(ESRCH));
		}
	}
	for (int i = 0; i < t->n; i++) {
		dsl_snap_phys_t sp;
		int e = dsl_snap_read(mos, t->snaps[i], &sp);
		if (e == 0 && !t->release) {
			if (sp.ds_holds_zap == 0)
				e = zap_create(mos, DMU_OT_ZAP, tx, &sp.ds_holds_zap);
			if (e == 0)
				e = zap_add_int(mos, sp.ds_holds_zap, t->tag, tarn_wall_sec(), tx);
			sp.ds_userrefs++;
		} else if (e == 0) {
			e = zap_remove(mos, sp.ds_holds_zap, t->tag, tx);
			sp.ds_userrefs--;
		}
		if (e == 0)
			e = dsl_snap_write(mos, t->snaps[i], &sp, tx);
		if (e == 0 && t->release && sp.ds_userrefs == 0 &&
		    (sp.ds_flags & DSL_SNAP_F_DEFER_DESTROY) && sp.ds_nclones == 0) {
			uint64_t freed = 0;
			e = dsl_snap_destroy_one_sync(t->dp, t->snaps[i], tx, &freed);
		}
		if (e != 0)
			return (SET_ERROR(EIO));
	}
	return (0);
}

static int
dsl_hold_common(dsl_pool_t *dp, const char *const *snaps, int n, const char *tag,
    bool recursive, bool release, char *err, size_t errlen)
{
	err[0] = '\0';
	if (tag[0] == '\0' || strlen(tag) >= ZAP_MAXNAMELEN) {
		(void) snprintf(err, errlen, tag[0] ? "tag too long" : "tag name is empty");
		return (SET_ERROR(EINVAL));
	}
	tarn_array_t objs = TARN_ARRAY_INIT(uint64_t);
	int e = 0;
	for (int i = 0; i < n && e == 0; i++) {
		uint64_t head, obj;
		tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
		e = dsl_writable(dp, err, errlen);
		if (e == 0)
			e = dsl_feature_check(dp, err, errlen);
		if (e == 0)
			e = dsl_snap_lookup(dp, snaps[i], &head, &obj, err, errlen);
		if (e == 0)
			TARN_ARRAY_APPEND(&objs, uint64_t, obj);
		tarn_mutex_unlock(&dp->dp_lock);
		if (e == 0 && recursive) {
			const char *at = strchr(snaps[i], '@');
			char fs[DSL_NAME_MAX];
			(void) snprintf(fs, sizeof (fs), "%.*s", (int)(at - snaps[i]), snaps[i]);
			dsl_heads_collect_t c = { dp, TARN_ARRAY_INIT(uint64_t), at + 1 };
			(void) dsl_dataset_iter(dp, fs, -1, dsl_heads_cb, &c);
			tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
			for (size_t k = 0; k < tarn_array_len(&c.heads) && e == 0; k++) {
				dsl_dataset_phys_t dd;
				e = dsl_phys_read(dp, TARN_ARRAY_AT(&c.heads, uint64_t, k), &dd);
				if (e == 0)
					e = zap_lookup_int(dp->dp_mos, dd.dd_snap_zap, at + 1, &obj);
				if (e == 0)
					TARN_ARRAY_APPEND(&objs, uint64_t, obj);
			}
			tarn_mutex_unlock(&dp->dp_lock);
			tarn_array_fini(&c.heads);
		}
	}
	if (e == 0) {
		tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
		dsl_hold_task_t t = { dp, tarn_array_base(&objs), (int)tarn_array_len(&objs), tag,
			release, err, errlen };
		e = spa_sync_task(dp->dp_spa, dsl_hold_sync, &t);
		tarn_mutex_unlock(&dp->dp_lock);
	}
	tarn_array_fini(&objs);
	return (e);
}

int
dsl_hold(dsl_pool_t *dp, const char *const *snaps, int n, const char *tag, bool recursive,
    char *err, size_t errlen)
{
	return (dsl_hold_common(dp, snaps, n, tag, recursive, false, err, errlen));
}

int
dsl_release(dsl_pool_t *dp, const char *const *snaps, int n, const char *tag, bool recursive,
    char *err, size_t errlen)
{
	return (dsl_hold_common(dp, snaps, n, tag, recursive, true, err, errlen));
}

int
dsl_holds(dsl_pool_t *dp, const char *snap, dsl_hold_fn_t fn, void *arg, char *err,
    size_t errlen)
{
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	uint64_t head, obj;
	dsl_snap_phys_t sp;
	int e = dsl_snap_lookup(dp, snap, &head, &obj, err, errlen);
	if (e == 0)
		e = dsl_snap_read(dp->dp_mos, obj, &sp);
	tarn_array_t tags = TARN_ARRAY_INIT(zap_attribute_t);
	if (e == 0 && sp.ds_holds_zap != 0) {
		zap_cursor_t zc;
		zap_attribute_t za;
		zap_cursor_init(&zc, dp->dp_mos, sp.ds_holds_zap, 0);
		while ((e = zap_cursor_retrieve(&zc, &za)) == 0) {
			*(zap_attribute_t *)tarn_array_push(&tags) = za;
			zap_cursor_advance(&zc);
		}
		zap_cursor_fini(&zc);
		e = e == ENOENT ? 0 : e;
	}
	tarn_mutex_unlock(&dp->dp_lock);
	for (size_t i = 0; e == 0 && i < tarn_array_len(&tags); i++) {
		zap_attribute_t *za = tarn_array_get(&tags, i);
		fn(arg, snap, za->za_name, za->za_first_integer);
	}
	tarn_array_fini(&tags);
	return (e);
}

/* Bookmarks: a ZAP of the file system, name -> [guid, txg, creation]. */
int
dsl_bookmark_create(dsl_pool_t *dp, const char *src, const char *bm, char *err, size_t errlen)
{
	err[0] = '\0';
	int e = dsl_snap_name_validate(bm, '#', err, errlen);
	if (e != 0)
		return (e);
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	char fs[DSL_NAME_MAX], sfs[DSL_NAME_MAX];
	const char *bname, *sname;
	uint64_t head, shead, rec[3];
	e = dsl_writable(dp, err, errlen);
	if (e == 0)
		e = dsl_feature_check(dp, err, errlen);
	if (e == 0)
		e = dsl_split_at(dp, bm, '#', &head, fs, &bname, err, errlen);
	if (e == 0 && strchr(src, '#') != NULL) {
		e = dsl_split_at(dp, src, '#', &shead, sfs, &sname, err, errlen);
		dsl_dataset_phys_t dd;
		if (e == 0)
			e = dsl_phys_read(dp, shead, &dd);
		if (e == 0 && (dd.dd_bookmark_zap == 0 ||
		    zap_lookup(dp->dp_mos, dd.dd_bookmark_zap, sname, 8, 3, rec) != 0)) {
			(void) snprintf(err, errlen, "bookmark does not exist");
			e = SET_ERROR(ENOENT);
		}
	} else if (e == 0) {
		uint64_t sobj;
		dsl_snap_phys_t sp;
		e = dsl_snap_lookup(dp, src, &shead, &sobj, err, errlen);
		if (e == 0)
			e = dsl_snap_read(dp->dp_mos, sobj, &sp);
		rec[0] = sp.ds_guid;
		rec[1] = sp.ds_txg;
		rec[2] = sp.ds_creation;
	}
	if (e == 0 && shead != head) {
		(void) snprintf(err, errlen, "source is not an ancestor of the new bookmark's "
		    "dataset");
		e = SET_ERROR(EINVAL);
	}
	dsl_dataset_phys_t dd;
	if (e == 0)
		e = dsl_phys_read(dp, head, &dd);
	uint64_t tmp[3];
	if (e == 0 && dd.dd_bookmark_zap != 0 &&
	    zap_lookup(dp->dp_mos, dd.dd_bookmark_zap, bname, 8, 3, tmp) == 0) {
		(void) snprintf(err, errlen, "bookmark exists");
		e = SET_ERROR(EEXIST);
	}
	dmu_tx_t *tx;
	if (e == 0 && (e = dsl_tx_begin(dp, false, &tx)) == 0) {
		if (dd.dd_bookmark_zap == 0) {
			e = zap_create(dp->dp_mos, DMU_OT_ZAP, tx, &dd.dd_bookmark_zap);
			if (e == 0)
				e = dsl_head_write(dp->dp_mos, head, &dd, tx);
		}
		if (e == 0)
			e = zap_add(dp->dp_mos, dd.dd_bookmark_zap, bname, 8, 3, rec, tx);
		int e2 = dsl_tx_end(dp, tx);
		e = e ? e : e2;
	}
	tarn_mutex_unlock(&dp->dp_lock);
	return (e);
}

int
dsl_bookmark_list(dsl_pool_t *dp, const char *fs, dsl_bookmark_info_t **out, int *np,
    char *err, size_t errlen)
{
	*out = NULL;
	*np = 0;
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	uint64_t head;
	dsl_dataset_phys_t dd;
	int e = dsl_lookup(dp, fs, &head, err, errlen);
	if (e == 0)
		e = dsl_phys_read(dp, head, &dd);
	tarn_array_t a = TARN_ARRAY_INIT(dsl_bookmark_info_t);
	if (e == 0 && dd.dd_bookmark_zap != 0) {
		zap_cursor_t zc;
		zap_attribute_t za;
		zap_cursor_init(&zc, dp->dp_mos, dd.dd_bookmark_zap, 0);
		while ((e = zap_cursor_retrieve(&zc, &za)) == 0) {
			uint64_t rec[3];
			if (zap_lookup(dp->dp_mos, dd.dd_bookmark_zap, za.za_name, 8, 3, rec) == 0) {
				dsl_bookmark_info_t *b = tarn_array_push(&a);
				dsl_join(b->dbi_name, sizeof (b->dbi_name), fs, '#', za.za_name);
				b->dbi_guid = rec[0];
				b->dbi_txg = rec[1];
				b->dbi_creation = rec[2];
			}
			zap_cursor_advance(&zc);
		}
		zap_cursor_fini(&zc);
		e = e == ENOENT ? 0 : e;
	}
	tarn_mutex_unlock(&dp->dp_lock);
	size_t n;
	*out = tarn_array_steal(&a, &n);
	*np = (int)n;
	return (e);
}

int
dsl_bookmark_destroy(dsl_pool_t *dp, const char *bm, char *err, size_t errlen)
{
	err[0] = '\0';
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	char fs[DSL_NAME_MAX];
	const char *bname;
	uint64_t head, rec[3];
	dsl_dataset_phys_t dd;
	int e = dsl_writable(dp, err, errlen);
	if (e == 0)
		e = dsl_split_at(dp, bm, '#', &head, fs, &bname, err, errlen);
	if (e == 0)
		e = dsl_phys_read(dp, head, &dd);
	if (e == 0 && (dd.dd_bookmark_zap == 0 ||
	    zap_lookup(dp->dp_mos, dd.dd_bookmark_zap, bname, 8, 3, rec) != 0)) {
		(void) snprintf(err, errlen, "bookmark does not exist");
		e = SET_ERROR(ENOENT);
	}
	dmu_tx_t *tx;
	if (e == 0 && (e = dsl_tx_begin(dp, true, &tx)) == 0) {
		e = zap_remove(dp->dp_mos, dd.dd_bookmark_zap, bname, tx);
		int e2 = dsl_tx_end(dp, tx);
		e = e ? e : e2;
	}
	tarn_mutex_unlock(&dp->dp_lock);
	return (e);
}
