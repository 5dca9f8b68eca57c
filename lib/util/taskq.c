/*
 * taskq.c — worker pool: a mutex-guarded FIFO of (fn, arg) and N threads.
 */
#include "taskq.h"

#include <unistd.h>

typedef struct tq_ent {
	struct tq_ent *te_next;
	taskq_fn_t te_fn;
	void *te_arg;
} tq_ent_t;

struct taskq {
	pthread_mutex_t tq_lock;
	pthread_cond_t tq_work_cv;   /* work queued or exiting */
	pthread_cond_t tq_idle_cv;   /* queue drained and no task running */
	tq_ent_t *tq_head, *tq_tail; /* guarded by tq_lock */
	int tq_active;               /* tasks running, guarded by tq_lock */
	bool tq_exit;                /* guarded by tq_lock */
	int tq_nthreads;
	pthread_t *tq_threads;
	char tq_name[32];
};

static void *
taskq_thread(void *arg)
{
	taskq_t *tq = arg;
	tarn_mutex_lock(&tq->tq_lock, TASKQ);
	for (;;) {
		while (tq->tq_head == NULL && !tq->tq_exit)
			pthread_cond_wait(&tq->tq_work_cv, &tq->tq_lock);
		if (tq->tq_head == NULL && tq->tq_exit)
			break;
		tq_ent_t *e = tq->tq_head;
		tq->tq_head = e->te_next;
		if (tq->tq_head == NULL)
			tq->tq_tail = NULL;
		tq->tq_active++;
		tarn_mutex_unlock(&tq->tq_lock);
		e->te_fn(e->te_arg);
		tarn_free(e);
		tarn_mutex_lock(&tq->tq_lock, TASKQ);
		tq->tq_active--;
		if (tq->tq_active == 0 && tq->tq_head == NULL)
			pthread_cond_broadcast(&tq->tq_idle_cv);
	}
	tarn_mutex_unlock(&tq->tq_lock);
	return (NULL);
}

taskq_t *
taskq_create(const char *name, int nthreads)
{
	taskq_t *tq = tarn_alloc(sizeof (*tq));
	if (nthreads <= 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		nthreads = n > 0 ? (int)n : 1;
	}
	pthread_mutex_init(&tq->tq_lock, NULL);
	pthread_cond_init(&tq->tq_work_cv, NULL);
	pthread_cond_init(&tq->tq_idle_cv, NULL);
	snprintf(tq->tq_name, sizeof (tq->tq_name), "%s", name);
	tq->tq_nthreads = nthreads;
	tq->tq_threads = tarn_alloc(sizeof (pthread_t) * nthreads);
	for (int i = 0; i < nthreads; i++)
		VERIFY0(tarn_thread_create(&tq->tq_threads[i], NULL, taskq_thread, tq));
	return (tq);
}

void
taskq_destroy(taskq_t *tq)
{
	tarn_mutex_lock(&tq->tq_lock, TASKQ);
	tq->tq_exit = true;
	pthread_cond_broadcast(&tq->tq_work_cv);
	tarn_mutex_unlock(&tq->tq_lock);
	for (int i = 0; i < tq->tq_nthreads; i++)
		pthread_join(tq->tq_threads[i], NULL);
	pthread_mutex_destroy(&tq->tq_lock);
	pthread_cond_destroy(&tq->tq_work_cv);
	pthread_cond_destroy(&tq->tq_idle_cv);
	tarn_free(tq->tq_threads);
	tarn_free(tq);
}

void
taskq_dispatch(taskq_t *tq, taskq_fn_t fn, void *arg)
{
	tq_ent_t *e = tarn_alloc(sizeof (*e));
	e->te_fn = fn;
	e->te_arg = arg;
	tarn_mutex_lock(&tq->tq_lock, TASKQ);
	if (tq->tq_tail)
		tq->tq_tail->te_next = e;
	else
		tq->tq_head = e;
	tq->tq_tail = e;
	pthread_cond_signal(&tq->tq_work_cv);
	tarn_mutex_unlock(&tq->tq_lock);
}

void
taskq_wait(taskq_t *tq)
{
	tarn_mutex_lock(&tq->tq_lock, TASKQ);
	while (tq->tq_head != NULL || tq->tq_active > 0)
		pthread_cond_wait(&tq->tq_idle_cv, &tq->tq_lock);
	tarn_mutex_unlock(&tq->tq_lock);
}

int
taskq_nthreads(const taskq_t *tq)
{
	return (tq->tq_nthreads);
}

void
taskq_group_init(taskq_group_t *g, int n)
{
	pthread_mutex_init(&g->tg_lock, NULL);
	pthread_cond_init(&g->tg_cv, NULL);
	g->tg_pending = n;
	g->tg_error = 0;
}

void
taskq_group_done(taskq_group_t *g, int error)
{
	pthread_mutex_lock(&g->tg_lock);
	if (error != 0 && g->tg_error == 0)
		g->tg_error = error;
	if (--g->tg_pending == 0)
		pthread_cond_broadcast(&g->tg_cv);
	pthread_mutex_unlock(&g->tg_lock);
}

int
taskq_group_wait(taskq_group_t *g)
{
	pthread_mutex_lock(&g->tg_lock);
	while (g->tg_pending > 0)
		pthread_cond_wait(&g->tg_cv, &g->tg_lock);
	pthread_mutex_unlock(&g->tg_lock);
	pthread_mutex_destroy(&g->tg_lock);
	pthread_cond_destroy(&g->tg_cv);
	return (g->tg_error);
}

/* ---- lazily made process-wide taskqs ---- */

static pthread_mutex_t taskq_lazy_lock = PTHREAD_MUTEX_INITIALIZER;
static taskq_lazy_t *taskq_lazy_list;       /* taskq_lazy_lock */
static bool taskq_lazy_atfork;

/* In a forked child: forget the parent's taskqs (their threads are gone). */
static void
taskq_lazy_child(void)
{
	pthread_mutex_init(&taskq_lazy_lock, NULL);
	for (taskq_lazy_t *tl = taskq_lazy_list; tl != NULL; tl = tl->tl_next)
		tl->tl_tq = NULL;
}

taskq_t *
taskq_lazy_get(taskq_lazy_t *tl)
{
	pthread_mutex_lock(&taskq_lazy_lock);
	if (!taskq_lazy_atfork) {
		VERIFY0(pthread_atfork(NULL, NULL, taskq_lazy_child));
		taskq_lazy_atfork = true;
	}
	if (!tl->tl_listed) {
		tl->tl_next = taskq_lazy_list;
		taskq_lazy_list = tl;
		tl->tl_listed = true;
	}
	if (tl->tl_tq == NULL)
		tl->tl_tq = taskq_create(tl->tl_name, tl->tl_nthreads);
	taskq_t *tq = tl->tl_tq;
	pthread_mutex_unlock(&taskq_lazy_lock);
	return (tq);
}
