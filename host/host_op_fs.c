/*
 * host_op_fs.c — the operations of the zfs verbs that change datasets
 * (lib/dsl does the change; the mount table, host_mount.c, follows it):
 *
 *   fs.create    name, parents, props?: [[property, value]...]         -
 *   fs.destroy   name, recursive, clones, force, dryrun
 *                       destroyed?: [name...] (dryrun), children?: [snapshot...]
 *   fs.rename    from, to, parents, force                              -
 *   fs.set       names: [dataset...], props: [[property, value]...]   -
 *   fs.inherit   names: [dataset...], prop, recursive                  -
 *   fs.upgrade   names?: [dataset...], recursive, list
 *                       current: n, other: n, old: [[version, dataset]...]
 *
 * create: the dataset (parents: also the missing ones above it; one that
 * exists already is then no failure), mounted when the daemon mounts by
 * itself, from the highest dataset made.  destroy: mounted datasets go
 * down first (force: even when busy), but only once the destroy fails
 * for nothing else (children without recursive leave the mounts alone);
 * what went down and is still there afterwards is mounted again.
 * A file system's snapshots (and its descendants' with recursive) are
 * destroyed first, in one call (clones: also their clones, -R), then its
 * bookmarks, then the file system; without recursive a file system with
 * snapshots is refused as zfs refuses it ("filesystem has children"),
 * the snapshots in children for the command line to list after "use '-r'
 * to destroy the following datasets:".  dryrun: nothing changes;
 * destroyed lists what would go, snapshots before their file system,
 * children before parents.  create: a filesystem_limit set on an
 * ancestor (counting the file systems below it) refuses one more with
 * EDQUOT "out of space", as zfs does.
 * rename: the subtree's mounts go down first (busy without force: the
 * rename is refused) and come up under the new names.
 * set: each dataset in turn, each property in turn, as zfs set does;
 * a mountpoint or canmount change first takes the mounts concerned down
 * (a busy one refuses the change), other mount options follow in place
 * (host_mount_prop_before/changed).  inherit: the same for dropping the
 * local value, on the dataset and with recursive on all below it.
 * Failures are reported as zfs words them ("cannot set property for
 * 'x': ..."; "cannot inherit 'x': ..."); the others still go on, and the
 * command line of each pool changed goes into its history.
 *
 * upgrade: the file system version of datasets (lib/posix); names absent:
 * every pool's datasets, at all depths, else the named ones (recursive:
 * with all below them).  Tarn has had one file system version so far, so
 * there is nothing to convert yet: each dataset's version is read and
 * counted (current: at this build's, other: not, or unreadable); one not
 * current is reported ("cannot upgrade 'x': file system version 2 is
 * newer than this software supports"), or with list put in old instead.
 */
#include "host_impl.h"
#include "tarn_array.h"

/* The i-th string of an array argument (NULL when it is not one). */
static const char *
fs_arg_idx(json_object *a, size_t i)
{
	json_object *v = json_object_array_get_idx(a, i);

	return (json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL);
}

/* An array argument that must be there; reports and fails when it is not. */
static int
fs_arg_array(json_object *args, const char *key, const char *op, json_object **ap)
{
	if (json_object_object_get_ex(args, key, ap) && json_object_is_type(*ap, json_type_array))
		return (0);
	return (host_report(op, key, EINVAL, "missing argument"));
}

dsl_prop_setting_t *
host_fs_settings(json_object *props, const char *verb, const char *name, int *np)
{
	size_t n = props != NULL ? json_object_array_length(props) : 0;
	dsl_prop_setting_t *s = tarn_alloc(sizeof (*s) * (n + 1));

	for (size_t i = 0; i < n; i++) {
		json_object *pv = json_object_array_get_idx(props, i);
		s[i].dps_name = fs_arg_idx(pv, 0);
		s[i].dps_value = fs_arg_idx(pv, 1);
		if (s[i].dps_name == NULL || s[i].dps_value == NULL) {
			tarn_free(s);
			(void) host_report(verb, name, EINVAL, "bad property");
			return (NULL);
		}
	}
	*np = (int)n;
	return (s);
}

