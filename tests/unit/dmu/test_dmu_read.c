/*
 * Unit tests of the dmu read path's newer mechanisms on a real pool of
 * file vdevs: asynchronous read-ahead (it fills the cache in the
 * background, heals what it reads, and races object frees and object
 * set closes safely), views and loans (zero-copy reads: lent bytes stay intact
 * while a writer waits, pieces not lent are copied).
 */
#include "tt.h"
#include "spa.h"
#include "dmu.h"
#include "tt_pool.h"
#include "dmu_tt.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

static tt_pool_devs_t devs;

#define BS   (128 * KiB)

/* A new object of nblk 128 KiB blocks with content from seed, synced. */
static uint64_t
make_object(spa_t *spa, objset_t *os, uint64_t nblk, uint64_t seed, uint8_t **datap)
{
	uint64_t len = nblk * BS;
	uint8_t *data = tarn_alloc(len);
	tt_fill(data, len, seed);
	uint64_t obj = tt_object_write(spa, os, data, len, BS);
	if (datap != NULL)
		*datap = data;
	else
		tarn_free(data);
	return (obj);
}

/* Reopen the pool (cold cache) and its object set "t". */
static spa_t *
reopen(objset_t **osp)
{
	spa_t *spa = tt_pool_reopen(&devs, 0, NULL);
	TT_OK(spa_objset_open(spa, "t", osp));
	return (spa);
}

/*
 * A one-device pool called name with one synced object of nblk blocks
 * from seed (*objp; its bytes in *datap), reopened so that nothing of it
 * is cached.
 */
static spa_t *
cold_object(const char *name, uint64_t nblk, uint64_t seed, objset_t **osp, uint64_t *objp,
    uint8_t **datap)
{
	tt_pool_files(&devs, 1, 256 * MiB);
	spa_t *spa = tt_pool_create(&devs, name, NULL, NULL);
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, osp));
	*objp = make_object(spa, *osp, nblk, seed, datap);
	spa_close(spa);
	return (reopen(osp));
}

/*
 * A stream's read-ahead runs in the background: once it is done, blocks
 * beyond what was read are in the cache, and reading them reads nothing
 * more from the devices.
 */
static void
test_readahead_fills_cache(void)
{
	objset_t *os;
	uint8_t *data;
	uint64_t obj;
	spa_t *spa = cold_object("ratest", 64, 1, &os, &obj, &data);
	uint8_t *rb = tarn_alloc(8 * MiB);
	for (uint64_t off = 0; off < 3 * MiB; off += MiB) {
		TT_OK(dmu_read(os, obj, off, MiB, rb));
		TT_CHECK(memcmp(rb, data + off, MiB) == 0);
	}
	dmu_objset_readahead_wait(os);
	uint64_t r0 = tt_zstats(spa).zs_reads;
	/* 24 blocks were read; read-ahead took at least the next 8 */
	TT_CHECK(r0 >= 32);
	TT_OK(dmu_read(os, obj, 3 * MiB, MiB, rb));
	TT_CHECK(memcmp(rb, data + 3 * MiB, MiB) == 0);
	/* none of them read again (what is read now is read-ahead of 40..63) */
	dmu_objset_readahead_wait(os);
	TT_CHECK(tt_zstats(spa).zs_reads - r0 <= 64 - 40);
	/* the whole object, in odd steps */
	for (uint64_t off = 4 * MiB; off < 8 * MiB; off += 300 * KiB) {
		uint64_t n = MIN(300 * KiB, 8 * MiB - off);
		TT_OK(dmu_read(os, obj, off, n, rb));
		TT_CHECK(memcmp(rb, data + off, n) == 0);
	}
	spa_close(spa);
	tarn_free(rb);
	tarn_free(data);
	tt_pool_files_remove(&devs);
}

