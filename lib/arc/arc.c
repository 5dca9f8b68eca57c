/*
 * arc.c — the adaptive replacement cache (policy, accounting, eviction,
 * statistics).  Contract: arc.h.
 *
 * Theory.  The policy is Megiddo and Modha's ARC (FAST '03), in bytes.
 * Idle clean blocks sit on two LRU lists: MRU ("T1", blocks used once
 * since they came in) and MFU ("T2", used at least twice).  A block
 * evicted from MRU leaves its identity (arc_key: pool, first DVA and birth,
 * what the L2ARC keys on too) on the ghost list B1, one from MFU on B2.
 * A miss whose identity is on B1 means MRU was too small: the target p
 * of MRU's bytes grows by the block's size (times |B2|/|B1| when B2 is
 * bigger); one on B2 shrinks p the same way; either way the block goes
 * to MFU.  Eviction takes MRU's oldest while MRU holds more than p, else
 * MFU's oldest.  Ghosts are trimmed so that MRU + B1 <= c and all four
 * lists together <= 2c.  So a one-pass scan (blocks used once) only
 * cycles through MRU and cannot push out MFU's working set, and a loop
 * slightly bigger than the cache turns into ghost hits that move p
 * towards whichever list deserves the room.  c is arc_max: this cache
 * has no memory-pressure feedback yet, arc_min is only the floor below
 * which `tarn daemon set arc_max` may not go.
 *
 * Streamed blocks ("once": read or written whole by a sequential
 * stream, see dbuf.c) enter MRU while they take less than c /
 * ARC_ONCE_DIV, or while the cache has free room for them (no eviction
 * needed); past both arc_insert refuses them and the owner frees them at
 * once.  They sit on a list of their own (counted as MRU) whose oldest
 * are every eviction's first victims, so a stream fills an idle cache
 * (read again after the kernel dropped its pages, it comes from memory),
 * then pushes out only its own older blocks, never the others (an
 * insert's own eviction takes nothing else while once blocks exist).
 * They leave no ghost, so that a scan read twice does not move p.
 *
 * Accounting and the limit.  as_size counts the listed blocks and the
 * ARC_HELD ones (clean blocks a reader holds at the moment).  An insert
 * that passes c evicts at once, before it returns (victims under the
 * caller's own owner lock are skipped: try-lock), and the owner calls
 * arc_evict again once it dropped its lock; either brings as_size back
 * to c unless the excess is held blocks, or victims whose owner's lock
 * is busy for ARC_SKIP_MAX tries in a row (counted in as_evict_skip;
 * the next insert tries again).  The slack above c is therefore the held
 * blocks plus one block per thread between its insert and its evict;
 * dirty blocks are not in the ARC at all (the dmu's write throttle
 * bounds them).
 *
 * Locking.  One mutex (arc_lock, lockorder rank ARC) guards the lists,
 * the ghosts, the sizes and p.  The owner calls in with its own lock of
 * the node held (dn_mtx for dbufs): owner lock, then arc_lock.  The
 * evictor, holding arc_lock, only try-locks owners (ao_trylock), takes
 * the victim off its list, drops arc_lock and lets the owner free it.
 * Hit and miss counters are atomics, bumped without arc_lock.
 */
#include "arc.h"

#include <ctype.h>
#include <math.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "lockorder.h"
#include "tarn_hash.h"

#define ARC_SKIP_MAX    256     /* busy victims skipped before an evict gives up */
#define ARC_SKIP_INLINE 8       /* the same, for arc_insert's own eviction */
#define ARC_SHRINK_TRIES 200    /* arc_set_limits: rounds of 1 ms to get under c */

/* A ghost: the identity and size of a block evicted lately (B1 or B2). */
typedef struct arc_ghost {
	tarn_hlink_t ag_link;                   /* in arc_ghosts */
	struct arc_ghost *ag_prev, *ag_next;    /* on its list, head = newest */
	uint64_t ag_key;
	uint32_t ag_size;
	uint8_t  ag_list;                       /* ARC_MRU (B1) or ARC_MFU (B2) */
} arc_ghost_t;

typedef struct arc_glist {
	arc_ghost_t *gl_head, *gl_tail;
	uint64_t gl_bytes;
} arc_glist_t;

typedef struct arc_nlist {
	arc_node_t *nl_head, *nl_tail;
	uint64_t nl_bytes;
} arc_nlist_t;

