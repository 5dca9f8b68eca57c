/*
 * Unit tests of the zap layer, on a real pool (sparse files, spa + dmu):
 * both forms and the upgrade, array values, error codes, every name
 * length, a million entries, cursor stability under concurrent change,
 * persistence across close/open, damaged blocks, and threads.
 */
#include "tt.h"
#include "spa.h"
#include "zap.h"
#include "zap_impl.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#define DEVSIZE (256 * MiB)

static spa_t *g_spa;
static objset_t *g_os;
static char g_paths[2][512];
static int g_ndev;

static void
pool_create(int ndev)
{
	static bool cleanup_registered;
	if (!cleanup_registered) {
		atexit(tt_tmpdir_cleanup);
		cleanup_registered = true;
	}
	spa_vdev_spec_t leaves[2], *kids[2];
	for (int i = 0; i < ndev; i++) {
		snprintf(g_paths[i], sizeof(g_paths[i]), "%s/zapdev%d", tt_tmpdir(), i);
		int fd = open(g_paths[i], O_RDWR | O_CREAT | O_TRUNC, 0644);
		TT_ASSERT(fd >= 0);
		TT_OK(ftruncate(fd, DEVSIZE));
		close(fd);
		leaves[i] = (spa_vdev_spec_t){.type = VDEV_TYPE_FILE, .path = g_paths[i]};
		kids[i] = &leaves[i];
	}
	g_ndev = ndev;
	spa_vdev_spec_t root = {.type = VDEV_TYPE_ROOT, .nchildren = ndev, .children = kids};
	spa_create_opts_t opts = {.sco_no_cache = true};
	char err[256] = "";
	int rc = spa_create("zaptest", &root, &opts, &g_spa, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "  spa_create: %s\n", err);
	TT_OK(rc);
	TT_OK(spa_objset_create(g_spa, "test", DMU_OST_TEST, &g_os));
}

static void
pool_reopen(void)
{
	const char *paths[2] = {g_paths[0], g_paths[1]};
	spa_import_opts_t opts = {.sio_no_cache = true};
	char err[256] = "";
	spa_close(g_spa);
	g_spa = NULL;
	int rc = spa_open_paths(paths, g_ndev, &opts, &g_spa, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "  spa_open_paths: %s\n", err);
	TT_OK(rc);
	TT_OK(spa_objset_open(g_spa, "test", &g_os));
}

static void
pool_destroy(void)
{
	if (g_spa != NULL)
		spa_close(g_spa);
	g_spa = NULL;
	g_os = NULL;
	for (int i = 0; i < g_ndev; i++)
		unlink(g_paths[i]);
}

static dmu_tx_t *
tx_begin(uint64_t zapobj, uint64_t nops)
{
	dmu_tx_t *tx = dmu_tx_create(g_os);
	zap_tx_hold(tx, g_os, zapobj, nops);
	int err = dmu_tx_assign(tx, TXG_WAIT);
	if (err != 0)
		dmu_tx_abort(tx);
	TT_OK(err);
	return (tx);
}

static uint64_t
new_zap(void)
{
	uint64_t obj;
	dmu_tx_t *tx = tx_begin(0, 1);
	TT_OK(zap_create(g_os, DMU_OT_ZAP, tx, &obj));
	dmu_tx_commit(tx);
	return (obj);
}

/* The form of a ZAP object: its block 0 magic. */
static uint64_t
zap_magic(uint64_t obj)
{
	uint64_t m = 0;
	TT_OK(dmu_read(g_os, obj, 0, 8, &m));
	return (m);
}

