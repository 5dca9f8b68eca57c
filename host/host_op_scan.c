/*
 * host_op_scan.c — zpool scrub and zpool resilver: start, cancel or
 * pause a pool's scan, and wait for its end; and a pool's scan
 * statistics as JSON, for every operation that shows them (status).
 *
 *   pool.scrub        name, func ("scrub" | "resilver"),
 *                     cmd ("start" | "stop" | "pause"), wait,
 *                     prog ("zpool" or "tarn pool": named in a message)   -
 *
 * A scrub runs in the pool's owner: inside tarnd it goes on after the
 * operation returns (wait: until it ends); run in-process nobody would
 * carry it on, so there "start" always waits.  The wait gives up when
 * the client went away (host_cancelled), reported as EINTR.
 *
 * host_scan_json(spa, obj) puts spa_scan_stat_t into obj as fields:
 *   func ("none" | "scrub" | "resilver"),
 *   state ("none" | "scanning" | "finished" | "canceled"), paused (bool),
 *   start_time, end_time, pass_start (seconds since the epoch),
 *   to_examine, examined, issued, repaired, pass_issued (bytes), errors.
 */
#include "host_impl.h"

#include <time.h>

static const char *const scan_funcs[] = { "none", "scrub", "resilver" };
static const char *const scan_states[] = { "none", "scanning", "finished", "canceled" };

static void
scan_add_u64(json_object *obj, const char *key, uint64_t v)
{
	json_object_object_add(obj, key, json_object_new_uint64(v));
}

void
host_scan_json(spa_t *spa, json_object *obj)
{
	spa_scan_stat_t ss;

	spa_scan_get_stat(spa, &ss);
	json_object_object_add(obj, "func", json_object_new_string(
	    ss.sss_func < ARRAY_SIZE(scan_funcs) ? scan_funcs[ss.sss_func] : "none"));
	json_object_object_add(obj, "state", json_object_new_string(
	    ss.sss_state < ARRAY_SIZE(scan_states) ? scan_states[ss.sss_state] : "none"));
	json_object_object_add(obj, "paused", json_object_new_boolean(ss.sss_paused != 0));
	scan_add_u64(obj, "start_time", ss.sss_start_time);
	scan_add_u64(obj, "end_time", ss.sss_end_time);
	scan_add_u64(obj, "pass_start", ss.sss_pass_start);
	scan_add_u64(obj, "to_examine", ss.sss_to_examine);
	scan_add_u64(obj, "examined", ss.sss_examined);
	scan_add_u64(obj, "issued", ss.sss_issued);
	scan_add_u64(obj, "repaired", ss.sss_repaired);
	scan_add_u64(obj, "pass_issued", ss.sss_pass_issued);
	scan_add_u64(obj, "errors", ss.sss_errors);
}

int
host_scan_wait(spa_t *spa)
{
	struct timespec tick = { 0, 100 * 1000 * 1000 };

	if (!host_daemon_mode())
		return (spa_scan_wait(spa));
	for (;;) {
		spa_scan_stat_t ss;
		spa_scan_get_stat(spa, &ss);
		if (ss.sss_state != SPA_SCAN_STATE_SCANNING || ss.sss_paused)
			return (0);
		if (host_cancelled())
			return (SET_ERROR(EINTR));
		(void) nanosleep(&tick, NULL);
	}
}

/* A scan could not start: say why, as zpool does. */
static int
scrub_start_error(const char *verb, const char *name, const char *prog, spa_t *spa,
    int error)
{
	char msg[256];
	spa_scan_stat_t ss;

	spa_scan_get_stat(spa, &ss);
	if (error == EBUSY && ss.sss_func == SPA_SCAN_RESILVER) {
		(void) snprintf(msg, sizeof (msg), "currently resilvering");
	} else if (error == EBUSY) {
		(void) snprintf(msg, sizeof (msg), "currently scrubbing; use '%s scrub -s' "
		    "to cancel the current scrub", prog);
	} else if (error == EROFS) {
		(void) snprintf(msg, sizeof (msg), "pool is read-only");
	} else {
		msg[0] = '\0';
	}
	return (host_report(verb, name, error, msg));
}

/* Cancel (stop) or pause the pool's scrub. */
static int
scrub_stop(spa_t *spa, const char *verb, const char *name, bool stop)
{
	int error = stop ? spa_scan_stop(spa) : spa_scan_pause(spa);

	if (error == 0)
		host_history_log(spa);
	host_pool_close(spa);
	if (error == ENOENT)
		return (host_report(stop ? "cancel scrubbing" : "pause scrubbing", name, error,
		    "there is no active scrub"));
	if (error == ENOTSUP && !stop)
		return (host_report("pause scrubbing", name, error, "a resilver is running, "
		    "and a resilver cannot be paused"));
	return (error == 0 ? 0 : host_report(verb, name, error, NULL));
}

static int
op_pool_scrub(json_object *args, json_object *res)
{
	const char *name, *func = host_arg_str(args, "func"), *cmd = host_arg_str(args, "cmd");
	const char *prog = host_arg_str(args, "prog");
	bool resilver = func != NULL && strcmp(func, "resilver") == 0;
	const char *verb = resilver ? "resilver" : "scrub";
	char err[1024];
	spa_t *spa;
	int error;

	if (host_arg_need(args, "name", verb, &name) != 0)
		return (HOST_FAILED);
	if ((error = host_pool_open(name, 0, &spa, err, sizeof (err))) != 0)
		return (host_report(verb, name, error, err));
	if (cmd != NULL && (strcmp(cmd, "stop") == 0 || strcmp(cmd, "pause") == 0))
		return (scrub_stop(spa, verb, name, strcmp(cmd, "stop") == 0));
	error = spa_scan_start(spa, resilver ? SPA_SCAN_RESILVER : SPA_SCAN_SCRUB, 0);
	if (error != 0) {
		int ret = scrub_start_error(verb, name, prog != NULL ? prog : "zpool", spa,
		    error);
		host_pool_close(spa);
		return (ret);
	}
	host_history_log(spa);
	if (host_arg_bool(args, "wait") || !host_daemon_mode()) {
		host_pool_unlock(spa);   /* let status and others in meanwhile */
		error = host_scan_wait(spa);
	}
	host_pool_close(spa);
	return (error == 0 ? 0 : host_report(verb, name, error, NULL));
}

const host_op_t host_ops_scan[] = {
	{ "pool.scrub", op_pool_scrub },
	{ NULL, NULL }
};
