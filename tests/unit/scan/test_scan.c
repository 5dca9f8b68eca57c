/*
 * Unit tests of scrub, resilver and the persistent error log, on real
 * pools of sparse files: damage within redundancy is read back intact and
 * repaired by a scrub (mirror 2/3-way, raidz1/2/3), damage beyond it is
 * EIO for those blocks only and listed in the error log (damaged metadata
 * as soon as it is read, without a scrub), pause / resume /
 * stop and the persisted result, a resilver that walks only newer blocks,
 * and a scrub racing a writer that frees and rewrites.  Seeded: TARN_SEED
 * reruns a failure.  TARN_TEST_TMP=/dev/shm makes it fast.
 */
#include "tt.h"
#include "spa.h"
#include "dmu.h"
#include "tt_pool.h"
#include "tarn_array.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#define MAXDEV   6
#define DEVSIZE  (128 * MiB)

static tt_pool_devs_t devs;
#define paths devs.tpd_paths
#define pathv devs.tpd_pathv
#define ndev devs.tpd_n
#define fill tt_fill
static uint64_t g_seed;

static void
seed_init(tarn_rand_t *r, uint64_t salt)
{
	const char *s = getenv("TARN_SEED");
	g_seed = s != NULL ? strtoull(s, NULL, 0) : tarn_now_ns();
	tarn_rand_seed(r, g_seed + salt);
}

#define TS_ASSERT(c) do { if (!(c)) { \
	fprintf(stderr, "  (rerun with TARN_SEED=%" PRIu64 ")\n", g_seed); \
	TT_ASSERT(c); } } while (0)
#define TS_EQ(a, b) do { if ((uint64_t)(a) != (uint64_t)(b)) { \
	fprintf(stderr, "  (rerun with TARN_SEED=%" PRIu64 ")\n", g_seed); \
	TT_EQ(a, b); } } while (0)

/* ---- pools (tt_pool.h); a small cache, so reads go to the devices ---- */

static const dmu_pool_opts_t small_cache = { .dpo_cache_max = 4 * MiB };

static void
make_files(int n)
{
	tt_pool_files(&devs, n, DEVSIZE);
}

static void
remove_files(void)
{
	tt_pool_files_remove(&devs);
}

/* type: "mirror", "raidz2", ... */
static spa_t *
make_pool(const char *type, int n)
{
	make_files(n);
	return (tt_pool_create(&devs, "scantest", type, &small_cache));
}

static spa_t *
reopen(bool readonly)
{
	return (tt_pool_reopen(&devs, readonly ? SPA_OPEN_READONLY : 0, &small_cache));
}

/* ---- a data set: objects of known content ---- */

#define NOBJ 10
static const uint64_t obj_sizes[NOBJ] = { 1 * KiB, 3 * KiB + 100, 20 * KiB, 128 * KiB,
	300 * KiB + 7, 1 * MiB, 2 * MiB + 4096, 3 * MiB + 12345, 5 * MiB, 700 * KiB };
static const uint32_t obj_blksz[NOBJ] = { 1024, 4096, 4096, 128 * KiB, 128 * KiB, 128 * KiB,
	128 * KiB, 128 * KiB, 128 * KiB, 16 * KiB };

#define DS_MAX 32
typedef struct dataset {
	uint64_t ds_obj[DS_MAX];
	uint64_t ds_seed[DS_MAX];
	uint64_t ds_size[DS_MAX];
	uint32_t ds_blksz[DS_MAX];
	int      ds_n;
} dataset_t;

static void
write_obj(objset_t *os, dataset_t *ds, int i, bool alloc)
{
	uint64_t len = ds->ds_size[i];
	uint8_t *buf = tarn_alloc(len);
	fill(buf, len, ds->ds_seed[i]);
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_write(tx, alloc ? 0 : ds->ds_obj[i], 0, len);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	if (alloc)
		TT_OK(dmu_object_alloc(os, DMU_OT_TEST, ds->ds_blksz[i], DMU_OT_NONE, 0, tx,
		    &ds->ds_obj[i]));
	TT_OK(dmu_write(os, ds->ds_obj[i], 0, len, buf, tx));
	dmu_tx_commit(tx);
	tarn_free(buf);
}

static void
write_dataset(spa_t *spa, const char *name, dataset_t *ds, uint64_t seed, int nobj,
    uint64_t scale)
{
	objset_t *os;
	TT_OK(spa_objset_create(spa, name, DMU_OST_TEST, &os));
	memset(ds, 0, sizeof (*ds));
	TT_ASSERT(nobj <= DS_MAX);
	ds->ds_n = nobj;
	for (int i = 0; i < nobj; i++) {
		ds->ds_seed[i] = seed * 1000 + (uint64_t)i;
		ds->ds_size[i] = obj_sizes[i % NOBJ] * scale;
		ds->ds_blksz[i] = obj_blksz[i % NOBJ];
		write_obj(os, ds, i, true);
	}
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
}

/* Every object reads back byte-exact. */
static void
check_dataset(spa_t *spa, const char *name, const dataset_t *ds)
{
	objset_t *os;
	TT_OK(spa_objset_open(spa, name, &os));
	for (int i = 0; i < ds->ds_n; i++) {
		uint64_t len = ds->ds_size[i];
		uint8_t *want = tarn_alloc(len), *got = tarn_alloc(len);
		fill(want, len, ds->ds_seed[i]);
		int e = dmu_read(os, ds->ds_obj[i], 0, len, got);
		if (e != 0)
			fprintf(stderr, "  object %" PRIu64 ": error %d\n", ds->ds_obj[i], e);
		TS_EQ(e, 0);
		TS_ASSERT(memcmp(want, got, len) == 0);
		tarn_free(want);
		tarn_free(got);
	}
}

/* ---- finding blocks on the leaves ---- */

typedef struct blk {
	blkptr_t b_bp;
	uint64_t b_obj;
	uint64_t b_blkid;
} blk_t;

