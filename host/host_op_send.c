/*
 * host_op_send.c — the operations of zfs send and receive (issue 29; the
 * stream itself is lib/dsl's: dsl.h "send and receive"):
 *
 *   fs.send        snap ("fs@snap"; saved: the file system), from? (-i/-I
 *                  base: "fs@snap" or "fs#bm"), intermediate (-I), replicate
 *                  (-R), props (-p), holds (-h), verbose (-v), parsable (-P),
 *                  dryrun (-n), compressed (-c), raw (-w), large (-L), embed
 *                  (-e), saved (--saved), token? (-t: resume)
 *       parts      {estimate: {snap, from?, bytes}}, {total: bytes},
 *                  {start: snap}, {progress: {snap, bytes}}
 *       result     bytes: stream bytes written
 *   fs.receive     target, force (-F), nomount (-u), resumable (-s),
 *                  discard (-d), lastonly (-e), set: ["prop=value"...] (-o),
 *                  exclude: [prop...] (-x), dryrun (-n), verbose (-v)
 *       parts      {receiving: {incremental, snap, into, dryrun}},
 *                  {received: {bytes, seconds}},
 *                  {resume_token: {name, token}} (a -s receive that broke off)
 *   fs.recv_abort  name (-A)                     message? (zfs's line on failure)
 * (receive_resume_token is a property of lib/dsl's: zfs get, zfs list -o.)
 *
 * The bytes.  A stream never passes through the daemon's socket: the
 * client passed its stdin and stdout with the request (cmd/tarnd/serve.c)
 * and host_client_fd() gives them here, so send writes the stream
 * straight into the client's pipe or file and receive reads it from
 * there (in-process: fds 0 and 1).  Writes and reads go through a buffer
 * of SEND_BUFSZ (a few large system calls, not one per record) and a
 * poll that also watches the client's connection: a client that went
 * away or a daemon that stops (host_cancelled) ends a long send or
 * receive with EINTR, a reader that went away ends a send with EPIPE
 * (tarnd ignores SIGPIPE; in-process the command line does).
 *
 * Locks.  A pool is opened as other commands open it, but send lets go of
 * the registry's lock at once (host_pool_unlock: the snapshot is held by
 * dsl_send), and receive reads the first record before it opens the
 * target's pool: `send pool/a@s | receive pool/b` in one daemon would
 * otherwise wait for itself (the receive holding the pool while the send,
 * which has to open it to write the bytes receive waits for, queues).
 *
 * send -v: the estimate of each stream first, then its progress once a
 * second as parts, which the command line prints as zfs does (-n: to
 * stdout, else to stderr).  Package streams (-R, -I) are host_send_pkg.c's
 * (host_send_package); they print through host_send_emit_*().
 * The receive of one substream, with its properties and mount, is
 * host_recv.c's (host_recv_one); a package's is host_recv_package.
 */
#include "host_impl.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define SEND_BUFSZ   (256 * 1024)
#define SEND_TICK_NS 1000000000ull      /* progress once a second */

/* ---- the client's descriptors ---- */

typedef struct send_io {
	int      io_fd;              /* the client's stdout (send) or stdin (receive) */
	char    *io_buf;
	size_t   io_len, io_off;     /* buffered bytes; receive: taken so far */
	bool     io_eof;
	uint64_t io_bytes;           /* handed to us (send) */
	bool     io_progress;        /* -v: progress parts */
	uint64_t io_next_ns;         /* the next progress part */
	char     io_snap[DSL_NAME_MAX];  /* whose stream is going now */
} send_io_t;

static __thread send_io_t *send_io_cur;     /* the running send: host_send_emit_start */

static void
send_emit_obj(const char *key, json_object *v)
{
	json_object *part = json_object_new_object();
	json_object_object_add(part, key, v);
	(void) host_emit(part);
}

static void
send_tick(send_io_t *io)
{
	if (!io->io_progress || tarn_now_ns() < io->io_next_ns)
		return;
	io->io_next_ns = tarn_now_ns() + SEND_TICK_NS;
	json_object *p = json_object_new_object();
	json_object_object_add(p, "snap", json_object_new_string(io->io_snap));
	json_object_object_add(p, "bytes", json_object_new_uint64(io->io_bytes));
	send_emit_obj("progress", p);
}

