/*
 * Unit tests of the zio pipeline (zio.c) and block pointers (blkptr.c) on
 * real file vdevs: round trips for every checksum and compression, ditto
 * copies, self-heal across copies, mirror and raidz1 top-levels, batches,
 * in-place rewrites, ENOSPC, write failures, validation.
 */
#include "tt.h"
#include "zio.h"

#include <fcntl.h>
#include <unistd.h>

/* ---- a test pool: file leaves, a metaslab class, a zio context ---- */

#define TP_MAX_LEAVES 16
#define TP_LEAF_SIZE  (96 * MiB)

typedef struct tpool {
	vdev_t *root;
	metaslab_class_t *mc;
	zio_ctx_t *zc;
	int nleaves;
	char path[TP_MAX_LEAVES][300];
	vdev_t *leaf[TP_MAX_LEAVES];
	int errors;            /* error callback calls (atomic) */
	int last_error;
	blkptr_t last_bp;
} tpool_t;

static int tp_seq;

static vdev_t *
tp_leaf(tpool_t *tp, uint64_t size)
{
	TT_ASSERT(tp->nleaves < TP_MAX_LEAVES);
	static bool cleanup_registered;
	if (!cleanup_registered) {
		cleanup_registered = true;
		atexit(tt_tmpdir_cleanup);
	}
	char *p = tp->path[tp->nleaves];
	snprintf(p, sizeof (tp->path[0]), "%s/leaf-%d", tt_tmpdir(), tp_seq++);
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
	TT_ASSERT(fd >= 0);
	TT_ASSERT(ftruncate(fd, (off_t)size) == 0);
	close(fd);
	vdev_t *vd = vdev_alloc(VDEV_TYPE_FILE, tarn_guid());
	vdev_set_path(vd, p);
	tp->leaf[tp->nleaves++] = vd;
	return (vd);
}

static void
tp_begin(tpool_t *tp)
{
	memset(tp, 0, sizeof (*tp));
	tp->root = vdev_alloc(VDEV_TYPE_ROOT, tarn_guid());
}

/* Add a top-level: FILE (n ignored), MIRROR of n, RAIDZ of n with parity. */
static vdev_t *
tp_add_top(tpool_t *tp, vdev_type_t type, int n, int nparity, uint64_t size)
{
	vdev_t *top;
	if (type == VDEV_TYPE_FILE) {
		top = tp_leaf(tp, size);
	} else {
		top = vdev_alloc(type, tarn_guid());
		vdev_set_nparity(top, nparity);
		for (int i = 0; i < n; i++)
			vdev_add_child(top, tp_leaf(tp, size));
	}
	vdev_add_child(tp->root, top);
	return (top);
}

static void
tp_error_cb(void *arg, const blkptr_t *bp, int error)
{
	tpool_t *tp = arg;
	__atomic_add_fetch(&tp->errors, 1, __ATOMIC_SEQ_CST);
	tp->last_error = error;
	tp->last_bp = *bp;
}

static void
tp_open(tpool_t *tp, int nthreads)
{
	TT_OK(vdev_open(tp->root, false));
	tp->mc = metaslab_class_create();
	for (int t = 0; t < vdev_children(tp->root); t++) {
		vdev_t *top = vdev_child(tp->root, t);
		vdev_set_ms_shift(top, metaslab_pick_shift(vdev_asize(top)));
		vdev_set_ms_count(top, DIV_ROUND_UP(vdev_asize(top),
		    1ULL << vdev_ms_shift(top)));
		metaslab_group_t *mg = metaslab_group_create(tp->mc, top);
		vdev_set_ms_group(top, mg);
		for (uint64_t m = 0; m < metaslab_group_count(mg); m++)
			TT_OK(metaslab_load(metaslab_group_get(mg, m), NULL, 0, 0));
	}
	tp->zc = zio_ctx_create(tp->root, tp->mc, nthreads);
	zio_ctx_set_error_cb(tp->zc, tp_error_cb, tp);
}

static void
tp_close(tpool_t *tp)
{
	if (tp->zc != NULL)
		zio_ctx_destroy(tp->zc);
	for (int t = 0; tp->root != NULL && t < vdev_children(tp->root); t++) {
		vdev_t *top = vdev_child(tp->root, t);
		if (vdev_ms_group(top) != NULL)
			metaslab_group_destroy(vdev_ms_group(top));
		vdev_set_ms_group(top, NULL);
	}
	if (tp->mc != NULL)
		metaslab_class_destroy(tp->mc);
	if (tp->root != NULL) {
		vdev_close(tp->root);
		vdev_free(tp->root);
	}
	for (int i = 0; i < tp->nleaves; i++)
		unlink(tp->path[i]);
	memset(tp, 0, sizeof (*tp));
}

/* A pool of `ntops` plain file top-levels. */
static void
tp_simple(tpool_t *tp, int ntops, int nthreads)
{
	tp_begin(tp);
	for (int i = 0; i < ntops; i++)
		tp_add_top(tp, VDEV_TYPE_FILE, 0, 0, TP_LEAF_SIZE);
	tp_open(tp, nthreads);
}

/* ---- data and raw file access ---- */

static void
fill_data(uint8_t *buf, size_t len, uint64_t seed, bool compressible)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, seed);
	if (!compressible) {
		for (size_t i = 0; i < len; i += 8) {
			uint64_t v = tarn_rand_u64(&r);
			memcpy(buf + i, &v, MIN(8, len - i));
		}
		return;
	}
	static const char *words[] = { "alpha ", "beta ", "gamma ", "delta ",
	    "epsilon ", "zeta ", "eta ", "theta\n" };
	size_t off = 0;
	while (off < len) {
		const char *w = words[tarn_rand_range(&r, ARRAY_SIZE(words))];
		size_t n = MIN(strlen(w), len - off);
		memcpy(buf + off, w, n);
		off += n;
	}
}

/* Leaf file bytes at `off` of a plain file top's allocatable space. */
static void
raw_read(const char *path, uint64_t off, void *buf, uint64_t len)
{
	int fd = open(path, O_RDONLY);
	TT_ASSERT(fd >= 0);
	TT_ASSERT(pread(fd, buf, len, (off_t)(VDEV_LABEL_START_SIZE + off)) == (ssize_t)len);
	close(fd);
}

static void
raw_write(const char *path, uint64_t off, const void *buf, uint64_t len)
{
	int fd = open(path, O_RDWR);
	TT_ASSERT(fd >= 0);
	TT_ASSERT(pwrite(fd, buf, len, (off_t)(VDEV_LABEL_START_SIZE + off)) == (ssize_t)len);
	close(fd);
}

/* Flip bytes in the middle of a DVA's copy (plain file top only). */
static void
corrupt_dva(tpool_t *tp, const blkptr_t *bp, int d)
{
	const dva_t *dva = &bp->bp_dva[d];
	vdev_t *top = vdev_lookup_top(tp->root, dva->dva_vdev);
	TT_ASSERT(vdev_ops(top)->vop_leaf);
	uint8_t junk[64];
	memset(junk, 0x5a, sizeof (junk));
	raw_write(vdev_path(top), dva->dva_offset + bp->bp_psize / 2, junk, sizeof (junk));
}

/* Overwrite `len` bytes of a leaf's data area from its start with junk. */
static void
trash_leaf(const char *path, uint64_t len, uint64_t seed)
{
	uint64_t chunk = MiB;
	uint8_t *junk = tarn_alloc(chunk);
	fill_data(junk, chunk, seed, false);
	for (uint64_t off = 0; off < len; off += chunk)
		raw_write(path, off, junk, MIN(chunk, len - off));
	tarn_free(junk);
}

/* End of the highest DVA of these bps (a bound for every child offset). */
static uint64_t
dvas_end(const blkptr_t *bps, int n)
{
	uint64_t end = 0;
	for (int i = 0; i < n; i++)
		for (int d = 0; d < bps[i].bp_ndvas; d++)
			end = MAX(end, bps[i].bp_dva[d].dva_offset + DVA_ASIZE(&bps[i].bp_dva[d]));
	return (end);
}

