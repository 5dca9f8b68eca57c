/*
 * vdev tree unit tests: leaf sizes and ashift, devices that are missing
 * or too small, state propagation through mirrors, raidz and the root,
 * names, lookups, GUID sums, the exclusive lock, preset top-level sizes,
 * flush against redundancy, counters, and I/O on a single-leaf top.
 */
#include "vdev_tt.h"

#include <pthread.h>
#include <sys/stat.h>

#define LEAF_ASIZE(psize, ashift) \
	P2ALIGN(P2ALIGN((psize), VDEV_LABEL_SIZE) - VDEV_LABEL_START_SIZE - \
	    VDEV_LABEL_END_SIZE, 1ULL << (ashift))

static void
test_leaf_sizes(void)
{
	uint64_t psize = 64 * MiB + 100 * KiB + 3;
	vdev_t *root = vdev_alloc(VDEV_TYPE_ROOT, 0);
	vdev_t *a = tt_leaf("ls", 0, psize);
	vdev_t *b = tt_leaf("ls", 1, psize + 3 * KiB);
	vdev_set_ashift(b, 13);
	vdev_add_child(root, a);
	vdev_add_child(root, b);
	TT_OK(vdev_open(root, false));
	TT_EQ(vdev_type(a), VDEV_TYPE_FILE);
	TT_EQ(vdev_psize(a), psize);
	TT_EQ(vdev_ashift(a), 9);
	TT_EQ(vdev_asize(a), LEAF_ASIZE(psize, 9));
	TT_EQ(vdev_ashift(b), 13);
	TT_EQ(vdev_asize(b), LEAF_ASIZE(psize + 3 * KiB, 13));
	TT_EQ(vdev_asize(root), vdev_asize(a) + vdev_asize(b));
	TT_EQ(vdev_psize_to_asize(b, 1), 8192);
	uint64_t size, sector;
	bool is_disk;
	TT_OK(vdev_leaf_probe(vdev_path(a), &size, &sector, &is_disk));
	TT_EQ(size, psize);
	TT_EQ(sector, 512);
	TT_CHECK(!is_disk);
	TT_EQ(vdev_leaf_probe("/nonexistent/x", &size, &sector, &is_disk), ENOENT);
	TT_EQ(vdev_leaf_probe(tt_tmpdir(), &size, &sector, &is_disk), ENOTBLK);
	tt_unlink_leaves(root);
	vdev_free(root);
}

static void
test_unopenable(void)
{
	vdev_t *root = vdev_alloc(VDEV_TYPE_ROOT, 0);
	vdev_t *m = vdev_alloc(VDEV_TYPE_MIRROR, 0);
	vdev_t *small = tt_leaf("un", 0, 4 * MiB);
	vdev_t *gone = vdev_alloc(VDEV_TYPE_FILE, 0);
	vdev_set_path(gone, "/nonexistent/dev");
	vdev_add_child(m, small);
	vdev_add_child(m, gone);
	vdev_add_child(root, m);
	TT_EQ(vdev_open(root, false), ENXIO);
	TT_EQ(vdev_state(small), VDEV_STATE_CANT_OPEN);
	TT_EQ(vdev_open_error(small), EOVERFLOW);
	TT_EQ(vdev_open_error(gone), ENOENT);
	TT_EQ(vdev_state(m), VDEV_STATE_CANT_OPEN);
	TT_EQ(vdev_state(root), VDEV_STATE_FAULTED);
	TT_CHECK(strcmp(vdev_state_name(vdev_state(small)), "UNAVAIL") == 0);
	uint8_t buf[512];
	vdev_io_t io = { .vio_size = 512, .vio_buf = buf };
	TT_EQ(vdev_read(m, &io), EIO);
	tt_unlink_leaves(root);
	vdev_free(root);
}

/* root: mirror(2) + raidz1(3) + one leaf; lose devices one by one. */
static vdev_t *
mixed_tree(void)
{
	vdev_t *root = vdev_alloc(VDEV_TYPE_ROOT, 0);
	vdev_t *m = vdev_alloc(VDEV_TYPE_MIRROR, 0);
	vdev_t *z = vdev_alloc(VDEV_TYPE_RAIDZ, 0);
	vdev_set_nparity(z, 1);
	for (int i = 0; i < 2; i++)
		vdev_add_child(m, tt_leaf("mx", i, TT_DEV_SIZE));
	for (int i = 2; i < 5; i++)
		vdev_add_child(z, tt_leaf("mx", i, TT_DEV_SIZE));
	vdev_add_child(root, m);
	vdev_add_child(root, z);
	vdev_add_child(root, tt_leaf("mx", 5, TT_DEV_SIZE));
	return (root);
}

