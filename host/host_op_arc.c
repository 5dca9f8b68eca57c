/*
 * host_op_arc.c — the daemon's ARC: its statistics and its tunables.
 *
 *   arc.stats      -                       stats: {name: number...} (arcstats'
 *                                          names: hits, misses, demand_data_hits,
 *                                          ..., size, c, p, c_min, c_max, mru_size,
 *                                          mfu_size, ..., l2_hits, ...), time (s,
 *                                          since the epoch), physmem
 *   daemon.get     names: [name...] (none  tunables: [{name, value, source}...]
 *                  or "all": every one)
 *   daemon.set     assignments: ["k=v"...] -   (all or nothing: one bad assignment
 *                                          changes nothing)
 *
 * Failures: "cannot get 'NAME': unknown daemon property", "cannot set
 * 'NAME': bad size 'V'", "cannot set 'arc_max': arc_max is below arc_min
 * (N bytes)", "... is more than the machine's memory", "cannot set 'X':
 * expected NAME=VALUE".  The l2_* figures are the sum over the daemon's
 * pools of their L2ARCs (spa_l2arc_stats; zero where a pool has no cache
 * device), each pool read-locked in turn.
 */
#include "host_impl.h"
#include "arc.h"

#include <time.h>

#define ADD(o, k, v) json_object_object_add((o), (k), json_object_new_uint64(v))

static void
arc_stats_json(const arc_stats_t *s, json_object *o)
{
	ADD(o, "hits", s->as_hits);
	ADD(o, "misses", s->as_misses);
	ADD(o, "demand_data_hits", s->as_demand_data_hits);
	ADD(o, "demand_data_misses", s->as_demand_data_misses);
	ADD(o, "demand_metadata_hits", s->as_demand_meta_hits);
	ADD(o, "demand_metadata_misses", s->as_demand_meta_misses);
	ADD(o, "prefetch_data_hits", s->as_prefetch_data_hits);
	ADD(o, "prefetch_data_misses", s->as_prefetch_data_misses);
	ADD(o, "prefetch_metadata_hits", s->as_prefetch_meta_hits);
	ADD(o, "prefetch_metadata_misses", s->as_prefetch_meta_misses);
	ADD(o, "mru_hits", s->as_mru_hits);
	ADD(o, "mfu_hits", s->as_mfu_hits);
	ADD(o, "mru_ghost_hits", s->as_mru_ghost_hits);
	ADD(o, "mfu_ghost_hits", s->as_mfu_ghost_hits);
	ADD(o, "size", s->as_size);
	ADD(o, "c", s->as_c);
	ADD(o, "p", s->as_p);
	ADD(o, "c_min", s->as_min);
	ADD(o, "c_max", s->as_max);
	ADD(o, "data_size", s->as_data_size);
	ADD(o, "metadata_size", s->as_meta_size);
	ADD(o, "mru_size", s->as_mru_size);
	ADD(o, "mfu_size", s->as_mfu_size);
	ADD(o, "held_size", s->as_held_size);
	ADD(o, "once_size", s->as_once_size);
	ADD(o, "mru_ghost_size", s->as_mru_ghost_size);
	ADD(o, "mfu_ghost_size", s->as_mfu_ghost_size);
	ADD(o, "ghost_count", s->as_ghost_count);
	ADD(o, "inserts", s->as_inserts);
	ADD(o, "evictions", s->as_evictions);
	ADD(o, "evict_bytes", s->as_evict_bytes);
	ADD(o, "evict_skip", s->as_evict_skip);
	ADD(o, "once_drops", s->as_once_drops);
	ADD(o, "uncached", s->as_uncached);
	ADD(o, "l2_hits", s->as_l2_hits);
	ADD(o, "l2_misses", s->as_l2_misses);
	ADD(o, "l2_reads", s->as_l2_reads);
	ADD(o, "l2_writes", s->as_l2_writes);
	ADD(o, "l2_size", s->as_l2_size);
	ADD(o, "l2_asize", s->as_l2_asize);
	ADD(o, "l2_hdr_size", s->as_l2_hdr_size);
}

/*
 * The L2ARC's figures: the sum over the daemon's pools (each pool has its
 * own, on its cache devices).  Only the daemon holds pools to ask.
 */
