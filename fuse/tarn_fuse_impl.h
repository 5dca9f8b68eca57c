/*
 * tarn_fuse_impl.h — inside the FUSE server: the server state, the node
 * table (lookup counts), and the helpers the request handlers share.
 * Theory: fuse/tarn_fuse.c.
 */
#ifndef TARN_FUSE_IMPL_H
#define TARN_FUSE_IMPL_H

#include "tarn_fuse.h"          /* first: posix.h must come before <fcntl.h> */
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdatomic.h>
#include "tarn_array.h"
#include "tarn_hash.h"

/* ---- the node table: what the kernel holds (tarn_fuse_nodes.c) ---- */

#define TF_NODE_SHARDS 64

typedef struct tarn_fuse_node {
	posix_ino_t              tn_ino;
	uint64_t                 tn_nlookup;  /* kernel lookup count on the served fs */
	uint64_t                 tn_stale;    /* lookups the kernel holds of the inode's node
	                                       * ids from before a swap (tarn_fuse_swap.c); a
	                                       * node is here while tn_nlookup + tn_stale >= 1 */
	int                      tn_wb_err;   /* a write-back write failed: for fsync/close */
	uint32_t                 tn_writers;  /* opens that may write (tarn_fuse_space.c) */
	uint32_t                 tn_change;   /* changes that overtake a read-around store
	                                       * (tarn_fuse_around.c) */
	bool                     tn_storing;  /* a read-around store of it is in progress */
	tarn_hlink_t             tn_link;     /* in ts_nodes */
} tarn_fuse_node_t;

typedef struct tarn_fuse_shard {
	pthread_mutex_t          ts_lock;
	tarn_hash_t              ts_nodes;    /* ts_lock; of tarn_fuse_node_t, by inode */
	uint64_t                 ts_lookups;  /* ts_lock; sum of tn_nlookup */
	pthread_cond_t           ts_cv;       /* ts_lock; a read-around store ended */
} tarn_fuse_shard_t;

typedef struct tarn_fuse_nodes {
	tarn_fuse_shard_t        tns_shard[TF_NODE_SHARDS];
} tarn_fuse_nodes_t;

typedef int (*tarn_fuse_node_fn_t)(void *arg, posix_ino_t ino, uint64_t nlookup);

void tarn_fuse_nodes_init(tarn_fuse_nodes_t *n);
void tarn_fuse_nodes_fini(tarn_fuse_nodes_t *n);
/* The kernel gets one more reference to ino (an entry reply is on its way). */
void tarn_fuse_nodes_ref(tarn_fuse_nodes_t *n, posix_ino_t ino);
/*
 * The kernel dropped count references: returns how many it really held
 * (a larger count is a kernel/server bug, logged and clamped).
 */
uint64_t tarn_fuse_nodes_unref(tarn_fuse_nodes_t *n, posix_ino_t ino, uint64_t count);
/* The kernel forgot count lookups of a node id of ino from before a swap. */
void tarn_fuse_nodes_forget_stale(tarn_fuse_nodes_t *n, posix_ino_t ino, uint64_t count);
/*
 * A swap: every node's lookups become stale, each node's after fn(arg,
 * ino, nlookup) gave them back to the fs that goes (nlookup > 0 only;
 * fn returns non-zero for a node of another fs, which stays as it is).
 */
void tarn_fuse_nodes_retire(tarn_fuse_nodes_t *n, tarn_fuse_node_fn_t fn, void *arg);
/* Visit every node under its shard's lock; stops when fn returns non-zero. */
void tarn_fuse_nodes_walk(tarn_fuse_nodes_t *n, tarn_fuse_node_fn_t fn, void *arg);
/* Remove every node, calling fn for each with lookups on the served fs (after the session ended). */
void tarn_fuse_nodes_drain(tarn_fuse_nodes_t *n, tarn_fuse_node_fn_t fn, void *arg);
void tarn_fuse_nodes_count(tarn_fuse_nodes_t *n, uint64_t *nodes, uint64_t *lookups);
/* Remember that a write-back write to ino failed (the first error sticks). */
void tarn_fuse_nodes_set_error(tarn_fuse_nodes_t *n, posix_ino_t ino, int err);
/* The remembered error of ino, cleared (0 if none). */
int tarn_fuse_nodes_take_error(tarn_fuse_nodes_t *n, posix_ino_t ino);
/* One more (delta 1) or one less (-1) open of ino that may write. */
void tarn_fuse_nodes_writers(tarn_fuse_nodes_t *n, posix_ino_t ino, int delta);
/*
 * Read-around (tarn_fuse_around.c).  around: false when the kernel holds
 * no node of ino or it is open for writing; else, unless start, its
 * change count goes to *gen; with start, also false when the count is no
 * longer *gen, and true marks a store in progress, which around_done
 * ends.  change: ino's contents change (an open that may write, a
 * truncate): bump the count and wait for a store in progress.
 */
