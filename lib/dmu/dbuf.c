/*
 * dbuf.c — cached blocks of objects ("dbufs") and their dirty records.
 *
 * Theory.  A dbuf caches one block of one object: a level-0 data block or
 * an indirect block (an array of block pointers).  Level-0 blocks are
 * changed in open context, by transactions; each txg that changes a block
 * gets a dirty record holding the block as of the end of that txg.  The
 * newest record shares db_data; when a later txg changes a block whose
 * newest record belongs to an older txg, db_data is copied first, so the
 * older txg's buffer never changes again (the sync thread may be writing
 * it).  Records live until their txg is on disk (dbuf_sync_done).
 * Indirect blocks and meta-dnode blocks are changed only by the sync
 * thread (they describe where things are on disk, which only the sync
 * knows); they carry db_sync_dirty while they await their write.
 *
 * A dbuf with no holds, no records and not sync-dirty is clean and sits
 * on the pool's LRU; when the cache passes dpo_cache_max the oldest clean
 * dbufs are evicted.  All dbuf fields are guarded by the owning dnode's
 * dn_mtx, the LRU links by dp_cache_lock (taken after dn_mtx; the evictor
 * only try-locks dn_mtx).
 */
#include "dmu_impl.h"

static inline uint32_t
dbuf_hash(uint8_t level, uint64_t blkid, uint32_t buckets)
{
	uint64_t h = (blkid * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)level << 56);
	return ((uint32_t)(h >> 32) & (buckets - 1));
}

dbuf_t *
dbuf_find_locked(dnode_t *dn, uint8_t level, uint64_t blkid)
{
	if (dn->dn_dbuf_buckets == 0)
		return (NULL);
	for (dbuf_t *db = dn->dn_dbufs[dbuf_hash(level, blkid, dn->dn_dbuf_buckets)];
	    db != NULL; db = db->db_hash_next)
		if (db->db_level == level && db->db_blkid == blkid)
			return (db);
	return (NULL);
}

static void
dbuf_table_grow(dnode_t *dn)
{
	uint32_t nb = dn->dn_dbuf_buckets ? dn->dn_dbuf_buckets * 2 : 16;
	dbuf_t **nt = tarn_alloc(sizeof (dbuf_t *) * nb);
	for (uint32_t i = 0; i < dn->dn_dbuf_buckets; i++) {
		dbuf_t *db = dn->dn_dbufs[i];
		while (db != NULL) {
			dbuf_t *next = db->db_hash_next;
			uint32_t h = dbuf_hash(db->db_level, db->db_blkid, nb);
			db->db_hash_next = nt[h];
			nt[h] = db;
			db = next;
		}
	}
	tarn_free(dn->dn_dbufs);
	dn->dn_dbufs = nt;
	dn->dn_dbuf_buckets = nb;
}

static void
dbuf_table_remove(dnode_t *dn, dbuf_t *db)
{
	dbuf_t **pp = &dn->dn_dbufs[dbuf_hash(db->db_level, db->db_blkid, dn->dn_dbuf_buckets)];
	while (*pp != db)
		pp = &(*pp)->db_hash_next;
	*pp = db->db_hash_next;
	dn->dn_dbuf_count--;
}

/* Block size of a dbuf at level of dn (dn_mtx held). */
static uint32_t
dbuf_size(dnode_t *dn, uint8_t level)
{
	if (level > 0)
		return (1U << (dn->dn_phys.dn_indblkshift ? dn->dn_phys.dn_indblkshift :
		    DN_INDIRECT_SHIFT));
	return (dn->dn_blksz);
}

void
dbuf_lru_remove(dmu_pool_t *dp, dbuf_t *db)
{
	pthread_mutex_lock(&dp->dp_cache_lock);
	if (db->db_in_lru) {
		if (db->db_lru_prev) db->db_lru_prev->db_lru_next = db->db_lru_next;
		else dp->dp_lru_head = db->db_lru_next;
		if (db->db_lru_next) db->db_lru_next->db_lru_prev = db->db_lru_prev;
		else dp->dp_lru_tail = db->db_lru_prev;
		db->db_lru_prev = db->db_lru_next = NULL;
		db->db_in_lru = false;
		if (db->db_state == DB_CACHED)
			dp->dp_cache_bytes -= db->db_size;
	}
	pthread_mutex_unlock(&dp->dp_cache_lock);
}

