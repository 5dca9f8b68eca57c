/*
 * Unit tests of snapshots on a real pool of file vdevs: what a snapshot
 * reads after the file system changed, the space each holds (used,
 * usedbysnapshots, written), destroy freeing exactly what only it held
 * (the pool's allocated space comes back), ranges and dry runs, holds
 * and deferred destroy, rollback, clones, bookmarks, and all of it
 * across a close and reopen with a verify of every block.
 */
#include "tt.h"
#include "tt_pool.h"
#include "spa.h"
#include "dsl.h"
#include "vdev.h"
#include "tarn_array.h"

static tt_pool_devs_t devs;
static char err[512];
#define MB (1 * MiB)

static void
fill(uint8_t *buf, uint64_t len, uint64_t seed)
{
	tt_fill(buf, len, seed);
}

/* Write len bytes of seed's content at offset 0 of obj (0: a new object); returns obj. */
static uint64_t
put(dsl_pool_t *dp, const char *fs, uint64_t obj, uint64_t len, uint64_t seed)
{
	objset_t *os;
	TT_OK(dsl_dataset_objset(dp, fs, &os));
	uint8_t *buf = tarn_alloc(len);
	fill(buf, len, seed);
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_write(tx, obj, 0, len);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	if (obj == 0)
		TT_OK(dmu_object_alloc(os, DMU_OT_PLAIN_FILE, 128 * KiB, DMU_OT_NONE, 0, tx, &obj));
	TT_OK(dmu_write(os, obj, 0, len, buf, tx));
	dmu_tx_commit(tx);
	tarn_free(buf);
	TT_OK(txg_wait_synced(spa_dmu_pool(dsl_pool_spa(dp)), 0));
	return (obj);
}

static void
drop(dsl_pool_t *dp, const char *fs, uint64_t obj)
{
	objset_t *os;
	TT_OK(dsl_dataset_objset(dp, fs, &os));
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_free(tx, obj, 0, DMU_OBJECT_END);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_object_free(os, obj, tx));
	dmu_tx_commit(tx);
	TT_OK(txg_wait_synced(spa_dmu_pool(dsl_pool_spa(dp)), 0));
}

/* Does obj of os hold len bytes of seed's content? */
static bool
holds(objset_t *os, uint64_t obj, uint64_t len, uint64_t seed)
{
	uint8_t *want = tarn_alloc(len), *got = tarn_alloc(len);
	fill(want, len, seed);
	bool ok = dmu_read(os, obj, 0, len, got) == 0 && memcmp(want, got, len) == 0;
	tarn_free(want);
	tarn_free(got);
	return (ok);
}

static bool
snap_holds(dsl_pool_t *dp, const char *snap, uint64_t obj, uint64_t len, uint64_t seed)
{
	objset_t *os;
	int e = dsl_snapshot_objset_open(dp, snap, &os, err, sizeof (err));
	if (e != 0) {
		fprintf(stderr, "  open %s: %s\n", snap, err);
		return (false);
	}
	bool ok = holds(os, obj, len, seed);
	dsl_snapshot_objset_close(dp, os);
	return (ok);
}

static void
snap(dsl_pool_t *dp, const char *name)
{
	const char *v[1] = { name };
	int e = dsl_snapshot_create(dp, v, 1, false, NULL, 0, err, sizeof (err));
	if (e != 0)
		fprintf(stderr, "  snapshot %s: %s\n", name, err);
	TT_OK(e);
}

static uint64_t
destroy(dsl_pool_t *dp, const char *name, int flags)
{
	const char *v[1] = { name };
	uint64_t freed = 0;
	int e = dsl_snapshot_destroy(dp, v, 1, flags, &freed, NULL, NULL, err, sizeof (err));
	if (e != 0)
		fprintf(stderr, "  destroy %s: %s\n", name, err);
	TT_OK(e);
	return (freed);
}

static dsl_snap_info_t
info(dsl_pool_t *dp, const char *name)
{
	dsl_snap_info_t si;
	TT_OK(dsl_snapshot_info(dp, name, &si, err, sizeof (err)));
	return (si);
}

/* within 10% (+ 64 KiB of metadata) of want */
static bool
about(uint64_t got, uint64_t want)
{
	bool ok = got + want / 10 + 64 * KiB >= want && got <= want + want / 10 + 64 * KiB;
	if (!ok)
		fprintf(stderr, "  got %" PRIu64 " want about %" PRIu64 "\n", got, want);
	return (ok);
}

