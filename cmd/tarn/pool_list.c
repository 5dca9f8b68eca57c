/*
 * pool_list.c — `tarn pool list [-Hpjv] [-o props] [pool...]`: one row per
 * pool with zpool's columns NAME SIZE ALLOC FREE CKPOINT EXPANDSZ FRAG CAP
 * DEDUP HEALTH ALTROOT; -H scripted (tabs, no header), -p exact numbers,
 * -j JSON in the shape of OpenZFS's `zpool list -j`; -v a row for every
 * vdev below its pool, as zpool prints them: names indented by depth
 * (with -H after a tab), capacity only on top-level vdevs, a leaf's size
 * is its device's, then the spares under a "spare" row.  The pool's
 * values come from list_value(), which `pool get` shares
 * (cli_pool_prop_value).  The host describes the pools (operation
 * pool.info, host/host_op_info.c; the tree with -v); this file prints.
 */
#include "tarn.h"

#include <getopt.h>
#include <strings.h>

typedef enum list_prop {
	LP_NAME, LP_SIZE, LP_ALLOC, LP_FREE, LP_CKPOINT, LP_EXPANDSZ, LP_FRAG,
	LP_CAP, LP_DEDUP, LP_HEALTH, LP_ALTROOT, LP_GUID, LP_VERSION, LP_NPROPS
} list_prop_t;

static const struct {
	const char *lp_name;     /* property name (JSON key, -o) */
	const char *lp_col;      /* column header (also accepted by -o) */
	cli_align_t lp_align;
	int         lp_width;    /* minimum width, as zpool's */
} list_props[LP_NPROPS] = {
	[LP_NAME]     = { "name", "NAME", CLI_LEFT, 0 },
	[LP_SIZE]     = { "size", "SIZE", CLI_RIGHT, 5 },
	[LP_ALLOC]    = { "allocated", "ALLOC", CLI_RIGHT, 5 },
	[LP_FREE]     = { "free", "FREE", CLI_RIGHT, 5 },
	[LP_CKPOINT]  = { "checkpoint", "CKPOINT", CLI_RIGHT, 5 },
	[LP_EXPANDSZ] = { "expandsize", "EXPANDSZ", CLI_RIGHT, 5 },
	[LP_FRAG]     = { "fragmentation", "FRAG", CLI_RIGHT, 5 },
	[LP_CAP]      = { "capacity", "CAP", CLI_RIGHT, 5 },
	[LP_DEDUP]    = { "dedupratio", "DEDUP", CLI_RIGHT, 5 },
	[LP_HEALTH]   = { "health", "HEALTH", CLI_RIGHT, 8 },
	[LP_ALTROOT]  = { "altroot", "ALTROOT", CLI_LEFT, 0 },
	[LP_GUID]     = { "guid", "GUID", CLI_LEFT, 0 },
	[LP_VERSION]  = { "version", "VERSION", CLI_RIGHT, 5 },
};

#define LIST_DEFAULT "name,size,allocated,free,checkpoint,expandsize," \
	"fragmentation,capacity,dedupratio,health,altroot"

typedef struct list_opts {
	bool        lo_scripted;
	bool        lo_verbose;
	bool        lo_exact;
	bool        lo_json;
	list_prop_t lo_props[LP_NPROPS * 4];
	int         lo_nprops;
} list_opts_t;

/* A property by its name or its column header, any case; LP_NPROPS if none. */
static list_prop_t
list_prop_lookup(const char *name)
{
	int p;

	for (p = 0; p < LP_NPROPS; p++)
		if (strcasecmp(name, list_props[p].lp_name) == 0 ||
		    strcasecmp(name, list_props[p].lp_col) == 0)
			break;
	return ((list_prop_t)p);
}

static int
list_parse_props(list_opts_t *lo, const char *arg)
{
	char *copy = tarn_strdup(arg), *save = NULL;
	int error = 0;

	lo->lo_nprops = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok != NULL && error == 0;
	    tok = strtok_r(NULL, ",", &save)) {
		list_prop_t p = list_prop_lookup(tok);
		if (p == LP_NPROPS)
			error = cli_usage_error("list", "bad property list: invalid "
			    "property '%s'", tok);
		else if (lo->lo_nprops >= (int)ARRAY_SIZE(lo->lo_props))
			error = cli_usage_error("list", "bad property list: too "
			    "many properties");
		else
			lo->lo_props[lo->lo_nprops++] = p;
	}
	if (error == 0 && lo->lo_nprops == 0)
		error = cli_usage_error("list", "bad property list: empty");
	tarn_free(copy);
	return (error);
}

