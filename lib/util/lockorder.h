/*
 * lockorder.h — the pool's lock order as code, checked in debug builds.
 *
 * docs/DESIGN.md, "Lock order", is the theory: which locks exist, how they
 * nest and why.  TARN_LOCK_RANKS below is the same order for the locks
 * that are checked, outermost first; a lock may be taken (blocking) only
 * while every lock the thread holds has a smaller rank, that is, sits
 * above it in the list.  A trylock never waits, so it may take a lock out
 * of order; the lock then counts as held like any other.
 *
 * Call sites name the rank: tarn_mutex_lock(&spa->spa_lock, TLR_SPA).
 * In the debug builds (buildtype debug or debugoptimized, the default,
 * which the tests use) each thread keeps the locks it holds on a small
 * stack and a lock taken out of order panics, naming both locks and where
 * each was taken.  In the release build (meson defines TARN_LOCKORDER_OFF
 * there; assertions stay on in every build, so NDEBUG alone would not do)
 * and with NDEBUG the macros are the plain pthread calls and cost nothing:
 * the checks cost 10-15% of a metadata operation's CPU time (bench/run-cpu.sh,
 * docs/PERFORMANCE.md).
 *
 * TARN_LOCKORDER_TRACE=FILE (debug builds) turns the panics off and
 * instead appends one line per distinct pair "HELD -> TAKEN at file:line"
 * to FILE: run the tests with it to see how the locks really nest.
 *
 * Per-object locks taken on the data path (dn_struct_rwlock, dn_mtx,
 * dbuf and zio locks, posix's pi_lock and stripe locks) are not checked:
 * see the design section for where they sit.
 */
#ifndef TARN_LOCKORDER_H
#define TARN_LOCKORDER_H

#include <pthread.h>
#include <stdbool.h>

/* The checked locks, outermost first: X(rank id, lock name). */
#define TARN_LOCK_RANKS(X)						\
	X(DSL_POOL,      "dsl dp_lock")					\
	X(DSL_OS,        "dsl_os_lock")					\
	X(POSIX_RENAME,  "fs_rename_lock")				\
	X(POSIX_UNLINKED, "fs_unlinked_lock")				\
	X(POSIX_OPTS,    "fs_opts_lock")				\
	X(POSIX_SPACE,   "fs_space_lock")				\
	X(SPA_VDEV,      "spa_vdev_lock")				\
	X(SPA_SCAN_CTL,  "ss_ctl_lock")					\
	X(SPA_SYNC,      "spa_sync_rwlock")				\
	X(SPA_DIR,       "spa_dir_lock")				\
	X(SPA,           "spa_lock")					\
	X(OS_ALLOC,      "os_alloc_lock")				\
	X(SPA_SCAN,      "ss_lock")					\
	X(SPA_ASYNC,     "sva_lock")					\
	X(ZIL,           "zl_lock")					\
	X(SPA_ERRLOG,    "el_lock")					\
	X(VDEV_TREE,     "vdev tree lock")				\
	X(OS,            "os_lock")					\
	X(TXG,           "dmu dp_lock")					\
	X(OS_DIRTY,      "os_dirty_lock")				\
	X(ARC,           "arc_lock")				\
	X(L2ARC,         "l2_lock")				\
	X(MC_HOLD,       "mc_hold_lock")				\
	X(MC_GROUPS,     "mc_groups_lock")				\
	X(MC_ROTOR,      "mc_rotor_lock")				\
	X(MG,            "mg_lock")					\
	X(MS,            "ms_lock")					\
	X(TASKQ,         "tq_lock")

#define TARN_LOCK_RANK_ENUM(id, name) TLR_##id,
typedef enum tarn_lock_rank {
	TARN_LOCK_RANKS(TARN_LOCK_RANK_ENUM)
	TLR_COUNT
} tarn_lock_rank_t;
#undef TARN_LOCK_RANK_ENUM

#if !defined(NDEBUG) && !defined(TARN_LOCKORDER_OFF)
#define TARN_LOCKORDER 1
#endif

