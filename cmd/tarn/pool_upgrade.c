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
 * The host reads the pools' versions and upgrades them (operations
 * pool.versions, pool.upgrade, host/host_op_upgrade.c); this file parses
 * argv and says what they found or did.
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
	{ SPA_FEATURE_SNAPSHOTS, "snapshots",
	    "Snapshots, clones, holds and bookmarks.", NULL },
	{ SPA_FEATURE_ALLOCATION_CLASSES, "allocation_classes",
	    "Log, special and cache devices.", NULL },
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
upgrade_never(uint64_t version, uint64_t features)
{
	return (upgrade_create_only() & ~(version < SPA_VERSION_2 ? 0 : features));
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
upgrade_missing(uint64_t version, uint64_t features)
{
	if (version < SPA_VERSION_2)
		return (SPA_FEATURES_ALL);
	return (SPA_FEATURES_ALL & ~features);
}

static uint64_t
upgrade_u64(json_object *o, const char *key)
{
	return (json_object_get_uint64(json_object_object_get(o, key)));
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
upgrade_show_one(json_object *pool, int pass, int *count)
{
	const char *name = json_object_get_string(json_object_object_get(pool, "name"));
	uint64_t v = upgrade_u64(pool, "version"), f = upgrade_u64(pool, "features");
	uint64_t missing = upgrade_missing(v, f);
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
	} else if (pass == 2 && v >= SPA_VERSION_2 && upgrade_never(v, f) != 0) {
		if ((*count)++ == 0)
			fputs(upgrade_never_head, cli_out);
		fprintf(cli_out, "%s\n", name);
		upgrade_print_never(upgrade_never(v, f), "      ");
	}
}

/* `upgrade` without arguments: which pools could be upgraded. */
static int
upgrade_show(void)
{
	json_object *args = json_object_new_object(), *res, *pools;
	int count[3] = { 0, 0, 0 };

	json_object_object_add(args, "verb", json_object_new_string("upgrade"));
	int r = cli_call("pool.versions", args, &res);
	if (r != 0 || !json_object_object_get_ex(res, "pools", &pools)) {
		json_object_put(res);
		return (r != 0 ? r : CLI_EXIT_ERROR);
	}
	fputs(upgrade_banner, cli_out);
	for (int pass = 0; pass < 3; pass++) {
		if (pass > 0 && count[pass - 1] > 0)
			cli_putc('\n');
		for (size_t i = 0; i < json_object_array_length(pools); i++)
			upgrade_show_one(json_object_array_get_idx(pools, i), pass, &count[pass]);
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
	json_object_put(res);
	return (CLI_EXIT_OK);
}

/* A pool the upgrade found current: say so; *never as for upgrade_one. */
static void
upgrade_current(const char *name, uint64_t target, uint64_t v, uint64_t f, bool *never)
{
	*never = target >= SPA_VERSION_2 && upgrade_never(v, f) != 0;
	if (*never) {
		fprintf(cli_out, "Pool '%s' already has all the features an upgrade "
		    "can enable; these can\nonly be enabled when a pool is "
		    "created:\n", name);
		upgrade_print_never(upgrade_never(v, f), "  ");
	} else if (target >= SPA_VERSION_2)
		fprintf(cli_out, "Pool '%s' already has all supported and "
		    "requested features enabled.\n", name);
	else
		fprintf(cli_out, "Pool '%s' is already formatted using version "
		    "%" PRIu64 ".\n", name, v);
}

/* What an upgrade did (res: pool.upgrade's result); *never as for upgrade_one. */
static void
upgrade_done(const char *name, uint64_t target, json_object *res, bool *never)
{
	uint64_t from = upgrade_u64(res, "from"), before = upgrade_u64(res, "before");
	uint64_t v = upgrade_u64(res, "version"), f = upgrade_u64(res, "features");
	uint64_t added = f & ~(from < SPA_VERSION_2 ? 0 : before);

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
	*never = v >= SPA_VERSION_2 && upgrade_never(v, f) != 0;
	if (*never) {
		fprintf(cli_out, "These features can only be enabled when a pool is "
		    "created and stay\ndisabled on '%s':\n", name);
		upgrade_print_never(upgrade_never(v, f), "  ");
	}
}

/*
 * Upgrade one pool to `version` (0: the newest), through the host
 * (pool.upgrade), which names the features it enabled in the history as
 * cli_features does.  *did says whether anything changed, *never whether
 * create-only features stay disabled.  Returns the exit status.
 */
static int
upgrade_one(const char *name, uint64_t version, bool *did, bool *never)
{
	json_object *args = json_object_new_object(), *res;
	json_object *fn = json_object_new_array_ext((int)ARRAY_SIZE(cli_features));
	uint64_t target = version != 0 ? version : SPA_VERSION;

	*did = *never = false;
	for (size_t i = 0; i < ARRAY_SIZE(cli_features); i++) {
		json_object *f = json_object_new_array_ext(2);
		json_object_array_add(f, json_object_new_uint64(cli_features[i].cf_flag));
		json_object_array_add(f, json_object_new_string(cli_features[i].cf_name));
		json_object_array_add(fn, f);
	}
	json_object_object_add(args, "name", json_object_new_string(name));
	json_object_object_add(args, "version", json_object_new_uint64(version));
	json_object_object_add(args, "feature_names", fn);
	int r = cli_call("pool.upgrade", args, &res);
	const char *outcome = json_object_get_string(json_object_object_get(res, "outcome"));
	if (r != 0 || outcome == NULL) {
		json_object_put(res);
		return (r != 0 ? r : CLI_EXIT_ERROR);
	}
	if (strcmp(outcome, "newer") == 0) {
		fprintf(cli_out, "Pool '%s' is already formatted using more current "
		    "version '%" PRIu64 "'.\n\n", name, upgrade_u64(res, "from"));
	} else if (strcmp(outcome, "current") == 0) {
		upgrade_current(name, target, upgrade_u64(res, "version"),
		    upgrade_u64(res, "features"), never);
	} else {
		*did = true;
		upgrade_done(name, target, res, never);
	}
	json_object_put(res);
	return (CLI_EXIT_OK);
}

static int
upgrade_all(uint64_t version)
{
	json_object *names;
	int ret = CLI_EXIT_OK, done = 0, never = 0;

	if ((names = cli_pool_names("upgrade", &ret)) == NULL)
		return (ret);
	fputs(upgrade_banner, cli_out);
	for (size_t i = 0; i < json_object_array_length(names); i++) {
		bool did, nev;
		int r = upgrade_one(json_object_get_string(json_object_array_get_idx(names, i)),
		    version, &did, &nev);
		if (r == CLI_EXIT_LOST) {
			json_object_put(names);
			return (r);   /* the daemon died: no other pool either */
		}
		if (r != 0)
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
	json_object_put(names);
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
	for (int i = 0; i < argc; i++) {
		int r = upgrade_one(argv[i], version, &did, &never);
		if (r == CLI_EXIT_LOST)
			return (r);   /* the daemon died: no other pool either */
		if (r != 0)
			ret = CLI_EXIT_ERROR;
	}
	return (ret);
}