static void
arc_l2_sum(arc_stats_t *s, json_object *o)
{
	l2arc_stats_t sum = { 0 };
	char **names, err[256];
	int n;
	if (host_daemon_mode() && host_pool_names(&names, &n) == 0) {
		for (int i = 0; i < n; i++) {
			spa_t *spa;
			l2arc_stats_t l;
			if (host_pool_open(names[i], SPA_OPEN_READONLY, &spa, err,
			    sizeof (err)) != 0)
				continue;
			if (spa_l2arc_stats(spa, &l) == 0) {
				sum.ls_hits += l.ls_hits;
				sum.ls_misses += l.ls_misses;
				sum.ls_read_bytes += l.ls_read_bytes;
				sum.ls_feeds += l.ls_feeds;
				sum.ls_feed_drops += l.ls_feed_drops;
				sum.ls_writes += l.ls_writes;
				sum.ls_write_bytes += l.ls_write_bytes;
				sum.ls_size += l.ls_size;
				sum.ls_asize += l.ls_asize;
				sum.ls_hdr_size += l.ls_hdr_size;
				sum.ls_blocks += l.ls_blocks;
				sum.ls_cksum_bad += l.ls_cksum_bad;
				sum.ls_io_errors += l.ls_io_errors;
				sum.ls_rebuild_blocks += l.ls_rebuild_blocks;
				sum.ls_dev_size += l.ls_dev_size;
			}
			host_pool_close(spa);
		}
		host_names_free(names, n);
	}
	s->as_l2_hits = sum.ls_hits;
	s->as_l2_misses = sum.ls_misses;
	s->as_l2_reads = sum.ls_hits + sum.ls_misses;
	s->as_l2_writes = sum.ls_writes;
	s->as_l2_size = sum.ls_size;
	s->as_l2_asize = sum.ls_asize;
	s->as_l2_hdr_size = sum.ls_hdr_size;
	ADD(o, "l2_read_bytes", sum.ls_read_bytes);
	ADD(o, "l2_write_bytes", sum.ls_write_bytes);
	ADD(o, "l2_feeds", sum.ls_feeds);
	ADD(o, "l2_feed_drops", sum.ls_feed_drops);
	ADD(o, "l2_blocks", sum.ls_blocks);
	ADD(o, "l2_cksum_bad", sum.ls_cksum_bad);
	ADD(o, "l2_io_error", sum.ls_io_errors);
	ADD(o, "l2_rebuild_blocks", sum.ls_rebuild_blocks);
	ADD(o, "l2_dev_size", sum.ls_dev_size);
}

static int
op_arc_stats(json_object *args, json_object *res)
{
	arc_stats_t s;
	struct timespec ts;
	arc_stats(host_arc(), &s);
	json_object *o0 = json_object_new_object();
	arc_l2_sum(&s, o0);
	json_object *o = o0;
	arc_stats_json(&s, o);
	json_object_object_add(res, "stats", o);
	(void) clock_gettime(CLOCK_REALTIME, &ts);
	json_object_object_add(res, "time", json_object_new_double((double)ts.tv_sec +
	    (double)ts.tv_nsec / 1e9));
	ADD(res, "physmem", arc_physmem());
	return (0);
}

static void
tunable_json(int i, json_object *a)
{
	host_tunable_t t;
	host_tunable_get(i, &t);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "name", json_object_new_string(t.ht_name));
	ADD(o, "value", t.ht_value);
	json_object_object_add(o, "source", json_object_new_string(t.ht_source));
	json_object_array_add(a, o);
}

static int
op_daemon_get(json_object *args, json_object *res)
{
	json_object *names = NULL;
	(void) json_object_object_get_ex(args, "names", &names);
	size_t n = names != NULL ? json_object_array_length(names) : 0;
	for (size_t i = 0; i < n; i++) {
		const char *nm = json_object_get_string(json_object_array_get_idx(names, i));
		if (strcmp(nm, "all") != 0 && host_tunable_lookup(nm) < 0)
			return (host_report("get", nm, EINVAL, "unknown daemon property"));
	}
	json_object *a = json_object_new_array();
	bool all = n == 0;
	for (size_t i = 0; i < n; i++)
		all |= strcmp(json_object_get_string(json_object_array_get_idx(names, i)),
		    "all") == 0;
	if (all) {
		for (int t = 0; t < host_tunable_count(); t++)
			tunable_json(t, a);
	} else {
		for (size_t i = 0; i < n; i++)
			tunable_json(host_tunable_lookup(json_object_get_string(
			    json_object_array_get_idx(names, i))), a);
	}
	json_object_object_add(res, "tunables", a);
	return (0);
}

#define SET_MAX 8

static int
op_daemon_set(json_object *args, json_object *res)
{
	json_object *as = NULL;
	(void) json_object_object_get_ex(args, "assignments", &as);
	size_t n = as != NULL ? json_object_array_length(as) : 0;
	int idx[SET_MAX];
	uint64_t val[SET_MAX];
	char names[SET_MAX][64];
	if (n == 0 || n > SET_MAX)
		return (host_report("set", "", EINVAL, n == 0 ? "nothing to set" :
		    "too many assignments"));
	for (size_t i = 0; i < n; i++) {
		const char *a = json_object_get_string(json_object_array_get_idx(as, i));
		const char *eq = strchr(a, '=');
		if (eq == NULL || eq == a)
			return (host_report("set", a, EINVAL, "expected NAME=VALUE"));
		(void) snprintf(names[i], sizeof (names[i]), "%.*s", (int)(eq - a), a);
		if ((idx[i] = host_tunable_lookup(names[i])) < 0)
			return (host_report("set", names[i], EINVAL, "unknown daemon property"));
		if (arc_parse_size(eq + 1, &val[i]) != 0) {
			char msg[128];
			(void) snprintf(msg, sizeof (msg), "bad size '%.60s'", eq + 1);
			return (host_report("set", names[i], EINVAL, msg));
		}
		for (size_t j = 0; j < i; j++)
			if (idx[j] == idx[i])
				return (host_report("set", names[i], EINVAL, "set twice"));
	}
	char msg[256] = "";
	int bad;
	int error = host_tunables_set((int)n, idx, val, &bad, msg, sizeof (msg));
	if (error != 0)
		return (host_report("set", names[bad], error, msg[0] != '\0' ? msg : NULL));
	return (0);
}

const host_op_t host_ops_arc[] = {
	{ "arc.stats", op_arc_stats },
	{ "daemon.get", op_daemon_get },
	{ "daemon.set", op_daemon_set },
	{ NULL, NULL }
};
