/*
 * vdev_access.c — the functions through which other layers read a
 * vdev's fields and set the few they own or set up.  struct vdev is
 * private to lib/vdev (vdev_impl.h); the rule for who owns which field
 * is at the top of vdev.h.  Nothing here locks: the caller holds what
 * the field's comment in vdev_impl.h asks for.
 */
#include "vdev_impl.h"

/* ---- reading ---- */

vdev_type_t
vdev_type(const vdev_t *vd)
{
	return (vd->vdev_type);
}

const vdev_ops_t *
vdev_ops(const vdev_t *vd)
{
	return (vd->vdev_ops);
}

uint64_t
vdev_guid(const vdev_t *vd)
{
	return (vd->vdev_guid);
}

uint64_t
vdev_id(const vdev_t *vd)
{
	return (vd->vdev_id);
}

vdev_t *
vdev_parent(const vdev_t *vd)
{
	return (vd->vdev_parent);
}

vdev_t *
vdev_top(const vdev_t *vd)
{
	return (vd->vdev_top);
}

int
vdev_children(const vdev_t *vd)
{
	return (VDEV_NCHILD(vd));
}

int
vdev_nparity(const vdev_t *vd)
{
	return (vd->vdev_nparity);
}

uint64_t
vdev_ashift(const vdev_t *vd)
{
	return (vd->vdev_ashift);
}

uint64_t
vdev_asize(const vdev_t *vd)
{
	return (vd->vdev_asize);
}

uint64_t
vdev_psize(const vdev_t *vd)
{
	return (vd->vdev_psize);
}

const char *
vdev_path(const vdev_t *vd)
{
	return (vd->vdev_path);
}

vdev_state_t
vdev_state(const vdev_t *vd)
{
	return (vd->vdev_state);
}

bool
vdev_offline(const vdev_t *vd)
{
	return (vd->vdev_offline);
}

uint64_t
vdev_guid_sum(const vdev_t *vd)
{
	return (vd->vdev_guid_sum);
}

bool
vdev_readonly(const vdev_t *vd)
{
	return (vd->vdev_readonly);
}

int
vdev_fd(const vdev_t *vd)
{
	return (vd->vdev_fd);
}

vdev_fault_t *
vdev_fault(const vdev_t *vd)
{
	return (vd->vdev_fault);
}

int
vdev_open_error(const vdev_t *vd)
{
	return (vd->vdev_open_error);
}

vdev_t *
vdev_spares(const vdev_t *vd)
{
	return (vd->vdev_spares);
}

vdev_t *
vdev_l2cache(const vdev_t *vd)
{
	return (vd->vdev_l2cache);
}

vdev_alloc_bias_t
vdev_alloc_bias(const vdev_t *vd)
{
	return (vd->vdev_top != NULL ? vd->vdev_top->vdev_alloc_bias : vd->vdev_alloc_bias);
}

const char *
vdev_bias_name(vdev_alloc_bias_t bias)
{
	switch (bias) {
	case VDEV_BIAS_LOG: return ("log");
	case VDEV_BIAS_SPECIAL: return ("special");
	default: return ("normal");
	}
}

vdev_t *
vdev_child(const vdev_t *vd, int c)
{
	ASSERT3S(c, >=, 0);
	ASSERT3S(c, <, VDEV_NCHILD(vd));
	return (VDEV_CHILD(vd, c));
}

const vdev_stat_t *
vdev_stat(const vdev_t *vd)
{
	return (&vd->vdev_stat);
}

uint64_t
vdev_dtl_txg(const vdev_t *vd)
{
	return (__atomic_load_n(&vd->vdev_dtl_txg, __ATOMIC_RELAXED));
}

uint64_t
vdev_dtl_last(const vdev_t *vd)
{
	return (__atomic_load_n(&vd->vdev_dtl_last, __ATOMIC_RELAXED));
}

/* ---- setting up ---- */

void
vdev_set_path(vdev_t *vd, const char *path)
{
	char *old = vd->vdev_path;
	vd->vdev_path = path != NULL ? tarn_strdup(path) : NULL;
	tarn_free(old);
}

void
vdev_set_nparity(vdev_t *vd, int nparity)
{
	vd->vdev_nparity = nparity;
}

void
vdev_set_ashift(vdev_t *vd, uint64_t ashift)
{
	vd->vdev_ashift = ashift;
}

void
vdev_set_asize(vdev_t *vd, uint64_t asize)
{
	vd->vdev_asize = asize;
}

void
vdev_set_readonly(vdev_t *vd, bool readonly)
{
	vd->vdev_readonly = readonly;
}

