/*
 * zle.c — zero-length encoding (compression=zle): runs of zero bytes
 * become one byte, everything else is copied.  Cheap enough to leave on
 * for data that is mostly zeros with some content (preallocated files,
 * VM images, databases' empty pages) where lz4 would also find little
 * else.  Tarn's own encoding, not zfs's (docs/FORMAT.md "Compressed
 * blocks"):
 *
 *	control byte c < 128     c + 1 literal bytes follow (1 .. 128)
 *	control byte c >= 128    c - 127 zero bytes (1 .. 128)
 *
 * The encoder makes a zero run of any run of two or more zeros (a single
 * zero costs the same as a literal, and splitting a literal run for it
 * would cost a control byte).  The decoder checks every length against
 * both buffers and wants exactly dlen bytes out: damaged input is EINVAL,
 * never a read or write outside them.
 */
#include "zio.h"

#define ZLE_RUN 128     /* longest run one control byte describes */

/* Length of the run of zeros at src[i..n), at most ZLE_RUN. */
static size_t
zle_zeros(const uint8_t *src, size_t i, size_t n)
{
	size_t z = 0;
	while (i + z < n && z < ZLE_RUN && src[i + z] == 0)
		z++;
	return (z);
}

size_t
zio_zle_compress(const void *srcv, size_t slen, void *dstv, size_t cap)
{
	const uint8_t *src = srcv;
	uint8_t *dst = dstv;
	size_t i = 0, o = 0;
	while (i < slen) {
		size_t z = zle_zeros(src, i, slen);
		if (z >= 2 || (z == 1 && i + 1 == slen)) {
			if (o + 1 > cap)
				return (0);
			dst[o++] = (uint8_t)(127 + z);
			i += z;
			continue;
		}
		/* literals up to the next run of two zeros (or ZLE_RUN bytes) */
		size_t start = i, len = 0;
		while (i < slen && len < ZLE_RUN &&
		    !(src[i] == 0 && i + 1 < slen && src[i + 1] == 0)) {
			i++;
			len++;
		}
		if (o + 1 + len > cap)
			return (0);
		dst[o++] = (uint8_t)(len - 1);
		memcpy(dst + o, src + start, len);
		o += len;
	}
	return (o);
}

int
zio_zle_decompress(const void *srcv, size_t slen, void *dstv, size_t dlen)
{
	const uint8_t *src = srcv;
	uint8_t *dst = dstv;
	size_t i = 0, o = 0;
	while (i < slen) {
		uint8_t c = src[i++];
		if (c >= 128) {
			size_t z = (size_t)c - 127;
			if (z > dlen - o)
				return (SET_ERROR(EINVAL));
			memset(dst + o, 0, z);
			o += z;
		} else {
			size_t len = (size_t)c + 1;
			if (len > slen - i || len > dlen - o)
				return (SET_ERROR(EINVAL));
			memcpy(dst + o, src + i, len);
			i += len;
			o += len;
		}
	}
	return (o == dlen ? 0 : SET_ERROR(EINVAL));
}
