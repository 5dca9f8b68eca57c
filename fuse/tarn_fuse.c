/*
 * tarn_fuse.c — the FUSE server's life: mount, the session threads, the
 * INIT negotiation, unmount, and the invalidations Tarn sends when it
 * changes a file system behind the kernel's back.  The request handlers
 * live in tarn_fuse_ops.c (names, attributes, xattrs), tarn_fuse_io.c
 * (open, read, write, sync, space) and tarn_fuse_dir.c (listings).
 *
 * Theory
 * ------
 * Requests.  libfuse's low-level API hands us one request at a time per
 * worker thread; a request names inodes by FUSE node id.  Node ids are
 * posix inode numbers (object numbers) except that the file system's
 * root object and FUSE_ROOT_ID (1) trade places (tf_ino_swap), so the
 * mapping needs no table.  Every handler computes one errno (0 or a
 * posix error, translated once in tarn_fuse_reply_err: ECKSUM becomes
 * EIO, and so on) and sends exactly one reply; forget sends none.
 * Permission checks are the kernel's (default_permissions, always on).
 * Clearing setuid/setgid on write, truncate and chown is ours, when the
 * kernel says so (killpriv v2, which libfuse 3.14 cannot ask for: our
 * INIT hook does, see tarn_fuse_uring.c): a WRITE, OPEN with O_TRUNC or
 * SETATTR carries a flag when the caller lacks CAP_FSETID (a chown always
 * does), and we clear set-user-ID, and set-group-ID when the file is
 * group-executable, as a local file system would.  Without it the kernel
 * asked us for security.capability before every write(2), a round trip
 * that cost 56% of fio's waits in a sequential write; with it the kernel
 * asks once per inode (S_NOSEC) until its attributes change.
 * security.capability itself is still the kernel's to remove (a
 * REMOVEXATTR).  The old killpriv (v1) we do not take: it wants us to
 * know the caller's capabilities, and we would not.
 *
 * Lookup counts.  Every entry reply (lookup, create, mknod, mkdir,
 * symlink, link, and each entry of readdirplus other than "." and "..")
 * gives the kernel one reference; forget(n) gives n back.  The posix
 * layer counts the same references: the posix call that produced the
 * entry took one (posix_lookup, posix_create, ...) and forget calls
 * posix_forget(n).  An unlinked inode is destroyed when its count drops
 * to zero, which is how files unlinked while open live until their last
 * close: the kernel forgets an inode only after its last release.  Opens
 * take no reference of their own.  The root is special: the kernel's
 * reference from the mount was never counted by posix, so every entry
 * reply for the root drops its posix reference at once and forgets of
 * the root are ignored (the root cannot be unlinked).  When a reply
 * cannot be delivered because the request was interrupted (-ENOENT from
 * fuse_reply_*), the reference is taken back.  The node table
 * (tarn_fuse_nodes.c) keeps the same counts, because at unmount the
 * kernel drops its references without telling us: tarn_fuse_unmount
 * gives them all back to posix once the session has ended.
 *
 * Caching.  Tarn is the only writer of its mounts, so the kernel may
 * trust what it caches: long entry and attribute timeouts, negative
 * entries cached as long, keep_cache on every open, symlinks cached (but
 * no readdir cache: see tf_opendir for the kernel race that rules it
 * out), no automatic data invalidation on
 * mtime changes (FUSE_CAP_EXPLICIT_INVAL_DATA), and the writeback cache
 * (the kernel gathers small writes into pages and sends them as large
 * writes; it keeps mtime and size itself and sends them to us with
 * setattr).  What Tarn changes itself (rollback, receive) it announces
 * with tarn_fuse_invalidate_*.  One catch: with the writeback cache the
 * kernel keeps its own size, mtime and ctime for a cached regular file
 * and never takes ours again, so invalidating the inode is not enough
 * when those changed.  tarn_fuse_invalidate_all therefore also starts a
 * new generation epoch (entry replies carry pa_gen changed in its low 32
 * bits, the only ones the kernel keeps, by the epoch): after
 * the dentry epoch bump every name is looked up again, the kernel finds
 * the generation changed, marks its old inode bad (I/O through files
 * still open on it fails with EIO, as on a stale NFS handle) and builds
 * a new one from our attributes.  With the writeback cache a write error
 * (ENOSPC, EDQUOT) reaches the program at fsync or close instead of at
 * write, and close can only say ENOSPC or EIO (the kernel keeps no other
 * errno for it); so the daemon mounts datasets under a quota without the
 * cache (host/host_mount.c), where EDQUOT comes from write(2) as on zfs.
 *
 * Size and threads.  1 MiB max_write (libfuse's buffer size, 256 pages)
 * and 4 MiB readahead (raised through the mount's bdi after mount: the
 * kernel offers only its default at INIT); a multi-threaded session with
 * a cloned /dev/fuse fd per worker so that workers do not contend on one
 * queue; a read replies with the object layer's cached blocks themselves
 * (a loan, see tf_read), so the kernel's copy is the only one, and a
 * per-thread 1 MiB scratch buffer holds what had to be copied (holes,
 * small or uncached pieces).
 * Splice (moving pages through a pipe instead of copying) is offered as
 * an option, off by default: our data never sits in a file descriptor,
 * so a spliced request still ends in a copy, plus more system calls.
 *
 * Lifetime.  tarn_fuse_mount creates the session, mounts (mount(2) as
 * root, fusermount3 otherwise) and starts a thread that runs
 * fuse_session_loop_mt; the loop ends when the kernel closes the
 * connection (unmount from anywhere, or an abort).  tarn_fuse_unmount
 * unmounts (plainly, or forcibly: syncfs, abort, detach), joins that
 * thread, destroys the session and gives back the kernel's references.
 */
