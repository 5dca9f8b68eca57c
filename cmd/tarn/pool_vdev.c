/*
 * pool_vdev.c — the device lifecycle verbs of `tarn pool`, in zpool's
 * syntax:
 *
 *	attach [-fw] POOL DEVICE NEW      make NEW a mirror of DEVICE
 *	detach POOL DEVICE
 *	replace [-fw] POOL DEVICE [NEW]   without NEW: the same device, wiped
 *	online POOL DEVICE...
 *	offline [-t] POOL DEVICE...       -t: until the next import only
 *	clear POOL [DEVICE]               reset error counts
 *	add [-fn] POOL VDEV...            top-level vdevs (-n: show the result)
 *	add [-f] POOL spare DEVICE...     hot spares
 *	remove POOL DEVICE...             cache devices, unused spares, log vdevs
 *
 * VDEV words may hold zpool's class keywords: "log [mirror] D...",
 * "special mirror D D", "cache D...".
 *
 * DEVICE names a leaf by path, by GUID or by the last part of its path;
 * NEW is a path (a word without '/' names /dev/WORD); for replace it may be a
 * hot spare of the pool (it stays in as spare-N until a detach).  attach, replace
 * and online start a resilver, which inside tarnd goes on after the
 * command returns; -w waits for it (attach, replace).  In-process
 * (without tarnd) they always wait: nobody would carry it on.
 *
 * Here: the options and arguments, device words made absolute paths (the
 * host's directory is not this process's), and the printing; the host
 * changes the pool (host/host_op_vdev.c: pool.attach, pool.replace,
 * pool.detach, pool.online, pool.offline, pool.clear, pool.add,
 * pool.add_spares).
 */
#include "tarn.h"

#include <getopt.h>

/*
 * Absolute path of a new device, as create would take it.  Returns 0, or
 * prints the error (cannot VERB 'POOL': ...) and returns 1.
 */
int
cli_vdev_newpath(const char *verb, const char *pool, const char *word, char *buf, size_t len)
{
	spa_vdev_spec_t *spec;
	char err[1024];
	char *argv[1] = { (char *)word };
	int error;

	if (strcmp(word, "mirror") == 0 || strncmp(word, "raidz", 5) == 0 ||
	    strcmp(word, "spare") == 0) {
		(void) snprintf(err, sizeof (err), "'%s' is not a device; give the "
		    "path of one device", word);
		return (cli_cannot(verb, pool, EINVAL, err));
	}
	if ((error = spa_vdev_spec_parse(1, argv, &spec, err, sizeof (err))) != 0)
		return (cli_cannot(verb, pool, error, err));
	const spa_vdev_spec_t *leaf = spec;
	while (leaf->path == NULL && leaf->nchildren > 0)
		leaf = leaf->children[0];
	(void) snprintf(buf, len, "%s", leaf->path != NULL ? leaf->path : word);
	spa_vdev_spec_free(spec);
	return (0);
}

static int
pv_parse_fw(const char *verb, int argc, char **argv, bool *force, bool *wait)
{
	int c;

	while ((c = getopt(argc, argv, ":fw")) != -1) {
		if (c == 'f')
			*force = true;
		else if (c == 'w')
			*wait = true;
		else
			return (cli_bad_option(verb, c, optopt));
	}
	return (0);
}

/* Run op with args; its exit status. */
static int
pv_call(const char *op, json_object *args)
{
	json_object *res;
	int r = cli_call(op, args, &res);

	json_object_put(res);
	return (r);
}

/*
 * attach (NEW required) and replace (NEW optional): parse, make NEW an
 * absolute path, and ask the host (which changes the tree, refreshes the
 * cache file and waits for the resilver if asked).
 */
static int
pv_attach_replace(const char *cmd, bool attach, int argc, char **argv)
{
	bool force = false, wait = false;
	char newpath[VDEV_PATH_MAX + 1];
	json_object *args;
	int error;

	cli_history_begin(argc, argv);
	if ((error = pv_parse_fw(cmd, argc, argv, &force, &wait)) != 0)
		return (error);
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return (cli_usage_error(cmd, "missing pool name argument"));
	if (argc < 2)
		return (cli_usage_error(cmd, "missing <device> specification"));
	if (attach && argc < 3)
		return (cli_usage_error(cmd, "missing <new_device> specification"));
	if (argc > 3)
		return (cli_usage_error(cmd, "too many arguments"));
	bool hasnew = argc == 3;
	if (hasnew && cli_vdev_newpath(cmd, argv[0], argv[2], newpath, sizeof (newpath)) != 0)
		return (CLI_EXIT_ERROR);
	args = json_object_new_object();
	json_object_object_add(args, "pool", json_object_new_string(argv[0]));
	json_object_object_add(args, "device", json_object_new_string(argv[1]));
	if (hasnew)
		json_object_object_add(args, "new", json_object_new_string(newpath));
	json_object_object_add(args, "force", json_object_new_boolean(force));
	json_object_object_add(args, "wait", json_object_new_boolean(wait));
	return (pv_call(attach ? "pool.attach" : "pool.replace", args));
}

