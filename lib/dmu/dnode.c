/*
 * dnode.c — in-memory objects (dnodes): the per-objset table, loading a
 * dnode from its meta-dnode block, dirtying, and resolving a block id to
 * its block pointer through the indirect tree.  Writing a dnode's changes
 * at sync time is in dnode_sync.c.
 */
#include "dmu_impl.h"

/*
 * Dnodes kept in an objset's table before idle ones are evicted: at most
 * DN_TABLE_MAX_IDLE, and their memory (a dnode_t is ~2.8 KiB, which the
 * ARC does not count) at most arc_max / DN_TABLE_ARC_DIV, but never fewer
 * than DN_TABLE_MIN.  (A fixed 100,000 was up to 270 MiB a dataset, more
 * than a small arc_max itself.)  An evicted dnode is loaded again from
 * its dnode block, which the ARC keeps.
 */
#define DN_TABLE_MAX_IDLE 100000
#define DN_TABLE_ARC_DIV  16
#define DN_TABLE_MIN      256

static inline uint32_t
dn_hash(uint64_t obj)
{
	return ((uint32_t)((obj * 0x9E3779B97F4A7C15ULL) >> 32));
}

static uint32_t
dn_link_hash(const tarn_hlink_t *l)
{
	return (dn_hash(TARN_HASH_ENTRY(l, dnode_t, dn_hash_link)->dn_object));
}

const tarn_hash_conf_t dnode_table_conf = {
	.thc_hash = dn_link_hash, .thc_min_buckets = 64, .thc_load = 1,
};

uint32_t
dnode_phys_blksz(const dnode_phys_t *dnp)
{
	return ((uint32_t)dnp->dn_datablkszsec << SPA_MINBLOCKSHIFT);
}

void
dnode_open_view_from_phys(dnode_t *dn)
{
	const dnode_phys_t *p = &dn->dn_phys;
	dn->dn_allocated = p->dn_type != DMU_OT_NONE;
	dn->dn_type = p->dn_type;
	dn->dn_bonustype = p->dn_bonustype;
	dn->dn_blksz = dnode_phys_blksz(p);
	if (dn->dn_blksz == 0)
		dn->dn_blksz = SPA_MINBLOCKSIZE;
	dn->dn_bonuslen = p->dn_bonuslen;
	dn->dn_maxblkid = p->dn_maxblkid;
	memcpy(dn->dn_bonus, p->dn_bonus, DN_MAX_BONUSLEN);
}

dnode_t *
dnode_create(objset_t *os, uint64_t obj, const dnode_phys_t *phys)
{
	dnode_t *dn = tarn_alloc(sizeof (*dn));
	dn->dn_os = os;
	dn->dn_object = obj;
	tarn_hash_init(&dn->dn_dbufs, &dbuf_table_conf);
	tarn_array_init(&dn->dn_sdirty, sizeof (dbuf_t *));
	for (int i = 0; i < TXG_SIZE; i++)
		tarn_array_init(&dn->dn_txg[i].dt_ranges, sizeof (free_range_t));
	pthread_rwlock_init(&dn->dn_struct_rwlock, NULL);
	pthread_mutex_init(&dn->dn_mtx, NULL);
	pthread_cond_init(&dn->dn_cv, NULL);
	if (phys != NULL)
		dn->dn_phys = *phys;
	dnode_open_view_from_phys(dn);
	return (dn);
}

void
dnode_destroy(dnode_t *dn)
{
	pthread_mutex_lock(&dn->dn_mtx);
	dbuf_destroy_all(dn);
	pthread_mutex_unlock(&dn->dn_mtx);
	for (int i = 0; i < TXG_SIZE; i++)
		tarn_array_fini(&dn->dn_txg[i].dt_ranges);
	tarn_array_fini(&dn->dn_sdirty);
	pthread_rwlock_destroy(&dn->dn_struct_rwlock);
	pthread_mutex_destroy(&dn->dn_mtx);
	pthread_cond_destroy(&dn->dn_cv);
	tarn_free(dn);
}

static dnode_t *
dn_table_find(objset_t *os, uint64_t obj)
{
	dnode_t *dn;
	TARN_HASH_FIND(&os->os_dnodes, dn_hash(obj), dn, dn_hash_link, dn->dn_object == obj);
	return (dn);
}

static void
dn_table_insert(objset_t *os, dnode_t *dn)
{
	tarn_hash_insert(&os->os_dnodes, dn_hash(dn->dn_object), &dn->dn_hash_link);
}

static void
dn_table_remove(objset_t *os, dnode_t *dn)
{
	tarn_hash_remove(&os->os_dnodes, dn_hash(dn->dn_object), &dn->dn_hash_link);
}