bool tarn_fuse_nodes_around(tarn_fuse_nodes_t *n, posix_ino_t ino, uint32_t *gen, bool start);
void tarn_fuse_nodes_around_done(tarn_fuse_nodes_t *n, posix_ino_t ino);
void tarn_fuse_nodes_change(tarn_fuse_nodes_t *n, posix_ino_t ino);
/* Call fn(arg, ino) for every inode open for writing (no lock held during fn). */
void tarn_fuse_nodes_each_writer(tarn_fuse_nodes_t *n, void (*fn)(void *, posix_ino_t),
    void *arg);

/* ---- the server ---- */

struct tarn_fuse {
	posix_fs_t          *tf_fs;
	posix_ino_t          tf_root;        /* the fs's root object (FUSE_ROOT_ID) */
	tarn_fuse_opts_t     tf_opts;        /* tf_fsname points into tf_fsname_buf */
	char                *tf_fsname_buf;
	char                *tf_mountpoint;
	double               tf_entry_tmo, tf_attr_tmo;
	struct fuse_session *tf_se;
	struct fuse_loop_config *tf_loop_cfg;
	pthread_t            tf_loop_thread;
	int                  tf_loop_rc;     /* tf_lock; fuse_session_loop_mt's result */
	bool                 tf_exited;      /* tf_lock */
	dev_t                tf_dev;         /* the mount's st_dev (tf_have_dev) */
	bool                 tf_have_dev;
	bool                 tf_joined;      /* only the unmounting thread */
	pthread_mutex_t      tf_lock;
	pthread_cond_t       tf_cv;
	pthread_mutex_t      tf_umount_lock; /* one unmount at a time */
	tarn_fuse_nodes_t    tf_nodes;
	/* what init negotiated (written once by init, before any request) */
	bool                 tf_writeback;
	bool                 tf_splice;
	bool                 tf_killpriv_v2;  /* the kernel leaves suid/sgid clearing to us */
	bool                 tf_setxattr_ext; /* SETXATTR headers carry setxattr_flags */
	bool                 tf_readdirplus;
	uint32_t             tf_max_write;
	/* FUSE over io_uring (tarn_fuse_uring.c) */
	atomic_bool          tf_init_replied; /* the INIT reply went out (tf_lock, tf_cv) */
	bool                 tf_uring_asked;  /* it asked for io_uring */
	bool                 tf_uring_on;     /* rings registered for every CPU */
	size_t               tf_uring_payload; /* the kernel's largest request/reply payload */
	struct tf_uring     *tf_uring;
	pthread_mutex_t      tf_rd_lock;      /* one reader of /dev/fuse at a time... */
	uint64_t             tf_rd_last;      /* ...(tf_rd_lock) and when it last read */
	atomic_uint_fast64_t tf_gen_epoch;   /* bumped by invalidate_all and swaps */
	bool                 tf_hooked;       /* our session I/O hooks see every request */
	/* the swap of the served fs (tarn_fuse_swap.c) */
	atomic_uint          tf_sw_inflight;  /* requests between the gate and their end */
	atomic_bool          tf_sw_closed;    /* the gate: new requests wait (tf_lock, tf_cv) */
	atomic_bool          tf_sw_dead;      /* no fs to serve: requests get EIO */
	atomic_uint_fast64_t tf_sw_epoch;     /* swaps so far: node ids and file handles
	                                       * carry it (TF_FINO, tf_swap_fh) */
	tarn_array_t         tf_sw_old;       /* during a swap: the node ids that go */
	struct tf_space     *tf_space;        /* the full-pool gate (tarn_fuse_space.c) */
	atomic_uint_fast64_t tf_requests;
	atomic_uint_fast64_t tf_errors;
	atomic_uint_fast64_t tf_forgets;      /* inodes forgotten by the kernel */
	atomic_uint_fast64_t tf_getxattrs;    /* GETXATTR requests */
	atomic_uint_fast64_t tf_dev_reads;    /* messages read from /dev/fuse beside the rings */
	atomic_uint_fast64_t tf_uring_unpinned; /* large requests served by an unpinned thread */
	struct tf_snapdir   *tf_snapdir;      /* .zfs (tarn_fuse_snapdir.c); NULL: none */
	struct tf_around    *tf_around;       /* read-around (tarn_fuse_around.c); NULL: off */
};

