/*
 * posix_impl.h — private structures of the POSIX layer: the on-disk inode
 * (znode) kept in each object's bonus buffer, the master node's names, the
 * in-memory inode table and the helpers shared by the posix_*.c files.
 * Nothing outside lib/posix includes this header.  Theory (inodes, locks,
 * references, the unlinked set, space accounting): the comment at the top
 * of posix_fs.c.
 */
#ifndef TARN_POSIX_IMPL_H
#define TARN_POSIX_IMPL_H

#include <pthread.h>
#include "posix.h"
#include "tarn_hash.h"

#define POSIX_MASTER_OBJ     1          /* object 1 of the object set */
#define POSIX_BONUS_TYPE     DMU_OT_PLAIN_FILE  /* bonus type of every inode */
#define POSIX_ZNODE_SIZE     DN_MAX_BONUSLEN    /* 320 bytes */
#define POSIX_INLINE_MAX     144        /* symlink targets kept in the znode */
#define POSIX_SYMLINK_MAX    4095       /* PATH_MAX - 1 */
#define POSIX_XATTR_INLINE_MAX (4 * KiB) /* larger values get their own object */
#define POSIX_DEFAULT_RECORDSIZE (128 * KiB)
#define POSIX_WRITE_CHUNK    (8 * MiB)  /* bytes of one write per transaction */
#define POSIX_DIRENT_BYTES   64         /* new space a directory entry is taken to need */
#define POSIX_RELATIME_SEC   (24 * 3600)

/* Directory entry value: object number | DT_* type << 60. */
#define POSIX_DE_TYPE_SHIFT  60
#define POSIX_DE_INO(v)      ((v) & ((1ULL << 48) - 1))
#define POSIX_DE_TYPE(v)     ((uint32_t)((v) >> POSIX_DE_TYPE_SHIFT))
#define POSIX_DE_MAKE(ino, mode) ((ino) | ((uint64_t)(((mode) >> 12) & 15) << POSIX_DE_TYPE_SHIFT))

/* Readdir cookies: 0 ".", 1 "..", 2 + k the ZAP cursor at key k. */
#define POSIX_COOKIE_ZAP     2

/* zp_flags */
#define POSIX_ZF_UNLINKED    0x1        /* listed in the unlinked set */
#define POSIX_ZF_MULTIBLOCK  0x2        /* has had more than one block: block size fixed */
#define POSIX_ZF_XINLINE     0x4        /* zp_inline holds xattrs (never on a symlink) */

/* Master node names. */
#define POSIX_M_VERSION      "VERSION"
#define POSIX_M_ROOT         "ROOT"
#define POSIX_M_UNLINKED     "UNLINKED"
#define POSIX_M_GUID         "GUID"
#define POSIX_M_USED         "USED"     /* [0, inodes]; present only when clean */

/*
 * The inode as stored in the bonus buffer (little-endian, 320 bytes).
 * Times are seconds (two's complement) and nanoseconds.
 */
typedef struct znode_phys {
	uint64_t zp_mode;       /* S_IFMT | permission bits */
	uint64_t zp_flags;      /* POSIX_ZF_* */
	uint64_t zp_uid;
	uint64_t zp_gid;
	uint64_t zp_nlink;
	uint64_t zp_size;       /* bytes; directories: entries + 2; symlinks: target length */
	uint64_t zp_parent;     /* directory holding it (directories: their ".."); root: itself */
	uint64_t zp_gen;        /* txg of creation */
	uint64_t zp_rdev;
	uint64_t zp_xattr;      /* xattr ZAP object, 0 = none */
	uint64_t zp_atime[2];
	uint64_t zp_mtime[2];
	uint64_t zp_ctime[2];
	uint64_t zp_crtime[2];
	uint64_t zp_pad[4];
	uint8_t  zp_inline[POSIX_INLINE_MAX]; /* symlink target when it fits; else small xattrs */
} znode_phys_t;
_Static_assert(sizeof (znode_phys_t) == POSIX_ZNODE_SIZE, "znode_phys_t is the bonus size");

/*
 * In-memory inode: exists while it has references (kernel lookups) or
 * active users (threads inside a call).  pi_lock guards the inode's
 * attributes, its data, its directory contents and its xattrs: readers
 * share it, every change holds it as writer from before dmu_tx_assign
 * until after dmu_tx_commit (so changes to one object reach the DMU in
 * txg order).
 */
