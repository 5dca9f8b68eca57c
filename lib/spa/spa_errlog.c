/*
 * spa_errlog.c — the persistent error log: every block that could not be
 * read intact (object set, object, level, block id), kept in memory as a
 * sorted set without duplicates and in the MOS object "errlog", listed by
 * `status -v` until a full scrub finds the block good or gone.
 *
 * Where entries come from.  Every read that could not be repaired is
 * logged when it fails, metadata included, not only when a scrub finds
 * it: the dmu calls spa_errlog_report for every block of an object that
 * failed to read (user reads, traversals, the scan, the space maps and
 * other MOS objects read at import), and an object set whose root block
 * cannot be read is logged as its object 0 (spa_objset_open, the scan).
 * The report may come from deep inside the dmu or the sync thread with
 * locks held, so it only takes el_lock: object sets it cannot name
 * without spa_lock (spa_objset_name) wait in a small pending list and are
 * named later, at the next sync or listing.  The scan walks private
 * object set instances and names them here (spa_errlog_alias).
 *
 * When entries go.  A full walk (a scrub, or a resilver from txg 0)
 * collects what it finds in a second set, together with every other
 * report made while it runs; when it finishes, that set becomes the log:
 * blocks it read intact, and blocks freed since, drop out.  A walk that
 * is stopped changes nothing.
 *
 * On disk (docs/FORMAT.md "Error log"): 128-byte records in 16 KiB blocks,
 * rewritten whole in the sync of a txg in which the log changed; the
 * bonus holds a magic, a version and the count.  At most ERRLOG_MAX
 * entries are kept (further ones are only counted).
 */
#include "spa_scan_impl.h"

#define ERRLOG_MAX         65536
#define ERRLOG_PENDING_MAX 4096
#define ERRLOG_ALIAS_MAX   8
#define ERRLOG_BLKSZ       (16 * KiB)
#define ERRLOG_MAGIC       0x474f4c5252454154ULL   /* "TAERRLOG" little-endian */
#define ERRLOG_VERSION     1

/* One record, on disk and in memory. */
typedef struct spa_errlog_rec {
	char     ser_objset[64];        /* NUL-terminated */
	uint64_t ser_object;
	uint64_t ser_level;
	uint64_t ser_blkid;
	uint64_t ser_time;              /* first recorded, seconds since the epoch */
	uint64_t ser_pad[4];
} spa_errlog_rec_t;
_Static_assert(sizeof (spa_errlog_rec_t) == 128, "error log records are 128 bytes");

/* The bonus of the "errlog" object. */
typedef struct spa_errlog_phys {
	uint64_t sep_magic;
	uint64_t sep_version;
	uint64_t sep_count;             /* records in the object */
	uint64_t sep_pad;
} spa_errlog_phys_t;

typedef struct el_set {
	tarn_array_t es_v;      /* spa_errlog_rec_t sorted by (objset, object, level, blkid) */
} el_set_t;

typedef struct el_pending {
	objset_t *ep_os;
	uint64_t  ep_obj;
	uint64_t  ep_level;
	uint64_t  ep_blkid;
	uint64_t  ep_time;
	bool      ep_scrub;             /* reported while a full walk collected */
} el_pending_t;

typedef struct el_alias {
	objset_t *ea_os;
	char      ea_name[64];
} el_alias_t;

typedef struct spa_errlog {
	pthread_mutex_t el_lock;        /* guards everything below */
	el_set_t        el_log;
	el_set_t        el_scrub;       /* found by the running full walk */
	bool            el_collecting;
	el_pending_t    el_pend[ERRLOG_PENDING_MAX];
	size_t          el_npend;
	el_alias_t      el_alias[ERRLOG_ALIAS_MAX];
	int             el_nalias;
	bool            el_dirty;       /* el_log not yet written */
	uint64_t        el_obj;         /* MOS object "errlog" (0: none yet) */
	uint64_t        el_synced_n;    /* records in the object as last written */
	uint64_t        el_dropped;     /* entries beyond ERRLOG_MAX */
} spa_errlog_t;