typedef struct blklist {
	blk_t *bl_v;
	size_t bl_n;
} blklist_t;

/* Add the block to the array of blk_t at arg. */
static int
collect_cb(void *arg, objset_t *os, uint64_t obj, const blkptr_t *bp, uint64_t blkid)
{
	TARN_ARRAY_APPEND((tarn_array_t *)arg, blk_t, ((blk_t){ *bp, obj, blkid }));
	return (0);
}

static void
collect_blocks(spa_t *spa, const char *name, blklist_t *bl)
{
	objset_t *os;
	TT_OK(spa_objset_open(spa, name, &os));
	memset(bl, 0, sizeof (*bl));
	tarn_array_t all = TARN_ARRAY_INIT(blk_t);
	VERIFY0(tarn_array_reserve(&all, 256));      /* the first size */
	uint64_t errors = 0;
	TT_OK(dmu_traverse(os, 0, ZIO_FLAG_SPECULATIVE, 0, collect_cb, &all, &errors));
	bl->bl_v = tarn_array_steal(&all, &bl->bl_n);
	TT_EQ(errors, 0);
}

typedef struct geom {
	bool     g_raidz;
	int      g_n, g_p;
	uint64_t g_ashift;
} geom_t;

static geom_t
pool_geom(spa_t *spa)
{
	vdev_t *top = vdev_child(spa_root_vdev(spa), 0);
	geom_t g = { vdev_type(top) == VDEV_TYPE_RAIDZ, vdev_children(top), vdev_nparity(top),
		vdev_ashift(top) };
	return (g);
}

/*
 * Where the block at top-level offset off (psize bytes) lies on child c:
 * leaf byte range [*loff, *loff + *len) in the leaf's allocatable space.
 * False when c holds no column of it.  (docs/FORMAT.md "RAID-Z layout".)
 */
static bool
block_on_child(const geom_t *g, uint64_t off, uint64_t psize, int c, uint64_t *loff,
    uint64_t *len)
{
	uint64_t sec = 1ULL << g->g_ashift;
	if (!g->g_raidz) {
		*loff = off;
		*len = P2ROUNDUP(psize, sec);
		return (true);
	}
	uint64_t n = (uint64_t)g->g_n, p = (uint64_t)g->g_p;
	uint64_t b = off >> g->g_ashift, s = DIV_ROUND_UP(psize, sec);
	uint64_t f = b % n, o = b / n, q = s / (n - p), r = s - q * (n - p);
	uint64_t bc = r == 0 ? 0 : r + p, acols = q == 0 ? bc : n;
	for (uint64_t col = 0; col < acols; col++) {
		uint64_t child = f + col, coff = o;
		if (child >= n) {
			child -= n;
			coff++;
		}
		if (child != (uint64_t)c)
			continue;
		*loff = coff << g->g_ashift;
		*len = (col < bc ? q + 1 : q) << g->g_ashift;
		return (*len > 0);
	}
	return (false);
}

/* Overwrite one random sector of the block's part on leaf c. */
static bool
damage_block(const geom_t *g, const blkptr_t *bp, int dva, int c, tarn_rand_t *r)
{
	uint64_t loff, len, sec = 1ULL << g->g_ashift;
	if (!block_on_child(g, bp->bp_dva[dva].dva_offset, bp->bp_psize, c, &loff, &len))
		return (false);
	uint64_t at = VDEV_LABEL_START_SIZE + loff + tarn_rand_range(r, len / sec) * sec;
	TS_ASSERT(at >= 4 * MiB && at + sec <= DEVSIZE - 512 * KiB);
	uint8_t junk[4096];
	fill(junk, sizeof (junk), tarn_rand_u64(r));
	int fd = open(paths[c], O_RDWR);
	TT_ASSERT(fd >= 0);
	TT_EQ(pwrite(fd, junk, sec, (off_t)at), sec);
	close(fd);
	return (true);
}

static uint64_t
leaf_cksum(spa_t *spa, int c)
{
	vdev_t *top = vdev_child(spa_root_vdev(spa), 0);
	return (__atomic_load_n(&vdev_stat(vdev_child(top, c))->vs_checksum_errors,
	    __ATOMIC_RELAXED));
}

static void
scrub(spa_t *spa, spa_scan_stat_t *st)
{
	TT_OK(spa_scan_start(spa, SPA_SCAN_SCRUB, 0));
	TT_OK(spa_scan_wait(spa));
	spa_scan_get_stat(spa, st);
	TT_EQ(st->sss_state, SPA_SCAN_STATE_FINISHED);
	TT_EQ(st->sss_func, SPA_SCAN_SCRUB);
}

/* ---- damage within redundancy ---- */

/*
 * Choose ndamaged of the n leaves and damage 40% of the blocks (every
 * copy) on each of them: a random sector of the block's part there.
 * Returns the number of sectors damaged; each chosen leaf gets some.
 */
static uint64_t
damage_leaves(const blklist_t *bl, const geom_t *g, int n, int ndamaged, bool *bad,
    tarn_rand_t *r)
{
	for (int k = 0; k < ndamaged;) {
		int c = (int)tarn_rand_range(r, (uint64_t)n);
		if (!bad[c]) {
			bad[c] = true;
			k++;
		}
	}
	uint64_t hits[MAXDEV] = { 0 }, total = 0;
	for (size_t i = 0; i < bl->bl_n; i++) {
		if (tarn_rand_range(r, 5) >= 2)
			continue;
		const blkptr_t *bp = &bl->bl_v[i].b_bp;
		for (int d = 0; d < bp->bp_ndvas; d++) {
			for (int c = 0; c < n; c++) {
				if (bad[c] && damage_block(g, bp, d, c, r))
					hits[c]++;
			}
		}
	}
	for (int c = 0; c < n; c++) {
		TS_ASSERT(!bad[c] || hits[c] > 0);
		total += hits[c];
	}
	return (total);
}