/* Let deferred frees mature, then the pool's allocated bytes. */
static uint64_t
settled_alloc(spa_t *spa)
{
	spa_space_t s;
	for (int i = 0; i < 8; i++) {
		(void) spa_history_log(spa, "snap test: let frees mature");
		txg_kick(spa_dmu_pool(spa));
		TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	}
	spa_get_space(spa, &s);
	return (s.ss_alloc);
}

static void
verify_all(spa_t *spa)
{
	uint64_t blocks, errors;
	TT_OK(spa_verify_all(spa, true, &blocks, &errors));
	TT_EQ(errors, 0);
}

static void
test_basic(void)
{
	tt_pool_files(&devs, 1, 512 * MB);
	spa_t *spa = tt_pool_create(&devs, "tank", NULL, NULL);
	dsl_pool_t *dp;
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	TT_OK(dsl_dataset_create(dp, "tank/fs", false, NULL, 0, err, sizeof (err)));
	uint64_t base = settled_alloc(spa);
	uint64_t a = put(dp, "tank/fs", 0, 4 * MB, 1);
	snap(dp, "tank/fs@s1");
	put(dp, "tank/fs", a, 4 * MB, 2);               /* A's first content only in s1 */
	uint64_t b = put(dp, "tank/fs", 0, 2 * MB, 7);
	snap(dp, "tank/fs@s2");
	put(dp, "tank/fs", a, 4 * MB, 3);               /* A's second content only in s2 */
	drop(dp, "tank/fs", b);                         /* B only in s2 */
	/* duplicates and missing file systems are refused, nothing taken */
	const char *dup[2] = { "tank/fs@s3", "tank/fs@s3" };
	TT_CHECK(dsl_snapshot_create(dp, dup, 2, false, NULL, 0, err, sizeof (err)) == EINVAL);
	const char *miss[2] = { "tank/fs@s3", "tank/nope@s3" };
	TT_CHECK(dsl_snapshot_create(dp, miss, 2, false, NULL, 0, err, sizeof (err)) == ENOENT);
	TT_CHECK(dsl_snapshot_info(dp, "tank/fs@s3", &(dsl_snap_info_t){ 0 }, err,
	    sizeof (err)) == ENOENT);
	const char *again[1] = { "tank/fs@s1" };
	TT_CHECK(dsl_snapshot_create(dp, again, 1, false, NULL, 0, err, sizeof (err)) == EEXIST);

	for (int round = 0; round < 2; round++) {
		objset_t *os;
		TT_OK(dsl_dataset_objset(dp, "tank/fs", &os));
		TT_CHECK(holds(os, a, 4 * MB, 3));
		TT_CHECK(snap_holds(dp, "tank/fs@s1", a, 4 * MB, 1));
		TT_CHECK(snap_holds(dp, "tank/fs@s2", a, 4 * MB, 2));
		TT_CHECK(snap_holds(dp, "tank/fs@s2", b, 2 * MB, 7));
		dsl_snap_info_t i1 = info(dp, "tank/fs@s1"), i2 = info(dp, "tank/fs@s2");
		TT_CHECK(about(i1.dsi_used, 4 * MB));
		TT_CHECK(about(i2.dsi_used, 6 * MB));
		TT_CHECK(about(i1.dsi_referenced, 4 * MB));
		TT_CHECK(about(i2.dsi_referenced, 6 * MB));
		TT_CHECK(about(i2.dsi_written, 6 * MB));
		TT_CHECK(i1.dsi_txg < i2.dsi_txg);
		dsl_space_t s;
		TT_OK(dsl_dataset_space(dp, "tank/fs", &s));
		TT_CHECK(about(s.ds_usedsnap, 10 * MB));
		TT_CHECK(about(s.ds_referenced, 4 * MB));
		TT_CHECK(about(s.ds_written, 4 * MB));
		TT_EQ(s.ds_used, s.ds_referenced + s.ds_usedsnap + s.ds_refreserved);
		TT_EQ(s.ds_nsnaps, 2);
		uint64_t w;
		TT_OK(dsl_dataset_written_since(dp, "tank/fs", "s1", &w, err, sizeof (err)));
		TT_CHECK(about(w, 4 * MB));
		verify_all(spa);
		dsl_pool_close(dp);
		spa_close(spa);
		spa = tt_pool_reopen(&devs, 0, NULL);
		TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	}
	/* dry run says what destroy then frees */
	const char *both[2] = { "tank/fs@s1", "tank/fs@s2" };
	uint64_t would = 0;
	TT_OK(dsl_snapshot_destroy(dp, both, 2, DSL_DESTROY_DRYRUN, &would, NULL, NULL, err,
	    sizeof (err)));
	TT_CHECK(about(would, 10 * MB));
	TT_CHECK(snap_holds(dp, "tank/fs@s1", a, 4 * MB, 1));
	uint64_t f1 = destroy(dp, "tank/fs@s1", 0);
	TT_CHECK(about(f1, 4 * MB));
	TT_CHECK(snap_holds(dp, "tank/fs@s2", a, 4 * MB, 2));
	TT_CHECK(snap_holds(dp, "tank/fs@s2", b, 2 * MB, 7));
	verify_all(spa);
	uint64_t f2 = destroy(dp, "tank/fs@s2", 0);
	TT_CHECK(about(f2, 6 * MB));
	dsl_space_t s;
	TT_OK(dsl_dataset_space(dp, "tank/fs", &s));
	TT_EQ(s.ds_usedsnap, 0);
	/* only the live 4 MiB is left allocated */
	uint64_t end = settled_alloc(spa);
	TT_CHECK(about(end - base, 4 * MB));
	verify_all(spa);
	dsl_pool_close(dp);
	spa_close(spa);
}

