/*
 * dsl.h — datasets: the named tree of file systems in a pool ("tank",
 * "tank/home", "tank/home/ann"), each with its own object set, and their
 * properties with inheritance (zfs get/set/inherit), space accounting
 * (used, referenced, available) and quotas/reservations.
 * Theory and on-disk layout: the comment at the top of dsl_dataset.c and
 * docs/FORMAT.md "Datasets".
 *
 * Every function takes the dsl_pool_t of an open pool, returns 0 or a
 * positive errno and, where it says `err`, a one-line message in zfs's
 * words ("dataset already exists", "'recordsize' must be power of 2 from
 * 512B to 1M") for the command line to print after "cannot VERB 'NAME': ".
 * Operations on one dsl_pool_t are serialized by its lock.
 */
#ifndef TARN_DSL_H
#define TARN_DSL_H

#include "spa.h"
#include "dmu.h"
#include "zap.h"

#include <sys/types.h>

#define DSL_NAME_MAX      256        /* bytes of a full name, NUL included */
#define DSL_MOUNTPOINT_MAX 1024      /* bytes of a mountpoint value, NUL included */
#define DSL_USERPROP_MAX   8192      /* bytes of a user property's value, NUL included */

typedef struct dsl_pool dsl_pool_t;

/*
 * Called once for each new file system's empty object set (the CLI passes
 * posix_fs_create; this layer cannot call the POSIX layer itself).
 */
typedef int (*dsl_fs_init_fn_t)(void *arg, objset_t *os);

/*
 * Attach to an open pool.  A writable pool without a root dataset (made
 * before datasets existed, or just created) gets one, named after the
 * pool, with init_fn run on its object set.  ENOENT when the pool has no
 * root dataset and is read-only.
 */
int dsl_pool_open(spa_t *spa, dsl_fs_init_fn_t init_fn, void *init_arg, dsl_pool_t **dpp);
/*
 * The same for a command that only reads and may share the pool with
 * other readers (the daemon): it never writes — no root dataset is made
 * (ENOENT instead) and every change returns EROFS.
 */
int dsl_pool_open_reader(spa_t *spa, dsl_pool_t **dpp);
void dsl_pool_close(dsl_pool_t *dp);
/*
 * Ask before a dataset is destroyed: fn returns 0, or EBUSY (or another
 * errno) with a message in err to refuse ("dataset is busy").  The
 * daemon refuses mounted datasets this way; without -f it may unmount.
 */
typedef int (*dsl_busy_fn_t)(void *arg, const char *name, char *err, size_t errlen);
void dsl_pool_set_busy_fn(dsl_pool_t *dp, dsl_busy_fn_t fn, void *arg);
/* What the read-only `mounted` property says ("no" without a function). */
typedef bool (*dsl_mounted_fn_t)(void *arg, const char *name);
void dsl_pool_set_mounted_fn(dsl_pool_t *dp, dsl_mounted_fn_t fn, void *arg);
spa_t *dsl_pool_spa(dsl_pool_t *dp);

/*
 * Check a dataset name as zfs does: EINVAL with a message ("leading slash
 * in name", "empty component or misplaced '@' or '#' delimiter in name",
 * "trailing slash in name", "invalid character '%c' in name", "name is
 * too long", "snapshot delimiter '@' is not expected here").
 */
int dsl_name_validate(const char *name, char *err, size_t errlen);
/*
 * The same for a snapshot "FS@SNAP" (sep '@') or a bookmark "FS#BM" (sep
 * '#'): zfs's messages ("multiple '@' and/or '#' delimiters in name", ...).
 */
int dsl_snap_name_validate(const char *name, char sep, char *err, size_t errlen);
/* The key its object set is registered under in the pool ("ds<obj>"). */
int dsl_dataset_oskey(dsl_pool_t *dp, const char *name, char *key, size_t len);
/* The dataset whose object set key is key (ENOENT: none, e.g. "<MOS>"). */
int dsl_dataset_key_name(dsl_pool_t *dp, const char *key, char *name, size_t len);

/* ---- properties ---- */

