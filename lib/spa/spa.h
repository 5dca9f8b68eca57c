/*
 * spa.h — the storage pool: create, open, import, export and destroy a
 * pool; its configuration (labels, cache file); its MOS (meta object set)
 * holding the metaslab space maps, the deferred-free log and the
 * pool directory; and the sync that ends every txg with the uberblock.
 * Theory: the comments at the top of spa.c (lifecycle) and spa_sync.c.
 */
#ifndef TARN_SPA_H
#define TARN_SPA_H

#include "tarn_util.h"
#include "format.h"
#include "vdev.h"
#include "space.h"
#include "zio.h"
#include "dmu.h"
#include "zil.h"

typedef struct spa spa_t;

#define SPA_NAME_MAX 255

/* ---- vdev specs, as zpool create takes them (spa_config.c) ---- */

typedef struct spa_vdev_spec {
	vdev_type_t type;          /* ROOT, MIRROR, RAIDZ, FILE, DISK */
	int         nparity;       /* RAIDZ: 1..3 */
	vdev_alloc_bias_t bias;    /* top-level: normal, log or special */
	bool        cache;         /* root's child: a cache device (a leaf) */
	char       *path;          /* leaves: absolute path */
	int         nchildren;
	struct spa_vdev_spec **children;
} spa_vdev_spec_t;

/*
 * Parse "mirror a b raidz2 c d e f g" into a ROOT spec.  Words without a
 * '/' name /dev/WORD.  The class keywords "log", "special" and "cache"
 * make the vdevs after them (up to the next class keyword) log or
 * special top-level vdevs (bias) or cache devices (cache: single devices
 * only; log: no raidz).  On error a one-line message goes to err.
 */
int spa_vdev_spec_parse(int argc, char *const argv[], spa_vdev_spec_t **specp,
    char *err, size_t errlen);
void spa_vdev_spec_free(spa_vdev_spec_t *spec);

/* Pool names: letters, digits, '_', '-', '.', ':'; begins with a letter;
 * not "mirror", "raidz*", "spare", "log", "cache".  0 or EINVAL (+ message). */
int spa_name_validate(const char *name, char *err, size_t errlen);

/* ---- the cache file: pools this host has imported ---- */

/* Path: $TARN_CACHEFILE, else /etc/tarn/tarn.cache.  "none" disables. */
const char *spa_cachefile_path(void);
typedef struct spa_cache_entry {
	char     sce_name[SPA_NAME_MAX + 1];
	uint64_t sce_guid;
	int      sce_npaths;
	char   **sce_paths;        /* leaf paths as last seen */
} spa_cache_entry_t;
int spa_cache_read(spa_cache_entry_t **ents, int *n);
/*
 * Parse a cache file's text (len bytes; need not be NUL-terminated);
 * `file` names it in warnings.  Bad lines are warned about and skipped,
 * never fatal.  What spa_cache_read does after reading; for fuzzing.
 */
void spa_cache_parse(const char *file, const char *text, size_t len,
    spa_cache_entry_t **ents, int *n);
/* The entries as a cache file's text, NUL-terminated (caller tarn_frees). */
char *spa_cache_render(const spa_cache_entry_t *ents, int n, size_t *lenp);
void spa_cache_free(spa_cache_entry_t *ents, int n);
int spa_cache_add(spa_t *spa);                 /* add or replace */
/*
 * Add (or replace) a pool not open yet, as import found it: name, GUID
 * and the leaves of its tree.  Import lists a pool before it marks the
 * labels active, so that a crash in between leaves a pool the next start
 * opens, never one that is active on disk yet unknown to this host.
 */
int spa_cache_add_found(const char *name, uint64_t guid, const vdev_t *tree);
int spa_cache_remove(const char *name);

/* ---- lifecycle ---- */

typedef struct spa_create_opts {
	uint64_t sco_ashift;       /* 0: from the device sector size */
	bool     sco_force;        /* -f: mismatched sizes, in-use labels */
	uint64_t sco_version;      /* 0: current */
	bool     sco_no_cache;     /* do not record in the cache file */
	dmu_pool_opts_t sco_dmu;
} spa_create_opts_t;

/*
 * Create and open a pool.  Every device is checked before anything is
 * written: exists, big enough (SPA_MINDEVSIZE), not given twice, not part
 * of an active/exported pool (unless force), sizes match within a group
 * (unless force), enough devices for the group type.  Errors come back as
 * an errno and a one-line message naming the device.
 */
