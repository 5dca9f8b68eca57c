/*
 * spa_scan.c — scrub and resilver: a thread per pool that reads and
 * verifies every block (every copy, every RAID-Z column), repairing bad
 * ones, with progress, pause/resume/stop and a result kept in the MOS.
 *
 * Theory of the scan.
 *
 * What is walked.  A scan walks the tree of the last *committed* txg: it
 * waits for the open txg to sync, takes the MOS root from the uberblock
 * just written (spa_ub), and opens private read-only instances of the
 * MOS and of every object set named "os:NAME" in that MOS's pool
 * directory, in name order (the MOS first).  The live instances are not
 * used because their roots move during a sync, and blocks of a txg being
 * synced may be rewritten in place or freed at once (never committed):
 * a scrub "repairing" such a block would destroy new data.  Each object
 * set is walked with dmu_traverse(ZIO_FLAG_SCRUB): the dmu reads the
 * metadata itself; the callback queues every level-0 data block on a zio
 * batch (up to SCAN_BATCH_MAX reads in flight, checksums and RAID-Z math
 * on the zio workers), so a scrub keeps every core busy.  A file system's
 * intent-log blocks that a crash left claimed for replay are in no tree:
 * after its walk the scan follows that chain from the committed header
 * (zil_scan), every block read with the same repairs, a resilver too
 * (live chains, freed within a txg or two, are left alone).  A resilver is
 * the same walk with min_txg: blocks born before it are skipped with
 * their whole subtree (an indirect block is born no earlier than its
 * children), and the scrub reads' repairs (plus the vdev layer writing
 * each verified block into leaves that missed its txg, vdev_dtl.c) are
 * what copy the data onto a new or returning device.  sss_txg records
 * the txg of the tree walked; when a resilver ends, spa_vdev.c hears of
 * it (spa_vdev_resilver_done) and clears what it covered.
 *
 * Why the walk is safe while the pool changes.  Blocks of the committed
 * tree may be freed by later txgs while the walk runs; a free matures
 * after TXG_DEFER_SIZE txgs, and its space could then be allocated again,
 * so the scan would read (and a repair overwrite) someone else's data.
 * The scan therefore holds the pool's frees (metaslab_class_hold_frees)
 * for its whole walk: matured frees stay unallocatable until it releases
 * them.  The hold is taken before the committed root is read, so every
 * block of that tree is either live or held.  Safety valve: when held
 * space (beyond SCAN_HELD_MIN) exceeds what is still allocatable, or
 * leaves less than 4x the slop allocatable — a long pause, or heavy
 * rewriting during a slow scan — the walk lets go (releases the hold)
 * and restarts the current object set from a new committed root (a
 * paused scan waits without a hold and restarts the object set on
 * resume).  Before that, from half as much held space on, the scan stops
 * yielding to user I/O, to end sooner.  Users never get ENOSPC because
 * of a scan; a scan under sustained heavy rewriting may restart often.
 *
 * Never starving user I/O.  Every SCAN_WINDOW_NS the scan compares the
 * pool's zio counters with its own reads: reads it did not issue, or
 * block writes (txg syncs of user data), mean the pool is busy.  While
 * busy, at most SCAN_BUSY_BATCH data reads are in flight and the scan
 * sleeps SCAN_BUSY_SLEEP_US after each batch, leaving the devices mostly
 * to user I/O; an idle pool is scanned at full speed.  (There are no
 * per-class vdev queues yet; this is the scan's lowest priority.)
 *
 * States (ss_lock).  spa_scan_start makes the stat SCANNING and starts
 * the thread; spa_scan_pause sets sss_paused (the callback then
 * finishes the reads it has in flight and blocks until resume or stop,
 * marked ss_parked, and only then does spa_scan_wait return, so the
 * figures hold still); spa_scan_start on a
 * paused scrub resumes it; spa_scan_stop ends it CANCELED; a walk that
 * completes ends FINISHED.  A resilver request cancels a running scrub; a
 * second resilver request restarts the resilver from the lower min_txg
 * (a second new device needs everything the first did).  The stat is
 * written to the MOS object "scan" in the sync of every txg in which it
 * changed (spa_scan_sync), and state changes kick a txg.  When the pool
 * closes during a walk (spa_scan_fini) the stat stays SCANNING; the next
 * open restarts the walk from the beginning (spa_scan_start_pool), a
 * paused one stays paused until resumed (again from the beginning).
 * Examined/issued/errors restart from 0 then; repaired bytes are kept.
 *
 * Counters.  examined = issued = the DVA allocated sizes of the blocks
 * visited (every block visited is read); repaired = growth of the zio
 * context's heal bytes (vdev-level and ditto repairs) during the walk,
 * which includes repairs made by user reads meanwhile; errors = blocks
 * that could not be read intact (they also go to the error log, and a
 * full walk that finishes replaces the error log with what it found).
 */
#include "spa_scan_impl.h"

#include <time.h>
#include <unistd.h>

#define SCAN_PHYS_MAGIC     0x4e4143534e524154ULL   /* "TARNSCAN" little-endian */
#define SCAN_PHYS_VERSION   1
#define SCAN_OBJ_BLKSZ      SPA_MINBLOCKSIZE
#define SCAN_BATCH_MAX      64              /* data reads in flight, idle pool */
#define SCAN_BATCH_BYTES    (16 * MiB)
#define SCAN_BUSY_BATCH     4               /* ... busy pool */
#define SCAN_BUSY_SLEEP_US  2000
#define SCAN_WINDOW_NS      (10 * 1000000ULL)
#define SCAN_BUSY_OPS       2               /* foreign ops in a window: busy */
#define SCAN_HELD_MIN       (16 * MiB)       /* never let go for less */