/* Closing the object set (and the pool) while read-ahead is in flight. */
static void
test_readahead_close_race(void)
{
	tt_pool_files(&devs, 2, 256 * MiB);
	spa_t *spa = tt_pool_create(&devs, "ratest", "mirror", NULL);
	objset_t *os;
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	uint64_t objs[4];
	for (int i = 0; i < 4; i++)
		objs[i] = make_object(spa, os, 48, 10 + (uint64_t)i, NULL);
	spa_close(spa);
	uint8_t *rb = tarn_alloc(MiB);
	for (int round = 0; round < 12; round++) {
		spa = reopen(&os);
		/* start streams on every object; close at once */
		for (int i = 0; i < 4; i++)
			for (uint64_t off = 0; off < (uint64_t)(round % 3 + 2) * MiB; off += MiB)
				TT_OK(dmu_read(os, objs[i], off, MiB, rb));
		spa_close(spa);
	}
	tarn_free(rb);
	tt_pool_files_remove(&devs);
}

/*
 * Objects freed while their read-ahead runs: the reads that follow see
 * ENOENT, the pool syncs, and objects that reuse the numbers read what
 * was written to them (zeros where nothing was).
 */
static void
test_readahead_free_race(void)
{
	tt_pool_files(&devs, 1, 512 * MiB);
	spa_t *spa = tt_pool_create(&devs, "ratest", NULL, NULL);
	objset_t *os;
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	enum { NOBJ = 8 };
	uint64_t objs[NOBJ];
	for (int i = 0; i < NOBJ; i++)
		objs[i] = make_object(spa, os, 32, 20 + (uint64_t)i, NULL);
	spa_close(spa);
	spa = reopen(&os);
	uint8_t *rb = tarn_alloc(4 * MiB), *zero = tarn_alloc(4 * MiB);
	for (int i = 0; i < NOBJ; i++) {
		TT_OK(dmu_read(os, objs[i], 0, MiB, rb));
		TT_OK(dmu_read(os, objs[i], MiB, MiB, rb));
		dmu_tx_t *tx = dmu_tx_create(os);
		dmu_tx_hold_free(tx, objs[i], 0, DMU_OBJECT_END);
		TT_OK(dmu_tx_assign(tx, TXG_WAIT));
		TT_OK(dmu_object_free(os, objs[i], tx));
		dmu_tx_commit(tx);
		TT_EQ(dmu_read(os, objs[i], 2 * MiB, MiB, rb), ENOENT);
		if (i % 2 == 0)
			TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	}
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	dmu_objset_readahead_wait(os);
	/* reuse the numbers: one small write each, the rest reads as zeros */
	dmu_tx_t *tx = dmu_tx_create(os);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	uint8_t mark[512];
	memset(mark, 0x77, sizeof (mark));
	for (int i = 0; i < NOBJ; i++) {
		TT_OK(dmu_object_claim(os, objs[i], DMU_OT_TEST, BS, DMU_OT_NONE, 0, tx));
		TT_OK(dmu_write(os, objs[i], 4 * MiB - 512, 512, mark, tx));
	}
	dmu_tx_commit(tx);
	for (int i = 0; i < NOBJ; i++) {
		TT_OK(dmu_read(os, objs[i], 0, 4 * MiB, rb));
		TT_CHECK(memcmp(rb, zero, 4 * MiB - 512) == 0);
		TT_CHECK(memcmp(rb + 4 * MiB - 512, mark, 512) == 0);
	}
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	uint64_t blocks = 0, errors = 0;
	TT_OK(spa_verify_all(spa, true, &blocks, &errors));
	TT_EQ(errors, 0);
	spa_close(spa);
	tarn_free(rb);
	tarn_free(zero);
	tt_pool_files_remove(&devs);
}

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

