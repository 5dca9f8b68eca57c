/*
 * Label unit tests: config encode/decode round trips, rejection of
 * damaged or inconsistent configs (offsets from docs/FORMAT.md), labels
 * on real files (each damaged in turn, three of four, all four),
 * garbage devices, labelclear, and the uberblock ring (wrap-around,
 * newest first, foreign pools, torn slots).
 */
#include "vdev_tt.h"

/* docs/FORMAT.md "Label config" */
#define HDR 64
#define POOL_NREC (HDR + 328)
#define POOL_LEAF_GUID (HDR + 312)
#define POOL_TOP_GUID (HDR + 320)
#define POOL_STATE (HDR + 288)
#define POOL_RECSIZE (HDR + 332)
#define REC(i) (HDR + 512 + 128 * (i))

static uint64_t
label_off(uint64_t psize, int l)
{
	return (l < 2 ? (uint64_t)l * VDEV_LABEL_SIZE :
	    P2ALIGN(psize, VDEV_LABEL_SIZE) - (uint64_t)(4 - l) * VDEV_LABEL_SIZE);
}

/*
 * root: raidz2 of 5, mirror of (leaf, missing leaf), one leaf.
 * Records in order: 0 root, 1 raidz, 2..6 leaves, 7 mirror, 8 leaf,
 * 9 missing, 10 leaf.
 */
static vdev_t *
sample_tree(bool files)
{
	vdev_t *root = vdev_alloc(VDEV_TYPE_ROOT, 0);
	vdev_t *z = vdev_alloc(VDEV_TYPE_RAIDZ, 0);
	vdev_set_nparity(z, 2);
	vdev_set_ms_array(z, 77);
	vdev_set_ms_shift(z, 24);
	vdev_set_ms_count(z, 19);
	for (int i = 0; i < 5; i++) {
		vdev_t *l = files ? tt_leaf("lb", i, TT_DEV_SIZE) : vdev_alloc(VDEV_TYPE_FILE, 0);
		if (!files) {
			char p[64];
			snprintf(p, sizeof (p), "/dev/disk/by-id/wwn-%d", i);
			vdev_set_path(l, p);
			vdev_set_ashift(l, 12);
		}
		vdev_add_child(z, l);
	}
	vdev_t *m = vdev_alloc(VDEV_TYPE_MIRROR, 0);
	vdev_add_child(m, files ? tt_leaf("lb", 5, TT_DEV_SIZE) : vdev_alloc(VDEV_TYPE_DISK, 0));
	if (!files)
		vdev_set_path(vdev_child(m, 0), "/dev/sdq");
	vdev_t *miss = vdev_alloc(VDEV_TYPE_MISSING, 0);
	vdev_set_path(miss, "/old/place");
	vdev_add_child(m, miss);
	vdev_add_child(root, z);
	vdev_add_child(root, m);
	vdev_t *l = files ? tt_leaf("lb", 6, TT_DEV_SIZE) : vdev_alloc(VDEV_TYPE_FILE, 0);
	if (!files)
		vdev_set_path(l, "/tmp/x");
	if (files)
		vdev_set_offline_flag(vdev_child(z, 4), true);   /* a top cannot be offline */
	else
		vdev_set_offline_flag(l, true);
	vdev_set_asize(l, files ? 0 : 12345 * 512);
	vdev_add_child(root, l);
	return (root);
}

static void
sample_cfg(vdev_label_config_t *cfg, uint64_t txg)
{
	memset(cfg, 0, sizeof (*cfg));
	snprintf(cfg->vlc_name, sizeof (cfg->vlc_name), "tank");
	cfg->vlc_pool_guid = 0x1234567890abcdefULL;
	cfg->vlc_version = 1;
	cfg->vlc_features = 5;
	cfg->vlc_txg = txg;
	cfg->vlc_state = POOL_STATE_EXPORTED;
	cfg->vlc_hostid = 0xdeadbeef;
	cfg->vlc_create_time = 1700000000;
}

static void
same_tree(const vdev_t *a, const vdev_t *b)
{
	TT_EQ(vdev_type(a), vdev_type(b));
	TT_EQ(vdev_guid(a), vdev_guid(b));
	TT_EQ(vdev_id(a), vdev_id(b));
	TT_EQ(vdev_nparity(a), vdev_nparity(b));
	TT_EQ(vdev_ashift(a), vdev_ashift(b));
	TT_EQ(vdev_asize(a), vdev_asize(b));
	TT_EQ(vdev_ms_array(a), vdev_ms_array(b));
	TT_EQ(vdev_ms_shift(a), vdev_ms_shift(b));
	TT_EQ(vdev_ms_count(a), vdev_ms_count(b));
	TT_EQ(vdev_offline(a), vdev_offline(b));
	TT_EQ(vdev_guid_sum(a), vdev_guid_sum(b));
	TT_EQ(vdev_children(a), vdev_children(b));
	TT_EQ(vdev_path(a) == NULL, vdev_path(b) == NULL);
	if (vdev_path(a) != NULL)
		TT_CHECK(strcmp(vdev_path(a), vdev_path(b)) == 0);
	TT_EQ(vdev_state(b), VDEV_STATE_CLOSED);
	TT_EQ(vdev_fd(b), -1);
	for (int c = 0; c < vdev_children(a); c++) {
		TT_CHECK(vdev_parent(vdev_child(b, c)) == b);
		same_tree(vdev_child(a, c), vdev_child(b, c));
	}
}

