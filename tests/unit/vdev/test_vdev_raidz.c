/*
 * RAID-Z unit tests: the on-disk layout (checked against the files
 * directly, computed here from docs/FORMAT.md rather than from the
 * library), the parity format, reconstruction of every combination of
 * up to nparity bad or missing columns at many widths and block sizes,
 * self-heal and error attribution, degraded writes, EIO columns, and
 * throughput.
 */
#include "vdev_tt.h"

#include <isa-l/erasure_code.h>
#include <pthread.h>

/* One column as docs/FORMAT.md describes it. */
typedef struct tcol {
	int      child;
	uint64_t off;       /* child allocatable-space offset */
	uint64_t size;      /* on disk */
	uint64_t doff;      /* data columns: offset in the block */
	uint64_t valid;     /* data columns: payload bytes */
} tcol_t;

/*
 * Derived from the interleave rule alone: the block's sectors are
 * [b, b + tot) of the top-level sector space, sector s on child s % n at
 * child sector s / n; column c is every n-th of them starting at b + c.
 */
static int
layout(int n, int p, uint64_t ashift, uint64_t offset, uint64_t psize, tcol_t *cols)
{
	uint64_t sec = 1ULL << ashift, b = offset >> ashift;
	uint64_t d = DIV_ROUND_UP(psize, sec);
	uint64_t tot = d + (uint64_t)p * DIV_ROUND_UP(d, (uint64_t)(n - p));
	int ncols = (int)MIN((uint64_t)n, tot);
	uint64_t doff = 0;
	for (int c = 0; c < ncols; c++) {
		cols[c].child = (int)((b + (uint64_t)c) % (uint64_t)n);
		cols[c].off = ((b + (uint64_t)c) / (uint64_t)n) << ashift;
		cols[c].size = DIV_ROUND_UP(tot - (uint64_t)c, (uint64_t)n) << ashift;
		if (c >= p) {
			cols[c].doff = doff;
			cols[c].valid = MIN(cols[c].size, psize - doff);
			doff += cols[c].size;
		} else {
			cols[c].valid = cols[c].size;
		}
	}
	return (ncols);
}

static void
test_asize(void)
{
	vdev_t *root = tt_group_tree(VDEV_TYPE_RAIDZ, 2, 6, 12, "az");
	vdev_t *top = vdev_child(root, 0);
	TT_OK(vdev_open(root, false));
	/* 1 data sector + 2 parity = 3 sectors, a multiple of p+1 = 3. */
	TT_EQ(vdev_psize_to_asize(top, 512), 3 * 4096);
	/* 5 data sectors over 4 data columns: 2 rows -> 5 + 4 = 9. */
	TT_EQ(vdev_psize_to_asize(top, 5 * 4096), 9 * 4096);
	/* 4 data sectors: 1 row -> 6, a multiple of 3. */
	TT_EQ(vdev_psize_to_asize(top, 4 * 4096), 6 * 4096);
	/* 2 data sectors: 4 -> rounded to 6. */
	TT_EQ(vdev_psize_to_asize(top, 2 * 4096), 6 * 4096);
	/* Size: six children of the same asize. */
	TT_EQ(vdev_asize(top), 6 * vdev_asize(vdev_child(top, 0)));
	TT_EQ(vdev_ashift(top), 12);
	vdev_t *r1 = tt_group_tree(VDEV_TYPE_RAIDZ, 1, 3, 0, "az1");
	TT_OK(vdev_open(r1, false));
	TT_EQ(vdev_ashift(vdev_child(r1, 0)), 9);
	TT_EQ(vdev_psize_to_asize(vdev_child(r1, 0), 3 * 512 + 1), 6 * 512);
	tt_unlink_leaves(r1);
	vdev_free(r1);
	tt_unlink_leaves(root);
	vdev_free(root);
}

