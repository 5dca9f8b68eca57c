/*
 * stress.c — tarn-stress: random operations on a real pool, checked
 * against a model, in the spirit of OpenZFS's ztest.  Options, the run
 * and its summary; the pieces live in stress_*.c.
 *
 * Theory.  The tool builds a pool on sparse files (a layout such as
 * "raidz2:6" or "mirror:2,mirror:2"), creates an object set and runs
 * THREADS workers.  Each worker owns its objects: only it creates,
 * writes, punches, truncates, frees and bonus-writes them, so the changes
 * to one object are serialized and the model (stress_model.c) needs no
 * locks.  The model keeps, per object, extents naming the write
 * generation whose content each byte holds; content is a pure function of
 * (seed, object identity, generation, offset), so the model stays small
 * however much is written (an object split into more than 2048 extents is
 * cut down, so the model stays under ~50 KiB an object; a run holds at
 * most THREADS x 48 objects of up to 4 MiB, and the live data is kept to
 * a quarter of the pool).  Every operation is a tx whose changes go to
 * the model once they are made (reads see them at once; they reach disk
 * with their txg).  Every few seconds (or operations) all workers pause,
 * the controller waits for a running resilver and a sync (the walk needs
 * a quiet pool), compares every byte, bonus and attribute of every object
 * with the model, checks that no other object exists, and walks every
 * block of the pool (spa_verify_all).  At the end the pool is closed,
 * reopened read-only (exactly what is on disk) and checked, then
 * reopened read-write and checked again.  -F aims for more live data
 * than fits, so that ENOSPC is frequent: a refused worker frees and
 * retries, and the pool must never suspend.
 *
 * Replay.  Each worker's random stream depends only on (seed, worker), and
 * the choice of an operation only on that stream and the worker's own
 * objects, so with -t 1 the same seed (and -n) gives the same operations.
 * With more threads each worker still repeats its own operations, but
 * their interleaving, txg boundaries and object numbers vary from run to
 * run.  Running out of space (ENOSPC, which the live-data budget avoids)
 * also makes later choices differ.
 *
 * Kill mode (-k) forks a child per round, SIGKILLs it at a random
 * instant and checks that the pool imports at a committed txg: the
 * comment at the top of stress_kill.c.
 *
 * Faults (-f) are injected within the pool's redundancy while the
 * workload runs (bit flips and EIO on reads, a device that disappears
 * and comes back, scrubs and the resilvers that follow); every read must
 * still match the model and a final scrub must leave nothing unrepaired:
 * the comment at the top of stress_faults.c.  The fault thread's timing
 * is not part of the replay (the operations are; where faults fall is
 * not).  --keep leaves the exported pool and a journal of every change
 * behind for other tests, and --check compares such a pool with the
 * model rebuilt from that journal: stress_check.c.
 */
#include "stress_run.h"

#include <getopt.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