static void
repair_case(const char *type, int n, int ndamaged, uint64_t salt)
{
	tarn_rand_t r;
	seed_init(&r, salt);
	uint64_t t0 = tarn_now_ns();
	spa_t *spa = make_pool(type, n);
	dataset_t ds;
	write_dataset(spa, "t", &ds, salt, NOBJ, 1);
	blklist_t bl;
	collect_blocks(spa, "t", &bl);
	geom_t g = pool_geom(spa);
	spa_close(spa);

	bool bad[MAXDEV] = { false };
	uint64_t nhits = damage_leaves(&bl, &g, n, ndamaged, bad, &r);

	/* read back, read-only (no healing): everything intact */
	spa = reopen(true);
	check_dataset(spa, "t", &ds);
	spa_close(spa);

	spa = reopen(false);
	spa_scan_stat_t st;
	uint64_t t1 = tarn_now_ns();
	scrub(spa, &st);
	uint64_t ms = (tarn_now_ns() - t1) / 1000000;
	printf("  %s x%d: %zu blocks, %" PRIu64 " damaged sectors; scrub %" PRIu64
	    " KiB in %" PRIu64 " ms, repaired %" PRIu64 " KiB\n", type, n, bl.bl_n,
	    nhits,
	    (uint64_t)(st.sss_examined / KiB), ms, (uint64_t)(st.sss_repaired / KiB));
	TS_ASSERT(st.sss_repaired > 0);
	TS_EQ(st.sss_errors, 0);
	TS_EQ(spa_errlog_count(spa), 0);
	TS_ASSERT(st.sss_examined >= st.sss_to_examine / 2);
	TS_ASSERT(st.sss_end_time >= st.sss_start_time);
	uint64_t ck[MAXDEV];
	for (int c = 0; c < n; c++) {
		ck[c] = leaf_cksum(spa, c);
		if (bad[c] != (ck[c] > 0))
			fprintf(stderr, "  leaf %d: damaged %d, %" PRIu64 " CKSUM\n", c, bad[c], ck[c]);
		TS_ASSERT(bad[c] == (ck[c] > 0));
	}
	/* a second scrub finds nothing */
	scrub(spa, &st);
	TS_EQ(st.sss_repaired, 0);
	TS_EQ(st.sss_errors, 0);
	for (int c = 0; c < n; c++)
		TS_EQ(leaf_cksum(spa, c), ck[c]);
	check_dataset(spa, "t", &ds);
	spa_close(spa);
	/* and the devices themselves are whole again */
	spa = reopen(false);
	for (int c = 0; c < n; c++)
		TS_EQ(leaf_cksum(spa, c), 0);
	check_dataset(spa, "t", &ds);
	for (int c = 0; c < n; c++)
		TS_EQ(leaf_cksum(spa, c), 0);
	spa_close(spa);
	free(bl.bl_v);
	remove_files();
	printf("  %s x%d: %" PRIu64 " ms in all\n", type, n, (tarn_now_ns() - t0) / 1000000);
}

static void test_repair_mirror2(void) { repair_case("mirror", 2, 1, 1); }
static void test_repair_mirror3(void) { repair_case("mirror", 3, 2, 2); }
static void test_repair_raidz1(void) { repair_case("raidz1", 3, 1, 3); }
static void test_repair_raidz2(void) { repair_case("raidz2", 5, 2, 4); }
static void test_repair_raidz3(void) { repair_case("raidz3", 6, 3, 5); }

/* ---- damage beyond redundancy ---- */

static bool
errlog_has(spa_t *spa, uint64_t obj, uint64_t blkid, uint64_t offset)
{
	spa_errlog_ent_t *ents;
	int n;
	TT_OK(spa_errlog_list(spa, &ents, &n));
	bool found = false;
	for (int i = 0; i < n; i++) {
		if (strcmp(ents[i].see_objset, "t") == 0 && ents[i].see_object == obj &&
		    ents[i].see_level == 0 && ents[i].see_blkid == blkid &&
		    ents[i].see_offset == offset)
			found = true;
	}
	tarn_free(ents);
	return (found);
}

/* Damage one data block of each object want[k] on both sides of a mirror. */
static void
damage_beyond(spa_t *spa, const dataset_t *ds, const int *want, blk_t *hit, tarn_rand_t *r)
{
	blklist_t bl;
	collect_blocks(spa, "t", &bl);
	geom_t g = pool_geom(spa);
	spa_close(spa);
	for (int k = 0; k < 3; k++) {
		size_t cands[256], nc = 0;
		for (size_t i = 0; i < bl.bl_n && nc < 256; i++) {
			if (bl.bl_v[i].b_obj == ds->ds_obj[want[k]] && bl.bl_v[i].b_bp.bp_level == 0)
				cands[nc++] = i;
		}
		TT_ASSERT(nc > 1);
		hit[k] = bl.bl_v[cands[tarn_rand_range(r, nc)]];
		TT_EQ(hit[k].b_bp.bp_ndvas, 1);
		for (int c = 0; c < 2; c++)
			TT_ASSERT(damage_block(&g, &hit[k].b_bp, 0, c, r));
	}
	free(bl.bl_v);
}

/* Block by block: the damaged ones fail with EIO/ECKSUM, the rest are intact. */
static void
check_beyond_reads(spa_t *spa, const dataset_t *ds, const blk_t *hit)
{
	objset_t *os;
	TT_OK(spa_objset_open(spa, "t", &os));
	for (int i = 0; i < NOBJ; i++) {
		uint64_t bs = ds->ds_blksz[i], len = ds->ds_size[i];
		uint8_t *want_buf = tarn_alloc(len), *got = tarn_alloc(bs);
		fill(want_buf, len, ds->ds_seed[i]);
		for (uint64_t off = 0; off < len; off += bs) {
			uint64_t n = MIN(bs, len - off);
			bool damaged = false;
			for (int k = 0; k < 3; k++)
				damaged |= hit[k].b_obj == ds->ds_obj[i] && hit[k].b_blkid == off / bs;
			int e = dmu_read(os, ds->ds_obj[i], off, n, got);
			if (damaged) {
				TS_ASSERT(e == EIO || e == ECKSUM);
			} else {
				TS_EQ(e, 0);
				TS_ASSERT(memcmp(got, want_buf + off, n) == 0);
			}
		}
		tarn_free(want_buf);
		tarn_free(got);
	}
}

