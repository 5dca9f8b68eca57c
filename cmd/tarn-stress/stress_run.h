/*
 * stress_run.h — tarn-stress's own pieces (not shared with the tests):
 * its configuration, statistics, the pool it builds from a layout, the
 * multi-threaded workload with periodic verification, and kill mode.
 */
#ifndef TARN_STRESS_RUN_H
#define TARN_STRESS_RUN_H

#include "stress.h"
#include "tarn_array.h"

#define STRESS_POOL_NAME "stress"
#define STRESS_OS_NAME   "stress"

/* One top-level group of the layout: paths [sg_first, sg_first + sg_n). */
typedef struct stress_group {
	int      sg_first, sg_n;
	int      sg_tol;           /* devices that may fail at once: parity, mirror n-1 */
} stress_group_t;

/* -f: which faults the fault thread injects (stress_faults.c). */
#define STRESS_F_BITFLIP 0x1
#define STRESS_F_EIO     0x2
#define STRESS_F_DEAD    0x4
#define STRESS_F_SCRUB   0x8
#define STRESS_F_ALL     0xf

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
	tarn_array_t sc_paths;     /* char *: stress_path, stress_npaths */
	tarn_array_t sc_words;     /* char *: "mirror /d/dev0 /d/dev1 ..." for the spec parser */
	int      sc_maxparity;
	tarn_array_t sc_groups;    /* stress_group_t: stress_group, stress_ngroups */
	unsigned sc_faults;        /* -f: STRESS_F_* (0: none) */
	bool     sc_keep;          /* --keep: export the pool and keep the devices */
	bool     sc_check;         /* --check: verify a kept pool against the model */
	stress_limits_t sc_lim;    /* set by stress_limits_setup */
} stress_cfg_t;

/* Device path i of the layout (0 <= i < stress_npaths(c)). */
static inline char *
stress_path(const stress_cfg_t *c, int i)
{
	return (TARN_ARRAY_AT(&c->sc_paths, char *, i));
}

static inline int
stress_npaths(const stress_cfg_t *c)
{
	return ((int)tarn_array_len(&c->sc_paths));
}

/* Top-level group g of the layout (0 <= g < stress_ngroups(c)). */
static inline const stress_group_t *
stress_group(const stress_cfg_t *c, int g)
{
	return (&TARN_ARRAY_AT(&c->sc_groups, stress_group_t, g));
}

static inline int
stress_ngroups(const stress_cfg_t *c)
{
	return ((int)tarn_array_len(&c->sc_groups));
}

typedef struct stress_stats {
	uint64_t st_ops, st_txs, st_bytes_written, st_bytes_checked, st_enospc;
	uint64_t st_verifies, st_txgs;
	uint64_t st_digest;        /* sum of the workers' operation digests */
	uint64_t st_rounds, st_kills, st_journaled, st_committed;
	/* -f */
	uint64_t st_faults;        /* device episodes with bit flips / read EIO */
	uint64_t st_dead;          /* devices that disappeared and came back */
	uint64_t st_scrubs, st_resilvers;
	uint64_t st_ck_errors, st_read_errors;   /* leaves' counters, summed */
	uint64_t st_repaired;      /* bytes repaired by scans */
	uint64_t st_errlog;        /* error log entries after the final scrub */
} stress_stats_t;

/* Fails the run: prints "tarn-stress: FAILED (seed S): ..." (stress.c). */
void stress_fail_msg(const stress_cfg_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void stress_verbose(const stress_cfg_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

int stress_layout_parse(stress_cfg_t *c, char *err, size_t errlen);
/* All zero but the (empty) arrays; stress_cfg_fini frees what was derived. */
void stress_cfg_init(stress_cfg_t *c);
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

/*
 * Fault injection (stress_faults.c): attach an injector to every device
 * (before the pool opens), run the fault thread around the workload,
 * and at the end heal everything, scrub, and check nothing was lost.
 */
typedef struct stress_faulter stress_faulter_t;
int stress_faults_parse(const char *arg, unsigned *mask);
/* The -f argument for mask ("all" or "bitflip,eio,...") into buf. */
void stress_faults_name(unsigned mask, char *buf, size_t len);
stress_faulter_t *stress_faults_attach(const stress_cfg_t *c);
void stress_faults_start(stress_faulter_t *f, spa_t *spa, stress_stats_t *st);
int stress_faults_stop(stress_faulter_t *f, char *err, size_t errlen);
int stress_faults_finish(stress_faulter_t *f, char *err, size_t errlen);
void stress_faults_detach(stress_faulter_t *f);

/* --keep and --check (stress_check.c). */
void *stress_keep_open(const stress_cfg_t *c, char *err, size_t errlen);
stress_journal_fn_t stress_keep_fn(void);
int stress_keep_close(void *kj, char *err, size_t errlen);
int stress_run_check(stress_cfg_t *c, bool seeded, stress_stats_t *st, char *err,
    size_t errlen);
int stress_run_normal(stress_cfg_t *c, stress_stats_t *st, char *err, size_t errlen);
int stress_run_kill(stress_cfg_t *c, stress_stats_t *st, char *err, size_t errlen);

#endif
