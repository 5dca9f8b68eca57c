/*
 * test_l2arc.c — the cache device ring (lib/arc/l2arc.c) on real files:
 * fed blocks hit once written and come back byte for byte; the index is
 * rebuilt from the device by a new l2arc_t of the same pool (and not of
 * another pool); bad bytes on the device are a miss, counted, never bad
 * data; the ring wraps and forgets what it writes over; a device removed
 * while readers run; the feed never waits (drops when the writer lags);
 * the writer keeps to write_max; bad devices are refused.
 */
#include "../vdev/vdev_tt.h"
#include "l2arc.h"

#include <pthread.h>

#define POOL_GUID 0x1234abcdULL
#define BLK 4096

typedef struct dev {
	vdev_t *root, *leaf;
	char   *path;
} dev_t_;

static dev_t_
dev_open(const char *name, uint64_t size)
{
	dev_t_ d;
	d.root = vdev_alloc(VDEV_TYPE_ROOT, 0);
	d.leaf = tt_leaf(name, 0, size);
	vdev_add_child(d.root, d.leaf);
	VERIFY0(vdev_open(d.root, false));
	d.path = tarn_strdup(vdev_path(d.leaf));
	return (d);
}

/* Close the device and open its file again as it is (not made anew). */
static dev_t_
dev_reopen(dev_t_ *old)
{
	dev_t_ d;
	d.path = tarn_strdup(old->path);
	vdev_close(old->root);
	vdev_free(old->root);
	tarn_free(old->path);
	d.root = vdev_alloc(VDEV_TYPE_ROOT, 0);
	d.leaf = vdev_alloc(VDEV_TYPE_FILE, 0);
	vdev_set_path(d.leaf, d.path);
	vdev_add_child(d.root, d.leaf);
	VERIFY0(vdev_open(d.root, false));
	return (d);
}

static void
dev_close(dev_t_ *d, bool unlink_it)
{
	vdev_close(d->root);
	vdev_free(d->root);
	if (unlink_it)
		(void) unlink(d->path);
	tarn_free(d->path);
}

/* Block i's bytes: a pattern any change shows in. */
static void
blk_fill(uint8_t *b, uint32_t size, uint64_t i)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, i * 7919 + 1);
	tt_fill_random(&r, b, size);
}

static uint64_t
key_of(uint64_t i)
{
	return (0x9e3779b97f4a7c15ull * (i + 1));
}

static void
feed_n(l2arc_t *l2, uint64_t first, uint64_t n, uint32_t size)
{
	uint8_t *b = tarn_alloc(size);
	for (uint64_t i = first; i < first + n; i++) {
		blk_fill(b, size, i);
		l2arc_feed(l2, key_of(i), i, b, size);
	}
	tarn_free(b);
}

/* How many of blocks [first, first+n) hit, each checked byte for byte. */
static uint64_t
hits_n(l2arc_t *l2, uint64_t first, uint64_t n, uint32_t size)
{
	uint8_t *b = tarn_alloc(size), *want = tarn_alloc(size);
	uint64_t hits = 0;
	for (uint64_t i = first; i < first + n; i++) {
		memset(b, 0xee, size);
		if (l2arc_read(l2, key_of(i), i, b, size)) {
			blk_fill(want, size, i);
			TT_CHECK(memcmp(b, want, size) == 0);
			hits++;
		}
	}
	tarn_free(b);
	tarn_free(want);
	return (hits);
}

/* idle writes off (an hour): a chunk is written when full or flushed */
static l2arc_t *
mk(uint64_t guid, uint64_t rate)
{
	l2arc_opts_t o = { .lo_pool_guid = guid, .lo_write_max = rate, .lo_idle_ms = 3600000 };
	return (l2arc_create(&o));
}

static uint64_t
writes_of(l2arc_t *l2)
{
	l2arc_stats_t st;
	l2arc_stats(l2, &st);
	return (st.ls_writes);
}

/* Wait (up to 20 s) until l2 has written n chunks. */
static bool
wait_writes(l2arc_t *l2, uint64_t n)
{
	for (int i = 0; i < 2000 && writes_of(l2) < n; i++)
		usleep(10 * 1000);
	return (writes_of(l2) >= n);
}

static void
test_idle_write(void)
{
	/* a part-full buffer goes out after lo_idle_ms without a flush */
	dev_t_ d = dev_open("idle", 64 * MiB);
	l2arc_opts_t o = { .lo_pool_guid = POOL_GUID, .lo_idle_ms = 50 };
	l2arc_t *l2 = l2arc_create(&o);
	TT_OK(l2arc_dev_add(l2, d.leaf, 85));
	feed_n(l2, 0, 10, BLK);
	TT_CHECK(wait_writes(l2, 1));
	TT_EQ(hits_n(l2, 0, 10, BLK), 10);
	l2arc_destroy(l2);
	dev_close(&d, true);
}

