/*
 * host_wire.h — the control protocol between `tarn` (client) and tarnd, on a
 * UNIX stream socket that only root may use (docs/DESIGN.md, "host").
 * Both ends run on one host, so integers are native uint32.
 *
 * A connection carries one request.  Client to daemon:
 *   u32 magic                    (sent with the client's cwd, and for an
 *                                 operation its stdin and stdout, as
 *                                 SCM_RIGHTS file descriptors)
 *   u32 n, then n strings        (string: u32 length, bytes, no NUL)
 *   u32 nenv, then nenv strings  ("NAME=VALUE": PWD, UMASK, TARN_CACHEFILE,
 *                                 HISTORY, FDS: which descriptor is which,
 *                                 one letter each in the order sent: 'c'
 *                                 cwd, '0' stdin, '1' stdout; absent: the
 *                                 first is the cwd)
 * The magic says what the strings are:
 *   HOST_PROTO_MAGIC_OP  an operation of the host (host_exec): the
 *                        operation's name and its arguments as JSON text;
 *                        HISTORY is the command line to record in the
 *                        pools it changes
 *   HOST_PROTO_MAGIC     a control request of the daemon itself: the words
 *                        "tarn daemon status" or "tarn daemon stop"
 * Reply, daemon to client: frames {u32 type, u32 length, bytes}:
 *   HOST_FRAME_OUT / HOST_FRAME_ERR  bytes for the client's stdout / stderr
 *   HOST_FRAME_PART                  a part of an operation's result sent
 *                                    while it runs (host_emit), JSON text
 *   HOST_FRAME_RESULT                an operation's result, JSON text
 *   HOST_FRAME_EXIT                  length 4: the i32 exit status; last
 */
#ifndef TARN_HOST_WIRE_H
#define TARN_HOST_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HOST_PROTO_MAGIC    0x314e5254u     /* "TRN1" */
#define HOST_PROTO_MAGIC_OP 0x6f4e5254u     /* "TRNo" */
#define HOST_FRAME_OUT     1
#define HOST_FRAME_ERR     2
#define HOST_FRAME_EXIT    3
#define HOST_FRAME_RESULT  4
#define HOST_FRAME_PART    5

#define HOST_PROTO_MAXARGS 4096
#define HOST_PROTO_MAXSTR  (1u << 20)
#define HOST_PROTO_MAXREQ  (4u << 20)       /* all strings together */
#define HOST_PROTO_MAXENV  16
#define HOST_PROTO_MAXRESULT (256u << 20)  /* an operation's result */


#define HOST_SOCKET_DEFAULT "/run/tarn/tarnd.sock"
#define HOST_NOT_ROOT_MSG   "permission denied: the tarn daemon is for root only"

/* $TARN_SOCKET, else HOST_SOCKET_DEFAULT. */
const char *host_socket_path(void);
/* $TARN_RUNDIR, else the socket's directory (buf of PATH_MAX). */
void host_rundir(const char *sock, char *buf, size_t len);

/* Whole reads and writes (EINTR retried).  0 or an errno; EOF is EPIPE. */
int host_write_full(int fd, const void *buf, size_t len);
int host_read_full(int fd, void *buf, size_t len);
int host_send_frame(int fd, uint32_t type, const void *buf, uint32_t len);

#endif /* TARN_HOST_WIRE_H */