static void
test_roundtrip(void)
{
	vdev_t *root = sample_tree(false);
	vdev_label_config_t cfg, out;
	sample_cfg(&cfg, 42);
	uint8_t *buf = tarn_alloc(VDEV_LABEL_CONFIG_SIZE);
	vdev_t *leaf = vdev_child(vdev_child(root, 0), 3);
	TT_OK(vdev_config_encode(&cfg, root, leaf, buf, VDEV_LABEL_CONFIG_SIZE));
	TT_OK(vdev_config_decode(buf, VDEV_LABEL_CONFIG_SIZE, &out));
	TT_CHECK(strcmp(out.vlc_name, "tank") == 0);
	TT_EQ(out.vlc_pool_guid, cfg.vlc_pool_guid);
	TT_EQ(out.vlc_version, 1);
	TT_EQ(out.vlc_features, 5);
	TT_EQ(out.vlc_txg, 42);
	TT_EQ(out.vlc_state, POOL_STATE_EXPORTED);
	TT_EQ(out.vlc_hostid, 0xdeadbeef);
	TT_EQ(out.vlc_create_time, 1700000000);
	TT_EQ(out.vlc_leaf_guid, vdev_guid(leaf));
	TT_EQ(out.vlc_top_guid, vdev_guid(vdev_child(root, 0)));
	same_tree(root, out.vlc_tree);
	TT_CHECK(vdev_ops(vdev_child(vdev_child(out.vlc_tree, 1), 1)) ==
	    vdev_ops(vdev_lookup_guid(out.vlc_tree,
	    vdev_guid(vdev_child(vdev_child(root, 1), 1)))));
	vdev_config_free(&out);
	TT_CHECK(out.vlc_tree == NULL);
	/* Without a leaf, the config's own leaf/top fields are stored. */
	cfg.vlc_leaf_guid = vdev_guid(vdev_child(root, 2));
	cfg.vlc_top_guid = vdev_guid(vdev_child(root, 2));
	TT_OK(vdev_config_encode(&cfg, root, NULL, buf, VDEV_LABEL_CONFIG_SIZE));
	TT_OK(vdev_config_decode(buf, VDEV_LABEL_CONFIG_SIZE, &out));
	TT_EQ(out.vlc_leaf_guid, cfg.vlc_leaf_guid);
	vdev_config_free(&out);
	/* Too small a buffer. */
	TT_EQ(vdev_config_encode(&cfg, root, NULL, buf, 1000), E2BIG);
	tarn_free(buf);
	vdev_free(root);
}

static void
test_too_many_for_label(void)
{
	vdev_t *root = vdev_alloc(VDEV_TYPE_ROOT, 0);
	char path[1100];
	memset(path, 'p', sizeof (path));
	path[0] = '/';
	path[1000] = '\0';
	for (int t = 0; t < 60; t++) {
		vdev_t *l = vdev_alloc(VDEV_TYPE_FILE, 0);
		vdev_set_path(l, path);
		vdev_add_child(root, l);
	}
	vdev_label_config_t cfg;
	sample_cfg(&cfg, 1);
	uint8_t *buf = tarn_alloc(VDEV_LABEL_CONFIG_SIZE);
	TT_EQ(vdev_config_encode(&cfg, root, NULL, buf, VDEV_LABEL_CONFIG_SIZE), E2BIG);
	/* A path longer than VDEV_PATH_MAX cannot be encoded at all. */
	path[1000] = 'p';
	path[1099] = '\0';
	vdev_free(root);
	root = vdev_alloc(VDEV_TYPE_ROOT, 0);
	vdev_t *l = vdev_alloc(VDEV_TYPE_FILE, 0);
	vdev_set_path(l, path);
	vdev_add_child(root, l);
	TT_EQ(vdev_config_encode(&cfg, root, NULL, buf, VDEV_LABEL_CONFIG_SIZE), EINVAL);
	tarn_free(buf);
	vdev_free(root);
}

static void
put32(uint8_t *b, size_t off, uint32_t v)
{
	memcpy(b + off, &v, 4);
}

static void
put64(uint8_t *b, size_t off, uint64_t v)
{
	memcpy(b + off, &v, 8);
}

