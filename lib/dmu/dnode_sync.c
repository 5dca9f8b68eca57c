/*
 * dnode_sync.c — writing one txg's changes of an object (sync thread).
 *
 * Per object and pass: (1) prepare — apply allocation, block-size change,
 * the object free and the free ranges of the txg to the tree, and collect
 * the dirty level-0 records not yet written; (2) the level-0 blocks of all
 * objects are written in one parallel batch (dmu_objset.c); (3) finish —
 * install the new block pointers, grow the tree if needed, write the
 * changed indirect blocks level by level (each level one batch), put the
 * new root into the dnode and copy the dnode into its meta-dnode block.
 * Old blocks born before this txg are freed (deferred); blocks born in
 * this txg are rewritten in place by later passes (zio) or freed at once.
 * Everything here runs with dn_struct_rwlock held as writer while the tree
 * changes, so readers never see a half-updated tree.
 */
#include "dmu_impl.h"

#define EPB (1ULL << DN_EPB_SHIFT)

/* What bp counts for in dn_used / os_used (data bytes: zio_bp_dsize). */
static uint64_t
bp_dsize(const dnode_t *dn, const blkptr_t *bp)
{
	return (zio_bp_dsize(dn->dn_os->os_dp->dp_zio, bp));
}

static bool
buf_is_zero(const void *buf, size_t size)
{
	const uint64_t *w = buf;
	for (size_t i = 0; i < size / 8; i++)
		if (w[i] != 0)
			return (false);
	return (true);
}

/* Queue an indirect dbuf for writing in this sync (holds it). */
static void
dnode_sdirty_add(dnode_t *dn, dbuf_t *db)
{
	pthread_mutex_lock(&dn->dn_mtx);
	if (db->db_sync_dirty) {
		pthread_mutex_unlock(&dn->dn_mtx);
		return;
	}
	db->db_sync_dirty = true;
	db->db_holds++;
	pthread_mutex_unlock(&dn->dn_mtx);
	TARN_ARRAY_APPEND(&dn->dn_sdirty, dbuf_t *, db);
}

/*
 * The slot holding the bp of block (level, blkid), its parent marked for
 * writing.  Writer lock held.  NULL only on an I/O error reading a parent.
 */
static blkptr_t *
dnode_slot(dnode_t *dn, int level, uint64_t blkid, int *errp)
{
	int nlevels = dn->dn_phys.dn_nlevels;
	VERIFY3S(level, <, nlevels);
	if (level == nlevels - 1) {
		VERIFY3U(blkid, ==, 0);
		return (&dn->dn_phys.dn_blkptr[0]);
	}
	dbuf_t *parent = dbuf_hold(dn, (uint8_t)(level + 1), blkid >> DN_EPB_SHIFT, true);
	int err = dbuf_read(parent);
	if (err != 0) {
		dbuf_rele(parent);
		*errp = err;
		return (NULL);
	}
	dnode_sdirty_add(dn, parent);
	dbuf_rele(parent);   /* the sync-dirty hold keeps it */
	return (&((blkptr_t *)parent->db_data)[blkid & (EPB - 1)]);
}

/* Grow the tree until block id maxblkid fits.  Writer lock held. */
static void
dnode_grow(dnode_t *dn, uint64_t maxblkid)
{
	dnode_phys_t *p = &dn->dn_phys;
	while (p->dn_nlevels < DN_MAX_LEVELS &&
	    DN_EPB_SHIFT * (p->dn_nlevels - 1) < 64 &&
	    (maxblkid >> (DN_EPB_SHIFT * (p->dn_nlevels - 1))) != 0) {
		dbuf_t *top = dbuf_hold(dn, p->dn_nlevels, 0, true);
		pthread_mutex_lock(&dn->dn_mtx);
		VERIFY(top->db_state == DB_UNCACHED);
		top->db_data = dbuf_buf_alloc(top->db_size, true);
		top->db_state = DB_CACHED;
		((blkptr_t *)top->db_data)[0] = p->dn_blkptr[0];
		BP_ZERO(&p->dn_blkptr[0]);
		p->dn_nlevels++;
		pthread_mutex_unlock(&dn->dn_mtx);
		dnode_sdirty_add(dn, top);
		dbuf_rele(top);
	}
}

