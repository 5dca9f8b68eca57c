/*
 * host_op_inject.c — `tarn inject`: run-time faults and delays on a leaf
 * of an imported pool, for administrators, tests and benchmarks (like
 * OpenZFS's zinject).  The pool layer finds the leaf (lib/spa/
 * spa_inject.c); the vdev layer does the injecting (lib/vdev/
 * vdev_inject.c, with the lane model of delays).
 *
 *   inject.add    pool, device, type ("io" | "checksum" | "nxio" |
 *                 "delay"), rw ("read" | "write" | "all"), ppm
 *                 (1..1000000), latency_us, lanes (delay)         id
 *   inject.list   -                          injections: [{id, pool,
 *                                            device, guid, type, rw, ppm,
 *                                            latency_us, lanes}...] by id
 *   inject.clear  id (0 or absent: all)      cleared: how many
 *
 * Injections live in the daemon only, on the open pool's leaves: nothing
 * is written, export and destroy clear them, a restarted tarnd has none.
 * Run in-process (TARN_NO_DAEMON=1) a pool is closed when the command
 * ends, so inject.add refuses there.  No pool history is recorded (no
 * change of the pool).  Failures: "cannot inject into 'POOL'" (open),
 * "cannot inject into 'DEV'" (device), "cannot clear injection 'ID'"
 * (no such injection).
 */
#include "host_impl.h"

#include <stdlib.h>

static const char *const inject_types[] = {
	[VDEV_INJECT_EIO] = "io",
	[VDEV_INJECT_CKSUM] = "checksum",
	[VDEV_INJECT_NXIO] = "nxio",
	[VDEV_INJECT_DELAY] = "delay",
};

static const char *
inject_rw_name(int rw)
{
	return (rw == VDEV_INJECT_READ ? "read" : rw == VDEV_INJECT_WRITE ? "write" : "all");
}

static uint64_t
inject_arg_u64(json_object *args, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(args, key, &v))
		return (0);
	int64_t n = json_object_get_int64(v);
	return (n > 0 ? (uint64_t)n : 0);
}

/* The spec the arguments describe; 0 or reported. */
static int
inject_spec(json_object *args, const char *pool, vdev_inject_spec_t *s)
{
	const char *type = host_arg_str(args, "type"), *rw = host_arg_str(args, "rw");

	memset(s, 0, sizeof (*s));
	for (int k = VDEV_INJECT_EIO; k <= VDEV_INJECT_DELAY; k++) {
		if (type != NULL && strcmp(type, inject_types[k]) == 0)
			s->vis_kind = (vdev_inject_kind_t)k;
	}
	if (s->vis_kind == 0)
		return (host_report("inject into", pool, EINVAL, "invalid error type"));
	if (rw == NULL)
		s->vis_rw = s->vis_kind == VDEV_INJECT_EIO || s->vis_kind == VDEV_INJECT_CKSUM ?
		    VDEV_INJECT_READ : VDEV_INJECT_READ | VDEV_INJECT_WRITE;
	else if (strcmp(rw, "read") == 0)
		s->vis_rw = VDEV_INJECT_READ;
	else if (strcmp(rw, "write") == 0)
		s->vis_rw = VDEV_INJECT_WRITE;
	else if (strcmp(rw, "all") == 0)
		s->vis_rw = VDEV_INJECT_READ | VDEV_INJECT_WRITE;
	else
		return (host_report("inject into", pool, EINVAL, "invalid I/O type"));
	uint64_t ppm = inject_arg_u64(args, "ppm");
	s->vis_ppm = ppm == 0 ? VDEV_INJECT_PPM_MAX : (uint32_t)MIN(ppm, UINT32_MAX);
	s->vis_latency_us = inject_arg_u64(args, "latency_us");
	s->vis_lanes = (uint32_t)MIN(inject_arg_u64(args, "lanes"), UINT32_MAX);
	return (0);
}

static int
op_inject_add(json_object *args, json_object *res)
{
	const char *pool, *dev;
	vdev_inject_spec_t spec;
	char err[1024] = "";
	spa_t *spa;
	uint64_t id = 0;
	int error;

	if (host_arg_need(args, "pool", "inject into", &pool) != 0 ||
	    host_arg_need(args, "device", "inject into", &dev) != 0 ||
	    inject_spec(args, pool, &spec) != 0)
		return (HOST_FAILED);
	if (!host_daemon_mode())
		return (host_report("inject into", pool, ENOTSUP, "injections live in the "
		    "daemon (tarnd); unset TARN_NO_DAEMON"));
	if ((error = host_pool_open(pool, SPA_OPEN_READONLY, &spa, err, sizeof (err))) != 0)
		return (host_report("inject into", pool, error, err));
	error = spa_inject_add(spa, dev, &spec, &id, err, sizeof (err));
	host_pool_close(spa);
	if (error != 0)
		return (host_report("inject into", dev, error, err));
	json_object_object_add(res, "id", json_object_new_int64((int64_t)id));
	return (0);
}

