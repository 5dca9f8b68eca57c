/*
 * posix_fs.c — a POSIX file system on an object set: creating, opening and
 * closing it, the master node, the in-memory inode table, the unlinked
 * set, space accounting and statfs.  Inodes are in posix_inode.c,
 * directories in posix_dir.c and posix_rename.c, file data in
 * posix_data.c, extended attributes in posix_xattr.c.
 *
 * Theory of the POSIX layer
 * -------------------------
 * Layout (byte by byte in docs/FORMAT.md "File systems").  Object 1 of the
 * object set is the master node, a ZAP naming the file system's roots:
 * VERSION, ROOT (the root directory), UNLINKED (a ZAP of inodes unlinked
 * while still open), GUID (for statfs's fsid) and, only while the file
 * system is not mounted read-write, USED (its space counters).  Every
 * inode is one DMU object whose bonus buffer holds a znode_phys_t: mode,
 * owners, link count, size, parent, generation, rdev, flags, the four
 * times with nanoseconds, the xattr object and up to 144 bytes of symlink
 * target.  A regular file keeps its bytes in the object's blocks; a
 * directory is a ZAP (name -> object number | DT_* type << 60); a long
 * symlink target is the data of its object; devices, fifos and sockets
 * have no data.  The inode number is the object number, and the
 * generation is the txg that created it (a number is reused only after
 * the txg that freed it has synced, so (ino, gen) never repeats).
 *
 * Block sizes.  While a file fits in one block its block size is its size
 * rounded up to a power of two (at least 512 bytes); a write past the end
 * of that block grows the block (dmu_object_set_blocksize, allowed while
 * the object has one block) until it reaches the record size, after which
 * the file is made of record-size blocks.  Small files thus cost a small
 * block, and large files get large sequential blocks.  Holes cost nothing:
 * truncating up only changes the size, truncating down and punching
 * free blocks (dmu_free_range), and bytes past the end of file are always
 * zero in the last block, so extending a file never exposes old data.
 *
 * References and the unlinked set.  The FUSE server holds a reference for
 * each kernel lookup (posix_lookup and the calls that create a name) and
 * drops them with posix_forget.  An inode whose last link goes while it
 * has references is not freed: its link count becomes 0 and it is listed
 * in the UNLINKED ZAP, in the same transaction; when its last reference
 * goes it is freed and delisted.  After a crash (or a close with
 * references left) nobody holds those inodes any more, so posix_fs_open
 * frees everything listed in UNLINKED.
 *
 * Locks.  The inode table maps inode numbers to pinode_t (64 striped
 * hash tables); each pinode has a rwlock guarding its attributes, data,
 * directory contents and xattrs.  An operation that changes an object
 * takes the lock as writer before dmu_tx_assign and drops it after
 * dmu_tx_commit, so that the changes of one object are made in txg order
 * (the DMU requires that).  Reads of file data share the lock, writes to
 * one file are serialized.  An operation on several inodes (link, unlink,
 * rmdir, rename) first finds them with short read locks, then locks the
 * whole set as writer in ascending inode number, then checks that the
 * names still lead to the same inodes (else it unlocks and starts over).
 * Lock order: fs_rename_lock (renames between two directories, which
 * keeps every directory's chain of parents stable while rename checks
 * that a directory does not move into its own subtree) before inode
 * locks (ascending ino) before fs_unlinked_lock (the unlinked ZAP, which
 * several inodes' transactions change) before the DMU's and ZAP's own
 * locks.  Readdir holds no lock while calling back (ZAP cursors are
 * stable by themselves), so the callback may call into this layer.
 *
 * Transactions.  Each operation is one transaction (a write of more than
 * POSIX_WRITE_CHUNK bytes is several and may end short).  Every check
 * that can fail comes before dmu_tx_assign; after it, only I/O errors can
 * interrupt an operation.  Deleting operations are marked netfree so they
 * work on a full pool.
 *
 * Space accounting.  The file system counts its inodes (statfs's
 * f_files): the count is stored in the master node (USED) at close and
 * removed at open, so a file system that was not closed cleanly recounts
 * them by walking its objects at the next open.
 * Space is what the blocks take, as zfs counts it: holes, zero
 * blocks and compression cost nothing.  The pool knows it only as of the
 * last txg sync, through the pfo_avail hook (the dataset layer: quotas,
 * reservations, the pool's free space) or, without a hook, pfo_quota less
 * the bytes the object set took at the last sync.  A change that needs
 * new space (a write: its length, as copy-on-write rewrites too; a new
 * inode, entry or fallocate) is admitted by posix_space_check against
 * that, counting what was admitted in txgs not yet synced, per txg, so
 * that a writer cannot pass a quota by a txg's worth of data before the
 * sync shows it (EDQUOT; only under a quota); without one the pool's
 * synced free space bounds each change (ENOSPC; its limit on dirty data
 * in flight is the dmu's).  The estimate is high (zero blocks,
 * compression) until the txg syncs; statfs adds it to the synced bytes.
 * A FUSE mount with the writeback cache keeps a reserve free for what the
 * kernel has cached (posix_fs_set_reserve): every change stops short of
 * it but the write-backs themselves (posix_write_cached), and
 * posix_space_gate tells the server when cached write(2)s must be
 * refused (theory: fuse/tarn_fuse_space.c).
 */
