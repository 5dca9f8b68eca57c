/*
 * posix_dir.c — the namespace: names, lookup, creating files,
 * directories, device nodes and symlinks, hard links, unlink and rmdir,
 * and readdir with cookies that survive concurrent changes.  Rename is in
 * posix_rename.c.  Theory (entries, locks, the unlinked set): the top of
 * posix_fs.c.
 */
#include "posix_impl.h"

#include <dirent.h>

#define POSIX_LINK_MAX UINT32_MAX

/* ENAMETOOLONG, or EINVAL for an empty name or one with a '/'. */
int
posix_name_check(const char *name)
{
	if (name == NULL || name[0] == '\0')
		return (SET_ERROR(EINVAL));
	size_t len = strnlen(name, POSIX_NAME_MAX + 1);
	if (len > POSIX_NAME_MAX)
		return (SET_ERROR(ENAMETOOLONG));
	if (memchr(name, '/', len) != NULL)
		return (SET_ERROR(EINVAL));
	return (0);
}

bool
posix_utf8_valid(const char *str, size_t len)
{
	const uint8_t *s = (const uint8_t *)str;
	size_t i = 0;
	while (i < len) {
		uint8_t c = s[i];
		size_t n;
		uint32_t cp, min;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xe0) == 0xc0) {
			n = 1, cp = c & 0x1f, min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			n = 2, cp = c & 0x0f, min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			n = 3, cp = c & 0x07, min = 0x10000;
		} else {
			return (false);
		}
		if (n > len - i - 1)
			return (false);
		for (size_t k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return (false);
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return (false);
		i += n + 1;
	}
	return (true);
}

/* A name about to be made in fs: EILSEQ on a utf8only file system when not UTF-8. */
int
posix_name_new(posix_fs_t *fs, const char *name)
{
	tarn_mutex_lock(&fs->fs_opts_lock, POSIX_OPTS);
	bool utf8 = fs->fs_opts.pfo_utf8only;
	tarn_mutex_unlock(&fs->fs_opts_lock);
	if (utf8 && !posix_utf8_valid(name, strlen(name)))
		return (SET_ERROR(EILSEQ));
	return (0);
}

bool
posix_is_dot(const char *name)
{
	return (strcmp(name, ".") == 0 || strcmp(name, "..") == 0);
}

/* Look name up in directory dir (no "." or ".."); no reference taken. */
int
posix_dir_lookup(posix_fs_t *fs, posix_ino_t dir, const char *name, posix_ino_t *ino)
{
	pinode_t *pi = pinode_get(fs, dir);
	pthread_rwlock_rdlock(&pi->pi_lock);
	znode_phys_t zp;
	uint64_t v = 0;
	int err = zn_read(fs, dir, &zp);
	if (err == 0 && !S_ISDIR(zp.zp_mode))
		err = SET_ERROR(ENOTDIR);
	if (err == 0)
		err = zap_lookup_int(fs->fs_os, dir, name, &v);
	pthread_rwlock_unlock(&pi->pi_lock);
	pinode_rele(fs, pi);
	*ino = POSIX_DE_INO(v);
	return (err);
}

/* ---- lock sets ---- */

void
lockset_add_ino(posix_fs_t *fs, posix_lockset_t *ls, posix_ino_t ino)
{
	for (int i = 0; i < ls->ls_n; i++)
		if (ls->ls_pi[i]->pi_ino == ino)
			return;
	VERIFY3S(ls->ls_n, <, 4);
	ls->ls_pi[ls->ls_n++] = pinode_get(fs, ino);
}

/* Lock every inode of ls as writer, in ascending number, and read them. */
int
lockset_lock(posix_fs_t *fs, posix_lockset_t *ls)
{
	for (int i = 1; i < ls->ls_n; i++) {
		for (int j = i; j > 0 && ls->ls_pi[j - 1]->pi_ino > ls->ls_pi[j]->pi_ino; j--) {
			pinode_t *t = ls->ls_pi[j];
			ls->ls_pi[j] = ls->ls_pi[j - 1];
			ls->ls_pi[j - 1] = t;
		}
	}
	int err = 0;
	for (int i = 0; i < ls->ls_n; i++) {
		pthread_rwlock_wrlock(&ls->ls_pi[i]->pi_lock);
		if (err == 0)
			err = zn_read(fs, ls->ls_pi[i]->pi_ino, &ls->ls_zp[i]);
		ls->ls_old[i] = ls->ls_zp[i];
	}
	return (err);
}