/*
 * Node ids of the live file system (slot 0, below) and posix inode
 * numbers: the root swaps with 1, and bits TF_TAG_SHIFT..47 carry the
 * swap epoch (tarn_fuse_swap.c; 0 until the first swap), so that the
 * kernel never takes an inode of a file system served before a swap for
 * one of the file system served now.  Inode numbers stay below 2^36.
 */
#define TF_TAG_SHIFT 36
#define TF_INO_MASK  ((1ULL << TF_TAG_SHIFT) - 1)
#define TF_TAG_MASK  (0xfffULL << TF_TAG_SHIFT)

/* The tag of live node ids given out now. */
static inline uint64_t
tf_tag(tarn_fuse_t *t)
{
	return ((atomic_load_explicit(&t->tf_sw_epoch, memory_order_relaxed) << TF_TAG_SHIFT) &
	    TF_TAG_MASK);
}

static inline uint64_t
tf_fino(tarn_fuse_t *t, uint64_t pino)
{
	ASSERT3U(pino, <=, TF_INO_MASK);
	if (pino == t->tf_root)
		return (FUSE_ROOT_ID);
	return ((pino == FUSE_ROOT_ID ? t->tf_root : pino) | tf_tag(t));
}

static inline uint64_t
tf_pino(const tarn_fuse_t *t, uint64_t fino)
{
	if (fino == FUSE_ROOT_ID)
		return (t->tf_root);
	fino &= TF_INO_MASK;
	return (fino == t->tf_root ? FUSE_ROOT_ID : fino);
}
#define TF_PINO(t, fino) ((posix_ino_t)tf_pino((t), (fino)))
#define TF_FINO(t, pino) ((fuse_ino_t)tf_fino((t), (pino)))

/*
 * ---- what a node id names (tarn_fuse_snapdir.c: the encoding) ----
 *
 * Bits 48-63 of a node id are a slot: 0 the live file system (whose ids
 * are TF_FINO's), 1..TF_SLOT_MAX-1 a snapshot open
 * under .zfs/snapshot (the low 48 bits its inode number), TF_SLOT_CTL
 * the two directories .zfs and .zfs/snapshot.  Handlers resolve the id
 * first: a target names the file system and the inode, and holds a
 * snapshot's slot open until tf_tgt_rele.
 */
#define TF_SLOT_SHIFT  48
#define TF_OBJ_MASK    ((1ULL << TF_SLOT_SHIFT) - 1)
#define TF_SLOT_CTL    0xffffULL
#define TF_SLOT_MAX    4096
#define TF_ZFSDIR_ID   ((TF_SLOT_CTL << TF_SLOT_SHIFT) | 1)     /* MNT/.zfs */
#define TF_SNAPDIR_ID  ((TF_SLOT_CTL << TF_SLOT_SHIFT) | 2)     /* MNT/.zfs/snapshot */
#define TF_SLOT(id)    ((uint64_t)(id) >> TF_SLOT_SHIFT)

/* Is fino a live node id from before the last swap (its inode is stale)? */
static inline bool
tf_fino_stale(tarn_fuse_t *t, uint64_t fino)
{
	return (TF_SLOT(fino) == 0 && fino != FUSE_ROOT_ID && fino != 0 &&
	    (fino & TF_TAG_MASK) != tf_tag(t));
}

typedef enum tf_kind {
	TF_LIVE = 0,            /* the mounted file system */
	TF_SNAP,                /* a file of a snapshot (read-only) */
	TF_ZFSDIR,              /* .zfs */
	TF_SNAPDIR,             /* .zfs/snapshot */
} tf_kind_t;

typedef struct tf_tgt {
	tf_kind_t       tt_kind;
	posix_fs_t     *tt_fs;          /* TF_LIVE, TF_SNAP */
	posix_ino_t     tt_ino;         /* its inode (TF_LIVE, TF_SNAP) */
	struct tf_snap *tt_snap;        /* TF_SNAP: held until tf_tgt_rele */
} tf_tgt_t;

