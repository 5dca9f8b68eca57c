/*
 * fs_list.c — `tarn fs list` and `tarn fs get`, in zfs's shapes:
 *   list [-rHp] [-d max] [-o props] [-s prop]... [-S prop]... [-t types]
 *     [fs...]: NAME USED AVAIL REFER MOUNTPOINT, one row per dataset,
 *     children after parents; with -s/-S (ascending/descending, the first
 *     the strongest key) rows are sorted instead: sizes, numbers and
 *     creation by value, other properties as strings, ties in the tree's
 *     order;
 *   get [-rHp] [-d max] [-o fields] [-s sources] all|props [fs...]:
 *     NAME PROPERTY VALUE SOURCE, one row per dataset and property.
 * -H: no header, tab-separated; -p: exact numbers (and seconds).
 * User properties ("module:name") go wherever a property does: in -o and
 * -s of list (the column headed by the name in capitals), in get's list,
 * and `get all` adds those in effect on each dataset after the native ones.
 */
#include "tarn.h"
#include "dsl.h"

#include <ctype.h>
#include <strings.h>

#define FS_MAXCOLS 64
#define FS_USER    1000     /* fw_props / fw_sort: FS_USER + k is fw_user[k] */

/* What both verbs share: which datasets, and how deep. */
typedef struct fs_walk {
	int   fw_depth;         /* -1: all; 0: only the named ones */
	bool  fw_types_fs;      /* -t includes filesystems */
	bool  fw_scripted, fw_exact;
	int   fw_props[FS_MAXCOLS];   /* -1: name; FS_USER + k: fw_user[k] */
	int   fw_nprops;
	char *fw_user[2 * FS_MAXCOLS];  /* user property names of -o, -s, get */
	int   fw_nuser;
	bool  fw_all;                 /* get all: also the user properties */
	/* get only */
	int   fw_fields[CLI_GET_NFIELDS]; /* CLI_GET_NAME ... */
	int   fw_nfields;
	int   fw_sources;             /* bit per dsl_source_t; 0 = all */
	cli_table_t *fw_table;
	host_fs_t *fw_fs;
	int   fw_rows;
	bool  fw_get;
	int   fw_read_err;            /* some dataset's metadata could not be read */
	/* list -s / -S: sort keys, and the rows held until all are in */
	int   fw_sort[FS_MAXCOLS];    /* property, -1: name, FS_USER + k */
	bool  fw_sort_desc[FS_MAXCOLS];
	int   fw_nsort;
	struct fs_sorted *fw_held;
	int   fw_nheld, fw_cheld;
} fs_walk_t;

/* A row of list held for sorting: its cells and its sort keys. */
typedef struct fs_sorted {
	char    **fs_cells;
	uint64_t *fs_num;         /* per key: the number (numeric properties) */
	char    **fs_str;         /* per key: the string (the others) */
	int       fs_seq;         /* place in the tree's order */
	const fs_walk_t *fs_walk;
} fs_sorted_t;

/* A user property name of -o, -s or get: its FS_USER code, or -1 (usage error printed). */
static int
fs_user_prop(const char *verb, fs_walk_t *w, const char *name)
{
	char err[512];
	if (dsl_prop_user_check(name, NULL, err, sizeof (err)) != 0) {
		(void) cli_fs_usage_error(verb, "bad property list: %s", err);
		return (-1);
	}
	for (int k = 0; k < w->fw_nuser; k++)
		if (strcmp(w->fw_user[k], name) == 0)
			return (FS_USER + k);
	if (w->fw_nuser >= (int)ARRAY_SIZE(w->fw_user)) {
		(void) cli_fs_usage_error(verb, "bad property list: too many properties");
		return (-1);
	}
	w->fw_user[w->fw_nuser] = tarn_strdup(name);
	return (FS_USER + w->fw_nuser++);
}

static void
fs_walk_fini(fs_walk_t *w)
{
	for (int k = 0; k < w->fw_nuser; k++)
		tarn_free(w->fw_user[k]);
	w->fw_nuser = 0;
}

