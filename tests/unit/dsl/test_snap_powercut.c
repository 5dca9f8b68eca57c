/*
 * Power cuts during snapshot work (issue 28), on a small pool: a mirror
 * of two 64 MiB file vdevs, each behind a fault injector that holds
 * unflushed writes (the harness of tests/unit/spa/test_powercut.c).
 *
 * Each case runs a short random workload on the file systems pc/a and
 * pc/b and the clones made from their snapshots: object writes,
 * overwrites, truncates and frees through the dmu (contents from seeds),
 * dsl_snapshot_create (one name, or several file systems at once),
 * dsl_snapshot_destroy (ranges of neighbours, sometimes of two file
 * systems and with a name that does not exist, in one call;
 * DSL_DESTROY_DEFER when one is held), dsl_clone_create,
 * dsl_dataset_rollback (to the newest snapshot), dsl_hold, dsl_release
 * and dsl_dataset_promote (which must be refused, EEXIST, when the clone
 * has a snapshot named as one that would move: the workload sometimes
 * names a clone's snapshot so); and cuts the power at a random point:
 * between two operations (mode 0), from the txg-synced callback (mode
 * 1), or from another thread started just before a dataset operation
 * (often a promote), which blocks until its txg is synced, so the cut
 * comes while that sync is in flight (mode 2).  The cut kills both
 * devices and lets a random part of their held writes land (or none, for
 * one or both).
 *
 * Then the pool is abandoned and imported from the same files, read-only
 * first.  It must come back at a txg U that was committed (F, the last
 * synced) or whose uberblock was being written (F + 1), and hold exactly
 * the model: per file system, its objects (the bytes of each) and its
 * snapshots in order (name, frozen objects, holds, deferred destroy,
 * clones) and its origin.  Promoting clone C of H@o moves H's snapshots
 * up to and including o to C (renamed C@..., before C's own; the origins
 * of their clones follow), C takes H's origin and H becomes a clone of
 * C@o.  The model is rebuilt from the records of the case: a dataset
 * operation that returned 0 is in; object changes are in iff their tx's
 * txg <= U; the one operation that failed because of the cut may be in
 * or not, but whole (a two-name snapshot has both names or none; a
 * promote moved all its snapshots and swapped the origins, or nothing).  Also: every block verifies, and each file system's space adds
 * up (used = referenced + usedbysnapshots + usedbyrefreservation; its
 * snapshots' `used` sum to at most usedbysnapshots).  Then a read-write
 * import must choose U again and hold the same, and the next case goes
 * on from there.
 *
 * Every SP_EPOCH cases the pool is made anew; before that everything is
 * released and destroyed (a file system only once no snapshot of it has
 * clones: after promotes pc/a may be a clone of a clone's snapshot), and
 * once frees have matured the pool's
 * allocated space must be back within 1 MiB of where the epoch began (a
 * cut must not leak blocks).
 *
 * TARN_SNAP_POWERCUT_CUTS sets the number of cuts, TARN_SNAP_POWERCUT_SEED
 * the seed.  Rerun one case: TARN_SNAP_POWERCUT_SEED=S
 * TARN_SNAP_POWERCUT_CASE=N test_snap_powercut runs the cases of N's
 * epoch up to N (cuts from another thread depend on timing, so a rerun
 * is close to, not exactly, the original).  For triage,
 * TARN_SNAP_POWERCUT_MODE=M gives every case cut mode M, or with M = 3
 * no cut at all: the live pool is checked against the model instead
 * (M = 4: and then closed and imported again, and checked again).
 */
#include "tt.h"
#include "tt_pool.h"
#include "spa.h"
#include "dsl.h"
#include "vdev.h"
#include "tarn_array.h"

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <time.h>

#define SP_DEVSIZE   (64 * MiB)
#define SP_NDEV      2
#define SP_EPOCH     10          /* cases per pool */
#if defined(__SANITIZE_ADDRESS__)
#define SP_CUTS_DEFAULT 80       /* sanitizers make every case slower */
#else
#define SP_CUTS_DEFAULT 120      /* ~15 s on a loaded 2-core machine */
#endif
#define SP_OBJ_MAX   (256 * KiB) /* the model's bytes of an object */
#define SP_MAXOBJ    6           /* objects per file system */
#define SP_SNAPROOM  6           /* snapshots per file system, for a new one */
#define SP_MAXSNAP   12          /* per file system, with those a promote brings */
#define SP_MAXFS     5           /* pc/a, pc/b and three clones */
#define SP_NAMES     6           /* names in one operation */
#define SP_NAMELEN   96
#define SP_NTAGS     2
#define SP_POOL      "pc"
#define SP_LOW_SPACE (20 * MiB)  /* below this much free, only shrink */

/* ---- the model ---- */

/* An object's bytes, shared copy-on-write between states. */
typedef struct sp_buf {
	int      sb_refs;
	uint8_t  sb_data[];
} sp_buf_t;

typedef struct sp_obj {
	uint64_t  so_id;
	sp_buf_t *so_buf;
} sp_obj_t;

typedef struct sp_objs {
	int      on_n;
	sp_obj_t on_v[SP_MAXOBJ];    /* by object number */
} sp_objs_t;

typedef struct sp_snap {
	char      ss_name[SP_NAMELEN];   /* fs@snap */
	sp_objs_t ss_objs;
	uint8_t   ss_holds;              /* bit i: tag i */
	bool      ss_defer;
	int       ss_nclones;
} sp_snap_t;

typedef struct sp_fs {
	char      sf_name[SP_NAMELEN];
	char      sf_origin[SP_NAMELEN]; /* "" unless a clone */
	sp_objs_t sf_objs;
	int       sf_nsnaps;
	sp_snap_t sf_snaps[SP_MAXSNAP];  /* oldest first */
} sp_fs_t;

typedef struct sp_model {
	int      sm_nfs;
	sp_fs_t  sm_fs[SP_MAXFS];        /* in order of creation */
} sp_model_t;

typedef enum sp_kind {
	SP_WRITE, SP_TRUNC, SP_FREE,                   /* object changes */
	SP_SNAP, SP_DESTROY, SP_CLONE, SP_ROLLBACK, SP_HOLD, SP_RELEASE, SP_PROMOTE,
	SP_NKINDS
} sp_kind_t;

static const char *const sp_kind_names[SP_NKINDS] = {
	"write", "truncate", "free", "snapshot", "destroy", "clone", "rollback", "hold",
	"release", "promote"
};

/* One operation of a case, as done. */
typedef struct sp_rec {
	sp_kind_t sr_kind;
	bool     sr_uncertain;   /* a dataset operation that failed after the cut */
	bool     sr_failed;      /* an object change that failed after its tx was assigned */
	uint64_t sr_txg;         /* object changes: their tx's txg */
	char     sr_fs[SP_NAMELEN];  /* object changes, rollback, promote; clone: the new one */
	uint64_t sr_obj, sr_off, sr_len, sr_seed;
	uint32_t sr_blksz;       /* SP_WRITE: non-zero creates the object */
	int      sr_n;
	char     sr_names[SP_NAMES][SP_NAMELEN];  /* snapshots; clone: its origin */
	int      sr_tag;
	int      sr_flags;       /* destroy */
	int      sr_expect;      /* promote: the error it must return (a name conflict) */
} sp_rec_t;

static const char *const sp_tags[SP_NTAGS] = { "keep0", "keep1" };

static int
sp_popcount(uint8_t v)
{
	int n = 0;
	for (; v != 0; v &= (uint8_t)(v - 1))
		n++;
	return (n);
}

static sp_buf_t *
sp_buf_new(void)
{
	sp_buf_t *b = tarn_alloc(sizeof (*b) + SP_OBJ_MAX);
	b->sb_refs = 1;
	return (b);
}

static void
sp_buf_rele(sp_buf_t *b)
{
	if (b != NULL && --b->sb_refs == 0)
		tarn_free(b);
}

/* The object's bytes, made its own to change. */
static uint8_t *
sp_obj_own(sp_obj_t *o)
{
	if (o->so_buf->sb_refs > 1) {
		sp_buf_t *n = sp_buf_new();
		memcpy(n->sb_data, o->so_buf->sb_data, SP_OBJ_MAX);
		o->so_buf->sb_refs--;
		o->so_buf = n;
	}
	return (o->so_buf->sb_data);
}

static void
sp_objs_copy(sp_objs_t *dst, const sp_objs_t *src)
{
	*dst = *src;
	for (int i = 0; i < dst->on_n; i++)
		dst->on_v[i].so_buf->sb_refs++;
}

static void
sp_objs_fini(sp_objs_t *o)
{
	for (int i = 0; i < o->on_n; i++)
		sp_buf_rele(o->on_v[i].so_buf);
	o->on_n = 0;
}

static int
sp_objs_index(const sp_objs_t *o, uint64_t id)
{
	for (int i = 0; i < o->on_n; i++)
		if (o->on_v[i].so_id == id)
			return (i);
	return (-1);
}

static sp_model_t *
sp_model_clone(const sp_model_t *m)
{
	sp_model_t *c = tarn_alloc(sizeof (*c));
	*c = *m;
	for (int f = 0; f < c->sm_nfs; f++) {
		sp_fs_t *fs = &c->sm_fs[f];
		sp_objs_copy(&fs->sf_objs, &m->sm_fs[f].sf_objs);
		for (int s = 0; s < fs->sf_nsnaps; s++)
			sp_objs_copy(&fs->sf_snaps[s].ss_objs, &m->sm_fs[f].sf_snaps[s].ss_objs);
	}
	return (c);
}

static void
sp_model_free(sp_model_t *m)
{
	if (m == NULL)
		return;
	for (int f = 0; f < m->sm_nfs; f++) {
		sp_objs_fini(&m->sm_fs[f].sf_objs);
		for (int s = 0; s < m->sm_fs[f].sf_nsnaps; s++)
			sp_objs_fini(&m->sm_fs[f].sf_snaps[s].ss_objs);
	}
	tarn_free(m);
}

static sp_fs_t *
sp_fs_find(sp_model_t *m, const char *name)
{
	for (int f = 0; f < m->sm_nfs; f++)
		if (strcmp(m->sm_fs[f].sf_name, name) == 0)
			return (&m->sm_fs[f]);
	return (NULL);
}