static void
test_states(void)
{
	vdev_t *root = mixed_tree();
	vdev_t *m = vdev_child(root, 0), *z = vdev_child(root, 1);
	TT_OK(vdev_open(root, false));
	TT_EQ(vdev_state(root), VDEV_STATE_HEALTHY);
	TT_CHECK(strcmp(vdev_state_name(vdev_state(root)), "ONLINE") == 0);
	vdev_close(root);
	TT_EQ(vdev_state(vdev_child(m, 0)), VDEV_STATE_CLOSED);
	TT_EQ(vdev_fd(vdev_child(m, 0)), -1);

	(void) unlink(vdev_path(vdev_child(m, 1)));
	TT_OK(vdev_open(root, false));
	TT_EQ(vdev_state(m), VDEV_STATE_DEGRADED);
	TT_EQ(vdev_state(root), VDEV_STATE_DEGRADED);
	TT_EQ(vdev_state(z), VDEV_STATE_HEALTHY);
	vdev_close(root);

	(void) unlink(vdev_path(vdev_child(z, 0)));
	TT_OK(vdev_open(root, false));
	TT_EQ(vdev_state(z), VDEV_STATE_DEGRADED);
	vdev_close(root);

	(void) unlink(vdev_path(vdev_child(z, 2)));
	TT_EQ(vdev_open(root, false), ENXIO);
	TT_EQ(vdev_state(z), VDEV_STATE_CANT_OPEN);
	TT_EQ(vdev_state(root), VDEV_STATE_FAULTED);
	TT_EQ(vdev_state(m), VDEV_STATE_DEGRADED);
	/* A raidz's asize survives losing children (it was set at first open). */
	TT_CHECK(vdev_asize(z) > 0);
	vdev_close(root);
	tt_unlink_leaves(root);
	vdev_free(root);
}

static void
test_names_lookup_guids(void)
{
	vdev_t *root = mixed_tree();
	vdev_t *m = vdev_child(root, 0), *z = vdev_child(root, 1);
	TT_CHECK(strcmp(vdev_type_name(root), "root") == 0);
	TT_CHECK(strcmp(vdev_type_name(m), "mirror") == 0);
	TT_CHECK(strcmp(vdev_type_name(z), "raidz1") == 0);
	vdev_set_nparity(z, 3);
	TT_CHECK(strcmp(vdev_type_name(z), "raidz3") == 0);
	vdev_set_nparity(z, 1);
	TT_CHECK(strcmp(vdev_type_name(vdev_child(root, 2)), vdev_path(vdev_child(root, 2))) == 0);
	TT_CHECK(strcmp(vdev_state_name(VDEV_STATE_DEGRADED), "DEGRADED") == 0);
	TT_CHECK(strcmp(vdev_state_name(VDEV_STATE_FAULTED), "FAULTED") == 0);
	TT_CHECK(strcmp(vdev_state_name(VDEV_STATE_OFFLINE), "OFFLINE") == 0);
	TT_CHECK(strcmp(vdev_state_name(VDEV_STATE_REMOVED), "REMOVED") == 0);

	TT_CHECK(vdev_lookup_top(root, 1) == z);
	TT_CHECK(vdev_lookup_top(root, 3) == NULL);
	TT_CHECK(vdev_lookup_guid(root, vdev_guid(vdev_child(z, 2))) == vdev_child(z, 2));
	TT_CHECK(vdev_lookup_guid(root, 12345) == NULL);
	TT_CHECK(vdev_top(vdev_child(z, 1)) == z);
	TT_CHECK(vdev_top(vdev_child(root, 2)) == vdev_child(root, 2));
	TT_EQ(vdev_id(vdev_child(z, 1)), 1);

	uint64_t sum = vdev_guid(root) + vdev_guid(m) + vdev_guid(z) +
	    vdev_guid(vdev_child(root, 2));
	for (int i = 0; i < 2; i++)
		sum += vdev_guid(vdev_child(m, i));
	for (int i = 0; i < 3; i++)
		sum += vdev_guid(vdev_child(z, i));
	TT_EQ(vdev_guid_sum(root), sum);
	/* Freeing a child unlinks it and renumbers its siblings. */
	vdev_t *gone = vdev_child(z, 0);
	sum -= vdev_guid(gone);
	(void) unlink(vdev_path(gone));
	vdev_free(gone);
	TT_EQ(vdev_children(z), 2);
	TT_EQ(vdev_id(vdev_child(z, 0)), 0);
	TT_EQ(vdev_id(vdev_child(z, 1)), 1);
	TT_EQ(vdev_guid_sum(root), sum);
	tt_unlink_leaves(root);
	vdev_free(root);
}

