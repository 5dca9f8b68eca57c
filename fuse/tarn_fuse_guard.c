/*
 * tarn_fuse_guard.c — cut our FUSE connections at once when the serving
 * process dies, SIGKILL included.
 *
 * Why.  A killed server's connections are not aborted when its threads
 * are gone: the kernel aborts a connection when the last /dev/fuse file
 * of it is released, and with FUSE over io_uring the ring's pending
 * commands hold those files until io_uring's exit work, run later from a
 * kernel worker, has cancelled them.  Until then the connection looks
 * alive: a request made meanwhile (a program's next read, write or fstat
 * of a file it holds open) is queued, or handed to a ring entry whose
 * thread is dead, and the kernel ends it with ECONNABORTED, or with
 * ECANCELED (the io_uring cancel path), where FUSE file systems give
 * ENOTCONN once the connection is gone, and programs test for that.
 * (Measured: with io_uring on, 0.1-0.2 s after the daemon's last thread
 * was gone an fstat still got ECONNABORTED; over /dev/fuse alone no
 * ECANCELED at all.)
 *
 * How.  tarn_fuse_guard_start forks, before the process has threads, a
 * small watcher that holds only the read end of a pipe (on descriptor 3;
 * it executes the server's binary again as "tarn-fuse-guard", whose main
 * calls tarn_fuse_guard_main).  Each mount
 * writes "+N" to it (N: the connection's number under
 * /sys/fs/fuse/connections), its end "-N".  When the server dies its
 * end of the pipe closes; the watcher reads end-of-file and writes to
 * the abort file of every connection still listed: from then on every
 * request fails with ENOTCONN.  A clean stop unmounts everything first,
 * so the watcher then aborts nothing.  A request already in flight at
 * the kill is the kernel's to end (ECONNABORTED, as over /dev/fuse).
 */
#include "tarn_fuse_impl.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static int tf_guard_fd = -1;    /* the write end; -1: no watcher */

/* The watcher: read the notes until end-of-file, then abort what is left. */
static void __attribute__((noreturn))
tf_guard_run(int rfd)
{
	tarn_array_t conn = TARN_ARRAY_INIT(unsigned);     /* connections listed */
	size_t ll = 0;
	char buf[512], line[32];

	for (;;) {
		ssize_t r = read(rfd, buf, sizeof (buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		for (ssize_t i = 0; i < r; i++) {
			if (buf[i] != '\n') {
				if (ll < sizeof (line) - 1)
					line[ll++] = buf[i];
				continue;
			}
			line[ll] = '\0';
			ll = 0;
			unsigned c = (unsigned)strtoul(line + 1, NULL, 10);
			if (line[0] == '+') {
				void *e;
				if (tarn_array_try_push(&conn, &e) != 0)
					_exit(1);
				*(unsigned *)e = c;
			} else if (line[0] == '-') {
				for (size_t k = 0; k < tarn_array_len(&conn); k++) {
					if (TARN_ARRAY_AT(&conn, unsigned, k) == c) {
						tarn_array_remove_swap(&conn, k);
						break;
					}
				}
			}
		}
	}
	for (size_t k = 0; k < tarn_array_len(&conn); k++) {
		char path[96];
		snprintf(path, sizeof (path), "/sys/fs/fuse/connections/%u/abort",
		    TARN_ARRAY_AT(&conn, unsigned, k));
		int fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && geteuid() == 0 &&
		    mount("fusectl", "/sys/fs/fuse/connections", "fusectl", 0, NULL) == 0)
			fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			(void) !write(fd, "1", 1);
			(void) close(fd);
		}
	}
	_exit(0);
}

void
tarn_fuse_guard_main(void)
{
	(void) prctl(PR_SET_NAME, TARN_FUSE_GUARD_NAME);
	tf_guard_run(3);
}

int
tarn_fuse_guard_start(void)
{
	int p[2];
	if (tf_guard_fd >= 0)
		return (0);
	if (pipe2(p, O_CLOEXEC) != 0)
		return (SET_ERROR(errno));
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		(void) close(p[0]);
		(void) close(p[1]);
		return (SET_ERROR(e));
	}
	if (pid == 0) {
		/* nothing of the server's but the pipe: no terminal, socket or lock */
		int nul = open("/dev/null", O_RDWR);
		if (nul >= 0) {
			(void) dup2(nul, 0);
			(void) dup2(nul, 1);
			(void) dup2(nul, 2);
		}
		/* (dup2 keeps close-on-exec when p[0] is 3 already) */
		if ((p[0] != 3 && dup2(p[0], 3) != 3) || fcntl(3, F_SETFD, 0) != 0)
			_exit(1);
		(void) close_range(4, ~0U, 0);
		(void) setsid();
		/*
		 * A program of its own name, so that nobody takes it for the
		 * server (ps, a count of daemons by command line): the server's
		 * main runs tarn_fuse_guard_main for this argv[0]
		 */
		char *argv[] = { TARN_FUSE_GUARD_NAME, NULL };
		(void) execv("/proc/self/exe", argv);
		(void) prctl(PR_SET_NAME, TARN_FUSE_GUARD_NAME);
		tf_guard_run(3);
	}
	(void) close(p[0]);
	/* a watcher that is gone or slow never holds up a mount */
	(void) fcntl(p[1], F_SETFL, O_NONBLOCK);
	tf_guard_fd = p[1];
	return (0);
}

void
tarn_fuse_guard_note(dev_t dev, bool up)
{
	if (tf_guard_fd < 0)
		return;
	char line[32];
	int len = snprintf(line, sizeof (line), "%c%u\n", up ? '+' : '-', minor(dev));
	(void) !write(tf_guard_fd, line, (size_t)len);
}
