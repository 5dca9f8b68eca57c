/*
 * metaslab.c — metaslabs, groups and classes: loading a metaslab from its
 * space map, syncing its changes into new entries, deferred frees,
 * condensing, and space accounting.  The allocator itself (the rotor, the
 * choice of metaslab, alloc and free) is in metaslab_alloc.c.
 *
 * Theory of free space.
 *
 * Each top-level vdev's allocatable space is cut into metaslabs of
 * 1 << vdev_ms_shift bytes (the last one shorter); they form the vdev's
 * metaslab group, and the groups of a pool form a metaslab class over
 * which allocations rotate.  A metaslab's free space lives in memory as a
 * range tree (ms_allocatable) and on disk as a space map: an append-only
 * log of what changed in each txg, owned by the pool layer as a MOS object
 * that it reads for metaslab_load and extends with what metaslab_sync hands
 * it.  A metaslab is unusable (all allocated) until it is loaded.
 *
 * The life of a range.  Every change is recorded in a per-txg tree, slot
 * txg & TXG_MASK, until the sync of that txg turns it into entries:
 *
 *   allocatable --alloc(txg)--> allocating[txg] --sync--> (in use)
 *   (in use) --free(birth < txg)--> freeing[txg] --sync--> freed[txg]
 *       --sync_done(txg)--> defer[txg % 3] --sync_done(txg + 3)--> allocatable
 *   allocating[txg] --free(birth == txg)--> allocatable       (no entry)
 *   (in use, born in txg) --free(birth == txg)--> allocatable + freenow[txg]
 *   defer[...] --sync_done(txg + 3), class held--> held --last release--> allocatable
 *
 * The last two are blocks that no committed uberblock can reference: one
 * whose ALLOC was never written just cancels; one whose ALLOC went out in
 * an earlier sync pass of the same txg is reusable at once but needs a
 * FREE_NOW entry.  Everything else waits TXG_DEFER_SIZE txgs after its
 * free is on disk, so that the last few uberblocks stay valid for a rewind
 * import (DESIGN.md invariant 4).
 *
 * Space map entries.  metaslab_sync(ms, txg) emits, under a TXG marker,
 * FREE_NOW for freenow[txg], then ALLOC for allocating[txg], then FREE for
 * freeing[txg].  FREE_NOW comes first because a range freed-now may have
 * been allocated again since (it is then in allocating[txg] too); the
 * other trees are disjoint.  Several sync passes may emit several groups
 * for the same txg.
 *
 * Replay.  metaslab_load starts from "all free" and applies entries as a
 * set: ALLOC requires its range free and takes it, FREE_NOW and FREE
 * require it allocated (neither free nor deferred) and release it.  A FREE
 * of txg t with t > synced_txg - TXG_DEFER_SIZE goes to defer[t % 3]
 * instead, maturing at sync_done(t + TXG_DEFER_SIZE) exactly as it would
 * have live, so a loaded metaslab equals the live one after
 * sync_done(synced_txg).  Any inconsistency is EINVAL, never a crash.
 *
 * Held frees.  While a scrub or resilver walks a committed tree, blocks
 * of that tree that later txgs free must not be reallocated (the scan
 * would read, and might "repair", someone else's new data: DESIGN.md
 * invariant 11).  So while the class is held (metaslab_class_hold_frees,
 * counted), frees that mature in sync_done go to ms_held instead of
 * ms_allocatable; when the last
 * hold is released they all become allocatable.  Held space counts as
 * deferred.  The space map is not involved: a held range is an ordinary
 * matured FREE on disk, so replay and condense treat it as free, and
 * after an import it is simply free (no scan survives a close).  The hold
 * count is read under ms_lock in sync_done and the release visits every
 * metaslab under its ms_lock after dropping the count, so a range is
 * never left behind in a held tree.
 *
 * Families of classes (allocation classes: normal, log, special).  A
 * pool's classes are made as a family: the primary keeps, beside its own
 * groups, an address table (mc_byid) of every group of the family, so
 * whatever takes a DVA (free, claim, is_allocated) finds its metaslab
 * through any class; and what is pool-wide (next_dirty, sync_done, holds)
 * walks that table.  Allocation, the rotor and space figures stay per
 * class.  A group enters its own class's table first, then the primary's
 * (never both locks at once).  A passive group (a device on its way out)
 * is skipped by allocation and still takes frees.
 *
 * Condensing.  A map grows with every txg that touches the metaslab; when
 * it is several times longer than the state it describes
 * (metaslab_should_condense), metaslab_condense writes a fresh one: under
 * the oldest txg involved, ALLOC of the whole metaslab and FREE_NOW of
 * every segment free as of txg (allocatable or held, or allocated since by
 * a later open txg whose ALLOC entries are still to come), then each deferred
 * slot's frees as FREE under their own txg marker (so deferral survives),
 * then txg's own frees.
 *
 * Locking.  Each metaslab has a mutex guarding its trees; alloc and free
 * run from many threads at once.  A group's active metaslab is picked
 * under mg_lock, the rotor under mc_rotor_lock, and the list of groups
 * under mc_groups_lock (read-mostly, writer-preferring: never take it
 * twice for reading in one thread).  Order: mc_hold_lock, then
 * mc_groups_lock, then mc_rotor_lock or mg_lock, then ms_lock; at most one
 * ms_lock at a time.
 * Sync, sync_done and condense run from the sync thread.
 */