typedef struct pinode {
	posix_ino_t pi_ino;
	uint64_t pi_refs;           /* stripe lock */
	uint32_t pi_active;         /* stripe lock */
	bool     pi_destroyed;      /* pi_lock (W): the object is freed */
	bool     pi_tmpfile;        /* pi_lock (W): an O_TMPFILE never named, may be linked */
	pthread_rwlock_t pi_lock;
	tarn_hlink_t pi_link;       /* in ps_inodes of its stripe */
} pinode_t;

#define POSIX_TAB_STRIPES 64
typedef struct pinode_stripe {
	pthread_mutex_t ps_lock;
	tarn_hash_t ps_inodes;      /* ps_lock: of pinode_t, by inode number */
} __attribute__((aligned(64))) pinode_stripe_t;

#define POSIX_PEND_SLOTS 8              /* > the txgs that can be unsynced at once */

struct posix_fs {
	objset_t *fs_os;
	pthread_mutex_t fs_opts_lock;     /* fs_opts */
	posix_fs_opts_t fs_opts;
	uint64_t fs_root;
	uint64_t fs_unlinked;             /* ZAP: "%llx" -> ino */
	uint64_t fs_guid;
	/* Lock order: fs_rename_lock, inode locks (ascending ino), fs_unlinked_lock. */
	pthread_mutex_t fs_rename_lock;   /* cross-directory renames (ancestry stable) */
	pthread_mutex_t fs_unlinked_lock; /* changes of the unlinked ZAP, held across the tx */
	uint64_t fs_inodes;               /* atomic: inode objects */
	/*
	 * A read-only open (a snapshot) of a file system whose count was not
	 * stored: counted at the first statfs, not at open, so that the first
	 * look into .zfs/snapshot does not read every inode (fs_count_lock).
	 */
	bool     fs_inodes_unknown;
	pthread_mutex_t fs_count_lock;
	/* new bytes admitted per txg not yet synced (posix_space_check) */
	pthread_mutex_t fs_space_lock;
	uint64_t fs_pend_txg[POSIX_PEND_SLOTS];
	uint64_t fs_pend_bytes[POSIX_PEND_SLOTS];
	uint64_t fs_reserve;              /* atomic: room kept for the kernel's cached writes */
	pinode_stripe_t fs_tab[POSIX_TAB_STRIPES];
	zil_t *fs_zil;                    /* intent log, or NULL (posix_zil.c) */
	bool fs_xinline;                  /* small xattrs may go in the inode (pfo_xattr_inline) */
	uint64_t fs_replayed;             /* records replayed at open */
	bool fs_replaying;                /* during open's replay: space checks pass */
};

/* Up to four distinct inodes locked together (rename, link, unlink). */
typedef struct posix_lockset {
	int ls_n;
	pinode_t *ls_pi[4];
	znode_phys_t ls_zp[4];      /* working copies */
	znode_phys_t ls_old[4];     /* as read (what changed is written) */
} posix_lockset_t;

/* ---- posix_fs.c: options, inode table ---- */
void posix_opts(posix_fs_t *fs, posix_fs_opts_t *o);
int posix_writable(posix_fs_t *fs);
pinode_t *pinode_get(posix_fs_t *fs, posix_ino_t ino);
void pinode_rele(posix_fs_t *fs, pinode_t *pi);
void pinode_ref(posix_fs_t *fs, pinode_t *pi, uint64_t n);
uint64_t pinode_refs(posix_fs_t *fs, pinode_t *pi);
int posix_tx_assign(dmu_tx_t *tx);
void posix_inodes_add(posix_fs_t *fs, int64_t n);
int posix_space_check(posix_fs_t *fs, uint64_t bytes);
/* The same for bytes the kernel's page cache already took (may use fs_reserve). */
int posix_space_check_cached(posix_fs_t *fs, uint64_t bytes);

/* ---- posix_inode.c: znodes ---- */
void posix_now(uint64_t t[2]);
int zn_read(posix_fs_t *fs, posix_ino_t ino, znode_phys_t *zp);
int zn_write(posix_fs_t *fs, posix_ino_t ino, const znode_phys_t *old,
    const znode_phys_t *zp, dmu_tx_t *tx);
