/*
 * arc_summary.c — `tarn arc-summary [-j]` (arc_summary's report of the
 * daemon's ARC) and `tarn daemon get|set` (its tunables).  The verbs are
 * described at the top of arcstat.c.
 */
#include "tarn.h"

#include <unistd.h>

static void
sum_size(const char *label, uint64_t v, uint64_t of)
{
	char b[32];
	cli_nicenum(v, false, b, sizeof (b));
	if (of > 0)
		fprintf(cli_out, "        %-40s %6.1f %%  %8s\n", label,
		    100.0 * (double)v / (double)of, b);
	else
		fprintf(cli_out, "        %-40s %18s\n", label, b);
}

static void
sum_count(const char *label, uint64_t v, uint64_t of)
{
	if (of > 0)
		fprintf(cli_out, "        %-40s %6.1f %%  %8" PRIu64 "\n", label,
		    of == 0 ? 0.0 : 100.0 * (double)v / (double)of, v);
	else
		fprintf(cli_out, "        %-40s %18" PRIu64 "\n", label, v);
}

static void
sum_print(json_object *s, uint64_t physmem)
{
#define V(k) cli_j_u64(s, (k))
	uint64_t size = V("size"), c = V("c"), hits = V("hits"), misses = V("misses");
	uint64_t acc = hits + misses;
	const char *health = size <= c ? "HEALTHY" : "OVER TARGET (blocks held by readers)";
	fprintf(cli_out, "\nARC status:%*s%s\n", 53 - (int)strlen(health), "", health);
	sum_count("Evictions given up (owners busy):", V("evict_skip"), 0);
	fprintf(cli_out, "\nARC size (current):\n");
	sum_size("Current size:", size, c);
	sum_size("Target size (adaptive, c):", c, V("c_max"));
	sum_size("Min size (hard limit, arc_min):", V("c_min"), V("c_max"));
	sum_size("Max size (high water, arc_max):", V("c_max"), physmem);
	fprintf(cli_out, "        Most Frequently / Recently Used split:\n");
	sum_size("MRU target (p):", V("p"), c);
	sum_size("Most Recently Used (MRU) size:", V("mru_size"), size);
	sum_size("Most Frequently Used (MFU) size:", V("mfu_size"), size);
	sum_size("Held by readers now:", V("held_size"), size);
	sum_size("Streamed blocks (once) size:", V("once_size"), size);
	sum_size("Data size:", V("data_size"), size);
	sum_size("Metadata size:", V("metadata_size"), size);
	sum_size("MRU ghost size:", V("mru_ghost_size"), 0);
	sum_size("MFU ghost size:", V("mfu_ghost_size"), 0);
	sum_count("Ghost entries:", V("ghost_count"), 0);
	fprintf(cli_out, "\nARC total accesses (hits + misses):%*s%" PRIu64 "\n", 29 -
	    (int)snprintf(NULL, 0, "%" PRIu64, acc), "", acc);
	sum_count("Cache hit ratio:", hits, acc);
	sum_count("Cache miss ratio:", misses, acc);
	sum_count("Actual hit ratio (MFU + MRU hits):", V("mfu_hits") + V("mru_hits"), acc);
	uint64_t dd = V("demand_data_hits") + V("demand_data_misses");
	uint64_t dm = V("demand_metadata_hits") + V("demand_metadata_misses");
	uint64_t pd = V("prefetch_data_hits") + V("prefetch_data_misses");
	uint64_t pm = V("prefetch_metadata_hits") + V("prefetch_metadata_misses");
	sum_count("Data demand efficiency:", V("demand_data_hits"), dd);
	sum_count("Data prefetch efficiency:", V("prefetch_data_hits"), pd);
	sum_count("Metadata demand efficiency:", V("demand_metadata_hits"), dm);
	sum_count("Metadata prefetch efficiency:", V("prefetch_metadata_hits"), pm);
	fprintf(cli_out, "\n        Cache hits by cache type:\n");
	sum_count("Most frequently used (MFU):", V("mfu_hits"), hits);
	sum_count("Most recently used (MRU):", V("mru_hits"), hits);
	sum_count("Most frequently used (MFU) ghost:", V("mfu_ghost_hits"), 0);
	sum_count("Most recently used (MRU) ghost:", V("mru_ghost_hits"), 0);
	fprintf(cli_out, "\n        Cache hits by data type:\n");
	sum_count("Demand data:", V("demand_data_hits"), hits);
	sum_count("Prefetch data:", V("prefetch_data_hits"), hits);
	sum_count("Demand metadata:", V("demand_metadata_hits"), hits);
	sum_count("Prefetch metadata:", V("prefetch_metadata_hits"), hits);
	fprintf(cli_out, "\n        Cache misses by data type:\n");
	sum_count("Demand data:", V("demand_data_misses"), misses);
	sum_count("Prefetch data:", V("prefetch_data_misses"), misses);
	sum_count("Demand metadata:", V("demand_metadata_misses"), misses);
	sum_count("Prefetch metadata:", V("prefetch_metadata_misses"), misses);
	fprintf(cli_out, "\nEvictions:\n");
	sum_count("Blocks evicted:", V("evictions"), 0);
	sum_size("Bytes evicted:", V("evict_bytes"), 0);
	sum_count("Streamed blocks not kept (once):", V("once_drops"), 0);
	sum_count("Blocks not kept (primarycache):", V("uncached"), 0);
	uint64_t l2h = V("l2_hits"), l2m = V("l2_misses");
	fprintf(cli_out, "\nL2ARC status:%*s%s\n", 51, "", "NONE (no cache device yet)");
	sum_size("L2ARC size (adaptive):", V("l2_size"), 0);
	sum_size("Compressed:", V("l2_asize"), 0);
	sum_size("Header size:", V("l2_hdr_size"), 0);
	sum_count("L2ARC hits:", l2h, l2h + l2m);
	sum_count("L2ARC misses:", l2m, l2h + l2m);
	sum_count("L2ARC reads:", V("l2_reads"), 0);
	sum_count("L2ARC writes:", V("l2_writes"), 0);
	fputc('\n', cli_out);
#undef V
}