void
vdev_set_spares(vdev_t *vd, vdev_t *spares)
{
	vd->vdev_spares = spares;
}

void
vdev_set_l2cache(vdev_t *vd, vdev_t *l2cache)
{
	vd->vdev_l2cache = l2cache;
}

void
vdev_set_alloc_bias(vdev_t *vd, vdev_alloc_bias_t bias)
{
	vd->vdev_alloc_bias = bias;
}

void
vdev_set_type(vdev_t *vd, vdev_type_t type)
{
	vd->vdev_type = type;
}

void
vdev_set_state(vdev_t *vd, vdev_state_t state)
{
	vd->vdev_state = state;
}

void
vdev_stat_repaired(vdev_t *vd, uint64_t bytes)
{
	vdev_stat_add(&vd->vdev_stat.vs_repaired_bytes, bytes);
}

/* ---- owned by the space layer ---- */

uint64_t
vdev_ms_array(const vdev_t *top)
{
	return (top->vdev_ms_array);
}

uint64_t
vdev_ms_shift(const vdev_t *top)
{
	return (top->vdev_ms_shift);
}

uint64_t
vdev_ms_count(const vdev_t *top)
{
	return (top->vdev_ms_count);
}

void *
vdev_ms_group(const vdev_t *top)
{
	return (top->vdev_ms_group);
}

void
vdev_set_ms_array(vdev_t *top, uint64_t obj)
{
	top->vdev_ms_array = obj;
}

void
vdev_set_ms_shift(vdev_t *top, uint64_t shift)
{
	top->vdev_ms_shift = shift;
}

void
vdev_set_ms_count(vdev_t *top, uint64_t count)
{
	top->vdev_ms_count = count;
}

void
vdev_set_ms_group(vdev_t *top, void *mg)
{
	top->vdev_ms_group = mg;
}

/* ---- owned by the pool layer ---- */

void
vdev_set_offline_flag(vdev_t *leaf, bool offline)
{
	leaf->vdev_offline = offline;
}

bool
vdev_offline_temp(const vdev_t *vd)
{
	return (vd->vdev_offline_temp);
}

void
vdev_set_offline_temp(vdev_t *vd, bool temporary)
{
	vd->vdev_offline_temp = temporary;
}

vdev_state_t
vdev_fault_state(const vdev_t *vd)
{
	return (vd->vdev_fault_state);
}

void
vdev_set_fault_state(vdev_t *vd, vdev_state_t state)
{
	vd->vdev_fault_state = state;
}

bool
vdev_resilvering(const vdev_t *vd)
{
	return (vd->vdev_resilvering);
}

void
vdev_set_resilvering(vdev_t *vd, bool resilvering)
{
	vd->vdev_resilvering = resilvering;
}

bool
vdev_spare_auto(const vdev_t *vd)
{
	return (vd->vdev_spare_auto);
}

void
vdev_set_spare_auto(vdev_t *vd, bool automatic)
{
	vd->vdev_spare_auto = automatic;
}

const uint64_t *
vdev_dtl_saved(const vdev_t *leaf)
{
	return (leaf->vdev_dtl_saved);
}

void
vdev_set_dtl_saved(vdev_t *leaf, const uint64_t dtl[2])
{
	leaf->vdev_dtl_saved[0] = dtl[0];
	leaf->vdev_dtl_saved[1] = dtl[1];
}

void
vdev_set_dtl_txg(vdev_t *leaf, uint64_t txg)
{
	__atomic_store_n(&leaf->vdev_dtl_txg, txg, __ATOMIC_RELEASE);
}

void
vdev_set_dtl_last(vdev_t *leaf, uint64_t txg)
{
	__atomic_store_n(&leaf->vdev_dtl_last, txg, __ATOMIC_RELEASE);
}

uint32_t
vdev_err_run(const vdev_t *leaf)
{
	return (__atomic_load_n(&leaf->vdev_err_run, __ATOMIC_RELAXED));
}

void
vdev_set_err_run(vdev_t *leaf, uint32_t n)
{
	__atomic_store_n(&leaf->vdev_err_run, n, __ATOMIC_RELAXED);
}

void
vdev_set_fault_req(vdev_t *leaf, bool req)
{
	__atomic_store_n(&leaf->vdev_fault_req, req, __ATOMIC_RELAXED);
}

bool
vdev_fault_req_take(vdev_t *leaf)
{
	return (__atomic_exchange_n(&leaf->vdev_fault_req, false, __ATOMIC_ACQ_REL));
}