#include "tarn_fuse_impl.h"

#include <limits.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>

#define TF_MAX_WRITE      (1024 * 1024)
#define TF_MAX_BACKGROUND 64
#define TF_NOTIFY_INC_EPOCH 8      /* FUSE_NOTIFY_INC_EPOCH, Linux 6.16 (protocol 7.44) */

void
tarn_fuse_opts_init(tarn_fuse_opts_t *o)
{
	memset(o, 0, sizeof (*o));
	o->tfo_allow_other = true;
	o->tfo_writeback = true;
	o->tfo_acl = true;
	o->tfo_uring = true;
	o->tfo_poll_us = 100;
	o->tfo_entry_timeout = 60.0;
	o->tfo_attr_timeout = 60.0;
	o->tfo_max_threads = 16;
	o->tfo_read_ahead_kb = 4096;
	o->tfo_readaround = false;      /* off until its deadlock is found: tarn_fuse_around.c */
	o->tfo_fsname = "tarn";
	o->tfo_snap_idle_ms = 60 * 1000;
}

/* ---- INIT: what we ask of the kernel ---- */

static void
tf_want(struct fuse_conn_info *conn, unsigned cap, bool on)
{
	if (on && (conn->capable & cap))
		conn->want |= cap;
	else
		conn->want &= ~cap;
}

