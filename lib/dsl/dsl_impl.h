/*
 * dsl_impl.h — private structures of the dataset layer.
 */
#ifndef TARN_DSL_IMPL_H
#define TARN_DSL_IMPL_H

#include <pthread.h>
#include "dsl.h"
#include "tarn_array.h"

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
	/* snapshots (feature snapshots; all 0 before the first) */
	uint64_t dd_snap_zap;        /* MOS ZAP: snapshot name -> snapshot object */
	uint64_t dd_prev_snap_obj;   /* newest snapshot */
	uint64_t dd_prev_snap_txg;   /* its txg (a clone without one: its origin's) */
	uint64_t dd_deadlist;        /* blocks of dd_prev_snap_obj this one freed */
	uint64_t dd_origin_obj;      /* a clone: the snapshot it was made from */
	uint64_t dd_bookmark_zap;    /* MOS ZAP: bookmark name -> [guid, txg, creation] */
	uint64_t dd_flags;           /* DSL_DD_F_* */
	uint64_t dd_recv_state;      /* MOS ZAP: a resumable receive's state (0: none) */
	uint64_t dd_pad[2];
} dsl_dataset_phys_t;
_Static_assert(sizeof (dsl_dataset_phys_t) == 128, "dsl_dataset_phys_t is 128 bytes");

#define DSL_DD_F_INCONSISTENT 0x1     /* being received: hidden, never mounted */
#define DSL_RECV_TEMP "%recv"          /* the child an incremental receive works in */

/*
 * Bonus of a snapshot object (a MOS ZAP of type DMU_OT_DSL_SNAP whose
 * entries are its user properties).  312 bytes.
 */
typedef struct dsl_snap_phys {
	blkptr_t ds_bp;              /* its own copy of the file system's root */
	uint64_t ds_head_obj;        /* the file system */
	uint64_t ds_prev_obj;        /* the next older snapshot (0: none) */
	uint64_t ds_prev_txg;        /* its txg (the first of a clone: the origin's; else 0) */
	uint64_t ds_next_obj;        /* the next newer one (0: the file system is next) */
	uint64_t ds_txg;             /* createtxg */
	uint64_t ds_creation;
	uint64_t ds_guid;
	uint64_t ds_referenced, ds_lreferenced, ds_preferenced;
	uint64_t ds_deadlist;        /* blocks of the previous snapshot dead in this one */
	uint64_t ds_clones_zap;      /* MOS ZAP: "%llx" of each clone's object */
	uint64_t ds_nclones;
	uint64_t ds_holds_zap;       /* MOS ZAP: tag -> time held */
	uint64_t ds_userrefs;
	uint64_t ds_flags;           /* DSL_SNAP_F_* */
	uint64_t ds_pad[7];
} dsl_snap_phys_t;
_Static_assert(sizeof (dsl_snap_phys_t) == 312, "dsl_snap_phys_t is 312 bytes");
#define DSL_SNAP_F_DEFER_DESTROY 0x1

/* ---- dead lists (dsl_deadlist.c) ---- */

/* One bucket of a dead list: blocks born after dle_mintxg (up to the next bucket's). */
typedef struct dsl_dl_ent {
	uint64_t dle_mintxg;
	uint64_t dle_bpobj;          /* 0: a boundary with no blocks yet */
} dsl_dl_ent_t;
/* Bonus of a bpobj. */
typedef struct dsl_bpobj_phys {
	uint64_t bpo_num;            /* block pointers in the object */
	uint64_t bpo_bytes;          /* their space (zio_bp_dsize) */
	uint64_t bpo_lsize, bpo_psize;
} dsl_bpobj_phys_t;
/* A new dead list with boundaries keys[0..n). */
int dsl_dl_create(objset_t *mos, const uint64_t *keys, int n, dmu_tx_t *tx, uint64_t *objp);
/* Its buckets, sorted (caller frees *ents). */
int dsl_dl_load(objset_t *mos, uint64_t dl, dsl_dl_ent_t **ents, int *n);
/* The distinct boundaries, sorted (caller frees). */
int dsl_dl_keys(objset_t *mos, uint64_t dl, uint64_t **keys, int *n);
/* Add dead blocks, each to the bucket of its birth. */
int dsl_dl_insert(spa_t *spa, uint64_t dl, const blkptr_t *bps, size_t n, dmu_tx_t *tx);
/* Space of the buckets with lo <= mintxg <= hi. */
int dsl_dl_space(objset_t *mos, uint64_t dl, uint64_t lo, uint64_t hi, uint64_t *bytes,
    uint64_t *lsize, uint64_t *psize);
/*
 * Free (zio_free in tx's txg) every block of the buckets with
 * lo <= mintxg <= hi and drop those buckets; *freed: their space.
 */
int dsl_dl_free_range(spa_t *spa, uint64_t dl, uint64_t lo, uint64_t hi, dmu_tx_t *tx,
    uint64_t *freed);
