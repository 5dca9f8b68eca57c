/*
 * pool.c — `tarn pool`: the verb table and usage texts, error and usage
 * printing shared by the verbs, and helpers to find, open and name pools
 * and vdevs.  Pools are opened and released through the host (host/host_pool.c) (directly,
 * or held by the daemon).
 */
#include "tarn.h"

#include <ctype.h>
#include <stdarg.h>
#include <unistd.h>

__thread const char *cli_pool_prog = "tarn pool";

static const cli_verb_t cli_verbs[] = {
	{ "create", cli_pool_create,
	    "\tcreate [-fn] [-o property=value] ... [-O file-system-property=value] ...\n\t    [-m mountpoint] <pool> <vdev> ...\n" },
	{ "destroy", cli_pool_destroy,
	    "\tdestroy [-f] <pool>\n" },
	{ "import", cli_pool_import,
	    "\timport [-d dir] ...\n"
	    "\timport [-o readonly=on] [-d dir] ... [-f] [-m] [-F [-n]] [-N] -a\n"
	    "\timport [-o readonly=on] [-d dir] ... [-f] [-m] [-F [-n]] [-N]\n"
	    "\t    <pool | id> [newpool]\n" },
	{ "export", cli_pool_export,
	    "\texport [-f] <pool> ...\n" },
	{ "list", cli_pool_list,
	    "\tlist [-Hpj] [-o property[,...]] [pool] ...\n" },
	{ "status", cli_pool_status,
	    "\tstatus [-xvpj] [pool] ...\n" },
	{ "iostat", cli_pool_iostat,
	    "\tiostat [-vyHp] [pool] ... [interval [count]]\n" },
	{ "scrub", cli_pool_scrub,
	    "\tscrub [-s | -p] [-w] <pool> ...\n" },
	{ "resilver", cli_pool_resilver,
	    "\tresilver [-w] <pool> ...\n" },
	{ "attach", cli_pool_attach,
	    "\tattach [-fw] <pool> <device> <new-device>\n" },
	{ "detach", cli_pool_detach,
	    "\tdetach <pool> <device>\n" },
	{ "replace", cli_pool_replace,
	    "\treplace [-fw] <pool> <device> [new-device]\n" },
	{ "online", cli_pool_online,
	    "\tonline <pool> <device> ...\n" },
	{ "offline", cli_pool_offline,
	    "\toffline [-t] <pool> <device> ...\n" },
	{ "clear", cli_pool_clear,
	    "\tclear <pool> [device]\n" },
	{ "add", cli_pool_add,
	    "\tadd [-fn] <pool> <vdev> ...\n"
	    "\tadd [-f] <pool> spare <device> ...\n" },
	{ "remove", cli_pool_remove,
	    "\tremove <pool> <device> ...\n" },
	{ "labelclear", cli_pool_labelclear,
	    "\tlabelclear [-f] <vdev>\n" },
	{ "history", cli_pool_history,
	    "\thistory [pool] ...\n" },
	{ "sync", cli_pool_sync,
	    "\tsync [pool] ...\n" },
	{ "upgrade", cli_pool_upgrade,
	    "\tupgrade\n"
	    "\tupgrade -v\n"
	    "\tupgrade [-V version] <-a | pool ...>\n" },
	{ "get", cli_pool_get,
	    "\tget [-Hp] [-o \"all\" | field[,...]] <\"all\" | property[,...]>\n"
	    "\t    [pool] ...\n" },
	{ "set", cli_pool_set,
	    "\tset <property=value> <pool>\n" },
};

const cli_verb_t *
cli_pool_verb(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(cli_verbs); i++)
		if (strcmp(cli_verbs[i].cv_name, name) == 0)
			return (&cli_verbs[i]);
	return (NULL);
}


void
cli_pool_usage(FILE *f)
{
	fprintf(f, "usage: %s <verb> [args]\n"
	    "where <verb> is one of the following:\n\n", cli_pool_prog);
	for (size_t i = 0; i < ARRAY_SIZE(cli_verbs); i++)
		fputs(cli_verbs[i].cv_usage, f);
	fprintf(f, "\nVdevs: a file or device path (a word without '/' names "
	    "/dev/WORD),\nor a group: mirror DEV DEV ..., raidz[1-3] DEV ...; after the\n"
	    "words log, special or cache: log or special vdevs, cache devices\n"
	    "Properties for create -o: ashift=9..16, version=N, cachefile=none.\n");
}

void
cli_verb_usage(const char *verb, FILE *f)
{
	const cli_verb_t *v = cli_pool_verb(verb);

	if (v == NULL) {
		cli_pool_usage(f);
		return;
	}
	fprintf(f, "usage:\n%s", v->cv_usage);
}

int
cli_usage_error(const char *verb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(cli_err, fmt, ap);
	va_end(ap);
	fputc('\n', cli_err);
	cli_verb_usage(verb, cli_err);
	return (CLI_EXIT_USAGE);
}

int
cli_bad_option(const char *verb, int opt, int optopt)
{
	if (opt == ':')
		return (cli_usage_error(verb, "missing argument for '%c' option", optopt));
	if (isprint(optopt))
		return (cli_usage_error(verb, "invalid option '%c'", optopt));
	return (cli_usage_error(verb, "invalid option"));
}

int
cli_cannot(const char *verb, const char *name, int error, const char *err)
{
	char msg[1024];

	if (err != NULL && err[0] != '\0')
		(void) snprintf(msg, sizeof (msg), "%s", err);
	else
		(void) snprintf(msg, sizeof (msg), "%s",
		    tarn_strerror(error != 0 ? error : EIO));
	/* strerror() capitalises; our messages are lowercase ("I/O" stays). */
	if (isupper((unsigned char)msg[0]) && islower((unsigned char)msg[1]))
		msg[0] = (char)tolower((unsigned char)msg[0]);
	/* one line, whatever the message holds */
	for (char *p = msg; *p != '\0'; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	/* zfs names no dataset in a receive's stream errors; elsewhere '' is a name */
	if (name == NULL || (name[0] == '\0' && strncmp(verb, "receive", 7) == 0))
		fprintf(cli_err, "cannot %s: %s\n", verb, msg);
	else
		fprintf(cli_err, "cannot %s '%s': %s\n", verb, name, msg);
	return (CLI_EXIT_ERROR);
}

int
cli_pool_main(int argc, char **argv)
{
	const cli_verb_t *v;

	if (argc < 2) {
		cli_pool_usage(cli_err);
		return (CLI_EXIT_USAGE);
	}
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "-?") == 0 ||
	    strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		if (argc > 2 && cli_pool_verb(argv[2]) != NULL)
			cli_verb_usage(argv[2], cli_out);
		else
			cli_pool_usage(cli_out);
		return (CLI_EXIT_OK);
	}
	if ((v = cli_pool_verb(argv[1])) == NULL) {
		fprintf(cli_err, "unrecognized command '%s'\n", argv[1]);
		cli_pool_usage(cli_err);
		return (CLI_EXIT_USAGE);
	}
	if (argc > 2 && (strcmp(argv[2], "-?") == 0 || strcmp(argv[2], "--help") == 0)) {
		cli_verb_usage(v->cv_name, cli_out);
		return (CLI_EXIT_OK);
	}
	optind = 1;
	opterr = 0;
	return (v->cv_fn(argc - 1, argv + 1));
}