static void
test_micro_basic(void)
{
	pool_create(1);
	uint64_t obj = new_zap(), v = 0, cnt;
	dmu_tx_t *tx = tx_begin(obj, 10);
	TT_OK(zap_add_int(g_os, obj, "alpha", 1, tx));
	TT_OK(zap_add_int(g_os, obj, "beta", 2, tx));
	TT_OK(zap_add_int(g_os, obj, "gamma", 3, tx));
	TT_EQ(zap_add_int(g_os, obj, "beta", 9, tx), EEXIST);
	TT_OK(zap_update_int(g_os, obj, "beta", 22, tx));
	TT_OK(zap_update_int(g_os, obj, "delta", 4, tx));
	TT_EQ(zap_remove(g_os, obj, "nothere", tx), ENOENT);
	TT_OK(zap_remove(g_os, obj, "gamma", tx));
	dmu_tx_commit(tx);
	TT_EQ(zap_magic(obj), ZAP_MICRO_MAGIC);
	TT_OK(zap_lookup_int(g_os, obj, "alpha", &v));
	TT_EQ(v, 1);
	TT_OK(zap_lookup_int(g_os, obj, "beta", &v));
	TT_EQ(v, 22);
	TT_OK(zap_lookup_int(g_os, obj, "delta", &v));
	TT_EQ(v, 4);
	TT_EQ(zap_lookup_int(g_os, obj, "gamma", &v), ENOENT);
	TT_OK(zap_count(g_os, obj, &cnt));
	TT_EQ(cnt, 3);
	int is;
	uint64_t num;
	TT_OK(zap_length(g_os, obj, "alpha", &is, &num));
	TT_EQ(is, 8);
	TT_EQ(num, 1);
	uint8_t b;
	TT_EQ(zap_lookup(g_os, obj, "alpha", 1, 1, &b), EINVAL);
	TT_EQ(zap_lookup(g_os, obj, "alpha", 8, 0, &v), EOVERFLOW);
	uint64_t two[2] = {7, 7};
	TT_OK(zap_lookup(g_os, obj, "alpha", 8, 2, two));
	TT_EQ(two[0], 1);
	TT_EQ(two[1], 7);
	TT_EQ(zap_lookup_int(g_os, obj, "", &v), EINVAL);
	TT_EQ(zap_count(g_os, 999999, &cnt), ENOENT);
	/* reverse lookups: by the whole value, by masked bits, none */
	char name[ZAP_MAXNAMELEN];
	TT_OK(zap_value_search(g_os, obj, 22, 0, name, sizeof (name)));
	TT_CHECK(strcmp(name, "beta") == 0);
	TT_OK(zap_value_search(g_os, obj, 4, 0xff, name, sizeof (name)));
	TT_CHECK(strcmp(name, "delta") == 0);
	TT_EQ(zap_value_search(g_os, obj, 3, 0, name, sizeof (name)), ENOENT);  /* removed */
	tx = tx_begin(obj, 1);
	TT_OK(zap_update_int(g_os, obj, "tagged", (5ULL << 56) | 77, tx));
	uint8_t bytes[3] = { 77, 0, 0 };
	TT_OK(zap_update(g_os, obj, "bytes", 1, 3, bytes, tx));
	dmu_tx_commit(tx);
	TT_OK(zap_value_search(g_os, obj, 77, (1ULL << 48) - 1, name, sizeof (name)));
	TT_CHECK(strcmp(name, "tagged") == 0);      /* not the byte array */
	TT_EQ(zap_value_search(g_os, obj, 77, 0, name, sizeof (name)), ENOENT);
	pool_destroy();
}

/* Fill a micro ZAP to the upgrade point and past it; all entries survive. */
static void
test_micro_grow_upgrade(void)
{
	pool_create(1);
	uint64_t obj = new_zap(), v;
	char name[64];
	uint32_t last_bs = 0;
	int n = ZAP_MICRO_CAP(ZAP_MICRO_MAX_BLKSZ) + 40;
	for (int i = 0; i < n; i++) {
		dmu_tx_t *tx = tx_begin(obj, 1);
		snprintf(name, sizeof(name), "entry-%d", i);
		TT_OK(zap_add_int(g_os, obj, name, i * 3, tx));
		dmu_tx_commit(tx);
		if (i % 37 == 0) /* grow clean blocks too, not only dirty ones */
			TT_OK(txg_wait_synced(dmu_objset_pool(g_os), 0));
		dmu_object_info_t doi;
		TT_OK(dmu_object_info(g_os, obj, &doi));
		if (i < (int)ZAP_MICRO_CAP(ZAP_MICRO_MAX_BLKSZ)) {
			TT_EQ(zap_magic(obj), ZAP_MICRO_MAGIC);
			TT_CHECK(doi.doi_data_block_size >= last_bs);
			TT_CHECK(ZAP_MICRO_CAP(doi.doi_data_block_size) >= (uint32_t)i + 1);
			last_bs = doi.doi_data_block_size;
		} else {
			TT_EQ(zap_magic(obj), ZAP_FAT_MAGIC);
			TT_EQ(doi.doi_data_block_size, ZAP_FAT_BLKSZ);
		}
	}
	TT_EQ(last_bs, ZAP_MICRO_MAX_BLKSZ);
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "entry-%d", i);
		TT_OK(zap_lookup_int(g_os, obj, name, &v));
		TT_EQ(v, (uint64_t)i * 3);
	}
	uint64_t cnt;
	TT_OK(zap_count(g_os, obj, &cnt));
	TT_EQ(cnt, n);
	pool_destroy();
}

