/*
 * inject.c — `tarn inject`, the fault and latency injector (after
 * OpenZFS's zinject), for administrators, tests and benchmarks:
 *
 *   tarn inject [-l]                       list the injections
 *   tarn inject -c ID|all                  remove one, or all
 *   tarn inject -d DEV -e io|checksum|nxio [-T read|write|all] [-f FREQ] POOL
 *   tarn inject -d DEV -D LATENCY_MS[:LANES] [-T read|write|all] POOL
 *
 * DEV names a leaf of the imported pool POOL as `status` shows it (path,
 * GUID, or the last part of the path).  -e io: the I/O fails with EIO
 * (READ/WRITE errors); checksum: reads return damaged data (CKSUM errors,
 * self-heal from redundancy; reads only); nxio: the device is gone
 * (every I/O fails with ENXIO, and it cannot be reopened while the
 * injection is at 100%).  -T: which I/O (default: read for io and
 * checksum, as zinject; all for nxio and -D).  -f: the chance per I/O in
 * percent, 0.0001 to 100 (default 100).  -D: each I/O takes LATENCY_MS
 * (a decimal number, up to a minute), at most LANES (default 1, up to
 * 1024) in service at once; an I/O waits for the lane that frees first.
 * Injections live in tarnd until cleared, or until the pool is exported
 * or destroyed (host/host_op_inject.c; lib/vdev/vdev_inject.c does it).
 *
 * Usage errors (options, a missing pool) exit 2 with the usage; a bad
 * frequency, latency, lane count or handle, or a pool or device the host
 * refuses, is one line "cannot ...", exit 1, and nothing is changed.
 */
#include "tarn.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

static void
inject_usage(FILE *f)
{
	fprintf(f, "usage:\n"
	    "\ttarn inject [-l]\n"
	    "\ttarn inject -c <id|all>\n"
	    "\ttarn inject -d <device> -e <io|checksum|nxio> [-T <read|write|all>]\n"
	    "\t    [-f <frequency>] <pool>\n"
	    "\ttarn inject -d <device> -D <latency_ms>[:<lanes>] [-T <read|write|all>] <pool>\n");
}

static int __attribute__((format(printf, 1, 2)))
inject_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(cli_err, fmt, ap);
	va_end(ap);
	fputc('\n', cli_err);
	inject_usage(cli_err);
	return (CLI_EXIT_USAGE);
}

/* FREQ: a percentage 0.0001..100 (a '%' may follow); parts per million. */
static int
inject_freq(const char *arg, uint32_t *ppm)
{
	char *end;
	errno = 0;
	double f = strtod(arg, &end);
	if (end != arg && *end == '%')
		end++;
	if (end == arg || *end != '\0' || errno != 0 || !isfinite(f) ||
	    f < 0.0001 - 1e-12 || f > 100.0)
		return (cli_cannot("inject", NULL, EINVAL, "invalid frequency: use a percentage "
		    "from 0.0001 to 100"));
	*ppm = (uint32_t)MAX(1.0, MIN((double)VDEV_INJECT_PPM_MAX, f * 10000.0 + 0.5));
	return (0);
}

/* LATENCY_MS[:LANES]: microseconds and lanes. */
static int
inject_delay(const char *arg, uint64_t *us, uint32_t *lanes)
{
	char *end;
	errno = 0;
	double ms = strtod(arg, &end);
	if (end == arg || (*end != '\0' && *end != ':') || errno != 0 || !isfinite(ms) ||
	    ms * 1000.0 < 1.0 || ms * 1000.0 > (double)VDEV_INJECT_LATENCY_MAX_US)
		return (cli_cannot("inject", NULL, EINVAL, "invalid latency: use milliseconds "
		    "from 0.001 to 60000, as LATENCY_MS:LANES"));
	*us = (uint64_t)(ms * 1000.0 + 0.5);
	*lanes = 1;
	if (*end == ':') {
		const char *l = end + 1;
		errno = 0;
		unsigned long long n = strtoull(l, &end, 10);
		if (*l < '0' || *l > '9' || *end != '\0' || errno != 0 || n == 0 ||
		    n > VDEV_INJECT_LANES_MAX)
			return (cli_cannot("inject", NULL, EINVAL, "invalid number of lanes: use "
			    "1 to 1024"));
		*lanes = (uint32_t)n;
	}
	return (0);
}