/*
 * The value of one property of a pool, as pool.info describes it (NULL:
 * it could not be opened).
 */
static void
list_value(json_object *pool, const char *name, list_prop_t p, bool exact, char *buf,
    size_t len)
{
	json_object *space = cli_j_get(pool, "space");
	uint64_t size = cli_j_u64(space, "size"), alloc = cli_j_u64(space, "alloc");

	switch (p) {
	case LP_NAME:
		(void) snprintf(buf, len, "%s", name);
		return;
	case LP_HEALTH:
		(void) snprintf(buf, len, "%s", pool != NULL ? cli_jvdev_state(pool) :
		    "UNAVAIL");
		return;
	case LP_GUID:
		if (pool != NULL)
			(void) snprintf(buf, len, "%" PRIu64, cli_j_u64(pool, "guid"));
		else
			(void) snprintf(buf, len, "-");
		return;
	default:
		break;
	}
	if (pool == NULL) {
		(void) snprintf(buf, len, "-");
		return;
	}
	switch (p) {
	case LP_SIZE: cli_nicenum(size, exact, buf, len); break;
	case LP_ALLOC: cli_nicenum(alloc, exact, buf, len); break;
	case LP_FREE: cli_nicenum(cli_j_u64(space, "free"), exact, buf, len); break;
	case LP_CAP: {
		uint64_t cap = size ? alloc * 100 / size : 0;
		(void) snprintf(buf, len, "%" PRIu64 "%s", cap, exact ? "" : "%");
		break;
	}
	case LP_DEDUP:
		(void) snprintf(buf, len, "%s", exact ? "1.00" : "1.00x");
		break;
	case LP_VERSION:
		(void) snprintf(buf, len, "%" PRIu64, cli_j_u64(pool, "version"));
		break;
	default:   /* checkpoint, expandsize, fragmentation: not tracked yet */
		(void) snprintf(buf, len, "-");
		break;
	}
}

const char *
cli_pool_prop_name(const char *prop)
{
	list_prop_t p = list_prop_lookup(prop);

	return (p == LP_NPROPS ? NULL : list_props[p].lp_name);
}

int
cli_pool_prop_value(json_object *pool, const char *name, const char *prop, bool exact,
    char *buf, size_t len)
{
	list_prop_t p = list_prop_lookup(prop);

	if (p == LP_NPROPS)
		return (SET_ERROR(ENOENT));
	list_value(pool, name, p, exact, buf, len);
	return (0);
}

/* A vdev's space, read once per row: the pool's or a top-level vdev's (lv_top). */
typedef struct list_vspace {
	bool     lv_top;
	uint64_t lv_size, lv_alloc;
} list_vspace_t;

static void
list_vspace(json_object *vd, list_vspace_t *vs)
{
	vs->lv_size = vs->lv_alloc = 0;
	vs->lv_top = cli_jvdev_space(vd, &vs->lv_size, &vs->lv_alloc);
}

/*
 * One value of a vdev's row (list -v).  zpool gives capacity figures to
 * top-level vdevs only, a size to every vdev (a leaf's is its device's),
 * a capacity in hundredths of a percent ("0.42%", "12.5%"), no dedup
 * ratio; a spare is AVAIL or INUSE (its size, when in use, is that of
 * its open copy in the tree: the host gives that as its psize).
 * Checkpoint, expansion and fragmentation are not tracked ("-", as in
 * the pool's row).
 */
