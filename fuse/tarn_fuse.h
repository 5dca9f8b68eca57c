/*
 * tarn_fuse.h — the FUSE server: serves a posix_fs_t to the kernel
 * through libfuse3's low-level API, on a multi-threaded session running
 * in background threads.  No libfuse types appear here; callers (the
 * daemon, tarn-mount, tests) only mount, unmount and invalidate.
 * Theory: the comment at the top of fuse/tarn_fuse.c.
 */
#ifndef TARN_FUSE_H
#define TARN_FUSE_H

#include "posix.h"               /* before <fcntl.h>: posix_falloc is ours, not libc */

typedef struct tarn_fuse tarn_fuse_t;

/*
 * The kernel's atime flag of the mount, as /proc/mounts shows it.  It only
 * names the policy: FUSE inodes are S_NOATIME, the kernel never updates
 * atime itself; the daemon does, on the reads and readdirs that reach it
 * (posix_touch_atime, under the POSIX layer's pfo_atime).
 */
typedef enum tarn_fuse_atime {
	TARN_FUSE_RELATIME = 0,         /* atime=on, relatime=on (the kernel's default) */
	TARN_FUSE_NOATIME,              /* atime=off */
	TARN_FUSE_STRICTATIME,          /* atime=on, relatime=off */
} tarn_fuse_atime_t;

/*
 * The .zfs directory (tarn_fuse_snapdir.c): what the server asks of the
 * one who mounts (the daemon's host layer), because snapshots are the
 * dataset layer's and fuse/ does not hold the pool.  Names are the part
 * after '@'.  Every function returns 0 or an errno; they are called from
 * request handlers and from the server's idle thread, never with a lock
 * of the server held.
 */
#define TARN_FUSE_SNAP_NAME_MAX 256
typedef struct tarn_fuse_snap_ent {
	char     tse_name[TARN_FUSE_SNAP_NAME_MAX];
	uint64_t tse_id;                /* stable and unique while it exists (objset id) */
} tarn_fuse_snap_ent_t;

typedef struct tarn_fuse_snap_ops {
	/* The file system's snapshots (*ents: tarn_free'd by the caller). */
	int  (*tso_list)(void *arg, tarn_fuse_snap_ent_t **ents, size_t *n);
	/*
	 * Open snapshot `name` read-only: its file system (posix_fs_open with
	 * pfo_readonly), a handle for tso_close, and its tse_id.
	 */
	int  (*tso_open)(void *arg, const char *name, posix_fs_t **fsp, void **handle,
	    uint64_t *id);
	void (*tso_close)(void *arg, posix_fs_t *fs, void *handle);
	/* mkdir, rmdir and mv under .zfs/snapshot (the server checked the caller is root). */
	int  (*tso_create)(void *arg, const char *name);
	int  (*tso_destroy)(void *arg, const char *name);
	int  (*tso_rename)(void *arg, const char *from, const char *to);
} tarn_fuse_snap_ops_t;

typedef struct tarn_fuse_opts {
	bool     tfo_readonly;          /* mount read-only (the fs should be too) */
	bool     tfo_allow_other;       /* other users may use the mount (default on) */
	bool     tfo_nosuid;            /* setuid=off */
	bool     tfo_nodev;             /* devices=off */
	bool     tfo_noexec;            /* exec=off */
	tarn_fuse_atime_t tfo_atime;    /* the mount's atime flag (default relatime) */
	bool     tfo_writeback;         /* kernel writeback cache (default on; never when ro) */
	bool     tfo_acl;               /* POSIX ACLs enforced by the kernel (default on) */
	bool     tfo_splice;            /* splice read/write/move (default off: see DESIGN) */
	bool     tfo_uring;             /* FUSE over io_uring when the kernel allows it
	                                 * (default on; see tarn_fuse_uring.c) */
	unsigned tfo_poll_us;           /* with io_uring: poll for the next request until
	                                 * none came for this long (default 100; 0: never) */
	double   tfo_entry_timeout;     /* seconds the kernel may trust a name (default 60) */
	double   tfo_attr_timeout;      /* seconds it may trust attributes (default 60) */
	unsigned tfo_max_threads;       /* worker threads (default 16) */
	unsigned tfo_read_ahead_kb;     /* kernel readahead of the mount (default 4096) */
	bool     tfo_readaround;        /* a small read stores the rest of its record in
	                                 * the kernel's page cache (default off;
	                                 * tarn_fuse_around.c) */
	const char *tfo_fsname;         /* source shown in /proc/mounts (default "tarn") */
	bool     tfo_debug;             /* libfuse request trace on stderr */
	/* .zfs: none without ops (tarn-mount); see tarn_fuse_snap_ops_t */
	const tarn_fuse_snap_ops_t *tfo_snap_ops;
	void    *tfo_snap_arg;
	bool     tfo_snapdir_visible;   /* snapdir=visible: .zfs listed in the root */
	unsigned tfo_snap_idle_ms;      /* an unused snapshot is closed after (default 60000) */
} tarn_fuse_opts_t;