static const char stress_usage[] =
"usage: tarn-stress [-s SEED] [-t THREADS] [-T SECONDS] [-n OPS] [-d DIR]\n"
"                   [-l LAYOUT] [-S SIZE] [-k KILLS] [-F] [-f FAULTS] [-v]\n"
"                   [--keep] [--check] [--help]\n"
"\n"
"Random object operations on a pool of sparse files, checked against an\n"
"in-memory model; the pool is verified every few seconds and after a\n"
"close and reopen at the end.\n"
"\n"
"  -s SEED     random seed (default: random; always printed)\n"
"  -t THREADS  worker threads, each with its own objects (default 4)\n"
"  -T SECONDS  run time (default 10 when -n is not given)\n"
"  -n OPS      stop after this many operations\n"
"  -d DIR      where the device files go (default: a new directory under\n"
"              $TMPDIR or /tmp, removed at the end)\n"
"  -l LAYOUT   TYPE:N[,TYPE:N...] with TYPE mirror, raidz1, raidz2, raidz3\n"
"              or stripe (default mirror:2,raidz1:3)\n"
"  -S SIZE     size of each device file, e.g. 128M (default 128M, min 64M)\n"
"  -k KILLS    kill mode: SIGKILL the workload KILLS times at random\n"
"              instants, re-import the pool and check it after each\n"
"  -F          fill the pool: aim for more live data than fits, so that\n"
"              ENOSPC is frequent (refused workers free and retry)\n"
"  -f FAULTS   inject faults within the pool's redundancy while the workload\n"
"              runs: FAULTS is 'all' or a list of bitflip (flipped bits on\n"
"              reads), eio (read errors), dead (a device disappears for a\n"
"              while and comes back: resilver), scrub (periodic scrubs).  At\n"
"              most parity devices of a RAID-Z group, all but one side of a\n"
"              mirror, are affected at any time; plain disks never (a layout\n"
"              without redundancy is refused).  A final scrub must repair all\n"
"              (--faults FAULTS is the same)\n"
"  --keep      on success export the pool (named \"stress\") and keep its\n"
"              device files in -d DIR, with DIR/stress.journal (every change\n"
"              made, for --check)\n"
"  --check     import read-only the pool on the files in -d DIR (whatever it\n"
"              is called now) and compare every object with the model rebuilt\n"
"              from DIR/stress.journal of a --keep run; -s, when given, must\n"
"              be the seed that run used (give the same -s SEED -t 1 -n N\n"
"              for a replayable run).  Unreadable objects and mismatches are\n"
"              listed and counted apart; exit 0 when all is good, 1 if not\n"
"  -v          say what happens (verifications, rounds); -vv: every change\n"
"  --help      this text\n"
"\n"
"The same seed with -t 1 and -n repeats the same operations (the summary's\n"
"digest is the same); with more threads the interleaving varies.  Exit\n"
"status: 0 passed, 1 failed (the message names the seed), 2 bad usage.\n";

static uint64_t stress_seed_for_msgs;
static bool stress_seeded;

void
stress_fail_msg(const stress_cfg_t *c, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof (buf), fmt, ap);
	va_end(ap);
	fflush(stdout);
	fprintf(stderr, "tarn-stress: FAILED (seed %" PRIu64 "): %s\n",
	    c ? c->sc_seed : stress_seed_for_msgs, buf);
}

void
stress_verbose(const stress_cfg_t *c, const char *fmt, ...)
{
	if (!c->sc_verbose)
		return;
	va_list ap;
	va_start(ap, fmt);
	printf("tarn-stress: ");
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	va_end(ap);
}

static _Noreturn void
stress_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "tarn-stress: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\ntry 'tarn-stress --help'\n");
	exit(2);
}

static uint64_t
stress_parse_num(const char *s, const char *what, bool suffixes)
{
	char *end = NULL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || s[0] == '-')
		stress_usage_error(what, s);
	uint64_t mult = 1;
	if (suffixes && *end != '\0' && end[1] == '\0') {
		switch (*end) {
		case 'k': case 'K': mult = KiB; break;
		case 'm': case 'M': mult = MiB; break;
		case 'g': case 'G': mult = GiB; break;
		default: stress_usage_error(what, s);
		}
		end++;
	}
	if (*end != '\0' || (mult > 1 && v > UINT64_MAX / mult))
		stress_usage_error(what, s);
	return ((uint64_t)v * mult);
}

