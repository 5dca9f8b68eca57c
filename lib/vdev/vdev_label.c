/*
 * vdev_label.c — the four labels on every leaf and the uberblock rings
 * inside them (docs/FORMAT.md "Leaf layout" and "Labels").
 *
 * A label is 256 KiB: 8 KiB left blank (for boot loaders and partition
 * tables that like the first sectors), the config area (56 KiB: the
 * encoded config of vdev_config.c), and the uberblock ring (192 KiB of
 * slots of max(1 KiB, 1 << top-level ashift) bytes; txg t goes in slot
 * t % nslots).  Labels 0 and 1 open the device, 2 and 3 close it, so
 * that a device overwritten at either end still has two.
 *
 * Update order.  Configs are written to labels 0 and 2 of every leaf,
 * flushed, then to 1 and 3, flushed: a crash at any point leaves one
 * pair whole on each leaf.  Uberblocks go into the same slot of all
 * four labels (the caller flushes); a torn slot fails its checksum and
 * the previous txg's slot still holds.
 */
#include "vdev_impl.h"
#include "tarn_array.h"

/* ---- walking leaves ---- */

typedef int (*vdev_leaf_fn_t)(vdev_t *leaf, void *arg);

/* Call fn on every leaf that can serve I/O; returns how many returned 0. */
static int
vdev_label_each_leaf(vdev_t *vd, vdev_leaf_fn_t fn, void *arg, bool writable)
{
	int good = 0;
	if (vd->vdev_ops->vop_leaf) {
		if (!vdev_leaf_usable(vd) || (writable && vd->vdev_readonly))
			return (0);
		return (fn(vd, arg) == 0 ? 1 : 0);
	}
	for (int c = 0; c < VDEV_NCHILD(vd); c++)
		good += vdev_label_each_leaf(VDEV_CHILD(vd, c), fn, arg, writable);
	return (good);
}

/* ---- config ---- */

typedef struct label_write_arg {
	const vdev_label_config_t *lwa_cfg;
	vdev_t  *lwa_root;
	uint8_t *lwa_buf;          /* one label */
	bool     lwa_wipe;
	int      lwa_pass;         /* 0: labels 0 and 2; 1: labels 1 and 3 */
} label_write_arg_t;

static int
vdev_label_write_pass(vdev_t *leaf, void *arg)
{
	label_write_arg_t *a = arg;
	uint64_t len = a->lwa_wipe ? VDEV_LABEL_SIZE : VDEV_LABEL_RING_OFF;
	memset(a->lwa_buf, 0, VDEV_LABEL_SIZE);
	int err = vdev_config_encode(a->lwa_cfg, a->lwa_root, leaf,
	    a->lwa_buf + VDEV_LABEL_CONFIG_OFF, VDEV_LABEL_CONFIG_SIZE);
	for (int l = a->lwa_pass; err == 0 && l < VDEV_LABELS; l += 2)
		err = vdev_leaf_pwrite(leaf, a->lwa_buf, len,
		    vdev_label_offset(leaf->vdev_psize, l));
	return (err);
}

/* Both passes on one leaf outside the tree walk (hot spares). */
static int
vdev_label_write_one(vdev_t *leaf, label_write_arg_t *a)
{
	int err = 0;
	for (a->lwa_pass = 0; a->lwa_pass < 2 && err == 0; a->lwa_pass++) {
		err = vdev_label_write_pass(leaf, a);
		if (err == 0)
			err = vdev_leaf_flush(leaf);
	}
	return (err);
}

int
vdev_label_write_leaf(vdev_t *leaf, vdev_t *root, const vdev_label_config_t *cfg)
{
	if (!vdev_leaf_usable(leaf) || leaf->vdev_readonly)
		return (SET_ERROR(ENXIO));
	label_write_arg_t a = { .lwa_cfg = cfg, .lwa_root = root,
		.lwa_buf = tarn_alloc_aligned(VDEV_LABEL_SIZE) };
	int err = vdev_label_write_one(leaf, &a);
	tarn_free(a.lwa_buf);
	return (err);
}

