/*
 * posix_xattr.c — extended attributes.  Each inode with xattrs has its
 * own ZAP object (zp_xattr, made by the first set) mapping the full name
 * ("user.x") to the value: up to POSIX_XATTR_INLINE_MAX bytes as a
 * 1-byte-integer array in the ZAP; an empty value or a larger one (up to
 * POSIX_XATTR_SIZE_MAX, 64 KiB) as two 8-byte integers {object, size},
 * where the object (0 for an empty value) holds the bytes.  Namespaces:
 * user., trusted., security. and the two POSIX ACL names.  The kernel
 * enforces ACLs; the file system checks their values, keeps the mode in
 * step with the access ACL (setfacl changes the mode, chmod the ACL) and
 * gives new inodes their directory's default ACL (posix_acl.c).
 *
 * On pools with the feature xattr_inline, a small attribute is kept in
 * the inode instead (posix_xinline.c), as long as the inode's area has
 * room: a name lives in one place only, and a set that no longer fits
 * there moves it to the ZAP.  ACLs always go to the ZAP (posix_acl.c
 * reads them there), and symlinks keep their target in that area.
 * xattr=dir (pfo_xattr_dir) puts new attributes in the ZAP only; those
 * already in the inode stay readable and removable there.
 *
 * acltype=off (pfo_acl false): the ACL names are refused as on a file
 * system without ACLs (EOPNOTSUPP), left out of listings, not inherited
 * and not kept in step with chmod; ACLs stored before stay on disk,
 * unused, until acltype=posix brings them back (as on zfs).
 */
#include "posix_impl.h"

/* The value descriptor of a large or empty value. */
typedef struct xattr_ref {
	uint64_t xr_obj;
	uint64_t xr_size;
} xattr_ref_t;

static bool
xattr_prefixed(const char *name, const char *prefix, int *err)
{
	size_t n = strlen(prefix);
	if (strncmp(name, prefix, n) != 0)
		return (false);
	if (name[n] == '\0')
		*err = SET_ERROR(EINVAL);
	return (true);
}

static bool
xattr_is_acl(const char *name)
{
	return (strcmp(name, POSIX_ACL_ACCESS) == 0 || strcmp(name, POSIX_ACL_DEFAULT) == 0);
}

/* Checks of a name and of its namespace against the inode's type. */
static int
xattr_name_check(posix_fs_t *fs, const char *name)
{
	posix_fs_opts_t o;
	posix_opts(fs, &o);
	if (!o.pfo_xattr)
		return (SET_ERROR(EOPNOTSUPP));
	if (name == NULL)
		return (SET_ERROR(EINVAL));
	size_t len = strnlen(name, POSIX_XATTR_NAME_MAX + 1);
	if (len == 0 || len > POSIX_XATTR_NAME_MAX)
		return (SET_ERROR(ERANGE));
	int err = 0;
	if (xattr_prefixed(name, "user.", &err) || xattr_prefixed(name, "trusted.", &err) ||
	    xattr_prefixed(name, "security.", &err))
		return (err);
	if (xattr_is_acl(name))         /* acltype=off: as on a file system without ACLs */
		return (o.pfo_acl ? 0 : SET_ERROR(EOPNOTSUPP));
	return (SET_ERROR(EOPNOTSUPP));
}

/* user.* exists only on regular files and directories (as on Linux). */
static int
xattr_type_check(const znode_phys_t *zp, const char *name, bool write)
{
	if (strncmp(name, "user.", 5) != 0 || S_ISREG(zp->zp_mode) || S_ISDIR(zp->zp_mode))
		return (0);
	return (write ? SET_ERROR(EPERM) : SET_ERROR(ENODATA));
}

static pinode_t *
xattr_enter(posix_fs_t *fs, posix_ino_t ino, bool write, znode_phys_t *zp, int *err)
{
	pinode_t *pi = pinode_get(fs, ino);
	if (write)
		pthread_rwlock_wrlock(&pi->pi_lock);
	else
		pthread_rwlock_rdlock(&pi->pi_lock);
	*err = zn_read(fs, ino, zp);
	return (pi);
}

