/*
 * metaslab_alloc.c — the block allocator: which top-level vdev (rotor),
 * which metaslab (active metaslab per group), which range (first fit from
 * the metaslab's cursor), plus frees and the allocation check.
 * Theory of free space: the comment at the top of metaslab.c.
 *
 * Choosing a group.  The class rotor stays on a group until it has taken
 * about an aliquot of bytes, then moves on.  A group's aliquot is
 * MC_ALIQUOT scaled by its free space relative to the average group
 * (clamped to 1/4..4x), so emptier vdevs receive proportionally more and
 * vdevs fill evenly.  Copies 2 and 3 of a block go to the next groups
 * after the first copy's, skipping groups already used, then (too few
 * groups) to metaslabs of the same group at least count/ndvas metaslabs
 * apart, then to any other metaslab, and only last to the same one.
 * Within a group, copy k goes first to the metaslab copy k of the
 * previous block took (mg_active_copy), while it is far enough, so that
 * the extra copies of consecutive blocks are as close as the first ones
 * (one device I/O for many, vdev_queue.c).
 *
 * Choosing a metaslab.  Single copies go to the group's active metaslab
 * while it can serve them, so consecutive blocks land close together.
 * When it fails (no fitting segment), or every MG_REPICK_EVERY
 * allocations when a scan finds a metaslab with more than 4x its free
 * space, the metaslab with the most free space whose largest segment fits
 * becomes active.  Scans read per-metaslab statistics without locks.
 */
#include "space_impl.h"

#define MC_ALIQUOT       (512 * KiB)
#define MG_REPICK_EVERY  256

/* ---- one metaslab ---- */

/* Allocate asize bytes aligned to align from ms in txg. */
static int
ms_alloc(metaslab_t *ms, uint64_t asize, uint64_t align, uint64_t txg, uint64_t *off)
{
	int err = SET_ERROR(ENOSPC);
	if (__atomic_load_n(&ms->ms_stat_max_seg, __ATOMIC_RELAXED) < asize)
		return (err);
	tarn_mutex_lock(&ms->ms_lock, MS);
	if (ms->ms_loaded &&
	    (err = range_tree_find(ms->ms_allocatable, asize, align,
	    &ms->ms_cursor, off)) == 0) {
		range_tree_remove(ms->ms_allocatable, *off, asize);
		range_tree_add(ms->ms_allocating[txg & TXG_MASK], *off, asize);
		metaslab_update_stats(ms);
	}
	tarn_mutex_unlock(&ms->ms_lock);
	return (err);
}

/* Free [off, off+size) of ms in txg; see the life of a range in metaslab.c. */
static void
ms_free(metaslab_t *ms, uint64_t off, uint64_t size, uint64_t birth, uint64_t txg)
{
	int t = (int)(txg & TXG_MASK);
	VERIFY3U(birth, <=, txg);
	tarn_mutex_lock(&ms->ms_lock, MS);
	VERIFY(ms->ms_loaded);
	if (birth == txg && range_tree_contains(ms->ms_allocating[t], off, size)) {
		/* never written to a map: just cancel */
		range_tree_remove(ms->ms_allocating[t], off, size);
		range_tree_add(ms->ms_allocatable, off, size);
	} else {
		VERIFY(metaslab_range_in_use(ms, off, size));  /* no double free */
		VERIFY(!range_tree_intersects(ms->ms_allocating[t], off, size));
		if (birth == txg) {
			range_tree_add(ms->ms_allocatable, off, size);
			range_tree_add(ms->ms_freenow[t], off, size);
		} else {
			range_tree_add(ms->ms_freeing[t], off, size);
		}
	}
	metaslab_update_stats(ms);
	tarn_mutex_unlock(&ms->ms_lock);
}

/* ---- one group ---- */

static uint64_t
ms_free_space(const metaslab_t *ms)
{
	return (__atomic_load_n(&ms->ms_stat_free, __ATOMIC_RELAXED));
}

