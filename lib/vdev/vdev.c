/*
 * vdev.c — the vdev tree: building and freeing it, opening it bottom-up
 * (sizes, ashift), health states and their propagation, lookups, GUID
 * sums, the counters, and the dispatch of block I/O to the ops table of
 * each vdev type.  The root's ops and the placeholder for missing leaves
 * live here too.  Mirror: vdev_mirror.c; RAID-Z (and its theory
 * comment): vdev_raidz.c; leaves: vdev_file.c; labels: vdev_label.c.
 *
 * States, bottom-up.  A leaf is HEALTHY when its device is open,
 * CANT_OPEN when not, OFFLINE when an administrator said so, FAULTED or
 * REMOVED when the pool layer gave up on it after errors.  A mirror (and
 * a replacing or spare pair) is HEALTHY when every child is and none
 * misses txgs (vdev_dtl.c), DEGRADED while one child at least can serve
 * I/O, CANT_OPEN when none can.  A raidz is DEGRADED while at most
 * nparity children are unusable (or some child misses txgs), CANT_OPEN
 * beyond.  The root is FAULTED when any top-level vdev is unusable
 * (blocks are striped over all of them), DEGRADED when any is degraded.
 *
 * Concurrency: I/O on a tree may run from many threads at once; all
 * per-I/O state lives on the caller's stack or in per-thread scratch
 * buffers, counters are atomic.  Opening, closing and changing the
 * shape of a tree must not race with I/O on it: the pool layer holds the
 * tree lock (vdev_tree.c) as writer for those, and as reader around I/O.
 * Device changes (groups inserted and collapsed, leaves reopened) are
 * in vdev_tree.c, missed txgs in vdev_dtl.c.
 */
#include "vdev_impl.h"
#include "taskq.h"

#include <pthread.h>

/* ---- counters ---- */

void
vdev_stat_io(vdev_t *vd, int rw, uint64_t size)
{
	vdev_stat_add(&vd->vdev_stat.vs_ops[rw], 1);
	vdev_stat_add(&vd->vdev_stat.vs_bytes[rw], size);
}

void
vdev_stat_cksum(vdev_t *vd, int flags)
{
	if (!(flags & VDEV_IO_PROBE))
		vdev_stat_add(&vd->vdev_stat.vs_checksum_errors, 1);
}

/*
 * A leaf whose I/O keeps failing (VDEV_FAULT_ERRORS in a row, counting
 * only charged errors; any success resets the run) asks the pool layer
 * to fault it (vdev_fault_req): a dead device then stops being tried.
 */
void
vdev_stat_ioerr(vdev_t *vd, int rw, int flags)
{
	if (flags & VDEV_IO_PROBE)
		return;
	vdev_stat_add(rw ? &vd->vdev_stat.vs_write_errors :
	    &vd->vdev_stat.vs_read_errors, 1);
	if (vd->vdev_ops->vop_leaf &&
	    __atomic_add_fetch(&vd->vdev_err_run, 1, __ATOMIC_RELAXED) >= VDEV_FAULT_ERRORS)
		__atomic_store_n(&vd->vdev_fault_req, true, __ATOMIC_RELEASE);
}

void
vdev_stat_repair(vdev_t *vd, vdev_io_t *io, uint64_t bytes)
{
	vdev_stat_add(&vd->vdev_stat.vs_repaired_bytes, bytes);
	io->vio_repaired += bytes;
}

void
vdev_clear_errors(vdev_t *vd)
{
	__atomic_store_n(&vd->vdev_stat.vs_read_errors, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&vd->vdev_stat.vs_write_errors, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&vd->vdev_stat.vs_checksum_errors, 0, __ATOMIC_RELAXED);
	for (int c = 0; c < VDEV_NCHILD(vd); c++)
		vdev_clear_errors(VDEV_CHILD(vd, c));
}

/* ---- per-thread scratch ---- */

typedef struct vdev_scratch_set {
	void   *vss_buf[VDEV_SCRATCH_SLOTS];
	size_t  vss_size[VDEV_SCRATCH_SLOTS];
} vdev_scratch_set_t;

static pthread_key_t vdev_scratch_key;
static pthread_once_t vdev_scratch_once = PTHREAD_ONCE_INIT;

