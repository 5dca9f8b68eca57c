/*
 * dmu_objset.c — object sets: create, open, close, and the per-txg sync
 * of everything one object set has dirty (see dnode_sync.c for one
 * object).  An object set's root block is an objset_phys holding the
 * meta-dnode, whose level-0 blocks are arrays of 32 dnodes.
 */
#include "dmu_impl.h"

static bool
dmu_ot_is_metadata(dmu_object_type_t t)
{
	switch (t) {
	case DMU_OT_PLAIN_FILE:
	case DMU_OT_UINT8:
	case DMU_OT_TEST:
		return (false);
	default:
		return (true);
	}
}

/* The write properties of a block of an object of type at level. */
zio_prop_t
dmu_objset_block_prop(objset_t *os, const dnode_phys_t *dnp, uint8_t level,
    dmu_object_type_t type)
{
	const dmu_objset_props_t *p = &os->os_props;
	zio_prop_t zp;
	memset(&zp, 0, sizeof (zp));
	bool meta = level > 0 || dmu_ot_is_metadata(type);
	zp.zp_checksum = (dnp && dnp->dn_checksum) ? dnp->dn_checksum :
	    (p->osp_checksum ? p->osp_checksum : ZIO_CHECKSUM_DEFAULT);
	uint8_t copies = p->osp_copies ? p->osp_copies : 1;
	if (p->osp_is_mos)
		copies = 3;
	else if (meta)
		copies = (uint8_t)MIN(3, copies + 1);
	zp.zp_copies = copies;
	if (meta)
		zp.zp_compress = ZIO_COMPRESS_LZ4;
	else if (dnp && dnp->dn_compress)
		zp.zp_compress = dnp->dn_compress;
	else {
		zp.zp_compress = p->osp_compress ? p->osp_compress : ZIO_COMPRESS_OFF;
		zp.zp_level = p->osp_level;
	}
	zp.zp_type = (uint8_t)type;
	zp.zp_blevel = level;
	/* the special class: metadata, and small file blocks (zio_prop_wants_special) */
	zp.zp_special = meta || p->osp_is_mos;    /* all of the MOS is metadata */
	zp.zp_small_blocks = p->osp_special_small;
	return (zp);
}

static objset_t *
dmu_objset_alloc(dmu_pool_t *dp, dmu_objset_type_t type, const dmu_objset_props_t *props)
{
	objset_t *os = tarn_alloc(sizeof (*os));
	os->os_dp = dp;
	os->os_type = type;
	if (props != NULL) {
		os->os_props = *props;
		os->os_primarycache = props->osp_primarycache;
		os->os_secondarycache = props->osp_secondarycache;
		os->os_logbias = props->osp_logbias;
	}
	pthread_mutex_init(&os->os_lock, NULL);
	tarn_hash_init(&os->os_dnodes, &dnode_table_conf);
	for (int t = 0; t < TXG_SIZE; t++)
		tarn_array_init(&os->os_synced[t], sizeof (dnode_t *));
	tarn_array_init(&os->os_meta_dirty, sizeof (dbuf_t *));
	tarn_array_init(&os->os_free_objs, sizeof (uint64_t));
	pthread_mutex_init(&os->os_alloc_lock, NULL);
	pthread_mutex_init(&os->os_dirty_lock, NULL);
	pthread_mutex_init(&os->os_ra_lock, NULL);
	pthread_cond_init(&os->os_ra_cv, NULL);
	pthread_mutex_init(&os->os_dead_lock, NULL);
	tarn_array_init(&os->os_dead, sizeof (blkptr_t));
	return (os);
}

static void
dmu_objset_register(objset_t *os)
{
	dmu_pool_t *dp = os->os_dp;
	tarn_mutex_lock(&dp->dp_lock, TXG);
	os->os_next = dp->dp_objsets;
	dp->dp_objsets = os;
	tarn_mutex_unlock(&dp->dp_lock);
}

int
dmu_objset_create(dmu_pool_t *dp, dmu_objset_type_t type, const dmu_objset_props_t *props,
    objset_t **osp)
{
	objset_t *os = dmu_objset_alloc(dp, type, props);
	dnode_phys_t mp;
	memset(&mp, 0, sizeof (mp));
	mp.dn_type = DMU_OT_DNODE;
	mp.dn_indblkshift = DN_INDIRECT_SHIFT;
	mp.dn_nlevels = 1;
	mp.dn_nblkptr = 1;
	mp.dn_datablkszsec = DNODE_BLOCK_SIZE >> SPA_MINBLOCKSHIFT;
	os->os_meta_dnode = dnode_create(os, DMU_META_DNODE_OBJECT, &mp);
	os->os_obj_next = 1;
	os->os_new = true;
	dmu_objset_register(os);
	dmu_pool_dirty_add(dp, txg_open_txg(dp), DNODE_SIZE);
	*osp = os;
	return (0);
}

