/*
 * stress_check.c — tarn-stress --keep and --check: leave a filled pool
 * behind for other tests (the pool-health e2e tests damage it and look),
 * and later compare whatever is left with what tarn-stress wrote.
 *
 * Theory.  Content is a pure function of (seed, object identity,
 * generation, offset), and with one thread the same seed and -n give the
 * same operations; but the object numbers the DMU hands out are not a
 * function of the seed (freed numbers are reused once their txg syncs,
 * so they depend on txg timing).  A --keep run therefore also records
 * every change it made, in the journal format of kill mode (stress.h),
 * in DIR/stress.journal, after a header line naming the seed and thread
 * count.  --check rebuilds the model from that journal (the seed comes
 * from the header: it must equal -s when -s is given), imports read-only
 * the pool on the other files of DIR (whatever it is called now) and
 * checks every object of the model one by one: an object whose blocks
 * cannot be read (EIO, checksum) is "unreadable", one that reads but
 * differs is a "mismatch"; both are listed and counted separately, and
 * objects that should not exist are mismatches too.
 */
#include "stress_run.h"

#include <dirent.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#define STRESS_JOURNAL_NAME "stress.journal"
#define STRESS_JOURNAL_HDR  "# tarn-stress --keep seed %" PRIu64 " threads %d\n"

typedef struct stress_keep_journal {
	FILE   *kj_f;
	pthread_mutex_t kj_lock;
	int     kj_err;
	bool    kj_trace;
} stress_keep_journal_t;

static void
stress_keep_write(void *arg, const stress_op_t *ops, int nops)
{
	stress_keep_journal_t *kj = arg;
	pthread_mutex_lock(&kj->kj_lock);
	for (int i = 0; i < nops; i++) {
		char line[256];
		VERIFY0(stress_op_format(&ops[i], line, sizeof (line)));
		if (fprintf(kj->kj_f, "%s\n", line) < 0)
			kj->kj_err = EIO;
		if (kj->kj_trace)
			printf("  %s\n", line);
	}
	pthread_mutex_unlock(&kj->kj_lock);
}

/* The journal for a --keep run; NULL (and err) when it cannot be made. */
void *
stress_keep_open(const stress_cfg_t *c, char *err, size_t errlen)
{
	char path[4096];
	snprintf(path, sizeof (path), "%s/%s", c->sc_dir, STRESS_JOURNAL_NAME);
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return (NULL);
	}
	stress_keep_journal_t *kj = tarn_alloc(sizeof (*kj));
	kj->kj_f = f;
	kj->kj_trace = c->sc_verbose >= 2;
	VERIFY0(pthread_mutex_init(&kj->kj_lock, NULL));
	fprintf(f, STRESS_JOURNAL_HDR, c->sc_seed, c->sc_threads);
	return (kj);
}

stress_journal_fn_t
stress_keep_fn(void)
{
	return (stress_keep_write);
}

/* Close the journal: 0, or EIO when something could not be written. */
int
stress_keep_close(void *arg, char *err, size_t errlen)
{
	stress_keep_journal_t *kj = arg;
	if (kj == NULL)
		return (0);
	int e = kj->kj_err;
	if (fclose(kj->kj_f) != 0)
		e = EIO;
	VERIFY0(pthread_mutex_destroy(&kj->kj_lock));
	tarn_free(kj);
	if (e != 0)
		snprintf(err, errlen, "cannot write the journal %s", STRESS_JOURNAL_NAME);
	return (e);
}

/* Rebuild the model from DIR/stress.journal. */
static int
stress_check_model(const stress_cfg_t *c, bool seeded, stress_model_t **mp, char *err,
    size_t errlen)
{
	char path[4096], line[1024];
	snprintf(path, sizeof (path), "%s/%s", c->sc_dir, STRESS_JOURNAL_NAME);
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		snprintf(err, errlen, "cannot read %s (left by a --keep run): %s", path,
		    strerror(errno));
		return (SET_ERROR(ENOENT));
	}
	uint64_t seed = 0, lineno = 1;
	int threads = 0, e = 0;
	if (fgets(line, sizeof (line), f) == NULL ||
	    sscanf(line, "# tarn-stress --keep seed %" SCNu64 " threads %d", &seed,
	    &threads) != 2 || threads < 1 || threads > 256) {
		fclose(f);
		snprintf(err, errlen, "%s: not a tarn-stress --keep journal", path);
		return (SET_ERROR(EINVAL));
	}
	if (seeded && seed != c->sc_seed) {
		fclose(f);
		snprintf(err, errlen, "the pool in %s was filled with seed %" PRIu64 ", not %"
		    PRIu64, c->sc_dir, seed, c->sc_seed);
		return (SET_ERROR(EINVAL));
	}
	stress_model_t *m = stress_model_create(seed, threads);
	while (e == 0 && fgets(line, sizeof (line), f) != NULL) {
		lineno++;
		line[strcspn(line, "\n")] = '\0';
		stress_op_t op;
		char aerr[512];
		if (stress_op_parse(line, &op) != 0) {
			snprintf(err, errlen, "%s line %" PRIu64 " is damaged", path, lineno);
			e = SET_ERROR(EINVAL);
		} else if (op.so_type != STRESS_OP_SYNCED && !op.so_failed &&
		    (e = stress_model_apply(m, &op, aerr, sizeof (aerr))) != 0) {
			snprintf(err, errlen, "%s line %" PRIu64 ": %s", path, lineno, aerr);
		}
	}
	fclose(f);
	if (e != 0) {
		stress_model_free(m);
		return (e);
	}
	*mp = m;
	return (0);
}