typedef enum dsl_prop {
	/* in zfs get all's order (the names zfs has and Tarn not yet left out) */
	DSL_PROP_TYPE = 0,
	DSL_PROP_CREATION,
	DSL_PROP_USED,
	DSL_PROP_AVAILABLE,
	DSL_PROP_REFERENCED,
	DSL_PROP_COMPRESSRATIO,     /* logicalused / stored bytes (pool feature logical_space) */
	DSL_PROP_MOUNTED,
	DSL_PROP_ORIGIN,            /* a clone's origin snapshot ("-": none; get all skips it) */
	DSL_PROP_QUOTA,
	DSL_PROP_RESERVATION,
	DSL_PROP_RECORDSIZE,
	DSL_PROP_MOUNTPOINT,
	DSL_PROP_CHECKSUM,
	DSL_PROP_COMPRESSION,
	DSL_PROP_ATIME,
	DSL_PROP_DEVICES,
	DSL_PROP_EXEC,
	DSL_PROP_SETUID,
	DSL_PROP_READONLY,
	DSL_PROP_SNAPDIR,           /* .zfs: hidden / visible (DSL_SNAPDIR_*), inherited */
	DSL_PROP_CREATETXG,         /* txg of the create */
	DSL_PROP_CANMOUNT,
	DSL_PROP_XATTR,
	DSL_PROP_COPIES,
	DSL_PROP_UTF8ONLY,          /* creation-time: names must be UTF-8 (EILSEQ) */
	DSL_PROP_NORMALIZATION,     /* creation-time: none only (DSL_NORM_*) */
	DSL_PROP_CASESENSITIVITY,   /* creation-time: sensitive only (DSL_CASE_*) */
	DSL_PROP_REFQUOTA,
	DSL_PROP_REFRESERVATION,    /* space kept for the dataset's own data */
	DSL_PROP_GUID,              /* dd_guid (older datasets: derived, see dsl_prop.c) */
	DSL_PROP_USEDSNAP,          /* used, split as zfs splits it: by snapshots, */
	DSL_PROP_USEDDS,            /* by the dataset itself (referenced), */
	DSL_PROP_USEDCHILD,         /* by its children (their used or reservation), */
	DSL_PROP_USEDREFRESERV,     /* by a refreservation */
	DSL_PROP_DEFER_DESTROY,     /* snapshots: destroy -d waits for the holds */
	DSL_PROP_USERREFS,          /* snapshots: holds */
	DSL_PROP_OBJSETID,          /* the dataset's MOS object number */
	DSL_PROP_SYNC,              /* standard / always / disabled (DSL_SYNC_*) */
	DSL_PROP_DNODESIZE,         /* accepted and shown (DSL_DNODESIZE_*) */
	DSL_PROP_REFCOMPRESSRATIO,  /* the same for the dataset's own data */
	DSL_PROP_WRITTEN,           /* referenced and born since the previous snapshot */
	DSL_PROP_CLONES,            /* snapshots: the file systems cloned from it */
	DSL_PROP_LOGICALUSED,
	DSL_PROP_LOGICALREFERENCED,
	/*
	 * Limits: DSL_LIMIT_NONE (UINT64_MAX, "none") by default, not
	 * inherited; a limit bounds the file systems / snapshots of the whole
	 * subtree below (dsl_prop_num gives the dataset's own).  The counts
	 * are shown where a limit is set on the dataset or an ancestor.
	 */
	DSL_PROP_FILESYSTEM_LIMIT,
	DSL_PROP_SNAPSHOT_LIMIT,
	DSL_PROP_FILESYSTEM_COUNT,
	DSL_PROP_SNAPSHOT_COUNT,
	DSL_PROP_ACLTYPE,           /* off / posix (DSL_ACLTYPE_*) */
	DSL_PROP_RELATIME,
	DSL_PROP_REDUNDANT_METADATA, /* all / most / some / none (DSL_REDUNDANT_*) */
	DSL_PROP_RECEIVE_RESUME_TOKEN, /* a resumable receive's token ("-": none; get all skips it) */
	DSL_PROP_PRIMARYCACHE,      /* all / metadata / none: what the ARC keeps (DMU_CACHE_*) */
	DSL_PROP_SECONDARYCACHE,    /* the same for the L2ARC (stored; used by the L2ARC) */
	DSL_PROP_SPECIAL_SMALL_BLOCKS, /* level-0 file blocks up to this size go to the
	                                  special class (0, or a power of 2 up to 1M) */
	DSL_PROP_LOGBIAS,           /* latency / throughput: the intent log on log devices or
	                               not (DMU_LOGBIAS_*) */
	DSL_NUM_PROPS
} dsl_prop_t;

/* Index values of the properties that are one of a list. */
enum { DSL_OFF = 0, DSL_ON = 1 };
enum { DSL_SYNC_STANDARD = 0, DSL_SYNC_ALWAYS = 1, DSL_SYNC_DISABLED = 2 };
enum { DSL_CANMOUNT_OFF = 0, DSL_CANMOUNT_ON = 1, DSL_CANMOUNT_NOAUTO = 2 };
/* xattr: off and on, and zfs's sa (as on: small ones in the inode) and dir (never there) */
enum { DSL_XATTR_SA = 2, DSL_XATTR_DIR = 3 };
/* acltype: zfs's numbers (1, nfsv4, is not taken: Linux has no NFSv4 ACLs) */
enum { DSL_ACLTYPE_OFF = 0, DSL_ACLTYPE_POSIX = 2 };
/* creation-time properties: zfs's numbers; Tarn takes only none and sensitive */
enum { DSL_NORM_NONE = 0, DSL_NORM_FORMC = 1, DSL_NORM_FORMD = 2, DSL_NORM_FORMKC = 3,
	DSL_NORM_FORMKD = 4 };
