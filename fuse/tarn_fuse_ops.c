/*
 * tarn_fuse_ops.c — request handlers for names and attributes: lookup,
 * forget, getattr/setattr, the namespace changes (mknod, mkdir, symlink,
 * link, unlink, rmdir, rename), statfs and extended attributes; and the
 * helpers every handler shares (attribute conversion, credentials, entry
 * replies with their lookup-count bookkeeping, error translation).
 * Theory (lookup counts, one reply per request): tarn_fuse.c.
 */
#include "tarn_fuse_impl.h"

#include <limits.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

/* ---- shared helpers ---- */

void
tarn_fuse_attr_to_stat(const posix_attr_t *pa, struct stat *st)
{
	memset(st, 0, sizeof (*st));
	st->st_ino = pa->pa_ino;
	st->st_mode = pa->pa_mode;
	st->st_nlink = pa->pa_nlink;
	st->st_uid = pa->pa_uid;
	st->st_gid = pa->pa_gid;
	st->st_size = (off_t)pa->pa_size;
	st->st_blocks = (blkcnt_t)pa->pa_blocks;
	st->st_rdev = (dev_t)pa->pa_rdev;
	st->st_blksize = pa->pa_blksize;
	st->st_atim = pa->pa_atime;
	st->st_mtim = pa->pa_mtime;
	st->st_ctim = pa->pa_ctime;
}

/*
 * Is the caller in group gid through its supplementary groups (the first
 * TF_KILL_GROUPS of them)?  libfuse reads them from /proc, which is slow:
 * posix_setattr asks only when a kill of set-group-ID depends on it.
 */
#define TF_KILL_GROUPS 64

static bool
tf_cred_in_group(const posix_cred_t *cred, uint32_t gid)
{
	gid_t groups[TF_KILL_GROUPS];
	int n = fuse_req_getgroups(cred->pc_arg, TF_KILL_GROUPS, groups);
	for (int i = 0; i < MIN(n, TF_KILL_GROUPS); i++) {
		if (groups[i] == gid)
			return (true);
	}
	return (false);
}

void
tarn_fuse_cred(fuse_req_t req, posix_cred_t *cred)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	cred->pc_uid = ctx->uid;
	cred->pc_gid = ctx->gid;
	cred->pc_umask = ctx->umask;
	cred->pc_in_group = tf_cred_in_group;
	cred->pc_arg = req;
}

void
tarn_fuse_entry_fill(tarn_fuse_t *t, const tf_tgt_t *tg, const posix_attr_t *pa,
    struct fuse_entry_param *e)
{
	memset(e, 0, sizeof (*e));
	if (tg->tt_kind == TF_SNAP) {
		/* a snapshot never changes: its own generations, no epoch */
		e->ino = tf_snap_key(tg, pa->pa_ino);
		e->generation = tf_snap_gen(tg, pa);
		tarn_fuse_attr_to_stat(pa, &e->attr);
		e->attr_timeout = t->tf_attr_tmo;
		e->entry_timeout = t->tf_entry_tmo;
		return;
	}
	e->ino = TF_FINO(t, pa->pa_ino);
	/*
	 * A new epoch makes every inode the kernel caches stale (tarn_fuse.c).
	 * The kernel keeps and compares only the low 32 bits, so the epoch
	 * changes those: xor with the epoch times an odd constant (distinct
	 * for every epoch modulo 2^32).
	 */
	uint64_t epoch = atomic_load(&t->tf_gen_epoch);
	e->generation = pa->pa_gen ^ (uint32_t)(epoch * 0x9e3779b1u);
	/*
	 * Not the root's: the kernel made its root inode with generation 0
	 * and would mark it bad (the whole mount unusable) on an entry that
	 * names it with another (a LOOKUP of ".." by a file handle).
	 */
	if (pa->pa_ino == t->tf_root)
		e->generation = 0;
	tarn_fuse_attr_to_stat(pa, &e->attr);
	e->attr_timeout = t->tf_attr_tmo;
	e->entry_timeout = t->tf_entry_tmo;
}

