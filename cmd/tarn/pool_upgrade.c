/*
 * pool_upgrade.c — `tarn pool upgrade`: the pool format version and its
 * feature flags, in zpool's words.
 *
 *	upgrade            list the pools whose format is older than this
 *	                   build supports, and what upgrading enables
 *	upgrade -v         list the versions and features this build knows
 *	upgrade [-V N] POOL... | -a
 *	                   upgrade (to version N, default the newest)
 *
 * Tarn's versions (lib/util/format.h): version 1 is the first format,
 * without feature flags (the "legacy" version in zpool's terms); version 2
 * brings feature flags, each enabled per pool.  An upgrade is one-way.
 */
#include "tarn.h"

#include <getopt.h>

/* Also what `pool get` shows as feature@NAME (tarn.h). */
const cli_feature_t cli_features[] = {
	{ SPA_FEATURE_HISTORY, "history",
	    "Pool command history, shown by 'zpool history'.", NULL },
	{ SPA_FEATURE_INTENT_LOG, "intent_log",
	    "Per-dataset intent log: fsync without a whole txg sync.", NULL },
	{ SPA_FEATURE_LOG_XATTR_PUNCH, "log_xattr_punch",
	    "Xattr changes (ACLs too) and hole punches in the intent log.", NULL },
	{ SPA_FEATURE_SPACE_DEFLATE, "space_deflate",
	    "Space in data bytes (RAID-Z parity not counted); new pools only.",
	    "the space counts on disk are in allocated bytes" },
	{ SPA_FEATURE_XATTR_INLINE, "xattr_inline",
	    "Small extended attributes kept in the inode (Samba's DOSATTRIB).", NULL },
	{ SPA_FEATURE_LOGICAL_SPACE_V0, "logical_space_v0",
	    "Retired: logical bytes that counted metadata uncompressed (not shown).",
	    NULL },
	{ SPA_FEATURE_ZLE_COMPRESS, "zle_compress",
	    "compression=zle: runs of zeros stored as one byte.", NULL },
	{ SPA_FEATURE_LOGICAL_SPACE, "logical_space",
	    "Logical and compressed bytes per dataset (compressratio); new pools only.",
	    "the logical sizes of the data already written were never counted" },
};
const size_t cli_nfeatures = ARRAY_SIZE(cli_features);

static const struct {
	uint64_t    uv_version;
	const char *uv_desc;
} upgrade_legacy[] = {
	{ SPA_VERSION_1, "Initial Tarn format, without feature flags" },
};

/*
 * Features only `pool create` can enable: their counts cover every block
 * from the first one, and an existing pool's blocks were counted in
 * another unit (or not at all), so an upgrade leaves them disabled.
 */
static uint64_t
upgrade_create_only(void)
{
	uint64_t f = 0;
	for (size_t i = 0; i < ARRAY_SIZE(cli_features); i++)
		if (cli_features[i].cf_why != NULL)
			f |= cli_features[i].cf_flag;
	return (f);
}

/* Create-only features a pool lacks (which no upgrade will enable). */
static uint64_t
upgrade_never(spa_t *spa)
{
	return (upgrade_create_only() & ~(spa_version(spa) < SPA_VERSION_2 ? 0 :
	    spa_features(spa)));
}

/* The create-only features of `flags`, one a line, each with its reason. */
static void
upgrade_print_never(uint64_t flags, const char *indent)
{
	for (size_t i = 0; i < ARRAY_SIZE(cli_features); i++)
		if ((flags & cli_features[i].cf_flag) && cli_features[i].cf_why != NULL)
			fprintf(cli_out, "%s%-16s (%s)\n", indent, cli_features[i].cf_name,
			    cli_features[i].cf_why);
}

static const char upgrade_banner[] = "This system supports ZFS pool feature flags.\n\n";

/* Features this build knows that the pool lacks. */
static uint64_t
upgrade_missing(spa_t *spa)
{
	if (spa_version(spa) < SPA_VERSION_2)
		return (SPA_FEATURES_ALL);
	return (SPA_FEATURES_ALL & ~spa_features(spa));
}

static void
upgrade_print_features(uint64_t flags, const char *indent)
{
	for (size_t i = 0; i < ARRAY_SIZE(cli_features); i++)
		if (flags & cli_features[i].cf_flag)
			fprintf(cli_out, "%s%s\n", indent, cli_features[i].cf_name);
}

static int
upgrade_list_versions(void)
{
	fputs(upgrade_banner, cli_out);
	fprintf(cli_out, "The following features are supported:\n\n");
	fprintf(cli_out, "FEAT DESCRIPTION\n");
	fprintf(cli_out, "-------------------------------------------------------------\n");
	for (size_t i = 0; i < ARRAY_SIZE(cli_features); i++)
		fprintf(cli_out, "%-37s\n     %s\n", cli_features[i].cf_name,
		    cli_features[i].cf_desc);
	fprintf(cli_out, "\nThe following legacy versions are also supported:\n\n");
	fprintf(cli_out, "VER  DESCRIPTION\n");
	fprintf(cli_out, "---  --------------------------------------------------------\n");
	for (size_t i = 0; i < ARRAY_SIZE(upgrade_legacy); i++)
		fprintf(cli_out, "%2" PRIu64 "   %s\n", upgrade_legacy[i].uv_version,
		    upgrade_legacy[i].uv_desc);
	fprintf(cli_out, "\nA pool with feature flags is at version %llu ('zpool get "
	    "version' shows it);\n'zpool upgrade' moves a version 1 pool there.\n",
	    (unsigned long long)SPA_VERSION_2);
	fprintf(cli_out, "\nFor more information on a particular version, including "
	    "supported releases,\nsee docs/FORMAT.md.\n");
	return (CLI_EXIT_OK);
}