int
cli_pool_attach(int argc, char **argv)
{
	return (pv_attach_replace("attach", true, argc, argv));
}

int
cli_pool_replace(int argc, char **argv)
{
	return (pv_attach_replace("replace", false, argc, argv));
}

int
cli_pool_detach(int argc, char **argv)
{
	json_object *args;
	int c;

	cli_history_begin(argc, argv);
	while ((c = getopt(argc, argv, ":")) != -1)
		return (cli_bad_option("detach", c, optopt));
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return (cli_usage_error("detach", "missing pool name argument"));
	if (argc < 2)
		return (cli_usage_error("detach", "missing <device> specification"));
	if (argc > 2)
		return (cli_usage_error("detach", "too many arguments"));
	args = json_object_new_object();
	json_object_object_add(args, "pool", json_object_new_string(argv[0]));
	json_object_object_add(args, "device", json_object_new_string(argv[1]));
	return (pv_call("pool.detach", args));
}

/*
 * online/offline: one pool, several devices; each device's outcome in
 * order (a failure, or online's warning for a device still faulted).
 */
static int
pv_online_offline(const char *verb, bool online, bool temporary, int argc, char **argv)
{
	json_object *args, *res, *devs, *names;
	int ret;

	if (argc < 1)
		return (cli_usage_error(verb, "missing pool name"));
	if (argc < 2)
		return (cli_usage_error(verb, "missing device name"));
	args = json_object_new_object();
	names = json_object_new_array_ext(argc - 1);
	for (int i = 1; i < argc; i++)
		json_object_array_add(names, json_object_new_string(argv[i]));
	json_object_object_add(args, "pool", json_object_new_string(argv[0]));
	json_object_object_add(args, "devices", names);
	if (!online)
		json_object_object_add(args, "temporary", json_object_new_boolean(temporary));
	ret = cli_call(online ? "pool.online" : "pool.offline", args, &res);
	if (res == NULL || !json_object_object_get_ex(res, "devices", &devs)) {
		json_object_put(res);
		return (ret);
	}
	for (size_t i = 0; i < json_object_array_length(devs); i++) {
		json_object *d = json_object_array_get_idx(devs, i);
		const char *name = json_object_get_string(json_object_object_get(d, "name"));
		int error = json_object_get_int(json_object_object_get(d, "error"));
		if (error != 0)
			(void) cli_cannot(verb, name, error,
			    json_object_get_string(json_object_object_get(d, "msg")));
		else if (json_object_get_boolean(json_object_object_get(d, "faulted")))
			fprintf(cli_err, "warning: device '%s' onlined, but remains in "
			    "faulted state\nuse '%s replace' to replace devices that are "
			    "no longer present\n", name, cli_pool_prog);
	}
	json_object_put(res);
	return (ret);
}

int
cli_pool_online(int argc, char **argv)
{
	bool expand = false;
	int c;

	cli_history_begin(argc, argv);
	while ((c = getopt(argc, argv, ":e")) != -1) {
		if (c == 'e')
			expand = true;
		else
			return (cli_bad_option("online", c, optopt));
	}
	argc -= optind;
	argv += optind;
	/*
	 * -e: grow the devices to their new size.  A device's size is fixed
	 * at create (labels, metaslab count), so refuse rather than say done.
	 */
	if (expand && argc >= 2) {
		fprintf(cli_err, "cannot expand %s: device expansion is not supported "
		    "yet; the device keeps the size it had when it was added\n", argv[1]);
		return (CLI_EXIT_ERROR);
	}
	return (pv_online_offline("online", true, false, argc, argv));
}

int
cli_pool_offline(int argc, char **argv)
{
	bool temporary = false;
	int c;

	cli_history_begin(argc, argv);
	while ((c = getopt(argc, argv, ":t")) != -1) {
		if (c == 't')
			temporary = true;
		else
			return (cli_bad_option("offline", c, optopt));
	}
	return (pv_online_offline("offline", false, temporary, argc - optind,
	    argv + optind));
}