/* Snapshot "fs@snap": its index in *fsp's list, or -1. */
static int
sp_snap_find(sp_model_t *m, const char *name, sp_fs_t **fsp)
{
	char fs[SP_NAMELEN];
	const char *at = strchr(name, '@');
	*fsp = NULL;
	if (at == NULL)
		return (-1);
	(void) snprintf(fs, sizeof (fs), "%.*s", (int)(at - name), name);
	sp_fs_t *f = sp_fs_find(m, fs);
	*fsp = f;
	for (int s = 0; f != NULL && s < f->sf_nsnaps; s++)
		if (strcmp(f->sf_snaps[s].ss_name, name) == 0)
			return (s);
	return (-1);
}

static void
sp_snap_remove(sp_fs_t *f, int s)
{
	sp_objs_fini(&f->sf_snaps[s].ss_objs);
	memmove(&f->sf_snaps[s], &f->sf_snaps[s + 1],
	    sizeof (sp_snap_t) * (size_t)(f->sf_nsnaps - s - 1));
	f->sf_nsnaps--;
}

/* ---- applying an operation to the model ---- */

static int
sp_apply_obj(sp_model_t *m, const sp_rec_t *r, char *err, size_t len)
{
	sp_fs_t *f = sp_fs_find(m, r->sr_fs);
	if (f == NULL) {
		(void) snprintf(err, len, "%s on %s, which the model lacks",
		    sp_kind_names[r->sr_kind], r->sr_fs);
		return (-1);
	}
	sp_objs_t *o = &f->sf_objs;
	int i = sp_objs_index(o, r->sr_obj);
	if (r->sr_kind == SP_WRITE && r->sr_blksz != 0) {
		if (i >= 0 || o->on_n == SP_MAXOBJ) {
			(void) snprintf(err, len, "new object %" PRIu64 " of %s: the model has it "
			    "or no room (%d objects)", r->sr_obj, r->sr_fs, o->on_n);
			return (-1);
		}
		for (i = o->on_n; i > 0 && o->on_v[i - 1].so_id > r->sr_obj; i--)
			o->on_v[i] = o->on_v[i - 1];
		o->on_v[i].so_id = r->sr_obj;
		o->on_v[i].so_buf = sp_buf_new();
		o->on_n++;
	}
	if (i < 0) {
		(void) snprintf(err, len, "%s of object %" PRIu64 " of %s, which the model lacks",
		    sp_kind_names[r->sr_kind], r->sr_obj, r->sr_fs);
		return (-1);
	}
	if (r->sr_kind == SP_WRITE) {
		tt_fill(sp_obj_own(&o->on_v[i]) + r->sr_off, r->sr_len, r->sr_seed);
	} else if (r->sr_kind == SP_TRUNC) {
		memset(sp_obj_own(&o->on_v[i]) + r->sr_off, 0, SP_OBJ_MAX - r->sr_off);
	} else {
		sp_buf_rele(o->on_v[i].so_buf);
		memmove(&o->on_v[i], &o->on_v[i + 1], sizeof (sp_obj_t) * (size_t)(o->on_n - i - 1));
		o->on_n--;
	}
	return (0);
}

static int
sp_apply_snap(sp_model_t *m, const sp_rec_t *r, char *err, size_t len)
{
	for (int i = 0; i < r->sr_n; i++) {
		sp_fs_t *f;
		if (sp_snap_find(m, r->sr_names[i], &f) >= 0 || f == NULL ||
		    f->sf_nsnaps == SP_MAXSNAP) {
			(void) snprintf(err, len, "snapshot %s: the model has it, lacks its file "
			    "system, or has no room", r->sr_names[i]);
			return (-1);
		}
		sp_snap_t *s = &f->sf_snaps[f->sf_nsnaps++];
		memset(s, 0, sizeof (*s));
		(void) snprintf(s->ss_name, sizeof (s->ss_name), "%s", r->sr_names[i]);
		sp_objs_copy(&s->ss_objs, &f->sf_objs);
	}
	return (0);
}

/* destroy (names that do not exist are skipped), hold, release */
static int
sp_apply_names(sp_model_t *m, const sp_rec_t *r, char *err, size_t len)
{
	uint8_t bit = (uint8_t)(1u << r->sr_tag);
	for (int i = 0; i < r->sr_n; i++) {
		sp_fs_t *f;
		int s = sp_snap_find(m, r->sr_names[i], &f);
		if (s < 0 && r->sr_kind == SP_DESTROY)
			continue;
		if (s < 0) {
			(void) snprintf(err, len, "%s of %s, which the model lacks",
			    sp_kind_names[r->sr_kind], r->sr_names[i]);
			return (-1);
		}
		sp_snap_t *sn = &f->sf_snaps[s];
		if (r->sr_kind == SP_HOLD) {
			sn->ss_holds |= bit;
			continue;
		}
		if (r->sr_kind == SP_RELEASE)
			sn->ss_holds &= (uint8_t)~bit;
		else if (sn->ss_holds != 0 || sn->ss_nclones != 0) {
			if (!(r->sr_flags & DSL_DESTROY_DEFER)) {
				(void) snprintf(err, len, "destroy of %s, which is held or cloned, "
				    "without defer", r->sr_names[i]);
				return (-1);
			}
			sn->ss_defer = true;
		}
		if (sn->ss_holds == 0 && sn->ss_nclones == 0 &&
		    (r->sr_kind == SP_DESTROY || sn->ss_defer))
			sp_snap_remove(f, s);
	}
	return (0);
}

static int
sp_apply_clone_rollback(sp_model_t *m, const sp_rec_t *r, char *err, size_t len)
{
	sp_fs_t *f;
	int s = sp_snap_find(m, r->sr_names[0], &f);
	if (s < 0 || (r->sr_kind == SP_ROLLBACK && s != f->sf_nsnaps - 1) ||
	    (r->sr_kind == SP_CLONE && (m->sm_nfs == SP_MAXFS || sp_fs_find(m, r->sr_fs)))) {
		(void) snprintf(err, len, "%s of %s to %s: not in the model as it should be",
		    sp_kind_names[r->sr_kind], r->sr_fs, r->sr_names[0]);
		return (-1);
	}
	sp_snap_t *sn = &f->sf_snaps[s];
	if (r->sr_kind == SP_ROLLBACK) {
		sp_objs_fini(&f->sf_objs);
		sp_objs_copy(&f->sf_objs, &sn->ss_objs);
		return (0);
	}
	sp_fs_t *c = &m->sm_fs[m->sm_nfs++];
	memset(c, 0, sizeof (*c));
	(void) snprintf(c->sf_name, sizeof (c->sf_name), "%s", r->sr_fs);
	(void) snprintf(c->sf_origin, sizeof (c->sf_origin), "%s", r->sr_names[0]);
	sp_objs_copy(&c->sf_objs, &sn->ss_objs);
	sn->ss_nclones++;
	return (0);
}

/*
 * The file system clone c's origin: its index in (*hp)'s snapshots, or -1
 * when c is not a clone (in the model).
 */
static int
sp_origin_find(sp_model_t *m, const sp_fs_t *c, sp_fs_t **hp)
{
	*hp = NULL;
	return (c == NULL || c->sf_origin[0] == '\0' ? -1 : sp_snap_find(m, c->sf_origin, hp));
}

/* A snapshot of c with the name (after the '@') of one of h's first k + 1? */
static bool
sp_promote_conflict(const sp_fs_t *c, const sp_fs_t *h, int k)
{
	for (int i = 0; i <= k; i++)
		for (int j = 0; j < c->sf_nsnaps; j++)
			if (strcmp(strchr(h->sf_snaps[i].ss_name, '@'),
			    strchr(c->sf_snaps[j].ss_name, '@')) == 0)
				return (true);
	return (false);
}

/*
 * Promote clone c of h@o: h's snapshots up to and including o move to c
 * (before c's own, renamed c@...; clones of them follow the new names); c
 * takes h's origin, and h becomes a clone of c@o.  Refused with a name
 * conflict (sr_expect): nothing changes.
 */
static int
sp_apply_promote(sp_model_t *m, const sp_rec_t *r, char *err, size_t len)
{
	sp_fs_t *c = sp_fs_find(m, r->sr_fs), *h;
	int k = sp_origin_find(m, c, &h);
	if (k < 0 || c->sf_nsnaps + k + 1 > SP_MAXSNAP ||
	    sp_promote_conflict(c, h, k) != (r->sr_expect != 0)) {
		(void) snprintf(err, len, "promote of %s: not a clone of a snapshot in the "
		    "model, no room, or a name conflict the model %s", r->sr_fs,
		    r->sr_expect ? "expected but lacks" : "has but did not expect");
		return (-1);
	}
	if (r->sr_expect != 0)
		return (0);
	sp_snap_t moved[SP_MAXSNAP];
	for (int i = 0; i <= k; i++) {
		char old[SP_NAMELEN];
		moved[i] = h->sf_snaps[i];
		memcpy(old, moved[i].ss_name, SP_NAMELEN);
		(void) snprintf(moved[i].ss_name, SP_NAMELEN, "%s%s", c->sf_name, strchr(old, '@'));
		for (int f = 0; f < m->sm_nfs; f++)
			if (strcmp(m->sm_fs[f].sf_origin, old) == 0)
				memcpy(m->sm_fs[f].sf_origin, moved[i].ss_name, SP_NAMELEN);
	}
	memcpy(&moved[k + 1], c->sf_snaps, sizeof (sp_snap_t) * (size_t)c->sf_nsnaps);
	memcpy(c->sf_snaps, moved, sizeof (sp_snap_t) * (size_t)(c->sf_nsnaps + k + 1));
	c->sf_nsnaps += k + 1;
	memmove(h->sf_snaps, &h->sf_snaps[k + 1], sizeof (sp_snap_t) *
	    (size_t)(h->sf_nsnaps - k - 1));
	h->sf_nsnaps -= k + 1;
	char older[SP_NAMELEN];                 /* c's origin is c@o by now */
	(void) snprintf(older, sizeof (older), "%s", h->sf_origin);
	(void) snprintf(h->sf_origin, sizeof (h->sf_origin), "%s", c->sf_origin);
	(void) snprintf(c->sf_origin, sizeof (c->sf_origin), "%s", older);
	return (0);
}

