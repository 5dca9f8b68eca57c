/*
 * host_op_vdev.c — the operations of the device lifecycle verbs of zpool:
 * changes of an imported pool's tree (lib/spa does them), each recorded
 * in the pool's history and, for a pool the cache file lists, in the
 * cache file (its leaves as they are now, so that the next open finds a
 * new device).
 *
 *   pool.add         pool, vdevs: [word...], force, dryrun   dryrun: tree
 *   pool.add_spares  pool, paths: [path...], force           -
 *   pool.attach      pool, device, new, force, wait          -
 *   pool.replace     pool, device, new?, force, wait         -
 *   pool.detach      pool, device                            -
 *   pool.online      pool, devices: [name...]                devices: [{...}]
 *   pool.offline     pool, devices: [name...], temporary     devices: [{...}]
 *   pool.clear       pool, device?                           -
 *   pool.remove      pool, device                            -
 *
 * vdevs may hold the class words log, special and cache (spa_vdev_spec_parse);
 * remove takes a cache device, an unused hot spare or a log vdev (by a leaf or
 * "mirror-N"; spa_vdev_remove), and refuses the others.
 *
 * vdevs are the words of a vdev specification (host_arg_spec), paths
 * and new absolute: the caller's directory is not the host's.  device
 * names a leaf as the pool knows it (path, GUID, last part of the path).
 * add dryrun makes only the checks that write nothing and answers the
 * pool's tree as it is now (host_op_tree_json: type, id, nparity, path,
 * guid, state, children).  attach, replace and online start a resilver,
 * which inside tarnd goes on after the operation returns; wait: the
 * operation waits for it (in-process it always does: nobody would carry
 * it on), giving up when the caller goes away (host_cancelled).
 * online/offline answer one entry per device, in order: {name, error,
 * msg?, faulted (online: onlined, but still not healthy)}; the caller
 * prints them (the failures are not reported, so that they keep their
 * place among the warnings).
 */
#include "host_impl.h"

#include <time.h>

json_object *
host_op_tree_json(const vdev_t *vd)
{
	json_object *o = json_object_new_object();

	host_vdev_ident(o, vd, host_vdev_type(vd));
	json_object_object_add(o, "state",
	    json_object_new_string(vdev_state_name(vdev_state(vd))));
	if (vdev_children(vd) > 0) {
		json_object *a = json_object_new_array_ext(vdev_children(vd));
		for (int c = 0; c < vdev_children(vd); c++)
			if (!vdev_is_hole(vdev_child(vd, c)))   /* a removed log vdev's place */
				json_object_array_add(a, host_op_tree_json(vdev_child(vd, c)));
		json_object_object_add(o, "children", a);
	}
	return (o);
}

/*
 * After a change of the tree: the cache file lists the pool's leaves as
 * they are now, so that the next open (in-process, or tarnd restarting)
 * finds a new device.  Only for a pool the cache file lists at all.
 */
static void
vdev_cache_refresh(spa_t *spa)
{
	spa_cache_entry_t *ents;
	bool listed = false;
	int n;

	if (spa_readonly(spa) || spa_cache_read(&ents, &n) != 0)
		return;
	for (int i = 0; i < n; i++)
		listed |= ents[i].sce_guid == spa_guid(spa);
	spa_cache_free(ents, n);
	if (listed)
		(void) spa_cache_add(spa);
}

/*
 * After attach/replace/online: wait for the resilver when asked (or
 * in-process).  Inside tarnd it polls and gives up (EINTR) once the
 * caller went away.
 */
static int
vdev_wait_resilver(spa_t *spa, bool wait)
{
	if (!wait && host_daemon_mode())
		return (0);
	host_pool_unlock(spa);
	return (host_scan_wait(spa));
}

/* Open args' "pool" for a change; 0 or reported (as "cannot VERB 'POOL'"). */
static int
vdev_pool_open(json_object *args, const char *verb, const char **poolp, spa_t **spap)
{
	char err[1024] = "";
	int error;

	if (host_arg_need(args, "pool", verb, poolp) != 0)
		return (HOST_FAILED);
	if ((error = host_pool_open(*poolp, 0, spap, err, sizeof (err))) != 0)
		return (host_report(verb, *poolp, error, err));
	return (0);
}

/* After a change that succeeded: the history, the cache file. */
static void
vdev_changed(spa_t *spa)
{
	host_history_log(spa);
	vdev_cache_refresh(spa);
}

