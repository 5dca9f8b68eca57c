/*
 * posix_inode.c — inodes: the znode in the bonus buffer, attributes
 * (getattr, setattr), access times, freeing an inode and dropping a link
 * (into the unlinked set when it is still referenced).  Theory: the top
 * of posix_fs.c.
 */
#include "posix_impl.h"

#include <time.h>

void
posix_now(uint64_t t[2])
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	t[0] = (uint64_t)(int64_t)ts.tv_sec;
	t[1] = (uint64_t)ts.tv_nsec;
}

static void
ts_from_zp(struct timespec *ts, const uint64_t t[2])
{
	ts->tv_sec = (time_t)(int64_t)t[0];
	ts->tv_nsec = (long)t[1];
}

static void
ts_to_zp(uint64_t t[2], const struct timespec *ts)
{
	t[0] = (uint64_t)(int64_t)ts->tv_sec;
	t[1] = (uint64_t)ts->tv_nsec;
}

static int
ts_cmp(const uint64_t a[2], const uint64_t b[2])
{
	if ((int64_t)a[0] != (int64_t)b[0])
		return ((int64_t)a[0] < (int64_t)b[0] ? -1 : 1);
	return (a[1] < b[1] ? -1 : a[1] > b[1]);
}

/* Read ino's znode; ENOENT when ino is not a live inode of this file system. */
int
zn_read(posix_fs_t *fs, posix_ino_t ino, znode_phys_t *zp)
{
	if (ino == 0 || ino >= DMU_MAX_OBJECT)
		return (SET_ERROR(ENOENT));
	int err = dmu_bonus_read(fs->fs_os, ino, zp, sizeof (*zp));
	if (err == EINVAL || (err == 0 && zp->zp_mode == 0))
		return (SET_ERROR(ENOENT));
	return (err);
}

/*
 * Write ino's znode (old: as last written; NULL for a new inode) as part
 * of a change the intent log does not record: fsync must then sync the
 * txg (posix_zil.c).  zn_write_logged is for the changes that are logged
 * (file writes) or need no durability (atime).
 */
int
zn_write(posix_fs_t *fs, posix_ino_t ino, const znode_phys_t *old, const znode_phys_t *zp,
    dmu_tx_t *tx)
{
	int err = zn_write_logged(fs, ino, old, zp, tx);
	if (err == 0)
		posix_zil_unlogged(fs, tx);
	return (err);
}

int
zn_write_logged(posix_fs_t *fs, posix_ino_t ino, const znode_phys_t *old,
    const znode_phys_t *zp, dmu_tx_t *tx)
{
	int err = dmu_bonus_write(fs->fs_os, ino, zp, sizeof (*zp), tx);
	if (err == 0 && old == NULL)
		posix_inodes_add(fs, 1);
	return (err);
}

uint64_t
posix_maxfilesize(posix_fs_t *fs)
{
	posix_fs_opts_t o;
	posix_opts(fs, &o);
	return (MIN((uint64_t)o.pfo_recordsize << 40, (uint64_t)INT64_MAX));
}

void
zn_to_attr(posix_fs_t *fs, posix_ino_t ino, const znode_phys_t *zp, posix_attr_t *attr)
{
	posix_fs_opts_t o;
	posix_opts(fs, &o);
	memset(attr, 0, sizeof (*attr));
	attr->pa_ino = ino;
	attr->pa_gen = zp->zp_gen;
	attr->pa_mode = (uint32_t)zp->zp_mode;
	attr->pa_nlink = (uint32_t)MIN(zp->zp_nlink, UINT32_MAX);
	attr->pa_uid = (uint32_t)zp->zp_uid;
	attr->pa_gid = (uint32_t)zp->zp_gid;
	attr->pa_size = zp->zp_size;
	attr->pa_rdev = zp->zp_rdev;
	attr->pa_blksize = o.pfo_recordsize;
	dmu_object_info_t doi;
	uint64_t phys = 0;
	if (dmu_object_info(fs->fs_os, ino, &doi) == 0) {
		phys = doi.doi_physical_bytes;
		/* nothing synced yet: estimate by the extent written (holes and all) */
		if (phys == 0 && S_ISREG(zp->zp_mode) && zp->zp_size > 0)
			phys = MIN(P2ROUNDUP(zp->zp_size, 512), doi.doi_max_offset);
	}
	attr->pa_blocks = DIV_ROUND_UP(phys, 512);
	ts_from_zp(&attr->pa_atime, zp->zp_atime);
	ts_from_zp(&attr->pa_mtime, zp->zp_mtime);
	ts_from_zp(&attr->pa_ctime, zp->zp_ctime);
	ts_from_zp(&attr->pa_crtime, zp->zp_crtime);
}

