/*
 * vdev_mirror.c — N-way mirrors, and the replacing and spare groups
 * (a mirror of an old and a new device while a replace or a hot spare
 * resilvers; same code, other names).  Every side holds the whole block
 * at the same offset.  A write goes to every side that can serve I/O and
 * succeeds when one side at least took it.  A read picks a side in turn
 * (a per-mirror rotor spreads the load), verifies it with the caller's
 * callback, and on EIO or a bad checksum tries every other side; when
 * one verifies, the sides that failed are rewritten with the good data
 * (self-heal) and charged a READ (EIO) or CKSUM error.  A scrub reads and
 * verifies every side.  Without a verify callback the first side that
 * reads without EIO wins.
 *
 * Sides that missed the block's txg (DTL, vdev_dtl.c) are not read; only
 * when no other side verifies are they tried, uncharged.  A scrub or
 * resilver writes the good block into them.  A side can itself be a
 * replacing/spare pair of leaves (vdev_child_* helpers).
 */
#include "vdev_impl.h"

enum { MIRROR_OK = 0, MIRROR_EIO = 1, MIRROR_CKSUM = 2, MIRROR_SKIP = 3 };

/* What one read of the mirror found, side by side. */
typedef struct mirror_res {
	uint8_t  mr_bad[VDEV_MAX_CHILDREN];     /* MIRROR_* */
	bool     mr_lacking[VDEV_MAX_CHILDREN]; /* tried although it missed the txg */
	vdev_t  *mr_served[VDEV_MAX_CHILDREN];  /* the leaf that answered */
	int      mr_good;                       /* side that verified, or -1 */
} mirror_res_t;

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

/* A side that can serve I/O but misses some txgs makes the mirror DEGRADED. */
static bool
vdev_mirror_side_whole(const vdev_t *cvd)
{
	if (cvd->vdev_ops->vop_leaf)
		return (vdev_dtl_empty(cvd));
	return (cvd->vdev_state == VDEV_STATE_HEALTHY);
}

static void
vdev_mirror_state_change(vdev_t *vd)
{
	int usable = 0;
	bool partial = false;
	for (int c = 0; c < VDEV_NCHILD(vd); c++) {
		if (vdev_usable(VDEV_CHILD(vd, c))) {
			usable++;
			partial |= !vdev_mirror_side_whole(VDEV_CHILD(vd, c));
		}
	}
	if (usable == 0)
		vd->vdev_state = VDEV_STATE_CANT_OPEN;
	else if (usable < VDEV_NCHILD(vd) || partial)
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
	int ok = 0, n = VDEV_NCHILD(vd);
	uint8_t order[VDEV_MAX_CHILDREN];
	vdev_write_order(tarn_array_base(&vd->vdev_child), n, io, order);
	for (int i = 0; i < n; i++)
		if (vdev_child_write(VDEV_CHILD(vd, order[i]), io, io->vio_buf,
		    io->vio_size, io->vio_offset, io->vio_flags) == 0)
			ok++;
	return (ok > 0 ? 0 : SET_ERROR(EIO));
}

/*
 * After the read: charge the failed sides, heal them from vio_buf when a
 * side verified, settle the others (a scrub fills sides that missed the
 * block and checks the other leaves of pairs), and say how it ended.
 */
