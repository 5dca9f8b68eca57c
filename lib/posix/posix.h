/*
 * posix.h — a POSIX file system on an object set: inodes (attributes in
 * the dnode's bonus buffer), directories as ZAP objects, hard links,
 * symlinks, extended attributes, sparse files, permissions and times,
 * and the unlinked set reclaimed at mount.  No FUSE types here: the FUSE
 * server (fuse/) translates requests into these calls, and tests call
 * them directly.  Theory and on-disk layout: the comment at the top of
 * posix_fs.c and docs/FORMAT.md "File systems".
 *
 * Every function returns 0 or a positive errno, as POSIX would set it
 * (ENOENT, EEXIST, ENOTDIR, EISDIR, ENOTEMPTY, EXDEV, ENAMETOOLONG,
 * EINVAL, EFBIG, ENOSPC, EDQUOT, EROFS, ENODATA, ERANGE, E2BIG, ...).
 * Permission checks on mode bits are left to the kernel
 * (default_permissions), except those the kernel cannot do (sticky
 * directories on unlink/rename, which it does do; and setgid clearing on
 * write/chown, done here).
 */
#ifndef TARN_POSIX_H
#define TARN_POSIX_H

#include <fcntl.h>

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include "dmu.h"
#include "zap.h"
#include "zil.h"

typedef struct posix_fs posix_fs_t;
typedef uint64_t posix_ino_t;          /* the object number */

#define POSIX_NAME_MAX   255
#define POSIX_XATTR_NAME_MAX 255
#define POSIX_XATTR_SIZE_MAX (64 * KiB)

typedef struct posix_attr {
	posix_ino_t pa_ino;
	uint64_t pa_gen;        /* generation: ino reuse detection (NFS, FUSE) */
	uint32_t pa_mode;       /* type and permission bits (S_IFREG | 0644...) */
	uint32_t pa_nlink;
	uint32_t pa_uid, pa_gid;
	uint64_t pa_size;
	uint64_t pa_blocks;     /* 512-byte units allocated (estimate while dirty) */
	uint64_t pa_rdev;
	uint32_t pa_blksize;    /* preferred I/O size (the record size) */
	struct timespec pa_atime, pa_mtime, pa_ctime, pa_crtime;
} posix_attr_t;

/* setattr mask */
#define POSIX_SET_MODE   0x001
#define POSIX_SET_UID    0x002
#define POSIX_SET_GID    0x004
#define POSIX_SET_SIZE   0x008
#define POSIX_SET_ATIME  0x010
#define POSIX_SET_MTIME  0x020
#define POSIX_SET_ATIME_NOW 0x040
#define POSIX_SET_MTIME_NOW 0x080
#define POSIX_SET_CTIME  0x100
/*
 * Clear set-user-ID, and set-group-ID when group-executable (of the new
 * mode when POSIX_SET_MODE is there too): the caller was found to lack
 * CAP_FSETID on a write or truncate, or it is a chown.  Alone and with
 * nothing to clear, posix_setattr changes nothing (not even the ctime).
 */
#define POSIX_SET_KILL_SUIDGID 0x200
/*
 * With POSIX_SET_KILL_SUIDGID: set-group-ID goes too.  Without it the
 * caller's credentials decide, as on Linux: set-group-ID without group
 * execute goes when the caller (a cred given, not root) is not in the
 * file's group, checked under the inode's lock.
 */
#define POSIX_SET_KILL_SGID    0x400

/* Who is asking (for ownership of new files, setgid rules). */
typedef struct posix_cred {
	uint32_t pc_uid, pc_gid;
	uint32_t pc_umask;
	/*
	 * Is the caller in group gid through its supplementary groups?
	 * (pc_gid is checked first; NULL: no supplementary groups.)  Asked
	 * only when a kill of set-group-ID depends on it.
	 */
	bool   (*pc_in_group)(const struct posix_cred *cred, uint32_t gid);
	void    *pc_arg;
} posix_cred_t;

typedef enum posix_atime_mode {
	POSIX_ATIME_ON = 0,
	POSIX_ATIME_OFF,
	POSIX_ATIME_RELATIME,
} posix_atime_mode_t;

/* The sync property: what fsync and writes promise (posix_zil.c). */
typedef enum posix_sync_mode {
	POSIX_SYNC_STANDARD = 0,       /* fsync / O_SYNC make data durable */
	POSIX_SYNC_ALWAYS,             /* every write is durable when it returns */
	POSIX_SYNC_DISABLED,           /* fsync returns at once; the txg decides */
} posix_sync_mode_t;

