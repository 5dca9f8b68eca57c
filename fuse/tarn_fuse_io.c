/*
 * tarn_fuse_io.c — request handlers for file contents: create and open
 * (with the atomic O_TRUNC), read, write (from memory or from a spliced
 * pipe), release (no flush), fsync, fallocate, SEEK_DATA/SEEK_HOLE and
 * copy_file_range.  Opens keep no state: there is no file handle, and
 * no reference (the kernel's lookup count covers an open file).
 * Theory: tarn_fuse.c.
 */
#include "tarn_fuse_impl.h"

#include <fcntl.h>

#define TF_COPY_CHUNK (1024 * 1024)

/*
 * Truncate to zero for O_TRUNC (times as open(2) sets them), clearing
 * set-user-ID and set-group-ID when the kernel says so (kill).
 */
static int
tf_truncate(tarn_fuse_t *t, fuse_req_t req, posix_ino_t ino, bool kill)
{
	posix_attr_t in, out;
	posix_cred_t cred;
	memset(&in, 0, sizeof (in));
	tarn_fuse_cred(req, &cred);
	tarn_fuse_nodes_change(&t->tf_nodes, ino);
	return (posix_setattr(t->tf_fs, ino, &in, POSIX_SET_SIZE | POSIX_SET_MTIME_NOW |
	    POSIX_SET_CTIME | (kill ? POSIX_SET_KILL_SUIDGID : 0), &cred, &out));
}

/* Clear set-user-ID and set-group-ID before a write, when the kernel says so. */
static int
tf_kill_suidgid(tarn_fuse_t *t, fuse_req_t req, posix_ino_t ino)
{
	posix_attr_t in;
	posix_cred_t cred;
	memset(&in, 0, sizeof (in));
	tarn_fuse_cred(req, &cred);
	return (posix_setattr(t->tf_fs, ino, &in, POSIX_SET_KILL_SUIDGID, &cred, NULL));
}

/*
 * What the kernel may do with an open file: keep its cached pages.  The
 * handle says whether the open may write (tf_space_open).
 */
static void
tf_open_flags(tarn_fuse_t *t, posix_ino_t ino, struct fuse_file_info *fi)
{
	tf_space_open(t, ino, fi);
	fi->keep_cache = 1;
	fi->noflush = 1;        /* ignored with the writeback cache; why no FLUSH comes: tf_release */
	fi->direct_io = 0;
}

static void
tf_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
    struct fuse_file_info *fi)
{
	tarn_fuse_t *t = tf_enter(req);
	posix_cred_t cred;
	posix_attr_t pa;
	tarn_fuse_cred(req, &cred);
	bool tmp = tarn_fuse_req_tmpfile();
	tf_tgt_t tg;
	int e = tf_resolve_rw(t, parent, &tg);
	if (e == 0 && !tmp && tf_is_zfs_name(t, &tg, name))
		e = SET_ERROR(EEXIST);
	if (e == 0)
		e = tmp ? posix_tmpfile(t->tf_fs, tg.tt_ino, mode, &cred, &pa) :
		    posix_create(t->tf_fs, tg.tt_ino, name, mode, 0, &cred,
		    (fi->flags & O_EXCL) != 0, &pa);
	if (e == 0 && !tmp && (fi->flags & O_TRUNC) && pa.pa_size != 0) {
		/* it existed after all (created since the kernel's lookup) */
		posix_ino_t ino = pa.pa_ino;
		e = tf_truncate(t, req, ino, false);
		if (e == 0)
			e = posix_getattr(t->tf_fs, ino, &pa);
		if (e != 0)
			posix_forget(t->tf_fs, ino, 1);
	}
	if (e != 0) {
		tarn_fuse_reply_err(req, e);
		return;
	}
	struct fuse_entry_param ep;
	tarn_fuse_entry_fill(t, &tg, &pa, &ep);
	tarn_fuse_entry_ref(t, &tg, &pa);
	tf_open_flags(t, pa.pa_ino, fi);
	if (fuse_reply_create(req, &ep, fi) == -ENOENT)
		tarn_fuse_entry_unref(t, &tg, &pa);
}

