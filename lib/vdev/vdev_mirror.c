/*
 * vdev_mirror.c — N-way mirrors.  Every side holds the whole block at
 * the same offset.  A write goes to every side that can serve I/O and
 * succeeds when one side at least took it.  A read picks a side in turn
 * (a per-mirror rotor spreads the load), verifies it with the caller's
 * callback, and on EIO or a bad checksum tries every other side; when
 * one verifies, the sides that failed are rewritten with the good data
 * (self-heal) and charged a READ (EIO) or CKSUM error.  A scrub reads and
 * verifies every side.  Without a verify callback the first side that
 * reads without EIO wins.
 */
#include "vdev_impl.h"

enum { MIRROR_OK = 0, MIRROR_EIO = 1, MIRROR_CKSUM = 2 };

static int
vdev_mirror_open(vdev_t *vd)
{
	uint64_t preset = vd->vdev_asize;
	uint64_t a = vdev_group_child_asize(vd, preset);
	if (preset == 0)
		vd->vdev_asize = a;
	vd->vdev_ops->vop_state_change(vd);
	return (vdev_usable(vd) ? 0 : SET_ERROR(ENXIO));
}

static void
vdev_mirror_close(vdev_t *vd)
{
}

static void
vdev_mirror_state_change(vdev_t *vd)
{
	int usable = 0;
	for (int c = 0; c < vd->vdev_children; c++)
		if (vdev_usable(vd->vdev_child[c]))
			usable++;
	if (usable == 0)
		vd->vdev_state = VDEV_STATE_CANT_OPEN;
	else if (usable < vd->vdev_children)
		vd->vdev_state = VDEV_STATE_DEGRADED;
	else
		vd->vdev_state = VDEV_STATE_HEALTHY;
}

static uint64_t
vdev_mirror_asize(vdev_t *vd, uint64_t psize)
{
	return (P2ROUNDUP(psize, vdev_sector(vd)));
}

static int
vdev_mirror_write(vdev_t *vd, vdev_io_t *io)
{
	int ok = 0;
	for (int c = 0; c < vd->vdev_children; c++) {
		vdev_t *cvd = vd->vdev_child[c];
		if (!vdev_leaf_usable(cvd))
			continue;
		if (vdev_leaf_write_padded(cvd, io->vio_buf, io->vio_size,
		    io->vio_offset, io->vio_flags) == 0)
			ok++;
	}
	return (ok > 0 ? 0 : SET_ERROR(EIO));
}

/*
 * After the read: charge the failed sides, heal them from vio_buf when
 * side `good` verified, and say how the read ended.
 */
static int
vdev_mirror_finish(vdev_t *vd, vdev_io_t *io, const uint8_t *bad, int good)
{
	bool any_cksum = false;
	for (int c = 0; c < vd->vdev_children; c++) {
		vdev_t *cvd = vd->vdev_child[c];
		if (bad[c] == MIRROR_OK)
			continue;
		io->vio_bad_children++;
		if (bad[c] == MIRROR_CKSUM) {
			vdev_stat_cksum(cvd, io->vio_flags);
			any_cksum = true;
		}
		if (good < 0 || (io->vio_flags & VDEV_IO_NOHEAL) ||
		    cvd->vdev_readonly || !vdev_leaf_usable(cvd))
			continue;
		if (vdev_leaf_write_padded(cvd, io->vio_buf, io->vio_size,
		    io->vio_offset, io->vio_flags) == 0)
			vdev_stat_repair(cvd, io, io->vio_size);
	}
	if (good >= 0)
		return (0);
	if (any_cksum) {
		vdev_stat_cksum(vd, io->vio_flags);
		return (SET_ERROR(ECKSUM));
	}
	vdev_stat_ioerr(vd, 0, io->vio_flags);
	return (SET_ERROR(EIO));
}

/* Read one side into buf: MIRROR_OK, _EIO or _CKSUM. */
static int
vdev_mirror_read_side(vdev_t *cvd, vdev_io_t *io, void *buf)
{
	if (vdev_leaf_read(cvd, buf, io->vio_size, io->vio_offset, io->vio_flags) != 0)
		return (MIRROR_EIO);
	if (io->vio_verify != NULL &&
	    io->vio_verify(io->vio_verify_arg, buf, io->vio_size) != 0)
		return (MIRROR_CKSUM);
	return (MIRROR_OK);
}

/*
 * Scrub: every side is read and verified.  The first good side lands in
 * vio_buf, the others are read into a scratch buffer only to be judged.
 */
static int
vdev_mirror_scrub(vdev_t *vd, vdev_io_t *io)
{
	uint8_t bad[VDEV_MAX_CHILDREN] = { 0 };
	uint8_t *alt = NULL;
	int good = -1;

	for (int c = 0; c < vd->vdev_children; c++) {
		vdev_t *cvd = vd->vdev_child[c];
		if (!vdev_leaf_usable(cvd))
			continue;
		uint8_t *buf = io->vio_buf;
		if (good >= 0) {
			if (alt == NULL)
				alt = vdev_scratch(VDEV_SCRATCH_MIRROR, io->vio_size);
			buf = alt;
		}
		bad[c] = (uint8_t)vdev_mirror_read_side(cvd, io, buf);
		if (bad[c] == MIRROR_OK && good < 0)
			good = c;
	}
	return (vdev_mirror_finish(vd, io, bad, good));
}

static int
vdev_mirror_read(vdev_t *vd, vdev_io_t *io)
{
	uint8_t bad[VDEV_MAX_CHILDREN] = { 0 };
	int n = vd->vdev_children;
	int good = -1;

	if (io->vio_flags & VDEV_IO_SCRUB)
		return (vdev_mirror_scrub(vd, io));
	uint64_t *rotor = vd->vdev_tsd;
	int start = (int)(__atomic_fetch_add(rotor, 1, __ATOMIC_RELAXED) % (uint64_t)n);
	for (int i = 0; i < n && good < 0; i++) {
		int c = (start + i) % n;
		vdev_t *cvd = vd->vdev_child[c];
		if (!vdev_leaf_usable(cvd))
			continue;
		bad[c] = (uint8_t)vdev_mirror_read_side(cvd, io, io->vio_buf);
		if (bad[c] == MIRROR_OK)
			good = c;
	}
	return (vdev_mirror_finish(vd, io, bad, good));
}

/* Durable when one side at least flushed. */
static int
vdev_mirror_flush(vdev_t *vd)
{
	int errs[VDEV_MAX_CHILDREN];
	int ok = 0;
	vdev_children_flush(vd, errs);
	for (int c = 0; c < vd->vdev_children; c++)
		if (errs[c] == 0)
			ok++;
	return (ok > 0 ? 0 : SET_ERROR(EIO));
}

const vdev_ops_t vdev_mirror_ops = {
	.vop_open = vdev_mirror_open,
	.vop_close = vdev_mirror_close,
	.vop_asize = vdev_mirror_asize,
	.vop_read = vdev_mirror_read,
	.vop_write = vdev_mirror_write,
	.vop_flush = vdev_mirror_flush,
	.vop_state_change = vdev_mirror_state_change,
	.vop_name = "mirror",
	.vop_leaf = false,
};
