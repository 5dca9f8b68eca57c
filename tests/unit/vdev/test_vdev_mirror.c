/*
 * Mirror unit tests: self-heal of every combination of bad sides on 2-
 * and 3-way mirrors, EIO sides charged READ errors, all sides bad,
 * NOHEAL, load spreading, degraded writes, reads without a callback.
 */
#include "vdev_tt.h"

#define BLK 40000
#define OFF (8192 * 3)

static void
corrupt_side(vdev_t *leaf, tarn_rand_t *r)
{
	uint8_t junk[BLK];
	tt_fill_random(r, junk, BLK);
	tt_file_rw(vdev_path(leaf), true, junk, BLK, OFF);
}

static bool
side_intact(vdev_t *leaf, const uint8_t *data)
{
	uint8_t got[BLK];
	tt_file_rw(vdev_path(leaf), false, got, BLK, OFF);
	return (memcmp(got, data, BLK) == 0);
}

static void
heal_every_subset(int nway)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, (uint64_t)nway);
	vdev_t *root = tt_group_tree(VDEV_TYPE_MIRROR, 0, nway, 0, "mh");
	vdev_t *top = vdev_child(root, 0);
	static uint8_t data[BLK], buf[BLK];
	tt_ck_t ck;
	TT_OK(vdev_open(root, false));
	tt_fill_random(&r, data, BLK);
	tt_ck_set(&ck, data, BLK);
	vdev_io_t io = { .vio_offset = OFF, .vio_size = BLK, .vio_buf = data };
	TT_OK(vdev_write(top, &io));
	for (int c = 0; c < nway; c++)
		TT_CHECK(side_intact(vdev_child(top, c), data));
	for (uint32_t set = 1; set < (1u << nway) - 1; set++) {
		uint64_t before[3];
		for (int c = 0; c < nway; c++) {
			before[c] = tt_cksum_errors(vdev_child(top, c));
			if (set & (1u << c))
				corrupt_side(vdev_child(top, c), &r);
		}
		io = (vdev_io_t){ .vio_offset = OFF, .vio_size = BLK, .vio_buf = buf,
		    .vio_verify = tt_verify, .vio_verify_arg = &ck };
		memset(buf, 0, BLK);
		TT_OK(vdev_read(top, &io));
		TT_ASSERT(memcmp(buf, data, BLK) == 0);
		io.vio_flags = VDEV_IO_SCRUB;
		TT_OK(vdev_read(top, &io));
		TT_ASSERT(memcmp(buf, data, BLK) == 0);
		for (int c = 0; c < nway; c++) {
			TT_EQ(tt_cksum_errors(vdev_child(top, c)) - before[c],
			    (set & (1u << c)) ? 1 : 0);
			TT_CHECK(side_intact(vdev_child(top, c), data));
		}
		TT_OK(vdev_read(top, &io));
		TT_EQ(io.vio_bad_children, 0);
		TT_EQ(io.vio_repaired, 0);
	}
	TT_EQ(vdev_stat(top)->vs_checksum_errors, 0);
	tt_unlink_leaves(root);
	vdev_free(root);
}

static void
test_heal_2way(void)
{
	heal_every_subset(2);
}

static void
test_heal_3way(void)
{
	heal_every_subset(3);
}

