/*
 * pool_history.c — `tarn pool history [-il] [pool...]`, and the recording
 * of every command that changes a pool (zpool's and zfs's) into that
 * pool's history.
 *
 * Recording: each verb that may change a pool calls cli_history_begin()
 * (zpool verbs) or cli_history_begin_zfs() (fs verbs) with its argv
 * before parsing it (getopt permutes argv), which keeps the command line
 * as zpool would write it ("zpool create tank mirror a b", "zfs set
 * atime=off tank/a"); once the change succeeded it calls
 * cli_history_log(spa), once per pool.  The library (spa_history_log_as)
 * stores it with the time, the host and the user who ran it (the
 * client's, through the daemon's socket); the library itself records the
 * internal events (a dataset created in txg N, scans set up and done), and
 * cli_history_event() the pool's own (created, imported, features
 * enabled).  A version-1 pool, which has no `history` feature, records
 * nothing until it is upgraded.
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
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* The command line of the verb this thread runs (as zpool would log it). */
static __thread char cli_history_line[400];
/* The pools it was recorded in (a verb over several datasets: once each). */
#define HISTORY_MAXPOOLS 8
static __thread char cli_history_pools[HISTORY_MAXPOOLS][SPA_NAME_MAX + 1];
static __thread int cli_history_npools;

static void
history_begin(const char *prog, int argc, char **argv)
{
	size_t off;

	cli_history_npools = 0;
	off = (size_t)snprintf(cli_history_line, sizeof (cli_history_line), "%s", prog);
	for (int i = 0; i < argc && off < sizeof (cli_history_line); i++)
		off += (size_t)snprintf(cli_history_line + off,
		    sizeof (cli_history_line) - off, " %s", argv[i]);
}

void
cli_history_begin(int argc, char **argv)
{
	history_begin("zpool", argc, argv);
}

void
cli_history_begin_zfs(int argc, char **argv)
{
	history_begin("zfs", argc, argv);
}

/* Who runs the command: the client of the daemon's socket, or us. */
static uint32_t
history_uid(void)
{
	struct ucred cr;
	socklen_t len = sizeof (cr);

	if (host_conn_fd_tls >= 0 &&
	    getsockopt(host_conn_fd_tls, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0)
		return ((uint32_t)cr.uid);
	return ((uint32_t)getuid());
}

void
cli_history_log(spa_t *spa)
{
	int error;

	if (cli_history_line[0] == '\0' || spa_readonly(spa))
		return;
	for (int i = 0; i < cli_history_npools; i++)
		if (strcmp(cli_history_pools[i], spa_name(spa)) == 0)
			return;
	if (cli_history_npools < HISTORY_MAXPOOLS)
		(void) snprintf(cli_history_pools[cli_history_npools++],
		    sizeof (cli_history_pools[0]), "%s", spa_name(spa));
	/* A command that did its work does not fail for want of a record. */
	if ((error = spa_history_log_as(spa, cli_history_line, history_uid())) != 0)
		fprintf(cli_err, "note: the command was not recorded in the history "
		    "of '%s': %s\n", spa_name(spa), tarn_strerror(error));
}

void
cli_history_event(spa_t *spa, const char *what)
{
	struct utsname u;

	if (uname(&u) != 0)
		memset(&u, 0, sizeof (u));
	/* zpool's words: "create pool version 5000; software version ...; uts ..." */
	(void) spa_history_log_internal(spa, 0, "%s pool version %" PRIu64 "; software "
	    "version tarn-%s; uts %s %s %s %s", what, spa_version(spa), TARN_VERSION,
	    u.nodename, u.release, u.version, u.machine);
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