static void
dbuf_lru_add(dmu_pool_t *dp, dbuf_t *db)
{
	pthread_mutex_lock(&dp->dp_cache_lock);
	if (!db->db_in_lru) {
		db->db_in_lru = true;
		db->db_lru_next = NULL;
		db->db_lru_prev = dp->dp_lru_tail;
		if (dp->dp_lru_tail) dp->dp_lru_tail->db_lru_next = db;
		else dp->dp_lru_head = db;
		dp->dp_lru_tail = db;
		dp->dp_cache_bytes += db->db_size;
	}
	pthread_mutex_unlock(&dp->dp_cache_lock);
}

static bool
dbuf_is_idle(const dbuf_t *db)
{
	return (db->db_holds == 0 && db->db_dirty == NULL && !db->db_sync_dirty &&
	    db->db_state != DB_READING);
}

/* Free a dbuf that is idle (dn_mtx held, not on the LRU). */
void
dbuf_evict_one(dbuf_t *db)
{
	dnode_t *dn = db->db_dn;
	ASSERT(dbuf_is_idle(db));
	ASSERT(!db->db_in_lru);
	dbuf_table_remove(dn, db);
	tarn_free(db->db_data);
	tarn_free(db);
}

/*
 * Find or (create) make a dbuf and take a hold on it.  The caller holds
 * the dnode.  Returns NULL only when !create and it is not cached.
 */
dbuf_t *
dbuf_hold(dnode_t *dn, uint8_t level, uint64_t blkid, bool create)
{
	dmu_pool_t *dp = dn->dn_os->os_dp;
	pthread_mutex_lock(&dn->dn_mtx);
	dbuf_t *db = dbuf_find_locked(dn, level, blkid);
	if (db == NULL) {
		if (!create) {
			pthread_mutex_unlock(&dn->dn_mtx);
			return (NULL);
		}
		if (dn->dn_dbuf_count >= dn->dn_dbuf_buckets)
			dbuf_table_grow(dn);
		db = tarn_alloc(sizeof (*db));
		db->db_dn = dn;
		db->db_level = level;
		db->db_blkid = blkid;
		db->db_size = dbuf_size(dn, level);
		db->db_state = DB_UNCACHED;
		uint32_t h = dbuf_hash(level, blkid, dn->dn_dbuf_buckets);
		db->db_hash_next = dn->dn_dbufs[h];
		dn->dn_dbufs[h] = db;
		dn->dn_dbuf_count++;
	}
	db->db_holds++;
	if (db->db_in_lru)
		dbuf_lru_remove(dp, db);
	pthread_mutex_unlock(&dn->dn_mtx);
	return (db);
}

void
dbuf_rele(dbuf_t *db)
{
	dnode_t *dn = db->db_dn;
	dmu_pool_t *dp = dn->dn_os->os_dp;
	bool evict = false;
	pthread_mutex_lock(&dn->dn_mtx);
	VERIFY3S(db->db_holds, >, 0);
	db->db_holds--;
	if (dbuf_is_idle(db)) {
		if (db->db_state == DB_CACHED) {
			dbuf_lru_add(dp, db);
			evict = true;
		} else {
			dbuf_evict_one(db);
		}
	}
	pthread_mutex_unlock(&dn->dn_mtx);
	if (evict)
		dbuf_cache_evict(dp);
}

/* Put a dbuf that just became clean on the LRU (dn_mtx held). */
void
dbuf_maybe_idle(dbuf_t *db)
{
	if (dbuf_is_idle(db)) {
		if (db->db_state == DB_CACHED)
			dbuf_lru_add(db->db_dn->dn_os->os_dp, db);
		else
			dbuf_evict_one(db);
	}
}

