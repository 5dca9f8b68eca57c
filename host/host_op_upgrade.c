/*
 * host_op_upgrade.c — zpool upgrade: the pools' format versions and
 * feature flags, and the upgrade of one pool.
 *
 *   pool.versions     verb (named when the cache file cannot be read)
 *                                          pools: [{name, version, features}...]
 *                                          (the pools that open; features: the
 *                                          SPA_FEATURE_* mask)
 *   pool.upgrade      name, version (0: the newest), feature_names:
 *                     [[flag, name]...]    outcome ("newer": the pool is past
 *                                          version; "current": nothing to do;
 *                                          "upgraded"), from, before (version and
 *                                          features before), version, features
 *
 * An upgrade records in the pool's history (-i) what it changed — "set
 * version=N", then "set feature@NAME=enabled" for each feature it
 * enabled, named as feature_names names them (the command line's table
 * of features, cmd/tarn/pool_upgrade.c, the one `upgrade -v` and `get`
 * show) — and then the command.
 */
#include "host_impl.h"

static int
op_pool_versions(json_object *args, json_object *res)
{
	const char *verb = host_arg_str(args, "verb");
	char **names, err[1024];
	int n, error;
	spa_t *spa;

	if ((error = host_pool_names(&names, &n)) != 0)
		return (host_report(verb != NULL ? verb : "upgrade", spa_cachefile_path(), error,
		    NULL));
	json_object *a = json_object_new_array_ext(n);
	for (int i = 0; i < n; i++) {
		if (host_pool_open(names[i], SPA_OPEN_READONLY | SPA_OPEN_NOVERIFY, &spa,
		    err, sizeof (err)) != 0)
			continue;
		json_object *p = json_object_new_object();
		json_object_object_add(p, "name", json_object_new_string(names[i]));
		json_object_object_add(p, "version", json_object_new_uint64(spa_version(spa)));
		json_object_object_add(p, "features", json_object_new_uint64(spa_features(spa)));
		json_object_array_add(a, p);
		host_pool_close(spa);
	}
	json_object_object_add(res, "pools", a);
	host_names_free(names, n);
	return (0);
}

/* The history records of an upgrade from version `from` that enabled `added`. */
static void
upgrade_log(spa_t *spa, json_object *args, uint64_t from, uint64_t target, uint64_t added)
{
	json_object *fn = json_object_object_get(args, "feature_names");

	if (from != target)
		(void) spa_history_log_internal(spa, 0, "set version=%" PRIu64, target);
	for (size_t i = 0; json_object_is_type(fn, json_type_array) &&
	    i < json_object_array_length(fn); i++) {
		json_object *f = json_object_array_get_idx(fn, i);
		uint64_t flag = json_object_get_uint64(json_object_array_get_idx(f, 0));
		const char *name = json_object_get_string(json_object_array_get_idx(f, 1));
		if ((added & flag) != 0 && name != NULL)
			(void) spa_history_log_internal(spa, 0, "set feature@%s=enabled", name);
	}
	host_history_log(spa);
}

static int
op_pool_upgrade(json_object *args, json_object *res)
{
	uint64_t version = json_object_get_uint64(json_object_object_get(args, "version"));
	const char *name, *outcome = "upgraded";
	char err[1024];
	spa_t *spa;
	int error;

	if (host_arg_need(args, "name", "upgrade", &name) != 0)
		return (HOST_FAILED);
	if ((error = host_pool_open(name, 0, &spa, err, sizeof (err))) != 0)
		return (host_report("upgrade", name, error, err));
	uint64_t from = spa_version(spa), before = spa_features(spa);
	uint64_t target = version != 0 ? version : SPA_VERSION;
	uint64_t missing = from < SPA_VERSION_2 ? SPA_FEATURES_ALL : SPA_FEATURES_ALL & ~before;
	if (from > target) {
		outcome = "newer";
	} else if (from == target && (target < SPA_VERSION_2 || missing == 0)) {
		outcome = "current";
	} else {
		err[0] = '\0';
		if ((error = spa_upgrade(spa, target, err, sizeof (err))) != 0) {
			host_pool_close(spa);
			return (host_report("upgrade", name, error, err));
		}
		upgrade_log(spa, args, from, target, spa_features(spa) &
		    ~(from < SPA_VERSION_2 ? 0 : before));
	}
	json_object_object_add(res, "outcome", json_object_new_string(outcome));
	json_object_object_add(res, "from", json_object_new_uint64(from));
	json_object_object_add(res, "before", json_object_new_uint64(before));
	json_object_object_add(res, "version", json_object_new_uint64(spa_version(spa)));
	json_object_object_add(res, "features", json_object_new_uint64(spa_features(spa)));
	host_pool_close(spa);
	return (0);
}

const host_op_t host_ops_upgrade[] = {
	{ "pool.versions", op_pool_versions },
	{ "pool.upgrade", op_pool_upgrade },
	{ NULL, NULL }
};
