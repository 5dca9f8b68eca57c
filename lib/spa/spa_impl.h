/*
 * spa_impl.h — private structures of the pool layer.
 */
#ifndef TARN_SPA_IMPL_H
#define TARN_SPA_IMPL_H

#include <pthread.h>
#include "spa.h"
#include "tarn_array.h"

#define SPA_DIR_OBJ        1ULL          /* MOS object 1: the pool directory */
#define SPA_DIR_BLKSZ      (16 * KiB)
#define SPA_DIR_NAMELEN    56
#define SPA_SM_BLKSZ       (4 * KiB)     /* space map object block size */
#define SPA_MS_ARRAY_BLKSZ (16 * KiB)
#define SPA_MAX_PASSES     64

/* Pool directory entry (64 bytes). */
typedef struct spa_dir_ent {
	uint64_t sde_obj;
	char     sde_name[SPA_DIR_NAMELEN];
} spa_dir_ent_t;

/* Bonus of a space map object. */
typedef struct spa_sm_phys {
	uint64_t smp_length;        /* bytes of entries */
	uint64_t smp_alloc;         /* allocated bytes after replay (informational) */
} spa_sm_phys_t;

/* A destroyed object set's root block, to free in txg (spa_objset_destroy). */
typedef struct spa_dead_root {
	blkptr_t sdr_bp;
	uint64_t sdr_txg;
} spa_dead_root_t;

/* An object set registered with the pool (its bp lives in a MOS object's bonus). */
typedef struct spa_os {
	char      so_name[SPA_DIR_NAMELEN];
	uint64_t  so_obj;           /* MOS object holding the bp */
	objset_t *so_os;
	zil_t    *so_zil;           /* its intent log (file systems; spa_zil.c) */
} spa_os_t;

#define SPA_OS(spa, i) TARN_ARRAY_AT(&(spa)->spa_os, spa_os_t, i)
#define SPA_NOS(spa) ((int)tarn_array_len(&(spa)->spa_os))

struct spa {
	char      spa_name[SPA_NAME_MAX + 1];
	uint64_t  spa_guid;
	uint64_t  spa_version;
	uint64_t  spa_features;
	uint64_t  spa_create_time;
	uint64_t  spa_config_txg;
	bool      spa_readonly;
	bool      spa_no_cache;
	vdev_t   *spa_root;
	metaslab_class_t *spa_mc;   /* normal class: the primary of the family */
	metaslab_class_t *spa_mc_log;     /* log devices (spa_class.c) */
	metaslab_class_t *spa_mc_special; /* special devices */
	zio_ctx_t *spa_zio;
	dmu_pool_t *spa_dp;
	objset_t *spa_mos;
	uberblock_t spa_ub;         /* last written or loaded */
	uint64_t  spa_loaded_txg;   /* txg of the uberblock loaded at open */
	uint64_t  spa_open_ns;      /* tarn_now_ns() when the pool was opened */
	pthread_mutex_t spa_lock;   /* spa_os, spa_ub */
	tarn_array_t spa_os;        /* of spa_os_t: SPA_OS(spa, i), i < SPA_NOS(spa) */
	/*
	 * Root blocks of object sets destroyed (spa_objset_destroy, for
	 * lib/dsl), each freed by the sync of the txg that dropped its
	 * directory entry (spa_lock).
	 */
	tarn_array_t spa_dead_roots; /* of spa_dead_root_t */
	uint64_t  spa_sync_passes;  /* max passes seen (diagnostics) */
	/* owned by spa_scan.c, spa_errlog.c, spa_vdev.c, spa_history.c */
	struct spa_scan *spa_scan;
	struct spa_errlog *spa_errlog;
	struct spa_history *spa_history;
	pthread_mutex_t spa_vdev_lock; /* serializes device changes */
	pthread_mutex_t spa_dir_lock;  /* pool directory read-modify-write */
	pthread_rwlock_t spa_sync_rwlock; /* writer: a txg syncing; reader: whole-pool walks */
	struct spa_vdev_async *spa_vdev_async;  /* spa_vdev.c: its thread and state */
	/* spa_task.c: sync tasks waiting for their txg (of spa_sync_task_t *) */
	pthread_mutex_t spa_task_lock; /* a leaf */
	tarn_array_t spa_tasks;
	uint64_t  spa_task_gen;     /* atomic: sync tasks run so far */
	const spa_dsl_hooks_t *spa_dsl_hooks;   /* set once by lib/dsl */
	const spa_l2cache_hooks_t *spa_l2cache_hooks; /* spa_vdev_lock (spa_class.c) */
	void     *spa_l2cache_arg;
	l2arc_t  *spa_l2arc;          /* spa_vdev_lock; NULL until a cache device opened */
};