static void
vdev_scratch_destroy(void *arg)
{
	vdev_scratch_set_t *ss = arg;
	for (int i = 0; i < VDEV_SCRATCH_SLOTS; i++)
		tarn_free(ss->vss_buf[i]);
	tarn_free(ss);
}

static void
vdev_scratch_init(void)
{
	VERIFY0(pthread_key_create(&vdev_scratch_key, vdev_scratch_destroy));
}

void *
vdev_scratch(enum vdev_scratch_slot slot, size_t size)
{
	VERIFY0(pthread_once(&vdev_scratch_once, vdev_scratch_init));
	vdev_scratch_set_t *ss = pthread_getspecific(vdev_scratch_key);
	if (ss == NULL) {
		ss = tarn_alloc(sizeof (*ss));
		VERIFY0(pthread_setspecific(vdev_scratch_key, ss));
	}
	if (ss->vss_size[slot] < size) {
		size_t nsize = MAX(size, 64 * KiB);
		nsize = 1ULL << highbit64(nsize - 1);
		tarn_free(ss->vss_buf[slot]);
		ss->vss_buf[slot] = tarn_alloc_aligned(nsize);
		ss->vss_size[slot] = nsize;
	}
	return (ss->vss_buf[slot]);
}

/* ---- building trees ---- */

const vdev_ops_t *
vdev_ops_for(vdev_type_t type)
{
	switch (type) {
	case VDEV_TYPE_ROOT: return (&vdev_root_ops);
	case VDEV_TYPE_MIRROR: return (&vdev_mirror_ops);
	case VDEV_TYPE_RAIDZ: return (&vdev_raidz_ops);
	case VDEV_TYPE_REPLACING: return (&vdev_replacing_ops);
	case VDEV_TYPE_SPARE: return (&vdev_spare_ops);
	case VDEV_TYPE_FILE:
	case VDEV_TYPE_DISK: return (&vdev_file_ops);
	case VDEV_TYPE_MISSING: return (&vdev_missing_ops);
	case VDEV_TYPE_HOLE: return (&vdev_hole_ops);
	default: break;
	}
	tarn_panic(__FILE__, __LINE__, "bad vdev type %d", (int)type);
}

vdev_t *
vdev_alloc(vdev_type_t type, uint64_t guid)
{
	vdev_t *vd = tarn_alloc(sizeof (*vd));
	vd->vdev_type = type;
	vd->vdev_ops = vdev_ops_for(type);
	vd->vdev_guid = guid != 0 ? guid : tarn_guid();
	vd->vdev_guid_sum = vd->vdev_guid;
	vd->vdev_state = VDEV_STATE_CLOSED;
	vd->vdev_fd = -1;
	tarn_array_init(&vd->vdev_child, sizeof (vdev_t *));
	if (type == VDEV_TYPE_ROOT)
		vd->vdev_top = NULL;
	else
		vd->vdev_top = vd;   /* until attached below a group */
	if (type == VDEV_TYPE_MIRROR || type == VDEV_TYPE_REPLACING ||
	    type == VDEV_TYPE_SPARE)
		vd->vdev_tsd = tarn_alloc(sizeof (uint64_t)); /* read rotor */
	if (type == VDEV_TYPE_ROOT) {
		pthread_rwlockattr_t a;
		VERIFY0(pthread_rwlockattr_init(&a));
		VERIFY0(pthread_rwlockattr_setkind_np(&a,
		    PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP));
		vd->vdev_tree_lock = tarn_alloc(sizeof (pthread_rwlock_t));
		VERIFY0(pthread_rwlock_init(vd->vdev_tree_lock, &a));
		VERIFY0(pthread_rwlockattr_destroy(&a));
	}
	return (vd);
}

static void
vdev_set_top(vdev_t *vd, vdev_t *top)
{
	vd->vdev_top = top;
	for (int c = 0; c < VDEV_NCHILD(vd); c++)
		vdev_set_top(VDEV_CHILD(vd, c), top);
}

void
vdev_guid_sum_update(vdev_t *vd)
{
	for (; vd != NULL; vd = vd->vdev_parent) {
		uint64_t sum = vd->vdev_guid;
		for (int c = 0; c < VDEV_NCHILD(vd); c++)
			sum += VDEV_CHILD(vd, c)->vdev_guid_sum;
		vd->vdev_guid_sum = sum;
	}
}

