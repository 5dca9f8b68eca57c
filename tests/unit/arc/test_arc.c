/*
 * test_arc.c — the ARC's policy on its own (lib/arc), with a fake owner:
 * blocks identified by a number, each with its own lock, "read from
 * disk" on a miss.  Scan resistance, ghost hits moving p, the byte limit
 * after every operation, shrinking at once, held blocks, and the hit
 * ratio of ARC against a plain LRU (the old dbuf cache) on a loop and a
 * scan mixed with a hot set.
 */
#include "tt.h"
#include "arc.h"

#define BLK 4096u

typedef struct fblock {
	arc_node_t fb_node;
	pthread_mutex_t fb_mtx;
	bool fb_cached;
	uint64_t fb_id;
} fblock_t;

static bool
fb_trylock(arc_node_t *n)
{
	fblock_t *fb = (fblock_t *)(void *)((char *)n - offsetof(fblock_t, fb_node));
	return (pthread_mutex_trylock(&fb->fb_mtx) == 0);
}

static uint64_t fb_evicted;

static void
fb_evict(arc_node_t *n)
{
	fblock_t *fb = (fblock_t *)(void *)((char *)n - offsetof(fblock_t, fb_node));
	fb->fb_cached = false;
	fb_evicted++;
	pthread_mutex_unlock(&fb->fb_mtx);
}

static const arc_ops_t fb_ops = { fb_trylock, fb_evict };

static fblock_t *
fb_table(size_t n)
{
	fblock_t *t = tarn_alloc(n * sizeof (*t));
	for (size_t i = 0; i < n; i++) {
		pthread_mutex_init(&t[i].fb_mtx, NULL);
		t[i].fb_id = i;
	}
	return (t);
}

/* Forget every block and free the table. */
static void
fb_table_free(arc_t *arc, fblock_t *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		arc_forget(arc, &t[i].fb_node);
		pthread_mutex_destroy(&t[i].fb_mtx);
	}
	tarn_free(t);
}

/* One read of block fb, as the dmu does it: true on a hit. */
static bool
fb_access(arc_t *arc, fblock_t *fb)
{
	pthread_mutex_lock(&fb->fb_mtx);
	bool hit = fb->fb_cached;
	if (hit) {
		arc_hit(arc, &fb->fb_node, 0, true);
		arc_hold(arc, &fb->fb_node);
	} else {
		arc_miss(arc, 0);
		memset(&fb->fb_node, 0, sizeof (fb->fb_node));
		fb->fb_node.an_ops = &fb_ops;
		fb->fb_node.an_key = arc_key(7, 0, fb->fb_id * BLK, 1);
		fb->fb_cached = true;
	}
	if (!arc_insert(arc, &fb->fb_node, BLK, 0))
		fb->fb_cached = false;
	pthread_mutex_unlock(&fb->fb_mtx);
	arc_evict(arc);
	return (hit);
}

static arc_stats_t
st(arc_t *arc)
{
	arc_stats_t s;
	arc_stats(arc, &s);
	return (s);
}

/* A hot set used twice survives a one-pass scan ten times the cache. */
static void
test_scan_resistance(void)
{
	const size_t cblk = 100, hot = 60, scan = 1000;
	arc_t *arc = arc_create(0, cblk * BLK);
	fblock_t *t = fb_table(hot + scan);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < hot; i++)
			(void) fb_access(arc, &t[i]);
	for (size_t i = hot; i < hot + scan; i++) {
		(void) fb_access(arc, &t[i]);
		TT_CHECK(st(arc).as_size <= cblk * BLK);
	}
	size_t kept = 0;
	for (size_t i = 0; i < hot; i++)
		kept += t[i].fb_cached;
	printf("  hot blocks kept after a scan of %zu: %zu of %zu\n", scan, kept, hot);
	TT_EQ(kept, hot);
	arc_stats_t s = st(arc);
	TT_EQ(s.as_mfu_size, hot * BLK);
	TT_CHECK(s.as_evictions >= scan - (cblk - hot));
	fb_table_free(arc, t, hot + scan);
	arc_destroy(arc);
}