enum { DSL_CASE_SENSITIVE = 0, DSL_CASE_INSENSITIVE = 1, DSL_CASE_MIXED = 2 };
/* dnodesize: legacy, auto, or the size in bytes */
enum { DSL_DNODESIZE_LEGACY = 0, DSL_DNODESIZE_AUTO = 1 };
enum { DSL_SNAPDIR_HIDDEN = 0, DSL_SNAPDIR_VISIBLE = 1 };
#define DSL_LIMIT_NONE UINT64_MAX
enum { DSL_REDUNDANT_ALL = 0, DSL_REDUNDANT_MOST = 1, DSL_REDUNDANT_SOME = 2,
	DSL_REDUNDANT_NONE = 3 };
/* checksum: DSL values are the cksum.h enum (ON, OFF, FLETCHER4, SHA256, XXH3_128). */
/* compression: ZIO_COMPRESS_* below 16; gzip-N and zstd-N carry their level. */
#define DSL_COMPRESS_GZIP_N(n)  (16 + (n))      /* 1..9 */
#define DSL_COMPRESS_ZSTD_N(n)  (32 + (n))      /* 1..19 */
/* zstd-fast-N (zio_zstd_fast_valid(N)); N = 0: "zstd-fast", which is zstd-fast-1's level */
#define DSL_COMPRESS_ZSTD_FAST_N(n) (1024 + (n))

typedef enum dsl_source {
	DSL_SRC_NONE = 0,          /* read-only statistic: "-" */
	DSL_SRC_DEFAULT,
	DSL_SRC_LOCAL,
	DSL_SRC_INHERITED,         /* from dpv_setpoint */
	DSL_SRC_TEMPORARY,         /* a mount's own option (zfs mount -o): the CLI's, never the dsl's */
} dsl_source_t;

/* A property's effective value on a dataset. */
typedef struct dsl_prop_val {
	uint64_t dpv_num;                   /* numbers, sizes, index values */
	char     dpv_str[DSL_USERPROP_MAX + DSL_NAME_MAX]; /* as zfs get prints it (-p: exact) */
	dsl_source_t dpv_source;
	char     dpv_setpoint[DSL_NAME_MAX]; /* the dataset it is inherited from */
} dsl_prop_val_t;

/* Name to property; -1 when unknown. */
int dsl_prop_lookup(const char *name);
const char *dsl_prop_name(int prop);
bool dsl_prop_readonly(int prop);
bool dsl_prop_inheritable(int prop);
/* Set at creation only (create -o; a child takes its parent's): utf8only, ... */
bool dsl_prop_once(int prop);
/* Column header of zfs list -o for the property ("USED", "MOUNTPOINT"). */
const char *dsl_prop_column(int prop);
/* Right-aligned in zfs list (numbers). */
bool dsl_prop_is_numeric(int prop);
/*
 * Whether prop means something for dataset `name`: a file system, a
 * snapshot ("fs@snap": type, creation, used, referenced, the ratios,
 * createtxg, guid, objsetid, userrefs, defer_destroy, written, clones,
 * logicalreferenced, and what it keeps of its file system: devices,
 * exec, setuid, xattr, acltype and the creation-time ones) or a bookmark
 * ("fs#bm": type, creation, createtxg, guid).  zfs get shows "-" for the
 * others, and get all leaves them out.
 */
bool dsl_prop_applies(int prop, const char *name);

/*
 * Parse and validate `value` for prop (for dataset `name`, which is only
 * used in checks against other state, e.g. quota below used).  EINVAL
 * with zfs's message; on success *num (and for mountpoint str) hold the
 * value to store.  Read-only properties: EINVAL "'used' is readonly".
 */
int dsl_prop_parse(int prop, const char *value, uint64_t *num, char *str, size_t strlen,
    char *err, size_t errlen);

/*
 * Effective value of prop on dataset name; parsable: numbers exact,
 * times in seconds (zfs get -p).  ENOENT "dataset does not exist".
 */
int dsl_prop_get(dsl_pool_t *dp, const char *name, int prop, bool parsable,
    dsl_prop_val_t *val, char *err, size_t errlen);
/* Set locally (validated: zfs's messages; quota below used, ...). */
int dsl_prop_set(dsl_pool_t *dp, const char *name, const char *propname, const char *value,
    char *err, size_t errlen);
/* The same for a dataset being created (pool create -O): creation-time ones too. */
int dsl_prop_set_create(dsl_pool_t *dp, const char *name, const char *propname,
    const char *value, char *err, size_t errlen);
/* Drop the local value (zfs inherit); EINVAL for non-inheritable ones. */
/*
 * User properties, as on zfs: a name with a ':' in it ("com.example:backup",
 * at most 255 bytes of lowercase letters, digits and "-_.:", not starting
 * with '-') names a string of the user's (at most DSL_USERPROP_MAX - 1
 * bytes), set with dsl_prop_set, removed with dsl_prop_inherit, inherited
 * by descendants.  Stored in the dataset's ZAP beside the native ones.
 */