static void
xattr_exit(posix_fs_t *fs, pinode_t *pi)
{
	pthread_rwlock_unlock(&pi->pi_lock);
	pinode_rele(fs, pi);
}

/* May name be kept in the inode?  (Not with xattr=dir.) */
static bool
xattr_inline_ok(posix_fs_t *fs, const znode_phys_t *zp, const char *name)
{
	if (!fs->fs_xinline || S_ISLNK(zp->zp_mode) || strncmp(name, "system.", 7) == 0)
		return (false);
	posix_fs_opts_t o;
	posix_opts(fs, &o);
	return (!o.pfo_xattr_dir);
}

/* name's value when the inode holds it: 0, ENODATA (not there) or EIO. */
static int
xattr_inline_get(const znode_phys_t *zp, const char *name, const uint8_t **value,
    size_t *len)
{
	if (!(zp->zp_flags & POSIX_ZF_XINLINE) || S_ISLNK(zp->zp_mode))
		return (SET_ERROR(ENODATA));
	return (posix_xinline_get(zp->zp_inline, name, value, len));
}

/* After a change of zp's area: the flag says whether it holds anything. */
static void
xattr_inline_mark(znode_phys_t *zp)
{
	if (posix_xinline_empty(zp->zp_inline))
		zp->zp_flags &= ~(uint64_t)POSIX_ZF_XINLINE;
	else
		zp->zp_flags |= POSIX_ZF_XINLINE;
}

static bool
xattr_acl_on(posix_fs_t *fs)
{
	posix_fs_opts_t o;
	posix_opts(fs, &o);
	return (o.pfo_acl);
}

/* Find name: its length and, for a stored-apart value, its descriptor. */
static int
xattr_find(posix_fs_t *fs, uint64_t xobj, const char *name, uint64_t *len, xattr_ref_t *ref)
{
	int intsize;
	uint64_t num;
	memset(ref, 0, sizeof (*ref));
	if (xobj == 0)
		return (SET_ERROR(ENODATA));
	int err = zap_length(fs->fs_os, xobj, name, &intsize, &num);
	if (err == ENOENT)
		return (SET_ERROR(ENODATA));
	if (err != 0)
		return (err);
	if (intsize == 1) {
		*len = num;
		return (0);
	}
	if (num != 2)
		return (SET_ERROR(EIO));
	err = zap_lookup(fs->fs_os, xobj, name, 8, 2, ref);
	*len = ref->xr_size;
	return (err);
}

/* Read the len bytes of name's value (found by xattr_find: ref) into buf. */
static int
xattr_read(posix_fs_t *fs, uint64_t xobj, const char *name, const xattr_ref_t *ref,
    uint64_t len, void *buf)
{
	if (ref->xr_obj != 0)
		return (dmu_read(fs->fs_os, ref->xr_obj, 0, len, buf));
	return (zap_lookup(fs->fs_os, xobj, name, 1, len, buf));
}

int
posix_getxattr(posix_fs_t *fs, posix_ino_t ino, const char *name, void *value, size_t size,
    size_t *outlen)
{
	int err = xattr_name_check(fs, name);
	/*
	 * xattr=off with ACLs on: none (the kernel asks for them on permission
	 * checks).  With acltype=off the mount does not ask the kernel to
	 * enforce ACLs, and getfacl is told there are none (EOPNOTSUPP).
	 */
	if (err == EOPNOTSUPP && name != NULL && xattr_is_acl(name) && xattr_acl_on(fs))
		return (SET_ERROR(ENODATA));
	if (err != 0)
		return (err);
	znode_phys_t zp;
	pinode_t *pi = xattr_enter(fs, ino, false, &zp, &err);
	uint64_t len = 0;
	xattr_ref_t ref;
	const uint8_t *iv = NULL;
	size_t ilen = 0;
	if (err == 0)
		err = xattr_type_check(&zp, name, false);
	if (err == 0 && (err = xattr_inline_get(&zp, name, &iv, &ilen)) == 0)
		len = ilen;
	else if (err == ENODATA)
		err = xattr_find(fs, zp.zp_xattr, name, &len, &ref);
	if (err == 0 && size != 0 && size < len)
		err = SET_ERROR(ERANGE);
	if (err == 0 && size != 0 && len > 0 && iv != NULL)
		memcpy(value, iv, len);
	else if (err == 0 && size != 0 && len > 0)
		err = xattr_read(fs, zp.zp_xattr, name, &ref, len, value);
	if (err == 0)
		*outlen = len;
	xattr_exit(fs, pi);
	return (err);
}

