/*
 * Unit tests of the dmu layer on a real pool of file vdevs: objects,
 * read/write/free, bonus, txg sync, reopen, traversal, throttle, ENOSPC.
 */
#include "tt.h"
#include "spa.h"
#include "dmu.h"
#include "tt_pool.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

/* The pool's devices, shared by the helpers below (see tt_pool.h). */
static tt_pool_devs_t devs;
#define paths devs.tpd_paths
#define pathv devs.tpd_pathv
#define fill tt_fill

static void
make_files(int n, uint64_t size)
{
	tt_pool_files(&devs, n, size);
}

static spa_t *
make_pool(int n, const char *type, uint64_t size)
{
	tt_pool_files(&devs, n, size);
	return (tt_pool_create(&devs, "dmutest", type, NULL));
}

static spa_t *
reopen(int n)
{
	TT_EQ(n, devs.tpd_n);
	return (tt_pool_reopen(&devs, 0, NULL));
}

static void
test_write_read_reopen(void)
{
	spa_t *spa = make_pool(2, "mirror", 128 * MiB);
	objset_t *os;
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	size_t len = 3 * MiB + 12345;
	uint8_t *buf = tarn_alloc(len), *rb = tarn_alloc(len);
	fill(buf, len, 1);
	uint64_t obj;
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_write(tx, 0, 0, len);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_object_alloc(os, DMU_OT_TEST, 128 * KiB, DMU_OT_NONE, 64, tx, &obj));
	TT_OK(dmu_write(os, obj, 0, len, buf, tx));
	uint8_t bonus[64];
	memset(bonus, 0xab, sizeof (bonus));
	TT_OK(dmu_bonus_write(os, obj, bonus, sizeof (bonus), tx));
	dmu_tx_commit(tx);
	/* visible before sync */
	TT_OK(dmu_read(os, obj, 0, len, rb));
	TT_CHECK(memcmp(buf, rb, len) == 0);
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	memset(rb, 0, len);
	TT_OK(dmu_read(os, obj, 0, len, rb));
	TT_CHECK(memcmp(buf, rb, len) == 0);
	uint64_t blocks = 0, errors = 0;
	TT_OK(spa_verify_all(spa, true, &blocks, &errors));
	TT_EQ(errors, 0);
	TT_CHECK(blocks > 25);
	spa_close(spa);

	spa = reopen(2);
	TT_OK(spa_objset_open(spa, "t", &os));
	memset(rb, 0, len);
	TT_OK(dmu_read(os, obj, 0, len, rb));
	TT_CHECK(memcmp(buf, rb, len) == 0);
	uint8_t b2[64];
	TT_OK(dmu_bonus_read(os, obj, b2, sizeof (b2)));
	TT_CHECK(memcmp(bonus, b2, 64) == 0);
	/* free a middle range and the tail, across a sync */
	tx = dmu_tx_create(os);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_free_range(os, obj, 1000, 300 * KiB, tx));
	TT_OK(dmu_free_range(os, obj, 2 * MiB + 7, DMU_OBJECT_END, tx));
	dmu_tx_commit(tx);
	memset(buf + 1000, 0, 300 * KiB);
	memset(buf + 2 * MiB + 7, 0, len - 2 * MiB - 7);
	TT_OK(dmu_read(os, obj, 0, len, rb));
	TT_CHECK(memcmp(buf, rb, len) == 0);
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	TT_OK(dmu_read(os, obj, 0, len, rb));
	TT_CHECK(memcmp(buf, rb, len) == 0);
	spa_close(spa);
	spa = reopen(2);
	TT_OK(spa_objset_open(spa, "t", &os));
	TT_OK(dmu_read(os, obj, 0, len, rb));
	TT_CHECK(memcmp(buf, rb, len) == 0);
	TT_OK(spa_verify_all(spa, true, &blocks, &errors));
	TT_EQ(errors, 0);
	/* free the object */
	tx = dmu_tx_create(os);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_object_free(os, obj, tx));
	dmu_tx_commit(tx);
	TT_EQ(dmu_read(os, obj, 0, 10, rb), ENOENT);
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	spa_close(spa);
	spa = reopen(2);
	TT_OK(spa_objset_open(spa, "t", &os));
	TT_EQ(dmu_read(os, obj, 0, 10, rb), ENOENT);
	spa_close(spa);
	tarn_free(buf);
	tarn_free(rb);
}