int spa_create(const char *name, const spa_vdev_spec_t *spec,
    const spa_create_opts_t *opts, spa_t **spap, char *err, size_t errlen);

#define SPA_OPEN_READONLY  0x01   /* no writes at all (status, list) */
#define SPA_OPEN_NOVERIFY  0x02   /* skip the metadata walk at import */

typedef struct spa_import_opts {
	int      sio_flags;        /* SPA_OPEN_* */
	bool     sio_force;        /* import even if not exported */
	uint64_t sio_rewind_txg;   /* 0: newest; else the newest txg <= this */
	bool     sio_no_cache;
	const char *sio_newname;   /* import under another name */
	bool     sio_missing_log;  /* -m: import without missing log vdevs */
	dmu_pool_opts_t sio_dmu;
} spa_import_opts_t;

/* What import sees on the devices. */
typedef struct spa_import_cand {
	char     sic_name[SPA_NAME_MAX + 1];
	uint64_t sic_guid;
	uint64_t sic_txg;
	pool_state_t sic_state;
	vdev_t  *sic_tree;         /* with paths where found, MISSING otherwise */
	bool     sic_can_open;     /* enough devices present (log vdevs aside) */
	bool     sic_missing_log;  /* a log vdev cannot open: only with -m */
	char     sic_missing_name[256]; /* the first such log device (its path) */
} spa_import_cand_t;

/* Scan dirs (NULL: /dev) for Tarn labels, grouped into pools. */
int spa_import_scan(const char *const *dirs, int ndirs, spa_import_cand_t **cands, int *n);
void spa_import_cands_free(spa_import_cand_t *cands, int n);
/* Import the pool named (or whose GUID is) `which`, found in dirs. */
int spa_import(const char *which, const char *const *dirs, int ndirs,
    const spa_import_opts_t *opts, spa_t **spap, char *err, size_t errlen);
/*
 * Open an imported pool by name (cache file), or the pool on `paths`
 * directly when paths is non-NULL (tests, tarn-stress).
 */
int spa_open(const char *name, int flags, spa_t **spap, char *err, size_t errlen);
/* The same with the dmu's options (e.g. the daemon's shared ARC); NULL: defaults. */
int spa_open_opts(const char *name, int flags, const dmu_pool_opts_t *dpo, spa_t **spap,
    char *err, size_t errlen);
int spa_open_paths(const char *const *paths, int npaths, const spa_import_opts_t *opts,
    spa_t **spap, char *err, size_t errlen);
/* Sync and close, leaving the pool imported (labels ACTIVE). */
void spa_close(spa_t *spa);
/*
 * Close without syncing or writing anything more (after a simulated
 * power cut: the devices are dead).
 */
void spa_abandon(spa_t *spa);
/* Sync, mark the labels EXPORTED, close, drop from the cache file. */
int spa_export(spa_t *spa);
/* Mark the labels DESTROYED, close, drop from the cache file. */
int spa_destroy(spa_t *spa);

/* ---- what the pool holds ---- */

const char *spa_name(const spa_t *spa);
uint64_t spa_guid(const spa_t *spa);
vdev_t *spa_root_vdev(spa_t *spa);
dmu_pool_t *spa_dmu_pool(spa_t *spa);
objset_t *spa_meta_objset(spa_t *spa);
uint64_t spa_version(const spa_t *spa);
uint64_t spa_last_synced_txg(spa_t *spa);
/* When the pool was opened (tarn_now_ns clock): iostat's first interval. */
uint64_t spa_open_time(const spa_t *spa);
/* The txg whose uberblock was loaded at open/import (0 for a new pool). */
uint64_t spa_loaded_txg(const spa_t *spa);
bool spa_readonly(const spa_t *spa);
vdev_state_t spa_state(spa_t *spa);          /* root vdev state */
/*
 * 0, or the error of the txg sync that suspended the pool: nothing more
 * is written until it is exported and imported again.
 */
int spa_suspended(spa_t *spa);
uint64_t spa_create_time(const spa_t *spa);