#include "posix_impl.h"

#include <sys/statvfs.h>

/* ---- options ---- */

void
posix_fs_opts_default(posix_fs_opts_t *o)
{
	memset(o, 0, sizeof (*o));
	o->pfo_atime = POSIX_ATIME_RELATIME;
	o->pfo_recordsize = POSIX_DEFAULT_RECORDSIZE;
	o->pfo_xattr = true;
	o->pfo_acl = true;
}

static void
posix_opts_fix(posix_fs_opts_t *o)
{
	uint32_t rs = o->pfo_recordsize;
	if (rs < SPA_MINBLOCKSIZE || rs > SPA_MAXBLOCKSIZE || !ISP2(rs))
		o->pfo_recordsize = POSIX_DEFAULT_RECORDSIZE;
}

void
posix_opts(posix_fs_t *fs, posix_fs_opts_t *o)
{
	tarn_mutex_lock(&fs->fs_opts_lock, POSIX_OPTS);
	*o = fs->fs_opts;
	tarn_mutex_unlock(&fs->fs_opts_lock);
}

void
posix_fs_set_opts(posix_fs_t *fs, const posix_fs_opts_t *opts)
{
	posix_fs_opts_t o = *opts;
	posix_opts_fix(&o);
	tarn_mutex_lock(&fs->fs_opts_lock, POSIX_OPTS);
	fs->fs_opts = o;
	tarn_mutex_unlock(&fs->fs_opts_lock);
}

int
posix_writable(posix_fs_t *fs)
{
	tarn_mutex_lock(&fs->fs_opts_lock, POSIX_OPTS);
	bool ro = fs->fs_opts.pfo_readonly;
	tarn_mutex_unlock(&fs->fs_opts_lock);
	return (ro ? SET_ERROR(EROFS) : 0);
}

posix_ino_t
posix_fs_root(const posix_fs_t *fs)
{
	return (fs->fs_root);
}

objset_t *
posix_fs_objset(posix_fs_t *fs)
{
	return (fs->fs_os);
}

bool
posix_caches_data(posix_fs_t *fs)
{
	return (dmu_objset_caches_data(fs->fs_os));
}

/* Assign tx to the open txg, aborting it on failure. */
int
posix_tx_assign(dmu_tx_t *tx)
{
	int err = dmu_tx_assign(tx, TXG_WAIT);
	if (err != 0)
		dmu_tx_abort(tx);
	return (err);
}

/* ---- space accounting ---- */

void
posix_inodes_add(posix_fs_t *fs, int64_t n)
{
	__atomic_add_fetch(&fs->fs_inodes, (uint64_t)n, __ATOMIC_RELAXED);
}

/* New bytes admitted in txgs not yet synced (fs_space_lock held). */
static uint64_t
posix_pending_locked(posix_fs_t *fs, uint64_t synced)
{
	uint64_t sum = 0;
	for (int i = 0; i < POSIX_PEND_SLOTS; i++)
		if (fs->fs_pend_txg[i] > synced)
			sum += fs->fs_pend_bytes[i];
	return (sum);
}

