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
 * top-level vdevs.  The host keeps the pools open and sends one part per
 * round with the rates (operation pool.iostat, host/host_op_iostat.c);
 * this file parses argv and prints the rounds.
 */
#include "tarn.h"

#include <getopt.h>
#include <sys/ioctl.h>
#include <unistd.h>

typedef struct iostat_opts {
	bool io_verbose, io_skip, io_scripted, io_exact;
	double io_interval;
	unsigned long io_count;
	int io_namewidth;
	int io_colwidth;
	unsigned long io_iter;  /* rounds printed or skipped */
	int io_rows;            /* a header every io_rows rounds on a terminal (0: never) */
} iostat_opts_t;

static uint64_t
iostat_u64(json_object *o, const char *key)
{
	return (json_object_get_uint64(json_object_object_get(o, key)));
}

/* A vdev's name as zpool shows it: "mirror-0", "raidz2-1", the path or GUID. */
static void
iostat_vdev_name(json_object *vd, char *buf, size_t len)
{
	const char *type = json_object_get_string(json_object_object_get(vd, "type"));
	const char *path = json_object_get_string(json_object_object_get(vd, "path"));
	uint64_t id = iostat_u64(vd, "id");

	if (type == NULL || strcmp(type, "leaf") == 0) {
		if (path != NULL)
			(void) snprintf(buf, len, "%s", path);
		else
			(void) snprintf(buf, len, "%" PRIu64, iostat_u64(vd, "guid"));
	} else if (strcmp(type, "root") == 0) {
		(void) snprintf(buf, len, "%s",
		    json_object_get_string(json_object_object_get(vd, "name")));
	} else if (strcmp(type, "raidz") == 0) {
		(void) snprintf(buf, len, "raidz%d-%" PRIu64,
		    json_object_get_int(json_object_object_get(vd, "nparity")), id);
	} else {
		(void) snprintf(buf, len, "%s-%" PRIu64, type, id);
	}
}

static json_object *
iostat_children(json_object *vd)
{
	json_object *kids = json_object_object_get(vd, "children");

	return (json_object_is_type(kids, json_type_array) ? kids : NULL);
}

