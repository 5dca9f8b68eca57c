/*
 * fs.c — `tarn fs VERB` (zfs(8) syntax; `zfs` is a symlink to tarn): the
 * verb table, usage, and the verbs that change datasets: create, destroy,
 * rename, set, inherit (snapshots, holds and bookmarks: fs_snapshot.c).
 * list and get are in fs_list.c, mount and unmount in fs_mount.c, upgrade
 * in fs_upgrade.c, clone, promote and rollback in fs_clone.c, send and
 * receive in fs_send.c, replicate in fs_replicate.c.  Here the
 * options, the usage
 * errors and the checks of names and property=value words that come
 * before anything is opened; the change is the host's, one operation per
 * command (fs.create, fs.destroy, fs.rename, fs.set, fs.inherit;
 * host/host_op_fs.c), which reports its failures.
 */
#include "tarn.h"

#include <stdarg.h>

__thread const char *cli_fs_prog = "tarn fs";

#define FS_RECV_USAGE \
	"\treceive [-vnsFu] [-o <property>=<value>] ... [-x <property>] ...\n" \
	"\t    <filesystem|snapshot>\n" \
	"\treceive [-vnsFu] [-o <property>=<value>] ... [-x <property>] ...\n" \
	"\t    [-d | -e] <filesystem>\n" \
	"\treceive -A <filesystem>\n"

static const cli_verb_t cli_fs_verbs[] = {
	{ "create", cli_fs_create,
	    "\tcreate [-p] [-o property=value] ... <filesystem>\n" },
	{ "destroy", cli_fs_destroy,
	    "\tdestroy [-fnpRrv] <filesystem>\n"
	    "\tdestroy [-dnpRrv] <filesystem>@<snap>[%<snap>][,...]\n"
	    "\tdestroy <filesystem>#<bookmark>\n" },
	{ "snapshot", cli_fs_snapshot,
	    "\tsnapshot [-r] [-o property=value] ... <filesystem>@<snap> ...\n" },
	{ "snap", cli_fs_snapshot,
	    "\tsnapshot [-r] [-o property=value] ... <filesystem>@<snap> ...\n" },
	{ "rename", cli_fs_rename,
	    "\trename [-fp] <filesystem> <filesystem>\n"
	    "\trename [-r] <snapshot> <snapshot>\n" },
	{ "bookmark", cli_fs_bookmark,
	    "\tbookmark <snapshot|bookmark> <bookmark>\n" },
	{ "list", cli_fs_list,
	    "\tlist [-rHp] [-d max] [-o property[,...]] [-s property]...\n"
	    "\t    [-S property]... [-t type[,...]] [filesystem] ...\n" },
	{ "get", cli_fs_get,
	    "\tget [-rHp] [-d max] [-o \"all\" | field[,...]]\n"
	    "\t    <\"all\" | property[,...]> [filesystem] ...\n" },
	{ "set", cli_fs_set,
	    "\tset <property=value> ... <filesystem> ...\n" },
	{ "inherit", cli_fs_inherit,
	    "\tinherit [-r] <property> <filesystem> ...\n" },
	{ "mount", cli_fs_mount,
	    "\tmount\n\tmount [-o opts] [-a | <filesystem>]\n" },
	{ "unmount", cli_fs_unmount,
	    "\tunmount [-f] <-a | filesystem|mountpoint>\n" },
	{ "umount", cli_fs_unmount,
	    "\tumount [-f] <-a | filesystem|mountpoint>\n" },
	{ "hold", cli_fs_hold,
	    "\thold [-r] <tag> <snapshot> ...\n" },
	{ "holds", cli_fs_holds,
	    "\tholds [-rH] <snapshot> ...\n" },
	{ "release", cli_fs_release,
	    "\trelease [-r] <tag> <snapshot> ...\n" },
	{ "upgrade", cli_fs_upgrade,
	    "\tupgrade [-v]\n\tupgrade [-r] <-a | filesystem ...>\n" },
	{ "clone", cli_fs_clone,
	    "\tclone [-p] [-o property=value] ... <snapshot> <filesystem|volume>\n" },
	{ "promote", cli_fs_promote,
	    "\tpromote <clone-filesystem>\n" },
	{ "rollback", cli_fs_rollback,
	    "\trollback [-rRf] <snapshot>\n" },
	{ "diff", cli_fs_diff,
	    "\tdiff [-FHt] <snapshot> [snapshot|filesystem]\n" },
	{ "autosnap", cli_fs_autosnap,
	    "\tautosnap [-nv] [--dry-run] [--config FILE]\n" },
	{ "send", cli_fs_send,
	    "\tsend [-RLPbcehnpvw] [-i|-I snapshot|#bookmark] <snapshot>\n"
	    "\tsend [-Pnv] -t <receive_resume_token>\n"
	    "\tsend [-Pnv] --saved <filesystem>\n" },
	{ "receive", cli_fs_receive, FS_RECV_USAGE },
	{ "recv", cli_fs_receive, FS_RECV_USAGE },
	{ "replicate", cli_fs_replicate,
	    "\treplicate [-rnv] [--no-snapshot] [--keep N] [--bookmark] [--ssh-port PORT]\n"
	    "\t    [--ssh-key FILE] [--ssh-opt OPTION]... <filesystem>\n"
	    "\t    [[user@]host:]<filesystem>\n" },
};