/* ---- the sorted set ---- */

static int
el_cmp(const spa_errlog_rec_t *a, const spa_errlog_rec_t *b)
{
	int c = strcmp(a->ser_objset, b->ser_objset);
	if (c != 0)
		return (c);
	if (a->ser_object != b->ser_object)
		return (a->ser_object < b->ser_object ? -1 : 1);
	if (a->ser_level != b->ser_level)
		return (a->ser_level < b->ser_level ? -1 : 1);
	if (a->ser_blkid != b->ser_blkid)
		return (a->ser_blkid < b->ser_blkid ? -1 : 1);
	return (0);
}

/* Insert unless present; false when the set is full.  *added: it was new. */
static bool
el_insert_new(el_set_t *es, const spa_errlog_rec_t *r, bool *added)
{
	size_t lo = 0, hi = tarn_array_len(&es->es_v);
	*added = false;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = el_cmp(tarn_array_get(&es->es_v, mid), r);
		if (c == 0)
			return (true);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (tarn_array_len(&es->es_v) >= ERRLOG_MAX)
		return (false);
	*(spa_errlog_rec_t *)tarn_array_insert(&es->es_v, lo) = *r;
	*added = true;
	return (true);
}

static bool
el_insert(el_set_t *es, const spa_errlog_rec_t *r)
{
	bool added;
	return (el_insert_new(es, r, &added));
}

static void
el_set_clear(el_set_t *es)
{
	tarn_array_fini(&es->es_v);
}

static void
el_rec_make(spa_errlog_rec_t *r, const char *name, uint64_t obj, uint64_t level,
    uint64_t blkid, uint64_t time)
{
	memset(r, 0, sizeof (*r));
	snprintf(r->ser_objset, sizeof (r->ser_objset), "%s", name);
	r->ser_object = obj;
	r->ser_level = level;
	r->ser_blkid = blkid;
	r->ser_time = time;
}

/*
 * Add a named entry to the log (and the walk's set). Caller holds
 * el_lock.  Only a new entry makes the log dirty: a block read again and
 * again must not rewrite the log in every txg.
 */
static void
el_add_locked(spa_errlog_t *el, const spa_errlog_rec_t *r, bool scrub)
{
	bool added = false;
	if (!el_insert_new(&el->el_log, r, &added)) {
		el->el_dropped++;
		added = true;
	}
	if (scrub && el->el_collecting)
		(void) el_insert(&el->el_scrub, r);
	if (added)
		el->el_dirty = true;
}

/* Name the pending entries (takes spa_lock: never call with locks held). */
static void
el_resolve(spa_t *spa)
{
	spa_errlog_t *el = spa->spa_errlog;
	tarn_mutex_lock(&el->el_lock, SPA_ERRLOG);
	size_t n = el->el_npend;
	el_pending_t *p = NULL;
	if (n > 0) {
		p = tarn_alloc(n * sizeof (*p));
		memcpy(p, el->el_pend, n * sizeof (*p));
		el->el_npend = 0;
	}
	tarn_mutex_unlock(&el->el_lock);
	if (n == 0)
		return;
	spa_errlog_rec_t *recs = tarn_alloc(n * sizeof (*recs));
	for (size_t i = 0; i < n; i++) {
		char name[64];
		spa_objset_name(spa, p[i].ep_os, name, sizeof (name));
		el_rec_make(&recs[i], name, p[i].ep_obj, p[i].ep_level, p[i].ep_blkid,
		    p[i].ep_time);
	}
	tarn_mutex_lock(&el->el_lock, SPA_ERRLOG);
	for (size_t i = 0; i < n; i++)
		el_add_locked(el, &recs[i], p[i].ep_scrub);
	tarn_mutex_unlock(&el->el_lock);
	tarn_free(recs);
	tarn_free(p);
}

/* ---- the hooks ---- */

void
spa_errlog_init(spa_t *spa)
{
	spa_errlog_t *el = tarn_alloc(sizeof (*el));
	VERIFY0(pthread_mutex_init(&el->el_lock, NULL));
	tarn_array_init(&el->el_log.es_v, sizeof (spa_errlog_rec_t));
	tarn_array_init(&el->el_scrub.es_v, sizeof (spa_errlog_rec_t));
	spa->spa_errlog = el;
}

