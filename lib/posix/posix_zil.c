/*
 * posix_zil.c — the file system's side of the intent log (lib/zil):
 * which changes are logged, and replay at mount.
 *
 * Logged: file writes (posix_zil_write, with the file's new mtime),
 * creates, removes, links, renames, setattrs, and on pools with the
 * log_xattr_punch feature xattr changes and hole punches, each with the
 * times it left (docs/FORMAT.md "Intent log").  An operation that logs
 * itself writes its znodes inside posix_zil_begin/end; any other change
 * goes through zn_write, which notes its txg as unlogged, so that an
 * fsync soon after it syncs the txg (zil.c's theory).  Atime updates go
 * through zn_write_logged: losing one in a crash is allowed, and they must
 * not turn every fsync after a read into a txg sync.  Replay runs at open,
 * after the space counters are loaded and before the unlinked set is
 * reclaimed: each record is applied again through the file system's own
 * operations, then the times are set back to what the change made them.
 */
#include "posix_impl.h"

/* > 0 while a logged operation writes its znodes (they are its record) */
static __thread int pz_quiet;

void
posix_zil_unlogged(posix_fs_t *fs, dmu_tx_t *tx)
{
	if (fs->fs_zil != NULL && pz_quiet == 0)
		zil_log_unlogged(fs->fs_zil, dmu_tx_get_txg(tx));
}

void
posix_zil_begin(void)
{
	pz_quiet++;
}

void
posix_zil_end(posix_fs_t *fs, dmu_tx_t *tx, int err)
{
	pz_quiet--;
	if (err != 0)
		posix_zil_unlogged(fs, tx);    /* part of it may have happened */
}

/* ---- namespace records: payloads (docs/FORMAT.md "Intent log") ---- */

typedef struct pz_create {
	uint64_t pc_dir, pc_mode, pc_uid, pc_gid, pc_rdev;
	uint64_t pc_time[2];            /* atime = mtime = ctime after the create */
	uint32_t pc_namelen, pc_targetlen;
} pz_create_t;

typedef struct pz_remove {
	uint64_t pr_dir;
	uint32_t pr_rmdir, pr_namelen;
} pz_remove_t;

typedef struct pz_link {
	uint64_t pl_dir;
	uint32_t pl_namelen, pl_pad;
} pz_link_t;

typedef struct pz_rename {
	uint64_t pn_sdir, pn_ddir;
	uint32_t pn_flags, pn_snamelen, pn_dnamelen, pn_pad;
} pz_rename_t;

typedef struct pz_setattr {
	uint64_t ps_mode, ps_uid, ps_gid, ps_size;
	uint64_t ps_atime[2], ps_mtime[2], ps_ctime[2];
} pz_setattr_t;

typedef struct pz_xattr {
	uint32_t px_namelen, px_remove;
	uint64_t px_size;               /* value bytes after the name */
} pz_xattr_t;

typedef struct pz_punch {
	uint64_t pp_off, pp_len;
} pz_punch_t;

/* Header + up to two strings into one buffer, then log it. */
static void
pz_log(posix_fs_t *fs, dmu_tx_t *tx, uint32_t type, uint64_t obj, const void *hdr,
    size_t hlen, const char *a, size_t alen, const char *b, size_t blen)
{
	size_t len = hlen + alen + blen;
	if (len > ZIL_LR_MAXPAYLOAD) {
		posix_zil_unlogged(fs, tx);
		return;
	}
	uint8_t *buf = tarn_alloc(len);
	memcpy(buf, hdr, hlen);
	if (alen > 0)
		memcpy(buf + hlen, a, alen);
	if (blen > 0)
		memcpy(buf + hlen + alen, b, blen);
	zil_log_op(fs->fs_zil, type, obj, dmu_tx_get_txg(tx), buf, (uint32_t)len);
	tarn_free(buf);
}

