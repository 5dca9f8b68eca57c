/*
 * tarn_fuse_req.c — the request flags libfuse 3.14 does not pass on.
 *
 * The kernel tells a server to clear set-user-ID and set-group-ID in
 * flags of WRITE, OPEN and (extended) SETXATTR requests that libfuse
 * 3.14 neither asks for at INIT nor hands to the handlers.  Our session
 * I/O hooks (tarn_fuse_uring.c, on every mount) give each request to
 * tf_req_begin before libfuse parses it on the same thread, and the INIT
 * reply to tf_req_init_flags, so the handlers can ask
 * tarn_fuse_req_kills_suidgid and tarn_fuse_req_acl_kills_sgid.  An
 * operation libfuse lacks, TMPFILE, is handed to it as the CREATE it
 * resembles (tarn_fuse_req_tmpfile).
 *
 * Not when requests are spliced: libfuse then reads them itself and the
 * flags would be invisible, so they are not negotiated.
 */
#include "tarn_fuse_impl.h"

#include <linux/fuse.h>

/*
 * The request this thread is serving as the kernel sent it: the
 * in-header, then the operation's header (NULL: none).
 */
static __thread const char *tf_cur_req;
/* The setxattr_flags of the SETXATTR this thread serves. */
static __thread uint32_t tf_cur_setxattr_flags;
/* The CREATE this thread serves came as a TMPFILE. */
static __thread bool tf_cur_tmpfile;

void
tf_req_init_flags(tarn_fuse_t *t, struct fuse_init_out *io)
{
	if (t->tf_splice)
		return;
	io->flags |= FUSE_HANDLE_KILLPRIV_V2 | FUSE_SETXATTR_EXT;
	t->tf_killpriv_v2 = t->tf_setxattr_ext = true;
}

/*
 * With FUSE_SETXATTR_EXT a SETXATTR's header is 16 bytes, 8 more
 * (setxattr_flags, padding) than libfuse 3.14 reads before the name: the
 * flags are kept for the handler and the rest of the request (in-header,
 * header, name, value) moves down over them.
 */
size_t
tf_req_begin(tarn_fuse_t *t, char *req, size_t len)
{
	struct fuse_in_header in;
	size_t hl = sizeof (in);
	tf_cur_setxattr_flags = 0;
	if (len < hl) {
		tf_cur_req = NULL;
		return (len);
	}
	tf_cur_req = req;
	memcpy(&in, req, sizeof (in));
	/*
	 * O_TMPFILE (FUSE_TMPFILE, which libfuse 3.14 does not know) has a
	 * CREATE's arguments and reply: it goes to tf_create as one, which
	 * asks tarn_fuse_req_tmpfile.
	 */
	tf_cur_tmpfile = in.opcode == FUSE_TMPFILE;
	if (tf_cur_tmpfile) {
		in.opcode = FUSE_CREATE;
		memcpy(req, &in, sizeof (in));
		return (len);
	}
	if (in.opcode != FUSE_SETXATTR || !t->tf_setxattr_ext ||
	    len < hl + sizeof (struct fuse_setxattr_in) || in.len != len)
		return (len);
	struct fuse_setxattr_in sx;
	memcpy(&sx, req + hl, sizeof (sx));
	tf_cur_setxattr_flags = sx.setxattr_flags;
	memmove(req + hl + 8, req + hl + 16, len - hl - 16);
	in.len -= 8;
	memcpy(req, &in, sizeof (in));
	return (len - 8);
}

void
tf_req_end(void)
{
	tf_cur_req = NULL;
	tf_cur_setxattr_flags = 0;
	tf_cur_tmpfile = false;
}

bool
tarn_fuse_req_tmpfile(void)
{
	return (tf_cur_tmpfile);
}

bool
tarn_fuse_req_acl_kills_sgid(void)
{
	return ((tf_cur_setxattr_flags & FUSE_SETXATTR_ACL_KILL_SGID) != 0);
}

bool
tarn_fuse_req_kills_suidgid(void)
{
	const char *p = tf_cur_req;
	if (p == NULL)
		return (false);
	struct fuse_in_header in;
	memcpy(&in, p, sizeof (in));
	p += sizeof (in);
	if (in.opcode == FUSE_WRITE && in.len >= sizeof (in) + sizeof (struct fuse_write_in)) {
		struct fuse_write_in w;
		memcpy(&w, p, sizeof (w));
		return ((w.write_flags & FUSE_WRITE_KILL_SUIDGID) != 0);
	}
	if (in.opcode == FUSE_OPEN && in.len >= sizeof (in) + sizeof (struct fuse_open_in)) {
		struct fuse_open_in o;
		memcpy(&o, p, sizeof (o));
		return ((o.open_flags & FUSE_OPEN_KILL_SUIDGID) != 0);
	}
	return (false);
}
