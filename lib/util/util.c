/*
 * util.c — assertions, error tracing, memory, time, GUIDs and the seeded
 * PRNG declared in tarn_util.h.
 */
#include "tarn_util.h"

#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/*
 * The CPUs the process may use, read before main (the main thread's
 * mask): the library's workers get them whoever starts them, since a
 * FUSE worker pinned to one CPU may be the one that starts a worker.
 */
static cpu_set_t tarn_cpus;
static bool tarn_cpus_ok;

__attribute__((constructor)) static void
tarn_cpus_init(void)
{
	tarn_cpus_ok = sched_getaffinity(0, sizeof (tarn_cpus), &tarn_cpus) == 0;
}

int
tarn_thread_create(pthread_t *tid, pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	pthread_attr_t own;
	pthread_attr_t *a = attr;
	if (a == NULL) {
		pthread_attr_init(&own);
		a = &own;
	}
	if (tarn_cpus_ok)
		(void) pthread_attr_setaffinity_np(a, sizeof (tarn_cpus), &tarn_cpus);
	int e = pthread_create(tid, a, fn, arg);
	if (a == &own)
		pthread_attr_destroy(&own);
	return (e);
}

void
tarn_thread_cpus(cpu_set_t *set)
{
	if (tarn_cpus_ok) {
		*set = tarn_cpus;
	} else {
		CPU_ZERO(set);
		long n = MIN(sysconf(_SC_NPROCESSORS_CONF), (long)CPU_SETSIZE);
		for (long i = 0; i < n; i++)
			CPU_SET(i, set);
	}
}

/* TARN_DEBUG, read once before main (no lazy init: threads would race). */
static int tarn_debug;

__attribute__((constructor)) static void
tarn_debug_init(void)
{
	tarn_debug = getenv("TARN_DEBUG") != NULL;
}

void
tarn_set_error(int err, const char *file, int line)
{
	if (tarn_debug && err != 0)
		fprintf(stderr, "tarn: error %d (%s) at %s:%d\n", err,
		    tarn_strerror(err), file, line);
}

const char *
tarn_strerror(int err)
{
	switch (err) {
	case ECKSUM: return ("checksum mismatch");
	case EFRAGS: return ("free space too fragmented");
	case ENOTSUP_FORMAT: return ("unsupported on-disk format or feature");
	default: return (strerror(err));
	}
}

