/*
 * host_op_import.c — the operations of zpool import and zpool export.
 *
 *   pool.import_list  dirs?: [dir...]          pools: [{name, guid, state,
 *                                                active, tree?}...]
 *   pool.import       which | all, newname?,   imported: [{name, when?,
 *                     dirs?, readonly, no_cache, newest?}...], tried (all)
 *                     force, rewind, dryrun, nomount,
 *                     missing_log
 *   pool.export       names?: [pool...], all, force               -
 *
 * import_list: what the labels on the scanned devices (dirs absolute;
 * none: /dev) describe, leaving out destroyed pools and those this host
 * has imported already; state is the candidate's health as a
 * vdev_state_name word, computed from which leaves were found (also in
 * each node of tree, host_op_tree_json); active: it was not exported.
 * import: the pool named or numbered `which` (under newname), or all
 * that can be imported (active ones only with force); readonly and
 * no_cache as -o readonly=on, cachefile=none; missing_log (-m): a pool
 * whose log vdev is missing imports without it (its unreplayed intent
 * log lost; import_list names it as missing_log).  rewind (-F): from the
 * newest txg whose metadata verifies, back through the uberblock ring as
 * far as needed; its entry then has `when`, the time of the state the
 * pool went back to, and `newest`, that of the newest uberblock on the
 * devices, for the caller to say what was discarded.  dryrun (with
 * rewind): a read-only trial that leaves no trace.  Then the pool is
 * mounted (unless nomount): a dataset that does not mount fails the
 * operation, the pool staying imported.  In-process a resilver the
 * import started ends first.
 *
 * export unmounts the pool's datasets first (busy: reported, the pool
 * stays); -f of a pool that does not open only takes it out of the cache
 * file (a note says so).  all: every pool of this host.
 */
#include "host_impl.h"

#define IMPORT_MAX_DIRS 64

typedef struct import_req {
	const char       *ir_dirs[IMPORT_MAX_DIRS];
	int               ir_ndirs;
	spa_import_opts_t ir_spa;
	bool              ir_nomount;
	bool              ir_rewind;
	bool              ir_dryrun;
	json_object      *ir_imported;   /* the result's "imported" */
} import_req_t;

static void
import_req_init(json_object *args, import_req_t *ir)
{
	json_object *dirs;

	memset(ir, 0, sizeof (*ir));
	if (json_object_object_get_ex(args, "dirs", &dirs) &&
	    json_object_is_type(dirs, json_type_array))
		for (size_t i = 0; i < json_object_array_length(dirs) &&
		    ir->ir_ndirs < IMPORT_MAX_DIRS; i++)
			ir->ir_dirs[ir->ir_ndirs++] =
			    json_object_get_string(json_object_array_get_idx(dirs, i));
	if (host_arg_bool(args, "readonly"))
		ir->ir_spa.sio_flags |= SPA_OPEN_READONLY;
	ir->ir_spa.sio_no_cache = host_arg_bool(args, "no_cache");
	ir->ir_spa.sio_force = host_arg_bool(args, "force");
	ir->ir_spa.sio_missing_log = host_arg_bool(args, "missing_log");
	host_dmu_opts(&ir->ir_spa.sio_dmu);
	ir->ir_nomount = host_arg_bool(args, "nomount");
	ir->ir_rewind = host_arg_bool(args, "rewind");
	ir->ir_dryrun = host_arg_bool(args, "dryrun");
}

static int
import_scan(const import_req_t *ir, spa_import_cand_t **cands, int *n)
{
	return (spa_import_scan(ir->ir_ndirs > 0 ? ir->ir_dirs : NULL, ir->ir_ndirs,
	    cands, n));
}

/* Is a pool with this GUID imported on this host (in the cache file)? */
static bool
import_is_imported(uint64_t guid)
{
	spa_cache_entry_t *ents;
	bool found = false;
	int n;

	if (spa_cache_read(&ents, &n) != 0)
		return (false);
	for (int i = 0; i < n; i++)
		found |= ents[i].sce_guid == guid;
	spa_cache_free(ents, n);
	return (found);
}