/* The MOS object "scan": one 256-byte record. */
typedef struct spa_scan_phys {
	uint64_t        ssp_magic;
	uint64_t        ssp_version;
	spa_scan_stat_t ssp_stat;
	uint64_t        ssp_pad[14];
} spa_scan_phys_t;
_Static_assert(sizeof (spa_scan_stat_t) == 128, "scan stat is 128 bytes");
_Static_assert(sizeof (spa_scan_phys_t) == 256, "scan record is 256 bytes");

typedef struct spa_scan {
	pthread_mutex_t ss_ctl_lock;    /* serialises start/stop/fini (held across joins) */
	pthread_mutex_t ss_lock;        /* guards everything below */
	pthread_cond_t  ss_cv;          /* state changes */
	spa_scan_stat_t ss_stat;
	bool            ss_dirty;       /* ss_stat not yet written to the MOS */
	bool            ss_have_thread; /* ss_thread to be joined */
	bool            ss_walking;     /* the thread has not finished */
	bool            ss_parked;      /* paused, no reads in flight: the stat holds still */
	bool            ss_stop;        /* cancel the walk */
	bool            ss_exit;        /* the pool closes: stop, stay SCANNING */
	pthread_t       ss_thread;
	uint64_t        ss_obj;         /* MOS object "scan" (0: none yet) */
	uint64_t        ss_heal_base;   /* zio heal bytes when the walk began */
	uint64_t        ss_repaired_base; /* sss_repaired carried from before */
} spa_scan_t;

/* One data block read queued on the batch. */
typedef struct scan_read {
	uint64_t sr_obj;
	uint64_t sr_blkid;
	void    *sr_buf;
	int      sr_err;
} scan_read_t;

/* The walk's working state (the scan thread's own). */
typedef struct scan_walk {
	spa_t       *sw_spa;
	spa_scan_t  *sw_sc;
	zio_ctx_t   *sw_zc;
	uint64_t     sw_min_txg;
	objset_t    *sw_os;             /* being walked */
	zio_batch_t *sw_batch;
	scan_read_t  sw_reads[SCAN_BATCH_MAX];
	int          sw_nreads;
	uint64_t     sw_bytes;          /* lsize of the queued reads */
	int          sw_pressure;       /* scan_pressure() as of the last window */
	/* where a walk that let go goes on */
	bool         sw_mos_done;       /* the MOS was walked */
	char         sw_done[SPA_DIR_NAMELEN]; /* object sets up to this name were */
	/* throttle */
	uint64_t     sw_win_start;
	uint64_t     sw_win_ops;        /* zio reads + failures + writes at window start */
	uint64_t     sw_win_own;        /* own reads at window start */
	uint64_t     sw_own;            /* reads the walk has done */
	bool         sw_busy;
	int          sw_since_sleep;
} scan_walk_t;

static const dmu_objset_props_t scan_mos_props = {
	.osp_checksum = ZIO_CHECKSUM_DEFAULT, .osp_compress = ZIO_COMPRESS_OFF,
	.osp_copies = 3, .osp_is_mos = true };
static const dmu_objset_props_t scan_os_props = {
	.osp_checksum = ZIO_CHECKSUM_DEFAULT, .osp_compress = ZIO_COMPRESS_OFF,
	.osp_copies = 1 };

/* ---- setup and teardown ---- */

void
spa_scan_init(spa_t *spa)
{
	spa_scan_t *sc = tarn_alloc(sizeof (*sc));
	VERIFY0(pthread_mutex_init(&sc->ss_ctl_lock, NULL));
	VERIFY0(pthread_mutex_init(&sc->ss_lock, NULL));
	VERIFY0(pthread_cond_init(&sc->ss_cv, NULL));
	spa->spa_scan = sc;
}

/* Join a thread that has ended or been told to (caller holds ss_ctl_lock). */
static void
scan_join(spa_scan_t *sc)
{
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	bool have = sc->ss_have_thread;
	sc->ss_have_thread = false;
	tarn_mutex_unlock(&sc->ss_lock);
	if (have)
		VERIFY0(pthread_join(sc->ss_thread, NULL));
}

void
spa_scan_fini(spa_t *spa)
{
	spa_scan_t *sc = spa->spa_scan;
	if (sc == NULL)
		return;
	tarn_mutex_lock(&sc->ss_ctl_lock, SPA_SCAN_CTL);
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	sc->ss_exit = true;
	pthread_cond_broadcast(&sc->ss_cv);
	tarn_mutex_unlock(&sc->ss_lock);
	scan_join(sc);
	tarn_mutex_unlock(&sc->ss_ctl_lock);
}

void
spa_scan_destroy(spa_t *spa)
{
	spa_scan_t *sc = spa->spa_scan;
	if (sc == NULL)
		return;
	spa_scan_fini(spa);
	pthread_mutex_destroy(&sc->ss_ctl_lock);
	pthread_mutex_destroy(&sc->ss_lock);
	pthread_cond_destroy(&sc->ss_cv);
	tarn_free(sc);
	spa->spa_scan = NULL;
}

/* ---- persistence ---- */

static bool
scan_stat_valid(const spa_scan_stat_t *s)
{
	return (s->sss_func <= SPA_SCAN_RESILVER && s->sss_state <= SPA_SCAN_STATE_CANCELED &&
	    s->sss_paused <= 1);
}