struct arc {
	pthread_mutex_t arc_lock;
	arc_nlist_t arc_mru, arc_mfu;           /* arc_lock */
	arc_nlist_t arc_oncel;                  /* once blocks (an_list ARC_MRU), evicted first */
	arc_glist_t arc_b1, arc_b2;
	tarn_hash_t arc_ghosts;                 /* arc_ghost_t by key */
	uint64_t arc_held;                      /* bytes ARC_HELD */
	uint64_t arc_meta;                      /* bytes counted with ARC_F_META */
	uint64_t arc_once;                      /* bytes listed with ARC_F_ONCE */
	uint64_t arc_c, arc_p, arc_min, arc_max;
	arc_stats_t arc_st;                     /* counters: atomics or arc_lock */
};

static uint32_t
arc_ghost_hash(uint64_t key)
{
	return ((uint32_t)((key * 0x9E3779B97F4A7C15ULL) >> 32));
}

static uint32_t
arc_ghost_link_hash(const tarn_hlink_t *l)
{
	return (arc_ghost_hash(TARN_HASH_ENTRY(l, arc_ghost_t, ag_link)->ag_key));
}

static const tarn_hash_conf_t arc_ghost_conf = {
	.thc_hash = arc_ghost_link_hash, .thc_min_buckets = 256, .thc_load = 2,
};

uint64_t
arc_key(uint64_t pool, uint64_t vdev, uint64_t offset, uint64_t birth)
{
	uint64_t h = (offset ^ pool) * 0x9E3779B97F4A7C15ULL;
	h ^= (vdev + 1) * 0xC2B2AE3D27D4EB4FULL;
	h ^= (birth + 0x165667B19E3779F9ULL) * 0x94D049BB133111EBULL;
	h ^= h >> 31;
	return (h != 0 ? h : 1);
}

arc_t *
arc_create(uint64_t min, uint64_t max)
{
	arc_t *arc = tarn_alloc(sizeof (*arc));
	pthread_mutex_init(&arc->arc_lock, NULL);
	tarn_hash_init(&arc->arc_ghosts, &arc_ghost_conf);
	arc->arc_max = max;
	arc->arc_min = MIN(min, max);
	arc->arc_c = max;
	arc->arc_p = 0;         /* the paper's start: MRU yields first until B1 says otherwise */
	return (arc);
}

void
arc_destroy(arc_t *arc)
{
	if (arc == NULL)
		return;
	VERIFY3P(arc->arc_mru.nl_head, ==, NULL);
	VERIFY3P(arc->arc_oncel.nl_head, ==, NULL);
	VERIFY3P(arc->arc_mfu.nl_head, ==, NULL);
	VERIFY3U(arc->arc_held, ==, 0);
	for (arc_ghost_t *g = arc->arc_b1.gl_head, *nx; g != NULL; g = nx) {
		nx = g->ag_next;
		tarn_free(g);
	}
	for (arc_ghost_t *g = arc->arc_b2.gl_head, *nx; g != NULL; g = nx) {
		nx = g->ag_next;
		tarn_free(g);
	}
	tarn_hash_fini(&arc->arc_ghosts);
	pthread_mutex_destroy(&arc->arc_lock);
	tarn_free(arc);
}

/* ---- lists (arc_lock held) ---- */

static arc_nlist_t *
arc_nlist(arc_t *arc, int list)
{
	return (list == ARC_MFU ? &arc->arc_mfu : &arc->arc_mru);
}

/* The list n is (or goes) on: once blocks have their own, counted as MRU. */
static arc_nlist_t *
arc_node_nlist(arc_t *arc, const arc_node_t *n, int list)
{
	return ((n->an_flags & ARC_F_ONCE) ? &arc->arc_oncel : arc_nlist(arc, list));
}

static void
arc_link(arc_t *arc, arc_node_t *n, int list)
{
	arc_nlist_t *l = arc_node_nlist(arc, n, list);
	n->an_prev = NULL;
	n->an_next = l->nl_head;
	if (l->nl_head != NULL)
		l->nl_head->an_prev = n;
	else
		l->nl_tail = n;
	l->nl_head = n;
	l->nl_bytes += n->an_size;
	n->an_list = (uint8_t)list;
	n->an_last = (uint8_t)list;
}

