/*
 * dsl_recv.c — zfs receive (placeholder: refuses with ENOTSUP until the
 * engine lands).
 */
#include "dsl_impl.h"

int
dsl_receive(dsl_pool_t *dp, const char *target, const dsl_recv_opts_t *opts,
    dsl_stream_in_t *si, dsl_recv_result_t *res, char *err, size_t errlen)
{
	(void) dp; (void) target; (void) opts; (void) si;
	memset(res, 0, sizeof (*res));
	(void) snprintf(err, errlen, "not yet");
	return (SET_ERROR(ENOTSUP));
}

int
dsl_recv_resume_token(dsl_pool_t *dp, const char *fs, char *buf, size_t len)
{
	(void) dp; (void) fs; (void) buf; (void) len;
	return (SET_ERROR(ENOENT));
}

int
dsl_recv_abort(dsl_pool_t *dp, const char *fs, char *err, size_t errlen)
{
	(void) dp;
	(void) snprintf(err, errlen, "'%s' does not have any resumable receive state to abort", fs);
	return (SET_ERROR(ENOENT));
}
