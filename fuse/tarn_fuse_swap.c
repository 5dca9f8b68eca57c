/*
 * tarn_fuse_swap.c — serving another file system on the same mount: zfs
 * rollback of a mounted file system (and receive, later) replaces the
 * dataset's object set while programs use the mount, and they must see
 * the new contents at once, without an unmount.
 *
 * Theory
 * ------
 * The swap.  The caller (host/host_swap.c) runs tarn_fuse_swap_begin,
 * closes the old posix_fs_t, replaces the object set, opens the new one
 * and hands it to tarn_fuse_swap_end.  begin closes a gate: every request
 * passes it between being read (from /dev/fuse or a ring) and libfuse
 * (tf_swap_take, tf_swap_enter), and counts as in flight until its thread
 * takes the next one (tf_req_end); with the gate closed new requests wait
 * in their threads, and begin waits for those in flight (30 s at most:
 * EBUSY, nothing changed).  One atomic counter and one flag, checked with
 * sequentially consistent atomics in the order "count, then look at the
 * flag" against "set the flag, then look at the count", so the common
 * path takes no lock.  Then begin gives the kernel's references back to
 * the old fs (posix_forget: files unlinked while open go with it) and the
 * caller may close it.  end installs the new fs, opens the gate and
 * invalidates (below).  No request ever sees half a swap: between the
 * two the gate is closed and nothing reaches either fs.
 *
 * What the kernel holds.  Dentries (names, positive and negative, trusted
 * for the entry timeout), inodes by node id with their attributes and
 * pages (with the writeback cache it keeps its own size and times of a
 * regular file and never takes ours again), and open files with our file
 * handles.  All of it describes the old fs, and node ids (object numbers)
 * of the old fs mean other files, or none, in the new one.
 *
 * - Names: end bumps the kernel's dentry epoch (FUSE_NOTIFY_INC_EPOCH,
 *   Linux 6.16) while the gate is closed, so every cached name, negative
 *   ones too, is looked up again before its next use, and every lookup
 *   sent after the bump is answered from the new fs.  The node table keeps
 *   no names, so per-name invalidation (notify_inval_entry) is not an
 *   option; a kernel without the epoch gets ENOTSUP from begin (it probes
 *   with a first bump, which costs nothing but lookups), before anything
 *   changed, and the caller unmounts and mounts again instead.
 * - Inodes: live node ids carry the swap epoch in bits 36-47 (TF_FINO;
 *   0 before the first swap, so nothing changes for a mount never
 *   swapped; bits 48-63 are the .zfs slot, 0 for the live fs), so a file
 *   looked up again after a swap gets a node id the kernel has never seen
 *   and a fresh inode built from our attributes, with the new size, even
 *   where its object number is the same.  (Bumping the generation instead
 *   would make the kernel mark the old inode bad, and its users would get
 *   EIO or ESTALE depending on whether somebody had looked the name up
 *   again.)  The root is node id 1 in every epoch, always the served fs's
 *   root.  Snapshots under .zfs are not the served fs: their node ids,
 *   handles and lookups stay as they are.  After the gate opens the
 *   attributes and pages of the root and of every old inode the kernel
 *   holds are dropped (notify_inval_inode on the old node ids; after,
 *   because dropping a dirty page writes it back through us), so nothing
 *   of the old state is served from the kernel's cache either.
 * - Stale inodes: a request about an old node id can only come from an
 *   old inode, kept by an open file, a working directory or an NFS
 *   handle: it gets ESTALE ("Stale file handle"), never old data nor
 *   another file that has its object number now.
 * - Open files: file handles (fi->fh) carry the swap epoch above the
 *   writer bit (tf_swap_fh); a request with a handle of an earlier epoch
 *   gets ESTALE too, so the write-back of an old inode's dirty pages (that
 *   data belonged to the old state) never lands in the new one.  Every
 *   file open across a swap is stale, even one whose file exists in both
 *   states: stricter than zfs, which lets such a file go on, but with the
 *   writeback cache the kernel's size of it would be the old one.
 *   Releases pass (they only settle counts); a node id that wraps around
 *   (4096 swaps of one mount) could meet an inode still open from then.
 *
 * Lookup counts.  begin gives every reference the kernel holds back to
 * the old fs and keeps the counts as tn_stale in the node table; the
 * kernel forgets its old inodes later, by their old node ids, and those
 * forgets only take from tn_stale.  Lookups of the new epoch are counted
 * and given back to the new fs as ever.
 *
 * A swap that finds nothing to serve (the new fs does not open): end with
 * NULL; every request then gets EIO (forgets are dropped) until the
 * caller unmounts with force.
 *
 * Not when requests are spliced (libfuse reads them itself, past the
 * gate): begin says ENOTSUP.
 */
