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
extern const host_op_t host_ops_autosnap[];

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
/* host_op_import.c: zpool export (destroy: zpool destroy) of one pool; 0 or reported. */
int host_pool_end(const char *verb, const char *name, bool force, bool destroy);

/*
 * host_pool.c: is the pool `name` held (open in the daemon's registry)?
 * Then its state's word and how many commands use it now.
 */
bool host_pool_holding(const char *name, const char **state, int *refs);

#endif /* TARN_HOST_IMPL_H */