int
dmu_objset_open(dmu_pool_t *dp, const blkptr_t *bp, const dmu_objset_props_t *props,
    objset_t **osp)
{
	if (BP_IS_HOLE(bp) || bp->bp_lsize != OBJSET_PHYS_SIZE || bp->bp_level != 0 ||
	    bp->bp_type != DMU_OT_OBJSET)
		return (SET_ERROR(EINVAL));
	objset_phys_t *osp_buf = tarn_alloc(OBJSET_PHYS_SIZE);
	int err = zio_read(dp->dp_zio, bp, osp_buf, 0);
	if (err != 0) {
		tarn_free(osp_buf);
		return (err);
	}
	const dnode_phys_t *m = &osp_buf->os_meta_dnode;
	if (m->dn_type != DMU_OT_DNODE || m->dn_nlevels == 0 || m->dn_nlevels > DN_MAX_LEVELS ||
	    dnode_phys_blksz(m) != DNODE_BLOCK_SIZE) {
		tarn_free(osp_buf);
		return (SET_ERROR(EIO));
	}
	objset_t *os = dmu_objset_alloc(dp, (dmu_objset_type_t)osp_buf->os_type, props);
	os->os_meta_dnode = dnode_create(os, DMU_META_DNODE_OBJECT, m);
	os->os_rootbp = *bp;
	os->os_obj_next = (m->dn_maxblkid + 1) * DN_DNODES_PER_BLOCK;
	os->os_used = osp_buf->os_used;
	os->os_lsize = osp_buf->os_lsize;
	os->os_psize = osp_buf->os_psize;
	os->os_zil_header = osp_buf->os_zil_header;
	tarn_free(osp_buf);
	dmu_objset_register(os);
	*osp = os;
	return (0);
}

void
dmu_objset_close(objset_t *os)
{
	dmu_pool_t *dp = os->os_dp;
	/* read-ahead tasks hold dnodes of os and use the pool's zio context */
	dmu_readahead_drain(os);
	tarn_mutex_lock(&dp->dp_lock, TXG);
	objset_t **pp = &dp->dp_objsets;
	while (*pp != os)
		pp = &(*pp)->os_next;
	*pp = os->os_next;
	tarn_mutex_unlock(&dp->dp_lock);

	dnode_t *dn;
	TARN_HASH_FOREACH(&os->os_dnodes, dn, dn_hash_link)
		dnode_destroy(dn);
	dnode_destroy(os->os_meta_dnode);
	tarn_hash_fini(&os->os_dnodes);
	for (int t = 0; t < TXG_SIZE; t++)
		tarn_array_fini(&os->os_synced[t]);
	tarn_array_fini(&os->os_meta_dirty);
	tarn_array_fini(&os->os_free_objs);
	pthread_mutex_destroy(&os->os_lock);
	pthread_mutex_destroy(&os->os_alloc_lock);
	pthread_mutex_destroy(&os->os_dirty_lock);
	pthread_mutex_destroy(&os->os_ra_lock);
	pthread_cond_destroy(&os->os_ra_cv);
	/*
	 * Taken after every sync that succeeded; a failed one's (the pool
	 * suspended) never reached disk and go with it.
	 */
	ASSERT(tarn_array_len(&os->os_dead) == 0 || dmu_pool_suspended(dp));
	tarn_array_fini(&os->os_dead);
	pthread_mutex_destroy(&os->os_dead_lock);
	tarn_free(os);
}

dmu_objset_type_t
dmu_objset_type(objset_t *os)
{
	return (os->os_type);
}

bool
dmu_objset_caches_data(objset_t *os)
{
	return (__atomic_load_n(&os->os_primarycache, __ATOMIC_RELAXED) == DMU_CACHE_ALL);
}

dmu_pool_t *
dmu_objset_pool(objset_t *os)
{
	return (os->os_dp);
}