#include "tarn_fuse_impl.h"

#include <linux/fuse.h>
#include <unistd.h>

#define TF_OP_STATX      52             /* FUSE_STATX: a GETATTR's arguments first */
#define TF_SWAP_WAIT_MS  (30 * 1000)

/* The server whose gate the request this thread serves passed (NULL: none). */
static __thread tarn_fuse_t *tf_sw_cur;

uint64_t
tf_swap_fh(tarn_fuse_t *t)
{
	return (atomic_load_explicit(&t->tf_sw_epoch, memory_order_relaxed) << 1);
}

/* ---- the gate ---- */

/* A request leaves: wake the swap waiting for the last one. */
static void
tf_gate_out(tarn_fuse_t *t)
{
	if (atomic_fetch_sub(&t->tf_sw_inflight, 1) == 1 && atomic_load(&t->tf_sw_closed)) {
		pthread_mutex_lock(&t->tf_lock);
		pthread_cond_broadcast(&t->tf_cv);
		pthread_mutex_unlock(&t->tf_lock);
	}
}

/* A request comes in: wait while the gate is closed. */
static void
tf_gate_in(tarn_fuse_t *t)
{
	for (;;) {
		atomic_fetch_add(&t->tf_sw_inflight, 1);
		if (!atomic_load(&t->tf_sw_closed))
			break;
		tf_gate_out(t);
		pthread_mutex_lock(&t->tf_lock);
		while (atomic_load(&t->tf_sw_closed))
			pthread_cond_wait(&t->tf_cv, &t->tf_lock);
		pthread_mutex_unlock(&t->tf_lock);
	}
	tf_sw_cur = t;
}

void
tf_swap_leave(void)
{
	tarn_fuse_t *t = tf_sw_cur;
	if (t == NULL)
		return;
	tf_sw_cur = NULL;
	tf_gate_out(t);
}

void
tf_swap_hold(tarn_fuse_t *t)
{
	tf_gate_in(t);
}

static void
tf_gate_open(tarn_fuse_t *t)
{
	pthread_mutex_lock(&t->tf_lock);
	atomic_store(&t->tf_sw_closed, false);
	pthread_cond_broadcast(&t->tf_cv);
	pthread_mutex_unlock(&t->tf_lock);
}

/* Close the gate and wait for the requests in flight: 0, EBUSY or ENOTCONN (gate open). */
static int
tf_gate_close(tarn_fuse_t *t)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += TF_SWAP_WAIT_MS / 1000;
	int e = 0;
	pthread_mutex_lock(&t->tf_lock);
	atomic_store(&t->tf_sw_closed, true);
	while (e == 0 && atomic_load(&t->tf_sw_inflight) != 0 && !t->tf_exited) {
		if (pthread_cond_timedwait(&t->tf_cv, &t->tf_lock, &ts) == ETIMEDOUT)
			e = SET_ERROR(EBUSY);
	}
	if (e == 0 && t->tf_exited)
		e = SET_ERROR(ENOTCONN);
	pthread_mutex_unlock(&t->tf_lock);
	if (e != 0)
		tf_gate_open(t);
	return (e);
}

/* ---- requests from before a swap ---- */

/* The 64-bit field at off of a request's arguments a (alen bytes); false when short. */
static bool
tf_arg64(const char *a, size_t alen, size_t off, uint64_t *v)
{
	if (alen < off + sizeof (*v))
		return (false);
	memcpy(v, a + off, sizeof (*v));
	return (true);
}

