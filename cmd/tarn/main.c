/*
 * main.c — the `tarn` command.  Pool and dataset commands (`tarn pool
 * VERB`, `tarn fs VERB`, or `zpool`/`zfs VERB` through symlinks) are
 * parsed and printed here (dispatch.c); what they ask of the pools goes
 * as host operations to the daemon, tarnd, which holds the imported
 * pools (call.c, client.c; tarnd is started when none runs).  With
 * TARN_NO_DAEMON=1 the operations run in this process instead.  `tarn daemon start|stop|status` manages
 * the daemon.  Called as mount.tarn (a symlink in /sbin), it is mount(8)'s
 * helper for datasets whose mountpoint is legacy: `mount -t tarn tank/fs
 * /mnt` and fstab lines of type tarn become `tarn fs mount -o OPTS tank/fs
 * /mnt`.
 */
#include "tarn.h"

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

/* mount(8)'s helper exit codes (mount(8), RETURN CODES) */
#define MOUNT_EX_USAGE  1
#define MOUNT_EX_FAIL   32

/*
 * mount.tarn SPEC DIR [-sfnv] [-N NS] [-o OPTS] [-t TYPE], as mount(8)
 * calls a helper: run `tarn fs mount [-o OPTS] SPEC DIR`.  -f (fake)
 * mounts nothing; -s, -n, -v and -t change nothing here.
 */
static int
mount_helper(int argc, char **argv)
{
	const char *spec = NULL, *dir = NULL, *opts = NULL;
	bool fake = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || a[1] == '\0') {
			if (spec == NULL)
				spec = a;
			else if (dir == NULL)
				dir = a;
			else
				goto usage;
			continue;
		}
		for (const char *f = a + 1; *f != '\0'; f++) {
			if (*f == 'o' || *f == 't' || *f == 'N') {
				const char *val = f[1] != '\0' ? f + 1 : (i + 1 < argc ? argv[++i] : NULL);
				if (val == NULL)
					goto usage;
				if (*f == 'N') {
					fprintf(stderr, "mount.tarn: mount namespaces (-N) are not "
					    "supported\n");
					return (MOUNT_EX_USAGE);
				}
				if (*f == 'o')
					opts = val;
				break;
			}
			if (*f == 'f')
				fake = true;
			else if (*f != 's' && *f != 'n' && *f != 'v')
				goto usage;
		}
	}
	if (spec == NULL || dir == NULL)
		goto usage;
	if (fake)
		return (0);
	char *args[] = { (char *)"tarn", (char *)"fs", (char *)"mount", (char *)"-o",
		(char *)(opts != NULL ? opts : "defaults"), (char *)spec, (char *)dir, NULL };
	int n = (int)ARRAY_SIZE(args) - 1, r = cli_dispatch(n, args);
	return (r == 0 ? 0 : r == CLI_EXIT_USAGE ? MOUNT_EX_USAGE : MOUNT_EX_FAIL);
usage:
	fprintf(stderr, "usage: mount.tarn DATASET DIR [-sfnv] [-o OPTIONS]\n"
	    "  (mount -t tarn DATASET DIR, for a dataset whose mountpoint is legacy)\n");
	return (MOUNT_EX_USAGE);
}

int
main(int argc, char **argv)
{
	(void) setlocale(LC_ALL, "C");
	if (argc < 1)
		return (CLI_EXIT_USAGE);
	if (strcmp(progname(argv[0]), "mount.tarn") == 0)
		return (mount_helper(argc, argv));
	if (argc >= 2 && strcmp(progname(argv[0]), "zpool") != 0 &&
	    strcmp(progname(argv[0]), "zfs") != 0) {
		if (strcmp(argv[1], "daemon") == 0)
			return (cli_client_daemon(argc - 1, argv + 1));
		if (strcmp(argv[1], "--stop-daemon") == 0) {
			char *stop[] = { (char *)"daemon", (char *)"stop", NULL };
			return (cli_client_daemon(2, stop));
		}
	}
	return (cli_dispatch(argc, argv));
}
