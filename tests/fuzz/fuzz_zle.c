/*
 * fuzz_zle.c — fuzz target for the zle decoder (lib/zio/zle.c) and the
 * zle path of zio_decompress: whatever the payload holds, decoding stays
 * inside both buffers (run under ASan) and either fails with EINVAL or
 * yields exactly the size asked for; what decodes re-encodes to a payload
 * that decodes to the same bytes.
 *
 * Input: u16 wanted size (little-endian), then the payload.  Build with
 * libFuzzer: -DTARN_LIBFUZZER -fsanitize=fuzzer.  Built with plain gcc,
 * main() runs N (argv[1], default 20000) seeded inputs: random bytes,
 * valid encodings of zero-heavy data, and those with bytes flipped or cut.
 */
#include "zio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return (0);
	size_t want = (size_t)data[0] | (size_t)data[1] << 8;
	size_t plen = size - 2;
	/* private copies of exactly their size, so ASan sees any overrun */
	uint8_t *src = tarn_alloc(plen + 1), *dst = tarn_alloc(want + 1);
	memcpy(src, data + 2, plen);
	int e = zio_zle_decompress(src, plen, dst, want);
	VERIFY(e == 0 || e == EINVAL);
	if (e == 0) {
		size_t cap = want + want / 128 + 2;
		uint8_t *re = tarn_alloc(cap), *back = tarn_alloc(want + 1);
		size_t n = zio_zle_compress(dst, want, re, cap);
		VERIFY(n > 0 || want == 0);
		VERIFY0(zio_zle_decompress(re, n, back, want));
		VERIFY0(memcmp(back, dst, want));
		tarn_free(re);
		tarn_free(back);
	}
	/* the stored form: u32 length header in front, as a block holds it */
	uint8_t *blk = tarn_alloc(plen + 4);
	uint32_t n32 = (uint32_t)plen;
	memcpy(blk, &n32, 4);
	memcpy(blk + 4, src, plen);
	int be = zio_decompress(ZIO_COMPRESS_ZLE, blk, plen + 4, dst, want);
	VERIFY(be == 0 || be == EINVAL);
	tarn_free(blk);
	tarn_free(src);
	tarn_free(dst);
	return (0);
}

#ifndef TARN_LIBFUZZER
int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	tarn_rand_t r;
	tarn_rand_seed(&r, 0x2e1e);
	static uint8_t in[2 + 8192 + 8192 / 128 + 2], plain[8192];
	long decoded = 0;
	for (long i = 0; i < n; i++) {
		size_t want = tarn_rand_range(&r, sizeof (plain) + 1), len;
		int kind = (int)tarn_rand_range(&r, 3);
		if (kind == 0) {
			len = 2 + tarn_rand_range(&r, 600);
			for (size_t k = 2; k < len; k++)
				in[k] = (uint8_t)tarn_rand_u64(&r);
		} else {
			int pct = (int)tarn_rand_range(&r, 101);
			for (size_t k = 0; k < want; k++)
				plain[k] = (int)tarn_rand_range(&r, 100) < pct ? 0 :
				    (uint8_t)tarn_rand_u64(&r);
			len = 2 + zio_zle_compress(plain, want, in + 2, sizeof (in) - 2);
			if (kind == 2 && len > 2) {     /* damaged: flipped or cut */
				if (tarn_rand_range(&r, 2) == 0)
					in[2 + tarn_rand_range(&r, len - 2)] ^=
					    (uint8_t)(1 + tarn_rand_range(&r, 255));
				else
					len -= tarn_rand_range(&r, len - 2);
			}
		}
		in[0] = (uint8_t)want;
		in[1] = (uint8_t)(want >> 8);
		uint8_t *out = tarn_alloc(want + 1);
		decoded += zio_zle_decompress(in + 2, len - 2, out, want) == 0;
		tarn_free(out);
		(void) LLVMFuzzerTestOneInput(in, len);
	}
	printf("fuzz_zle: %ld inputs, %ld decoded\n", n, decoded);
	return (0);
}
#endif
