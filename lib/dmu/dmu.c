/*
 * dmu.c — the object interface: allocate and free objects, read, write
 * and free byte ranges, bonus buffers, object info.  Open context only;
 * every change goes through dbufs and dirty records (dbuf.c) and reaches
 * disk at the sync of its txg (dnode_sync.c).
 */
#include "dmu_impl.h"

static bool
blksz_valid(uint32_t blksz)
{
	return (blksz >= SPA_MINBLOCKSIZE && blksz <= SPA_MAXBLOCKSIZE && ISP2(blksz));
}

/* Mark dn allocated in tx (dn_mtx held, dn free in the open view). */
static void
dnode_allocate_locked(dnode_t *dn, dmu_object_type_t type, uint32_t blksz,
    dmu_object_type_t bonustype, uint32_t bonuslen, uint64_t txg)
{
	dnode_txg_t *dt = &dn->dn_txg[TXG_IDX(txg)];
	dn->dn_allocated = true;
	dn->dn_type = type;
	dn->dn_bonustype = bonustype;
	dn->dn_blksz = blksz;
	dn->dn_bonuslen = bonuslen;
	dn->dn_maxblkid = 0;
	memset(dn->dn_bonus, 0, sizeof (dn->dn_bonus));
	dt->dt_alloc = true;
	dt->dt_free = false;
	dt->dt_type = type;
	dt->dt_bonustype = bonustype;
	dt->dt_blksz = blksz;
	dt->dt_bonuslen = bonuslen;
	dt->dt_bonus_dirty = true;
	memset(dt->dt_bonus, 0, sizeof (dt->dt_bonus));
	dnode_setdirty(dn, txg);
}

static int
dmu_object_try(objset_t *os, uint64_t obj, dmu_object_type_t type, uint32_t blksz,
    dmu_object_type_t bonustype, uint32_t bonuslen, dmu_tx_t *tx)
{
	dnode_t *dn;
	int err = dnode_hold(os, obj, false, &dn);
	if (err != 0)
		return (err);
	pthread_mutex_lock(&dn->dn_mtx);
	if (dn->dn_allocated || dn->dn_free_txg != 0) {
		err = SET_ERROR(EEXIST);
	} else {
		/* An unsynced free in an older txg would race the allocation. */
		for (int t = 0; t < TXG_SIZE; t++)
			if (dn->dn_txg[t].dt_dirty && dn->dn_txg[t].dt_free)
				err = SET_ERROR(EEXIST);
	}
	if (err == 0)
		dnode_allocate_locked(dn, type, blksz, bonustype, bonuslen, tx->tx_txg);
	pthread_mutex_unlock(&dn->dn_mtx);
	dnode_rele(dn);
	return (err);
}

int
dmu_object_alloc(objset_t *os, dmu_object_type_t type, uint32_t blksz,
    dmu_object_type_t bonustype, uint32_t bonuslen, dmu_tx_t *tx, uint64_t *objp)
{
	if (!blksz_valid(blksz) || bonuslen > DN_MAX_BONUSLEN || type == DMU_OT_NONE ||
	    type >= DMU_OT_NUMTYPES)
		return (SET_ERROR(EINVAL));
	tarn_mutex_lock(&os->os_alloc_lock, OS_ALLOC);
	int err;
	for (;;) {
		uint64_t obj;
		if (tarn_array_len(&os->os_free_objs) > 0)
			obj = *(uint64_t *)tarn_array_pop(&os->os_free_objs);
		else
			obj = os->os_obj_next++;
		if (obj >= DMU_MAX_OBJECT) {
			err = SET_ERROR(ENOSPC);
			break;
		}
		err = dmu_object_try(os, obj, type, blksz, bonustype, bonuslen, tx);
		if (err == 0) {
			*objp = obj;
			break;
		}
		if (err != EEXIST)
			break;
	}
	tarn_mutex_unlock(&os->os_alloc_lock);
	return (err);
}

int
dmu_object_claim(objset_t *os, uint64_t obj, dmu_object_type_t type, uint32_t blksz,
    dmu_object_type_t bonustype, uint32_t bonuslen, dmu_tx_t *tx)
{
	if (!blksz_valid(blksz) || bonuslen > DN_MAX_BONUSLEN || type == DMU_OT_NONE ||
	    type >= DMU_OT_NUMTYPES || obj == 0 || obj >= DMU_MAX_OBJECT)
		return (SET_ERROR(EINVAL));
	tarn_mutex_lock(&os->os_alloc_lock, OS_ALLOC);
	int err = dmu_object_try(os, obj, type, blksz, bonustype, bonuslen, tx);
	if (err == 0 && obj >= os->os_obj_next)
		os->os_obj_next = obj + 1;
	tarn_mutex_unlock(&os->os_alloc_lock);
	return (err);
}

