/*
 * tarnd.c — the Tarn daemon: holds the imported pools open and runs
 * `tarn` commands for its clients on a UNIX socket only root may use.
 *
 * Theory (docs/DESIGN.md, "The daemon").  One daemon per socket: the
 * PID file next to it carries an flock for as long as the daemon lives,
 * so a second tarnd sees the first (and a stale socket or PID file left
 * by a crash is simply replaced).  At start the daemon opens every pool
 * of the cache file (host/host_pool.c); a pool that does not open is logged
 * and shows as UNAVAIL.  The main thread accepts connections and hands
 * each to a thread of its own (serve.c); signals arrive through a
 * signalfd, so they are plain events of the main loop.  SIGTERM/SIGINT
 * (or `tarn daemon stop`): stop accepting, remove the socket, let running
 * commands end, sync and close every pool (spa_close: the labels stay
 * ACTIVE and the cache file keeps the pools, so the next start opens
 * them again), remove the PID file, exit 0.  A crash loses nothing that
 * was synced; the next start imports the pools as after a power cut.
 * The daemon also ends cleanly when its socket file is removed or
 * replaced: nobody could reach it any more.
 *
 * Output: the daemon prints nothing for a client but its own status; an
 * operation's failures travel in its result (host_report).  Notes
 * (host_warn) and the libraries' own warnings go to stderr, which the
 * daemon replaces with a stream that sends them to the client of the
 * thread that wrote them (host_err_tls), or to the log for the daemon's
 * own threads.
 */
#include "tarnd.h"
#include "tarn_fuse.h"

#include <fcntl.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

#define TARND_IDLE_WAIT_MS  30000   /* for running commands at shutdown */
#define TARND_POOL_WAIT_MS  5000    /* then for pools still held */
#define TARND_LOCK_WAIT_MS  15000   /* for a previous daemon that is stopping */

tarnd_info_t tarnd_info;

static int tarnd_logfd = STDERR_FILENO;
static pthread_mutex_t tarnd_log_lock = PTHREAD_MUTEX_INITIALIZER;
static int tarnd_stop_pipe[2] = { -1, -1 };
static int tarnd_ready_fd = -1;        /* to the parent while daemonizing */

/*
 * Append to the log under its lock, with cancellation off: libfuse
 * cancels its worker threads when a session ends, and a worker can be in
 * here then (libfuse logs a failed /dev/fuse read, e.g. after a forced
 * unmount aborted the connection); cancelled inside write(2) it would
 * leave the lock held, and every later log line (export's among them)
 * would wait for ever.
 */
static void
tarnd_log_write(const char *buf, size_t len)
{
	int old;
	(void) pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	pthread_mutex_lock(&tarnd_log_lock);
	(void) host_write_full(tarnd_logfd, buf, len);
	pthread_mutex_unlock(&tarnd_log_lock);
	(void) pthread_setcancelstate(old, NULL);
}