/* Overwrite 4 KiB of block blkid of obj on device dev (pool closed after). */
static void
damage_block(spa_t *spa, objset_t *os, uint64_t obj, uint64_t blkid, int dev)
{
	find_bp_t fb = { .fb_obj = obj, .fb_blkid = blkid };
	uint64_t errors = 0;
	TT_OK(dmu_traverse(os, TRAVERSE_DATA, 0, 0, find_bp_cb, &fb, &errors));
	TT_ASSERT(fb.fb_found);
	spa_close(spa);
	int fd = open(devs.tpd_paths[dev], O_RDWR);
	TT_ASSERT(fd >= 0);
	uint8_t junk[4096];
	memset(junk, 0x5a, sizeof (junk));
	TT_EQ(pwrite(fd, junk, sizeof (junk), (off_t)(4 * MiB + fb.fb_bp.bp_dva[0].dva_offset)),
	    sizeof (junk));
	close(fd);
}

/*
 * Read-ahead meets damaged blocks: on a mirror it heals the bad side
 * (and the data reads right, with no failure); on a single device the
 * block stays uncached and the read that needs it gets the error, once.
 */
static void
test_readahead_damage(void)
{
	/* mirror: healed by read-ahead */
	tt_pool_files(&devs, 2, 256 * MiB);
	spa_t *spa = tt_pool_create(&devs, "ratest", "mirror", NULL);
	objset_t *os;
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	uint8_t *data;
	uint64_t obj = make_object(spa, os, 32, 30, &data);
	damage_block(spa, os, obj, 12, 0);
	spa = reopen(&os);
	uint8_t *rb = tarn_alloc(4 * MiB);
	for (uint64_t off = 0; off < 3 * MiB; off += MiB) {
		TT_OK(dmu_read(os, obj, off, MiB, rb));
		TT_CHECK(memcmp(rb, data + off, MiB) == 0);
	}
	dmu_objset_readahead_wait(os);
	TT_EQ(tt_zstats(spa).zs_read_failures, 0);
	TT_OK(dmu_read(os, obj, 0, 4 * MiB, rb));
	TT_CHECK(memcmp(rb, data, 4 * MiB) == 0);
	uint64_t blocks = 0, errors = 0;
	TT_OK(spa_verify_all(spa, true, &blocks, &errors));
	TT_EQ(errors, 0);
	spa_close(spa);
	tarn_free(data);

	/* single device: an error, reported once, to the read that needs it */
	tt_pool_files(&devs, 1, 256 * MiB);
	spa = tt_pool_create(&devs, "ratest", NULL, NULL);
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	obj = make_object(spa, os, 32, 31, &data);
	damage_block(spa, os, obj, 20, 0);
	spa = reopen(&os);
	for (uint64_t off = 0; off < 2 * MiB; off += MiB) {
		TT_OK(dmu_read(os, obj, off, MiB, rb));
		TT_CHECK(memcmp(rb, data + off, MiB) == 0);
	}
	TT_OK(dmu_read(os, obj, 2 * MiB, 512 * KiB, rb));   /* read-ahead reaches 20 */
	dmu_objset_readahead_wait(os);
	uint64_t f0 = tt_zstats(spa).zs_read_failures;
	TT_CHECK(f0 <= 1);
	int e = dmu_read(os, obj, 19 * BS, 2 * BS, rb);
	TT_CHECK(e == EIO || e == ECKSUM);
	TT_EQ(tt_zstats(spa).zs_read_failures - f0, 1);
	TT_OK(dmu_read(os, obj, 21 * BS, 11 * BS, rb));
	TT_CHECK(memcmp(rb, data + 21 * BS, 11 * BS) == 0);
	spa_close(spa);
	tarn_free(data);
	tarn_free(rb);
	tt_pool_files_remove(&devs);
}

/* Reassemble what a loan read: lent segments over the copied buffer. */
static void
loan_collect(const dmu_loan_t *dl, const uint8_t *buf, uint64_t len, uint8_t *out)
{
	memcpy(out, buf, len);
	uint64_t prev_end = 0;
	for (int i = 0; i < dl->dl_nsegs; i++) {
		const dmu_loan_seg_t *sg = &dl->dl_segs[i];
		TT_CHECK(sg->dls_off >= prev_end);
		TT_CHECK(sg->dls_off + sg->dls_len <= len);
		memcpy(out + sg->dls_off, sg->dls_data, sg->dls_len);
		prev_end = sg->dls_off + sg->dls_len;
	}
}

