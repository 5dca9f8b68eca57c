/*
 * dsl_space.c — used, referenced and available of every dataset.
 *
 * Theory.  referenced is the dataset's object set's bytes on disk
 * (dmu_objset_space, data bytes); used adds what only its snapshots hold
 * (usedbysnapshots: the space of their dead lists, dsl_deadlist.c), the part of its
 * refreservation that referenced does not fill yet (usedbyrefreservation)
 * and each child's used, or its reservation when larger; available is
 * the pool's free space (spa_get_avail) less every dataset's unused
 * reservation and refreservation (except those the dataset itself would
 * draw on: its own and its ancestors' reservations, its own
 * refreservation), limited by its refquota and by the quota of it and
 * each ancestor.
 *
 * Every figure but the pool's free space depends on the whole tree, and
 * all of them change only when a txg syncs: object sets' bytes are
 * counted by the sync, and every change to the datasets or their
 * properties is a MOS transaction whose txg a command waits for
 * (dsl_tx_end).  So one walk of the tree per synced txg computes every
 * dataset's figures (dsl_space_node_t, sorted by object number) and each
 * question is answered from them by a walk up the dataset's ancestors:
 * `list` of n datasets, and the POSIX layer's space check before every
 * write, no longer walk the tree once per dataset (n^2 for a list).
 * A change seen before its txg syncs (another handle's, in flight) shows
 * from that sync on, as the figures it changes do.
 */
#include "dsl_impl.h"
#include "tarn_array.h"

typedef struct space_walk {
	tarn_array_t sw_nodes;  /* of dsl_space_node_t */
	uint64_t sw_unres;
} space_walk_t;

/* Fill the node of obj and its subtree; returns the node's index. */
static int
space_walk(dsl_pool_t *dp, space_walk_t *w, uint64_t obj, uint64_t parent, int *idxp)
{
	int me = (int)tarn_array_len(&w->sw_nodes);
	(void) tarn_array_push(&w->sw_nodes);
	dsl_space_node_t node;
	memset(&node, 0, sizeof (node));
	node.dsn_obj = obj;
	node.dsn_parent = parent;
	objset_t *os;
	int e = dsl_os_get(dp, obj, &os);
	if (e == 0) {
		dmu_objset_space(os, &node.dsn_refer);
		dmu_objset_logical(os, &node.dsn_lsize, &node.dsn_psize);
	} else if (e != ENOENT)           /* a reader's dataset without an object set */
		return (e);
	(void) dsl_prop_local(dp, obj, DSL_PROP_RESERVATION, &node.dsn_res, NULL, 0);
	(void) dsl_prop_local(dp, obj, DSL_PROP_QUOTA, &node.dsn_quota, NULL, 0);
	(void) dsl_prop_local(dp, obj, DSL_PROP_REFQUOTA, &node.dsn_refquota, NULL, 0);
	uint64_t refres = 0;
	(void) dsl_prop_local(dp, obj, DSL_PROP_REFRESERVATION, &refres, NULL, 0);
	node.dsn_refres = refres > node.dsn_refer ? refres - node.dsn_refer : 0;
	w->sw_unres += node.dsn_refres;
	if ((e = dsl_snap_head_space(dp, obj, node.dsn_refer, &node.dsn_usedsnap,
	    &node.dsn_written, &node.dsn_nsnaps)) != 0)
		return (e);
	node.dsn_used = node.dsn_refer + node.dsn_usedsnap + node.dsn_refres;
	node.dsn_lused = node.dsn_lsize;
	node.dsn_pused = node.dsn_psize;
	dsl_child_t *kids;
	int n;
	if ((e = dsl_children(dp, obj, &kids, &n)) != 0)
		return (e);
	for (int i = 0; i < n && e == 0; i++) {
		int ci;
		if ((e = space_walk(dp, w, kids[i].dc_obj, obj, &ci)) != 0)
			break;
		const dsl_space_node_t *k = &TARN_ARRAY_AT(&w->sw_nodes, dsl_space_node_t, ci);
		node.dsn_used += MAX(k->dsn_used, k->dsn_res);
		node.dsn_lused += k->dsn_lused;
		node.dsn_pused += k->dsn_pused;
	}
	tarn_free(kids);
	if (node.dsn_res > node.dsn_used)
		w->sw_unres += node.dsn_res - node.dsn_used;
	TARN_ARRAY_AT(&w->sw_nodes, dsl_space_node_t, me) = node; /* the array may have moved */
	*idxp = me;
	return (e);
}

