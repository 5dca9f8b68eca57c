/*
 * host_op_sync.c — zpool sync: write the named pools' (or every pool's)
 * dirty data now.
 *
 *   pool.sync         names?: [pool...]            -   (none: every pool)
 */
#include "host_impl.h"

static int
sync_one(const char *name)
{
	char err[1024] = "";
	spa_t *spa;
	int e = host_pool_open(name, 0, &spa, err, sizeof (err));

	if (e != 0)
		return (host_report("sync", name, e, err));
	dmu_pool_t *dp = spa_dmu_pool(spa);
	if (!spa_readonly(spa) && dp != NULL)
		e = txg_wait_synced(dp, 0);
	host_pool_close(spa);
	return (e == 0 ? 0 : host_report("sync", name, e, NULL));
}

static int
op_pool_sync(json_object *args, json_object *res)
{
	json_object *names;
	char **all;
	int n, r = 0;

	if (json_object_object_get_ex(args, "names", &names) &&
	    json_object_is_type(names, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(names); i++) {
			const char *name = json_object_get_string(json_object_array_get_idx(names, i));
			if (name == NULL || sync_one(name) != 0)
				r = HOST_FAILED;
		}
		return (r);
	}
	if (host_pool_names(&all, &n) != 0)
		return (HOST_FAILED);
	for (int i = 0; i < n; i++)
		if (sync_one(all[i]) != 0)
			r = HOST_FAILED;
	host_names_free(all, n);
	return (r);
}

const host_op_t host_ops_sync[] = {
	{ "pool.sync", op_pool_sync },
	{ NULL, NULL }
};
