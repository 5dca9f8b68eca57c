/*
 * The ARC through the dmu, on real pools of file vdevs: one ARC shared by
 * two pools holds its limit while threads read objects ten times its size
 * at random (sampled all along: the listed blocks never pass arc_max by
 * more than one block per reader, everything counted never by more than
 * the blocks readers hold); lowering the limit shrinks it at once; a hot
 * set read twice survives a pass over every block of a big object in
 * random order (no stream: the once rule does not help, MFU does); and
 * primarycache=none|metadata|all decides what is kept.  dmu_read_if_cached
 * reads the cache alone.
 */
#include "tt.h"
#include "spa.h"
#include "dmu.h"
#include "tt_pool.h"
#include "dmu_tt.h"

#include <pthread.h>
#include <unistd.h>

static tt_pool_devs_t devs_a, devs_b;

#define BS (128 * KiB)
#define KB(x) ((uint64_t)((x) / KiB))
#define MB(x) ((uint64_t)((x) / MiB))

static uint64_t
make_object(spa_t *spa, objset_t *os, uint64_t nblk, uint64_t seed, uint8_t **datap)
{
	uint64_t len = nblk * BS;
	uint8_t *data = tarn_alloc(len);
	tt_fill(data, len, seed);
	uint64_t obj = tt_object_write(spa, os, data, len, BS);
	*datap = data;
	return (obj);
}

/* A pool on d with one object of nblk blocks, reopened cold with the ARC arc. */
static spa_t *
pool_with_object(tt_pool_devs_t *d, const char *name, arc_t *arc, uint64_t nblk,
    uint64_t seed, objset_t **osp, uint64_t *objp, uint8_t **datap)
{
	dmu_pool_opts_t o = { .dpo_arc = arc };
	tt_pool_files(d, 1, 256 * MiB);
	spa_t *spa = tt_pool_create(d, name, NULL, &o);
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, osp));
	*objp = make_object(spa, *osp, nblk, seed, datap);
	spa_close(spa);
	spa = tt_pool_reopen(d, 0, &o);
	TT_OK(spa_objset_open(spa, "t", osp));
	return (spa);
}

typedef struct reader {
	objset_t *r_os;
	uint64_t r_obj, r_len;
	const uint8_t *r_data;
	uint64_t r_seed;
	volatile bool *r_stop;
	int r_bad;
} reader_t;

static void *
reader_run(void *arg)
{
	reader_t *r = arg;
	uint8_t *buf = tarn_alloc(256 * KiB);
	uint64_t x = r->r_seed;
	static const uint64_t lens[] = { 4 * KiB, 16 * KiB, 64 * KiB, 200 * KiB };
	while (!*r->r_stop) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		uint64_t len = lens[(x >> 60) % 4];
		uint64_t off = ((x >> 16) % (r->r_len - len)) & ~4095ULL;
		if (dmu_read(r->r_os, r->r_obj, off, len, buf) != 0 ||
		    memcmp(buf, r->r_data + off, len) != 0)
			r->r_bad++;
	}
	tarn_free(buf);
	return (NULL);
}

#define NREADERS 4

/*
 * Two pools, one ARC of 8 MiB, objects of 40 MiB each: random reads from
 * four threads, sampled as they go.
 */
