/*
 * pool_status.c — `tarn pool status [-xvpj] [pool...]` in zpool's layout:
 *
 *	  pool: tank
 *	 state: ONLINE
 *	status: ...      why it is not well, and
 *	action: ...      what to do (zpool's words; none when all is well)
 *	  scan: ...      the last or running scrub/resilver (pool_scrub.c)
 *	config:
 *
 *		NAME        STATE     READ WRITE CKSUM
 *		tank        ONLINE       0     0     0
 *		  mirror-0  ONLINE       0     0     0
 *		    /tmp/a  ONLINE       0     0     0
 *
 *	errors: No known data errors   (or "N data errors, use '-v' for a list";
 *	                                -v lists the damaged files by path where
 *	                                their dataset is mounted, as zpool does,
 *	                                else each block as DATASET:<0xOBJ> ...)
 *
 * -x shows only pools that are not healthy ("all pools are healthy" when
 * none): a pool is healthy when nothing is missing, offline or faulted, no
 * device has error counts, no data errors are logged and no resilver runs
 * (an old format version alone does not count, as in zpool).  -p prints
 * exact error counts, -j prints JSON.
 */
#include "tarn.h"
#include "dsl.h"

#include <getopt.h>
#include <limits.h>

typedef struct status_opts {
	bool so_explain;   /* -x */
	bool so_verbose;   /* -v */
	bool so_exact;     /* -p */
	bool so_json;      /* -j */
} status_opts_t;

/* One row of the config tree and the rows below it. */
static void
status_vdev(const vdev_t *vd, const char *poolname, int depth, int width, bool exact,
    bool resilvering)
{
	const vdev_stat_t *vs = vdev_stat(vd);
	char name[VDEV_PATH_MAX + 32], r[32], w[32], c[32];

	if (vdev_type(vd) == VDEV_TYPE_ROOT)
		(void) snprintf(name, sizeof (name), "%s", poolname);
	else
		cli_vdev_name(vd, true, name, sizeof (name));
	cli_nicenum(vs->vs_read_errors, exact, r, sizeof (r));
	cli_nicenum(vs->vs_write_errors, exact, w, sizeof (w));
	cli_nicenum(vs->vs_checksum_errors, exact, c, sizeof (c));
	fprintf(cli_out, "\t%*s%-*s  %-8s %5s %5s %5s", depth, "", width - depth, name,
	    vdev_state_name(vdev_state(vd)), r, w, c);
	if (vdev_type(vd) == VDEV_TYPE_MISSING)
		fprintf(cli_out, "  %s", vdev_path(vd) != NULL ? "cannot open (missing)" :
		    "missing");
	else if (vdev_children(vd) == 0 && vdev_state(vd) == VDEV_STATE_CANT_OPEN)
		fprintf(cli_out, "  cannot open");
	else if (vdev_children(vd) == 0 && vdev_state(vd) == VDEV_STATE_FAULTED)
		fprintf(cli_out, "  too many errors");
	if (resilvering && vdev_children(vd) == 0 && vdev_resilvering(vd) &&
	    vdev_state(vd) == VDEV_STATE_HEALTHY)
		fprintf(cli_out, "  (resilvering)");
	cli_putc('\n');
	for (int i = 0; i < vdev_children(vd); i++)
		status_vdev(vdev_child(vd, i), poolname, depth + 2, width, exact, resilvering);
}

/* The "spares" section: AVAIL, or INUSE while standing in for a device. */
static void
status_spares(const vdev_t *root, int width)
{
	const vdev_t *sp = vdev_spares(root);

	if (sp == NULL || vdev_children(sp) == 0)
		return;
	fprintf(cli_out, "\tspares\n");
	for (int i = 0; i < vdev_children(sp); i++) {
		const vdev_t *vd = vdev_child(sp, i);
		char name[VDEV_PATH_MAX + 32];
		bool inuse = cli_spare_inuse(root, vd);
		cli_vdev_name(vd, true, name, sizeof (name));
		fprintf(cli_out, "\t  %-*s  %-8s", width - 2, name, inuse ? "INUSE" :
		    vdev_state(vd) == VDEV_STATE_HEALTHY ? "AVAIL" :
		    vdev_state_name(vdev_state(vd)));
		if (inuse)
			fprintf(cli_out, "  currently in use");
		else if (vdev_state(vd) == VDEV_STATE_CANT_OPEN)
			fprintf(cli_out, "  cannot open");
		cli_putc('\n');
	}
}