/* Move src's buckets (not their blocks) into dst; src is destroyed. */
int dsl_dl_merge(objset_t *mos, uint64_t dst, uint64_t src, dmu_tx_t *tx);
/* Re-sort the blocks of the buckets below `below` under boundaries keys[0..n). */
int dsl_dl_rebucket(spa_t *spa, uint64_t dl, uint64_t below, const uint64_t *keys, int n,
    dmu_tx_t *tx);
/* Destroy a dead list and its buckets, leaving their blocks alone. */
int dsl_dl_destroy(objset_t *mos, uint64_t dl, dmu_tx_t *tx);

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
	uint64_t dsn_usedsnap;       /* held only by its snapshots */
	uint64_t dsn_written;        /* born since its newest snapshot */
	uint64_t dsn_nsnaps;
} dsl_space_node_t;

/* The sum of a file system's snapshots' dead lists as of a sync task generation. */
typedef struct dsl_snap_sum {
	uint64_t dss_head;
	uint64_t dss_gen;
	uint64_t dss_sum;
	uint64_t dss_n;
} dsl_snap_sum_t;

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
	tarn_array_t dp_snap_sums;    /* of dsl_snap_sum_t (dp_lock; dsl_snap_head_space) */
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
/* "ds<obj>": the name its object set is registered under. */
void dsl_os_key(uint64_t obj, char *buf, size_t len);
int dsl_obj_create(dsl_pool_t *dp, uint64_t parent, const char *component, dmu_tx_t *tx,
    uint64_t *objp);
int dsl_create_check(dsl_pool_t *dp, const char *name, const dsl_prop_setting_t *props,
    int nprops, char *err, size_t errlen);
int dsl_create_parents(dsl_pool_t *dp, const char *name, bool parents, char *err,
    size_t errlen);
int dsl_create_obj_tx(dsl_pool_t *dp, const char *name, const dsl_prop_setting_t *props,
    int nprops, dmu_tx_t *tx, uint64_t *objp, char *err, size_t errlen);

/* dsl_snap.c, dsl_snap_destroy.c */
typedef struct dsl_snap_req {
	uint64_t dsr_head;
	char     dsr_snap[ZAP_MAXNAMELEN];
	char     dsr_name[DSL_NAME_MAX];
	uint64_t dsr_guid, dsr_creation;    /* a received snapshot's (0: new ones) */
} dsl_snap_req_t;
/* Syncing context: take one snapshot (its dataset's objset synced in this pass already). */
int dsl_snap_take_one(dsl_pool_t *dp, const dsl_snap_req_t *r, dmu_tx_t *tx, char *err,
    size_t errlen);
/* Syncing context: the clone name of snapshot origin (dsl_clone_create's work). */
int dsl_clone_create_tx(dsl_pool_t *dp, const char *name, uint64_t origin,
    const dsl_prop_setting_t *props, int nprops, dmu_tx_t *tx, uint64_t *objp, char *err,
    size_t errlen);
/* Destroy one childless dataset without snapshots (lock held; dsl_dataset.c). */
int dsl_destroy_one(dsl_pool_t *dp, uint64_t obj, const char *name);
typedef struct dsl_snap_ent {
	uint64_t se_obj;
	char     se_name[ZAP_MAXNAMELEN];
	dsl_snap_phys_t se_phys;
} dsl_snap_ent_t;
/* The snapshots of file system head, oldest first (caller frees). */
int dsl_snap_chain(dsl_pool_t *dp, uint64_t head, dsl_snap_ent_t **out, int *np);
int dsl_snap_read(objset_t *mos, uint64_t obj, dsl_snap_phys_t *sp);
int dsl_snap_write(objset_t *mos, uint64_t obj, const dsl_snap_phys_t *sp, dmu_tx_t *tx);
int dsl_head_write(objset_t *mos, uint64_t obj, const dsl_dataset_phys_t *dd, dmu_tx_t *tx);
uint64_t dsl_key_obj(const char *name);
void dsl_join(char *buf, size_t len, const char *a, char sep, const char *b);
int dsl_feature_check(dsl_pool_t *dp, char *err, size_t errlen);
int dsl_split_at(dsl_pool_t *dp, const char *name, char sep, uint64_t *fsobj, char *fsname,
    const char **tail, char *err, size_t errlen);
int dsl_snap_lookup(dsl_pool_t *dp, const char *name, uint64_t *headp, uint64_t *snapp,
    char *err, size_t errlen);
void dsl_snap_hooks_install(spa_t *spa);
bool dsl_snap_is_open(spa_t *spa, uint64_t obj);
int dsl_snap_head_space(dsl_pool_t *dp, uint64_t head, uint64_t refer, uint64_t *usedsnap,
    uint64_t *written, uint64_t *nsnaps);
