/*
 * The leaf I/O queue (vdev_queue.c): adjacent writes that wait behind a
 * delayed device leave it as one device I/O with the right bytes (in
 * order, prepended, across a RAID-Z-style gap whose bytes stay as they
 * were), a read sees the writes still queued, a request failed by an
 * injection fails alone while its neighbours merge, and a queued write
 * that fails after its caller returned is written request by request
 * and reported by the next flush; a clear lets nothing more ride on a
 * service time charged under the cleared delay.
 */
#include "vdev_tt.h"

#define BLK 4096
#define NBLK 32

typedef struct qt {
	vdev_t *root;
	vdev_t *leaf;
	vdev_fault_t *vf;
} qt_t;

/* root -> one leaf (ashift 9), delayed `ms` per I/O, one lane; a fault injector on it. */
static void
qt_open(qt_t *q, const char *prefix, uint64_t ms)
{
	q->root = vdev_alloc(VDEV_TYPE_ROOT, 0);
	q->leaf = tt_leaf(prefix, 0, TT_DEV_SIZE);
	vdev_fault_cfg_t fc = { .vfc_seed = 1 };
	q->vf = vdev_fault_attach(vdev_path(q->leaf), &fc);
	vdev_add_child(q->root, q->leaf);
	TT_OK(vdev_open(q->root, false));
	vdev_inject_spec_t d = { .vis_kind = VDEV_INJECT_DELAY,
		.vis_rw = VDEV_INJECT_READ | VDEV_INJECT_WRITE, .vis_ppm = VDEV_INJECT_PPM_MAX,
		.vis_latency_us = ms * 1000, .vis_lanes = 1 };
	uint64_t id;
	TT_OK(vdev_inject_add(q->leaf, &d, &id));
}

static void
qt_close(qt_t *q)
{
	tt_unlink_leaves(q->root);
	vdev_free(q->root);
	vdev_fault_detach(q->vf);
}

/* One write as zio issues it in a batch: completion deferred. */
static int
qt_write(qt_t *q, const void *buf, uint64_t size, uint64_t off)
{
	vdev_io_t io = { .vio_offset = off, .vio_size = size, .vio_buf = (void *)buf };
	bool was = vdev_inject_defer(true);
	vdev_tree_enter_read(q->root);
	int e = vdev_write(q->leaf, &io);
	vdev_tree_exit(q->root);
	(void) vdev_inject_defer(was);
	return (e);
}

static uint64_t
qt_issued_writes(qt_t *q)
{
	uint64_t issued[2];
	vdev_queue_stats(q->leaf, issued);
	return (issued[1]);
}

/* The leaf file's bytes at off of its allocatable space (tt_file_rw adds the labels). */
static void
qt_raw(qt_t *q, void *buf, uint64_t size, uint64_t off)
{
	tt_file_rw(vdev_path(q->leaf), false, buf, size, off);
}

/* 32 adjacent blocks, in order and prepended, leave as 2 device writes, bytes intact. */
static void
test_merge(void)
{
	qt_t q;
	qt_open(&q, "merge", 200);
	static uint8_t data[NBLK * BLK], back[NBLK * BLK];
	tarn_rand_t r;
	tarn_rand_seed(&r, 7);
	tt_fill_random(&r, data, sizeof (data));
	uint64_t t0 = tarn_now_ns();
	/* block 0 starts the device; 16..31 ascending, then 15..1 before them */
	TT_OK(qt_write(&q, data, BLK, 0));
	for (int b = 16; b < NBLK; b++)
		TT_OK(qt_write(&q, data + b * BLK, BLK, (uint64_t)b * BLK));
	for (int b = 15; b >= 1; b--)
		TT_OK(qt_write(&q, data + b * BLK, BLK, (uint64_t)b * BLK));
	TT_EQ(qt_issued_writes(&q), 2);
	TT_EQ(vdev_stat(q.leaf)->vs_ops[1], NBLK);
	uint64_t gen, until = vdev_inject_take(&gen);
	/* two service times of 200 ms, not 32 */
	TT_ASSERT(until - t0 >= 400ULL * 1000000 && until - t0 < 1000ULL * 1000000);
	/* a read through the vdev sees the queued writes */
	vdev_io_t io = { .vio_offset = 0, .vio_size = sizeof (back), .vio_buf = back };
	vdev_tree_enter_read(q.root);
	TT_OK(vdev_read(q.leaf, &io));
	vdev_tree_exit(q.root);
	TT_ASSERT(memcmp(back, data, sizeof (back)) == 0);
	TT_OK(vdev_flush(q.leaf));
	memset(back, 0, sizeof (back));
	qt_raw(&q, back, sizeof (back), 0);
	TT_ASSERT(memcmp(back, data, sizeof (back)) == 0);
	vdev_inject_clear(q.root, 0);
	qt_close(&q);
}

/* Writes 512 bytes apart (RAID-Z skip sectors) merge; the gaps keep their bytes. */
static void
test_gap(void)
{
	qt_t q;
	qt_open(&q, "gap", 100);
	const uint64_t stride = BLK + 512;
	static uint8_t before[8 * (BLK + 512)], data[8 * BLK], back[8 * (BLK + 512)];
	tarn_rand_t r;
	tarn_rand_seed(&r, 9);
	tt_fill_random(&r, before, sizeof (before));
	tt_fill_random(&r, data, sizeof (data));
	tt_file_rw(vdev_path(q.leaf), true, before, sizeof (before), 0);
	for (int b = 0; b < 8; b++)
		TT_OK(qt_write(&q, data + b * BLK, BLK, b * stride));
	TT_EQ(qt_issued_writes(&q), 2);
	TT_OK(vdev_flush(q.leaf));
	qt_raw(&q, back, sizeof (back), 0);
	for (int b = 0; b < 8; b++) {
		TT_ASSERT(memcmp(back + b * stride, data + b * BLK, BLK) == 0);
		TT_ASSERT(memcmp(back + b * stride + BLK, before + b * stride + BLK, 512) == 0);
	}
	uint64_t gen;
	(void) vdev_inject_take(&gen);
	vdev_inject_clear(q.root, 0);
	qt_close(&q);
}