static void
test_shared_limit(void)
{
	const uint64_t max = 8 * MiB, nblk = 40 * MiB / BS;
	arc_t *arc = arc_create(MiB, max);
	objset_t *osa, *osb;
	uint64_t obja, objb;
	uint8_t *da, *db;
	spa_t *a = pool_with_object(&devs_a, "arca", arc, nblk, 1, &osa, &obja, &da);
	spa_t *b = pool_with_object(&devs_b, "arcb", arc, nblk, 2, &osb, &objb, &db);
	TT_CHECK(dmu_pool_arc(spa_dmu_pool(a)) == arc && dmu_pool_arc(spa_dmu_pool(b)) == arc);
	volatile bool stop = false;
	reader_t r[NREADERS];
	pthread_t th[NREADERS];
	for (int i = 0; i < NREADERS; i++) {
		r[i] = (reader_t){ i % 2 ? osb : osa, i % 2 ? objb : obja, nblk * BS,
			i % 2 ? db : da, 77 + (uint64_t)i, &stop, 0 };
		TT_OK(pthread_create(&th[i], NULL, reader_run, &r[i]));
	}
	uint64_t worst = 0, worst_listed = 0, samples = 0, t0 = tarn_now_ns();
	while (tarn_now_ns() - t0 < 3000000000ULL) {
		arc_stats_t s;
		arc_stats(arc, &s);
		worst = MAX(worst, s.as_size);
		worst_listed = MAX(worst_listed, s.as_size - s.as_held_size);
		samples++;
		usleep(200);
	}
	stop = true;
	for (int i = 0; i < NREADERS; i++) {
		pthread_join(th[i], NULL);
		TT_EQ(r[i].r_bad, 0);
	}
	arc_stats_t s;
	arc_stats(arc, &s);
	printf("  %" PRIu64 " samples: size at most %" PRIu64 " KiB (listed %" PRIu64
	    " KiB) of %" PRIu64 " KiB; %" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64
	    " evictions\n", samples, KB(worst), KB(worst_listed), KB(max), s.as_hits,
	    s.as_misses, s.as_evictions);
	/* listed: one block per reader between its insert and its evict */
	TT_CHECK(worst_listed <= max + NREADERS * BS);
	/* held: a reader holds at most the two blocks a read of 200 KiB spans */
	TT_CHECK(worst <= max + NREADERS * 3 * BS);
	TT_CHECK(s.as_evictions > 0 && s.as_misses > 0);
	TT_CHECK(s.as_size <= max);
	/* lowering the limit shrinks the cache before the call returns */
	TT_OK(arc_set_limits(arc, MiB, 2 * MiB));
	arc_stats(arc, &s);
	TT_CHECK(s.as_size <= 2 * MiB);
	TT_EQ(s.as_c, 2 * MiB);
	spa_close(a);
	spa_close(b);
	arc_stats(arc, &s);
	TT_EQ(s.as_size, 0);            /* closing the pools took their blocks out */
	arc_destroy(arc);
	tarn_free(da);
	tarn_free(db);
	tt_pool_files_remove(&devs_a);
	tt_pool_files_remove(&devs_b);
}

/*
 * A hot object read twice block by block, then every block of an object
 * ten times the cache once, in random order (no stream): the hot blocks
 * are in MFU and survive; reading them again reads no device.
 */
static void
test_hot_set_survives_scan(void)
{
	const uint64_t max = 8 * MiB, hotblk = 24, bigblk = 80 * MiB / BS;
	arc_t *arc = arc_create(MiB, max);
	objset_t *os;
	uint64_t hobj, bobj;
	uint8_t *hot, *big;
	dmu_pool_opts_t o = { .dpo_arc = arc };
	tt_pool_files(&devs_a, 1, 256 * MiB);
	spa_t *spa = tt_pool_create(&devs_a, "scan", NULL, &o);
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	hobj = make_object(spa, os, hotblk, 3, &hot);
	bobj = make_object(spa, os, bigblk, 4, &big);
	spa_close(spa);
	spa = tt_pool_reopen(&devs_a, 0, &o);
	TT_OK(spa_objset_open(spa, "t", &os));
	uint8_t *buf = tarn_alloc(BS);
	for (int pass = 0; pass < 2; pass++)
		for (uint64_t i = 0; i < hotblk; i++) {
			uint64_t off = ((i * 7) % hotblk) * BS + 4 * KiB;
			TT_OK(dmu_read(os, hobj, off, 8 * KiB, buf));
			TT_CHECK(memcmp(buf, hot + off, 8 * KiB) == 0);
		}
	for (uint64_t i = 0; i < bigblk; i++) {
		uint64_t b = (i * 7919) % bigblk;    /* a permutation: 7919 is prime */
		TT_OK(dmu_read(os, bobj, b * BS + 8 * KiB, 4 * KiB, buf));
		TT_CHECK(memcmp(buf, big + b * BS + 8 * KiB, 4 * KiB) == 0);
	}
	arc_stats_t s;
	arc_stats(arc, &s);
	printf("  after a scan of %" PRIu64 " MiB: size %" PRIu64 " KiB, MFU %" PRIu64
	    " KiB, MRU %" PRIu64 " KiB\n", MB(bigblk * BS), KB(s.as_size),
	    KB(s.as_mfu_size), KB(s.as_mru_size));
	TT_CHECK(s.as_size <= max);
	TT_CHECK(s.as_mfu_size >= hotblk * BS);
	uint64_t r0 = tt_zstats(spa).zs_reads;
	for (uint64_t i = 0; i < hotblk; i++) {
		TT_OK(dmu_read(os, hobj, i * BS, BS, buf));
		TT_CHECK(memcmp(buf, hot + i * BS, BS) == 0);
	}
	TT_EQ(tt_zstats(spa).zs_reads, r0);
	spa_close(spa);
	arc_destroy(arc);
	tarn_free(buf);
	tarn_free(hot);
	tarn_free(big);
	tt_pool_files_remove(&devs_a);
}

