/*
 * pool_iostat.c — `tarn pool iostat [-vyHp] [pool...] [interval [count]]`,
 * zpool iostat's table:
 *
 *	              capacity     operations     bandwidth
 *	pool        alloc   free   read  write   read  write
 *	----------  -----  -----  -----  -----  -----  -----
 *	tank         108K  9.50G      0      5    213  42.0K
 *	  mirror-0   108K  9.50G      0      5    213  42.0K
 *	    /d/a        -      -      0      2    106  21.0K
 *
 * Operations and bandwidth are per second: the first report averages over
 * the time since the pool was opened (imported, or since tarnd started);
 * each later one covers the INTERVAL before it.  -y leaves out the first.
 * Capacity is shown for the pool (spa_get_space) and for each top-level
 * vdev (its metaslab group); leaves have none ("-").  -v adds a row per
 * vdev, -H prints tab-separated rows without headers, -p exact numbers.
 * Counters come from vdev_stat (vs_ops, vs_bytes); the pool row sums the
 * top-level vdevs.
 */
#include "tarn.h"

#include <getopt.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/*
 * When the pool was opened (tarn_now_ns() clock), if the library says so;
 * the reference is weak so that this builds before spa.h offers it.
 */
extern uint64_t spa_open_time(const spa_t *spa) __attribute__((weak));

typedef struct iostat_snap {
	uint64_t    is_guid;
	vdev_stat_t is_vs;
} iostat_snap_t;

typedef struct iostat_pool {
	const char    *ip_name;
	spa_t         *ip_spa;
	iostat_snap_t *ip_snap;       /* counters at the last report */
	int            ip_nsnap;
	uint64_t       ip_snap_ns;    /* when they were taken */
} iostat_pool_t;

typedef struct iostat_opts {
	bool io_verbose, io_skip, io_scripted, io_exact;
	double io_interval;
	unsigned long io_count;
	int io_namewidth;
	int io_colwidth;
} iostat_opts_t;

/* Counters of a vdev; the root's are the sum of its top-level vdevs'. */
static void
iostat_vs(const vdev_t *vd, vdev_stat_t *out)
{
	if (vdev_type(vd) != VDEV_TYPE_ROOT) {
		for (int rw = 0; rw < 2; rw++) {
			out->vs_ops[rw] = __atomic_load_n(&vdev_stat(vd)->vs_ops[rw],
			    __ATOMIC_RELAXED);
			out->vs_bytes[rw] = __atomic_load_n(&vdev_stat(vd)->vs_bytes[rw],
			    __ATOMIC_RELAXED);
		}
		return;
	}
	memset(out, 0, sizeof (*out));
	for (int c = 0; c < vdev_children(vd); c++) {
		vdev_stat_t cs;
		iostat_vs(vdev_child(vd, c), &cs);
		for (int rw = 0; rw < 2; rw++) {
			out->vs_ops[rw] += cs.vs_ops[rw];
			out->vs_bytes[rw] += cs.vs_bytes[rw];
		}
	}
}

static int
iostat_count_vdevs(const vdev_t *vd)
{
	int n = 1;

	for (int c = 0; c < vdev_children(vd); c++)
		n += iostat_count_vdevs(vdev_child(vd, c));
	return (n);
}

static void
iostat_take(const vdev_t *vd, iostat_snap_t *snap, int *i)
{
	snap[*i].is_guid = vdev_guid(vd);
	iostat_vs(vd, &snap[*i].is_vs);
	(*i)++;
	for (int c = 0; c < vdev_children(vd); c++)
		iostat_take(vdev_child(vd, c), snap, i);
}

/* Remember every vdev's counters now (the base of the next report). */
static void
iostat_snapshot(iostat_pool_t *ip, uint64_t now_ns)
{
	spa_vdev_hold(ip->ip_spa);
	vdev_t *root = spa_root_vdev(ip->ip_spa);
	int n = iostat_count_vdevs(root), i = 0;

	tarn_free(ip->ip_snap);
	ip->ip_snap = tarn_alloc(sizeof (iostat_snap_t) * (size_t)n);
	iostat_take(root, ip->ip_snap, &i);
	spa_vdev_rele(ip->ip_spa);
	ip->ip_nsnap = i;
	ip->ip_snap_ns = now_ns;
}