void
tarnd_log(const char *fmt, ...)
{
	char line[2048], when[32];
	struct tm tm;
	time_t now = time(NULL);
	va_list ap;
	int n;

	(void) localtime_r(&now, &tm);
	(void) strftime(when, sizeof (when), "%Y-%m-%d %H:%M:%S", &tm);
	n = snprintf(line, sizeof (line), "%s tarnd[%d]: ", when, (int)getpid());
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof (line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	n = MIN(n, (int)sizeof (line) - 2);
	line[n++] = '\n';
	tarnd_log_write(line, (size_t)n);
}

/* Before the daemon is ready: say why it cannot start, and exit 1. */
static void __attribute__((noreturn, format(printf, 1, 2)))
tarnd_fatal(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	(void) vsnprintf(msg, sizeof (msg), fmt, ap);
	va_end(ap);
	if (tarnd_ready_fd >= 0)
		(void) dprintf(tarnd_ready_fd, "tarnd: %s\n", msg);
	else
		fprintf(stderr, "tarnd: %s\n", msg);
	exit(1);
}

void
tarnd_request_stop(void)
{
	char c = 's';

	(void) write(tarnd_stop_pipe[1], &c, 1);
}

/* ---- the process-wide stderr: to the thread's client, or the log ---- */

static ssize_t
stderr_write(void *cookie, const char *buf, size_t size)
{
	FILE *client = host_err_tls;

	if (client != NULL) {
		int old;
		(void) pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
		(void) fwrite(buf, 1, size, client);
		(void) fflush(client);
		(void) pthread_setcancelstate(old, NULL);
		if (memmem(buf, size, "panic", 5) == NULL)
			return ((ssize_t)size);
	}
	tarnd_log_write(buf, size);
	return ((ssize_t)size);
}

static void
stderr_redirect(void)
{
	static const cookie_io_functions_t f = { .write = stderr_write };
	FILE *s = fopencookie(NULL, "w", f);

	VERIFY(s != NULL);
	(void) setvbuf(s, NULL, _IONBF, 0);
	stderr = s;       /* glibc: stderr is an ordinary variable */
}

/* ---- paths, PID file, socket ---- */

static void
usage(FILE *f)
{
	fprintf(f, "usage: tarnd [-f] [-s socket]\n"
	    "\t-f         stay in the foreground, log to standard error\n"
	    "\t-s socket  the control socket (default $TARN_SOCKET, else %s)\n"
	    "The PID file (tarnd.pid) and, without -f, the log (tarnd.log) go to\n"
	    "$TARN_RUNDIR, else the socket's directory.  The pools are those of the\n"
	    "cache file ($TARN_CACHEFILE, else /etc/tarn/tarn.cache).  SIGTERM stops\n"
	    "it cleanly; so does 'tarn daemon stop'.\n", HOST_SOCKET_DEFAULT);
}

/* An absolute version of path (relative to the cwd at start). */
static void
absolutize(const char *path, char *buf, size_t len)
{
	char cwd[PATH_MAX];

	int n;

	if (path[0] == '/' || getcwd(cwd, sizeof (cwd)) == NULL)
		n = snprintf(buf, len, "%s", path);
	else
		n = snprintf(buf, len, "%s/%s", cwd, path);
	if (n < 0 || (size_t)n >= len)
		tarnd_fatal("path too long: %s", path);
}

static int
mkdir_p(const char *dir)
{
	char p[PATH_MAX];

	(void) snprintf(p, sizeof (p), "%s", dir);
	for (char *s = p + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			return (errno);
		*s = '/';
	}
	if (mkdir(p, 0755) != 0 && errno != EEXIST)
		return (errno);
	return (0);
}

/* Does a daemon answer on the socket? */
static bool
sock_answers(const char *sock)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		return (false);
	(void) snprintf(sun.sun_path, sizeof (sun.sun_path), "%s", sock);
	ok = connect(fd, (struct sockaddr *)&sun, sizeof (sun)) == 0;
	(void) close(fd);
	return (ok);
}

/*
 * Take the PID file's lock and write our pid.  A daemon that holds it and
 * answers means "already running"; one that holds it but does not answer
 * is stopping, so wait for it.  The lock must be on the file the path
 * names now (a stopping daemon unlinks it).
 */
static int
pidfile_take(void)
{
	const char *path = tarnd_info.ti_pidfile;
	uint64_t waited = 0;

	for (;;) {
		struct stat a, b;
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

		if (fd < 0)
			tarnd_fatal("cannot open the PID file %s: %s", path, strerror(errno));
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			char old[32] = "";
			ssize_t n = pread(fd, old, sizeof (old) - 1, 0);
			(void) close(fd);
			old[n > 0 ? n : 0] = '\0';
			old[strcspn(old, "\n")] = '\0';
			if (sock_answers(tarnd_info.ti_sock) || waited >= TARND_LOCK_WAIT_MS)
				tarnd_fatal("already running (pid %s, socket %s)",
				    old[0] != '\0' ? old : "?", tarnd_info.ti_sock);
			(void) usleep(100000);
			waited += 100;
			continue;
		}
		if (fstat(fd, &a) != 0 || stat(path, &b) != 0 ||
		    a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
			(void) close(fd);
			continue;
		}
		char line[32];
		int n = snprintf(line, sizeof (line), "%d\n", (int)getpid());
		if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)n, 0) != n)
			tarnd_fatal("cannot write the PID file %s: %s", path, strerror(errno));
		return (fd);    /* kept open (and locked) for the daemon's life */
	}
}

static int
sock_listen(struct stat *st)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	const char *path = tarnd_info.ti_sock;
	struct stat old;
	int fd;

	if (strlen(path) >= sizeof (sun.sun_path))
		tarnd_fatal("socket path too long (at most %zu bytes): %s",
		    sizeof (sun.sun_path) - 1, path);
	(void) strcpy(sun.sun_path, path);
	/* we hold the PID lock: a socket there is a dead daemon's */
	if (lstat(path, &old) == 0) {
		if (!S_ISSOCK(old.st_mode))
			tarnd_fatal("%s exists and is not a socket; not replacing it", path);
		(void) unlink(path);
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		tarnd_fatal("socket: %s", strerror(errno));
	mode_t mask = umask(0177);
	int e = bind(fd, (struct sockaddr *)&sun, sizeof (sun));
	(void) umask(mask);
	if (e != 0)
		tarnd_fatal("cannot bind %s: %s", path, strerror(errno));
	if (chmod(path, 0600) != 0 || listen(fd, 128) != 0 || stat(path, st) != 0)
		tarnd_fatal("cannot listen on %s: %s", path, strerror(errno));
	return (fd);
}