/* The value (and source) of property p of name: native or user. */
static int
fs_prop_get(fs_walk_t *w, const char *name, int p, bool exact, dsl_prop_val_t *v)
{
	if (p >= FS_USER)
		return (dsl_prop_user_get(w->fw_fs->hf_dp, name, w->fw_user[p - FS_USER], v,
		    NULL, 0));
	int e = dsl_prop_get(w->fw_fs->hf_dp, name, p, exact, v, NULL, 0);
	if (e == 0)
		(void) host_mount_temp(name, p, v);
	return (e);
}

static int
fs_parse_types(const char *verb, fs_walk_t *w, const char *arg)
{
	char *copy = tarn_strdup(arg), *save = NULL;
	int r = 0;
	w->fw_types_fs = false;
	for (char *t = strtok_r(copy, ",", &save); t != NULL && r == 0;
	    t = strtok_r(NULL, ",", &save)) {
		if (strcmp(t, "filesystem") == 0 || strcmp(t, "fs") == 0 || strcmp(t, "all") == 0)
			w->fw_types_fs = true;
		else if (strcmp(t, "snapshot") != 0 && strcmp(t, "snap") != 0 &&
		    strcmp(t, "volume") != 0 && strcmp(t, "vol") != 0 &&
		    strcmp(t, "bookmark") != 0)
			r = cli_fs_usage_error(verb, "invalid type '%s'", t);
	}
	tarn_free(copy);
	return (r);
}

static int
fs_parse_depth(const char *verb, fs_walk_t *w, const char *arg)
{
	char *end;
	long d = strtol(arg, &end, 10);
	if (end == arg || *end != '\0' || d < 0 || d > 1000000)
		return (cli_fs_usage_error(verb, "invalid depth '%s'", arg));
	w->fw_depth = (int)d;
	return (0);
}

/* -o of list, or the property list of get ("all" allowed there). */
static int
fs_parse_props(const char *verb, fs_walk_t *w, const char *arg, bool allow_name)
{
	char *copy = tarn_strdup(arg), *save = NULL;
	int r = 0;
	w->fw_nprops = 0;
	for (char *t = strtok_r(copy, ",", &save); t != NULL && r == 0;
	    t = strtok_r(NULL, ",", &save)) {
		int p;
		if (allow_name && strcmp(t, "space") == 0) {
			/* zfs list -o space: where each dataset's space goes */
			static const int space[] = { -1, DSL_PROP_AVAILABLE, DSL_PROP_USED,
				DSL_PROP_USEDSNAP, DSL_PROP_USEDDS, DSL_PROP_USEDREFRESERV,
				DSL_PROP_USEDCHILD };
			for (size_t i = 0; i < ARRAY_SIZE(space) && w->fw_nprops < FS_MAXCOLS; i++)
				w->fw_props[w->fw_nprops++] = space[i];
			continue;
		}
		if (!allow_name && strcmp(t, "all") == 0) {
			for (p = 0; p < DSL_NUM_PROPS && w->fw_nprops < FS_MAXCOLS; p++)
				w->fw_props[w->fw_nprops++] = p;
			w->fw_all = true;
			continue;
		}
		if (strcasecmp(t, "name") == 0)
			p = -1;         /* list's NAME column, get's name row */
		else if (dsl_prop_lookup(t) < 0 && dsl_prop_user_name(t)) {
			if ((p = fs_user_prop(verb, w, t)) < 0) {
				r = CLI_EXIT_USAGE;
				break;
			}
		} else if ((p = dsl_prop_lookup(t)) < 0) {
			for (int q = 0; q < DSL_NUM_PROPS && allow_name; q++)
				if (strcasecmp(t, dsl_prop_column(q)) == 0)
					p = q;
			if (p < 0) {
				r = cli_fs_usage_error(verb, "bad property list: invalid "
				    "property '%s'", t);
				break;
			}
		}
		if (w->fw_nprops >= FS_MAXCOLS) {
			r = cli_fs_usage_error(verb, "bad property list: too many properties");
			break;
		}
		w->fw_props[w->fw_nprops++] = p;
	}
	if (r == 0 && w->fw_nprops == 0)
		r = cli_fs_usage_error(verb, "bad property list: empty");
	tarn_free(copy);
	return (r);
}