static void
tf_init(void *userdata, struct fuse_conn_info *conn)
{
	tarn_fuse_t *t = userdata;
	const tarn_fuse_opts_t *o = &t->tf_opts;

	conn->max_write = MIN(conn->max_write, TF_MAX_WRITE);
	conn->max_readahead = MIN(conn->max_readahead, TF_MAX_WRITE);
	conn->max_background = TF_MAX_BACKGROUND;
	conn->congestion_threshold = TF_MAX_BACKGROUND * 3 / 4;
	conn->time_gran = 1;

	tf_want(conn, FUSE_CAP_WRITEBACK_CACHE, o->tfo_writeback && !o->tfo_readonly);
	tf_want(conn, FUSE_CAP_SPLICE_READ, o->tfo_splice);
	tf_want(conn, FUSE_CAP_SPLICE_WRITE, o->tfo_splice);
	tf_want(conn, FUSE_CAP_SPLICE_MOVE, o->tfo_splice);
	tf_want(conn, FUSE_CAP_AUTO_INVAL_DATA, false);
	tf_want(conn, FUSE_CAP_EXPLICIT_INVAL_DATA, true);
	tf_want(conn, FUSE_CAP_HANDLE_KILLPRIV, false);
	tf_want(conn, FUSE_CAP_CACHE_SYMLINKS, true);
	tf_want(conn, FUSE_CAP_ATOMIC_O_TRUNC, true);
	tf_want(conn, FUSE_CAP_PARALLEL_DIROPS, true);
	tf_want(conn, FUSE_CAP_ASYNC_READ, true);
	tf_want(conn, FUSE_CAP_ASYNC_DIO, true);
	tf_want(conn, FUSE_CAP_READDIRPLUS, true);
	tf_want(conn, FUSE_CAP_READDIRPLUS_AUTO, true);
	/*
	 * The kernel enforces ACLs; new inodes get their umask or default ACL
	 * here.  Without (acltype=off) the kernel would pass the ACL names
	 * through as plain attributes: posix refuses them.
	 */
	tf_want(conn, FUSE_CAP_POSIX_ACL, o->tfo_acl);
	tf_want(conn, FUSE_CAP_DONT_MASK, true);
	/* file handles (NFS export): LOOKUP of "." by node id, ".." for parents */
	tf_want(conn, FUSE_CAP_EXPORT_SUPPORT, true);

	t->tf_writeback = (conn->want & FUSE_CAP_WRITEBACK_CACHE) != 0;
	t->tf_splice = (conn->want & FUSE_CAP_SPLICE_READ) != 0;
	t->tf_readdirplus = (conn->want & FUSE_CAP_READDIRPLUS) != 0;
	t->tf_max_write = conn->max_write;
}

/* Nothing to do here: references are given back after the loop ended. */
static void
tf_destroy(void *userdata)
{
}

/* ---- libfuse's messages ---- */

static atomic_int tf_aborting;          /* forced unmounts under way */
static pthread_once_t tf_log_once = PTHREAD_ONCE_INIT;

/*
 * libfuse's messages go to stderr, except the one every worker prints
 * when a forced unmount cuts the connection (expected, and one per thread).
 */
static void
tf_log(enum fuse_log_level level, const char *fmt, va_list ap)
{
	if (atomic_load(&tf_aborting) > 0 && strncmp(fmt, "fuse: reading device", 20) == 0)
		return;
	vfprintf(stderr, fmt, ap);
}

static void
tf_log_init(void)
{
	fuse_set_log_func(tf_log);
}

/* ---- the session thread ---- */

static void *
tf_loop_main(void *arg)
{
	tarn_fuse_t *t = arg;
	int rc = fuse_session_loop_mt(t->tf_se, t->tf_loop_cfg);
	pthread_mutex_lock(&t->tf_lock);
	t->tf_loop_rc = rc;
	t->tf_exited = true;
	pthread_cond_broadcast(&t->tf_cv);
	pthread_mutex_unlock(&t->tf_lock);
	return (NULL);
}

/* Start the loop thread with every asynchronous signal blocked (workers inherit it). */
static int
tf_start_loop(tarn_fuse_t *t)
{
	sigset_t all, old;
	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGABRT);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int e = pthread_create(&t->tf_loop_thread, NULL, tf_loop_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return (e);
}

/*
 * Raise the mount's readahead (the kernel offers 128 KiB at INIT and a
 * FUSE server may only lower it).  The stat waits for INIT to be done.
 * Best effort: needs root and sysfs.
 */
static void
tf_set_readahead(tarn_fuse_t *t)
{
	if (t->tf_opts.tfo_read_ahead_kb == 0 || geteuid() != 0 || !t->tf_have_dev)
		return;
	char path[128];
	snprintf(path, sizeof (path), "/sys/class/bdi/%u:%u/read_ahead_kb",
	    major(t->tf_dev), minor(t->tf_dev));
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	char v[32];
	int n = snprintf(v, sizeof (v), "%u\n", t->tf_opts.tfo_read_ahead_kb);
	if (write(fd, v, (size_t)n) != n)
		tarn_dprintf("fuse: cannot set %s\n", path);
	close(fd);
}

