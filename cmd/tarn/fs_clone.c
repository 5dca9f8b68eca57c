/*
 * fs_clone.c — `zfs clone`, `zfs promote` and `zfs rollback`: options,
 * usage errors and the name checks that come before anything is opened;
 * the change is the host's (fs.clone, fs.promote, fs.rollback in
 * host/host_op_clone.c), which reports its failures.  A refused rollback
 * is the one zfs failure of more than one line: the host reports the
 * first ("cannot rollback to 'SNAP': more recent snapshots or bookmarks
 * exist") and hands back the rest (what -r or -R would destroy), printed
 * here after it.
 */
#include "tarn.h"

/* The host's exit status for op; its "detail" lines go to stderr. */
static int
clone_call(const char *op, json_object *args)
{
	json_object *res;
	int r = cli_call(op, args, &res);
	json_object *detail = cli_j_get(res, "detail");
	for (int i = 0; i < cli_j_len(detail); i++)
		fprintf(cli_err, "%s\n", json_object_get_string(cli_j_idx(detail, i)));
	json_object_put(res);
	return (r);
}

/* A snapshot name where one must be ("cannot open 'x': ..." otherwise). */
static int
clone_need_snap(const char *name)
{
	if (strchr(name, '@') == NULL)
		return (cli_cannot("open", name, EINVAL,
		    "missing '@' delimiter in snapshot name"));
	return (0);
}

/* The pool part of a dataset name, compared. */
static bool
clone_same_pool(const char *a, const char *b)
{
	size_t na = strcspn(a, "/@#"), nb = strcspn(b, "/@#");
	return (na == nb && strncmp(a, b, na) == 0);
}

int
cli_fs_clone(int argc, char **argv)
{
	bool parents = false;
	int c;
	json_object *props = json_object_new_array();
	cli_history_begin_zfs(argc, argv);
	while ((c = getopt(argc, argv, ":po:")) != -1) {
		dsl_prop_setting_t s;
		int r;
		switch (c) {
		case 'p':
			parents = true;
			break;
		case 'o':
			if ((r = cli_fs_setting("clone", optarg, &s)) != 0) {
				json_object_put(props);
				return (r);
			}
			json_object *pv = json_object_new_array_ext(2);
			json_object_array_add(pv, json_object_new_string(s.dps_name));
			json_object_array_add(pv, json_object_new_string(s.dps_value));
			json_object_array_add(props, pv);
			break;
		default:
			json_object_put(props);
			return (cli_fs_bad_option("clone", c, optopt));
		}
	}
	argc -= optind;
	argv += optind;
	const char *why = argc < 1 ? "missing source dataset argument" :
	    argc < 2 ? "missing target dataset argument" : argc > 2 ? "too many arguments" : NULL;
	if (why != NULL) {
		json_object_put(props);
		return (cli_fs_usage_error("clone", "%s", why));
	}
	char err[512];
	int r = clone_need_snap(argv[0]);
	if (r == 0 && dsl_name_validate(argv[1], err, sizeof (err)) != 0)
		r = cli_cannot("create", argv[1], EINVAL, err);
	if (r == 0 && !clone_same_pool(argv[0], argv[1]))
		r = cli_cannot("create", argv[1], EXDEV, "source and target pools differ");
	if (r != 0) {
		json_object_put(props);
		return (r);
	}
	json_object *args = json_object_new_object();
	json_object_object_add(args, "snap", json_object_new_string(argv[0]));
	json_object_object_add(args, "name", json_object_new_string(argv[1]));
	json_object_object_add(args, "parents", json_object_new_boolean(parents));
	json_object_object_add(args, "props", props);
	return (clone_call("fs.clone", args));
}

int
cli_fs_promote(int argc, char **argv)
{
	int c;
	cli_history_begin_zfs(argc, argv);
	while ((c = getopt(argc, argv, ":")) != -1)
		return (cli_fs_bad_option("promote", c, optopt));
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return (cli_fs_usage_error("promote", "missing clone filesystem argument"));
	if (argc > 1)
		return (cli_fs_usage_error("promote", "too many arguments"));
	if (strchr(argv[0], '@') != NULL)
		return (cli_cannot("open", argv[0], EINVAL,
		    "snapshot delimiter '@' is not expected here"));
	json_object *args = json_object_new_object();
	json_object_object_add(args, "name", json_object_new_string(argv[0]));
	return (clone_call("fs.promote", args));
}

int
cli_fs_rollback(int argc, char **argv)
{
	bool recursive = false, clones = false, force = false;
	int c;
	cli_history_begin_zfs(argc, argv);
	while ((c = getopt(argc, argv, ":rRf")) != -1) {
		switch (c) {
		case 'r':
			recursive = true;
			break;
		case 'R':
			recursive = clones = true;
			break;
		case 'f':
			force = true;   /* unmount the clones -R destroys, even busy */
			break;
		default:
			return (cli_fs_bad_option("rollback", c, optopt));
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return (cli_fs_usage_error("rollback", "missing dataset argument"));
	if (argc > 1)
		return (cli_fs_usage_error("rollback", "too many arguments"));
	int r = clone_need_snap(argv[0]);
	if (r != 0)
		return (r);
	json_object *args = json_object_new_object();
	json_object_object_add(args, "snap", json_object_new_string(argv[0]));
	json_object_object_add(args, "recursive", json_object_new_boolean(recursive));
	json_object_object_add(args, "clones", json_object_new_boolean(clones));
	json_object_object_add(args, "force", json_object_new_boolean(force));
	return (clone_call("fs.rollback", args));
}