static zio_prop_t
prop(int cksum, int comp, int copies)
{
	zio_prop_t zp = { .zp_checksum = (uint8_t)cksum, .zp_compress = (uint8_t)comp,
	    .zp_copies = (uint8_t)copies, .zp_type = DMU_OT_TEST };
	return (zp);
}

static uint64_t
leaf_cksum_errors(const vdev_t *vd)
{
	return (__atomic_load_n(&vdev_stat(vd)->vs_checksum_errors, __ATOMIC_SEQ_CST));
}

/* ---- tests ---- */

static void
test_roundtrip_all_algorithms(void)
{
	tpool_t tp;
	tp_simple(&tp, 1, 0);
	static const int cks[] = { ZIO_CHECKSUM_OFF, ZIO_CHECKSUM_FLETCHER4,
	    ZIO_CHECKSUM_SHA256, ZIO_CHECKSUM_XXH3_128 };
	static const int comps[] = { ZIO_COMPRESS_OFF, ZIO_COMPRESS_LZ4,
	    ZIO_COMPRESS_ZSTD, ZIO_COMPRESS_GZIP };
	static const uint64_t sizes[] = { 512, 4 * KiB, 128 * KiB, SPA_MAXBLOCKSIZE };
	enum { N = 4 * 4 * 4 * 2 };
	uint8_t *data[N], *back[N];
	blkptr_t bps[N];
	zio_prop_t zps[N];
	uint64_t lsz[N];
	int n = 0;
	zio_batch_t *b = zio_batch_create(tp.zc);
	for (int c = 0; c < 4; c++)
		for (int z = 0; z < 4; z++)
			for (int s = 0; s < 4; s++)
				for (int k = 0; k < 2; k++, n++) {
					lsz[n] = sizes[s];
					data[n] = tarn_alloc(lsz[n]);
					back[n] = tarn_alloc(lsz[n]);
					fill_data(data[n], lsz[n], n, k == 0);
					zps[n] = prop(cks[c], comps[z], 1);
					zps[n].zp_blevel = (uint8_t)(n % 3);
					memset(&bps[n], 0xee, sizeof (blkptr_t));
					bps[n].bp_fill = 77;
					zio_batch_write(b, 7, &zps[n], data[n], lsz[n], &bps[n], false);
				}
	TT_OK(zio_batch_wait(b));
	for (int i = 0; i < N; i++) {
		blkptr_t *bp = &bps[i];
		bool compressible = i % 2 == 0;
		TT_OK(blkptr_validate(bp, tp.root));
		TT_EQ(bp->bp_lsize, lsz[i]);
		TT_EQ(bp->bp_birth, 7);
		TT_EQ(bp->bp_phys_birth, 7);
		TT_EQ(bp->bp_ndvas, 1);
		TT_EQ(bp->bp_cksum, zps[i].zp_checksum);
		TT_EQ(bp->bp_type, DMU_OT_TEST);
		TT_EQ(bp->bp_level, zps[i].zp_blevel);
		TT_EQ(bp->bp_fill, zps[i].zp_blevel == 0 ? 1 : 77);
		TT_EQ(bp->bp_flags, 0);
		if (zps[i].zp_compress != ZIO_COMPRESS_OFF && compressible && lsz[i] > 512) {
			TT_EQ(bp->bp_comp, zps[i].zp_compress);
			TT_CHECK(bp->bp_psize < bp->bp_lsize);
		} else {
			TT_EQ(bp->bp_comp, ZIO_COMPRESS_OFF);
			TT_EQ(bp->bp_psize, bp->bp_lsize);
		}
		TT_EQ(bp->bp_psize % 512, 0);
	}
	b = zio_batch_create(tp.zc);
	int errs[N];
	for (int i = 0; i < N; i++)
		zio_batch_read(b, &bps[i], back[i], 0, &errs[i]);
	TT_OK(zio_batch_wait(b));
	for (int i = 0; i < N; i++) {
		TT_EQ(errs[i], 0);
		TT_CHECK(memcmp(data[i], back[i], lsz[i]) == 0);
		/* synchronous read too */
		memset(back[i], 0, lsz[i]);
		TT_OK(zio_read(tp.zc, &bps[i], back[i], 0));
		TT_CHECK(memcmp(data[i], back[i], lsz[i]) == 0);
		tarn_free(data[i]);
		tarn_free(back[i]);
	}
	TT_EQ(tp.errors, 0);
	zio_stats_t st;
	zio_ctx_stats(tp.zc, &st);
	TT_EQ(st.zs_writes, N);
	TT_EQ(st.zs_reads, 2 * N);
	tp_close(&tp);
}

/* Copies land on distinct vdevs when there are enough, apart otherwise. */
static void
check_dvas_apart(tpool_t *tp, const blkptr_t *bp)
{
	int ntops = vdev_children(tp->root);
	for (int i = 0; i < bp->bp_ndvas; i++) {
		for (int j = i + 1; j < bp->bp_ndvas; j++) {
			const dva_t *a = &bp->bp_dva[i], *c = &bp->bp_dva[j];
			if (ntops >= bp->bp_ndvas)
				TT_CHECK(a->dva_vdev != c->dva_vdev);
			if (a->dva_vdev == c->dva_vdev)
				TT_CHECK(a->dva_offset + DVA_ASIZE(a) <= c->dva_offset ||
				    c->dva_offset + DVA_ASIZE(c) <= a->dva_offset);
		}
	}
}

static void
test_ditto_copies(void)
{
	for (int ntops = 1; ntops <= 3; ntops += 2) {
		tpool_t tp;
		tp_simple(&tp, ntops, 0);
		for (int copies = 1; copies <= 3; copies++) {
			uint8_t data[16 * 1024], back[16 * 1024];
			fill_data(data, sizeof (data), copies, false);
			zio_prop_t zp = prop(ZIO_CHECKSUM_XXH3_128, ZIO_COMPRESS_OFF, copies);
			blkptr_t bp;
			TT_OK(zio_write(tp.zc, 3, &zp, data, sizeof (data), &bp, false));
			TT_EQ(bp.bp_ndvas, copies);
			for (int d = 0; d < SPA_DVAS_PER_BP; d++)
				TT_EQ(DVA_IS_VALID(&bp.bp_dva[d]), d < copies);
			check_dvas_apart(&tp, &bp);
			TT_OK(blkptr_validate(&bp, tp.root));
			/* every copy holds the data */
			for (int d = 0; d < copies; d++) {
				vdev_t *top = vdev_lookup_top(tp.root, bp.bp_dva[d].dva_vdev);
				raw_read(vdev_path(top), bp.bp_dva[d].dva_offset, back,
				    sizeof (back));
				TT_CHECK(memcmp(data, back, sizeof (data)) == 0);
			}
			TT_OK(zio_read(tp.zc, &bp, back, 0));
			TT_CHECK(memcmp(data, back, sizeof (back)) == 0);
		}
		tp_close(&tp);
	}
}

