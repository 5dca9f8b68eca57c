/*
 * Unit tests of the device lifecycle (lib/spa/spa_vdev.c and the vdev
 * layer's missed-txg and tree-change code) on real pools of sparse files:
 * attach turns a disk into a mirror and a resilver copies everything;
 * a wiped raidz member leaves the pool DEGRADED and replace restores it
 * (another device, or the same one); an offline device catches up on
 * only what it missed, also across export/import and when it was
 * missing at import; offline is refused when it would lose data; hot
 * spares step in for a dead device, or for any device by replace (and
 * stay until detach); the tree can be read under spa_vdev_hold while
 * resilvers end and detach; bad input gets one-line errors.
 * TARN_TEST_TMP=/dev/shm makes it fast.
 */
#include "tt.h"
#include "spa.h"
#include "dmu.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#define NDEV     6
#define DEVSIZE  (128 * MiB)
#define MAXOBJ   128

static char paths[NDEV][300];
static char errbuf[512];

/* ---- devices and pools ---- */

static void
dev_create(int i, uint64_t size)
{
	snprintf(paths[i], sizeof (paths[i]), "%s/d%d", tt_tmpdir(), i);
	unlink(paths[i]);
	int fd = open(paths[i], O_CREAT | O_RDWR, 0644);
	TT_ASSERT(fd >= 0);
	TT_OK(ftruncate(fd, (off_t)size));
	close(fd);
}

/* Zero a whole device, keeping the file (and any open descriptor). */
static void
dev_wipe(int i)
{
	int fd = open(paths[i], O_RDWR);
	TT_ASSERT(fd >= 0);
	TT_OK(ftruncate(fd, 0));
	TT_OK(ftruncate(fd, DEVSIZE));
	close(fd);
}

static void
dev_remove_all(void)
{
	for (int i = 0; i < NDEV; i++)
		if (paths[i][0] != '\0')
			unlink(paths[i]);
}

/* A pool on devices first..first+n-1 ("mirror", "raidz" or NULL). */
static spa_t *
pool_create(const char *type, int first, int n)
{
	char *argv[NDEV + 1];
	int argc = 0;
	if (type != NULL)
		argv[argc++] = (char *)type;
	for (int i = first; i < first + n; i++) {
		dev_create(i, DEVSIZE);
		argv[argc++] = paths[i];
	}
	spa_vdev_spec_t *spec;
	TT_OK(spa_vdev_spec_parse(argc, argv, &spec, errbuf, sizeof (errbuf)));
	spa_create_opts_t o;
	memset(&o, 0, sizeof (o));
	o.sco_no_cache = true;
	spa_t *spa = NULL;
	int e = spa_create("vdevops", spec, &o, &spa, errbuf, sizeof (errbuf));
	if (e != 0)
		fprintf(stderr, "  create: %s\n", errbuf);
	spa_vdev_spec_free(spec);
	TT_OK(e);
	return (spa);
}

/* Open the pool on the listed devices (index list ends with -1). */
static spa_t *
pool_open(const int *devs)
{
	const char *pv[NDEV];
	int n = 0;
	for (; devs[n] >= 0; n++)
		pv[n] = paths[devs[n]];
	spa_import_opts_t o;
	memset(&o, 0, sizeof (o));
	o.sio_no_cache = true;
	spa_t *spa = NULL;
	int e = spa_open_paths(pv, n, &o, &spa, errbuf, sizeof (errbuf));
	if (e != 0)
		fprintf(stderr, "  open: %s\n", errbuf);
	TT_OK(e);
	return (spa);
}

/* ---- data: objects filled from a seed, checked byte for byte ---- */

typedef struct data {
	uint64_t obj[MAXOBJ];
	uint64_t size[MAXOBJ];
	int      n;
} data_t;

static void
fill(uint8_t *buf, size_t len, uint64_t seed)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, seed);
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = tarn_rand_u64(&r);
		memcpy(buf + i, &v, MIN(8, len - i));
	}
}

static objset_t *
data_os(spa_t *spa)
{
	objset_t *os = NULL;
	if (spa_objset_open(spa, "t", &os) != 0)
		TT_OK(spa_objset_create(spa, "t", DMU_OST_TEST, &os));
	return (os);
}

/* Add `nobj` objects of `size` bytes, `per_txg` objects per txg. */
static void
data_add(spa_t *spa, data_t *d, int nobj, uint64_t size, int per_txg)
{
	objset_t *os = data_os(spa);
	uint8_t *buf = tarn_alloc(size);
	for (int i = 0; i < nobj; i++) {
		TT_ASSERT(d->n < MAXOBJ);
		int k = d->n;
		fill(buf, size, 1000 + (uint64_t)k);
		dmu_tx_t *tx = dmu_tx_create(os);
		dmu_tx_hold_write(tx, 0, 0, size);
		TT_OK(dmu_tx_assign(tx, TXG_WAIT));
		TT_OK(dmu_object_alloc(os, DMU_OT_TEST, 128 * KiB, DMU_OT_NONE, 0, tx,
		    &d->obj[k]));
		TT_OK(dmu_write(os, d->obj[k], 0, size, buf, tx));
		dmu_tx_commit(tx);
		d->size[k] = size;
		d->n++;
		if ((i + 1) % per_txg == 0)
			TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	}
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	tarn_free(buf);
}

static void
data_verify(spa_t *spa, const data_t *d)
{
	objset_t *os = data_os(spa);
	for (int k = 0; k < d->n; k++) {
		uint8_t *want = tarn_alloc(d->size[k]), *got = tarn_alloc(d->size[k]);
		fill(want, d->size[k], 1000 + (uint64_t)k);
		TT_OK(dmu_read(os, d->obj[k], 0, d->size[k], got));
		TT_CHECK(memcmp(want, got, d->size[k]) == 0);
		tarn_free(want);
		tarn_free(got);
	}
}

/* ---- looking at the tree ---- */

static vdev_t *
leaf_of(spa_t *spa, int i)
{
	vdev_t *vd = spa_lookup_leaf(spa, paths[i]);
	TT_ASSERT(vd != NULL);
	return (vd);
}

static void
scrub_clean(spa_t *spa)
{
	TT_OK(spa_scan_start(spa, SPA_SCAN_SCRUB, 0));
	TT_OK(spa_scan_wait(spa));
	spa_scan_stat_t st;
	spa_scan_get_stat(spa, &st);
	TT_EQ(st.sss_func, SPA_SCAN_SCRUB);
	TT_EQ(st.sss_state, SPA_SCAN_STATE_FINISHED);
	TT_EQ(st.sss_errors, 0);
	TT_EQ(st.sss_repaired, 0);
}

static uint64_t
leaf_written(spa_t *spa, int i)
{
	return (__atomic_load_n(&vdev_stat(leaf_of(spa, i))->vs_bytes[1], __ATOMIC_RELAXED));
}