typedef struct writer_arg {
	objset_t *wa_os;
	uint64_t wa_obj;
	const uint8_t *wa_data;
	volatile int wa_done;
} writer_arg_t;

static void *
writer_thread(void *arg)
{
	writer_arg_t *wa = arg;
	dmu_tx_t *tx = dmu_tx_create(wa->wa_os);
	dmu_tx_hold_write(tx, wa->wa_obj, 0, 2 * BS);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_write(wa->wa_os, wa->wa_obj, 0, 2 * BS, wa->wa_data, tx));
	dmu_tx_commit(tx);
	__atomic_store_n(&wa->wa_done, 1, __ATOMIC_SEQ_CST);
	return (NULL);
}

/*
 * Loans: large cached pieces are lent, small, uncached and hole pieces
 * copied, and the result is the same as a plain read; a writer of the
 * object waits until the loan ends, and the lent bytes do not change
 * meanwhile.
 */
static void
test_loans(void)
{
	objset_t *os;
	uint8_t *data;
	uint64_t obj;
	spa_t *spa = cold_object("lntest", 16, 40, &os, &obj, &data);
	uint64_t len = 16 * BS + BS;        /* one block past the end: zeros */
	uint8_t *buf = tarn_alloc(len), *got = tarn_alloc(len), *want = tarn_alloc(len);
	memcpy(want, data, 16 * BS);
	/* cold: nothing cached before the read, so some pieces are copied */
	dmu_loan_t dl;
	for (int pass = 0; pass < 2; pass++) {
		memset(buf, 0xee, len);
		dmu_loan_begin(&dl, buf, len);
		TT_OK(dmu_read(os, obj, 0, len, buf));
		if (pass == 1)
			TT_EQ(dl.dl_nsegs, 16);     /* all cached now */
		loan_collect(&dl, buf, len, got);
		TT_CHECK(memcmp(got, want, len) == 0);
		dmu_loan_end(&dl);
	}
	/* unaligned, with small edges (copied) and a small tail */
	uint64_t off = BS - 4096, n = 5 * BS + 8192;
	dmu_loan_begin(&dl, buf, len);
	TT_OK(dmu_read(os, obj, off, n, buf));
	TT_CHECK(dl.dl_nsegs >= 4 && dl.dl_nsegs <= 6);
	loan_collect(&dl, buf, n, got);
	TT_CHECK(memcmp(got, data + off, n) == 0);
	dmu_loan_end(&dl);
	/* a read into another buffer during a loan copies */
	uint8_t *other = tarn_alloc(BS);
	dmu_loan_begin(&dl, buf, len);
	TT_OK(dmu_read(os, obj, 0, BS, other));
	TT_EQ(dl.dl_nsegs, 0);
	TT_CHECK(memcmp(other, data, BS) == 0);
	dmu_loan_end(&dl);

	/* a writer waits for the loan */
	dmu_loan_begin(&dl, buf, len);
	TT_OK(dmu_read(os, obj, 0, 2 * BS, buf));
	TT_EQ(dl.dl_nsegs, 2);
	uint8_t *nd = tarn_alloc(2 * BS);
	tt_fill(nd, 2 * BS, 41);
	writer_arg_t wa = { .wa_os = os, .wa_obj = obj, .wa_data = nd };
	pthread_t th;
	TT_OK(pthread_create(&th, NULL, writer_thread, &wa));
	usleep(200 * 1000);
	TT_EQ(__atomic_load_n(&wa.wa_done, __ATOMIC_SEQ_CST), 0);
	loan_collect(&dl, buf, 2 * BS, got);
	TT_CHECK(memcmp(got, data, 2 * BS) == 0);
	dmu_loan_end(&dl);
	TT_OK(pthread_join(th, NULL));
	TT_EQ(wa.wa_done, 1);
	TT_OK(dmu_read(os, obj, 0, 2 * BS, got));
	TT_CHECK(memcmp(got, nd, 2 * BS) == 0);
	/* and after the sync too */
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	dmu_loan_begin(&dl, buf, len);
	TT_OK(dmu_read(os, obj, 0, 3 * BS, buf));
	loan_collect(&dl, buf, 3 * BS, got);
	TT_CHECK(memcmp(got, nd, 2 * BS) == 0);
	TT_CHECK(memcmp(got + 2 * BS, data + 2 * BS, BS) == 0);
	dmu_loan_end(&dl);
	spa_close(spa);
	tarn_free(nd);
	tarn_free(other);
	tarn_free(buf);
	tarn_free(got);
	tarn_free(want);
	tarn_free(data);
	tt_pool_files_remove(&devs);
}