static void
tf_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	tarn_fuse_t *t = tf_enter(req);
	int e = 0;
	if (TF_SLOT(ino) != 0) {
		/* a snapshot's file: read-only, cached like any other */
		if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) {
			tarn_fuse_reply_err(req, SET_ERROR(EROFS));
			return;
		}
		fi->fh = 0;
		fi->keep_cache = 1;
		fi->noflush = 1;
		tf_snap_open(t, ino, 1);
		if (fuse_reply_open(req, fi) == -ENOENT)
			tf_snap_open(t, ino, -1);
		return;
	}
	if (fi->flags & O_TRUNC)
		e = tf_truncate(t, req, TF_PINO(t, ino), tarn_fuse_req_kills_suidgid());
	if (e != 0) {
		tarn_fuse_reply_err(req, e);
		return;
	}
	tf_open_flags(t, TF_PINO(t, ino), fi);
	(void) fuse_reply_open(req, fi);
}

/*
 * Read without a copy of our own: the object layer lends the cached
 * blocks the read covers (dmu_loan_begin, see dmu.h), and the reply is
 * a gather list of those blocks and the scratch buffer (for the pieces
 * it copied: holes, small or uncached pieces); the kernel's copy into
 * its page cache is the only one.  The loan ends once the reply is
 * written; nothing else may happen while it lasts.
 */
#define TF_READ_IOV (2 * DMU_LOAN_SEGS + 1)

static void tf_read_reply(tarn_fuse_t *t, fuse_req_t req, posix_fs_t *fs, posix_ino_t pino,
    size_t size, off_t off);

static void
tf_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	tarn_fuse_t *t = tf_enter(req);
	tf_tgt_t tg;
	int e = off < 0 ? SET_ERROR(EINVAL) : tf_resolve(t, ino, &tg);
	if (e == 0 && tg.tt_kind >= TF_ZFSDIR)
		e = SET_ERROR(EISDIR);
	if (e != 0) {
		tarn_fuse_reply_err(req, e);
		return;
	}
	tf_read_reply(t, req, tg.tt_fs, tg.tt_ino, size, off);
	if (tg.tt_kind == TF_LIVE)
		tf_around_hint(t, tg.tt_fs, tg.tt_ino, (uint64_t)off, size);
	tf_tgt_rele(t, &tg);
}

/*
 * The read path, for the live file system and snapshots alike: ino of fs,
 * size bytes at off.
 */
static void
tf_read_reply(tarn_fuse_t *t, fuse_req_t req, posix_fs_t *fs, posix_ino_t pino, size_t size,
    off_t off)
{
	uint8_t *buf = tarn_fuse_scratch(size);
	uint64_t n = 0;
	dmu_loan_t dl;
	/*
	 * atime first: a stat the program makes once the read returned sees
	 * it, and no transaction is ever waited for while a loan holds
	 * writers of the file back.
	 */
	posix_touch_atime(fs, pino);
	dmu_loan_begin(&dl, buf, size);
	int e = posix_read(fs, pino, (uint64_t)off, size, buf, &n);
	if (e != 0) {
		dmu_loan_end(&dl);
		tarn_fuse_reply_err(req, e);
		return;
	}
	if (dl.dl_nsegs == 0) {
		dmu_loan_end(&dl);
		(void) fuse_reply_buf(req, (const char *)buf, n);
	} else {
		struct iovec iov[TF_READ_IOV];
		int cnt = 0;
		uint64_t at = 0;
		for (int i = 0; i < dl.dl_nsegs && at < n; i++) {
			const dmu_loan_seg_t *sg = &dl.dl_segs[i];
			uint64_t so = MIN(sg->dls_off, n), se = MIN(sg->dls_off + sg->dls_len, n);
			if (so > at)
				iov[cnt++] = (struct iovec){ buf + at, so - at };
			if (se > so)
				iov[cnt++] = (struct iovec){ (void *)sg->dls_data, se - so };
			at = MAX(at, se);
		}
		if (n > at)
			iov[cnt++] = (struct iovec){ buf + at, n - at };
		(void) fuse_reply_iov(req, iov, cnt);
		dmu_loan_end(&dl);
	}
}