/* -s / -S of list: one sort key (a property, its column header, or name). */
static int
fs_parse_sort(fs_walk_t *w, const char *arg, bool desc)
{
	int p = strcasecmp(arg, "name") == 0 ? -1 : dsl_prop_lookup(arg);
	if (p < 0 && strcasecmp(arg, "name") != 0 && dsl_prop_user_name(arg)) {
		if ((p = fs_user_prop("list", w, arg)) < 0)
			return (CLI_EXIT_USAGE);
	} else if (p < 0 && strcasecmp(arg, "name") != 0) {
		p = -2;
		for (int q = 0; q < DSL_NUM_PROPS; q++)
			if (strcasecmp(arg, dsl_prop_column(q)) == 0)
				p = q;
	}
	if (p < -1)
		return (cli_fs_usage_error("list", "invalid property '%s'", arg));
	if (w->fw_nsort >= FS_MAXCOLS)
		return (cli_fs_usage_error("list", "too many sort properties"));
	w->fw_sort[w->fw_nsort] = p;
	w->fw_sort_desc[w->fw_nsort++] = desc;
	return (0);
}

static int
fs_sorted_cmp(const void *a, const void *b)
{
	const fs_sorted_t *x = a, *y = b;
	const fs_walk_t *w = x->fs_walk;
	for (int k = 0; k < w->fw_nsort; k++) {
		int c;
		if (x->fs_str[k] != NULL)
			c = strcmp(x->fs_str[k], y->fs_str[k]);
		else
			c = x->fs_num[k] < y->fs_num[k] ? -1 : x->fs_num[k] > y->fs_num[k];
		if (c != 0)
			return (w->fw_sort_desc[k] ? -c : c);
	}
	return (x->fs_seq - y->fs_seq);
}

/* Hold a row of list and its sort keys (sorted and printed at the end). */
static void
fs_hold_row(fs_walk_t *w, const char *name, const char *const *cells, int ncell,
    dsl_prop_val_t *v)
{
	if (w->fw_nheld == w->fw_cheld) {
		w->fw_cheld = MAX(64, w->fw_cheld * 2);
		w->fw_held = tarn_realloc(w->fw_held, sizeof (*w->fw_held) * w->fw_cheld);
	}
	fs_sorted_t *r = &w->fw_held[w->fw_nheld];
	r->fs_seq = w->fw_nheld++;
	r->fs_walk = w;
	r->fs_cells = tarn_alloc(sizeof (char *) * (size_t)ncell);
	for (int i = 0; i < ncell; i++)
		r->fs_cells[i] = tarn_strdup(cells[i]);
	r->fs_num = tarn_alloc(sizeof (uint64_t) * (size_t)w->fw_nsort);
	r->fs_str = tarn_alloc(sizeof (char *) * (size_t)w->fw_nsort);
	for (int k = 0; k < w->fw_nsort; k++) {
		int p = w->fw_sort[k];
		if (p < 0) {
			r->fs_str[k] = tarn_strdup(name);
			continue;
		}
		int e = fs_prop_get(w, name, p, true, v);
		if (p >= FS_USER)
			r->fs_str[k] = tarn_strdup(e == 0 ? v->dpv_str : "-");
		else if (dsl_prop_is_numeric(p))
			r->fs_num[k] = e == 0 ? v->dpv_num : 0;
		else if (p == DSL_PROP_CREATION)        /* -p: seconds */
			r->fs_num[k] = e == 0 ? strtoull(v->dpv_str, NULL, 10) : 0;
		else
			r->fs_str[k] = tarn_strdup(e == 0 ? v->dpv_str : "-");
	}
}

