/*
 * main.c — the `tarn` command.  Pool and dataset commands (`tarn pool
 * VERB`, `tarn fs VERB`, or `zpool`/`zfs VERB` through symlinks) run in
 * the daemon, tarnd, which holds
 * the imported pools: this process sends the command line and prints
 * what comes back (client.c), starting tarnd when none runs.  With
 * TARN_NO_DAEMON=1 they run in this process instead (dispatch.c), as do
 * help and --version always.  `tarn daemon start|stop|status` manages
 * the daemon.
 */
#include "tarn.h"
#include "proto.h"

#include <locale.h>

static const char *
progname(const char *argv0)
{
	const char *slash;

	if (argv0 == NULL || argv0[0] == '\0')
		return ("tarn");
	slash = strrchr(argv0, '/');
	return (slash != NULL ? slash + 1 : argv0);
}

static bool
help_word(const char *s)
{
	return (strcmp(s, "help") == 0 || strcmp(s, "-h") == 0 ||
	    strcmp(s, "--help") == 0 || strcmp(s, "-?") == 0);
}

/* Does this command line use pools (and so belong in the daemon)? */
static bool
uses_pools(int argc, char **argv)
{
	const char *prog = progname(argv[0]);

	if (strcmp(prog, "zpool") == 0 || strcmp(prog, "zfs") == 0)
		return (argc >= 2 && !help_word(argv[1]));
	return (argc >= 3 && (strcmp(argv[1], "pool") == 0 || strcmp(argv[1], "fs") == 0) &&
	    !help_word(argv[2]));
}

static bool
no_daemon(void)
{
	const char *v = getenv("TARN_NO_DAEMON");

	return (v != NULL && v[0] != '\0' && strcmp(v, "0") != 0);
}

int
main(int argc, char **argv)
{
	(void) setlocale(LC_ALL, "C");
	if (argc < 1)
		return (CLI_EXIT_USAGE);
	if (argc >= 2 && strcmp(progname(argv[0]), "zpool") != 0 &&
	    strcmp(progname(argv[0]), "zfs") != 0) {
		if (strcmp(argv[1], "daemon") == 0)
			return (cli_client_daemon(argc - 1, argv + 1));
		if (strcmp(argv[1], "--stop-daemon") == 0) {
			char *stop[] = { (char *)"daemon", (char *)"stop", NULL };
			return (cli_client_daemon(2, stop));
		}
	}
	if (uses_pools(argc, argv) && !no_daemon())
		return (cli_client_run(argc, argv));
	return (cli_dispatch(argc, argv));
}