static void
dn_lru_unlink(objset_t *os, dnode_t *dn)
{
	if (!dn->dn_in_lru)
		return;
	if (dn->dn_lru_prev) dn->dn_lru_prev->dn_lru_next = dn->dn_lru_next;
	else os->os_dn_lru_head = dn->dn_lru_next;
	if (dn->dn_lru_next) dn->dn_lru_next->dn_lru_prev = dn->dn_lru_prev;
	else os->os_dn_lru_tail = dn->dn_lru_prev;
	dn->dn_lru_prev = dn->dn_lru_next = NULL;
	dn->dn_in_lru = false;
}

/* Read object obj's dnode_phys from its meta-dnode block. */
static int
dnode_load_phys(objset_t *os, uint64_t obj, dnode_phys_t *out)
{
	dnode_t *mdn = os->os_meta_dnode;
	uint64_t blkid = obj / DN_DNODES_PER_BLOCK;
	pthread_rwlock_rdlock(&mdn->dn_struct_rwlock);
	dbuf_t *db = dbuf_hold(mdn, 0, blkid, true);
	int err = dbuf_read(db);
	if (err == 0) {
		pthread_mutex_lock(&mdn->dn_mtx);
		memcpy(out, (uint8_t *)db->db_data +
		    (obj % DN_DNODES_PER_BLOCK) * DNODE_SIZE, DNODE_SIZE);
		pthread_mutex_unlock(&mdn->dn_mtx);
	}
	dbuf_rele(db);
	pthread_rwlock_unlock(&mdn->dn_struct_rwlock);
	if (err == 0 && out->dn_type != DMU_OT_NONE &&
	    (out->dn_type >= DMU_OT_NUMTYPES || out->dn_nlevels == 0 ||
	    out->dn_nlevels > DN_MAX_LEVELS || out->dn_bonuslen > DN_MAX_BONUSLEN ||
	    out->dn_datablkszsec == 0 ||
	    dnode_phys_blksz(out) > SPA_MAXBLOCKSIZE))
		err = SET_ERROR(EIO);   /* verified block, impossible content */
	return (err);
}

/*
 * Hold object obj of os.  With must_exist, ENOENT unless it is allocated
 * (in the open-context view).
 */
int
dnode_hold(objset_t *os, uint64_t obj, bool must_exist, dnode_t **dnp)
{
	if (obj == DMU_META_DNODE_OBJECT || obj >= DMU_MAX_OBJECT)
		return (SET_ERROR(must_exist ? ENOENT : EINVAL));
	tarn_mutex_lock(&os->os_lock, OS);
	dnode_t *dn = dn_table_find(os, obj);
	if (dn == NULL) {
		tarn_mutex_unlock(&os->os_lock);
		dnode_phys_t phys;
		int err = dnode_load_phys(os, obj, &phys);
		if (err != 0)
			return (err);
		dnode_t *ndn = dnode_create(os, obj, &phys);
		tarn_mutex_lock(&os->os_lock, OS);
		dn = dn_table_find(os, obj);
		if (dn == NULL) {
			dn_table_insert(os, ndn);
			dn = ndn;
		} else {
			dnode_destroy(ndn);
		}
	}
	dn_lru_unlink(os, dn);
	__atomic_add_fetch(&dn->dn_holds, 1, __ATOMIC_SEQ_CST);
	tarn_mutex_unlock(&os->os_lock);
	if (must_exist) {
		pthread_mutex_lock(&dn->dn_mtx);
		bool ok = dn->dn_allocated;
		pthread_mutex_unlock(&dn->dn_mtx);
		if (!ok) {
			dnode_rele(dn);
			return (SET_ERROR(ENOENT));
		}
	}
	*dnp = dn;
	return (0);
}

/* The table's budget of dnodes (see DN_TABLE_MAX_IDLE). */
static size_t
dnode_table_max(objset_t *os)
{
	uint64_t n = arc_limit(os->os_dp->dp_arc) / DN_TABLE_ARC_DIV / sizeof (dnode_t);
	return ((size_t)MAX((uint64_t)DN_TABLE_MIN, MIN((uint64_t)DN_TABLE_MAX_IDLE, n)));
}

/* Evict idle dnodes beyond the table's budget (os_lock held). */
static void
dnode_evict_idle(objset_t *os)
{
	size_t max = dnode_table_max(os);
	while (tarn_hash_count(&os->os_dnodes) > max && os->os_dn_lru_head != NULL) {
		dnode_t *dn = os->os_dn_lru_head;
		dn_lru_unlink(os, dn);
		pthread_mutex_lock(&dn->dn_mtx);
		bool busy = false;
		dbuf_t *db;
		DN_FOREACH_DBUF(dn, db) {
			if (db->db_holds || db->db_dirty || db->db_sync_dirty ||
			    db->db_state == DB_READING) {
				busy = true;
				break;
			}
		}
		for (int t = 0; t < TXG_SIZE; t++)
			if (dn->dn_txg[t].dt_dirty)
				busy = true;
		pthread_mutex_unlock(&dn->dn_mtx);
		if (busy || dn->dn_holds != 0)
			continue;
		dn_table_remove(os, dn);
		dnode_destroy(dn);
	}
}