/* An inode's times after a change to it or in it (replay sets them back). */
static void
pz_times(posix_fs_t *fs, dmu_tx_t *tx, posix_ino_t ino, const znode_phys_t *zp)
{
	uint64_t t[6] = { zp->zp_atime[0], zp->zp_atime[1], zp->zp_mtime[0],
		zp->zp_mtime[1], zp->zp_ctime[0], zp->zp_ctime[1] };
	zil_log_times(fs->fs_zil, ino, t, dmu_tx_get_txg(tx));
}

void
posix_zil_times(posix_fs_t *fs, dmu_tx_t *tx, posix_ino_t ino, const znode_phys_t *zp)
{
	if (fs->fs_zil != NULL && zp->zp_nlink > 0)
		pz_times(fs, tx, ino, zp);
}

/* A setattr record of the whole new state: replaying it in order gives the same result. */
static void
pz_state(posix_fs_t *fs, dmu_tx_t *tx, posix_ino_t ino, const znode_phys_t *zp)
{
	pz_setattr_t a = { .ps_mode = zp->zp_mode, .ps_uid = zp->zp_uid, .ps_gid = zp->zp_gid,
		.ps_size = zp->zp_size,
		.ps_atime = { zp->zp_atime[0], zp->zp_atime[1] },
		.ps_mtime = { zp->zp_mtime[0], zp->zp_mtime[1] },
		.ps_ctime = { zp->zp_ctime[0], zp->zp_ctime[1] } };
	pz_log(fs, tx, ZIL_LR_SETATTR, ino, &a, sizeof (a), NULL, 0, NULL, 0);
}

void
posix_zil_create(posix_fs_t *fs, dmu_tx_t *tx, posix_ino_t dir, const znode_phys_t *dzp,
    const char *name, posix_ino_t obj, const znode_phys_t *zp, const char *target)
{
	if (fs->fs_zil == NULL)
		return;
	pz_create_t c = { .pc_dir = dir, .pc_mode = zp->zp_mode, .pc_uid = zp->zp_uid,
		.pc_gid = zp->zp_gid, .pc_rdev = zp->zp_rdev,
		.pc_time = { zp->zp_mtime[0], zp->zp_mtime[1] },
		.pc_namelen = (uint32_t)strlen(name),
		.pc_targetlen = target != NULL ? (uint32_t)strlen(target) : 0 };
	pz_log(fs, tx, ZIL_LR_CREATE, obj, &c, sizeof (c), name, c.pc_namelen, target,
	    c.pc_targetlen);
	pz_times(fs, tx, dir, dzp);
}

void
posix_zil_remove(posix_fs_t *fs, dmu_tx_t *tx, posix_ino_t dir, const znode_phys_t *dzp,
    const char *name, posix_ino_t child, bool rmdir)
{
	if (fs->fs_zil == NULL)
		return;
	pz_remove_t r = { .pr_dir = dir, .pr_rmdir = rmdir, .pr_namelen = (uint32_t)strlen(name) };
	pz_log(fs, tx, ZIL_LR_REMOVE, child, &r, sizeof (r), name, r.pr_namelen, NULL, 0);
	pz_times(fs, tx, dir, dzp);
}

void
posix_zil_link(posix_fs_t *fs, dmu_tx_t *tx, posix_ino_t ino, posix_ino_t newdir,
    const znode_phys_t *dzp, const char *newname)
{
	if (fs->fs_zil == NULL)
		return;
	pz_link_t l = { .pl_dir = newdir, .pl_namelen = (uint32_t)strlen(newname) };
	pz_log(fs, tx, ZIL_LR_LINK, ino, &l, sizeof (l), newname, l.pl_namelen, NULL, 0);
	pz_times(fs, tx, newdir, dzp);
}

