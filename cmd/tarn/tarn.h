/*
 * tarn.h — what the files of the `tarn` command share: the verb table,
 * error and usage printing, the table printer (table.c) and helpers for
 * naming and walking pools (pool.c).  Everything here is private to
 * cmd/tarn; symbols carry the cli_ prefix.
 *
 * Conventions (docs/DESIGN.md, "The command line"):
 *  - output and syntax follow zpool(8) so that a ZFS admin reads it at once;
 *  - an error is one line on stderr, "cannot VERB 'NAME': what is wrong",
 *    lowercase, naming what to do; exit status 1;
 *  - a usage error (bad option, missing argument) prints one line, then
 *    the verb's usage, and exits with status 2;
 *  - nothing that argv can hold makes the program crash.
 */
#ifndef TARN_CLI_H
#define TARN_CLI_H

#include <stdio.h>
#include <unistd.h>
#include <getopt.h>
#include "host.h"

#ifndef TARN_VERSION
#define TARN_VERSION "unknown"
#endif

/*
 * Where a command's output goes.  The command line runs in its own
 * process (the daemon runs host operations, never command code), so
 * these are the process's streams; command code prints through them.
 */
#define cli_out stdout
#define cli_err stderr
#define cli_putc(c) fputc((c), cli_out)

#define CLI_EXIT_OK    0
#define CLI_EXIT_ERROR 1
#define CLI_EXIT_USAGE 2

/* A verb of `tarn pool`. */
typedef struct cli_verb {
	const char *cv_name;
	int       (*cv_fn)(int argc, char **argv);  /* argv[0] is the verb */
	const char *cv_usage;                       /* lines after "usage:" */
} cli_verb_t;
/* pool.c, fs.c: a verb by name, or NULL. */
const cli_verb_t *cli_pool_verb(const char *name);
const cli_verb_t *cli_fs_verb(const char *name);

/* dispatch.c: run one command line (argv[0] is "tarn" or "zpool"). */
int cli_dispatch(int argc, char **argv);
void cli_usage(FILE *f);

