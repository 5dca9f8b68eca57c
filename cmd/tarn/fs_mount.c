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

/* zfs mount without arguments: "NAME  MOUNTPOINT" per mount, by name. */
static int
fs_list_mounts(void)
{
	char **names, **mps;
	int n, w = 0;

	if (host_mount_list(&names, &mps, &n) != 0)
		return (CLI_EXIT_ERROR);
	for (int i = 0; i < n; i++)
		if ((int)strlen(names[i]) > w)
			w = (int)strlen(names[i]);
	for (int i = 0; i < n; i++)
		fprintf(cli_out, "%-*s  %s\n", w, names[i], mps[i]);
	host_names_free(names, n);
	host_names_free(mps, n);
	return (CLI_EXIT_OK);
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
	if (!host_daemon_mode())
		return (cli_cannot("mount", argc > 0 ? argv[0] : "-a", ENOTSUP,
		    "mounting needs the daemon (tarnd)"));
	if (!all && argc == 0)
		return (fs_list_mounts());
	if (all)
		return (host_mount_all(opts) != 0 ? CLI_EXIT_ERROR : CLI_EXIT_OK);
	return (host_mount_one(argv[0], argc > 1 ? argv[1] : NULL, opts) != 0 ?
	    CLI_EXIT_ERROR : CLI_EXIT_OK);
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
	return (host_unmount(all ? NULL : argv[0], all, force) != 0 ? CLI_EXIT_ERROR :
	    CLI_EXIT_OK);
}
