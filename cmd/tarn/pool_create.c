/*
 * pool_create.c — `tarn pool create` and `tarn pool destroy`.
 *
 * create parses the pool name, its options and the vdev specification
 * here (so that syntax errors come back before any device is opened) and
 * asks the host (operation pool.create, host/host_op_create.c), where
 * spa_create() checks the devices themselves and writes nothing until
 * all of them pass.  -n: the host makes only the checks that write
 * nothing, and the layout that would be created is printed here.
 * destroy is the host's pool.destroy.
 */
#include "tarn.h"
#include "dsl.h"

#include <getopt.h>

#define CREATE_MAX_FSPROPS 32

typedef struct create_opts {
	uint64_t    co_ashift;      /* 0: from the devices */
	uint64_t    co_version;     /* 0: current */
	bool        co_force;
	bool        co_no_cache;
	bool        co_dryrun;
	const char *co_mountpoint;
	int         co_nfsprops;                      /* -O prop=value */
	char       *co_fsprops[CREATE_MAX_FSPROPS];
} create_opts_t;

/* Parse "ashift=12"-style numbers within [lo, hi]. */
static bool
parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s[0] < '0' || s[0] > '9')
		return (false);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		return (false);
	*out = v;
	return (true);
}

static int
create_prop(create_opts_t *co, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char prop[64];

	if (eq == NULL || eq == arg)
		return (cli_usage_error("create", "missing '=' for property=value "
		    "argument '%s'", arg));
	(void) snprintf(prop, sizeof (prop), "%.*s", (int)MIN(eq - arg, 63), arg);
	const char *val = eq + 1;
	if (strcmp(prop, "ashift") == 0) {
		if (!parse_u64(val, 9, 16, &co->co_ashift))
			return (cli_usage_error("create", "invalid value '%s' for "
			    "property 'ashift': must be 9 to 16", val));
	} else if (strcmp(prop, "version") == 0) {
		if (!parse_u64(val, 1, SPA_VERSION, &co->co_version))
			return (cli_usage_error("create", "invalid value '%s' for "
			    "property 'version': this build supports 1 to %llu",
			    val, (unsigned long long)SPA_VERSION));
	} else if (strcmp(prop, "cachefile") == 0) {
		if (strcmp(val, "none") != 0)
			return (cli_usage_error("create", "property 'cachefile' "
			    "can only be 'none'; set TARN_CACHEFILE to move the "
			    "cache file"));
		co->co_no_cache = true;
	} else {
		return (cli_usage_error("create", "property '%s' is not a valid "
		    "pool property (supported: ashift, version, cachefile)", prop));
	}
	return (0);
}

/*
 * -O prop=value: a property of the root file system, checked now so that
 * a bad value refuses the create before anything is written.
 */
static int
create_fsprop(create_opts_t *co, char *arg)
{
	char *eq = strchr(arg, '=');
	if (eq == NULL || eq == arg)
		return (cli_usage_error("create", "-O needs property=value, not '%s'", arg));
	char prop[DSL_NAME_MAX + 1], err[512], str[1024];
	uint64_t num;
	snprintf(prop, sizeof (prop), "%.*s", (int)(eq - arg), arg);
	int p = dsl_prop_lookup(prop);
	if (p < 0 && dsl_prop_user_name(prop)) {
		if (dsl_prop_user_check(prop, eq + 1, err, sizeof (err)) != 0)
			return (cli_usage_error("create", "%s", err));
	} else if (p < 0) {
		return (cli_usage_error("create", "invalid property '%s'", prop));
	} else if (dsl_prop_parse(p, eq + 1, &num, str, sizeof (str), err, sizeof (err)) != 0) {
		return (cli_usage_error("create", "%s", err));
	}
	if (co->co_nfsprops == CREATE_MAX_FSPROPS)
		return (cli_usage_error("create", "too many -O properties"));
	co->co_fsprops[co->co_nfsprops++] = arg;
	return (0);
}

static int
create_parse_args(int argc, char **argv, create_opts_t *co)
{
	int c, error;

	while ((c = getopt(argc, argv, ":fno:O:m:")) != -1) {
		switch (c) {
		case 'f': co->co_force = true; break;
		case 'n': co->co_dryrun = true; break;
		case 'O':
			if ((error = create_fsprop(co, optarg)) != 0)
				return (error);
			break;
		case 'o':
			if ((error = create_prop(co, optarg)) != 0)
				return (error);
			break;
		case 'm':
			if (optarg[0] != '/' && strcmp(optarg, "none") != 0 &&
			    strcmp(optarg, "legacy") != 0)
				return (cli_usage_error("create", "invalid mountpoint "
				    "'%s': must be an absolute path, 'legacy', or "
				    "'none'", optarg));
			co->co_mountpoint = optarg;
			break;
		default:
			return (cli_bad_option("create", c, optopt));
		}
	}
	return (0);
}