static void
list_vdev_value(json_object *vd, const list_vspace_t *vs, bool spare, list_prop_t p,
    bool exact, char *buf, size_t len)
{
	bool top = vs->lv_top;
	uint64_t size = vs->lv_size, alloc = vs->lv_alloc;
	(void) snprintf(buf, len, "-");
	switch (p) {
	case LP_SIZE:
		if (top || cli_jvdev_nchildren(vd) == 0)
			cli_nicenum(top ? size : cli_j_u64(vd, "psize"), exact, buf, len);
		break;
	case LP_ALLOC:
		if (top)
			cli_nicenum(alloc, exact, buf, len);
		break;
	case LP_FREE:
		if (top)
			cli_nicenum(size - MIN(alloc, size), exact, buf, len);
		break;
	case LP_CAP:
		if (top) {
			uint64_t pm = size != 0 ? alloc * 10000 / size : 0;
			double pct = (double)pm / 100.0;
			if (exact)
				(void) snprintf(buf, len, "%" PRIu64, pm / 100);
			else
				(void) snprintf(buf, len, pm < 1000 ? "%.2f%%" : pm < 10000 ?
				    "%.1f%%" : "%.0f%%", pct);
		}
		break;
	case LP_HEALTH:
		(void) snprintf(buf, len, "%s", !spare ? cli_jvdev_state(vd) :
		    cli_j_bool(vd, "inuse") ? "INUSE" :
		    cli_jvdev_state_is(vd, VDEV_STATE_HEALTHY) ? "AVAIL" :
		    cli_jvdev_state(vd));
		break;
	case LP_GUID:
		(void) snprintf(buf, len, "%" PRIu64, cli_j_u64(vd, "guid"));
		break;
	case LP_ALTROOT:
		buf[0] = '\0';
		break;
	default:
		break;
	}
}

/* A row of list -v: name (indented by depth, or after a tab with -H), values. */
static void
list_vdev_row(cli_table_t *t, const list_opts_t *lo, json_object *vd, const char *label,
    int depth, bool spare)
{
	char vals[LP_NPROPS * 4][64], name[VDEV_PATH_MAX + 32], cell0[VDEV_PATH_MAX + 64];
	const char *cells[LP_NPROPS * 4] = { NULL };
	list_vspace_t vs = { 0 };
	if (vd != NULL) {
		cli_jvdev_name(vd, true, name, sizeof (name));
		list_vspace(vd, &vs);
	} else {
		(void) snprintf(name, sizeof (name), "%s", label);
	}
	for (int j = 0; j < lo->lo_nprops; j++) {
		list_prop_t p = lo->lo_props[j];
		cells[j] = vals[j];
		if (p == LP_NAME) {
			(void) snprintf(cell0, sizeof (cell0), "%*s%s",
			    lo->lo_scripted ? 0 : depth, lo->lo_scripted ? "\t" : "", name);
			cells[j] = cell0;
		} else if (vd != NULL)
			list_vdev_value(vd, &vs, spare, p, lo->lo_exact, vals[j],
			    sizeof (vals[j]));
		else
			(void) snprintf(vals[j], sizeof (vals[j]), "%s",
			    p == LP_ALTROOT ? "" : "-");
	}
	int n = lo->lo_nprops;
	while (n > 1 && lo->lo_props[n - 1] == LP_ALTROOT)
		n--;            /* the row ends at HEALTH, as zpool's */
	cli_table_row_short(t, cells, n);
	for (int c = 0; vd != NULL && c < cli_jvdev_nchildren(vd); c++)
		list_vdev_row(t, lo, cli_jvdev_child(vd, c), "", depth + 2, spare);
}

/*
 * The rows of list -v below a pool's, in zpool's order: its data vdevs,
 * the special and log vdevs and the cache devices each under a header
 * row ("special", "logs", "cache"), then its spares.
 */
static void
list_vdev_rows(cli_table_t *t, const list_opts_t *lo, json_object *pool)
{
	static const char *const cls[][2] = { { "special", "special" }, { "log", "logs" } };
	json_object *root = cli_j_get(pool, "vdevs"), *sp = cli_j_get(pool, "spares");
	json_object *cache = cli_j_get(pool, "cache");

	for (int c = 0; c < cli_jvdev_nchildren(root); c++)
		if (cli_j_str(cli_jvdev_child(root, c), "class") == NULL)
			list_vdev_row(t, lo, cli_jvdev_child(root, c), "", 2, false);
	for (size_t k = 0; k < ARRAY_SIZE(cls); k++) {
		bool header = false;
		for (int c = 0; c < cli_jvdev_nchildren(root); c++) {
			json_object *v = cli_jvdev_child(root, c);
			const char *class = cli_j_str(v, "class");
			if (class == NULL || strcmp(class, cls[k][0]) != 0)
				continue;
			if (!header)
				list_vdev_row(t, lo, NULL, cls[k][1], 0, false);
			header = true;
			list_vdev_row(t, lo, v, "", 2, false);
		}
	}
	if (cli_j_len(cache) > 0) {
		list_vdev_row(t, lo, NULL, "cache", 0, false);
		for (int c = 0; c < cli_j_len(cache); c++)
			list_vdev_row(t, lo, cli_j_idx(cache, c), "", 2, false);
	}
	if (cli_j_len(sp) > 0) {
		list_vdev_row(t, lo, NULL, "spare", 0, false);
		for (int c = 0; c < cli_j_len(sp); c++)
			list_vdev_row(t, lo, cli_j_idx(sp, c), "", 2, true);
	}
}