/* Each kind of entry a micro ZAP cannot hold upgrades it. */
static void
test_upgrade_triggers(void)
{
	pool_create(1);
	const char *longname = "a-name-that-is-exactly-forty-eight-bytes-long-xx";
	TT_EQ(strlen(longname), 48);
	uint64_t arr[3] = {1, 2, 3}, v;
	uint8_t bytes[5] = {9, 8, 7, 6, 5};
	for (int kind = 0; kind < 4; kind++) {
		uint64_t obj = new_zap();
		dmu_tx_t *tx = tx_begin(obj, 4);
		TT_OK(zap_add_int(g_os, obj, "keep1", 11, tx));
		TT_OK(zap_add_int(g_os, obj, "keep2", 12, tx));
		/* 47 bytes still fits. */
		TT_OK(zap_add_int(g_os, obj, longname + 1, 47, tx));
		TT_EQ(zap_magic(obj), ZAP_MICRO_MAGIC);
		if (kind == 0)
			TT_OK(zap_add_int(g_os, obj, longname, 48, tx));
		else if (kind == 1)
			TT_OK(zap_add(g_os, obj, "arr", 8, 3, arr, tx));
		else if (kind == 2)
			TT_OK(zap_add(g_os, obj, "bytes", 1, 5, bytes, tx));
		else
			TT_OK(zap_update(g_os, obj, "keep2", 8, 3, arr, tx));
		dmu_tx_commit(tx);
		TT_EQ(zap_magic(obj), ZAP_FAT_MAGIC);
		TT_OK(zap_lookup_int(g_os, obj, "keep1", &v));
		TT_EQ(v, 11);
		TT_OK(zap_lookup_int(g_os, obj, longname + 1, &v));
		TT_EQ(v, 47);
		uint64_t cnt;
		TT_OK(zap_count(g_os, obj, &cnt));
		TT_EQ(cnt, kind == 3 ? 3 : 4);
	}
	pool_destroy();
}

static void
fill_pattern(uint8_t *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)((seed * 131 + i * 7 + (i >> 8)) & 0xff);
}

/* Arrays of 1- and 8-byte integers up to 8 KiB; size changes; errors. */
static void
test_arrays(void)
{
	pool_create(1);
	uint64_t obj = new_zap();
	uint8_t *buf = tarn_alloc(ZAP_MAXVALUELEN + 16), *got = tarn_alloc(ZAP_MAXVALUELEN + 16);
	static const uint64_t lens[] = {1, 2, 7, 8, 9, 100, 1000, 4096, 8000, 8191, 8192};
	char name[32];
	dmu_tx_t *tx = tx_begin(obj, 2 * ARRAY_SIZE(lens));
	for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
		fill_pattern(buf, lens[i], i);
		snprintf(name, sizeof(name), "b%zu", i);
		TT_OK(zap_add(g_os, obj, name, 1, lens[i], buf, tx));
		if (lens[i] % 8 == 0) {
			snprintf(name, sizeof(name), "q%zu", i);
			TT_OK(zap_add(g_os, obj, name, 8, lens[i] / 8, buf, tx));
		}
	}
	dmu_tx_commit(tx);
	for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
		fill_pattern(buf, lens[i], i);
		snprintf(name, sizeof(name), "b%zu", i);
		int is;
		uint64_t num;
		TT_OK(zap_length(g_os, obj, name, &is, &num));
		TT_EQ(is, 1);
		TT_EQ(num, lens[i]);
		memset(got, 0xee, lens[i] + 16);
		TT_OK(zap_lookup(g_os, obj, name, 1, lens[i] + 16, got));
		TT_CHECK(memcmp(got, buf, lens[i]) == 0);
		TT_EQ(got[lens[i]], 0xee);
		TT_EQ(zap_lookup(g_os, obj, name, 1, lens[i] - 1, got), EOVERFLOW);
		TT_EQ(zap_lookup(g_os, obj, name, 8, lens[i], got), EINVAL);
		if (lens[i] % 8 == 0) {
			snprintf(name, sizeof(name), "q%zu", i);
			TT_OK(zap_lookup(g_os, obj, name, 8, lens[i] / 8, got));
			TT_CHECK(memcmp(got, buf, lens[i]) == 0);
		}
	}
	/* Grow and shrink a value in place. */
	tx = tx_begin(obj, 4);
	fill_pattern(buf, 8192, 99);
	TT_OK(zap_update(g_os, obj, "b0", 8, 1024, buf, tx));
	TT_EQ(zap_update(g_os, obj, "b0", 8, 1025, buf, tx), E2BIG);
	TT_EQ(zap_add(g_os, obj, "big", 1, 8193, buf, tx), E2BIG);
	TT_EQ(zap_add(g_os, obj, "odd", 2, 1, buf, tx), EINVAL);
	TT_EQ(zap_add(g_os, obj, "none", 8, 0, buf, tx), EINVAL);
	TT_OK(zap_update(g_os, obj, "b10", 1, 3, buf, tx));
	dmu_tx_commit(tx);
	TT_OK(zap_lookup(g_os, obj, "b0", 8, 1024, got));
	TT_CHECK(memcmp(got, buf, 8192) == 0);
	TT_OK(zap_lookup(g_os, obj, "b10", 1, 3, got));
	TT_CHECK(memcmp(got, buf, 3) == 0);
	TT_EQ(zap_lookup(g_os, obj, "big", 1, 8193, got), ENOENT);
	tarn_free(buf);
	tarn_free(got);
	pool_destroy();
}