/* Evict the oldest clean dbufs while the cache is over its limit. */
void
dbuf_cache_evict(dmu_pool_t *dp)
{
	int skipped = 0;
	for (;;) {
		pthread_mutex_lock(&dp->dp_cache_lock);
		if (dp->dp_cache_bytes <= dp->dp_opts.dpo_cache_max || skipped > 64) {
			pthread_mutex_unlock(&dp->dp_cache_lock);
			return;
		}
		dbuf_t *db = dp->dp_lru_head;
		for (int i = 0; i < skipped && db != NULL; i++)
			db = db->db_lru_next;
		if (db == NULL) {
			pthread_mutex_unlock(&dp->dp_cache_lock);
			return;
		}
		dnode_t *dn = db->db_dn;
		if (pthread_mutex_trylock(&dn->dn_mtx) != 0) {
			pthread_mutex_unlock(&dp->dp_cache_lock);
			skipped++;
			continue;
		}
		/* Unlink from the LRU under both locks, then free. */
		if (db->db_lru_prev) db->db_lru_prev->db_lru_next = db->db_lru_next;
		else dp->dp_lru_head = db->db_lru_next;
		if (db->db_lru_next) db->db_lru_next->db_lru_prev = db->db_lru_prev;
		else dp->dp_lru_tail = db->db_lru_prev;
		db->db_in_lru = false;
		dp->dp_cache_bytes -= db->db_size;
		pthread_mutex_unlock(&dp->dp_cache_lock);
		dbuf_evict_one(db);
		pthread_mutex_unlock(&dn->dn_mtx);
	}
}

/* Drop every dbuf of a dnode being destroyed (dn_mtx held). */
void
dbuf_destroy_all(dnode_t *dn)
{
	dmu_pool_t *dp = dn->dn_os->os_dp;
	for (uint32_t i = 0; i < dn->dn_dbuf_buckets; i++) {
		dbuf_t *db = dn->dn_dbufs[i];
		while (db != NULL) {
			dbuf_t *next = db->db_hash_next;
			/* Only an abandoned pool has dirty dbufs here: drop them. */
			dirty_record_t *dr = db->db_dirty;
			while (dr != NULL) {
				dirty_record_t *nx = dr->dr_next_txg;
				if (dr->dr_data != db->db_data)
					tarn_free(dr->dr_data);
				tarn_free(dr);
				dr = nx;
			}
			dbuf_lru_remove(dp, db);
			tarn_free(db->db_data);
			tarn_free(db);
			db = next;
		}
		dn->dn_dbufs[i] = NULL;
	}
	dn->dn_dbuf_count = 0;
	tarn_free(dn->dn_dbufs);
	dn->dn_dbufs = NULL;
	dn->dn_dbuf_buckets = 0;
}

/*
 * Make db's contents valid.  The caller holds db and dn_struct_rwlock
 * (either mode).  Level-0 blocks freed in an unsynced txg read as zeros.
 */
