/*
 * pool_create.c — `tarn pool create` and `tarn pool destroy`.
 *
 * create parses the pool name and the vdev specification here (so that
 * syntax errors come back before any device is opened) and leaves every
 * check of the devices themselves to spa_create(), which writes nothing
 * until all of them pass.  -n prints the layout that would be created.
 */
#include "tarn.h"
#include "dsl.h"

#include <getopt.h>
#include <sys/stat.h>

#define CREATE_MAX_FSPROPS 32

typedef struct create_opts {
	spa_create_opts_t co_spa;
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
		if (!parse_u64(val, 9, 16, &co->co_spa.sco_ashift))
			return (cli_usage_error("create", "invalid value '%s' for "
			    "property 'ashift': must be 9 to 16", val));
	} else if (strcmp(prop, "version") == 0) {
		if (!parse_u64(val, 1, SPA_VERSION, &co->co_spa.sco_version))
			return (cli_usage_error("create", "invalid value '%s' for "
			    "property 'version': this build supports 1 to %llu",
			    val, (unsigned long long)SPA_VERSION));
	} else if (strcmp(prop, "cachefile") == 0) {
		if (strcmp(val, "none") != 0)
			return (cli_usage_error("create", "property 'cachefile' "
			    "can only be 'none'; set TARN_CACHEFILE to move the "
			    "cache file"));
		co->co_spa.sco_no_cache = true;
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
		case 'f': co->co_spa.sco_force = true; break;
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

/* -n: the checks that need no writing, then the layout. */
/*
 * A device of a pool imported on this host (in the cache file) is never
 * taken, -f or not: -f is for devices of exported pools or of pools last
 * used elsewhere.  Returns 0 or prints the error and returns 1.
 */
static int
create_check_imported(const char *name, const spa_vdev_spec_t *s)
{
	vdev_label_config_t cfg;
	spa_cache_entry_t *ents;
	int n, ret = 0;

	for (int c = 0; c < s->nchildren && ret == 0; c++)
		ret = create_check_imported(name, s->children[c]);
	if (ret != 0 || s->path == NULL)
		return (ret);
	memset(&cfg, 0, sizeof (cfg));
	if (vdev_label_read_path(s->path, &cfg) != 0)
		return (0);
	if (cfg.vlc_state == POOL_STATE_ACTIVE && spa_cache_read(&ents, &n) == 0) {
		for (int i = 0; i < n && ret == 0; i++) {
			char msg[VDEV_PATH_MAX + 2 * VDEV_POOL_NAME_MAX + 128];
			if (ents[i].sce_guid != cfg.vlc_pool_guid)
				continue;
			(void) snprintf(msg, sizeof (msg), "%s is part of imported "
			    "pool '%s'; export or destroy '%s' first (-f does not "
			    "override this)", s->path, ents[i].sce_name,
			    ents[i].sce_name);
			ret = cli_cannot("create", name, EBUSY, msg);
		}
		spa_cache_free(ents, n);
	}
	vdev_config_free(&cfg);
	return (ret);
}

/* -n: a device that holds a live pool needs -f, as spa_create() says. */
static int
create_check_label(const char *name, const char *path, bool force)
{
	vdev_label_config_t cfg;
	char msg[VDEV_PATH_MAX + VDEV_POOL_NAME_MAX + 64];

	memset(&cfg, 0, sizeof (cfg));
	if (vdev_label_read_path(path, &cfg) != 0)
		return (0);
	if (!force && cfg.vlc_state != POOL_STATE_DESTROYED) {
		(void) snprintf(msg, sizeof (msg), "%s is part of %s pool '%s'; use "
		    "-f to override", path, cfg.vlc_state == POOL_STATE_EXPORTED ?
		    "exported" : "active", cfg.vlc_name);
		vdev_config_free(&cfg);
		return (cli_cannot("create", name, EBUSY, msg));
	}
	vdev_config_free(&cfg);
	return (0);
}

static int
create_dryrun(const char *name, const spa_vdev_spec_t *s, const spa_vdev_spec_t *root,
    bool force)
{
	if (s->path != NULL) {
		struct stat st;
		if (stat(s->path, &st) != 0) {
			char msg[VDEV_PATH_MAX + 64];
			(void) snprintf(msg, sizeof (msg), "cannot open '%s': %s",
			    s->path, strerror(errno));
			return (cli_cannot("create", name, errno, msg));
		}
		if (S_ISREG(st.st_mode) && (uint64_t)st.st_size < SPA_MINDEVSIZE) {
			char msg[VDEV_PATH_MAX + 64];
			(void) snprintf(msg, sizeof (msg), "%s is too small (at "
			    "least %lluM is needed)", s->path,
			    (unsigned long long)(SPA_MINDEVSIZE / MiB));
			return (cli_cannot("create", name, EOVERFLOW, msg));
		}
		return (create_check_label(name, s->path, force));
	}
	for (int c = 0; c < s->nchildren; c++) {
		int ret = create_dryrun(name, s->children[c], root, force);
		if (ret != 0)
			return (ret);
	}
	if (s == root) {
		fprintf(cli_out, "would create '%s' with the following layout:\n\n", name);
		cli_print_spec(root, name, 0);
	}
	return (0);
}

/*
 * The root dataset of a new pool, with -m's mountpoint.  Made here only
 * when it matters (-m, or the daemon mounts it); otherwise the first
 * dataset command makes it.
 */
static int
create_root_dataset(spa_t *spa, const char *mountpoint, const create_opts_t *co)
{
	dsl_pool_t *dp;
	char err[512];
	int e;

	if (mountpoint == NULL && co->co_nfsprops == 0 && !host_mount_auto())
		return (0);
	if ((e = dsl_pool_open(spa, host_fs_init, NULL, &dp)) != 0)
		return (cli_cannot("create", spa_name(spa), e, NULL));
	if (mountpoint != NULL && (e = dsl_prop_set(dp, spa_name(spa), "mountpoint",
	    mountpoint, err, sizeof (err))) != 0)
		(void) cli_cannot("create", spa_name(spa), e, err);
	for (int i = 0; e == 0 && i < co->co_nfsprops; i++) {
		char prop[DSL_NAME_MAX + 1];
		const char *eq = strchr(co->co_fsprops[i], '=');
		snprintf(prop, sizeof (prop), "%.*s", (int)(eq - co->co_fsprops[i]),
		    co->co_fsprops[i]);
		if ((e = dsl_prop_set_create(dp, spa_name(spa), prop, eq + 1, err,
		    sizeof (err))) != 0)
			(void) cli_cannot("create", spa_name(spa), e, err);
	}
	dsl_pool_close(dp);
	return (e ? CLI_EXIT_ERROR : 0);
}

int
cli_pool_create(int argc, char **argv)
{
	create_opts_t co = { 0 };
	spa_vdev_spec_t *spec;
	spa_t *spa;
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
	if ((ret = create_check_imported(name, spec)) != 0) {
		spa_vdev_spec_free(spec);
		return (ret);
	}
	if (co.co_dryrun) {
		ret = create_dryrun(name, spec, spec, co.co_spa.sco_force);
		spa_vdev_spec_free(spec);
		return (ret);
	}
	err[0] = '\0';
	error = spa_create(name, spec, &co.co_spa, &spa, err, sizeof (err));
	spa_vdev_spec_free(spec);
	if (error != 0)
		return (cli_cannot("create", name, error, err));
	host_history_event(spa, "create");
	host_history_log(spa);
	ret = create_root_dataset(spa, co.co_mountpoint, &co);
	host_pool_adopt(spa);
	if (ret == 0)
		ret = host_mount_pool(name);
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
