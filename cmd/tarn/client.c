/*
 * client.c — `tarn` as the daemon's client: send the command line, the
 * working directory (and for an operation its stdin and stdout, which
 * zfs send and receive use directly) and a few environment values to tarnd, copy the
 * frames it sends back to stdout and stderr, exit with the command's
 * status.  Starts tarnd when none answers (root only), and implements
 * `tarn daemon start|stop|status`.  Protocol: host/host_wire.h.
 */
#include "tarn.h"
#include "host_wire.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#ifndef TARN_SBINDIR
#define TARN_SBINDIR "/usr/local/sbin"
#endif

#define CLIENT_START_WAIT_MS   30000   /* tarnd's own start-up handshake */
#define CLIENT_CONNECT_WAIT_MS 5000    /* then the socket must answer */

extern char **environ;

static uint64_t
now_ms(void)
{
	struct timespec ts;

	VERIFY0(clock_gettime(CLOCK_MONOTONIC, &ts));
	return ((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}

/* Connect to the daemon: 0 and *fdp, or an errno (ENOENT, ECONNREFUSED: none). */
static int
client_connect(const char *sock, int *fdp)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, error;

	if (strlen(sock) >= sizeof (sun.sun_path))
		return (SET_ERROR(ENAMETOOLONG));
	(void) strcpy(sun.sun_path, sock);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return (errno);
	if (connect(fd, (struct sockaddr *)&sun, sizeof (sun)) != 0) {
		error = errno;
		(void) close(fd);
		return (error);
	}
	*fdp = fd;
	return (0);
}

static bool
client_none_running(int error)
{
	return (error == ENOENT || error == ECONNREFUSED || error == ENOTDIR);
}

/* The tarnd binary: next to this tarn, else the install's sbin. */
static int
client_tarnd_path(char *buf, size_t len)
{
	char self[PATH_MAX - 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof (self) - 1);

	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash != NULL) {
			*slash = '\0';
			(void) snprintf(buf, len, "%s/tarnd", self);
			if (access(buf, X_OK) == 0)
				return (0);
		}
	}
	(void) snprintf(buf, len, "%s/tarnd", TARN_SBINDIR);
	return (access(buf, X_OK) == 0 ? 0 : SET_ERROR(ENOENT));
}

/*
 * Run tarnd (it daemonizes itself and exits once its socket listens),
 * keeping what it says on stderr in msg: shown only if no daemon answers
 * in the end (a second tarnd racing us says "already running").
 */
static void
client_spawn(const char *sock, char *msg, size_t msglen)
{
	char path[PATH_MAX];
	int pfd[2], status;
	size_t got = 0;
	pid_t pid;

	msg[0] = '\0';
	if (client_tarnd_path(path, sizeof (path)) != 0) {
		(void) snprintf(msg, msglen, "no tarnd next to tarn or in %s", TARN_SBINDIR);
		return;
	}
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		(void) snprintf(msg, msglen, "pipe: %s", strerror(errno));
		return;
	}
	if ((pid = fork()) < 0) {
		(void) snprintf(msg, msglen, "fork: %s", strerror(errno));
		(void) close(pfd[0]);
		(void) close(pfd[1]);
		return;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);
		if (nul >= 0) {
			(void) dup2(nul, 0);
			(void) dup2(nul, 1);
		}
		(void) dup2(pfd[1], 2);
		char *args[] = { path, (char *)"-s", (char *)sock, NULL };
		execve(path, args, environ);
		fprintf(stderr, "cannot run %s: %s", path, strerror(errno));
		_exit(127);
	}
	(void) close(pfd[1]);
	uint64_t deadline = now_ms() + CLIENT_START_WAIT_MS;
	for (;;) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		uint64_t now = now_ms();
		if (now >= deadline || poll(&p, 1, (int)(deadline - now)) == 0)
			break;
		char buf[512];
		ssize_t n = read(pfd[0], buf, sizeof (buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n && got + 1 < msglen; i++)
			msg[got++] = buf[i] == '\n' ? ' ' : buf[i];
		msg[got] = '\0';
	}
	(void) close(pfd[0]);
	(void) waitpid(pid, &status, 0);
	while (got > 0 && msg[got - 1] == ' ')
		msg[--got] = '\0';
}

