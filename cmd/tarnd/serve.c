/*
 * serve.c — one client connection of tarnd, in a thread of its own: read
 * the request (host/host_wire.h), refuse anyone but root, take the
 * client's working directory and umask, run the host operation it names
 * (host_exec, its failures gathered into the result) with what the
 * libraries write to stderr going back to the client as frames, then send
 * the result and the exit status.  The only other requests are the
 * daemon's own controls: `tarn daemon status` and `tarn daemon stop`.
 *
 * The client's cwd.  The command line sends absolute paths, but the
 * daemon still works in the client's directory and with its umask (the
 * mode of a mountpoint it makes): threads share the process's cwd and
 * umask, but Linux lets one thread leave that sharing (unshare(CLONE_FS));
 * the thread then fchdir()s to the directory the client passed as a
 * descriptor.  Where unshare is refused (a seccomp filter, or
 * TARND_NO_UNSHARE=1) the daemon's own directory and umask stay.
 *
 * The client's stdin and stdout.  An operation's request also carries
 * them (SCM_RIGHTS beside the cwd; the FDS entry of its environment says
 * which descriptor is which: 'c' cwd, '0' stdin, '1' stdout, in the order
 * sent), kept for the connection and given to the operation as
 * host_client_fd(): zfs send writes its stream straight to the client's
 * stdout and receive reads from its stdin, never through the socket.
 * They are closed when the operation returns, before the exit frame, so
 * that a pipe's reader sees its end when the command has ended.
 */
#include "tarnd.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>

#define SERVE_EXIT_OK     0
#define SERVE_EXIT_ERROR  1
#define SERVE_EXIT_USAGE  2
#define SERVE_REQ_TIMEOUT 10   /* seconds for a client to send its request */

typedef struct conn {
	int    c_fd;
	bool   c_dead;          /* the client went away: drop output */
	FILE  *c_out;           /* flushed before anything goes to c_err */
} conn_t;

typedef struct request {
	int    rq_argc;
	char **rq_argv;
	int    rq_nenv;
	char **rq_env;
	int    rq_cwdfd;        /* -1 when the client sent none */
	int    rq_iofd[2];      /* the client's stdin, stdout (-1: not sent) */
	int    rq_fds[4];       /* as received, before FDS assigned them */
	int    rq_nfds;
	bool   rq_op;           /* an operation: rq_argv is { name, JSON args } */
} request_t;

static pthread_mutex_t serve_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t serve_cv = PTHREAD_COND_INITIALIZER;
static int serve_active;
static int serve_stop_fds[64];
static int serve_nstop;

int
tarnd_active(void)
{
	pthread_mutex_lock(&serve_lock);
	int n = serve_active;
	pthread_mutex_unlock(&serve_lock);
	return (n);
}

bool
tarnd_wait_idle(int ms)
{
	struct timespec deadline;

	VERIFY0(clock_gettime(CLOCK_REALTIME, &deadline));
	deadline.tv_sec += ms / 1000;
	deadline.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&serve_lock);
	while (serve_active > 0 &&
	    pthread_cond_timedwait(&serve_cv, &serve_lock, &deadline) == 0)
		;
	bool idle = serve_active == 0;
	pthread_mutex_unlock(&serve_lock);
	return (idle);
}

void
tarnd_stop_waiters_answer(void)
{
	int32_t ok = 0;

	pthread_mutex_lock(&serve_lock);
	/* not closed: the clients see EOF when this process is gone */
	for (int i = 0; i < serve_nstop; i++)
		(void) host_send_frame(serve_stop_fds[i], HOST_FRAME_EXIT, &ok, sizeof (ok));
	serve_nstop = 0;
	pthread_mutex_unlock(&serve_lock);
}

/* ---- output streams: frames to the client ---- */

static ssize_t
conn_write(conn_t *c, uint32_t type, const char *buf, size_t size)
{
	if (!c->c_dead && host_send_frame(c->c_fd, type, buf, (uint32_t)size) != 0)
		c->c_dead = true;
	return ((ssize_t)size);    /* the command runs to its end regardless */
}

static ssize_t
out_write(void *cookie, const char *buf, size_t size)
{
	return (conn_write(cookie, HOST_FRAME_OUT, buf, size));
}

static ssize_t
err_write(void *cookie, const char *buf, size_t size)
{
	conn_t *c = cookie;

	/* keep the order the command wrote in */
	if (c->c_out != NULL)
		(void) fflush(c->c_out);
	return (conn_write(c, HOST_FRAME_ERR, buf, size));
}

/* ---- the request ---- */

