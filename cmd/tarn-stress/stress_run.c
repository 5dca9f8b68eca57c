/*
 * stress_run.c — the pool tarn-stress builds (devices from a layout such
 * as "raidz2:6" or "mirror:2,mirror:2"), the multi-threaded workload with
 * periodic verification, and the normal (no kill) run: create, work,
 * verify, close, reopen read-only and verify, reopen read-write and
 * verify again.
 *
 * Verification pauses every worker between two operations (each worker
 * parks when asked; the controller waits until all have parked), waits
 * for a txg sync, compares every object with the model, walks every
 * block of the pool (spa_verify_all) and lets the workers go again.
 */
#include "stress_run.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

/* ---- layout and devices ---- */

static void
stress_word_add(stress_cfg_t *c, const char *w)
{
	TARN_ARRAY_APPEND(&c->sc_words, char *, tarn_strdup(w));
}

static void
stress_path_add(stress_cfg_t *c)
{
	char p[4096];
	snprintf(p, sizeof (p), "%s/dev%d", c->sc_dir, stress_npaths(c));
	TARN_ARRAY_APPEND(&c->sc_paths, char *, tarn_strdup(p));
	stress_word_add(c, p);
}

static void
stress_group_add(stress_cfg_t *c, int first, int n, int tol)
{
	stress_group_t *g = tarn_array_push(&c->sc_groups);
	g->sg_first = first;
	g->sg_n = n;
	g->sg_tol = tol;
}

/* Parse "TYPE:N[,TYPE:N...]" (TYPE mirror, raidz, raidz1..3, stripe). */
int
stress_layout_parse(stress_cfg_t *c, char *err, size_t errlen)
{
	char *dup = tarn_strdup(c->sc_layout), *save = NULL;
	int e = 0;
	for (char *g = strtok_r(dup, ",", &save); g != NULL && e == 0;
	    g = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(g, ':'), *end = NULL;
		long n = colon ? strtol(colon + 1, &end, 10) : -1;
		if (colon == NULL || end == colon + 1 || *end != '\0' || n < 1 || n > 64) {
			snprintf(err, errlen, "bad layout group '%s': use TYPE:N, e.g. raidz2:6", g);
			e = SET_ERROR(EINVAL);
			break;
		}
		*colon = '\0';
		if (strcmp(g, "stripe") == 0 || strcmp(g, "file") == 0) {
			for (long i = 0; i < n; i++) {
				stress_group_add(c, stress_npaths(c), 1, 0);
				stress_path_add(c);
			}
			continue;
		}
		int parity = -1;
		if (strcmp(g, "mirror") == 0)
			parity = 0;
		else if (strcmp(g, "raidz") == 0 || strcmp(g, "raidz1") == 0)
			parity = 1;
		else if (strcmp(g, "raidz2") == 0)
			parity = 2;
		else if (strcmp(g, "raidz3") == 0)
			parity = 3;
		if (parity < 0) {
			snprintf(err, errlen, "unknown vdev type '%s': use mirror, raidz1, raidz2, "
			    "raidz3 or stripe", g);
			e = SET_ERROR(EINVAL);
			break;
		}
		stress_word_add(c, parity == 0 ? "mirror" : parity == 1 ? "raidz1" :
		    parity == 2 ? "raidz2" : "raidz3");
		c->sc_maxparity = MAX(c->sc_maxparity, parity);
		stress_group_add(c, stress_npaths(c), (int)n, parity == 0 ? (int)n - 1 : parity);
		for (long i = 0; i < n; i++)
			stress_path_add(c);
	}
	tarn_free(dup);
	if (e == 0 && stress_npaths(c) == 0) {
		snprintf(err, errlen, "empty layout");
		e = SET_ERROR(EINVAL);
	}
	if (e == 0) {
		/* let the pool layer judge the shape (device counts per group) */
		spa_vdev_spec_t *spec = NULL;
		char perr[256];
		e = spa_vdev_spec_parse((int)tarn_array_len(&c->sc_words),
		    tarn_array_base(&c->sc_words), &spec, perr, sizeof (perr));
		if (e != 0)
			snprintf(err, errlen, "bad layout '%s': %s", c->sc_layout, perr);
		else
			spa_vdev_spec_free(spec);
	}
	return (e);
}