void
spa_errlog_fini(spa_t *spa)
{
	spa_scan_destroy(spa);      /* the scan state lives as long as the spa */
	spa_errlog_t *el = spa->spa_errlog;
	if (el == NULL)
		return;
	el_set_clear(&el->el_log);
	el_set_clear(&el->el_scrub);
	pthread_mutex_destroy(&el->el_lock);
	tarn_free(el);
	spa->spa_errlog = NULL;
}

void
spa_errlog_report(void *arg, objset_t *os, uint64_t obj, uint8_t level, uint64_t blkid,
    int error)
{
	spa_t *spa = arg;
	spa_errlog_t *el = spa->spa_errlog;
	if (el == NULL || error == ENOMEM)
		return;
	uint64_t now = tarn_wall_sec();
	tarn_mutex_lock(&el->el_lock, SPA_ERRLOG);
	const char *name = os == spa->spa_mos ? "<MOS>" : NULL;
	for (int i = 0; name == NULL && i < el->el_nalias; i++) {
		if (el->el_alias[i].ea_os == os)
			name = el->el_alias[i].ea_name;
	}
	if (name != NULL) {
		spa_errlog_rec_t r;
		el_rec_make(&r, name, obj, level, blkid, now);
		el_add_locked(el, &r, true);
	} else {
		bool dup = false;
		for (size_t i = 0; i < el->el_npend && !dup; i++) {
			const el_pending_t *p = &el->el_pend[i];
			dup = p->ep_os == os && p->ep_obj == obj && p->ep_level == level &&
			    p->ep_blkid == blkid;
		}
		if (!dup && el->el_npend < ERRLOG_PENDING_MAX) {
			el->el_pend[el->el_npend++] = (el_pending_t){ os, obj, level, blkid, now,
				el->el_collecting };
		} else if (!dup) {
			el->el_dropped++;
		}
		el->el_dirty = true;
	}
	tarn_mutex_unlock(&el->el_lock);
}

void
spa_errlog_add(spa_t *spa, const char *osname, uint64_t obj, uint8_t level, uint64_t blkid)
{
	spa_errlog_t *el = spa->spa_errlog;
	spa_errlog_rec_t r;
	el_rec_make(&r, osname, obj, level, blkid, tarn_wall_sec());
	tarn_mutex_lock(&el->el_lock, SPA_ERRLOG);
	el_add_locked(el, &r, true);
	tarn_mutex_unlock(&el->el_lock);
}

void
spa_errlog_alias(spa_t *spa, objset_t *os, const char *name)
{
	spa_errlog_t *el = spa->spa_errlog;
	tarn_mutex_lock(&el->el_lock, SPA_ERRLOG);
	VERIFY3S(el->el_nalias, <, ERRLOG_ALIAS_MAX);
	el_alias_t *a = &el->el_alias[el->el_nalias++];
	a->ea_os = os;
	snprintf(a->ea_name, sizeof (a->ea_name), "%s", name);
	tarn_mutex_unlock(&el->el_lock);
}

void
spa_errlog_unalias(spa_t *spa, objset_t *os)
{
	spa_errlog_t *el = spa->spa_errlog;
	tarn_mutex_lock(&el->el_lock, SPA_ERRLOG);
	for (int i = 0; i < el->el_nalias; i++) {
		if (el->el_alias[i].ea_os == os) {
			el->el_alias[i] = el->el_alias[--el->el_nalias];
			break;
		}
	}
	tarn_mutex_unlock(&el->el_lock);
}

void
spa_errlog_scrub_begin(spa_t *spa)
{
	spa_errlog_t *el = spa->spa_errlog;
	tarn_mutex_lock(&el->el_lock, SPA_ERRLOG);
	el_set_clear(&el->el_scrub);
	el->el_collecting = true;
	tarn_mutex_unlock(&el->el_lock);
}