/* Smallest distance in metaslabs from index i to any of avoid[0..n). */
static uint64_t
ms_distance(uint64_t i, const uint64_t *avoid, int n)
{
	uint64_t d = UINT64_MAX;
	for (int k = 0; k < n; k++)
		d = MIN(d, i > avoid[k] ? i - avoid[k] : avoid[k] - i);
	return (d);
}

/*
 * The metaslab of mg with the most free space whose largest segment holds
 * asize, at least mindist from every avoided one and not yet tried.
 */
static metaslab_t *
mg_best(metaslab_group_t *mg, uint64_t asize, const uint64_t *avoid, int navoid,
    uint64_t mindist, const uint8_t *tried)
{
	metaslab_t *best = NULL;
	uint64_t bestfree = 0;
	for (uint64_t i = 0; i < mg->mg_count; i++) {
		metaslab_t *ms = mg->mg_ms[i];
		uint64_t f = ms_free_space(ms);
		if (tried != NULL && tried[i])
			continue;
		if (f <= bestfree ||
		    __atomic_load_n(&ms->ms_stat_max_seg, __ATOMIC_RELAXED) < asize)
			continue;
		if (navoid > 0 && ms_distance(i, avoid, navoid) < mindist)
			continue;
		best = ms;
		bestfree = f;
	}
	return (best);
}

/* Every so often, move the group's activity to a much emptier metaslab. */
static void
mg_maybe_repick(metaslab_group_t *mg, metaslab_t *active, uint64_t asize)
{
	uint64_t n = __atomic_add_fetch(&mg->mg_allocs, 1, __ATOMIC_RELAXED);
	if (n % MG_REPICK_EVERY != 0)
		return;
	tarn_mutex_lock(&mg->mg_lock, MG);
	metaslab_t *best = mg_best(mg, asize, NULL, 0, 0, NULL);
	if (best != NULL && best != active &&
	    ms_free_space(best) / 4 > ms_free_space(active) &&
	    __atomic_load_n(&mg->mg_active, __ATOMIC_RELAXED) == active)
		__atomic_store_n(&mg->mg_active, best, __ATOMIC_RELAXED);
	tarn_mutex_unlock(&mg->mg_lock);
}

/*
 * Allocate one copy of asize bytes in mg, away from the metaslabs that
 * earlier copies of the block took in this group (avoid[0..navoid)).
 */
static int
mg_alloc(metaslab_group_t *mg, uint64_t asize, uint64_t txg, int ndvas,
    const uint64_t *avoid, int navoid, uint64_t *off)
{
	uint64_t align = 1ULL << MAX(vdev_ashift(mg->mg_vd), SPA_MINBLOCKSHIFT);
	uint64_t far = MAX(mg->mg_count / (uint64_t)ndvas, 1);
	if (navoid == 0) {
		metaslab_t *ms = __atomic_load_n(&mg->mg_active, __ATOMIC_RELAXED);
		if (ms != NULL && ms_alloc(ms, asize, align, txg, off) == 0) {
			mg_maybe_repick(mg, ms, asize);
			return (0);
		}
	}
	/*
	 * Copy k of a block goes where copy k of the one before went, while
	 * that is far enough from this block's other copies: so the copies of
	 * consecutive blocks lie together too, and reach the disks as one
	 * I/O (vdev_queue.c), not one per block.
	 */
	metaslab_t **copyp = navoid > 0 && navoid < SPA_DVAS_PER_BP ?
	    &mg->mg_active_copy[navoid - 1] : NULL;
	if (copyp != NULL) {
		metaslab_t *ms = __atomic_load_n(copyp, __ATOMIC_RELAXED);
		if (ms != NULL && ms_distance(ms->ms_id, avoid, navoid) >= far &&
		    ms_alloc(ms, asize, align, txg, off) == 0)
			return (0);
	}
	uint8_t *tried = tarn_alloc(mg->mg_count);
	uint64_t dists[3] = { far, 1, 0 };
	int err = SET_ERROR(ENOSPC);
	for (int k = 0; k < 3 && err != 0; k++) {
		if (navoid == 0 && k > 0)
			break;          /* nothing to keep away from */
		metaslab_t *ms;
		tarn_mutex_lock(&mg->mg_lock, MG);
		while ((ms = mg_best(mg, asize, avoid, navoid, dists[k], tried)) != NULL) {
			if (ms_alloc(ms, asize, align, txg, off) == 0) {
				if (navoid == 0)
					__atomic_store_n(&mg->mg_active, ms, __ATOMIC_RELAXED);
				else if (copyp != NULL && k == 0)
					__atomic_store_n(copyp, ms, __ATOMIC_RELAXED);
				err = 0;
				break;
			}
			tried[ms->ms_id] = 1;
		}
		tarn_mutex_unlock(&mg->mg_lock);
	}
	tarn_free(tried);
	return (err);
}

