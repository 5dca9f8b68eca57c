/*
 * Unit tests of allocation classes and cache devices through a real pool
 * (lib/spa/spa_class.c): where the MOS, metadata, small and large blocks
 * land; the L2ARC hooks on add and remove; removing a log vdev in the
 * middle (a hole) and reopening; the refusals; a pool whose log device
 * is missing opens only with sio_missing_log (zpool import -m), DEGRADED,
 * syncs, and is healthy again once the lost log vdev is removed.
 */
#include "tt.h"
#include "tt_pool.h"
#include "dmu.h"

static tt_pool_devs_t devs;
static int hook_added, hook_removing;
static vdev_t *hook_leaf;

static void
on_added(void *arg, vdev_t *leaf)
{
	(void) arg;
	hook_added++;
	hook_leaf = leaf;
}

static void
on_removing(void *arg, vdev_t *leaf)
{
	(void) arg;
	hook_removing++;
	TT_CHECK(leaf == hook_leaf);
}

static const spa_l2cache_hooks_t hooks = { on_added, on_removing };

/* d0 data, d1 log, d2 + d3 special mirror, d4 cache; d5 a spare device. */
static spa_t *
make_pool(void)
{
	tt_pool_files(&devs, 6, 96 * MiB);
	char *argv[] = { devs.tpd_paths[0], "log", devs.tpd_paths[1], "special", "mirror",
		devs.tpd_paths[2], devs.tpd_paths[3], "cache", devs.tpd_paths[4] };
	char err[256];
	spa_vdev_spec_t *spec;
	TT_OK(spa_vdev_spec_parse((int)ARRAY_SIZE(argv), argv, &spec, err, sizeof (err)));
	spa_create_opts_t o;
	memset(&o, 0, sizeof (o));
	o.sco_no_cache = true;
	spa_t *spa = NULL;
	int e = spa_create("classes", spec, &o, &spa, err, sizeof (err));
	if (e != 0)
		fprintf(stderr, "  create: %s\n", err);
	TT_OK(e);
	spa_vdev_spec_free(spec);
	return (spa);
}

static uint64_t
class_alloc(spa_t *spa, vdev_alloc_bias_t bias)
{
	spa_space_t ss;
	spa_class_space(spa, bias, &ss);
	return (ss.ss_alloc);
}

/* Write len bytes in blocks of blksz to a new object; the txg synced. */
static void
write_obj(spa_t *spa, objset_t *os, uint64_t blksz, uint64_t len)
{
	uint8_t *buf = tarn_alloc(len);
	tt_fill(buf, len, blksz);
	uint64_t obj;
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_write(tx, 0, 0, len);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_object_alloc(os, DMU_OT_PLAIN_FILE, (uint32_t)blksz, DMU_OT_NONE, 0, tx,
	    &obj));
	TT_OK(dmu_write(os, obj, 0, len, buf, tx));
	dmu_tx_commit(tx);
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	tarn_free(buf);
}