void
dmu_objset_set_props(objset_t *os, const dmu_objset_props_t *props)
{
	os->os_props = *props;
	__atomic_store_n(&os->os_primarycache, props->osp_primarycache, __ATOMIC_RELAXED);
	__atomic_store_n(&os->os_secondarycache, props->osp_secondarycache, __ATOMIC_RELAXED);
	__atomic_store_n(&os->os_logbias, props->osp_logbias, __ATOMIC_RELAXED);
}

int
dmu_objset_logbias(objset_t *os)
{
	return (__atomic_load_n(&os->os_logbias, __ATOMIC_RELAXED));
}

bool
dmu_objset_is_dirty(objset_t *os, uint64_t txg)
{
	tarn_mutex_lock(&os->os_dirty_lock, OS_DIRTY);
	bool d = os->os_dirty[TXG_IDX(txg)] != NULL || os->os_new ||
	    os->os_zil_dirty[TXG_IDX(txg)];
	tarn_mutex_unlock(&os->os_dirty_lock);
	return (d);
}

/* Write the meta-dnode blocks that this pass changed. */
static int
dmu_objset_sync_meta(objset_t *os, uint64_t txg, int pass)
{
	dnode_t *mdn = os->os_meta_dnode;
	int n = (int)tarn_array_len(&os->os_meta_dirty);
	if (n == 0)
		return (0);
	sync_item_t *items = tarn_alloc(sizeof (*items) * n);
	int err = 0;
	pthread_rwlock_rdlock(&mdn->dn_struct_rwlock);
	for (int i = 0; i < n; i++) {
		dbuf_t *db = TARN_ARRAY_AT(&os->os_meta_dirty, dbuf_t *, i);
		items[i].si_blkid = db->db_blkid;
		items[i].si_size = db->db_size;
		items[i].si_db = db;
		items[i].si_dn = mdn;
		items[i].si_data = db->db_data;
		const uint64_t *w = db->db_data;
		bool zero = true;
		for (uint32_t k = 0; k < db->db_size / 8 && zero; k++)
			zero = w[k] == 0;
		if (zero)
			items[i].si_data = NULL;
		if (err == 0)
			err = dnode_resolve_bp(mdn, 0, db->db_blkid, &items[i].si_old);
		items[i].si_bp = items[i].si_old;
	}
	pthread_rwlock_unlock(&mdn->dn_struct_rwlock);
	tarn_array_clear(&os->os_meta_dirty);
	if (err == 0)
		err = dnode_sync_items_write(os, txg, pass, &mdn, &items, &n, 1);
	if (err == 0)
		err = dnode_sync_finish(mdn, txg, pass, items, n);
	for (int i = 0; i < n; i++) {
		dbuf_t *db = items[i].si_db;
		pthread_mutex_lock(&mdn->dn_mtx);
		db->db_sync_dirty = false;
		pthread_mutex_unlock(&mdn->dn_mtx);
		dbuf_rele(db);
	}
	tarn_free(items);
	return (err);
}

static void
os_synced_add(objset_t *os, uint64_t txg, dnode_t *dn)
{
	int t = TXG_IDX(txg);
	TARN_ARRAY_APPEND(&os->os_synced[t], dnode_t *, dn);
}