static void
tf_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in, off_t off,
    struct fuse_file_info *fi)
{
	tarn_fuse_t *t = tf_enter(req);
	size_t size = fuse_buf_size(in);
	const void *data;
	int e = 0;
	if (in->count == 1 && !(in->buf[0].flags & FUSE_BUF_IS_FD)) {
		data = in->buf[0].mem;
	} else {
		/* spliced: the data waits in a pipe */
		void *buf = tarn_fuse_scratch(size);
		struct fuse_bufvec dst = FUSE_BUFVEC_INIT(size);
		dst.buf[0].mem = buf;
		ssize_t r = fuse_buf_copy(&dst, in, 0);
		if (r < 0)
			e = SET_ERROR((int)-r);
		else
			size = (size_t)r;
		data = buf;
	}
	posix_cred_t cred;
	tarn_fuse_cred(req, &cred);
	uint64_t n = 0;
	if (e == 0 && off < 0)
		e = SET_ERROR(EINVAL);
	if (e == 0 && TF_SLOT(ino) != 0)
		e = SET_ERROR(EROFS);
	/* cleared before the data changes: a crash between leaves the bits off */
	if (e == 0 && tarn_fuse_req_kills_suidgid())
		e = tf_kill_suidgid(t, req, TF_PINO(t, ino));
	bool cached = fi != NULL && fi->writepage;
	if (e == 0 && cached)   /* accepted by write(2) long ago: may use the reserve */
		e = posix_write_cached(t->tf_fs, TF_PINO(t, ino), (uint64_t)off, size, data,
		    &cred, &n);
	else if (e == 0)
		e = posix_write(t->tf_fs, TF_PINO(t, ino), (uint64_t)off, size, data, &cred, &n);
	if (cached && (e != 0 || n < size)) {
		/*
		 * The kernel's page cache wrote this: fsync and close must say
		 * so.  The kernel ignores the count of a short write-back, so
		 * a part written is answered as a failure too (tf_release).
		 */
		if (e == 0)
			e = SET_ERROR(EIO);
		n = 0;
		tarn_fuse_nodes_set_error(&t->tf_nodes, TF_PINO(t, ino), e);
		/*
		 * The kernel keeps the size it grew with the write: the size
		 * on disk follows (the failed part a hole), before the reply
		 * lets a truncate in (theory: tarn_fuse_space.c).
		 */
		if (off >= 0)
			(void) posix_extend(t->tf_fs, TF_PINO(t, ino), (uint64_t)off + size);
	}
	if (e != 0 && n == 0) {
		tarn_fuse_reply_err(req, e);
	} else {
		(void) fuse_reply_write(req, n);
	}
	if (cached && off >= 0)
		tf_space_written(t, TF_PINO(t, ino), (uint64_t)off, size, e);
}

/*
 * No FLUSH handler: libfuse answers ENOSYS to the first one and the
 * kernel sends no more (a round trip less on every close; creating a file
 * and closing it took four).  We keep no locks and no per-open state, and
 * a close still reports a failed write-back: the kernel writes the file's
 * dirty pages back and checks their errors before it would send FLUSH.
 * For that to work a failed write-back must fail as a whole (tf_write_buf).
 *
 * A failed write-back is also kept on the inode for the next fsync, in
 * case the kernel's record of it was taken by someone else (a close of
 * another descriptor, a sync); the release of an open file drops it, so
 * a later open does not inherit an error that was already reported.
 */
static void
tf_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	tarn_fuse_t *t = tf_enter(req);
	if (TF_SLOT(ino) != 0) {
		tf_snap_open(t, ino, -1);
		tarn_fuse_reply_err(req, 0);
		return;
	}
	tf_space_release(t, TF_PINO(t, ino), fi);
	if (fi != NULL && (fi->flags & O_ACCMODE) != O_RDONLY)
		(void) tarn_fuse_nodes_take_error(&t->tf_nodes, TF_PINO(t, ino));
	tarn_fuse_reply_err(req, 0);
}

/*
 * No attribute invalidation after the fsync: with the intent log an
 * fsync does not sync the txg, so the space the file takes (st_blocks,
 * an estimate until its txg is on disk, as on ZFS) has not changed, and
 * dropping the kernel's attributes cost a GETATTR before the next write
 * (and made the kernel ask for security.capability again).
 */
