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
 * damaged).  Pool features are `tarn pool upgrade`.  The reading and
 * counting is the host's (fs.upgrade, host/host_op_fs.c); here the
 * options and the text.
 */
#include "tarn.h"
#include "posix.h"

#include <getopt.h>

/* fs.upgrade on names (NULL: every pool's datasets); its status, *resp its result. */
static int
up_call(char **names, int n, bool recurse, bool list, json_object **resp)
{
	json_object *args = json_object_new_object();
	if (names != NULL) {
		json_object *a = json_object_new_array_ext(n);
		for (int i = 0; i < n; i++)
			json_object_array_add(a, json_object_new_string(names[i]));
		json_object_object_add(args, "names", a);
	}
	json_object_object_add(args, "recursive", json_object_new_boolean(recurse));
	json_object_object_add(args, "list", json_object_new_boolean(list));
	return (cli_call("fs.upgrade", args, resp));
}

static uint64_t
up_count(json_object *res, const char *key)
{
	return (json_object_get_uint64(json_object_object_get(res, key)));
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
	json_object *res;
	int r;
	if (!all && argc == 0) {
		fprintf(cli_out, "This system is currently running ZFS filesystem version %d.\n\n",
		    POSIX_VERSION);
		r = up_call(NULL, 0, false, true, &res);
		if (res == NULL)
			return (r);
		json_object *old = json_object_object_get(res, "old");
		for (size_t i = 0; i < json_object_array_length(old); i++) {
			json_object *row = json_object_array_get_idx(old, i);
			fprintf(cli_out, "%2" PRIu64 "   %s\n",
			    json_object_get_uint64(json_object_array_get_idx(row, 0)),
			    json_object_get_string(json_object_array_get_idx(row, 1)));
		}
		if (up_count(res, "other") == 0)
			fprintf(cli_out, "All filesystems are formatted with the current "
			    "version.\n");
		json_object_put(res);
		return (r);
	}
	r = up_call(all ? NULL : argv, argc, recurse, false, &res);
	if (res == NULL)
		return (r);
	fprintf(cli_out, "0 filesystems upgraded\n");
	if (up_count(res, "current") > 0)
		fprintf(cli_out, "%" PRIu64 " filesystems already at this version\n",
		    up_count(res, "current"));
	json_object_put(res);
	return (r);
}
