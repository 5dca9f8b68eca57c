/*
 * posix_data.c — file data: read, write (with the small-file block
 * growth), truncate, fallocate and hole punching, SEEK_DATA/SEEK_HOLE and
 * fsync.  Theory (block sizes, holes, locks): the top of posix_fs.c.
 */
#include "posix_impl.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <unistd.h>

/* Scan limits of SEEK_DATA / SEEK_HOLE (in blocks); see posix_lseek. */
#define POSIX_SEEK_HOLE_SCAN  65536
#define POSIX_SEEK_DATA_SCAN  256

/* Hold ino for reading (shared lock) and check it is a regular file. */
static int
data_enter(posix_fs_t *fs, posix_ino_t ino, bool write, pinode_t **pip, znode_phys_t *zp)
{
	pinode_t *pi = pinode_get(fs, ino);
	if (write)
		pthread_rwlock_wrlock(&pi->pi_lock);
	else
		pthread_rwlock_rdlock(&pi->pi_lock);
	int err = zn_read(fs, ino, zp);
	if (err == 0 && S_ISDIR(zp->zp_mode))
		err = SET_ERROR(EISDIR);
	else if (err == 0 && !S_ISREG(zp->zp_mode))
		err = SET_ERROR(EINVAL);
	if (err != 0) {
		pthread_rwlock_unlock(&pi->pi_lock);
		pinode_rele(fs, pi);
		return (err);
	}
	*pip = pi;
	return (0);
}

static void
data_exit(posix_fs_t *fs, pinode_t *pi)
{
	pthread_rwlock_unlock(&pi->pi_lock);
	pinode_rele(fs, pi);
}

static int
data_read(posix_fs_t *fs, posix_ino_t ino, uint64_t off, uint64_t len, void *buf,
    uint64_t *nread, bool cached)
{
	pinode_t *pi;
	znode_phys_t zp;
	*nread = 0;
	int err = data_enter(fs, ino, false, &pi, &zp);
	if (err != 0)
		return (err);
	if (off < zp.zp_size) {
		uint64_t n = MIN(len, zp.zp_size - off);
		err = cached ? dmu_read_if_cached(fs->fs_os, ino, off, n, buf) :
		    dmu_read(fs->fs_os, ino, off, n, buf);
		if (err == 0)
			*nread = n;
	}
	data_exit(fs, pi);
	return (err);
}

int
posix_read(posix_fs_t *fs, posix_ino_t ino, uint64_t off, uint64_t len, void *buf,
    uint64_t *nread)
{
	return (data_read(fs, ino, off, len, buf, nread, false));
}

int
posix_read_if_cached(posix_fs_t *fs, posix_ino_t ino, uint64_t off, uint64_t len, void *buf,
    uint64_t *nread)
{
	return (data_read(fs, ino, off, len, buf, nread, true));
}

/*
 * Grow the block of a one-block file so that it covers `end` (a power of
 * two, at most the record size); *bsp is the block size after.  A file
 * that has ever had more than one block (POSIX_ZF_MULTIBLOCK) keeps its
 * block size, as does any file once it reaches the record size.
 */
static int
data_grow_block(posix_fs_t *fs, posix_ino_t ino, const znode_phys_t *zp, uint64_t end,
    dmu_tx_t *tx, uint32_t *bsp)
{
	posix_fs_opts_t o;
	posix_opts(fs, &o);
	dmu_object_info_t doi;
	int err = dmu_object_info(fs->fs_os, ino, &doi);
	if (err != 0)
		return (err);
	uint32_t bs = doi.doi_data_block_size;
	*bsp = bs;
	if ((zp->zp_flags & POSIX_ZF_MULTIBLOCK) || bs >= o.pfo_recordsize || end <= bs ||
	    doi.doi_max_offset > bs)
		return (0);
	uint64_t nbs = end >= o.pfo_recordsize ? o.pfo_recordsize :
	    MAX(SPA_MINBLOCKSIZE, 1ULL << highbit64(end - 1));
	err = dmu_object_set_blocksize(fs->fs_os, ino, (uint32_t)nbs, tx);
	if (err == 0)
		*bsp = (uint32_t)nbs;
	return (err == ENOTSUP ? 0 : err);
}

/* A write by someone other than root drops set-user-ID and set-group-ID. */
static void
data_kill_suid(znode_phys_t *zp, const posix_cred_t *cred)
{
	if (cred == NULL || cred->pc_uid == 0)
		return;
	zp->zp_mode &= ~(uint64_t)S_ISUID;
	if (zp->zp_mode & S_IXGRP)
		zp->zp_mode &= ~(uint64_t)S_ISGID;
}

