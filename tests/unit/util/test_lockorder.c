/*
 * test_lockorder.c — the debug-build lock-order checker (lib/util/lockorder.h):
 * locks taken in the order pass, a lock taken out of order (or twice)
 * aborts the process, a trylock may go against the order.  The aborting
 * cases run in a forked child.  In a release build (TARN_LOCKORDER_OFF) the wrappers
 * are the plain calls and only the passing cases mean anything.
 */
#include "tt.h"
#include "tarn_util.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t outer = PTHREAD_MUTEX_INITIALIZER;      /* SPA_VDEV */
static pthread_mutex_t middle = PTHREAD_MUTEX_INITIALIZER;     /* SPA */
static pthread_rwlock_t groups = PTHREAD_RWLOCK_INITIALIZER;   /* MC_GROUPS */
static pthread_mutex_t inner = PTHREAD_MUTEX_INITIALIZER;      /* MS */

#ifdef TARN_LOCKORDER
/* Run fn in a child; true if the child died of SIGABRT (a failed check). */
static bool
aborts(void (*fn)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		fn();
		_exit(0);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return (false);
	return (WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
}

#endif

static void
no_trace(void)
{
	/* trace mode (TARN_LOCKORDER_TRACE) writes pairs instead of aborting */
	unsetenv("TARN_LOCKORDER_TRACE");
}

static void
test_in_order(void)
{
	no_trace();
	TT_OK(tarn_mutex_lock(&outer, SPA_VDEV));
	TT_OK(tarn_mutex_lock(&middle, SPA));
	TT_OK(tarn_rw_rdlock(&groups, MC_GROUPS));
	TT_OK(tarn_mutex_lock(&inner, MS));
	/* released in any order */
	TT_OK(tarn_mutex_unlock(&middle));
	TT_OK(tarn_rw_unlock(&groups));
	TT_OK(tarn_mutex_unlock(&inner));
	/* outer still held: an inner lock again, then one between */
	TT_OK(tarn_rw_wrlock(&groups, MC_GROUPS));
	TT_OK(tarn_rw_unlock(&groups));
	TT_OK(tarn_mutex_lock(&middle, SPA));
	TT_OK(tarn_mutex_unlock(&middle));
	TT_OK(tarn_mutex_unlock(&outer));
	/* nothing held: any lock */
	TT_OK(tarn_mutex_lock(&inner, MS));
	TT_OK(tarn_mutex_unlock(&inner));
	TT_OK(tarn_mutex_lock(&outer, SPA_VDEV));
	TT_OK(tarn_mutex_unlock(&outer));
}

static void
test_trylock_out_of_order(void)
{
	no_trace();
	TT_OK(tarn_mutex_lock(&inner, MS));
	TT_OK(tarn_mutex_trylock(&outer, SPA_VDEV));    /* never waits: allowed */
	TT_CHECK(tarn_mutex_trylock(&outer, SPA_VDEV) != 0);
	TT_OK(tarn_mutex_unlock(&outer));
	TT_OK(tarn_rw_tryrdlock(&groups, MC_GROUPS));
	TT_OK(tarn_rw_unlock(&groups));
	TT_OK(tarn_mutex_unlock(&inner));
}

#ifdef TARN_LOCKORDER
static void
inner_then_outer(void)
{
	no_trace();
	(void) tarn_mutex_lock(&inner, MS);
	(void) tarn_mutex_lock(&middle, SPA);
}

static void
rwlock_then_outer(void)
{
	no_trace();
	(void) tarn_rw_rdlock(&groups, MC_GROUPS);
	(void) tarn_mutex_lock(&outer, SPA_VDEV);
}

static void
same_rank_twice(void)
{
	static pthread_mutex_t other = PTHREAD_MUTEX_INITIALIZER;
	no_trace();
	(void) tarn_mutex_lock(&middle, SPA);
	(void) tarn_mutex_lock(&other, SPA);
}

static void
after_trylock(void)
{
	/* a lock held by trylock counts: MS is held, so SPA may not be waited for */
	no_trace();
	(void) tarn_mutex_lock(&inner, MS);
	(void) tarn_mutex_trylock(&outer, SPA_VDEV);
	(void) tarn_mutex_lock(&middle, SPA);
}

#endif

static void
test_out_of_order_aborts(void)
{
#ifndef TARN_LOCKORDER
	printf("  (release build: nothing is checked)\n");
#else
	TT_CHECK(aborts(inner_then_outer));
	TT_CHECK(aborts(rwlock_then_outer));
	TT_CHECK(aborts(same_rank_twice));
	TT_CHECK(aborts(after_trylock));
	TT_CHECK(!aborts(test_in_order));
	TT_CHECK(strcmp(tarn_lock_rank_name(TLR_SPA), "spa_lock") == 0);
#endif
}

TT_MAIN(
	{ "in_order", test_in_order },
	{ "trylock_out_of_order", test_trylock_out_of_order },
	{ "out_of_order_aborts", test_out_of_order_aborts },
)