/* "100%", "0.5%", "0.0001%" */
static void
inject_freq_str(uint32_t ppm, char *buf, size_t len)
{
	(void) snprintf(buf, len, "%g%%", (double)ppm / 10000.0);
}

static int
inject_list(void)
{
	json_object *res;
	int r = cli_call("inject.list", json_object_new_object(), &res);
	if (r != CLI_EXIT_OK) {
		json_object_put(res);
		return (r);
	}
	json_object *a = cli_j_get(res, "injections");
	int n = cli_j_len(a);
	if (n == 0) {
		fprintf(cli_out, "No handlers registered.\n");
		json_object_put(res);
		return (CLI_EXIT_OK);
	}
	cli_table_t *t = cli_table_new();
	const char *hdr[] = { "ID", "POOL", "DEVICE", "TYPE", "IO", "FREQ", "DELAY", "LANES" };
	for (size_t c = 0; c < ARRAY_SIZE(hdr); c++)
		cli_table_column(t, hdr[c], c == 0 || c >= 5 ? CLI_RIGHT : CLI_LEFT, 0);
	for (int i = 0; i < n; i++) {
		json_object *o = cli_j_idx(a, i);
		char id[24], freq[32] = "-", delay[32] = "-", lanes[16] = "-";
		bool is_delay = strcmp(cli_j_str(o, "type"), "delay") == 0;
		(void) snprintf(id, sizeof (id), "%llu", (unsigned long long)cli_j_u64(o, "id"));
		if (is_delay) {
			(void) snprintf(delay, sizeof (delay), "%gms",
			    (double)cli_j_u64(o, "latency_us") / 1000.0);
			(void) snprintf(lanes, sizeof (lanes), "%llu",
			    (unsigned long long)cli_j_u64(o, "lanes"));
		} else {
			inject_freq_str((uint32_t)cli_j_u64(o, "ppm"), freq, sizeof (freq));
		}
		const char *row[] = { id, cli_j_str(o, "pool"), cli_j_str(o, "device"),
			cli_j_str(o, "type"), cli_j_str(o, "rw"), freq, delay, lanes };
		cli_table_row(t, row);
	}
	cli_table_print(t, cli_out, false);
	cli_table_free(t);
	json_object_put(res);
	return (CLI_EXIT_OK);
}

static int
inject_clear(const char *arg)
{
	json_object *args = json_object_new_object(), *res;
	if (strcmp(arg, "all") != 0) {
		char *end;
		errno = 0;
		unsigned long long id = strtoull(arg, &end, 10);
		if (arg[0] < '0' || arg[0] > '9' || *end != '\0' || errno != 0 || id == 0 ||
		    id > INT64_MAX) {
			json_object_put(args);
			return (cli_cannot("clear injection", arg, EINVAL, "invalid handle: use "
			    "an ID from 'tarn inject -l', or 'all'"));
		}
		json_object_object_add(args, "id", json_object_new_int64((int64_t)id));
	}
	int r = cli_call("inject.clear", args, &res);
	json_object_put(res);
	if (r == CLI_EXIT_OK && strcmp(arg, "all") == 0)
		fprintf(cli_out, "removed all registered handlers\n");
	return (r);
}

typedef struct inject_opts {
	const char *io_dev, *io_error, *io_rw, *io_freq, *io_delay, *io_clear;
	bool        io_list;
} inject_opts_t;