/* The spares not in use in the tree get the config as SPARE (best effort). */
static void
vdev_label_write_spares(vdev_t *root, const vdev_label_config_t *cfg)
{
	if (root->vdev_spares == NULL)
		return;
	vdev_label_config_t scfg = *cfg;
	if (cfg->vlc_state != POOL_STATE_DESTROYED)
		scfg.vlc_state = POOL_STATE_SPARE;
	for (int c = 0; c < VDEV_NCHILD(root->vdev_spares); c++) {
		vdev_t *sp = VDEV_CHILD(root->vdev_spares, c);
		if (vdev_lookup_guid(root, sp->vdev_guid) == NULL)
			(void) vdev_label_write_leaf(sp, root, &scfg);
	}
}

/* The cache devices get the config as L2CACHE (best effort). */
static void
vdev_label_write_l2cache(vdev_t *root, const vdev_label_config_t *cfg)
{
	if (root->vdev_l2cache == NULL)
		return;
	vdev_label_config_t ccfg = *cfg;
	if (cfg->vlc_state != POOL_STATE_DESTROYED)
		ccfg.vlc_state = POOL_STATE_L2CACHE;
	for (int c = 0; c < VDEV_NCHILD(root->vdev_l2cache); c++)
		(void) vdev_label_write_leaf(VDEV_CHILD(root->vdev_l2cache, c), root, &ccfg);
}

int
vdev_label_write_all(vdev_t *root, const vdev_label_config_t *cfg, bool wipe_rings)
{
	label_write_arg_t a = {
		.lwa_cfg = cfg, .lwa_root = root, .lwa_wipe = wipe_rings,
		.lwa_buf = tarn_alloc_aligned(VDEV_LABEL_SIZE),
	};
	int err = 0;
	/*
	 * Pass 0 on every leaf of the pool, flush, then pass 1: run the
	 * passes pool-wide so that the order holds across top-levels too.
	 */
	int *good = tarn_alloc((size_t)MAX(VDEV_NCHILD(root), 1) * sizeof (int));
	for (a.lwa_pass = 0; a.lwa_pass < 2; a.lwa_pass++) {
		for (int c = 0; c < VDEV_NCHILD(root); c++)
			good[c] = vdev_label_each_leaf(VDEV_CHILD(root, c),
			    vdev_label_write_pass, &a, true);
		(void) vdev_flush(root);   /* every leaf, in parallel */
	}
	for (int c = 0; c < VDEV_NCHILD(root); c++)
		if (good[c] == 0 && err == 0 && !vdev_is_hole(VDEV_CHILD(root, c)) &&
		    !vdev_is_dead_log(VDEV_CHILD(root, c)))
			err = SET_ERROR(EIO);
	if (VDEV_NCHILD(root) == 0)
		err = SET_ERROR(EINVAL);
	tarn_free(good);
	tarn_free(a.lwa_buf);
	vdev_label_write_spares(root, cfg);
	vdev_label_write_l2cache(root, cfg);
	return (err);
}

int
vdev_label_init(vdev_t *leaf)
{
	if (!vdev_leaf_usable(leaf))
		return (SET_ERROR(ENXIO));
	uint8_t *zero = tarn_alloc_aligned(VDEV_LABEL_SIZE);
	int err = 0;
	for (int l = 0; l < VDEV_LABELS && err == 0; l++)
		err = vdev_leaf_pwrite(leaf, zero, VDEV_LABEL_SIZE,
		    vdev_label_offset(leaf->vdev_psize, l));
	if (err == 0)
		err = vdev_leaf_flush(leaf);
	tarn_free(zero);
	return (err);
}

/* A read-only (or writable, locked) leaf on path, outside any tree. */
static int
vdev_label_open_path(const char *path, bool writable, vdev_t **vdp)
{
	vdev_t *vd = vdev_alloc(VDEV_TYPE_FILE, 1);
	vd->vdev_path = tarn_strdup(path);
	vd->vdev_readonly = !writable;
	int err = vdev_file_open(vd);
	if (err != 0) {
		vdev_free(vd);
		return (err == EOVERFLOW ? SET_ERROR(ENOENT) : err);
	}
	vd->vdev_state = VDEV_STATE_HEALTHY;
	*vdp = vd;
	return (0);
}