static void
test_eio_side(void)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, 4);
	vdev_t *root = tt_group_tree(VDEV_TYPE_MIRROR, 0, 2, 0, "me");
	vdev_t *top = vdev_child(root, 0);
	static uint8_t data[BLK], buf[BLK];
	vdev_fault_cfg_t fc = { .vfc_read_eio_ppm = 1000000 };
	vdev_fault_t *vf = vdev_fault_attach(vdev_path(vdev_child(top, 0)), &fc);
	TT_OK(vdev_open(root, false));
	tt_fill_random(&r, data, BLK);
	vdev_io_t io = { .vio_offset = OFF, .vio_size = BLK, .vio_buf = data };
	TT_OK(vdev_write(top, &io));
	tt_ck_t ck;
	tt_ck_set(&ck, data, BLK);
	io = (vdev_io_t){ .vio_offset = OFF, .vio_size = BLK, .vio_buf = buf,
	    .vio_verify = tt_verify, .vio_verify_arg = &ck, .vio_flags = VDEV_IO_SCRUB };
	TT_OK(vdev_read(top, &io));
	TT_CHECK(memcmp(buf, data, BLK) == 0);
	TT_EQ(vdev_stat(vdev_child(top, 0))->vs_read_errors, 1);
	TT_EQ(vdev_stat(vdev_child(top, 1))->vs_read_errors, 0);
	TT_EQ(tt_cksum_errors(vdev_child(top, 0)), 0);
	TT_EQ(io.vio_bad_children, 1);
	TT_EQ(io.vio_repaired, BLK);
	TT_EQ(vdev_stat(vdev_child(top, 0))->vs_repaired_bytes, BLK);
	/* Ten plain reads: whenever side 0 is tried it fails and is charged. */
	io.vio_flags = 0;
	for (int i = 0; i < 10; i++) {
		TT_OK(vdev_read(top, &io));
		TT_CHECK(memcmp(buf, data, BLK) == 0);
	}
	TT_EQ(vdev_stat(vdev_child(top, 0))->vs_read_errors, 6);
	/* Without a callback: the first side without EIO. */
	io.vio_verify = NULL;
	TT_OK(vdev_read(top, &io));
	TT_CHECK(memcmp(buf, data, BLK) == 0);
	/* Both sides failing: EIO, charged to the mirror too. */
	vdev_fault_t *vf1 = vdev_fault_attach(vdev_path(vdev_child(top, 1)), &fc);
	vdev_close(root);
	TT_OK(vdev_open(root, false));
	TT_EQ(vdev_read(top, &io), EIO);
	TT_EQ(vdev_stat(top)->vs_read_errors, 1);
	vdev_close(root);
	vdev_fault_detach(vf);
	vdev_fault_detach(vf1);
	tt_unlink_leaves(root);
	vdev_free(root);
}

static void
test_all_bad_and_noheal(void)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, 5);
	vdev_t *root = tt_group_tree(VDEV_TYPE_MIRROR, 0, 3, 0, "mb");
	vdev_t *top = vdev_child(root, 0);
	static uint8_t data[BLK], buf[BLK];
	TT_OK(vdev_open(root, false));
	tt_fill_random(&r, data, BLK);
	vdev_io_t io = { .vio_offset = OFF, .vio_size = BLK, .vio_buf = data };
	TT_OK(vdev_write(top, &io));
	tt_ck_t ck;
	tt_ck_set(&ck, data, BLK);
	/* NOHEAL: the bad side is found and charged but left as it is. */
	corrupt_side(vdev_child(top, 1), &r);
	io = (vdev_io_t){ .vio_offset = OFF, .vio_size = BLK, .vio_buf = buf,
	    .vio_verify = tt_verify, .vio_verify_arg = &ck,
	    .vio_flags = VDEV_IO_SCRUB | VDEV_IO_NOHEAL };
	TT_OK(vdev_read(top, &io));
	TT_EQ(io.vio_bad_children, 1);
	TT_EQ(io.vio_repaired, 0);
	TT_EQ(tt_cksum_errors(vdev_child(top, 1)), 1);
	TT_CHECK(!side_intact(vdev_child(top, 1), data));
	/* PROBE: nothing charged. */
	io.vio_flags = VDEV_IO_SCRUB | VDEV_IO_NOHEAL | VDEV_IO_PROBE;
	TT_OK(vdev_read(top, &io));
	TT_EQ(tt_cksum_errors(vdev_child(top, 1)), 1);
	/* Every side bad: ECKSUM; each side and the mirror charged. */
	corrupt_side(vdev_child(top, 0), &r);
	corrupt_side(vdev_child(top, 2), &r);
	io.vio_flags = 0;
	TT_EQ(vdev_read(top, &io), ECKSUM);
	TT_EQ(io.vio_bad_children, 3);
	TT_EQ(vdev_stat(top)->vs_checksum_errors, 1);
	for (int c = 0; c < 3; c++)
		TT_EQ(tt_cksum_errors(vdev_child(top, c)), c == 1 ? 2 : 1);
	vdev_clear_errors(root);
	TT_EQ(vdev_stat(top)->vs_checksum_errors, 0);
	TT_EQ(tt_cksum_errors(vdev_child(top, 1)), 0);
	tt_unlink_leaves(root);
	vdev_free(root);
}

static void
test_rotor(void)
{
	vdev_t *root = tt_group_tree(VDEV_TYPE_MIRROR, 0, 2, 0, "mr");
	vdev_t *top = vdev_child(root, 0);
	uint8_t buf[4096] = { 1 };
	TT_OK(vdev_open(root, false));
	vdev_io_t io = { .vio_offset = 0, .vio_size = 4096, .vio_buf = buf };
	TT_OK(vdev_write(top, &io));
	for (int i = 0; i < 100; i++)
		TT_OK(vdev_read(top, &io));
	TT_EQ(vdev_stat(top)->vs_ops[0], 100);
	TT_EQ(vdev_stat(top)->vs_ops[1], 1);
	TT_EQ(vdev_stat(top)->vs_bytes[0], 100 * 4096);
	TT_CHECK(vdev_stat(vdev_child(top, 0))->vs_ops[0] >= 40);
	TT_CHECK(vdev_stat(vdev_child(top, 1))->vs_ops[0] >= 40);
	TT_EQ(vdev_stat(vdev_child(top, 0))->vs_ops[1], 1);
	tt_unlink_leaves(root);
	vdev_free(root);
}