/* Candidates worth showing: not destroyed, not imported here already. */
static bool
import_cand_visible(const spa_import_cand_t *c)
{
	return (c->sic_state != POOL_STATE_DESTROYED &&
	    !(c->sic_state == POOL_STATE_ACTIVE && import_is_imported(c->sic_guid)));
}

/*
 * Health of a candidate's (unopened) tree from which leaves were found:
 * stored in vdev_state of each node.  Returns the node's state.
 */
static vdev_state_t
import_tree_state(vdev_t *vd)
{
	int bad = 0, degraded = 0;

	if (vdev_children(vd) == 0) {
		bool missing = vdev_type(vd) == VDEV_TYPE_MISSING ||
		    vdev_state(vd) == VDEV_STATE_CANT_OPEN ||
		    vdev_state(vd) == VDEV_STATE_FAULTED ||
		    vdev_state(vd) == VDEV_STATE_REMOVED;
		vdev_set_state(vd, missing ? VDEV_STATE_CANT_OPEN : VDEV_STATE_HEALTHY);
		return (vdev_state(vd));
	}
	for (int c = 0; c < vdev_children(vd); c++) {
		vdev_state_t s = import_tree_state(vdev_child(vd, c));
		/* a missing log vdev only degrades the pool (import -m) */
		if (s == VDEV_STATE_CANT_OPEN && vdev_type(vd) == VDEV_TYPE_ROOT &&
		    vdev_alloc_bias(vdev_child(vd, c)) == VDEV_BIAS_LOG)
			s = VDEV_STATE_DEGRADED;
		bad += s == VDEV_STATE_CANT_OPEN;
		degraded += s == VDEV_STATE_DEGRADED;
	}
	int tolerated = vdev_type(vd) == VDEV_TYPE_MIRROR ? vdev_children(vd) - 1 :
	    vdev_type(vd) == VDEV_TYPE_RAIDZ ? vdev_nparity(vd) : 0;
	if (bad > tolerated)
		vdev_set_state(vd, VDEV_STATE_CANT_OPEN);
	else if (bad > 0 || degraded > 0)
		vdev_set_state(vd, VDEV_STATE_DEGRADED);
	else
		vdev_set_state(vd, VDEV_STATE_HEALTHY);
	return (vdev_state(vd));
}

static json_object *
import_cand_json(spa_import_cand_t *c)
{
	json_object *o = json_object_new_object();
	vdev_state_t st = c->sic_tree != NULL ? import_tree_state(c->sic_tree) :
	    VDEV_STATE_CANT_OPEN;

	if (!c->sic_can_open)
		st = VDEV_STATE_CANT_OPEN;
	else if (st == VDEV_STATE_CANT_OPEN)
		st = VDEV_STATE_DEGRADED;     /* only log vdevs missing: -m opens it */
	if (c->sic_missing_log)
		json_object_object_add(o, "missing_log",
		    json_object_new_string(c->sic_missing_name));
	json_object_object_add(o, "name", json_object_new_string(c->sic_name));
	json_object_object_add(o, "guid", json_object_new_uint64(c->sic_guid));
	json_object_object_add(o, "state", json_object_new_string(vdev_state_name(st)));
	json_object_object_add(o, "active",
	    json_object_new_boolean(c->sic_state == POOL_STATE_ACTIVE));
	if (c->sic_tree != NULL)
		json_object_object_add(o, "tree", host_op_tree_json(c->sic_tree));
	return (o);
}

/* The scan failed: one line, not a "cannot VERB 'NAME'" one. */
static int
import_scan_failed(int error)
{
	host_warn("cannot search for pools: %s\n", tarn_strerror(error));
	return (HOST_FAILED);
}

static int
op_pool_import_list(json_object *args, json_object *res)
{
	spa_import_cand_t *cands;
	import_req_t ir;
	int n, error;

	import_req_init(args, &ir);
	if ((error = import_scan(&ir, &cands, &n)) != 0)
		return (import_scan_failed(error));
	json_object *pools = json_object_new_array();
	for (int i = 0; i < n; i++)
		if (import_cand_visible(&cands[i]))
			json_object_array_add(pools, import_cand_json(&cands[i]));
	json_object_object_add(res, "pools", pools);
	spa_import_cands_free(cands, n);
	return (0);
}