/* Corrupt one copy: the read returns good data and rewrites the bad copy. */
static void
test_heal_ditto(void)
{
	for (int ntops = 1; ntops <= 2; ntops++) {
		for (int bad = 0; bad < 2; bad++) {
			tpool_t tp;
			tp_simple(&tp, ntops, 2);
			uint8_t data[32 * 1024], back[32 * 1024], raw[32 * 1024];
			fill_data(data, sizeof (data), 100 + bad, true);
			zio_prop_t zp = prop(ZIO_CHECKSUM_SHA256, ZIO_COMPRESS_LZ4, 2);
			blkptr_t bp;
			TT_OK(zio_write(tp.zc, 4, &zp, data, sizeof (data), &bp, false));
			TT_CHECK(bp.bp_psize < bp.bp_lsize);
			vdev_t *badtop = vdev_lookup_top(tp.root, bp.bp_dva[bad].dva_vdev);
			vdev_t *goodtop = vdev_lookup_top(tp.root, bp.bp_dva[!bad].dva_vdev);
			uint64_t before_bad = leaf_cksum_errors(badtop);
			uint64_t before_good = leaf_cksum_errors(goodtop);
			corrupt_dva(&tp, &bp, bad);
			memset(back, 0, sizeof (back));
			/* Reading copy 1 only happens when copy 0 is bad, or on scrub. */
			TT_OK(zio_read(tp.zc, &bp, back, bad == 0 ? 0 : ZIO_FLAG_SCRUB));
			TT_CHECK(memcmp(data, back, sizeof (back)) == 0);
			TT_EQ(leaf_cksum_errors(badtop), before_bad + 1);
			if (goodtop != badtop)
				TT_EQ(leaf_cksum_errors(goodtop), before_good);
			/* the bad copy now holds the good bytes again */
			uint8_t good[32 * 1024];
			raw_read(vdev_path(goodtop), bp.bp_dva[!bad].dva_offset, good, bp.bp_psize);
			raw_read(vdev_path(badtop), bp.bp_dva[bad].dva_offset, raw, bp.bp_psize);
			TT_CHECK(memcmp(good, raw, bp.bp_psize) == 0);
			zio_stats_t st;
			zio_ctx_stats(tp.zc, &st);
			TT_EQ(st.zs_heal_writes, 1);
			TT_CHECK(vdev_stat(badtop)->vs_repaired_bytes >= bp.bp_psize);
			/* reading again finds nothing wrong */
			TT_OK(zio_read(tp.zc, &bp, back, ZIO_FLAG_SCRUB));
			TT_EQ(leaf_cksum_errors(badtop), before_bad + 1);
			TT_EQ(tp.errors, 0);
			tp_close(&tp);
		}
	}
}

/* A normal read does not look at copy 1; scrub does and repairs it. */
static void
test_scrub_repairs_second_copy(void)
{
	tpool_t tp;
	tp_simple(&tp, 2, 0);
	uint8_t data[8192], back[8192], raw[8192];
	fill_data(data, sizeof (data), 5, false);
	zio_prop_t zp = prop(ZIO_CHECKSUM_FLETCHER4, ZIO_COMPRESS_OFF, 2);
	blkptr_t bp;
	TT_OK(zio_write(tp.zc, 9, &zp, data, sizeof (data), &bp, false));
	corrupt_dva(&tp, &bp, 1);
	vdev_t *top1 = vdev_lookup_top(tp.root, bp.bp_dva[1].dva_vdev);
	TT_OK(zio_read(tp.zc, &bp, back, 0));
	TT_EQ(leaf_cksum_errors(top1), 0);
	raw_read(vdev_path(top1), bp.bp_dva[1].dva_offset, raw, sizeof (raw));
	TT_CHECK(memcmp(raw, data, sizeof (raw)) != 0);
	TT_OK(zio_read(tp.zc, &bp, back, ZIO_FLAG_SCRUB));
	TT_CHECK(memcmp(back, data, sizeof (back)) == 0);
	TT_EQ(leaf_cksum_errors(top1), 1);
	raw_read(vdev_path(top1), bp.bp_dva[1].dva_offset, raw, sizeof (raw));
	TT_CHECK(memcmp(raw, data, sizeof (raw)) == 0);
	tp_close(&tp);
}

/* Read-only context and NOHEAL: good data, no repair writes. */
static void
test_no_heal_when_readonly(void)
{
	tpool_t tp;
	tp_simple(&tp, 2, 0);
	uint8_t data[4096], back[4096], raw[4096];
	fill_data(data, sizeof (data), 6, false);
	zio_prop_t zp = prop(ZIO_CHECKSUM_XXH3_128, ZIO_COMPRESS_OFF, 2);
	blkptr_t bp;
	TT_OK(zio_write(tp.zc, 2, &zp, data, sizeof (data), &bp, false));
	corrupt_dva(&tp, &bp, 0);
	vdev_t *top0 = vdev_lookup_top(tp.root, bp.bp_dva[0].dva_vdev);
	TT_OK(zio_read(tp.zc, &bp, back, ZIO_FLAG_NOHEAL));
	TT_CHECK(memcmp(back, data, sizeof (back)) == 0);
	zio_ctx_set_readonly(tp.zc, true);
	TT_OK(zio_read(tp.zc, &bp, back, ZIO_FLAG_SCRUB));
	TT_CHECK(memcmp(back, data, sizeof (back)) == 0);
	raw_read(vdev_path(top0), bp.bp_dva[0].dva_offset, raw, sizeof (raw));
	TT_CHECK(memcmp(raw, data, sizeof (raw)) != 0);
	zio_stats_t st;
	zio_ctx_stats(tp.zc, &st);
	TT_EQ(st.zs_heal_writes, 0);
	zio_ctx_set_readonly(tp.zc, false);
	TT_OK(zio_read(tp.zc, &bp, back, 0));
	raw_read(vdev_path(top0), bp.bp_dva[0].dva_offset, raw, sizeof (raw));
	TT_CHECK(memcmp(raw, data, sizeof (raw)) == 0);
	tp_close(&tp);
}

/* Every copy bad: ECKSUM, the callback hears of it, the buffer is zeroed. */
static void
test_all_copies_bad(void)
{
	tpool_t tp;
	tp_simple(&tp, 3, 0);
	for (int copies = 1; copies <= 3; copies++) {
		uint8_t data[64 * 1024], back[64 * 1024];
		fill_data(data, sizeof (data), copies, true);
		int comp = copies == 2 ? ZIO_COMPRESS_OFF : ZIO_COMPRESS_ZSTD;
		zio_prop_t zp = prop(ZIO_CHECKSUM_XXH3_128, comp, copies);
		blkptr_t bp;
		TT_OK(zio_write(tp.zc, 11, &zp, data, sizeof (data), &bp, false));
		for (int d = 0; d < copies; d++)
			corrupt_dva(&tp, &bp, d);
		int before = tp.errors;
		memset(back, 0x77, sizeof (back));
		TT_EQ(zio_read(tp.zc, &bp, back, 0), ECKSUM);
		TT_EQ(tp.errors, before + 1);
		TT_EQ(tp.last_error, ECKSUM);
		TT_CHECK(bp_equal(&tp.last_bp, &bp));
		for (size_t i = 0; i < sizeof (back); i++)
			TT_ASSERT(back[i] == 0);
		TT_EQ(zio_read(tp.zc, &bp, back, ZIO_FLAG_SCRUB), ECKSUM);
		TT_EQ(tp.errors, before + 2);
		/* speculative: same result, no report */
		TT_EQ(zio_read(tp.zc, &bp, back, ZIO_FLAG_SPECULATIVE), ECKSUM);
		TT_EQ(tp.errors, before + 2);
		/* in a batch */
		zio_batch_t *b = zio_batch_create(tp.zc);
		int err = -1;
		zio_batch_read(b, &bp, back, 0, &err);
		TT_EQ(zio_batch_wait(b), ECKSUM);
		TT_EQ(err, ECKSUM);
	}
	zio_stats_t st;
	zio_ctx_stats(tp.zc, &st);
	TT_EQ(st.zs_heal_writes, 0);
	TT_CHECK(st.zs_read_failures >= 12);
	tp_close(&tp);
}

/* Write `n` blocks of 8..64 KiB with copies and compression; verify. */
static void
write_read_many(tpool_t *tp, int n, int copies, uint64_t txg, blkptr_t *bps,
    uint8_t **data, uint64_t *lsz)
{
	zio_batch_t *b = zio_batch_create(tp->zc);
	for (int i = 0; i < n; i++) {
		lsz[i] = 8 * KiB * (1 + (uint64_t)(i % 8));
		data[i] = tarn_alloc(lsz[i]);
		fill_data(data[i], lsz[i], txg * 1000 + i, i % 2 == 0);
		zio_prop_t zp = prop(ZIO_CHECKSUM_XXH3_128,
		    i % 3 == 0 ? ZIO_COMPRESS_OFF : ZIO_COMPRESS_LZ4, copies);
		zio_batch_write(b, txg, &zp, data[i], lsz[i], &bps[i], false);
	}
	TT_OK(zio_batch_wait(b));
}

