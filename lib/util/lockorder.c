/*
 * lockorder.c — the debug-build checker behind lockorder.h: a stack of
 * the locks each thread holds, checked before every blocking acquire of
 * a ranked lock.  Theory in lockorder.h and docs/DESIGN.md, "Lock order".
 */
#include "lockorder.h"
#include "tarn_util.h"

#ifdef TARN_LOCKORDER

#include <fcntl.h>
#include <unistd.h>

#define LO_MAX_HELD 32          /* beyond this a thread's locks go unchecked */

typedef struct lo_held {
	const void *lh_lock;
	int         lh_rank;
	const char *lh_file;
	int         lh_line;
} lo_held_t;

static __thread lo_held_t lo_stack[LO_MAX_HELD];
static __thread int lo_depth;   /* may exceed LO_MAX_HELD: those are not kept */

#define LO_NAME(id, name) name,
static const char *const lo_names[TLR_COUNT] = { TARN_LOCK_RANKS(LO_NAME) };
#undef LO_NAME

/* TARN_LOCKORDER_TRACE: -1 not read yet, else an fd (or -2: unset) */
static int lo_trace_fd = -1;
static pthread_once_t lo_trace_once = PTHREAD_ONCE_INIT;
static unsigned char lo_traced[TLR_COUNT][TLR_COUNT];   /* pairs written */

const char *
tarn_lock_rank_name(int rank)
{
	return (rank >= 0 && rank < TLR_COUNT ? lo_names[rank] : "?");
}

static void
lo_trace_open(void)
{
	const char *path = getenv("TARN_LOCKORDER_TRACE");
	lo_trace_fd = -2;
	if (path != NULL && path[0] != '\0') {
		int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd >= 0)
			lo_trace_fd = fd;
	}
}

/* Trace mode: write the pair once per process instead of panicking. */
static void
lo_trace(const lo_held_t *h, int rank, const char *file, int line)
{
	if (__atomic_exchange_n(&lo_traced[h->lh_rank][rank], 1, __ATOMIC_RELAXED))
		return;
	char buf[512];
	int n = snprintf(buf, sizeof (buf), "%d %s (%s:%d) -> %d %s (%s:%d)\n",
	    h->lh_rank, lo_names[h->lh_rank], h->lh_file, h->lh_line,
	    rank, lo_names[rank], file, line);
	if (n > 0 && write(lo_trace_fd, buf, (size_t)n) < 0)
		return;
}

void
tarn_lock_check(const void *lock, int rank, const char *file, int line)
{
	int n = lo_depth < LO_MAX_HELD ? lo_depth : LO_MAX_HELD;
	if (n == 0)
		return;
	(void) pthread_once(&lo_trace_once, lo_trace_open);
	for (int i = 0; i < n; i++) {
		const lo_held_t *h = &lo_stack[i];
		if (lo_trace_fd >= 0) {
			lo_trace(h, rank, file, line);
			continue;
		}
		if (h->lh_lock == lock)
			tarn_panic(file, line, "lock order: %s taken again (held since %s:%d)",
			    lo_names[rank], h->lh_file, h->lh_line);
		if (h->lh_rank >= rank)
			tarn_panic(file, line, "lock order: %s (rank %d) taken while "
			    "holding %s (rank %d, taken at %s:%d); see docs/DESIGN.md, "
			    "\"Lock order\"", lo_names[rank], rank,
			    lo_names[h->lh_rank], h->lh_rank, h->lh_file, h->lh_line);
	}
}

void
tarn_lock_held(const void *lock, int rank, const char *file, int line)
{
	if (lo_depth < LO_MAX_HELD)
		lo_stack[lo_depth] = (lo_held_t){ lock, rank, file, line };
	lo_depth++;
}

void
tarn_lock_drop(const void *lock)
{
	int n = lo_depth < LO_MAX_HELD ? lo_depth : LO_MAX_HELD;
	for (int i = n - 1; i >= 0; i--) {
		if (lo_stack[i].lh_lock == lock) {
			for (int j = i; j + 1 < n; j++)
				lo_stack[j] = lo_stack[j + 1];
			lo_depth--;
			return;
		}
	}
	/* not on the stack: taken beyond LO_MAX_HELD, or by another thread */
	if (lo_depth > LO_MAX_HELD)
		lo_depth--;
}

#endif
