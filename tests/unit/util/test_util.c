/* Unit tests of the util layer: checksums, PRNG, taskq. */
#include "tt.h"
#include "tarn_util.h"
#include "cksum.h"
#include "format.h"
#include "taskq.h"

#include <unistd.h>
#include <xxhash.h>

static void
test_fletcher4_known(void)
{
	/* Four words 1,2,3,4: a=10, b=1+3+6+10=20, c=1+4+10+20=35, d=1+5+15+35=56 */
	uint32_t w[4] = { 1, 2, 3, 4 };
	zio_cksum_t zc;
	zio_checksum_compute(ZIO_CHECKSUM_FLETCHER4, w, sizeof (w), &zc);
	TT_EQ(zc.zc_word[0], 10);
	TT_EQ(zc.zc_word[1], 20);
	TT_EQ(zc.zc_word[2], 35);
	TT_EQ(zc.zc_word[3], 56);
}

static void
test_sha256_known(void)
{
	/* SHA-256("abc") begins ba7816bf 8f01cfea */
	zio_cksum_t zc;
	zio_checksum_compute(ZIO_CHECKSUM_SHA256, "abc", 3, &zc);
	const uint8_t *b = (const uint8_t *)zc.zc_word;
	TT_EQ(b[0], 0xba); TT_EQ(b[1], 0x78); TT_EQ(b[2], 0x16); TT_EQ(b[3], 0xbf);
	TT_EQ(b[4], 0x8f); TT_EQ(b[5], 0x01);
}

static void
test_checksums_detect_flip(void)
{
	uint8_t buf[4096];
	for (size_t i = 0; i < sizeof (buf); i++) buf[i] = (uint8_t)(i * 7 + 3);
	int algs[] = { ZIO_CHECKSUM_FLETCHER4, ZIO_CHECKSUM_SHA256, ZIO_CHECKSUM_XXH3_128 };
	for (size_t a = 0; a < 3; a++) {
		zio_cksum_t c1, c2;
		zio_checksum_compute(algs[a], buf, sizeof (buf), &c1);
		buf[1000] ^= 0x10;
		zio_checksum_compute(algs[a], buf, sizeof (buf), &c2);
		buf[1000] ^= 0x10;
		TT_CHECK(!zio_cksum_equal(&c1, &c2));
		zio_checksum_compute(algs[a], buf, sizeof (buf), &c2);
		TT_CHECK(zio_cksum_equal(&c1, &c2));
	}
	TT_EQ(zio_checksum_parse("sha256"), ZIO_CHECKSUM_SHA256);
	TT_CHECK(zio_checksum_parse("md5") == -1);
}

/*
 * The block checksum is libxxhash's XXH3-128 whichever code path hashes
 * it (cksum.c may use the library's AVX2 / AVX-512 dispatch): the same
 * words as the portable function, for every length class XXH3 treats
 * differently (up to 16, 128 and 240 bytes, stripes, blocks).
 */
static void
test_xxh3_matches_portable(void)
{
	const size_t lens[] = { 0, 1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241, 1000,
	    1024, 4096, 65537, 131072 };
	const size_t max = 131072 + 8;
	uint8_t *buf = tarn_alloc(max);
	tarn_rand_t r;
	tarn_rand_seed(&r, 99);
	for (size_t i = 0; i < max; i++)
		buf[i] = (uint8_t)tarn_rand_u64(&r);
	for (size_t i = 0; i < sizeof (lens) / sizeof (lens[0]); i++) {
		const uint8_t *p = buf + (i & 7);       /* aligned and not */
		zio_cksum_t zc;
		zio_checksum_compute(ZIO_CHECKSUM_XXH3_128, p, lens[i], &zc);
		XXH128_hash_t h = XXH3_128bits(p, lens[i]);
		TT_EQ(zc.zc_word[0], h.low64);
		TT_EQ(zc.zc_word[1], h.high64);
		TT_EQ(zc.zc_word[2], 0);
		TT_EQ(zc.zc_word[3], 0);
	}
	tarn_free(buf);
}

static void
test_uberblock_seal(void)
{
	uberblock_t ub;
	memset(&ub, 0, sizeof (ub));
	ub.ub_magic = UBERBLOCK_MAGIC;
	ub.ub_txg = 42;
	uberblock_seal(&ub);
	TT_CHECK(uberblock_verify(&ub));
	ub.ub_txg = 43;
	TT_CHECK(!uberblock_verify(&ub));
}