static int
vdev_mirror_finish(vdev_t *vd, vdev_io_t *io, mirror_res_t *mr)
{
	bool any_cksum = false;
	int good = mr->mr_good;
	for (int c = 0; c < VDEV_NCHILD(vd); c++) {
		vdev_t *cvd = VDEV_CHILD(vd, c);
		uint8_t bad = mr->mr_bad[c];
		if (bad == MIRROR_OK || bad == MIRROR_SKIP) {
			if (good >= 0)
				vdev_child_settle(cvd, io, io->vio_buf, io->vio_size,
				    io->vio_offset, bad == MIRROR_OK ? mr->mr_served[c] : NULL);
			continue;
		}
		if (!mr->mr_lacking[c]) {
			io->vio_bad_children++;
			if (bad == MIRROR_CKSUM) {
				vdev_stat_cksum(mr->mr_served[c], io->vio_flags);
				any_cksum = true;
			}
		}
		if (good < 0 || (io->vio_flags & VDEV_IO_NOHEAL) || cvd->vdev_readonly ||
		    !vdev_child_writable(cvd))
			continue;
		if (vdev_child_write(cvd, io, io->vio_buf, io->vio_size, io->vio_offset,
		    io->vio_flags | VDEV_IO_REPAIR) != 0)
			continue;
		vdev_stat_repair(mr->mr_served[c], io, io->vio_size);
		/*
		 * A probe (a speculative read, as of the intent log) that
		 * healed a side another one proved wrong: that side was
		 * damaged after all; count it as zfs counts a repair.
		 */
		if ((io->vio_flags & VDEV_IO_PROBE) && bad == MIRROR_CKSUM && !mr->mr_lacking[c])
			vdev_stat_cksum(mr->mr_served[c], 0);
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

/* Read side c into buf: MIRROR_OK, _EIO or _CKSUM. */
static int
vdev_mirror_read_side(vdev_t *vd, int c, vdev_io_t *io, void *buf, mirror_res_t *mr,
    bool lacking)
{
	vdev_t *cvd = VDEV_CHILD(vd, c);
	int flags = lacking ? io->vio_flags | VDEV_IO_PROBE : io->vio_flags;
	mr->mr_lacking[c] = lacking;
	if (vdev_child_read(cvd, io, buf, io->vio_size, io->vio_offset, flags, lacking,
	    &mr->mr_served[c]) != 0)
		return (MIRROR_EIO);
	if (io->vio_verify != NULL &&
	    io->vio_verify(io->vio_verify_arg, buf, io->vio_size) != 0)
		return (MIRROR_CKSUM);
	return (MIRROR_OK);
}

/*
 * When no side that holds the block verified: try, uncharged, the sides
 * that can be read but missed its txg (a DTL is conservative).
 */
static void
vdev_mirror_last_resort(vdev_t *vd, vdev_io_t *io, mirror_res_t *mr)
{
	for (int c = 0; c < VDEV_NCHILD(vd) && mr->mr_good < 0; c++) {
		vdev_t *cvd = VDEV_CHILD(vd, c);
		if (mr->mr_bad[c] != MIRROR_SKIP || !vdev_child_writable(cvd))
			continue;
		mr->mr_bad[c] = (uint8_t)vdev_mirror_read_side(vd, c, io, io->vio_buf, mr,
		    true);
		if (mr->mr_bad[c] == MIRROR_OK)
			mr->mr_good = c;
	}
}

static void
mirror_res_init(mirror_res_t *mr, int n)
{
	memset(mr->mr_bad, MIRROR_SKIP, (size_t)n);
	memset(mr->mr_lacking, 0, (size_t)n * sizeof (bool));
	mr->mr_good = -1;
}

/*
 * Scrub: every side is read and verified.  The first good side lands in
 * vio_buf, the others are read into a scratch buffer only to be judged
 * (a nested pair uses another scratch slot than a top-level mirror).
 */
static int
vdev_mirror_scrub(vdev_t *vd, vdev_io_t *io)
{
	mirror_res_t mr;
	uint8_t *alt = NULL;

	mirror_res_init(&mr, VDEV_NCHILD(vd));
	for (int c = 0; c < VDEV_NCHILD(vd); c++) {
		if (!vdev_child_readable(VDEV_CHILD(vd, c), io->vio_txg))
			continue;
		uint8_t *buf = io->vio_buf;
		if (mr.mr_good >= 0) {
			if (alt == NULL)
				alt = vdev_scratch(VDEV_SCRATCH_MIRROR, io->vio_size);
			buf = alt;
		}
		mr.mr_bad[c] = (uint8_t)vdev_mirror_read_side(vd, c, io, buf, &mr, false);
		if (mr.mr_bad[c] == MIRROR_OK && mr.mr_good < 0)
			mr.mr_good = c;
	}
	if (mr.mr_good < 0)
		vdev_mirror_last_resort(vd, io, &mr);
	return (vdev_mirror_finish(vd, io, &mr));
}

static int
vdev_mirror_read(vdev_t *vd, vdev_io_t *io)
{
	mirror_res_t mr;
	int n = VDEV_NCHILD(vd);

	if (io->vio_flags & VDEV_IO_SCRUB)
		return (vdev_mirror_scrub(vd, io));
	mirror_res_init(&mr, n);
	uint64_t *rotor = vd->vdev_tsd;
	int start = (int)(__atomic_fetch_add(rotor, 1, __ATOMIC_RELAXED) % (uint64_t)n);
	for (int i = 0; i < n && mr.mr_good < 0; i++) {
		int c = (start + i) % n;
		if (!vdev_child_readable(VDEV_CHILD(vd, c), io->vio_txg))
			continue;
		mr.mr_bad[c] = (uint8_t)vdev_mirror_read_side(vd, c, io, io->vio_buf, &mr,
		    false);
		if (mr.mr_bad[c] == MIRROR_OK)
			mr.mr_good = c;
	}
	if (mr.mr_good < 0)
		vdev_mirror_last_resort(vd, io, &mr);
	return (vdev_mirror_finish(vd, io, &mr));
}

/* Durable when one side at least flushed. */
static int
vdev_mirror_flush(vdev_t *vd)
{
	int errs[VDEV_MAX_CHILDREN];
	int ok = 0;
	vdev_children_flush(vd, errs);
	for (int c = 0; c < VDEV_NCHILD(vd); c++)
		if (errs[c] == 0)
			ok++;
	return (ok > 0 ? 0 : SET_ERROR(EIO));
}

#define MIRROR_OPS(name) { \
	.vop_open = vdev_mirror_open, \
	.vop_close = vdev_mirror_close, \
	.vop_asize = vdev_mirror_asize, \
	.vop_read = vdev_mirror_read, \
	.vop_write = vdev_mirror_write, \
	.vop_flush = vdev_mirror_flush, \
	.vop_state_change = vdev_mirror_state_change, \
	.vop_name = name, \
	.vop_leaf = false, \
}

const vdev_ops_t vdev_mirror_ops = MIRROR_OPS("mirror");
const vdev_ops_t vdev_replacing_ops = MIRROR_OPS("replacing");
const vdev_ops_t vdev_spare_ops = MIRROR_OPS("spare");
