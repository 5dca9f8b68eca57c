/*
 * vdev_dtl.c — missed txgs ("DTL", after ZFS's dirty time log) and the
 * I/O helpers that mirrors and raidz groups use on their children.
 *
 * THEORY
 *
 * A leaf that cannot take a write of txg t — it is closed, offline,
 * faulted, missing, or the write failed — records that it missed t: its
 * DTL is the range [vdev_dtl_txg, vdev_dtl_last] of txgs whose blocks it
 * may not hold (one range per leaf: the first and the last txg missed;
 * txgs between that it did get are treated as missed too, which costs a
 * little resilver work and nothing else).  Blocks carry their birth txg
 * (vio_txg), so per block the vdev layer knows which leaves hold it:
 *
 *   - normal reads skip a leaf that misses the block (other mirror sides,
 *     RAID-Z parity serve it); only when nothing else verifies is such a
 *     leaf tried, and its errors then are not counted;
 *   - a scrub or resilver read (VDEV_IO_SCRUB), once the block is known
 *     good, writes it into every open leaf that misses it ("settles" the
 *     child) — this is how a resilver brings a leaf up to date;
 *   - writes go to every open leaf, missed range or not.
 *
 * The pool layer (spa_vdev.c) records the DTL in the label config so it
 * survives export and import, starts a resilver from the first missed
 * txg when the leaf can be written again, and clears the range when a
 * resilver that began after the last missed txg has finished.
 *
 * Children of mirrors and raidz groups are leaves, or replacing/spare
 * groups of leaves (a mirror-like pair: old and new device, failed
 * device and its hot spare).  The vdev_child_* helpers hide which.
 * Marking and reading the DTL are lock-free (atomics): I/O threads mark
 * while others read.
 */
#include "vdev_impl.h"

/* ---- the DTL of a leaf ---- */

