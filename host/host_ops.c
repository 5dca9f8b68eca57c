/*
 * host_ops.c — the operations the command line asks of the host, by
 * name, with JSON arguments and results (host.h, host_exec).  Each entry
 * turns its arguments into a call of the host's C interface and its
 * outcome into result fields; the meaning lives in the called function.
 *
 *   op                args                         result
 *   fs.mount          name, dir?, opts?            -
 *   fs.mount_all      opts?                        -
 *   fs.unmount        what?, all, force            -
 *   fs.mounts         -                            mounts: [[name, mountpoint]...]
 *   pool.sync         names?: [pool...]            -   (none: every pool)
 *
 * Every result has "ret" (0 or HOST_FAILED) and, when the caller asked
 * for them (collect), "reports": [[verb, name, errno, message]...].
 */
#include "host_impl.h"

typedef int (*host_op_fn_t)(json_object *args, json_object *res);

typedef struct host_op {
	const char  *ho_name;
	host_op_fn_t ho_fn;
} host_op_t;

/* ---- argument helpers ---- */

static const char *
arg_str(json_object *args, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(args, key, &v) || !json_object_is_type(v, json_type_string))
		return (NULL);
	return (json_object_get_string(v));
}

static bool
arg_bool(json_object *args, const char *key)
{
	json_object *v;

	return (json_object_object_get_ex(args, key, &v) && json_object_get_boolean(v));
}

/* A string argument that must be there; reports and fails when it is not. */
static int
arg_need(json_object *args, const char *key, const char *op, const char **vp)
{
	if ((*vp = arg_str(args, key)) != NULL)
		return (0);
	return (host_report(op, key, EINVAL, "missing argument"));
}

/* ---- mounts ---- */

static int
op_fs_mount(json_object *args, json_object *res)
{
	const char *name;

	if (arg_need(args, "name", "mount", &name) != 0)
		return (HOST_FAILED);
	return (host_mount_one(name, arg_str(args, "dir"), arg_str(args, "opts")));
}

static int
op_fs_mount_all(json_object *args, json_object *res)
{
	return (host_mount_all(arg_str(args, "opts")));
}

static int
op_fs_unmount(json_object *args, json_object *res)
{
	bool all = arg_bool(args, "all");
	const char *what = arg_str(args, "what");

	if (!all && what == NULL)
		return (host_report("unmount", "-", EINVAL, "missing filesystem argument"));
	return (host_unmount(what, all, arg_bool(args, "force")));
}

static int
op_fs_mounts(json_object *args, json_object *res)
{
	char **names, **mps;
	int n;

	if (host_mount_list(&names, &mps, &n) != 0)
		return (HOST_FAILED);
	json_object *a = json_object_new_array_ext(n);
	for (int i = 0; i < n; i++) {
		json_object *pair = json_object_new_array_ext(2);
		json_object_array_add(pair, json_object_new_string(names[i]));
		json_object_array_add(pair, json_object_new_string(mps[i]));
		json_object_array_add(a, pair);
	}
	json_object_object_add(res, "mounts", a);
	host_names_free(names, n);
	host_names_free(mps, n);
	return (0);
}

/* ---- pools ---- */

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

static const host_op_t host_ops[] = {
	{ "fs.mount", op_fs_mount },
	{ "fs.mount_all", op_fs_mount_all },
	{ "fs.unmount", op_fs_unmount },
	{ "fs.mounts", op_fs_mounts },
	{ "pool.sync", op_pool_sync },
};

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
	for (size_t i = 0; i < ARRAY_SIZE(host_ops) && o == NULL; i++)
		if (strcmp(host_ops[i].ho_name, op) == 0)
			o = &host_ops[i];
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
