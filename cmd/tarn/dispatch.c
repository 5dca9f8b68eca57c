/*
 * dispatch.c — run one command line: dispatch to the command groups
 * (`tarn pool`, `tarn fs`, or `zpool`/`zfs` by the program's name), with
 * the host's failures printed as the command's own.
 */
#include "tarn.h"

void
cli_usage(FILE *f)
{
	fprintf(f, "usage: tarn <command> [args]\n\n"
	    "commands:\n"
	    "\tpool <verb> ...    manage storage pools (zpool syntax; see 'tarn pool help')\n"
	    "\tfs <verb> ...      manage datasets (zfs syntax; see 'tarn fs help')\n"
	    "\tinject ...         inject device faults and delays into an imported pool\n"
	    "\t                   (zinject syntax; see 'tarn inject -h')\n"
	    "\tdaemon start|stop|status|get|set\n"
	    "\t                   the daemon (tarnd) that holds the imported pools\n"
	    "\tarcstat [-f FIELDS] [INTERVAL [COUNT]]\n"
	    "\t                   the daemon's block cache (ARC), a line a sample\n"
	    "\tarc-summary        a report of the ARC\n"
	    "\thelp [pool]        print this help, or the pool verbs\n"
	    "\t--version          print the version\n\n"
	    "When run as 'zpool', tarn behaves as 'tarn pool'; as 'zfs', as 'tarn fs'.\n"
	    "The cache file of imported pools is $TARN_CACHEFILE, else "
	    "/etc/tarn/tarn.cache.\n"
	    "Pool commands run in the daemon (started when needed; socket "
	    "$TARN_SOCKET, else\n/run/tarn/tarnd.sock); TARN_NO_DAEMON=1 runs "
	    "them in this process instead.\n");
}

static const char *
progname(const char *argv0)
{
	const char *slash;

	if (argv0 == NULL || argv0[0] == '\0')
		return ("tarn");
	slash = strrchr(argv0, '/');
	return (slash != NULL ? slash + 1 : argv0);
}

static int
cli_dispatch_cmd(int argc, char **argv)
{
	const char *cmd;

	if (argc < 1)
		return (CLI_EXIT_USAGE);
	if (strcmp(progname(argv[0]), "zpool") == 0) {
		cli_pool_prog = "zpool";
		return (cli_pool_main(argc, argv));
	}
	if (strcmp(progname(argv[0]), "zfs") == 0)
		return (cli_fs_main(argc, argv));
	cli_pool_prog = "tarn pool";
	if (argc < 2) {
		cli_usage(cli_err);
		return (CLI_EXIT_USAGE);
	}
	cmd = argv[1];
	if (strcmp(cmd, "pool") == 0)
		return (cli_pool_main(argc - 1, argv + 1));
	if (strcmp(cmd, "fs") == 0)
		return (cli_fs_main(argc - 1, argv + 1));
	if (strcmp(cmd, "arcstat") == 0)
		return (cli_arcstat(argc - 1, argv + 1));
	if (strcmp(cmd, "arc-summary") == 0 || strcmp(cmd, "arc_summary") == 0)
		return (cli_arc_summary(argc - 1, argv + 1));
	if (strcmp(cmd, "inject") == 0)
		return (cli_inject(argc - 1, argv + 1));
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0 ||
	    strcmp(cmd, "version") == 0) {
		fprintf(cli_out, "tarn %s\n", TARN_VERSION);
		return (CLI_EXIT_OK);
	}
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 ||
	    strcmp(cmd, "-h") == 0 || strcmp(cmd, "-?") == 0) {
		if (argc > 2 && strcmp(argv[2], "pool") == 0)
			cli_pool_usage(cli_out);
		else
			cli_usage(cli_out);
		return (CLI_EXIT_OK);
	}
	fprintf(cli_err, "unrecognized command '%s'; see 'tarn help'\n", cmd);
	cli_usage(cli_err);
	return (CLI_EXIT_USAGE);
}

/* The host's failures are printed as the command's own. */
static void
cli_report(const char *verb, const char *name, int error, const char *msg)
{
	(void) cli_cannot(verb, name, error, msg);
}

int
cli_dispatch(int argc, char **argv)
{
	host_set_reporter(cli_report);
	int ret = cli_dispatch_cmd(argc, argv);

	fflush(cli_out);
	fflush(cli_err);
	return (ret);
}