void
lockset_unlock(posix_fs_t *fs, posix_lockset_t *ls)
{
	for (int i = ls->ls_n - 1; i >= 0; i--) {
		pthread_rwlock_unlock(&ls->ls_pi[i]->pi_lock);
		pinode_rele(fs, ls->ls_pi[i]);
	}
	ls->ls_n = 0;
}

znode_phys_t *
lockset_zp(posix_lockset_t *ls, posix_ino_t ino)
{
	for (int i = 0; i < ls->ls_n; i++)
		if (ls->ls_pi[i]->pi_ino == ino)
			return (&ls->ls_zp[i]);
	VERIFY(0);
	return (NULL);
}

static pinode_t *
lockset_pi(posix_lockset_t *ls, posix_ino_t ino)
{
	for (int i = 0; i < ls->ls_n; i++)
		if (ls->ls_pi[i]->pi_ino == ino)
			return (ls->ls_pi[i]);
	VERIFY(0);
	return (NULL);
}

/* Drop a link of ino (in ls) via posix_drop_link and mark it written. */
int
lockset_drop_link(posix_fs_t *fs, posix_lockset_t *ls, posix_ino_t ino, bool keep,
    dmu_tx_t *tx)
{
	for (int i = 0; i < ls->ls_n; i++) {
		if (ls->ls_pi[i]->pi_ino != ino)
			continue;
		int err = posix_drop_link(fs, ls->ls_pi[i], &ls->ls_old[i], &ls->ls_zp[i],
		    keep, tx);
		ls->ls_old[i] = ls->ls_zp[i];
		return (err);
	}
	VERIFY(0);
	return (0);
}

/* Write every changed znode of ls that is still alive. */
int
lockset_write(posix_fs_t *fs, posix_lockset_t *ls, dmu_tx_t *tx)
{
	int err = 0;
	for (int i = 0; i < ls->ls_n && err == 0; i++) {
		if (ls->ls_pi[i]->pi_destroyed ||
		    memcmp(&ls->ls_zp[i], &ls->ls_old[i], sizeof (znode_phys_t)) == 0)
			continue;
		err = zn_write(fs, ls->ls_pi[i]->pi_ino, &ls->ls_old[i], &ls->ls_zp[i], tx);
		ls->ls_old[i] = ls->ls_zp[i];
	}
	return (err);
}

/*
 * Would dropping one link of ino (all links: `all`) leave it unlinked
 * but referenced, i.e. in the unlinked set?
 */
bool
posix_keep_unlinked(posix_fs_t *fs, posix_lockset_t *ls, posix_ino_t ino, bool all)
{
	const znode_phys_t *zp = lockset_zp(ls, ino);
	if (!all && zp->zp_nlink > 1)
		return (false);
	return (pinode_refs(fs, lockset_pi(ls, ino)) > 0);
}

/* ---- lookup ---- */

/*
 * "." of any inode is the inode itself: how the kernel finds an inode by
 * number again for a file handle (NFS export, open_by_handle_at) after it
 * forgot it.  The number must name a live inode: not another kind of
 * object of the file system (an xattr object, say), not a removed file.
 */
static int
lookup_self_check(posix_fs_t *fs, posix_ino_t ino, const znode_phys_t *zp)
{
	dmu_object_info_t doi;
	int err = dmu_object_info(fs->fs_os, ino, &doi);
	if (err != 0 || doi.doi_bonus_type != POSIX_BONUS_TYPE ||
	    (doi.doi_type != DMU_OT_PLAIN_FILE && doi.doi_type != DMU_OT_DIRECTORY))
		return (SET_ERROR(ENOENT));
	if (zp->zp_nlink == 0)
		return (SET_ERROR(ENOENT));
	return (0);
}

int
posix_lookup(posix_fs_t *fs, posix_ino_t dir, const char *name, posix_attr_t *attr)
{
	int err = posix_name_check(name);
	if (err != 0)
		return (err == EINVAL ? SET_ERROR(ENOENT) : err);
	pinode_t *pi = pinode_get(fs, dir);
	pthread_rwlock_rdlock(&pi->pi_lock);
	znode_phys_t dzp, zp;
	uint64_t v = 0, ino = 0;
	err = zn_read(fs, dir, &dzp);
	bool self = err == 0 && strcmp(name, ".") == 0;
	if (self)
		err = lookup_self_check(fs, dir, &dzp);
	else if (err == 0 && !S_ISDIR(dzp.zp_mode))
		err = SET_ERROR(ENOTDIR);
	if (self && err == 0) {
		ino = dir;
	} else if (err == 0 && strcmp(name, "..") == 0) {
		ino = dzp.zp_parent;
	} else if (err == 0) {
		err = zap_lookup_int(fs->fs_os, dir, name, &v);
		ino = POSIX_DE_INO(v);
	}
	if (err == 0)
		err = zn_read(fs, ino, &zp);
	if (err == 0)
		err = posix_ref_attr(fs, ino, &zp, attr);  /* under the dir lock: see unlink */
	pthread_rwlock_unlock(&pi->pi_lock);
	pinode_rele(fs, pi);
	return (err);
}

