/*
 * host_op_mount.c — the operations of zfs mount and zfs unmount
 * (host_mount.c does the work):
 *
 *   fs.mount          name, dir?, opts?            -
 *   fs.mount_all      opts?                        -
 *   fs.unmount        what?, all, force            -
 *   fs.mounts         -                            mounts: [[name, mountpoint]...]
 */
#include "host_impl.h"

static int
op_fs_mount(json_object *args, json_object *res)
{
	const char *name;

	if (host_arg_need(args, "name", "mount", &name) != 0)
		return (HOST_FAILED);
	return (host_mount_one(name, host_arg_str(args, "dir"), host_arg_str(args, "opts")));
}

static int
op_fs_mount_all(json_object *args, json_object *res)
{
	return (host_mount_all(host_arg_str(args, "opts")));
}

static int
op_fs_unmount(json_object *args, json_object *res)
{
	bool all = host_arg_bool(args, "all");
	const char *what = host_arg_str(args, "what");

	if (!all && what == NULL)
		return (host_report("unmount", "-", EINVAL, "missing filesystem argument"));
	return (host_unmount(what, all, host_arg_bool(args, "force")));
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

const host_op_t host_ops_mount[] = {
	{ "fs.mount", op_fs_mount },
	{ "fs.mount_all", op_fs_mount_all },
	{ "fs.unmount", op_fs_unmount },
	{ "fs.mounts", op_fs_mounts },
	{ NULL, NULL }
};
