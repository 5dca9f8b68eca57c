/*
 * host_mount.c — datasets as FUSE mounts inside tarnd: the mount table,
 * what `zfs mount` and `zfs unmount` do, and the hooks the other
 * verbs call (pool create/import/export/destroy, dataset destroy, rename,
 * set, inherit; daemon start and stop).
 *
 * Theory.  Only the daemon mounts: a mount is a posix_fs_t on the
 * dataset's object set, served by fuse/ (tarn_fuse_mount) from threads of
 * the daemon, so it lives exactly as long as the daemon holds the pool.
 * The table below lists every mount (dataset name, mountpoint, the posix
 * file system, the FUSE session, and a dsl handle of its own that answers
 * the space hook pfo_avail with dsl_dataset_avail, i.e. quotas).  Two
 * locks: mnt_op_lock serialises mounting and unmounting (whole verbs),
 * mnt_tbl_lock guards the list itself, so that the `mounted` property and
 * the busy check of destroy (dsl callbacks, set on every dsl handle a
 * command opens in the daemon) read it without waiting for a slow
 * unmount.  A pool's mounts are gone before it is exported or destroyed;
 * the daemon unmounts everything before it closes its pools.
 *
 * Mounting mirrors zfs: the mountpoint is made when missing (mkdir -p)
 * and must be empty; a dead FUSE mount left there by a killed daemon
 * (ENOTCONN) is detached first.  Children mount after their parents
 * (name order), unmount before them (reverse order).  Automatic mounting
 * (pool create/import, zfs create, daemon start) takes datasets with
 * canmount=on and a real mountpoint; TARN_AUTOMOUNT=0 in the daemon's
 * environment turns it off (the e2e tests that do not test mounting set
 * it, so that they never mount over host paths).
 *
 * The .zfs directory of each mount is the FUSE server's
 * (fuse/tarn_fuse_snapdir.c); what it needs of the pool it asks through
 * mnt_snap_ops below: list the snapshots, open and close one read-only
 * (dsl_snapshot_objset_open on the mount's own dsl handle, posix_fs_open
 * with pfo_readonly), and take, destroy and rename one for mkdir, rmdir
 * and mv under .zfs/snapshot (a dsl handle of the registry's, as a
 * command has: those hold the pool like `zfs snapshot` does).  The busy
 * check of a snapshot's destroy asks the mount to close the snapshot
 * when nothing is open in it (tarn_fuse_snapdir_release; EBUSY "dataset
 * is busy" otherwise), and so may a rename (host_mount_snap_release).
 * snapdir=hidden|visible follows in place.  TARN_SNAPDIR_IDLE_MS (for
 * tests) sets how long an unused snapshot stays open (60 s).
 */
#include "host_impl.h"
#include "tarn_fuse.h"

#include <dirent.h>
#include <pthread.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>

/*
 * Mount options given for one mount (zfs mount -o, mount(8) -o): while it
 * lasts they stand above the properties (zfs's "temporary" values).
 */
#define MNT_T_RO       0x01
#define MNT_T_NOEXEC   0x02
#define MNT_T_NOSUID   0x04
#define MNT_T_NODEV    0x08
#define MNT_T_NOATIME  0x10
#define MNT_T_RELATIME 0x20
#define MNT_T_NOXATTR  0x40
#define MNT_T_NOACL    0x80
typedef struct mnt_tmp {
	uint8_t mt_set;            /* MNT_T_* forced on */
	uint8_t mt_clr;            /* MNT_T_* forced off */
} mnt_tmp_t;

typedef struct mnt {
	struct mnt *m_next;
	char        m_name[DSL_NAME_MAX];
	char        m_mountpoint[DSL_MOUNTPOINT_MAX];
	spa_t      *m_spa;
	dsl_pool_t *m_dp;          /* own handle: the space hook */
	posix_fs_t *m_fs;
	tarn_fuse_t *m_fuse;
	tarn_fuse_opts_t m_fopts;  /* mounted with; flags as changed in place */
	bool        m_opened_ro;   /* the file system was opened read-only */
	bool        m_legacy;      /* mounted by mount(8) at a directory of its choosing */
	mnt_tmp_t   m_tmp;         /* options given for this mount */
	bool        m_swapping;    /* mnt_tbl_lock; its fs is being replaced (host_swap.c) */
} mnt_t;

static pthread_mutex_t mnt_op_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mnt_tbl_lock = PTHREAD_MUTEX_INITIALIZER;
static mnt_t *mnt_list;

/* Is name equal to or below top? */
static bool
mnt_in_tree(const char *name, const char *top)
{
	size_t n = strlen(top);
	return (strncmp(name, top, n) == 0 && (name[n] == '\0' || name[n] == '/'));
}

/*
 * Is m's mount still there?  A mount taken away without us (umount(8),
 * fusermount3 -u) ends its session; the table keeps it until mnt_op_enter
 * reaps it, and meanwhile it counts as not mounted.
 */
static bool
mnt_live(const mnt_t *m)
{
	return (!tarn_fuse_exited(m->m_fuse));
}

/* The live mount of dataset name; mnt_tbl_lock held. */
static mnt_t *
mnt_find(const char *name)
{
	for (mnt_t *m = mnt_list; m != NULL; m = m->m_next)
		if (strcmp(m->m_name, name) == 0 && mnt_live(m))
			return (m);
	return (NULL);
}

/* Is name's file system being replaced under its mount (the swap's own change)? */
static bool
mnt_swapping(const char *name)
{
	pthread_mutex_lock(&mnt_tbl_lock);
	mnt_t *m = mnt_find(name);
	bool r = m != NULL && m->m_swapping;
	pthread_mutex_unlock(&mnt_tbl_lock);
	return (r);
}

static bool
mnt_mounted_cb(void *arg, const char *name)
{
	pthread_mutex_lock(&mnt_tbl_lock);
	bool r = mnt_find(name) != NULL;
	pthread_mutex_unlock(&mnt_tbl_lock);
	return (r);
}

/*
 * zfs's `mounted` property: also no right after umount(8), which takes
 * the mount out of the table before its session notices (the session's
 * end is what frees the slot for a new mount: mnt_mounted_cb).
 */
static bool
mnt_prop_mounted_cb(void *arg, const char *name)
{
	pthread_mutex_lock(&mnt_tbl_lock);
	mnt_t *m = mnt_find(name);
	bool r = m != NULL && tarn_fuse_mounted(m->m_fuse);
	pthread_mutex_unlock(&mnt_tbl_lock);
	return (r);
}

/*
 * Snapshot fs@snap open under fs's .zfs/snapshot: close it unless files
 * are open there (EBUSY).  Every mount of fs, live or ending.
 */
static int
mnt_snap_release(const char *name)
{
	const char *at = strchr(name, '@');
	char fs[DSL_NAME_MAX];
	int e = 0;
	if (at == NULL || (size_t)(at - name) >= sizeof (fs))
		return (0);
	(void) snprintf(fs, sizeof (fs), "%.*s", (int)(at - name), name);
	pthread_mutex_lock(&mnt_tbl_lock);
	for (mnt_t *m = mnt_list; m != NULL && e == 0; m = m->m_next)
		if (strcmp(m->m_name, fs) == 0)
			e = tarn_fuse_snapdir_release(m->m_fuse, at + 1);
	pthread_mutex_unlock(&mnt_tbl_lock);
	return (e);
}

int
host_mount_snap_release(const char *snap)
{
	return (host_daemon_mode() ? mnt_snap_release(snap) : 0);
}

static int
mnt_busy_cb(void *arg, const char *name, char *err, size_t errlen)
{
	if (strchr(name, '@') != NULL) {
		int e = mnt_snap_release(name);
		if (e != 0)
			(void) snprintf(err, errlen, "dataset is busy");
		return (e);
	}
	if (!mnt_mounted_cb(arg, name) || mnt_swapping(name))
		return (0);
	(void) snprintf(err, errlen, "filesystem is busy (mounted); use -f to "
	    "unmount it first");
	return (SET_ERROR(EBUSY));
}

void
host_mount_attach(struct dsl_pool *dp)
{
	if (!host_daemon_mode() || dp == NULL)
		return;
	dsl_pool_set_busy_fn(dp, mnt_busy_cb, NULL);
	dsl_pool_set_mounted_fn(dp, mnt_prop_mounted_cb, NULL);
}

bool
host_mount_auto(void)
{
	const char *e = getenv("TARN_AUTOMOUNT");
	return (host_daemon_mode() && (e == NULL || strcmp(e, "0") != 0));
}

/*
 * The space hook (posix_space_check, statfs): the dataset's available
 * space and whether a quota bounds it.  Asked before every write; the
 * dsl handle keeps the figures it comes from until the next txg sync.
 */
static uint64_t
mnt_avail(void *arg, bool *quota)
{
	mnt_t *m = arg;
	return (dsl_dataset_avail(m->m_dp, m->m_name, quota));
}

