/*
 * host_wire.c — what the client and the daemon share of the control
 * protocol (host_wire.h): where the socket is, and whole reads and writes.
 */
#include "host_wire.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *
host_socket_path(void)
{
	const char *s = getenv("TARN_SOCKET");

	return (s != NULL && s[0] != '\0' ? s : HOST_SOCKET_DEFAULT);
}

void
host_rundir(const char *sock, char *buf, size_t len)
{
	const char *r = getenv("TARN_RUNDIR");
	char copy[PATH_MAX];

	if (r != NULL && r[0] != '\0') {
		(void) snprintf(buf, len, "%s", r);
		return;
	}
	(void) snprintf(copy, sizeof (copy), "%s", sock);
	(void) snprintf(buf, len, "%s", dirname(copy));
}

int
host_write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return (n < 0 ? errno : EPIPE);
		p += n;
		len -= (size_t)n;
	}
	return (0);
}

int
host_read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len > 0) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return (n < 0 ? errno : EPIPE);
		p += n;
		len -= (size_t)n;
	}
	return (0);
}

int
host_send_frame(int fd, uint32_t type, const void *buf, uint32_t len)
{
	uint32_t hdr[2] = { type, len };
	int error;

	if ((error = host_write_full(fd, hdr, sizeof (hdr))) != 0)
		return (error);
	return (len > 0 ? host_write_full(fd, buf, len) : 0);
}