bool dsl_prop_user_name(const char *name);
/* 0, or EINVAL with zfs's message for a bad name or too long a value (value may be NULL). */
int dsl_prop_user_check(const char *name, const char *value, char *err, size_t errlen);
/* Effective value: local, inherited, or unset (dpv_str "-", source DSL_SRC_NONE). */
int dsl_prop_user_get(dsl_pool_t *dp, const char *name, const char *prop,
    dsl_prop_val_t *val, char *err, size_t errlen);
/* The user properties in effect on name (set there or above), sorted, each once. */
typedef void (*dsl_prop_user_fn_t)(void *arg, const char *prop);
int dsl_prop_user_iter(dsl_pool_t *dp, const char *name, dsl_prop_user_fn_t fn, void *arg);

int dsl_prop_inherit(dsl_pool_t *dp, const char *name, const char *propname,
    char *err, size_t errlen);

/* Format a size as zfs does: "0B", "512B", "1.50K", "128K", "9.77G". */
void dsl_nicebytes(uint64_t n, char *buf, size_t len);
/* Parse "10G", "1.5M", "512", "none" (0 when none_ok).  EINVAL + message. */
int dsl_parse_size(const char *s, bool none_ok, uint64_t *out, char *err, size_t errlen);

/* ---- datasets ---- */

typedef struct dsl_prop_setting {
	const char *dps_name;
	const char *dps_value;
} dsl_prop_setting_t;

/*
 * Create a file system (zfs create [-p] [-o p=v]).  Properties are
 * validated before anything is written.  Errors: EEXIST "dataset already
 * exists", ENOENT "parent does not exist" (without parents), ENOENT "no
 * such pool 'x'", EINVAL (name, property).
 */
int dsl_dataset_create(dsl_pool_t *dp, const char *name, bool parents,
    const dsl_prop_setting_t *props, int nprops, char *err, size_t errlen);
/*
 * Destroy a file system (and with recursive, all below it, deepest
 * first).  EEXIST "filesystem has children; use -r" without recursive.
 * The pool's root dataset stays: recursive destroys everything below
 * it, without it is EINVAL ("operation does not apply to pools; ...").  Frees every object of the object
 * sets; their space comes back when the frees have synced.
 */
int dsl_dataset_destroy(dsl_pool_t *dp, const char *name, bool recursive,
    char *err, size_t errlen);
/* Rename within the pool, possibly under another parent (parents: -p). */
int dsl_dataset_rename(dsl_pool_t *dp, const char *oldname, const char *newname,
    bool parents, char *err, size_t errlen);
bool dsl_dataset_exists(dsl_pool_t *dp, const char *name);

/*
 * Visit name and its descendants (depth-first, children by name), down to
 * maxdepth levels below name (-1: all).  fn returning non-zero stops.
 */
typedef int (*dsl_iter_fn_t)(void *arg, const char *name, int depth);
int dsl_dataset_iter(dsl_pool_t *dp, const char *name, int maxdepth, dsl_iter_fn_t fn,
    void *arg);

/*
 * The object set of a dataset (owned by the pool: do not close), with its
 * write properties (checksum, compression, copies) applied.
 */
int dsl_dataset_objset(dsl_pool_t *dp, const char *name, objset_t **osp);

typedef struct dsl_space {
	uint64_t ds_used;          /* referenced + children (at least their reservation) */
	uint64_t ds_referenced;    /* this dataset's own object set */
	uint64_t ds_refreserved;   /* refreservation not yet referenced (usedbyrefreservation) */
	/* logical (uncompressed) and stored bytes: own, and with the descendants' */
	uint64_t ds_lreferenced, ds_preferenced, ds_lused, ds_pused;
	uint64_t ds_available;     /* what it may still write */
	uint64_t ds_usedsnap;      /* held only by its snapshots (usedbysnapshots) */
	uint64_t ds_written;       /* referenced and born since its newest snapshot */
	uint64_t ds_nsnaps;        /* its snapshots (snapshot_count counts the subtree) */
	bool     ds_quota_bound;   /* a quota or refquota limits ds_available,
	                              not the pool's space */
} dsl_space_t;
int dsl_dataset_space(dsl_pool_t *dp, const char *name, dsl_space_t *out);
/*
 * written@SNAP: bytes dataset name (a file system, or a later snapshot of
 * it) references that were born after snapshot snap ("fs@snap", or just
 * "@snap" / "snap" for one of name's own).  ENOENT, EXDEV when snap is
 * not an earlier snapshot of the same file system.
 */
int dsl_dataset_written_since(dsl_pool_t *dp, const char *name, const char *snap,
    uint64_t *out, char *err, size_t errlen);
/*
 * Bytes the dataset may still write: pool space less other datasets'
 * unused reservations, limited by its refquota and by the quota of it and
 * every ancestor; *quota (may be NULL): whether a quota is the limit.
 * For the POSIX layer's pfo_avail hook.
 */