static void
test_holds_rollback_clone(void)
{
	tt_pool_files(&devs, 1, 512 * MB);
	spa_t *spa = tt_pool_create(&devs, "tank", NULL, NULL);
	dsl_pool_t *dp;
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	TT_OK(dsl_dataset_create(dp, "tank/fs", false, NULL, 0, err, sizeof (err)));
	uint64_t base = settled_alloc(spa);
	uint64_t a = put(dp, "tank/fs", 0, 2 * MB, 1);
	snap(dp, "tank/fs@s1");
	/* holds: busy, deferred, released */
	const char *s1[1] = { "tank/fs@s1" };
	TT_OK(dsl_hold(dp, s1, 1, "keep", false, err, sizeof (err)));
	TT_CHECK(dsl_hold(dp, s1, 1, "keep", false, err, sizeof (err)) == EEXIST);
	TT_EQ(info(dp, "tank/fs@s1").dsi_userrefs, 1);
	TT_CHECK(dsl_snapshot_destroy(dp, s1, 1, 0, NULL, NULL, NULL, err, sizeof (err)) == EBUSY);
	TT_CHECK(strcmp(err, "dataset is busy") == 0);
	/* rollback: changes since s1 vanish */
	uint64_t b = put(dp, "tank/fs", 0, 1 * MB, 5);
	put(dp, "tank/fs", a, 2 * MB, 2);
	TT_OK(dsl_dataset_rollback(dp, "tank/fs@s1", false, false, NULL, NULL, err, sizeof (err)));
	objset_t *os;
	TT_OK(dsl_dataset_objset(dp, "tank/fs", &os));
	TT_CHECK(holds(os, a, 2 * MB, 1));
	dmu_object_info_t doi;
	TT_CHECK(dmu_object_info(os, b, &doi) != 0);
	dsl_space_t s;
	TT_OK(dsl_dataset_space(dp, "tank/fs", &s));
	TT_EQ(s.ds_usedsnap, 0);
	/* writes after a rollback keep the snapshot intact */
	put(dp, "tank/fs", a, 2 * MB, 3);
	TT_CHECK(snap_holds(dp, "tank/fs@s1", a, 2 * MB, 1));
	/* a later snapshot blocks rollback without -r */
	snap(dp, "tank/fs@s2");
	TT_CHECK(dsl_dataset_rollback(dp, "tank/fs@s1", false, false, NULL, NULL, err,
	    sizeof (err)) == EEXIST);
	TT_CHECK(info(dp, "tank/fs@s2").dsi_txg != 0);
	/* clones: share, diverge, pin their origin */
	TT_OK(dsl_clone_create(dp, "tank/fs@s2", "tank/cl", false, NULL, 0, err, sizeof (err)));
	objset_t *cos;
	TT_OK(dsl_dataset_objset(dp, "tank/cl", &cos));
	TT_CHECK(holds(cos, a, 2 * MB, 3));
	char origin[256];
	TT_OK(dsl_dataset_origin(dp, "tank/cl", origin, sizeof (origin)));
	TT_CHECK(strcmp(origin, "tank/fs@s2") == 0);
	put(dp, "tank/cl", a, 2 * MB, 9);
	TT_CHECK(snap_holds(dp, "tank/fs@s2", a, 2 * MB, 3));
	TT_OK(dsl_dataset_objset(dp, "tank/cl", &cos));
	TT_CHECK(holds(cos, a, 2 * MB, 9));
	const char *s2[1] = { "tank/fs@s2" };
	TT_CHECK(dsl_snapshot_destroy(dp, s2, 1, 0, NULL, NULL, NULL, err, sizeof (err)) == EEXIST);
	TT_CHECK(strcmp(err, "snapshot has dependent clones") == 0);
	verify_all(spa);
	dsl_pool_close(dp);
	spa_close(spa);
	spa = tt_pool_reopen(&devs, 0, NULL);
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	TT_OK(dsl_dataset_objset(dp, "tank/cl", &cos));
	TT_CHECK(holds(cos, a, 2 * MB, 9));
	verify_all(spa);
	/* -d on a held snapshot marks it; the last release destroys it */
	TT_OK(dsl_snapshot_destroy(dp, s1, 1, DSL_DESTROY_DEFER, NULL, NULL, NULL, err,
	    sizeof (err)));
	TT_CHECK(info(dp, "tank/fs@s1").dsi_defer_destroy);
	TT_OK(dsl_release(dp, s1, 1, "keep", false, err, sizeof (err)));
	TT_CHECK(dsl_snapshot_info(dp, "tank/fs@s1", &(dsl_snap_info_t){ 0 }, err,
	    sizeof (err)) == ENOENT);
	/* -d on a cloned snapshot marks it; destroying the last clone takes it along */
	snap(dp, "tank/fs@s3");
	TT_OK(dsl_clone_create(dp, "tank/fs@s3", "tank/cl3", false, NULL, 0, err, sizeof (err)));
	const char *s3[1] = { "tank/fs@s3" };
	TT_CHECK(dsl_snapshot_destroy(dp, s3, 1, 0, NULL, NULL, NULL, err, sizeof (err)) == EEXIST);
	TT_OK(dsl_snapshot_destroy(dp, s3, 1, DSL_DESTROY_DEFER, NULL, NULL, NULL, err,
	    sizeof (err)));
	TT_CHECK(info(dp, "tank/fs@s3").dsi_defer_destroy);
	TT_OK(dsl_dataset_destroy(dp, "tank/cl3", false, err, sizeof (err)));
	TT_CHECK(dsl_snapshot_info(dp, "tank/fs@s3", &(dsl_snap_info_t){ 0 }, err,
	    sizeof (err)) == ENOENT);
	/* bookmarks keep the snapshot's guid and txg */
	dsl_snap_info_t i2 = info(dp, "tank/fs@s2");
	TT_OK(dsl_bookmark_create(dp, "tank/fs@s2", "tank/fs#b2", err, sizeof (err)));
	TT_CHECK(dsl_bookmark_create(dp, "tank/fs@s2", "tank/fs#b2", err, sizeof (err)) == EEXIST);
	dsl_bookmark_info_t *bm;
	int nb;
	TT_OK(dsl_bookmark_list(dp, "tank/fs", &bm, &nb, err, sizeof (err)));
	TT_EQ(nb, 1);
	TT_EQ(bm[0].dbi_guid, i2.dsi_guid);
	TT_EQ(bm[0].dbi_txg, i2.dsi_txg);
	tarn_free(bm);
	TT_OK(dsl_bookmark_destroy(dp, "tank/fs#b2", err, sizeof (err)));
	/* destroy the clone, then everything: the pool is back where it began */
	TT_OK(dsl_dataset_destroy(dp, "tank/cl", false, err, sizeof (err)));
	TT_CHECK(dsl_dataset_destroy(dp, "tank/fs", false, err, sizeof (err)) == EEXIST);
	TT_OK(dsl_dataset_destroy(dp, "tank/fs", true, err, sizeof (err)));
	TT_OK(dsl_dataset_create(dp, "tank/fs", false, NULL, 0, err, sizeof (err)));
	uint64_t end = settled_alloc(spa);
	/* the pool's own metadata moves by a few hundred KiB between txgs */
	if (end > base + 1 * MB)
		fprintf(stderr, "  base %" PRIu64 " end %" PRIu64 "\n", base, end);
	TT_CHECK(end <= base + 1 * MB);
	verify_all(spa);
	dsl_pool_close(dp);
	spa_close(spa);
}