static int
sp_apply(sp_model_t *m, const sp_rec_t *r, char *err, size_t len)
{
	switch (r->sr_kind) {
	case SP_WRITE:
	case SP_TRUNC:
	case SP_FREE:
		return (sp_apply_obj(m, r, err, len));
	case SP_SNAP:
		return (sp_apply_snap(m, r, err, len));
	case SP_CLONE:
	case SP_ROLLBACK:
		return (sp_apply_clone_rollback(m, r, err, len));
	case SP_PROMOTE:
		return (sp_apply_promote(m, r, err, len));
	default:
		return (sp_apply_names(m, r, err, len));
	}
}

/* ---- the pool and the cut ---- */

typedef struct sp_stats {
	uint64_t cuts, mode[3], landed, in_flight_in, in_flight_out, fallback;
	uint64_t ops[SP_NKINDS], writes_lost, pools, refused;
	uint64_t in_flight[SP_NKINDS][2];       /* the operation in flight: out, in */
	uint64_t ns_work, ns_check;
} sp_stats_t;

typedef struct sp_pc {
	uint64_t  pc_seed;
	int       pc_case;
	int       pc_mode;
	int       pc_force_mode;      /* TARN_SNAP_POWERCUT_MODE, or -1 */
	char      pc_paths[SP_NDEV][300];
	const char *pc_pathv[SP_NDEV];
	vdev_fault_t *pc_vf[SP_NDEV];
	spa_t    *pc_spa;
	dsl_pool_t *pc_dp;
	sp_model_t *pc_base;          /* as of the last import */
	sp_model_t *pc_live;          /* base + everything done since */
	tarn_array_t pc_jnl;          /* sp_rec_t: what was done since the last import */
	uint64_t  pc_max_synced;      /* newest txg seen synced before the cut */
	uint64_t  pc_names;           /* counter for new snapshot and clone names */
	uint64_t  pc_epoch_alloc;     /* settled allocated bytes when the epoch began */
	/* the cut */
	pthread_mutex_t pc_cut_lock;
	_Atomic bool pc_cutting;
	_Atomic bool pc_cut;
	tarn_rand_t pc_cut_rand;
	int       pc_cut_policy;      /* 0: some held writes land, 1: none, 2: per device */
	_Atomic uint64_t pc_cb_target;
	int       pc_cutter_dev;
	uint64_t  pc_cutter_held, pc_cutter_flushes, pc_cutter_odds, pc_cutter_ns;
	tarn_rand_t pc_cutter_rand;
	sp_stats_t pc_st;
} sp_pc_t;