static void
expect_healthy(spa_t *spa)
{
	TT_OK(spa_vdev_wait(spa));
	if (spa_state(spa) != VDEV_STATE_HEALTHY)
		fprintf(stderr, "  pool is %s\n", vdev_state_name(spa_state(spa)));
	TT_EQ(spa_state(spa), VDEV_STATE_HEALTHY);
}

/* ---- tests ---- */

/* attach: a single disk becomes a mirror; the new side gets everything. */
static void
test_attach_detach(void)
{
	data_t d = { .n = 0 };
	spa_t *spa = pool_create(NULL, 0, 1);
	dev_create(1, DEVSIZE);
	dev_create(2, DEVSIZE);
	data_add(spa, &d, 8, 1 * MiB, 2);
	TT_OK(spa_vdev_attach(spa, paths[0], paths[1], false, errbuf, sizeof (errbuf)));
	vdev_t *top = vdev_child(spa_root_vdev(spa), 0);
	TT_EQ(vdev_type(top), VDEV_TYPE_MIRROR);
	TT_EQ(vdev_children(top), 2);
	expect_healthy(spa);
	TT_CHECK(vdev_dtl_empty(leaf_of(spa, 1)));
	TT_CHECK(leaf_written(spa, 1) >= 8 * MiB);
	scrub_clean(spa);
	/* The original goes; the mirror of one is a plain disk again. */
	TT_OK(spa_vdev_detach(spa, paths[0], errbuf, sizeof (errbuf)));
	top = vdev_child(spa_root_vdev(spa), 0);
	TT_CHECK(vdev_ops(top)->vop_leaf);
	TT_CHECK(strcmp(vdev_path(top), paths[1]) == 0);
	data_verify(spa, &d);
	vdev_label_config_t cfg;
	TT_CHECK(vdev_label_read_path(paths[0], &cfg) != 0);   /* label cleared */
	spa_close(spa);
	spa = pool_open((const int[]){ 1, -1 });
	TT_EQ(spa_state(spa), VDEV_STATE_HEALTHY);
	data_verify(spa, &d);
	/* widen a mirror: attach twice, detach one */
	TT_OK(spa_vdev_attach(spa, paths[1], paths[0], true, errbuf, sizeof (errbuf)));
	TT_OK(spa_vdev_attach(spa, "d1", paths[2], false, errbuf, sizeof (errbuf)));
	TT_EQ(vdev_children(vdev_child(spa_root_vdev(spa), 0)), 3);
	expect_healthy(spa);
	TT_OK(spa_vdev_detach(spa, paths[1], errbuf, sizeof (errbuf)));
	data_verify(spa, &d);
	spa_close(spa);
	spa = pool_open((const int[]){ 0, 2, -1 });
	TT_EQ(spa_state(spa), VDEV_STATE_HEALTHY);
	TT_EQ(vdev_children(vdev_child(spa_root_vdev(spa), 0)), 2);
	data_verify(spa, &d);
	spa_close(spa);
	dev_remove_all();
}

/* A wiped raidz member: DEGRADED at open, data intact; replace: ONLINE, clean. */
static void
test_raidz_wipe_replace(void)
{
	data_t d = { .n = 0 };
	spa_t *spa = pool_create("raidz", 0, 3);
	data_add(spa, &d, 16, 512 * KiB, 4);
	spa_close(spa);
	dev_wipe(1);
	spa = pool_open((const int[]){ 0, 1, 2, -1 });
	TT_EQ(spa_state(spa), VDEV_STATE_DEGRADED);
	TT_CHECK(!vdev_leaf_ready(leaf_of(spa, 1)));
	data_verify(spa, &d);
	dev_create(3, DEVSIZE);
	TT_OK(spa_vdev_replace(spa, paths[1], paths[3], false, errbuf, sizeof (errbuf)));
	vdev_t *rz = vdev_child(spa_root_vdev(spa), 0);
	TT_EQ(vdev_type(vdev_child(rz, 1)), VDEV_TYPE_REPLACING);
	expect_healthy(spa);
	TT_CHECK(vdev_ops(vdev_child(rz, 1))->vop_leaf);
	TT_CHECK(strcmp(vdev_path(vdev_child(rz, 1)), paths[3]) == 0);
	scrub_clean(spa);
	data_add(spa, &d, 2, 256 * KiB, 1);
	spa_close(spa);
	spa = pool_open((const int[]){ 0, 2, 3, -1 });
	TT_EQ(spa_state(spa), VDEV_STATE_HEALTHY);
	data_verify(spa, &d);
	spa_close(spa);
	dev_remove_all();
}

/* replace POOL DEV with no new device: the same device, wiped while open. */
static void
test_replace_same(void)
{
	data_t d = { .n = 0 };
	spa_t *spa = pool_create("raidz", 0, 3);
	data_add(spa, &d, 12, 512 * KiB, 3);
	/* healthy and still labelled: refused */
	TT_EQ(spa_vdev_replace(spa, paths[1], NULL, false, errbuf, sizeof (errbuf)), EBUSY);
	TT_CHECK(errbuf[0] != '\0');
	dev_wipe(1);
	TT_OK(spa_vdev_replace(spa, "d1", NULL, false, errbuf, sizeof (errbuf)));
	expect_healthy(spa);
	TT_CHECK(vdev_dtl_empty(leaf_of(spa, 1)));
	TT_CHECK(leaf_written(spa, 1) >= 3 * MiB);
	scrub_clean(spa);
	data_verify(spa, &d);
	spa_close(spa);
	/* the same after a reopen that found it blank */
	dev_wipe(2);
	spa = pool_open((const int[]){ 0, 1, 2, -1 });
	TT_EQ(spa_state(spa), VDEV_STATE_DEGRADED);
	TT_OK(spa_vdev_replace(spa, paths[2], NULL, false, errbuf, sizeof (errbuf)));
	expect_healthy(spa);
	scrub_clean(spa);
	spa_close(spa);
	spa = pool_open((const int[]){ 0, 1, 2, -1 });
	TT_EQ(spa_state(spa), VDEV_STATE_HEALTHY);
	data_verify(spa, &d);
	spa_close(spa);
	dev_remove_all();
}

/* Offline a side, write many txgs, online: the resilver copies only those. */
static void
test_offline_online(void)
{
	data_t d = { .n = 0 };
	spa_t *spa = pool_create("mirror", 0, 2);
	data_add(spa, &d, 24, 1 * MiB, 4);
	TT_OK(spa_vdev_offline(spa, paths[1], true, errbuf, sizeof (errbuf)));
	TT_EQ(vdev_state(leaf_of(spa, 1)), VDEV_STATE_OFFLINE);
	TT_EQ(spa_state(spa), VDEV_STATE_DEGRADED);
	uint64_t first = spa_last_synced_txg(spa);
	data_add(spa, &d, 20, 48 * KiB, 1);          /* 20 txgs */
	uint64_t w0 = leaf_written(spa, 1);
	TT_OK(spa_vdev_online(spa, paths[1], errbuf, sizeof (errbuf)));
	vdev_t *l1 = leaf_of(spa, 1);
	TT_CHECK(vdev_dtl_txg(l1) > first);          /* only what it missed */
	expect_healthy(spa);
	spa_space_t ss;
	spa_get_space(spa, &ss);
	spa_scan_stat_t st;
	spa_scan_get_stat(spa, &st);
	uint64_t wrote = leaf_written(spa, 1) - w0;
	if (getenv("TARN_TEST_VERBOSE"))
		fprintf(stderr, "  alloc %" PRIu64 ", resilver issued %" PRIu64
		    ", written to the side %" PRIu64 "\n", ss.ss_alloc, st.sss_issued, wrote);
	TT_EQ(st.sss_func, SPA_SCAN_RESILVER);
	TT_CHECK(st.sss_issued < ss.ss_alloc / 4);
	TT_CHECK(wrote < ss.ss_alloc / 4);
	TT_CHECK(wrote >= 20 * 48 * KiB);
	TT_CHECK(vdev_dtl_empty(l1));
	scrub_clean(spa);
	data_verify(spa, &d);
	spa_close(spa);
	dev_remove_all();
}

