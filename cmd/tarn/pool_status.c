/*
 * pool_status.c — `tarn pool status [-xvpj] [pool...]` in zpool's layout:
 *
 *	  pool: tank
 *	 state: ONLINE
 *	config:
 *
 *		NAME        STATE     READ WRITE CKSUM
 *		tank        ONLINE       0     0     0
 *		  mirror-0  ONLINE       0     0     0
 *		    /tmp/a  ONLINE       0     0     0
 *
 *	errors: No known data errors
 *
 * -x shows only pools that are not healthy ("all pools are healthy" when
 * none), -p prints exact error counts, -j prints JSON.
 */
#include "tarn.h"

#include <getopt.h>

typedef struct status_opts {
	bool so_explain;   /* -x */
	bool so_verbose;   /* -v */
	bool so_exact;     /* -p */
	bool so_json;      /* -j */
} status_opts_t;

static void
status_vdev(const vdev_t *vd, const char *poolname, int depth, int width, bool exact)
{
	const vdev_stat_t *vs = &vd->vdev_stat;
	char name[VDEV_PATH_MAX + 32], r[32], w[32], c[32];

	if (vd->vdev_type == VDEV_TYPE_ROOT)
		(void) snprintf(name, sizeof (name), "%s", poolname);
	else
		cli_vdev_name(vd, true, name, sizeof (name));
	cli_nicenum(vs->vs_read_errors, exact, r, sizeof (r));
	cli_nicenum(vs->vs_write_errors, exact, w, sizeof (w));
	cli_nicenum(vs->vs_checksum_errors, exact, c, sizeof (c));
	fprintf(cli_out, "\t%*s%-*s  %-8s %5s %5s %5s", depth, "", width - depth, name,
	    vdev_state_name(vd->vdev_state), r, w, c);
	if (vd->vdev_type == VDEV_TYPE_MISSING)
		fprintf(cli_out, "  %s", vd->vdev_path != NULL ? "cannot open (missing)" :
		    "missing");
	else if (vd->vdev_children == 0 && vd->vdev_state == VDEV_STATE_CANT_OPEN)
		fprintf(cli_out, "  cannot open");
	else if (vd->vdev_offline)
		fprintf(cli_out, "  offline");
	cli_putc('\n');
	for (int i = 0; i < vd->vdev_children; i++)
		status_vdev(vd->vdev_child[i], poolname, depth + 2, width, exact);
}

static bool
status_has_errors(const vdev_t *vd)
{
	const vdev_stat_t *vs = &vd->vdev_stat;

	if (vs->vs_read_errors || vs->vs_write_errors || vs->vs_checksum_errors)
		return (true);
	for (int i = 0; i < vd->vdev_children; i++)
		if (status_has_errors(vd->vdev_child[i]))
			return (true);
	return (false);
}

/* The status:/action: lines that explain an unhealthy pool. */
static void
status_explain(spa_t *spa)
{
	vdev_t *root = spa_root_vdev(spa);
	vdev_state_t st = spa_state(spa);

	if (st == VDEV_STATE_DEGRADED) {
		fprintf(cli_out, "status: One or more devices could not be used.  The pool has "
		    "enough redundancy\n\tleft to go on working in a degraded "
		    "state.\naction: Bring the missing devices back (check paths "
		    "and permissions),\n\tthen export and import the pool.\n");
	} else if (st != VDEV_STATE_HEALTHY) {
		fprintf(cli_out, "status: One or more devices could not be used, and the pool "
		    "has no redundancy\n\tleft to work around them.\naction: Bring "
		    "the missing devices back, then export and import the pool.\n");
	} else if (status_has_errors(root)) {
		fprintf(cli_out, "status: One or more devices had I/O or checksum errors.  The "
		    "data was read\n\tfrom other copies where possible; applications "
		    "are unaffected.\naction: Check the device named below; replace "
		    "it if errors keep appearing.\n");
	}
}