/* primarycache: none keeps nothing, metadata only metadata, all everything. */
static void
test_primarycache(void)
{
	arc_t *arc = arc_create(MiB, 64 * MiB);
	objset_t *os;
	uint64_t obj;
	uint8_t *data;
	spa_t *spa = pool_with_object(&devs_a, "pc", arc, 32, 5, &os, &obj, &data);
	uint8_t *buf = tarn_alloc(4 * MiB);
	static const uint8_t modes[] = { DMU_CACHE_NONE, DMU_CACHE_METADATA, DMU_CACHE_ALL };
	for (int m = 0; m < 3; m++) {
		spa_close(spa);         /* a cold start for each */
		dmu_pool_opts_t o = { .dpo_arc = arc };
		spa = tt_pool_reopen(&devs_a, 0, &o);
		TT_OK(spa_objset_open(spa, "t", &os));
		dmu_objset_props_t p = { .osp_copies = 1, .osp_primarycache = modes[m] };
		dmu_objset_set_props(os, &p);
		arc_stats_t s0, s1;
		arc_stats(arc, &s0);
		uint64_t r0 = tt_zstats(spa).zs_reads;
		for (int pass = 0; pass < 2; pass++) {
			TT_OK(dmu_read(os, obj, 0, 4 * MiB, buf));
			TT_CHECK(memcmp(buf, data, 4 * MiB) == 0);
		}
		arc_stats(arc, &s1);
		uint64_t reads = tt_zstats(spa).zs_reads - r0;
		printf("  primarycache=%s: data %" PRIu64 " KiB, metadata %" PRIu64
		    " KiB, not kept %" PRIu64 ", device reads %" PRIu64 "\n",
		    m == 0 ? "none" : m == 1 ? "metadata" : "all", KB(s1.as_data_size),
		    KB(s1.as_meta_size), s1.as_uncached - s0.as_uncached, reads);
		if (modes[m] == DMU_CACHE_ALL) {
			TT_CHECK(s1.as_data_size >= 4 * MiB);
			TT_CHECK(reads < 2 * 32);        /* the second pass hit */
		} else {
			TT_EQ(s1.as_data_size, 0);
			TT_CHECK(s1.as_uncached > s0.as_uncached);
			TT_CHECK(reads >= 2 * 32);       /* each pass read every block */
		}
		if (modes[m] == DMU_CACHE_NONE)
			TT_CHECK(s1.as_meta_size - s0.as_meta_size == 0 || s1.as_meta_size <
			    s0.as_meta_size + 64 * KiB);  /* only the MOS's own */
		if (modes[m] == DMU_CACHE_METADATA)
			TT_CHECK(s1.as_meta_size > 0);
	}
	spa_close(spa);
	arc_destroy(arc);
	tarn_free(buf);
	tarn_free(data);
	tt_pool_files_remove(&devs_a);
}

/*
 * dmu_read_if_cached copies cached blocks only: EAGAIN for a cold one,
 * with no device read and no data statistic of the ARC moved; after
 * dmu_read brought the block in, the same bytes as dmu_read; past the
 * end, zeros.  (Finding the object itself may count a metadata hit.)
 */
static void
test_read_if_cached(void)
{
	arc_t *arc = arc_create(MiB, 64 * MiB);
	objset_t *os;
	uint64_t obj;
	uint8_t *data;
	spa_t *spa = pool_with_object(&devs_a, "ifc", arc, 8, 6, &os, &obj, &data);
	uint8_t *buf = tarn_alloc(5 * BS);
	TT_OK(dmu_read(os, obj, 0, 4 * KiB, buf));    /* the object's dnode and block 0 */
	arc_stats_t s0, s1;
	arc_stats(arc, &s0);
	uint64_t r0 = tt_zstats(spa).zs_reads;
	TT_EQ(dmu_read_if_cached(os, obj, 3 * BS + 100, 4 * KiB, buf), EAGAIN);
	arc_stats(arc, &s1);
	TT_EQ(s1.as_demand_data_hits + s1.as_demand_data_misses,
	    s0.as_demand_data_hits + s0.as_demand_data_misses);
	TT_EQ(tt_zstats(spa).zs_reads, r0);
	TT_OK(dmu_read(os, obj, 3 * BS, 4 * KiB, buf));       /* block 3 comes in */
	arc_stats(arc, &s0);
	r0 = tt_zstats(spa).zs_reads;
	memset(buf, 0xee, BS);
	TT_OK(dmu_read_if_cached(os, obj, 3 * BS, BS, buf));
	TT_CHECK(memcmp(buf, data + 3 * BS, BS) == 0);
	/* cold blocks in the range (read-ahead may have brought the next one): EAGAIN */
	TT_EQ(dmu_read_if_cached(os, obj, 3 * BS, 5 * BS, buf), EAGAIN);
	arc_stats(arc, &s1);
	TT_EQ(s1.as_demand_data_hits + s1.as_demand_data_misses,
	    s0.as_demand_data_hits + s0.as_demand_data_misses);
	TT_EQ(tt_zstats(spa).zs_reads, r0);
	/* past the object's last block: zeros */
	memset(buf, 0xee, BS);
	TT_OK(dmu_read_if_cached(os, obj, 8 * BS, BS, buf));
	for (uint64_t i = 0; i < BS; i++)
		if (buf[i] != 0) {
			TT_CHECK(false);
			break;
		}
	spa_close(spa);
	arc_destroy(arc);
	tarn_free(buf);
	tarn_free(data);
	tt_pool_files_remove(&devs_a);
}

