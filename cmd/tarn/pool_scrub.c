/*
 * pool_scrub.c — `tarn pool scrub [-s | -p] [-w] POOL...`, `tarn pool
 * resilver POOL...`, and the `scan:` paragraph of `status`.
 *
 * A scrub runs in the pool's owner: inside tarnd it goes on after the
 * command returns (status shows its progress; -w waits for the end).  Run
 * in-process (TARN_NO_DAEMON=1) nobody would carry it on once the command
 * exits, so there `scrub` always waits, as with -w.  The host does it
 * (operation pool.scrub, host/host_op_scan.c); this file parses argv and
 * prints the scan: paragraph from the statistics the host gives
 * (cli_status_scan_json; cli_status_scan and cli_scan_wait still take
 * the pool for the verbs that open it themselves).
 *
 * The scan: paragraph, as zpool prints it:
 *
 *	  scan: scrub repaired 1.50M in 00:00:12 with 0 errors on Mon Nov 30 04:00:00 2026
 *	  scan: scrub in progress since Mon Nov 30 04:00:00 2026
 *		1.23G scanned at 100M/s, 1.00G issued at 80M/s, 2.00G total
 *		0B repaired, 50.00% done, 00:00:10 to go
 *	  scan: scrub paused since ...  /  scrub canceled on ...
 *	  scan: resilvered 10.0M in 00:00:02 with 0 errors on ...
 *	  scan: resilver in progress since ...
 *		... 12.0M resilvered, 40.00% done, no estimated completion time
 */
#include "tarn.h"

#include <getopt.h>
#include <time.h>

void
cli_nicebytes(uint64_t n, char *buf, size_t len)
{
	cli_nicenum(n, false, buf, len);
	if (n < 1024 && strlen(buf) + 1 < len)
		(void) strcat(buf, "B");
}