/* ---- the class ---- */

static uint64_t
mg_free_space(const metaslab_group_t *mg)
{
	return (__atomic_load_n(&mg->mg_free, __ATOMIC_RELAXED));
}

/* Bytes the rotor gives group gi before moving on (caller holds the rotor lock). */
static int64_t
mc_aliquot(metaslab_class_t *mc, int gi)
{
	uint64_t sum = 0, mine = mg_free_space(mc_group(mc, gi));
	for (int g = 0; g < mc_ngroups(mc); g++)
		sum += mg_free_space(mc_group(mc, g));
	uint64_t avg = sum / (uint64_t)mc_ngroups(mc);
	if (avg == 0)
		return ((int64_t)MC_ALIQUOT);
	double r = (double)mine / (double)avg;
	r = r < 0.25 ? 0.25 : (r > 4.0 ? 4.0 : r);
	return ((int64_t)(r * (double)MC_ALIQUOT));
}

/* The group index to try first (caller holds mc_groups_lock). */
static int
mc_rotor_start(metaslab_class_t *mc)
{
	tarn_mutex_lock(&mc->mc_rotor_lock, MC_ROTOR);
	if (mc->mc_rotor >= mc_ngroups(mc))
		mc->mc_rotor = 0;
	if (mc->mc_aliquot_left <= 0) {
		mc->mc_rotor = (mc->mc_rotor + 1) % mc_ngroups(mc);
		mc->mc_aliquot_left = mc_aliquot(mc, mc->mc_rotor);
	}
	int gi = mc->mc_rotor;
	tarn_mutex_unlock(&mc->mc_rotor_lock);
	return (gi);
}

/* The block's first copy went to group gi: charge the rotor. */
static void
mc_rotor_charge(metaslab_class_t *mc, int gi, uint64_t asize)
{
	tarn_mutex_lock(&mc->mc_rotor_lock, MC_ROTOR);
	if (gi != mc->mc_rotor) {
		mc->mc_rotor = gi;      /* the rotor's group was full */
		mc->mc_aliquot_left = mc_aliquot(mc, gi);
	}
	mc->mc_aliquot_left -= (int64_t)asize;
	tarn_mutex_unlock(&mc->mc_rotor_lock);
}

uint64_t
metaslab_group_asize(const metaslab_group_t *mg, uint64_t psize)
{
	vdev_t *vd = mg->mg_vd;
	uint64_t asize = vdev_psize_to_asize(vd, psize);
	asize = P2ROUNDUP(MAX(asize, psize),
	    1ULL << MAX(vdev_ashift(vd), SPA_MINBLOCKSHIFT));
	VERIFY3U(asize >> SPA_MINBLOCKSHIFT, <=, UINT32_MAX);
	return (asize);
}

static bool
dvas_use_group(const dva_t *dvas, int n, const metaslab_group_t *mg)
{
	for (int k = 0; k < n; k++) {
		if (dvas[k].dva_vdev == mg->mg_id)
			return (true);
	}
	return (false);
}