/* Width of the NAME column: the tree and the spares. */
static int
status_namewidth(const vdev_t *root, const char *name)
{
	int width = cli_tree_namewidth(root, name, 0, 0);
	const vdev_t *sp = vdev_spares(root);

	for (int i = 0; sp != NULL && i < vdev_children(sp); i++) {
		char n[VDEV_PATH_MAX + 32];
		cli_vdev_name(vdev_child(sp, i), true, n, sizeof (n));
		width = MAX(width, 2 + (int)strlen(n));
	}
	return (width);
}

/* Why a pool is not (entirely) well, in zpool's order of precedence. */
typedef enum status_reason {
	SR_OK = 0,
	SR_RESILVERING,
	SR_SUSPENDED,         /* a txg sync failed: no more writes */
	SR_MISSING_DEV_NR,    /* not enough devices to serve I/O */
	SR_CORRUPT_DATA,      /* blocks in the error log */
	SR_FAULTED_DEV_R,
	SR_MISSING_DEV_R,
	SR_FAILING_DEV,       /* READ/WRITE/CKSUM counts */
	SR_OFFLINE_DEV,
	SR_REMOVED_DEV,
	SR_VERSION_OLDER,     /* healthy, but without feature flags */
	SR_FEAT_DISABLED,     /* healthy, but not every feature enabled */
} status_reason_t;

typedef enum status_problem {
	SP_FAULTED, SP_MISSING, SP_ERRORS, SP_OFFLINE, SP_REMOVED
} status_problem_t;

static bool
status_find(const vdev_t *vd, status_problem_t p)
{
	const vdev_stat_t *vs = vdev_stat(vd);

	if (vdev_children(vd) == 0) {
		switch (p) {
		case SP_FAULTED: return (vdev_state(vd) == VDEV_STATE_FAULTED);
		case SP_MISSING: return (vdev_type(vd) == VDEV_TYPE_MISSING ||
			    vdev_state(vd) == VDEV_STATE_CANT_OPEN);
		case SP_OFFLINE: return (vdev_offline(vd) ||
			    vdev_state(vd) == VDEV_STATE_OFFLINE);
		case SP_REMOVED: return (vdev_state(vd) == VDEV_STATE_REMOVED);
		case SP_ERRORS: break;
		}
	}
	if (p == SP_ERRORS && (vs->vs_read_errors != 0 || vs->vs_write_errors != 0 ||
	    vs->vs_checksum_errors != 0))
		return (true);
	for (int i = 0; i < vdev_children(vd); i++)
		if (status_find(vdev_child(vd, i), p))
			return (true);
	return (false);
}

/* The first device problem of the tree, in status_reason's order. */
static status_reason_t
status_tree_reason(spa_t *spa)
{
	static const struct {
		status_problem_t p;
		status_reason_t  r;
	} order[] = {
		{ SP_FAULTED, SR_FAULTED_DEV_R }, { SP_MISSING, SR_MISSING_DEV_R },
		{ SP_ERRORS, SR_FAILING_DEV }, { SP_OFFLINE, SR_OFFLINE_DEV },
		{ SP_REMOVED, SR_REMOVED_DEV },
	};
	status_reason_t r = SR_OK;

	spa_vdev_hold(spa);
	for (size_t i = 0; i < ARRAY_SIZE(order) && r == SR_OK; i++)
		if (status_find(spa_root_vdev(spa), order[i].p))
			r = order[i].r;
	spa_vdev_rele(spa);
	return (r);
}

