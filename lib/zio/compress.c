/*
 * compress.c — block compression for the zio pipeline: lz4 (liblz4),
 * zstd (libzstd, its fast negative levels too) and gzip (zlib), zle
 * (zle.c), and the names the compression property uses.
 *
 * Stored form of a compressed block (docs/FORMAT.md "Compressed blocks"):
 *
 *	offset 0  u32 LE  payload length n (bytes, 1 .. psize - 4)
 *	offset 4  n bytes the compressor's output (raw LZ4 block, one zstd
 *	                  frame, one zlib stream, RFC 1950, or zle runs)
 *	then      zeros up to psize, a multiple of 512
 *
 * The length header lets decompressors that need the exact input size
 * (LZ4) see it, and keeps the zero padding out of their input.  A block
 * is stored compressed only when that saves at least 1/8 of lsize;
 * otherwise bp_comp says "off" and psize == lsize.  Decompression checks
 * every length and expects exactly lsize bytes out, so damaged input is
 * EINVAL, never a crash or an overrun.
 *
 * zstd contexts are cached per thread (they are large to set up); the
 * cache is released when the thread exits.
 */
#include "zio.h"

#include <limits.h>
#include <pthread.h>
#include <lz4.h>
#include <zlib.h>
#include <zstd.h>

#define ZCOMP_HDR          4
#define ZCOMP_ZSTD_DEFAULT 3
#define ZCOMP_GZIP_DEFAULT 6

/* ---- per-thread zstd contexts ---- */

typedef struct zcomp_tls {
	ZSTD_CCtx *zt_cctx;
	ZSTD_DCtx *zt_dctx;
} zcomp_tls_t;

static pthread_key_t zcomp_key;
static pthread_once_t zcomp_once = PTHREAD_ONCE_INIT;

static void
zcomp_tls_free(void *arg)
{
	zcomp_tls_t *t = arg;
	if (t == NULL)
		return;
	ZSTD_freeCCtx(t->zt_cctx);
	ZSTD_freeDCtx(t->zt_dctx);
	tarn_free(t);
}

static void
zcomp_key_init(void)
{
	VERIFY0(pthread_key_create(&zcomp_key, zcomp_tls_free));
}

static zcomp_tls_t *
zcomp_tls(void)
{
	VERIFY0(pthread_once(&zcomp_once, zcomp_key_init));
	zcomp_tls_t *t = pthread_getspecific(zcomp_key);
	if (t == NULL) {
		t = tarn_alloc(sizeof (*t));
		VERIFY0(pthread_setspecific(zcomp_key, t));
	}
	return (t);
}

static ZSTD_CCtx *
zcomp_cctx(void)
{
	zcomp_tls_t *t = zcomp_tls();
	if (t->zt_cctx == NULL) {
		t->zt_cctx = ZSTD_createCCtx();
		VERIFY(t->zt_cctx != NULL);
	}
	return (t->zt_cctx);
}

static ZSTD_DCtx *
zcomp_dctx(void)
{
	zcomp_tls_t *t = zcomp_tls();
	if (t->zt_dctx == NULL) {
		t->zt_dctx = ZSTD_createDCtx();
		VERIFY(t->zt_dctx != NULL);
	}
	return (t->zt_dctx);
}

/* ---- the algorithms: return payload length, 0 when it did not fit ---- */

static size_t
lz4_comp(const void *src, size_t slen, void *dst, size_t cap, int level)
{
	int n = LZ4_compress_default(src, dst, (int)slen, (int)cap);
	return (n > 0 ? (size_t)n : 0);
}

static int
lz4_decomp(const void *src, size_t slen, void *dst, size_t dlen)
{
	int n = LZ4_decompress_safe(src, dst, (int)slen, (int)dlen);
	return (n >= 0 && (size_t)n == dlen ? 0 : SET_ERROR(EINVAL));
}