static void
dnode_free_bp(dnode_t *dn, uint64_t txg, blkptr_t *bp)
{
	if (BP_IS_HOLE(bp))
		return;
	uint64_t d = MIN(dn->dn_phys.dn_used, bp_dsize(dn, bp));
	dn->dn_phys.dn_used -= d;
	dmu_objset_used_delta(dn->dn_os, -(int64_t)d);
	dmu_objset_bp_delta(dn->dn_os, bp, -1);
	dmu_objset_free_bp(dn->dn_os, bp, txg);
	BP_ZERO(bp);
}

/* Free a whole subtree rooted at *slot (block (level, blkid)). */
static int
dnode_free_subtree(dnode_t *dn, uint64_t txg, blkptr_t *slot, int level, uint64_t blkid)
{
	int err = 0;
	if (BP_IS_HOLE(slot))
		return (0);
	if (level > 0) {
		dbuf_t *db = dbuf_hold(dn, (uint8_t)level, blkid, true);
		err = dbuf_read(db);
		if (err == 0) {
			blkptr_t *child = db->db_data;
			for (uint64_t i = 0; i < EPB; i++)
				if (!BP_IS_HOLE(&child[i]))
					(void) dnode_free_subtree(dn, txg, &child[i], level - 1,
					    blkid * EPB + i);
			/* now all holes: consistent with the parent slot */
			pthread_mutex_lock(&dn->dn_mtx);
			memset(db->db_data, 0, db->db_size);
			pthread_mutex_unlock(&dn->dn_mtx);
		}
		dbuf_rele(db);
		if (err != 0)
			return (err);   /* leak the subtree rather than guess */
	}
	dnode_free_bp(dn, txg, slot);
	return (0);
}

/* Free level-0 blocks [start, end) below *slot (block (level, blkid)). */
static int
dnode_free_range_at(dnode_t *dn, uint64_t txg, blkptr_t *slot, int level,
    uint64_t blkid, uint64_t start, uint64_t end)
{
	if (BP_IS_HOLE(slot))
		return (0);
	uint64_t span = level * DN_EPB_SHIFT >= 64 ? UINT64_MAX : 1ULL << (level * DN_EPB_SHIFT);
	uint64_t lo = blkid * span, hi = lo + span;
	if (end <= lo || start >= hi)
		return (0);
	if (start <= lo && end >= hi)
		return (dnode_free_subtree(dn, txg, slot, level, blkid));
	VERIFY3S(level, >, 0);
	dbuf_t *db = dbuf_hold(dn, (uint8_t)level, blkid, true);
	int err = dbuf_read(db);
	if (err == 0) {
		dnode_sdirty_add(dn, db);
		blkptr_t *child = db->db_data;
		uint64_t cspan = span / EPB;
		uint64_t first = start > lo ? (start - lo) / cspan : 0;
		uint64_t last = end >= hi ? EPB : DIV_ROUND_UP(end - lo, cspan);
		for (uint64_t i = first; i < last && err == 0; i++)
			err = dnode_free_range_at(dn, txg, &child[i], level - 1,
			    blkid * EPB + i, start, end);
	}
	dbuf_rele(db);
	return (err);
}

static int
dnode_free_blocks(dnode_t *dn, uint64_t txg, uint64_t start, uint64_t end)
{
	dnode_phys_t *p = &dn->dn_phys;
	if (p->dn_nlevels == 0)
		return (0);
	return (dnode_free_range_at(dn, txg, &p->dn_blkptr[0], p->dn_nlevels - 1, 0,
	    start, end));
}

