/*
 * fs_autosnap.c — `tarn fs autosnap [-nv] [--dry-run] [--config FILE]`:
 * one pass of scheduled snapshots (contrib/systemd/tarn-autosnap.timer
 * runs it every 15 minutes): on every imported pool's file systems whose
 * com.sun:auto-snapshot is not false, take the frequently / hourly /
 * daily / weekly / monthly snapshots that are due
 * (autosnap_2026-12-02_21:45:00_hourly, UTC) and destroy the oldest ones
 * beyond the counts of the retention file.  The policy and the file's
 * syntax are the host's (fs.autosnap, host/host_op_autosnap.c, whose
 * theory comment is the reference; contrib/autosnap.conf an example).
 *
 * Here: the options, and reading the file.  The file is read by the
 * command, not by the daemon, because it is the caller's: a path relative
 * to the caller's directory, read with the caller's permissions, on the
 * caller's side of the socket; the text goes to the host, which parses it
 * (its errors come back as "cannot read 'FILE': line N: ...", before
 * anything changed).  Without --config, /etc/tarn/autosnap.conf is read
 * when it exists, else the defaults apply (4 frequently, 24 hourly,
 * 31 daily, 8 weekly, 12 monthly).
 *
 * The clock is the host's, unless TARN_AUTOSNAP_NOW (seconds since 1970)
 * says otherwise: tests move time with it.
 *
 * Output: nothing (cron-quiet) unless -v ("took NAME", "destroyed NAME")
 * or -n/--dry-run ("would take NAME", "would destroy NAME", and nothing
 * changes); a held snapshot that is due to go is always named ("kept
 * held snapshot NAME").  Failures are "cannot snapshot 'x': ..." /
 * "cannot destroy 'x@y': ..."; the pass goes on and exits 1 at the end.
 */
#include "tarn.h"

#include <getopt.h>

#define FA_DEFAULT_CONF "/etc/tarn/autosnap.conf"
#define FA_MAX_CONF     (1 << 20)

/* The whole of file path into *textp (NUL-terminated); 0 or errno. */
static int
fa_read(const char *path, char **textp)
{
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return (errno);
	char *buf = tarn_alloc(FA_MAX_CONF + 1);
	size_t n = fread(buf, 1, FA_MAX_CONF + 1, f);
	int e = ferror(f) ? EIO : n > FA_MAX_CONF ? EFBIG : 0;
	(void) fclose(f);
	if (e == 0 && memchr(buf, '\0', n) != NULL)
		e = EINVAL;
	if (e != 0) {
		tarn_free(buf);
		return (e);
	}
	buf[n] = '\0';
	*textp = buf;
	return (0);
}

/* TARN_AUTOSNAP_NOW into args; 0, or 1 after a message. */
static int
fa_now(json_object *args)
{
	const char *s = getenv("TARN_AUTOSNAP_NOW");
	char *end;

	if (s == NULL || s[0] == '\0')
		return (0);
	errno = 0;
	long long v = s[0] >= '0' && s[0] <= '9' ? strtoll(s, &end, 10) : -1;
	if (v < 0 || errno != 0 || *end != '\0')
		return (cli_cannot("use", "TARN_AUTOSNAP_NOW", EINVAL,
		    "not a number of seconds since 1970"));
	json_object_object_add(args, "now", json_object_new_int64(v));
	return (0);
}

static void
fa_print(json_object *res, const char *key, const char *word)
{
	json_object *a = cli_j_get(res, key);
	for (int i = 0; i < cli_j_len(a); i++)
		fprintf(cli_out, "%s %s\n", word, json_object_get_string(cli_j_idx(a, i)));
}

int
cli_fs_autosnap(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "config", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 }
	};
	bool dryrun = false, verbose = false;
	const char *conf = NULL;
	char *text = NULL;
	int c;

	cli_history_begin_zfs(argc, argv);
	while ((c = getopt_long(argc, argv, ":nv", longopts, NULL)) != -1) {
		if (c == 'n')
			dryrun = true;
		else if (c == 'v')
			verbose = true;
		else if (c == 'c')
			conf = optarg;
		else
			return (cli_fs_bad_option("autosnap", c, optopt));
	}
	if (optind < argc)
		return (cli_fs_usage_error("autosnap", "too many arguments"));
	const char *path = conf != NULL ? conf : FA_DEFAULT_CONF;
	int e = fa_read(path, &text);
	if (e != 0 && !(e == ENOENT && conf == NULL))
		return (cli_cannot("read", path, e, e == EINVAL ? "not a text file" : NULL));
	json_object *args = json_object_new_object(), *res;
	if (fa_now(args) != 0) {
		json_object_put(args);
		tarn_free(text);
		return (CLI_EXIT_ERROR);
	}
	json_object_object_add(args, "dryrun", json_object_new_boolean(dryrun));
	if (text != NULL) {
		json_object_object_add(args, "config", json_object_new_string(text));
		json_object_object_add(args, "config_name", json_object_new_string(path));
		tarn_free(text);
	}
	int r = cli_call("fs.autosnap", args, &res);
	if (res == NULL)
		return (r);
	if (dryrun || verbose) {
		fa_print(res, "taken", dryrun ? "would take" : "took");
		fa_print(res, "destroyed", dryrun ? "would destroy" : "destroyed");
	}
	fa_print(res, "held", "kept held snapshot");
	json_object_put(res);
	return (r);
}
