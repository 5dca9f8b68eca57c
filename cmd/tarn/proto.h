/*
 * proto.h — the control protocol between `tarn` (client) and tarnd, on a
 * UNIX stream socket that only root may use (docs/DESIGN.md, "The
 * daemon").  Both ends run on one host, so integers are native uint32.
 *
 * Request, client to daemon, once per connection:
 *   u32 CLI_PROTO_MAGIC          (sent with the client's cwd as an
 *                                 SCM_RIGHTS file descriptor)
 *   u32 argc, then argc strings  (string: u32 length, bytes, no NUL)
 *   u32 nenv, then nenv strings  ("NAME=VALUE": PWD, UMASK, TARN_CACHEFILE)
 * Reply, daemon to client: frames {u32 type, u32 length, bytes}:
 *   CLI_FRAME_OUT / CLI_FRAME_ERR  bytes for the client's stdout / stderr
 *   CLI_FRAME_EXIT                 length 4: the i32 exit status; last
 */
#ifndef TARN_CLI_PROTO_H
#define TARN_CLI_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CLI_PROTO_MAGIC   0x314e5254u     /* "TRN1" */
#define CLI_FRAME_OUT     1
#define CLI_FRAME_ERR     2
#define CLI_FRAME_EXIT    3

#define CLI_PROTO_MAXARGS 4096
#define CLI_PROTO_MAXSTR  (1u << 20)
#define CLI_PROTO_MAXREQ  (4u << 20)       /* all strings together */
#define CLI_PROTO_MAXENV  16

/* The client's exit status when the daemon died during the command. */
#define CLI_EXIT_LOST     255

#define CLI_SOCKET_DEFAULT "/run/tarn/tarnd.sock"
#define CLI_NOT_ROOT_MSG   "permission denied: the tarn daemon is for root only"

/* $TARN_SOCKET, else CLI_SOCKET_DEFAULT. */
const char *cli_socket_path(void);
/* $TARN_RUNDIR, else the socket's directory (buf of PATH_MAX). */
void cli_rundir(const char *sock, char *buf, size_t len);

/* Whole reads and writes (EINTR retried).  0 or an errno; EOF is EPIPE. */
int cli_write_full(int fd, const void *buf, size_t len);
int cli_read_full(int fd, void *buf, size_t len);
int cli_send_frame(int fd, uint32_t type, const void *buf, uint32_t len);

/* client.c: run argv in the daemon (starting it if needed); its status. */
int cli_client_run(int argc, char **argv);
/* client.c: `tarn daemon start|stop|status` (argv[0] is "daemon"). */
int cli_client_daemon(int argc, char **argv);

#endif /* TARN_CLI_PROTO_H */