static const char upgrade_never_head[] = "The following features can only be "
    "enabled when a pool is created;\nan upgrade leaves them disabled on these "
    "pools:\n\nPOOL  FEATURE\n---------------\n";

/* One pool of `upgrade`'s listing: pass 0 legacy, 1 missing features, 2 never. */
static void
upgrade_show_one(spa_t *spa, const char *name, int pass, int *count)
{
	uint64_t v = spa_version(spa), missing = upgrade_missing(spa);
	if (pass == 0 && v < SPA_VERSION_2) {
		if ((*count)++ == 0)
			fprintf(cli_out, "The following pools are formatted with legacy "
			    "version numbers and can\nbe upgraded to use feature flags.  "
			    "After being upgraded, these pools\nwill no longer be "
			    "accessible by software that does not support feature\n"
			    "flags.\n\nVER  POOL\n---  ------------\n");
		fprintf(cli_out, "%-4" PRIu64 " %s\n", v, name);
	} else if (pass == 1 && v >= SPA_VERSION_2 && missing != 0) {
		if ((*count)++ == 0)
			fprintf(cli_out, "Some supported features are not enabled on the "
			    "following pools. Once a\nfeature is enabled the pool may "
			    "become incompatible with software\nthat does not support the "
			    "feature. See 'zpool upgrade -v'.\n\nPOOL  FEATURE\n"
			    "---------------\n");
		fprintf(cli_out, "%s\n", name);
		upgrade_print_features(missing, "      ");
	} else if (pass == 2 && v >= SPA_VERSION_2 && upgrade_never(spa) != 0) {
		if ((*count)++ == 0)
			fputs(upgrade_never_head, cli_out);
		fprintf(cli_out, "%s\n", name);
		upgrade_print_never(upgrade_never(spa), "      ");
	}
}

/* `upgrade` without arguments: which pools could be upgraded. */
static int
upgrade_show(void)
{
	char **names;
	int n, error, count[3] = { 0, 0, 0 };
	spa_t *spa;
	char err[1024];

	if ((error = host_pool_names(&names, &n)) != 0)
		return (cli_cannot("upgrade", spa_cachefile_path(), error, NULL));
	fputs(upgrade_banner, cli_out);
	for (int pass = 0; pass < 3; pass++) {
		if (pass > 0 && count[pass - 1] > 0)
			cli_putc('\n');
		for (int i = 0; i < n; i++) {
			if (host_pool_open(names[i], SPA_OPEN_READONLY | SPA_OPEN_NOVERIFY,
			    &spa, err, sizeof (err)) != 0)
				continue;
			upgrade_show_one(spa, names[i], pass, &count[pass]);
			host_pool_close(spa);
		}
		if (pass == 0 && count[0] > 0)
			fprintf(cli_out, "\nUse 'zpool upgrade -v' for a list of available "
			    "legacy versions.\n");
		else if (pass == 0)
			fprintf(cli_out, "All pools are formatted using feature flags.\n\n");
	}
	if (count[1] == 0 && count[2] == 0)
		fprintf(cli_out, "Every feature flags pool has all supported and "
		    "requested features enabled.\n");
	else if (count[1] == 0)
		fprintf(cli_out, "\nEvery feature flags pool has all the features an "
		    "upgrade can enable.\n");
	host_names_free(names, n);
	return (CLI_EXIT_OK);
}

/*
 * Upgrade one pool to `version` (0: the newest).  *did says whether
 * anything changed, *never whether create-only features stay disabled.
 * Returns the exit status.
 */