uint64_t dsl_dataset_avail(dsl_pool_t *dp, const char *name, bool *quota);


/* ---- snapshots, clones, holds, bookmarks (dsl_snap.c, dsl_deadlist.c) ---- */

/*
 * Names: a snapshot is "FS@SNAP", a bookmark "FS#BM".  Every call below
 * is one sync task (all of it in one txg, or nothing) followed by a wait
 * for that txg (invariant 12), and refuses with ENOTSUP "pool must be
 * upgraded" on a pool without the `snapshots` feature.  Messages are zfs's.
 */

/*
 * Take the snapshots `names` ("tank/a@x", ...) in one txg.  recursive:
 * also every descendant of each file system, with the same snapshot name.
 * props: user properties (module:name) set on every new snapshot.
 * Errors: ENOENT "dataset does not exist", EEXIST "dataset already
 * exists", EINVAL (name; "multiple snapshots of same fs not allowed"),
 * EDQUOT "out of space" when a snapshot_limit would be passed.
 */
int dsl_snapshot_create(dsl_pool_t *dp, const char *const *names, int n, bool recursive,
    const dsl_prop_setting_t *props, int nprops, char *err, size_t errlen);

typedef struct dsl_snap_info {
	char     dsi_name[DSL_NAME_MAX];    /* fs@snap */
	uint64_t dsi_obj;                   /* MOS object (objsetid) */
	uint64_t dsi_txg;                   /* createtxg */
	uint64_t dsi_creation;              /* seconds since the epoch */
	uint64_t dsi_guid;
	uint64_t dsi_used;                  /* bytes only it holds: what destroy frees */
	uint64_t dsi_referenced;            /* its tree, as the file system had it */
	uint64_t dsi_lreferenced, dsi_preferenced; /* logical / stored (0 without logical_space) */
	uint64_t dsi_written;               /* referenced and born since the previous snapshot */
	uint64_t dsi_userrefs;              /* holds */
	uint64_t dsi_nclones;               /* file systems cloned from it */
	bool     dsi_defer_destroy;         /* destroy -d waits for its holds */
} dsl_snap_info_t;

/* The snapshots of file system fs, oldest first (caller frees *out).  ENOENT. */
int dsl_snapshot_list(dsl_pool_t *dp, const char *fs, dsl_snap_info_t **out, int *n,
    char *err, size_t errlen);
/* One snapshot ("fs@snap").  ENOENT "dataset does not exist". */
int dsl_snapshot_info(dsl_pool_t *dp, const char *snap, dsl_snap_info_t *out,
    char *err, size_t errlen);
/* Names of the file systems cloned from snap (zfs's `clones`), comma-separated. */
int dsl_snapshot_clones(dsl_pool_t *dp, const char *snap, char *buf, size_t len);

#define DSL_DESTROY_RECURSIVE 0x01  /* -r: the same snapshot name in descendants */
#define DSL_DESTROY_CLONES    0x02  /* -R: clones of it (and their descendants) too */
#define DSL_DESTROY_DEFER     0x04  /* -d: a held snapshot is marked, destroyed at release */
#define DSL_DESTROY_DRYRUN    0x08  /* -n: nothing changes; *reclaim is what would be freed */
/*
 * Destroy snapshots (the CLI expands "fs@a%b" and "fs@a,b" into names)
 * in one txg.  A name that does not exist is skipped (zfs's behaviour),
 * unless none exists: ENOENT "could not find any snapshots to destroy;
 * check snapshot names.".  EBUSY "dataset is busy" (held, without -d; or
 * open under .zfs and the busy function refused), EEXIST "snapshot has
 * dependent clones" (without -R).  *reclaim (may be NULL): bytes freed
 * (or, with DRYRUN, that would be).  visit (may be NULL) is called with
 * each dataset name that is (or would be) destroyed, in order.
 */
typedef void (*dsl_name_fn_t)(void *arg, const char *name);
int dsl_snapshot_destroy(dsl_pool_t *dp, const char *const *names, int n, int flags,
    uint64_t *reclaim, dsl_name_fn_t visit, void *visit_arg, char *err, size_t errlen);
/*
 * Rename "fs@a" to "fs@b" (newname may also be just "b"); recursive: every
 * descendant's snapshot of that name too.  EEXIST, ENOENT, EXDEV "snapshots
 * must be part of same dataset".
 */
int dsl_snapshot_rename(dsl_pool_t *dp, const char *oldname, const char *newname,
    bool recursive, char *err, size_t errlen);

/*
 * Roll file system fs back to its snapshot snap ("fs@snap").  Later
 * snapshots: EEXIST "more recent snapshots or bookmarks exist" unless
 * destroy_later (-r); clones of them need destroy_clones (-R) too.  The
 * caller has closed every user of the file system's object set (its
 * mount): the object set is replaced; dsl_dataset_objset gives the new
 * one.
 */
