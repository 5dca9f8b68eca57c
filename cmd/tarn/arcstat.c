/*
 * arcstat.c — the daemon's ARC from the command line:
 *
 *   tarn arcstat [-ajpv] [-f FIELD[,FIELD...]] [INTERVAL [COUNT]]
 *       arcstat(1)'s table: one line a sample; counts are per second over
 *       the interval (the first line: since the daemon started), sizes
 *       are now.  -f picks the columns (-v lists them), -a all of them,
 *       -p exact numbers, -j the raw statistics as JSON, one object a
 *       sample.
 *   tarn arc-summary [-j]
 *       arc_summary's report: sizes, hit ratios, MRU/MFU, ghost hits,
 *       the L2ARC (zero until it exists).
 *   tarn daemon get [-Hp] [all | NAME...]
 *   tarn daemon set NAME=VALUE...
 *       the daemon's tunables (arc_max, arc_min): get prints PROPERTY,
 *       VALUE, SOURCE (default, config: the config file, local: set);
 *       set changes the running daemon at once (a lower arc_max shrinks
 *       the cache before it returns), all or nothing.
 *
 * Host operations: arc.stats, daemon.get, daemon.set (host_op_arc.c).
 */
#include "tarn.h"

#include <math.h>
#include <time.h>
#include <unistd.h>

/* ---- arcstat ---- */

typedef enum { AF_COUNT, AF_SIZE, AF_PCT, AF_TIME } af_kind_t;

typedef struct as_sample {
	json_object *s_stats;
	double s_time;
} as_sample_t;

typedef struct as_field {
	const char *af_name;
	int af_width;
	af_kind_t af_kind;
	const char *af_desc;
	/* the counters summed (count/pct numerator), or the size stat */
	const char *af_num[4];
	const char *af_den[4];      /* pct: the denominator's counters */
} as_field_t;

#define DH "demand_data_hits", "demand_metadata_hits"
#define DM "demand_data_misses", "demand_metadata_misses"
#define PH "prefetch_data_hits", "prefetch_metadata_hits"
#define PM "prefetch_data_misses", "prefetch_metadata_misses"
#define MH "demand_metadata_hits", "prefetch_metadata_hits"
#define MM "demand_metadata_misses", "prefetch_metadata_misses"