static void
test_hit_after_write(void)
{
	dev_t_ d = dev_open("hit", 64 * MiB);
	l2arc_t *l2 = mk(POOL_GUID, 1ull << 30);
	TT_OK(l2arc_dev_add(l2, d.leaf, 77));
	TT_EQ(l2arc_dev_add(l2, d.leaf, 77), EEXIST);
	TT_EQ(hits_n(l2, 0, 10, BLK), 0);               /* nothing yet */
	feed_n(l2, 0, 300, BLK);
	l2arc_flush(l2);
	TT_EQ(hits_n(l2, 0, 300, BLK), 300);
	l2arc_stats_t st;
	l2arc_stats(l2, &st);
	TT_EQ(st.ls_blocks, 300);
	TT_EQ(st.ls_size, 300 * BLK);
	TT_CHECK(st.ls_hdr_size > 0 && st.ls_hdr_size < 300 * 128 + 64 * KiB);
	TT_EQ(st.ls_hits, 300);
	TT_CHECK(vdev_stat(d.leaf)->vs_ops[0] >= 300);  /* reads counted on the device */
	/* another checksum word, another size: not the same block */
	uint8_t *b = tarn_alloc(BLK);
	TT_CHECK(!l2arc_read(l2, key_of(5), 999, b, BLK));
	TT_CHECK(!l2arc_read(l2, key_of(5), 5, b, BLK / 2));
	/* a block fed twice is kept once */
	feed_n(l2, 0, 10, BLK);
	l2arc_flush(l2);
	l2arc_stats(l2, &st);
	TT_EQ(st.ls_blocks, 300);
	tarn_free(b);
	l2arc_destroy(l2);
	dev_close(&d, true);
}

static void
test_persistent(void)
{
	dev_t_ d = dev_open("pers", 64 * MiB);
	l2arc_t *l2 = mk(POOL_GUID, 1ull << 30);
	TT_OK(l2arc_dev_add(l2, d.leaf, 78));
	feed_n(l2, 0, 500, BLK);
	feed_n(l2, 1000, 20, 128 * KiB);
	l2arc_destroy(l2);              /* writes what is pending */
	d = dev_reopen(&d);
	l2 = mk(POOL_GUID, 1ull << 30);
	TT_OK(l2arc_dev_add(l2, d.leaf, 78));
	l2arc_stats_t st;
	l2arc_stats(l2, &st);
	TT_EQ(st.ls_rebuild_blocks, 520);
	TT_EQ(hits_n(l2, 0, 500, BLK), 500);
	TT_EQ(hits_n(l2, 1000, 20, 128 * KiB), 20);
	/* goes on writing after what it found */
	feed_n(l2, 2000, 100, BLK);
	l2arc_flush(l2);
	TT_EQ(hits_n(l2, 2000, 100, BLK), 100);
	TT_EQ(hits_n(l2, 0, 500, BLK), 500);
	l2arc_destroy(l2);
	d = dev_reopen(&d);

	/* another pool, or another device guid: a new ring, nothing found */
	l2 = mk(POOL_GUID + 1, 1ull << 30);
	TT_OK(l2arc_dev_add(l2, d.leaf, 78));
	l2arc_stats(l2, &st);
	TT_EQ(st.ls_rebuild_blocks, 0);
	TT_EQ(hits_n(l2, 0, 500, BLK), 0);
	l2arc_destroy(l2);
	/* ... and the first pool no longer finds its blocks there either */
	l2 = mk(POOL_GUID, 1ull << 30);
	TT_OK(l2arc_dev_add(l2, d.leaf, 78));
	TT_EQ(hits_n(l2, 0, 500, BLK), 0);
	l2arc_destroy(l2);
	dev_close(&d, true);
}

static void
test_corrupt(void)
{
	dev_t_ d = dev_open("bad", 64 * MiB);
	l2arc_t *l2 = mk(POOL_GUID, 1ull << 30);
	TT_OK(l2arc_dev_add(l2, d.leaf, 79));
	feed_n(l2, 0, 200, BLK);
	l2arc_flush(l2);
	/* scribble over the first chunk's data (past its 64 KiB header) */
	uint8_t junk[16 * BLK];
	memset(junk, 0x5a, sizeof (junk));
	tt_file_rw(d.path, true, junk, sizeof (junk), 1 * MiB + 64 * KiB + 10 * BLK);
	uint64_t h = hits_n(l2, 0, 200, BLK);
	TT_EQ(h, 200 - 16);             /* hits_n checks every hit's bytes */
	l2arc_stats_t st;
	l2arc_stats(l2, &st);
	TT_EQ(st.ls_cksum_bad, 16);
	TT_EQ(st.ls_blocks, 200 - 16);  /* the bad ones are forgotten */
	TT_EQ(hits_n(l2, 10, 16, BLK), 0);
	l2arc_stats(l2, &st);
	TT_EQ(st.ls_cksum_bad, 16);     /* not read again */
	/* a damaged chunk header: that chunk is not rebuilt, the device still works */
	l2arc_destroy(l2);
	tt_file_rw(d.path, true, junk, 512, 1 * MiB + 100);
	l2 = mk(POOL_GUID, 1ull << 30);
	TT_OK(l2arc_dev_add(l2, d.leaf, 79));
	TT_EQ(hits_n(l2, 0, 200, BLK), 0);
	feed_n(l2, 0, 50, BLK);
	l2arc_flush(l2);
	TT_EQ(hits_n(l2, 0, 50, BLK), 50);
	l2arc_destroy(l2);
	dev_close(&d, true);
}

