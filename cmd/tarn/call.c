/*
 * call.c — how a verb asks the host for something: cli_call(op, args)
 * runs the host operation op (host_ops.c) in this process when pools are
 * opened here (TARN_NO_DAEMON=1), else sends it to tarnd
 * (client.c) and turns the reply back into the same result.  Failures
 * the host reported come back as [verb, name, errno, message] and are
 * printed here as "cannot VERB 'NAME': message", in the order they
 * happened, so a verb prints the same whichever way it ran.
 */
#include "tarn.h"

bool
cli_no_daemon(void)
{
	const char *v = getenv("TARN_NO_DAEMON");

	return (v != NULL && v[0] != '\0' && strcmp(v, "0") != 0);
}

bool
cli_local(void)
{
	return (cli_no_daemon());
}

/* Print the failures the daemon reported. */
static void
call_reports(json_object *res)
{
	json_object *reps;

	if (!json_object_object_get_ex(res, "reports", &reps))
		return;
	for (size_t i = 0; i < json_object_array_length(reps); i++) {
		json_object *r = json_object_array_get_idx(reps, i);
		const char *msg = json_object_get_string(json_object_array_get_idx(r, 3));
		(void) cli_cannot(json_object_get_string(json_object_array_get_idx(r, 0)),
		    json_object_get_string(json_object_array_get_idx(r, 1)),
		    json_object_get_int(json_object_array_get_idx(r, 2)),
		    json_object_is_type(json_object_array_get_idx(r, 3), json_type_null) ?
		    NULL : msg);
	}
}

typedef struct call_parts {
	cli_call_part_fn_t cp_fn;
	void *cp_arg;
	bool cp_gone;
} call_parts_t;

/* A part run in this process (host_emit's emitter). */
static int
call_part_local(void *arg, json_object *part)
{
	call_parts_t *cp = arg;

	if (!cp->cp_gone && cp->cp_fn(cp->cp_arg, part) != 0)
		cp->cp_gone = true;
	json_object_put(part);
	return (cp->cp_gone ? EPIPE : 0);
}

/* A part the daemon sent. */
static void
call_part_remote(void *arg, const char *text)
{
	call_parts_t *cp = arg;
	json_object *part = json_tokener_parse(text);

	if (part != NULL && !cp->cp_gone && cp->cp_fn(cp->cp_arg, part) != 0)
		cp->cp_gone = true;
	json_object_put(part);
}

int
cli_call(const char *op, json_object *args, json_object **resp)
{
	return (cli_call_parts(op, args, NULL, NULL, resp));
}

int
cli_call_parts(const char *op, json_object *args, cli_call_part_fn_t fn, void *arg,
    json_object **resp)
{
	call_parts_t cp = { .cp_fn = fn, .cp_arg = arg };
	json_object *res = NULL;
	int error, ret;

	*resp = NULL;
	if (cli_local()) {
		if (fn != NULL)
			host_set_emitter(call_part_local, &cp);
		error = host_exec(op, args, false, &res);
		host_set_emitter(NULL, NULL);
	} else {
		char *text = NULL;
		const char *a = json_object_to_json_string_ext(args, JSON_C_TO_STRING_PLAIN);
		fflush(cli_out);
		ret = cli_client_call(op, a, host_history_get(), &text,
		    fn != NULL ? call_part_remote : NULL, &cp);
		if (ret != 0 && text == NULL) {
			json_object_put(args);
			return (ret);
		}
		res = json_tokener_parse(text);
		tarn_free(text);
		error = res != NULL && json_object_is_type(res, json_type_object) ? 0 : EPROTO;
		json_object *e;
		if (error == 0 && json_object_object_get_ex(res, "error", &e))
			error = json_object_get_int(e);    /* the daemon could not run it */
		if (error == 0)
			call_reports(res);
	}
	json_object_put(args);
	if (error != 0) {
		json_object_put(res);
		fprintf(cli_err, "tarn: the %s cannot run '%s': %s%s\n", cli_local() ? "host" :
		    "daemon", op, tarn_strerror(error), error == ENOENT && !cli_local() ?
		    " (a tarnd older than this tarn? restart it: tarn daemon stop)" : "");
		return (CLI_EXIT_ERROR);
	}
	ret = json_object_get_int(json_object_object_get(res, "ret"));
	*resp = res;
	return (ret != 0 ? CLI_EXIT_ERROR : CLI_EXIT_OK);
}
