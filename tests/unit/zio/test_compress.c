/* Unit tests of zio compression (compress.c): round trips, the 1/8 rule,
 * the stored form, damaged input, property names, threads. */
#include "tt.h"
#include "zio.h"

#include <pthread.h>

/* Fill buf with text-like, compressible bytes (ratio about 3-5x for lz4). */
static void
fill_compressible(uint8_t *buf, size_t len, uint64_t seed)
{
	static const char *words[] = { "tarn ", "pool ", "block ", "pointer ",
	    "metaslab ", "vdev ", "checksum ", "raidz ", "mirror ", "\n" };
	tarn_rand_t r;
	tarn_rand_seed(&r, seed);
	size_t off = 0;
	while (off < len) {
		const char *w = words[tarn_rand_range(&r, ARRAY_SIZE(words))];
		size_t n = MIN(strlen(w), len - off);
		memcpy(buf + off, w, n);
		off += n;
	}
}

static void
fill_random(uint8_t *buf, size_t len, uint64_t seed)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, seed);
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = tarn_rand_u64(&r);
		memcpy(buf + i, &v, MIN(8, len - i));
	}
}

typedef struct alg_level { int alg; int level; } alg_level_t;
static const alg_level_t algs[] = {
	{ ZIO_COMPRESS_LZ4, 0 }, { ZIO_COMPRESS_ZSTD, 0 }, { ZIO_COMPRESS_ZSTD, 1 },
	{ ZIO_COMPRESS_ZSTD, 19 }, { ZIO_COMPRESS_GZIP, 0 }, { ZIO_COMPRESS_GZIP, 1 },
	{ ZIO_COMPRESS_GZIP, 9 }, { ZIO_COMPRESS_ZSTD, -1 }, { ZIO_COMPRESS_ZSTD, -10 },
};

static void
test_roundtrip_compressible(void)
{
	uint8_t *src = tarn_alloc(SPA_MAXBLOCKSIZE);
	uint8_t *c = tarn_alloc(SPA_MAXBLOCKSIZE);
	uint8_t *d = tarn_alloc(SPA_MAXBLOCKSIZE);
	for (size_t a = 0; a < ARRAY_SIZE(algs); a++) {
		for (uint64_t sz = 1024; sz <= SPA_MAXBLOCKSIZE; sz *= 4) {
			/* zstd-19 on 1 MiB is slow; keep the test quick */
			if (algs[a].level == 19 && sz > 64 * KiB)
				continue;
			fill_compressible(src, sz, sz + a);
			memset(c, 0xa5, sz);
			uint64_t psize = zio_compress(algs[a].alg, algs[a].level, src, c, sz);
			TT_CHECK(psize < sz);
			TT_EQ(psize % 512, 0);
			TT_CHECK(psize * 8 <= sz * 7);
			/* header says how long the payload is; the rest is zero */
			uint32_t n;
			memcpy(&n, c, 4);
			TT_CHECK(n > 0 && n + 4 <= psize && n + 4 > psize - 512);
			for (uint64_t i = 4 + n; i < psize; i++)
				TT_ASSERT(c[i] == 0);
			memset(d, 0, sz);
			TT_OK(zio_decompress(algs[a].alg, c, psize, d, sz));
			TT_CHECK(memcmp(src, d, sz) == 0);
			/* wrong expected size */
			TT_EQ(zio_decompress(algs[a].alg, c, psize, d, sz - 512), EINVAL);
			TT_EQ(zio_decompress(algs[a].alg, c, psize, d, sz + 512), EINVAL);
		}
	}
	tarn_free(src);
	tarn_free(c);
	tarn_free(d);
}