static void
verify_many(tpool_t *tp, int n, blkptr_t *bps, uint8_t **data, uint64_t *lsz, int flags)
{
	for (int i = 0; i < n; i++) {
		uint8_t *back = tarn_alloc(lsz[i]);
		TT_OK(zio_read(tp->zc, &bps[i], back, flags));
		TT_CHECK(memcmp(back, data[i], lsz[i]) == 0);
		tarn_free(back);
	}
}

/* One mirror or raidz top-level: a whole trashed leaf is survived. */
static void
redundant_top(vdev_type_t type, int width, int nparity, int victim)
{
	tpool_t tp;
	tp_begin(&tp);
	tp_add_top(&tp, type, width, nparity, TP_LEAF_SIZE);
	tp_open(&tp, 0);
	enum { N = 64 };
	blkptr_t bps[N];
	uint8_t *data[N];
	uint64_t lsz[N];
	write_read_many(&tp, N, 1, 5, bps, data, lsz);
	for (int i = 0; i < N; i++)
		TT_OK(blkptr_validate(&bps[i], tp.root));
	verify_many(&tp, N, bps, data, lsz, 0);
	for (int i = 0; i < tp.nleaves; i++)
		TT_EQ(leaf_cksum_errors(tp.leaf[i]), 0);
	/* A child's offsets never exceed the top-level's. */
	trash_leaf(tp.path[victim], MIN(dvas_end(bps, N),
	    vdev_asize(tp.leaf[victim])), 99);
	verify_many(&tp, N, bps, data, lsz, 0);
	uint64_t errs = leaf_cksum_errors(tp.leaf[victim]);
	TT_CHECK(errs > 0);
	for (int i = 0; i < tp.nleaves; i++)
		if (i != victim)
			TT_EQ(leaf_cksum_errors(tp.leaf[i]), 0);
	/* Scrub verifies every side/column and repairs what reads missed. */
	verify_many(&tp, N, bps, data, lsz, ZIO_FLAG_SCRUB);
	uint64_t errs2 = leaf_cksum_errors(tp.leaf[victim]);
	/* Now everything is repaired: another scrub finds nothing. */
	verify_many(&tp, N, bps, data, lsz, ZIO_FLAG_SCRUB);
	TT_EQ(leaf_cksum_errors(tp.leaf[victim]), errs2);
	TT_EQ(tp.errors, 0);
	for (int i = 0; i < N; i++)
		tarn_free(data[i]);
	tp_close(&tp);
}

static void
test_mirror_top(void)
{
	redundant_top(VDEV_TYPE_MIRROR, 2, 0, 1);
	redundant_top(VDEV_TYPE_MIRROR, 3, 0, 0);
}

static void
test_raidz1_top(void)
{
	redundant_top(VDEV_TYPE_RAIDZ, 4, 1, 2);
	redundant_top(VDEV_TYPE_RAIDZ, 3, 1, 0);
}

/* Ditto copies on a mirror, both sides of one copy bad. */
static void
test_ditto_on_mirror(void)
{
	tpool_t tp;
	tp_begin(&tp);
	tp_add_top(&tp, VDEV_TYPE_MIRROR, 2, 0, TP_LEAF_SIZE);
	tp_open(&tp, 0);
	enum { N = 16 };
	blkptr_t bps[N];
	uint8_t *data[N];
	uint64_t lsz[N];
	write_read_many(&tp, N, 2, 8, bps, data, lsz);
	/* Trash the region of copy 0 of block 0 on both sides. */
	uint8_t junk[512];
	memset(junk, 0xc3, sizeof (junk));
	for (int s = 0; s < 2; s++)
		raw_write(tp.path[s], bps[0].bp_dva[0].dva_offset, junk, sizeof (junk));
	verify_many(&tp, N, bps, data, lsz, 0);
	zio_stats_t st;
	zio_ctx_stats(tp.zc, &st);
	TT_EQ(st.zs_heal_writes, 1);
	uint8_t raw[512];
	for (int s = 0; s < 2; s++) {
		raw_read(tp.path[s], bps[0].bp_dva[0].dva_offset, raw, sizeof (raw));
		TT_CHECK(memcmp(raw, junk, sizeof (raw)) != 0);
		TT_CHECK(leaf_cksum_errors(tp.leaf[s]) >= 1);
	}
	verify_many(&tp, N, bps, data, lsz, ZIO_FLAG_SCRUB);
	zio_ctx_stats(tp.zc, &st);
	TT_EQ(st.zs_heal_writes, 1);
	for (int i = 0; i < N; i++)
		tarn_free(data[i]);
	tp_close(&tp);
}

static void
test_batch_256(void)
{
	tpool_t tp;
	tp_simple(&tp, 3, 0);
	enum { N = 256 };
	blkptr_t bps[N];
	uint8_t *data[N];
	uint64_t lsz[N];
	uint64_t t0 = tarn_now_ns();
	write_read_many(&tp, N, 1 + N % 2, 12, bps, data, lsz);
	uint64_t t1 = tarn_now_ns();
	/* No two blocks overlap. */
	for (int i = 0; i < N; i++)
		for (int j = i + 1; j < N; j++) {
			const dva_t *a = &bps[i].bp_dva[0], *c = &bps[j].bp_dva[0];
			if (a->dva_vdev == c->dva_vdev)
				TT_ASSERT(a->dva_offset + DVA_ASIZE(a) <= c->dva_offset ||
				    c->dva_offset + DVA_ASIZE(c) <= a->dva_offset);
		}
	uint8_t *back[N];
	int errs[N];
	zio_batch_t *b = zio_batch_create(tp.zc);
	for (int i = 0; i < N; i++) {
		back[i] = tarn_alloc(lsz[i]);
		zio_batch_read(b, &bps[i], back[i], 0, &errs[i]);
	}
	TT_OK(zio_batch_wait(b));
	uint64_t t2 = tarn_now_ns();
	for (int i = 0; i < N; i++) {
		TT_EQ(errs[i], 0);
		TT_CHECK(memcmp(back[i], data[i], lsz[i]) == 0);
		tarn_free(back[i]);
		tarn_free(data[i]);
	}
	printf("  256 writes %.1f ms, 256 reads %.1f ms\n", (t1 - t0) / 1e6, (t2 - t1) / 1e6);
	tp_close(&tp);
}

/* A worker of the zio taskq may itself wait for a batch (nested). */
typedef struct nested_arg {
	tpool_t *tp;
	int seed;
	int result;
	taskq_group_t *group;
} nested_arg_t;

static void
nested_task(void *arg)
{
	nested_arg_t *na = arg;
	enum { N = 8 };
	uint8_t *data[N];
	blkptr_t bps[N];
	zio_batch_t *b = zio_batch_create(na->tp->zc);
	for (int i = 0; i < N; i++) {
		data[i] = tarn_alloc(16 * KiB);
		fill_data(data[i], 16 * KiB, na->seed * 100 + i, true);
		zio_prop_t zp = prop(ZIO_CHECKSUM_XXH3_128, ZIO_COMPRESS_LZ4, 2);
		zio_batch_write(b, 3, &zp, data[i], 16 * KiB, &bps[i], false);
	}
	int err = zio_batch_wait(b);
	for (int i = 0; i < N && err == 0; i++) {
		uint8_t back[16 * 1024];
		err = zio_read(na->tp->zc, &bps[i], back, 0);
		if (err == 0 && memcmp(back, data[i], sizeof (back)) != 0)
			err = EIO;
	}
	for (int i = 0; i < N; i++)
		tarn_free(data[i]);
	na->result = err;
	taskq_group_done(na->group, err);
}