static void
dnode_phys_init(dnode_t *dn, const dnode_txg_t *dt, uint64_t txg)
{
	dnode_phys_t *p = &dn->dn_phys;
	memset(p, 0, sizeof (*p));
	p->dn_type = (uint8_t)dt->dt_type;
	p->dn_bonustype = (uint8_t)dt->dt_bonustype;
	p->dn_bonuslen = (uint16_t)dt->dt_bonuslen;
	p->dn_indblkshift = DN_INDIRECT_SHIFT;
	p->dn_nlevels = 1;
	p->dn_nblkptr = 1;
	p->dn_datablkszsec = (uint16_t)(dt->dt_blksz >> SPA_MINBLOCKSHIFT);
	p->dn_gen = txg;
}

/*
 * Step 1: apply allocation, frees and size changes of txg to the tree and
 * collect the level-0 records not yet written, with their current bps.
 */
int
dnode_sync_prepare(dnode_t *dn, uint64_t txg, sync_item_t **itemsp, int *nitemsp)
{
	dnode_txg_t *dt = &dn->dn_txg[TXG_IDX(txg)];
	int err = 0;
	*itemsp = NULL;
	*nitemsp = 0;
	pthread_rwlock_wrlock(&dn->dn_struct_rwlock);
	pthread_mutex_lock(&dn->dn_mtx);
	bool freeing = dt->dt_free;
	if (dt->dt_alloc && !freeing) {
		dnode_phys_init(dn, dt, txg);
		dt->dt_alloc = false;
	}
	if (!freeing && dt->dt_blksz != 0 && dn->dn_phys.dn_type != DMU_OT_NONE)
		dn->dn_phys.dn_datablkszsec = (uint16_t)(dt->dt_blksz >> SPA_MINBLOCKSHIFT);
	int nr = (int)(tarn_array_len(&dt->dt_ranges) - dt->dt_ranges_applied);
	free_range_t *ranges = NULL;
	if (nr > 0) {
		ranges = tarn_alloc(sizeof (*ranges) * nr);
		memcpy(ranges, tarn_array_get(&dt->dt_ranges, dt->dt_ranges_applied),
		    sizeof (*ranges) * nr);
		dt->dt_ranges_applied = tarn_array_len(&dt->dt_ranges);
	}
	bool trunc = dt->dt_trunc && !dt->dt_trunc_applied;
	uint64_t trunc_blkid = dt->dt_trunc_blkid;
	dt->dt_trunc_applied = dt->dt_trunc;
	pthread_mutex_unlock(&dn->dn_mtx);

	if (freeing) {
		if (dn->dn_phys.dn_type != DMU_OT_NONE)
			err = dnode_free_blocks(dn, txg, 0, UINT64_MAX);
		memset(&dn->dn_phys, 0, sizeof (dn->dn_phys));
	} else {
		for (int i = 0; i < nr && err == 0; i++)
			err = dnode_free_blocks(dn, txg, ranges[i].fr_start, ranges[i].fr_end);
		if (trunc && err == 0) {
			err = dnode_free_blocks(dn, txg, trunc_blkid, UINT64_MAX);
			dn->dn_phys.dn_maxblkid = trunc_blkid > 0 ? trunc_blkid - 1 : 0;
		}
	}
	tarn_free(ranges);

	/* Collect the records to write. */
	pthread_mutex_lock(&dn->dn_mtx);
	tarn_array_t all = TARN_ARRAY_INIT(sync_item_t);
	for (dirty_record_t *dr = dt->dt_records; dr != NULL; dr = dr->dr_dnode_next) {
		if (dr->dr_written)
			continue;
		dr->dr_written = true;
		if (freeing)
			continue;
		sync_item_t *si = tarn_array_push(&all);
		si->si_blkid = dr->dr_dbuf->db_blkid;
		si->si_size = dr->dr_size;
		si->si_data = (dr->dr_hole || buf_is_zero(dr->dr_data, dr->dr_size)) ?
		    NULL : dr->dr_data;
		si->si_dr = dr;
		si->si_dn = dn;
		if (dr->dr_stored != NULL && si->si_data != NULL) {
			si->si_stored = dr->dr_stored;
			si->si_psize = dr->dr_psize;
			si->si_comp = dr->dr_comp;
			si->si_cksum = dr->dr_cksum;
		}
	}
	pthread_mutex_unlock(&dn->dn_mtx);
	size_t nall;
	sync_item_t *items = tarn_array_steal(&all, &nall);
	int n = (int)nall;
	for (int i = 0; i < n && err == 0; i++) {
		err = dnode_resolve_bp(dn, 0, items[i].si_blkid, &items[i].si_old);
		items[i].si_bp = items[i].si_old;
	}
	pthread_rwlock_unlock(&dn->dn_struct_rwlock);
	if (err != 0) {
		tarn_free(items);
		return (err);
	}
	*itemsp = items;
	*nitemsp = n;
	return (0);
}