/* spa.c: a vdev tree from a spec (leaves not opened); a spec's checks */
vdev_t *spa_tree_from_spec(const spa_vdev_spec_t *spec, uint64_t ashift);
int spa_check_spec(const spa_vdev_spec_t *root, bool force, char *err, size_t errlen);

/* spa_task.c: run txg's sync tasks (pass 1, after the object sets) */
int spa_sync_tasks_run(spa_t *spa, uint64_t txg);
void spa_task_init(spa_t *spa);
void spa_task_fini(spa_t *spa);
/* After os (registered as name) synced in txg: hand its dead blocks to lib/dsl. */
int spa_os_synced(spa_t *spa, const char *name, objset_t *os, uint64_t txg);
/* Take name out of the open object sets (EBUSY: unsynced changes); caller closes. */
int spa_os_unregister(spa_t *spa, const char *name, objset_t **osp, zil_t **zlp);

/* spa_sync.c */
int spa_sync(void *arg, uint64_t txg);
uint64_t spa_space_avail(void *arg, bool netfree);
uint64_t spa_slop(uint64_t total);   /* reserve for a pool of total bytes */
int spa_load_metaslabs(spa_t *spa, uint64_t synced_txg);
int spa_setup_metaslabs(spa_t *spa, bool create);

/*
 * Hooks of the optional parts, called by spa.c and spa_sync.c:
 * init when the spa is set up (create or load, before the sync thread
 * starts), load after the MOS is open (read persisted state), start once
 * the pool runs (e.g. resume a scan), sync in pass 1 of every txg
 * (write persisted state into the MOS with a syncing tx), fini before
 * the object sets close.  All must tolerate a read-only pool.
 */
void spa_scan_init(spa_t *spa);
int spa_scan_load(spa_t *spa);
void spa_scan_start_pool(spa_t *spa);
int spa_scan_sync(spa_t *spa, uint64_t txg);
void spa_scan_fini(spa_t *spa);
void spa_errlog_init(spa_t *spa);
/* Forget what was reported (an import tries another uberblock). */
void spa_errlog_reset(spa_t *spa);
/* Merge the persisted log into what was reported while loading. */
int spa_errlog_load(spa_t *spa);
/* Record a block by object set name (e.g. an object set that did not open). */
void spa_errlog_add(spa_t *spa, const char *osname, uint64_t obj, uint8_t level,
    uint64_t blkid);
int spa_errlog_sync(spa_t *spa, uint64_t txg);
void spa_errlog_fini(spa_t *spa);
void spa_errlog_report(void *spa, objset_t *os, uint64_t obj, uint8_t level,
    uint64_t blkid, int error);
void spa_history_init(spa_t *spa);
int spa_history_load(spa_t *spa);
int spa_history_sync(spa_t *spa, uint64_t txg);
void spa_history_fini(spa_t *spa);
/*
 * spa_vdev.c (device lifecycle): init/fini with the spa; start once the
 * pool runs (after create or load, read-only too: checks spares and
 * missed txgs, starts the thread that faults failing devices, activates
 * spares and drives resilvers); stop before the pool stops (export,
 * destroy, unload; idempotent) — with `settle`, a last step records a
 * finished resilver (detaching replaced devices), else nothing more is
 * written (abandon).  sync_done is called by spa_sync after
 * each txg's uberblock (it only records missed txgs in the labels when
 * it can without waiting, and wakes the thread).  resilver_done may be
 * called by spa_scan.c when a resilver ends (it only wakes the thread;
 * the thread also polls spa_scan_get_stat).
 */
