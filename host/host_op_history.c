/*
 * host_op_history.c — zpool history: the records of a pool's history
 * (the command lines that changed it, and its internal events).
 *
 *   pool.history      name                 entries: [{kind ("cmd" | "internal"),
 *                                          time (seconds since the epoch), txg
 *                                          (internal), cmd, long (host and uid
 *                                          known), uid, host}...]
 */
#include "host_impl.h"

static json_object *
history_entry(const spa_history_ent_t *e)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "kind", json_object_new_string(
	    e->she_kind == SPA_HIST_INTERNAL ? "internal" : "cmd"));
	json_object_object_add(o, "time", json_object_new_uint64(e->she_time));
	if (e->she_kind == SPA_HIST_INTERNAL)
		json_object_object_add(o, "txg", json_object_new_uint64(e->she_txg));
	json_object_object_add(o, "cmd", json_object_new_string(e->she_cmd));
	json_object_object_add(o, "long", json_object_new_boolean(e->she_long));
	if (e->she_long) {
		json_object_object_add(o, "uid", json_object_new_uint64(e->she_uid));
		json_object_object_add(o, "host", json_object_new_string(e->she_host));
	}
	return (o);
}

static int
op_pool_history(json_object *args, json_object *res)
{
	spa_history_ent_t *ents;
	const char *name;
	char err[1024];
	spa_t *spa;
	int n, error;

	if (host_arg_need(args, "name", "get history", &name) != 0)
		return (HOST_FAILED);
	error = host_pool_open(name, SPA_OPEN_READONLY | SPA_OPEN_NOVERIFY, &spa,
	    err, sizeof (err));
	if (error != 0)
		return (host_report("get history", name, error, err));
	error = spa_history_get(spa, &ents, &n);
	host_pool_close(spa);
	if (error != 0)
		return (host_report("get history", name, error, NULL));
	json_object *a = json_object_new_array_ext(n);
	for (int i = 0; i < n; i++)
		json_object_array_add(a, history_entry(&ents[i]));
	json_object_object_add(res, "entries", a);
	tarn_free(ents);
	return (0);
}

const host_op_t host_ops_history[] = {
	{ "pool.history", op_pool_history },
	{ NULL, NULL }
};