int dsl_dataset_rollback(dsl_pool_t *dp, const char *snap, bool destroy_later,
    bool destroy_clones, dsl_name_fn_t visit, void *visit_arg, char *err, size_t errlen);

/*
 * zfs clone [-p] [-o p=v] SNAP FS: a new file system whose first state is
 * the snapshot's (no data copied).  ENOENT "parent does not exist" without
 * parents, EEXIST, EINVAL for a bad property.
 */
int dsl_clone_create(dsl_pool_t *dp, const char *snap, const char *fs, bool parents,
    const dsl_prop_setting_t *props, int nprops, char *err, size_t errlen);
/* zfs promote CLONE: the origin's older snapshots move to the clone. EINVAL "not a cloned filesystem". */
int dsl_dataset_promote(dsl_pool_t *dp, const char *fs, char *err, size_t errlen);
/* The origin snapshot of a clone ("" for other file systems). */
int dsl_dataset_origin(dsl_pool_t *dp, const char *fs, char *buf, size_t len);

/*
 * Holds: zfs hold [-r] TAG SNAP...; EEXIST "tag already exists on this
 * dataset"; release: ESRCH "no such tag on this dataset".  Releasing the
 * last hold of a snapshot marked by destroy -d destroys it.
 */
int dsl_hold(dsl_pool_t *dp, const char *const *snaps, int n, const char *tag, bool recursive,
    char *err, size_t errlen);
int dsl_release(dsl_pool_t *dp, const char *const *snaps, int n, const char *tag,
    bool recursive, char *err, size_t errlen);
typedef void (*dsl_hold_fn_t)(void *arg, const char *snap, const char *tag, uint64_t when);
int dsl_holds(dsl_pool_t *dp, const char *snap, dsl_hold_fn_t fn, void *arg,
    char *err, size_t errlen);

/*
 * Bookmarks: zfs bookmark SNAP|BM FS#BM (the same file system).  A bookmark
 * keeps what an incremental send needs of its snapshot: guid, txg, time.
 */
typedef struct dsl_bookmark_info {
	char     dbi_name[DSL_NAME_MAX];    /* fs#bm */
	uint64_t dbi_guid, dbi_txg, dbi_creation;
} dsl_bookmark_info_t;
int dsl_bookmark_create(dsl_pool_t *dp, const char *src, const char *bm, char *err, size_t errlen);
int dsl_bookmark_list(dsl_pool_t *dp, const char *fs, dsl_bookmark_info_t **out, int *n,
    char *err, size_t errlen);
int dsl_bookmark_destroy(dsl_pool_t *dp, const char *bm, char *err, size_t errlen);

/*
 * A snapshot's object set, read-only, for .zfs/snapshot, diff and send.
 * Shared between opens of the same snapshot; a snapshot that is open
 * cannot be destroyed or renamed (EBUSY) until the last close.
 */
int dsl_snapshot_objset_open(dsl_pool_t *dp, const char *snap, objset_t **osp,
    char *err, size_t errlen);
void dsl_snapshot_objset_close(dsl_pool_t *dp, objset_t *os);

/* ---- send and receive (dsl_stream.c, dsl_send.c, dsl_recv.c) ---- */

/*
 * A stream is a sequence of records (docs/FORMAT.md "Send streams"):
 * begin, object, free-objects, write, free, end, and, around the
 * substreams of a replication stream (send -R), package records whose
 * payload is opaque to this layer (the host's JSON).  Every record has a
 * sequence number, its own checksum and the running checksum of the
 * stream up to it, so a flipped, missing or repeated byte is refused at
 * the record where it happened: EBADMSG with "record N (TYPE): what".
 *
 * Byte I/O is the caller's: write all of len or return an errno; read up
 * to len bytes and return how many (0 only at the end of input) or -errno.
 */
typedef int (*dsl_stream_write_fn_t)(void *arg, const void *buf, size_t len);
typedef ssize_t (*dsl_stream_read_fn_t)(void *arg, void *buf, size_t len);

typedef struct dsl_stream_out dsl_stream_out_t;
typedef struct dsl_stream_in dsl_stream_in_t;
dsl_stream_out_t *dsl_stream_out_create(dsl_stream_write_fn_t fn, void *arg);
/* Bytes written so far. */
uint64_t dsl_stream_out_bytes(const dsl_stream_out_t *so);
void dsl_stream_out_destroy(dsl_stream_out_t *so);
dsl_stream_in_t *dsl_stream_in_create(dsl_stream_read_fn_t fn, void *arg);
uint64_t dsl_stream_in_bytes(const dsl_stream_in_t *si);
void dsl_stream_in_destroy(dsl_stream_in_t *si);

/* A package record (send -R): payload is the host's, up to 16 MiB. */
int dsl_stream_put_package(dsl_stream_out_t *so, const void *payload, size_t len);
/* The end of a package (after its last substream). */
int dsl_stream_put_package_end(dsl_stream_out_t *so);