static void sp_fail(sp_pc_t *pc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
sp_fail(sp_pc_t *pc, const char *fmt, ...)
{
	char msg[3000];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof (msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "  seed %" PRIu64 " case %d (cut mode %d): %s\n"
	    "  rerun: TARN_SNAP_POWERCUT_SEED=%" PRIu64 " TARN_SNAP_POWERCUT_CASE=%d "
	    "test_snap_powercut\n", pc->pc_seed, pc->pc_case, pc->pc_mode, msg, pc->pc_seed,
	    pc->pc_case);
	tt_failed_checks++;
	longjmp(tt_jmp, 1);
}

static uint64_t
sp_env(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	return (v != NULL && *v != '\0' ? strtoull(v, NULL, 0) : dflt);
}

/* Kill both devices, then let a random part of their held writes land. */
static void
sp_cut(sp_pc_t *pc)
{
	pthread_mutex_lock(&pc->pc_cut_lock);
	if (!pc->pc_cut) {
		pc->pc_cutting = true;
		for (int i = 0; i < SP_NDEV; i++)
			vdev_fault_set_dead(pc->pc_vf[i], true);
		for (int i = 0; i < SP_NDEV; i++) {
			bool lose_all = pc->pc_cut_policy == 1 || (pc->pc_cut_policy == 2 &&
			    tarn_rand_range(&pc->pc_cut_rand, 2) == 0);
			if (!lose_all)
				vdev_fault_powercut(pc->pc_vf[i], &pc->pc_cut_rand);
		}
		pc->pc_cut = true;
	}
	pthread_mutex_unlock(&pc->pc_cut_lock);
}

static void
sp_synced_cb(void *arg, uint64_t txg)
{
	sp_pc_t *pc = arg;
	uint64_t target = pc->pc_cb_target;
	if (target != 0 && txg >= target)
		sp_cut(pc);
}

/*
 * Mode 2, started just before a dataset operation: cut when a device
 * holds enough writes, after it was flushed some times, at a random
 * moment while it holds writes, or after a short time.
 */
static void *
sp_cutter(void *arg)
{
	sp_pc_t *pc = arg;
	vdev_fault_t *vf = pc->pc_vf[pc->pc_cutter_dev];
	uint64_t until = tarn_now_ns() + pc->pc_cutter_ns, prev = 0, flushes = 0;
	while (!pc->pc_cut && tarn_now_ns() < until) {
		uint64_t held = vdev_fault_held_writes(vf);
		flushes += held < prev;
		prev = held;
		if (pc->pc_cutter_held != 0 && flushes >= pc->pc_cutter_flushes &&
		    held >= pc->pc_cutter_held)
			break;
		if (pc->pc_cutter_odds != 0 && held > 0 &&
		    tarn_rand_range(&pc->pc_cutter_rand, pc->pc_cutter_odds) == 0)
			break;
		sched_yield();
	}
	sp_cut(pc);
	return (NULL);
}

static void
sp_attach(sp_pc_t *pc, uint64_t seed)
{
	for (int i = 0; i < SP_NDEV; i++) {
		vdev_fault_cfg_t cfg;
		memset(&cfg, 0, sizeof (cfg));
		cfg.vfc_hold_unflushed = true;
		cfg.vfc_seed = seed + (uint64_t)i;
		pc->pc_vf[i] = vdev_fault_attach(pc->pc_pathv[i], &cfg);
	}
}

static void
sp_detach(sp_pc_t *pc)
{
	for (int i = 0; i < SP_NDEV; i++) {
		if (pc->pc_vf[i] != NULL)
			vdev_fault_detach(pc->pc_vf[i]);
		pc->pc_vf[i] = NULL;
	}
}

/* Let deferred frees mature, then the pool's allocated bytes (test_snap.c). */
static uint64_t
sp_settled_alloc(sp_pc_t *pc)
{
	spa_space_t s;
	for (int i = 0; i < 8; i++) {
		(void) spa_history_log(pc->pc_spa, "snap power-cut test: let frees mature");
		txg_kick(spa_dmu_pool(pc->pc_spa));
		TT_OK(txg_wait_synced(spa_dmu_pool(pc->pc_spa), 0));
	}
	spa_get_space(pc->pc_spa, &s);
	return (s.ss_alloc);
}

static void
sp_verify_blocks(sp_pc_t *pc, const char *when)
{
	uint64_t blocks = 0, errors = 0;
	int e = spa_verify_all(pc->pc_spa, true, &blocks, &errors);
	if (e != 0 || errors != 0)
		sp_fail(pc, "spa_verify_all %s (txg %" PRIu64 "): %s, %" PRIu64 " bad blocks of %"
		    PRIu64, when, spa_loaded_txg(pc->pc_spa), tarn_strerror(e), errors, blocks);
}

static void
sp_after_open(sp_pc_t *pc)
{
	dmu_pool_set_synced_cb(spa_dmu_pool(pc->pc_spa), sp_synced_cb, pc);
	sp_model_free(pc->pc_live);
	pc->pc_live = sp_model_clone(pc->pc_base);
	tarn_array_clear(&pc->pc_jnl);
	pc->pc_max_synced = spa_last_synced_txg(pc->pc_spa);
}

/* A new pool on fresh files with empty pc/a and pc/b; the model to match. */
static void
sp_pool_create(sp_pc_t *pc)
{
	char *argv[SP_NDEV + 1], err[512];
	argv[0] = (char *)"mirror";
	for (int i = 0; i < SP_NDEV; i++) {
		snprintf(pc->pc_paths[i], sizeof (pc->pc_paths[i]), "%s/spc-%d", tt_tmpdir(), i);
		pc->pc_pathv[i] = pc->pc_paths[i];
		unlink(pc->pc_paths[i]);
		int fd = open(pc->pc_paths[i], O_CREAT | O_RDWR, 0644);
		TT_ASSERT(fd >= 0);
		TT_OK(ftruncate(fd, (off_t)SP_DEVSIZE));
		close(fd);
		argv[i + 1] = pc->pc_paths[i];
	}
	sp_attach(pc, pc->pc_seed ^ 0xc0ffee);
	spa_vdev_spec_t *spec;
	TT_OK(spa_vdev_spec_parse(SP_NDEV + 1, argv, &spec, err, sizeof (err)));
	spa_create_opts_t o;
	memset(&o, 0, sizeof (o));
	o.sco_no_cache = true;
	int e = spa_create(SP_POOL, spec, &o, &pc->pc_spa, err, sizeof (err));
	spa_vdev_spec_free(spec);
	if (e != 0)
		sp_fail(pc, "spa_create: %s (%s)", err, tarn_strerror(e));
	TT_OK(dsl_pool_open(pc->pc_spa, NULL, NULL, &pc->pc_dp));
	sp_model_free(pc->pc_base);
	pc->pc_base = tarn_alloc(sizeof (sp_model_t));
	static const char *const fs[2] = { SP_POOL "/a", SP_POOL "/b" };
	for (int i = 0; i < 2; i++) {
		e = dsl_dataset_create(pc->pc_dp, fs[i], false, NULL, 0, err, sizeof (err));
		if (e != 0)
			sp_fail(pc, "create %s: %s", fs[i], err);
		sp_fs_t *f = &pc->pc_base->sm_fs[pc->pc_base->sm_nfs++];
		(void) snprintf(f->sf_name, sizeof (f->sf_name), "%s", fs[i]);
	}
	pc->pc_epoch_alloc = sp_settled_alloc(pc);
	pc->pc_names = 0;
	sp_after_open(pc);
	pc->pc_st.pools++;
}

static void
sp_pool_close(sp_pc_t *pc)
{
	dsl_pool_close(pc->pc_dp);
	pc->pc_dp = NULL;
	if (pc->pc_spa != NULL)
		spa_close(pc->pc_spa);
	pc->pc_spa = NULL;
	sp_detach(pc);
}

/* ---- checking a pool against a model ---- */

typedef struct sp_names {
	int  n;
	char v[SP_MAXFS + 2][SP_NAMELEN];
	bool overflow;
} sp_names_t;

static int
sp_names_cb(void *arg, const char *name, int depth)
{
	sp_names_t *nm = arg;
	(void) depth;
	if (nm->n == SP_MAXFS + 2) {
		nm->overflow = true;
		return (0);
	}
	(void) snprintf(nm->v[nm->n++], SP_NAMELEN, "%s", name);
	return (0);
}

/* The objects of os are exactly o's (numbers and bytes); what names os. */
static int
sp_verify_objs(objset_t *os, const sp_objs_t *o, const char *what, uint8_t *buf, char *err,
    size_t len)
{
	uint64_t id = 0;
	int i = 0, e;
	while ((e = dmu_object_next(os, &id)) == 0) {
		if (i >= o->on_n || o->on_v[i].so_id != id) {
			(void) snprintf(err, len, "%s: object %" PRIu64 " exists, the model has %s "
			    "%" PRIu64, what, id, i < o->on_n ? "next" : "no more than object",
			    i < o->on_n ? o->on_v[i].so_id : (o->on_n ? o->on_v[o->on_n - 1].so_id : 0));
			return (-1);
		}
		if ((e = dmu_read(os, id, 0, SP_OBJ_MAX, buf)) != 0) {
			(void) snprintf(err, len, "%s: read object %" PRIu64 ": %s", what, id,
			    tarn_strerror(e));
			return (-1);
		}
		const uint8_t *want = o->on_v[i].so_buf->sb_data;
		if (memcmp(buf, want, SP_OBJ_MAX) != 0) {
			size_t k = 0;
			while (buf[k] == want[k])
				k++;
			(void) snprintf(err, len, "%s: object %" PRIu64 " differs from the model at "
			    "byte %zu (found 0x%02x, model 0x%02x)", what, id, k, buf[k], want[k]);
			return (-1);
		}
		i++;
	}
	if (e != ESRCH) {
		(void) snprintf(err, len, "%s: list objects: %s", what, tarn_strerror(e));
		return (-1);
	}
	if (i < o->on_n) {
		(void) snprintf(err, len, "%s: object %" PRIu64 " of the model is missing", what,
		    o->on_v[i].so_id);
		return (-1);
	}
	return (0);
}

/* Snapshot list, holds, clones, space of file system f. */
static int
sp_verify_meta(dsl_pool_t *dp, const sp_fs_t *f, char *err, size_t len)
{
	char origin[DSL_NAME_MAX], msg[256];
	int e = dsl_dataset_origin(dp, f->sf_name, origin, sizeof (origin));
	if (e != 0 || strcmp(origin, f->sf_origin) != 0) {
		(void) snprintf(err, len, "%s: origin '%s' (%s), the model's '%s'", f->sf_name,
		    e ? "" : origin, tarn_strerror(e), f->sf_origin);
		return (-1);
	}
	dsl_snap_info_t *si = NULL;
	int n = 0;
	if ((e = dsl_snapshot_list(dp, f->sf_name, &si, &n, msg, sizeof (msg))) != 0) {
		(void) snprintf(err, len, "%s: list snapshots: %s", f->sf_name, msg);
		return (-1);
	}
	uint64_t sum_used = 0;
	int bad = -1;
	for (int i = 0; i < n && i < f->sf_nsnaps && bad < 0; i++) {
		const sp_snap_t *s = &f->sf_snaps[i];
		sum_used += si[i].dsi_used;
		if (strcmp(si[i].dsi_name, s->ss_name) != 0 ||
		    si[i].dsi_userrefs != (uint64_t)sp_popcount(s->ss_holds) ||
		    si[i].dsi_defer_destroy != s->ss_defer ||
		    si[i].dsi_nclones != (uint64_t)s->ss_nclones)
			bad = i;
	}
	if (bad >= 0 || n != f->sf_nsnaps) {
		int off = snprintf(err, len, "%s: snapshots [", f->sf_name);
		for (int i = 0; i < n && off < (int)len; i++)
			off += snprintf(err + off, len - (size_t)off, " %s(h%" PRIu64 "%s c%" PRIu64 ")",
			    si[i].dsi_name, si[i].dsi_userrefs, si[i].dsi_defer_destroy ? " d" : "",
			    si[i].dsi_nclones);
		for (int i = 0; i < f->sf_nsnaps && off < (int)len; i++)
			off += snprintf(err + off, len - (size_t)off, "%s %s(h%d%s c%d)",
			    i ? "" : " ], the model's [", f->sf_snaps[i].ss_name,
			    sp_popcount(f->sf_snaps[i].ss_holds),
			    f->sf_snaps[i].ss_defer ? " d" : "", f->sf_snaps[i].ss_nclones);
		if (off < (int)len)
			(void) snprintf(err + off, len - (size_t)off, " ]");
		tarn_free(si);
		return (-1);
	}
	tarn_free(si);
	dsl_space_t sp;
	if ((e = dsl_dataset_space(dp, f->sf_name, &sp)) != 0 ||
	    sp.ds_used != sp.ds_referenced + sp.ds_usedsnap + sp.ds_refreserved ||
	    sp.ds_nsnaps != (uint64_t)n || sum_used > sp.ds_usedsnap) {
		(void) snprintf(err, len, "%s: space (%s): used %" PRIu64 " referenced %" PRIu64
		    " usedbysnapshots %" PRIu64 " usedbyrefreservation %" PRIu64 " snapshots %"
		    PRIu64 " (model %d), their used sum to %" PRIu64, f->sf_name, tarn_strerror(e),
		    sp.ds_used, sp.ds_referenced, sp.ds_usedsnap, sp.ds_refreserved, sp.ds_nsnaps,
		    n, sum_used);
		return (-1);
	}
	return (0);
}

static int
sp_verify_fs(dsl_pool_t *dp, const sp_fs_t *f, uint8_t *buf, char *err, size_t len)
{
	if (sp_verify_meta(dp, f, err, len) != 0)
		return (-1);
	objset_t *os;
	int e = dsl_dataset_objset(dp, f->sf_name, &os);
	if (e != 0) {
		(void) snprintf(err, len, "%s: open: %s", f->sf_name, tarn_strerror(e));
		return (-1);
	}
	if (sp_verify_objs(os, &f->sf_objs, f->sf_name, buf, err, len) != 0)
		return (-1);
	for (int i = 0; i < f->sf_nsnaps; i++) {
		const sp_snap_t *s = &f->sf_snaps[i];
		char msg[256];
		if (dsl_snapshot_objset_open(dp, s->ss_name, &os, msg, sizeof (msg)) != 0) {
			(void) snprintf(err, len, "%s: open: %s", s->ss_name, msg);
			return (-1);
		}
		e = sp_verify_objs(os, &s->ss_objs, s->ss_name, buf, err, len);
		dsl_snapshot_objset_close(dp, os);
		if (e != 0)
			return (-1);
	}
	return (0);
}

/* Does the pool hold exactly model m?  0, or -1 with what differs in err. */
static int
sp_verify(dsl_pool_t *dp, sp_model_t *m, char *err, size_t len)
{
	sp_names_t nm;
	memset(&nm, 0, sizeof (nm));
	int e = dsl_dataset_iter(dp, SP_POOL, -1, sp_names_cb, &nm);
	bool same = e == 0 && !nm.overflow && nm.n == m->sm_nfs + 1;
	for (int i = 0; same && i < nm.n; i++)
		same = strcmp(nm.v[i], SP_POOL) == 0 || sp_fs_find(m, nm.v[i]) != NULL;
	if (!same) {
		int off = snprintf(err, len, "datasets (%s):", tarn_strerror(e));
		for (int i = 0; i < nm.n && off < (int)len; i++)
			off += snprintf(err + off, len - (size_t)off, " %s", nm.v[i]);
		for (int i = 0; i < m->sm_nfs && off < (int)len; i++)
			off += snprintf(err + off, len - (size_t)off, "%s %s", i ? "" : "; the model's:",
			    m->sm_fs[i].sf_name);
		return (-1);
	}
	uint8_t *buf = tarn_alloc(SP_OBJ_MAX);
	for (int f = 0; f < m->sm_nfs && e == 0; f++)
		e = sp_verify_fs(dp, &m->sm_fs[f], buf, err, len);
	tarn_free(buf);
	return (e);
}

/* ---- the workload ---- */

static sp_fs_t *
sp_pick_fs(sp_pc_t *pc, tarn_rand_t *r)
{
	return (&pc->pc_live->sm_fs[tarn_rand_range(r, (uint64_t)pc->pc_live->sm_nfs)]);
}

static bool
sp_gen_obj(sp_pc_t *pc, tarn_rand_t *r, bool shrink, sp_rec_t *rec)
{
	static const uint32_t blksz[3] = { 4 * KiB, 16 * KiB, 128 * KiB };
	sp_fs_t *f = sp_pick_fs(pc, r);
	uint64_t k = tarn_rand_range(r, 100);
	(void) snprintf(rec->sr_fs, sizeof (rec->sr_fs), "%s", f->sf_name);
	if (f->sf_objs.on_n == 0 || (k < 25 && f->sf_objs.on_n < SP_MAXOBJ)) {
		if (shrink)
			return (false);
		rec->sr_kind = SP_WRITE;
		rec->sr_blksz = blksz[tarn_rand_range(r, 3)];
	} else {
		rec->sr_obj = f->sf_objs.on_v[tarn_rand_range(r, (uint64_t)f->sf_objs.on_n)].so_id;
		rec->sr_kind = k < 70 && !shrink ? SP_WRITE : k < 85 ? SP_TRUNC : SP_FREE;
	}
	if (rec->sr_kind == SP_WRITE) {
		rec->sr_off = tarn_rand_range(r, SP_OBJ_MAX);
		if (tarn_rand_range(r, 2) == 0)
			rec->sr_off &= ~(uint64_t)(4 * KiB - 1);
		uint64_t room = SP_OBJ_MAX - rec->sr_off;
		rec->sr_len = 1 + tarn_rand_range(r, tarn_rand_range(r, 4) ? MIN(room, 32 * KiB) : room);
		rec->sr_seed = tarn_rand_u64(r);
	} else if (rec->sr_kind == SP_TRUNC) {
		rec->sr_off = tarn_rand_range(r, SP_OBJ_MAX);
	}
	return (true);
}

static void
sp_new_snap_name(sp_pc_t *pc, const sp_fs_t *f, char *buf)
{
	(void) snprintf(buf, SP_NAMELEN, "%s@s%" PRIu64, f->sf_name, pc->pc_names++);
}

/*
 * A new snapshot fs@x of a clone: sometimes named as one of the snapshots
 * that promoting the clone would bring (x of its origin or an older one),
 * so that the promote must be refused until one of them is gone.
 */
static void
sp_conflict_name(sp_model_t *m, tarn_rand_t *r, char *name)
{
	char fs[SP_NAMELEN], want[SP_NAMELEN];
	(void) snprintf(fs, sizeof (fs), "%.*s", (int)(strchr(name, '@') - name), name);
	sp_fs_t *h, *c = sp_fs_find(m, fs), *f;
	int k = sp_origin_find(m, c, &h);
	if (k < 0)
		return;
	const char *x = strchr(h->sf_snaps[tarn_rand_range(r, (uint64_t)k + 1)].ss_name, '@');
	(void) snprintf(want, sizeof (want), "%s%s", fs, x);
	if (sp_snap_find(m, want, &f) < 0)
		(void) snprintf(name, SP_NAMELEN, "%s", want);
}

/* One snapshot, or (a third of the time) one of each of several file systems at once. */
static bool
sp_gen_snap(sp_pc_t *pc, tarn_rand_t *r, sp_rec_t *rec)
{
	sp_model_t *m = pc->pc_live;
	int room[SP_MAXFS], n = 0;
	for (int f = 0; f < m->sm_nfs; f++)
		if (m->sm_fs[f].sf_nsnaps < SP_SNAPROOM)
			room[n++] = f;
	if (n == 0)
		return (false);
	int want = tarn_rand_range(r, 3) == 0 ? 2 + (int)tarn_rand_range(r, 2) : 1;
	bool same = tarn_rand_range(r, 2) == 0;
	uint64_t first = pc->pc_names;
	rec->sr_kind = SP_SNAP;
	for (int i = 0; i < want && n > 0; i++) {
		int j = (int)tarn_rand_range(r, (uint64_t)n);
		const sp_fs_t *f = &m->sm_fs[room[j]];
		room[j] = room[--n];
		if (same)
			pc->pc_names = first;
		sp_new_snap_name(pc, f, rec->sr_names[rec->sr_n++]);
	}
	if (rec->sr_n == 1 && tarn_rand_range(r, 6) == 0)
		sp_conflict_name(m, r, rec->sr_names[0]);
	return (true);
}

/* A run of up to 3 neighbouring snapshots of f (none with clones) into rec. */
static void
sp_gen_range(tarn_rand_t *r, const sp_fs_t *f, sp_rec_t *rec)
{
	int s = (int)tarn_rand_range(r, (uint64_t)f->sf_nsnaps);
	int want = 1 + (int)tarn_rand_range(r, 3);
	for (int i = s; i < f->sf_nsnaps && want > 0 && rec->sr_n < SP_NAMES - 1; i++, want--) {
		if (f->sf_snaps[i].ss_nclones != 0)
			break;
		(void) snprintf(rec->sr_names[rec->sr_n++], SP_NAMELEN, "%s",
		    f->sf_snaps[i].ss_name);
	}
}

static bool
sp_gen_destroy(sp_pc_t *pc, tarn_rand_t *r, sp_rec_t *rec)
{
	sp_model_t *m = pc->pc_live;
	rec->sr_kind = SP_DESTROY;
	for (int tries = 0; tries < 8 && rec->sr_n == 0; tries++) {
		const sp_fs_t *f = sp_pick_fs(pc, r);
		if (f->sf_nsnaps > 0)
			sp_gen_range(r, f, rec);
	}
	if (rec->sr_n == 0)
		return (false);
	if (tarn_rand_range(r, 4) == 0) {           /* and a run of another file system */
		sp_fs_t *f;
		(void) sp_snap_find(m, rec->sr_names[0], &f);
		const sp_fs_t *g = sp_pick_fs(pc, r);
		if (g != f && g->sf_nsnaps > 0)
			sp_gen_range(r, g, rec);
	}
	if (tarn_rand_range(r, 6) == 0)             /* a name that does not exist: skipped */
		(void) snprintf(rec->sr_names[rec->sr_n++], SP_NAMELEN, "%.60s@gone%" PRIu64,
		    m->sm_fs[0].sf_name, pc->pc_names++);
	bool held = false;
	for (int i = 0; i < rec->sr_n; i++) {
		sp_fs_t *f;
		int s = sp_snap_find(m, rec->sr_names[i], &f);
		held |= s >= 0 && f->sf_snaps[s].ss_holds != 0;
	}
	if (held || tarn_rand_range(r, 4) == 0)
		rec->sr_flags = DSL_DESTROY_DEFER;
	return (true);
}

/* A snapshot of the model (not marked for destroy), or NULL. */
static sp_snap_t *
sp_pick_snap(sp_pc_t *pc, tarn_rand_t *r, sp_fs_t **fsp)
{
	for (int tries = 0; tries < 8; tries++) {
		sp_fs_t *f = sp_pick_fs(pc, r);
		if (f->sf_nsnaps == 0)
			continue;
		sp_snap_t *s = &f->sf_snaps[tarn_rand_range(r, (uint64_t)f->sf_nsnaps)];
		if (!s->ss_defer) {
			if (fsp != NULL)
				*fsp = f;
			return (s);
		}
	}
	return (NULL);
}

static bool
sp_gen_hold(sp_pc_t *pc, tarn_rand_t *r, bool release, sp_rec_t *rec)
{
	rec->sr_kind = release ? SP_RELEASE : SP_HOLD;
	rec->sr_tag = (int)tarn_rand_range(r, SP_NTAGS);
	uint8_t bit = (uint8_t)(1u << rec->sr_tag);
	int want = 1 + (int)tarn_rand_range(r, 2);
	for (int tries = 0; tries < 12 && rec->sr_n < want; tries++) {
		sp_fs_t *f = sp_pick_fs(pc, r);
		if (f->sf_nsnaps == 0)
			continue;
		sp_snap_t *s = &f->sf_snaps[tarn_rand_range(r, (uint64_t)f->sf_nsnaps)];
		bool dup = false;
		for (int i = 0; i < rec->sr_n; i++)
			dup |= strcmp(rec->sr_names[i], s->ss_name) == 0;
		if (!dup && (release ? (s->ss_holds & bit) != 0 : (s->ss_holds & bit) == 0))
			(void) snprintf(rec->sr_names[rec->sr_n++], SP_NAMELEN, "%s", s->ss_name);
	}
	return (rec->sr_n > 0);
}

/* Promote a clone (refused when a name would conflict, sr_expect). */
static bool
sp_gen_promote(sp_pc_t *pc, tarn_rand_t *r, sp_rec_t *rec)
{
	sp_model_t *m = pc->pc_live;
	int cand[SP_MAXFS], n = 0;
	for (int f = 0; f < m->sm_nfs; f++) {
		sp_fs_t *h;
		int k = sp_origin_find(m, &m->sm_fs[f], &h);
		if (k >= 0 && m->sm_fs[f].sf_nsnaps + k + 1 <= SP_MAXSNAP)
			cand[n++] = f;
	}
	if (n == 0)
		return (false);
	sp_fs_t *c = &m->sm_fs[cand[tarn_rand_range(r, (uint64_t)n)]], *h;
	int k = sp_origin_find(m, c, &h);
	rec->sr_kind = SP_PROMOTE;
	(void) snprintf(rec->sr_fs, sizeof (rec->sr_fs), "%s", c->sf_name);
	rec->sr_expect = sp_promote_conflict(c, h, k) ? EEXIST : 0;
	return (true);
}

/* A dataset operation; when the cut is to come during it (cutting), often a promote. */
static bool
sp_gen_dsl(sp_pc_t *pc, tarn_rand_t *r, bool shrink, bool cutting, sp_rec_t *rec)
{
	uint64_t k = tarn_rand_range(r, 100);
	sp_fs_t *f;
	if (!shrink && ((cutting && k < 30) || (k >= 66 && k < 74)) &&
	    sp_gen_promote(pc, r, rec))
		return (true);
	if (shrink || k < 28)
		return (sp_gen_destroy(pc, r, rec));
	if (k < 55)
		return (sp_gen_snap(pc, r, rec));
	if (k < 66) {
		sp_snap_t *s = sp_pick_snap(pc, r, &f);
		if (s == NULL || pc->pc_live->sm_nfs == SP_MAXFS)
			return (false);
		rec->sr_kind = SP_CLONE;
		(void) snprintf(rec->sr_fs, sizeof (rec->sr_fs), SP_POOL "/c%" PRIu64,
		    pc->pc_names++);
		(void) snprintf(rec->sr_names[0], SP_NAMELEN, "%s", s->ss_name);
		rec->sr_n = 1;
		return (true);
	}
	if (k < 84) {
		f = sp_pick_fs(pc, r);
		if (f->sf_nsnaps == 0)
			return (false);
		rec->sr_kind = SP_ROLLBACK;
		(void) snprintf(rec->sr_fs, sizeof (rec->sr_fs), "%s", f->sf_name);
		(void) snprintf(rec->sr_names[0], SP_NAMELEN, "%s",
		    f->sf_snaps[f->sf_nsnaps - 1].ss_name);
		rec->sr_n = 1;
		return (true);
	}
	return (sp_gen_hold(pc, r, k >= 93, rec));
}

/* The next operation: a dataset one when dsl (if one is possible). */
static void
sp_gen(sp_pc_t *pc, tarn_rand_t *r, bool dsl, sp_rec_t *rec)
{
	spa_space_t ss;
	spa_get_space(pc->pc_spa, &ss);
	bool shrink = ss.ss_free < SP_LOW_SPACE;
	for (int tries = 0; tries < 20; tries++) {
		memset(rec, 0, sizeof (*rec));
		bool want_dsl = dsl || (tries < 16 && tarn_rand_range(r, 100) < 45);
		if (want_dsl ? sp_gen_dsl(pc, r, shrink, dsl, rec) :
		    sp_gen_obj(pc, r, shrink, rec))
			return;
	}
	memset(rec, 0, sizeof (*rec));                 /* nothing else: a snapshot or a write */
	if (!sp_gen_snap(pc, r, rec)) {
		memset(rec, 0, sizeof (*rec));
		VERIFY(sp_gen_obj(pc, r, false, rec));
	}
}

static int
sp_exec_obj(sp_pc_t *pc, sp_rec_t *rec, char *err, size_t len)
{
	objset_t *os;
	int e = dsl_dataset_objset(pc->pc_dp, rec->sr_fs, &os);
	if (e != 0) {
		(void) snprintf(err, len, "open %s: %s", rec->sr_fs, tarn_strerror(e));
		return (e);
	}
	dmu_tx_t *tx = dmu_tx_create(os);
	if (rec->sr_kind == SP_WRITE) {
		dmu_tx_hold_write(tx, rec->sr_blksz ? 0 : rec->sr_obj, rec->sr_off, rec->sr_len);
	} else {
		dmu_tx_hold_free(tx, rec->sr_obj, rec->sr_kind == SP_TRUNC ? rec->sr_off : 0,
		    DMU_OBJECT_END);
		dmu_tx_mark_netfree(tx);
	}
	if ((e = dmu_tx_assign(tx, TXG_WAIT)) != 0) {
		dmu_tx_abort(tx);
		(void) snprintf(err, len, "assign: %s", tarn_strerror(e));
		return (e);
	}
	rec->sr_txg = dmu_tx_get_txg(tx);
	if (rec->sr_kind == SP_WRITE && rec->sr_blksz != 0)
		e = dmu_object_alloc(os, DMU_OT_PLAIN_FILE, rec->sr_blksz, DMU_OT_NONE, 0, tx,
		    &rec->sr_obj);
	if (e == 0 && rec->sr_kind == SP_WRITE) {
		uint8_t *buf = tarn_alloc(rec->sr_len);
		tt_fill(buf, rec->sr_len, rec->sr_seed);
		e = dmu_write(os, rec->sr_obj, rec->sr_off, rec->sr_len, buf, tx);
		tarn_free(buf);
	} else if (e == 0 && rec->sr_kind == SP_TRUNC) {
		e = dmu_free_range(os, rec->sr_obj, rec->sr_off, DMU_OBJECT_END, tx);
	} else if (e == 0) {
		e = dmu_object_free(os, rec->sr_obj, tx);
	}
	dmu_tx_commit(tx);
	if (e != 0) {
		rec->sr_failed = true;
		(void) snprintf(err, len, "%s of object %" PRIu64 " in txg %" PRIu64 ": %s",
		    sp_kind_names[rec->sr_kind], rec->sr_obj, rec->sr_txg, tarn_strerror(e));
	}
	return (e);
}

static int
sp_exec(sp_pc_t *pc, sp_rec_t *rec, char *err, size_t len)
{
	dsl_pool_t *dp = pc->pc_dp;
	const char *v[SP_NAMES];
	for (int i = 0; i < rec->sr_n; i++)
		v[i] = rec->sr_names[i];
	err[0] = '\0';
	switch (rec->sr_kind) {
	case SP_SNAP:
		return (dsl_snapshot_create(dp, v, rec->sr_n, false, NULL, 0, err, len));
	case SP_DESTROY:
		return (dsl_snapshot_destroy(dp, v, rec->sr_n, rec->sr_flags, NULL, NULL, NULL,
		    err, len));
	case SP_CLONE:
		return (dsl_clone_create(dp, v[0], rec->sr_fs, false, NULL, 0, err, len));
	case SP_ROLLBACK:
		return (dsl_dataset_rollback(dp, v[0], false, false, NULL, NULL, err, len));
	case SP_HOLD:
		return (dsl_hold(dp, v, rec->sr_n, sp_tags[rec->sr_tag], false, err, len));
	case SP_RELEASE:
		return (dsl_release(dp, v, rec->sr_n, sp_tags[rec->sr_tag], false, err, len));
	case SP_PROMOTE:
		return (dsl_dataset_promote(dp, rec->sr_fs, err, len));
	default:
		return (sp_exec_obj(pc, rec, err, len));
	}
}

/* A one-line description of an operation, for messages. */
static void
sp_describe(const sp_rec_t *rec, char *buf, size_t len)
{
	int off = snprintf(buf, len, "%s", sp_kind_names[rec->sr_kind]);
	if (rec->sr_kind <= SP_FREE || rec->sr_kind == SP_CLONE || rec->sr_kind == SP_PROMOTE)
		off += snprintf(buf + off, len - (size_t)off, " %s", rec->sr_fs);
	if (rec->sr_expect != 0)
		off += snprintf(buf + off, len - (size_t)off, " (must fail: %s)",
		    tarn_strerror(rec->sr_expect));
	if (rec->sr_kind <= SP_FREE)
		off += snprintf(buf + off, len - (size_t)off, " object %" PRIu64 " [%" PRIu64
		    "+%" PRIu64 "] txg %" PRIu64, rec->sr_obj, rec->sr_off, rec->sr_len, rec->sr_txg);
	for (int i = 0; i < rec->sr_n && off < (int)len; i++)
		off += snprintf(buf + off, len - (size_t)off, " %s", rec->sr_names[i]);
	if (rec->sr_kind == SP_HOLD || rec->sr_kind == SP_RELEASE)
		(void) snprintf(buf + off, len - (size_t)off, " tag %s", sp_tags[rec->sr_tag]);
	else if (rec->sr_flags & DSL_DESTROY_DEFER)
		(void) snprintf(buf + off, len - (size_t)off, " (defer)");
}

/* Do one operation and record it; false when it failed after the cut (stop). */
static bool
sp_step(sp_pc_t *pc, tarn_rand_t *r, int i, bool dsl)
{
	sp_rec_t rec;
	char err[512], what[700];
	sp_gen(pc, r, dsl, &rec);
	int e = sp_exec(pc, &rec, err, sizeof (err));
	sp_describe(&rec, what, sizeof (what));
	bool refused = rec.sr_expect != 0 && e == rec.sr_expect;
	if (rec.sr_expect != 0 && e == 0)
		sp_fail(pc, "op %d, %s: it succeeded", i, what);
	if (refused)
		e = 0;
	if (e != 0 && !pc->pc_cutting)
		sp_fail(pc, "op %d before the cut, %s: %s (%s)", i, what, err, tarn_strerror(e));
	if (e != 0) {
		rec.sr_uncertain = rec.sr_kind > SP_FREE;
		if (rec.sr_uncertain || rec.sr_failed)
			TARN_ARRAY_APPEND(&pc->pc_jnl, sp_rec_t, rec);
		return (false);
	}
	if (rec.sr_kind > SP_FREE && !pc->pc_cutting && !refused)
		pc->pc_max_synced = MAX(pc->pc_max_synced, txg_last_synced(spa_dmu_pool(pc->pc_spa)));
	if (sp_apply(pc->pc_live, &rec, err, sizeof (err)) != 0)
		sp_fail(pc, "op %d, %s: model: %s", i, what, err);
	TARN_ARRAY_APPEND(&pc->pc_jnl, sp_rec_t, rec);
	pc->pc_st.ops[rec.sr_kind] += !refused;
	pc->pc_st.refused += refused;
	return (true);
}

static void
sp_start_cutter(sp_pc_t *pc, tarn_rand_t *r, pthread_t *tid)
{
	pc->pc_cutter_dev = (int)tarn_rand_range(r, SP_NDEV);
	uint64_t how = tarn_rand_range(r, 10);
	/* after a flush, the next writes are a txg's uberblock: aim there often */
	pc->pc_cutter_held = how < 2 ? 1 + tarn_rand_range(r, 60) :
	    how < 6 ? 1 + tarn_rand_range(r, 2) : 0;
	pc->pc_cutter_flushes = how >= 2 && how < 6 ? 1 + tarn_rand_range(r, 2) : 0;
	pc->pc_cutter_odds = how >= 6 && how < 9 ? 1 + tarn_rand_range(r, 64) : 0;
	tarn_rand_seed(&pc->pc_cutter_rand, tarn_rand_u64(r));
	pc->pc_cutter_ns = (200 + tarn_rand_range(r, 30000)) * 1000;
	VERIFY0(pthread_create(tid, NULL, sp_cutter, pc));
}

/* The operations of a case, with the cut where the mode puts it. */
static void
sp_workload(sp_pc_t *pc, tarn_rand_t *r)
{
	dmu_pool_t *dmu = spa_dmu_pool(pc->pc_spa);
	int nops = 8 + (int)tarn_rand_range(r, 23);
	int cut_at = (int)tarn_rand_range(r, (uint64_t)nops + (pc->pc_mode == 0));
	pthread_t cutter;
	bool cutter_on = false;
	for (int i = 0; i < nops; i++) {
		if (pc->pc_mode == 0 && i == cut_at)
			sp_cut(pc);
		if (pc->pc_mode == 2 && i == cut_at) {
			sp_start_cutter(pc, r, &cutter);
			cutter_on = true;
		}
		if (!sp_step(pc, r, i, pc->pc_mode == 2 && i == cut_at))
			break;
		uint64_t k = tarn_rand_range(r, 100);
		if (k < 10) {
			txg_kick(dmu);
		} else if (k < 16) {
			int e = txg_wait_synced(dmu, 0);
			if (e != 0 && !pc->pc_cutting)
				sp_fail(pc, "a txg sync failed before the cut: %s", tarn_strerror(e));
			if (e == 0 && !pc->pc_cutting)
				pc->pc_max_synced = MAX(pc->pc_max_synced, txg_last_synced(dmu));
		}
	}
	if (pc->pc_mode == 0)
		sp_cut(pc);
	for (int i = 0; pc->pc_mode < 3 && !pc->pc_cut && i < 200; i++) {     /* txgs until the cut came */
		txg_kick(dmu);
		struct timespec ts = { 0, 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	if (!pc->pc_cut && pc->pc_mode < 3) {
		pc->pc_st.fallback++;
		sp_cut(pc);
	}
	if (cutter_on)
		VERIFY0(pthread_join(cutter, NULL));
}

/* ---- after the cut ---- */

/*
 * The base model with the records that must be in at txg U, and the one
 * that failed in flight too when with_uncertain.
 */
static sp_model_t *
sp_replay(sp_pc_t *pc, uint64_t U, bool with_uncertain)
{
	sp_model_t *m = sp_model_clone(pc->pc_base);
	char err[512], what[700];
	for (size_t i = 0; i < tarn_array_len(&pc->pc_jnl); i++) {
		sp_rec_t *rec = tarn_array_get(&pc->pc_jnl, i);
		sp_describe(rec, what, sizeof (what));
		if (rec->sr_kind <= SP_FREE && rec->sr_txg > U)
			continue;
		if (rec->sr_failed)
			sp_fail(pc, "imported txg %" PRIu64 " has a change that failed: %s", U, what);
		if (rec->sr_uncertain && !with_uncertain)
			continue;
		if (sp_apply(m, rec, err, sizeof (err)) != 0)
			sp_fail(pc, "replay of %s: %s", what, err);
	}
	return (m);
}

/* The model the imported pool holds (either way for the operation in flight), or fail. */
static sp_model_t *
sp_choose(sp_pc_t *pc, uint64_t U, uint64_t F)
{
	static char err0[2000], err1[2000];
	const sp_rec_t *unc = NULL;
	size_t n = tarn_array_len(&pc->pc_jnl);
	if (n > 0 && ((sp_rec_t *)tarn_array_get(&pc->pc_jnl, n - 1))->sr_uncertain)
		unc = tarn_array_get(&pc->pc_jnl, n - 1);
	sp_model_t *m = sp_replay(pc, U, false);
	if (sp_verify(pc->pc_dp, m, err0, sizeof (err0)) == 0) {
		pc->pc_st.in_flight_out += unc != NULL;
		if (unc != NULL)
			pc->pc_st.in_flight[unc->sr_kind][0]++;
		return (m);
	}
	sp_model_free(m);
	char what[700] = "";
	if (unc != NULL) {
		sp_describe(unc, what, sizeof (what));
		m = sp_replay(pc, U, true);
		if (sp_verify(pc->pc_dp, m, err1, sizeof (err1)) == 0) {
			pc->pc_st.in_flight_in++;
			pc->pc_st.in_flight[unc->sr_kind][1]++;
			return (m);
		}
		sp_model_free(m);
		sp_fail(pc, "imported txg %" PRIu64 " (last synced before the cut %" PRIu64 "), "
		    "without the operation in flight (%s): %s; with it: %s", U, F, what, err0, err1);
	}
	sp_fail(pc, "imported txg %" PRIu64 " (last synced before the cut %" PRIu64 "): %s", U, F,
	    err0);
	return (NULL);
}

static void
sp_import(sp_pc_t *pc, bool readonly, uint64_t F)
{
	spa_import_opts_t io;
	memset(&io, 0, sizeof (io));
	io.sio_no_cache = true;
	io.sio_flags = readonly ? SPA_OPEN_READONLY : 0;
	char err[1024];
	int e = spa_open_paths(pc->pc_pathv, SP_NDEV, &io, &pc->pc_spa, err, sizeof (err));
	if (e != 0)
		sp_fail(pc, "%simport after the cut (last synced txg %" PRIu64 "): %s (%s)",
		    readonly ? "read-only " : "", F, err, tarn_strerror(e));
	e = dsl_pool_open(pc->pc_spa, NULL, NULL, &pc->pc_dp);
	if (e != 0)
		sp_fail(pc, "dsl_pool_open at txg %" PRIu64 ": %s", spa_loaded_txg(pc->pc_spa),
		    tarn_strerror(e));
}

/*
 * The pool must suspend; abandon it.  A read-only import must choose U in
 * [F, F + 1] and hold a model of txg U; then a read-write import (which
 * must choose U too) for the next case.
 */
static void
sp_check(sp_pc_t *pc, uint64_t seed)
{
	dmu_pool_t *dmu = spa_dmu_pool(pc->pc_spa);
	if (txg_wait_synced(dmu, 0) == 0)
		sp_fail(pc, "a txg synced after the power cut");
	if (!dmu_pool_suspended(dmu))
		sp_fail(pc, "the pool is not suspended after the power cut");
	uint64_t F = txg_last_synced(dmu);
	dsl_pool_close(pc->pc_dp);
	pc->pc_dp = NULL;
	spa_abandon(pc->pc_spa);
	pc->pc_spa = NULL;
	sp_detach(pc);

	sp_attach(pc, seed);
	uint64_t t0 = tarn_now_ns();
	sp_import(pc, true, F);
	uint64_t U = spa_loaded_txg(pc->pc_spa);
	if (U < F || U > F + 1 || U < pc->pc_max_synced)
		sp_fail(pc, "imported txg %" PRIu64 ", but txg %" PRIu64 " was synced before the "
		    "cut and nothing after txg %" PRIu64 " could be", U, MAX(F, pc->pc_max_synced),
		    F + 1);
	pc->pc_st.landed += U == F + 1;
	for (size_t i = 0; i < tarn_array_len(&pc->pc_jnl); i++) {
		sp_rec_t *rec = tarn_array_get(&pc->pc_jnl, i);
		pc->pc_st.writes_lost += rec->sr_kind <= SP_FREE && rec->sr_txg > U;
	}
	sp_model_t *m = sp_choose(pc, U, F);
	sp_verify_blocks(pc, "after the read-only import");
	dsl_pool_close(pc->pc_dp);
	pc->pc_dp = NULL;
	spa_close(pc->pc_spa);

	sp_import(pc, false, F);
	if (spa_loaded_txg(pc->pc_spa) != U)
		sp_fail(pc, "the read-only import chose txg %" PRIu64 ", the read-write one %"
		    PRIu64, U, spa_loaded_txg(pc->pc_spa));
	static char err[2000];
	if (sp_verify(pc->pc_dp, m, err, sizeof (err)) != 0)
		sp_fail(pc, "after the read-write import of txg %" PRIu64 ": %s", U, err);
	sp_model_free(pc->pc_base);
	pc->pc_base = m;
	sp_after_open(pc);
	pc->pc_st.ns_check += tarn_now_ns() - t0;
}

/* Mode 3 (triage: TARN_SNAP_POWERCUT_MODE=3): no cut; the live pool must hold the model. */
static void
sp_check_nocut(sp_pc_t *pc)
{
	static char err[2000];
	/* nothing in flight: the snapshots' figures and the file system's agree */
	TT_OK(txg_wait_synced(spa_dmu_pool(pc->pc_spa), 0));
	if (sp_verify(pc->pc_dp, pc->pc_live, err, sizeof (err)) != 0)
		sp_fail(pc, "without a cut: %s", err);
	sp_verify_blocks(pc, "without a cut");
	sp_model_free(pc->pc_base);
	pc->pc_base = sp_model_clone(pc->pc_live);
	if (pc->pc_mode == 4) {         /* and a clean export and import */
		dsl_pool_close(pc->pc_dp);
		spa_close(pc->pc_spa);
		sp_import(pc, false, 0);
		if (sp_verify(pc->pc_dp, pc->pc_base, err, sizeof (err)) != 0)
			sp_fail(pc, "after a clean reopen: %s", err);
		sp_after_open(pc);
	}
	tarn_array_clear(&pc->pc_jnl);
}

static void
sp_case(sp_pc_t *pc, int k)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, pc->pc_seed * 0x9E3779B97F4A7C15ULL + (uint64_t)k);
	pc->pc_case = k;
	uint64_t mode = tarn_rand_range(&r, 10);
	pc->pc_mode = mode < 3 ? 0 : mode < 5 ? 1 : 2;
	if (pc->pc_force_mode >= 0)
		pc->pc_mode = pc->pc_force_mode;
	uint64_t pol = tarn_rand_range(&r, 10);
	pc->pc_cut_policy = pol < 5 ? 0 : pol < 8 ? 1 : 2;
	tarn_rand_seed(&pc->pc_cut_rand, tarn_rand_u64(&r));
	pc->pc_cut = false;
	pc->pc_cutting = false;
	dmu_pool_t *dmu = spa_dmu_pool(pc->pc_spa);
	pc->pc_cb_target = pc->pc_mode == 1 ?
	    txg_last_synced(dmu) + 1 + tarn_rand_range(&r, 4) : 0;
	uint64_t t0 = tarn_now_ns();
	sp_workload(pc, &r);
	pc->pc_cb_target = 0;
	pc->pc_st.ns_work += tarn_now_ns() - t0;
	if (pc->pc_mode >= 3) {
		sp_check_nocut(pc);
		return;
	}
	sp_check(pc, tarn_rand_u64(&r));
	pc->pc_st.cuts++;
	pc->pc_st.mode[pc->pc_mode]++;
}

/* ---- the end of an epoch: destroy everything, the space comes back ---- */

static void
sp_dsl_ok(sp_pc_t *pc, int e, const char *what, const char *name, const char *err)
{
	if (e != 0)
		sp_fail(pc, "end of epoch: %s %s: %s (%s)", what, name, err, tarn_strerror(e));
}

static void
sp_release_all(sp_pc_t *pc)
{
	char err[512];
	sp_model_t *m = pc->pc_live;
	for (int f = 0; f < m->sm_nfs; f++) {
		for (int s = 0; s < m->sm_fs[f].sf_nsnaps; s++) {
			for (int t = 0; t < SP_NTAGS; t++) {
				sp_snap_t *sn = &m->sm_fs[f].sf_snaps[s];
				if (!(sn->ss_holds & (1u << t)))
					continue;
				sp_rec_t rec = { .sr_kind = SP_RELEASE, .sr_n = 1, .sr_tag = t };
				(void) snprintf(rec.sr_names[0], SP_NAMELEN, "%s", sn->ss_name);
				const char *v[1] = { rec.sr_names[0] };
				int e = dsl_release(pc->pc_dp, v, 1, sp_tags[t], false, err, sizeof (err));
				sp_dsl_ok(pc, e, "release", rec.sr_names[0], err);
				if (sp_apply(m, &rec, err, sizeof (err)) != 0)
					sp_fail(pc, "end of epoch: model: %s", err);
				s = -1;         /* the list may have changed: again from the start */
				break;
			}
		}
	}
}

/*
 * Destroy every file system (with its snapshots), one whose snapshots
 * have no clones each time (after promotes, pc/a may be a clone of a
 * snapshot of a clone); the newest such first.  The model follows.
 */
static void
sp_destroy_all(sp_pc_t *pc)
{
	char err[512];
	sp_model_t *m = pc->pc_live;
	while (m->sm_nfs > 0) {
		int f = m->sm_nfs - 1;
		for (bool cloned = true; f >= 0; f--) {
			cloned = false;
			for (int s = 0; s < m->sm_fs[f].sf_nsnaps; s++)
				cloned |= m->sm_fs[f].sf_snaps[s].ss_nclones != 0;
			if (!cloned)
				break;
		}
		if (f < 0)
			sp_fail(pc, "end of epoch: every file system left has a snapshot with "
			    "clones (the model is wrong)");
		sp_fs_t *fs = &m->sm_fs[f], *h;
		int e = dsl_dataset_destroy(pc->pc_dp, fs->sf_name, true, err, sizeof (err));
		sp_dsl_ok(pc, e, "destroy", fs->sf_name, err);
		int o = sp_origin_find(m, fs, &h);
		if (o >= 0)
			h->sf_snaps[o].ss_nclones--;
		sp_objs_fini(&fs->sf_objs);
		while (fs->sf_nsnaps > 0)
			sp_snap_remove(fs, fs->sf_nsnaps - 1);
		memmove(fs, fs + 1, sizeof (sp_fs_t) * (size_t)(m->sm_nfs - f - 1));
		m->sm_nfs--;
	}
	sp_names_t nm;
	memset(&nm, 0, sizeof (nm));
	int e = dsl_dataset_iter(pc->pc_dp, SP_POOL, -1, sp_names_cb, &nm);
	if (e != 0 || nm.n != 1)
		sp_fail(pc, "end of epoch: %d datasets left after destroying all (%s), the "
		    "first '%s', the second '%s'", nm.n, tarn_strerror(e), nm.v[0],
		    nm.n > 1 ? nm.v[1] : "");
}

static void
sp_epoch_end(sp_pc_t *pc)
{
	char err[512];
	dsl_pool_t *dp = pc->pc_dp;
	sp_release_all(pc);
	if (sp_verify(dp, pc->pc_live, err, sizeof (err)) != 0)
		sp_fail(pc, "end of epoch, after releasing every hold: %s", err);
	sp_destroy_all(pc);
	static const char *const fs[2] = { SP_POOL "/a", SP_POOL "/b" };
	for (int f = 0; f < 2; f++) {
		int e = dsl_dataset_create(dp, fs[f], false, NULL, 0, err, sizeof (err));
		sp_dsl_ok(pc, e, "create", fs[f], err);
	}
	uint64_t end = sp_settled_alloc(pc);
	if (end > pc->pc_epoch_alloc + 1 * MiB)
		sp_fail(pc, "end of epoch: %" PRIu64 " bytes allocated after destroying everything, "
		    "%" PRIu64 " when the epoch began (%" PRIu64 " KiB more)", end,
		    pc->pc_epoch_alloc, (uint64_t)((end - pc->pc_epoch_alloc) / KiB));
	sp_verify_blocks(pc, "at the end of the epoch");
}

/* ---- the test ---- */

static void
sp_report(sp_pc_t *pc, uint64_t t0)
{
	sp_stats_t *s = &pc->pc_st;
	printf("  %" PRIu64 " cuts (%" PRIu64 " between ops, %" PRIu64 " after a sync, %" PRIu64
	    " from another thread) on %" PRIu64 " pools in %.1f s (%.1f s in workloads, %.1f s "
	    "in imports and checks)\n", s->cuts, s->mode[0], s->mode[1], s->mode[2], s->pools,
	    (double)(tarn_now_ns() - t0) / 1e9, (double)s->ns_work / 1e9,
	    (double)s->ns_check / 1e9);
	printf("  the txg being written landed %" PRIu64 " times; the operation in flight was "
	    "in %" PRIu64 " times, out %" PRIu64 " times; %" PRIu64 " object changes lost as they "
	    "should; %" PRIu64 " cuts forced at the end\n", s->landed, s->in_flight_in,
	    s->in_flight_out, s->writes_lost, s->fallback);
	printf("  ops done:");
	for (int k = 0; k < SP_NKINDS; k++)
		printf(" %s %" PRIu64, sp_kind_names[k], s->ops[k]);
	printf("; %" PRIu64 " promotes refused (name conflict)\n  in flight at the cut "
	    "(out/in):", s->refused);
	for (int k = SP_SNAP; k < SP_NKINDS; k++)
		printf(" %s %" PRIu64 "/%" PRIu64, sp_kind_names[k], s->in_flight[k][0],
		    s->in_flight[k][1]);
	printf("\n");
}

static void
test_snap_powercut(void)
{
	sp_pc_t *pc = tarn_alloc(sizeof (*pc));
	tarn_array_init(&pc->pc_jnl, sizeof (sp_rec_t));
	pthread_mutex_init(&pc->pc_cut_lock, NULL);
	pc->pc_seed = sp_env("TARN_SNAP_POWERCUT_SEED", tarn_guid() >> 24);
	int cuts = (int)sp_env("TARN_SNAP_POWERCUT_CUTS", SP_CUTS_DEFAULT);
	int only = (int)sp_env("TARN_SNAP_POWERCUT_CASE", (uint64_t)-1);
	pc->pc_force_mode = (int)sp_env("TARN_SNAP_POWERCUT_MODE", (uint64_t)-1);
	int first = 0;
	if (only >= 0) {
		first = only / SP_EPOCH * SP_EPOCH;
		cuts = only + 1;
	}
	printf("  seed %" PRIu64 ", cases %d..%d\n", pc->pc_seed, first, cuts - 1);
	fflush(stdout);
	uint64_t t0 = tarn_now_ns();
	for (int k = first; k < cuts; k++) {
		if (k == first || k % SP_EPOCH == 0) {
			pc->pc_case = k;
			if (k != first)
				sp_epoch_end(pc);
			sp_pool_close(pc);
			sp_pool_create(pc);
		}
		sp_case(pc, k);
	}
	sp_epoch_end(pc);
	sp_pool_close(pc);
	sp_report(pc, t0);
	sp_model_free(pc->pc_base);
	sp_model_free(pc->pc_live);
	tarn_array_fini(&pc->pc_jnl);
	pthread_mutex_destroy(&pc->pc_cut_lock);
	tarn_free(pc);
}

/* ---- the first thing the cuts found, without a cut ---- */

static void
sp_put(dsl_pool_t *dp, const char *fs, uint64_t *obj, uint64_t len, uint64_t seed)
{
	objset_t *os;
	TT_OK(dsl_dataset_objset(dp, fs, &os));
	uint8_t *buf = tarn_alloc(len);
	tt_fill(buf, len, seed);
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_write(tx, *obj, 0, len);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	if (*obj == 0)
		TT_OK(dmu_object_alloc(os, DMU_OT_PLAIN_FILE, 128 * KiB, DMU_OT_NONE, 0, tx, obj));
	TT_OK(dmu_write(os, *obj, 0, len, buf, tx));
	dmu_tx_commit(tx);
	tarn_free(buf);
	TT_OK(txg_wait_synced(spa_dmu_pool(dsl_pool_spa(dp)), 0));
}

static bool
sp_snap_reads(dsl_pool_t *dp, const char *snap, uint64_t obj, uint64_t len, uint64_t seed)
{
	char err[256];
	objset_t *os;
	TT_OK(dsl_snapshot_objset_open(dp, snap, &os, err, sizeof (err)));
	uint8_t *want = tarn_alloc(len), *got = tarn_alloc(len);
	tt_fill(want, len, seed);
	int e = dmu_read(os, obj, 0, len, got);
	bool ok = e == 0 && memcmp(want, got, len) == 0;
	if (!ok)
		fprintf(stderr, "  %s: object %" PRIu64 ": %s\n", snap, obj,
		    e ? tarn_strerror(e) : "other bytes than when it was taken");
	dsl_snapshot_objset_close(dp, os);
	tarn_free(want);
	tarn_free(got);
	return (ok);
}

/*
 * A file system overwritten after its pool was imported again must keep
 * the blocks its snapshot holds: they go on its dead list (the snapshot's
 * used is their size), their space is not reused, and destroying the
 * snapshot frees them once.  (The cuts found this first: at import the
 * intent-log claim opens every object set before dsl_pool_open installs
 * the hook that tells an object set its newest snapshot's txg, so the
 * file system freed what the snapshot held.)
 */
static void
test_reopen_overwrite(void)
{
	tt_pool_devs_t devs;
	char err[256];
	tt_pool_files(&devs, 1, 64 * MiB);
	spa_t *spa = tt_pool_create(&devs, "ro", NULL, NULL);
	dsl_pool_t *dp;
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	TT_OK(dsl_dataset_create(dp, "ro/fs", false, NULL, 0, err, sizeof (err)));
	uint64_t a = 0, b = 0;
	sp_put(dp, "ro/fs", &a, 4 * MiB, 1);
	const char *s[1] = { "ro/fs@s" };
	TT_OK(dsl_snapshot_create(dp, s, 1, false, NULL, 0, err, sizeof (err)));
	dsl_pool_close(dp);
	spa_close(spa);
	spa = tt_pool_reopen(&devs, 0, NULL);
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	sp_put(dp, "ro/fs", &a, 4 * MiB, 2);            /* the old blocks: the snapshot's only */
	dsl_snap_info_t si;
	TT_OK(dsl_snapshot_info(dp, "ro/fs@s", &si, err, sizeof (err)));
	if (si.dsi_used < 4 * MiB)
		fprintf(stderr, "  the snapshot's used is %" PRIu64 " bytes, not 4 MiB\n",
		    si.dsi_used);
	TT_CHECK(si.dsi_used >= 4 * MiB);
	for (int i = 0; i < 8; i++)                     /* let frees mature, then reuse */
		TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	spa_space_t ss;                                 /* fill the pool: every free block */
	spa_get_space(spa, &ss);
	for (uint64_t i = 0; ss.ss_free > ss.ss_slop + 4 * MiB && i < 64; i++) {
		b = 0;
		sp_put(dp, "ro/fs", &b, 1 * MiB, 3 + i);
		spa_get_space(spa, &ss);
	}
	TT_CHECK(sp_snap_reads(dp, "ro/fs@s", a, 4 * MiB, 1));
	uint64_t blocks, errors;
	TT_OK(spa_verify_all(spa, true, &blocks, &errors));
	TT_EQ(errors, 0);
	dsl_pool_close(dp);
	spa_close(spa);
	tt_pool_files_remove(&devs);
}

TT_MAIN(
	{ "snap_powercut", test_snap_powercut },
	{ "reopen_overwrite", test_reopen_overwrite },
)
