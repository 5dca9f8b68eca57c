/*
 * host_op_clone.c — the operations of zfs clone, promote and rollback
 * (lib/dsl makes the change; mounts follow, host_mount.c and host_swap.c):
 *
 *   fs.clone     snap, name, parents, props?: [[property, value]...]   -
 *   fs.promote   name                                                   -
 *   fs.rollback  snap, recursive (-r), clones (-R), force (-f)
 *                                                  detail?: [line...]
 *
 * clone: a new file system whose first state is the snapshot's, mounted
 * (when the daemon mounts by itself) as zfs create mounts a new one, from
 * the highest dataset made (with parents: the ancestors made too).  The
 * snapshot must exist ("cannot open 'SNAP': dataset does not exist"), the
 * parent too without parents ("cannot create 'NAME': parent does not
 * exist").  promote: the clone takes over its origin's older snapshots
 * ("cannot promote 'NAME': not a cloned filesystem" for others); no mount
 * changes, since no object set does.
 *
 * rollback: the file system returns to the snapshot's state.  Snapshots
 * and bookmarks younger than it (by txg) go too, but only with recursive; without,
 * nothing changes and the failure is zfs's: "cannot rollback to 'SNAP':
 * more recent snapshots or bookmarks exist", and in detail the lines zfs
 * prints after it (what -r would destroy).  Clones of those younger
 * snapshots need clones as well ("clones of previous snapshots exist",
 * detail: the clones); with it their mounts go down first (busy ones only
 * with force) and are gone with them.  A mounted file system stays
 * mounted: its object set is replaced under the mount and programs see
 * the snapshot's contents at once (host_swap.c); where that cannot be,
 * the mounts go down and come up again around the change.
 */
#include "host_impl.h"

/* The snapshot's file system: snap up to its '@' (false: no '@'). */
static bool
clone_fs_of(const char *snap, char fs[DSL_NAME_MAX])
{
	const char *at = strchr(snap, '@');
	if (at == NULL || (size_t)(at - snap) >= DSL_NAME_MAX)
		return (false);
	memcpy(fs, snap, (size_t)(at - snap));
	fs[at - snap] = '\0';
	return (true);
}

/* snap must name an existing snapshot of an open pool: 0 or reported. */
static int
clone_snap_check(dsl_pool_t *dp, const char *snap, dsl_snap_info_t *si)
{
	char err[512] = "";
	int e = dsl_snapshot_info(dp, snap, si, err, sizeof (err));
	if (e == 0)
		return (0);
	return (host_report("open", snap, e, e == ENOENT ? "dataset does not exist" : err));
}

/* ---- clone and promote ---- */

static int
op_fs_clone(json_object *args, json_object *res)
{
	const char *snap, *name;
	bool parents = host_arg_bool(args, "parents");
	json_object *props = NULL;
	char err[512] = "", top[DSL_NAME_MAX];
	dsl_snap_info_t si;
	host_fs_t fs;
	int n = 0, r;

	if (host_arg_need(args, "snap", "clone", &snap) != 0 ||
	    host_arg_need(args, "name", "create", &name) != 0)
		return (HOST_FAILED);
	if (json_object_object_get_ex(args, "props", &props) &&
	    !json_object_is_type(props, json_type_array))
		props = NULL;
	dsl_prop_setting_t *s = host_fs_settings(props, "create", name, &n);
	if (s == NULL)
		return (HOST_FAILED);
	if ((r = host_fs_open("open", snap, false, &fs)) != 0)
		goto out;
	host_fs_mount_top(fs.hf_dp, name, parents, top);
	if ((r = clone_snap_check(fs.hf_dp, snap, &si)) == 0 &&
	    (r = host_fs_limit_check(fs.hf_dp, name)) == 0) {
		int e = dsl_clone_create(fs.hf_dp, snap, name, parents, s, n, err, sizeof (err));
		r = e != 0 ? host_report("create", name, e, err) : 0;
	}
	r = host_fs_created(&fs, top, r);
out:
	tarn_free(s);
	return (r);
}

