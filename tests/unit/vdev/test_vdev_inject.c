/*
 * Run-time injection unit tests (vdev_inject.c): the lane model of
 * delays (one lane serializes, N lanes overlap, a mirror write waits for
 * its slowest side once, a clear wakes sleepers), EIO and ENXIO
 * failures and their counters, damaged reads healed by a mirror, a
 * device that cannot be reopened while it is "gone", frequencies,
 * injections surviving a group put in the leaf's place, and bad specs.
 * Timing checks are lower bounds, or upper bounds with a wide margin.
 */
#include "vdev_tt.h"

#include <pthread.h>

#define BLK 4096

/* root -> leaf, or root -> mirror of n leaves; opened, BLK of data at 0. */
static vdev_t *
inj_tree(const char *prefix, int n, uint8_t *data, tt_ck_t *ck)
{
	vdev_t *root;
	if (n == 1) {
		root = vdev_alloc(VDEV_TYPE_ROOT, 0);
		vdev_add_child(root, tt_leaf(prefix, 0, TT_DEV_SIZE));
	} else {
		root = tt_group_tree(VDEV_TYPE_MIRROR, 0, n, 12, prefix);
	}
	TT_OK(vdev_open(root, false));
	tarn_rand_t r;
	tarn_rand_seed(&r, 42);
	tt_fill_random(&r, data, BLK);
	tt_ck_set(ck, data, BLK);
	vdev_io_t io = { .vio_offset = 0, .vio_size = BLK, .vio_buf = data };
	TT_OK(vdev_write(vdev_child(root, 0), &io));
	return (root);
}

static void
inj_free(vdev_t *root)
{
	tt_unlink_leaves(root);
	vdev_free(root);
}

/* A read of the top-level as zio does it: one call under the tree lock. */
static int
inj_read(vdev_t *root, void *buf, tt_ck_t *ck)
{
	vdev_io_t io = { .vio_offset = 0, .vio_size = BLK, .vio_buf = buf,
		.vio_verify = ck != NULL ? tt_verify : NULL, .vio_verify_arg = ck };
	vdev_tree_enter_read(root);
	int e = vdev_read(vdev_child(root, 0), &io);
	vdev_tree_exit(root);
	return (e);
}

static vdev_inject_spec_t
inj_delay(uint64_t ms, uint32_t lanes)
{
	return ((vdev_inject_spec_t){ .vis_kind = VDEV_INJECT_DELAY,
	    .vis_rw = VDEV_INJECT_READ | VDEV_INJECT_WRITE, .vis_ppm = VDEV_INJECT_PPM_MAX,
	    .vis_latency_us = ms * 1000, .vis_lanes = lanes });
}

static vdev_inject_spec_t
inj_error(vdev_inject_kind_t kind, int rw, uint32_t ppm)
{
	return ((vdev_inject_spec_t){ .vis_kind = kind, .vis_rw = rw, .vis_ppm = ppm });
}

typedef struct reader {
	vdev_t *root;
	int err;
} reader_t;

static void *
reader_main(void *arg)
{
	reader_t *r = arg;
	uint8_t buf[BLK];
	r->err = inj_read(r->root, buf, NULL);
	return (NULL);
}

/* Milliseconds that n concurrent reads (one per thread) take. */
static uint64_t
inj_parallel_reads(vdev_t *root, int n)
{
	pthread_t th[16];
	reader_t rd[16];
	uint64_t t0 = tarn_now_ns();
	for (int i = 0; i < n; i++) {
		rd[i] = (reader_t){ .root = root };
		TT_OK(pthread_create(&th[i], NULL, reader_main, &rd[i]));
	}
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		TT_OK(rd[i].err);
	}
	return ((tarn_now_ns() - t0) / 1000000);
}

