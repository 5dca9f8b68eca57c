/*
 * host_op_iostat.c — zpool iostat: the I/O rates of pools and their vdevs,
 * once or every INTERVAL seconds, the pools staying open across rounds.
 *
 *   pool.iostat       names?: [pool...] (none: every pool), interval
 *                     (seconds, 0: one round), count (0: no end), skip   -
 *                     parts, one a round: { skip, pools: [tree...] }
 *
 * A round's tree is the pool's vdev tree, each vdev an object:
 *   type ("root" | "mirror" | "raidz" | "replacing" | "spare" | "leaf"),
 *   id, nparity (raidz), path (a leaf's, when known), guid,
 *   size and alloc (the pool's and top-level vdevs' space only: zpool
 *   shows capacity for those two), ops [read, write] and bytes [read,
 *   write] per second, children [...]; the root's name is the pool's;
 *   a log or special top-level vdev has class ("log" / "special"), the
 *   root has cache [...] (its cache devices, not in its sums).
 *
 * Rates: the first round averages over the time since the pool was
 * opened (imported, or since tarnd started), each later one covers the
 * interval before it.  skip (-y) makes the first round a base only: its
 * part says skip and does not count.  The counters come from vdev_stat
 * (vs_ops, vs_bytes); the root's are the sum of its top-level vdevs'.
 * The tree is walked under spa_vdev_hold (a finishing resilver may free
 * a leaf meanwhile).  The rounds end after count of them, when the caller
 * went away (host_emit fails: its output is gone, or Ctrl-C), or when the
 * client hung up (host_cancelled, checked while sleeping); both fail.
 *
 * Pools that do not open are reported ("cannot open 'NAME'") before the
 * first round; in tarnd those reports go out with the first part, so the
 * client prints them before the table, as in-process.
 */
#include "host_impl.h"

#include <time.h>

typedef struct iostat_snap {
	uint64_t    is_guid;
	vdev_stat_t is_vs;
} iostat_snap_t;

typedef struct iostat_pool {
	const char    *ip_name;
	spa_t         *ip_spa;
	iostat_snap_t *ip_snap;       /* counters at the last round */
	int            ip_nsnap;
	uint64_t       ip_snap_ns;    /* when they were taken */
} iostat_pool_t;

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
	if (vdev_type(vd) == VDEV_TYPE_ROOT && vdev_l2cache(vd) != NULL)
		n += vdev_children(vdev_l2cache(vd));
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
	const vdev_t *l2 = vdev_type(vd) == VDEV_TYPE_ROOT ? vdev_l2cache(vd) : NULL;
	for (int c = 0; l2 != NULL && c < vdev_children(l2); c++)
		iostat_take(vdev_child(l2, c), snap, i);
}

/* Remember every vdev's counters now (the base of the next round). */
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

static const char *
iostat_type(const vdev_t *vd)
{
	switch (vdev_type(vd)) {
	case VDEV_TYPE_ROOT: return ("root");
	case VDEV_TYPE_MIRROR: return ("mirror");
	case VDEV_TYPE_RAIDZ: return ("raidz");
	case VDEV_TYPE_REPLACING: return ("replacing");
	case VDEV_TYPE_SPARE: return ("spare");
	default: return ("leaf");
	}
}

static json_object *
iostat_pair(uint64_t r, uint64_t w)
{
	json_object *a = json_object_new_array_ext(2);

	json_object_array_add(a, json_object_new_uint64(r));
	json_object_array_add(a, json_object_new_uint64(w));
	return (a);
}

/* One vdev of a round, and its children, with rates over the last interval. */
static json_object *
iostat_vdev(const iostat_pool_t *ip, const vdev_t *vd, double scale)
{
	json_object *o = json_object_new_object();
	uint64_t size = 0, alloc = 0, rate[2][2];
	vdev_stat_t vs;

	host_vdev_ident(o, vd, iostat_type(vd));
	if (host_vdev_space(ip->ip_spa, vd, &size, &alloc)) {
		json_object_object_add(o, "size", json_object_new_uint64(size));
		json_object_object_add(o, "alloc", json_object_new_uint64(alloc));
	}
	iostat_vs(vd, &vs);
	const vdev_stat_t *old = iostat_old(ip, vdev_guid(vd));
	for (int rw = 0; rw < 2; rw++) {
		rate[0][rw] = (uint64_t)((double)(vs.vs_ops[rw] - MIN(old->vs_ops[rw],
		    vs.vs_ops[rw])) * scale);
		rate[1][rw] = (uint64_t)((double)(vs.vs_bytes[rw] - MIN(old->vs_bytes[rw],
		    vs.vs_bytes[rw])) * scale);
	}
	json_object_object_add(o, "ops", iostat_pair(rate[0][0], rate[0][1]));
	json_object_object_add(o, "bytes", iostat_pair(rate[1][0], rate[1][1]));
	json_object *kids = json_object_new_array_ext(vdev_children(vd));
	for (int c = 0; c < vdev_children(vd); c++)
		if (!vdev_is_hole(vdev_child(vd, c)))    /* a removed log vdev's place */
			json_object_array_add(kids, iostat_vdev(ip, vdev_child(vd, c), scale));
	json_object_object_add(o, "children", kids);
	/* cache devices: not summed into the pool's row, as zpool */
	const vdev_t *l2 = vdev_type(vd) == VDEV_TYPE_ROOT ? vdev_l2cache(vd) : NULL;
	if (l2 != NULL) {
		json_object *cache = json_object_new_array_ext(vdev_children(l2));
		for (int c = 0; c < vdev_children(l2); c++)
			json_object_array_add(cache, iostat_vdev(ip, vdev_child(l2, c), scale));
		json_object_object_add(o, "cache", cache);
	}
	return (o);
}

