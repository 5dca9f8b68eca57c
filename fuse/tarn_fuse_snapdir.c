/*
 * tarn_fuse_snapdir.c — the .zfs directory of a mount: MNT/.zfs/snapshot
 * lists the file system's snapshots, and MNT/.zfs/snapshot/NAME is
 * snapshot FS@NAME, read-only, opened on first access and closed when
 * idle; mkdir, rmdir and mv there take, destroy and rename snapshots
 * (root only, as zfs allows).
 *
 * Theory
 * ------
 * One mount, many file systems.  The kernel names every inode of a FUSE
 * mount by a 64-bit node id, so the live file system and every snapshot
 * open under .zfs share one id space.  A node id is split in two: bits
 * 48-63 are a slot, bits 0-47 an inode (object) number, which the DMU
 * keeps below 2^48 (DMU_MAX_OBJECT).  Slot 0 is the live file system
 * (its ids are inode numbers with the root and FUSE_ROOT_ID swapped, as
 * before .zfs existed, so nothing changes for it and resolving such an id
 * costs two compares: tf_resolve); slots 1..TF_SLOT_MAX-1 are snapshots
 * open under .zfs/snapshot; slot 0xffff (TF_SLOT_CTL) holds the two
 * directories that exist only here, .zfs (TF_ZFSDIR_ID) and .zfs/snapshot
 * (TF_SNAPDIR_ID).  The node table is keyed by the same ids (root
 * unswapped), so lookup counts stay per node.  st_ino is the inode
 * number alone: a snapshot's files show the numbers the file system had
 * (st_dev is the mount's, one for all; zfs has one per snapshot, a FUSE
 * mount cannot).  .zfs and .zfs/snapshot show zfs's numbers for them
 * (2^48-1 and 2^48-3).
 *
 * A slot.  Looking up NAME in .zfs/snapshot finds the slot open for NAME
 * or opens the snapshot through the mounter's callbacks (the host layer:
 * dsl_snapshot_objset_open and posix_fs_open read-only; fuse/ cannot
 * reach the pool) and takes a free slot.  Requests on a snapshot's node
 * resolve the slot and hold it (ts_active) while they use its file
 * system, so reads go through the same posix_read and the same reply path
 * as live reads.  Every change there is EROFS before posix is asked.
 * Entry replies count kernel references per slot (ts_krefs) beside the
 * node table, and opens and releases count open files and directories
 * (ts_opens).
 *
 * Idle release.  A thread per mount looks at the slots every quarter of
 * the idle time (tfo_snap_idle_ms, 60 s by default; the daemon takes
 * TARN_SNAPDIR_IDLE_MS): a slot with nothing open and no request for the
 * idle time is closed when the kernel holds no reference on its nodes;
 * while it does, the thread asks the kernel to drop the name
 * (notify_inval_entry of .zfs/snapshot/NAME), which evicts the unused
 * subtree, and the forgets that follow bring the count to zero.  A
 * directory in use (a shell's cwd) keeps its snapshot open.  Unmount
 * closes them all after the session ended.
 *
 * Going stale.  A snapshot destroyed or renamed while its slot is open
 * (rmdir and mv here, or zfs destroy through the dsl's busy hook:
 * tarn_fuse_snapdir_release) is refused with EBUSY while files are open
 * there (after waiting a moment for releases in flight: the kernel sends
 * RELEASE in the background, after close(2) returned, so a program that
 * read a snapshot and then removes it may be ahead of its own releases);
 * otherwise the slot is marked dead (new requests on its nodes
 * get ESTALE), waits for requests in flight, and is closed.  The kernel
 * is told to forget the name (by this thread, never a request handler:
 * the kernel holds .zfs/snapshot's lock while it waits for our reply).
 * A dead slot keeps its number until the kernel forgot every node of it,
 * so a node id never names two snapshots while the kernel may still use
 * it; each opening of a slot also gets a new incarnation, mixed into the
 * generations the kernel sees, so a file handle (NFS) of an old one is
 * stale too.  ESTALE is also what makes the kernel redo a path walk with
 * fresh lookups, so `ls .zfs/snapshot/B` right after `mv A B` finds B.
 * Negative lookups in .zfs/snapshot are not cached (snapshots appear from
 * outside), and its listing is read from the dataset layer every time,
 * with offsets derived from the snapshots' object set ids (stable across
 * renames and other snapshots' creation and destruction).
 *
 * Visibility.  With snapdir=hidden .zfs is left out of the root's listing
 * but found by name; with visible it comes first (tf_list).  A real
 * entry named .zfs in the root is hidden, as on zfs, and the name cannot
 * be made (EEXIST) or removed (EROFS).
 *
 * Locks: sd_open_lock (one snapshot opening at a time) before sd_lock
 * (the slots and their counts); posix calls are made under sd_lock only
 * for posix_forget.  Callbacks run with no lock of ours held.
 */