int
dmu_object_free(objset_t *os, uint64_t obj, dmu_tx_t *tx)
{
	dnode_t *dn;
	int err = dnode_hold(os, obj, true, &dn);
	if (err != 0)
		return (err);
	uint64_t txg = tx->tx_txg;
	pthread_mutex_lock(&dn->dn_mtx);
	dnode_txg_t *dt = &dn->dn_txg[TXG_IDX(txg)];
	dn->dn_allocated = false;
	dn->dn_free_txg = txg;
	dt->dt_free = true;
	dt->dt_alloc = false;
	dt->dt_bonus_dirty = false;
	for (dirty_record_t *dr = dt->dt_records; dr != NULL; dr = dr->dr_dnode_next)
		dr->dr_hole = true;
	dnode_setdirty(dn, txg);
	pthread_mutex_unlock(&dn->dn_mtx);
	dnode_rele(dn);
	return (0);
}

int
dmu_object_info(objset_t *os, uint64_t obj, dmu_object_info_t *doi)
{
	dnode_t *dn;
	int err = dnode_hold(os, obj, true, &dn);
	if (err != 0)
		return (err);
	memset(doi, 0, sizeof (*doi));
	pthread_rwlock_rdlock(&dn->dn_struct_rwlock);
	pthread_mutex_lock(&dn->dn_mtx);
	doi->doi_type = dn->dn_type;
	doi->doi_bonus_type = dn->dn_bonustype;
	doi->doi_data_block_size = dn->dn_blksz;
	doi->doi_bonus_size = dn->dn_bonuslen;
	doi->doi_indirection = dn->dn_phys.dn_nlevels ? dn->dn_phys.dn_nlevels : 1;
	doi->doi_max_offset = (dn->dn_maxblkid + 1) * (uint64_t)dn->dn_blksz;
	doi->doi_physical_bytes = dn->dn_phys.dn_used;
	doi->doi_fill_count = BP_IS_HOLE(&dn->dn_phys.dn_blkptr[0]) ? 0 :
	    dn->dn_phys.dn_blkptr[0].bp_fill;
	pthread_mutex_unlock(&dn->dn_mtx);
	pthread_rwlock_unlock(&dn->dn_struct_rwlock);
	dnode_rele(dn);
	return (0);
}

int
dmu_object_next(objset_t *os, uint64_t *objp)
{
	return (dmu_object_next_below(os, objp, UINT64_MAX));
}

uint64_t
dmu_object_limit(objset_t *os)
{
	tarn_mutex_lock(&os->os_alloc_lock, OS_ALLOC);
	uint64_t limit = os->os_obj_next;
	tarn_mutex_unlock(&os->os_alloc_lock);
	return (limit);
}

int
dmu_object_next_below(objset_t *os, uint64_t *objp, uint64_t below)
{
	dnode_t *mdn = os->os_meta_dnode;
	tarn_mutex_lock(&os->os_alloc_lock, OS_ALLOC);
	uint64_t limit = MIN(os->os_obj_next, below);
	tarn_mutex_unlock(&os->os_alloc_lock);
	(void) mdn;
	for (uint64_t obj = *objp + 1; obj < limit; obj++) {
		dnode_t *dn;
		if (dnode_hold(os, obj, true, &dn) == 0) {
			dnode_rele(dn);
			*objp = obj;
			return (0);
		}
	}
	return (SET_ERROR(ESRCH));
}

/* Hold and read level-0 block blkid (the caller releases). */
static int
dmu_hold_read(dnode_t *dn, uint64_t blkid, dbuf_t **dbp)
{
	dbuf_t *db = dbuf_hold(dn, 0, blkid, true);
	pthread_rwlock_rdlock(&dn->dn_struct_rwlock);
	int err = dbuf_read(db);
	pthread_rwlock_unlock(&dn->dn_struct_rwlock);
	if (err != 0) {
		dbuf_rele(db);
		return (err);
	}
	*dbp = db;
	return (0);
}

/*
 * Sequential reads.  A read of several blocks fetches the ones not
 * cached in one parallel batch (dbuf_read_blocks) instead of one after
 * the other.  A read that continues where an earlier one of the same
 * object ended (within a window: FUSE sends read-ahead requests from
 * several threads, not always in order) is part of a stream, and the
 * blocks ahead of it are read too, as many as the stream has read so
 * far (doubling up to DMU_READAHEAD_MAX), topped up when fewer than half
 * of them are left.  The streams are a small table matched by dnode
 * address (a guess that may miss, never a correctness matter), the
 * least recently used replaced.  The kernel's read-ahead for a file read
 * through the mount is many 1 MiB requests at once, which the FUSE
 * threads take in no fixed order: requests came up to 14 MiB behind or
 * ahead of the stream's end, each such one restarted the stream, and
 * the blocks it read were kept as if a random reader wanted them (a
 * 1 GiB cold read left 300 MiB cached, every buffer of it fresh memory).
 * So a read of more than one block continues a stream anywhere within
 * DMU_STREAM_SLACK blocks of its end (16 MiB at 128 KiB); a one-block
 * read (a random reader's) keeps the narrow window.
 *
 * Read-ahead is asynchronous: a task on a small process-wide taskq
 * holds the dnode and reads the blocks into the cache, while the read
 * that started it returns as soon as its own blocks are in; a later read
 * that needs a block being read ahead waits for it (DB_READING) rather
 * than reading it again.  A read-ahead failure leaves the block uncached
 * (the read that needs it tries again and gets the error).  Each object
 * set counts its tasks in flight (os_ra_pending): dmu_objset_close waits
 * for none before it destroys the dnodes, so no task outlives its object
 * set or the pool's zio context.  An object freed meanwhile is handled
 * as for any concurrent read (blocks freed in open context are not
 * claimed, and a read that raced a free installs zeros).
 *
 * A cached block is copied under the one hold of dn_mtx that finds it
 * (no tree lock, no dbuf_read), then released, which makes it the
 * youngest on the LRU.  Within a loan (dmu_loan_begin) large cached
 * pieces are lent instead of copied (see dmu.h and dn_loans).
 */