/* Syncing context: destroy snapshot obj (checked already); *freed += what it freed. */
int dsl_snap_destroy_one_sync(dsl_pool_t *dp, uint64_t obj, dmu_tx_t *tx, uint64_t *freed);
/* Before a file system's objects are dropped: unlink it from its origin, drop its lists. */
int dsl_head_destroy_tx(dsl_pool_t *dp, uint64_t obj, dmu_tx_t *tx);
/* A deferred-destroy snapshot with no holds or clones left goes (lock held). */
int dsl_snap_destroy_deferred_locked(dsl_pool_t *dp, uint64_t obj);
/* Every snapshot of file system head (lock held): check only, or destroy them. */
int dsl_snap_destroy_head_locked(dsl_pool_t *dp, uint64_t head, bool check, char *err,
    size_t errlen);
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

/* ---- send streams (dsl_stream.c; docs/FORMAT.md "Send streams") ---- */

#define DSL_DRR_MAGIC       0x4e525453U     /* "STRN" in a little-endian dump */
#define DSL_STREAM_VERSION  1
#define DSL_DRR_MAX_PAYLOAD (16 * MiB + 4096)
enum {
	DSL_DRR_BEGIN = 1, DSL_DRR_OBJECT, DSL_DRR_FREEOBJECTS, DSL_DRR_WRITE, DSL_DRR_FREE,
	DSL_DRR_END, DSL_DRR_PACKAGE, DSL_DRR_PACKAGE_END, DSL_DRR_NTYPES
};
/* drr_flags */
#define DSL_DRR_F_PROPS     0x0001          /* begin: the payload has properties after the name */
#define DSL_DRR_F_CLONE     0x0002          /* begin: the base is the origin of a clone */
#define DSL_DRR_F_RESUME    0x0004          /* begin: a resumed stream (send -t) */
#define DSL_DRR_F_NEW       0x0001          /* object: allocated after the base (a new object) */
#define DSL_DRR_F_STORED    0x0001          /* write: the payload is the stored form */
/* One record's header (96 bytes, little-endian); its payload follows. */
typedef struct dsl_drr {
	uint32_t drr_magic;
	uint16_t drr_type;
	uint16_t drr_flags;
	uint32_t drr_plen;            /* payload bytes */
	uint32_t drr_pad;
	uint64_t drr_seq;             /* record number, from 0 */
	uint64_t drr_u[7];            /* by type: FORMAT.md */
	uint64_t drr_running;         /* the stream's running checksum before this record */
	uint64_t drr_cksum;           /* of this header (with drr_cksum 0) and the payload */
} dsl_drr_t;
_Static_assert(sizeof (dsl_drr_t) == 96, "dsl_drr_t is 96 bytes");
/* begin: drr_u[] */
/* begin: the feature bits (DSL_SEND_*) a reader knows; others are refused */
#define DSL_STREAM_FEATURES (DSL_SEND_COMPRESSED | DSL_SEND_RAW | DSL_SEND_LARGE | \
	DSL_SEND_EMBED | DSL_SEND_SAVED)
enum { DRB_VERSION = 0, DRB_FEATURES, DRB_TOGUID, DRB_FROMGUID, DRB_CREATION, DRB_RESUME_OBJ,
	DRB_RESUME_OFF };
const char *dsl_drr_type_name(int type);
/* Write a record: magic, sequence and checksums are filled in here. */
int dsl_stream_put(dsl_stream_out_t *so, dsl_drr_t *h, const void *payload);
int dsl_stream_flush(dsl_stream_out_t *so);
/*
 * Take the next record, verified (a peeked one first).  *payload stays
 * valid until the next call.  EBADMSG / ENOTSUP with err "record N (T): ...".
 */
int dsl_stream_get(dsl_stream_in_t *si, dsl_drr_t *h, const void **payload, char *err,
    size_t errlen);
/* dsl_recv_commit.c: destroy -r drops the partial receives below obj (lock held). */
void dsl_recv_destroy_below_locked(dsl_pool_t *dp, uint64_t obj, const char *name);
/* dsl_recv_commit.c: a receive is writing into dataset obj (destroy: EBUSY). */
bool dsl_recv_is_active(spa_t *spa, uint64_t obj);
/* dsl_send.c: the token of a resumable receive's state. */
int dsl_resume_token_make(const dsl_resume_t *r, char *buf, size_t len);
/*
 * fn(arg) runs before each read of the input (which may wait for a slow
 * sender): a receive commits its open transaction there, so that no txg
 * waits on the network.  NULL: none.
 */
void dsl_stream_in_set_wait(dsl_stream_in_t *si, void (*fn)(void *), void *arg);
/* Where the record read last (or peeked) starts in the stream. */
uint64_t dsl_stream_in_record_start(const dsl_stream_in_t *si);
/* Records taken so far (the next one's number). */
uint64_t dsl_stream_in_seq(const dsl_stream_in_t *si);

#endif