typedef struct posix_fs_opts {
	bool     pfo_readonly;
	posix_atime_mode_t pfo_atime;
	uint32_t pfo_recordsize;        /* default 128 KiB */
	bool     pfo_xattr;             /* xattrs allowed (default true) */
	bool     pfo_xattr_dir;         /* xattr=dir: new ones never go in the inode */
	bool     pfo_acl;               /* POSIX ACLs (default true; acltype=off: false) */
	posix_sync_mode_t pfo_sync;     /* default standard */
	uint64_t pfo_quota;             /* bytes, 0 = none (refquota) */
	/*
	 * space accounting hook: bytes the file system may still use, and in
	 * *quota (may be NULL) whether a quota is what limits them rather
	 * than the pool's free space.  statfs reports it; a write, create or
	 * fallocate needing more fails with EDQUOT when a quota limits, else
	 * ENOSPC.  Without it statfs reports only pfo_quota's room.
	 */
	uint64_t (*pfo_avail)(void *arg, bool *quota);
	void    *pfo_avail_arg;
	/*
	 * The file system's intent log (spa_objset_zil), or NULL: fsync then
	 * syncs a txg.  Taken at open (a claimed log is replayed there);
	 * posix_fs_set_opts does not change it.
	 */
	zil_t   *pfo_zil;
	/*
	 * Small xattrs may be kept in the inode (the pool's feature
	 * xattr_inline).  Taken at open; posix_fs_set_opts does not change it.
	 */
	bool     pfo_xattr_inline;
	/* utf8only=on: a new name that is not valid UTF-8 is EILSEQ (create, link, rename) */
	bool     pfo_utf8only;
} posix_fs_opts_t;

/* ---- file systems ---- */

/*
 * Defaults: read-write, relatime, 128 KiB records, xattrs and ACLs on, no
 * quota, no hook.  Start from these: a zeroed posix_fs_opts_t has xattrs
 * off.  posix_fs_open(os, NULL, ...) uses them.
 */
void posix_fs_opts_default(posix_fs_opts_t *opts);

/* Lay out an empty file system in an empty object set (root dir owned by uid/gid, mode 0755). */
int posix_fs_create(objset_t *os, uint32_t uid, uint32_t gid);
/* Whether s[0..len) is valid UTF-8 (no overlong forms, surrogates or > U+10FFFF). */
bool posix_utf8_valid(const char *s, size_t len);
/*
 * Open (mount) the file system in os: load the master node, reclaim the
 * unlinked set (files unlinked while open before a crash).
 */
int posix_fs_open(objset_t *os, const posix_fs_opts_t *opts, posix_fs_t **fsp);
/* The file system format this build writes (and the newest it reads). */
#define POSIX_VERSION        1
/*
 * The file system format version of os (its master node's VERSION),
 * without opening it: EINVAL when os holds no file system.
 */
int posix_fs_version(objset_t *os, uint64_t *version);
/* Close: waits for nothing; the caller has synced if it wants to. */
void posix_fs_close(posix_fs_t *fs);
void posix_fs_set_opts(posix_fs_t *fs, const posix_fs_opts_t *opts);
posix_ino_t posix_fs_root(const posix_fs_t *fs);
/*
 * The path of ino from the file system's root ("/dir/file"; "/" for the
 * root), for reports such as zpool status -v: up the parent links, each
 * name found by a scan of the parent directory.  ENOENT when ino is not a
 * linked file or directory (unlinked, or another kind of object); a
 * hard-linked file gets the name in the directory it was created in while
 * that link lasts.  ENAMETOOLONG when len is too short.
 */
int posix_ino_path(posix_fs_t *fs, posix_ino_t ino, char *path, size_t len);
/* Intent-log records replayed when this file system was opened. */
uint64_t posix_fs_replayed(const posix_fs_t *fs);
/*
 * Test seam: replays replay at most n records and then fail (EINTR), as
 * if the process died there (0: no limit).  The next open goes on from
 * what the failed one committed.
 */
void posix_zil_set_replay_limit(uint64_t n);
objset_t *posix_fs_objset(posix_fs_t *fs);
/* Does the ARC keep the file system's data (primarycache=all)? */
bool posix_caches_data(posix_fs_t *fs);
int posix_statfs(posix_fs_t *fs, struct statvfs *st);
/*
 * Space kept free for writes the kernel has already accepted into its
 * page cache (the FUSE writeback cache) and will send later: changes
 * through posix_write and the other calls leave `bytes` of the pool's
 * space free, posix_write_cached may use it.  0 (the default): none.
 */