void
posix_zil_rename(posix_fs_t *fs, dmu_tx_t *tx, posix_ino_t sdir, const znode_phys_t *sdzp,
    const char *sname, posix_ino_t ddir, const znode_phys_t *ddzp, const char *dname,
    unsigned int flags)
{
	if (fs->fs_zil == NULL)
		return;
	pz_rename_t r = { .pn_sdir = sdir, .pn_ddir = ddir, .pn_flags = flags,
		.pn_snamelen = (uint32_t)strlen(sname), .pn_dnamelen = (uint32_t)strlen(dname) };
	pz_log(fs, tx, ZIL_LR_RENAME, sdir, &r, sizeof (r), sname, r.pn_snamelen, dname,
	    r.pn_dnamelen);
	pz_times(fs, tx, sdir, sdzp);
	if (ddir != sdir)
		pz_times(fs, tx, ddir, ddzp);
}

void
posix_zil_write(posix_fs_t *fs, posix_ino_t ino, uint64_t off, uint64_t len,
    const uint64_t mtime[2], dmu_tx_t *tx)
{
	if (fs->fs_zil != NULL)
		zil_log_write(fs->fs_zil, ino, off, len, dmu_tx_get_txg(tx), mtime);
}

/*
 * Write the znode of a setattr: a change of times only (what the kernel
 * sends before an fsync when it keeps mtime itself) is logged as the
 * three times; anything else is unlogged.
 */
int
posix_zil_setattr(posix_fs_t *fs, posix_ino_t ino, int mask, const znode_phys_t *old,
    const znode_phys_t *zp, dmu_tx_t *tx)
{
	const int times = POSIX_SET_ATIME | POSIX_SET_MTIME | POSIX_SET_ATIME_NOW |
	    POSIX_SET_MTIME_NOW | POSIX_SET_CTIME;
	if (fs->fs_zil == NULL)
		return (zn_write(fs, ino, old, zp, tx));
	int err = zn_write_logged(fs, ino, old, zp, tx);
	if (err != 0) {
		posix_zil_unlogged(fs, tx);
		return (err);
	}
	if ((mask & ~times) == 0)
		pz_times(fs, tx, ino, zp);
	else
		pz_state(fs, tx, ino, zp);
	return (0);
}

bool
posix_zil_xattr_loggable(posix_fs_t *fs, const char *name, size_t size)
{
	return (zil_xattr_punch(fs->fs_zil) &&
	    sizeof (pz_xattr_t) + strlen(name) + size <= ZIL_LR_MAXPAYLOAD);
}

void
posix_zil_xattr(posix_fs_t *fs, dmu_tx_t *tx, posix_ino_t ino, const char *name,
    const void *value, size_t size, bool remove, const znode_phys_t *zp, bool whole)
{
	pz_xattr_t x = { .px_namelen = (uint32_t)strlen(name), .px_remove = remove,
		.px_size = remove ? 0 : size };
	pz_log(fs, tx, ZIL_LR_XATTR, ino, &x, sizeof (x), name, x.px_namelen, value,
	    (size_t)x.px_size);
	if (whole)
		pz_state(fs, tx, ino, zp);
	else
		pz_times(fs, tx, ino, zp);
}

bool
posix_zil_punch_loggable(posix_fs_t *fs)
{
	return (zil_xattr_punch(fs->fs_zil));
}

void
posix_zil_punch(posix_fs_t *fs, dmu_tx_t *tx, posix_ino_t ino, uint64_t off, uint64_t len,
    const znode_phys_t *zp)
{
	pz_punch_t pp = { .pp_off = off, .pp_len = len };
	pz_log(fs, tx, ZIL_LR_PUNCH, ino, &pp, sizeof (pp), NULL, 0, NULL, 0);
	pz_times(fs, tx, ino, zp);
}