/* Any valid uberblock in any ring, at any slot size? */
static bool
vdev_label_any_uberblock(vdev_t *vd, uint8_t *ring)
{
	for (int l = 0; l < VDEV_LABELS; l++) {
		uint64_t off = vdev_label_offset(vd->vdev_psize, l) + VDEV_LABEL_RING_OFF;
		if (vdev_leaf_pread(vd, ring, VDEV_LABEL_RING_SIZE, off) != 0)
			continue;
		for (uint64_t s = 0; s < VDEV_LABEL_RING_SIZE; s += VDEV_UB_SLOT_MIN)
			if (uberblock_verify((const uberblock_t *)(ring + s)))
				return (true);
	}
	return (false);
}

int
vdev_label_read_path(const char *path, vdev_label_config_t *cfg)
{
	vdev_t *vd;
	memset(cfg, 0, sizeof (*cfg));
	int err = vdev_label_open_path(path, false, &vd);
	if (err != 0)
		return (err);
	uint8_t *buf = tarn_alloc_aligned(VDEV_LABEL_RING_SIZE);
	bool found = false, damaged = false;
	int ioerrs = 0;
	for (int l = 0; l < VDEV_LABELS; l++) {
		vdev_label_config_t c;
		uint64_t off = vdev_label_offset(vd->vdev_psize, l) + VDEV_LABEL_CONFIG_OFF;
		if (vdev_leaf_pread(vd, buf, VDEV_LABEL_CONFIG_SIZE, off) != 0) {
			ioerrs++;
			continue;
		}
		int derr = vdev_config_decode(buf, VDEV_LABEL_CONFIG_SIZE, &c);
		if (derr != 0) {
			/* Our magic with a bad body is a damaged label; else none. */
			uint64_t magic;
			memcpy(&magic, buf, sizeof (magic));
			damaged |= magic == VDEV_CONFIG_MAGIC;
			continue;
		}
		if (!found || c.vlc_txg > cfg->vlc_txg) {
			vdev_config_free(cfg);
			*cfg = c;
			found = true;
		} else {
			vdev_config_free(&c);
		}
	}
	if (!found && ioerrs == VDEV_LABELS)
		err = SET_ERROR(EIO);
	else if (!found)
		err = damaged || vdev_label_any_uberblock(vd, buf) ? SET_ERROR(EINVAL) :
		    SET_ERROR(ENOENT);
	tarn_free(buf);
	vdev_free(vd);
	return (err);
}

int
vdev_label_clear_path(const char *path)
{
	vdev_t *vd;
	int err = vdev_label_open_path(path, true, &vd);
	if (err != 0)
		return (err);
	uint8_t *zero = tarn_alloc_aligned(VDEV_LABEL_SIZE);
	for (int l = 0; l < VDEV_LABELS && err == 0; l++)
		err = vdev_leaf_pwrite(vd, zero, VDEV_LABEL_SIZE,
		    vdev_label_offset(vd->vdev_psize, l));
	if (err == 0)
		err = vdev_leaf_flush(vd);
	tarn_free(zero);
	vdev_free(vd);
	return (err);
}

/* ---- uberblocks ---- */

static uint64_t
vdev_label_slot_size(const vdev_t *leaf)
{
	const vdev_t *top = leaf->vdev_top != NULL ? leaf->vdev_top : leaf;
	return (vdev_ub_slot_size(top->vdev_ashift));
}

typedef struct ub_write_arg {
	const uberblock_t *uwa_ub;
	uint8_t *uwa_slot;          /* VDEV_UB_SLOT max size, ub then zeros */
} ub_write_arg_t;

static int
vdev_uberblock_write_leaf(vdev_t *leaf, void *arg)
{
	ub_write_arg_t *a = arg;
	uint64_t slot = vdev_label_slot_size(leaf);
	uint64_t nslots = VDEV_LABEL_RING_SIZE / slot;
	uint64_t where = VDEV_LABEL_RING_OFF + (a->uwa_ub->ub_txg % nslots) * slot;
	int good = 0;
	for (int l = 0; l < VDEV_LABELS; l++)
		if (vdev_leaf_pwrite(leaf, a->uwa_slot, slot,
		    vdev_label_offset(leaf->vdev_psize, l) + where) == 0)
			good++;
	return (good > 0 ? 0 : SET_ERROR(EIO));
}

int
vdev_uberblock_write_all(vdev_t *root, const uberblock_t *ub)
{
	ub_write_arg_t a = { .uwa_ub = ub, .uwa_slot = tarn_alloc_aligned(64 * KiB) };
	memcpy(a.uwa_slot, ub, sizeof (*ub));
	int good = vdev_label_each_leaf(root, vdev_uberblock_write_leaf, &a, true);
	tarn_free(a.uwa_slot);
	return (good > 0 ? 0 : SET_ERROR(EIO));
}

