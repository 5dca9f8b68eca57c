/*
 * tarn_fuse_space.c — a full pool under the kernel's writeback cache:
 * write(2) must fail with ENOSPC once the pool is full, and whatever a
 * reader sees must be what the pool holds.
 *
 * Theory
 * ------
 * With the writeback cache a write(2) only copies into the kernel's page
 * cache; the data reaches us later, as a write-back, when nobody can be
 * told any more but fsync and close.  Three mechanisms close that gap
 * (docs/DESIGN.md, "A full pool"):
 *
 * 1. A reserve for what the kernel holds.  The kernel's dirty pages of a
 *    FUSE mount are bounded (its bdi has a strict limit: max_bytes, which
 *    we set when root and read back otherwise).  Twice that bound (dirty
 *    pages and pages being written back) is kept free in the pool for
 *    write-backs (posix_fs_set_reserve): every other change, and a write
 *    that does not come from the cache, stops short of it.  So once the
 *    pool is "full" for new writes, what the kernel already accepted
 *    still fits.
 *
 * 2. The gate: write(2) asks us before it caches.  With the writeback
 *    cache the kernel refreshes a file's attributes (mode and size) before
 *    every cached write(2) when they are stale, by a GETATTR that carries
 *    the open file's handle, and fails the write(2) with that GETATTR's
 *    error.  So when the pool is full we make the attributes of every
 *    file open for writing stale (an attribute-only invalidation, which
 *    marks the mode stale without touching pages) and answer such a
 *    GETATTR through a handle that may write with ENOSPC (EDQUOT under a
 *    quota): the write(2) fails before anything is cached, and every
 *    later one asks again (a failed GETATTR leaves them stale).  A stat
 *    or a GETATTR through a read-only handle is answered as always, with
 *    a zero attribute timeout while the pool is full, so that a writer's
 *    next write(2) still asks.  lseek(SEEK_END) asks for the size only,
 *    which the kernel keeps itself, so it never meets the gate.
 *    mmap writes cannot be asked about: they live on the reserve, and
 *    past it they fail at write-back (below), reported at msync, fsync
 *    and close.
 *
 * 3. A write-back that fails anyway (the reserve was too small: several
 *    mounts of one pool, mmap) is reported at fsync and close as before
 *    (tarn_fuse_io.c), and the kernel's copy of what failed is dropped:
 *    its pages are invalidated (by the notifier thread below, never from
 *    a request handler: the invalidation waits for page locks that
 *    readers may hold while they wait for a request of ours), and the
 *    file's size on disk is extended to where the failed write ended,
 *    since the kernel keeps its own larger size of a cached file.  So a
 *    reader sees exactly what is on disk, before and after drop_caches,
 *    a remount or a crash.
 */
#include "tarn_fuse_impl.h"

#include <fcntl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define TF_DIRTY_MIN   (8ULL << 20)
#define TF_DIRTY_MAX   (32ULL << 20)

typedef struct tf_inval {
	posix_ino_t      ti_ino;
	int64_t          ti_off;       /* < 0: attributes only */
	int64_t          ti_len;
	struct tf_inval *ti_next;
} tf_inval_t;

struct tf_space {
	pthread_mutex_t  ts_lock;
	pthread_cond_t   ts_cv;
	pthread_t        ts_thread;
	bool             ts_started;
	bool             ts_exit;      /* ts_lock */
	tf_inval_t      *ts_head;      /* ts_lock; FIFO */
	tf_inval_t     **ts_tail;      /* ts_lock */
	atomic_bool      ts_full;      /* the gate is closed (latched until a gate opens) */
	uint64_t         ts_dirty;     /* the kernel's bound on the mount's dirty pages */
};

/* ---- the notifier ---- */

