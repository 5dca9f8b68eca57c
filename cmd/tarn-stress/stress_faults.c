/*
 * stress_faults.c — tarn-stress -f: faults within the pool's redundancy
 * while the workload runs, with scrubs and resilvers in the mix.
 *
 * Theory.  Every device file gets a fault injector (lib/vdev/vdev_fault.c)
 * before the pool is created, with all rates at zero.  A fault thread then
 * works in episodes.  Each episode picks, in every redundant group, an
 * "affected" set of at most sg_tol devices (the group's parity for RAID-Z,
 * all but one side of a mirror; plain disks are never touched) and gives
 * them random bit flips and EIO on reads.  Sometimes one affected device
 * also disappears (its injector fails every I/O; half of the time it is
 * also taken offline -t, as an administrator would): it misses writes.
 * After a second or three, the episode ends: rates go back to zero, the
 * lost device comes back (dead false, clear, online), and the thread waits
 * until the pool has resilvered everything that any device missed
 * (spa_vdev_wait) before the next episode chooses new devices, so that at
 * no instant more than sg_tol devices of a group hold or return anything
 * wrong.  Every few episodes a scrub runs (with faults active).  Bit
 * flips and read EIO damage nothing on disk, so affected devices need no
 * resilver; a device the pool faulted itself (too many errors) is one of
 * the affected set and comes back with the others.
 *
 * The workers' reads and the periodic verifications go on all along and
 * must see exactly the model.  At the end (stress_faults_finish) every
 * device is healthy again, a last scrub runs and must report no
 * unrepaired error, and the error log must be empty.
 */
#include "stress_run.h"

#include <pthread.h>
#include <time.h>

struct stress_faulter {
	const stress_cfg_t *sf_cfg;
	spa_t          *sf_spa;
	stress_stats_t *sf_st;
	vdev_fault_t  **sf_vf;          /* per path */
	bool           *sf_aff;         /* per path: affected this episode */
	tarn_rand_t     sf_rand;
	pthread_t       sf_tid;
	bool            sf_running;
	pthread_mutex_t sf_lock;
	pthread_cond_t  sf_cv;
	bool            sf_stop;        /* sf_lock */
	int             sf_failed;
	char            sf_err[512];
};

int
stress_faults_parse(const char *arg, unsigned *mask)
{
	static const struct { const char *n; unsigned m; } names[] = {
		{ "all", STRESS_F_ALL }, { "bitflip", STRESS_F_BITFLIP },
		{ "eio", STRESS_F_EIO }, { "dead", STRESS_F_DEAD }, { "scrub", STRESS_F_SCRUB },
	};
	char *dup = tarn_strdup(arg), *save = NULL;
	int e = 0;
	*mask = 0;
	for (char *w = strtok_r(dup, ",", &save); w != NULL; w = strtok_r(NULL, ",", &save)) {
		size_t i;
		for (i = 0; i < ARRAY_SIZE(names); i++)
			if (strcmp(w, names[i].n) == 0)
				break;
		if (i == ARRAY_SIZE(names)) {
			e = SET_ERROR(EINVAL);
			break;
		}
		*mask |= names[i].m;
	}
	tarn_free(dup);
	return (e != 0 || *mask == 0 ? SET_ERROR(EINVAL) : 0);
}

void
stress_faults_name(unsigned mask, char *buf, size_t len)
{
	static const char *const names[] = { "bitflip", "eio", "dead", "scrub" };
	buf[0] = '\0';
	if ((mask & STRESS_F_ALL) == STRESS_F_ALL) {
		snprintf(buf, len, "all");
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (mask & (1U << i))
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? "," : "",
			    names[i]);
}