static int
count_snaps(dsl_pool_t *dp, const char *fs, const char *want)
{
	dsl_snap_info_t *v;
	int n;
	TT_OK(dsl_snapshot_list(dp, fs, &v, &n, err, sizeof (err)));
	char got[1024] = "";
	for (int i = 0; i < n; i++) {
		strcat(got, strchr(v[i].dsi_name, '@'));
	}
	tarn_free(v);
	if (strcmp(got, want) != 0)
		fprintf(stderr, "  %s has '%s', want '%s'\n", fs, got, want);
	return (strcmp(got, want) == 0);
}

/* Promote: the origin's older snapshots move to the clone; everything still reads. */
static void
test_promote(void)
{
	tt_pool_files(&devs, 1, 512 * MB);
	spa_t *spa = tt_pool_create(&devs, "tank", NULL, NULL);
	dsl_pool_t *dp;
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	TT_OK(dsl_dataset_create(dp, "tank/fs", false, NULL, 0, err, sizeof (err)));
	uint64_t base = settled_alloc(spa);
	uint64_t a = put(dp, "tank/fs", 0, 2 * MB, 1);
	snap(dp, "tank/fs@s1");
	put(dp, "tank/fs", a, 2 * MB, 2);
	uint64_t b = put(dp, "tank/fs", 0, 1 * MB, 4);
	snap(dp, "tank/fs@s2");
	put(dp, "tank/fs", a, 2 * MB, 3);
	snap(dp, "tank/fs@s3");
	TT_OK(dsl_clone_create(dp, "tank/fs@s2", "tank/cl", false, NULL, 0, err, sizeof (err)));
	drop(dp, "tank/cl", b);                 /* the clone frees an origin block */
	put(dp, "tank/cl", a, 2 * MB, 5);
	snap(dp, "tank/cl@c1");
	put(dp, "tank/cl", a, 2 * MB, 6);
	TT_CHECK(dsl_dataset_promote(dp, "tank/fs", err, sizeof (err)) == EINVAL);
	TT_OK(dsl_dataset_promote(dp, "tank/cl", err, sizeof (err)));
	TT_CHECK(count_snaps(dp, "tank/cl", "@s1@s2@c1"));
	TT_CHECK(count_snaps(dp, "tank/fs", "@s3"));
	char origin[256];
	TT_OK(dsl_dataset_origin(dp, "tank/fs", origin, sizeof (origin)));
	TT_CHECK(strcmp(origin, "tank/cl@s2") == 0);
	TT_OK(dsl_dataset_origin(dp, "tank/cl", origin, sizeof (origin)));
	TT_CHECK(origin[0] == '\0');
	for (int round = 0; round < 2; round++) {
		TT_CHECK(snap_holds(dp, "tank/cl@s1", a, 2 * MB, 1));
		TT_CHECK(snap_holds(dp, "tank/cl@s2", a, 2 * MB, 2));
		TT_CHECK(snap_holds(dp, "tank/cl@s2", b, 1 * MB, 4));
		TT_CHECK(snap_holds(dp, "tank/cl@c1", a, 2 * MB, 5));
		TT_CHECK(snap_holds(dp, "tank/fs@s3", a, 2 * MB, 3));
		objset_t *os;
		TT_OK(dsl_dataset_objset(dp, "tank/fs", &os));
		TT_CHECK(holds(os, a, 2 * MB, 3));
		TT_OK(dsl_dataset_objset(dp, "tank/cl", &os));
		TT_CHECK(holds(os, a, 2 * MB, 6));
		/* the clone's snapshots now hold what only they hold */
		TT_CHECK(about(info(dp, "tank/cl@s1").dsi_used, 2 * MB));
		verify_all(spa);
		dsl_pool_close(dp);
		spa_close(spa);
		spa = tt_pool_reopen(&devs, 0, NULL);
		TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	}
	/* the old file system is a clone now: it goes, then the rest */
	TT_CHECK(dsl_dataset_destroy(dp, "tank/cl", true, err, sizeof (err)) != 0);
	TT_OK(dsl_dataset_destroy(dp, "tank/fs", true, err, sizeof (err)));
	TT_CHECK(snap_holds(dp, "tank/cl@s2", b, 1 * MB, 4));
	verify_all(spa);
	TT_OK(dsl_dataset_destroy(dp, "tank/cl", true, err, sizeof (err)));
	TT_OK(dsl_dataset_create(dp, "tank/fs", false, NULL, 0, err, sizeof (err)));
	uint64_t end = settled_alloc(spa);
	if (end > base + 1 * MB)
		fprintf(stderr, "  base %" PRIu64 " end %" PRIu64 "\n", base, end);
	TT_CHECK(end <= base + 1 * MB);
	verify_all(spa);
	dsl_pool_close(dp);
	spa_close(spa);
}