typedef struct spa_space {
	uint64_t ss_size;          /* allocatable bytes (all top-level vdevs) */
	uint64_t ss_alloc;         /* in use, including frees not yet matured */
	uint64_t ss_free;          /* allocatable now (size = alloc + free) */
	uint64_t ss_deferred;      /* part of alloc: freed, allocatable in a few txgs */
	uint64_t ss_slop;          /* reserve kept for frees and metadata */
} spa_space_t;
void spa_get_space(spa_t *spa, spa_space_t *out);

/* ---- allocation classes and cache devices (spa_class.c) ---- */

/*
 * The space of one allocation class: NORMAL is the pool's data space
 * (what spa_get_space answers); LOG and SPECIAL that of those vdevs
 * (ss_slop 0).  zpool list shows normal + special as the pool's size.
 */
void spa_class_space(spa_t *spa, vdev_alloc_bias_t bias, spa_space_t *out);
/*
 * zpool remove POOL DEVICE: a cache device or an unused hot spare (at
 * once), or a log vdev (by its leaf or "mirror-N"), after a sync has
 * freed its intent-log blocks; special and data vdevs are refused
 * (ENOTSUP), an unknown name is ENOENT.  One-line message in err.
 */
int spa_vdev_remove(spa_t *spa, const char *name, char *err, size_t errlen);

/*
 * Cache devices, for the L2ARC.  spa_l2cache_count / spa_l2cache_leaf
 * list them (leaves: vdev_fd, vdev_path, vdev_psize, vdev_stat; I/O by
 * vdev_read / vdev_write on the leaf itself, offsets in its allocatable
 * space, which the labels do not overlap); the pointers stay valid
 * while spa_vdev_hold is held, or between the hooks' added and
 * removing calls for a leaf.  The hooks (set once, e.g. when the L2ARC
 * attaches to the pool; spa_vdev_lock held in the calls, which must not
 * block on I/O of the pool) hear of each cache device that is opened
 * (pool start, add) and of each about to be closed (remove; pool close
 * does not call them: the L2ARC detaches first).
 */
typedef struct spa_l2cache_hooks {
	void (*slh_added)(void *arg, vdev_t *leaf);
	void (*slh_removing)(void *arg, vdev_t *leaf);
} spa_l2cache_hooks_t;
void spa_l2cache_set_hooks(spa_t *spa, const spa_l2cache_hooks_t *hooks, void *arg);
int spa_l2cache_count(spa_t *spa);
/*
 * The L2ARC on the cache devices (spa_l2arc.c): its statistics (ENOENT,
 * zeros: the pool has none yet), and how fast it may write: for this
 * pool, and for the pools opened from now on (0: the default).
 */
int spa_l2arc_stats(spa_t *spa, l2arc_stats_t *out);
void spa_l2arc_set_write_max(spa_t *spa, uint64_t bytes_per_sec);
void spa_l2arc_set_default_write_max(uint64_t bytes_per_sec);
vdev_t *spa_l2cache_leaf(spa_t *spa, int i);

/*
 * The pool directory (a ZAP in the MOS) names the pool's top objects;
 * upper layers keep their roots there (e.g. the root dataset).
 */
int spa_dir_lookup(spa_t *spa, const char *name, uint64_t *obj);
int spa_dir_add(spa_t *spa, const char *name, uint64_t obj, dmu_tx_t *tx);

/*
 * Walk every block of the pool (MOS and every registered object set)
 * reading and verifying it; *errors counts blocks that did not verify.
 */
int spa_verify_all(spa_t *spa, bool data, uint64_t *blocks, uint64_t *errors);

/* Object sets stored in the pool other than the MOS (datasets, test sets). */
int spa_objset_create(spa_t *spa, const char *name, dmu_objset_type_t type, objset_t **osp);
int spa_objset_open(spa_t *spa, const char *name, objset_t **osp);
/*
 * The intent log of a file-system object set opened through the pool
 * (NULL for other types, or when the pool lacks the intent_log feature:
 * fsync then syncs a txg).  Lives until the pool closes.
 */
zil_t *spa_objset_zil(spa_t *spa, objset_t *os);
/* Open every object set of the pool directory; fn(spa, os, arg) each (os
 * NULL when it could not be opened). */