/* What every column holds on disk: data chunks and Cauchy parity. */
static void
check_on_disk(vdev_t *top, uint64_t offset, const uint8_t *data, uint64_t psize)
{
	int n = vdev_children(top), p = vdev_nparity(top);
	tcol_t cols[256];
	int ncols = layout(n, p, vdev_ashift(top), offset, psize, cols);
	int k = ncols - p;
	uint64_t L = cols[0].size;
	uint8_t *col = tarn_alloc(L);
	uint8_t *pad = tarn_alloc((size_t)k * L);
	for (int c = p; c < ncols; c++) {
		tt_file_rw(vdev_path(vdev_child(top, cols[c].child)), false, col,
		    cols[c].size, cols[c].off);
		TT_CHECK(memcmp(col, data + cols[c].doff, cols[c].valid) == 0);
		for (uint64_t i = cols[c].valid; i < cols[c].size; i++)
			TT_CHECK(col[i] == 0);
		memcpy(pad + (size_t)(c - p) * L, data + cols[c].doff, cols[c].valid);
	}
	/* Parity j, byte x = sum_i d_i[x] * inv((k + j) ^ i) (FORMAT.md). */
	for (int j = 0; j < p; j++) {
		tt_file_rw(vdev_path(vdev_child(top, cols[j].child)), false, col, L,
		    cols[j].off);
		int mism = 0;
		for (uint64_t x = 0; x < L; x++) {
			uint8_t v = 0;
			for (int i = 0; i < k; i++)
				v ^= gf_mul(pad[(size_t)i * L + x],
				    gf_inv((unsigned char)((k + j) ^ i)));
			mism += v != col[x];
		}
		TT_EQ(mism, 0);
	}
	tarn_free(pad);
	tarn_free(col);
}

static void
test_layout_and_parity_format(void)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, 7);
	static const int shapes[][2] = { { 3, 1 }, { 5, 2 }, { 7, 3 }, { 4, 3 } };
	static const uint64_t sizes[] = { 1, 512, 700, 4096, 4097, 3 * 4096 + 5,
	    37 * 512, 128 * KiB + 512, 1 * MiB };
	uint8_t *buf = tarn_alloc(MiB);
	for (size_t s = 0; s < ARRAY_SIZE(shapes); s++) {
		for (uint64_t ashift = 9; ashift <= 12; ashift += 3) {
			vdev_t *root = tt_group_tree(VDEV_TYPE_RAIDZ, shapes[s][1],
			    shapes[s][0], ashift, "lay");
			vdev_t *top = vdev_child(root, 0);
			TT_OK(vdev_open(root, false));
			uint64_t off = 0;
			for (size_t z = 0; z < ARRAY_SIZE(sizes); z++) {
				tt_fill_random(&r, buf, sizes[z]);
				vdev_io_t io = { .vio_offset = off, .vio_size = sizes[z],
				    .vio_buf = buf };
				TT_OK(vdev_write(top, &io));
				check_on_disk(top, off, buf, sizes[z]);
				off += vdev_psize_to_asize(top, sizes[z]);
			}
			tt_unlink_leaves(root);
			vdev_free(root);
		}
	}
	tarn_free(buf);
}

typedef struct recon_case {
	int n, p;
	uint64_t ashift;
} recon_case_t;

/* Save every column's bytes as written (valid part for data). */
static uint8_t **
save_cols(vdev_t *top, const tcol_t *cols, int ncols)
{
	uint8_t **saved = tarn_alloc((size_t)ncols * sizeof (uint8_t *));
	for (int c = 0; c < ncols; c++) {
		saved[c] = tarn_alloc(cols[c].size);
		tt_file_rw(vdev_path(vdev_child(top, cols[c].child)), false, saved[c],
		    cols[c].valid, cols[c].off);
	}
	return (saved);
}

static void
free_cols(uint8_t **saved, int ncols)
{
	for (int c = 0; c < ncols; c++)
		tarn_free(saved[c]);
	tarn_free(saved);
}

static bool
cols_intact(vdev_t *top, const tcol_t *cols, int ncols, uint8_t **saved)
{
	bool ok = true;
	uint8_t *tmp = tarn_alloc(cols[0].size);
	for (int c = 0; c < ncols; c++) {
		tt_file_rw(vdev_path(vdev_child(top, cols[c].child)), false, tmp,
		    cols[c].valid, cols[c].off);
		if (memcmp(tmp, saved[c], cols[c].valid) != 0)
			ok = false;
	}
	tarn_free(tmp);
	return (ok);
}

/*
 * Corrupt the columns in `set` (a bitmask over columns), some of them
 * on children taken offline first when `offline_mask` says so; read,
 * scrub, bring children back, scrub again; check data, counters and the
 * files.
 */