/* Connect, starting the daemon first when none answers. */
static int
client_connect_or_start(const char *sock, int *fdp)
{
	char msg[1024] = "";
	int error = client_connect(sock, fdp);

	if (error == 0)
		return (0);
	if (error == EACCES || error == EPERM) {
		fprintf(stderr, "%s\n", HOST_NOT_ROOT_MSG);
		return (error);
	}
	if (!client_none_running(error)) {
		fprintf(stderr, "tarn: cannot reach the daemon at %s: %s\n", sock,
		    strerror(error));
		return (error);
	}
	if (geteuid() != 0 && getenv("TARN_SOCKET") == NULL) {
		fprintf(stderr, "%s\n", HOST_NOT_ROOT_MSG);
		return (SET_ERROR(EPERM));
	}
	client_spawn(sock, msg, sizeof (msg));
	uint64_t deadline = now_ms() + CLIENT_CONNECT_WAIT_MS;
	while ((error = client_connect(sock, fdp)) != 0 && client_none_running(error) &&
	    now_ms() < deadline)
		(void) usleep(20000);
	if (error != 0) {
		fprintf(stderr, "tarn: cannot start the daemon (%s); set "
		    "TARN_NO_DAEMON=1 to run commands without it\n",
		    msg[0] != '\0' ? msg : strerror(error));
	}
	return (error);
}

/* Strings as the request carries them: u32 count, then u32 length + bytes each. */
static size_t
req_strings_size(int n, const char *const *v)
{
	size_t len = sizeof (uint32_t);

	for (int i = 0; i < n; i++)
		len += sizeof (uint32_t) + strlen(v[i]);
	return (len);
}

static char *
req_put_strings(char *p, int n, const char *const *v)
{
	uint32_t u = (uint32_t)n;

	memcpy(p, &u, sizeof (u));
	p += sizeof (u);
	for (int i = 0; i < n; i++) {
		u = (uint32_t)strlen(v[i]);
		memcpy(p, &u, sizeof (u));
		memcpy(p + sizeof (u), v[i], u);
		p += sizeof (u) + u;
	}
	return (p);
}

/*
 * The descriptors that go with the request: the cwd, and for an
 * operation stdin and stdout (those that are open); fds[] gets them,
 * kinds[] their letters for FDS ('c', '0', '1').  Returns how many; the
 * cwd (fds[0] when kinds[0] is 'c') is the caller's to close.
 */
static int
client_fds(bool op, int fds[3], char kinds[4])
{
	int n = 0, cwdfd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (cwdfd >= 0) {
		fds[n] = cwdfd;
		kinds[n++] = 'c';
	}
	for (int i = 0; op && i < 2; i++) {
		if (fcntl(i, F_GETFD) < 0)
			continue;
		fds[n] = i;
		kinds[n++] = (char)('0' + i);
	}
	kinds[n] = '\0';
	return (n);
}