int
cli_arc_summary(int argc, char **argv)
{
	bool json = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-j") == 0) {
			json = true;
		} else {
			fprintf(cli_err, "invalid argument '%s'\nusage: tarn arc-summary [-j]\n",
			    argv[i]);
			return (CLI_EXIT_USAGE);
		}
	}
	json_object *res = NULL;
	int ret = cli_call("arc.stats", json_object_new_object(), &res);
	if (ret == CLI_EXIT_OK) {
		if (json)
			fprintf(cli_out, "%s\n", json_object_to_json_string_ext(res,
			    JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED));
		else
			sum_print(cli_j_get(res, "stats"), cli_j_u64(res, "physmem"));
	}
	if (res != NULL)
		json_object_put(res);
	return (ret);
}

/* ---- tarn daemon get | set ---- */

static int
daemon_get(int argc, char **argv)
{
	bool scripted = false, exact = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt(argc, argv, "Hp")) != -1) {
		if (c == 'H') {
			scripted = true;
		} else if (c == 'p') {
			exact = true;
		} else {
			fprintf(cli_err, "invalid option '%c'\nusage: tarn daemon get [-Hp] "
			    "[all | NAME...]\n", optopt);
			return (CLI_EXIT_USAGE);
		}
	}
	json_object *args = json_object_new_object(), *names = json_object_new_array();
	for (int i = optind; i < argc; i++)
		json_object_array_add(names, json_object_new_string(argv[i]));
	json_object_object_add(args, "names", names);
	json_object *res = NULL;
	int ret = cli_call("daemon.get", args, &res);
	if (ret == CLI_EXIT_OK) {
		json_object *a = cli_j_get(res, "tunables");
		cli_table_t *t = cli_table_new();
		cli_table_column(t, "PROPERTY", CLI_LEFT, 0);
		cli_table_column(t, "VALUE", CLI_LEFT, 0);
		cli_table_column(t, "SOURCE", CLI_LEFT, 0);
		for (int i = 0; i < cli_j_len(a); i++) {
			json_object *o = cli_j_idx(a, i);
			char v[32];
			cli_nicenum(cli_j_u64(o, "value"), exact, v, sizeof (v));
			const char *cells[] = { cli_j_str(o, "name"), v, cli_j_str(o, "source") };
			cli_table_row(t, cells);
		}
		cli_table_print(t, cli_out, scripted);
		cli_table_free(t);
	}
	if (res != NULL)
		json_object_put(res);
	return (ret);
}

static int
daemon_set(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(cli_err, "missing NAME=VALUE\nusage: tarn daemon set NAME=VALUE...\n");
		return (CLI_EXIT_USAGE);
	}
	json_object *args = json_object_new_object(), *as = json_object_new_array();
	for (int i = 1; i < argc; i++) {
		if (strchr(argv[i], '=') == NULL) {
			fprintf(cli_err, "invalid argument '%s': expected NAME=VALUE\n"
			    "usage: tarn daemon set NAME=VALUE...\n", argv[i]);
			json_object_put(args);
			json_object_put(as);
			return (CLI_EXIT_USAGE);
		}
		json_object_array_add(as, json_object_new_string(argv[i]));
	}
	json_object_object_add(args, "assignments", as);
	json_object *res = NULL;
	int ret = cli_call("daemon.set", args, &res);
	if (res != NULL)
		json_object_put(res);
	return (ret);
}

int
cli_daemon_tunables(int argc, char **argv)
{
	int ret = strcmp(argv[0], "get") == 0 ? daemon_get(argc, argv) : daemon_set(argc, argv);
	fflush(cli_out);
	fflush(cli_err);
	return (ret);
}