static uint64_t
get64(const uint8_t *b, size_t off)
{
	uint64_t v;
	memcpy(&v, b + off, 8);
	return (v);
}

/* Each structural damage, resealed so it reaches the parser: EINVAL. */
static void
test_structural_damage(void)
{
	vdev_t *root = sample_tree(false);
	vdev_label_config_t cfg, out;
	sample_cfg(&cfg, 3);
	uint8_t *good = tarn_alloc(VDEV_LABEL_CONFIG_SIZE);
	uint8_t *b = tarn_alloc(VDEV_LABEL_CONFIG_SIZE);
	TT_OK(vdev_config_encode(&cfg, root, vdev_child(root, 2), good,
	    VDEV_LABEL_CONFIG_SIZE));
	enum { T = 48, PARENT = 52, NPAR = 56, ASHIFT = 60, NCH = 64, FLAGS = 68,
	    POFF = 72, PLEN = 76, ID = 8, GUID = 0, MS_SHIFT = 32 };
	struct { size_t off; int width; uint64_t val; } cases[] = {
		{ REC(0) + T, 4, VDEV_TYPE_MIRROR },
		{ REC(2) + PARENT, 4, 2 },
		{ REC(2) + PARENT, 4, 0xfffffff0 },
		{ REC(8) + PARENT, 4, 2 },             /* leaf under a leaf */
		{ REC(1) + PARENT, 4, 0xffffffff },
		{ REC(1) + NPAR, 4, 4 },
		{ REC(1) + NPAR, 4, 0 },
		{ REC(7) + NPAR, 4, 1 },
		{ REC(3) + T, 4, 77 },
		{ REC(3) + T, 4, VDEV_TYPE_ROOT },
		{ REC(7) + T, 4, VDEV_TYPE_FILE },     /* a leaf with children */
		{ REC(3) + PLEN, 4, 0 },
		{ REC(3) + PLEN, 4, 3 },               /* NUL not where it says */
		{ REC(3) + POFF, 4, 100000 },
		{ REC(3) + POFF, 4, 0xfffffff0 },
		{ REC(3) + PLEN, 4, 0xffffffff },
		{ REC(1) + PLEN, 4, 4 },               /* a path on a group */
		{ REC(3) + GUID, 8, 0 },
		{ REC(1) + NCH, 4, 4 },
		{ REC(1) + NCH, 4, 6 },
		{ REC(1) + NCH, 4, 300 },
		{ REC(4) + ID, 8, 0 },
		{ REC(3) + ASHIFT, 4, 7 },
		{ REC(3) + ASHIFT, 4, 40 },
		{ REC(3) + FLAGS, 4, 0x80 },
		{ REC(1) + MS_SHIFT, 8, 64 },
		{ POOL_NREC, 4, 0 },
		{ POOL_NREC, 4, 10 },
		{ POOL_NREC, 4, 12 },
		{ POOL_NREC, 4, 0x7fffffff },
		{ POOL_RECSIZE, 4, 64 },
		{ POOL_STATE, 8, 9 },
		{ POOL_LEAF_GUID, 8, 999 },
		{ POOL_TOP_GUID, 8, 999 },
		{ 28, 4, VDEV_LABEL_CONFIG_SIZE },      /* payload length */
		{ 28, 4, 100 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		memcpy(b, good, VDEV_LABEL_CONFIG_SIZE);
		if (cases[i].width == 4)
			put32(b, cases[i].off, (uint32_t)cases[i].val);
		else
			put64(b, cases[i].off, cases[i].val);
		vdev_config_seal(b, VDEV_LABEL_CONFIG_SIZE);
		int err = vdev_config_decode(b, VDEV_LABEL_CONFIG_SIZE, &out);
		if (err != EINVAL)
			fprintf(stderr, "  case %zu decoded with %d\n", i, err);
		TT_CHECK(err == EINVAL);
		TT_CHECK(out.vlc_tree == NULL);
	}
	/* Duplicate GUIDs; top guid naming a leaf; name without NUL. */
	memcpy(b, good, VDEV_LABEL_CONFIG_SIZE);
	put64(b, REC(5), get64(b, REC(4)));
	vdev_config_seal(b, VDEV_LABEL_CONFIG_SIZE);
	TT_EQ(vdev_config_decode(b, VDEV_LABEL_CONFIG_SIZE, &out), EINVAL);
	memcpy(b, good, VDEV_LABEL_CONFIG_SIZE);
	put64(b, POOL_TOP_GUID, get64(b, REC(4)));
	vdev_config_seal(b, VDEV_LABEL_CONFIG_SIZE);
	TT_EQ(vdev_config_decode(b, VDEV_LABEL_CONFIG_SIZE, &out), EINVAL);
	memcpy(b, good, VDEV_LABEL_CONFIG_SIZE);
	memset(b + HDR, 'x', 256);
	vdev_config_seal(b, VDEV_LABEL_CONFIG_SIZE);
	TT_EQ(vdev_config_decode(b, VDEV_LABEL_CONFIG_SIZE, &out), EINVAL);
	/* Unsealed damage fails the checksum; a newer version is refused. */
	memcpy(b, good, VDEV_LABEL_CONFIG_SIZE);
	b[REC(3) + 20] ^= 1;
	TT_EQ(vdev_config_decode(b, VDEV_LABEL_CONFIG_SIZE, &out), EINVAL);
	memcpy(b, good, VDEV_LABEL_CONFIG_SIZE);
	put32(b, 24, 2);
	vdev_config_seal(b, VDEV_LABEL_CONFIG_SIZE);
	TT_EQ(vdev_config_decode(b, VDEV_LABEL_CONFIG_SIZE, &out), ENOTSUP_FORMAT);
	/* The control: resealing an untouched config changes nothing. */
	memcpy(b, good, VDEV_LABEL_CONFIG_SIZE);
	vdev_config_seal(b, VDEV_LABEL_CONFIG_SIZE);
	TT_CHECK(memcmp(b, good, VDEV_LABEL_CONFIG_SIZE) == 0);
	TT_OK(vdev_config_decode(b, VDEV_LABEL_CONFIG_SIZE, &out));
	vdev_config_free(&out);
	/* Short buffers. */
	for (size_t len = 0; len < 700; len += 13)
		TT_EQ(vdev_config_decode(good, len, &out), EINVAL);

	/* Random damage, resealed: an answer, never a crash. */
	tarn_rand_t r;
	tarn_rand_seed(&r, 77);
	int decoded = 0;
	for (int i = 0; i < 3000; i++) {
		memcpy(b, good, VDEV_LABEL_CONFIG_SIZE);
		int nflips = 1 + (int)tarn_rand_range(&r, 4);
		for (int f = 0; f < nflips; f++)
			b[HDR + tarn_rand_range(&r, 512 + 11 * 128 + 200)] ^=
			    (uint8_t)(1 + tarn_rand_range(&r, 255));
		vdev_config_seal(b, VDEV_LABEL_CONFIG_SIZE);
		if (vdev_config_decode(b, VDEV_LABEL_CONFIG_SIZE, &out) == 0) {
			decoded++;
			vdev_config_free(&out);
		}
	}
	TT_CHECK(decoded > 0 && decoded < 3000);
	tarn_free(b);
	tarn_free(good);
	vdev_free(root);
}

static uberblock_t
make_ub(uint64_t pool, uint64_t txg)
{
	uberblock_t ub;
	memset(&ub, 0, sizeof (ub));
	ub.ub_magic = UBERBLOCK_MAGIC;
	ub.ub_version = 1;
	ub.ub_txg = txg;
	ub.ub_pool_guid = pool;
	ub.ub_timestamp = 1000 + txg;
	ub.ub_guid_sum = txg * 3;
	uberblock_seal(&ub);
	return (ub);
}

/* Overwrite the config area of label l on a file with junk. */
static void
damage_label(const char *path, int l, tarn_rand_t *r)
{
	uint8_t *junk = tarn_alloc(VDEV_LABEL_CONFIG_SIZE);
	tt_fill_random(r, junk, VDEV_LABEL_CONFIG_SIZE);
	int fd = open(path, O_WRONLY);
	TT_ASSERT(fd >= 0);
	off_t off = (off_t)(label_off(TT_DEV_SIZE, l) + VDEV_LABEL_CONFIG_OFF);
	TT_ASSERT(pwrite(fd, junk, VDEV_LABEL_CONFIG_SIZE, off) == VDEV_LABEL_CONFIG_SIZE);
	close(fd);
	tarn_free(junk);
}

static void
test_labels_on_files(void)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, 31);
	vdev_t *root = sample_tree(true);
	vdev_t *miss = vdev_child(vdev_child(root, 1), 1);
	TT_OK(vdev_open(root, false));
	TT_EQ(vdev_state(miss), VDEV_STATE_CANT_OPEN);
	TT_EQ(vdev_state(vdev_child(vdev_child(root, 0), 4)), VDEV_STATE_OFFLINE);
	vdev_label_config_t cfg, out;
	sample_cfg(&cfg, 9);
	TT_OK(vdev_label_write_all(root, &cfg, true));
	/* Every writable leaf: its own leaf guid, the whole tree. */
	vdev_t *z = vdev_child(root, 0);
	for (int i = 0; i < 4; i++) {
		TT_OK(vdev_label_read_path(vdev_path(vdev_child(z, i)), &out));
		TT_EQ(out.vlc_leaf_guid, vdev_guid(vdev_child(z, i)));
		TT_EQ(out.vlc_top_guid, vdev_guid(z));
		TT_EQ(out.vlc_txg, 9);
		TT_EQ(vdev_guid_sum(out.vlc_tree), vdev_guid_sum(root));
		vdev_config_free(&out);
	}
	/* The offline leaf got no label. */
	TT_EQ(vdev_label_read_path(vdev_path(vdev_child(z, 4)), &out), ENOENT);
	TT_OK(vdev_label_read_path(vdev_path(vdev_child(root, 2)), &out));
	TT_CHECK(vdev_offline(vdev_child(vdev_child(out.vlc_tree, 0), 4)));
	vdev_config_free(&out);

	const char *p = vdev_path(vdev_child(z, 1));
	vdev_close(root);
	for (int l = 0; l < 4; l++) {
		/* Three of four damaged: the survivor still answers. */
		sample_cfg(&cfg, 9);
		TT_OK(vdev_open(root, false));
		TT_OK(vdev_label_write_all(root, &cfg, false));
		vdev_close(root);
		damage_label(p, l, &r);
		TT_OK(vdev_label_read_path(p, &out));
		vdev_config_free(&out);
		for (int d = 0; d < 4; d++)
			if (d != (l + 1) % 4)
				damage_label(p, d, &r);
		TT_OK(vdev_label_read_path(p, &out));
		TT_EQ(out.vlc_txg, 9);
		vdev_config_free(&out);
	}
	/* All four gone: a device with no label at all... */
	for (int d = 0; d < 4; d++)
		damage_label(p, d, &r);
	TT_EQ(vdev_label_read_path(p, &out), ENOENT);
	TT_CHECK(out.vlc_tree == NULL);
	/* ...unless its rings show it was ours: then it is damaged. */
	TT_OK(vdev_open(root, false));
	uberblock_t ub = make_ub(cfg.vlc_pool_guid, 3);
	TT_OK(vdev_uberblock_write_all(root, &ub));
	vdev_close(root);
	TT_EQ(vdev_label_read_path(p, &out), EINVAL);
	TT_CHECK(out.vlc_tree == NULL);
	/* Labels whose magic survived but whose body did not: damaged too. */
	TT_OK(vdev_open(root, false));
	TT_OK(vdev_label_write_all(root, &cfg, true));
	vdev_close(root);
	for (int d = 0; d < 4; d++) {
		int fd = open(p, O_RDWR);
		uint8_t byte;
		off_t at = (off_t)(label_off(TT_DEV_SIZE, d) + VDEV_LABEL_CONFIG_OFF + 64 + 300);
		TT_ASSERT(pread(fd, &byte, 1, at) == 1);
		byte ^= 0x40;
		TT_ASSERT(pwrite(fd, &byte, 1, at) == 1);
		close(fd);
		int err = vdev_label_read_path(p, &out);
		TT_EQ(err, d < 3 ? 0 : EINVAL);
		vdev_config_free(&out);
	}

	/* The newest config among the labels wins. */
	TT_OK(vdev_open(root, false));
	TT_OK(vdev_label_write_all(root, &cfg, false));
	vdev_t *leaf = vdev_child(z, 1);
	uint8_t *buf = tarn_alloc(VDEV_LABEL_CONFIG_SIZE);
	sample_cfg(&cfg, 15);
	TT_OK(vdev_config_encode(&cfg, root, leaf, buf, VDEV_LABEL_CONFIG_SIZE));
	TT_OK(vdev_leaf_pwrite(leaf, buf, VDEV_LABEL_CONFIG_SIZE,
	    label_off(vdev_psize(leaf), 3) + VDEV_LABEL_CONFIG_OFF));
	TT_OK(vdev_label_read_path(p, &out));
	TT_EQ(out.vlc_txg, 15);
	vdev_config_free(&out);
	tarn_free(buf);

	/* labelclear: refused while the pool holds the device, then ENOENT. */
	TT_EQ(vdev_label_clear_path(p), EBUSY);
	vdev_close(root);
	TT_OK(vdev_label_clear_path(p));
	TT_EQ(vdev_label_read_path(p, &out), ENOENT);
	tt_unlink_leaves(root);
	vdev_free(root);
}