/* Take n off whatever it is on; it stays counted as ARC_HELD when held. */
static void
arc_unlink(arc_t *arc, arc_node_t *n, bool held)
{
	if (n->an_list == ARC_MRU || n->an_list == ARC_MFU) {
		arc_nlist_t *l = arc_node_nlist(arc, n, n->an_list);
		if (n->an_prev != NULL) n->an_prev->an_next = n->an_next;
		else l->nl_head = n->an_next;
		if (n->an_next != NULL) n->an_next->an_prev = n->an_prev;
		else l->nl_tail = n->an_prev;
		n->an_prev = n->an_next = NULL;
		l->nl_bytes -= n->an_size;
		if (n->an_flags & ARC_F_ONCE) {
			arc->arc_once -= n->an_size;
			n->an_flags &= (uint8_t)~ARC_F_ONCE;
		}
	} else if (n->an_list == ARC_HELD) {
		arc->arc_held -= n->an_size;
	} else {
		return;
	}
	if (held) {
		arc->arc_held += n->an_size;
		n->an_list = ARC_HELD;
		return;
	}
	if (n->an_flags & ARC_F_META)
		arc->arc_meta -= n->an_size;
	n->an_flags = 0;
	n->an_list = ARC_NONE;
}

static uint64_t
arc_size_locked(const arc_t *arc)
{
	return (arc->arc_mru.nl_bytes + arc->arc_mfu.nl_bytes + arc->arc_oncel.nl_bytes +
	    arc->arc_held);
}

/* ---- ghosts (arc_lock held) ---- */

static arc_glist_t *
arc_glist(arc_t *arc, int list)
{
	return (list == ARC_MFU ? &arc->arc_b2 : &arc->arc_b1);
}

static arc_ghost_t *
arc_ghost_find(arc_t *arc, uint64_t key)
{
	arc_ghost_t *g;
	TARN_HASH_FIND(&arc->arc_ghosts, arc_ghost_hash(key), g, ag_link, g->ag_key == key);
	return (g);
}

static void
arc_ghost_remove(arc_t *arc, arc_ghost_t *g)
{
	arc_glist_t *l = arc_glist(arc, g->ag_list);
	if (g->ag_prev != NULL) g->ag_prev->ag_next = g->ag_next;
	else l->gl_head = g->ag_next;
	if (g->ag_next != NULL) g->ag_next->ag_prev = g->ag_prev;
	else l->gl_tail = g->ag_prev;
	l->gl_bytes -= g->ag_size;
	tarn_hash_remove(&arc->arc_ghosts, arc_ghost_hash(g->ag_key), &g->ag_link);
	tarn_free(g);
}

/* Trim the ghosts: MRU + B1 <= c, all four lists <= 2c. */
static void
arc_ghost_trim(arc_t *arc)
{
	while (arc->arc_b1.gl_tail != NULL &&
	    arc->arc_mru.nl_bytes + arc->arc_b1.gl_bytes > arc->arc_c)
		arc_ghost_remove(arc, arc->arc_b1.gl_tail);
	while (arc_size_locked(arc) + arc->arc_b1.gl_bytes + arc->arc_b2.gl_bytes >
	    2 * arc->arc_c) {
		arc_ghost_t *g = arc->arc_b2.gl_tail != NULL ? arc->arc_b2.gl_tail :
		    arc->arc_b1.gl_tail;
		if (g == NULL)
			break;
		arc_ghost_remove(arc, g);
	}
}

static void
arc_ghost_add(arc_t *arc, uint64_t key, uint32_t size, int list)
{
	if (key == 0)
		return;
	arc_ghost_t *g = arc_ghost_find(arc, key);
	if (g != NULL)
		arc_ghost_remove(arc, g);
	g = tarn_alloc(sizeof (*g));
	g->ag_key = key;
	g->ag_size = size;
	g->ag_list = (uint8_t)list;
	arc_glist_t *l = arc_glist(arc, list);
	g->ag_next = l->gl_head;
	if (l->gl_head != NULL)
		l->gl_head->ag_prev = g;
	else
		l->gl_tail = g;
	l->gl_head = g;
	l->gl_bytes += size;
	tarn_hash_insert(&arc->arc_ghosts, arc_ghost_hash(key), &g->ag_link);
	arc_ghost_trim(arc);
}

/*
 * A new block whose identity is a ghost: adapt p (ARC's rule, in bytes)
 * and say it belongs in MFU.  False when it is no ghost.
 */