static int
upgrade_one(const char *name, uint64_t version, bool *did, bool *never)
{
	spa_t *spa;
	char err[1024];
	int error;

	*did = *never = false;
	if ((error = host_pool_open(name, 0, &spa, err, sizeof (err))) != 0)
		return (cli_cannot("upgrade", name, error, err));
	uint64_t from = spa_version(spa), before = spa_features(spa);
	uint64_t target = version != 0 ? version : SPA_VERSION;
	if (from > target) {
		fprintf(cli_out, "Pool '%s' is already formatted using more current "
		    "version '%" PRIu64 "'.\n\n", name, from);
		host_pool_close(spa);
		return (CLI_EXIT_OK);
	}
	if (from == target && (target < SPA_VERSION_2 || upgrade_missing(spa) == 0)) {
		*never = target >= SPA_VERSION_2 && upgrade_never(spa) != 0;
		if (*never) {
			fprintf(cli_out, "Pool '%s' already has all the features an upgrade "
			    "can enable; these can\nonly be enabled when a pool is "
			    "created:\n", name);
			upgrade_print_never(upgrade_never(spa), "  ");
		} else if (target >= SPA_VERSION_2)
			fprintf(cli_out, "Pool '%s' already has all supported and "
			    "requested features enabled.\n", name);
		else
			fprintf(cli_out, "Pool '%s' is already formatted using version "
			    "%" PRIu64 ".\n", name, from);
		host_pool_close(spa);
		return (CLI_EXIT_OK);
	}
	err[0] = '\0';
	if ((error = spa_upgrade(spa, target, err, sizeof (err))) != 0) {
		host_pool_close(spa);
		return (cli_cannot("upgrade", name, error, err));
	}
	*did = true;
	uint64_t added = spa_features(spa) & ~(from < SPA_VERSION_2 ? 0 : before);
	/* zpool history -i: what the upgrade changed, then the command */
	if (from != target)
		(void) spa_history_log_internal(spa, 0, "set version=%" PRIu64, target);
	for (size_t i = 0; i < ARRAY_SIZE(cli_features); i++)
		if (added & cli_features[i].cf_flag)
			(void) spa_history_log_internal(spa, 0, "set feature@%s=enabled",
			    cli_features[i].cf_name);
	host_history_log(spa);
	if (from < SPA_VERSION_2 && target >= SPA_VERSION_2)
		fprintf(cli_out, "Successfully upgraded '%s' from version %" PRIu64
		    " to feature flags.\n", name, from);
	else if (from != target)
		fprintf(cli_out, "Successfully upgraded '%s' from version %" PRIu64
		    " to version %" PRIu64 ".\n", name, from, target);
	if (added != 0) {
		fprintf(cli_out, "Enabled the following features on '%s':\n", name);
		upgrade_print_features(added, "  ");
	}
	*never = spa_version(spa) >= SPA_VERSION_2 && upgrade_never(spa) != 0;
	if (*never) {
		fprintf(cli_out, "These features can only be enabled when a pool is "
		    "created and stay\ndisabled on '%s':\n", name);
		upgrade_print_never(upgrade_never(spa), "  ");
	}
	host_pool_close(spa);
	return (CLI_EXIT_OK);
}

static int
upgrade_all(uint64_t version)
{
	char **names;
	int n, error, ret = CLI_EXIT_OK, done = 0, never = 0;

	if ((error = host_pool_names(&names, &n)) != 0)
		return (cli_cannot("upgrade", spa_cachefile_path(), error, NULL));
	fputs(upgrade_banner, cli_out);
	for (int i = 0; i < n; i++) {
		bool did, nev;
		if (upgrade_one(names[i], version, &did, &nev) != 0)
			ret = CLI_EXIT_ERROR;
		done += did;
		never += nev;
	}
	if (done == 0 && ret == CLI_EXIT_OK && never == 0)
		fprintf(cli_out, "All pools are already formatted using feature flags.\n\n"
		    "Every feature flags pool already has all supported and requested "
		    "features enabled.\n");
	else if (done == 0 && ret == CLI_EXIT_OK)
		fprintf(cli_out, "All pools are already formatted using feature flags.\n\n"
		    "Every feature flags pool already has all the features an upgrade can "
		    "enable;\nthose listed above can only be enabled when a pool is "
		    "created.\n");
	host_names_free(names, n);
	return (ret);
}

int
cli_pool_upgrade(int argc, char **argv)
{
	bool all = false, show_versions = false, did, never;
	uint64_t version = 0;
	int c, ret = CLI_EXIT_OK;
	char *end;

	cli_history_begin(argc, argv);
	while ((c = getopt(argc, argv, ":avV:")) != -1) {
		switch (c) {
		case 'a': all = true; break;
		case 'v': show_versions = true; break;
		case 'V':
			errno = 0;
			version = strtoull(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || optarg[0] < '0' || optarg[0] > '9' ||
			    version < 1 || version > SPA_VERSION)
				return (cli_usage_error("upgrade", "invalid version '%s': this "
				    "build supports 1 to %llu", optarg,
				    (unsigned long long)SPA_VERSION));
			break;
		default:
			return (cli_bad_option("upgrade", c, optopt));
		}
	}
	argc -= optind;
	argv += optind;
	if (show_versions) {
		if (all || argc > 0 || version != 0)
			return (cli_usage_error("upgrade", "-v cannot be used with other "
			    "arguments"));
		return (upgrade_list_versions());
	}
	if (all) {
		if (argc > 0)
			return (cli_usage_error("upgrade", "-a cannot be used with a pool name"));
		return (upgrade_all(version));
	}
	if (argc == 0) {
		if (version != 0)
			return (cli_usage_error("upgrade", "-V needs a pool name or -a"));
		return (upgrade_show());
	}
	fputs(upgrade_banner, cli_out);
	for (int i = 0; i < argc; i++)
		if (upgrade_one(argv[i], version, &did, &never) != 0)
			ret = CLI_EXIT_ERROR;
	return (ret);
}