/* Store name = value in tx (the xattr object exists; the old value is freed). */
static int
xattr_store(posix_fs_t *fs, uint64_t xobj, const char *name, const void *value, size_t size,
    const xattr_ref_t *old, dmu_tx_t *tx)
{
	int err = 0;
	if (old->xr_obj != 0)
		err = dmu_object_free(fs->fs_os, old->xr_obj, tx);
	if (err != 0)
		return (err);
	if (size > 0 && size <= POSIX_XATTR_INLINE_MAX)
		return (zap_update(fs->fs_os, xobj, name, 1, size, value, tx));
	xattr_ref_t ref = { .xr_obj = 0, .xr_size = size };
	if (size > 0) {
		uint32_t bs = (uint32_t)MAX(SPA_MINBLOCKSIZE, 1ULL << highbit64(size - 1));
		err = dmu_object_alloc(fs->fs_os, DMU_OT_UINT8, bs, DMU_OT_NONE, 0, tx,
		    &ref.xr_obj);
		if (err == 0)
			err = dmu_write(fs->fs_os, ref.xr_obj, 0, size, value, tx);
	}
	if (err == 0)
		err = zap_update(fs->fs_os, xobj, name, 8, 2, &ref, tx);
	return (err);
}

/*
 * The checks of setxattr with the inode locked: whether name exists, in
 * the inode (*inl) or in the ZAP (then old is its descriptor).
 */
static int
xattr_set_check(posix_fs_t *fs, const znode_phys_t *zp, const char *name, int flags,
    xattr_ref_t *old, bool *exists, bool *inl)
{
	int err = xattr_type_check(zp, name, true);
	if (err != 0)
		return (err);
	uint64_t len;
	const uint8_t *iv;
	size_t ilen;
	memset(old, 0, sizeof (*old));
	err = xattr_inline_get(zp, name, &iv, &ilen);
	*inl = err == 0;
	if (err == ENODATA)
		err = xattr_find(fs, zp->zp_xattr, name, &len, old);
	*exists = err == 0;
	if (err == 0 && (flags & POSIX_XATTR_CREATE))
		return (SET_ERROR(EEXIST));
	if (err == ENODATA && !(flags & POSIX_XATTR_REPLACE))
		return (0);
	return (err);
}

/* Remove name (it exists; old is its descriptor) in tx. */
static int
xattr_drop(posix_fs_t *fs, uint64_t xobj, const char *name, const xattr_ref_t *old,
    dmu_tx_t *tx)
{
	int err = 0;
	if (old->xr_obj != 0)
		err = dmu_object_free(fs->fs_os, old->xr_obj, tx);
	if (err == 0)
		err = zap_remove(fs->fs_os, xobj, name, tx);
	return (err);
}

/*
 * The checks of an ACL value: well formed, and a default ACL only on a
 * directory.  *mode gets the permission bits an access ACL implies and
 * *drop whether it says no more than them (then no ACL is kept).
 */
static int
xattr_acl_check(const znode_phys_t *zp, const char *name, const void *value, size_t size,
    bool *access, uint32_t *mode, bool *drop)
{
	*access = strcmp(name, POSIX_ACL_ACCESS) == 0;
	*drop = false;
	if (!*access && strcmp(name, POSIX_ACL_DEFAULT) != 0)
		return (0);
	if (!*access && !S_ISDIR(zp->zp_mode))
		return (SET_ERROR(EACCES));
	int err = posix_acl_check(value, size);
	if (err == 0 && *access)
		*mode = posix_acl_mode(value, size, drop);
	return (err);
}

