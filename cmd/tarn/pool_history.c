/*
 * pool_history.c — `tarn pool history [pool...]`, and the recording of
 * every command that changes a pool into that pool's history.
 *
 * Recording: each verb that may change a pool calls cli_history_begin()
 * with its argv before parsing it (getopt permutes argv), which keeps the
 * command line as zpool would write it ("zpool create tank mirror a b");
 * once the change succeeded it calls cli_history_log(spa).  The library
 * (spa_history_log) stores it with the time; a version-1 pool, which has
 * no `history` feature, records nothing until it is upgraded.
 *
 * Output, as zpool's:
 *
 *	History for 'tank':
 *	2026-11-30.04:00:00 zpool create tank mirror /d/a /d/b
 *	2026-11-30.04:10:00 zpool scrub tank
 *	<blank line>
 */
#include "tarn.h"

#include <getopt.h>
#include <time.h>

/* The command line of the verb this thread runs (as zpool would log it). */
static __thread char cli_history_line[496];

void
cli_history_begin(int argc, char **argv)
{
	size_t off;

	off = (size_t)snprintf(cli_history_line, sizeof (cli_history_line), "zpool");
	for (int i = 0; i < argc && off < sizeof (cli_history_line); i++)
		off += (size_t)snprintf(cli_history_line + off,
		    sizeof (cli_history_line) - off, " %s", argv[i]);
}

void
cli_history_log(spa_t *spa)
{
	int error;

	if (cli_history_line[0] == '\0' || spa_readonly(spa))
		return;
	/* A command that did its work does not fail for want of a record. */
	if ((error = spa_history_log(spa, cli_history_line)) != 0)
		fprintf(cli_err, "note: the command was not recorded in the history "
		    "of '%s': %s\n", spa_name(spa), tarn_strerror(error));
}

/* "2026-11-30.04:00:00" in local time, as zpool history prints it. */
static void
history_time(uint64_t secs, char *buf, size_t len)
{
	time_t t = (time_t)secs;
	struct tm tm;

	if (localtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%d.%H:%M:%S", &tm) == 0)
		(void) snprintf(buf, len, "%" PRIu64, secs);
}

static int
history_one(const char *name)
{
	spa_history_ent_t *ents;
	spa_t *spa;
	char err[1024], when[64];
	int n, error;

	error = cli_pool_open(name, SPA_OPEN_READONLY | SPA_OPEN_NOVERIFY, &spa,
	    err, sizeof (err));
	if (error != 0)
		return (cli_cannot("get history", name, error, err));
	error = spa_history_get(spa, &ents, &n);
	if (error != 0) {
		cli_pool_close(spa);
		return (cli_cannot("get history", name, error, NULL));
	}
	fprintf(cli_out, "History for '%s':\n", name);
	for (int i = 0; i < n; i++) {
		history_time(ents[i].she_time, when, sizeof (when));
		fprintf(cli_out, "%s %s\n", when, ents[i].she_cmd);
	}
	cli_putc('\n');
	tarn_free(ents);
	cli_pool_close(spa);
	return (CLI_EXIT_OK);
}

int
cli_pool_history(int argc, char **argv)
{
	char **names = NULL;
	int c, n = 0, ret = CLI_EXIT_OK, error;

	while ((c = getopt(argc, argv, ":il")) != -1) {
		if (c != 'i' && c != 'l')   /* no internal events, no long form yet */
			return (cli_bad_option("history", c, optopt));
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		if ((error = cli_pool_names(&names, &n)) != 0)
			return (cli_cannot("get history", spa_cachefile_path(), error, NULL));
		if (n == 0)
			fprintf(cli_err, "no pools available\n");
	}
	for (int i = 0; i < (argc > 0 ? argc : n); i++)
		if (history_one(argc > 0 ? argv[i] : names[i]) != 0)
			ret = CLI_EXIT_ERROR;
	cli_names_free(names, n);
	return (ret);
}