int tf_resolve_slow(tarn_fuse_t *t, fuse_ino_t ino, tf_tgt_t *tg);
void tf_tgt_rele_slow(tarn_fuse_t *t, tf_tgt_t *tg);

/*
 * What node id ino names: 0, or ESTALE for a snapshot node whose
 * snapshot was destroyed, renamed or closed.  The live file system
 * costs two compares.
 */
static inline int
tf_resolve(tarn_fuse_t *t, fuse_ino_t ino, tf_tgt_t *tg)
{
	if (TF_SLOT(ino) != 0)
		return (tf_resolve_slow(t, ino, tg));
	tg->tt_kind = TF_LIVE;
	tg->tt_fs = t->tf_fs;
	tg->tt_ino = TF_PINO(t, ino);
	tg->tt_snap = NULL;
	return (0);
}

/* The same for a change: EROFS for anything under .zfs. */
static inline int
tf_resolve_rw(tarn_fuse_t *t, fuse_ino_t ino, tf_tgt_t *tg)
{
	if (TF_SLOT(ino) != 0)
		return (SET_ERROR(EROFS));
	return (tf_resolve(t, ino, tg));
}

static inline void
tf_tgt_rele(tarn_fuse_t *t, tf_tgt_t *tg)
{
	if (tg->tt_snap != NULL)
		tf_tgt_rele_slow(t, tg);
}

/* ---- .zfs (tarn_fuse_snapdir.c) ---- */

/* Mount: the slot table when the opts give snapshot ops; start/stop its idle thread. */
void tf_snapdir_init(tarn_fuse_t *t);
void tf_snapdir_start(tarn_fuse_t *t);
void tf_snapdir_stop(tarn_fuse_t *t);
/* After the session and the drain: close every snapshot, free the table. */
void tf_snapdir_fini(tarn_fuse_t *t);
/* The key/node id of inode ino in snapshot tg (tg->tt_kind == TF_SNAP). */
uint64_t tf_snap_key(const tf_tgt_t *tg, posix_ino_t ino);
/* The generation the kernel gets for pa in a snapshot. */
uint64_t tf_snap_gen(const tf_tgt_t *tg, const posix_attr_t *pa);
/* A snapshot node's entry reply went out (+1) or was refused (-1). */
void tf_snap_kref(tarn_fuse_t *t, const tf_tgt_t *tg, int delta);
/*
 * The kernel forgot n lookups of snapshot node id, already taken out of
 * the node table (forget; the unmount's drain).
 */
void tf_snap_forget(tarn_fuse_t *t, uint64_t id, uint64_t n);
/* An open (+1) or release (-1) of a file or directory of a snapshot or .zfs. */
void tf_snap_open(tarn_fuse_t *t, fuse_ino_t ino, int delta);
/* Is the live root listed with .zfs (snapdir=visible)? */
bool tf_snapdir_listed(tarn_fuse_t *t);
/* Is (parent, name) the .zfs entry of the live root? */
bool tf_is_zfs_name(tarn_fuse_t *t, const tf_tgt_t *parent, const char *name);
/*
 * Requests on the control directories and .zfs itself (lookup, getattr,
 * readdir, mkdir, rmdir, rename under .zfs/snapshot): each replies.
 */
void tf_ctl_lookup(tarn_fuse_t *t, fuse_req_t req, const tf_tgt_t *parent, const char *name);
void tf_ctl_getattr(tarn_fuse_t *t, fuse_req_t req, const tf_tgt_t *tg);
void tf_ctl_readdir(tarn_fuse_t *t, fuse_req_t req, const tf_tgt_t *tg, size_t size,
    off_t off, bool plus);
void tf_ctl_mkdir(tarn_fuse_t *t, fuse_req_t req, const char *name);
void tf_ctl_rmdir(tarn_fuse_t *t, fuse_req_t req, const char *name);
void tf_ctl_rename(tarn_fuse_t *t, fuse_req_t req, const char *name, fuse_ino_t newparent,
    const char *newname, unsigned int flags);
/*
 * The offset after .zfs in the live root's listing (tf_list): the largest
 * off_t, which posix's cookies (a ZAP hash position + 3) do not reach in
 * practice; a collision would only list the directory again.
 */
#define TF_ZFS_COOKIE  ((1ULL << 63) - 1)