/* Offline (permanent and -t) and missed txgs across export and import. */
static void
test_offline_persist(void)
{
	data_t d = { .n = 0 };
	spa_t *spa = pool_create("mirror", 0, 2);
	data_add(spa, &d, 4, 1 * MiB, 2);
	TT_OK(spa_vdev_offline(spa, paths[1], false, errbuf, sizeof (errbuf)));
	data_add(spa, &d, 6, 64 * KiB, 1);
	TT_OK(spa_export(spa));
	spa = pool_open((const int[]){ 0, 1, -1 });
	vdev_t *l1 = leaf_of(spa, 1);
	TT_CHECK(vdev_offline(l1));                   /* recorded */
	TT_CHECK(!vdev_dtl_empty(l1));                /* so are the missed txgs */
	TT_EQ(spa_state(spa), VDEV_STATE_DEGRADED);
	TT_OK(spa_vdev_online(spa, paths[1], errbuf, sizeof (errbuf)));
	expect_healthy(spa);
	/* -t: back online at the next import, resilvered */
	TT_OK(spa_vdev_offline(spa, paths[1], true, errbuf, sizeof (errbuf)));
	data_add(spa, &d, 6, 64 * KiB, 1);
	spa_close(spa);
	spa = pool_open((const int[]){ 0, 1, -1 });
	l1 = leaf_of(spa, 1);
	TT_CHECK(!vdev_offline(l1));
	expect_healthy(spa);
	TT_CHECK(vdev_dtl_empty(l1));
	scrub_clean(spa);
	data_verify(spa, &d);
	spa_close(spa);
	dev_remove_all();
}

/* Missing at import: DEGRADED; found again later: resilvered from its DTL. */
static void
test_missing_at_import(void)
{
	data_t d = { .n = 0 };
	char away[320];
	spa_t *spa = pool_create("mirror", 0, 2);
	data_add(spa, &d, 6, 1 * MiB, 2);
	spa_close(spa);
	snprintf(away, sizeof (away), "%s.away", paths[1]);
	TT_OK(rename(paths[1], away));
	spa = pool_open((const int[]){ 0, -1 });
	TT_EQ(spa_state(spa), VDEV_STATE_DEGRADED);
	data_add(spa, &d, 8, 64 * KiB, 1);
	spa_close(spa);
	TT_OK(rename(away, paths[1]));
	spa = pool_open((const int[]){ 0, 1, -1 });
	vdev_t *l1 = leaf_of(spa, 1);
	TT_CHECK(vdev_leaf_ready(l1));
	uint64_t w0 = leaf_written(spa, 1);
	expect_healthy(spa);
	TT_CHECK(vdev_dtl_empty(l1));
	TT_CHECK(leaf_written(spa, 1) - w0 < 4 * MiB);   /* not the 6 MiB from before */
	scrub_clean(spa);
	data_verify(spa, &d);
	spa_close(spa);
	dev_remove_all();
}

/*
 * Replace devices that still work: a raidz member, a mirror side, a
 * single-disk top-level vdev.  The old device serves reads until the new
 * one is whole, then leaves (label cleared).
 */
static void
test_replace_healthy(void)
{
	data_t d = { .n = 0 };
	spa_t *spa = pool_create("raidz", 0, 3);
	dev_create(3, DEVSIZE);
	data_add(spa, &d, 10, 512 * KiB, 2);
	TT_OK(spa_vdev_replace(spa, paths[2], paths[3], false, errbuf, sizeof (errbuf)));
	vdev_t *rz = vdev_child(spa_root_vdev(spa), 0);
	TT_EQ(vdev_type(vdev_child(rz, 2)), VDEV_TYPE_REPLACING);
	TT_EQ(spa_state(spa), VDEV_STATE_DEGRADED);     /* until d3 is whole */
	data_verify(spa, &d);                           /* reads skip d3 */
	expect_healthy(spa);
	TT_CHECK(strcmp(vdev_path(vdev_child(rz, 2)), paths[3]) == 0);
	TT_CHECK(leaf_written(spa, 3) >= 2 * MiB);
	vdev_label_config_t cfg;
	TT_CHECK(vdev_label_read_path(paths[2], &cfg) != 0);
	scrub_clean(spa);
	spa_close(spa);
	spa = pool_open((const int[]){ 0, 1, 3, -1 });
	TT_EQ(spa_state(spa), VDEV_STATE_HEALTHY);
	data_verify(spa, &d);
	spa_close(spa);
	dev_remove_all();

	/* a mirror side, then the single disk of a stripe */
	d.n = 0;
	spa = pool_create("mirror", 0, 2);
	dev_create(2, DEVSIZE);
	dev_create(3, DEVSIZE);
	data_add(spa, &d, 6, 512 * KiB, 2);
	TT_OK(spa_vdev_replace(spa, "d0", paths[2], false, errbuf, sizeof (errbuf)));
	TT_EQ(vdev_type(vdev_child(vdev_child(spa_root_vdev(spa), 0), 0)),
	    VDEV_TYPE_REPLACING);
	expect_healthy(spa);
	TT_EQ(vdev_children(vdev_child(spa_root_vdev(spa), 0)), 2);
	TT_OK(spa_vdev_detach(spa, paths[1], errbuf, sizeof (errbuf)));
	TT_OK(spa_vdev_replace(spa, paths[2], paths[3], false, errbuf, sizeof (errbuf)));
	TT_EQ(vdev_type(vdev_child(spa_root_vdev(spa), 0)), VDEV_TYPE_REPLACING);
	expect_healthy(spa);
	vdev_t *top = vdev_child(spa_root_vdev(spa), 0);
	TT_CHECK(vdev_ops(top)->vop_leaf && strcmp(vdev_path(top), paths[3]) == 0);
	scrub_clean(spa);
	spa_close(spa);
	spa = pool_open((const int[]){ 3, -1 });
	TT_EQ(spa_state(spa), VDEV_STATE_HEALTHY);
	data_verify(spa, &d);
	spa_close(spa);
	dev_remove_all();
}

