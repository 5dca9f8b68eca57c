/*
 * pool_import.c — `tarn pool import` and `tarn pool export`.
 *
 * import without a pool lists what the labels on the scanned devices
 * describe (zpool's "   pool: / id: / state: / action: / config:" blocks),
 * leaving out pools this host already has imported; with a name or numeric
 * id it imports that pool, optionally under a new name; -a imports all.
 * -F imports from the newest txg whose metadata verifies, going back
 * through the uberblock ring when the newest ones are damaged, and says
 * (as zpool) to which date the pool returned and roughly how many
 * seconds of transactions were discarded; -n with -F only says so, after
 * a read-only trial that leaves no trace.  -m imports a pool whose log
 * device is missing (without it: its unreplayed intent log is lost).
 *
 * Here: the options, -d directories made absolute (the host's directory
 * is not this process's), and the text; the host scans, imports and
 * exports (host/host_op_import.c: pool.import_list, pool.import,
 * pool.export).  The listing prints the candidates' trees as the host
 * answers them (host_op_tree_json, with each node's state).
 */
#include "tarn.h"

#include <ctype.h>
#include <getopt.h>
#include <sys/stat.h>
#include <time.h>

#define IMPORT_MAX_DIRS    64

typedef struct import_opts {
	const char       *io_dirs[IMPORT_MAX_DIRS];
	int               io_ndirs;
	bool              io_readonly; /* -o readonly=on */
	bool              io_no_cache; /* -o cachefile=none */
	bool              io_force;    /* -f */
	bool              io_all;
	bool              io_nomount;  /* -N */
	bool              io_rewind;   /* -F */
	bool              io_dryrun;   /* -n */
	bool              io_missing_log; /* -m */
} import_opts_t;

static int
import_prop(import_opts_t *io, const char *arg)
{
	if (strcmp(arg, "readonly=on") == 0) {
		io->io_readonly = true;
	} else if (strcmp(arg, "readonly=off") == 0) {
		io->io_readonly = false;
	} else if (strcmp(arg, "cachefile=none") == 0) {
		io->io_no_cache = true;
	} else {
		return (cli_usage_error("import", "property '%s' is not supported "
		    "at import (supported: readonly=on|off, cachefile=none)", arg));
	}
	return (0);
}

static void
import_opts_fini(import_opts_t *io)
{
	for (int i = 0; i < io->io_ndirs; i++)
		tarn_free((void *)io->io_dirs[i]);
	io->io_ndirs = 0;
}

static int
import_add_dir(import_opts_t *io, const char *dir)
{
	struct stat st;

	if (io->io_ndirs >= IMPORT_MAX_DIRS)
		return (cli_usage_error("import", "too many -d options (at most %d)",
		    IMPORT_MAX_DIRS));
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(cli_err, "cannot search '%s': %s; -d takes a directory "
		    "holding the pool's device files\n", dir,
		    errno == ENOENT ? "no such directory" : "not a directory");
		return (CLI_EXIT_ERROR);
	}
	/* the engine records the paths it finds: make them absolute */
	char *abs = realpath(dir, NULL);
	io->io_dirs[io->io_ndirs++] = tarn_strdup(abs != NULL ? abs : dir);
	free(abs);
	return (0);
}

static int
import_parse_args(int argc, char **argv, import_opts_t *io)
{
	int c, error;

	while ((c = getopt(argc, argv, ":d:fmNo:Fna")) != -1) {
		switch (c) {
		case 'd':
			if ((error = import_add_dir(io, optarg)) != 0)
				return (error);
			break;
		case 'f': io->io_force = true; break;
		case 'm': io->io_missing_log = true; break;
		case 'N': io->io_nomount = true; break;
		case 'o':
			if ((error = import_prop(io, optarg)) != 0)
				return (error);
			break;
		case 'F': io->io_rewind = true; break;
		case 'n': io->io_dryrun = true; break;
		case 'a': io->io_all = true; break;
		default:
			return (cli_bad_option("import", c, optopt));
		}
	}
	if (io->io_dryrun && !io->io_rewind)
		return (cli_usage_error("import", "-n is only valid with -F"));
	return (0);
}

