/*
 * host_op_fs_props.c — the operation behind zfs list and zfs get: the
 * properties of a set of datasets, read in one call for the whole
 * command (sanoid and syncoid run `zfs get -Hp` and `zfs list -Hp` often;
 * a call per dataset or per property would cost a round trip each).
 *
 *   fs.props   names?: [dataset...]  none: every pool's datasets, at all depths
 *              depth: n              below each named one (-1: all; 0: it alone)
 *              props: [property...]  native names, or user ones ("module:name")
 *              parsable              numbers exact, times in seconds (-p)
 *              sort: [property...]   also these as sort keys (exact): numbers
 *                                    for sizes, numbers and creation, else strings
 *              user_all              also every user property in effect (get all)
 *              filesystems           false: file systems are not listed (-t)
 *              snapshots, bookmarks  list these too: each file system's after it,
 *                                    one level below it for depth (zfs's -d)
 *              zpool                 how the hint of a read failure names the pool
 *                                    command ("zpool", "tarn pool")
 *     result   datasets: [{name, props: [{value, source, from?, na?}...], sort: [...],
 *                         user: [{property, value, source, from?}...], unreadable?}]
 *              in the tree's order, parents first; absent when the pools could
 *              not be listed (the cache file; said on stderr)
 *
 * A name may be a snapshot ("fs@snap") or a bookmark ("fs#bm"), listed
 * whatever the types.  Properties may also be "written@SNAP"
 * (dsl_dataset_written_since).  na: the property does not apply to this
 * kind of dataset (dsl_prop_applies), or is an origin a file system does
 * not have: zfs get all leaves it out.
 * value is the property as zfs get prints it (dsl_prop_get; "-" when it
 * does not apply); source one of "-", "default", "local", "inherited"
 * (from: the dataset it comes from), "temporary" (a mount's own option,
 * host_mount_temp).  A named dataset that cannot be opened is reported
 * ("cannot open 'x': dataset does not exist") and the others still read;
 * a property that cannot be read (EIO, ECKSUM: damaged metadata) is
 * reported once per dataset ("cannot read 'x': ..."), the dataset marked
 * unreadable and its values "-".  Either makes ret HOST_FAILED, as zfs
 * exits 1.
 */
#include "host_impl.h"

typedef struct props_walk {
	host_fs_t  *pw_fs;
	int        *pw_props;       /* per requested property: its dsl_prop_t, or -1: user */
	json_object *pw_names;      /* the requested names (strings) */
	int        *pw_sort;
	json_object *pw_sortnames;
	bool        pw_parsable, pw_user_all;
	bool        pw_fs_rows, pw_snaps, pw_bookmarks;  /* types listed */
	int         pw_depth;       /* -1: all; else levels below a named dataset */
	const char *pw_zpool;
	json_object *pw_out;        /* datasets */
	int         pw_ret;
	dsl_prop_val_t pw_v;
} props_walk_t;

static const char *
props_source(dsl_source_t s)
{
	switch (s) {
	case DSL_SRC_DEFAULT: return ("default");
	case DSL_SRC_LOCAL: return ("local");
	case DSL_SRC_INHERITED: return ("inherited");
	case DSL_SRC_TEMPORARY: return ("temporary");
	default: return ("-");
	}
}

/* {value, source, from?} of v; with prop (user properties of get all) first. */
static json_object *
props_val_json(const char *prop, const dsl_prop_val_t *v)
{
	json_object *o = json_object_new_object();

	if (prop != NULL)
		json_object_object_add(o, "property", json_object_new_string(prop));
	json_object_object_add(o, "value", json_object_new_string(v->dpv_str));
	json_object_object_add(o, "source", json_object_new_string(props_source(v->dpv_source)));
	if (v->dpv_source == DSL_SRC_INHERITED)
		json_object_object_add(o, "from", json_object_new_string(v->dpv_setpoint));
	return (o);
}

#define PROPS_WRITTEN_AT (-2)     /* a code of props_codes: "written@SNAP" */