int
spa_scan_load(spa_t *spa)
{
	spa_scan_t *sc = spa->spa_scan;
	spa_scan_phys_t phys;
	uint64_t obj = 0;
	memset(&phys, 0, sizeof (phys));
	int e = spa_dir_lookup(spa, "scan", &obj);
	if (e == 0)
		e = dmu_read(spa->spa_mos, obj, 0, sizeof (phys), &phys);
	if (e == 0 && (phys.ssp_magic != SCAN_PHYS_MAGIC ||
	    phys.ssp_version != SCAN_PHYS_VERSION || !scan_stat_valid(&phys.ssp_stat)))
		e = SET_ERROR(EINVAL);
	if (e != 0 && e != ENOENT)
		tarn_dprintf("scan state unreadable (%d); forgotten\n", e);
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	memset(&sc->ss_stat, 0, sizeof (sc->ss_stat));
	if (e == 0)
		sc->ss_stat = phys.ssp_stat;
	sc->ss_obj = obj;           /* a damaged record is overwritten */
	sc->ss_dirty = false;
	tarn_mutex_unlock(&sc->ss_lock);
	return (0);     /* a lost scan result never stops an import */
}

/* Create the MOS object "scan" in syncing context. */
static int
scan_obj_create(spa_t *spa, dmu_tx_t *tx, uint64_t *objp)
{
	int e = spa_dir_lookup(spa, "scan", objp);
	if (e != ENOENT)
		return (e);
	e = dmu_object_alloc(spa->spa_mos, DMU_OT_UINT64, SCAN_OBJ_BLKSZ, DMU_OT_NONE, 0,
	    tx, objp);
	if (e == 0)
		e = spa_dir_add(spa, "scan", *objp, tx);
	return (e);
}

int
spa_scan_sync(spa_t *spa, uint64_t txg)
{
	spa_scan_t *sc = spa->spa_scan;
	spa_scan_phys_t phys;
	memset(&phys, 0, sizeof (phys));
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	if (sc->ss_stat.sss_paused)
		pthread_cond_broadcast(&sc->ss_cv);     /* a paused walk checks its hold */
	bool dirty = sc->ss_dirty;
	sc->ss_dirty = false;
	phys.ssp_stat = sc->ss_stat;
	uint64_t obj = sc->ss_obj;
	tarn_mutex_unlock(&sc->ss_lock);
	if (!dirty || spa->spa_readonly)
		return (0);
	phys.ssp_magic = SCAN_PHYS_MAGIC;
	phys.ssp_version = SCAN_PHYS_VERSION;
	dmu_tx_t *tx = dmu_tx_create_syncing(spa->spa_mos, txg);
	int e = obj == 0 ? scan_obj_create(spa, tx, &obj) : 0;
	if (e == 0)
		e = dmu_write(spa->spa_mos, obj, 0, sizeof (phys), &phys, tx);
	dmu_tx_commit(tx);
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	if (e == 0)
		sc->ss_obj = obj;
	else
		sc->ss_dirty = true;
	tarn_mutex_unlock(&sc->ss_lock);
	return (e);
}

/* ---- reading ---- */

void
spa_scan_get_stat(spa_t *spa, spa_scan_stat_t *out)
{
	spa_scan_t *sc = spa->spa_scan;
	memset(out, 0, sizeof (*out));
	if (sc == NULL)
		return;
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	*out = sc->ss_stat;
	tarn_mutex_unlock(&sc->ss_lock);
}

void
spa_scan_rate(const spa_scan_stat_t *s, uint64_t now, uint64_t *rate, uint64_t *secs_left)
{
	uint64_t r = 0, left = 0;
	if (s->sss_state == SPA_SCAN_STATE_SCANNING && now > s->sss_pass_start) {
		r = s->sss_pass_issued / (now - s->sss_pass_start);
		uint64_t todo = s->sss_to_examine > s->sss_examined ?
		    s->sss_to_examine - s->sss_examined : 0;
		left = r > 0 ? todo / r : 0;
	}
	if (rate != NULL)
		*rate = r;
	if (secs_left != NULL)
		*secs_left = left;
}

/* ---- the walk: callback side ---- */

static void
scan_stat_add(spa_scan_t *sc, uint64_t bytes, uint64_t errors)
{
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	sc->ss_stat.sss_examined += bytes;
	sc->ss_stat.sss_issued += bytes;
	sc->ss_stat.sss_pass_issued += bytes;
	sc->ss_stat.sss_errors += errors;
	sc->ss_dirty = true;
	tarn_mutex_unlock(&sc->ss_lock);
}

/* Wait for the queued data reads; count and report the failures. */
static void
scan_flush(scan_walk_t *w)
{
	if (w->sw_batch == NULL)
		return;
	(void) zio_batch_wait(w->sw_batch);
	w->sw_batch = NULL;
	uint64_t errors = 0;
	for (int i = 0; i < w->sw_nreads; i++) {
		scan_read_t *r = &w->sw_reads[i];
		if (r->sr_err != 0) {
			errors++;
			dmu_pool_report_error(spa_dmu_pool(w->sw_spa), w->sw_os, r->sr_obj, 0,
			    r->sr_blkid, r->sr_err);
		}
		tarn_free(r->sr_buf);
	}
	w->sw_own += (uint64_t)w->sw_nreads;
	w->sw_nreads = 0;
	w->sw_bytes = 0;
	if (errors != 0)
		scan_stat_add(w->sw_sc, 0, errors);
}

