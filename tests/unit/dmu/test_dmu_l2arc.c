/*
 * The L2ARC through the dmu, on a real pool and a real cache file: a
 * small ARC evicts blocks read at random; they go to the cache device in
 * their stored form (lz4-compressed blocks compressed); read again, they
 * come from the cache device (L2 hits, fewer pool reads) byte for byte;
 * secondarycache=none feeds nothing; with the cache device's data
 * scribbled over, every read still returns the right bytes (the hits are
 * checked against the block pointers' checksums) and the bad ones count.
 */
#include "tt.h"
#include "spa.h"
#include "dmu.h"
#include "tt_pool.h"
#include "dmu_tt.h"
#include "vdev.h"

#include <unistd.h>

static tt_pool_devs_t devs;

#define BS (128 * KiB)
#define NBLK 160                /* 20 MiB: five times the ARC */

/* Half random, half runs of a byte: lz4 takes it to about half. */
static void
fill(uint8_t *d, uint64_t len, uint64_t seed)
{
	tt_fill(d, len, seed);
	for (uint64_t i = 0; i < len; i += 64)
		memset(d + i, (int)(i >> 12), 32);
}

static uint64_t
make_object(spa_t *spa, objset_t *os, uint8_t **datap)
{
	uint64_t len = NBLK * BS;
	uint8_t *data = tarn_alloc(len);
	fill(data, len, 42);
	uint64_t obj = tt_object_write(spa, os, data, len, BS);
	*datap = data;
	return (obj);
}

/* Every block once, in an order no stream detector takes for one; bad reads counted. */
static int
read_all(objset_t *os, uint64_t obj, const uint8_t *data, uint64_t seed)
{
	uint8_t *buf = tarn_alloc(8 * KiB);
	int bad = 0;
	for (uint64_t i = 0; i < NBLK; i++) {
		uint64_t b = (i * 61 + seed) % NBLK;    /* 61 is prime to NBLK */
		uint64_t off = b * BS + 16 * KiB;
		if (dmu_read(os, obj, off, 8 * KiB, buf) != 0 || memcmp(buf, data + off, 8 * KiB))
			bad++;
	}
	tarn_free(buf);
	return (bad);
}

typedef struct cache_dev {
	vdev_t *root, *leaf;
	char path[300];
} cache_dev_t;

static void
cache_open(cache_dev_t *c)
{
	snprintf(c->path, sizeof (c->path), "%s/cache0", tt_tmpdir());
	int fd = open(c->path, O_CREAT | O_RDWR | O_TRUNC, 0644);
	TT_ASSERT(fd >= 0);
	TT_OK(ftruncate(fd, 64 * MiB));
	close(fd);
	c->root = vdev_alloc(VDEV_TYPE_ROOT, 0);
	c->leaf = vdev_alloc(VDEV_TYPE_FILE, 0);
	vdev_set_path(c->leaf, c->path);
	vdev_add_child(c->root, c->leaf);
	TT_OK(vdev_open(c->root, false));
}

static void
test_l2_hits(void)
{
	arc_t *arc = arc_create(MiB, 4 * MiB);
	dmu_pool_opts_t o = { .dpo_arc = arc };
	tt_pool_files(&devs, 1, 256 * MiB);
	spa_t *spa = tt_pool_create(&devs, "l2", NULL, &o);
	objset_t *os;
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	dmu_objset_props_t p = { .osp_copies = 1, .osp_compress = ZIO_COMPRESS_LZ4,
		.osp_checksum = ZIO_CHECKSUM_DEFAULT };
	dmu_objset_set_props(os, &p);
	uint8_t *data;
	uint64_t obj = make_object(spa, os, &data);
	spa_close(spa);
	spa = tt_pool_reopen(&devs, 0, &o);
	TT_OK(spa_objset_open(spa, "t", &os));
	dmu_objset_set_props(os, &p);

	cache_dev_t c;
	cache_open(&c);
	l2arc_opts_t lo = { .lo_pool_guid = 0x77, .lo_write_max = 1ull << 30, .lo_idle_ms = 20 };
	l2arc_t *l2 = l2arc_create(&lo);
	TT_OK(l2arc_dev_add(l2, c.leaf, 5));
	dmu_pool_set_l2arc(spa_dmu_pool(spa), l2);

	/* first pass: from the pool; what the ARC evicts goes to the cache device */
	TT_EQ(read_all(os, obj, data, 0), 0);
	l2arc_flush(l2);
	l2arc_stats_t s;
	l2arc_stats(l2, &s);
	printf("  fed %" PRIu64 " blocks (%" PRIu64 " KiB stored of %" PRIu64 " KiB)\n",
	    s.ls_blocks, s.ls_size / (uint64_t)KiB, s.ls_blocks * (uint64_t)BS / (uint64_t)KiB);
	TT_CHECK(s.ls_blocks >= NBLK / 2);
	TT_CHECK(s.ls_size < s.ls_blocks * BS * 3 / 4);       /* kept compressed */

	/* second pass: the cache device answers */
	uint64_t r0 = tt_zstats(spa).zs_reads;
	l2arc_stats_t s0 = s;
	TT_EQ(read_all(os, obj, data, 17), 0);
	l2arc_stats(l2, &s);
	uint64_t hits = s.ls_hits - s0.ls_hits, preads = tt_zstats(spa).zs_reads - r0;
	printf("  second pass: %" PRIu64 " L2 hits, %" PRIu64 " pool reads\n", hits, preads);
	TT_CHECK(hits >= NBLK / 2);
	TT_CHECK(preads < NBLK / 2);
	TT_EQ(s.ls_cksum_bad, 0);

	/* the cache device's data scribbled over: still the right bytes */
	l2arc_flush(l2);
	int fd = open(c.path, O_WRONLY);
	TT_ASSERT(fd >= 0);
	uint8_t *junk = tarn_alloc(MiB);
	memset(junk, 0x6b, MiB);
	for (uint64_t off = 5 * MiB + 64 * KiB; off + MiB <= 64 * MiB; off += 2 * MiB)
		TT_ASSERT(pwrite(fd, junk, MiB, (off_t)off) == (ssize_t)MiB);
	close(fd);
	tarn_free(junk);
	TT_EQ(read_all(os, obj, data, 29), 0);
	TT_EQ(read_all(os, obj, data, 41), 0);
	l2arc_stats(l2, &s);
	printf("  after the scribble: %" PRIu64 " bad, %" PRIu64 " hits\n", s.ls_cksum_bad,
	    s.ls_hits);
	TT_CHECK(s.ls_cksum_bad > 0);

	/* secondarycache=none: nothing more is fed */
	p.osp_secondarycache = DMU_CACHE_NONE;
	dmu_objset_set_props(os, &p);
	l2arc_stats(l2, &s0);
	TT_EQ(read_all(os, obj, data, 53), 0);
	l2arc_flush(l2);
	l2arc_stats(l2, &s);
	TT_EQ(s.ls_feeds, s0.ls_feeds);

	spa_close(spa);                 /* before the L2ARC: nothing feeds it then */
	l2arc_destroy(l2);
	vdev_close(c.root);
	vdev_free(c.root);
	unlink(c.path);
	arc_destroy(arc);
	tarn_free(data);
	tt_pool_files_remove(&devs);
}

TT_MAIN({ "l2_hits", test_l2_hits })