static int
op_fs_promote(json_object *args, json_object *res)
{
	const char *name;
	char err[512] = "";
	host_fs_t fs;

	if (host_arg_need(args, "name", "promote", &name) != 0 ||
	    host_fs_open_existing(name, false, &fs) != 0)
		return (HOST_FAILED);
	int e = dsl_dataset_promote(fs.hf_dp, name, err, sizeof (err));
	int r = e != 0 ? host_report("promote", name, e, err) : 0;
	if (r == 0)
		host_history_log(fs.hf_spa);
	host_fs_close(&fs);
	return (r);
}

/* ---- rollback ---- */

typedef struct rb_arg {
	dsl_pool_t  *ra_dp;
	const char  *ra_snap;
	bool         ra_later, ra_clones;
	json_object *ra_detail;     /* lines after the failure (zfs's list) */
	json_object *ra_clonev;     /* clones of the younger snapshots: names */
	json_object *ra_bms;        /* the younger bookmarks: names */
} rb_arg_t;

/* Add the clones of snapshot snap, and the clones of their snapshots, to ra_clonev. */
static void
rb_clones_of(rb_arg_t *ra, const char *snap, int depth)
{
	char *buf = tarn_alloc(64 * 1024), *save = NULL;
	if (depth < 16 && dsl_snapshot_clones(ra->ra_dp, snap, buf, 64 * 1024) == 0) {
		for (char *c = strtok_r(buf, ",", &save); c != NULL;
		    c = strtok_r(NULL, ",", &save)) {
			json_object_array_add(ra->ra_clonev, json_object_new_string(c));
			dsl_snap_info_t *v = NULL;
			int n = 0;
			char err[256];
			if (dsl_snapshot_list(ra->ra_dp, c, &v, &n, err, sizeof (err)) != 0)
				continue;
			for (int i = 0; i < n; i++)
				rb_clones_of(ra, v[i].dsi_name, depth + 1);
			tarn_free(v);
		}
	}
	tarn_free(buf);
}

/*
 * What a rollback to snap (si) would take with it: ra_detail gets the
 * younger snapshots and bookmarks, ra_clonev their clones.  0 or reported.
 */
static int
rb_later(rb_arg_t *ra, const char *fs, const dsl_snap_info_t *si, json_object *later)
{
	char err[512] = "";
	dsl_snap_info_t *v = NULL;
	dsl_bookmark_info_t *bv = NULL;
	int n = 0, nb = 0;
	int e = dsl_snapshot_list(ra->ra_dp, fs, &v, &n, err, sizeof (err));
	if (e == 0)
		e = dsl_bookmark_list(ra->ra_dp, fs, &bv, &nb, err, sizeof (err));
	if (e != 0) {
		tarn_free(v);
		return (host_report("rollback to", ra->ra_snap, e, err));
	}
	for (int i = 0; i < n; i++) {
		if (v[i].dsi_txg <= si->dsi_txg)
			continue;
		json_object_array_add(later, json_object_new_string(v[i].dsi_name));
		rb_clones_of(ra, v[i].dsi_name, 0);
	}
	for (int i = 0; i < nb; i++) {
		if (bv[i].dbi_txg <= si->dsi_txg)
			continue;
		json_object_array_add(later, json_object_new_string(bv[i].dbi_name));
		json_object_array_add(ra->ra_bms, json_object_new_string(bv[i].dbi_name));
	}
	tarn_free(v);
	tarn_free(bv);
	return (0);
}

/* Refuse as zfs does: the first line reported, the list after it in detail. */
static int
rb_refuse(rb_arg_t *ra, const char *why, const char *use, json_object *names)
{
	json_object_array_add(ra->ra_detail, json_object_new_string(use));
	for (size_t i = 0; i < json_object_array_length(names); i++)
		json_object_array_add(ra->ra_detail,
		    json_object_get(json_object_array_get_idx(names, i)));
	return (host_report("rollback to", ra->ra_snap, EEXIST, why));
}

/*
 * The change, with the file system closed (host_swap_fn_t): the younger
 * bookmarks go first (zfs destroys them too; the dsl's rollback destroys
 * the younger snapshots itself), then the rollback.
 */