static void
scan_queue_read(scan_walk_t *w, uint64_t obj, const blkptr_t *bp, uint64_t blkid)
{
	if (bp->bp_lsize == 0 || bp->bp_lsize > SPA_MAXBLOCKSIZE) {
		/* a bp no valid tree holds: nothing to read */
		dmu_pool_report_error(spa_dmu_pool(w->sw_spa), w->sw_os, obj, 0, blkid, ECKSUM);
		scan_stat_add(w->sw_sc, 0, 1);
		return;
	}
	if (w->sw_batch == NULL)
		w->sw_batch = zio_batch_create(w->sw_zc);
	scan_read_t *r = &w->sw_reads[w->sw_nreads++];
	r->sr_obj = obj;
	r->sr_blkid = blkid;
	r->sr_err = 0;
	r->sr_buf = tarn_alloc(bp->bp_lsize);
	zio_batch_read(w->sw_batch, bp, r->sr_buf, ZIO_FLAG_SCRUB, &r->sr_err);
	w->sw_bytes += bp->bp_lsize;
	int limit = w->sw_busy ? SCAN_BUSY_BATCH : SCAN_BATCH_MAX;
	if (w->sw_nreads >= limit || w->sw_bytes >= SCAN_BATCH_BYTES)
		scan_flush(w);
}

/*
 * How much the held frees weigh: 0 nothing to worry about; 1 heavy (more
 * than half what is still allocatable: hurry); 2 too much (more than is
 * allocatable, or less than 4x the slop is left: let go).
 */
static int
scan_pressure(scan_walk_t *w)
{
	uint64_t held = metaslab_class_held_space(w->sw_spa->spa_mc);
	if (held <= SCAN_HELD_MIN)
		return (0);
	spa_space_t ss;
	spa_get_space(w->sw_spa, &ss);
	uint64_t avail = ss.ss_free;
	if (held > avail || avail < 4 * ss.ss_slop)
		return (2);
	return (held > avail / 2 ? 1 : 0);
}

/*
 * Between blocks: stop (ECANCELED), pause (block here until resumed;
 * EAGAIN to let go when frees pile up), or the valve (EAGAIN).
 */
static int
scan_check(scan_walk_t *w)
{
	spa_scan_t *sc = w->sw_sc;
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	for (;;) {
		if (sc->ss_stop || sc->ss_exit) {
			tarn_mutex_unlock(&sc->ss_lock);
			return (SET_ERROR(ECANCELED));
		}
		if (!sc->ss_stat.sss_paused)
			break;
		if (w->sw_nreads > 0) {
			tarn_mutex_unlock(&sc->ss_lock);
			scan_flush(w);
			tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
			continue;
		}
		if (scan_pressure(w) == 2) {
			sc->ss_parked = false;
			tarn_mutex_unlock(&sc->ss_lock);
			return (SET_ERROR(EAGAIN));
		}
		if (!sc->ss_parked) {
			sc->ss_parked = true;
			pthread_cond_broadcast(&sc->ss_cv);     /* spa_scan_wait */
		}
		/* woken by every txg (spa_scan_sync) to look at the held frees */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&sc->ss_cv, &sc->ss_lock, &ts);
	}
	sc->ss_parked = false;
	tarn_mutex_unlock(&sc->ss_lock);
	return (w->sw_pressure == 2 ? SET_ERROR(EAGAIN) : 0);
}

/*
 * Once a window: is user I/O going on (yield to it unless the held frees
 * weigh)?  Refresh the held-frees pressure and the repaired bytes.
 */
static void
scan_throttle(scan_walk_t *w)
{
	uint64_t now = tarn_now_ns();
	if (now - w->sw_win_start >= SCAN_WINDOW_NS) {
		zio_stats_t zs;
		zio_ctx_stats(w->sw_zc, &zs);
		uint64_t ops = zs.zs_reads + zs.zs_read_failures + zs.zs_writes;
		uint64_t foreign = ops - w->sw_win_ops;
		uint64_t own = w->sw_own - w->sw_win_own;
		w->sw_pressure = scan_pressure(w);
		w->sw_busy = foreign > own + SCAN_BUSY_OPS && w->sw_pressure == 0;
		w->sw_win_start = now;
		w->sw_win_ops = ops;
		w->sw_win_own = w->sw_own;
		spa_scan_t *sc = w->sw_sc;
		tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
		sc->ss_stat.sss_repaired = sc->ss_repaired_base + (zs.zs_heal_bytes - sc->ss_heal_base);
		tarn_mutex_unlock(&sc->ss_lock);
	}
	if (w->sw_busy && ++w->sw_since_sleep >= SCAN_BUSY_BATCH) {
		scan_flush(w);
		w->sw_since_sleep = 0;
		usleep(SCAN_BUSY_SLEEP_US);
	}
}

static int
scan_cb(void *arg, objset_t *os, uint64_t obj, const blkptr_t *bp, uint64_t blkid)
{
	scan_walk_t *w = arg;
	int rc = scan_check(w);
	if (rc != 0)
		return (rc);
	uint64_t asize = 0;
	for (int d = 0; d < bp->bp_ndvas && d < SPA_DVAS_PER_BP; d++) {
		if (DVA_IS_VALID(&bp->bp_dva[d]))
			asize += DVA_ASIZE(&bp->bp_dva[d]);
	}
	scan_stat_add(w->sw_sc, asize, 0);
	/* the dmu reads metadata (obj 0, levels > 0) itself; data is ours */
	if (bp->bp_level == 0 && obj != 0)
		scan_queue_read(w, obj, bp, blkid);     /* counted as own when done */
	else
		w->sw_own++;    /* read by the dmu before the next callback */
	scan_throttle(w);
	return (0);
}