/* One transaction of a write: [off, off + n) of buf. */
static int
data_write_chunk(posix_fs_t *fs, posix_ino_t ino, znode_phys_t *zp, uint64_t off,
    uint64_t n, const void *buf, const posix_cred_t *cred, bool cached)
{
	uint64_t end = off + n;
	int err = cached ? posix_space_check_cached(fs, n) : posix_space_check(fs, n);
	if (err != 0)
		return (err);
	dmu_tx_t *tx = dmu_tx_create(fs->fs_os);
	dmu_tx_hold_write(tx, ino, off, n);
	dmu_tx_hold_bonus(tx, ino);
	if ((err = posix_tx_assign(tx)) != 0)
		return (err);
	uint32_t bs = 0;
	err = data_grow_block(fs, ino, zp, end, tx, &bs);
	if (err == 0)
		err = dmu_write(fs->fs_os, ino, off, n, buf, tx);
	if (err == 0) {
		znode_phys_t old = *zp;
		if (end > bs)
			zp->zp_flags |= POSIX_ZF_MULTIBLOCK;
		uint64_t now[2];
		posix_now(now);
		zp->zp_size = MAX(zp->zp_size, end);
		memcpy(zp->zp_mtime, now, 16);
		memcpy(zp->zp_ctime, now, 16);
		data_kill_suid(zp, cred);
		/* a write that changes the mode is not what the log replays */
		if (zp->zp_mode == old.zp_mode)
			err = zn_write_logged(fs, ino, &old, zp, tx);
		else
			err = zn_write(fs, ino, &old, zp, tx);
		if (err != 0)
			*zp = old;
		else
			posix_zil_write(fs, ino, off, n, now, tx);
	}
	dmu_tx_commit(tx);
	return (err);
}

static int
data_write(posix_fs_t *fs, posix_ino_t ino, uint64_t off, uint64_t len, const void *buf,
    const posix_cred_t *cred, bool cached, uint64_t *nwritten)
{
	*nwritten = 0;
	int err = posix_writable(fs);
	if (err != 0)
		return (err);
	if (off + len < off || off + len > posix_maxfilesize(fs))
		return (SET_ERROR(EFBIG));
	pinode_t *pi;
	znode_phys_t zp;
	if ((err = data_enter(fs, ino, true, &pi, &zp)) != 0)
		return (err);
	uint64_t done = 0;
	while (done < len) {
		uint64_t n = MIN(len - done, POSIX_WRITE_CHUNK);
		err = data_write_chunk(fs, ino, &zp, off + done, n, (const uint8_t *)buf + done,
		    cred, cached);
		if (err != 0)
			break;
		done += n;
	}
	data_exit(fs, pi);
	*nwritten = done;
	if (done > 0 && posix_zil_sync_mode(fs) == POSIX_SYNC_ALWAYS) {
		int e = posix_fsync(fs, ino, true);
		if (e != 0)
			return (e);
	}
	return (done > 0 ? 0 : err);
}

int
posix_write(posix_fs_t *fs, posix_ino_t ino, uint64_t off, uint64_t len, const void *buf,
    const posix_cred_t *cred, uint64_t *nwritten)
{
	return (data_write(fs, ino, off, len, buf, cred, false, nwritten));
}

int
posix_write_cached(posix_fs_t *fs, posix_ino_t ino, uint64_t off, uint64_t len,
    const void *buf, const posix_cred_t *cred, uint64_t *nwritten)
{
	return (data_write(fs, ino, off, len, buf, cred, true, nwritten));
}

int
posix_extend(posix_fs_t *fs, posix_ino_t ino, uint64_t size)
{
	int err = posix_writable(fs);
	if (err != 0)
		return (err);
	pinode_t *pi;
	znode_phys_t zp;
	if ((err = data_enter(fs, ino, true, &pi, &zp)) != 0)
		return (err);
	if (size > zp.zp_size) {
		dmu_tx_t *tx = dmu_tx_create(fs->fs_os);
		dmu_tx_hold_bonus(tx, ino);
		dmu_tx_mark_netfree(tx);        /* a size only: it must work on a full pool */
		if ((err = posix_tx_assign(tx)) == 0) {
			znode_phys_t old = zp;
			zp.zp_size = size;
			err = zn_write(fs, ino, &old, &zp, tx);
			if (err != 0)
				zp = old;
			dmu_tx_commit(tx);
		}
	}
	data_exit(fs, pi);
	return (err);
}