/* The request's common arguments: directories and options. */
static json_object *
import_args(const import_opts_t *io)
{
	json_object *args = json_object_new_object();

	if (io->io_ndirs > 0) {
		json_object *dirs = json_object_new_array_ext(io->io_ndirs);
		for (int i = 0; i < io->io_ndirs; i++)
			json_object_array_add(dirs, json_object_new_string(io->io_dirs[i]));
		json_object_object_add(args, "dirs", dirs);
	}
	json_object_object_add(args, "readonly", json_object_new_boolean(io->io_readonly));
	json_object_object_add(args, "no_cache", json_object_new_boolean(io->io_no_cache));
	json_object_object_add(args, "force", json_object_new_boolean(io->io_force));
	json_object_object_add(args, "missing_log",
	    json_object_new_boolean(io->io_missing_log));
	json_object_object_add(args, "rewind", json_object_new_boolean(io->io_rewind));
	json_object_object_add(args, "dryrun", json_object_new_boolean(io->io_dryrun));
	json_object_object_add(args, "nomount", json_object_new_boolean(io->io_nomount));
	return (args);
}

static const char *
jstr(json_object *o, const char *key)
{
	const char *v = json_object_get_string(json_object_object_get(o, key));

	return (v != NULL ? v : "");
}

/* A node's name in the listing: the pool's for the root. */
static void
import_node_name(json_object *vd, const char *poolname, char *buf, size_t len)
{
	if (strcmp(jstr(vd, "type"), "root") == 0)
		(void) snprintf(buf, len, "%s", poolname);
	else
		cli_tree_vdev_name(vd, buf, len);
}

/* Width of the NAME column: max(depth*2 + len(name)), at least 10. */
static int
import_tree_width(json_object *vd, const char *poolname, int depth, int width)
{
	char name[VDEV_PATH_MAX + 32];
	json_object *kids;

	import_node_name(vd, poolname, name, sizeof (name));
	width = MAX(width, depth + (int)strlen(name));
	width = MAX(width, 10);
	if (json_object_object_get_ex(vd, "children", &kids))
		for (size_t c = 0; c < json_object_array_length(kids); c++)
			width = import_tree_width(json_object_array_get_idx(kids, c),
			    poolname, depth + 2, width);
	return (width);
}

static void
import_print_tree(json_object *vd, const char *poolname, int depth, int width)
{
	char name[VDEV_PATH_MAX + 32];
	const char *state = jstr(vd, "state");
	json_object *kids;
	bool leaf = !json_object_object_get_ex(vd, "children", &kids);

	import_node_name(vd, poolname, name, sizeof (name));
	fprintf(cli_out, "\t%*s%-*s  %s", depth, "", width - depth, name, state);
	if (leaf && strcmp(state, vdev_state_name(VDEV_STATE_CANT_OPEN)) == 0)
		fprintf(cli_out, "  cannot open");
	cli_putc('\n');
	if (leaf)
		return;
	/* the root's children: the data vdevs, then the "special" and "logs" sections */
	bool root = strcmp(jstr(vd, "type"), "root") == 0;
	static const char *const cls[][2] = { { "", "" }, { "special", "special" },
	    { "log", "logs" } };
	for (int k = 0; k < (root ? 3 : 1); k++) {
		bool head = false;
		for (size_t c = 0; c < json_object_array_length(kids); c++) {
			json_object *kid = json_object_array_get_idx(kids, c);
			if (root && strcmp(jstr(kid, "class"), cls[k][0]) != 0)
				continue;
			if (k > 0 && !head) {
				fprintf(cli_out, "\t%s\n", cls[k][1]);
				head = true;
			}
			import_print_tree(kid, poolname, depth + 2, width);
		}
	}
}

