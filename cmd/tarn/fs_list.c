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
 *
 * Here: the options (property names checked with lib/dsl's tables, so a
 * usage error comes before anything is opened), the sorting and the
 * table.  The values and their sources come from the host in one call
 * for the whole command (fs.props, host/host_op_fs_props.c).
 */
#include "tarn.h"
#include "tarn_array.h"
#include "dsl.h"

#include <ctype.h>
#include <strings.h>

#define FS_MAXCOLS 64
#define FS_USER    1000     /* fw_props / fw_sort: FS_USER + k is fw_user[k] */

/* What both verbs share: which datasets, how deep, which properties. */
typedef struct fs_walk {
	int   fw_depth;         /* -1: all; 0: only the named ones */
	bool  fw_types_fs;      /* -t includes filesystems */
	bool  fw_types_snap, fw_types_bm;     /* ... snapshots, bookmarks */
	bool  fw_depth_set;     /* -r or -d given */
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
	int   fw_rows;
	bool  fw_get;
	/* list -s / -S: sort keys, and the rows held until all are in */
	int   fw_sort[FS_MAXCOLS];    /* property, -1: name, FS_USER + k */
	bool  fw_sort_desc[FS_MAXCOLS];
	int   fw_nsort;
	tarn_array_t fw_held;   /* struct fs_sorted: rows held for sorting */
} fs_walk_t;

/* A row of list held for sorting: its cells and its sort keys. */
typedef struct fs_sorted {
	char    **fs_cells;
	char     *fs_name;
	json_object *fs_keys;     /* the dataset's "sort" (its values for the non-name keys) */
	int       fs_seq;         /* place in the tree's order */
	const fs_walk_t *fs_walk;
} fs_sorted_t;

