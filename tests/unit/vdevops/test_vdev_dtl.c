/*
 * Unit tests of the vdev layer's device-lifecycle parts on file vdevs,
 * below the pool: missed txgs (a leaf is not read for blocks it missed,
 * a scrub read fills it, a last-resort read does not charge it), a
 * replacing pair inside a raidz, groups inserted and collapsed in place
 * at the top level, and the label config's spares, pairs and DTL fields
 * (round trip and the decoder's new rules).
 */
#include "vdev/vdev_tt.h"

#define BLK   (64 * KiB)
#define OFF   (1 * MiB)

static uint64_t
reads_of(const vdev_t *vd)
{
	return (vdev_stat(vd)->vs_ops[0]);
}

static bool
side_holds(const vdev_t *leaf, const uint8_t *data, uint64_t size, uint64_t off)
{
	uint8_t *b = tarn_alloc(size);
	tt_file_rw(vdev_path(leaf), false, b, size, off);
	bool ok = memcmp(b, data, size) == 0;
	tarn_free(b);
	return (ok);
}

static int
rd(vdev_t *top, void *buf, uint64_t txg, int flags, tt_ck_t *ck, uint64_t *repaired)
{
	vdev_io_t io = { .vio_offset = OFF, .vio_size = BLK, .vio_buf = buf,
		.vio_verify = tt_verify, .vio_verify_arg = ck, .vio_flags = flags,
		.vio_txg = txg };
	int e = vdev_read(top, &io);
	if (repaired != NULL)
		*repaired = io.vio_repaired;
	return (e);
}

static int
wr(vdev_t *top, const void *buf, uint64_t txg)
{
	vdev_io_t io = { .vio_offset = OFF, .vio_size = BLK, .vio_buf = (void *)buf,
		.vio_txg = txg };
	return (vdev_write(top, &io));
}

/* A mirror side that missed txg 5 is not read for it; a scrub fills it. */
static void
test_mirror_dtl(void)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, 1);
	static uint8_t data[BLK], buf[BLK];
	vdev_t *root = tt_group_tree(VDEV_TYPE_MIRROR, 0, 2, 0, "md");
	vdev_t *m = vdev_child(root, 0), *l0 = vdev_child(m, 0), *l1 = vdev_child(m, 1);
	TT_OK(vdev_open(root, false));
	TT_OK(vdev_set_offline(l1, true));
	tt_fill_random(&r, data, BLK);
	TT_OK(wr(m, data, 5));
	TT_EQ(vdev_dtl_txg(l1), 5);
	TT_EQ(vdev_dtl_last(l1), 5);
	TT_OK(vdev_set_offline(l1, false));
	vdev_propagate_state(vdev_parent(l1));
	TT_EQ(vdev_state(m), VDEV_STATE_DEGRADED);        /* it misses txg 5 */
	TT_CHECK(vdev_dtl_contains(l1, 5) && !vdev_dtl_contains(l1, 4) &&
	    !vdev_dtl_contains(l1, 6));
	tt_ck_t ck;
	tt_ck_set(&ck, data, BLK);
	uint64_t before = reads_of(l1);
	for (int i = 0; i < 8; i++)
		TT_OK(rd(m, buf, 5, 0, &ck, NULL));
	TT_EQ(reads_of(l1), before);                       /* never asked */
	/* l0 damaged too: the stale side is tried, uncharged, and fails */
	uint8_t junk[512];
	memset(junk, 0x5a, sizeof (junk));
	tt_file_rw(vdev_path(l0), true, junk, sizeof (junk), OFF);
	TT_EQ(rd(m, buf, 5, VDEV_IO_NOHEAL, &ck, NULL), ECKSUM);
	TT_EQ(tt_cksum_errors(l1), 0);
	TT_EQ(tt_cksum_errors(l0), 1);
	tt_file_rw(vdev_path(l0), true, data, BLK, OFF);  /* l0 good again */
	/* a scrub writes the block into the side that missed it */
	uint64_t rep = 0;
	TT_OK(rd(m, buf, 5, VDEV_IO_SCRUB, &ck, &rep));
	TT_EQ(rep, BLK);
	TT_CHECK(side_holds(l1, data, BLK, OFF));
	TT_EQ(tt_cksum_errors(l1), 0);
	vdev_dtl_clear(l1);
	vdev_propagate_state(vdev_parent(l1));
	TT_EQ(vdev_state(m), VDEV_STATE_HEALTHY);
	vdev_close(root);
	tt_unlink_leaves(root);
	vdev_free(root);
}