/* ---- create, destroy, rename ---- */

void
host_fs_mount_top(dsl_pool_t *dp, const char *name, bool parents, char top[DSL_NAME_MAX])
{
	(void) snprintf(top, DSL_NAME_MAX, "%s", name);
	for (char *slash = strchr(top, '/'); parents && slash != NULL;
	    slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (!dsl_dataset_exists(dp, top))
			return;
		*slash = '/';
	}
}

static int
fs_count_one(void *arg, const char *name, int depth)
{
	(*(uint64_t *)arg)++;
	return (0);
}

/*
 * filesystem_limit: creating name (and with parents its missing
 * ancestors) would put more file systems below an ancestor than its limit
 * allows.  0, or reported ("cannot create 'x': out of space").
 */
int
host_fs_limit_check(dsl_pool_t *dp, const char *name)
{
	char cur[DSL_NAME_MAX];
	uint64_t adding = 0;
	dsl_prop_val_t *v = tarn_alloc(sizeof (*v));
	int r = 0;
	(void) snprintf(cur, sizeof (cur), "%s", name);
	for (char *slash = strrchr(cur, '/'); slash != NULL && r == 0;
	    slash = strrchr(cur, '/')) {
		if (!dsl_dataset_exists(dp, cur))
			adding++;
		*slash = '\0';
		if (!dsl_dataset_exists(dp, cur) ||
		    dsl_prop_get(dp, cur, DSL_PROP_FILESYSTEM_LIMIT, true, v, NULL, 0) != 0 ||
		    v->dpv_num == DSL_LIMIT_NONE)
			continue;
		uint64_t count = 0;
		(void) dsl_dataset_iter(dp, cur, -1, fs_count_one, &count);
		if (count - 1 + adding > v->dpv_num)
			r = host_report("create", name, EDQUOT, "out of space");
	}
	tarn_free(v);
	return (r);
}

static int
op_fs_create(json_object *args, json_object *res)
{
	const char *name;
	bool parents = host_arg_bool(args, "parents");
	json_object *props = NULL;
	char err[512], top[DSL_NAME_MAX];
	host_fs_t fs;
	int n = 0, r;

	if (host_arg_need(args, "name", "create", &name) != 0)
		return (HOST_FAILED);
	if (json_object_object_get_ex(args, "props", &props) &&
	    !json_object_is_type(props, json_type_array))
		props = NULL;
	dsl_prop_setting_t *s = host_fs_settings(props, "create", name, &n);
	if (s == NULL)
		return (HOST_FAILED);
	if ((r = host_fs_open("create", name, false, &fs)) != 0)
		goto out;
	host_fs_mount_top(fs.hf_dp, name, parents, top);
	if ((r = host_fs_limit_check(fs.hf_dp, name)) != 0) {
		host_fs_close(&fs);
		goto out;
	}
	int e = dsl_dataset_create(fs.hf_dp, name, parents, s, n, err, sizeof (err));
	if (e == EEXIST && parents)
		e = 0;          /* zfs create -p of an existing dataset succeeds */
	r = e != 0 ? host_report("create", name, e, err) : 0;
	r = host_fs_created(&fs, top, r);
out:
	tarn_free(s);
	return (r);
}

/* After a file system was made (create, clone): history, its mount, the handle closed. */
int
host_fs_created(host_fs_t *fs, const char *top, int r)
{
	if (r == 0)
		host_history_log(fs->hf_spa);
	if (r == 0 && host_mount_auto())
		r = host_mount_tree(fs->hf_dp, top, true) != 0 ? HOST_FAILED : 0;
	host_fs_close(fs);
	return (r);
}

/* What a destroy of a file system takes along: snapshots, bookmarks, file systems. */
typedef struct fs_doomed {
	dsl_pool_t  *fd_dp;
	tarn_array_t fd_snaps;      /* char *: every snapshot, file system by file system */
	tarn_array_t fd_bms;        /* char *: bookmarks */
	json_object *fd_fs;         /* [file system, its snapshots...], parents first */
} fs_doomed_t;