/*
 * Room for new bytes as of the last sync, and whether a quota (rather
 * than the pool) is what limits it: the space hook's figure, and
 * pfo_quota less the bytes the object set took at the last sync,
 * whichever is less (UINT64_MAX: neither says anything).
 */
static uint64_t
posix_room(posix_fs_t *fs, const posix_fs_opts_t *o, bool *quota)
{
	*quota = false;
	uint64_t room = UINT64_MAX;
	if (o->pfo_avail != NULL)
		room = o->pfo_avail(o->pfo_avail_arg, quota);
	if (o->pfo_quota != 0) {
		uint64_t refd;
		dmu_objset_space(fs->fs_os, &refd);
		uint64_t left = o->pfo_quota > refd ? o->pfo_quota - refd : 0;
		if (left <= room) {
			room = left;
			*quota = true;
		}
	}
	return (room);
}

/*
 * Admit `bytes` under a quota: EDQUOT when the last sync left no room;
 * when what was admitted since fills the room, wait for the sync that
 * shows what it really took (overwrites and zeros may take nothing) and
 * look again; else admit (a change may pass the quota by its own size,
 * as on zfs).
 */
static int
posix_space_quota(posix_fs_t *fs, const posix_fs_opts_t *o, uint64_t bytes)
{
	dmu_pool_t *dp = dmu_objset_pool(fs->fs_os);
	for (;;) {
		bool quota = false;
		uint64_t room = posix_room(fs, o, &quota);
		if (!quota)
			return (bytes > room ? SET_ERROR(ENOSPC) : 0);
		if (room == 0)
			return (SET_ERROR(EDQUOT));
		uint64_t synced = txg_last_synced(dp), open = txg_open_txg(dp);
		tarn_mutex_lock(&fs->fs_space_lock, POSIX_SPACE);
		uint64_t pending = posix_pending_locked(fs, synced), wait = 0;
		if (pending >= room) {
			for (int i = 0; i < POSIX_PEND_SLOTS; i++)
				if (fs->fs_pend_txg[i] > synced)
					wait = MAX(wait, fs->fs_pend_txg[i]);
		} else {
			int i = (int)(open % POSIX_PEND_SLOTS);
			if (fs->fs_pend_txg[i] != open) {
				fs->fs_pend_txg[i] = open;
				fs->fs_pend_bytes[i] = 0;
			}
			fs->fs_pend_bytes[i] += bytes;
		}
		tarn_mutex_unlock(&fs->fs_space_lock);
		if (wait == 0)
			return (0);
		int err = txg_wait_synced(dp, wait);
		if (err != 0)
			return (err);
	}
}

/*
 * Room for `bytes` of new pool space (no quota bounds it), leaving
 * `keep` bytes of it free: against the synced free space first, then
 * against what unsynced txgs may still take (dmu_pool_space_wait, which
 * waits for their frees to land).
 */
static int
posix_space_pool(posix_fs_t *fs, uint64_t room, uint64_t bytes, uint64_t keep)
{
	if (bytes + keep > room) {
		dmu_pool_note_enospc(dmu_objset_pool(fs->fs_os));
		return (SET_ERROR(ENOSPC));
	}
	if (keep == 0)          /* dirty data in flight is the dmu's business */
		return (0);
	return (dmu_pool_space_wait(dmu_objset_pool(fs->fs_os), bytes, keep));
}

/* Admit `bytes` of new space, keeping `keep` of the pool's free (no quota). */
static int
posix_space_admit(posix_fs_t *fs, uint64_t bytes, uint64_t keep)
{
	if (bytes == 0 || fs->fs_replaying)     /* a replay: admitted before the crash */
		return (0);
	posix_fs_opts_t o;
	posix_opts(fs, &o);
	bool quota = false;
	uint64_t room = posix_room(fs, &o, &quota);
	if (quota)
		return (posix_space_quota(fs, &o, bytes));
	return (posix_space_pool(fs, room, bytes, keep));
}