/*
 * Views: the bytes of one block in place, from the cache or read from the
 * device; a range across a block boundary or past the end is EINVAL; a
 * writer of the object waits until the view ends, and the viewed bytes do
 * not change meanwhile; views start no read-ahead.
 */
static void
test_views(void)
{
	objset_t *os;
	uint8_t *data;
	uint64_t obj;
	spa_t *spa = cold_object("vwtest", 16, 43, &os, &obj, &data);
	dmu_view_t v, v2;
	/* cold: read from the device, then cached */
	uint64_t r0 = tt_zstats(spa).zs_reads;
	TT_OK(dmu_view(os, obj, 3 * BS + 100, 4096, &v));
	TT_CHECK(memcmp(v.dv_data, data + 3 * BS + 100, 4096) == 0);
	dmu_view_end(&v);
	uint64_t r1 = tt_zstats(spa).zs_reads;
	TT_CHECK(r1 > r0);
	/* the same block again, and blocks 0-7 in turn: a sequential walk */
	for (uint64_t b = 0; b < 8; b++) {
		TT_OK(dmu_view(os, obj, b * BS, BS, &v));
		TT_CHECK(memcmp(v.dv_data, data + b * BS, BS) == 0);
		dmu_view_end(&v);
	}
	dmu_objset_readahead_wait(os);
	r0 = tt_zstats(spa).zs_reads;
	TT_EQ(r0, r1 + 7);                  /* block 3 was cached */
	/* which started no read-ahead: block 9 still comes from the device */
	TT_OK(dmu_view(os, obj, 9 * BS, 8, &v));
	TT_CHECK(memcmp(v.dv_data, data + 9 * BS, 8) == 0);
	dmu_view_end(&v);
	TT_EQ(tt_zstats(spa).zs_reads, r0 + 1);
	/* two views at once, of one block */
	TT_OK(dmu_view(os, obj, 0, 8, &v));
	TT_OK(dmu_view(os, obj, BS - 8, 8, &v2));
	TT_CHECK(memcmp(v2.dv_data, data + BS - 8, 8) == 0);
	dmu_view_end(&v2);
	dmu_view_end(&v);
	/* across a block boundary, past the end, no object */
	TT_EQ(dmu_view(os, obj, BS - 8, 16, &v), EINVAL);
	TT_EQ(dmu_view(os, obj, 16 * BS, 8, &v), EINVAL);
	TT_EQ(dmu_view(os, obj, 0, 0, &v), EINVAL);
	TT_CHECK(dmu_view(os, obj + 1000, 0, 8, &v) != 0);

	/* a writer waits for the view */
	TT_OK(dmu_view(os, obj, BS, BS, &v));
	uint8_t *nd = tarn_alloc(2 * BS), *got = tarn_alloc(2 * BS);
	tt_fill(nd, 2 * BS, 44);
	writer_arg_t wa = { .wa_os = os, .wa_obj = obj, .wa_data = nd };
	pthread_t th;
	TT_OK(pthread_create(&th, NULL, writer_thread, &wa));
	usleep(200 * 1000);
	TT_EQ(__atomic_load_n(&wa.wa_done, __ATOMIC_SEQ_CST), 0);
	TT_CHECK(memcmp(v.dv_data, data + BS, BS) == 0);
	dmu_view_end(&v);
	TT_OK(pthread_join(th, NULL));
	TT_EQ(wa.wa_done, 1);
	TT_OK(dmu_view(os, obj, BS, BS, &v));
	TT_CHECK(memcmp(v.dv_data, nd + BS, BS) == 0);
	dmu_view_end(&v);
	TT_OK(dmu_read(os, obj, 0, 2 * BS, got));
	TT_CHECK(memcmp(got, nd, 2 * BS) == 0);
	spa_close(spa);
	tarn_free(nd);
	tarn_free(got);
	tarn_free(data);
	tt_pool_files_remove(&devs);
}

