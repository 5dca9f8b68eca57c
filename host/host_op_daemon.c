/*
 * host_op_daemon.c — what the host holds: the pools of the cache file,
 * and for `tarn daemon status` how the daemon holds each.
 *
 *   pool.names        verb (named when the cache file cannot be read)
 *                                          names: [pool...] (sorted)
 *   daemon.status     -                    pools: [{name, held, state (held:
 *                                          ONLINE, DEGRADED, ...), commands
 *                                          (held: those using it now)}...]
 *
 * A cache file that cannot be read is reported as "cannot VERB 'FILE'"
 * (daemon.status: verb "read").
 */
#include "host_impl.h"

static int
op_pool_names(json_object *args, json_object *res)
{
	const char *verb = host_arg_str(args, "verb");
	char **names;
	int n, error;

	if ((error = host_pool_names(&names, &n)) != 0)
		return (host_report(verb != NULL ? verb : "read", spa_cachefile_path(), error,
		    NULL));
	json_object *a = json_object_new_array_ext(n);
	for (int i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_string(names[i]));
	json_object_object_add(res, "names", a);
	host_names_free(names, n);
	return (0);
}

static int
op_daemon_status(json_object *args, json_object *res)
{
	char **names;
	int n, error;

	if ((error = host_pool_names(&names, &n)) != 0)
		return (host_report("read", spa_cachefile_path(), error, NULL));
	json_object *a = json_object_new_array_ext(n);
	for (int i = 0; i < n; i++) {
		json_object *p = json_object_new_object();
		const char *state;
		int refs;
		bool held = host_pool_holding(names[i], &state, &refs);
		json_object_object_add(p, "name", json_object_new_string(names[i]));
		json_object_object_add(p, "held", json_object_new_boolean(held));
		if (held) {
			json_object_object_add(p, "state", json_object_new_string(state));
			json_object_object_add(p, "commands", json_object_new_int(refs));
		}
		json_object_array_add(a, p);
	}
	json_object_object_add(res, "pools", a);
	host_names_free(names, n);
	return (0);
}

const host_op_t host_ops_daemon[] = {
	{ "pool.names", op_pool_names },
	{ "daemon.status", op_daemon_status },
	{ NULL, NULL }
};