/*
 * Before a change that needs `bytes` of new space (theory: the top of
 * this file).  Under a quota, see posix_space_quota.  Otherwise ENOSPC
 * when the pool's free space (less other datasets' reservations) cannot
 * take these bytes and still keep the reserve for the kernel's cached
 * writes (posix_fs_set_reserve).
 */
int
posix_space_check(posix_fs_t *fs, uint64_t bytes)
{
	return (posix_space_admit(fs, bytes, __atomic_load_n(&fs->fs_reserve, __ATOMIC_RELAXED)));
}

int
posix_space_check_cached(posix_fs_t *fs, uint64_t bytes)
{
	return (posix_space_admit(fs, bytes, 0));
}

void
posix_fs_set_reserve(posix_fs_t *fs, uint64_t bytes)
{
	__atomic_store_n(&fs->fs_reserve, bytes, __ATOMIC_RELAXED);
}

int
posix_space_gate(posix_fs_t *fs, bool wait)
{
	posix_fs_opts_t o;
	posix_opts(fs, &o);
	bool quota = false;
	uint64_t room = posix_room(fs, &o, &quota);
	if (quota)
		return (room == 0 ? SET_ERROR(EDQUOT) : 0);
	/* room for a record beside the reserve: what one write(2) may cache at once */
	uint64_t keep = __atomic_load_n(&fs->fs_reserve, __ATOMIC_RELAXED);
	uint64_t bytes = SPA_OLD_MAXBLOCKSIZE;
	if (wait)
		return (posix_space_pool(fs, room, bytes, keep));
	uint64_t pending = dmu_pool_space_pending(dmu_objset_pool(fs->fs_os));
	return (pending + keep + bytes > room ? SET_ERROR(ENOSPC) : 0);
}

static int
posix_count_one(void *arg, uint64_t obj, dmu_object_type_t type, dmu_object_type_t bonustype,
    uint32_t bonuslen, const void *bonus)
{
	uint64_t *inodes = arg;
	znode_phys_t zp;
	if (bonustype != POSIX_BONUS_TYPE || bonuslen != POSIX_ZNODE_SIZE)
		return (0);
	memcpy(&zp, bonus, sizeof (zp));
	if (zp.zp_mode != 0)
		(*inodes)++;
	return (0);
}

/*
 * Recount the inodes by reading every object (after an unclean close, or
 * in a snapshot or received file system, which carry no count): from
 * the dnode blocks as synced when nothing is pending, else object by
 * object.
 */
static int
posix_recount(posix_fs_t *fs)
{
	uint64_t obj = 0, inodes = 0;
	int err = dmu_object_scan(fs->fs_os, posix_count_one, &inodes);
	if (err == 0) {
		fs->fs_inodes = inodes;
		return (0);
	}
	inodes = 0;
	while ((err = dmu_object_next(fs->fs_os, &obj)) == 0) {
		dmu_object_info_t doi;
		znode_phys_t zp;
		if (dmu_object_info(fs->fs_os, obj, &doi) != 0 ||
		    doi.doi_bonus_type != POSIX_BONUS_TYPE ||
		    doi.doi_bonus_size != POSIX_ZNODE_SIZE)
			continue;
		if (dmu_bonus_read(fs->fs_os, obj, &zp, sizeof (zp)) != 0 || zp.zp_mode == 0)
			continue;
		inodes++;
	}
	if (err != ESRCH)
		return (err);
	fs->fs_inodes = inodes;
	return (0);
}

/* ---- the inode table ---- */

static pinode_stripe_t *
pinode_stripe(posix_fs_t *fs, posix_ino_t ino)
{
	return (&fs->fs_tab[(ino * 0x9E3779B97F4A7C15ULL) >> 58]);
}

static uint32_t
pinode_hash(posix_ino_t ino)
{
	return ((uint32_t)((ino * 0xC2B2AE3D27D4EB4FULL) >> 32));
}

static uint32_t
pinode_link_hash(const tarn_hlink_t *l)
{
	return (pinode_hash(TARN_HASH_ENTRY(l, pinode_t, pi_link)->pi_ino));
}