/*
 * Write the given blocks of objects in one parallel batch: items[i] of
 * dns[i].  Holes and all-zero blocks become hole bps.
 */
int
dnode_sync_items_write(objset_t *os, uint64_t txg, int pass, dnode_t **dns,
    sync_item_t **items, int *nitems, int ndn)
{
	zio_batch_t *b = zio_batch_create(os->os_dp->dp_zio);
	for (int d = 0; d < ndn; d++) {
		dnode_t *dn = dns[d];
		for (int i = 0; i < nitems[d]; i++) {
			sync_item_t *si = &items[d][i];
			if (si->si_data == NULL) {
				BP_ZERO(&si->si_bp);
				continue;
			}
			zio_prop_t zp = dmu_objset_block_prop(os, &dn->dn_phys, 0,
			    dn->dn_phys.dn_type);
			if (si->si_stored != NULL) {
				zp.zp_compress = si->si_comp;
				zp.zp_psize = si->si_psize;
				if (si->si_cksum != 0)
					zp.zp_checksum = si->si_cksum;
				zio_batch_write(b, txg, &zp, si->si_stored, si->si_size,
				    &si->si_bp, true);
				continue;
			}
			zio_batch_write(b, txg, &zp, si->si_data, si->si_size, &si->si_bp, true);
		}
	}
	return (zio_batch_wait(b));
}

/* Install a new bp into *slot, freeing the old one as the rules say. */
static void
dnode_install(dnode_t *dn, uint64_t txg, blkptr_t *slot, const blkptr_t *old,
    const blkptr_t *newbp)
{
	if (!BP_IS_HOLE(old)) {
		uint64_t d = MIN(dn->dn_phys.dn_used, bp_dsize(dn, old));
		dn->dn_phys.dn_used -= d;
		dmu_objset_used_delta(dn->dn_os, -(int64_t)d);
		dmu_objset_bp_delta(dn->dn_os, old, -1);
		/* A block born in txg that zio did not reuse was freed by zio. */
		if (BP_IS_HOLE(newbp) || old->bp_phys_birth < txg)
			dmu_objset_free_bp(dn->dn_os, old, txg);
	}
	uint64_t add = bp_dsize(dn, newbp);
	dn->dn_phys.dn_used += add;
	dmu_objset_used_delta(dn->dn_os, (int64_t)add);
	dmu_objset_bp_delta(dn->dn_os, newbp, 1);
	*slot = *newbp;
}

