/*
 * pool_sync.c — `tarn pool sync [pool] ...`, as zpool sync: write every
 * pool's (or the named pools') dirty data to its devices now, rather than
 * at the end of the open transaction group.  Data still in the kernel's
 * page cache of a mount is not the pool's yet: sync(1) first sends it.
 */
#include "tarn.h"

#include <getopt.h>

static int
sync_one(const char *name)
{
	char err[1024] = "";
	spa_t *spa;
	int e = host_pool_open(name, 0, &spa, err, sizeof (err));
	if (e != 0)
		return (cli_cannot("sync", name, e, err));
	dmu_pool_t *dp = spa_dmu_pool(spa);
	if (!spa_readonly(spa) && dp != NULL)
		e = txg_wait_synced(dp, 0);
	host_pool_close(spa);
	return (e == 0 ? CLI_EXIT_OK : cli_cannot("sync", name, e, NULL));
}

int
cli_pool_sync(int argc, char **argv)
{
	int c, r = CLI_EXIT_OK;
	while ((c = getopt(argc, argv, ":")) != -1)
		return (cli_bad_option("sync", c, optopt));
	argc -= optind;
	argv += optind;
	if (argc > 0) {
		for (int i = 0; i < argc; i++)
			if (sync_one(argv[i]) != CLI_EXIT_OK)
				r = CLI_EXIT_ERROR;
		return (r);
	}
	char **names;
	int n;
	if (host_pool_names(&names, &n) != 0)
		return (CLI_EXIT_ERROR);
	for (int i = 0; i < n; i++)
		if (sync_one(names[i]) != CLI_EXIT_OK)
			r = CLI_EXIT_ERROR;
	host_names_free(names, n);
	return (r);
}
