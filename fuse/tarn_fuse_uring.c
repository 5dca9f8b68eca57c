/*
 * tarn_fuse_uring.c — FUSE requests over io_uring, one queue per CPU.
 *
 * Why.  Through /dev/fuse a request wakes whichever server thread has
 * waited longest, mostly one on another CPU, and the reply wakes the
 * caller across CPUs again.  On a virtual machine waking an idle vCPU is
 * an exit to the hypervisor: here a bare FUSE round trip (getxattr of a
 * missing name) took 22-40 us and a pipe ping-pong between two CPUs 44 us,
 * against 5 us for the same ping-pong on one CPU.  Every small request
 * (create, unlink, stat after close, 4k reads, fsync) pays that twice.
 * FUSE over io_uring (Linux 6.14) gives every CPU its own request queue:
 * a request goes to the queue of the CPU its caller runs on, served by
 * our threads pinned to that CPU, so both wake-ups stay on one CPU.
 *
 * Setting up.  The kernel offers it at INIT when the fuse module's
 * enable_uring parameter is on.  libfuse 3.14 does not know the flag, so
 * the session gets our I/O hooks (fuse_session_custom_io: the same
 * /dev/fuse fd, our read and writev) and the INIT reply gains
 * FUSE_OVER_IO_URING on its way out.  (The hooks are there on every
 * mount, rings or not: the INIT reply also gains FUSE_HANDLE_KILLPRIV_V2,
 * and the request being served is kept for the flags libfuse drops; see
 * tarn_fuse_req.c.)  After INIT, tarn_fuse_uring_start
 * starts threads for every possible CPU, each pinned to its CPU with a
 * ring of its own and one entry: a header buffer and a payload buffer,
 * registered (FUSE_IO_URING_CMD_REGISTER) with that CPU's queue.  When
 * every queue has an entry the kernel switches: requests go through the
 * rings; forgets, interrupts and notifications stay on /dev/fuse, where
 * libfuse's loop keeps serving.  If any registration fails the ring
 * never becomes complete and /dev/fuse serves everything, as before.
 *
 * A request.  It arrives as three parts: the in-header, the per-op
 * header (op_in) and the rest (payload: names, write data).  The payload
 * buffer has room in front, where the two headers are put, so libfuse
 * parses one contiguous request as if read from /dev/fuse and write data
 * is never copied.  The per-op header's size is what the in-header's
 * length leaves after the payload.  The handler's reply reaches our
 * writev hook on the same thread (every handler replies before it
 * returns): the out-header goes to the header buffer, the reply's data
 * into the payload buffer, and one COMMIT_AND_FETCH gives the reply to
 * the kernel and asks for the next request.
 *
 * Polling.  A woken caller is placed by the scheduler on an idle CPU when
 * there is one, and on a 2-vCPU VM there mostly is: the reply then
 * migrates the caller and wakes the other vCPU out of its halt.  fio's
 * 4k random reads measured 48 us per read so (one migration per read),
 * 15 us with fio pinned to one CPU.  So after serving a request one
 * thread per CPU polls its ring, yielding the CPU between polls, for as
 * long as some queue served a request within tfo_poll_us (default 100):
 * the next request of a caller that stays busy is taken without a sleep
 * and a wake-up, and as no CPU is idle the caller's wake-up stays on its
 * own CPU (a poller that stopped when its own queue went quiet left that
 * CPU idle, and fio's creates still migrated once per file).  The cost is
 * CPU time: every CPU that served a request polls while requests keep
 * coming anywhere, and for tfo_poll_us after the last; an idle mount
 * polls nothing.  Nor is there polling within 20 ms of a large read or
 * write (over 64 KiB): a stream of them keeps both CPUs busy with data,
 * and polling beside them (kept alive by the small requests in between,
 * such as the security.capability lookup before each write(2) that
 * killpriv v2 has since removed) cost
 * 12-15% of a sequential write.
 *
 * Forgets.  The kernel queues a FORGET on /dev/fuse when it drops an
 * inode (for every unlinked file, right in the unlink) and wakes a
 * reader waiting there: a wake-up of a thread on another CPU, which
 * the unlinking caller pays (an unlink loop spent an eighth of its time
 * in it).  So once the rings serve, /dev/fuse has one reader at a time,
 * and a read starts at least 200 us after the one before: forgets that
 * come meanwhile find no reader to wake and are read together (one
 * BATCH_FORGET).  Interrupts wait as long, which is harmless.  fio's
 * deletes: 18.5-19.5k/s -> 21-25k/s; bonnie++'s 14-17k/s -> 19-23k/s.
 *
 * Large requests.  A read or write of over 64 KiB is served by a thread
 * free to run on any CPU (its pinning is widened until a small request
 * comes): its caller keeps working meanwhile (fio copies the previous
 * megabyte out of the page cache), where on one CPU the two took turns
 * while the other CPUs idled (tf_uring_place).
 *
 * Costs.  A queue serves only its CPU's callers, so a handler that blocks
 * (a write waiting for its txg, a read from a slow disk) holds one of
 * that CPU's threads: each CPU gets several.  Read data is copied into
 * the payload buffer, where the /dev/fuse path lends the cached blocks.
 * Threads end when the kernel ends their entries (the connection is gone)
 * or, after that, when tarn_fuse_uring_stop asks (they wait for at most
 * a second at a time).
 */
