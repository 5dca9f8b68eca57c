/*
 * vdev_inject.c — run-time fault and latency injection on open leaves
 * (`tarn inject`, after OpenZFS's zinject).  The contract is in vdev.h
 * ("run-time fault and latency injection"); this is how it works.
 *
 * Where it hangs.  A leaf's vdev_t gets a vdev_inject_t the first time
 * an injection is added to it, and keeps it until vdev_free: the pointer
 * is stored once (release) and read by the I/O path with one acquire
 * load, so a leaf without injections pays one load and a NULL test per
 * I/O.  The handle does not depend on the file descriptor: a leaf that
 * the pool faults (closes) and later reopens keeps its injections, and
 * vdev_leaf_fields_move (vdev_tree.c) carries the pointer when a group
 * is put in a leaf's place.  So removing an injection never frees a
 * handle that an I/O may be using; only vdev_free does, when no I/O can
 * reach the leaf.  The path-attached injector of vdev_fault.c (tests,
 * tarn-stress) is independent and still sits below this one: a leaf I/O
 * first meets its run-time injections, then, if it goes ahead, the
 * path-attached injector or the file.
 *
 * What an I/O meets (vdev_inject_io_start, under vi_lock, in id order):
 * each injection whose rw mask covers it and whose chance (ppm, from the
 * handle's random state) comes up does its thing: NXIO fails it with
 * ENXIO, EIO with EIO (the first that fires decides), CKSUM chooses a
 * bit that the read's buffer gets flipped once the read succeeded, and
 * DELAY reserves a lane (below).  Errors are returned before the device
 * is touched: a failed write leaves the device as it was.
 *
 * The lane model (zinject -D LATENCY:LANES).  A DELAY injection has
 * `lanes` lanes, each with the time at which it is free again.  An I/O
 * takes the lane that frees first: it starts at max(now, that time),
 * completes `latency` later, and the lane is busy until then.  So one
 * lane serializes I/Os (N of them take N * latency), N lanes let N
 * overlap, and a queue behind busy lanes waits its turn, like a disk
 * with a fixed service time and a queue depth of `lanes`.
 *
 * Completion.  The I/O itself is done at once (pread/pwrite), and the
 * completion time is kept per thread (the latest of those it reserved).
 * vdev_inject_settle(), which vdev_tree_exit() calls after dropping the
 * tree lock, sleeps until then.  One vdev call (a mirror write to every
 * side, a raidz read of every column, a label or uberblock write to every
 * leaf) thus waits for the slowest of its leaf I/Os, as if it had issued
 * them in parallel the way ZFS does, and it sleeps without the tree lock,
 * so device changes, export and destroy never wait for a delay (their own
 * I/O is delayed as any other).  I/O on other devices is not blocked: no
 * lock is held while sleeping.  The issuing thread does sleep, as it
 * would in a synchronous read of a slow disk, unless it defers the wait
 * (vdev_inject_defer: the zio layer's batches sleep once, at their end,
 * for the latest completion of their items, so that every block of a
 * batch is queued at once and adjacent ones merge, vdev_queue.c).  A
 * request that rides on another's service time (vdev_queue.c) is not
 * charged one of its own (io_start's charge argument) but still meets
 * the fault kinds.  A dependent retry inside one call (a mirror read that
 * fails to verify and reads the other side) is overlapped too, which is
 * optimistic by one service time.
 *
 * Clearing wakes the sleepers: vdev_inject_clear bumps a generation
 * number and broadcasts; a thread sleeps only while the generation is
 * the one it saw when it reserved its last lane.  (A clear anywhere ends
 * every sleep of the moment early, once; clears are rare.)
 *
 * Locking: vdev_inject_create_lock makes handles (one per leaf);
 * vi_lock guards a handle's records, lanes and random state and is
 * never held across I/O or a sleep; vdev_inject_sleep_lock guards the
 * generation and the sleepers' condition variable.  None nests in
 * another.  The tree walks (list, clear) rely on the caller keeping the
 * tree's shape still (the pool's device lock), as vdev.h says.
 */
