/*
 * pool_labelclear.c — `tarn pool labelclear [-f] <device>`, as zpool
 * labelclear: zero the Tarn labels of a device that no longer belongs to
 * a pool here, so that it can be reused without `create -f` and is not
 * offered by `import` any more.
 *
 * A device of a pool imported on this host (a member or a hot spare of
 * the pool its label names) is never cleared, -f or not: that would break
 * the pool.  A device whose label says its pool is exported, or active
 * (in use by another host, or left by a crash) or a hot spare needs -f,
 * since its pool may still want it.  A device with no Tarn label is left
 * alone and the command succeeds, as there is nothing to clear.  The
 * host reads and clears the labels (operation pool.labelclear,
 * host/host_op_label.c); this file parses argv.
 */
#include "tarn.h"

#include <getopt.h>

int
cli_pool_labelclear(int argc, char **argv)
{
	bool force = false;
	char path[VDEV_PATH_MAX + 1];
	json_object *args, *res;
	int c;

	while ((c = getopt(argc, argv, ":f")) != -1) {
		if (c == 'f')
			force = true;
		else
			return (cli_bad_option("labelclear", c, optopt));
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return (cli_usage_error("labelclear", "missing vdev name"));
	if (argc > 1)
		return (cli_usage_error("labelclear", "too many arguments"));
	/* absolute: the host may run in tarnd, whose directory is not ours */
	if (cli_vdev_newpath("clear label for", argv[0], argv[0], path, sizeof (path)) != 0)
		return (CLI_EXIT_ERROR);
	args = json_object_new_object();
	json_object_object_add(args, "path", json_object_new_string(path));
	json_object_object_add(args, "force", json_object_new_boolean(force));
	int r = cli_call("pool.labelclear", args, &res);
	json_object_put(res);
	return (r);
}
