/*
 * host_impl.h — what the files of host/ share and nothing else includes.
 */
#ifndef TARN_HOST_IMPL_H
#define TARN_HOST_IMPL_H

#include "host.h"
#include "posix.h"

/* ---- operations (host_ops.c; each host_op_*.c has a table) ---- */

typedef int (*host_op_fn_t)(json_object *args, json_object *res);
typedef struct host_op {
	const char  *ho_name;   /* "pool.sync": group.verb */
	host_op_fn_t ho_fn;     /* 0 or HOST_FAILED (failures reported) */
} host_op_t;

extern const host_op_t host_ops_mount[];
extern const host_op_t host_ops_fs_props[];
extern const host_op_t host_ops_fs[];
extern const host_op_t host_ops_snap[];
extern const host_op_t host_ops_sync[];
extern const host_op_t host_ops_info[];
extern const host_op_t host_ops_scan[];
extern const host_op_t host_ops_iostat[];
extern const host_op_t host_ops_history[];
extern const host_op_t host_ops_daemon[];
extern const host_op_t host_ops_upgrade[];
extern const host_op_t host_ops_label[];
extern const host_op_t host_ops_create[];
extern const host_op_t host_ops_import[];
extern const host_op_t host_ops_vdev[];
extern const host_op_t host_ops_clone[];
/* host_op_fs.c: filesystem_limit of name's ancestors (reported); after a create or clone */
int host_fs_limit_check(struct dsl_pool *dp, const char *name);
int host_fs_created(host_fs_t *fs, const char *top, int r);
/* host_op_snap.c: sync the mounts of the file systems of fs@snap names (before snapshots) */
void host_snap_flush(const char *const *names, int n, bool recursive);
extern const host_op_t host_ops_diff[];
extern const host_op_t host_ops_autosnap[];
extern const host_op_t host_ops_send[];
extern const host_op_t host_ops_inject[];

/* Arguments: a string (NULL when absent or not a string), a boolean. */
const char *host_arg_str(json_object *args, const char *key);
bool host_arg_bool(json_object *args, const char *key);
/* A string argument that must be there: reports and fails when absent. */
int host_arg_need(json_object *args, const char *key, const char *op, const char **vp);
/*
 * host_op_create.c: args[key], the words of a vdev specification, parsed;
 * failures reported as "cannot VERB 'NAME'".  0 or HOST_FAILED.
 */
int host_arg_spec(json_object *args, const char *key, const char *verb, const char *name,
    spa_vdev_spec_t **specp);
/*
 * host_op_vdev.c: a vdev tree as JSON: {type ("root", "mirror", "raidz",
 * "replacing", "spare", "disk", "file", "missing"), id, nparity (raidz),
 * path?, guid, state (vdev_state_name), children?}.
 */
json_object *host_op_tree_json(const vdev_t *vd);

/*
 * host_op_scan.c: the pool's scan statistics as fields of obj (for a
 * result: status's "scan" object; the fields are listed there), and the
 * wait for a scan's end (in tarnd it polls and gives up, EINTR, when the
 * client went away; call after host_pool_unlock()).
 */
void host_scan_json(spa_t *spa, json_object *obj);
int host_scan_wait(spa_t *spa);
/*
 * host_vdev.c: a vdev's type as the command line names it ("raidz",
 * "file", ...), and the space of the pool (vd the root) or of a top-level
 * vdev as zpool shows it (deferred frees counted); false for other vdevs.
 */
const char *host_vdev_type(const vdev_t *vd);
bool host_vdev_space(spa_t *spa, const vdev_t *vd, uint64_t *size, uint64_t *alloc);
/* Into o: type (as given), id, nparity (raidz), path (when set), guid. */
void host_vdev_ident(json_object *o, const vdev_t *vd, const char *type);
/*
 * host_op_fs.c: settings [[property, value]...] as dsl takes them (NULL:
 * a bad one, reported as "cannot VERB 'NAME'"); and where mounting starts
 * after a create (clone, rename) of name: name itself, or with parents
 * the highest of its ancestors that does not exist yet, since zfs mounts
 * the ancestors -p creates (left unmounted, their mountpoints would fill
 * with the child's and never mount).
 */
dsl_prop_setting_t *host_fs_settings(json_object *props, const char *verb, const char *name,
    int *np);
void host_fs_mount_top(dsl_pool_t *dp, const char *name, bool parents, char top[DSL_NAME_MAX]);
/* host_op_import.c: zpool export (destroy: zpool destroy) of one pool; 0 or reported. */
int host_pool_end(const char *verb, const char *name, bool force, bool destroy);

/*
 * host_pool.c: is the pool `name` held (open in the daemon's registry)?
 * Then its state's word and how many commands use it now.
 */
bool host_pool_holding(const char *name, const char **state, int *refs);

/* ---- a mounted file system's object set replaced under its mount (host_swap.c) ---- */

/* The change itself (dsl_dataset_rollback): 0 or HOST_FAILED (reported). */
typedef int (*host_swap_fn_t)(void *arg);
struct tarn_fuse;
/* One mount's file system swap: what host_mount.c hands to host_swap_fs. */
typedef struct host_swap {
	struct tarn_fuse *hs_fuse;
	posix_fs_t       *hs_fs;        /* in: served now; out: served after (NULL: none) */
	bool              hs_ro;        /* hs_fs was opened read-only (nothing to sync) */
	void            (*hs_publish)(void *arg, posix_fs_t *fs);   /* the table's pointer */
	int             (*hs_open)(void *arg, posix_fs_t **fsp);    /* the dataset's fs again */
	void             *hs_arg;
} host_swap_t;
/*
 * host_swap.c: run change(arg) with the mount's file system closed and
 * serve the dataset's (new) one on the same mount afterwards.  *ran false:
 * the swap could not start (a kernel without FUSE_NOTIFY_INC_EPOCH,
 * requests in flight for 30 s): nothing done, change not called.
 */
