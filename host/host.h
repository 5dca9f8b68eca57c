/*
 * host.h — the pool host: what tarnd holds and every command works on.
 * The layer between the libraries (lib/, fuse/) and the command line
 * (cmd/tarn): the imported pools and how a command gets one (the
 * registry, host_pool.c), dataset handles (host_fs.c), the mount table
 * (host_mount.c), the request a command runs for (host_req.c: its
 * cancellation, the way its errors are reported), and the wire format of
 * the control socket (host_wire.h).  It knows nothing of argv or of the
 * text the commands print: failures are reported through host_report()
 * as (verb, name, errno, message), and the command line turns them into
 * "cannot VERB 'NAME': message".  docs/DESIGN.md, "host".
 *
 * Run in-process (TARN_NO_DAEMON=1) the same code opens a pool for one
 * command and closes it after; in tarnd (host_start) pools stay open.
 */
#ifndef TARN_HOST_H
#define TARN_HOST_H

#include <stdbool.h>
#include <stdio.h>
#include "spa.h"
#include "dsl.h"

#include <json-c/json.h>

/* ---- pools (host_pool.c) ---- */

/* The pools this host has imported, by name, sorted (from the cache file). */
int host_pool_names(char ***namesp, int *np);
void host_names_free(char **names, int n);
/*
 * Open an imported pool.  On failure *spap is NULL and err holds the
 * reason; HOST_ENOPOOL means the pool is not imported here at all.
 */
#define HOST_ENOPOOL ESRCH
int host_pool_open(const char *name, int flags, spa_t **spap, char *err, size_t errlen);

/*
 * Pool handles and the daemon (host_pool.c).
 * A command gets a pool from host_pool_open() and gives it back with
 * host_pool_close(), NEVER spa_close(): inside tarnd the pool stays open
 * (the daemon holds it) and host_pool_close() only drops the command's
 * hold and lock; run in-process (TARN_NO_DAEMON=1) it is spa_close().
 *  - host_pool_open(flags & SPA_OPEN_READONLY): the command only reads; in
 *    the daemon it shares the pool with other readers.  Without it the
 *    command has the pool to itself until host_pool_close()/unlock().
 *  - host_pool_unlock(spa): keep the pool (it cannot be exported) but let
 *    other commands in, for long waits (scrub -w, iostat INTERVAL).
 *  - a pool made by spa_create()/spa_import() is handed over with
 *    host_pool_adopt(spa): the daemon keeps it open; in-process it is
 *    spa_close()d.  (A trial import closed at once may use spa_close().)
 *  - export/destroy of a pool from host_pool_open() go through
 *    host_pool_export(spa)/host_pool_destroy(spa), which also drop it from
 *    the daemon; same results as spa_export()/spa_destroy().
 *  - host_daemon_mode(): true when the command runs inside tarnd (a scrub
 *    started there keeps running after the command returns).
 *  - host_pool_held(spa, &uncached): spa is a pool the daemon holds (so
 *    spa_readonly() tells how it was imported), not this command's own
 *    look at it; uncached: imported without a cache file entry.
 */
bool host_pool_held(const spa_t *spa, bool *uncached);
void host_pool_close(spa_t *spa);
void host_pool_unlock(spa_t *spa);
/* Take the pool's lock (exclusive) again after host_pool_unlock (a receive's commit). */
void host_pool_relock(spa_t *spa);
void host_pool_adopt(spa_t *spa);
int host_pool_export(spa_t *spa);
int host_pool_destroy(spa_t *spa);
bool host_daemon_mode(void);

/* For tarnd only: switch the registry to daemon mode and open every pool
 * of the cache file (failures are logged through logf and retried when a
 * command asks for the pool); at the end close them all. */
typedef void (*host_log_fn_t)(const char *fmt, ...);
void host_start(host_log_fn_t logf);
/* Close every held pool; pools still in use after wait_ms are left
 * unclosed (they recover at the next import).  Returns how many. */
int host_stop(int wait_ms);

/* ---- the request a command runs for (host_req.c) ---- */

/*
 * How failures reach whoever asked: host_report(verb, name, error, msg)
 * hands them to the reporter of the calling thread (set by the command
 * line around each command), by default one line on stderr.  msg NULL:
 * strerror(error).  Functions below that "report" their failures return
 * 0, or HOST_FAILED once something failed and was reported.
 */
#define HOST_FAILED 1
typedef void (*host_report_fn_t)(const char *verb, const char *name, int error,
    const char *msg);
void host_set_reporter(host_report_fn_t fn);
/* Report a failure; returns HOST_FAILED. */
int host_report(const char *verb, const char *name, int error, const char *msg);

/*
 * The daemon's connection of this thread's command (-1 in-process) and
 * the daemon's "stopping" flag: what host_cancelled() looks at.
 */