/* A writer runs while devices come and go; nothing is lost. */
typedef struct load_arg {
	spa_t *la_spa;
	data_t *la_d;
	bool la_stop;                 /* atomic */
	int la_err;
} load_arg_t;

static void *
load_writer(void *arg)
{
	load_arg_t *la = arg;
	objset_t *os = data_os(la->la_spa);
	uint8_t *buf = tarn_alloc(96 * KiB);
	while (!__atomic_load_n(&la->la_stop, __ATOMIC_ACQUIRE) && la->la_d->n < MAXOBJ) {
		int k = la->la_d->n;
		fill(buf, 96 * KiB, 1000 + (uint64_t)k);
		dmu_tx_t *tx = dmu_tx_create(os);
		dmu_tx_hold_write(tx, 0, 0, 96 * KiB);
		int e = dmu_tx_assign(tx, TXG_WAIT);
		if (e == 0)
			e = dmu_object_alloc(os, DMU_OT_TEST, 128 * KiB, DMU_OT_NONE, 0, tx,
			    &la->la_d->obj[k]);
		if (e == 0)
			e = dmu_write(os, la->la_d->obj[k], 0, 96 * KiB, buf, tx);
		dmu_tx_commit(tx);
		if (e != 0) {
			la->la_err = e;
			break;
		}
		la->la_d->size[k] = 96 * KiB;
		__atomic_store_n(&la->la_d->n, k + 1, __ATOMIC_RELEASE);
		if (k % 3 == 0)
			(void) txg_wait_synced(spa_dmu_pool(la->la_spa), 0);
	}
	tarn_free(buf);
	return (NULL);
}

static void
test_changes_under_load(void)
{
	data_t d = { .n = 0 };
	spa_t *spa = pool_create("mirror", 0, 2);
	dev_create(2, DEVSIZE);
	data_add(spa, &d, 2, 256 * KiB, 1);
	load_arg_t la = { .la_spa = spa, .la_d = &d };
	pthread_t th;
	TT_OK(pthread_create(&th, NULL, load_writer, &la));
	for (int round = 0; round < 3; round++) {
		TT_OK(spa_vdev_offline(spa, paths[1], true, errbuf, sizeof (errbuf)));
		usleep(20 * 1000);
		TT_OK(spa_vdev_online(spa, paths[1], errbuf, sizeof (errbuf)));
		TT_OK(spa_vdev_attach(spa, paths[0], paths[2], false, errbuf, sizeof (errbuf)));
		TT_OK(spa_vdev_wait(spa));
		TT_OK(spa_vdev_detach(spa, paths[2], errbuf, sizeof (errbuf)));
	}
	__atomic_store_n(&la.la_stop, true, __ATOMIC_RELEASE);
	TT_OK(pthread_join(th, NULL));
	TT_OK(la.la_err);
	expect_healthy(spa);
	scrub_clean(spa);
	data_verify(spa, &d);
	spa_close(spa);
	spa = pool_open((const int[]){ 0, 1, -1 });
	TT_EQ(spa_state(spa), VDEV_STATE_HEALTHY);
	data_verify(spa, &d);
	spa_close(spa);
	dev_remove_all();
}

/*
 * status, list and iostat in the daemon read the tree while the pool's
 * async thread changes it: a resilver that ends detaches the replaced
 * device (its replacing-N group collapses, both are freed).  A reader
 * that holds spa_vdev_hold sees a whole tree every time; one that does
 * not reads freed vdevs (under ASan a use-after-free; TARN_TEST_UNHELD=1
 * walks without the hold to show it).
 */
typedef struct walk_arg {
	spa_t *wa_spa;
	bool   wa_stop;               /* atomic */
	bool   wa_held;
	int    wa_walks, wa_bad;
	int    wa_mid;                /* walks that saw a replacing group */
} walk_arg_t;

/* What status does: every vdev's name, state and counters; leaves counted. */
static int
walk_tree(const vdev_t *vd, int *bad)
{
	int leaves = vdev_children(vd) == 0;
	char name[VDEV_PATH_MAX + 32];
	(void) snprintf(name, sizeof (name), "%s/%" PRIu64 "/%s", vdev_path(vd) != NULL ?
	    vdev_path(vd) : "-", vdev_guid(vd), vdev_state_name(vdev_state(vd)));
	if (vdev_stat(vd)->vs_read_errors + vdev_stat(vd)->vs_checksum_errors != 0)
		(*bad)++;
	for (int c = 0; c < vdev_children(vd); c++) {
		if (vdev_parent(vdev_child(vd, c)) != vd)
			(*bad)++;
		leaves += walk_tree(vdev_child(vd, c), bad);
	}
	return (leaves);
}

static void *
walk_reader(void *arg)
{
	walk_arg_t *wa = arg;
	while (!__atomic_load_n(&wa->wa_stop, __ATOMIC_ACQUIRE)) {
		if (wa->wa_held)
			spa_vdev_hold(wa->wa_spa);
		int leaves = walk_tree(spa_root_vdev(wa->wa_spa), &wa->wa_bad);
		if (wa->wa_held)
			spa_vdev_rele(wa->wa_spa);
		if (leaves < 2 || leaves > 3)     /* a mirror of 2, + the new device */
			wa->wa_bad++;
		wa->wa_mid += leaves == 3;
		wa->wa_walks++;
		sched_yield();
	}
	return (NULL);
}

static void
test_walk_during_replace(void)
{
	data_t d = { .n = 0 };
	spa_t *spa = pool_create("mirror", 0, 2);
	dev_create(2, DEVSIZE);
	data_add(spa, &d, 4, 256 * KiB, 2);
	walk_arg_t wa = { .wa_spa = spa, .wa_held = getenv("TARN_TEST_UNHELD") == NULL };
	pthread_t th;
	TT_OK(pthread_create(&th, NULL, walk_reader, &wa));
	int cur = 1, spare = 2;
	for (int round = 0; round < 8; round++) {
		TT_OK(spa_vdev_replace(spa, paths[cur], paths[spare], false, errbuf,
		    sizeof (errbuf)));
		TT_OK(spa_vdev_wait(spa));          /* the old side is detached */
		int t = cur;
		cur = spare;
		spare = t;
	}
	__atomic_store_n(&wa.wa_stop, true, __ATOMIC_RELEASE);
	TT_OK(pthread_join(th, NULL));
	if (getenv("TARN_TEST_VERBOSE"))
		fprintf(stderr, "  %d walks, %d during a resilver\n", wa.wa_walks, wa.wa_mid);
	TT_CHECK(wa.wa_walks > 0);
	TT_EQ(wa.wa_bad, 0);
	vdev_t *top = vdev_child(spa_root_vdev(spa), 0);
	TT_EQ(vdev_children(top), 2);
	TT_CHECK(strcmp(vdev_path(vdev_child(top, 1)), paths[cur]) == 0);
	expect_healthy(spa);
	data_verify(spa, &d);
	spa_close(spa);
	dev_remove_all();
}