static bool
tf_fh_stale(tarn_fuse_t *t, uint64_t fh)
{
	return ((fh >> 1) != (atomic_load(&t->tf_sw_epoch) & (UINT64_MAX >> 1)));
}

/*
 * The file handle and the second node id a request carries, where its
 * operation has them (*fh: UINT64_MAX when none).
 */
static void
tf_req_refs(const struct fuse_in_header *in, const char *a, size_t alen, uint64_t *fh,
    uint64_t *fh2, uint64_t *node2)
{
	uint32_t flags = 0;
	*fh = *fh2 = UINT64_MAX;
	*node2 = 0;
	switch (in->opcode) {
	case FUSE_READ: case FUSE_WRITE: case FUSE_FSYNC: case FUSE_FSYNCDIR:
	case FUSE_FLUSH: case FUSE_FALLOCATE: case FUSE_LSEEK: case FUSE_READDIR:
	case FUSE_READDIRPLUS: case FUSE_GETLK: case FUSE_SETLK: case FUSE_SETLKW:
	case FUSE_IOCTL: case FUSE_POLL:
		(void) tf_arg64(a, alen, 0, fh);
		break;
	case FUSE_COPY_FILE_RANGE:      /* fh_in, off_in, nodeid_out, fh_out */
		(void) tf_arg64(a, alen, 0, fh);
		(void) tf_arg64(a, alen, 16, node2);
		(void) tf_arg64(a, alen, 24, fh2);
		break;
	case FUSE_GETATTR: case TF_OP_STATX:    /* getattr_flags, dummy, fh */
		if (alen >= sizeof (flags))
			memcpy(&flags, a, sizeof (flags));
		if (flags & FUSE_GETATTR_FH)
			(void) tf_arg64(a, alen, 8, fh);
		break;
	case FUSE_SETATTR:                      /* valid, padding, fh */
		if (alen >= sizeof (flags))
			memcpy(&flags, a, sizeof (flags));
		if (flags & FATTR_FH)
			(void) tf_arg64(a, alen, 8, fh);
		break;
	case FUSE_LINK:                         /* oldnodeid */
	case FUSE_RENAME: case FUSE_RENAME2:    /* newdir */
		(void) tf_arg64(a, alen, 0, node2);
		break;
	default:
		break;
	}
}

/*
 * What becomes of the request at req: 0 (libfuse serves it), or the
 * errno it is answered with here; *noreply: it must get no answer.
 */
static int
tf_swap_verdict(tarn_fuse_t *t, const char *req, size_t len, bool *noreply)
{
	struct fuse_in_header in;
	*noreply = false;
	if (len < sizeof (in))
		return (0);
	memcpy(&in, req, sizeof (in));
	bool dead = atomic_load(&t->tf_sw_dead);
	switch (in.opcode) {
	case FUSE_FORGET: case FUSE_BATCH_FORGET: case FUSE_INTERRUPT:
		*noreply = true;
		return (dead ? SET_ERROR(EIO) : 0);     /* dropped when nothing is served */
	case FUSE_INIT: case FUSE_DESTROY: case FUSE_RELEASE: case FUSE_RELEASEDIR:
	case FUSE_NOTIFY_REPLY:
		return (0);                             /* they touch no fs */
	default:
		break;
	}
	if (dead)
		return (SET_ERROR(EIO));
	if (atomic_load_explicit(&t->tf_sw_epoch, memory_order_relaxed) == 0)
		return (0);                             /* never swapped */
	uint64_t fh, fh2, node2;
	tf_req_refs(&in, req + sizeof (in), len - sizeof (in), &fh, &fh2, &node2);
	if (TF_SLOT(in.nodeid) != 0)
		fh = UINT64_MAX;        /* under .zfs: snapshots do not change with a swap */
	if (TF_SLOT(node2) != 0)
		fh2 = UINT64_MAX;
	if ((fh != UINT64_MAX && tf_fh_stale(t, fh)) || (fh2 != UINT64_MAX && tf_fh_stale(t, fh2)))
		return (SET_ERROR(ESTALE));
	if (tf_fino_stale(t, in.nodeid) || tf_fino_stale(t, node2))
		return (SET_ERROR(ESTALE));
	return (0);
}