int
posix_setxattr(posix_fs_t *fs, posix_ino_t ino, const char *name, const void *value,
    size_t size, int flags)
{
	int err = xattr_name_check(fs, name);
	if (err == 0 && size > POSIX_XATTR_SIZE_MAX)
		err = SET_ERROR(E2BIG);
	if (err == 0 && (flags & ~(POSIX_XATTR_CREATE | POSIX_XATTR_REPLACE |
	    POSIX_XATTR_KILL_SGID)))
		err = SET_ERROR(EINVAL);
	if (err == 0)
		err = posix_writable(fs);
	if (err != 0)
		return (err);
	znode_phys_t old, zp;
	xattr_ref_t oref;
	bool exists = false, inl = false, access = false, drop = false;
	uint32_t amode = 0;
	pinode_t *pi = xattr_enter(fs, ino, true, &old, &err);
	if (err == 0)
		err = xattr_set_check(fs, &old, name, flags, &oref, &exists, &inl);
	if (err == 0)
		err = xattr_acl_check(&old, name, value, size, &access, &amode, &drop);
	dmu_tx_t *tx = NULL;
	if (err == 0) {
		tx = dmu_tx_create(fs->fs_os);
		dmu_tx_hold_bonus(tx, ino);
		zap_tx_hold(tx, fs->fs_os, old.zp_xattr, 1);
		dmu_tx_hold_space(tx, DNODE_BLOCK_SIZE + 2 * size);
		err = posix_tx_assign(tx);
	}
	bool logged = posix_zil_xattr_loggable(fs, name, size);
	if (err == 0) {
		if (logged)
			posix_zil_begin();
		zp = old;
		if (!(zp.zp_flags & POSIX_ZF_XINLINE) && !S_ISLNK(zp.zp_mode))
			memset(zp.zp_inline, 0, sizeof (zp.zp_inline));
		/* in the inode when it fits there (then out of the ZAP) ... */
		bool here = !drop && xattr_inline_ok(fs, &zp, name) &&
		    posix_xinline_set(zp.zp_inline, name, value, size) == 0;
		if (here && exists && !inl)
			err = xattr_drop(fs, zp.zp_xattr, name, &oref, tx);
		/* ... else in the ZAP (then out of the inode) */
		if (!here && inl)
			err = posix_xinline_remove(zp.zp_inline, name);
		if (!here && err == 0 && drop && exists && !inl)
			err = xattr_drop(fs, zp.zp_xattr, name, &oref, tx);
		else if (!here && err == 0 && !drop && zp.zp_xattr == 0)
			err = zap_create(fs->fs_os, DMU_OT_ZAP, tx, &zp.zp_xattr);
		if (!here && err == 0 && !drop)
			err = xattr_store(fs, zp.zp_xattr, name, value, size, &oref, tx);
		if (!S_ISLNK(zp.zp_mode))
			xattr_inline_mark(&zp);
		if (err == 0) {
			if (access)
				zp.zp_mode = (zp.zp_mode & ~0777ULL) | amode;
			if (access && (flags & POSIX_XATTR_KILL_SGID))
				zp.zp_mode &= ~(uint64_t)S_ISGID;
			posix_now(zp.zp_ctime);
			err = zn_write(fs, ino, &old, &zp, tx);
		}
		if (logged) {
			/* a replay of the ACL sets the permission bits, not the kill */
			bool killed = (zp.zp_mode & S_ISGID) != (old.zp_mode & S_ISGID);
			if (err == 0)
				posix_zil_xattr(fs, tx, ino, name, value, size, false, &zp, killed);
			posix_zil_end(fs, tx, err);
		}
		dmu_tx_commit(tx);
	}
	xattr_exit(fs, pi);
	return (err);
}