/* Is the socket file still ours? */
static bool
sock_still_ours(const struct stat *st)
{
	struct stat now;

	return (stat(tarnd_info.ti_sock, &now) == 0 && now.st_ino == st->st_ino &&
	    now.st_dev == st->st_dev);
}

/* ---- start-up ---- */

static void
parse_args(int argc, char **argv, bool *foreground)
{
	const char *sock = NULL;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-f") == 0) {
			*foreground = true;
		} else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc) {
			sock = argv[++i];
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			exit(0);
		} else if (strcmp(argv[i], "-V") == 0 || strcmp(argv[i], "--version") == 0) {
			printf("tarnd %s\n", TARN_VERSION);
			exit(0);
		} else {
			fprintf(stderr, "tarnd: %s '%s'\n", strcmp(argv[i], "-s") == 0 ?
			    "missing argument for" : "unknown argument", argv[i]);
			usage(stderr);
			exit(2);
		}
	}
	if (sock == NULL || sock[0] == '\0')
		sock = host_socket_path();
	absolutize(sock, tarnd_info.ti_sock, sizeof (tarnd_info.ti_sock));
	char rundir[PATH_MAX];
	host_rundir(tarnd_info.ti_sock, rundir, sizeof (rundir));
	absolutize(rundir, tarnd_info.ti_rundir, sizeof (tarnd_info.ti_rundir));
	if (snprintf(tarnd_info.ti_pidfile, sizeof (tarnd_info.ti_pidfile),
	    "%s/tarnd.pid", tarnd_info.ti_rundir) >= (int)sizeof (tarnd_info.ti_pidfile))
		tarnd_fatal("path too long: %s", tarnd_info.ti_rundir);
	/* the cache file must not depend on the cwd we leave */
	const char *cf = getenv("TARN_CACHEFILE");
	if (cf != NULL && cf[0] != '\0' && cf[0] != '/' && strcmp(cf, "none") != 0) {
		char abs[PATH_MAX];
		absolutize(cf, abs, sizeof (abs));
		(void) setenv("TARN_CACHEFILE", abs, 1);
	}
}

/*
 * Fork into the background: the parent waits until the child says it is
 * ready (or why it is not) and exits with that, so whoever started tarnd
 * can connect as soon as it returns.
 */
static void
daemonize(void)
{
	int pfd[2];
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) != 0)
		tarnd_fatal("pipe: %s", strerror(errno));
	if ((pid = fork()) < 0)
		tarnd_fatal("fork: %s", strerror(errno));
	if (pid > 0) {
		char buf[1024];
		size_t got = 0;
		ssize_t n;
		(void) close(pfd[1]);
		while (got < sizeof (buf) - 1 &&
		    ((n = read(pfd[0], buf + got, sizeof (buf) - 1 - got)) > 0 ||
		    (n < 0 && errno == EINTR)))
			got += n > 0 ? (size_t)n : 0;
		buf[got] = '\0';
		if (strncmp(buf, "ready", 5) == 0)
			_exit(0);
		fputs(got > 0 ? buf : "tarnd: the daemon died while starting\n", stderr);
		_exit(1);
	}
	(void) close(pfd[0]);
	tarnd_ready_fd = pfd[1];
	if (setsid() < 0)
		tarnd_fatal("setsid: %s", strerror(errno));
}

/* Daemonized: stdin from /dev/null, stdout and stderr to the log file. */
static void
redirect_stdio(void)
{
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	int log = open(tarnd_info.ti_logfile, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);

	if (nul < 0 || log < 0)
		tarnd_fatal("cannot open the log %s: %s", tarnd_info.ti_logfile,
		    strerror(errno));
	(void) dup2(nul, STDIN_FILENO);
	(void) dup2(log, STDOUT_FILENO);
	(void) dup2(log, STDERR_FILENO);
	(void) close(nul);
	(void) close(log);
}

static int
signals_setup(void)
{
	sigset_t set;
	int fd;

	(void) signal(SIGPIPE, SIG_IGN);
	(void) sigemptyset(&set);
	(void) sigaddset(&set, SIGTERM);
	(void) sigaddset(&set, SIGINT);
	(void) sigaddset(&set, SIGHUP);
	/* blocked before any thread exists, so only the signalfd sees them */
	VERIFY0(pthread_sigmask(SIG_BLOCK, &set, NULL));
	if ((fd = signalfd(-1, &set, SFD_CLOEXEC)) < 0)
		tarnd_fatal("signalfd: %s", strerror(errno));
	return (fd);
}

