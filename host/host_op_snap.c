/*
 * host_op_snap.c — the operations of the zfs verbs for snapshots, holds
 * and bookmarks (lib/dsl does the change, dsl.h "snapshots, clones,
 * holds, bookmarks"; each is one txg there):
 *
 *   fs.snapshot        names: ["fs@snap"...], recursive, props?: [[property, value]...]  -
 *   fs.snap_destroy    name: "fs@a%b,c", recursive, clones, defer, dryrun, verbose
 *                         destroyed: [name...], reclaim: bytes
 *   fs.snap_rename     from: "fs@a", to: "fs@b", recursive                    -
 *   fs.hold            snaps: ["fs@snap"...], tag, recursive                  -
 *   fs.release         snaps: ["fs@snap"...], tag, recursive                  -
 *   fs.holds           snaps: ["fs@snap"...], recursive
 *                         holds: [{name, tag, when (seconds)}...]
 *   fs.bookmark        src: "fs@snap" | "fs#bm", bm: "fs#bm"                 -
 *   fs.bookmark_destroy name: "fs#bm"                                        -
 *
 * snapshot: all names in one call (zfs's atomic snapshot); each must name
 * an existing file system of the same pool and a snapshot not there yet,
 * checked first so that the failure names the snapshot at fault
 * ("cannot create snapshot 'tank/x@a': dataset does not exist").
 * snap_destroy: the snapshot part is zfs's list of names and ranges
 * ("a%b": from a to b in creation order; an empty end is the first or the
 * last), expanded against the file system's snapshots (dsl_snapshot_list);
 * with recursive the same names in its descendants (the engine's -r).
 * destroyed lists what was (or with dryrun would be) destroyed, reclaim
 * the space freed; verbose without dryrun asks the engine for both first,
 * as zfs prints "will destroy" before destroying.  holds with recursive:
 * the snapshot of that name of every descendant that has one.  Every
 * change logs the command line in the pool's history.
 */
#include "host_impl.h"

#include <fcntl.h>
#include <unistd.h>
#include "tarn_array.h"

/* The pool of a snapshot, bookmark or file system name, opened. */
static int
snap_open(const char *verb, const char *name, bool readonly, host_fs_t *fs)
{
	char fsname[DSL_NAME_MAX];
	(void) snprintf(fsname, sizeof (fsname), "%.*s", (int)strcspn(name, "@#"), name);
	int r = host_fs_open(verb, fsname, readonly, fs);
	if (r != 0)
		return (r);
	if (!dsl_dataset_exists(fs->hf_dp, fsname)) {
		host_fs_close(fs);
		return (host_report(verb, name, ENOENT, "dataset does not exist"));
	}
	return (0);
}

/* The strings of an array argument (NULL: missing or not strings; reported). */
static const char **
snap_names(json_object *args, const char *key, const char *verb, int *np)
{
	json_object *a;
	if (!json_object_object_get_ex(args, key, &a) || !json_object_is_type(a, json_type_array) ||
	    json_object_array_length(a) == 0) {
		(void) host_report(verb, key, EINVAL, "missing argument");
		return (NULL);
	}
	int n = (int)json_object_array_length(a);
	const char **v = tarn_alloc(sizeof (char *) * (size_t)(n + 1));
	for (int i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(a, (size_t)i);
		v[i] = json_object_is_type(s, json_type_string) ? json_object_get_string(s) : NULL;
		if (v[i] == NULL || strchr(v[i], '@') == NULL) {
			(void) host_report(verb, v[i] != NULL ? v[i] : "-", EINVAL,
			    "not a snapshot name");
			tarn_free(v);
			return (NULL);
		}
	}
	*np = n;
	return (v);
}

/* Same pool as the first name ("pool/..." prefix up to '/', '@' or '#'). */
static bool
snap_same_pool(const char *a, const char *b)
{
	size_t n = strcspn(a, "/@#");
	return (strcspn(b, "/@#") == n && strncmp(a, b, n) == 0);
}

/* ---- snapshot ---- */