int
posix_removexattr(posix_fs_t *fs, posix_ino_t ino, const char *name)
{
	int err = xattr_name_check(fs, name);
	if (err == 0)
		err = posix_writable(fs);
	if (err != 0)
		return (err);
	znode_phys_t old, zp;
	xattr_ref_t ref;
	uint64_t len;
	const uint8_t *iv;
	size_t ilen;
	bool inl = false;
	pinode_t *pi = xattr_enter(fs, ino, true, &old, &err);
	if (err == 0)
		err = xattr_type_check(&old, name, true);
	if (err == 0) {
		err = xattr_inline_get(&old, name, &iv, &ilen);
		inl = err == 0;
	}
	if (err == ENODATA)
		err = xattr_find(fs, old.zp_xattr, name, &len, &ref);
	dmu_tx_t *tx = NULL;
	if (err == 0) {
		tx = dmu_tx_create(fs->fs_os);
		dmu_tx_hold_bonus(tx, ino);
		zap_tx_hold(tx, fs->fs_os, old.zp_xattr, 1);
		dmu_tx_mark_netfree(tx);
		err = posix_tx_assign(tx);
	}
	bool logged = posix_zil_xattr_loggable(fs, name, 0);
	if (err == 0) {
		if (logged)
			posix_zil_begin();
		zp = old;
		if (inl) {
			err = posix_xinline_remove(zp.zp_inline, name);
			xattr_inline_mark(&zp);
		} else {
			err = xattr_drop(fs, zp.zp_xattr, name, &ref, tx);
		}
		if (err == 0) {
			posix_now(zp.zp_ctime);
			err = zn_write(fs, ino, &old, &zp, tx);
		}
		if (logged) {
			if (err == 0)
				posix_zil_xattr(fs, tx, ino, name, NULL, 0, true, &zp, false);
			posix_zil_end(fs, tx, err);
		}
		dmu_tx_commit(tx);
	}
	xattr_exit(fs, pi);
	return (err);
}

int
posix_listxattr(posix_fs_t *fs, posix_ino_t ino, char *list, size_t size, size_t *outlen)
{
	posix_fs_opts_t o;
	posix_opts(fs, &o);
	if (!o.pfo_xattr)
		return (SET_ERROR(EOPNOTSUPP));
	znode_phys_t zp;
	int err;
	pinode_t *pi = xattr_enter(fs, ino, false, &zp, &err);
	size_t total = 0;
	if (err == 0 && (zp.zp_flags & POSIX_ZF_XINLINE) && !S_ISLNK(zp.zp_mode))
		err = posix_xinline_list(zp.zp_inline, list, size, &total);
	if (err == 0 && zp.zp_xattr != 0) {
		zap_cursor_t zc;
		zap_attribute_t *za = tarn_alloc(sizeof (*za));
		zap_cursor_init(&zc, fs->fs_os, zp.zp_xattr, 0);
		while ((err = zap_cursor_retrieve(&zc, za)) == 0) {
			size_t n = strlen(za->za_name) + 1;
			if (!o.pfo_acl && xattr_is_acl(za->za_name)) {
				zap_cursor_advance(&zc);
				continue;
			}
			if (size != 0 && total + n > size) {
				err = SET_ERROR(ERANGE);
				break;
			}
			if (size != 0)
				memcpy(list + total, za->za_name, n);
			total += n;
			zap_cursor_advance(&zc);
		}
		zap_cursor_fini(&zc);
		tarn_free(za);
		if (err == ENOENT)
			err = 0;
	}
	if (err == 0)
		*outlen = total;
	xattr_exit(fs, pi);
	return (err);
}

/* Free an inode's xattr object and the values stored apart (in tx). */
int
posix_xattr_destroy(posix_fs_t *fs, uint64_t xobj, dmu_tx_t *tx)
{
	zap_cursor_t zc;
	zap_attribute_t *za = tarn_alloc(sizeof (*za));
	int err;
	zap_cursor_init(&zc, fs->fs_os, xobj, 0);
	while ((err = zap_cursor_retrieve(&zc, za)) == 0) {
		xattr_ref_t ref;
		if (za->za_intsize == 8 && za->za_num == 2 &&
		    zap_lookup(fs->fs_os, xobj, za->za_name, 8, 2, &ref) == 0 && ref.xr_obj != 0)
			(void) dmu_object_free(fs->fs_os, ref.xr_obj, tx);
		zap_cursor_advance(&zc);
	}
	zap_cursor_fini(&zc);
	tarn_free(za);
	if (err != ENOENT)
		return (err);
	return (zap_destroy(fs->fs_os, xobj, tx));
}