int host_swap_fs(host_swap_t *hs, host_swap_fn_t change, void *arg, bool *ran);
/*
 * host_mount.c: change(arg) for dataset name, in place under its mount
 * when it is mounted (host_swap_fs), else directly; *ran as above.  Mounts
 * nested below its mountpoint go down before and come up after (force:
 * even busy ones; a busy one refuses, reported as "cannot VERB 'NAME'").
 */
int host_mount_swap(struct dsl_pool *dp, const char *name, bool force, const char *verb,
    host_swap_fn_t change, void *arg, bool *ran);
/*
 * host_swap.c: change(arg) for dataset name, mounted or not: in place, or
 * when that cannot be, with its mounts taken down (force: even busy ones;
 * failures reported as "cannot VERB 'NAME'") and mounted again after.
 */
int host_swap_dataset(struct dsl_pool *dp, const char *name, bool force, const char *verb,
    host_swap_fn_t change, void *arg);

/*
 * Send and receive (issue 29).  host_recv.c: one substream into a file
 * system, with the swap under a mount, the stream's properties and -o/-x,
 * and the mount after; host_send_pkg.c: package streams (send -R, -I) and
 * their receive.  Both report failures (verb "send" / "receive") and
 * return 0 or HOST_FAILED.
 */
typedef struct host_recv_args {
	int   hra_flags;                     /* DSL_RECV_* (-F, -s, -n) */
	bool  hra_nomount;                   /* -u */
	bool  hra_verbose;                   /* -v */
	bool  hra_discard;                   /* -d: drop the sent name's pool part */
	bool  hra_lastonly;                  /* -e: keep only the sent name's last part */
	const char *const *hra_setprops;     /* -o prop=value */
	int   hra_nset;
	const char *const *hra_exclprops;    /* -x prop */
	int   hra_nexcl;
} host_recv_args_t;
/*
 * The file system a stream of toname ("pool/a/b@s") goes to under target
 * (-d, -e; "fs@snap" as given without them): 0, or reported (a snapshot
 * target with -d/-e, too long a name) and HOST_FAILED.
 */
int host_recv_target_name(const host_recv_args_t *a, const char *target, const char *toname,
    char *out, size_t len);
int host_recv_one(struct dsl_pool *dp, const host_recv_args_t *a, const char *target,
    dsl_stream_in_t *si, dsl_recv_result_t *res);
/* Destroy what receives killed without -s left in pool (import, daemon start). */
void host_recv_cleanup(const char *pool);
/* The local properties of fs as the JSON text send -p carries (caller frees). */
char *host_send_props(struct dsl_pool *dp, const char *fs, size_t *len);

typedef struct host_send_args {
	const char *hsa_snap;                /* fs@snap */
	const char *hsa_from;                /* -i / -I base, or NULL */
	bool  hsa_intermediate;              /* -I */
	bool  hsa_replicate;                 /* -R */
	bool  hsa_props;                     /* -p */
	bool  hsa_holds;                     /* -h */
	bool  hsa_verbose, hsa_parsable, hsa_dryrun;   /* -v, -P, -n */
	int   hsa_flags;                     /* DSL_SEND_* */
} host_send_args_t;
/* A package stream (-R and/or -I) of a->hsa_snap to so. */
int host_send_package(struct dsl_pool *dp, const host_send_args_t *a, dsl_stream_out_t *so);
/*
 * host_op_send.c: what send -v says, as parts the command line prints
 * (host_op_send.c's theory comment): a stream's estimate (from NULL: a
 * full one), the total, and the start of snap's stream (its progress
 * lines, once a second during a real send with -v, name it).
 */
void host_send_emit_estimate(const char *from, const char *snap, uint64_t bytes);
void host_send_emit_total(uint64_t bytes);
void host_send_emit_start(const char *snap);
/* Receive a package stream (its package record is next in si) under target. */
int host_recv_package(struct dsl_pool *dp, const host_recv_args_t *a, const char *target,
    dsl_stream_in_t *si);

/* ---- the daemon's ARC and its tunables (host_arc.c) ---- */

typedef struct host_tunable {
	const char *ht_name;
	uint64_t    ht_value;
	const char *ht_source;      /* "default", "config" (the file), "local" (daemon set) */
} host_tunable_t;
/* The config file: $TARN_CONFIG, else /etc/tarn/tarnd.conf. */
const char *host_config_path(void);
/* The process's ARC, made from the config file on first use. */
struct arc *host_arc(void);
/* Point a pool's dmu options at it (create, import, open). */
void host_dmu_opts(dmu_pool_opts_t *o);
int host_tunable_lookup(const char *name);
int host_tunable_count(void);
void host_tunable_get(int i, host_tunable_t *out);
int host_tunables_set(int n, const int *idx, const uint64_t *values, int *bad, char *msg,
    size_t msglen);
/* tarnd's log function (NULL in-process). */
host_log_fn_t host_daemon_log(void);
extern const host_op_t host_ops_arc[];

#endif /* TARN_HOST_IMPL_H */