/* A miss on B1's ghost grows p; one on B2's shrinks it. */
static void
test_ghost_hits_move_p(void)
{
	const size_t cblk = 100, n = 400;
	arc_t *arc = arc_create(0, cblk * BLK);
	fblock_t *t = fb_table(n);
	/* fill MFU with blocks 0..59, used twice */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < 60; i++)
			(void) fb_access(arc, &t[i]);
	/* blocks 100..199 once: they cycle through MRU, evicted ones become B1 ghosts */
	for (size_t i = 100; i < 200; i++)
		(void) fb_access(arc, &t[i]);
	arc_stats_t s0 = st(arc);
	TT_CHECK(s0.as_mru_ghost_size > 0);
	/* come back to the first of them: ghost hits on B1, p grows */
	for (size_t i = 100; i < 130; i++)
		TT_CHECK(!fb_access(arc, &t[i]));
	arc_stats_t s1 = st(arc);
	printf("  p %" PRIu64 " -> %" PRIu64 " after %" PRIu64 " B1 ghost hits\n",
	    s0.as_p, s1.as_p, s1.as_mru_ghost_hits);
	TT_CHECK(s1.as_mru_ghost_hits >= 20);
	TT_CHECK(s1.as_p > s0.as_p);
	/* push MFU's own blocks out by more frequent ones, then miss on them: B2 hits */
	for (int pass = 0; pass < 3; pass++)
		for (size_t i = 200; i < 300; i++)
			(void) fb_access(arc, &t[i]);
	arc_stats_t s2 = st(arc);
	TT_CHECK(s2.as_mfu_ghost_size > 0);
	size_t b2 = 0;
	for (size_t i = 0; i < 60; i++)
		b2 += !fb_access(arc, &t[i]);
	arc_stats_t s3 = st(arc);
	printf("  p %" PRIu64 " -> %" PRIu64 " after %" PRIu64 " B2 ghost hits\n",
	    s2.as_p, s3.as_p, s3.as_mfu_ghost_hits - s2.as_mfu_ghost_hits);
	TT_CHECK(b2 > 0);
	TT_CHECK(s3.as_mfu_ghost_hits > s2.as_mfu_ghost_hits);
	TT_CHECK(s3.as_p < s2.as_p);
	/* the ghosts stay bounded: MRU + B1 <= c, everything <= 2c */
	TT_CHECK(s3.as_mru_size + s3.as_mru_ghost_size <= cblk * BLK);
	TT_CHECK(s3.as_size + s3.as_mru_ghost_size + s3.as_mfu_ghost_size <= 2 * cblk * BLK);
	fb_table_free(arc, t, n);
	arc_destroy(arc);
}

/* Random reads, holds and forgets: within c after every operation. */
static void
test_limit_every_op(void)
{
	const size_t cblk = 64, n = 2000;
	arc_t *arc = arc_create(0, cblk * BLK);
	fblock_t *t = fb_table(n);
	uint64_t x = 12345;
	for (int op = 0; op < 200000; op++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		size_t i = (size_t)((x >> 33) % (op % 3 == 0 ? n : 150));
		if ((x >> 20) % 50 == 0) {
			pthread_mutex_lock(&t[i].fb_mtx);
			arc_forget(arc, &t[i].fb_node);
			t[i].fb_cached = false;
			pthread_mutex_unlock(&t[i].fb_mtx);
		} else {
			(void) fb_access(arc, &t[i]);
		}
		arc_stats_t s = st(arc);
		TT_ASSERT(s.as_size <= cblk * BLK);
		TT_ASSERT(s.as_size == s.as_mru_size + s.as_mfu_size + s.as_held_size);
	}
	arc_stats_t s = st(arc);
	printf("  %" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64 " evictions, size %" PRIu64
	    " KiB of %" PRIu64 "\n", s.as_hits, s.as_misses, s.as_evictions,
	    (uint64_t)(s.as_size / KiB), (uint64_t)(cblk * BLK / KiB));
	fb_table_free(arc, t, n);
	TT_EQ(st(arc).as_size, 0);
	arc_destroy(arc);
}