stress_faulter_t *
stress_faults_attach(const stress_cfg_t *c)
{
	stress_faulter_t *f = tarn_alloc(sizeof (*f));
	f->sf_cfg = c;
	f->sf_vf = tarn_alloc(sizeof (vdev_fault_t *) * (size_t)stress_npaths(c));
	f->sf_aff = tarn_alloc(sizeof (bool) * (size_t)stress_npaths(c));
	tarn_rand_seed(&f->sf_rand, c->sc_seed ^ 0xfa17fa17fa17ULL);
	for (int i = 0; i < stress_npaths(c); i++) {
		vdev_fault_cfg_t fc;
		memset(&fc, 0, sizeof (fc));
		fc.vfc_seed = c->sc_seed * 1000003ULL + (uint64_t)i;
		f->sf_vf[i] = vdev_fault_attach(stress_path(c, i), &fc);
	}
	VERIFY0(pthread_mutex_init(&f->sf_lock, NULL));
	VERIFY0(pthread_cond_init(&f->sf_cv, NULL));
	return (f);
}

void
stress_faults_detach(stress_faulter_t *f)
{
	if (f == NULL)
		return;
	VERIFY(!f->sf_running);
	for (int i = 0; i < stress_npaths(f->sf_cfg); i++)
		vdev_fault_detach(f->sf_vf[i]);
	VERIFY0(pthread_cond_destroy(&f->sf_cv));
	VERIFY0(pthread_mutex_destroy(&f->sf_lock));
	tarn_free(f->sf_aff);
	tarn_free(f->sf_vf);
	tarn_free(f);
}

/* Sleep ms unless asked to stop; false when asked. */
static bool
stress_faults_sleep(stress_faulter_t *f, uint64_t ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t ns = (uint64_t)ts.tv_nsec + ms * 1000000ULL;
	ts.tv_sec += (time_t)(ns / 1000000000ULL);
	ts.tv_nsec = (long)(ns % 1000000000ULL);
	pthread_mutex_lock(&f->sf_lock);
	while (!f->sf_stop && pthread_cond_timedwait(&f->sf_cv, &f->sf_lock, &ts) == 0)
		continue;
	bool go = !f->sf_stop;
	pthread_mutex_unlock(&f->sf_lock);
	return (go);
}

static void
stress_faults_fail(stress_faulter_t *f, int e, const char *what, const char *msg)
{
	if (f->sf_failed != 0)
		return;
	f->sf_failed = e ? e : EIO;
	snprintf(f->sf_err, sizeof (f->sf_err), "fault thread: %s: %s (%s)", what, msg,
	    tarn_strerror(e));
}

/* Add a leaf's error counters to the totals (before they are cleared). */
static void
stress_faults_count(stress_faulter_t *f, int i)
{
	/* only this thread changes devices: the pointer stays valid */
	vdev_t *vd = spa_lookup_leaf(f->sf_spa, stress_path(f->sf_cfg, i));
	if (vd != NULL) {
		f->sf_st->st_ck_errors += __atomic_load_n(&vdev_stat(vd)->vs_checksum_errors,
		    __ATOMIC_RELAXED);
		f->sf_st->st_read_errors += __atomic_load_n(&vdev_stat(vd)->vs_read_errors,
		    __ATOMIC_RELAXED);
	}
}

/* Wait for the running scan and add what it did to the totals. */
static int
stress_faults_scan_done(stress_faulter_t *f)
{
	int e = spa_scan_wait(f->sf_spa);
	spa_scan_stat_t ss;
	spa_scan_get_stat(f->sf_spa, &ss);
	if (ss.sss_state == SPA_SCAN_STATE_FINISHED)
		f->sf_st->st_repaired += ss.sss_repaired;
	return (e);
}