#include "tarn_fuse_impl.h"

#include <dirent.h>

typedef struct tf_snap {
	uint32_t    ts_slot;
	uint32_t    ts_gen;           /* incarnation: mixed into generations */
	char        ts_name[TARN_FUSE_SNAP_NAME_MAX];
	uint64_t    ts_id;            /* tse_id */
	posix_fs_t *ts_fs;            /* NULL once closed */
	void       *ts_handle;        /* for tso_close */
	uint64_t    ts_krefs;         /* kernel lookups of its nodes */
	uint32_t    ts_opens;         /* open files and directories */
	uint32_t    ts_active;        /* requests using ts_fs now */
	uint32_t    ts_closing;       /* threads closing it (keep the struct) */
	bool        ts_dead;          /* destroyed, renamed or closed: ESTALE */
	bool        ts_inval_sent;    /* idle: the kernel was asked to forget it */
	uint64_t    ts_last;          /* tarn_now_ns of its last request */
} tf_snap_t;

typedef struct tf_inval {
	char ti_name[TARN_FUSE_SNAP_NAME_MAX];
} tf_inval_t;

typedef struct tf_snapdir {
	const tarn_fuse_snap_ops_t *sd_ops;
	void            *sd_arg;
	atomic_bool      sd_visible;
	uint64_t         sd_idle_ns;
	pthread_mutex_t  sd_open_lock;   /* one snapshot opening at a time */
	pthread_mutex_t  sd_lock;        /* everything below */
	pthread_cond_t   sd_cv;          /* ts_active fell to 0, work, sd_stop */
	tf_snap_t       *sd_slot[TF_SLOT_MAX];   /* [0] unused */
	uint32_t         sd_next;        /* where the search for a free slot starts */
	uint32_t         sd_gen;
	atomic_uint      sd_nopen;       /* slots with a file system open */
	tarn_array_t     sd_inval;       /* tf_inval_t: names for the kernel to forget */
	pthread_t        sd_thread;
	bool             sd_started;
	bool             sd_stop;
} tf_snapdir_t;

#define TF_ZFSDIR_INO   (TF_OBJ_MASK)           /* zfs's ZFSCTL_INO_ROOT */
#define TF_SNAPDIR_INO  (TF_OBJ_MASK - 2)       /* zfs's ZFSCTL_INO_SNAPDIR */
#define TF_SNAP_COOKIE0 3                       /* after ".", ".." */
#define TF_RELEASE_WAIT_MS 1000ULL              /* sd_wait_released */

/* ---- slots (sd_lock held unless said) ---- */

static tf_snap_t *
sd_find(tf_snapdir_t *sd, const char *name)
{
	for (uint32_t i = 1; i < TF_SLOT_MAX; i++) {
		tf_snap_t *ts = sd->sd_slot[i];
		if (ts != NULL && !ts->ts_dead && ts->ts_fs != NULL &&
		    strcmp(ts->ts_name, name) == 0)
			return (ts);
	}
	return (NULL);
}

/* Free a dead slot nobody uses or names any more. */
static void
sd_maybe_free(tf_snapdir_t *sd, tf_snap_t *ts)
{
	if (!ts->ts_dead || ts->ts_fs != NULL || ts->ts_krefs != 0 || ts->ts_opens != 0 ||
	    ts->ts_active != 0 || ts->ts_closing != 0)
		return;
	sd->sd_slot[ts->ts_slot] = NULL;
	tarn_free(ts);
}

static void
sd_queue_inval(tf_snapdir_t *sd, const char *name)
{
	tf_inval_t *ti = tarn_array_push(&sd->sd_inval);
	(void) snprintf(ti->ti_name, sizeof (ti->ti_name), "%s", name);
	pthread_cond_broadcast(&sd->sd_cv);
}

/*
 * Mark ts dead, wait for the requests using it, close its file system
 * (sd_lock dropped meanwhile).  ts may be freed on return.
 */
static void
sd_close(tf_snapdir_t *sd, tf_snap_t *ts)
{
	ts->ts_dead = true;
	ts->ts_closing++;
	while (ts->ts_active > 0)
		pthread_cond_wait(&sd->sd_cv, &sd->sd_lock);
	posix_fs_t *fs = ts->ts_fs;
	void *h = ts->ts_handle;
	ts->ts_fs = NULL;
	ts->ts_handle = NULL;
	if (fs != NULL) {
		atomic_fetch_sub(&sd->sd_nopen, 1);
		tarn_dprintf("fuse: .zfs/snapshot/%s closed (slot %u)\n", ts->ts_name,
		    ts->ts_slot);
		pthread_mutex_unlock(&sd->sd_lock);
		sd->sd_ops->tso_close(sd->sd_arg, fs, h);
		pthread_mutex_lock(&sd->sd_lock);
	}
	ts->ts_closing--;
	sd_maybe_free(sd, ts);
}