static void
stress_parse_args(int argc, char **argv, stress_cfg_t *c)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "faults", required_argument, NULL, 'f' },
		{ "keep", no_argument, NULL, 'K' },
		{ "check", no_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	bool seeded = false;
	int ch;
	while ((ch = getopt_long(argc, argv, "s:t:T:n:d:l:S:k:Ff:vh", longopts, NULL)) != -1) {
		switch (ch) {
		case 's':
			c->sc_seed = stress_parse_num(optarg, "bad seed '%s'", false);
			seeded = true;
			break;
		case 't':
			c->sc_threads = (int)stress_parse_num(optarg, "bad thread count '%s'", false);
			if (c->sc_threads < 1 || c->sc_threads > 256)
				stress_usage_error("thread count must be 1..256, not '%s'", optarg);
			break;
		case 'T': {
			char *end = NULL;
			c->sc_seconds = strtod(optarg, &end);
			if (end == optarg || *end != '\0' || !(c->sc_seconds > 0) ||
			    c->sc_seconds > 1e7)
				stress_usage_error("bad number of seconds '%s'", optarg);
			break;
		}
		case 'n':
			c->sc_ops = stress_parse_num(optarg, "bad operation count '%s'", false);
			if (c->sc_ops == 0)
				stress_usage_error("operation count must be positive, not '%s'", optarg);
			break;
		case 'd':
			tarn_free(c->sc_dir);
			c->sc_dir = tarn_strdup(optarg);
			break;
		case 'l':
			c->sc_layout = optarg;
			break;
		case 'S':
			c->sc_devsize = stress_parse_num(optarg, "bad size '%s'", true);
			if (c->sc_devsize < SPA_MINDEVSIZE)
				stress_usage_error("device size '%s' is too small: at least 64M", optarg);
			break;
		case 'k':
			c->sc_kills = (int)stress_parse_num(optarg, "bad kill count '%s'", false);
			if (c->sc_kills > 100000)
				stress_usage_error("kill count '%s' is too large", optarg);
			break;
		case 'F':
			c->sc_fill = true;
			break;
		case 'f':
			if (stress_faults_parse(optarg, &c->sc_faults) != 0)
				stress_usage_error("bad fault list '%s': use all, or a list of "
				    "bitflip,eio,dead,scrub", optarg);
			break;
		case 'K':
			c->sc_keep = true;
			break;
		case 'C':
			c->sc_check = true;
			break;
		case 'v':
			c->sc_verbose++;
			break;
		case 'h':
			fputs(stress_usage, stdout);
			exit(0);
		default:
			fprintf(stderr, "try 'tarn-stress --help'\n");
			exit(2);
		}
	}
	if (optind < argc)
		stress_usage_error("unexpected argument '%s'", argv[optind]);
	stress_seeded = seeded;
	if (c->sc_kills > 0 && (c->sc_faults != 0 || c->sc_keep))
		stress_usage_error("%s: -f and --keep do not go with kill mode (-k)", "-k");
	if (c->sc_check && (c->sc_keep || c->sc_kills > 0 || c->sc_faults != 0))
		stress_usage_error("%s: --check only reads a kept pool (no -k, -f, --keep)",
		    "--check");
	if ((c->sc_check || c->sc_keep) && c->sc_dir == NULL)
		stress_usage_error("%s needs -d DIR", c->sc_check ? "--check" : "--keep");
	if (!seeded)
		c->sc_seed = tarn_guid() >> 24;
	if (c->sc_seconds == 0 && c->sc_ops == 0)
		c->sc_seconds = 10;
}

/* Make (or take) the device directory; *made when we created it. */
static int
stress_dir_setup(stress_cfg_t *c, char *err, size_t errlen)
{
	if (c->sc_dir == NULL) {
		const char *tmp = getenv("TMPDIR");
		char tmpl[1024];
		snprintf(tmpl, sizeof (tmpl), "%s/tarn-stress-XXXXXX",
		    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
		if (mkdtemp(tmpl) == NULL) {
			snprintf(err, errlen, "cannot make a directory %s: %s", tmpl, strerror(errno));
			return (SET_ERROR(EIO));
		}
		c->sc_dir = tarn_strdup(tmpl);
		c->sc_dir_made = true;
		return (0);
	}
	struct stat st;
	if (stat(c->sc_dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "'%s' is not a directory", c->sc_dir);
			return (SET_ERROR(ENOTDIR));
		}
		return (0);
	}
	if (c->sc_check) {
		snprintf(err, errlen, "no directory '%s' to check: %s", c->sc_dir, strerror(errno));
		return (SET_ERROR(ENOENT));
	}
	if (mkdir(c->sc_dir, 0755) != 0) {
		snprintf(err, errlen, "cannot make directory '%s': %s", c->sc_dir, strerror(errno));
		return (SET_ERROR(EIO));
	}
	c->sc_dir_made = true;
	return (0);
}