/*
 * Once blocks (dbuf.c): a sequential stream through an object bigger
 * than the cache fills the cache's free room and no more (past that its
 * blocks push out only its own older ones: the blocks a random reader
 * uses stay), within the limit; its start is read from the device
 * again; a read that is not part of a stream still caches what it reads.
 */
static void
test_stream_scan_resistant(void)
{
	const uint64_t cache = 64 * MiB, hotlen = 4 * MiB, len = 96 * MiB;
	dmu_pool_opts_t o = { .dpo_cache_max = cache };
	tt_pool_files(&devs, 1, 256 * MiB);
	spa_t *spa = tt_pool_create(&devs, "sctest", NULL, &o);
	objset_t *os;
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	uint8_t *hot, *big;
	uint64_t hobj = make_object(spa, os, hotlen / BS, 2, &hot);
	uint64_t bobj = make_object(spa, os, len / BS, 3, &big);
	spa_close(spa);

	spa = tt_pool_reopen(&devs, 0, &o);
	TT_OK(spa_objset_open(spa, "t", &os));
	uint8_t *rb = tarn_alloc(MiB);
	/* the hot object, read in 4 KiB pieces in a scattered order */
	for (uint64_t i = 0; i < hotlen / BS; i++) {
		uint64_t off = ((i * 7) % (hotlen / BS)) * BS + 4 * KiB * (i % 5);
		TT_OK(dmu_read(os, hobj, off, 4 * KiB, rb));
		TT_CHECK(memcmp(rb, hot + off, 4 * KiB) == 0);
	}
	/* a stream through the big object, 1 MiB at a time */
	for (uint64_t off = 0; off < len; off += MiB) {
		TT_OK(dmu_read(os, bobj, off, MiB, rb));
		TT_CHECK(memcmp(rb, big + off, MiB) == 0);
	}
	dmu_objset_readahead_wait(os);
	dmu_pool_stats_t st;
	dmu_pool_stats(spa_dmu_pool(spa), &st);
	printf("  cache after a %" PRIu64 " MiB stream: %" PRIu64 " KiB of %" PRIu64 " MiB\n",
	    (uint64_t)(len / MiB), (uint64_t)(st.dps_cache_bytes / KiB), (uint64_t)(cache / MiB));
	/* the limit, and a stream filling the free room (nearly all of it) */
	TT_CHECK(st.dps_cache_bytes <= cache + MiB);
	TT_CHECK(st.dps_cache_bytes >= cache - 8 * MiB);
	/* the hot object is still cached: reading it all reads no device */
	uint64_t r0 = tt_zstats(spa).zs_reads;
	for (uint64_t off = 0; off < hotlen; off += MiB) {
		TT_OK(dmu_read(os, hobj, off, MiB, rb));
		TT_CHECK(memcmp(rb, hot + off, MiB) == 0);
	}
	TT_EQ(tt_zstats(spa).zs_reads, r0);
	/*
	 * once the cache was full the stream's newer blocks pushed out its
	 * oldest (once blocks go first): its start is read from the device again
	 */
	TT_OK(dmu_read(os, bobj, 10 * MiB, MiB, rb));
	TT_CHECK(memcmp(rb, big + 10 * MiB, MiB) == 0);
	TT_CHECK(tt_zstats(spa).zs_reads >= r0 + MiB / BS);
	/* reads that are no stream (pieces far apart) keep their blocks */
	TT_OK(dmu_read(os, bobj, 70 * MiB, MiB, rb));
	TT_OK(dmu_read(os, bobj, 90 * MiB, MiB, rb));
	TT_CHECK(memcmp(rb, big + 90 * MiB, MiB) == 0);
	dmu_objset_readahead_wait(os);
	r0 = tt_zstats(spa).zs_reads;
	TT_OK(dmu_read(os, bobj, 70 * MiB, MiB, rb));
	TT_CHECK(memcmp(rb, big + 70 * MiB, MiB) == 0);
	TT_EQ(tt_zstats(spa).zs_reads, r0);
	spa_close(spa);
	tarn_free(rb);
	tarn_free(hot);
	tarn_free(big);
	tt_pool_files_remove(&devs);
}