/* 8 reads with 50ms:1 take >= 400 ms; with 50ms:8 they overlap. */
static void
test_delay_lanes(void)
{
	uint8_t data[BLK];
	tt_ck_t ck;
	vdev_t *root = inj_tree("dl", 1, data, &ck);
	vdev_t *leaf = vdev_child(root, 0);
	uint64_t id1, id8;
	vdev_inject_spec_t s = inj_delay(50, 1);
	TT_OK(vdev_inject_add(leaf, &s, &id1));
	uint64_t ms = inj_parallel_reads(root, 8);
	printf("  8 reads, 50ms:1 -> %" PRIu64 " ms\n", ms);
	TT_CHECK(ms >= 400);
	/* one thread, one after another: the same */
	uint8_t buf[BLK];
	uint64_t t0 = tarn_now_ns();
	for (int i = 0; i < 4; i++)
		TT_OK(inj_read(root, buf, &ck));
	TT_CHECK((tarn_now_ns() - t0) / 1000000 >= 200);
	TT_EQ(vdev_inject_clear(root, id1), 1);
	s = inj_delay(50, 8);
	TT_OK(vdev_inject_add(leaf, &s, &id8));
	TT_CHECK(id8 > id1);
	ms = inj_parallel_reads(root, 8);
	printf("  8 reads, 50ms:8 -> %" PRIu64 " ms\n", ms);
	TT_CHECK(ms >= 50 && ms < 300);
	/* 16 reads on 8 lanes: two rounds at least */
	ms = inj_parallel_reads(root, 16);
	printf("  16 reads, 50ms:8 -> %" PRIu64 " ms\n", ms);
	TT_CHECK(ms >= 100);
	TT_EQ(vdev_inject_clear(root, 0), 1);
	ms = inj_parallel_reads(root, 8);
	TT_CHECK(ms < 50);
	inj_free(root);
}

/* A mirror write to two delayed sides waits once, not once per side. */
static void
test_delay_mirror_parallel(void)
{
	uint8_t data[BLK];
	tt_ck_t ck;
	vdev_t *root = inj_tree("dm", 2, data, &ck);
	vdev_t *m = vdev_child(root, 0);
	uint64_t id;
	vdev_inject_spec_t s = inj_delay(200, 1);
	for (int c = 0; c < 2; c++)
		TT_OK(vdev_inject_add(vdev_child(m, c), &s, &id));
	vdev_io_t io = { .vio_offset = 0, .vio_size = BLK, .vio_buf = data };
	uint64_t t0 = tarn_now_ns();
	vdev_tree_enter_read(root);
	TT_OK(vdev_write(m, &io));
	vdev_tree_exit(root);
	uint64_t ms = (tarn_now_ns() - t0) / 1000000;
	printf("  mirror write, both sides 200ms:1 -> %" PRIu64 " ms\n", ms);
	TT_CHECK(ms >= 200 && ms < 390);
	TT_EQ(vdev_inject_clear(root, 0), 2);
	inj_free(root);
}

static void *
sleeper_main(void *arg)
{
	reader_t *r = arg;
	uint8_t buf[BLK];
	r->err = inj_read(r->root, buf, NULL);
	return (NULL);
}

/* Clearing wakes a thread sleeping out a long delay. */
static void
test_delay_clear_wakes(void)
{
	uint8_t data[BLK];
	tt_ck_t ck;
	vdev_t *root = inj_tree("dw", 1, data, &ck);
	uint64_t id;
	vdev_inject_spec_t s = inj_delay(20000, 1);
	TT_OK(vdev_inject_add(vdev_child(root, 0), &s, &id));
	reader_t rd = { .root = root };
	pthread_t th;
	uint64_t t0 = tarn_now_ns();
	TT_OK(pthread_create(&th, NULL, sleeper_main, &rd));
	usleep(100 * 1000);
	TT_EQ(vdev_inject_clear(root, id), 1);
	pthread_join(th, NULL);
	uint64_t ms = (tarn_now_ns() - t0) / 1000000;
	printf("  20 s delay cleared after 100 ms -> %" PRIu64 " ms\n", ms);
	TT_OK(rd.err);
	TT_CHECK(ms >= 100 && ms < 5000);
	/* the tree is not held while sleeping: a writer gets in at once */
	TT_OK(vdev_inject_add(vdev_child(root, 0), &s, &id));
	TT_OK(pthread_create(&th, NULL, sleeper_main, &rd));
	usleep(100 * 1000);
	t0 = tarn_now_ns();
	vdev_tree_enter_write(root);
	vdev_tree_exit(root);
	TT_CHECK((tarn_now_ns() - t0) / 1000000 < 2000);
	TT_EQ(vdev_inject_clear(root, 0), 1);
	pthread_join(th, NULL);
	inj_free(root);
}