static bool
arc_ghost_hit(arc_t *arc, uint64_t key, uint32_t size)
{
	arc_ghost_t *g = key != 0 ? arc_ghost_find(arc, key) : NULL;
	if (g == NULL)
		return (false);
	uint64_t b1 = arc->arc_b1.gl_bytes, b2 = arc->arc_b2.gl_bytes;
	if (g->ag_list == ARC_MRU) {
		uint64_t d = b2 > b1 && b1 > 0 ? (uint64_t)size * (b2 / b1) : size;
		arc->arc_p = MIN(arc->arc_c, arc->arc_p + d);
		arc->arc_st.as_mru_ghost_hits++;
	} else {
		uint64_t d = b1 > b2 && b2 > 0 ? (uint64_t)size * (b1 / b2) : size;
		arc->arc_p = arc->arc_p > d ? arc->arc_p - d : 0;
		arc->arc_st.as_mfu_ghost_hits++;
	}
	arc_ghost_remove(arc, g);
	return (true);
}

static bool arc_evict_round(arc_t *arc, int max_skip, bool strict);

/* ---- the owner's calls ---- */

bool
arc_insert(arc_t *arc, arc_node_t *n, uint32_t size, int flags)
{
	bool promote = n->an_ref;
	n->an_ref = false;
	tarn_mutex_lock(&arc->arc_lock, ARC);
	if (n->an_list == ARC_MRU || n->an_list == ARC_MFU) {
		tarn_mutex_unlock(&arc->arc_lock);
		return (true);          /* listed already */
	}
	arc_unlink(arc, n, false);      /* from ARC_HELD: counted again below */
	if ((flags & ARC_F_ONCE) && !promote &&
	    arc->arc_once + size > arc->arc_c / ARC_ONCE_DIV &&
	    arc_size_locked(arc) + size > arc->arc_c) {
		arc->arc_st.as_once_drops++;
		tarn_mutex_unlock(&arc->arc_lock);
		return (false);
	}
	int list;
	if (n->an_last == ARC_NONE)
		list = arc_ghost_hit(arc, n->an_key, size) ? ARC_MFU : ARC_MRU;
	else
		list = promote ? ARC_MFU : n->an_last;
	n->an_size = size;
	n->an_flags = (uint8_t)(flags & ARC_F_META);
	if (flags & ARC_F_META)
		arc->arc_meta += size;
	if ((flags & ARC_F_ONCE) && !promote) {
		list = ARC_MRU;
		n->an_flags |= ARC_F_ONCE;
		arc->arc_once += size;
	}
	arc_link(arc, n, list);
	arc->arc_st.as_inserts++;
	bool over = arc_size_locked(arc) > arc->arc_c;
	tarn_mutex_unlock(&arc->arc_lock);
	/*
	 * Evict now, with the owner's lock of n held: victims are only
	 * try-locked, so those of the same owner lock are skipped, a few at
	 * most and only on the list the policy picks (passing on to the other
	 * list would let a scan of one object, whose blocks fill MRU's tail,
	 * evict MFU); what is left the caller's arc_evict does once it
	 * dropped its lock.  A sync that makes a whole txg's blocks clean
	 * under one dnode's lock stays within the limit this way.
	 */
	if (over)
		(void) arc_evict_round(arc, ARC_SKIP_INLINE, true);
	return (true);
}

void
arc_hold(arc_t *arc, arc_node_t *n)
{
	if (n->an_list != ARC_MRU && n->an_list != ARC_MFU)
		return;
	tarn_mutex_lock(&arc->arc_lock, ARC);
	arc_unlink(arc, n, true);
	tarn_mutex_unlock(&arc->arc_lock);
}

void
arc_forget(arc_t *arc, arc_node_t *n)
{
	if (n->an_list == ARC_NONE)
		return;
	tarn_mutex_lock(&arc->arc_lock, ARC);
	arc_unlink(arc, n, false);
	tarn_mutex_unlock(&arc->arc_lock);
}

/*
 * The next victim (arc_lock held): the oldest once block, else from MRU
 * while it holds more than p (or MFU is empty), else from MFU; `skip`
 * busy ones are passed over, oldest first, then (unless strict) the
 * other list's.  NULL when there is none.
 */
static arc_node_t *
arc_victim(arc_t *arc, int skip, bool strict)
{
	arc_nlist_t *first = &arc->arc_mfu, *second = &arc->arc_mru;
	/*
	 * Once blocks first: a stream's blocks are the cheapest to lose.  An
	 * insert's own eviction (strict) takes nothing else while there are
	 * any: when the ones there are all busy (the caller's own stream,
	 * under its lock), the caller's arc_evict finishes without its lock.
	 */
	for (arc_node_t *o = arc->arc_oncel.nl_tail; o != NULL; o = o->an_prev) {
		if (skip == 0)
			return (o);
		skip--;
	}
	if (strict && arc->arc_oncel.nl_head != NULL)
		return (NULL);
	if (arc->arc_mru.nl_head != NULL &&
	    (arc->arc_mru.nl_bytes > arc->arc_p || arc->arc_mfu.nl_head == NULL)) {
		first = &arc->arc_mru;
		second = &arc->arc_mfu;
	}
	arc_node_t *n = first->nl_tail;
	while (n != NULL && skip > 0) {
		n = n->an_prev;
		skip--;
	}
	if (n == NULL && !strict) {
		n = second->nl_tail;
		while (n != NULL && skip > 0) {
			n = n->an_prev;
			skip--;
		}
	}
	return (n);
}

