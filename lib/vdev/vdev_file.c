/*
 * vdev_file.c — leaf vdevs on regular files and block devices (one ops
 * table; VDEV_TYPE_DISK is what S_ISBLK finds).  A leaf's allocatable
 * space starts VDEV_LABEL_START_SIZE bytes into the device and ends
 * before the two back labels (docs/FORMAT.md "Leaf layout").  I/O is
 * pread/pwrite looping over short transfers; any failure is EIO.  A
 * writer holds flock(LOCK_EX) on the device for as long as it is open,
 * so a second process (or a second open of the same pool) gets EBUSY.
 * When a fault injector is registered for the path (vdev_fault.c), all
 * I/O goes through it.  Run-time injections (`tarn inject`,
 * vdev_inject.c) come before it: every leaf I/O passes vdev_leaf_raw,
 * flushes vdev_leaf_flush, opens vdev_file_open.
 */
#include "vdev_impl.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

int
vdev_fd_pread(int fd, void *buf, uint64_t size, uint64_t off)
{
	uint8_t *p = buf;
	while (size > 0) {
		ssize_t n = pread(fd, p, MIN(size, 1ULL << 30), (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return (SET_ERROR(EIO));
		p += n;
		off += (uint64_t)n;
		size -= (uint64_t)n;
	}
	return (0);
}

int
vdev_fd_pwrite(int fd, const void *buf, uint64_t size, uint64_t off)
{
	const uint8_t *p = buf;
	while (size > 0) {
		ssize_t n = pwrite(fd, p, MIN(size, 1ULL << 30), (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return (SET_ERROR(EIO));
		p += n;
		off += (uint64_t)n;
		size -= (uint64_t)n;
	}
	return (0);
}

/* Size and physical sector of an open device or file. */
static int
vdev_fd_probe(int fd, uint64_t *size, uint64_t *sector, bool *is_disk)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return (SET_ERROR(errno));
	if (S_ISREG(st.st_mode)) {
		*size = (uint64_t)st.st_size;
		*sector = SPA_MINBLOCKSIZE;
		*is_disk = false;
		return (0);
	}
	if (!S_ISBLK(st.st_mode))
		return (SET_ERROR(ENOTBLK));
	uint64_t bytes = 0;
	int lsec = 0;
	unsigned int psec = 0;
	if (ioctl(fd, BLKGETSIZE64, &bytes) != 0)
		return (SET_ERROR(errno));
	if (ioctl(fd, BLKSSZGET, &lsec) != 0 || lsec <= 0)
		lsec = SPA_MINBLOCKSIZE;
	if (ioctl(fd, BLKPBSZGET, &psec) != 0 || psec == 0)
		psec = (unsigned int)lsec;
	*size = bytes;
	*sector = MAX((uint64_t)psec, (uint64_t)lsec);
	*is_disk = true;
	return (0);
}

int
vdev_leaf_probe(const char *path, uint64_t *size, uint64_t *sector, bool *is_disk)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return (SET_ERROR(errno));
	int err = vdev_fd_probe(fd, size, sector, is_disk);
	(void) close(fd);
	return (err);
}

int
vdev_file_open(vdev_t *vd)
{
	uint64_t psize = 0, sector = 0;    /* set on success; zero for gcc -O3 */
	bool is_disk = false;
	int err;

	vdev_file_close(vd);
	if (vd->vdev_path == NULL)
		return (SET_ERROR(ENXIO));
	vdev_inject_t *vi = __atomic_load_n(&vd->vdev_inject, __ATOMIC_ACQUIRE);
	if (vi != NULL && vdev_inject_gone(vi))
		return (SET_ERROR(ENXIO));    /* `tarn inject -e nxio`: a pulled disk */
	if (vd->vdev_ashift != 0 && (vd->vdev_ashift < SPA_MINBLOCKSHIFT ||
	    vd->vdev_ashift > 16))
		return (SET_ERROR(EINVAL));
	int fd = open(vd->vdev_path, (vd->vdev_readonly ? O_RDONLY : O_RDWR) |
	    O_CLOEXEC);
	if (fd < 0)
		return (SET_ERROR(errno));
	err = vdev_fd_probe(fd, &psize, &sector, &is_disk);
	if (err == 0 && !vd->vdev_readonly && flock(fd, LOCK_EX | LOCK_NB) != 0)
		err = SET_ERROR(errno == EWOULDBLOCK ? EBUSY : errno);
	if (err == 0 && psize < VDEV_LEAF_MIN_PSIZE)
		err = SET_ERROR(EOVERFLOW);
	if (err != 0) {
		(void) close(fd);
		return (err);
	}
	if (vd->vdev_ashift == 0)
		vd->vdev_ashift = MAX(SPA_MINBLOCKSHIFT, highbit64(sector) - 1);
	vd->vdev_type = is_disk ? VDEV_TYPE_DISK : VDEV_TYPE_FILE;
	vd->vdev_psize = psize;
	vd->vdev_asize = P2ALIGN(P2ALIGN(psize, VDEV_LABEL_SIZE) -
	    VDEV_LABEL_START_SIZE - VDEV_LABEL_END_SIZE, 1ULL << vd->vdev_ashift);
	vd->vdev_fd = fd;
	vd->vdev_fault = vdev_fault_lookup(vd->vdev_path);
	return (0);
}

void
vdev_file_close(vdev_t *vd)
{
	if (vd->vdev_fd >= 0)
		(void) vdev_queue_drain(vd);   /* a failure was counted as a WRITE error */
	if (vd->vdev_fault != NULL) {
		vdev_fault_rele(vd->vdev_fault);
		vd->vdev_fault = NULL;
	}
	if (vd->vdev_fd >= 0) {
		(void) close(vd->vdev_fd);   /* drops the flock too */
		vd->vdev_fd = -1;
	}
}

/* ---- raw and counted leaf I/O ---- */

int
vdev_leaf_dev_io(vdev_t *vd, int rw, void *buf, uint64_t size, uint64_t phys)
{
	if (vd->vdev_fault != NULL)
		return (rw ? vdev_fault_pwrite(vd->vdev_fault, vd->vdev_fd, buf, size, phys) :
		    vdev_fault_pread(vd->vdev_fault, vd->vdev_fd, buf, size, phys));
	return (rw ? vdev_fd_pwrite(vd->vdev_fd, buf, size, phys) :
	    vdev_fd_pread(vd->vdev_fd, buf, size, phys));
}

/*
 * Every leaf I/O: a leaf with run-time injections goes through its queue
 * (vdev_queue.c: the injections, then merged or issued), any other
 * straight to the device.
 */
static int
vdev_leaf_raw(vdev_t *vd, int rw, void *buf, uint64_t size, uint64_t phys)
{
	vdev_inject_t *vi = __atomic_load_n(&vd->vdev_inject, __ATOMIC_ACQUIRE);
	if (vi == NULL)
		return (vdev_leaf_dev_io(vd, rw, buf, size, phys));
	return (vdev_queue_io(vd, vi, rw, buf, size, phys));
}

static int
vdev_leaf_check(vdev_t *vd, int rw, uint64_t size, uint64_t off, uint64_t limit)
{
	if (vd->vdev_fd < 0)
		return (SET_ERROR(ENXIO));
	if (rw && vd->vdev_readonly)
		return (SET_ERROR(EROFS));
	if (off > limit || size > limit - off)
		return (SET_ERROR(EINVAL));
	return (0);
}

int
vdev_leaf_pread(vdev_t *vd, void *buf, uint64_t size, uint64_t off)
{
	int err = vdev_leaf_check(vd, 0, size, off, vd->vdev_psize);
	if (err != 0)
		return (err);
	vdev_stat_io(vd, 0, size);
	return (vdev_leaf_raw(vd, 0, buf, size, off));
}

int
vdev_leaf_pwrite(vdev_t *vd, const void *buf, uint64_t size, uint64_t off)
{
	int err = vdev_leaf_check(vd, 1, size, off, vd->vdev_psize);
	if (err != 0)
		return (err);
	vdev_stat_io(vd, 1, size);
	return (vdev_leaf_raw(vd, 1, (void *)buf, size, off));
}

static int
vdev_leaf_io(vdev_t *vd, int rw, void *buf, uint64_t size, uint64_t off, int flags)
{
	int err = vdev_leaf_check(vd, rw, size, off, vd->vdev_asize);
	if (err != 0)
		return (err);
	vdev_stat_io(vd, rw, size);
	if (rw)
		__atomic_add_fetch(&vd->vdev_writing, 1, __ATOMIC_RELAXED);
	err = vdev_leaf_raw(vd, rw, buf, size, VDEV_LABEL_START_SIZE + off);
	if (rw)
		__atomic_sub_fetch(&vd->vdev_writing, 1, __ATOMIC_RELAXED);
	if (err != 0)
		vdev_stat_ioerr(vd, rw, flags);
	else if (__atomic_load_n(&vd->vdev_err_run, __ATOMIC_RELAXED) != 0)
		__atomic_store_n(&vd->vdev_err_run, 0, __ATOMIC_RELAXED);
	return (err);
}

int
vdev_leaf_read(vdev_t *vd, void *buf, uint64_t size, uint64_t off, int flags)
{
	return (vdev_leaf_io(vd, 0, buf, size, off, flags));
}

int
vdev_leaf_write(vdev_t *vd, const void *buf, uint64_t size, uint64_t off, int flags)
{
	return (vdev_leaf_io(vd, 1, (void *)buf, size, off, flags));
}

/*
 * The aligned body goes straight from the caller's buffer; the partial
 * last sector goes through a bounce buffer padded with zeros, so the
 * kernel never has to read-modify-write a sector.
 */
int
vdev_leaf_write_padded(vdev_t *vd, const void *buf, uint64_t size, uint64_t off,
    int flags)
{
	/* The top-level's sector: what the allocator rounded sizes to. */
	uint64_t sec = vdev_sector(vd->vdev_top != NULL ? vd->vdev_top : vd);
	uint64_t body = P2ALIGN(size, sec);
	uint64_t tail = size - body;
	uint8_t small[4096];
	int err;

	if (tail == 0)
		return (vdev_leaf_io(vd, 1, (void *)buf, size, off, flags));
	err = vdev_leaf_check(vd, 1, body + sec, off, vd->vdev_asize);
	if (err != 0)
		return (err);
	if (body > 0 && (err = vdev_leaf_io(vd, 1, (void *)buf, body, off, flags)) != 0)
		return (err);
	uint8_t *bounce = sec <= sizeof (small) ? small : tarn_alloc(sec);
	memcpy(bounce, (const uint8_t *)buf + body, tail);
	memset(bounce + tail, 0, sec - tail);
	err = vdev_leaf_io(vd, 1, bounce, sec, off + body, flags);
	if (bounce != small)
		tarn_free(bounce);
	return (err);
}

int
vdev_leaf_flush(vdev_t *vd)
{
	if (vd->vdev_fd < 0)
		return (SET_ERROR(ENXIO));
	vdev_inject_t *vi = __atomic_load_n(&vd->vdev_inject, __ATOMIC_ACQUIRE);
	if (vi != NULL && vdev_inject_flush_error(vi) != 0)
		return (SET_ERROR(ENXIO));
	if (vd->vdev_readonly)
		return (0);
	/* the queue's open write first; a queued write that failed fails the flush */
	int qerr = vdev_queue_drain(vd);
	int err = vd->vdev_fault != NULL ? vdev_fault_flush(vd->vdev_fault, vd->vdev_fd) :
	    fdatasync(vd->vdev_fd) != 0 ? SET_ERROR(EIO) : 0;
	return (err != 0 ? err : qerr != 0 ? SET_ERROR(EIO) : 0);
}

/* ---- the ops of a leaf that is itself a top-level vdev ---- */

static uint64_t
vdev_file_asize(vdev_t *vd, uint64_t psize)
{
	return (P2ROUNDUP(psize, vdev_sector(vd)));
}

static int
vdev_file_read(vdev_t *vd, vdev_io_t *io)
{
	int err = vdev_leaf_read(vd, io->vio_buf, io->vio_size, io->vio_offset,
	    io->vio_flags);
	if (err != 0) {
		io->vio_bad_children = 1;
		return (err == EINVAL ? err : SET_ERROR(EIO));
	}
	if (io->vio_verify != NULL &&
	    io->vio_verify(io->vio_verify_arg, io->vio_buf, io->vio_size) != 0) {
		vdev_stat_cksum(vd, io->vio_flags);
		io->vio_bad_children = 1;
		return (SET_ERROR(ECKSUM));
	}
	return (0);
}

static int
vdev_file_write(vdev_t *vd, vdev_io_t *io)
{
	int err = vdev_leaf_write_padded(vd, io->vio_buf, io->vio_size,
	    io->vio_offset, io->vio_flags);
	if (err != 0 && err != EINVAL && err != EROFS)
		err = SET_ERROR(EIO);
	return (err);
}

const vdev_ops_t vdev_file_ops = {
	.vop_open = vdev_file_open,
	.vop_close = vdev_file_close,
	.vop_asize = vdev_file_asize,
	.vop_read = vdev_file_read,
	.vop_write = vdev_file_write,
	.vop_flush = vdev_leaf_flush,
	.vop_state_change = NULL,
	.vop_name = "file",
	.vop_leaf = true,
};
