/*
 * dmu_traverse.c — walk every block of an object set as it is on disk
 * (from its last synced root), reading and verifying each block: the
 * objset block, the meta-dnode's tree, each allocated dnode's tree, and
 * with TRAVERSE_DATA the level-0 data blocks too.  Blocks that fail to
 * read are counted and the walk goes on with the rest.  Used by import
 * verification, tests and (later) scrub.
 */
#include "dmu_impl.h"

typedef struct traverse {
	objset_t *tr_os;
	int       tr_flags;
	int       tr_zflags;
	dmu_traverse_fn_t tr_fn;
	void     *tr_arg;
	uint64_t  tr_errors;
	zio_ctx_t *tr_zc;
	uint64_t  tr_min_txg;
} traverse_t;

static int traverse_dnode(traverse_t *tr, uint64_t obj, const dnode_phys_t *dnp);

static int
traverse_bp(traverse_t *tr, uint64_t obj, const dnode_phys_t *dnp, const blkptr_t *bp,
    uint64_t blkid, bool is_meta)
{
	if (BP_IS_HOLE(bp) || bp->bp_birth < tr->tr_min_txg)
		return (0);
	int rc = tr->tr_fn ? tr->tr_fn(tr->tr_arg, tr->tr_os, obj, bp, blkid) : 0;
	if (rc != 0)
		return (rc);
	if (bp->bp_level == 0 && !is_meta && !(tr->tr_flags & TRAVERSE_DATA))
		return (0);
	if (bp->bp_lsize == 0 || bp->bp_lsize > SPA_MAXBLOCKSIZE) {
		tr->tr_errors++;
		return (0);
	}
	void *buf = tarn_alloc(bp->bp_lsize);
	int err = zio_read(tr->tr_zc, bp, buf, tr->tr_zflags);
	if (err != 0) {
		tr->tr_errors++;
		if (!(tr->tr_zflags & ZIO_FLAG_SPECULATIVE))
			dmu_pool_report_error(tr->tr_os->os_dp, tr->tr_os, obj, bp->bp_level,
			    blkid, err);
		tarn_free(buf);
		return (0);
	}
	if (bp->bp_level > 0) {
		const blkptr_t *child = buf;
		uint64_t n = bp->bp_lsize / sizeof (blkptr_t);
		for (uint64_t i = 0; i < n && rc == 0; i++)
			rc = traverse_bp(tr, obj, dnp, &child[i],
			    (blkid << DN_EPB_SHIFT) + i, is_meta);
	} else if (is_meta) {
		const dnode_phys_t *d = buf;
		uint64_t n = bp->bp_lsize / DNODE_SIZE;
		for (uint64_t i = 0; i < n && rc == 0; i++) {
			uint64_t o = blkid * DN_DNODES_PER_BLOCK + i;
			if (d[i].dn_type != DMU_OT_NONE && o != 0)
				rc = traverse_dnode(tr, o, &d[i]);
		}
	}
	tarn_free(buf);
	return (rc);
}

static int
traverse_dnode(traverse_t *tr, uint64_t obj, const dnode_phys_t *dnp)
{
	if (dnp->dn_nlevels == 0 || dnp->dn_nlevels > DN_MAX_LEVELS) {
		tr->tr_errors++;
		return (0);
	}
	return (traverse_bp(tr, obj, dnp, &dnp->dn_blkptr[0], 0, obj == 0));
}

int
dmu_traverse(objset_t *os, int flags, int zflags, uint64_t min_txg, dmu_traverse_fn_t fn,
    void *arg, uint64_t *errors)
{
	traverse_t tr = { .tr_os = os, .tr_flags = flags, .tr_zflags = zflags, .tr_fn = fn,
	    .tr_arg = arg, .tr_zc = os->os_dp->dp_zio, .tr_min_txg = min_txg };
	blkptr_t root = os->os_rootbp;
	int rc = 0;
	if (!BP_IS_HOLE(&root)) {
		rc = fn ? fn(arg, os, 0, &root, 0) : 0;
		objset_phys_t *phys = tarn_alloc(OBJSET_PHYS_SIZE);
		if (rc == 0) {
			int err = zio_read(tr.tr_zc, &root, phys, zflags);
			if (err != 0) {
				tr.tr_errors++;
				if (!(zflags & ZIO_FLAG_SPECULATIVE))
					dmu_pool_report_error(os->os_dp, os, 0, 0, 0, err);
			}
			else
				rc = traverse_dnode(&tr, 0, &phys->os_meta_dnode);
		}
		tarn_free(phys);
	}
	if (errors != NULL)
		*errors = tr.tr_errors;
	return (rc);
}

