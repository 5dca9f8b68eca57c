/*
 * taskq.h — a fixed pool of worker threads running queued functions.
 * Used for per-block CPU work (checksums, parity, compression) and I/O.
 */
#ifndef TARN_TASKQ_H
#define TARN_TASKQ_H

#include "tarn_util.h"

#include <pthread.h>

typedef struct taskq taskq_t;
typedef void (*taskq_fn_t)(void *arg);

/* nthreads 0 means one per online CPU. */
taskq_t *taskq_create(const char *name, int nthreads);
/* Waits for queued work, then stops the threads. */
void taskq_destroy(taskq_t *tq);
void taskq_dispatch(taskq_t *tq, taskq_fn_t fn, void *arg);
/* Wait until every dispatched function has returned. */
void taskq_wait(taskq_t *tq);
int taskq_nthreads(const taskq_t *tq);

/*
 * A process-wide taskq made on first use (processes that never need it
 * pay nothing) and made again in a forked child, which has none of the
 * parent's threads.  Define at file scope with TASKQ_LAZY_INIT; never
 * destroyed.
 */
typedef struct taskq_lazy {
	const char *tl_name;
	int tl_nthreads;
	taskq_t *tl_tq;                     /* taskq.c's lazy lock */
	struct taskq_lazy *tl_next;         /* all of them, for the fork handler */
	bool tl_listed;
} taskq_lazy_t;
#define TASKQ_LAZY_INIT(name, n) { .tl_name = (name), .tl_nthreads = (n) }
taskq_t *taskq_lazy_get(taskq_lazy_t *tl);

/*
 * A countdown latch for waiting on a group of dispatched tasks without
 * waiting for unrelated ones: init with n, each task calls done, the
 * owner calls wait.
 */
typedef struct taskq_group {
	pthread_mutex_t tg_lock;
	pthread_cond_t tg_cv;
	int tg_pending;             /* guarded by tg_lock */
	int tg_error;               /* first non-zero error reported */
} taskq_group_t;
void taskq_group_init(taskq_group_t *g, int n);
void taskq_group_done(taskq_group_t *g, int error);
int taskq_group_wait(taskq_group_t *g); /* returns tg_error */

#endif
