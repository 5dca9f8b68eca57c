/*
 * fs_snapshot.c — the zfs verbs of snapshots, holds and bookmarks:
 *   snapshot|snap [-r] [-o prop=value]... FS@SNAP...   (one atomic call)
 *   destroy [-Rdnprv] FS@SNAP[%SNAP][,...]             (from fs.c's destroy)
 *   destroy FS#BM
 *   rename [-r] FS@A FS@B|@B|B                         (from fs.c's rename)
 *   hold [-r] TAG SNAP...; holds [-rH] SNAP...; release [-r] TAG SNAP...
 *   bookmark SNAP|BM FS#BM
 * Here: the options, the names checked before anything is opened (zfs's
 * messages) and the output (destroy -nv's "would destroy" lines, holds'
 * table); the change is the host's (host/host_op_snap.c), one operation
 * per command, which reports its failures and logs the command line.
 */
#include "tarn.h"
#include "dsl.h"

#include <time.h>

/*
 * A snapshot ('@') or bookmark ('#') name as zfs checks it
 * (dsl_snap_name_validate), with libzfs's own word for a name without its
 * delimiter.  0, or EINVAL with the message in err.
 */
int
cli_snap_name_check(const char *name, char delim, char *err, size_t errlen)
{
	const char *d = strpbrk(name, "@#");
	if (strlen(name) < DSL_NAME_MAX && (d == NULL || *d != delim)) {
		(void) snprintf(err, errlen, "missing '%c' delimiter in %s name", delim,
		    delim == '@' ? "snapshot" : "bookmark");
		return (EINVAL);
	}
	return (dsl_snap_name_validate(name, delim, err, errlen) != 0 ? EINVAL : 0);
}

static json_object *
snap_strings(int argc, char **argv)
{
	json_object *a = json_object_new_array_ext(argc);
	for (int i = 0; i < argc; i++)
		json_object_array_add(a, json_object_new_string(argv[i]));
	return (a);
}

static int
snap_call(const char *op, json_object *args)
{
	json_object *res;
	int r = cli_call(op, args, &res);
	json_object_put(res);
	return (r);
}

/* ---- snapshot ---- */