static void
test_degraded(void)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, 6);
	vdev_t *root = tt_group_tree(VDEV_TYPE_MIRROR, 0, 2, 0, "md");
	vdev_t *top = vdev_child(root, 0);
	static uint8_t data[BLK], buf[BLK];
	TT_OK(vdev_open(root, false));
	TT_OK(vdev_set_offline(vdev_child(top, 1), true));
	TT_EQ(vdev_set_offline(vdev_child(top, 0), true), EBUSY);
	TT_EQ(vdev_state(top), VDEV_STATE_DEGRADED);
	TT_EQ(vdev_state(root), VDEV_STATE_DEGRADED);
	TT_EQ(vdev_state(vdev_child(top, 1)), VDEV_STATE_OFFLINE);
	tt_fill_random(&r, data, BLK);
	vdev_io_t io = { .vio_offset = OFF, .vio_size = BLK, .vio_buf = data };
	TT_OK(vdev_write(top, &io));
	TT_CHECK(!side_intact(vdev_child(top, 1), data));
	TT_OK(vdev_set_offline(vdev_child(top, 1), false));
	TT_EQ(vdev_state(root), VDEV_STATE_HEALTHY);
	tt_ck_t ck;
	tt_ck_set(&ck, data, BLK);
	io = (vdev_io_t){ .vio_offset = OFF, .vio_size = BLK, .vio_buf = buf,
	    .vio_verify = tt_verify, .vio_verify_arg = &ck, .vio_flags = VDEV_IO_SCRUB };
	TT_OK(vdev_read(top, &io));
	TT_EQ(io.vio_bad_children, 1);
	TT_CHECK(side_intact(vdev_child(top, 1), data));
	/* Writes fail only when no side takes them. */
	vdev_fault_cfg_t fc = { .vfc_write_eio_ppm = 1000000 };
	vdev_fault_t *vf = vdev_fault_attach(vdev_path(vdev_child(top, 0)), &fc);
	vdev_close(root);
	TT_OK(vdev_open(root, false));
	io = (vdev_io_t){ .vio_offset = OFF, .vio_size = BLK, .vio_buf = data };
	TT_OK(vdev_write(top, &io));
	TT_EQ(vdev_stat(vdev_child(top, 0))->vs_write_errors, 1);
	TT_OK(vdev_set_offline(vdev_child(top, 1), true));
	TT_EQ(vdev_write(top, &io), EIO);
	TT_OK(vdev_set_offline(vdev_child(top, 1), false));
	vdev_close(root);
	vdev_fault_detach(vf);
	tt_unlink_leaves(root);
	vdev_free(root);
}

/* A mirror of unequal sides is as big as its smallest. */
static void
test_sizes(void)
{
	vdev_t *root = vdev_alloc(VDEV_TYPE_ROOT, 0);
	vdev_t *m = vdev_alloc(VDEV_TYPE_MIRROR, 0);
	vdev_add_child(m, tt_leaf("ms", 0, 100 * MiB));
	vdev_add_child(m, tt_leaf("ms", 1, 80 * MiB + 77));
	vdev_add_child(root, m);
	TT_OK(vdev_open(root, false));
	TT_EQ(vdev_asize(m), 80 * MiB - VDEV_LABEL_START_SIZE - VDEV_LABEL_END_SIZE);
	TT_EQ(vdev_asize(vdev_child(m, 0)),
	    100 * MiB - VDEV_LABEL_START_SIZE - VDEV_LABEL_END_SIZE);
	TT_EQ(vdev_psize_to_asize(m, 1000), 1024);
	tt_unlink_leaves(root);
	vdev_free(root);
}

static void
test_cleanup(void)
{
	tt_tmpdir_cleanup();
}

TT_MAIN(
	{ "heal_2way", test_heal_2way },
	{ "heal_3way", test_heal_3way },
	{ "eio_side", test_eio_side },
	{ "all_bad_and_noheal", test_all_bad_and_noheal },
	{ "rotor", test_rotor },
	{ "degraded", test_degraded },
	{ "sizes", test_sizes },
	{ "cleanup", test_cleanup },
)