/* written@SNAP of name: the bytes written since that snapshot ("-" when none such). */
static int
props_written_at(props_walk_t *w, const char *name, const char *pname, bool exact,
    dsl_prop_val_t *v)
{
	uint64_t n = 0;
	memset(v, 0, sizeof (*v));
	v->dpv_source = DSL_SRC_NONE;
	if (dsl_dataset_written_since(w->pw_fs->hf_dp, name, strchr(pname, '@') + 1, &n,
	    NULL, 0) != 0) {
		(void) snprintf(v->dpv_str, sizeof (v->dpv_str), "-");
		return (0);
	}
	v->dpv_num = n;
	if (exact)
		(void) snprintf(v->dpv_str, sizeof (v->dpv_str), "%" PRIu64, n);
	else
		dsl_nicebytes(n, v->dpv_str, sizeof (v->dpv_str));
	return (0);
}

/* The value (and source) of a property of name: native (p >= 0) or user. */
static int
props_get(props_walk_t *w, const char *name, int p, const char *pname, bool exact,
    dsl_prop_val_t *v)
{
	if (p == PROPS_WRITTEN_AT)
		return (props_written_at(w, name, pname, exact, v));
	if (p < 0)
		return (dsl_prop_user_get(w->pw_fs->hf_dp, name, pname, v, NULL, 0));
	int e = dsl_prop_get(w->pw_fs->hf_dp, name, p, exact, v, NULL, 0);
	if (e == 0)
		(void) host_mount_temp(name, p, v);
	return (e);
}

/*
 * A property of name could not be read (EIO, ECKSUM: damaged metadata,
 * now in the pool's error log): say so, once per dataset.
 */
static bool
props_read_failed(props_walk_t *w, const char *name, int e)
{
	if (e != EIO && e != ECKSUM)
		return (false);
	char msg[DSL_NAME_MAX + 128];
	(void) snprintf(msg, sizeof (msg), "%s (damaged metadata: see '%s status -v %.*s')",
	    tarn_strerror(e), w->pw_zpool, (int)strcspn(name, "/@"), name);
	w->pw_ret = host_report("read", name, e, msg);
	return (true);
}

/* The sort key k of name: a number (sizes, numbers, creation) or a string. */
static json_object *
props_sort_key(props_walk_t *w, const char *name, int k)
{
	const char *pname = json_object_get_string(json_object_array_get_idx(w->pw_sortnames, k));
	dsl_prop_val_t *v = &w->pw_v;
	int p = w->pw_sort[k];
	int e = props_get(w, name, p, pname, true, v);

	if ((p >= 0 && dsl_prop_is_numeric(p)) || p == PROPS_WRITTEN_AT)
		return (json_object_new_uint64(e == 0 ? v->dpv_num : 0));
	if (p == DSL_PROP_CREATETXG || p == DSL_PROP_GUID || p == DSL_PROP_OBJSETID)
		return (json_object_new_uint64(e == 0 ? v->dpv_num : 0));
	if (p == DSL_PROP_CREATION)     /* exact: seconds */
		return (json_object_new_uint64(e == 0 ? strtoull(v->dpv_str, NULL, 10) : 0));
	return (json_object_new_string(e == 0 ? v->dpv_str : "-"));
}

static void
props_user_one(void *arg, const char *prop)
{
	void **a = arg;
	props_walk_t *w = a[0];
	const char *name = a[1];

	if (dsl_prop_user_get(w->pw_fs->hf_dp, name, prop, &w->pw_v, NULL, 0) == 0)
		json_object_array_add(a[2], props_val_json(prop, &w->pw_v));
}