/* Many small objects over many txgs, with overwrites; then reopen and check. */
static void
test_many_objects(void)
{
	spa_t *spa = make_pool(3, "raidz1", 128 * MiB);
	objset_t *os;
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	enum { N = 3000 };
	uint64_t *objs = tarn_alloc(sizeof (uint64_t) * N);
	uint8_t buf[6000], rb[6000];
	for (int i = 0; i < N; i++) {
		dmu_tx_t *tx = dmu_tx_create(os);
		dmu_tx_hold_write(tx, 0, 0, sizeof (buf));
		TT_OK(dmu_tx_assign(tx, TXG_WAIT));
		TT_OK(dmu_object_alloc(os, DMU_OT_TEST, 4096, DMU_OT_NONE, 0, tx, &objs[i]));
		fill(buf, sizeof (buf), (uint64_t)i);
		TT_OK(dmu_write(os, objs[i], 0, sizeof (buf), buf, tx));
		dmu_tx_commit(tx);
		if (i % 500 == 0)
			txg_kick(spa_dmu_pool(spa));
	}
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	spa_close(spa);
	spa = reopen(3);
	TT_OK(spa_objset_open(spa, "t", &os));
	for (int i = 0; i < N; i++) {
		fill(buf, sizeof (buf), (uint64_t)i);
		TT_OK(dmu_read(os, objs[i], 0, sizeof (rb), rb));
		TT_ASSERT(memcmp(buf, rb, sizeof (buf)) == 0);
	}
	uint64_t blocks, errors;
	TT_OK(spa_verify_all(spa, true, &blocks, &errors));
	TT_EQ(errors, 0);
	spa_close(spa);
	tarn_free(objs);
}

/* Deep trees: sparse writes far apart, small blocks, reopen. */
static void
test_sparse_deep(void)
{
	spa_t *spa = make_pool(1, NULL, 128 * MiB);
	objset_t *os;
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	uint64_t offs[] = { 0, 4096 * 1500, 1ULL << 30, 1ULL << 40, (1ULL << 40) + 4096 * 3 };
	uint8_t buf[4096], rb[4096];
	uint64_t obj;
	dmu_tx_t *tx = dmu_tx_create(os);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_object_alloc(os, DMU_OT_TEST, 4096, DMU_OT_NONE, 0, tx, &obj));
	for (size_t i = 0; i < ARRAY_SIZE(offs); i++) {
		fill(buf, sizeof (buf), 100 + i);
		TT_OK(dmu_write(os, obj, offs[i], sizeof (buf), buf, tx));
	}
	dmu_tx_commit(tx);
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	dmu_object_info_t doi;
	TT_OK(dmu_object_info(os, obj, &doi));
	TT_CHECK(doi.doi_indirection >= 4);
	TT_EQ(doi.doi_fill_count, ARRAY_SIZE(offs));
	/* a hole in between reads as zeros */
	TT_OK(dmu_read(os, obj, 1ULL << 35, sizeof (rb), rb));
	for (size_t i = 0; i < sizeof (rb); i++)
		TT_ASSERT(rb[i] == 0);
	spa_close(spa);
	spa = reopen(1);
	TT_OK(spa_objset_open(spa, "t", &os));
	for (size_t i = 0; i < ARRAY_SIZE(offs); i++) {
		fill(buf, sizeof (buf), 100 + i);
		TT_OK(dmu_read(os, obj, offs[i], sizeof (rb), rb));
		TT_ASSERT(memcmp(buf, rb, sizeof (buf)) == 0);
	}
	uint64_t blocks, errors;
	TT_OK(spa_verify_all(spa, true, &blocks, &errors));
	TT_EQ(errors, 0);
	spa_close(spa);
}

typedef struct writer_arg {
	objset_t *os;
	int id;
	int failures;
} writer_arg_t;