int
dmu_objset_sync(objset_t *os, uint64_t txg, int pass, blkptr_t *bp)
{
	int t = TXG_IDX(txg);
	tarn_mutex_lock(&os->os_dirty_lock, OS_DIRTY);
	dnode_t *list = os->os_dirty[t];
	os->os_dirty[t] = NULL;
	bool was_new = os->os_new || os->os_zil_dirty[t];
	os->os_new = false;
	os->os_zil_dirty[t] = false;
	zil_header_t zh = os->os_zil_header;
	int ndn = 0;
	for (dnode_t *dn = list; dn != NULL; dn = dn->dn_txg[t].dt_dirty_next)
		ndn++;
	dnode_t **dns = tarn_alloc(sizeof (dnode_t *) * (ndn + 1));
	int i = 0;
	for (dnode_t *dn = list; dn != NULL; dn = dn->dn_txg[t].dt_dirty_next)
		dns[i++] = dn;
	for (i = 0; i < ndn; i++) {
		dnode_txg_t *dt = &dns[i]->dn_txg[t];
		dt->dt_listed = false;
		dt->dt_dirty_next = NULL;
		if (!dt->dt_in_synced) {
			dt->dt_in_synced = true;
			os_synced_add(os, txg, dns[i]);
		}
	}
	tarn_mutex_unlock(&os->os_dirty_lock);
	if (ndn == 0 && !was_new && tarn_array_len(&os->os_meta_dirty) == 0) {
		tarn_free(dns);
		return (0);
	}

	sync_item_t **items = tarn_alloc(sizeof (sync_item_t *) * (ndn + 1));
	int *nitems = tarn_alloc(sizeof (int) * (ndn + 1));
	int err = 0;
	for (i = 0; i < ndn && err == 0; i++)
		err = dnode_sync_prepare(dns[i], txg, &items[i], &nitems[i]);
	if (err == 0)
		err = dnode_sync_items_write(os, txg, pass, dns, items, nitems, ndn);
	for (i = 0; i < ndn && err == 0; i++)
		err = dnode_sync_finish(dns[i], txg, pass, items[i], nitems[i]);
	for (i = 0; i < ndn; i++)
		tarn_free(items[i]);
	tarn_free(items);
	tarn_free(nitems);
	tarn_free(dns);
	if (err == 0)
		err = dmu_objset_sync_meta(os, txg, pass);
	if (err != 0)
		return (err);

	/* The root: objset_phys with the meta-dnode. */
	objset_phys_t *phys = tarn_alloc_aligned(OBJSET_PHYS_SIZE);
	pthread_mutex_lock(&os->os_meta_dnode->dn_mtx);
	phys->os_meta_dnode = os->os_meta_dnode->dn_phys;
	pthread_mutex_unlock(&os->os_meta_dnode->dn_mtx);
	phys->os_type = os->os_type;
	phys->os_used = __atomic_load_n(&os->os_used, __ATOMIC_RELAXED);
	phys->os_lsize = __atomic_load_n(&os->os_lsize, __ATOMIC_RELAXED);
	phys->os_psize = __atomic_load_n(&os->os_psize, __ATOMIC_RELAXED);
	phys->os_zil_header = zh;
	zio_prop_t zp = dmu_objset_block_prop(os, NULL, 0, DMU_OT_OBJSET);
	zp.zp_compress = ZIO_COMPRESS_OFF;
	blkptr_t old = os->os_rootbp, nbp = old;
	err = zio_write(os->os_dp->dp_zio, txg, &zp, phys, OBJSET_PHYS_SIZE, &nbp, true);
	tarn_free(phys);
	if (err != 0)
		return (err);
	if (!BP_IS_HOLE(&old) && old.bp_phys_birth < txg)
		zio_free(os->os_dp->dp_zio, &old, txg);
	nbp.bp_fill = 1;
	os->os_rootbp = nbp;
	*bp = nbp;
	return (0);
}

void
dmu_objset_sync_done(objset_t *os, uint64_t txg)
{
	int t = TXG_IDX(txg);
	size_t n;
	dnode_t **dns = tarn_array_steal(&os->os_synced[t], &n);
	for (size_t i = 0; i < n; i++)
		dnode_sync_done(dns[i], txg);
	tarn_free(dns);
	dnode_sync_done(os->os_meta_dnode, txg);
	dbuf_cache_evict(os->os_dp);
}

/* Location of the objset as last synced (for the pool layer). */
const blkptr_t *
dmu_objset_rootbp(objset_t *os)
{
	return (&os->os_rootbp);
}

/* Add sign * v to *ctr, not below 0 (counts from before a feature may lack blocks). */
static void
objset_ctr_add(uint64_t *ctr, uint64_t v, int sign)
{
	if (sign > 0) {
		__atomic_add_fetch(ctr, v, __ATOMIC_RELAXED);
		return;
	}
	uint64_t cur = __atomic_load_n(ctr, __ATOMIC_RELAXED), nv;
	do {
		nv = cur > v ? cur - v : 0;
	} while (!__atomic_compare_exchange_n(ctr, &cur, nv, false, __ATOMIC_RELAXED,
	    __ATOMIC_RELAXED));
}

/*
 * Space accounting for datasets (added for lib/dsl): every change of a
 * dnode's dn_used in syncing context is applied to os_used too, so the
 * object set knows its allocated bytes without walking its objects.
 */
void
dmu_objset_used_delta(objset_t *os, int64_t delta)
{
	objset_ctr_add(&os->os_used, delta >= 0 ? (uint64_t)delta : -(uint64_t)delta,
	    delta >= 0 ? 1 : -1);
}

void
dmu_objset_bp_delta(objset_t *os, const blkptr_t *bp, int sign)
{
	if (BP_IS_HOLE(bp))
		return;
	/* metadata counts what it takes, as zfs counts it (BP_GET_UCSIZE) */
	bool meta = bp->bp_level > 0 || dmu_ot_is_metadata(bp->bp_type);
	objset_ctr_add(&os->os_lsize, meta ? bp->bp_psize : bp->bp_lsize, sign);
	objset_ctr_add(&os->os_psize, bp->bp_psize, sign);
}