int zn_write_logged(posix_fs_t *fs, posix_ino_t ino, const znode_phys_t *old,
    const znode_phys_t *zp, dmu_tx_t *tx);

/* ---- posix_zil.c: the intent log's side of the file system ---- */
void posix_zil_unlogged(posix_fs_t *fs, dmu_tx_t *tx);
/*
 * A logged operation: begin before its znode writes (they stop counting
 * as unlogged on this thread), log its record, end before dmu_tx_commit
 * (err != 0: it did not complete, so what it wrote counts as unlogged).
 */
void posix_zil_begin(void);
void posix_zil_end(posix_fs_t *fs, dmu_tx_t *tx, int err);
/* The directories' znodes (dzp...) are as written by the operation. */
void posix_zil_create(posix_fs_t *fs, dmu_tx_t *tx, posix_ino_t dir, const znode_phys_t *dzp,
    const char *name, posix_ino_t obj, const znode_phys_t *zp, const char *target);
void posix_zil_remove(posix_fs_t *fs, dmu_tx_t *tx, posix_ino_t dir, const znode_phys_t *dzp,
    const char *name, posix_ino_t child, bool rmdir);
void posix_zil_link(posix_fs_t *fs, dmu_tx_t *tx, posix_ino_t ino, posix_ino_t newdir,
    const znode_phys_t *dzp, const char *newname);
void posix_zil_rename(posix_fs_t *fs, dmu_tx_t *tx, posix_ino_t sdir, const znode_phys_t *sdzp,
    const char *sname, posix_ino_t ddir, const znode_phys_t *ddzp, const char *dname,
    unsigned int flags);
/*
 * After the record of a link, remove or rename: the times of an inode the
 * operation changed besides the directories (its ctime), so that replay
 * sets them back; not for one left without links (reclaimed at open).
 */
void posix_zil_times(posix_fs_t *fs, dmu_tx_t *tx, posix_ino_t ino, const znode_phys_t *zp);
/*
 * Xattr changes and hole punches (feature log_xattr_punch): may this one
 * be logged (the log takes them, the record fits)?  Ask before
 * posix_zil_begin; when not, the change stays unlogged.  zp is the
 * inode's znode as the change left it (its times are logged with it, or,
 * with whole, all of its state: a mode the record's replay would not give).
 */
bool posix_zil_xattr_loggable(posix_fs_t *fs, const char *name, size_t size);
void posix_zil_xattr(posix_fs_t *fs, dmu_tx_t *tx, posix_ino_t ino, const char *name,
    const void *value, size_t size, bool remove, const znode_phys_t *zp, bool whole);
bool posix_zil_punch_loggable(posix_fs_t *fs);
void posix_zil_punch(posix_fs_t *fs, dmu_tx_t *tx, posix_ino_t ino, uint64_t off,
    uint64_t len, const znode_phys_t *zp);
/* posix_dir.c: make a node with the given object number (intent-log replay). */
int posix_mknode_claim(posix_fs_t *fs, posix_ino_t dir, const char *name, uint32_t mode,
    uint64_t rdev, const char *target, const posix_cred_t *cred, posix_ino_t obj);
void posix_zil_write(posix_fs_t *fs, posix_ino_t ino, uint64_t off, uint64_t len,
    const uint64_t mtime[2], dmu_tx_t *tx);
int posix_zil_replay(posix_fs_t *fs);
posix_sync_mode_t posix_zil_sync_mode(posix_fs_t *fs);
int posix_zil_setattr(posix_fs_t *fs, posix_ino_t ino, int mask, const znode_phys_t *old,
    const znode_phys_t *zp, dmu_tx_t *tx);
void zn_to_attr(posix_fs_t *fs, posix_ino_t ino, const znode_phys_t *zp, posix_attr_t *attr);
void zn_init(znode_phys_t *zp, uint32_t mode, const posix_cred_t *cred, uint64_t parent,
    uint64_t txg, const uint64_t now[2]);
int posix_destroy(posix_fs_t *fs, posix_ino_t ino, const znode_phys_t *zp, dmu_tx_t *tx);
void posix_hold_destroy(posix_fs_t *fs, dmu_tx_t *tx);
int posix_drop_link(posix_fs_t *fs, pinode_t *pi, const znode_phys_t *old, znode_phys_t *zp,
    bool keep, dmu_tx_t *tx);