#define DMU_STREAMS        16
#define DMU_READAHEAD_MAX  32       /* blocks (4 MiB at 128 KiB) */
#define DMU_RA_THREADS     2
#define DMU_STREAM_SLACK   128      /* blocks; see above */

typedef struct dmu_stream {
	const dnode_t *ds_dn;
	uint64_t ds_next;       /* block after the last one read */
	uint64_t ds_ahead;      /* read-ahead distance, blocks */
	uint64_t ds_fetched;    /* first block not read ahead yet */
	uint64_t ds_used;       /* LRU clock */
} dmu_stream_t;

static dmu_stream_t dmu_streams[DMU_STREAMS];
static uint64_t dmu_stream_clock;
static pthread_mutex_t dmu_stream_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * A read of blocks [first, last] of dn (maxblkid its last block): the
 * last block worth reading ahead now (last itself when none), and in
 * *rafirst the first one; *stream: the read continues a stream that
 * blocks were read ahead for.
 */
static uint64_t
dmu_readahead(const dnode_t *dn, uint64_t first, uint64_t last, uint64_t maxblkid,
    uint64_t *rafirst, bool *stream)
{
	uint64_t n = last - first + 1, end = last;
	*rafirst = last + 1;
	*stream = false;
	pthread_mutex_lock(&dmu_stream_lock);
	dmu_stream_t *ds = NULL, *old = &dmu_streams[0];
	for (int i = 0; i < DMU_STREAMS; i++) {
		if (dmu_streams[i].ds_dn == dn) {
			ds = &dmu_streams[i];
			break;
		}
		if (dmu_streams[i].ds_used < old->ds_used)
			old = &dmu_streams[i];
	}
	uint64_t win = MAX(n, ds != NULL ? ds->ds_ahead : 0) + 1;
	if (n > 1)
		win = MAX(win, DMU_STREAM_SLACK);
	if (ds != NULL && first + win >= ds->ds_next && first <= ds->ds_next + win) {
		*stream = ds->ds_ahead > 0;     /* read ahead for already */
		ds->ds_ahead = MIN(MAX(ds->ds_ahead * 2, n), DMU_READAHEAD_MAX);
		if (ds->ds_fetched < last + 1 + ds->ds_ahead / 2) {
			end = MIN(last + ds->ds_ahead, maxblkid);
			*rafirst = MAX(last + 1, ds->ds_fetched);
			ds->ds_fetched = MAX(end + 1, ds->ds_fetched);
		}
		ds->ds_next = MAX(ds->ds_next, last + 1);
	} else {
		if (ds == NULL)
			ds = old;
		ds->ds_dn = dn;
		ds->ds_ahead = 0;
		ds->ds_next = last + 1;
		ds->ds_fetched = last + 1;
	}
	ds->ds_used = ++dmu_stream_clock;
	pthread_mutex_unlock(&dmu_stream_lock);
	return (end);
}

/* ---- asynchronous read-ahead ---- */

typedef struct dmu_ra_task {
	dnode_t *rt_dn;             /* held */
	uint64_t rt_first, rt_last;
} dmu_ra_task_t;

static taskq_lazy_t dmu_ra_tq = TASKQ_LAZY_INIT("dmu_readahead", DMU_RA_THREADS);

/*
 * Where a read-ahead task of dn should start: not behind its stream's
 * reader.  A task that ran late (the taskq's threads starved of CPU) read
 * blocks the reader had already read itself and let go as once blocks,
 * into the cache, where nothing would read them again.
 */
static uint64_t
dmu_ra_start_blk(const dnode_t *dn, uint64_t first)
{
	pthread_mutex_lock(&dmu_stream_lock);
	for (int i = 0; i < DMU_STREAMS; i++) {
		if (dmu_streams[i].ds_dn == dn) {
			first = MAX(first, dmu_streams[i].ds_next);
			break;
		}
	}
	pthread_mutex_unlock(&dmu_stream_lock);
	return (first);
}