/* One round of every pool, then the base of the next. */
static json_object *
iostat_round(iostat_pool_t *pools, int n, bool skip)
{
	json_object *part = json_object_new_object(), *a = json_object_new_array_ext(n);
	uint64_t now = tarn_now_ns();

	for (int i = 0; i < n; i++) {
		uint64_t dt = now - pools[i].ip_snap_ns;
		double scale = pools[i].ip_snap_ns != 0 && dt > 0 ? 1e9 / (double)dt : 1.0;
		spa_vdev_hold(pools[i].ip_spa);    /* one pool at a time */
		json_object *t = iostat_vdev(&pools[i], spa_root_vdev(pools[i].ip_spa), scale);
		spa_vdev_rele(pools[i].ip_spa);
		json_object_object_add(t, "name", json_object_new_string(pools[i].ip_name));
		json_object_array_add(a, t);
	}
	for (int i = 0; i < n; i++)
		iostat_snapshot(&pools[i], now);
	json_object_object_add(part, "skip", json_object_new_boolean(skip));
	json_object_object_add(part, "pools", a);
	return (part);
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

/*
 * The rounds.  The first one's base: zero counters when the pool was
 * opened.  Failures reported so far (the pools that did not open) go
 * with the first part when they were gathered into res (tarnd).
 */
static int
iostat_run(json_object *args, json_object *res, iostat_pool_t *pools, int n)
{
	double interval = json_object_get_double(json_object_object_get(args, "interval"));
	uint64_t count = json_object_get_uint64(json_object_object_get(args, "count"));
	bool skip_first = host_arg_bool(args, "skip");
	uint64_t now = tarn_now_ns();
	json_object *reps;

	for (int i = 0; i < n; i++) {
		pools[i].ip_nsnap = 0;
		pools[i].ip_snap_ns = MIN(spa_open_time(pools[i].ip_spa), now);
	}
	for (unsigned long iter = 0;; iter++) {
		bool skip = skip_first && iter == 0;
		json_object *part = iostat_round(pools, n, skip);
		if (iter == 0 && json_object_object_get_ex(res, "reports", &reps)) {
			json_object_object_add(part, "reports", json_object_get(reps));
			json_object_object_del(res, "reports");
		}
		if (host_emit(part) != 0)
			return (HOST_FAILED);   /* the reader went away */
		if (!skip && (interval <= 0 || (count != 0 && --count == 0)))
			return (0);
		if (!iostat_sleep(interval))
			return (HOST_FAILED);
	}
}

/* Open the pools named (or every pool) for a long read-only watch. */
static int
iostat_open(json_object *args, bool watch, iostat_pool_t **poolsp, int *np,
    char ***namesp, int *nnamesp)
{
	json_object *names = json_object_object_get(args, "names");
	int want = 0, n = 0, ret = 0, error;
	char err[1024];

	*namesp = NULL;
	*nnamesp = 0;
	if (json_object_is_type(names, json_type_array) && json_object_array_length(names) > 0) {
		want = (int)json_object_array_length(names);
	} else {
		if ((error = host_pool_names(namesp, nnamesp)) != 0)
			return (host_report("iostat", spa_cachefile_path(), error, NULL));
		if (*nnamesp == 0) {
			host_warn("no pools available\n");
			return (HOST_FAILED);
		}
		want = *nnamesp;
		names = NULL;
	}
	iostat_pool_t *pools = tarn_alloc(sizeof (iostat_pool_t) * (size_t)want);
	for (int i = 0; i < want; i++) {
		const char *name = names != NULL ?
		    json_object_get_string(json_object_array_get_idx(names, i)) : (*namesp)[i];
		spa_t *spa;
		if (name == NULL)
			continue;
		error = host_pool_open(name, SPA_OPEN_READONLY | SPA_OPEN_NOVERIFY, &spa,
		    err, sizeof (err));
		if (error != 0) {
			ret = host_report("open", name, error, err);
			continue;
		}
		if (watch)
			host_pool_unlock(spa);   /* a long watch must not hold others up */
		pools[n].ip_name = name;
		pools[n++].ip_spa = spa;
	}
	*poolsp = pools;
	*np = n;
	return (ret);
}

static int
op_pool_iostat(json_object *args, json_object *res)
{
	bool watch = json_object_get_double(json_object_object_get(args, "interval")) > 0;
	iostat_pool_t *pools = NULL;
	char **names;
	int n = 0, nnames, ret;

	ret = iostat_open(args, watch, &pools, &n, &names, &nnames);
	if (pools == NULL)
		return (ret);
	if (n > 0 && iostat_run(args, res, pools, n) != 0)
		ret = HOST_FAILED;
	for (int i = 0; i < n; i++) {
		tarn_free(pools[i].ip_snap);
		host_pool_close(pools[i].ip_spa);
	}
	tarn_free(pools);
	host_names_free(names, nnames);
	return (ret);
}

const host_op_t host_ops_iostat[] = {
	{ "pool.iostat", op_pool_iostat },
	{ NULL, NULL }
};