static void
stress_human(uint64_t b, char *buf, size_t len)
{
	if (b >= 10 * GiB)
		snprintf(buf, len, "%.1f GiB", (double)b / (double)GiB);
	else if (b >= 10 * MiB)
		snprintf(buf, len, "%.1f MiB", (double)b / (double)MiB);
	else
		snprintf(buf, len, "%.1f KiB", (double)b / (double)KiB);
}

static void
stress_summary(const stress_cfg_t *c, const stress_stats_t *st, double secs)
{
	char wr[32], ck[32];
	stress_human(st->st_bytes_written, wr, sizeof (wr));
	stress_human(st->st_bytes_checked, ck, sizeof (ck));
	if (c->sc_kills > 0) {
		printf("tarn-stress: ok (seed %" PRIu64 "): %" PRIu64 " rounds, %" PRIu64
		    " killed; %" PRIu64 " changes journaled, %" PRIu64 " committed at import; %"
		    PRIu64 " txgs; %s verified; %.1f s\n", c->sc_seed, st->st_rounds,
		    st->st_kills, st->st_journaled, st->st_committed, st->st_txgs, ck, secs);
		return;
	}
	printf("tarn-stress: ok (seed %" PRIu64 "): %" PRIu64 " ops (%.0f ops/s) in %" PRIu64
	    " txs over %" PRIu64 " txgs; %s written, %s verified in %" PRIu64
	    " verifications; %" PRIu64 " ENOSPC; %.1f s; digest %016" PRIx64 "\n", c->sc_seed,
	    st->st_ops, secs > 0 ? (double)st->st_ops / secs : 0.0, st->st_txs, st->st_txgs,
	    wr, ck, st->st_verifies, st->st_enospc, secs, st->st_digest);
	if (c->sc_faults != 0) {
		char rep[32];
		stress_human(st->st_repaired, rep, sizeof (rep));
		printf("tarn-stress: faults: %" PRIu64 " device episodes with bit flips/EIO, %"
		    PRIu64 " devices disappeared and came back; repairs: %" PRIu64
		    " checksum errors, %" PRIu64 " read errors, %s repaired by scans; %" PRIu64
		    " scrubs, %" PRIu64 " resilvers; 0 unrepaired\n", st->st_faults, st->st_dead,
		    st->st_ck_errors, st->st_read_errors, rep, st->st_scrubs, st->st_resilvers);
	}
}

/* --check: the first line, the check, its verdict. */
static int
stress_main_check(stress_cfg_t *c)
{
	char err[2048] = "";
	stress_stats_t st;
	memset(&st, 0, sizeof (st));
	printf("tarn-stress: checking the pool in %s against %s/stress.journal\n", c->sc_dir,
	    c->sc_dir);
	fflush(stdout);
	int e = stress_run_check(c, stress_seeded, &st, err, sizeof (err));
	stress_cfg_fini(c);
	if (e != 0) {
		fflush(stdout);
		fprintf(stderr, "tarn-stress: check FAILED: %s\n", err);
		return (1);
	}
	char ck[32];
	stress_human(st.st_bytes_checked, ck, sizeof (ck));
	printf("tarn-stress: check ok: every object reads back as written (%s compared)\n", ck);
	return (0);
}

