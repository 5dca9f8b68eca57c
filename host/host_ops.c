/*
 * host_ops.c — the operations the command line asks of the host, by
 * name, with JSON arguments and results (host.h, host_exec).  Each
 * host_op_*.c file has a table of its operations (its theory comment
 * lists them with their arguments and results); an entry turns the
 * arguments into a call of the host's C interface and the outcome into
 * result fields, while the meaning lives in the called function.
 *
 * Every result has "ret" (0 or HOST_FAILED) and, when the caller asked
 * for them (collect), "reports": [[verb, name, errno, message]...].
 */
#include "host_impl.h"

/* Every operation table (NULL-terminated each). */
static const host_op_t *const host_op_tables[] = {
	host_ops_mount,
	host_ops_fs_props,
	host_ops_fs,
	host_ops_snap,
	host_ops_sync,
	host_ops_info,
	host_ops_scan,
	host_ops_iostat,
	host_ops_history,
	host_ops_daemon,
	host_ops_upgrade,
	host_ops_label,
	host_ops_create,
	host_ops_import,
	host_ops_vdev,
	host_ops_clone,
	host_ops_diff,
	host_ops_autosnap,
	host_ops_send,
	host_ops_arc,
	host_ops_inject,
};

/* ---- argument helpers ---- */

const char *
host_arg_str(json_object *args, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(args, key, &v) || !json_object_is_type(v, json_type_string))
		return (NULL);
	return (json_object_get_string(v));
}

bool
host_arg_bool(json_object *args, const char *key)
{
	json_object *v;

	return (json_object_object_get_ex(args, key, &v) && json_object_get_boolean(v));
}

/* A string argument that must be there; reports and fails when it is not. */
int
host_arg_need(json_object *args, const char *key, const char *op, const char **vp)
{
	if ((*vp = host_arg_str(args, key)) != NULL)
		return (0);
	return (host_report(op, key, EINVAL, "missing argument"));
}

/* ---- running one ---- */

static __thread json_object *host_collect_into;

static void
host_collect(const char *verb, const char *name, int error, const char *msg)
{
	json_object *reps, *r = json_object_new_array_ext(4);

	if (!json_object_object_get_ex(host_collect_into, "reports", &reps)) {
		reps = json_object_new_array();
		json_object_object_add(host_collect_into, "reports", reps);
	}
	json_object_array_add(r, json_object_new_string(verb));
	json_object_array_add(r, json_object_new_string(name));
	json_object_array_add(r, json_object_new_int(error));
	json_object_array_add(r, msg != NULL ? json_object_new_string(msg) : NULL);
	json_object_array_add(reps, r);
}

int
host_exec(const char *op, json_object *args, bool collect, json_object **resp)
{
	const host_op_t *o = NULL;

	*resp = NULL;
	for (size_t t = 0; t < ARRAY_SIZE(host_op_tables) && o == NULL; t++)
		for (const host_op_t *p = host_op_tables[t]; p->ho_name != NULL && o == NULL; p++)
			if (strcmp(p->ho_name, op) == 0)
				o = p;
	if (o == NULL)
		return (SET_ERROR(ENOENT));
	if (args == NULL || !json_object_is_type(args, json_type_object))
		return (SET_ERROR(EINVAL));
	json_object *res = json_object_new_object();
	if (collect) {
		host_collect_into = res;
		host_set_reporter(host_collect);
	}
	int ret = o->ho_fn(args, res);
	if (collect) {
		host_set_reporter(NULL);
		host_collect_into = NULL;
	}
	json_object_object_add(res, "ret", json_object_new_int(ret));
	*resp = res;
	return (0);
}