static void
req_free(request_t *rq)
{
	for (int i = 0; i < rq->rq_argc; i++)
		tarn_free(rq->rq_argv[i]);
	tarn_free(rq->rq_argv);
	for (int i = 0; i < rq->rq_nenv; i++)
		tarn_free(rq->rq_env[i]);
	tarn_free(rq->rq_env);
	if (rq->rq_cwdfd >= 0)
		(void) close(rq->rq_cwdfd);
	for (int i = 0; i < 2; i++)
		if (rq->rq_iofd[i] >= 0)
			(void) close(rq->rq_iofd[i]);
	for (int i = 0; i < rq->rq_nfds; i++)
		(void) close(rq->rq_fds[i]);
}

/* Read the magic, keeping the descriptors that come with it (at most 4). */
static int
req_read_magic(int fd, request_t *rq)
{
	uint32_t magic;
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof (int) * 4)]; } cm;
	struct iovec iov = { .iov_base = &magic, .iov_len = sizeof (magic) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cm.b, .msg_controllen = sizeof (cm.b) };
	ssize_t n;

	while ((n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (n <= 0)
		return (n < 0 ? errno : EPIPE);
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		int nfd = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof (int));
		for (int i = 0; i < nfd; i++) {
			int f;
			memcpy(&f, CMSG_DATA(c) + i * sizeof (int), sizeof (int));
			if (rq->rq_nfds < (int)ARRAY_SIZE(rq->rq_fds))
				rq->rq_fds[rq->rq_nfds++] = f;
			else
				(void) close(f);
		}
	}
	if (n < (ssize_t)sizeof (magic) &&
	    host_read_full(fd, (char *)&magic + n, sizeof (magic) - (size_t)n) != 0)
		return (EPIPE);
	rq->rq_op = magic == HOST_PROTO_MAGIC_OP;
	return (magic == HOST_PROTO_MAGIC || rq->rq_op ? 0 : SET_ERROR(EPROTO));
}

static int
req_read_strings(int fd, uint32_t max, char ***vp, int *np, size_t *total)
{
	uint32_t n, len;
	int error;

	if ((error = host_read_full(fd, &n, sizeof (n))) != 0)
		return (error);
	if (n > max)
		return (SET_ERROR(E2BIG));
	*vp = tarn_alloc(((size_t)n + 1) * sizeof (char *));
	for (uint32_t i = 0; i < n; i++) {
		if ((error = host_read_full(fd, &len, sizeof (len))) != 0)
			return (error);
		*total += len;
		if (len > HOST_PROTO_MAXSTR || *total > HOST_PROTO_MAXREQ)
			return (SET_ERROR(E2BIG));
		char *s = tarn_alloc((size_t)len + 1);
		(*vp)[i] = s;
		*np = (int)i + 1;
		if ((error = host_read_full(fd, s, len)) != 0)
			return (error);
		if (strlen(s) != len)
			return (SET_ERROR(EPROTO));   /* a NUL inside */
	}
	*np = (int)n;
	return (0);
}

static const char *
req_env(const request_t *rq, const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; i < rq->rq_nenv; i++)
		if (strncmp(rq->rq_env[i], name, len) == 0 && rq->rq_env[i][len] == '=')
			return (rq->rq_env[i] + len + 1);
	return (NULL);
}

/*
 * Give the descriptors received their jobs: as FDS lists them ('c' cwd,
 * '0' stdin, '1' stdout), or from a client that does not say, the first
 * is the cwd.  The rest are closed.
 */
static void
req_assign_fds(request_t *rq)
{
	const char *fds = req_env(rq, "FDS");

	if (fds == NULL)
		fds = "c";
	for (int i = 0; i < rq->rq_nfds; i++) {
		int *slot = NULL;
		if (i < (int)strlen(fds)) {
			if (fds[i] == 'c')
				slot = &rq->rq_cwdfd;
			else if (fds[i] == '0' || fds[i] == '1')
				slot = &rq->rq_iofd[fds[i] - '0'];
		}
		if (slot != NULL && *slot < 0)
			*slot = rq->rq_fds[i];
		else
			(void) close(rq->rq_fds[i]);
	}
	rq->rq_nfds = 0;
}

static int
req_read(int fd, request_t *rq)
{
	size_t total = 0;
	int error;

	if ((error = req_read_magic(fd, rq)) != 0)
		return (error);
	if ((error = req_read_strings(fd, HOST_PROTO_MAXARGS, &rq->rq_argv,
	    &rq->rq_argc, &total)) != 0)
		return (error);
	if (rq->rq_argc < 1 || (rq->rq_op && rq->rq_argc != 2))
		return (SET_ERROR(EPROTO));
	error = req_read_strings(fd, HOST_PROTO_MAXENV, &rq->rq_env, &rq->rq_nenv, &total);
	if (error == 0)
		req_assign_fds(rq);
	return (error);
}