/*
 * Wait on tf_cv until done(t) (done may be NULL: never) or the session
 * ended, for at most timeout_ms (< 0: no limit); returns done(t) ||
 * ended, under tf_lock.
 */
static bool
tf_wait_for(tarn_fuse_t *t, bool (*done)(tarn_fuse_t *), int timeout_ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (timeout_ms >= 0) {
		uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)timeout_ms * 1000000ULL;
		ts.tv_sec += (time_t)(ns / 1000000000ULL);
		ts.tv_nsec = (long)(ns % 1000000000ULL);
	}
	pthread_mutex_lock(&t->tf_lock);
	while (!t->tf_exited && !(done != NULL && done(t))) {
		if (timeout_ms < 0)
			pthread_cond_wait(&t->tf_cv, &t->tf_lock);
		else if (pthread_cond_timedwait(&t->tf_cv, &t->tf_lock, &ts) == ETIMEDOUT)
			break;
	}
	bool r = t->tf_exited || (done != NULL && done(t));
	pthread_mutex_unlock(&t->tf_lock);
	return (r);
}

static bool
tf_init_done(tarn_fuse_t *t)
{
	return (atomic_load(&t->tf_init_replied));
}

/*
 * Wait until the INIT reply went out (the kernel sends INIT at mount
 * time); false when the session ended first or after 30 seconds.
 */
static bool
tf_wait_init(tarn_fuse_t *t)
{
	return (tf_wait_for(t, tf_init_done, 30 * 1000) && !tarn_fuse_exited(t));
}

/* "-o" options for fuse_session_new (mount options and libfuse's). */
static void
tf_mount_opts(const tarn_fuse_t *t, char *buf, size_t len)
{
	const tarn_fuse_opts_t *o = &t->tf_opts;
	snprintf(buf, len, "fsname=%s,subtype=tarn,default_permissions%s%s,%s,%s,%s%s",
	    t->tf_fsname_buf, o->tfo_allow_other ? ",allow_other" : "",
	    o->tfo_readonly ? ",ro" : ",rw", o->tfo_nosuid ? "nosuid" : "suid",
	    o->tfo_nodev ? "nodev" : "dev", o->tfo_noexec ? "noexec" : "exec",
	    o->tfo_atime == TARN_FUSE_NOATIME ? ",noatime" : "");
}

/*
 * strictatime, which libfuse's options cannot say: set on the new mount
 * (as root; otherwise it stays relatime, and only /proc/mounts differs:
 * the kernel keeps no atime of a FUSE file either way).
 */
static void
tf_set_atime(const tarn_fuse_t *t)
{
	if (t->tf_opts.tfo_atime != TARN_FUSE_STRICTATIME)
		return;
	struct mount_attr a = { 0 };
	a.attr_set = MOUNT_ATTR_STRICTATIME;
	a.attr_clr = MOUNT_ATTR__ATIME;
	(void) mount_setattr(AT_FDCWD, t->tf_mountpoint, 0, &a, sizeof (a));
}

static void
tf_free(tarn_fuse_t *t)
{
	if (t->tf_have_dev)
		tarn_fuse_guard_note(t->tf_dev, false);
	if (t->tf_loop_cfg != NULL)
		fuse_loop_cfg_destroy(t->tf_loop_cfg);
	tf_snapdir_fini(t);
	tf_around_fini(t);
	tarn_fuse_nodes_fini(&t->tf_nodes);
	pthread_mutex_destroy(&t->tf_lock);
	pthread_mutex_destroy(&t->tf_umount_lock);
	pthread_mutex_destroy(&t->tf_rd_lock);
	pthread_cond_destroy(&t->tf_cv);
	tarn_free(t->tf_fsname_buf);
	tarn_free(t->tf_mountpoint);
	tarn_free(t);
}