#include "space_impl.h"

/* ---- metaslab basics ---- */

static metaslab_t *
metaslab_create(metaslab_group_t *mg, uint64_t id, uint64_t start, uint64_t size)
{
	metaslab_t *ms = tarn_alloc(sizeof (*ms));
	VERIFY0(pthread_mutex_init(&ms->ms_lock, NULL));
	ms->ms_group = mg;
	ms->ms_id = id;
	ms->ms_start = start;
	ms->ms_size = size;
	ms->ms_cursor = start;
	ms->ms_allocatable = range_tree_create();
	range_tree_set_unit(ms->ms_allocatable, mg->mg_unit);
	for (int t = 0; t < TXG_SIZE; t++) {
		ms->ms_allocating[t] = range_tree_create();
		ms->ms_freenow[t] = range_tree_create();
		ms->ms_freeing[t] = range_tree_create();
		ms->ms_freed[t] = range_tree_create();
	}
	for (int t = 0; t < TXG_DEFER_SIZE; t++)
		ms->ms_defer[t] = range_tree_create();
	ms->ms_held = range_tree_create();
	return (ms);
}

static void
metaslab_destroy(metaslab_t *ms)
{
	range_tree_destroy(ms->ms_allocatable);
	for (int t = 0; t < TXG_SIZE; t++) {
		range_tree_destroy(ms->ms_allocating[t]);
		range_tree_destroy(ms->ms_freenow[t]);
		range_tree_destroy(ms->ms_freeing[t]);
		range_tree_destroy(ms->ms_freed[t]);
	}
	for (int t = 0; t < TXG_DEFER_SIZE; t++)
		range_tree_destroy(ms->ms_defer[t]);
	range_tree_destroy(ms->ms_held);
	pthread_mutex_destroy(&ms->ms_lock);
	tarn_free(ms);
}

static uint64_t
ms_deferred_space(const metaslab_t *ms)
{
	uint64_t d = 0;
	for (int t = 0; t < TXG_SIZE; t++)
		d += range_tree_space(ms->ms_freeing[t]) + range_tree_space(ms->ms_freed[t]);
	for (int t = 0; t < TXG_DEFER_SIZE; t++)
		d += range_tree_space(ms->ms_defer[t]);
	return (d + range_tree_space(ms->ms_held));
}

/*
 * Refresh ms's statistics from its trees and carry the differences into
 * its group's sums.  Caller holds ms_lock; ms is loaded.
 */
void
metaslab_update_stats(metaslab_t *ms)
{
	metaslab_group_t *mg = ms->ms_group;
	uint64_t nfree = range_tree_space(ms->ms_allocatable);
	uint64_t ndef = ms_deferred_space(ms);
	uint64_t ofree = ms->ms_stat_free, odef = ms->ms_stat_deferred;
	uint64_t nuse = range_tree_unit_space(ms->ms_allocatable), ouse = ms->ms_stat_usable;
	__atomic_store_n(&ms->ms_stat_usable, nuse, __ATOMIC_RELAXED);
	if (nuse != ouse)
		__atomic_add_fetch(&mg->mg_usable, nuse - ouse, __ATOMIC_RELAXED);
	__atomic_store_n(&ms->ms_stat_free, nfree, __ATOMIC_RELAXED);
	__atomic_store_n(&ms->ms_stat_deferred, ndef, __ATOMIC_RELAXED);
	__atomic_store_n(&ms->ms_stat_max_seg, range_tree_max_seg(ms->ms_allocatable),
	    __ATOMIC_RELAXED);
	if (nfree != ofree)
		__atomic_add_fetch(&mg->mg_free, nfree - ofree, __ATOMIC_RELAXED);
	if (ndef != odef)
		__atomic_add_fetch(&mg->mg_deferred, ndef - odef, __ATOMIC_RELAXED);
}

/*
 * True when [off, off+size) is wholly in use in ms: neither allocatable
 * nor freed (pending, synced or deferred).  Caller holds ms_lock.
 */
bool
metaslab_range_in_use(const metaslab_t *ms, uint64_t off, uint64_t size)
{
	if (off < ms->ms_start || size > ms->ms_size ||
	    off - ms->ms_start > ms->ms_size - size)
		return (false);
	if (range_tree_intersects(ms->ms_allocatable, off, size))
		return (false);
	for (int t = 0; t < TXG_SIZE; t++) {
		if (range_tree_intersects(ms->ms_freeing[t], off, size) ||
		    range_tree_intersects(ms->ms_freed[t], off, size))
			return (false);
	}
	for (int t = 0; t < TXG_DEFER_SIZE; t++) {
		if (range_tree_intersects(ms->ms_defer[t], off, size))
			return (false);
	}
	return (!range_tree_intersects(ms->ms_held, off, size));
}