const cli_verb_t *
cli_fs_verb(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(cli_fs_verbs); i++)
		if (strcmp(cli_fs_verbs[i].cv_name, name) == 0)
			return (&cli_fs_verbs[i]);
	return (NULL);
}

void
cli_fs_usage(FILE *f)
{
	fprintf(f, "usage: %s command args ...\nwhere 'command' is one of the following:\n\n",
	    cli_fs_prog);
	for (size_t i = 0; i < ARRAY_SIZE(cli_fs_verbs); i++) {
		/* an alias (snap, umount) has its verb's line: print it once */
		if (i > 0 && strcmp(cli_fs_verbs[i].cv_usage, cli_fs_verbs[i - 1].cv_usage) == 0)
			continue;
		fprintf(f, "%s", cli_fs_verbs[i].cv_usage);
	}
	fprintf(f, "\nEach dataset is of the form: pool/[dataset/]*dataset\n");
}

int
cli_fs_usage_error(const char *verb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(cli_err, fmt, ap);
	va_end(ap);
	fputc('\n', cli_err);
	const cli_verb_t *v = cli_fs_verb(verb);
	if (v != NULL)
		fprintf(cli_err, "usage:\n%s", v->cv_usage);
	return (CLI_EXIT_USAGE);
}

int
cli_fs_bad_option(const char *verb, int opt, int optopt_)
{
	if (opt == ':')
		return (cli_fs_usage_error(verb, "missing argument for '%c' option", optopt_));
	if (optopt_ > ' ' && optopt_ < 127)
		return (cli_fs_usage_error(verb, "invalid option '%c'", optopt_));
	return (cli_fs_usage_error(verb, "invalid option"));
}

int
cli_fs_main(int argc, char **argv)
{
	const char *slash = argv[0] != NULL ? strrchr(argv[0], '/') : NULL;
	const char *prog = slash != NULL ? slash + 1 : argv[0];
	cli_fs_prog = prog != NULL && strcmp(prog, "zfs") == 0 ? "zfs" : "tarn fs";
	if (argc < 2) {
		cli_fs_usage(cli_err);
		return (CLI_EXIT_USAGE);
	}
	const char *w = argv[1];
	if (strcmp(w, "help") == 0 || strcmp(w, "-?") == 0 || strcmp(w, "-h") == 0 ||
	    strcmp(w, "--help") == 0) {
		const cli_verb_t *v = argc > 2 ? cli_fs_verb(argv[2]) : NULL;
		if (v != NULL)
			fprintf(cli_out, "usage:\n%s", v->cv_usage);
		else
			cli_fs_usage(cli_out);
		return (CLI_EXIT_OK);
	}
	const cli_verb_t *v = cli_fs_verb(w);
	if (v == NULL) {
		fprintf(cli_err, "unrecognized command '%s'\n", w);
		cli_fs_usage(cli_err);
		return (CLI_EXIT_USAGE);
	}
	if (argc > 2 && (strcmp(argv[2], "-?") == 0 || strcmp(argv[2], "--help") == 0)) {
		fprintf(cli_out, "usage:\n%s", v->cv_usage);
		return (CLI_EXIT_OK);
	}
	opterr = 0;
	return (v->cv_fn(argc - 1, argv + 1));
}

/* ---- create ---- */