/* Each name: its file system there, the snapshot not yet; else reported. */
static int
snap_create_check(host_fs_t *fs, const char **names, int n)
{
	dsl_snap_info_t *si = tarn_alloc(sizeof (*si));
	int r = 0;
	for (int i = 0; i < n && r == 0; i++) {
		char fsname[DSL_NAME_MAX];
		(void) snprintf(fsname, sizeof (fsname), "%.*s", (int)strcspn(names[i], "@"),
		    names[i]);
		if (!snap_same_pool(names[0], names[i]))
			r = host_report("create snapshot", names[i], EXDEV,
			    "snapshots must be in the same pool");
		else if (!dsl_dataset_exists(fs->hf_dp, fsname))
			r = host_report("create snapshot", names[i], ENOENT,
			    "dataset does not exist");
		else if (dsl_snapshot_info(fs->hf_dp, names[i], si, NULL, 0) == 0)
			r = host_report("create snapshot", names[i], EEXIST,
			    "dataset already exists");
		for (int j = 0; j < i && r == 0; j++)
			if (strncmp(names[j], names[i], strlen(fsname) + 1) == 0 &&
			    names[j][strlen(fsname)] == '@')
				r = host_report("create snapshot", names[i], EINVAL,
				    "multiple snapshots of same fs not allowed");
	}
	tarn_free(si);
	return (r);
}

/* The file systems a snapshot request touches: each name's, and with -r all below. */
static int
snap_limit_fs(void *arg, const char *name, int depth)
{
	json_object_array_add(arg, json_object_new_string(name));
	return (0);
}

/*
 * snapshot_limit (checked here; see the report of issue 28): no ancestor
 * (or the file system itself) may end up with more snapshots in its
 * subtree than its limit.  0, or reported with zfs's "out of space".
 */
static int
snap_limit_check(host_fs_t *fs, const char **names, int n, bool recursive)
{
	json_object *touched = json_object_new_array();
	dsl_prop_val_t *v = tarn_alloc(sizeof (*v));
	int r = 0;
	for (int i = 0; i < n; i++) {
		char fsname[DSL_NAME_MAX];
		(void) snprintf(fsname, sizeof (fsname), "%.*s", (int)strcspn(names[i], "@"),
		    names[i]);
		(void) dsl_dataset_iter(fs->hf_dp, fsname, recursive ? -1 : 0, snap_limit_fs,
		    touched);
	}
	for (int i = 0; i < n && r == 0; i++) {
		char anc[DSL_NAME_MAX];
		(void) snprintf(anc, sizeof (anc), "%.*s", (int)strcspn(names[i], "@"), names[i]);
		for (char *slash = anc; slash != NULL && r == 0; slash = strrchr(anc, '/')) {
			if (slash != anc)
				*slash = '\0';
			if (dsl_prop_get(fs->hf_dp, anc, DSL_PROP_SNAPSHOT_LIMIT, true, v, NULL,
			    0) != 0 || v->dpv_num == DSL_LIMIT_NONE)
				continue;
			uint64_t limit = v->dpv_num, adding = 0;
			size_t al = strlen(anc);
			for (size_t j = 0; j < json_object_array_length(touched); j++) {
				const char *t = json_object_get_string(
				    json_object_array_get_idx(touched, j));
				adding += strncmp(t, anc, al) == 0 &&
				    (t[al] == '\0' || t[al] == '/');
			}
			if (dsl_prop_get(fs->hf_dp, anc, DSL_PROP_SNAPSHOT_COUNT, true, v, NULL,
			    0) == 0 && v->dpv_num + adding > limit)
				r = host_report("create snapshot", names[i], EDQUOT,
				    "out of space");
		}
	}
	tarn_free(v);
	json_object_put(touched);
	return (r);
}

/*
 * Before a snapshot: what programs wrote to a mounted file system may still
 * sit in the kernel's page cache (the writeback cache); zfs's snapshot
 * holds every write that returned, so the mounts of the file systems named
 * (fs@snap: fs, and with recursive everything below) are synced first.
 * Best effort: a mount that cannot be opened is left as it is.
 */