/*
 * zpool add: a second mirror joins while a writer runs; new blocks go to
 * it too; everything reads back, scrubs clean and imports with both; the
 * pool does not import without the new mirror (its blocks are there).  Mismatched layouts need
 * force.
 */
static void
test_add_top(void)
{
	data_t d = { .n = 0 };
	spa_t *spa = pool_create("mirror", 0, 2);
	for (int i = 2; i < 5; i++)
		dev_create(i, DEVSIZE);
	data_add(spa, &d, 4, 1 * MiB, 2);
	spa_vdev_spec_t *spec;
	char *one[] = { paths[4] };
	TT_OK(spa_vdev_spec_parse(1, one, &spec, errbuf, sizeof (errbuf)));
	TT_EQ(spa_vdev_add(spa, spec, false, errbuf, sizeof (errbuf)), EINVAL);
	TT_CHECK(strstr(errbuf, "mismatched replication level") != NULL);
	spa_vdev_spec_free(spec);
	TT_EQ(vdev_children(spa_root_vdev(spa)), 1);

	load_arg_t la = { .la_spa = spa, .la_d = &d };
	pthread_t th;
	TT_OK(pthread_create(&th, NULL, load_writer, &la));
	usleep(20 * 1000);
	char *two[] = { "mirror", paths[2], paths[3] };
	TT_OK(spa_vdev_spec_parse(3, two, &spec, errbuf, sizeof (errbuf)));
	int e = spa_vdev_add(spa, spec, false, errbuf, sizeof (errbuf));
	if (e != 0)
		fprintf(stderr, "  add: %s\n", errbuf);
	TT_OK(e);
	spa_vdev_spec_free(spec);
	usleep(50 * 1000);
	__atomic_store_n(&la.la_stop, true, __ATOMIC_RELEASE);
	TT_OK(pthread_join(th, NULL));
	TT_OK(la.la_err);
	vdev_t *root = spa_root_vdev(spa);
	TT_EQ(vdev_children(root), 2);
	TT_EQ(vdev_type(vdev_child(root, 1)), VDEV_TYPE_MIRROR);
	TT_EQ(vdev_id(vdev_child(root, 1)), 1);
	uint64_t before = leaf_written(spa, 2);
	data_add(spa, &d, 8, 1 * MiB, 2);
	TT_CHECK(leaf_written(spa, 2) > before + 2 * MiB);   /* new blocks land there */
	TT_CHECK(leaf_written(spa, 3) > before + 2 * MiB);
	expect_healthy(spa);
	scrub_clean(spa);
	data_verify(spa, &d);
	spa_close(spa);
	spa = pool_open((const int[]){ 0, 1, 2, 3, -1 });
	TT_EQ(spa_state(spa), VDEV_STATE_HEALTHY);
	TT_EQ(vdev_children(spa_root_vdev(spa)), 2);
	data_verify(spa, &d);
	scrub_clean(spa);
	spa_close(spa);
	/* without the new mirror the pool's blocks are not all there */
	spa_import_opts_t o;
	memset(&o, 0, sizeof (o));
	o.sio_no_cache = true;
	const char *pv[] = { paths[0], paths[1] };
	spa_t *bad = NULL;
	e = spa_open_paths(pv, 2, &o, &bad, errbuf, sizeof (errbuf));
	TT_CHECK(e != 0);
	TT_CHECK(strstr(errbuf, "missing") != NULL);
	if (bad != NULL)
		spa_close(bad);
	dev_remove_all();
}

/* Power cuts around zpool add: every device behind a fault injector. */
typedef struct add_cut {
	vdev_fault_t *ac_vf[4];
	tarn_rand_t   ac_rand;
	pthread_mutex_t ac_lock;
	bool          ac_armed;       /* cut at the next synced txg */
	bool          ac_synced;      /* a txg synced since the add began */
	bool          ac_cut;
	uint64_t      ac_delay_us;    /* the cutter thread's wait */
	int           ac_watch;       /* -1, or cut at this device's first held write */
} add_cut_t;

static void
add_cut_now(add_cut_t *ac)
{
	pthread_mutex_lock(&ac->ac_lock);
	if (!ac->ac_cut) {
		for (int i = 0; i < 4; i++)
			vdev_fault_set_dead(ac->ac_vf[i], true);
		for (int i = 0; i < 4; i++)
			vdev_fault_powercut(ac->ac_vf[i], &ac->ac_rand);
		ac->ac_cut = true;
	}
	pthread_mutex_unlock(&ac->ac_lock);
}

static void
add_cut_synced(void *arg, uint64_t txg)
{
	add_cut_t *ac = arg;
	__atomic_store_n(&ac->ac_synced, true, __ATOMIC_RELEASE);
	if (__atomic_load_n(&ac->ac_armed, __ATOMIC_ACQUIRE))
		add_cut_now(ac);
}

/*
 * After a delay; or, watching a device, once the add's sync is done and
 * that device holds an unflushed write (a label being written).
 */
static void *
add_cutter(void *arg)
{
	add_cut_t *ac = arg;
	if (ac->ac_watch < 0) {
		usleep((useconds_t)ac->ac_delay_us);
	} else {
		uint64_t t0 = tarn_now_ns();
		while (!(__atomic_load_n(&ac->ac_synced, __ATOMIC_ACQUIRE) &&
		    vdev_fault_held_writes(ac->ac_vf[ac->ac_watch]) > 0) &&
		    tarn_now_ns() - t0 < 2000000000ULL)
			sched_yield();
	}
	add_cut_now(ac);
	return (NULL);
}

/*
 * The power fails while a mirror is added: cut from another thread at a
 * random moment of the add, from the txg-synced callback of the add's
 * own sync (its vdev is then in the tree and its metaslab arrays on
 * disk, the labels not yet written), after the add returned, or at the
 * first unflushed write of a random device after that sync (among the
 * label writes, which is where the order of those writes matters).  Held
 * (unflushed) writes are dropped, applied or torn at random.  The pool
 * must import from the four files every time, with the data written
 * before, in the old tree (one mirror) or the new one (two; always after
 * a cut once the add returned); either way it scrubs clean and takes
 * writes.  (The synced-callback cut races with the add's label writes,
 * which go on once the sync is seen: it lands before them or among them.)
 */