typedef enum dsl_stream_kind {
	DSL_STREAM_EOF = 0,         /* no more input (clean end between records) */
	DSL_STREAM_BEGIN,           /* a substream: dsl_receive takes it */
	DSL_STREAM_PACKAGE,         /* a package record: dsl_stream_get_package */
	DSL_STREAM_PACKAGE_END,
} dsl_stream_kind_t;
/* What the begin record says (dsl_stream_peek). */
typedef struct dsl_stream_begin {
	char     dsb_toname[DSL_NAME_MAX];  /* the sent snapshot, "fs@snap" */
	uint64_t dsb_toguid;
	uint64_t dsb_fromguid;              /* 0: a full stream */
	uint64_t dsb_creation;              /* of the sent snapshot */
	uint64_t dsb_features;              /* DSL_SEND_* the stream was made with */
	uint64_t dsb_resume_obj, dsb_resume_off;  /* a resumed send: where it starts */
	bool     dsb_has_props;             /* carries a property payload (-p) */
	bool     dsb_clone;                 /* a clone's stream from its origin */
	bool     dsb_resume;                /* a resumed stream (send -t) */
	/*
	 * send --saved: the partial state of a resumable receive.  Its
	 * receive ends with that state saved (never a snapshot): resume
	 * point dsb_resume_obj/off, the interrupted stream's flags and bytes.
	 */
	bool     dsb_saved;
	uint64_t dsb_saved_flags, dsb_saved_bytes;
} dsl_stream_begin_t;
/*
 * Read (and keep for the next call) the next record: its kind and, for a
 * begin record, what it says.  EBADMSG (err: the record and what is
 * wrong), ENOTSUP for a stream of a newer format version ("stream has
 * unsupported feature, feature flags = ..."), EIO from the read function.
 */
int dsl_stream_peek(dsl_stream_in_t *si, dsl_stream_kind_t *kind, dsl_stream_begin_t *begin,
    char *err, size_t errlen);
/* Take a package record: its payload (caller frees *payload). */
int dsl_stream_get_package(dsl_stream_in_t *si, char **payload, size_t *len,
    char *err, size_t errlen);
/* Take a package end record. */
int dsl_stream_get_package_end(dsl_stream_in_t *si, char *err, size_t errlen);
/* Read and verify the next substream (its begin record is next) through its end, applying nothing. */
int dsl_stream_skip(dsl_stream_in_t *si, char *err, size_t errlen);

#define DSL_SEND_COMPRESSED 0x01    /* -c: blocks as stored, not decompressed */
#define DSL_SEND_RAW        0x02    /* -w: stored bytes as they are (implies -c) */
#define DSL_SEND_LARGE      0x04    /* -L: blocks over 128 KiB at their size (always so) */
#define DSL_SEND_EMBED      0x08    /* -e (accepted: Tarn has no embedded blocks) */
#define DSL_SEND_SAVED      0x10    /* --saved: the partial state of a resumable receive */

typedef struct dsl_send_opts {
	/*
	 * Incremental base: NULL for a full stream; else "fs@snap",
	 * "fs#bm", or "@snap" / "#bm" of the sent snapshot's file system.
	 * A snapshot of the clone's origin is allowed too (-i origin).
	 */
	const char *dso_from;
	int         dso_flags;          /* DSL_SEND_* */
	/* send -t: resume after this object / offset (0, 0: from the start) */
	uint64_t    dso_resume_obj, dso_resume_off;
	bool        dso_resume;         /* send -t (even from 0, 0) */
	/* -p: a property payload (the host's JSON) carried in the stream */
	const char *dso_props;
	size_t      dso_propslen;
} dsl_send_opts_t;
/*
 * Write the stream of snapshot snap ("fs@snap") to so: begin, the
 * objects and blocks (an incremental stream only what was born after
 * the base: its cost follows the change), end.  Errors: ENOENT "dataset
 * does not exist" (snap or base), EXDEV "incremental source must be an
 * earlier snapshot of the same dataset" (also: not earlier), EIO/ECKSUM
 * reading, and the write function's error (EPIPE).  Holds snap open
 * while it runs (destroy: EBUSY).
 */
int dsl_send(dsl_pool_t *dp, const char *snap, const dsl_send_opts_t *opts,
    dsl_stream_out_t *so, char *err, size_t errlen);
/* What dsl_send would write, in bytes (send -n -v -P), without reading data. */
int dsl_send_estimate(dsl_pool_t *dp, const char *snap, const dsl_send_opts_t *opts,
    uint64_t *bytes, char *err, size_t errlen);
/*
 * A resume token (receive_resume_token) taken apart for send -t: the
 * snapshot to send, its guid (checked against it), the base (by guid;
 * 0: full) and where to resume.  EINVAL "resume token is corrupt".
 */
