/*
 * Unit tests of package streams (host_send_pkg.c, host_recv_pkg.c) on a
 * pool of sparse files, in process (no daemon, no mounts), the stream in
 * memory:
 *  - a round trip of send -R: every file system and snapshot arrives,
 *    with the source's snapshot guids; a second receive of the same
 *    package skips everything (all there by guid) and succeeds;
 *  - send -I: the snapshots between arrive;
 *  - hostile package headers (not JSON, not an object, another version,
 *    file systems that are not objects, a substream outside the sent
 *    tree): refused with a report, nothing created, never a crash;
 *  - the package cut at sampled points: each receive fails with a report
 *    and, cut inside the first substream, the target does not appear.
 */
#include "tt.h"
#include "tt_pool.h"
#include "host_impl.h"

/* ---- the stream in memory ---- */

typedef struct membuf {
	uint8_t *mb_buf;
	size_t   mb_len, mb_cap, mb_off;
} membuf_t;

static int
mem_write(void *arg, const void *buf, size_t len)
{
	membuf_t *m = arg;
	if (m->mb_len + len > m->mb_cap) {
		m->mb_cap = (m->mb_len + len) * 2;
		m->mb_buf = tarn_realloc(m->mb_buf, m->mb_cap);
	}
	memcpy(m->mb_buf + m->mb_len, buf, len);
	m->mb_len += len;
	return (0);
}

static ssize_t
mem_read(void *arg, void *buf, size_t len)
{
	membuf_t *m = arg;
	size_t n = MIN(len, m->mb_len - m->mb_off);
	memcpy(buf, m->mb_buf + m->mb_off, n);
	m->mb_off += n;
	return ((ssize_t)n);
}

static int pkg_nreports;

static void
pkg_reporter(const char *verb, const char *name, int error, const char *msg)
{
	(void) verb; (void) name; (void) error; (void) msg;
	pkg_nreports++;
}

/* Receive len bytes of m as a package into target: 0 or HOST_FAILED. */
static int
recv_mem(dsl_pool_t *dp, const membuf_t *m, size_t len, const char *target, int flags)
{
	membuf_t in = { .mb_buf = m->mb_buf, .mb_len = len };
	host_recv_args_t a = { .hra_flags = flags };
	dsl_stream_in_t *si = dsl_stream_in_create(mem_read, &in);
	dsl_stream_kind_t kind;
	dsl_stream_begin_t b;
	char err[256];
	int r = dsl_stream_peek(si, &kind, &b, err, sizeof (err));
	if (r != 0 || kind != DSL_STREAM_PACKAGE)
		r = HOST_FAILED;
	else
		r = host_recv_package(dp, &a, target, si);
	dsl_stream_in_destroy(si);
	return (r);
}

static void
send_mem(dsl_pool_t *dp, const host_send_args_t *a, membuf_t *m)
{
	dsl_stream_out_t *so = dsl_stream_out_create(mem_write, m);
	TT_OK(host_send_package(dp, a, so));
	dsl_stream_out_destroy(so);
}

static uint64_t
snap_guid(dsl_pool_t *dp, const char *snap)
{
	dsl_snap_info_t si;
	char err[256];
	if (dsl_snapshot_info(dp, snap, &si, err, sizeof (err)) != 0)
		return (0);
	return (si.dsi_guid);
}

static void
make_tree(dsl_pool_t *dp)
{
	char err[256];
	const char *s1 = "tank/a@1", *s2 = "tank/a@2", *s3 = "tank/a@3";

	TT_OK(dsl_dataset_create(dp, "tank/a", false, NULL, 0, err, sizeof (err)));
	TT_OK(dsl_dataset_create(dp, "tank/a/b", false, NULL, 0, err, sizeof (err)));
	TT_OK(dsl_dataset_create(dp, "tank/a/b/c", false, NULL, 0, err, sizeof (err)));
	TT_OK(dsl_snapshot_create(dp, &s1, 1, true, NULL, 0, err, sizeof (err)));
	TT_OK(dsl_snapshot_create(dp, &s2, 1, true, NULL, 0, err, sizeof (err)));
	TT_OK(dsl_snapshot_create(dp, &s3, 1, true, NULL, 0, err, sizeof (err)));
}

