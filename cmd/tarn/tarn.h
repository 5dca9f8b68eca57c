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
#include "spa.h"

#ifndef TARN_VERSION
#define TARN_VERSION "unknown"
#endif

/*
 * Where a command's output goes: stdout/stderr when tarn runs a command
 * itself, the client's connection when the daemon runs it for a client.
 * Per thread, because the daemon serves several clients at once.  All
 * command code prints through these, never to stdout/stderr directly.
 */
extern __thread FILE *cli_out_tls, *cli_err_tls;
#define cli_out (cli_out_tls ? cli_out_tls : stdout)
#define cli_err (cli_err_tls ? cli_err_tls : stderr)
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

/* pool.c */
extern const char *cli_pool_prog;   /* "tarn pool", or "zpool" via the symlink */
int cli_pool_main(int argc, char **argv);
void cli_pool_usage(FILE *f);
/* Print a one-line usage error, then the verb's usage; returns 2. */
int cli_usage_error(const char *verb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Print the verb's usage to f. */
void cli_verb_usage(const char *verb, FILE *f);
/* Print "cannot VERB 'NAME': MSG" (MSG from err, else strerror); returns 1. */
int cli_cannot(const char *verb, const char *name, int error, const char *err);
/* Handle getopt's '?' and ':' results uniformly (returns 2). */
int cli_bad_option(const char *verb, int opt, int optopt);

/* The pools this host has imported, by name, sorted (from the cache file). */
int cli_pool_names(char ***namesp, int *np);
void cli_names_free(char **names, int n);
/*
 * Open an imported pool.  On failure *spap is NULL and err holds the
 * reason; CLI_ENOPOOL means the pool is not imported here at all.
 */
#define CLI_ENOPOOL ESRCH
int cli_pool_open(const char *name, int flags, spa_t **spap, char *err, size_t errlen);

/* Display name of a vdev: "mirror-0", "raidz2-1", the leaf path or GUID. */
void cli_vdev_name(const vdev_t *vd, bool with_id, char *buf, size_t len);
/* Width of the NAME column for a tree: max(depth*2 + len(name)), >= 10. */
int cli_tree_namewidth(const vdev_t *vd, const char *rootname, int depth, int width);
/* Healthy: ONLINE and no error counts anywhere below vd. */
bool cli_vdev_healthy(const vdev_t *vd);

/* table.c */
typedef struct cli_table cli_table_t;
typedef enum cli_align { CLI_LEFT, CLI_RIGHT } cli_align_t;

cli_table_t *cli_table_new(void);
/* Add a column; minwidth 0 means the header's width. */
void cli_table_column(cli_table_t *t, const char *header, cli_align_t align, int minwidth);
/* Add a row: exactly one cell per column (copied). */
void cli_table_row(cli_table_t *t, const char *const *cells);
/* Print: header unless scripted; scripted rows are tab-separated. */
void cli_table_print(const cli_table_t *t, FILE *f, bool scripted);
void cli_table_free(cli_table_t *t);

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

#endif /* TARN_CLI_H */