/* Names of every length 1..255 in one object; 256 is too long. */
static void
test_name_lengths(void)
{
	pool_create(1);
	uint64_t obj = new_zap(), v;
	char name[ZAP_MAXNAMELEN + 8];
	dmu_tx_t *tx = tx_begin(obj, 256);
	for (int len = 1; len < ZAP_MAXNAMELEN; len++) {
		for (int i = 0; i < len; i++)
			name[i] = (char)('a' + (len + i) % 26);
		name[len] = '\0';
		TT_OK(zap_add_int(g_os, obj, name, len, tx));
	}
	memset(name, 'z', ZAP_MAXNAMELEN);
	name[ZAP_MAXNAMELEN] = '\0';
	TT_EQ(zap_add_int(g_os, obj, name, 1, tx), ENAMETOOLONG);
	dmu_tx_commit(tx);
	TT_EQ(zap_lookup_int(g_os, obj, name, &v), ENAMETOOLONG);
	for (int len = 1; len < ZAP_MAXNAMELEN; len++) {
		for (int i = 0; i < len; i++)
			name[i] = (char)('a' + (len + i) % 26);
		name[len] = '\0';
		TT_OK(zap_lookup_int(g_os, obj, name, &v));
		TT_EQ(v, len);
	}
	/* The cursor returns each once with its full name. */
	bool seen[ZAP_MAXNAMELEN] = {false};
	zap_cursor_t zc;
	zap_attribute_t za;
	int n = 0;
	for (zap_cursor_init(&zc, g_os, obj, 0); zap_cursor_retrieve(&zc, &za) == 0;
	     zap_cursor_advance(&zc)) {
		TT_EQ(strlen(za.za_name), za.za_first_integer);
		TT_CHECK(!seen[za.za_first_integer]);
		seen[za.za_first_integer] = true;
		n++;
	}
	zap_cursor_fini(&zc);
	TT_EQ(n, ZAP_MAXNAMELEN - 1);
	pool_destroy();
}

static void
mname(char *buf, size_t sz, uint64_t i)
{
	snprintf(buf, sz, "file-%07" PRIu64, i);
}

/* A million entries: add, look up, count, remove half, walk. */
static void
test_million(void)
{
	const uint64_t N = 1000000, BATCH = 10000;
	pool_create(2);
	uint64_t obj = new_zap(), v, cnt;
	char name[32];
	uint64_t t0 = tarn_now_ns();
	for (uint64_t b = 0; b < N; b += BATCH) {
		dmu_tx_t *tx = tx_begin(obj, BATCH);
		for (uint64_t i = b; i < b + BATCH; i++) {
			mname(name, sizeof(name), i);
			int err = zap_add_int(g_os, obj, name, i, tx);
			if (err != 0)
				dmu_tx_commit(tx);
			TT_OK(err);
		}
		dmu_tx_commit(tx);
	}
	TT_OK(txg_wait_synced(dmu_objset_pool(g_os), 0));
	uint64_t t1 = tarn_now_ns();
	for (uint64_t i = 0; i < N; i++) {
		mname(name, sizeof(name), i);
		TT_OK(zap_lookup_int(g_os, obj, name, &v));
		TT_EQ(v, i);
	}
	uint64_t t2 = tarn_now_ns();
	TT_OK(zap_count(g_os, obj, &cnt));
	TT_EQ(cnt, N);
	for (uint64_t b = 0; b < N; b += 2 * BATCH) {
		dmu_tx_t *tx = tx_begin(obj, BATCH);
		for (uint64_t i = b; i < b + 2 * BATCH; i += 2) {
			mname(name, sizeof(name), i);
			int err = zap_remove(g_os, obj, name, tx);
			if (err != 0)
				dmu_tx_commit(tx);
			TT_OK(err);
		}
		dmu_tx_commit(tx);
	}
	TT_OK(txg_wait_synced(dmu_objset_pool(g_os), 0));
	uint64_t t3 = tarn_now_ns();
	TT_OK(zap_count(g_os, obj, &cnt));
	TT_EQ(cnt, N / 2);
	uint8_t *seen = tarn_alloc(N);
	zap_cursor_t zc;
	zap_attribute_t za;
	uint64_t n = 0, prev = 0;
	for (zap_cursor_init(&zc, g_os, obj, 0); zap_cursor_retrieve(&zc, &za) == 0;
	     zap_cursor_advance(&zc)) {
		uint64_t cookie = zap_cursor_serialize(&zc);
		TT_CHECK(n == 0 || cookie > prev);
		prev = cookie;
		TT_ASSERT(za.za_first_integer < N && za.za_first_integer % 2 == 1);
		mname(name, sizeof(name), za.za_first_integer);
		TT_CHECK(strcmp(name, za.za_name) == 0);
		TT_CHECK(seen[za.za_first_integer] == 0);
		seen[za.za_first_integer] = 1;
		n++;
	}
	TT_CHECK(zap_cursor_serialize(&zc) < (1ULL << 63));
	zap_cursor_fini(&zc);
	uint64_t t4 = tarn_now_ns();
	TT_EQ(n, N / 2);
	TT_EQ(zap_lookup_int(g_os, obj, "file-0000000", &v), ENOENT);
	dmu_object_info_t doi;
	TT_OK(dmu_object_info(g_os, obj, &doi));
	printf("  1M: add %.0f/s, lookup %.0f/s, remove %.0f/s, walk %.0f/s; "
	       "object %.1f MiB\n",
	    N / ((t1 - t0) / 1e9), N / ((t2 - t1) / 1e9), N / 2 / ((t3 - t2) / 1e9),
	    N / 2 / ((t4 - t3) / 1e9), doi.doi_max_offset / (double)MiB);
	tarn_free(seen);
	pool_destroy();
}