#include "tarn_fuse_impl.h"

#include <liburing.h>
#include <linux/fuse.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

/* ---- the kernel's interface (include/uapi/linux/fuse.h, protocol 7.42) ---- */

#define TF_INIT_EXT          (1u << 30)   /* FUSE_INIT_EXT: flags2 is valid */
#define TF_INIT2_OVER_URING  (1u << 9)    /* FUSE_OVER_IO_URING, bit 41 = flags2 bit 9 */
#define TF_URING_REGISTER    1            /* FUSE_IO_URING_CMD_REGISTER */
#define TF_URING_COMMIT      2            /* FUSE_IO_URING_CMD_COMMIT_AND_FETCH */

typedef struct tf_uring_ent_io {          /* struct fuse_uring_ent_in_out */
	uint64_t flags;
	uint64_t commit_id;
	uint32_t payload_sz;
	uint32_t padding;
	uint64_t reserved;
} tf_uring_ent_io_t;

typedef struct tf_uring_hdr {             /* struct fuse_uring_req_header */
	char              in_out[128];    /* fuse_in_header in, fuse_out_header out */
	char              op_in[128];     /* the request's first argument */
	tf_uring_ent_io_t ent_io;
} tf_uring_hdr_t;

typedef struct tf_uring_cmd {             /* struct fuse_uring_cmd_req, in the SQE */
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;
	uint8_t  padding[6];
} tf_uring_cmd_t;

_Static_assert(sizeof (tf_uring_hdr_t) == 288, "fuse_uring_req_header is 288 bytes");
_Static_assert(sizeof (tf_uring_cmd_t) == 24, "fuse_uring_cmd_req is 24 bytes");

/* ---- our state ---- */

#define TF_URING_PREFIX   4096            /* room for the headers before the payload */
#define TF_URING_PER_CPU  4               /* threads (one entry each) per CPU queue... */
#define TF_URING_MAX_THR  256             /* ...fewer when there are many CPUs */
#define TF_URING_MAX_Q    1024
#define TF_URING_BULK     (64 * 1024)     /* no polling after requests this large... */
#define TF_URING_BULK_NS  (20 * 1000 * 1000) /* ...nor for 20 ms after one */
#define TF_RD_GAP_NS      (200 * 1000)    /* /dev/fuse: one read per 200 us at most */

typedef struct tf_uring_thr tf_uring_thr_t;

