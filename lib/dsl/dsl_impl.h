/*
 * dsl_impl.h — private structures of the dataset layer.
 */
#ifndef TARN_DSL_IMPL_H
#define TARN_DSL_IMPL_H

#include <pthread.h>
#include "dsl.h"

#define DSL_DIR_ROOT   "dsl:root"     /* pool directory: the root dataset */
#define DSL_OS_PREFIX  "ds"            /* registered object set "ds<obj>" */
#define DSL_TYPE_FILESYSTEM 1

/*
 * Bonus of a dataset object (a MOS ZAP of type DMU_OT_DSL_DIR whose
 * entries are the dataset's local properties).  128 bytes.
 */
typedef struct dsl_dataset_phys {
	uint64_t dd_parent_obj;      /* 0 for the root dataset */
	uint64_t dd_child_zap;       /* MOS ZAP: child name -> dataset object */
	uint64_t dd_creation;        /* seconds since the epoch */
	uint64_t dd_type;            /* DSL_TYPE_FILESYSTEM */
	uint64_t dd_create_txg;
	uint64_t dd_guid;            /* random at creation; 0 in older datasets */
	uint64_t dd_pad[10];
} dsl_dataset_phys_t;
_Static_assert(sizeof (dsl_dataset_phys_t) == 128, "dsl_dataset_phys_t is 128 bytes");

/* One dataset's figures in the space cache (dsl_space.c). */
typedef struct dsl_space_node {
	uint64_t dsn_obj;
	uint64_t dsn_parent;         /* 0 for the root */
	uint64_t dsn_refer;          /* its object set's bytes */
	uint64_t dsn_used;           /* refer + refres + each child's max(used, reservation) */
	uint64_t dsn_refres;         /* refreservation beyond refer (usedbyrefreservation) */
	uint64_t dsn_lsize, dsn_psize;  /* its object set's logical and stored bytes */
	uint64_t dsn_lused, dsn_pused;  /* the same over its subtree */
	uint64_t dsn_res, dsn_quota, dsn_refquota;   /* local values, 0: none */
} dsl_space_node_t;

struct dsl_pool {
	spa_t    *dp_spa;
	objset_t *dp_mos;
	uint64_t  dp_root_obj;
	dsl_fs_init_fn_t dp_init_fn;
	void     *dp_init_arg;
	bool      dp_reader;          /* dsl_pool_open_reader: never writes */
	dsl_busy_fn_t dp_busy_fn;
	void     *dp_busy_arg;
	dsl_mounted_fn_t dp_mounted_fn;
	void     *dp_mounted_arg;
	pthread_mutex_t dp_lock;      /* serializes every operation */
	/*
	 * Space of every dataset as of one synced txg (dsl_space.c; dp_lock):
	 * nodes sorted by object number, and the sum of unused reservations.
	 */
	uint64_t  dp_space_txg;       /* 0: not computed */
	dsl_space_node_t *dp_space;
	int       dp_space_n;
	uint64_t  dp_space_unres;
};

/* dsl_dataset.c */
/* True when this handle must not write (reader, or a read-only pool). */
bool dsl_readonly(const dsl_pool_t *dp);
int dsl_lookup(dsl_pool_t *dp, const char *name, uint64_t *objp, char *err, size_t errlen);
int dsl_phys_read(dsl_pool_t *dp, uint64_t obj, dsl_dataset_phys_t *phys);
/* ENOTSUP (err: "must be upgraded") when the pool lacks the feature a value needs. */
int dsl_prop_pool_check(dsl_pool_t *dp, int prop, uint64_t num, char *err, size_t errlen);
/* Record an internal event of dataset name (object obj) in txg: "set tank/a (5) x=1". */
void dsl_history(dsl_pool_t *dp, uint64_t txg, const char *op, const char *name, uint64_t obj,
    const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* 0, or EROFS with "pool is read-only" in err when dsl_readonly(dp). */
int dsl_writable(const dsl_pool_t *dp, char *err, size_t errlen);
/* A MOS transaction holding 256 KiB (netfree: may run in the pool's reserve). */
int dsl_tx_begin(dsl_pool_t *dp, bool netfree, dmu_tx_t **txp);
/* Commit tx and wait until its txg is on disk. */
int dsl_tx_end(dsl_pool_t *dp, dmu_tx_t *tx);
int dsl_os_get(dsl_pool_t *dp, uint64_t obj, objset_t **osp);
typedef struct dsl_child {
	char     dc_name[ZAP_MAXNAMELEN];
	uint64_t dc_obj;
} dsl_child_t;
/* The children of obj sorted by name (caller frees *kids). */
int dsl_children(dsl_pool_t *dp, uint64_t obj, dsl_child_t **kidsp, int *np);
/* dsl_space.c */
/* Space of one dataset (lock held). */
int dsl_space_locked(dsl_pool_t *dp, const char *name, dsl_space_t *out);
/* Free the space cache (dsl_pool_close). */
void dsl_space_fini(dsl_pool_t *dp);

/* dsl_prop.c */
/* Local value of prop on obj: ENOENT when not set locally. */
int dsl_prop_local(dsl_pool_t *dp, uint64_t obj, int prop, uint64_t *num, char *str,
    size_t len);
/* Effective value (lock held). */
int dsl_prop_get_locked(dsl_pool_t *dp, const char *name, int prop, bool parsable,
    dsl_prop_val_t *val, char *err, size_t errlen);
/* Store a parsed value in tx. */
int dsl_prop_store(dsl_pool_t *dp, uint64_t obj, int prop, uint64_t num, const char *str,
    dmu_tx_t *tx);
/* Store user property prop = value in dataset object obj (checked already). */
int dsl_prop_user_store(dsl_pool_t *dp, uint64_t obj, const char *prop, const char *value,
    dmu_tx_t *tx);
/* Push checksum/compression/copies of name to its open object set. */
void dsl_prop_apply(dsl_pool_t *dp, const char *name, objset_t *os);
/* Numeric effective value ignoring sources (lock held); 0 on errors. */
uint64_t dsl_prop_num(dsl_pool_t *dp, const char *name, int prop);

#endif
