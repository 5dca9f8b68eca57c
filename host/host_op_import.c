/*
 * host_op_import.c — the operations of zpool import and zpool export.
 *
 *   pool.export   names?: [pool...], all, force               -
 *
 * export unmounts the pool's datasets first (busy: reported, the pool
 * stays); -f of a pool that does not open only takes it out of the cache
 * file (a note says so).  all: every pool of this host.
 */
#include "host_impl.h"

static int
export_one(const char *name, bool force)
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
		return (host_report("export", name, error, msg));
	}
	if (host_unmount_tree(name, force, "export") != 0) {
		host_pool_close(spa);
		return (HOST_FAILED);
	}
	host_history_log(spa);   /* kept in the pool for its next import */
	if ((error = host_pool_export(spa)) != 0)
		return (host_report("export", name, error, NULL));
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
			if (name == NULL || export_one(name, force) != 0)
				ret = HOST_FAILED;
		}
		return (ret);
	}
	if ((error = host_pool_names(&all, &n)) != 0)
		return (host_report("export", spa_cachefile_path(), error, NULL));
	for (int i = 0; i < n; i++)
		if (export_one(all[i], force) != 0)
			ret = HOST_FAILED;
	host_names_free(all, n);
	return (ret);
}

const host_op_t host_ops_import[] = {
	{ "pool.export", op_pool_export },
	{ NULL, NULL }
};