static const tarn_hash_conf_t pinode_table_conf = {
	.thc_hash = pinode_link_hash, .thc_min_buckets = 64, .thc_load = 1,
};

/* The in-memory inode for ino (created if needed), with an active use. */
pinode_t *
pinode_get(posix_fs_t *fs, posix_ino_t ino)
{
	pinode_stripe_t *ps = pinode_stripe(fs, ino);
	pthread_mutex_lock(&ps->ps_lock);
	pinode_t *pi;
	TARN_HASH_FIND(&ps->ps_inodes, pinode_hash(ino), pi, pi_link, pi->pi_ino == ino);
	if (pi == NULL) {
		pi = tarn_alloc(sizeof (*pi));
		pi->pi_ino = ino;
		pthread_rwlock_init(&pi->pi_lock, NULL);
		tarn_hash_insert(&ps->ps_inodes, pinode_hash(ino), &pi->pi_link);
	}
	pi->pi_active++;
	pthread_mutex_unlock(&ps->ps_lock);
	return (pi);
}

static void
pinode_free_locked(pinode_stripe_t *ps, pinode_t *pi)
{
	tarn_hash_remove(&ps->ps_inodes, pinode_hash(pi->pi_ino), &pi->pi_link);
	pthread_rwlock_destroy(&pi->pi_lock);
	tarn_free(pi);
}

/* Drop an active use; the pinode goes when it has neither uses nor references. */
void
pinode_rele(posix_fs_t *fs, pinode_t *pi)
{
	pinode_stripe_t *ps = pinode_stripe(fs, pi->pi_ino);
	pthread_mutex_lock(&ps->ps_lock);
	VERIFY3U(pi->pi_active, >, 0);
	if (--pi->pi_active == 0 && pi->pi_refs == 0)
		pinode_free_locked(ps, pi);
	pthread_mutex_unlock(&ps->ps_lock);
}

void
pinode_ref(posix_fs_t *fs, pinode_t *pi, uint64_t n)
{
	pinode_stripe_t *ps = pinode_stripe(fs, pi->pi_ino);
	pthread_mutex_lock(&ps->ps_lock);
	pi->pi_refs += n;
	pthread_mutex_unlock(&ps->ps_lock);
}

uint64_t
pinode_refs(posix_fs_t *fs, pinode_t *pi)
{
	pinode_stripe_t *ps = pinode_stripe(fs, pi->pi_ino);
	pthread_mutex_lock(&ps->ps_lock);
	uint64_t r = pi->pi_refs;
	pthread_mutex_unlock(&ps->ps_lock);
	return (r);
}

/* Drop n references; false when the inode still has some. */
static bool
pinode_unref(posix_fs_t *fs, pinode_t *pi, uint64_t n)
{
	pinode_stripe_t *ps = pinode_stripe(fs, pi->pi_ino);
	pthread_mutex_lock(&ps->ps_lock);
	pi->pi_refs -= MIN(n, pi->pi_refs);
	bool last = pi->pi_refs == 0;
	pthread_mutex_unlock(&ps->ps_lock);
	return (last);
}

void
posix_forget(posix_fs_t *fs, posix_ino_t ino, uint64_t n)
{
	pinode_t *pi = pinode_get(fs, ino);
	if (!pinode_unref(fs, pi, n)) {
		pinode_rele(fs, pi);
		return;
	}
	/* The last reference: free the inode if it has no links left. */
	pthread_rwlock_wrlock(&pi->pi_lock);
	znode_phys_t zp;
	if (!pi->pi_destroyed && pinode_refs(fs, pi) == 0 && zn_read(fs, ino, &zp) == 0 &&
	    zp.zp_nlink == 0 && posix_writable(fs) == 0) {
		tarn_mutex_lock(&fs->fs_unlinked_lock, POSIX_UNLINKED);
		dmu_tx_t *tx = dmu_tx_create(fs->fs_os);
		posix_hold_destroy(fs, tx);
		dmu_tx_mark_netfree(tx);
		if (posix_tx_assign(tx) == 0) {
			if (posix_destroy(fs, ino, &zp, tx) == 0)
				pi->pi_destroyed = true;
			dmu_tx_commit(tx);
		}
		tarn_mutex_unlock(&fs->fs_unlinked_lock);
	}
	pthread_rwlock_unlock(&pi->pi_lock);
	pinode_rele(fs, pi);
}