void
stress_cfg_init(stress_cfg_t *c)
{
	memset(c, 0, sizeof (*c));
	tarn_array_init(&c->sc_paths, sizeof (char *));
	tarn_array_init(&c->sc_words, sizeof (char *));
	tarn_array_init(&c->sc_groups, sizeof (stress_group_t));
}

/* Free the strings of an array of char * and the array's memory. */
static void
stress_strings_fini(tarn_array_t *a)
{
	for (size_t i = 0; i < tarn_array_len(a); i++)
		tarn_free(TARN_ARRAY_AT(a, char *, i));
	tarn_array_fini(a);
}

void
stress_cfg_fini(stress_cfg_t *c)
{
	stress_strings_fini(&c->sc_words);
	stress_strings_fini(&c->sc_paths);
	tarn_array_fini(&c->sc_groups);
	tarn_free(c->sc_dir);
	c->sc_dir = NULL;
}

int
stress_devices_create(const stress_cfg_t *c, char *err, size_t errlen)
{
	for (int i = 0; i < stress_npaths(c); i++) {
		(void) unlink(stress_path(c, i));
		int fd = open(stress_path(c, i), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
		if (fd < 0 || ftruncate(fd, (off_t)c->sc_devsize) != 0) {
			snprintf(err, errlen, "cannot create device file %s: %s", stress_path(c, i),
			    strerror(errno));
			if (fd >= 0)
				(void) close(fd);
			return (SET_ERROR(EIO));
		}
		(void) close(fd);
	}
	return (0);
}

void
stress_devices_remove(const stress_cfg_t *c)
{
	for (int i = 0; i < stress_npaths(c); i++)
		(void) unlink(stress_path(c, i));
}

/* ---- the pool ---- */

static dmu_pool_opts_t
stress_dmu_opts(void)
{
	/* small enough that txgs come often and the throttle gets used */
	dmu_pool_opts_t o = { .dpo_dirty_max = 32 * MiB, .dpo_txg_timeout_ms = 1000 };
	return (o);
}

int
stress_pool_create(const stress_cfg_t *c, spa_t **spap, objset_t **osp, char *err,
    size_t errlen)
{
	spa_vdev_spec_t *spec = NULL;
	char perr[256];
	int e = spa_vdev_spec_parse((int)tarn_array_len(&c->sc_words),
	    tarn_array_base(&c->sc_words), &spec, perr, sizeof (perr));
	if (e == 0) {
		spa_create_opts_t o;
		memset(&o, 0, sizeof (o));
		o.sco_no_cache = true;
		o.sco_dmu = stress_dmu_opts();
		e = spa_create(STRESS_POOL_NAME, spec, &o, spap, perr, sizeof (perr));
		spa_vdev_spec_free(spec);
	}
	if (e != 0) {
		snprintf(err, errlen, "cannot create the pool: %s", perr);
		return (e);
	}
	e = spa_objset_create(*spap, STRESS_OS_NAME, DMU_OST_TEST, osp);
	if (e == 0)
		e = txg_wait_synced(spa_dmu_pool(*spap), 0);
	if (e != 0) {
		snprintf(err, errlen, "cannot create the object set: %s", tarn_strerror(e));
		spa_close(*spap);
		*spap = NULL;
	}
	return (e);
}

int
stress_pool_open(const stress_cfg_t *c, bool readonly, spa_t **spap, objset_t **osp,
    char *err, size_t errlen)
{
	spa_import_opts_t o;
	memset(&o, 0, sizeof (o));
	o.sio_no_cache = true;
	o.sio_flags = readonly ? SPA_OPEN_READONLY : 0;
	o.sio_dmu = stress_dmu_opts();
	char perr[256] = "";
	int e = spa_open_paths(tarn_array_base(&c->sc_paths), stress_npaths(c), &o, spap,
	    perr, sizeof (perr));
	if (e != 0) {
		snprintf(err, errlen, "cannot open the pool%s: %s (%s)",
		    readonly ? " read-only" : "", perr, tarn_strerror(e));
		return (e);
	}
	e = spa_objset_open(*spap, STRESS_OS_NAME, osp);
	if (e != 0) {
		snprintf(err, errlen, "cannot open the object set: %s", tarn_strerror(e));
		spa_close(*spap);
		*spap = NULL;
	}
	return (e);
}

/*
 * Keep the live data at a quarter of what the pool holds (RAID-Z small
 * blocks may cost parity+1 sectors per data sector), so that copies on
 * write and deferred frees always fit; with -F aim past what fits, so
 * that ENOSPC comes often (a worker refused then frees and retries).
 */
void
stress_limits_setup(stress_cfg_t *c, spa_t *spa)
{
	spa_space_t ss;
	spa_get_space(spa, &ss);
	uint64_t total = c->sc_fill ? ss.ss_size :
	    ss.ss_size / 4 / (uint64_t)(c->sc_maxparity + 1);
	total = MIN(total, 2 * GiB);
	stress_limits_t *l = &c->sc_lim;
	l->sl_max_objs = 48;
	l->sl_obj_max = 4 * MiB;
	l->sl_write_max = 1 * MiB;
	l->sl_budget = MAX(total / (uint64_t)c->sc_threads, 256 * KiB);
	l->sl_sync_ops = true;
}

/* ---- verification ---- */

int
stress_verify_pool(const stress_cfg_t *c, spa_t *spa, objset_t *os, const stress_model_t *m,
    bool sync_first, stress_stats_t *st, const char *when, char *err, size_t errlen)
{
	uint64_t t0 = tarn_now_ns();
	int e = 0;
	if (sync_first) {
		(void) spa_scan_wait(spa);
		e = txg_wait_synced(spa_dmu_pool(spa), 0);
	}
	if (e != 0) {
		snprintf(err, errlen, "%s: txg_wait_synced: %s", when, tarn_strerror(e));
		return (e);
	}
	char merr[768];
	uint64_t bytes = 0;
	e = stress_model_verify(os, m, c->sc_lim.sl_obj_max, &bytes, merr, sizeof (merr));
	if (e != 0) {
		snprintf(err, errlen, "%s: %s", when, merr);
		return (e);
	}
	uint64_t blocks = 0, errors = 0;
	e = spa_verify_all(spa, true, &blocks, &errors);
	if (e != 0 || errors != 0) {
		snprintf(err, errlen, "%s: spa_verify_all: %s, %" PRIu64 " bad blocks of %" PRIu64,
		    when, tarn_strerror(e), errors, blocks);
		return (e ? e : SET_ERROR(ECKSUM));
	}
	st->st_verifies++;
	st->st_bytes_checked += bytes;
	stress_verbose(c, "%s: %" PRIu64 " objects, %" PRIu64 " KiB of data and %" PRIu64
	    " blocks verified at txg %" PRIu64 " (%.2f s)", when, stress_model_objects(m),
	    (uint64_t)(stress_model_bytes(m) / KiB), blocks, spa_last_synced_txg(spa),
	    (double)(tarn_now_ns() - t0) / 1e9);
	return (0);
}

/* ---- the workload ---- */

typedef struct stress_shared {
	const stress_cfg_t *ss_cfg;
	stress_worker_t *ss_workers;
	pthread_mutex_t ss_lock;
	pthread_cond_t  ss_cv;
	bool     ss_pause;          /* ss_lock, as everything below */
	bool     ss_stop;
	int      ss_running;
	int      ss_parked;
	int      ss_failed;
	char     ss_err[1024];
	_Atomic uint64_t ss_claimed;
	uint64_t ss_ops_limit;
	uint64_t ss_deadline;       /* ns; 0: none */
} stress_shared_t;

typedef struct stress_thread_arg {
	stress_shared_t *ta_sh;
	stress_worker_t *ta_w;
} stress_thread_arg_t;

static void
stress_fail_shared(stress_shared_t *sh, int e, const char *msg)
{
	pthread_mutex_lock(&sh->ss_lock);
	if (sh->ss_failed == 0) {
		sh->ss_failed = e ? e : EIO;
		snprintf(sh->ss_err, sizeof (sh->ss_err), "%s", msg);
	}
	sh->ss_stop = true;
	pthread_cond_broadcast(&sh->ss_cv);
	pthread_mutex_unlock(&sh->ss_lock);
}

/* Park while a verification runs; false when the run is over. */
static bool
stress_checkpoint(stress_shared_t *sh)
{
	pthread_mutex_lock(&sh->ss_lock);
	if (sh->ss_pause && !sh->ss_stop) {
		sh->ss_parked++;
		pthread_cond_broadcast(&sh->ss_cv);
		while (sh->ss_pause && !sh->ss_stop)
			pthread_cond_wait(&sh->ss_cv, &sh->ss_lock);
		sh->ss_parked--;
	}
	bool go = !sh->ss_stop;
	pthread_mutex_unlock(&sh->ss_lock);
	return (go);
}

static void *
stress_thread(void *arg)
{
	stress_thread_arg_t *ta = arg;
	stress_shared_t *sh = ta->ta_sh;
	stress_worker_t *w = ta->ta_w;
	char err[900], msg[1000];
	while (stress_checkpoint(sh)) {
		if (sh->ss_ops_limit != 0 &&
		    atomic_fetch_add(&sh->ss_claimed, 1) >= sh->ss_ops_limit)
			break;
		if (sh->ss_deadline != 0 && tarn_now_ns() >= sh->ss_deadline)
			break;
		int e = stress_worker_step(w, err, sizeof (err));
		if (e == ENOSPC && w->sw_enospc_run < 500) {
			/* frees wait for their txgs to mature: let them */
			if (w->sw_enospc_run % 8 == 0)
				(void) txg_wait_synced(dmu_objset_pool(w->sw_os), 0);
			continue;
		}
		if (e != 0) {
			bool susp = dmu_pool_suspended(dmu_objset_pool(w->sw_os));
			snprintf(msg, sizeof (msg), "thread %d: %s%s%s", w->sw_id, err,
			    e == ENOSPC ? " (500 times in a row)" : "",
			    susp ? " (the pool is suspended: a txg sync failed)" : "");
			stress_fail_shared(sh, e, msg);
			break;
		}
	}
	pthread_mutex_lock(&sh->ss_lock);
	sh->ss_running--;
	pthread_cond_broadcast(&sh->ss_cv);
	pthread_mutex_unlock(&sh->ss_lock);
	return (NULL);
}

/* Stop every worker between two operations; false if none is left. */
static bool
stress_pause_all(stress_shared_t *sh)
{
	pthread_mutex_lock(&sh->ss_lock);
	sh->ss_pause = true;
	while (sh->ss_parked < sh->ss_running && !sh->ss_stop)
		pthread_cond_wait(&sh->ss_cv, &sh->ss_lock);
	bool any = sh->ss_running > 0 && !sh->ss_stop;
	pthread_mutex_unlock(&sh->ss_lock);
	return (any);
}

static void
stress_resume_all(stress_shared_t *sh)
{
	pthread_mutex_lock(&sh->ss_lock);
	sh->ss_pause = false;
	pthread_cond_broadcast(&sh->ss_cv);
	pthread_mutex_unlock(&sh->ss_lock);
}

static uint64_t
stress_ops_done(stress_shared_t *sh, int n)
{
	uint64_t ops = 0;
	for (int i = 0; i < n; i++)
		ops += sh->ss_workers[i].sw_ops;
	return (ops);
}

/* The controller: sleep, verify now and then, until the workers are done. */
static void
stress_control(stress_shared_t *sh, spa_t *spa, objset_t *os, stress_model_t *m,
    stress_stats_t *st)
{
	const stress_cfg_t *c = sh->ss_cfg;
	uint64_t last = tarn_now_ns(), last_ops = 0;
	for (;;) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&sh->ss_lock);
		bool over = sh->ss_running == 0 || sh->ss_stop;
		pthread_mutex_unlock(&sh->ss_lock);
		if (over)
			break;
		/* a racy read of the counters is fine for deciding when */
		uint64_t now = tarn_now_ns(), ops = stress_ops_done(sh, c->sc_threads);
		if ((double)(now - last) / 1e9 < c->sc_verify_secs &&
		    (c->sc_verify_ops == 0 || ops - last_ops < c->sc_verify_ops))
			continue;
		if (stress_pause_all(sh)) {
			char err[1000];
			int e = stress_verify_pool(c, spa, os, m, true, st, "periodic verification",
			    err, sizeof (err));
			if (e != 0)
				stress_fail_shared(sh, e, err);
		}
		stress_resume_all(sh);
		last = tarn_now_ns();
		last_ops = stress_ops_done(sh, c->sc_threads);
	}
}