void posix_fs_set_reserve(posix_fs_t *fs, uint64_t bytes);
/*
 * Would a new write through the kernel's cache be refused now (ENOSPC,
 * EDQUOT), i.e. has the pool's space less the reserve run out?  With
 * wait, unsynced txgs are let land first (their frees and worst-case
 * estimates), as a write would; without, an estimate that never waits.
 */
int posix_space_gate(posix_fs_t *fs, bool wait);
/* Wait until everything done so far is on stable storage. */
int posix_fs_sync(posix_fs_t *fs);

/* ---- inodes ---- */

int posix_getattr(posix_fs_t *fs, posix_ino_t ino, posix_attr_t *attr);
int posix_setattr(posix_fs_t *fs, posix_ino_t ino, const posix_attr_t *in, int mask,
    const posix_cred_t *cred, posix_attr_t *out);
int posix_lookup(posix_fs_t *fs, posix_ino_t dir, const char *name, posix_attr_t *attr);

/*
 * References: the FUSE server holds one per kernel lookup and per open
 * file; an inode whose link count is 0 is destroyed when its last
 * reference goes (unlinked while open).  Lookups/creates that return an
 * attr take a reference; posix_forget drops n of them.
 */
void posix_forget(posix_fs_t *fs, posix_ino_t ino, uint64_t n);

/* ---- namespace ---- */

/*
 * mode: S_IFREG (or 0), S_IFCHR, S_IFBLK, S_IFIFO, S_IFSOCK with the
 * permission bits (cred->pc_umask is applied).  excl false: an existing
 * regular file is returned (open(O_CREAT) without O_EXCL).
 */
int posix_create(posix_fs_t *fs, posix_ino_t dir, const char *name, uint32_t mode,
    uint64_t rdev, const posix_cred_t *cred, bool excl, posix_attr_t *attr);
/*
 * O_TMPFILE: a regular file made as in dir but with no name (no links, in
 * the unlinked set: freed at its last forget, or at the next mount after
 * a crash), returned with one reference.  posix_link may name it once.
 */
int posix_tmpfile(posix_fs_t *fs, posix_ino_t dir, uint32_t mode, const posix_cred_t *cred,
    posix_attr_t *attr);
int posix_mkdir(posix_fs_t *fs, posix_ino_t dir, const char *name, uint32_t mode,
    const posix_cred_t *cred, posix_attr_t *attr);
int posix_symlink(posix_fs_t *fs, posix_ino_t dir, const char *name, const char *target,
    const posix_cred_t *cred, posix_attr_t *attr);
/* The target, NUL-terminated; ERANGE if len < its length + 1; EINVAL if not a symlink. */
int posix_readlink(posix_fs_t *fs, posix_ino_t ino, char *buf, size_t len);
int posix_link(posix_fs_t *fs, posix_ino_t ino, posix_ino_t newdir, const char *newname,
    posix_attr_t *attr);
int posix_unlink(posix_fs_t *fs, posix_ino_t dir, const char *name);
int posix_rmdir(posix_fs_t *fs, posix_ino_t dir, const char *name);
#define POSIX_RENAME_NOREPLACE 0x1
#define POSIX_RENAME_EXCHANGE  0x2
int posix_rename(posix_fs_t *fs, posix_ino_t dir, const char *name, posix_ino_t newdir,
    const char *newname, unsigned int flags);

/*
 * Directory listing from a cookie (0 = start; "." and ".." come first);
 * fn returns non-zero to stop (the entry it refused is returned again
 * from the same cookie).  Cookies stay valid across concurrent changes:
 * every entry present for the whole listing is returned exactly once.
 */
/* dtype is a DT_* value; cookies are below 2^63; atime is the caller's (posix_touch_atime). */
typedef int (*posix_readdir_fn_t)(void *arg, const char *name, posix_ino_t ino,
    uint32_t dtype, uint64_t next_cookie);
int posix_readdir(posix_fs_t *fs, posix_ino_t dir, uint64_t cookie, posix_readdir_fn_t fn,
    void *arg);

/* ---- data ---- */

int posix_read(posix_fs_t *fs, posix_ino_t ino, uint64_t off, uint64_t len, void *buf,
    uint64_t *nread);
/* The same from the cache alone (dmu_read_if_cached): EAGAIN when a block is not cached. */
int posix_read_if_cached(posix_fs_t *fs, posix_ino_t ino, uint64_t off, uint64_t len,
    void *buf, uint64_t *nread);
/* Writes extend the file; O_APPEND is the caller's (it passes off = size). */
int posix_write(posix_fs_t *fs, posix_ino_t ino, uint64_t off, uint64_t len, const void *buf,
    const posix_cred_t *cred, uint64_t *nwritten);