static void
import_print_cand(json_object *c)
{
	const char *name = jstr(c, "name"), *st = jstr(c, "state");
	json_object *tree;

	fprintf(cli_out, "   pool: %s\n", name);
	fprintf(cli_out, "     id: %" PRIu64 "\n",
	    json_object_get_uint64(json_object_object_get(c, "guid")));
	fprintf(cli_out, "  state: %s\n", st);
	if (strcmp(st, vdev_state_name(VDEV_STATE_CANT_OPEN)) == 0) {
		fprintf(cli_out, " status: One or more devices are missing or damaged.\n"
		    " action: The pool cannot be imported.  Bring the missing "
		    "devices back\n\t(or add their directory with -d) and try again.\n");
	} else if (json_object_get_boolean(json_object_object_get(c, "active"))) {
		fprintf(cli_out, " status: The pool was not exported; another system may "
		    "still use it.\n action: Import it by name or numeric id with -f, once "
		    "you are sure\n\tnothing else has it open.\n");
	} else if (json_object_object_get_ex(c, "missing_log", NULL)) {
		fprintf(cli_out, " status: The log device %s is missing from the system.\n"
		    " action: The pool can be imported using its name or numeric identifier and\n"
		    "\tthe '-m' flag; the intent log not yet replayed on that device is lost.\n",
		    jstr(c, "missing_log"));
	} else if (strcmp(st, vdev_state_name(VDEV_STATE_DEGRADED)) == 0) {
		fprintf(cli_out, " status: One or more devices are missing or damaged.\n"
		    " action: The pool can be imported despite the missing devices, "
		    "with less\n\tredundancy than it was built with.\n");
	} else {
		fprintf(cli_out, " action: Import it by name or by numeric id.\n");
	}
	fprintf(cli_out, " config:\n\n");
	if (json_object_object_get_ex(c, "tree", &tree))
		import_print_tree(tree, name, 0, import_tree_width(tree, name, 0, 0));
}

/* No pool named: what could be imported, from the host's scan. */
static int
import_list(const import_opts_t *io)
{
	json_object *res, *pools;
	int ret = cli_call("pool.import_list", import_args(io), &res);
	size_t n = 0;

	if (ret != CLI_EXIT_OK || !json_object_object_get_ex(res, "pools", &pools)) {
		json_object_put(res);
		return (ret != CLI_EXIT_OK ? ret : CLI_EXIT_ERROR);
	}
	n = json_object_array_length(pools);
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			cli_putc('\n');
		import_print_cand(json_object_array_get_idx(pools, i));
	}
	json_object_put(res);
	if (n == 0) {
		fprintf(cli_err, "no pools available to import\n");
		return (CLI_EXIT_ERROR);
	}
	return (CLI_EXIT_OK);
}

/*
 * What zpool says after a rewind: the date of the state the pool went
 * back to and roughly how much time of transactions was discarded.
 */
static void
import_rewind_report(json_object *imp, bool dryrun)
{
	json_object *jwhen;
	char date[128];
	struct tm tm;

	if (!json_object_object_get_ex(imp, "when", &jwhen))
		return;
	uint64_t when = json_object_get_uint64(jwhen);
	uint64_t newest = json_object_get_uint64(json_object_object_get(imp, "newest"));
	const char *name = jstr(imp, "name");
	time_t t = (time_t)when;
	if (when == 0 || localtime_r(&t, &tm) == NULL ||
	    strftime(date, sizeof (date), "%c", &tm) == 0)
		return;
	if (dryrun)
		fprintf(cli_out, "Would be able to return %s to its state as of %s.\n",
		    name, date);
	else
		fprintf(cli_out, "Pool %s returned to its state as of %s.\n", name, date);
	int64_t loss = (int64_t)newest - (int64_t)when;
	if (loss > 120)
		fprintf(cli_out, "%s approximately %" PRId64 " minutes of transactions.\n",
		    dryrun ? "Would discard" : "Discarded", (loss + 30) / 60);
	else if (loss > 0)
		fprintf(cli_out, "%s approximately %" PRId64 " seconds of transactions.\n",
		    dryrun ? "Would discard" : "Discarded", loss);
}

