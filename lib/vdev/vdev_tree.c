/*
 * vdev_tree.c — changing a live vdev tree: the tree lock, inserting and
 * collapsing the groups that attach, replace and hot spares create,
 * removing and reopening leaves.  The pool layer (spa_vdev.c) decides
 * what to change; these functions keep the tree consistent (ids, tops,
 * GUID sums, states).
 *
 * The address of a top-level vdev never changes: the space layer keeps
 * a pointer to it (its metaslab group), and zio looks it up without
 * regard to its type.  So turning a top-level leaf into a mirror (attach)
 * or a replacing/spare group converts the vdev_t in place and moves the
 * leaf into a new vdev_t below it; collapsing does the reverse.  The
 * top-level's id, asize, ashift and metaslab fields stay put, so block
 * addresses and allocation sizes are the same before and after.
 */
#include "vdev_impl.h"

/* ---- the tree lock ---- */

void
vdev_tree_enter_read(vdev_t *root)
{
	VERIFY0(tarn_rw_rdlock(root->vdev_tree_lock, VDEV_TREE));
}

void
vdev_tree_enter_write(vdev_t *root)
{
	VERIFY0(tarn_rw_wrlock(root->vdev_tree_lock, VDEV_TREE));
}

/* Delayed I/O (vdev_inject.c) completes after the lock is dropped. */
void
vdev_tree_exit(vdev_t *root)
{
	VERIFY0(tarn_rw_unlock(root->vdev_tree_lock));
	vdev_inject_settle();
}

/* ---- leaf fields, for the in-place conversions at the top level ---- */

static void
vdev_leaf_fields_move(vdev_t *dst, vdev_t *src)
{
	__atomic_store_n(&dst->vdev_type, src->vdev_type, __ATOMIC_RELAXED);
	__atomic_store_n(&dst->vdev_ops, src->vdev_ops, __ATOMIC_RELEASE);
	dst->vdev_guid = src->vdev_guid;
	dst->vdev_psize = src->vdev_psize;
	dst->vdev_path = src->vdev_path;
	dst->vdev_state = src->vdev_state;
	dst->vdev_offline = src->vdev_offline;
	dst->vdev_stat = src->vdev_stat;
	dst->vdev_fd = src->vdev_fd;
	dst->vdev_fault = src->vdev_fault;
	__atomic_store_n(&dst->vdev_inject, src->vdev_inject, __ATOMIC_RELEASE);
	dst->vdev_readonly = src->vdev_readonly;
	dst->vdev_tsd = src->vdev_tsd;
	dst->vdev_open_error = src->vdev_open_error;
	dst->vdev_dtl_txg = src->vdev_dtl_txg;
	dst->vdev_dtl_last = src->vdev_dtl_last;
	memcpy(dst->vdev_dtl_saved, src->vdev_dtl_saved, sizeof (dst->vdev_dtl_saved));
	dst->vdev_resilvering = src->vdev_resilvering;
	dst->vdev_offline_temp = src->vdev_offline_temp;
	dst->vdev_fault_state = src->vdev_fault_state;
	dst->vdev_err_run = src->vdev_err_run;
	dst->vdev_fault_req = src->vdev_fault_req;
	dst->vdev_spare_auto = false;     /* a group's, never a leaf's */
	/* src keeps nothing it could free or close */
	src->vdev_path = NULL;
	src->vdev_tsd = NULL;
	src->vdev_fd = -1;
	src->vdev_fault = NULL;
	__atomic_store_n(&src->vdev_inject, NULL, __ATOMIC_RELEASE);
}

/* Reset the leaf-only fields of a vdev_t becoming a group. */
static void
vdev_group_fields_init(vdev_t *vd, vdev_type_t type)
{
	__atomic_store_n(&vd->vdev_type, type, __ATOMIC_RELAXED);
	vd->vdev_guid = tarn_guid();
	vd->vdev_psize = 0;
	vd->vdev_offline = false;
	memset(&vd->vdev_stat, 0, sizeof (vd->vdev_stat));
	vd->vdev_readonly = false;
	vd->vdev_open_error = 0;
	vd->vdev_dtl_txg = vd->vdev_dtl_last = 0;
	memset(vd->vdev_dtl_saved, 0, sizeof (vd->vdev_dtl_saved));
	vd->vdev_resilvering = false;
	vd->vdev_offline_temp = false;
	vd->vdev_fault_state = 0;
	vd->vdev_err_run = 0;
	vd->vdev_fault_req = false;
	vd->vdev_spare_auto = false;
	vd->vdev_tsd = tarn_alloc(sizeof (uint64_t));   /* read rotor */
	/* last: allocation may read the ops of a top-level concurrently */
	__atomic_store_n(&vd->vdev_ops, vdev_ops_for(type), __ATOMIC_RELEASE);
}

static void
vdev_state_recompute(vdev_t *vd)
{
	if (vd->vdev_ops->vop_state_change != NULL)
		vd->vdev_ops->vop_state_change(vd);
	vdev_propagate_state(vd->vdev_parent);
}

/* ---- groups ---- */

