/*
 * tarn_fuse_around.c — read-around: after a small read from the middle of
 * a record, the rest of that record goes into the kernel's page cache too
 * (FUSE's notify_store), so the next reads of it never leave the kernel.
 *
 * Theory
 * ------
 * Why.  A 4 KiB read(2) of a page the kernel does not have costs a FUSE
 * round trip (a request, a wake-up of a server thread and of the caller:
 * 15-25 us here), where a page-cache hit costs one or two.  The kernel's
 * readahead helps a sequential reader only; a random one gets exactly
 * the pages it asked for.  Tarn, like ZFS, reads and checksums whole
 * records (128 KiB by default), so after such a read the whole record
 * sits in the ARC anyway: pushing the rest of it to the kernel costs one
 * copy, made by a thread of its own while the reader goes on, and saves
 * up to 31 round trips of a 4 KiB reader that comes back to the record.
 * In-kernel ZFS gets the same from its ARC without any round trip.
 *
 * What.  A READ of less than TF_AROUND_SMALL bytes from the live file
 * system queues (inode, offset, size) and returns; the storer thread
 * takes the inode's record size and file size (posix_getattr), reads
 * the record around the request (at most TF_AROUND_MAX bytes of it, from
 * the ARC: the reader just brought it there) and stores the parts before
 * and after the pages the READ covered (posix_read_if_cached: nothing is
 * read from disk, no ARC statistic moves, and a record partly evicted
 * meanwhile is not stored).  Nothing is queued when the
 * dataset keeps no data in the ARC (primarycache=metadata|none: the
 * storer would read from disk), for snapshots (a later addition), when
 * the queue is full (the reader is ahead: it is a hint), or for records
 * of 4 KiB.  A record stored within TF_AROUND_RECENT_NS is not stored
 * again (the READs that raced with its store).
 *
 * Safety.  notify_store overwrites whatever the kernel holds in those
 * pages, even a dirty page, and grows the kernel's size of the file when
 * it stores past it.  So a store must never carry data older than what
 * the kernel holds:
 * - No store to a file open for writing (the node table's tn_writers,
 *   counted for every open that may write).  Only such an open can dirty
 *   a page (mmap needs one too); the kernel writes the pages back before
 *   the RELEASE of the last one reaches us (writeback cache: fuse_release
 *   writes the inode), so with no writer the kernel holds no dirty page,
 *   and our size is the kernel's.
 * - A change (an open that may write, a truncate) bumps the node's change
 *   count and waits for a store of that inode in progress
 *   (tarn_fuse_nodes_change).  The storer reads the change count before
 *   it reads the data, and after, just before the store, checks the count
 *   again and marks the store in progress under the same lock: data read
 *   before a change is never stored after it.
 * - A swap of the served file system (rollback, receive) or an
 *   invalidation of everything: the storer reads through the swap gate
 *   like a request (the fs cannot go away under it) but stores outside
 *   it, under ta_store_lock, after checking the swap epoch and its own
 *   fence count; the swap and tarn_fuse_invalidate_* bump the count and
 *   take the lock once (tf_around_fence), so a store of old data is
 *   either done before their invalidations or not done.
 * - The storer is never a request handler: a store waits for the page
 *   locks of READs in flight, and those READs need a server thread.  A
 *   change waits for at most one store (one page-locked READ, served by
 *   any free thread).
 *
 * Known defect.  Off by default (tfo_readaround): under AddressSanitizer
 * test_fuse's readaround_race once hung with the test process in
 * uninterruptible sleep in the kernel (session 27's CI), a deadlock not
 * yet understood; the unit test of it is kept out of the table until it is.
 *
 * Cost.  The kernel's page cache holds the record once more, which the
 * kernel evicts like any clean page; a random reader over a file far
 * larger than memory pays one extra copy of a record per miss, on the
 * storer's CPU.  tarn-mount -o readaround=off (tfo_readaround) turns it
 * off.
 */
#include "tarn_fuse_impl.h"

#include <time.h>

#define TF_AROUND_QLEN      256                 /* queued hints */
#define TF_AROUND_SMALL     (64 * 1024)         /* READs below this give a hint */
#define TF_AROUND_MAX       (1024 * 1024)       /* bytes stored around one READ at most */
#define TF_AROUND_RECENT    512                 /* remembered recent stores */
#define TF_AROUND_RECENT_NS (100 * 1000 * 1000ULL)

typedef struct tf_around_req {
	posix_ino_t tar_ino;
	uint64_t    tar_off, tar_len;       /* what the READ covered */
	uint64_t    tar_epoch;              /* the swap epoch when it was queued */
} tf_around_req_t;

typedef struct tf_around_recent {
	posix_ino_t tr_ino;
	uint64_t    tr_rec;                 /* record start */
	uint64_t    tr_ns;                  /* when stored */
} tf_around_recent_t;

