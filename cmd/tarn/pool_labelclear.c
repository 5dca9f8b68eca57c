/*
 * pool_labelclear.c — `tarn pool labelclear [-f] <device>`, as zpool
 * labelclear: zero the Tarn labels of a device that no longer belongs to
 * a pool here, so that it can be reused without `create -f` and is not
 * offered by `import` any more.
 *
 * A device of a pool imported on this host (a member or a hot spare of
 * the pool its label names) is never cleared, -f or not: that would break
 * the pool.  A device whose label says its pool is exported, or active
 * (in use by another host, or left by a crash) or a hot spare needs -f,
 * since its pool may still want it.  A device with no Tarn label is left
 * alone and the command succeeds, as there is nothing to clear.
 */
#include "tarn.h"

#include <getopt.h>
#include <unistd.h>

/*
 * Is the device whose label is cfg part of a pool imported here?  The
 * pool named in the label, with the label's pool guid, has the label's
 * leaf in its tree or among its spares.
 */
static bool
labelclear_in_use(const vdev_label_config_t *cfg)
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

int
cli_pool_labelclear(int argc, char **argv)
{
	bool force = false;
	char path[VDEV_PATH_MAX + 1], msg[VDEV_PATH_MAX + 256];
	vdev_label_config_t cfg;
	int c, e;

	while ((c = getopt(argc, argv, ":f")) != -1) {
		if (c == 'f')
			force = true;
		else
			return (cli_bad_option("labelclear", c, optopt));
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return (cli_usage_error("labelclear", "missing vdev name"));
	if (argc > 1)
		return (cli_usage_error("labelclear", "too many arguments"));
	if (cli_vdev_newpath("clear label for", argv[0], argv[0], path, sizeof (path)) != 0)
		return (CLI_EXIT_ERROR);

	e = vdev_label_read_path(path, &cfg);
	if (e == ENOENT && access(path, F_OK) == 0)
		return (CLI_EXIT_OK);           /* no Tarn label: nothing to clear */
	if (e == EINVAL && !force)
		return (cli_cannot("clear label for", path, e, "its labels are damaged "
		    "and do not say which pool it belonged to; use -f to clear them"));
	if (e != 0 && e != EINVAL)
		return (cli_cannot("clear label for", path, e, NULL));
	if (e == 0) {
		const char *why = NULL;
		if (labelclear_in_use(&cfg)) {
			(void) snprintf(msg, sizeof (msg), "the device is part of "
			    "imported pool '%s'", cfg.vlc_name);
			vdev_config_free(&cfg);
			return (cli_cannot("clear label for", path, EBUSY, msg));
		}
		switch (cfg.vlc_state) {
		case POOL_STATE_EXPORTED: why = "exported"; break;
		case POOL_STATE_SPARE: why = "a hot spare of"; break;
		case POOL_STATE_DESTROYED: break;
		default: why = "potentially active"; break;
		}
		if (why != NULL && !force) {
			(void) snprintf(msg, sizeof (msg), "the device is a member of %s "
			    "pool '%s'; use -f to clear it anyway", why, cfg.vlc_name);
			if (cfg.vlc_state == POOL_STATE_SPARE)
				(void) snprintf(msg, sizeof (msg), "the device is a hot spare "
				    "of pool '%s'; use -f to clear it anyway", cfg.vlc_name);
			vdev_config_free(&cfg);
			return (cli_cannot("clear label for", path, EBUSY, msg));
		}
		vdev_config_free(&cfg);
	}
	if ((e = vdev_label_clear_path(path)) != 0)
		return (cli_cannot("clear label for", path, e, NULL));
	return (CLI_EXIT_OK);
}