static int
posix_zil_replay_times(posix_fs_t *fs, const zil_lr_t *lr, const void *data)
{
	uint64_t t[6];
	memcpy(t, data, sizeof (t));
	posix_attr_t a;
	memset(&a, 0, sizeof (a));
	a.pa_atime.tv_sec = (time_t)t[0];
	a.pa_atime.tv_nsec = (long)t[1];
	a.pa_mtime.tv_sec = (time_t)t[2];
	a.pa_mtime.tv_nsec = (long)t[3];
	a.pa_ctime.tv_sec = (time_t)t[4];
	a.pa_ctime.tv_nsec = (long)t[5];
	int err = posix_setattr(fs, lr->lr_obj, &a,
	    POSIX_SET_ATIME | POSIX_SET_MTIME | POSIX_SET_CTIME, NULL, NULL);
	return (err == ENOENT ? 0 : err);
}

static void
pz_ts(struct timespec *ts, const uint64_t t[2])
{
	ts->tv_sec = (time_t)t[0];
	ts->tv_nsec = (long)t[1];
}

/* The next string of a payload: within the record, no NUL inside. */
static int
pz_str(const zil_lr_t *lr, const uint8_t *data, size_t hlen, size_t *off, size_t len,
    char *out, size_t cap)
{
	if (hlen + *off + len > lr->lr_len || len >= cap)
		return (SET_ERROR(EINVAL));
	memcpy(out, data + hlen + *off, len);
	out[len] = '\0';
	if (strlen(out) != len)
		return (SET_ERROR(EINVAL));
	*off += len;
	return (0);
}

/* Set the logged attributes exactly (after a create or for a setattr). */
static int
pz_apply_attrs(posix_fs_t *fs, posix_ino_t ino, const pz_setattr_t *a, bool size)
{
	posix_attr_t at;
	memset(&at, 0, sizeof (at));
	at.pa_mode = (uint32_t)a->ps_mode;
	at.pa_uid = (uint32_t)a->ps_uid;
	at.pa_gid = (uint32_t)a->ps_gid;
	at.pa_size = a->ps_size;
	pz_ts(&at.pa_atime, a->ps_atime);
	pz_ts(&at.pa_mtime, a->ps_mtime);
	pz_ts(&at.pa_ctime, a->ps_ctime);
	int mask = POSIX_SET_MODE | POSIX_SET_UID | POSIX_SET_GID | POSIX_SET_ATIME |
	    POSIX_SET_MTIME | POSIX_SET_CTIME | (size ? POSIX_SET_SIZE : 0);
	return (posix_setattr(fs, ino, &at, mask, NULL, NULL));
}

static int
pz_replay_create(posix_fs_t *fs, const zil_lr_t *lr, const uint8_t *data)
{
	pz_create_t c;
	char name[POSIX_NAME_MAX + 1], *target = NULL;
	size_t off = 0;
	if (lr->lr_len < sizeof (c))
		return (SET_ERROR(EINVAL));
	memcpy(&c, data, sizeof (c));
	int err = pz_str(lr, data, sizeof (c), &off, c.pc_namelen, name, sizeof (name));
	if (err == 0 && S_ISLNK(c.pc_mode)) {
		target = tarn_alloc((size_t)c.pc_targetlen + 1);
		err = pz_str(lr, data, sizeof (c), &off, c.pc_targetlen, target,
		    (size_t)c.pc_targetlen + 1);
	}
	if (err == 0) {
		posix_cred_t cred = { .pc_uid = (uint32_t)c.pc_uid, .pc_gid = (uint32_t)c.pc_gid };
		err = posix_mknode_claim(fs, c.pc_dir, name, (uint32_t)c.pc_mode, c.pc_rdev,
		    target, &cred, lr->lr_obj);
	}
	tarn_free(target);
	if (err == EEXIST)
		return (0);     /* replayed before (a replay cut short) */
	if (err != 0)
		return (err);
	pz_setattr_t a = { .ps_mode = c.pc_mode, .ps_uid = c.pc_uid, .ps_gid = c.pc_gid,
		.ps_atime = { c.pc_time[0], c.pc_time[1] },
		.ps_mtime = { c.pc_time[0], c.pc_time[1] },
		.ps_ctime = { c.pc_time[0], c.pc_time[1] } };
	return (pz_apply_attrs(fs, lr->lr_obj, &a, false));
}

