/*
 * host_op_info.c — what zpool status, list, get and set read about pools:
 * one operation that opens each pool read-only for a look (as a reader:
 * SPA_OPEN_READONLY | SPA_OPEN_NOVERIFY; in tarnd it shares a held pool
 * with other readers) and describes it.
 *
 *   pool.info   verb, names?: [pool...],   pools: [pool...]
 *               tree, errlog, props
 *
 * names absent: every pool of this host (host_pool_names; when that
 * fails, "cannot VERB 'CACHEFILE'" is reported and there is no "pools").
 * A pool named that is not imported here still gets its entry, in order,
 * with "nopool" (so the command line prints "cannot open 'X': no such
 * pool" between the others, as before), and the operation fails; a pool
 * that would not open is described by its error alone.  Each pool:
 *
 *   name
 *   nopool, errno, error        not imported here (errno HOST_ENOPOOL)
 *   errno, error                imported but would not open
 *   state                       its health, as vdev_state_name() says it
 *   suspended                   0, or the errno of the txg sync that failed
 *   guid, txg, version          pool GUID, last synced txg, SPA version
 *   features                    SPA_FEATURE_* bits enabled
 *   errors                      blocks in the persistent error log
 *   space: {size, alloc, free}  spa_get_space()
 *   scan                        the scan's statistics (host_scan_json)
 *   ashift                      the first top-level vdev's (0: none)
 *   vdevs, spares, cache        (tree) the vdev tree from its root, the
 *                               hot spares and the cache devices, each a
 *                               vdev as below (a log or special top-level
 *                               vdev has class: "log" / "special")
 *   errlog: [entry...]          (errlog, when there are errors and the log
 *                               could be read) the damaged files: {path}
 *                               through the mount of a mounted dataset
 *                               (an object's blocks once), else each block
 *                               {dataset, object, level, blkid, offset},
 *                               dataset by name where it has one
 *   readonly                    (props) a pool the daemon holds that was
 *                               imported read-only
 *   uncached                    (props) imported without a cache file entry
 *   ashift_given                (props) create had -o ashift=N: 1, 0 not,
 *                               -1 cannot tell (from the pool's history)
 *
 * A vdev: type ("root", "mirror", "raidz", "replacing", "spare", "disk",
 * "missing", "file"), id (index in its parent), nparity (raidz), guid,
 * path (when it has one), state, read_errors, write_errors,
 * checksum_errors, offline and resilvering (when set), psize (a leaf's
 * device size; a hot spare's is that of its copy in the tree when it
 * stands in there, the spare list's entry being closed), size and alloc
 * (the pool's root and top-level vdevs only, deferred frees counted, as
 * zpool shows capacity for those), children; a hot spare also inuse
 * (standing in for a device in a spare group).
 *
 * The tree is read under spa_vdev_hold (in the daemon the pool's thread
 * detaches devices when a resilver ends), and only there: no other pool
 * lock is taken while it is held.
 */
#include "host_impl.h"

#include <limits.h>

typedef struct info_opts {
	bool io_tree;      /* vdevs, spares */
	bool io_errlog;    /* errlog */
	bool io_props;     /* readonly, uncached, ashift_given */
} info_opts_t;

