/*
 * host_op_create.c — the operations of zpool create and zpool destroy:
 * a new pool from a vdev specification (its root dataset, its mounts),
 * and the end of one.
 *
 *   pool.create   name, vdevs: [word...], force, dryrun,     -
 *                 ashift?, version?, no_cache, mountpoint?,
 *                 fsprops?: ["prop=value"...]
 *   pool.destroy  name, force                                -
 *
 * vdevs are the words of a vdev specification as spa_vdev_spec_parse
 * takes them, device paths already absolute (the caller's directory is
 * not the host's).  The caller has checked the syntax of everything (a
 * spec that does not parse, a bad property, is reported here all the
 * same).  dryrun: only the checks that write nothing (devices there, big
 * enough, not in another pool); the caller prints the layout.  create
 * fails (HOST_FAILED, the pool staying created) when a dataset of the
 * new pool would not mount.  destroy -f of a pool that does not open
 * only takes it out of the cache file (a note says so).
 */
#include "host_impl.h"

#include <sys/stat.h>

/*
 * A device of a pool imported on this host (in the cache file) is never
 * taken, -f or not: -f is for devices of exported pools or of pools last
 * used elsewhere.  0, or reported.
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
			ret = host_report("create", name, EBUSY, msg);
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
		return (host_report("create", name, EBUSY, msg));
	}
	vdev_config_free(&cfg);
	return (0);
}

/* -n: the checks that need no writing, device by device. */
static int
create_dryrun(const char *name, const spa_vdev_spec_t *s, bool force)
{
	if (s->path != NULL) {
		struct stat st;
		if (stat(s->path, &st) != 0) {
			char msg[VDEV_PATH_MAX + 64];
			int e = errno;
			(void) snprintf(msg, sizeof (msg), "cannot open '%s': %s",
			    s->path, strerror(e));
			return (host_report("create", name, e, msg));
		}
		if (S_ISREG(st.st_mode) && (uint64_t)st.st_size < SPA_MINDEVSIZE) {
			char msg[VDEV_PATH_MAX + 64];
			(void) snprintf(msg, sizeof (msg), "%s is too small (at "
			    "least %lluM is needed)", s->path,
			    (unsigned long long)(SPA_MINDEVSIZE / MiB));
			return (host_report("create", name, EOVERFLOW, msg));
		}
		return (create_check_label(name, s->path, force));
	}
	for (int c = 0; c < s->nchildren; c++)
		if (create_dryrun(name, s->children[c], force) != 0)
			return (HOST_FAILED);
	return (0);
}

/*
 * The root dataset of a new pool, with its mountpoint and -O properties.
 * Made here only when it matters (either given, or the daemon mounts it);
 * otherwise the first dataset command makes it.
 */
static int
create_root_dataset(spa_t *spa, const char *mountpoint, json_object *fsprops)
{
	size_t nprops = fsprops != NULL ? json_object_array_length(fsprops) : 0;
	dsl_pool_t *dp;
	char err[512];
	int e;

	if (mountpoint == NULL && nprops == 0 && !host_mount_auto())
		return (0);
	if ((e = dsl_pool_open(spa, host_fs_init, NULL, &dp)) != 0)
		return (host_report("create", spa_name(spa), e, NULL));
	if (mountpoint != NULL && (e = dsl_prop_set(dp, spa_name(spa), "mountpoint",
	    mountpoint, err, sizeof (err))) != 0)
		(void) host_report("create", spa_name(spa), e, err);
	for (size_t i = 0; e == 0 && i < nprops; i++) {
		const char *pv = json_object_get_string(json_object_array_get_idx(fsprops, i));
		const char *eq = pv != NULL ? strchr(pv, '=') : NULL;
		char prop[DSL_NAME_MAX + 1];
		if (eq == NULL)
			continue;
		(void) snprintf(prop, sizeof (prop), "%.*s", (int)(eq - pv), pv);
		if ((e = dsl_prop_set_create(dp, spa_name(spa), prop, eq + 1, err,
		    sizeof (err))) != 0)
			(void) host_report("create", spa_name(spa), e, err);
	}
	dsl_pool_close(dp);
	return (e != 0 ? HOST_FAILED : 0);
}

/* The words of a vdev specification (args[key]) as a spec; 0 or reported. */
int
host_arg_spec(json_object *args, const char *key, const char *verb, const char *name,
    spa_vdev_spec_t **specp)
{
	json_object *words;
	char err[1024];
	int error;

	*specp = NULL;
	if (!json_object_object_get_ex(args, key, &words) ||
	    !json_object_is_type(words, json_type_array))
		return (host_report(verb, name, EINVAL, "missing vdev specification"));
	size_t n = json_object_array_length(words);
	char **argv = tarn_alloc((n + 1) * sizeof (char *));
	for (size_t i = 0; i < n; i++)
		argv[i] = (char *)json_object_get_string(json_object_array_get_idx(words, i));
	error = spa_vdev_spec_parse((int)n, argv, specp, err, sizeof (err));
	tarn_free(argv);
	return (error == 0 ? 0 : host_report(verb, name, error, err));
}

static int
op_pool_create(json_object *args, json_object *res)
{
	spa_create_opts_t so = { 0 };
	spa_vdev_spec_t *spec;
	json_object *v, *fsprops = NULL;
	const char *name;
	char err[1024] = "";
	spa_t *spa;
	int error, ret;

	if (host_arg_need(args, "name", "create", &name) != 0 ||
	    host_arg_spec(args, "vdevs", "create", name, &spec) != 0)
		return (HOST_FAILED);
	so.sco_force = host_arg_bool(args, "force");
	host_dmu_opts(&so.sco_dmu);
	so.sco_no_cache = host_arg_bool(args, "no_cache");
	if (json_object_object_get_ex(args, "ashift", &v))
		so.sco_ashift = json_object_get_uint64(v);
	if (json_object_object_get_ex(args, "version", &v))
		so.sco_version = json_object_get_uint64(v);
	if (json_object_object_get_ex(args, "fsprops", &v) &&
	    json_object_is_type(v, json_type_array))
		fsprops = v;
	if ((ret = create_check_imported(name, spec)) != 0 || host_arg_bool(args, "dryrun")) {
		if (ret == 0)
			ret = create_dryrun(name, spec, so.sco_force);
		spa_vdev_spec_free(spec);
		return (ret);
	}
	error = spa_create(name, spec, &so, &spa, err, sizeof (err));
	spa_vdev_spec_free(spec);
	if (error != 0)
		return (host_report("create", name, error, err));
	host_history_event(spa, "create");
	host_history_log(spa);
	ret = create_root_dataset(spa, host_arg_str(args, "mountpoint"), fsprops);
	host_pool_adopt(spa);
	if (ret == 0)
		ret = host_mount_pool(name);
	return (ret);
}

static int
op_pool_destroy(json_object *args, json_object *res)
{
	const char *name;

	if (host_arg_need(args, "name", "destroy", &name) != 0)
		return (HOST_FAILED);
	return (host_pool_end("destroy", name, host_arg_bool(args, "force"), true));
}

const host_op_t host_ops_create[] = {
	{ "pool.create", op_pool_create },
	{ "pool.destroy", op_pool_destroy },
	{ NULL, NULL }
};