/*
 * Wait until fd is ready for events, or the client went away (EINTR);
 * progress parts meanwhile.  0 or an errno.
 */
static int
send_wait(send_io_t *io, short events)
{
	for (;;) {
		struct pollfd p[2] = { { .fd = io->io_fd, .events = events },
			{ .fd = host_conn_fd_tls, .events = POLLRDHUP } };
		if (host_cancelled())
			return (SET_ERROR(EINTR));
		int n = poll(p, 2, 1000);
		if (n < 0 && errno != EINTR)
			return (errno);
		send_tick(io);
		if (n > 0 && p[0].revents != 0)
			return (0);
	}
}

/*
 * Write what fd takes now without blocking in write(2), where a stalled
 * reader would keep us past a cancel and without progress: a socket with
 * MSG_DONTWAIT; a pipe no more than it has room for (its size less what
 * is unread, a page less for the page the reader is in, at least a page:
 * POLLOUT said one is free); anything else (a file) as it comes.
 */
static ssize_t
send_write_some(int fd, const char *p, size_t len)
{
	ssize_t n = send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n >= 0 || errno != ENOTSOCK)
		return (n);
	int cap = fcntl(fd, F_GETPIPE_SZ), queued = 0;
	if (cap > 0 && ioctl(fd, FIONREAD, &queued) == 0) {
		long room = (long)cap - queued - 4096;
		len = MIN(len, (size_t)MAX(room, 4096));
	}
	return (write(fd, p, len));
}

/* Write out the buffer: 0 or an errno (EPIPE: the reader is gone). */
static int
send_flush(send_io_t *io)
{
	size_t off = 0;
	while (off < io->io_len) {
		int e = send_wait(io, POLLOUT);
		if (e != 0)
			return (e);
		ssize_t n = send_write_some(io->io_fd, io->io_buf + off, io->io_len - off);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return (errno);
		off += (size_t)n;
	}
	io->io_len = 0;
	return (0);
}

/* dsl_stream_write_fn_t: buffered, to the client's stdout. */
static int
send_write(void *arg, const void *buf, size_t len)
{
	send_io_t *io = arg;
	const char *p = buf;
	while (len > 0) {
		size_t n = MIN(len, SEND_BUFSZ - io->io_len);
		memcpy(io->io_buf + io->io_len, p, n);
		io->io_len += n;
		io->io_bytes += n;
		p += n;
		len -= n;
		int e = io->io_len == SEND_BUFSZ ? send_flush(io) : 0;
		if (e != 0)
			return (e);
	}
	send_tick(io);
	return (0);
}

/* dsl_stream_read_fn_t: from the client's stdin, a buffer at a time. */
static ssize_t
recv_read(void *arg, void *buf, size_t len)
{
	send_io_t *io = arg;
	while (io->io_off == io->io_len && !io->io_eof) {
		int e = send_wait(io, POLLIN);
		if (e != 0)
			return (-e);
		ssize_t n = read(io->io_fd, io->io_buf, SEND_BUFSZ);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return (-errno);
		io->io_off = 0;
		io->io_len = (size_t)n;
		io->io_eof = n == 0;
	}
	size_t n = MIN(len, io->io_len - io->io_off);
	memcpy(buf, io->io_buf + io->io_off, n);
	io->io_off += n;
	return ((ssize_t)n);
}

static void
send_io_init(send_io_t *io, int fd)
{
	memset(io, 0, sizeof (*io));
	io->io_fd = fd;
	io->io_buf = tarn_alloc(SEND_BUFSZ);
	/* a pipe of a buffer's size: a quarter of the system calls (no matter if refused) */
	if (fd >= 0 && fcntl(fd, F_GETPIPE_SZ) > 0 && fcntl(fd, F_GETPIPE_SZ) < SEND_BUFSZ)
		(void) fcntl(fd, F_SETPIPE_SZ, SEND_BUFSZ);
}

/* ---- what send -v says (also host_send_pkg.c's) ---- */

void
host_send_emit_estimate(const char *from, const char *snap, uint64_t bytes)
{
	json_object *e = json_object_new_object();
	json_object_object_add(e, "snap", json_object_new_string(snap));
	if (from != NULL)
		json_object_object_add(e, "from", json_object_new_string(from));
	json_object_object_add(e, "bytes", json_object_new_uint64(bytes));
	send_emit_obj("estimate", e);
}