static void
test_garbage_devices(void)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, 41);
	vdev_label_config_t out;
	TT_EQ(vdev_label_read_path("/nonexistent/dev", &out), ENOENT);
	static const uint64_t sizes[] = { 0, 1000, 5 * MiB, 8 * MiB + 3000, 9 * MiB };
	uint8_t *junk = tarn_alloc(9 * MiB);
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		char *path = tt_dev("junk", (int)i, sizes[i]);
		TT_EQ(vdev_label_read_path(path, &out), ENOENT);   /* zeros */
		for (int round = 0; round < 3; round++) {
			tt_fill_random(&r, junk, sizes[i]);
			int fd = open(path, O_WRONLY);
			TT_ASSERT(fd >= 0);
			TT_ASSERT(pwrite(fd, junk, sizes[i], 0) == (ssize_t)sizes[i]);
			close(fd);
			TT_EQ(vdev_label_read_path(path, &out), ENOENT);
			TT_CHECK(out.vlc_tree == NULL);
		}
		(void) unlink(path);
		tarn_free(path);
	}
	tarn_free(junk);
}

static void
ring_case(uint64_t ashift, uint64_t nslots)
{
	vdev_t *root = tt_group_tree(VDEV_TYPE_RAIDZ, 1, 3, ashift, "ub");
	TT_OK(vdev_open(root, false));
	uint64_t pool = 0xabc, N = nslots + 10;
	uberblock_t *ubs = NULL;
	int n = -1;
	TT_OK(vdev_uberblock_collect(root, pool, &ubs, &n));
	TT_EQ(n, 0);
	tarn_free(ubs);
	for (uint64_t t = 1; t <= N; t++) {
		uberblock_t ub = make_ub(pool, t);
		TT_OK(vdev_uberblock_write_all(root, &ub));
	}
	/* A foreign pool's uberblock in one copy of an old slot. */
	uint64_t slot = MAX(1024, 1ULL << ashift);
	vdev_t *z = vdev_child(root, 0);
	uberblock_t other = make_ub(0xdef, N + 100);
	uint8_t *sl = tarn_alloc(slot);
	memcpy(sl, &other, sizeof (other));
	TT_OK(vdev_leaf_pwrite(vdev_child(z, 0), sl, slot, label_off(TT_DEV_SIZE, 0) +
	    VDEV_LABEL_RING_OFF + ((N - 5) % nslots) * slot));
	TT_OK(vdev_uberblock_collect(root, pool, &ubs, &n));
	TT_EQ(n, nslots);
	for (int i = 0; i < n; i++) {
		TT_EQ(ubs[i].ub_txg, N - (uint64_t)i);
		TT_CHECK(uberblock_verify(&ubs[i]));
	}
	tarn_free(ubs);
	TT_OK(vdev_uberblock_collect(root, 0xdef, &ubs, &n));
	TT_EQ(n, 1);
	TT_EQ(ubs[0].ub_txg, N + 100);
	tarn_free(ubs);

	/* Tear the newest slot everywhere: N - 1 is the newest then. */
	uint64_t where = VDEV_LABEL_RING_OFF + (N % nslots) * slot;
	uint8_t torn[200];
	memset(torn, 0x5a, sizeof (torn));
	for (int c = 0; c < 3; c++)
		for (int l = 0; l < 4; l++)
			TT_OK(vdev_leaf_pwrite(vdev_child(z, c), torn, sizeof (torn),
			    label_off(TT_DEV_SIZE, l) + where + 100));
	TT_OK(vdev_uberblock_collect(root, pool, &ubs, &n));
	TT_EQ(n, nslots - 1);
	TT_EQ(ubs[0].ub_txg, N - 1);
	tarn_free(ubs);
	/* Only one label of one leaf holding N again: it is found. */
	uberblock_t ub = make_ub(pool, N);
	memset(sl, 0, slot);
	memcpy(sl, &ub, sizeof (ub));
	TT_OK(vdev_leaf_pwrite(vdev_child(z, 1), sl, slot, label_off(TT_DEV_SIZE, 2) + where));
	tarn_free(sl);
	TT_OK(vdev_uberblock_collect(root, pool, &ubs, &n));
	TT_EQ(n, nslots);
	TT_EQ(ubs[0].ub_txg, N);
	tarn_free(ubs);
	/* A device that cannot be read contributes nothing. */
	TT_OK(vdev_set_offline(vdev_child(z, 1), true));
	TT_OK(vdev_uberblock_collect(root, pool, &ubs, &n));
	TT_EQ(ubs[0].ub_txg, N - 1);
	tarn_free(ubs);
	tt_unlink_leaves(root);
	vdev_free(root);
}