void
spa_errlog_scrub_end(spa_t *spa, bool finished)
{
	spa_errlog_t *el = spa->spa_errlog;
	el_resolve(spa);
	tarn_mutex_lock(&el->el_lock, SPA_ERRLOG);
	el->el_collecting = false;
	if (finished) {
		el_set_t old = el->el_log;
		el->el_log = el->el_scrub;
		el->el_scrub = old;     /* cleared below */
		el->el_dropped = 0;
		el->el_dirty = true;
	}
	el_set_clear(&el->el_scrub);
	tarn_mutex_unlock(&el->el_lock);
}

/* ---- persistence ---- */

void
spa_errlog_reset(spa_t *spa)
{
	spa_errlog_t *el = spa->spa_errlog;
	tarn_mutex_lock(&el->el_lock, SPA_ERRLOG);
	el_set_clear(&el->el_log);
	el->el_npend = 0;
	el->el_dropped = 0;
	el->el_dirty = false;
	tarn_mutex_unlock(&el->el_lock);
}

int
spa_errlog_load(spa_t *spa)
{
	spa_errlog_t *el = spa->spa_errlog;
	spa_errlog_phys_t phys;
	uint64_t obj = 0;
	spa_errlog_rec_t *recs = NULL;
	memset(&phys, 0, sizeof (phys));
	int e = spa_dir_lookup(spa, "errlog", &obj);
	if (e == 0)
		e = dmu_bonus_read(spa->spa_mos, obj, &phys, sizeof (phys));
	if (e == 0 && (phys.sep_magic != ERRLOG_MAGIC || phys.sep_version != ERRLOG_VERSION ||
	    phys.sep_count > ERRLOG_MAX))
		e = SET_ERROR(EINVAL);
	if (e == 0 && phys.sep_count > 0) {
		recs = tarn_alloc(phys.sep_count * sizeof (*recs));
		e = dmu_read(spa->spa_mos, obj, 0, phys.sep_count * sizeof (*recs), recs);
	}
	if (e != 0 && e != ENOENT)
		tarn_dprintf("error log unreadable (%d); starting empty\n", e);
	/*
	 * Blocks that failed while this uberblock loaded (the MOS, space
	 * maps) are already in the log: keep them, add the persisted ones,
	 * and write the log at the next sync when there were any.
	 */
	tarn_mutex_lock(&el->el_lock, SPA_ERRLOG);
	el->el_obj = obj;
	el->el_synced_n = e == 0 ? phys.sep_count : 0;
	el->el_dirty = tarn_array_len(&el->el_log.es_v) > 0 || el->el_npend > 0 ||
	    el->el_dropped > 0;
	for (uint64_t i = 0; e == 0 && i < phys.sep_count; i++) {
		recs[i].ser_objset[sizeof (recs[i].ser_objset) - 1] = '\0';
		(void) el_insert(&el->el_log, &recs[i]);
	}
	tarn_mutex_unlock(&el->el_lock);
	tarn_free(recs);
	return (0);     /* a lost error log never stops an import */
}

static int
errlog_obj_create(spa_t *spa, dmu_tx_t *tx, uint64_t *objp)
{
	int e = spa_dir_lookup(spa, "errlog", objp);
	if (e != ENOENT)
		return (e);
	e = dmu_object_alloc(spa->spa_mos, DMU_OT_UINT8, ERRLOG_BLKSZ, DMU_OT_UINT64,
	    sizeof (spa_errlog_phys_t), tx, objp);
	if (e == 0)
		e = spa_dir_add(spa, "errlog", *objp, tx);
	return (e);
}