static int
op_pool_add(json_object *args, json_object *res)
{
	bool force = host_arg_bool(args, "force"), dryrun = host_arg_bool(args, "dryrun");
	spa_vdev_spec_t *spec;
	const char *pool;
	char err[1024] = "";
	spa_t *spa;
	int error;

	if (host_arg_need(args, "pool", "add to", &pool) != 0 ||
	    host_arg_spec(args, "vdevs", "add to", pool, &spec) != 0)
		return (HOST_FAILED);
	if ((error = host_pool_open(pool, dryrun ? SPA_OPEN_READONLY : 0, &spa, err,
	    sizeof (err))) != 0) {
		spa_vdev_spec_free(spec);
		return (host_report("add to", pool, error, err));
	}
	err[0] = '\0';
	if (dryrun) {
		error = spa_vdev_add_check(spa, spec, force, err, sizeof (err));
		if (error == 0) {
			spa_vdev_hold(spa);
			json_object_object_add(res, "tree",
			    host_op_tree_json(spa_root_vdev(spa)));
			spa_vdev_rele(spa);
		}
	} else if ((error = spa_vdev_add(spa, spec, force, err, sizeof (err))) == 0) {
		vdev_changed(spa);
	}
	host_pool_close(spa);
	spa_vdev_spec_free(spec);
	return (error == 0 ? 0 : host_report("add to", pool, error, err));
}

static int
op_pool_add_spares(json_object *args, json_object *res)
{
	bool force = host_arg_bool(args, "force");
	json_object *jp;
	const char *pool;
	char err[1024] = "";
	spa_t *spa;
	int error;

	if (host_arg_need(args, "pool", "add to", &pool) != 0)
		return (HOST_FAILED);
	if (!json_object_object_get_ex(args, "paths", &jp) ||
	    !json_object_is_type(jp, json_type_array) || json_object_array_length(jp) == 0)
		return (host_report("add to", pool, EINVAL, "missing device after 'spare'"));
	if ((error = host_pool_open(pool, 0, &spa, err, sizeof (err))) != 0)
		return (host_report("add to", pool, error, err));
	int n = (int)json_object_array_length(jp);
	char **paths = tarn_alloc((size_t)n * sizeof (char *));
	for (int i = 0; i < n; i++)
		paths[i] = (char *)json_object_get_string(json_object_array_get_idx(jp, i));
	err[0] = '\0';
	if ((error = spa_vdev_add_spares(spa, n, paths, force, err, sizeof (err))) == 0)
		vdev_changed(spa);
	host_pool_close(spa);
	tarn_free(paths);
	return (error == 0 ? 0 : host_report("add to", pool, error, err));
}

/*
 * attach (new required) and replace (new optional): change the tree,
 * refresh the cache file, wait for the resilver if asked.  The failures
 * name the devices as zpool does: "cannot attach 'NEW' to 'DEVICE'",
 * "cannot replace 'DEVICE' with 'NEW'", "cannot replace 'DEVICE'".
 */
static int
vdev_attach_replace(json_object *args, bool attach)
{
	const char *cmd = attach ? "attach" : "replace", *pool, *device;
	const char *newpath = host_arg_str(args, "new");
	char err[1024] = "", verb[VDEV_PATH_MAX + 32];
	spa_t *spa;
	int error;

	if (host_arg_need(args, "device", cmd, &device) != 0 ||
	    (attach && host_arg_need(args, "new", cmd, &newpath) != 0) ||
	    vdev_pool_open(args, cmd, &pool, &spa) != 0)
		return (HOST_FAILED);
	bool force = host_arg_bool(args, "force");
	if (attach)
		error = spa_vdev_attach(spa, device, newpath, force, err, sizeof (err));
	else
		error = spa_vdev_replace(spa, device, newpath, force, err, sizeof (err));
	if (error == 0) {
		vdev_changed(spa);
		error = vdev_wait_resilver(spa, host_arg_bool(args, "wait"));
		vdev_cache_refresh(spa);
	}
	host_pool_close(spa);
	if (error == 0)
		return (0);
	if (attach) {
		(void) snprintf(verb, sizeof (verb), "attach '%s' to", newpath);
		return (host_report(verb, device, error, err));
	}
	if (newpath != NULL) {
		(void) snprintf(verb, sizeof (verb), "replace '%s' with", device);
		return (host_report(verb, newpath, error, err));
	}
	return (host_report(cmd, device, error, err));
}

static int
op_pool_attach(json_object *args, json_object *res)
{
	return (vdev_attach_replace(args, true));
}

static int
op_pool_replace(json_object *args, json_object *res)
{
	return (vdev_attach_replace(args, false));
}