/* Send the magic with the descriptors; 0 or an errno. */
static int
client_send_magic(int fd, uint32_t magic, const int *fds, int nfds)
{
	struct iovec iov = { .iov_base = &magic, .iov_len = sizeof (magic) };
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof (int) * 3)]; } cm;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (nfds > 0) {
		memset(&cm, 0, sizeof (cm));
		mh.msg_control = cm.b;
		mh.msg_controllen = CMSG_SPACE(sizeof (int) * (size_t)nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof (int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof (int) * (size_t)nfds);
	}
	while ((n = sendmsg(fd, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return (n == (ssize_t)sizeof (magic) ? 0 : (n < 0 ? errno : EPIPE));
}

/* Send the request: the magic with the descriptors, then the rest. */
static int
client_send(int fd, uint32_t magic, int argc, char **argv, const char *history)
{
	char cwd[PATH_MAX], env[PATH_MAX + 32], kinds[4];
	const char *envs[HOST_PROTO_MAXENV];
	int nenv = 0, error, fds[3];
	int nfds = client_fds(magic == HOST_PROTO_MAGIC_OP, fds, kinds);
	mode_t mask = umask(022);

	(void) umask(mask);
	if (getcwd(cwd, sizeof (cwd)) != NULL) {
		(void) snprintf(env, sizeof (env), "PWD=%s", cwd);
		envs[nenv++] = tarn_strdup(env);
	}
	(void) snprintf(env, sizeof (env), "UMASK=%04o", (unsigned)mask);
	envs[nenv++] = tarn_strdup(env);
	if (getenv("TARN_CACHEFILE") != NULL) {
		(void) snprintf(env, sizeof (env), "TARN_CACHEFILE=%s", getenv("TARN_CACHEFILE"));
		envs[nenv++] = tarn_strdup(env);
	}
	if (history != NULL && history[0] != '\0') {
		(void) snprintf(env, sizeof (env), "HISTORY=%s", history);
		envs[nenv++] = tarn_strdup(env);
	}
	(void) snprintf(env, sizeof (env), "FDS=%s", kinds);
	envs[nenv++] = tarn_strdup(env);
	size_t len = req_strings_size(argc, (const char *const *)argv) +
	    req_strings_size(nenv, envs);
	char *buf = tarn_alloc(len);
	req_put_strings(req_put_strings(buf, argc, (const char *const *)argv), nenv, envs);
	for (int i = 0; i < nenv; i++)
		tarn_free((void *)envs[i]);

	error = client_send_magic(fd, magic, fds, nfds);
	if (nfds > 0 && kinds[0] == 'c')
		(void) close(fds[0]);
	if (error == 0)
		error = host_write_full(fd, buf, len);
	tarn_free(buf);
	return (error);
}

/* The connection broke before the exit frame: the daemon died. */
static int
client_lost(void)
{
	char rundir[PATH_MAX];

	host_rundir(host_socket_path(), rundir, sizeof (rundir));
	fprintf(stderr, "tarn: lost the connection to the daemon before the command "
	    "ended (did it crash? see %s/tarnd.log)\n", rundir);
	return (CLI_EXIT_LOST);
}

/*
 * Copy the daemon's frames to stdout/stderr until the exit frame.
 * Returns the command's exit status (CLI_EXIT_LOST when the connection
 * broke: as for a crash in-process, a status no command gives).
 */
static int
client_receive(int fd, char **resultp, cli_part_fn_t partfn, void *partarg)
{
	char *buf = NULL;
	size_t cap = 0;
	int status = CLI_EXIT_LOST;

	for (;;) {
		uint32_t hdr[2];
		if (host_read_full(fd, hdr, sizeof (hdr)) != 0) {
			status = client_lost();
			break;
		}
		if (hdr[1] > (hdr[0] == HOST_FRAME_RESULT || hdr[0] == HOST_FRAME_PART ?
		    HOST_PROTO_MAXRESULT :
		    HOST_PROTO_MAXSTR)) {
			fprintf(stderr, "tarn: bad frame from the daemon\n");
			status = CLI_EXIT_LOST;
			break;
		}
		if (hdr[1] > cap) {
			cap = hdr[1];
			buf = tarn_realloc(buf, cap);
		}
		if (hdr[1] > 0 && host_read_full(fd, buf, hdr[1]) != 0) {
			status = client_lost();
			break;
		}
		if (hdr[0] == HOST_FRAME_EXIT && hdr[1] == sizeof (int32_t)) {
			int32_t st;
			memcpy(&st, buf, sizeof (st));
			status = st;
			break;
		}
		if (hdr[0] == HOST_FRAME_PART && partfn != NULL) {
			char *text = tarn_alloc((size_t)hdr[1] + 1);
			memcpy(text, buf, hdr[1]);
			text[hdr[1]] = '\0';
			partfn(partarg, text);
			tarn_free(text);
		} else if (hdr[0] == HOST_FRAME_RESULT && resultp != NULL && *resultp == NULL) {
			*resultp = tarn_alloc((size_t)hdr[1] + 1);
			memcpy(*resultp, buf, hdr[1]);
			(*resultp)[hdr[1]] = '\0';
		} else if (hdr[0] == HOST_FRAME_OUT)
			(void) host_write_full(STDOUT_FILENO, buf, hdr[1]);
		else if (hdr[0] == HOST_FRAME_ERR)
			(void) host_write_full(STDERR_FILENO, buf, hdr[1]);
	}
	tarn_free(buf);
	return (status);
}

int
cli_client_call(const char *op, const char *args, const char *history, char **resultp,
    cli_part_fn_t partfn, void *partarg)
{
	const char *sock = host_socket_path();
	char *strs[] = { (char *)op, (char *)args };
	int fd, error, status;

	*resultp = NULL;
	if (client_connect_or_start(sock, &fd) != 0)
		return (CLI_EXIT_ERROR);
	if ((error = client_send(fd, HOST_PROTO_MAGIC_OP, 2, strs, history)) != 0) {
		fprintf(stderr, "tarn: cannot send the command to the daemon: %s\n",
		    strerror(error));
		(void) close(fd);
		return (CLI_EXIT_ERROR);
	}
	status = client_receive(fd, resultp, partfn, partarg);
	(void) close(fd);
	if (status == CLI_EXIT_OK && *resultp == NULL) {
		/* a refusal said why on stderr; silence needs saying */
		fprintf(stderr, "tarn: the daemon did not answer the operation '%s'\n", op);
		status = CLI_EXIT_ERROR;
	}
	return (status);
}

static void
daemon_usage(FILE *f)
{
	fprintf(f, "usage: tarn daemon start|stop|status|get|set\n"
	    "\tstart    start tarnd unless it runs (pool commands start it too)\n"
	    "\tstop     stop it cleanly: sync and close every pool\n"
	    "\tstatus   is it running, and which pools it holds\n"
	    "\tget [-Hp] [all | NAME...]   the daemon's tunables (arc_max, arc_min)\n"
	    "\tset NAME=VALUE...           change them in the running daemon\n"
	    "The config file is $TARN_CONFIG, else /etc/tarn/tarnd.conf.\n"
	    "The socket is $TARN_SOCKET, else %s.\n", HOST_SOCKET_DEFAULT);
}

/* `tarn daemon start|stop|status` (also `tarn --stop-daemon`). */
int
cli_client_daemon(int argc, char **argv)
{
	const char *sock = host_socket_path();
	const char *what = argc > 1 ? argv[1] : NULL;
	int fd, error;

	if (what != NULL && (strcmp(what, "get") == 0 || strcmp(what, "set") == 0))
		return (cli_daemon_tunables(argc - 1, argv + 1));
	if (what == NULL || argc > 2) {
		fprintf(stderr, what == NULL ? "missing daemon command\n" :
		    "too many arguments\n");
		daemon_usage(stderr);
		return (CLI_EXIT_USAGE);
	}
	if (strcmp(what, "help") == 0 || strcmp(what, "-h") == 0 ||
	    strcmp(what, "--help") == 0 || strcmp(what, "-?") == 0) {
		daemon_usage(stdout);
		return (CLI_EXIT_OK);
	}
	if (strcmp(what, "start") == 0) {
		if (client_connect_or_start(sock, &fd) != 0)
			return (CLI_EXIT_ERROR);
		(void) close(fd);
		return (CLI_EXIT_OK);
	}
	if (strcmp(what, "stop") != 0 && strcmp(what, "status") != 0) {
		fprintf(stderr, "unrecognized daemon command '%s'\n", what);
		daemon_usage(stderr);
		return (CLI_EXIT_USAGE);
	}
	error = client_connect(sock, &fd);
	if (error == EACCES || error == EPERM) {
		fprintf(stderr, "%s\n", HOST_NOT_ROOT_MSG);
		return (CLI_EXIT_ERROR);
	}
	if (error != 0 && client_none_running(error)) {
		if (strcmp(what, "stop") == 0)
			return (CLI_EXIT_OK);     /* stopped already */
		printf("tarnd is not running (socket %s)\n", sock);
		return (CLI_EXIT_ERROR);
	}
	if (error != 0) {
		fprintf(stderr, "tarn: cannot reach the daemon at %s: %s\n", sock,
		    strerror(error));
		return (CLI_EXIT_ERROR);
	}
	char *args[] = { (char *)"tarn", (char *)"daemon", (char *)what, NULL };
	if ((error = client_send(fd, HOST_PROTO_MAGIC, 3, args, NULL)) != 0) {
		fprintf(stderr, "tarn: cannot send the command to the daemon: %s\n",
		    strerror(error));
		(void) close(fd);
		return (CLI_EXIT_ERROR);
	}
	int status = client_receive(fd, NULL, NULL, NULL);
	if (strcmp(what, "stop") == 0 && status == CLI_EXIT_OK) {
		/* the daemon's end of the socket closes when its process is gone */
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char c;
		uint64_t deadline = now_ms() + 30000;
		while (now_ms() < deadline &&
		    poll(&p, 1, (int)(deadline - now_ms())) > 0 && read(fd, &c, 1) > 0)
			;
	}
	(void) close(fd);
	return (status);
}