typedef struct tf_uring_ent {
	tf_uring_thr_t  *ue_thr;
	tf_uring_hdr_t  *ue_hdr;
	char            *ue_payload;      /* TF_URING_PREFIX bytes into ue_map */
	struct iovec     ue_iov[2];       /* header, payload: what REGISTER names */
	uint64_t         ue_unique;       /* the request being served */
	bool             ue_replied;
	bool             ue_bulk;         /* it or its reply carried more than TF_URING_BULK */
} tf_uring_ent_t;

struct tf_uring_thr {
	tf_uring_t      *ut_u;
	unsigned         ut_qid;
	bool             ut_pinned;       /* runs only on CPU ut_qid... */
	bool             ut_away;         /* ...but now free to run anywhere (tf_uring_place) */
	pthread_t        ut_thread;
	bool             ut_started;
	struct io_uring  ut_ring;
	tf_uring_ent_t   ut_ent;
	void            *ut_map;
	size_t           ut_maplen;
	tf_uring_hdr_t   ut_hdr __attribute__((aligned(64)));
};

typedef struct tf_uring_q {
	_Atomic(tf_uring_thr_t *) uq_poller; /* the queue's thread that polls (tf_uring_poll) */
	char             uq_pad[56];      /* one cache line each */
} tf_uring_q_t;

struct tf_uring {
	tarn_fuse_t     *u_t;
	tf_uring_q_t    *u_q;             /* u_nq */
	long             u_poll_ns;
	_Atomic long     u_last_ns;       /* when any queue last served a small request */
	_Atomic long     u_bulk_ns;       /* ... and a large one (TF_URING_BULK) */
	int              u_fd;
	size_t           u_payload;       /* payload buffer size the kernel expects */
	unsigned         u_nq;            /* queues: possible CPUs */
	unsigned         u_nthr;
	tf_uring_thr_t  *u_thr;
	cpu_set_t        u_cpus;          /* the CPUs the process may use */
	atomic_bool      u_stop;
	pthread_mutex_t  u_lock;
	pthread_cond_t   u_cv;
	unsigned         u_done;          /* u_lock: threads that tried to register */
	int              u_err;           /* u_lock: the first registration error */
};

/* The ring entry whose request this thread is serving (NULL: none). */
static __thread tf_uring_ent_t *tf_uring_cur;

/* ---- the session's I/O hooks ---- */

/*
 * Reading /dev/fuse once the rings serve (see "Forgets" above): one
 * reader at a time, each read at least TF_RD_GAP_NS after the last.
 */
static ssize_t
tf_io_read(int fd, void *buf, size_t len, void *userdata)
{
	tarn_fuse_t *t = userdata;
	tf_req_end();
	if (!__atomic_load_n(&t->tf_uring_on, __ATOMIC_ACQUIRE)) {
		ssize_t r;
		do      /* libfuse serves it next, on this thread (unless answered here) */
			r = read(fd, buf, len);
		while (r > 0 && (r = (ssize_t)tf_swap_take(t, fd, buf, (size_t)r)) == 0);
		return (r);
	}
	pthread_mutex_lock(&t->tf_rd_lock);
	uint64_t since = tarn_now_ns() - t->tf_rd_last;
	if (since < TF_RD_GAP_NS) {
		struct timespec ts = { 0, (long)(TF_RD_GAP_NS - since) };
		(void) nanosleep(&ts, NULL);
	}
	ssize_t r;
	do
		r = read(fd, buf, len);
	while (r > 0 && (r = (ssize_t)tf_swap_take(t, fd, buf, (size_t)r)) == 0);
	int e = errno;
	t->tf_rd_last = tarn_now_ns();
	if (r > 0)
		atomic_fetch_add_explicit(&t->tf_dev_reads, 1, memory_order_relaxed);
	pthread_mutex_unlock(&t->tf_rd_lock);
	errno = e;
	return (r);
}