static void
test_beyond_redundancy(void)
{
	tarn_rand_t r;
	seed_init(&r, 10);
	spa_t *spa = make_pool("mirror", 2);
	dataset_t ds;
	write_dataset(spa, "t", &ds, 10, NOBJ, 1);
	/* three data blocks of objects 5, 7 and 8, damaged on both sides */
	int want[3] = { 5, 7, 8 };
	blk_t hit[3];
	damage_beyond(spa, &ds, want, hit, &r);
	spa = reopen(false);
	check_beyond_reads(spa, &ds, hit);
	/* the error log names them, with their byte offsets */
	for (int k = 0; k < 3; k++) {
		uint64_t bs = ds.ds_blksz[want[k]];
		TS_ASSERT(errlog_has(spa, hit[k].b_obj, hit[k].b_blkid, hit[k].b_blkid * bs));
	}
	TS_EQ(spa_errlog_count(spa), 3);
	/* a scrub finds exactly those */
	spa_scan_stat_t st;
	scrub(spa, &st);
	TS_EQ(st.sss_errors, 3);
	TS_EQ(spa_errlog_count(spa), 3);
	/* the pool stays usable */
	dataset_t more;
	write_dataset(spa, "u", &more, 11, 3, 1);
	check_dataset(spa, "u", &more);
	TT_EQ(spa_state(spa), VDEV_STATE_HEALTHY);
	spa_close(spa);

	/* persisted; then the damaged blocks go away and so do the entries */
	spa = reopen(false);
	TS_EQ(spa_errlog_count(spa), 3);
	for (int k = 0; k < 3; k++)
		TS_ASSERT(errlog_has(spa, hit[k].b_obj, hit[k].b_blkid,
		    hit[k].b_blkid * ds.ds_blksz[want[k]]));
	spa_scan_get_stat(spa, &st);
	TS_EQ(st.sss_state, SPA_SCAN_STATE_FINISHED);
	TS_EQ(st.sss_errors, 3);
	objset_t *os;
	TT_OK(spa_objset_open(spa, "t", &os));
	dmu_tx_t *tx = dmu_tx_create(os);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_object_free(os, ds.ds_obj[5], tx));      /* object 5 goes */
	dmu_tx_commit(tx);
	/* object 7's bad block is rewritten */
	uint8_t *b = tarn_alloc(ds.ds_blksz[7]);
	fill(b, ds.ds_blksz[7], 77);
	tx = dmu_tx_create(os);
	dmu_tx_hold_write(tx, ds.ds_obj[7], hit[1].b_blkid * ds.ds_blksz[7], ds.ds_blksz[7]);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_write(os, ds.ds_obj[7], hit[1].b_blkid * ds.ds_blksz[7], ds.ds_blksz[7], b, tx));
	dmu_tx_commit(tx);
	tarn_free(b);
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	TS_EQ(spa_errlog_count(spa), 3);    /* until a scrub says otherwise */
	scrub(spa, &st);
	TS_EQ(st.sss_errors, 1);
	TS_EQ(spa_errlog_count(spa), 1);
	TS_ASSERT(errlog_has(spa, hit[2].b_obj, hit[2].b_blkid,
	    hit[2].b_blkid * ds.ds_blksz[want[2]]));
	spa_close(spa);
	spa = reopen(false);
	TS_EQ(spa_errlog_count(spa), 1);
	spa_close(spa);
	remove_files();
}

/*
 * Damaged metadata is logged when it is read, not only by a scrub: an
 * object set whose root block cannot be read (every copy damaged on both
 * sides of the mirror) is in the error log as its object 0 as soon as the
 * pool opens (the intent-log claim opens every object set), persisted,
 * and a scrub keeps it.
 */
static void
test_metadata_at_once(void)
{
	tarn_rand_t r;
	seed_init(&r, 20);
	spa_t *spa = make_pool("mirror", 2);
	dataset_t ds;
	write_dataset(spa, "t", &ds, 20, 3, 1);
	blklist_t bl;
	collect_blocks(spa, "t", &bl);
	TT_ASSERT(bl.bl_n > 0);
	blk_t root = bl.bl_v[0];        /* the traversal reports the root first */
	free(bl.bl_v);
	TT_EQ(root.b_obj, 0);
	TT_EQ(root.b_bp.bp_type, DMU_OT_OBJSET);
	geom_t g = pool_geom(spa);
	spa_close(spa);
	for (int d = 0; d < root.b_bp.bp_ndvas; d++)
		for (int c = 0; c < 2; c++)
			TT_ASSERT(damage_block(&g, &root.b_bp, d, c, &r));
	spa = reopen(false);
	TS_EQ(spa_errlog_count(spa), 1);        /* no scrub, no read of ours yet */
	objset_t *os;
	int e = spa_objset_open(spa, "t", &os);
	TS_ASSERT(e == EIO || e == ECKSUM);
	TS_EQ(spa_errlog_count(spa), 1);        /* the same entry, once */
	spa_errlog_ent_t *ents;
	int n;
	TT_OK(spa_errlog_list(spa, &ents, &n));
	TT_EQ(n, 1);
	TT_CHECK(strcmp(ents[0].see_objset, "t") == 0);
	TT_EQ(ents[0].see_object, 0);
	tarn_free(ents);
	spa_close(spa);
	spa = reopen(true);                     /* read-only: what is on disk */
	TS_EQ(spa_errlog_count(spa), 1);
	spa_close(spa);
	spa = reopen(false);
	spa_scan_stat_t st;
	scrub(spa, &st);
	TS_ASSERT(st.sss_errors >= 1);
	TS_EQ(spa_errlog_count(spa), 1);
	TT_EQ(spa_state(spa), VDEV_STATE_HEALTHY);
	spa_close(spa);
	remove_files();
}