/*
 * Wait (sd_lock held) up to TF_RELEASE_WAIT_MS for the files and
 * directories open in ts to be released: the kernel sends RELEASE in the
 * background after close(2) returned, so a program that closed its last
 * file there and then removes the snapshot can be ahead of it.  True
 * when nothing is open in ts any more (or ts was closed meanwhile).
 */
static bool
sd_wait_released(tf_snapdir_t *sd, tf_snap_t *ts)
{
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	uint64_t ns = (uint64_t)dl.tv_nsec + TF_RELEASE_WAIT_MS * 1000000ULL;
	dl.tv_sec += (time_t)(ns / 1000000000ULL);
	dl.tv_nsec = (long)(ns % 1000000000ULL);
	ts->ts_closing++;               /* keeps the struct while we wait */
	while (ts->ts_opens > 0 && !ts->ts_dead && ts->ts_fs != NULL &&
	    pthread_cond_timedwait(&sd->sd_cv, &sd->sd_lock, &dl) != ETIMEDOUT)
		;
	ts->ts_closing--;
	return (ts->ts_opens == 0 || ts->ts_dead || ts->ts_fs == NULL);
}

/*
 * Close the snapshot name if open and nothing is open in it (EBUSY
 * otherwise, after waiting for releases in flight: sd_wait_released);
 * the kernel is told to forget the name.  sd_lock held.
 */
static int
sd_detach(tf_snapdir_t *sd, const char *name)
{
	tf_snap_t *ts = sd_find(sd, name);
	if (ts == NULL)
		return (0);
	if (ts->ts_opens > 0 && !sd_wait_released(sd, ts))
		return (SET_ERROR(EBUSY));
	if (ts->ts_dead || ts->ts_fs == NULL) {
		/* closed by another thread while we waited (idle, or gone) */
		sd_maybe_free(sd, ts);
		return (0);
	}
	sd_queue_inval(sd, ts->ts_name);
	sd_close(sd, ts);
	return (0);
}

/* A free slot number, or 0.  Numbers are handed out round-robin. */
static uint32_t
sd_free_slot(tf_snapdir_t *sd)
{
	for (uint32_t k = 0; k < TF_SLOT_MAX - 1; k++) {
		uint32_t i = 1 + (sd->sd_next + k) % (TF_SLOT_MAX - 1);
		if (sd->sd_slot[i] == NULL) {
			sd->sd_next = i;
			return (i);
		}
	}
	return (0);
}

/*
 * The open slot of snapshot name, opened when it is not; returned held
 * (ts_active) in tg.  ENOENT when there is no such snapshot.
 */
static int
sd_get(tarn_fuse_t *t, const char *name, tf_tgt_t *tg)
{
	tf_snapdir_t *sd = t->tf_snapdir;
	if (name[0] == '\0' || strlen(name) >= TARN_FUSE_SNAP_NAME_MAX ||
	    strpbrk(name, "@#%/") != NULL)
		return (SET_ERROR(ENOENT));
	pthread_mutex_lock(&sd->sd_open_lock);
	pthread_mutex_lock(&sd->sd_lock);
	tf_snap_t *ts = sd_find(sd, name);
	int e = 0;
	if (ts == NULL) {
		pthread_mutex_unlock(&sd->sd_lock);
		posix_fs_t *fs = NULL;
		void *h = NULL;
		uint64_t id = 0;
		e = sd->sd_ops->tso_open(sd->sd_arg, name, &fs, &h, &id);
		pthread_mutex_lock(&sd->sd_lock);
		uint32_t slot = e == 0 ? sd_free_slot(sd) : 0;
		if (e == 0 && slot == 0) {
			pthread_mutex_unlock(&sd->sd_lock);
			sd->sd_ops->tso_close(sd->sd_arg, fs, h);
			pthread_mutex_lock(&sd->sd_lock);
			e = SET_ERROR(ENFILE);
		} else if (e == 0) {
			ts = tarn_alloc(sizeof (*ts));
			ts->ts_slot = slot;
			ts->ts_gen = ++sd->sd_gen;
			(void) snprintf(ts->ts_name, sizeof (ts->ts_name), "%s", name);
			ts->ts_id = id;
			ts->ts_fs = fs;
			ts->ts_handle = h;
			sd->sd_slot[slot] = ts;
			atomic_fetch_add(&sd->sd_nopen, 1);
			tarn_dprintf("fuse: .zfs/snapshot/%s opened (slot %u)\n", name, slot);
		}
	}
	if (e == 0) {
		ts->ts_active++;
		ts->ts_last = tarn_now_ns();
		ts->ts_inval_sent = false;
		tg->tt_kind = TF_SNAP;
		tg->tt_fs = ts->ts_fs;
		tg->tt_ino = posix_fs_root(ts->ts_fs);
		tg->tt_snap = ts;
	}
	pthread_mutex_unlock(&sd->sd_lock);
	pthread_mutex_unlock(&sd->sd_open_lock);
	return (e);
}