/* A new inode's znode: owner from cred, times now, one link. */
void
zn_init(znode_phys_t *zp, uint32_t mode, const posix_cred_t *cred, uint64_t parent,
    uint64_t txg, const uint64_t now[2])
{
	memset(zp, 0, sizeof (*zp));
	zp->zp_mode = mode;
	zp->zp_uid = cred != NULL ? cred->pc_uid : 0;
	zp->zp_gid = cred != NULL ? cred->pc_gid : 0;
	zp->zp_nlink = 1;
	zp->zp_parent = parent;
	zp->zp_gen = txg;
	memcpy(zp->zp_atime, now, 16);
	memcpy(zp->zp_mtime, now, 16);
	memcpy(zp->zp_ctime, now, 16);
	memcpy(zp->zp_crtime, now, 16);
}

/* Fill attr and take a reference for the caller (lookup-like replies). */
int
posix_ref_attr(posix_fs_t *fs, posix_ino_t ino, const znode_phys_t *zp, posix_attr_t *attr)
{
	zn_to_attr(fs, ino, zp, attr);
	pinode_t *pi = pinode_get(fs, ino);
	pinode_ref(fs, pi, 1);
	pinode_rele(fs, pi);
	return (0);
}

/* Space holds for posix_destroy (the object, its xattrs, the unlinked set). */
void
posix_hold_destroy(posix_fs_t *fs, dmu_tx_t *tx)
{
	dmu_tx_hold_free(tx, 0, 0, DMU_OBJECT_END);
	zap_tx_hold(tx, fs->fs_os, fs->fs_unlinked, 1);
}

/*
 * Free inode ino (zp as last written) with its xattrs, and delist it from
 * the unlinked set (the caller holds fs_unlinked_lock when it is listed).
 */
int
posix_destroy(posix_fs_t *fs, posix_ino_t ino, const znode_phys_t *zp, dmu_tx_t *tx)
{
	int err = 0;
	if (zp->zp_xattr != 0)
		err = posix_xattr_destroy(fs, zp->zp_xattr, tx);
	if (err == 0 && (zp->zp_flags & POSIX_ZF_UNLINKED)) {
		char name[POSIX_UNLINKED_KEYLEN];
		posix_unlinked_key(ino, name);
		err = zap_remove(fs->fs_os, fs->fs_unlinked, name, tx);
		if (err == ENOENT)
			err = 0;
	}
	if (err == 0) {
		if (S_ISDIR(zp->zp_mode))
			err = zap_destroy(fs->fs_os, ino, tx);
		else
			err = dmu_object_free(fs->fs_os, ino, tx);
	}
	if (err == 0)
		posix_inodes_add(fs, -1);
	return (err);
}

/*
 * Write zp, whose link count the caller has just lowered.  At zero links
 * the inode goes to the unlinked set when `keep` (it is referenced; the
 * caller holds fs_unlinked_lock) and is freed otherwise.
 */
int
posix_drop_link(posix_fs_t *fs, pinode_t *pi, const znode_phys_t *old, znode_phys_t *zp,
    bool keep, dmu_tx_t *tx)
{
	if (zp->zp_nlink > 0)
		return (zn_write(fs, pi->pi_ino, old, zp, tx));
	if (!keep) {
		int err = posix_destroy(fs, pi->pi_ino, old, tx);
		if (err == 0)
			pi->pi_destroyed = true;
		return (err);
	}
	char name[POSIX_UNLINKED_KEYLEN];
	posix_unlinked_key(pi->pi_ino, name);
	zp->zp_flags |= POSIX_ZF_UNLINKED;
	int err = zap_update_int(fs->fs_os, fs->fs_unlinked, name, pi->pi_ino, tx);
	if (err == 0)
		err = zn_write(fs, pi->pi_ino, old, zp, tx);
	return (err);
}

/* ---- attributes ---- */

