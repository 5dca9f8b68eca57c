/*
 * dispatch.c — run one command line, the same way in `tarn` (in-process)
 * and in tarnd (for a client, in a thread of its own): dispatch to the
 * command groups, with the per-thread output streams and the per-thread
 * getopt that let the daemon run several commands at once.
 */
#include "tarn.h"

#include <pthread.h>

__thread FILE *cli_out_tls, *cli_err_tls;

/*
 * Per-thread getopt.  glibc's getopt keeps its scan state in globals, so
 * a command's whole option scan runs under one mutex: taken at its first
 * getopt() call, given back when getopt() says -1, or by cli_dispatch()
 * when the command returned in the middle of its scan (a bad option).
 * Each scan starts afresh (optind = 0 for glibc), so no state of an
 * earlier scan (possibly of freed argv) is used.
 */
#undef getopt
#undef optarg
#undef optind
#undef opterr
#undef optopt

__thread char *cli_optarg;
__thread int cli_optind = 1, cli_opterr = 1, cli_optopt = '?';
static pthread_mutex_t cli_getopt_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread bool cli_getopt_busy;

int
cli_getopt(int argc, char *const argv[], const char *optstring)
{
	int c;

	if (!cli_getopt_busy) {
		pthread_mutex_lock(&cli_getopt_lock);
		cli_getopt_busy = true;
		optind = cli_optind <= 1 ? 0 : cli_optind;
	}
	opterr = cli_opterr;
	c = getopt(argc, argv, optstring);
	cli_optind = optind;
	cli_optarg = optarg;
	cli_optopt = optopt;
	if (c == -1) {
		cli_getopt_busy = false;
		pthread_mutex_unlock(&cli_getopt_lock);
	}
	return (c);
}

static void
cli_getopt_end(void)
{
	if (cli_getopt_busy) {
		cli_getopt_busy = false;
		pthread_mutex_unlock(&cli_getopt_lock);
	}
	cli_optind = 1;
}

void
cli_usage(FILE *f)
{
	fprintf(f, "usage: tarn <command> [args]\n\n"
	    "commands:\n"
	    "\tpool <verb> ...    manage storage pools (zpool syntax; see 'tarn pool help')\n"
	    "\tfs <verb> ...      manage datasets (zfs syntax; see 'tarn fs help')\n"
	    "\tdaemon start|stop|status\n"
	    "\t                   the daemon (tarnd) that holds the imported pools\n"
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

bool
cli_runs_here(int argc, char **argv)
{
	const char *prog = progname(argv[0]);
	const cli_verb_t *v = NULL;

	if (strcmp(prog, "zpool") == 0 && argc >= 2)
		v = cli_pool_verb(argv[1]);
	else if (strcmp(prog, "zfs") == 0 && argc >= 2)
		v = cli_fs_verb(argv[1]);
	else if (argc >= 3 && strcmp(argv[1], "pool") == 0)
		v = cli_pool_verb(argv[2]);
	else if (argc >= 3 && strcmp(argv[1], "fs") == 0)
		v = cli_fs_verb(argv[2]);
	return (v != NULL && (v->cv_flags & CLI_VERB_OPS) != 0);
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

	cli_getopt_end();
	fflush(cli_out);
	fflush(cli_err);
	return (ret);
}
