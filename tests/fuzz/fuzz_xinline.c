/*
 * fuzz_xinline.c — fuzz target for the xattr area of an inode
 * (lib/posix/posix_xinline.c): whatever the 144 bytes hold, check, get,
 * list, remove and set must stay inside them (run under ASan) and agree:
 * a damaged area is EIO for every call and left unchanged; on a sound one
 * every listed name reads back, a set either fits (the area stays sound
 * and returns the value) or leaves the area as it was, and a remove
 * leaves the name gone and the others as they were.
 *
 * Input: the area, then a name length, a value length and the bytes of a
 * name and a value to set.  Build with libFuzzer: -DTARN_LIBFUZZER
 * -fsanitize=fuzzer.  Built with plain gcc, main() runs N (argv[1],
 * default 20000) seeded inputs: random areas, areas built by sets, and
 * those with bytes flipped.
 */
#include "posix_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every name of a sound area reads back; returns how many. */
static int
fz_walk(const uint8_t *area)
{
	char list[POSIX_INLINE_MAX * 2];
	size_t total = 0;
	VERIFY0(posix_xinline_list(area, list, sizeof (list), &total));
	int n = 0;
	for (size_t off = 0; off < total; off += strlen(list + off) + 1, n++) {
		const uint8_t *v;
		size_t len;
		VERIFY0(posix_xinline_get(area, list + off, &v, &len));
		VERIFY(v >= area && v + len <= area + POSIX_INLINE_MAX);
	}
	return (n);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* private copies of exactly their size, so ASan sees any overrun */
	uint8_t *area = tarn_alloc(POSIX_INLINE_MAX), *was = tarn_alloc(POSIX_INLINE_MAX);
	memcpy(area, data, MIN(size, (size_t)POSIX_INLINE_MAX));
	memcpy(was, area, POSIX_INLINE_MAX);
	size_t at = MIN(size, (size_t)POSIX_INLINE_MAX);
	size_t nlen = at < size ? data[at++] % 40 + 1 : 6;
	size_t vlen = at < size ? data[at++] : 3;
	char name[48];
	for (size_t i = 0; i < nlen; i++)
		name[i] = (char)(at < size && data[at] != 0 ? data[at++] : 'a' + (int)(i % 26));
	name[nlen] = '\0';
	uint8_t *val = tarn_alloc(vlen + 1);
	for (size_t i = 0; i < vlen; i++)
		val[i] = at < size ? data[at++] : (uint8_t)i;

	const uint8_t *v;
	size_t len;
	char list[POSIX_INLINE_MAX * 2];
	size_t total = 0;
	if (posix_xinline_check(area) != 0) {
		VERIFY3U(posix_xinline_get(area, name, &v, &len), ==, EIO);
		VERIFY3U(posix_xinline_list(area, list, sizeof (list), &total), ==, EIO);
		VERIFY3U(posix_xinline_remove(area, name), ==, EIO);
		int e = posix_xinline_set(area, name, val, vlen);
		VERIFY(e == EIO || e == ENOSPC);
		VERIFY0(memcmp(area, was, POSIX_INLINE_MAX));
	} else {
		int before = fz_walk(area);
		int had = posix_xinline_get(area, name, &v, &len) == 0;
		if (posix_xinline_set(area, name, val, vlen) == 0) {
			VERIFY0(posix_xinline_check(area));
			VERIFY0(posix_xinline_get(area, name, &v, &len));
			VERIFY3U(len, ==, vlen);
			VERIFY0(memcmp(v, val, vlen));
			VERIFY3S(fz_walk(area), ==, before + !had);
			VERIFY0(posix_xinline_remove(area, name));
			VERIFY3U(posix_xinline_get(area, name, &v, &len), ==, ENODATA);
			VERIFY3S(fz_walk(area), ==, before - had);
		} else {
			VERIFY0(memcmp(area, was, POSIX_INLINE_MAX));
		}
	}
	tarn_free(val);
	tarn_free(was);
	tarn_free(area);
	return (0);
}

#ifndef TARN_LIBFUZZER
int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	tarn_rand_t r;
	tarn_rand_seed(&r, 0x1a7e);
	uint8_t in[POSIX_INLINE_MAX + 2 + 48 + 256];
	long sound = 0;
	for (long i = 0; i < n; i++) {
		uint8_t area[POSIX_INLINE_MAX] = { 0 };
		int kind = (int)tarn_rand_range(&r, 3);
		if (kind == 0) {
			for (size_t k = 0; k < sizeof (area); k++)
				area[k] = (uint8_t)tarn_rand_u64(&r);
		} else {
			/* built by sets of short names and values */
			int sets = (int)tarn_rand_range(&r, 8);
			for (int s = 0; s < sets; s++) {
				char nm[16];
				uint8_t vv[64];
				snprintf(nm, sizeof (nm), "user.%d", (int)tarn_rand_range(&r, 6));
				size_t vl = tarn_rand_range(&r, sizeof (vv));
				for (size_t k = 0; k < vl; k++)
					vv[k] = (uint8_t)tarn_rand_u64(&r);
				(void) posix_xinline_set(area, nm, vv, vl);
			}
			if (kind == 2)      /* damaged: bytes flipped */
				area[tarn_rand_range(&r, sizeof (area))] ^=
				    (uint8_t)(1 + tarn_rand_range(&r, 255));
		}
		sound += posix_xinline_check(area) == 0;
		memcpy(in, area, sizeof (area));
		size_t len = sizeof (area) + tarn_rand_range(&r, sizeof (in) - sizeof (area) + 1);
		for (size_t k = sizeof (area); k < len; k++)
			in[k] = (uint8_t)tarn_rand_u64(&r);
		(void) LLVMFuzzerTestOneInput(in, len);
	}
	printf("fuzz_xinline: %ld inputs, %ld sound areas\n", n, sound);
	return (0);
}
#endif