static int
fs_doomed_one(void *arg, const char *name, int depth)
{
	fs_doomed_t *fd = arg;
	dsl_snap_info_t *si = NULL;
	dsl_bookmark_info_t *bi = NULL;
	int n = 0, nb = 0;
	json_object *row = json_object_new_array();
	json_object_array_add(row, json_object_new_string(name));
	if (dsl_snapshot_list(fd->fd_dp, name, &si, &n, NULL, 0) == 0) {
		for (int i = 0; i < n; i++) {
			TARN_ARRAY_APPEND(&fd->fd_snaps, char *, tarn_strdup(si[i].dsi_name));
			json_object_array_add(row, json_object_new_string(si[i].dsi_name));
		}
	}
	if (dsl_bookmark_list(fd->fd_dp, name, &bi, &nb, NULL, 0) == 0)
		for (int i = 0; i < nb; i++)
			TARN_ARRAY_APPEND(&fd->fd_bms, char *, tarn_strdup(bi[i].dbi_name));
	json_object_array_add(fd->fd_fs, row);
	tarn_free(si);
	tarn_free(bi);
	return (0);
}

static void
fs_doomed_fini(fs_doomed_t *fd)
{
	for (size_t i = 0; i < tarn_array_len(&fd->fd_snaps); i++)
		tarn_free(TARN_ARRAY_AT(&fd->fd_snaps, char *, i));
	for (size_t i = 0; i < tarn_array_len(&fd->fd_bms); i++)
		tarn_free(TARN_ARRAY_AT(&fd->fd_bms, char *, i));
	tarn_array_fini(&fd->fd_snaps);
	tarn_array_fini(&fd->fd_bms);
	json_object_put(fd->fd_fs);
}

/*
 * Before the file system itself: its snapshots and bookmarks (recursive:
 * its descendants' too) go, or without recursive refuse one that has
 * snapshots (zfs: "filesystem has children").  dryrun: only list them.
 */
static int
fs_destroy_snaps(host_fs_t *fs, const char *name, json_object *args, json_object *res)
{
	bool recursive = host_arg_bool(args, "recursive"), dry = host_arg_bool(args, "dryrun");
	fs_doomed_t fd = { .fd_dp = fs->hf_dp, .fd_fs = json_object_new_array() };
	char err[512] = "";
	int r = 0;
	tarn_array_init(&fd.fd_snaps, sizeof (char *));
	tarn_array_init(&fd.fd_bms, sizeof (char *));
	if (recursive && !dry)
		(void) dsl_recv_destroy_below(fs->hf_dp, name);   /* zfs: partial receives go too */
	(void) dsl_dataset_iter(fs->hf_dp, name, recursive ? -1 : 0, fs_doomed_one, &fd);
	size_t ns = tarn_array_len(&fd.fd_snaps);
	if (!recursive && ns > 0) {
		json_object *kids = json_object_new_array();
		for (size_t i = 0; i < ns; i++)
			json_object_array_add(kids, json_object_new_string(
			    TARN_ARRAY_AT(&fd.fd_snaps, char *, i)));
		json_object_object_add(res, "children", kids);
		r = host_report("destroy", name, EEXIST, "filesystem has children");
	} else if (dry) {
		/* as zfs -nv lists them: children first, each one's snapshots before it */
		json_object *d = json_object_new_array();
		dsl_space_t sp;
		for (size_t i = json_object_array_length(fd.fd_fs); i > 0; i--) {
			json_object *row = json_object_array_get_idx(fd.fd_fs, i - 1);
			for (size_t j = 1; j <= json_object_array_length(row); j++)
				json_object_array_add(d, json_object_get(json_object_array_get_idx(
				    row, j % json_object_array_length(row))));
		}
		json_object_object_add(res, "destroyed", d);
		if (dsl_dataset_space(fs->hf_dp, name, &sp) == 0)
			json_object_object_add(res, "reclaim", json_object_new_uint64(sp.ds_used));
	} else if (ns > 0) {
		int flags = host_arg_bool(args, "clones") ? DSL_DESTROY_CLONES : 0;
		int e = dsl_snapshot_destroy(fs->hf_dp, (const char *const *)fd.fd_snaps.ta_v,
		    (int)ns, flags, NULL, NULL, NULL, err, sizeof (err));
		if (e != 0)
			r = host_report("destroy", name, e, err);
	}
	for (size_t i = 0; r == 0 && !dry && i < tarn_array_len(&fd.fd_bms); i++) {
		const char *bm = TARN_ARRAY_AT(&fd.fd_bms, char *, i);
		int e = dsl_bookmark_destroy(fs->hf_dp, bm, err, sizeof (err));
		if (e != 0)
			r = host_report("destroy", bm, e, err);
	}
	fs_doomed_fini(&fd);
	return (r);
}

