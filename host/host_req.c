/*
 * host_req.c — the request a command runs for: where its failures are
 * reported (host_report, through the reporter the caller set for this
 * thread) and whether it should stop early (host_cancelled: inside tarnd,
 * the client hung up or the daemon is stopping), and the client's stdin
 * and stdout (host_client_fd).
 */
#include "host_impl.h"

#include <poll.h>
#include <stdarg.h>

__thread int host_conn_fd_tls = -1;
__thread int host_client_fd_tls[2] = { -1, -1 };
volatile bool host_stopping;
__thread FILE *host_err_tls;
static __thread host_report_fn_t host_reporter;

void
host_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void) vfprintf(host_err_tls != NULL ? host_err_tls : stderr, fmt, ap);
	va_end(ap);
}

void
host_set_reporter(host_report_fn_t fn)
{
	host_reporter = fn;
}

int
host_report(const char *verb, const char *name, int error, const char *msg)
{
	if (host_reporter != NULL)
		host_reporter(verb, name, error, msg);
	else
		fprintf(stderr, "cannot %s '%s': %s\n", verb, name,
		    msg != NULL && msg[0] != '\0' ? msg : tarn_strerror(error));
	return (HOST_FAILED);
}

static __thread host_emit_fn_t host_emitter;
static __thread void *host_emitter_arg;

void
host_set_emitter(host_emit_fn_t fn, void *arg)
{
	host_emitter = fn;
	host_emitter_arg = arg;
}

int
host_emit(json_object *part)
{
	if (host_emitter == NULL) {
		json_object_put(part);
		return (0);
	}
	return (host_emitter(host_emitter_arg, part));
}

int
host_client_fd(int which)
{
	if (which != 0 && which != 1)
		return (-1);
	if (!host_daemon_mode())
		return (which);
	return (host_client_fd_tls[which]);
}

bool
host_cancelled(void)
{
	struct pollfd p = { .fd = host_conn_fd_tls, .events = POLLRDHUP };

	if (host_conn_fd_tls < 0)
		return (false);
	if (host_stopping)
		return (true);
	return (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0);
}
