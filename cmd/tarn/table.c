/*
 * table.c — the column printer behind `tarn pool list` (and later `fs
 * list`): columns are as wide as their widest cell, separated by two
 * spaces, numbers right-aligned, the last left-aligned column unpadded;
 * -H (scripted) prints no header and separates cells by one tab.  Also
 * zpool's human-readable numbers and JSON string quoting.
 */
#include "tarn.h"
#include "tarn_array.h"


typedef struct cli_col {
	char       *cc_header;
	cli_align_t cc_align;
	int         cc_width;
} cli_col_t;

struct cli_table {
	tarn_array_t t_cols;    /* cli_col_t */
	int          t_ncols;
	tarn_array_t t_rows;    /* char **: arrays of t_ncols strings */
};

#define T_COL(t, i) TARN_ARRAY_AT(&(t)->t_cols, cli_col_t, (i))
#define T_ROW(t, r) TARN_ARRAY_AT(&(t)->t_rows, char **, (r))

cli_table_t *
cli_table_new(void)
{
	cli_table_t *t = tarn_alloc(sizeof (cli_table_t));

	tarn_array_init(&t->t_cols, sizeof (cli_col_t));
	tarn_array_init(&t->t_rows, sizeof (char **));
	return (t);
}

void
cli_table_column(cli_table_t *t, const char *header, cli_align_t align, int minwidth)
{
	ASSERT(tarn_array_len(&t->t_rows) == 0);
	cli_col_t *c = tarn_array_push(&t->t_cols);
	t->t_ncols++;
	c->cc_header = tarn_strdup(header);
	c->cc_align = align;
	c->cc_width = MAX((int)strlen(header), minwidth);
}

void
cli_table_row(cli_table_t *t, const char *const *cells)
{
	cli_table_row_short(t, cells, t->t_ncols);
}

void
cli_table_row_short(cli_table_t *t, const char *const *cells, int n)
{
	char **row = tarn_alloc((size_t)t->t_ncols * sizeof (char *));

	for (int i = 0; i < MIN(n, t->t_ncols); i++) {
		row[i] = tarn_strdup(cells[i] != NULL ? cells[i] : "-");
		T_COL(t, i).cc_width = MAX(T_COL(t, i).cc_width, (int)strlen(row[i]));
	}
	TARN_ARRAY_APPEND(&t->t_rows, char **, row);
}

/* A line: the row's cells, up to the first absent one (NULL). */
static void
table_print_line(const cli_table_t *t, FILE *f, char *const *cells, bool scripted)
{
	int n = 0;
	while (n < t->t_ncols && cells[n] != NULL)
		n++;
	for (int i = 0; i < n; i++) {
		const cli_col_t *c = &T_COL(t, i);
		bool last = i == n - 1;

		if (scripted) {
			fprintf(f, "%s%s", cells[i], last ? "" : "\t");
			continue;
		}
		if (i > 0)
			fputs("  ", f);
		if (c->cc_align == CLI_RIGHT)
			fprintf(f, "%*s", c->cc_width, cells[i]);
		else if (last)
			fputs(cells[i], f);
		else
			fprintf(f, "%-*s", c->cc_width, cells[i]);
	}
	fputc('\n', f);
}

void
cli_table_print(const cli_table_t *t, FILE *f, bool scripted)
{
	if (!scripted) {
		char **hdr = tarn_alloc((size_t)t->t_ncols * sizeof (char *));
		for (int i = 0; i < t->t_ncols; i++)
			hdr[i] = T_COL(t, i).cc_header;
		table_print_line(t, f, hdr, false);
		tarn_free(hdr);
	}
	for (size_t r = 0; r < tarn_array_len(&t->t_rows); r++)
		table_print_line(t, f, T_ROW(t, r), scripted);
}

void
cli_table_free(cli_table_t *t)
{
	if (t == NULL)
		return;
	for (size_t r = 0; r < tarn_array_len(&t->t_rows); r++) {
		for (int i = 0; i < t->t_ncols; i++)
			tarn_free(T_ROW(t, r)[i]);
		tarn_free(T_ROW(t, r));
	}
	for (int i = 0; i < t->t_ncols; i++)
		tarn_free(T_COL(t, i).cc_header);
	tarn_array_fini(&t->t_rows);
	tarn_array_fini(&t->t_cols);
	tarn_free(t);
}

void
cli_nicenum(uint64_t n, bool exact, char *buf, size_t len)
{
	static const char units[] = " KMGTPE";
	int index = 0;
	uint64_t v = n;

	if (exact || n < 1024) {
		(void) snprintf(buf, len, "%" PRIu64, n);
		return;
	}
	while (v >= 1024 && index < (int)sizeof (units) - 2) {
		v /= 1024;
		index++;
	}
	if ((n & ((1ULL << (10 * index)) - 1)) == 0) {
		(void) snprintf(buf, len, "%" PRIu64 "%c", v, units[index]);
		return;
	}
	double d = (double)n / (double)(1ULL << (10 * index));
	for (int prec = 2; prec >= 0; prec--) {
		int w = snprintf(buf, len, "%.*f%c", prec, d, units[index]);
		if (w <= 5)
			return;
	}
}

void
cli_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

/*
 * -o of zfs get and zpool get: the fields to print, in order, from name,
 * property, value, source (CLI_GET_*; "all" is the four).  0, or
 * CLI_EXIT_USAGE after a usage error (through usage, e.g. cli_usage_error
 * or cli_fs_usage_error) for an unknown, repeated-past-four or empty list.
 */
int
cli_get_fields(const char *arg, int fields[CLI_GET_NFIELDS], int *nfields,
    int (*usage)(const char *, const char *, ...))
{
	static const char *const names[CLI_GET_NFIELDS] = { "name", "property", "value",
		"source" };
	char *copy = tarn_strdup(arg), *save = NULL;
	int r = 0;

	*nfields = 0;
	for (char *t = strtok_r(copy, ",", &save); t != NULL && r == 0;
	    t = strtok_r(NULL, ",", &save)) {
		int f;
		if (strcmp(t, "all") == 0) {
			for (f = 0; f < CLI_GET_NFIELDS; f++)
				fields[f] = f;
			*nfields = CLI_GET_NFIELDS;
			continue;
		}
		for (f = 0; f < CLI_GET_NFIELDS && strcmp(t, names[f]) != 0; f++)
			;
		if (f == CLI_GET_NFIELDS)
			r = usage("get", "invalid field '%s': fields are name, property, "
			    "value, source or all", t);
		else if (*nfields >= CLI_GET_NFIELDS)
			r = usage("get", "bad field list: too many fields");
		else
			fields[(*nfields)++] = f;
	}
	if (r == 0 && *nfields == 0)
		r = usage("get", "bad field list: empty");
	tarn_free(copy);
	return (r);
}