struct tf_around {
	pthread_mutex_t  ta_lock;
	pthread_cond_t   ta_cv;
	tf_around_req_t  ta_q[TF_AROUND_QLEN];  /* ta_lock; a ring */
	unsigned         ta_head, ta_n;          /* ta_lock */
	bool             ta_exit;                /* ta_lock */
	bool             ta_started;
	pthread_t        ta_thread;
	pthread_mutex_t  ta_store_lock;          /* held across a store (the fences) */
	atomic_uint_fast64_t ta_fence;           /* bumped by tf_around_fence */
	uint8_t         *ta_buf;                 /* TF_AROUND_MAX: the storer's */
	tf_around_recent_t ta_recent[TF_AROUND_RECENT];   /* the storer's */
	atomic_uint_fast64_t ta_stores, ta_bytes, ta_drops, ta_skips;
};

static uint64_t
tf_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
}

/* Store [off, off + len) of buf (the record read at rec) for ino; false on error. */
static bool
tf_around_put(tarn_fuse_t *t, fuse_ino_t fino, const uint8_t *buf, uint64_t rec,
    uint64_t off, uint64_t len)
{
	if (len == 0)
		return (true);
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(len);
	bv.buf[0].mem = (void *)(buf + (off - rec));
	int rc = fuse_lowlevel_notify_store(t->tf_se, fino, (off_t)off, &bv, 0);
	if (rc != 0)
		return (false);
	atomic_fetch_add_explicit(&t->tf_around->ta_bytes, len, memory_order_relaxed);
	return (true);
}

/* Serve one hint (no lock held). */
static void
tf_around_one(tarn_fuse_t *t, const tf_around_req_t *r)
{
	struct tf_around *ta = t->tf_around;
	uint64_t fence = atomic_load(&ta->ta_fence);
	uint32_t chg;
	if (!tarn_fuse_nodes_around(&t->tf_nodes, r->tar_ino, &chg, false)) {
		atomic_fetch_add_explicit(&ta->ta_skips, 1, memory_order_relaxed);
		return;
	}
	/* read through the swap gate, like a request: the fs stays while we read */
	tf_swap_hold(t);
	if (atomic_load(&t->tf_sw_epoch) != r->tar_epoch || atomic_load(&t->tf_sw_dead)) {
		tf_swap_leave();
		return;
	}
	posix_fs_t *fs = t->tf_fs;
	posix_attr_t pa;
	uint64_t rec = 0, end = 0, n = 0;
	int e = posix_getattr(fs, r->tar_ino, &pa);
	if (e == 0 && S_ISREG(pa.pa_mode) && pa.pa_blksize > 4096 && r->tar_off < pa.pa_size) {
		uint64_t bs = pa.pa_blksize, win = MIN(bs, (uint64_t)TF_AROUND_MAX);
		rec = r->tar_off / win * win;
		end = MIN(rec + win, pa.pa_size);
		if (end > r->tar_off + r->tar_len || rec < r->tar_off) {
			/* not stored lately? */
			tf_around_recent_t *rc = &ta->ta_recent[(r->tar_ino * 31 + rec / win) %
			    TF_AROUND_RECENT];
			uint64_t now = tf_now_ns();
			if (rc->tr_ino == r->tar_ino && rc->tr_rec == rec &&
			    now - rc->tr_ns < TF_AROUND_RECENT_NS) {
				end = rec;
			} else {
				e = posix_read_if_cached(fs, r->tar_ino, rec, end - rec, ta->ta_buf, &n);
				end = rec + n;
				rc->tr_ino = r->tar_ino;
				rc->tr_rec = rec;
				rc->tr_ns = now;
			}
		} else {
			end = rec;
		}
	}
	tf_swap_leave();
	if (e != 0 || end <= rec) {
		atomic_fetch_add_explicit(&ta->ta_skips, 1, memory_order_relaxed);
		return;
	}
	/* the store: only of data no change has overtaken */
	pthread_mutex_lock(&ta->ta_store_lock);
	bool ok = atomic_load(&ta->ta_fence) == fence &&
	    atomic_load(&t->tf_sw_epoch) == r->tar_epoch &&
	    tarn_fuse_nodes_around(&t->tf_nodes, r->tar_ino, &chg, true);
	if (ok) {
		fuse_ino_t fino = TF_FINO(t, r->tar_ino);
		uint64_t a = MIN(MAX(r->tar_off, rec), end);
		uint64_t b = MIN(MAX(r->tar_off + r->tar_len, a), end);
		/* the pages the READ covered are the kernel's already */
		a = a & ~4095ULL;
		b = MIN((b + 4095) & ~4095ULL, end);
		if (tf_around_put(t, fino, ta->ta_buf, rec, rec, a - rec) &&
		    tf_around_put(t, fino, ta->ta_buf, rec, b, end - b))
			atomic_fetch_add_explicit(&ta->ta_stores, 1, memory_order_relaxed);
		tarn_fuse_nodes_around_done(&t->tf_nodes, r->tar_ino);
	} else {
		atomic_fetch_add_explicit(&ta->ta_skips, 1, memory_order_relaxed);
	}
	pthread_mutex_unlock(&ta->ta_store_lock);
}