int
posix_getattr(posix_fs_t *fs, posix_ino_t ino, posix_attr_t *attr)
{
	znode_phys_t zp;
	int err = zn_read(fs, ino, &zp);
	if (err == 0)
		zn_to_attr(fs, ino, &zp, attr);
	return (err);
}

/* Apply the changes of a setattr other than the size to zp. */
static void
setattr_apply(znode_phys_t *zp, const posix_attr_t *in, int mask, const uint64_t now[2])
{
	if (mask & POSIX_SET_MODE)
		zp->zp_mode = (zp->zp_mode & S_IFMT) | (in->pa_mode & 07777);
	if (mask & POSIX_SET_UID)
		zp->zp_uid = in->pa_uid;
	if (mask & POSIX_SET_GID)
		zp->zp_gid = in->pa_gid;
	/* chown of a non-directory drops set-user-ID, and set-group-ID when group-executable */
	if ((mask & (POSIX_SET_UID | POSIX_SET_GID)) && !(mask & POSIX_SET_MODE) &&
	    !S_ISDIR(zp->zp_mode)) {
		zp->zp_mode &= ~(uint64_t)S_ISUID;
		if (zp->zp_mode & S_IXGRP)
			zp->zp_mode &= ~(uint64_t)S_ISGID;
	}
	if (mask & POSIX_SET_ATIME_NOW)
		memcpy(zp->zp_atime, now, 16);
	else if (mask & POSIX_SET_ATIME)
		ts_to_zp(zp->zp_atime, &in->pa_atime);
	if (mask & POSIX_SET_MTIME_NOW)
		memcpy(zp->zp_mtime, now, 16);
	else if (mask & POSIX_SET_MTIME)
		ts_to_zp(zp->zp_mtime, &in->pa_mtime);
	else if (mask & POSIX_SET_SIZE)
		memcpy(zp->zp_mtime, now, 16);
	if (mask & POSIX_SET_CTIME)
		ts_to_zp(zp->zp_ctime, &in->pa_ctime);
	else
		memcpy(zp->zp_ctime, now, 16);
}

/*
 * POSIX_SET_KILL_SUIDGID (and _SGID, or cred outside the file's group) as
 * a plain mode change: the mask without them,
 * with POSIX_SET_MODE when a bit goes (*in then points at kept, a copy
 * with the new mode).
 */
static int
setattr_kill_suidgid(const znode_phys_t *zp, const posix_attr_t **in, int mask,
    const posix_cred_t *cred, posix_attr_t *kept)
{
	bool sgid = (mask & POSIX_SET_KILL_SGID) != 0;
	if (!sgid && cred != NULL && cred->pc_uid != 0 && cred->pc_gid != zp->zp_gid &&
	    (zp->zp_mode & S_ISGID) && !(zp->zp_mode & S_IXGRP))
		sgid = cred->pc_in_group == NULL ||
		    !cred->pc_in_group(cred, (uint32_t)zp->zp_gid);
	mask &= ~(POSIX_SET_KILL_SUIDGID | POSIX_SET_KILL_SGID);
	uint32_t mode = (mask & POSIX_SET_MODE) ? (*in)->pa_mode : (uint32_t)zp->zp_mode;
	uint32_t want = mode & ~(uint32_t)S_ISUID;
	if ((mode & S_IXGRP) || sgid)
		want &= ~(uint32_t)S_ISGID;
	if (want != mode) {
		*kept = **in;
		kept->pa_mode = want;
		*in = kept;
		mask |= POSIX_SET_MODE;
	}
	return (mask);
}

/* Checks of a size change (a larger size is a hole: no space needed). */
static int
setattr_size_check(posix_fs_t *fs, const znode_phys_t *zp, uint64_t size)
{
	if (S_ISDIR(zp->zp_mode))
		return (SET_ERROR(EISDIR));
	if (!S_ISREG(zp->zp_mode))
		return (SET_ERROR(EINVAL));
	if (size > posix_maxfilesize(fs))
		return (SET_ERROR(EFBIG));
	return (0);
}

