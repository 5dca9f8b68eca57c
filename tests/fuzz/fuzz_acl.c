/*
 * fuzz_acl.c — fuzz target for the POSIX ACL values the POSIX layer
 * stores and reads back (lib/posix/posix_acl.c): posix_acl_check must
 * refuse every malformed value without a crash or an overrun (run under
 * ASan), and on the values it accepts the computations must hold their
 * promises: a chmod leaves an ACL whose mode is the new mode, and an ACL
 * inherited from a default ACL is itself valid and grants no more than
 * the mode asked for.
 *
 * Build with libFuzzer: -DTARN_LIBFUZZER -fsanitize=fuzzer.  Built with
 * plain gcc, main() runs N (argv[1], default 20000) seeded inputs: random
 * bytes, and mutations of valid ACLs.
 */
#include "posix_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4 + 8 * (POSIX_ACL_MAX_ENTRIES + 2))
		size = 4 + 8 * (POSIX_ACL_MAX_ENTRIES + 2);
	/* a private copy of exactly size bytes, so ASan sees any overrun */
	uint8_t *v = tarn_alloc(size + 1);
	memcpy(v, data, size);
	if (posix_acl_check(v, size) == 0) {
		bool equiv;
		uint32_t mode = posix_acl_mode(v, size, &equiv);
		VERIFY0(mode & ~0777U);
		uint32_t want = (uint32_t)(data[size > 5 ? 5 : 0] * 7 + size) & 0777;
		posix_acl_chmod(v, size, want);
		VERIFY0(posix_acl_check(v, size));
		VERIFY3U(posix_acl_mode(v, size, NULL), ==, want);
		uint8_t *out = tarn_alloc(size);
		uint32_t m = S_IFREG | (~want & 0777);
		(void) posix_acl_inherit(v, size, &m, out);
		VERIFY0(posix_acl_check(out, size));
		VERIFY3U(m & S_IFMT, ==, S_IFREG);
		VERIFY0(m & 0777 & want);       /* no bit the request lacked */
		tarn_free(out);
	}
	tarn_free(v);
	return (0);
}

#ifndef TARN_LIBFUZZER
/* A valid ACL: the three base entries, maybe named users and groups with a mask. */
static size_t
fz_valid_acl(uint8_t *buf, tarn_rand_t *r)
{
	size_t n = 4;
	buf[0] = 2;
	buf[1] = buf[2] = buf[3] = 0;
	int users = (int)tarn_rand_range(r, 4), groups = (int)tarn_rand_range(r, 4);
	const uint16_t tags[] = { 1, 2, 4, 8, 0x10, 0x20 };
	for (int t = 0; t < 6; t++) {
		int count = tags[t] == 2 ? users : tags[t] == 8 ? groups : 1;
		if (tags[t] == 0x10 && users + groups == 0)
			count = (int)tarn_rand_range(r, 2);
		uint32_t id = (uint32_t)tarn_rand_range(r, 100);
		for (int k = 0; k < count; k++) {
			bool named = tags[t] == 2 || tags[t] == 8;
			uint32_t eid = named ? id : 0xffffffffU;
			id += 1 + (uint32_t)tarn_rand_range(r, 1000);
			buf[n] = (uint8_t)tags[t];
			buf[n + 1] = 0;
			buf[n + 2] = (uint8_t)tarn_rand_range(r, 8);
			buf[n + 3] = 0;
			for (int b = 0; b < 4; b++)
				buf[n + 4 + b] = (uint8_t)(eid >> (8 * b));
			n += 8;
		}
	}
	return (n);
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	tarn_rand_t r;
	tarn_rand_seed(&r, 0xac1);
	uint8_t buf[256];
	size_t len = fz_valid_acl(buf, &r);
	if (posix_acl_check(buf, len) != 0) {
		fprintf(stderr, "fuzz_acl: a valid ACL does not pass the check\n");
		return (1);
	}
	long valid = 0;
	for (long i = 0; i < n; i++) {
		len = fz_valid_acl(buf, &r);
		int kind = (int)tarn_rand_range(&r, 4);
		if (kind == 0) {
			len = tarn_rand_range(&r, sizeof (buf));
			for (size_t k = 0; k < len; k++)
				buf[k] = (uint8_t)tarn_rand_u64(&r);
		} else if (kind == 1) {
			int flips = 1 + (int)tarn_rand_range(&r, 4);
			for (int f = 0; f < flips; f++)
				buf[tarn_rand_range(&r, len)] ^= (uint8_t)(1 + tarn_rand_range(&r, 255));
		} else if (kind == 2) {
			len -= tarn_rand_range(&r, len + 1);
		}
		valid += posix_acl_check(buf, len) == 0;
		(void) LLVMFuzzerTestOneInput(buf, len);
	}
	printf("fuzz_acl: %ld inputs, %ld valid\n", n, valid);
	return (0);
}
#endif
