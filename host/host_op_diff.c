/*
 * host_op_diff.c — the operation behind zfs diff:
 *
 *   fs.diff   from: "fs@snap" | "@snap"    the older snapshot
 *             to?: "fs@snap" | "@snap" | "fs"   a later snapshot of the same
 *                                          file system (or of a clone of it,
 *                                          from being its origin), or the
 *                                          file system itself; absent: from's
 *                                          file system
 *     parts   {lines: [[what, mode, ctime_sec, ctime_nsec, path, topath, links]...]}
 *             what "+", "-", "M", "R"; paths escaped as zfs prints them
 *             (posix_diff_escape) and under the file system's mountpoint;
 *             topath null but for R; links the link count's change (0: none)
 *     result  -
 *
 * The names are taken as zfs takes them (one side may leave out the file
 * system: "@snap"); the checks and their messages are zfs's ("badly
 * formed snapshot name", "unable to determine which snapshots to
 * compare", "not an earlier snapshot from the same fs"), reported as
 * "cannot diff 'NAME': ...".  A missing file system is "cannot open
 * 'fs': dataset does not exist", a missing snapshot "cannot diff
 * 'fs@snap': snapshot does not exist".
 *
 * Both states are opened read-only: a snapshot through
 * dsl_snapshot_objset_open, the file system itself as the dataset's
 * object set read after a txg sync (zfs takes a temporary snapshot
 * instead; here nothing is written): the walk sees the tree of that
 * sync, and the inodes it finds changed as they are when it reads them.
 * The walk is posix_diff (lib/posix/posix_diff.c): its cost is what
 * changed, not the file system's size.  Records go out in parts of
 * DIFF_BATCH lines, so a large diff streams; a reader that went away
 * stops the walk.
 *
 * Paths start with where the file system is mounted (the daemon's mount
 * table), else its mountpoint property; one with mountpoint none or
 * legacy that is not mounted has no paths: "cannot diff 'fs': file
 * system is not mounted" (zfs: "Cannot diff an unmounted snapshot").
 */
#include "host_impl.h"

#define DIFF_BATCH 512

typedef struct diff_names {
	char dn_fs[DSL_NAME_MAX];       /* the file system whose paths are shown */
	char dn_from[DSL_NAME_MAX];     /* fs@snap */
	char dn_to[DSL_NAME_MAX];       /* fs@snap, or the file system itself */
	bool dn_to_live;
	bool dn_clone;                  /* from is another file system's (to's origin) */
} diff_names_t;

typedef struct diff_out {
	char        *do_mnt;            /* the escaped mountpoint ("" for "/") */
	json_object *do_lines;
	int          do_n;
} diff_out_t;

/*
 * Split the two names as zfs does: "ds@snap" or "@snap" each, the file
 * system named at least once, both the same file system unless `to` is
 * a clone (checked later).  0, or reported.
 */
static int
diff_split(const char *from, const char *to, diff_names_t *dn)
{
	memset(dn, 0, sizeof (*dn));
	if (strlen(from) >= DSL_NAME_MAX || (to != NULL && strlen(to) >= DSL_NAME_MAX))
		return (host_report("diff", strlen(from) >= DSL_NAME_MAX ? from : to,
		    ENAMETOOLONG, "name is too long"));
	const char *fat = strchr(from, '@'), *tat = to != NULL ? strchr(to, '@') : NULL;
	size_t fdslen = fat != NULL ? (size_t)(fat - from) : strlen(from);
	size_t fsnlen = strlen(from) - fdslen;      /* with the '@' */
	if (to == NULL) {
		if (fat == NULL || fdslen == 0 || fsnlen <= 1)
			return (host_report("diff", from, EINVAL, "badly formed snapshot name"));
		(void) snprintf(dn->dn_fs, sizeof (dn->dn_fs), "%.*s", (int)fdslen, from);
		(void) snprintf(dn->dn_from, sizeof (dn->dn_from), "%s", from);
		(void) snprintf(dn->dn_to, sizeof (dn->dn_to), "%s", dn->dn_fs);
		dn->dn_to_live = true;
		return (0);
	}
	size_t tdslen = tat != NULL ? (size_t)(tat - to) : strlen(to);
	size_t tsnlen = strlen(to) - tdslen;
	if (fsnlen <= 1 || tsnlen == 1 || (fdslen == 0 && tdslen == 0))
		return (host_report("diff", from, EINVAL,
		    "unable to determine which snapshots to compare"));
	dn->dn_clone = fdslen > 0 && tdslen > 0 &&
	    (fdslen != tdslen || strncmp(from, to, fdslen) != 0);
	const char *ds = tdslen > 0 ? to : from;
	size_t dslen = tdslen > 0 ? tdslen : fdslen;
	(void) snprintf(dn->dn_fs, sizeof (dn->dn_fs), "%.*s", (int)dslen, ds);
	if (dn->dn_clone)
		(void) snprintf(dn->dn_from, sizeof (dn->dn_from), "%s", from);
	else
		(void) snprintf(dn->dn_from, sizeof (dn->dn_from), "%s%s", dn->dn_fs, fat);
	if (tsnlen > 0) {
		(void) snprintf(dn->dn_to, sizeof (dn->dn_to), "%s%s", dn->dn_fs, tat);
	} else {
		(void) snprintf(dn->dn_to, sizeof (dn->dn_to), "%s", dn->dn_fs);
		dn->dn_to_live = true;
	}
	return (0);
}