static void
test_incompressible_stays_raw(void)
{
	uint8_t *src = tarn_alloc(256 * KiB);
	uint8_t *c = tarn_alloc(256 * KiB);
	fill_random(src, 256 * KiB, 7);
	for (size_t a = 0; a < ARRAY_SIZE(algs); a++) {
		if (algs[a].level == 19)
			continue;
		TT_EQ(zio_compress(algs[a].alg, algs[a].level, src, c, 256 * KiB), 256 * KiB);
		TT_EQ(zio_compress(algs[a].alg, algs[a].level, src, c, 512), 512);
	}
	/* A 512-byte block can never save 1/8: always raw. */
	memset(src, 0, 512);
	TT_EQ(zio_compress(ZIO_COMPRESS_LZ4, 0, src, c, 512), 512);
	/* 4 KiB of zeros compresses to one sector. */
	memset(src, 0, 4096);
	TT_EQ(zio_compress(ZIO_COMPRESS_LZ4, 0, src, c, 4096), 512);
	/* Off and unknown algorithms never compress. */
	TT_EQ(zio_compress(ZIO_COMPRESS_OFF, 0, src, c, 4096), 4096);
	TT_EQ(zio_compress(99, 0, src, c, 4096), 4096);
	/* Half random, half zeros: saves about half. */
	fill_random(src, 128 * KiB, 9);
	memset(src + 64 * KiB, 0, 64 * KiB);
	uint64_t p = zio_compress(ZIO_COMPRESS_LZ4, 0, src, c, 128 * KiB);
	TT_CHECK(p > 64 * KiB && p < 72 * KiB);
	tarn_free(src);
	tarn_free(c);
}

/* 7/8 random + 1/8 zeros: saving just under 1/8 is not enough. */
static void
test_one_eighth_rule(void)
{
	uint64_t sz = 64 * KiB;
	uint8_t *src = tarn_alloc(sz), *c = tarn_alloc(sz), *d = tarn_alloc(sz);
	fill_random(src, sz, 11);
	memset(src + sz - sz / 8 + 1024, 0, sz / 8 - 1024); /* saves < 1/8 */
	TT_EQ(zio_compress(ZIO_COMPRESS_LZ4, 0, src, c, sz), sz);
	fill_random(src, sz, 11);
	memset(src + sz / 2, 0, sz / 2);                 /* saves ~1/2 */
	uint64_t p = zio_compress(ZIO_COMPRESS_ZSTD, 0, src, c, sz);
	TT_CHECK(p <= sz - sz / 8);
	TT_OK(zio_decompress(ZIO_COMPRESS_ZSTD, c, p, d, sz));
	TT_CHECK(memcmp(src, d, sz) == 0);
	tarn_free(src);
	tarn_free(c);
	tarn_free(d);
}

static void
test_garbage_decompress(void)
{
	uint64_t sz = 128 * KiB;
	uint8_t *src = tarn_alloc(sz), *c = tarn_alloc(sz), *d = tarn_alloc(sz);
	tarn_rand_t r;
	tarn_rand_seed(&r, 42);
	printf("  seed 42\n");
	/* Pure garbage. */
	for (int i = 0; i < 200; i++) {
		uint64_t psize = 512 * (1 + tarn_rand_range(&r, 64));
		fill_random(c, psize, i);
		for (int alg = 0; alg < ZIO_COMPRESS_FUNCTIONS + 2; alg++) {
			int rc = zio_decompress(alg, c, psize, d, sz);
			TT_CHECK(rc == EINVAL);
		}
		/* header claiming a plausible length */
		uint32_t n = (uint32_t)(psize - 4 - tarn_rand_range(&r, 16));
		memcpy(c, &n, 4);
		for (int alg = ZIO_COMPRESS_LZ4; alg <= ZIO_COMPRESS_GZIP; alg++)
			TT_CHECK(zio_decompress(alg, c, psize, d, sz) == EINVAL);
	}
	/* Mutations of valid blocks: never a crash, EINVAL or exact size. */
	for (int alg = ZIO_COMPRESS_LZ4; alg <= ZIO_COMPRESS_GZIP; alg++) {
		fill_compressible(src, sz, alg);
		uint64_t psize = zio_compress(alg, 0, src, c, sz);
		TT_ASSERT(psize < sz);
		uint8_t *m = tarn_alloc(psize);
		for (int i = 0; i < 300; i++) {
			memcpy(m, c, psize);
			int flips = 1 + (int)tarn_rand_range(&r, 8);
			for (int f = 0; f < flips; f++)
				m[tarn_rand_range(&r, MIN(psize, 64 + (uint64_t)i * 64))] ^=
				    (uint8_t)(1 + tarn_rand_range(&r, 255));
			int rc = zio_decompress(alg, m, psize, d, sz);
			TT_CHECK(rc == 0 || rc == EINVAL);
		}
		/* Truncated input and bad headers. */
		TT_EQ(zio_decompress(alg, c, 3, d, sz), EINVAL);
		uint32_t big = (uint32_t)psize;
		memcpy(m, c, psize);
		memcpy(m, &big, 4);
		TT_EQ(zio_decompress(alg, m, psize, d, sz), EINVAL);
		uint32_t zero = 0;
		memcpy(m, &zero, 4);
		TT_EQ(zio_decompress(alg, m, psize, d, sz), EINVAL);
		tarn_free(m);
	}
	/* Uncompressed: sizes must agree. */
	TT_EQ(zio_decompress(ZIO_COMPRESS_OFF, c, 512, d, 1024), EINVAL);
	TT_OK(zio_decompress(ZIO_COMPRESS_OFF, c, 1024, d, 1024));
	TT_CHECK(memcmp(c, d, 1024) == 0);
	tarn_free(src);
	tarn_free(c);
	tarn_free(d);
}