static void
one_combination(vdev_t *top, const tcol_t *cols, int ncols, uint8_t **saved,
    const uint8_t *data, uint64_t psize, uint64_t offset, uint32_t set,
    uint32_t offline_mask, tarn_rand_t *r, uint8_t *buf)
{
	uint64_t before[256];
	tt_ck_t ck;
	int n = vdev_children(top);
	for (int i = 0; i < n; i++)
		before[i] = tt_cksum_errors(vdev_child(top, i));
	for (int c = 0; c < ncols; c++) {
		if (!(set & (1u << c)))
			continue;
		/* Every byte changes: a 1-byte column must not be "corrupted" to itself. */
		uint8_t *junk = tarn_alloc(cols[c].valid);
		for (uint64_t i = 0; i < cols[c].valid; i++)
			junk[i] = saved[c][i] ^ (uint8_t)(1 + tarn_rand_range(r, 255));
		tt_file_rw(vdev_path(vdev_child(top, cols[c].child)), true, junk,
		    cols[c].valid, cols[c].off);
		tarn_free(junk);
		if (offline_mask & (1u << c))
			TT_OK(vdev_set_offline(vdev_child(top, cols[c].child), true));
	}
	tt_ck_set(&ck, data, psize);
	memset(buf, 0xAA, psize);
	vdev_io_t io = { .vio_offset = offset, .vio_size = psize, .vio_buf = buf,
	    .vio_verify = tt_verify, .vio_verify_arg = &ck };
	TT_OK(vdev_read(top, &io));
	TT_ASSERT(memcmp(buf, data, psize) == 0);
	io.vio_flags = VDEV_IO_SCRUB;
	TT_OK(vdev_read(top, &io));
	TT_ASSERT(memcmp(buf, data, psize) == 0);
	for (int c = 0; c < ncols; c++)
		if (offline_mask & (1u << c))
			TT_OK(vdev_set_offline(vdev_child(top, cols[c].child), false));
	TT_EQ(vdev_state(top), VDEV_STATE_HEALTHY);
	TT_OK(vdev_read(top, &io));     /* scrub again: heals the stale ones */
	io.vio_flags = VDEV_IO_SCRUB;
	TT_OK(vdev_read(top, &io));
	TT_EQ(io.vio_bad_children, 0);
	for (int c = 0; c < ncols; c++) {
		uint64_t want = (set & (1u << c)) ? 1 : 0;
		if (tt_cksum_errors(vdev_child(top, cols[c].child)) - before[cols[c].child] != want)
			fprintf(stderr, "  n=%d p=%d ashift=%d psize=%" PRIu64 " off=%" PRIu64
			    " set=%#x offline=%#x col=%d\n", n, vdev_nparity(top),
			    (int)vdev_ashift(top), psize, offset, set, offline_mask, c);
		TT_EQ(tt_cksum_errors(vdev_child(top, cols[c].child)) - before[cols[c].child],
		    want);
	}
	TT_ASSERT(cols_intact(top, cols, ncols, saved));
}

static int recon_count;

/* Every subset of 1..p columns, each corrupted, a random part offline. */
static void
recon_sizes(const recon_case_t *rc, const uint64_t *sizes, int nsizes, tarn_rand_t *r)
{
	vdev_t *root = tt_group_tree(VDEV_TYPE_RAIDZ, rc->p, rc->n, rc->ashift, "rc");
	vdev_t *top = vdev_child(root, 0);
	uint8_t *data = tarn_alloc(MiB), *buf = tarn_alloc(MiB);
	tcol_t cols[256];
	TT_OK(vdev_open(root, false));
	for (int z = 0; z < nsizes; z++) {
		uint64_t psize = sizes[z];
		uint64_t asize = vdev_psize_to_asize(top, psize);
		uint64_t sec = 1ULL << rc->ashift;
		uint64_t offset = tarn_rand_range(r, (vdev_asize(top) - asize) / sec / 64) * sec;
		int ncols = layout(rc->n, rc->p, rc->ashift, offset, psize, cols);
		tt_fill_random(r, data, psize);
		vdev_io_t io = { .vio_offset = offset, .vio_size = psize, .vio_buf = data };
		TT_OK(vdev_write(top, &io));
		uint8_t **saved = save_cols(top, cols, ncols);
		for (uint32_t set = 1; set < (1u << ncols); set++) {
			int bits = __builtin_popcount(set);
			if (bits > rc->p)
				continue;
			uint32_t off_mask = (uint32_t)tarn_rand_u64(r) & set;
			if (tarn_rand_range(r, 2) == 0)
				off_mask = 0;
			one_combination(top, cols, ncols, saved, data, psize, offset, set,
			    off_mask, r, buf);
			recon_count++;
		}
		free_cols(saved, ncols);
	}
	tarn_free(data);
	tarn_free(buf);
	tt_unlink_leaves(root);
	vdev_free(root);
}