/*
 * Walk while other entries come and go between steps; the entries present
 * throughout are returned exactly once.  With `reinit`, every step starts
 * a new cursor from the serialized cookie (as readdir does).  Starts with
 * a micro ZAP that upgrades during the walk.
 */
static void
cursor_stability(bool reinit, uint64_t seed)
{
	pool_create(1);
	tarn_rand_t r;
	tarn_rand_seed(&r, seed);
	const uint64_t STABLE = 100, MAXV = 20000;
	uint64_t obj = new_zap();
	uint8_t *state = tarn_alloc(MAXV); /* 1 stable, 2 transient present */
	uint8_t *seen = tarn_alloc(MAXV);
	char name[32];
	dmu_tx_t *tx = tx_begin(obj, 2 * STABLE);
	for (uint64_t i = 0; i < 2 * STABLE; i++) {
		snprintf(name, sizeof(name), "n%" PRIu64, i);
		TT_OK(zap_add_int(g_os, obj, name, i, tx));
		state[i] = i < STABLE ? 1 : 2;
	}
	dmu_tx_commit(tx);
	TT_EQ(zap_magic(obj), ZAP_MICRO_MAGIC);
	uint64_t next = 2 * STABLE, steps = 0;
	zap_cursor_t zc;
	zap_attribute_t za;
	zap_cursor_init(&zc, g_os, obj, 0);
	for (;;) {
		int err = zap_cursor_retrieve(&zc, &za);
		if (err == ENOENT)
			break;
		TT_OK(err);
		uint64_t v = za.za_first_integer;
		TT_ASSERT(v < MAXV);
		TT_CHECK(state[v] != 0); /* never a removed entry */
		TT_CHECK(seen[v] == 0);	 /* never twice */
		seen[v]++;
		zap_cursor_advance(&zc);
		if (reinit) {
			uint64_t cookie = zap_cursor_serialize(&zc);
			zap_cursor_fini(&zc);
			zap_cursor_init(&zc, g_os, obj, cookie);
		}
		/* Change the object: add a few, remove a few transients. */
		tx = tx_begin(obj, 8);
		int adds = steps < 40 ? 12 : (int)tarn_rand_range(&r, 4);
		for (int k = 0; k < adds && next < MAXV; k++, next++) {
			snprintf(name, sizeof(name), "n%" PRIu64, next);
			TT_OK(zap_add_int(g_os, obj, name, next, tx));
			state[next] = 2;
		}
		for (int k = 0; k < 3; k++) {
			uint64_t x = tarn_rand_range(&r, next);
			if (state[x] != 2)
				continue;
			snprintf(name, sizeof(name), "n%" PRIu64, x);
			TT_OK(zap_remove(g_os, obj, name, tx));
			state[x] = 0;
		}
		dmu_tx_commit(tx);
		steps++;
	}
	zap_cursor_fini(&zc);
	TT_EQ(zap_magic(obj), ZAP_FAT_MAGIC);
	for (uint64_t i = 0; i < STABLE; i++)
		TT_EQ(seen[i], 1);
	TT_CHECK(steps > STABLE);
	tarn_free(state);
	tarn_free(seen);
	pool_destroy();
}

static void
test_cursor_stability(void)
{
	cursor_stability(false, 1);
}

static void
test_cursor_stability_reinit(void)
{
	cursor_stability(true, 2);
}

/* Every block of a fat ZAP validates; damage is caught. */
static void
validate_all_blocks(uint64_t obj)
{
	dmu_object_info_t doi;
	TT_OK(dmu_object_info(g_os, obj, &doi));
	uint32_t bs = doi.doi_data_block_size;
	uint8_t *buf = tarn_alloc(bs);
	int nvalid = 0;
	for (uint64_t off = 0; off < doi.doi_max_offset; off += bs) {
		TT_OK(dmu_read(g_os, obj, off, bs, buf));
		uint64_t m;
		memcpy(&m, buf, 8);
		if (m == 0)
			continue; /* a hole: a freed table run */
		TT_OK(zap_block_validate(buf, bs));
		nvalid++;
		for (int k = 0; k < 20; k++) {
			size_t at = (k * 7919 + off) % bs;
			buf[at] ^= 0x40;
			int err = zap_block_validate(buf, bs);
			buf[at] ^= 0x40;
			TT_CHECK(err == 0 || err == EINVAL);
		}
	}
	TT_CHECK(nvalid >= 1);
	tarn_free(buf);
}