static void
dmu_ra_run(void *arg)
{
	dmu_ra_task_t *rt = arg;
	dnode_t *dn = rt->rt_dn;
	objset_t *os = dn->dn_os;
	uint64_t first = dmu_ra_start_blk(dn, rt->rt_first);
	pthread_rwlock_rdlock(&dn->dn_struct_rwlock);
	/* freed since (a free cannot sync while we hold the tree): nothing to do */
	pthread_mutex_lock(&dn->dn_mtx);
	bool live = dn->dn_allocated && dn->dn_free_txg == 0;
	pthread_mutex_unlock(&dn->dn_mtx);
	/* need < first: a failure is not this task's to return */
	if (live && first <= rt->rt_last)
		(void) dbuf_read_blocks(dn, first, rt->rt_last, first - 1, true);
	pthread_rwlock_unlock(&dn->dn_struct_rwlock);
	dnode_rele(dn);
	tarn_free(rt);
	pthread_mutex_lock(&os->os_ra_lock);
	if (--os->os_ra_pending == 0)
		pthread_cond_broadcast(&os->os_ra_cv);
	pthread_mutex_unlock(&os->os_ra_lock);
}

/* Read blocks [first, last] of dn (held by the caller; first > 0) in the background. */
static void
dmu_ra_start(dnode_t *dn, uint64_t first, uint64_t last)
{
	objset_t *os = dn->dn_os;
	dnode_t *hdn;
	if (dnode_hold(os, dn->dn_object, false, &hdn) != 0)
		return;
	ASSERT3P(hdn, ==, dn);
	dmu_ra_task_t *rt = tarn_alloc(sizeof (*rt));
	rt->rt_dn = hdn;
	rt->rt_first = first;
	rt->rt_last = last;
	pthread_mutex_lock(&os->os_ra_lock);
	os->os_ra_pending++;
	pthread_mutex_unlock(&os->os_ra_lock);
	taskq_dispatch(taskq_lazy_get(&dmu_ra_tq), dmu_ra_run, rt);
}

void
dmu_readahead_drain(objset_t *os)
{
	pthread_mutex_lock(&os->os_ra_lock);
	while (os->os_ra_pending > 0)
		pthread_cond_wait(&os->os_ra_cv, &os->os_ra_lock);
	pthread_mutex_unlock(&os->os_ra_lock);
}

void
dmu_objset_readahead_wait(objset_t *os)
{
	dmu_readahead_drain(os);
}

/*
 * Fetch the uncached blocks that a read of [off, off + len) needs, and
 * start read-ahead; *stream: the read continues a stream (see dbuf.c's
 * once blocks).
 */
static int
dmu_read_prefetch(dnode_t *dn, uint64_t off, uint64_t len, bool *stream)
{
	*stream = false;
	pthread_mutex_lock(&dn->dn_mtx);
	uint64_t blksz = dn->dn_blksz, maxblkid = dn->dn_maxblkid;
	pthread_mutex_unlock(&dn->dn_mtx);
	if (len == 0 || blksz == 0 || off / blksz > maxblkid)
		return (0);
	uint64_t first = off / blksz, rafirst;
	uint64_t last = MIN((off + len - 1) / blksz, maxblkid);
	uint64_t end = dmu_readahead(dn, first, last, maxblkid, &rafirst, stream);
	if (end >= rafirst)
		dmu_ra_start(dn, rafirst, end);
	/*
	 * A batch only pays when two or more blocks need reading: one block
	 * dmu_read reads itself, in this thread (no hand-off to zio's).
	 */
	int missing = 0;
	pthread_mutex_lock(&dn->dn_mtx);
	for (uint64_t b = first; b <= last && missing < 2; b++) {
		dbuf_t *db = dbuf_find_locked(dn, 0, b);
		missing += db == NULL || db->db_state == DB_UNCACHED;
	}
	pthread_mutex_unlock(&dn->dn_mtx);
	if (missing < 2)
		return (0);
	pthread_rwlock_rdlock(&dn->dn_struct_rwlock);
	int err = dbuf_read_blocks(dn, first, last, last, false);
	pthread_rwlock_unlock(&dn->dn_struct_rwlock);
	return (err);
}

/* ---- loans (zero-copy reads) ---- */

static __thread dmu_loan_t *dmu_loan_cur;

void
dmu_loan_begin(dmu_loan_t *dl, void *buf, size_t size)
{
	VERIFY3P(dmu_loan_cur, ==, NULL);
	dl->dl_buf = buf;
	dl->dl_size = size;
	dl->dl_nsegs = 0;
	dmu_loan_cur = dl;
}

/* Give back a block lent by a loan or a view: writers may go on. */
static void
dmu_lent_rele(dbuf_t *db)
{
	dnode_t *dn = db->db_dn;
	pthread_mutex_lock(&dn->dn_mtx);
	VERIFY3S(dn->dn_loans, >, 0);
	if (--dn->dn_loans == 0 && dn->dn_loan_waiters > 0)
		pthread_cond_broadcast(&dn->dn_cv);
	pthread_mutex_unlock(&dn->dn_mtx);
	dbuf_rele(db);
}

void
dmu_loan_end(dmu_loan_t *dl)
{
	VERIFY3P(dmu_loan_cur, ==, dl);
	for (int i = 0; i < dl->dl_nsegs; i++)
		dmu_lent_rele(dl->dl_segs[i].dls_db);
	dl->dl_nsegs = 0;
	dmu_loan_cur = NULL;
}

