/*
 * pool_history.c — `tarn pool history [-il] [pool...]`, and the recording
 * of every command that changes a pool (zpool's and zfs's) into that
 * pool's history.
 *
 * Recording: each verb that may change a pool calls cli_history_begin()
 * (zpool verbs) or cli_history_begin_zfs() (fs verbs) with its argv
 * before parsing it (getopt permutes argv), which keeps the command line
 * as zpool would write it ("zpool create tank mirror a b", "zfs set
 * atime=off tank/a"); the host writes it into each pool the command
 * changed (host/host_history.c).
 *
 * Output, as zpool's:
 *
 *	History for 'tank':
 *	2026-11-30.04:00:00 zpool create tank mirror /d/a /d/b
 *	2026-11-30.04:05:00 [txg:7] create tank/a (5)      (-i only)
 *	2026-11-30.04:05:00 zfs create tank/a
 *	<blank line>
 *
 * -l appends " [user 0 (root) on HOST]" to a command (" [on HOST]" to an
 * internal event); records written before hosts were kept have none.
 */
#include "tarn.h"

#include <getopt.h>
#include <pwd.h>
#include <time.h>
#include <unistd.h>

void
cli_history_begin(int argc, char **argv)
{
	host_history_begin("zpool", argc, argv);
}

void
cli_history_begin_zfs(int argc, char **argv)
{
	host_history_begin("zfs", argc, argv);
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

/* " [user 0 (root) on HOST]" (an internal event: " [on HOST]") for -l. */
static void
history_long(const spa_history_ent_t *e)
{
	if (!e->she_long)
		return;
	fputs(" [", cli_out);
	if (e->she_kind == SPA_HIST_CMD) {
		struct passwd pw, *res = NULL;
		char buf[1024];
		fprintf(cli_out, "user %" PRIu32 " ", e->she_uid);
		if (getpwuid_r((uid_t)e->she_uid, &pw, buf, sizeof (buf), &res) == 0 &&
		    res != NULL)
			fprintf(cli_out, "(%s) ", pw.pw_name);
	}
	fprintf(cli_out, "on %s]", e->she_host);
}

static int
history_one(const char *name, bool internal, bool longfmt)
{
	spa_history_ent_t *ents;
	spa_t *spa;
	char err[1024], when[64];
	int n, error;

	error = host_pool_open(name, SPA_OPEN_READONLY | SPA_OPEN_NOVERIFY, &spa,
	    err, sizeof (err));
	if (error != 0)
		return (cli_cannot("get history", name, error, err));
	error = spa_history_get(spa, &ents, &n);
	if (error != 0) {
		host_pool_close(spa);
		return (cli_cannot("get history", name, error, NULL));
	}
	fprintf(cli_out, "History for '%s':\n", name);
	for (int i = 0; i < n; i++) {
		const spa_history_ent_t *e = &ents[i];
		if (e->she_kind == SPA_HIST_INTERNAL && !internal)
			continue;
		history_time(e->she_time, when, sizeof (when));
		if (e->she_kind == SPA_HIST_INTERNAL)
			fprintf(cli_out, "%s [txg:%" PRIu64 "] %s", when, e->she_txg,
			    e->she_cmd);
		else
			fprintf(cli_out, "%s %s", when, e->she_cmd);
		if (longfmt)
			history_long(e);
		cli_putc('\n');
	}
	cli_putc('\n');
	tarn_free(ents);
	host_pool_close(spa);
	return (CLI_EXIT_OK);
}

int
cli_pool_history(int argc, char **argv)
{
	char **names = NULL;
	bool internal = false, longfmt = false;
	int c, n = 0, ret = CLI_EXIT_OK, error;

	while ((c = getopt(argc, argv, ":il")) != -1) {
		if (c == 'i')
			internal = true;
		else if (c == 'l')
			longfmt = true;
		else
			return (cli_bad_option("history", c, optopt));
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		if ((error = host_pool_names(&names, &n)) != 0)
			return (cli_cannot("get history", spa_cachefile_path(), error, NULL));
		if (n == 0)
			fprintf(cli_err, "no pools available\n");
	}
	for (int i = 0; i < (argc > 0 ? argc : n); i++)
		if (history_one(argc > 0 ? argv[i] : names[i], internal, longfmt) != 0)
			ret = CLI_EXIT_ERROR;
	host_names_free(names, n);
	return (ret);
}