/* ---- the walk: object sets ---- */

typedef struct scan_os_ent {
	char     soe_name[SPA_DIR_NAMELEN];
	uint64_t soe_obj;           /* MOS object holding the root; 0: soe_bp */
	blkptr_t soe_bp;            /* a snapshot's root (lib/dsl's hook) */
	uint64_t soe_min_txg;       /* blocks born earlier are walked elsewhere */
} scan_os_ent_t;

static int
scan_os_cmp(const void *a, const void *b)
{
	return (strcmp(((const scan_os_ent_t *)a)->soe_name, ((const scan_os_ent_t *)b)->soe_name));
}

static int scan_list_registered(objset_t *mos, scan_os_ent_t **entsp, int *np);

typedef struct scan_roots_arg {
	tarn_array_t sra_ents;      /* of scan_os_ent_t */
} scan_roots_arg_t;

static int
scan_root_cb(void *arg, const char *name, const blkptr_t *bp, uint64_t min_txg)
{
	scan_roots_arg_t *ra = arg;
	scan_os_ent_t *ent = tarn_array_push(&ra->sra_ents);
	snprintf(ent->soe_name, sizeof (ent->soe_name), "%s", name);
	ent->soe_bp = *bp;
	ent->soe_min_txg = min_txg;
	return (0);
}

/*
 * The object sets named in mos's pool directory and the snapshots the
 * dataset layer knows of, sorted by name.
 */
static int
scan_list_objsets(spa_t *spa, objset_t *mos, scan_os_ent_t **entsp, int *np)
{
	int e = scan_list_registered(mos, entsp, np);
	const spa_dsl_hooks_t *h = __atomic_load_n(&spa->spa_dsl_hooks, __ATOMIC_ACQUIRE);
	if (e != 0 || h == NULL || h->sdh_roots == NULL)
		return (e);
	scan_roots_arg_t ra;
	tarn_array_init(&ra.sra_ents, sizeof (scan_os_ent_t));
	e = h->sdh_roots(spa, mos, scan_root_cb, &ra);
	size_t extra = tarn_array_len(&ra.sra_ents);
	if (e == 0 && extra > 0) {
		*entsp = tarn_realloc(*entsp, sizeof (scan_os_ent_t) * ((size_t)*np + extra + 1));
		memcpy(*entsp + *np, tarn_array_base(&ra.sra_ents), sizeof (scan_os_ent_t) * extra);
		*np += (int)extra;
		qsort(*entsp, (size_t)*np, sizeof (scan_os_ent_t), scan_os_cmp);
	}
	tarn_array_fini(&ra.sra_ents);
	return (e);
}

/* The object sets named in mos's pool directory, sorted by name. */
static int
scan_list_registered(objset_t *mos, scan_os_ent_t **entsp, int *np)
{
	dmu_object_info_t doi;
	*entsp = NULL;
	*np = 0;
	int e = dmu_object_info(mos, SPA_DIR_OBJ, &doi);
	if (e != 0)
		return (e);
	uint64_t size = doi.doi_max_offset, n = size / sizeof (spa_dir_ent_t);
	spa_dir_ent_t *dir = tarn_alloc(size + 1);
	e = dmu_read(mos, SPA_DIR_OBJ, 0, size, dir);
	scan_os_ent_t *ents = tarn_alloc(sizeof (*ents) * (n + 1));
	int k = 0;
	for (uint64_t i = 0; e == 0 && i < n; i++) {
		if (dir[i].sde_obj == 0 || strncmp(dir[i].sde_name, "os:", 3) != 0)
			continue;
		snprintf(ents[k].soe_name, sizeof (ents[k].soe_name), "%.*s",
		    (int)(SPA_DIR_NAMELEN - 3), dir[i].sde_name + 3);
		ents[k++].soe_obj = dir[i].sde_obj;
	}
	tarn_free(dir);
	if (e != 0) {
		tarn_free(ents);
		return (e);
	}
	qsort(ents, (size_t)k, sizeof (*ents), scan_os_cmp);
	*entsp = ents;
	*np = k;
	return (0);
}

/* Open entry i-1 of the list (i = 0 is the MOS itself). */
static int
scan_open_os(scan_walk_t *w, objset_t *mos, const scan_os_ent_t *ent, objset_t **osp)
{
	blkptr_t bp = ent->soe_bp;
	int e = ent->soe_obj == 0 ? 0 : dmu_bonus_read(mos, ent->soe_obj, &bp, sizeof (bp));
	if (e == 0 && BP_IS_HOLE(&bp))
		return (SET_ERROR(ENOENT));         /* never synced: nothing to walk */
	if (e == 0)
		e = dmu_objset_open(spa_dmu_pool(w->sw_spa), &bp, &scan_os_props, osp);
	if (e != 0) {
		spa_errlog_add(w->sw_spa, ent->soe_name, 0, 0, 0);
		scan_stat_add(w->sw_sc, 0, 1);
	}
	return (e);
}

/*
 * The log blocks a crash left claimed for replay: no tree points to them,
 * so dmu_traverse does not see them.  Read in full also by a resilver
 * (there are few), which copies them onto a new device like any block.
 */