int
spa_errlog_sync(spa_t *spa, uint64_t txg)
{
	spa_errlog_t *el = spa->spa_errlog;
	if (spa->spa_readonly)
		return (0);
	el_resolve(spa);
	tarn_mutex_lock(&el->el_lock, SPA_ERRLOG);
	if (!el->el_dirty || (tarn_array_len(&el->el_log.es_v) == 0 && el->el_obj == 0)) {
		el->el_dirty = false;
		tarn_mutex_unlock(&el->el_lock);
		return (0);
	}
	uint64_t n = tarn_array_len(&el->el_log.es_v), obj = el->el_obj;
	uint64_t old_n = el->el_synced_n;
	spa_errlog_rec_t *recs = tarn_alloc((n + 1) * sizeof (*recs));
	if (n > 0)
		memcpy(recs, tarn_array_base(&el->el_log.es_v), n * sizeof (*recs));
	el->el_dirty = false;
	tarn_mutex_unlock(&el->el_lock);

	objset_t *mos = spa->spa_mos;
	dmu_tx_t *tx = dmu_tx_create_syncing(mos, txg);
	int e = obj == 0 ? errlog_obj_create(spa, tx, &obj) : 0;
	if (e == 0 && n > 0)
		e = dmu_write(mos, obj, 0, n * sizeof (*recs), recs, tx);
	if (e == 0 && n < old_n)
		e = dmu_free_range(mos, obj, n * sizeof (*recs), DMU_OBJECT_END, tx);
	spa_errlog_phys_t phys = { ERRLOG_MAGIC, ERRLOG_VERSION, n, 0 };
	if (e == 0)
		e = dmu_bonus_write(mos, obj, &phys, sizeof (phys), tx);
	dmu_tx_commit(tx);
	tarn_free(recs);
	tarn_mutex_lock(&el->el_lock, SPA_ERRLOG);
	if (e == 0) {
		el->el_obj = obj;
		el->el_synced_n = n;
	} else {
		el->el_dirty = true;
	}
	tarn_mutex_unlock(&el->el_lock);
	return (e);
}

/* ---- listing ---- */

/* Byte offset of the first byte a block covers, when the object can say. */
static uint64_t
errlog_offset(spa_t *spa, const spa_errlog_ent_t *ent)
{
	objset_t *os = NULL;
	if (strcmp(ent->see_objset, "<MOS>") == 0)
		os = spa->spa_mos;
	else if (spa_objset_open(spa, ent->see_objset, &os) != 0)
		return (0);
	dmu_object_info_t doi;
	if (os == NULL || dmu_object_info(os, ent->see_object, &doi) != 0)
		return (0);
	uint64_t shift = ent->see_level * (DN_INDIRECT_SHIFT - 7);   /* 1024 bps a level */
	uint64_t bs = doi.doi_data_block_size;
	if (shift >= 64 || ent->see_blkid > (UINT64_MAX >> shift) / MAX(bs, 1))
		return (0);
	return ((ent->see_blkid << shift) * bs);
}

int
spa_errlog_list(spa_t *spa, spa_errlog_ent_t **entsp, int *np)
{
	spa_errlog_t *el = spa->spa_errlog;
	el_resolve(spa);
	tarn_mutex_lock(&el->el_lock, SPA_ERRLOG);
	size_t n = tarn_array_len(&el->el_log.es_v);
	spa_errlog_ent_t *ents = tarn_alloc((n + 1) * sizeof (*ents));
	for (size_t i = 0; i < n; i++) {
		const spa_errlog_rec_t *r = tarn_array_get(&el->el_log.es_v, i);
		snprintf(ents[i].see_objset, sizeof (ents[i].see_objset), "%s", r->ser_objset);
		ents[i].see_object = r->ser_object;
		ents[i].see_level = r->ser_level;
		ents[i].see_blkid = r->ser_blkid;
	}
	tarn_mutex_unlock(&el->el_lock);
	for (size_t i = 0; i < n; i++)
		ents[i].see_offset = errlog_offset(spa, &ents[i]);
	if (n == 0) {
		tarn_free(ents);
		ents = NULL;
	}
	*entsp = ents;
	*np = (int)n;
	return (0);
}

uint64_t
spa_errlog_count(spa_t *spa)
{
	spa_errlog_t *el = spa->spa_errlog;
	el_resolve(spa);
	tarn_mutex_lock(&el->el_lock, SPA_ERRLOG);
	uint64_t n = tarn_array_len(&el->el_log.es_v) + el->el_dropped;
	tarn_mutex_unlock(&el->el_lock);
	return (n);
}
