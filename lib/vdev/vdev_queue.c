/*
 * vdev_queue.c — the I/O queue of a leaf with run-time injections: a
 * request that arrives while the device is busy waits in the queue, and
 * adjacent waiting requests leave it as one device I/O.
 *
 * Theory
 * ------
 * A disk serves one request at a time per lane (vdev_inject.c's DELAY:
 * a fixed service time, `lanes` at once), and a request that finds every
 * lane busy waits.  A txg writes its blocks into space the allocator
 * handed out in order, so on each leaf the columns of consecutive blocks
 * (RAID-Z) or the blocks themselves (mirror, single disk) are adjacent.
 * Served one by one, N blocks cost N service times per leaf; a queue
 * that merges the waiting ones costs one per VDEV_QUEUE_AGG_LIMIT bytes
 * (ZFS's vdev queue aggregates the same way, up to 1 MiB on spinning
 * disks).
 *
 * The open I/O.  A leaf's queue holds at most one I/O open for merging.
 * A request that is met by no fault (EIO, NXIO: it fails alone and is
 * not done, as before) either
 *   - rides on the open I/O: same direction, beside it (after its end
 *     or before its start, at most VDEV_QUEUE_GAP_LIMIT bytes away: a
 *     RAID-Z block's skip sectors, which are never written, leave such
 *     gaps between the columns of consecutive blocks), the sum within
 *     the limit, and
 *     the device not yet serving it (its start time, from the delay's
 *     lane, still ahead).  It is charged no service time of its own and
 *     completes when the open I/O does; or
 *   - is charged a service time of its own (vdev_inject_io_start): when
 *     that starts now (a lane is free) it is done at once; when it starts
 *     later (it waits behind busy lanes), it becomes the open I/O.
 * Anything that does not fit the open I/O (the other direction, a range
 * that is not adjacent, the limit, the device having started it) first
 * issues it.  So at most one I/O is open, requests are issued in their
 * order except that adjacent ones join, and a read always sees every
 * earlier write.
 *
 * Data.  A write that opens or joins the open I/O is copied into the
 * queue's buffer (its caller's buffer is gone once the vdev call
 * returns), a gap with the bytes the device holds there (read when the
 * request joins; every write to the leaf passes the queue's lock, so
 * they are rewritten unchanged); issuing it is one device write of the
 * whole range.  If that
 * fails, each request is written alone, so a bad sector fails only the
 * requests on it; such a failure comes after its caller was told the
 * write succeeded, and is reported by the leaf's next flush (EIO, and a
 * WRITE error on the leaf), which every durable write waits for: a txg
 * sync fails (the pool suspends, DESIGN.md invariant 8), an intent-log
 * commit falls back to a txg.  A read is done at once (its caller checks
 * the data before the call returns); joining only spares its service
 * time.  The open I/O is issued at the latest when the leaf is flushed
 * or closed, or when any other request comes; a write that is never
 * followed by one of those sits in memory, which is the state of a disk's
 * queue before a flush.
 *
 * Completion.  Service times are charged to the issuing threads as
 * before (vdev_inject_settle).  A thread that waits for each vdev call
 * has one request per leaf in the queue at a time; the zio layer defers
 * its waits over a batch (vdev_inject_defer), so a batch's blocks are all
 * queued at once, as an asynchronous issuer queues them.
 *
 * Leaves without run-time injections never come here: their I/O goes
 * straight to the file (the kernel's page cache merges it).
 *
 * Locking: vq_lock (vdev_impl.h) over the whole of a request, device I/O
 * included (the leaf is a file on a fast device; the service time is
 * charged after, without it); vi_lock nests inside.
 */
#include "vdev_impl.h"

void
vdev_queue_init(vdev_queue_t *vq)
{
	VERIFY0(pthread_mutex_init(&vq->vq_lock, NULL));
	vq->vq_rw = -1;
}

void
vdev_queue_fini(vdev_queue_t *vq)
{
	tarn_free(vq->vq_buf);
	tarn_free(vq->vq_seg);
	VERIFY0(pthread_mutex_destroy(&vq->vq_lock));
}

/* The bytes between the open I/O and a request beside it (UINT64_MAX: they overlap). */
static uint64_t
vdev_queue_gap(const vdev_queue_t *vq, uint64_t size, uint64_t phys)
{
	uint64_t end = vq->vq_off + vq->vq_size;
	if (phys >= end)
		return (phys - end);
	if (phys + size <= vq->vq_off)
		return (vq->vq_off - (phys + size));
	return (UINT64_MAX);
}

/* Can the request of rw at [phys, phys + size) ride on the open I/O? */
static bool
vdev_queue_fits(const vdev_queue_t *vq, int rw, uint64_t size, uint64_t phys, uint64_t now)
{
	uint64_t gap = vdev_queue_gap(vq, size, phys);
	return (vq->vq_rw == rw && now < vq->vq_start && vq->vq_nseg < VDEV_QUEUE_SEGS &&
	    gap <= VDEV_QUEUE_GAP_LIMIT && size + gap <= VDEV_QUEUE_AGG_LIMIT - vq->vq_size);
}