static void
test_nested_batches(void)
{
	tpool_t tp;
	tp_simple(&tp, 2, 1);     /* one worker: the worst case */
	enum { T = 4 };
	nested_arg_t na[T];
	taskq_group_t g;
	taskq_group_init(&g, T);
	for (int i = 0; i < T; i++) {
		na[i] = (nested_arg_t){ .tp = &tp, .seed = i, .result = -1, .group = &g };
		taskq_dispatch(zio_ctx_taskq(tp.zc), nested_task, &na[i]);
	}
	TT_OK(taskq_group_wait(&g));
	for (int i = 0; i < T; i++)
		TT_EQ(na[i].result, 0);
	tp_close(&tp);
}

static void
test_rewrite_in_place(void)
{
	tpool_t tp;
	tp_simple(&tp, 2, 0);
	uint8_t a[16384], c[16384], back[16384];
	fill_data(a, sizeof (a), 1, false);
	fill_data(c, sizeof (c), 2, false);
	zio_prop_t zp = prop(ZIO_CHECKSUM_XXH3_128, ZIO_COMPRESS_LZ4, 2);
	blkptr_t bp, first;
	TT_OK(zio_write(tp.zc, 20, &zp, a, sizeof (a), &bp, false));
	first = bp;
	/* Same txg, same size: same DVAs, new content. */
	TT_OK(zio_write(tp.zc, 20, &zp, c, sizeof (c), &bp, true));
	TT_CHECK(memcmp(first.bp_dva, bp.bp_dva, sizeof (bp.bp_dva)) == 0);
	TT_CHECK(!zio_cksum_equal(&first.bp_cksum_val, &bp.bp_cksum_val));
	TT_OK(zio_read(tp.zc, &bp, back, 0));
	TT_CHECK(memcmp(back, c, sizeof (back)) == 0);
	for (int d = 0; d < 2; d++)
		TT_CHECK(metaslab_is_allocated(tp.mc, &bp.bp_dva[d]));
	/* Same txg, smaller psize (compressible): written in the old allocation. */
	blkptr_t old = bp;
	uint8_t z[16384];
	fill_data(z, sizeof (z), 3, true);
	TT_OK(zio_write(tp.zc, 20, &zp, z, sizeof (z), &bp, true));
	TT_CHECK(bp.bp_psize < old.bp_psize);
	TT_CHECK(memcmp(old.bp_dva, bp.bp_dva, sizeof (bp.bp_dva)) == 0);
	for (int d = 0; d < 2; d++)
		TT_CHECK(metaslab_is_allocated(tp.mc, &bp.bp_dva[d]));
	TT_OK(zio_read(tp.zc, &bp, back, 0));
	TT_CHECK(memcmp(back, z, sizeof (back)) == 0);
	/* Same txg, back to the larger data: it still fits the allocation. */
	TT_EQ(DVA_ASIZE(&bp.bp_dva[0]), DVA_ASIZE(&old.bp_dva[0]));
	TT_OK(zio_write(tp.zc, 20, &zp, c, sizeof (c), &bp, true));
	TT_CHECK(memcmp(old.bp_dva, bp.bp_dva, sizeof (bp.bp_dva)) == 0);
	TT_OK(zio_read(tp.zc, &bp, back, 0));
	TT_CHECK(memcmp(back, c, sizeof (back)) == 0);
	/* Same txg, larger than the allocation: new DVAs, the old freed at once. */
	old = bp;
	uint8_t *big = tarn_alloc(65536), *bigback = tarn_alloc(65536);
	fill_data(big, 65536, 4, false);
	TT_OK(zio_write(tp.zc, 20, &zp, big, 65536, &bp, true));
	TT_CHECK(memcmp(old.bp_dva, bp.bp_dva, sizeof (bp.bp_dva)) != 0);
	for (int d = 0; d < 2; d++) {
		TT_CHECK(!metaslab_is_allocated(tp.mc, &old.bp_dva[d]));
		TT_CHECK(metaslab_is_allocated(tp.mc, &bp.bp_dva[d]));
	}
	TT_OK(zio_read(tp.zc, &bp, bigback, 0));
	TT_CHECK(memcmp(big, bigback, 65536) == 0);
	tarn_free(big);
	tarn_free(bigback);
	TT_OK(zio_write(tp.zc, 20, &zp, z, sizeof (z), &bp, true));
	/* Next txg: never in place, the old block is the caller's to free. */
	old = bp;
	TT_OK(zio_write(tp.zc, 21, &zp, z, sizeof (z), &bp, true));
	TT_CHECK(memcmp(old.bp_dva, bp.bp_dva, sizeof (bp.bp_dva)) != 0);
	TT_EQ(bp.bp_birth, 21);
	for (int d = 0; d < 2; d++)
		TT_CHECK(metaslab_is_allocated(tp.mc, &old.bp_dva[d]));
	TT_OK(zio_read(tp.zc, &old, back, 0));
	TT_CHECK(memcmp(back, z, sizeof (back)) == 0);
	/* Different number of copies: new DVAs. */
	old = bp;
	zio_prop_t zp3 = prop(ZIO_CHECKSUM_XXH3_128, ZIO_COMPRESS_LZ4, 1);
	TT_OK(zio_write(tp.zc, 21, &zp3, z, sizeof (z), &bp, true));
	TT_EQ(bp.bp_ndvas, 1);
	TT_CHECK(!metaslab_is_allocated(tp.mc, &old.bp_dva[0]));
	TT_CHECK(!metaslab_is_allocated(tp.mc, &old.bp_dva[1]));
	/* rewrite_ok false: always new DVAs, the old one untouched. */
	old = bp;
	TT_OK(zio_write(tp.zc, 21, &zp3, z, sizeof (z), &bp, false));
	TT_CHECK(bp.bp_dva[0].dva_offset != old.bp_dva[0].dva_offset ||
	    bp.bp_dva[0].dva_vdev != old.bp_dva[0].dva_vdev);
	TT_CHECK(metaslab_is_allocated(tp.mc, &old.bp_dva[0]));
	/* zio_free of a block born in this txg: allocatable at once. */
	zio_free(tp.zc, &old, 21);
	TT_CHECK(!metaslab_is_allocated(tp.mc, &old.bp_dva[0]));
	tp_close(&tp);
}

static void
test_enospc(void)
{
	tpool_t tp;
	tp_begin(&tp);
	tp_add_top(&tp, VDEV_TYPE_FILE, 0, 0, SPA_MINDEVSIZE);
	tp_open(&tp, 0);
	uint8_t *data = tarn_alloc(SPA_MAXBLOCKSIZE);
	fill_data(data, SPA_MAXBLOCKSIZE, 1, false);
	zio_prop_t zp = prop(ZIO_CHECKSUM_XXH3_128, ZIO_COMPRESS_LZ4, 1);
	enum { MAXB = 128 };
	blkptr_t bps[MAXB];
	int n = 0, err = 0;
	metaslab_space_t sp0, sp1;
	metaslab_class_space(tp.mc, &sp0);
	while (n < MAXB) {
		blkptr_t bp;
		memset(&bp, 0x3c, sizeof (bp));
		blkptr_t saved = bp;
		err = zio_write(tp.zc, 30, &zp, data, SPA_MAXBLOCKSIZE, &bp, false);
		if (err != 0) {
			TT_CHECK(bp_equal(&bp, &saved));  /* untouched on failure */
			break;
		}
		bps[n++] = bp;
	}
	TT_EQ(err, ENOSPC);
	TT_CHECK(n > 40 && n < 64);
	/* ENOSPC through a batch, with other writes that fit. */
	zio_batch_t *b = zio_batch_create(tp.zc);
	blkptr_t small, big;
	zio_batch_write(b, 30, &zp, data, SPA_MAXBLOCKSIZE, &big, false);
	zio_batch_write(b, 30, &zp, data, 512, &small, false);
	err = zio_batch_wait(b);
	TT_CHECK(err == ENOSPC || err == 0);
	/* Free everything written in this txg: all space comes back. */
	for (int i = 0; i < n; i++)
		zio_free(tp.zc, &bps[i], 30);
	if (err == 0)
		zio_free(tp.zc, &big, 30);
	zio_free(tp.zc, &small, 30);
	metaslab_class_space(tp.mc, &sp1);
	TT_EQ(sp1.ms_alloc, sp0.ms_alloc);
	TT_OK(zio_write(tp.zc, 30, &zp, data, SPA_MAXBLOCKSIZE, &bps[0], false));
	tarn_free(data);
	tp_close(&tp);
}

