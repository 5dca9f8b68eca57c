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
	tarn_hlink_t             tn_link;     /* in ts_nodes */
} tarn_fuse_node_t;

typedef struct tarn_fuse_shard {
	pthread_mutex_t          ts_lock;
	tarn_hash_t              ts_nodes;    /* ts_lock; of tarn_fuse_node_t, by inode */
	uint64_t                 ts_lookups;  /* ts_lock; sum of tn_nlookup */
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
 * ino, nlookup) gave them back to the fs that goes (nlookup > 0 only).
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
};

/*
 * FUSE node ids and posix inode numbers: the root swaps with 1, and the
 * bits from TF_TAG_SHIFT up carry the swap epoch (tarn_fuse_swap.c), so
 * that the kernel never takes an inode of a file system served before a
 * swap for one of the file system served now (0 until the first swap).
 */
#define TF_TAG_SHIFT 48
#define TF_INO_MASK  ((1ULL << TF_TAG_SHIFT) - 1)

/* The tag of node ids given out now. */
static inline uint64_t
tf_tag(tarn_fuse_t *t)
{
	return ((atomic_load_explicit(&t->tf_sw_epoch, memory_order_relaxed) & 0xffff) <<
	    TF_TAG_SHIFT);
}

static inline uint64_t
tf_fino(tarn_fuse_t *t, uint64_t pino)
{
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

/* Is fino a node id from before the last swap (its inode is stale)? */
static inline bool
tf_fino_stale(tarn_fuse_t *t, uint64_t fino)
{
	return (fino != FUSE_ROOT_ID && fino != 0 && (fino & ~TF_INO_MASK) != tf_tag(t));
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
/* The kernel is about to hold one more reference on pa's inode. */
void tarn_fuse_entry_fill(tarn_fuse_t *t, const posix_attr_t *pa, struct fuse_entry_param *e);
/* Take the node reference for an entry reply; undo it when the reply failed. */
void tarn_fuse_entry_ref(tarn_fuse_t *t, const posix_attr_t *pa);
void tarn_fuse_entry_unref(tarn_fuse_t *t, const posix_attr_t *pa);
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
/* Bump the kernel's dentry epoch (tarn_fuse.c): 0 or ENOTSUP. */
int tf_notify_inc_epoch(tarn_fuse_t *t);
/* The served fs changed: its reserve for the kernel's dirty pages (tarn_fuse_space.c). */
void tf_space_swapped(tarn_fuse_t *t);

/* ---- the handler tables' parts ---- */

void tarn_fuse_ops_namespace(struct fuse_lowlevel_ops *ops);  /* tarn_fuse_ops.c */
void tarn_fuse_ops_data(struct fuse_lowlevel_ops *ops);       /* tarn_fuse_io.c */
void tarn_fuse_ops_dir(struct fuse_lowlevel_ops *ops);        /* tarn_fuse_dir.c */

#endif
