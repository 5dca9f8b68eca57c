/*
 * dsl_stream.c — records of a send stream (placeholder: the real codec
 * lands next; every call refuses with ENOTSUP).
 */
#include "dsl_impl.h"

struct dsl_stream_out { dsl_stream_write_fn_t fn; void *arg; uint64_t bytes; };
struct dsl_stream_in { dsl_stream_read_fn_t fn; void *arg; uint64_t bytes; };

dsl_stream_out_t *
dsl_stream_out_create(dsl_stream_write_fn_t fn, void *arg)
{
	dsl_stream_out_t *so = tarn_alloc(sizeof (*so));
	so->fn = fn;
	so->arg = arg;
	return (so);
}

uint64_t dsl_stream_out_bytes(const dsl_stream_out_t *so) { return (so->bytes); }
void dsl_stream_out_destroy(dsl_stream_out_t *so) { tarn_free(so); }

dsl_stream_in_t *
dsl_stream_in_create(dsl_stream_read_fn_t fn, void *arg)
{
	dsl_stream_in_t *si = tarn_alloc(sizeof (*si));
	si->fn = fn;
	si->arg = arg;
	return (si);
}

uint64_t dsl_stream_in_bytes(const dsl_stream_in_t *si) { return (si->bytes); }
void dsl_stream_in_destroy(dsl_stream_in_t *si) { tarn_free(si); }

int
dsl_stream_put_package(dsl_stream_out_t *so, const void *payload, size_t len)
{
	(void) so; (void) payload; (void) len;
	return (SET_ERROR(ENOTSUP));
}

int dsl_stream_put_package_end(dsl_stream_out_t *so) { (void) so; return (SET_ERROR(ENOTSUP)); }

int
dsl_stream_peek(dsl_stream_in_t *si, dsl_stream_kind_t *kind, dsl_stream_begin_t *begin,
    char *err, size_t errlen)
{
	(void) si; (void) kind; (void) begin;
	(void) snprintf(err, errlen, "not yet");
	return (SET_ERROR(ENOTSUP));
}

int
dsl_stream_get_package(dsl_stream_in_t *si, char **payload, size_t *len, char *err, size_t errlen)
{
	(void) si; (void) payload; (void) len;
	(void) snprintf(err, errlen, "not yet");
	return (SET_ERROR(ENOTSUP));
}

int
dsl_stream_get_package_end(dsl_stream_in_t *si, char *err, size_t errlen)
{
	(void) si;
	(void) snprintf(err, errlen, "not yet");
	return (SET_ERROR(ENOTSUP));
}