typedef struct ub_collect_arg {
	uint64_t     uca_pool_guid;
	uint8_t     *uca_ring;
	tarn_array_t uca_ubs;       /* of uberblock_t */
} ub_collect_arg_t;

static int
vdev_uberblock_collect_leaf(vdev_t *leaf, void *arg)
{
	ub_collect_arg_t *a = arg;
	uint64_t slot = vdev_label_slot_size(leaf);
	for (int l = 0; l < VDEV_LABELS; l++) {
		uint64_t off = vdev_label_offset(leaf->vdev_psize, l) + VDEV_LABEL_RING_OFF;
		if (vdev_leaf_pread(leaf, a->uca_ring, VDEV_LABEL_RING_SIZE, off) != 0)
			continue;
		for (uint64_t s = 0; s + sizeof (uberblock_t) <= VDEV_LABEL_RING_SIZE;
		    s += slot) {
			const uberblock_t *ub = (const uberblock_t *)(a->uca_ring + s);
			if (!uberblock_verify(ub) || ub->ub_pool_guid != a->uca_pool_guid)
				continue;
			TARN_ARRAY_APPEND(&a->uca_ubs, uberblock_t, *ub);
		}
	}
	return (0);
}

/* Newest txg first; on equal txg, the later timestamp first. */
static int
vdev_uberblock_cmp(const void *x, const void *y)
{
	const uberblock_t *a = x, *b = y;
	if (a->ub_txg != b->ub_txg)
		return (a->ub_txg > b->ub_txg ? -1 : 1);
	if (a->ub_timestamp != b->ub_timestamp)
		return (a->ub_timestamp > b->ub_timestamp ? -1 : 1);
	return (0);
}

uint64_t
vdev_uberblock_newest(vdev_t *leaf, uint64_t pool_guid)
{
	ub_collect_arg_t a = {
		.uca_pool_guid = pool_guid,
		.uca_ring = tarn_alloc_aligned(VDEV_LABEL_RING_SIZE),
		.uca_ubs = TARN_ARRAY_INIT(uberblock_t),
	};
	uint64_t newest = 0;
	if (vdev_leaf_usable(leaf))
		(void) vdev_uberblock_collect_leaf(leaf, &a);
	for (int i = 0; i < (int)tarn_array_len(&a.uca_ubs); i++)
		newest = MAX(newest, TARN_ARRAY_AT(&a.uca_ubs, uberblock_t, i).ub_txg);
	tarn_free(a.uca_ring);
	tarn_array_fini(&a.uca_ubs);
	return (newest);
}

uint64_t
vdev_uberblock_newest_path(const char *path, uint64_t pool_guid)
{
	vdev_t *vd;
	if (path == NULL || vdev_label_open_path(path, false, &vd) != 0)
		return (0);
	uint64_t newest = vdev_uberblock_newest(vd, pool_guid);
	vdev_free(vd);
	return (newest);
}

int
vdev_uberblock_collect(vdev_t *root, uint64_t pool_guid, uberblock_t **ubs, int *n)
{
	ub_collect_arg_t a = {
		.uca_pool_guid = pool_guid,
		.uca_ring = tarn_alloc_aligned(VDEV_LABEL_RING_SIZE),
		.uca_ubs = TARN_ARRAY_INIT(uberblock_t),
	};
	(void) vdev_label_each_leaf(root, vdev_uberblock_collect_leaf, &a, false);
	tarn_free(a.uca_ring);
	tarn_array_sort(&a.uca_ubs, vdev_uberblock_cmp);
	int out = 0;
	for (int i = 0; i < (int)tarn_array_len(&a.uca_ubs); i++)
		if (out == 0 || TARN_ARRAY_AT(&a.uca_ubs, uberblock_t, out - 1).ub_txg != TARN_ARRAY_AT(&a.uca_ubs, uberblock_t, i).ub_txg)
			TARN_ARRAY_AT(&a.uca_ubs, uberblock_t, out++) = TARN_ARRAY_AT(&a.uca_ubs, uberblock_t, i);
	size_t len;
	*ubs = tarn_array_steal(&a.uca_ubs, &len);
	*n = out;
	return (0);
}
