/*
 * fs_diff.c — `tarn fs diff [-FHt] SNAPSHOT [SNAPSHOT|FILESYSTEM]`, zfs
 * diff's listing of what changed between a snapshot and a later snapshot
 * of the same file system (or the file system now), one line a change:
 *
 *	M	/tank/home/
 *	M	/tank/home/notes	(+1)
 *	R	/tank/home/a -> /tank/home/b
 *	-	/tank/home/old
 *	+	/tank/home/new
 *
 * M modified (with the link count's change for a file that gained or
 * lost a name), R renamed, - removed, + added; -F adds the file type
 * after the change (F file, / directory, @ symlink, | fifo, = socket,
 * B block device, C character device), -t the inode's change time
 * first (seconds.nanoseconds), -H the parsable form (a rename's two
 * paths separated by a tab instead of " -> ").  Paths come escaped as
 * zfs prints them (space, backslash and bytes that are not printable
 * ASCII as \0ooo).  Lines come in object (inode number) order.  The host
 * finds the changes and sends them in parts while it walks (operation
 * fs.diff, host/host_op_diff.c); this file parses argv and prints them.
 */
#include "tarn.h"
#include "posix.h"          /* posix_diff_type_char */

typedef struct diff_opts {
	bool df_types, df_scripted, df_times;
} diff_opts_t;

static void
diff_line(const diff_opts_t *o, json_object *l)
{
	const char *what = json_object_get_string(json_object_array_get_idx(l, 0));
	uint32_t mode = (uint32_t)json_object_get_int64(json_object_array_get_idx(l, 1));
	json_object *topath = json_object_array_get_idx(l, 5);
	int64_t links = json_object_get_int64(json_object_array_get_idx(l, 6));

	if (o->df_times)
		fprintf(cli_out, "%10lld.%09lld\t",
		    (long long)json_object_get_int64(json_object_array_get_idx(l, 2)),
		    (long long)json_object_get_int64(json_object_array_get_idx(l, 3)));
	fprintf(cli_out, "%s\t", what != NULL ? what : "?");
	if (o->df_types)
		fprintf(cli_out, "%c\t", posix_diff_type_char(mode));
	fputs(json_object_get_string(json_object_array_get_idx(l, 4)), cli_out);
	if (topath != NULL) {
		fputs(o->df_scripted ? "\t" : " -> ", cli_out);
		fputs(json_object_get_string(topath), cli_out);
	}
	if (links != 0)
		fprintf(cli_out, "\t(%+lld)", (long long)links);
	fputc('\n', cli_out);
}

static int
diff_part(void *arg, json_object *part)
{
	json_object *lines = json_object_object_get(part, "lines");
	size_t n = json_object_is_type(lines, json_type_array) ?
	    json_object_array_length(lines) : 0;

	for (size_t i = 0; i < n; i++)
		diff_line(arg, json_object_array_get_idx(lines, i));
	fflush(cli_out);
	return (ferror(cli_out) ? 1 : 0);
}

int
cli_fs_diff(int argc, char **argv)
{
	diff_opts_t o = { 0 };
	int c;
	while ((c = getopt(argc, argv, ":FHt")) != -1) {
		switch (c) {
		case 'F':
			o.df_types = true;
			break;
		case 'H':
			o.df_scripted = true;
			break;
		case 't':
			o.df_times = true;
			break;
		default:
			return (cli_fs_bad_option("diff", c, optopt));
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return (cli_fs_usage_error("diff", "must provide at least one snapshot name"));
	if (argc > 2)
		return (cli_fs_usage_error("diff", "too many arguments"));
	if (argv[0][0] == '@' && argc < 2)
		return (cli_fs_usage_error("diff", "must provide a file system with '%s'",
		    argv[0]));
	json_object *args = json_object_new_object(), *res;
	json_object_object_add(args, "from", json_object_new_string(argv[0]));
	if (argc > 1)
		json_object_object_add(args, "to", json_object_new_string(argv[1]));
	int r = cli_call_parts("fs.diff", args, diff_part, &o, &res);
	json_object_put(res);
	return (r);
}