static void
scan_walk_zil(scan_walk_t *w, objset_t *os)
{
	if (dmu_objset_type(os) != DMU_OST_ZFS)
		return;
	zil_header_t zh;
	dmu_objset_zil_header(os, &zh);
	if (zh.zh_claim_txg == 0)
		return;
	zil_scan_stat_t zs;
	zil_scan(w->sw_zc, &zh, ZIO_FLAG_SCRUB, &zs);
	w->sw_own += zs.zss_blocks + zs.zss_errors;
	scan_stat_add(w->sw_sc, zs.zss_bytes, zs.zss_errors);
}

/* Walk one object set; on EAGAIN its counters are rolled back. */
static int
scan_walk_os(scan_walk_t *w, objset_t *os, const char *name, uint64_t min_txg)
{
	spa_scan_t *sc = w->sw_sc;
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	spa_scan_stat_t before = sc->ss_stat;
	tarn_mutex_unlock(&sc->ss_lock);
	spa_errlog_alias(w->sw_spa, os, name);
	w->sw_os = os;
	uint64_t errors = 0;
	int rc = dmu_traverse(os, 0, ZIO_FLAG_SCRUB, MAX(w->sw_min_txg, min_txg), scan_cb, w,
	    &errors);
	scan_flush(w);
	if (rc == 0)
		scan_walk_zil(w, os);
	w->sw_os = NULL;
	spa_errlog_unalias(w->sw_spa, os);
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	if (rc == EAGAIN) {
		uint64_t undo = sc->ss_stat.sss_issued - before.sss_issued;
		sc->ss_stat.sss_examined = before.sss_examined;
		sc->ss_stat.sss_issued = before.sss_issued;
		sc->ss_stat.sss_errors = before.sss_errors;
		sc->ss_stat.sss_pass_issued -= MIN(undo, sc->ss_stat.sss_pass_issued);
	} else {
		sc->ss_stat.sss_errors += errors;
	}
	sc->ss_dirty = true;
	tarn_mutex_unlock(&sc->ss_lock);
	return (rc);
}

/*
 * One walk, holding frees, of the object sets not yet walked: the MOS
 * unless sw_mos_done, then those named after sw_done.  0 when done,
 * ECANCELED when stopped, EAGAIN when it let go (sw_mos_done / sw_done
 * say where to go on: names, so object sets created meanwhile do not
 * shift it), EIO when it could not begin.
 */
static int
scan_walk(scan_walk_t *w)
{
	spa_t *spa = w->sw_spa;
	metaslab_class_hold_frees(spa->spa_mc);
	int rc = txg_wait_synced(spa_dmu_pool(spa), 0);
	objset_t *mos = NULL;
	if (rc == 0) {
		tarn_mutex_lock(&spa->spa_lock, SPA);
		blkptr_t rootbp = spa->spa_ub.ub_rootbp;
		uint64_t txg = spa->spa_ub.ub_txg;
		tarn_mutex_unlock(&spa->spa_lock);
		tarn_mutex_lock(&w->sw_sc->ss_lock, SPA_SCAN);
		if (w->sw_sc->ss_stat.sss_txg == 0)     /* the first walk's bounds all */
			w->sw_sc->ss_stat.sss_txg = txg;
		tarn_mutex_unlock(&w->sw_sc->ss_lock);
		rc = dmu_objset_open(spa_dmu_pool(spa), &rootbp, &scan_mos_props, &mos);
	}
	scan_os_ent_t *ents = NULL;
	int n = 0;
	if (rc == 0 && scan_list_objsets(spa, mos, &ents, &n) != 0)
		scan_stat_add(w->sw_sc, 0, 1);      /* the MOS walk reports the block */
	for (int i = 0; rc == 0 && i <= n; i++) {
		objset_t *os = mos;
		const char *name = i == 0 ? "<MOS>" : ents[i - 1].soe_name;
		if (i == 0 ? w->sw_mos_done : strcmp(name, w->sw_done) <= 0)
			continue;
		if (i == 0 || scan_open_os(w, mos, &ents[i - 1], &os) == 0) {
			rc = scan_walk_os(w, os, name, i == 0 ? 0 : ents[i - 1].soe_min_txg);
			if (os != mos)
				dmu_objset_close(os);
		}
		if (rc == 0 && i == 0)
			w->sw_mos_done = true;
		else if (rc == 0)
			snprintf(w->sw_done, sizeof (w->sw_done), "%s", name);
	}
	tarn_free(ents);
	if (mos != NULL)
		dmu_objset_close(mos);
	metaslab_class_release_frees(spa->spa_mc);
	return (rc == ECANCELED || rc == EAGAIN || rc == 0 ? rc : SET_ERROR(EIO));
}

/* After EAGAIN: wait (without a hold) while paused.  false: stopped. */
static bool
scan_wait_resume(spa_scan_t *sc)
{
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	if (sc->ss_stat.sss_paused) {
		sc->ss_parked = true;
		pthread_cond_broadcast(&sc->ss_cv);     /* spa_scan_wait */
	}
	while (sc->ss_stat.sss_paused && !sc->ss_stop && !sc->ss_exit)
		pthread_cond_wait(&sc->ss_cv, &sc->ss_lock);
	sc->ss_parked = false;
	bool go = !sc->ss_stop && !sc->ss_exit;
	tarn_mutex_unlock(&sc->ss_lock);
	return (go);
}

/*
 * The end of a walk: the error log first (whoever sees the result sees
 * the log it produced), then the result, a txg to persist it, and the
 * device layer's news.
 */