bool
vdev_is_group(const vdev_t *vd)
{
	return (!vd->vdev_ops->vop_leaf && vd->vdev_type != VDEV_TYPE_ROOT &&
	    vd->vdev_type != VDEV_TYPE_HOLE);
}

/* A replacing or spare group: a pair of leaves in one leaf's place. */
static bool
vdev_is_pair(vdev_type_t t)
{
	return (t == VDEV_TYPE_REPLACING || t == VDEV_TYPE_SPARE);
}

/*
 * Shapes: root -> top-level (anything but a root); mirror/raidz -> leaf
 * or replacing/spare pair; replacing/spare -> leaf.
 */
void
vdev_add_child(vdev_t *parent, vdev_t *child)
{
	bool parent_group = parent->vdev_type == VDEV_TYPE_MIRROR ||
	    parent->vdev_type == VDEV_TYPE_RAIDZ;
	VERIFY(child->vdev_parent == NULL);
	VERIFY(child->vdev_type != VDEV_TYPE_ROOT);
	VERIFY(parent->vdev_type == VDEV_TYPE_ROOT || parent_group ||
	    vdev_is_pair(parent->vdev_type));
	if (parent_group)
		VERIFY(child->vdev_ops->vop_leaf || vdev_is_pair(child->vdev_type));
	else if (parent->vdev_type != VDEV_TYPE_ROOT)
		VERIFY(child->vdev_ops->vop_leaf);
	VERIFY3S(VDEV_NCHILD(parent), <, VDEV_MAX_CHILDREN);

	child->vdev_id = (uint64_t)VDEV_NCHILD(parent);
	TARN_ARRAY_APPEND(&parent->vdev_child, vdev_t *, child);
	child->vdev_parent = parent;
	vdev_set_top(child, parent->vdev_type == VDEV_TYPE_ROOT ? child :
	    parent->vdev_top);
	vdev_guid_sum_update(parent);
}

void
vdev_free(vdev_t *vd)
{
	if (vd == NULL)
		return;
	vdev_close(vd);
	while (VDEV_NCHILD(vd) > 0) {
		vdev_t *c = VDEV_CHILD(vd, VDEV_NCHILD(vd) - 1);
		vdev_free(c);
	}
	vdev_t *p = vd->vdev_parent;
	if (p != NULL) {
		int i = (int)vd->vdev_id;
		VERIFY(i < VDEV_NCHILD(p) && VDEV_CHILD(p, i) == vd);
		tarn_array_remove(&p->vdev_child, (size_t)i);
		for (int c = i; c < VDEV_NCHILD(p); c++)
			VDEV_CHILD(p, c)->vdev_id = (uint64_t)c;
		vdev_guid_sum_update(p);
	}
	if (vd->vdev_spares != NULL)
		vdev_free(vd->vdev_spares);
	if (vd->vdev_l2cache != NULL)
		vdev_free(vd->vdev_l2cache);
	if (vd->vdev_tree_lock != NULL) {
		VERIFY0(pthread_rwlock_destroy(vd->vdev_tree_lock));
		tarn_free(vd->vdev_tree_lock);
	}
	vdev_inject_free(vd->vdev_inject);
	tarn_array_fini(&vd->vdev_child);
	tarn_free(vd->vdev_path);
	tarn_free(vd->vdev_tsd);
	tarn_free(vd);
}

/* ---- opening and states ---- */

static void
vdev_open_subtree(vdev_t *vd, bool readonly)
{
	vd->vdev_readonly = readonly;
	for (int c = 0; c < VDEV_NCHILD(vd); c++)
		vdev_open_subtree(VDEV_CHILD(vd, c), readonly);
	if (!vd->vdev_ops->vop_leaf) {
		(void) vd->vdev_ops->vop_open(vd);  /* sets the state too */
		return;
	}
	/* The type decides (import turns leaves it cannot find MISSING). */
	vd->vdev_ops = vdev_ops_for(vd->vdev_type);
	if (vd->vdev_offline) {
		vd->vdev_state = VDEV_STATE_OFFLINE;
		return;
	}
	if (vd->vdev_fault_state != 0) {
		vd->vdev_state = vd->vdev_fault_state;
		return;
	}
	uint64_t preset = vd->vdev_top == vd ? vd->vdev_asize : 0;
	int err = vd->vdev_ops->vop_open(vd);
	if (err == 0 && preset != 0) {
		if (vd->vdev_asize < preset) {
			vd->vdev_ops->vop_close(vd);
			err = SET_ERROR(EOVERFLOW);
		}
		vd->vdev_asize = preset;
	}
	vd->vdev_open_error = err;
	vd->vdev_state = err == 0 ? VDEV_STATE_HEALTHY : VDEV_STATE_CANT_OPEN;
}