int
cli_pool_clear(int argc, char **argv)
{
	json_object *args;
	int c;

	cli_history_begin(argc, argv);
	while ((c = getopt(argc, argv, ":")) != -1)
		return (cli_bad_option("clear", c, optopt));
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return (cli_usage_error("clear", "missing pool name"));
	if (argc > 2)
		return (cli_usage_error("clear", "too many arguments"));
	args = json_object_new_object();
	json_object_object_add(args, "pool", json_object_new_string(argv[0]));
	if (argc == 2)
		json_object_object_add(args, "device", json_object_new_string(argv[1]));
	return (pv_call("pool.clear", args));
}

/*
 * A vdev of a tree the host answered (host_op_tree_json) by its display
 * name with its number: "mirror-0", "raidz2-1", "spare-2", the leaf's
 * path or GUID; "root" for the root.
 */
void
cli_tree_vdev_name(json_object *vd, char *buf, size_t len)
{
	const char *type = json_object_get_string(json_object_object_get(vd, "type"));
	uint64_t id = json_object_get_uint64(json_object_object_get(vd, "id"));
	json_object *path;

	if (type == NULL)
		type = "file";
	if (strcmp(type, "mirror") == 0 || strcmp(type, "spare") == 0 ||
	    strcmp(type, "replacing") == 0)
		(void) snprintf(buf, len, "%s-%" PRIu64, type, id);
	else if (strcmp(type, "raidz") == 0)
		(void) snprintf(buf, len, "raidz%d-%" PRIu64,
		    json_object_get_int(json_object_object_get(vd, "nparity")), id);
	else if (strcmp(type, "root") == 0)
		(void) snprintf(buf, len, "root");
	else if (json_object_object_get_ex(vd, "path", &path))
		(void) snprintf(buf, len, "%s", json_object_get_string(path));
	else
		(void) snprintf(buf, len, "%" PRIu64,
		    json_object_get_uint64(json_object_object_get(vd, "guid")));
}

/* add -n: one top-level vdev of the pool's tree (host_op_tree_json) and its children. */
static void
add_print_top(json_object *top)
{
	char name[VDEV_PATH_MAX + 32];
	json_object *kids;

	cli_tree_vdev_name(top, name, sizeof (name));
	fprintf(cli_out, "\t  %s\n", name);
	if (!json_object_object_get_ex(top, "children", &kids))
		return;
	for (size_t c = 0; c < json_object_array_length(kids); c++) {
		cli_tree_vdev_name(json_object_array_get_idx(kids, c), name, sizeof (name));
		fprintf(cli_out, "\t    %s\n", name);
	}
}

/* Is a top-level vdev of the host's tree, or of a spec, in class cls ("" normal)? */
static bool
add_in_class(json_object *top, const spa_vdev_spec_t *ts, const char *cls)
{
	const char *c = top != NULL ? json_object_get_string(json_object_object_get(top,
	    "class")) : ts->cache ? "cache" : ts->bias == VDEV_BIAS_LOG ? "log" :
	    ts->bias == VDEV_BIAS_SPECIAL ? "special" : NULL;
	return (strcmp(c != NULL ? c : "", cls) == 0);
}

/*
 * add -n: the pool's tree as it would be, new vdevs last in each section
 * (without numbers), the special, log and cache vdevs under their headers
 * as status shows them.
 */
static void
add_print(json_object *root, const char *pool, const spa_vdev_spec_t *spec)
{
	static const char *const cls[][2] = { { "", NULL }, { "special", "special" },
		{ "log", "logs" }, { "cache", "cache" } };
	json_object *tops = NULL;

	fprintf(cli_out, "would update '%s' to the following configuration:\n\n\t%s\n",
	    pool, pool);
	(void) json_object_object_get_ex(root, "children", &tops);
	for (size_t k = 0; k < ARRAY_SIZE(cls); k++) {
		bool header = false;
		for (size_t t = 0; tops != NULL && t < json_object_array_length(tops); t++) {
			json_object *top = json_object_array_get_idx(tops, t);
			if (!add_in_class(top, NULL, cls[k][0]))
				continue;
			if (cls[k][1] != NULL && !header)
				fprintf(cli_out, "\t%s\n", cls[k][1]);
			header = true;
			add_print_top(top);
		}
		for (int t = 0; t < spec->nchildren; t++) {
			if (!add_in_class(NULL, spec->children[t], cls[k][0]))
				continue;
			if (cls[k][1] != NULL && !header)
				fprintf(cli_out, "\t%s\n", cls[k][1]);
			header = true;
			cli_print_spec(spec->children[t], pool, 2);
		}
	}
}