#include "vdev_impl.h"

#include <time.h>

typedef struct vdev_inject_rec {
	uint64_t           vir_id;
	vdev_inject_spec_t vir_spec;
	uint64_t          *vir_lane_free;   /* DELAY: [lanes] ns when each is free */
} vdev_inject_rec_t;

struct vdev_inject {
	pthread_mutex_t vi_lock;
	tarn_array_t    vi_recs;    /* of vdev_inject_rec_t, by id; vi_lock */
	tarn_rand_t     vi_rand;    /* vi_lock */
	vdev_queue_t    vi_queue;   /* the leaf's I/O queue (vdev_queue.c) */
};

static pthread_mutex_t vdev_inject_create_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t vdev_inject_next_id = 1;           /* atomic */

static pthread_mutex_t vdev_inject_sleep_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t vdev_inject_sleep_cv;        /* CLOCK_MONOTONIC */
static pthread_once_t vdev_inject_sleep_once = PTHREAD_ONCE_INIT;
static uint64_t vdev_inject_gen;                   /* atomic; bumped by clear */

/* This thread's delayed I/O: completion time (0: none) and generation. */
static __thread uint64_t vdev_inject_until;
static __thread uint64_t vdev_inject_until_gen;
/* vdev_inject_defer: settle leaves the completion time for vdev_inject_take */
static __thread bool vdev_inject_deferred;

static void
vdev_inject_sleep_init(void)
{
	pthread_condattr_t a;
	VERIFY0(pthread_condattr_init(&a));
	VERIFY0(pthread_condattr_setclock(&a, CLOCK_MONOTONIC));
	VERIFY0(pthread_cond_init(&vdev_inject_sleep_cv, &a));
	VERIFY0(pthread_condattr_destroy(&a));
}

static int
vdev_inject_check(const vdev_inject_spec_t *s)
{
	if (s->vis_rw == 0 || (s->vis_rw & ~(VDEV_INJECT_READ | VDEV_INJECT_WRITE)) != 0)
		return (SET_ERROR(EINVAL));
	if (s->vis_ppm == 0 || s->vis_ppm > VDEV_INJECT_PPM_MAX)
		return (SET_ERROR(EINVAL));
	switch (s->vis_kind) {
	case VDEV_INJECT_EIO:
	case VDEV_INJECT_NXIO:
		return (0);
	case VDEV_INJECT_CKSUM:
		return (s->vis_rw == VDEV_INJECT_READ ? 0 : SET_ERROR(EINVAL));
	case VDEV_INJECT_DELAY:
		if (s->vis_latency_us == 0 || s->vis_latency_us > VDEV_INJECT_LATENCY_MAX_US ||
		    s->vis_lanes == 0 || s->vis_lanes > VDEV_INJECT_LANES_MAX)
			return (SET_ERROR(EINVAL));
		return (0);
	}
	return (SET_ERROR(EINVAL));
}

/* The leaf's handle, made on first use. */
static vdev_inject_t *
vdev_inject_handle(vdev_t *leaf)
{
	VERIFY0(pthread_mutex_lock(&vdev_inject_create_lock));
	vdev_inject_t *vi = leaf->vdev_inject;
	if (vi == NULL) {
		vi = tarn_alloc(sizeof (*vi));
		VERIFY0(pthread_mutex_init(&vi->vi_lock, NULL));
		tarn_array_init(&vi->vi_recs, sizeof (vdev_inject_rec_t));
		tarn_rand_seed(&vi->vi_rand, leaf->vdev_guid ^ tarn_now_ns());
		vdev_queue_init(&vi->vi_queue);
		__atomic_store_n(&leaf->vdev_inject, vi, __ATOMIC_RELEASE);
	}
	VERIFY0(pthread_mutex_unlock(&vdev_inject_create_lock));
	return (vi);
}