uint64_t
metaslab_id(const metaslab_t *ms)
{
	return (ms->ms_id);
}

vdev_t *
metaslab_vdev(const metaslab_t *ms)
{
	return (ms->ms_group->mg_vd);
}

uint64_t
metaslab_start(const metaslab_t *ms)
{
	return (ms->ms_start);
}

uint64_t
metaslab_size(const metaslab_t *ms)
{
	return (ms->ms_size);
}

uint64_t
metaslab_allocated(const metaslab_t *ms)
{
	metaslab_t *m = (metaslab_t *)ms;
	tarn_mutex_lock(&m->ms_lock, MS);
	uint64_t a = m->ms_loaded ? m->ms_size - range_tree_space(m->ms_allocatable)
	    : m->ms_size;
	tarn_mutex_unlock(&m->ms_lock);
	return (a);
}

/* ---- loading ---- */

typedef struct ms_replay {
	metaslab_t   *mr_ms;
	uint64_t      mr_synced;
	range_tree_t *mr_free;
	range_tree_t *mr_defer[TXG_DEFER_SIZE];
	uint64_t      mr_defer_txg[TXG_DEFER_SIZE];
} ms_replay_t;

static bool
mr_allocated(const ms_replay_t *mr, uint64_t off, uint64_t size)
{
	if (range_tree_intersects(mr->mr_free, off, size))
		return (false);
	for (int t = 0; t < TXG_DEFER_SIZE; t++) {
		if (range_tree_intersects(mr->mr_defer[t], off, size))
			return (false);
	}
	return (true);
}

static int
ms_replay_cb(void *arg, const sm_entry_t *e)
{
	ms_replay_t *mr = arg;
	uint64_t off = mr->mr_ms->ms_start + e->sme_offset, size = e->sme_size;
	if (e->sme_txg > mr->mr_synced)
		return (SET_ERROR(EINVAL));     /* from the future: wrong map */
	if (e->sme_type == SM_ALLOC) {
		if (!range_tree_contains(mr->mr_free, off, size))
			return (SET_ERROR(EINVAL));
		range_tree_remove(mr->mr_free, off, size);
		return (0);
	}
	if (!mr_allocated(mr, off, size))
		return (SET_ERROR(EINVAL));
	uint64_t t = e->sme_txg;
	if (e->sme_type == SM_FREE && mr->mr_synced - t < TXG_DEFER_SIZE) {
		int s = (int)(t % TXG_DEFER_SIZE);
		if (range_tree_space(mr->mr_defer[s]) != 0 && mr->mr_defer_txg[s] != t)
			return (SET_ERROR(EINVAL));
		mr->mr_defer_txg[s] = t;
		range_tree_add(mr->mr_defer[s], off, size);
	} else {
		range_tree_add(mr->mr_free, off, size);
	}
	return (0);
}

int
metaslab_load(metaslab_t *ms, const void *sm, size_t smlen, uint64_t synced_txg)
{
	ms_replay_t mr = { .mr_ms = ms, .mr_synced = synced_txg };
	mr.mr_free = range_tree_create();
	range_tree_add(mr.mr_free, ms->ms_start, ms->ms_size);
	for (int t = 0; t < TXG_DEFER_SIZE; t++)
		mr.mr_defer[t] = range_tree_create();

	int err = 0;
	if (sm != NULL && smlen > 0)
		err = space_map_iterate(sm, smlen, ms->ms_size, ms_replay_cb, &mr);

	tarn_mutex_lock(&ms->ms_lock, MS);
	if (err == 0 && ms->ms_loaded)
		err = SET_ERROR(EBUSY);
	if (err != 0) {
		tarn_mutex_unlock(&ms->ms_lock);
		range_tree_destroy(mr.mr_free);
		for (int t = 0; t < TXG_DEFER_SIZE; t++)
			range_tree_destroy(mr.mr_defer[t]);
		return (err);
	}
	range_tree_destroy(ms->ms_allocatable);
	ms->ms_allocatable = mr.mr_free;
	range_tree_set_unit(ms->ms_allocatable, ms->ms_group->mg_unit);
	for (int t = 0; t < TXG_DEFER_SIZE; t++) {
		range_tree_destroy(ms->ms_defer[t]);
		ms->ms_defer[t] = mr.mr_defer[t];
		ms->ms_defer_txg[t] = mr.mr_defer_txg[t];
	}
	ms->ms_loaded = true;
	ms->ms_cursor = ms->ms_start;
	__atomic_add_fetch(&ms->ms_group->mg_total, ms->ms_size, __ATOMIC_RELAXED);
	metaslab_update_stats(ms);
	tarn_mutex_unlock(&ms->ms_lock);
	return (0);
}

/* ---- syncing ---- */

typedef struct ms_emit {
	sm_buf_t *me_buf;
	sm_type_t me_type;
	uint64_t  me_base;
} ms_emit_t;

static void
ms_emit_cb(void *arg, uint64_t start, uint64_t size)
{
	ms_emit_t *me = arg;
	space_map_buf_range(me->me_buf, me->me_type, start - me->me_base, size);
}