/* Invalid arguments and invalid bps fail cleanly. */
static void
test_invalid(void)
{
	tpool_t tp;
	tp_simple(&tp, 1, 0);
	uint8_t data[4096];
	memset(data, 1, sizeof (data));
	blkptr_t bp;
	zio_prop_t zp = prop(ZIO_CHECKSUM_XXH3_128, ZIO_COMPRESS_OFF, 1);
	TT_EQ(zio_write(tp.zc, 1, &zp, data, 1000, &bp, false), EINVAL);
	TT_EQ(zio_write(tp.zc, 1, &zp, data, 0, &bp, false), EINVAL);
	zio_prop_t bad = zp;
	bad.zp_copies = 0;
	TT_EQ(zio_write(tp.zc, 1, &bad, data, 4096, &bp, false), EINVAL);
	bad = zp;
	bad.zp_checksum = ZIO_CHECKSUM_ON;
	TT_EQ(zio_write(tp.zc, 1, &bad, data, 4096, &bp, false), EINVAL);
	/* Holes read as zeros. */
	blkptr_t hole;
	BP_ZERO(&hole);
	memset(data, 1, sizeof (data));
	TT_OK(zio_read(tp.zc, &hole, data, 0));
	hole.bp_lsize = 4096;
	TT_OK(zio_read(tp.zc, &hole, data, 0));
	for (size_t i = 0; i < sizeof (data); i++)
		TT_ASSERT(data[i] == 0);
	zio_free(tp.zc, &hole, 5);
	/* A bp naming a vdev that does not exist: ECKSUM, reported. */
	TT_OK(zio_write(tp.zc, 1, &zp, data, 4096, &bp, false));
	bp.bp_dva[0].dva_vdev = 5;
	TT_EQ(zio_read(tp.zc, &bp, data, 0), ECKSUM);
	TT_EQ(tp.errors, 1);
	tp_close(&tp);
}

static void
test_blkptr_validate(void)
{
	tpool_t tp;
	tp_begin(&tp);
	tp_add_top(&tp, VDEV_TYPE_FILE, 0, 0, TP_LEAF_SIZE);
	tp_add_top(&tp, VDEV_TYPE_RAIDZ, 3, 1, TP_LEAF_SIZE);
	tp_open(&tp, 0);
	uint8_t data[8192];
	fill_data(data, sizeof (data), 8, true);
	zio_prop_t zp = prop(ZIO_CHECKSUM_SHA256, ZIO_COMPRESS_GZIP, 2);
	blkptr_t good, bp;
	TT_OK(zio_write(tp.zc, 40, &zp, data, sizeof (data), &good, false));
	TT_OK(blkptr_validate(&good, tp.root));
	TT_OK(blkptr_validate(&good, NULL));
	BP_ZERO(&bp);
	TT_OK(blkptr_validate(&bp, tp.root));
#define BAD(stmt) do { bp = good; stmt; \
	TT_CHECK(blkptr_validate(&bp, tp.root) == EINVAL); } while (0)
	BAD(bp.bp_lsize = 0);
	BAD(bp.bp_psize = 0);
	BAD(bp.bp_lsize = 8192 + 100);
	BAD(bp.bp_psize = 700);
	BAD(bp.bp_psize = 16384);
	BAD(bp.bp_psize = bp.bp_lsize);
	BAD(bp.bp_lsize = 2 * SPA_MAXBLOCKSIZE);
	BAD(bp.bp_comp = ZIO_COMPRESS_OFF);
	BAD(bp.bp_comp = ZIO_COMPRESS_FUNCTIONS);
	BAD(bp.bp_comp = ZIO_COMPRESS_ON);
	BAD(bp.bp_cksum = ZIO_CHECKSUM_FUNCTIONS);
	BAD(bp.bp_cksum = ZIO_CHECKSUM_INHERIT);
	BAD(bp.bp_type = DMU_OT_NUMTYPES);
	BAD(bp.bp_level = BP_MAX_LEVEL + 1);
	BAD(bp.bp_ndvas = 0);
	BAD(bp.bp_ndvas = 4);
	BAD(bp.bp_ndvas = 1);                     /* DVA[1] set beyond ndvas */
	BAD(bp.bp_dva[2].dva_offset = 512);
	BAD(bp.bp_flags = BP_F_GANG);
	BAD(bp.bp_pad = 1);
	BAD(bp.bp_reserved = 1);
	BAD(bp.bp_phys_birth = 0);
	BAD(bp.bp_dva[0].dva_vdev = 2);
	BAD(bp.bp_dva[1].dva_vdev = 0xffffffff);
	BAD(bp.bp_dva[0].dva_asize = 0);
	BAD(bp.bp_dva[0].dva_offset = 1);
	BAD(bp.bp_dva[1].dva_offset = UINT64_MAX - 511);
	vdev_t *top0 = vdev_lookup_top(tp.root, 0);
	BAD(bp.bp_dva[0].dva_vdev = 0;
	    bp.bp_dva[0].dva_offset = P2ALIGN(vdev_asize(top0), 512));
	BAD(bp.bp_dva[0].dva_vdev = 0;
	    bp.bp_dva[0].dva_offset = P2ALIGN(vdev_asize(top0), 512) - 512;
	    bp.bp_dva[0].dva_asize = 2);
	/* asize too small for psize on the raidz (parity included) */
	for (int d = 0; d < 2; d++) {
		if (bp.bp_dva[d].dva_vdev != 1)
			continue;
		BAD(bp.bp_dva[d].dva_asize = good.bp_psize >> SPA_MINBLOCKSHIFT);
	}
	/* A hole must be all zero. */
	BAD(BP_ZERO(&bp); bp.bp_lsize = 512);
	BAD(BP_ZERO(&bp); bp.bp_fill = 1);
#undef BAD
	/* Describe. */
	char text[512];
	blkptr_describe(&good, text, sizeof (text));
	TT_CHECK(strstr(text, "L0") == text);
	TT_CHECK(strstr(text, "DVA[0]=<") != NULL);
	TT_CHECK(strstr(text, "DVA[1]=<") != NULL);
	TT_CHECK(strstr(text, "sha256") != NULL);
	TT_CHECK(strstr(text, "gzip") != NULL);
	TT_CHECK(strstr(text, "birth=40L/40P") != NULL);
	printf("  %s\n", text);
	BP_ZERO(&bp);
	blkptr_describe(&bp, text, sizeof (text));
	TT_CHECK(strncmp(text, "HOLE", 4) == 0);
	blkptr_describe(&good, text, 10);
	TT_EQ(strlen(text), 9);
	tp_close(&tp);
}