static const as_field_t as_fields[] = {
	{ "time", 8, AF_TIME, "time of the sample", { NULL }, { NULL } },
	{ "hits", 4, AF_COUNT, "ARC hits per second", { "hits" }, { NULL } },
	{ "miss", 4, AF_COUNT, "ARC misses per second", { "misses" }, { NULL } },
	{ "read", 4, AF_COUNT, "ARC accesses per second", { "hits", "misses" }, { NULL } },
	{ "hit%", 4, AF_PCT, "ARC hit percentage", { "hits" }, { "hits", "misses" } },
	{ "miss%", 5, AF_PCT, "ARC miss percentage", { "misses" }, { "hits", "misses" } },
	{ "dhit", 4, AF_COUNT, "demand hits per second", { DH }, { NULL } },
	{ "dmis", 4, AF_COUNT, "demand misses per second", { DM }, { NULL } },
	{ "dread", 5, AF_COUNT, "demand accesses per second", { DH, DM }, { NULL } },
	{ "dh%", 3, AF_PCT, "demand hit percentage", { DH }, { DH, DM } },
	{ "dm%", 3, AF_PCT, "demand miss percentage", { DM }, { DH, DM } },
	{ "phit", 4, AF_COUNT, "prefetch hits per second", { PH }, { NULL } },
	{ "pmis", 4, AF_COUNT, "prefetch misses per second", { PM }, { NULL } },
	{ "pread", 5, AF_COUNT, "prefetch accesses per second", { PH, PM }, { NULL } },
	{ "ph%", 3, AF_PCT, "prefetch hit percentage", { PH }, { PH, PM } },
	{ "pm%", 3, AF_PCT, "prefetch miss percentage", { PM }, { PH, PM } },
	{ "mhit", 4, AF_COUNT, "metadata hits per second", { MH }, { NULL } },
	{ "mmis", 4, AF_COUNT, "metadata misses per second", { MM }, { NULL } },
	{ "mread", 5, AF_COUNT, "metadata accesses per second", { MH, MM }, { NULL } },
	{ "mh%", 3, AF_PCT, "metadata hit percentage", { MH }, { MH, MM } },
	{ "mm%", 3, AF_PCT, "metadata miss percentage", { MM }, { MH, MM } },
	{ "mrug", 4, AF_COUNT, "MRU ghost list hits per second", { "mru_ghost_hits" }, { NULL } },
	{ "mfug", 4, AF_COUNT, "MFU ghost list hits per second", { "mfu_ghost_hits" }, { NULL } },
	{ "eskip", 5, AF_COUNT, "evictions given up per second", { "evict_skip" }, { NULL } },
	{ "evict", 5, AF_COUNT, "evictions per second", { "evictions" }, { NULL } },
	{ "arcsz", 5, AF_SIZE, "ARC size", { "size" }, { NULL } },
	{ "size", 5, AF_SIZE, "ARC size", { "size" }, { NULL } },
	{ "c", 5, AF_SIZE, "ARC target size (arc_max)", { "c" }, { NULL } },
	{ "p", 5, AF_SIZE, "ARC target size of the MRU", { "p" }, { NULL } },
	{ "mru", 5, AF_SIZE, "MRU size", { "mru_size" }, { NULL } },
	{ "mfu", 5, AF_SIZE, "MFU size", { "mfu_size" }, { NULL } },
	{ "held", 5, AF_SIZE, "blocks held by readers now", { "held_size" }, { NULL } },
	{ "data", 5, AF_SIZE, "data size", { "data_size" }, { NULL } },
	{ "meta", 5, AF_SIZE, "metadata size", { "metadata_size" }, { NULL } },
	{ "l2hits", 6, AF_COUNT, "L2ARC hits per second", { "l2_hits" }, { NULL } },
	{ "l2miss", 6, AF_COUNT, "L2ARC misses per second", { "l2_misses" }, { NULL } },
	{ "l2read", 6, AF_COUNT, "L2ARC accesses per second", { "l2_hits", "l2_misses" },
		{ NULL } },
	{ "l2hit%", 6, AF_PCT, "L2ARC hit percentage", { "l2_hits" }, { "l2_hits", "l2_misses" } },
	{ "l2miss%", 7, AF_PCT, "L2ARC miss percentage", { "l2_misses" },
		{ "l2_hits", "l2_misses" } },
	{ "l2size", 6, AF_SIZE, "L2ARC size (logical)", { "l2_size" }, { NULL } },
	{ "l2asize", 7, AF_SIZE, "L2ARC size (allocated)", { "l2_asize" }, { NULL } },
};
#define AS_NFIELDS ((int)ARRAY_SIZE(as_fields))
static const char *as_default = "time,read,miss,miss%,dmis,dm%,pmis,pm%,mmis,mm%,arcsz,c";

static int
as_usage(FILE *f, int ret)
{
	fprintf(f, "usage: tarn arcstat [-ajpv] [-f FIELD[,FIELD...]] [INTERVAL [COUNT]]\n"
	    "  default fields: %s\n  -v lists every field\n", as_default);
	return (ret);
}

static int
as_field_lookup(const char *name)
{
	for (int i = 0; i < AS_NFIELDS; i++)
		if (strcmp(as_fields[i].af_name, name) == 0)
			return (i);
	return (-1);
}

static uint64_t
as_sum(json_object *st, const char *const *names)
{
	uint64_t v = 0;
	for (int i = 0; i < 4 && names[i] != NULL; i++)
		v += cli_j_u64(st, names[i]);
	return (v);
}

/* A counter's change from prev to cur (cur's value when there is no prev). */
static uint64_t
as_delta(const as_sample_t *cur, const as_sample_t *prev, const char *const *names)
{
	uint64_t c = as_sum(cur->s_stats, names);
	uint64_t p = prev != NULL ? as_sum(prev->s_stats, names) : 0;
	return (c >= p ? c - p : 0);
}