/* Lowering the limit evicts at once; held blocks count and stay. */
static void
test_shrink_and_held(void)
{
	const size_t cblk = 200;
	arc_t *arc = arc_create(0, cblk * BLK);
	fblock_t *t = fb_table(cblk);
	for (size_t i = 0; i < cblk; i++)
		(void) fb_access(arc, &t[i]);
	TT_EQ(st(arc).as_size, cblk * BLK);
	/* a reader holds 10 blocks */
	for (size_t i = 0; i < 10; i++) {
		pthread_mutex_lock(&t[i].fb_mtx);
		arc_hold(arc, &t[i].fb_node);
		pthread_mutex_unlock(&t[i].fb_mtx);
	}
	TT_EQ(st(arc).as_held_size, 10 * BLK);
	TT_EQ(arc_set_limits(arc, 50 * BLK, 40 * BLK), EINVAL);   /* min > max */
	TT_EQ(st(arc).as_max, cblk * BLK);
	TT_OK(arc_set_limits(arc, 0, 50 * BLK));
	arc_stats_t s = st(arc);
	TT_EQ(s.as_size, 50 * BLK);
	TT_EQ(s.as_held_size, 10 * BLK);
	TT_EQ(s.as_c, 50 * BLK);
	for (size_t i = 0; i < 10; i++)
		TT_CHECK(t[i].fb_cached);       /* held: not evicted */
	/* down to less than what is held: every idle block goes, the held stay (the slack) */
	TT_OK(arc_set_limits(arc, 0, 4 * BLK));
	s = st(arc);
	TT_EQ(s.as_size, 10 * BLK);
	TT_EQ(s.as_mru_size + s.as_mfu_size, 0);
	/* released again: back within c at the next evict */
	for (size_t i = 0; i < 10; i++) {
		pthread_mutex_lock(&t[i].fb_mtx);
		TT_CHECK(arc_insert(arc, &t[i].fb_node, BLK, 0));
		pthread_mutex_unlock(&t[i].fb_mtx);
	}
	arc_evict(arc);
	TT_EQ(st(arc).as_size, 4 * BLK);
	fb_table_free(arc, t, cblk);
	arc_destroy(arc);
}

/* Insert t[from..to) with flags (each under its owner lock); returns how many were kept. */
static size_t
fb_insert_range(arc_t *arc, fblock_t *t, size_t from, size_t to, int flags)
{
	size_t kept = 0;
	for (size_t i = from; i < to; i++) {
		pthread_mutex_lock(&t[i].fb_mtx);
		t[i].fb_node.an_ops = &fb_ops;
		if (arc_insert(arc, &t[i].fb_node, BLK, flags))
			kept++;
		pthread_mutex_unlock(&t[i].fb_mtx);
		arc_evict(arc);
	}
	return (kept);
}

/*
 * Once blocks take the free room of the cache and are its first victims:
 * a stream into an empty cache stays whole (until the cache is full: then
 * the rest is refused, evicting nothing); a stream into a cache full of
 * other blocks pushes none of them out.  A refused one is not counted.
 */
static void
test_once_share(void)
{
	const size_t cblk = 160, extra = 40;
	arc_t *arc = arc_create(0, cblk * BLK);
	fblock_t *t = fb_table(cblk + extra);
	size_t kept = fb_insert_range(arc, t, 0, cblk + extra, ARC_F_ONCE);
	TT_EQ(kept, cblk);
	for (size_t i = 0; i < cblk + extra; i++)
		TT_EQ(t[i].fb_node.an_list, i < cblk ? ARC_MRU : ARC_NONE);
	arc_stats_t s = st(arc);
	TT_EQ(s.as_once_size, cblk * BLK);
	TT_EQ(s.as_size, cblk * BLK);
	TT_EQ(s.as_once_drops, extra);
	TT_EQ(s.as_evictions, 0);
	fb_table_free(arc, t, cblk + extra);
	arc_destroy(arc);

	/*
	 * a full cache of other blocks: once blocks are the first victims, so
	 * the stream pushes out only its own older blocks, never the others
	 */
	arc = arc_create(0, cblk * BLK);
	t = fb_table(cblk + extra);
	TT_EQ(fb_insert_range(arc, t, 0, cblk, 0), cblk);
	(void) fb_insert_range(arc, t, cblk, cblk + extra, ARC_F_ONCE);
	for (size_t i = 0; i < cblk; i++)
		TT_EQ(t[i].fb_node.an_list, ARC_MRU);
	s = st(arc);
	TT_CHECK(s.as_once_size <= BLK);
	TT_EQ(s.as_size, cblk * BLK);
	TT_EQ(s.as_once_drops + s.as_evictions, extra);
	fb_table_free(arc, t, cblk + extra);
	arc_destroy(arc);
}