/* A write whose every copy fails is EIO and leaves nothing allocated. */
static void
test_write_errors(void)
{
	tpool_t tp;
	tp_simple(&tp, 2, 0);
	vdev_fault_cfg_t cfg = { .vfc_write_eio_ppm = 1000000, .vfc_seed = 1 };
	vdev_fault_t *vf = vdev_fault_attach(tp.path[0], &cfg);
	/* The injector is found by path when the leaf opens: reopen. */
	vdev_close(tp.root);
	TT_OK(vdev_open(tp.root, false));
	uint8_t data[8192], back[8192];
	fill_data(data, sizeof (data), 4, false);
	metaslab_space_t sp0, sp1;
	metaslab_class_space(tp.mc, &sp0);
	zio_prop_t zp = prop(ZIO_CHECKSUM_XXH3_128, ZIO_COMPRESS_OFF, 2);
	blkptr_t bp;
	/* one of two copies fails: the write stands, reads heal later */
	TT_OK(zio_write(tp.zc, 50, &zp, data, sizeof (data), &bp, false));
	TT_OK(zio_read(tp.zc, &bp, back, 0));
	TT_CHECK(memcmp(back, data, sizeof (back)) == 0);
	/* Both devices failing: every write is EIO and gives its space back. */
	vdev_close(tp.root);
	vdev_fault_t *vf1 = vdev_fault_attach(tp.path[1], &cfg);
	TT_OK(vdev_open(tp.root, false));
	metaslab_class_space(tp.mc, &sp0);
	for (int copies = 1; copies <= 3; copies++) {
		zp.zp_copies = (uint8_t)copies;
		blkptr_t b1;
		memset(&b1, 0x11, sizeof (b1));
		blkptr_t saved = b1;
		TT_EQ(zio_write(tp.zc, 50, &zp, data, sizeof (data), &b1, false), EIO);
		TT_CHECK(bp_equal(&b1, &saved));
	}
	metaslab_class_space(tp.mc, &sp1);
	TT_EQ(sp1.ms_alloc, sp0.ms_alloc);
	/* A read of the block written before: top 0 never got its copy. */
	TT_OK(zio_read(tp.zc, &bp, back, ZIO_FLAG_NOHEAL));
	TT_CHECK(memcmp(back, data, sizeof (back)) == 0);
	vdev_close(tp.root);
	vdev_fault_detach(vf);
	vdev_fault_detach(vf1);
	TT_OK(vdev_open(tp.root, false));
	tp_close(&tp);
}

/* Every copy on a device that fails reads with EIO: the read is EIO. */
static void
test_read_eio(void)
{
	tpool_t tp;
	tp_simple(&tp, 2, 0);
	uint8_t data[8192], back[8192];
	fill_data(data, sizeof (data), 31, true);
	zio_prop_t zp = prop(ZIO_CHECKSUM_XXH3_128, ZIO_COMPRESS_LZ4, 2);
	blkptr_t bp;
	TT_OK(zio_write(tp.zc, 60, &zp, data, sizeof (data), &bp, false));
	vdev_fault_cfg_t cfg = { .vfc_read_eio_ppm = 1000000, .vfc_seed = 2 };
	vdev_close(tp.root);
	vdev_fault_t *vf0 = vdev_fault_attach(tp.path[0], &cfg);
	TT_OK(vdev_open(tp.root, false));
	/* one copy unreadable: the other serves, and heals (writes work) */
	TT_OK(zio_read(tp.zc, &bp, back, ZIO_FLAG_SCRUB));
	TT_CHECK(memcmp(back, data, sizeof (back)) == 0);
	TT_CHECK(vdev_stat(tp.leaf[0])->vs_read_errors >= 1);
	TT_EQ(vdev_stat(tp.leaf[1])->vs_read_errors, 0);
	vdev_close(tp.root);
	vdev_fault_t *vf1 = vdev_fault_attach(tp.path[1], &cfg);
	TT_OK(vdev_open(tp.root, false));
	TT_EQ(zio_read(tp.zc, &bp, back, 0), EIO);
	TT_EQ(tp.errors, 1);
	TT_EQ(tp.last_error, EIO);
	TT_EQ(zio_read(tp.zc, &bp, back, ZIO_FLAG_SPECULATIVE), EIO);
	TT_EQ(tp.errors, 1);
	vdev_close(tp.root);
	vdev_fault_detach(vf0);
	vdev_fault_detach(vf1);
	TT_OK(vdev_open(tp.root, false));
	TT_OK(zio_read(tp.zc, &bp, back, 0));
	TT_CHECK(memcmp(back, data, sizeof (back)) == 0);
	tp_close(&tp);
}

/* Many readers of the same damaged blocks at once: all good, all healed. */
static void
test_concurrent_heal(void)
{
	tpool_t tp;
	tp_simple(&tp, 2, 0);
	enum { N = 48, R = 4 };
	blkptr_t bps[N];
	uint8_t *data[N];
	uint64_t lsz[N];
	write_read_many(&tp, N, 2, 70, bps, data, lsz);
	for (int i = 0; i < N; i++)
		corrupt_dva(&tp, &bps[i], 0);
	uint8_t *back[N * R];
	int errs[N * R];
	zio_batch_t *b = zio_batch_create(tp.zc);
	for (int k = 0; k < N * R; k++) {
		back[k] = tarn_alloc(lsz[k % N]);
		zio_batch_read(b, &bps[k % N], back[k], 0, &errs[k]);
	}
	TT_OK(zio_batch_wait(b));
	for (int k = 0; k < N * R; k++) {
		TT_EQ(errs[k], 0);
		TT_CHECK(memcmp(back[k], data[k % N], lsz[k % N]) == 0);
		tarn_free(back[k]);
	}
	zio_stats_t st;
	zio_ctx_stats(tp.zc, &st);
	TT_CHECK(st.zs_heal_writes >= N && st.zs_heal_writes <= N * R);
	/* every copy 0 holds the good bytes again */
	for (int i = 0; i < N; i++) {
		vdev_t *top = vdev_lookup_top(tp.root, bps[i].bp_dva[0].dva_vdev);
		vdev_t *top1 = vdev_lookup_top(tp.root, bps[i].bp_dva[1].dva_vdev);
		uint8_t *r0 = tarn_alloc(bps[i].bp_psize), *r1 = tarn_alloc(bps[i].bp_psize);
		raw_read(vdev_path(top), bps[i].bp_dva[0].dva_offset, r0, bps[i].bp_psize);
		raw_read(vdev_path(top1), bps[i].bp_dva[1].dva_offset, r1, bps[i].bp_psize);
		TT_CHECK(memcmp(r0, r1, bps[i].bp_psize) == 0);
		tarn_free(r0);
		tarn_free(r1);
		tarn_free(data[i]);
	}
	tp_close(&tp);
}

/*
 * Allocation classes: top 0 normal, 1 special, 2 log.  Metadata and
 * small file blocks go to special, other data to normal; a full special
 * class spills into the normal one; the log class takes what the intent
 * log allocates until its only group is passive; frees through the
 * normal class reach every class, and the family's sync makes them
 * allocatable again.
 */