typedef int (*spa_objset_fn_t)(spa_t *spa, objset_t *os, void *arg);
int spa_foreach_objset(spa_t *spa, spa_objset_fn_t fn, void *arg);
/*
 * Added for lib/dsl (dataset destroy): forget a registered object set —
 * close it, drop its pool-directory entry and free its MOS object.  The
 * caller has freed every object in it and waited for that to sync (so
 * the object set is clean); its root block is freed by the next sync.
 * ENOENT if no such object set; EBUSY if it is still dirty.
 */
int spa_objset_destroy(spa_t *spa, const char *name);
/* ---- sync tasks and the dataset layer's hooks (spa_task.c; for lib/dsl) ---- */

/*
 * Run fn(arg, tx) in syncing context of the open txg — in its first pass,
 * after the object sets have written their blocks and before the MOS is
 * written — and wait until that txg is on disk.  Returns fn's result, or
 * the sync's error (the pool suspended).  fn must not wait for a txg nor
 * take locks a txg waiter may hold (lib/dsl's dp_lock).  Everything fn
 * changes lands in that one txg: a task is all or nothing.
 */
typedef int (*spa_sync_task_fn_t)(void *arg, dmu_tx_t *tx);
int spa_sync_task(spa_t *spa, spa_sync_task_fn_t fn, void *arg);
/* How many sync tasks have run (a cache of what only tasks change keys on it). */
uint64_t spa_sync_task_gen(spa_t *spa);

/* A root the scan must also walk (a snapshot): fn(arg, name, bp, min_txg). */
typedef int (*spa_root_fn_t)(void *arg, const char *name, const blkptr_t *bp,
    uint64_t min_txg);
typedef struct spa_dsl_hooks {
	/* An object set registered under name was opened (set its snapshot txg). */
	void (*sdh_opened)(spa_t *spa, const char *name, objset_t *os);
	/*
	 * Syncing context: object set name has dead blocks (dmu_objset_dead_take)
	 * after its sync in tx's txg; record them.
	 */
	int (*sdh_synced)(spa_t *spa, const char *name, objset_t *os, dmu_tx_t *tx);
	/* Visit every other root of the datasets in mos (a committed MOS: scans). */
	int (*sdh_roots)(spa_t *spa, objset_t *mos, spa_root_fn_t fn, void *arg);
} spa_dsl_hooks_t;
/* Install the hooks; true the first time for this pool (open object sets need catching up). */
bool spa_set_dsl_hooks(spa_t *spa, const spa_dsl_hooks_t *hooks);

/*
 * Syncing context: register a new object set `name` whose root is bp
 * (a clone's first root), or set the root of a registered one that is
 * not open (rollback; spa_objset_evict first).
 */
int spa_objset_register_sync(spa_t *spa, const char *name, const blkptr_t *bp, dmu_tx_t *tx);
int spa_objset_set_root_sync(spa_t *spa, const char *name, const blkptr_t *bp, dmu_tx_t *tx);
/* The root of registered object set name as last written.  ENOENT. */
int spa_objset_root(spa_t *spa, const char *name, blkptr_t *bp);
/*
 * Close the open object set name and forget it (the registration stays;
 * the next spa_objset_open reads it again).  EBUSY while it has unsynced
 * changes.  The caller has closed its users.
 */
int spa_objset_evict(spa_t *spa, const char *name);
/* The open object set registered as name, or NULL (nothing is opened). */
objset_t *spa_objset_find(spa_t *spa, const char *name);

/*
 * Added for lib/dsl: bytes new data may still use (after the slop
 * reserve and RAID-Z parity), as the dmu's ENOSPC check sees it.
 */
uint64_t spa_get_avail(spa_t *spa);

/* ---- scrub and resilver (spa_scan.c) ---- */

typedef enum spa_scan_func {
	SPA_SCAN_NONE = 0,
	SPA_SCAN_SCRUB,
	SPA_SCAN_RESILVER,
} spa_scan_func_t;

typedef enum spa_scan_state {
	SPA_SCAN_STATE_NONE = 0,
	SPA_SCAN_STATE_SCANNING,
	SPA_SCAN_STATE_FINISHED,
	SPA_SCAN_STATE_CANCELED,
} spa_scan_state_t;