/* io: reads fail with EIO (counted); the mirror serves the other side. */
static void
test_eio(void)
{
	uint8_t data[BLK], buf[BLK];
	tt_ck_t ck;
	vdev_t *root = inj_tree("eio", 2, data, &ck);
	vdev_t *m = vdev_child(root, 0), *bad = vdev_child(m, 0), *good = vdev_child(m, 1);
	uint64_t id;
	vdev_inject_spec_t s = inj_error(VDEV_INJECT_EIO, VDEV_INJECT_READ, VDEV_INJECT_PPM_MAX);
	TT_OK(vdev_inject_add(bad, &s, &id));
	for (int i = 0; i < 8; i++) {
		memset(buf, 0, sizeof (buf));
		TT_OK(inj_read(root, buf, &ck));
		TT_CHECK(memcmp(buf, data, BLK) == 0);
	}
	TT_CHECK(vdev_stat(bad)->vs_read_errors > 0);
	TT_EQ(vdev_stat(good)->vs_read_errors, 0);
	/* the leaf alone: EIO; writes (not injected) still land */
	TT_EQ(vdev_leaf_pread(bad, buf, BLK, VDEV_LABEL_START_SIZE), EIO);
	uint64_t w = vdev_stat(bad)->vs_ops[1];
	vdev_io_t io = { .vio_offset = 0, .vio_size = BLK, .vio_buf = data };
	TT_OK(vdev_write(m, &io));
	TT_CHECK(vdev_stat(bad)->vs_ops[1] > w);
	TT_EQ(vdev_stat(bad)->vs_write_errors, 0);
	/* -T write: now writes fail (counted) and reads work */
	TT_EQ(vdev_inject_clear(root, id), 1);
	s.vis_rw = VDEV_INJECT_WRITE;
	TT_OK(vdev_inject_add(bad, &s, &id));
	TT_OK(vdev_leaf_pread(bad, buf, BLK, VDEV_LABEL_START_SIZE));
	TT_CHECK(memcmp(buf, data, BLK) == 0);
	TT_OK(vdev_write(m, &io));          /* the other side took it */
	TT_CHECK(vdev_stat(bad)->vs_write_errors > 0);
	TT_EQ(vdev_stat(good)->vs_write_errors, 0);
	inj_free(root);
}

/* checksum: damaged reads are caught and healed; the device keeps good data. */
static void
test_cksum(void)
{
	uint8_t data[BLK], buf[BLK], ondisk[BLK];
	tt_ck_t ck;
	vdev_t *root = inj_tree("ck", 2, data, &ck);
	vdev_t *m = vdev_child(root, 0), *bad = vdev_child(m, 0), *good = vdev_child(m, 1);
	uint64_t id;
	vdev_inject_spec_t s = inj_error(VDEV_INJECT_CKSUM, VDEV_INJECT_READ, VDEV_INJECT_PPM_MAX);
	TT_OK(vdev_inject_add(bad, &s, &id));
	for (int i = 0; i < 8; i++) {
		memset(buf, 0, sizeof (buf));
		TT_OK(inj_read(root, buf, &ck));
		TT_CHECK(memcmp(buf, data, BLK) == 0);
	}
	TT_CHECK(tt_cksum_errors(bad) > 0);
	TT_EQ(tt_cksum_errors(good), 0);
	TT_EQ(vdev_stat(bad)->vs_read_errors, 0);
	/* the damage is in what reads return, never on the device */
	tt_file_rw(vdev_path(bad), false, ondisk, BLK, 0);
	TT_CHECK(memcmp(ondisk, data, BLK) == 0);
	/* the leaf alone returns damaged bytes: one bit */
	TT_OK(vdev_leaf_pread(bad, buf, BLK, VDEV_LABEL_START_SIZE));
	int bits = 0;
	for (int i = 0; i < BLK; i++)
		bits += __builtin_popcount((unsigned)(buf[i] ^ data[i]));
	TT_EQ(bits, 1);
	/* cleared: reads are clean again */
	TT_EQ(vdev_inject_clear(root, id), 1);
	TT_OK(vdev_leaf_pread(bad, buf, BLK, VDEV_LABEL_START_SIZE));
	TT_CHECK(memcmp(buf, data, BLK) == 0);
	inj_free(root);
}

