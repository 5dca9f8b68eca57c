/*
 * pool_get.c — `tarn pool get` and `tarn pool set`, in zpool's syntax.
 *
 *	get [-Hp] [-o field[,...]] <"all" | property[,...]> [pool] ...
 *	set <property=value> <pool>
 *
 * get prints a row per pool and property, NAME PROPERTY VALUE SOURCE
 * (-o picks and orders the fields, -H scripted, -p exact numbers); no
 * pool named means every pool, as list.  The values list shows come from
 * list's own code (cli_pool_prop_value); get adds ashift, readonly,
 * cachefile and feature@NAME for every feature this build knows
 * (cli_features).  SOURCE is "-" for what the pool reports about itself,
 * "local" for what was chosen for it, "default" otherwise, and "-" again
 * when that cannot be told.
 *
 * Tarn has no pool property that can change once a pool is created or
 * imported, so set never changes anything: it says, in zpool's words, why
 * the property cannot be set (read-only, creation or import time only,
 * `upgrade` for features and versions, not in Tarn) and exits with 1.
 *
 * Both look at the pools through the host (operation pool.info,
 * host/host_op_info.c); set needs only the pool's features to say why.
 */
#include "tarn.h"
#include "tarn_array.h"

#include <getopt.h>
#include <strings.h>

/* How get finds a value and its source, and why set refuses it. */
typedef enum get_kind {
	GK_STAT,        /* list's value; what the pool reports: readonly, source "-" */
	GK_ALTROOT,     /* list's value ("-"): Tarn has no altroot */
	GK_VERSION,     /* list's value; create -o version=N */
	GK_CACHEFILE,
	GK_READONLY,
	GK_ASHIFT,
} get_kind_t;

static const struct {
	const char *gp_name;
	get_kind_t  gp_kind;
	bool        gp_all;      /* one of "all" (name is not, as in zpool) */
} get_props[] = {
	{ "size", GK_STAT, true },
	{ "capacity", GK_STAT, true },
	{ "altroot", GK_ALTROOT, true },
	{ "health", GK_STAT, true },
	{ "guid", GK_STAT, true },
	{ "version", GK_VERSION, true },
	{ "cachefile", GK_CACHEFILE, true },
	{ "dedupratio", GK_STAT, true },
	{ "free", GK_STAT, true },
	{ "allocated", GK_STAT, true },
	{ "readonly", GK_READONLY, true },
	{ "ashift", GK_ASHIFT, true },
	{ "expandsize", GK_STAT, true },
	{ "checkpoint", GK_STAT, true },
	{ "fragmentation", GK_STAT, true },
	{ "name", GK_STAT, false },
};
#define GET_NPROPS ((int)ARRAY_SIZE(get_props))

/* zpool properties Tarn does not have (get and set say so). */
static const char *const get_unsupported[] = {
	"autoexpand", "autoreplace", "autotrim", "bootfs", "comment", "delegation",
	"failmode", "listsnapshots", "multihost", "compatibility",
};

#define FEATURE_PREFIX "feature@"

/*
 * OpenZFS features that tools probe and that every Tarn pool has by its
 * design, whatever its feature flags: syncoid resumes an interrupted
 * transfer only when `zpool get -o value -H feature@extensible_dataset`
 * says enabled or active on both pools (Tarn's datasets keep their
 * receive state in their own property objects from the first version).
 * get answers them "active", as zpool does for a feature in use; they
 * are not in `get all` (they are not Tarn's flags), and set has nothing
 * to do.  Property number: GET_BUILTIN + i.
 */
static const char *const get_builtin[] = { "extensible_dataset" };
#define GET_BUILTIN (GET_NPROPS + (int)cli_nfeatures)

/* Feature property p (>= GET_NPROPS): its name after "feature@". */
static const char *
get_feature_name(int p)
{
	return (p >= GET_BUILTIN ? get_builtin[p - GET_BUILTIN] :
	    cli_features[p - GET_NPROPS].cf_name);
}

/*
 * A property by name: an index into get_props, or GET_NPROPS + i for
 * feature i of cli_features, GET_BUILTIN + i for get_builtin[i]; -1 for
 * none, -2 for one of zpool's that Tarn does not have.  Names are list's (names or column headers, any
 * case: "alloc", "CAP"), features exactly as `upgrade -v` names them.
 */