static void
test_wrap(void)
{
	/* the smallest device: two chunks of 8 MiB */
	dev_t_ d = dev_open("wrap", l2arc_min_size());
	l2arc_t *l2 = mk(POOL_GUID, 1ull << 30);
	TT_OK(l2arc_dev_add(l2, d.leaf, 80));
	l2arc_stats_t st;
	/*
	 * a round fills a chunk: 63 blocks of 128 KiB fit, the 64th does not
	 * (it is dropped and marks the buffer full), the flush writes it out
	 */
	uint64_t per = (8 * MiB - 64 * KiB) / (128 * KiB);
	for (uint64_t round = 0; round < 5; round++) {
		feed_n(l2, round * 100, per + 1, 128 * KiB);
		l2arc_flush(l2);
		l2arc_stats(l2, &st);
		TT_CHECK(st.ls_asize <= st.ls_dev_size);
	}
	/* the last two rounds are there, the earlier ones written over */
	TT_EQ(hits_n(l2, 400, per, 128 * KiB), per);
	TT_EQ(hits_n(l2, 300, per, 128 * KiB), per);
	TT_EQ(hits_n(l2, 200, per, 128 * KiB), 0);
	TT_EQ(hits_n(l2, 0, per, 128 * KiB), 0);
	l2arc_stats(l2, &st);
	TT_EQ(st.ls_blocks, 2 * per);
	/* and after a rebuild too: the newest copy wins, the ring goes on */
	l2arc_destroy(l2);
	l2 = mk(POOL_GUID, 1ull << 30);
	TT_OK(l2arc_dev_add(l2, d.leaf, 80));
	TT_EQ(hits_n(l2, 400, per, 128 * KiB), per);
	feed_n(l2, 900, per + 1, 128 * KiB);
	l2arc_flush(l2);
	TT_EQ(hits_n(l2, 900, per, 128 * KiB), per);
	TT_EQ(hits_n(l2, 400, per, 128 * KiB), per);
	TT_EQ(hits_n(l2, 300, per, 128 * KiB), 0);
	l2arc_destroy(l2);
	dev_close(&d, true);
}

/*
 * A slow feed (a few blocks, then an idle write, again and again) fills
 * one chunk in many writes instead of using a chunk each time: on a ring
 * of two chunks, all of it stays, and comes back after a rebuild.
 */
static void
test_slow_feed_packs(void)
{
	dev_t_ d = dev_open("slow", l2arc_min_size());
	l2arc_opts_t o = { .lo_pool_guid = POOL_GUID, .lo_write_max = 1ull << 30,
		.lo_idle_ms = 20 };
	l2arc_t *l2 = l2arc_create(&o);
	TT_OK(l2arc_dev_add(l2, d.leaf, 86));
	for (uint64_t round = 0; round < 12; round++) {
		uint64_t w = writes_of(l2);
		feed_n(l2, round * 10, 10, BLK);
		TT_ASSERT(wait_writes(l2, w + 1));
	}
	l2arc_stats_t st;
	l2arc_stats(l2, &st);
	TT_CHECK(st.ls_writes >= 12);
	TT_EQ(hits_n(l2, 0, 120, BLK), 120);
	TT_EQ(st.ls_blocks, 120);
	l2arc_destroy(l2);
	l2 = l2arc_create(&o);
	TT_OK(l2arc_dev_add(l2, d.leaf, 86));
	l2arc_stats(l2, &st);
	TT_EQ(st.ls_rebuild_blocks, 120);
	TT_EQ(hits_n(l2, 0, 120, BLK), 120);
	l2arc_destroy(l2);
	dev_close(&d, true);
}

typedef struct reader_arg {
	l2arc_t *l2;
	volatile bool stop;
	uint64_t reads;
} reader_arg_t;