int posix_ref_attr(posix_fs_t *fs, posix_ino_t ino, const znode_phys_t *zp, posix_attr_t *attr);
uint64_t posix_maxfilesize(posix_fs_t *fs);

/* ---- posix_dir.c / posix_rename.c ---- */
int posix_name_check(const char *name);
int posix_name_new(posix_fs_t *fs, const char *name);
bool posix_is_dot(const char *name);
int posix_dir_lookup(posix_fs_t *fs, posix_ino_t dir, const char *name, posix_ino_t *ino);
void lockset_add_ino(posix_fs_t *fs, posix_lockset_t *ls, posix_ino_t ino);
int lockset_drop_link(posix_fs_t *fs, posix_lockset_t *ls, posix_ino_t ino, bool keep,
    dmu_tx_t *tx);
bool posix_keep_unlinked(posix_fs_t *fs, posix_lockset_t *ls, posix_ino_t ino, bool all);
int lockset_lock(posix_fs_t *fs, posix_lockset_t *ls);
void lockset_unlock(posix_fs_t *fs, posix_lockset_t *ls);
znode_phys_t *lockset_zp(posix_lockset_t *ls, posix_ino_t ino);
int lockset_write(posix_fs_t *fs, posix_lockset_t *ls, dmu_tx_t *tx);

/* ---- posix_data.c ---- */
int posix_truncate_locked(posix_fs_t *fs, posix_ino_t ino, znode_phys_t *zp, uint64_t size,
    dmu_tx_t *tx);

/* The unlinked set's name of inode ino (FORMAT.md: lower-case hexadecimal). */
#define POSIX_UNLINKED_KEYLEN 24
static inline void
posix_unlinked_key(posix_ino_t ino, char key[POSIX_UNLINKED_KEYLEN])
{
	(void) snprintf(key, POSIX_UNLINKED_KEYLEN, "%" PRIx64, ino);
}

/* ---- posix_xattr.c ---- */
int posix_xattr_destroy(posix_fs_t *fs, uint64_t xobj, dmu_tx_t *tx);

/*
 * ---- posix_xinline.c: the xattrs kept in zp_inline (an area of
 * POSIX_INLINE_MAX bytes).  EIO for a damaged area; set leaves the area
 * as it was when the attribute does not fit (ENOSPC). ----
 */
int posix_xinline_check(const uint8_t *area);
int posix_xinline_get(const uint8_t *area, const char *name, const uint8_t **value,
    size_t *len);
bool posix_xinline_fits(const char *name, size_t len);
int posix_xinline_set(uint8_t *area, const char *name, const void *value, size_t len);
int posix_xinline_remove(uint8_t *area, const char *name);
/* Append the names ("a\0b\0") to list at *total (size 0: only count); ERANGE. */
int posix_xinline_list(const uint8_t *area, char *list, size_t size, size_t *total);
bool posix_xinline_empty(const uint8_t *area);

/*
 * POSIX ACLs (posix_acl.c: the values; posix_xattr.c: where they are
 * stored).  The value checks and computations take values that passed
 * posix_acl_check.
 */
#define POSIX_ACL_ACCESS      "system.posix_acl_access"
#define POSIX_ACL_DEFAULT     "system.posix_acl_default"
#define POSIX_ACL_MAX_ENTRIES 1024
int posix_acl_check(const void *val, size_t len);
uint32_t posix_acl_mode(const void *val, size_t len, bool *equiv);
void posix_acl_chmod(void *val, size_t len, uint32_t mode);
bool posix_acl_inherit(const void *dval, size_t len, uint32_t *mode, void *out);
/* A directory's default ACL in a new buffer (tarn_free), or NULL when it has none. */
void *posix_acl_default_get(posix_fs_t *fs, const znode_phys_t *dzp, size_t *lenp);
/* Holds for the changes below (the inode's xattr object, maybe new, and len bytes). */
void posix_acl_tx_hold(posix_fs_t *fs, const znode_phys_t *zp, size_t len, dmu_tx_t *tx);
int posix_acl_chmod_tx(posix_fs_t *fs, const znode_phys_t *zp, uint32_t mode, dmu_tx_t *tx);
int posix_acl_inherit_tx(posix_fs_t *fs, znode_phys_t *zp, const void *dacl, size_t dlen,
    dmu_tx_t *tx);

#endif