typedef struct snap_blocks {
	uint64_t obj;
	tarn_array_t bps;       /* of blkptr_t: obj's level-0 blocks */
} snap_blocks_t;

static int
snap_blocks_cb(void *arg, objset_t *os, uint64_t obj, const blkptr_t *bp, uint64_t blkid)
{
	snap_blocks_t *sb = arg;
	if (obj == sb->obj && bp->bp_level == 0)
		*(blkptr_t *)tarn_array_push(&sb->bps) = *bp;
	return (0);
}

static uint64_t
leaf_cksum_errors(spa_t *spa, int c)
{
	vdev_t *top = vdev_child(spa_root_vdev(spa), 0);
	return (__atomic_load_n(&vdev_stat(vdev_child(top, c))->vs_checksum_errors,
	    __ATOMIC_RELAXED));
}

/* A scrub reads (and repairs) blocks that only a snapshot still holds. */
static void
test_scrub_snapshot(void)
{
	tt_pool_files(&devs, 2, 256 * MB);
	spa_t *spa = tt_pool_create(&devs, "tank", "mirror", NULL);
	dsl_pool_t *dp;
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	TT_OK(dsl_dataset_create(dp, "tank/fs", false, NULL, 0, err, sizeof (err)));
	uint64_t a = put(dp, "tank/fs", 0, 4 * MB, 1);
	snap(dp, "tank/fs@s1");
	put(dp, "tank/fs", a, 4 * MB, 2);
	snap_blocks_t sb = { a, TARN_ARRAY_INIT(blkptr_t) };
	objset_t *sos;
	uint64_t errors = 0;
	TT_OK(dsl_snapshot_objset_open(dp, "tank/fs@s1", &sos, err, sizeof (err)));
	TT_OK(dmu_traverse(sos, 0, ZIO_FLAG_SPECULATIVE, 0, snap_blocks_cb, &sb, &errors));
	dsl_snapshot_objset_close(dp, sos);
	TT_CHECK(tarn_array_len(&sb.bps) >= 30);
	dsl_pool_close(dp);
	spa_close(spa);
	/* damage every block of the snapshot's old contents on the first side */
	int fd = open(devs.tpd_paths[0], O_RDWR);
	TT_ASSERT(fd >= 0);
	uint8_t junk[4096];
	memset(junk, 0xa5, sizeof (junk));
	for (size_t i = 0; i < tarn_array_len(&sb.bps); i++) {
		const blkptr_t *bp = tarn_array_get(&sb.bps, i);
		TT_EQ(pwrite(fd, junk, sizeof (junk),
		    (off_t)(VDEV_LABEL_START_SIZE + bp->bp_dva[0].dva_offset)), sizeof (junk));
	}
	close(fd);
	spa = tt_pool_reopen(&devs, 0, NULL);
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	TT_OK(spa_scan_start(spa, SPA_SCAN_SCRUB, 0));
	TT_OK(spa_scan_wait(spa));
	spa_scan_stat_t st;
	spa_scan_get_stat(spa, &st);
	TT_EQ(st.sss_state, SPA_SCAN_STATE_FINISHED);
	TT_CHECK(leaf_cksum_errors(spa, 0) >= tarn_array_len(&sb.bps));
	TT_CHECK(snap_holds(dp, "tank/fs@s1", a, 4 * MB, 1));
	/* repaired: a second scrub finds nothing new */
	uint64_t before = leaf_cksum_errors(spa, 0);
	TT_OK(spa_scan_start(spa, SPA_SCAN_SCRUB, 0));
	TT_OK(spa_scan_wait(spa));
	TT_EQ(leaf_cksum_errors(spa, 0), before);
	tarn_array_fini(&sb.bps);
	dsl_pool_close(dp);
	spa_close(spa);
}

static void
cleanup(void)
{
	tt_pool_files_remove(&devs);
}

TT_MAIN(
	{ "basic", test_basic },
	{ "holds_rollback_clone", test_holds_rollback_clone },
	{ "scrub_snapshot", test_scrub_snapshot },
	{ "promote", test_promote },
	{ "cleanup", cleanup },
)