void
dmu_objset_space(objset_t *os, uint64_t *usedp)
{
	*usedp = __atomic_load_n(&os->os_used, __ATOMIC_RELAXED);
}

void
dmu_objset_logical(objset_t *os, uint64_t *lsizep, uint64_t *psizep)
{
	*lsizep = __atomic_load_n(&os->os_lsize, __ATOMIC_RELAXED);
	*psizep = __atomic_load_n(&os->os_psize, __ATOMIC_RELAXED);
}

/*
 * The intent log's header (lib/zil), kept with the objset_phys.  A new
 * header is written by the sync of txg: set it in syncing context of txg
 * before the object sets are synced, or in open context while holding txg
 * open (a tx assigned to it).
 */
void
dmu_objset_zil_header(objset_t *os, zil_header_t *out)
{
	tarn_mutex_lock(&os->os_dirty_lock, OS_DIRTY);
	*out = os->os_zil_header;
	tarn_mutex_unlock(&os->os_dirty_lock);
}

void
dmu_objset_set_zil_header(objset_t *os, const zil_header_t *zh, uint64_t txg)
{
	tarn_mutex_lock(&os->os_dirty_lock, OS_DIRTY);
	os->os_zil_header = *zh;
	os->os_zil_dirty[TXG_IDX(txg)] = true;
	tarn_mutex_unlock(&os->os_dirty_lock);
}

/* ---- snapshots: blocks the object set frees but a snapshot still holds ---- */

void
dmu_objset_free_bp(objset_t *os, const blkptr_t *bp, uint64_t txg)
{
	uint64_t snap = __atomic_load_n(&os->os_prev_snap_txg, __ATOMIC_ACQUIRE);
	if (snap == 0 || bp->bp_birth > snap) {
		zio_free(os->os_dp->dp_zio, bp, txg);
		return;
	}
	pthread_mutex_lock(&os->os_dead_lock);
	*(blkptr_t *)tarn_array_push(&os->os_dead) = *bp;
	pthread_mutex_unlock(&os->os_dead_lock);
}

void
dmu_objset_set_prev_snap_txg(objset_t *os, uint64_t txg)
{
	__atomic_store_n(&os->os_prev_snap_txg, txg, __ATOMIC_RELEASE);
}

uint64_t
dmu_objset_prev_snap_txg(objset_t *os)
{
	return (__atomic_load_n(&os->os_prev_snap_txg, __ATOMIC_ACQUIRE));
}

size_t
dmu_objset_dead_take(objset_t *os, blkptr_t **bps)
{
	size_t n;
	pthread_mutex_lock(&os->os_dead_lock);
	*bps = tarn_array_steal(&os->os_dead, &n);
	pthread_mutex_unlock(&os->os_dead_lock);
	return (n);
}

int
dmu_objset_copy_root(dmu_pool_t *dp, const blkptr_t *src, uint64_t txg, blkptr_t *out,
    uint64_t space[3])
{
	if (BP_IS_HOLE(src) || src->bp_lsize != OBJSET_PHYS_SIZE || src->bp_type != DMU_OT_OBJSET)
		return (SET_ERROR(EINVAL));
	objset_phys_t *phys = tarn_alloc_aligned(OBJSET_PHYS_SIZE);
	int err = zio_read(dp->dp_zio, src, phys, 0);
	if (err == 0) {
		if (space != NULL) {
			space[0] = phys->os_used;
			space[1] = phys->os_lsize;
			space[2] = phys->os_psize;
		}
		memset(&phys->os_zil_header, 0, sizeof (phys->os_zil_header));
		zio_prop_t zp;
		memset(&zp, 0, sizeof (zp));
		zp.zp_checksum = src->bp_cksum;
		zp.zp_compress = ZIO_COMPRESS_OFF;
		zp.zp_copies = src->bp_ndvas ? src->bp_ndvas : 1;
		zp.zp_type = DMU_OT_OBJSET;
		zp.zp_special = true;
		BP_ZERO(out);
		err = zio_write(dp->dp_zio, txg, &zp, phys, OBJSET_PHYS_SIZE, out, true);
		if (err == 0)
			out->bp_fill = 1;
	}
	tarn_free(phys);
	return (err);
}