/* raidz: a column that missed the txg is rebuilt, then filled by a scrub. */
static void
test_raidz_dtl(void)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, 2);
	static uint8_t data[BLK], buf[BLK];
	vdev_t *root = tt_group_tree(VDEV_TYPE_RAIDZ, 1, 4, 9, "zd");
	vdev_t *z = vdev_child(root, 0), *l2 = vdev_child(z, 2);
	TT_OK(vdev_open(root, false));
	TT_OK(vdev_set_offline(l2, true));
	tt_fill_random(&r, data, BLK);
	TT_OK(wr(z, data, 7));
	TT_OK(vdev_set_offline(l2, false));
	TT_CHECK(vdev_dtl_contains(l2, 7));
	tt_ck_t ck;
	tt_ck_set(&ck, data, BLK);
	uint64_t before = reads_of(l2);
	TT_OK(rd(z, buf, 7, 0, &ck, NULL));
	TT_CHECK(memcmp(buf, data, BLK) == 0);
	TT_EQ(reads_of(l2), before);
	uint64_t rep = 0;
	TT_OK(rd(z, buf, 7, VDEV_IO_SCRUB, &ck, &rep));
	TT_CHECK(rep > 0);
	TT_EQ(tt_cksum_errors(l2), 0);
	vdev_dtl_clear(l2);
	/* now l2 must hold its column: read with another child gone */
	TT_OK(vdev_set_offline(vdev_child(z, 0), true));
	TT_OK(rd(z, buf, 7, 0, &ck, NULL));
	TT_CHECK(memcmp(buf, data, BLK) == 0);
	vdev_close(root);
	tt_unlink_leaves(root);
	vdev_free(root);
}

/* A replacing pair inside a raidz: old serves, new is filled, then swaps in. */
static void
test_nested_replacing(void)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, 3);
	static uint8_t data[BLK], buf[BLK];
	vdev_t *root = tt_group_tree(VDEV_TYPE_RAIDZ, 1, 3, 9, "nr");
	vdev_t *z = vdev_child(root, 0);
	TT_OK(vdev_open(root, false));
	tt_fill_random(&r, data, BLK);
	TT_OK(wr(z, data, 2));
	vdev_t *old = vdev_child(z, 1);
	vdev_t *g = vdev_group_insert(&old, VDEV_TYPE_REPLACING);
	TT_CHECK(vdev_child(z, 1) == g && vdev_child(g, 0) == old);
	vdev_t *nw = tt_leaf("nr", 9, TT_DEV_SIZE);
	vdev_set_ashift(nw, vdev_ashift(old));
	TT_OK(vdev_ops(nw)->vop_open(nw));
	vdev_set_state(nw, VDEV_STATE_HEALTHY);
	vdev_dtl_mark(nw, 1);
	vdev_dtl_mark(nw, 3);
	vdev_add_child(g, nw);
	vdev_propagate_state(g);
	TT_EQ(vdev_state(g), VDEV_STATE_DEGRADED);
	TT_EQ(vdev_state(z), VDEV_STATE_DEGRADED);
	TT_EQ(vdev_guid_sum(root), vdev_guid_sum(z) + vdev_guid(root));
	tt_ck_t ck;
	tt_ck_set(&ck, data, BLK);
	TT_OK(rd(z, buf, 2, 0, &ck, NULL));
	TT_EQ(reads_of(nw), 0);
	uint64_t rep = 0;
	TT_OK(rd(z, buf, 2, VDEV_IO_SCRUB, &ck, &rep));
	TT_CHECK(rep > 0);
	TT_CHECK(vdev_stat(nw)->vs_repaired_bytes > 0);
	/* writes reach both sides of the pair */
	TT_OK(wr(z, data, 4));
	vdev_dtl_clear(nw);
	vdev_leaf_remove(old);
	TT_CHECK(vdev_group_collapse(g) == nw);
	TT_CHECK(vdev_child(z, 1) == nw && vdev_parent(nw) == z && vdev_id(nw) == 1);
	vdev_propagate_state(vdev_parent(nw));
	TT_EQ(vdev_state(z), VDEV_STATE_HEALTHY);
	TT_OK(vdev_set_offline(vdev_child(z, 0), true));
	TT_OK(rd(z, buf, 2, 0, &ck, NULL));
	TT_CHECK(memcmp(buf, data, BLK) == 0);
	vdev_close(root);
	tt_unlink_leaves(root);
	vdev_free(root);
}

