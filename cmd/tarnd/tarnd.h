/*
 * tarnd.h — what the files of the daemon share: its paths and settings,
 * the log, and the connection handling (serve.c).
 */
#ifndef TARN_TARND_H
#define TARN_TARND_H

#include "host.h"
#include "host_wire.h"

#include <limits.h>
#include <sys/types.h>
#include <unistd.h>

typedef struct tarnd_info {
	char   ti_sock[PATH_MAX];       /* the control socket */
	char   ti_rundir[PATH_MAX];     /* PID file and (daemonized) log */
	char   ti_pidfile[PATH_MAX];
	char   ti_logfile[PATH_MAX];    /* "" when logging to stderr (-f) */
	pid_t  ti_pid;
	uint64_t ti_start;              /* wall seconds */
	bool   ti_unshare;              /* per-thread cwd through unshare(CLONE_FS) */
} tarnd_info_t;

extern tarnd_info_t tarnd_info;

/* One line to the log, with time and pid. */
void tarnd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* serve.c: serve one accepted connection in a thread of its own. */
void tarnd_serve(int fd);
/* Commands running now. */
int tarnd_active(void);
/* Wait until no command runs or ms passed; true when idle. */
bool tarnd_wait_idle(int ms);
/* Connections of `tarn daemon stop`, answered when the daemon is down. */
void tarnd_stop_waiters_answer(void);

/* tarnd.c: ask the main loop to shut down (from any thread). */
void tarnd_request_stop(void);

#endif /* TARN_TARND_H */