/* Does candidate c go by `which` (its name or its GUID in decimal)? */
static bool
import_cand_is(const spa_import_cand_t *c, const char *which)
{
	char guid[32];

	(void) snprintf(guid, sizeof (guid), "%" PRIu64, c->sic_guid);
	return (c->sic_state != POOL_STATE_DESTROYED &&
	    (strcmp(c->sic_name, which) == 0 || strcmp(guid, which) == 0));
}

/*
 * Find the candidates named (or numbered) `which`, destroyed pools aside:
 * returns how many match; the last one's GUID and name.
 */
static int
import_find_cand(const import_req_t *ir, const char *which, uint64_t *guidp,
    char *name, size_t namelen)
{
	spa_import_cand_t *cands;
	int n, found = 0;

	*guidp = 0;
	if (import_scan(ir, &cands, &n) != 0)
		return (0);
	for (int i = 0; i < n; i++) {
		if (!import_cand_is(&cands[i], which))
			continue;
		found++;
		*guidp = cands[i].sic_guid;
		(void) snprintf(name, namelen, "%s", cands[i].sic_name);
	}
	spa_import_cands_free(cands, n);
	return (found);
}

/*
 * The name the pool would get must not belong to another imported pool:
 * 0, or EEXIST with the message in err.
 */
static int
import_name_free(const import_req_t *ir, const char *which, const char *newname,
    char *err, size_t errlen)
{
	char name[SPA_NAME_MAX + 1];
	spa_cache_entry_t *ents;
	uint64_t guid;
	int n, error = 0;

	if (ir->ir_spa.sio_no_cache || (ir->ir_spa.sio_flags & SPA_OPEN_READONLY))
		return (0);
	if (import_find_cand(ir, which, &guid, name, sizeof (name)) != 1)
		return (0);   /* none or ambiguous: spa_import says which */
	const char *target = newname != NULL ? newname : name;
	if (spa_cache_read(&ents, &n) != 0)
		return (0);
	for (int i = 0; i < n && error == 0; i++) {
		if (strcmp(ents[i].sce_name, target) == 0 && ents[i].sce_guid != guid) {
			(void) snprintf(err, errlen, "a pool named '%s' is already "
			    "imported; give a new name: import %s NEWNAME", target, which);
			error = SET_ERROR(EEXIST);
		}
	}
	spa_cache_free(ents, n);
	return (error);
}

/*
 * The pool's uberblocks as its devices hold them (newest first), read
 * before the import so that a rewind can say what it discards; *np is 0
 * when they cannot be read.
 */
static void
import_ubs(const import_req_t *ir, const char *which, uberblock_t **ubsp, int *np)
{
	spa_import_cand_t *cands;
	int n;

	*ubsp = NULL;
	*np = 0;
	if (import_scan(ir, &cands, &n) != 0)
		return;
	for (int i = 0; i < n && *np == 0; i++) {
		spa_import_cand_t *c = &cands[i];
		if (c->sic_tree == NULL || !import_cand_is(c, which))
			continue;
		(void) vdev_open(c->sic_tree, true);   /* what opens is enough */
		(void) vdev_uberblock_collect(c->sic_tree, c->sic_guid, ubsp, np);
		vdev_close(c->sic_tree);
	}
	spa_import_cands_free(cands, n);
}

/*
 * -F: import from the newest txg whose tree verifies, going back through
 * the uberblock ring as far as needed (sio_rewind_txg UINT64_MAX).  With
 * dryrun the trial is read-only and leaves no trace.  On success the
 * pool, and in *entry when and newest (what the caller says was, or
 * would be, discarded).
 */