int
dmu_view(objset_t *os, uint64_t obj, uint64_t off, uint64_t len, dmu_view_t *dv)
{
	dnode_t *dn;
	int err = dnode_hold(os, obj, true, &dn);
	if (err != 0)
		return (err);
	pthread_mutex_lock(&dn->dn_mtx);
	uint64_t blksz = dn->dn_blksz, maxblkid = dn->dn_maxblkid;
	pthread_mutex_unlock(&dn->dn_mtx);
	uint64_t blkid = off / blksz, boff = off % blksz;
	dbuf_t *db = NULL;
	if (len == 0 || boff + len > blksz || blkid > maxblkid)
		err = SET_ERROR(EINVAL);
	else
		err = dmu_hold_read(dn, blkid, &db);
	if (err == 0) {
		pthread_mutex_lock(&dn->dn_mtx);
		if (boff + len > db->db_size) {
			err = SET_ERROR(EINVAL);        /* the block size changed meanwhile */
		} else {
			dbuf_note_read(db, false, false);
			dn->dn_loans++;
			dv->dv_data = (const uint8_t *)db->db_data + boff;
			dv->dv_db = db;
		}
		pthread_mutex_unlock(&dn->dn_mtx);
		if (err != 0)
			dbuf_rele(db);
	}
	dnode_rele(dn);
	return (err);
}

void
dmu_view_end(dmu_view_t *dv)
{
	dmu_lent_rele(dv->dv_db);
	dv->dv_db = NULL;
	dv->dv_data = NULL;
}

void
dmu_loan_wait_locked(dnode_t *dn)
{
	while (dn->dn_loans > 0) {
		dn->dn_loan_waiters++;
		pthread_cond_wait(&dn->dn_cv, &dn->dn_mtx);
		dn->dn_loan_waiters--;
	}
}

/* May [out, out + n) be lent rather than copied?  (dn_mtx held) */
static bool
dmu_loan_fits(const dnode_t *dn, const dmu_loan_t *dl, const uint8_t *out, uint64_t n)
{
	if (dl == NULL || n < DMU_LOAN_MIN || dl->dl_nsegs >= DMU_LOAN_SEGS ||
	    dn->dn_loan_waiters > 0 || out < dl->dl_buf || out + n > dl->dl_buf + dl->dl_size)
		return (false);
	uint64_t o = (uint64_t)(out - dl->dl_buf);
	const dmu_loan_seg_t *prev = dl->dl_nsegs > 0 ? &dl->dl_segs[dl->dl_nsegs - 1] : NULL;
	return (prev == NULL || o >= prev->dls_off + prev->dls_len);
}

/*
 * Copy (or lend) [boff, boff + n) of level-0 block blkid to out when the
 * block is cached; false when it is not (nothing done).  stream: the read
 * is part of a sequential stream.
 */
static bool
dmu_read_cached(dnode_t *dn, uint64_t blkid, uint64_t boff, uint64_t n, uint8_t *out,
    bool stream)
{
	dmu_loan_t *dl = dmu_loan_cur;
	pthread_mutex_lock(&dn->dn_mtx);
	dbuf_t *db = dbuf_find_locked(dn, 0, blkid);
	if (db == NULL || db->db_state != DB_CACHED) {
		pthread_mutex_unlock(&dn->dn_mtx);
		return (false);
	}
	dbuf_note_hit(db);
	dbuf_note_read(db, stream, false);
	bool lend = false;
	if (boff + n > db->db_size) {
		memset(out, 0, n);
	} else if (dmu_loan_fits(dn, dl, out, n)) {
		dmu_loan_seg_t *sg = &dl->dl_segs[dl->dl_nsegs++];
		sg->dls_off = (uint64_t)(out - dl->dl_buf);
		sg->dls_len = n;
		sg->dls_data = (const uint8_t *)db->db_data + boff;
		sg->dls_db = db;
		dn->dn_loans++;
		lend = true;
	} else {
		memcpy(out, (uint8_t *)db->db_data + boff, n);
	}
	/* a hold (kept by a loan): the release puts it at the young end of the LRU */
	db->db_holds++;
	arc_hold(dn->dn_os->os_dp->dp_arc, &db->db_arc);
	pthread_mutex_unlock(&dn->dn_mtx);
	if (!lend)
		dbuf_rele(db);
	return (true);
}

int
dmu_read(objset_t *os, uint64_t obj, uint64_t off, uint64_t len, void *buf)
{
	dnode_t *dn;
	int err = dnode_hold(os, obj, true, &dn);
	if (err != 0)
		return (err);
	/*
	 * A dataset whose data the ARC does not keep (primarycache=metadata
	 * or none) reads each block once, when it is needed: blocks read in
	 * a batch or ahead would be dropped before their reader came.
	 */
	bool stream = false;
	if (__atomic_load_n(&os->os_primarycache, __ATOMIC_RELAXED) == DMU_CACHE_ALL)
		err = dmu_read_prefetch(dn, off, len, &stream);
	uint8_t *out = buf;
	while (len > 0 && err == 0) {
		pthread_mutex_lock(&dn->dn_mtx);
		uint64_t blksz = dn->dn_blksz, maxblkid = dn->dn_maxblkid;
		pthread_mutex_unlock(&dn->dn_mtx);
		uint64_t blkid = off / blksz, boff = off % blksz;
		uint64_t n = MIN(len, blksz - boff);
		if (blkid > maxblkid) {
			memset(out, 0, n);
		} else if (!dmu_read_cached(dn, blkid, boff, n, out, stream)) {
			dbuf_t *db;
			err = dmu_hold_read(dn, blkid, &db);
			if (err != 0)
				break;
			pthread_mutex_lock(&dn->dn_mtx);
			if (boff + n <= db->db_size)
				memcpy(out, (uint8_t *)db->db_data + boff, n);
			else
				memset(out, 0, n);
			dbuf_note_read(db, stream, true);
			pthread_mutex_unlock(&dn->dn_mtx);
			dbuf_rele(db);
		}
		out += n;
		off += n;
		len -= n;
	}
	dnode_rele(dn);
	return (err);
}