/* The reply of the request on ent: into its buffers, for the commit. */
static ssize_t
tf_uring_take_reply(tf_uring_ent_t *ent, const struct iovec *iov, int count)
{
	tf_uring_t *u = ent->ue_thr->ut_u;
	struct fuse_out_header oh;
	memcpy(&oh, iov[0].iov_base, sizeof (oh));
	size_t total = iov[0].iov_len, n = 0;
	for (int i = 1; i < count; i++)
		total += iov[i].iov_len;
	if (total - iov[0].iov_len > u->u_payload) {
		oh.error = -EIO;        /* cannot happen: max_write bounds every reply */
	} else {
		for (int i = 1; i < count; i++) {
			if (iov[i].iov_len != 0)
				memcpy(ent->ue_payload + n, iov[i].iov_base, iov[i].iov_len);
			n += iov[i].iov_len;
		}
	}
	oh.len = (uint32_t)(sizeof (oh) + n);
	memcpy(ent->ue_hdr->in_out, &oh, sizeof (oh));
	ent->ue_hdr->ent_io.payload_sz = (uint32_t)n;
	ent->ue_replied = true;
	return ((ssize_t)total);
}

/*
 * The first reply of a session answers INIT (the kernel sends nothing
 * else until INIT is answered).  It gains what libfuse 3.14 cannot ask
 * for: the request flags of tarn_fuse_req.c, and io_uring, noting the
 * largest payload the kernel will expect.
 */
static void
tf_init_reply(tarn_fuse_t *t, struct iovec *iov, int count)
{
	struct fuse_out_header oh;
	if (count < 2 || iov[0].iov_len < sizeof (oh) ||
	    iov[1].iov_len < sizeof (struct fuse_init_out))
		return;
	memcpy(&oh, iov[0].iov_base, sizeof (oh));
	if (oh.error != 0)
		return;
	struct fuse_init_out *io = iov[1].iov_base;
	tf_req_init_flags(t, io);
	if (!t->tf_opts.tfo_uring)
		return;
	size_t pl = io->max_write;
	if ((size_t)io->max_pages * 4096 > pl)
		pl = (size_t)io->max_pages * 4096;
	if (pl < 8192)
		pl = 8192;
	t->tf_uring_payload = pl;
	io->flags |= TF_INIT_EXT;
	io->flags2 |= TF_INIT2_OVER_URING;
	t->tf_uring_asked = true;
}

static ssize_t
tf_io_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	tarn_fuse_t *t = userdata;
	tf_uring_ent_t *ent = tf_uring_cur;
	if (ent != NULL && count >= 1 && iov[0].iov_len >= sizeof (struct fuse_out_header) &&
	    !ent->ue_replied) {
		const struct fuse_out_header *oh = iov[0].iov_base;
		if (oh->unique == ent->ue_unique)
			return (tf_uring_take_reply(ent, iov, count));
	}
	bool first = !atomic_load(&t->tf_init_replied);
	if (first)
		tf_init_reply(t, iov, count);
	ssize_t r = writev(fd, iov, count);
	if (first) {
		int e = errno;
		pthread_mutex_lock(&t->tf_lock);
		atomic_store(&t->tf_init_replied, true);
		pthread_cond_broadcast(&t->tf_cv);
		pthread_mutex_unlock(&t->tf_lock);
		errno = e;
	}
	return (r);
}

bool
tarn_fuse_uring_enabled(void)
{
	char c = 'N';
	int fd = open("/sys/module/fuse/parameters/enable_uring", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return (false);
	if (read(fd, &c, 1) != 1)
		c = 'N';
	close(fd);
	return (c == 'Y' || c == 'y' || c == '1');
}

int
tarn_fuse_hook_io(tarn_fuse_t *t)
{
	static const struct fuse_custom_io io = {
		.read = tf_io_read,
		.writev = tf_io_writev,
	};
	int fd = fuse_session_fd(t->tf_se);
	if (fd < 0 || fuse_session_custom_io(t->tf_se, &io, fd) != 0)
		return (SET_ERROR(EINVAL));
	return (0);
}

/* ---- the workers ---- */

static struct io_uring_sqe *
tf_uring_get_sqe(struct io_uring *r)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(r);
	if (sqe == NULL) {
		(void) io_uring_submit(r);
		sqe = io_uring_get_sqe(r);
	}
	return (sqe);
}