static status_reason_t
status_reason(spa_t *spa)
{
	vdev_state_t st = spa_state(spa);
	status_reason_t r;

	if (spa_suspended(spa) != 0)
		return (SR_SUSPENDED);
	if (cli_scan_active(spa, SPA_SCAN_RESILVER))
		return (SR_RESILVERING);
	if (st != VDEV_STATE_HEALTHY && st != VDEV_STATE_DEGRADED)
		return (SR_MISSING_DEV_NR);
	if (spa_errlog_count(spa) != 0)
		return (SR_CORRUPT_DATA);
	if ((r = status_tree_reason(spa)) != SR_OK)
		return (r);
	if (spa_version(spa) < SPA_VERSION)
		return (SR_VERSION_OLDER);
	if ((spa_features(spa) & SPA_FEATURES_ALL) != SPA_FEATURES_ALL)
		return (SR_FEAT_DISABLED);
	return (SR_OK);
}

/* What `status -x` leaves out: nothing wrong, at most an old format. */
static bool
status_healthy(spa_t *spa)
{
	status_reason_t r = status_reason(spa);

	return (r == SR_OK || r == SR_VERSION_OLDER || r == SR_FEAT_DISABLED);
}

/*
 * The status:/action: paragraph: zpool's layout (a "status:" line saying
 * what is wrong, an "action:" line saying what to do), in Tarn's words.
 */
static void
status_explain(spa_t *spa)
{
	const char *p = cli_pool_prog;

	switch (status_reason(spa)) {
	case SR_SUSPENDED:
		fprintf(cli_out, "status: The pool could not write a transaction group (%s)\n"
		    "\tand is suspended: every change fails with an I/O error.  What is on\n"
		    "\tthe devices is its last committed state.\n"
		    "action: See the daemon's log for the cause; then '%s export' and\n"
		    "\t'%s import' the pool (or restart the daemon) to go on from there.\n",
		    tarn_strerror(spa_suspended(spa)), p, p);
		break;
	case SR_RESILVERING:
		fprintf(cli_out, "status: A resilver is copying data onto one or more devices.\n"
		    "\tThe pool stays usable meanwhile, with reduced redundancy.\n"
		    "action: None needed: let the resilver finish.\n");
		break;
	case SR_MISSING_DEV_NR:
		fprintf(cli_out, "status: Devices are missing and the pool lacks the redundancy\n"
		    "\tto work without them.\n"
		    "action: Reconnect the missing devices, then bring them back with\n"
		    "\t'%s online'.\n", p);
		break;
	case SR_CORRUPT_DATA:
		/* zpool's words: scripts and admins look for them */
		fprintf(cli_out, "status: One or more devices has experienced an error "
		    "resulting in data\n\tcorruption.  Applications may be affected.\n"
		    "action: Restore the file in question if possible.  Otherwise restore the\n"
		    "\tentire pool from backup.\n");
		break;
	case SR_FAULTED_DEV_R:
		fprintf(cli_out, "status: Devices were faulted after repeated errors; the pool\n"
		    "\tstill works on its remaining redundancy.\n"
		    "action: Replace the faulted devices with '%s replace', or, if the\n"
		    "\tcause is fixed, mark them repaired with '%s clear'.\n", p, p);
		break;
	case SR_MISSING_DEV_R:
		fprintf(cli_out, "status: Devices could not be opened; the pool still works on\n"
		    "\tits remaining redundancy.\n"
		    "action: Reconnect the missing devices and bring them back with\n"
		    "\t'%s online', or replace them with '%s replace'.\n", p, p);
		break;
	case SR_FAILING_DEV:
		fprintf(cli_out, "status: Devices returned bad or unreadable data.  The pool\n"
		    "\trepaired it from redundancy; applications saw correct data.\n"
		    "action: Check whether the devices are failing: reset the counts with\n"
		    "\t'%s clear', or swap a device out with '%s replace'.\n", p, p);
		break;
	case SR_OFFLINE_DEV:
		fprintf(cli_out, "status: Devices were taken offline by an administrator; the\n"
		    "\tpool still works on its remaining redundancy.\n"
		    "action: Bring them back with '%s online' or replace them with\n"
		    "\t'%s replace'.\n", p, p);
		break;
	case SR_REMOVED_DEV:
		fprintf(cli_out, "status: Devices were removed; the pool still works on its\n"
		    "\tremaining redundancy.\n"
		    "action: Reattach them and use '%s online', or replace them with\n"
		    "\t'%s replace'.\n", p, p);
		break;
	case SR_VERSION_OLDER:
		fprintf(cli_out, "status: The pool uses an older on-disk format (version 1, no\n"
		    "\tfeature flags).  It works, without the newer features.\n"
		    "action: Run '%s upgrade' to enable them; older Tarn releases\n"
		    "\tcannot import the pool afterwards.\n", p);
		break;
	case SR_FEAT_DISABLED:
		fprintf(cli_out, "status: Features this software supports are not enabled on the\n"
		    "\tpool.  It works, without them.\n"
		    "action: Run '%s upgrade' to enable them ('%s upgrade -v' lists\n"
		    "\tthem); older software may not import the pool afterwards.\n", p, p);
		break;
	case SR_OK:
		break;
	}
}