/* ---- creating names ---- */

typedef struct mknode_args {
	uint32_t mode;
	uint64_t rdev;
	const char *target;     /* symlinks */
	const posix_cred_t *cred;
	bool excl;
	bool open_existing;     /* create without O_EXCL: return an existing file */
	uint64_t want_obj;      /* intent-log replay: this object number (else 0) */
	bool tmpfile;           /* O_TMPFILE: no name, in the unlinked set */
} mknode_args_t;

/*
 * The new inode's mode and group in directory dzp (umask, setgid
 * directories).  A default ACL on the directory takes the umask's place
 * (posix_acl_inherit_tx masks the mode).
 */
static void
mknode_owner(const znode_phys_t *dzp, const mknode_args_t *a, bool dacl, znode_phys_t *zp)
{
	uint32_t umask = a->cred != NULL && !dacl ? a->cred->pc_umask : 0;
	uint32_t mode = a->mode;
	if (!S_ISLNK(mode))
		mode = (mode & S_IFMT) | (mode & 07777 & ~umask);
	if (dzp->zp_mode & S_ISGID) {
		zp->zp_gid = dzp->zp_gid;
		if (S_ISDIR(mode))
			mode |= S_ISGID;
	}
	if (!S_ISDIR(mode) && (mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) &&
	    a->cred != NULL && a->cred->pc_uid != 0 && a->cred->pc_gid != zp->zp_gid)
		mode &= ~S_ISGID;
	zp->zp_mode = mode;
}

/* Allocate the new inode's object and store a symlink's target. */
static int
mknode_alloc(posix_fs_t *fs, const mknode_args_t *a, znode_phys_t *zp, dmu_tx_t *tx,
    uint64_t *objp)
{
	int err;
	if (a->want_obj != 0)
		*objp = a->want_obj;
	if (S_ISDIR(a->mode) && a->want_obj != 0)
		return (zap_create_claim_bonus(fs->fs_os, a->want_obj, DMU_OT_DIRECTORY,
		    POSIX_BONUS_TYPE, POSIX_ZNODE_SIZE, tx));
	if (S_ISDIR(a->mode))
		return (zap_create_bonus(fs->fs_os, DMU_OT_DIRECTORY, POSIX_BONUS_TYPE,
		    POSIX_ZNODE_SIZE, tx, objp));
	uint64_t tlen = a->target != NULL ? strlen(a->target) : 0;
	uint32_t bs = tlen > POSIX_INLINE_MAX ?
	    (uint32_t)MAX(SPA_MINBLOCKSIZE, 1ULL << highbit64(tlen - 1)) : SPA_MINBLOCKSIZE;
	if (a->want_obj != 0)
		err = dmu_object_claim(fs->fs_os, a->want_obj, DMU_OT_PLAIN_FILE, bs,
		    POSIX_BONUS_TYPE, POSIX_ZNODE_SIZE, tx);
	else
		err = dmu_object_alloc(fs->fs_os, DMU_OT_PLAIN_FILE, bs, POSIX_BONUS_TYPE,
		    POSIX_ZNODE_SIZE, tx, objp);
	if (err != 0 || a->target == NULL)
		return (err);
	zp->zp_size = tlen;
	if (tlen <= POSIX_INLINE_MAX)
		memcpy(zp->zp_inline, a->target, tlen);
	else
		err = dmu_write(fs->fs_os, *objp, 0, tlen, a->target, tx);
	return (err);
}