int
cli_fs_snapshot(int argc, char **argv)
{
	bool recursive = false;
	int c;
	char err[512];
	json_object *props = json_object_new_array();
	cli_history_begin_zfs(argc, argv);
	while ((c = getopt(argc, argv, ":ro:")) != -1) {
		char *eq;
		switch (c) {
		case 'r':
			recursive = true;
			break;
		case 'o':
			if ((eq = strchr(optarg, '=')) == NULL) {
				json_object_put(props);
				return (cli_fs_usage_error("snapshot", "missing '=' for property "
				    "argument '%s'", optarg));
			}
			*eq = '\0';
			json_object *pv = json_object_new_array_ext(2);
			json_object_array_add(pv, json_object_new_string(optarg));
			json_object_array_add(pv, json_object_new_string(eq + 1));
			json_object_array_add(props, pv);
			break;
		default:
			json_object_put(props);
			return (cli_fs_bad_option("snapshot", c, optopt));
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1) {
		json_object_put(props);
		return (cli_fs_usage_error("snapshot", "missing snapshot argument"));
	}
	for (int i = 0; i < argc; i++) {
		if (cli_snap_name_check(argv[i], '@', err, sizeof (err)) != 0) {
			json_object_put(props);
			return (cli_cannot("create snapshot", argv[i], EINVAL, err));
		}
	}
	for (size_t i = 0; i < json_object_array_length(props); i++) {
		json_object *pv = json_object_array_get_idx(props, i);
		const char *p = json_object_get_string(json_object_array_get_idx(pv, 0));
		const char *v = json_object_get_string(json_object_array_get_idx(pv, 1));
		if (!dsl_prop_user_name(p) && dsl_prop_lookup(p) < 0)
			(void) snprintf(err, sizeof (err), "invalid property '%s'", p);
		else if (!dsl_prop_user_name(p))
			(void) snprintf(err, sizeof (err), "this property can not be modified "
			    "for snapshots");
		else if (dsl_prop_user_check(p, v, err, sizeof (err)) == 0)
			continue;
		json_object_put(props);
		return (cli_cannot("create snapshot", argv[0], EINVAL, err));
	}
	json_object *args = json_object_new_object();
	json_object_object_add(args, "names", snap_strings(argc, argv));
	json_object_object_add(args, "recursive", json_object_new_boolean(recursive));
	json_object_object_add(args, "props", props);
	return (snap_call("fs.snapshot", args));
}

/* ---- destroy ---- */

/* "would destroy X" lines (or -p: "destroy\tX") and the reclaim line. */
static void
snap_destroy_print(json_object *names, uint64_t reclaim, bool have_reclaim, bool parsable,
    const char *mood)
{
	char size[32];
	for (size_t i = 0; i < json_object_array_length(names); i++) {
		const char *n = json_object_get_string(json_object_array_get_idx(names, i));
		if (parsable)
			fprintf(cli_out, "destroy\t%s\n", n);
		else
			fprintf(cli_out, "%s destroy %s\n", mood, n);
	}
	if (!have_reclaim)
		return;
	if (parsable) {
		fprintf(cli_out, "reclaim\t%" PRIu64 "\n", reclaim);
	} else {
		dsl_nicebytes(reclaim, size, sizeof (size));
		fprintf(cli_out, "%s reclaim %s\n", mood, size);
	}
}

/*
 * destroy of snapshots (name has '@') and bookmarks ('#'); flags: the
 * options fs.c's destroy parsed.
 */
int
cli_fs_snap_destroy(const char *name, bool recursive, bool clones, bool defer, bool dryrun,
    bool verbose, bool parsable)
{
	char err[512];
	if (strchr(name, '#') != NULL) {
		if (cli_snap_name_check(name, '#', err, sizeof (err)) != 0)
			return (cli_cannot("destroy", name, EINVAL, err));
		json_object *args = json_object_new_object();
		json_object_object_add(args, "name", json_object_new_string(name));
		return (snap_call("fs.bookmark_destroy", args));
	}
	/* the file system part and "@": the rest is a list of names and ranges */
	char fs[DSL_NAME_MAX];
	const char *at = strchr(name, '@');
	(void) snprintf(fs, sizeof (fs), "%.*s", (int)(at - name), name);
	if (strlen(name) >= DSL_NAME_MAX * 4 || dsl_name_validate(fs, err, sizeof (err)) != 0)
		return (cli_cannot("destroy", name, EINVAL, strlen(name) >= DSL_NAME_MAX * 4 ?
		    "name is too long" : err));
	json_object *args = json_object_new_object(), *res;
	json_object_object_add(args, "name", json_object_new_string(name));
	json_object_object_add(args, "recursive", json_object_new_boolean(recursive));
	json_object_object_add(args, "clones", json_object_new_boolean(clones));
	json_object_object_add(args, "defer", json_object_new_boolean(defer));
	json_object_object_add(args, "dryrun", json_object_new_boolean(dryrun));
	json_object_object_add(args, "verbose", json_object_new_boolean(verbose && !dryrun));
	int r = cli_call("fs.snap_destroy", args, &res);
	json_object *names;
	if (r == CLI_EXIT_OK && dryrun && (verbose || parsable) &&
	    json_object_object_get_ex(res, "destroyed", &names))
		snap_destroy_print(names, cli_j_u64(res, "reclaim"), true, parsable, "would");
	else if (verbose && !dryrun && json_object_object_get_ex(res, "would", &names))
		snap_destroy_print(names, cli_j_u64(res, "would_reclaim"), true, parsable, "will");
	if (r != CLI_EXIT_OK && json_object_object_get_ex(res, "dependents", &names)) {
		fprintf(cli_err, "use '-R' to destroy the following datasets:\n");
		for (size_t i = 0; i < json_object_array_length(names); i++)
			fprintf(cli_err, "%s\n",
			    json_object_get_string(json_object_array_get_idx(names, i)));
	}
	json_object_put(res);
	return (r);
}

/*
 * After fs.destroy: -n -v's list for a file system, or the snapshots that
 * made a destroy without -r fail, as zfs lists them.
 */
void
cli_fs_destroy_after(json_object *res, bool verbose, bool parsable)
{
	json_object *a;
	if (json_object_object_get_ex(res, "children", &a)) {
		fprintf(cli_err, "use '-r' to destroy the following datasets:\n");
		for (size_t i = 0; i < json_object_array_length(a); i++)
			fprintf(cli_err, "%s\n",
			    json_object_get_string(json_object_array_get_idx(a, i)));
	}
	if ((verbose || parsable) && json_object_object_get_ex(res, "destroyed", &a))
		snap_destroy_print(a, cli_j_u64(res, "reclaim"),
		    json_object_object_get_ex(res, "reclaim", NULL), parsable, "would");
}

/* ---- rename ---- */

int
cli_fs_snap_rename(const char *from, const char *to, bool recursive)
{
	char err[512], full[DSL_NAME_MAX * 2];
	const char *at = strchr(from, '@');
	if (cli_snap_name_check(from, '@', err, sizeof (err)) != 0)
		return (cli_cannot("rename", from, EINVAL, err));
	/* the new name: "fs@b", "@b" or "b" (zfs takes the short forms too) */
	if (strchr(to, '@') == NULL || to[0] == '@')
		(void) snprintf(full, sizeof (full), "%.*s@%s", (int)(at - from), from,
		    to[0] == '@' ? to + 1 : to);
	else
		(void) snprintf(full, sizeof (full), "%s", to);
	if (cli_snap_name_check(full, '@', err, sizeof (err)) != 0)
		return (cli_cannot("rename to", full, EINVAL, err));
	if (strncmp(from, full, (size_t)(at - from) + 1) != 0)
		return (cli_cannot("rename to", full, EXDEV,
		    "snapshots must be part of same dataset"));
	json_object *args = json_object_new_object();
	json_object_object_add(args, "from", json_object_new_string(from));
	json_object_object_add(args, "to", json_object_new_string(full));
	json_object_object_add(args, "recursive", json_object_new_boolean(recursive));
	return (snap_call("fs.snap_rename", args));
}

/* ---- hold, release, holds ---- */

static int
snap_hold_verb(const char *verb, int argc, char **argv)
{
	bool recursive = false;
	bool hold = strcmp(verb, "hold") == 0;
	int c;
	char err[512];
	cli_history_begin_zfs(argc, argv);
	while ((c = getopt(argc, argv, ":r")) != -1) {
		if (c != 'r')
			return (cli_fs_bad_option(verb, c, optopt));
		recursive = true;
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return (cli_fs_usage_error(verb, "missing tag argument"));
	if (argc < 2)
		return (cli_fs_usage_error(verb, "missing snapshot argument"));
	const char *tag = argv[0];
	if (tag[0] == '\0' || strlen(tag) >= ZAP_MAXNAMELEN)
		return (cli_cannot(hold ? "hold snapshot" : "release hold from snapshot",
		    argv[1], EINVAL, tag[0] == '\0' ? "tag name is empty" : "tag too long"));
	for (int i = 1; i < argc; i++)
		if (cli_snap_name_check(argv[i], '@', err, sizeof (err)) != 0)
			return (cli_cannot(hold ? "hold snapshot" : "release hold from snapshot",
			    argv[i], EINVAL, err));
	json_object *args = json_object_new_object();
	json_object_object_add(args, "snaps", snap_strings(argc - 1, argv + 1));
	json_object_object_add(args, "tag", json_object_new_string(tag));
	json_object_object_add(args, "recursive", json_object_new_boolean(recursive));
	return (snap_call(hold ? "fs.hold" : "fs.release", args));
}

int
cli_fs_hold(int argc, char **argv)
{
	return (snap_hold_verb("hold", argc, argv));
}

int
cli_fs_release(int argc, char **argv)
{
	return (snap_hold_verb("release", argc, argv));
}

int
cli_fs_holds(int argc, char **argv)
{
	bool recursive = false, scripted = false;
	int c;
	char err[512];
	while ((c = getopt(argc, argv, ":rHp")) != -1) {
		switch (c) {
		case 'r': recursive = true; break;
		case 'H': scripted = true; break;
		case 'p': break;
		default: return (cli_fs_bad_option("holds", c, optopt));
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return (cli_fs_usage_error("holds", "missing snapshot argument"));
	for (int i = 0; i < argc; i++)
		if (cli_snap_name_check(argv[i], '@', err, sizeof (err)) != 0)
			return (cli_cannot("open", argv[i], EINVAL, err));
	json_object *args = json_object_new_object(), *res, *holds;
	json_object_object_add(args, "snaps", snap_strings(argc, argv));
	json_object_object_add(args, "recursive", json_object_new_boolean(recursive));
	int r = cli_call("fs.holds", args, &res);
	if (res != NULL && json_object_object_get_ex(res, "holds", &holds) &&
	    json_object_array_length(holds) > 0) {
		cli_table_t *t = cli_table_new();
		cli_table_column(t, "NAME", CLI_LEFT, 0);
		cli_table_column(t, "TAG", CLI_LEFT, 0);
		cli_table_column(t, "TIMESTAMP", CLI_LEFT, 0);
		for (size_t i = 0; i < json_object_array_length(holds); i++) {
			json_object *h = json_object_array_get_idx(holds, i);
			char when[64];
			time_t tt = (time_t)cli_j_u64(h, "when");
			struct tm tm;
			(void) strftime(when, sizeof (when), "%a %b %e %H:%M %Y",
			    localtime_r(&tt, &tm));
			const char *row[3] = { cli_j_str(h, "name"), cli_j_str(h, "tag"), when };
			cli_table_row(t, row);
		}
		cli_table_print(t, cli_out, scripted);
		cli_table_free(t);
	}
	json_object_put(res);
	return (r);
}

/* ---- bookmark ---- */

int
cli_fs_bookmark(int argc, char **argv)
{
	int c;
	char err[512];
	cli_history_begin_zfs(argc, argv);
	while ((c = getopt(argc, argv, "")) != -1)
		return (cli_fs_bad_option("bookmark", c, optopt));
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return (cli_fs_usage_error("bookmark", "missing snapshot argument"));
	if (argc < 2)
		return (cli_fs_usage_error("bookmark", "missing bookmark argument"));
	if (argc > 2)
		return (cli_fs_usage_error("bookmark", "too many arguments"));
	const char *src = argv[0], *bm = argv[1];
	char delim = strchr(src, '#') != NULL ? '#' : '@';
	if (cli_snap_name_check(src, delim, err, sizeof (err)) != 0)
		return (cli_cannot("create bookmark", bm, EINVAL, err));
	if (cli_snap_name_check(bm, '#', err, sizeof (err)) != 0)
		return (cli_cannot("create bookmark", bm, EINVAL, err));
	if (strcspn(src, "@#") != strcspn(bm, "#") || strncmp(src, bm, strcspn(bm, "#")) != 0)
		return (cli_cannot("create bookmark", bm, EINVAL,
		    "source is not an ancestor of the new bookmark's dataset"));
	json_object *args = json_object_new_object();
	json_object_object_add(args, "src", json_object_new_string(src));
	json_object_object_add(args, "bm", json_object_new_string(bm));
	return (snap_call("fs.bookmark", args));
}