static void
test_uberblock_ring(void)
{
	ring_case(9, VDEV_LABEL_RING_SIZE / 1024);
	ring_case(12, VDEV_LABEL_RING_SIZE / 4096);
	ring_case(13, VDEV_LABEL_RING_SIZE / 8192);
}

/* Rings survive a config rewrite unless wiped; all leaves get a copy. */
static void
test_rings_kept_or_wiped(void)
{
	vdev_t *root = tt_group_tree(VDEV_TYPE_MIRROR, 0, 2, 0, "rk");
	TT_OK(vdev_open(root, false));
	vdev_label_config_t cfg;
	sample_cfg(&cfg, 1);
	TT_OK(vdev_label_write_all(root, &cfg, true));
	uberblock_t ub = make_ub(cfg.vlc_pool_guid, 4), *ubs;
	int n;
	TT_OK(vdev_uberblock_write_all(root, &ub));
	TT_OK(vdev_label_write_all(root, &cfg, false));
	TT_OK(vdev_uberblock_collect(root, cfg.vlc_pool_guid, &ubs, &n));
	TT_EQ(n, 1);
	tarn_free(ubs);
	TT_OK(vdev_label_write_all(root, &cfg, true));
	TT_OK(vdev_uberblock_collect(root, cfg.vlc_pool_guid, &ubs, &n));
	TT_EQ(n, 0);
	tarn_free(ubs);
	/* Read-only: nothing can be written. */
	vdev_close(root);
	TT_OK(vdev_open(root, true));
	TT_EQ(vdev_uberblock_write_all(root, &ub), EIO);
	TT_EQ(vdev_label_write_all(root, &cfg, false), EIO);
	tt_unlink_leaves(root);
	vdev_free(root);
}