static int
get_lookup(const char *name)
{
	const char *canon = cli_pool_prop_name(name);

	for (int p = 0; p < GET_NPROPS; p++)
		if (strcasecmp(name, get_props[p].gp_name) == 0 ||
		    (canon != NULL && strcmp(canon, get_props[p].gp_name) == 0))
			return (p);
	if (strncmp(name, FEATURE_PREFIX, strlen(FEATURE_PREFIX)) == 0) {
		for (size_t f = 0; f < cli_nfeatures; f++)
			if (strcmp(name + strlen(FEATURE_PREFIX), cli_features[f].cf_name) == 0)
				return (GET_NPROPS + (int)f);
		for (size_t i = 0; i < ARRAY_SIZE(get_builtin); i++)
			if (strcmp(name + strlen(FEATURE_PREFIX), get_builtin[i]) == 0)
				return (GET_BUILTIN + (int)i);
	}
	for (size_t i = 0; i < ARRAY_SIZE(get_unsupported); i++)
		if (strcmp(name, get_unsupported[i]) == 0)
			return (-2);
	return (-1);
}

static const char *const get_field_heads[CLI_GET_NFIELDS] = { "NAME", "PROPERTY", "VALUE",
	"SOURCE" };

typedef struct get_opts {
	bool        go_scripted;
	bool        go_exact;
	int         go_fields[CLI_GET_NFIELDS];
	int         go_nfields;
	tarn_array_t go_props;   /* int: get_lookup() results */
} get_opts_t;

static void
get_add_prop(get_opts_t *go, int p)
{
	TARN_ARRAY_APPEND(&go->go_props, int, p);
}

/* "all", or a list of properties ("all" in it stands for them all). */
static int
get_parse_props(get_opts_t *go, const char *arg)
{
	char *copy = tarn_strdup(arg), *save = NULL;
	int r = 0;

	for (char *t = strtok_r(copy, ",", &save); t != NULL && r == 0;
	    t = strtok_r(NULL, ",", &save)) {
		if (strcmp(t, "all") == 0) {
			for (int p = 0; p < GET_NPROPS; p++)
				if (get_props[p].gp_all)
					get_add_prop(go, p);
			for (size_t f = 0; f < cli_nfeatures; f++)
				get_add_prop(go, GET_NPROPS + (int)f);
			continue;
		}
		int p = get_lookup(t);
		if (p == -2)
			r = cli_usage_error("get", "bad property list: property '%s' is "
			    "not supported by Tarn", t);
		else if (p < 0)
			r = cli_usage_error("get", "bad property list: invalid "
			    "property '%s'", t);
		else
			get_add_prop(go, p);
	}
	if (r == 0 && tarn_array_len(&go->go_props) == 0)
		r = cli_usage_error("get", "bad property list: empty");
	tarn_free(copy);
	return (r);
}

/*
 * Value and source of property p of the pool `name` as pool.info
 * describes it (pool NULL: it could not be opened; every value is then
 * list's or "-").  readonly and cachefile describe the import (the host
 * says: readonly, uncached); ashift's source is "local" when create was
 * given -o ashift=N, as the pool's history tells (ashift_given).
 */
static void
get_value(const get_opts_t *go, json_object *pool, const char *name, int p, char *val,
    size_t vlen, const char **src)
{
	*src = "-";
	if (p >= GET_BUILTIN) {
		(void) snprintf(val, vlen, "%s", pool == NULL ? "-" : "active");
		*src = pool == NULL ? "-" : "local";
		return;
	}
	if (p >= GET_NPROPS) {
		const cli_feature_t *f = &cli_features[p - GET_NPROPS];
		bool active = pool != NULL && (cli_j_u64(pool, "features") & f->cf_flag) != 0;
		(void) snprintf(val, vlen, "%s", pool == NULL ? "-" : active ? "active" :
		    "disabled");
		if (pool != NULL)
			*src = active ? "local" : "default";
		return;
	}
	get_kind_t kind = get_props[p].gp_kind;
	if (kind == GK_STAT || kind == GK_ALTROOT || kind == GK_VERSION) {
		VERIFY0(cli_pool_prop_value(pool, name, get_props[p].gp_name, go->go_exact,
		    val, vlen));
		if (kind == GK_ALTROOT)
			*src = "default";
		else if (kind == GK_VERSION && pool != NULL)
			*src = cli_j_u64(pool, "version") == SPA_VERSION ? "default" : "local";
		return;
	}
	(void) snprintf(val, vlen, "-");
	if (pool == NULL)
		return;
	bool uncached = cli_j_bool(pool, "uncached");
	switch (kind) {
	case GK_CACHEFILE:
		(void) snprintf(val, vlen, "%s", uncached ? "none" : "-");
		*src = uncached ? "local" : "default";
		break;
	case GK_READONLY:
		(void) snprintf(val, vlen, "%s", cli_j_bool(pool, "readonly") ? "on" : "off");
		break;
	case GK_ASHIFT: {
		int given = cli_j_int(pool, "ashift_given");
		(void) snprintf(val, vlen, "%" PRIu64, cli_j_u64(pool, "ashift"));
		*src = given > 0 ? "local" : given == 0 ? "default" : "-";
		break;
	}
	default:
		break;
	}
}