/*
 * The kernel's read-ahead through the mount: 1 MiB requests taken by
 * several threads in no fixed order.  Reads up to 15 MiB out of order
 * are still one stream: its blocks are once blocks (they fill the free
 * room and no more), nearly all of what the cache holds.
 */
static void
test_stream_out_of_order(void)
{
	const uint64_t cache = 64 * MiB, len = 96 * MiB, group = 16;
	dmu_pool_opts_t o = { .dpo_cache_max = cache };
	tt_pool_files(&devs, 1, 256 * MiB);
	spa_t *spa = tt_pool_create(&devs, "ootest", NULL, &o);
	objset_t *os;
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	uint8_t *big;
	uint64_t bobj = make_object(spa, os, len / BS, 5, &big);
	spa_close(spa);

	spa = tt_pool_reopen(&devs, 0, &o);
	TT_OK(spa_objset_open(spa, "t", &os));
	uint8_t *rb = tarn_alloc(MiB);
	/* each 16 MiB group in the order 0, 15, 14, 13, ... 1: jumps of 15 MiB */
	for (uint64_t g = 0; g < len / MiB; g += group) {
		for (uint64_t i = 0; i < group; i++) {
			uint64_t off = (g + (group - i) % group) * MiB;
			TT_OK(dmu_read(os, bobj, off, MiB, rb));
			TT_CHECK(memcmp(rb, big + off, MiB) == 0);
		}
	}
	dmu_objset_readahead_wait(os);
	dmu_pool_stats_t st;
	dmu_pool_stats(spa_dmu_pool(spa), &st);
	printf("  cache after a %" PRIu64 " MiB stream out of order: %" PRIu64 " KiB\n",
	    (uint64_t)(len / MiB), (uint64_t)(st.dps_cache_bytes / KiB));
	arc_stats_t as;
	arc_stats(dmu_pool_arc(spa_dmu_pool(spa)), &as);
	printf("  of it once blocks: %" PRIu64 " KiB\n", (uint64_t)(as.as_once_size / KiB));
	/* within the limit; all but the stream's first reads (no stream yet) and metadata once */
	TT_CHECK(st.dps_cache_bytes <= cache + MiB);
	TT_CHECK(as.as_once_size + 2 * MiB + 4 * MiB >= st.dps_cache_bytes);
	spa_close(spa);
	tarn_free(rb);
	tarn_free(big);
	tt_pool_files_remove(&devs);
}

static void
cleanup(void)
{
	tt_tmpdir_cleanup();
}

TT_MAIN(
	{ "readahead_fills_cache", test_readahead_fills_cache },
	{ "readahead_close_race", test_readahead_close_race },
	{ "readahead_free_race", test_readahead_free_race },
	{ "readahead_damage", test_readahead_damage },
	{ "loans", test_loans },
	{ "views", test_views },
	{ "stream_scan_resistant", test_stream_scan_resistant },
	{ "stream_out_of_order", test_stream_out_of_order },
	{ "cleanup", cleanup },
)