void
dnode_rele(dnode_t *dn)
{
	objset_t *os = dn->dn_os;
	if (dn->dn_object == DMU_META_DNODE_OBJECT)
		return;
	tarn_mutex_lock(&os->os_lock, OS);
	int h = __atomic_sub_fetch(&dn->dn_holds, 1, __ATOMIC_SEQ_CST);
	VERIFY3S(h, >=, 0);
	if (h == 0 && !dn->dn_in_lru) {
		dn->dn_in_lru = true;
		dn->dn_lru_next = NULL;
		dn->dn_lru_prev = os->os_dn_lru_tail;
		if (os->os_dn_lru_tail) os->os_dn_lru_tail->dn_lru_next = dn;
		else os->os_dn_lru_head = dn;
		os->os_dn_lru_tail = dn;
		if (tarn_hash_count(&os->os_dnodes) > dnode_table_max(os))
			dnode_evict_idle(os);
	}
	tarn_mutex_unlock(&os->os_lock);
}

/*
 * Note that dn has changes in txg: it takes a hold until txg is synced and
 * is queued for the next sync pass.  dn_mtx held.
 */
void
dnode_setdirty(dnode_t *dn, uint64_t txg)
{
	objset_t *os = dn->dn_os;
	dnode_txg_t *dt = &dn->dn_txg[TXG_IDX(txg)];
	if (!dt->dt_dirty) {
		dt->dt_dirty = true;
		if (dn->dn_object != DMU_META_DNODE_OBJECT)
			__atomic_add_fetch(&dn->dn_holds, 1, __ATOMIC_SEQ_CST);
		dmu_pool_dirty_add(os->os_dp, txg, DNODE_SIZE);
	}
	if (!dt->dt_listed && dn->dn_object != DMU_META_DNODE_OBJECT) {
		dt->dt_listed = true;
		tarn_mutex_lock(&os->os_dirty_lock, OS_DIRTY);
		dt->dt_dirty_next = os->os_dirty[TXG_IDX(txg)];
		os->os_dirty[TXG_IDX(txg)] = dn;
		tarn_mutex_unlock(&os->os_dirty_lock);
	}
}

/* True when level-0 block blkid was freed in a txg not yet synced (dn_mtx held). */
bool
dnode_block_freed(dnode_t *dn, uint64_t blkid)
{
	for (int t = 0; t < TXG_SIZE; t++) {
		const dnode_txg_t *dt = &dn->dn_txg[t];
		if (!dt->dt_dirty)
			continue;
		if (dt->dt_free)
			return (true);
		if (dt->dt_trunc && blkid >= dt->dt_trunc_blkid)
			return (true);
		for (size_t i = 0; i < tarn_array_len(&dt->dt_ranges); i++) {
			const free_range_t *fr = &TARN_ARRAY_AT(&dt->dt_ranges, free_range_t, i);
			if (blkid >= fr->fr_start && blkid < fr->fr_end)
				return (true);
		}
	}
	return (false);
}

/*
 * The block pointer of block (level, blkid) as the tree says now.  The
 * caller holds dn_struct_rwlock.  Blocks beyond the tree are holes.
 */
int
dnode_resolve_bp(dnode_t *dn, uint64_t level, uint64_t blkid, blkptr_t *bp)
{
	int nlevels = dn->dn_phys.dn_nlevels;
	if (nlevels == 0 || level >= (uint64_t)nlevels) {
		BP_ZERO(bp);
		return (0);
	}
	int shift = DN_EPB_SHIFT * (nlevels - 1 - (int)level);
	if (shift < 64 && (blkid >> shift) != 0) {
		BP_ZERO(bp);
		return (0);
	}
	if (level == (uint64_t)nlevels - 1) {
		*bp = dn->dn_phys.dn_blkptr[0];
		return (0);
	}
	dbuf_t *parent = dbuf_hold(dn, (uint8_t)(level + 1), blkid >> DN_EPB_SHIFT, true);
	int err = dbuf_read(parent);
	if (err == 0) {
		pthread_mutex_lock(&dn->dn_mtx);
		*bp = ((blkptr_t *)parent->db_data)[blkid & ((1ULL << DN_EPB_SHIFT) - 1)];
		pthread_mutex_unlock(&dn->dn_mtx);
	}
	dbuf_rele(parent);
	return (err);
}