void
tarn_panic(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "tarn: panic at %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/*
 * Blocks of 128 KiB..1 MiB are allocated and freed all the time; with
 * glibc's default threshold each would be a fresh mmap, page-faulted and
 * zeroed by the kernel (measured: 2.5x slower writes).  Keep them on the
 * heap instead.  (Cached blocks' buffers of 4 KiB..1 MiB come from the
 * dmu's own pool, dbuf.c; what still comes from here is compression and
 * I/O scratch, blocks of other sizes and the structures.)
 *
 * glibc gives a thread arena's free top back to the kernel only when it
 * passes M_TRIM_THRESHOLD, and malloc_trim(3) never trims it: with a
 * threshold of 64 MiB (as this had) and an arena for each busy thread,
 * the daemon kept up to 64 MiB of freed memory in every arena, 134 MiB
 * resident with 1 MiB allocated after an export (bench/rss.sh).  So
 * arenas give their top back past TARN_TRIM_TOP, and there are at most
 * TARN_ARENAS of them (the threads of a busy daemon share them; the
 * default is eight per CPU).
 */
#define TARN_TRIM_TOP (4 * 1024 * 1024)
#define TARN_ARENAS   4

__attribute__((constructor)) static void
tarn_malloc_tune(void)
{
	mallopt(M_MMAP_THRESHOLD, 8 * 1024 * 1024);
	mallopt(M_TRIM_THRESHOLD, TARN_TRIM_TOP);
	mallopt(M_ARENA_MAX, TARN_ARENAS);
}

/*
 * glibc keeps freed memory inside its arenas (one per group of threads)
 * and hands back only what lies at the top of a heap: a daemon whose
 * cache filled with a million files' metadata and emptied again held
 * twice its cache limit (2.1 GB resident with 0.8 GB allocated; one
 * malloc_trim gave 1 GB back).  So at most once every TARN_TRIM_NS,
 * when the arenas hold over TARN_TRIM_FREE free bytes, the free pages go
 * back to the kernel.  Callers are threads that can wait a few
 * milliseconds (the txg sync thread between syncs).  Since block buffers
 * left the heap it holds structures only, and a trim takes well under a
 * millisecond, so it runs every 2 s past 16 MiB (it was 10 s past 64 MiB).
 */
#define TARN_TRIM_NS   (2ULL * 1000000000ULL)
#define TARN_TRIM_FREE (16ULL * 1024 * 1024)

void
tarn_mem_trim(void)
{
	static uint64_t last;
	uint64_t now = tarn_now_ns(), prev = __atomic_load_n(&last, __ATOMIC_RELAXED);
	if (now - prev < TARN_TRIM_NS ||
	    !__atomic_compare_exchange_n(&last, &prev, now, false, __ATOMIC_RELAXED,
	    __ATOMIC_RELAXED))
		return;
	struct mallinfo2 mi = mallinfo2();
	if (mi.fordblks >= TARN_TRIM_FREE) {
		(void) malloc_trim(0);
		tarn_dprintf("malloc_trim: %zu free bytes in the arenas, %" PRIu64 " ms\n",
		    mi.fordblks, (tarn_now_ns() - now) / 1000000);
	}
}

void
tarn_mem_trim_now(void)
{
	(void) malloc_trim(0);
}

int
tarn_path_prepend(char *buf, size_t len, const char *comp, char *tmp)
{
	if (strlen(comp) + 1 + strlen(buf) >= len)
		return (SET_ERROR(ENAMETOOLONG));
	(void) snprintf(tmp, len, "/%s%s", comp, buf);
	memcpy(buf, tmp, strlen(tmp) + 1);
	return (0);
}

void *
tarn_alloc(size_t size)
{
	void *p = calloc(1, size ? size : 1);
	VERIFY(p != NULL);
	return (p);
}

void *
tarn_alloc_aligned(size_t size)
{
	void *p = NULL;
	size_t sz = P2ROUNDUP(size ? size : 1, 4096);
	VERIFY0(posix_memalign(&p, 4096, sz));
	memset(p, 0, sz);
	return (p);
}

void *
tarn_realloc(void *p, size_t size)
{
	void *q = realloc(p, size ? size : 1);
	VERIFY(q != NULL);
	return (q);
}

char *
tarn_strdup(const char *s)
{
	char *p = strdup(s);
	VERIFY(p != NULL);
	return (p);
}

void
tarn_free(void *p)
{
	free(p);
}

uint64_t
tarn_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
}

uint64_t
tarn_wall_sec(void)
{
	return ((uint64_t)time(NULL));
}

uint64_t
tarn_guid(void)
{
	uint64_t g = 0;
	while (g == 0) {
		if (getrandom(&g, sizeof (g), 0) != sizeof (g))
			g = tarn_now_ns() * 0x9E3779B97F4A7C15ULL ^ (uint64_t)getpid();
	}
	return (g);
}

/* xoshiro256** seeded through splitmix64. */
static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return (z ^ (z >> 31));
}

void
tarn_rand_seed(tarn_rand_t *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static inline uint64_t
rotl(uint64_t x, int k)
{
	return ((x << k) | (x >> (64 - k)));
}

uint64_t
tarn_rand_u64(tarn_rand_t *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return (result);
}

uint64_t
tarn_rand_range(tarn_rand_t *r, uint64_t n)
{
	return (n == 0 ? 0 : tarn_rand_u64(r) % n);
}

void
tarn_dprintf(const char *fmt, ...)
{
	if (!tarn_debug)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}