/* What `status` shows on its scan: line; persisted in the MOS. */
typedef struct spa_scan_stat {
	uint64_t sss_func;          /* spa_scan_func_t */
	uint64_t sss_state;         /* spa_scan_state_t */
	uint64_t sss_start_time;    /* seconds since the epoch */
	uint64_t sss_end_time;
	uint64_t sss_to_examine;    /* bytes allocated when it started */
	uint64_t sss_examined;      /* bytes of block pointers visited */
	uint64_t sss_issued;        /* bytes read and verified */
	uint64_t sss_repaired;      /* bytes rewritten */
	uint64_t sss_errors;        /* blocks that could not be repaired */
	uint64_t sss_min_txg;       /* resilver: blocks born from this txg */
	uint64_t sss_paused;        /* 1 while paused */
	uint64_t sss_pass_start;    /* when the current run (after resume) began */
	uint64_t sss_pass_issued;   /* bytes issued since then (for the rate) */
	uint64_t sss_txg;           /* txg of the committed tree walked: every block
	                               born up to it and still live was read (and
	                               written into leaves that missed it) when the
	                               scan FINISHED; 0 until the walk begins */
	uint64_t sss_pad[2];
} spa_scan_stat_t;

/*
 * Start a scrub, or a resilver from min_txg; resumes a paused scrub.
 * EBUSY while another scan runs (a resilver pre-empts a scrub; a
 * resilver requested while one runs restarts it from the lower min_txg).
 * EROFS on a read-only pool.  Theory: the comment at the top of spa_scan.c.
 */
int spa_scan_start(spa_t *spa, spa_scan_func_t func, uint64_t min_txg);
int spa_scan_stop(spa_t *spa);        /* ENOENT when none runs */
int spa_scan_pause(spa_t *spa);       /* ENOENT when none runs; ENOTSUP: a resilver */
/*
 * Wait until the running scan ends or is paused (0 at once when none
 * runs); a paused scan counts once its walker has finished the reads it
 * had in flight, so its progress figures stay as they are until resumed.
 */
int spa_scan_wait(spa_t *spa);
void spa_scan_get_stat(spa_t *spa, spa_scan_stat_t *out);
/*
 * For `status`: the current pass's rate (bytes issued per second since
 * sss_pass_start) and the seconds left at that rate for what remains of
 * sss_to_examine; both 0 unless SCANNING.  now: seconds since the epoch.
 */
void spa_scan_rate(const spa_scan_stat_t *s, uint64_t now, uint64_t *rate,
    uint64_t *secs_left);

/* ---- the persistent error log (spa_errlog.c) ---- */

typedef struct spa_errlog_ent {
	char     see_objset[64];    /* "<MOS>" or the registered object set's name */
	uint64_t see_object;
	uint64_t see_level;
	uint64_t see_blkid;
	uint64_t see_offset;        /* byte offset for level 0 (blkid * block size) */
} spa_errlog_ent_t;

/* Blocks that could not be read intact and have not been found good since. */
int spa_errlog_list(spa_t *spa, spa_errlog_ent_t **ents, int *n);
uint64_t spa_errlog_count(spa_t *spa);

/* ---- run-time fault and latency injection (spa_inject.c) ---- */

/*
 * tarn inject: add an injection (vdev.h, vdev_inject_spec_t) to the leaf
 * `dev` names (path, GUID, last part of the path; not a hot spare that is
 * not in use); *idp gets its number.  ENODEV (no such device), ENOTSUP,
 * EINVAL (a bad spec), with err saying so.  Run-time only: export and
 * destroy clear a pool's injections.
 */
int spa_inject_add(spa_t *spa, const char *dev, const vdev_inject_spec_t *spec,
    uint64_t *idp, char *err, size_t errlen);
/* Remove injection id (0: all) of the pool; how many were removed. */
int spa_inject_clear(spa_t *spa, uint64_t id);
/* Each injection of the pool, to fn (called with the pool's device lock held). */
void spa_inject_list(spa_t *spa, vdev_inject_fn_t fn, void *arg);

/* ---- device changes (spa_vdev.c) ---- */

/* zpool attach: make `path` a mirror of the leaf `existing` (or widen its mirror). */
int spa_vdev_attach(spa_t *spa, const char *existing, const char *path, bool force,
    char *err, size_t errlen);
/* zpool replace: attach `path` (NULL: the same device, wiped) then detach the old when resilvered. */
int spa_vdev_replace(spa_t *spa, const char *old, const char *path, bool force,
    char *err, size_t errlen);