/* arcstat's numbers: counts in powers of 1000, sizes of 1024. */
static void
as_num(double v, bool size, bool exact, char *buf, size_t len)
{
	if (exact || v < (size ? 1024 : 1000)) {
		(void) snprintf(buf, len, "%.0f", v);
		return;
	}
	if (size) {
		cli_nicenum((uint64_t)v, false, buf, len);
		return;
	}
	static const char units[] = " KMGTPE";
	int i = 0;
	while (v >= 1000 && i < 6) {
		v /= 1000;
		i++;
	}
	(void) snprintf(buf, len, v < 10 ? "%.1f%c" : "%.0f%c", v, units[i]);
}

static void
as_cell(const as_field_t *f, const as_sample_t *cur, const as_sample_t *prev, double secs,
    bool exact, char *buf, size_t len)
{
	switch (f->af_kind) {
	case AF_TIME: {
		time_t t = (time_t)cur->s_time;
		struct tm tm;
		(void) localtime_r(&t, &tm);
		(void) strftime(buf, len, "%H:%M:%S", &tm);
		break;
	}
	case AF_COUNT:
		as_num((double)as_delta(cur, prev, f->af_num) / secs, false, exact, buf, len);
		break;
	case AF_SIZE:
		as_num((double)cli_j_u64(cur->s_stats, f->af_num[0]), true, exact, buf, len);
		break;
	case AF_PCT: {
		uint64_t d = as_delta(cur, prev, f->af_den);
		uint64_t n = as_delta(cur, prev, f->af_num);
		(void) snprintf(buf, len, "%" PRIu64, d == 0 ? 0 : (n * 100 + d / 2) / d);
		break;
	}
	}
}

static int
as_sample(as_sample_t *s)
{
	json_object *res = NULL;
	int ret = cli_call("arc.stats", json_object_new_object(), &res);
	if (ret != CLI_EXIT_OK) {
		if (res != NULL)
			json_object_put(res);
		return (ret);
	}
	s->s_stats = json_object_get(cli_j_get(res, "stats"));
	s->s_time = json_object_get_double(cli_j_get(res, "time"));
	json_object_put(res);
	return (CLI_EXIT_OK);
}

typedef struct as_opts {
	int ao_fields[64];
	int ao_nfields;
	bool ao_exact, ao_json;
	double ao_interval;
	unsigned long ao_count;
} as_opts_t;