static int
tf_uring_queue_cmd(tf_uring_ent_t *ent, uint32_t op)
{
	tf_uring_thr_t *th = ent->ue_thr;
	struct io_uring_sqe *sqe = tf_uring_get_sqe(&th->ut_ring);
	if (sqe == NULL)
		return (SET_ERROR(EBUSY));
	memset(sqe, 0, 128);            /* SQE128: the command area is 80 bytes */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = th->ut_u->u_fd;
	sqe->cmd_op = op;
	sqe->addr = (uint64_t)(uintptr_t)ent->ue_iov;
	sqe->len = 2;
	tf_uring_cmd_t *c = (tf_uring_cmd_t *)(void *)sqe->cmd;
	c->qid = (uint16_t)th->ut_qid;
	c->commit_id = op == TF_URING_COMMIT ? ent->ue_unique : 0;
	io_uring_sqe_set_data(sqe, ent);
	return (0);
}

/* Answer the request on ent with an error of our own (no handler did). */
static void
tf_uring_fail(tf_uring_ent_t *ent, int err)
{
	struct fuse_out_header oh = {
		.len = sizeof (oh), .error = -err, .unique = ent->ue_unique,
	};
	memcpy(ent->ue_hdr->in_out, &oh, sizeof (oh));
	ent->ue_hdr->ent_io.payload_sz = 0;
	ent->ue_replied = true;
}

/* Serve the request the kernel put in ent's buffers. */
static void
tf_uring_serve(tf_uring_ent_t *ent)
{
	tf_uring_t *u = ent->ue_thr->ut_u;
	tf_uring_hdr_t *h = ent->ue_hdr;
	struct fuse_in_header in;
	memcpy(&in, h->in_out, sizeof (in));
	size_t hl = sizeof (in), pl = h->ent_io.payload_sz;
	ent->ue_unique = in.unique;
	ent->ue_replied = false;
	if (pl > u->u_payload || in.len < hl + pl || in.len - hl - pl > sizeof (h->op_in)) {
		tarn_dprintf("fuse-uring: malformed request (opcode %u len %u payload %zu)\n",
		    in.opcode, in.len, pl);
		tf_uring_fail(ent, EIO);
		return;
	}
	size_t opl = in.len - hl - pl;
	char *p = ent->ue_payload - opl - hl;
	memcpy(p, &in, hl);
	memcpy(p + hl, h->op_in, opl);
	int stale = tf_swap_enter(u->u_t, p, in.len);
	if (stale != 0) {       /* from before a swap (tarn_fuse_swap.c) */
		tf_uring_fail(ent, stale);
		tf_req_end();
		ent->ue_bulk = false;
		return;
	}
	size_t len = tf_req_begin(u->u_t, p, in.len);
	struct fuse_buf fb = { .size = len, .mem = p };
	tf_uring_cur = ent;
	fuse_session_process_buf(u->u_t->tf_se, &fb);
	tf_req_end();
	tf_uring_cur = NULL;
	if (!ent->ue_replied)
		tf_uring_fail(ent, EIO);
	ent->ue_bulk = pl > TF_URING_BULK || h->ent_io.payload_sz > TF_URING_BULK;
}

/* Pin the calling thread to cpu when that CPU is ours to use. */
static void
tf_uring_pin(unsigned cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	(void) pthread_setaffinity_np(pthread_self(), sizeof (set), &set);
}

/* A large read or write: a READ asking for, or a request carrying, over TF_URING_BULK. */
static bool
tf_uring_is_bulk(const tf_uring_hdr_t *h)
{
	struct fuse_in_header in;
	memcpy(&in, h->in_out, sizeof (in));
	if (h->ent_io.payload_sz > TF_URING_BULK)
		return (true);
	if (in.opcode != FUSE_READ)
		return (false);
	struct fuse_read_in ri;
	memcpy(&ri, h->op_in, sizeof (ri));
	return (ri.size > TF_URING_BULK);
}