static tarn_fuse_t *
tf_new(posix_fs_t *fs, const char *mountpoint, const tarn_fuse_opts_t *o)
{
	tarn_fuse_t *t = tarn_alloc(sizeof (*t));
	t->tf_fs = fs;
	t->tf_root = posix_fs_root(fs);
	t->tf_opts = *o;
	/* the fsname goes into a comma-separated option list */
	t->tf_fsname_buf = tarn_strdup(o->tfo_fsname != NULL ? o->tfo_fsname : "tarn");
	for (char *p = t->tf_fsname_buf; *p != '\0'; p++) {
		if (*p == ',' || *p == '\\' || *p == ' ')
			*p = '_';
	}
	t->tf_opts.tfo_fsname = t->tf_fsname_buf;
	if (o->tfo_readonly)
		t->tf_opts.tfo_writeback = false;
	t->tf_mountpoint = tarn_strdup(mountpoint);
	t->tf_entry_tmo = o->tfo_entry_timeout;
	t->tf_attr_tmo = o->tfo_attr_timeout;
	VERIFY0(pthread_mutex_init(&t->tf_lock, NULL));
	VERIFY0(pthread_mutex_init(&t->tf_umount_lock, NULL));
	VERIFY0(pthread_mutex_init(&t->tf_rd_lock, NULL));
	VERIFY0(pthread_cond_init(&t->tf_cv, NULL));
	tarn_fuse_nodes_init(&t->tf_nodes);
	tf_snapdir_init(t);
	tf_around_init(t);
	t->tf_loop_cfg = fuse_loop_cfg_create();
	fuse_loop_cfg_set_clone_fd(t->tf_loop_cfg, 1);
	unsigned nthr = o->tfo_max_threads != 0 ? o->tfo_max_threads : 16;
	fuse_loop_cfg_set_max_threads(t->tf_loop_cfg, nthr);
	/*
	 * Every worker stays (no idle limit below the maximum): libfuse ends
	 * threads above the idle limit after each burst and starts new ones at
	 * the next, and a new thread faults in a fresh 1 MiB receive buffer
	 * (and a clone fd): a tenth of the CPU of a sequential write stream.
	 */
	fuse_loop_cfg_set_idle_threads(t->tf_loop_cfg, nthr);
	return (t);
}

/*
 * A directory, and not already a mount point: mounting on top of another
 * mount would let our unmount (by path) remove the wrong one.
 */
static int
tf_check_mountpoint(const char *mp)
{
	struct stat st, up;
	char parent[PATH_MAX];
	if (stat(mp, &st) != 0)
		return (SET_ERROR(errno));
	if (!S_ISDIR(st.st_mode))
		return (SET_ERROR(ENOTDIR));
	snprintf(parent, sizeof (parent), "%s/..", mp);
	if (stat(parent, &up) == 0 && (up.st_dev != st.st_dev || up.st_ino == st.st_ino))
		return (SET_ERROR(EBUSY));
	if (access("/dev/fuse", F_OK) != 0)
		return (SET_ERROR(ENODEV));
	return (0);
}