void
host_snap_flush(const char *const *names, int n, bool recursive)
{
	char **mnames, **mpoints;
	int nm;
	if (host_mount_list(&mnames, &mpoints, &nm) != 0)
		return;
	for (int i = 0; i < nm; i++) {
		bool want = false;
		for (int k = 0; k < n && !want; k++) {
			size_t l = strcspn(names[k], "@");
			want = strncmp(mnames[i], names[k], l) == 0 &&
			    (mnames[i][l] == '\0' || (recursive && mnames[i][l] == '/'));
		}
		int fd = want ? open(mpoints[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
		if (fd >= 0) {
			(void) syncfs(fd);
			(void) close(fd);
		}
	}
	host_names_free(mnames, nm);
	host_names_free(mpoints, nm);
}

static int
op_fs_snapshot(json_object *args, json_object *res)
{
	json_object *props = NULL;
	char err[512];
	host_fs_t fs;
	int n = 0, np = 0, r;

	const char **names = snap_names(args, "names", "create snapshot", &n);
	if (names == NULL)
		return (HOST_FAILED);
	if (json_object_object_get_ex(args, "props", &props) &&
	    !json_object_is_type(props, json_type_array))
		props = NULL;
	np = props != NULL ? (int)json_object_array_length(props) : 0;
	dsl_prop_setting_t *s = tarn_alloc(sizeof (*s) * (size_t)(np + 1));
	for (int i = 0; i < np; i++) {
		json_object *pv = json_object_array_get_idx(props, (size_t)i);
		s[i].dps_name = json_object_get_string(json_object_array_get_idx(pv, 0));
		s[i].dps_value = json_object_get_string(json_object_array_get_idx(pv, 1));
		if (s[i].dps_name == NULL || s[i].dps_value == NULL) {
			r = host_report("create snapshot", names[0], EINVAL, "bad property");
			goto out;
		}
	}
	host_snap_flush(names, n, host_arg_bool(args, "recursive"));
	if ((r = snap_open("create snapshot", names[0], false, &fs)) != 0)
		goto out;
	if ((r = snap_create_check(&fs, names, n)) == 0 &&
	    (r = snap_limit_check(&fs, names, n, host_arg_bool(args, "recursive"))) == 0) {
		int e = dsl_snapshot_create(fs.hf_dp, names, n, host_arg_bool(args, "recursive"),
		    s, np, err, sizeof (err));
		r = e != 0 ? host_report("create snapshot", names[0], e, err) : 0;
	}
	if (r == 0)
		host_history_log(fs.hf_spa);
	host_fs_close(&fs);
out:
	tarn_free(s);
	tarn_free(names);
	return (r);
}

/* ---- destroy ---- */

typedef struct snap_list {
	dsl_snap_info_t *sl_snaps;
	int              sl_n;
} snap_list_t;

/* Index of snapshot short name `snap` in the list, -1 when absent. */
static int
snap_index(const snap_list_t *sl, const char *snap)
{
	for (int i = 0; i < sl->sl_n; i++) {
		const char *at = strchr(sl->sl_snaps[i].dsi_name, '@');
		if (at != NULL && strcmp(at + 1, snap) == 0)
			return (i);
	}
	return (-1);
}

/*
 * Expand "a%b,c" of file system fs into full names (added to out): a
 * range by creation order, its ends included (an empty end: the first or
 * the last); a plain name whether it exists or not (the engine skips the
 * missing ones).  ENOENT when a range's end does not exist.
 */
static int
snap_expand(const char *fs, const char *spec, const snap_list_t *sl, tarn_array_t *out)
{
	char *copy = tarn_strdup(spec), *save = NULL;
	int e = 0;
	for (char *t = strtok_r(copy, ",", &save); t != NULL && e == 0;
	    t = strtok_r(NULL, ",", &save)) {
		char *pct = strchr(t, '%');
		int lo, hi;
		if (pct == NULL) {
			size_t len = strlen(fs) + strlen(t) + 2;
			char *name = tarn_alloc(len);
			(void) snprintf(name, len, "%s@%s", fs, t);
			TARN_ARRAY_APPEND(out, char *, name);
			continue;
		}
		*pct = '\0';
		lo = t[0] == '\0' ? 0 : snap_index(sl, t);
		hi = pct[1] == '\0' ? sl->sl_n - 1 : snap_index(sl, pct + 1);
		if (lo < 0 || hi < 0) {
			e = SET_ERROR(ENOENT);
			break;
		}
		for (int i = lo; i <= hi; i++)
			TARN_ARRAY_APPEND(out, char *, tarn_strdup(sl->sl_snaps[i].dsi_name));
	}
	tarn_free(copy);
	return (e);
}

static void
snap_visit(void *arg, const char *name)
{
	json_object_array_add(arg, json_object_new_string(name));
}

/* The engine's destroy of names; visit's names go to destroyed (reset first). */
static int
snap_destroy_call(host_fs_t *fs, char **names, int n, int flags, json_object *res,
    uint64_t *reclaim, char *err, size_t errlen)
{
	json_object *destroyed = json_object_new_array();
	json_object_object_add(res, "destroyed", destroyed);
	*reclaim = 0;
	return (dsl_snapshot_destroy(fs->hf_dp, (const char *const *)names, n, flags, reclaim,
	    snap_visit, destroyed, err, errlen));
}

static int
snap_flags(json_object *args)
{
	return ((host_arg_bool(args, "recursive") ? DSL_DESTROY_RECURSIVE : 0) |
	    (host_arg_bool(args, "clones") ? DSL_DESTROY_CLONES : 0) |
	    (host_arg_bool(args, "defer") ? DSL_DESTROY_DEFER : 0) |
	    (host_arg_bool(args, "dryrun") ? DSL_DESTROY_DRYRUN : 0));
}

static int
op_fs_snap_destroy(json_object *args, json_object *res)
{
	const char *name;
	char err[512] = "", fsname[DSL_NAME_MAX];
	snap_list_t sl = { NULL, 0 };
	tarn_array_t names = TARN_ARRAY_INIT(char *);
	uint64_t reclaim = 0;
	host_fs_t fs;
	int r, e, flags = snap_flags(args);

	if (host_arg_need(args, "name", "destroy", &name) != 0 || strchr(name, '@') == NULL)
		return (host_report("destroy", name != NULL ? name : "-", EINVAL,
		    "not a snapshot name"));
	if (snap_open("destroy", name, false, &fs) != 0)
		return (HOST_FAILED);
	(void) snprintf(fsname, sizeof (fsname), "%.*s", (int)strcspn(name, "@"), name);
	e = dsl_snapshot_list(fs.hf_dp, fsname, &sl.sl_snaps, &sl.sl_n, err, sizeof (err));
	if (e == 0)
		e = snap_expand(fsname, strchr(name, '@') + 1, &sl, &names);
	if (e == ENOENT || (e == 0 && tarn_array_len(&names) == 0)) {
		e = SET_ERROR(ENOENT);
		(void) snprintf(err, sizeof (err), "could not find any snapshots to destroy; "
		    "check snapshot names.");
	}
	int n = (int)tarn_array_len(&names);
	char **v = (char **)names.ta_v;
	if (e == 0 && host_arg_bool(args, "verbose") && !(flags & DSL_DESTROY_DRYRUN)) {
		e = snap_destroy_call(&fs, v, n, flags | DSL_DESTROY_DRYRUN, res, &reclaim, err,
		    sizeof (err));
		json_object_object_add(res, "would", json_object_get(
		    json_object_object_get(res, "destroyed")));
		json_object_object_add(res, "would_reclaim", json_object_new_uint64(reclaim));
	}
	if (e == 0)
		e = snap_destroy_call(&fs, v, n, flags, res, &reclaim, err, sizeof (err));
	json_object_object_add(res, "reclaim", json_object_new_uint64(reclaim));
	if (e == EEXIST && strcmp(err, "snapshot has dependent clones") == 0) {
		/* zfs names them: "use '-R' to destroy the following datasets:" */
		json_object *deps = json_object_new_array();
		for (int i = 0; i < n; i++) {
			char clones[4096];
			if (dsl_snapshot_clones(fs.hf_dp, v[i], clones, sizeof (clones)) != 0)
				continue;
			for (char *c = strtok(clones, ","); c != NULL; c = strtok(NULL, ","))
				json_object_array_add(deps, json_object_new_string(c));
		}
		json_object_object_add(res, "dependents", deps);
	}
	r = e != 0 ? host_report("destroy", n == 1 ? v[0] : name, e, err) : 0;
	if (r == 0 && !(flags & DSL_DESTROY_DRYRUN))
		host_history_log(fs.hf_spa);
	for (int i = 0; i < n; i++)
		tarn_free(v[i]);
	tarn_array_fini(&names);
	tarn_free(sl.sl_snaps);
	host_fs_close(&fs);
	return (r);
}

/* ---- rename ---- */

typedef struct snap_rel {
	const char *sr_snap;        /* the part after '@' */
	int         sr_err;
} snap_rel_t;

/* Close fs@snap where .zfs/snapshot of a mount has it open (EBUSY: files open in it). */
static int
snap_release_one(void *arg, const char *fs, int depth)
{
	snap_rel_t *sr = arg;
	char name[DSL_NAME_MAX * 2];
	(void) snprintf(name, sizeof (name), "%s@%s", fs, sr->sr_snap);
	if (sr->sr_err == 0)
		sr->sr_err = host_mount_snap_release(name);
	return (0);
}

static int
op_fs_snap_rename(json_object *args, json_object *res)
{
	const char *from, *to;
	char err[512] = "";
	host_fs_t fs;

	if (host_arg_need(args, "from", "rename", &from) != 0 ||
	    host_arg_need(args, "to", "rename", &to) != 0 ||
	    snap_open("rename", from, false, &fs) != 0)
		return (HOST_FAILED);
	/* a snapshot open under .zfs/snapshot is closed first, as zfs unmounts it */
	bool rec = host_arg_bool(args, "recursive");
	char fsname[DSL_NAME_MAX];
	snap_rel_t sr = { strchr(from, '@') + 1, 0 };
	(void) snprintf(fsname, sizeof (fsname), "%.*s", (int)strcspn(from, "@"), from);
	(void) dsl_dataset_iter(fs.hf_dp, fsname, rec ? -1 : 0, snap_release_one, &sr);
	int e = sr.sr_err;
	if (e != 0)
		(void) snprintf(err, sizeof (err), "dataset is busy");
	else
		e = dsl_snapshot_rename(fs.hf_dp, from, to, rec, err, sizeof (err));
	int r = 0;
	if (e == EEXIST || e == EXDEV)
		r = host_report("rename to", to, e, err);
	else if (e != 0)
		r = host_report("rename", from, e, err);
	else
		host_history_log(fs.hf_spa);
	host_fs_close(&fs);
	return (r);
}

/* ---- holds ---- */

/* hold or release: snaps, tag, recursive. */
static int
snap_hold_op(json_object *args, bool hold)
{
	const char *verb = hold ? "hold snapshot" : "release hold from snapshot";
	const char *tag;
	char err[512] = "";
	dsl_snap_info_t *si = tarn_alloc(sizeof (*si));
	host_fs_t fs;
	int n = 0, r = 0;

	const char **snaps = snap_names(args, "snaps", verb, &n);
	if (snaps == NULL || host_arg_need(args, "tag", verb, &tag) != 0 ||
	    snap_open(verb, snaps[0], false, &fs) != 0) {
		tarn_free(snaps);
		tarn_free(si);
		return (HOST_FAILED);
	}
	for (int i = 0; i < n && r == 0; i++) {
		if (!snap_same_pool(snaps[0], snaps[i]))
			r = host_report(verb, snaps[i], EXDEV,
			    "snapshots must be in the same pool");
		else if (dsl_snapshot_info(fs.hf_dp, snaps[i], si, err, sizeof (err)) != 0)
			r = host_report(verb, snaps[i], ENOENT, "dataset does not exist");
	}
	if (r == 0) {
		bool rec = host_arg_bool(args, "recursive");
		int e = hold ? dsl_hold(fs.hf_dp, snaps, n, tag, rec, err, sizeof (err)) :
		    dsl_release(fs.hf_dp, snaps, n, tag, rec, err, sizeof (err));
		r = e != 0 ? host_report(verb, snaps[0], e, err) : 0;
	}
	if (r == 0)
		host_history_log(fs.hf_spa);
	host_fs_close(&fs);
	tarn_free(snaps);
	tarn_free(si);
	return (r);
}

static int
op_fs_hold(json_object *args, json_object *res)
{
	return (snap_hold_op(args, true));
}

static int
op_fs_release(json_object *args, json_object *res)
{
	return (snap_hold_op(args, false));
}

typedef struct holds_walk {
	host_fs_t   *hw_fs;
	const char  *hw_snap;       /* the part after '@' */
	const char  *hw_name;       /* the snapshot being listed */
	json_object *hw_out;
	int          hw_ret;
} holds_walk_t;

static void
holds_one(void *arg, const char *snap, const char *tag, uint64_t when)
{
	holds_walk_t *hw = arg;
	json_object *o = json_object_new_object();
	json_object_object_add(o, "name", json_object_new_string(snap));
	json_object_object_add(o, "tag", json_object_new_string(tag));
	json_object_object_add(o, "when", json_object_new_uint64(when));
	json_object_array_add(hw->hw_out, o);
}

/* The holds of fs@snap (recursive walks: only where such a snapshot exists). */
static int
holds_fs(void *arg, const char *fs, int depth)
{
	holds_walk_t *hw = arg;
	char name[DSL_NAME_MAX], err[512] = "";
	dsl_snap_info_t si;
	(void) snprintf(name, sizeof (name), "%s@%s", fs, hw->hw_snap);
	if (depth > 0 && dsl_snapshot_info(hw->hw_fs->hf_dp, name, &si, NULL, 0) != 0)
		return (0);
	int e = dsl_holds(hw->hw_fs->hf_dp, name, holds_one, hw, err, sizeof (err));
	if (e != 0)
		hw->hw_ret = host_report("open", name, e, err);
	return (0);
}

static int
op_fs_holds(json_object *args, json_object *res)
{
	holds_walk_t hw = { .hw_out = json_object_new_array() };
	bool rec = host_arg_bool(args, "recursive");
	dsl_snap_info_t *si = tarn_alloc(sizeof (*si));
	int n = 0;

	json_object_object_add(res, "holds", hw.hw_out);
	const char **snaps = snap_names(args, "snaps", "open", &n);
	for (int i = 0; snaps != NULL && i < n; i++) {
		host_fs_t fs;
		char fsname[DSL_NAME_MAX];
		if (snap_open("open", snaps[i], true, &fs) != 0) {
			hw.hw_ret = HOST_FAILED;
			continue;
		}
		if (dsl_snapshot_info(fs.hf_dp, snaps[i], si, NULL, 0) != 0) {
			hw.hw_ret = host_report("open", snaps[i], ENOENT, "dataset does not exist");
		} else {
			(void) snprintf(fsname, sizeof (fsname), "%.*s",
			    (int)strcspn(snaps[i], "@"), snaps[i]);
			hw.hw_fs = &fs;
			hw.hw_snap = strchr(snaps[i], '@') + 1;
			(void) dsl_dataset_iter(fs.hf_dp, fsname, rec ? -1 : 0, holds_fs, &hw);
		}
		host_fs_close(&fs);
	}
	tarn_free(si);
	tarn_free(snaps);
	return (snaps == NULL ? HOST_FAILED : hw.hw_ret);
}

/* ---- bookmarks ---- */

static int
op_fs_bookmark(json_object *args, json_object *res)
{
	const char *src, *bm;
	char err[512] = "";
	host_fs_t fs;

	if (host_arg_need(args, "src", "create bookmark", &src) != 0 ||
	    host_arg_need(args, "bm", "create bookmark", &bm) != 0 ||
	    snap_open("create bookmark", bm, false, &fs) != 0)
		return (HOST_FAILED);
	int e = dsl_bookmark_create(fs.hf_dp, src, bm, err, sizeof (err));
	int r = e != 0 ? host_report("create bookmark", bm, e, err) : 0;
	if (r == 0)
		host_history_log(fs.hf_spa);
	host_fs_close(&fs);
	return (r);
}

static int
op_fs_bookmark_destroy(json_object *args, json_object *res)
{
	const char *name;
	char err[512] = "";
	host_fs_t fs;

	if (host_arg_need(args, "name", "destroy", &name) != 0 ||
	    snap_open("destroy", name, false, &fs) != 0)
		return (HOST_FAILED);
	int e = dsl_bookmark_destroy(fs.hf_dp, name, err, sizeof (err));
	int r = e != 0 ? host_report("destroy", name, e, err) : 0;
	if (r == 0)
		host_history_log(fs.hf_spa);
	host_fs_close(&fs);
	return (r);
}

const host_op_t host_ops_snap[] = {
	{ "fs.snapshot", op_fs_snapshot },
	{ "fs.snap_destroy", op_fs_snap_destroy },
	{ "fs.snap_rename", op_fs_snap_rename },
	{ "fs.hold", op_fs_hold },
	{ "fs.release", op_fs_release },
	{ "fs.holds", op_fs_holds },
	{ "fs.bookmark", op_fs_bookmark },
	{ "fs.bookmark_destroy", op_fs_bookmark_destroy },
	{ NULL, NULL }
};