/*
 * Where a pinned thread serves its next request: on its own CPU when it
 * is small, and on any of the process's CPUs, wherever the scheduler
 * finds room, when it is a large read or write.  The caller of a large
 * request keeps working while it is served (fio copies the megabyte read
 * ahead before it; the writer dirties the next pages), and served on the
 * caller's CPU the two took turns while the other CPUs idled: 512 MiB
 * read cold at 1230 MiB/s, from our cache at 1650, against 1430-1510 and
 * 2250-2690 with the threads not pinned.  (Sending them to the other CPUs
 * only, a forced migration each time, measured 5-10% slower on writes.)
 * A thread's mask changes only when the kind of its requests does.
 */
static void
tf_uring_place(tf_uring_thr_t *th, bool bulk)
{
	if (!th->ut_pinned || bulk == th->ut_away)
		return;
	if (!bulk) {
		tf_uring_pin(th->ut_qid);
		th->ut_away = false;
	} else if (pthread_setaffinity_np(pthread_self(), sizeof (th->ut_u->u_cpus),
	    &th->ut_u->u_cpus) == 0) {
		th->ut_away = true;
	}
}

static int
tf_uring_ring_init(tf_uring_thr_t *th)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof (p));
	p.flags = IORING_SETUP_SQE128 | IORING_SETUP_SINGLE_ISSUER |
	    IORING_SETUP_DEFER_TASKRUN;
	int e = io_uring_queue_init_params(4, &th->ut_ring, &p);
	if (e == -EINVAL) {             /* a kernel without DEFER_TASKRUN */
		memset(&p, 0, sizeof (p));
		p.flags = IORING_SETUP_SQE128;
		e = io_uring_queue_init_params(4, &th->ut_ring, &p);
	}
	return (e < 0 ? -e : 0);
}

/* Register our entry; a failure completes at once, success only with a request. */
static int
tf_uring_register(tf_uring_thr_t *th)
{
	int e = tf_uring_queue_cmd(&th->ut_ent, TF_URING_REGISTER);
	if (e != 0)
		return (e);
	int n = io_uring_submit(&th->ut_ring);
	if (n < 0)
		return (-n);
	struct io_uring_cqe *cqe;
	if (io_uring_peek_cqe(&th->ut_ring, &cqe) == 0 && cqe->res < 0) {
		e = -cqe->res;
		io_uring_cqe_seen(&th->ut_ring, cqe);
		return (e);
	}
	return (0);
}

static void
tf_uring_report(tf_uring_t *u, int err)
{
	pthread_mutex_lock(&u->u_lock);
	u->u_done++;
	if (err != 0 && u->u_err == 0)
		u->u_err = err;
	pthread_cond_broadcast(&u->u_cv);
	pthread_mutex_unlock(&u->u_lock);
}

/*
 * Right after serving: submit the commits and poll the ring for the next
 * request while some queue served one within u_poll_ns.  One thread of a
 * queue polls, the one that committed last: the kernel gives a request to
 * the entry that became free last, so that is the ring it will come to.
 * (When the first poller kept polling, a request that had come meanwhile,
 * such as the RELEASE after each close, left the next request to a
 * sleeping thread: a wake-up for every file fio created.)  True with a
 * completion waiting to be peeked.
 */