static void
status_pool(spa_t *spa, const char *name, const status_opts_t *so)
{
	vdev_t *root = spa_root_vdev(spa);
	int width = cli_tree_namewidth(root, name, 0, 0);

	fprintf(cli_out, "  pool: %s\n", name);
	fprintf(cli_out, " state: %s\n", vdev_state_name(spa_state(spa)));
	status_explain(spa);
	fprintf(cli_out, "config:\n\n");
	fprintf(cli_out, "\t%-*s  %-8s %5s %5s %5s\n", width, "NAME", "STATE", "READ",
	    "WRITE", "CKSUM");
	status_vdev(root, name, 0, width, so->so_exact);
	fprintf(cli_out, "\nerrors: No known data errors\n");
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
	const vdev_stat_t *vs = &vd->vdev_stat;
	char name[VDEV_PATH_MAX + 32];

	if (vd->vdev_type == VDEV_TYPE_ROOT)
		(void) snprintf(name, sizeof (name), "%s", poolname);
	else
		cli_vdev_name(vd, true, name, sizeof (name));
	cli_json_str(cli_out, name);
	fprintf(cli_out, ": {\"name\": ");
	cli_json_str(cli_out, name);
	fprintf(cli_out, ", \"vdev_type\": \"%s\", \"guid\": \"%" PRIu64 "\"",
	    vd->vdev_type == VDEV_TYPE_ROOT ? "root" :
	    vd->vdev_type == VDEV_TYPE_MIRROR ? "mirror" :
	    vd->vdev_type == VDEV_TYPE_RAIDZ ? "raidz" :
	    vd->vdev_type == VDEV_TYPE_DISK ? "disk" :
	    vd->vdev_type == VDEV_TYPE_MISSING ? "missing" : "file", vd->vdev_guid);
	if (vd->vdev_path != NULL) {
		fprintf(cli_out, ", \"path\": ");
		cli_json_str(cli_out, vd->vdev_path);
	}
	if (vd->vdev_type == VDEV_TYPE_RAIDZ)
		fprintf(cli_out, ", \"nparity\": \"%d\"", vd->vdev_nparity);
	fprintf(cli_out, ", \"state\": \"%s\", \"read_errors\": \"%" PRIu64 "\", "
	    "\"write_errors\": \"%" PRIu64 "\", \"checksum_errors\": \"%" PRIu64 "\"",
	    vdev_state_name(vd->vdev_state), vs->vs_read_errors,
	    vs->vs_write_errors, vs->vs_checksum_errors);
	if (vd->vdev_children > 0) {
		fprintf(cli_out, ", \"vdevs\": {");
		for (int i = 0; i < vd->vdev_children; i++) {
			fprintf(cli_out, "%s\n%*s", i ? "," : "", indent + 2, "");
			status_json_vdev(vd->vdev_child[i], poolname, indent + 2);
		}
		fprintf(cli_out, "}");
	}
	fprintf(cli_out, "}");
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
	status_json_vdev(spa_root_vdev(spa), name, 6);
	fprintf(cli_out, "},\n      \"error_count\": \"0\"}");
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

int
cli_pool_status(int argc, char **argv)
{
	status_opts_t so = { 0 };
	char **names = NULL, err[1024];
	int n = 0, ret = CLI_EXIT_OK, error, shown = 0, seen = 0;

	if ((error = status_parse_args(argc, argv, &so)) != 0)
		return (error);
	argc -= optind;
	argv += optind;
	if (argc == 0 && (error = cli_pool_names(&names, &n)) != 0)
		return (cli_cannot("status", spa_cachefile_path(), error, NULL));
	if (so.so_json)
		fprintf(cli_out, "{\"output_version\": {\"command\": \"zpool status\", "
		    "\"vers_major\": 0, \"vers_minor\": 1},\n  \"pools\": {");
	for (int i = 0; i < (argc > 0 ? argc : n); i++) {
		const char *name = argc > 0 ? argv[i] : names[i];
		spa_t *spa;
		bool healthy;

		error = cli_pool_open(name, SPA_OPEN_READONLY | SPA_OPEN_NOVERIFY,
		    &spa, err, sizeof (err));
		if (error == CLI_ENOPOOL) {
			ret = cli_cannot("open", name, error, err);
			continue;
		}
		seen++;
		healthy = spa != NULL && cli_vdev_healthy(spa_root_vdev(spa));
		if (so.so_explain && healthy) {
			if (argc > 0 && !so.so_json)
				fprintf(cli_out, "pool '%s' is healthy\n", name);
		} else if (so.so_json) {
			status_json_pool(spa, name, err, shown == 0);
			shown++;
		} else {
			if (shown++ > 0)
				cli_putc('\n');
			if (spa != NULL)
				status_pool(spa, name, &so);
			else
				status_unopenable(name, err);
		}
		if (spa != NULL)
			spa_close(spa);
	}
	if (so.so_json)
		fprintf(cli_out, "\n  }\n}\n");
	else if (argc == 0 && seen == 0)
		fprintf(cli_out, "no pools available\n");
	else if (so.so_explain && shown == 0 && argc == 0)
		fprintf(cli_out, "all pools are healthy\n");
	cli_names_free(names, n);
	return (ret);
}