/* ---- what the handlers call ---- */

int
tf_resolve_slow(tarn_fuse_t *t, fuse_ino_t ino, tf_tgt_t *tg)
{
	tf_snapdir_t *sd = t->tf_snapdir;
	uint64_t slot = TF_SLOT(ino);
	memset(tg, 0, sizeof (*tg));
	if (sd == NULL)
		return (SET_ERROR(ESTALE));
	if (slot == TF_SLOT_CTL) {
		if (ino == TF_ZFSDIR_ID)
			tg->tt_kind = TF_ZFSDIR;
		else if (ino == TF_SNAPDIR_ID)
			tg->tt_kind = TF_SNAPDIR;
		else
			return (SET_ERROR(ESTALE));
		return (0);
	}
	if (slot >= TF_SLOT_MAX)
		return (SET_ERROR(ESTALE));
	pthread_mutex_lock(&sd->sd_lock);
	tf_snap_t *ts = sd->sd_slot[slot];
	if (ts == NULL || ts->ts_dead || ts->ts_fs == NULL) {
		pthread_mutex_unlock(&sd->sd_lock);
		return (SET_ERROR(ESTALE));
	}
	ts->ts_active++;
	ts->ts_last = tarn_now_ns();
	ts->ts_inval_sent = false;
	tg->tt_kind = TF_SNAP;
	tg->tt_fs = ts->ts_fs;
	tg->tt_ino = ino & TF_OBJ_MASK;
	tg->tt_snap = ts;
	pthread_mutex_unlock(&sd->sd_lock);
	return (0);
}

void
tf_tgt_rele_slow(tarn_fuse_t *t, tf_tgt_t *tg)
{
	tf_snapdir_t *sd = t->tf_snapdir;
	tf_snap_t *ts = tg->tt_snap;
	pthread_mutex_lock(&sd->sd_lock);
	VERIFY3U(ts->ts_active, >, 0);
	if (--ts->ts_active == 0)
		pthread_cond_broadcast(&sd->sd_cv);
	sd_maybe_free(sd, ts);
	pthread_mutex_unlock(&sd->sd_lock);
	tg->tt_snap = NULL;
}

uint64_t
tf_snap_key(const tf_tgt_t *tg, posix_ino_t ino)
{
	return (((uint64_t)tg->tt_snap->ts_slot << TF_SLOT_SHIFT) | (ino & TF_OBJ_MASK));
}

uint64_t
tf_snap_gen(const tf_tgt_t *tg, const posix_attr_t *pa)
{
	/* the kernel keeps the low 32 bits: the incarnation changes those */
	return (pa->pa_gen ^ (uint32_t)(tg->tt_snap->ts_gen * 0x85ebca6bu));
}

void
tf_snap_kref(tarn_fuse_t *t, const tf_tgt_t *tg, int delta)
{
	tf_snapdir_t *sd = t->tf_snapdir;
	pthread_mutex_lock(&sd->sd_lock);
	if (delta > 0)
		tg->tt_snap->ts_krefs++;
	else if (tg->tt_snap->ts_krefs > 0)
		tg->tt_snap->ts_krefs--;
	pthread_mutex_unlock(&sd->sd_lock);
}

void
tf_snap_forget(tarn_fuse_t *t, uint64_t id, uint64_t n)
{
	tf_snapdir_t *sd = t->tf_snapdir;
	uint64_t slot = TF_SLOT(id);
	if (sd == NULL || slot == 0 || slot >= TF_SLOT_MAX)
		return;
	pthread_mutex_lock(&sd->sd_lock);
	tf_snap_t *ts = sd->sd_slot[slot];
	if (ts != NULL) {
		if (ts->ts_fs != NULL)
			posix_forget(ts->ts_fs, id & TF_OBJ_MASK, n);
		ts->ts_krefs -= MIN(n, ts->ts_krefs);
		sd_maybe_free(sd, ts);
	}
	pthread_mutex_unlock(&sd->sd_lock);
}

void
tf_snap_open(tarn_fuse_t *t, fuse_ino_t ino, int delta)
{
	tf_snapdir_t *sd = t->tf_snapdir;
	uint64_t slot = TF_SLOT(ino);
	if (sd == NULL || slot == 0 || slot >= TF_SLOT_MAX)
		return;         /* .zfs and .zfs/snapshot: nothing to count */
	pthread_mutex_lock(&sd->sd_lock);
	tf_snap_t *ts = sd->sd_slot[slot];
	if (ts != NULL) {
		if (delta > 0)
			ts->ts_opens++;
		else if (ts->ts_opens > 0 && --ts->ts_opens == 0)
			pthread_cond_broadcast(&sd->sd_cv);     /* sd_wait_released */
		ts->ts_last = tarn_now_ns();
		sd_maybe_free(sd, ts);
	}
	pthread_mutex_unlock(&sd->sd_lock);
}