/* Write the queued indirect blocks, lowest level first. */
static int
dnode_sync_indirects(dnode_t *dn, uint64_t txg, int pass)
{
	objset_t *os = dn->dn_os;
	for (int level = 1; level < DN_MAX_LEVELS; level++) {
		int n = 0;
		size_t nsd = tarn_array_len(&dn->dn_sdirty);
		dbuf_t **sd = tarn_array_base(&dn->dn_sdirty);
		dbuf_t **dbs = tarn_alloc(sizeof (dbuf_t *) * (nsd + 1));
		for (size_t i = 0; i < nsd; i++) {
			if (sd[i] != NULL && sd[i]->db_level == level) {
				dbs[n++] = sd[i];
				sd[i] = NULL;
			}
		}
		if (n == 0) {
			tarn_free(dbs);
			continue;
		}
		blkptr_t *old = tarn_alloc(sizeof (blkptr_t) * n);
		blkptr_t *nbp = tarn_alloc(sizeof (blkptr_t) * n);
		blkptr_t **slots = tarn_alloc(sizeof (blkptr_t *) * n);
		int err = 0;
		zio_batch_t *b = zio_batch_create(os->os_dp->dp_zio);
		for (int i = 0; i < n; i++) {
			dbuf_t *db = dbs[i];
			if (level >= dn->dn_phys.dn_nlevels) {
				/* orphaned by a shrink we never do; drop it */
				slots[i] = NULL;
				continue;
			}
			slots[i] = dnode_slot(dn, level, db->db_blkid, &err);
			if (slots[i] == NULL)
				break;
			old[i] = *slots[i];
			nbp[i] = old[i];
			if (buf_is_zero(db->db_data, db->db_size)) {
				BP_ZERO(&nbp[i]);
				continue;
			}
			zio_prop_t zp = dmu_objset_block_prop(os, &dn->dn_phys, (uint8_t)level,
			    dn->dn_phys.dn_type);
			zio_batch_write(b, txg, &zp, db->db_data, db->db_size, &nbp[i], true);
		}
		int werr = zio_batch_wait(b);
		if (err == 0)
			err = werr;
		for (int i = 0; i < n; i++) {
			dbuf_t *db = dbs[i];
			if (err == 0 && slots[i] != NULL) {
				if (!BP_IS_HOLE(&nbp[i])) {
					uint64_t fill = 0;
					const blkptr_t *c = db->db_data;
					for (uint64_t k = 0; k < EPB; k++)
						fill += BP_IS_HOLE(&c[k]) ? 0 : c[k].bp_fill;
					nbp[i].bp_fill = fill;
				}
				dnode_install(dn, txg, slots[i], &old[i], &nbp[i]);
			}
			pthread_mutex_lock(&dn->dn_mtx);
			db->db_sync_dirty = false;
			pthread_mutex_unlock(&dn->dn_mtx);
			dbuf_rele(db);
		}
		tarn_free(old);
		tarn_free(nbp);
		tarn_free(slots);
		tarn_free(dbs);
		if (err != 0)
			return (err);
	}
	tarn_array_clear(&dn->dn_sdirty);
	return (0);
}

/* Copy dn's phys into its slot in the meta-dnode block (queued for writing). */
static int
dnode_phys_to_meta(dnode_t *dn)
{
	objset_t *os = dn->dn_os;
	dnode_t *mdn = os->os_meta_dnode;
	uint64_t blkid = dn->dn_object / DN_DNODES_PER_BLOCK;
	pthread_rwlock_rdlock(&mdn->dn_struct_rwlock);
	dbuf_t *db = dbuf_hold(mdn, 0, blkid, true);
	int err = dbuf_read(db);
	if (err == 0) {
		pthread_mutex_lock(&mdn->dn_mtx);
		memcpy((uint8_t *)db->db_data + (dn->dn_object % DN_DNODES_PER_BLOCK) * DNODE_SIZE,
		    &dn->dn_phys, DNODE_SIZE);
		if (blkid > mdn->dn_maxblkid)
			mdn->dn_maxblkid = blkid;
		bool queue = !db->db_sync_dirty;
		if (queue) {
			db->db_sync_dirty = true;
			db->db_holds++;
		}
		pthread_mutex_unlock(&mdn->dn_mtx);
		if (queue) {
			TARN_ARRAY_APPEND(&os->os_meta_dirty, dbuf_t *, db);
		}
	}
	dbuf_rele(db);
	pthread_rwlock_unlock(&mdn->dn_struct_rwlock);
	return (err);
}