/*
 * list -jv: a vdev as a JSON member named as in the table (the root by
 * the pool's name, as status -j has it), its children inside.
 */
static void
list_json_vdev(FILE *f, json_object *pool, const char *poolname, json_object *vd,
    const list_opts_t *lo, bool spare, int indent, bool first)
{
	char name[VDEV_PATH_MAX + 32], val[64];
	bool root = cli_jvdev_type_is(vd, "root");
	if (root)
		(void) snprintf(name, sizeof (name), "%s", poolname);
	else
		cli_jvdev_name(vd, true, name, sizeof (name));
	fprintf(f, "%s\n%*s", first ? "" : ",", indent, "");
	cli_json_str(f, name);
	fprintf(f, ": {\"name\": ");
	cli_json_str(f, name);
	fprintf(f, ", \"vdev_type\": \"%s\", \"guid\": \"%" PRIu64 "\", \"class\": \"%s\", "
	    "\"state\": \"%s\", \"properties\": {", cli_j_str(vd, "type"),
	    cli_j_u64(vd, "guid"), spare ? "spare" : cli_j_str(vd, "class") != NULL ?
	    cli_j_str(vd, "class") : "normal", cli_jvdev_state(vd));
	int shown = 0;
	list_vspace_t vs;
	list_vspace(vd, &vs);
	for (int i = 0; i < lo->lo_nprops; i++) {
		list_prop_t p = lo->lo_props[i];
		if (p == LP_NAME || p == LP_ALTROOT)
			continue;
		if (root)
			list_value(pool, poolname, p, lo->lo_exact, val, sizeof (val));
		else
			list_vdev_value(vd, &vs, spare, p, lo->lo_exact, val, sizeof (val));
		fprintf(f, "%s\"%s\": {\"value\": ", shown++ ? ", " : "", list_props[p].lp_name);
		cli_json_str(f, val);
		fputc('}', f);
	}
	fputc('}', f);
	if (cli_jvdev_nchildren(vd) > 0) {
		fprintf(f, ", \"vdevs\": {");
		for (int c = 0; c < cli_jvdev_nchildren(vd); c++)
			list_json_vdev(f, pool, poolname, cli_jvdev_child(vd, c), lo, spare,
			    indent + 2, c == 0);
		fprintf(f, "\n%*s}", indent, "");
	}
	fputc('}', f);
}

static void
list_json_pool(FILE *f, json_object *pool, const char *name, const list_opts_t *lo,
    bool first)
{
	char val[512];

	fprintf(f, "%s\n    ", first ? "" : ",");
	cli_json_str(f, name);
	fprintf(f, ": {\"name\": ");
	cli_json_str(f, name);
	fprintf(f, ", \"type\": \"POOL\", \"state\": \"%s\"",
	    pool != NULL ? cli_jvdev_state(pool) : "UNAVAIL");
	if (pool != NULL)
		fprintf(f, ", \"pool_guid\": \"%" PRIu64 "\", \"txg\": \"%" PRIu64
		    "\", \"spa_version\": \"%" PRIu64 "\"", cli_j_u64(pool, "guid"),
		    cli_j_u64(pool, "txg"), cli_j_u64(pool, "version"));
	fprintf(f, ", \"properties\": {");
	for (int i = 0; i < lo->lo_nprops; i++) {
		list_prop_t p = lo->lo_props[i];
		list_value(pool, name, p, lo->lo_exact, val, sizeof (val));
		fprintf(f, "%s\n      \"%s\": {\"value\": ", i ? "," : "",
		    list_props[p].lp_name);
		cli_json_str(f, val);
		fprintf(f, ", \"source\": {\"type\": \"NONE\", \"data\": \"-\"}}");
	}
	fprintf(f, "\n    }");
	if (lo->lo_verbose && pool != NULL) {
		json_object *sp = cli_j_get(pool, "spares");
		fprintf(f, ", \"vdevs\": {");
		list_json_vdev(f, pool, name, cli_j_get(pool, "vdevs"), lo, false, 6, true);
		fprintf(f, "\n    }");
		if (cli_j_len(sp) > 0) {
			fprintf(f, ", \"spares\": {");
			for (int c = 0; c < cli_j_len(sp); c++)
				list_json_vdev(f, pool, name, cli_j_idx(sp, c), lo, true, 6,
				    c == 0);
			fprintf(f, "\n    }");
		}
	}
	fputc('}', f);
}