/* ---- the mountpoint directory ---- */

static int
mnt_mkdir_p(const char *path)
{
	char buf[DSL_MOUNTPOINT_MAX];
	(void) snprintf(buf, sizeof (buf), "%s", path);
	for (char *p = buf + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return (errno);
		*p = c;
		if (c == '\0')
			break;
	}
	return (0);
}

/* A FUSE mount whose server died answers ENOTCONN: detach it. */
static void
mnt_clear_stale(const char *mp)
{
	struct statfs st;       /* stat may be answered from the kernel's cache */
	if (statfs(mp, &st) == 0 || errno != ENOTCONN)
		return;
	if (umount2(mp, MNT_DETACH) == 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		execlp("fusermount3", "fusermount3", "-uz", mp, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		(void) waitpid(pid, NULL, 0);
}

/*
 * Make mp ready to mount on: a stale mount cleared, created, empty.  A
 * legacy mount's directory is mount(8)'s: it must exist, and may have
 * files (they are hidden while mounted, as mount(8) hides them).
 */
static int
mnt_prepare_dir(const char *mp, bool legacy, char *err, size_t errlen)
{
	mnt_clear_stale(mp);
	if (legacy) {
		struct stat st;
		int e = stat(mp, &st) != 0 ? errno : !S_ISDIR(st.st_mode) ? SET_ERROR(ENOTDIR) : 0;
		if (e != 0)
			(void) snprintf(err, errlen, "mount point '%s': %s", mp, tarn_strerror(e));
		return (e);
	}
	int e = mnt_mkdir_p(mp);
	if (e != 0) {
		(void) snprintf(err, errlen, "cannot create mountpoint '%s': %s", mp,
		    tarn_strerror(e));
		return (e);
	}
	DIR *d = opendir(mp);
	if (d == NULL) {
		e = errno;
		(void) snprintf(err, errlen, "cannot open mountpoint '%s': %s", mp,
		    tarn_strerror(e));
		return (e);
	}
	struct dirent *de;
	bool empty = true;
	while (empty && (de = readdir(d)) != NULL)
		empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
	(void) closedir(d);
	if (!empty) {
		(void) snprintf(err, errlen, "directory is not empty");
		return (SET_ERROR(EBUSY));
	}
	return (0);
}

/* ---- options from properties ---- */

static uint64_t
mnt_prop(dsl_pool_t *dp, const char *name, int prop, dsl_prop_val_t *v)
{
	char err[256];
	if (dsl_prop_get(dp, name, prop, true, v, err, sizeof (err)) != 0)
		return (0);
	return (v->dpv_num);
}

/* Is name's space capped by its quota or refquota, or an ancestor's quota? */
static bool
mnt_quota_capped(dsl_pool_t *dp, const char *name, dsl_prop_val_t *v)
{
	if (mnt_prop(dp, name, DSL_PROP_REFQUOTA, v) != 0)
		return (true);
	char anc[DSL_NAME_MAX];
	(void) snprintf(anc, sizeof (anc), "%s", name);
	for (;;) {
		if (mnt_prop(dp, anc, DSL_PROP_QUOTA, v) != 0)
			return (true);
		char *slash = strrchr(anc, '/');
		if (slash == NULL)
			return (false);
		*slash = '\0';
	}
}

/* An on/off property as tmp leaves it: bit forced on (true) or off, else the property. */
static bool
mnt_tmp_bit(const mnt_tmp_t *tmp, uint8_t bit, bool prop)
{
	if (tmp != NULL && (tmp->mt_set & bit))
		return (true);
	if (tmp != NULL && (tmp->mt_clr & bit))
		return (false);
	return (prop);
}

/* The options of a mount of name: its properties, under tmp (may be NULL). */
static void
mnt_opts(dsl_pool_t *dp, const char *name, const mnt_tmp_t *tmp, posix_fs_opts_t *po,
    tarn_fuse_opts_t *fo)
{
	dsl_prop_val_t *v = tarn_alloc(sizeof (*v));

	posix_fs_opts_default(po);
	tarn_fuse_opts_init(fo);
	po->pfo_readonly = mnt_tmp_bit(tmp, MNT_T_RO,
	    mnt_prop(dp, name, DSL_PROP_READONLY, v) == DSL_ON) ||
	    spa_readonly(dsl_pool_spa(dp));
	if (mnt_tmp_bit(tmp, MNT_T_NOATIME, mnt_prop(dp, name, DSL_PROP_ATIME, v) == DSL_OFF))
		po->pfo_atime = POSIX_ATIME_OFF;
	else if (mnt_tmp_bit(tmp, MNT_T_RELATIME,
	    mnt_prop(dp, name, DSL_PROP_RELATIME, v) == DSL_ON))
		po->pfo_atime = POSIX_ATIME_RELATIME;
	else
		po->pfo_atime = POSIX_ATIME_ON;
	fo->tfo_atime = po->pfo_atime == POSIX_ATIME_OFF ? TARN_FUSE_NOATIME :
	    po->pfo_atime == POSIX_ATIME_ON ? TARN_FUSE_STRICTATIME : TARN_FUSE_RELATIME;
	uint64_t rs = mnt_prop(dp, name, DSL_PROP_RECORDSIZE, v);
	if (rs != 0)
		po->pfo_recordsize = (uint32_t)rs;
	uint64_t xa = mnt_prop(dp, name, DSL_PROP_XATTR, v);
	po->pfo_xattr = !mnt_tmp_bit(tmp, MNT_T_NOXATTR, xa == DSL_OFF);
	po->pfo_xattr_dir = xa == DSL_XATTR_DIR;
	po->pfo_acl = !mnt_tmp_bit(tmp, MNT_T_NOACL,
	    mnt_prop(dp, name, DSL_PROP_ACLTYPE, v) == DSL_ACLTYPE_OFF);
	fo->tfo_acl = po->pfo_acl;
	po->pfo_utf8only = mnt_prop(dp, name, DSL_PROP_UTF8ONLY, v) == DSL_ON;
	uint64_t sync = mnt_prop(dp, name, DSL_PROP_SYNC, v);
	po->pfo_sync = sync == DSL_SYNC_ALWAYS ? POSIX_SYNC_ALWAYS :
	    sync == DSL_SYNC_DISABLED ? POSIX_SYNC_DISABLED : POSIX_SYNC_STANDARD;
	/*
	 * The space hook (dsl_dataset_avail) sees what has synced; the POSIX
	 * layer's own count enforces the dataset's quota at once.
	 */
	uint64_t q = mnt_prop(dp, name, DSL_PROP_QUOTA, v);
	uint64_t rq = mnt_prop(dp, name, DSL_PROP_REFQUOTA, v);
	po->pfo_quota = q == 0 ? rq : rq == 0 ? q : MIN(q, rq);
	fo->tfo_readonly = po->pfo_readonly;
	/*
	 * Without the writeback cache each write reaches us before write(2)
	 * returns: sync=always needs that, and so does a quota, for EDQUOT
	 * to come from write(2) as on zfs.  With the cache it would come at
	 * write-back, too late for write(2), and close can only say ENOSPC
	 * or EIO (the kernel keeps no other errno for it): a cp into a full
	 * dataset would end in "Input/output error".
	 */
	if (fo->tfo_readonly || po->pfo_sync == POSIX_SYNC_ALWAYS ||
	    mnt_quota_capped(dp, name, v))
		fo->tfo_writeback = false;
	fo->tfo_allow_other = true;
	fo->tfo_nosuid = mnt_tmp_bit(tmp, MNT_T_NOSUID,
	    mnt_prop(dp, name, DSL_PROP_SETUID, v) == DSL_OFF);
	fo->tfo_nodev = mnt_tmp_bit(tmp, MNT_T_NODEV,
	    mnt_prop(dp, name, DSL_PROP_DEVICES, v) == DSL_OFF);
	fo->tfo_noexec = mnt_tmp_bit(tmp, MNT_T_NOEXEC,
	    mnt_prop(dp, name, DSL_PROP_EXEC, v) == DSL_OFF);
	tarn_free(v);
}

/* ---- .zfs: what the FUSE server asks (tarn_fuse_snap_ops_t) ---- */

static int
mnt_snap_list(void *arg, tarn_fuse_snap_ent_t **ents, size_t *np)
{
	mnt_t *m = arg;
	dsl_snap_info_t *si = NULL;
	int n = 0;
	char err[256];
	int e = dsl_snapshot_list(m->m_dp, m->m_name, &si, &n, err, sizeof (err));
	if (e == ENOTSUP)       /* a pool without snapshots: none to list */
		e = n = 0;
	if (e != 0)
		return (e);
	tarn_fuse_snap_ent_t *v = tarn_alloc(sizeof (*v) * (size_t)(n + 1));
	for (int i = 0; i < n; i++) {
		const char *at = strchr(si[i].dsi_name, '@');
		(void) snprintf(v[i].tse_name, sizeof (v[i].tse_name), "%s",
		    at != NULL ? at + 1 : si[i].dsi_name);
		v[i].tse_id = si[i].dsi_obj;
	}
	tarn_free(si);
	*ents = v;
	*np = (size_t)n;
	return (0);
}

/* "fs@snap" for snapshot snap of m's file system; ENAMETOOLONG. */
static int
mnt_snap_name(const mnt_t *m, const char *snap, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s@%s", m->m_name, snap);
	return (n < 0 || (size_t)n >= len ? SET_ERROR(ENAMETOOLONG) : 0);
}

static int
mnt_snap_open(void *arg, const char *snap, posix_fs_t **fsp, void **handle, uint64_t *id)
{
	mnt_t *m = arg;
	char name[DSL_NAME_MAX], err[256];
	dsl_snap_info_t *si = tarn_alloc(sizeof (*si));
	objset_t *os = NULL;
	int e = mnt_snap_name(m, snap, name, sizeof (name));
	if (e == 0)
		e = dsl_snapshot_info(m->m_dp, name, si, err, sizeof (err));
	if (e == 0)
		e = dsl_snapshot_objset_open(m->m_dp, name, &os, err, sizeof (err));
	if (e == 0) {
		posix_fs_opts_t po;
		posix_fs_opts_default(&po);
		po.pfo_readonly = true;
		po.pfo_atime = POSIX_ATIME_OFF;
		po.pfo_acl = m->m_fopts.tfo_acl;        /* as the kernel checks them */
		po.pfo_xattr_inline = (spa_features(m->m_spa) & SPA_FEATURE_XATTR_INLINE) != 0;
		e = posix_fs_open(os, &po, fsp);
		if (e != 0)
			dsl_snapshot_objset_close(m->m_dp, os);
	}
	*id = si->dsi_obj;
	*handle = os;
	tarn_free(si);
	/* a snapshot that is not there is the only expected failure */
	return (e == ENOTSUP ? SET_ERROR(ENOENT) : e);
}

static void
mnt_snap_close(void *arg, posix_fs_t *fs, void *handle)
{
	mnt_t *m = arg;
	posix_fs_close(fs);
	dsl_snapshot_objset_close(m->m_dp, handle);
}

/*
 * Run one snapshot change for mkdir/rmdir/mv under .zfs/snapshot with a
 * dsl handle from the registry (the pool held for a change, as a
 * command holds it); failures go to the daemon's log, the errno to the
 * program.
 */
typedef enum mnt_snap_verb { MNT_SNAP_CREATE, MNT_SNAP_DESTROY, MNT_SNAP_RENAME } mnt_snap_verb_t;

static int
mnt_snap_change(mnt_t *m, mnt_snap_verb_t verb, const char *snap, const char *to)
{
	static const char *const verbs[] = { "snapshot", "destroy", "rename" };
	char name[DSL_NAME_MAX], newname[DSL_NAME_MAX], err[512] = "";
	host_fs_t fs;
	int e = mnt_snap_name(m, snap, name, sizeof (name));
	if (e == 0 && to != NULL)
		e = mnt_snap_name(m, to, newname, sizeof (newname));
	if (e == 0 && host_fs_open(verbs[verb], m->m_name, false, &fs) != 0)
		e = SET_ERROR(EIO);
	if (e != 0)
		return (e);
	const char *names[1] = { name };
	switch (verb) {
	case MNT_SNAP_CREATE:
		e = dsl_snapshot_create(fs.hf_dp, names, 1, false, NULL, 0, err, sizeof (err));
		break;
	case MNT_SNAP_DESTROY:
		e = dsl_snapshot_destroy(fs.hf_dp, names, 1, 0, NULL, NULL, NULL, err,
		    sizeof (err));
		break;
	case MNT_SNAP_RENAME:
		e = dsl_snapshot_rename(fs.hf_dp, name, newname, false, err, sizeof (err));
		break;
	}
	host_fs_close(&fs);
	if (e != 0)
		tarn_dprintf("cannot %s '%s' (.zfs/snapshot): %s\n", verbs[verb], name,
		    err[0] != '\0' ? err : tarn_strerror(e));
	return (e);
}

static int
mnt_snap_create(void *arg, const char *snap)
{
	return (mnt_snap_change(arg, MNT_SNAP_CREATE, snap, NULL));
}

static int
mnt_snap_destroy(void *arg, const char *snap)
{
	return (mnt_snap_change(arg, MNT_SNAP_DESTROY, snap, NULL));
}

static int
mnt_snap_rename(void *arg, const char *from, const char *to)
{
	return (mnt_snap_change(arg, MNT_SNAP_RENAME, from, to));
}

static const tarn_fuse_snap_ops_t mnt_snap_ops = {
	.tso_list = mnt_snap_list,
	.tso_open = mnt_snap_open,
	.tso_close = mnt_snap_close,
	.tso_create = mnt_snap_create,
	.tso_destroy = mnt_snap_destroy,
	.tso_rename = mnt_snap_rename,
};

/*
 * snapdir=visible?  The property comes with the snapshot work; until its
 * number is in this build's table it is asked by name (hidden without).
 * TODO(snapdir): DSL_PROP_SNAPDIR once it is on main.
 */
static bool
mnt_snapdir_visible(dsl_pool_t *dp, const char *name)
{
	int p = dsl_prop_lookup("snapdir");
	if (p < 0)
		return (false);
	dsl_prop_val_t *v = tarn_alloc(sizeof (*v));
	char err[256];
	bool vis = dsl_prop_get(dp, name, p, false, v, err, sizeof (err)) == 0 &&
	    strcmp(v->dpv_str, "visible") == 0;
	tarn_free(v);
	return (vis);
}

/* The daemon's idle time of snapshots under .zfs (TARN_SNAPDIR_IDLE_MS; 0: default). */
static unsigned
mnt_snap_idle_ms(void)
{
	const char *e = getenv("TARN_SNAPDIR_IDLE_MS");
	char *end;
	unsigned long v = e != NULL ? strtoul(e, &end, 10) : 0;
	return (e != NULL && *end == '\0' && v > 0 && v < 24UL * 3600 * 1000 ? (unsigned)v : 0);
}

/* ---- mounting and unmounting one dataset (mnt_op_lock held) ---- */

/*
 * The file system of m's dataset as m mounts it (its properties under the
 * options given for it; fo: the FUSE options they make): for a mount, and
 * again after its object set was replaced (host_swap.c).
 */
static int
mnt_fs_open(dsl_pool_t *dp, mnt_t *m, tarn_fuse_opts_t *fo, posix_fs_t **fsp)
{
	posix_fs_opts_t po;
	objset_t *os;
	mnt_opts(dp, m->m_name, &m->m_tmp, &po, fo);
	fo->tfo_fsname = m->m_name;
	m->m_opened_ro = po.pfo_readonly;
	po.pfo_avail = mnt_avail;
	po.pfo_avail_arg = m;
	int e = dsl_dataset_objset(dp, m->m_name, &os);
	if (e != 0)
		return (e);
	po.pfo_zil = spa_objset_zil(m->m_spa, os);
	po.pfo_xattr_inline = (spa_features(m->m_spa) & SPA_FEATURE_XATTR_INLINE) != 0;
	return (posix_fs_open(os, &po, fsp));
}

/* How mnt_one mounts. */
typedef enum mnt_how {
	MNT_ASKED,      /* zfs mount NAME: errors printed */
	MNT_AUTO,       /* zfs mount -a: skip what it skips, quietly */
	MNT_AGAIN,      /* after a remount's unmount: as MNT_AUTO, but canmount=noauto too */
} mnt_how_t;

/*
 * Mount name at its mountpoint, or (dir not NULL) at dir for mount(8),
 * which its mountpoint must leave to it (legacy); tmp (may be NULL): the
 * options given for this mount.  MNT_AUTO quietly skips what zfs mount
 * -a skips (mounted, canmount off/noauto, mountpoint none/legacy).
 * Errors are printed as "cannot mount 'name': ..." and returned.
 */
static int
mnt_one(dsl_pool_t *dp, const char *name, const char *dir, const mnt_tmp_t *tmp,
    mnt_how_t how)
{
	bool automatic = how != MNT_ASKED;
	dsl_prop_val_t *v = tarn_alloc(sizeof (*v));
	char err[DSL_MOUNTPOINT_MAX + 128] = "";
	int e = 0;

	(void) mnt_prop(dp, name, DSL_PROP_MOUNTPOINT, v);
	bool legacy = strcmp(v->dpv_str, "legacy") == 0;
	if (dir != NULL && !legacy) {
		if (!automatic)
			e = host_report("mount", name, EINVAL, "not a legacy mountpoint: use "
			    "'zfs mount', or 'zfs set mountpoint=legacy' first");
		goto out;
	}
	if (mnt_mounted_cb(NULL, name)) {
		if (!automatic)
			e = host_report("mount", name, EBUSY, "filesystem already mounted");
		goto out;
	}
	uint64_t cm = mnt_prop(dp, name, DSL_PROP_CANMOUNT, v);
	if (cm == DSL_CANMOUNT_OFF || (how == MNT_AUTO && dir == NULL &&
	    cm == DSL_CANMOUNT_NOAUTO)) {
		if (!automatic)
			e = host_report("mount", name, EINVAL,
			    "'canmount' property is set to 'off'");
		goto out;
	}
	(void) mnt_prop(dp, name, DSL_PROP_MOUNTPOINT, v);
	if (dir == NULL && v->dpv_str[0] != '/') {
		if (!automatic)
			e = host_report("mount", name, EINVAL, legacy ?
			    "legacy mountpoint; use mount(8): mount -t tarn DATASET DIR" :
			    "no mountpoint set");
		goto out;
	}
	if (dir != NULL && dir[0] != '/') {
		e = host_report("mount", name, EINVAL, "the directory must be an absolute path");
		goto out;
	}
	mnt_t *m = tarn_alloc(sizeof (*m));
	(void) snprintf(m->m_name, sizeof (m->m_name), "%s", name);
	(void) snprintf(m->m_mountpoint, sizeof (m->m_mountpoint), "%.*s",
	    (int)sizeof (m->m_mountpoint) - 1, dir != NULL ? dir : v->dpv_str);
	m->m_legacy = dir != NULL;
	if (tmp != NULL)
		m->m_tmp = *tmp;
	m->m_spa = dsl_pool_spa(dp);
	if ((e = mnt_prepare_dir(m->m_mountpoint, m->m_legacy, err, sizeof (err))) == 0 &&
	    (e = dsl_pool_open_reader(m->m_spa, &m->m_dp)) == 0 &&
	    (e = mnt_fs_open(dp, m, &m->m_fopts, &m->m_fs)) == 0) {
		m->m_fopts.tfo_snap_ops = &mnt_snap_ops;
		m->m_fopts.tfo_snap_arg = m;
		m->m_fopts.tfo_snapdir_visible = mnt_snapdir_visible(dp, name);
		m->m_fopts.tfo_snap_idle_ms = mnt_snap_idle_ms();
		e = tarn_fuse_mount(m->m_fs, m->m_mountpoint, &m->m_fopts, &m->m_fuse);
	}
	if (e != 0) {
		if (m->m_fs != NULL)
			posix_fs_close(m->m_fs);
		dsl_pool_close(m->m_dp);
		tarn_free(m);
		if (e == ENODEV)
			(void) snprintf(err, sizeof (err), "/dev/fuse is missing");
		e = host_report("mount", name, e, err[0] != '\0' ? err : NULL);
		goto out;
	}
	pthread_mutex_lock(&mnt_tbl_lock);
	m->m_next = mnt_list;
	mnt_list = m;
	pthread_mutex_unlock(&mnt_tbl_lock);
out:
	tarn_free(v);
	return (e);
}

/* Unmount m (in the table); 0 or EBUSY (still mounted then). */
static int
mnt_unmount_one(mnt_t *m, bool force)
{
	int e = tarn_fuse_unmount(m->m_fuse, force);
	if (e != 0)
		return (e);
	pthread_mutex_lock(&mnt_tbl_lock);
	for (mnt_t **pp = &mnt_list; *pp != NULL; pp = &(*pp)->m_next) {
		if (*pp == m) {
			*pp = m->m_next;
			break;
		}
	}
	pthread_mutex_unlock(&mnt_tbl_lock);
	if (m->m_fs != NULL && !m->m_opened_ro)    /* NULL: a swap found nothing to serve */
		(void) posix_fs_sync(m->m_fs);
	if (m->m_fs != NULL)
		posix_fs_close(m->m_fs);
	dsl_pool_close(m->m_dp);
	tarn_free(m);
	return (0);
}

static int
mnt_cmp_desc(const void *a, const void *b)
{
	return (-strcmp((*(mnt_t *const *)a)->m_name, (*(mnt_t *const *)b)->m_name));
}

/*
 * The mounts for which match(m, key) holds, children before parents.
 * Returns how many (*vp: tarn_free it).
 */
static int
mnt_collect(bool (*match)(const mnt_t *, const void *), const void *key, mnt_t ***vp)
{
	int n = 0;
	pthread_mutex_lock(&mnt_tbl_lock);
	for (mnt_t *m = mnt_list; m != NULL; m = m->m_next)
		n++;
	mnt_t **v = tarn_alloc(sizeof (*v) * (size_t)(n + 1));
	n = 0;
	for (mnt_t *m = mnt_list; m != NULL; m = m->m_next)
		if (match(m, key))
			v[n++] = m;
	pthread_mutex_unlock(&mnt_tbl_lock);
	qsort(v, (size_t)n, sizeof (*v), mnt_cmp_desc);
	*vp = v;
	return (n);
}

static bool
match_tree(const mnt_t *m, const void *key)
{
	return (mnt_in_tree(m->m_name, key));
}

static bool
match_all(const mnt_t *m, const void *key)
{
	return (true);
}

static bool
match_gone(const mnt_t *m, const void *key)
{
	return (!mnt_live(m));
}

typedef struct mnt_below_key {
	const char *mbk_dir;
	spa_t      *mbk_spa;
} mnt_below_key_t;

/*
 * A live mount of pool mbk_spa whose mountpoint lies below directory
 * mbk_dir (nested in the mount there).
 */
static bool
match_below(const mnt_t *m, const void *key)
{
	const mnt_below_key_t *k = key;
	size_t n = strlen(k->mbk_dir);
	while (n > 0 && k->mbk_dir[n - 1] == '/')
		n--;
	return (mnt_live(m) && m->m_spa == k->mbk_spa &&
	    strncmp(m->m_mountpoint, k->mbk_dir, n) == 0 &&
	    m->m_mountpoint[n] == '/' && m->m_mountpoint[n + 1] != '\0');
}

/* Deeper mountpoints first (a mount with mounts on it cannot go before them). */
static int
mnt_cmp_mp_desc(const void *a, const void *b)
{
	return (-strcmp((*(mnt_t *const *)a)->m_mountpoint, (*(mnt_t *const *)b)->m_mountpoint));
}

/* Mounts taken down for a while, children first: enough to mount them again. */
typedef struct mnt_gone {
	char      mg_name[DSL_NAME_MAX];
	char      mg_dir[DSL_MOUNTPOINT_MAX];   /* a legacy mount's directory, else "" */
	mnt_tmp_t mg_tmp;
} mnt_gone_t;

struct mnt_names {
	mnt_gone_t *mn_v;
	int         mn_n;
};

/*
 * Unmount what match selects, children first, up to the first busy one;
 * errors printed as "cannot VERB 'NAME': ..." (verb NULL: quietly).
 * down (may be NULL): gets the names of those that went down.
 */
static int
mnt_unmount_matching(bool (*match)(const mnt_t *, const void *), const void *key,
    bool force, const char *verb, const char *name, struct mnt_names **down)
{
	mnt_t **v;
	int n = mnt_collect(match, key, &v), r = 0;
	if (match == match_below)       /* nested by path, not by name */
		qsort(v, (size_t)n, sizeof (*v), mnt_cmp_mp_desc);
	if (down != NULL) {
		*down = tarn_alloc(sizeof (**down));
		(*down)->mn_v = tarn_alloc(sizeof (*(*down)->mn_v) * (size_t)MAX(n, 1));
	}
	for (int i = 0; i < n && r == 0; i++) {
		if (down != NULL) {
			mnt_gone_t *g = &(*down)->mn_v[(*down)->mn_n];
			(void) snprintf(g->mg_name, sizeof (g->mg_name), "%s", v[i]->m_name);
			(void) snprintf(g->mg_dir, sizeof (g->mg_dir), "%s",
			    v[i]->m_legacy ? v[i]->m_mountpoint : "");
			g->mg_tmp = v[i]->m_tmp;
		}
		int e = mnt_unmount_one(v[i], force);
		if (e == 0 && down != NULL)
			(*down)->mn_n++;
		if (e != 0 && verb == NULL) {
			r = e;
		} else if (e != 0) {
			char msg[DSL_MOUNTPOINT_MAX + 64];
			/* set and inherit have no -f: there the change is refused */
			(void) snprintf(msg, sizeof (msg), "'%s' is busy (files are open "
			    "there)%s", v[i]->m_mountpoint,
			    force || strcmp(verb, "remount") == 0 ? "" : "; use -f");
			r = host_report(verb, name, e, msg);
		}
	}
	tarn_free(v);
	return (r);
}

/*
 * Mount again what went down (parents first), quietly, with the options it
 * was given; a legacy mount at its directory while its mountpoint stays
 * legacy.  Frees down.
 */
static void
mnt_up(dsl_pool_t *dp, struct mnt_names *down)
{
	if (down == NULL)
		return;
	for (int i = down->mn_n - 1; i >= 0; i--) {
		const mnt_gone_t *g = &down->mn_v[i];
		if (g->mg_dir[0] == '\0' ||
		    mnt_one(dp, g->mg_name, g->mg_dir, &g->mg_tmp, MNT_AGAIN) != 0 ||
		    !mnt_mounted_cb(NULL, g->mg_name))
			(void) mnt_one(dp, g->mg_name, NULL, &g->mg_tmp, MNT_AGAIN);
	}
	tarn_free(down->mn_v);
	tarn_free(down);
}

/*
 * Take mnt_op_lock, and first tidy away the mounts unmounted without us:
 * their sessions ended, so mnt_unmount_one only ends the threads, syncs
 * and closes, and the dataset can be mounted again.
 */
static void
mnt_op_enter(void)
{
	pthread_mutex_lock(&mnt_op_lock);
	/*
	 * A mount umount(8) just took out of the mount table: its session
	 * ends as soon as its threads see the connection gone; wait for that
	 * (bounded), so that it is reaped now, not seen as still mounted.
	 */
	pthread_mutex_lock(&mnt_tbl_lock);
	int n = 0;
	for (mnt_t *m = mnt_list; m != NULL; m = m->m_next)
		n++;
	tarn_fuse_t **ending = tarn_alloc(sizeof (tarn_fuse_t *) * (size_t)MAX(n, 1));
	int k = 0;
	for (mnt_t *m = mnt_list; m != NULL; m = m->m_next)
		if (mnt_live(m) && !tarn_fuse_mounted(m->m_fuse))
			ending[k++] = m->m_fuse;
	pthread_mutex_unlock(&mnt_tbl_lock);
	for (int i = 0; i < k; i++)     /* entries stay: only op-lock holders free them */
		(void) tarn_fuse_wait(ending[i], 5000);
	tarn_free(ending);
	(void) mnt_unmount_matching(match_gone, NULL, false, NULL, NULL, NULL);
}

/* ---- what other verbs call ---- */

typedef struct mnt_iter {
	dsl_pool_t *mi_dp;
	bool        mi_auto;
	const mnt_tmp_t *mi_tmp;        /* zfs mount -o OPTS -a: for every mount; or NULL */
	int         mi_ret;
} mnt_iter_t;

static int
mnt_iter_one(void *arg, const char *name, int depth)
{
	mnt_iter_t *mi = arg;
	if (mnt_one(mi->mi_dp, name, NULL, mi->mi_tmp,
	    mi->mi_auto ? MNT_AUTO : MNT_ASKED) != 0)
		mi->mi_ret = HOST_FAILED;
	return (0);
}

static int
mnt_tree(dsl_pool_t *dp, const char *name, bool automatic, const mnt_tmp_t *tmp)
{
	if (!host_daemon_mode())
		return (0);
	mnt_iter_t mi = { dp, automatic, tmp, 0 };
	mnt_op_enter();
	(void) dsl_dataset_iter(dp, name, -1, mnt_iter_one, &mi);
	pthread_mutex_unlock(&mnt_op_lock);
	return (mi.mi_ret);
}

int
host_mount_tree(struct dsl_pool *dp, const char *name, bool automatic)
{
	return (mnt_tree(dp, name, automatic, NULL));
}

int
host_unmount_tree(const char *name, bool force, const char *verb)
{
	if (!host_daemon_mode())
		return (0);
	mnt_op_enter();
	int r = mnt_unmount_matching(match_tree, name, force, verb, name, NULL);
	pthread_mutex_unlock(&mnt_op_lock);
	return (r);
}

bool
host_mount_obj_path(spa_t *spa, const char *oskey, uint64_t obj, char *out, size_t len)
{
	bool found = false;
	char key[64], *rel = tarn_alloc(PATH_MAX);
	pthread_mutex_lock(&mnt_tbl_lock);
	for (mnt_t *m = mnt_list; m != NULL && !found; m = m->m_next) {
		if (strcmp(spa_name(m->m_spa), spa_name(spa)) != 0 ||
		    dsl_dataset_oskey(m->m_dp, m->m_name, key, sizeof (key)) != 0 ||
		    strcmp(key, oskey) != 0 || m->m_fs == NULL ||
		    posix_ino_path(m->m_fs, obj, rel, PATH_MAX) != 0)
			continue;
		bool top = strcmp(m->m_mountpoint, "/") == 0;
		(void) snprintf(out, len, "%s%s", top ? "" : m->m_mountpoint,
		    strcmp(rel, "/") == 0 && !top ? "" : rel);
		found = true;
	}
	pthread_mutex_unlock(&mnt_tbl_lock);
	tarn_free(rel);
	return (found);
}

bool
host_mount_temp(const char *name, int prop, struct dsl_prop_val *v)
{
	static const struct { int prop; uint8_t bit; bool on_when_set; } map[] = {
		{ DSL_PROP_READONLY, MNT_T_RO, true }, { DSL_PROP_EXEC, MNT_T_NOEXEC, false },
		{ DSL_PROP_SETUID, MNT_T_NOSUID, false }, { DSL_PROP_DEVICES, MNT_T_NODEV, false },
		{ DSL_PROP_ATIME, MNT_T_NOATIME, false }, { DSL_PROP_RELATIME, MNT_T_RELATIME, true },
		{ DSL_PROP_XATTR, MNT_T_NOXATTR, false }, { DSL_PROP_ACLTYPE, MNT_T_NOACL, false },
	};
	bool r = false;
	pthread_mutex_lock(&mnt_tbl_lock);
	const mnt_t *m = mnt_find(name);
	for (size_t i = 0; m != NULL && i < ARRAY_SIZE(map); i++) {
		uint8_t bit = map[i].bit;
		if (map[i].prop != prop || !((m->m_tmp.mt_set | m->m_tmp.mt_clr) & bit))
			continue;
		bool on = (m->m_tmp.mt_set & bit) ? map[i].on_when_set : !map[i].on_when_set;
		bool acl = prop == DSL_PROP_ACLTYPE;
		v->dpv_num = acl ? (on ? DSL_ACLTYPE_POSIX : DSL_ACLTYPE_OFF) : on ? DSL_ON : DSL_OFF;
		(void) snprintf(v->dpv_str, sizeof (v->dpv_str), "%s",
		    !on ? "off" : acl ? "posix" : "on");
		v->dpv_source = DSL_SRC_TEMPORARY;
		r = true;
	}
	pthread_mutex_unlock(&mnt_tbl_lock);
	return (r);
}

bool
host_mount_any(const char *name)
{
	bool r = false;
	pthread_mutex_lock(&mnt_tbl_lock);
	for (mnt_t *m = mnt_list; m != NULL && !r; m = m->m_next)
		r = mnt_in_tree(m->m_name, name) && mnt_live(m);
	pthread_mutex_unlock(&mnt_tbl_lock);
	return (r);
}

/* Mount the datasets of a pool just created or imported (automatic). */
int
host_mount_pool(const char *pool)
{
	spa_t *spa;
	dsl_pool_t *dp;
	char err[512];
	int r = 0, e;

	if (!host_mount_auto() || host_pool_open(pool, 0, &spa, err, sizeof (err)) != 0)
		return (0);
	if ((e = dsl_pool_open(spa, host_fs_init, NULL, &dp)) == 0) {
		host_mount_attach(dp);
		r = host_mount_tree(dp, pool, true);
		dsl_pool_close(dp);
	} else if (host_daemon_mode()) {
		(void) snprintf(err, sizeof (err), "cannot read its datasets: %s",
		    tarn_strerror(e));
		r = host_report("mount", pool, e, err);
	}
	host_pool_close(spa);
	return (r);
}

int
host_mount_down(struct dsl_pool *dp, const char *name, bool force, const char *verb,
    struct mnt_names **down)
{
	*down = NULL;
	if (!host_daemon_mode() || !host_mount_any(name))
		return (0);
	mnt_op_enter();
	int r = mnt_unmount_matching(match_tree, name, force, verb, name, down);
	if (r != 0) {
		mnt_up(dp, *down);              /* a busy one stopped it: back as it was */
		*down = NULL;
	}
	pthread_mutex_unlock(&mnt_op_lock);
	return (r);
}

void
host_mount_up(struct dsl_pool *dp, const char *from, const char *to, const char *top,
    struct mnt_names *down)
{
	if (!host_daemon_mode())
		return;
	mnt_op_enter();
	size_t fl = strlen(from);
	for (int i = 0; to != NULL && down != NULL && i < down->mn_n; i++) {
		mnt_gone_t *g = &down->mn_v[i];
		char renamed[DSL_NAME_MAX];
		(void) snprintf(renamed, sizeof (renamed), "%s%s", to, g->mg_name + fl);
		(void) snprintf(g->mg_name, sizeof (g->mg_name), "%s", renamed);
	}
	/* the parents rename -p made (top and below it, above `to`), as create -p */
	if (to != NULL && top != NULL && host_mount_auto()) {
		char p[DSL_NAME_MAX];
		(void) snprintf(p, sizeof (p), "%s", to);
		char *slash = p + strlen(top);
		while (*slash == '/') {
			*slash = '\0';
			(void) mnt_one(dp, p, NULL, NULL, MNT_AUTO);
			*slash = '/';
			if ((slash = strchr(slash + 1, '/')) == NULL)
				break;
		}
	}
	mnt_up(dp, down);
	pthread_mutex_unlock(&mnt_op_lock);
}

/*
 * How a property reaches the live mounts.  Mountpoint and canmount move
 * or drop a mount: the subtree goes down before the change and comes up
 * after it, and a busy mount refuses the change (as zfs refuses it).
 * The rest apply in place, as zfs on Linux applies them with a remount
 * in place: the POSIX layer takes its new options, and the kernel's
 * per-mount flags (ro, nosuid, nodev, noexec) change with mount_setattr.
 * The writeback cache and the kernel's ACL checks, though, are fixed when
 * the kernel and the daemon meet (FUSE INIT): a change that wants either
 * on or off (readonly, sync, quota, acltype; see mnt_opts) mounts the
 * subtree again when nothing is open there.  Otherwise a busy mount keeps
 * its writeback cache until its next mount, which is harmless except for
 * sync=always: write(2) would return before the data reaches us.  That,
 * acltype (the kernel would enforce ACLs the daemon refuses, or the other
 * way round) and read-only while files are open for writing there (the
 * kernel refuses it) refuse the change: the property is put back.
 */
static bool
mnt_prop_remounts(int p)
{
	return (p == DSL_PROP_MOUNTPOINT || p == DSL_PROP_CANMOUNT);
}

static bool
mnt_prop_live(int p)
{
	return (p == DSL_PROP_READONLY || p == DSL_PROP_SYNC || p == DSL_PROP_EXEC ||
	    p == DSL_PROP_SETUID || p == DSL_PROP_DEVICES || p == DSL_PROP_ATIME ||
	    p == DSL_PROP_RELATIME || p == DSL_PROP_RECORDSIZE || p == DSL_PROP_XATTR ||
	    p == DSL_PROP_QUOTA || p == DSL_PROP_REFQUOTA || p == DSL_PROP_ACLTYPE);
}

/* A sum of name's mountpoint and where it comes from (never 0). */
static uint64_t
mnt_mp_sum(dsl_pool_t *dp, const char *name)
{
	dsl_prop_val_t *v = tarn_alloc(sizeof (*v));
	uint64_t h = 14695981039346656037ULL;   /* FNV-1a */
	(void) mnt_prop(dp, name, DSL_PROP_MOUNTPOINT, v);
	for (const char *c = v->dpv_str; *c != '\0'; c++)
		h = (h ^ (uint8_t)*c) * 1099511628211ULL;
	h = (h ^ (uint64_t)v->dpv_source) * 1099511628211ULL;
	for (const char *c = v->dpv_setpoint; *c != '\0'; c++)
		h = (h ^ (uint8_t)*c) * 1099511628211ULL;
	tarn_free(v);
	return (h | 1);
}

typedef struct mnt_newmp {
	dsl_pool_t *mn_dp;
	const char *mn_top;     /* the dataset whose mountpoint changed */
	int         mn_ret;     /* HOST_FAILED when a mount failed (printed) */
} mnt_newmp_t;

/*
 * After top's mountpoint changed: mount top and the descendants that take
 * their mountpoint from it (default or inherited from top or above, no
 * local setting in between) when canmount=on, as zfs does.  A mount that
 * fails says why and makes the command fail; the property stays set.
 */
static int
mnt_newmp_one(void *arg, const char *name, int depth)
{
	mnt_newmp_t *mn = arg;
	dsl_prop_val_t *v = tarn_alloc(sizeof (*v));
	(void) mnt_prop(mn->mn_dp, name, DSL_PROP_MOUNTPOINT, v);
	bool follows = depth == 0 || v->dpv_source == DSL_SRC_DEFAULT ||
	    (v->dpv_source == DSL_SRC_INHERITED &&
	    (strcmp(v->dpv_setpoint, mn->mn_top) == 0 ||
	    !mnt_in_tree(v->dpv_setpoint, mn->mn_top)));
	tarn_free(v);
	if (follows && mnt_one(mn->mn_dp, name, NULL, NULL, MNT_AUTO) != 0)
		mn->mn_ret = HOST_FAILED;
	return (0);
}

int
host_mount_prop_before(struct dsl_pool *dp, const char *name, const char *prop,
    host_prop_change_t *pc)
{
	int p = dsl_prop_lookup(prop);
	memset(pc, 0, sizeof (*pc));
	if (p == DSL_PROP_MOUNTPOINT && host_mount_auto())
		pc->pc_mp_sum = mnt_mp_sum(dp, name);
	if (!host_daemon_mode() || !host_mount_any(name))
		return (0);
	if (mnt_prop_live(p)) {
		/* what to put back if the mounts refuse the change */
		dsl_prop_val_t *v = tarn_alloc(sizeof (*v));
		(void) mnt_prop(dp, name, p, v);
		if (v->dpv_str[0] != '\0') {
			pc->pc_saved = true;
			pc->pc_was_local = v->dpv_source == DSL_SRC_LOCAL;
			(void) snprintf(pc->pc_old, sizeof (pc->pc_old), "%.*s",
			    (int)sizeof (pc->pc_old) - 1, v->dpv_str);
		}
		tarn_free(v);
		return (0);
	}
	if (!mnt_prop_remounts(p))
		return (0);
	mnt_op_enter();
	int r = mnt_unmount_matching(match_tree, name, false, "remount", name, &pc->pc_down);
	if (r != 0) {
		mnt_up(dp, pc->pc_down);
		pc->pc_down = NULL;
	}
	pthread_mutex_unlock(&mnt_op_lock);
	return (r);
}

/*
 * The kernel's atime flag of m as fo has it.  Failure (a daemon not root)
 * is ignored: the flag only names the policy in /proc/mounts, the daemon
 * applies it (see tarn_fuse_atime_t).
 */
static void
mnt_set_atime(mnt_t *m, const tarn_fuse_opts_t *fo)
{
	if (fo->tfo_atime == m->m_fopts.tfo_atime)
		return;
	struct mount_attr a = { 0 };
	a.attr_set = fo->tfo_atime == TARN_FUSE_NOATIME ? MOUNT_ATTR_NOATIME :
	    fo->tfo_atime == TARN_FUSE_STRICTATIME ? MOUNT_ATTR_STRICTATIME : MOUNT_ATTR_RELATIME;
	a.attr_clr = MOUNT_ATTR__ATIME;
	if (mount_setattr(AT_FDCWD, m->m_mountpoint, 0, &a, sizeof (a)) == 0)
		m->m_fopts.tfo_atime = fo->tfo_atime;
}

/* The kernel's per-mount flags of m as fo has them; 0 or an errno. */
static int
mnt_set_flags(mnt_t *m, const tarn_fuse_opts_t *fo)
{
	tarn_fuse_opts_t *cur = &m->m_fopts;
	mnt_set_atime(m, fo);
	if (fo->tfo_readonly == cur->tfo_readonly && fo->tfo_nosuid == cur->tfo_nosuid &&
	    fo->tfo_nodev == cur->tfo_nodev && fo->tfo_noexec == cur->tfo_noexec)
		return (0);
	struct mount_attr a = { 0 };
	a.attr_set = (fo->tfo_readonly ? MOUNT_ATTR_RDONLY : 0) |
	    (fo->tfo_nosuid ? MOUNT_ATTR_NOSUID : 0) | (fo->tfo_nodev ? MOUNT_ATTR_NODEV : 0) |
	    (fo->tfo_noexec ? MOUNT_ATTR_NOEXEC : 0);
	a.attr_clr = (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
	    MOUNT_ATTR_NOEXEC) & ~a.attr_set;
	if (mount_setattr(AT_FDCWD, m->m_mountpoint, 0, &a, sizeof (a)) != 0)
		return (errno);
	cur->tfo_readonly = fo->tfo_readonly;
	cur->tfo_nosuid = fo->tfo_nosuid;
	cur->tfo_nodev = fo->tfo_nodev;
	cur->tfo_noexec = fo->tfo_noexec;
	return (0);
}

/*
 * Give the mounts at and below name their options as the properties now
 * say.  A mount whose writeback cache should change goes down and up
 * again when none of the subtree is busy (children first; what went down
 * before a busy one comes up again).  The rest take the options in place:
 * read-only comes to the kernel before the daemon refuses writes, and
 * leaves the daemon after the kernel allows them.  Returns 0, or an errno
 * with *busy the mount that cannot follow: EBUSY for read-only while files
 * are open for writing (the kernel refuses it), sync=always with the
 * writeback cache on, read-write on a file system opened read-only (*why
 * says which of the last two).
 */
static int
mnt_apply_tree(dsl_pool_t *dp, const char *name, mnt_t **busy, const char **why)
{
	mnt_t **v;
	int n = mnt_collect(match_tree, name, &v), r = 0;
	bool remount = false;
	for (int i = 0; i < n; i++) {
		posix_fs_opts_t po;
		tarn_fuse_opts_t fo;
		mnt_opts(dp, v[i]->m_name, &v[i]->m_tmp, &po, &fo);
		remount |= fo.tfo_writeback != v[i]->m_fopts.tfo_writeback ||
		    fo.tfo_acl != v[i]->m_fopts.tfo_acl ||
		    (v[i]->m_opened_ro && !fo.tfo_readonly);
	}
	if (remount) {
		struct mnt_names *down;
		tarn_free(v);
		(void) mnt_unmount_matching(match_tree, name, false, NULL, name, &down);
		mnt_up(dp, down);
		n = mnt_collect(match_tree, name, &v);
	}
	for (int i = 0; i < n && r == 0; i++) {
		mnt_t *m = v[i];
		posix_fs_opts_t po;
		tarn_fuse_opts_t fo;
		mnt_opts(dp, m->m_name, &m->m_tmp, &po, &fo);
		po.pfo_avail = mnt_avail;
		po.pfo_avail_arg = m;
		if (po.pfo_sync == POSIX_SYNC_ALWAYS && m->m_fopts.tfo_writeback) {
			r = SET_ERROR(EBUSY);
			*why = "sync=always takes a remount, and files are open there";
		} else if (fo.tfo_acl != m->m_fopts.tfo_acl) {
			/* the kernel would enforce ACLs the daemon refuses, or not enforce them */
			r = SET_ERROR(EBUSY);
			*why = "acltype takes a remount, and files are open there";
		} else if (m->m_opened_ro && !fo.tfo_readonly) {
			/* the open of a read-write mount replays the intent log */
			r = SET_ERROR(EBUSY);
			*why = "read-write takes a remount, and files are open there";
		} else if (fo.tfo_readonly) {
			if ((r = mnt_set_flags(m, &fo)) == 0)
				posix_fs_set_opts(m->m_fs, &po);
		} else {
			posix_fs_set_opts(m->m_fs, &po);
			r = mnt_set_flags(m, &fo);
		}
		if (r != 0)
			*busy = m;
	}
	tarn_free(v);
	return (r);
}

int
host_mount_prop_changed(struct dsl_pool *dp, const char *name, const char *prop,
    const host_prop_change_t *pc, const char *verb)
{
	int p = dsl_prop_lookup(prop), r = 0;
	if (!host_daemon_mode())
		return (0);
	if (pc->pc_down != NULL || pc->pc_mp_sum != 0) {
		mnt_op_enter();
		mnt_up(dp, pc->pc_down);
		/* a new mountpoint mounts what was not mounted (canmount=on) */
		if (pc->pc_mp_sum != 0 && mnt_mp_sum(dp, name) != pc->pc_mp_sum) {
			mnt_newmp_t mn = { dp, name, 0 };
			(void) dsl_dataset_iter(dp, name, -1, mnt_newmp_one, &mn);
			r = mn.mn_ret;
		}
		pthread_mutex_unlock(&mnt_op_lock);
		return (r);
	}
	if (p >= 0 && p == dsl_prop_lookup("snapdir") && host_mount_any(name)) {
		/* .zfs listed or not: in place, for the subtree that inherits it */
		mnt_t **v;
		mnt_op_enter();
		int n = mnt_collect(match_tree, name, &v);
		for (int i = 0; i < n; i++)
			tarn_fuse_snapdir_visible(v[i]->m_fuse, mnt_snapdir_visible(dp, v[i]->m_name));
		tarn_free(v);
		pthread_mutex_unlock(&mnt_op_lock);
		return (0);
	}
	if (!mnt_prop_live(p) || !host_mount_any(name))
		return (0);
	mnt_op_enter();
	mnt_t *busy = NULL;
	const char *why = NULL;
	int e = mnt_apply_tree(dp, name, &busy, &why);
	if (e != 0) {
		char msg[DSL_MOUNTPOINT_MAX + 96];
		(void) snprintf(msg, sizeof (msg), "'%s' is busy (%s)", busy->m_mountpoint,
		    why != NULL ? why : e == EBUSY ? "files are open for writing there" :
		    strerror(e));
		r = host_report(verb, name, e, msg);
		if (pc->pc_saved) {
			char err[512];
			(void) (pc->pc_was_local ?
			    dsl_prop_set(dp, name, prop, pc->pc_old, err, sizeof (err)) :
			    dsl_prop_inherit(dp, name, prop, err, sizeof (err)));
			(void) mnt_apply_tree(dp, name, &busy, &why);
		}
	}
	pthread_mutex_unlock(&mnt_op_lock);
	return (r);
}

void
host_mount_start(void)
{
	char **names;
	int n;

	if (host_pool_names(&names, &n) != 0)
		return;
	for (int i = 0; i < n; i++) {
		host_recv_cleanup(names[i]);
		if (host_mount_auto())
			host_mount_pool(names[i]);
	}
	host_names_free(names, n);
}

void
host_mount_stop(void)
{
	mnt_op_enter();
	(void) mnt_unmount_matching(match_all, NULL, true, "unmount", "everything", NULL);
	pthread_mutex_unlock(&mnt_op_lock);
}

/* ---- zfs mount and unmount ---- */

static int
mnt_cmp_name(const void *a, const void *b)
{
	return (strcmp((*(mnt_t *const *)a)->m_name, (*(mnt_t *const *)b)->m_name));
}

int
host_mount_list(char ***namesp, char ***mountpointsp, int *np)
{
	mnt_t **v;
	mnt_op_enter();         /* no unmount frees an entry while we copy it */
	int n = mnt_collect(match_all, NULL, &v);
	qsort(v, (size_t)n, sizeof (*v), mnt_cmp_name);
	char **names = tarn_alloc(((size_t)n + 1) * sizeof (char *));
	char **mps = tarn_alloc(((size_t)n + 1) * sizeof (char *));
	for (int i = 0; i < n; i++) {
		names[i] = tarn_strdup(v[i]->m_name);
		mps[i] = tarn_strdup(v[i]->m_mountpoint);
	}
	tarn_free(v);
	pthread_mutex_unlock(&mnt_op_lock);
	*namesp = names;
	*mountpointsp = mps;
	*np = n;
	return (0);
}

/*
 * Mount options (zfs mount -o, mount(8) -o) into tmp.  What only mount(8)
 * and fstab mean (defaults, auto, nofail, _netdev, x-..., ...) is passed
 * over; anything else unknown is an error, as are options that take a
 * value.
 */
static int
mnt_parse_tmp(const char *opts, mnt_tmp_t *tmp, char *err, size_t errlen)
{
	static const struct { const char *o; uint8_t bit; bool on; } known[] = {
		{ "ro", MNT_T_RO, true }, { "rw", MNT_T_RO, false },
		{ "noexec", MNT_T_NOEXEC, true }, { "exec", MNT_T_NOEXEC, false },
		{ "nosuid", MNT_T_NOSUID, true }, { "suid", MNT_T_NOSUID, false },
		{ "nodev", MNT_T_NODEV, true }, { "dev", MNT_T_NODEV, false },
		{ "noatime", MNT_T_NOATIME, true }, { "atime", MNT_T_NOATIME, false },
		{ "relatime", MNT_T_RELATIME, true }, { "norelatime", MNT_T_RELATIME, false },
		{ "noxattr", MNT_T_NOXATTR, true }, { "xattr", MNT_T_NOXATTR, false },
		{ "noacl", MNT_T_NOACL, true }, { "acl", MNT_T_NOACL, false },
		{ "posixacl", MNT_T_NOACL, false },
	};
	static const char *const passed[] = { "defaults", "auto", "noauto", "nofail",
		"_netdev", "user", "nouser", "users", "owner", "group", "async", "zfsutil",
		"loud", "silent" };
	char *copy = tarn_strdup(opts != NULL ? opts : ""), *save = NULL;
	int r = 0;
	for (char *o = strtok_r(copy, ",", &save); o != NULL && r == 0;
	    o = strtok_r(NULL, ",", &save)) {
		bool done = strncmp(o, "x-", 2) == 0 || strncmp(o, "comment=", 8) == 0;
		for (size_t i = 0; !done && i < ARRAY_SIZE(passed); i++)
			done = strcmp(o, passed[i]) == 0;
		for (size_t i = 0; !done && i < ARRAY_SIZE(known); i++) {
			if (strcmp(o, known[i].o) != 0)
				continue;
			tmp->mt_set = (uint8_t)(known[i].on ? tmp->mt_set | known[i].bit :
			    tmp->mt_set & ~known[i].bit);
			tmp->mt_clr = (uint8_t)(known[i].on ? tmp->mt_clr & ~known[i].bit :
			    tmp->mt_clr | known[i].bit);
			done = true;
		}
		if (strcmp(o, "strictatime") == 0) {
			tmp->mt_set &= (uint8_t)~(MNT_T_NOATIME | MNT_T_RELATIME);
			tmp->mt_clr |= MNT_T_NOATIME | MNT_T_RELATIME;
			done = true;
		}
		if (!done) {
			(void) snprintf(err, errlen, "invalid mount option '%s'", o);
			r = SET_ERROR(EINVAL);
		}
	}
	tarn_free(copy);
	return (r);
}

int
host_mount_opts_check(const char *opts, char *err, size_t errlen)
{
	mnt_tmp_t tmp = { 0 };

	return (mnt_parse_tmp(opts, &tmp, err, errlen));
}

/* zfs mount -a: every pool's datasets that mount automatically. */
int
host_mount_all(const char *opts)
{
	mnt_tmp_t tmp = { 0 };
	char **names, err[128];
	int n, r = 0;
	if (mnt_parse_tmp(opts, &tmp, err, sizeof (err)) != 0)
		return (host_report("mount", "-a", EINVAL, err));
	if (!host_daemon_mode())
		return (host_report("mount", "-a", ENOTSUP, "mounting needs the daemon (tarnd)"));
	if (host_pool_names(&names, &n) != 0)
		return (HOST_FAILED);
	for (int i = 0; i < n; i++) {
		host_fs_t fs;
		if (host_fs_open("mount", names[i], false, &fs) != 0) {
			r = HOST_FAILED;
			continue;
		}
		if (mnt_tree(fs.hf_dp, names[i], true, &tmp) != 0)
			r = HOST_FAILED;
		host_fs_close(&fs);
	}
	host_names_free(names, n);
	return (r);
}

/*
 * zfs mount [-o opts] dataset; and, for mount(8)'s helper (mount.tarn), a
 * dataset whose mountpoint is legacy with the directory (dir not NULL).
 */
int
host_mount_one(const char *name, const char *dir, const char *opts)
{
	mnt_tmp_t tmp = { 0 };
	char err[128];
	int r;
	if (mnt_parse_tmp(opts, &tmp, err, sizeof (err)) != 0)
		return (host_report("mount", name, EINVAL, err));
	if (!host_daemon_mode())
		return (host_report("mount", name, ENOTSUP, "mounting needs the daemon (tarnd)"));
	host_fs_t fs;
	if ((r = host_fs_open_existing(name, false, &fs)) != 0)
		return (r);
	char *real = dir != NULL ? realpath(dir, NULL) : NULL;
	int de = errno;
	mnt_op_enter();
	if (dir != NULL && real == NULL) {
		char msg[DSL_MOUNTPOINT_MAX + 64];
		(void) snprintf(msg, sizeof (msg), "mount point '%.*s': %s", DSL_MOUNTPOINT_MAX,
		    dir, tarn_strerror(de));
		r = host_report("mount", name, de, msg);
	} else {
		r = mnt_one(fs.hf_dp, name, real, &tmp, MNT_ASKED) != 0 ? HOST_FAILED : 0;
	}
	free(real);
	pthread_mutex_unlock(&mnt_op_lock);
	host_fs_close(&fs);
	return (r);
}

static bool
match_mountpoint(const mnt_t *m, const void *key)
{
	return (strcmp(m->m_mountpoint, key) == 0);
}

int
host_unmount(const char *what, bool all, bool force)
{
	if (!host_daemon_mode())
		return (host_report("unmount", all ? "-a" : what, ENOTSUP,
		    "mounting needs the daemon (tarnd)"));
	int r;
	mnt_op_enter();
	if (all) {
		r = mnt_unmount_matching(match_all, NULL, force, "unmount", "-a", NULL);
	} else if (what[0] == '/') {
		char *real = realpath(what, NULL);
		const char *mp = real != NULL ? real : what;
		mnt_t **v;
		int n = mnt_collect(match_mountpoint, mp, &v);
		if (n == 0)
			r = host_report("unmount", what, EINVAL, "not a mounted tarn filesystem");
		else
			r = mnt_unmount_matching(match_tree, v[0]->m_name, force, "unmount",
			    what, NULL);
		tarn_free(v);
		free(real);
	} else if (!host_mount_any(what)) {
		r = host_report("unmount", what, EINVAL, "not currently mounted");
	} else {
		r = mnt_unmount_matching(match_tree, what, force, "unmount", what, NULL);
	}
	pthread_mutex_unlock(&mnt_op_lock);
	return (r);
}

/* ---- a mount's file system replaced under it (the sequence: host_swap.c) ---- */

typedef struct mnt_swap_arg {
	mnt_t      *ms_m;
	dsl_pool_t *ms_dp;
} mnt_swap_arg_t;

/* The table's pointer to the served fs: NULL while none is open, then the new one. */
static void
mnt_swap_publish(void *arg, posix_fs_t *fs)
{
	mnt_swap_arg_t *ms = arg;
	pthread_mutex_lock(&mnt_tbl_lock);
	ms->ms_m->m_fs = fs;
	pthread_mutex_unlock(&mnt_tbl_lock);
}

static int
mnt_swap_open(void *arg, posix_fs_t **fsp)
{
	mnt_swap_arg_t *ms = arg;
	tarn_fuse_opts_t fo;
	return (mnt_fs_open(ms->ms_dp, ms->ms_m, &fo, fsp));
}

/*
 * Swap m's file system (mnt_op_lock held).  Mounts nested below m's
 * mountpoint go down first and come up after: the swap makes the kernel
 * look every name of m up again (the epoch, fuse/tarn_fuse_swap.c), a
 * mountpoint directory too, and as its node id changes (or it is not
 * there in the new state) the kernel drops that name and with it the
 * mounts on it, lazily, behind our back: gone from the namespace while
 * our table still has them, and their unmount (pool destroy -f too) then
 * failed as "busy".  A busy nested mount refuses the change (force: it
 * is unmounted anyway), reported as "cannot VERB 'NAME'".  Only the
 * pool's own mounts: dp cannot mount another pool's datasets again (a
 * mount of another pool inside this one still goes with the swap).
 */
static int
mnt_swap_mounted(dsl_pool_t *dp, mnt_t *m, const char *name, bool force, const char *verb,
    host_swap_fn_t change, void *arg, bool *ran)
{
	char mp[DSL_MOUNTPOINT_MAX];
	struct mnt_names *below = NULL;
	(void) snprintf(mp, sizeof (mp), "%s", m->m_mountpoint);
	mnt_below_key_t key = { mp, dsl_pool_spa(dp) };
	int r = mnt_unmount_matching(match_below, &key, force, verb, name, &below);
	if (r != 0) {
		mnt_up(dp, below);              /* back as it was; nothing changed */
		return (r);
	}
	pthread_mutex_lock(&mnt_tbl_lock);
	m->m_swapping = true;
	pthread_mutex_unlock(&mnt_tbl_lock);
	mnt_swap_arg_t ms = { m, dp };
	host_swap_t hs = {
		.hs_fuse = m->m_fuse, .hs_fs = m->m_fs, .hs_ro = m->m_opened_ro,
		.hs_publish = mnt_swap_publish, .hs_open = mnt_swap_open, .hs_arg = &ms,
	};
	r = host_swap_fs(&hs, change, arg, ran);
	pthread_mutex_lock(&mnt_tbl_lock);
	m->m_swapping = false;
	pthread_mutex_unlock(&mnt_tbl_lock);
	if (*ran && hs.hs_fs == NULL)   /* nothing to serve: the mount goes */
		(void) mnt_unmount_one(m, true);
	mnt_up(dp, below);      /* in the new state; mnt_prepare_dir makes missing dirs */
	return (r);
}

int
host_mount_swap(struct dsl_pool *dp, const char *name, bool force, const char *verb,
    host_swap_fn_t change, void *arg, bool *ran)
{
	*ran = true;
	if (!host_daemon_mode())
		return (change(arg));
	mnt_op_enter();
	pthread_mutex_lock(&mnt_tbl_lock);
	mnt_t *m = mnt_find(name);
	pthread_mutex_unlock(&mnt_tbl_lock);
	int r = m == NULL ? change(arg) :
	    mnt_swap_mounted(dp, m, name, force, verb, change, arg, ran);
	pthread_mutex_unlock(&mnt_op_lock);
	return (r);
}