/* At the top level a group is made and undone in place. */
static void
test_top_in_place(void)
{
	vdev_t *root = vdev_alloc(VDEV_TYPE_ROOT, 0);
	vdev_t *t = tt_leaf("tp", 0, TT_DEV_SIZE);
	vdev_add_child(root, t);
	TT_OK(vdev_open(root, false));
	uint64_t guid = vdev_guid(t), asize = vdev_asize(t), ashift = vdev_ashift(t);
	vdev_t *leaf = t;
	vdev_t *g = vdev_group_insert(&leaf, VDEV_TYPE_MIRROR);
	TT_CHECK(g == t && leaf != t);
	TT_EQ(vdev_type(g), VDEV_TYPE_MIRROR);
	TT_CHECK(vdev_guid(g) != guid);
	TT_EQ(vdev_guid(leaf), guid);
	TT_EQ(vdev_asize(g), asize);
	TT_EQ(vdev_ashift(g), ashift);
	TT_CHECK(vdev_leaf_ready(leaf) && vdev_top(leaf) == g && vdev_top(g) == g);
	TT_EQ(vdev_psize_to_asize(g, 1000), P2ROUNDUP(1000, 1ULL << ashift));
	vdev_t *l2 = tt_leaf("tp", 1, TT_DEV_SIZE);
	TT_OK(vdev_ops(l2)->vop_open(l2));
	vdev_set_state(l2, VDEV_STATE_HEALTHY);
	vdev_add_child(g, l2);
	vdev_propagate_state(g);
	TT_EQ(vdev_state(root), VDEV_STATE_HEALTHY);
	TT_CHECK(vdev_dtl_required(leaf) == false);
	uint64_t g2 = vdev_guid(l2);
	char *p0 = tarn_strdup(vdev_path(leaf));
	vdev_leaf_remove(leaf);
	TT_CHECK(vdev_dtl_required(l2));
	TT_CHECK(vdev_group_collapse(g) == t);
	TT_EQ(vdev_guid(t), g2);
	TT_CHECK(vdev_ops(t)->vop_leaf && vdev_leaf_ready(t));
	TT_EQ(vdev_asize(t), asize);
	TT_EQ(vdev_guid_sum(root), vdev_guid(root) + g2);
	unlink(p0);
	tarn_free(p0);
	vdev_close(root);
	tt_unlink_leaves(root);
	vdev_free(root);
}

/* ---- the label config's new parts ---- */

#define HDR     64
#define REC(i)  (HDR + 512 + 128 * (size_t)(i))

static uint64_t
get64(const uint8_t *b, size_t off)
{
	uint64_t v;
	memcpy(&v, b + off, 8);
	return (v);
}

static void
put64(uint8_t *b, size_t off, uint64_t v)
{
	memcpy(b + off, &v, 8);
}

static void
put32(uint8_t *b, size_t off, uint32_t v)
{
	memcpy(b + off, &v, 4);
}

static vdev_t *
leafp(const char *p)
{
	vdev_t *l = vdev_alloc(VDEV_TYPE_FILE, 0);
	vdev_set_path(l, p);
	return (l);
}

/*
 * root: raidz1(a, replacing(b, b2), c), mirror(spare(d, s0), e);
 * spares s0 (in use), s1.  Records: 0 root, 1 raidz, 2 a, 3 replacing,
 * 4 b, 5 b2, 6 c, 7 mirror, 8 spare, 9 d, 10 s0, 11 e, 12 s0', 13 s1.
 */