static void
test_round_trip(dsl_pool_t *dp)
{
	host_send_args_t a = { .hsa_snap = "tank/a@3", .hsa_replicate = true };
	membuf_t m = { 0 };

	send_mem(dp, &a, &m);
	TT_OK(recv_mem(dp, &m, m.mb_len, "tank/copy", 0));
	const char *pairs[][2] = { { "tank/a@1", "tank/copy@1" }, { "tank/a@3", "tank/copy@3" },
		{ "tank/a/b@2", "tank/copy/b@2" }, { "tank/a/b/c@3", "tank/copy/b/c@3" } };
	for (size_t i = 0; i < sizeof (pairs) / sizeof (pairs[0]); i++) {
		uint64_t g = snap_guid(dp, pairs[i][1]);
		TT_CHECK(g != 0 && g == snap_guid(dp, pairs[i][0]));
	}
	/* again: everything is there by guid, nothing to do */
	TT_OK(recv_mem(dp, &m, m.mb_len, "tank/copy", 0));

	/* -I without -R: the snapshots between */
	host_send_args_t i = { .hsa_snap = "tank/a/b@3", .hsa_from = "@1",
		.hsa_intermediate = true };
	membuf_t mi = { 0 }, mf = { 0 };
	host_send_args_t f = { .hsa_snap = "tank/a/b@1", .hsa_intermediate = true,
		.hsa_from = NULL };
	send_mem(dp, &f, &mf);
	TT_OK(recv_mem(dp, &mf, mf.mb_len, "tank/ib", 0));
	send_mem(dp, &i, &mi);
	TT_OK(recv_mem(dp, &mi, mi.mb_len, "tank/ib", 0));
	TT_CHECK(snap_guid(dp, "tank/ib@2") == snap_guid(dp, "tank/a/b@2"));
	TT_CHECK(snap_guid(dp, "tank/ib@3") == snap_guid(dp, "tank/a/b@3"));
	tarn_free(m.mb_buf);
	tarn_free(mi.mb_buf);
	tarn_free(mf.mb_buf);
}

/* A package with this header and the substreams of snaps (full, then incremental). */
static void
hostile_one(dsl_pool_t *dp, const char *header, const char *const *snaps, int n,
    const char *target)
{
	membuf_t m = { 0 };
	dsl_stream_out_t *so = dsl_stream_out_create(mem_write, &m);
	char err[256];

	TT_OK(dsl_stream_put_package(so, header, strlen(header)));
	for (int i = 0; i < n; i++) {
		dsl_send_opts_t o = { .dso_from = i > 0 ? snaps[i - 1] : NULL };
		TT_OK(dsl_send(dp, snaps[i], &o, so, err, sizeof (err)));
	}
	TT_OK(dsl_stream_put_package_end(so));
	dsl_stream_out_destroy(so);
	pkg_nreports = 0;
	TT_EQ(recv_mem(dp, &m, m.mb_len, target, 0), HOST_FAILED);
	TT_CHECK(pkg_nreports > 0);
	TT_CHECK(!dsl_dataset_exists(dp, target));
	tarn_free(m.mb_buf);
}

static void
test_hostile_headers(dsl_pool_t *dp)
{
	const char *snaps[] = { "tank/a@1", "tank/a@2" };
	const char *bad[] = {
		"", "not json", "[1, 2]", "{\"version\": 2, \"toname\": \"tank/a@2\", \"fss\": []}",
		"{\"version\": 1}", "{\"version\": 1, \"toname\": \"tank/a\", \"fss\": []}",
		"{\"version\": 1, \"toname\": \"tank/a@2\", \"fss\": [1, \"x\"]}",
		"{\"version\": 1, \"toname\": \"tank/a@2\", \"fss\": [{\"name\": 3}]}",
		/* the substreams are tank/a's, not below the sent top tank/zz */
		"{\"version\": 1, \"toname\": \"tank/zz@2\", \"fss\": []}",
	};
	for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
		hostile_one(dp, bad[i], snaps, 2, "tank/hostile");
}

static void
test_cuts(dsl_pool_t *dp)
{
	host_send_args_t a = { .hsa_snap = "tank/a@3", .hsa_replicate = true };
	membuf_t m = { 0 };
	char target[64];

	send_mem(dp, &a, &m);
	for (int k = 0; k < 24; k++) {
		size_t cut = m.mb_len * (size_t)k / 24;
		(void) snprintf(target, sizeof (target), "tank/cut%d", k);
		pkg_nreports = 0;
		TT_EQ(recv_mem(dp, &m, cut, target, 0), HOST_FAILED);
		/* the failure is reported (a cut before the package record: by the peek) */
		TT_CHECK(pkg_nreports > 0 || cut < 200);
		if (cut < m.mb_len / 12)
			TT_CHECK(!dsl_dataset_exists(dp, target));
	}
	tarn_free(m.mb_buf);
}

static void
test_packages(void)
{
	tt_pool_devs_t devs;
	dsl_pool_t *dp;

	tt_pool_files(&devs, 1, 256ull << 20);
	spa_t *spa = tt_pool_create(&devs, "tank", NULL, NULL);
	TT_OK(dsl_pool_open(spa, host_fs_init, NULL, &dp));
	host_set_reporter(pkg_reporter);
	make_tree(dp);
	test_round_trip(dp);
	test_hostile_headers(dp);
	test_cuts(dp);
	host_set_reporter(NULL);
	dsl_pool_close(dp);
	spa_close(spa);
	tt_pool_files_remove(&devs);
}

TT_MAIN(
	{ "packages", test_packages },
)