int
dmu_read_if_cached(objset_t *os, uint64_t obj, uint64_t off, uint64_t len, void *buf)
{
	dnode_t *dn;
	int err = dnode_hold(os, obj, true, &dn);
	if (err != 0)
		return (err);
	uint8_t *out = buf;
	pthread_mutex_lock(&dn->dn_mtx);
	uint64_t blksz = dn->dn_blksz, maxblkid = dn->dn_maxblkid;
	while (len > 0 && blksz > 0) {
		uint64_t blkid = off / blksz, boff = off % blksz;
		uint64_t n = MIN(len, blksz - boff);
		dbuf_t *db = blkid > maxblkid ? NULL : dbuf_find_locked(dn, 0, blkid);
		if (blkid > maxblkid || (db != NULL && db->db_state == DB_CACHED &&
		    boff + n > db->db_size)) {
			memset(out, 0, n);
		} else if (db != NULL && db->db_state == DB_CACHED) {
			memcpy(out, (uint8_t *)db->db_data + boff, n);
		} else {
			err = SET_ERROR(EAGAIN);
			break;
		}
		out += n;
		off += n;
		len -= n;
	}
	pthread_mutex_unlock(&dn->dn_mtx);
	dnode_rele(dn);
	return (err);
}

/*
 * Copy data into block blkid at boff for tx (whole: the write covers the
 * block, so no read is needed).
 */
typedef struct dmu_stored {
	const void *ds_data;
	uint32_t ds_psize;
	uint8_t  ds_comp, ds_cksum;
} dmu_stored_t;

static int
dmu_write_block(dnode_t *dn, uint64_t blkid, uint64_t boff, uint64_t n, const void *data,
    bool whole, uint64_t txg, const dmu_stored_t *st)
{
	dbuf_t *db;
	int err;
	if (whole) {
		/*
		 * The write covers the block: no read.  The buffer becomes valid
		 * and gets its data under one hold of dn_mtx, so that no reader
		 * ever sees it half made.
		 */
		db = dbuf_hold(dn, 0, blkid, true);
		pthread_mutex_lock(&dn->dn_mtx);
		while (db->db_state == DB_READING || dn->dn_loans > 0) {
			if (dn->dn_loans > 0)
				dmu_loan_wait_locked(dn);
			else
				pthread_cond_wait(&dn->dn_cv, &dn->dn_mtx);
		}
		if (db->db_state == DB_UNCACHED) {
			db->db_size = dn->dn_blksz;
			/* every byte is written below unless the size changed meanwhile */
			db->db_data = dbuf_buf_alloc(db->db_size, boff != 0 || n != db->db_size);
			db->db_state = DB_CACHED;
		}
	} else {
		err = dmu_hold_read(dn, blkid, &db);
		if (err != 0)
			return (err);
		pthread_mutex_lock(&dn->dn_mtx);
		dmu_loan_wait_locked(dn);   /* a reader may be sending this block */
	}
	bool covers = boff == 0 && n == db->db_size;
	dirty_record_t *dr = covers ? dbuf_dirty_whole(db, txg) : dbuf_dirty(db, txg);
	dr->dr_hole = false;
	if (boff + n <= dr->dr_size)
		memcpy((uint8_t *)dr->dr_data + boff, data, n);
	if (st != NULL && covers && n == dr->dr_size) {
		dr->dr_stored = tarn_alloc(st->ds_psize);
		memcpy(dr->dr_stored, st->ds_data, st->ds_psize);
		dr->dr_psize = st->ds_psize;
		dr->dr_comp = st->ds_comp;
		dr->dr_cksum = st->ds_cksum;
	}
	if (blkid > dn->dn_maxblkid)
		dn->dn_maxblkid = blkid;
	pthread_mutex_unlock(&dn->dn_mtx);
	dbuf_rele(db);
	return (0);
}