/* ---- pause, resume, stop, persistence ---- */

/* Start a scrub and pause it before it ends; false if it was too quick. */
static bool
start_paused(spa_t *spa)
{
	TT_OK(spa_scan_start(spa, SPA_SCAN_SCRUB, 0));
	int e = spa_scan_pause(spa);
	if (e == ENOENT)
		return (false);
	TT_OK(e);
	return (true);
}

/* A paused scrub (trying again if one ended before the pause). */
static void
pause_early(spa_t *spa)
{
	int tries = 0;
	while (!start_paused(spa)) {
		TT_ASSERT(++tries < 5);
		TT_OK(spa_scan_wait(spa));
	}
}

static void
test_pause_resume_stop(void)
{
	spa_t *spa = make_pool("mirror", 2);
	dataset_t ds;
	write_dataset(spa, "t", &ds, 20, NOBJ, 4);
	spa_scan_stat_t st, st2;
	TT_EQ(spa_scan_stop(spa), ENOENT);
	TT_EQ(spa_scan_pause(spa), ENOENT);
	TT_OK(spa_scan_wait(spa));
	spa_scan_get_stat(spa, &st);
	TT_EQ(st.sss_state, SPA_SCAN_STATE_NONE);

	/* pause: no progress; wait returns; scrub again resumes */
	pause_early(spa);
	TT_OK(spa_scan_wait(spa));
	spa_scan_get_stat(spa, &st);
	TT_EQ(st.sss_state, SPA_SCAN_STATE_SCANNING);
	TT_EQ(st.sss_paused, 1);
	usleep(200 * 1000);
	spa_scan_get_stat(spa, &st2);
	TT_EQ(st2.sss_examined, st.sss_examined);
	TT_EQ(spa_scan_start(spa, SPA_SCAN_SCRUB, 0), 0);         /* resume */
	spa_scan_get_stat(spa, &st2);
	TT_EQ(st2.sss_paused, 0);
	TT_OK(spa_scan_wait(spa));
	spa_scan_get_stat(spa, &st);
	TT_EQ(st.sss_state, SPA_SCAN_STATE_FINISHED);
	TT_ASSERT(st.sss_examined >= st.sss_to_examine / 2);
	TT_EQ(st.sss_errors, 0);

	/*
	 * Paused mid-walk, reads in flight: wait returns once they are
	 * counted, and the figures then hold still.
	 */
	int midwalk = 0;
	for (int k = 0; k < 8; k++) {
		TT_OK(spa_scan_start(spa, SPA_SCAN_SCRUB, 0));
		usleep((useconds_t)k * 10000);
		int pe = spa_scan_pause(spa);
		if (pe == ENOENT)
			continue;               /* it ended first */
		TT_OK(pe);
		TT_OK(spa_scan_wait(spa));
		spa_scan_get_stat(spa, &st);
		usleep(100 * 1000);
		spa_scan_get_stat(spa, &st2);
		TT_EQ(st2.sss_examined, st.sss_examined);
		TT_EQ(st2.sss_issued, st.sss_issued);
		if (st.sss_state == SPA_SCAN_STATE_FINISHED)
			continue;               /* the walk ended as the pause came */
		TT_EQ(st.sss_state, SPA_SCAN_STATE_SCANNING);
		midwalk += st.sss_examined > 0;
		TT_OK(spa_scan_stop(spa));
	}
	printf("  paused with progress made: %d of 8\n", midwalk);

	/* stop */
	TT_OK(spa_scan_start(spa, SPA_SCAN_SCRUB, 0));
	int e = spa_scan_stop(spa);
	TT_ASSERT(e == 0 || e == ENOENT);
	spa_scan_get_stat(spa, &st);
	TT_EQ(st.sss_state, e == 0 ? SPA_SCAN_STATE_CANCELED : SPA_SCAN_STATE_FINISHED);
	TT_ASSERT(st.sss_end_time != 0);
	TT_EQ(spa_scan_stop(spa), ENOENT);

	/* running: a second scrub is EBUSY; a resilver pre-empts it */
	pause_early(spa);
	TT_EQ(spa_scan_start(spa, SPA_SCAN_RESILVER, spa_last_synced_txg(spa)), 0);
	TT_EQ(spa_scan_start(spa, SPA_SCAN_SCRUB, 0), EBUSY);
	TT_EQ(spa_scan_pause(spa), ENOTSUP);
	TT_OK(spa_scan_wait(spa));
	spa_scan_get_stat(spa, &st);
	TT_EQ(st.sss_func, SPA_SCAN_RESILVER);
	TT_EQ(st.sss_state, SPA_SCAN_STATE_FINISHED);
	spa_close(spa);
	remove_files();
}

/* The result, a pause and a running scan across close and open. */
static void
test_scan_persist(void)
{
	spa_t *spa = make_pool("mirror", 2);
	dataset_t ds;
	write_dataset(spa, "t", &ds, 21, NOBJ, 4);
	spa_scan_stat_t st, st2;
	scrub(spa, &st);
	spa_close(spa);
	spa = reopen(true);
	spa_scan_get_stat(spa, &st2);
	TT_ASSERT(memcmp(&st, &st2, sizeof (st)) == 0);
	TT_EQ(spa_scan_start(spa, SPA_SCAN_SCRUB, 0), EROFS);
	spa_close(spa);

	/* paused when closed: still paused after; resuming starts over and ends */
	spa = reopen(false);
	pause_early(spa);
	spa_close(spa);
	spa = reopen(false);
	spa_scan_get_stat(spa, &st);
	TT_EQ(st.sss_state, SPA_SCAN_STATE_SCANNING);
	TT_EQ(st.sss_paused, 1);
	TT_OK(spa_scan_wait(spa));          /* nothing runs */
	TT_OK(spa_scan_start(spa, SPA_SCAN_SCRUB, 0));
	TT_OK(spa_scan_wait(spa));
	spa_scan_get_stat(spa, &st);
	TT_EQ(st.sss_state, SPA_SCAN_STATE_FINISHED);
	TT_ASSERT(st.sss_examined >= st.sss_to_examine / 2);

	/* running when closed (resumed and closed at once): the next open restarts it */
	pause_early(spa);
	spa_close(spa);
	spa = reopen(false);
	TT_OK(spa_scan_start(spa, SPA_SCAN_SCRUB, 0));
	spa_close(spa);
	spa = reopen(false);
	spa_scan_get_stat(spa, &st);
	printf("  closed while scanning: %s\n", st.sss_state == SPA_SCAN_STATE_SCANNING ?
	    "restarted at open" : "had finished before the close");
	TT_OK(spa_scan_wait(spa));
	spa_scan_get_stat(spa, &st);
	TT_EQ(st.sss_state, SPA_SCAN_STATE_FINISHED);
	TT_EQ(st.sss_errors, 0);
	TT_ASSERT(st.sss_examined >= st.sss_to_examine / 2);
	check_dataset(spa, "t", &ds);
	spa_close(spa);
	remove_files();
}