static void *
writer_thread(void *p)
{
	writer_arg_t *wa = p;
	uint8_t *buf = tarn_alloc(256 * KiB), *rb = tarn_alloc(256 * KiB);
	for (int round = 0; round < 40; round++) {
		uint64_t obj;
		uint64_t seed = (uint64_t)wa->id * 1000 + round;
		size_t len = 1000 + (seed * 7919) % (200 * KiB);
		fill(buf, len, seed);
		dmu_tx_t *tx = dmu_tx_create(wa->os);
		dmu_tx_hold_write(tx, 0, 0, len);
		if (dmu_tx_assign(tx, TXG_WAIT) != 0) {
			wa->failures++;
			dmu_tx_abort(tx);
			continue;
		}
		if (dmu_object_alloc(wa->os, DMU_OT_TEST, 16 * KiB, DMU_OT_NONE, 0, tx, &obj) != 0 ||
		    dmu_write(wa->os, obj, 0, len, buf, tx) != 0)
			wa->failures++;
		dmu_tx_commit(tx);
		if (dmu_read(wa->os, obj, 0, len, rb) != 0 || memcmp(buf, rb, len) != 0)
			wa->failures++;
	}
	tarn_free(buf);
	tarn_free(rb);
	return (NULL);
}

/* Several writers at once, with a small dirty limit so the throttle works. */
static void
test_concurrent_throttled(void)
{
	make_files(2, 256 * MiB);
	char *argv[] = { "mirror", paths[0], paths[1] };
	spa_vdev_spec_t *spec;
	char err[256];
	TT_OK(spa_vdev_spec_parse(3, argv, &spec, err, sizeof (err)));
	spa_create_opts_t o;
	memset(&o, 0, sizeof (o));
	o.sco_no_cache = true;
	o.sco_dmu.dpo_dirty_max = 4 * MiB;
	spa_t *spa;
	TT_OK(spa_create("conc", spec, &o, &spa, err, sizeof (err)));
	spa_vdev_spec_free(spec);
	objset_t *os;
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	pthread_t th[4];
	writer_arg_t wa[4];
	for (int i = 0; i < 4; i++) {
		wa[i] = (writer_arg_t){ .os = os, .id = i };
		pthread_create(&th[i], NULL, writer_thread, &wa[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		TT_EQ(wa[i].failures, 0);
	}
	dmu_pool_stats_t st;
	dmu_pool_stats(spa_dmu_pool(spa), &st);
	TT_CHECK(st.dps_delays + st.dps_waits > 0);
	TT_CHECK(st.dps_txgs_synced > 3);
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	uint64_t blocks, errors;
	TT_OK(spa_verify_all(spa, true, &blocks, &errors));
	TT_EQ(errors, 0);
	spa_close(spa);
}

/*
 * Damage the newest txg's MOS root on the only device: plain open refuses
 * and names -F; a rewind open loads the txg before, which verifies.
 */
static void
test_damaged_newest_txg(void)
{
	spa_t *spa = make_pool(1, NULL, 128 * MiB);
	objset_t *os;
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	uint64_t obj;
	uint8_t buf[8192];
	for (int round = 0; round < 4; round++) {
		dmu_tx_t *tx = dmu_tx_create(os);
		TT_OK(dmu_tx_assign(tx, TXG_WAIT));
		if (round == 0)
			TT_OK(dmu_object_alloc(os, DMU_OT_TEST, 4096, DMU_OT_NONE, 0, tx, &obj));
		fill(buf, sizeof (buf), 500 + round);
		TT_OK(dmu_write(os, obj, 0, sizeof (buf), buf, tx));
		dmu_tx_commit(tx);
		TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	}
	blkptr_t root = *dmu_objset_rootbp(spa_meta_objset(spa));
	uint64_t newest = spa_last_synced_txg(spa);
	spa_close(spa);
	TT_EQ(root.bp_ndvas, 3);
	int fd = open(paths[0], O_RDWR);
	TT_ASSERT(fd >= 0);
	uint8_t junk[512];
	memset(junk, 0x5a, sizeof (junk));
	for (int d = 0; d < root.bp_ndvas; d++)
		TT_EQ(pwrite(fd, junk, sizeof (junk), (off_t)(4 * MiB + root.bp_dva[d].dva_offset)),
		    sizeof (junk));
	close(fd);

	spa_import_opts_t o;
	memset(&o, 0, sizeof (o));
	o.sio_no_cache = true;
	char err[256] = "";
	spa = NULL;
	TT_CHECK(spa_open_paths(pathv, 1, &o, &spa, err, sizeof (err)) != 0);
	TT_CHECK(strstr(err, "-F") != NULL);
	o.sio_rewind_txg = UINT64_MAX;
	TT_OK(spa_open_paths(pathv, 1, &o, &spa, err, sizeof (err)));
	TT_CHECK(spa_loaded_txg(spa) < newest);
	TT_CHECK(spa_last_synced_txg(spa) >= newest);
	uint64_t blocks, errors;
	TT_OK(spa_verify_all(spa, true, &blocks, &errors));
	TT_EQ(errors, 0);
	/* the object holds an older round's content, intact */
	TT_OK(spa_objset_open(spa, "t", &os));
	uint8_t rb[8192];
	TT_OK(dmu_read(os, obj, 0, sizeof (rb), rb));
	bool some = false;
	for (int round = 0; round < 4; round++) {
		fill(buf, sizeof (buf), 500 + round);
		some |= memcmp(buf, rb, sizeof (rb)) == 0;
	}
	TT_CHECK(some);
	/* and it keeps working: new txgs sync and reopen */
	dmu_tx_t *tx = dmu_tx_create(os);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	fill(buf, sizeof (buf), 999);
	TT_OK(dmu_write(os, obj, 0, sizeof (buf), buf, tx));
	dmu_tx_commit(tx);
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	spa_close(spa);
	o.sio_rewind_txg = 0;
	TT_OK(spa_open_paths(pathv, 1, &o, &spa, err, sizeof (err)));
	TT_OK(spa_objset_open(spa, "t", &os));
	TT_OK(dmu_read(os, obj, 0, sizeof (rb), rb));
	TT_CHECK(memcmp(buf, rb, sizeof (rb)) == 0);
	spa_close(spa);
}

/* dmu_traverse callback: remember the level-0 bp of block want_blkid of want_obj. */
typedef struct find_bp {
	uint64_t fb_obj, fb_blkid;
	blkptr_t fb_bp;
	bool fb_found;
} find_bp_t;

static int
find_bp_cb(void *arg, objset_t *os, uint64_t obj, const blkptr_t *bp, uint64_t blkid)
{
	find_bp_t *fb = arg;
	if (obj == fb->fb_obj && bp->bp_level == 0 && blkid == fb->fb_blkid) {
		fb->fb_bp = *bp;
		fb->fb_found = true;
	}
	return (0);
}

static uint64_t
read_failures(spa_t *spa)
{
	zio_stats_t st;
	zio_ctx_stats(dmu_pool_zio(spa_dmu_pool(spa)), &st);
	return (st.zs_read_failures);
}

/*
 * Cold sequential, interleaved and backward reads (parallel block fetch
 * and read-ahead, dbuf_read_blocks), with one block damaged beyond
 * repair: reads that do not cover it succeed although read-ahead meets
 * it, a read that covers it fails and counts one failure, not two.
 * Also buffers of every pooled size class, rewritten across txgs.
 */
static void
test_sequential_read(void)
{
	spa_t *spa = make_pool(1, NULL, 256 * MiB);
	objset_t *os;
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	const uint64_t nblk = 48, bs = 128 * KiB, len = nblk * bs, bad = 40;
	uint8_t *a = tarn_alloc(len), *b = tarn_alloc(len), *rb = tarn_alloc(len);
	fill(a, len, 71);
	fill(b, len, 72);
	uint64_t oa, ob, osz[4];
	const uint32_t sizes[4] = { 64 * KiB, 256 * KiB, 1 * MiB, 8 * KiB };
	dmu_tx_t *tx = dmu_tx_create(os);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_object_alloc(os, DMU_OT_TEST, (uint32_t)bs, DMU_OT_NONE, 0, tx, &oa));
	TT_OK(dmu_object_alloc(os, DMU_OT_TEST, (uint32_t)bs, DMU_OT_NONE, 0, tx, &ob));
	for (int i = 0; i < 4; i++)
		TT_OK(dmu_object_alloc(os, DMU_OT_TEST, sizes[i], DMU_OT_NONE, 0, tx, &osz[i]));
	TT_OK(dmu_write(os, oa, 0, len, a, tx));
	TT_OK(dmu_write(os, ob, 0, len, b, tx));
	dmu_tx_commit(tx);
	/* each size class: written, overwritten in part in a later txg, read back */
	for (int round = 0; round < 3; round++) {
		tx = dmu_tx_create(os);
		TT_OK(dmu_tx_assign(tx, TXG_WAIT));
		for (int i = 0; i < 4; i++)
			TT_OK(dmu_write(os, osz[i], round * 3000, 4 * MiB, b + round * 777, tx));
		dmu_tx_commit(tx);
		if (round == 1)
			TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	}
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	for (int i = 0; i < 4; i++) {
		TT_OK(dmu_read(os, osz[i], 0, 4 * MiB + 6000, rb));
		TT_CHECK(memcmp(rb, b, 3000) == 0);
		TT_CHECK(memcmp(rb + 3000, b + 777, 3000) == 0);
		TT_CHECK(memcmp(rb + 6000, b + 2 * 777, 4 * MiB) == 0);
	}
	find_bp_t fb = { .fb_obj = oa, .fb_blkid = bad };
	uint64_t errors = 0;
	TT_OK(dmu_traverse(os, TRAVERSE_DATA, 0, 0, find_bp_cb, &fb, &errors));
	TT_EQ(errors, 0);
	TT_ASSERT(fb.fb_found);
	spa_close(spa);
	/* damage the one copy of block `bad` of object a */
	int fd = open(paths[0], O_RDWR);
	TT_ASSERT(fd >= 0);
	uint8_t junk[4096];
	memset(junk, 0x5a, sizeof (junk));
	TT_EQ(pwrite(fd, junk, sizeof (junk), (off_t)(4 * MiB + fb.fb_bp.bp_dva[0].dva_offset)),
	    sizeof (junk));
	close(fd);

	spa = reopen(1);
	TT_OK(spa_objset_open(spa, "t", &os));
	/* a and b in 1 MiB steps, interleaved, up to just before the bad block */
	for (uint64_t off = 0; off + MiB <= bad * bs; off += MiB) {
		TT_OK(dmu_read(os, oa, off, MiB, rb));
		TT_CHECK(memcmp(rb, a + off, MiB) == 0);
		TT_OK(dmu_read(os, ob, off, MiB, rb));
		TT_CHECK(memcmp(rb, b + off, MiB) == 0);
	}
	/* odd ranges, backwards */
	for (int64_t off = (int64_t)(bad * bs) - 300 * KiB; off > 0; off -= 700 * KiB + 13) {
		uint64_t n = MIN(300 * KiB + 5, bad * bs - (uint64_t)off);
		TT_OK(dmu_read(os, oa, (uint64_t)off, n, rb));
		TT_CHECK(memcmp(rb, a + off, n) == 0);
	}
	/* the rest of b (read-ahead of a met the bad block: no harm) */
	TT_OK(dmu_read(os, ob, 0, len, rb));
	TT_CHECK(memcmp(rb, b, len) == 0);
	dmu_objset_readahead_wait(os);      /* read-ahead's own failure counted first */
	uint64_t f0 = read_failures(spa);
	int e = dmu_read(os, oa, (bad - 1) * bs, 2 * bs, rb);
	TT_CHECK(e == ECKSUM || e == EIO);
	TT_EQ(read_failures(spa) - f0, 1);
	/* after it, the good blocks still read */
	TT_OK(dmu_read(os, oa, (bad + 1) * bs, len - (bad + 1) * bs, rb));
	TT_CHECK(memcmp(rb, a + (bad + 1) * bs, len - (bad + 1) * bs) == 0);
	spa_close(spa);
	tarn_free(a);
	tarn_free(b);
	tarn_free(rb);
}

/* dmu_traverse callback: the logical and stored bytes of every block below the root. */
typedef struct bp_sum {
	uint64_t bs_lsize, bs_psize;
} bp_sum_t;

static int
bp_sum_cb(void *arg, objset_t *os, uint64_t obj, const blkptr_t *bp, uint64_t blkid)
{
	bp_sum_t *s = arg;
	if (obj == 0 && bp->bp_level == 0 && bp->bp_type == DMU_OT_OBJSET)
		return (0);                     /* the objset_phys itself */
	bool meta = bp->bp_level > 0 || (bp->bp_type != DMU_OT_TEST &&
	    bp->bp_type != DMU_OT_PLAIN_FILE && bp->bp_type != DMU_OT_UINT8);
	s->bs_lsize += meta ? bp->bp_psize : bp->bp_lsize;
	s->bs_psize += bp->bp_psize;
	return (0);
}

/* The objset's counts equal a walk of its blocks; returns the walk. */
static bp_sum_t
logical_matches_walk(objset_t *os)
{
	bp_sum_t sum = { 0, 0 };
	uint64_t errors, l, p;
	TT_OK(dmu_traverse(os, TRAVERSE_DATA, 0, 0, bp_sum_cb, &sum, &errors));
	TT_EQ(errors, 0);
	dmu_objset_logical(os, &l, &p);
	TT_EQ(l, sum.bs_lsize);
	TT_EQ(p, sum.bs_psize);
	return (sum);
}

/*
 * Logical and stored bytes (zfs's logicalreferenced, compressratio): after
 * compressible and incompressible writes, overwrites, frees and an object
 * freed, over syncs and a reopen, the objset's counts equal a walk of its
 * blocks; compressible data shows a ratio, random data none.
 */
static void
test_logical_space(void)
{
	spa_t *spa = make_pool(2, "mirror", 128 * MiB);
	objset_t *os;
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	dmu_objset_props_t props = { .osp_checksum = ZIO_CHECKSUM_DEFAULT,
		.osp_compress = ZIO_COMPRESS_LZ4, .osp_copies = 2 };
	dmu_objset_set_props(os, &props);
	size_t len = 4 * MiB;
	uint8_t *text = tarn_alloc(len), *rnd = tarn_alloc(len);
	for (size_t i = 0; i < len; i++)
		text[i] = "compressible text, the same line again\n"[i % 40];
	fill(rnd, len, 9);
	uint64_t ot, orn;
	dmu_tx_t *tx = dmu_tx_create(os);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_object_alloc(os, DMU_OT_TEST, 128 * KiB, DMU_OT_NONE, 0, tx, &ot));
	TT_OK(dmu_object_alloc(os, DMU_OT_TEST, 128 * KiB, DMU_OT_NONE, 0, tx, &orn));
	TT_OK(dmu_write(os, ot, 0, len, text, tx));
	TT_OK(dmu_write(os, orn, 0, len, rnd, tx));
	dmu_tx_commit(tx);
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	bp_sum_t s = logical_matches_walk(os);
	TT_CHECK(s.bs_lsize >= 2 * len);
	/* the text compresses (random data does not): stored well under logical */
	TT_CHECK(s.bs_psize < s.bs_lsize * 6 / 10);
	TT_CHECK(s.bs_psize > len);
	/* overwrite part, free a range, then a whole object */
	tx = dmu_tx_create(os);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_write(os, ot, 100 * KiB, MiB, rnd, tx));
	TT_OK(dmu_free_range(os, orn, 300 * KiB, MiB, tx));
	dmu_tx_commit(tx);
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	(void) logical_matches_walk(os);
	spa_close(spa);
	spa = reopen(2);
	TT_OK(spa_objset_open(spa, "t", &os));
	(void) logical_matches_walk(os);
	tx = dmu_tx_create(os);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_object_free(os, orn, tx));
	dmu_tx_commit(tx);
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	s = logical_matches_walk(os);
	TT_CHECK(s.bs_lsize < 2 * len);
	spa_close(spa);
	tarn_free(text);
	tarn_free(rnd);
}