void
host_send_emit_total(uint64_t bytes)
{
	send_emit_obj("total", json_object_new_uint64(bytes));
}

void
host_send_emit_start(const char *snap)
{
	send_io_t *io = send_io_cur;
	if (io == NULL)
		return;
	(void) snprintf(io->io_snap, sizeof (io->io_snap), "%s", snap);
	if (!io->io_progress)
		return;
	send_emit_obj("start", json_object_new_string(snap));
	io->io_next_ns = tarn_now_ns() + SEND_TICK_NS;
}

/* ---- send ---- */

typedef struct send_req {
	host_send_args_t sr_a;
	const char *sr_token;
	char        sr_snap[DSL_NAME_MAX], sr_from[DSL_NAME_MAX];
	dsl_send_opts_t sr_opts;
} send_req_t;

static void
send_args(json_object *args, send_req_t *sr)
{
	host_send_args_t *a = &sr->sr_a;
	memset(sr, 0, sizeof (*sr));
	a->hsa_snap = host_arg_str(args, "snap");
	a->hsa_from = host_arg_str(args, "from");
	a->hsa_intermediate = host_arg_bool(args, "intermediate");
	a->hsa_replicate = host_arg_bool(args, "replicate");
	a->hsa_props = host_arg_bool(args, "props");
	a->hsa_holds = host_arg_bool(args, "holds");
	a->hsa_verbose = host_arg_bool(args, "verbose");
	a->hsa_parsable = host_arg_bool(args, "parsable");
	a->hsa_dryrun = host_arg_bool(args, "dryrun");
	a->hsa_flags = (host_arg_bool(args, "compressed") ? DSL_SEND_COMPRESSED : 0) |
	    (host_arg_bool(args, "raw") ? DSL_SEND_RAW : 0) |
	    (host_arg_bool(args, "large") ? DSL_SEND_LARGE : 0) |
	    (host_arg_bool(args, "embed") ? DSL_SEND_EMBED : 0) |
	    (host_arg_bool(args, "saved") ? DSL_SEND_SAVED : 0);
	sr->sr_token = host_arg_str(args, "token");
}

/*
 * send -t: the token taken apart, its snapshot's pool opened, the options
 * filled.  0 or reported.
 */
static int
send_resume_open(send_req_t *sr, host_fs_t *fs)
{
	char err[512] = "";
	dsl_resume_t *r = tarn_alloc(sizeof (*r));
	int e = dsl_resume_token_parse(sr->sr_token, r, err, sizeof (err));
	if (e != 0) {
		tarn_free(r);
		return (host_report("resume send", "", e, err));
	}
	int ret = host_fs_open("open", r->dr_toname, false, fs);
	if (ret == 0) {
		e = dsl_resume_send_opts(fs->hf_dp, r, sr->sr_snap, sizeof (sr->sr_snap),
		    sr->sr_from, sizeof (sr->sr_from), &sr->sr_opts, err, sizeof (err));
		if (e != 0) {
			ret = host_report("resume send", "", e, err);
			host_fs_close(fs);
		}
	}
	sr->sr_opts.dso_flags |= sr->sr_a.hsa_flags;
	if (sr->sr_from[0] != '\0')
		sr->sr_opts.dso_from = sr->sr_from;
	sr->sr_a.hsa_snap = sr->sr_snap;
	tarn_free(r);
	return (ret);
}

/* The file system of a snapshot name (up to its '@'), or the name itself. */
static void
send_fs_of(const char *snap, char fs[DSL_NAME_MAX])
{
	(void) snprintf(fs, DSL_NAME_MAX, "%.*s", (int)strcspn(snap, "@"), snap);
}

/* -v / -n: the estimate (parts when asked for); 0 or reported. */
static int
send_estimate(dsl_pool_t *dp, send_req_t *sr, bool say)
{
	char err[512] = "";
	uint64_t bytes = 0;
	const host_send_args_t *a = &sr->sr_a;
	int e = dsl_send_estimate(dp, a->hsa_snap, &sr->sr_opts, &bytes, err, sizeof (err));
	if (e != 0)
		return (host_report("send", a->hsa_snap, e, err));
	if (say) {
		host_send_emit_estimate(sr->sr_opts.dso_from, a->hsa_snap, bytes);
		host_send_emit_total(bytes);
	}
	return (0);
}