/* A snapshot's createtxg; a missing one reported. */
static int
diff_snap_txg(host_fs_t *fs, const char *snap, uint64_t *txg)
{
	dsl_snap_info_t si;
	char err[256];
	int e = dsl_snapshot_info(fs->hf_dp, snap, &si, err, sizeof (err));
	if (e == ENOENT)
		return (host_report("diff", snap, e, "snapshot does not exist"));
	if (e != 0)
		return (host_report("diff", snap, e, err));
	*txg = si.dsi_txg;
	return (0);
}

/* from must be before to: an earlier snapshot of to's file system, or its origin. */
static int
diff_check_order(host_fs_t *fs, const diff_names_t *dn, uint64_t from_txg)
{
	uint64_t to_txg = 0;
	if (!dn->dn_to_live && diff_snap_txg(fs, dn->dn_to, &to_txg) != 0)
		return (HOST_FAILED);
	if (dn->dn_clone) {
		char origin[DSL_NAME_MAX];
		if (dsl_dataset_origin(fs->hf_dp, dn->dn_fs, origin, sizeof (origin)) != 0 ||
		    strcmp(origin, dn->dn_from) != 0)
			return (host_report("diff", dn->dn_from, EXDEV,
			    "not an earlier snapshot from the same fs"));
		return (0);
	}
	if (!dn->dn_to_live && to_txg <= from_txg)
		return (host_report("diff", dn->dn_from, EXDEV,
		    "not an earlier snapshot from the same fs"));
	return (0);
}

/* Where the paths start: the mount's directory, else the mountpoint property. */
static int
diff_mountpoint(host_fs_t *fs, const char *name, diff_out_t *o)
{
	char **names, **mps, *mnt = NULL;
	int n;
	(void) host_mount_list(&names, &mps, &n);
	for (int i = 0; i < n && mnt == NULL; i++)
		if (strcmp(names[i], name) == 0)
			mnt = tarn_strdup(mps[i]);
	host_names_free(names, n);
	host_names_free(mps, n);
	if (mnt == NULL) {
		dsl_prop_val_t *v = tarn_alloc(sizeof (*v));
		if (dsl_prop_get(fs->hf_dp, name, DSL_PROP_MOUNTPOINT, false, v, NULL, 0) == 0 &&
		    v->dpv_str[0] == '/')
			mnt = tarn_strdup(v->dpv_str);
		tarn_free(v);
	}
	if (mnt == NULL)
		return (host_report("diff", name, EINVAL, "file system is not mounted"));
	if (strcmp(mnt, "/") == 0)
		mnt[0] = '\0';
	size_t len = posix_diff_escape(mnt, NULL, 0) + 1;
	o->do_mnt = tarn_alloc(len);
	(void) posix_diff_escape(mnt, o->do_mnt, len);
	tarn_free(mnt);
	return (0);
}

/* The mountpoint and path, escaped, as a JSON string. */
static json_object *
diff_path_json(const diff_out_t *o, const char *path)
{
	size_t ml = strlen(o->do_mnt), len = ml + posix_diff_escape(path, NULL, 0) + 1;
	char *buf = tarn_alloc(len);
	memcpy(buf, o->do_mnt, ml);
	(void) posix_diff_escape(path, buf + ml, len - ml);
	json_object *s = json_object_new_string(buf);
	tarn_free(buf);
	return (s);
}