static bool
vdev_any_busy(const vdev_t *vd)
{
	if (vd->vdev_open_error == EBUSY)
		return (true);
	for (int c = 0; c < VDEV_NCHILD(vd); c++)
		if (vdev_any_busy(VDEV_CHILD(vd, c)))
			return (true);
	return (false);
}

int
vdev_open(vdev_t *vd, bool readonly)
{
	vdev_open_subtree(vd, readonly);
	if (vd->vdev_parent != NULL)
		vdev_propagate_state(vd->vdev_parent);
	if (vdev_usable(vd))
		return (0);
	return (SET_ERROR(vdev_any_busy(vd) ? EBUSY : ENXIO));
}

void
vdev_close(vdev_t *vd)
{
	for (int c = 0; c < VDEV_NCHILD(vd); c++)
		vdev_close(VDEV_CHILD(vd, c));
	if (vd->vdev_spares != NULL)
		vdev_close(vd->vdev_spares);
	if (vd->vdev_l2cache != NULL)
		vdev_close(vd->vdev_l2cache);
	if (vd->vdev_ops->vop_close != NULL)
		vd->vdev_ops->vop_close(vd);
	vd->vdev_state = vd->vdev_offline ? VDEV_STATE_OFFLINE :
	    vd->vdev_fault_state != 0 ? vd->vdev_fault_state : VDEV_STATE_CLOSED;
}

void
vdev_propagate_state(vdev_t *vd)
{
	for (; vd != NULL; vd = vd->vdev_parent)
		if (!vd->vdev_ops->vop_leaf && vd->vdev_ops->vop_state_change)
			vd->vdev_ops->vop_state_change(vd);
}

/*
 * "Would lose its last replica" is judged with the missed txgs: a leaf
 * is needed when it holds blocks no other child can give
 * (vdev_dtl_required).
 */
int
vdev_set_offline(vdev_t *leaf, bool offline)
{
	if (!leaf->vdev_ops->vop_leaf)
		return (SET_ERROR(ENOTSUP));
	if (offline) {
		if (leaf->vdev_offline)
			return (0);
		if (leaf->vdev_top == leaf || vdev_dtl_required(leaf))
			return (SET_ERROR(EBUSY));
		leaf->vdev_ops->vop_close(leaf);
		leaf->vdev_offline = true;
		leaf->vdev_state = VDEV_STATE_OFFLINE;
		vdev_propagate_state(leaf->vdev_parent);
		return (0);
	}
	if (!leaf->vdev_offline && leaf->vdev_state == VDEV_STATE_HEALTHY)
		return (0);
	leaf->vdev_offline = false;
	leaf->vdev_offline_temp = false;
	return (vdev_leaf_reopen(leaf, 0));
}

const char *
vdev_state_name(vdev_state_t s)
{
	switch (s) {
	case VDEV_STATE_HEALTHY: return ("ONLINE");
	case VDEV_STATE_DEGRADED: return ("DEGRADED");
	case VDEV_STATE_FAULTED: return ("FAULTED");
	case VDEV_STATE_OFFLINE: return ("OFFLINE");
	case VDEV_STATE_CANT_OPEN: return ("UNAVAIL");
	case VDEV_STATE_REMOVED: return ("REMOVED");
	case VDEV_STATE_CLOSED: return ("CLOSED");
	default: return ("UNKNOWN");
	}
}