bool
tf_snapdir_listed(tarn_fuse_t *t)
{
	return (t->tf_snapdir != NULL && atomic_load(&t->tf_snapdir->sd_visible));
}

bool
tf_is_zfs_name(tarn_fuse_t *t, const tf_tgt_t *parent, const char *name)
{
	return (t->tf_snapdir != NULL && parent->tt_kind == TF_LIVE &&
	    parent->tt_ino == t->tf_root && strcmp(name, ".zfs") == 0);
}

/* ---- the two control directories ---- */

/* The attributes of .zfs or .zfs/snapshot: the root's times, root's, read-only or 0777. */
static void
ctl_attr(tarn_fuse_t *t, uint64_t id, posix_attr_t *pa)
{
	if (posix_getattr(t->tf_fs, t->tf_root, pa) != 0)
		memset(pa, 0, sizeof (*pa));
	pa->pa_ino = id == TF_ZFSDIR_ID ? TF_ZFSDIR_INO : TF_SNAPDIR_INO;
	/* .zfs/snapshot is writable to all, as on zfs: mkdir there says EPERM itself */
	pa->pa_mode = S_IFDIR | (id == TF_ZFSDIR_ID ? 0555 : 0777);
	pa->pa_nlink = 2;
	pa->pa_uid = 0;
	pa->pa_gid = 0;
	pa->pa_size = 0;
	pa->pa_blocks = 0;
	pa->pa_gen = 0;
}

/* An entry for a control directory: not counted (its forgets are ignored). */
static void
ctl_reply_entry(tarn_fuse_t *t, fuse_req_t req, uint64_t id)
{
	struct fuse_entry_param ep;
	posix_attr_t pa;
	memset(&ep, 0, sizeof (ep));
	ctl_attr(t, id, &pa);
	tarn_fuse_attr_to_stat(&pa, &ep.attr);
	ep.ino = id;
	ep.attr_timeout = id == TF_SNAPDIR_ID ? 1.0 : t->tf_attr_tmo;
	ep.entry_timeout = t->tf_entry_tmo;
	(void) fuse_reply_entry(req, &ep);
}

/* The live root, for ".." of .zfs. */
static void
ctl_reply_root(tarn_fuse_t *t, fuse_req_t req)
{
	tf_tgt_t live;
	posix_attr_t pa;
	(void) tf_resolve(t, FUSE_ROOT_ID, &live);
	int e = posix_lookup(t->tf_fs, t->tf_root, ".", &pa);
	tarn_fuse_reply_entry(t, req, &live, e, &pa);
}

/* .zfs/snapshot/NAME: open (or find) the snapshot and reply with its root. */
static void
ctl_lookup_snap(tarn_fuse_t *t, fuse_req_t req, const char *name)
{
	tf_tgt_t tg = { 0 };
	posix_attr_t pa;
	int e = sd_get(t, name, &tg);
	if (e == ENOENT) {
		/* not cached: a snapshot may be taken from outside at any time */
		(void) fuse_reply_err(req, ENOENT);
		return;
	}
	if (e == 0)
		e = posix_lookup(tg.tt_fs, tg.tt_ino, ".", &pa);
	tarn_fuse_reply_entry(t, req, &tg, e, &pa);
	tf_tgt_rele(t, &tg);
}

void
tf_ctl_lookup(tarn_fuse_t *t, fuse_req_t req, const tf_tgt_t *parent, const char *name)
{
	bool dot = strcmp(name, ".") == 0, dotdot = strcmp(name, "..") == 0;
	switch (parent->tt_kind) {
	case TF_LIVE:           /* ".zfs" in the root */
		ctl_reply_entry(t, req, TF_ZFSDIR_ID);
		return;
	case TF_SNAP:           /* ".." of a snapshot's root */
		ctl_reply_entry(t, req, TF_SNAPDIR_ID);
		return;
	case TF_ZFSDIR:
		if (dotdot)
			ctl_reply_root(t, req);
		else if (dot || strcmp(name, "snapshot") == 0)
			ctl_reply_entry(t, req, dot ? TF_ZFSDIR_ID : TF_SNAPDIR_ID);
		else
			(void) fuse_reply_err(req, ENOENT);
		return;
	case TF_SNAPDIR:
		if (dot || dotdot)
			ctl_reply_entry(t, req, dot ? TF_SNAPDIR_ID : TF_ZFSDIR_ID);
		else
			ctl_lookup_snap(t, req, name);
		return;
	}
}