int
dbuf_read(dbuf_t *db)
{
	dnode_t *dn = db->db_dn;
	pthread_mutex_lock(&dn->dn_mtx);
	while (db->db_state == DB_READING)
		pthread_cond_wait(&dn->dn_cv, &dn->dn_mtx);
	if (db->db_state == DB_CACHED) {
		pthread_mutex_unlock(&dn->dn_mtx);
		return (0);
	}
	if (db->db_level == 0 && dnode_block_freed(dn, db->db_blkid)) {
		db->db_data = tarn_alloc(db->db_size);
		db->db_state = DB_CACHED;
		pthread_mutex_unlock(&dn->dn_mtx);
		return (0);
	}
	db->db_state = DB_READING;
	uint32_t size = db->db_size;
	pthread_mutex_unlock(&dn->dn_mtx);

	blkptr_t bp;
	void *buf = tarn_alloc(size);
	int err = dnode_resolve_bp(dn, db->db_level, db->db_blkid, &bp);
	if (err == 0 && !BP_IS_HOLE(&bp)) {
		zio_ctx_t *zc = dn->dn_os->os_dp->dp_zio;
		if (bp.bp_lsize == size) {
			err = zio_read(zc, &bp, buf, 0);
		} else if (bp.bp_lsize <= SPA_MAXBLOCKSIZE && bp.bp_lsize > 0) {
			void *tmp = tarn_alloc(bp.bp_lsize);
			err = zio_read(zc, &bp, tmp, 0);
			memcpy(buf, tmp, MIN(size, bp.bp_lsize));
			tarn_free(tmp);
		} else {
			err = SET_ERROR(EIO);
		}
	}

	if (err != 0 && err != ENOMEM)
		dmu_pool_report_error(dn->dn_os->os_dp, dn->dn_os, dn->dn_object, db->db_level,
		    db->db_blkid, err);
	pthread_mutex_lock(&dn->dn_mtx);
	if (err != 0) {
		tarn_free(buf);
		db->db_state = DB_UNCACHED;
	} else {
		/* A free that raced this read wins: the block is a hole now. */
		if (db->db_level == 0 && dnode_block_freed(dn, db->db_blkid))
			memset(buf, 0, size);
		db->db_data = buf;
		db->db_state = DB_CACHED;
	}
	pthread_cond_broadcast(&dn->dn_cv);
	pthread_mutex_unlock(&dn->dn_mtx);
	return (err);
}

/*
 * Mark db (level 0, cached, held) dirty in txg and return the record for
 * txg; the caller changes dr_data (and, for an older txg racing a newer
 * one, the newer records too).  dn_mtx held.
 */
dirty_record_t *
dbuf_dirty(dbuf_t *db, uint64_t txg)
{
	dnode_t *dn = db->db_dn;
	ASSERT(db->db_state == DB_CACHED);
	dirty_record_t *newest = db->db_dirty, *dr;
	while (newest != NULL && newest->dr_next_txg != NULL)
		newest = newest->dr_next_txg;
	for (dr = db->db_dirty; dr != NULL; dr = dr->dr_next_txg) {
		if (dr->dr_txg == txg) {
			if (dr->dr_written) {
				/* syncing context changed it again: write it once more */
				dr->dr_written = false;
				dnode_setdirty(dn, txg);
			}
			return (dr);
		}
	}
	if (newest != NULL && newest->dr_txg > txg) {
		/* An older txg after a newer one (callers did not serialize). */
		return (newest);
	}
	if (newest != NULL && newest->dr_data == db->db_data) {
		/* The older txg keeps its buffer; we change a copy. */
		void *copy = tarn_alloc(db->db_size);
		memcpy(copy, db->db_data, db->db_size);
		db->db_data = copy;
	}
	dr = tarn_alloc(sizeof (*dr));
	dr->dr_txg = txg;
	dr->dr_data = db->db_data;
	dr->dr_size = db->db_size;
	dr->dr_dbuf = db;
	if (newest != NULL)
		newest->dr_next_txg = dr;
	else
		db->db_dirty = dr;
	dnode_txg_t *dt = &dn->dn_txg[TXG_IDX(txg)];
	dr->dr_dnode_next = dt->dt_records;
	dt->dt_records = dr;
	if (db->db_in_lru)
		dbuf_lru_remove(dn->dn_os->os_dp, db);
	dnode_setdirty(dn, txg);
	dmu_pool_dirty_add(dn->dn_os->os_dp, txg, db->db_size);
	return (dr);
}

/*
 * After txg is on disk: drop db's record for txg (the oldest).  dn_mtx
 * held.
 */
void
dbuf_sync_done(dbuf_t *db, dirty_record_t *dr)
{
	VERIFY3P(db->db_dirty, ==, dr);
	db->db_dirty = dr->dr_next_txg;
	if (dr->dr_data != db->db_data)
		tarn_free(dr->dr_data);
	tarn_free(dr);
	dbuf_maybe_idle(db);
}
