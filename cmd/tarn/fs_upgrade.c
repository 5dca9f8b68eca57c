/*
 * fs_upgrade.c — `tarn fs upgrade`, as zfs upgrade: the file system
 * format version of datasets (the POSIX layer's VERSION, lib/posix).
 *
 *	upgrade                  this build's version; datasets not at it
 *	upgrade -v               the versions this build knows
 *	upgrade [-r] <-a | filesystem ...>
 *	                         bring datasets to this build's version
 *
 * Tarn has had one file system version so far, so there is nothing to
 * convert yet: an upgrade reads every dataset's version and counts it as
 * current, and names one it cannot upgrade (written by a newer Tarn, or
 * damaged).  Pool features are `tarn pool upgrade`.
 */
#include "tarn.h"
#include "dsl.h"
#include "posix.h"

#include <getopt.h>

typedef struct up_walk {
	dsl_pool_t *uw_dp;
	bool        uw_list;        /* plain `upgrade`: print those not current */
	uint64_t    uw_current;     /* datasets at this build's version */
	uint64_t    uw_other;       /* at another one */
	int         uw_ret;
} up_walk_t;

static int
up_one(void *arg, const char *name, int depth)
{
	up_walk_t *w = arg;
	objset_t *os;
	uint64_t v = 0;
	int e = dsl_dataset_objset(w->uw_dp, name, &os);
	if (e == 0)
		e = posix_fs_version(os, &v);
	if (e == 0 && v == POSIX_VERSION) {
		w->uw_current++;
		return (0);
	}
	w->uw_other++;
	if (e == 0 && w->uw_list) {
		fprintf(cli_out, "%2" PRIu64 "   %s\n", v, name);
		return (0);
	}
	char msg[96];
	(void) snprintf(msg, sizeof (msg), "file system version %" PRIu64 " is %s", v,
	    v > POSIX_VERSION ? "newer than this software supports" : "not one it knows");
	w->uw_ret = cli_cannot("upgrade", name, e != 0 ? e : ENOTSUP, e != 0 ? NULL : msg);
	return (0);
}

/* name, and its descendants when all */
static void
up_tree(up_walk_t *w, const char *name, bool all)
{
	host_fs_t fs;
	if (host_fs_open_existing(name, true, &fs) != 0) {
		w->uw_ret = CLI_EXIT_ERROR;
		return;
	}
	w->uw_dp = fs.hf_dp;
	if (all)
		(void) dsl_dataset_iter(fs.hf_dp, name, -1, up_one, w);
	else
		(void) up_one(w, name, 0);
	host_fs_close(&fs);
}

static void
up_all_pools(up_walk_t *w)
{
	char **names;
	int n;
	if (host_pool_names(&names, &n) != 0) {
		w->uw_ret = CLI_EXIT_ERROR;
		return;
	}
	for (int i = 0; i < n; i++)
		up_tree(w, names[i], true);
	host_names_free(names, n);
}

int
cli_fs_upgrade(int argc, char **argv)
{
	bool all = false, recurse = false, versions = false;
	int c;
	while ((c = getopt(argc, argv, ":arv")) != -1) {
		if (c == 'a')
			all = true;
		else if (c == 'r')
			recurse = true;
		else if (c == 'v')
			versions = true;
		else
			return (cli_fs_bad_option("upgrade", c, optopt));
	}
	argc -= optind;
	argv += optind;
	if (versions && (all || recurse || argc > 0))
		return (cli_fs_usage_error("upgrade", "-v takes no other arguments"));
	if (all && argc > 0)
		return (cli_fs_usage_error("upgrade", "-a takes no dataset names"));
	if (versions) {
		fprintf(cli_out, "The following filesystem versions are supported:\n\n"
		    "VER  DESCRIPTION\n"
		    "---  --------------------------------------------------------\n"
		    " 1   Initial Tarn file system format\n\n"
		    "For more information on a particular version, see docs/FORMAT.md.\n");
		return (CLI_EXIT_OK);
	}
	up_walk_t w = { .uw_ret = CLI_EXIT_OK };
	if (!all && argc == 0) {
		fprintf(cli_out, "This system is currently running ZFS filesystem version %d.\n\n",
		    POSIX_VERSION);
		w.uw_list = true;
		up_all_pools(&w);
		if (w.uw_other == 0)
			fprintf(cli_out, "All filesystems are formatted with the current "
			    "version.\n");
		return (w.uw_ret);
	}
	if (all)
		up_all_pools(&w);
	for (int i = 0; i < argc; i++)
		up_tree(&w, argv[i], recurse);
	fprintf(cli_out, "0 filesystems upgraded\n");
	if (w.uw_current > 0)
		fprintf(cli_out, "%" PRIu64 " filesystems already at this version\n",
		    w.uw_current);
	return (w.uw_ret);
}
