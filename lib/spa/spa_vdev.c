/*
 * spa_vdev.c — device changes: attach, detach, replace, online, offline,
 * clear, hot spares; faulting devices that keep failing; and the
 * resilvers that bring devices up to date.
 *
 * THEORY
 *
 * Every change is made the same way: under spa_vdev_lock (one change at
 * a time), the new device is checked and opened first, then the tree is
 * changed under the tree write lock (vdev_tree.c: no I/O in flight, and
 * nothing that waits for I/O or a txg inside), then the change is made
 * durable: the config txg goes up and every leaf (and every hot spare)
 * gets the new config in its labels (spa_write_labels), so an import
 * assembles the new tree.  Leaves that leave the pool get their labels
 * cleared.
 *
 * Missed txgs (vdev_dtl.c) drive resilvers.  A leaf that is away while
 * txgs are written (offline, missing, faulted) records the range it
 * missed; a new device (attach, replace, spare) starts with "everything"
 * (from txg 1).  The range is written into the labels (so it survives
 * export and import; when a crash loses it, the leaf's own uberblock
 * ring tells the last txg it got, see spa_vdev_start) and makes its
 * group DEGRADED.  When a leaf with a range can be written again, a
 * resilver is started from the first missed txg (spa_scan_start), after
 * waiting for the last missed txg to be on disk; the scan reads every
 * block born since with VDEV_IO_SCRUB, and the vdev layer writes each
 * into the leaves that miss it.  When that resilver finishes without
 * errors, each range it covered (first >= its start txg, last <= the
 * txg synced when it began) is cleared; then replacing groups whose new
 * device is complete lose their old device, spare groups that the pool
 * made by itself (for a failed leaf) give their spare back once the
 * original device is complete again, and the pool returns to ONLINE.
 * A spare put in by `replace DEVICE SPARE` stays until a detach, as
 * zpool's does.
 *
 * A thread per pool (the "async" thread) does what no command asks for:
 * faults leaves whose I/O keeps failing (vdev_fault_req), activates hot
 * spares for leaves that cannot serve I/O, writes changed missed-txg
 * ranges to the labels, starts resilvers and notices their end.  It wakes
 * after each txg (spa_vdev_sync_done), when spa_scan.c says a resilver
 * ended (spa_vdev_resilver_done), and twice a second.  Commands run the
 * same step ("tick") themselves before returning.
 *
 * Lock order: spa_vdev_lock, then the tree lock.  The sync thread never
 * waits for spa_vdev_lock (trylock), so holding it while waiting for a
 * txg is safe.
 */
#include "spa_impl.h"

#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#define SPA_VDEV_TICK_MS 500

typedef struct spa_vdev_async {
	pthread_mutex_t sva_lock;       /* the fields up to sva_done */
	pthread_cond_t  sva_cv;
	pthread_t       sva_thread;
	bool            sva_running;    /* thread started, not yet joined */
	bool            sva_stop;
	bool            sva_kick;
	bool            sva_done;       /* spa_scan.c said a resilver ended */
	/* the rest under spa_vdev_lock */
	bool            sva_started;    /* spa_vdev_start ran, stop did not */
	bool            sva_labels;     /* sync_done may write labels (writable, started once) */
	bool            sva_resilver;   /* a resilver we started (or adopted) runs */
	uint64_t        sva_min;        /* its first txg */
	uint64_t        sva_synced;     /* txg synced when it began; 0: unknown */
	bool            sva_want;       /* a resilver may be needed */
	bool            sva_dirty;      /* the labels need rewriting */
} spa_vdev_async_t;

/* ---- walking the tree ---- */

typedef struct leaf_list {
	tarn_array_t ll_v;      /* of vdev_t * */
} leaf_list_t;
#define LEAF_LIST_INIT { TARN_ARRAY_INIT(vdev_t *) }

static void
leaf_list_add(leaf_list_t *ll, vdev_t *vd)
{
	TARN_ARRAY_APPEND(&ll->ll_v, vdev_t *, vd);
}

/* Every leaf (groups too when `groups`) under vd, children before parents. */
static void
spa_vdev_collect(vdev_t *vd, leaf_list_t *ll, bool groups)
{
	for (int c = 0; c < vdev_children(vd); c++)
		spa_vdev_collect(vdev_child(vd, c), ll, groups);
	if (vdev_ops(vd)->vop_leaf || (groups && vdev_is_group(vd)))
		leaf_list_add(ll, vd);
}

static void
leaf_list_free(leaf_list_t *ll)
{
	tarn_array_fini(&ll->ll_v);
}

bool
spa_vdev_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	if (a == NULL || b == NULL)
		return (false);
	if (strcmp(a, b) == 0)
		return (true);
	if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
		return (false);
	if (S_ISBLK(sa.st_mode) && S_ISBLK(sb.st_mode))
		return (sa.st_rdev == sb.st_rdev);
	return (sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
}

static vdev_t *
spa_vdev_find(vdev_t *vd, const char *name, int how)
{
	if (vdev_ops(vd)->vop_leaf) {
		const char *p = vdev_path(vd);
		char *end;
		unsigned long long g;
		switch (how) {
		case 0:
			return (p != NULL && strcmp(p, name) == 0 ? vd : NULL);
		case 1:
			g = strtoull(name, &end, 10);
			return (*end == '\0' && name[0] != '\0' && g == vdev_guid(vd) ? vd : NULL);
		case 2:
			return (p != NULL && strchr(name, '/') == NULL && strrchr(p, '/') != NULL &&
			    strcmp(strrchr(p, '/') + 1, name) == 0 ? vd : NULL);
		default:
			return (strchr(name, '/') != NULL && spa_vdev_same_file(p, name) ?
			    vd : NULL);
		}
	}
	for (int c = 0; c < vdev_children(vd); c++) {
		vdev_t *r = spa_vdev_find(vdev_child(vd, c), name, how);
		if (r != NULL)
			return (r);
	}
	return (NULL);
}

vdev_t *
spa_vdev_lookup(spa_t *spa, const char *name)
{
	vdev_t *root = spa->spa_root;
	if (name == NULL || root == NULL)
		return (NULL);
	for (int how = 0; how < 4; how++) {
		vdev_t *r = spa_vdev_find(root, name, how);
		if (r == NULL && vdev_spares(root) != NULL)
			r = spa_vdev_find(vdev_spares(root), name, how);
		if (r == NULL && vdev_l2cache(root) != NULL)
			r = spa_vdev_find(vdev_l2cache(root), name, how);
		if (r != NULL)
			return (r);
	}
	return (NULL);
}

vdev_t *
spa_lookup_leaf(spa_t *spa, const char *name)
{
	VERIFY0(tarn_mutex_lock(&spa->spa_vdev_lock, SPA_VDEV));
	vdev_t *vd = spa_vdev_lookup(spa, name);
	VERIFY0(tarn_mutex_unlock(&spa->spa_vdev_lock));
	return (vd);
}

int
spa_leaf_state(spa_t *spa, const char *name, vdev_state_t *state)
{
	VERIFY0(tarn_mutex_lock(&spa->spa_vdev_lock, SPA_VDEV));
	vdev_t *vd = spa_vdev_lookup(spa, name);
	if (vd != NULL)
		*state = vdev_state(vd);
	VERIFY0(tarn_mutex_unlock(&spa->spa_vdev_lock));
	return (vd != NULL ? 0 : SET_ERROR(ENOENT));
}

void
spa_vdev_hold(spa_t *spa)
{
	VERIFY0(tarn_mutex_lock(&spa->spa_vdev_lock, SPA_VDEV));
}

void
spa_vdev_rele(spa_t *spa)
{
	VERIFY0(tarn_mutex_unlock(&spa->spa_vdev_lock));
}

bool
spa_spare_in_use(spa_t *spa, const vdev_t *spare)
{
	return (vdev_lookup_guid(spa->spa_root, vdev_guid(spare)) != NULL);
}

/* Is vd one of the hot spares (the spare list, not the tree)? */
static bool
spa_vdev_is_spare_entry(spa_t *spa, const vdev_t *vd)
{
	return (vdev_spares(spa->spa_root) != NULL &&
	    vdev_parent(vd) == vdev_spares(spa->spa_root));
}

/* The hot spare (spare list entry) on the device at path, or NULL. */
static vdev_t *
spa_vdev_spare_named(spa_t *spa, const char *path)
{
	vdev_t *sp = vdev_spares(spa->spa_root);
	for (int c = 0; sp != NULL && c < vdev_children(sp); c++)
		if (spa_vdev_same_file(vdev_path(vdev_child(sp, c)), path))
			return (vdev_child(sp, c));
	return (NULL);
}

static vdev_t *
spa_spare_entry(spa_t *spa, uint64_t guid)
{
	vdev_t *sp = vdev_spares(spa->spa_root);
	return (sp != NULL ? vdev_lookup_guid(sp, guid) : NULL);
}

/* ---- the async thread ---- */

static void
spa_vdev_kick(spa_t *spa)
{
	spa_vdev_async_t *sva = spa->spa_vdev_async;
	if (sva == NULL)
		return;
	VERIFY0(tarn_mutex_lock(&sva->sva_lock, SPA_ASYNC));
	sva->sva_kick = true;
	VERIFY0(pthread_cond_signal(&sva->sva_cv));
	VERIFY0(tarn_mutex_unlock(&sva->sva_lock));
}