/* A writer holds the devices: a second writer gets EBUSY; readers pass. */
static void
test_exclusive(void)
{
	vdev_t *a = tt_group_tree(VDEV_TYPE_MIRROR, 0, 2, 0, "ex");
	TT_OK(vdev_open(a, false));
	vdev_t *b = vdev_alloc(VDEV_TYPE_ROOT, 0);
	vdev_t *bl = vdev_alloc(VDEV_TYPE_FILE, 0);
	vdev_set_path(bl, vdev_path(vdev_child(vdev_child(a, 0), 0)));
	vdev_add_child(b, bl);
	TT_EQ(vdev_open(b, false), EBUSY);
	TT_EQ(vdev_open_error(bl), EBUSY);
	vdev_close(b);
	TT_OK(vdev_open(b, true));
	TT_CHECK(vdev_readonly(bl));
	uint8_t buf[512] = { 0 };
	vdev_io_t io = { .vio_size = 512, .vio_buf = buf };
	TT_EQ(vdev_write(bl, &io), EROFS);
	TT_OK(vdev_read(bl, &io));
	vdev_close(a);
	vdev_close(b);
	TT_OK(vdev_open(b, false));
	vdev_free(b);
	tt_unlink_leaves(a);
	vdev_free(a);
}

/* A top-level size recorded earlier holds: shrunk devices cannot open. */
static void
test_preset_asize(void)
{
	vdev_t *root = tt_group_tree(VDEV_TYPE_RAIDZ, 1, 3, 0, "ps");
	vdev_t *z = vdev_child(root, 0);
	TT_OK(vdev_open(root, false));
	uint64_t asize = vdev_asize(z);
	vdev_close(root);
	TT_OK(truncate(vdev_path(vdev_child(z, 0)), 2 * TT_DEV_SIZE));
	TT_OK(vdev_open(root, false));
	TT_EQ(vdev_asize(z), asize);
	TT_EQ(vdev_state(z), VDEV_STATE_HEALTHY);
	vdev_close(root);
	TT_OK(truncate(vdev_path(vdev_child(z, 1)), TT_DEV_SIZE - MiB));
	TT_OK(vdev_open(root, false));
	TT_EQ(vdev_state(vdev_child(z, 1)), VDEV_STATE_CANT_OPEN);
	TT_EQ(vdev_open_error(vdev_child(z, 1)), EOVERFLOW);
	TT_EQ(vdev_state(z), VDEV_STATE_DEGRADED);
	TT_EQ(vdev_asize(z), asize);
	tt_unlink_leaves(root);
	vdev_free(root);

	/* A single-leaf top too. */
	root = vdev_alloc(VDEV_TYPE_ROOT, 0);
	vdev_t *l = tt_leaf("ps1", 0, TT_DEV_SIZE);
	vdev_add_child(root, l);
	TT_OK(vdev_open(root, false));
	vdev_close(root);
	TT_OK(truncate(vdev_path(l), TT_DEV_SIZE - MiB));
	TT_EQ(vdev_open(root, false), ENXIO);
	TT_EQ(vdev_open_error(l), EOVERFLOW);
	tt_unlink_leaves(root);
	vdev_free(root);
}

static void
test_flush(void)
{
	vdev_t *root = mixed_tree();
	vdev_t *m = vdev_child(root, 0), *z = vdev_child(root, 1);
	vdev_fault_cfg_t fc = { 0 };
	vdev_fault_t *f0 = vdev_fault_attach(vdev_path(vdev_child(m, 0)), &fc);
	vdev_fault_t *f1 = vdev_fault_attach(vdev_path(vdev_child(m, 1)), &fc);
	vdev_fault_t *f2 = vdev_fault_attach(vdev_path(vdev_child(z, 0)), &fc);
	vdev_fault_t *f3 = vdev_fault_attach(vdev_path(vdev_child(z, 1)), &fc);
	TT_OK(vdev_open(root, false));
	TT_OK(vdev_flush(root));
	vdev_fault_set_dead(f0, true);
	vdev_fault_set_dead(f2, true);
	TT_OK(vdev_flush(root));
	TT_OK(vdev_flush(m));
	vdev_fault_set_dead(f1, true);
	TT_EQ(vdev_flush(m), EIO);
	TT_EQ(vdev_flush(root), EIO);
	vdev_fault_set_dead(f1, false);
	vdev_fault_set_dead(f3, true);
	TT_EQ(vdev_flush(z), EIO);
	vdev_close(root);
	vdev_fault_detach(f0);
	vdev_fault_detach(f1);
	vdev_fault_detach(f2);
	vdev_fault_detach(f3);
	tt_unlink_leaves(root);
	vdev_free(root);
}