static void
test_placement(void)
{
	spa_t *spa = make_pool();
	vdev_t *root = spa_root_vdev(spa);
	TT_EQ(vdev_children(root), 3);
	TT_EQ(vdev_alloc_bias(vdev_child(root, 0)), VDEV_BIAS_NORMAL);
	TT_EQ(vdev_alloc_bias(vdev_child(root, 1)), VDEV_BIAS_LOG);
	TT_EQ(vdev_alloc_bias(vdev_child(root, 2)), VDEV_BIAS_SPECIAL);
	TT_EQ(spa_l2cache_count(spa), 1);
	TT_CHECK(vdev_leaf_ready(spa_l2cache_leaf(spa, 0)));
	TT_CHECK(spa_features(spa) & SPA_FEATURE_ALLOCATION_CLASSES);
	/* the MOS is metadata: all of it on special, nothing on the data vdev */
	TT_EQ(class_alloc(spa, VDEV_BIAS_NORMAL), 0);
	TT_CHECK(class_alloc(spa, VDEV_BIAS_SPECIAL) > 0);
	TT_EQ(class_alloc(spa, VDEV_BIAS_LOG), 0);
	/* 8 MiB of 128K blocks go to the data vdev; 16K blocks with small blocks on to special */
	objset_t *os;
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	uint64_t n0 = class_alloc(spa, VDEV_BIAS_NORMAL), s0 = class_alloc(spa, VDEV_BIAS_SPECIAL);
	write_obj(spa, os, 128 * KiB, 8 * MiB);
	uint64_t n1 = class_alloc(spa, VDEV_BIAS_NORMAL), s1 = class_alloc(spa, VDEV_BIAS_SPECIAL);
	TT_CHECK(n1 - n0 >= 8 * MiB);
	TT_CHECK(s1 - s0 < 1 * MiB);            /* its indirect and dnode blocks */
	dmu_objset_props_t p = { .osp_checksum = ZIO_CHECKSUM_DEFAULT,
		.osp_compress = ZIO_COMPRESS_OFF, .osp_copies = 1,
		.osp_special_small = 16 * KiB };
	dmu_objset_set_props(os, &p);
	write_obj(spa, os, 16 * KiB, 2 * MiB);
	uint64_t n2 = class_alloc(spa, VDEV_BIAS_NORMAL), s2 = class_alloc(spa, VDEV_BIAS_SPECIAL);
	TT_CHECK(s2 - s1 >= 2 * MiB);
	TT_CHECK(n2 - n1 < 512 * KiB);
	/* the pool's data space is the normal class's */
	spa_space_t all, normal;
	spa_get_space(spa, &all);
	spa_class_space(spa, VDEV_BIAS_NORMAL, &normal);
	TT_EQ(all.ss_size, normal.ss_size);
	uint64_t blocks = 0, errors = 0;
	TT_OK(spa_verify_all(spa, true, &blocks, &errors));
	TT_EQ(errors, 0);
	spa_close(spa);
	tt_pool_files_remove(&devs);
}

static void
test_remove_and_reopen(void)
{
	spa_t *spa = make_pool();
	char err[256];
	spa_l2cache_set_hooks(spa, &hooks, NULL);
	hook_added = hook_removing = 0;
	/* a second cache device: the hook hears of it; removing it too */
	spa_vdev_spec_t *spec;
	char *argv[] = { "cache", devs.tpd_paths[5] };
	TT_OK(spa_vdev_spec_parse(2, argv, &spec, err, sizeof (err)));
	TT_OK(spa_vdev_add(spa, spec, false, err, sizeof (err)));
	spa_vdev_spec_free(spec);
	TT_EQ(hook_added, 1);
	TT_EQ(spa_l2cache_count(spa), 2);
	TT_CHECK(hook_leaf == spa_l2cache_leaf(spa, 1));
	TT_OK(spa_vdev_remove(spa, devs.tpd_paths[5], err, sizeof (err)));
	TT_EQ(hook_removing, 1);
	TT_EQ(spa_l2cache_count(spa), 1);
	/* refusals change nothing */
	TT_EQ(spa_vdev_remove(spa, devs.tpd_paths[0], err, sizeof (err)), ENOTSUP);
	TT_CHECK(strstr(err, "only log, cache and hot spare") != NULL);
	TT_EQ(spa_vdev_remove(spa, devs.tpd_paths[2], err, sizeof (err)), ENOTSUP);
	TT_CHECK(strstr(err, "special vdevs cannot be removed") != NULL);
	TT_EQ(spa_vdev_remove(spa, "nope", err, sizeof (err)), ENOENT);
	vdev_t *root = spa_root_vdev(spa);
	TT_EQ(vdev_children(root), 3);
	/* the log vdev (id 1, the special mirror after it): a hole keeps id 2 */
	uint64_t special_guid = vdev_guid(vdev_child(root, 2));
	TT_OK(spa_vdev_remove(spa, devs.tpd_paths[1], err, sizeof (err)));
	TT_EQ(vdev_children(root), 3);
	TT_CHECK(vdev_is_hole(vdev_child(root, 1)));
	TT_EQ(vdev_guid(vdev_child(root, 2)), special_guid);
	TT_EQ(vdev_state(root), VDEV_STATE_HEALTHY);
	/* a new log vdev goes after the hole; the removed device has no label */
	vdev_label_config_t cfg;
	TT_EQ(vdev_label_read_path(devs.tpd_paths[1], &cfg), ENOENT);
	char *argv2[] = { "log", devs.tpd_paths[5] };
	TT_OK(spa_vdev_spec_parse(2, argv2, &spec, err, sizeof (err)));
	TT_OK(spa_vdev_add(spa, spec, false, err, sizeof (err)));
	spa_vdev_spec_free(spec);
	TT_EQ(vdev_children(root), 4);
	TT_EQ(vdev_alloc_bias(vdev_child(root, 3)), VDEV_BIAS_LOG);
	spa_close(spa);

	/* reopen from the devices: the hole, the classes and the cache device */
	const char *paths[] = { devs.tpd_paths[0], devs.tpd_paths[2], devs.tpd_paths[3],
		devs.tpd_paths[4], devs.tpd_paths[5] };
	spa_import_opts_t o;
	memset(&o, 0, sizeof (o));
	o.sio_no_cache = true;
	TT_OK(spa_open_paths(paths, 5, &o, &spa, err, sizeof (err)));
	root = spa_root_vdev(spa);
	TT_EQ(vdev_children(root), 4);
	TT_CHECK(vdev_is_hole(vdev_child(root, 1)));
	TT_EQ(vdev_alloc_bias(vdev_child(root, 2)), VDEV_BIAS_SPECIAL);
	TT_EQ(vdev_alloc_bias(vdev_child(root, 3)), VDEV_BIAS_LOG);
	TT_EQ(spa_l2cache_count(spa), 1);
	TT_CHECK(vdev_leaf_ready(spa_l2cache_leaf(spa, 0)));
	TT_EQ(vdev_state(root), VDEV_STATE_HEALTHY);
	uint64_t blocks = 0, errors = 0;
	TT_OK(spa_verify_all(spa, true, &blocks, &errors));
	TT_EQ(errors, 0);
	spa_close(spa);
	tt_pool_files_remove(&devs);
}