static vdev_t *
lifecycle_tree(void)
{
	vdev_t *root = vdev_alloc(VDEV_TYPE_ROOT, 0);
	vdev_t *z = vdev_alloc(VDEV_TYPE_RAIDZ, 0);
	vdev_set_nparity(z, 1);
	vdev_add_child(z, leafp("/a"));
	vdev_t *b = leafp("/b");
	vdev_add_child(z, b);
	vdev_add_child(z, leafp("/c"));
	vdev_t *rp = vdev_group_insert(&b, VDEV_TYPE_REPLACING);
	vdev_t *b2 = leafp("/b2");
	vdev_dtl_mark(b2, 1);
	vdev_dtl_mark(b2, 40);
	vdev_add_child(rp, b2);
	vdev_add_child(root, z);
	vdev_t *m = vdev_alloc(VDEV_TYPE_MIRROR, 0);
	vdev_t *d = leafp("/d");
	vdev_add_child(m, d);
	vdev_add_child(m, leafp("/e"));
	vdev_t *sg = vdev_group_insert(&d, VDEV_TYPE_SPARE);
	vdev_set_spare_auto(sg, true);     /* put in by the pool, not by replace */
	vdev_set_spares(root, vdev_alloc(VDEV_TYPE_ROOT, 0));
	vdev_t *s0 = leafp("/s0");
	vdev_add_child(vdev_spares(root), s0);
	vdev_add_child(vdev_spares(root), leafp("/s1"));
	vdev_t *s0t = vdev_alloc(VDEV_TYPE_FILE, vdev_guid(s0));
	vdev_set_path(s0t, "/s0");
	vdev_add_child(sg, s0t);
	vdev_add_child(root, m);
	return (root);
}