static bool
tf_uring_poll(tf_uring_thr_t *th)
{
	tf_uring_t *u = th->ut_u;
	tf_uring_q_t *q = &u->u_q[th->ut_qid];
	if (u->u_poll_ns <= 0)
		return (false);
	atomic_store(&q->uq_poller, th);        /* an earlier poller stops */
	bool got = false;
	struct io_uring_cqe *cqe;
	if (io_uring_submit(&th->ut_ring) >= 0) {
		for (;;) {
			(void) io_uring_get_events(&th->ut_ring);       /* runs the kernel's task work */
			if (io_uring_peek_cqe(&th->ut_ring, &cqe) == 0) {
				got = true;
				break;
			}
			long last = atomic_load_explicit(&u->u_last_ns, memory_order_relaxed);
			long bulk = atomic_load_explicit(&u->u_bulk_ns, memory_order_relaxed);
			long now = (long)tarn_now_ns();
			if (now - last > u->u_poll_ns || now - bulk < TF_URING_BULK_NS ||
			    atomic_load(&u->u_stop) || atomic_load(&q->uq_poller) != th)
				break;
			sched_yield();          /* a caller woken on this CPU runs first */
		}
	}
	tf_uring_thr_t *self = th;
	(void) atomic_compare_exchange_strong(&q->uq_poller, &self, NULL);
	return (got);
}

static void *
tf_uring_main(void *arg)
{
	tf_uring_thr_t *th = arg;
	tf_uring_t *u = th->ut_u;
	if (th->ut_pinned)
		tf_uring_pin(th->ut_qid);
	int e = tf_uring_ring_init(th);
	if (e != 0) {
		tf_uring_report(u, e);
		return (NULL);
	}
	e = tf_uring_register(th);
	tf_uring_report(u, e);
	bool live = e == 0, served = false;
	while (live && !atomic_load(&u->u_stop)) {
		struct __kernel_timespec ts = { .tv_sec = 1 };
		struct io_uring_cqe *cqe = NULL;
		if (!served || !tf_uring_poll(th)) {
			int r = io_uring_submit_and_wait_timeout(&th->ut_ring, &cqe, 1, &ts, NULL);
			if (r < 0 && r != -ETIME && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
				tarn_dprintf("fuse-uring: wait: %s\n", strerror(-r));
				break;
			}
		}
		served = false;
		while (io_uring_peek_cqe(&th->ut_ring, &cqe) == 0) {
			tf_uring_ent_t *ent = io_uring_cqe_get_data(cqe);
			int res = cqe->res;
			io_uring_cqe_seen(&th->ut_ring, cqe);
			if (ent == NULL)
				continue;
			if (res < 0) {          /* the kernel ended the entry */
				live = false;
				continue;
			}
			bool bulk = tf_uring_is_bulk(ent->ue_hdr);
			tf_uring_place(th, bulk);
			if (bulk && th->ut_away)
				atomic_fetch_add_explicit(&u->u_t->tf_uring_unpinned, 1,
				    memory_order_relaxed);
			tf_uring_serve(ent);
			atomic_store_explicit(ent->ue_bulk ? &u->u_bulk_ns : &u->u_last_ns,
			    (long)tarn_now_ns(), memory_order_relaxed);
			served |= !ent->ue_bulk;
			if (tf_uring_queue_cmd(ent, TF_URING_COMMIT) != 0)
				live = false;
		}
	}
	io_uring_queue_exit(&th->ut_ring);
	return (NULL);
}

/* How many queues the kernel made: one per possible CPU (highest id + 1). */
static unsigned
tf_uring_possible_cpus(void)
{
	unsigned n = 0;
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	if (f != NULL) {
		char buf[256];
		if (fgets(buf, sizeof (buf), f) != NULL) {
			for (char *s = buf; *s != '\0';) {
				char *end;
				unsigned long v = strtoul(s, &end, 10);
				if (end == s)
					break;
				if (v + 1 > n)
					n = (unsigned)v + 1;
				s = end;
				while (*s == ',' || *s == '-')
					s++;
			}
		}
		fclose(f);
	}
	return (n);
}

static void
tf_uring_free(tf_uring_t *u)
{
	for (unsigned i = 0; i < u->u_nthr; i++) {
		tf_uring_thr_t *th = &u->u_thr[i];
		if (th->ut_map != NULL)
			munmap(th->ut_map, th->ut_maplen);
	}
	pthread_mutex_destroy(&u->u_lock);
	pthread_cond_destroy(&u->u_cv);
	tarn_free(u->u_thr);
	tarn_free(u->u_q);
	tarn_free(u);
}

