/*
 * dmu_send.c — the walk behind zfs send: every object and block of an
 * object set that changed after a txg, in object and offset order.
 *
 * Theory.  Copy on write marks what changed: a block is rewritten, and
 * every indirect block above it up to the root, whenever anything below
 * it changes, and each block pointer carries its birth txg.  So below a
 * block born at or before from_txg nothing changed, and the walk skips
 * it whole: an incremental walk costs what changed, not the object set.
 * (A full walk is the case from_txg = 0.)
 *
 * What the receiver must learn, and how the walk finds it:
 *  - Objects.  Any change to an object rewrites its dnode and so its
 *    dnode block.  For each changed dnode block the walk reports all 32
 *    slots: an object for each allocated dnode (its type, sizes, bonus
 *    and whether it was allocated after from_txg, i.e. is a new object
 *    even if its number was used before), a freed slot for each empty
 *    one.  A dnode block that became a hole (all its objects freed) is
 *    no block at all, but the indirect block above it changed, so holes
 *    under changed meta-dnode indirect blocks are reported as freed
 *    object ranges, and so is everything past the meta-dnode's end.
 *  - Data.  Within an object whose top block changed, level-0 blocks
 *    born after from_txg are reported with their data, read in batches
 *    (up to DMU_SEND_BATCH bytes in parallel).  Holes carry no birth
 *    txg, so a hole under a changed indirect block may or may not be new:
 *    it is reported as a freed range (freeing a hole is harmless).
 *    After each object, the range past its last block is reported freed
 *    (the object may have shrunk).
 *  - Data blocks of small objects (one level: the dnode points at the
 *    data) of one dnode block are read in one batch too, so a dataset of
 *    many small files is read in parallel, not one file at a time.
 *
 * Resume (send -t): objects below resume_obj are skipped, and of
 * resume_obj the data blocks below resume_off; everything reported is
 * idempotent, so the receiver may see a record twice.
 */
#include "dmu_impl.h"

#define DMU_SEND_BATCH (8 * MiB)

typedef struct send_walk {
	objset_t *sw_os;
	zio_ctx_t *sw_zc;
	uint64_t sw_from;
	int      sw_flags;
	uint64_t sw_robj, sw_roff;
	const dmu_send_cb_t *sw_cb;
	void    *sw_arg;
} send_walk_t;

static bool
sw_changed(const send_walk_t *sw, const blkptr_t *bp)
{
	return (!BP_IS_HOLE(bp) && bp->bp_birth > sw->sw_from);
}

/* Read a block into a fresh buffer (logical, or as stored with DMU_SEND_STORED). */
static int
sw_read(send_walk_t *sw, const blkptr_t *bp, bool stored, void **bufp)
{
	if (bp->bp_lsize == 0 || bp->bp_lsize > SPA_MAXBLOCKSIZE)
		return (SET_ERROR(ECKSUM));
	void *buf = tarn_alloc(bp->bp_lsize);
	int err = zio_read(sw->sw_zc, bp, buf, stored ? ZIO_FLAG_STORED : 0);
	if (err != 0) {
		tarn_free(buf);
		return (err);
	}
	*bufp = buf;
	return (0);
}

typedef struct sw_blk {
	uint64_t obj, blkid;
	blkptr_t bp;
	void    *data;
	int      err;
	bool     hole;              /* a free of one block, not a read */
} sw_blk_t;

/* Start reading the blocks of bs[0..n) (holes skipped); wait with sw_batch_emit. */
static zio_batch_t *
sw_batch_start(send_walk_t *sw, sw_blk_t *bs, int n)
{
	bool stored = (sw->sw_flags & DMU_SEND_STORED) != 0;
	zio_batch_t *b = zio_batch_create(sw->sw_zc);
	for (int i = 0; i < n; i++) {
		if (bs[i].hole)
			continue;
		bs[i].data = tarn_alloc(bs[i].bp.bp_lsize);
		zio_batch_read(b, &bs[i].bp, bs[i].data, stored ? ZIO_FLAG_STORED : 0, &bs[i].err);
	}
	return (b);
}

static int sw_free(send_walk_t *sw, uint64_t obj, uint32_t blksz, uint64_t first,
    uint64_t nblks);