void
tf_ctl_getattr(tarn_fuse_t *t, fuse_req_t req, const tf_tgt_t *tg)
{
	uint64_t id = tg->tt_kind == TF_ZFSDIR ? TF_ZFSDIR_ID : TF_SNAPDIR_ID;
	posix_attr_t pa;
	ctl_attr(t, id, &pa);
	double tmo = id == TF_SNAPDIR_ID ? 1.0 : t->tf_attr_tmo;
	tarn_fuse_reply_pattr(req, &pa, tmo);
}

static int
ent_cmp(const void *a, const void *b)
{
	uint64_t x = ((const tarn_fuse_snap_ent_t *)a)->tse_id;
	uint64_t y = ((const tarn_fuse_snap_ent_t *)b)->tse_id;
	return (x < y ? -1 : x > y);
}

/*
 * Open slots whose snapshot is gone from the listing, or is another one
 * now, were destroyed or renamed behind our back (a path that did not
 * ask tarn_fuse_snapdir_release): they go stale.
 */
static void
sd_check_gone(tf_snapdir_t *sd, const tarn_fuse_snap_ent_t *ents, size_t n)
{
	pthread_mutex_lock(&sd->sd_lock);
	for (uint32_t i = 1; i < TF_SLOT_MAX; i++) {
		tf_snap_t *ts = sd->sd_slot[i];
		if (ts == NULL || ts->ts_dead || ts->ts_fs == NULL || ts->ts_opens > 0)
			continue;
		bool found = false;
		for (size_t k = 0; k < n && !found; k++)
			found = ents[k].tse_id == ts->ts_id &&
			    strcmp(ents[k].tse_name, ts->ts_name) == 0;
		if (!found) {
			sd_queue_inval(sd, ts->ts_name);
			sd_close(sd, ts);
		}
	}
	pthread_mutex_unlock(&sd->sd_lock);
}

/* Add one entry; false when the buffer is full. */
static bool
ctl_add(fuse_req_t req, bool plus, char *buf, size_t size, size_t *used, const char *name,
    uint64_t ino, uint64_t next)
{
	size_t n;
	if (plus) {
		struct fuse_entry_param ep;
		memset(&ep, 0, sizeof (ep));        /* no attributes: no reference */
		ep.attr.st_ino = ino;
		ep.attr.st_mode = S_IFDIR;
		n = fuse_add_direntry_plus(req, buf + *used, size - *used, name, &ep, (off_t)next);
	} else {
		struct stat st;
		memset(&st, 0, sizeof (st));
		st.st_ino = ino;
		st.st_mode = S_IFDIR;
		n = fuse_add_direntry(req, buf + *used, size - *used, name, &st, (off_t)next);
	}
	if (n > size - *used)
		return (false);
	*used += n;
	return (true);
}

void
tf_ctl_readdir(tarn_fuse_t *t, fuse_req_t req, const tf_tgt_t *tg, size_t size, off_t off,
    bool plus)
{
	tf_snapdir_t *sd = t->tf_snapdir;
	bool zfsdir = tg->tt_kind == TF_ZFSDIR;
	char *buf = tarn_fuse_scratch(size);
	size_t used = 0;
	uint64_t from = (uint64_t)off;
	uint64_t self = zfsdir ? TF_ZFSDIR_INO : TF_SNAPDIR_INO;
	uint64_t up = zfsdir ? posix_fs_root(t->tf_fs) : TF_ZFSDIR_INO;
	bool room = true;
	if (from < 1)
		room = ctl_add(req, plus, buf, size, &used, ".", self, 1);
	if (room && from < 2)
		room = ctl_add(req, plus, buf, size, &used, "..", up, 2);
	if (zfsdir) {
		if (room && from < TF_SNAP_COOKIE0)
			(void) ctl_add(req, plus, buf, size, &used, "snapshot", TF_SNAPDIR_INO,
			    TF_SNAP_COOKIE0);
		(void) fuse_reply_buf(req, buf, used);
		return;
	}
	tarn_fuse_snap_ent_t *ents = NULL;
	size_t n = 0;
	int e = sd->sd_ops->tso_list(sd->sd_arg, &ents, &n);
	if (e != 0) {
		tarn_fuse_reply_err(req, e);
		return;
	}
	qsort(ents, n, sizeof (*ents), ent_cmp);
	if (from == 0)
		sd_check_gone(sd, ents, n);
	/* d_ino of a snapshot: its root's inode number, as the file system has it */
	uint64_t rootino = posix_fs_root(t->tf_fs);
	for (size_t i = 0; i < n && room; i++) {
		uint64_t next = ents[i].tse_id + TF_SNAP_COOKIE0 + 1;
		if (next <= from)
			continue;
		room = ctl_add(req, plus, buf, size, &used, ents[i].tse_name, rootino, next);
	}
	tarn_free(ents);
	(void) fuse_reply_buf(req, buf, used);
}