/* Choose the affected devices of one episode and set their fault rates. */
static void
stress_faults_choose(stress_faulter_t *f)
{
	const stress_cfg_t *c = f->sf_cfg;
	memset(f->sf_aff, 0, sizeof (bool) * (size_t)stress_npaths(c));
	for (int g = 0; g < stress_ngroups(c); g++) {
		const stress_group_t *sg = stress_group(c, g);
		if (sg->sg_tol == 0)
			continue;
		int k = 1 + (int)tarn_rand_range(&f->sf_rand, (uint64_t)sg->sg_tol);
		for (int j = 0; j < k; j++) {
			int i;
			do {
				i = sg->sg_first + (int)tarn_rand_range(&f->sf_rand, (uint64_t)sg->sg_n);
			} while (f->sf_aff[i]);
			f->sf_aff[i] = true;
		}
	}
	for (int i = 0; i < stress_npaths(c); i++) {
		if (!f->sf_aff[i])
			continue;
		uint32_t flip = (c->sc_faults & STRESS_F_BITFLIP) ?
		    2000 + (uint32_t)tarn_rand_range(&f->sf_rand, 30000) : 0;
		uint32_t eio = (c->sc_faults & STRESS_F_EIO) ?
		    1000 + (uint32_t)tarn_rand_range(&f->sf_rand, 10000) : 0;
		if (flip + eio == 0)
			continue;
		vdev_fault_set_rates(f->sf_vf[i], eio, 0, flip);
		f->sf_st->st_faults++;
	}
}

/* Make one affected device disappear; its index, or -1. */
static int
stress_faults_kill_one(stress_faulter_t *f, bool *offlined)
{
	const stress_cfg_t *c = f->sf_cfg;
	int cand[256], n = 0;
	for (int i = 0; i < stress_npaths(c) && n < 256; i++)
		if (f->sf_aff[i])
			cand[n++] = i;
	*offlined = false;
	if (n == 0)
		return (-1);
	int i = cand[tarn_rand_range(&f->sf_rand, (uint64_t)n)];
	if (tarn_rand_range(&f->sf_rand, 2) == 0) {
		char err[256];
		/* EBUSY: the pool still needs it (a resilver not finished) */
		*offlined = spa_vdev_offline(f->sf_spa, stress_path(c, i), true, err,
		    sizeof (err)) == 0;
	}
	vdev_fault_set_dead(f->sf_vf[i], true);
	f->sf_st->st_dead++;
	stress_verbose(c, "faults: %s disappears%s", stress_path(c, i),
	    *offlined ? " (offline -t)" : "");
	return (i);
}

/* End an episode: everything back, resilvered. */
static int
stress_faults_heal(stress_faulter_t *f, int dead)
{
	const stress_cfg_t *c = f->sf_cfg;
	char err[256] = "";
	int e = 0;
	for (int i = 0; i < stress_npaths(c); i++)
		vdev_fault_set_rates(f->sf_vf[i], 0, 0, 0);
	if (dead >= 0) {
		vdev_fault_set_dead(f->sf_vf[dead], false);
		stress_verbose(c, "faults: %s comes back", stress_path(c, dead));
	}
	for (int i = 0; i < stress_npaths(c) && e == 0; i++) {
		if (!f->sf_aff[i])
			continue;
		stress_faults_count(f, i);
		e = spa_vdev_clear(f->sf_spa, stress_path(c, i), err, sizeof (err));
		if (e != 0)
			stress_faults_fail(f, e, "clear", err);
	}
	if (e == 0 && dead >= 0) {
		e = spa_vdev_online(f->sf_spa, stress_path(c, dead), err, sizeof (err));
		if (e != 0)
			stress_faults_fail(f, e, "online", err);
	}
	spa_scan_stat_t before, after;
	spa_scan_get_stat(f->sf_spa, &before);
	if (e == 0)
		e = spa_vdev_wait(f->sf_spa);
	spa_scan_get_stat(f->sf_spa, &after);
	if (after.sss_func == SPA_SCAN_RESILVER && after.sss_state == SPA_SCAN_STATE_FINISHED &&
	    (before.sss_func != SPA_SCAN_RESILVER || before.sss_state != after.sss_state ||
	    before.sss_start_time != after.sss_start_time)) {
		f->sf_st->st_resilvers++;
		f->sf_st->st_repaired += after.sss_repaired;
	}
	return (e);
}