/* Write out the open I/O (one device write; each request alone if it fails). */
static void
vdev_queue_issue(vdev_t *vd, vdev_queue_t *vq)
{
	if (vq->vq_rw == 1 && vq->vq_nseg > 0 &&
	    vdev_leaf_dev_io(vd, 1, vq->vq_buf, vq->vq_size, vq->vq_off) != 0) {
		for (uint32_t i = 0; i < vq->vq_nseg; i++) {
			const vdev_queue_seg_t *s = &vq->vq_seg[i];
			if (vdev_leaf_dev_io(vd, 1, vq->vq_buf + (s->vqs_off - vq->vq_off),
			    s->vqs_size, s->vqs_off) != 0) {
				vdev_stat_ioerr(vd, 1, 0);
				vq->vq_err = SET_ERROR(EIO);
			}
		}
	}
	vq->vq_rw = -1;
	vq->vq_nseg = 0;
	vq->vq_size = 0;
}

/*
 * Put a request into the open I/O, at its end or before its start; a
 * write takes the gap between them along with its current bytes (read
 * here, under vq_lock, which every write to the leaf passes: nothing can
 * change them before they are written back).
 */
static int
vdev_queue_add(vdev_t *vd, vdev_queue_t *vq, int rw, const void *buf, uint64_t size,
    uint64_t phys)
{
	bool front = vq->vq_size > 0 && phys < vq->vq_off;
	uint64_t gap = vq->vq_size > 0 ? vdev_queue_gap(vq, size, phys) : 0;
	uint64_t grow = size + gap;
	if (rw) {
		if (vq->vq_buf == NULL)
			vq->vq_buf = tarn_alloc(VDEV_QUEUE_AGG_LIMIT);
		uint8_t *to = vq->vq_buf + vq->vq_size;
		if (front) {
			memmove(vq->vq_buf + grow, vq->vq_buf, vq->vq_size);
			to = vq->vq_buf;
		}
		uint8_t *gapbuf = front ? to + size : to;
		if (gap > 0 && vdev_leaf_dev_io(vd, 0, gapbuf, gap,
		    front ? phys + size : vq->vq_off + vq->vq_size) != 0) {
			if (front)   /* undo: the open I/O stays as it was */
				memmove(vq->vq_buf, vq->vq_buf + grow, vq->vq_size);
			return (SET_ERROR(EIO));
		}
		memcpy(front ? to : to + gap, buf, size);
	}
	if (vq->vq_seg == NULL)
		vq->vq_seg = tarn_alloc(VDEV_QUEUE_SEGS * sizeof (vdev_queue_seg_t));
	vq->vq_seg[vq->vq_nseg++] = (vdev_queue_seg_t){ .vqs_off = phys, .vqs_size = size };
	if (front || vq->vq_size == 0)
		vq->vq_off = phys;
	vq->vq_size += grow;
	return (0);
}

int
vdev_queue_io(vdev_t *vd, vdev_inject_t *vi, int rw, void *buf, uint64_t size, uint64_t phys)
{
	vdev_queue_t *vq = vdev_inject_queue(vi);
	uint64_t bit, svc[2];
	int err;

	VERIFY0(pthread_mutex_lock(&vq->vq_lock));
	if (vq->vq_rw >= 0 && !vdev_queue_fits(vq, rw, size, phys, tarn_now_ns()))
		vdev_queue_issue(vd, vq);
	bool ride = vq->vq_rw >= 0;
	err = vdev_inject_io_start(vi, rw, size, !ride, &bit, svc);
	if (err != 0)
		goto out;
	if (ride) {
		vdev_inject_join(vq->vq_until);
	} else {
		vq->vq_issued[rw]++;
		if (svc[0] > tarn_now_ns() && size < VDEV_QUEUE_AGG_LIMIT) {
			vq->vq_rw = rw;          /* waits behind busy lanes: open */
			vq->vq_start = svc[0];
			vq->vq_until = svc[1];
		}
	}
	if (vq->vq_rw == rw && vdev_queue_add(vd, vq, rw, buf, size, phys) != 0) {
		vdev_queue_issue(vd, vq);   /* the gap could not be read: on its own */
	}
	if (!rw || vq->vq_rw != rw)
		err = vdev_leaf_dev_io(vd, rw, buf, size, phys);
	if (err == 0 && bit != UINT64_MAX)
		((uint8_t *)buf)[bit / 8] ^= (uint8_t)(1u << (bit % 8));
out:
	VERIFY0(pthread_mutex_unlock(&vq->vq_lock));
	return (err);
}

int
vdev_queue_drain(vdev_t *vd)
{
	vdev_inject_t *vi = __atomic_load_n(&vd->vdev_inject, __ATOMIC_ACQUIRE);
	if (vi == NULL)
		return (0);
	vdev_queue_t *vq = vdev_inject_queue(vi);
	VERIFY0(pthread_mutex_lock(&vq->vq_lock));
	if (vq->vq_rw >= 0)
		vdev_queue_issue(vd, vq);
	int err = vq->vq_err;
	vq->vq_err = 0;
	VERIFY0(pthread_mutex_unlock(&vq->vq_lock));
	return (err);
}

void
vdev_queue_stats(vdev_t *vd, uint64_t issued[2])
{
	issued[0] = issued[1] = 0;
	vdev_inject_t *vi = __atomic_load_n(&vd->vdev_inject, __ATOMIC_ACQUIRE);
	if (vi == NULL)
		return;
	vdev_queue_t *vq = vdev_inject_queue(vi);
	VERIFY0(pthread_mutex_lock(&vq->vq_lock));
	issued[0] = vq->vq_issued[0];
	issued[1] = vq->vq_issued[1];
	VERIFY0(pthread_mutex_unlock(&vq->vq_lock));
}