/* level 0 the default, negative the fast levels (zstd-fast-N is -N) */
static size_t
zstd_comp(const void *src, size_t slen, void *dst, size_t cap, int level)
{
	if (level == 0)
		level = ZCOMP_ZSTD_DEFAULT;
	if (level > ZSTD_maxCLevel())
		level = ZSTD_maxCLevel();
	if (level < ZSTD_minCLevel())
		level = ZSTD_minCLevel();
	size_t n = ZSTD_compressCCtx(zcomp_cctx(), dst, cap, src, slen, level);
	return (ZSTD_isError(n) ? 0 : n);
}

static int
zstd_decomp(const void *src, size_t slen, void *dst, size_t dlen)
{
	size_t n = ZSTD_decompressDCtx(zcomp_dctx(), dst, dlen, src, slen);
	return (!ZSTD_isError(n) && n == dlen ? 0 : SET_ERROR(EINVAL));
}

static size_t
gzip_comp(const void *src, size_t slen, void *dst, size_t cap, int level)
{
	z_stream zs;
	memset(&zs, 0, sizeof (zs));
	if (level <= 0 || level > 9)
		level = ZCOMP_GZIP_DEFAULT;
	if (deflateInit(&zs, level) != Z_OK)
		return (0);
	zs.next_in = (Bytef *)src;
	zs.avail_in = (uInt)slen;
	zs.next_out = dst;
	zs.avail_out = (uInt)cap;
	int rc = deflate(&zs, Z_FINISH);
	size_t n = zs.total_out;
	deflateEnd(&zs);
	return (rc == Z_STREAM_END ? n : 0);
}

static int
gzip_decomp(const void *src, size_t slen, void *dst, size_t dlen)
{
	z_stream zs;
	memset(&zs, 0, sizeof (zs));
	if (inflateInit(&zs) != Z_OK)
		return (SET_ERROR(ENOMEM));
	zs.next_in = (Bytef *)src;
	zs.avail_in = (uInt)slen;
	zs.next_out = dst;
	zs.avail_out = (uInt)dlen;
	int rc = inflate(&zs, Z_FINISH);
	bool ok = rc == Z_STREAM_END && zs.total_out == dlen;
	inflateEnd(&zs);
	return (ok ? 0 : SET_ERROR(EINVAL));
}

static size_t
zle_comp(const void *src, size_t slen, void *dst, size_t cap, int level)
{
	return (zio_zle_compress(src, slen, dst, cap));
}

typedef struct zcomp_ops {
	const char *zo_name;
	size_t (*zo_comp)(const void *src, size_t slen, void *dst, size_t cap, int level);
	int (*zo_decomp)(const void *src, size_t slen, void *dst, size_t dlen);
} zcomp_ops_t;

static const zcomp_ops_t zcomp_table[ZIO_COMPRESS_FUNCTIONS] = {
	[ZIO_COMPRESS_INHERIT] = { "inherit", NULL, NULL },
	[ZIO_COMPRESS_ON] = { "on", NULL, NULL },
	[ZIO_COMPRESS_OFF] = { "off", NULL, NULL },
	[ZIO_COMPRESS_LZ4] = { "lz4", lz4_comp, lz4_decomp },
	[ZIO_COMPRESS_ZSTD] = { "zstd", zstd_comp, zstd_decomp },
	[ZIO_COMPRESS_GZIP] = { "gzip", gzip_comp, gzip_decomp },
	[ZIO_COMPRESS_ZLE] = { "zle", zle_comp, zio_zle_decompress },
};

/*
 * Largest psize worth storing compressed: a multiple of 512 that saves
 * at least lsize/8.
 */
static uint64_t
zcomp_max_psize(uint64_t lsize)
{
	return (P2ALIGN(lsize - lsize / 8, SPA_MINBLOCKSIZE));
}

uint64_t
zio_compress(int alg, int level, const void *src, void *dst, uint64_t lsize)
{
	if (alg < 0 || alg >= ZIO_COMPRESS_FUNCTIONS ||
	    zcomp_table[alg].zo_comp == NULL || lsize > INT_MAX)
		return (lsize);
	uint64_t maxp = zcomp_max_psize(lsize);
	if (maxp <= ZCOMP_HDR)
		return (lsize);
	uint8_t *d = dst;
	size_t n = zcomp_table[alg].zo_comp(src, lsize, d + ZCOMP_HDR,
	    maxp - ZCOMP_HDR, level);
	if (n == 0 || n > maxp - ZCOMP_HDR)
		return (lsize);
	uint32_t le = (uint32_t)n;
	memcpy(d, &le, ZCOMP_HDR);
	uint64_t psize = P2ROUNDUP(n + ZCOMP_HDR, SPA_MINBLOCKSIZE);
	ASSERT3U(psize, <=, maxp);
	memset(d + ZCOMP_HDR + n, 0, psize - ZCOMP_HDR - n);
	return (psize);
}

