/*
 * fuzz_cachefile.c — fuzz target for the cache file parser (lib/spa,
 * spa_cache_parse): the text file that lists the pools this host has
 * imported, read at every start of tarnd and by `tarn pool import`.
 * A damaged file must give warnings and the pools that still parse,
 * never a crash, an overrun (run under ASan) or an entry that breaks the
 * parser's promises: every entry has a valid name and a non-zero GUID,
 * no two share either, every path is absolute, at most VDEV_PATH_MAX
 * long and has no NUL.  What parses must also survive a round trip:
 * rendered (spa_cache_render) and parsed again it gives the same entries.
 *
 * Build with libFuzzer: -DTARN_LIBFUZZER -fsanitize=fuzzer.  Built with
 * plain gcc, main() runs N (argv[1], default 20000) seeded inputs:
 * mutations of a valid file (byte flips, cut lines, lines moved, pasted
 * or made up from the format's keywords, escapes and NUL bytes).
 */
#include "spa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fz_fail(const char *what, int i)
{
	fprintf(stderr, "fuzz_cachefile: entry %d: %s\n", i, what);
	abort();
}

/* The parser's promises about what it returns. */
static void
fz_check(const spa_cache_entry_t *ents, int n)
{
	char err[128];
	for (int i = 0; i < n; i++) {
		const spa_cache_entry_t *e = &ents[i];
		if (spa_name_validate(e->sce_name, err, sizeof (err)) != 0)
			fz_fail("invalid pool name", i);
		if (e->sce_guid == 0)
			fz_fail("GUID 0", i);
		if (e->sce_npaths < 0 || e->sce_npaths > 4096)
			fz_fail("path count out of range", i);
		for (int p = 0; p < e->sce_npaths; p++) {
			const char *path = e->sce_paths[p];
			if (path == NULL || path[0] != '/' || strlen(path) > VDEV_PATH_MAX)
				fz_fail("bad path", i);
		}
		for (int j = 0; j < i; j++)
			if (strcmp(ents[j].sce_name, e->sce_name) == 0 ||
			    ents[j].sce_guid == e->sce_guid)
				fz_fail("listed twice", i);
	}
}

static bool
fz_same(const spa_cache_entry_t *a, int na, const spa_cache_entry_t *b, int nb)
{
	if (na != nb)
		return (false);
	for (int i = 0; i < na; i++) {
		if (strcmp(a[i].sce_name, b[i].sce_name) != 0 || a[i].sce_guid != b[i].sce_guid ||
		    a[i].sce_npaths != b[i].sce_npaths)
			return (false);
		for (int p = 0; p < a[i].sce_npaths; p++)
			if (strcmp(a[i].sce_paths[p], b[i].sce_paths[p]) != 0)
				return (false);
	}
	return (true);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	spa_cache_entry_t *ents, *again;
	int n, n2;
	spa_cache_parse("fuzz", (const char *)data, size, &ents, &n);
	fz_check(ents, n);
	size_t len;
	char *text = spa_cache_render(ents, n, &len);
	spa_cache_parse("fuzz-rendered", text, len, &again, &n2);
	if (!fz_same(ents, n, again, n2))
		fz_fail("render and parse again differs", n);
	tarn_free(text);
	spa_cache_free(ents, n);
	spa_cache_free(again, n2);
	return (0);
}

#ifndef TARN_LIBFUZZER
/* A valid file: a few pools, paths with escapes. */
static size_t
fz_valid(char *buf, size_t cap, tarn_rand_t *r)
{
	size_t len = 0;
	int pools = 1 + (int)tarn_rand_range(r, 4);
	len += (size_t)snprintf(buf + len, cap - len, "# Tarn cache file, format 1\n");
	for (int i = 0; i < pools && len < cap - 512; i++) {
		len += (size_t)snprintf(buf + len, cap - len, "pool %llu tank%d\n",
		    (unsigned long long)(1 + tarn_rand_range(r, 1ULL << 62)), i);
		int paths = (int)tarn_rand_range(r, 5);
		for (int p = 0; p < paths; p++)
			len += (size_t)snprintf(buf + len, cap - len, "path /dev/d%d%s\n", p,
			    tarn_rand_range(r, 4) == 0 ? "\\\\x\\n" : "");
		len += (size_t)snprintf(buf + len, cap - len, "end\n");
	}
	return (len);
}

static const char *const fz_words[] = {
	"pool ", "path ", "end", "\n", "#", " ", "0", "18446744073709551615",
	"18446744073709551616", "/", "\\", "\\n", "\\q", "mirror", "tank", "-x",
	"pool 7 tank0\n", "path relative\n", "end\nend\n",
};

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	tarn_rand_t r;
	tarn_rand_seed(&r, argc > 2 ? strtoull(argv[2], NULL, 0) : 0xcac4e);
	size_t cap = 16384;
	char *buf = tarn_alloc(cap);

	/* the baseline: a valid file parses to all its pools */
	size_t len = fz_valid(buf, cap, &r);
	spa_cache_entry_t *ents;
	int nents;
	spa_cache_parse("valid", buf, len, &ents, &nents);
	if (nents < 1) {
		fprintf(stderr, "fuzz_cachefile: a valid file gives no pools\n");
		return (1);
	}
	spa_cache_free(ents, nents);

	for (long i = 0; i < n; i++) {
		len = fz_valid(buf, cap / 2, &r);
		int kind = (int)tarn_rand_range(&r, 4), edits = 1 + (int)tarn_rand_range(&r, 6);
		for (int k = 0; k < edits; k++) {
			size_t at = len ? tarn_rand_range(&r, len) : 0;
			if (kind == 0) {                /* byte flips, NULs included */
				if (len > 0)
					buf[at] = tarn_rand_range(&r, 4) == 0 ? '\0' :
					    (char)tarn_rand_u64(&r);
			} else if (kind == 1) {         /* cut a piece out */
				size_t want = tarn_rand_range(&r, 40);  /* MIN evaluates twice */
				size_t cut = MIN(len - at, want);
				memmove(buf + at, buf + at + cut, len - at - cut);
				len -= cut;
			} else {                        /* paste a keyword or a copy */
				const char *w = fz_words[tarn_rand_range(&r,
				    sizeof (fz_words) / sizeof (fz_words[0]))];
				size_t wl = strlen(w);
				if (kind == 3 && len > 0) {
					size_t from = tarn_rand_range(&r, len);
					w = buf + from;
					size_t want = tarn_rand_range(&r, 64);
					wl = MIN(len - from, want);
				}
				if (len + wl < cap) {
					char tmp[64];
					memcpy(tmp, w, MIN(wl, sizeof (tmp)));
					wl = MIN(wl, sizeof (tmp));
					memmove(buf + at + wl, buf + at, len - at);
					memcpy(buf + at, tmp, wl);
					len += wl;
				}
			}
		}
		(void) LLVMFuzzerTestOneInput((const uint8_t *)buf, len);
	}
	tarn_free(buf);
	printf("fuzz_cachefile: %ld inputs\n", n);
	return (0);
}
#endif
