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
 *
 * The host describes the pools (operation pool.info, host/host_op_info.c:
 * the tree, the scan statistics and with -v the error log, each damaged
 * file by its path when its dataset is mounted); this file only prints.
 */
#include "tarn.h"

#include <getopt.h>
#include <time.h>

typedef struct status_opts {
	bool so_explain;   /* -x */
	bool so_verbose;   /* -v */
	bool so_exact;     /* -p */
	bool so_json;      /* -j */
} status_opts_t;

/*
 * The pool as the host describes it (pool.info): pool, its vdev tree
 * (root) and its scan statistics (scan).
 */
typedef struct status_pool {
	json_object    *sp_pool;
	json_object    *sp_root;
	spa_scan_stat_t sp_scan;
} status_pool_t;

/* One row of the config tree and the rows below it. */
static void
status_vdev(json_object *vd, const char *poolname, int depth, int width, bool exact,
    bool resilvering)
{
	char name[VDEV_PATH_MAX + 32], r[32], w[32], c[32];
	int nchildren = cli_jvdev_nchildren(vd);

	if (cli_jvdev_type_is(vd, "root"))
		(void) snprintf(name, sizeof (name), "%s", poolname);
	else
		cli_jvdev_name(vd, true, name, sizeof (name));
	cli_nicenum(cli_j_u64(vd, "read_errors"), exact, r, sizeof (r));
	cli_nicenum(cli_j_u64(vd, "write_errors"), exact, w, sizeof (w));
	cli_nicenum(cli_j_u64(vd, "checksum_errors"), exact, c, sizeof (c));
	fprintf(cli_out, "\t%*s%-*s  %-8s %5s %5s %5s", depth, "", width - depth, name,
	    cli_jvdev_state(vd), r, w, c);
	if (cli_jvdev_type_is(vd, "missing"))
		fprintf(cli_out, "  %s", cli_j_str(vd, "path") != NULL ?
		    "cannot open (missing)" : "missing");
	else if (nchildren == 0 && cli_jvdev_state_is(vd, VDEV_STATE_CANT_OPEN))
		fprintf(cli_out, "  cannot open");
	else if (nchildren == 0 && cli_jvdev_state_is(vd, VDEV_STATE_FAULTED))
		fprintf(cli_out, "  too many errors");
	if (resilvering && nchildren == 0 && cli_j_bool(vd, "resilvering") &&
	    cli_jvdev_state_is(vd, VDEV_STATE_HEALTHY))
		fprintf(cli_out, "  (resilvering)");
	cli_putc('\n');
	for (int i = 0; i < nchildren; i++) {
		json_object *c = cli_jvdev_child(vd, i);
		/* log and special vdevs get sections of their own (status_classes) */
		if (depth == 0 && cli_j_str(c, "class") != NULL)
			continue;
		status_vdev(c, poolname, depth + 2, width, exact, resilvering);
	}
}

/*
 * The "special" and "logs" sections (zpool's order: after the data
 * vdevs, before cache and spares), then "cache": each a header line and
 * its vdevs one level in.
 */
static void
status_classes(json_object *root, json_object *cache, const char *poolname, int width,
    bool exact, bool resilvering)
{
	static const char *const cls[][2] = { { "special", "special" }, { "log", "logs" } };
	for (size_t k = 0; k < ARRAY_SIZE(cls); k++) {
		bool header = false;
		for (int i = 0; i < cli_jvdev_nchildren(root); i++) {
			json_object *c = cli_jvdev_child(root, i);
			const char *class = cli_j_str(c, "class");
			if (class == NULL || strcmp(class, cls[k][0]) != 0)
				continue;
			if (!header)
				fprintf(cli_out, "\t%s\t\n", cls[k][1]);
			header = true;
			status_vdev(c, poolname, 2, width, exact, resilvering);
		}
	}
	if (cli_j_len(cache) == 0)
		return;
	fprintf(cli_out, "\tcache\n");
	for (int i = 0; i < cli_j_len(cache); i++)
		status_vdev(cli_j_idx(cache, i), poolname, 2, width, exact, resilvering);
}