void
tarn_fuse_entry_ref(tarn_fuse_t *t, const tf_tgt_t *tg, const posix_attr_t *pa)
{
	if (tg->tt_kind == TF_SNAP) {
		tarn_fuse_nodes_ref(&t->tf_nodes, tf_snap_key(tg, pa->pa_ino));
		tf_snap_kref(t, tg, 1);
		return;
	}
	if (pa->pa_ino == t->tf_root)
		posix_forget(t->tf_fs, pa->pa_ino, 1);
	else
		tarn_fuse_nodes_ref(&t->tf_nodes, pa->pa_ino);
}

void
tarn_fuse_entry_unref(tarn_fuse_t *t, const tf_tgt_t *tg, const posix_attr_t *pa)
{
	if (tg->tt_kind == TF_SNAP) {
		uint64_t n = tarn_fuse_nodes_unref(&t->tf_nodes, tf_snap_key(tg, pa->pa_ino), 1);
		if (n != 0) {
			posix_forget(tg->tt_fs, pa->pa_ino, n);
			tf_snap_kref(t, tg, -1);
		}
		return;
	}
	if (pa->pa_ino == t->tf_root)
		return;
	uint64_t n = tarn_fuse_nodes_unref(&t->tf_nodes, pa->pa_ino, 1);
	if (n != 0)
		posix_forget(t->tf_fs, pa->pa_ino, n);
}

/* Translate a posix error into what a program may see. */
static int
tf_errno(int e)
{
	switch (e) {
	case ECKSUM:
	case ENOTSUP_FORMAT:
	case ERESTART:
		return (EIO);
	case EFRAGS:
		return (ENOSPC);
	case ENOSYS:                    /* the kernel would stop asking for good */
		return (EOPNOTSUPP);
	default:
		return (e > 0 && e < 4096 ? e : EIO);
	}
}

void
tarn_fuse_reply_err(fuse_req_t req, int err)
{
	if (err != 0) {
		tarn_fuse_t *t = fuse_req_userdata(req);
		atomic_fetch_add_explicit(&t->tf_errors, 1, memory_order_relaxed);
		err = tf_errno(err);
	}
	(void) fuse_reply_err(req, err);
}

static pthread_key_t tf_scratch_key;
static pthread_once_t tf_scratch_once = PTHREAD_ONCE_INIT;

typedef struct tf_scratch_buf {
	size_t tsb_size;
	char  *tsb_buf;
} tf_scratch_buf_t;

static void
tf_scratch_free(void *arg)
{
	tf_scratch_buf_t *b = arg;
	tarn_free(b->tsb_buf);
	tarn_free(b);
}

static void
tf_scratch_key_init(void)
{
	VERIFY0(pthread_key_create(&tf_scratch_key, tf_scratch_free));
}

void *
tarn_fuse_scratch(size_t size)
{
	pthread_once(&tf_scratch_once, tf_scratch_key_init);
	tf_scratch_buf_t *b = pthread_getspecific(tf_scratch_key);
	if (b == NULL) {
		b = tarn_alloc(sizeof (*b));
		VERIFY0(pthread_setspecific(tf_scratch_key, b));
	}
	if (b->tsb_size < size) {
		tarn_free(b->tsb_buf);
		b->tsb_size = MAX(P2ROUNDUP(size, 64 * KiB), 1 * MiB + 64 * KiB);
		b->tsb_buf = tarn_alloc_aligned(b->tsb_size);
	}
	return (b->tsb_buf);
}

void
tarn_fuse_reply_entry(tarn_fuse_t *t, fuse_req_t req, const tf_tgt_t *tg, int e,
    const posix_attr_t *pa)
{
	if (e != 0) {
		tarn_fuse_reply_err(req, e);
		return;
	}
	struct fuse_entry_param ep;
	tarn_fuse_entry_fill(t, tg, pa, &ep);
	tarn_fuse_entry_ref(t, tg, pa);
	if (fuse_reply_entry(req, &ep) == -ENOENT)
		tarn_fuse_entry_unref(t, tg, pa);
}

/*
 * Resolve the parent of a namespace change: EROFS under .zfs, EEXIST for
 * a new name .zfs in the root (and EROFS for the old one, that posix
 * does not know).
 */