/* One dataset: its values, sort keys and (get all) user properties. */
static int
props_row(void *arg, const char *name, int depth)
{
	props_walk_t *w = arg;
	dsl_prop_val_t *v = &w->pw_v;
	size_t n = json_object_array_length(w->pw_names);
	json_object *ds = json_object_new_object(), *vals = json_object_new_array_ext((int)n);
	bool unreadable = false;

	json_object_object_add(ds, "name", json_object_new_string(name));
	for (size_t i = 0; i < n; i++) {
		const char *pname = json_object_get_string(json_object_array_get_idx(w->pw_names, i));
		int e = props_get(w, name, w->pw_props[i], pname, w->pw_parsable, v);
		if (e != 0 && !unreadable)
			unreadable = props_read_failed(w, name, e);
		if (e != 0) {
			(void) snprintf(v->dpv_str, sizeof (v->dpv_str), "-");
			v->dpv_source = DSL_SRC_NONE;
		}
		json_object *o = props_val_json(NULL, v);
		int p = w->pw_props[i];
		if (p >= 0 && (!dsl_prop_applies(p, name) ||
		    ((p == DSL_PROP_ORIGIN || p == DSL_PROP_RECEIVE_RESUME_TOKEN) &&
		    strcmp(v->dpv_str, "-") == 0)))
			json_object_object_add(o, "na", json_object_new_boolean(true));
		json_object_array_add(vals, o);
	}
	json_object_object_add(ds, "props", vals);
	if (w->pw_user_all) {
		json_object *user = json_object_new_array();
		void *a[3] = { w, (void *)name, user };
		(void) dsl_prop_user_iter(w->pw_fs->hf_dp, name, props_user_one, a);
		json_object_object_add(ds, "user", user);
	}
	if (unreadable) {
		json_object_object_add(ds, "unreadable", json_object_new_boolean(true));
	} else if (w->pw_sortnames != NULL) {
		size_t ns = json_object_array_length(w->pw_sortnames);
		json_object *keys = json_object_new_array_ext((int)ns);
		for (size_t k = 0; k < ns; k++)
			json_object_array_add(keys, props_sort_key(w, name, (int)k));
		json_object_object_add(ds, "sort", keys);
	}
	json_object_array_add(w->pw_out, ds);
	return (0);
}

/* Property names to dsl_prop_t (-1: a user property); false when one is neither. */
static bool
props_codes(json_object *names, int **codesp)
{
	size_t n = names != NULL ? json_object_array_length(names) : 0;
	int *codes = tarn_alloc(sizeof (int) * (n + 1));

	*codesp = codes;
	for (size_t i = 0; i < n; i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(names, i));
		codes[i] = s != NULL ? dsl_prop_lookup(s) : -1;
		if (s != NULL && strncmp(s, "written@", 8) == 0 && s[8] != '\0') {
			codes[i] = PROPS_WRITTEN_AT;
			continue;
		}
		if (codes[i] < 0 && (s == NULL || !dsl_prop_user_name(s))) {
			(void) host_report("get", s != NULL ? s : "-", EINVAL, "invalid property");
			return (false);
		}
	}
	return (true);
}

static json_object *
props_array(json_object *args, const char *key)
{
	json_object *a;

	if (!json_object_object_get_ex(args, key, &a) || !json_object_is_type(a, json_type_array))
		return (NULL);
	return (a);
}

/* Bookmarks as zfs lists them: by createtxg, then by name. */
static int
props_bm_cmp(const void *a, const void *b)
{
	const dsl_bookmark_info_t *x = a, *y = b;
	if (x->dbi_txg != y->dbi_txg)
		return (x->dbi_txg < y->dbi_txg ? -1 : 1);
	return (strcmp(x->dbi_name, y->dbi_name));
}

/*
 * A file system of the walk: its row (when file systems are listed), then
 * its snapshots oldest first and its bookmarks, one level below it.
 */
static int
props_fs(void *arg, const char *name, int depth)
{
	props_walk_t *w = arg;
	if (w->pw_fs_rows)
		(void) props_row(w, name, depth);
	if (w->pw_depth >= 0 && depth + 1 > w->pw_depth)
		return (0);
	dsl_pool_t *dp = w->pw_fs->hf_dp;
	if (w->pw_snaps) {
		dsl_snap_info_t *si = NULL;
		int n = 0;
		if (dsl_snapshot_list(dp, name, &si, &n, NULL, 0) == 0)
			for (int i = 0; i < n; i++)
				(void) props_row(w, si[i].dsi_name, depth + 1);
		tarn_free(si);
	}
	if (w->pw_bookmarks) {
		dsl_bookmark_info_t *bi = NULL;
		int n = 0;
		if (dsl_bookmark_list(dp, name, &bi, &n, NULL, 0) == 0 && n > 1)
			qsort(bi, (size_t)n, sizeof (*bi), props_bm_cmp);
		for (int i = 0; bi != NULL && i < n; i++)
				(void) props_row(w, bi[i].dbi_name, depth + 1);
		tarn_free(bi);
	}
	return (0);
}