/* ---- create, open, close ---- */

static int
posix_fs_layout(objset_t *os, uint32_t uid, uint32_t gid, dmu_tx_t *tx)
{
	uint64_t root, unl, now[2];
	int err = zap_create_claim(os, POSIX_MASTER_OBJ, DMU_OT_ZAP, tx);
	if (err == 0)
		err = zap_create_bonus(os, DMU_OT_DIRECTORY, POSIX_BONUS_TYPE, POSIX_ZNODE_SIZE,
		    tx, &root);
	if (err == 0)
		err = zap_create(os, DMU_OT_ZAP, tx, &unl);
	if (err != 0)
		return (err);
	posix_now(now);
	posix_cred_t cred = { .pc_uid = uid, .pc_gid = gid };
	znode_phys_t zp;
	zn_init(&zp, S_IFDIR | 0755, &cred, root, dmu_tx_get_txg(tx), now);
	zp.zp_nlink = 2;
	zp.zp_size = 2;
	uint64_t used[2] = { 0, 1 };        /* FORMAT.md: USED */
	err = dmu_bonus_write(os, root, &zp, sizeof (zp), tx);
	if (err == 0)
		err = zap_add_int(os, POSIX_MASTER_OBJ, POSIX_M_VERSION, POSIX_VERSION, tx);
	if (err == 0)
		err = zap_add_int(os, POSIX_MASTER_OBJ, POSIX_M_ROOT, root, tx);
	if (err == 0)
		err = zap_add_int(os, POSIX_MASTER_OBJ, POSIX_M_UNLINKED, unl, tx);
	if (err == 0)
		err = zap_add_int(os, POSIX_MASTER_OBJ, POSIX_M_GUID, tarn_guid(), tx);
	if (err == 0)
		err = zap_add(os, POSIX_MASTER_OBJ, POSIX_M_USED, 8, 2, used, tx);
	return (err);
}

int
posix_fs_create(objset_t *os, uint32_t uid, uint32_t gid)
{
	dmu_object_info_t doi;
	if (dmu_object_info(os, POSIX_MASTER_OBJ, &doi) == 0)
		return (SET_ERROR(EEXIST));
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_space(tx, 4 * DNODE_BLOCK_SIZE);
	zap_tx_hold(tx, os, 0, 8);
	int err = posix_tx_assign(tx);
	if (err != 0)
		return (err);
	err = posix_fs_layout(os, uid, gid, tx);
	dmu_tx_commit(tx);
	return (err);
}

/* Free every inode listed in the unlinked set (nobody can hold them now). */
static int
posix_reclaim(posix_fs_t *fs)
{
	for (;;) {
		zap_cursor_t zc;
		zap_attribute_t za;
		zap_cursor_init(&zc, fs->fs_os, fs->fs_unlinked, 0);
		int err = zap_cursor_retrieve(&zc, &za);
		zap_cursor_fini(&zc);
		if (err == ENOENT)
			return (0);
		if (err != 0)
			return (err);
		uint64_t ino = za.za_first_integer;
		znode_phys_t zp;
		dmu_tx_t *tx = dmu_tx_create(fs->fs_os);
		posix_hold_destroy(fs, tx);
		dmu_tx_mark_netfree(tx);
		if ((err = posix_tx_assign(tx)) != 0)
			return (err);
		if (zn_read(fs, ino, &zp) == 0 && zp.zp_nlink == 0) {
			err = posix_destroy(fs, ino, &zp, tx);
		} else {
			/* listed but alive or gone: just delist it */
			err = zap_remove(fs->fs_os, fs->fs_unlinked, za.za_name, tx);
		}
		dmu_tx_commit(tx);
		if (err != 0)
			return (err);
	}
}

int
posix_fs_version(objset_t *os, uint64_t *version)
{
	int err = zap_lookup_int(os, POSIX_MASTER_OBJ, POSIX_M_VERSION, version);
	if (err == ENOENT || err == EINVAL)
		return (SET_ERROR(EINVAL));     /* not a file system */
	return (err);
}