static int
tf_resolve_new(tarn_fuse_t *t, fuse_ino_t parent, const char *name, bool creates,
    tf_tgt_t *tg)
{
	int e = tf_resolve_rw(t, parent, tg);
	if (e == 0 && tf_is_zfs_name(t, tg, name))
		e = creates ? SET_ERROR(EEXIST) : SET_ERROR(EROFS);
	return (e);
}

/* ---- lookup and forget ---- */

static void
tf_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	tarn_fuse_t *t = tf_enter(req);
	posix_attr_t pa;
	tf_tgt_t tg;
	int e = tf_resolve(t, parent, &tg);
	if (e == 0 && (tg.tt_kind >= TF_ZFSDIR || tf_is_zfs_name(t, &tg, name) ||
	    (tg.tt_kind == TF_SNAP && strcmp(name, "..") == 0 &&
	    tg.tt_ino == posix_fs_root(tg.tt_fs)))) {
		tf_ctl_lookup(t, req, &tg, name);
		tf_tgt_rele(t, &tg);
		return;
	}
	if (e == 0)
		e = posix_lookup(tg.tt_fs, tg.tt_ino, name, &pa);
	if (e == ENOENT) {
		/* a negative entry, cached as long as a positive one */
		struct fuse_entry_param ep;
		memset(&ep, 0, sizeof (ep));
		ep.entry_timeout = t->tf_entry_tmo;
		(void) fuse_reply_entry(req, &ep);
	} else {
		tarn_fuse_reply_entry(t, req, &tg, e, &pa);
	}
	tf_tgt_rele(t, &tg);
}

static void
tf_forget_one(tarn_fuse_t *t, fuse_ino_t ino, uint64_t nlookup)
{
	posix_ino_t pino = TF_PINO(t, ino);
	atomic_fetch_add_explicit(&t->tf_forgets, 1, memory_order_relaxed);
	if (TF_SLOT(ino) == TF_SLOT_CTL)
		return;                 /* .zfs and .zfs/snapshot: not counted */
	if (TF_SLOT(ino) != 0) {
		uint64_t n = tarn_fuse_nodes_unref(&t->tf_nodes, ino, nlookup);
		if (n != 0)
			tf_snap_forget(t, ino, n);
		return;
	}
	if (pino == t->tf_root)
		return;
	if (tf_fino_stale(t, ino)) {    /* its references went with the old fs */
		tarn_fuse_nodes_forget_stale(&t->tf_nodes, pino, nlookup);
		return;
	}
	uint64_t n = tarn_fuse_nodes_unref(&t->tf_nodes, pino, nlookup);
	if (n != 0)
		posix_forget(t->tf_fs, pino, n);
}

static void
tf_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	tarn_fuse_t *t = tf_enter(req);
	tf_forget_one(t, ino, nlookup);
	fuse_reply_none(req);
}

static void
tf_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	tarn_fuse_t *t = tf_enter(req);
	for (size_t i = 0; i < count; i++)
		tf_forget_one(t, forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

/* ---- attributes ---- */

static void
tf_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	tarn_fuse_t *t = tf_enter(req);
	posix_attr_t pa;
	tf_tgt_t tg;
	int e = tf_resolve(t, ino, &tg);
	if (e == 0 && tg.tt_kind >= TF_ZFSDIR) {
		tf_ctl_getattr(t, req, &tg);
		return;
	}
	/* a cached write(2) asks first: refused when the pool is full */
	if (e == 0 && tg.tt_kind == TF_LIVE)
		e = tf_space_gate(t, tg.tt_ino, fi);
	if (e == 0)
		e = posix_getattr(tg.tt_fs, tg.tt_ino, &pa);
	tf_tgt_rele(t, &tg);
	if (e != 0) {
		tarn_fuse_reply_err(req, e);
		return;
	}
	double tmo = tf_space_attr_tmo(t);
	tarn_fuse_reply_pattr(req, &pa, tmo);
}

