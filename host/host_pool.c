/*
 * host_pool.c — the registry: how a command gets a pool and gives it back.
 *
 * Theory.  Run in-process (TARN_NO_DAEMON=1, or before the daemon
 * existed), host_pool_open() opens the pool by name through the cache file
 * and host_pool_close() syncs and closes it: one command, one open.
 *
 * Inside tarnd the registry is in daemon mode: the daemon opened every
 * pool of the cache file when it started and keeps them open, so a
 * scrub started by one command keeps running after it returns and error
 * counters live as long as the daemon.  host_pool_open() then returns the
 * held spa_t, and the registry entry's read-write lock says who may use
 * it: a command that only reads (SPA_OPEN_READONLY: status, list) takes
 * it shared, any other takes it exclusive, so two commands never change
 * one pool at once while readers run side by side.  Each thread keeps a
 * short list of its holds, so host_pool_close(spa) knows what to release;
 * a spa_t the registry does not know (a trial import) is simply closed.
 *
 * A pool that did not open at start (devices missing) is not held; it
 * stays in the cache file, so `status` lists it, and every host_pool_open()
 * tries again; read-only commands fall back to a transient read-only,
 * unverified open as in-process commands do, so status can show a pool
 * whose metadata no longer verifies.  Export and destroy mark the entry
 * gone under the registry mutex (commands queued on its lock then get
 * "no such pool"); a pool still held past host_pool_unlock() by another
 * command cannot be exported (EBUSY).  Lock order: an entry's rwlock is
 * never requested while holding the registry mutex.
 */
#include "host_impl.h"

#include <pthread.h>
#include <stdarg.h>
#include <time.h>

typedef struct reg_pool {
	struct reg_pool *rp_next;
	char     rp_name[SPA_NAME_MAX + 1];
	spa_t   *rp_spa;           /* NULL once exported or destroyed */
	pthread_rwlock_t rp_rw;    /* held by commands: shared or exclusive */
	int      rp_refs;          /* commands holding or waiting for it */
	int      rp_unlocked;      /* holders past host_pool_unlock() */
	bool     rp_gone;          /* no new holds; freed at the last unref */
	bool     rp_uncached;      /* imported without a cache file entry */
} reg_pool_t;

typedef enum reg_mode { REG_READ = 1, REG_WRITE, REG_UNLOCKED } reg_mode_t;

typedef struct reg_hold {
	reg_pool_t *rh_pool;
	spa_t      *rh_spa;
	int         rh_count;      /* nested opens of the same pool */
	reg_mode_t  rh_mode;
	bool        rh_changer;    /* opened to change it: sync at the end */
} reg_hold_t;

#define REG_MAXHOLDS 32

static bool reg_daemon;
static host_log_fn_t reg_log;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reg_cv = PTHREAD_COND_INITIALIZER;
static reg_pool_t *reg_pools;

static __thread reg_hold_t reg_holds[REG_MAXHOLDS];
static __thread int reg_nholds;

bool
host_daemon_mode(void)
{
	return (reg_daemon);
}