/* A user property name of -o, -s or get: its FS_USER code, or -1 (usage error printed). */
static int
fs_user_prop(const char *verb, fs_walk_t *w, const char *name)
{
	char err[512];
	if (strncmp(name, "written@", 8) == 0 && name[8] != '\0') {
		if (strchr(name + 8, '#') != NULL) {
			(void) cli_fs_usage_error(verb, "bad property list: invalid property "
			    "'%s'", name);
			return (-1);
		}
	} else if (dsl_prop_user_check(name, NULL, err, sizeof (err)) != 0) {
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

static int
fs_parse_types(const char *verb, fs_walk_t *w, const char *arg)
{
	char *copy = tarn_strdup(arg), *save = NULL;
	int r = 0;
	w->fw_types_fs = w->fw_types_snap = w->fw_types_bm = false;
	for (char *t = strtok_r(copy, ",", &save); t != NULL && r == 0;
	    t = strtok_r(NULL, ",", &save)) {
		bool all = strcmp(t, "all") == 0;
		if (all || strcmp(t, "filesystem") == 0 || strcmp(t, "fs") == 0)
			w->fw_types_fs = true;
		if (all || strcmp(t, "snapshot") == 0 || strcmp(t, "snap") == 0)
			w->fw_types_snap = true;
		if (all || strcmp(t, "bookmark") == 0)
			w->fw_types_bm = true;
		if (!all && strcmp(t, "filesystem") != 0 && strcmp(t, "fs") != 0 &&
		    strcmp(t, "snapshot") != 0 && strcmp(t, "snap") != 0 &&
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
	w->fw_depth_set = true;
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
		else if (dsl_prop_lookup(t) < 0 && (dsl_prop_user_name(t) ||
		    strncmp(t, "written@", 8) == 0)) {
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
	if (p < 0 && strcasecmp(arg, "name") != 0 && (dsl_prop_user_name(arg) ||
	    strncmp(arg, "written@", 8) == 0)) {
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

/* Sort key k of a held row against another's: name, a number or a string. */
static int
fs_key_cmp(const fs_sorted_t *x, const fs_sorted_t *y, int k, int *ki)
{
	if (x->fs_walk->fw_sort[k] == -1)
		return (strcmp(x->fs_name, y->fs_name));
	json_object *a = json_object_array_get_idx(x->fs_keys, *ki);
	json_object *b = json_object_array_get_idx(y->fs_keys, (*ki)++);
	if (json_object_is_type(a, json_type_string) || json_object_is_type(b, json_type_string)) {
		const char *sa = json_object_get_string(a), *sb = json_object_get_string(b);
		return (strcmp(sa != NULL ? sa : "-", sb != NULL ? sb : "-"));
	}
	uint64_t na = json_object_get_uint64(a), nb = json_object_get_uint64(b);
	return (na < nb ? -1 : na > nb);
}

static int
fs_sorted_cmp(const void *a, const void *b)
{
	const fs_sorted_t *x = a, *y = b;
	const fs_walk_t *w = x->fs_walk;
	int ki = 0;
	for (int k = 0; k < w->fw_nsort; k++) {
		int c = fs_key_cmp(x, y, k, &ki);
		if (c != 0)
			return (w->fw_sort_desc[k] ? -c : c);
	}
	return (x->fs_seq - y->fs_seq);
}

/* Hold a row of list and its sort keys (sorted and printed at the end). */
static void
fs_hold_row(fs_walk_t *w, const char *name, const char *const *cells, int ncell,
    json_object *keys)
{
	fs_sorted_t *r = tarn_array_push(&w->fw_held);
	r->fs_seq = (int)tarn_array_len(&w->fw_held) - 1;
	r->fs_walk = w;
	r->fs_cells = tarn_alloc(sizeof (char *) * (size_t)ncell);
	for (int i = 0; i < ncell; i++)
		r->fs_cells[i] = tarn_strdup(cells[i]);
	r->fs_name = tarn_strdup(name);
	r->fs_keys = json_object_get(keys);
}

/* Sort the held rows into the table and free them. */
static void
fs_flush_held(fs_walk_t *w)
{
	tarn_array_sort(&w->fw_held, fs_sorted_cmp);
	for (size_t i = 0; i < tarn_array_len(&w->fw_held); i++) {
		fs_sorted_t *r = tarn_array_get(&w->fw_held, i);
		cli_table_row(w->fw_table, (const char *const *)r->fs_cells);
		for (int c = 0; c < w->fw_nprops; c++)
			tarn_free(r->fs_cells[c]);
		tarn_free(r->fs_cells);
		tarn_free(r->fs_name);
		json_object_put(r->fs_keys);
	}
	tarn_array_clear(&w->fw_held);
}

/* A string field of a JSON object ("-" when absent). */
static const char *
fs_field(json_object *o, const char *key)
{
	json_object *v;
	const char *s;

	if (!json_object_object_get_ex(o, key, &v) || (s = json_object_get_string(v)) == NULL)
		return ("-");
	return (s);
}

/* A source word of the host's ("local", "inherited", ...) as a dsl_source_t. */
static dsl_source_t
fs_source(const char *word)
{
	static const char *const words[] = { [DSL_SRC_NONE] = "-",
		[DSL_SRC_DEFAULT] = "default", [DSL_SRC_LOCAL] = "local",
		[DSL_SRC_INHERITED] = "inherited", [DSL_SRC_TEMPORARY] = "temporary" };
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (strcmp(word, words[i]) == 0)
			return ((dsl_source_t)i);
	return (DSL_SRC_NONE);
}

/* A row of get (unless -s leaves its source out); val: {value, source, from?}. */
static void
fs_get_row(fs_walk_t *w, const char *name, const char *prop, json_object *val)
{
	char src[DSL_NAME_MAX + 32];
	dsl_source_t s = val != NULL ? fs_source(fs_field(val, "source")) : DSL_SRC_NONE;
	if (w->fw_sources != 0 && !(w->fw_sources & (1 << s)))
		return;
	if (s == DSL_SRC_INHERITED)
		(void) snprintf(src, sizeof (src), "inherited from %s", fs_field(val, "from"));
	else
		(void) snprintf(src, sizeof (src), "%s", val != NULL ? fs_field(val, "source") : "-");
	const char *fields[4] = { name, prop, val != NULL ? fs_field(val, "value") : name, src };
	const char *row[5];
	for (int f = 0; f < w->fw_nfields; f++)
		row[f] = fields[w->fw_fields[f]];
	cli_table_row(w->fw_table, row);
	w->fw_rows++;
}

/* One dataset of the host's answer: a row of list, or rows of get. */
static void
fs_row(fs_walk_t *w, json_object *ds)
{
	const char *name = fs_field(ds, "name");
	json_object *vals = json_object_object_get(ds, "props"), *user, *un;
	const char *cells[FS_MAXCOLS];
	int ncell = 0, vi = 0;
	bool unreadable = json_object_object_get_ex(ds, "unreadable", &un) &&
	    json_object_get_boolean(un);
	for (int i = 0; i < w->fw_nprops; i++) {
		int p = w->fw_props[i];
		json_object *val = p < 0 ? NULL : json_object_array_get_idx(vals, vi++), *na;
		if (w->fw_get && w->fw_all && p >= 0 && p < FS_USER &&
		    json_object_object_get_ex(val, "na", &na) && json_object_get_boolean(na))
			continue;       /* get all: what does not apply is left out */
		if (!w->fw_get)
			cells[ncell++] = p < 0 ? name : fs_field(val, "value");
		else
			fs_get_row(w, name, p < 0 ? "name" : p >= FS_USER ?
			    w->fw_user[p - FS_USER] : dsl_prop_name(p), val);
	}
	if (w->fw_get && json_object_object_get_ex(ds, "user", &user)) {
		for (size_t i = 0; i < json_object_array_length(user); i++) {
			json_object *val = json_object_array_get_idx(user, i);
			fs_get_row(w, name, fs_field(val, "property"), val);
		}
	}
	/* list: no row of '-' that would read as "does not apply" */
	if (!w->fw_get && !unreadable) {
		if (w->fw_nsort > 0)
			fs_hold_row(w, name, cells, ncell, json_object_object_get(ds, "sort"));
		else
			cli_table_row(w->fw_table, cells);
		w->fw_rows++;
	}
}

/* A property code of the walk by the name the host knows it by. */
static const char *
fs_prop_word(const fs_walk_t *w, int p)
{
	return (p >= FS_USER ? w->fw_user[p - FS_USER] : dsl_prop_name(p));
}

/* The arguments of fs.props for the walk and the named datasets. */
static json_object *
fs_walk_args(const fs_walk_t *w, int argc, char **argv)
{
	json_object *args = json_object_new_object(), *props = json_object_new_array();
	if (argc > 0) {
		json_object *names = json_object_new_array_ext(argc);
		for (int i = 0; i < argc; i++)
			json_object_array_add(names, json_object_new_string(argv[i]));
		json_object_object_add(args, "names", names);
	}
	json_object_object_add(args, "depth", json_object_new_int(w->fw_depth));
	for (int i = 0; i < w->fw_nprops; i++)
		if (w->fw_props[i] >= 0)
			json_object_array_add(props, json_object_new_string(
			    fs_prop_word(w, w->fw_props[i])));
	json_object_object_add(args, "props", props);
	if (w->fw_nsort > 0) {
		json_object *sort = json_object_new_array();
		for (int k = 0; k < w->fw_nsort; k++)
			if (w->fw_sort[k] >= 0)
				json_object_array_add(sort, json_object_new_string(
				    fs_prop_word(w, w->fw_sort[k])));
		json_object_object_add(args, "sort", sort);
	}
	json_object_object_add(args, "parsable", json_object_new_boolean(w->fw_exact));
	json_object_object_add(args, "user_all", json_object_new_boolean(w->fw_get && w->fw_all));
	json_object_object_add(args, "filesystems", json_object_new_boolean(w->fw_types_fs));
	json_object_object_add(args, "snapshots", json_object_new_boolean(w->fw_types_snap));
	json_object_object_add(args, "bookmarks", json_object_new_boolean(w->fw_types_bm));
	json_object_object_add(args, "zpool", json_object_new_string(
	    strcmp(cli_fs_prog, "zfs") == 0 ? "zpool" : "tarn pool"));
	return (args);
}

/*
 * The named datasets, or every pool's datasets when none are named: one
 * call of the host (fs.props) for all of them, then the table.
 */
static int
fs_walk(fs_walk_t *w, int argc, char **argv)
{
	json_object *res, *dss;
	int r = cli_call("fs.props", fs_walk_args(w, argc, argv), &res);
	if (res == NULL || !json_object_object_get_ex(res, "datasets", &dss)) {
		json_object_put(res);   /* the pools could not be listed */
		return (r != CLI_EXIT_OK ? r : CLI_EXIT_ERROR);
	}
	tarn_array_init(&w->fw_held, sizeof (fs_sorted_t));
	for (size_t i = 0; i < json_object_array_length(dss); i++)
		fs_row(w, json_object_array_get_idx(dss, i));
	if (w->fw_nsort > 0)
		fs_flush_held(w);
	tarn_array_fini(&w->fw_held);
	if (w->fw_rows > 0 || w->fw_get)        /* zfs list: no header for no rows */
		cli_table_print(w->fw_table, cli_out, w->fw_scripted);
	if (argc == 0 && w->fw_rows == 0 && r == CLI_EXIT_OK && !w->fw_get)
		fprintf(cli_err, "no datasets available\n");
	json_object_put(res);
	return (r);
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
		case 'r': w.fw_depth = -1; w.fw_depth_set = true; break;
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
	/*
	 * OpenZFS 2.1 (Debian 12's): `zfs list -t snapshot FS` without -r or
	 * -d lists FS's snapshots, as if with -d 1 (the same for bookmarks).
	 */
	if (!w.fw_types_fs && (w.fw_types_snap || w.fw_types_bm) && argc > 0 &&
	    !w.fw_depth_set)
		w.fw_depth = 1;
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
		bool right = p >= 0 && (p < FS_USER ? dsl_prop_is_numeric(p) :
		    strncmp(w.fw_user[p - FS_USER], "written@", 8) == 0);
		cli_table_column(w.fw_table, p < 0 ? "NAME" : p >= FS_USER ? head :
		    dsl_prop_column(p), right ? CLI_RIGHT : CLI_LEFT, 0);
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
	/* zfs get: every type by default (snapshots with -r, as zfs) */
	w.fw_types_fs = w.fw_types_snap = w.fw_types_bm = true;
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