static int
op_fs_destroy(json_object *args, json_object *res)
{
	const char *name;
	bool recursive = host_arg_bool(args, "recursive");
	char err[512];
	host_fs_t fs;

	if (host_arg_need(args, "name", "destroy", &name) != 0 ||
	    host_fs_open_existing(name, false, &fs) != 0)
		return (HOST_FAILED);
	if (fs_destroy_snaps(&fs, name, args, res) != 0 || host_arg_bool(args, "dryrun")) {
		bool dry_ok = json_object_object_get_ex(res, "destroyed", NULL);
		host_fs_close(&fs);
		return (dry_ok ? 0 : HOST_FAILED);
	}
	int e = dsl_dataset_destroy(fs.hf_dp, name, recursive, err, sizeof (err));
	if (e == EBUSY && host_mount_any(name)) {
		struct mnt_names *down;
		if (host_mount_down(fs.hf_dp, name, host_arg_bool(args, "force"), "destroy",
		    &down) != 0) {
			host_fs_close(&fs);
			return (HOST_FAILED);
		}
		e = dsl_dataset_destroy(fs.hf_dp, name, recursive, err, sizeof (err));
		host_mount_up(fs.hf_dp, name, NULL, NULL, down);
	}
	int r = e != 0 ? host_report("destroy", name, e, err) : 0;
	if (r == 0)
		host_history_log(fs.hf_spa);
	host_fs_close(&fs);
	return (r);
}

static int
op_fs_rename(json_object *args, json_object *res)
{
	const char *from, *to;
	bool parents = host_arg_bool(args, "parents");
	char err[512], top[DSL_NAME_MAX];
	struct mnt_names *down;
	host_fs_t fs;
	int r;

	if (host_arg_need(args, "from", "rename", &from) != 0 ||
	    host_arg_need(args, "to", "rename", &to) != 0 ||
	    host_fs_open_existing(from, false, &fs) != 0)
		return (HOST_FAILED);
	if (host_mount_down(fs.hf_dp, from, host_arg_bool(args, "force"), "rename",
	    &down) != 0) {
		host_fs_close(&fs);
		return (HOST_FAILED);
	}
	host_fs_mount_top(fs.hf_dp, to, parents, top);
	int e = dsl_dataset_rename(fs.hf_dp, from, to, parents, err, sizeof (err));
	host_mount_up(fs.hf_dp, from, e == 0 ? to : NULL, top, down);
	if (e == 0) {
		r = 0;
		host_history_log(fs.hf_spa);
	} else if (e == EEXIST || e == EXDEV || (e == ENOENT && strstr(err, "parent"))) {
		r = host_report("rename to", to, e, err);
	} else {
		r = host_report("rename", from, e, err);
	}
	host_fs_close(&fs);
	return (r);
}

/* ---- set ---- */

/*
 * Open the pool of a file system or snapshot that must exist (set and
 * inherit take snapshots too); reported as host_fs_open_existing does.
 */
static int
fs_open_any(const char *name, host_fs_t *fs)
{
	char fsname[DSL_NAME_MAX];
	dsl_snap_info_t *si;
	if (strchr(name, '@') == NULL && strchr(name, '#') == NULL)
		return (host_fs_open_existing(name, false, fs));
	size_t l = MIN(strcspn(name, "@#"), sizeof (fsname) - 1);
	memcpy(fsname, name, l);
	fsname[l] = '\0';
	if (host_fs_open("open", fsname, false, fs) != 0)
		return (HOST_FAILED);
	si = tarn_alloc(sizeof (*si));
	int e = strchr(name, '@') != NULL ? dsl_snapshot_info(fs->hf_dp, name, si, NULL, 0) : 0;
	tarn_free(si);
	if (e != 0 || !dsl_dataset_exists(fs->hf_dp, fsname)) {
		host_fs_close(fs);
		return (host_report("open", name, ENOENT, "dataset does not exist"));
	}
	return (0);
}