/*
 * Import one pool (which set) or all (-a): the host's pool.import; then
 * what each rewind discarded.  *triedp: how many -a tried (-1: unknown).
 */
static int
import_call(const import_opts_t *io, json_object *args, int *triedp)
{
	json_object *res, *imported, *tried;
	int ret = cli_call("pool.import", args, &res);

	if (json_object_object_get_ex(res, "imported", &imported))
		for (size_t i = 0; i < json_object_array_length(imported); i++)
			import_rewind_report(json_object_array_get_idx(imported, i),
			    io->io_dryrun);
	*triedp = json_object_object_get_ex(res, "tried", &tried) ?
	    json_object_get_int(tried) : -1;
	json_object_put(res);
	return (ret);
}

static int
import_one(const import_opts_t *io, const char *which, const char *newname)
{
	char err[1024] = "";
	int tried;

	if (newname != NULL && spa_name_validate(newname, err, sizeof (err)) != 0) {
		char msg[sizeof (err) + 64];
		(void) snprintf(msg, sizeof (msg), "invalid new name '%s': %s",
		    newname, err);
		return (cli_cannot("import", which, EINVAL, msg));
	}
	json_object *args = import_args(io);
	json_object_object_add(args, "which", json_object_new_string(which));
	if (newname != NULL)
		json_object_object_add(args, "newname", json_object_new_string(newname));
	return (import_call(io, args, &tried));
}

static int
import_all(const import_opts_t *io)
{
	json_object *args = import_args(io);
	int tried, ret;

	json_object_object_add(args, "all", json_object_new_boolean(true));
	ret = import_call(io, args, &tried);
	if (tried == 0)
		fprintf(cli_err, "no pools available to import\n");
	return (ret);
}

static int import_main(import_opts_t *io, int argc, char **argv);

int
cli_pool_import(int argc, char **argv)
{
	import_opts_t io = { 0 };
	int error;

	cli_history_begin(argc, argv);
	if ((error = import_parse_args(argc, argv, &io)) != 0) {
		import_opts_fini(&io);
		return (error);
	}
	error = import_main(&io, argc - optind, argv + optind);
	import_opts_fini(&io);
	return (error);
}

static int
import_main(import_opts_t *iop, int argc, char **argv)
{
	import_opts_t io = *iop;

	if (io.io_all) {
		if (argc > 0)
			return (cli_usage_error("import", "-a takes no pool names"));
		return (import_all(&io));
	}
	if (argc == 0) {
		if (io.io_rewind)
			return (cli_usage_error("import", "-F needs a pool name or id"));
		return (import_list(&io));
	}
	if (argc > 2)
		return (cli_usage_error("import", "too many arguments"));
	if (argv[0][0] == '\0')
		return (cli_cannot("import", argv[0], ENOENT, "no such pool available"));
	return (import_one(&io, argv[0], argc == 2 ? argv[1] : NULL));
}

int
cli_pool_export(int argc, char **argv)
{
	bool force = false, all = false;
	json_object *args, *res;
	int c, r;

	cli_history_begin(argc, argv);
	while ((c = getopt(argc, argv, ":fa")) != -1) {
		if (c == 'f')
			force = true;
		else if (c == 'a')
			all = true;
		else
			return (cli_bad_option("export", c, optopt));
	}
	argc -= optind;
	argv += optind;
	if (all && argc > 0)
		return (cli_usage_error("export", "-a takes no pool names"));
	if (!all && argc < 1)
		return (cli_usage_error("export", "missing pool argument"));
	args = json_object_new_object();
	json_object_object_add(args, "all", json_object_new_boolean(all));
	json_object_object_add(args, "force", json_object_new_boolean(force));
	if (!all) {
		json_object *names = json_object_new_array_ext(argc);
		for (int i = 0; i < argc; i++)
			json_object_array_add(names, json_object_new_string(argv[i]));
		json_object_object_add(args, "names", names);
	}
	r = cli_call("pool.export", args, &res);
	json_object_put(res);
	return (r);
}
