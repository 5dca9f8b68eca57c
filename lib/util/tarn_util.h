/*
 * tarn_util.h — the smallest shared vocabulary of libtarn: assertions,
 * project error codes, byte-order and size helpers, time and memory.
 * Every layer may include this header; it includes no other layer.
 */
#ifndef TARN_UTIL_H
#define TARN_UTIL_H

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "Tarn's on-disk format is little-endian and so far only little-endian hosts are supported"
#endif

/*
 * Errors: functions return 0 or a positive errno.  Project codes live on
 * errno values that the C library does not otherwise produce for us.
 */
#define ECKSUM    EBADE   /* checksum mismatch, no good copy */
#define EFRAGS    EBADR   /* free space too fragmented for this size */
#define ENOTSUP_FORMAT EPROTONOSUPPORT /* unknown format version / feature */

/*
 * Record where an error began (printed when TARN_DEBUG is set).  The
 * macro yields the value itself, not through the call, so the compiler
 * still sees a constant error as non-zero (an optimised build would
 * otherwise warn that outputs left unset on error paths may be used).
 */
void tarn_set_error(int err, const char *file, int line);
#define SET_ERROR(e) __extension__ ({				\
	int set_error_e_ = (e);					\
	tarn_set_error(set_error_e_, __FILE__, __LINE__);	\
	set_error_e_;						\
})

const char *tarn_strerror(int err);

/* Assertions: VERIFY always, ASSERT in debug builds only. */
_Noreturn void tarn_panic(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define VERIFY(c) \
	do { if (!(c)) tarn_panic(__FILE__, __LINE__, "VERIFY(%s) failed", #c); } while (0)
#define VERIFY3_IMPL(a, op, b, T, fmt) \
	do { T va_ = (T)(a), vb_ = (T)(b); \
	     if (!(va_ op vb_)) tarn_panic(__FILE__, __LINE__, \
	         "VERIFY3(%s %s %s) failed (" fmt " %s " fmt ")", \
	         #a, #op, #b, va_, #op, vb_); } while (0)
#define VERIFY3U(a, op, b) VERIFY3_IMPL(a, op, b, uint64_t, "%" PRIu64)
#define VERIFY3S(a, op, b) VERIFY3_IMPL(a, op, b, int64_t, "%" PRId64)
#define VERIFY3P(a, op, b) VERIFY3_IMPL(a, op, b, uintptr_t, "%#" PRIxPTR)
#define VERIFY0(a) VERIFY3S(a, ==, 0)

#ifdef NDEBUG
#define ASSERT(c) ((void)0)
#define ASSERT3U(a, op, b) ((void)0)
#define ASSERT3S(a, op, b) ((void)0)
#define ASSERT3P(a, op, b) ((void)0)
#define ASSERT0(a) ((void)0)
#else
#define ASSERT(c) VERIFY(c)
#define ASSERT3U(a, op, b) VERIFY3U(a, op, b)
#define ASSERT3S(a, op, b) VERIFY3S(a, op, b)
#define ASSERT3P(a, op, b) VERIFY3P(a, op, b)
#define ASSERT0(a) VERIFY0(a)
#endif

/* Sizes and alignment. */
#define KiB (1024ULL)
#define MiB (1024ULL * KiB)
#define GiB (1024ULL * MiB)
#define P2ALIGN(x, a)     ((x) & -(uint64_t)(a))          /* round down */
#define P2ROUNDUP(x, a)   (-(-(uint64_t)(x) & -(uint64_t)(a))) /* round up */
#define P2PHASE(x, a)     ((x) & ((a) - 1))
#define IS_P2ALIGNED(x, a) (((x) & ((uint64_t)(a) - 1)) == 0)
#define ISP2(x)           (((x) & ((x) - 1)) == 0)
#define DIV_ROUND_UP(x, y) (((x) + (y) - 1) / (y))
#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif
#define ARRAY_SIZE(a) (sizeof (a) / sizeof ((a)[0]))

static inline int
highbit64(uint64_t v)
{
	return (v == 0 ? 0 : 64 - __builtin_clzll(v));
}

/* Memory: allocation failure is fatal (the caller cannot do better). */
void *tarn_alloc(size_t size);         /* zeroed */
void *tarn_alloc_aligned(size_t size); /* zeroed, 4 KiB aligned, for I/O */
void *tarn_realloc(void *p, size_t size);
char *tarn_strdup(const char *s);
void tarn_free(void *p);

/* Time. */
uint64_t tarn_now_ns(void);   /* monotonic */
/*
 * Put "/comp" in front of the path in buf (len bytes; tmp: scratch of len
 * bytes), for paths built from the leaf up.  ENAMETOOLONG when it would
 * not fit (buf unchanged).
 */
int tarn_path_prepend(char *buf, size_t len, const char *comp, char *tmp);
/* Give the heap's free pages back to the kernel (rate-limited; may take ms). */
void tarn_mem_trim(void);
/* The same now, whatever the arenas hold (not rate-limited; may take ms). */
void tarn_mem_trim_now(void);
uint64_t tarn_wall_sec(void); /* seconds since the epoch */

/* Random GUIDs (non-zero) and a small seeded PRNG for tests and tools. */
uint64_t tarn_guid(void);
typedef struct tarn_rand { uint64_t s[4]; } tarn_rand_t;
void tarn_rand_seed(tarn_rand_t *r, uint64_t seed);
uint64_t tarn_rand_u64(tarn_rand_t *r);
uint64_t tarn_rand_range(tarn_rand_t *r, uint64_t n); /* 0 .. n-1 */

/* Debug log to stderr when TARN_DEBUG is set in the environment. */
void tarn_dprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * pthread_create for the library's workers: the thread may run on every
 * CPU the process could use at start, even when its creator is pinned
 * to one (attr, when given, gets that affinity set).
 */
int tarn_thread_create(pthread_t *tid, pthread_attr_t *attr, void *(*fn)(void *), void *arg);
/* The CPUs the process could use at start (those tarn_thread_create gives). */
void tarn_thread_cpus(cpu_set_t *set);

/* Lock wrappers that check the pool's lock order in debug builds. */
#include "lockorder.h"

#endif /* TARN_UTIL_H */