static int
pz_replay_ns(posix_fs_t *fs, const zil_lr_t *lr, const uint8_t *data)
{
	char a[POSIX_NAME_MAX + 1], b[POSIX_NAME_MAX + 1];
	size_t off = 0;
	int err;
	switch (lr->lr_type) {
	case ZIL_LR_REMOVE: {
		pz_remove_t r;
		if (lr->lr_len < sizeof (r))
			return (SET_ERROR(EINVAL));
		memcpy(&r, data, sizeof (r));
		if ((err = pz_str(lr, data, sizeof (r), &off, r.pr_namelen, a, sizeof (a))) != 0)
			return (err);
		err = r.pr_rmdir ? posix_rmdir(fs, r.pr_dir, a) : posix_unlink(fs, r.pr_dir, a);
		return (err == ENOENT ? 0 : err);
	}
	case ZIL_LR_LINK: {
		pz_link_t l;
		if (lr->lr_len < sizeof (l))
			return (SET_ERROR(EINVAL));
		memcpy(&l, data, sizeof (l));
		if ((err = pz_str(lr, data, sizeof (l), &off, l.pl_namelen, a, sizeof (a))) != 0)
			return (err);
		err = posix_link(fs, lr->lr_obj, l.pl_dir, a, NULL);
		return (err == EEXIST ? 0 : err);
	}
	case ZIL_LR_RENAME: {
		pz_rename_t r;
		if (lr->lr_len < sizeof (r))
			return (SET_ERROR(EINVAL));
		memcpy(&r, data, sizeof (r));
		if ((err = pz_str(lr, data, sizeof (r), &off, r.pn_snamelen, a, sizeof (a))) != 0 ||
		    (err = pz_str(lr, data, sizeof (r), &off, r.pn_dnamelen, b, sizeof (b))) != 0)
			return (err);
		err = posix_rename(fs, r.pn_sdir, a, r.pn_ddir, b, r.pn_flags);
		return (err == ENOENT ? 0 : err);
	}
	case ZIL_LR_SETATTR: {
		pz_setattr_t s;
		if (lr->lr_len < sizeof (s))
			return (SET_ERROR(EINVAL));
		memcpy(&s, data, sizeof (s));
		err = pz_apply_attrs(fs, lr->lr_obj, &s, S_ISREG(s.ps_mode));
		return (err == ENOENT ? 0 : err);
	}
	default:
		return (SET_ERROR(EINVAL));
	}
}

/* Replay of an xattr change or a hole punch; the times record after it sets the times. */
static int
pz_replay_xattr_punch(posix_fs_t *fs, const zil_lr_t *lr, const uint8_t *data)
{
	int err;
	if (lr->lr_type == ZIL_LR_PUNCH) {
		pz_punch_t pp;
		if (lr->lr_len < sizeof (pp))
			return (SET_ERROR(EINVAL));
		memcpy(&pp, data, sizeof (pp));
		err = posix_falloc(fs, lr->lr_obj, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		    pp.pp_off, pp.pp_len);
		return (err == ENOENT || err == ENODEV ? 0 : err);
	}
	pz_xattr_t x;
	char name[POSIX_XATTR_NAME_MAX + 1];
	size_t off = 0;
	if (lr->lr_len < sizeof (x))
		return (SET_ERROR(EINVAL));
	memcpy(&x, data, sizeof (x));
	if ((err = pz_str(lr, data, sizeof (x), &off, x.px_namelen, name, sizeof (name))) != 0)
		return (err);
	if (sizeof (x) + off + x.px_size > lr->lr_len)
		return (SET_ERROR(EINVAL));
	if (x.px_remove)
		err = posix_removexattr(fs, lr->lr_obj, name);
	else
		err = posix_setxattr(fs, lr->lr_obj, name, data + sizeof (x) + off,
		    (size_t)x.px_size, 0);
	/* gone since, removed twice, or xattrs turned off: nothing to redo */
	return (err == ENOENT || err == ENODATA || err == EOPNOTSUPP ? 0 : err);
}