static int
name_cmp(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

/* The pool held under this name (not gone), or NULL; reg_lock held. */
static reg_pool_t *
reg_find(const char *name)
{
	for (reg_pool_t *rp = reg_pools; rp != NULL; rp = rp->rp_next)
		if (!rp->rp_gone && strcmp(rp->rp_name, name) == 0)
			return (rp);
	return (NULL);
}

/* Add a held pool; reg_lock held. */
static reg_pool_t *
reg_add(spa_t *spa)
{
	reg_pool_t *rp = tarn_alloc(sizeof (*rp));

	(void) snprintf(rp->rp_name, sizeof (rp->rp_name), "%s", spa_name(spa));
	rp->rp_spa = spa;
	VERIFY0(pthread_rwlock_init(&rp->rp_rw, NULL));
	rp->rp_next = reg_pools;
	reg_pools = rp;
	return (rp);
}

/* Drop a reference; a gone entry is closed and freed at the last one. */
static void
reg_rele_locked(reg_pool_t *rp)
{
	ASSERT(rp->rp_refs > 0);
	rp->rp_refs--;
	pthread_cond_broadcast(&reg_cv);
	if (!rp->rp_gone || rp->rp_refs > 0)
		return;
	for (reg_pool_t **pp = &reg_pools; *pp != NULL; pp = &(*pp)->rp_next) {
		if (*pp == rp) {
			*pp = rp->rp_next;
			break;
		}
	}
	if (rp->rp_spa != NULL)
		spa_close(rp->rp_spa);
	VERIFY0(pthread_rwlock_destroy(&rp->rp_rw));
	tarn_free(rp);
}

/*
 * A command that changed a pool returns once the change is on disk, as
 * in-process (where spa_close syncs): wait for the open txg.
 */
static void
reg_sync(spa_t *spa)
{
	dmu_pool_t *dp;

	if (!spa_readonly(spa) && (dp = spa_dmu_pool(spa)) != NULL)
		(void) txg_wait_synced(dp, 0);
}

static reg_hold_t *
hold_find(const spa_t *spa)
{
	for (int i = 0; i < reg_nholds; i++)
		if (reg_holds[i].rh_spa == spa)
			return (&reg_holds[i]);
	return (NULL);
}

static void
hold_remove(reg_hold_t *h)
{
	*h = reg_holds[--reg_nholds];
}

int
host_pool_names(char ***namesp, int *np)
{
	spa_cache_entry_t *ents;
	int n, ncache, error, extra = 0;

	*namesp = NULL;
	*np = 0;
	if ((error = spa_cache_read(&ents, &ncache)) != 0)
		return (error);
	n = ncache;
	pthread_mutex_lock(&reg_lock);
	for (reg_pool_t *rp = reg_pools; rp != NULL; rp = rp->rp_next)
		extra++;
	char **names = tarn_alloc((size_t)(n + extra + 1) * sizeof (char *));
	for (int i = 0; i < n; i++)
		names[i] = tarn_strdup(ents[i].sce_name);
	/* a read-only import is held by the daemon but not in the cache file */
	for (reg_pool_t *rp = reg_pools; rp != NULL; rp = rp->rp_next) {
		bool known = rp->rp_gone || !rp->rp_uncached;
		for (int i = 0; i < ncache && !known; i++)
			known = strcmp(names[i], rp->rp_name) == 0;
		if (!known)
			names[n++] = tarn_strdup(rp->rp_name);
	}
	pthread_mutex_unlock(&reg_lock);
	qsort(names, (size_t)n, sizeof (char *), name_cmp);
	spa_cache_free(ents, ncache);
	*namesp = names;
	*np = n;
	return (0);
}

void
host_names_free(char **names, int n)
{
	for (int i = 0; i < n; i++)
		tarn_free(names[i]);
	tarn_free(names);
}

/* Is the pool in the cache file?  0 yes, HOST_ENOPOOL no, else an error. */
static int
pool_cached(const char *name, char *err, size_t errlen)
{
	spa_cache_entry_t *ents;
	bool known = false;
	int n, error;

	if ((error = spa_cache_read(&ents, &n)) != 0) {
		(void) snprintf(err, errlen, "cannot read the cache file %s: %s",
		    spa_cachefile_path(), tarn_strerror(error));
		return (error);
	}
	for (int i = 0; i < n && !known; i++)
		known = strcmp(ents[i].sce_name, name) == 0;
	spa_cache_free(ents, n);
	if (!known) {
		(void) snprintf(err, errlen, "no such pool");
		return (SET_ERROR(HOST_ENOPOOL));
	}
	return (0);
}

static int
pool_open_direct(const char *name, int flags, spa_t **spap, char *err, size_t errlen)
{
	int error;

	if ((error = pool_cached(name, err, errlen)) != 0)
		return (error);
	dmu_pool_opts_t dpo = { 0 };
	host_dmu_opts(&dpo);
	error = spa_open_opts(name, flags, &dpo, spap, err, errlen);
	if (error != 0) {
		*spap = NULL;
		if (err[0] == '\0')
			(void) snprintf(err, errlen, "%s", tarn_strerror(error));
	}
	return (error);
}

/*
 * Daemon: find the held pool, or open and hold it when the cache file
 * names it.  Returns the entry with a reference, or NULL and an error.
 */
static reg_pool_t *
reg_get(const char *name, int *errorp, char *err, size_t errlen)
{
	reg_pool_t *rp;
	spa_t *spa;
	int error = 0;

	pthread_mutex_lock(&reg_lock);
	if ((rp = reg_find(name)) == NULL &&
	    (error = pool_cached(name, err, errlen)) == 0) {
		dmu_pool_opts_t dpo = { 0 };
		host_dmu_opts(&dpo);
		error = spa_open_opts(name, 0, &dpo, &spa, err, errlen);
		if (error == 0) {
			rp = reg_add(spa);
			if (reg_log != NULL)
				reg_log("opened pool '%s'", name);
		} else if (err[0] == '\0') {
			(void) snprintf(err, errlen, "%s", tarn_strerror(error));
		}
	}
	if (rp != NULL)
		rp->rp_refs++;
	pthread_mutex_unlock(&reg_lock);
	*errorp = error;
	return (rp);
}

int
host_pool_open(const char *name, int flags, spa_t **spap, char *err, size_t errlen)
{
	reg_pool_t *rp;
	int error;

	*spap = NULL;
	err[0] = '\0';
	if (!reg_daemon)
		return (pool_open_direct(name, flags, spap, err, errlen));
	for (int i = 0; i < reg_nholds; i++) {
		rp = reg_holds[i].rh_pool;
		if (rp != NULL && strcmp(rp->rp_name, name) == 0) {
			reg_holds[i].rh_count++;
			*spap = reg_holds[i].rh_spa;
			return (0);
		}
	}
	if (reg_nholds == REG_MAXHOLDS) {
		(void) snprintf(err, errlen, "too many pools open in one command");
		return (SET_ERROR(EMFILE));
	}
	if ((rp = reg_get(name, &error, err, errlen)) == NULL) {
		if (error == HOST_ENOPOOL || !(flags & SPA_OPEN_READONLY))
			return (error);
		/* as in-process: a look at a pool that will not open for use */
		err[0] = '\0';
		return (pool_open_direct(name, flags, spap, err, errlen));
	}
	bool shared = (flags & SPA_OPEN_READONLY) != 0;
	if (shared)
		VERIFY0(pthread_rwlock_rdlock(&rp->rp_rw));
	else
		VERIFY0(pthread_rwlock_wrlock(&rp->rp_rw));
	pthread_mutex_lock(&reg_lock);
	if (rp->rp_gone) {
		/* exported or destroyed while we waited */
		VERIFY0(pthread_rwlock_unlock(&rp->rp_rw));
		reg_rele_locked(rp);
		pthread_mutex_unlock(&reg_lock);
		(void) snprintf(err, errlen, "no such pool");
		return (SET_ERROR(HOST_ENOPOOL));
	}
	pthread_mutex_unlock(&reg_lock);
	reg_holds[reg_nholds++] = (reg_hold_t){ .rh_pool = rp, .rh_spa = rp->rp_spa,
		.rh_count = 1, .rh_mode = shared ? REG_READ : REG_WRITE,
		.rh_changer = !shared };
	*spap = rp->rp_spa;
	return (0);
}

/*
 * Is spa a pool the daemon holds (imported, and opened for this command
 * through the registry) rather than this command's own look at it?
 * *uncached: held, and imported without a cache file entry.
 */
bool
host_pool_held(const spa_t *spa, bool *uncached)
{
	const reg_hold_t *h = hold_find(spa);
	bool held = h != NULL && h->rh_pool != NULL;
	if (uncached != NULL)
		*uncached = held && h->rh_pool->rp_uncached;
	return (held);
}

/* Give up the thread's hold h entirely (lock and reference). */
static void
hold_drop(reg_hold_t *h)
{
	reg_pool_t *rp = h->rh_pool;
	reg_mode_t mode = h->rh_mode;

	if (h->rh_changer)
		reg_sync(h->rh_spa);
	hold_remove(h);
	if (mode != REG_UNLOCKED)
		VERIFY0(pthread_rwlock_unlock(&rp->rp_rw));
	pthread_mutex_lock(&reg_lock);
	if (mode == REG_UNLOCKED)
		rp->rp_unlocked--;
	reg_rele_locked(rp);
	pthread_mutex_unlock(&reg_lock);
}

void
host_pool_close(spa_t *spa)
{
	reg_hold_t *h;

	if (spa == NULL)
		return;
	if (!reg_daemon || (h = hold_find(spa)) == NULL) {
		spa_close(spa);
		return;
	}
	if (--h->rh_count > 0)
		return;
	hold_drop(h);
}

void
host_pool_unlock(spa_t *spa)
{
	reg_hold_t *h;

	if (!reg_daemon || (h = hold_find(spa)) == NULL || h->rh_mode == REG_UNLOCKED)
		return;
	VERIFY0(pthread_rwlock_unlock(&h->rh_pool->rp_rw));
	h->rh_mode = REG_UNLOCKED;
	pthread_mutex_lock(&reg_lock);
	h->rh_pool->rp_unlocked++;
	pthread_mutex_unlock(&reg_lock);
}

void
host_pool_relock(spa_t *spa)
{
	reg_hold_t *h;

	if (!reg_daemon || (h = hold_find(spa)) == NULL || h->rh_mode != REG_UNLOCKED)
		return;
	VERIFY0(pthread_rwlock_wrlock(&h->rh_pool->rp_rw));
	h->rh_mode = REG_WRITE;
	pthread_mutex_lock(&reg_lock);
	h->rh_pool->rp_unlocked--;
	pthread_mutex_unlock(&reg_lock);
}

void
host_pool_adopt(spa_t *spa)
{
	reg_pool_t *old;

	if (!reg_daemon) {
		spa_close(spa);
		return;
	}
	reg_sync(spa);
	pthread_mutex_lock(&reg_lock);
	if ((old = reg_find(spa_name(spa))) != NULL) {
		/* e.g. a read-only import of the same name; the new one wins */
		if (reg_log != NULL)
			reg_log("pool '%s' was opened again; the older handle is "
			    "closed when its last command ends", old->rp_name);
		old->rp_gone = true;
		old->rp_refs++;
		reg_rele_locked(old);
	}
	char err[256];
	reg_add(spa)->rp_uncached = pool_cached(spa_name(spa), err, sizeof (err)) != 0;
	if (reg_log != NULL)
		reg_log("holding pool '%s'", spa_name(spa));
	pthread_mutex_unlock(&reg_lock);
}

/*
 * Export or destroy a held pool: the caller holds it exclusively.  The
 * entry is gone before the pool is, and the registry mutex is kept
 * meanwhile so that nobody re-opens it from the cache file half-way.
 */
static int
reg_end(spa_t *spa, bool destroy)
{
	reg_hold_t *h;
	reg_pool_t *rp;
	int error;

	if (!reg_daemon || (h = hold_find(spa)) == NULL)
		return (destroy ? spa_destroy(spa) : spa_export(spa));
	rp = h->rh_pool;
	if (h->rh_mode != REG_WRITE || h->rh_count > 1)
		return (SET_ERROR(EBUSY));
	pthread_mutex_lock(&reg_lock);
	if (rp->rp_unlocked > 0) {
		/* another command (scrub -w, iostat) still uses it */
		pthread_mutex_unlock(&reg_lock);
		return (SET_ERROR(EBUSY));
	}
	bool readonly = spa_readonly(spa);
	if (!destroy && readonly) {
		/* a read-only import: nothing to write, just let it go */
		spa_close(spa);
		error = 0;
	} else {
		error = destroy ? spa_destroy(spa) : spa_export(spa);
	}
	if (error == EROFS && readonly) {
		pthread_mutex_unlock(&reg_lock);
		return (error);      /* untouched: still held */
	}
	if (error != 0) {
		/* half-stopped: drop it; the cache file still names it */
		if (reg_log != NULL)
			reg_log("%s of pool '%s' failed (%s); closed without "
			    "writing, it is re-opened on next use",
			    destroy ? "destroy" : "export", rp->rp_name,
			    tarn_strerror(error));
		spa_abandon(spa);
	} else if (reg_log != NULL) {
		reg_log("%s pool '%s'", destroy ? "destroyed" : "exported", rp->rp_name);
	}
	rp->rp_spa = NULL;
	rp->rp_gone = true;
	hold_remove(h);
	VERIFY0(pthread_rwlock_unlock(&rp->rp_rw));
	reg_rele_locked(rp);
	pthread_mutex_unlock(&reg_lock);
	return (error);
}

int
host_pool_export(spa_t *spa)
{
	return (reg_end(spa, false));
}

int
host_pool_destroy(spa_t *spa)
{
	return (reg_end(spa, true));
}

/* ---- the daemon's side ---- */

host_log_fn_t
host_daemon_log(void)
{
	return (reg_log);
}

void
host_start(host_log_fn_t logf)
{
	spa_cache_entry_t *ents;
	int n, error;

	reg_log = logf;
	reg_daemon = true;
	host_tunable_t mx, mn;
	(void) host_arc();               /* reads the config file */
	host_tunable_get(host_tunable_lookup("arc_max"), &mx);
	host_tunable_get(host_tunable_lookup("arc_min"), &mn);
	logf("ARC: arc_max %" PRIu64 " (%s), arc_min %" PRIu64 " (%s); config file %s",
	    mx.ht_value, mx.ht_source, mn.ht_value, mn.ht_source, host_config_path());
	if ((error = spa_cache_read(&ents, &n)) != 0) {
		logf("cannot read the cache file %s: %s; no pools opened",
		    spa_cachefile_path(), tarn_strerror(error));
		return;
	}
	logf("cache file %s names %d pool(s)", spa_cachefile_path(), n);
	for (int i = 0; i < n; i++) {
		char err[1024] = "";
		int refs_error;
		reg_pool_t *rp = reg_get(ents[i].sce_name, &refs_error, err, sizeof (err));

		if (rp == NULL) {
			logf("cannot open pool '%s': %s; it shows as UNAVAIL until "
			    "its devices return", ents[i].sce_name, err);
			continue;
		}
		pthread_mutex_lock(&reg_lock);
		reg_rele_locked(rp);
		pthread_mutex_unlock(&reg_lock);
	}
	spa_cache_free(ents, n);
	host_mount_start();      /* the datasets of the pools it holds again */
}

int
host_stop(int wait_ms)
{
	struct timespec deadline;
	int left = 0;

	host_mount_stop();       /* every mount goes before its pool closes */
	VERIFY0(clock_gettime(CLOCK_REALTIME, &deadline));
	deadline.tv_sec += wait_ms / 1000;
	deadline.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&reg_lock);
	for (;;) {
		bool busy = false;
		for (reg_pool_t *rp = reg_pools; rp != NULL; rp = rp->rp_next)
			busy |= rp->rp_refs > 0;
		if (!busy || pthread_cond_timedwait(&reg_cv, &reg_lock, &deadline) != 0)
			break;
	}
	reg_pool_t *rp = reg_pools, *next;
	reg_pools = NULL;
	for (; rp != NULL; rp = next) {
		next = rp->rp_next;
		if (rp->rp_refs > 0) {
			/* still in use: leave it to crash recovery, never free it */
			reg_log("pool '%s' is still in use; not closed (it recovers "
			    "at the next start)", rp->rp_name);
			left++;
			continue;
		}
		if (rp->rp_spa != NULL) {
			reg_log("closing pool '%s'", rp->rp_name);
			spa_close(rp->rp_spa);
		}
		VERIFY0(pthread_rwlock_destroy(&rp->rp_rw));
		tarn_free(rp);
	}
	pthread_mutex_unlock(&reg_lock);
	return (left);
}

bool
host_pool_holding(const char *name, const char **state, int *refs)
{
	pthread_mutex_lock(&reg_lock);
	reg_pool_t *rp = reg_find(name);
	bool held = rp != NULL && rp->rp_spa != NULL;
	if (held) {
		*state = vdev_state_name(spa_state(rp->rp_spa));
		*refs = rp->rp_refs;
	}
	pthread_mutex_unlock(&reg_lock);
	return (held);
}