/* ---- mkdir, rmdir, mv under .zfs/snapshot ---- */

/* Only root may (as zfs allows); 0 or EPERM. */
static int
ctl_may_change(fuse_req_t req)
{
	return (fuse_req_ctx(req)->uid == 0 ? 0 : SET_ERROR(EPERM));
}

void
tf_ctl_mkdir(tarn_fuse_t *t, fuse_req_t req, const char *name)
{
	tf_snapdir_t *sd = t->tf_snapdir;
	int e = sd == NULL ? SET_ERROR(EROFS) : ctl_may_change(req);
	if (e == 0 && strlen(name) >= TARN_FUSE_SNAP_NAME_MAX)
		e = SET_ERROR(ENAMETOOLONG);
	if (e == 0)
		e = sd->sd_ops->tso_create(sd->sd_arg, name);
	if (e != 0) {
		tarn_fuse_reply_err(req, e);
		return;
	}
	ctl_lookup_snap(t, req, name);
}

void
tf_ctl_rmdir(tarn_fuse_t *t, fuse_req_t req, const char *name)
{
	tf_snapdir_t *sd = t->tf_snapdir;
	int e = sd == NULL ? SET_ERROR(EROFS) : ctl_may_change(req);
	if (e == 0) {
		pthread_mutex_lock(&sd->sd_lock);
		e = sd_detach(sd, name);
		pthread_mutex_unlock(&sd->sd_lock);
	}
	if (e == 0)
		e = sd->sd_ops->tso_destroy(sd->sd_arg, name);
	tarn_fuse_reply_err(req, e);
}

void
tf_ctl_rename(tarn_fuse_t *t, fuse_req_t req, const char *name, fuse_ino_t newparent,
    const char *newname, unsigned int flags)
{
	tf_snapdir_t *sd = t->tf_snapdir;
	int e = sd == NULL ? SET_ERROR(EROFS) : 0;
	if (e == 0 && newparent != TF_SNAPDIR_ID)
		e = SET_ERROR(EXDEV);           /* a snapshot stays with its file system */
	if (e == 0 && (flags & ~RENAME_NOREPLACE))
		e = SET_ERROR(EINVAL);
	if (e == 0)
		e = ctl_may_change(req);
	if (e == 0 && strlen(newname) >= TARN_FUSE_SNAP_NAME_MAX)
		e = SET_ERROR(ENAMETOOLONG);
	if (e == 0 && strcmp(name, newname) == 0) {
		tarn_fuse_reply_err(req, 0);
		return;
	}
	if (e == 0) {
		pthread_mutex_lock(&sd->sd_lock);
		e = sd_detach(sd, name);
		pthread_mutex_unlock(&sd->sd_lock);
	}
	if (e == 0)
		e = sd->sd_ops->tso_rename(sd->sd_arg, name, newname);
	if (e == 0) {
		/* the kernel moves its dentry (of the dead slot) to newname: drop it */
		pthread_mutex_lock(&sd->sd_lock);
		sd_queue_inval(sd, newname);
		pthread_mutex_unlock(&sd->sd_lock);
	}
	tarn_fuse_reply_err(req, e);
}

/* ---- the idle thread ---- */

/*
 * One look at the slots: close the idle ones the kernel no longer names,
 * ask the kernel to drop the names of the others; then send the queued
 * invalidations (sd_lock not held).
 */
static void
sd_idle_pass(tarn_fuse_t *t, tf_snapdir_t *sd)
{
	uint64_t now = tarn_now_ns();
	for (uint32_t i = 1; i < TF_SLOT_MAX; i++) {
		tf_snap_t *ts = sd->sd_slot[i];
		if (ts == NULL || ts->ts_dead || ts->ts_fs == NULL || ts->ts_opens > 0 ||
		    ts->ts_active > 0 || now - ts->ts_last < sd->sd_idle_ns)
			continue;
		if (ts->ts_krefs == 0) {
			sd_close(sd, ts);
		} else if (!ts->ts_inval_sent) {
			ts->ts_inval_sent = true;
			sd_queue_inval(sd, ts->ts_name);
		}
	}
	while (tarn_array_len(&sd->sd_inval) > 0 && !sd->sd_stop) {
		tf_inval_t ti = TARN_ARRAY_AT(&sd->sd_inval, tf_inval_t, 0);
		tarn_array_remove(&sd->sd_inval, 0);
		pthread_mutex_unlock(&sd->sd_lock);
		if (!tarn_fuse_exited(t))
			(void) fuse_lowlevel_notify_inval_entry(t->tf_se, TF_SNAPDIR_ID, ti.ti_name,
			    strlen(ti.ti_name));
		pthread_mutex_lock(&sd->sd_lock);
	}
}