/* ---- the client's working directory ---- */

static char *
path_join(const char *dir, const char *rel)
{
	size_t len = strlen(dir) + strlen(rel) + 2;
	char *p = tarn_alloc(len);

	(void) snprintf(p, len, "%s/%s", dir, rel);
	return (p);
}

/* Work in the client's directory, with its umask.  0 or an errno. */
static int
req_enter_cwd(request_t *rq)
{
	const char *pwd = req_env(rq, "PWD");
	const char *um = req_env(rq, "UMASK");

	if (tarnd_info.ti_unshare && unshare(CLONE_FS) != 0) {
		tarnd_log("unshare(CLONE_FS): %s; operations run in the daemon's "
		    "directory, with its umask", strerror(errno));
		tarnd_info.ti_unshare = false;
	}
	if (!tarnd_info.ti_unshare)
		return (0);
	if (um != NULL)
		(void) umask((mode_t)strtoul(um, NULL, 8) & 0777);
	if (rq->rq_cwdfd >= 0 && fchdir(rq->rq_cwdfd) == 0)
		return (0);
	if (pwd != NULL && chdir(pwd) == 0)
		return (0);
	return (chdir("/") == 0 ? 0 : errno);
}

/* The cache file path made comparable: real directory + base name. */
static void
cache_canon(const char *path, char *buf, size_t len)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *slash = strrchr(path, '/');

	if (slash == NULL) {
		(void) snprintf(dir, sizeof (dir), ".");
		slash = path - 1;
	} else {
		(void) snprintf(dir, sizeof (dir), "%.*s", (int)(slash - path), path);
		if (dir[0] == '\0')
			(void) snprintf(dir, sizeof (dir), "/");
	}
	if (realpath(dir, real) != NULL)
		(void) snprintf(buf, len, "%s/%s", strcmp(real, "/") == 0 ? "" : real, slash + 1);
	else
		(void) snprintf(buf, len, "%s", path);
}

/* A client that names another cache file than ours gets an error. */
static bool
cache_mismatch(const request_t *rq, char *msg, size_t len)
{
	const char *theirs = req_env(rq, "TARN_CACHEFILE");
	const char *pwd = req_env(rq, "PWD");
	char a[PATH_MAX * 2], b[PATH_MAX * 2];

	if (theirs == NULL || theirs[0] == '\0')
		return (false);
	if (theirs[0] != '/' && strcmp(theirs, "none") != 0 && pwd != NULL) {
		char *abs = path_join(pwd, theirs);
		cache_canon(abs, a, sizeof (a));
		tarn_free(abs);
	} else {
		cache_canon(theirs, a, sizeof (a));
	}
	cache_canon(spa_cachefile_path(), b, sizeof (b));
	if (strcmp(a, b) == 0)
		return (false);
	(void) snprintf(msg, len, "tarn: the daemon at %s uses the cache file %s, "
	    "not %s; stop it first ('tarn daemon stop') or unset TARN_CACHEFILE\n",
	    tarnd_info.ti_sock, spa_cachefile_path(), theirs);
	return (true);
}

/* ---- control commands: tarn daemon status|stop ---- */

/* The pools the host holds (operation daemon.status), one a line. */
static void
serve_status_pools(FILE *out)
{
	json_object *args = json_object_new_object(), *res = NULL, *pools;

	/* collect: a cache file that cannot be read is said here, not reported */
	if (host_exec("daemon.status", args, true, &res) != 0 ||
	    !json_object_object_get_ex(res, "pools", &pools)) {
		fprintf(out, "pools: cannot read the cache file %s\n", spa_cachefile_path());
		json_object_put(args);
		json_object_put(res);
		return;
	}
	json_object_put(args);
	fprintf(out, "pools: %d\n", (int)json_object_array_length(pools));
	for (size_t i = 0; i < json_object_array_length(pools); i++) {
		json_object *p = json_object_array_get_idx(pools, i);
		const char *name = json_object_get_string(json_object_object_get(p, "name"));
		if (json_object_get_boolean(json_object_object_get(p, "held")))
			fprintf(out, "\t%-20s held, %s, %d command(s)\n", name,
			    json_object_get_string(json_object_object_get(p, "state")),
			    json_object_get_int(json_object_object_get(p, "commands")));
		else
			fprintf(out, "\t%-20s not open (UNAVAIL)\n", name);
	}
	json_object_put(res);
}