static void
test_config_lifecycle(void)
{
	vdev_t *root = lifecycle_tree();
	vdev_label_config_t cfg, out;
	memset(&cfg, 0, sizeof (cfg));
	snprintf(cfg.vlc_name, sizeof (cfg.vlc_name), "tank");
	cfg.vlc_pool_guid = 42;
	cfg.vlc_txg = 9;
	uint8_t *good = tarn_alloc(VDEV_LABEL_CONFIG_SIZE);
	uint8_t *b = tarn_alloc(VDEV_LABEL_CONFIG_SIZE);
	vdev_t *b2 = vdev_child(vdev_child(vdev_child(root, 0), 1), 1);
	TT_OK(vdev_config_encode(&cfg, root, b2, good, VDEV_LABEL_CONFIG_SIZE));
	TT_OK(vdev_config_decode(good, VDEV_LABEL_CONFIG_SIZE, &out));
	vdev_t *t = out.vlc_tree;
	TT_EQ(vdev_children(t), 2);
	vdev_t *rp = vdev_child(vdev_child(t, 0), 1);
	TT_EQ(vdev_type(rp), VDEV_TYPE_REPLACING);
	TT_EQ(vdev_children(rp), 2);
	TT_EQ(vdev_dtl_txg(vdev_child(rp, 1)), 1);
	TT_EQ(vdev_dtl_last(vdev_child(rp, 1)), VDEV_DTL_OPEN);   /* closed: open end */
	TT_CHECK(vdev_dtl_empty(vdev_child(rp, 0)));
	TT_EQ(vdev_type(vdev_child(vdev_child(t, 1), 0)), VDEV_TYPE_SPARE);
	TT_CHECK(vdev_spare_auto(vdev_child(vdev_child(t, 1), 0)));
	TT_CHECK(!vdev_spare_auto(rp));
	TT_ASSERT(vdev_spares(t) != NULL);
	TT_EQ(vdev_children(vdev_spares(t)), 2);
	TT_EQ(vdev_guid(vdev_child(vdev_spares(t), 0)),
	    vdev_guid(vdev_child(vdev_child(vdev_child(t, 1), 0), 1)));
	TT_CHECK(strcmp(vdev_path(vdev_child(vdev_spares(t), 1)), "/s1") == 0);
	TT_EQ(out.vlc_leaf_guid, vdev_guid(b2));
	vdev_config_free(&out);
	/* a spare's own label names it and no top-level vdev */
	vdev_t *s1 = vdev_child(vdev_spares(root), 1);
	cfg.vlc_state = POOL_STATE_SPARE;
	TT_OK(vdev_config_encode(&cfg, root, s1, b, VDEV_LABEL_CONFIG_SIZE));
	TT_OK(vdev_config_decode(b, VDEV_LABEL_CONFIG_SIZE, &out));
	TT_EQ(out.vlc_leaf_guid, vdev_guid(s1));
	TT_EQ(out.vlc_top_guid, 0);
	TT_EQ(out.vlc_state, POOL_STATE_SPARE);
	vdev_config_free(&out);
	/* the decoder's new rules, each resealed so it reaches the parser */
	enum { T = 48, PARENT = 52, FLAGS = 68, D0 = 80, D1 = 88, GUID = 0 };
	struct { size_t off; int width; uint64_t val; } cases[] = {
		{ REC(2) + FLAGS, 4, 2 },              /* spare under a raidz */
		{ REC(0) + FLAGS, 4, 2 },              /* the root a spare */
		{ REC(1) + D0, 8, 3 },                 /* missed txgs on a group */
		{ REC(1) + D1, 8, 3 },
		{ REC(5) + D1, 8, 0 },                 /* last < first */
		{ REC(2) + D1, 8, 5 },                 /* last without first */
		{ REC(12) + T, 4, VDEV_TYPE_MIRROR },  /* a spare that is a group */
		{ REC(4) + T, 4, VDEV_TYPE_SPARE },    /* a pair as a leaf */
		{ REC(9) + PARENT, 4, 3 },             /* pair under a pair */
		{ REC(13) + GUID, 8, 0 },
		{ REC(3) + FLAGS, 4, 4 },              /* "returns by itself": a replacing */
		{ REC(9) + FLAGS, 4, 4 },              /* ... a leaf */
		{ REC(13) + FLAGS, 4, 6 },             /* ... a spare entry */
		{ REC(8) + FLAGS, 4, 8 },              /* an unknown flag */
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
	}
	/* two spares with one GUID; a top-level vdev after a spare */
	memcpy(b, good, VDEV_LABEL_CONFIG_SIZE);
	put64(b, REC(13) + GUID, get64(b, REC(12) + GUID));
	vdev_config_seal(b, VDEV_LABEL_CONFIG_SIZE);
	TT_EQ(vdev_config_decode(b, VDEV_LABEL_CONFIG_SIZE, &out), EINVAL);
	memcpy(b, good, VDEV_LABEL_CONFIG_SIZE);
	put32(b, REC(12) + FLAGS, 0);                   /* s0' is now a top-level */
	vdev_config_seal(b, VDEV_LABEL_CONFIG_SIZE);
	TT_EQ(vdev_config_decode(b, VDEV_LABEL_CONFIG_SIZE, &out), EINVAL);
	/* a spare group put in by replace: no flag, it stays until detach */
	memcpy(b, good, VDEV_LABEL_CONFIG_SIZE);
	put32(b, REC(8) + FLAGS, 0);
	vdev_config_seal(b, VDEV_LABEL_CONFIG_SIZE);
	TT_OK(vdev_config_decode(b, VDEV_LABEL_CONFIG_SIZE, &out));
	TT_EQ(vdev_type(vdev_child(vdev_child(out.vlc_tree, 1), 0)), VDEV_TYPE_SPARE);
	TT_CHECK(!vdev_spare_auto(vdev_child(vdev_child(out.vlc_tree, 1), 0)));
	vdev_config_free(&out);
	tarn_free(good);
	tarn_free(b);
	vdev_free(root);
}

static void
test_cleanup(void)
{
	tt_tmpdir_cleanup();
}

TT_MAIN(
	{ "mirror_dtl", test_mirror_dtl },
	{ "raidz_dtl", test_raidz_dtl },
	{ "nested_replacing", test_nested_replacing },
	{ "top_in_place", test_top_in_place },
	{ "config_lifecycle", test_config_lifecycle },
	{ "cleanup", test_cleanup },
)
