/*
 * main.c — the `tarn` command: dispatch to the command groups.  `tarn pool
 * VERB` speaks zpool(8); invoked as `zpool` (a symlink to tarn), tarn
 * behaves as `tarn pool`.  The verbs live in pool_*.c; conventions for
 * output and errors are in tarn.h.
 */
#include "tarn.h"

__thread FILE *cli_out_tls, *cli_err_tls;

#include <libgen.h>
#include <locale.h>

static void
usage(FILE *f)
{
	fprintf(f, "usage: tarn <command> [args]\n\n"
	    "commands:\n"
	    "\tpool <verb> ...    manage storage pools (zpool syntax; see 'tarn pool help')\n"
	    "\thelp [pool]        print this help, or the pool verbs\n"
	    "\t--version          print the version\n\n"
	    "When run as 'zpool', tarn behaves as 'tarn pool'.\n"
	    "The cache file of imported pools is $TARN_CACHEFILE, else "
	    "/etc/tarn/tarn.cache.\n");
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

int
main(int argc, char **argv)
{
	const char *cmd;

	(void) setlocale(LC_ALL, "C");
	if (argc < 1)
		return (CLI_EXIT_USAGE);
	if (strcmp(progname(argv[0]), "zpool") == 0) {
		cli_pool_prog = "zpool";
		return (cli_pool_main(argc, argv));
	}
	if (argc < 2) {
		usage(cli_err);
		return (CLI_EXIT_USAGE);
	}
	cmd = argv[1];
	if (strcmp(cmd, "pool") == 0)
		return (cli_pool_main(argc - 1, argv + 1));
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
			usage(cli_out);
		return (CLI_EXIT_OK);
	}
	fprintf(cli_err, "unrecognized command '%s'; see 'tarn help'\n", cmd);
	usage(cli_err);
	return (CLI_EXIT_USAGE);
}