/*
 * posix_write of data the kernel's page cache accepted earlier (a FUSE
 * write-back): it may use the reserve of posix_fs_set_reserve.
 */
int posix_write_cached(posix_fs_t *fs, posix_ino_t ino, uint64_t off, uint64_t len,
    const void *buf, const posix_cred_t *cred, uint64_t *nwritten);
/*
 * Make ino at least `size` bytes long (the new part a hole), as a
 * change that needs no new space: after a cached write that failed, so
 * that the size the kernel shows (it grew with the write) is the size
 * on disk.
 */
int posix_extend(posix_fs_t *fs, posix_ino_t ino, uint64_t size);
/* mode: 0, FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE */
int posix_falloc(posix_fs_t *fs, posix_ino_t ino, int mode, uint64_t off, uint64_t len);
/* SEEK_DATA / SEEK_HOLE */
int posix_lseek(posix_fs_t *fs, posix_ino_t ino, uint64_t off, int whence, uint64_t *out);
/* Data (and with !datasync the attributes) of ino on stable storage. */
int posix_fsync(posix_fs_t *fs, posix_ino_t ino, bool datasync);
/* Access time update on read, per the atime mode (after read and readdir). */
void posix_touch_atime(posix_fs_t *fs, posix_ino_t ino);

/* ---- extended attributes (names with their namespace: "user.x") ---- */

#define POSIX_XATTR_CREATE  0x1
#define POSIX_XATTR_REPLACE 0x2
/*
 * Setting the access ACL: clear set-group-ID too (the caller is outside
 * the file's group and lacks CAP_FSETID, as the kernel found; Linux's
 * rule for chmod and ACLs).
 */
#define POSIX_XATTR_KILL_SGID 0x4
int posix_setxattr(posix_fs_t *fs, posix_ino_t ino, const char *name, const void *value,
    size_t size, int flags);
/* size 0: return the needed size in *outlen.  ERANGE if too small, ENODATA if absent. */
int posix_getxattr(posix_fs_t *fs, posix_ino_t ino, const char *name, void *value,
    size_t size, size_t *outlen);
/* NUL-separated names; size 0: needed size. */
int posix_listxattr(posix_fs_t *fs, posix_ino_t ino, char *list, size_t size, size_t *outlen);
int posix_removexattr(posix_fs_t *fs, posix_ino_t ino, const char *name);

/*
 * ---- diff (posix_diff.c): what changed between two states of a file
 * system (zfs diff) ----
 *
 * from and to are object sets of one file system: to a later state of
 * from (a later snapshot, a clone of it, or the live file system as of
 * its last txg sync), from_txg the txg of from (its snapshot's createtxg:
 * every block born after it is a change).  Only what changed is read:
 * the dnode blocks born after from_txg (dmu_traverse), and the
 * directories that hold the changed inodes (for their names).  fn gets
 * one record per change, in object order; a non-zero return stops the
 * walk and is returned.  EINVAL when either object set holds no file
 * system; EIO/ECKSUM when a block could not be read.  Theory at the top
 * of posix_diff.c.
 */
#define POSIX_DIFF_ADDED    '+'
#define POSIX_DIFF_REMOVED  '-'
#define POSIX_DIFF_MODIFIED 'M'
#define POSIX_DIFF_RENAMED  'R'
typedef struct posix_diff_rec {
	char        pdr_what;       /* POSIX_DIFF_* */
	posix_ino_t pdr_ino;
	uint32_t    pdr_mode;       /* type and permissions (removed: as it was) */
	int64_t     pdr_ctime[2];   /* change time, seconds and nanoseconds (ditto) */
	const char *pdr_path;       /* "/dir/file" from the root ("/": the root) */
	const char *pdr_topath;     /* renamed: the new path; else NULL */
	int64_t     pdr_links;      /* modified: the link count's change (0: none or a directory) */
} posix_diff_rec_t;
typedef int (*posix_diff_fn_t)(void *arg, const posix_diff_rec_t *rec);
int posix_diff(objset_t *from, objset_t *to, uint64_t from_txg, posix_diff_fn_t fn, void *arg);
/* zfs diff -F's letter for a mode: F / @ | = B C, '?' for others. */
char posix_diff_type_char(uint32_t mode);
/*
 * A path as zfs diff prints it: bytes other than printable ASCII, space
 * and backslash included, become "\0ooo" (four octal digits).  Writes at
 * most len bytes with the NUL (truncating); returns the full length.
 */
size_t posix_diff_escape(const char *s, char *buf, size_t len);

#endif