/* Sort the held rows into the table and free them. */
static void
fs_flush_held(fs_walk_t *w)
{
	qsort(w->fw_held, (size_t)w->fw_nheld, sizeof (*w->fw_held), fs_sorted_cmp);
	for (int i = 0; i < w->fw_nheld; i++) {
		fs_sorted_t *r = &w->fw_held[i];
		cli_table_row(w->fw_table, (const char *const *)r->fs_cells);
		for (int c = 0; c < w->fw_nprops; c++)
			tarn_free(r->fs_cells[c]);
		for (int k = 0; k < w->fw_nsort; k++)
			tarn_free(r->fs_str[k]);
		tarn_free(r->fs_cells);
		tarn_free(r->fs_num);
		tarn_free(r->fs_str);
	}
	tarn_free(w->fw_held);
	w->fw_held = NULL;
	w->fw_nheld = w->fw_cheld = 0;
}

static void
fs_source_str(const dsl_prop_val_t *v, char *buf, size_t len)
{
	switch (v->dpv_source) {
	case DSL_SRC_NONE: (void) snprintf(buf, len, "-"); break;
	case DSL_SRC_DEFAULT: (void) snprintf(buf, len, "default"); break;
	case DSL_SRC_LOCAL: (void) snprintf(buf, len, "local"); break;
	case DSL_SRC_INHERITED:
		(void) snprintf(buf, len, "inherited from %s", v->dpv_setpoint);
		break;
	case DSL_SRC_TEMPORARY: (void) snprintf(buf, len, "temporary"); break;
	}
}

/* A row of get (unless -s leaves its source out). */
static void
fs_get_row(fs_walk_t *w, const char *name, const char *prop, const dsl_prop_val_t *v)
{
	char src[DSL_NAME_MAX + 32];
	if (w->fw_sources != 0 && !(w->fw_sources & (1 << v->dpv_source)))
		return;
	fs_source_str(v, src, sizeof (src));
	const char *fields[4] = { name, prop, v->dpv_str, src };
	const char *row[5];
	for (int f = 0; f < w->fw_nfields; f++)
		row[f] = fields[w->fw_fields[f]];
	cli_table_row(w->fw_table, row);
	w->fw_rows++;
}

/* get all: a row for each user property in effect on a dataset. */
typedef struct fs_user_all {
	fs_walk_t *ua_w;
	const char *ua_name;
	dsl_prop_val_t *ua_v;
} fs_user_all_t;

static void
fs_user_all_one(void *arg, const char *prop)
{
	fs_user_all_t *ua = arg;
	if (dsl_prop_user_get(ua->ua_w->fw_fs->hf_dp, ua->ua_name, prop, ua->ua_v, NULL, 0) == 0)
		fs_get_row(ua->ua_w, ua->ua_name, prop, ua->ua_v);
}

/*
 * A property of name could not be read (EIO, ECKSUM: damaged metadata,
 * now in the pool's error log): say so, once per dataset; the command
 * exits 1, as zfs does, instead of showing '-' as if it did not apply.
 */
static bool
fs_read_failed(fs_walk_t *w, const char *name, int e)
{
	if (e != EIO && e != ECKSUM)
		return (false);
	char msg[DSL_NAME_MAX + 128];
	(void) snprintf(msg, sizeof (msg), "%s (damaged metadata: see '%s status -v %.*s')",
	    tarn_strerror(e), strcmp(cli_fs_prog, "zfs") == 0 ? "zpool" : "tarn pool",
	    (int)strcspn(name, "/@"), name);
	(void) cli_cannot("read", name, e, msg);
	w->fw_read_err = e;
	return (true);
}