static int
diff_flush(diff_out_t *o)
{
	if (o->do_n == 0)
		return (0);
	json_object *part = json_object_new_object();
	json_object_object_add(part, "lines", o->do_lines);
	o->do_lines = json_object_new_array();
	o->do_n = 0;
	return (host_emit(part) != 0 ? SET_ERROR(EPIPE) : 0);
}

static int
diff_rec(void *arg, const posix_diff_rec_t *r)
{
	diff_out_t *o = arg;
	char what[2] = { r->pdr_what, '\0' };
	json_object *l = json_object_new_array_ext(7);
	json_object_array_add(l, json_object_new_string(what));
	json_object_array_add(l, json_object_new_int64(r->pdr_mode));
	json_object_array_add(l, json_object_new_int64(r->pdr_ctime[0]));
	json_object_array_add(l, json_object_new_int64(r->pdr_ctime[1]));
	json_object_array_add(l, diff_path_json(o, r->pdr_path));
	json_object_array_add(l, r->pdr_topath != NULL ? diff_path_json(o, r->pdr_topath) : NULL);
	json_object_array_add(l, json_object_new_int64(r->pdr_links));
	json_object_array_add(o->do_lines, l);
	if (++o->do_n < DIFF_BATCH)
		return (0);
	return (host_cancelled() ? SET_ERROR(EINTR) : diff_flush(o));
}

/* Open both states read-only and walk. */
static int
diff_run(host_fs_t *fs, const diff_names_t *dn, uint64_t from_txg, diff_out_t *o)
{
	objset_t *fos = NULL, *tos = NULL;
	char err[256] = "";
	int e = dsl_snapshot_objset_open(fs->hf_dp, dn->dn_from, &fos, err, sizeof (err));
	if (e != 0)
		return (host_report("diff", dn->dn_from, e, err));
	if (dn->dn_to_live) {
		e = dsl_dataset_objset(fs->hf_dp, dn->dn_to, &tos);
		/* the tree as of a sync that holds everything done before the command */
		if (e == 0 && !spa_readonly(fs->hf_spa))
			e = txg_wait_synced(spa_dmu_pool(fs->hf_spa), 0);
	} else {
		e = dsl_snapshot_objset_open(fs->hf_dp, dn->dn_to, &tos, err, sizeof (err));
	}
	int ret = 0;
	if (e != 0) {
		ret = host_report("diff", dn->dn_to, e, err[0] != '\0' ? err : NULL);
	} else {
		e = posix_diff(fos, tos, from_txg, diff_rec, o);
		if (e == 0)
			e = diff_flush(o);
		if (e == EPIPE || e == EINTR)
			ret = HOST_FAILED;      /* the reader went away: nobody to tell */
		else if (e != 0)
			ret = host_report("diff", dn->dn_from, e, e == EINVAL ?
			    "not a file system" : NULL);
	}
	if (tos != NULL && !dn->dn_to_live)
		dsl_snapshot_objset_close(fs->hf_dp, tos);
	dsl_snapshot_objset_close(fs->hf_dp, fos);
	return (ret);
}

static int
op_fs_diff(json_object *args, json_object *res)
{
	const char *from, *to = host_arg_str(args, "to");
	diff_names_t dn;
	host_fs_t fs;
	uint64_t from_txg = 0;

	(void) res;
	if (host_arg_need(args, "from", "diff", &from) != 0 || diff_split(from, to, &dn) != 0)
		return (HOST_FAILED);
	if (host_fs_open_existing(dn.dn_fs, true, &fs) != 0)
		return (HOST_FAILED);
	diff_out_t o = { .do_lines = json_object_new_array() };
	int ret = diff_snap_txg(&fs, dn.dn_from, &from_txg);
	if (ret == 0)
		ret = diff_check_order(&fs, &dn, from_txg);
	if (ret == 0)
		ret = diff_mountpoint(&fs, dn.dn_fs, &o);
	if (ret == 0)
		ret = diff_run(&fs, &dn, from_txg, &o);
	json_object_put(o.do_lines);
	tarn_free(o.do_mnt);
	host_fs_close(&fs);
	return (ret);
}

const host_op_t host_ops_diff[] = {
	{ "fs.diff", op_fs_diff },
	{ NULL, NULL }
};