static int
space_node_cmp(const void *a, const void *b)
{
	uint64_t x = ((const dsl_space_node_t *)a)->dsn_obj;
	uint64_t y = ((const dsl_space_node_t *)b)->dsn_obj;
	return (x < y ? -1 : x > y);
}

/* The figures as of the last synced txg, computed when that moved. */
static int
space_refresh(dsl_pool_t *dp)
{
	uint64_t synced = spa_last_synced_txg(dp->dp_spa);
	if (dp->dp_space_txg != 0 && dp->dp_space_txg == synced)
		return (0);
	space_walk_t w = { .sw_nodes = TARN_ARRAY_INIT(dsl_space_node_t) };
	int root;
	int e = space_walk(dp, &w, dp->dp_root_obj, 0, &root);
	if (e != 0) {
		tarn_array_fini(&w.sw_nodes);
		return (e);
	}
	tarn_array_sort(&w.sw_nodes, space_node_cmp);
	tarn_free(dp->dp_space);
	size_t n;
	dp->dp_space = tarn_array_steal(&w.sw_nodes, &n);
	dp->dp_space_n = (int)n;
	dp->dp_space_unres = w.sw_unres;
	/* stamped with the txg read before the walk: a sync during it recomputes */
	dp->dp_space_txg = synced;
	return (0);
}

static const dsl_space_node_t *
space_node(dsl_pool_t *dp, uint64_t obj)
{
	dsl_space_node_t key = { .dsn_obj = obj };
	return (bsearch(&key, dp->dp_space, dp->dp_space_n, sizeof (key), space_node_cmp));
}

int
dsl_space_locked(dsl_pool_t *dp, const char *name, dsl_space_t *out)
{
	uint64_t obj;
	int e = dsl_lookup(dp, name, &obj, NULL, 0);
	if (e == 0)
		e = space_refresh(dp);
	if (e != 0)
		return (e);
	const dsl_space_node_t *n = space_node(dp, obj);
	if (n == NULL) {                /* created after the last sync: recount */
		dp->dp_space_txg = 0;
		if ((e = space_refresh(dp)) != 0)
			return (e);
		if ((n = space_node(dp, obj)) == NULL)
			return (SET_ERROR(ENOENT));
	}
	out->ds_used = n->dsn_used;
	out->ds_referenced = n->dsn_refer;
	out->ds_refreserved = n->dsn_refres;
	out->ds_lreferenced = n->dsn_lsize;
	out->ds_preferenced = n->dsn_psize;
	out->ds_lused = n->dsn_lused;
	out->ds_pused = n->dsn_pused;
	out->ds_usedsnap = n->dsn_usedsnap;
	out->ds_written = n->dsn_written;
	out->ds_nsnaps = n->dsn_nsnaps;
	uint64_t pool = spa_get_avail(dp->dp_spa);
	uint64_t unres = dp->dp_space_unres;
	uint64_t avail = pool > unres ? pool - unres : 0;
	/* Walk up: own and ancestors' reservations are ours to use; quotas limit. */
	uint64_t limit = UINT64_MAX, extra = n->dsn_refres;
	if (n->dsn_refquota > 0)
		limit = n->dsn_refquota > n->dsn_refer ? n->dsn_refquota - n->dsn_refer : 0;
	for (const dsl_space_node_t *a = n; a != NULL;
	    a = a->dsn_parent != 0 ? space_node(dp, a->dsn_parent) : NULL) {
		if (a->dsn_res > a->dsn_used)
			extra += a->dsn_res - a->dsn_used;
		if (a->dsn_quota > 0)
			limit = MIN(limit, a->dsn_quota > a->dsn_used ? a->dsn_quota - a->dsn_used : 0);
	}
	out->ds_quota_bound = limit < avail + extra;
	out->ds_available = MIN(avail + extra, limit);
	return (0);
}

void
dsl_space_fini(dsl_pool_t *dp)
{
	tarn_free(dp->dp_space);
	dp->dp_space = NULL;
	dp->dp_space_n = 0;
	dp->dp_space_txg = 0;
}

int
dsl_dataset_space(dsl_pool_t *dp, const char *name, dsl_space_t *out)
{
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	int e = dsl_space_locked(dp, name, out);
	tarn_mutex_unlock(&dp->dp_lock);
	return (e);
}

uint64_t
dsl_dataset_avail(dsl_pool_t *dp, const char *name, bool *quota)
{
	dsl_space_t s;
	int e = dsl_dataset_space(dp, name, &s);
	if (quota != NULL)
		*quota = e == 0 && s.ds_quota_bound;
	return (e == 0 ? s.ds_available : 0);
}