static void
test_cleanup(void)
{
	tt_tmpdir_cleanup();
}

/*
 * Allocation classes in the config: a log leaf, a special mirror and a
 * hole among the top-level vdevs, two cache devices and a spare after
 * them; a cache device's own label; and the damage a decoder refuses.
 */
static void
test_classes_roundtrip(void)
{
	vdev_t *root = sample_tree(false);      /* raidz2, mirror, leaf: records 0..9 */
	vdev_set_alloc_bias(vdev_child(root, 2), VDEV_BIAS_LOG);
	vdev_t *sm = vdev_alloc(VDEV_TYPE_MIRROR, 0);
	for (int i = 0; i < 2; i++) {
		vdev_t *l = vdev_alloc(VDEV_TYPE_FILE, 0);
		vdev_set_path(l, i ? "/dev/special1" : "/dev/special0");
		vdev_add_child(sm, l);
	}
	vdev_set_alloc_bias(sm, VDEV_BIAS_SPECIAL);
	vdev_add_child(root, sm);                 /* records 10..12 */
	vdev_add_child(root, vdev_alloc(VDEV_TYPE_HOLE, 0));   /* child 4 */
	vdev_add_child(root, vdev_alloc(VDEV_TYPE_FILE, 0));   /* a data vdev after it */
	vdev_set_path(vdev_child(root, 5), "/dev/data");
	vdev_t *l2 = vdev_alloc(VDEV_TYPE_ROOT, 0), *sp = vdev_alloc(VDEV_TYPE_ROOT, 0);
	for (int i = 0; i < 2; i++) {
		vdev_t *c = vdev_alloc(VDEV_TYPE_FILE, 0);
		vdev_set_path(c, i ? "/dev/cache1" : "/dev/cache0");
		vdev_add_child(l2, c);
	}
	vdev_t *s = vdev_alloc(VDEV_TYPE_FILE, 0);
	vdev_set_path(s, "/dev/spare");
	vdev_add_child(sp, s);
	vdev_set_l2cache(root, l2);
	vdev_set_spares(root, sp);
	vdev_label_config_t cfg, out;
	sample_cfg(&cfg, 9);
	cfg.vlc_state = POOL_STATE_L2CACHE;
	uint8_t *buf = tarn_alloc(VDEV_LABEL_CONFIG_SIZE), *b = tarn_alloc(VDEV_LABEL_CONFIG_SIZE);
	TT_OK(vdev_config_encode(&cfg, root, vdev_child(l2, 1), buf, VDEV_LABEL_CONFIG_SIZE));
	TT_OK(vdev_config_decode(buf, VDEV_LABEL_CONFIG_SIZE, &out));
	TT_EQ(out.vlc_state, POOL_STATE_L2CACHE);
	TT_EQ(out.vlc_leaf_guid, vdev_guid(vdev_child(l2, 1)));
	TT_EQ(out.vlc_top_guid, 0);
	vdev_t *t = out.vlc_tree;
	TT_EQ(vdev_children(t), 6);
	TT_EQ(vdev_alloc_bias(vdev_child(t, 0)), VDEV_BIAS_NORMAL);
	TT_EQ(vdev_alloc_bias(vdev_child(t, 2)), VDEV_BIAS_LOG);
	TT_EQ(vdev_alloc_bias(vdev_child(t, 3)), VDEV_BIAS_SPECIAL);
	TT_EQ(vdev_alloc_bias(vdev_child(vdev_child(t, 3), 1)), VDEV_BIAS_SPECIAL);
	TT_CHECK(vdev_is_hole(vdev_child(t, 4)));
	TT_EQ(vdev_children(vdev_child(t, 4)), 0);
	TT_EQ(vdev_type(vdev_child(t, 5)), VDEV_TYPE_FILE);
	TT_EQ(vdev_id(vdev_child(t, 5)), 5);
	TT_ASSERT(vdev_l2cache(t) != NULL && vdev_spares(t) != NULL);
	TT_EQ(vdev_children(vdev_l2cache(t)), 2);
	TT_CHECK(strcmp(vdev_path(vdev_child(vdev_l2cache(t), 1)), "/dev/cache1") == 0);
	TT_EQ(vdev_guid(vdev_child(vdev_l2cache(t), 0)), vdev_guid(vdev_child(l2, 0)));
	TT_EQ(vdev_children(vdev_spares(t)), 1);
	TT_EQ(vdev_guid_sum(t), vdev_guid_sum(root));
	vdev_config_free(&out);
	vdev_free(root);

	/* a small tree for the damage cases: a hole between two leaves */
	root = vdev_alloc(VDEV_TYPE_ROOT, 0);
	for (int i = 0; i < 3; i++) {
		vdev_t *v = vdev_alloc(i == 1 ? VDEV_TYPE_HOLE : VDEV_TYPE_FILE, 0);
		if (i != 1)
			vdev_set_path(v, i ? "/dev/b" : "/dev/a");
		vdev_add_child(root, v);
	}
	vdev_set_alloc_bias(vdev_child(root, 2), VDEV_BIAS_LOG);
	l2 = vdev_alloc(VDEV_TYPE_ROOT, 0);
	vdev_add_child(l2, vdev_alloc(VDEV_TYPE_FILE, 0));
	vdev_set_path(vdev_child(l2, 0), "/dev/c");
	vdev_set_l2cache(root, l2);
	sample_cfg(&cfg, 10);
	TT_OK(vdev_config_encode(&cfg, root, vdev_child(root, 0), buf, VDEV_LABEL_CONFIG_SIZE));
	TT_OK(vdev_config_decode(buf, VDEV_LABEL_CONFIG_SIZE, &out));
	TT_CHECK(vdev_is_hole(vdev_child(out.vlc_tree, 1)));
	TT_EQ(vdev_alloc_bias(vdev_child(out.vlc_tree, 2)), VDEV_BIAS_LOG);
	TT_EQ(vdev_id(vdev_child(out.vlc_tree, 2)), 2);
	vdev_config_free(&out);
	/* records: 0 root, 1 a, 2 hole, 3 b (log), 4 cache c */
	enum { T = 48, PARENT = 52, NCH = 64, FLAGS = 68, PLEN = 76 };
	struct { size_t off; int width; uint64_t val; } cases[] = {
		{ REC(3) + FLAGS, 4, 0x8 | 0x10 },     /* log and special */
		{ REC(0) + FLAGS, 4, 0x8 },            /* a class on the root */
		{ REC(4) + FLAGS, 4, 0x20 | 0x8 },     /* a classed cache device */
		{ REC(4) + FLAGS, 4, 0x20 | 0x2 },     /* cache and spare */
		{ REC(2) + FLAGS, 4, 0x8 },            /* a classed hole */
		{ REC(2) + T, 4, VDEV_TYPE_MIRROR },   /* a group without children */
		{ REC(1) + T, 4, VDEV_TYPE_HOLE },     /* a hole with a path */
		{ REC(4) + T, 4, VDEV_TYPE_HOLE },     /* a cache hole */
		{ REC(1) + FLAGS, 4, 0x20 },           /* a cache device before top-levels */
		{ REC(4) + T, 4, 99 },
		{ POOL_STATE, 8, 5 },
	};
	TT_OK(vdev_config_encode(&cfg, root, vdev_child(root, 0), buf, VDEV_LABEL_CONFIG_SIZE));
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		memcpy(b, buf, VDEV_LABEL_CONFIG_SIZE);
		if (cases[i].width == 4)
			put32(b, cases[i].off, (uint32_t)cases[i].val);
		else
			put64(b, cases[i].off, cases[i].val);
		vdev_config_seal(b, VDEV_LABEL_CONFIG_SIZE);
		int err = vdev_config_decode(b, VDEV_LABEL_CONFIG_SIZE, &out);
		if (err != EINVAL)
			fprintf(stderr, "  case %zu decoded with %d\n", i, err);
		TT_EQ(err, EINVAL);
		if (err == 0)
			vdev_config_free(&out);
	}
	tarn_free(b);
	tarn_free(buf);
	vdev_free(root);
}

TT_MAIN(
	{ "roundtrip", test_roundtrip },
	{ "too_many_for_label", test_too_many_for_label },
	{ "structural_damage", test_structural_damage },
	{ "classes_roundtrip", test_classes_roundtrip },
	{ "labels_on_files", test_labels_on_files },
	{ "garbage_devices", test_garbage_devices },
	{ "uberblock_ring", test_uberblock_ring },
	{ "rings_kept_or_wiped", test_rings_kept_or_wiped },
	{ "cleanup", test_cleanup },
)