int
tarn_fuse_mount(posix_fs_t *fs, const char *mountpoint, const tarn_fuse_opts_t *o,
    tarn_fuse_t **out)
{
	tarn_fuse_opts_t defaults;
	if (o == NULL) {
		tarn_fuse_opts_init(&defaults);
		o = &defaults;
	}
	int e = tf_check_mountpoint(mountpoint);
	if (e != 0)
		return (e);
	pthread_once(&tf_log_once, tf_log_init);

	tarn_fuse_t *t = tf_new(fs, mountpoint, o);
	struct fuse_lowlevel_ops ops;
	memset(&ops, 0, sizeof (ops));
	ops.init = tf_init;
	ops.destroy = tf_destroy;
	tarn_fuse_ops_namespace(&ops);
	tarn_fuse_ops_data(&ops);
	tarn_fuse_ops_dir(&ops);

	char optbuf[512];
	tf_mount_opts(t, optbuf, sizeof (optbuf));
	char *argv[] = { "tarn", "-o", optbuf, "-d", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(o->tfo_debug ? 4 : 3, argv);
	t->tf_se = fuse_session_new(&args, &ops, sizeof (ops), t);
	fuse_opt_free_args(&args);
	if (t->tf_se == NULL) {
		tf_free(t);
		return (SET_ERROR(EINVAL));
	}
	if (fuse_session_mount(t->tf_se, t->tf_mountpoint) != 0) {
		fuse_session_destroy(t->tf_se);
		tf_free(t);
		return (SET_ERROR(geteuid() == 0 ? EIO : EPERM));
	}
	tf_set_atime(t);
	if (t->tf_opts.tfo_uring && !tarn_fuse_uring_enabled())
		t->tf_opts.tfo_uring = false;
	if (tarn_fuse_hook_io(t) != 0)
		t->tf_opts.tfo_uring = false;   /* and no killpriv v2: libfuse's INIT reply as is */
	else
		t->tf_hooked = true;
	e = tf_start_loop(t);
	if (e != 0) {
		fuse_session_unmount(t->tf_se);
		fuse_session_destroy(t->tf_se);
		tf_free(t);
		return (SET_ERROR(e));
	}
	if (t->tf_opts.tfo_uring && tf_wait_init(t))
		(void) tarn_fuse_uring_start(t);
	/* the mount's device number (the stat waits for INIT) */
	struct stat st;
	if (stat(t->tf_mountpoint, &st) == 0) {
		t->tf_dev = st.st_dev;
		t->tf_have_dev = true;
		tarn_fuse_guard_note(t->tf_dev, true);
	}
	tf_set_readahead(t);
	tf_space_start(t);
	tf_snapdir_start(t);
	tf_around_start(t);
	*out = t;
	return (0);
}

/* ---- unmount ---- */

/* fusermount3 -u [-z] MOUNTPOINT, for when we are not root. */
static int
tf_fusermount_u(const char *mp, bool lazy)
{
	pid_t pid = fork();
	if (pid < 0)
		return (SET_ERROR(errno));
	if (pid == 0) {
		if (lazy)
			execlp("fusermount3", "fusermount3", "-u", "-q", "-z", "--", mp,
			    (char *)NULL);
		else
			execlp("fusermount3", "fusermount3", "-u", "-q", "--", mp, (char *)NULL);
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return (SET_ERROR(errno));
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return (SET_ERROR(EBUSY));
	return (0);
}

/*
 * Ask the kernel to cut the connection (fusectl's abort file; root or the
 * mounting user may).  Every request then fails and the session ends.
 */
static void
tf_abort_conn(dev_t dev)
{
	char path[96];
	snprintf(path, sizeof (path), "/sys/fs/fuse/connections/%u/abort", minor(dev));
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && geteuid() == 0 &&
	    mount("fusectl", "/sys/fs/fuse/connections", "fusectl", 0, NULL) == 0)
		fd = open(path, O_WRONLY | O_CLOEXEC);   /* fusectl was not mounted */
	if (fd < 0)
		return;
	if (write(fd, "1", 1) != 1)
		tarn_dprintf("fuse: cannot write %s\n", path);
	close(fd);
}

/*
 * Remove the mount.  Plain: EBUSY while in use.  Forced: write back
 * dirty pages while we still serve, abort the connection, then detach.
 */
static int
tf_umount(tarn_fuse_t *t, bool force)
{
	const char *mp = t->tf_mountpoint;
	bool root = geteuid() == 0;
	if (!force) {
		if (root && umount2(mp, UMOUNT_NOFOLLOW) != 0)
			return (errno == EINVAL ? 0 : SET_ERROR(errno));
		return (root ? 0 : tf_fusermount_u(mp, false));
	}
	struct stat st;
	bool have_dev = stat(mp, &st) == 0;
	/*
	 * The kernel may have detached this mount already (its mountpoint's
	 * entry dropped under a rollback of the file system above): the path
	 * then leads elsewhere, perhaps to the parent's mount, which must not
	 * be unmounted or aborted.  Abort our own connection by its device.
	 */
	if (t->tf_have_dev && (!have_dev || st.st_dev != t->tf_dev)) {
		atomic_fetch_add(&tf_aborting, 1);
		if (!tarn_fuse_wait(t, 1000))
			tf_abort_conn(t->tf_dev);
		(void) tarn_fuse_wait(t, 10 * 1000);
		atomic_fetch_sub(&tf_aborting, 1);
		return (0);
	}
	int fd = open(mp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void) syncfs(fd);
		close(fd);
	}
	int e = 0;
	atomic_fetch_add(&tf_aborting, 1);
	if (root) {
		if (umount2(mp, MNT_FORCE | UMOUNT_NOFOLLOW) != 0 &&
		    umount2(mp, MNT_DETACH | UMOUNT_NOFOLLOW) != 0 && errno != EINVAL)
			e = SET_ERROR(errno);
	} else {
		e = tf_fusermount_u(mp, true);
	}
	if (e == 0 && have_dev && !tarn_fuse_wait(t, 1000))
		tf_abort_conn(st.st_dev);       /* detached but still in use */
	if (e == 0)
		(void) tarn_fuse_wait(t, 10 * 1000);    /* the workers see the abort */
	atomic_fetch_sub(&tf_aborting, 1);
	return (e);
}