/* The "spares" section: AVAIL, or INUSE while standing in for a device. */
static void
status_spares(json_object *spares, int width)
{
	if (cli_j_len(spares) == 0)
		return;
	fprintf(cli_out, "\tspares\n");
	for (int i = 0; i < cli_j_len(spares); i++) {
		json_object *vd = cli_j_idx(spares, i);
		char name[VDEV_PATH_MAX + 32];
		bool inuse = cli_j_bool(vd, "inuse");
		cli_jvdev_name(vd, true, name, sizeof (name));
		fprintf(cli_out, "\t  %-*s  %-8s", width - 2, name, inuse ? "INUSE" :
		    cli_jvdev_state_is(vd, VDEV_STATE_HEALTHY) ? "AVAIL" :
		    cli_jvdev_state(vd));
		if (inuse)
			fprintf(cli_out, "  currently in use");
		else if (cli_jvdev_state_is(vd, VDEV_STATE_CANT_OPEN))
			fprintf(cli_out, "  cannot open");
		cli_putc('\n');
	}
}

/* Width of the NAME column: the tree, the spares and the cache devices. */
static int
status_namewidth(json_object *root, json_object *spares, json_object *cache,
    const char *name)
{
	int width = cli_jtree_namewidth(root, name, 0, 0);

	for (int i = 0; i < cli_j_len(cache); i++) {
		char n[VDEV_PATH_MAX + 32];
		cli_jvdev_name(cli_j_idx(cache, i), true, n, sizeof (n));
		width = MAX(width, 2 + (int)strlen(n));
	}
	for (int i = 0; i < cli_j_len(spares); i++) {
		char n[VDEV_PATH_MAX + 32];
		cli_jvdev_name(cli_j_idx(spares, i), true, n, sizeof (n));
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
status_find(json_object *vd, status_problem_t p)
{
	int nchildren = cli_jvdev_nchildren(vd);

	if (nchildren == 0) {
		switch (p) {
		case SP_FAULTED: return (cli_jvdev_state_is(vd, VDEV_STATE_FAULTED));
		case SP_MISSING: return (cli_jvdev_type_is(vd, "missing") ||
			    cli_jvdev_state_is(vd, VDEV_STATE_CANT_OPEN));
		case SP_OFFLINE: return (cli_j_bool(vd, "offline") ||
			    cli_jvdev_state_is(vd, VDEV_STATE_OFFLINE));
		case SP_REMOVED: return (cli_jvdev_state_is(vd, VDEV_STATE_REMOVED));
		case SP_ERRORS: break;
		}
	}
	if (p == SP_ERRORS && (cli_j_u64(vd, "read_errors") != 0 ||
	    cli_j_u64(vd, "write_errors") != 0 || cli_j_u64(vd, "checksum_errors") != 0))
		return (true);
	for (int i = 0; i < nchildren; i++)
		if (status_find(cli_jvdev_child(vd, i), p))
			return (true);
	return (false);
}

/* The first device problem of the tree, in status_reason's order. */
static status_reason_t
status_tree_reason(json_object *root)
{
	static const struct {
		status_problem_t p;
		status_reason_t  r;
	} order[] = {
		{ SP_FAULTED, SR_FAULTED_DEV_R }, { SP_MISSING, SR_MISSING_DEV_R },
		{ SP_ERRORS, SR_FAILING_DEV }, { SP_OFFLINE, SR_OFFLINE_DEV },
		{ SP_REMOVED, SR_REMOVED_DEV },
	};

	for (size_t i = 0; i < ARRAY_SIZE(order); i++)
		if (status_find(root, order[i].p))
			return (order[i].r);
	return (SR_OK);
}

/* Is a resilver running? */
static bool
status_resilvering(const status_pool_t *sp)
{
	return (sp->sp_scan.sss_state == SPA_SCAN_STATE_SCANNING &&
	    sp->sp_scan.sss_func == SPA_SCAN_RESILVER);
}

static status_reason_t
status_reason(const status_pool_t *sp)
{
	json_object *pool = sp->sp_pool;
	status_reason_t r;

	if (cli_j_int(pool, "suspended") != 0)
		return (SR_SUSPENDED);
	if (status_resilvering(sp))
		return (SR_RESILVERING);
	if (!cli_jvdev_state_is(pool, VDEV_STATE_HEALTHY) &&
	    !cli_jvdev_state_is(pool, VDEV_STATE_DEGRADED))
		return (SR_MISSING_DEV_NR);
	if (cli_j_u64(pool, "errors") != 0)
		return (SR_CORRUPT_DATA);
	if ((r = status_tree_reason(sp->sp_root)) != SR_OK)
		return (r);
	if (cli_j_u64(pool, "version") < SPA_VERSION)
		return (SR_VERSION_OLDER);
	if ((cli_j_u64(pool, "features") & SPA_FEATURES_ALL) != SPA_FEATURES_ALL)
		return (SR_FEAT_DISABLED);
	return (SR_OK);
}

/* What `status -x` leaves out: nothing wrong, at most an old format. */
static bool
status_healthy(const status_pool_t *sp)
{
	status_reason_t r = status_reason(sp);

	return (r == SR_OK || r == SR_VERSION_OLDER || r == SR_FEAT_DISABLED);
}

/*
 * The status:/action: paragraph: zpool's layout (a "status:" line saying
 * what is wrong, an "action:" line saying what to do), in Tarn's words.
 */
static void
status_explain(const status_pool_t *sp)
{
	const char *p = cli_pool_prog;

	switch (status_reason(sp)) {
	case SR_SUSPENDED:
		fprintf(cli_out, "status: The pool could not write a transaction group (%s)\n"
		    "\tand is suspended: every change fails with an I/O error.  What is on\n"
		    "\tthe devices is its last committed state.\n"
		    "action: See the daemon's log for the cause; then '%s export' and\n"
		    "\t'%s import' the pool (or restart the daemon) to go on from there.\n",
		    tarn_strerror(cli_j_int(sp->sp_pool, "suspended")), p, p);
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


/* ---- errors: ---- */

/* One entry of the -v list: a file by its path, else a block of a dataset. */
static void
status_errlog_entry(json_object *e)
{
	const char *path = cli_j_str(e, "path"), *ds = cli_j_str(e, "dataset");

	if (path != NULL) {
		fprintf(cli_out, "%7s %s\n", "", path);
		return;
	}
	if (cli_j_u64(e, "level") == 0)
		fprintf(cli_out, "%7s %s:<0x%" PRIx64 "> offset 0x%" PRIx64 "\n", "",
		    ds != NULL ? ds : "", cli_j_u64(e, "object"), cli_j_u64(e, "offset"));
	else
		fprintf(cli_out, "%7s %s:<0x%" PRIx64 "> level %" PRIu64 " block %"
		    PRIu64 "\n", "", ds != NULL ? ds : "", cli_j_u64(e, "object"),
		    cli_j_u64(e, "level"), cli_j_u64(e, "blkid"));
}

/*
 * errors: paragraph; -v lists the damaged files of the persistent error
 * log (the host gives them by path where their dataset is mounted).
 */
static void
status_errors(json_object *pool, bool verbose)
{
	uint64_t nerr = cli_j_u64(pool, "errors");
	json_object *log = cli_j_get(pool, "errlog");

	if (nerr == 0) {
		fprintf(cli_out, "\nerrors: No known data errors\n");
		return;
	}
	if (!verbose || log == NULL) {
		fprintf(cli_out, "\nerrors: %" PRIu64 " data errors, use '-v' for a list\n",
		    nerr);
		return;
	}
	fprintf(cli_out, "\nerrors: Permanent errors have been detected in the "
	    "following files:\n\n");
	for (int i = 0; i < cli_j_len(log); i++)
		status_errlog_entry(cli_j_idx(log, i));
}

/* ---- the text ---- */

static void
status_pool(const status_pool_t *sp, const char *name, const status_opts_t *so)
{
	json_object *pool = sp->sp_pool, *spares = cli_j_get(pool, "spares");
	json_object *cache = cli_j_get(pool, "cache");

	fprintf(cli_out, "  pool: %s\n", name);
	fprintf(cli_out, " state: %s\n", cli_j_int(pool, "suspended") != 0 ? "SUSPENDED" :
	    cli_jvdev_state(pool));
	status_explain(sp);
	cli_scan_paragraph(&sp->sp_scan);
	fprintf(cli_out, "config:\n\n");
	int width = status_namewidth(sp->sp_root, spares, cache, name);
	fprintf(cli_out, "\t%-*s  %-8s %5s %5s %5s\n", width, "NAME", "STATE", "READ",
	    "WRITE", "CKSUM");
	status_vdev(sp->sp_root, name, 0, width, so->so_exact, status_resilvering(sp));
	status_classes(sp->sp_root, cache, name, width, so->so_exact, status_resilvering(sp));
	status_spares(spares, width);
	status_errors(pool, so->so_verbose);
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

/* ---- -j ---- */

static void
status_json_vdev(json_object *vd, const char *poolname, int indent)
{
	char name[VDEV_PATH_MAX + 32];
	const char *path = cli_j_str(vd, "path");
	int nchildren = cli_jvdev_nchildren(vd);

	if (cli_jvdev_type_is(vd, "root"))
		(void) snprintf(name, sizeof (name), "%s", poolname);
	else
		cli_jvdev_name(vd, true, name, sizeof (name));
	cli_json_str(cli_out, name);
	fprintf(cli_out, ": {\"name\": ");
	cli_json_str(cli_out, name);
	fprintf(cli_out, ", \"vdev_type\": \"%s\", \"guid\": \"%" PRIu64 "\"",
	    cli_j_str(vd, "type"), cli_j_u64(vd, "guid"));
	if (path != NULL) {
		fprintf(cli_out, ", \"path\": ");
		cli_json_str(cli_out, path);
	}
	if (cli_jvdev_type_is(vd, "raidz"))
		fprintf(cli_out, ", \"nparity\": \"%d\"", cli_j_int(vd, "nparity"));
	fprintf(cli_out, ", \"state\": \"%s\", \"read_errors\": \"%" PRIu64 "\", "
	    "\"write_errors\": \"%" PRIu64 "\", \"checksum_errors\": \"%" PRIu64 "\"",
	    cli_jvdev_state(vd), cli_j_u64(vd, "read_errors"),
	    cli_j_u64(vd, "write_errors"), cli_j_u64(vd, "checksum_errors"));
	if (cli_j_str(vd, "class") != NULL)
		fprintf(cli_out, ", \"class\": \"%s\"", cli_j_str(vd, "class"));
	if (nchildren > 0) {
		bool root = cli_jvdev_type_is(vd, "root"), first = true;
		fprintf(cli_out, ", \"vdevs\": {");
		for (int i = 0; i < nchildren; i++) {
			json_object *c = cli_jvdev_child(vd, i);
			if (root && cli_j_str(c, "class") != NULL)
				continue;       /* in "special" / "logs" (status_json_classes) */
			fprintf(cli_out, "%s\n%*s", first ? "" : ",", indent + 2, "");
			first = false;
			status_json_vdev(c, poolname, indent + 2);
		}
		fprintf(cli_out, "}");
	}
	fprintf(cli_out, "}");
}

/*
 * The class vdevs beside "vdevs", as OpenZFS's status -j has them:
 * "special" and "logs" (top-level vdevs of those classes), "l2cache"
 * (cache devices); each only when the pool has some.
 */
static void
status_json_classes(json_object *root, json_object *cache, const char *poolname)
{
	static const char *const cls[][2] = { { "special", "special" }, { "log", "logs" } };
	for (size_t k = 0; k < ARRAY_SIZE(cls); k++) {
		bool first = true;
		for (int i = 0; i < cli_jvdev_nchildren(root); i++) {
			json_object *c = cli_jvdev_child(root, i);
			const char *class = cli_j_str(c, "class");
			if (class == NULL || strcmp(class, cls[k][0]) != 0)
				continue;
			fprintf(cli_out, "%s\n        ", first ? "" : ",");
			if (first)
				fprintf(cli_out, "\"%s\": {\n        ", cls[k][1]);
			first = false;
			status_json_vdev(c, poolname, 8);
		}
		if (!first)
			fprintf(cli_out, "},\n      ");
	}
	for (int i = 0; i < cli_j_len(cache); i++) {
		fprintf(cli_out, "%s\n        ", i == 0 ? "\"l2cache\": {" : ",");
		status_json_vdev(cli_j_idx(cache, i), poolname, 8);
	}
	if (cli_j_len(cache) > 0)
		fprintf(cli_out, "},\n      ");
}

/* "scan_stats": {...}, in the shape of OpenZFS's zpool status -j. */
static void
status_json_scan(const spa_scan_stat_t *ss)
{
	static const char *const funcs[] = { "NONE", "SCRUB", "RESILVER" };
	static const char *const states[] = { "NONE", "SCANNING", "FINISHED", "CANCELED" };

	if (ss->sss_func == SPA_SCAN_NONE || ss->sss_func > SPA_SCAN_RESILVER ||
	    ss->sss_state > SPA_SCAN_STATE_CANCELED)
		return;
	fprintf(cli_out, "\"scan_stats\": {\"function\": \"%s\", \"state\": \"%s\", "
	    "\"start_time\": \"%" PRIu64 "\", \"end_time\": \"%" PRIu64 "\", "
	    "\"to_examine\": \"%" PRIu64 "\", \"examined\": \"%" PRIu64 "\", "
	    "\"issued\": \"%" PRIu64 "\", \"processed\": \"%" PRIu64 "\", "
	    "\"errors\": \"%" PRIu64 "\", \"paused\": \"%" PRIu64 "\"},\n      ",
	    funcs[ss->sss_func], states[ss->sss_state], ss->sss_start_time,
	    ss->sss_end_time, ss->sss_to_examine, ss->sss_examined, ss->sss_issued,
	    ss->sss_repaired, ss->sss_errors, ss->sss_paused);
}

static void
status_json_pool(const status_pool_t *sp, const char *name, const char *err, bool first)
{
	json_object *pool = sp != NULL ? sp->sp_pool : NULL;

	fprintf(cli_out, "%s\n    ", first ? "" : ",");
	cli_json_str(cli_out, name);
	fprintf(cli_out, ": {\"name\": ");
	cli_json_str(cli_out, name);
	if (pool == NULL) {
		fprintf(cli_out, ", \"state\": \"UNAVAIL\", \"error\": ");
		cli_json_str(cli_out, err);
		fprintf(cli_out, "}");
		return;
	}
	fprintf(cli_out, ", \"state\": \"%s\", \"pool_guid\": \"%" PRIu64 "\", "
	    "\"txg\": \"%" PRIu64 "\", \"spa_version\": \"%" PRIu64 "\",\n      "
	    "\"vdevs\": {", cli_jvdev_state(pool), cli_j_u64(pool, "guid"),
	    cli_j_u64(pool, "txg"), cli_j_u64(pool, "version"));
	status_json_vdev(sp->sp_root, name, 6);
	fprintf(cli_out, "},\n      ");
	status_json_classes(sp->sp_root, cli_j_get(pool, "cache"), name);
	status_json_scan(&sp->sp_scan);
	fprintf(cli_out, "\"error_count\": \"%" PRIu64 "\"}", cli_j_u64(pool, "errors"));
}

/* ---- the verb ---- */

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
status_look_one(void *arg, json_object *pool, const char *name, const char *err)
{
	status_look_t *sl = arg;
	const status_opts_t *so = sl->sl_opts;
	status_pool_t sp = { pool, cli_j_get(pool, "vdevs"), { 0 } };

	if (pool != NULL)
		cli_scan_stat_json(cli_j_get(pool, "scan"), &sp.sp_scan);
	sl->sl_seen++;
	bool healthy = pool != NULL && status_healthy(&sp);
	if (so->so_explain && healthy) {
		if (sl->sl_named && !so->so_json)
			fprintf(cli_out, "pool '%s' is healthy\n", name);
	} else if (so->so_json) {
		status_json_pool(pool != NULL ? &sp : NULL, name, err, sl->sl_shown == 0);
		sl->sl_shown++;
	} else {
		if (sl->sl_shown++ > 0)
			cli_putc('\n');
		if (pool != NULL)
			status_pool(&sp, name, so);
		else
			status_unopenable(name, err);
	}
}

int
cli_pool_status(int argc, char **argv)
{
	status_opts_t so = { 0 };
	json_object *args = json_object_new_object(), *res;
	int ret, error;

	if ((error = status_parse_args(argc, argv, &so)) != 0) {
		json_object_put(args);
		return (error);
	}
	argc -= optind;
	argv += optind;
	json_object_object_add(args, "tree", json_object_new_boolean(true));
	json_object_object_add(args, "errlog",
	    json_object_new_boolean(so.so_verbose && !so.so_json));
	if ((ret = cli_pool_info("status", argc, argv, args, &res)) != 0 && res == NULL)
		return (ret);
	if (so.so_json)
		fprintf(cli_out, "{\"output_version\": {\"command\": \"zpool status\", "
		    "\"vers_major\": 0, \"vers_minor\": 1},\n  \"pools\": {");
	status_look_t sl = { &so, argc > 0, 0, 0 };
	ret = cli_pool_info_each(res, status_look_one, &sl);
	if (so.so_json)
		fprintf(cli_out, "\n  }\n}\n");
	else if (argc == 0 && sl.sl_seen == 0)
		fprintf(cli_out, "no pools available\n");
	else if (so.so_explain && sl.sl_shown == 0 && argc == 0)
		fprintf(cli_out, "all pools are healthy\n");
	json_object_put(res);
	return (ret);
}