/* One dataset: a row of list, or rows of get. */
static int
fs_row(void *arg, const char *name, int depth)
{
	fs_walk_t *w = arg;
	if (!w->fw_types_fs)
		return (0);
	dsl_prop_val_t *v = tarn_alloc(sizeof (*v));
	const char *cells[FS_MAXCOLS];
	char *bufs[FS_MAXCOLS];
	int ncell = 0;
	bool unreadable = false;
	for (int i = 0; i < w->fw_nprops; i++) {
		int p = w->fw_props[i];
		if (p < 0 && w->fw_get) {
			(void) snprintf(v->dpv_str, sizeof (v->dpv_str), "%s", name);
			v->dpv_source = DSL_SRC_NONE;
			fs_get_row(w, name, "name", v);
			continue;
		}
		if (p < 0) {
			cells[ncell++] = name;
			continue;
		}
		int e = fs_prop_get(w, name, p, w->fw_exact, v);
		if (e != 0 && !unreadable)
			unreadable = fs_read_failed(w, name, e);
		if (e != 0) {
			(void) snprintf(v->dpv_str, sizeof (v->dpv_str), "-");
			v->dpv_source = DSL_SRC_NONE;
		}
		if (!w->fw_get) {
			bufs[ncell] = tarn_strdup(v->dpv_str);
			cells[ncell] = bufs[ncell];
			ncell++;
			continue;
		}
		fs_get_row(w, name, p >= FS_USER ? w->fw_user[p - FS_USER] : dsl_prop_name(p), v);
	}
	if (w->fw_get && w->fw_all) {
		fs_user_all_t ua = { w, name, v };
		(void) dsl_prop_user_iter(w->fw_fs->hf_dp, name, fs_user_all_one, &ua);
	}
	/* list: no row of '-' that would read as "does not apply" */
	if (!w->fw_get && !unreadable) {
		if (w->fw_nsort > 0)
			fs_hold_row(w, name, cells, ncell, v);
		else
			cli_table_row(w->fw_table, cells);
		w->fw_rows++;
	}
	if (!w->fw_get) {
		for (int i = 0; i < ncell; i++)
			if (w->fw_props[i] >= 0)
				tarn_free(bufs[i]);
	}
	tarn_free(v);
	return (0);
}

/* Walk the named datasets, or every pool's datasets when none are named. */
static int
fs_walk(fs_walk_t *w, int argc, char **argv)
{
	char **names = NULL;
	int n = argc, r = 0;
	bool all = argc == 0;
	if (all) {
		int e = host_pool_names(&names, &n);
		if (e != 0) {
			fprintf(cli_err, "cannot read the cache file %s: %s\n",
			    spa_cachefile_path(), tarn_strerror(e));
			return (CLI_EXIT_ERROR);
		}
		argv = names;
	}
	for (int i = 0; i < n; i++) {
		host_fs_t fs;
		int rr = host_fs_open_existing(argv[i], true, &fs);
		if (rr != 0) {
			r = rr;
			continue;
		}
		w->fw_fs = &fs;
		(void) dsl_dataset_iter(fs.hf_dp, argv[i], all ? -1 : w->fw_depth, fs_row, w);
		host_fs_close(&fs);
	}
	if (all)
		host_names_free(names, n);
	if (w->fw_nsort > 0)
		fs_flush_held(w);
	if (w->fw_rows > 0 || w->fw_get)        /* zfs list: no header for no rows */
		cli_table_print(w->fw_table, cli_out, w->fw_scripted);
	if (all && w->fw_rows == 0 && r == 0 && !w->fw_get && w->fw_read_err == 0)
		fprintf(cli_err, "no datasets available\n");
	return (r != 0 ? r : w->fw_read_err != 0 ? CLI_EXIT_ERROR : 0);
}