/* FUSE_SET_ATTR_* -> POSIX_SET_*, with the values in pa. */
static int
tf_setattr_mask(const struct stat *attr, int to_set, posix_attr_t *pa)
{
	int mask = 0;
	memset(pa, 0, sizeof (*pa));
	if (to_set & FUSE_SET_ATTR_MODE) {
		mask |= POSIX_SET_MODE;
		pa->pa_mode = attr->st_mode;
	}
	if (to_set & FUSE_SET_ATTR_UID) {
		mask |= POSIX_SET_UID;
		pa->pa_uid = attr->st_uid;
	}
	if (to_set & FUSE_SET_ATTR_GID) {
		mask |= POSIX_SET_GID;
		pa->pa_gid = attr->st_gid;
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		mask |= POSIX_SET_SIZE;
		pa->pa_size = (uint64_t)attr->st_size;
	}
	if (to_set & FUSE_SET_ATTR_ATIME_NOW) {
		mask |= POSIX_SET_ATIME_NOW;
	} else if (to_set & FUSE_SET_ATTR_ATIME) {
		mask |= POSIX_SET_ATIME;
		pa->pa_atime = attr->st_atim;
	}
	if (to_set & FUSE_SET_ATTR_MTIME_NOW) {
		mask |= POSIX_SET_MTIME_NOW;
	} else if (to_set & FUSE_SET_ATTR_MTIME) {
		mask |= POSIX_SET_MTIME;
		pa->pa_mtime = attr->st_mtim;
	}
	if (to_set & FUSE_SET_ATTR_CTIME) {
		mask |= POSIX_SET_CTIME;
		pa->pa_ctime = attr->st_ctim;
	}
	return (mask);
}

static void
tf_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
    struct fuse_file_info *fi)
{
	tarn_fuse_t *t = tf_enter(req);
	posix_attr_t in, out;
	posix_cred_t cred;
	tarn_fuse_cred(req, &cred);
	int mask = tf_setattr_mask(attr, to_set, &in);
	if (to_set & FUSE_SET_ATTR_KILL_SUID)   /* the kernel's FATTR_KILL_SUIDGID (killpriv v2) */
		mask |= POSIX_SET_KILL_SUIDGID;
	tf_tgt_t tg;
	int e = tf_resolve_rw(t, ino, &tg);
	if (e == 0 && (mask & POSIX_SET_SIZE))  /* no read-around store of the old size after */
		tarn_fuse_nodes_change(&t->tf_nodes, tg.tt_ino);
	if (e == 0)
		e = posix_setattr(tg.tt_fs, tg.tt_ino, &in, mask, &cred, &out);
	if (e != 0) {
		tarn_fuse_reply_err(req, e);
		return;
	}
	struct stat st;
	tarn_fuse_attr_to_stat(&out, &st);
	(void) fuse_reply_attr(req, &st, tf_space_attr_tmo(t));
}

static void
tf_readlink(fuse_req_t req, fuse_ino_t ino)
{
	tarn_fuse_t *t = tf_enter(req);
	char buf[PATH_MAX + 1];
	memset(buf, 0, sizeof (buf));
	tf_tgt_t tg;
	int e = tf_resolve(t, ino, &tg);
	if (e == 0)
		e = tg.tt_kind >= TF_ZFSDIR ? SET_ERROR(EINVAL) :
		    posix_readlink(tg.tt_fs, tg.tt_ino, buf, sizeof (buf) - 1);
	tf_tgt_rele(t, &tg);
	if (e != 0) {
		tarn_fuse_reply_err(req, e);
		return;
	}
	(void) fuse_reply_readlink(req, buf);
}

/* ---- namespace ---- */

static void
tf_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	tarn_fuse_t *t = tf_enter(req);
	posix_cred_t cred;
	posix_attr_t pa;
	tarn_fuse_cred(req, &cred);
	tf_tgt_t tg;
	int e = tf_resolve_new(t, parent, name, true, &tg);
	if (e == 0)
		e = posix_create(tg.tt_fs, tg.tt_ino, name, mode, rdev, &cred, true, &pa);
	tarn_fuse_reply_entry(t, req, &tg, e, &pa);
}

static void
tf_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	tarn_fuse_t *t = tf_enter(req);
	posix_cred_t cred;
	posix_attr_t pa;
	tarn_fuse_cred(req, &cred);
	if (parent == TF_SNAPDIR_ID) {
		tf_ctl_mkdir(t, req, name);
		return;
	}
	tf_tgt_t tg;
	int e = tf_resolve_new(t, parent, name, true, &tg);
	if (e == 0)
		e = posix_mkdir(tg.tt_fs, tg.tt_ino, name, mode, &cred, &pa);
	tarn_fuse_reply_entry(t, req, &tg, e, &pa);
}

