/*
 * posix_rename.c — rename(2) and renameat2's RENAME_NOREPLACE and
 * RENAME_EXCHANGE: replacing a file or an empty directory, refusing to
 * move a directory into its own subtree, updating ".." and the parents'
 * link counts.  Locking (fs_rename_lock, then the up to four inodes in
 * ascending number): the theory at the top of posix_fs.c.
 */
#include "posix_impl.h"

typedef struct rename_op {
	posix_ino_t sdir, ddir;
	const char *sname, *dname;
	unsigned int flags;
	posix_ino_t sino, dino;         /* dino 0: the target name is free */
} rename_op_t;

/* Look both names up, lock the inodes, and check nothing moved meanwhile. */
static int
rename_lock(posix_fs_t *fs, posix_lockset_t *ls, rename_op_t *r)
{
	for (;;) {
		int err = posix_dir_lookup(fs, r->sdir, r->sname, &r->sino);
		if (err != 0)
			return (err);
		err = posix_dir_lookup(fs, r->ddir, r->dname, &r->dino);
		if (err == ENOENT)
			r->dino = 0;
		else if (err != 0)
			return (err);
		lockset_add_ino(fs, ls, r->sdir);
		lockset_add_ino(fs, ls, r->ddir);
		lockset_add_ino(fs, ls, r->sino);
		if (r->dino != 0)
			lockset_add_ino(fs, ls, r->dino);
		if ((err = lockset_lock(fs, ls)) != 0)
			return (err);
		if (!S_ISDIR(lockset_zp(ls, r->sdir)->zp_mode) ||
		    !S_ISDIR(lockset_zp(ls, r->ddir)->zp_mode))
			return (SET_ERROR(ENOTDIR));
		uint64_t sv = 0, dv = 0;
		err = zap_lookup_int(fs->fs_os, r->sdir, r->sname, &sv);
		if (err != 0)
			return (err);
		int derr = zap_lookup_int(fs->fs_os, r->ddir, r->dname, &dv);
		if (derr != 0 && derr != ENOENT)
			return (derr);
		if (POSIX_DE_INO(sv) == r->sino && (derr == 0 ? POSIX_DE_INO(dv) : 0) == r->dino)
			return (0);
		lockset_unlock(fs, ls);         /* changed meanwhile: again */
	}
}

/* EINVAL if `ino` is dir or one of its ancestors (fs_rename_lock held). */
static int
rename_ancestor_check(posix_fs_t *fs, posix_ino_t dir, posix_ino_t ino)
{
	posix_ino_t cur = dir;
	for (int depth = 0; depth < 1000000; depth++) {
		if (cur == ino)
			return (SET_ERROR(EINVAL));
		if (cur == fs->fs_root)
			return (0);
		znode_phys_t zp;
		int err = zn_read(fs, cur, &zp);
		if (err != 0)
			return (err);
		if (zp.zp_parent == cur)
			return (0);
		cur = zp.zp_parent;
	}
	return (SET_ERROR(ELOOP));      /* a damaged chain of parents */
}

static int
rename_check(posix_fs_t *fs, posix_lockset_t *ls, const rename_op_t *r)
{
	const znode_phys_t *szp = lockset_zp(ls, r->sino);
	const znode_phys_t *dzp = r->dino != 0 ? lockset_zp(ls, r->dino) : NULL;
	bool exchange = r->flags & POSIX_RENAME_EXCHANGE;
	if (dzp != NULL && (r->flags & POSIX_RENAME_NOREPLACE))
		return (SET_ERROR(EEXIST));
	if (dzp == NULL && exchange)
		return (SET_ERROR(ENOENT));
	if (lockset_zp(ls, r->ddir)->zp_nlink == 0)
		return (SET_ERROR(ENOENT));
	bool sisdir = S_ISDIR(szp->zp_mode), disdir = dzp != NULL && S_ISDIR(dzp->zp_mode);
	if (dzp != NULL && !exchange) {
		if (sisdir && !disdir)
			return (SET_ERROR(ENOTDIR));
		if (!sisdir && disdir)
			return (SET_ERROR(EISDIR));
		if (disdir && dzp->zp_size > 2)
			return (SET_ERROR(ENOTEMPTY));
	}
	int err = 0;
	if (r->sdir != r->ddir && sisdir)
		err = rename_ancestor_check(fs, r->ddir, r->sino);
	if (err == 0 && r->sdir != r->ddir && exchange && disdir)
		err = rename_ancestor_check(fs, r->sdir, r->dino);
	return (err);
}