static void
test_rand_reproducible(void)
{
	tarn_rand_t a, b;
	tarn_rand_seed(&a, 1234);
	tarn_rand_seed(&b, 1234);
	for (int i = 0; i < 100; i++)
		TT_EQ(tarn_rand_u64(&a), tarn_rand_u64(&b));
	tarn_rand_seed(&b, 1235);
	TT_CHECK(tarn_rand_u64(&a) != tarn_rand_u64(&b));
}

static int counter;
static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static void
bump(void *arg)
{
	taskq_group_t *g = arg;
	pthread_mutex_lock(&counter_lock);
	counter++;
	pthread_mutex_unlock(&counter_lock);
	taskq_group_done(g, 0);
}

static void
test_taskq_runs_all(void)
{
	taskq_t *tq = taskq_create("test", 4);
	taskq_group_t g;
	taskq_group_init(&g, 1000);
	counter = 0;
	for (int i = 0; i < 1000; i++)
		taskq_dispatch(tq, bump, &g);
	TT_OK(taskq_group_wait(&g));
	TT_EQ(counter, 1000);
	taskq_wait(tq);
	taskq_destroy(tq);
}

#if !defined(__SANITIZE_ADDRESS__)
/* Resident bytes of this process (/proc/self/statm). */
static uint64_t
rss_bytes(void)
{
	unsigned long size = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	TT_ASSERT(f != NULL);
	TT_EQ(fscanf(f, "%lu %lu", &size, &rss), 2);
	fclose(f);
	return ((uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE));
}
#endif

/*
 * Freed heap memory below a block still in use stays resident until
 * tarn_mem_trim gives it back (glibc's own trim only cuts the heap's
 * top).  AddressSanitizer has its own allocator: nothing to test there.
 */
static void
test_mem_trim(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return;
#else
	enum { N = 2000, SZ = 64 * 1024 };
	void **p = tarn_alloc(N * sizeof (void *));
	for (int i = 0; i < N; i++) {
		p[i] = malloc(SZ);
		TT_ASSERT(p[i] != NULL);
		memset(p[i], 0x5a, SZ);         /* resident */
	}
	for (int i = 0; i < N; i++)
		if (i % 10 != 9) {              /* every tenth stays: no free top */
			free(p[i]);
			p[i] = NULL;
		}
	uint64_t before = rss_bytes();
	tarn_mem_trim();
	uint64_t after = rss_bytes();
	fprintf(stderr, "  resident %" PRIu64 " -> %" PRIu64 " MiB\n", before >> 20, after >> 20);
	TT_CHECK(before > after + 64 * 1024 * 1024);   /* 112 MiB were freed */
	tarn_mem_trim();                /* within the interval: does nothing */
	for (int i = 0; i < N; i++)
		free(p[i]);
	tarn_free(p);
#endif
}

/* Paths built from the leaf up; what does not fit leaves the path as it was. */
static void
test_path_prepend(void)
{
	char buf[12] = "", tmp[12];
	TT_OK(tarn_path_prepend(buf, sizeof (buf), "c", tmp));
	TT_OK(tarn_path_prepend(buf, sizeof (buf), "bb", tmp));
	TT_CHECK(strcmp(buf, "/bb/c") == 0);
	TT_OK(tarn_path_prepend(buf, sizeof (buf), "aaaaa", tmp));      /* 11 bytes: fits */
	TT_CHECK(strcmp(buf, "/aaaaa/bb/c") == 0);
	TT_EQ(tarn_path_prepend(buf, sizeof (buf), "", tmp), ENAMETOOLONG);
	TT_CHECK(strcmp(buf, "/aaaaa/bb/c") == 0);
}

TT_MAIN(
	{ "path_prepend", test_path_prepend },
	{ "mem_trim", test_mem_trim },
	{ "fletcher4_known", test_fletcher4_known },
	{ "sha256_known", test_sha256_known },
	{ "checksums_detect_flip", test_checksums_detect_flip },
	{ "xxh3_matches_portable", test_xxh3_matches_portable },
	{ "uberblock_seal", test_uberblock_seal },
	{ "rand_reproducible", test_rand_reproducible },
	{ "taskq_runs_all", test_taskq_runs_all },
)