/* "00:00:12", or "2 days 01:00:00". */
static void
scan_dhms(uint64_t secs, char *buf, size_t len)
{
	uint64_t d = secs / 86400, h = secs / 3600 % 24, m = secs / 60 % 60, s = secs % 60;

	if (d > 0)
		(void) snprintf(buf, len, "%" PRIu64 " days %02" PRIu64 ":%02" PRIu64
		    ":%02" PRIu64, d, h, m, s);
	else
		(void) snprintf(buf, len, "%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64, h, m, s);
}

/* ctime(3) without its newline. */
static void
scan_ctime(uint64_t secs, char *buf, size_t len)
{
	time_t t = (time_t)secs;
	char tmp[64];

	if (ctime_r(&t, tmp) == NULL) {
		(void) snprintf(buf, len, "%" PRIu64, secs);
		return;
	}
	tmp[strcspn(tmp, "\n")] = '\0';
	(void) snprintf(buf, len, "%s", tmp);
}

/*
 * The two progress lines of a running or paused scan.  The scan rate is
 * estimated (bytes visited in this pass in proportion to those issued);
 * a paused scrub is shown "paused since" the start of its last pass
 * (the scan statistics keep no pause time).
 */
static void
scan_progress(const spa_scan_stat_t *ss, bool resilver)
{
	char scanned[16], issued[16], total[16], srate[16], irate[16], done[16], left[48];
	bool paused = ss->sss_paused != 0;
	uint64_t now = (uint64_t)time(NULL), issue_rate, secs_left;
	uint64_t elapsed = now > ss->sss_pass_start ? now - ss->sss_pass_start : 1;
	/* bytes visited in this pass: in proportion to what it issued */
	uint64_t pass_exam = ss->sss_issued > 0 ? (uint64_t)((double)ss->sss_examined *
	    ((double)ss->sss_pass_issued / (double)ss->sss_issued)) : ss->sss_examined;
	double frac = ss->sss_to_examine > 0 ?
	    (double)ss->sss_issued / (double)ss->sss_to_examine : 0.0;

	spa_scan_rate(ss, now, &issue_rate, &secs_left);
	cli_nicebytes(ss->sss_examined, scanned, sizeof (scanned));
	cli_nicebytes(ss->sss_issued, issued, sizeof (issued));
	cli_nicebytes(ss->sss_to_examine, total, sizeof (total));
	cli_nicebytes(ss->sss_repaired, done, sizeof (done));
	if (!paused) {
		cli_nicebytes(pass_exam / elapsed, srate, sizeof (srate));
		cli_nicebytes(issue_rate, irate, sizeof (irate));
		fprintf(cli_out, "\t%s scanned at %s/s, %s issued at %s/s, %s total\n",
		    scanned, srate, issued, irate, total);
	} else {
		fprintf(cli_out, "\t%s scanned, %s issued, %s total\n", scanned, issued, total);
	}
	fprintf(cli_out, "\t%s %s, %.2f%% done", done, resilver ? "resilvered" : "repaired",
	    100.0 * MIN(frac, 1.0));
	if (paused) {
		cli_putc('\n');
	} else if (ss->sss_to_examine >= ss->sss_issued && issue_rate >= 10 * MiB &&
	    ss->sss_issued > 0) {
		/* zpool gives an estimate only from 10M/s on */
		scan_dhms(secs_left, left, sizeof (left));
		fprintf(cli_out, ", %s to go\n", left);
	} else {
		fprintf(cli_out, ", no estimated completion time\n");
	}
}

/* The scan: paragraph of these statistics (nothing when never scanned). */
void
cli_scan_paragraph(const spa_scan_stat_t *ssp)
{
	spa_scan_stat_t ss = *ssp;
	char when[64], took[48], bytes[16];

	bool resilver = ss.sss_func == SPA_SCAN_RESILVER;
	if ((ss.sss_func != SPA_SCAN_SCRUB && !resilver) || ss.sss_state == SPA_SCAN_STATE_NONE)
		return;   /* never scanned: zpool prints no scan: line either */
	fprintf(cli_out, "  scan: ");
	if (ss.sss_state == SPA_SCAN_STATE_FINISHED) {
		scan_dhms(ss.sss_end_time > ss.sss_start_time ?
		    ss.sss_end_time - ss.sss_start_time : 0, took, sizeof (took));
		scan_ctime(ss.sss_end_time, when, sizeof (when));
		cli_nicebytes(ss.sss_repaired, bytes, sizeof (bytes));
		fprintf(cli_out, "%s %s in %s with %" PRIu64 " errors on %s\n",
		    resilver ? "resilvered" : "scrub repaired", bytes, took, ss.sss_errors,
		    when);
		return;
	}
	if (ss.sss_state == SPA_SCAN_STATE_CANCELED) {
		scan_ctime(ss.sss_end_time, when, sizeof (when));
		fprintf(cli_out, "%s canceled on %s\n", resilver ? "resilver" : "scrub", when);
		return;
	}
	scan_ctime(ss.sss_start_time, when, sizeof (when));
	if (resilver) {
		fprintf(cli_out, "resilver in progress since %s\n", when);
	} else if (ss.sss_paused) {
		char since[64];
		/* the pass start is when it was paused (or last resumed) */
		scan_ctime(ss.sss_pass_start, since, sizeof (since));
		fprintf(cli_out, "scrub paused since %s\n\tscrub started on %s\n", since, when);
	} else {
		fprintf(cli_out, "scrub in progress since %s\n", when);
	}
	scan_progress(&ss, resilver);
}


/* The index of word in words (the host's names of func and state), or 0. */
static uint64_t
scan_word(json_object *scan, const char *key, const char *const *words, size_t n)
{
	const char *w = json_object_get_string(json_object_object_get(scan, key));

	for (size_t i = 0; w != NULL && i < n; i++)
		if (strcmp(w, words[i]) == 0)
			return (i);
	return (0);
}

static uint64_t
scan_u64(json_object *scan, const char *key)
{
	return (json_object_get_uint64(json_object_object_get(scan, key)));
}

void
cli_scan_stat_json(json_object *scan, spa_scan_stat_t *ss)
{
	static const char *const funcs[] = { "none", "scrub", "resilver" };
	static const char *const states[] = { "none", "scanning", "finished", "canceled" };

	memset(ss, 0, sizeof (*ss));
	ss->sss_func = scan_word(scan, "func", funcs, ARRAY_SIZE(funcs));
	ss->sss_state = scan_word(scan, "state", states, ARRAY_SIZE(states));
	ss->sss_paused = json_object_get_boolean(json_object_object_get(scan, "paused"));
	ss->sss_start_time = scan_u64(scan, "start_time");
	ss->sss_end_time = scan_u64(scan, "end_time");
	ss->sss_pass_start = scan_u64(scan, "pass_start");
	ss->sss_to_examine = scan_u64(scan, "to_examine");
	ss->sss_examined = scan_u64(scan, "examined");
	ss->sss_issued = scan_u64(scan, "issued");
	ss->sss_repaired = scan_u64(scan, "repaired");
	ss->sss_pass_issued = scan_u64(scan, "pass_issued");
	ss->sss_errors = scan_u64(scan, "errors");
}

void
cli_status_scan_json(json_object *scan)
{
	spa_scan_stat_t ss;

	cli_scan_stat_json(scan, &ss);
	cli_scan_paragraph(&ss);
}



/* Start, cancel or pause one pool's scan (operation pool.scrub). */
static int
scrub_one(const char *name, const char *verb, const char *cmd, bool wait)
{
	json_object *args = json_object_new_object(), *res;

	json_object_object_add(args, "name", json_object_new_string(name));
	json_object_object_add(args, "func", json_object_new_string(verb));
	json_object_object_add(args, "cmd", json_object_new_string(cmd));
	json_object_object_add(args, "wait", json_object_new_boolean(wait));
	json_object_object_add(args, "prog", json_object_new_string(cli_pool_prog));
	int r = cli_call("pool.scrub", args, &res);
	json_object_put(res);
	return (r);
}

static int
scrub_main(const char *verb, spa_scan_func_t func, int argc, char **argv)
{
	bool wait = false, stop = false, pause = false;
	int c, ret = CLI_EXIT_OK;

	cli_history_begin(argc, argv);
	while ((c = getopt(argc, argv, func == SPA_SCAN_SCRUB ? ":spw" : ":w")) != -1) {
		switch (c) {
		case 's': stop = true; break;
		case 'p': pause = true; break;
		case 'w': wait = true; break;
		default:
			return (cli_bad_option(verb, c, optopt));
		}
	}
	argc -= optind;
	argv += optind;
	if (stop && pause)
		return (cli_usage_error(verb, "invalid option combination: -s and -p "
		    "are mutually exclusive"));
	if (wait && (stop || pause))
		return (cli_usage_error(verb, "invalid option combination: -w cannot "
		    "be used with -p or -s"));
	if (argc < 1)
		return (cli_usage_error(verb, "missing pool name argument"));
	const char *cmd = stop ? "stop" : pause ? "pause" : "start";
	for (int i = 0; i < argc; i++) {
		int r = scrub_one(argv[i], verb, cmd, wait);
		if (r == CLI_EXIT_LOST)
			return (r);   /* the daemon died: no other pool either */
		if (r != 0)
			ret = CLI_EXIT_ERROR;
	}
	return (ret);
}

int
cli_pool_scrub(int argc, char **argv)
{
	return (scrub_main("scrub", SPA_SCAN_SCRUB, argc, argv));
}

int
cli_pool_resilver(int argc, char **argv)
{
	return (scrub_main("resilver", SPA_SCAN_RESILVER, argc, argv));
}
