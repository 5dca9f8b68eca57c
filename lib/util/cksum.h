/*
 * cksum.h — block checksums: fletcher4 (hand-written, it is four sums),
 * SHA-256 (OpenSSL libcrypto) and XXH3-128 (libxxhash), the default.
 * A checksum is always 256 bits on disk; shorter ones are zero-padded.
 */
#ifndef TARN_CKSUM_H
#define TARN_CKSUM_H

#include "tarn_util.h"

typedef struct zio_cksum {
	uint64_t zc_word[4];
} zio_cksum_t;

/* Values stored in block pointers and used by the checksum property. */
enum zio_checksum {
	ZIO_CHECKSUM_INHERIT = 0,   /* property only */
	ZIO_CHECKSUM_ON = 1,        /* property only: means the default */
	ZIO_CHECKSUM_OFF = 2,
	ZIO_CHECKSUM_FLETCHER4 = 3,
	ZIO_CHECKSUM_SHA256 = 4,
	ZIO_CHECKSUM_XXH3_128 = 5,
	ZIO_CHECKSUM_FUNCTIONS
};
#define ZIO_CHECKSUM_DEFAULT ZIO_CHECKSUM_XXH3_128

/* Compute checksum `alg` of buf[0..size) into *zc.  alg must be concrete. */
void zio_checksum_compute(int alg, const void *buf, size_t size, zio_cksum_t *zc);

/* true when the checksums are equal. */
static inline bool
zio_cksum_equal(const zio_cksum_t *a, const zio_cksum_t *b)
{
	return (a->zc_word[0] == b->zc_word[0] && a->zc_word[1] == b->zc_word[1] &&
	    a->zc_word[2] == b->zc_word[2] && a->zc_word[3] == b->zc_word[3]);
}

/* Name as the checksum property spells it ("fletcher4", "sha256", "xxh3"). */
const char *zio_checksum_name(int alg);
/* Parse a property value; returns -1 when unknown. */
int zio_checksum_parse(const char *name);

#endif