/* ---- the main loop and the end ---- */

static void
serve_loop(int lfd, int sfd, const struct stat *sockst)
{
	for (;;) {
		struct pollfd p[3] = {
			{ .fd = lfd, .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
			{ .fd = tarnd_stop_pipe[0], .events = POLLIN },
		};
		int n = poll(p, 3, 2000);

		if (n < 0 && errno != EINTR)
			tarnd_log("poll: %s", strerror(errno));
		if (n <= 0) {
			if (!sock_still_ours(sockst)) {
				tarnd_log("the socket %s was removed or replaced; stopping",
				    tarnd_info.ti_sock);
				return;
			}
			continue;
		}
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof (si)) == (ssize_t)sizeof (si)) {
				if (si.ssi_signo == SIGHUP) {
					tarnd_log("SIGHUP ignored");
				} else {
					tarnd_log("%s: stopping", strsignal((int)si.ssi_signo));
					return;
				}
			}
		}
		if (p[2].revents & POLLIN)
			return;
		if (p[0].revents & POLLIN) {
			int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			if (fd >= 0)
				tarnd_serve(fd);
			else if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
				tarnd_log("accept: %s", strerror(errno));
		}
	}
}

static void
shutdown_daemon(int lfd, const struct stat *sockst, int pidfd)
{
	host_stopping = true;      /* long-running commands end (host_cancelled) */
	(void) close(lfd);
	if (sock_still_ours(sockst))
		(void) unlink(tarnd_info.ti_sock);
	if (!tarnd_wait_idle(TARND_IDLE_WAIT_MS))
		tarnd_log("%d command(s) still running after %ds; closing the idle "
		    "pools anyway", tarnd_active(), TARND_IDLE_WAIT_MS / 1000);
	int left = host_stop(TARND_POOL_WAIT_MS);
	if (left > 0)
		tarnd_log("%d pool(s) left open by running commands", left);
	struct stat a, b;
	if (fstat(pidfd, &a) == 0 && stat(tarnd_info.ti_pidfile, &b) == 0 &&
	    a.st_ino == b.st_ino && a.st_dev == b.st_dev)
		(void) unlink(tarnd_info.ti_pidfile);
	tarnd_log("stopped");
	(void) close(pidfd);
	tarnd_stop_waiters_answer();
}

int
main(int argc, char **argv)
{
	bool foreground = false;
	struct stat sockst;
	int error;

	if (argc == 1 && strcmp(argv[0], TARN_FUSE_GUARD_NAME) == 0)
		tarn_fuse_guard_main();         /* see tarn_fuse_guard_start */
	(void) setlocale(LC_ALL, "C");
	parse_args(argc, argv, &foreground);
	if (!foreground)
		daemonize();
	if (chdir("/") != 0)
		tarnd_fatal("chdir /: %s", strerror(errno));
	if ((error = mkdir_p(tarnd_info.ti_rundir)) != 0)
		tarnd_fatal("cannot create %s: %s", tarnd_info.ti_rundir, strerror(error));
	if (!foreground)
		if (snprintf(tarnd_info.ti_logfile, sizeof (tarnd_info.ti_logfile),
		    "%s/tarnd.log", tarnd_info.ti_rundir) >= (int)sizeof (tarnd_info.ti_logfile))
			tarnd_fatal("path too long: %s", tarnd_info.ti_rundir);
	/* before any thread: mounts of a killed daemon are cut at once (ENOTCONN) */
	(void) tarn_fuse_guard_start();
	int sfd = signals_setup();
	if (pipe2(tarnd_stop_pipe, O_CLOEXEC) != 0)
		tarnd_fatal("pipe: %s", strerror(errno));
	int pidfd = pidfile_take();
	int lfd = sock_listen(&sockst);
	tarnd_info.ti_pid = getpid();
	tarnd_info.ti_start = tarn_wall_sec();
	tarnd_info.ti_unshare = getenv("TARND_NO_UNSHARE") == NULL;
	if (!foreground)
		redirect_stdio();
	if ((tarnd_logfd = dup(STDERR_FILENO)) < 0)
		tarnd_logfd = STDERR_FILENO;
	stderr_redirect();
	tarnd_log("started: socket %s, cache file %s", tarnd_info.ti_sock,
	    spa_cachefile_path());
	if (tarnd_ready_fd >= 0) {
		(void) host_write_full(tarnd_ready_fd, "ready", 5);
		(void) close(tarnd_ready_fd);
		tarnd_ready_fd = -1;
	}
	/* connections wait in the backlog while the pools open */
	host_start(tarnd_log);
	serve_loop(lfd, sfd, &sockst);
	shutdown_daemon(lfd, &sockst, pidfd);
	return (0);
}