/* With dir locked as writer: make the inode and its entry in one tx. */
static int
mknode_locked(posix_fs_t *fs, posix_ino_t dir, znode_phys_t *dzp, const char *name,
    const mknode_args_t *a, posix_attr_t *attr)
{
	uint64_t tlen = a->target != NULL ? strlen(a->target) : 0;
	int err = posix_space_check(fs, DNODE_SIZE + POSIX_DIRENT_BYTES + P2ROUNDUP(tlen, 512));
	if (err != 0)
		return (err);
	size_t dlen = 0;
	void *dacl = S_ISLNK(a->mode) ? NULL : posix_acl_default_get(fs, dzp, &dlen);
	dmu_tx_t *tx = dmu_tx_create(fs->fs_os);
	zap_tx_hold(tx, fs->fs_os, a->tmpfile ? fs->fs_unlinked : dir, 1);
	dmu_tx_hold_bonus(tx, dir);
	dmu_tx_hold_space(tx, DNODE_BLOCK_SIZE + tlen);
	if (S_ISDIR(a->mode))
		zap_tx_hold(tx, fs->fs_os, 0, 1);
	if (dacl != NULL) {
		znode_phys_t fresh = { .zp_xattr = 0 };
		posix_acl_tx_hold(fs, &fresh, dlen, tx);
	}
	if ((err = posix_tx_assign(tx)) != 0) {
		tarn_free(dacl);
		return (err);
	}
	posix_zil_begin();
	uint64_t now[2], obj = 0;
	posix_now(now);
	znode_phys_t zp, dold = *dzp;
	zn_init(&zp, 0, a->cred, dir, dmu_tx_get_txg(tx), now);
	mknode_owner(dzp, a, dacl != NULL, &zp);
	zp.zp_rdev = a->rdev;
	err = mknode_alloc(fs, a, &zp, tx, &obj);
	if (err == 0) {
		if (dacl != NULL)
			err = posix_acl_inherit_tx(fs, &zp, dacl, dlen, tx);
		if (err == 0 && a->tmpfile) {
			char key[POSIX_UNLINKED_KEYLEN];
			posix_unlinked_key(obj, key);
			zp.zp_nlink = 0;
			zp.zp_flags |= POSIX_ZF_UNLINKED;
			err = zap_update_int(fs->fs_os, fs->fs_unlinked, key, obj, tx);
		} else if (err == 0) {
			err = zap_add_int(fs->fs_os, dir, name, POSIX_DE_MAKE(obj, zp.zp_mode), tx);
		}
		if (err != 0 && zp.zp_xattr != 0)
			(void) posix_xattr_destroy(fs, zp.zp_xattr, tx);
		if (err != 0)
			(void) dmu_object_free(fs->fs_os, obj, tx);
	}
	tarn_free(dacl);
	if (err == 0 && a->tmpfile) {
		err = zn_write(fs, obj, NULL, &zp, tx);
	} else if (err == 0) {
		if (S_ISDIR(zp.zp_mode)) {
			zp.zp_nlink = 2;
			zp.zp_size = 2;
			dzp->zp_nlink++;
		}
		dzp->zp_size++;
		memcpy(dzp->zp_mtime, now, 16);
		memcpy(dzp->zp_ctime, now, 16);
		err = zn_write(fs, obj, NULL, &zp, tx);
		if (err == 0)
			err = zn_write(fs, dir, &dold, dzp, tx);
	}
	/* a file without a name is gone after a crash: nothing to log */
	if (err == 0 && !a->tmpfile)
		posix_zil_create(fs, tx, dir, dzp, name, obj, &zp, a->target);
	posix_zil_end(fs, tx, err);
	dmu_tx_commit(tx);
	if (err == 0) {
		/* a number is reused only after a sync; a stale pinode may remain */
		pinode_t *pi = pinode_get(fs, obj);
		if (__atomic_load_n(&pi->pi_destroyed, __ATOMIC_RELAXED)) {
			pthread_rwlock_wrlock(&pi->pi_lock);
			pi->pi_destroyed = false;
			pthread_rwlock_unlock(&pi->pi_lock);
		}
		pinode_rele(fs, pi);
	}
	if (err == 0 && attr != NULL)
		err = posix_ref_attr(fs, obj, &zp, attr);
	if (err == 0 && a->tmpfile) {
		/* the reference just taken keeps the pinode, and with it the mark */
		pinode_t *pi = pinode_get(fs, obj);
		pthread_rwlock_wrlock(&pi->pi_lock);
		pi->pi_tmpfile = true;
		pthread_rwlock_unlock(&pi->pi_lock);
		pinode_rele(fs, pi);
	}
	return (err);
}

