/*
 * host_history.c — the pool history of the command being run: its
 * command line as zpool would log it ("zpool create tank mirror a b",
 * "zfs set atime=off tank/a"), set before the command starts
 * (host_history_begin in-process, host_history_set from a request), and
 * written once into each pool the command changed (host_history_log),
 * with the time, the host and the user who ran it (the client's, through
 * the daemon's socket).  The library itself records the internal events
 * (a dataset created in txg N, scans set up and done); host_history_event
 * records the pool's own (created, imported).  A version-1 pool, which
 * has no `history` feature, records nothing until it is upgraded.
 */
#include "host_impl.h"

#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The command line of the verb this thread runs (as zpool would log it). */
static __thread char host_history_line[400];
/* The pools it was recorded in (a verb over several datasets: once each). */
#define HISTORY_MAXPOOLS 8
static __thread char host_history_pools[HISTORY_MAXPOOLS][SPA_NAME_MAX + 1];
static __thread int host_history_npools;

void
host_history_begin(const char *prog, int argc, char **argv)
{
	size_t off;

	host_history_npools = 0;
	off = (size_t)snprintf(host_history_line, sizeof (host_history_line), "%s", prog);
	for (int i = 0; i < argc && off < sizeof (host_history_line); i++)
		off += (size_t)snprintf(host_history_line + off,
		    sizeof (host_history_line) - off, " %s", argv[i]);
}

void
host_history_set(const char *line)
{
	host_history_npools = 0;
	(void) snprintf(host_history_line, sizeof (host_history_line), "%s",
	    line != NULL ? line : "");
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
host_history_log(spa_t *spa)
{
	int error;

	if (host_history_line[0] == '\0' || spa_readonly(spa))
		return;
	for (int i = 0; i < host_history_npools; i++)
		if (strcmp(host_history_pools[i], spa_name(spa)) == 0)
			return;
	if (host_history_npools < HISTORY_MAXPOOLS)
		(void) snprintf(host_history_pools[host_history_npools++],
		    sizeof (host_history_pools[0]), "%s", spa_name(spa));
	/* A command that did its work does not fail for want of a record. */
	if ((error = spa_history_log_as(spa, host_history_line, history_uid())) != 0)
		host_warn("note: the command was not recorded in the history "
		    "of '%s': %s\n", spa_name(spa), tarn_strerror(error));
}

void
host_history_event(spa_t *spa, const char *what)
{
	struct utsname u;

	if (uname(&u) != 0)
		memset(&u, 0, sizeof (u));
	/* zpool's words: "create pool version 5000; software version ...; uts ..." */
	(void) spa_history_log_internal(spa, 0, "%s pool version %" PRIu64 "; software "
	    "version tarn-%s; uts %s %s %s %s", what, spa_version(spa), TARN_VERSION,
	    u.nodename, u.release, u.version, u.machine);
}

const char *
host_history_get(void)
{
	return (host_history_line);
}