int
stress_workload(const stress_cfg_t *c, spa_t *spa, objset_t *os, stress_model_t *m,
    double seconds, uint64_t ops, stress_journal_fn_t journal, void *jarg,
    stress_stats_t *st, char *err, size_t errlen)
{
	stress_shared_t sh;
	memset(&sh, 0, sizeof (sh));
	sh.ss_cfg = c;
	pthread_mutex_init(&sh.ss_lock, NULL);
	pthread_cond_init(&sh.ss_cv, NULL);
	sh.ss_ops_limit = ops;
	sh.ss_deadline = seconds > 0 ? tarn_now_ns() + (uint64_t)(seconds * 1e9) : 0;
	int n = c->sc_threads;
	sh.ss_workers = tarn_alloc(sizeof (stress_worker_t) * (size_t)n);
	pthread_t *tids = tarn_alloc(sizeof (pthread_t) * (size_t)n);
	stress_thread_arg_t *args = tarn_alloc(sizeof (stress_thread_arg_t) * (size_t)n);
	uint64_t txg0 = spa_last_synced_txg(spa);
	sh.ss_running = n;
	for (int i = 0; i < n; i++) {
		stress_worker_t *w = &sh.ss_workers[i];
		stress_worker_init(w, i, c->sc_seed, os, m, &c->sc_lim);
		w->sw_journal = journal;
		w->sw_journal_arg = jarg;
		args[i].ta_sh = &sh;
		args[i].ta_w = w;
		VERIFY0(pthread_create(&tids[i], NULL, stress_thread, &args[i]));
	}
	stress_control(&sh, spa, os, m, st);
	for (int i = 0; i < n; i++)
		VERIFY0(pthread_join(tids[i], NULL));
	for (int i = 0; i < n; i++) {
		stress_worker_t *w = &sh.ss_workers[i];
		st->st_ops += w->sw_ops;
		st->st_txs += w->sw_txs;
		st->st_bytes_written += w->sw_bytes_written;
		st->st_bytes_checked += w->sw_bytes_checked;
		st->st_enospc += w->sw_enospc;
		st->st_digest += w->sw_digest;
		stress_worker_fini(w);
	}
	st->st_txgs += spa_last_synced_txg(spa) - txg0;
	int e = sh.ss_failed;
	if (e != 0)
		snprintf(err, errlen, "%s", sh.ss_err);
	tarn_free(args);
	tarn_free(tids);
	tarn_free(sh.ss_workers);
	pthread_cond_destroy(&sh.ss_cv);
	pthread_mutex_destroy(&sh.ss_lock);
	return (e);
}