int
cli_fs_list(int argc, char **argv)
{
	fs_walk_t w;
	memset(&w, 0, sizeof (w));
	w.fw_types_fs = true;
	int c, r = fs_parse_props("list", &w, "name,used,available,referenced,mountpoint", true);
	while (r == 0 && (c = getopt(argc, argv, ":rHpd:o:s:S:t:")) != -1) {
		switch (c) {
		case 'r': w.fw_depth = -1; break;
		case 'H': w.fw_scripted = true; break;
		case 'p': w.fw_exact = true; break;
		case 'd': r = fs_parse_depth("list", &w, optarg); break;
		case 'o': r = fs_parse_props("list", &w, optarg, true); break;
		case 's': r = fs_parse_sort(&w, optarg, false); break;
		case 'S': r = fs_parse_sort(&w, optarg, true); break;
		case 't': r = fs_parse_types("list", &w, optarg); break;
		default: r = cli_fs_bad_option("list", c, optopt); break;
		}
	}
	if (r != 0) {
		fs_walk_fini(&w);
		return (r);
	}
	argc -= optind;
	argv += optind;
	w.fw_table = cli_table_new();
	for (int i = 0; i < w.fw_nprops; i++) {
		int p = w.fw_props[i];
		char head[ZAP_MAXNAMELEN];
		if (p >= FS_USER) {     /* a user property: its name in capitals */
			const char *u = w.fw_user[p - FS_USER];
			size_t j;
			for (j = 0; u[j] != '\0' && j + 1 < sizeof (head); j++)
				head[j] = (char)toupper((unsigned char)u[j]);
			head[j] = '\0';
		}
		cli_table_column(w.fw_table, p < 0 ? "NAME" : p >= FS_USER ? head :
		    dsl_prop_column(p), p >= 0 && p < FS_USER && dsl_prop_is_numeric(p) ?
		    CLI_RIGHT : CLI_LEFT, 0);
	}
	r = fs_walk(&w, argc, argv);
	cli_table_free(w.fw_table);
	fs_walk_fini(&w);
	return (r);
}

static int
fs_parse_sources(fs_walk_t *w, const char *arg)
{
	char *copy = tarn_strdup(arg), *save = NULL;
	int r = 0;
	w->fw_sources = 0;
	for (char *t = strtok_r(copy, ",", &save); t != NULL && r == 0;
	    t = strtok_r(NULL, ",", &save)) {
		if (strcmp(t, "local") == 0)
			w->fw_sources |= 1 << DSL_SRC_LOCAL;
		else if (strcmp(t, "default") == 0)
			w->fw_sources |= 1 << DSL_SRC_DEFAULT;
		else if (strcmp(t, "inherited") == 0)
			w->fw_sources |= 1 << DSL_SRC_INHERITED;
		else if (strcmp(t, "none") == 0)
			w->fw_sources |= 1 << DSL_SRC_NONE;
		else if (strcmp(t, "temporary") == 0)
			w->fw_sources |= 1 << DSL_SRC_TEMPORARY;
		else if (strcmp(t, "received") != 0)
			r = cli_fs_usage_error("get", "invalid source '%s'", t);
	}
	tarn_free(copy);
	if (r == 0 && w->fw_sources == 0)
		w->fw_sources = 1 << 30;    /* only sources that never occur */
	return (r);
}

int
cli_fs_get(int argc, char **argv)
{
	fs_walk_t w;
	memset(&w, 0, sizeof (w));
	w.fw_types_fs = true;
	w.fw_get = true;
	int c, r = cli_get_fields("all", w.fw_fields, &w.fw_nfields, cli_fs_usage_error);
	while (r == 0 && (c = getopt(argc, argv, ":rHpd:o:s:t:")) != -1) {
		switch (c) {
		case 'r': w.fw_depth = -1; break;
		case 'H': w.fw_scripted = true; break;
		case 'p': w.fw_exact = true; break;
		case 'd': r = fs_parse_depth("get", &w, optarg); break;
		case 'o': r = cli_get_fields(optarg, w.fw_fields, &w.fw_nfields,
		    cli_fs_usage_error); break;
		case 's': r = fs_parse_sources(&w, optarg); break;
		case 't': r = fs_parse_types("get", &w, optarg); break;
		default: return (cli_fs_bad_option("get", c, optopt));
		}
	}
	if (r != 0)
		return (r);
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return (cli_fs_usage_error("get", "missing property argument"));
	if ((r = fs_parse_props("get", &w, argv[0], false)) != 0) {
		fs_walk_fini(&w);
		return (r);
	}
	static const char *heads[4] = { "NAME", "PROPERTY", "VALUE", "SOURCE" };
	w.fw_table = cli_table_new();
	for (int f = 0; f < w.fw_nfields; f++)
		cli_table_column(w.fw_table, heads[w.fw_fields[f]], CLI_LEFT, 0);
	r = fs_walk(&w, argc - 1, argv + 1);
	cli_table_free(w.fw_table);
	fs_walk_fini(&w);
	return (r);
}