static void
tf_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	tarn_fuse_t *t = tf_enter(req);
	posix_cred_t cred;
	posix_attr_t pa;
	tarn_fuse_cred(req, &cred);
	tf_tgt_t tg;
	int e = tf_resolve_new(t, parent, name, true, &tg);
	if (e == 0)
		e = posix_symlink(tg.tt_fs, tg.tt_ino, name, link, &cred, &pa);
	tarn_fuse_reply_entry(t, req, &tg, e, &pa);
}

static void
tf_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	tarn_fuse_t *t = tf_enter(req);
	posix_attr_t pa;
	tf_tgt_t tg, to;
	int e = tf_resolve_new(t, newparent, newname, true, &to);
	if (e == 0 && TF_SLOT(ino) != 0)
		e = SET_ERROR(EXDEV);   /* a snapshot's file: another file system */
	if (e == 0)
		e = tf_resolve(t, ino, &tg);
	if (e == 0)
		e = posix_link(t->tf_fs, tg.tt_ino, to.tt_ino, newname, &pa);
	tarn_fuse_reply_entry(t, req, &to, e, &pa);
}

static void
tf_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	tarn_fuse_t *t = tf_enter(req);
	tf_tgt_t tg;
	int e = tf_resolve_new(t, parent, name, false, &tg);
	if (e == 0)
		e = posix_unlink(tg.tt_fs, tg.tt_ino, name);
	tarn_fuse_reply_err(req, e);
}

static void
tf_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	tarn_fuse_t *t = tf_enter(req);
	if (parent == TF_SNAPDIR_ID) {
		tf_ctl_rmdir(t, req, name);
		return;
	}
	tf_tgt_t tg;
	int e = tf_resolve_new(t, parent, name, false, &tg);
	if (e == 0)
		e = posix_rmdir(tg.tt_fs, tg.tt_ino, name);
	tarn_fuse_reply_err(req, e);
}

/*
 * RENAME_WHITEOUT (overlayfs on top of us) is the rename followed by a
 * whiteout (a 0:0 character device) at the old name: not atomic, but a
 * crash between the two leaves only the rename done.
 */
static void
tf_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
    const char *newname, unsigned int flags)
{
	tarn_fuse_t *t = tf_enter(req);
	unsigned int pflags = 0;
	if (parent == TF_SNAPDIR_ID) {
		tf_ctl_rename(t, req, name, newparent, newname, flags);
		return;
	}
	tf_tgt_t from, to;
	int e = tf_resolve_new(t, parent, name, false, &from);
	if (e == 0)
		e = tf_resolve_new(t, newparent, newname, true, &to);
	if (e == EEXIST)
		e = SET_ERROR(EROFS);   /* over .zfs */
	if (e == 0 && (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT)))
		e = SET_ERROR(EINVAL);
	if (e == 0 && (flags & RENAME_WHITEOUT) && (flags & RENAME_EXCHANGE))
		e = SET_ERROR(EINVAL);
	if (flags & RENAME_NOREPLACE)
		pflags |= POSIX_RENAME_NOREPLACE;
	if (flags & RENAME_EXCHANGE)
		pflags |= POSIX_RENAME_EXCHANGE;
	if (e == 0)
		e = posix_rename(t->tf_fs, from.tt_ino, name, to.tt_ino, newname, pflags);
	if (e == 0 && (flags & RENAME_WHITEOUT)) {
		posix_cred_t cred;
		posix_attr_t pa;
		tarn_fuse_cred(req, &cred);
		cred.pc_umask = 0;
		e = posix_create(t->tf_fs, from.tt_ino, name, S_IFCHR, makedev(0, 0),
		    &cred, true, &pa);
		if (e == 0)
			posix_forget(t->tf_fs, pa.pa_ino, 1);
	}
	tarn_fuse_reply_err(req, e);
}

static void
tf_statfs(fuse_req_t req, fuse_ino_t ino)
{
	tarn_fuse_t *t = tf_enter(req);
	struct statvfs st;
	memset(&st, 0, sizeof (st));
	tf_tgt_t tg;
	int e = tf_resolve(t, ino, &tg);
	if (e == 0)
		e = posix_statfs(tg.tt_kind == TF_SNAP ? tg.tt_fs : t->tf_fs, &st);
	tf_tgt_rele(t, &tg);
	if (e != 0) {
		tarn_fuse_reply_err(req, e);
		return;
	}
	(void) fuse_reply_statfs(req, &st);
}