static void
info_u64(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static void
info_str(json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

/* Is the spare leaf standing in for a device (in a spare group below vd)? */
static bool
info_spare_inuse(const vdev_t *vd, const vdev_t *spare)
{
	if (vdev_type(vd) == VDEV_TYPE_SPARE) {
		for (int i = 0; i < vdev_children(vd); i++)
			if (vdev_guid(vdev_child(vd, i)) == vdev_guid(spare) ||
			    (vdev_path(spare) != NULL && vdev_path(vdev_child(vd, i)) != NULL &&
			    strcmp(vdev_path(vdev_child(vd, i)), vdev_path(spare)) == 0))
				return (true);
	}
	for (int i = 0; i < vdev_children(vd); i++)
		if (info_spare_inuse(vdev_child(vd, i), spare))
			return (true);
	return (false);
}

/* A vdev and (unless a spare) the ones below it. */
static json_object *
info_vdev(spa_t *spa, const vdev_t *vd)
{
	json_object *o = json_object_new_object();
	const vdev_stat_t *vs = vdev_stat(vd);
	uint64_t size, alloc;

	info_str(o, "type", host_vdev_type(vd));
	info_u64(o, "id", vdev_id(vd));
	if (vdev_parent(vd) != NULL && vdev_type(vdev_parent(vd)) == VDEV_TYPE_ROOT &&
	    vdev_top(vd) == vd && vdev_alloc_bias(vd) != VDEV_BIAS_NORMAL)
		info_str(o, "class", vdev_bias_name(vdev_alloc_bias(vd)));
	if (vdev_type(vd) == VDEV_TYPE_RAIDZ)
		json_object_object_add(o, "nparity", json_object_new_int(vdev_nparity(vd)));
	info_u64(o, "guid", vdev_guid(vd));
	if (vdev_path(vd) != NULL)
		info_str(o, "path", vdev_path(vd));
	info_str(o, "state", vdev_state_name(vdev_state(vd)));
	info_u64(o, "read_errors", vs->vs_read_errors);
	info_u64(o, "write_errors", vs->vs_write_errors);
	info_u64(o, "checksum_errors", vs->vs_checksum_errors);
	if (vdev_offline(vd))
		json_object_object_add(o, "offline", json_object_new_boolean(true));
	if (vdev_resilvering(vd))
		json_object_object_add(o, "resilvering", json_object_new_boolean(true));
	info_u64(o, "psize", vdev_psize(vd));
	if (host_vdev_space(spa, vd, &size, &alloc)) {
		info_u64(o, "size", size);
		info_u64(o, "alloc", alloc);
	}
	if (vdev_children(vd) > 0) {
		json_object *c = json_object_new_array_ext(vdev_children(vd));
		for (int i = 0; i < vdev_children(vd); i++)
			if (!vdev_is_hole(vdev_child(vd, i)))   /* a removed log vdev's place */
				json_object_array_add(c, info_vdev(spa, vdev_child(vd, i)));
		json_object_object_add(o, "children", c);
	}
	return (o);
}

/* The hot spares: each as a vdev, with inuse and the size of its open copy. */
static json_object *
info_spares(spa_t *spa, vdev_t *root)
{
	const vdev_t *sp = vdev_spares(root);
	json_object *a = json_object_new_array();

	for (int i = 0; sp != NULL && i < vdev_children(sp); i++) {
		const vdev_t *vd = vdev_child(sp, i);
		const vdev_t *in = vdev_lookup_guid(root, vdev_guid(vd));
		json_object *o = info_vdev(spa, vd);
		info_u64(o, "psize", vdev_psize((in != NULL ? in : vd)));
		json_object_object_add(o, "inuse",
		    json_object_new_boolean(info_spare_inuse(root, vd)));
		json_object_array_add(a, o);
	}
	return (a);
}

#define INFO_DSNAME_MAX 256      /* a dataset's full name, NUL included */

/* One block of the error log that is not listed by its path. */
static json_object *
info_errlog_block(dsl_pool_t *dp, const spa_errlog_ent_t *e, char *ds)
{
	json_object *o = json_object_new_object();

	(void) snprintf(ds, INFO_DSNAME_MAX, "%s", e->see_objset);
	if (dp != NULL)
		(void) dsl_dataset_key_name(dp, e->see_objset, ds, INFO_DSNAME_MAX);
	info_str(o, "dataset", ds);
	info_u64(o, "object", e->see_object);
	info_u64(o, "level", e->see_level);
	info_u64(o, "blkid", e->see_blkid);
	info_u64(o, "offset", e->see_offset);
	return (o);
}

/* The damaged files of the persistent error log; NULL when it cannot be read. */
static json_object *
info_errlog(spa_t *spa)
{
	spa_errlog_ent_t *ents = NULL;
	int n = 0;

	if (spa_errlog_list(spa, &ents, &n) != 0)
		return (NULL);
	json_object *a = json_object_new_array_ext(n);
	dsl_pool_t *dp = NULL;
	if (dsl_pool_open_reader(spa, &dp) != 0)      /* status only reads */
		dp = NULL;
	char *where = tarn_alloc(PATH_MAX), *ds = tarn_alloc(INFO_DSNAME_MAX);
	bool by_path = false;           /* the previous entry was listed by its path */
	for (int i = 0; i < n; i++) {
		const spa_errlog_ent_t *e = &ents[i];
		/*
		 * A file of a mounted dataset: its path, once (as zpool prints
		 * it); the log is sorted by object set and object, so an
		 * object's blocks follow one another.
		 */
		bool again = i > 0 && ents[i - 1].see_object == e->see_object &&
		    strcmp(ents[i - 1].see_objset, e->see_objset) == 0;
		if (again && by_path)
			continue;
		by_path = host_mount_obj_path(spa, e->see_objset, e->see_object, where, PATH_MAX);
		if (by_path) {
			json_object *o = json_object_new_object();
			info_str(o, "path", where);
			json_object_array_add(a, o);
		} else {
			json_object_array_add(a, info_errlog_block(dp, e, ds));
		}
	}
	if (dp != NULL)
		dsl_pool_close(dp);
	tarn_free(where);
	tarn_free(ds);
	tarn_free(ents);
	return (a);
}

/* Does the create command line (history, after "zpool create ") hold -o ashift=? */
static int
info_create_ashift(const char *cmd)
{
	char *save = NULL, *copy = tarn_strdup(cmd);
	int given = 0;

	/* create's options are -f -n -o ARG -O ARG -m ARG, anywhere */
	for (char *t = strtok_r(copy, " ", &save); t != NULL && given == 0;
	    t = strtok_r(NULL, " ", &save)) {
		if (t[0] != '-' || strcmp(t, "--") == 0)
			continue;
		for (const char *c = t + 1; *c != '\0'; c++) {
			if (strchr("oOm", *c) == NULL)
				continue;
			const char *arg = c[1] != '\0' ? c + 1 : strtok_r(NULL, " ", &save);
			if (*c == 'o' && arg != NULL && strncmp(arg, "ashift=", 7) == 0)
				given = 1;
			break;
		}
	}
	tarn_free(copy);
	return (given);
}

/*
 * Was the pool given its ashift at creation (create -o ashift=N)?  The
 * labels keep only the ashift in use, so the answer comes from the pool's
 * history, whose first record is the create command line as typed: 1
 * given, 0 not, -1 cannot tell (no history: a version-1 pool, or one
 * upgraded since; the create record gone from the ring or cut short).
 */
static int
info_ashift_given(spa_t *spa)
{
	spa_history_ent_t *ents;
	int n, given = -1;

	if (spa_history_get(spa, &ents, &n) != 0)
		return (-1);
	/* the first command (internal events, as the pool's creation, come first) */
	int first = 0;
	while (first < n && ents[first].she_kind != SPA_HIST_CMD)
		first++;
	if (first < n && strncmp(ents[first].she_cmd, "zpool create ", 13) == 0) {
		const spa_history_ent_t *e = &ents[first];
		given = info_create_ashift(e->she_cmd + 13);
		/* the record may have lost the option (layouts keep 495 or 399 bytes) */
		if (given == 0 && strlen(e->she_cmd) >= (e->she_long ? 399 : 495))
			given = -1;
	}
	tarn_free(ents);
	return (given);
}

/*
 * readonly and cachefile describe the import: a pool the daemon holds
 * says how it was imported (host_pool_held); in-process, or a pool the
 * daemon could not open, this command looked at it read-only itself, and
 * the pool is one of the cache file's, which are imported read-write.
 */
static void
info_props(spa_t *spa, json_object *p)
{
	bool uncached, held = host_pool_held(spa, &uncached);

	json_object_object_add(p, "readonly", json_object_new_boolean(held && spa_readonly(spa)));
	json_object_object_add(p, "uncached", json_object_new_boolean(uncached));
	json_object_object_add(p, "ashift_given", json_object_new_int(info_ashift_given(spa)));
}

/* What an open pool says about itself. */
static void
info_spa(spa_t *spa, const info_opts_t *io, json_object *p)
{
	spa_space_t ss;
	json_object *space = json_object_new_object();

	spa_get_space(spa, &ss);
	spa_space_t special;
	spa_class_space(spa, VDEV_BIAS_SPECIAL, &special);   /* zpool counts it, not logs */
	ss.ss_size += special.ss_size;
	ss.ss_alloc += special.ss_alloc;
	ss.ss_free += special.ss_free;
	info_str(p, "state", vdev_state_name(spa_state(spa)));
	json_object_object_add(p, "suspended", json_object_new_int(spa_suspended(spa)));
	info_u64(p, "guid", spa_guid(spa));
	info_u64(p, "txg", spa_last_synced_txg(spa));
	info_u64(p, "version", spa_version(spa));
	info_u64(p, "features", spa_features(spa));
	uint64_t nerr = spa_errlog_count(spa);
	info_u64(p, "errors", nerr);
	info_u64(space, "size", ss.ss_size);
	info_u64(space, "alloc", ss.ss_alloc);
	info_u64(space, "free", ss.ss_free);
	json_object_object_add(p, "space", space);
	json_object *scan = json_object_new_object();
	host_scan_json(spa, scan);
	json_object_object_add(p, "scan", scan);
	spa_vdev_hold(spa);
	vdev_t *root = spa_root_vdev(spa);
	info_u64(p, "ashift", root != NULL && vdev_children(root) > 0 ?
	    vdev_ashift(vdev_child(root, 0)) : 0);
	if (io->io_tree && root != NULL) {
		json_object_object_add(p, "vdevs", info_vdev(spa, root));
		json_object_object_add(p, "spares", info_spares(spa, root));
		json_object *cache = json_object_new_array();
		for (int i = 0; i < spa_l2cache_count(spa); i++)
			json_object_array_add(cache, info_vdev(spa, spa_l2cache_leaf(spa, i)));
		json_object_object_add(p, "cache", cache);
	}
	spa_vdev_rele(spa);
	json_object *log;
	if (io->io_errlog && nerr != 0 && (log = info_errlog(spa)) != NULL)
		json_object_object_add(p, "errlog", log);
	if (io->io_props)
		info_props(spa, p);
}

/* One pool's entry; false when it is not imported here. */
static bool
info_pool(const char *name, const info_opts_t *io, json_object *pools)
{
	json_object *p = json_object_new_object();
	char err[1024] = "";
	spa_t *spa;
	int e = host_pool_open(name, SPA_OPEN_READONLY | SPA_OPEN_NOVERIFY, &spa, err,
	    sizeof (err));

	info_str(p, "name", name);
	if (e == HOST_ENOPOOL)
		json_object_object_add(p, "nopool", json_object_new_boolean(true));
	if (spa == NULL) {
		json_object_object_add(p, "errno", json_object_new_int(e));
		info_str(p, "error", err);
	} else {
		info_spa(spa, io, p);
		host_pool_close(spa);
	}
	json_object_array_add(pools, p);
	return (e != HOST_ENOPOOL);
}

static int
op_pool_info(json_object *args, json_object *res)
{
	info_opts_t io = { host_arg_bool(args, "tree"), host_arg_bool(args, "errlog"),
		host_arg_bool(args, "props") };
	const char *verb = host_arg_str(args, "verb");
	json_object *names;
	char **all = NULL;
	int n = 0, r = 0, e;

	if (!json_object_object_get_ex(args, "names", &names) ||
	    !json_object_is_type(names, json_type_array)) {
		names = NULL;
		if ((e = host_pool_names(&all, &n)) != 0)
			return (host_report(verb != NULL ? verb : "list", spa_cachefile_path(), e,
			    NULL));
	}
	json_object *pools = json_object_new_array();
	json_object_object_add(res, "pools", pools);
	if (names != NULL)
		n = (int)json_object_array_length(names);
	for (int i = 0; i < n; i++) {
		const char *name = names != NULL ?
		    json_object_get_string(json_object_array_get_idx(names, i)) : all[i];
		if (name != NULL && !info_pool(name, &io, pools))
			r = HOST_FAILED;
	}
	if (all != NULL)
		host_names_free(all, n);
	return (r);
}

const host_op_t host_ops_info[] = {
	{ "pool.info", op_pool_info },
	{ NULL, NULL }
};
