/*
 * pool_history.c — `tarn pool history [-il] [pool...]`, and the recording
 * of every command that changes a pool (zpool's and zfs's) into that
 * pool's history.
 *
 * Recording: each verb that may change a pool calls cli_history_begin()
 * (zpool verbs) or cli_history_begin_zfs() (fs verbs) with its argv
 * before parsing it (getopt permutes argv), which keeps the command line
 * as zpool would write it ("zpool create tank mirror a b", "zfs set
 * atime=off tank/a"); the host writes it into each pool the command
 * changed (host/host_history.c).  The records come from the host
 * (operation pool.history, host/host_op_history.c).
 *
 * Output, as zpool's:
 *
 *	History for 'tank':
 *	2026-11-30.04:00:00 zpool create tank mirror /d/a /d/b
 *	2026-11-30.04:05:00 [txg:7] create tank/a (5)      (-i only)
 *	2026-11-30.04:05:00 zfs create tank/a
 *	<blank line>
 *
 * -l appends " [user 0 (root) on HOST]" to a command (" [on HOST]" to an
 * internal event); records written before hosts were kept have none.
 */
#include "tarn.h"

#include <getopt.h>
#include <pwd.h>
#include <time.h>
#include <unistd.h>

void
cli_history_begin(int argc, char **argv)
{
	host_history_begin("zpool", argc, argv);
}

void
cli_history_begin_zfs(int argc, char **argv)
{
	host_history_begin("zfs", argc, argv);
}

/* "2026-11-30.04:00:00" in local time, as zpool history prints it. */
static void
history_time(uint64_t secs, char *buf, size_t len)
{
	time_t t = (time_t)secs;
	struct tm tm;

	if (localtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%d.%H:%M:%S", &tm) == 0)
		(void) snprintf(buf, len, "%" PRIu64, secs);
}

/* " [user 0 (root) on HOST]" (an internal event: " [on HOST]") for -l. */
static void
history_long(json_object *e, bool internal)
{
	if (!json_object_get_boolean(json_object_object_get(e, "long")))
		return;
	fputs(" [", cli_out);
	if (!internal) {
		struct passwd pw, *res = NULL;
		char buf[1024];
		uint32_t uid = (uint32_t)json_object_get_uint64(json_object_object_get(e, "uid"));
		fprintf(cli_out, "user %" PRIu32 " ", uid);
		if (getpwuid_r((uid_t)uid, &pw, buf, sizeof (buf), &res) == 0 && res != NULL)
			fprintf(cli_out, "(%s) ", pw.pw_name);
	}
	fprintf(cli_out, "on %s]", json_object_get_string(json_object_object_get(e, "host")));
}

/* One pool's history (operation pool.history); the exit status. */
static int
history_one(const char *name, bool internal, bool longfmt)
{
	json_object *args = json_object_new_object(), *res, *ents;
	char when[64];

	json_object_object_add(args, "name", json_object_new_string(name));
	int r = cli_call("pool.history", args, &res);
	if (r != 0 || !json_object_object_get_ex(res, "entries", &ents)) {
		json_object_put(res);
		return (r != 0 ? r : CLI_EXIT_ERROR);
	}
	fprintf(cli_out, "History for '%s':\n", name);
	for (size_t i = 0; i < json_object_array_length(ents); i++) {
		json_object *e = json_object_array_get_idx(ents, i);
		const char *kind = json_object_get_string(json_object_object_get(e, "kind"));
		const char *cmd = json_object_get_string(json_object_object_get(e, "cmd"));
		bool in = kind != NULL && strcmp(kind, "internal") == 0;
		if (in && !internal)
			continue;
		history_time(json_object_get_uint64(json_object_object_get(e, "time")), when,
		    sizeof (when));
		if (in)
			fprintf(cli_out, "%s [txg:%" PRIu64 "] %s", when, json_object_get_uint64(
			    json_object_object_get(e, "txg")), cmd);
		else
			fprintf(cli_out, "%s %s", when, cmd);
		if (longfmt)
			history_long(e, in);
		cli_putc('\n');
	}
	cli_putc('\n');
	json_object_put(res);
	return (CLI_EXIT_OK);
}

/*
 * The pools of the cache file (operation pool.names); verb names the
 * command in "cannot VERB 'FILE'".  NULL when they could not be read
 * (*ret the exit status), else an array (put it with json_object_put).
 */
json_object *
cli_pool_names(const char *verb, int *ret)
{
	json_object *args = json_object_new_object(), *res, *names;

	json_object_object_add(args, "verb", json_object_new_string(verb));
	*ret = cli_call("pool.names", args, &res);
	if (*ret != 0 || !json_object_object_get_ex(res, "names", &names)) {
		json_object_put(res);
		if (*ret == 0)
			*ret = CLI_EXIT_ERROR;
		return (NULL);
	}
	json_object_get(names);
	json_object_put(res);
	return (names);
}

int
cli_pool_history(int argc, char **argv)
{
	json_object *names = NULL;
	bool internal = false, longfmt = false;
	int c, n = 0, ret = CLI_EXIT_OK;

	while ((c = getopt(argc, argv, ":il")) != -1) {
		if (c == 'i')
			internal = true;
		else if (c == 'l')
			longfmt = true;
		else
			return (cli_bad_option("history", c, optopt));
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		if ((names = cli_pool_names("get history", &ret)) == NULL)
			return (ret);
		n = (int)json_object_array_length(names);
		if (n == 0)
			fprintf(cli_err, "no pools available\n");
	}
	for (int i = 0; i < (argc > 0 ? argc : n); i++) {
		int r = history_one(argc > 0 ? argv[i] : json_object_get_string(
		    json_object_array_get_idx(names, i)), internal, longfmt);
		if (r == CLI_EXIT_LOST) {
			ret = r;   /* the daemon died: no other pool either */
			break;
		}
		if (r != 0)
			ret = CLI_EXIT_ERROR;
	}
	json_object_put(names);
	return (ret);
}