/* ---- the normal run ---- */

/* -vv: print every record as it is made (the journal of a normal run). */
static void
stress_trace(void *arg, const stress_op_t *ops, int nops)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < nops; i++) {
		char line[256];
		VERIFY0(stress_op_format(&ops[i], line, sizeof (line)));
		printf("  %s\n", line);
	}
	pthread_mutex_unlock(&lock);
}

/* The workload with the fault thread (-f) around it, and the final check. */
static int
stress_run_work(stress_cfg_t *c, spa_t *spa, objset_t *os, stress_model_t *m,
    stress_faulter_t *fl, void *kj, stress_stats_t *st, char *err, size_t errlen)
{
	stress_journal_fn_t jfn = kj != NULL ? stress_keep_fn() :
	    c->sc_verbose >= 2 ? stress_trace : NULL;
	if (fl != NULL)
		stress_faults_start(fl, spa, st);
	int e = stress_workload(c, spa, os, m, c->sc_seconds, c->sc_ops, jfn, kj, st, err,
	    errlen);
	if (fl != NULL) {
		char ferr[600];
		int fe = stress_faults_stop(fl, ferr, sizeof (ferr));
		if (fe == 0)
			fe = stress_faults_finish(fl, ferr, sizeof (ferr));
		if (e == 0 && fe != 0) {
			snprintf(err, errlen, "%s", ferr);
			e = fe;
		}
	}
	if (e == 0 && kj != NULL)
		e = stress_keep_close(kj, err, errlen);
	else if (kj != NULL)
		(void) stress_keep_close(kj, NULL, 0);
	if (e == 0)
		e = stress_verify_pool(c, spa, os, m, true, st, "final verification", err, errlen);
	return (e);
}