/*
 * Set the size of ino to `size` inside tx (the caller holds the inode
 * lock as writer and writes zp): going down frees the blocks past the end
 * and zeroes the tail of the last one; going up only changes the size.
 */
int
posix_truncate_locked(posix_fs_t *fs, posix_ino_t ino, znode_phys_t *zp, uint64_t size,
    dmu_tx_t *tx)
{
	if (size < zp->zp_size) {
		int err = dmu_free_range(fs->fs_os, ino, size, DMU_OBJECT_END, tx);
		if (err != 0)
			return (err);
	}
	zp->zp_size = size;
	return (0);
}

/*
 * fallocate mode 0 / KEEP_SIZE: check the space, extend the size (and
 * ZERO_RANGE past the end: only the size, holes take no space).
 */
static int
data_reserve(posix_fs_t *fs, posix_ino_t ino, znode_phys_t *zp, int mode, uint64_t end,
    uint64_t len)
{
	bool grow = !(mode & FALLOC_FL_KEEP_SIZE) && end > zp->zp_size;
	int err = (mode & FALLOC_FL_ZERO_RANGE) ? 0 : posix_space_check(fs, len);
	if (err != 0 || !grow)
		return (err);
	dmu_tx_t *tx = dmu_tx_create(fs->fs_os);
	dmu_tx_hold_bonus(tx, ino);
	if ((err = posix_tx_assign(tx)) != 0)
		return (err);
	znode_phys_t old = *zp;
	uint64_t now[2];
	posix_now(now);
	zp->zp_size = end;
	memcpy(zp->zp_mtime, now, 16);
	memcpy(zp->zp_ctime, now, 16);
	/*
	 * Logged as a setattr of the size (its replay extends the file the
	 * same way), so that an fsync after fallocate + write, as fio's
	 * layout and Samba's "strict allocate" do, needs no txg sync.
	 */
	err = posix_zil_setattr(fs, ino, POSIX_SET_SIZE, &old, zp, tx);
	dmu_tx_commit(tx);
	return (err);
}

/* FALLOC_FL_PUNCH_HOLE: free [off, end) within the file. */
static int
data_punch(posix_fs_t *fs, posix_ino_t ino, znode_phys_t *zp, uint64_t off, uint64_t end)
{
	end = MIN(end, zp->zp_size);
	if (off >= end)
		return (0);
	dmu_tx_t *tx = dmu_tx_create(fs->fs_os);
	dmu_tx_hold_free(tx, ino, off, end - off);
	dmu_tx_hold_bonus(tx, ino);
	dmu_tx_mark_netfree(tx);
	int err = posix_tx_assign(tx);
	if (err != 0)
		return (err);
	bool logged = posix_zil_punch_loggable(fs);
	if (logged)
		posix_zil_begin();
	err = dmu_free_range(fs->fs_os, ino, off, end - off, tx);
	if (err == 0) {
		znode_phys_t old = *zp;
		uint64_t now[2];
		posix_now(now);
		memcpy(zp->zp_mtime, now, 16);
		memcpy(zp->zp_ctime, now, 16);
		err = zn_write(fs, ino, &old, zp, tx);
	}
	if (logged) {
		if (err == 0)
			posix_zil_punch(fs, tx, ino, off, end - off, zp);
		posix_zil_end(fs, tx, err);
	}
	dmu_tx_commit(tx);
	return (err);
}

/*
 * fallocate.  Tarn, like ZFS, does not preallocate (a copy-on-write file
 * system writes new blocks anyway): mode 0 and KEEP_SIZE check that the
 * space is there now (ENOSPC, or EDQUOT under a quota) and mode 0 extends
 * the size; a later write may still find the pool full.  PUNCH_HOLE|KEEP_SIZE
 * frees the range.  ZERO_RANGE is a punch (holes read as zeros) that, without
 * KEEP_SIZE, also extends the size to the end of the range, as on ZFS.
 */