#ifdef TARN_LOCKORDER

/* The name of a rank, for messages. */
const char *tarn_lock_rank_name(int rank);
/* Before a blocking acquire: panic if a lock of rank >= rank is held. */
void tarn_lock_check(const void *lock, int rank, const char *file, int line);
/* After an acquire (blocking or try): push the lock on the thread's stack. */
void tarn_lock_held(const void *lock, int rank, const char *file, int line);
/* Before a release: pop the lock (wherever it is on the stack). */
void tarn_lock_drop(const void *lock);

static inline int
tarn_lo_mutex_lock(pthread_mutex_t *m, int rank, const char *file, int line)
{
	tarn_lock_check(m, rank, file, line);
	int e = pthread_mutex_lock(m);
	if (e == 0)
		tarn_lock_held(m, rank, file, line);
	return (e);
}

static inline int
tarn_lo_mutex_trylock(pthread_mutex_t *m, int rank, const char *file, int line)
{
	int e = pthread_mutex_trylock(m);
	if (e == 0)
		tarn_lock_held(m, rank, file, line);
	return (e);
}

static inline int
tarn_lo_mutex_unlock(pthread_mutex_t *m)
{
	tarn_lock_drop(m);
	return (pthread_mutex_unlock(m));
}

static inline int
tarn_lo_rw_lock(pthread_rwlock_t *l, bool write, int rank, const char *file, int line)
{
	tarn_lock_check(l, rank, file, line);
	int e = write ? pthread_rwlock_wrlock(l) : pthread_rwlock_rdlock(l);
	if (e == 0)
		tarn_lock_held(l, rank, file, line);
	return (e);
}

static inline int
tarn_lo_rw_trylock(pthread_rwlock_t *l, bool write, int rank, const char *file, int line)
{
	int e = write ? pthread_rwlock_trywrlock(l) : pthread_rwlock_tryrdlock(l);
	if (e == 0)
		tarn_lock_held(l, rank, file, line);
	return (e);
}

static inline int
tarn_lo_rw_unlock(pthread_rwlock_t *l)
{
	tarn_lock_drop(l);
	return (pthread_rwlock_unlock(l));
}

#define tarn_mutex_lock(m, r)     tarn_lo_mutex_lock((m), TLR_##r, __FILE__, __LINE__)
#define tarn_mutex_trylock(m, r)  tarn_lo_mutex_trylock((m), TLR_##r, __FILE__, __LINE__)
#define tarn_mutex_unlock(m)      tarn_lo_mutex_unlock(m)
#define tarn_rw_rdlock(l, r)      tarn_lo_rw_lock((l), false, TLR_##r, __FILE__, __LINE__)
#define tarn_rw_wrlock(l, r)      tarn_lo_rw_lock((l), true, TLR_##r, __FILE__, __LINE__)
#define tarn_rw_tryrdlock(l, r)   tarn_lo_rw_trylock((l), false, TLR_##r, __FILE__, __LINE__)
#define tarn_rw_trywrlock(l, r)   tarn_lo_rw_trylock((l), true, TLR_##r, __FILE__, __LINE__)
#define tarn_rw_unlock(l)         tarn_lo_rw_unlock(l)

#else /* !TARN_LOCKORDER: the plain calls */

#define tarn_mutex_lock(m, r)     pthread_mutex_lock(m)
#define tarn_mutex_trylock(m, r)  pthread_mutex_trylock(m)
#define tarn_mutex_unlock(m)      pthread_mutex_unlock(m)
#define tarn_rw_rdlock(l, r)      pthread_rwlock_rdlock(l)
#define tarn_rw_wrlock(l, r)      pthread_rwlock_wrlock(l)
#define tarn_rw_tryrdlock(l, r)   pthread_rwlock_tryrdlock(l)
#define tarn_rw_trywrlock(l, r)   pthread_rwlock_trywrlock(l)
#define tarn_rw_unlock(l)         pthread_rwlock_unlock(l)

#endif

#endif