static void
test_reconstruct_every_combination(void)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, 20240501);
	static const int shapes[][2] = {
		{ 2, 1 }, { 3, 1 }, { 5, 1 }, { 8, 1 },
		{ 3, 2 }, { 4, 2 }, { 6, 2 }, { 8, 2 },
		{ 4, 3 }, { 5, 3 }, { 7, 3 }, { 8, 3 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(shapes); i++) {
		for (uint64_t ashift = 9; ashift <= 12; ashift += 3) {
			recon_case_t rc = { shapes[i][0], shapes[i][1], ashift };
			uint64_t sec = 1ULL << ashift;
			uint64_t sizes[] = { 1, sec, sec + 17, 3 * sec + 100, 7 * sec,
			    37 * sec - 3, 128 * KiB + sec, MiB - 3 * 512 + 5 };
			recon_sizes(&rc, sizes, (int)ARRAY_SIZE(sizes), &r);
		}
	}
	printf("  %d combinations checked\n", recon_count);
}

/* The largest blocks: every single and a sample of double/triple faults. */
static void
test_reconstruct_1m(void)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, 99);
	static const recon_case_t cases[] = { { 5, 1, 12 }, { 6, 2, 9 }, { 8, 3, 12 } };
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		vdev_t *root = tt_group_tree(VDEV_TYPE_RAIDZ, cases[i].p, cases[i].n,
		    cases[i].ashift, "big");
		vdev_t *top = vdev_child(root, 0);
		uint8_t *data = tarn_alloc(MiB), *buf = tarn_alloc(MiB);
		tcol_t cols[256];
		TT_OK(vdev_open(root, false));
		uint64_t psize = MiB - 3 * 512, offset = 5ULL << cases[i].ashift;
		int ncols = layout(cases[i].n, cases[i].p, cases[i].ashift, offset, psize, cols);
		tt_fill_random(&r, data, psize);
		vdev_io_t io = { .vio_offset = offset, .vio_size = psize, .vio_buf = data };
		TT_OK(vdev_write(top, &io));
		uint8_t **saved = save_cols(top, cols, ncols);
		for (int t = 0; t < 12; t++) {
			uint32_t set = 0;
			int want = 1 + (int)tarn_rand_range(&r, (uint64_t)cases[i].p);
			while (__builtin_popcount(set) < want)
				set |= 1u << tarn_rand_range(&r, (uint64_t)ncols);
			one_combination(top, cols, ncols, saved, data, psize, offset, set,
			    0, &r, buf);
		}
		free_cols(saved, ncols);
		tarn_free(data);
		tarn_free(buf);
		tt_unlink_leaves(root);
		vdev_free(root);
	}
}

/* More bad columns than parity: ECKSUM, charged to the raidz, data not returned. */
static void
test_too_many_bad(void)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, 5);
	vdev_t *root = tt_group_tree(VDEV_TYPE_RAIDZ, 2, 5, 9, "tm");
	vdev_t *top = vdev_child(root, 0);
	uint8_t data[8192], buf[8192], junk[8192];
	tcol_t cols[16];
	TT_OK(vdev_open(root, false));
	tt_fill_random(&r, data, sizeof (data));
	vdev_io_t io = { .vio_offset = 0, .vio_size = sizeof (data), .vio_buf = data };
	TT_OK(vdev_write(top, &io));
	int ncols = layout(5, 2, 9, 0, sizeof (data), cols);
	TT_EQ(ncols, 5);
	for (int c = 2; c < 5; c++) {
		tt_fill_random(&r, junk, cols[c].valid);
		tt_file_rw(vdev_path(vdev_child(top, cols[c].child)), true, junk,
		    cols[c].valid, cols[c].off);
	}
	tt_ck_t ck;
	tt_ck_set(&ck, data, sizeof (data));
	io = (vdev_io_t){ .vio_offset = 0, .vio_size = sizeof (data), .vio_buf = buf,
	    .vio_verify = tt_verify, .vio_verify_arg = &ck };
	TT_EQ(vdev_read(top, &io), ECKSUM);
	TT_EQ(vdev_stat(top)->vs_checksum_errors, 1);
	for (int c = 0; c < 5; c++)
		TT_EQ(tt_cksum_errors(vdev_child(top, c)), 0);
	io.vio_flags = VDEV_IO_PROBE;
	TT_EQ(vdev_read(top, &io), ECKSUM);
	TT_EQ(vdev_stat(top)->vs_checksum_errors, 1);
	tt_unlink_leaves(root);
	vdev_free(root);
}