int
posix_falloc(posix_fs_t *fs, posix_ino_t ino, int mode, uint64_t off, uint64_t len)
{
	int err = posix_writable(fs);
	if (err != 0)
		return (err);
	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))
		return (SET_ERROR(EOPNOTSUPP));
	if ((mode & FALLOC_FL_PUNCH_HOLE) && !(mode & FALLOC_FL_KEEP_SIZE))
		return (SET_ERROR(EOPNOTSUPP));
	if ((mode & FALLOC_FL_PUNCH_HOLE) && (mode & FALLOC_FL_ZERO_RANGE))
		return (SET_ERROR(EOPNOTSUPP));
	if (len == 0 || (int64_t)off < 0 || (int64_t)len < 0)
		return (SET_ERROR(EINVAL));
	if (off + len < off || off + len > posix_maxfilesize(fs))
		return (SET_ERROR(EFBIG));
	pinode_t *pi;
	znode_phys_t zp;
	if ((err = data_enter(fs, ino, true, &pi, &zp)) != 0)
		return (err == EINVAL ? SET_ERROR(ENODEV) : err);
	if (mode & FALLOC_FL_PUNCH_HOLE)
		err = data_punch(fs, ino, &zp, off, off + len);
	else if (mode & FALLOC_FL_ZERO_RANGE) {
		err = data_punch(fs, ino, &zp, off, off + len);
		if (err == 0)
			err = data_reserve(fs, ino, &zp, mode, off + len, len);
	} else
		err = data_reserve(fs, ino, &zp, mode, off + len, len);
	data_exit(fs, pi);
	return (err);
}

/* Does block blkid (of size bs) hold any non-zero byte? */
static int
data_block_has_data(posix_fs_t *fs, posix_ino_t ino, uint64_t blkid, uint32_t bs,
    uint64_t max_offset, uint8_t *buf, bool *data)
{
	*data = false;
	if (blkid * bs >= max_offset)
		return (0);
	int err = dmu_read(fs->fs_os, ino, blkid * bs, bs, buf);
	if (err != 0)
		return (err);
	const uint64_t *w = (const uint64_t *)buf;
	for (uint32_t i = 0; i < bs / 8; i++) {
		if (w[i] != 0) {
			*data = true;
			break;
		}
	}
	return (0);
}

/*
 * SEEK_DATA / SEEK_HOLE, per block: a block is a hole when it reads as
 * zeros (Tarn writes zero blocks as holes, so this is also what is on
 * disk).  The DMU does not yet tell holes from data without reading, so
 * the scan is bounded: SEEK_DATA reports data where it stops after
 * POSIX_SEEK_HOLE_SCAN hole blocks, SEEK_HOLE reports the end of file
 * after POSIX_SEEK_DATA_SCAN data blocks (both allowed: a hole may be
 * reported as data).
 */
int
posix_lseek(posix_fs_t *fs, posix_ino_t ino, uint64_t off, int whence, uint64_t *out)
{
	if (whence != SEEK_DATA && whence != SEEK_HOLE)
		return (SET_ERROR(EINVAL));
	pinode_t *pi;
	znode_phys_t zp;
	int err = data_enter(fs, ino, false, &pi, &zp);
	if (err != 0)
		return (err);
	dmu_object_info_t doi;
	if (off >= zp.zp_size) {
		err = SET_ERROR(ENXIO);
	} else if ((err = dmu_object_info(fs->fs_os, ino, &doi)) == 0) {
		uint32_t bs = doi.doi_data_block_size;
		uint8_t *buf = tarn_alloc(bs);
		uint64_t blkid = off / bs, scanned = 0, pos = zp.zp_size;
		bool want = whence == SEEK_DATA, found = false;
		uint64_t limit = want ? POSIX_SEEK_HOLE_SCAN : POSIX_SEEK_DATA_SCAN;
		while (err == 0 && blkid * bs < zp.zp_size && scanned++ < limit) {
			bool data;
			err = data_block_has_data(fs, ino, blkid, bs, doi.doi_max_offset, buf, &data);
			if (err == 0 && data == want) {
				pos = MAX(off, blkid * bs);
				found = true;
				break;
			}
			blkid++;
		}
		tarn_free(buf);
		if (err == 0 && !found && want && blkid * bs >= zp.zp_size)
			err = SET_ERROR(ENXIO);
		else if (err == 0 && !found && want)
			pos = blkid * bs;       /* scan bound: report data here */
		if (err == 0)
			*out = pos;
	}
	data_exit(fs, pi);
	return (err);
}

/*
 * Through the intent log when the file system has one (posix_zil.c says
 * what it covers), else by syncing the txg.  Either way every change made
 * before the call is durable on return, not only ino's.
 */
int
posix_fsync(posix_fs_t *fs, posix_ino_t ino, bool datasync)
{
	if (posix_zil_sync_mode(fs) == POSIX_SYNC_DISABLED)
		return (0);
	if (fs->fs_zil != NULL)
		return (zil_commit(fs->fs_zil));
	return (posix_fs_sync(fs));
}
