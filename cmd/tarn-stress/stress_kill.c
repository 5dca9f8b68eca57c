/*
 * stress_kill.c — kill mode (-k KILLS): SIGKILL the workload at random
 * instants and check that the pool imports in a committed state.
 *
 * Theory.  The parent creates the pool and then, for each round, forks a
 * child that opens the pool and runs the workload.  Every tx's records
 * (stress.h) are appended to DIR/journal, one line each and all lines of
 * a tx in one write() on an O_APPEND file, after the changes are made
 * and before the tx commits; a worker that waited for a sync appends an
 * "S" line with the txg it saw synced (fdatasync'd).  At a random instant
 * (from the seed) the parent SIGKILLs the child, imports the pool itself
 * read-only (so that nothing runs behind the check) and reads U, the txg of the uberblock the import chose (spa_loaded_txg;
 * the pool may sync more txgs at once).  Then:
 *   - U is at least every txg of an "S" line (a synced txg is not lost),
 *     and, if the child finished by itself, at least every record's txg;
 *   - the journal records with txg <= U, applied in file order to the
 *     model of the previous round, give the model of txg U, and the pool
 *     must match it exactly (records with txg > U must have no effect);
 *   - every block of the pool verifies.
 * A record with txg <= U is always in the file: txg U cannot sync before
 * each of its txs committed, and each wrote its lines before that.  Lines
 * written survive SIGKILL (they are in the page cache; only a power cut
 * would need them fsync'd; that case is the in-process power-cut test's).
 * With several threads the file order is still right: the changes to one
 * object come from its owner in program order, and an object number is
 * reused only after the free that released it has synced, so the free's
 * line is older than the allocation's.  The next child continues from the
 * model of txg U on the same pool, with a new random stream per round.
 */
#include "stress_run.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct stress_journal {
	int      sj_fd;
	const stress_cfg_t *sj_cfg;
} stress_journal_t;

/* Child: append one tx's records (or an S line) to the journal. */
static void
stress_journal_write(void *arg, const stress_op_t *ops, int nops)
{
	stress_journal_t *j = arg;
	char buf[4096];
	size_t len = 0;
	for (int i = 0; i < nops; i++) {
		VERIFY0(stress_op_format(&ops[i], buf + len, sizeof (buf) - len - 1));
		len += strlen(buf + len);
		buf[len++] = '\n';
	}
	ssize_t n = write(j->sj_fd, buf, len);
	if (n < 0 || (size_t)n != len || (ops[0].so_type == STRESS_OP_SYNCED &&
	    fdatasync(j->sj_fd) != 0)) {
		stress_fail_msg(j->sj_cfg, "cannot write the journal: %s", strerror(errno));
		fflush(stdout);
		_exit(1);
	}
}

/* The child's life: open the pool, work until killed (or done), close. */
static _Noreturn void
stress_child(const stress_cfg_t *c, stress_model_t *m, int round, int jfd,
    double seconds, uint64_t ops)
{
	char err[1024];
	spa_t *spa = NULL;
	objset_t *os = NULL;
	stress_stats_t st;
	memset(&st, 0, sizeof (st));
	int e = stress_pool_open(c, false, &spa, &os, err, sizeof (err));
	if (e == 0) {
		stress_journal_t j = { jfd, c };
		stress_cfg_t cc = *c;
		cc.sc_seed = c->sc_seed + (uint64_t)round * 1000003ULL;  /* new ops each round */
		e = stress_workload(&cc, spa, os, m, seconds, ops, stress_journal_write, &j, &st,
		    err, sizeof (err));
		if (e == 0)
			spa_close(spa);
		else
			spa_abandon(spa);
	}
	if (e != 0)
		stress_fail_msg(c, "round %d (child %d): %s", round, (int)getpid(), err);
	fflush(stdout);
	_exit(e != 0 ? 1 : 0);
}

/*
 * Wait `at` seconds for the child, then SIGKILL it; reap it.  *killed says
 * whether our signal ended it.  An exit status other than 0, or another
 * signal, is a failure of the child.
 */