/* The node table's key of inode ino of tg's file system (a snapshot's: its node id). */
static inline uint64_t
tf_tgt_key(const tarn_fuse_t *t, const tf_tgt_t *tg, posix_ino_t ino)
{
	return (tg->tt_kind == TF_SNAP ? tf_snap_key(tg, ino) : ino);
}

/* Every handler starts here: the server, and one more request counted. */
static inline tarn_fuse_t *
tf_enter(fuse_req_t req)
{
	tarn_fuse_t *t = fuse_req_userdata(req);
	atomic_fetch_add_explicit(&t->tf_requests, 1, memory_order_relaxed);
	return (t);
}

/* ---- shared helpers (tarn_fuse_ops.c) ---- */

void tarn_fuse_attr_to_stat(const posix_attr_t *pa, struct stat *st);
void tarn_fuse_cred(fuse_req_t req, posix_cred_t *cred);
/*
 * The kernel is about to hold one more reference on pa's inode, which is
 * in tg's file system (tg: the parent or the inode itself).
 */
void tarn_fuse_entry_fill(tarn_fuse_t *t, const tf_tgt_t *tg, const posix_attr_t *pa,
    struct fuse_entry_param *e);
/* Take the node reference for an entry reply; undo it when the reply failed. */
void tarn_fuse_entry_ref(tarn_fuse_t *t, const tf_tgt_t *tg, const posix_attr_t *pa);
void tarn_fuse_entry_unref(tarn_fuse_t *t, const tf_tgt_t *tg, const posix_attr_t *pa);
/* Reply to a request that produced an entry of tg's file system (posix took a reference). */
void tarn_fuse_reply_entry(tarn_fuse_t *t, fuse_req_t req, const tf_tgt_t *tg, int e,
    const posix_attr_t *pa);
/* Reply with an error (counted), or 0 for success with no data. */
void tarn_fuse_reply_err(fuse_req_t req, int err);
/* A per-thread scratch buffer of at least size bytes (not zeroed). */
void *tarn_fuse_scratch(size_t size);

/* ---- FUSE over io_uring (tarn_fuse_uring.c) ---- */

typedef struct tf_uring tf_uring_t;
/*
 * Before the first request: the session's reads and replies go through
 * our hooks (the INIT reply gains killpriv v2 and, with tfo_uring,
 * io_uring; replies to ring requests go to their rings).
 */
int tarn_fuse_hook_io(tarn_fuse_t *t);
/*
 * After INIT was answered with the io_uring flag: start the per-CPU
 * workers and register their entries.  An error leaves /dev/fuse serving.
 */
/* Tell the watcher (tarn_fuse_guard.c) that connection dev is served, or not. */
void tarn_fuse_guard_note(dev_t dev, bool up);

int tarn_fuse_uring_start(tarn_fuse_t *t);
/* After the connection ended: join the workers, free their rings. */
void tarn_fuse_uring_stop(tarn_fuse_t *t);

/* ---- a full pool through the writeback cache (tarn_fuse_space.c) ---- */

/* After the mount: the kernel's dirty-page bound, the reserve, the notifier. */
void tf_space_start(tarn_fuse_t *t);
/* Before the session is destroyed: stop the notifier. */
void tf_space_stop(tarn_fuse_t *t);
/* An open or create is answered: fi->fh says whether it may write. */
void tf_space_open(tarn_fuse_t *t, posix_ino_t ino, struct fuse_file_info *fi);
void tf_space_release(tarn_fuse_t *t, posix_ino_t ino, struct fuse_file_info *fi);
/* A GETATTR of ino through fi (NULL: none): ENOSPC/EDQUOT to refuse a write(2). */
int tf_space_gate(tarn_fuse_t *t, posix_ino_t ino, struct fuse_file_info *fi);
/* How long the kernel may trust attributes (0 while the pool is full). */
double tf_space_attr_tmo(tarn_fuse_t *t);
/* A write-back write of [off, off + len) to ino was answered with err. */
void tf_space_written(tarn_fuse_t *t, posix_ino_t ino, uint64_t off, uint64_t len, int err);

/* ---- the request flags libfuse drops (tarn_fuse_req.c) ---- */

struct fuse_init_out;
/* The INIT reply asks for killpriv v2 and the extended SETXATTR (not when spliced). */
void tf_req_init_flags(tarn_fuse_t *t, struct fuse_init_out *io);
/*
 * This thread serves the len-byte request at req next: note it, and move
 * an extended SETXATTR back to the layout libfuse reads.  Returns the
 * request's length as libfuse must see it.
 */