void spa_vdev_init(spa_t *spa);
void spa_vdev_start(spa_t *spa);
void spa_vdev_stop(spa_t *spa, bool settle);
void spa_vdev_fini(spa_t *spa);
void spa_vdev_sync_done(spa_t *spa, uint64_t txg);
void spa_vdev_resilver_done(spa_t *spa, uint64_t txg);
/*
 * spa_vdev.c: the leaf `name` names (spa_lookup_leaf's rules: path, GUID,
 * last part of the path; tree first, then the hot spares), or NULL.
 * spa_vdev_lock held.
 */
vdev_t *spa_vdev_lookup(spa_t *spa, const char *name);

/* spa_vdev.c, for spa_class.c: device changes (theory in spa_vdev.c) */
int spa_vdev_enter(spa_t *spa, char *err, size_t errlen);
int spa_vdev_exit(spa_t *spa, int e, bool changed, char *err, size_t errlen);
int spa_vdev_fail(int e, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int spa_vdev_check_new(spa_t *spa, const char *path, uint64_t need, uint64_t ashift,
    bool force, char *err, size_t errlen);
int spa_vdev_open_new(const char *path, uint64_t guid, uint64_t ashift, vdev_t **vdp,
    char *err, size_t errlen);
vdev_t *spa_vdev_lookup(spa_t *spa, const char *name);   /* tree, spares, cache */
bool spa_vdev_same_file(const char *a, const char *b);
bool spa_vdev_label_is(spa_t *spa, const char *path, uint64_t guid);
void spa_vdev_forget(const char *path);   /* zero the labels at path */

/*
 * spa_class.c: allocation classes and cache devices.  create/destroy the
 * family of metaslab classes (normal = spa_mc, log, special); the class
 * of a bias; the checks of a spec's classes at create and add; opening
 * the cache devices at pool start.
 */
void spa_classes_create(spa_t *spa);
void spa_classes_destroy(spa_t *spa);
metaslab_class_t *spa_class_of(spa_t *spa, vdev_alloc_bias_t bias);
void spa_class_idle_dead_logs(spa_t *spa);   /* import -m: lost log vdevs take nothing */
void spa_class_wake_log(spa_t *spa, vdev_t *top);  /* ... until they open again */
int spa_class_check_create(const spa_vdev_spec_t *spec, bool force, uint64_t version,
    char *err, size_t errlen);
int spa_class_check_add(spa_t *spa, const spa_vdev_spec_t *spec, bool force,
    char *err, size_t errlen);
void spa_l2cache_open(spa_t *spa);
/* spa_l2arc.c: the L2ARC on the cache devices (start: spa_vdev_lock held) */
void spa_l2arc_start(spa_t *spa);
void spa_l2arc_flush(spa_t *spa);
void spa_l2arc_stop(spa_t *spa);
void spa_l2cache_open_all(spa_t *spa, bool check_label);
int spa_vdev_add_cache(spa_t *spa, const spa_vdev_spec_t *spec, bool force,
    char *err, size_t errlen);

/* Name of a registered object set ("<MOS>" for the MOS), for messages. */
void spa_objset_name(spa_t *spa, objset_t *os, char *buf, size_t len);

/* spa.c */
bool spa_cache_has_guid(uint64_t guid);
bool spa_cache_name_in_use(const char *name, uint64_t guid);
spa_t *spa_alloc(const char *name);
void spa_free(spa_t *spa);
int spa_write_labels(spa_t *spa, pool_state_t state, bool wipe_rings);
int spa_write_labels_under(spa_t *spa, vdev_t *vd, pool_state_t state);
int spa_load(spa_t *spa, const vdev_label_config_t *cfg, const spa_import_opts_t *opts,
    char *err, size_t errlen);
void spa_unload(spa_t *spa, bool sync);

/* spa_zil.c: intent logs of the registered file systems */
int spa_zil_claim_all(spa_t *spa, bool rewind);
void spa_zil_sync(spa_t *spa, uint64_t txg);
void spa_zil_close_all(spa_t *spa);
void spa_zil_release_all(spa_t *spa);  /* each log gives back its open block */

#endif