static int
import_rewind(const import_req_t *ir, const spa_import_opts_t *base, const char *which,
    json_object *entry, spa_t **spap, char *err, size_t errlen)
{
	spa_import_opts_t so = *base;
	uberblock_t *ubs;
	int n, error;

	import_ubs(ir, which, &ubs, &n);
	if (ir->ir_dryrun) {
		so.sio_flags |= SPA_OPEN_READONLY;
		so.sio_no_cache = true;
	}
	so.sio_rewind_txg = UINT64_MAX;
	err[0] = '\0';
	error = spa_import(which, ir->ir_ndirs > 0 ? ir->ir_dirs : NULL, ir->ir_ndirs, &so,
	    spap, err, errlen);
	if (error == 0) {
		uint64_t when = 0, txg = spa_loaded_txg(*spap);
		for (int i = 0; i < n && when == 0; i++)
			if (ubs[i].ub_txg == txg)
				when = ubs[i].ub_timestamp;
		if (when != 0) {
			json_object_object_add(entry, "when", json_object_new_uint64(when));
			json_object_object_add(entry, "newest",
			    json_object_new_uint64(ubs[0].ub_timestamp));
		}
	}
	tarn_free(ubs);
	return (error);
}

/* After an import: history, the resilver in-process, the read-only note. */
static void
import_done(spa_t *spa, const spa_import_opts_t *so)
{
	spa_scan_stat_t ss;

	host_history_event(spa, "import");
	host_history_log(spa);
	/* in-process, a resilver the import started ends before we exit */
	spa_scan_get_stat(spa, &ss);
	if (!host_daemon_mode() && ss.sss_state == SPA_SCAN_STATE_SCANNING &&
	    ss.sss_func == SPA_SCAN_RESILVER)
		(void) spa_scan_wait(spa);
	if (spa_readonly(spa) && !so->sio_no_cache && !host_daemon_mode())
		host_warn("note: '%s' was opened read-only; without the daemon a "
		    "read-only import is not remembered, so later commands will not "
		    "find it\n", spa_name(spa));
}

static int
import_one(import_req_t *ir, const char *which, const char *newname)
{
	spa_import_opts_t so = ir->ir_spa;
	json_object *entry = json_object_new_object();
	spa_t *spa = NULL;
	char err[1024] = "";
	int error;

	so.sio_newname = newname;
	if (!ir->ir_dryrun && (error = import_name_free(ir, which, newname, err,
	    sizeof (err))) != 0) {
		json_object_put(entry);
		return (host_report("import", which, error, err));
	}
	if (ir->ir_rewind || ir->ir_dryrun)
		error = import_rewind(ir, &so, which, entry, &spa, err, sizeof (err));
	else
		error = spa_import(which, ir->ir_ndirs > 0 ? ir->ir_dirs : NULL,
		    ir->ir_ndirs, &so, &spa, err, sizeof (err));
	if (error != 0) {
		json_object_put(entry);
		if ((error == EIO || error == ECKSUM) && !ir->ir_rewind &&
		    strstr(err, "-F") == NULL && strlen(err) + 60 < sizeof (err))
			(void) strcat(err, "; -F may recover it by discarding the "
			    "last transactions");
		return (host_report("import", which, error, err));
	}
	json_object_object_add(entry, "name", json_object_new_string(spa_name(spa)));
	json_object_array_add(ir->ir_imported, entry);
	if (ir->ir_dryrun) {
		spa_close(spa);   /* -Fn: a read-only trial that leaves no trace */
		return (0);
	}
	import_done(spa, &so);
	char pname[SPA_NAME_MAX + 1];
	(void) snprintf(pname, sizeof (pname), "%s", spa_name(spa));
	host_pool_adopt(spa);
	host_recv_cleanup(pname);
	/* as zpool: imported, but a dataset that did not mount is an error */
	return (ir->ir_nomount ? 0 : host_mount_pool(pname));
}