size_t tf_req_begin(tarn_fuse_t *t, char *req, size_t len);
/* The request was served (or none is being served). */
void tf_req_end(void);
/*
 * Does the WRITE or OPEN this thread serves ask us to clear set-user-ID
 * and set-group-ID (FUSE_WRITE_KILL_SUIDGID, FUSE_OPEN_KILL_SUIDGID: the
 * caller lacks CAP_FSETID)?  libfuse 3.14 does not pass these flags on.
 */
bool tarn_fuse_req_kills_suidgid(void);
/*
 * Does the SETXATTR this thread serves ask us to clear set-group-ID if it
 * sets an access ACL (FUSE_SETXATTR_ACL_KILL_SGID)?  libfuse 3.14 does not
 * know the extended SETXATTR; our hooks take its flags out of the request.
 */
bool tarn_fuse_req_acl_kills_sgid(void);
/* The CREATE being served is an O_TMPFILE (FUSE_TMPFILE): make it without a name. */
bool tarn_fuse_req_tmpfile(void);
/* The GETATTR being served is a STATX: answer with tarn_fuse_reply_statx. */
bool tarn_fuse_req_statx(void);
/* The reply to a STATX: pa's attributes and birth time, valid for timeout seconds. */
int tarn_fuse_reply_statx(fuse_req_t req, const posix_attr_t *pa, double timeout);
/* The reply to a GETATTR or a STATX (whichever is being served) with pa. */
void tarn_fuse_reply_pattr(fuse_req_t req, const posix_attr_t *pa, double timeout);

/* ---- swapping the served file system (tarn_fuse_swap.c) ---- */

/* fi->fh of a new open: the swap epoch in the bits above TF_FH_WRITER. */
uint64_t tf_swap_fh(tarn_fuse_t *t);
#define TF_FH_WRITER 1                  /* fi->fh of an open that may write */
/*
 * A request read from /dev/fuse (fd), len bytes at req: wait while a swap
 * runs, then either answer it here (ESTALE for an inode or handle from
 * before a swap: returns 0, read the next one) or note it for libfuse
 * (returns tf_req_begin's length).
 */
size_t tf_swap_take(tarn_fuse_t *t, int fd, char *req, size_t len);
/* The same for a request from an io_uring entry: 0, or the errno to answer with. */
int tf_swap_enter(tarn_fuse_t *t, const char *req, size_t len);
/* The request this thread served has ended (tf_req_end calls it). */
void tf_swap_leave(void);
/* Pass the swap gate like a request (not a request handler); tf_swap_leave ends it. */
void tf_swap_hold(tarn_fuse_t *t);
/* ---- read-around (tarn_fuse_around.c) ---- */
/* Made before the session serves (tfo_readaround), started once it does. */
void tf_around_init(tarn_fuse_t *t);
void tf_around_start(tarn_fuse_t *t);
/* Stop the storer (before the session goes); fini frees what init made. */
void tf_around_stop(tarn_fuse_t *t);
void tf_around_fini(tarn_fuse_t *t);
/* A READ of len bytes at off of ino of the live fs was answered. */
void tf_around_hint(tarn_fuse_t *t, posix_fs_t *fs, posix_ino_t ino, uint64_t off, uint64_t len);
/* No store of data read before this call happens after it (swaps, invalidations). */
void tf_around_fence(tarn_fuse_t *t);
void tf_around_stats(tarn_fuse_t *t, uint64_t *stores, uint64_t *bytes, uint64_t *drops,
    uint64_t *skips);
/* Bump the kernel's dentry epoch (tarn_fuse.c): 0 or ENOTSUP. */
int tf_notify_inc_epoch(tarn_fuse_t *t);
/* The served fs changed: its reserve for the kernel's dirty pages (tarn_fuse_space.c). */
void tf_space_swapped(tarn_fuse_t *t);

/* ---- the handler tables' parts ---- */

void tarn_fuse_ops_namespace(struct fuse_lowlevel_ops *ops);  /* tarn_fuse_ops.c */
void tarn_fuse_ops_data(struct fuse_lowlevel_ops *ops);       /* tarn_fuse_io.c */
void tarn_fuse_ops_dir(struct fuse_lowlevel_ops *ops);        /* tarn_fuse_dir.c */

#endif