/* The regular files of DIR other than the journal: the pool's devices. */
static int
stress_check_devices(stress_cfg_t *c, char *err, size_t errlen)
{
	DIR *d = opendir(c->sc_dir);
	if (d == NULL) {
		snprintf(err, errlen, "cannot read directory %s: %s", c->sc_dir, strerror(errno));
		return (SET_ERROR(ENOENT));
	}
	for (int i = 0; i < stress_npaths(c); i++)
		tarn_free(stress_path(c, i));
	tarn_array_clear(&c->sc_paths);
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		char p[4096];
		struct stat st;
		snprintf(p, sizeof (p), "%s/%s", c->sc_dir, de->d_name);
		if (strcmp(de->d_name, STRESS_JOURNAL_NAME) == 0 || stat(p, &st) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		TARN_ARRAY_APPEND(&c->sc_paths, char *, tarn_strdup(p));
	}
	closedir(d);
	if (stress_npaths(c) == 0) {
		snprintf(err, errlen, "no device files in %s", c->sc_dir);
		return (SET_ERROR(ENOENT));
	}
	return (0);
}

/* Check every object of m in os; count and list the bad ones. */
static void
stress_check_objects(const stress_cfg_t *c, objset_t *os, const stress_model_t *m,
    stress_stats_t *st, uint64_t *unreadable, uint64_t *mismatched)
{
	for (int i = 0; i < m->sm_nowners; i++) {
		const stress_owner_t *ow = &m->sm_own[i];
		for (int j = 0; j < stress_owner_nobjs(ow); j++) {
			char msg[768];
			uint64_t bytes = 0;
			int e = stress_obj_verify(os, m, stress_owner_obj(ow, j), 4 * MiB, &bytes,
			    msg, sizeof (msg));
			st->st_bytes_checked += bytes;
			if (e == 0)
				continue;
			if (e == STRESS_EMISMATCH) {
				(*mismatched)++;
				printf("tarn-stress: mismatch: %s\n", msg);
			} else {
				(*unreadable)++;
				printf("tarn-stress: unreadable: %s\n", msg);
			}
		}
	}
	char msg[768];
	if (stress_model_check_extra(os, m, msg, sizeof (msg)) != 0) {
		(*mismatched)++;
		printf("tarn-stress: mismatch: %s\n", msg);
	}
	(void) c;
}

/*
 * --check: 0 when every object reads back as written; STRESS_EMISMATCH
 * (err says how many) when some do not; another errno when the pool or
 * the journal cannot be read at all.
 */
int
stress_run_check(stress_cfg_t *c, bool seeded, stress_stats_t *st, char *err, size_t errlen)
{
	stress_model_t *m = NULL;
	int e = stress_check_model(c, seeded, &m, err, errlen);
	if (e == 0)
		e = stress_check_devices(c, err, errlen);
	if (e != 0) {
		stress_model_free(m);
		return (e);
	}
	spa_t *spa = NULL;
	objset_t *os = NULL;
	e = stress_pool_open(c, true, &spa, &os, err, errlen);
	if (e != 0) {
		stress_model_free(m);
		return (e);
	}
	uint64_t unreadable = 0, mismatched = 0;
	stress_check_objects(c, os, m, st, &unreadable, &mismatched);
	uint64_t nobj = stress_model_objects(m);
	printf("tarn-stress: check of pool '%s' in %s: %" PRIu64 " objects, %" PRIu64
	    " unreadable, %" PRIu64 " mismatched\n", spa_name(spa), c->sc_dir, nobj,
	    unreadable, mismatched);
	spa_close(spa);
	stress_model_free(m);
	if (unreadable + mismatched != 0) {
		snprintf(err, errlen, "%" PRIu64 " objects could not be read, %" PRIu64
		    " differ from the model", unreadable, mismatched);
		return (SET_ERROR(STRESS_EMISMATCH));
	}
	return (0);
}