static void
ms_emit_tree(const metaslab_t *ms, sm_buf_t *b, sm_type_t type, const range_tree_t *rt)
{
	ms_emit_t me = { b, type, ms->ms_start };
	range_tree_walk(rt, ms_emit_cb, &me);
}

static void
ms_add_cb(void *arg, uint64_t start, uint64_t size)
{
	range_tree_add(arg, start, size);
}

/* Mature a deferred slot: allocatable, or held while the class holds frees. */
static void
ms_mature(metaslab_t *ms, range_tree_t *rt)
{
	metaslab_class_t *mc = ms->ms_group->mg_class->mc_primary;   /* holds are the family's */
	if (__atomic_load_n(&mc->mc_holds, __ATOMIC_ACQUIRE) == 0) {
		range_tree_vacate(rt, ms_add_cb, ms->ms_allocatable);
		return;
	}
	__atomic_add_fetch(&mc->mc_held, range_tree_space(rt), __ATOMIC_RELAXED);
	range_tree_vacate(rt, ms_add_cb, ms->ms_held);
}

static bool
ms_dirty(const metaslab_t *ms, uint64_t txg)
{
	int t = (int)(txg & TXG_MASK);
	return (range_tree_numsegs(ms->ms_allocating[t]) != 0 ||
	    range_tree_numsegs(ms->ms_freenow[t]) != 0 ||
	    range_tree_numsegs(ms->ms_freeing[t]) != 0);
}

/* txg's unsynced changes are now in a map: drop or advance them. */
static void
ms_mark_synced(metaslab_t *ms, uint64_t txg)
{
	int t = (int)(txg & TXG_MASK);
	range_tree_vacate(ms->ms_allocating[t], NULL, NULL);
	range_tree_vacate(ms->ms_freenow[t], NULL, NULL);
	range_tree_vacate(ms->ms_freeing[t], ms_add_cb, ms->ms_freed[t]);
}

int
metaslab_sync(metaslab_t *ms, uint64_t txg, void **buf, size_t *len)
{
	sm_buf_t b = SM_BUF_INIT;
	int t = (int)(txg & TXG_MASK);
	tarn_mutex_lock(&ms->ms_lock, MS);
	if (ms_dirty(ms, txg)) {
		space_map_buf_txg(&b, txg);
		ms_emit_tree(ms, &b, SM_FREE_NOW, ms->ms_freenow[t]);
		ms_emit_tree(ms, &b, SM_ALLOC, ms->ms_allocating[t]);
		ms_emit_tree(ms, &b, SM_FREE, ms->ms_freeing[t]);
		ms_mark_synced(ms, txg);
	}
	tarn_mutex_unlock(&ms->ms_lock);
	space_map_buf_take(&b, buf, len);
	return (0);
}

/*
 * txg is on disk: deferred frees of txg - TXG_DEFER_SIZE (or older)
 * become allocatable, txg's own frees start their deferral.
 */
static bool
ms_sync_done(metaslab_t *ms, uint64_t txg)
{
	int t = (int)(txg & TXG_MASK), d = (int)(txg % TXG_DEFER_SIZE);
	bool maturing = false;
	tarn_mutex_lock(&ms->ms_lock, MS);
	if (!ms->ms_loaded) {
		tarn_mutex_unlock(&ms->ms_lock);
		return (false);
	}
	VERIFY(!ms_dirty(ms, txg));     /* every change of txg was synced */
	for (int s = 0; s < TXG_DEFER_SIZE; s++) {
		if (range_tree_numsegs(ms->ms_defer[s]) != 0 &&
		    ms->ms_defer_txg[s] + TXG_DEFER_SIZE <= txg)
			ms_mature(ms, ms->ms_defer[s]);
	}
	if (range_tree_numsegs(ms->ms_freed[t]) != 0) {
		VERIFY0(range_tree_numsegs(ms->ms_defer[d]));
		range_tree_vacate(ms->ms_freed[t], ms_add_cb, ms->ms_defer[d]);
		ms->ms_defer_txg[d] = txg;
	}
	for (int s = 0; s < TXG_DEFER_SIZE; s++)
		maturing |= range_tree_numsegs(ms->ms_defer[s]) != 0;
	metaslab_update_stats(ms);
	tarn_mutex_unlock(&ms->ms_lock);
	return (maturing);
}

bool
metaslab_class_sync_done(metaslab_class_t *mc, uint64_t txg)
{
	bool maturing = false;
	mc = mc->mc_primary;
	tarn_rw_rdlock(&mc->mc_groups_lock, MC_GROUPS);
	for (uint64_t g = 0; g < mc_nbyid(mc); g++) {
		metaslab_group_t *mg = mc_group_byid(mc, g);
		for (uint64_t i = 0; mg != NULL && i < mg->mg_count; i++)
			maturing |= ms_sync_done(mg->mg_ms[i], txg);
	}
	tarn_rw_unlock(&mc->mc_groups_lock);
	return (maturing);
}

