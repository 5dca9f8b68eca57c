/*
 * host_op_label.c — zpool labelclear: zero the Tarn labels of a device
 * that no longer belongs to a pool here.
 *
 *   pool.labelclear   path (absolute), force           -
 *
 * A device of a pool imported on this host (a member or a hot spare of
 * the pool its label names) is never cleared, force or not: that would
 * break the pool.  A device whose label says its pool is exported, or
 * active (in use by another host, or left by a crash) or a hot spare
 * needs force, since its pool may still want it; so do labels too
 * damaged to say which pool they belonged to.  A device with no Tarn
 * label is left alone and the operation succeeds: nothing to clear.
 * Failures: "cannot clear label for 'PATH'".
 */
#include "host_impl.h"

#include <unistd.h>

/*
 * Is the device whose label is cfg part of a pool imported here?  The
 * pool named in the label, with the label's pool guid, has the label's
 * leaf in its tree or among its spares.
 */
static bool
label_in_use(const vdev_label_config_t *cfg)
{
	char err[1024];
	spa_t *spa;

	if (host_pool_open(cfg->vlc_name, SPA_OPEN_READONLY | SPA_OPEN_NOVERIFY, &spa,
	    err, sizeof (err)) != 0 || spa == NULL)
		return (false);
	bool used = false;
	if (spa_guid(spa) == cfg->vlc_pool_guid) {
		spa_vdev_hold(spa);
		vdev_t *root = spa_root_vdev(spa);
		used = vdev_lookup_guid(root, cfg->vlc_leaf_guid) != NULL ||
		    (vdev_spares(root) != NULL &&
		    vdev_lookup_guid(vdev_spares(root), cfg->vlc_leaf_guid) != NULL);
		spa_vdev_rele(spa);
	}
	host_pool_close(spa);
	return (used);
}

/* May the labels cfg of path go?  0, or the failure reported. */
static int
label_may_clear(const char *path, const vdev_label_config_t *cfg, bool force)
{
	char msg[VDEV_PATH_MAX + 256];
	const char *why = NULL;

	if (label_in_use(cfg)) {
		(void) snprintf(msg, sizeof (msg), "the device is part of imported pool '%s'",
		    cfg->vlc_name);
		return (host_report("clear label for", path, EBUSY, msg));
	}
	switch (cfg->vlc_state) {
	case POOL_STATE_EXPORTED: why = "exported"; break;
	case POOL_STATE_SPARE: why = "a hot spare of"; break;
	case POOL_STATE_L2CACHE: why = "a cache device of"; break;
	case POOL_STATE_DESTROYED: break;
	default: why = "potentially active"; break;
	}
	if (why == NULL || force)
		return (0);
	if (cfg->vlc_state == POOL_STATE_SPARE || cfg->vlc_state == POOL_STATE_L2CACHE)
		(void) snprintf(msg, sizeof (msg), "the device is %s pool '%s'; "
		    "use -f to clear it anyway", why, cfg->vlc_name);
	else
		(void) snprintf(msg, sizeof (msg), "the device is a member of %s pool '%s'; "
		    "use -f to clear it anyway", why, cfg->vlc_name);
	return (host_report("clear label for", path, EBUSY, msg));
}

static int
op_pool_labelclear(json_object *args, json_object *res)
{
	bool force = host_arg_bool(args, "force");
	vdev_label_config_t cfg;
	const char *path;
	int e;

	if (host_arg_need(args, "path", "clear label for", &path) != 0)
		return (HOST_FAILED);
	e = vdev_label_read_path(path, &cfg);
	if (e == ENOENT && access(path, F_OK) == 0)
		return (0);           /* no Tarn label: nothing to clear */
	if (e == EINVAL && !force)
		return (host_report("clear label for", path, e, "its labels are damaged "
		    "and do not say which pool it belonged to; use -f to clear them"));
	if (e != 0 && e != EINVAL)
		return (host_report("clear label for", path, e, NULL));
	if (e == 0) {
		int r = label_may_clear(path, &cfg, force);
		vdev_config_free(&cfg);
		if (r != 0)
			return (r);
	}
	if ((e = vdev_label_clear_path(path)) != 0)
		return (host_report("clear label for", path, e, NULL));
	return (0);
}

const host_op_t host_ops_label[] = {
	{ "pool.labelclear", op_pool_labelclear },
	{ NULL, NULL }
};