static int
inject_add(const inject_opts_t *o, const char *pool)
{
	const char *type = o->io_delay != NULL ? "delay" : o->io_error;
	uint32_t ppm = VDEV_INJECT_PPM_MAX, lanes = 0;
	uint64_t us = 0;

	if (o->io_freq != NULL && inject_freq(o->io_freq, &ppm) != 0)
		return (CLI_EXIT_ERROR);
	if (o->io_delay != NULL && inject_delay(o->io_delay, &us, &lanes) != 0)
		return (CLI_EXIT_ERROR);
	if (strcmp(type, "checksum") == 0 && o->io_rw != NULL && strcmp(o->io_rw, "read") != 0)
		return (cli_cannot("inject", NULL, EINVAL, "checksum errors apply to reads only "
		    "(-T read)"));
	json_object *args = json_object_new_object(), *res;
	json_object_object_add(args, "pool", json_object_new_string(pool));
	json_object_object_add(args, "device", json_object_new_string(o->io_dev));
	json_object_object_add(args, "type", json_object_new_string(type));
	if (o->io_rw != NULL)
		json_object_object_add(args, "rw", json_object_new_string(o->io_rw));
	json_object_object_add(args, "ppm", json_object_new_int64(ppm));
	json_object_object_add(args, "latency_us", json_object_new_int64((int64_t)us));
	json_object_object_add(args, "lanes", json_object_new_int64(lanes));
	int r = cli_call("inject.add", args, &res);
	if (r == CLI_EXIT_OK) {
		fprintf(cli_out, "Added handler %llu with the following properties:\n"
		    "  pool: %s\n  vdev: %s\n", (unsigned long long)cli_j_u64(res, "id"),
		    pool, o->io_dev);
	}
	json_object_put(res);
	return (r);
}

static bool
inject_word(const char *w, const char *const *ok)
{
	for (; *ok != NULL; ok++) {
		if (strcmp(w, *ok) == 0)
			return (true);
	}
	return (false);
}

/* The options' combination; 0 or a usage error (2). */
static int
inject_check(const inject_opts_t *o, int nargs)
{
	static const char *const errors[] = { "io", "checksum", "nxio", NULL };
	static const char *const rws[] = { "read", "write", "all", NULL };
	bool add = o->io_dev != NULL || o->io_error != NULL || o->io_delay != NULL ||
	    o->io_rw != NULL || o->io_freq != NULL;

	if ((o->io_list || o->io_clear != NULL) && (add || nargs > 0 ||
	    (o->io_list && o->io_clear != NULL)))
		return (inject_usage_error("-l and -c take no other options or arguments"));
	if (!add)
		return (nargs > 0 ? inject_usage_error("too many arguments") : 0);
	if (o->io_dev == NULL)
		return (inject_usage_error("missing device (-d)"));
	if (o->io_error == NULL && o->io_delay == NULL)
		return (inject_usage_error("missing error type (-e) or delay (-D)"));
	if (o->io_error != NULL && o->io_delay != NULL)
		return (inject_usage_error("-e and -D cannot be used together"));
	if (o->io_error != NULL && !inject_word(o->io_error, errors))
		return (inject_usage_error("invalid error type '%s'", o->io_error));
	if (o->io_rw != NULL && !inject_word(o->io_rw, rws))
		return (inject_usage_error("invalid I/O type '%s'", o->io_rw));
	if (o->io_delay != NULL && o->io_freq != NULL)
		return (inject_usage_error("-f cannot be used with -D"));
	if (nargs < 1)
		return (inject_usage_error("missing pool name"));
	if (nargs > 1)
		return (inject_usage_error("too many arguments"));
	return (0);
}

int
cli_inject(int argc, char **argv)
{
	inject_opts_t o = { 0 };
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt(argc, argv, ":lc:d:e:T:f:D:h")) != -1) {
		switch (c) {
		case 'l': o.io_list = true; break;
		case 'c': o.io_clear = optarg; break;
		case 'd': o.io_dev = optarg; break;
		case 'e': o.io_error = optarg; break;
		case 'T': o.io_rw = optarg; break;
		case 'f': o.io_freq = optarg; break;
		case 'D': o.io_delay = optarg; break;
		case 'h':
			inject_usage(cli_out);
			return (CLI_EXIT_OK);
		case ':':
			return (inject_usage_error("missing argument for '%c' option", optopt));
		default:
			return (isprint(optopt) ?
			    inject_usage_error("invalid option '%c'", optopt) :
			    inject_usage_error("invalid option"));
		}
	}
	int r = inject_check(&o, argc - optind);
	if (r != 0)
		return (r);
	if (o.io_clear != NULL)
		return (inject_clear(o.io_clear));
	if (o.io_dev == NULL)
		return (inject_list());
	return (inject_add(&o, argv[optind]));
}
