/*
 * tt.h — the unit-test harness: a test binary holds TT_TEST functions,
 * runs them all (or the one named in argv[1]), prints one line per test
 * and exits non-zero if any failed.  TT_CHECK records a failure and goes
 * on; TT_ASSERT stops the current test.  Seeded tests print their seed.
 */
#ifndef TARN_TT_H
#define TARN_TT_H

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <inttypes.h>

typedef void (*tt_fn_t)(void);
typedef struct tt_case { const char *name; tt_fn_t fn; } tt_case_t;

extern int tt_failed_checks;
extern jmp_buf tt_jmp;

#define TT_CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "  %s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
	tt_failed_checks++; } } while (0)
#define TT_ASSERT(c) do { if (!(c)) { \
	fprintf(stderr, "  %s:%d: assertion failed: %s\n", __FILE__, __LINE__, #c); \
	tt_failed_checks++; longjmp(tt_jmp, 1); } } while (0)
#define TT_EQ(a, b) do { uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b); \
	if (a_ != b_) { fprintf(stderr, "  %s:%d: %s == %s failed (%" PRIu64 " != %" PRIu64 ")\n", \
	__FILE__, __LINE__, #a, #b, a_, b_); tt_failed_checks++; longjmp(tt_jmp, 1); } } while (0)
#define TT_OK(e) TT_EQ((e), 0)

/* Define the test table: TT_MAIN({"name", fn}, ...) */
#define TT_MAIN(...) \
	int tt_failed_checks; jmp_buf tt_jmp; \
	static const tt_case_t tt_cases[] = { __VA_ARGS__ }; \
	int main(int argc, char **argv) { \
		volatile int failed = 0, ran = 0; \
		for (volatile size_t i = 0; i < sizeof (tt_cases) / sizeof (tt_cases[0]); i++) { \
			if (argc > 1 && strcmp(argv[1], tt_cases[i].name) != 0) continue; \
			volatile int before = tt_failed_checks; ran++; \
			if (setjmp(tt_jmp) == 0) tt_cases[i].fn(); \
			int bad = tt_failed_checks != before; failed += bad; \
			printf("%s %s\n", bad ? "FAIL" : "ok  ", tt_cases[i].name); \
			fflush(stdout); \
		} \
		printf("%d passed, %d failed\n", ran - failed, failed); \
		return failed ? 1 : 0; \
	}

static inline void tt_tmpdir_cleanup(void);

/*
 * A scratch directory for device files, removed by tt_tmpdir_cleanup(),
 * which also runs at exit: meson runs one test case per process, so a
 * "cleanup" case at the end of a table does not run for the others.
 */
static inline const char *
tt_tmpdir(void)
{
	static char dir[256];
	if (dir[0] == '\0') {
		const char *base = getenv("TARN_TEST_TMP");
		snprintf(dir, sizeof (dir), "%s/tarn-unit-XXXXXX", base ? base : "/tmp");
		if (mkdtemp(dir) == NULL) { perror("mkdtemp"); exit(2); }
		atexit(tt_tmpdir_cleanup);
	}
	return (dir);
}

static inline void
tt_tmpdir_cleanup(void)
{
	char cmd[300];
	const char *d = tt_tmpdir();
	if (strstr(d, "tarn-unit-") == NULL) return;
	snprintf(cmd, sizeof (cmd), "rm -rf '%s'", d);
	if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", d);
}

#endif