/*
 * Many threads flushing the same tree (root -> mirror and raidz -> leaves:
 * flushes nest, and each is taken by the caller or by a worker, whoever
 * comes first): every flush of a healthy tree succeeds, one leaf of the
 * mirror dead changes nothing, and nothing hangs or outlives its batch
 * (ASan in CI).
 */
typedef struct flush_thr {
	vdev_t *root;
	int bad;
} flush_thr_t;

static void *
flush_thr_main(void *arg)
{
	flush_thr_t *a = arg;
	for (int i = 0; i < 400; i++)
		if (vdev_flush(a->root) != 0)
			a->bad++;
	return (NULL);
}

static void
test_flush_concurrent(void)
{
	vdev_t *root = mixed_tree();
	vdev_t *m = vdev_child(root, 0);
	vdev_fault_cfg_t fc = { 0 };
	vdev_fault_t *f0 = vdev_fault_attach(vdev_path(vdev_child(m, 0)), &fc);
	TT_OK(vdev_open(root, false));
	for (int round = 0; round < 2; round++) {
		vdev_fault_set_dead(f0, round == 1);
		pthread_t th[4];
		flush_thr_t a[4];
		for (int i = 0; i < 4; i++) {
			a[i] = (flush_thr_t){ .root = root };
			TT_OK(pthread_create(&th[i], NULL, flush_thr_main, &a[i]));
		}
		for (int i = 0; i < 4; i++) {
			pthread_join(th[i], NULL);
			TT_EQ(a[i].bad, 0);
		}
	}
	vdev_close(root);
	vdev_fault_detach(f0);
	tt_unlink_leaves(root);
	vdev_free(root);
}

/* A single leaf as a top-level vdev: I/O, checksum errors, bounds. */
static void
test_leaf_top_io(void)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, 8);
	vdev_t *root = vdev_alloc(VDEV_TYPE_ROOT, 0);
	vdev_t *l = tt_leaf("lt", 0, TT_DEV_SIZE);
	vdev_set_ashift(l, 12);
	vdev_add_child(root, l);
	TT_OK(vdev_open(root, false));
	uint8_t data[5000], buf[5000], tail[4096];
	tt_fill_random(&r, data, sizeof (data));
	vdev_io_t io = { .vio_offset = 8192, .vio_size = sizeof (data), .vio_buf = data };
	TT_OK(vdev_write(l, &io));
	/* The last sector is zero-padded on disk. */
	tt_file_rw(vdev_path(l), false, tail, 4096, 8192 + 4096);
	TT_CHECK(memcmp(tail, data + 4096, 5000 - 4096) == 0);
	for (size_t i = 5000 - 4096; i < 4096; i++)
		TT_CHECK(tail[i] == 0);
	tt_ck_t ck;
	tt_ck_set(&ck, data, sizeof (data));
	io = (vdev_io_t){ .vio_offset = 8192, .vio_size = sizeof (data), .vio_buf = buf,
	    .vio_verify = tt_verify, .vio_verify_arg = &ck };
	TT_OK(vdev_read(l, &io));
	TT_CHECK(memcmp(buf, data, sizeof (data)) == 0);
	uint8_t flipped = data[100] ^ 1;
	tt_file_rw(vdev_path(l), true, &flipped, 1, 8192 + 100);
	TT_EQ(vdev_read(l, &io), ECKSUM);
	TT_EQ(tt_cksum_errors(l), 1);
	TT_EQ(vdev_stat(l)->vs_ops[0], 2);
	TT_EQ(vdev_stat(l)->vs_bytes[1], 8192);
	io.vio_offset = vdev_asize(l) - 4096;
	TT_EQ(vdev_read(l, &io), EINVAL);
	io.vio_offset = vdev_asize(l) - 8192;
	TT_EQ(vdev_read(l, &io), ECKSUM);   /* zeros: readable, wrong checksum */
	TT_EQ(vdev_flush(root), 0);
	/* Raw leaf I/O reaches the labels; the data area starts at 4 MiB. */
	TT_OK(vdev_leaf_pread(l, tail, 4096, VDEV_LABEL_START_SIZE + 8192));
	TT_CHECK(memcmp(tail, data, 100) == 0 && tail[100] == flipped);
	TT_EQ(vdev_leaf_pread(l, tail, 4096, vdev_psize(l) - 1), EINVAL);
	tt_unlink_leaves(root);
	vdev_free(root);
}