/* The rows of one pool. */
static void
get_pool_rows(const get_opts_t *go, cli_table_t *t, json_object *pool, const char *name)
{
	for (size_t i = 0; i < tarn_array_len(&go->go_props); i++) {
		int p = TARN_ARRAY_AT(&go->go_props, int, i);
		char val[512], prop[128];
		const char *src, *cells[CLI_GET_NFIELDS];

		if (p >= GET_NPROPS)
			(void) snprintf(prop, sizeof (prop), FEATURE_PREFIX "%s",
			    get_feature_name(p));
		else
			(void) snprintf(prop, sizeof (prop), "%s", get_props[p].gp_name);
		get_value(go, pool, name, p, val, sizeof (val), &src);
		for (int f = 0; f < go->go_nfields; f++) {
			switch (go->go_fields[f]) {
			case CLI_GET_NAME: cells[f] = name; break;
			case CLI_GET_PROPERTY: cells[f] = prop; break;
			case CLI_GET_VALUE: cells[f] = val; break;
			default: cells[f] = src; break;
			}
		}
		cli_table_row(t, cells);
	}
}

static int
get_parse_args(int argc, char **argv, get_opts_t *go)
{
	int c, r;

	VERIFY0(cli_get_fields("all", go->go_fields, &go->go_nfields, cli_usage_error));
	while ((c = getopt(argc, argv, ":Hpo:")) != -1) {
		switch (c) {
		case 'H': go->go_scripted = true; break;
		case 'p': go->go_exact = true; break;
		case 'o':
			if ((r = cli_get_fields(optarg, go->go_fields, &go->go_nfields,
			    cli_usage_error)) != 0)
				return (r);
			break;
		default:
			return (cli_bad_option("get", c, optopt));
		}
	}
	if (optind >= argc)
		return (cli_usage_error("get", "missing property argument"));
	return (get_parse_props(go, argv[optind]));
}

typedef struct get_look {
	const get_opts_t *gl_opts;
	cli_table_t *gl_table;
	int          gl_shown;
} get_look_t;

static void
get_look_one(void *arg, json_object *pool, const char *name, const char *err)
{
	get_look_t *gl = arg;
	get_pool_rows(gl->gl_opts, gl->gl_table, pool, name);
	gl->gl_shown++;
}

int
cli_pool_get(int argc, char **argv)
{
	get_opts_t go = { .go_props = TARN_ARRAY_INIT(int) };
	json_object *args, *res;
	int ret;

	if ((ret = get_parse_args(argc, argv, &go)) != 0) {
		tarn_array_fini(&go.go_props);
		return (ret);
	}
	argc -= optind + 1;
	argv += optind + 1;
	args = json_object_new_object();
	json_object_object_add(args, "props", json_object_new_boolean(true));
	if ((ret = cli_pool_info("get", argc, argv, args, &res)) != 0 && res == NULL) {
		tarn_array_fini(&go.go_props);
		return (ret);
	}
	get_look_t gl = { &go, cli_table_new(), 0 };
	for (int f = 0; f < go.go_nfields; f++)
		cli_table_column(gl.gl_table, get_field_heads[go.go_fields[f]], CLI_LEFT, 0);
	ret = cli_pool_info_each(res, get_look_one, &gl);
	if (gl.gl_shown > 0)
		cli_table_print(gl.gl_table, cli_out, go.go_scripted);
	cli_table_free(gl.gl_table);
	tarn_array_fini(&go.go_props);
	json_object_put(res);
	return (ret);
}

/* ---- set ---- */

/*
 * Why property p (get_lookup) of the open pool cannot be set to value, in
 * msg; false when there is nothing to do (a feature already active).
 */