typedef struct dsl_resume {
	char     dr_toname[DSL_NAME_MAX];
	uint64_t dr_toguid, dr_fromguid;
	uint64_t dr_obj, dr_off;
	uint64_t dr_bytes;          /* received so far */
	int      dr_flags;          /* DSL_SEND_* of the interrupted stream */
} dsl_resume_t;
int dsl_resume_token_parse(const char *token, dsl_resume_t *out, char *err, size_t errlen);
/*
 * Fill opts (from, flags, resume point) and *snap from a parsed token,
 * finding the base by its guid among the snapshot's file system's
 * snapshots and bookmarks.  ENOENT "dataset does not exist" / EXDEV
 * "GUID mismatch" when the source changed since.
 */
int dsl_resume_send_opts(dsl_pool_t *dp, const dsl_resume_t *r, char *snap, size_t snaplen,
    char *from, size_t fromlen, dsl_send_opts_t *opts, char *err, size_t errlen);

#define DSL_RECV_FORCE     0x01     /* -F: roll back to the base, or replace a
                                       file system without snapshots (full stream) */
#define DSL_RECV_RESUMABLE 0x02     /* -s: keep a partial receive */
#define DSL_RECV_DRYRUN    0x04     /* -n: read and check the stream, change nothing */
#define DSL_RECV_CLONES    0x08     /* an incremental stream into a new file system makes it
                                       a clone of the pool's snapshot with the base's guid
                                       (a replication package's clones) */

/*
 * The commit of a receive replaces a file system's object set, as
 * rollback does: the caller's swap function runs commit(cookie) with
 * every user of name's object set closed (its mount: host_mount_swap)
 * and returns what commit returned.  NULL: commit is called directly.
 */
typedef int (*dsl_recv_commit_fn_t)(void *cookie);
typedef int (*dsl_recv_swap_fn_t)(void *arg, const char *name, dsl_recv_commit_fn_t commit,
    void *cookie);

typedef struct dsl_recv_opts {
	int         dro_flags;          /* DSL_RECV_* */
	/* properties set when the receive creates the file system (-o, and the stream's) */
	const dsl_prop_setting_t *dro_props;
	int         dro_nprops;
	dsl_recv_swap_fn_t dro_swap;
	void       *dro_swap_arg;
	/*
	 * Called with false once the work dataset is ready and records are
	 * being applied, with true before the commit (or the clean-up): the
	 * caller may let other commands use the pool meanwhile.  The work
	 * dataset is busy (destroy: EBUSY) until dsl_receive returns.  NULL: none.
	 */
	void      (*dro_exclusive)(void *arg, bool exclusive);
	void       *dro_exclusive_arg;
} dsl_recv_opts_t;

typedef struct dsl_recv_result {
	char     drr_snap[DSL_NAME_MAX];    /* the new snapshot, "fs@snap" */
	bool     drr_created;               /* the file system is new */
	bool     drr_saved;                 /* a --saved stream: a partial state was saved, no snapshot */
	uint64_t drr_bytes;                 /* bytes of this substream */
	char    *drr_props;                 /* the stream's property payload or NULL (caller frees) */
	size_t   drr_propslen;
} dsl_recv_result_t;
/*
 * Receive the next substream of si (its begin record is next: see
 * dsl_stream_peek) into target: "fs" (the snapshot keeps the stream's
 * name) or "fs@snap".  Atomic: until the end record has verified, target
 * shows its old state (a new file system does not show at all); on any
 * failure nothing changes, except that with -s the partial state is kept
 * and target's receive_resume_token says how to go on.
 * Errors (err has zfs's words):
 *  - EEXIST "destination 'fs' exists" (full stream without -F, or -F on
 *    one with snapshots: "destination has snapshots (eg. fs@x)"),
 *  - ENOENT "destination 'fs' does not exist" (incremental), and
 *    "most recent snapshot of fs does not match incremental source",
 *  - ETXTBSY "destination fs has been modified since most recent
 *    snapshot" (without -F),
 *  - EBADMSG (the record and what is wrong), ENOTSUP (newer version),
 *  - EBUSY "fs contains partially-complete state from \"zfs receive -s\"."
 *    (a resumable state exists and the stream is not its resume),
 *  - ENOSPC, EIO.
 */
int dsl_receive(dsl_pool_t *dp, const char *target, const dsl_recv_opts_t *opts,
    dsl_stream_in_t *si, dsl_recv_result_t *res, char *err, size_t errlen);
/*
 * Destroy what receives that died without -s left (work datasets without
 * a saved state: a daemon killed mid-stream), as import does.  Returns how
 * many went.
 */
int dsl_recv_cleanup(dsl_pool_t *dp);
/* destroy -r: drop the partial receives (saved or not) below fs first, as zfs. */
int dsl_recv_destroy_below(dsl_pool_t *dp, const char *fs);
/* receive_resume_token of fs: ENOENT when it has no partial state. */
int dsl_recv_resume_token(dsl_pool_t *dp, const char *fs, char *buf, size_t len);
/* receive -A fs: drop the partial state.  ENOENT "'fs' does not have any resumable receive state to abort". */
int dsl_recv_abort(dsl_pool_t *dp, const char *fs, char *err, size_t errlen);

#endif