static void
rename_touch_dirs(posix_lockset_t *ls, const rename_op_t *r, const uint64_t now[2])
{
	znode_phys_t *sd = lockset_zp(ls, r->sdir), *dd = lockset_zp(ls, r->ddir);
	memcpy(sd->zp_mtime, now, 16);
	memcpy(sd->zp_ctime, now, 16);
	memcpy(dd->zp_mtime, now, 16);
	memcpy(dd->zp_ctime, now, 16);
}

static int
rename_exchange(posix_fs_t *fs, posix_lockset_t *ls, const rename_op_t *r, dmu_tx_t *tx,
    const uint64_t now[2])
{
	znode_phys_t *szp = lockset_zp(ls, r->sino), *dzp = lockset_zp(ls, r->dino);
	znode_phys_t *sd = lockset_zp(ls, r->sdir), *dd = lockset_zp(ls, r->ddir);
	int err = zap_update_int(fs->fs_os, r->sdir, r->sname,
	    POSIX_DE_MAKE(r->dino, dzp->zp_mode), tx);
	if (err == 0)
		err = zap_update_int(fs->fs_os, r->ddir, r->dname,
		    POSIX_DE_MAKE(r->sino, szp->zp_mode), tx);
	if (err != 0)
		return (err);
	if (r->sdir != r->ddir) {
		szp->zp_parent = r->ddir;
		dzp->zp_parent = r->sdir;
		if (S_ISDIR(szp->zp_mode)) {
			sd->zp_nlink--;
			dd->zp_nlink++;
		}
		if (S_ISDIR(dzp->zp_mode)) {
			dd->zp_nlink--;
			sd->zp_nlink++;
		}
	}
	memcpy(szp->zp_ctime, now, 16);
	memcpy(dzp->zp_ctime, now, 16);
	rename_touch_dirs(ls, r, now);
	return (0);
}

static int
rename_move(posix_fs_t *fs, posix_lockset_t *ls, const rename_op_t *r, bool keep,
    dmu_tx_t *tx, const uint64_t now[2])
{
	znode_phys_t *szp = lockset_zp(ls, r->sino);
	znode_phys_t *sd = lockset_zp(ls, r->sdir), *dd = lockset_zp(ls, r->ddir);
	uint64_t v = POSIX_DE_MAKE(r->sino, szp->zp_mode);
	int err;
	if (r->dino != 0) {
		znode_phys_t *dzp = lockset_zp(ls, r->dino);
		err = zap_update_int(fs->fs_os, r->ddir, r->dname, v, tx);
		if (err == 0) {
			if (S_ISDIR(dzp->zp_mode)) {
				dzp->zp_nlink = 0;
				dd->zp_nlink--;
			} else {
				dzp->zp_nlink--;
			}
			memcpy(dzp->zp_ctime, now, 16);
			err = lockset_drop_link(fs, ls, r->dino, keep, tx);
		}
	} else {
		err = zap_add_int(fs->fs_os, r->ddir, r->dname, v, tx);
		dd->zp_size++;
	}
	if (err == 0)
		err = zap_remove(fs->fs_os, r->sdir, r->sname, tx);
	if (err != 0)
		return (err);
	sd->zp_size--;
	if (S_ISDIR(szp->zp_mode) && r->sdir != r->ddir) {
		sd->zp_nlink--;
		dd->zp_nlink++;
	}
	szp->zp_parent = r->ddir;
	memcpy(szp->zp_ctime, now, 16);
	rename_touch_dirs(ls, r, now);
	return (0);
}