const char *
vdev_type_name(const vdev_t *vd)
{
	static const char *const raidz[] = { "raidz", "raidz1", "raidz2", "raidz3" };
	switch (vd->vdev_type) {
	case VDEV_TYPE_ROOT: return ("root");
	case VDEV_TYPE_MIRROR: return ("mirror");
	case VDEV_TYPE_RAIDZ:
		return (vd->vdev_nparity >= 1 && vd->vdev_nparity <= 3 ?
		    raidz[vd->vdev_nparity] : raidz[0]);
	case VDEV_TYPE_REPLACING: return ("replacing");
	case VDEV_TYPE_SPARE: return ("spare");
	case VDEV_TYPE_HOLE: return ("hole");
	default:
		if (vd->vdev_path != NULL)
			return (vd->vdev_path);
		return (vd->vdev_type == VDEV_TYPE_MISSING ? "missing" : "leaf");
	}
}

vdev_t *
vdev_lookup_top(vdev_t *root, uint64_t id)
{
	if (root == NULL || root->vdev_type != VDEV_TYPE_ROOT ||
	    id >= (uint64_t)VDEV_NCHILD(root))
		return (NULL);
	return (VDEV_CHILD(root, id));
}

vdev_t *
vdev_lookup_guid(vdev_t *vd, uint64_t guid)
{
	if (vd == NULL)
		return (NULL);
	if (vd->vdev_guid == guid)
		return (vd);
	for (int c = 0; c < VDEV_NCHILD(vd); c++) {
		vdev_t *r = vdev_lookup_guid(VDEV_CHILD(vd, c), guid);
		if (r != NULL)
			return (r);
	}
	return (NULL);
}

uint64_t
vdev_group_child_asize(vdev_t *vd, uint64_t min_child_asize)
{
	uint64_t ashift = vd->vdev_ashift;
	uint64_t best = UINT64_MAX;

	for (int c = 0; ashift == 0 && c < VDEV_NCHILD(vd); c++)
		ashift = MAX(ashift, VDEV_CHILD(vd, c)->vdev_ashift);
	if (ashift == 0)
		ashift = SPA_MINBLOCKSHIFT;
	vd->vdev_ashift = ashift;
	for (int c = 0; c < VDEV_NCHILD(vd); c++) {
		vdev_t *cvd = VDEV_CHILD(vd, c);
		if (!vdev_usable(cvd))
			continue;
		uint64_t a = P2ALIGN(cvd->vdev_asize, 1ULL << ashift);
		if (a == 0 || a < min_child_asize) {
			cvd->vdev_ops->vop_close(cvd);
			cvd->vdev_open_error = SET_ERROR(EOVERFLOW);
			cvd->vdev_state = VDEV_STATE_CANT_OPEN;
			continue;
		}
		best = MIN(best, a);
	}
	return (best == UINT64_MAX ? 0 : best);
}

/* ---- block I/O dispatch ---- */

/*
 * Called by the allocator without the tree lock: a top-level vdev may be
 * converted in place meanwhile (vdev_tree.c), which changes its ops, not
 * its ashift, so either ops gives the same answer.
 */
uint64_t
vdev_psize_to_asize(vdev_t *top, uint64_t psize)
{
	const vdev_ops_t *ops = __atomic_load_n(&top->vdev_ops, __ATOMIC_ACQUIRE);
	if (ops->vop_asize == NULL)
		return (0);
	return (ops->vop_asize(top, psize));
}

uint64_t
vdev_deflate_ratio(vdev_t *top)
{
	const uint64_t ref = 128 * 1024;
	uint64_t asize = vdev_psize_to_asize(top, ref) / VDEV_DEFLATE_UNIT;
	if (asize == 0)
		return (VDEV_DEFLATE_UNIT);
	return (MIN(ref / asize, VDEV_DEFLATE_UNIT));
}

static int
vdev_io_check(vdev_t *top, vdev_io_t *io)
{
	io->vio_repaired = 0;
	io->vio_bad_children = 0;
	if (top->vdev_type == VDEV_TYPE_ROOT || io->vio_buf == NULL ||
	    io->vio_size == 0 || io->vio_size > UINT32_MAX)
		return (SET_ERROR(EINVAL));
	if (!vdev_usable(top))
		return (SET_ERROR(EIO));
	if (io->vio_offset > top->vdev_asize ||
	    vdev_psize_to_asize(top, io->vio_size) > top->vdev_asize - io->vio_offset)
		return (SET_ERROR(EINVAL));
	return (0);
}

