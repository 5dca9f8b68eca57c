/*
 * spa_l2arc.c — the pool's L2ARC (lib/arc/l2arc.c) on its cache devices.
 *
 * The pool makes its l2arc_t the first time it has a cache device that
 * opened (pool start, zpool add), hands it to the dmu (whose ARC
 * evictions feed it and whose reads ask it), and adds each cache device
 * as the spa_class.c hooks report it (a device that was this pool's
 * cache comes back warm: l2arc_dev_add reads its ring).  A cache device
 * about to be removed is taken out first (l2arc_dev_remove waits for
 * reads of it).  At unload the buffer is written out before the dmu
 * stops (an export leaves the cache warm for the next import), and the
 * l2arc_t is destroyed after the dmu, which feeds it until then.  A
 * read-only pool uses no L2ARC: its cache devices are not written.
 *
 * Locking: the hooks run under spa_vdev_lock, which also guards
 * spa_l2arc's creation; the dmu reads the pointer atomically.
 */
#include "spa_impl.h"

static uint64_t spa_l2arc_write_max_default;    /* 0: the l2arc's own default */

void
spa_l2arc_set_default_write_max(uint64_t bytes_per_sec)
{
	__atomic_store_n(&spa_l2arc_write_max_default, bytes_per_sec, __ATOMIC_RELAXED);
}

static void
spa_l2arc_added(void *arg, vdev_t *leaf)
{
	spa_t *spa = arg;
	if (spa->spa_readonly || spa->spa_dp == NULL)
		return;
	if (spa->spa_l2arc == NULL) {
		l2arc_opts_t o = { .lo_pool_guid = spa->spa_guid,
			.lo_write_max = __atomic_load_n(&spa_l2arc_write_max_default,
			    __ATOMIC_RELAXED) };
		spa->spa_l2arc = l2arc_create(&o);
		dmu_pool_set_l2arc(spa->spa_dp, spa->spa_l2arc);
	}
	int e = l2arc_dev_add(spa->spa_l2arc, leaf, vdev_guid(leaf));
	if (e != 0 && e != EEXIST)
		fprintf(stderr, "tarn: warning: pool %s: cache device %s not used: %s\n",
		    spa->spa_name, vdev_path(leaf) ? vdev_path(leaf) : "?", tarn_strerror(e));
}

static void
spa_l2arc_removing(void *arg, vdev_t *leaf)
{
	spa_t *spa = arg;
	if (spa->spa_l2arc != NULL)
		(void) l2arc_dev_remove(spa->spa_l2arc, leaf);
}

static const spa_l2cache_hooks_t spa_l2arc_hooks = {
	.slh_added = spa_l2arc_added, .slh_removing = spa_l2arc_removing,
};

void
spa_l2arc_start(spa_t *spa)
{
	spa->spa_l2cache_hooks = &spa_l2arc_hooks;
	spa->spa_l2cache_arg = spa;
	for (int i = 0; i < spa_l2cache_count(spa); i++) {
		vdev_t *leaf = spa_l2cache_leaf(spa, i);
		if (leaf != NULL && vdev_leaf_ready(leaf))
			spa_l2arc_added(spa, leaf);
	}
}

void
spa_l2arc_flush(spa_t *spa)
{
	if (spa->spa_l2arc != NULL)
		l2arc_flush(spa->spa_l2arc);
}

void
spa_l2arc_stop(spa_t *spa)
{
	spa->spa_l2cache_hooks = NULL;
	if (spa->spa_l2arc != NULL)
		l2arc_destroy(spa->spa_l2arc);
	spa->spa_l2arc = NULL;
}

int
spa_l2arc_stats(spa_t *spa, l2arc_stats_t *out)
{
	memset(out, 0, sizeof (*out));
	spa_vdev_hold(spa);
	l2arc_t *l2 = spa->spa_l2arc;
	if (l2 != NULL)
		l2arc_stats(l2, out);
	spa_vdev_rele(spa);
	return (l2 != NULL ? 0 : SET_ERROR(ENOENT));
}

void
spa_l2arc_set_write_max(spa_t *spa, uint64_t bytes_per_sec)
{
	spa_vdev_hold(spa);
	if (spa->spa_l2arc != NULL)
		l2arc_set_write_max(spa->spa_l2arc, bytes_per_sec);
	spa_vdev_rele(spa);
}