vdev_t *
vdev_group_insert(vdev_t **leafp, vdev_type_t type)
{
	vdev_t *leaf = *leafp, *parent = leaf->vdev_parent;
	VERIFY(leaf->vdev_ops->vop_leaf && parent != NULL);
	VERIFY(type == VDEV_TYPE_REPLACING || type == VDEV_TYPE_SPARE ||
	    (type == VDEV_TYPE_MIRROR && parent->vdev_type == VDEV_TYPE_ROOT));
	if (parent->vdev_type == VDEV_TYPE_ROOT) {
		/* In place: the top-level vdev_t becomes the group. */
		vdev_t *top = leaf, *nl = tarn_alloc(sizeof (*nl));
		tarn_array_init(&nl->vdev_child, sizeof (vdev_t *));
		vdev_leaf_fields_move(nl, top);
		nl->vdev_ashift = top->vdev_ashift;
		nl->vdev_asize = top->vdev_asize;
		nl->vdev_guid_sum = nl->vdev_guid;
		nl->vdev_top = nl;
		vdev_group_fields_init(top, type);
		vdev_add_child(top, nl);     /* ids, tops, GUID sums */
		vdev_state_recompute(top);
		*leafp = nl;
		return (top);
	}
	VERIFY(parent->vdev_type == VDEV_TYPE_MIRROR || parent->vdev_type == VDEV_TYPE_RAIDZ);
	vdev_t *g = vdev_alloc(type, 0);
	g->vdev_ashift = leaf->vdev_ashift;
	g->vdev_asize = vdev_slot_asize(leaf);
	g->vdev_readonly = leaf->vdev_readonly;
	g->vdev_id = leaf->vdev_id;
	g->vdev_parent = parent;
	g->vdev_top = parent->vdev_top;
	VDEV_CHILD(parent, leaf->vdev_id) = g;
	leaf->vdev_parent = NULL;
	leaf->vdev_id = 0;
	vdev_add_child(g, leaf);
	vdev_guid_sum_update(g);
	vdev_state_recompute(g);
	return (g);
}

vdev_t *
vdev_group_collapse(vdev_t *g)
{
	vdev_t *parent = g->vdev_parent;
	VERIFY3S(VDEV_NCHILD(g), ==, 1);
	VERIFY(vdev_is_group(g) && g->vdev_type != VDEV_TYPE_RAIDZ);
	vdev_t *leaf = VDEV_CHILD(g, 0);
	if (parent->vdev_type == VDEV_TYPE_ROOT) {
		/* In place: the top-level vdev_t becomes the leaf again. */
		tarn_free(g->vdev_tsd);
		g->vdev_tsd = NULL;
		/* allocation may read ops meanwhile; asize and ashift stay */
		vdev_leaf_fields_move(g, leaf);
		tarn_array_fini(&g->vdev_child);
		tarn_free(leaf);
		vdev_guid_sum_update(g);
		vdev_propagate_state(parent);
		return (g);
	}
	uint64_t id = g->vdev_id;
	VDEV_CHILD(parent, id) = leaf;
	leaf->vdev_id = id;
	leaf->vdev_parent = parent;
	leaf->vdev_top = parent->vdev_top;
	tarn_array_clear(&g->vdev_child);
	g->vdev_parent = NULL;
	vdev_free(g);
	vdev_guid_sum_update(parent);
	vdev_state_recompute(parent);
	return (leaf);
}

void
vdev_group_set_type(vdev_t *g, vdev_type_t type)
{
	VERIFY(g->vdev_type == VDEV_TYPE_REPLACING || g->vdev_type == VDEV_TYPE_SPARE);
	VERIFY(type == VDEV_TYPE_REPLACING || type == VDEV_TYPE_SPARE);
	g->vdev_type = type;
	if (type != VDEV_TYPE_SPARE)
		g->vdev_spare_auto = false;
	__atomic_store_n(&g->vdev_ops, vdev_ops_for(type), __ATOMIC_RELEASE);
}

void
vdev_leaf_remove(vdev_t *leaf)
{
	vdev_t *parent = leaf->vdev_parent;
	VERIFY(leaf->vdev_ops->vop_leaf && parent != NULL && vdev_is_group(parent));
	vdev_free(leaf);
	vdev_state_recompute(parent);
}

/* ---- leaves ---- */

uint64_t
vdev_slot_asize(const vdev_t *vd)
{
	const vdev_t *p = vd->vdev_parent;
	if (p == NULL || p->vdev_type == VDEV_TYPE_ROOT)
		return (vd->vdev_asize);
	if (p->vdev_type == VDEV_TYPE_RAIDZ)
		return (VDEV_NCHILD(p) > 0 ? p->vdev_asize / (uint64_t)VDEV_NCHILD(p) : 0);
	return (vdev_slot_asize(p));   /* mirror, replacing, spare */
}

int
vdev_leaf_reopen(vdev_t *leaf, uint64_t min_asize)
{
	VERIFY(leaf->vdev_ops->vop_leaf);
	leaf->vdev_ops->vop_close(leaf);
	int err = 0;
	if (leaf->vdev_offline) {
		leaf->vdev_state = VDEV_STATE_OFFLINE;
	} else if (leaf->vdev_fault_state != 0) {
		leaf->vdev_state = leaf->vdev_fault_state;
		err = SET_ERROR(ENXIO);
	} else {
		if (leaf->vdev_type == VDEV_TYPE_MISSING) {
			leaf->vdev_type = VDEV_TYPE_FILE;
			leaf->vdev_ops = &vdev_file_ops;
		}
		bool top = leaf->vdev_top == leaf;
		uint64_t preset = top ? leaf->vdev_asize : 0;
		if (top)
			min_asize = MAX(min_asize, preset);
		err = vdev_file_open(leaf);
		if (err == 0 && leaf->vdev_asize < min_asize) {
			vdev_file_close(leaf);
			err = SET_ERROR(EOVERFLOW);
		}
		if (top && preset != 0)
			leaf->vdev_asize = preset;
		leaf->vdev_open_error = err;
		leaf->vdev_state = err == 0 ? VDEV_STATE_HEALTHY : VDEV_STATE_CANT_OPEN;
	}
	__atomic_store_n(&leaf->vdev_err_run, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&leaf->vdev_fault_req, false, __ATOMIC_RELAXED);
	vdev_propagate_state(leaf->vdev_parent);
	return (err);
}