/* -a: every candidate that can be imported (active ones only with force). */
static int
import_all(import_req_t *ir, json_object *res)
{
	spa_import_cand_t *cands;
	int n, ret = 0, tried = 0, error;

	if ((error = import_scan(ir, &cands, &n)) != 0)
		return (import_scan_failed(error));
	for (int i = 0; i < n; i++) {
		char guid[32];
		if (!import_cand_visible(&cands[i]) || !cands[i].sic_can_open)
			continue;
		if (cands[i].sic_state == POOL_STATE_ACTIVE && !ir->ir_spa.sio_force)
			continue;
		(void) snprintf(guid, sizeof (guid), "%" PRIu64, cands[i].sic_guid);
		tried++;
		if (import_one(ir, guid, NULL) != 0)
			ret = HOST_FAILED;
	}
	spa_import_cands_free(cands, n);
	json_object_object_add(res, "tried", json_object_new_int(tried));
	return (ret);
}

static int
op_pool_import(json_object *args, json_object *res)
{
	import_req_t ir;
	const char *which;

	import_req_init(args, &ir);
	ir.ir_imported = json_object_new_array();
	json_object_object_add(res, "imported", ir.ir_imported);
	if (host_arg_bool(args, "all"))
		return (import_all(&ir, res));
	if (host_arg_need(args, "which", "import", &which) != 0)
		return (HOST_FAILED);
	return (import_one(&ir, which, host_arg_str(args, "newname")));
}


/*
 * Export or destroy one pool (zpool export / destroy): unmount its
 * datasets, record the command in its history (kept in the pool for its
 * next import, or gone down with it, as zpool does), end it.  With force
 * a pool that will not open is forgotten on this host (its cache file
 * entry removed), its devices untouched.  0 or reported.
 */
int
host_pool_end(const char *verb, const char *name, bool force, bool destroy)
{
	char err[1024] = "";
	spa_t *spa;
	int error;

	error = host_pool_open(name, 0, &spa, err, sizeof (err));
	if (error != 0 && force && error != HOST_ENOPOOL && spa_cache_remove(name) == 0) {
		host_warn("note: '%s' could not be opened (%s); it was removed from the "
		    "cache file, its devices are untouched\n", name, err);
		return (0);
	}
	if (error != 0) {
		char msg[sizeof (err) + 64];
		(void) snprintf(msg, sizeof (msg), "%s%s", err, force ||
		    error == HOST_ENOPOOL ? "" : "; use -f to forget it on this host");
		return (host_report(verb, name, error, msg));
	}
	/*
	 * Injected faults and delays (tarn inject) go first, even if the
	 * unmount then fails: reads in flight sleeping out a delay would
	 * hold the unmount up (a queue of them, for seconds).
	 */
	(void) spa_inject_clear(spa, 0);
	if (host_unmount_tree(name, force, verb) != 0) {
		host_pool_close(spa);
		return (HOST_FAILED);
	}
	host_history_log(spa);
	if ((error = destroy ? host_pool_destroy(spa) : host_pool_export(spa)) != 0)
		return (host_report(verb, name, error, NULL));
	return (0);
}

static int
op_pool_export(json_object *args, json_object *res)
{
	bool force = host_arg_bool(args, "force");
	json_object *names;
	char **all;
	int n, error, ret = 0;

	if (!host_arg_bool(args, "all")) {
		if (!json_object_object_get_ex(args, "names", &names) ||
		    !json_object_is_type(names, json_type_array))
			return (host_report("export", "-", EINVAL, "missing pool argument"));
		for (size_t i = 0; i < json_object_array_length(names); i++) {
			const char *name = json_object_get_string(json_object_array_get_idx(names, i));
			if (name == NULL || host_pool_end("export", name, force, false) != 0)
				ret = HOST_FAILED;
		}
		return (ret);
	}
	if ((error = host_pool_names(&all, &n)) != 0)
		return (host_report("export", spa_cachefile_path(), error, NULL));
	for (int i = 0; i < n; i++)
		if (host_pool_end("export", all[i], force, false) != 0)
			ret = HOST_FAILED;
	host_names_free(all, n);
	return (ret);
}

const host_op_t host_ops_import[] = {
	{ "pool.import_list", op_pool_import_list },
	{ "pool.import", op_pool_import },
	{ "pool.export", op_pool_export },
	{ NULL, NULL }
};
