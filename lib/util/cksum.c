/*
 * cksum.c — the checksum functions named in cksum.h.
 * fletcher4: four running 64-bit sums over 32-bit little-endian words
 * (a += w; b += a; c += b; d += c), the classic ZFS definition; a tail
 * shorter than four bytes is zero-padded.
 */
#include "cksum.h"

#include <openssl/evp.h>
#include <xxhash.h>
#ifdef TARN_XXH_DISPATCH
#include <xxh_x86dispatch.h>        /* XXH3_128bits picks AVX2/AVX-512 at run time */
#endif

static void
fletcher4(const void *buf, size_t size, zio_cksum_t *zc)
{
	const uint8_t *p = buf;
	uint64_t a = 0, b = 0, c = 0, d = 0;
	size_t n = size / 4;
	for (size_t i = 0; i < n; i++) {
		uint32_t w;
		memcpy(&w, p + 4 * i, 4);
		a += w; b += a; c += b; d += c;
	}
	if (size % 4) {
		uint32_t w = 0;
		memcpy(&w, p + 4 * n, size % 4);
		a += w; b += a; c += b; d += c;
	}
	zc->zc_word[0] = a; zc->zc_word[1] = b;
	zc->zc_word[2] = c; zc->zc_word[3] = d;
}

static void
sha256(const void *buf, size_t size, zio_cksum_t *zc)
{
	unsigned char md[32];
	unsigned int len = 0;
	VERIFY(EVP_Digest(buf, size, md, &len, EVP_sha256(), NULL) == 1);
	VERIFY3U(len, ==, 32);
	memcpy(zc->zc_word, md, 32);
}

static void
xxh3_128(const void *buf, size_t size, zio_cksum_t *zc)
{
	XXH128_hash_t h = XXH3_128bits(buf, size);
	zc->zc_word[0] = h.low64;
	zc->zc_word[1] = h.high64;
	zc->zc_word[2] = 0;
	zc->zc_word[3] = 0;
}

void
zio_checksum_compute(int alg, const void *buf, size_t size, zio_cksum_t *zc)
{
	switch (alg) {
	case ZIO_CHECKSUM_FLETCHER4: fletcher4(buf, size, zc); break;
	case ZIO_CHECKSUM_SHA256: sha256(buf, size, zc); break;
	case ZIO_CHECKSUM_XXH3_128: xxh3_128(buf, size, zc); break;
	case ZIO_CHECKSUM_OFF: memset(zc, 0, sizeof (*zc)); break;
	default: tarn_panic(__FILE__, __LINE__, "bad checksum algorithm %d", alg);
	}
}

static const char *const cksum_names[ZIO_CHECKSUM_FUNCTIONS] = {
	"inherit", "on", "off", "fletcher4", "sha256", "xxh3",
};

const char *
zio_checksum_name(int alg)
{
	if (alg < 0 || alg >= ZIO_CHECKSUM_FUNCTIONS)
		return ("unknown");
	return (cksum_names[alg]);
}

int
zio_checksum_parse(const char *name)
{
	for (int i = 0; i < ZIO_CHECKSUM_FUNCTIONS; i++)
		if (strcmp(name, cksum_names[i]) == 0)
			return (i);
	if (strcmp(name, "xxh3-128") == 0)
		return (ZIO_CHECKSUM_XXH3_128);
	return (-1);
}

/* Uberblock self-checksum lives here: it needs only the checksum code. */
#include "format.h"

void
uberblock_seal(uberblock_t *ub)
{
	memset(&ub->ub_cksum, 0, sizeof (ub->ub_cksum));
	zio_checksum_compute(ZIO_CHECKSUM_XXH3_128, ub, sizeof (*ub), &ub->ub_cksum);
}

bool
uberblock_verify(const uberblock_t *ub)
{
	uberblock_t copy = *ub;
	zio_cksum_t zc;
	if (ub->ub_magic != UBERBLOCK_MAGIC)
		return (false);
	memset(&copy.ub_cksum, 0, sizeof (copy.ub_cksum));
	zio_checksum_compute(ZIO_CHECKSUM_XXH3_128, &copy, sizeof (copy), &zc);
	return (zio_cksum_equal(&zc, &ub->ub_cksum));
}