static void
test_add_powercut(void)
{
	int trees[4][3] = { { 0 } };
	for (int k = 0; k < 32; k++) {
		int mode = k % 4;
		add_cut_t ac;
		memset(&ac, 0, sizeof (ac));
		ac.ac_watch = -1;
		pthread_mutex_init(&ac.ac_lock, NULL);
		tarn_rand_seed(&ac.ac_rand, 77 + (uint64_t)k);
		for (int i = 0; i < 4; i++) {
			dev_create(i, DEVSIZE);
			vdev_fault_cfg_t cfg;
			memset(&cfg, 0, sizeof (cfg));
			cfg.vfc_hold_unflushed = true;
			cfg.vfc_seed = 1000 + (uint64_t)(k * 4 + i);
			ac.ac_vf[i] = vdev_fault_attach(paths[i], &cfg);
		}
		data_t d = { .n = 0 };
		spa_t *spa = pool_create("mirror", 0, 2);
		data_add(spa, &d, 3, 256 * KiB, 1);
		dmu_pool_set_synced_cb(spa_dmu_pool(spa), add_cut_synced, &ac);
		pthread_t th;
		if (mode == 0 || mode == 3) {
			ac.ac_delay_us = tarn_rand_range(&ac.ac_rand, 8000);
			if (mode == 3)
				ac.ac_watch = (int)tarn_rand_range(&ac.ac_rand, 4);
			__atomic_store_n(&ac.ac_synced, false, __ATOMIC_RELEASE);
			TT_OK(pthread_create(&th, NULL, add_cutter, &ac));
		} else if (mode == 1) {
			__atomic_store_n(&ac.ac_armed, true, __ATOMIC_RELEASE);
		}
		char *two[] = { "mirror", paths[2], paths[3] };
		spa_vdev_spec_t *spec;
		TT_OK(spa_vdev_spec_parse(3, two, &spec, errbuf, sizeof (errbuf)));
		int e = spa_vdev_add(spa, spec, false, errbuf, sizeof (errbuf));
		spa_vdev_spec_free(spec);
		if (mode == 0 || mode == 3)
			TT_OK(pthread_join(th, NULL));
		if (mode == 2) {
			TT_OK(e);
			add_cut_now(&ac);
		}
		TT_CHECK(txg_wait_synced(spa_dmu_pool(spa), 0) != 0);
		spa_abandon(spa);
		for (int i = 0; i < 4; i++)
			vdev_fault_detach(ac.ac_vf[i]);
		pthread_mutex_destroy(&ac.ac_lock);

		spa = pool_open((const int[]){ 0, 1, 2, 3, -1 });
		int tops = vdev_children(spa_root_vdev(spa));
		TT_ASSERT(tops == 1 || tops == 2);
		trees[mode][tops]++;
		if (mode == 2)
			TT_EQ(tops, 2);
		data_verify(spa, &d);
		TT_OK(spa_vdev_wait(spa));
		if (spa_state(spa) != VDEV_STATE_HEALTHY) {
			fprintf(stderr, "  case %d (mode %d, add %s, %d tops): %s\n", k, mode,
			    tarn_strerror(e), tops, vdev_state_name(spa_state(spa)));
			for (int i = 0; i < 4; i++) {
				vdev_t *lf = spa_lookup_leaf(spa, paths[i]);
				if (lf != NULL)
					fprintf(stderr, "    d%d %s dtl %s\n", i,
					    vdev_state_name(vdev_state(lf)),
					    vdev_dtl_empty(lf) ? "empty" : "set");
			}
		}
		expect_healthy(spa);
		scrub_clean(spa);
		data_add(spa, &d, 2, 256 * KiB, 1);
		data_verify(spa, &d);
		spa_close(spa);
		(void) e;
	}
	fprintf(stderr, "  old/new tree after the cut: from a thread %d/%d, at the add's "
	    "sync %d/%d, after the add %d/%d, among the label writes %d/%d\n", trees[0][1],
	    trees[0][2], trees[1][1], trees[1][2], trees[2][1], trees[2][2], trees[3][1],
	    trees[3][2]);
	dev_remove_all();
}

/*
 * The add's own sync fails (the old devices die: the pool suspends), so
 * the new vdev's metaslab array reaches no committed txg.  Labels written
 * afterwards (here by a hot spare added to the suspended pool; in
 * add_powercut by the async thread faulting leaves before the power cut)
 * must not name the new vdev: an import would find its array in no
 * uberblock's tree, at any txg.  The failed add leaves the old tree.
 */
static void
test_add_sync_fails(void)
{
	vdev_fault_t *vf[2];
	for (int i = 0; i < 5; i++)
		dev_create(i, DEVSIZE);
	for (int i = 0; i < 2; i++) {
		vdev_fault_cfg_t cfg;
		memset(&cfg, 0, sizeof (cfg));
		cfg.vfc_seed = 500 + (uint64_t)i;
		vf[i] = vdev_fault_attach(paths[i], &cfg);
	}
	data_t d = { .n = 0 };
	spa_t *spa = pool_create("mirror", 0, 2);
	data_add(spa, &d, 2, 128 * KiB, 1);
	for (int i = 0; i < 2; i++)
		vdev_fault_set_dead(vf[i], true);
	char *two[] = { "mirror", paths[2], paths[3] };
	spa_vdev_spec_t *spec;
	TT_OK(spa_vdev_spec_parse(3, two, &spec, errbuf, sizeof (errbuf)));
	TT_CHECK(spa_vdev_add(spa, spec, false, errbuf, sizeof (errbuf)) != 0);
	spa_vdev_spec_free(spec);
	TT_CHECK(spa_suspended(spa) != 0);
	TT_EQ(vdev_children(spa_root_vdev(spa)), 1);
	for (int i = 0; i < 2; i++)
		vdev_fault_set_dead(vf[i], false);
	char *sp[] = { paths[4] };
	(void) spa_vdev_add_spares(spa, 1, sp, false, errbuf, sizeof (errbuf));
	spa_abandon(spa);
	for (int i = 0; i < 2; i++)
		vdev_fault_detach(vf[i]);
	spa = pool_open((const int[]){ 0, 1, 2, 3, 4, -1 });
	TT_EQ(vdev_children(spa_root_vdev(spa)), 1);
	data_verify(spa, &d);
	spa_close(spa);
	dev_remove_all();
}

/*
 * A device comes back with old contents and nothing recorded about it
 * (a stale copy, or a DTL lost in a crash): its uberblock ring says
 * which txgs it lacks, and a resilver brings it up to date.
 */
static void
test_stale_copy(void)
{
	data_t d = { .n = 0 };
	char old[320], cmd[800];
	spa_t *spa = pool_create("mirror", 0, 2);
	data_add(spa, &d, 6, 512 * KiB, 2);
	spa_close(spa);
	snprintf(old, sizeof (old), "%s.old", paths[1]);
	snprintf(cmd, sizeof (cmd), "cp --sparse=always '%s' '%s'", paths[1], old);
	TT_OK(system(cmd));
	spa = pool_open((const int[]){ 0, 1, -1 });
	data_add(spa, &d, 10, 128 * KiB, 1);
	spa_close(spa);
	TT_OK(rename(old, paths[1]));
	spa = pool_open((const int[]){ 0, 1, -1 });
	TT_CHECK(vdev_dtl_txg(leaf_of(spa, 1)) > 1);   /* from its ring */
	expect_healthy(spa);
	scrub_clean(spa);
	data_verify(spa, &d);
	spa_close(spa);
	dev_remove_all();
}