int
vdev_inject_add(vdev_t *leaf, const vdev_inject_spec_t *spec, uint64_t *idp)
{
	if (!leaf->vdev_ops->vop_leaf)
		return (SET_ERROR(ENOTSUP));
	int err = vdev_inject_check(spec);
	if (err != 0)
		return (err);
	vdev_inject_t *vi = vdev_inject_handle(leaf);
	vdev_inject_rec_t r = { .vir_spec = *spec };
	if (spec->vis_kind == VDEV_INJECT_DELAY)
		r.vir_lane_free = tarn_alloc(spec->vis_lanes * sizeof (uint64_t));
	VERIFY0(pthread_mutex_lock(&vi->vi_lock));
	r.vir_id = __atomic_fetch_add(&vdev_inject_next_id, 1, __ATOMIC_RELAXED);
	*(vdev_inject_rec_t *)tarn_array_push(&vi->vi_recs) = r;
	VERIFY0(pthread_mutex_unlock(&vi->vi_lock));
	*idp = r.vir_id;
	return (0);
}

/* Remove id (0: all) from one handle; the number removed. */
static int
vdev_inject_clear_one(vdev_inject_t *vi, uint64_t id)
{
	int n = 0;
	VERIFY0(pthread_mutex_lock(&vi->vi_lock));
	for (uint64_t i = tarn_array_len(&vi->vi_recs); i-- > 0;) {
		vdev_inject_rec_t *r = &TARN_ARRAY_AT(&vi->vi_recs, vdev_inject_rec_t, i);
		if (id != 0 && r->vir_id != id)
			continue;
		tarn_free(r->vir_lane_free);
		tarn_array_remove(&vi->vi_recs, (size_t)i);
		n++;
	}
	VERIFY0(pthread_mutex_unlock(&vi->vi_lock));
	return (n);
}

static int
vdev_inject_clear_tree(vdev_t *vd, uint64_t id)
{
	int n = 0;
	vdev_inject_t *vi = __atomic_load_n(&vd->vdev_inject, __ATOMIC_ACQUIRE);
	int k = vi != NULL ? vdev_inject_clear_one(vi, id) : 0;
	if (k > 0) {
		n += k;
		/* nothing rides on a service time that was charged under a cleared delay */
		VERIFY0(pthread_mutex_lock(&vi->vi_queue.vq_lock));
		vi->vi_queue.vq_start = 0;
		VERIFY0(pthread_mutex_unlock(&vi->vi_queue.vq_lock));
	}
	for (int c = 0; c < VDEV_NCHILD(vd); c++)
		n += vdev_inject_clear_tree(VDEV_CHILD(vd, c), id);
	if (vd->vdev_spares != NULL)
		n += vdev_inject_clear_tree(vd->vdev_spares, id);
	if (vd->vdev_l2cache != NULL)
		n += vdev_inject_clear_tree(vd->vdev_l2cache, id);
	return (n);
}

int
vdev_inject_clear(vdev_t *vd, uint64_t id)
{
	int n = vdev_inject_clear_tree(vd, id);
	if (n > 0) {
		(void) pthread_once(&vdev_inject_sleep_once, vdev_inject_sleep_init);
		VERIFY0(pthread_mutex_lock(&vdev_inject_sleep_lock));
		__atomic_add_fetch(&vdev_inject_gen, 1, __ATOMIC_RELEASE);
		VERIFY0(pthread_cond_broadcast(&vdev_inject_sleep_cv));
		VERIFY0(pthread_mutex_unlock(&vdev_inject_sleep_lock));
	}
	return (n);
}