/* add [-n] POOL VDEV...: new top-level vdevs (mirror, raidz, single devices). */
static int
add_tops(const char *pool, int nwords, char **words, bool force, bool dryrun)
{
	spa_vdev_spec_t *spec;
	json_object *args, *res, *tree;
	char err[1024];
	int error, ret;

	for (int i = 0; i < nwords; i++)
		if (strcmp(words[i], "spare") == 0)
			return (cli_cannot("add to", pool, ENOTSUP, "add hot spares by "
			    "themselves ('add POOL spare DEVICE...')"));
	if ((error = spa_vdev_spec_parse(nwords, words, &spec, err, sizeof (err))) != 0)
		return (cli_cannot("add to", pool, error, err));
	args = json_object_new_object();
	json_object_object_add(args, "pool", json_object_new_string(pool));
	json_object_object_add(args, "vdevs", cli_spec_words(spec));
	json_object_object_add(args, "force", json_object_new_boolean(force));
	json_object_object_add(args, "dryrun", json_object_new_boolean(dryrun));
	ret = cli_call("pool.add", args, &res);
	if (ret == CLI_EXIT_OK && dryrun && json_object_object_get_ex(res, "tree", &tree))
		add_print(tree, pool, spec);
	json_object_put(res);
	spa_vdev_spec_free(spec);
	return (ret);
}

int
cli_pool_add(int argc, char **argv)
{
	bool force = false, dryrun = false;
	char path[VDEV_PATH_MAX + 1];
	json_object *args, *res, *paths;
	int c, ret;

	cli_history_begin(argc, argv);
	while ((c = getopt(argc, argv, ":fn")) != -1) {
		if (c == 'f')
			force = true;
		else if (c == 'n')
			dryrun = true;
		else
			return (cli_bad_option("add", c, optopt));
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return (cli_usage_error("add", "missing pool name argument"));
	if (argc < 2)
		return (cli_usage_error("add", "missing vdev specification"));
	if (strcmp(argv[1], "spare") != 0)
		return (add_tops(argv[0], argc - 1, argv + 1, force, dryrun));
	if (dryrun)
		return (cli_usage_error("add", "-n is for top-level vdevs, not spares"));
	if (argc < 3)
		return (cli_usage_error("add", "missing device after 'spare'"));
	paths = json_object_new_array_ext(argc - 2);
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "spare") == 0 || strcmp(argv[i], "mirror") == 0 ||
		    strncmp(argv[i], "raidz", 5) == 0 || strcmp(argv[i], "log") == 0 ||
		    strcmp(argv[i], "cache") == 0 || strcmp(argv[i], "special") == 0)
			ret = cli_cannot("add to", argv[0], ENOTSUP, "only devices may "
			    "follow 'spare'; add other vdevs in a command of their own");
		else
			ret = cli_vdev_newpath("add to", argv[0], argv[i], path, sizeof (path));
		if (ret != CLI_EXIT_OK) {
			json_object_put(paths);
			return (ret);
		}
		json_object_array_add(paths, json_object_new_string(path));
	}
	args = json_object_new_object();
	json_object_object_add(args, "pool", json_object_new_string(argv[0]));
	json_object_object_add(args, "paths", paths);
	json_object_object_add(args, "force", json_object_new_boolean(force));
	ret = cli_call("pool.add_spares", args, &res);
	json_object_put(res);
	return (ret);
}

/* remove POOL DEVICE...: each in turn; the first failure ends it. */
int
cli_pool_remove(int argc, char **argv)
{
	int c, ret = CLI_EXIT_OK;

	cli_history_begin(argc, argv);
	while ((c = getopt(argc, argv, ":")) != -1)
		return (cli_bad_option("remove", c, optopt));
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return (cli_usage_error("remove", "missing pool name argument"));
	if (argc < 2)
		return (cli_usage_error("remove", "missing device"));
	for (int i = 1; i < argc && ret == CLI_EXIT_OK; i++) {
		json_object *args = json_object_new_object();
		json_object_object_add(args, "pool", json_object_new_string(argv[0]));
		json_object_object_add(args, "device", json_object_new_string(argv[i]));
		ret = pv_call("pool.remove", args);
	}
	return (ret);
}