/* The old dbuf cache's policy, for comparison: one LRU list. */
typedef struct lru {
	uint64_t *lr_stamp;     /* 0: not cached */
	uint64_t lr_clock, lr_n, lr_cap;
	size_t lr_nblk;
} lru_t;

static bool
lru_access(lru_t *l, size_t i)
{
	bool hit = l->lr_stamp[i] != 0;
	if (!hit && l->lr_n == l->lr_cap) {
		size_t old = 0;
		uint64_t best = UINT64_MAX;
		for (size_t j = 0; j < l->lr_nblk; j++)
			if (l->lr_stamp[j] != 0 && l->lr_stamp[j] < best) {
				best = l->lr_stamp[j];
				old = j;
			}
		l->lr_stamp[old] = 0;
		l->lr_n--;
	}
	if (!hit)
		l->lr_n++;
	l->lr_stamp[i] = ++l->lr_clock;
	return (hit);
}

/*
 * A hot set read at random, a loop 1.2x the cache, and one-pass scans,
 * interleaved: ARC's hit ratio against LRU's.
 */
static void
test_hit_ratio_vs_lru(void)
{
	const size_t cblk = 500, hot = 200, loop = 600, scan = 20000;
	const size_t n = hot + loop + scan;
	arc_t *arc = arc_create(0, cblk * BLK);
	fblock_t *t = fb_table(n);
	lru_t l = { tarn_alloc(n * sizeof (uint64_t)), 0, 0, cblk, n };
	uint64_t x = 99, ahit = 0, lhit = 0, total = 0, sc = 0, lp = 0;
	for (int r = 0; r < 60000; r++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		size_t i;
		switch ((x >> 40) % 4) {
		case 0:
		case 1:
			i = (size_t)((x >> 8) % hot);
			break;
		case 2:
			i = hot + (lp++ % loop);
			break;
		default:
			i = hot + loop + (sc++ % scan);
			break;
		}
		ahit += fb_access(arc, &t[i]);
		lhit += lru_access(&l, i);
		total++;
	}
	double ar = 100.0 * (double)ahit / (double)total, lr = 100.0 * (double)lhit / (double)total;
	printf("  hit ratio over %" PRIu64 " reads (hot set, loop 1.2x, scan): ARC %.1f%%, "
	    "LRU %.1f%%\n", total, ar, lr);
	TT_CHECK(ar > lr + 5);
	tarn_free(l.lr_stamp);
	fb_table_free(arc, t, n);
	arc_destroy(arc);
}

static void
test_parse_size(void)
{
	uint64_t v;
	TT_OK(arc_parse_size("1G", &v));
	TT_EQ(v, GiB);
	TT_OK(arc_parse_size("512M", &v));
	TT_EQ(v, 512 * MiB);
	TT_OK(arc_parse_size("1.5g", &v));
	TT_EQ(v, 3 * GiB / 2);
	TT_OK(arc_parse_size("1GiB", &v));
	TT_EQ(v, GiB);
	TT_OK(arc_parse_size("65536", &v));
	TT_EQ(v, 65536);
	TT_EQ(arc_parse_size("", &v), EINVAL);
	TT_EQ(arc_parse_size("1X", &v), EINVAL);
	TT_EQ(arc_parse_size("-1G", &v), EINVAL);
	TT_EQ(arc_parse_size("G", &v), EINVAL);
	TT_EQ(arc_parse_size("1G2", &v), EINVAL);
	TT_EQ(arc_parse_size("1.5", &v), EINVAL);
	TT_EQ(arc_parse_size("99999999999E", &v), EINVAL);
	TT_CHECK(arc_default_max() >= 64 * MiB && arc_default_max() <= arc_physmem());
}

TT_MAIN(
	{ "scan_resistance", test_scan_resistance },
	{ "ghost_hits_move_p", test_ghost_hits_move_p },
	{ "limit_every_op", test_limit_every_op },
	{ "shrink_and_held", test_shrink_and_held },
	{ "once_share", test_once_share },
	{ "hit_ratio_vs_lru", test_hit_ratio_vs_lru },
	{ "parse_size", test_parse_size },
)