static void
test_persistence(void)
{
	pool_create(2);
	uint64_t micro = new_zap(), fat = new_zap(), v;
	char name[64];
	uint8_t val[300];
	dmu_tx_t *tx = tx_begin(micro, 3000);
	for (int i = 0; i < 50; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		TT_OK(zap_add_int(g_os, micro, name, 1000 + i, tx));
	}
	for (int i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "fat-entry-%d", i);
		fill_pattern(val, sizeof(val), i);
		TT_OK(zap_add(g_os, fat, name, 1, 1 + i % 300, val, tx));
	}
	dmu_tx_commit(tx);
	validate_all_blocks(micro);
	validate_all_blocks(fat);
	pool_reopen();
	uint64_t cnt;
	TT_OK(zap_count(g_os, micro, &cnt));
	TT_EQ(cnt, 50);
	TT_OK(zap_count(g_os, fat, &cnt));
	TT_EQ(cnt, 3000);
	for (int i = 0; i < 50; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		TT_OK(zap_lookup_int(g_os, micro, name, &v));
		TT_EQ(v, 1000 + i);
	}
	uint8_t got[300], want[300];
	for (int i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "fat-entry-%d", i);
		fill_pattern(want, sizeof(want), i);
		TT_OK(zap_lookup(g_os, fat, name, 1, sizeof(got), got));
		TT_CHECK(memcmp(got, want, 1 + i % 300) == 0);
	}
	validate_all_blocks(micro);
	validate_all_blocks(fat);
	/* Still writable after reopen. */
	tx = tx_begin(fat, 2);
	TT_OK(zap_remove(g_os, fat, "fat-entry-7", tx));
	TT_OK(zap_add_int(g_os, micro, "after", 5, tx));
	dmu_tx_commit(tx);
	pool_reopen();
	TT_EQ(zap_lookup(g_os, fat, "fat-entry-7", 1, 300, got), ENOENT);
	TT_OK(zap_lookup_int(g_os, micro, "after", &v));
	TT_EQ(v, 5);
	tx = tx_begin(fat, 1);
	TT_OK(zap_destroy(g_os, fat, tx));
	dmu_tx_commit(tx);
	TT_EQ(zap_count(g_os, fat, &cnt), ENOENT);
	pool_destroy();
}

/* Garbage written into a ZAP's blocks gives errors, never a crash. */
static void
test_damage(void)
{
	pool_create(1);
	uint64_t fat = new_zap(), micro = new_zap(), v;
	char name[32];
	dmu_tx_t *tx = tx_begin(fat, 2000);
	for (int i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		TT_OK(zap_add_int(g_os, fat, name, i, tx));
	}
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		TT_OK(zap_add_int(g_os, micro, name, i, tx));
	}
	dmu_tx_commit(tx);
	tarn_rand_t r;
	tarn_rand_seed(&r, 7);
	uint8_t junk[64];
	int errors = 0;
	for (int round = 0; round < 60; round++) {
		uint64_t obj = round % 3 == 0 ? micro : fat;
		dmu_object_info_t doi;
		TT_OK(dmu_object_info(g_os, obj, &doi));
		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = (uint8_t)tarn_rand_u64(&r);
		uint64_t off = tarn_rand_range(&r, doi.doi_max_offset - sizeof(junk));
		tx = tx_begin(obj, 4);
		TT_OK(dmu_write(g_os, obj, off, 1 + tarn_rand_range(&r, sizeof(junk)), junk, tx));
		for (int i = 0; i < 40; i++) {
			snprintf(name, sizeof(name), "d%d", (int)tarn_rand_range(&r, 2100));
			int e1 = zap_lookup_int(g_os, obj, name, &v);
			int e2 = i % 4 == 0 ? zap_update_int(g_os, obj, name, 1, tx)
			    : i % 4 == 1    ? zap_remove(g_os, obj, name, tx)
					    : 0;
			errors += (e1 == EINVAL) + (e2 == EINVAL);
			TT_CHECK(e1 == 0 || e1 == ENOENT || e1 == EINVAL || e1 == EOVERFLOW);
		}
		dmu_tx_commit(tx);
		zap_cursor_t zc;
		zap_attribute_t za;
		int steps = 0;
		for (zap_cursor_init(&zc, g_os, obj, 0);
		     steps < 10000 && zap_cursor_retrieve(&zc, &za) == 0; zap_cursor_advance(&zc))
			steps++;
		zap_cursor_fini(&zc);
		TT_CHECK(steps < 10000);
		uint64_t cnt;
		(void)zap_count(g_os, obj, &cnt);
	}
	printf("  damage: %d operations saw EINVAL\n", errors);
	TT_CHECK(errors > 0);
	pool_destroy();
}

typedef struct thr_arg {
	uint64_t obj;
	int id, n;
	int err;
} thr_arg_t;