void
vdev_inject_list(vdev_t *vd, vdev_inject_fn_t fn, void *arg)
{
	vdev_inject_t *vi = __atomic_load_n(&vd->vdev_inject, __ATOMIC_ACQUIRE);
	if (vi != NULL) {
		/* a copy: fn may take other locks, and must not run under vi_lock */
		VERIFY0(pthread_mutex_lock(&vi->vi_lock));
		uint64_t n = tarn_array_len(&vi->vi_recs);
		vdev_inject_rec_t *copy = tarn_alloc(MAX(n, 1) * sizeof (*copy));
		for (uint64_t i = 0; i < n; i++)
			copy[i] = TARN_ARRAY_AT(&vi->vi_recs, vdev_inject_rec_t, i);
		VERIFY0(pthread_mutex_unlock(&vi->vi_lock));
		for (uint64_t i = 0; i < n; i++)
			fn(arg, vd, copy[i].vir_id, &copy[i].vir_spec);
		tarn_free(copy);
	}
	for (int c = 0; c < VDEV_NCHILD(vd); c++)
		vdev_inject_list(VDEV_CHILD(vd, c), fn, arg);
	if (vd->vdev_spares != NULL)
		vdev_inject_list(vd->vdev_spares, fn, arg);
	if (vd->vdev_l2cache != NULL)
		vdev_inject_list(vd->vdev_l2cache, fn, arg);
}

void
vdev_inject_free(vdev_inject_t *vi)
{
	if (vi == NULL)
		return;
	(void) vdev_inject_clear_one(vi, 0);
	vdev_queue_fini(&vi->vi_queue);
	tarn_array_fini(&vi->vi_recs);
	VERIFY0(pthread_mutex_destroy(&vi->vi_lock));
	tarn_free(vi);
}

/* True with probability ppm / 10^6 (vi_lock held). */
static bool
vdev_inject_fires(vdev_inject_t *vi, const vdev_inject_spec_t *s)
{
	return (s->vis_ppm >= VDEV_INJECT_PPM_MAX ||
	    tarn_rand_range(&vi->vi_rand, VDEV_INJECT_PPM_MAX) < s->vis_ppm);
}

/* Take the lane that frees first; the completion time (vi_lock held). */
static uint64_t
vdev_inject_reserve(vdev_inject_rec_t *r, uint64_t now)
{
	uint64_t *lane = r->vir_lane_free;
	uint32_t best = 0;
	for (uint32_t l = 1; l < r->vir_spec.vis_lanes; l++) {
		if (lane[l] < lane[best])
			best = l;
	}
	lane[best] = MAX(now, lane[best]) + r->vir_spec.vis_latency_us * 1000;
	return (lane[best]);
}

/* This thread's I/O completes no earlier than until (ns). */
void
vdev_inject_join(uint64_t until)
{
	if (until == 0)
		return;
	vdev_inject_until = MAX(vdev_inject_until, until);
	vdev_inject_until_gen = __atomic_load_n(&vdev_inject_gen, __ATOMIC_ACQUIRE);
}

int
vdev_inject_io_start(vdev_inject_t *vi, int rw, uint64_t size, bool charge,
    uint64_t *damage_bit, uint64_t svc[2])
{
	int mask = rw ? VDEV_INJECT_WRITE : VDEV_INJECT_READ, err = 0;
	uint64_t until = 0, now = 0, start = 0;

	*damage_bit = UINT64_MAX;
	VERIFY0(pthread_mutex_lock(&vi->vi_lock));
	for (uint64_t i = 0; i < tarn_array_len(&vi->vi_recs); i++) {
		vdev_inject_rec_t *r = &TARN_ARRAY_AT(&vi->vi_recs, vdev_inject_rec_t, i);
		const vdev_inject_spec_t *s = &r->vir_spec;
		if (!(s->vis_rw & mask))
			continue;
		if (s->vis_kind == VDEV_INJECT_DELAY) {
			if (!charge)
				continue;   /* rides on an I/O already charged (vdev_queue.c) */
			if (now == 0)
				now = tarn_now_ns();
			uint64_t done = vdev_inject_reserve(r, now);   /* once: MAX evaluates twice */
			uint64_t begins = done - s->vis_latency_us * 1000;
			until = MAX(until, done);
			start = start == 0 ? begins : MIN(start, begins);
			continue;
		}
		if (!vdev_inject_fires(vi, s))
			continue;
		if (s->vis_kind == VDEV_INJECT_NXIO && err == 0)
			err = SET_ERROR(ENXIO);
		else if (s->vis_kind == VDEV_INJECT_EIO && err == 0)
			err = SET_ERROR(EIO);
		else if (s->vis_kind == VDEV_INJECT_CKSUM && size > 0 && !rw)
			*damage_bit = tarn_rand_range(&vi->vi_rand, size * 8);
	}
	VERIFY0(pthread_mutex_unlock(&vi->vi_lock));
	vdev_inject_join(until);
	if (svc != NULL) {
		svc[0] = start;
		svc[1] = until;
	}
	return (err);
}