metaslab_t *
metaslab_class_next_dirty(metaslab_class_t *mc, uint64_t txg, metaslab_t *prev)
{
	metaslab_t *found = NULL;
	mc = mc->mc_primary;
	tarn_rw_rdlock(&mc->mc_groups_lock, MC_GROUPS);
	uint64_t g = 0, i = 0;
	if (prev != NULL) {
		g = prev->ms_group->mg_id;
		i = prev->ms_id + 1;
	}
	for (; g < mc_nbyid(mc) && found == NULL; g++, i = 0) {
		metaslab_group_t *mg = mc_group_byid(mc, g);
		for (; mg != NULL && i < mg->mg_count; i++) {
			metaslab_t *ms = mg->mg_ms[i];
			tarn_mutex_lock(&ms->ms_lock, MS);
			bool dirty = ms_dirty(ms, txg);
			tarn_mutex_unlock(&ms->ms_lock);
			if (dirty) {
				found = ms;
				break;
			}
		}
	}
	tarn_rw_unlock(&mc->mc_groups_lock);
	return (found);
}

/* ---- condensing ---- */

/* Entries a fresh map of ms needs (caller holds ms_lock). */
static uint64_t
ms_condensed_entries(const metaslab_t *ms)
{
	uint64_t n = 2 + TXG_DEFER_SIZE + 1;    /* markers and the whole ALLOC */
	n += range_tree_numsegs(ms->ms_allocatable) + range_tree_numsegs(ms->ms_held);
	for (int t = 0; t < TXG_DEFER_SIZE; t++)
		n += range_tree_numsegs(ms->ms_defer[t]);
	for (int t = 0; t < TXG_SIZE; t++)
		n += range_tree_numsegs(ms->ms_freed[t]) + range_tree_numsegs(ms->ms_freeing[t]);
	return (n);
}

bool
metaslab_should_condense(const metaslab_t *ms, uint64_t smlen)
{
	metaslab_t *m = (metaslab_t *)ms;
	tarn_mutex_lock(&m->ms_lock, MS);
	bool loaded = m->ms_loaded;
	uint64_t fresh = ms_condensed_entries(m) * SM_ENTRY_SIZE;
	tarn_mutex_unlock(&m->ms_lock);
	return (loaded && smlen > 4 * fresh + 64 * KiB);
}

int
metaslab_condense(metaslab_t *ms, uint64_t txg, void **buf, size_t *len)
{
	sm_buf_t b = SM_BUF_INIT;
	int t = (int)(txg & TXG_MASK);
	tarn_mutex_lock(&ms->ms_lock, MS);
	if (!ms->ms_loaded) {
		tarn_mutex_unlock(&ms->ms_lock);
		return (SET_ERROR(EINVAL));
	}
	/* Deferred slots in ascending txg order (all older than txg). */
	int order[TXG_DEFER_SIZE], n = 0;
	for (int s = 0; s < TXG_DEFER_SIZE; s++) {
		if (range_tree_numsegs(ms->ms_defer[s]) == 0)
			continue;
		VERIFY3U(ms->ms_defer_txg[s], <, txg);
		int k = n++;
		while (k > 0 && ms->ms_defer_txg[order[k - 1]] > ms->ms_defer_txg[s]) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = s;
	}
	/*
	 * Free as of txg: allocatable or held now, plus what later (open)
	 * txgs have allocated since; their ALLOC entries come with their own
	 * sync.
	 * (Later txgs have no FREE_NOW yet, and their frees are still in use
	 * as of txg.)
	 */
	range_tree_t *fr = range_tree_create();
	range_tree_walk(ms->ms_allocatable, ms_add_cb, fr);
	range_tree_walk(ms->ms_held, ms_add_cb, fr);
	for (int s = 0; s < TXG_SIZE; s++) {
		if (s != t)
			range_tree_walk(ms->ms_allocating[s], ms_add_cb, fr);
	}
	space_map_buf_txg(&b, n > 0 ? ms->ms_defer_txg[order[0]] : txg);
	space_map_buf_range(&b, SM_ALLOC, 0, ms->ms_size);
	ms_emit_tree(ms, &b, SM_FREE_NOW, fr);
	range_tree_destroy(fr);
	for (int k = 0; k < n; k++) {
		space_map_buf_txg(&b, ms->ms_defer_txg[order[k]]);
		ms_emit_tree(ms, &b, SM_FREE, ms->ms_defer[order[k]]);
	}
	space_map_buf_txg(&b, txg);
	ms_emit_tree(ms, &b, SM_FREE, ms->ms_freed[t]);
	ms_emit_tree(ms, &b, SM_FREE, ms->ms_freeing[t]);
	ms_mark_synced(ms, txg);
	tarn_mutex_unlock(&ms->ms_lock);
	space_map_buf_take(&b, buf, len);
	return (0);
}

/* ---- groups and classes ---- */

uint64_t
metaslab_pick_shift(uint64_t asize)
{
	uint64_t shift = (uint64_t)highbit64(asize / 200);  /* 2^shift > asize/200 */
	shift = MAX(shift, 24);         /* >= 16 MiB ... */
	shift = MIN(shift, 34);         /* ... <= 16 GiB */
	while (shift > 20 && (asize >> shift) < 4)
		shift--;                /* small vdev: still 4 metaslabs */
	return (shift);
}