#define DSL_NAME_MAX_CLI 256      /* a dataset's full name, NUL included */

/* errors: paragraph; -v lists the damaged files of the persistent error log. */
static void
status_errors(spa_t *spa, bool verbose)
{
	spa_errlog_ent_t *ents = NULL;
	uint64_t nerr = spa_errlog_count(spa);
	int n = 0;

	if (nerr == 0) {
		fprintf(cli_out, "\nerrors: No known data errors\n");
		return;
	}
	if (!verbose || spa_errlog_list(spa, &ents, &n) != 0) {
		fprintf(cli_out, "\nerrors: %" PRIu64 " data errors, use '-v' for a list\n",
		    nerr);
		return;
	}
	fprintf(cli_out, "\nerrors: Permanent errors have been detected in the "
	    "following files:\n\n");
	dsl_pool_t *dp = NULL;
	if (dsl_pool_open_reader(spa, &dp) != 0)      /* status only reads */
		dp = NULL;
	char *where = tarn_alloc(PATH_MAX), *ds = tarn_alloc(DSL_NAME_MAX_CLI);
	bool by_path = false;           /* the previous entry was listed by its path */
	for (int i = 0; i < n; i++) {
		const spa_errlog_ent_t *e = &ents[i];
		/*
		 * A file of a mounted dataset: its path, once (as zpool prints
		 * it); the log is sorted by object set and object, so an
		 * object's blocks follow one another.
		 */
		bool again = i > 0 && ents[i - 1].see_object == e->see_object &&
		    strcmp(ents[i - 1].see_objset, e->see_objset) == 0;
		if (again && by_path)
			continue;
		by_path = host_mount_obj_path(spa, e->see_objset, e->see_object, where, PATH_MAX);
		if (by_path) {
			fprintf(cli_out, "%7s %s\n", "", where);
			continue;
		}
		/* else each block, the object set by its dataset's name where it has one */
		(void) snprintf(ds, DSL_NAME_MAX_CLI, "%s", e->see_objset);
		if (dp != NULL)
			(void) dsl_dataset_key_name(dp, e->see_objset, ds, DSL_NAME_MAX_CLI);
		if (e->see_level == 0)
			fprintf(cli_out, "%7s %s:<0x%" PRIx64 "> offset 0x%" PRIx64 "\n", "",
			    ds, e->see_object, e->see_offset);
		else
			fprintf(cli_out, "%7s %s:<0x%" PRIx64 "> level %" PRIu64 " block %"
			    PRIu64 "\n", "", ds, e->see_object, e->see_level, e->see_blkid);
	}
	if (dp != NULL)
		dsl_pool_close(dp);
	tarn_free(where);
	tarn_free(ds);
	tarn_free(ents);
}

/*
 * The tree is read under spa_vdev_hold (in the daemon the pool's thread
 * detaches devices when a resilver ends), and only there: no other pool
 * lock is taken while it is held.
 */
static void
status_pool(spa_t *spa, const char *name, const status_opts_t *so)
{
	fprintf(cli_out, "  pool: %s\n", name);
	fprintf(cli_out, " state: %s\n", spa_suspended(spa) != 0 ? "SUSPENDED" :
	    vdev_state_name(spa_state(spa)));
	status_explain(spa);
	cli_status_scan(spa);
	fprintf(cli_out, "config:\n\n");
	bool resilvering = cli_scan_active(spa, SPA_SCAN_RESILVER);
	spa_vdev_hold(spa);
	vdev_t *root = spa_root_vdev(spa);
	int width = status_namewidth(root, name);
	fprintf(cli_out, "\t%-*s  %-8s %5s %5s %5s\n", width, "NAME", "STATE", "READ",
	    "WRITE", "CKSUM");
	status_vdev(root, name, 0, width, so->so_exact, resilvering);
	status_spares(root, width);
	spa_vdev_rele(spa);
	status_errors(spa, so->so_verbose);
}