/* Report one block that was read. */
static int
sw_report(send_walk_t *sw, sw_blk_t *one)
{
	const blkptr_t *bp = &one->bp;
	if (one->err != 0) {
		dmu_pool_report_error(sw->sw_os->os_dp, sw->sw_os, one->obj, 0, one->blkid,
		    one->err);
		return (one->err);
	}
	bool comp = (sw->sw_flags & DMU_SEND_STORED) && bp->bp_comp != ZIO_COMPRESS_OFF;
	dmu_send_block_t blk = {
		.dsb_obj = one->obj, .dsb_blkid = one->blkid, .dsb_lsize = bp->bp_lsize,
		.dsb_psize = comp ? bp->bp_psize : bp->bp_lsize,
		.dsb_comp = comp ? bp->bp_comp : ZIO_COMPRESS_OFF,
		.dsb_cksum = bp->bp_cksum, .dsb_data = one->data,
	};
	return (sw->sw_cb->dsc_block(sw->sw_arg, &blk));
}

/* Wait for a batch and report its blocks and holes in order (err: stop reporting). */
static int
sw_batch_emit(send_walk_t *sw, zio_batch_t *b, sw_blk_t *bs, int n, uint32_t blksz, int err)
{
	(void) zio_batch_wait(b);
	for (int i = 0; i < n; i++) {
		if (err == 0)
			err = bs[i].hole ? sw_free(sw, bs[i].obj, blksz, bs[i].blkid, 1) :
			    sw_report(sw, &bs[i]);
		tarn_free(bs[i].data);
		bs[i].data = NULL;
	}
	return (err);
}

/* Read blocks bs[0..n) in parallel and report them in order. */
static int
sw_emit_batch(send_walk_t *sw, sw_blk_t *bs, int n)
{
	return (sw_batch_emit(sw, sw_batch_start(sw, bs, n), bs, n, 0, 0));
}

/* Blocks per child of a block at level (of an object with blksz blocks). */
static uint64_t
sw_span(int level)
{
	return (level >= 7 ? UINT64_MAX >> 4 : 1ULL << (DN_EPB_SHIFT * level));
}

static int
sw_free(send_walk_t *sw, uint64_t obj, uint32_t blksz, uint64_t first, uint64_t nblks)
{
	uint64_t off = first * blksz;
	if (obj == sw->sw_robj && off < sw->sw_roff)
		return (0);
	uint64_t len = nblks > UINT64_MAX / blksz - first ? DMU_OBJECT_END : nblks * blksz;
	return (sw->sw_cb->dsc_free(sw->sw_arg, obj, off, len));
}

/*
 * The data below bp (level `level`, the first level-0 block it covers is
 * `first`), born after from_txg, of object obj.
 */
static int
sw_data(send_walk_t *sw, uint64_t obj, uint32_t blksz, const blkptr_t *bp, int level,
    uint64_t first)
{
	if (BP_IS_HOLE(bp))
		return (sw_free(sw, obj, blksz, first, sw_span(level)));
	if (!sw_changed(sw, bp))
		return (0);
	if (obj == sw->sw_robj && level < 7 &&
	    (first + sw_span(level)) * (uint64_t)blksz <= sw->sw_roff)
		return (0);
	if (level == 0) {
		if (obj == sw->sw_robj && first * (uint64_t)blksz < sw->sw_roff)
			return (0);
		sw_blk_t b = { .obj = obj, .blkid = first, .bp = *bp };
		return (sw_emit_batch(sw, &b, 1));
	}
	void *buf;
	int err = sw_read(sw, bp, false, &buf);
	if (err != 0) {
		dmu_pool_report_error(sw->sw_os->os_dp, sw->sw_os, obj, (uint8_t)level,
		    first / sw_span(level), err);
		return (err);
	}
	const blkptr_t *kids = buf;
	uint64_t nk = bp->bp_lsize / sizeof (blkptr_t), span = sw_span(level - 1);
	if (level > 1) {
		for (uint64_t i = 0; i < nk && err == 0; i++)
			err = sw_data(sw, obj, blksz, &kids[i], level - 1, first + i * span);
		tarn_free(buf);
		return (err);
	}
	/*
	 * Level 1: its data blocks and holes, in order, in chunks of up to
	 * DMU_SEND_BATCH bytes; the next chunk is read while this one is
	 * reported, so the disks stay busy while the stream is written.
	 */
	sw_blk_t *bs = tarn_alloc(sizeof (sw_blk_t) * nk);
	int *cut = tarn_alloc(sizeof (int) * (nk + 2));
	int n = 0, nc = 0;
	uint64_t bytes = 0;
	cut[nc++] = 0;
	for (uint64_t i = 0; i < nk; i++) {
		uint64_t blkid = first + i;
		bool hole = BP_IS_HOLE(&kids[i]);
		if (obj == sw->sw_robj && blkid * (uint64_t)blksz < sw->sw_roff)
			continue;
		if (!hole && !sw_changed(sw, &kids[i]))
			continue;
		bs[n++] = (sw_blk_t){ .obj = obj, .blkid = blkid, .bp = kids[i], .hole = hole };
		bytes += hole ? 0 : kids[i].bp_lsize;
		if (bytes >= DMU_SEND_BATCH) {
			cut[nc++] = n;
			bytes = 0;
		}
	}
	if (cut[nc - 1] != n)
		cut[nc++] = n;
	zio_batch_t *cur = nc > 1 ? sw_batch_start(sw, bs, cut[1]) : NULL;
	for (int c = 0; c + 1 < nc; c++) {
		zio_batch_t *next = c + 2 < nc ?
		    sw_batch_start(sw, bs + cut[c + 1], cut[c + 2] - cut[c + 1]) : NULL;
		err = sw_batch_emit(sw, cur, bs + cut[c], cut[c + 1] - cut[c], blksz, err);
		cur = next;
	}
	tarn_free(cut);
	tarn_free(bs);
	tarn_free(buf);
	return (err);
}

