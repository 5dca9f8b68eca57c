/*
 * host_recv.c — one substream into a file system (placeholder: refuses
 * until the receive side of the host lands).
 */
#include "host_impl.h"

int
host_recv_target_name(const host_recv_args_t *a, const char *target, const char *toname,
    char *out, size_t len)
{
	(void) a; (void) toname;
	(void) snprintf(out, len, "%s", target);
	return (0);
}

int
host_recv_one(struct dsl_pool *dp, const host_recv_args_t *a, const char *target,
    dsl_stream_in_t *si, dsl_recv_result_t *res)
{
	(void) dp; (void) a; (void) si;
	memset(res, 0, sizeof (*res));
	return (host_report("receive", target, ENOTSUP, NULL));
}

char *
host_send_props(struct dsl_pool *dp, const char *fs, size_t *len)
{
	(void) dp; (void) fs;
	*len = 2;
	return (tarn_strdup("{}"));
}