static void *
reader(void *arg)
{
	reader_arg_t *a = arg;
	uint8_t *b = tarn_alloc(BLK), *want = tarn_alloc(BLK);
	for (uint64_t i = 0; !a->stop; i = (i + 1) % 400) {
		if (l2arc_read(a->l2, key_of(i), i, b, BLK)) {
			blk_fill(want, BLK, i);
			TT_CHECK(memcmp(b, want, BLK) == 0);
		}
		a->reads++;
	}
	tarn_free(b);
	tarn_free(want);
	return (NULL);
}

static void
test_remove_while_reading(void)
{
	dev_t_ d = dev_open("rm", 64 * MiB);
	l2arc_t *l2 = mk(POOL_GUID, 1ull << 30);
	TT_OK(l2arc_dev_add(l2, d.leaf, 81));
	feed_n(l2, 0, 400, BLK);
	l2arc_flush(l2);
	reader_arg_t a = { l2, false, 0 };
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		VERIFY0(pthread_create(&t[i], NULL, reader, &a));
	usleep(100 * 1000);
	TT_OK(l2arc_dev_remove(l2, d.leaf));
	TT_EQ(l2arc_dev_remove(l2, d.leaf), ENOENT);
	usleep(50 * 1000);
	a.stop = true;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	TT_CHECK(a.reads > 400);
	TT_EQ(hits_n(l2, 0, 400, BLK), 0);
	l2arc_stats_t st;
	l2arc_stats(l2, &st);
	TT_EQ(st.ls_blocks, 0);
	TT_EQ(st.ls_dev_size, 0);
	/* feeding without a device is a no-op */
	feed_n(l2, 0, 10, BLK);
	l2arc_flush(l2);
	l2arc_destroy(l2);
	dev_close(&d, true);
}

static void
test_rate_and_drops(void)
{
	dev_t_ d = dev_open("rate", 128 * MiB);
	/* 16 MiB a second: after one 7 MiB chunk the next waits about 0.45 s */
	l2arc_t *l2 = mk(POOL_GUID, 16 * MiB);
	TT_OK(l2arc_dev_add(l2, d.leaf, 82));
	uint64_t per = (8 * MiB - 64 * KiB) / (128 * KiB) + 1;  /* one more than fits: full */
	feed_n(l2, 0, per, 128 * KiB);
	TT_ASSERT(wait_writes(l2, 1));
	uint64_t t0 = tarn_now_ns();
	feed_n(l2, 100, per, 128 * KiB);
	TT_ASSERT(wait_writes(l2, 2));
	feed_n(l2, 200, per, 128 * KiB);
	TT_ASSERT(wait_writes(l2, 3));
	uint64_t ms = (tarn_now_ns() - t0) / 1000000;
	TT_CHECK(ms >= 750);
	/* a feed faster than the writer: some blocks are dropped, none waits */
	l2arc_set_write_max(l2, 1 * MiB);
	t0 = tarn_now_ns();
	feed_n(l2, 1000, 4 * per, 128 * KiB);
	uint64_t feed_ms = (tarn_now_ns() - t0) / 1000000;
	l2arc_stats_t st;
	l2arc_stats(l2, &st);
	TT_CHECK(st.ls_feed_drops > 0);
	TT_CHECK(feed_ms < 5000);
	TT_EQ(st.ls_write_max, 1 * MiB);
	l2arc_set_write_max(l2, 1ull << 30);
	l2arc_destroy(l2);
	dev_close(&d, true);
}

static void
test_bad_devices(void)
{
	dev_t_ d = dev_open("small", l2arc_min_size() - 1);
	l2arc_t *l2 = mk(POOL_GUID, 0);
	TT_EQ(l2arc_dev_add(l2, d.leaf, 83), ENOSPC);
	TT_EQ(l2arc_ndevs(l2), 0);
	/* too big a block is not taken */
	dev_t_ d2 = dev_open("big", 64 * MiB);
	TT_OK(l2arc_dev_add(l2, d2.leaf, 84));
	uint8_t *b = tarn_alloc(2 * MiB);
	l2arc_feed(l2, 1, 1, b, 2 * MiB);
	l2arc_flush(l2);
	l2arc_stats_t st;
	l2arc_stats(l2, &st);
	TT_EQ(st.ls_blocks, 0);
	tarn_free(b);
	l2arc_destroy(l2);
	dev_close(&d, true);
	dev_close(&d2, true);
}

TT_MAIN({ "hit_after_write", test_hit_after_write }, { "persistent", test_persistent },
    { "corrupt", test_corrupt }, { "wrap", test_wrap },
    { "remove_while_reading", test_remove_while_reading },
    { "rate_and_drops", test_rate_and_drops }, { "bad_devices", test_bad_devices },
    { "idle_write", test_idle_write }, { "slow_feed_packs", test_slow_feed_packs })