void
vdev_dtl_mark(vdev_t *leaf, uint64_t txg)
{
	if (txg == 0 || !leaf->vdev_ops->vop_leaf)
		return;
	uint64_t last = __atomic_load_n(&leaf->vdev_dtl_last, __ATOMIC_RELAXED);
	while (txg > last && !__atomic_compare_exchange_n(&leaf->vdev_dtl_last, &last,
	    txg, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	uint64_t first = __atomic_load_n(&leaf->vdev_dtl_txg, __ATOMIC_RELAXED);
	while ((first == 0 || txg < first) && !__atomic_compare_exchange_n(
	    &leaf->vdev_dtl_txg, &first, txg, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

bool
vdev_dtl_contains(const vdev_t *leaf, uint64_t txg)
{
	uint64_t first = __atomic_load_n(&leaf->vdev_dtl_txg, __ATOMIC_ACQUIRE);
	if (first == 0)
		return (false);
	if (txg == 0)
		return (true);
	uint64_t last = __atomic_load_n(&leaf->vdev_dtl_last, __ATOMIC_ACQUIRE);
	return (txg >= first && txg <= last);
}

bool
vdev_dtl_empty(const vdev_t *leaf)
{
	return (__atomic_load_n(&leaf->vdev_dtl_txg, __ATOMIC_ACQUIRE) == 0);
}

void
vdev_dtl_clear(vdev_t *leaf)
{
	__atomic_store_n(&leaf->vdev_dtl_txg, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&leaf->vdev_dtl_last, 0, __ATOMIC_RELEASE);
}

void
vdev_dtl_encoded(const vdev_t *leaf, uint64_t out[2])
{
	uint64_t first = __atomic_load_n(&leaf->vdev_dtl_txg, __ATOMIC_ACQUIRE);
	uint64_t last = __atomic_load_n(&leaf->vdev_dtl_last, __ATOMIC_ACQUIRE);
	out[0] = out[1] = 0;
	if (!leaf->vdev_ops->vop_leaf || first == 0)
		return;
	out[0] = first;
	out[1] = vdev_leaf_usable(leaf) && last >= first ? last : VDEV_DTL_OPEN;
}

bool
vdev_complete(const vdev_t *vd, const vdev_t *without)
{
	if (vd == without)
		return (false);
	if (vd->vdev_ops->vop_leaf)
		return (vdev_leaf_usable(vd) && vdev_dtl_empty(vd));
	if (vd->vdev_type == VDEV_TYPE_HOLE)
		return (true);      /* holds nothing */
	int bad = 0;
	for (int c = 0; c < VDEV_NCHILD(vd); c++)
		bad += !vdev_complete(VDEV_CHILD(vd, c), without);
	switch (vd->vdev_type) {
	case VDEV_TYPE_RAIDZ:
		return (bad <= vd->vdev_nparity);
	case VDEV_TYPE_ROOT:
		return (bad == 0);
	default:                /* mirror, replacing, spare */
		return (bad < VDEV_NCHILD(vd));
	}
}

bool
vdev_dtl_required(const vdev_t *leaf)
{
	const vdev_t *top = leaf->vdev_top;
	if (!vdev_leaf_usable(leaf))
		return (false);
	if (top == NULL || top == leaf || !vdev_complete(top, NULL))
		return (true);
	return (!vdev_complete(top, leaf));
}

bool
vdev_leaf_ready(const vdev_t *vd)
{
	return (vdev_leaf_usable(vd));
}

/* ---- children of mirrors and raidz groups ---- */

bool
vdev_child_writable(const vdev_t *cvd)
{
	if (cvd->vdev_ops->vop_leaf)
		return (vdev_leaf_usable(cvd));
	for (int c = 0; c < VDEV_NCHILD(cvd); c++)
		if (vdev_leaf_usable(VDEV_CHILD(cvd, c)))
			return (true);
	return (false);
}

bool
vdev_child_readable(const vdev_t *cvd, uint64_t txg)
{
	if (cvd->vdev_ops->vop_leaf)
		return (vdev_leaf_usable(cvd) && !vdev_dtl_contains(cvd, txg));
	for (int c = 0; c < VDEV_NCHILD(cvd); c++)
		if (vdev_child_readable(VDEV_CHILD(cvd, c), txg))
			return (true);
	return (false);
}

/* One leaf's part of vdev_child_write. */
static int
vdev_child_write_leaf(vdev_t *leaf, const vdev_io_t *pio, const void *buf,
    uint64_t size, uint64_t off, int flags)
{
	bool mark = !(flags & VDEV_IO_REPAIR) && pio->vio_txg != 0;
	if (!vdev_leaf_usable(leaf)) {
		if (mark)
			vdev_dtl_mark(leaf, pio->vio_txg);
		return (SET_ERROR(ENXIO));
	}
	int err = vdev_leaf_write_padded(leaf, buf, size, off, flags);
	if (err != 0 && err != EROFS && mark)
		vdev_dtl_mark(leaf, pio->vio_txg);
	return (err);
}

int
vdev_child_write(vdev_t *cvd, const vdev_io_t *pio, const void *buf, uint64_t size,
    uint64_t off, int flags)
{
	if (cvd->vdev_ops->vop_leaf)
		return (vdev_child_write_leaf(cvd, pio, buf, size, off, flags));
	int ok = 0;
	for (int c = 0; c < VDEV_NCHILD(cvd); c++)
		if (vdev_child_write_leaf(VDEV_CHILD(cvd, c), pio, buf, size, off,
		    flags) == 0)
			ok++;
	return (ok > 0 ? 0 : SET_ERROR(EIO));
}

int
vdev_child_read(vdev_t *cvd, const vdev_io_t *pio, void *buf, uint64_t size,
    uint64_t off, int flags, bool lacking_ok, vdev_t **leafp)
{
	*leafp = cvd;
	if (cvd->vdev_ops->vop_leaf)
		return (vdev_leaf_read(cvd, buf, size, off, flags));
	/* A group: the leaves that hold the block first, in turn. */
	int n = VDEV_NCHILD(cvd), err = SET_ERROR(ENXIO);
	uint64_t *rotor = cvd->vdev_tsd;
	int start = rotor != NULL ?
	    (int)(__atomic_fetch_add(rotor, 1, __ATOMIC_RELAXED) % (uint64_t)n) : 0;
	for (int pass = 0; pass < (lacking_ok ? 2 : 1); pass++) {
		for (int i = 0; i < n; i++) {
			vdev_t *leaf = VDEV_CHILD(cvd, (start + i) % n);
			if (!vdev_leaf_usable(leaf) ||
			    vdev_dtl_contains(leaf, pio->vio_txg) != (pass == 1))
				continue;
			*leafp = leaf;
			err = vdev_leaf_read(leaf, buf, size, off,
			    pass == 1 ? flags | VDEV_IO_PROBE : flags);
			if (err == 0)
				return (0);
		}
	}
	return (err);
}

/* Rewrite leaf with the good data; count it as repaired. */
static void
vdev_child_fix(vdev_t *leaf, vdev_io_t *pio, const void *want, uint64_t size,
    uint64_t off)
{
	if (leaf->vdev_readonly || !vdev_leaf_usable(leaf))
		return;
	if (vdev_leaf_write_padded(leaf, want, size, off,
	    pio->vio_flags | VDEV_IO_REPAIR) == 0)
		vdev_stat_repair(leaf, pio, P2ROUNDUP(size, vdev_sector(leaf->vdev_top)));
}

void
vdev_child_settle(vdev_t *cvd, vdev_io_t *pio, const void *want, uint64_t size,
    uint64_t off, const vdev_t *served)
{
	if ((pio->vio_flags & (VDEV_IO_SCRUB | VDEV_IO_NOHEAL)) != VDEV_IO_SCRUB)
		return;
	if (cvd->vdev_ops->vop_leaf) {
		if (cvd != served && vdev_dtl_contains(cvd, pio->vio_txg))
			vdev_child_fix(cvd, pio, want, size, off);
		return;
	}
	for (int c = 0; c < VDEV_NCHILD(cvd); c++) {
		vdev_t *leaf = VDEV_CHILD(cvd, c);
		if (leaf == served || !vdev_leaf_usable(leaf))
			continue;
		if (vdev_dtl_contains(leaf, pio->vio_txg)) {
			vdev_child_fix(leaf, pio, want, size, off);
			continue;
		}
		/* A scrub checks every copy: compare this one with the good data. */
		uint8_t *buf = vdev_scratch(VDEV_SCRATCH_GROUP, size);
		int err = vdev_leaf_read(leaf, buf, size, off, pio->vio_flags);
		if (err == 0 && memcmp(buf, want, size) == 0)
			continue;
		if (err == 0)
			vdev_stat_cksum(leaf, pio->vio_flags);
		pio->vio_bad_children++;
		vdev_child_fix(leaf, pio, want, size, off);
	}
}