static int
list_parse_args(int argc, char **argv, list_opts_t *lo)
{
	int c, error = 0;

	while ((c = getopt(argc, argv, ":Hpjvo:")) != -1) {
		switch (c) {
		case 'v': lo->lo_verbose = true; break;
		case 'H': lo->lo_scripted = true; break;
		case 'p': lo->lo_exact = true; break;
		case 'j': lo->lo_json = true; break;
		case 'o':
			if ((error = list_parse_props(lo, optarg)) != 0)
				return (error);
			break;
		default:
			return (cli_bad_option("list", c, optopt));
		}
	}
	return (0);
}

typedef struct list_look {
	const list_opts_t *ll_opts;
	cli_table_t *ll_table;
	int          ll_shown;
} list_look_t;

/* One pool's row (and its vdevs' with -v), or its JSON object. */
static void
list_look_one(void *arg, json_object *pool, const char *name, const char *err)
{
	list_look_t *ll = arg;
	const list_opts_t *lo = ll->ll_opts;
	if (lo->lo_json) {
		list_json_pool(cli_out, pool, name, lo, ll->ll_shown == 0);
	} else {
		char vals[LP_NPROPS * 4][512];
		const char *cells[LP_NPROPS * 4];
		for (int j = 0; j < lo->lo_nprops; j++) {
			list_value(pool, name, lo->lo_props[j], lo->lo_exact, vals[j],
			    sizeof (vals[j]));
			cells[j] = vals[j];
		}
		cli_table_row(ll->ll_table, cells);
		if (lo->lo_verbose && pool != NULL)
			list_vdev_rows(ll->ll_table, lo, pool);
	}
	ll->ll_shown++;
}

int
cli_pool_list(int argc, char **argv)
{
	list_opts_t lo = { 0 };
	json_object *args, *res;
	int ret, error;

	VERIFY0(list_parse_props(&lo, LIST_DEFAULT));
	if ((error = list_parse_args(argc, argv, &lo)) != 0)
		return (error);
	argc -= optind;
	argv += optind;
	args = json_object_new_object();
	json_object_object_add(args, "tree", json_object_new_boolean(lo.lo_verbose));
	if ((ret = cli_pool_info("list", argc, argv, args, &res)) != 0 && res == NULL)
		return (ret);

	cli_table_t *t = cli_table_new();
	for (int i = 0; i < lo.lo_nprops; i++)
		cli_table_column(t, list_props[lo.lo_props[i]].lp_col,
		    list_props[lo.lo_props[i]].lp_align, list_props[lo.lo_props[i]].lp_width);
	if (lo.lo_json)
		fprintf(cli_out, "{\"output_version\": {\"command\": \"zpool list\", "
		    "\"vers_major\": 0, \"vers_minor\": 1},\n  \"pools\": {");
	list_look_t ll = { &lo, t, 0 };
	ret = cli_pool_info_each(res, list_look_one, &ll);
	if (lo.lo_json)
		fprintf(cli_out, "\n  }\n}\n");
	else if (ll.ll_shown > 0)
		cli_table_print(t, cli_out, lo.lo_scripted);
	else if (argc == 0 && !lo.lo_scripted)
		fprintf(cli_out, "no pools available\n");
	cli_table_free(t);
	json_object_put(res);
	return (ret);
}