/* nxio: I/O and flushes fail with ENXIO; the leaf cannot reopen until cleared. */
static void
test_nxio(void)
{
	uint8_t data[BLK], buf[BLK];
	tt_ck_t ck;
	vdev_t *root = inj_tree("nx", 2, data, &ck);
	vdev_t *m = vdev_child(root, 0), *bad = vdev_child(m, 0);
	uint64_t id;
	vdev_inject_spec_t s = inj_error(VDEV_INJECT_NXIO, VDEV_INJECT_READ | VDEV_INJECT_WRITE,
	    VDEV_INJECT_PPM_MAX);
	TT_OK(vdev_inject_add(bad, &s, &id));
	TT_OK(inj_read(root, buf, &ck));
	TT_CHECK(memcmp(buf, data, BLK) == 0);
	TT_EQ(vdev_leaf_pread(bad, buf, BLK, 0), ENXIO);
	TT_EQ(vdev_leaf_pwrite(bad, buf, BLK, 0), ENXIO);
	TT_EQ(vdev_ops(bad)->vop_flush(bad), ENXIO);
	/* the pool would close it after errors; reopening fails like a pulled disk */
	vdev_tree_enter_write(root);
	TT_EQ(vdev_leaf_reopen(bad, 0), ENXIO);
	TT_EQ(vdev_state(bad), VDEV_STATE_CANT_OPEN);
	TT_EQ(vdev_state(m), VDEV_STATE_DEGRADED);
	vdev_tree_exit(root);
	TT_OK(inj_read(root, buf, &ck));
	/* the injection outlives the close; clearing brings the device back */
	TT_EQ(vdev_inject_clear(root, id), 1);
	vdev_tree_enter_write(root);
	TT_OK(vdev_leaf_reopen(bad, 0));
	vdev_tree_exit(root);
	TT_EQ(vdev_state(bad), VDEV_STATE_HEALTHY);
	TT_OK(vdev_leaf_pread(bad, buf, BLK, VDEV_LABEL_START_SIZE));
	TT_CHECK(memcmp(buf, data, BLK) == 0);
	inj_free(root);
}

/* -f: a 25% injection fails about a quarter of the reads. */
static void
test_frequency(void)
{
	uint8_t data[BLK], buf[BLK];
	tt_ck_t ck;
	vdev_t *root = inj_tree("fq", 1, data, &ck);
	vdev_t *leaf = vdev_child(root, 0);
	uint64_t id;
	vdev_inject_spec_t s = inj_error(VDEV_INJECT_EIO, VDEV_INJECT_READ, 250000);
	TT_OK(vdev_inject_add(leaf, &s, &id));
	int fails = 0;
	for (int i = 0; i < 2000; i++)
		fails += vdev_leaf_pread(leaf, buf, 512, 0) != 0;
	printf("  25%%: %d of 2000 reads failed\n", fails);
	TT_CHECK(fails > 350 && fails < 650);
	inj_free(root);
}

typedef struct inj_seen {
	int n;
	uint64_t ids[8];
	vdev_inject_kind_t kinds[8];
	vdev_t *leaves[8];
} inj_seen_t;

static void
inj_seen_fn(void *arg, vdev_t *leaf, uint64_t id, const vdev_inject_spec_t *s)
{
	inj_seen_t *is = arg;
	if (is->n < 8) {
		is->ids[is->n] = id;
		is->kinds[is->n] = s->vis_kind;
		is->leaves[is->n] = leaf;
	}
	is->n++;
}