static void *
tf_around_thread(void *arg)
{
	tarn_fuse_t *t = arg;
	struct tf_around *ta = t->tf_around;
	pthread_mutex_lock(&ta->ta_lock);
	for (;;) {
		while (ta->ta_n == 0 && !ta->ta_exit)
			pthread_cond_wait(&ta->ta_cv, &ta->ta_lock);
		if (ta->ta_exit)
			break;
		tf_around_req_t r = ta->ta_q[ta->ta_head];
		ta->ta_head = (ta->ta_head + 1) % TF_AROUND_QLEN;
		ta->ta_n--;
		pthread_mutex_unlock(&ta->ta_lock);
		tf_around_one(t, &r);
		pthread_mutex_lock(&ta->ta_lock);
	}
	pthread_mutex_unlock(&ta->ta_lock);
	return (NULL);
}

void
tf_around_init(tarn_fuse_t *t)
{
	if (!t->tf_opts.tfo_readaround)
		return;
	struct tf_around *ta = tarn_alloc(sizeof (*ta));
	VERIFY0(pthread_mutex_init(&ta->ta_lock, NULL));
	VERIFY0(pthread_cond_init(&ta->ta_cv, NULL));
	VERIFY0(pthread_mutex_init(&ta->ta_store_lock, NULL));
	ta->ta_buf = tarn_alloc(TF_AROUND_MAX);
	t->tf_around = ta;
}

void
tf_around_start(tarn_fuse_t *t)
{
	struct tf_around *ta = t->tf_around;
	if (ta != NULL && pthread_create(&ta->ta_thread, NULL, tf_around_thread, t) == 0)
		ta->ta_started = true;
}

void
tf_around_stop(tarn_fuse_t *t)
{
	struct tf_around *ta = t->tf_around;
	if (ta == NULL || !ta->ta_started)
		return;
	pthread_mutex_lock(&ta->ta_lock);
	ta->ta_exit = true;
	pthread_cond_signal(&ta->ta_cv);
	pthread_mutex_unlock(&ta->ta_lock);
	pthread_join(ta->ta_thread, NULL);
	ta->ta_started = false;
}

void
tf_around_fini(tarn_fuse_t *t)
{
	struct tf_around *ta = t->tf_around;
	if (ta == NULL)
		return;
	tf_around_stop(t);
	pthread_cond_destroy(&ta->ta_cv);
	pthread_mutex_destroy(&ta->ta_lock);
	pthread_mutex_destroy(&ta->ta_store_lock);
	tarn_free(ta->ta_buf);
	tarn_free(ta);
	t->tf_around = NULL;
}

void
tf_around_hint(tarn_fuse_t *t, posix_fs_t *fs, posix_ino_t ino, uint64_t off, uint64_t len)
{
	struct tf_around *ta = t->tf_around;
	if (ta == NULL || !ta->ta_started || len == 0 || len >= TF_AROUND_SMALL ||
	    !posix_caches_data(fs))
		return;
	pthread_mutex_lock(&ta->ta_lock);
	if (ta->ta_n == TF_AROUND_QLEN) {
		pthread_mutex_unlock(&ta->ta_lock);
		atomic_fetch_add_explicit(&ta->ta_drops, 1, memory_order_relaxed);
		return;
	}
	tf_around_req_t *r = &ta->ta_q[(ta->ta_head + ta->ta_n) % TF_AROUND_QLEN];
	r->tar_ino = ino;
	r->tar_off = off;
	r->tar_len = len;
	r->tar_epoch = atomic_load(&t->tf_sw_epoch);
	if (ta->ta_n++ == 0)
		pthread_cond_signal(&ta->ta_cv);
	pthread_mutex_unlock(&ta->ta_lock);
}

void
tf_around_fence(tarn_fuse_t *t)
{
	struct tf_around *ta = t->tf_around;
	if (ta == NULL)
		return;
	atomic_fetch_add(&ta->ta_fence, 1);
	pthread_mutex_lock(&ta->ta_store_lock);
	pthread_mutex_unlock(&ta->ta_store_lock);
}

void
tf_around_stats(tarn_fuse_t *t, uint64_t *stores, uint64_t *bytes, uint64_t *drops,
    uint64_t *skips)
{
	struct tf_around *ta = t->tf_around;
	*stores = *bytes = *drops = *skips = 0;
	if (ta == NULL)
		return;
	*stores = atomic_load(&ta->ta_stores);
	*bytes = atomic_load(&ta->ta_bytes);
	*drops = atomic_load(&ta->ta_drops);
	*skips = atomic_load(&ta->ta_skips);
}