static void *
tf_space_thread(void *arg)
{
	tarn_fuse_t *t = arg;
	struct tf_space *ts = t->tf_space;
	pthread_mutex_lock(&ts->ts_lock);
	for (;;) {
		while (ts->ts_head == NULL && !ts->ts_exit)
			pthread_cond_wait(&ts->ts_cv, &ts->ts_lock);
		if (ts->ts_head == NULL)
			break;
		tf_inval_t *ti = ts->ts_head;
		ts->ts_head = ti->ti_next;
		if (ts->ts_head == NULL)
			ts->ts_tail = &ts->ts_head;
		pthread_mutex_unlock(&ts->ts_lock);
		(void) fuse_lowlevel_notify_inval_inode(t->tf_se, TF_FINO(t, ti->ti_ino),
		    ti->ti_off, ti->ti_len);
		tarn_free(ti);
		pthread_mutex_lock(&ts->ts_lock);
	}
	pthread_mutex_unlock(&ts->ts_lock);
	return (NULL);
}

/* Queue an invalidation of ino (off < 0: its attributes only). */
static void
tf_space_inval(tarn_fuse_t *t, posix_ino_t ino, int64_t off, int64_t len)
{
	struct tf_space *ts = t->tf_space;
	if (ts == NULL || !ts->ts_started)
		return;
	tf_inval_t *ti = tarn_alloc(sizeof (*ti));
	ti->ti_ino = ino;
	ti->ti_off = off;
	ti->ti_len = len;
	pthread_mutex_lock(&ts->ts_lock);
	if (ts->ts_exit) {
		pthread_mutex_unlock(&ts->ts_lock);
		tarn_free(ti);
		return;
	}
	*ts->ts_tail = ti;
	ts->ts_tail = &ti->ti_next;
	pthread_cond_signal(&ts->ts_cv);
	pthread_mutex_unlock(&ts->ts_lock);
}

static void
tf_space_inval_attr_cb(void *arg, posix_ino_t ino)
{
	tf_space_inval(arg, ino, -1, 0);
}

/*
 * The pool has become full for new writes: make every writer's
 * attributes stale, so that its next write(2) meets the gate.
 */
static void
tf_space_close_gate(tarn_fuse_t *t)
{
	struct tf_space *ts = t->tf_space;
	if (atomic_exchange(&ts->ts_full, true))
		return;
	tarn_fuse_nodes_each_writer(&t->tf_nodes, tf_space_inval_attr_cb, t);
}

/* ---- the kernel's bound on dirty pages ---- */

static uint64_t
tf_bdi_read(tarn_fuse_t *t, const char *what)
{
	char path[128], v[32];
	snprintf(path, sizeof (path), "/sys/class/bdi/%u:%u/%s", major(t->tf_dev),
	    minor(t->tf_dev), what);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return (0);
	ssize_t n = read(fd, v, sizeof (v) - 1);
	close(fd);
	if (n <= 0)
		return (0);
	v[n] = '\0';
	return (strtoull(v, NULL, 10));
}

static void
tf_bdi_write(tarn_fuse_t *t, const char *what, uint64_t value)
{
	char path[128], v[32];
	snprintf(path, sizeof (path), "/sys/class/bdi/%u:%u/%s", major(t->tf_dev),
	    minor(t->tf_dev), what);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	int n = snprintf(v, sizeof (v), "%" PRIu64 "\n", value);
	if (write(fd, v, (size_t)n) != n)
		tarn_dprintf("fuse: cannot set %s\n", path);
	close(fd);
}

/*
 * The mount's dirty-page bound: 1/64 of what the file system may hold
 * when it starts, within [8 MiB, 32 MiB] (the kernel's own default for a
 * FUSE mount is 1% of its dirty threshold, ~50 MiB on 24 GiB), set as
 * the bdi's max_bytes (a strict limit for FUSE) when root; otherwise the
 * kernel's figure as it stands.  0 when unknown (no reserve).
 */
static uint64_t
tf_space_dirty_bound(tarn_fuse_t *t)
{
	if (!t->tf_have_dev)
		return (0);
	if (geteuid() == 0) {
		struct statvfs sv;
		uint64_t want = TF_DIRTY_MAX;
		if (posix_statfs(t->tf_fs, &sv) == 0)
			want = MIN(TF_DIRTY_MAX, MAX(TF_DIRTY_MIN,
			    (uint64_t)sv.f_blocks * sv.f_frsize / 64));
		tf_bdi_write(t, "max_bytes", want);
	}
	return (tf_bdi_read(t, "max_bytes"));
}

/* ---- the hooks ---- */