int
dmu_write(objset_t *os, uint64_t obj, uint64_t off, uint64_t len, const void *buf,
    dmu_tx_t *tx)
{
	VERIFY(tx->tx_assigned);
	dnode_t *dn;
	int err = dnode_hold(os, obj, true, &dn);
	if (err != 0)
		return (err);
	const uint8_t *in = buf;
	while (len > 0 && err == 0) {
		pthread_mutex_lock(&dn->dn_mtx);
		uint64_t blksz = dn->dn_blksz;
		pthread_mutex_unlock(&dn->dn_mtx);
		uint64_t blkid = off / blksz, boff = off % blksz;
		uint64_t n = MIN(len, blksz - boff);
		if (blkid >= (1ULL << 40)) {
			err = SET_ERROR(EFBIG);
			break;
		}
		err = dmu_write_block(dn, blkid, boff, n, in, n == blksz, tx->tx_txg, NULL);
		dmu_pool_written_add(os->os_dp, tx->tx_txg, n);
		in += n;
		off += n;
		len -= n;
	}
	dnode_rele(dn);
	return (err);
}

int
dmu_write_stored(objset_t *os, uint64_t obj, uint64_t off, uint32_t lsize,
    const void *buf, const void *stored, uint32_t psize, uint8_t comp, uint8_t cksum,
    dmu_tx_t *tx)
{
	VERIFY(tx->tx_assigned);
	if (psize == 0 || psize > lsize || (psize < lsize && comp == ZIO_COMPRESS_OFF) ||
	    comp >= ZIO_COMPRESS_FUNCTIONS || cksum >= ZIO_CHECKSUM_FUNCTIONS ||
	    !IS_P2ALIGNED(psize, SPA_MINBLOCKSIZE))
		return (SET_ERROR(EINVAL));
	dnode_t *dn;
	int err = dnode_hold(os, obj, true, &dn);
	if (err != 0)
		return (err);
	pthread_mutex_lock(&dn->dn_mtx);
	uint64_t blksz = dn->dn_blksz;
	pthread_mutex_unlock(&dn->dn_mtx);
	dmu_stored_t st = { stored, psize, comp, cksum };
	if (blksz != lsize || off % blksz != 0)
		err = SET_ERROR(EINVAL);
	else
		err = dmu_write_block(dn, off / blksz, 0, lsize, buf, true, tx->tx_txg, &st);
	if (err == 0)
		dmu_pool_written_add(os->os_dp, tx->tx_txg, lsize);
	dnode_rele(dn);
	return (err);
}

int
dmu_object_gen(objset_t *os, uint64_t obj, uint64_t *gen)
{
	dnode_t *dn;
	int err = dnode_hold(os, obj, true, &dn);
	if (err != 0)
		return (err);
	pthread_mutex_lock(&dn->dn_mtx);
	*gen = dn->dn_phys.dn_gen;
	pthread_mutex_unlock(&dn->dn_mtx);
	dnode_rele(dn);
	return (0);
}

/* Add [start, end) to txg's free ranges of dn (dn_mtx held). */
static void
dnode_add_free_range(dnode_t *dn, uint64_t txg, uint64_t start, uint64_t end)
{
	dnode_txg_t *dt = &dn->dn_txg[TXG_IDX(txg)];
	TARN_ARRAY_APPEND(&dt->dt_ranges, free_range_t,
	    ((free_range_t){ .fr_start = start, .fr_end = end }));
}

int
dmu_free_range(objset_t *os, uint64_t obj, uint64_t off, uint64_t len, dmu_tx_t *tx)
{
	VERIFY(tx->tx_assigned);
	dnode_t *dn;
	int err = dnode_hold(os, obj, true, &dn);
	if (err != 0)
		return (err);
	uint64_t txg = tx->tx_txg;
	pthread_mutex_lock(&dn->dn_mtx);
	uint64_t blksz = dn->dn_blksz;
	pthread_mutex_unlock(&dn->dn_mtx);
	bool to_end = len == DMU_OBJECT_END || off + len < off;
	uint64_t end = to_end ? UINT64_MAX : off + len;

	/* Partial blocks at the edges: zero their part. */
	uint64_t first_whole = DIV_ROUND_UP(off, blksz);
	uint64_t end_whole = to_end ? UINT64_MAX : end / blksz;
	pthread_mutex_lock(&dn->dn_mtx);
	uint64_t maxblkid = dn->dn_maxblkid;
	pthread_mutex_unlock(&dn->dn_mtx);
	if (off % blksz != 0 && off / blksz <= maxblkid) {
		uint64_t zend = MIN(end, (off / blksz + 1) * blksz);
		void *zeros = tarn_alloc(zend - off);
		err = dmu_write_block(dn, off / blksz, off % blksz, zend - off, zeros, false, txg, NULL);
		tarn_free(zeros);
	}
	/* the tail block, unless the head above already zeroed it */
	if (err == 0 && !to_end && end % blksz != 0 && end / blksz >= first_whole &&
	    (off % blksz == 0 || end / blksz != off / blksz) && end / blksz <= maxblkid) {
		void *zeros = tarn_alloc(end % blksz);
		err = dmu_write_block(dn, end / blksz, 0, end % blksz, zeros, false, txg, NULL);
		tarn_free(zeros);
	}
	if (err == 0 && first_whole < end_whole) {
		pthread_mutex_lock(&dn->dn_mtx);
		dmu_loan_wait_locked(dn);
		/* Cached blocks in the range become hole records. */
		dbuf_t *db;
		DN_FOREACH_DBUF(dn, db) {
			if (db->db_level != 0 || db->db_blkid < first_whole ||
			    db->db_blkid >= end_whole || db->db_state != DB_CACHED)
				continue;
			dirty_record_t *dr = dbuf_dirty(db, txg);
			memset(dr->dr_data, 0, dr->dr_size);
			dr->dr_hole = true;
		}
		dnode_txg_t *dt = &dn->dn_txg[TXG_IDX(txg)];
		if (to_end) {
			if (!dt->dt_trunc || first_whole < dt->dt_trunc_blkid) {
				dt->dt_trunc = true;
				dt->dt_trunc_blkid = first_whole;
				dt->dt_trunc_applied = false;
			}
			dn->dn_maxblkid = first_whole > 0 ? first_whole - 1 : 0;
		} else {
			dnode_add_free_range(dn, txg, first_whole, end_whole);
		}
		dnode_setdirty(dn, txg);
		pthread_mutex_unlock(&dn->dn_mtx);
	}
	dnode_rele(dn);
	return (err);
}

