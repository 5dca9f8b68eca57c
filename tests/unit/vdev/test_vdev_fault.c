/*
 * Fault injector unit tests: held writes seen by reads but not on the
 * file until a flush, power cuts that drop/apply/tear held writes and
 * kill the device, determinism for a seed, random EIO and bit flips,
 * dead devices, and concurrent use.
 */
#include "vdev_tt.h"

#include <pthread.h>

#define SEC 512

/* A pool of one file leaf, with an injector attached before open. */
static vdev_t *
faulty_leaf(const char *prefix, const vdev_fault_cfg_t *fc, vdev_fault_t **vfp)
{
	vdev_t *root = vdev_alloc(VDEV_TYPE_ROOT, 0);
	vdev_t *l = tt_leaf(prefix, 0, TT_DEV_SIZE);
	vdev_add_child(root, l);
	*vfp = vdev_fault_attach(vdev_path(l), fc);
	VERIFY0(vdev_open(root, false));
	VERIFY(vdev_fault(l) == *vfp);
	return (root);
}

static void
test_hold_and_flush(void)
{
	vdev_fault_cfg_t fc = { .vfc_hold_unflushed = true, .vfc_seed = 1 };
	vdev_fault_t *vf;
	vdev_t *root = faulty_leaf("hf", &fc, &vf);
	vdev_t *l = vdev_child(root, 0);
	uint8_t a[8192], b[8192], got[8192];
	memset(a, 0xA1, sizeof (a));
	memset(b, 0xB2, sizeof (b));
	vdev_io_t io = { .vio_offset = 0, .vio_size = 8192, .vio_buf = a };
	TT_OK(vdev_write(l, &io));
	io = (vdev_io_t){ .vio_offset = 4096, .vio_size = 8192, .vio_buf = b };
	TT_OK(vdev_write(l, &io));
	TT_EQ(vdev_fault_held_writes(vf), 2);
	/* Reads see the held writes, newest on top... */
	io = (vdev_io_t){ .vio_offset = 0, .vio_size = 8192, .vio_buf = got };
	TT_OK(vdev_read(l, &io));
	TT_CHECK(memcmp(got, a, 4096) == 0 && memcmp(got + 4096, b, 4096) == 0);
	/* ...the file does not have them... */
	tt_file_rw(vdev_path(l), false, got, 8192, 0);
	for (int i = 0; i < 8192; i++)
		TT_ASSERT(got[i] == 0);
	/* ...until a flush applies them in order. */
	TT_OK(vdev_flush(root));
	TT_EQ(vdev_fault_held_writes(vf), 0);
	tt_file_rw(vdev_path(l), false, got, 8192, 0);
	TT_CHECK(memcmp(got, a, 4096) == 0 && memcmp(got + 4096, b, 4096) == 0);
	/* A power cut after the flush loses nothing that was flushed. */
	tarn_rand_t r;
	tarn_rand_seed(&r, 2);
	vdev_fault_powercut(vf, &r);
	TT_EQ(vdev_read(l, &io), EIO);
	TT_EQ(vdev_write(l, &io), EIO);
	TT_EQ(vdev_flush(root), EIO);
	vdev_close(root);
	vdev_fault_detach(vf);
	TT_OK(vdev_open(root, false));
	TT_CHECK(vdev_fault(l) == NULL);
	TT_OK(vdev_read(l, &io));
	TT_CHECK(memcmp(got, a, 4096) == 0 && memcmp(got + 4096, b, 4096) == 0);
	tt_unlink_leaves(root);
	vdev_free(root);
}

/*
 * Write nblk distinct blocks (held), power-cut with seed, and return a
 * checksum of the file's data area; each block must be old (zeros), new
 * or a sector-aligned prefix of new followed by zeros.
 */
static uint64_t
powercut_run(uint64_t seed, int *dropped, int *whole, int *torn)
{
	vdev_fault_cfg_t fc = { .vfc_hold_unflushed = true, .vfc_seed = 3 };
	vdev_fault_t *vf;
	vdev_t *root = faulty_leaf("pc", &fc, &vf);
	vdev_t *l = vdev_child(root, 0);
	enum { NBLK = 64, BSZ = 8 * SEC };
	static uint8_t blk[BSZ], got[BSZ];
	for (int i = 0; i < NBLK; i++) {
		memset(blk, 1 + i, BSZ);
		vdev_io_t io = { .vio_offset = (uint64_t)i * BSZ, .vio_size = BSZ,
		    .vio_buf = blk };
		VERIFY0(vdev_write(l, &io));
	}
	TT_EQ(vdev_fault_held_writes(vf), NBLK);
	tarn_rand_t r;
	tarn_rand_seed(&r, seed);
	vdev_fault_powercut(vf, &r);
	TT_EQ(vdev_fault_held_writes(vf), 0);
	vdev_close(root);
	vdev_fault_detach(vf);
	*dropped = *whole = *torn = 0;
	uint64_t h = 0;
	for (int i = 0; i < NBLK; i++) {
		tt_file_rw(vdev_path(l), false, got, BSZ, (uint64_t)i * BSZ);
		int nsec_new = 0;
		while (nsec_new < BSZ / SEC && got[nsec_new * SEC] == 1 + i)
			nsec_new++;
		for (int b = 0; b < BSZ; b++)
			TT_ASSERT(got[b] == (b < nsec_new * SEC ? 1 + i : 0));
		if (nsec_new == 0)
			(*dropped)++;
		else if (nsec_new == BSZ / SEC)
			(*whole)++;
		else
			(*torn)++;
		h = h * 31 + (uint64_t)nsec_new;
	}
	tt_unlink_leaves(root);
	vdev_free(root);
	return (h);
}