/*
 * One eviction round: true when the cache is within c (or nothing is
 * left to try); gives up after max_skip busy victims (strict: see
 * arc_victim).
 */
static bool
arc_evict_round(arc_t *arc, int max_skip, bool strict)
{
	int skipped = 0;
	for (;;) {
		tarn_mutex_lock(&arc->arc_lock, ARC);
		if (arc_size_locked(arc) <= arc->arc_c) {
			tarn_mutex_unlock(&arc->arc_lock);
			return (true);
		}
		arc_node_t *n = skipped <= max_skip ? arc_victim(arc, skipped, strict) : NULL;
		if (n == NULL) {
			bool none = arc->arc_mru.nl_head == NULL && arc->arc_mfu.nl_head == NULL &&
			    arc->arc_oncel.nl_head == NULL;
			if (!none && !strict)
				arc->arc_st.as_evict_skip++;
			tarn_mutex_unlock(&arc->arc_lock);
			return (none);
		}
		if (!n->an_ops->ao_trylock(n)) {
			tarn_mutex_unlock(&arc->arc_lock);
			skipped++;
			continue;
		}
		int list = n->an_list;
		bool once = (n->an_flags & ARC_F_ONCE) != 0;
		uint32_t size = n->an_size;
		arc_unlink(arc, n, false);
		n->an_last = ARC_NONE;
		if (!once)
			arc_ghost_add(arc, n->an_key, size, list);
		arc->arc_st.as_evictions++;
		arc->arc_st.as_evict_bytes += size;
		tarn_mutex_unlock(&arc->arc_lock);
		n->an_ops->ao_evict(n);
	}
}

void
arc_evict(arc_t *arc)
{
	(void) arc_evict_round(arc, ARC_SKIP_MAX, false);
}

/* ---- statistics ---- */

void
arc_hit(arc_t *arc, arc_node_t *n, int acc, bool promote)
{
	arc_stats_t *s = &arc->arc_st;
	uint64_t *c = (acc & ARC_ACC_PREFETCH) ?
	    ((acc & ARC_ACC_META) ? &s->as_prefetch_meta_hits : &s->as_prefetch_data_hits) :
	    ((acc & ARC_ACC_META) ? &s->as_demand_meta_hits : &s->as_demand_data_hits);
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
	if (n->an_last == ARC_MFU)
		__atomic_fetch_add(&s->as_mfu_hits, 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&s->as_mru_hits, 1, __ATOMIC_RELAXED);
	if (promote)
		n->an_ref = true;
}