/* A request an EIO injection fails is not done and fails alone; its neighbours merge. */
static void
test_error_alone(void)
{
	qt_t q;
	qt_open(&q, "erralone", 100);
	static uint8_t zero[4 * BLK], data[4 * BLK], back[4 * BLK];
	tarn_rand_t r;
	tarn_rand_seed(&r, 11);
	tt_fill_random(&r, data, sizeof (data));
	tt_file_rw(vdev_path(q.leaf), true, zero, sizeof (zero), 0);
	TT_OK(qt_write(&q, data, BLK, 0));
	TT_OK(qt_write(&q, data + BLK, BLK, BLK));
	vdev_inject_spec_t e = { .vis_kind = VDEV_INJECT_EIO, .vis_rw = VDEV_INJECT_WRITE,
		.vis_ppm = VDEV_INJECT_PPM_MAX };
	uint64_t id;
	TT_OK(vdev_inject_add(q.leaf, &e, &id));
	TT_EQ(qt_write(&q, data + 2 * BLK, BLK, 2 * BLK), EIO);
	TT_EQ(vdev_inject_clear(q.root, id), 1);
	/* a clear closes the open I/O to riders: the retry opens another, 3 rides on it */
	TT_OK(qt_write(&q, data + 2 * BLK, BLK, 2 * BLK));
	TT_OK(qt_write(&q, data + 3 * BLK, BLK, 3 * BLK));
	TT_EQ(qt_issued_writes(&q), 3);
	TT_EQ(vdev_stat(q.leaf)->vs_ops[1], 5);
	TT_EQ(vdev_stat(q.leaf)->vs_write_errors, 1);
	TT_OK(vdev_flush(q.leaf));
	qt_raw(&q, back, sizeof (back), 0);
	TT_ASSERT(memcmp(back, data, sizeof (back)) == 0);
	uint64_t gen;
	(void) vdev_inject_take(&gen);
	vdev_inject_clear(q.root, 0);
	qt_close(&q);
}

/*
 * The merged write fails when issued (the device fails every write):
 * each request is tried alone, each failure counted, and the next flush
 * says EIO once; with the device working again, queued writes land.
 */
static void
test_late_failure(void)
{
	qt_t q;
	qt_open(&q, "late", 100);
	static uint8_t data[6 * BLK], back[6 * BLK];
	tarn_rand_t r;
	tarn_rand_seed(&r, 13);
	tt_fill_random(&r, data, sizeof (data));
	for (int b = 0; b < 4; b++)
		TT_OK(qt_write(&q, data + b * BLK, BLK, (uint64_t)b * BLK));
	vdev_fault_set_rates(q.vf, 0, VDEV_INJECT_PPM_MAX, 0);
	TT_EQ(vdev_flush(q.leaf), EIO);
	TT_EQ(vdev_stat(q.leaf)->vs_write_errors, 3);   /* block 0 went at once */
	vdev_fault_set_rates(q.vf, 0, 0, 0);
	TT_OK(vdev_flush(q.leaf));
	TT_OK(qt_write(&q, data + 4 * BLK, BLK, 4 * BLK));
	TT_OK(qt_write(&q, data + 5 * BLK, BLK, 5 * BLK));
	TT_OK(vdev_flush(q.leaf));
	qt_raw(&q, back, sizeof (back), 0);
	TT_ASSERT(memcmp(back, data, BLK) == 0);
	TT_ASSERT(memcmp(back + 4 * BLK, data + 4 * BLK, 2 * BLK) == 0);
	uint64_t gen;
	(void) vdev_inject_take(&gen);
	vdev_inject_clear(q.root, 0);
	qt_close(&q);
}

/* Closing the leaf (export) writes out the open I/O. */
static void
test_close_drains(void)
{
	qt_t q;
	qt_open(&q, "close", 100);
	static uint8_t data[3 * BLK], back[3 * BLK];
	tarn_rand_t r;
	tarn_rand_seed(&r, 17);
	tt_fill_random(&r, data, sizeof (data));
	for (int b = 0; b < 3; b++)
		TT_OK(qt_write(&q, data + b * BLK, BLK, (uint64_t)b * BLK));
	char *path = tarn_strdup(vdev_path(q.leaf));
	vdev_close(q.root);
	tt_file_rw(path, false, back, sizeof (back), 0);
	TT_ASSERT(memcmp(back, data, sizeof (back)) == 0);
	tarn_free(path);
	uint64_t gen;
	(void) vdev_inject_take(&gen);
	qt_close(&q);
}

static void
test_cleanup(void)
{
	tt_tmpdir_cleanup();
}

TT_MAIN(
	{ "merge", test_merge },
	{ "gap", test_gap },
	{ "error_alone", test_error_alone },
	{ "late_failure", test_late_failure },
	{ "close_drains", test_close_drains },
	{ "cleanup", test_cleanup },
)