/* Writes while children are offline; they come back stale and get healed. */
static void
test_degraded_write(void)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, 11);
	vdev_t *root = tt_group_tree(VDEV_TYPE_RAIDZ, 2, 6, 9, "dw");
	vdev_t *top = vdev_child(root, 0);
	uint8_t *data = tarn_alloc(64 * KiB), *buf = tarn_alloc(64 * KiB);
	TT_OK(vdev_open(root, false));
	TT_OK(vdev_set_offline(vdev_child(top, 1), true));
	TT_OK(vdev_set_offline(vdev_child(top, 4), true));
	TT_EQ(vdev_state(top), VDEV_STATE_DEGRADED);
	TT_EQ(vdev_state(root), VDEV_STATE_DEGRADED);
	TT_EQ(vdev_set_offline(vdev_child(top, 0), true), EBUSY);
	TT_EQ(vdev_state(vdev_child(top, 0)), VDEV_STATE_HEALTHY);
	tt_fill_random(&r, data, 64 * KiB);
	vdev_io_t io = { .vio_offset = 512 * 7, .vio_size = 64 * KiB, .vio_buf = data };
	TT_OK(vdev_write(top, &io));
	tt_ck_t ck;
	tt_ck_set(&ck, data, 64 * KiB);
	io = (vdev_io_t){ .vio_offset = 512 * 7, .vio_size = 64 * KiB, .vio_buf = buf,
	    .vio_verify = tt_verify, .vio_verify_arg = &ck };
	TT_OK(vdev_read(top, &io));
	TT_CHECK(memcmp(buf, data, 64 * KiB) == 0);
	TT_OK(vdev_set_offline(vdev_child(top, 1), false));
	TT_OK(vdev_set_offline(vdev_child(top, 4), false));
	TT_EQ(vdev_state(root), VDEV_STATE_HEALTHY);
	io.vio_flags = VDEV_IO_SCRUB;
	TT_OK(vdev_read(top, &io));
	TT_EQ(io.vio_bad_children, 2);
	TT_EQ(tt_cksum_errors(vdev_child(top, 1)), 1);
	TT_EQ(tt_cksum_errors(vdev_child(top, 4)), 1);
	TT_CHECK(io.vio_repaired > 0);
	TT_OK(vdev_read(top, &io));
	TT_EQ(io.vio_bad_children, 0);
	/* Three offline is one too many for writes. */
	TT_OK(vdev_set_offline(vdev_child(top, 0), true));
	TT_OK(vdev_set_offline(vdev_child(top, 2), true));
	TT_EQ(vdev_set_offline(vdev_child(top, 3), true), EBUSY);
	tarn_free(data);
	tarn_free(buf);
	tt_unlink_leaves(root);
	vdev_free(root);
}