void
arc_miss(arc_t *arc, int acc)
{
	arc_stats_t *s = &arc->arc_st;
	uint64_t *c = (acc & ARC_ACC_PREFETCH) ?
	    ((acc & ARC_ACC_META) ? &s->as_prefetch_meta_misses : &s->as_prefetch_data_misses) :
	    ((acc & ARC_ACC_META) ? &s->as_demand_meta_misses : &s->as_demand_data_misses);
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

void
arc_note_uncached(arc_t *arc)
{
	__atomic_fetch_add(&arc->arc_st.as_uncached, 1, __ATOMIC_RELAXED);
}

static uint64_t
arc_ld(const uint64_t *p)
{
	return (__atomic_load_n(p, __ATOMIC_RELAXED));
}

void
arc_stats(arc_t *arc, arc_stats_t *out)
{
	tarn_mutex_lock(&arc->arc_lock, ARC);
	*out = arc->arc_st;
	out->as_mru_size = arc->arc_mru.nl_bytes + arc->arc_oncel.nl_bytes;
	out->as_mfu_size = arc->arc_mfu.nl_bytes;
	out->as_held_size = arc->arc_held;
	out->as_size = arc_size_locked(arc);
	out->as_meta_size = arc->arc_meta;
	out->as_data_size = out->as_size - arc->arc_meta;
	out->as_once_size = arc->arc_once;
	out->as_mru_ghost_size = arc->arc_b1.gl_bytes;
	out->as_mfu_ghost_size = arc->arc_b2.gl_bytes;
	out->as_ghost_count = tarn_hash_count(&arc->arc_ghosts);
	out->as_c = arc->arc_c;
	out->as_p = arc->arc_p;
	out->as_min = arc->arc_min;
	out->as_max = arc->arc_max;
	tarn_mutex_unlock(&arc->arc_lock);
	const arc_stats_t *s = &arc->arc_st;
	out->as_demand_data_hits = arc_ld(&s->as_demand_data_hits);
	out->as_demand_data_misses = arc_ld(&s->as_demand_data_misses);
	out->as_demand_meta_hits = arc_ld(&s->as_demand_meta_hits);
	out->as_demand_meta_misses = arc_ld(&s->as_demand_meta_misses);
	out->as_prefetch_data_hits = arc_ld(&s->as_prefetch_data_hits);
	out->as_prefetch_data_misses = arc_ld(&s->as_prefetch_data_misses);
	out->as_prefetch_meta_hits = arc_ld(&s->as_prefetch_meta_hits);
	out->as_prefetch_meta_misses = arc_ld(&s->as_prefetch_meta_misses);
	out->as_mru_hits = arc_ld(&s->as_mru_hits);
	out->as_mfu_hits = arc_ld(&s->as_mfu_hits);
	out->as_uncached = arc_ld(&s->as_uncached);
	out->as_hits = out->as_demand_data_hits + out->as_demand_meta_hits +
	    out->as_prefetch_data_hits + out->as_prefetch_meta_hits;
	out->as_misses = out->as_demand_data_misses + out->as_demand_meta_misses +
	    out->as_prefetch_data_misses + out->as_prefetch_meta_misses;
}

/* ---- limits ---- */

uint64_t
arc_limit(arc_t *arc)
{
	return (__atomic_load_n(&arc->arc_max, __ATOMIC_RELAXED));
}

int
arc_set_limits(arc_t *arc, uint64_t min, uint64_t max)
{
	if (min > max || max == 0)
		return (SET_ERROR(EINVAL));
	tarn_mutex_lock(&arc->arc_lock, ARC);
	arc->arc_min = min;
	__atomic_store_n(&arc->arc_max, max, __ATOMIC_RELAXED);
	arc->arc_c = max;
	arc->arc_p = MIN(arc->arc_p, arc->arc_c);
	arc_ghost_trim(arc);
	tarn_mutex_unlock(&arc->arc_lock);
	/* at once: retry a little while victims' owners are busy */
	for (int i = 0; i < ARC_SHRINK_TRIES && !arc_evict_round(arc, ARC_SKIP_MAX, false); i++) {
		struct timespec ts = { 0, 1000000 };
		(void) nanosleep(&ts, NULL);
	}
	return (0);
}

int
arc_parse_size(const char *s, uint64_t *out)
{
	if (s == NULL)
		return (SET_ERROR(EINVAL));
	while (isspace((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)*s) && *s != '.')
		return (SET_ERROR(EINVAL));
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno != 0 || end == s || !isfinite(v) || v < 0)
		return (SET_ERROR(EINVAL));
	double mult = 1;
	if (*end != '\0') {
		const char *units = "BKMGTPE";
		const char *u = strchr(units, toupper((unsigned char)*end));
		if (u == NULL)
			return (SET_ERROR(EINVAL));
		mult = ldexp(1.0, 10 * (int)(u - units));
		end++;
		if (u != units && (*end == 'B' || *end == 'b'))
			end++;                  /* 1GB, 1gb */
		else if (u != units && *end == 'i' && (end[1] == 'B' || end[1] == 'b'))
			end += 2;               /* 1GiB */
	}
	while (isspace((unsigned char)*end))
		end++;
	if (*end != '\0')
		return (SET_ERROR(EINVAL));
	double b = v * mult;
	if (b >= 18446744073709551615.0 || (mult == 1 && v != floor(v)))
		return (SET_ERROR(EINVAL));
	*out = (uint64_t)b;
	return (0);
}

uint64_t
arc_physmem(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || psize <= 0)
		return (4ULL * GiB);
	return ((uint64_t)pages * (uint64_t)psize);
}

uint64_t
arc_default_max(void)
{
	return (MAX(arc_physmem() / 100 * ARC_DEFAULT_PCT, 64 * MiB));
}

uint64_t
arc_default_min(uint64_t max)
{
	return (MIN(max, MAX(max / 32, 32 * MiB)));
}