/* Give one node's kernel references back to posix (the session is over). */
static int
tf_drain_one(void *arg, posix_ino_t ino, uint64_t nlookup)
{
	tarn_fuse_t *t = arg;
	if (TF_SLOT(ino) != 0)
		tf_snap_forget(t, ino, nlookup);        /* a snapshot's (tarn_fuse_snapdir.c) */
	else
		posix_forget(t->tf_fs, ino, nlookup);
	return (0);
}

int
tarn_fuse_unmount(tarn_fuse_t *t, bool force)
{
	pthread_mutex_lock(&t->tf_umount_lock);
	if (!tarn_fuse_exited(t)) {
		int e = tf_umount(t, force);
		/* the kernel ends the session once the mount is gone */
		if (e == 0 && !tarn_fuse_wait(t, 30 * 1000))
			e = SET_ERROR(EBUSY);
		if (e != 0) {
			pthread_mutex_unlock(&t->tf_umount_lock);
			return (e);
		}
	}
	pthread_join(t->tf_loop_thread, NULL);
	tf_around_stop(t);
	tf_snapdir_stop(t);
	tf_space_stop(t);
	tarn_fuse_uring_stop(t);
	fuse_session_unmount(t->tf_se);
	fuse_session_destroy(t->tf_se);
	t->tf_se = NULL;
	tarn_fuse_nodes_drain(&t->tf_nodes, tf_drain_one, t);
	pthread_mutex_unlock(&t->tf_umount_lock);
	tf_free(t);
	return (0);
}

bool
tarn_fuse_exited(tarn_fuse_t *t)
{
	pthread_mutex_lock(&t->tf_lock);
	bool ex = t->tf_exited;
	pthread_mutex_unlock(&t->tf_lock);
	return (ex);
}

/*
 * Is the mount still in this process's mount table?  umount(8) takes it
 * out before the session notices that its connection ended.
 */
bool
tarn_fuse_mounted(tarn_fuse_t *t)
{
	if (tarn_fuse_exited(t))
		return (false);
	if (!t->tf_have_dev)
		return (true);
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (f == NULL)
		return (true);
	char want[32], line[4096];
	snprintf(want, sizeof (want), " %u:%u ", major(t->tf_dev), minor(t->tf_dev));
	bool found = false;
	while (!found && fgets(line, sizeof (line), f) != NULL)
		found = strstr(line, want) != NULL;
	fclose(f);
	return (found);
}

bool
tarn_fuse_wait(tarn_fuse_t *t, int timeout_ms)
{
	return (tf_wait_for(t, NULL, timeout_ms));
}