/* Columns that return EIO are rebuilt, charged READ errors and rewritten. */
static void
test_eio_columns(void)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, 12);
	vdev_t *root = tt_group_tree(VDEV_TYPE_RAIDZ, 2, 5, 9, "eio");
	vdev_t *top = vdev_child(root, 0);
	uint8_t *data = tarn_alloc(32 * KiB), *buf = tarn_alloc(32 * KiB);
	vdev_fault_cfg_t fc = { .vfc_read_eio_ppm = 1000000, .vfc_seed = 1 };
	vdev_fault_t *vf0 = vdev_fault_attach(vdev_path(vdev_child(top, 0)), &fc);
	vdev_fault_t *vf3 = vdev_fault_attach(vdev_path(vdev_child(top, 3)), &fc);
	TT_OK(vdev_open(root, false));
	tt_fill_random(&r, data, 32 * KiB);
	vdev_io_t io = { .vio_offset = 0, .vio_size = 32 * KiB, .vio_buf = data };
	TT_OK(vdev_write(top, &io));
	tt_ck_t ck;
	tt_ck_set(&ck, data, 32 * KiB);
	io = (vdev_io_t){ .vio_size = 32 * KiB, .vio_buf = buf,
	    .vio_verify = tt_verify, .vio_verify_arg = &ck };
	TT_OK(vdev_read(top, &io));
	TT_CHECK(memcmp(buf, data, 32 * KiB) == 0);
	TT_EQ(vdev_stat(vdev_child(top, 0))->vs_read_errors, 1);
	TT_EQ(vdev_stat(vdev_child(top, 3))->vs_read_errors, 1);
	TT_EQ(tt_cksum_errors(vdev_child(top, 0)), 0);
	TT_EQ(io.vio_bad_children, 2);
	TT_CHECK(io.vio_repaired > 0);
	/* Plus one corrupted column: 3 bad > 2 parity. */
	tcol_t cols[8];
	(void) layout(5, 2, 9, 0, 32 * KiB, cols);
	uint8_t junk[512] = { 1, 2, 3 };
	tt_file_rw(vdev_path(vdev_child(top, 1)), true, junk, sizeof (junk), cols[1].off);
	TT_EQ(vdev_read(top, &io), ECKSUM);
	/* Without the injector on child 3: one EIO, one bad: a scrub repairs. */
	vdev_fault_detach(vf3);
	vdev_close(root);
	TT_OK(vdev_open(root, false));
	io.vio_flags = VDEV_IO_SCRUB;
	TT_OK(vdev_read(top, &io));
	TT_CHECK(memcmp(buf, data, 32 * KiB) == 0);
	TT_EQ(tt_cksum_errors(vdev_child(top, 1)), 1);
	vdev_fault_detach(vf0);
	tarn_free(data);
	tarn_free(buf);
	vdev_close(root);
	tt_unlink_leaves(root);
	vdev_free(root);
}

/* No verify callback: data as read; EIO columns rebuilt from parity. */
static void
test_no_verify(void)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, 13);
	vdev_t *root = tt_group_tree(VDEV_TYPE_RAIDZ, 1, 4, 9, "nv");
	vdev_t *top = vdev_child(root, 0);
	uint8_t data[6000], buf[6000];
	TT_OK(vdev_open(root, false));
	tt_fill_random(&r, data, sizeof (data));
	vdev_io_t io = { .vio_offset = 1024, .vio_size = sizeof (data), .vio_buf = data };
	TT_OK(vdev_write(top, &io));
	TT_OK(vdev_set_offline(vdev_child(top, 3), true));
	io.vio_buf = buf;
	TT_OK(vdev_read(top, &io));
	TT_CHECK(memcmp(buf, data, sizeof (data)) == 0);
	io.vio_flags = VDEV_IO_SCRUB;
	TT_OK(vdev_read(top, &io));
	TT_CHECK(memcmp(buf, data, sizeof (data)) == 0);
	tt_unlink_leaves(root);
	vdev_free(root);
}

/* Bad arguments: misaligned offsets, beyond the end, root. */
static void
test_bad_io(void)
{
	vdev_t *root = tt_group_tree(VDEV_TYPE_RAIDZ, 1, 3, 12, "bad");
	vdev_t *top = vdev_child(root, 0);
	uint8_t buf[4096] = { 0 };
	TT_OK(vdev_open(root, false));
	vdev_io_t io = { .vio_offset = 512, .vio_size = 4096, .vio_buf = buf };
	TT_EQ(vdev_write(top, &io), EINVAL);
	io.vio_offset = vdev_asize(top) - 4096;
	TT_EQ(vdev_write(top, &io), EINVAL);
	io.vio_offset = vdev_asize(top) - 2 * 4096;
	TT_OK(vdev_write(top, &io));
	TT_EQ(vdev_write(root, &io), EINVAL);
	io.vio_size = 0;
	TT_EQ(vdev_read(top, &io), EINVAL);
	tt_unlink_leaves(root);
	vdev_free(root);
}

typedef struct mt_arg {
	vdev_t *top;
	int id;
	int errors;
} mt_arg_t;