/* Set each of props on dataset name (open in fs), in order. */
static int
fs_set_props(host_fs_t *fs, const char *name, json_object *props)
{
	int rr = 0;

	for (size_t i = 0; i < json_object_array_length(props) && rr == 0; i++) {
		json_object *pv = json_object_array_get_idx(props, i);
		const char *prop = fs_arg_idx(pv, 0), *value = fs_arg_idx(pv, 1);
		char err[512];
		host_prop_change_t pc;
		if (prop == NULL || value == NULL)
			return (host_report("set property for", name, EINVAL, "bad property"));
		rr = host_mount_prop_before(fs->hf_dp, name, prop, &pc);
		if (rr != 0)
			break;
		int e = dsl_prop_set(fs->hf_dp, name, prop, value, err, sizeof (err));
		if (e != 0)
			rr = host_report("set property for", name, e, err);
		int mr = host_mount_prop_changed(fs->hf_dp, name, prop, &pc, "set property for");
		if (rr == 0)
			rr = mr;
	}
	return (rr);
}

static int
op_fs_set(json_object *args, json_object *res)
{
	json_object *names, *props;
	int r = 0;

	if (fs_arg_array(args, "names", "set", &names) != 0 ||
	    fs_arg_array(args, "props", "set", &props) != 0)
		return (HOST_FAILED);
	for (size_t d = 0; d < json_object_array_length(names); d++) {
		const char *name = fs_arg_idx(names, d);
		host_fs_t fs = { 0 };
		int rr = name != NULL ? fs_open_any(name, &fs) :
		    host_report("set", "-", EINVAL, "bad dataset name");
		if (rr == 0)
			rr = fs_set_props(&fs, name, props);
		if (rr == 0)
			host_history_log(fs.hf_spa);
		if (name != NULL && fs.hf_dp != NULL)
			host_fs_close(&fs);
		if (rr != 0)
			r = HOST_FAILED;
	}
	return (r);
}

/* ---- inherit ---- */

typedef struct fs_inherit_arg {
	host_fs_t  *ia_fs;
	const char *ia_prop;
	int         ia_ret;
} fs_inherit_arg_t;

static int
fs_inherit_one(void *arg, const char *name, int depth)
{
	fs_inherit_arg_t *ia = arg;
	char err[512];
	host_prop_change_t pc;
	if ((ia->ia_ret = host_mount_prop_before(ia->ia_fs->hf_dp, name, ia->ia_prop,
	    &pc)) != 0)
		return (EBUSY);
	int e = dsl_prop_inherit(ia->ia_fs->hf_dp, name, ia->ia_prop, err, sizeof (err));
	if (e != 0)
		ia->ia_ret = host_report("inherit", name, e, err);
	int mr = host_mount_prop_changed(ia->ia_fs->hf_dp, name, ia->ia_prop, &pc, "inherit");
	if (e == 0 && mr != 0) {
		ia->ia_ret = mr;
		e = EBUSY;
	}
	return (e);
}

static int
op_fs_inherit(json_object *args, json_object *res)
{
	json_object *names;
	const char *prop;
	bool recursive = host_arg_bool(args, "recursive");
	int r = 0;

	if (fs_arg_array(args, "names", "inherit", &names) != 0 ||
	    host_arg_need(args, "prop", "inherit", &prop) != 0)
		return (HOST_FAILED);
	for (size_t d = 0; d < json_object_array_length(names); d++) {
		const char *name = fs_arg_idx(names, d);
		host_fs_t fs = { 0 };
		int rr = name != NULL ? fs_open_any(name, &fs) :
		    host_report("inherit", "-", EINVAL, "bad dataset name");
		if (rr == 0) {
			fs_inherit_arg_t ia = { &fs, prop, 0 };
			if (strchr(name, '@') != NULL)     /* a snapshot: itself only */
				(void) fs_inherit_one(&ia, name, 0);
			else
				(void) dsl_dataset_iter(fs.hf_dp, name, recursive ? -1 : 0,
				    fs_inherit_one, &ia);
			rr = ia.ia_ret;
			if (rr == 0)
				host_history_log(fs.hf_spa);
			host_fs_close(&fs);
		}
		if (rr != 0)
			r = HOST_FAILED;
	}
	return (r);
}