/*
 * Step 3: install the written level-0 bps, write indirect blocks, and put
 * the dnode into its meta-dnode block (not for the meta-dnode itself).
 */
int
dnode_sync_finish(dnode_t *dn, uint64_t txg, int pass, sync_item_t *items, int nitems)
{
	int err = 0;
	pthread_rwlock_wrlock(&dn->dn_struct_rwlock);
	uint64_t maxblk = 0;
	for (int i = 0; i < nitems; i++)
		if (items[i].si_blkid > maxblk)
			maxblk = items[i].si_blkid;
	if (nitems > 0)
		dnode_grow(dn, maxblk);
	for (int i = 0; i < nitems && err == 0; i++) {
		sync_item_t *si = &items[i];
		blkptr_t *slot = dnode_slot(dn, 0, si->si_blkid, &err);
		if (slot == NULL)
			break;
		if (!BP_IS_HOLE(&si->si_bp))
			si->si_bp.bp_fill = 1;
		dnode_install(dn, txg, slot, &si->si_old, &si->si_bp);
		if (!BP_IS_HOLE(&si->si_bp) && si->si_blkid > dn->dn_phys.dn_maxblkid)
			dn->dn_phys.dn_maxblkid = si->si_blkid;
	}
	if (err == 0)
		err = dnode_sync_indirects(dn, txg, pass);
	pthread_mutex_lock(&dn->dn_mtx);
	dnode_txg_t *dt = &dn->dn_txg[TXG_IDX(txg)];
	if (dt->dt_bonus_dirty && dn->dn_phys.dn_type != DMU_OT_NONE)
		memcpy(dn->dn_phys.dn_bonus, dt->dt_bonus, DN_MAX_BONUSLEN);
	pthread_mutex_unlock(&dn->dn_mtx);
	pthread_rwlock_unlock(&dn->dn_struct_rwlock);
	if (err == 0 && dn->dn_object != DMU_META_DNODE_OBJECT)
		err = dnode_phys_to_meta(dn);
	return (err);
}

/* After txg is on disk: drop its records and per-txg state, and the hold. */
void
dnode_sync_done(dnode_t *dn, uint64_t txg)
{
	objset_t *os = dn->dn_os;
	dnode_txg_t *dt = &dn->dn_txg[TXG_IDX(txg)];
	pthread_mutex_lock(&dn->dn_mtx);
	bool freed = dt->dt_free;
	dirty_record_t *dr = dt->dt_records;
	while (dr != NULL) {
		dirty_record_t *next = dr->dr_dnode_next;
		dbuf_sync_done(dr->dr_dbuf, dr);
		dr = next;
	}
	tarn_array_fini(&dt->dt_ranges);
	bool had = dt->dt_dirty;
	memset(dt, 0, sizeof (*dt));
	tarn_array_init(&dt->dt_ranges, sizeof (free_range_t));
	if (freed) {
		/* evict the dead object's clean dbufs before the number is reused */
		dbuf_t *db;
		DN_FOREACH_DBUF(dn, db) {
			if (db->db_holds == 0 && db->db_dirty == NULL && !db->db_sync_dirty &&
			    db->db_state != DB_READING) {
				dbuf_arc_forget(db);
				dbuf_evict_one(db);
			}
		}
		if (dn->dn_free_txg == txg)
			dn->dn_free_txg = 0;
	}
	pthread_mutex_unlock(&dn->dn_mtx);
	if (freed && !dn->dn_allocated) {
		tarn_mutex_lock(&os->os_alloc_lock, OS_ALLOC);
		TARN_ARRAY_APPEND(&os->os_free_objs, uint64_t, dn->dn_object);
		tarn_mutex_unlock(&os->os_alloc_lock);
	}
	if (had && dn->dn_object != DMU_META_DNODE_OBJECT)
		dnode_rele(dn);
}