int
vdev_read(vdev_t *top, vdev_io_t *io)
{
	int err = vdev_io_check(top, io);
	if (err != 0)
		return (err);
	if (!top->vdev_ops->vop_leaf)       /* a leaf counts its own I/O */
		vdev_stat_io(top, 0, io->vio_size);
	return (top->vdev_ops->vop_read(top, io));
}

int
vdev_write(vdev_t *top, vdev_io_t *io)
{
	int err = vdev_io_check(top, io);
	if (err != 0)
		return (err);
	if (!top->vdev_ops->vop_leaf)
		vdev_stat_io(top, 1, io->vio_size);
	return (top->vdev_ops->vop_write(top, io));
}

/*
 * Flushing children one after another costs the sum of their latencies
 * (milliseconds each on disks); in parallel, the longest.  But a thread
 * made for each flush, or even a worker woken for it, costs a time slice
 * when every CPU is busy: hundreds of microseconds, far more than a flush
 * of a file on a fast device (it made every fsync through the intent log
 * on a mirror ten times slower under load).  So the children's flushes
 * are offered to a few long-lived workers and the caller works through
 * the same list itself: each flush is claimed once, by whichever thread
 * gets to it first, and the caller then waits only for the flushes a
 * worker has actually started.  Idle CPUs and slow devices: parallel.
 * Busy CPUs and fast devices: the caller does them all, with no wait.
 * A child's own children (a mirror under the root) are flushed the same
 * way from whichever thread took it; a worker never waits on another
 * worker's queue position, so nesting cannot deadlock.
 * Each child's vop_flush result lands in errs[c] (ENXIO for a child that
 * cannot serve I/O); the caller judges them against its redundancy.
 */
#define VDEV_FLUSH_WORKERS 8

enum { VF_PENDING, VF_RUNNING, VF_DONE };

typedef struct vdev_flush_batch vdev_flush_batch_t;

typedef struct vdev_flush_arg {
	vdev_flush_batch_t *vfa_batch;
	vdev_t   *vfa_vd;
	int       vfa_err;
	int       vfa_state;            /* VF_*, atomic */
} vdev_flush_arg_t;

struct vdev_flush_batch {
	pthread_mutex_t vfb_lock;
	pthread_cond_t  vfb_cv;
	int             vfb_refs;       /* caller + queued tasks; vfb_lock */
	int             vfb_running;    /* flushes workers have claimed; vfb_lock */
	vdev_flush_arg_t vfb_arg[];
};

static taskq_lazy_t vdev_flush_tq = TASKQ_LAZY_INIT("vdev_flush", VDEV_FLUSH_WORKERS);

static void
vdev_flush_batch_rele(vdev_flush_batch_t *b)
{
	pthread_mutex_lock(&b->vfb_lock);
	bool last = --b->vfb_refs == 0;
	pthread_mutex_unlock(&b->vfb_lock);
	if (last) {
		pthread_mutex_destroy(&b->vfb_lock);
		pthread_cond_destroy(&b->vfb_cv);
		tarn_free(b);
	}
}