extern __thread int host_conn_fd_tls;
extern volatile bool host_stopping;
/*
 * Should a long-running command stop?  True inside tarnd when the client
 * went away (Ctrl-C on `iostat 1`) or the daemon is stopping; always
 * false in-process (a signal ends the process there).  Loops that wait
 * or repeat (iostat INTERVAL, scrub -w polling) check it each round.
 */
bool host_cancelled(void);
/*
 * The client's own stdin (which 0) and stdout (which 1), for a command
 * whose data does not pass through the socket (zfs send writes its
 * stream to stdout, receive reads one from stdin): in tarnd the
 * descriptors the client passed with its request (host_client_fd_tls,
 * set by the daemon around each operation; -1 when none came), in-process
 * simply 0 and 1.  Borrowed: never closed by the operation.
 */
extern __thread int host_client_fd_tls[2];
int host_client_fd(int which);

/*
 * Notes that are not failures ("note: ..."), and what the libraries write
 * to stderr while a command runs in tarnd: to host_err_tls when the
 * thread's caller set one (the client's stderr), else to stderr.
 */
extern __thread FILE *host_err_tls;
void host_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- the pool history of the command (host_history.c) ---- */

/*
 * The command line to record, "PROG ARGS..." (prog "zpool" or "zfs",
 * argv[0] the verb), set before the command parses argv (getopt permutes
 * it); host_history_set takes it whole (from a request), host_history_get
 * gives it back ("" when none).
 */
void host_history_begin(const char *prog, int argc, char **argv);
void host_history_set(const char *line);
const char *host_history_get(void);
/* Record it in spa's history, once per pool (after the change succeeded). */
void host_history_log(spa_t *spa);
/* Record the pool's own event (history -i): "create" or "import" pool, version, host. */
void host_history_event(spa_t *spa, const char *what);

/* ---- datasets (host_fs.c) ---- */

/* A pool opened for dataset work (lib/dsl on it). */
typedef struct host_fs {
	spa_t *hf_spa;
	dsl_pool_t *hf_dp;
} host_fs_t;
/*
 * Open the pool of dataset `name` for verb (reports "cannot open 'name':
 * dataset does not exist", or for create "no such pool"); 0 or HOST_FAILED.
 */
int host_fs_open(const char *verb, const char *name, bool readonly, host_fs_t *fs);
/* The same, and name must exist ("cannot open 'x': dataset does not exist"). */
int host_fs_open_existing(const char *name, bool readonly, host_fs_t *fs);
void host_fs_close(host_fs_t *fs);
/* posix_fs_create for dsl_pool_open's new file systems */
int host_fs_init(void *arg, objset_t *os);

/* ---- mounts ---- */

/*
 * host_mount.c: datasets mounted by the daemon (FUSE).  Everything is a
 * no-op outside tarnd (TARN_NO_DAEMON).
 *  - host_mount_attach(dp): the dsl handle asks the mount table for the
 *    `mounted` property and refuses to destroy mounted datasets (EBUSY);
 *  - host_mount_auto(): automatic mounting is on (daemon, TARN_AUTOMOUNT
 *    not 0);
 *  - host_mount_tree(dp, name, automatic): mount name and its descendants
 *    (automatic: only canmount=on with a mountpoint, silently skipping the
 *    rest); errors printed; 0 or 1;
 *  - host_unmount_tree(name, force, verb): unmount name and descendants,
 *    children first; "cannot VERB 'name': ..." on EBUSY; 0 or 1;
 *  - host_mount_any(name): something at or below name is mounted;
 *  - host_mount_pool(pool): automatic mount of a pool's datasets; errors
 *    printed ("cannot mount 'name': ..."); 0 or 1 (zpool import and
 *    create exit 1 when a mount failed, the pool staying imported);
 *  - host_mount_prop_before(dp, name, prop, &pc): before a property
 *    changes: unmount what a mountpoint or canmount change moves (busy:
 *    error, change nothing), note the old value of the others;
 *  - host_mount_prop_changed(dp, name, prop, &pc, verb): after the change
 *    (or its failure): mount again, or give the live mounts their new
 *    options (in place, or mounted again when nothing is open there);
 *    a changed mountpoint also mounts what takes it and was not mounted
 *    (canmount=on; automatic mounting on), as zfs does;
 *    when a busy mount cannot follow, "cannot VERB 'name': ...", the old
 *    value is put back and 1 returned;
 *  - host_mount_start/stop: the daemon's start (after the registry opened
 *    its pools) and stop (unmount everything, forced).
 */
