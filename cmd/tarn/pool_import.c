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
 * a read-only trial that leaves no trace.
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
	spa_import_opts_t io_spa;
	bool              io_all;
	bool              io_nomount;  /* -N */
	bool              io_rewind;   /* -F */
	bool              io_dryrun;   /* -n */
} import_opts_t;

static int
import_prop(import_opts_t *io, const char *arg)
{
	if (strcmp(arg, "readonly=on") == 0) {
		io->io_spa.sio_flags |= SPA_OPEN_READONLY;
	} else if (strcmp(arg, "readonly=off") == 0) {
		io->io_spa.sio_flags &= ~SPA_OPEN_READONLY;
	} else if (strcmp(arg, "cachefile=none") == 0) {
		io->io_spa.sio_no_cache = true;
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

	while ((c = getopt(argc, argv, ":d:fNo:Fna")) != -1) {
		switch (c) {
		case 'd':
			if ((error = import_add_dir(io, optarg)) != 0)
				return (error);
			break;
		case 'f': io->io_spa.sio_force = true; break;
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

/* Is a pool with this GUID imported on this host (in the cache file)? */
static bool
import_is_imported(uint64_t guid)
{
	spa_cache_entry_t *ents;
	bool found = false;
	int n;

	if (spa_cache_read(&ents, &n) != 0)
		return (false);
	for (int i = 0; i < n; i++)
		found |= ents[i].sce_guid == guid;
	spa_cache_free(ents, n);
	return (found);
}

/*
 * Health of a candidate's (unopened) tree from which leaves were found:
 * stored in vdev_state of each node.  Returns the node's state.
 */
static vdev_state_t
import_tree_state(vdev_t *vd)
{
	int bad = 0, degraded = 0;

	if (vd->vdev_children == 0) {
		bool missing = vd->vdev_type == VDEV_TYPE_MISSING ||
		    vd->vdev_state == VDEV_STATE_CANT_OPEN ||
		    vd->vdev_state == VDEV_STATE_FAULTED ||
		    vd->vdev_state == VDEV_STATE_REMOVED;
		vd->vdev_state = missing ? VDEV_STATE_CANT_OPEN : VDEV_STATE_HEALTHY;
		return (vd->vdev_state);
	}
	for (int c = 0; c < vd->vdev_children; c++) {
		vdev_state_t s = import_tree_state(vd->vdev_child[c]);
		bad += s == VDEV_STATE_CANT_OPEN;
		degraded += s == VDEV_STATE_DEGRADED;
	}
	int tolerated = vd->vdev_type == VDEV_TYPE_MIRROR ? vd->vdev_children - 1 :
	    vd->vdev_type == VDEV_TYPE_RAIDZ ? vd->vdev_nparity : 0;
	if (bad > tolerated)
		vd->vdev_state = VDEV_STATE_CANT_OPEN;
	else if (bad > 0 || degraded > 0)
		vd->vdev_state = VDEV_STATE_DEGRADED;
	else
		vd->vdev_state = VDEV_STATE_HEALTHY;
	return (vd->vdev_state);
}

static void
import_print_tree(const vdev_t *vd, const char *poolname, int depth, int width)
{
	char name[VDEV_PATH_MAX + 32];

	if (vd->vdev_type == VDEV_TYPE_ROOT)
		(void) snprintf(name, sizeof (name), "%s", poolname);
	else
		cli_vdev_name(vd, true, name, sizeof (name));
	fprintf(cli_out, "\t%*s%-*s  %s", depth, "", width - depth, name,
	    vdev_state_name(vd->vdev_state));
	if (vd->vdev_children == 0 && vd->vdev_state == VDEV_STATE_CANT_OPEN)
		fprintf(cli_out, "  cannot open");
	cli_putc('\n');
	for (int c = 0; c < vd->vdev_children; c++)
		import_print_tree(vd->vdev_child[c], poolname, depth + 2, width);
}

static void
import_print_cand(spa_import_cand_t *c)
{
	vdev_state_t st = c->sic_tree != NULL ? import_tree_state(c->sic_tree) :
	    VDEV_STATE_CANT_OPEN;

	if (!c->sic_can_open)
		st = VDEV_STATE_CANT_OPEN;
	fprintf(cli_out, "   pool: %s\n", c->sic_name);
	fprintf(cli_out, "     id: %" PRIu64 "\n", c->sic_guid);
	fprintf(cli_out, "  state: %s\n", vdev_state_name(st));
	if (st == VDEV_STATE_CANT_OPEN) {
		fprintf(cli_out, " status: One or more devices are missing or damaged.\n"
		    " action: The pool cannot be imported.  Bring the missing "
		    "devices back\n\t(or add their directory with -d) and try again.\n");
	} else if (c->sic_state == POOL_STATE_ACTIVE) {
		fprintf(cli_out, " status: The pool was not exported; another system may "
		    "still use it.\n action: Import it by name or numeric id with -f, once "
		    "you are sure\n\tnothing else has it open.\n");
	} else if (st == VDEV_STATE_DEGRADED) {
		fprintf(cli_out, " status: One or more devices are missing or damaged.\n"
		    " action: The pool can be imported despite the missing devices, "
		    "with less\n\tredundancy than it was built with.\n");
	} else {
		fprintf(cli_out, " action: Import it by name or by numeric id.\n");
	}
	fprintf(cli_out, " config:\n\n");
	if (c->sic_tree != NULL)
		import_print_tree(c->sic_tree, c->sic_name, 0,
		    cli_tree_namewidth(c->sic_tree, c->sic_name, 0, 0));
}

/* Candidates worth showing: not destroyed, not imported here already. */
static bool
import_cand_visible(const spa_import_cand_t *c)
{
	return (c->sic_state != POOL_STATE_DESTROYED &&
	    !(c->sic_state == POOL_STATE_ACTIVE && import_is_imported(c->sic_guid)));
}

static int
import_scan(const import_opts_t *io, spa_import_cand_t **cands, int *n)
{
	int error = spa_import_scan(io->io_ndirs > 0 ? io->io_dirs : NULL,
	    io->io_ndirs, cands, n);

	if (error != 0) {
		fprintf(cli_err, "cannot search for pools: %s\n", tarn_strerror(error));
		return (CLI_EXIT_ERROR);
	}
	return (0);
}

static int
import_list(const import_opts_t *io)
{
	spa_import_cand_t *cands;
	int n, shown = 0, ret;

	if ((ret = import_scan(io, &cands, &n)) != 0)
		return (ret);
	for (int i = 0; i < n; i++) {
		if (!import_cand_visible(&cands[i]))
			continue;
		if (shown++ > 0)
			cli_putc('\n');
		import_print_cand(&cands[i]);
	}
	spa_import_cands_free(cands, n);
	if (shown == 0) {
		fprintf(cli_err, "no pools available to import\n");
		return (CLI_EXIT_ERROR);
	}
	return (CLI_EXIT_OK);
}

/*
 * Find the candidates named (or numbered) `which`, destroyed pools aside:
 * returns how many match; the last one's GUID, name and newest txg.
 */
static int
import_find_cand(const import_opts_t *io, const char *which, uint64_t *guidp,
    char *name, size_t namelen, uint64_t *txgp)
{
	spa_import_cand_t *cands;
	int n, found = 0;

	*guidp = 0;
	*txgp = 0;
	if (spa_import_scan(io->io_ndirs > 0 ? io->io_dirs : NULL, io->io_ndirs,
	    &cands, &n) != 0)
		return (0);
	for (int i = 0; i < n; i++) {
		char guid[32];
		(void) snprintf(guid, sizeof (guid), "%" PRIu64, cands[i].sic_guid);
		if (cands[i].sic_state == POOL_STATE_DESTROYED ||
		    (strcmp(cands[i].sic_name, which) != 0 && strcmp(guid, which) != 0))
			continue;
		found++;
		*guidp = cands[i].sic_guid;
		*txgp = MAX(*txgp, cands[i].sic_txg);
		(void) snprintf(name, namelen, "%s", cands[i].sic_name);
	}
	spa_import_cands_free(cands, n);
	return (found);
}

/*
 * The name the pool would get must not belong to another imported pool:
 * 0, or EEXIST with the message in err.
 */
static int
import_name_free(const import_opts_t *io, const char *which, const char *newname,
    char *err, size_t errlen)
{
	char name[SPA_NAME_MAX + 1];
	uint64_t guid, txg;
	spa_cache_entry_t *ents;
	int n, error = 0;

	if (io->io_spa.sio_no_cache || (io->io_spa.sio_flags & SPA_OPEN_READONLY))
		return (0);
	if (import_find_cand(io, which, &guid, name, sizeof (name), &txg) != 1)
		return (0);   /* none or ambiguous: spa_import says which */
	const char *target = newname != NULL ? newname : name;
	if (spa_cache_read(&ents, &n) != 0)
		return (0);
	for (int i = 0; i < n && error == 0; i++) {
		if (strcmp(ents[i].sce_name, target) == 0 && ents[i].sce_guid != guid) {
			(void) snprintf(err, errlen, "a pool named '%s' is already "
			    "imported; give a new name: import %s NEWNAME", target, which);
			error = SET_ERROR(EEXIST);
		}
	}
	spa_cache_free(ents, n);
	return (error);
}

/*
 * The pool's uberblocks as its devices hold them (newest first), read
 * before the import so that a rewind can say what it discards; *np is 0
 * when they cannot be read.
 */
static void
import_ubs(const import_opts_t *io, const char *which, uberblock_t **ubsp, int *np)
{
	spa_import_cand_t *cands;
	int n;

	*ubsp = NULL;
	*np = 0;
	if (spa_import_scan(io->io_ndirs > 0 ? io->io_dirs : NULL, io->io_ndirs,
	    &cands, &n) != 0)
		return;
	for (int i = 0; i < n && *np == 0; i++) {
		spa_import_cand_t *c = &cands[i];
		char guid[32];
		(void) snprintf(guid, sizeof (guid), "%" PRIu64, c->sic_guid);
		if (c->sic_state == POOL_STATE_DESTROYED || c->sic_tree == NULL ||
		    (strcmp(c->sic_name, which) != 0 && strcmp(guid, which) != 0))
			continue;
		(void) vdev_open(c->sic_tree, true);   /* what opens is enough */
		(void) vdev_uberblock_collect(c->sic_tree, c->sic_guid, ubsp, np);
		vdev_close(c->sic_tree);
	}
	spa_import_cands_free(cands, n);
}

/*
 * What zpool says after a rewind: the date of the state the pool went
 * back to and roughly how much time of transactions was discarded.
 */
static void
import_rewind_report(const char *name, bool dryrun, const uberblock_t *ubs, int n,
    uint64_t txg)
{
	uint64_t when = 0;
	char date[128];
	struct tm tm;

	for (int i = 0; i < n && when == 0; i++)
		if (ubs[i].ub_txg == txg)
			when = ubs[i].ub_timestamp;
	time_t t = (time_t)when;
	if (when == 0 || localtime_r(&t, &tm) == NULL ||
	    strftime(date, sizeof (date), "%c", &tm) == 0)
		return;
	if (dryrun)
		fprintf(cli_out, "Would be able to return %s to its state as of %s.\n",
		    name, date);
	else
		fprintf(cli_out, "Pool %s returned to its state as of %s.\n", name, date);
	int64_t loss = (int64_t)ubs[0].ub_timestamp - (int64_t)when;
	if (loss > 120)
		fprintf(cli_out, "%s approximately %" PRId64 " minutes of transactions.\n",
		    dryrun ? "Would discard" : "Discarded", (loss + 30) / 60);
	else if (loss > 0)
		fprintf(cli_out, "%s approximately %" PRId64 " seconds of transactions.\n",
		    dryrun ? "Would discard" : "Discarded", loss);
}

/*
 * -F: import from the newest txg whose tree verifies, going back through
 * the uberblock ring as far as needed (sio_rewind_txg UINT64_MAX).  With
 * -n the trial is read-only and leaves no trace.  Returns 0 and the pool
 * on success, having said what was (or would be) discarded.
 */
static int
import_rewind(const import_opts_t *io, const spa_import_opts_t *base,
    const char *which, spa_t **spap, char *err, size_t errlen)
{
	spa_import_opts_t so = *base;
	uberblock_t *ubs;
	int n, error;

	import_ubs(io, which, &ubs, &n);
	if (io->io_dryrun) {
		so.sio_flags |= SPA_OPEN_READONLY;
		so.sio_no_cache = true;
	}
	so.sio_rewind_txg = UINT64_MAX;
	err[0] = '\0';
	error = spa_import(which, io->io_ndirs > 0 ? io->io_dirs : NULL,
	    io->io_ndirs, &so, spap, err, errlen);
	if (error == 0)
		import_rewind_report(spa_name(*spap), io->io_dryrun, ubs, n,
		    spa_loaded_txg(*spap));
	tarn_free(ubs);
	return (error);
}

static int
import_one(const import_opts_t *io, const char *which, const char *newname)
{
	spa_import_opts_t so = io->io_spa;
	spa_t *spa = NULL;
	char err[1024] = "";
	int error;

	so.sio_newname = newname;
	if (newname != NULL && spa_name_validate(newname, err, sizeof (err)) != 0) {
		char msg[sizeof (err) + 64];
		(void) snprintf(msg, sizeof (msg), "invalid new name '%s': %s",
		    newname, err);
		return (cli_cannot("import", which, EINVAL, msg));
	}
	if (io->io_dryrun) {
		/* -Fn: a read-only trial that leaves no trace */
		error = import_rewind(io, &so, which, &spa, err, sizeof (err));
		if (error == 0)
			spa_close(spa);
		return (error == 0 ? CLI_EXIT_OK : cli_cannot("import", which, error, err));
	}
	if ((error = import_name_free(io, which, newname, err, sizeof (err))) != 0)
		return (cli_cannot("import", which, error, err));
	if (io->io_rewind)
		error = import_rewind(io, &so, which, &spa, err, sizeof (err));
	else
		error = spa_import(which, io->io_ndirs > 0 ? io->io_dirs : NULL,
		    io->io_ndirs, &so, &spa, err, sizeof (err));
	if (error != 0) {
		if ((error == EIO || error == ECKSUM) && !io->io_rewind &&
		    strstr(err, "-F") == NULL && strlen(err) + 60 < sizeof (err))
			(void) strcat(err, "; -F may recover it by discarding the "
			    "last transactions");
		return (cli_cannot("import", which, error, err));
	}
	host_history_event(spa, "import");
	host_history_log(spa);
	/* in-process, a resilver the import started ends before we exit */
	if (!host_daemon_mode() && cli_scan_active(spa, SPA_SCAN_RESILVER))
		(void) spa_scan_wait(spa);
	if (spa_readonly(spa) && !so.sio_no_cache && !host_daemon_mode())
		fprintf(cli_err, "note: '%s' was opened read-only; without the daemon a "
		    "read-only import is not remembered, so later commands will not "
		    "find it\n", spa_name(spa));
	char pname[SPA_NAME_MAX + 1];
	(void) snprintf(pname, sizeof (pname), "%s", spa_name(spa));
	host_pool_adopt(spa);
	/* as zpool: imported, but a dataset that did not mount is an error */
	if (!io->io_nomount)
		return (host_mount_pool(pname));
	return (CLI_EXIT_OK);
}

static int
import_all(const import_opts_t *io)
{
	spa_import_cand_t *cands;
	int n, ret, tried = 0;

	if ((ret = import_scan(io, &cands, &n)) != 0)
		return (ret);
	for (int i = 0; i < n; i++) {
		char guid[32];
		if (!import_cand_visible(&cands[i]) || !cands[i].sic_can_open)
			continue;
		if (cands[i].sic_state == POOL_STATE_ACTIVE && !io->io_spa.sio_force)
			continue;
		(void) snprintf(guid, sizeof (guid), "%" PRIu64, cands[i].sic_guid);
		tried++;
		if (import_one(io, guid, NULL) != 0)
			ret = CLI_EXIT_ERROR;
	}
	spa_import_cands_free(cands, n);
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
