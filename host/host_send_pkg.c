/*
 * host_send_pkg.c — package streams: send -R / -I and their receive
 * (placeholder: refuses until it lands).
 */
#include "host_impl.h"

int
host_send_package(struct dsl_pool *dp, const host_send_args_t *a, dsl_stream_out_t *so)
{
	(void) dp; (void) so;
	return (host_report("send", a->hsa_snap, ENOTSUP, NULL));
}

int
host_recv_package(struct dsl_pool *dp, const host_recv_args_t *a, const char *target,
    dsl_stream_in_t *si)
{
	(void) dp; (void) a; (void) si;
	return (host_report("receive", target, ENOTSUP, NULL));
}