static int
mknode(posix_fs_t *fs, posix_ino_t dir, const char *name, const mknode_args_t *a,
    posix_attr_t *attr)
{
	int err = posix_name_check(name);
	if (err == 0 && posix_is_dot(name))
		err = SET_ERROR(EEXIST);
	if (err == 0)
		err = posix_writable(fs);
	if (err == 0)
		err = posix_name_new(fs, name);
	if (err != 0)
		return (err);
	pinode_t *pi = pinode_get(fs, dir);
	pthread_rwlock_wrlock(&pi->pi_lock);
	znode_phys_t dzp, zp;
	uint64_t v;
	err = zn_read(fs, dir, &dzp);
	if (err == 0 && !S_ISDIR(dzp.zp_mode))
		err = SET_ERROR(ENOTDIR);
	if (err == 0 && dzp.zp_nlink == 0)
		err = SET_ERROR(ENOENT);        /* the directory was removed */
	if (err == 0) {
		err = zap_lookup_int(fs->fs_os, dir, name, &v);
		if (err == 0 && (a->excl || !a->open_existing)) {
			err = SET_ERROR(EEXIST);
		} else if (err == 0) {
			/* open(O_CREAT) of an existing name */
			err = zn_read(fs, POSIX_DE_INO(v), &zp);
			if (err == 0 && S_ISDIR(zp.zp_mode))
				err = SET_ERROR(EISDIR);
			if (err == 0)
				err = posix_ref_attr(fs, POSIX_DE_INO(v), &zp, attr);
		} else if (err == ENOENT) {
			err = mknode_locked(fs, dir, &dzp, name, a, attr);
		}
	}
	pthread_rwlock_unlock(&pi->pi_lock);
	pinode_rele(fs, pi);
	return (err);
}

int
posix_create(posix_fs_t *fs, posix_ino_t dir, const char *name, uint32_t mode, uint64_t rdev,
    const posix_cred_t *cred, bool excl, posix_attr_t *attr)
{
	if ((mode & S_IFMT) == 0)
		mode |= S_IFREG;
	if (!S_ISREG(mode) && !S_ISCHR(mode) && !S_ISBLK(mode) && !S_ISFIFO(mode) &&
	    !S_ISSOCK(mode))
		return (SET_ERROR(EINVAL));
	mknode_args_t a = { .mode = mode, .rdev = rdev, .cred = cred, .excl = excl,
		.open_existing = S_ISREG(mode) };
	return (mknode(fs, dir, name, &a, attr));
}

/*
 * O_TMPFILE: a regular file as a create in dir would make it (owner,
 * group, mode, default ACL), but without a name: no links, listed in the
 * unlinked set from the start, so that its last close frees it, and after
 * a crash the next mount.  posix_link may give it a name (linkat).
 */
int
posix_tmpfile(posix_fs_t *fs, posix_ino_t dir, uint32_t mode, const posix_cred_t *cred,
    posix_attr_t *attr)
{
	int err = posix_writable(fs);
	if (err != 0)
		return (err);
	mknode_args_t a = { .mode = S_IFREG | (mode & 07777), .cred = cred, .excl = true,
		.tmpfile = true };
	pinode_t *pi = pinode_get(fs, dir);
	pthread_rwlock_wrlock(&pi->pi_lock);
	znode_phys_t dzp;
	err = zn_read(fs, dir, &dzp);
	if (err == 0 && !S_ISDIR(dzp.zp_mode))
		err = SET_ERROR(ENOTDIR);
	if (err == 0 && dzp.zp_nlink == 0)
		err = SET_ERROR(ENOENT);
	if (err == 0) {
		tarn_mutex_lock(&fs->fs_unlinked_lock, POSIX_UNLINKED);
		err = mknode_locked(fs, dir, &dzp, NULL, &a, attr);
		tarn_mutex_unlock(&fs->fs_unlinked_lock);
	}
	pthread_rwlock_unlock(&pi->pi_lock);
	pinode_rele(fs, pi);
	return (err);
}

/* Replay of a logged create: the same node under the same object number. */
int
posix_mknode_claim(posix_fs_t *fs, posix_ino_t dir, const char *name, uint32_t mode,
    uint64_t rdev, const char *target, const posix_cred_t *cred, posix_ino_t obj)
{
	if (obj == 0 || (S_ISLNK(mode) && target == NULL))
		return (SET_ERROR(EINVAL));
	mknode_args_t a = { .mode = mode, .rdev = rdev, .cred = cred, .excl = true,
		.target = S_ISLNK(mode) ? target : NULL, .want_obj = obj };
	return (mknode(fs, dir, name, &a, NULL));
}

int
posix_mkdir(posix_fs_t *fs, posix_ino_t dir, const char *name, uint32_t mode,
    const posix_cred_t *cred, posix_attr_t *attr)
{
	mknode_args_t a = { .mode = S_IFDIR | (mode & 07777), .cred = cred, .excl = true };
	return (mknode(fs, dir, name, &a, attr));
}