static const vdev_stat_t *
iostat_old(const iostat_pool_t *ip, uint64_t guid)
{
	static const vdev_stat_t zero;

	for (int i = 0; i < ip->ip_nsnap; i++)
		if (ip->ip_snap[i].is_guid == guid)
			return (&ip->ip_snap[i].is_vs);
	return (&zero);
}

static int
iostat_namewidth(const vdev_t *vd, const char *poolname, int depth, bool verbose, int w)
{
	char name[VDEV_PATH_MAX + 32];

	if (vdev_type(vd) == VDEV_TYPE_ROOT)
		(void) snprintf(name, sizeof (name), "%s", poolname);
	else
		cli_vdev_name(vd, true, name, sizeof (name));
	w = MAX(w, depth + (int)strlen(name));
	for (int c = 0; verbose && c < vdev_children(vd); c++)
		w = iostat_namewidth(vdev_child(vd, c), poolname, depth + 2, true, w);
	return (w);
}

static void
iostat_cell(const iostat_opts_t *io, uint64_t v, bool na)
{
	char buf[32];

	if (na)
		(void) snprintf(buf, sizeof (buf), "%s", io->io_exact ? "0" : "-");
	else
		cli_nicenum(v, io->io_exact, buf, sizeof (buf));
	if (io->io_scripted)
		fprintf(cli_out, "\t%s", buf);
	else
		fprintf(cli_out, "  %*s", io->io_colwidth, buf);
}

static void
iostat_row(const iostat_opts_t *io, const iostat_pool_t *ip, const vdev_t *vd,
    int depth, double scale)
{
	char name[VDEV_PATH_MAX + 32];
	vdev_stat_t vs;
	uint64_t alloc = 0, free = 0;

	if (vdev_type(vd) == VDEV_TYPE_ROOT)
		(void) snprintf(name, sizeof (name), "%s", ip->ip_name);
	else
		cli_vdev_name(vd, true, name, sizeof (name));
	if (io->io_scripted)
		fprintf(cli_out, "%s", name);
	else
		fprintf(cli_out, "%*s%-*s", depth, "", MAX(io->io_namewidth - depth, 0), name);
	uint64_t size = 0;
	bool cap = cli_vdev_space(ip->ip_spa, vd, &size, &alloc);
	free = size - MIN(alloc, size);
	iostat_cell(io, alloc, !cap);
	iostat_cell(io, free, !cap);
	iostat_vs(vd, &vs);
	const vdev_stat_t *old = iostat_old(ip, vdev_guid(vd));
	for (int rw = 0; rw < 2; rw++)
		iostat_cell(io, (uint64_t)((double)(vs.vs_ops[rw] - MIN(old->vs_ops[rw],
		    vs.vs_ops[rw])) * scale), false);
	for (int rw = 0; rw < 2; rw++)
		iostat_cell(io, (uint64_t)((double)(vs.vs_bytes[rw] - MIN(old->vs_bytes[rw],
		    vs.vs_bytes[rw])) * scale), false);
	cli_putc('\n');
	for (int c = 0; io->io_verbose && c < vdev_children(vd); c++)
		iostat_row(io, ip, vdev_child(vd, c), depth + 2, scale);
}

static void
iostat_dashes(const iostat_opts_t *io)
{
	for (int i = 0; i < io->io_namewidth; i++)
		cli_putc('-');
	for (int c = 0; c < 6; c++)
		fprintf(cli_out, "  %.*s", io->io_colwidth, "--------------------");
	cli_putc('\n');
}

/* A label centred over two columns, as zpool lays out its top labels. */
static void
iostat_toplabel(const iostat_opts_t *io, const char *label)
{
	int span = io->io_colwidth * 2 + 2, len = (int)strlen(label);
	int start = MAX(span / 2 - len / 2, 0);

	fprintf(cli_out, "  %*s%s%*s", start, "", label, MAX(span - start - len, 0), "");
}

