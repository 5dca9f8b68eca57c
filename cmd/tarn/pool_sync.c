/*
 * pool_sync.c — `tarn pool sync [pool] ...`, as zpool sync: write every
 * pool's (or the named pools') dirty data to its devices now, rather than
 * at the end of the open transaction group.  Data still in the kernel's
 * page cache of a mount is not the pool's yet: sync(1) first sends it.
 * The host does it (operation pool.sync).
 */
#include "tarn.h"

#include <getopt.h>

int
cli_pool_sync(int argc, char **argv)
{
	json_object *args = json_object_new_object(), *res;
	int c, r;

	while ((c = getopt(argc, argv, ":")) != -1) {
		json_object_put(args);
		return (cli_bad_option("sync", c, optopt));
	}
	argc -= optind;
	argv += optind;
	if (argc > 0) {
		json_object *names = json_object_new_array_ext(argc);
		for (int i = 0; i < argc; i++)
			json_object_array_add(names, json_object_new_string(argv[i]));
		json_object_object_add(args, "names", names);
	}
	r = cli_call("pool.sync", args, &res);
	json_object_put(res);
	return (r);
}