int
posix_symlink(posix_fs_t *fs, posix_ino_t dir, const char *name, const char *target,
    const posix_cred_t *cred, posix_attr_t *attr)
{
	if (target == NULL || target[0] == '\0')
		return (SET_ERROR(ENOENT));
	if (strnlen(target, POSIX_SYMLINK_MAX + 1) > POSIX_SYMLINK_MAX)
		return (SET_ERROR(ENAMETOOLONG));
	mknode_args_t a = { .mode = S_IFLNK | 0777, .target = target, .cred = cred,
		.excl = true };
	return (mknode(fs, dir, name, &a, attr));
}

int
posix_readlink(posix_fs_t *fs, posix_ino_t ino, char *buf, size_t len)
{
	pinode_t *pi = pinode_get(fs, ino);
	pthread_rwlock_rdlock(&pi->pi_lock);
	znode_phys_t zp;
	int err = zn_read(fs, ino, &zp);
	if (err == 0 && !S_ISLNK(zp.zp_mode))
		err = SET_ERROR(EINVAL);
	if (err == 0 && len < zp.zp_size + 1)
		err = SET_ERROR(ERANGE);
	if (err == 0 && zp.zp_size <= POSIX_INLINE_MAX)
		memcpy(buf, zp.zp_inline, zp.zp_size);
	else if (err == 0)
		err = dmu_read(fs->fs_os, ino, 0, zp.zp_size, buf);
	if (err == 0)
		buf[zp.zp_size] = '\0';
	pthread_rwlock_unlock(&pi->pi_lock);
	pinode_rele(fs, pi);
	return (err);
}

/* ---- hard links ---- */

static int
link_check(posix_fs_t *fs, posix_lockset_t *ls, posix_ino_t ino, posix_ino_t newdir,
    const char *newname)
{
	const znode_phys_t *dzp = lockset_zp(ls, newdir), *zp = lockset_zp(ls, ino);
	uint64_t v;
	if (!S_ISDIR(dzp->zp_mode))
		return (SET_ERROR(ENOTDIR));
	if (dzp->zp_nlink == 0 || (zp->zp_nlink == 0 && !lockset_pi(ls, ino)->pi_tmpfile))
		return (SET_ERROR(ENOENT));
	if (S_ISDIR(zp->zp_mode))
		return (SET_ERROR(EPERM));
	if (zp->zp_nlink >= POSIX_LINK_MAX)
		return (SET_ERROR(EMLINK));
	int err = zap_lookup_int(fs->fs_os, newdir, newname, &v);
	if (err == 0)
		return (SET_ERROR(EEXIST));
	if (err != ENOENT)
		return (err);
	return (posix_space_check(fs, POSIX_DIRENT_BYTES));
}

int
posix_link(posix_fs_t *fs, posix_ino_t ino, posix_ino_t newdir, const char *newname,
    posix_attr_t *attr)
{
	int err = posix_name_check(newname);
	if (err == 0 && posix_is_dot(newname))
		err = SET_ERROR(EEXIST);
	if (err == 0)
		err = posix_writable(fs);
	if (err == 0)
		err = posix_name_new(fs, newname);
	if (err != 0)
		return (err);
	posix_lockset_t ls = { 0 };
	lockset_add_ino(fs, &ls, ino);
	lockset_add_ino(fs, &ls, newdir);
	err = lockset_lock(fs, &ls);
	if (err == 0)
		err = link_check(fs, &ls, ino, newdir, newname);
	/* an O_TMPFILE's first name takes it out of the unlinked set */
	bool named = err == 0 && lockset_zp(&ls, ino)->zp_nlink == 0;
	if (named)
		tarn_mutex_lock(&fs->fs_unlinked_lock, POSIX_UNLINKED);
	dmu_tx_t *tx = NULL;
	if (err == 0) {
		tx = dmu_tx_create(fs->fs_os);
		zap_tx_hold(tx, fs->fs_os, newdir, 1);
		dmu_tx_hold_bonus(tx, newdir);
		dmu_tx_hold_bonus(tx, ino);
		if (named)
			zap_tx_hold(tx, fs->fs_os, fs->fs_unlinked, 1);
		err = posix_tx_assign(tx);
	}
	if (err == 0) {
		znode_phys_t *zp = lockset_zp(&ls, ino), *dzp = lockset_zp(&ls, newdir);
		uint64_t now[2];
		posix_now(now);
		posix_zil_begin();
		err = zap_add_int(fs->fs_os, newdir, newname, POSIX_DE_MAKE(ino, zp->zp_mode), tx);
		if (err == 0 && named) {
			char key[POSIX_UNLINKED_KEYLEN];
			posix_unlinked_key(ino, key);
			err = zap_remove(fs->fs_os, fs->fs_unlinked, key, tx);
			zp->zp_flags &= ~(uint64_t)POSIX_ZF_UNLINKED;
		}
		if (err == 0) {
			zp->zp_nlink++;
			memcpy(zp->zp_ctime, now, 16);
			dzp->zp_size++;
			memcpy(dzp->zp_mtime, now, 16);
			memcpy(dzp->zp_ctime, now, 16);
			err = lockset_write(fs, &ls, tx);
		}
		if (err == 0 && named) {
			lockset_pi(&ls, ino)->pi_tmpfile = false;
		} else if (err == 0) {
			posix_zil_link(fs, tx, ino, newdir, dzp, newname);
			posix_zil_times(fs, tx, ino, zp);
		}
		posix_zil_end(fs, tx, err);
		/*
		 * The log never saw the O_TMPFILE made (nor its writes): its
		 * first name is not logged either, so that an fsync syncs the
		 * txg, which has them all.
		 */
		if (err == 0 && named)
			posix_zil_unlogged(fs, tx);
		dmu_tx_commit(tx);
		if (err == 0 && attr != NULL)
			err = posix_ref_attr(fs, ino, zp, attr);
	}
	if (named)
		tarn_mutex_unlock(&fs->fs_unlinked_lock);
	lockset_unlock(fs, &ls);
	return (err);
}