static void *
thr_main(void *p)
{
	thr_arg_t *a = p;
	char name[48];
	for (int b = 0; b < a->n && a->err == 0; b += 500) {
		dmu_tx_t *tx = dmu_tx_create(g_os);
		zap_tx_hold(tx, g_os, a->obj, 500);
		if ((a->err = dmu_tx_assign(tx, TXG_WAIT)) != 0) {
			dmu_tx_abort(tx);
			break;
		}
		for (int i = b; i < b + 500 && i < a->n && a->err == 0; i++) {
			snprintf(name, sizeof(name), "t%d-%d", a->id, i);
			a->err = zap_add_int(g_os, a->obj, name, (uint64_t)a->id << 32 | i, tx);
			if (a->err == 0 && i % 3 == 0)
				a->err = zap_remove(g_os, a->obj, name, tx);
		}
		dmu_tx_commit(tx);
	}
	return (NULL);
}

/* Threads on their own objects and on a shared one. */
static void
test_threads(void)
{
	pool_create(1);
	enum {
		NT = 6,
		PER = 6000
	};
	uint64_t shared = new_zap(), own[NT];
	pthread_t th[NT];
	thr_arg_t args[NT];
	for (int t = 0; t < NT; t++) {
		own[t] = new_zap();
		args[t] = (thr_arg_t){.obj = t < 3 ? own[t] : shared, .id = t, .n = PER};
		TT_OK(pthread_create(&th[t], NULL, thr_main, &args[t]));
	}
	for (int t = 0; t < NT; t++) {
		pthread_join(th[t], NULL);
		TT_OK(args[t].err);
	}
	uint64_t cnt, v;
	char name[48];
	for (int t = 0; t < NT; t++) {
		if (t < 3) {
			TT_OK(zap_count(g_os, own[t], &cnt));
			TT_EQ(cnt, PER - (PER + 2) / 3);
		}
		for (int i = 0; i < PER; i++) {
			snprintf(name, sizeof(name), "t%d-%d", t, i);
			int err = zap_lookup_int(g_os, args[t].obj, name, &v);
			if (i % 3 == 0) {
				TT_EQ(err, ENOENT);
			} else {
				TT_OK(err);
				TT_EQ(v, (uint64_t)t << 32 | i);
			}
		}
	}
	TT_OK(zap_count(g_os, shared, &cnt));
	TT_EQ(cnt, 3 * (PER - (PER + 2) / 3));
	pool_destroy();
}

typedef struct churn_arg {
	uint64_t obj;
	int stop; /* atomic */
	int err;
	uint64_t rounds; /* atomic */
} churn_arg_t;

/* Add and remove transient entries until told to stop. */
static void *
churn_main(void *p)
{
	churn_arg_t *a = p;
	char name[32];
	uint64_t next = 0;
	while (!__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE) && a->err == 0) {
		dmu_tx_t *tx = dmu_tx_create(g_os);
		zap_tx_hold(tx, g_os, a->obj, 40);
		if ((a->err = dmu_tx_assign(tx, TXG_WAIT)) != 0) {
			dmu_tx_abort(tx);
			break;
		}
		for (int i = 0; i < 20 && a->err == 0; i++, next++) {
			snprintf(name, sizeof(name), "t%" PRIu64, next);
			a->err = zap_add_int(g_os, a->obj, name, (1ULL << 40) | next, tx);
			if (a->err == 0 && next >= 500) {
				snprintf(name, sizeof(name), "t%" PRIu64, next - 500);
				a->err = zap_remove(g_os, a->obj, name, tx);
			}
		}
		dmu_tx_commit(tx);
		__atomic_add_fetch(&a->rounds, 1, __ATOMIC_RELEASE);
	}
	return (NULL);
}