static void
test_parse_names(void)
{
	int level = -5;
	TT_EQ(zio_compress_parse("on", &level), ZIO_COMPRESS_LZ4);
	TT_EQ(level, 0);
	TT_EQ(zio_compress_parse("off", &level), ZIO_COMPRESS_OFF);
	TT_EQ(zio_compress_parse("lz4", &level), ZIO_COMPRESS_LZ4);
	TT_EQ(zio_compress_parse("zstd", &level), ZIO_COMPRESS_ZSTD);
	TT_EQ(level, 0);
	TT_EQ(zio_compress_parse("zstd-1", &level), ZIO_COMPRESS_ZSTD);
	TT_EQ(level, 1);
	TT_EQ(zio_compress_parse("zstd-19", &level), ZIO_COMPRESS_ZSTD);
	TT_EQ(level, 19);
	TT_EQ(zio_compress_parse("gzip", &level), ZIO_COMPRESS_GZIP);
	TT_EQ(level, 0);
	TT_EQ(zio_compress_parse("gzip-9", &level), ZIO_COMPRESS_GZIP);
	TT_EQ(level, 9);
	TT_EQ(zio_compress_parse("gzip-1", NULL), ZIO_COMPRESS_GZIP);
	TT_EQ(zio_compress_parse("zle", &level), ZIO_COMPRESS_ZLE);
	TT_EQ(level, 0);
	TT_EQ(zio_compress_parse("zstd-fast", &level), ZIO_COMPRESS_ZSTD);
	TT_EQ(level, (uint64_t)-1);
	static const int fast[] = { 1, 2, 10, 20, 50, 100, 500, 1000 };
	for (size_t i = 0; i < ARRAY_SIZE(fast); i++) {
		char name[32];
		snprintf(name, sizeof (name), "zstd-fast-%d", fast[i]);
		TT_EQ(zio_compress_parse(name, &level), ZIO_COMPRESS_ZSTD);
		TT_EQ(level, (uint64_t)-fast[i]);
	}
	const char *bad[] = { "zstd-0", "zstd-20", "zstd-", "zstd-01", "gzip-10",
	    "gzip-0", "gzip-x", "lzjb", "", "ON", "zstd-1x", "zstd-99999999999",
	    "zstd-fast-0", "zstd-fast-11", "zstd-fast-25", "zstd-fast-200", "zstd-fast-1001",
	    "zstd-fast-", "zstd-fast-01", "zle-1" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		TT_CHECK(zio_compress_parse(bad[i], &level) == -1);
	TT_CHECK(zio_compress_parse(NULL, &level) == -1);
	TT_CHECK(strcmp(zio_compress_name(ZIO_COMPRESS_LZ4), "lz4") == 0);
	TT_CHECK(strcmp(zio_compress_name(ZIO_COMPRESS_ZSTD), "zstd") == 0);
	TT_CHECK(strcmp(zio_compress_name(ZIO_COMPRESS_GZIP), "gzip") == 0);
	TT_CHECK(strcmp(zio_compress_name(ZIO_COMPRESS_OFF), "off") == 0);
	TT_CHECK(strcmp(zio_compress_name(77), "unknown") == 0);
}

/* zle: runs of zeros, any mix with literals, exact sizes, every edge. */
static void
test_zle(void)
{
	uint8_t *src = tarn_alloc(SPA_MAXBLOCKSIZE), *c = tarn_alloc(SPA_MAXBLOCKSIZE);
	uint8_t *d = tarn_alloc(SPA_MAXBLOCKSIZE), tiny[8];
	/* hand-checked encodings */
	static const uint8_t in1[] = { 0, 0, 0, 7, 0, 8, 0 };
	static const uint8_t out1[] = { 130, 3, 7, 0, 8, 0 };
	size_t n = zio_zle_compress(in1, sizeof (in1), c, 64);
	TT_EQ(n, sizeof (out1));
	TT_CHECK(memcmp(c, out1, sizeof (out1)) == 0);
	TT_OK(zio_zle_decompress(c, n, d, sizeof (in1)));
	TT_CHECK(memcmp(d, in1, sizeof (in1)) == 0);
	memset(src, 0, 1000);                       /* 1000 zeros: 8 bytes */
	TT_EQ(zio_zle_compress(src, 1000, c, 64), 8);
	TT_EQ(zio_zle_compress(src, 1000, c, 7), 0);    /* does not fit */
	TT_EQ(zio_zle_compress(in1, sizeof (in1), tiny, 3), 0);
	/* round trips: sparse, dense, random, all zero, every length 1..300 */
	tarn_rand_t r;
	tarn_rand_seed(&r, 26);
	for (int t = 0; t < 400; t++) {
		size_t len = t < 300 ? (size_t)t + 1 : (size_t)(1 + tarn_rand_range(&r, MiB / 2));
		int pct = (int)tarn_rand_range(&r, 101);         /* share of zeros */
		for (size_t i = 0; i < len; i++)
			src[i] = (int)tarn_rand_range(&r, 100) < pct ? 0 :
			    (uint8_t)(1 + tarn_rand_range(&r, 255));
		n = zio_zle_compress(src, len, c, SPA_MAXBLOCKSIZE);
		if (!(n > 0 && n <= len + len / 128 + 1))
			fprintf(stderr, "  zle: %zu bytes (%d%% zeros) -> %zu\n", len, pct, n);
		TT_ASSERT(n > 0 && n <= len + len / 128 + 1);
		TT_OK(zio_zle_decompress(c, n, d, len));
		TT_ASSERT(memcmp(src, d, len) == 0);
		TT_EQ(zio_zle_decompress(c, n, d, len + 1), EINVAL);
		if (len > 1)
			TT_EQ(zio_zle_decompress(c, n, d, len - 1), EINVAL);
		if (n > 1 && c[n - 1] < 128 && n > (size_t)c[n - 1] + 1)
			TT_EQ(zio_zle_decompress(c, n - 1, d, len), EINVAL);  /* cut literal */
	}
	/* through the block interface: a mostly zero 128K block */
	memset(src, 0, 128 * KiB);
	fill_compressible(src + 5000, 3000, 1);
	uint64_t psize = zio_compress(ZIO_COMPRESS_ZLE, 0, src, c, 128 * KiB);
	TT_CHECK(psize <= 4 * KiB);
	TT_OK(zio_decompress(ZIO_COMPRESS_ZLE, c, psize, d, 128 * KiB));
	TT_CHECK(memcmp(src, d, 128 * KiB) == 0);
	/* text without zeros does not shrink: stored as is */
	fill_compressible(src, 128 * KiB, 2);
	TT_EQ(zio_compress(ZIO_COMPRESS_ZLE, 0, src, c, 128 * KiB), 128 * KiB);
	TT_EQ(zio_zle_decompress(c, 0, d, 1), EINVAL);
	TT_OK(zio_zle_decompress(c, 0, d, 0));
	tarn_free(src);
	tarn_free(c);
	tarn_free(d);
}

/* Many threads compressing at once (per-thread zstd contexts). */
static int thread_failures;

static void *
compress_thread(void *arg)
{
	uint64_t seed = (uintptr_t)arg;
	uint64_t sz = 128 * KiB;
	uint8_t *src = tarn_alloc(sz), *c = tarn_alloc(sz), *d = tarn_alloc(sz);
	for (int i = 0; i < 40; i++) {
		int alg = ZIO_COMPRESS_LZ4 + (int)((seed + i) % 3);
		fill_compressible(src, sz, seed * 1000 + i);
		uint64_t p = zio_compress(alg, 0, src, c, sz);
		if (p >= sz || zio_decompress(alg, c, p, d, sz) != 0 ||
		    memcmp(src, d, sz) != 0)
			__atomic_add_fetch(&thread_failures, 1, __ATOMIC_RELAXED);
	}
	tarn_free(src);
	tarn_free(c);
	tarn_free(d);
	return (NULL);
}

static void
test_threads(void)
{
	pthread_t t[6];
	for (uintptr_t i = 0; i < ARRAY_SIZE(t); i++)
		TT_OK(pthread_create(&t[i], NULL, compress_thread, (void *)i));
	for (size_t i = 0; i < ARRAY_SIZE(t); i++)
		pthread_join(t[i], NULL);
	TT_EQ(thread_failures, 0);
}

/* The stored form made again from the logical bytes, and decoded against the bp. */
static void
test_stored_form(void)
{
	const uint64_t lsize = 64 * 1024;
	uint8_t *l = tarn_alloc(lsize), *c = tarn_alloc(lsize), *p = tarn_alloc(lsize);
	uint8_t *back = tarn_alloc(lsize);
	for (uint64_t i = 0; i < lsize; i++)
		l[i] = (uint8_t)((i / 7) % 13);
	const int algs[] = { ZIO_COMPRESS_OFF, ZIO_COMPRESS_LZ4, ZIO_COMPRESS_ZSTD,
		ZIO_COMPRESS_GZIP };
	for (size_t a = 0; a < sizeof (algs) / sizeof (algs[0]); a++) {
		blkptr_t bp;
		BP_ZERO(&bp);
		uint64_t psize = algs[a] == ZIO_COMPRESS_OFF ? lsize :
		    zio_compress(algs[a], 0, l, c, lsize);
		TT_ASSERT(psize <= lsize);
		bp.bp_lsize = (uint32_t)lsize;
		bp.bp_psize = (uint32_t)psize;
		bp.bp_comp = (uint8_t)algs[a];
		bp.bp_cksum = ZIO_CHECKSUM_XXH3_128;
		zio_checksum_compute(bp.bp_cksum, algs[a] == ZIO_COMPRESS_OFF ? l : c, psize,
		    &bp.bp_cksum_val);
		memset(p, 0xaa, lsize);
		TT_OK(zio_stored_form(&bp, 0, l, p));
		TT_CHECK(memcmp(p, algs[a] == ZIO_COMPRESS_OFF ? l : c, psize) == 0);
		TT_OK(zio_stored_decode(&bp, p, back));
		TT_CHECK(memcmp(back, l, lsize) == 0);
		p[psize / 2] ^= 1;
		TT_EQ(zio_stored_decode(&bp, p, back), ECKSUM);
		if (algs[a] == ZIO_COMPRESS_ZSTD) {
			/* written at another level: the form does not come out the same size */
			uint64_t n19 = zio_compress(algs[a], 19, l, c, lsize);
			if (n19 != psize)
				TT_EQ(zio_stored_form(&bp, 19, l, p), EINVAL);
		}
	}
	tarn_free(l);
	tarn_free(c);
	tarn_free(p);
	tarn_free(back);
}

TT_MAIN(
	{ "stored_form", test_stored_form },
	{ "roundtrip_compressible", test_roundtrip_compressible },
	{ "incompressible_stays_raw", test_incompressible_stays_raw },
	{ "one_eighth_rule", test_one_eighth_rule },
	{ "garbage_decompress", test_garbage_decompress },
	{ "parse_names", test_parse_names },
	{ "zle", test_zle },
	{ "threads", test_threads },
)