int
cli_fs_setting(const char *verb, char *arg, dsl_prop_setting_t *s)
{
	char *eq = strchr(arg, '=');
	if (eq == NULL)
		return (cli_fs_usage_error(verb, "missing '=' for property argument '%s'", arg));
	*eq = '\0';
	s->dps_name = arg;
	s->dps_value = eq + 1;
	return (0);
}

/* The dataset names of argv as a JSON array. */
static json_object *
fs_names_json(int argc, char **argv)
{
	json_object *names = json_object_new_array_ext(argc);
	for (int i = 0; i < argc; i++)
		json_object_array_add(names, json_object_new_string(argv[i]));
	return (names);
}

/* Run a change operation of the host on args; its exit status. */
static int
fs_call(const char *op, json_object *args)
{
	json_object *res;
	int r = cli_call(op, args, &res);
	json_object_put(res);
	return (r);
}

int
cli_fs_create(int argc, char **argv)
{
	bool parents = false;
	int c, n = 0, r;
	dsl_prop_setting_t *props = tarn_alloc(sizeof (*props) * (size_t)(argc + 1));
	cli_history_begin_zfs(argc, argv);
	while ((c = getopt(argc, argv, ":po:")) != -1) {
		switch (c) {
		case 'p':
			parents = true;
			break;
		case 'o':
			if ((r = cli_fs_setting("create", optarg, &props[n++])) != 0)
				goto out;
			break;
		default:
			r = cli_fs_bad_option("create", c, optopt);
			goto out;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1) {
		r = cli_fs_usage_error("create", "missing filesystem argument");
		goto out;
	}
	if (argc > 1) {
		r = cli_fs_usage_error("create", "too many arguments");
		goto out;
	}
	char err[512];
	const char *name = argv[0];
	if (dsl_name_validate(name, err, sizeof (err)) != 0) {
		r = cli_cannot("create", name, EINVAL, err);
		goto out;
	}
	json_object *args = json_object_new_object(), *pa = json_object_new_array_ext(n);
	for (int i = 0; i < n; i++) {
		json_object *pv = json_object_new_array_ext(2);
		json_object_array_add(pv, json_object_new_string(props[i].dps_name));
		json_object_array_add(pv, json_object_new_string(props[i].dps_value));
		json_object_array_add(pa, pv);
	}
	json_object_object_add(args, "name", json_object_new_string(name));
	json_object_object_add(args, "parents", json_object_new_boolean(parents));
	json_object_object_add(args, "props", pa);
	r = fs_call("fs.create", args);
out:
	tarn_free(props);
	return (r);
}

/* ---- destroy ---- */

/*
 * destroy: a file system (its snapshots with -r/-R go first, host side),
 * or snapshots and bookmarks (fs_snapshot.c).
 */
int
cli_fs_destroy(int argc, char **argv)
{
	bool recursive = false, force = false, clones = false, defer = false;
	bool dryrun = false, verbose = false, parsable = false;
	int c;
	cli_history_begin_zfs(argc, argv);
	while ((c = getopt(argc, argv, ":frRdnvp")) != -1) {
		switch (c) {
		case 'f':
			force = true;   /* unmount first, even when busy */
			break;
		case 'R':
			clones = true;
			/* FALLTHROUGH */
		case 'r':
			recursive = true;
			break;
		case 'd': defer = true; break;
		case 'n': dryrun = true; break;
		case 'v': verbose = true; break;
		case 'p': parsable = true; break;
		default:
			return (cli_fs_bad_option("destroy", c, optopt));
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return (cli_fs_usage_error("destroy", "missing dataset argument"));
	if (argc > 1)
		return (cli_fs_usage_error("destroy", "too many arguments"));
	if (strchr(argv[0], '@') != NULL || strchr(argv[0], '#') != NULL)
		return (cli_fs_snap_destroy(argv[0], recursive, clones, defer, dryrun, verbose,
		    parsable));
	json_object *args = json_object_new_object(), *res;
	json_object_object_add(args, "name", json_object_new_string(argv[0]));
	json_object_object_add(args, "recursive", json_object_new_boolean(recursive));
	json_object_object_add(args, "clones", json_object_new_boolean(clones));
	json_object_object_add(args, "force", json_object_new_boolean(force));
	json_object_object_add(args, "dryrun", json_object_new_boolean(dryrun));
	int r = cli_call("fs.destroy", args, &res);
	if (res != NULL)
		cli_fs_destroy_after(res, verbose, parsable);
	json_object_put(res);
	return (r);
}

/* ---- rename ---- */

int
cli_fs_rename(int argc, char **argv)
{
	bool parents = false, force = false;
	int c;
	cli_history_begin_zfs(argc, argv);
	bool recursive = false;
	while ((c = getopt(argc, argv, ":fpur")) != -1) {
		switch (c) {
		case 'r':
			recursive = true;
			break;
		case 'p':
			parents = true;
			break;
		case 'f':
			force = true;
			break;
		case 'u':
			break;
		default:
			return (cli_fs_bad_option("rename", c, optopt));
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return (cli_fs_usage_error("rename", "missing source dataset argument"));
	if (argc < 2)
		return (cli_fs_usage_error("rename", "missing target dataset argument"));
	if (argc > 2)
		return (cli_fs_usage_error("rename", "too many arguments"));
	if (strchr(argv[0], '@') != NULL)
		return (cli_fs_snap_rename(argv[0], argv[1], recursive));
	if (recursive)
		return (cli_fs_usage_error("rename", "-r can only be used on snapshots"));
	char err[512];
	if (dsl_name_validate(argv[1], err, sizeof (err)) != 0)
		return (cli_cannot("rename to", argv[1], EINVAL, err));
	json_object *args = json_object_new_object();
	json_object_object_add(args, "from", json_object_new_string(argv[0]));
	json_object_object_add(args, "to", json_object_new_string(argv[1]));
	json_object_object_add(args, "parents", json_object_new_boolean(parents));
	json_object_object_add(args, "force", json_object_new_boolean(force));
	return (fs_call("fs.rename", args));
}

/* ---- set and inherit ---- */

int
cli_fs_set(int argc, char **argv)
{
	cli_history_begin_zfs(argc, argv);
	argc--;
	argv++;
	if (argc > 0 && argv[0][0] == '-' && argv[0][1] != '\0')
		return (cli_fs_usage_error("set", "invalid option '%c'", argv[0][1]));
	int nset = 0;
	while (nset < argc && strchr(argv[nset], '=') != NULL)
		nset++;
	if (argc < 1)
		return (cli_fs_usage_error("set", "missing arguments"));
	if (nset == 0)
		return (cli_fs_usage_error("set", "missing property=value argument(s)"));
	if (nset == argc)
		return (cli_fs_usage_error("set", "missing dataset name(s)"));
	dsl_prop_setting_t s = { 0 };
	json_object *props = json_object_new_array_ext(nset), *args;
	for (int i = 0; i < nset; i++) {
		(void) cli_fs_setting("set", argv[i], &s);
		if (s.dps_name[0] == '\0') {
			json_object_put(props);
			return (cli_fs_usage_error("set", "missing property in property=value "
			    "argument"));
		}
		json_object *pv = json_object_new_array_ext(2);
		json_object_array_add(pv, json_object_new_string(s.dps_name));
		json_object_array_add(pv, json_object_new_string(s.dps_value));
		json_object_array_add(props, pv);
	}
	args = json_object_new_object();
	json_object_object_add(args, "names", fs_names_json(argc - nset, argv + nset));
	json_object_object_add(args, "props", props);
	return (fs_call("fs.set", args));
}

int
cli_fs_inherit(int argc, char **argv)
{
	bool recursive = false;
	int c;
	cli_history_begin_zfs(argc, argv);
	while ((c = getopt(argc, argv, ":rS")) != -1) {
		switch (c) {
		case 'r':
			recursive = true;
			break;
		case 'S':
			break;  /* no received values: the same as without */
		default:
			return (cli_fs_bad_option("inherit", c, optopt));
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return (cli_fs_usage_error("inherit", "missing property argument"));
	if (argc < 2)
		return (cli_fs_usage_error("inherit", "missing dataset argument"));
	const char *prop = argv[0];
	char err[512];
	if (dsl_prop_lookup(prop) < 0 && (!dsl_prop_user_name(prop) ||
	    dsl_prop_user_check(prop, NULL, err, sizeof (err)) != 0))
		return (cli_fs_usage_error("inherit", "invalid property '%s'", prop));
	json_object *args = json_object_new_object();
	json_object_object_add(args, "names", fs_names_json(argc - 1, argv + 1));
	json_object_object_add(args, "prop", json_object_new_string(prop));
	json_object_object_add(args, "recursive", json_object_new_boolean(recursive));
	return (fs_call("fs.inherit", args));
}