/* Claim a pending flush: true when this thread is to run it. */
static bool
vdev_flush_claim(vdev_flush_arg_t *a)
{
	int want = VF_PENDING;
	return (__atomic_compare_exchange_n(&a->vfa_state, &want, VF_RUNNING, false,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
}

static void
vdev_flush_task(void *arg)
{
	vdev_flush_arg_t *a = arg;
	vdev_flush_batch_t *b = a->vfa_batch;
	pthread_mutex_lock(&b->vfb_lock);
	bool mine = vdev_flush_claim(a);
	if (mine)
		b->vfb_running++;
	pthread_mutex_unlock(&b->vfb_lock);
	if (mine) {
		a->vfa_err = a->vfa_vd->vdev_ops->vop_flush(a->vfa_vd);
		pthread_mutex_lock(&b->vfb_lock);
		__atomic_store_n(&a->vfa_state, VF_DONE, __ATOMIC_RELEASE);
		if (--b->vfb_running == 0)
			pthread_cond_broadcast(&b->vfb_cv);
		pthread_mutex_unlock(&b->vfb_lock);
	}
	vdev_flush_batch_rele(b);
}

void
vdev_children_flush(vdev_t *vd, int *errs)
{
	int n = VDEV_NCHILD(vd), nusable = 0;
	vdev_flush_batch_t *b = tarn_alloc(sizeof (*b) + (size_t)n * sizeof (b->vfb_arg[0]));
	pthread_mutex_init(&b->vfb_lock, NULL);
	pthread_cond_init(&b->vfb_cv, NULL);
	b->vfb_refs = 1;
	for (int c = 0; c < n; c++) {
		vdev_flush_arg_t *a = &b->vfb_arg[c];
		a->vfa_batch = b;
		a->vfa_vd = VDEV_CHILD(vd, c);
		a->vfa_err = vdev_usable(a->vfa_vd) ? 0 : SET_ERROR(ENXIO);
		a->vfa_state = a->vfa_err == 0 ? VF_PENDING : VF_DONE;
		nusable += a->vfa_err == 0;
	}
	/* offer all but the first usable one to the workers */
	if (nusable > 1) {
		taskq_t *tq = taskq_lazy_get(&vdev_flush_tq);
		bool first = true;
		for (int c = 0; c < n; c++) {
			if (b->vfb_arg[c].vfa_state != VF_PENDING)
				continue;
			if (first) {
				first = false;
				continue;
			}
			pthread_mutex_lock(&b->vfb_lock);
			b->vfb_refs++;
			pthread_mutex_unlock(&b->vfb_lock);
			taskq_dispatch(tq, vdev_flush_task, &b->vfb_arg[c]);
		}
	}
	/* then take whatever no worker has started, in order */
	for (int c = 0; c < n; c++) {
		vdev_flush_arg_t *a = &b->vfb_arg[c];
		if (vdev_flush_claim(a)) {
			a->vfa_err = a->vfa_vd->vdev_ops->vop_flush(a->vfa_vd);
			__atomic_store_n(&a->vfa_state, VF_DONE, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_lock(&b->vfb_lock);
	while (b->vfb_running > 0)
		pthread_cond_wait(&b->vfb_cv, &b->vfb_lock);
	pthread_mutex_unlock(&b->vfb_lock);
	for (int c = 0; c < n; c++)
		errs[c] = b->vfb_arg[c].vfa_err;
	vdev_flush_batch_rele(b);
}

int
vdev_flush(vdev_t *vd)
{
	if (!vdev_usable(vd))
		return (SET_ERROR(EIO));
	return (vd->vdev_ops->vop_flush(vd));
}

/* ---- the root ---- */

static int
vdev_root_open(vdev_t *vd)
{
	uint64_t asize = 0;
	for (int c = 0; c < VDEV_NCHILD(vd); c++)
		asize += VDEV_CHILD(vd, c)->vdev_asize;
	vd->vdev_asize = asize;
	vdev_root_ops.vop_state_change(vd);
	return (vdev_usable(vd) ? 0 : SET_ERROR(ENXIO));
}

static void
vdev_root_state_change(vdev_t *vd)
{
	vdev_state_t st = VDEV_STATE_HEALTHY;
	if (VDEV_NCHILD(vd) == 0)
		st = VDEV_STATE_CANT_OPEN;
	for (int c = 0; c < VDEV_NCHILD(vd); c++) {
		vdev_t *top = VDEV_CHILD(vd, c);
		/* a log vdev lost costs only its intent log (zpool import -m) */
		if (!vdev_usable(top) && top->vdev_alloc_bias == VDEV_BIAS_LOG &&
		    st == VDEV_STATE_HEALTHY)
			st = VDEV_STATE_DEGRADED;
		else if (!vdev_usable(top) && top->vdev_alloc_bias != VDEV_BIAS_LOG)
			st = VDEV_STATE_FAULTED;
		else if (top->vdev_state == VDEV_STATE_DEGRADED &&
		    st == VDEV_STATE_HEALTHY)
			st = VDEV_STATE_DEGRADED;
	}
	vd->vdev_state = st;
}

static int
vdev_root_io(vdev_t *vd, vdev_io_t *io)
{
	return (SET_ERROR(EINVAL));
}

/* The pool is only as durable as its least durable top-level vdev. */
static int
vdev_root_flush(vdev_t *vd)
{
	int *errs = tarn_alloc((size_t)MAX(VDEV_NCHILD(vd), 1) * sizeof (int));
	int err = 0;
	vdev_children_flush(vd, errs);
	for (int c = 0; c < VDEV_NCHILD(vd); c++)
		if (errs[c] != 0 && err == 0 && !vdev_is_dead_log(VDEV_CHILD(vd, c)))
			err = SET_ERROR(EIO);
	tarn_free(errs);
	return (err);
}

const vdev_ops_t vdev_root_ops = {
	.vop_open = vdev_root_open,
	.vop_close = NULL,
	.vop_asize = NULL,
	.vop_read = vdev_root_io,
	.vop_write = vdev_root_io,
	.vop_flush = vdev_root_flush,
	.vop_state_change = vdev_root_state_change,
	.vop_name = "root",
	.vop_leaf = false,
};

/* ---- a leaf that was not found (import placeholder) ---- */

static int
vdev_missing_open(vdev_t *vd)
{
	return (SET_ERROR(ENXIO));
}

static void
vdev_missing_close(vdev_t *vd)
{
}

static uint64_t
vdev_missing_asize(vdev_t *vd, uint64_t psize)
{
	return (P2ROUNDUP(psize, 1ULL << MAX(vd->vdev_ashift, SPA_MINBLOCKSHIFT)));
}

static int
vdev_missing_io(vdev_t *vd, vdev_io_t *io)
{
	return (SET_ERROR(EIO));
}

static int
vdev_missing_flush(vdev_t *vd)
{
	return (SET_ERROR(EIO));
}

const vdev_ops_t vdev_missing_ops = {
	.vop_open = vdev_missing_open,
	.vop_close = vdev_missing_close,
	.vop_asize = vdev_missing_asize,
	.vop_read = vdev_missing_io,
	.vop_write = vdev_missing_io,
	.vop_flush = vdev_missing_flush,
	.vop_state_change = NULL,
	.vop_name = "missing",
	.vop_leaf = true,
};

/* ---- a hole: the place of a removed top-level vdev ---- */

static int
vdev_hole_open(vdev_t *vd)
{
	vd->vdev_asize = 0;
	vd->vdev_state = VDEV_STATE_HEALTHY;    /* never makes the root unusable */
	return (0);
}

static uint64_t
vdev_hole_asize(vdev_t *vd, uint64_t psize)
{
	return (psize);
}

static int
vdev_hole_io(vdev_t *vd, vdev_io_t *io)
{
	return (SET_ERROR(ENXIO));
}

static int
vdev_hole_flush(vdev_t *vd)
{
	return (0);
}

const vdev_ops_t vdev_hole_ops = {
	.vop_open = vdev_hole_open,
	.vop_close = NULL,
	.vop_asize = vdev_hole_asize,
	.vop_read = vdev_hole_io,
	.vop_write = vdev_hole_io,
	.vop_flush = vdev_hole_flush,
	.vop_state_change = NULL,
	.vop_name = "hole",
	.vop_leaf = false,
};

bool
vdev_is_hole(const vdev_t *vd)
{
	return (vd->vdev_type == VDEV_TYPE_HOLE);
}

bool
vdev_is_dead_log(const vdev_t *vd)
{
	return (vd->vdev_alloc_bias == VDEV_BIAS_LOG && vd->vdev_parent != NULL &&
	    vd->vdev_parent->vdev_type == VDEV_TYPE_ROOT && !vdev_usable(vd));
}

vdev_t *
vdev_hole_insert(vdev_t *top)
{
	vdev_t *root = top->vdev_parent;
	VERIFY(root != NULL && root->vdev_type == VDEV_TYPE_ROOT && top->vdev_top == top);
	VERIFY(top->vdev_ms_group == NULL);
	uint64_t id = top->vdev_id;
	vdev_t *hole = vdev_alloc(VDEV_TYPE_HOLE, 0);
	vdev_close(top);
	/* unlink top by hand: vdev_free would renumber the vdevs after it */
	top->vdev_parent = NULL;
	VDEV_CHILD(root, id) = hole;
	hole->vdev_parent = root;
	hole->vdev_id = id;
	hole->vdev_top = hole;
	(void) vdev_hole_open(hole);
	vdev_free(top);
	vdev_guid_sum_update(root);
	vdev_propagate_state(root);
	return (hole);
}