typedef struct inject_list {
	const char  *il_pool;
	json_object *il_arr;
} inject_list_t;

static void
inject_list_one(void *arg, vdev_t *leaf, uint64_t id, const vdev_inject_spec_t *s)
{
	inject_list_t *il = arg;
	json_object *o = json_object_new_object();
	char guid[24];

	(void) snprintf(guid, sizeof (guid), "%llu", (unsigned long long)vdev_guid(leaf));
	json_object_object_add(o, "id", json_object_new_int64((int64_t)id));
	json_object_object_add(o, "pool", json_object_new_string(il->il_pool));
	json_object_object_add(o, "device", json_object_new_string(vdev_path(leaf) != NULL ?
	    vdev_path(leaf) : guid));
	json_object_object_add(o, "guid", json_object_new_string(guid));
	json_object_object_add(o, "type", json_object_new_string(inject_types[s->vis_kind]));
	json_object_object_add(o, "rw", json_object_new_string(inject_rw_name(s->vis_rw)));
	json_object_object_add(o, "ppm", json_object_new_int64(s->vis_ppm));
	json_object_object_add(o, "latency_us", json_object_new_int64((int64_t)s->vis_latency_us));
	json_object_object_add(o, "lanes", json_object_new_int64(s->vis_lanes));
	json_object_array_add(il->il_arr, o);
}

static int
inject_id_cmp(const void *a, const void *b)
{
	int64_t x = json_object_get_int64(json_object_object_get(*(json_object *const *)a, "id"));
	int64_t y = json_object_get_int64(json_object_object_get(*(json_object *const *)b, "id"));
	return (x < y ? -1 : x > y);
}

/* Each imported pool that opens, to fn. */
static void
inject_each_pool(void (*fn)(spa_t *spa, const char *name, void *arg), void *arg)
{
	char **names = NULL;
	int n = 0;

	if (host_pool_names(&names, &n) != 0)
		return;
	for (int i = 0; i < n; i++) {
		char err[1024];
		spa_t *spa;
		if (host_pool_open(names[i], SPA_OPEN_READONLY | SPA_OPEN_NOVERIFY, &spa, err,
		    sizeof (err)) != 0)
			continue;
		fn(spa, names[i], arg);
		host_pool_close(spa);
	}
	host_names_free(names, n);
}

static void
inject_list_pool(spa_t *spa, const char *name, void *arg)
{
	inject_list_t *il = arg;
	il->il_pool = name;
	spa_inject_list(spa, inject_list_one, il);
}

static int
op_inject_list(json_object *args, json_object *res)
{
	inject_list_t il = { .il_arr = json_object_new_array() };

	(void) args;
	json_object_object_add(res, "injections", il.il_arr);
	if (!host_daemon_mode())
		return (0);
	inject_each_pool(inject_list_pool, &il);
	json_object_array_sort(il.il_arr, inject_id_cmp);
	return (0);
}

typedef struct inject_clear {
	uint64_t ic_id;
	int      ic_n;
} inject_clear_t;

static void
inject_clear_pool(spa_t *spa, const char *name, void *arg)
{
	inject_clear_t *ic = arg;
	(void) name;
	ic->ic_n += spa_inject_clear(spa, ic->ic_id);
}

static int
op_inject_clear(json_object *args, json_object *res)
{
	inject_clear_t ic = { .ic_id = inject_arg_u64(args, "id") };
	char idbuf[24];

	if (host_daemon_mode())
		inject_each_pool(inject_clear_pool, &ic);
	json_object_object_add(res, "cleared", json_object_new_int(ic.ic_n));
	if (ic.ic_id != 0 && ic.ic_n == 0) {
		(void) snprintf(idbuf, sizeof (idbuf), "%llu", (unsigned long long)ic.ic_id);
		return (host_report("clear injection", idbuf, ENOENT, "no such injection"));
	}
	return (0);
}

const host_op_t host_ops_inject[] = {
	{ "inject.add", op_inject_add },
	{ "inject.list", op_inject_list },
	{ "inject.clear", op_inject_clear },
	{ NULL, NULL }
};