static int
serve_daemon_status(FILE *out)
{
	uint64_t up = tarn_wall_sec() - tarnd_info.ti_start;

	fprintf(out, "tarnd %s is running, pid %d, up %" PRIu64 "s\n", TARN_VERSION,
	    (int)tarnd_info.ti_pid, up);
	fprintf(out, "socket:     %s\n", tarnd_info.ti_sock);
	fprintf(out, "pid file:   %s\n", tarnd_info.ti_pidfile);
	fprintf(out, "log:        %s\n", tarnd_info.ti_logfile[0] != '\0' ?
	    tarnd_info.ti_logfile : "standard error");
	fprintf(out, "cache file: %s\n", spa_cachefile_path());
	fprintf(out, "commands:   %d running (this one included)\n", tarnd_active());
	serve_status_pools(out);
	return (SERVE_EXIT_OK);
}

/* ---- one connection ---- */

static void
serve_refuse(int fd, const char *msg)
{
	int32_t st = SERVE_EXIT_ERROR;

	(void) host_send_frame(fd, HOST_FRAME_ERR, msg, (uint32_t)strlen(msg));
	(void) host_send_frame(fd, HOST_FRAME_EXIT, &st, sizeof (st));
}

static bool
serve_allowed(int fd, struct ucred *cr)
{
	socklen_t len = sizeof (*cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cr, &len) != 0)
		return (false);
	/* root; or the daemon's own user, who could open the devices anyway */
	return (cr->uid == 0 || cr->uid == geteuid());
}

/*
 * A control request of the daemon's own: `tarn daemon status` (its text
 * to the client); anything else is refused.  Its exit status.
 */
static int
serve_control(conn_t *c, request_t *rq)
{
	static const cookie_io_functions_t outf = { .write = out_write };
	static const cookie_io_functions_t errf = { .write = err_write };
	FILE *out = fopencookie(c, "w", outf);
	FILE *err = fopencookie(c, "w", errf);
	int ret;

	VERIFY(out != NULL && err != NULL);
	(void) setvbuf(out, NULL, _IOFBF, 65536);
	(void) setvbuf(err, NULL, _IOLBF, 4096);
	c->c_out = out;
	host_err_tls = err;
	host_conn_fd_tls = c->c_fd;
	if (rq->rq_argc == 3 && strcmp(rq->rq_argv[0], "tarn") == 0 &&
	    strcmp(rq->rq_argv[1], "daemon") == 0 &&
	    strcmp(rq->rq_argv[2], "status") == 0) {
		ret = serve_daemon_status(out);
	} else {
		fprintf(err, "tarn: the daemon runs operations, not command lines "
		    "(a tarn older than this tarnd?)\n");
		ret = SERVE_EXIT_USAGE;
	}
	host_err_tls = NULL;
	host_conn_fd_tls = -1;
	(void) fclose(out);
	c->c_out = NULL;
	(void) fclose(err);
	return (ret);
}

/*
 * Run an operation of the host: its failures are gathered into the
 * result (host_exec's collect), what the libraries write to stderr
 * meanwhile goes to the client's stderr; the result goes back as one
 * frame.  Returns the exit status (the result's "ret").
 */
/* host_emit in the daemon: a part frame to the client. */
static int
serve_emit(void *arg, json_object *part)
{
	conn_t *c = arg;
	const char *text = json_object_to_json_string_ext(part, JSON_C_TO_STRING_PLAIN);

	if (c->c_out != NULL)
		(void) fflush(c->c_out);
	if (!c->c_dead && host_send_frame(c->c_fd, HOST_FRAME_PART, text,
	    (uint32_t)strlen(text)) != 0)
		c->c_dead = true;
	json_object_put(part);
	return (c->c_dead ? EPIPE : 0);
}