/* Cursor walks in one thread while another thread changes the object. */
static void
test_cursor_concurrent(void)
{
	pool_create(1);
	const int STABLE = 3000;
	uint64_t obj = new_zap();
	char name[32];
	dmu_tx_t *tx = tx_begin(obj, STABLE);
	for (int i = 0; i < STABLE; i++) {
		snprintf(name, sizeof(name), "s%d", i);
		TT_OK(zap_add_int(g_os, obj, name, i, tx));
	}
	dmu_tx_commit(tx);
	churn_arg_t ca = {.obj = obj};
	pthread_t th;
	TT_OK(pthread_create(&th, NULL, churn_main, &ca));
	uint8_t *seen = tarn_alloc(STABLE);
	for (int walk = 0; walk < 6; walk++) {
		memset(seen, 0, STABLE);
		zap_cursor_t zc;
		zap_attribute_t za;
		int err;
		uint64_t cookie = 0, steps = 0;
		zap_cursor_init(&zc, g_os, obj, 0);
		while ((err = zap_cursor_retrieve(&zc, &za)) == 0) {
			TT_CHECK(zap_cursor_serialize(&zc) >= cookie);
			if (za.za_first_integer < (uint64_t)STABLE) {
				TT_CHECK(seen[za.za_first_integer] == 0);
				seen[za.za_first_integer] = 1;
			}
			zap_cursor_advance(&zc);
			cookie = zap_cursor_serialize(&zc);
			if (++steps % 64 == 0) {
				/* Let the writer change things under the cursor. */
				uint64_t r0 = __atomic_load_n(&ca.rounds, __ATOMIC_ACQUIRE);
				uint64_t t0 = tarn_now_ns();
				while (__atomic_load_n(&ca.rounds, __ATOMIC_ACQUIRE) == r0 &&
				    tarn_now_ns() - t0 < 2000000000ULL)
					usleep(100);
			}
		}
		zap_cursor_fini(&zc);
		TT_EQ(err, ENOENT);
		for (int i = 0; i < STABLE; i++)
			TT_EQ(seen[i], 1);
	}
	__atomic_store_n(&ca.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	TT_OK(ca.err);
	printf("  concurrent: %" PRIu64 " writer rounds during 6 walks\n", ca.rounds);
	tarn_free(seen);
	pool_destroy();
}

/* Create with a bonus buffer, claim a chosen number. */
static void
test_create_variants(void)
{
	pool_create(1);
	uint64_t obj, v;
	dmu_tx_t *tx = tx_begin(0, 2);
	TT_OK(zap_create_bonus(g_os, DMU_OT_DIRECTORY, DMU_OT_UINT64, 64, tx, &obj));
	TT_OK(zap_create_claim(g_os, 1000, DMU_OT_ZAP, tx));
	TT_EQ(zap_create_claim(g_os, 1000, DMU_OT_ZAP, tx), EEXIST);
	TT_OK(zap_add_int(g_os, obj, "x", 1, tx));
	TT_OK(zap_add_int(g_os, 1000, "y", 2, tx));
	dmu_tx_commit(tx);
	dmu_object_info_t doi;
	TT_OK(dmu_object_info(g_os, obj, &doi));
	TT_EQ(doi.doi_type, DMU_OT_DIRECTORY);
	TT_EQ(doi.doi_bonus_size, 64);
	TT_OK(zap_lookup_int(g_os, obj, "x", &v));
	TT_EQ(v, 1);
	TT_OK(zap_lookup_int(g_os, 1000, "y", &v));
	TT_EQ(v, 2);
	/* A non-ZAP object is rejected. */
	uint64_t plain;
	tx = tx_begin(0, 1);
	TT_OK(dmu_object_alloc(g_os, DMU_OT_UINT64, 4096, DMU_OT_NONE, 0, tx, &plain));
	TT_EQ(zap_add_int(g_os, plain, "z", 1, tx), EINVAL);
	dmu_tx_commit(tx);
	TT_EQ(zap_lookup_int(g_os, plain, "z", &v), EINVAL);
	pool_destroy();
}

/*
 * Lookups in a cold fat ZAP read the blocks they need and no others: the
 * header block is read again by every operation, which the DMU's
 * sequential-read detector once took for a stream and answered with
 * read-ahead of the whole object.
 */
static void
test_lookup_reads(void)
{
	pool_create(1);
	uint64_t obj = new_zap();
	char name[64];
	const int n = 40000;
	for (int i = 0; i < n; i += 1000) {
		dmu_tx_t *tx = tx_begin(obj, 1000);
		for (int j = i; j < i + 1000; j++) {
			snprintf(name, sizeof(name), "file-%d", j);
			TT_OK(zap_add_int(g_os, obj, name, (uint64_t)j, tx));
		}
		dmu_tx_commit(tx);
	}
	TT_EQ(zap_magic(obj), ZAP_FAT_MAGIC);
	dmu_object_info_t doi;
	TT_OK(dmu_object_info(g_os, obj, &doi));
	uint64_t nblocks = (doi.doi_max_offset + ZAP_FAT_BLKSZ - 1) / ZAP_FAT_BLKSZ;
	TT_CHECK(nblocks > 100);
	pool_reopen();
	zio_ctx_t *zc = dmu_pool_zio(spa_dmu_pool(g_spa));
	zio_stats_t st0, st1;
	zio_ctx_stats(zc, &st0);
	uint64_t v;
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "file-%d", i * 487);
		TT_OK(zap_lookup_int(g_os, obj, name, &v));
		TT_EQ(v, (uint64_t)i * 487);
	}
	dmu_objset_readahead_wait(g_os);
	zio_ctx_stats(zc, &st1);
	/* 40 leaves at most, the header, table and indirect blocks: far fewer than the object */
	TT_CHECK(st1.zs_reads - st0.zs_reads <= 40 + 8);
	pool_destroy();
}

TT_MAIN({"micro_basic", test_micro_basic}, {"micro_grow_upgrade", test_micro_grow_upgrade},
    {"upgrade_triggers", test_upgrade_triggers}, {"arrays", test_arrays},
    {"name_lengths", test_name_lengths}, {"create_variants", test_create_variants},
    {"cursor_stability", test_cursor_stability},
    {"cursor_stability_reinit", test_cursor_stability_reinit},
    {"cursor_concurrent", test_cursor_concurrent}, {"damage", test_damage},
    {"threads", test_threads}, {"persistence", test_persistence}, {"million", test_million},
    {"lookup_reads", test_lookup_reads}, )