metaslab_class_t *
metaslab_class_create(void)
{
	metaslab_class_t *mc = tarn_alloc(sizeof (*mc));
	pthread_rwlockattr_t attr;
	VERIFY0(pthread_rwlockattr_init(&attr));
	/* adding a vdev must not starve behind a stream of allocations */
	VERIFY0(pthread_rwlockattr_setkind_np(&attr,
	    PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP));
	VERIFY0(pthread_rwlock_init(&mc->mc_groups_lock, &attr));
	pthread_rwlockattr_destroy(&attr);
	VERIFY0(pthread_mutex_init(&mc->mc_rotor_lock, NULL));
	VERIFY0(pthread_mutex_init(&mc->mc_hold_lock, NULL));
	tarn_array_init(&mc->mc_groups, sizeof (metaslab_group_t *));
	tarn_array_init(&mc->mc_byid, sizeof (metaslab_group_t *));
	tarn_array_init(&mc->mc_aux, sizeof (metaslab_class_t *));
	mc->mc_primary = mc;
	return (mc);
}

metaslab_class_t *
metaslab_class_create_aux(metaslab_class_t *primary)
{
	VERIFY(primary->mc_primary == primary);
	VERIFY3U(mc_nbyid(primary), ==, 0);
	metaslab_class_t *mc = metaslab_class_create();
	mc->mc_primary = primary;
	TARN_ARRAY_APPEND(&primary->mc_aux, metaslab_class_t *, mc);
	return (mc);
}

int
metaslab_class_ngroups(metaslab_class_t *mc)
{
	tarn_rw_rdlock(&mc->mc_groups_lock, MC_GROUPS);
	int n = mc_ngroups(mc);
	tarn_rw_unlock(&mc->mc_groups_lock);
	return (n);
}

void
metaslab_group_set_passive(metaslab_group_t *mg, bool passive)
{
	__atomic_store_n(&mg->mg_passive, passive, __ATOMIC_RELEASE);
}

metaslab_class_t *
metaslab_group_class(const metaslab_group_t *mg)
{
	return (mg->mg_class);
}

void
metaslab_class_destroy(metaslab_class_t *mc)
{
	while (mc_ngroups(mc) > 0)
		metaslab_group_destroy(mc_group(mc, mc_ngroups(mc) - 1));
	if (mc->mc_primary != mc) {
		metaslab_class_t *p = mc->mc_primary;
		for (size_t i = 0; i < tarn_array_len(&p->mc_aux); i++)
			if (TARN_ARRAY_AT(&p->mc_aux, metaslab_class_t *, i) == mc) {
				tarn_array_remove(&p->mc_aux, i);
				break;
			}
	} else {
		VERIFY3U(tarn_array_len(&mc->mc_aux), ==, 0);
	}
	tarn_array_fini(&mc->mc_aux);
	tarn_array_fini(&mc->mc_groups);
	tarn_array_fini(&mc->mc_byid);
	pthread_rwlock_destroy(&mc->mc_groups_lock);
	pthread_mutex_destroy(&mc->mc_rotor_lock);
	pthread_mutex_destroy(&mc->mc_hold_lock);
	tarn_free(mc);
}

metaslab_group_t *
metaslab_class_group_by_id(metaslab_class_t *mc, uint64_t id)
{
	mc = mc->mc_primary;
	tarn_rw_rdlock(&mc->mc_groups_lock, MC_GROUPS);
	metaslab_group_t *mg = mc_group_byid(mc, id);
	tarn_rw_unlock(&mc->mc_groups_lock);
	return (mg);
}

/* Enter mg in mc's address table (mc_groups_lock held as writer). */
static void
mc_byid_set(metaslab_class_t *mc, uint64_t id, metaslab_group_t *mg)
{
	while (tarn_array_len(&mc->mc_byid) <= id)
		(void) tarn_array_push(&mc->mc_byid);          /* NULL: no group */
	VERIFY(mg == NULL || mc_group_byid(mc, id) == NULL);  /* one group per vdev id */
	TARN_ARRAY_AT(&mc->mc_byid, metaslab_group_t *, id) = mg;
}

static void
mc_add_group(metaslab_class_t *mc, metaslab_group_t *mg)
{
	uint64_t id = mg->mg_id;
	tarn_rw_wrlock(&mc->mc_groups_lock, MC_GROUPS);
	mc_byid_set(mc, id, mg);
	mg->mg_index = mc_ngroups(mc);
	TARN_ARRAY_APPEND(&mc->mc_groups, metaslab_group_t *, mg);
	tarn_rw_unlock(&mc->mc_groups_lock);
	if (mc->mc_primary != mc) {
		/* the family's address table: frees and claims find it there */
		tarn_rw_wrlock(&mc->mc_primary->mc_groups_lock, MC_GROUPS);
		mc_byid_set(mc->mc_primary, id, mg);
		tarn_rw_unlock(&mc->mc_primary->mc_groups_lock);
	}
}