/* Answer the request at req on fd with err (the /dev/fuse path). */
static void
tf_reply_errno(tarn_fuse_t *t, int fd, const char *req, int err)
{
	struct fuse_in_header in;
	memcpy(&in, req, sizeof (in));
	struct fuse_out_header oh = { .len = sizeof (oh), .error = -err, .unique = in.unique };
	atomic_fetch_add_explicit(&t->tf_errors, 1, memory_order_relaxed);
	if (write(fd, &oh, sizeof (oh)) != (ssize_t)sizeof (oh))
		tarn_dprintf("fuse: cannot answer request %" PRIu64 ": %s\n",
		    (uint64_t)in.unique, strerror(errno));
}

size_t
tf_swap_take(tarn_fuse_t *t, int fd, char *req, size_t len)
{
	bool noreply;
	tf_gate_in(t);
	int e = tf_swap_verdict(t, req, len, &noreply);
	if (e == 0)
		return (tf_req_begin(t, req, len));
	if (!noreply)
		tf_reply_errno(t, fd, req, e);
	tf_swap_leave();
	return (0);
}

int
tf_swap_enter(tarn_fuse_t *t, const char *req, size_t len)
{
	bool noreply;
	tf_gate_in(t);
	int e = tf_swap_verdict(t, req, len, &noreply);
	if (e != 0)
		atomic_fetch_add_explicit(&t->tf_errors, 1, memory_order_relaxed);
	return (e);
}

/* ---- the swap ---- */

/*
 * Give one node's references back to the fs that goes and keep its node
 * id; not a snapshot's under .zfs (its key is its node id, slot above 0).
 */
static int
tf_swap_giveback(void *arg, posix_ino_t ino, uint64_t nlookup)
{
	tarn_fuse_t *t = arg;
	if (TF_SLOT(ino) != 0)
		return (1);
	posix_forget(t->tf_fs, ino, nlookup);
	TARN_ARRAY_APPEND(&t->tf_sw_old, uint64_t, (uint64_t)TF_FINO(t, ino));
	return (0);
}

int
tarn_fuse_swap_begin(tarn_fuse_t *t)
{
	if (tarn_fuse_exited(t) || atomic_load(&t->tf_sw_dead))
		return (SET_ERROR(ENOTCONN));
	if (!t->tf_hooked || t->tf_splice)
		return (SET_ERROR(ENOTSUP));
	/* the probe: without the epoch nothing would make the kernel drop every name */
	int e = tf_notify_inc_epoch(t);
	if (e != 0)
		return (e);
	if ((e = tf_gate_close(t)) != 0)
		return (e);
	t->tf_sw_old = (tarn_array_t)TARN_ARRAY_INIT(uint64_t);
	tarn_fuse_nodes_retire(&t->tf_nodes, tf_swap_giveback, t);
	return (0);
}

void
tarn_fuse_swap_end(tarn_fuse_t *t, posix_fs_t *fs)
{
	t->tf_fs = fs;
	if (fs != NULL) {
		t->tf_root = posix_fs_root(fs);
		tf_space_swapped(t);
	} else {
		atomic_store(&t->tf_sw_dead, true);
	}
	atomic_fetch_add(&t->tf_sw_epoch, 1);
	/* with the gate closed: every lookup sent after it is answered from fs */
	(void) tf_notify_inc_epoch(t);
	tf_gate_open(t);
	/* a read-around store of the old state is done by now, or never (the epoch) */
	tf_around_fence(t);
	if (fs != NULL) {
		(void) fuse_lowlevel_notify_inval_inode(t->tf_se, FUSE_ROOT_ID, 0, 0);
		for (size_t i = 0; i < tarn_array_len(&t->tf_sw_old); i++)
			(void) fuse_lowlevel_notify_inval_inode(t->tf_se,
			    TARN_ARRAY_AT(&t->tf_sw_old, uint64_t, i), 0, 0);
	}
	tarn_array_fini(&t->tf_sw_old);
}
