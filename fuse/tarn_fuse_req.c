/*
 * tarn_fuse_req.c — the request flags libfuse 3.14 does not pass on.
 *
 * The kernel tells a server to clear set-user-ID and set-group-ID in
 * flags of WRITE, OPEN and (extended) SETXATTR requests that libfuse
 * 3.14 neither asks for at INIT nor hands to the handlers.  Our session
 * I/O hooks (tarn_fuse_uring.c, on every mount) give each request to
 * tf_req_begin before libfuse parses it on the same thread, and the INIT
 * reply to tf_req_init_flags, so the handlers can ask
 * tarn_fuse_req_kills_suidgid and tarn_fuse_req_acl_kills_sgid.  Two
 * operations libfuse lacks are handed to it as the ones they resemble:
 * TMPFILE as a CREATE (tarn_fuse_req_tmpfile), STATX as a GETATTR
 * (tarn_fuse_req_statx; the reply is ours, tarn_fuse_reply_statx).
 *
 * Not when requests are spliced: libfuse then reads them itself and the
 * flags would be invisible, so they are not negotiated.
 */
#include "tarn_fuse_impl.h"

#include <linux/fuse.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/*
 * The request this thread is serving as the kernel sent it: the
 * in-header, then the operation's header (NULL: none).
 */
static __thread const char *tf_cur_req;
/* The setxattr_flags of the SETXATTR this thread serves. */
static __thread uint32_t tf_cur_setxattr_flags;
/* The CREATE this thread serves came as a TMPFILE. */
static __thread bool tf_cur_tmpfile;
/* The GETATTR this thread serves came as a STATX. */
static __thread bool tf_cur_statx;

/*
 * FUSE_STATX (protocol 7.39, Linux 6.6), which this system's <linux/fuse.h>
 * predates: a getattr whose reply carries statx fields, the birth time
 * among them.  Layouts as in include/uapi/linux/fuse.h.
 */
#define TF_OP_STATX 52

typedef struct tf_sx_time {
	int64_t  tv_sec;
	uint32_t tv_nsec;
	int32_t  reserved;
} tf_sx_time_t;

typedef struct tf_statx {
	uint32_t mask, blksize;
	uint64_t attributes;
	uint32_t nlink, uid, gid;
	uint16_t mode, spare0;
	uint64_t ino, size, blocks, attributes_mask;
	tf_sx_time_t atime, btime, ctime, mtime;
	uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
	uint64_t spare2[14];
} tf_statx_t;

typedef struct tf_statx_out {
	uint64_t attr_valid;
	uint32_t attr_valid_nsec, flags;
	uint64_t spare[2];
	tf_statx_t stat;
} tf_statx_out_t;

_Static_assert(sizeof (tf_statx_t) == 256, "struct fuse_statx is 256 bytes");
_Static_assert(sizeof (tf_statx_out_t) == 288, "struct fuse_statx_out is 288 bytes");

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
	 * asks tarn_fuse_req_tmpfile.  A STATX starts with a GETATTR's
	 * arguments (flags, file handle; its mask follows, and every field
	 * is answered anyway): tf_getattr asks tarn_fuse_req_statx and
	 * replies with tarn_fuse_reply_statx.
	 */
	tf_cur_tmpfile = in.opcode == FUSE_TMPFILE;
	tf_cur_statx = in.opcode == TF_OP_STATX;
	if (tf_cur_tmpfile || tf_cur_statx) {
		in.opcode = tf_cur_tmpfile ? FUSE_CREATE : FUSE_GETATTR;
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
	tf_swap_leave();
	tf_cur_req = NULL;
	tf_cur_setxattr_flags = 0;
	tf_cur_tmpfile = false;
	tf_cur_statx = false;
}

bool
tarn_fuse_req_tmpfile(void)
{
	return (tf_cur_tmpfile);
}

bool
tarn_fuse_req_statx(void)
{
	return (tf_cur_statx);
}

static tf_sx_time_t
tf_sx_time(const struct timespec *ts)
{
	return ((tf_sx_time_t){ .tv_sec = ts->tv_sec, .tv_nsec = (uint32_t)ts->tv_nsec });
}

int
tarn_fuse_reply_statx(fuse_req_t req, const posix_attr_t *pa, double timeout)
{
	tf_statx_out_t o;
	memset(&o, 0, sizeof (o));
	o.attr_valid = (uint64_t)timeout;
	o.attr_valid_nsec = (uint32_t)((timeout - (double)o.attr_valid) * 1e9);
	tf_statx_t *sx = &o.stat;
	sx->mask = STATX_BASIC_STATS | STATX_BTIME;
	sx->blksize = pa->pa_blksize;
	sx->nlink = (uint32_t)pa->pa_nlink;
	sx->uid = pa->pa_uid;
	sx->gid = pa->pa_gid;
	sx->mode = (uint16_t)pa->pa_mode;
	sx->ino = pa->pa_ino;
	sx->size = pa->pa_size;
	sx->blocks = pa->pa_blocks;
	sx->atime = tf_sx_time(&pa->pa_atime);
	sx->btime = tf_sx_time(&pa->pa_crtime);
	sx->ctime = tf_sx_time(&pa->pa_ctime);
	sx->mtime = tf_sx_time(&pa->pa_mtime);
	sx->rdev_major = major(pa->pa_rdev);
	sx->rdev_minor = minor(pa->pa_rdev);
	return (fuse_reply_buf(req, (const char *)&o, sizeof (o)));
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

void
tarn_fuse_reply_pattr(fuse_req_t req, const posix_attr_t *pa, double timeout)
{
	if (tarn_fuse_req_statx()) {
		(void) tarn_fuse_reply_statx(req, pa, timeout);
		return;
	}
	struct stat st;
	tarn_fuse_attr_to_stat(pa, &st);
	(void) fuse_reply_attr(req, &st, timeout);
}