static void
test_powercut(void)
{
	int d, w, t, d2, w2, t2;
	uint64_t h1 = powercut_run(100, &d, &w, &t);
	TT_CHECK(d > 0 && w > 0 && t > 0);
	uint64_t h2 = powercut_run(100, &d2, &w2, &t2);
	TT_EQ(h1, h2);
	TT_EQ(d, d2);
	uint64_t h3 = powercut_run(101, &d2, &w2, &t2);
	TT_CHECK(h3 != h1);
}

/* Writes to the same place held twice: order is kept by flush and reads. */
static void
test_overlapping_held(void)
{
	vdev_fault_cfg_t fc = { .vfc_hold_unflushed = true };
	vdev_fault_t *vf;
	vdev_t *root = faulty_leaf("ov", &fc, &vf);
	vdev_t *l = vdev_child(root, 0);
	uint8_t buf[SEC], got[SEC];
	for (int i = 1; i <= 5; i++) {
		memset(buf, i, SEC);
		vdev_io_t io = { .vio_offset = 0, .vio_size = SEC, .vio_buf = buf };
		TT_OK(vdev_write(l, &io));
	}
	vdev_io_t io = { .vio_offset = 0, .vio_size = SEC, .vio_buf = got };
	TT_OK(vdev_read(l, &io));
	TT_EQ(got[0], 5);
	TT_OK(vdev_flush(root));
	tt_file_rw(vdev_path(l), false, got, SEC, 0);
	TT_EQ(got[100], 5);
	vdev_close(root);
	vdev_fault_detach(vf);
	tt_unlink_leaves(root);
	vdev_free(root);
}

static int
count_read_errors(uint64_t seed, uint32_t ppm, int reads)
{
	vdev_fault_cfg_t fc = { .vfc_read_eio_ppm = ppm, .vfc_seed = seed };
	vdev_fault_t *vf;
	vdev_t *root = faulty_leaf("re", &fc, &vf);
	vdev_t *l = vdev_child(root, 0);
	uint8_t buf[SEC];
	int errs = 0;
	for (int i = 0; i < reads; i++) {
		vdev_io_t io = { .vio_offset = 0, .vio_size = SEC, .vio_buf = buf };
		errs += vdev_read(l, &io) == EIO;
	}
	TT_EQ(vdev_stat(l)->vs_read_errors, errs);
	vdev_close(root);
	vdev_fault_detach(vf);
	tt_unlink_leaves(root);
	vdev_free(root);
	return (errs);
}

static void
test_random_eio(void)
{
	int a = count_read_errors(9, 100000, 3000);
	TT_CHECK(a > 200 && a < 400);
	TT_EQ(count_read_errors(9, 100000, 3000), a);
	TT_EQ(count_read_errors(9, 0, 300), 0);
	/* Writes too. */
	vdev_fault_cfg_t fc = { .vfc_write_eio_ppm = 1000000 };
	vdev_fault_t *vf;
	vdev_t *root = faulty_leaf("we", &fc, &vf);
	uint8_t buf[SEC] = { 0 };
	vdev_io_t io = { .vio_offset = 0, .vio_size = SEC, .vio_buf = buf };
	TT_EQ(vdev_write(vdev_child(root, 0), &io), EIO);
	TT_EQ(vdev_stat(vdev_child(root, 0))->vs_write_errors, 1);
	vdev_close(root);
	vdev_fault_detach(vf);
	tt_unlink_leaves(root);
	vdev_free(root);
}

static void
test_bitflip(void)
{
	vdev_fault_cfg_t fc = { .vfc_bitflip_ppm = 1000000, .vfc_seed = 4 };
	vdev_fault_t *vf;
	vdev_t *root = faulty_leaf("bf", &fc, &vf);
	vdev_t *l = vdev_child(root, 0);
	uint8_t data[4096], got[4096];
	memset(data, 0x3c, sizeof (data));
	vdev_io_t io = { .vio_offset = 0, .vio_size = 4096, .vio_buf = data };
	TT_OK(vdev_write(l, &io));
	for (int i = 0; i < 50; i++) {
		io.vio_buf = got;
		TT_OK(vdev_read(l, &io));
		int bits = 0;
		for (int b = 0; b < 4096; b++)
			bits += __builtin_popcount(got[b] ^ data[b]);
		TT_EQ(bits, 1);
	}
	/* The file itself is untouched. */
	tt_file_rw(vdev_path(l), false, got, 4096, 0);
	TT_CHECK(memcmp(got, data, 4096) == 0);
	/* And a checksum catches it. */
	tt_ck_t ck;
	tt_ck_set(&ck, data, 4096);
	io.vio_verify = tt_verify;
	io.vio_verify_arg = &ck;
	TT_EQ(vdev_read(l, &io), ECKSUM);
	vdev_fault_set_dead(vf, true);
	TT_EQ(vdev_read(l, &io), EIO);
	vdev_fault_set_dead(vf, false);
	TT_EQ(vdev_read(l, &io), ECKSUM);
	vdev_close(root);
	vdev_fault_detach(vf);
	tt_unlink_leaves(root);
	vdev_free(root);
}