/* One stream (not a package) of the snapshot: 0 or reported. */
static int
send_one(dsl_pool_t *dp, send_req_t *sr, dsl_stream_out_t *so)
{
	const host_send_args_t *a = &sr->sr_a;
	char err[512] = "", fsname[DSL_NAME_MAX];
	size_t plen = 0;
	char *props = NULL;

	if (a->hsa_verbose || a->hsa_dryrun) {
		int r = send_estimate(dp, sr, a->hsa_verbose);
		if (r != 0 || a->hsa_dryrun)
			return (r);
	}
	if (a->hsa_props) {
		send_fs_of(a->hsa_snap, fsname);
		props = host_send_props(dp, fsname, &plen);
		sr->sr_opts.dso_props = props;
		sr->sr_opts.dso_propslen = plen;
	}
	host_send_emit_start(a->hsa_snap);
	int e = dsl_send(dp, a->hsa_snap, &sr->sr_opts, so, err, sizeof (err));
	tarn_free(props);
	return (e != 0 ? host_report("send", a->hsa_snap, e, err) : 0);
}

/* After the pool is open: the stream(s), the buffer flushed.  0 or reported. */
static int
send_run(host_fs_t *fs, send_req_t *sr, send_io_t *io, json_object *res)
{
	const host_send_args_t *a = &sr->sr_a;
	dsl_stream_out_t *so = dsl_stream_out_create(send_write, io);
	int r;

	io->io_progress = a->hsa_verbose && !a->hsa_dryrun;
	(void) snprintf(io->io_snap, sizeof (io->io_snap), "%s", a->hsa_snap);
	send_io_cur = io;
	if (a->hsa_replicate || a->hsa_intermediate)
		r = host_send_package(fs->hf_dp, a, so);
	else
		r = send_one(fs->hf_dp, sr, so);
	send_io_cur = NULL;
	if (r == 0 && !a->hsa_dryrun) {
		int e = send_flush(io);
		if (e != 0)
			r = host_report("send", a->hsa_snap, e, NULL);
	}
	json_object_object_add(res, "bytes", json_object_new_uint64(io->io_bytes));
	dsl_stream_out_destroy(so);
	return (r);
}

static int
op_fs_send(json_object *args, json_object *res)
{
	send_req_t *sr = tarn_alloc(sizeof (*sr));
	host_fs_t fs;
	send_io_t io;
	int r;

	send_args(args, sr);
	host_send_args_t *a = &sr->sr_a;
	int fd = host_client_fd(1);
	if (sr->sr_token == NULL && a->hsa_snap == NULL) {
		tarn_free(sr);
		return (host_report("send", "snap", EINVAL, "missing argument"));
	}
	if (fd < 0 && !a->hsa_dryrun) {
		tarn_free(sr);
		return (host_report("send", sr->sr_token != NULL ? "-t" : a->hsa_snap, EBADF,
		    "no standard output to write the stream to"));
	}
	if (sr->sr_token != NULL) {
		r = send_resume_open(sr, &fs);
	} else {
		sr->sr_opts.dso_from = a->hsa_from;
		sr->sr_opts.dso_flags = a->hsa_flags;
		r = host_fs_open("open", a->hsa_snap, false, &fs);
	}
	if (r != 0) {
		tarn_free(sr);
		return (r);
	}
	host_pool_unlock(fs.hf_spa);    /* a receive into this pool may wait for our bytes */
	send_io_init(&io, fd);
	r = send_run(&fs, sr, &io, res);
	tarn_free(io.io_buf);
	host_fs_close(&fs);
	tarn_free(sr);
	return (r);
}

/* ---- receive ---- */

static const char **
recv_strings(json_object *args, const char *key, int *np)
{
	json_object *a;
	*np = 0;
	if (!json_object_object_get_ex(args, key, &a) || !json_object_is_type(a, json_type_array))
		return (NULL);
	size_t n = json_object_array_length(a);
	const char **v = tarn_alloc(sizeof (*v) * (n + 1));
	for (size_t i = 0; i < n; i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(a, i));
		if (s != NULL)
			v[(*np)++] = s;
	}
	return (v);
}

/*
 * The first record of the stream, read before the pool is opened (see
 * the theory comment).  0 or reported ("cannot receive: ...").
 */