/* Fill o with the defaults named above. */
void tarn_fuse_opts_init(tarn_fuse_opts_t *o);

/*
 * Start a watcher process that aborts the connections this process still
 * serves when it dies, however it dies (SIGKILL too): programs using the
 * mounts then get ENOTCONN at once.  Call once, before any thread exists
 * (it forks); 0 or an errno (mounts then work without it).
 */
int tarn_fuse_guard_start(void);
/* The watcher runs the server's binary as TARN_FUSE_GUARD_NAME: main calls this. */
#define TARN_FUSE_GUARD_NAME "tarn-fuse-guard"
void tarn_fuse_guard_main(void) __attribute__((noreturn));

/*
 * Mount fs on mountpoint (an existing directory) and start serving it in
 * background threads.  The fs stays the caller's: it must outlive the
 * mount (until tarn_fuse_unmount returns).  Errors: ENOENT/ENOTDIR for a
 * bad mountpoint, EBUSY when something is mounted there already, ENODEV
 * when /dev/fuse is missing, EPERM or EIO when the mount itself fails
 * (libfuse says why on stderr).
 */
int tarn_fuse_mount(posix_fs_t *fs, const char *mountpoint, const tarn_fuse_opts_t *o,
    tarn_fuse_t **out);

/*
 * Unmount and stop serving.  Without force, EBUSY while files are open
 * (nothing changes then).  With force, dirty kernel pages are written
 * back first (syncfs), then the connection is aborted and the mount
 * detached: processes still using it get ENOTCONN.  When the mount was
 * already removed from outside (fusermount3 -u, umount), this only
 * cleans up.  EBUSY also when the session has not ended 30 s after the
 * mount went away (t stays valid: call again).  On success t is freed
 * and every reference the kernel held on fs's inodes has been dropped
 * (posix_forget), so files unlinked while open are gone; the caller then
 * syncs and closes fs.
 */
int tarn_fuse_unmount(tarn_fuse_t *t, bool force);

/* True once the session has ended (unmounted from outside, or aborted). */
bool tarn_fuse_exited(tarn_fuse_t *t);
/* Not exited, and (when its device is known) still in the mount table. */
bool tarn_fuse_mounted(tarn_fuse_t *t);
/* Wait up to timeout_ms (-1: forever) for the session to end; true if it did. */
bool tarn_fuse_wait(tarn_fuse_t *t, int timeout_ms);
const char *tarn_fuse_mountpoint(const tarn_fuse_t *t);

/*
 * Invalidations, for changes Tarn makes behind the kernel's back
 * (rollback, receive, clone promotion): the kernel forgets what it cached
 * and asks again.  Never call them from inside a request handler of this
 * server.  They return 0, ENOENT when the kernel did not know the inode
 * or name (nothing to do), or another errno from the kernel.
 *
 * _inode: attributes and cached data of ino.  With the writeback cache
 *         the kernel keeps its own size and times of a regular file it
 *         caches: when those changed, use _all (or remount).
 * _entry: the name dir/name (positive or negative), and dir's attributes.
 * _all:   every name the kernel has cached (an epoch bump, Linux >= 6.16),
 *         the attributes and data of every inode it holds, and a new
 *         generation for every inode (files still open on an old inode get
 *         EIO, as on a stale NFS handle); ENOTSUP when the kernel cannot
 *         drop all names at once (remount then).
 */