static void
scan_done(spa_t *spa, int rc)
{
	spa_scan_t *sc = spa->spa_scan;
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	bool closing = sc->ss_exit && !sc->ss_stop && rc != 0;
	bool full = sc->ss_stat.sss_min_txg == 0;
	tarn_mutex_unlock(&sc->ss_lock);
	if (full)
		spa_errlog_scrub_end(spa, rc == 0 && !closing);
	zio_stats_t zs;
	zio_ctx_stats(spa->spa_zio, &zs);
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	spa_scan_stat_t *s = &sc->ss_stat;
	s->sss_repaired = sc->ss_repaired_base + (zs.zs_heal_bytes - sc->ss_heal_base);
	if (!closing) {
		s->sss_state = rc == 0 ? SPA_SCAN_STATE_FINISHED : SPA_SCAN_STATE_CANCELED;
		s->sss_end_time = tarn_wall_sec();
		s->sss_paused = 0;
	}
	bool resilver = s->sss_func == SPA_SCAN_RESILVER;
	uint64_t txg = s->sss_txg, errors = s->sss_errors;
	sc->ss_dirty = true;
	sc->ss_walking = false;
	pthread_cond_broadcast(&sc->ss_cv);
	tarn_mutex_unlock(&sc->ss_lock);
	if (!closing) {
		(void) spa_history_log_internal(spa, 0, "scan %s errors=%" PRIu64,
		    rc == 0 ? "done" : "cancelled", errors);
		txg_kick(spa_dmu_pool(spa));
	}
	if (resilver && !closing)
		spa_vdev_resilver_done(spa, txg);   /* only wakes its thread */
}

static void *
scan_thread(void *arg)
{
	spa_t *spa = arg;
	spa_scan_t *sc = spa->spa_scan;
	scan_walk_t *w = tarn_alloc(sizeof (*w));
	w->sw_spa = spa;
	w->sw_sc = sc;
	w->sw_zc = spa->spa_zio;
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	w->sw_min_txg = sc->ss_stat.sss_min_txg;
	tarn_mutex_unlock(&sc->ss_lock);
	if (w->sw_min_txg == 0)
		spa_errlog_scrub_begin(spa);
	w->sw_win_start = tarn_now_ns();
	int rc;
	for (;;) {
		rc = scan_walk(w);
		if (rc != EAGAIN)
			break;
		w->sw_pressure = 0;
		if (!scan_wait_resume(sc)) {
			rc = SET_ERROR(ECANCELED);
			break;
		}
	}
	tarn_free(w);
	scan_done(spa, rc);
	return (NULL);
}

/*
 * Begin a walk (caller holds ss_ctl_lock, no thread to join).  With
 * `again` the stat's func, min_txg, start time and repaired bytes are
 * kept (a restart after import or a resumed persisted pause).
 */
static void
scan_begin(spa_t *spa, spa_scan_func_t func, uint64_t min_txg, bool again)
{
	spa_scan_t *sc = spa->spa_scan;
	spa_space_t ss;
	spa_get_space(spa, &ss);
	zio_stats_t zs;
	zio_ctx_stats(spa->spa_zio, &zs);
	uint64_t now = tarn_wall_sec();
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	spa_scan_stat_t *s = &sc->ss_stat;
	uint64_t start = again ? s->sss_start_time : now;
	uint64_t repaired = again ? s->sss_repaired : 0;
	memset(s, 0, sizeof (*s));
	s->sss_func = func;
	s->sss_state = SPA_SCAN_STATE_SCANNING;
	s->sss_start_time = start;
	s->sss_to_examine = ss.ss_alloc;
	s->sss_min_txg = min_txg;
	s->sss_pass_start = now;
	s->sss_repaired = repaired;
	sc->ss_repaired_base = repaired;
	sc->ss_heal_base = zs.zs_heal_bytes;
	sc->ss_stop = false;
	sc->ss_walking = true;
	sc->ss_parked = false;
	sc->ss_have_thread = true;
	sc->ss_dirty = true;
	VERIFY0(tarn_thread_create(&sc->ss_thread, NULL, scan_thread, spa));
	tarn_mutex_unlock(&sc->ss_lock);
	txg_kick(spa_dmu_pool(spa));
}

/* Stop the running walk and wait for its thread (caller holds ss_ctl_lock). */
static void
scan_cancel(spa_scan_t *sc)
{
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	sc->ss_stop = true;
	pthread_cond_broadcast(&sc->ss_cv);
	tarn_mutex_unlock(&sc->ss_lock);
	scan_join(sc);
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	sc->ss_stop = false;
	tarn_mutex_unlock(&sc->ss_lock);
}

/* ---- control ---- */

/*
 * Decide what a start request does (caller holds both locks): 0 to
 * begin a new walk (*again: keep the stat's identity), EALREADY when a
 * paused scrub was resumed, EINPROGRESS when the running walk must be
 * cancelled first, or an error.
 */
static int
scan_start_decide(spa_scan_t *sc, spa_scan_func_t func, uint64_t *min_txg, bool *again)
{
	spa_scan_stat_t *s = &sc->ss_stat;
	*again = false;
	if (s->sss_state != SPA_SCAN_STATE_SCANNING)
		return (0);
	if (s->sss_paused && func == SPA_SCAN_SCRUB && s->sss_func == SPA_SCAN_SCRUB) {
		if (!sc->ss_walking) {
			*again = true;      /* paused before a close: from the beginning */
			*min_txg = s->sss_min_txg;
			return (0);
		}
		s->sss_paused = 0;
		s->sss_pass_start = tarn_wall_sec();
		s->sss_pass_issued = 0;
		sc->ss_dirty = true;
		pthread_cond_broadcast(&sc->ss_cv);
		return (EALREADY);
	}
	if (func != SPA_SCAN_RESILVER)
		return (SET_ERROR(EBUSY));
	if (s->sss_func == SPA_SCAN_RESILVER)
		*min_txg = MIN(*min_txg, s->sss_min_txg);
	return (sc->ss_walking ? EINPROGRESS : 0);
}