int spa_vdev_detach(spa_t *spa, const char *path, char *err, size_t errlen);
int spa_vdev_online(spa_t *spa, const char *path, char *err, size_t errlen);
int spa_vdev_offline(spa_t *spa, const char *path, bool temporary, char *err, size_t errlen);
/* zpool clear: reset error counters (of one device, or all when path is NULL). */
int spa_vdev_clear(spa_t *spa, const char *path, char *err, size_t errlen);
/*
 * zpool add NAME VDEV...: new top-level vdevs (spec: a ROOT spec, as
 * create takes it).  Unless force, each must have the layout of the
 * pool's first top-level vdev (type, parity, width).  The new devices
 * join with nothing written on them; allocations use them at once.
 */
int spa_vdev_add(spa_t *spa, const spa_vdev_spec_t *spec, bool force, char *err,
    size_t errlen);
/* zpool add -n: the checks of spa_vdev_add that need no writing. */
int spa_vdev_add_check(spa_t *spa, const spa_vdev_spec_t *spec, bool force, char *err,
    size_t errlen);
/* zpool add NAME spare DEV...: hot spares. */
int spa_vdev_add_spares(spa_t *spa, int n, char *const paths[], bool force,
    char *err, size_t errlen);
/*
 * Look a leaf up by path (also another spelling of the same file), by
 * GUID (decimal) or by its last path component: the tree first, then
 * the hot spares.  The pointer is valid until the next device change.
 */
vdev_t *spa_lookup_leaf(spa_t *spa, const char *name);
/* The state of the leaf spa_lookup_leaf would find, read under the tree's lock. */
int spa_leaf_state(spa_t *spa, const char *name, vdev_state_t *state);
/*
 * Wait until no resilver runs or is needed (replace -w, attach -w):
 * resilvers finish, replaced devices are detached, the labels written.
 * Returns at once when none can run (read-only pool, no scan support).
 */
int spa_vdev_wait(spa_t *spa);
/* Hot spares: vdev_spares(root) (NULL when none); in use = now in the tree. */
bool spa_spare_in_use(spa_t *spa, const vdev_t *spare);
/*
 * Keep the vdev tree still while reading it outside I/O (status, iostat,
 * list in a daemon, where the pool's own thread may change it: a resilver
 * that ends detaches replaced devices).  Do not call spa_vdev_* (or
 * spa_lookup_leaf) while holding it.
 */
void spa_vdev_hold(spa_t *spa);
void spa_vdev_rele(spa_t *spa);

/* ---- history (spa_history.c) ---- */

/*
 * Record a command that changed the pool (kept in the MOS), as zpool
 * history prints it ("zfs create tank/a"), run by user uid on this host;
 * spa_history_log: by this process's user.  Nothing on a pool without
 * the history feature or read-only.
 */
int spa_history_log(spa_t *spa, const char *cmdline);
int spa_history_log_as(spa_t *spa, const char *cmdline, uint32_t uid);
/*
 * Record an internal event (zpool history -i) of txg, in zpool's words
 * ("create tank/a (5) ", "scan done errors=0"); txg 0: the txg the record
 * itself is written in.  Call with no pool lock held.
 */
int spa_history_log_internal(spa_t *spa, uint64_t txg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
enum { SPA_HIST_CMD = 0, SPA_HIST_INTERNAL = 1 };
typedef struct spa_history_ent {
	uint64_t she_time;
	int      she_kind;       /* SPA_HIST_CMD or SPA_HIST_INTERNAL */
	bool     she_long;       /* host (and for commands uid) known */
	uint32_t she_uid;
	uint64_t she_txg;        /* internal events */
	char     she_host[64];
	char     she_cmd[496];
} spa_history_ent_t;
/* The records still in the ring, oldest first (a damaged one is left out). */
int spa_history_get(spa_t *spa, spa_history_ent_t **ents, int *n);
/*
 * One stored record (docs/FORMAT.md "History") into ent: EINVAL for a
 * len other than SPA_HISTORY_RECSIZE, EIO for a record of neither layout.
 */
#define SPA_HISTORY_RECSIZE 512
int spa_history_decode(const void *rec, size_t len, spa_history_ent_t *ent);

/* ---- format version and features (spa_history.c) ---- */

/* Enable everything this build supports (zpool upgrade). */
int spa_upgrade(spa_t *spa, uint64_t version, char *err, size_t errlen);
uint64_t spa_features(const spa_t *spa);

#endif