/*
 * A paused scrub holds frees; when they pile up it lets go of its walk
 * (the safety valve) instead of filling the pool, and a resume finishes.
 */
static void
test_pause_valve(void)
{
	spa_t *spa = make_pool("mirror", 2);
	dataset_t ds;
	write_dataset(spa, "t", &ds, 70, NOBJ, 1);
	objset_t *os;
	TT_OK(spa_objset_open(spa, "t", &os));
	pause_early(spa);
	spa_space_t ss;
	spa_get_space(spa, &ss);
	uint64_t maxdef = 0;
	/* rewrite object 8 (5 MiB) 40 times: 200 MiB freed, the pool is 119 MiB */
	for (int k = 0; k < 40; k++) {
		ds.ds_seed[8] = 7000 + (uint64_t)k;
		write_obj(os, &ds, 8, false);
		TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
		spa_get_space(spa, &ss);
		maxdef = MAX(maxdef, ss.ss_deferred);
	}
	printf("  paused scrub: at most %" PRIu64 " MiB deferred or held (pool %" PRIu64
	    " MiB)\n", (uint64_t)(maxdef / MiB), (uint64_t)(ss.ss_size / MiB));
	TT_ASSERT(maxdef > 32 * MiB);                /* it did hold */
	TT_ASSERT(maxdef < ss.ss_size * 2 / 3);     /* and let go */
	spa_scan_stat_t st;
	spa_scan_get_stat(spa, &st);
	TT_EQ(st.sss_state, SPA_SCAN_STATE_SCANNING);
	TT_EQ(st.sss_paused, 1);
	TT_OK(spa_scan_start(spa, SPA_SCAN_SCRUB, 0));
	TT_OK(spa_scan_wait(spa));
	spa_scan_get_stat(spa, &st);
	TT_EQ(st.sss_state, SPA_SCAN_STATE_FINISHED);
	TT_EQ(st.sss_errors, 0);
	TT_EQ(st.sss_repaired, 0);
	check_dataset(spa, "t", &ds);
	spa_close(spa);
	remove_files();
}

/* ---- resilver: only what is newer than min_txg ---- */

static void
test_resilver_min_txg(void)
{
	tarn_rand_t r;
	seed_init(&r, 30);
	spa_t *spa = make_pool("mirror", 2);
	dataset_t old, young;
	write_dataset(spa, "old", &old, 30, NOBJ, 2);
	uint64_t since = spa_last_synced_txg(spa) + 1;
	write_dataset(spa, "young", &young, 31, 3, 1);
	blklist_t bo, by;
	collect_blocks(spa, "old", &bo);
	collect_blocks(spa, "young", &by);
	geom_t g = pool_geom(spa);
	spa_close(spa);
	/* side 1 misses some of the old and some of the new blocks */
	uint64_t young_bytes = 0;
	for (size_t i = 0; i < bo.bl_n; i += 3)
		TT_ASSERT(damage_block(&g, &bo.bl_v[i].b_bp, 0, 1, &r));
	for (size_t i = 0; i < by.bl_n; i++) {
		TT_ASSERT(by.bl_v[i].b_bp.bp_birth >= since);
		if (by.bl_v[i].b_bp.bp_level == 0) {
			TT_ASSERT(damage_block(&g, &by.bl_v[i].b_bp, 0, 1, &r));
			young_bytes += by.bl_v[i].b_bp.bp_psize;
		}
	}
	spa = reopen(false);
	TT_OK(spa_scan_start(spa, SPA_SCAN_RESILVER, since));
	TT_OK(spa_scan_wait(spa));
	spa_scan_stat_t st;
	spa_scan_get_stat(spa, &st);
	printf("  resilver: issued %" PRIu64 " KiB of %" PRIu64 " KiB allocated, repaired %"
	    PRIu64 " KiB (damaged young data %" PRIu64 " KiB)\n", (uint64_t)(st.sss_issued / KiB),
	    (uint64_t)(st.sss_to_examine / KiB), (uint64_t)(st.sss_repaired / KiB), (uint64_t)(young_bytes / KiB));
	TT_EQ(st.sss_func, SPA_SCAN_RESILVER);
	TT_EQ(st.sss_state, SPA_SCAN_STATE_FINISHED);
	TT_EQ(st.sss_min_txg, since);
	TT_EQ(st.sss_errors, 0);
	TT_ASSERT(st.sss_issued > 0);
	TT_ASSERT(st.sss_issued < st.sss_to_examine / 5);
	TT_ASSERT(st.sss_repaired >= young_bytes);
	TT_ASSERT(st.sss_repaired < young_bytes + 64 * KiB);  /* none of the old */
	/* a resilver leaves the error log alone; the scrub repairs the old ones */
	spa_scan_stat_t sc;
	scrub(spa, &sc);
	TT_ASSERT(sc.sss_repaired > 0);
	TT_EQ(sc.sss_errors, 0);
	scrub(spa, &sc);
	TT_EQ(sc.sss_repaired, 0);
	check_dataset(spa, "old", &old);
	check_dataset(spa, "young", &young);
	spa_close(spa);
	free(bo.bl_v);
	free(by.bl_v);
	remove_files();
}