/* ---- ACLs kept with the mode and inherited ---- */

/*
 * name's value in a new buffer (tarn_free) and its descriptor (*ref), or
 * NULL (absent, or unreadable).
 */
static void *
xattr_get_alloc(posix_fs_t *fs, uint64_t xobj, const char *name, size_t *lenp,
    xattr_ref_t *ref)
{
	uint64_t len;
	if (xattr_find(fs, xobj, name, &len, ref) != 0 || len == 0 || len > POSIX_XATTR_SIZE_MAX)
		return (NULL);
	void *buf = tarn_alloc(len);
	if (xattr_read(fs, xobj, name, ref, len, buf) != 0) {
		tarn_free(buf);
		return (NULL);
	}
	*lenp = len;
	return (buf);
}

void *
posix_acl_default_get(posix_fs_t *fs, const znode_phys_t *dzp, size_t *lenp)
{
	posix_fs_opts_t o;
	posix_opts(fs, &o);
	if (!o.pfo_xattr || !o.pfo_acl || dzp->zp_xattr == 0)
		return (NULL);
	xattr_ref_t ref;
	void *v = xattr_get_alloc(fs, dzp->zp_xattr, POSIX_ACL_DEFAULT, lenp, &ref);
	if (v != NULL && posix_acl_check(v, *lenp) != 0) {
		tarn_free(v);           /* stored before values were checked: ignore it */
		v = NULL;
	}
	return (v);
}

void
posix_acl_tx_hold(posix_fs_t *fs, const znode_phys_t *zp, size_t len, dmu_tx_t *tx)
{
	zap_tx_hold(tx, fs->fs_os, zp->zp_xattr, 2);
	dmu_tx_hold_space(tx, DNODE_BLOCK_SIZE + 2 * len);
}

int
posix_acl_chmod_tx(posix_fs_t *fs, const znode_phys_t *zp, uint32_t mode, dmu_tx_t *tx)
{
	if (zp->zp_xattr == 0 || !xattr_acl_on(fs))
		return (0);
	size_t len;
	xattr_ref_t old;
	void *v = xattr_get_alloc(fs, zp->zp_xattr, POSIX_ACL_ACCESS, &len, &old);
	if (v == NULL || posix_acl_check(v, len) != 0) {
		tarn_free(v);
		return (0);
	}
	posix_acl_chmod(v, len, mode);
	int err = xattr_store(fs, zp->zp_xattr, POSIX_ACL_ACCESS, v, len, &old, tx);
	tarn_free(v);
	return (err);
}

int
posix_acl_inherit_tx(posix_fs_t *fs, znode_phys_t *zp, const void *dacl, size_t dlen,
    dmu_tx_t *tx)
{
	void *access = tarn_alloc(dlen);
	uint32_t mode = (uint32_t)zp->zp_mode;
	bool needed = posix_acl_inherit(dacl, dlen, &mode, access);
	zp->zp_mode = mode;
	const xattr_ref_t none = { 0, 0 };
	int err = 0;
	if ((needed || S_ISDIR(zp->zp_mode)) && zp->zp_xattr == 0)
		err = zap_create(fs->fs_os, DMU_OT_ZAP, tx, &zp->zp_xattr);
	if (err == 0 && needed)
		err = xattr_store(fs, zp->zp_xattr, POSIX_ACL_ACCESS, access, dlen, &none, tx);
	if (err == 0 && S_ISDIR(zp->zp_mode))
		err = xattr_store(fs, zp->zp_xattr, POSIX_ACL_DEFAULT, dacl, dlen, &none, tx);
	tarn_free(access);
	return (err);
}