/* Read the master node into fs. */
static int
posix_fs_load(posix_fs_t *fs)
{
	uint64_t version;
	int err = posix_fs_version(fs->fs_os, &version);
	if (err != 0)
		return (err);
	if (version > POSIX_VERSION)
		return (SET_ERROR(ENOTSUP_FORMAT));
	err = zap_lookup_int(fs->fs_os, POSIX_MASTER_OBJ, POSIX_M_ROOT, &fs->fs_root);
	if (err == 0)
		err = zap_lookup_int(fs->fs_os, POSIX_MASTER_OBJ, POSIX_M_UNLINKED,
		    &fs->fs_unlinked);
	if (err == 0)
		err = zap_lookup_int(fs->fs_os, POSIX_MASTER_OBJ, POSIX_M_GUID, &fs->fs_guid);
	return (err);
}

/* Take the inode count from the master node (and mark it in use). */
static int
posix_fs_load_used(posix_fs_t *fs, bool readonly)
{
	uint64_t used[2];
	int err = zap_lookup(fs->fs_os, POSIX_MASTER_OBJ, POSIX_M_USED, 8, 2, used);
	if (err == ENOENT && readonly) {
		__atomic_store_n(&fs->fs_inodes_unknown, true, __ATOMIC_RELEASE);
		return (0);
	}
	if (err == ENOENT)
		return (posix_recount(fs));
	if (err != 0)
		return (err);
	fs->fs_inodes = used[1];            /* used[0]: no longer read */
	if (readonly)
		return (0);
	dmu_tx_t *tx = dmu_tx_create(fs->fs_os);
	zap_tx_hold(tx, fs->fs_os, POSIX_MASTER_OBJ, 1);
	dmu_tx_mark_netfree(tx);
	if ((err = posix_tx_assign(tx)) != 0)
		return (err);
	err = zap_remove(fs->fs_os, POSIX_MASTER_OBJ, POSIX_M_USED, tx);
	dmu_tx_commit(tx);
	return (err);
}

int
posix_fs_open(objset_t *os, const posix_fs_opts_t *opts, posix_fs_t **fsp)
{
	posix_fs_t *fs = tarn_alloc(sizeof (*fs));
	fs->fs_os = os;
	if (opts != NULL)
		fs->fs_opts = *opts;
	else
		posix_fs_opts_default(&fs->fs_opts);
	posix_opts_fix(&fs->fs_opts);
	pthread_mutex_init(&fs->fs_opts_lock, NULL);
	pthread_mutex_init(&fs->fs_rename_lock, NULL);
	pthread_mutex_init(&fs->fs_unlinked_lock, NULL);
	pthread_mutex_init(&fs->fs_space_lock, NULL);
	pthread_mutex_init(&fs->fs_count_lock, NULL);
	for (int i = 0; i < POSIX_TAB_STRIPES; i++) {
		pthread_mutex_init(&fs->fs_tab[i].ps_lock, NULL);
		tarn_hash_init(&fs->fs_tab[i].ps_inodes, &pinode_table_conf);
	}
	int err = posix_fs_load(fs);
	if (err == 0) {
		err = posix_fs_load_used(fs, fs->fs_opts.pfo_readonly);
		if (err == EROFS) {
			/* the pool itself is read-only */
			fs->fs_opts.pfo_readonly = true;
			err = 0;
		}
	}
	fs->fs_zil = fs->fs_opts.pfo_readonly ? NULL : fs->fs_opts.pfo_zil;
	fs->fs_xinline = fs->fs_opts.pfo_xattr_inline;
	if (err == 0 && fs->fs_zil != NULL)
		err = posix_zil_replay(fs);
	if (err == 0 && !fs->fs_opts.pfo_readonly)
		err = posix_reclaim(fs);
	if (err != 0) {
		fs->fs_opts.pfo_readonly = true;        /* nothing to write back */
		posix_fs_close(fs);
		return (err);
	}
	*fsp = fs;
	return (0);
}