/* ---- a scrub racing a writer that frees and rewrites ---- */

typedef struct writer {
	spa_t     *w_spa;
	objset_t  *w_os;
	dataset_t *w_ds;
	uint64_t   w_seed;
	bool       w_stop;             /* atomic */
	uint64_t   w_ops, w_txgs;
	int        w_err;
} writer_t;

static void *
writer_main(void *arg)
{
	writer_t *w = arg;
	tarn_rand_t r;
	tarn_rand_seed(&r, w->w_seed);
	dataset_t *ds = w->w_ds;
	while (!__atomic_load_n(&w->w_stop, __ATOMIC_RELAXED) && w->w_err == 0) {
		int i = (int)tarn_rand_range(&r, (uint64_t)ds->ds_n);
		ds->ds_seed[i] = tarn_rand_u64(&r);
		if (tarn_rand_range(&r, 3) == 0) {
			/* free everything, then write a new size */
			dmu_tx_t *tx = dmu_tx_create(w->w_os);
			dmu_tx_hold_free(tx, ds->ds_obj[i], 0, DMU_OBJECT_END);
			if ((w->w_err = dmu_tx_assign(tx, TXG_WAIT)) != 0) {
				dmu_tx_abort(tx);
				break;
			}
			w->w_err = dmu_free_range(w->w_os, ds->ds_obj[i], 0, DMU_OBJECT_END, tx);
			dmu_tx_commit(tx);
			ds->ds_size[i] = (1 + tarn_rand_range(&r, 12)) * 64 * KiB +
			    tarn_rand_range(&r, 4096);
		}
		uint64_t len = ds->ds_size[i];
		uint8_t *buf = tarn_alloc(len);
		fill(buf, len, ds->ds_seed[i]);
		dmu_tx_t *tx = dmu_tx_create(w->w_os);
		dmu_tx_hold_write(tx, ds->ds_obj[i], 0, len);
		if ((w->w_err = dmu_tx_assign(tx, TXG_WAIT)) != 0) {
			dmu_tx_abort(tx);
			tarn_free(buf);
			break;
		}
		w->w_err = dmu_write(w->w_os, ds->ds_obj[i], 0, len, buf, tx);
		dmu_tx_commit(tx);
		tarn_free(buf);
		if (++w->w_ops % 3 == 0) {
			w->w_err = txg_wait_synced(spa_dmu_pool(w->w_spa), 0);
			w->w_txgs++;
		}
	}
	return (NULL);
}

static void
test_scrub_with_writer(void)
{
	spa_t *spa = make_pool("raidz1", 3);
	dataset_t ds, ws;
	write_dataset(spa, "t", &ds, 40, NOBJ, 3);
	write_dataset(spa, "w", &ws, 41, 16, 1);
	for (int i = 0; i < ws.ds_n; i++)
		ws.ds_size[i] = MIN(ws.ds_size[i], 2 * MiB);
	writer_t w = { .w_spa = spa, .w_ds = &ws, .w_seed = 42 };
	TT_OK(spa_objset_open(spa, "w", &w.w_os));
	spa_scan_stat_t st;
	uint64_t total_txgs = 0;
	/*
	 * At least two scrubs, and more until the writer has synced enough
	 * txgs during them for frees to mature mid-scrub: how many it gets
	 * in depends on how the scheduler shares the CPUs.
	 */
	for (int round = 0; round < 2 || (total_txgs <= 2 * TXG_DEFER_SIZE && round < 10);
	    round++) {
		pthread_t tid;
		__atomic_store_n(&w.w_stop, false, __ATOMIC_RELAXED);
		w.w_txgs = 0;
		VERIFY0(pthread_create(&tid, NULL, writer_main, &w));
		usleep(50 * 1000);
		uint64_t t0 = tarn_now_ns();
		TT_OK(spa_scan_start(spa, SPA_SCAN_SCRUB, 0));
		TT_OK(spa_scan_wait(spa));
		uint64_t ms = (tarn_now_ns() - t0) / 1000000;
		__atomic_store_n(&w.w_stop, true, __ATOMIC_RELAXED);
		VERIFY0(pthread_join(tid, NULL));
		TT_OK(w.w_err);
		spa_scan_get_stat(spa, &st);
		printf("  scrub with a writer: %" PRIu64 " ms, %" PRIu64 " KiB, %" PRIu64
		    " writer txgs\n", ms, (uint64_t)(st.sss_examined / KiB), w.w_txgs);
		total_txgs += w.w_txgs;
		TT_EQ(st.sss_state, SPA_SCAN_STATE_FINISHED);
		TT_EQ(st.sss_errors, 0);
		TT_EQ(st.sss_repaired, 0);
		TT_EQ(spa_errlog_count(spa), 0);
	}
	TT_ASSERT(total_txgs > 2 * TXG_DEFER_SIZE);
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	check_dataset(spa, "t", &ds);
	check_dataset(spa, "w", &ws);
	uint64_t blocks, errors;
	TT_OK(spa_verify_all(spa, true, &blocks, &errors));
	TT_EQ(errors, 0);
	scrub(spa, &st);
	TT_EQ(st.sss_errors, 0);
	TT_EQ(st.sss_repaired, 0);
	for (int c = 0; c < 3; c++)
		TT_EQ(leaf_cksum(spa, c), 0);
	spa_close(spa);
	spa = reopen(false);
	check_dataset(spa, "w", &ws);
	spa_close(spa);
	remove_files();
}

/* ---- user I/O keeps its share while a scrub runs ---- */

typedef struct reader {
	objset_t  *r_os;
	dataset_t *r_ds;
	bool       r_stop;             /* atomic */
	uint64_t   r_ops;              /* atomic */
	int        r_err;
} reader_t;