static uint32_t
sw_blksz(const dnode_phys_t *dnp)
{
	return (dnp->dn_datablkszsec != 0 ? (uint32_t)dnp->dn_datablkszsec << 9 : SPA_MAXBLOCKSIZE);
}

/* One allocated object: its record, its changed data, the free past its end. */
static int
sw_object(send_walk_t *sw, uint64_t obj, const dnode_phys_t *dnp, bool skip_data)
{
	uint32_t blksz = sw_blksz(dnp);
	dmu_send_object_t o = {
		.dso_obj = obj, .dso_type = dnp->dn_type, .dso_bonustype = dnp->dn_bonustype,
		.dso_nlevels = dnp->dn_nlevels, .dso_checksum = dnp->dn_checksum,
		.dso_compress = dnp->dn_compress, .dso_blksz = blksz,
		.dso_bonuslen = MIN(dnp->dn_bonuslen, DN_MAX_BONUSLEN),
		.dso_maxblkid = dnp->dn_maxblkid, .dso_bonus = dnp->dn_bonus,
		.dso_new = dnp->dn_gen > sw->sw_from,
	};
	if (dnp->dn_nlevels == 0 || dnp->dn_nlevels > DN_MAX_LEVELS)
		return (SET_ERROR(ECKSUM));
	int err = sw->sw_cb->dsc_object(sw->sw_arg, &o);
	if (err != 0)
		return (err);
	const blkptr_t *top = &dnp->dn_blkptr[0];
	if (!skip_data || BP_IS_HOLE(top))
		err = sw_data(sw, obj, blksz, top, dnp->dn_nlevels - 1, 0);
	if (err == 0 && !BP_IS_HOLE(top))
		err = sw_free(sw, obj, blksz, dnp->dn_maxblkid + 1, UINT64_MAX);
	return (err);
}

/* A dnode block (objects first .. first + 31): small objects' data in one batch. */
static int
sw_dnode_block(send_walk_t *sw, const dnode_phys_t *d, int nd, uint64_t first)
{
	sw_blk_t bs[DN_DNODES_PER_BLOCK];
	int slot[DN_DNODES_PER_BLOCK];
	int n = 0, err = 0;
	for (int i = 0; i < nd; i++) {
		uint64_t obj = first + (uint64_t)i;
		const blkptr_t *top = &d[i].dn_blkptr[0];
		slot[i] = -1;
		if (obj == 0 || obj < sw->sw_robj || d[i].dn_type == DMU_OT_NONE ||
		    d[i].dn_nlevels != 1 || !sw_changed(sw, top) || obj == sw->sw_robj)
			continue;
		slot[i] = n;
		bs[n++] = (sw_blk_t){ .obj = obj, .blkid = 0, .bp = *top };
	}
	/* read the batch first, report objects in order with their data */
	zio_batch_t *b = sw_batch_start(sw, bs, n);
	(void) zio_batch_wait(b);
	uint64_t fstart = 0, fcount = 0;
	for (int i = 0; i < nd && err == 0; i++) {
		uint64_t obj = first + (uint64_t)i;
		if (obj == 0 || obj < sw->sw_robj)
			continue;
		if (d[i].dn_type == DMU_OT_NONE) {
			if (fcount > 0 && fstart + fcount == obj) {
				fcount++;
			} else {
				if (fcount > 0)
					err = sw->sw_cb->dsc_freeobjects(sw->sw_arg, fstart, fcount);
				fstart = obj;
				fcount = 1;
			}
			continue;
		}
		if (fcount > 0) {
			err = sw->sw_cb->dsc_freeobjects(sw->sw_arg, fstart, fcount);
			fcount = 0;
			if (err != 0)
				break;
		}
		err = sw_object(sw, obj, &d[i], slot[i] >= 0);
		if (err == 0 && slot[i] >= 0)
			err = sw_report(sw, &bs[slot[i]]);
	}
	if (err == 0 && fcount > 0)
		err = sw->sw_cb->dsc_freeobjects(sw->sw_arg, fstart, fcount);
	for (int i = 0; i < n; i++)
		tarn_free(bs[i].data);
	return (err);
}