void host_mount_attach(struct dsl_pool *dp);
bool host_mount_auto(void);
int host_mount_tree(struct dsl_pool *dp, const char *name, bool automatic);
int host_unmount_tree(const char *name, bool force, const char *verb);
bool host_mount_any(const char *name);
/*
 * Snapshot "fs@snap" is about to be renamed or destroyed: close it where
 * a mount of fs has it open under .zfs/snapshot.  0, or EBUSY while
 * files are open there (the zfs message: "dataset is busy").
 */
int host_mount_snap_release(const char *snap);
/*
 * Where object obj of the object set registered as oskey is, through its
 * mount ("/mnt/dir/file"), for status -v; false when that dataset is not
 * mounted or the object has no path.
 */
bool host_mount_obj_path(spa_t *spa, const char *oskey, uint64_t obj, char *out, size_t len);
/*
 * When name is mounted with an option of its own for prop (zfs mount -o
 * ro), put that value into *v, source DSL_SRC_TEMPORARY, and say so.
 */
struct dsl_prop_val;
bool host_mount_temp(const char *name, int prop, struct dsl_prop_val *v);
int host_mount_pool(const char *pool);
typedef struct host_prop_change {
	struct mnt_names *pc_down;  /* what went down, to mount again */
	bool pc_saved;          /* pc_old / pc_was_local hold the old setting */
	bool pc_was_local;      /* set on the dataset (else inherited) */
	char pc_old[64];        /* its value then (parsable) */
	uint64_t pc_mp_sum;     /* mountpoint: a sum of its value and source then (0: none) */
} host_prop_change_t;
int host_mount_prop_before(struct dsl_pool *dp, const char *name, const char *prop,
    host_prop_change_t *pc);
/*
 * Around a rename or destroy: host_mount_down takes name's subtree down
 * (force: even when files are open there; busy: "cannot VERB 'name'",
 * everything as it was, 1); host_mount_up mounts again what went down,
 * with its directories and options (legacy mounts too): under the new
 * names when `to` is given (a rename, which may also have made parents
 * from top: mounted as create -p mounts them), else under the old ones
 * (what no longer exists is skipped).
 */
int host_mount_down(struct dsl_pool *dp, const char *name, bool force, const char *verb,
    struct mnt_names **down);
void host_mount_up(struct dsl_pool *dp, const char *from, const char *to, const char *top,
    struct mnt_names *down);
int host_mount_prop_changed(struct dsl_pool *dp, const char *name, const char *prop,
    const host_prop_change_t *pc, const char *verb);
void host_mount_start(void);
void host_mount_stop(void);
/*
 * The datasets mounted now, sorted by name: names[i] at mountpoints[i]
 * (free both with host_names_free).
 */
int host_mount_list(char ***namesp, char ***mountpointsp, int *np);
/*
 * zfs mount: mount name (and nothing below it) at its mountpoint, or at
 * dir for a legacy mount (mount(8)); opts: mount options ("ro,noatime",
 * NULL for none).  all: every dataset of every pool that mounts
 * automatically (name NULL).  Reports its failures; 0 or HOST_FAILED.
 * EINVAL: opts did not parse ("invalid option 'x'" in err).
 */
int host_mount_opts_check(const char *opts, char *err, size_t errlen);
int host_mount_one(const char *name, const char *dir, const char *opts);
int host_mount_all(const char *opts);
/*
 * zfs unmount of a dataset name or a mountpoint path (what starts with
 * '/'), or all; reports its failures; 0 or HOST_FAILED.
 */
int host_unmount(const char *what, bool all, bool force);

/* ---- operations: what the command line asks of the host (host_ops.c) ---- */

/*
 * An operation takes its arguments as a JSON object and answers with
 * one: the same whether the command line runs it in-process or sends it
 * to tarnd (host_wire.h: a request names the operation and carries the
 * arguments as JSON text; the reply carries the result).  The operations
 * and their arguments are listed in host_ops.c.
 *
 * host_exec runs op on args and returns the result object (*resp, the
 * caller puts it): "ret" is 0 or HOST_FAILED; the operation's own fields
 * beside it.  collect: failures reported while it runs are gathered into
 * the result's "reports" array ([verb, name, errno, message] each),
 * for a caller in another process; else they go to the thread's reporter.
 * ENOENT: no such operation (*resp NULL); EINVAL: args is not an object.
 */
int host_exec(const char *op, json_object *args, bool collect, json_object **resp);
/*
 * Parts of a result sent while the operation runs (iostat INTERVAL: one
 * part per round): host_emit(part) hands part (consumed) to the emitter
 * the caller set for this thread; without one it is dropped.  The caller
 * gets the parts in order, before the result.  0, or EPIPE once the
 * caller went away.
 */
typedef int (*host_emit_fn_t)(void *arg, json_object *part);
void host_set_emitter(host_emit_fn_t fn, void *arg);
int host_emit(json_object *part);

#endif /* TARN_HOST_H */