/* With everything locked and checked: one transaction. */
static int
rename_locked(posix_fs_t *fs, posix_lockset_t *ls, const rename_op_t *r)
{
	bool exchange = r->flags & POSIX_RENAME_EXCHANGE;
	bool keep = false;
	if (r->dino != 0 && !exchange)
		keep = posix_keep_unlinked(fs, ls, r->dino,
		    S_ISDIR(lockset_zp(ls, r->dino)->zp_mode));
	if (keep)
		tarn_mutex_lock(&fs->fs_unlinked_lock, POSIX_UNLINKED);
	dmu_tx_t *tx = dmu_tx_create(fs->fs_os);
	zap_tx_hold(tx, fs->fs_os, r->sdir, 2);
	zap_tx_hold(tx, fs->fs_os, r->ddir, 2);
	for (int i = 0; i < ls->ls_n; i++)
		dmu_tx_hold_bonus(tx, ls->ls_pi[i]->pi_ino);
	if (r->dino != 0 && !exchange)
		posix_hold_destroy(fs, tx);
	int err = posix_tx_assign(tx);
	if (err == 0) {
		uint64_t now[2];
		posix_now(now);
		posix_zil_begin();
		if (exchange)
			err = rename_exchange(fs, ls, r, tx, now);
		else
			err = rename_move(fs, ls, r, keep, tx, now);
		if (err == 0)
			err = lockset_write(fs, ls, tx);
		if (err == 0) {
			posix_zil_rename(fs, tx, r->sdir, lockset_zp(ls, r->sdir), r->sname,
			    r->ddir, lockset_zp(ls, r->ddir), r->dname, r->flags);
			posix_zil_times(fs, tx, r->sino, lockset_zp(ls, r->sino));
			if (r->dino != 0)
				posix_zil_times(fs, tx, r->dino, lockset_zp(ls, r->dino));
		}
		posix_zil_end(fs, tx, err);
		dmu_tx_commit(tx);
	}
	if (keep)
		tarn_mutex_unlock(&fs->fs_unlinked_lock);
	return (err);
}

static int
rename_args_check(const char *name, const char *newname, unsigned int flags)
{
	if (flags & ~(POSIX_RENAME_NOREPLACE | POSIX_RENAME_EXCHANGE))
		return (SET_ERROR(EINVAL));
	if ((flags & POSIX_RENAME_NOREPLACE) && (flags & POSIX_RENAME_EXCHANGE))
		return (SET_ERROR(EINVAL));
	int err = posix_name_check(name);
	if (err == 0)
		err = posix_name_check(newname);
	if (err != 0)
		return (err);
	if (posix_is_dot(name))
		return (SET_ERROR(EBUSY));
	if (posix_is_dot(newname))
		return (SET_ERROR((flags & POSIX_RENAME_NOREPLACE) ? EEXIST : EBUSY));
	return (0);
}

int
posix_rename(posix_fs_t *fs, posix_ino_t dir, const char *name, posix_ino_t newdir,
    const char *newname, unsigned int flags)
{
	int err = rename_args_check(name, newname, flags);
	if (err == 0)
		err = posix_name_new(fs, newname);
	if (err == 0)
		err = posix_writable(fs);
	if (err != 0)
		return (err);
	rename_op_t r = { .sdir = dir, .ddir = newdir, .sname = name, .dname = newname,
		.flags = flags };
	bool cross = dir != newdir;
	if (cross)
		tarn_mutex_lock(&fs->fs_rename_lock, POSIX_RENAME);
	posix_lockset_t ls = { 0 };
	err = rename_lock(fs, &ls, &r);
	if (err == 0 && r.sino == r.dino) {
		/* two names of one inode: nothing to do */
		err = (flags & POSIX_RENAME_NOREPLACE) ? SET_ERROR(EEXIST) : 0;
	} else if (err == 0) {
		err = rename_check(fs, &ls, &r);
		if (err == 0)
			err = rename_locked(fs, &ls, &r);
	}
	lockset_unlock(fs, &ls);
	if (cross)
		tarn_mutex_unlock(&fs->fs_rename_lock);
	return (err);
}