static void
test_alloc_classes(void)
{
	tpool_t tp;
	tp_begin(&tp);
	tp_add_top(&tp, VDEV_TYPE_FILE, 0, 0, TP_LEAF_SIZE);
	vdev_t *sp = tp_add_top(&tp, VDEV_TYPE_FILE, 0, 0, 16 * MiB);
	vdev_t *lg = tp_add_top(&tp, VDEV_TYPE_FILE, 0, 0, 16 * MiB);
	TT_OK(vdev_open(tp.root, false));
	vdev_set_alloc_bias(sp, VDEV_BIAS_SPECIAL);
	vdev_set_alloc_bias(lg, VDEV_BIAS_LOG);
	tp.mc = metaslab_class_create();
	metaslab_class_t *mcs = metaslab_class_create_aux(tp.mc);
	metaslab_class_t *mcl = metaslab_class_create_aux(tp.mc);
	for (int t = 0; t < 3; t++) {
		vdev_t *top = vdev_child(tp.root, t);
		metaslab_class_t *mc = t == 0 ? tp.mc : t == 1 ? mcs : mcl;
		vdev_set_ms_shift(top, metaslab_pick_shift(vdev_asize(top)));
		vdev_set_ms_count(top, DIV_ROUND_UP(vdev_asize(top), 1ULL << vdev_ms_shift(top)));
		metaslab_group_t *mg = metaslab_group_create(mc, top);
		TT_CHECK(metaslab_group_class(mg) == mc);
		for (uint64_t m = 0; m < metaslab_group_count(mg); m++)
			TT_OK(metaslab_load(metaslab_group_get(mg, m), NULL, 0, 0));
	}
	tp.zc = zio_ctx_create(tp.root, tp.mc, 0);
	zio_ctx_set_error_cb(tp.zc, tp_error_cb, &tp);
	/* no class given yet: everything on the normal vdev */
	TT_CHECK(zio_ctx_class_of(tp.zc, VDEV_BIAS_SPECIAL) == NULL);
	uint8_t *data = tarn_alloc(128 * KiB), *back = tarn_alloc(128 * KiB);
	fill_data(data, 128 * KiB, 7, false);
	zio_prop_t meta = prop(ZIO_CHECKSUM_XXH3_128, ZIO_COMPRESS_OFF, 1);
	meta.zp_type = DMU_OT_DNODE;
	meta.zp_special = true;
	blkptr_t bp;
	TT_OK(zio_write(tp.zc, 5, &meta, data, 16 * KiB, &bp, false));
	TT_EQ(bp.bp_dva[0].dva_vdev, 0);
	zio_free(tp.zc, &bp, 5);
	zio_ctx_set_class(tp.zc, VDEV_BIAS_SPECIAL, mcs);
	zio_ctx_set_class(tp.zc, VDEV_BIAS_LOG, mcl);
	TT_CHECK(zio_ctx_class_of(tp.zc, VDEV_BIAS_SPECIAL) == mcs);
	TT_CHECK(zio_ctx_class_of(tp.zc, VDEV_BIAS_NORMAL) == tp.mc);

	/* placement */
	zio_prop_t file = prop(ZIO_CHECKSUM_XXH3_128, ZIO_COMPRESS_OFF, 1);
	file.zp_type = DMU_OT_PLAIN_FILE;
	file.zp_small_blocks = 32 * KiB;
	TT_CHECK(zio_prop_wants_special(&meta, 128 * KiB));
	TT_CHECK(zio_prop_wants_special(&file, 32 * KiB));
	TT_CHECK(!zio_prop_wants_special(&file, 64 * KiB));
	blkptr_t m1, small, big, nosmall;
	TT_OK(zio_write(tp.zc, 5, &meta, data, 16 * KiB, &m1, false));
	TT_EQ(m1.bp_dva[0].dva_vdev, 1);
	TT_OK(zio_write(tp.zc, 5, &file, data, 16 * KiB, &small, false));
	TT_EQ(small.bp_dva[0].dva_vdev, 1);
	TT_OK(zio_write(tp.zc, 5, &file, data, 128 * KiB, &big, false));
	TT_EQ(big.bp_dva[0].dva_vdev, 0);
	zio_prop_t indirect = file;
	indirect.zp_blevel = 1;          /* an indirect block: metadata, whatever its size */
	indirect.zp_special = true;
	TT_OK(zio_write(tp.zc, 5, &indirect, data, 128 * KiB, &nosmall, false));
	TT_EQ(nosmall.bp_dva[0].dva_vdev, 1);
	zio_free(tp.zc, &nosmall, 5);
	file.zp_small_blocks = 0;
	TT_OK(zio_write(tp.zc, 5, &file, data, 16 * KiB, &nosmall, false));
	TT_EQ(nosmall.bp_dva[0].dva_vdev, 0);

	/* the log class, and its fallback when its only group is passive */
	dva_t dva;
	int nd = 1;
	TT_OK(zio_alloc_class(tp.zc, zio_ctx_class_of(tp.zc, VDEV_BIAS_LOG), 8 * KiB, &nd, 5,
	    &dva));
	TT_EQ(dva.dva_vdev, 2);
	metaslab_group_set_passive(vdev_ms_group(lg), true);
	dva_t dva2;
	TT_OK(zio_alloc_class(tp.zc, mcl, 8 * KiB, &nd, 5, &dva2));
	TT_EQ(dva2.dva_vdev, 0);
	TT_EQ(metaslab_alloc(mcl, 8 * KiB, 1, 5, &dva2), ENOSPC);
	metaslab_free(mcl, &dva, 5, 5);          /* any class of the family frees */
	metaslab_group_set_passive(vdev_ms_group(lg), false);

	/* fill the special class: metadata spills into the normal one */
	metaslab_space_t s0, s1;
	metaslab_class_space(mcs, &s0);
	enum { NB = 200 };
	blkptr_t *bps = tarn_alloc(sizeof (blkptr_t) * NB);
	int on_normal = 0;
	for (int i = 0; i < NB; i++) {
		fill_data(data, 128 * KiB, 100 + (uint64_t)i, false);
		TT_OK(zio_write(tp.zc, 6, &meta, data, 128 * KiB, &bps[i], false));
		on_normal += bps[i].bp_dva[0].dva_vdev == 0;
	}
	metaslab_class_space(mcs, &s1);
	TT_CHECK(on_normal > 0 && on_normal < NB);
	TT_CHECK(s1.ms_free < 128 * KiB + 512);
	for (int i = 0; i < NB; i++) {
		fill_data(data, 128 * KiB, 100 + (uint64_t)i, false);
		TT_OK(zio_read(tp.zc, &bps[i], back, 0));
		TT_CHECK(memcmp(data, back, 128 * KiB) == 0);
	}
	/* frees in a later txg: the family's sync_done (on the primary) matures them */
	for (int i = 0; i < NB; i++)
		zio_free(tp.zc, &bps[i], 7);
	TT_CHECK(metaslab_is_allocated(tp.mc, &m1.bp_dva[0]));
	int dirty = 0;
	for (uint64_t txg = 5; txg <= 7 + TXG_DEFER_SIZE; txg++) {
		for (metaslab_t *ms = metaslab_class_next_dirty(tp.mc, txg, NULL); ms != NULL;
		    ms = metaslab_class_next_dirty(tp.mc, txg, ms)) {
			void *buf;
			size_t len;
			TT_OK(metaslab_sync(ms, txg, &buf, &len));
			tarn_free(buf);
			dirty += vdev_id(metaslab_vdev(ms)) != 0;
		}
		(void) metaslab_class_sync_done(tp.mc, txg);
	}
	TT_CHECK(dirty > 0);        /* the aux classes' metaslabs synced through the primary */
	metaslab_class_space(mcs, &s1);
	TT_EQ(s1.ms_deferred, 0);
	TT_CHECK(s1.ms_free + 2 * 16 * KiB >= s0.ms_free);
	TT_EQ(tp.errors, 0);
	tarn_free(bps);
	tarn_free(back);
	tarn_free(data);
	zio_ctx_destroy(tp.zc);
	tp.zc = NULL;
	metaslab_class_destroy(mcs);
	metaslab_class_destroy(mcl);
	TT_CHECK(vdev_ms_group(sp) == NULL && vdev_ms_group(lg) == NULL);
	tp_close(&tp);
}

TT_MAIN(
	{ "roundtrip_all_algorithms", test_roundtrip_all_algorithms },
	{ "ditto_copies", test_ditto_copies },
	{ "heal_ditto", test_heal_ditto },
	{ "scrub_repairs_second_copy", test_scrub_repairs_second_copy },
	{ "no_heal_when_readonly", test_no_heal_when_readonly },
	{ "all_copies_bad", test_all_copies_bad },
	{ "mirror_top", test_mirror_top },
	{ "raidz1_top", test_raidz1_top },
	{ "ditto_on_mirror", test_ditto_on_mirror },
	{ "batch_256", test_batch_256 },
	{ "nested_batches", test_nested_batches },
	{ "rewrite_in_place", test_rewrite_in_place },
	{ "enospc", test_enospc },
	{ "invalid", test_invalid },
	{ "blkptr_validate", test_blkptr_validate },
	{ "write_errors", test_write_errors },
	{ "read_eio", test_read_eio },
	{ "concurrent_heal", test_concurrent_heal },
	{ "alloc_classes", test_alloc_classes },
)