static bool
set_refusal(json_object *pool, const char *poolname, const char *prop, int p, const char *value,
    char *msg, size_t len)
{
	if (p == -2) {
		(void) snprintf(msg, len, "property '%s' is not supported by Tarn", prop);
		return (true);
	}
	if (p < 0) {
		(void) snprintf(msg, len, "invalid property '%s'", prop);
		return (true);
	}
	if (p >= GET_BUILTIN) {
		if (strcmp(value, "enabled") == 0)
			return (false);
		(void) snprintf(msg, len, "property '%s' can only be set to 'enabled' "
		    "(features cannot be disabled)", prop);
		return (true);
	}
	if (p >= GET_NPROPS) {
		const cli_feature_t *f = &cli_features[p - GET_NPROPS];
		if (strcmp(value, "enabled") != 0)
			(void) snprintf(msg, len, "property '%s' can only be set to "
			    "'enabled' (features cannot be disabled)", prop);
		else if (cli_j_u64(pool, "features") & f->cf_flag)
			return (false);
		else if (f->cf_flag & SPA_FEATURES_ALL)
			(void) snprintf(msg, len, "features are enabled by '%s upgrade "
			    "%s', which enables every feature this build supports",
			    cli_pool_prog, poolname);
		else if (f->cf_flag & SPA_FEATURES_NEW)
			(void) snprintf(msg, len, "feature '%s' can only be enabled when "
			    "a pool is created", f->cf_name);
		else
			(void) snprintf(msg, len, "feature '%s' is retired", f->cf_name);
		return (true);
	}
	const char *name = get_props[p].gp_name;
	switch (get_props[p].gp_kind) {
	case GK_ASHIFT:
		(void) snprintf(msg, len, "property 'ashift' can only be set at "
		    "creation time (%s create -o ashift=N)", cli_pool_prog);
		break;
	case GK_ALTROOT:
		(void) snprintf(msg, len, "property 'altroot' can only be set at "
		    "creation or import time, and Tarn has no altroot yet");
		break;
	case GK_READONLY:
		(void) snprintf(msg, len, "property 'readonly' can only be set at "
		    "import time (%s import -o readonly=on)", cli_pool_prog);
		break;
	case GK_CACHEFILE:
		(void) snprintf(msg, len, "property 'cachefile' can only be set at "
		    "creation or import time (-o cachefile=none)");
		break;
	case GK_VERSION:
		(void) snprintf(msg, len, "property 'version' can only be set at "
		    "creation time; use '%s upgrade' to move a pool to a newer "
		    "version", cli_pool_prog);
		break;
	default:
		(void) snprintf(msg, len, "'%s' is readonly", name);
		break;
	}
	return (true);
}

int
cli_pool_set(int argc, char **argv)
{
	char msg[512], prop[128];
	json_object *res;
	int c;

	if ((c = getopt(argc, argv, ":")) != -1)
		return (cli_bad_option("set", c, optopt));
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return (cli_usage_error("set", "missing property=value argument"));
	if (argc < 2)
		return (cli_usage_error("set", "missing pool name"));
	if (argc > 2)
		return (cli_usage_error("set", "too many pool names"));
	const char *eq = strchr(argv[0], '=');
	if (eq == NULL)
		return (cli_usage_error("set", "missing value in property=value argument"));
	if (eq == argv[0])
		return (cli_usage_error("set", "missing property in property=value argument"));
	(void) snprintf(prop, sizeof (prop), "%.*s", (int)MIN(eq - argv[0], 127), argv[0]);

	/* nothing changes: a look at the pool (its features) is all it takes */
	(void) cli_pool_info("set", 1, argv + 1, json_object_new_object(), &res);
	json_object *pool = cli_j_idx(cli_j_get(res, "pools"), 0);
	if (pool == NULL || cli_j_get(pool, "error") != NULL) {
		int r = pool == NULL ? CLI_EXIT_ERROR : cli_cannot("open", argv[1],
		    cli_j_int(pool, "errno"), cli_j_str(pool, "error"));
		json_object_put(res);
		return (r);
	}
	bool refused = set_refusal(pool, argv[1], prop, get_lookup(prop), eq + 1, msg,
	    sizeof (msg));
	json_object_put(res);
	if (refused)
		return (cli_cannot("set property for", argv[1], EINVAL, msg));
	return (CLI_EXIT_OK);
}