static void
iostat_header(const iostat_opts_t *io)
{
	static const char *const bottom[] = { "alloc", "free", "read", "write", "read",
		"write" };

	fprintf(cli_out, "%*s", io->io_namewidth, "");
	iostat_toplabel(io, "capacity");
	iostat_toplabel(io, "operations");
	iostat_toplabel(io, "bandwidth");
	fprintf(cli_out, "\n%-*s", io->io_namewidth, "pool");
	for (size_t i = 0; i < ARRAY_SIZE(bottom); i++)
		fprintf(cli_out, "  %*s", io->io_colwidth, bottom[i]);
	cli_putc('\n');
	iostat_dashes(io);
}

/*
 * The base of the first report: zero counters when the pool was opened.
 * Without that time (ip_snap_ns 0) the first report shows plain totals.
 */
static void
iostat_first_base(iostat_pool_t *ip, uint64_t now_ns)
{
	ip->ip_nsnap = 0;
	ip->ip_snap_ns = spa_open_time != NULL ? spa_open_time(ip->ip_spa) : 0;
	if (ip->ip_snap_ns > now_ns)
		ip->ip_snap_ns = now_ns;
}

/* The NAME column fits every row of every pool (at least 10). */
static void
iostat_set_namewidth(iostat_opts_t *io, iostat_pool_t *pools, int n)
{
	io->io_namewidth = 0;
	for (int i = 0; i < n; i++) {
		spa_vdev_hold(pools[i].ip_spa);
		io->io_namewidth = iostat_namewidth(spa_root_vdev(pools[i].ip_spa),
		    pools[i].ip_name, 0, io->io_verbose, io->io_namewidth);
		spa_vdev_rele(pools[i].ip_spa);
	}
	io->io_namewidth = MAX(io->io_namewidth, 10);
}

/* One report of every pool; with print false only the counters are taken. */
static void
iostat_report(iostat_opts_t *io, iostat_pool_t *pools, int n, bool print)
{
	uint64_t now = tarn_now_ns();

	for (int i = 0; i < n && print; i++) {
		uint64_t dt = now - pools[i].ip_snap_ns;
		double scale = pools[i].ip_snap_ns != 0 && dt > 0 ? 1e9 / (double)dt : 1.0;
		spa_vdev_hold(pools[i].ip_spa);    /* one pool at a time */
		iostat_row(io, &pools[i], spa_root_vdev(pools[i].ip_spa), 0, scale);
		spa_vdev_rele(pools[i].ip_spa);
		if (io->io_verbose && !io->io_scripted)
			iostat_dashes(io);
	}
	if (print && n > 1 && !io->io_verbose && !io->io_scripted)
		iostat_dashes(io);
	for (int i = 0; i < n; i++)
		iostat_snapshot(&pools[i], now);
}

static bool
iostat_isnumber(const char *s)
{
	char *end;

	if (s[0] == '\0' || !(s[0] == '.' || (s[0] >= '0' && s[0] <= '9')))
		return (false);
	errno = 0;
	double v = strtod(s, &end);
	return (errno == 0 && *end == '\0' && v >= 0);
}

static int
iostat_parse(int argc, char **argv, iostat_opts_t *io, int *npools)
{
	int c;

	while ((c = getopt(argc, argv, ":vyHpn")) != -1) {
		switch (c) {
		case 'v': io->io_verbose = true; break;
		case 'y': io->io_skip = true; break;
		case 'H': io->io_scripted = true; break;
		case 'p': io->io_exact = true; break;
		case 'n': break;   /* headers once: always when not on a terminal */
		default:
			return (cli_bad_option("iostat", c, optopt));
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 0 && iostat_isnumber(argv[argc - 1])) {
		if (argc > 1 && iostat_isnumber(argv[argc - 2])) {
			io->io_interval = strtod(argv[argc - 2], NULL);
			io->io_count = strtoul(argv[argc - 1], NULL, 10);
			if (io->io_count == 0 || strchr(argv[argc - 1], '.') != NULL)
				return (cli_usage_error("iostat", "invalid count '%s': must "
				    "be a positive whole number", argv[argc - 1]));
			argc -= 2;
		} else {
			io->io_interval = strtod(argv[argc - 1], NULL);
			argc--;
		}
		if (io->io_interval <= 0 || io->io_interval > 86400 * 365)
			return (cli_usage_error("iostat", "invalid interval '%s': must "
			    "be a positive number of seconds", argv[argc]));
	}
	*npools = argc;
	io->io_colwidth = io->io_exact ? 15 : 5;
	return (0);
}

/*
 * Sleep secs, in slices of 100 ms so that inside tarnd a client that went
 * away (Ctrl-C) ends the command at once.  False when it did.
 */
static bool
iostat_sleep(double secs)
{
	uint64_t end = tarn_now_ns() + (uint64_t)(secs * 1e9);

	for (;;) {
		if (host_cancelled())
			return (false);
		uint64_t now = tarn_now_ns();
		if (now >= end)
			return (true);
		uint64_t ns = MIN(end - now, 100 * 1000 * 1000ULL);
		struct timespec ts = { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) };
		(void) nanosleep(&ts, NULL);
	}
}