void
tf_space_start(tarn_fuse_t *t)
{
	if (!t->tf_writeback || t->tf_opts.tfo_readonly)
		return;
	struct tf_space *ts = tarn_alloc(sizeof (*ts));
	VERIFY0(pthread_mutex_init(&ts->ts_lock, NULL));
	VERIFY0(pthread_cond_init(&ts->ts_cv, NULL));
	ts->ts_tail = &ts->ts_head;
	atomic_init(&ts->ts_full, false);
	ts->ts_dirty = tf_space_dirty_bound(t);
	t->tf_space = ts;
	if (pthread_create(&ts->ts_thread, NULL, tf_space_thread, t) == 0)
		ts->ts_started = true;
	/* dirty pages, and as many again on their way to us */
	posix_fs_set_reserve(t->tf_fs, 2 * ts->ts_dirty);
}

void
tf_space_stop(tarn_fuse_t *t)
{
	struct tf_space *ts = t->tf_space;
	if (ts == NULL)
		return;
	pthread_mutex_lock(&ts->ts_lock);
	ts->ts_exit = true;
	pthread_cond_signal(&ts->ts_cv);
	pthread_mutex_unlock(&ts->ts_lock);
	if (ts->ts_started)
		pthread_join(ts->ts_thread, NULL);
	while (ts->ts_head != NULL) {
		tf_inval_t *ti = ts->ts_head;
		ts->ts_head = ti->ti_next;
		tarn_free(ti);
	}
	if (t->tf_fs != NULL)   /* NULL: a swap found nothing to serve */
		posix_fs_set_reserve(t->tf_fs, 0);
	pthread_cond_destroy(&ts->ts_cv);
	pthread_mutex_destroy(&ts->ts_lock);
	tarn_free(ts);
	t->tf_space = NULL;
}

void
tf_space_swapped(tarn_fuse_t *t)
{
	if (t->tf_space != NULL && t->tf_fs != NULL)
		posix_fs_set_reserve(t->tf_fs, 2 * t->tf_space->ts_dirty);
}

void
tf_space_open(tarn_fuse_t *t, posix_ino_t ino, struct fuse_file_info *fi)
{
	fi->fh = tf_swap_fh(t);
	if ((fi->flags & O_ACCMODE) == O_RDONLY)
		return;
	/* counted with or without the gate: read-around stores skip such files */
	fi->fh |= TF_FH_WRITER;
	tarn_fuse_nodes_writers(&t->tf_nodes, ino, 1);
	if (t->tf_space != NULL && atomic_load(&t->tf_space->ts_full))
		tf_space_inval(t, ino, -1, 0);
}

void
tf_space_release(tarn_fuse_t *t, posix_ino_t ino, struct fuse_file_info *fi)
{
	if (fi != NULL && (fi->fh & TF_FH_WRITER))
		tarn_fuse_nodes_writers(&t->tf_nodes, ino, -1);
}

int
tf_space_gate(tarn_fuse_t *t, posix_ino_t ino, struct fuse_file_info *fi)
{
	struct tf_space *ts = t->tf_space;
	if (ts == NULL || fi == NULL || !(fi->fh & TF_FH_WRITER))
		return (0);
	int e = posix_space_gate(t->tf_fs, true);
	if (e == ENOSPC || e == EDQUOT) {
		tf_space_close_gate(t);
		return (e);
	}
	atomic_store(&ts->ts_full, false);
	return (0);
}

double
tf_space_attr_tmo(tarn_fuse_t *t)
{
	struct tf_space *ts = t->tf_space;
	return (ts != NULL && atomic_load(&ts->ts_full) ? 0.0 : t->tf_attr_tmo);
}

void
tf_space_written(tarn_fuse_t *t, posix_ino_t ino, uint64_t off, uint64_t len, int err)
{
	if (t->tf_space == NULL)
		return;
	if (err != 0)   /* the kernel's copy of what failed goes (the size: tf_write_buf) */
		tf_space_inval(t, ino, (int64_t)off, (int64_t)len);
	if (err != 0 || posix_space_gate(t->tf_fs, false) != 0) {
		tf_space_close_gate(t);
		/* a writer got past the gate: it asks again at its next write(2) */
		tf_space_inval(t, ino, -1, 0);
	}
}
