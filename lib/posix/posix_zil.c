/*
 * posix_zil.c — the file system's side of the intent log (lib/zil):
 * which changes are logged, and replay at mount.
 *
 * File writes are logged (posix_zil_write, from the write path with the
 * file's new mtime); every other change goes through zn_write, which
 * notes its txg as unlogged, so that an fsync soon after it syncs the txg
 * (zil.c's theory).  Atime updates go through zn_write_logged: losing one
 * in a crash is allowed, and they must not turn every fsync after a read
 * into a txg sync.  Replay runs at open, after the space counters are
 * loaded and before the unlinked set is reclaimed: each record is written
 * again as root (posix_write), then the file's mtime is set back to what
 * the write had made it.
 */
#include "posix_impl.h"

void
posix_zil_unlogged(posix_fs_t *fs, dmu_tx_t *tx)
{
	if (fs->fs_zil != NULL)
		zil_log_unlogged(fs->fs_zil, dmu_tx_get_txg(tx));
}

void
posix_zil_write(posix_fs_t *fs, posix_ino_t ino, uint64_t off, uint64_t len,
    const uint64_t mtime[2], dmu_tx_t *tx)
{
	if (fs->fs_zil != NULL)
		zil_log_write(fs->fs_zil, ino, off, len, dmu_tx_get_txg(tx), mtime);
}

/*
 * Write the znode of a setattr: a change of times only (what the kernel
 * sends before an fsync when it keeps mtime itself) is logged as the
 * three times; anything else is unlogged.
 */
int
posix_zil_setattr(posix_fs_t *fs, posix_ino_t ino, int mask, const znode_phys_t *old,
    const znode_phys_t *zp, dmu_tx_t *tx)
{
	const int times = POSIX_SET_ATIME | POSIX_SET_MTIME | POSIX_SET_ATIME_NOW |
	    POSIX_SET_MTIME_NOW | POSIX_SET_CTIME;
	if (fs->fs_zil == NULL || (mask & ~times) != 0)
		return (zn_write(fs, ino, old, zp, tx));
	int err = zn_write_logged(fs, ino, old, zp, tx);
	if (err == 0) {
		uint64_t t[6] = { zp->zp_atime[0], zp->zp_atime[1], zp->zp_mtime[0],
			zp->zp_mtime[1], zp->zp_ctime[0], zp->zp_ctime[1] };
		zil_log_times(fs->fs_zil, ino, t, dmu_tx_get_txg(tx));
	}
	return (err);
}

static int
posix_zil_replay_times(posix_fs_t *fs, const zil_lr_t *lr, const void *data)
{
	uint64_t t[6];
	memcpy(t, data, sizeof (t));
	posix_attr_t a;
	memset(&a, 0, sizeof (a));
	a.pa_atime.tv_sec = (time_t)t[0];
	a.pa_atime.tv_nsec = (long)t[1];
	a.pa_mtime.tv_sec = (time_t)t[2];
	a.pa_mtime.tv_nsec = (long)t[3];
	a.pa_ctime.tv_sec = (time_t)t[4];
	a.pa_ctime.tv_nsec = (long)t[5];
	int err = posix_setattr(fs, lr->lr_obj, &a,
	    POSIX_SET_ATIME | POSIX_SET_MTIME | POSIX_SET_CTIME, NULL, NULL);
	return (err == ENOENT ? 0 : err);
}

static int
posix_zil_replay_lr(void *arg, const zil_lr_t *lr, const void *data)
{
	posix_fs_t *fs = arg;
	if (lr->lr_type == ZIL_LR_TIMES)
		return (posix_zil_replay_times(fs, lr, data));
	uint64_t done = 0;
	int err = posix_write(fs, lr->lr_obj, lr->lr_off, lr->lr_len, data, NULL, &done);
	if (err == ENOENT || err == EINVAL || err == EISDIR)
		return (0);     /* not a file any more: nothing to redo */
	if (err != 0)
		return (err);
	if (done != lr->lr_len)
		return (SET_ERROR(EIO));
	posix_attr_t a;
	memset(&a, 0, sizeof (a));
	a.pa_mtime.tv_sec = (time_t)lr->lr_mtime[0];
	a.pa_mtime.tv_nsec = (long)lr->lr_mtime[1];
	if (lr->lr_mtime[0] != 0 || lr->lr_mtime[1] != 0)
		(void) posix_setattr(fs, lr->lr_obj, &a, POSIX_SET_MTIME, NULL, NULL);
	return (0);
}

/* Replay a claimed log (open, before the unlinked set is reclaimed). */
int
posix_zil_replay(posix_fs_t *fs)
{
	if (!zil_replay_needed(fs->fs_zil))
		return (0);
	return (zil_replay(fs->fs_zil, posix_zil_replay_lr, fs, &fs->fs_replayed));
}

uint64_t
posix_fs_replayed(const posix_fs_t *fs)
{
	return (fs->fs_replayed);
}

posix_sync_mode_t
posix_zil_sync_mode(posix_fs_t *fs)
{
	posix_fs_opts_t o;
	posix_opts(fs, &o);
	return (o.pfo_sync);
}