int
spa_scan_start(spa_t *spa, spa_scan_func_t func, uint64_t min_txg)
{
	spa_scan_t *sc = spa->spa_scan;
	if (func != SPA_SCAN_SCRUB && func != SPA_SCAN_RESILVER)
		return (SET_ERROR(EINVAL));
	if (spa->spa_readonly)
		return (SET_ERROR(EROFS));
	if (spa->spa_dp == NULL || dmu_pool_suspended(spa->spa_dp))
		return (SET_ERROR(EIO));
	tarn_mutex_lock(&sc->ss_ctl_lock, SPA_SCAN_CTL);
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	bool again = false;
	int e = sc->ss_exit ? SET_ERROR(ENXIO) : scan_start_decide(sc, func, &min_txg, &again);
	tarn_mutex_unlock(&sc->ss_lock);
	if (e == EINPROGRESS) {
		scan_cancel(sc);        /* a resilver pre-empts */
		e = 0;
	}
	if (e == 0) {
		scan_join(sc);          /* a finished thread, if any */
		scan_begin(spa, func, min_txg, again);
	}
	tarn_mutex_unlock(&sc->ss_ctl_lock);
	/* zpool history -i: the walk covers the tree of the last synced txg */
	if (e == 0 && !again)
		(void) spa_history_log_internal(spa, 0, "scan setup func=%d mintxg=%" PRIu64
		    " maxtxg=%" PRIu64, (int)func, min_txg, spa_last_synced_txg(spa));
	if (e == EALREADY) {
		txg_kick(spa->spa_dp);
		e = 0;
	}
	return (e);
}

int
spa_scan_stop(spa_t *spa)
{
	spa_scan_t *sc = spa->spa_scan;
	tarn_mutex_lock(&sc->ss_ctl_lock, SPA_SCAN_CTL);
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	int e = 0;
	if (sc->ss_stat.sss_state != SPA_SCAN_STATE_SCANNING) {
		e = SET_ERROR(ENOENT);
	} else if (!sc->ss_walking) {
		/* paused when the pool was last closed: no thread */
		sc->ss_stat.sss_state = SPA_SCAN_STATE_CANCELED;
		sc->ss_stat.sss_end_time = tarn_wall_sec();
		sc->ss_stat.sss_paused = 0;
		sc->ss_dirty = true;
	}
	bool running = e == 0 && sc->ss_walking;
	tarn_mutex_unlock(&sc->ss_lock);
	if (running)
		scan_cancel(sc);
	tarn_mutex_unlock(&sc->ss_ctl_lock);
	if (e == 0 && !spa->spa_readonly && spa->spa_dp != NULL)
		txg_kick(spa->spa_dp);
	return (e);
}

int
spa_scan_pause(spa_t *spa)
{
	spa_scan_t *sc = spa->spa_scan;
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	int e = 0;
	if (sc->ss_stat.sss_state != SPA_SCAN_STATE_SCANNING)
		e = SET_ERROR(ENOENT);
	else if (sc->ss_stat.sss_func == SPA_SCAN_RESILVER)
		e = SET_ERROR(ENOTSUP);     /* a resilver restores redundancy: no pause */
	else if (!sc->ss_stat.sss_paused) {
		sc->ss_stat.sss_paused = 1;
		sc->ss_dirty = true;
		pthread_cond_broadcast(&sc->ss_cv);
	}
	tarn_mutex_unlock(&sc->ss_lock);
	if (e == 0 && !spa->spa_readonly && spa->spa_dp != NULL)
		txg_kick(spa->spa_dp);
	return (e);
}

int
spa_scan_wait(spa_t *spa)
{
	spa_scan_t *sc = spa->spa_scan;
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	/* paused: once the walker has flushed its reads and parked */
	while (sc->ss_walking && !(sc->ss_stat.sss_paused && sc->ss_parked) && !sc->ss_exit)
		pthread_cond_wait(&sc->ss_cv, &sc->ss_lock);
	tarn_mutex_unlock(&sc->ss_lock);
	return (0);
}

void
spa_scan_start_pool(spa_t *spa)
{
	spa_scan_t *sc = spa->spa_scan;
	if (spa->spa_readonly)
		return;
	tarn_mutex_lock(&sc->ss_ctl_lock, SPA_SCAN_CTL);
	tarn_mutex_lock(&sc->ss_lock, SPA_SCAN);
	spa_scan_stat_t s = sc->ss_stat;
	bool go = s.sss_state == SPA_SCAN_STATE_SCANNING && !s.sss_paused && !sc->ss_walking &&
	    !sc->ss_exit && (s.sss_func == SPA_SCAN_SCRUB || s.sss_func == SPA_SCAN_RESILVER);
	tarn_mutex_unlock(&sc->ss_lock);
	if (go) {
		scan_join(sc);
		scan_begin(spa, (spa_scan_func_t)s.sss_func, s.sss_min_txg, true);
	}
	tarn_mutex_unlock(&sc->ss_ctl_lock);
}