/* ---- unlink and rmdir ---- */

/* Checks of removing child from dir (both locked). */
static int
remove_check(posix_lockset_t *ls, posix_ino_t dir, posix_ino_t child, bool rmdir)
{
	const znode_phys_t *zp = lockset_zp(ls, child);
	if (!rmdir && S_ISDIR(zp->zp_mode))
		return (SET_ERROR(EISDIR));
	if (rmdir && !S_ISDIR(zp->zp_mode))
		return (SET_ERROR(ENOTDIR));
	if (rmdir && zp->zp_size > 2)
		return (SET_ERROR(ENOTEMPTY));
	if (child == dir)
		return (SET_ERROR(EINVAL));
	return (0);
}

/* Lock dir and the inode `name` names in it; *childp is that inode. */
static int
remove_lock(posix_fs_t *fs, posix_lockset_t *ls, posix_ino_t dir, const char *name,
    posix_ino_t *childp)
{
	for (;;) {
		posix_ino_t child, now;
		uint64_t v;
		int err = posix_dir_lookup(fs, dir, name, &child);
		if (err != 0)
			return (err);
		lockset_add_ino(fs, ls, dir);
		lockset_add_ino(fs, ls, child);
		err = lockset_lock(fs, ls);
		if (err == 0 && !S_ISDIR(lockset_zp(ls, dir)->zp_mode))
			err = SET_ERROR(ENOTDIR);
		if (err == 0)
			err = zap_lookup_int(fs->fs_os, dir, name, &v);
		now = POSIX_DE_INO(v);
		if (err == 0 && now != child) {
			lockset_unlock(fs, ls);         /* renamed meanwhile: again */
			continue;
		}
		*childp = child;
		return (err);
	}
}

static int
dir_remove(posix_fs_t *fs, posix_ino_t dir, const char *name, bool rmdir)
{
	posix_lockset_t ls = { 0 };
	posix_ino_t child = 0;
	int err = remove_lock(fs, &ls, dir, name, &child);
	if (err == 0)
		err = remove_check(&ls, dir, child, rmdir);
	if (err != 0) {
		lockset_unlock(fs, &ls);
		return (err);
	}
	bool keep = posix_keep_unlinked(fs, &ls, child, rmdir);
	if (keep)
		tarn_mutex_lock(&fs->fs_unlinked_lock, POSIX_UNLINKED);
	dmu_tx_t *tx = dmu_tx_create(fs->fs_os);
	zap_tx_hold(tx, fs->fs_os, dir, 1);
	dmu_tx_hold_bonus(tx, dir);
	dmu_tx_hold_bonus(tx, child);
	posix_hold_destroy(fs, tx);
	dmu_tx_mark_netfree(tx);
	if ((err = posix_tx_assign(tx)) == 0) {
		znode_phys_t *dzp = lockset_zp(&ls, dir), *zp = lockset_zp(&ls, child);
		uint64_t now[2];
		posix_now(now);
		posix_zil_begin();
		err = zap_remove(fs->fs_os, dir, name, tx);
		if (err == 0) {
			dzp->zp_size--;
			if (rmdir)
				dzp->zp_nlink--;
			memcpy(dzp->zp_mtime, now, 16);
			memcpy(dzp->zp_ctime, now, 16);
			zp->zp_nlink = rmdir ? 0 : zp->zp_nlink - 1;
			memcpy(zp->zp_ctime, now, 16);
			err = lockset_drop_link(fs, &ls, child, keep, tx);
		}
		if (err == 0)
			err = lockset_write(fs, &ls, tx);
		if (err == 0) {
			posix_zil_remove(fs, tx, dir, lockset_zp(&ls, dir), name, child, rmdir);
			posix_zil_times(fs, tx, child, zp);
		}
		posix_zil_end(fs, tx, err);
		dmu_tx_commit(tx);
	}
	if (keep)
		tarn_mutex_unlock(&fs->fs_unlinked_lock);
	lockset_unlock(fs, &ls);
	return (err);
}