const char *
tarn_fuse_mountpoint(const tarn_fuse_t *t)
{
	return (t->tf_mountpoint);
}

/* ---- invalidation ---- */

static int
tf_notify_rc(int rc)
{
	if (rc == 0)
		return (0);
	return (rc < 0 ? -rc : EIO);
}

int
tarn_fuse_invalidate_inode(tarn_fuse_t *t, posix_ino_t ino)
{
	tf_around_fence(t);
	return (tf_notify_rc(fuse_lowlevel_notify_inval_inode(t->tf_se, TF_FINO(t, ino), 0, 0)));
}

int
tarn_fuse_invalidate_entry(tarn_fuse_t *t, posix_ino_t dir, const char *name)
{
	return (tf_notify_rc(fuse_lowlevel_notify_inval_entry(t->tf_se, TF_FINO(t, dir), name,
	    strlen(name))));
}

/* Add ino to the array of posix_ino_t at arg. */
static int
tf_collect_ino(void *arg, posix_ino_t ino, uint64_t nlookup)
{
	TARN_ARRAY_APPEND((tarn_array_t *)arg, posix_ino_t, ino);
	return (0);
}

/*
 * Bump the kernel's dentry epoch: every cached name, positive or
 * negative, is looked up again before its next use.  The notification
 * has no payload; libfuse 3.14 has no call for it, so we write it.
 */
int
tf_notify_inc_epoch(tarn_fuse_t *t)
{
	struct {
		uint32_t len;
		int32_t  error;
		uint64_t unique;
	} hdr = { sizeof (hdr), TF_NOTIFY_INC_EPOCH, 0 };
	ssize_t n = write(fuse_session_fd(t->tf_se), &hdr, sizeof (hdr));
	if (n == (ssize_t)sizeof (hdr))
		return (0);
	return (n < 0 && errno != EINVAL ? SET_ERROR(errno) : SET_ERROR(ENOTSUP));
}

int
tarn_fuse_invalidate_all(tarn_fuse_t *t)
{
	atomic_fetch_add(&t->tf_gen_epoch, 1);
	int e = tf_notify_inc_epoch(t);
	tarn_array_t a = TARN_ARRAY_INIT(posix_ino_t);
	VERIFY0(tarn_array_reserve(&a, 256));     /* the first size */
	tarn_fuse_nodes_walk(&t->tf_nodes, tf_collect_ino, &a);
	(void) tarn_fuse_invalidate_inode(t, t->tf_root);
	for (size_t i = 0; i < tarn_array_len(&a); i++)
		(void) tarn_fuse_invalidate_inode(t, TARN_ARRAY_AT(&a, posix_ino_t, i));
	tarn_array_fini(&a);
	return (e);
}

void
tarn_fuse_get_stats(tarn_fuse_t *t, tarn_fuse_stats_t *st)
{
	memset(st, 0, sizeof (*st));
	tarn_fuse_nodes_count(&t->tf_nodes, &st->tfs_nodes, &st->tfs_lookups);
	st->tfs_requests = atomic_load(&t->tf_requests);
	st->tfs_errors = atomic_load(&t->tf_errors);
	st->tfs_writeback = t->tf_writeback;
	st->tfs_splice = t->tf_splice;
	st->tfs_killpriv_v2 = t->tf_killpriv_v2;
	st->tfs_getxattrs = atomic_load(&t->tf_getxattrs);
	st->tfs_readdirplus = t->tf_readdirplus;
	st->tfs_uring = t->tf_uring_on;
	st->tfs_uring_unpinned = atomic_load(&t->tf_uring_unpinned);
	st->tfs_forgets = atomic_load(&t->tf_forgets);
	st->tfs_dev_reads = atomic_load(&t->tf_dev_reads);
	st->tfs_max_write = t->tf_max_write;
	tf_around_stats(t, &st->tfs_around_stores, &st->tfs_around_bytes, &st->tfs_around_drops,
	    &st->tfs_around_skips);
}