static void *
mt_worker(void *arg)
{
	mt_arg_t *a = arg;
	tarn_rand_t r;
	tarn_rand_seed(&r, (uint64_t)a->id + 100);
	uint64_t slot = 512 * KiB;   /* >= asize of 128K + parity on 5-wide raidz2 */
	uint8_t *data = tarn_alloc(128 * KiB), *buf = tarn_alloc(128 * KiB);
	for (int i = 0; i < 60; i++) {
		uint64_t psize = 512 * (1 + tarn_rand_range(&r, 256));
		uint64_t off = ((uint64_t)a->id * 64 + (uint64_t)(i % 64)) * slot;
		tt_fill_random(&r, data, psize);
		vdev_io_t io = { .vio_offset = off, .vio_size = psize, .vio_buf = data };
		if (vdev_write(a->top, &io) != 0)
			a->errors++;
		tt_ck_t ck;
		tt_ck_set(&ck, data, psize);
		io = (vdev_io_t){ .vio_offset = off, .vio_size = psize, .vio_buf = buf,
		    .vio_verify = tt_verify, .vio_verify_arg = &ck,
		    .vio_flags = (i % 3 == 0) ? VDEV_IO_SCRUB : 0 };
		if (vdev_read(a->top, &io) != 0 || memcmp(buf, data, psize) != 0)
			a->errors++;
	}
	tarn_free(data);
	tarn_free(buf);
	return (NULL);
}

static void
test_threads(void)
{
	vdev_t *root = tt_group_tree(VDEV_TYPE_RAIDZ, 2, 5, 9, "mt");
	TT_OK(vdev_open(root, false));
	pthread_t th[4];
	mt_arg_t a[4];
	for (int i = 0; i < 4; i++) {
		a[i] = (mt_arg_t){ .top = vdev_child(root, 0), .id = i };
		TT_OK(pthread_create(&th[i], NULL, mt_worker, &a[i]));
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		TT_EQ(a[i].errors, 0);
	}
	tt_unlink_leaves(root);
	vdev_free(root);
}

/* 1 MiB blocks on raidz2 of 6: write and read throughput (page cache). */
static void
test_throughput(void)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, 3);
	vdev_t *root = tt_group_tree(VDEV_TYPE_RAIDZ, 2, 6, 12, "tp");
	vdev_t *top = vdev_child(root, 0);
	uint8_t *data = tarn_alloc(MiB), *buf = tarn_alloc(MiB);
	TT_OK(vdev_open(root, false));
	tt_fill_random(&r, data, MiB);
	uint64_t asize = vdev_psize_to_asize(top, MiB);
	int nblk = 128;
	uint64_t t0 = tarn_now_ns();
	for (int i = 0; i < nblk; i++) {
		vdev_io_t io = { .vio_offset = (uint64_t)i * asize, .vio_size = MiB,
		    .vio_buf = data };
		TT_OK(vdev_write(top, &io));
	}
	uint64_t t1 = tarn_now_ns();
	for (int i = 0; i < nblk; i++) {
		vdev_io_t io = { .vio_offset = (uint64_t)i * asize, .vio_size = MiB,
		    .vio_buf = buf };
		TT_OK(vdev_read(top, &io));
	}
	uint64_t t2 = tarn_now_ns();
	/* Degraded: one child offline, every block rebuilt. */
	TT_OK(vdev_set_offline(vdev_child(top, 2), true));
	for (int i = 0; i < nblk; i++) {
		vdev_io_t io = { .vio_offset = (uint64_t)i * asize, .vio_size = MiB,
		    .vio_buf = buf };
		TT_OK(vdev_read(top, &io));
	}
	uint64_t t3 = tarn_now_ns();
	TT_CHECK(memcmp(buf, data, MiB) == 0);
	double mb = (double)nblk;
	printf("  raidz2x6 1MiB: write %.0f MB/s, read %.0f MB/s, degraded read %.0f MB/s\n",
	    mb / ((double)(t1 - t0) / 1e9), mb / ((double)(t2 - t1) / 1e9),
	    mb / ((double)(t3 - t2) / 1e9));
	tarn_free(data);
	tarn_free(buf);
	tt_unlink_leaves(root);
	vdev_free(root);
}

static void
test_cleanup(void)
{
	tt_tmpdir_cleanup();
}

TT_MAIN(
	{ "asize", test_asize },
	{ "layout_and_parity_format", test_layout_and_parity_format },
	{ "reconstruct_every_combination", test_reconstruct_every_combination },
	{ "reconstruct_1m", test_reconstruct_1m },
	{ "too_many_bad", test_too_many_bad },
	{ "degraded_write", test_degraded_write },
	{ "eio_columns", test_eio_columns },
	{ "no_verify", test_no_verify },
	{ "bad_io", test_bad_io },
	{ "threads", test_threads },
	{ "throughput", test_throughput },
	{ "cleanup", test_cleanup },
)