static void *
reader_main(void *arg)
{
	reader_t *rd = arg;
	tarn_rand_t r;
	tarn_rand_seed(&r, 7);
	uint8_t *buf = tarn_alloc(128 * KiB);
	while (!__atomic_load_n(&rd->r_stop, __ATOMIC_RELAXED) && rd->r_err == 0) {
		int i = 5 + (int)tarn_rand_range(&r, 5);      /* the big objects */
		uint64_t nb = rd->r_ds->ds_size[i] / (128 * KiB);
		uint64_t off = tarn_rand_range(&r, nb) * 128 * KiB;
		rd->r_err = dmu_read(rd->r_os, rd->r_ds->ds_obj[i], off, 128 * KiB, buf);
		__atomic_add_fetch(&rd->r_ops, 1, __ATOMIC_RELAXED);
	}
	tarn_free(buf);
	return (NULL);
}

/* Reader ops per second over ms milliseconds (or until the scan ends). */
static uint64_t
reader_rate(spa_t *spa, reader_t *rd, uint64_t ms, bool until_scan_ends)
{
	uint64_t t0 = tarn_now_ns(), o0 = __atomic_load_n(&rd->r_ops, __ATOMIC_RELAXED);
	for (;;) {
		usleep(10 * 1000);
		uint64_t dt = tarn_now_ns() - t0;
		spa_scan_stat_t st;
		spa_scan_get_stat(spa, &st);
		if (dt >= ms * 1000000ULL ||
		    (until_scan_ends && st.sss_state != SPA_SCAN_STATE_SCANNING))
			return ((__atomic_load_n(&rd->r_ops, __ATOMIC_RELAXED) - o0) * 1000000000ULL /
			    MAX(dt, 1));
	}
}

static void
test_user_io_priority(void)
{
	spa_t *spa = make_pool("mirror", 2);
	dataset_t ds;
	write_dataset(spa, "t", &ds, 60, NOBJ, 6);
	reader_t rd = { .r_ds = &ds };
	TT_OK(spa_objset_open(spa, "t", &rd.r_os));
	/*
	 * The machine is shared (other tests run beside this one), so one
	 * pair of rates can be skewed by a neighbour; a scrub that starves
	 * readers does so every time.  Up to three tries.
	 */
	bool kept_share = false;
	for (int attempt = 0; attempt < 3 && !kept_share; attempt++) {
		pthread_t tid;
		__atomic_store_n(&rd.r_stop, false, __ATOMIC_RELAXED);
		VERIFY0(pthread_create(&tid, NULL, reader_main, &rd));
		uint64_t idle = reader_rate(spa, &rd, 300, false);
		uint64_t t0 = tarn_now_ns();
		TT_OK(spa_scan_start(spa, SPA_SCAN_SCRUB, 0));
		usleep(20 * 1000);
		uint64_t busy = reader_rate(spa, &rd, 2000, true);
		TT_OK(spa_scan_wait(spa));
		uint64_t scan_ms = (tarn_now_ns() - t0) / 1000000;
		__atomic_store_n(&rd.r_stop, true, __ATOMIC_RELAXED);
		VERIFY0(pthread_join(tid, NULL));
		TT_OK(rd.r_err);
		spa_scan_stat_t st;
		spa_scan_get_stat(spa, &st);
		TT_EQ(st.sss_state, SPA_SCAN_STATE_FINISHED);
		TT_EQ(st.sss_errors, 0);
		/* the same scrub on an idle pool */
		t0 = tarn_now_ns();
		scrub(spa, &st);
		uint64_t idle_ms = (tarn_now_ns() - t0) / 1000000;
		TT_EQ(st.sss_errors, 0);
		printf("  reader: %" PRIu64 " reads/s alone, %" PRIu64 " during the scrub; scrub %"
		    PRIu64 " ms busy, %" PRIu64 " ms idle\n", idle, busy, scan_ms, idle_ms);
		kept_share = busy * 2 >= idle;     /* loose: the machine is shared */
	}
	TT_ASSERT(kept_share);
	spa_close(spa);
	remove_files();
}

/* ---- speed (printed; TARN_TEST_TMP=/dev/shm for tmpfs) ---- */

static void
test_scrub_speed(void)
{
	spa_t *spa = make_pool("raidz2", 5);
	dataset_t ds;
	write_dataset(spa, "t", &ds, 50, NOBJ, 6);
	spa_close(spa);
	spa = reopen(false);
	uint64_t t0 = tarn_now_ns();
	spa_scan_stat_t st;
	scrub(spa, &st);
	uint64_t ns = tarn_now_ns() - t0;
	printf("  raidz2 x5 scrub: %" PRIu64 " MiB in %" PRIu64 " ms = %" PRIu64 " MB/s\n",
	    (uint64_t)(st.sss_issued / MiB), ns / 1000000, st.sss_issued * 1000 / MAX(ns, 1));
	TT_EQ(st.sss_errors, 0);
	TT_EQ(st.sss_repaired, 0);
	spa_close(spa);
	remove_files();
}

static void
test_cleanup(void)
{
	tt_tmpdir_cleanup();
}

TT_MAIN(
	{ "repair_mirror2", test_repair_mirror2 },
	{ "repair_mirror3", test_repair_mirror3 },
	{ "repair_raidz1", test_repair_raidz1 },
	{ "repair_raidz2", test_repair_raidz2 },
	{ "repair_raidz3", test_repair_raidz3 },
	{ "beyond_redundancy", test_beyond_redundancy },
	{ "metadata_at_once", test_metadata_at_once },
	{ "pause_resume_stop", test_pause_resume_stop },
	{ "scan_persist", test_scan_persist },
	{ "pause_valve", test_pause_valve },
	{ "resilver_min_txg", test_resilver_min_txg },
	{ "scrub_with_writer", test_scrub_with_writer },
	{ "user_io_priority", test_user_io_priority },
	{ "scrub_speed", test_scrub_speed },
	{ "cleanup", test_cleanup },
)