/* A mirror over two injected leaves: flips are healed from the other side. */
static void
test_mirror_over_flips(void)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, 10);
	vdev_t *root = tt_group_tree(VDEV_TYPE_MIRROR, 0, 2, 0, "mf");
	vdev_t *m = vdev_child(root, 0);
	vdev_fault_cfg_t fc = { .vfc_bitflip_ppm = 300000, .vfc_seed = 5 };
	vdev_fault_t *vf = vdev_fault_attach(vdev_path(vdev_child(m, 0)), &fc);
	fc.vfc_seed = 6;
	vdev_fault_t *vf1 = vdev_fault_attach(vdev_path(vdev_child(m, 1)), &fc);
	TT_OK(vdev_open(root, false));
	uint8_t data[16384], got[16384];
	int failures = 0;
	for (int i = 0; i < 200; i++) {
		tt_fill_random(&r, data, sizeof (data));
		vdev_io_t io = { .vio_offset = (uint64_t)i * 16384, .vio_size = 16384,
		    .vio_buf = data };
		TT_OK(vdev_write(m, &io));
		tt_ck_t ck;
		tt_ck_set(&ck, data, sizeof (data));
		io = (vdev_io_t){ .vio_offset = (uint64_t)i * 16384, .vio_size = 16384,
		    .vio_buf = got, .vio_verify = tt_verify, .vio_verify_arg = &ck };
		int err = vdev_read(m, &io);
		if (err == 0)
			TT_ASSERT(memcmp(got, data, sizeof (data)) == 0);
		else
			failures++;
	}
	/* Both sides flip 30% of reads: ~9% of reads see two bad copies. */
	TT_CHECK(failures > 0 && failures < 50);
	TT_CHECK(tt_cksum_errors(vdev_child(m, 0)) > 20);
	vdev_close(root);
	vdev_fault_detach(vf);
	vdev_fault_detach(vf1);
	tt_unlink_leaves(root);
	vdev_free(root);
}

typedef struct thr_arg {
	vdev_t *leaf;
	vdev_t *root;
	int id;
	int bad;
} thr_arg_t;

static void *
thr_main(void *arg)
{
	thr_arg_t *a = arg;
	uint8_t buf[SEC], got[SEC];
	for (int i = 0; i < 300; i++) {
		uint64_t off = ((uint64_t)a->id * 1000 + (uint64_t)(i % 50)) * SEC;
		memset(buf, (a->id * 50 + i) & 0xff, SEC);
		vdev_io_t io = { .vio_offset = off, .vio_size = SEC, .vio_buf = buf };
		if (vdev_write(a->leaf, &io) != 0)
			a->bad++;
		io.vio_buf = got;
		if (vdev_read(a->leaf, &io) != 0 || memcmp(got, buf, SEC) != 0)
			a->bad++;
		if (i % 37 == 0 && vdev_flush(a->root) != 0)
			a->bad++;
	}
	return (NULL);
}

static void
test_threads(void)
{
	vdev_fault_cfg_t fc = { .vfc_hold_unflushed = true };
	vdev_fault_t *vf;
	vdev_t *root = faulty_leaf("th", &fc, &vf);
	pthread_t th[4];
	thr_arg_t a[4];
	for (int i = 0; i < 4; i++) {
		a[i] = (thr_arg_t){ .leaf = vdev_child(root, 0), .root = root, .id = i };
		TT_OK(pthread_create(&th[i], NULL, thr_main, &a[i]));
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		TT_EQ(a[i].bad, 0);
	}
	TT_OK(vdev_flush(root));
	TT_EQ(vdev_fault_held_writes(vf), 0);
	vdev_close(root);
	vdev_fault_detach(vf);
	tt_unlink_leaves(root);
	vdev_free(root);
}

static void
test_cleanup(void)
{
	tt_tmpdir_cleanup();
}

TT_MAIN(
	{ "hold_and_flush", test_hold_and_flush },
	{ "powercut", test_powercut },
	{ "overlapping_held", test_overlapping_held },
	{ "random_eio", test_random_eio },
	{ "bitflip", test_bitflip },
	{ "mirror_over_flips", test_mirror_over_flips },
	{ "threads", test_threads },
	{ "cleanup", test_cleanup },
)