void
spa_vdev_init(spa_t *spa)
{
	spa_vdev_async_t *sva = tarn_alloc(sizeof (*sva));
	VERIFY0(pthread_mutex_init(&sva->sva_lock, NULL));
	pthread_condattr_t ca;
	VERIFY0(pthread_condattr_init(&ca));
	VERIFY0(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC));
	VERIFY0(pthread_cond_init(&sva->sva_cv, &ca));
	VERIFY0(pthread_condattr_destroy(&ca));
	spa->spa_vdev_async = sva;
}

void
spa_vdev_fini(spa_t *spa)
{
	spa_vdev_async_t *sva = spa->spa_vdev_async;
	if (sva == NULL)
		return;
	VERIFY(!sva->sva_running);
	VERIFY0(pthread_cond_destroy(&sva->sva_cv));
	VERIFY0(pthread_mutex_destroy(&sva->sva_lock));
	tarn_free(sva);
	spa->spa_vdev_async = NULL;
}

void
spa_vdev_resilver_done(spa_t *spa, uint64_t txg)
{
	spa_vdev_async_t *sva = spa->spa_vdev_async;
	if (sva == NULL)
		return;
	VERIFY0(tarn_mutex_lock(&sva->sva_lock, SPA_ASYNC));
	sva->sva_done = true;
	sva->sva_kick = true;
	VERIFY0(pthread_cond_signal(&sva->sva_cv));
	VERIFY0(tarn_mutex_unlock(&sva->sva_lock));
}

static void spa_vdev_tick(spa_t *spa);

static void *
spa_vdev_thread(void *arg)
{
	spa_t *spa = arg;
	spa_vdev_async_t *sva = spa->spa_vdev_async;
	VERIFY0(tarn_mutex_lock(&sva->sva_lock, SPA_ASYNC));
	while (!sva->sva_stop) {
		if (!sva->sva_kick) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_nsec += SPA_VDEV_TICK_MS * 1000000L;
			ts.tv_sec += ts.tv_nsec / 1000000000L;
			ts.tv_nsec %= 1000000000L;
			(void) pthread_cond_timedwait(&sva->sva_cv, &sva->sva_lock, &ts);
		}
		if (sva->sva_stop)
			break;
		sva->sva_kick = false;
		VERIFY0(tarn_mutex_unlock(&sva->sva_lock));
		VERIFY0(tarn_mutex_lock(&spa->spa_vdev_lock, SPA_VDEV));
		spa_vdev_tick(spa);
		VERIFY0(tarn_mutex_unlock(&spa->spa_vdev_lock));
		VERIFY0(tarn_mutex_lock(&sva->sva_lock, SPA_ASYNC));
	}
	VERIFY0(tarn_mutex_unlock(&sva->sva_lock));
	return (NULL);
}

/* ---- labels ---- */

/* Write the current tree into every label; remember the DTLs written. */
static int
spa_vdev_write_config(spa_t *spa)
{
	spa->spa_config_txg = MAX(spa->spa_config_txg + 1, spa_last_synced_txg(spa) + 1);
	int e = spa_write_labels(spa, POOL_STATE_ACTIVE, false);
	leaf_list_t ll = LEAF_LIST_INIT;
	spa_vdev_collect(spa->spa_root, &ll, false);
	for (int i = 0; i < (int)tarn_array_len(&ll.ll_v); i++) {
		vdev_t *leaf = TARN_ARRAY_AT(&ll.ll_v, vdev_t *, i);
		uint64_t dtl[2];
		vdev_dtl_encoded(leaf, dtl);
		vdev_set_dtl_saved(leaf, dtl);
	}
	leaf_list_free(&ll);
	spa->spa_vdev_async->sva_dirty = false;
	return (e);
}

/* Does some leaf's DTL differ from what its labels say? */
static bool
spa_vdev_dtl_changed(spa_t *spa)
{
	leaf_list_t ll = LEAF_LIST_INIT;
	bool changed = false;
	spa_vdev_collect(spa->spa_root, &ll, false);
	for (int i = 0; i < (int)tarn_array_len(&ll.ll_v) && !changed; i++) {
		uint64_t dtl[2];
		vdev_t *leaf = TARN_ARRAY_AT(&ll.ll_v, vdev_t *, i);
		vdev_dtl_encoded(leaf, dtl);
		changed = dtl[0] != vdev_dtl_saved(leaf)[0] || dtl[1] != vdev_dtl_saved(leaf)[1];
	}
	leaf_list_free(&ll);
	return (changed);
}

/*
 * After each txg (sync thread): record changed DTLs in the labels now if
 * spa_vdev_lock is free (never wait for it: its holder may be waiting
 * for this very sync), and wake the async thread.
 */
void
spa_vdev_sync_done(spa_t *spa, uint64_t txg)
{
	spa_vdev_async_t *sva = spa->spa_vdev_async;
	if (sva == NULL || spa->spa_readonly)
		return;
	if (tarn_mutex_trylock(&spa->spa_vdev_lock, SPA_VDEV) == 0) {
		if (sva->sva_labels && spa_vdev_dtl_changed(spa))
			(void) spa_vdev_write_config(spa);
		VERIFY0(tarn_mutex_unlock(&spa->spa_vdev_lock));
	}
	spa_vdev_kick(spa);
}

/* Zero the labels of a device that left the pool (best effort). */
void
spa_vdev_forget(const char *path)
{
	if (path != NULL)
		(void) vdev_label_clear_path(path);
}

/* ---- checking and opening devices ---- */