static void *
sd_thread_main(void *arg)
{
	tarn_fuse_t *t = arg;
	tf_snapdir_t *sd = t->tf_snapdir;
	uint64_t tick = MAX(MIN(sd->sd_idle_ns / 4, 1000000000ULL), 10000000ULL);
	pthread_mutex_lock(&sd->sd_lock);
	while (!sd->sd_stop) {
		if (tarn_array_len(&sd->sd_inval) == 0) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			uint64_t ns = (uint64_t)ts.tv_nsec + tick;
			ts.tv_sec += (time_t)(ns / 1000000000ULL);
			ts.tv_nsec = (long)(ns % 1000000000ULL);
			(void) pthread_cond_timedwait(&sd->sd_cv, &sd->sd_lock, &ts);
		}
		if (!sd->sd_stop)
			sd_idle_pass(t, sd);
	}
	pthread_mutex_unlock(&sd->sd_lock);
	return (NULL);
}

/* ---- life ---- */

void
tf_snapdir_init(tarn_fuse_t *t)
{
	const tarn_fuse_opts_t *o = &t->tf_opts;
	if (o->tfo_snap_ops == NULL)
		return;
	tf_snapdir_t *sd = tarn_alloc(sizeof (*sd));
	sd->sd_ops = o->tfo_snap_ops;
	sd->sd_arg = o->tfo_snap_arg;
	atomic_store(&sd->sd_visible, o->tfo_snapdir_visible);
	sd->sd_idle_ns = (uint64_t)(o->tfo_snap_idle_ms != 0 ? o->tfo_snap_idle_ms : 60000) *
	    1000000ULL;
	VERIFY0(pthread_mutex_init(&sd->sd_open_lock, NULL));
	VERIFY0(pthread_mutex_init(&sd->sd_lock, NULL));
	VERIFY0(pthread_cond_init(&sd->sd_cv, NULL));
	tarn_array_init(&sd->sd_inval, sizeof (tf_inval_t));
	t->tf_snapdir = sd;
}

void
tf_snapdir_start(tarn_fuse_t *t)
{
	tf_snapdir_t *sd = t->tf_snapdir;
	if (sd != NULL && tarn_thread_create(&sd->sd_thread, NULL, sd_thread_main, t) == 0)
		sd->sd_started = true;
}

void
tf_snapdir_stop(tarn_fuse_t *t)
{
	tf_snapdir_t *sd = t->tf_snapdir;
	if (sd == NULL || !sd->sd_started)
		return;
	pthread_mutex_lock(&sd->sd_lock);
	sd->sd_stop = true;
	pthread_cond_broadcast(&sd->sd_cv);
	pthread_mutex_unlock(&sd->sd_lock);
	pthread_join(sd->sd_thread, NULL);
	sd->sd_started = false;
}

void
tf_snapdir_fini(tarn_fuse_t *t)
{
	tf_snapdir_t *sd = t->tf_snapdir;
	if (sd == NULL)
		return;
	tf_snapdir_stop(t);
	pthread_mutex_lock(&sd->sd_lock);
	for (uint32_t i = 1; i < TF_SLOT_MAX; i++) {
		tf_snap_t *ts = sd->sd_slot[i];
		if (ts == NULL)
			continue;
		/* the session is over: nobody holds a slot, the kernel holds nothing */
		ts->ts_krefs = 0;
		ts->ts_opens = 0;
		sd_close(sd, ts);
		if (sd->sd_slot[i] != NULL) {
			tarn_free(sd->sd_slot[i]);
			sd->sd_slot[i] = NULL;
		}
	}
	pthread_mutex_unlock(&sd->sd_lock);
	tarn_array_fini(&sd->sd_inval);
	pthread_cond_destroy(&sd->sd_cv);
	pthread_mutex_destroy(&sd->sd_lock);
	pthread_mutex_destroy(&sd->sd_open_lock);
	tarn_free(sd);
	t->tf_snapdir = NULL;
}

/* ---- what the mounter calls ---- */

int
tarn_fuse_snapdir_release(tarn_fuse_t *t, const char *name)
{
	tf_snapdir_t *sd = t->tf_snapdir;
	if (sd == NULL)
		return (0);
	pthread_mutex_lock(&sd->sd_lock);
	int e = sd_detach(sd, name);
	pthread_mutex_unlock(&sd->sd_lock);
	return (e);
}

void
tarn_fuse_snapdir_visible(tarn_fuse_t *t, bool visible)
{
	if (t->tf_snapdir != NULL)
		atomic_store(&t->tf_snapdir->sd_visible, visible);
}

unsigned
tarn_fuse_snapdir_open_count(tarn_fuse_t *t)
{
	return (t->tf_snapdir != NULL ? atomic_load(&t->tf_snapdir->sd_nopen) : 0);
}