/* A top-level leaf becomes a mirror: its injections move with it. */
static void
test_list_and_move(void)
{
	uint8_t data[BLK], buf[BLK];
	tt_ck_t ck;
	vdev_t *root = inj_tree("mv", 1, data, &ck);
	vdev_t *leaf = vdev_child(root, 0);
	uint64_t a, b;
	vdev_inject_spec_t s = inj_error(VDEV_INJECT_EIO, VDEV_INJECT_READ, VDEV_INJECT_PPM_MAX);
	TT_OK(vdev_inject_add(leaf, &s, &a));
	s = inj_delay(1, 4);
	TT_OK(vdev_inject_add(leaf, &s, &b));
	inj_seen_t is = { 0 };
	vdev_inject_list(root, inj_seen_fn, &is);
	TT_EQ(is.n, 2);
	TT_EQ(is.ids[0], a);
	TT_EQ(is.kinds[0], VDEV_INJECT_EIO);
	TT_EQ(is.ids[1], b);
	TT_EQ(is.kinds[1], VDEV_INJECT_DELAY);
	vdev_tree_enter_write(root);
	vdev_t *g = vdev_group_insert(&leaf, VDEV_TYPE_MIRROR);
	vdev_tree_exit(root);
	TT_CHECK(g == vdev_child(root, 0) && leaf == vdev_child(g, 0));
	is = (inj_seen_t){ 0 };
	vdev_inject_list(root, inj_seen_fn, &is);
	TT_EQ(is.n, 2);
	TT_CHECK(is.leaves[0] == leaf && is.leaves[1] == leaf);
	TT_EQ(vdev_leaf_pread(leaf, buf, BLK, VDEV_LABEL_START_SIZE), EIO);
	/* a group takes no injections; an unknown id clears nothing */
	TT_EQ(vdev_inject_add(g, &s, &a), ENOTSUP);
	TT_EQ(vdev_inject_clear(root, b + 100), 0);
	inj_free(root);    /* frees the handle with its injections (sanitizers) */
}

static void
test_bad_specs(void)
{
	uint8_t data[BLK];
	tt_ck_t ck;
	vdev_t *root = inj_tree("bs", 1, data, &ck);
	vdev_t *leaf = vdev_child(root, 0);
	uint64_t id;
	vdev_inject_spec_t bad[] = {
		inj_error(VDEV_INJECT_CKSUM, VDEV_INJECT_WRITE, VDEV_INJECT_PPM_MAX),
		inj_error(VDEV_INJECT_EIO, 0, VDEV_INJECT_PPM_MAX),
		inj_error(VDEV_INJECT_EIO, 4, VDEV_INJECT_PPM_MAX),
		inj_error(VDEV_INJECT_EIO, VDEV_INJECT_READ, 0),
		inj_error(VDEV_INJECT_EIO, VDEV_INJECT_READ, VDEV_INJECT_PPM_MAX + 1),
		inj_error((vdev_inject_kind_t)0, VDEV_INJECT_READ, VDEV_INJECT_PPM_MAX),
		inj_delay(0, 1),
		inj_delay(1, 0),
		inj_delay(1, VDEV_INJECT_LANES_MAX + 1),
		inj_delay(VDEV_INJECT_LATENCY_MAX_US / 1000 + 1, 1),
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		TT_EQ(vdev_inject_add(leaf, &bad[i], &id), EINVAL);
	inj_seen_t is = { 0 };
	vdev_inject_list(root, inj_seen_fn, &is);
	TT_EQ(is.n, 0);
	inj_free(root);
}

static void
test_cleanup(void)
{
	tt_tmpdir_cleanup();
}

TT_MAIN(
	{ "delay_lanes", test_delay_lanes },
	{ "delay_mirror_parallel", test_delay_mirror_parallel },
	{ "delay_clear_wakes", test_delay_clear_wakes },
	{ "eio", test_eio },
	{ "cksum", test_cksum },
	{ "nxio", test_nxio },
	{ "frequency", test_frequency },
	{ "list_and_move", test_list_and_move },
	{ "bad_specs", test_bad_specs },
	{ "cleanup", test_cleanup },
)