int
zio_decompress(int alg, const void *src, uint64_t psize, void *dst, uint64_t lsize)
{
	if (alg == ZIO_COMPRESS_OFF) {
		if (psize != lsize)
			return (SET_ERROR(EINVAL));
		memmove(dst, src, lsize);
		return (0);
	}
	if (alg < 0 || alg >= ZIO_COMPRESS_FUNCTIONS ||
	    zcomp_table[alg].zo_decomp == NULL)
		return (SET_ERROR(EINVAL));
	if (psize < ZCOMP_HDR || psize > INT_MAX || lsize > INT_MAX || lsize == 0)
		return (SET_ERROR(EINVAL));
	uint32_t n;
	memcpy(&n, src, ZCOMP_HDR);
	if (n == 0 || n > psize - ZCOMP_HDR)
		return (SET_ERROR(EINVAL));
	return (zcomp_table[alg].zo_decomp((const uint8_t *)src + ZCOMP_HDR, n,
	    dst, lsize));
}

const char *
zio_compress_name(int alg)
{
	if (alg < 0 || alg >= ZIO_COMPRESS_FUNCTIONS)
		return ("unknown");
	return (zcomp_table[alg].zo_name);
}

bool
zio_zstd_fast_valid(int n)
{
	return ((n >= 1 && n <= 10) || (n >= 20 && n <= 100 && n % 10 == 0) || n == 500 ||
	    n == 1000);
}

/* Parse "<prefix>-<n>" with lo <= n <= hi; -1 when not of that form. */
static int
zcomp_parse_level(const char *name, const char *prefix, int lo, int hi)
{
	size_t pl = strlen(prefix);
	if (strncmp(name, prefix, pl) != 0 || name[pl] != '-')
		return (-1);
	const char *p = name + pl + 1;
	if (*p < '1' || *p > '9')
		return (-1);
	int v = 0;
	for (; *p != '\0'; p++) {
		if (*p < '0' || *p > '9' || v > hi)
			return (-1);
		v = v * 10 + (*p - '0');
	}
	return (v >= lo && v <= hi ? v : -1);
}

int
zio_compress_parse(const char *name, int *level)
{
	int lvl = 0, alg = -1;
	if (name == NULL)
		return (-1);
	if (strcmp(name, "on") == 0 || strcmp(name, "lz4") == 0)
		alg = ZIO_COMPRESS_LZ4;
	else if (strcmp(name, "off") == 0)
		alg = ZIO_COMPRESS_OFF;
	else if (strcmp(name, "zstd") == 0)
		alg = ZIO_COMPRESS_ZSTD;
	else if (strcmp(name, "gzip") == 0)
		alg = ZIO_COMPRESS_GZIP;
	else if (strcmp(name, "zle") == 0)
		alg = ZIO_COMPRESS_ZLE;
	else if (strcmp(name, "zstd-fast") == 0)
		alg = ZIO_COMPRESS_ZSTD, lvl = -1;
	else if ((lvl = zcomp_parse_level(name, "zstd-fast", 1, 1000)) > 0 &&
	    zio_zstd_fast_valid(lvl))
		alg = ZIO_COMPRESS_ZSTD, lvl = -lvl;
	else if ((lvl = zcomp_parse_level(name, "zstd", 1, 19)) > 0)
		alg = ZIO_COMPRESS_ZSTD;
	else if ((lvl = zcomp_parse_level(name, "gzip", 1, 9)) > 0)
		alg = ZIO_COMPRESS_GZIP;
	else
		return (-1);
	if (level != NULL)
		*level = lvl;
	return (alg);
}