/* ---- upgrade ---- */

typedef struct fs_up_walk {
	dsl_pool_t  *uw_dp;
	bool         uw_list;       /* only list those not current */
	uint64_t     uw_current;    /* datasets at this build's version */
	uint64_t     uw_other;      /* at another one */
	json_object *uw_old;        /* list: [version, name] of the others */
	int          uw_ret;
} fs_up_walk_t;

static int
fs_up_one(void *arg, const char *name, int depth)
{
	fs_up_walk_t *w = arg;
	objset_t *os;
	uint64_t v = 0;
	int e = dsl_dataset_objset(w->uw_dp, name, &os);
	if (e == 0)
		e = posix_fs_version(os, &v);
	if (e == 0 && v == POSIX_VERSION) {
		w->uw_current++;
		return (0);
	}
	w->uw_other++;
	if (e == 0 && w->uw_list) {
		json_object *row = json_object_new_array_ext(2);
		json_object_array_add(row, json_object_new_uint64(v));
		json_object_array_add(row, json_object_new_string(name));
		json_object_array_add(w->uw_old, row);
		return (0);
	}
	char msg[96];
	(void) snprintf(msg, sizeof (msg), "file system version %" PRIu64 " is %s", v,
	    v > POSIX_VERSION ? "newer than this software supports" : "not one it knows");
	w->uw_ret = host_report("upgrade", name, e != 0 ? e : ENOTSUP, e != 0 ? NULL : msg);
	return (0);
}

/* name, and its descendants when all */
static void
fs_up_tree(fs_up_walk_t *w, const char *name, bool all)
{
	host_fs_t fs;
	if (host_fs_open_existing(name, true, &fs) != 0) {
		w->uw_ret = HOST_FAILED;
		return;
	}
	w->uw_dp = fs.hf_dp;
	if (all)
		(void) dsl_dataset_iter(fs.hf_dp, name, -1, fs_up_one, w);
	else
		(void) fs_up_one(w, name, 0);
	host_fs_close(&fs);
}

static int
op_fs_upgrade(json_object *args, json_object *res)
{
	fs_up_walk_t w = { .uw_list = host_arg_bool(args, "list") };
	json_object *names;

	w.uw_old = json_object_new_array();
	json_object_object_add(res, "old", w.uw_old);
	if (!json_object_object_get_ex(args, "names", &names) ||
	    !json_object_is_type(names, json_type_array)) {
		char **pools;
		int n;
		if (host_pool_names(&pools, &n) != 0) {
			w.uw_ret = HOST_FAILED;
		} else {
			for (int i = 0; i < n; i++)
				fs_up_tree(&w, pools[i], true);
			host_names_free(pools, n);
		}
	} else {
		bool recursive = host_arg_bool(args, "recursive");
		for (size_t i = 0; i < json_object_array_length(names); i++) {
			const char *name = fs_arg_idx(names, i);
			if (name != NULL)
				fs_up_tree(&w, name, recursive);
		}
	}
	json_object_object_add(res, "current", json_object_new_uint64(w.uw_current));
	json_object_object_add(res, "other", json_object_new_uint64(w.uw_other));
	return (w.uw_ret);
}

const host_op_t host_ops_fs[] = {
	{ "fs.create", op_fs_create },
	{ "fs.destroy", op_fs_destroy },
	{ "fs.rename", op_fs_rename },
	{ "fs.set", op_fs_set },
	{ "fs.inherit", op_fs_inherit },
	{ "fs.upgrade", op_fs_upgrade },
	{ NULL, NULL }
};