int
spa_vdev_fail(int e, char *err, size_t errlen, const char *fmt, ...)
{
	if (err != NULL && errlen > 0) {
		va_list ap;
		va_start(ap, fmt);
		(void) vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return (e);
}

/* Allocatable bytes a device of psize offers at ashift (vdev_file_open's rule). */
static uint64_t
spa_vdev_usable_size(uint64_t psize, uint64_t ashift)
{
	if (psize < VDEV_LABEL_START_SIZE + VDEV_LABEL_END_SIZE + 8 * KiB)
		return (0);
	return (P2ALIGN(P2ALIGN(psize, VDEV_LABEL_SIZE) - VDEV_LABEL_START_SIZE -
	    VDEV_LABEL_END_SIZE, 1ULL << MAX(ashift, SPA_MINBLOCKSHIFT)));
}

/* Does the label at path name this pool and this leaf? */
bool
spa_vdev_label_is(spa_t *spa, const char *path, uint64_t guid)
{
	vdev_label_config_t cfg;
	if (path == NULL || vdev_label_read_path(path, &cfg) != 0)
		return (false);
	bool ok = cfg.vlc_pool_guid == spa->spa_guid && cfg.vlc_leaf_guid == guid;
	vdev_config_free(&cfg);
	return (ok);
}

/* Refuse a device whose label says it belongs to a live pool (unless force). */
static int
spa_vdev_check_label(spa_t *spa, const char *path, bool force, char *err, size_t errlen)
{
	vdev_label_config_t cfg;
	if (vdev_label_read_path(path, &cfg) != 0)
		return (0);
	int e = 0;
	bool ours = cfg.vlc_pool_guid == spa->spa_guid;
	if ((cfg.vlc_state == POOL_STATE_SPARE || cfg.vlc_state == POOL_STATE_L2CACHE) &&
	    !force)
		e = spa_vdev_fail(SET_ERROR(EBUSY), err, errlen, "'%s' is a %s "
		    "of pool '%s'; use -f to override", path, cfg.vlc_state == POOL_STATE_SPARE ?
		    "hot spare" : "cache device", cfg.vlc_name);
	else if ((cfg.vlc_state == POOL_STATE_ACTIVE ||
	    cfg.vlc_state == POOL_STATE_EXPORTED) && !force)
		e = spa_vdev_fail(SET_ERROR(EBUSY), err, errlen, "'%s' is part of %s "
		    "pool '%s'; use -f to override", path, ours ? "this" :
		    cfg.vlc_state == POOL_STATE_ACTIVE ? "active" : "exported", cfg.vlc_name);
	vdev_config_free(&cfg);
	return (e);
}

/*
 * Check a device about to join the pool: it exists, is a regular file or
 * block device, is not in the pool already, offers at least `need`
 * allocatable bytes at ashift (SPA_MINDEVSIZE when need is 0), and holds
 * no label of a live pool or a spare (unless force).
 */
int
spa_vdev_check_new(spa_t *spa, const char *path, uint64_t need, uint64_t ashift,
    bool force, char *err, size_t errlen)
{
	struct stat st;
	if (path == NULL || path[0] != '/')
		return (spa_vdev_fail(SET_ERROR(EINVAL), err, errlen,
		    "'%s' is not an absolute path", path ? path : "(null)"));
	if (stat(path, &st) != 0)
		return (spa_vdev_fail(SET_ERROR(ENOENT), err, errlen, "cannot open '%s': %s",
		    path, strerror(errno)));
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return (spa_vdev_fail(SET_ERROR(EINVAL), err, errlen,
		    "'%s' is not a regular file or block device", path));
	vdev_t *dup = spa_vdev_lookup(spa, path);
	if (dup != NULL && spa_vdev_same_file(vdev_path(dup), path))
		return (spa_vdev_fail(SET_ERROR(EBUSY), err, errlen,
		    "'%s' is already in the pool%s", path,
		    spa_vdev_is_spare_entry(spa, dup) ? " (as a hot spare)" :
		    vdev_parent(dup) == vdev_l2cache(spa->spa_root) ? " (as a cache device)" : ""));
	uint64_t psize = 0, sector = 0;
	bool disk = false;
	int e = vdev_leaf_probe(path, &psize, &sector, &disk);
	if (e != 0)
		return (spa_vdev_fail(e, err, errlen, "cannot open '%s': %s", path,
		    strerror(e)));
	uint64_t usable = spa_vdev_usable_size(psize, ashift);
	if (need == 0 ? psize < SPA_MINDEVSIZE : usable < need)
		return (spa_vdev_fail(SET_ERROR(EOVERFLOW), err, errlen,
		    "'%s' is too small: %" PRIu64 " usable bytes, at least %" PRIu64
		    " needed", path, usable, need ? need : (uint64_t)SPA_MINDEVSIZE));
	return (spa_vdev_check_label(spa, path, force, err, errlen));
}

/* Open a new leaf on path (not yet in the tree). */
int
spa_vdev_open_new(const char *path, uint64_t guid, uint64_t ashift, vdev_t **vdp,
    char *err, size_t errlen)
{
	vdev_t *vd = vdev_alloc(VDEV_TYPE_FILE, guid);
	vdev_set_path(vd, path);
	vdev_set_ashift(vd, ashift);
	int e = vdev_ops(vd)->vop_open(vd);
	if (e != 0) {
		vdev_free(vd);
		return (spa_vdev_fail(e, err, errlen, e == EBUSY ?
		    "'%s' is in use by another process" : "cannot open '%s': %s", path,
		    strerror(e)));
	}
	vdev_set_state(vd, VDEV_STATE_HEALTHY);
	*vdp = vd;
	return (0);
}

/*
 * A device that joins misses everything written so far: txg 1 up to the
 * txg that may be in the middle of being written (the tree write lock is
 * held, so the next txg's writes will include the device).
 */
static void
spa_vdev_dtl_all(spa_t *spa, vdev_t *leaf)
{
	vdev_dtl_clear(leaf);
	vdev_dtl_mark(leaf, spa_last_synced_txg(spa) + 1);
	vdev_dtl_mark(leaf, 1);
}

#define SPA_VDEV_RING_UNKNOWN UINT64_MAX

/*
 * The leaf can be written again (tree write lock held): an open end of
 * its missed range (from the labels) becomes the txg that may be being
 * written now; and if its uberblock ring (`newest`, read beforehand, or
 * SPA_VDEV_RING_UNKNOWN) is older than the pool was (`as_of`: the last
 * synced txg before the ring was read), it missed the txgs since (a DTL
 * lost in a crash).
 */
static void
spa_vdev_dtl_rejoin(spa_t *spa, vdev_t *leaf, uint64_t newest, uint64_t as_of)
{
	uint64_t synced = spa_last_synced_txg(spa);
	if (!vdev_leaf_ready(leaf))
		return;
	if (!vdev_dtl_empty(leaf) && vdev_dtl_last(leaf) == VDEV_DTL_OPEN)
		vdev_set_dtl_last(leaf, synced + 1);
	if (newest != SPA_VDEV_RING_UNKNOWN && as_of != 0 && newest < as_of) {
		vdev_dtl_mark(leaf, synced + 1);
		vdev_dtl_mark(leaf, newest + 1);
	}
}

/* ---- faults and hot spares ---- */

/* Fault leaves whose I/O keeps failing, unless they hold the last copy. */
static void
spa_vdev_faults(spa_t *spa)
{
	spa_vdev_async_t *sva = spa->spa_vdev_async;
	leaf_list_t ll = LEAF_LIST_INIT;
	spa_vdev_collect(spa->spa_root, &ll, false);
	for (int i = 0; i < (int)tarn_array_len(&ll.ll_v); i++) {
		vdev_t *leaf = TARN_ARRAY_AT(&ll.ll_v, vdev_t *, i);
		if (!vdev_fault_req_take(leaf) ||
		    !vdev_leaf_ready(leaf))
			continue;
		if (vdev_dtl_required(leaf)) {
			vdev_set_err_run(leaf, 0);
			continue;
		}
		vdev_state_t st = vdev_path(leaf) != NULL && access(vdev_path(leaf), F_OK) != 0 ?
		    VDEV_STATE_REMOVED : VDEV_STATE_FAULTED;
		tarn_dprintf("spa %s: %s %s after %u errors in a row\n", spa->spa_name,
		    vdev_state_name(st), vdev_path(leaf), vdev_err_run(leaf));
		vdev_tree_enter_write(spa->spa_root);
		vdev_ops(leaf)->vop_close(leaf);
		vdev_set_fault_state(leaf, st);
		vdev_set_state(leaf, st);
		vdev_propagate_state(vdev_parent(leaf));
		vdev_tree_exit(spa->spa_root);
		sva->sva_dirty = true;
	}
	leaf_list_free(&ll);
}

/*
 * Put hot spare `entry` beside leaf (a spare group in its place); the
 * spare resilvers from everything.  The spare list keeps the entry
 * (closed while the tree's copy of it is in use).  `automatic`: the pool
 * put it in for a failed leaf, and takes it out again once that leaf is
 * whole (spa_vdev_settle_groups); else (replace) it stays until detach.
 */
static int
spa_vdev_spare_activate(spa_t *spa, vdev_t *leaf, vdev_t *entry, bool automatic,
    char *err, size_t errlen)
{
	uint64_t need = vdev_slot_asize(leaf);
	if (vdev_asize(entry) < need)
		return (spa_vdev_fail(SET_ERROR(EOVERFLOW), err, errlen,
		    "hot spare '%s' is too small", vdev_path(entry)));
	vdev_ops(entry)->vop_close(entry);
	vdev_t *nv = NULL;
	int e = spa_vdev_open_new(vdev_path(entry), vdev_guid(entry), vdev_ashift(leaf),
	    &nv, err, errlen);
	if (e == 0 && vdev_asize(nv) < need) {
		vdev_free(nv);
		e = spa_vdev_fail(SET_ERROR(EOVERFLOW), err, errlen,
		    "hot spare '%s' is too small", vdev_path(entry));
	}
	if (e != 0) {
		(void) vdev_leaf_reopen(entry, 0);
		return (e);
	}
	vdev_tree_enter_write(spa->spa_root);
	spa_vdev_dtl_all(spa, nv);     /* now: no txg is being written meanwhile */
	vdev_t *g = vdev_group_insert(&leaf, VDEV_TYPE_SPARE);
	vdev_set_spare_auto(g, automatic);
	vdev_add_child(g, nv);
	vdev_propagate_state(g);
	vdev_tree_exit(spa->spa_root);
	vdev_set_state(entry, VDEV_STATE_HEALTHY);
	spa->spa_vdev_async->sva_want = true;
	spa->spa_vdev_async->sva_dirty = true;
	tarn_dprintf("spa %s: hot spare %s in for %s\n", spa->spa_name, vdev_path(nv),
	    vdev_path(leaf));
	return (0);
}

/* An available spare big enough for leaf's slot, or NULL. */
static vdev_t *
spa_vdev_spare_pick(spa_t *spa, const vdev_t *leaf)
{
	vdev_t *sp = vdev_spares(spa->spa_root);
	uint64_t need = vdev_slot_asize(leaf);
	for (int c = 0; sp != NULL && c < vdev_children(sp); c++) {
		vdev_t *e = vdev_child(sp, c);
		if (vdev_leaf_ready(e) && vdev_asize(e) >= need &&
		    !spa_spare_in_use(spa, e))
			return (e);
	}
	return (NULL);
}

/* Leaves of redundant groups that cannot serve I/O get a spare. */
static void
spa_vdev_spares_auto(spa_t *spa)
{
	if (vdev_spares(spa->spa_root) == NULL)
		return;
	leaf_list_t ll = LEAF_LIST_INIT;
	spa_vdev_collect(spa->spa_root, &ll, false);
	for (int i = 0; i < (int)tarn_array_len(&ll.ll_v); i++) {
		vdev_t *leaf = TARN_ARRAY_AT(&ll.ll_v, vdev_t *, i), *p = vdev_parent(leaf);
		if (vdev_state(leaf) >= VDEV_STATE_DEGRADED || vdev_offline(leaf) ||
		    (vdev_type(p) != VDEV_TYPE_MIRROR && vdev_type(p) != VDEV_TYPE_RAIDZ))
			continue;
		vdev_t *entry = spa_vdev_spare_pick(spa, leaf);
		if (entry != NULL)
			(void) spa_vdev_spare_activate(spa, leaf, entry, true, NULL, 0);
	}
	leaf_list_free(&ll);
}

/* Open the hot spares whose labels say they are ours (at pool start). */
static void
spa_vdev_spares_open(spa_t *spa)
{
	vdev_t *sp = vdev_spares(spa->spa_root);
	for (int c = 0; sp != NULL && c < vdev_children(sp); c++) {
		vdev_t *e = vdev_child(sp, c);
		vdev_set_readonly(e, spa->spa_readonly);
		if (spa_spare_in_use(spa, e))
			continue;
		vdev_set_state(e, VDEV_STATE_CANT_OPEN);
		if (spa_vdev_label_is(spa, vdev_path(e), vdev_guid(e)))
			(void) vdev_leaf_reopen(e, 0);
	}
}

/* ---- resilver ---- */

/* Mark the leaves a resilver now covers. */
static void
spa_vdev_mark_resilvering(spa_t *spa)
{
	leaf_list_t ll = LEAF_LIST_INIT;
	spa_vdev_collect(spa->spa_root, &ll, false);
	for (int i = 0; i < (int)tarn_array_len(&ll.ll_v); i++) {
		vdev_t *leaf = TARN_ARRAY_AT(&ll.ll_v, vdev_t *, i);
		vdev_set_resilvering(leaf, vdev_leaf_ready(leaf) && !vdev_dtl_empty(leaf));
	}
	leaf_list_free(&ll);
}

/*
 * Start a resilver from the first txg that some writable leaf missed,
 * once its last missed txg is on disk.  A resilver already running (one
 * restarted at import, or started by `resilver`) is adopted: when it
 * finishes, its own min_txg and committed txg (sss_txg) say what it
 * covered.
 */
static void
spa_vdev_resilver_start(spa_t *spa)
{
	spa_vdev_async_t *sva = spa->spa_vdev_async;
	if (sva->sva_resilver || !sva->sva_want || dmu_pool_suspended(spa->spa_dp))
		return;
	uint64_t min = UINT64_MAX, max = 0;
	leaf_list_t ll = LEAF_LIST_INIT;
	spa_vdev_collect(spa->spa_root, &ll, false);
	for (int i = 0; i < (int)tarn_array_len(&ll.ll_v); i++) {
		vdev_t *leaf = TARN_ARRAY_AT(&ll.ll_v, vdev_t *, i);
		if (!vdev_leaf_ready(leaf) || vdev_dtl_empty(leaf))
			continue;
		min = MIN(min, vdev_dtl_txg(leaf));
		max = MAX(max, vdev_dtl_last(leaf));
	}
	leaf_list_free(&ll);
	sva->sva_want = false;
	if (min == UINT64_MAX)
		return;
	spa_scan_stat_t st;
	spa_scan_get_stat(spa, &st);
	if (st.sss_state == SPA_SCAN_STATE_SCANNING && st.sss_func == SPA_SCAN_RESILVER) {
		sva->sva_resilver = true;
		sva->sva_min = st.sss_min_txg;
		sva->sva_synced = 0;
		spa_vdev_mark_resilvering(spa);
		return;
	}
	if (max != VDEV_DTL_OPEN && txg_wait_synced(spa->spa_dp, max) != 0)
		return;
	uint64_t synced = spa_last_synced_txg(spa);
	int e = spa_scan_start(spa, SPA_SCAN_RESILVER, min);
	if (e != 0) {
		tarn_dprintf("spa %s: resilver from txg %" PRIu64 " not started: %d\n",
		    spa->spa_name, min, e);
		sva->sva_want = e == EBUSY;   /* retry once the other scan ends */
		return;
	}
	tarn_dprintf("spa %s: resilver from txg %" PRIu64 " (synced %" PRIu64 ")\n",
	    spa->spa_name, min, synced);
	sva->sva_resilver = true;
	sva->sva_min = min;
	sva->sva_synced = synced;
	spa_vdev_mark_resilvering(spa);
}

/* What leaving the pool means for a leaf of a finished group. */
static void
spa_vdev_leave(spa_t *spa, vdev_t *leaf, leaf_list_t *spares, leaf_list_t *gone)
{
	vdev_t *entry = spa_spare_entry(spa, vdev_guid(leaf));
	if (entry != NULL)
		leaf_list_add(spares, entry);
	else if (vdev_path(leaf) != NULL)
		leaf_list_add(gone, (vdev_t *)tarn_strdup(vdev_path(leaf)));
}

/* Give spares back (reopen their entries) and clear the labels of the gone. */
static void
spa_vdev_after_leave(spa_t *spa, leaf_list_t *spares, leaf_list_t *gone)
{
	for (int i = 0; i < (int)tarn_array_len(&spares->ll_v); i++)
		(void) vdev_leaf_reopen(TARN_ARRAY_AT(&spares->ll_v, vdev_t *, i), 0);
	for (int i = 0; i < (int)tarn_array_len(&gone->ll_v); i++) {
		spa_vdev_forget((const char *)TARN_ARRAY_AT(&gone->ll_v, vdev_t *, i));
		tarn_free(TARN_ARRAY_AT(&gone->ll_v, vdev_t *, i));
	}
	leaf_list_free(spares);
	leaf_list_free(gone);
}

/*
 * Replacing groups whose new device is complete lose the others; spare
 * groups that the pool put in by itself give the spare back once their
 * original device is complete.  A spare put in by replace stays until
 * detach (of the original: the spare stays for good; of the spare: it
 * goes back to the list), as zpool's do.
 */
static void
spa_vdev_settle_groups(spa_t *spa)
{
	leaf_list_t groups = LEAF_LIST_INIT, spares = LEAF_LIST_INIT, gone = LEAF_LIST_INIT;
	spa_vdev_collect(spa->spa_root, &groups, true);
	vdev_tree_enter_write(spa->spa_root);
	for (int i = 0; i < (int)tarn_array_len(&groups.ll_v); i++) {
		vdev_t *g = TARN_ARRAY_AT(&groups.ll_v, vdev_t *, i);
		int keep;
		if (vdev_type(g) == VDEV_TYPE_REPLACING &&
		    vdev_complete(vdev_child(g, vdev_children(g) - 1), NULL))
			keep = vdev_children(g) - 1;
		else if (vdev_type(g) == VDEV_TYPE_SPARE && vdev_spare_auto(g) &&
		    vdev_children(g) > 1 && vdev_complete(vdev_child(g, 0), NULL))
			keep = 0;
		else
			continue;
		vdev_t *kept = vdev_child(g, keep);
		while (vdev_children(g) > 1) {
			vdev_t *leaf = vdev_child(g, vdev_child(g, 0) == kept ? 1 : 0);
			spa_vdev_leave(spa, leaf, &spares, &gone);
			vdev_leaf_remove(leaf);
		}
		(void) vdev_group_collapse(g);
		spa->spa_vdev_async->sva_dirty = true;
	}
	vdev_tree_exit(spa->spa_root);
	leaf_list_free(&groups);
	spa_vdev_after_leave(spa, &spares, &gone);
}

/* Has the resilver we run ended?  Then clear what it covered. */
static void
spa_vdev_resilver_check(spa_t *spa)
{
	spa_vdev_async_t *sva = spa->spa_vdev_async;
	if (!sva->sva_resilver)
		return;
	spa_scan_stat_t st;
	spa_scan_get_stat(spa, &st);
	if (st.sss_state == SPA_SCAN_STATE_SCANNING)
		return;
	VERIFY0(tarn_mutex_lock(&sva->sva_lock, SPA_ASYNC));
	bool said_done = sva->sva_done;
	sva->sva_done = false;
	VERIFY0(tarn_mutex_unlock(&sva->sva_lock));
	bool mine = st.sss_func == SPA_SCAN_RESILVER;
	/* Covered: blocks born up to the committed txg the walk read. */
	uint64_t covered = mine && st.sss_txg != 0 ? st.sss_txg : sva->sva_synced;
	uint64_t min = mine ? st.sss_min_txg : sva->sva_min;
	bool ok = covered != 0 && (mine ? st.sss_state == SPA_SCAN_STATE_FINISHED &&
	    st.sss_errors == 0 : said_done);
	leaf_list_t ll = LEAF_LIST_INIT;
	spa_vdev_collect(spa->spa_root, &ll, false);
	vdev_tree_enter_write(spa->spa_root);
	for (int i = 0; i < (int)tarn_array_len(&ll.ll_v); i++) {
		vdev_t *leaf = TARN_ARRAY_AT(&ll.ll_v, vdev_t *, i);
		vdev_set_resilvering(leaf, false);
		if (ok && vdev_leaf_ready(leaf) && !vdev_dtl_empty(leaf) &&
		    vdev_dtl_txg(leaf) >= min && vdev_dtl_last(leaf) <= covered) {
			vdev_dtl_clear(leaf);
			vdev_propagate_state(vdev_parent(leaf));
		}
	}
	vdev_tree_exit(spa->spa_root);
	leaf_list_free(&ll);
	tarn_dprintf("spa %s: resilver of txgs %" PRIu64 "..%" PRIu64 " ended (%s)\n",
	    spa->spa_name, min, covered, ok ? "covered" : "not covered");
	sva->sva_resilver = false;
	/* After errors, wait for a new reason; else go on with what is left. */
	sva->sva_want = ok || !(mine && st.sss_errors != 0);
	sva->sva_dirty = true;
	spa_vdev_settle_groups(spa);
}

/*
 * Changed missed-txg ranges: labels to rewrite, states to recompute
 * (a leaf that misses txgs makes its group DEGRADED), maybe a resilver.
 */
static void
spa_vdev_dtl_check(spa_t *spa)
{
	spa_vdev_async_t *sva = spa->spa_vdev_async;
	leaf_list_t ll = LEAF_LIST_INIT;
	bool changed = false;
	spa_vdev_collect(spa->spa_root, &ll, false);
	for (int i = 0; i < (int)tarn_array_len(&ll.ll_v); i++) {
		vdev_t *leaf = TARN_ARRAY_AT(&ll.ll_v, vdev_t *, i);
		uint64_t dtl[2];
		if (vdev_leaf_ready(leaf) && !vdev_dtl_empty(leaf) &&
		    vdev_dtl_last(leaf) == VDEV_DTL_OPEN) {
			vdev_tree_enter_write(spa->spa_root);
			spa_vdev_dtl_rejoin(spa, leaf, SPA_VDEV_RING_UNKNOWN, 0);
			vdev_tree_exit(spa->spa_root);
		}
		vdev_dtl_encoded(leaf, dtl);
		if (dtl[0] == vdev_dtl_saved(leaf)[0] && dtl[1] == vdev_dtl_saved(leaf)[1])
			continue;
		changed = true;
		if (vdev_leaf_ready(leaf) && dtl[0] != 0)
			sva->sva_want = true;
	}
	if (changed) {
		vdev_tree_enter_write(spa->spa_root);
		for (int i = 0; i < (int)tarn_array_len(&ll.ll_v); i++)
			vdev_propagate_state(vdev_parent(TARN_ARRAY_AT(&ll.ll_v, vdev_t *, i)));
		vdev_tree_exit(spa->spa_root);
		sva->sva_dirty = true;
	}
	leaf_list_free(&ll);
}

/*
 * One step of the async work (spa_vdev_lock held).  `final`: the pool
 * is stopping; only bookkeeping (no new spares or resilvers).
 */
static void
spa_vdev_tick_impl(spa_t *spa, bool final)
{
	spa_vdev_async_t *sva = spa->spa_vdev_async;
	if (!sva->sva_started || spa->spa_readonly || spa->spa_dp == NULL)
		return;
	spa_vdev_faults(spa);
	if (!final)
		spa_vdev_spares_auto(spa);
	spa_vdev_dtl_check(spa);
	spa_vdev_resilver_check(spa);
	if (!final)
		spa_vdev_resilver_start(spa);
	if (sva->sva_dirty)
		(void) spa_vdev_write_config(spa);
}

static void
spa_vdev_tick(spa_t *spa)
{
	spa_vdev_tick_impl(spa, false);
}

/* ---- start and stop ---- */

void
spa_vdev_start(spa_t *spa)
{
	spa_vdev_async_t *sva = spa->spa_vdev_async;
	VERIFY0(tarn_mutex_lock(&spa->spa_vdev_lock, SPA_VDEV));
	spa_vdev_spares_open(spa);
	if (!spa->spa_readonly && spa->spa_dp != NULL)
		spa_l2arc_start(spa);    /* the L2ARC hears of the cache devices */
	spa_l2cache_open(spa);       /* cache devices (spa_class.c) */
	if (!spa->spa_readonly && spa->spa_dp != NULL && !sva->sva_started) {
		leaf_list_t ll = LEAF_LIST_INIT;
		spa_vdev_collect(spa->spa_root, &ll, false);
		uint64_t *newest = tarn_alloc(sizeof (uint64_t) * (size_t)MAX((int)tarn_array_len(&ll.ll_v), 1));
		uint64_t as_of = spa->spa_loaded_txg;   /* every leaf had that one */
		for (int i = 0; i < (int)tarn_array_len(&ll.ll_v); i++)
			newest[i] = vdev_leaf_ready(TARN_ARRAY_AT(&ll.ll_v, vdev_t *, i)) ?
			    vdev_uberblock_newest(TARN_ARRAY_AT(&ll.ll_v, vdev_t *, i), spa->spa_guid) : SPA_VDEV_RING_UNKNOWN;
		vdev_tree_enter_write(spa->spa_root);
		for (int i = 0; i < (int)tarn_array_len(&ll.ll_v); i++)
			spa_vdev_dtl_rejoin(spa, TARN_ARRAY_AT(&ll.ll_v, vdev_t *, i), newest[i], as_of);
		vdev_tree_exit(spa->spa_root);
		tarn_free(newest);
		leaf_list_free(&ll);
		sva->sva_started = true;
		sva->sva_labels = true;
		sva->sva_want = true;
		spa_vdev_tick(spa);
		VERIFY0(tarn_mutex_lock(&sva->sva_lock, SPA_ASYNC));
		sva->sva_stop = false;
		VERIFY0(tarn_thread_create(&sva->sva_thread, NULL, spa_vdev_thread, spa));
		sva->sva_running = true;
		VERIFY0(tarn_mutex_unlock(&sva->sva_lock));
	}
	VERIFY0(tarn_mutex_unlock(&spa->spa_vdev_lock));
}

void
spa_vdev_stop(spa_t *spa, bool settle)
{
	spa_vdev_async_t *sva = spa->spa_vdev_async;
	if (sva == NULL)
		return;
	VERIFY0(tarn_mutex_lock(&sva->sva_lock, SPA_ASYNC));
	bool running = sva->sva_running;
	sva->sva_stop = true;
	VERIFY0(pthread_cond_signal(&sva->sva_cv));
	VERIFY0(tarn_mutex_unlock(&sva->sva_lock));
	if (running)
		VERIFY0(pthread_join(sva->sva_thread, NULL));
	sva->sva_running = false;
	VERIFY0(tarn_mutex_lock(&spa->spa_vdev_lock, SPA_VDEV));
	if (settle)
		spa_vdev_tick_impl(spa, true);
	else
		sva->sva_labels = false;     /* abandoned: write nothing more */
	sva->sva_started = false;
	VERIFY0(tarn_mutex_unlock(&spa->spa_vdev_lock));
}

/* ---- the commands ---- */

/* Take spa_vdev_lock for a change; refuse read-only pools. */
int
spa_vdev_enter(spa_t *spa, char *err, size_t errlen)
{
	VERIFY0(tarn_mutex_lock(&spa->spa_vdev_lock, SPA_VDEV));
	if (spa->spa_readonly || !spa->spa_vdev_async->sva_started) {
		VERIFY0(tarn_mutex_unlock(&spa->spa_vdev_lock));
		return (spa_vdev_fail(SET_ERROR(EROFS), err, errlen,
		    "the pool is open read-only"));
	}
	return (0);
}

/* Make a change durable (labels), do what follows from it, unlock. */
int
spa_vdev_exit(spa_t *spa, int e, bool changed, char *err, size_t errlen)
{
	if (changed) {
		int le = spa_vdev_write_config(spa);
		if (le != 0 && e == 0)
			e = spa_vdev_fail(le, err, errlen, "the change is made but the "
			    "labels could not be written: %s", tarn_strerror(le));
		spa->spa_vdev_async->sva_want = true;
		spa_vdev_tick(spa);
	}
	VERIFY0(tarn_mutex_unlock(&spa->spa_vdev_lock));
	return (e);
}

/* The leaf a command names, in the tree (not a spare entry). */
static int
spa_vdev_member(spa_t *spa, const char *name, vdev_t **leafp, char *err, size_t errlen)
{
	vdev_t *leaf = spa_vdev_lookup(spa, name);
	if (leaf == NULL)
		return (spa_vdev_fail(SET_ERROR(ENODEV), err, errlen,
		    "no such device in pool"));
	if (spa_vdev_is_spare_entry(spa, leaf))
		return (spa_vdev_fail(SET_ERROR(ENOTSUP), err, errlen,
		    "'%s' is a hot spare that is not in use", name));
	*leafp = leaf;
	return (0);
}

/* Open and label a new device (its DTL is set as it joins the tree). */
static int
spa_vdev_prepare_new(spa_t *spa, const char *path, uint64_t ashift, vdev_t **nvp,
    char *err, size_t errlen)
{
	int e = spa_vdev_open_new(path, 0, ashift, nvp, err, errlen);
	if (e == 0 && (e = vdev_label_init(*nvp)) != 0) {
		vdev_free(*nvp);
		return (spa_vdev_fail(e, err, errlen, "cannot write to '%s': %s", path,
		    tarn_strerror(e)));
	}
	return (e);
}

int
spa_vdev_attach(spa_t *spa, const char *existing, const char *path, bool force,
    char *err, size_t errlen)
{
	vdev_t *leaf = NULL, *nv = NULL;
	int e = spa_vdev_enter(spa, err, errlen);
	if (e != 0)
		return (e);
	e = spa_vdev_member(spa, existing, &leaf, err, errlen);
	vdev_t *p = leaf != NULL ? vdev_parent(leaf) : NULL;
	if (e == 0 && vdev_type(p) != VDEV_TYPE_ROOT && vdev_type(p) != VDEV_TYPE_MIRROR)
		e = spa_vdev_fail(SET_ERROR(ENOTSUP), err, errlen,
		    "can only attach to mirrors and top-level disks");
	if (e == 0 && vdev_children(p) >= VDEV_MAX_CHILDREN)
		e = spa_vdev_fail(SET_ERROR(EINVAL), err, errlen, "the mirror is full");
	if (e == 0)
		e = spa_vdev_check_new(spa, path, vdev_slot_asize(leaf), vdev_ashift(leaf),
		    force, err, errlen);
	if (e == 0)
		e = spa_vdev_prepare_new(spa, path, vdev_ashift(leaf), &nv, err, errlen);
	if (e != 0)
		return (spa_vdev_exit(spa, e, false, err, errlen));
	vdev_tree_enter_write(spa->spa_root);
	spa_vdev_dtl_all(spa, nv);     /* now: no txg is being written meanwhile */
	vdev_t *g = vdev_type(p) == VDEV_TYPE_ROOT ?
	    vdev_group_insert(&leaf, VDEV_TYPE_MIRROR) : p;
	vdev_add_child(g, nv);
	vdev_propagate_state(g);
	vdev_tree_exit(spa->spa_root);
	return (spa_vdev_exit(spa, 0, true, err, errlen));
}

/*
 * Replace with the same device (it was wiped or swapped for a blank
 * one): wipe its labels, reopen it as missing everything, resilver.
 */
static int
spa_vdev_replace_same(spa_t *spa, vdev_t *leaf, const char *path, bool force,
    char *err, size_t errlen)
{
	if (vdev_dtl_required(leaf))
		return (spa_vdev_fail(SET_ERROR(EBUSY), err, errlen, "no valid replicas: "
		    "'%s' holds data no other device has", vdev_path(leaf)));
	if (vdev_leaf_ready(leaf) && spa_vdev_label_is(spa, path, vdev_guid(leaf)) && !force)
		return (spa_vdev_fail(SET_ERROR(EBUSY), err, errlen, "'%s' is in use in "
		    "this pool; use -f to rebuild it anyway", path));
	int e = spa_vdev_check_label(spa, path, force || spa_vdev_label_is(spa, path,
	    vdev_guid(leaf)), err, errlen);
	if (e != 0)
		return (e);
	uint64_t need = vdev_slot_asize(leaf);
	vdev_tree_enter_write(spa->spa_root);
	spa_vdev_dtl_all(spa, leaf);
	vdev_ops(leaf)->vop_close(leaf);
	vdev_set_state(leaf, VDEV_STATE_CANT_OPEN);
	vdev_propagate_state(vdev_parent(leaf));
	vdev_tree_exit(spa->spa_root);
	if ((e = vdev_label_clear_path(path)) != 0)
		e = spa_vdev_fail(e, err, errlen, "cannot open '%s': %s", path,
		    tarn_strerror(e));
	vdev_tree_enter_write(spa->spa_root);
	vdev_set_fault_state(leaf, 0);
	vdev_set_offline_flag(leaf, false);
	vdev_set_offline_temp(leaf, false);
	if (e == 0 && strcmp(vdev_path(leaf), path) != 0) {
		vdev_set_path(leaf, path);
	}
	int oe = vdev_leaf_reopen(leaf, need);
	vdev_tree_exit(spa->spa_root);
	if (e == 0 && oe != 0)
		e = spa_vdev_fail(oe, err, errlen, oe == EOVERFLOW ? "'%s' is too small" :
		    "cannot open '%s': %s", path, tarn_strerror(oe));
	if (e == 0)
		vdev_clear_errors(leaf);
	return (e);
}

/* Replace with another device: a replacing group (old, new) in old's place. */
static int
spa_vdev_replace_new(spa_t *spa, vdev_t *leaf, const char *path, bool force,
    char *err, size_t errlen)
{
	vdev_t *p = vdev_parent(leaf), *nv = NULL;
	if (vdev_type(p) == VDEV_TYPE_REPLACING)
		return (spa_vdev_fail(SET_ERROR(EBUSY), err, errlen,
		    "'%s' is already being replaced", vdev_path(leaf)));
	if (vdev_type(p) == VDEV_TYPE_SPARE && vdev_child(p, 0) != leaf)
		return (spa_vdev_fail(SET_ERROR(ENOTSUP), err, errlen, "'%s' is a hot spare "
		    "in use; detach it or replace the device it stands in for", vdev_path(leaf)));
	/* A hot spare of this pool named as the new device: activate it. */
	vdev_t *entry = spa_vdev_spare_named(spa, path);
	if (entry != NULL) {
		if (spa_spare_in_use(spa, entry))
			return (spa_vdev_fail(SET_ERROR(EBUSY), err, errlen,
			    "hot spare '%s' is already in use", path));
		if (vdev_type(p) == VDEV_TYPE_SPARE)
			return (spa_vdev_fail(SET_ERROR(EBUSY), err, errlen, "'%s' already "
			    "has a hot spare; detach it first", vdev_path(leaf)));
		if (!vdev_leaf_ready(entry))
			return (spa_vdev_fail(SET_ERROR(ENXIO), err, errlen, "hot spare '%s' "
			    "cannot be opened (%s)", path, vdev_state_name(vdev_state(entry))));
		return (spa_vdev_spare_activate(spa, leaf, entry, false, err, errlen));
	}
	int e = spa_vdev_check_new(spa, path, vdev_slot_asize(leaf), vdev_ashift(leaf),
	    force, err, errlen);
	if (e == 0)
		e = spa_vdev_prepare_new(spa, path, vdev_ashift(leaf), &nv, err, errlen);
	if (e != 0)
		return (e);
	char *gone = NULL;
	vdev_tree_enter_write(spa->spa_root);
	spa_vdev_dtl_all(spa, nv);     /* now: no txg is being written meanwhile */
	vdev_t *g;
	if (vdev_type(p) == VDEV_TYPE_SPARE) {
		/* The original goes now; the spare serves until the new one is whole. */
		gone = vdev_path(leaf) != NULL ? tarn_strdup(vdev_path(leaf)) : NULL;
		vdev_leaf_remove(leaf);
		vdev_group_set_type(p, VDEV_TYPE_REPLACING);
		g = p;
	} else {
		g = vdev_group_insert(&leaf, VDEV_TYPE_REPLACING);
	}
	vdev_add_child(g, nv);
	vdev_propagate_state(g);
	vdev_tree_exit(spa->spa_root);
	spa_vdev_forget(gone);
	tarn_free(gone);
	return (0);
}

int
spa_vdev_replace(spa_t *spa, const char *old, const char *path, bool force,
    char *err, size_t errlen)
{
	vdev_t *leaf = NULL;
	int e = spa_vdev_enter(spa, err, errlen);
	if (e != 0)
		return (e);
	e = spa_vdev_member(spa, old, &leaf, err, errlen);
	if (e == 0 && vdev_path(leaf) == NULL && path == NULL)
		e = spa_vdev_fail(SET_ERROR(EINVAL), err, errlen,
		    "the device has no known path; name the new device");
	if (e == 0) {
		if (path == NULL || spa_vdev_same_file(vdev_path(leaf), path))
			e = spa_vdev_replace_same(spa, leaf, path ? path : vdev_path(leaf),
			    force, err, errlen);
		else
			e = spa_vdev_replace_new(spa, leaf, path, force, err, errlen);
	}
	return (spa_vdev_exit(spa, e, e == 0, err, errlen));
}

int
spa_vdev_detach(spa_t *spa, const char *path, char *err, size_t errlen)
{
	vdev_t *leaf = NULL;
	int e = spa_vdev_enter(spa, err, errlen);
	if (e != 0)
		return (e);
	e = spa_vdev_member(spa, path, &leaf, err, errlen);
	vdev_t *p = leaf != NULL ? vdev_parent(leaf) : NULL;
	if (e == 0 && (vdev_type(p) == VDEV_TYPE_ROOT || vdev_type(p) == VDEV_TYPE_RAIDZ))
		e = spa_vdev_fail(SET_ERROR(ENOTSUP), err, errlen,
		    "only applicable to mirror, replacing and spare vdevs");
	if (e == 0 && vdev_dtl_required(leaf))
		e = spa_vdev_fail(SET_ERROR(EBUSY), err, errlen, "no valid replicas");
	if (e != 0)
		return (spa_vdev_exit(spa, e, false, err, errlen));
	leaf_list_t spares = LEAF_LIST_INIT, gone = LEAF_LIST_INIT;
	vdev_t *permanent = NULL;
	/* Detaching the original of a spare group makes the spare permanent. */
	if (vdev_type(p) == VDEV_TYPE_SPARE && vdev_child(p, 0) == leaf &&
	    vdev_children(p) == 2)
		permanent = spa_spare_entry(spa, vdev_guid(vdev_child(p, 1)));
	spa_vdev_leave(spa, leaf, &spares, &gone);
	vdev_tree_enter_write(spa->spa_root);
	vdev_leaf_remove(leaf);
	if (vdev_children(p) == 1)
		(void) vdev_group_collapse(p);
	if (permanent != NULL)
		vdev_free(permanent);
	vdev_tree_exit(spa->spa_root);
	spa_vdev_after_leave(spa, &spares, &gone);
	return (spa_vdev_exit(spa, 0, true, err, errlen));
}

int
spa_vdev_offline(spa_t *spa, const char *path, bool temporary, char *err, size_t errlen)
{
	vdev_t *leaf = NULL;
	int e = spa_vdev_enter(spa, err, errlen);
	if (e != 0)
		return (e);
	e = spa_vdev_member(spa, path, &leaf, err, errlen);
	if (e == 0 && vdev_offline(leaf)) {
		bool changed = vdev_offline_temp(leaf) != temporary;
		vdev_set_offline_temp(leaf, temporary);
		return (spa_vdev_exit(spa, 0, changed, err, errlen));
	}
	if (e == 0 && (vdev_top(leaf) == leaf || vdev_dtl_required(leaf)))
		e = spa_vdev_fail(SET_ERROR(EBUSY), err, errlen, "no valid replicas");
	if (e != 0)
		return (spa_vdev_exit(spa, e, false, err, errlen));
	vdev_tree_enter_write(spa->spa_root);
	vdev_ops(leaf)->vop_close(leaf);
	vdev_set_offline_flag(leaf, true);
	vdev_set_offline_temp(leaf, temporary);
	vdev_set_state(leaf, VDEV_STATE_OFFLINE);
	vdev_propagate_state(vdev_parent(leaf));
	vdev_tree_exit(spa->spa_root);
	return (spa_vdev_exit(spa, 0, true, err, errlen));
}

/*
 * Reopen a leaf that is offline, faulted or could not be opened, after
 * checking that the device on its path is still this leaf (its label).
 */
static int
spa_vdev_bring_back(spa_t *spa, vdev_t *leaf, char *err, size_t errlen)
{
	const char *path = vdev_path(leaf);
	if (path == NULL || !spa_vdev_label_is(spa, path, vdev_guid(leaf))) {
		if (path != NULL && access(path, F_OK) != 0)
			return (spa_vdev_fail(SET_ERROR(ENXIO), err, errlen,
			    "cannot open '%s': %s", path, strerror(errno)));
		return (spa_vdev_fail(SET_ERROR(ENXIO), err, errlen, "'%s' does not hold "
		    "this device's label (wiped or another disk?); use 'replace' to "
		    "rebuild it", path ? path : "device"));
	}
	uint64_t as_of = spa_last_synced_txg(spa);
	uint64_t newest = vdev_uberblock_newest_path(path, spa->spa_guid);
	vdev_tree_enter_write(spa->spa_root);
	vdev_set_offline_flag(leaf, false);
	vdev_set_offline_temp(leaf, false);
	vdev_set_fault_state(leaf, 0);
	int e = vdev_leaf_reopen(leaf, vdev_slot_asize(leaf));
	if (e == 0)
		spa_vdev_dtl_rejoin(spa, leaf, newest, as_of);
	vdev_propagate_state(vdev_parent(leaf));
	if (e == 0)
		spa_class_wake_log(spa, vdev_top(leaf));
	vdev_tree_exit(spa->spa_root);
	if (e != 0)
		return (spa_vdev_fail(e, err, errlen, "cannot open '%s': %s", path,
		    tarn_strerror(e)));
	return (0);
}

int
spa_vdev_online(spa_t *spa, const char *path, char *err, size_t errlen)
{
	vdev_t *leaf = NULL;
	int e = spa_vdev_enter(spa, err, errlen);
	if (e != 0)
		return (e);
	e = spa_vdev_member(spa, path, &leaf, err, errlen);
	if (e == 0 && !vdev_offline(leaf) && vdev_leaf_ready(leaf))
		return (spa_vdev_exit(spa, 0, false, err, errlen));   /* nothing to do */
	if (e == 0)
		e = spa_vdev_bring_back(spa, leaf, err, errlen);
	return (spa_vdev_exit(spa, e, leaf != NULL, err, errlen));
}

/* Clear one leaf: its counters, and bring it back when it failed. */
static bool
spa_vdev_clear_leaf(spa_t *spa, vdev_t *leaf)
{
	vdev_clear_errors(leaf);
	vdev_set_err_run(leaf, 0);
	vdev_set_fault_req(leaf, false);
	if (vdev_offline(leaf) || vdev_leaf_ready(leaf))
		return (false);
	return (spa_vdev_bring_back(spa, leaf, NULL, 0) == 0);
}

int
spa_vdev_clear(spa_t *spa, const char *path, char *err, size_t errlen)
{
	vdev_t *leaf = NULL;
	int e = spa_vdev_enter(spa, err, errlen);
	if (e != 0)
		return (e);
	bool changed = false;
	if (path != NULL) {
		e = spa_vdev_member(spa, path, &leaf, err, errlen);
		if (e == 0 && leaf != NULL)     /* always set on success; gcc -O3 cannot tell */
			changed = spa_vdev_clear_leaf(spa, leaf);
	} else {
		leaf_list_t ll = LEAF_LIST_INIT;
		spa_vdev_collect(spa->spa_root, &ll, false);
		for (int i = 0; i < (int)tarn_array_len(&ll.ll_v); i++)
			changed |= spa_vdev_clear_leaf(spa, TARN_ARRAY_AT(&ll.ll_v, vdev_t *, i));
		leaf_list_free(&ll);
		vdev_clear_errors(spa->spa_root);
	}
	return (spa_vdev_exit(spa, e, changed, err, errlen));
}

/* A top-level vdev's layout in words: "2-way mirror", "4-wide raidz1", "disk". */
static void
spa_vdev_layout(vdev_type_t type, int nparity, int width, char *buf, size_t len)
{
	if (type == VDEV_TYPE_MIRROR)
		(void) snprintf(buf, len, "%d-way mirror", width);
	else if (type == VDEV_TYPE_RAIDZ)
		(void) snprintf(buf, len, "%d-wide raidz%d", width, nparity);
	else
		(void) snprintf(buf, len, "disk");
}

/*
 * zpool add: new top-level vdevs.  The order keeps every txg on disk
 * consistent with the labels that an import reads: (1) the new devices
 * are checked, opened and their labels zeroed; (2) each gets its
 * metaslab array object in a tx and joins the tree, without metaslabs,
 * so nothing is allocated on it yet; (3) a txg sync puts the arrays on
 * disk and the uberblock in the new devices' rings; (4) the labels name
 * the new tree: the new devices' first, in a form an import uses to find
 * them but never as the pool's config, then every device's;
 * (5) the metaslab groups are created and loaded empty, and allocations
 * start using them.  A crash before the second half of (4) leaves the
 * old tree (the new devices are ignored; at most an empty MOS object
 * leaks); after it began, the new tree, every device of it labeled, its
 * metaslabs empty and its rings written.
 */
/* Can spec's vdevs join the tree (count, and unless force, layout)?  spa_vdev_lock held. */
static int
spa_vdev_add_fits(spa_t *spa, const spa_vdev_spec_t *spec, bool force, char *err,
    size_t errlen)
{
	const vdev_t *root = spa->spa_root;
	int n = spec->nchildren;
	if (vdev_children(root) + n > VDEV_MAX_CHILDREN)
		return (spa_vdev_fail(SET_ERROR(EINVAL), err, errlen, "a pool has at most "
		    "%d top-level vdevs", VDEV_MAX_CHILDREN));
	/* the data vdevs' layout; log and special vdevs are checked apart (spa_class.c) */
	const vdev_t *first = vdev_children(root) > 0 ? vdev_child(root, 0) : NULL;
	for (int t = 0; t < n && first != NULL && !force; t++) {
		const spa_vdev_spec_t *ts = spec->children[t];
		if (ts->cache || ts->bias != VDEV_BIAS_NORMAL)
			continue;
		int width = ts->nchildren > 0 ? ts->nchildren : 1;
		int fwidth = vdev_children(first) > 0 ? vdev_children(first) : 1;
		vdev_type_t ftype = vdev_children(first) > 0 ? vdev_type(first) : VDEV_TYPE_FILE;
		vdev_type_t ttype = ts->nchildren > 0 ? ts->type : VDEV_TYPE_FILE;
		if (ftype != ttype || width != fwidth ||
		    (ttype == VDEV_TYPE_RAIDZ && ts->nparity != (int)vdev_nparity(first))) {
			char have[64], want[64];
			spa_vdev_layout(ftype, (int)vdev_nparity(first), fwidth, have,
			    sizeof (have));
			spa_vdev_layout(ttype, ts->nparity, width, want, sizeof (want));
			return (spa_vdev_fail(SET_ERROR(EINVAL), err, errlen, "mismatched "
			    "replication level: pool uses %s and new vdev is %s; use -f "
			    "to override", have, want));
		}
	}
	return (0);
}

int
spa_vdev_add_check(spa_t *spa, const spa_vdev_spec_t *spec, bool force, char *err,
    size_t errlen)
{
	int e = spa_check_spec(spec, force, err, errlen);
	if (e != 0)
		return (e);
	spa_vdev_hold(spa);
	e = spa_vdev_add_fits(spa, spec, force, err, errlen);
	if (e == 0)
		e = spa_class_check_add(spa, spec, force, err, errlen);
	spa_vdev_rele(spa);
	return (e);
}

/*
 * The add's sync failed: its metaslab arrays are in no committed txg (the
 * pool is suspended, nothing more gets written).  Take the new top-level
 * vdevs out of the tree again, or the next label write (the async thread
 * faulting a leaf, a command) would name a vdev that no uberblock's tree
 * has, and no txg would import.
 */
static void
spa_vdev_add_undo(spa_t *spa, vdev_t **tops, int n)
{
	vdev_tree_enter_write(spa->spa_root);
	for (int t = n - 1; t >= 0; t--)
		vdev_free(tops[t]);      /* the last children: no other id moves */
	vdev_propagate_state(spa->spa_root);
	vdev_tree_exit(spa->spa_root);
}

static int
spa_vdev_add_tops(spa_t *spa, const spa_vdev_spec_t *spec, bool force, char *err,
    size_t errlen)
{
	int e;
	if ((e = spa_vdev_enter(spa, err, errlen)) != 0)
		return (e);
	if ((e = spa_vdev_add_fits(spa, spec, force, err, errlen)) != 0)
		return (spa_vdev_exit(spa, e, false, err, errlen));
	vdev_t *root = spa->spa_root;
	int n = spec->nchildren;
	const vdev_t *first = vdev_children(root) > 0 ? vdev_child(root, 0) : NULL;
	/* (1) open and label, at the pool's ashift or the devices' sectors if larger */
	uint64_t ashift = first != NULL ? vdev_ashift(first) : 0;
	for (int t = 0; t < n; t++) {
		const spa_vdev_spec_t *ts = spec->children[t];
		for (int l = 0; l < MAX(ts->nchildren, 1); l++) {
			const spa_vdev_spec_t *leaf = ts->nchildren > 0 ? ts->children[l] : ts;
			uint64_t size = 0, sector = 0;
			bool is_disk = false;
			if (vdev_leaf_probe(leaf->path, &size, &sector, &is_disk) == 0 && sector > 0)
				ashift = MAX(ashift, (uint64_t)highbit64(sector) - 1);
		}
	}
	vdev_t **tops = tarn_alloc(sizeof (vdev_t *) * (size_t)MAX(n, 1));
	int opened = 0;
	for (int t = 0; t < n && e == 0; t++) {
		vdev_t *top = spa_tree_from_spec(spec->children[t], ashift);
		tops[opened++] = top;
		if ((e = vdev_open(top, false)) != 0) {
			e = spa_vdev_fail(e, err, errlen, "cannot open the new devices: %s",
			    tarn_strerror(e));
			break;
		}
		leaf_list_t ll = LEAF_LIST_INIT;
		spa_vdev_collect(top, &ll, false);
		for (int l = 0; l < (int)tarn_array_len(&ll.ll_v) && e == 0; l++)
			if ((e = vdev_label_init(TARN_ARRAY_AT(&ll.ll_v, vdev_t *, l))) != 0)
				e = spa_vdev_fail(e, err, errlen, "cannot write to '%s': %s",
				    vdev_path(TARN_ARRAY_AT(&ll.ll_v, vdev_t *, l)), tarn_strerror(e));
		leaf_list_free(&ll);
		if (e == 0 && vdev_asize(top) < SPA_MINDEVSIZE / 2)
			e = spa_vdev_fail(SET_ERROR(EOVERFLOW), err, errlen, "the new vdev "
			    "offers too little space");
		if (e == 0) {
			vdev_set_ms_shift(top, metaslab_pick_shift(vdev_asize(top)));
			vdev_set_ms_count(top, DIV_ROUND_UP(vdev_asize(top),
			    1ULL << vdev_ms_shift(top)));
		}
	}
	/* (2) metaslab arrays, then the tree */
	if (e == 0) {
		dmu_tx_t *tx = dmu_tx_create(spa->spa_mos);
		dmu_tx_hold_space(tx, (uint64_t)n * 64 * KiB);
		if ((e = dmu_tx_assign(tx, TXG_WAIT)) == 0) {
			for (int t = 0; t < n && e == 0; t++) {
				uint64_t obj = vdev_ms_array(tops[t]);
				e = dmu_object_alloc(spa->spa_mos, DMU_OT_OBJECT_ARRAY,
				    SPA_MS_ARRAY_BLKSZ, DMU_OT_NONE, 0, tx, &obj);
				vdev_set_ms_array(tops[t], obj);
			}
		}
		dmu_tx_commit(tx);
		if (e != 0)
			e = spa_vdev_fail(e, err, errlen, "cannot record the new vdevs: %s",
			    tarn_strerror(e));
	}
	if (e != 0) {
		for (int t = 0; t < opened; t++)
			vdev_free(tops[t]);
		tarn_free(tops);
		return (spa_vdev_exit(spa, e, false, err, errlen));
	}
	vdev_tree_enter_write(root);
	for (int t = 0; t < n; t++)
		vdev_add_child(root, tops[t]);
	vdev_propagate_state(root);
	vdev_tree_exit(root);
	/* (3) on disk, rings of the new devices written */
	e = txg_wait_synced(spa->spa_dp, 0);
	if (e != 0) {
		spa_vdev_add_undo(spa, tops, n);
		tarn_free(tops);
		e = spa_vdev_fail(e, err, errlen, "the new vdevs could not be recorded "
		    "(%s); the pool is not changed", tarn_strerror(e));
		return (spa_vdev_exit(spa, e, false, err, errlen));
	}
	/*
	 * (4) labels.  First the new devices get the new config in state
	 * SPARE, as hot spares have: an import finds a device by any label
	 * of its pool, but takes the config only from ACTIVE ones, so these
	 * make the new devices findable without offering their tree.  Then
	 * every device gets it, ACTIVE: after a crash among those writes the
	 * newest config names the new tree and every device of it is found;
	 * after a crash among the first, the old tree is the newest.
	 */
	int le = 0;
	for (int t = 0; t < n && le == 0; t++)
		le = spa_write_labels_under(spa, tops[t], POOL_STATE_SPARE);
	if (le == 0)
		le = spa_vdev_write_config(spa);
	if (le != 0) {
		/* in the tree without metaslabs: nothing goes there; say so */
		e = spa_vdev_fail(le, err, errlen, "the new vdevs could not be recorded "
		    "(%s); they stay unused until the pool is imported again",
		    tarn_strerror(le));
		tarn_free(tops);
		return (spa_vdev_exit(spa, e, false, err, errlen));
	}
	/* (5) their space */
	uint64_t synced = spa_last_synced_txg(spa);
	for (int t = 0; t < n; t++) {
		metaslab_group_t *mg = metaslab_group_create(spa_class_of(spa,
		    vdev_alloc_bias(tops[t])), tops[t]);
		for (uint64_t m = 0; m < vdev_ms_count(tops[t]); m++)
			VERIFY0(metaslab_load(metaslab_group_get(mg, m), NULL, 0, synced));
	}
	tarn_free(tops);
	spa->spa_vdev_async->sva_want = true;
	spa_vdev_tick(spa);
	VERIFY0(tarn_mutex_unlock(&spa->spa_vdev_lock));
	return (0);
}

/*
 * zpool add: top-level vdevs of any class (spa_vdev_add_tops), then
 * cache devices (spa_class.c).  Every check comes before either.
 */
int
spa_vdev_add(spa_t *spa, const spa_vdev_spec_t *spec, bool force, char *err,
    size_t errlen)
{
	int e = spa_vdev_add_check(spa, spec, force, err, errlen);
	if (e != 0)
		return (e);
	spa_vdev_spec_t tops = { .type = VDEV_TYPE_ROOT };
	spa_vdev_spec_t **kids = tarn_alloc(sizeof (*kids) * (size_t)MAX(spec->nchildren, 1));
	bool caches = false;
	for (int t = 0; t < spec->nchildren; t++) {
		if (spec->children[t]->cache)
			caches = true;
		else
			kids[tops.nchildren++] = spec->children[t];
	}
	tops.children = kids;
	if (tops.nchildren > 0)
		e = spa_vdev_add_tops(spa, &tops, force, err, errlen);
	tarn_free(kids);
	if (e == 0 && caches)
		e = spa_vdev_add_cache(spa, spec, force, err, errlen);
	return (e);
}

int
spa_vdev_add_spares(spa_t *spa, int n, char *const paths[], bool force,
    char *err, size_t errlen)
{
	int e = spa_vdev_enter(spa, err, errlen), added = 0;
	if (e != 0)
		return (e);
	if (n <= 0)
		e = spa_vdev_fail(SET_ERROR(EINVAL), err, errlen, "no devices given");
	for (int i = 0; e == 0 && i < n; i++) {
		vdev_t *nv = NULL;
		e = spa_vdev_check_new(spa, paths[i], 0, 0, force, err, errlen);
		if (e == 0)
			e = spa_vdev_open_new(paths[i], 0, 0, &nv, err, errlen);
		if (e == 0 && (e = vdev_label_init(nv)) != 0) {
			vdev_free(nv);
			e = spa_vdev_fail(e, err, errlen, "cannot write to '%s'", paths[i]);
		}
		if (e != 0)
			break;
		vdev_tree_enter_write(spa->spa_root);
		if (vdev_spares(spa->spa_root) == NULL)
			vdev_set_spares(spa->spa_root, vdev_alloc(VDEV_TYPE_ROOT, 0));
		vdev_add_child(vdev_spares(spa->spa_root), nv);
		vdev_tree_exit(spa->spa_root);
		added++;
	}
	return (spa_vdev_exit(spa, e, added > 0, err, errlen));
}

int
spa_vdev_wait(spa_t *spa)
{
	for (;;) {
		int e = spa_scan_wait(spa);
		if (e != 0)
			return (e);
		VERIFY0(tarn_mutex_lock(&spa->spa_vdev_lock, SPA_VDEV));
		spa_vdev_tick(spa);
		spa_vdev_async_t *sva = spa->spa_vdev_async;
		/* the tick notices an end and starts what is left in one go */
		bool busy = sva->sva_started && sva->sva_resilver;
		VERIFY0(tarn_mutex_unlock(&spa->spa_vdev_lock));
		if (!busy)
			return (0);
	}
}