static void
tf_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	tarn_fuse_t *t = tf_enter(req);
	if (TF_SLOT(ino) != 0) {               /* nothing of a snapshot is unwritten */
		tarn_fuse_reply_err(req, 0);
		return;
	}
	int e = posix_fsync(t->tf_fs, TF_PINO(t, ino), datasync != 0);
	int wb = tarn_fuse_nodes_take_error(&t->tf_nodes, TF_PINO(t, ino));
	tarn_fuse_reply_err(req, e != 0 ? e : wb);
}

static void
tf_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
    struct fuse_file_info *fi)
{
	tarn_fuse_t *t = tf_enter(req);
	int e = offset < 0 || length <= 0 ? SET_ERROR(EINVAL) :
	    TF_SLOT(ino) != 0 ? SET_ERROR(EROFS) :
	    posix_falloc(t->tf_fs, TF_PINO(t, ino), mode, (uint64_t)offset, (uint64_t)length);
	tarn_fuse_reply_err(req, e);
}

static void
tf_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, struct fuse_file_info *fi)
{
	tarn_fuse_t *t = tf_enter(req);
	uint64_t out = 0;
	int e = 0;
	if ((whence != SEEK_DATA && whence != SEEK_HOLE) || off < 0)
		e = SET_ERROR(EINVAL);
	tf_tgt_t tg = { 0 };
	if (e == 0)
		e = tf_resolve(t, ino, &tg);
	if (e == 0)
		e = tg.tt_kind >= TF_ZFSDIR ? SET_ERROR(EINVAL) :
		    posix_lseek(tg.tt_fs, tg.tt_ino, (uint64_t)off, whence, &out);
	tf_tgt_rele(t, &tg);
	if (e != 0) {
		tarn_fuse_reply_err(req, e);
		return;
	}
	(void) fuse_reply_lseek(req, (off_t)out);
}

/*
 * Copy inside the server: one copy per byte instead of two round trips
 * through the kernel.  The kernel has written back both ranges first.
 */
static void
tf_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
    struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
    struct fuse_file_info *fi_out, size_t len, int flags)
{
	tarn_fuse_t *t = tf_enter(req);
	posix_cred_t cred;
	tarn_fuse_cred(req, &cred);
	int e = flags != 0 || off_in < 0 || off_out < 0 ? SET_ERROR(EINVAL) : 0;
	tf_tgt_t in = { 0 }, out = { 0 };
	if (e == 0)
		e = tf_resolve_rw(t, ino_out, &out);
	if (e == 0)
		e = tf_resolve(t, ino_in, &in);   /* a snapshot's file may be the source */
	if (e == 0 && in.tt_kind >= TF_ZFSDIR)
		e = SET_ERROR(EISDIR);
	posix_ino_t src = in.tt_ino, dst = out.tt_ino;
	void *buf = tarn_fuse_scratch(MIN(len, TF_COPY_CHUNK));
	uint64_t done = 0;
	while (e == 0 && done < len) {
		uint64_t chunk = MIN(len - done, TF_COPY_CHUNK), n = 0, w = 0;
		e = posix_read(in.tt_fs, src, (uint64_t)off_in + done, chunk, buf, &n);
		if (e != 0 || n == 0)
			break;
		e = posix_write(t->tf_fs, dst, (uint64_t)off_out + done, n, buf, &cred, &w);
		done += w;
		if (w < n || n < chunk)
			break;
	}
	tf_tgt_rele(t, &in);
	if (e != 0 && done == 0) {
		tarn_fuse_reply_err(req, e);
		return;
	}
	(void) fuse_reply_write(req, done);
}

void
tarn_fuse_ops_data(struct fuse_lowlevel_ops *ops)
{
	ops->create = tf_create;
	ops->open = tf_open;
	ops->read = tf_read;
	ops->write_buf = tf_write_buf;
	ops->release = tf_release;
	ops->fsync = tf_fsync;
	ops->fallocate = tf_fallocate;
	ops->lseek = tf_lseek;
	ops->copy_file_range = tf_copy_file_range;
}