static int
rb_change(void *arg)
{
	rb_arg_t *ra = arg;
	char err[512] = "";
	for (size_t i = 0; i < json_object_array_length(ra->ra_bms); i++) {
		const char *bm = json_object_get_string(json_object_array_get_idx(ra->ra_bms, i));
		int e = dsl_bookmark_destroy(ra->ra_dp, bm, err, sizeof (err));
		if (e != 0)
			return (host_report("destroy", bm, e, err));
	}
	int e = dsl_dataset_rollback(ra->ra_dp, ra->ra_snap, ra->ra_later, ra->ra_clones,
	    NULL, NULL, err, sizeof (err));
	return (e != 0 ? host_report("rollback to", ra->ra_snap, e, err) : 0);
}

/* Take the clones' mounts down before they are destroyed; 0 or reported. */
static int
rb_clones_down(rb_arg_t *ra, bool force, struct mnt_names **downv)
{
	size_t n = json_object_array_length(ra->ra_clonev);
	for (size_t i = 0; i < n; i++) {
		const char *c = json_object_get_string(json_object_array_get_idx(ra->ra_clonev, i));
		if (host_mount_down(ra->ra_dp, c, force, "unmount", &downv[i]) != 0)
			return (HOST_FAILED);
	}
	return (0);
}

static int
rb_run(rb_arg_t *ra, const char *fs, bool force)
{
	dsl_snap_info_t si;
	json_object *later = json_object_new_array();
	int r = clone_snap_check(ra->ra_dp, ra->ra_snap, &si);
	if (r == 0)
		r = rb_later(ra, fs, &si, later);
	if (r == 0 && json_object_array_length(later) != 0 && !ra->ra_later)
		r = rb_refuse(ra, "more recent snapshots or bookmarks exist",
		    "use '-r' to force deletion of the following snapshots and bookmarks:",
		    later);
	size_t nc = json_object_array_length(ra->ra_clonev);
	if (r == 0 && nc != 0 && !ra->ra_clones)
		r = rb_refuse(ra, "clones of previous snapshots exist",
		    "use '-R' to force deletion of the following clones and dependents:",
		    ra->ra_clonev);
	json_object_put(later);
	if (r != 0)
		return (r);
	struct mnt_names **downv = tarn_alloc(sizeof (*downv) * (nc + 1));
	r = rb_clones_down(ra, force, downv);
	if (r == 0)
		r = host_swap_dataset(ra->ra_dp, fs, force, "rollback", rb_change, ra);
	for (size_t i = 0; i < nc; i++)         /* what is still there (a failure) */
		host_mount_up(ra->ra_dp, json_object_get_string(
		    json_object_array_get_idx(ra->ra_clonev, i)), NULL, NULL, downv[i]);
	tarn_free(downv);
	return (r);
}

static int
op_fs_rollback(json_object *args, json_object *res)
{
	const char *snap;
	char fsname[DSL_NAME_MAX];
	host_fs_t fs;

	if (host_arg_need(args, "snap", "rollback", &snap) != 0)
		return (HOST_FAILED);
	if (!clone_fs_of(snap, fsname))
		return (host_report("open", snap, EINVAL, "missing '@' delimiter in snapshot name"));
	if (host_fs_open("open", snap, false, &fs) != 0)
		return (HOST_FAILED);
	rb_arg_t ra = {
		.ra_dp = fs.hf_dp, .ra_snap = snap,
		.ra_later = host_arg_bool(args, "recursive") || host_arg_bool(args, "clones"),
		.ra_clones = host_arg_bool(args, "clones"),
		.ra_detail = json_object_new_array(), .ra_clonev = json_object_new_array(),
		.ra_bms = json_object_new_array(),
	};
	int r = rb_run(&ra, fsname, host_arg_bool(args, "force"));
	if (r == 0)
		host_history_log(fs.hf_spa);
	json_object_object_add(res, "detail", ra.ra_detail);
	json_object_put(ra.ra_clonev);
	json_object_put(ra.ra_bms);
	host_fs_close(&fs);
	return (r);
}

const host_op_t host_ops_clone[] = {
	{ "fs.clone", op_fs_clone },
	{ "fs.promote", op_fs_promote },
	{ "fs.rollback", op_fs_rollback },
	{ NULL, NULL }
};