int
main(int argc, char **argv)
{
	stress_cfg_t c;
	stress_cfg_init(&c);
	c.sc_threads = 4;
	c.sc_layout = "mirror:2,raidz1:3";
	c.sc_devsize = 128 * MiB;
	c.sc_verify_secs = 5;
	c.sc_verify_ops = 100000;
	stress_parse_args(argc, argv, &c);
	stress_seed_for_msgs = c.sc_seed;

	char err[2048] = "";
	int e = stress_dir_setup(&c, err, sizeof (err));
	if (e == 0)
		e = stress_layout_parse(&c, err, sizeof (err));
	if (e == 0 && c.sc_faults != 0) {
		bool redundant = false;
		for (int i = 0; i < stress_ngroups(&c); i++)
			redundant |= stress_group(&c, i)->sg_tol > 0;
		if (!redundant) {
			snprintf(err, sizeof (err), "-f needs redundancy: layout '%s' has none "
			    "(plain disks only); use mirror or raidz groups", c.sc_layout);
			e = SET_ERROR(EINVAL);
		}
	}
	if (e != 0) {
		fprintf(stderr, "tarn-stress: %s\n", err);
		if (c.sc_dir_made)
			(void) rmdir(c.sc_dir);
		stress_cfg_fini(&c);
		return (2);
	}
	if (c.sc_check)
		return (stress_main_check(&c));
	char lim[128] = "";
	if (c.sc_kills > 0)
		snprintf(lim, sizeof (lim), ", %d kills", c.sc_kills);
	if (c.sc_seconds > 0)
		snprintf(lim + strlen(lim), sizeof (lim) - strlen(lim), ", %.0f s", c.sc_seconds);
	if (c.sc_ops > 0)
		snprintf(lim + strlen(lim), sizeof (lim) - strlen(lim), ", %" PRIu64 " ops",
		    c.sc_ops);
	printf("tarn-stress: seed %" PRIu64 ", layout %s (%d x %" PRIu64 " MiB in %s), "
	    "%d thread%s%s\n", c.sc_seed, c.sc_layout, stress_npaths(&c),
	    (uint64_t)(c.sc_devsize / MiB), c.sc_dir, c.sc_threads, c.sc_threads == 1 ? "" : "s",
	    lim);
	fflush(stdout);

	uint64_t t0 = tarn_now_ns();
	stress_stats_t st;
	memset(&st, 0, sizeof (st));
	if (c.sc_kills > 0)
		e = stress_run_kill(&c, &st, err, sizeof (err));
	else
		e = stress_run_normal(&c, &st, err, sizeof (err));
	double secs = (double)(tarn_now_ns() - t0) / 1e9;
	if (e != 0) {
		stress_fail_msg(&c, "%s", err);
		char fl[64] = "";
		if (c.sc_faults != 0) {
			char names[48];
			stress_faults_name(c.sc_faults, names, sizeof (names));
			snprintf(fl, sizeof (fl), " -f %s", names);
		}
		fprintf(stderr, "tarn-stress: the devices are kept in %s; to replay: tarn-stress "
		    "-s %" PRIu64 " -t %d -l %s -S %" PRIu64 "M%s%s%s%s\n", c.sc_dir, c.sc_seed,
		    c.sc_threads, c.sc_layout, (uint64_t)(c.sc_devsize / MiB),
		    c.sc_fill ? " -F" : "", fl, c.sc_kills ? " -k N" : "",
		    c.sc_threads > 1 ? " (or with -t 1 and -n)" : " (with -n for the same ops)");
		stress_cfg_fini(&c);
		return (1);
	}
	stress_summary(&c, &st, secs);
	if (c.sc_keep) {
		printf("tarn-stress: kept pool '%s' (exported) in %s:", STRESS_POOL_NAME, c.sc_dir);
		for (int i = 0; i < stress_npaths(&c); i++)
			printf(" %s", stress_path(&c, i));
		printf("\ntarn-stress: check it with: tarn-stress --check -d %s -s %" PRIu64 "\n",
		    c.sc_dir, c.sc_seed);
		stress_cfg_fini(&c);
		return (0);
	}
	stress_devices_remove(&c);
	if (c.sc_dir_made)
		(void) rmdir(c.sc_dir);
	stress_cfg_fini(&c);
	return (0);
}