static int
iostat_run(iostat_opts_t *io, iostat_pool_t *pools, int n)
{
	bool tty = isatty(STDOUT_FILENO) && cli_out == stdout;
	int rows = 24;
	unsigned long iter = 0, count = io->io_count;
	struct winsize ws;

	if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0)
		rows = ws.ws_row;
	uint64_t now = tarn_now_ns();
	for (int i = 0; i < n; i++)
		iostat_first_base(&pools[i], now);
	for (;;) {
		bool skip = io->io_skip && iter == 0;
		iter++;
		iostat_set_namewidth(io, pools, n);
		if (!io->io_scripted && ((iter == 1 && !skip) || skip != io->io_verbose ||
		    (tty && iter % (unsigned long)rows == 0)))
			iostat_header(io);
		iostat_report(io, pools, n, !skip);
		(void) fflush(cli_out);
		if (ferror(cli_out))
			return (CLI_EXIT_ERROR);   /* the reader went away */
		if (skip) {
			if (!iostat_sleep(io->io_interval))
				return (CLI_EXIT_ERROR);
			continue;
		}
		if (io->io_interval == 0 || (count != 0 && --count == 0))
			break;
		if (!iostat_sleep(io->io_interval))
			return (CLI_EXIT_ERROR);
	}
	return (CLI_EXIT_OK);
}

int
cli_pool_iostat(int argc, char **argv)
{
	iostat_opts_t io = { 0 };
	iostat_pool_t *pools;
	char **names = NULL, err[1024];
	int npools = 0, nnames = 0, n = 0, error, ret = CLI_EXIT_OK;

	if ((error = iostat_parse(argc, argv, &io, &npools)) != 0)
		return (error);
	argv += optind;
	if (npools == 0) {
		if ((error = host_pool_names(&names, &nnames)) != 0)
			return (cli_cannot("iostat", spa_cachefile_path(), error, NULL));
		if (nnames == 0) {
			host_names_free(names, nnames);
			fprintf(cli_err, "no pools available\n");
			return (CLI_EXIT_ERROR);
		}
	}
	int want = npools > 0 ? npools : nnames;
	pools = tarn_alloc(sizeof (iostat_pool_t) * (size_t)want);
	for (int i = 0; i < want; i++) {
		const char *name = npools > 0 ? argv[i] : names[i];
		spa_t *spa;
		error = host_pool_open(name, SPA_OPEN_READONLY | SPA_OPEN_NOVERIFY, &spa,
		    err, sizeof (err));
		if (error != 0) {
			ret = cli_cannot("open", name, error, err);
			continue;
		}
		if (io.io_interval > 0)
			host_pool_unlock(spa);   /* a long watch must not hold others up */
		pools[n].ip_name = name;
		pools[n++].ip_spa = spa;
	}
	if (n > 0 && iostat_run(&io, pools, n) != 0)
		ret = CLI_EXIT_ERROR;
	for (int i = 0; i < n; i++) {
		tarn_free(pools[i].ip_snap);
		host_pool_close(pools[i].ip_spa);
	}
	tarn_free(pools);
	host_names_free(names, nnames);
	return (ret);
}