static int
recv_first(dsl_stream_in_t *si, dsl_stream_kind_t *kind)
{
	char err[512] = "";
	dsl_stream_begin_t *b = tarn_alloc(sizeof (*b));
	int e = dsl_stream_peek(si, kind, b, err, sizeof (err));
	tarn_free(b);
	if (e == 0 && *kind == DSL_STREAM_EOF)
		return (host_report("receive", "", EINVAL, "failed to read from stream"));
	if (e == 0 && *kind == DSL_STREAM_PACKAGE_END)
		return (host_report("receive", "", EBADMSG,
		    "invalid stream (end of a package without its start)"));
	if (e != 0)
		return (host_report("receive", "", e, err[0] != '\0' ? err : NULL));
	return (0);
}

static int
recv_run(const host_recv_args_t *a, const char *target,
    dsl_stream_in_t *si)
{
	dsl_stream_kind_t kind;
	host_fs_t fs;
	int r;

	if ((r = recv_first(si, &kind)) != 0)
		return (r);
	if ((r = host_fs_open("open", target, false, &fs)) != 0)
		return (r);
	if (kind == DSL_STREAM_PACKAGE) {
		r = host_recv_package(fs.hf_dp, a, target, si);
	} else {
		dsl_recv_result_t rr;
		memset(&rr, 0, sizeof (rr));
		r = host_recv_one(fs.hf_dp, a, target, si, &rr);
		tarn_free(rr.drr_props);
	}
	if (r == 0 && (a->hra_flags & DSL_RECV_DRYRUN) == 0)
		host_history_log(fs.hf_spa);
	host_fs_close(&fs);
	return (r);
}

static int
op_fs_receive(json_object *args, json_object *res)
{
	const char *target;
	host_recv_args_t a = {
		.hra_flags = (host_arg_bool(args, "force") ? DSL_RECV_FORCE : 0) |
		    (host_arg_bool(args, "resumable") ? DSL_RECV_RESUMABLE : 0) |
		    (host_arg_bool(args, "dryrun") ? DSL_RECV_DRYRUN : 0),
		.hra_nomount = host_arg_bool(args, "nomount"),
		.hra_verbose = host_arg_bool(args, "verbose"),
		.hra_discard = host_arg_bool(args, "discard"),
		.hra_lastonly = host_arg_bool(args, "lastonly"),
	};
	send_io_t io;

	if (host_arg_need(args, "target", "receive", &target) != 0)
		return (HOST_FAILED);
	int fd = host_client_fd(0);
	if (fd < 0)
		return (host_report("receive", "", EBADF, "no standard input to read from"));
	const char **setv = recv_strings(args, "set", &a.hra_nset);
	const char **exclv = recv_strings(args, "exclude", &a.hra_nexcl);
	a.hra_setprops = setv;
	a.hra_exclprops = exclv;
	send_io_init(&io, fd);
	dsl_stream_in_t *si = dsl_stream_in_create(recv_read, &io);
	int r = recv_run(&a, target, si);
	dsl_stream_in_destroy(si);
	tarn_free(io.io_buf);
	tarn_free(setv);
	tarn_free(exclv);
	return (r);
}

/* ---- receive -A ---- */

static int
op_fs_recv_abort(json_object *args, json_object *res)
{
	const char *name;
	char err[512] = "";
	host_fs_t fs;

	if (host_arg_need(args, "name", "receive", &name) != 0 ||
	    host_fs_open_existing(name, false, &fs) != 0)
		return (HOST_FAILED);
	int e = dsl_recv_abort(fs.hf_dp, name, err, sizeof (err));
	if (e == ENOENT) {
		/* zfs says it without "cannot ..." */
		json_object_object_add(res, "message", json_object_new_string(err[0] != '\0' ?
		    err : "dataset does not have any resumable receive state to abort"));
	} else if (e != 0) {
		(void) host_report("abort receive of", name, e, err);
	} else {
		host_history_log(fs.hf_spa);
	}
	host_fs_close(&fs);
	return (e != 0 ? HOST_FAILED : 0);
}

const host_op_t host_ops_send[] = {
	{ "fs.send", op_fs_send },
	{ "fs.receive", op_fs_receive },
	{ "fs.recv_abort", op_fs_recv_abort },
	{ NULL, NULL }
};