vdev_queue_t *
vdev_inject_queue(vdev_inject_t *vi)
{
	return (&vi->vi_queue);
}

int
vdev_inject_flush_error(vdev_inject_t *vi)
{
	int err = 0;
	VERIFY0(pthread_mutex_lock(&vi->vi_lock));
	for (uint64_t i = 0; i < tarn_array_len(&vi->vi_recs) && err == 0; i++) {
		vdev_inject_rec_t *r = &TARN_ARRAY_AT(&vi->vi_recs, vdev_inject_rec_t, i);
		if (r->vir_spec.vis_kind == VDEV_INJECT_NXIO && vdev_inject_fires(vi, &r->vir_spec))
			err = SET_ERROR(ENXIO);
	}
	VERIFY0(pthread_mutex_unlock(&vi->vi_lock));
	return (err);
}

bool
vdev_inject_gone(vdev_inject_t *vi)
{
	bool gone = false;
	VERIFY0(pthread_mutex_lock(&vi->vi_lock));
	for (uint64_t i = 0; i < tarn_array_len(&vi->vi_recs); i++) {
		const vdev_inject_spec_t *s =
		    &TARN_ARRAY_AT(&vi->vi_recs, vdev_inject_rec_t, i).vir_spec;
		gone |= s->vis_kind == VDEV_INJECT_NXIO && s->vis_ppm >= VDEV_INJECT_PPM_MAX;
	}
	VERIFY0(pthread_mutex_unlock(&vi->vi_lock));
	return (gone);
}

bool
vdev_inject_defer(bool on)
{
	bool was = vdev_inject_deferred;
	vdev_inject_deferred = on;
	return (was);
}

uint64_t
vdev_inject_take(uint64_t *genp)
{
	uint64_t until = vdev_inject_until;
	*genp = vdev_inject_until_gen;
	vdev_inject_until = 0;
	return (until);
}

void
vdev_inject_wait(uint64_t until, uint64_t gen)
{
	if (until == 0)
		return;
	(void) pthread_once(&vdev_inject_sleep_once, vdev_inject_sleep_init);
	struct timespec ts = {
		.tv_sec = (time_t)(until / 1000000000ULL),
		.tv_nsec = (long)(until % 1000000000ULL),
	};
	VERIFY0(pthread_mutex_lock(&vdev_inject_sleep_lock));
	while (__atomic_load_n(&vdev_inject_gen, __ATOMIC_ACQUIRE) == gen &&
	    tarn_now_ns() < until) {
		int e = pthread_cond_timedwait(&vdev_inject_sleep_cv, &vdev_inject_sleep_lock, &ts);
		VERIFY(e == 0 || e == ETIMEDOUT);
	}
	VERIFY0(pthread_mutex_unlock(&vdev_inject_sleep_lock));
}

void
vdev_inject_settle(void)
{
	if (vdev_inject_until == 0 || vdev_inject_deferred)
		return;
	uint64_t gen;
	uint64_t until = vdev_inject_take(&gen);
	vdev_inject_wait(until, gen);
}