static int
stress_reap(const stress_cfg_t *c, pid_t pid, double at, bool *killed, double *secs,
    char *err, size_t errlen)
{
	uint64_t t0 = tarn_now_ns(), until = t0 + (uint64_t)(at * 1e9);
	int status = 0;
	pid_t w = 0;
	*killed = false;
	while ((w = waitpid(pid, &status, WNOHANG)) == 0 && tarn_now_ns() < until) {
		struct timespec ts = { 0, 2 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	if (w == 0) {
		VERIFY0(kill(pid, SIGKILL));
		*killed = true;
		w = waitpid(pid, &status, 0);
	}
	*secs = (double)(tarn_now_ns() - t0) / 1e9;
	if (w != pid) {
		snprintf(err, errlen, "waitpid: %s", strerror(errno));
		return (SET_ERROR(ECHILD));
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && *killed)
		return (0);
	*killed = false;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return (0);
	if (WIFEXITED(status))
		snprintf(err, errlen, "the workload process failed (exit %d; see above)",
		    WEXITSTATUS(status));
	else
		snprintf(err, errlen, "the workload process died of signal %d (%s)",
		    WTERMSIG(status), strsignal(WTERMSIG(status)));
	return (SET_ERROR(ECHILD));
}

typedef struct stress_replay {
	uint64_t sr_records, sr_committed, sr_max_synced, sr_max_txg;
} stress_replay_t;

/* Apply the journal's records with txg <= U to m; count the rest. */
static int
stress_replay(const char *path, stress_model_t *m, uint64_t U, stress_replay_t *rp,
    char *err, size_t errlen)
{
	memset(rp, 0, sizeof (*rp));
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		snprintf(err, errlen, "cannot read the journal %.300s: %s", path, strerror(errno));
		return (SET_ERROR(EIO));
	}
	char line[1024];
	int e = 0;
	uint64_t lineno = 0;
	while (e == 0 && fgets(line, sizeof (line), f) != NULL) {
		lineno++;
		size_t n = strlen(line);
		if (n == 0 || line[n - 1] != '\n')
			break;          /* the last line, cut short by the kill */
		line[n - 1] = '\0';
		stress_op_t op;
		if (stress_op_parse(line, &op) != 0) {
			snprintf(err, errlen, "journal line %" PRIu64 " is damaged: '%s'", lineno, line);
			e = SET_ERROR(EINVAL);
			break;
		}
		if (op.so_type == STRESS_OP_SYNCED) {
			rp->sr_max_synced = MAX(rp->sr_max_synced, op.so_txg);
			continue;
		}
		rp->sr_records++;
		rp->sr_max_txg = MAX(rp->sr_max_txg, op.so_txg);
		if (op.so_txg > U)
			continue;
		char aerr[512];
		e = stress_model_apply(m, &op, aerr, sizeof (aerr));
		if (e != 0)
			snprintf(err, errlen, "journal line %" PRIu64 " (txg %" PRIu64 " <= imported "
			    "txg %" PRIu64 "): %s", lineno, op.so_txg, U, aerr);
		else
			rp->sr_committed++;
	}
	fclose(f);
	return (e);
}

/* Parent, after the child is gone: import, replay, compare, close. */
static int
stress_check_round(const stress_cfg_t *c, stress_model_t *m, const char *jpath, int round,
    bool killed, double secs, uint64_t *last_u, stress_stats_t *st, char *err, size_t errlen)
{
	spa_t *spa = NULL;
	objset_t *os = NULL;
	char e2[900];
	/* read-only: judge exactly what is on disk; the next child imports read-write */
	int e = stress_pool_open(c, true, &spa, &os, e2, sizeof (e2));
	if (e != 0) {
		snprintf(err, errlen, "round %d: after the %s: %s", round,
		    killed ? "kill" : "workload ended", e2);
		return (e);
	}
	/* the txg import chose (the pool may sync more at once: labels, resilver) */
	uint64_t U = spa_loaded_txg(spa);
	stress_replay_t rp;
	e = stress_replay(jpath, m, U, &rp, e2, sizeof (e2));
	if (e == 0 && (U < rp.sr_max_synced || U < *last_u)) {
		snprintf(e2, sizeof (e2), "the pool imported at txg %" PRIu64 " but txg %" PRIu64
		    " was already on disk", U, MAX(rp.sr_max_synced, *last_u));
		e = SET_ERROR(STRESS_EMISMATCH);
	}
	if (e == 0 && !killed && U < rp.sr_max_txg) {
		snprintf(e2, sizeof (e2), "the workload closed the pool but it imported at txg %"
		    PRIu64 ", before the last change (txg %" PRIu64 ")", U, rp.sr_max_txg);
		e = SET_ERROR(STRESS_EMISMATCH);
	}
	char when[64];
	snprintf(when, sizeof (when), "import at txg %" PRIu64, U);
	if (e == 0)
		e = stress_verify_pool(c, spa, os, m, false, st, when, e2, sizeof (e2));
	if (e != 0) {
		snprintf(err, errlen, "round %d (%s after %.2f s): %s", round,
		    killed ? "killed" : "finished", secs, e2);
		spa_abandon(spa);
		return (e);
	}
	stress_verbose(c, "round %d: %s after %.2f s; imported txg %" PRIu64 " (child saw %"
	    PRIu64 " synced); %" PRIu64 " records journaled, %" PRIu64 " committed", round,
	    killed ? "killed" : "finished", secs, U, rp.sr_max_synced, rp.sr_records,
	    rp.sr_committed);
	st->st_journaled += rp.sr_records;
	st->st_committed += rp.sr_committed;
	st->st_ops += rp.sr_committed;
	*last_u = U;
	spa_close(spa);
	return (0);
}

/* Threads of this process (/proc/self/task); 0 when unknown. */
static int
stress_thread_count(void)
{
	DIR *d = opendir("/proc/self/task");
	if (d == NULL)
		return (0);
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return (n);
}

int
stress_run_kill(stress_cfg_t *c, stress_stats_t *st, char *err, size_t errlen)
{
	spa_t *spa = NULL;
	objset_t *os = NULL;
	int e = stress_devices_create(c, err, errlen);
	if (e == 0)
		e = stress_pool_create(c, &spa, &os, err, errlen);
	if (e != 0)
		return (e);
	stress_limits_setup(c, spa);
	uint64_t txg0 = spa_last_synced_txg(spa), last_u = txg0;
	spa_close(spa);     /* no threads may live across fork() */

	stress_model_t *m = stress_model_create(c->sc_seed, c->sc_threads);
	tarn_rand_t kr;
	tarn_rand_seed(&kr, c->sc_seed ^ 0x6b696c6c6b696c6cULL);
	double round_s = (c->sc_seconds > 0 ? c->sc_seconds : 10.0) / c->sc_kills;
	uint64_t round_ops = c->sc_ops ? MAX(c->sc_ops / (uint64_t)c->sc_kills, 1) : 0;
	char jpath[1024];
	snprintf(jpath, sizeof (jpath), "%s/journal", c->sc_dir);
	for (int r = 1; r <= c->sc_kills && e == 0; r++) {
		int jfd = open(jpath, O_CREAT | O_TRUNC | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
		if (jfd < 0) {
			snprintf(err, errlen, "cannot create %s: %s", jpath, strerror(errno));
			e = SET_ERROR(EIO);
			break;
		}
		/* kill somewhere in the round, sometimes after the child has finished */
		double at = round_s * (0.05 + 1.25 * (double)tarn_rand_range(&kr, 1000000) / 1e6);
		int nthr = stress_thread_count();
		if (nthr > 1)       /* a closed pool should leave no thread behind */
			fprintf(stderr, "tarn-stress: warning: %d threads alive at fork (round %d)\n",
			    nthr, r);
		fflush(stdout);
		fflush(stderr);
		pid_t pid = fork();
		if (pid < 0) {
			snprintf(err, errlen, "fork: %s", strerror(errno));
			(void) close(jfd);
			e = SET_ERROR(EAGAIN);
			break;
		}
		if (pid == 0)
			stress_child(c, m, r, jfd, round_s * 1.2, round_ops);
		(void) close(jfd);
		bool killed;
		double secs;
		e = stress_reap(c, pid, at, &killed, &secs, err, errlen);
		if (e == 0) {
			st->st_rounds++;
			st->st_kills += killed;
			e = stress_check_round(c, m, jpath, r, killed, secs, &last_u, st, err, errlen);
		}
	}
	st->st_txgs = last_u - txg0;
	if (e == 0)
		(void) unlink(jpath);
	stress_model_free(m);
	return (e);
}