int tarn_fuse_invalidate_inode(tarn_fuse_t *t, posix_ino_t ino);
int tarn_fuse_invalidate_entry(tarn_fuse_t *t, posix_ino_t dir, const char *name);
int tarn_fuse_invalidate_all(tarn_fuse_t *t);

/*
 * Serve another file system on the same mount (rollback, receive: the
 * dataset's object set was replaced), so that programs see the new
 * contents at once; theory in tarn_fuse_swap.c.  Never from inside a
 * request handler of this server.
 *
 * _begin: requests stop reaching the fs (new ones wait, those in flight
 *         finish), and every reference the kernel holds on its inodes is
 *         given back (posix_forget): the caller may then sync and close
 *         it.  Nothing changed when it fails: ENOTSUP when the kernel
 *         cannot be told to drop every name it caches at once
 *         (FUSE_NOTIFY_INC_EPOCH, Linux 6.16) or requests are spliced
 *         (unmount and mount again instead), EBUSY when requests in
 *         flight did not end within 30 s, ENOTCONN when the session ended.
 * _end:   serve fs from now on (the replacement, or the old dataset opened
 *         again); every inode and open file of before is stale (requests
 *         about them get ESTALE), and the kernel's names, attributes and
 *         pages are dropped.  fs NULL: nothing to serve, every request
 *         gets EIO until the caller unmounts (with force).
 */
int tarn_fuse_swap_begin(tarn_fuse_t *t);
void tarn_fuse_swap_end(tarn_fuse_t *t, posix_fs_t *fs);

/*
 * .zfs/snapshot/NAME is about to be destroyed or renamed from outside
 * (zfs destroy, zfs rename): close it if it is open and nothing is open
 * in it; its nodes go stale (ESTALE) and the kernel is told to forget
 * its names.  0 (also when it was not open) or EBUSY (files open there).
 * Not from a request handler of this server.
 */
int tarn_fuse_snapdir_release(tarn_fuse_t *t, const char *name);
/* snapdir=hidden|visible changed. */
void tarn_fuse_snapdir_visible(tarn_fuse_t *t, bool visible);
/* Snapshots open under .zfs/snapshot now (for tests and stats). */
unsigned tarn_fuse_snapdir_open_count(tarn_fuse_t *t);

typedef struct tarn_fuse_stats {
	uint64_t tfs_nodes;             /* inodes the kernel holds references on */
	uint64_t tfs_lookups;           /* sum of their lookup counts */
	uint64_t tfs_requests;          /* requests answered */
	uint64_t tfs_errors;            /* error replies (not counted: ENOENT from lookup,
	                                 * ENODATA from getxattr) */
	bool     tfs_writeback;         /* what was negotiated with the kernel */
	bool     tfs_splice;
	bool     tfs_killpriv_v2;       /* we clear suid/sgid when the kernel says so */
	uint64_t tfs_getxattrs;         /* GETXATTR requests (the kernel's security.capability
	                                 * lookups before writes among them) */
	bool     tfs_readdirplus;
	bool     tfs_uring;             /* requests come through per-CPU io_uring queues */
	uint64_t tfs_forgets;           /* inodes the kernel forgot */
	uint64_t tfs_dev_reads;         /* messages read from /dev/fuse beside the rings
	                                 * (forgets come in batches there) */
	uint64_t tfs_uring_unpinned;    /* large reads and writes served by a ring thread
	                                 * free to run on any CPU (tf_uring_place) */
	uint32_t tfs_max_write;
	uint64_t tfs_around_stores;     /* read-around: records stored in the page cache */
	uint64_t tfs_around_bytes;      /* ...and their bytes */
	uint64_t tfs_around_drops;      /* hints dropped (the storer's queue was full) */
	uint64_t tfs_around_skips;      /* hints not stored (a writer, a change, stored lately) */
} tarn_fuse_stats_t;
void tarn_fuse_get_stats(tarn_fuse_t *t, tarn_fuse_stats_t *st);

/*
 * The kernel lets FUSE servers take requests through io_uring (Linux
 * 6.14+ with the fuse module's enable_uring parameter on); mounts made
 * while it does use per-CPU rings unless tfo_uring is off.
 */
bool tarn_fuse_uring_enabled(void);

#endif