metaslab_group_t *
metaslab_group_create(metaslab_class_t *mc, vdev_t *top)
{
	/*
	 * Metaslabs cover whole sectors; allocations are aligned to ashift
	 * anyway, so a last partial ashift unit simply never fits a block.
	 */
	uint64_t ashift = MAX(vdev_ashift(top), SPA_MINBLOCKSHIFT);
	uint64_t asize = P2ALIGN(vdev_asize(top), SPA_MINBLOCKSIZE);
	VERIFY3U(asize, >, 0);
	if (vdev_ms_shift(top) == 0)
		vdev_set_ms_shift(top, metaslab_pick_shift(asize));
	uint64_t shift = vdev_ms_shift(top), mssize = 1ULL << shift;
	VERIFY3U(shift, >=, ashift);
	VERIFY3U(shift, <, 63);
	if (vdev_ms_count(top) == 0)
		vdev_set_ms_count(top, DIV_ROUND_UP(asize, mssize));
	VERIFY3U((vdev_ms_count(top) - 1) << shift, <, asize);

	metaslab_group_t *mg = tarn_alloc(sizeof (*mg));
	VERIFY0(pthread_mutex_init(&mg->mg_lock, NULL));
	mg->mg_class = mc;
	mg->mg_vd = top;
	mg->mg_id = vdev_id(top);
	mg->mg_shift = shift;
	mg->mg_unit = metaslab_group_asize(mg, SPA_OLD_MAXBLOCKSIZE);
	mg->mg_count = vdev_ms_count(top);
	mg->mg_ms = tarn_alloc(mg->mg_count * sizeof (metaslab_t *));
	for (uint64_t i = 0; i < mg->mg_count; i++) {
		uint64_t start = i << shift;
		mg->mg_ms[i] = metaslab_create(mg, i, start, MIN(mssize, asize - start));
	}
	vdev_set_ms_group(top, mg);
	mc_add_group(mc, mg);
	return (mg);
}

void
metaslab_group_destroy(metaslab_group_t *mg)
{
	metaslab_class_t *mc = mg->mg_class;
	tarn_rw_wrlock(&mc->mc_groups_lock, MC_GROUPS);
	int i = mg->mg_index;
	tarn_array_remove(&mc->mc_groups, (size_t)i);
	for (int g = i; g < mc_ngroups(mc); g++)
		mc_group(mc, g)->mg_index = g;
	TARN_ARRAY_AT(&mc->mc_byid, metaslab_group_t *, mg->mg_id) = NULL;
	tarn_rw_unlock(&mc->mc_groups_lock);
	if (mc->mc_primary != mc) {
		tarn_rw_wrlock(&mc->mc_primary->mc_groups_lock, MC_GROUPS);
		mc_byid_set(mc->mc_primary, mg->mg_id, NULL);
		tarn_rw_unlock(&mc->mc_primary->mc_groups_lock);
	}

	for (uint64_t m = 0; m < mg->mg_count; m++)
		metaslab_destroy(mg->mg_ms[m]);
	if (vdev_ms_group(mg->mg_vd) == mg)
		vdev_set_ms_group(mg->mg_vd, NULL);
	tarn_free(mg->mg_ms);
	pthread_mutex_destroy(&mg->mg_lock);
	tarn_free(mg);
}

metaslab_t *
metaslab_group_get(metaslab_group_t *mg, uint64_t index)
{
	VERIFY3U(index, <, mg->mg_count);
	return (mg->mg_ms[index]);
}

uint64_t
metaslab_group_count(const metaslab_group_t *mg)
{
	return (mg->mg_count);
}

/* ---- holding frees ---- */

void
metaslab_class_hold_frees(metaslab_class_t *mc)
{
	mc = mc->mc_primary;
	tarn_mutex_lock(&mc->mc_hold_lock, MC_HOLD);
	__atomic_add_fetch(&mc->mc_holds, 1, __ATOMIC_RELEASE);
	tarn_mutex_unlock(&mc->mc_hold_lock);
}

void
metaslab_class_release_frees(metaslab_class_t *mc)
{
	mc = mc->mc_primary;
	tarn_mutex_lock(&mc->mc_hold_lock, MC_HOLD);
	VERIFY3U(__atomic_load_n(&mc->mc_holds, __ATOMIC_RELAXED), >, 0);
	if (__atomic_sub_fetch(&mc->mc_holds, 1, __ATOMIC_ACQ_REL) == 0) {
		/* sync_done reads the count under ms_lock: nothing comes after us */
		tarn_rw_rdlock(&mc->mc_groups_lock, MC_GROUPS);
		for (uint64_t g = 0; g < mc_nbyid(mc); g++) {
			metaslab_group_t *mg = mc_group_byid(mc, g);
			for (uint64_t i = 0; mg != NULL && i < mg->mg_count; i++) {
				metaslab_t *ms = mg->mg_ms[i];
				tarn_mutex_lock(&ms->ms_lock, MS);
				uint64_t n = range_tree_space(ms->ms_held);
				if (n != 0) {
					range_tree_vacate(ms->ms_held, ms_add_cb, ms->ms_allocatable);
					__atomic_sub_fetch(&mc->mc_held, n, __ATOMIC_RELAXED);
					metaslab_update_stats(ms);
				}
				tarn_mutex_unlock(&ms->ms_lock);
			}
		}
		tarn_rw_unlock(&mc->mc_groups_lock);
	}
	tarn_mutex_unlock(&mc->mc_hold_lock);
}

