/*
 * vdev_tt.h — helpers shared by the vdev unit tests: sparse device
 * files in tt_tmpdir(), trees built from them, a checksum-based verify
 * callback, and direct access to a leaf file's data area (to corrupt it
 * or to check what is on it) that does not go through the vdev layer.
 */
#ifndef TARN_VDEV_TT_H
#define TARN_VDEV_TT_H

#include "tt.h"
#include "vdev.h"
#include "cksum.h"

#include <fcntl.h>
#include <unistd.h>

#define TT_DEV_SIZE (64 * MiB)

/* Path of device file `i` with a prefix, created sparse at `size`. */
static inline char *
tt_dev(const char *prefix, int i, uint64_t size)
{
	char path[512];
	snprintf(path, sizeof (path), "%s/%s%d", tt_tmpdir(), prefix, i);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
		perror(path);
		exit(2);
	}
	close(fd);
	return (tarn_strdup(path));
}

static inline vdev_t *
tt_leaf(const char *prefix, int i, uint64_t size)
{
	vdev_t *vd = vdev_alloc(VDEV_TYPE_FILE, 0);
	char *path = tt_dev(prefix, i, size);
	vdev_set_path(vd, path);
	tarn_free(path);
	return (vd);
}

/* root -> one group (mirror or raidz) of n fresh leaves. */
static inline vdev_t *
tt_group_tree(vdev_type_t type, int nparity, int n, uint64_t ashift, const char *prefix)
{
	vdev_t *root = vdev_alloc(VDEV_TYPE_ROOT, 0);
	vdev_t *g = vdev_alloc(type, 0);
	vdev_set_nparity(g, nparity);
	vdev_set_ashift(g, ashift);
	for (int i = 0; i < n; i++)
		vdev_add_child(g, tt_leaf(prefix, i, TT_DEV_SIZE));
	vdev_add_child(root, g);
	return (root);
}

static inline void
tt_unlink_leaves(vdev_t *vd)
{
	if (vdev_path(vd) != NULL)
		(void) unlink(vdev_path(vd));
	for (int c = 0; c < vdev_children(vd); c++)
		tt_unlink_leaves(vdev_child(vd, c));
}

/* Verify callback: the block's XXH3-128 must match. */
typedef struct tt_ck {
	zio_cksum_t tc_ck;
	int tc_calls;
} tt_ck_t;

static inline int
tt_verify(void *arg, const void *buf, uint64_t size)
{
	tt_ck_t *t = arg;
	zio_cksum_t zc;
	t->tc_calls++;
	zio_checksum_compute(ZIO_CHECKSUM_XXH3_128, buf, size, &zc);
	return (zio_cksum_equal(&zc, &t->tc_ck) ? 0 : ECKSUM);
}

static inline void
tt_ck_set(tt_ck_t *t, const void *buf, uint64_t size)
{
	memset(t, 0, sizeof (*t));
	zio_checksum_compute(ZIO_CHECKSUM_XXH3_128, buf, size, &t->tc_ck);
}

static inline void
tt_fill_random(tarn_rand_t *r, void *buf, uint64_t size)
{
	uint8_t *p = buf;
	uint64_t i = 0;
	for (; i + 8 <= size; i += 8) {
		uint64_t v = tarn_rand_u64(r);
		memcpy(p + i, &v, 8);
	}
	for (; i < size; i++)
		p[i] = (uint8_t)tarn_rand_u64(r);
}

/* Raw access to a leaf file's data area (offset in allocatable space). */
static inline void
tt_file_rw(const char *path, bool write, void *buf, uint64_t size, uint64_t off)
{
	int fd = open(path, write ? O_WRONLY : O_RDONLY);
	if (fd < 0) { perror(path); exit(2); }
	ssize_t n = write ? pwrite(fd, buf, size, (off_t)(VDEV_LABEL_START_SIZE + off)) :
	    pread(fd, buf, size, (off_t)(VDEV_LABEL_START_SIZE + off));
	if (n != (ssize_t)size) { perror("tt_file_rw"); exit(2); }
	close(fd);
}

static inline uint64_t
tt_cksum_errors(const vdev_t *vd)
{
	return (vdev_stat(vd)->vs_checksum_errors);
}

#endif