/* ---- a scan of every allocated dnode (dmu_object_scan) ---- */

typedef struct objscan {
	objset_t *os_;
	zio_ctx_t *zc;
	dmu_scan_fn_t fn;
	void *arg;
} objscan_t;

#define OBJSCAN_BATCH 64

/* The dnode blocks kids[0..n) (level 0 of the meta-dnode), read in parallel. */
static int
objscan_blocks(objscan_t *s, const blkptr_t *kids, uint64_t n, uint64_t first)
{
	int err = 0;
	for (uint64_t i = 0; i < n && err == 0; i += OBJSCAN_BATCH) {
		uint64_t m = MIN(OBJSCAN_BATCH, n - i);
		void *bufs[OBJSCAN_BATCH] = { NULL };
		int errs[OBJSCAN_BATCH] = { 0 };
		zio_batch_t *b = zio_batch_create(s->zc);
		for (uint64_t j = 0; j < m; j++) {
			const blkptr_t *bp = &kids[i + j];
			if (BP_IS_HOLE(bp) || bp->bp_lsize == 0 || bp->bp_lsize > SPA_MAXBLOCKSIZE)
				continue;
			bufs[j] = tarn_alloc(bp->bp_lsize);
			zio_batch_read(b, bp, bufs[j], 0, &errs[j]);
		}
		(void) zio_batch_wait(b);
		for (uint64_t j = 0; j < m; j++) {
			if (bufs[j] == NULL)
				continue;
			if (err == 0)
				err = errs[j];
			const dnode_phys_t *d = bufs[j];
			uint64_t nd = kids[i + j].bp_lsize / DNODE_SIZE;
			for (uint64_t k = 0; k < nd && err == 0; k++) {
				uint64_t obj = (first + i + j) * DN_DNODES_PER_BLOCK + k;
				if (obj == 0 || d[k].dn_type == DMU_OT_NONE)
					continue;
				err = s->fn(s->arg, obj, d[k].dn_type, d[k].dn_bonustype,
				    MIN(d[k].dn_bonuslen, DN_MAX_BONUSLEN), d[k].dn_bonus);
			}
			tarn_free(bufs[j]);
		}
	}
	return (err);
}

static int
objscan_tree(objscan_t *s, const blkptr_t *bp, int level, uint64_t first)
{
	if (BP_IS_HOLE(bp))
		return (0);
	if (level == 0)
		return (objscan_blocks(s, bp, 1, first));
	if (bp->bp_lsize == 0 || bp->bp_lsize > SPA_MAXBLOCKSIZE)
		return (SET_ERROR(ECKSUM));
	blkptr_t *kids = tarn_alloc(bp->bp_lsize);
	int err = zio_read(s->zc, bp, kids, 0);
	uint64_t nk = bp->bp_lsize / sizeof (blkptr_t);
	uint64_t span = 1ULL << (DN_EPB_SHIFT * (level - 1));
	if (err == 0 && level == 1)
		err = objscan_blocks(s, kids, nk, first);
	for (uint64_t i = 0; err == 0 && level > 1 && i < nk; i++)
		err = objscan_tree(s, &kids[i], level - 1, first + i * span);
	tarn_free(kids);
	return (err);
}

int
dmu_object_scan(objset_t *os, dmu_scan_fn_t fn, void *arg)
{
	dmu_pool_t *dp = os->os_dp;
	uint64_t open = txg_open_txg(dp);
	for (uint64_t t = txg_last_synced(dp) + 1; t <= open; t++)
		if (dmu_objset_is_dirty(os, t))
			return (SET_ERROR(EAGAIN));
	blkptr_t root = os->os_rootbp;
	if (BP_IS_HOLE(&root))
		return (SET_ERROR(EAGAIN));
	objscan_t s = { os, dp->dp_zio, fn, arg };
	objset_phys_t *phys = tarn_alloc(OBJSET_PHYS_SIZE);
	int err = zio_read(s.zc, &root, phys, 0);
	const dnode_phys_t *mdn = &phys->os_meta_dnode;
	if (err == 0 && (mdn->dn_nlevels == 0 || mdn->dn_nlevels > DN_MAX_LEVELS))
		err = SET_ERROR(ECKSUM);
	if (err == 0)
		err = objscan_tree(&s, &mdn->dn_blkptr[0], mdn->dn_nlevels - 1, 0);
	tarn_free(phys);
	return (err);
}