/* A spec as create -n and add -n print it: one line per vdev, indented. */
void
cli_print_spec(const spa_vdev_spec_t *s, const char *name, int depth)
{
	if (s->type == VDEV_TYPE_ROOT) {
		/* data vdevs, then the special, log and cache sections as zpool */
		static const char *const hdr[] = { "special", "logs", "cache" };
		fprintf(cli_out, "\t%s\n", name);
		for (int k = -1; k < 3; k++) {
			bool header = false;
			for (int c = 0; c < s->nchildren; c++) {
				const spa_vdev_spec_t *t = s->children[c];
				int kind = t->cache ? 2 : t->bias == VDEV_BIAS_LOG ? 1 :
				    t->bias == VDEV_BIAS_SPECIAL ? 0 : -1;
				if (kind != k)
					continue;
				if (k >= 0 && !header)
					fprintf(cli_out, "\t%s\n", hdr[k]);
				header = true;
				cli_print_spec(t, name, 2);
			}
		}
		return;
	}
	if (s->type == VDEV_TYPE_ROOT)
		fprintf(cli_out, "\t%s\n", name);
	else if (s->type == VDEV_TYPE_MIRROR)
		fprintf(cli_out, "\t%*smirror\n", depth, "");
	else if (s->type == VDEV_TYPE_RAIDZ)
		fprintf(cli_out, "\t%*sraidz%d\n", depth, "", s->nparity);
	else
		fprintf(cli_out, "\t%*s%s\n", depth, "", s->path);
	for (int c = 0; c < s->nchildren; c++)
		cli_print_spec(s->children[c], name, depth + 2);
}

/*
 * The words of a parsed spec, as spa_vdev_spec_parse takes them again:
 * group keywords and absolute device paths (the host's directory is not
 * this process's).
 */
json_object *
cli_spec_words(const spa_vdev_spec_t *spec)
{
	json_object *words = json_object_new_array();
	const char *cls = "";     /* the class word in force */

	for (int t = 0; t < spec->nchildren; t++) {
		const spa_vdev_spec_t *top = spec->children[t];
		const char *want = top->cache ? "cache" : top->bias == VDEV_BIAS_LOG ? "log" :
		    top->bias == VDEV_BIAS_SPECIAL ? "special" : "";
		char kw[16];
		if (strcmp(want, cls) != 0) {
			json_object_array_add(words, json_object_new_string(want));
			cls = want;
		}
		if (top->type == VDEV_TYPE_MIRROR || top->type == VDEV_TYPE_RAIDZ) {
			if (top->type == VDEV_TYPE_MIRROR)
				(void) snprintf(kw, sizeof (kw), "mirror");
			else
				(void) snprintf(kw, sizeof (kw), "raidz%d", top->nparity);
			json_object_array_add(words, json_object_new_string(kw));
			for (int c = 0; c < top->nchildren; c++)
				json_object_array_add(words,
				    json_object_new_string(top->children[c]->path));
		} else {
			json_object_array_add(words, json_object_new_string(top->path));
		}
	}
	return (words);
}

/* The request of create: the options and the spec's words. */
static json_object *
create_args(const char *name, const create_opts_t *co, const spa_vdev_spec_t *spec)
{
	json_object *args = json_object_new_object();

	json_object_object_add(args, "name", json_object_new_string(name));
	json_object_object_add(args, "vdevs", cli_spec_words(spec));
	json_object_object_add(args, "force", json_object_new_boolean(co->co_force));
	json_object_object_add(args, "dryrun", json_object_new_boolean(co->co_dryrun));
	json_object_object_add(args, "no_cache",
	    json_object_new_boolean(co->co_no_cache));
	if (co->co_ashift != 0)
		json_object_object_add(args, "ashift",
		    json_object_new_uint64(co->co_ashift));
	if (co->co_version != 0)
		json_object_object_add(args, "version",
		    json_object_new_uint64(co->co_version));
	if (co->co_mountpoint != NULL)
		json_object_object_add(args, "mountpoint",
		    json_object_new_string(co->co_mountpoint));
	if (co->co_nfsprops > 0) {
		json_object *p = json_object_new_array_ext(co->co_nfsprops);
		for (int i = 0; i < co->co_nfsprops; i++)
			json_object_array_add(p, json_object_new_string(co->co_fsprops[i]));
		json_object_object_add(args, "fsprops", p);
	}
	return (args);
}

int
cli_pool_create(int argc, char **argv)
{
	create_opts_t co = { 0 };
	spa_vdev_spec_t *spec;
	json_object *res;
	char err[1024];
	int error, ret;

	cli_history_begin(argc, argv);
	if ((error = create_parse_args(argc, argv, &co)) != 0)
		return (error);
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return (cli_usage_error("create", "missing pool name argument"));
	if (argc < 2)
		return (cli_usage_error("create", "missing vdev specification"));
	const char *name = argv[0];
	if (spa_name_validate(name, err, sizeof (err)) != 0)
		return (cli_cannot("create", name, EINVAL, err));
	if ((error = spa_vdev_spec_parse(argc - 1, argv + 1, &spec, err,
	    sizeof (err))) != 0)
		return (cli_cannot("create", name, error, err));
	ret = cli_call("pool.create", create_args(name, &co, spec), &res);
	json_object_put(res);
	if (ret == CLI_EXIT_OK && co.co_dryrun) {
		fprintf(cli_out, "would create '%s' with the following layout:\n\n", name);
		cli_print_spec(spec, name, 0);
	}
	spa_vdev_spec_free(spec);
	return (ret);
}

int
cli_pool_destroy(int argc, char **argv)
{
	json_object *args, *res;
	bool force = false;
	int c, r;

	cli_history_begin(argc, argv);
	while ((c = getopt(argc, argv, ":f")) != -1) {
		if (c == 'f')
			force = true;
		else
			return (cli_bad_option("destroy", c, optopt));
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return (cli_usage_error("destroy", "missing pool argument"));
	if (argc > 1)
		return (cli_usage_error("destroy", "too many arguments"));
	args = json_object_new_object();
	json_object_object_add(args, "name", json_object_new_string(argv[0]));
	json_object_object_add(args, "force", json_object_new_boolean(force));
	r = cli_call("pool.destroy", args, &res);
	json_object_put(res);
	return (r);
}