/* A named snapshot or bookmark: its row, or "cannot open 'x': dataset does not exist". */
static void
props_named_snap(props_walk_t *w, const char *name)
{
	host_fs_t fs;
	char fsname[DSL_NAME_MAX];
	dsl_prop_val_t *v = &w->pw_v;
	(void) snprintf(fsname, sizeof (fsname), "%.*s", (int)strcspn(name, "@#"), name);
	if (host_fs_open("open", fsname, true, &fs) != 0) {
		w->pw_ret = HOST_FAILED;
		return;
	}
	w->pw_fs = &fs;
	char err[512] = "";
	int e = dsl_prop_get(fs.hf_dp, name, DSL_PROP_TYPE, false, v, err, sizeof (err));
	if (e != 0)
		w->pw_ret = host_report("open", name, e, err[0] != '\0' ? err :
		    "dataset does not exist");
	else
		(void) props_row(w, name, 0);
	host_fs_close(&fs);
	w->pw_fs = NULL;
}

/* Each dataset named (or each pool, to all depths) into w->pw_out. */
static void
props_walk(props_walk_t *w, char **names, int n, int depth)
{
	w->pw_depth = depth;
	for (int i = 0; i < n; i++) {
		host_fs_t fs;
		if (strchr(names[i], '@') != NULL || strchr(names[i], '#') != NULL) {
			props_named_snap(w, names[i]);
			continue;
		}
		if (host_fs_open_existing(names[i], true, &fs) != 0) {
			w->pw_ret = HOST_FAILED;
			continue;
		}
		w->pw_fs = &fs;
		if (w->pw_fs_rows || w->pw_snaps || w->pw_bookmarks)
			(void) dsl_dataset_iter(fs.hf_dp, names[i], depth, props_fs, w);
		host_fs_close(&fs);
		w->pw_fs = NULL;
	}
}

static int
op_fs_props(json_object *args, json_object *res)
{
	props_walk_t *w = tarn_alloc(sizeof (*w));
	json_object *names = props_array(args, "names"), *fsv, *dv;
	bool filesystems = !json_object_object_get_ex(args, "filesystems", &fsv) ||
	    json_object_get_boolean(fsv);
	int depth = json_object_object_get_ex(args, "depth", &dv) ? json_object_get_int(dv) : 0;
	char **list = NULL;
	int n = 0, r;

	w->pw_names = props_array(args, "props");
	if (w->pw_names == NULL)
		w->pw_names = json_object_new_array();
	else
		json_object_get(w->pw_names);
	w->pw_sortnames = props_array(args, "sort");
	w->pw_parsable = host_arg_bool(args, "parsable");
	w->pw_user_all = host_arg_bool(args, "user_all");
	w->pw_fs_rows = filesystems;
	w->pw_snaps = host_arg_bool(args, "snapshots");
	w->pw_bookmarks = host_arg_bool(args, "bookmarks");
	w->pw_zpool = host_arg_str(args, "zpool") != NULL ? host_arg_str(args, "zpool") : "zpool";
	if (!props_codes(w->pw_names, &w->pw_props) || !props_codes(w->pw_sortnames,
	    &w->pw_sort)) {
		r = HOST_FAILED;
		goto out;
	}
	if (names == NULL) {
		int e = host_pool_names(&list, &n);
		if (e != 0) {
			host_warn("cannot read the cache file %s: %s\n", spa_cachefile_path(),
			    tarn_strerror(e));
			r = HOST_FAILED;
			goto out;
		}
		depth = -1;
	} else {
		n = (int)json_object_array_length(names);
		list = tarn_alloc(sizeof (char *) * (size_t)(n + 1));
		for (int i = 0; i < n; i++) {
			const char *s = json_object_get_string(json_object_array_get_idx(names, i));
			list[i] = tarn_strdup(s != NULL ? s : "");
		}
	}
	w->pw_out = json_object_new_array();
	json_object_object_add(res, "datasets", w->pw_out);
	props_walk(w, list, n, depth);
	host_names_free(list, n);
	r = w->pw_ret;
out:
	json_object_put(w->pw_names);
	tarn_free(w->pw_props);
	tarn_free(w->pw_sort);
	tarn_free(w);
	return (r);
}

const host_op_t host_ops_fs_props[] = {
	{ "fs.props", op_fs_props },
	{ NULL, NULL }
};
