/*
 * dsl_send.c — zfs send (placeholder: refuses with ENOTSUP until the
 * engine lands).
 */
#include "dsl_impl.h"

int
dsl_send(dsl_pool_t *dp, const char *snap, const dsl_send_opts_t *opts,
    dsl_stream_out_t *so, char *err, size_t errlen)
{
	(void) dp; (void) snap; (void) opts; (void) so;
	(void) snprintf(err, errlen, "not yet");
	return (SET_ERROR(ENOTSUP));
}

int
dsl_send_estimate(dsl_pool_t *dp, const char *snap, const dsl_send_opts_t *opts,
    uint64_t *bytes, char *err, size_t errlen)
{
	(void) dp; (void) snap; (void) opts;
	*bytes = 0;
	(void) snprintf(err, errlen, "not yet");
	return (SET_ERROR(ENOTSUP));
}

int
dsl_resume_token_parse(const char *token, dsl_resume_t *out, char *err, size_t errlen)
{
	(void) token;
	memset(out, 0, sizeof (*out));
	(void) snprintf(err, errlen, "resume token is corrupt");
	return (SET_ERROR(EINVAL));
}

int
dsl_resume_send_opts(dsl_pool_t *dp, const dsl_resume_t *r, char *snap, size_t snaplen,
    char *from, size_t fromlen, dsl_send_opts_t *opts, char *err, size_t errlen)
{
	(void) dp; (void) r; (void) snap; (void) snaplen; (void) from; (void) fromlen;
	(void) opts;
	(void) snprintf(err, errlen, "not yet");
	return (SET_ERROR(ENOTSUP));
}