/* Store the inode count: the file system is clean from here on. */
static void
posix_fs_store_used(posix_fs_t *fs)
{
	uint64_t used[2] = { 0, fs->fs_inodes };
	dmu_tx_t *tx = dmu_tx_create(fs->fs_os);
	zap_tx_hold(tx, fs->fs_os, POSIX_MASTER_OBJ, 1);
	dmu_tx_mark_netfree(tx);
	if (posix_tx_assign(tx) != 0)
		return;         /* counted again at the next open */
	(void) zap_update(fs->fs_os, POSIX_MASTER_OBJ, POSIX_M_USED, 8, 2, used, tx);
	dmu_tx_commit(tx);
}

void
posix_fs_close(posix_fs_t *fs)
{
	if (!fs->fs_opts.pfo_readonly && fs->fs_root != 0)
		posix_fs_store_used(fs);
	for (int i = 0; i < POSIX_TAB_STRIPES; i++) {
		pinode_stripe_t *ps = &fs->fs_tab[i];
		pinode_t *pi;
		TARN_HASH_FOREACH(&ps->ps_inodes, pi, pi_link) {
			VERIFY3U(pi->pi_active, ==, 0);
			pthread_rwlock_destroy(&pi->pi_lock);
			tarn_free(pi);
		}
		tarn_hash_fini(&ps->ps_inodes);
		pthread_mutex_destroy(&ps->ps_lock);
	}
	pthread_mutex_destroy(&fs->fs_opts_lock);
	pthread_mutex_destroy(&fs->fs_rename_lock);
	pthread_mutex_destroy(&fs->fs_unlinked_lock);
	pthread_mutex_destroy(&fs->fs_space_lock);
	pthread_mutex_destroy(&fs->fs_count_lock);
	tarn_free(fs);
}

int
posix_fs_sync(posix_fs_t *fs)
{
	return (txg_wait_synced(dmu_objset_pool(fs->fs_os), 0));
}

int
posix_statfs(posix_fs_t *fs, struct statvfs *st)
{
	posix_fs_opts_t o;
	posix_opts(fs, &o);
	if (__atomic_load_n(&fs->fs_inodes_unknown, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&fs->fs_count_lock);
		if (fs->fs_inodes_unknown && posix_recount(fs) == 0)
			__atomic_store_n(&fs->fs_inodes_unknown, false, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&fs->fs_count_lock);
	}
	uint64_t inodes = __atomic_load_n(&fs->fs_inodes, __ATOMIC_RELAXED);
	/* as zfs's df: what the blocks took at the last sync, and the room */
	bool quota;
	uint64_t used, avail = posix_room(fs, &o, &quota);
	dmu_objset_space(fs->fs_os, &used);
	dmu_pool_t *dp = dmu_objset_pool(fs->fs_os);
	uint64_t synced = txg_last_synced(dp);
	tarn_mutex_lock(&fs->fs_space_lock, POSIX_SPACE);
	uint64_t pending = posix_pending_locked(fs, synced);
	tarn_mutex_unlock(&fs->fs_space_lock);
	if (avail == UINT64_MAX)
		avail = 0;              /* no hook, no quota: nothing to say */
	used += MIN(pending, avail);
	avail -= MIN(pending, avail);
	if (!quota) {           /* the kernel's cached writes' room is not for new ones */
		uint64_t keep = __atomic_load_n(&fs->fs_reserve, __ATOMIC_RELAXED);
		avail -= MIN(keep, avail);
	}
	const uint64_t frsize = 4096;
	memset(st, 0, sizeof (*st));
	st->f_bsize = o.pfo_recordsize;
	st->f_frsize = frsize;
	st->f_blocks = DIV_ROUND_UP(used, frsize) + avail / frsize;
	st->f_bfree = avail / frsize;
	st->f_bavail = avail / frsize;
	st->f_ffree = avail / DNODE_SIZE;
	st->f_favail = st->f_ffree;
	st->f_files = inodes + st->f_ffree;
	st->f_fsid = (unsigned long)(fs->fs_guid ^ (fs->fs_guid >> 32));
	st->f_namemax = POSIX_NAME_MAX;
	st->f_flag = o.pfo_readonly ? ST_RDONLY : 0;
	return (0);
}