/* Offline is refused when it would lose data. */
static void
test_offline_refused(void)
{
	spa_t *spa = pool_create(NULL, 0, 1);
	TT_EQ(spa_vdev_offline(spa, paths[0], false, errbuf, sizeof (errbuf)), EBUSY);
	TT_CHECK(strstr(errbuf, "replicas") != NULL);
	spa_close(spa);
	spa = pool_create("mirror", 0, 2);
	TT_OK(spa_vdev_offline(spa, paths[0], false, errbuf, sizeof (errbuf)));
	TT_EQ(spa_vdev_offline(spa, paths[1], false, errbuf, sizeof (errbuf)), EBUSY);
	TT_OK(spa_vdev_online(spa, paths[0], errbuf, sizeof (errbuf)));
	expect_healthy(spa);
	/* a side that missed txgs is not a replica of them */
	data_t d = { .n = 0 };
	TT_OK(spa_vdev_offline(spa, paths[1], true, errbuf, sizeof (errbuf)));
	data_add(spa, &d, 4, 64 * KiB, 1);
	vdev_t *l1 = leaf_of(spa, 1);
	vdev_dtl_mark(l1, spa_last_synced_txg(spa));   /* as if still missing them */
	TT_CHECK(vdev_dtl_required(leaf_of(spa, 0)) || vdev_dtl_empty(l1));
	TT_OK(spa_vdev_online(spa, paths[1], errbuf, sizeof (errbuf)));
	expect_healthy(spa);
	spa_close(spa);
	spa = pool_create("raidz", 2, 3);
	TT_OK(spa_vdev_offline(spa, paths[3], true, errbuf, sizeof (errbuf)));
	TT_EQ(spa_vdev_offline(spa, paths[4], true, errbuf, sizeof (errbuf)), EBUSY);
	TT_EQ(spa_state(spa), VDEV_STATE_DEGRADED);
	spa_close(spa);
	dev_remove_all();
}

/* Poll (making txgs) until cond holds or ~15 s pass. */
static bool
wait_for(spa_t *spa, bool (*cond)(spa_t *))
{
	for (int i = 0; i < 300; i++) {
		if (cond(spa))
			return (true);
		txg_kick(spa_dmu_pool(spa));
		usleep(50 * 1000);
	}
	return (cond(spa));
}

static bool
spare_in(spa_t *spa)
{
	vdev_t *m = vdev_child(spa_root_vdev(spa), 0);
	for (int c = 0; c < vdev_children(m); c++)
		if (vdev_type(vdev_child(m, c)) == VDEV_TYPE_SPARE)
			return (true);
	return (false);
}

/* A dead device: faulted, a hot spare steps in, the pool keeps working. */
static void
test_hot_spare(void)
{
	data_t d = { .n = 0 };
	for (int i = 0; i < 4; i++)
		dev_create(i, DEVSIZE);
	vdev_fault_cfg_t fc = { .vfc_seed = 1 };
	vdev_fault_t *vf = vdev_fault_attach(paths[1], &fc);
	spa_t *spa = pool_create("mirror", 0, 2);
	char *sp[] = { paths[2] };
	TT_OK(spa_vdev_add_spares(spa, 1, sp, false, errbuf, sizeof (errbuf)));
	vdev_t *spares = vdev_spares(spa_root_vdev(spa));
	TT_ASSERT(spares != NULL && vdev_children(spares) == 1);
	TT_CHECK(!spa_spare_in_use(spa, vdev_child(spares, 0)));
	vdev_label_config_t cfg;
	TT_OK(vdev_label_read_path(paths[2], &cfg));
	TT_EQ(cfg.vlc_state, POOL_STATE_SPARE);
	TT_EQ(cfg.vlc_pool_guid, spa_guid(spa));
	vdev_config_free(&cfg);
	data_add(spa, &d, 8, 512 * KiB, 2);
	vdev_fault_set_dead(vf, true);
	data_add(spa, &d, 8, 64 * KiB, 1);          /* the writes find it dead */
	TT_ASSERT(wait_for(spa, spare_in));
	TT_CHECK(spa_spare_in_use(spa, vdev_child(vdev_spares(spa_root_vdev(spa)), 0)));
	vdev_t *l1 = spa_lookup_leaf(spa, paths[1]);
	TT_CHECK(vdev_state(l1) == VDEV_STATE_FAULTED);
	data_add(spa, &d, 4, 64 * KiB, 1);          /* keeps working */
	data_verify(spa, &d);
	TT_OK(spa_vdev_wait(spa));
	TT_EQ(spa_state(spa), VDEV_STATE_DEGRADED); /* d1 is still faulted */
	/* replace the dead disk: the spare goes back to the list */
	TT_OK(spa_vdev_replace(spa, paths[1], paths[3], false, errbuf, sizeof (errbuf)));
	expect_healthy(spa);
	TT_CHECK(!spare_in(spa));
	TT_CHECK(!spa_spare_in_use(spa, vdev_child(vdev_spares(spa_root_vdev(spa)), 0)));
	TT_CHECK(vdev_leaf_ready(vdev_child(vdev_spares(spa_root_vdev(spa)), 0)));
	scrub_clean(spa);
	data_verify(spa, &d);
	spa_close(spa);
	vdev_fault_detach(vf);
	spa = pool_open((const int[]){ 0, 2, 3, -1 });
	TT_EQ(spa_state(spa), VDEV_STATE_HEALTHY);
	spares = vdev_spares(spa_root_vdev(spa));
	TT_ASSERT(spares != NULL && vdev_children(spares) == 1);
	TT_CHECK(vdev_leaf_ready(vdev_child(spares, 0)));
	data_verify(spa, &d);
	spa_close(spa);
	dev_remove_all();
}

/*
 * replace DEVICE SPARE: the spare goes in beside a healthy device and
 * stays (resilvered, across a reopen) until a detach: of the spare (back
 * to AVAIL), or of the device (the spare is a member for good).
 */