static void
status_unopenable(const char *name, const char *err)
{
	fprintf(cli_out, "  pool: %s\n", name);
	fprintf(cli_out, " state: UNAVAIL\n");
	fprintf(cli_out, "status: The pool could not be opened: %s.\n", err);
	fprintf(cli_out, "action: Bring its devices back and try again, or forget the pool "
	    "on this host\n\twith 'tarn pool export -f %s'.\n", name);
}

static void
status_json_vdev(const vdev_t *vd, const char *poolname, int indent)
{
	const vdev_stat_t *vs = vdev_stat(vd);
	char name[VDEV_PATH_MAX + 32];

	if (vdev_type(vd) == VDEV_TYPE_ROOT)
		(void) snprintf(name, sizeof (name), "%s", poolname);
	else
		cli_vdev_name(vd, true, name, sizeof (name));
	cli_json_str(cli_out, name);
	fprintf(cli_out, ": {\"name\": ");
	cli_json_str(cli_out, name);
	fprintf(cli_out, ", \"vdev_type\": \"%s\", \"guid\": \"%" PRIu64 "\"",
	    cli_vdev_type_json(vd), vdev_guid(vd));
	if (vdev_path(vd) != NULL) {
		fprintf(cli_out, ", \"path\": ");
		cli_json_str(cli_out, vdev_path(vd));
	}
	if (vdev_type(vd) == VDEV_TYPE_RAIDZ)
		fprintf(cli_out, ", \"nparity\": \"%d\"", vdev_nparity(vd));
	fprintf(cli_out, ", \"state\": \"%s\", \"read_errors\": \"%" PRIu64 "\", "
	    "\"write_errors\": \"%" PRIu64 "\", \"checksum_errors\": \"%" PRIu64 "\"",
	    vdev_state_name(vdev_state(vd)), vs->vs_read_errors,
	    vs->vs_write_errors, vs->vs_checksum_errors);
	if (vdev_children(vd) > 0) {
		fprintf(cli_out, ", \"vdevs\": {");
		for (int i = 0; i < vdev_children(vd); i++) {
			fprintf(cli_out, "%s\n%*s", i ? "," : "", indent + 2, "");
			status_json_vdev(vdev_child(vd, i), poolname, indent + 2);
		}
		fprintf(cli_out, "}");
	}
	fprintf(cli_out, "}");
}

/* "scan_stats": {...}, in the shape of OpenZFS's zpool status -j. */
static void
status_json_scan(spa_t *spa)
{
	static const char *const funcs[] = { "NONE", "SCRUB", "RESILVER" };
	static const char *const states[] = { "NONE", "SCANNING", "FINISHED", "CANCELED" };
	spa_scan_stat_t ss;

	spa_scan_get_stat(spa, &ss);
	if (ss.sss_func == SPA_SCAN_NONE || ss.sss_func > SPA_SCAN_RESILVER ||
	    ss.sss_state > SPA_SCAN_STATE_CANCELED)
		return;
	fprintf(cli_out, "\"scan_stats\": {\"function\": \"%s\", \"state\": \"%s\", "
	    "\"start_time\": \"%" PRIu64 "\", \"end_time\": \"%" PRIu64 "\", "
	    "\"to_examine\": \"%" PRIu64 "\", \"examined\": \"%" PRIu64 "\", "
	    "\"issued\": \"%" PRIu64 "\", \"processed\": \"%" PRIu64 "\", "
	    "\"errors\": \"%" PRIu64 "\", \"paused\": \"%" PRIu64 "\"},\n      ",
	    funcs[ss.sss_func], states[ss.sss_state], ss.sss_start_time, ss.sss_end_time,
	    ss.sss_to_examine, ss.sss_examined, ss.sss_issued, ss.sss_repaired,
	    ss.sss_errors, ss.sss_paused);
}