static void
test_missing_log(void)
{
	spa_t *spa = make_pool();
	char err[512];
	spa_close(spa);
	/* every device but the log (d1) */
	const char *paths[] = { devs.tpd_paths[0], devs.tpd_paths[2], devs.tpd_paths[3],
		devs.tpd_paths[4] };
	spa_import_opts_t o;
	memset(&o, 0, sizeof (o));
	o.sio_no_cache = true;
	TT_EQ(spa_open_paths(paths, 4, &o, &spa, err, sizeof (err)), ENXIO);
	TT_CHECK(strstr(err, devs.tpd_paths[1]) != NULL);
	TT_CHECK(strstr(err, "use '-m'") != NULL);
	o.sio_missing_log = true;
	TT_OK(spa_open_paths(paths, 4, &o, &spa, err, sizeof (err)));
	vdev_t *root = spa_root_vdev(spa);
	TT_EQ(vdev_state(root), VDEV_STATE_DEGRADED);
	TT_CHECK(vdev_is_dead_log(vdev_child(root, 1)));
	TT_CHECK(!vdev_is_dead_log(vdev_child(root, 0)));
	/* txgs sync (labels, flushes) without the log vdev */
	objset_t *os;
	TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	write_obj(spa, os, 128 * KiB, 1 * MiB);
	TT_OK(spa_vdev_remove(spa, devs.tpd_paths[1], err, sizeof (err)));
	TT_EQ(vdev_state(root), VDEV_STATE_HEALTHY);
	uint64_t blocks = 0, errors = 0;
	TT_OK(spa_verify_all(spa, true, &blocks, &errors));
	TT_EQ(errors, 0);
	spa_close(spa);
	/* no log vdev left: it opens without -m */
	o.sio_missing_log = false;
	TT_OK(spa_open_paths(paths, 4, &o, &spa, err, sizeof (err)));
	TT_EQ(vdev_state(spa_root_vdev(spa)), VDEV_STATE_HEALTHY);
	spa_close(spa);
	/* a missing data device is not covered by -m */
	const char *nodata[] = { devs.tpd_paths[2], devs.tpd_paths[3], devs.tpd_paths[4] };
	o.sio_missing_log = true;
	TT_EQ(spa_open_paths(nodata, 3, &o, &spa, err, sizeof (err)), ENXIO);
	TT_CHECK(strstr(err, "the pool cannot be opened") != NULL);
	tt_pool_files_remove(&devs);
}

static void
test_cleanup(void)
{
	tt_tmpdir_cleanup();
}

TT_MAIN(
	{ "placement", test_placement },
	{ "remove_and_reopen", test_remove_and_reopen },
	{ "missing_log", test_missing_log },
	{ "cleanup", test_cleanup },
)