static int
iostat_namewidth(json_object *vd, int depth, bool verbose, int w)
{
	char name[VDEV_PATH_MAX + 32];
	json_object *kids = iostat_children(vd);

	iostat_vdev_name(vd, name, sizeof (name));
	w = MAX(w, depth + (int)strlen(name));
	for (size_t c = 0; verbose && kids != NULL && c < json_object_array_length(kids); c++)
		w = iostat_namewidth(json_object_array_get_idx(kids, c), depth + 2, true, w);
	json_object *cache = json_object_object_get(vd, "cache");
	for (size_t c = 0; verbose && cache != NULL && c < json_object_array_length(cache); c++)
		w = iostat_namewidth(json_object_array_get_idx(cache, c), 2, true, w);
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
iostat_row(const iostat_opts_t *io, json_object *vd, int depth)
{
	char name[VDEV_PATH_MAX + 32];
	json_object *kids = iostat_children(vd), *v;
	bool cap = json_object_object_get_ex(vd, "size", &v);
	uint64_t size = iostat_u64(vd, "size"), alloc = iostat_u64(vd, "alloc");

	iostat_vdev_name(vd, name, sizeof (name));
	if (io->io_scripted)
		fprintf(cli_out, "%s", name);
	else
		fprintf(cli_out, "%*s%-*s", depth, "", MAX(io->io_namewidth - depth, 0), name);
	iostat_cell(io, cap ? alloc : 0, !cap);
	iostat_cell(io, cap ? size - MIN(alloc, size) : 0, !cap);
	for (int k = 0; k < 2; k++) {
		json_object *pair = json_object_object_get(vd, k == 0 ? "ops" : "bytes");
		for (size_t rw = 0; rw < 2; rw++)
			iostat_cell(io, json_object_get_uint64(json_object_array_get_idx(pair,
			    rw)), false);
	}
	cli_putc('\n');
	for (size_t c = 0; io->io_verbose && kids != NULL && c < json_object_array_length(kids);
	    c++) {
		json_object *k = json_object_array_get_idx(kids, c);
		if (depth == 0 && json_object_object_get(k, "class") != NULL)
			continue;       /* in its class's section (iostat_classes) */
		iostat_row(io, k, depth + 2);
	}
}

/* A section's header row, as zpool prints it: its name and dashes. */
static void
iostat_section(const iostat_opts_t *io, const char *name)
{
	if (io->io_scripted)
		fprintf(cli_out, "%s", name);
	else
		fprintf(cli_out, "%-*s", io->io_namewidth, name);
	for (int c = 0; c < 6; c++)
		iostat_cell(io, 0, true);
	cli_putc('\n');
}

/* -v: the special and log vdevs, then the cache devices, each under its header. */
static void
iostat_classes(const iostat_opts_t *io, json_object *root)
{
	static const char *const cls[][2] = { { "special", "special" }, { "log", "logs" } };
	json_object *kids = iostat_children(root), *cache;
	for (size_t k = 0; k < ARRAY_SIZE(cls); k++) {
		bool header = false;
		for (size_t c = 0; kids != NULL && c < json_object_array_length(kids); c++) {
			json_object *v = json_object_array_get_idx(kids, c);
			const char *class = json_object_get_string(json_object_object_get(v,
			    "class"));
			if (class == NULL || strcmp(class, cls[k][0]) != 0)
				continue;
			if (!header)
				iostat_section(io, cls[k][1]);
			header = true;
			iostat_row(io, v, 2);
		}
	}
	cache = json_object_object_get(root, "cache");
	if (cache == NULL || json_object_array_length(cache) == 0)
		return;
	iostat_section(io, "cache");
	for (size_t c = 0; c < json_object_array_length(cache); c++)
		iostat_row(io, json_object_array_get_idx(cache, c), 2);
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

/* The NAME column fits every row of every pool (at least 10). */
static void
iostat_set_namewidth(iostat_opts_t *io, json_object *pools)
{
	io->io_namewidth = 0;
	for (size_t i = 0; i < json_object_array_length(pools); i++)
		io->io_namewidth = iostat_namewidth(json_object_array_get_idx(pools, i), 0,
		    io->io_verbose, io->io_namewidth);
	io->io_namewidth = MAX(io->io_namewidth, 10);
}

/*
 * One round the host sent: the failures it reported before it (tarnd
 * sends them with the first round), the header when one is due, and the
 * rows unless it is the base round of -y.  Nonzero when the output is
 * gone (the reader went away), which ends the rounds.
 */
static int
iostat_part(void *arg, json_object *part)
{
	iostat_opts_t *io = arg;
	json_object *pools = json_object_object_get(part, "pools"), *reps;
	bool skip = json_object_get_boolean(json_object_object_get(part, "skip"));
	size_t n = json_object_is_type(pools, json_type_array) ?
	    json_object_array_length(pools) : 0;

	if (json_object_object_get_ex(part, "reports", &reps)) {
		for (size_t i = 0; i < json_object_array_length(reps); i++) {
			json_object *r = json_object_array_get_idx(reps, i);
			(void) cli_cannot(json_object_get_string(json_object_array_get_idx(r, 0)),
			    json_object_get_string(json_object_array_get_idx(r, 1)),
			    json_object_get_int(json_object_array_get_idx(r, 2)),
			    json_object_get_string(json_object_array_get_idx(r, 3)));
		}
		fflush(cli_err);
	}
	io->io_iter++;
	if (n > 0)
		iostat_set_namewidth(io, pools);
	if (!io->io_scripted && ((io->io_iter == 1 && !skip) || skip != io->io_verbose ||
	    (io->io_rows > 0 && io->io_iter % (unsigned long)io->io_rows == 0)))
		iostat_header(io);
	for (size_t i = 0; i < n && !skip; i++) {
		iostat_row(io, json_object_array_get_idx(pools, i), 0);
		if (io->io_verbose)
			iostat_classes(io, json_object_array_get_idx(pools, i));
		if (io->io_verbose && !io->io_scripted)
			iostat_dashes(io);
	}
	if (!skip && n > 1 && !io->io_verbose && !io->io_scripted)
		iostat_dashes(io);
	(void) fflush(cli_out);
	return (ferror(cli_out) ? EPIPE : 0);
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

int
cli_pool_iostat(int argc, char **argv)
{
	iostat_opts_t io = { 0 };
	json_object *args, *res;
	struct winsize ws;
	int npools = 0, error;

	if ((error = iostat_parse(argc, argv, &io, &npools)) != 0)
		return (error);
	argv += optind;
	if (isatty(STDOUT_FILENO))
		io.io_rows = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 ?
		    ws.ws_row : 24;
	args = json_object_new_object();
	if (npools > 0) {
		json_object *names = json_object_new_array_ext(npools);
		for (int i = 0; i < npools; i++)
			json_object_array_add(names, json_object_new_string(argv[i]));
		json_object_object_add(args, "names", names);
	}
	json_object_object_add(args, "interval", json_object_new_double(io.io_interval));
	json_object_object_add(args, "count", json_object_new_uint64(io.io_count));
	json_object_object_add(args, "skip", json_object_new_boolean(io.io_skip));
	int r = cli_call_parts("pool.iostat", args, iostat_part, &io, &res);
	json_object_put(res);
	return (r);
}