void
tarn_fuse_uring_stop(tarn_fuse_t *t)
{
	tf_uring_t *u = t->tf_uring;
	if (u == NULL)
		return;
	atomic_store(&u->u_stop, true);
	for (unsigned i = 0; i < u->u_nthr; i++) {
		if (u->u_thr[i].ut_started)
			pthread_join(u->u_thr[i].ut_thread, NULL);
	}
	t->tf_uring = NULL;
	tf_uring_free(u);
}

int
tarn_fuse_uring_start(tarn_fuse_t *t)
{
	if (!t->tf_uring_asked || t->tf_uring_payload == 0)
		return (SET_ERROR(ENOTSUP));
	unsigned nq = tf_uring_possible_cpus();
	if (nq == 0 || nq > TF_URING_MAX_Q)
		return (SET_ERROR(ENOTSUP));
	unsigned per = TF_URING_PER_CPU;
	while (per > 1 && nq * per > TF_URING_MAX_THR)
		per--;
	tf_uring_t *u = tarn_alloc(sizeof (*u));
	u->u_t = t;
	u->u_fd = fuse_session_fd(t->tf_se);
	u->u_payload = t->tf_uring_payload;
	u->u_nq = nq;
	u->u_nthr = nq * per;
	u->u_q = tarn_alloc(sizeof (tf_uring_q_t) * nq);
	u->u_poll_ns = (long)t->tf_opts.tfo_poll_us * 1000;
	tarn_thread_cpus(&u->u_cpus);
	u->u_thr = tarn_alloc(sizeof (tf_uring_thr_t) * u->u_nthr);
	VERIFY0(pthread_mutex_init(&u->u_lock, NULL));
	VERIFY0(pthread_cond_init(&u->u_cv, NULL));
	t->tf_uring = u;

	int err = 0;
	unsigned started = 0;
	for (unsigned i = 0; i < u->u_nthr && err == 0; i++) {
		tf_uring_thr_t *th = &u->u_thr[i];
		th->ut_u = u;
		th->ut_qid = i % nq;
		th->ut_pinned = true;
		th->ut_maplen = TF_URING_PREFIX + u->u_payload;
		th->ut_map = mmap(NULL, th->ut_maplen, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (th->ut_map == MAP_FAILED) {
			th->ut_map = NULL;
			err = SET_ERROR(ENOMEM);
			break;
		}
		tf_uring_ent_t *ent = &th->ut_ent;
		ent->ue_thr = th;
		ent->ue_hdr = &th->ut_hdr;
		ent->ue_payload = (char *)th->ut_map + TF_URING_PREFIX;
		ent->ue_iov[0] = (struct iovec){ .iov_base = ent->ue_hdr,
		    .iov_len = sizeof (tf_uring_hdr_t) };
		ent->ue_iov[1] = (struct iovec){ .iov_base = ent->ue_payload,
		    .iov_len = u->u_payload };
		err = pthread_create(&th->ut_thread, NULL, tf_uring_main, th);
		if (err == 0) {
			th->ut_started = true;
			started++;
		}
	}
	pthread_mutex_lock(&u->u_lock);
	while (u->u_done < started)
		pthread_cond_wait(&u->u_cv, &u->u_lock);
	if (err == 0)
		err = u->u_err;
	pthread_mutex_unlock(&u->u_lock);
	if (err != 0) {
		/*
		 * Some queue has no entry, so the kernel never switches to the
		 * rings; the registered entries are cancelled as their rings close.
		 */
		tarn_dprintf("fuse-uring: not used: %s\n", strerror(err));
		tarn_fuse_uring_stop(t);
		return (err);
	}
	__atomic_store_n(&t->tf_uring_on, true, __ATOMIC_RELEASE);
	return (0);
}
