/*
 * Unit tests of the host layer's request machinery: running operations by
 * name (host_exec), failures gathered into a result or handed to the
 * thread's reporter, parts of a result (host_emit), the command line kept
 * for the pool history, and mount options checked before anything is
 * asked.  The pools themselves are tested through the command line
 * (tests/e2e); here a cache file that names no pool stands in.
 */
#include "tt.h"
#include "host.h"

#include <stdlib.h>

static void
setup_empty_cache(void)
{
	char path[512];

	(void) snprintf(path, sizeof (path), "%s/tarn.cache", tt_tmpdir());
	(void) setenv("TARN_CACHEFILE", path, 1);
}

static void
test_unknown_op(void)
{
	json_object *res = (json_object *)1, *args = json_object_new_object();

	TT_EQ(host_exec("no.such", args, true, &res), ENOENT);
	TT_CHECK(res == NULL);
	TT_EQ(host_exec("pool.sync", NULL, true, &res), EINVAL);
	json_object *arr = json_object_new_array();
	TT_EQ(host_exec("pool.sync", arr, true, &res), EINVAL);
	json_object_put(arr);
	json_object_put(args);
}

/* A failure while collecting lands in the result as [verb, name, errno, msg]. */
static void
test_reports_collected(void)
{
	json_object *args = json_object_new_object(), *names = json_object_new_array(), *res;

	setup_empty_cache();
	json_object_array_add(names, json_object_new_string("nosuch"));
	json_object_object_add(args, "names", names);
	TT_OK(host_exec("pool.sync", args, true, &res));
	TT_EQ(json_object_get_int(json_object_object_get(res, "ret")), HOST_FAILED);
	json_object *reps = json_object_object_get(res, "reports");
	TT_ASSERT(reps != NULL && json_object_array_length(reps) == 1);
	json_object *r = json_object_array_get_idx(reps, 0);
	TT_CHECK(strcmp(json_object_get_string(json_object_array_get_idx(r, 0)), "sync") == 0);
	TT_CHECK(strcmp(json_object_get_string(json_object_array_get_idx(r, 1)), "nosuch") == 0);
	TT_EQ(json_object_get_int(json_object_array_get_idx(r, 2)), HOST_ENOPOOL);
	TT_CHECK(strcmp(json_object_get_string(json_object_array_get_idx(r, 3)),
	    "no such pool") == 0);
	json_object_put(res);
	json_object_put(args);
}

static int test_nreports;
static char test_last_name[64];

static void
test_reporter(const char *verb, const char *name, int error, const char *msg)
{
	test_nreports++;
	(void) snprintf(test_last_name, sizeof (test_last_name), "%s", name);
}

/* Not collecting: the thread's reporter sees each failure, the result has none. */
static void
test_reports_to_reporter(void)
{
	json_object *args = json_object_new_object(), *names = json_object_new_array(), *res;

	setup_empty_cache();
	json_object_array_add(names, json_object_new_string("a"));
	json_object_array_add(names, json_object_new_string("b"));
	json_object_object_add(args, "names", names);
	test_nreports = 0;
	host_set_reporter(test_reporter);
	TT_OK(host_exec("pool.sync", args, false, &res));
	host_set_reporter(NULL);
	TT_EQ(test_nreports, 2);
	TT_CHECK(strcmp(test_last_name, "b") == 0);
	TT_CHECK(json_object_object_get(res, "reports") == NULL);
	TT_EQ(json_object_get_int(json_object_object_get(res, "ret")), HOST_FAILED);
	json_object_put(res);
	json_object_put(args);

	/* every pool of an empty cache file: nothing to do, success */
	args = json_object_new_object();
	TT_OK(host_exec("pool.sync", args, true, &res));
	TT_EQ(json_object_get_int(json_object_object_get(res, "ret")), 0);
	json_object_put(res);
	json_object_put(args);
}

static int test_nparts;

static int
test_emitter(void *arg, json_object *part)
{
	test_nparts += json_object_get_int(json_object_object_get(part, "n"));
	json_object_put(part);
	return (*(int *)arg);
}

static void
test_emit_parts(void)
{
	int answer = 0;
	json_object *p = json_object_new_object();

	json_object_object_add(p, "n", json_object_new_int(5));
	TT_OK(host_emit(p));                    /* no emitter: dropped */
	host_set_emitter(test_emitter, &answer);
	for (int i = 1; i <= 3; i++) {
		p = json_object_new_object();
		json_object_object_add(p, "n", json_object_new_int(i));
		TT_OK(host_emit(p));
	}
	TT_EQ(test_nparts, 6);
	answer = EPIPE;                         /* the caller went away */
	p = json_object_new_object();
	TT_EQ(host_emit(p), EPIPE);
	host_set_emitter(NULL, NULL);
}

static void
test_history_line(void)
{
	char *argv[] = { (char *)"set", (char *)"atime=off", (char *)"tank/a" };

	host_history_begin("zfs", 3, argv);
	TT_CHECK(strcmp(host_history_get(), "zfs set atime=off tank/a") == 0);
	host_history_set("zpool scrub tank");
	TT_CHECK(strcmp(host_history_get(), "zpool scrub tank") == 0);
	host_history_set(NULL);
	TT_CHECK(host_history_get()[0] == '\0');
}

/* Outside the daemon: no mounts, and mounting says it needs the daemon. */
static void
test_mounts_in_process(void)
{
	json_object *args = json_object_new_object(), *res;
	char err[128];

	TT_OK(host_exec("fs.mounts", args, true, &res));
	TT_EQ(json_object_array_length(json_object_object_get(res, "mounts")), 0);
	json_object_put(res);
	json_object_object_add(args, "name", json_object_new_string("tank/a"));
	TT_OK(host_exec("fs.mount", args, true, &res));
	TT_EQ(json_object_get_int(json_object_object_get(res, "ret")), HOST_FAILED);
	json_object *r = json_object_array_get_idx(json_object_object_get(res, "reports"), 0);
	TT_EQ(json_object_get_int(json_object_array_get_idx(r, 2)), ENOTSUP);
	json_object_put(res);
	json_object_put(args);

	TT_OK(host_mount_opts_check("ro,noatime,defaults,x-systemd.foo", err, sizeof (err)));
	TT_EQ(host_mount_opts_check("ro,bogus", err, sizeof (err)), EINVAL);
	TT_CHECK(strcmp(err, "invalid mount option 'bogus'") == 0);
}

TT_MAIN(
	{ "unknown_op", test_unknown_op },
	{ "reports_collected", test_reports_collected },
	{ "reports_to_reporter", test_reports_to_reporter },
	{ "emit_parts", test_emit_parts },
	{ "history_line", test_history_line },
	{ "mounts_in_process", test_mounts_in_process },
)