/* pool.c */
extern __thread const char *cli_pool_prog;   /* "tarn pool", or "zpool" via the symlink */
int cli_pool_main(int argc, char **argv);
void cli_pool_usage(FILE *f);
/* Print a one-line usage error, then the verb's usage; returns 2. */
int cli_usage_error(const char *verb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Print the verb's usage to f. */
void cli_verb_usage(const char *verb, FILE *f);
/*
 * Print "cannot VERB 'NAME': MSG" (MSG from err, else strerror); returns 1.
 * An empty name: "cannot VERB: MSG" (zfs's "cannot receive new filesystem
 * stream: ...").
 */
int cli_cannot(const char *verb, const char *name, int error, const char *err);
/* Handle getopt's '?' and ':' results uniformly (returns 2). */
int cli_bad_option(const char *verb, int opt, int optopt);


/*
 * pool_tree.c: pools as the host's operation pool.info describes them
 * (host/host_op_info.c lists the fields), and reading such JSON.
 * cli_j_*: a member of o (0, NULL or false when absent); cli_j_len: an
 * array's length (0 when not one); cli_j_idx: its element i.
 */
json_object *cli_j_get(json_object *o, const char *key);
uint64_t cli_j_u64(json_object *o, const char *key);
int cli_j_int(json_object *o, const char *key);
const char *cli_j_str(json_object *o, const char *key);
bool cli_j_bool(json_object *o, const char *key);
int cli_j_len(json_object *a);
json_object *cli_j_idx(json_object *a, int i);
/* A vdev of the tree: its children, type ("raidz"), state. */
int cli_jvdev_nchildren(json_object *vd);
json_object *cli_jvdev_child(json_object *vd, int i);
bool cli_jvdev_type_is(json_object *vd, const char *type);
bool cli_jvdev_state_is(json_object *vd, vdev_state_t st);
const char *cli_jvdev_state(json_object *vd);
/* Display name of a vdev: "mirror-0", "raidz2-1", the leaf path or GUID. */
void cli_jvdev_name(json_object *vd, bool with_id, char *buf, size_t len);
/* Width of the NAME column for a tree: max(depth*2 + len(name)), >= 10. */
int cli_jtree_namewidth(json_object *vd, const char *rootname, int depth, int width);
/* Space of the pool's root or a top-level vdev; false for any other vdev. */
bool cli_jvdev_space(json_object *vd, uint64_t *size, uint64_t *alloc);
/*
 * Ask pool.info about the pools named (argc > 0), else every pool; args
 * (consumed) holds what else to describe (tree, errlog, props).  *resp
 * NULL when there is nothing to show (a failure was printed); else the
 * exit status says whether a named pool was not imported here.
 */
int cli_pool_info(const char *verb, int argc, char **argv, json_object *args,
    json_object **resp);
/*
 * Each pool of a pool.info result in order, given to fn (pool NULL when
 * it would not open, err then says why); "cannot open 'X': no such pool"
 * for one that is not imported here.  CLI_EXIT_OK, or CLI_EXIT_ERROR
 * after such a message.
 */
typedef void (*cli_pool_info_fn_t)(void *arg, json_object *pool, const char *name,
    const char *err);
int cli_pool_info_each(json_object *res, cli_pool_info_fn_t fn, void *arg);

/* table.c */
typedef struct cli_table cli_table_t;
typedef enum cli_align { CLI_LEFT, CLI_RIGHT } cli_align_t;

cli_table_t *cli_table_new(void);
/* Add a column; minwidth 0 means the header's width. */
void cli_table_column(cli_table_t *t, const char *header, cli_align_t align, int minwidth);
/* Add a row: exactly one cell per column (copied). */
void cli_table_row(cli_table_t *t, const char *const *cells);
/* A row of only its first n cells (the line ends there). */
void cli_table_row_short(cli_table_t *t, const char *const *cells, int n);
/* Print: header unless scripted; scripted rows are tab-separated. */
void cli_table_print(const cli_table_t *t, FILE *f, bool scripted);
void cli_table_free(cli_table_t *t);
/* get's -o fields (zfs get, zpool get): table.c cli_get_fields. */
enum { CLI_GET_NAME, CLI_GET_PROPERTY, CLI_GET_VALUE, CLI_GET_SOURCE, CLI_GET_NFIELDS };
int cli_get_fields(const char *arg, int fields[CLI_GET_NFIELDS], int *nfields,
    int (*usage)(const char *, const char *, ...));

/*
 * Human-readable size as zpool prints it: 1024-based, at most 5 characters
 * ("1.98G", "512M", "117K", "0").  exact: plain decimal bytes.
 */
void cli_nicenum(uint64_t n, bool exact, char *buf, size_t len);

/* JSON string with quotes and escapes. */
void cli_json_str(FILE *f, const char *s);

/* verbs (pool_*.c) */
int cli_pool_create(int argc, char **argv);
int cli_pool_destroy(int argc, char **argv);
int cli_pool_import(int argc, char **argv);
int cli_pool_export(int argc, char **argv);
int cli_pool_list(int argc, char **argv);
int cli_pool_status(int argc, char **argv);
int cli_pool_scrub(int argc, char **argv);      /* pool_scrub.c */
int cli_pool_resilver(int argc, char **argv);
int cli_pool_attach(int argc, char **argv);     /* pool_vdev.c */
int cli_pool_detach(int argc, char **argv);
int cli_pool_replace(int argc, char **argv);
int cli_pool_online(int argc, char **argv);
int cli_pool_offline(int argc, char **argv);
int cli_pool_clear(int argc, char **argv);
int cli_pool_labelclear(int argc, char **argv);
/*
 * pool_vdev.c: the absolute path of a device word, as create takes it (a
 * word without '/' names /dev/WORD); 0, or prints "cannot VERB 'WHAT'" and
 * returns 1.
 */
int cli_vdev_newpath(const char *verb, const char *what, const char *word, char *buf,
    size_t len);
/*
 * pool_vdev.c: the display name, with its number, of a vdev of a tree the
 * host answered (host_op_tree_json): "mirror-0", "raidz2-1", path or GUID.
 */
void cli_tree_vdev_name(json_object *vd, char *buf, size_t len);
/* pool_create.c: a vdev spec as create -n / add -n print it (depth: indent). */
void cli_print_spec(const spa_vdev_spec_t *s, const char *name, int depth);
/* pool_create.c: a parsed spec as words again (group keywords, absolute paths). */
json_object *cli_spec_words(const spa_vdev_spec_t *spec);
int cli_pool_sync(int argc, char **argv);
int cli_pool_add(int argc, char **argv);
int cli_pool_remove(int argc, char **argv);
int cli_pool_iostat(int argc, char **argv);     /* pool_iostat.c */
int cli_pool_history(int argc, char **argv);    /* pool_history.c */
int cli_pool_upgrade(int argc, char **argv);    /* pool_upgrade.c */
int cli_pool_get(int argc, char **argv);        /* pool_get.c */
int cli_pool_set(int argc, char **argv);

/*
 * pool_list.c: the pool's values as `list` shows them, which `get`
 * shows too.  cli_pool_prop_name: the property's name for a name or a
 * column header in any case ("ALLOC", "cap"), NULL when list has no such
 * property.  cli_pool_prop_value: its value for the pool `name` (pool:
 * as pool.info describes it, NULL when it could not be opened); 0, or
 * ENOENT for no such property.
 */
const char *cli_pool_prop_name(const char *prop);
int cli_pool_prop_value(json_object *pool, const char *name, const char *prop, bool exact,
    char *buf, size_t len);

/* pool_upgrade.c: the feature flags this build knows, in `upgrade -v` order */
typedef struct cli_feature {
	uint64_t    cf_flag;     /* SPA_FEATURE_* */
	const char *cf_name;     /* "history": feature@history */
	const char *cf_desc;
	const char *cf_why;      /* why an upgrade cannot enable it; NULL: it can */
} cli_feature_t;
extern const cli_feature_t cli_features[];
extern const size_t cli_nfeatures;

/* pool_history.c: the pool history of the command being run */
/* Keep "zpool VERB ARGS..." (argv[0] is the verb); call before getopt. */
void cli_history_begin(int argc, char **argv);
/* The same for a zfs verb ("zfs VERB ARGS...", argv[0] is the verb). */
void cli_history_begin_zfs(int argc, char **argv);
/*
 * pool_history.c: the pools of the cache file, from the host (operation
 * pool.names), as a JSON array of names (put it); NULL when they could not
 * be read ("cannot VERB 'FILE'" printed, *ret the exit status).
 */
json_object *cli_pool_names(const char *verb, int *ret);

/* pool_scrub.c: scans as status shows them */
/* zpool's "0B", "512B", "1.50M" (cli_nicenum with B below 1K). */
void cli_nicebytes(uint64_t n, char *buf, size_t len);
/*
 * The "  scan: ..." paragraph of status (nothing when never scanned) from
 * the statistics a host operation put into a JSON object (host_scan_json:
 * func, state, paused, times and byte counts); cli_scan_stat_json turns
 * them back into spa_scan_stat_t.
 */
void cli_status_scan_json(json_object *scan);
void cli_scan_paragraph(const spa_scan_stat_t *ss);
void cli_scan_stat_json(json_object *scan, spa_scan_stat_t *ss);

/* inject.c: `tarn inject` (zinject syntax; argv[0] is "inject"). */
int cli_inject(int argc, char **argv);

/* ---- `tarn fs` (zfs syntax; the `zfs` symlink): fs.c, fs_list.c ---- */

extern __thread const char *cli_fs_prog;   /* "tarn fs", or "zfs" via the symlink */
int cli_fs_main(int argc, char **argv);    /* argv[0] is "fs" or "zfs" */
void cli_fs_usage(FILE *f);
int cli_fs_usage_error(const char *verb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int cli_fs_bad_option(const char *verb, int opt, int optopt_);

int cli_fs_create(int argc, char **argv);
int cli_fs_destroy(int argc, char **argv);
int cli_fs_rename(int argc, char **argv);
int cli_fs_set(int argc, char **argv);
int cli_fs_inherit(int argc, char **argv);
/* fs_snapshot.c */
int cli_fs_snapshot(int argc, char **argv);
int cli_fs_hold(int argc, char **argv);
int cli_fs_release(int argc, char **argv);
int cli_fs_holds(int argc, char **argv);
int cli_fs_bookmark(int argc, char **argv);
/* A snapshot (delim '@') or bookmark ('#') name as zfs checks it; EINVAL + err. */
int cli_snap_name_check(const char *name, char delim, char *err, size_t errlen);
int cli_fs_snap_destroy(const char *name, bool recursive, bool clones, bool defer,
    bool dryrun, bool verbose, bool parsable);
void cli_fs_destroy_after(json_object *res, bool verbose, bool parsable);
int cli_fs_snap_rename(const char *from, const char *to, bool recursive);
int cli_fs_list(int argc, char **argv);    /* fs_list.c */
int cli_fs_get(int argc, char **argv);


int cli_fs_mount(int argc, char **argv);
int cli_fs_unmount(int argc, char **argv);
int cli_fs_upgrade(int argc, char **argv);
int cli_fs_clone(int argc, char **argv);      /* fs_clone.c */
int cli_fs_promote(int argc, char **argv);
int cli_fs_rollback(int argc, char **argv);
/* fs.c: split "p=v" (-o, set) in place into s; a usage error of verb without '='. */
int cli_fs_setting(const char *verb, char *arg, dsl_prop_setting_t *s);
int cli_fs_diff(int argc, char **argv);     /* fs_diff.c */
int cli_fs_autosnap(int argc, char **argv);  /* fs_autosnap.c */
int cli_fs_send(int argc, char **argv);      /* fs_send.c */
int cli_fs_receive(int argc, char **argv);
int cli_fs_replicate(int argc, char **argv); /* fs_replicate.c */

/*
 * call.c: run a host operation (host_exec) here or in tarnd.  args is
 * consumed; *resp is the result (put it with json_object_put; NULL when
 * none came back).  Failures the host reported are printed.  Returns
 * CLI_EXIT_OK, CLI_EXIT_ERROR when the operation failed, or CLI_EXIT_LOST.
 */
int cli_call(const char *op, json_object *args, json_object **resp);
/* arcstat.c, arc_summary.c: the daemon's ARC and tunables */
int cli_arcstat(int argc, char **argv);
int cli_arc_summary(int argc, char **argv);
/* `tarn daemon get|set ...`: argv[0] is get or set */
int cli_daemon_tunables(int argc, char **argv);
/*
 * The same for an operation that sends parts while it runs (host_emit):
 * fn gets each part (borrowed) in order, before the result; it returns
 * nonzero to say the command's output is gone (the operation is then
 * told so at its next part).
 */
typedef int (*cli_call_part_fn_t)(void *arg, json_object *part);
int cli_call_parts(const char *op, json_object *args, cli_call_part_fn_t fn, void *arg,
    json_object **resp);
/* Operations run in this process (TARN_NO_DAEMON=1), not in tarnd. */
bool cli_local(void);
bool cli_no_daemon(void);

/*
 * client.c: one host operation in the daemon: its exit status and result
 * text; partfn gets each part (host_emit) as JSON text while it runs.
 */
typedef void (*cli_part_fn_t)(void *arg, const char *text);
int cli_client_call(const char *op, const char *args, const char *history, char **resultp,
    cli_part_fn_t partfn, void *partarg);
/* client.c: `tarn daemon start|stop|status` (argv[0] is "daemon"). */
int cli_client_daemon(int argc, char **argv);
/* The client's exit status when the daemon died during the command. */
#define CLI_EXIT_LOST     255

#endif /* TARN_CLI_H */