static int
posix_zil_replay_lr(void *arg, const zil_lr_t *lr, const void *data)
{
	posix_fs_t *fs = arg;
	if (lr->lr_type == ZIL_LR_CREATE)
		return (pz_replay_create(fs, lr, data));
	if (lr->lr_type >= ZIL_LR_REMOVE && lr->lr_type <= ZIL_LR_SETATTR)
		return (pz_replay_ns(fs, lr, data));
	if (lr->lr_type == ZIL_LR_TIMES)
		return (posix_zil_replay_times(fs, lr, data));
	if (lr->lr_type == ZIL_LR_XATTR || lr->lr_type == ZIL_LR_PUNCH)
		return (pz_replay_xattr_punch(fs, lr, data));
	uint64_t done = 0;
	int err = posix_write(fs, lr->lr_obj, lr->lr_off, lr->lr_len, data, NULL, &done);
	if (err == ENOENT || err == EINVAL || err == EISDIR)
		return (0);     /* not a file any more: nothing to redo */
	if (err != 0)
		return (err);
	if (done != lr->lr_len)
		return (SET_ERROR(EIO));
	/* a write leaves ctime = mtime (posix_data.c), so the one time logged is both */
	posix_attr_t a;
	memset(&a, 0, sizeof (a));
	a.pa_mtime.tv_sec = (time_t)lr->lr_mtime[0];
	a.pa_mtime.tv_nsec = (long)lr->lr_mtime[1];
	a.pa_ctime = a.pa_mtime;
	if (lr->lr_mtime[0] != 0 || lr->lr_mtime[1] != 0)
		(void) posix_setattr(fs, lr->lr_obj, &a, POSIX_SET_MTIME | POSIX_SET_CTIME,
		    NULL, NULL);
	return (0);
}

/* Test seam: replay at most this many records, then fail with EINTR (0: all). */
static uint64_t pz_replay_limit;

void
posix_zil_set_replay_limit(uint64_t n)
{
	__atomic_store_n(&pz_replay_limit, n, __ATOMIC_RELAXED);
}

static int
posix_zil_replay_limited(void *arg, const zil_lr_t *lr, const void *data)
{
	posix_fs_t *fs = arg;
	uint64_t limit = __atomic_load_n(&pz_replay_limit, __ATOMIC_RELAXED);
	if (limit != 0 && fs->fs_replayed >= limit) {
		tarn_dprintf("zil replay: stopped after %" PRIu64 " records\n", limit);
		return (SET_ERROR(EINTR));
	}
	fs->fs_replayed++;
	tarn_dprintf("zil replay: type %u obj %" PRIu64 " txg %" PRIu64 "\n", lr->lr_type,
	    lr->lr_obj, lr->lr_txg);
	return (posix_zil_replay_lr(arg, lr, data));
}

/* Replay a claimed log (open, before the unlinked set is reclaimed). */
int
posix_zil_replay(posix_fs_t *fs)
{
	if (!zil_replay_needed(fs->fs_zil))
		return (0);
	fs->fs_replayed = 0;
	/* what the log holds was admitted before the crash: it must fit again */
	fs->fs_replaying = true;
	dmu_objset_replaying(fs->fs_os, true);
	int err = zil_replay(fs->fs_zil, posix_zil_replay_limited, fs, NULL);
	dmu_objset_replaying(fs->fs_os, false);
	fs->fs_replaying = false;
	return (err);
}

uint64_t
posix_fs_replayed(const posix_fs_t *fs)
{
	return (fs->fs_replayed);
}

posix_sync_mode_t
posix_zil_sync_mode(posix_fs_t *fs)
{
	posix_fs_opts_t o;
	posix_opts(fs, &o);
	return (o.pfo_sync);
}