/* ---- extended attributes ---- */

static void
tf_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
    size_t size, int flags)
{
	tarn_fuse_t *t = tf_enter(req);
	int pflags = 0, e = 0;
	if (flags & ~(XATTR_CREATE | XATTR_REPLACE))
		e = SET_ERROR(EINVAL);
	if (flags & XATTR_CREATE)
		pflags |= POSIX_XATTR_CREATE;
	if (flags & XATTR_REPLACE)
		pflags |= POSIX_XATTR_REPLACE;
	/* the kernel found the caller outside the group and without CAP_FSETID */
	if (tarn_fuse_req_acl_kills_sgid())
		pflags |= POSIX_XATTR_KILL_SGID;        /* (an access ACL's business only) */
	tf_tgt_t tg;
	if (e == 0)
		e = tf_resolve_rw(t, ino, &tg);
	if (e == 0)
		e = posix_setxattr(tg.tt_fs, tg.tt_ino, name, value, size, pflags);
	tarn_fuse_reply_err(req, e);
}

static void
tf_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	tarn_fuse_t *t = tf_enter(req);
	atomic_fetch_add_explicit(&t->tf_getxattrs, 1, memory_order_relaxed);
	size_t len = 0;
	void *buf = size != 0 ? tarn_fuse_scratch(size) : NULL;
	tf_tgt_t tg;
	int e = tf_resolve(t, ino, &tg);
	if (e == 0)
		e = tg.tt_kind >= TF_ZFSDIR ? SET_ERROR(ENODATA) :
		    posix_getxattr(tg.tt_fs, tg.tt_ino, name, buf, size, &len);
	tf_tgt_rele(t, &tg);
	if (e != 0) {
		/* ENODATA is the common answer (security.capability before writes) */
		if (e == ENODATA)
			(void) fuse_reply_err(req, ENODATA);
		else
			tarn_fuse_reply_err(req, e);
		return;
	}
	if (size == 0)
		(void) fuse_reply_xattr(req, len);
	else
		(void) fuse_reply_buf(req, buf, len);
}

static void
tf_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	tarn_fuse_t *t = tf_enter(req);
	size_t len = 0;
	char *buf = size != 0 ? tarn_fuse_scratch(size) : NULL;
	tf_tgt_t tg;
	int e = tf_resolve(t, ino, &tg);
	if (e == 0 && tg.tt_kind < TF_ZFSDIR)
		e = posix_listxattr(tg.tt_fs, tg.tt_ino, buf, size, &len);
	tf_tgt_rele(t, &tg);
	if (e != 0) {
		tarn_fuse_reply_err(req, e);
		return;
	}
	if (size == 0)
		(void) fuse_reply_xattr(req, len);
	else
		(void) fuse_reply_buf(req, buf, len);
}

static void
tf_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	tarn_fuse_t *t = tf_enter(req);
	tf_tgt_t tg;
	int e = tf_resolve_rw(t, ino, &tg);
	if (e == 0)
		e = posix_removexattr(tg.tt_fs, tg.tt_ino, name);
	tarn_fuse_reply_err(req, e);
}

void
tarn_fuse_ops_namespace(struct fuse_lowlevel_ops *ops)
{
	ops->lookup = tf_lookup;
	ops->forget = tf_forget;
	ops->forget_multi = tf_forget_multi;
	ops->getattr = tf_getattr;
	ops->setattr = tf_setattr;
	ops->readlink = tf_readlink;
	ops->mknod = tf_mknod;
	ops->mkdir = tf_mkdir;
	ops->symlink = tf_symlink;
	ops->link = tf_link;
	ops->unlink = tf_unlink;
	ops->rmdir = tf_rmdir;
	ops->rename = tf_rename;
	ops->statfs = tf_statfs;
	ops->setxattr = tf_setxattr;
	ops->getxattr = tf_getxattr;
	ops->listxattr = tf_listxattr;
	ops->removexattr = tf_removexattr;
}