/* The process's VmRSS in bytes. */
static uint64_t
rss_bytes(void)
{
	char line[256];
	uint64_t kb = 0;
	FILE *f = fopen("/proc/self/status", "re");
	TT_ASSERT(f != NULL);
	while (fgets(line, sizeof (line), f) != NULL)
		if (sscanf(line, "VmRSS: %" SCNu64, &kb) == 1)
			break;
	fclose(f);
	return (kb * KiB);
}

/*
 * The memory behind the cache follows its limit (docs/DESIGN.md, "The
 * daemon's memory"): an ARC of 8 MiB, the buffers kept warm set to
 * 2 MiB as the daemon would, an object of 48 MiB in 4 KiB blocks read
 * whole in random order: the process grows by at most the ARC * 5/4 +
 * 12 MiB (warm and ready buffers, chunks being carved, dbufs); closing
 * the last pool gives it all back.
 */
static void
test_rss_follows_arc(void)
{
#if defined(__SANITIZE_ADDRESS__)
	printf("  skipped under AddressSanitizer (no buffer pool, shadow memory)\n");
	return;
#endif
	const uint64_t max = 8 * MiB, len = 48 * MiB, bs = 4 * KiB, nblk = len / bs;
	dmu_buf_warm_max(max / 4);
	arc_t *arc = arc_create(4 * MiB, max);
	dmu_pool_opts_t o = { .dpo_arc = arc };
	tt_pool_files(&devs_a, 1, 256 * MiB);
	spa_t *spa = tt_pool_create(&devs_a, "arcrss", NULL, &o);
	objset_t *os;
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	uint8_t *data = tarn_alloc(len);
	for (uint64_t b = 0; b < nblk; b++)
		tt_fill(data + b * bs, bs, 1000 + b);
	uint64_t obj = tt_object_write(spa, os, data, len, (uint32_t)bs);
	tarn_free(data);                /* a mapping of its own: given back */
	spa_close(spa);
	spa = tt_pool_reopen(&devs_a, 0, &o);
	TT_OK(spa_objset_open(spa, "t", &os));
	uint8_t buf[4096], want[4096];
	uint64_t rss0 = rss_bytes(), peak = rss0;
	for (uint64_t i = 0; i < nblk; i++) {
		/* every block once, in an order no stream detector follows */
		uint64_t b = (i * 7919) % nblk;
		TT_OK(dmu_read(os, obj, b * bs, bs, buf));
		if (i % 256 == 0) {
			tt_fill(want, bs, 1000 + b);
			TT_CHECK(memcmp(buf, want, bs) == 0);
			peak = MAX(peak, rss_bytes());
		}
	}
	peak = MAX(peak, rss_bytes());
	arc_stats_t s;
	arc_stats(arc, &s);
	printf("  RSS %" PRIu64 " MiB when opened, %" PRIu64 " MiB at most while reading "
	    "(ARC %" PRIu64 " KiB of %" PRIu64 " KiB)\n", MB(rss0), MB(peak), KB(s.as_size),
	    KB(max));
	TT_CHECK(s.as_evictions > 0);
	TT_CHECK(peak <= rss0 + max * 5 / 4 + 12 * MiB);
	spa_close(spa);
	uint64_t after = rss_bytes();
	printf("  RSS %" PRIu64 " MiB after the close\n", MB(after));
	TT_CHECK(after <= rss0 + 2 * MiB && after + max / 2 <= peak);
	arc_destroy(arc);
	dmu_buf_warm_max(512 * MiB);
	tt_pool_files_remove(&devs_a);
}

static void
cleanup(void)
{
	tt_tmpdir_cleanup();
}

TT_MAIN(
	{ "shared_limit", test_shared_limit },
	{ "hot_set_survives_scan", test_hot_set_survives_scan },
	{ "primarycache", test_primarycache },
	{ "read_if_cached", test_read_if_cached },
	{ "rss_follows_arc", test_rss_follows_arc },
	{ "cleanup", cleanup },
)