static void
test_spare_replace(void)
{
	data_t d = { .n = 0 };
	dev_create(2, DEVSIZE);
	dev_create(3, DEVSIZE);
	spa_t *spa = pool_create("mirror", 0, 2);
	char *sp[] = { paths[2], paths[3] };
	TT_OK(spa_vdev_add_spares(spa, 2, sp, false, errbuf, sizeof (errbuf)));
	data_add(spa, &d, 8, 256 * KiB, 2);
	TT_OK(spa_vdev_replace(spa, paths[1], paths[2], false, errbuf, sizeof (errbuf)));
	expect_healthy(spa);
	TT_CHECK(spare_in(spa));                     /* not given back at the end */
	vdev_t *g = vdev_child(vdev_child(spa_root_vdev(spa), 0), 1);
	TT_EQ(vdev_type(g), VDEV_TYPE_SPARE);
	TT_CHECK(!vdev_spare_auto(g));
	TT_CHECK(vdev_dtl_empty(vdev_child(g, 1)));  /* resilvered */
	TT_CHECK(spa_spare_in_use(spa, vdev_child(vdev_spares(spa_root_vdev(spa)), 0)));
	/* in use: not again, and no second spare beside the same device */
	TT_EQ(spa_vdev_replace(spa, paths[0], paths[2], false, errbuf, sizeof (errbuf)), EBUSY);
	TT_EQ(spa_vdev_replace(spa, paths[1], paths[3], false, errbuf, sizeof (errbuf)), EBUSY);
	scrub_clean(spa);
	spa_close(spa);
	spa = pool_open((const int[]){ 0, 1, 2, 3, -1 });
	expect_healthy(spa);
	TT_CHECK(spare_in(spa));
	data_verify(spa, &d);
	/* detach the spare: AVAIL again */
	TT_OK(spa_vdev_detach(spa, paths[2], errbuf, sizeof (errbuf)));
	TT_CHECK(!spare_in(spa));
	TT_CHECK(!spa_spare_in_use(spa, vdev_child(vdev_spares(spa_root_vdev(spa)), 0)));
	TT_CHECK(vdev_leaf_ready(vdev_child(vdev_spares(spa_root_vdev(spa)), 0)));
	TT_EQ(vdev_children(vdev_spares(spa_root_vdev(spa))), 2);
	/* again, then detach the device: the spare stays for good */
	TT_OK(spa_vdev_replace(spa, paths[1], paths[3], false, errbuf, sizeof (errbuf)));
	expect_healthy(spa);
	TT_CHECK(spare_in(spa));
	TT_OK(spa_vdev_detach(spa, paths[1], errbuf, sizeof (errbuf)));
	TT_CHECK(!spare_in(spa));
	vdev_t *m = vdev_child(spa_root_vdev(spa), 0);
	TT_CHECK(strcmp(vdev_path(vdev_child(m, 1)), paths[3]) == 0);
	TT_EQ(vdev_children(vdev_spares(spa_root_vdev(spa))), 1);
	TT_CHECK(strcmp(vdev_path(vdev_child(vdev_spares(spa_root_vdev(spa)), 0)),
	    paths[2]) == 0);
	spa_close(spa);
	spa = pool_open((const int[]){ 0, 2, 3, -1 });
	expect_healthy(spa);
	TT_CHECK(strcmp(vdev_path(vdev_child(vdev_child(spa_root_vdev(spa), 0), 1)),
	    paths[3]) == 0);
	TT_EQ(vdev_children(vdev_spares(spa_root_vdev(spa))), 1);
	data_verify(spa, &d);
	scrub_clean(spa);
	spa_close(spa);
	dev_remove_all();
}

/* Bad input: one-line errors, nothing changed. */
static void
test_bad_input(void)
{
	spa_t *spa = pool_create("raidz", 0, 3);
	dev_create(3, DEVSIZE);
	dev_create(4, 16 * MiB);
	vdev_t *rz = vdev_child(spa_root_vdev(spa), 0);
	uint64_t sum = vdev_guid_sum(spa_root_vdev(spa));
	struct { int e; int rc; } cases[] = {
		{ ENODEV, spa_vdev_attach(spa, "nosuch", paths[3], false, errbuf, sizeof (errbuf)) },
		{ ENOTSUP, spa_vdev_attach(spa, paths[0], paths[3], false, errbuf, sizeof (errbuf)) },
		{ ENOTSUP, spa_vdev_detach(spa, paths[0], errbuf, sizeof (errbuf)) },
		{ ENODEV, spa_vdev_detach(spa, "/no/such", errbuf, sizeof (errbuf)) },
		{ EOVERFLOW, spa_vdev_replace(spa, paths[0], paths[4], false, errbuf, sizeof (errbuf)) },
		{ EBUSY, spa_vdev_replace(spa, paths[0], paths[2], false, errbuf, sizeof (errbuf)) },
		{ ENOENT, spa_vdev_replace(spa, paths[0], "/no/such/dev", false, errbuf, sizeof (errbuf)) },
		{ ENODEV, spa_vdev_online(spa, "d9", errbuf, sizeof (errbuf)) },
		{ ENODEV, spa_vdev_clear(spa, "d9", errbuf, sizeof (errbuf)) },
		{ EINVAL, spa_vdev_add_spares(spa, 0, NULL, false, errbuf, sizeof (errbuf)) },
		{ EOVERFLOW, spa_vdev_add_spares(spa, 1, (char *[]){ paths[4] }, false, errbuf, sizeof (errbuf)) },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		if (cases[i].rc != cases[i].e)
			fprintf(stderr, "  case %zu: %d, expected %d\n", i, cases[i].rc, cases[i].e);
		TT_CHECK(cases[i].rc == cases[i].e);
	}
	TT_EQ(vdev_guid_sum(spa_root_vdev(spa)), sum);
	TT_EQ(vdev_children(rz), 3);
	/* lookups: path, basename, GUID */
	char g[32];
	vdev_t *l0 = spa_lookup_leaf(spa, "d0");
	TT_ASSERT(l0 != NULL);
	snprintf(g, sizeof (g), "%" PRIu64, vdev_guid(l0));
	TT_CHECK(spa_lookup_leaf(spa, g) == l0);
	TT_CHECK(spa_lookup_leaf(spa, paths[0]) == l0);
	TT_OK(spa_vdev_clear(spa, NULL, errbuf, sizeof (errbuf)));
	spa_close(spa);
	/* a device of another (active) pool is refused without -f */
	spa_t *other = pool_create(NULL, 5, 1);
	spa = pool_open((const int[]){ 0, 1, 2, -1 });
	TT_EQ(spa_vdev_replace(spa, paths[0], paths[5], false, errbuf, sizeof (errbuf)), EBUSY);
	TT_CHECK(strstr(errbuf, "-f") != NULL);
	spa_close(spa);
	spa_close(other);
	/* read-only pools refuse every change */
	spa_import_opts_t o;
	memset(&o, 0, sizeof (o));
	o.sio_no_cache = true;
	o.sio_flags = SPA_OPEN_READONLY;
	const char *pv[] = { paths[0], paths[1], paths[2] };
	TT_OK(spa_open_paths(pv, 3, &o, &spa, errbuf, sizeof (errbuf)));
	TT_EQ(spa_vdev_offline(spa, paths[0], true, errbuf, sizeof (errbuf)), EROFS);
	spa_close(spa);
	dev_remove_all();
}

static void
test_cleanup(void)
{
	tt_tmpdir_cleanup();
}

TT_MAIN(
	{ "attach_detach", test_attach_detach },
	{ "raidz_wipe_replace", test_raidz_wipe_replace },
	{ "replace_same", test_replace_same },
	{ "replace_healthy", test_replace_healthy },
	{ "changes_under_load", test_changes_under_load },
	{ "walk_during_replace", test_walk_during_replace },
	{ "add_top", test_add_top },
	{ "add_powercut", test_add_powercut },
	{ "add_sync_fails", test_add_sync_fails },
	{ "offline_online", test_offline_online },
	{ "offline_persist", test_offline_persist },
	{ "missing_at_import", test_missing_at_import },
	{ "stale_copy", test_stale_copy },
	{ "offline_refused", test_offline_refused },
	{ "hot_spare", test_hot_spare },
	{ "spare_replace", test_spare_replace },
	{ "bad_input", test_bad_input },
	{ "cleanup", test_cleanup },
)
