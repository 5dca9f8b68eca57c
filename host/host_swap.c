/*
 * host_swap.c — a mounted file system's object set replaced under its
 * mount (zfs rollback; receive later), without an unmount.
 *
 * Theory.  The dsl replaces a dataset's object set only when nothing uses
 * it (dsl_dataset_rollback's contract), and a mount uses it through its
 * posix_fs_t.  So, for a mounted dataset (host_mount_swap finds the mount
 * and holds the mount table's operation lock meanwhile):
 *
 *   1. tarn_fuse_swap_begin: requests stop reaching the file system and
 *      those in flight end; the kernel's references are given back.
 *   2. the table forgets the fs (nobody may use it now), it is synced
 *      (unless read-only) and closed.
 *   3. change(): the rollback, with the mount marked as being swapped so
 *      that the dsl's busy check lets it through.
 *   4. the dataset's file system is opened again with the mount's options
 *      (the new object set; the old one if the change failed), and
 *   5. tarn_fuse_swap_end serves it and tells the kernel: names looked up
 *      again, attributes and pages dropped, inodes and open files of
 *      before stale (ESTALE).  See fuse/tarn_fuse_swap.c.
 *
 * Mounts nested below the mountpoint (children, a clone mounted inside
 * its origin) go down before step 1 and come up after step 5: the kernel
 * drops every name of the swapped mount, mountpoint directories too, and
 * the mounts on them would silently go with them (host_mount.c,
 * mnt_swap_mounted).  A busy one refuses the change unless forced.
 *
 * The kernel mount never goes away: a shell whose working directory is
 * the mountpoint stays there, and the next `ls` or `cat` shows the new
 * contents.  What was written but not yet written back by the kernel is
 * lost, as the rollback discards it anyway.  A change that fails after
 * step 2 still leaves every file that was open stale: the file system
 * was closed under them.
 *
 * When step 1 refuses (a kernel older than 6.16 cannot be told to drop
 * every cached name; requests that stay in flight for 30 s), nothing has
 * happened yet: host_swap_dataset then takes the dataset's mounts down
 * (busy ones only with force), changes, and mounts them again, as zfs
 * without a live rollback would.  When step 4 fails there is nothing to
 * serve: the mount answers EIO and is taken down with force.
 */
#include "host_impl.h"
#include "tarn_fuse.h"

int
host_swap_fs(host_swap_t *hs, host_swap_fn_t change, void *arg, bool *ran)
{
	int e = tarn_fuse_swap_begin(hs->hs_fuse);
	*ran = e == 0;
	if (e != 0) {
		tarn_dprintf("host: no swap under the mount: %s\n", tarn_strerror(e));
		return (0);
	}
	hs->hs_publish(hs->hs_arg, NULL);
	if (!hs->hs_ro)
		(void) posix_fs_sync(hs->hs_fs);
	posix_fs_close(hs->hs_fs);
	hs->hs_fs = NULL;
	int r = change(arg);
	posix_fs_t *fs = NULL;
	e = hs->hs_open(hs->hs_arg, &fs);
	if (e != 0) {
		host_warn("cannot open the file system again under its mount: %s; "
		    "unmounting it\n", tarn_strerror(e));
		fs = NULL;
	}
	hs->hs_fs = fs;
	hs->hs_publish(hs->hs_arg, fs);
	tarn_fuse_swap_end(hs->hs_fuse, fs);
	return (r);
}

int
host_swap_dataset(struct dsl_pool *dp, const char *name, bool force, const char *verb,
    host_swap_fn_t change, void *arg)
{
	bool ran;
	int r = host_mount_swap(dp, name, force, verb, change, arg, &ran);
	if (ran)
		return (r);
	struct mnt_names *down;
	if (host_mount_down(dp, name, force, verb, &down) != 0)
		return (HOST_FAILED);
	r = change(arg);
	host_mount_up(dp, name, NULL, NULL, down);
	return (r);
}