static int
op_pool_detach(json_object *args, json_object *res)
{
	const char *pool, *device;
	char err[1024] = "";
	spa_t *spa;
	int error;

	if (host_arg_need(args, "device", "detach", &device) != 0 ||
	    vdev_pool_open(args, "detach", &pool, &spa) != 0)
		return (HOST_FAILED);
	if ((error = spa_vdev_detach(spa, device, err, sizeof (err))) == 0)
		vdev_changed(spa);
	host_pool_close(spa);
	return (error == 0 ? 0 : host_report("detach", device, error, err));
}

/* online/offline: one pool, several devices; the history line once. */
static int
vdev_online_offline(json_object *args, json_object *res, bool online)
{
	const char *verb = online ? "online" : "offline", *pool;
	bool temporary = host_arg_bool(args, "temporary");
	json_object *devs;
	spa_t *spa;
	int ret = 0, done = 0;

	if (!json_object_object_get_ex(args, "devices", &devs) ||
	    !json_object_is_type(devs, json_type_array))
		return (host_report(verb, "-", EINVAL, "missing device name"));
	if (vdev_pool_open(args, verb, &pool, &spa) != 0)
		return (HOST_FAILED);
	json_object *out = json_object_new_array();
	json_object_object_add(res, "devices", out);
	for (size_t i = 0; i < json_object_array_length(devs); i++) {
		const char *dev = json_object_get_string(json_object_array_get_idx(devs, i));
		json_object *d = json_object_new_object();
		char err[1024] = "";
		int error;
		json_object_array_add(out, d);
		json_object_object_add(d, "name", json_object_new_string(dev));
		error = online ? spa_vdev_online(spa, dev, err, sizeof (err)) :
		    spa_vdev_offline(spa, dev, temporary, err, sizeof (err));
		json_object_object_add(d, "error", json_object_new_int(error));
		if (error != 0) {
			json_object_object_add(d, "msg", json_object_new_string(err));
			ret = HOST_FAILED;
			continue;
		}
		done++;
		/* read under the tree's lock: a finishing resilver may free the leaf */
		vdev_state_t st;
		json_object_object_add(d, "faulted", json_object_new_boolean(online &&
		    spa_leaf_state(spa, dev, &st) == 0 && st != VDEV_STATE_HEALTHY));
	}
	if (done > 0) {
		host_history_log(spa);
		if (online)   /* in-process: the resilver it started ends first */
			(void) vdev_wait_resilver(spa, false);
	}
	host_pool_close(spa);
	return (ret);
}

static int
op_pool_online(json_object *args, json_object *res)
{
	return (vdev_online_offline(args, res, true));
}

static int
op_pool_offline(json_object *args, json_object *res)
{
	return (vdev_online_offline(args, res, false));
}

static int
op_pool_clear(json_object *args, json_object *res)
{
	const char *pool, *device = host_arg_str(args, "device");
	char err[1024] = "";
	spa_t *spa;
	int error;

	if (vdev_pool_open(args, "clear errors for", &pool, &spa) != 0)
		return (HOST_FAILED);
	if ((error = spa_vdev_clear(spa, device, err, sizeof (err))) == 0)
		host_history_log(spa);
	host_pool_close(spa);
	return (error == 0 ? 0 :
	    host_report("clear errors for", device != NULL ? device : pool, error, err));
}

static int
op_pool_remove(json_object *args, json_object *res)
{
	const char *pool, *device;
	char err[1024] = "";
	spa_t *spa;
	int error;

	(void) res;
	if (host_arg_need(args, "pool", "remove", &pool) != 0 ||
	    host_arg_need(args, "device", "remove", &device) != 0)
		return (HOST_FAILED);
	if ((error = host_pool_open(pool, 0, &spa, err, sizeof (err))) != 0)
		return (host_report("remove", device, error, err));
	err[0] = '\0';
	if ((error = spa_vdev_remove(spa, device, err, sizeof (err))) == 0)
		vdev_changed(spa);
	host_pool_close(spa);
	return (error == 0 ? 0 : host_report("remove", device, error, err));
}

const host_op_t host_ops_vdev[] = {
	{ "pool.remove", op_pool_remove },
	{ "pool.add", op_pool_add },
	{ "pool.add_spares", op_pool_add_spares },
	{ "pool.attach", op_pool_attach },
	{ "pool.replace", op_pool_replace },
	{ "pool.detach", op_pool_detach },
	{ "pool.online", op_pool_online },
	{ "pool.offline", op_pool_offline },
	{ "pool.clear", op_pool_clear },
	{ NULL, NULL }
};