int
dmu_bonus_read(objset_t *os, uint64_t obj, void *buf, uint32_t len)
{
	dnode_t *dn;
	int err = dnode_hold(os, obj, true, &dn);
	if (err != 0)
		return (err);
	pthread_mutex_lock(&dn->dn_mtx);
	if (len > dn->dn_bonuslen)
		err = SET_ERROR(EINVAL);
	else
		memcpy(buf, dn->dn_bonus, len);
	pthread_mutex_unlock(&dn->dn_mtx);
	dnode_rele(dn);
	return (err);
}

int
dmu_bonus_write(objset_t *os, uint64_t obj, const void *buf, uint32_t len, dmu_tx_t *tx)
{
	VERIFY(tx->tx_assigned);
	dnode_t *dn;
	int err = dnode_hold(os, obj, true, &dn);
	if (err != 0)
		return (err);
	pthread_mutex_lock(&dn->dn_mtx);
	if (len > dn->dn_bonuslen) {
		err = SET_ERROR(EINVAL);
	} else {
		memcpy(dn->dn_bonus, buf, len);
		dnode_txg_t *dt = &dn->dn_txg[TXG_IDX(tx->tx_txg)];
		memcpy(dt->dt_bonus, dn->dn_bonus, DN_MAX_BONUSLEN);
		dt->dt_bonus_dirty = true;
		dnode_setdirty(dn, tx->tx_txg);
	}
	pthread_mutex_unlock(&dn->dn_mtx);
	dnode_rele(dn);
	return (err);
}

int
dmu_object_set_blocksize(objset_t *os, uint64_t obj, uint32_t blksz, dmu_tx_t *tx)
{
	if (!blksz_valid(blksz))
		return (SET_ERROR(EINVAL));
	dnode_t *dn;
	int err = dnode_hold(os, obj, true, &dn);
	if (err != 0)
		return (err);
	pthread_mutex_lock(&dn->dn_mtx);
	bool ok = dn->dn_maxblkid == 0;
	uint32_t old = dn->dn_blksz;
	pthread_mutex_unlock(&dn->dn_mtx);
	if (!ok) {
		dnode_rele(dn);
		return (SET_ERROR(ENOTSUP));
	}
	if (old == blksz) {
		dnode_rele(dn);
		return (0);
	}
	dbuf_t *db;
	err = dmu_hold_read(dn, 0, &db);
	if (err != 0) {
		dnode_rele(dn);
		return (err);
	}
	pthread_mutex_lock(&dn->dn_mtx);
	dmu_loan_wait_locked(dn);
	/* Blocks beyond 0 still waiting to be written (e.g. as holes after a truncate)
	 * have the old size: no change until they are on disk. */
	dbuf_t *d;
	DN_FOREACH_DBUF(dn, d) {
		if (d->db_level == 0 && d->db_blkid != 0 && d->db_dirty != NULL) {
			pthread_mutex_unlock(&dn->dn_mtx);
			dbuf_rele(db);
			dnode_rele(dn);
			return (SET_ERROR(ENOTSUP));
		}
	}
	dirty_record_t *dr = dbuf_dirty(db, tx->tx_txg);
	if (dr->dr_data == db->db_data) {
		void *nb = dbuf_buf_alloc(blksz, true);
		memcpy(nb, db->db_data, MIN(blksz, db->db_size));
		dbuf_buf_free(db->db_data, db->db_size);
		db->db_data = dr->dr_data = nb;
		db->db_size = dr->dr_size = blksz;
		dmu_pool_dirty_add(os->os_dp, tx->tx_txg, blksz);
	}
	dn->dn_blksz = blksz;
	dn->dn_txg[TXG_IDX(tx->tx_txg)].dt_blksz = blksz;
	/* clean cached blocks beyond 0 have the old size: drop them */
	DN_FOREACH_DBUF(dn, d) {
		if (d->db_level == 0 && d->db_blkid != 0 && d->db_holds == 0 &&
		    d->db_dirty == NULL && d->db_state != DB_READING) {
			dbuf_arc_forget(d);
			dbuf_evict_one(d);
		}
	}
	pthread_mutex_unlock(&dn->dn_mtx);
	dbuf_rele(db);
	dnode_rele(dn);
	return (0);
}