/*
 * Allocate copy d of the block, trying groups in rotor order from gi0:
 * first groups without a copy yet, then the others.  Sets *gi_out.
 */
static int
mc_alloc_copy(metaslab_class_t *mc, int gi0, uint64_t psize, uint64_t txg,
    int ndvas, dva_t *dvas, int d, int *gi_out)
{
	int n = mc_ngroups(mc);
	for (int pass = 0; pass < 2; pass++) {
		for (int k = 0; k < n; k++) {
			int gi = (gi0 + k) % n;
			metaslab_group_t *mg = mc_group(mc, gi);
			if (dvas_use_group(dvas, d, mg) != (pass == 1) ||
			    __atomic_load_n(&mg->mg_passive, __ATOMIC_ACQUIRE))
				continue;
			uint64_t asize = metaslab_group_asize(mg, psize), off;
			if (mg_free_space(mg) < asize)
				continue;
			uint64_t avoid[SPA_DVAS_PER_BP];
			int navoid = 0;
			for (int j = 0; j < d; j++) {
				if (dvas[j].dva_vdev == mg->mg_id)
					avoid[navoid++] = dvas[j].dva_offset >> mg->mg_shift;
			}
			if (mg_alloc(mg, asize, txg, ndvas, avoid, navoid, &off) == 0) {
				dvas[d].dva_vdev = (uint32_t)mg->mg_id;
				dvas[d].dva_asize = (uint32_t)(asize >> SPA_MINBLOCKSHIFT);
				dvas[d].dva_offset = off;
				*gi_out = gi;
				return (0);
			}
		}
	}
	return (SET_ERROR(ENOSPC));
}

/*
 * Locate the metaslab holding dva; VERIFY that it is a valid address.
 * Caller holds mc_groups_lock.
 */
static metaslab_t *
mc_dva_ms(metaslab_class_t *mc, const dva_t *dva)
{
	VERIFY3U(dva->dva_vdev, <, tarn_array_len(&mc->mc_byid));
	metaslab_group_t *mg = mc_group_byid(mc, dva->dva_vdev);
	VERIFY(mg != NULL);
	uint64_t idx = dva->dva_offset >> mg->mg_shift;
	VERIFY3U(idx, <, mg->mg_count);
	metaslab_t *ms = mg->mg_ms[idx];
	VERIFY3U(DVA_ASIZE(dva), <=, ms->ms_start + ms->ms_size - dva->dva_offset);
	return (ms);
}

int
metaslab_alloc(metaslab_class_t *mc, uint64_t psize, int ndvas,
    uint64_t txg, dva_t *dvas)
{
	VERIFY(ndvas >= 1 && ndvas <= SPA_DVAS_PER_BP);
	VERIFY3U(psize, >, 0);
	memset(dvas, 0, (size_t)ndvas * sizeof (dva_t));
	tarn_rw_rdlock(&mc->mc_groups_lock, MC_GROUPS);
	if (mc_ngroups(mc) == 0) {
		tarn_rw_unlock(&mc->mc_groups_lock);
		return (SET_ERROR(ENOSPC));
	}
	int gi0 = mc_rotor_start(mc), gi_first = gi0, err = 0;
	for (int d = 0; d < ndvas && err == 0; d++) {
		int gi = gi0;
		/* later copies start after the first copy's group */
		int from = d == 0 ? gi0 : (gi_first + 1) % mc_ngroups(mc);
		err = mc_alloc_copy(mc, from, psize, txg, ndvas, dvas, d, &gi);
		if (err == 0 && d == 0)
			gi_first = gi;
	}
	if (err != 0) {
		/* all or nothing: cancel the copies already taken */
		for (int d = 0; d < ndvas && DVA_IS_VALID(&dvas[d]); d++) {
			ms_free(mc_dva_ms(mc, &dvas[d]), dvas[d].dva_offset,
			    DVA_ASIZE(&dvas[d]), txg, txg);
		}
		memset(dvas, 0, (size_t)ndvas * sizeof (dva_t));
	} else {
		mc_rotor_charge(mc, gi_first, DVA_ASIZE(&dvas[0]));
	}
	tarn_rw_unlock(&mc->mc_groups_lock);
	if (err != 0) {
		metaslab_space_t sp;
		metaslab_class_space(mc, &sp);
		tarn_dprintf("metaslab_alloc: no room for %d x %" PRIu64 " bytes in txg %" PRIu64
		    " (free %" PRIu64 ", deferred %" PRIu64 ", largest %" PRIu64 ")\n", ndvas,
		    psize, txg, sp.ms_free, sp.ms_deferred, sp.ms_max_seg);
	}
	return (err);
}