static void
status_json_pool(spa_t *spa, const char *name, const char *err, bool first)
{
	fprintf(cli_out, "%s\n    ", first ? "" : ",");
	cli_json_str(cli_out, name);
	fprintf(cli_out, ": {\"name\": ");
	cli_json_str(cli_out, name);
	if (spa == NULL) {
		fprintf(cli_out, ", \"state\": \"UNAVAIL\", \"error\": ");
		cli_json_str(cli_out, err);
		fprintf(cli_out, "}");
		return;
	}
	fprintf(cli_out, ", \"state\": \"%s\", \"pool_guid\": \"%" PRIu64 "\", "
	    "\"txg\": \"%" PRIu64 "\", \"spa_version\": \"%" PRIu64 "\",\n      "
	    "\"vdevs\": {", vdev_state_name(spa_state(spa)), spa_guid(spa),
	    spa_last_synced_txg(spa), spa_version(spa));
	spa_vdev_hold(spa);
	status_json_vdev(spa_root_vdev(spa), name, 6);
	spa_vdev_rele(spa);
	fprintf(cli_out, "},\n      ");
	status_json_scan(spa);
	fprintf(cli_out, "\"error_count\": \"%" PRIu64 "\"}", spa_errlog_count(spa));
}

static int
status_parse_args(int argc, char **argv, status_opts_t *so)
{
	int c;

	while ((c = getopt(argc, argv, ":xvpjPD")) != -1) {
		switch (c) {
		case 'x': so->so_explain = true; break;
		case 'v': so->so_verbose = true; break;
		case 'p': so->so_exact = true; break;
		case 'j': so->so_json = true; break;
		case 'P': break;   /* full paths: always */
		case 'D': break;   /* dedup tables: none yet */
		default:
			return (cli_bad_option("status", c, optopt));
		}
	}
	return (0);
}

typedef struct status_look {
	const status_opts_t *sl_opts;
	bool sl_named;          /* pools were named on the command line */
	int  sl_shown, sl_seen;
} status_look_t;

static void
status_look_one(void *arg, spa_t *spa, const char *name, const char *err)
{
	status_look_t *sl = arg;
	const status_opts_t *so = sl->sl_opts;
	sl->sl_seen++;
	bool healthy = spa != NULL && status_healthy(spa);
	if (so->so_explain && healthy) {
		if (sl->sl_named && !so->so_json)
			fprintf(cli_out, "pool '%s' is healthy\n", name);
	} else if (so->so_json) {
		status_json_pool(spa, name, err, sl->sl_shown == 0);
		sl->sl_shown++;
	} else {
		if (sl->sl_shown++ > 0)
			cli_putc('\n');
		if (spa != NULL)
			status_pool(spa, name, so);
		else
			status_unopenable(name, err);
	}
}

int
cli_pool_status(int argc, char **argv)
{
	status_opts_t so = { 0 };
	char **names = NULL;
	int n = 0, ret = CLI_EXIT_OK, error;

	if ((error = status_parse_args(argc, argv, &so)) != 0)
		return (error);
	argc -= optind;
	argv += optind;
	if (argc == 0 && (error = host_pool_names(&names, &n)) != 0)
		return (cli_cannot("status", spa_cachefile_path(), error, NULL));
	if (so.so_json)
		fprintf(cli_out, "{\"output_version\": {\"command\": \"zpool status\", "
		    "\"vers_major\": 0, \"vers_minor\": 1},\n  \"pools\": {");
	status_look_t sl = { &so, argc > 0, 0, 0 };
	ret = cli_pool_look_each(argc, argv, names, n, status_look_one, &sl);
	if (so.so_json)
		fprintf(cli_out, "\n  }\n}\n");
	else if (argc == 0 && sl.sl_seen == 0)
		fprintf(cli_out, "no pools available\n");
	else if (so.so_explain && sl.sl_shown == 0 && argc == 0)
		fprintf(cli_out, "all pools are healthy\n");
	host_names_free(names, n);
	return (ret);
}