/*
 * A loop device with 4 KiB sectors, when this host lets us make one
 * (root and losetup): type DISK, size by ioctl, ashift 12.  Skipped
 * otherwise.
 */
static void
test_block_device(void)
{
	char cmd[600], dev[128] = "";
	char *file = tt_dev("loopback", 0, TT_DEV_SIZE);
	snprintf(cmd, sizeof (cmd),
	    "losetup -f --show --sector-size 4096 '%s' 2>/dev/null", file);
	FILE *f = geteuid() == 0 ? popen(cmd, "r") : NULL;
	if (f != NULL) {
		if (fgets(dev, sizeof (dev), f) == NULL)
			dev[0] = '\0';
		(void) pclose(f);
	}
	dev[strcspn(dev, "\n")] = '\0';
	struct stat st;
	if (dev[0] == '\0' || stat(dev, &st) != 0 || !S_ISBLK(st.st_mode)) {
		printf("  (no loop device: skipped)\n");
		(void) unlink(file);
		tarn_free(file);
		return;
	}
	uint64_t size = 0, sector = 0;
	bool is_disk = false;
	TT_CHECK(vdev_leaf_probe(dev, &size, &sector, &is_disk) == 0);
	TT_CHECK(is_disk && size == TT_DEV_SIZE && sector == 4096);
	vdev_t *root = vdev_alloc(VDEV_TYPE_ROOT, 0);
	vdev_t *l = vdev_alloc(VDEV_TYPE_FILE, 0);
	vdev_set_path(l, dev);
	vdev_add_child(root, l);
	TT_CHECK(vdev_open(root, false) == 0);
	TT_CHECK(vdev_type(l) == VDEV_TYPE_DISK);
	TT_CHECK(vdev_ashift(l) == 12);
	TT_CHECK(vdev_asize(l) == LEAF_ASIZE(TT_DEV_SIZE, 12));
	uint8_t data[6000], buf[6000];
	memset(data, 0x42, sizeof (data));
	vdev_io_t io = { .vio_offset = 4096, .vio_size = sizeof (data), .vio_buf = data };
	TT_CHECK(vdev_write(l, &io) == 0);
	TT_CHECK(vdev_flush(root) == 0);
	io.vio_buf = buf;
	TT_CHECK(vdev_read(l, &io) == 0 && memcmp(buf, data, sizeof (data)) == 0);
	vdev_label_config_t cfg = { .vlc_pool_guid = 5, .vlc_txg = 1 };
	snprintf(cfg.vlc_name, sizeof (cfg.vlc_name), "loop");
	TT_CHECK(vdev_label_write_all(root, &cfg, true) == 0);
	vdev_label_config_t out;
	TT_CHECK(vdev_label_read_path(dev, &out) == 0);
	TT_CHECK(out.vlc_tree != NULL && out.vlc_leaf_guid == vdev_guid(l));
	vdev_config_free(&out);
	vdev_free(root);
	snprintf(cmd, sizeof (cmd), "losetup -d '%s'", dev);
	TT_CHECK(system(cmd) == 0);
	(void) unlink(file);
	tarn_free(file);
}

static void
test_cleanup(void)
{
	tt_tmpdir_cleanup();
}

TT_MAIN(
	{ "leaf_sizes", test_leaf_sizes },
	{ "unopenable", test_unopenable },
	{ "states", test_states },
	{ "names_lookup_guids", test_names_lookup_guids },
	{ "exclusive", test_exclusive },
	{ "preset_asize", test_preset_asize },
	{ "flush", test_flush },
	{ "flush_concurrent", test_flush_concurrent },
	{ "leaf_top_io", test_leaf_top_io },
	{ "block_device", test_block_device },
	{ "cleanup", test_cleanup },
)