uint64_t
metaslab_class_held_space(metaslab_class_t *mc)
{
	mc = mc->mc_primary;
	return (__atomic_load_n(&mc->mc_held, __ATOMIC_RELAXED));
}

/* ---- verification ---- */

void
metaslab_walk_free(metaslab_t *ms, range_tree_fn_t fn, void *arg)
{
	tarn_mutex_lock(&ms->ms_lock, MS);
	if (ms->ms_loaded)
		range_tree_walk(ms->ms_allocatable, fn, arg);
	tarn_mutex_unlock(&ms->ms_lock);
}

typedef struct ms_defer_walk {
	metaslab_defer_fn_t mdw_fn;
	void               *mdw_arg;
	uint64_t            mdw_txg;
} ms_defer_walk_t;

static void
ms_defer_walk_cb(void *arg, uint64_t start, uint64_t size)
{
	ms_defer_walk_t *w = arg;
	w->mdw_fn(w->mdw_arg, w->mdw_txg, start, size);
}

void
metaslab_walk_deferred(metaslab_t *ms, metaslab_defer_fn_t fn, void *arg)
{
	tarn_mutex_lock(&ms->ms_lock, MS);
	bool done[TXG_DEFER_SIZE] = { false };
	for (int k = 0; k < TXG_DEFER_SIZE && ms->ms_loaded; k++) {
		int best = -1;      /* the oldest slot not yet walked */
		for (int s = 0; s < TXG_DEFER_SIZE; s++) {
			if (!done[s] && range_tree_numsegs(ms->ms_defer[s]) != 0 &&
			    (best < 0 || ms->ms_defer_txg[s] < ms->ms_defer_txg[best]))
				best = s;
		}
		if (best < 0)
			break;
		done[best] = true;
		ms_defer_walk_t w = { fn, arg, ms->ms_defer_txg[best] };
		range_tree_walk(ms->ms_defer[best], ms_defer_walk_cb, &w);
	}
	tarn_mutex_unlock(&ms->ms_lock);
}

/* ---- accounting ---- */

static void
mg_space_add(metaslab_group_t *mg, metaslab_space_t *out)
{
	uint64_t total = __atomic_load_n(&mg->mg_total, __ATOMIC_RELAXED);
	uint64_t free = __atomic_load_n(&mg->mg_free, __ATOMIC_RELAXED);
	uint64_t def = __atomic_load_n(&mg->mg_deferred, __ATOMIC_RELAXED);
	out->ms_total += total;
	out->ms_free += free;
	out->ms_usable += __atomic_load_n(&mg->mg_usable, __ATOMIC_RELAXED);
	out->ms_deferred += def;
	out->ms_alloc += total - free - def;
	for (uint64_t i = 0; i < mg->mg_count; i++) {
		uint64_t m = __atomic_load_n(&mg->mg_ms[i]->ms_stat_max_seg,
		    __ATOMIC_RELAXED);
		out->ms_max_seg = MAX(out->ms_max_seg, m);
	}
}

void
metaslab_group_space(metaslab_group_t *mg, metaslab_space_t *out)
{
	memset(out, 0, sizeof (*out));
	mg_space_add(mg, out);
}

void
metaslab_class_dspace(metaslab_class_t *mc, metaslab_space_t *out)
{
	memset(out, 0, sizeof (*out));
	tarn_rw_rdlock(&mc->mc_groups_lock, MC_GROUPS);
	for (int g = 0; g < mc_ngroups(mc); g++) {
		metaslab_space_t one;
		metaslab_group_t *mg = mc_group(mc, g);
		metaslab_group_space(mg, &one);
		uint64_t r = vdev_deflate_ratio(mg->mg_vd);
#define	MS_DEFLATE(x)	((x) / VDEV_DEFLATE_UNIT * r)
		out->ms_total += MS_DEFLATE(one.ms_total);
		out->ms_alloc += MS_DEFLATE(one.ms_alloc);
		out->ms_deferred += MS_DEFLATE(one.ms_deferred);
		out->ms_free += MS_DEFLATE(one.ms_free);
		out->ms_usable += MS_DEFLATE(one.ms_usable);
#undef	MS_DEFLATE
		out->ms_max_seg = MAX(out->ms_max_seg, one.ms_max_seg);
	}
	tarn_rw_unlock(&mc->mc_groups_lock);
}

void
metaslab_class_space(metaslab_class_t *mc, metaslab_space_t *out)
{
	memset(out, 0, sizeof (*out));
	tarn_rw_rdlock(&mc->mc_groups_lock, MC_GROUPS);
	for (int g = 0; g < mc_ngroups(mc); g++)
		mg_space_add(mc_group(mc, g), out);
	tarn_rw_unlock(&mc->mc_groups_lock);
}