int
posix_setattr(posix_fs_t *fs, posix_ino_t ino, const posix_attr_t *in, int mask,
    const posix_cred_t *cred, posix_attr_t *out)
{
	int err = posix_writable(fs);
	if (err != 0)
		return (err);
	pinode_t *pi = pinode_get(fs, ino);
	pthread_rwlock_wrlock(&pi->pi_lock);
	znode_phys_t old, zp;
	err = zn_read(fs, ino, &old);
	posix_attr_t killed;
	if (err == 0 && (mask & POSIX_SET_KILL_SUIDGID)) {
		mask = setattr_kill_suidgid(&old, &in, mask, cred, &killed);
		if (mask == 0) {                /* nothing to clear, nothing else to do */
			if (out != NULL)
				zn_to_attr(fs, ino, &old, out);
			pthread_rwlock_unlock(&pi->pi_lock);
			pinode_rele(fs, pi);
			return (0);
		}
	}
	bool resize = err == 0 && (mask & POSIX_SET_SIZE) && in->pa_size != old.zp_size;
	if (err == 0 && (mask & POSIX_SET_SIZE))
		err = setattr_size_check(fs, &old, in->pa_size);
	dmu_tx_t *tx = NULL;
	if (err == 0) {
		tx = dmu_tx_create(fs->fs_os);
		dmu_tx_hold_bonus(tx, ino);
		if ((mask & POSIX_SET_MODE) && old.zp_xattr != 0)
			posix_acl_tx_hold(fs, &old, POSIX_XATTR_INLINE_MAX, tx);
		if (resize && in->pa_size < old.zp_size) {
			dmu_tx_hold_free(tx, ino, in->pa_size, DMU_OBJECT_END);
			dmu_tx_mark_netfree(tx);
		}
		err = posix_tx_assign(tx);
	}
	if (err == 0) {
		uint64_t now[2];
		posix_now(now);
		zp = old;
		if (resize)
			err = posix_truncate_locked(fs, ino, &zp, in->pa_size, tx);
		if (err == 0) {
			setattr_apply(&zp, in, mask, now);
			if (mask & POSIX_SET_MODE)      /* the access ACL follows the mode */
				err = posix_acl_chmod_tx(fs, &zp, (uint32_t)zp.zp_mode, tx);
		}
		if (err == 0) {
			err = posix_zil_setattr(fs, ino, mask, &old, &zp, tx);
		}
		dmu_tx_commit(tx);
		if (err == 0 && out != NULL)
			zn_to_attr(fs, ino, &zp, out);
	}
	pthread_rwlock_unlock(&pi->pi_lock);
	pinode_rele(fs, pi);
	return (err);
}

/* Does the atime mode want this read recorded? */
static bool
atime_wanted(posix_atime_mode_t mode, const znode_phys_t *zp, const uint64_t now[2])
{
	if (mode == POSIX_ATIME_OFF)
		return (false);
	if (mode == POSIX_ATIME_ON)
		return (true);
	if (ts_cmp(zp->zp_atime, zp->zp_mtime) <= 0 || ts_cmp(zp->zp_atime, zp->zp_ctime) <= 0)
		return (true);
	return ((int64_t)now[0] - (int64_t)zp->zp_atime[0] >= POSIX_RELATIME_SEC);
}

void
posix_touch_atime(posix_fs_t *fs, posix_ino_t ino)
{
	posix_fs_opts_t o;
	posix_opts(fs, &o);
	if (o.pfo_readonly || o.pfo_atime == POSIX_ATIME_OFF)
		return;
	znode_phys_t zp, old;
	uint64_t now[2];
	posix_now(now);
	if (zn_read(fs, ino, &zp) != 0 || !atime_wanted(o.pfo_atime, &zp, now))
		return;
	pinode_t *pi = pinode_get(fs, ino);
	pthread_rwlock_wrlock(&pi->pi_lock);
	if (zn_read(fs, ino, &old) == 0 && atime_wanted(o.pfo_atime, &old, now)) {
		dmu_tx_t *tx = dmu_tx_create(fs->fs_os);
		dmu_tx_hold_bonus(tx, ino);
		if (posix_tx_assign(tx) == 0) {
			zp = old;
			memcpy(zp.zp_atime, now, 16);
			(void) zn_write_logged(fs, ino, &old, &zp, tx);  /* atime: not worth a sync */
			dmu_tx_commit(tx);
		}
	}
	pthread_rwlock_unlock(&pi->pi_lock);
	pinode_rele(fs, pi);
}