static void *
stress_faults_thread(void *arg)
{
	stress_faulter_t *f = arg;
	const stress_cfg_t *c = f->sf_cfg;
	uint64_t episode = 0;
	bool go = stress_faults_sleep(f, 500);
	while (go && f->sf_failed == 0) {
		stress_faults_choose(f);
		bool offlined = false;
		int dead = -1;
		/* every other episode, so that even a short run has one */
		if ((c->sc_faults & STRESS_F_DEAD) && episode % 2 == 0)
			dead = stress_faults_kill_one(f, &offlined);
		go = stress_faults_sleep(f, 1000 + tarn_rand_range(&f->sf_rand, 2000));
		if (go && (c->sc_faults & STRESS_F_SCRUB) && episode % 3 == 1) {
			int e = spa_scan_start(f->sf_spa, SPA_SCAN_SCRUB, 0);
			if (e == 0) {
				f->sf_st->st_scrubs++;
				stress_verbose(c, "faults: scrub");
				(void) stress_faults_scan_done(f);
			} else if (e != EBUSY) {
				stress_faults_fail(f, e, "scrub", "spa_scan_start");
			}
		}
		int e = stress_faults_heal(f, dead);
		if (e != 0 && f->sf_failed == 0)
			stress_faults_fail(f, e, "heal", "spa_vdev_wait");
		episode++;
		if (go)
			go = stress_faults_sleep(f, 200 + tarn_rand_range(&f->sf_rand, 800));
	}
	return (NULL);
}

void
stress_faults_start(stress_faulter_t *f, spa_t *spa, stress_stats_t *st)
{
	f->sf_spa = spa;
	f->sf_st = st;
	f->sf_stop = false;
	VERIFY0(pthread_create(&f->sf_tid, NULL, stress_faults_thread, f));
	f->sf_running = true;
}

int
stress_faults_stop(stress_faulter_t *f, char *err, size_t errlen)
{
	if (!f->sf_running)
		return (0);
	pthread_mutex_lock(&f->sf_lock);
	f->sf_stop = true;
	pthread_cond_broadcast(&f->sf_cv);
	pthread_mutex_unlock(&f->sf_lock);
	VERIFY0(pthread_join(f->sf_tid, NULL));
	f->sf_running = false;
	if (f->sf_failed != 0)
		snprintf(err, errlen, "%s", f->sf_err);
	return (f->sf_failed);
}

/*
 * After the workload: every device healthy, a final scrub that must find
 * nothing it cannot repair, an empty error log.  The caller verifies the
 * pool (spa_verify_all) afterwards.
 */
int
stress_faults_finish(stress_faulter_t *f, char *err, size_t errlen)
{
	const stress_cfg_t *c = f->sf_cfg;
	char perr[256] = "";
	for (int i = 0; i < stress_npaths(c); i++) {
		vdev_fault_set_rates(f->sf_vf[i], 0, 0, 0);
		vdev_fault_set_dead(f->sf_vf[i], false);
		stress_faults_count(f, i);
	}
	int e = spa_vdev_clear(f->sf_spa, NULL, perr, sizeof (perr));
	if (e == 0)
		e = spa_vdev_wait(f->sf_spa);
	if (e == 0)
		e = spa_scan_wait(f->sf_spa);
	if (e == 0)
		e = spa_scan_start(f->sf_spa, SPA_SCAN_SCRUB, 0);
	if (e != 0) {
		snprintf(err, errlen, "final scrub: %s %s", tarn_strerror(e), perr);
		return (e);
	}
	f->sf_st->st_scrubs++;
	e = stress_faults_scan_done(f);
	spa_scan_stat_t ss;
	spa_scan_get_stat(f->sf_spa, &ss);
	f->sf_st->st_errlog = spa_errlog_count(f->sf_spa);
	if (e != 0 || ss.sss_state != SPA_SCAN_STATE_FINISHED || ss.sss_errors != 0 ||
	    f->sf_st->st_errlog != 0) {
		snprintf(err, errlen, "final scrub: %s, state %" PRIu64 ", %" PRIu64
		    " unrepaired errors, %" PRIu64 " error log entries", tarn_strerror(e),
		    ss.sss_state, ss.sss_errors, f->sf_st->st_errlog);
		return (e ? e : SET_ERROR(ECKSUM));
	}
	return (0);
}