static void *
wait_synced_main(void *arg)
{
	(void) txg_wait_synced(arg, 0);
	return (NULL);
}

typedef struct {
	objset_t *os;
	uint64_t  obj;
	uint64_t  txg;
	int       assigned;           /* atomic */
} late_tx_t;

/* A second writer: assigns a tx, writes "BBBB" at 100 and commits. */
static void *
late_tx_main(void *arg)
{
	late_tx_t *l = arg;
	dmu_tx_t *b = dmu_tx_create(l->os);
	TT_OK(dmu_tx_assign(b, TXG_WAIT));
	l->txg = dmu_tx_get_txg(b);
	__atomic_store_n(&l->assigned, 1, __ATOMIC_RELEASE);
	TT_OK(dmu_write(l->os, l->obj, 100, 4, "BBBB", b));
	dmu_tx_commit(b);
	return (NULL);
}

/*
 * While a txg quiesces nobody joins the next one: a tx assigned then
 * waits until the closing txg's last tx commits, so no tx of the newer txg
 * changes a block before an older tx that still runs (else the older
 * tx's change would land in the newer txg and the older txg on disk would
 * hold half of its transaction).  A thread that holds a tx of the closing
 * txg and assigns another joins that txg instead of waiting for itself.
 */
static void
test_quiesce_waits(void)
{
	spa_t *spa = make_pool(1, NULL, 128 * MiB);
	dmu_pool_t *dp = spa_dmu_pool(spa);
	objset_t *os;
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	uint64_t obj;
	uint8_t blk[4096], rb[4096];
	memset(blk, '.', sizeof (blk));
	dmu_tx_t *tx = dmu_tx_create(os);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_object_alloc(os, DMU_OT_TEST, 4096, DMU_OT_NONE, 0, tx, &obj));
	TT_OK(dmu_write(os, obj, 0, sizeof (blk), blk, tx));
	dmu_tx_commit(tx);
	TT_OK(txg_wait_synced(dp, 0));
	dmu_pool_stats_t st0, st1;
	dmu_pool_stats(dp, &st0);
	/* a: in txg n, writes the block, then txg n closes (a waiter kicks it) */
	dmu_tx_t *a = dmu_tx_create(os);
	TT_OK(dmu_tx_assign(a, TXG_WAIT));
	uint64_t n = dmu_tx_get_txg(a);
	TT_OK(dmu_write(os, obj, 0, 4, "aaaa", a));
	pthread_t waiter, late;
	TT_OK(pthread_create(&waiter, NULL, wait_synced_main, dp));
	while (txg_open_txg(dp) == n)
		usleep(1000);
	/* a's thread assigns again: it joins n */
	dmu_tx_t *c = dmu_tx_create(os);
	TT_OK(dmu_tx_assign(c, TXG_WAIT));
	TT_CHECK(dmu_tx_get_txg(c) == n);
	TT_OK(dmu_write(os, obj, 300, 4, "cccc", c));
	dmu_tx_commit(c);
	/* another thread's tx waits while a runs */
	late_tx_t l = { .os = os, .obj = obj };
	TT_OK(pthread_create(&late, NULL, late_tx_main, &l));
	usleep(100 * 1000);
	TT_CHECK(__atomic_load_n(&l.assigned, __ATOMIC_ACQUIRE) == 0);
	TT_OK(dmu_write(os, obj, 200, 4, "AAAA", a));
	dmu_tx_commit(a);
	pthread_join(late, NULL);
	TT_CHECK(l.txg > n);
	pthread_join(waiter, NULL);
	TT_CHECK(txg_last_synced(dp) >= n);
	dmu_pool_stats(dp, &st1);
	TT_CHECK(st1.dps_quiesce_waits > st0.dps_quiesce_waits);
	memcpy(blk, "aaaa", 4);
	memcpy(blk + 100, "BBBB", 4);
	memcpy(blk + 200, "AAAA", 4);
	memcpy(blk + 300, "cccc", 4);
	TT_OK(dmu_read(os, obj, 0, sizeof (rb), rb));
	TT_CHECK(memcmp(rb, blk, sizeof (blk)) == 0);
	TT_OK(txg_wait_synced(dp, 0));
	spa_close(spa);
	spa = reopen(1);
	TT_OK(spa_objset_open(spa, "t", &os));
	TT_OK(dmu_read(os, obj, 0, sizeof (rb), rb));
	TT_CHECK(memcmp(rb, blk, sizeof (blk)) == 0);
	spa_close(spa);
}

static void
cleanup(void)
{
	tt_tmpdir_cleanup();
}

TT_MAIN(
	{ "write_read_reopen", test_write_read_reopen },
	{ "logical_space", test_logical_space },
	{ "quiesce_waits", test_quiesce_waits },
	{ "many_objects", test_many_objects },
	{ "sparse_deep", test_sparse_deep },
	{ "concurrent_throttled", test_concurrent_throttled },
	{ "damaged_newest_txg", test_damaged_newest_txg },
	{ "sequential_read", test_sequential_read },
	{ "cleanup", cleanup },
)