static int
serve_op(conn_t *c, request_t *rq)
{
	static const cookie_io_functions_t errf = { .write = err_write };
	json_object *args = json_tokener_parse(rq->rq_argv[1]), *res = NULL;
	FILE *err = fopencookie(c, "w", errf);
	int ret;

	VERIFY(err != NULL);
	(void) setvbuf(err, NULL, _IOLBF, 4096);
	host_err_tls = err;
	host_conn_fd_tls = c->c_fd;
	host_client_fd_tls[0] = rq->rq_iofd[0];
	host_client_fd_tls[1] = rq->rq_iofd[1];
	host_history_set(req_env(rq, "HISTORY"));
	host_set_emitter(serve_emit, c);
	int error = host_exec(rq->rq_argv[0], args, true, &res);
	host_set_emitter(NULL, NULL);
	host_history_set(NULL);
	host_client_fd_tls[0] = host_client_fd_tls[1] = -1;
	host_conn_fd_tls = -1;
	host_err_tls = NULL;
	(void) fclose(err);
	/* a pipe the operation wrote to ends with the command, not after */
	for (int i = 0; i < 2; i++) {
		if (rq->rq_iofd[i] >= 0)
			(void) close(rq->rq_iofd[i]);
		rq->rq_iofd[i] = -1;
	}
	if (error != 0) {
		tarnd_log("bad operation '%.64s' from a client: %s", rq->rq_argv[0],
		    strerror(error));
		res = json_object_new_object();
		json_object_object_add(res, "ret", json_object_new_int(HOST_FAILED));
		json_object_object_add(res, "error", json_object_new_int(error));
	}
	ret = json_object_get_int(json_object_object_get(res, "ret"));
	const char *text = json_object_to_json_string_ext(res, JSON_C_TO_STRING_PLAIN);
	if (!c->c_dead && host_send_frame(c->c_fd, HOST_FRAME_RESULT, text,
	    (uint32_t)strlen(text)) != 0)
		c->c_dead = true;
	json_object_put(res);
	json_object_put(args);
	return (ret);
}

static bool
is_stop(const request_t *rq)
{
	return (!rq->rq_op && rq->rq_argc == 3 && strcmp(rq->rq_argv[0], "tarn") == 0 &&
	    strcmp(rq->rq_argv[1], "daemon") == 0 && strcmp(rq->rq_argv[2], "stop") == 0);
}

static void *
serve_thread(void *arg)
{
	conn_t c = { .c_fd = (int)(intptr_t)arg };
	request_t rq = { .rq_cwdfd = -1, .rq_iofd = { -1, -1 } };
	struct timeval tv = { .tv_sec = SERVE_REQ_TIMEOUT };
	struct ucred cr = { 0 };
	char msg[PATH_MAX * 3];
	int error, ret;

	(void) setsockopt(c.c_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof (tv));
	if ((error = req_read(c.c_fd, &rq)) != 0) {
		tarnd_log("bad request from a client: %s", strerror(error));
	} else if (!serve_allowed(c.c_fd, &cr)) {
		tarnd_log("refused a client with uid %d", (int)cr.uid);
		serve_refuse(c.c_fd, HOST_NOT_ROOT_MSG "\n");
	} else if (cache_mismatch(&rq, msg, sizeof (msg))) {
		serve_refuse(c.c_fd, msg);
	} else if (is_stop(&rq)) {
		tarnd_log("stop requested by a client (pid %d)", (int)cr.pid);
		pthread_mutex_lock(&serve_lock);
		if (serve_nstop < (int)ARRAY_SIZE(serve_stop_fds)) {
			serve_stop_fds[serve_nstop++] = c.c_fd;
			c.c_fd = -1;      /* answered once the daemon is down */
		}
		pthread_mutex_unlock(&serve_lock);
		tarnd_request_stop();
	} else if ((error = req_enter_cwd(&rq)) != 0) {
		(void) snprintf(msg, sizeof (msg), "tarn: the daemon cannot use the "
		    "working directory: %s\n", strerror(error));
		serve_refuse(c.c_fd, msg);
	} else {
		int32_t st;
		ret = rq.rq_op ? serve_op(&c, &rq) : serve_control(&c, &rq);
		st = ret;
		(void) host_send_frame(c.c_fd, HOST_FRAME_EXIT, &st, sizeof (st));
	}
	req_free(&rq);
	if (c.c_fd >= 0)
		(void) close(c.c_fd);
	pthread_mutex_lock(&serve_lock);
	serve_active--;
	pthread_cond_broadcast(&serve_cv);
	pthread_mutex_unlock(&serve_lock);
	return (NULL);
}

void
tarnd_serve(int fd)
{
	pthread_attr_t attr;
	pthread_t tid;

	pthread_mutex_lock(&serve_lock);
	serve_active++;
	pthread_mutex_unlock(&serve_lock);
	VERIFY0(pthread_attr_init(&attr));
	VERIFY0(pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED));
	int error = pthread_create(&tid, &attr, serve_thread, (void *)(intptr_t)fd);
	if (error != 0) {
		tarnd_log("cannot start a thread for a client: %s", strerror(error));
		serve_refuse(fd, "tarn: the daemon is out of threads; try again\n");
		(void) close(fd);
		pthread_mutex_lock(&serve_lock);
		serve_active--;
		pthread_cond_broadcast(&serve_cv);
		pthread_mutex_unlock(&serve_lock);
	}
	VERIFY0(pthread_attr_destroy(&attr));
}