int
stress_run_normal(stress_cfg_t *c, stress_stats_t *st, char *err, size_t errlen)
{
	spa_t *spa = NULL;
	objset_t *os = NULL;
	stress_faulter_t *fl = NULL;
	void *kj = NULL;
	int e = stress_devices_create(c, err, errlen);
	if (e == 0 && c->sc_faults != 0)
		fl = stress_faults_attach(c);   /* before any leaf opens */
	if (e == 0 && c->sc_keep && (kj = stress_keep_open(c, err, errlen)) == NULL)
		e = SET_ERROR(EIO);
	if (e == 0)
		e = stress_pool_create(c, &spa, &os, err, errlen);
	if (e != 0) {
		(void) stress_keep_close(kj, NULL, 0);
		stress_faults_detach(fl);
		return (e);
	}
	stress_limits_setup(c, spa);
	stress_verbose(c, "budget %" PRIu64 " KiB of live data per thread",
	    (uint64_t)(c->sc_lim.sl_budget / KiB));
	stress_model_t *m = stress_model_create(c->sc_seed, c->sc_threads);
	e = stress_run_work(c, spa, os, m, fl, kj, st, err, errlen);
	if (e != 0) {
		/* leave the devices as they are for a post-mortem */
		spa_abandon(spa);
		stress_faults_detach(fl);
		stress_model_free(m);
		return (e);
	}
	/* reopen read-only (exactly what is on disk), then read-write */
	spa_close(spa);
	stress_faults_detach(fl);
	for (int rw = 0; rw < 2 && e == 0; rw++) {
		e = stress_pool_open(c, rw == 0, &spa, &os, err, errlen);
		if (e != 0)
			break;
		e = stress_verify_pool(c, spa, os, m, rw == 1, st, rw == 0 ?
		    "verification after a read-only reopen" :
		    "verification after a read-write reopen", err, errlen);
		if (e != 0) {
			spa_abandon(spa);
		} else if (rw == 1 && c->sc_keep) {
			e = spa_export(spa);
			if (e != 0)
				snprintf(err, errlen, "cannot export the pool: %s", tarn_strerror(e));
		} else {
			spa_close(spa);
		}
	}
	stress_model_free(m);
	return (e);
}