void
metaslab_free(metaslab_class_t *mc, const dva_t *dva, uint64_t birth, uint64_t txg)
{
	if (!DVA_IS_VALID(dva))
		return;
	mc = mc->mc_primary;    /* the family's address table */
	tarn_rw_rdlock(&mc->mc_groups_lock, MC_GROUPS);
	metaslab_t *ms = mc_dva_ms(mc, dva);
	ms_free(ms, dva->dva_offset, DVA_ASIZE(dva), birth, txg);
	tarn_rw_unlock(&mc->mc_groups_lock);
}

bool
metaslab_is_allocated(metaslab_class_t *mc, const dva_t *dva)
{
	metaslab_group_t *mg = metaslab_class_group_by_id(mc, dva->dva_vdev);
	if (mg == NULL || !DVA_IS_VALID(dva))
		return (false);
	uint64_t idx = dva->dva_offset >> mg->mg_shift;
	if (idx >= mg->mg_count)
		return (false);
	metaslab_t *ms = mg->mg_ms[idx];
	tarn_mutex_lock(&ms->ms_lock, MS);
	bool in_use = ms->ms_loaded &&
	    metaslab_range_in_use(ms, dva->dva_offset, DVA_ASIZE(dva));
	tarn_mutex_unlock(&ms->ms_lock);
	return (in_use);
}

/*
 * Claim a DVA found on disk (an intent-log block written after the last
 * committed txg): it becomes allocated in txg as if metaslab_alloc had
 * returned it.  EEXIST when any of it is not allocatable now (in use,
 * freed but deferred, or outside the loaded space): the caller treats
 * the block as not ours.
 */
int
metaslab_claim(metaslab_class_t *mc, const dva_t *dva, uint64_t txg)
{
	if (!DVA_IS_VALID(dva))
		return (SET_ERROR(EINVAL));
	mc = mc->mc_primary;
	tarn_rw_rdlock(&mc->mc_groups_lock, MC_GROUPS);
	metaslab_group_t *mg = mc_group_byid(mc, dva->dva_vdev);
	int err = SET_ERROR(EINVAL);
	uint64_t idx = mg != NULL ? dva->dva_offset >> mg->mg_shift : 0;
	if (mg != NULL && idx < mg->mg_count) {
		metaslab_t *ms = mg->mg_ms[idx];
		uint64_t off = dva->dva_offset, size = DVA_ASIZE(dva);
		tarn_mutex_lock(&ms->ms_lock, MS);
		if (size > ms->ms_start + ms->ms_size - off)
			err = SET_ERROR(EINVAL);
		else if (!ms->ms_loaded || !range_tree_contains(ms->ms_allocatable, off, size))
			err = SET_ERROR(EEXIST);
		else {
			range_tree_remove(ms->ms_allocatable, off, size);
			range_tree_add(ms->ms_allocating[txg & TXG_MASK], off, size);
			metaslab_update_stats(ms);
			err = 0;
		}
		tarn_mutex_unlock(&ms->ms_lock);
	}
	tarn_rw_unlock(&mc->mc_groups_lock);
	return (err);
}