static int
as_parse_fields(as_opts_t *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL;
	o->ao_nfields = 0;
	for (char *t = strtok_r(copy, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
		int i = as_field_lookup(t);
		if (i < 0 || o->ao_nfields >= (int)ARRAY_SIZE(o->ao_fields)) {
			fprintf(cli_err, "invalid field '%s'; 'tarn arcstat -v' lists them\n", t);
			free(copy);
			return (CLI_EXIT_USAGE);
		}
		o->ao_fields[o->ao_nfields++] = i;
	}
	free(copy);
	return (o->ao_nfields == 0 ? as_usage(cli_err, CLI_EXIT_USAGE) : CLI_EXIT_OK);
}

static int
as_parse(as_opts_t *o, int argc, char **argv)
{
	int c, ret;
	const char *fields = as_default;
	optind = 1;
	opterr = 0;
	while ((c = getopt(argc, argv, ":af:jpvh")) != -1) {
		switch (c) {
		case 'a': fields = NULL; break;
		case 'f': fields = optarg; break;
		case 'j': o->ao_json = true; break;
		case 'p': o->ao_exact = true; break;
		case 'h': return (as_usage(cli_out, -1));
		case 'v':
			fprintf(cli_out, "fields:\n");
			for (int i = 0; i < AS_NFIELDS; i++)
				fprintf(cli_out, "  %-8s %s\n", as_fields[i].af_name,
				    as_fields[i].af_desc);
			return (-1);
		case ':':
			fprintf(cli_err, "missing argument for '%c' option\n", optopt);
			return (as_usage(cli_err, CLI_EXIT_USAGE));
		default:
			fprintf(cli_err, "invalid option '%c'\n", optopt);
			return (as_usage(cli_err, CLI_EXIT_USAGE));
		}
	}
	if (fields == NULL) {
		for (int i = 0; i < AS_NFIELDS && i < (int)ARRAY_SIZE(o->ao_fields); i++)
			o->ao_fields[o->ao_nfields++] = i;
	} else if ((ret = as_parse_fields(o, fields)) != CLI_EXIT_OK) {
		return (ret);
	}
	argc -= optind;
	argv += optind;
	if (argc > 2) {
		fprintf(cli_err, "too many arguments\n");
		return (as_usage(cli_err, CLI_EXIT_USAGE));
	}
	o->ao_count = 1;
	if (argc >= 1) {
		char *end;
		o->ao_interval = strtod(argv[0], &end);
		if (*end != '\0' || !(o->ao_interval > 0) || o->ao_interval > 86400) {
			fprintf(cli_err, "invalid interval '%s': must be a positive number\n",
			    argv[0]);
			return (as_usage(cli_err, CLI_EXIT_USAGE));
		}
		o->ao_count = 0;        /* forever */
	}
	if (argc == 2) {
		char *end;
		o->ao_count = strtoul(argv[1], &end, 10);
		if (*end != '\0' || o->ao_count == 0 || argv[1][0] == '-') {
			fprintf(cli_err, "invalid count '%s': must be a positive integer\n",
			    argv[1]);
			return (as_usage(cli_err, CLI_EXIT_USAGE));
		}
	}
	return (CLI_EXIT_OK);
}

static void
as_print_line(const as_opts_t *o, const as_sample_t *cur, const as_sample_t *prev)
{
	double secs = prev != NULL ? MAX(cur->s_time - prev->s_time, 1e-3) : 1;
	if (o->ao_json) {
		json_object *j = json_object_new_object();
		json_object_object_add(j, "time", json_object_new_double(cur->s_time));
		json_object_object_add(j, "stats", json_object_get(cur->s_stats));
		fprintf(cli_out, "%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
		json_object_put(j);
		return;
	}
	for (int i = 0; i < o->ao_nfields; i++) {
		const as_field_t *f = &as_fields[o->ao_fields[i]];
		char buf[64];
		as_cell(f, cur, prev, secs, o->ao_exact, buf, sizeof (buf));
		fprintf(cli_out, "%s%*s", i > 0 ? "  " : "", f->af_width, buf);
	}
	fputc('\n', cli_out);
}

static void
as_print_header(const as_opts_t *o)
{
	if (o->ao_json)
		return;
	for (int i = 0; i < o->ao_nfields; i++) {
		const as_field_t *f = &as_fields[o->ao_fields[i]];
		fprintf(cli_out, "%s%*s", i > 0 ? "  " : "", f->af_width, f->af_name);
	}
	fputc('\n', cli_out);
}

int
cli_arcstat(int argc, char **argv)
{
	as_opts_t o = { 0 };
	int ret = as_parse(&o, argc, argv);
	if (ret != CLI_EXIT_OK)
		return (ret < 0 ? CLI_EXIT_OK : ret);
	as_sample_t prev = { 0 }, cur = { 0 };
	bool have_prev = false;
	as_print_header(&o);
	for (unsigned long n = 0; o.ao_count == 0 || n < o.ao_count; n++) {
		if (n > 0) {
			fflush(cli_out);
			struct timespec ts = { (time_t)o.ao_interval,
				(long)((o.ao_interval - floor(o.ao_interval)) * 1e9) };
			(void) nanosleep(&ts, NULL);
		}
		if ((ret = as_sample(&cur)) != CLI_EXIT_OK)
			break;
		as_print_line(&o, &cur, have_prev ? &prev : NULL);
		if (have_prev)
			json_object_put(prev.s_stats);
		prev = cur;
		have_prev = true;
		if (n > 0 && n % 20 == 0 && !o.ao_json && isatty(STDOUT_FILENO))
			as_print_header(&o);
	}
	if (have_prev)
		json_object_put(prev.s_stats);
	fflush(cli_out);
	return (ret);
}
