/*
 * fs_mount.c — `zfs mount` and `zfs unmount`: their options and
 * arguments; the mounting itself is the host's (host_mount.c).
 *
 *   zfs mount                        list what is mounted
 *   zfs mount [-O] [-o opts] -a      every dataset that mounts by itself
 *   zfs mount [-O] [-o opts] DATASET
 *   zfs mount [-o opts] DATASET DIR  mount(8)'s helper, legacy mountpoints
 *   zfs unmount [-f] -a | DATASET | MOUNTPOINT
 */
#include "tarn.h"

#include <limits.h>

/* zfs mount without arguments: "NAME  MOUNTPOINT" per mount, by name. */
static int
fs_list_mounts(void)
{
	json_object *res, *mounts;
	int r = cli_call("fs.mounts", json_object_new_object(), &res), w = 0;

	if (r != CLI_EXIT_OK || !json_object_object_get_ex(res, "mounts", &mounts)) {
		json_object_put(res);
		return (r != CLI_EXIT_OK ? r : CLI_EXIT_ERROR);
	}
	size_t n = json_object_array_length(mounts);
	for (size_t i = 0; i < n; i++) {
		const char *name = json_object_get_string(
		    json_object_array_get_idx(json_object_array_get_idx(mounts, i), 0));
		if ((int)strlen(name) > w)
			w = (int)strlen(name);
	}
	for (size_t i = 0; i < n; i++) {
		json_object *m = json_object_array_get_idx(mounts, i);
		fprintf(cli_out, "%-*s  %s\n", w,
		    json_object_get_string(json_object_array_get_idx(m, 0)),
		    json_object_get_string(json_object_array_get_idx(m, 1)));
	}
	json_object_put(res);
	return (CLI_EXIT_OK);
}

/* Run op with args; its exit status. */
static int
fs_mount_call(const char *op, json_object *args)
{
	json_object *res;
	int r = cli_call(op, args, &res);

	json_object_put(res);
	return (r);
}

static void
add_str(json_object *o, const char *key, const char *v)
{
	if (v != NULL)
		json_object_object_add(o, key, json_object_new_string(v));
}

int
cli_fs_mount(int argc, char **argv)
{
	const char *opts = NULL;
	char err[128];
	bool all = false;
	int c;

	while ((c = getopt(argc, argv, ":aOo:")) != -1) {
		if (c == 'a') {
			all = true;
		} else if (c == 'o') {
			if (host_mount_opts_check(optarg, err, sizeof (err)) != 0)
				return (cli_fs_usage_error("mount", "%s", err));
			opts = optarg;
		} else if (c != 'O') {
			return (cli_fs_bad_option("mount", c, optopt));
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 2 || (all && argc > 0))
		return (cli_fs_usage_error("mount", "too many arguments"));
	if (cli_local())
		return (cli_cannot("mount", argc > 0 ? argv[0] : "-a", ENOTSUP,
		    "mounting needs the daemon (tarnd)"));
	if (!all && argc == 0)
		return (fs_list_mounts());
	json_object *args = json_object_new_object();
	add_str(args, "opts", opts);
	if (all)
		return (fs_mount_call("fs.mount_all", args));
	add_str(args, "name", argv[0]);
	if (argc > 1) {
		/* the directory is the client's: the daemon works elsewhere */
		char *dir = realpath(argv[1], NULL);
		if (dir == NULL) {
			int de = errno;
			char msg[PATH_MAX + 64];
			json_object_put(args);
			(void) snprintf(msg, sizeof (msg), "mount point '%.*s': %s", PATH_MAX,
			    argv[1], tarn_strerror(de));
			return (cli_cannot("mount", argv[0], de, msg));
		}
		add_str(args, "dir", dir);
		free(dir);
	}
	return (fs_mount_call("fs.mount", args));
}

int
cli_fs_unmount(int argc, char **argv)
{
	bool force = false, all = false;
	int c;

	while ((c = getopt(argc, argv, ":fa")) != -1) {
		if (c == 'f')
			force = true;
		else if (c == 'a')
			all = true;
		else
			return (cli_fs_bad_option("unmount", c, optopt));
	}
	argc -= optind;
	argv += optind;
	if (!all && argc < 1)
		return (cli_fs_usage_error("unmount", "missing filesystem argument"));
	if (argc > 1 || (all && argc > 0))
		return (cli_fs_usage_error("unmount", "too many arguments"));
	json_object *args = json_object_new_object();
	json_object_object_add(args, "all", json_object_new_boolean(all));
	json_object_object_add(args, "force", json_object_new_boolean(force));
	if (!all)
		add_str(args, "what", argv[0]);     /* a dataset, or an absolute mountpoint */
	return (fs_mount_call("fs.unmount", args));
}
