/*
 * stress_run.h — tarn-stress's own pieces (not shared with the tests):
 * its configuration, statistics, the pool it builds from a layout, the
 * multi-threaded workload with periodic verification, and kill mode.
 */
#ifndef TARN_STRESS_RUN_H
#define TARN_STRESS_RUN_H

#include "stress.h"

#define STRESS_POOL_NAME "stress"
#define STRESS_OS_NAME   "stress"

typedef struct stress_cfg {
	uint64_t sc_seed;
	int      sc_threads;
	double   sc_seconds;       /* 0: no time limit */
	uint64_t sc_ops;           /* 0: no operation limit */
	char    *sc_dir;           /* owned */
	bool     sc_dir_made;      /* made by us: removed at the end */
	const char *sc_layout;
	uint64_t sc_devsize;
	int      sc_kills;
	bool     sc_fill;          /* -F: fill the pool, ENOSPC expected */
	int      sc_verbose;       /* -v: 1; -vv: 2 (every change is printed) */
	double   sc_verify_secs;   /* verify at least this often */
	uint64_t sc_verify_ops;    /* ... and every this many operations */
	/* derived from the layout (stress_layout_parse) */
	char   **sc_paths;
	int      sc_npaths;
	char   **sc_words;         /* "mirror /d/dev0 /d/dev1 ..." for the spec parser */
	int      sc_nwords;
	int      sc_maxparity;
	stress_limits_t sc_lim;    /* set by stress_limits_setup */
} stress_cfg_t;

typedef struct stress_stats {
	uint64_t st_ops, st_txs, st_bytes_written, st_bytes_checked, st_enospc;
	uint64_t st_verifies, st_txgs;
	uint64_t st_digest;        /* sum of the workers' operation digests */
	uint64_t st_rounds, st_kills, st_journaled, st_committed;
} stress_stats_t;

/* Fails the run: prints "tarn-stress: FAILED (seed S): ..." (stress.c). */
void stress_fail_msg(const stress_cfg_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void stress_verbose(const stress_cfg_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

int stress_layout_parse(stress_cfg_t *c, char *err, size_t errlen);
void stress_cfg_fini(stress_cfg_t *c);
int stress_devices_create(const stress_cfg_t *c, char *err, size_t errlen);
void stress_devices_remove(const stress_cfg_t *c);
int stress_pool_create(const stress_cfg_t *c, spa_t **spap, objset_t **osp,
    char *err, size_t errlen);
/* Import the pool on c's devices; read-only imports write nothing at all. */
int stress_pool_open(const stress_cfg_t *c, bool readonly, spa_t **spap, objset_t **osp,
    char *err, size_t errlen);
void stress_limits_setup(stress_cfg_t *c, spa_t *spa);
/*
 * Compare everything with the model and walk every block of the pool;
 * first (when sync_first) wait for a running resilver and for a sync of
 * what is dirty: spa_verify_all reports blocks that a sync moves under
 * it, so the pool must be quiet.
 */
int stress_verify_pool(const stress_cfg_t *c, spa_t *spa, objset_t *os,
    const stress_model_t *m, bool sync_first, stress_stats_t *st, const char *when,
    char *err, size_t errlen);
/*
 * Run the workload with c->sc_threads workers until `seconds` pass (0:
 * no limit) or `ops` operations are done (0: no limit), verifying every
 * c->sc_verify_secs / c->sc_verify_ops.  journal may be NULL.
 */
int stress_workload(const stress_cfg_t *c, spa_t *spa, objset_t *os, stress_model_t *m,
    double seconds, uint64_t ops, stress_journal_fn_t journal, void *jarg,
    stress_stats_t *st, char *err, size_t errlen);

int stress_run_normal(stress_cfg_t *c, stress_stats_t *st, char *err, size_t errlen);
int stress_run_kill(stress_cfg_t *c, stress_stats_t *st, char *err, size_t errlen);

#endif