int
posix_unlink(posix_fs_t *fs, posix_ino_t dir, const char *name)
{
	int err = posix_name_check(name);
	if (err == 0 && posix_is_dot(name))
		err = SET_ERROR(EISDIR);
	if (err == 0)
		err = posix_writable(fs);
	return (err != 0 ? err : dir_remove(fs, dir, name, false));
}

int
posix_rmdir(posix_fs_t *fs, posix_ino_t dir, const char *name)
{
	int err = posix_name_check(name);
	if (err == 0 && strcmp(name, ".") == 0)
		err = SET_ERROR(EINVAL);
	if (err == 0 && strcmp(name, "..") == 0)
		err = SET_ERROR(ENOTEMPTY);
	if (err == 0)
		err = posix_writable(fs);
	return (err != 0 ? err : dir_remove(fs, dir, name, true));
}

/* ---- paths for reports ---- */

int
posix_ino_path(posix_fs_t *fs, posix_ino_t ino, char *path, size_t len)
{
	if (len < 2)
		return (SET_ERROR(ENAMETOOLONG));
	znode_phys_t zp;
	int err = zn_read(fs, ino, &zp);
	if (err == 0 && (lookup_self_check(fs, ino, &zp) != 0 || zp.zp_nlink == 0))
		err = SET_ERROR(ENOENT);
	char *tail = tarn_alloc(len), *name = tarn_alloc(ZAP_MAXNAMELEN);
	tail[0] = '\0';
	/* from ino up to the root, each step putting "/name" in front */
	for (int depth = 0; err == 0 && ino != fs->fs_root; depth++) {
		posix_ino_t parent = zp.zp_parent;
		if (depth > 4096 || (err = zn_read(fs, parent, &zp)) != 0 ||
		    (err = zap_value_search(fs->fs_os, parent, ino, POSIX_DE_INO(~0ULL), name,
		    ZAP_MAXNAMELEN)) != 0) {
			err = err == ENAMETOOLONG ? err : SET_ERROR(ENOENT);
			break;
		}
		if ((err = tarn_path_prepend(tail, len, name, path)) != 0)
			break;
		ino = parent;
	}
	if (err == 0)
		(void) snprintf(path, len, "%s", tail[0] != '\0' ? tail : "/");
	tarn_free(tail);
	tarn_free(name);
	return (err);
}

/* ---- readdir ---- */

int
posix_readdir(posix_fs_t *fs, posix_ino_t dir, uint64_t cookie, posix_readdir_fn_t fn,
    void *arg)
{
	znode_phys_t zp;
	int err = zn_read(fs, dir, &zp);
	if (err == 0 && !S_ISDIR(zp.zp_mode))
		err = SET_ERROR(ENOTDIR);
	if (err != 0)
		return (err);
	if (cookie == 0 && fn(arg, ".", dir, DT_DIR, 1) != 0)
		return (0);
	if (cookie <= 1 && fn(arg, "..", zp.zp_parent, DT_DIR, POSIX_COOKIE_ZAP) != 0)
		return (0);
	zap_cursor_t zc;
	zap_attribute_t *za = tarn_alloc(sizeof (*za));
	zap_cursor_init(&zc, fs->fs_os, dir, MAX(cookie, POSIX_COOKIE_ZAP) - POSIX_COOKIE_ZAP);
	while ((err = zap_cursor_retrieve(&zc, za)) == 0) {
		uint64_t next = zap_cursor_serialize(&zc) + 1 + POSIX_COOKIE_ZAP;
		uint64_t v = za->za_first_integer;
		if (fn(arg, za->za_name, POSIX_DE_INO(v), POSIX_DE_TYPE(v), next) != 0)
			break;
		zap_cursor_advance(&zc);
	}
	zap_cursor_fini(&zc);
	tarn_free(za);
	return (err == ENOENT ? 0 : err);
}