/* The meta-dnode's tree below bp (level, first dnode block id `first`). */
static int
sw_meta(send_walk_t *sw, const blkptr_t *bp, int level, uint64_t first)
{
	uint64_t span = sw_span(level);
	uint64_t objs = span > UINT64_MAX / DN_DNODES_PER_BLOCK ? UINT64_MAX :
	    span * DN_DNODES_PER_BLOCK;
	uint64_t fobj = first * DN_DNODES_PER_BLOCK;
	if (objs != UINT64_MAX && fobj + objs <= sw->sw_robj)
		return (0);
	if (BP_IS_HOLE(bp)) {
		uint64_t lo = MAX(fobj, MAX(sw->sw_robj, 1));
		uint64_t end = objs == UINT64_MAX || fobj + objs > DMU_MAX_OBJECT ?
		    DMU_MAX_OBJECT : fobj + objs;
		return (lo < end ? sw->sw_cb->dsc_freeobjects(sw->sw_arg, lo, end - lo) : 0);
	}
	if (!sw_changed(sw, bp))
		return (0);
	void *buf;
	int err = sw_read(sw, bp, false, &buf);
	if (err != 0) {
		dmu_pool_report_error(sw->sw_os->os_dp, sw->sw_os, 0, (uint8_t)level, first / span,
		    err);
		return (err);
	}
	if (level == 0) {
		err = sw_dnode_block(sw, buf, (int)(bp->bp_lsize / DNODE_SIZE), fobj);
	} else {
		const blkptr_t *kids = buf;
		uint64_t nk = bp->bp_lsize / sizeof (blkptr_t), cs = sw_span(level - 1);
		for (uint64_t i = 0; i < nk && err == 0; i++)
			err = sw_meta(sw, &kids[i], level - 1, first + i * cs);
	}
	tarn_free(buf);
	return (err);
}

int
dmu_send_walk(objset_t *os, uint64_t from_txg, int flags, uint64_t resume_obj,
    uint64_t resume_off, const dmu_send_cb_t *cb, void *arg)
{
	send_walk_t sw = { .sw_os = os, .sw_zc = os->os_dp->dp_zio, .sw_from = from_txg,
		.sw_flags = flags, .sw_robj = resume_obj, .sw_roff = resume_off,
		.sw_cb = cb, .sw_arg = arg };
	if (resume_obj == 0)
		sw.sw_robj = 0, sw.sw_roff = 0;
	blkptr_t root = os->os_rootbp;
	if (BP_IS_HOLE(&root))
		return (SET_ERROR(ENOENT));
	objset_phys_t *phys = tarn_alloc(OBJSET_PHYS_SIZE);
	int err = zio_read(sw.sw_zc, &root, phys, 0);
	const dnode_phys_t *mdn = &phys->os_meta_dnode;
	if (err == 0 && (mdn->dn_nlevels == 0 || mdn->dn_nlevels > DN_MAX_LEVELS))
		err = SET_ERROR(ECKSUM);
	if (err == 0)
		err = sw_meta(&sw, &mdn->dn_blkptr[0], mdn->dn_nlevels - 1, 0);
	/* objects past the meta-dnode's end */
	uint64_t end = BP_IS_HOLE(&mdn->dn_blkptr[0]) ? 1 :
	    (mdn->dn_maxblkid + 1) * DN_DNODES_PER_BLOCK;
	end = MAX(end, MAX(sw.sw_robj, 1));
	if (err == 0 && end < DMU_MAX_OBJECT)
		err = cb->dsc_freeobjects(arg, end, DMU_MAX_OBJECT - end);
	tarn_free(phys);
	return (err);
}
