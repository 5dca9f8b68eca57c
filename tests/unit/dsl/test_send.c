/*
 * Unit tests of send and receive (lib/dsl/dsl_send.c, dsl_recv.c,
 * dsl_recv_commit.c, dsl_stream.c, lib/dmu/dmu_send.c) on a real pool
 * of file vdevs.  Streams go to and from memory.  What is checked:
 *  - a full stream rebuilds the snapshot exactly: the same guid, the same
 *    object numbers, and each object's type, block size, bonus (type,
 *    length, bytes), size and every data byte (holes read as zeros);
 *  - incremental streams from a snapshot and from a bookmark carry
 *    overwrites, freed and new objects, truncations and punched holes;
 *    and (incremental_reuse) object numbers whose object changed since
 *    the base: freed and claimed again with another type and block size,
 *    or a one-block object whose block size grew;
 *  - a target changed since its base is refused (ETXTBSY) without -F and
 *    rolled back with it; a missing base, or a full stream into an
 *    existing file system, is refused and changes nothing;
 *  - a damaged stream (a flipped byte anywhere, a cut at any record
 *    boundary or byte) is refused naming the record, and leaves the
 *    target as it was, with no work dataset left behind;
 *  - resumable receives: a cut stream leaves a token, send -t of the rest
 *    completes it (also twice in a row), -A drops the state, and a
 *    stream that is not the resume is refused (EBUSY);
 *  - -c keeps blocks compressed as stored, a plain stream stores them as
 *    the target's compression says;
 *  - destroying what was received gives the pool's space back and a full
 *    verify (and a reopen) finds nothing wrong;
 *  - the swap callback runs for receives that replace a file system's
 *    state, not for a new file system, and its refusal changes nothing;
 *  - a stream costs about the data it carries (stream_size);
 *  - a hostile stream (fields resealed under valid checksums) is refused
 *    or taken without hanging the receive or a later destroy.
 * TT_DUMP=file writes the last stream sent to file (to look at it).
 */
#include "tt.h"
#include "tt_pool.h"
#include "spa.h"
#include "dsl.h"

#include <signal.h>
#include <xxhash.h>

/*
 * Damaged streams: every byte of the first DAMAGE_HEAD, then a sample.
 * Under the sanitizers (CI runs the suite twice) each refused receive
 * costs several times as much, so the sample is thinner there.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
#define DAMAGE_HEAD   512
#define DAMAGE_SPREAD 5
#else
#define DAMAGE_HEAD   2048
#define DAMAGE_SPREAD 1
#endif

static tt_pool_devs_t devs;
static char err[1024];
static bool quiet;              /* refusals expected: do not print them */
#define MB (1 * MiB)

/*
 * The pools live on tmpfs when there is one (TARN_TEST_TMP overrides):
 * the damage cases run thousands of receives, each a few txg syncs.
 */
__attribute__((constructor)) static void
tmp_on_shm(void)
{
	if (getenv("TARN_TEST_TMP") == NULL && access("/dev/shm", W_OK) == 0)
		(void) setenv("TARN_TEST_TMP", "/dev/shm", 0);
}

/* ---- streams in memory ---- */

typedef struct mbuf {
	uint8_t *mb_buf;
	size_t   mb_len, mb_cap;
} mbuf_t;

static int
mb_write(void *arg, const void *buf, size_t len)
{
	mbuf_t *mb = arg;
	if (mb->mb_len + len > mb->mb_cap) {
		size_t cap = MAX(mb->mb_cap * 2, mb->mb_len + len + 64 * KiB);
		uint8_t *n = tarn_alloc(cap);
		if (mb->mb_len > 0)
			memcpy(n, mb->mb_buf, mb->mb_len);
		tarn_free(mb->mb_buf);
		mb->mb_buf = n;
		mb->mb_cap = cap;
	}
	memcpy(mb->mb_buf + mb->mb_len, buf, len);
	mb->mb_len += len;
	return (0);
}

static void
mb_free(mbuf_t *mb)
{
	tarn_free(mb->mb_buf);
	memset(mb, 0, sizeof (*mb));
}

typedef struct rd {
	const uint8_t *rd_buf;
	size_t rd_len, rd_pos;
} rd_t;

/* Short reads on purpose (an odd chunk size), as a pipe gives them. */
static ssize_t
rd_read(void *arg, void *buf, size_t len)
{
	rd_t *r = arg;
	size_t n = MIN(len, MIN(r->rd_len - r->rd_pos, (size_t)100003));
	memcpy(buf, r->rd_buf + r->rd_pos, n);
	r->rd_pos += n;
	return ((ssize_t)n);
}

static int
send_opts(dsl_pool_t *dp, const char *snap, const dsl_send_opts_t *o, mbuf_t *mb)
{
	mb->mb_len = 0;
	dsl_stream_out_t *so = dsl_stream_out_create(mb_write, mb);
	int e = dsl_send(dp, snap, o, so, err, sizeof (err));
	if (e != 0)
		fprintf(stderr, "  send %s: %s\n", snap, err);
	dsl_stream_out_destroy(so);
	if (getenv("TT_DUMP") != NULL) {        /* the last stream sent, to look at */
		FILE *f = fopen(getenv("TT_DUMP"), "w");
		if (f != NULL) {
			(void) fwrite(mb->mb_buf, 1, mb->mb_len, f);
			(void) fclose(f);
		}
	}
	return (e);
}

static int
send_to(dsl_pool_t *dp, const char *snap, const char *from, int flags, mbuf_t *mb)
{
	dsl_send_opts_t o = { .dso_from = from, .dso_flags = flags };
	return (send_opts(dp, snap, &o, mb));
}

typedef struct swapctx {
	int  calls;
	char name[DSL_NAME_MAX];
	int  refuse;            /* return this without committing */
} swapctx_t;

static int
swap_fn(void *arg, const char *name, dsl_recv_commit_fn_t commit, void *cookie)
{
	swapctx_t *c = arg;
	c->calls++;
	(void) snprintf(c->name, sizeof (c->name), "%s", name);
	if (c->refuse != 0)
		return (c->refuse);
	return (commit(cookie));
}

static int
recv_swap(dsl_pool_t *dp, const char *target, int flags, const uint8_t *buf, size_t len,
    swapctx_t *sw, const dsl_prop_setting_t *props, int nprops)
{
	rd_t r = { buf, len, 0 };
	dsl_stream_in_t *si = dsl_stream_in_create(rd_read, &r);
	dsl_recv_opts_t o = { .dro_flags = flags, .dro_props = props, .dro_nprops = nprops,
		.dro_swap = sw != NULL ? swap_fn : NULL, .dro_swap_arg = sw };
	dsl_recv_result_t res;
	int e = dsl_receive(dp, target, &o, si, &res, err, sizeof (err));
	if (e == 0)
		tarn_free(res.drr_props);
	else if (!quiet)
		fprintf(stderr, "  (receive %s: %d %s)\n", target, e, err);
	dsl_stream_in_destroy(si);
	return (e);
}

static int
recv_buf(dsl_pool_t *dp, const char *target, int flags, const uint8_t *buf, size_t len)
{
	return (recv_swap(dp, target, flags, buf, len, NULL, NULL, 0));
}

static void
recv_ok(dsl_pool_t *dp, const char *target, int flags, const mbuf_t *mb)
{
	TT_OK(recv_buf(dp, target, flags, mb->mb_buf, mb->mb_len));
}

/* ---- making content ---- */

static void
sync_all(dsl_pool_t *dp)
{
	TT_OK(txg_wait_synced(spa_dmu_pool(dsl_pool_spa(dp)), 0));
}

static objset_t *
fs_os(dsl_pool_t *dp, const char *fs)
{
	objset_t *os;
	TT_OK(dsl_dataset_objset(dp, fs, &os));
	return (os);
}

/* A new object (obj 0) or a claimed number; returns the number. */
static uint64_t
mkobj(objset_t *os, uint64_t obj, dmu_object_type_t type, uint32_t blksz,
    dmu_object_type_t btype, uint32_t blen)
{
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_space(tx, 64 * KiB);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	if (obj == 0)
		TT_OK(dmu_object_alloc(os, type, blksz, btype, blen, tx, &obj));
	else
		TT_OK(dmu_object_claim(os, obj, type, blksz, btype, blen, tx));
	dmu_tx_commit(tx);
	return (obj);
}

/* len bytes of seed's content at off (seed 0: compressible text) */
static void
wr(objset_t *os, uint64_t obj, uint64_t off, uint64_t len, uint64_t seed)
{
	uint8_t *buf = tarn_alloc(len);
	tt_fill(buf, len, seed);
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_write(tx, obj, off, len);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_write(os, obj, off, len, buf, tx));
	dmu_tx_commit(tx);
	tarn_free(buf);
}

/* Compressible bytes: lines of text that vary a little. */
static void
wr_text(objset_t *os, uint64_t obj, uint64_t off, uint64_t len, uint64_t seed)
{
	uint8_t *buf = tarn_alloc(len);
	size_t o = 0;
	for (uint64_t i = 0; o < len; i++) {
		char line[96];
		int n = snprintf(line, sizeof (line), "line %" PRIu64 " of object %" PRIu64
		    ": the quick brown fox jumps over the lazy dog\n", i + seed, obj);
		size_t k = MIN((size_t)n, len - o);
		memcpy(buf + o, line, k);
		o += k;
	}
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_write(tx, obj, off, len);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_write(os, obj, off, len, buf, tx));
	dmu_tx_commit(tx);
	tarn_free(buf);
}

static void
bonus(objset_t *os, uint64_t obj, uint32_t len, uint64_t seed)
{
	uint8_t buf[DN_MAX_BONUSLEN];
	tt_fill(buf, len, seed);
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_bonus(tx, obj);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_bonus_write(os, obj, buf, len, tx));
	dmu_tx_commit(tx);
}

static void
free_range(objset_t *os, uint64_t obj, uint64_t off, uint64_t len)
{
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_free(tx, obj, off, len);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_free_range(os, obj, off, len, tx));
	dmu_tx_commit(tx);
}

static void
free_obj(objset_t *os, uint64_t obj)
{
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_free(tx, obj, 0, DMU_OBJECT_END);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_object_free(os, obj, tx));
	dmu_tx_commit(tx);
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

static void
create(dsl_pool_t *dp, const char *fs)
{
	int e = dsl_dataset_create(dp, fs, false, NULL, 0, err, sizeof (err));
	if (e != 0)
		fprintf(stderr, "  create %s: %s\n", fs, err);
	TT_OK(e);
}

/* The objects of the source file system (their numbers). */
typedef struct src {
	uint64_t tiny, fourk, big, sparse, bonus, bonusonly;
	uint64_t many[40];
	int      nmany;
} src_t;

#define SPARSE_FAR (32 * MB)

/* Objects of every kind in fs (created here). */
static void
build_source(dsl_pool_t *dp, const char *fs, src_t *s, int nmany)
{
	create(dp, fs);
	objset_t *os = fs_os(dp, fs);
	s->tiny = mkobj(os, 0, DMU_OT_UINT8, 512, DMU_OT_NONE, 0);
	wr(os, s->tiny, 0, 1, 11);
	s->fourk = mkobj(os, 0, DMU_OT_PLAIN_FILE, 4096, DMU_OT_NONE, 0);
	wr(os, s->fourk, 0, 4096, 12);
	s->big = mkobj(os, 0, DMU_OT_PLAIN_FILE, 128 * KiB, DMU_OT_NONE, 0);
	wr(os, s->big, 0, 5 * 128 * KiB, 13);
	/* a block at the start and one far away: holes (and indirect levels) between */
	s->sparse = mkobj(os, 0, DMU_OT_PLAIN_FILE, 128 * KiB, DMU_OT_NONE, 0);
	wr(os, s->sparse, 0, 64 * KiB, 14);
	wr(os, s->sparse, SPARSE_FAR, 128 * KiB + 100, 15);
	s->bonus = mkobj(os, 0, DMU_OT_PLAIN_FILE, 16 * KiB, DMU_OT_PLAIN_FILE,
	    DN_MAX_BONUSLEN);
	bonus(os, s->bonus, DN_MAX_BONUSLEN, 16);
	wr(os, s->bonus, 0, 10000, 17);
	s->bonusonly = mkobj(os, 0, DMU_OT_TEST, 512, DMU_OT_UINT64, 64);
	bonus(os, s->bonusonly, 64, 18);
	tarn_rand_t r;
	tarn_rand_seed(&r, 0x5e4d);
	s->nmany = nmany;
	for (int i = 0; i < nmany; i++) {
		uint64_t len = 1 + tarn_rand_range(&r, i % 4 == 0 ? 300 * KiB : 20 * KiB);
		uint32_t blksz = 512;
		while (blksz < len && blksz < 128 * KiB)
			blksz *= 2;
		s->many[i] = mkobj(os, 0, i % 3 ? DMU_OT_PLAIN_FILE : DMU_OT_UINT8, blksz,
		    i % 5 == 0 ? DMU_OT_UINT64 : DMU_OT_NONE, i % 5 == 0 ? 8 + (i % 7) * 8 : 0);
		if (i % 5 == 0)
			bonus(os, s->many[i], 8 + (i % 7) * 8, 100 + i);
		wr(os, s->many[i], 0, len, 200 + i);
	}
	sync_all(dp);
}

/* ---- comparing ---- */

static bool
same_object(objset_t *a, objset_t *b, uint64_t obj)
{
	dmu_object_info_t ia, ib;
	if (dmu_object_info(a, obj, &ia) != 0 || dmu_object_info(b, obj, &ib) != 0) {
		fprintf(stderr, "  object %" PRIu64 ": no info\n", obj);
		return (false);
	}
	if (ia.doi_type != ib.doi_type || ia.doi_bonus_type != ib.doi_bonus_type ||
	    ia.doi_data_block_size != ib.doi_data_block_size ||
	    ia.doi_bonus_size != ib.doi_bonus_size || ia.doi_max_offset != ib.doi_max_offset) {
		fprintf(stderr, "  object %" PRIu64 ": type %d/%d bonus type %d/%d block %u/%u "
		    "bonus %u/%u size %" PRIu64 "/%" PRIu64 "\n", obj, ia.doi_type, ib.doi_type,
		    ia.doi_bonus_type, ib.doi_bonus_type, ia.doi_data_block_size,
		    ib.doi_data_block_size, ia.doi_bonus_size, ib.doi_bonus_size,
		    ia.doi_max_offset, ib.doi_max_offset);
		return (false);
	}
	bool ok = true;
	if (ia.doi_bonus_size > 0) {
		uint8_t ba[DN_MAX_BONUSLEN], bb[DN_MAX_BONUSLEN];
		ok = dmu_bonus_read(a, obj, ba, ia.doi_bonus_size) == 0 &&
		    dmu_bonus_read(b, obj, bb, ib.doi_bonus_size) == 0 &&
		    memcmp(ba, bb, ia.doi_bonus_size) == 0;
		if (!ok)
			fprintf(stderr, "  object %" PRIu64 ": bonus differs\n", obj);
	}
	uint8_t *da = tarn_alloc(1 * MB), *db = tarn_alloc(1 * MB);
	for (uint64_t off = 0; ok && off < ia.doi_max_offset; off += 1 * MB) {
		uint64_t n = MIN(1 * MB, ia.doi_max_offset - off);
		int ea = dmu_read(a, obj, off, n, da), eb = dmu_read(b, obj, off, n, db);
		ok = ea == 0 && eb == 0 && memcmp(da, db, n) == 0;
		if (!ok)
			fprintf(stderr, "  object %" PRIu64 ": data differs at %" PRIu64
			    " (%d %d)\n", obj, off, ea, eb);
	}
	tarn_free(da);
	tarn_free(db);
	return (ok);
}

static bool
same_objset(objset_t *a, objset_t *b)
{
	uint64_t oa = 0, ob = 0;
	int n = 0;
	for (;;) {
		int ea = dmu_object_next(a, &oa), eb = dmu_object_next(b, &ob);
		if (ea == ESRCH && eb == ESRCH)
			return (true);
		if (ea != 0 || eb != 0 || oa != ob) {
			fprintf(stderr, "  object lists differ after %d objects: %" PRIu64
			    " (%d) vs %" PRIu64 " (%d)\n", n, oa, ea, ob, eb);
			return (false);
		}
		if (!same_object(a, b, oa))
			return (false);
		n++;
	}
}

static uint64_t
guid_of(dsl_pool_t *dp, const char *snapname)
{
	dsl_snap_info_t si;
	if (dsl_snapshot_info(dp, snapname, &si, err, sizeof (err)) != 0) {
		fprintf(stderr, "  %s: %s\n", snapname, err);
		return (0);
	}
	return (si.dsi_guid);
}

/* Snapshot b is snapshot a: same guid, same objects; and fs (if not NULL) reads as b. */
static bool
same_snap(dsl_pool_t *dp, const char *a, const char *b, const char *fs)
{
	uint64_t ga = guid_of(dp, a), gb = guid_of(dp, b);
	if (ga == 0 || ga != gb) {
		fprintf(stderr, "  guid of %s %" PRIx64 " vs %s %" PRIx64 "\n", a, ga, b, gb);
		return (false);
	}
	objset_t *oa, *ob;
	TT_OK(dsl_snapshot_objset_open(dp, a, &oa, err, sizeof (err)));
	TT_OK(dsl_snapshot_objset_open(dp, b, &ob, err, sizeof (err)));
	bool ok = same_objset(oa, ob);
	if (ok && fs != NULL)
		ok = same_objset(oa, fs_os(dp, fs));
	dsl_snapshot_objset_close(dp, oa);
	dsl_snapshot_objset_close(dp, ob);
	if (!ok)
		fprintf(stderr, "  %s differs from %s\n", b, a);
	return (ok);
}

static int
nsnaps(dsl_pool_t *dp, const char *fs)
{
	dsl_snap_info_t *si;
	int n;
	if (dsl_snapshot_list(dp, fs, &si, &n, err, sizeof (err)) != 0)
		return (-1);
	tarn_free(si);
	return (n);
}

static bool
has_work(dsl_pool_t *dp, const char *fs)
{
	char w[DSL_NAME_MAX];
	(void) snprintf(w, sizeof (w), "%s/%%recv", fs);
	return (dsl_dataset_exists(dp, w));
}

static dsl_pool_t *
pool_up(spa_t **spap, uint64_t size)
{
	tt_pool_files(&devs, 1, size);
	*spap = tt_pool_create(&devs, "p", NULL, NULL);
	dsl_pool_t *dp;
	TT_OK(dsl_pool_open(*spap, NULL, NULL, &dp));
	return (dp);
}

static void
pool_down(spa_t *spa, dsl_pool_t *dp)
{
	dsl_pool_close(dp);
	spa_close(spa);
	tt_pool_files_remove(&devs);
}

static void
verify_all(spa_t *spa)
{
	uint64_t blocks, errors;
	TT_OK(spa_verify_all(spa, true, &blocks, &errors));
	TT_EQ(errors, 0);
}

/* ---- the cases ---- */

static void
test_full(void)
{
	spa_t *spa;
	dsl_pool_t *dp = pool_up(&spa, 512 * MB);
	src_t s;
	build_source(dp, "p/a", &s, 40);
	snap(dp, "p/a@snap");
	/* the file system goes on changing: the stream is the snapshot's */
	wr(fs_os(dp, "p/a"), s.big, 0, 4096, 99);
	mbuf_t mb = { 0 };
	TT_OK(send_to(dp, "p/a@snap", NULL, 0, &mb));
	TT_CHECK(mb.mb_len > 3 * MB);
	/* what the begin record says */
	rd_t r = { mb.mb_buf, mb.mb_len, 0 };
	dsl_stream_in_t *si = dsl_stream_in_create(rd_read, &r);
	dsl_stream_kind_t kind;
	dsl_stream_begin_t b;
	TT_OK(dsl_stream_peek(si, &kind, &b, err, sizeof (err)));
	TT_EQ(kind, DSL_STREAM_BEGIN);
	TT_CHECK(strcmp(b.dsb_toname, "p/a@snap") == 0);
	TT_EQ(b.dsb_toguid, guid_of(dp, "p/a@snap"));
	TT_EQ(b.dsb_fromguid, 0);
	dsl_stream_in_destroy(si);
	/* an estimate within reason of the real size */
	uint64_t est = 0;
	dsl_send_opts_t o = { 0 };
	TT_OK(dsl_send_estimate(dp, "p/a@snap", &o, &est, err, sizeof (err)));
	TT_CHECK(est >= mb.mb_len / 2 && est <= mb.mb_len * 2);

	swapctx_t sw = { 0 };
	rd_t r2 = { mb.mb_buf, mb.mb_len, 0 };
	si = dsl_stream_in_create(rd_read, &r2);
	dsl_recv_opts_t ro = { .dro_swap = swap_fn, .dro_swap_arg = &sw };
	dsl_recv_result_t res;
	TT_OK(dsl_receive(dp, "p/b", &ro, si, &res, err, sizeof (err)));
	TT_CHECK(strcmp(res.drr_snap, "p/b@snap") == 0);
	TT_CHECK(res.drr_created);
	TT_EQ(res.drr_bytes, mb.mb_len);
	tarn_free(res.drr_props);
	/* and the input is at its clean end */
	TT_OK(dsl_stream_peek(si, &kind, NULL, err, sizeof (err)));
	TT_EQ(kind, DSL_STREAM_EOF);
	dsl_stream_in_destroy(si);
	TT_EQ(sw.calls, 0);         /* a new file system needs no swap */
	TT_CHECK(same_snap(dp, "p/a@snap", "p/b@snap", "p/b"));
	/* the sparse object kept its holes as holes: it takes ~2 blocks, not 32 MiB */
	objset_t *os;
	TT_OK(dsl_snapshot_objset_open(dp, "p/b@snap", &os, err, sizeof (err)));
	dmu_object_info_t doi;
	TT_OK(dmu_object_info(os, s.sparse, &doi));
	TT_CHECK(doi.doi_fill_count <= 3);
	TT_CHECK(doi.doi_physical_bytes < 2 * MB);
	dsl_snapshot_objset_close(dp, os);
	/* the same stream into a target named with the snapshot */
	recv_ok(dp, "p/c@other", 0, &mb);
	TT_CHECK(guid_of(dp, "p/c@other") == guid_of(dp, "p/a@snap"));
	TT_CHECK(same_snap(dp, "p/a@snap", "p/c@other", "p/c"));
	/* across a close and open, with every block verified */
	verify_all(spa);
	dsl_pool_close(dp);
	spa_close(spa);
	spa = tt_pool_reopen(&devs, 0, NULL);
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	TT_CHECK(same_snap(dp, "p/a@snap", "p/b@snap", "p/b"));
	verify_all(spa);
	mb_free(&mb);
	pool_down(spa, dp);
}

/* Changes of every kind to the source after its first snapshot. */
static void
change_source(dsl_pool_t *dp, const char *fs, src_t *s, uint64_t seed)
{
	objset_t *os = fs_os(dp, fs);
	wr(os, s->big, 130 * KiB, 10000, seed);             /* part of a block */
	wr(os, s->sparse, 8 * MB, 4096, seed + 1);          /* into a hole */
	bonus(os, s->bonus, DN_MAX_BONUSLEN, seed + 2);
	dmu_object_info_t doi;
	if (dmu_object_info(os, s->fourk, &doi) == 0)
		free_obj(os, s->fourk);
	int k = (int)(seed / 1000);
	if (dmu_object_info(os, s->many[(3 + k) % s->nmany], &doi) == 0)
		free_obj(os, s->many[(3 + k) % s->nmany]);
	if (dmu_object_info(os, s->many[(2 * k) % s->nmany], &doi) == 0)  /* truncate */
		free_range(os, s->many[(2 * k) % s->nmany], 1000, DMU_OBJECT_END);
	free_range(os, s->big, 2 * 128 * KiB, 128 * KiB);   /* punch a hole */
	free_range(os, s->sparse, 0, 64 * KiB);
	uint64_t n1 = mkobj(os, 0, DMU_OT_PLAIN_FILE, 8192, DMU_OT_NONE, 0);
	wr(os, n1, 0, 8192 * 3, seed + 3);
	uint64_t n2 = mkobj(os, 0, DMU_OT_UINT64, 512, DMU_OT_UINT64, 16);
	bonus(os, n2, 16, seed + 4);
	sync_all(dp);
}

/*
 * Object numbers whose object is not the base's any more: a freed number
 * claimed again with another type, block size and bonus, and an object
 * whose one block grew (its block size changed, as a small file's does
 * when it is appended to).
 */
static void
reuse_objects(dsl_pool_t *dp, const char *fs, src_t *s, uint64_t seed)
{
	objset_t *os = fs_os(dp, fs);
	dmu_object_info_t doi;
	if (dmu_object_info(os, s->fourk, &doi) == 0) {
		free_obj(os, s->fourk);
		sync_all(dp);
	}
	(void) mkobj(os, s->fourk, DMU_OT_UINT8, 32 * KiB, DMU_OT_UINT64, 24);
	bonus(os, s->fourk, 24, seed + 5);
	wr(os, s->fourk, 0, 40000, seed + 6);
	TT_OK(dmu_object_info(os, s->tiny, &doi));
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_write(tx, s->tiny, 0, 2048);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_object_set_blocksize(os, s->tiny, doi.doi_data_block_size * 4, tx));
	dmu_tx_commit(tx);
	wr(os, s->tiny, 0, doi.doi_data_block_size * 4, seed + 7);
	sync_all(dp);
}

static void
test_incremental(void)
{
	spa_t *spa;
	dsl_pool_t *dp = pool_up(&spa, 512 * MB);
	src_t s;
	build_source(dp, "p/a", &s, 20);
	snap(dp, "p/a@1");
	mbuf_t mb = { 0 };
	TT_OK(send_to(dp, "p/a@1", NULL, 0, &mb));
	recv_ok(dp, "p/b", 0, &mb);
	size_t full = mb.mb_len;
	change_source(dp, "p/a", &s, 1000);
	snap(dp, "p/a@2");
	TT_OK(send_to(dp, "p/a@2", "@1", 0, &mb));
	/* an incremental stream costs the change, not the file system */
	TT_CHECK(mb.mb_len < full / 2);
	swapctx_t sw = { 0 };
	TT_OK(recv_swap(dp, "p/b", 0, mb.mb_buf, mb.mb_len, &sw, NULL, 0));
	TT_EQ(sw.calls, 1);
	TT_CHECK(strcmp(sw.name, "p/b") == 0);
	TT_CHECK(same_snap(dp, "p/a@2", "p/b@2", "p/b"));
	TT_CHECK(same_snap(dp, "p/a@1", "p/b@1", NULL));    /* the base is untouched */
	TT_CHECK(!has_work(dp, "p/b"));
	/* the same stream again: the snapshot exists */
	TT_CHECK(recv_buf(dp, "p/b", 0, mb.mb_buf, mb.mb_len) != 0);
	TT_EQ(nsnaps(dp, "p/b"), 2);
	/* the base by its full name, into a new copy at @1 */
	mbuf_t m1 = { 0 };
	TT_OK(send_to(dp, "p/a@1", NULL, 0, &m1));
	recv_ok(dp, "p/c", 0, &m1);
	TT_OK(send_to(dp, "p/a@2", "p/a@1", 0, &m1));
	recv_ok(dp, "p/c", 0, &m1);
	TT_CHECK(same_snap(dp, "p/a@2", "p/c@2", "p/c"));
	mb_free(&m1);
	/* from a bookmark, with the base snapshot gone from the source */
	TT_OK(dsl_bookmark_create(dp, "p/a@2", "p/a#bm", err, sizeof (err)));
	change_source(dp, "p/a", &s, 2000);
	snap(dp, "p/a@3");
	const char *gone[1] = { "p/a@2" };
	TT_OK(dsl_snapshot_destroy(dp, gone, 1, 0, NULL, NULL, NULL, err, sizeof (err)));
	TT_OK(send_to(dp, "p/a@3", "#bm", 0, &mb));
	recv_ok(dp, "p/b", 0, &mb);
	TT_CHECK(same_snap(dp, "p/a@3", "p/b@3", "p/b"));
	/* bad bases are refused by send */
	TT_EQ(send_to(dp, "p/a@1", "@3", 0, &mb), EXDEV);  /* not earlier */
	TT_EQ(send_to(dp, "p/a@3", "@nope", 0, &mb), ENOENT);
	TT_EQ(send_to(dp, "p/a@nope", NULL, 0, &mb), ENOENT);
	verify_all(spa);
	mb_free(&mb);
	pool_down(spa, dp);
}

static void
test_incremental_reuse(void)
{
	spa_t *spa;
	dsl_pool_t *dp = pool_up(&spa, 512 * MB);
	src_t s;
	build_source(dp, "p/a", &s, 6);
	snap(dp, "p/a@1");
	mbuf_t mb = { 0 };
	TT_OK(send_to(dp, "p/a@1", NULL, 0, &mb));
	recv_ok(dp, "p/b", 0, &mb);
	reuse_objects(dp, "p/a", &s, 1000);
	snap(dp, "p/a@2");
	TT_OK(send_to(dp, "p/a@2", "@1", 0, &mb));
	recv_ok(dp, "p/b", 0, &mb);
	TT_CHECK(same_snap(dp, "p/a@2", "p/b@2", "p/b"));
	/* and once more, with everything else changing too */
	change_source(dp, "p/a", &s, 2000);
	reuse_objects(dp, "p/a", &s, 3000);
	snap(dp, "p/a@3");
	TT_OK(send_to(dp, "p/a@3", "@2", 0, &mb));
	recv_ok(dp, "p/b", 0, &mb);
	TT_CHECK(same_snap(dp, "p/a@3", "p/b@3", "p/b"));
	verify_all(spa);
	mb_free(&mb);
	pool_down(spa, dp);
}

static void
test_force(void)
{
	spa_t *spa;
	dsl_pool_t *dp = pool_up(&spa, 512 * MB);
	src_t s;
	build_source(dp, "p/a", &s, 10);
	snap(dp, "p/a@1");
	mbuf_t mb = { 0 };
	TT_OK(send_to(dp, "p/a@1", NULL, 0, &mb));
	recv_ok(dp, "p/b", 0, &mb);
	change_source(dp, "p/a", &s, 1000);
	snap(dp, "p/a@2");
	TT_OK(send_to(dp, "p/a@2", "@1", 0, &mb));
	/* the target changes after its snapshot */
	objset_t *bos = fs_os(dp, "p/b");
	uint64_t stray = mkobj(bos, 0, DMU_OT_UINT8, 4096, DMU_OT_NONE, 0);
	wr(bos, stray, 0, 4096, 77);
	wr(bos, s.big, 0, 128 * KiB, 78);
	sync_all(dp);
	TT_EQ(recv_buf(dp, "p/b", 0, mb.mb_buf, mb.mb_len), ETXTBSY);
	TT_CHECK(strstr(err, "modified") != NULL);
	TT_EQ(nsnaps(dp, "p/b"), 1);
	TT_CHECK(!has_work(dp, "p/b"));
	dmu_object_info_t doi;
	TT_OK(dmu_object_info(fs_os(dp, "p/b"), stray, &doi));    /* still there */
	/* -F: rolled back to the base, then the stream */
	recv_ok(dp, "p/b", DSL_RECV_FORCE, &mb);
	TT_CHECK(same_snap(dp, "p/a@2", "p/b@2", "p/b"));
	TT_CHECK(dmu_object_info(fs_os(dp, "p/b"), stray, &doi) != 0 ||
	    doi.doi_type != DMU_OT_UINT8 || doi.doi_data_block_size != 4096);
	TT_CHECK(!has_work(dp, "p/b"));
	mb_free(&mb);
	pool_down(spa, dp);
}

static void
test_force_later(void)
{
	spa_t *spa;
	dsl_pool_t *dp = pool_up(&spa, 512 * MB);
	src_t s;
	build_source(dp, "p/a", &s, 6);
	snap(dp, "p/a@1");
	mbuf_t full = { 0 }, incr = { 0 };
	TT_OK(send_to(dp, "p/a@1", NULL, 0, &full));
	recv_ok(dp, "p/b", 0, &full);
	change_source(dp, "p/a", &s, 1000);
	snap(dp, "p/a@2");
	TT_OK(send_to(dp, "p/a@2", "@1", 0, &incr));
	/* the target took a snapshot of its own after the base */
	wr(fs_os(dp, "p/b"), s.big, 0, 4096, 5);
	snap(dp, "p/b@mine");
	TT_EQ(recv_buf(dp, "p/b", 0, incr.mb_buf, incr.mb_len), ENOENT);
	TT_CHECK(strstr(err, "does not match incremental source") != NULL);
	TT_EQ(nsnaps(dp, "p/b"), 2);
	recv_ok(dp, "p/b", DSL_RECV_FORCE, &incr);
	TT_EQ(nsnaps(dp, "p/b"), 2);                        /* @1 and @2; @mine went */
	TT_CHECK(guid_of(dp, "p/b@mine") == 0);
	TT_CHECK(same_snap(dp, "p/a@2", "p/b@2", "p/b"));
	mb_free(&full);
	mb_free(&incr);
	pool_down(spa, dp);
}

static void
test_base_missing(void)
{
	spa_t *spa;
	dsl_pool_t *dp = pool_up(&spa, 512 * MB);
	src_t s;
	build_source(dp, "p/a", &s, 6);
	snap(dp, "p/a@1");
	mbuf_t full = { 0 }, incr = { 0 };
	TT_OK(send_to(dp, "p/a@1", NULL, 0, &full));
	change_source(dp, "p/a", &s, 1000);
	snap(dp, "p/a@2");
	TT_OK(send_to(dp, "p/a@2", "@1", 0, &incr));
	/* an incremental stream into nothing */
	TT_EQ(recv_buf(dp, "p/none", 0, incr.mb_buf, incr.mb_len), ENOENT);
	TT_CHECK(strstr(err, "does not exist") != NULL);
	TT_CHECK(!dsl_dataset_exists(dp, "p/none"));
	/* into a file system without the base: a file system of its own */
	create(dp, "p/d");
	objset_t *dos = fs_os(dp, "p/d");
	uint64_t mine = mkobj(dos, 0, DMU_OT_UINT8, 4096, DMU_OT_NONE, 0);
	wr(dos, mine, 0, 4096, 55);
	sync_all(dp);
	snap(dp, "p/d@own");
	TT_EQ(recv_buf(dp, "p/d", 0, incr.mb_buf, incr.mb_len), ENOENT);
	TT_CHECK(strstr(err, "does not match incremental source") != NULL);
	TT_EQ(recv_buf(dp, "p/d", DSL_RECV_FORCE, incr.mb_buf, incr.mb_len), ENOENT);
	/* a full stream into an existing file system, without -F, and -F with snapshots */
	TT_EQ(recv_buf(dp, "p/d", 0, full.mb_buf, full.mb_len), EEXIST);
	TT_CHECK(strstr(err, "exists") != NULL);
	TT_EQ(recv_buf(dp, "p/d", DSL_RECV_FORCE, full.mb_buf, full.mb_len), EEXIST);
	TT_CHECK(strstr(err, "has snapshots") != NULL);
	/* nothing changed: its one snapshot, its one object with its content */
	TT_EQ(nsnaps(dp, "p/d"), 1);
	TT_CHECK(!has_work(dp, "p/d"));
	dos = fs_os(dp, "p/d");
	uint64_t o = 0;
	TT_OK(dmu_object_next(dos, &o));
	TT_EQ(o, mine);
	TT_EQ(dmu_object_next(dos, &o), ESRCH);
	uint8_t want[4096], got[4096];
	tt_fill(want, sizeof (want), 55);
	TT_OK(dmu_read(dos, mine, 0, sizeof (got), got));
	TT_CHECK(memcmp(want, got, sizeof (got)) == 0);
	/* the parent of a new file system must exist */
	TT_EQ(recv_buf(dp, "p/x/y", 0, full.mb_buf, full.mb_len), ENOENT);
	TT_CHECK(!dsl_dataset_exists(dp, "p/x/y"));
	/* an empty stream */
	TT_EQ(recv_buf(dp, "p/e", 0, full.mb_buf, 0), EBADMSG);
	TT_CHECK(!dsl_dataset_exists(dp, "p/e"));
	/* dry run: checks the stream, makes nothing */
	TT_OK(recv_buf(dp, "p/dry", DSL_RECV_DRYRUN, full.mb_buf, full.mb_len));
	TT_CHECK(!dsl_dataset_exists(dp, "p/dry"));
	mb_free(&full);
	mb_free(&incr);
	pool_down(spa, dp);
}

/* Offsets of the records of a stream (FORMAT.md: 96-byte header, u32 plen at 8). */
static int
record_starts(const mbuf_t *mb, size_t *out, int max)
{
	size_t off = 0;
	int n = 0;
	while (off + 96 <= mb->mb_len && n < max) {
		uint32_t plen;
		memcpy(&plen, mb->mb_buf + off + 8, 4);
		out[n++] = off;
		off += 96 + plen;
	}
	TT_EQ(off, mb->mb_len);
	return (n);
}

static bool
refused(int e, const char *what, size_t at)
{
	bool ok = (e == EBADMSG || e == ENOTSUP) && strstr(err, "record") != NULL;
	if (!ok)
		fprintf(stderr, "  %s at %zu: %d \"%s\"\n", what, at, e, err);
	return (ok);
}

/* Damage a stream at many places: each is refused, nothing is left behind. */
static int
damage_all(dsl_pool_t *dp, const mbuf_t *mb, const char *target, const char *fs,
    int snaps_before, size_t dense, size_t stride)
{
	uint8_t *copy = tarn_alloc(mb->mb_len);
	memcpy(copy, mb->mb_buf, mb->mb_len);
	int bad = 0, tries = 0;
	uint64_t t0 = tarn_now_ns();
	quiet = true;
	for (size_t at = 0; at < mb->mb_len; at += at < dense ? 1 : stride) {
		uint8_t flip = (uint8_t)(1u << (at % 8));
		copy[at] ^= flip;
		int e = recv_buf(dp, target, 0, copy, mb->mb_len);
		copy[at] ^= flip;
		tries++;
		bool ok = refused(e, "flip", at);
		if (snaps_before < 0)
			ok = ok && !dsl_dataset_exists(dp, fs);
		else
			ok = ok && nsnaps(dp, fs) == snaps_before && !has_work(dp, fs);
		if (!ok && bad++ < 5)
			fprintf(stderr, "  flip at %zu: left something (%d)\n", at, e);
	}
	/* cut at every record boundary and at a sample of bytes */
	size_t *starts = tarn_alloc(sizeof (size_t) * 100000);
	int n = record_starts(mb, starts, 100000);
	for (int i = 1; i <= n + (int)(mb->mb_len / (stride * 5)); i++) {
		size_t at = i < n ? starts[i] : (size_t)(i - n) * stride * 5 + 7;
		if (at == 0 || at >= mb->mb_len)
			continue;
		int e = recv_buf(dp, target, 0, mb->mb_buf, at);
		tries++;
		bool ok = refused(e, "cut", at);
		if (snaps_before < 0)
			ok = ok && !dsl_dataset_exists(dp, fs);
		else
			ok = ok && nsnaps(dp, fs) == snaps_before && !has_work(dp, fs);
		if (!ok && bad++ < 5)
			fprintf(stderr, "  cut at %zu: left something (%d)\n", at, e);
	}
	/* a record repeated, and two records swapped, numbering and all */
	if (n > 3) {
		size_t l1 = starts[2] - starts[1], l2 = starts[3] - starts[2];
		uint8_t *rep = tarn_alloc(mb->mb_len + l1);
		memcpy(rep, mb->mb_buf, starts[2]);
		memcpy(rep + starts[2], mb->mb_buf + starts[1], l1);
		memcpy(rep + starts[2] + l1, mb->mb_buf + starts[2], mb->mb_len - starts[2]);
		bad += !refused(recv_buf(dp, target, 0, rep, mb->mb_len + l1), "repeat", 1);
		memcpy(rep, mb->mb_buf, mb->mb_len);
		memcpy(rep + starts[1], mb->mb_buf + starts[2], l2);
		memcpy(rep + starts[1] + l2, mb->mb_buf + starts[1], l1);
		bad += !refused(recv_buf(dp, target, 0, rep, mb->mb_len), "swap", 1);
		tarn_free(rep);
	}
	tarn_free(starts);
	tarn_free(copy);
	quiet = false;
	fprintf(stderr, "  %d damaged streams (%d records, %zu bytes) into %s: %.1f s\n", tries,
	    n, mb->mb_len, target, (double)(tarn_now_ns() - t0) / 1e9);
	return (bad);
}

static void
test_corrupt(void)
{
	spa_t *spa;
	dsl_pool_t *dp = pool_up(&spa, 256 * MB);
	create(dp, "p/a");
	objset_t *os = fs_os(dp, "p/a");
	uint64_t o1 = mkobj(os, 0, DMU_OT_PLAIN_FILE, 128 * KiB, DMU_OT_UINT64, 32);
	bonus(os, o1, 32, 1);
	wr(os, o1, 0, 100 * KiB, 2);
	uint64_t o2 = mkobj(os, 0, DMU_OT_UINT8, 4096, DMU_OT_NONE, 0);
	wr(os, o2, 0, 5000, 3);
	for (int i = 0; i < 6; i++)
		wr(os, mkobj(os, 0, DMU_OT_UINT8, 1024, DMU_OT_UINT64, 8), 0, 700, 10 + i);
	sync_all(dp);
	snap(dp, "p/a@1");
	wr(os, o1, 64 * KiB, 4096, 4);
	wr(os, o2, 0, 100, 5);
	free_obj(os, o2 + 1);
	sync_all(dp);
	snap(dp, "p/a@2");
	mbuf_t full = { 0 }, incr = { 0 };
	TT_OK(send_to(dp, "p/a@1", NULL, 0, &full));
	TT_OK(send_to(dp, "p/a@2", "@1", 0, &incr));
	TT_CHECK(full.mb_len < 400 * KiB);
	/* a full stream into a new name: it never shows */
	TT_EQ(damage_all(dp, &full, "p/n", "p/n", -1, DAMAGE_HEAD, 97 * DAMAGE_SPREAD), 0);
	/* an incremental one into a copy at the base: it stays at the base */
	recv_ok(dp, "p/b", 0, &full);
	TT_EQ(damage_all(dp, &incr, "p/b", "p/b", 1, DAMAGE_HEAD, 197 * DAMAGE_SPREAD), 0);
	TT_CHECK(same_snap(dp, "p/a@1", "p/b@1", "p/b"));
	/* and the real streams still go in */
	recv_ok(dp, "p/b", 0, &incr);
	TT_CHECK(same_snap(dp, "p/a@2", "p/b@2", "p/b"));
	recv_ok(dp, "p/n", 0, &full);
	TT_CHECK(same_snap(dp, "p/a@1", "p/n@1", "p/n"));
	verify_all(spa);
	mb_free(&full);
	mb_free(&incr);
	pool_down(spa, dp);
}

/* Receive the first `cut` bytes with -s, then check a token is there. */
static void
recv_cut(dsl_pool_t *dp, const char *target, const mbuf_t *mb, size_t cut, dsl_resume_t *r)
{
	int e = recv_buf(dp, target, DSL_RECV_RESUMABLE, mb->mb_buf, cut);
	TT_CHECK(refused(e, "resumable cut", cut));
	char tok[1024];
	TT_OK(dsl_recv_resume_token(dp, target, tok, sizeof (tok)));
	TT_CHECK(strncmp(tok, "tarn1-", 6) == 0);
	TT_OK(dsl_resume_token_parse(tok, r, err, sizeof (err)));
	TT_CHECK(r->dr_bytes > 0 && r->dr_bytes <= cut);
	/* a damaged token is refused */
	tok[strlen(tok) - 1] ^= 1;
	dsl_resume_t bad;
	TT_EQ(dsl_resume_token_parse(tok, &bad, err, sizeof (err)), EINVAL);
}

/* The rest of the stream a token describes. */
static void
send_rest(dsl_pool_t *dp, const dsl_resume_t *r, mbuf_t *mb)
{
	char sn[DSL_NAME_MAX], from[DSL_NAME_MAX];
	dsl_send_opts_t o;
	int e = dsl_resume_send_opts(dp, r, sn, sizeof (sn), from, sizeof (from), &o, err,
	    sizeof (err));
	if (e != 0)
		fprintf(stderr, "  resume opts: %s\n", err);
	TT_OK(e);
	TT_CHECK(strcmp(sn, r->dr_toname) == 0);
	TT_OK(send_opts(dp, sn, &o, mb));
	rd_t rr = { mb->mb_buf, mb->mb_len, 0 };
	dsl_stream_in_t *si = dsl_stream_in_create(rd_read, &rr);
	dsl_stream_kind_t kind;
	dsl_stream_begin_t b;
	TT_OK(dsl_stream_peek(si, &kind, &b, err, sizeof (err)));
	TT_EQ(b.dsb_resume_obj, r->dr_obj);
	TT_EQ(b.dsb_resume_off, r->dr_off);
	dsl_stream_in_destroy(si);
}

static void
test_resume(void)
{
	spa_t *spa;
	dsl_pool_t *dp = pool_up(&spa, 512 * MB);
	src_t s;
	build_source(dp, "p/a", &s, 40);
	snap(dp, "p/a@1");
	mbuf_t full = { 0 }, rest = { 0 }, rest2 = { 0 }, incr = { 0 };
	TT_OK(send_to(dp, "p/a@1", NULL, 0, &full));
	/* no state yet */
	char tok[1024];
	TT_EQ(dsl_recv_resume_token(dp, "p/b", tok, sizeof (tok)), ENOENT);
	dsl_resume_t r;
	recv_cut(dp, "p/b", &full, full.mb_len / 3, &r);
	TT_CHECK(strcmp(r.dr_toname, "p/a@1") == 0);
	TT_EQ(r.dr_toguid, guid_of(dp, "p/a@1"));
	TT_EQ(r.dr_fromguid, 0);
	/* a stream that is not the resume: refused, the state stays */
	TT_EQ(recv_buf(dp, "p/b", 0, full.mb_buf, full.mb_len), EBUSY);
	TT_CHECK(strstr(err, "partially-complete") != NULL);
	TT_OK(dsl_recv_resume_token(dp, "p/b", tok, sizeof (tok)));
	/* the rest, cut again, then the rest of that */
	send_rest(dp, &r, &rest);
	TT_CHECK(rest.mb_len < full.mb_len);
	recv_cut(dp, "p/b", &rest, rest.mb_len / 2, &r);
	send_rest(dp, &r, &rest2);
	/* the rest without -s also completes it */
	int e = recv_buf(dp, "p/b", DSL_RECV_RESUMABLE, rest2.mb_buf, rest2.mb_len);
	if (e != 0)
		fprintf(stderr, "  resume: %s\n", err);
	TT_OK(e);
	TT_CHECK(same_snap(dp, "p/a@1", "p/b@1", "p/b"));
	TT_EQ(dsl_recv_resume_token(dp, "p/b", tok, sizeof (tok)), ENOENT);
	/* an old resume stream is now refused (there is nothing to resume) */
	TT_CHECK(recv_buf(dp, "p/b", DSL_RECV_RESUMABLE, rest.mb_buf, rest.mb_len) != 0);
	TT_EQ(nsnaps(dp, "p/b"), 1);

	/* incremental: cut, resume */
	change_source(dp, "p/a", &s, 1000);
	snap(dp, "p/a@2");
	TT_OK(send_to(dp, "p/a@2", "@1", 0, &incr));
	recv_cut(dp, "p/b", &incr, incr.mb_len / 2, &r);
	TT_EQ(r.dr_fromguid, guid_of(dp, "p/a@1"));
	TT_EQ(nsnaps(dp, "p/b"), 1);                /* still at @1 */
	TT_CHECK(same_snap(dp, "p/a@1", "p/b@1", "p/b"));
	send_rest(dp, &r, &rest);
	e = recv_buf(dp, "p/b", DSL_RECV_RESUMABLE, rest.mb_buf, rest.mb_len);
	if (e != 0)
		fprintf(stderr, "  resume: %s\n", err);
	TT_OK(e);
	TT_CHECK(same_snap(dp, "p/a@2", "p/b@2", "p/b"));
	TT_CHECK(!has_work(dp, "p/b"));

	/* -A drops a partial incremental state; the target is as it was */
	change_source(dp, "p/a", &s, 2000);
	snap(dp, "p/a@3");
	TT_OK(send_to(dp, "p/a@3", "@2", 0, &incr));
	recv_cut(dp, "p/b", &incr, incr.mb_len / 2, &r);
	TT_OK(dsl_recv_abort(dp, "p/b", err, sizeof (err)));
	TT_EQ(dsl_recv_resume_token(dp, "p/b", tok, sizeof (tok)), ENOENT);
	TT_CHECK(!has_work(dp, "p/b"));
	TT_EQ(nsnaps(dp, "p/b"), 2);
	TT_CHECK(same_snap(dp, "p/a@2", "p/b@2", "p/b"));
	TT_EQ(dsl_recv_abort(dp, "p/b", err, sizeof (err)), ENOENT);
	TT_CHECK(strstr(err, "does not have any resumable receive state") != NULL);
	recv_ok(dp, "p/b", 0, &incr);
	TT_CHECK(same_snap(dp, "p/a@3", "p/b@3", "p/b"));
	/* -A of a partial new file system: it is gone */
	recv_cut(dp, "p/c", &full, full.mb_len / 2, &r);
	TT_OK(dsl_recv_abort(dp, "p/c", err, sizeof (err)));
	TT_CHECK(!dsl_dataset_exists(dp, "p/c"));
	recv_ok(dp, "p/c", 0, &full);
	TT_CHECK(same_snap(dp, "p/a@1", "p/c@1", "p/c"));
	/* a partial state survives a close and open */
	recv_cut(dp, "p/d", &full, full.mb_len / 2, &r);
	dsl_pool_close(dp);
	spa_close(spa);
	spa = tt_pool_reopen(&devs, 0, NULL);
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	TT_OK(dsl_recv_resume_token(dp, "p/d", tok, sizeof (tok)));
	TT_OK(dsl_resume_token_parse(tok, &r, err, sizeof (err)));
	send_rest(dp, &r, &rest);
	recv_ok(dp, "p/d", DSL_RECV_RESUMABLE, &rest);
	TT_CHECK(same_snap(dp, "p/a@1", "p/d@1", "p/d"));
	verify_all(spa);
	mb_free(&full);
	mb_free(&rest);
	mb_free(&rest2);
	mb_free(&incr);
	pool_down(spa, dp);
}

static void
test_compressed(void)
{
	spa_t *spa;
	dsl_pool_t *dp = pool_up(&spa, 512 * MB);
	create(dp, "p/z");
	TT_OK(dsl_prop_set(dp, "p/z", "compression", "gzip-9", err, sizeof (err)));
	objset_t *os = fs_os(dp, "p/z");
	for (int i = 0; i < 4; i++) {
		uint64_t o = mkobj(os, 0, DMU_OT_PLAIN_FILE, 128 * KiB, DMU_OT_NONE, 0);
		wr_text(os, o, 0, 1 * MB + (uint64_t)i * 5000, (uint64_t)i * 1000);
	}
	uint64_t rnd = mkobj(os, 0, DMU_OT_PLAIN_FILE, 128 * KiB, DMU_OT_NONE, 0);
	wr(os, rnd, 0, 256 * KiB, 9);           /* incompressible: stored as is */
	sync_all(dp);
	snap(dp, "p/z@1");
	dsl_snap_info_t src;
	TT_OK(dsl_snapshot_info(dp, "p/z@1", &src, err, sizeof (err)));
	TT_CHECK(src.dsi_lreferenced > 4 * MB);
	TT_CHECK(src.dsi_preferenced < src.dsi_lreferenced / 4);
	dsl_prop_setting_t off[1] = { { "compression", "off" } };
	mbuf_t c = { 0 }, plain = { 0 };
	TT_OK(send_to(dp, "p/z@1", NULL, DSL_SEND_COMPRESSED, &c));
	TT_OK(send_to(dp, "p/z@1", NULL, 0, &plain));
	TT_CHECK(c.mb_len < plain.mb_len / 3);
	TT_OK(recv_swap(dp, "p/c", 0, c.mb_buf, c.mb_len, NULL, off, 1));
	TT_OK(recv_swap(dp, "p/u", 0, plain.mb_buf, plain.mb_len, NULL, off, 1));
	dsl_prop_val_t v;
	TT_OK(dsl_prop_get(dp, "p/c", DSL_PROP_COMPRESSION, false, &v, err, sizeof (err)));
	TT_CHECK(strcmp(v.dpv_str, "off") == 0);
	TT_CHECK(same_snap(dp, "p/z@1", "p/c@1", "p/c"));
	TT_CHECK(same_snap(dp, "p/z@1", "p/u@1", "p/u"));
	dsl_snap_info_t ci, ui;
	TT_OK(dsl_snapshot_info(dp, "p/c@1", &ci, err, sizeof (err)));
	TT_OK(dsl_snapshot_info(dp, "p/u@1", &ui, err, sizeof (err)));
	fprintf(stderr, "  stored: source %" PRIu64 " -c %" PRIu64 " plain %" PRIu64
	    " (logical %" PRIu64 ")\n", src.dsi_preferenced, ci.dsi_preferenced,
	    ui.dsi_preferenced, src.dsi_lreferenced);
	TT_EQ(ci.dsi_preferenced, src.dsi_preferenced);
	TT_EQ(ci.dsi_lreferenced, src.dsi_lreferenced);
	TT_CHECK(ui.dsi_preferenced + 64 * KiB >= ui.dsi_lreferenced &&
	    ui.dsi_preferenced <= ui.dsi_lreferenced + ui.dsi_lreferenced / 20);
	/* -c blocks stay as stored through an incremental stream too */
	uint64_t o = mkobj(os, 0, DMU_OT_PLAIN_FILE, 128 * KiB, DMU_OT_NONE, 0);
	wr_text(os, o, 0, 1 * MB, 77);
	sync_all(dp);
	snap(dp, "p/z@2");
	TT_OK(send_to(dp, "p/z@2", "@1", DSL_SEND_COMPRESSED, &c));
	recv_ok(dp, "p/c", 0, &c);
	TT_CHECK(same_snap(dp, "p/z@2", "p/c@2", "p/c"));
	TT_OK(dsl_snapshot_info(dp, "p/z@2", &src, err, sizeof (err)));
	TT_OK(dsl_snapshot_info(dp, "p/c@2", &ci, err, sizeof (err)));
	TT_EQ(ci.dsi_preferenced, src.dsi_preferenced);
	verify_all(spa);
	mb_free(&c);
	mb_free(&plain);
	pool_down(spa, dp);
}

/* Let deferred frees mature, then the pool's allocated bytes. */
static uint64_t
settled_alloc(spa_t *spa)
{
	spa_space_t s;
	uint64_t last = 0;
	int same = 0;
	for (int i = 0; i < 64 && same < 4; i++) {
		(void) spa_history_log(spa, "send test: let frees mature");
		txg_kick(spa_dmu_pool(spa));
		TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
		spa_get_space(spa, &s);
		same = s.ss_alloc == last ? same + 1 : 0;
		last = s.ss_alloc;
	}
	return (last);
}

/*
 * Receive copies of every kind (full, incremental, -F over a changed
 * target, resumed, aborted, failed) and destroy them, three times over so
 * that a leak per receive adds up: the pool's allocated space comes back
 * to within 4 MiB of where it was, where the three rounds allocate and
 * free about 50 MiB.  (The pool's own metadata, space maps above all,
 * moves by up to 2 MiB over such rounds: the same rounds made by create,
 * write, snapshot and destroy, without a receive, end 0.7 to 2 MiB up.)
 */
static void
space_round(dsl_pool_t *dp, src_t *s, const mbuf_t *full, const mbuf_t *incr)
{
	recv_ok(dp, "p/b", 0, full);
	recv_ok(dp, "p/b", 0, incr);
	recv_ok(dp, "p/c", 0, full);
	objset_t *cos = fs_os(dp, "p/c");
	wr(cos, s->big, 0, 256 * KiB, 3);
	wr(cos, mkobj(cos, 0, DMU_OT_UINT8, 128 * KiB, DMU_OT_NONE, 0), 0, 1 * MB, 4);
	sync_all(dp);
	recv_ok(dp, "p/c", DSL_RECV_FORCE, incr);
	dsl_resume_t r;
	recv_cut(dp, "p/d", full, full->mb_len / 2, &r);
	mbuf_t rest = { 0 };
	send_rest(dp, &r, &rest);
	recv_ok(dp, "p/d", DSL_RECV_RESUMABLE, &rest);
	mb_free(&rest);
	recv_cut(dp, "p/d", incr, incr->mb_len / 2, &r);
	TT_OK(dsl_recv_abort(dp, "p/d", err, sizeof (err)));
	recv_cut(dp, "p/e", full, full->mb_len / 2, &r);
	TT_OK(dsl_recv_abort(dp, "p/e", err, sizeof (err)));
	quiet = true;
	TT_CHECK(recv_buf(dp, "p/g", 0, full->mb_buf, full->mb_len / 2) == EBADMSG);
	quiet = false;
	recv_ok(dp, "p/f", 0, full);
	quiet = true;
	TT_CHECK(recv_buf(dp, "p/f", 0, incr->mb_buf, incr->mb_len / 2) == EBADMSG);
	quiet = false;
}

static void
test_space(void)
{
	spa_t *spa;
	dsl_pool_t *dp = pool_up(&spa, 512 * MB);
	src_t s;
	build_source(dp, "p/a", &s, 40);
	snap(dp, "p/a@1");
	change_source(dp, "p/a", &s, 1000);
	snap(dp, "p/a@2");
	mbuf_t full = { 0 }, incr = { 0 };
	TT_OK(send_to(dp, "p/a@1", NULL, 0, &full));
	TT_OK(send_to(dp, "p/a@2", "@1", 0, &incr));
	uint64_t base = settled_alloc(spa);
	for (int round = 0; round < 3; round++) {
		space_round(dp, &s, &full, &incr);
		uint64_t with = settled_alloc(spa);
		TT_CHECK(with > base + 8 * MB);
		if (round == 0)
			verify_all(spa);
		const char *names[4] = { "p/b", "p/c", "p/d", "p/f" };
		for (int i = 0; i < 4; i++) {
			int e = dsl_dataset_destroy(dp, names[i], true, err, sizeof (err));
			if (e != 0)
				fprintf(stderr, "  destroy %s: %s\n", names[i], err);
			TT_OK(e);
		}
		TT_CHECK(!dsl_dataset_exists(dp, "p/e") && !dsl_dataset_exists(dp, "p/g"));
		uint64_t end = settled_alloc(spa);
		fprintf(stderr, "  round %d allocated: before %" PRIu64 " with copies %" PRIu64
		    " after %" PRIu64 "\n", round, base, with, end);
	}
	uint64_t end = settled_alloc(spa);
	TT_CHECK(end <= base + 4 * MB && end + 4 * MB >= base);
	verify_all(spa);
	dsl_pool_close(dp);
	spa_close(spa);
	spa = tt_pool_reopen(&devs, 0, NULL);
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	verify_all(spa);
	TT_CHECK(!dsl_dataset_exists(dp, "p/b") && !dsl_dataset_exists(dp, "p/e"));
	TT_CHECK(same_snap(dp, "p/a@2", "p/a@2", "p/a"));
	end = settled_alloc(spa);
	TT_CHECK(end <= base + 4 * MB && end + 4 * MB >= base);
	mb_free(&full);
	mb_free(&incr);
	pool_down(spa, dp);
}


/*
 * What a stream costs beyond the data it carries: a full stream a few
 * records per object, an incremental one the changed blocks and the
 * descriptions of the objects around them.  Holes (past an object's end,
 * between its blocks, unused object numbers) are ranges, not a record
 * per block or per 32 objects.
 */
static void
test_stream_size(void)
{
	spa_t *spa;
	dsl_pool_t *dp = pool_up(&spa, 512 * MB);
	create(dp, "p/a");
	objset_t *os = fs_os(dp, "p/a");
	uint64_t objs[20];
	for (int i = 0; i < 20; i++) {
		objs[i] = mkobj(os, 0, DMU_OT_PLAIN_FILE, 128 * KiB, DMU_OT_NONE, 0);
		wr(os, objs[i], 0, 3 * 128 * KiB, 500 + (uint64_t)i);
	}
	sync_all(dp);
	snap(dp, "p/a@1");
	wr(os, objs[7], 200 * KiB, 4096, 9);
	sync_all(dp);
	snap(dp, "p/a@2");
	mbuf_t full = { 0 }, incr = { 0 };
	TT_OK(send_to(dp, "p/a@1", NULL, 0, &full));
	TT_OK(send_to(dp, "p/a@2", "@1", 0, &incr));
	uint64_t data = 20 * 3 * 128 * KiB;
	fprintf(stderr, "  full stream %zu bytes for %" PRIu64 " of data; incremental %zu bytes "
	    "for one 128 KiB block\n", full.mb_len, data, incr.mb_len);
	TT_CHECK(full.mb_len <= data + 128 * KiB);
	TT_CHECK(incr.mb_len <= 128 * KiB + 32 * KiB);
	/* and they still go in */
	recv_ok(dp, "p/b", 0, &full);
	recv_ok(dp, "p/b", 0, &incr);
	TT_CHECK(same_snap(dp, "p/a@2", "p/b@2", "p/b"));
	mb_free(&full);
	mb_free(&incr);
	pool_down(spa, dp);
}

/*
 * Make every record's checksum and the running checksums right again
 * after an edit, as docs/FORMAT.md defines them.
 */
static void
reseal(uint8_t *buf, size_t len)
{
	size_t off = 0;
	uint64_t running = 0;
	while (off + 96 <= len) {
		uint8_t *h = buf + off;
		uint32_t plen;
		memcpy(&plen, h + 8, 4);
		TT_ASSERT(plen <= len - off - 96);
		memcpy(h + 80, &running, 8);
		uint64_t ck = 0;
		memcpy(h + 88, &ck, 8);
		ck = XXH3_64bits_withSeed(h, 96, XXH3_64bits(h + 96, plen));
		memcpy(h + 88, &ck, 8);
		running = XXH3_64bits_withSeed(&ck, 8, running);
		off += 96 + plen;
	}
}

static const char *hang_test = "?";

static void
hang_alarm(int sig)
{
	static const char msg[] = "  timed out: a receive, destroy or close hangs\nFAIL ";
	(void) sig;
	(void) write(2, msg, sizeof (msg) - 1);
	(void) write(2, hang_test, strlen(hang_test));
	(void) write(2, "\n", 1);
	tt_tmpdir_cleanup();            /* the pool files (on tmpfs) */
	_exit(1);
}

/*
 * A stream whose records passed their checksums can still be hostile:
 * here its one object is moved to number 2^32 (and the records resealed).
 * The receive must refuse it or take it, and either way the pool must
 * stay usable: the file system received is destroyed again, all within
 * 30 seconds (a SIGALRM fails the test if not).
 */
static void
test_hostile_object(void)
{
	spa_t *spa;
	dsl_pool_t *dp = pool_up(&spa, 256 * MB);
	create(dp, "p/a");
	objset_t *os = fs_os(dp, "p/a");
	uint64_t o = mkobj(os, 0, DMU_OT_UINT8, 4096, DMU_OT_NONE, 0);
	wr(os, o, 0, 4096, 1);
	sync_all(dp);
	snap(dp, "p/a@1");
	mbuf_t mb = { 0 };
	TT_OK(send_to(dp, "p/a@1", NULL, 0, &mb));
	size_t starts[4096];
	int n = record_starts(&mb, starts, 4096), moved = 0;
	for (int i = 0; i < n; i++) {
		uint8_t *h = mb.mb_buf + starts[i];
		uint16_t type;
		uint64_t obj, far = 1ULL << 32;
		memcpy(&type, h + 4, 2);
		memcpy(&obj, h + 24, 8);
		if ((type == 2 || type == 4 || type == 5) && obj == o) {
			memcpy(h + 24, &far, 8);
			moved++;
		}
	}
	TT_CHECK(moved >= 2);
	reseal(mb.mb_buf, mb.mb_len);
	hang_test = "hostile_object";
	signal(SIGALRM, hang_alarm);
	alarm(30);
	quiet = true;
	int e = recv_buf(dp, "p/h", 0, mb.mb_buf, mb.mb_len);
	quiet = false;
	TT_CHECK(e == 0 || (e == EBADMSG && strstr(err, "record") != NULL));
	if (e == 0)
		TT_OK(dsl_dataset_destroy(dp, "p/h", true, err, sizeof (err)));
	TT_CHECK(!dsl_dataset_exists(dp, "p/h"));
	alarm(0);
	mb_free(&mb);
	pool_down(spa, dp);
}

/*
 * A -c stream whose WRITE record asks for checksum 1 (ZIO_CHECKSUM_ON, a
 * property value, not an algorithm a block pointer may carry), resealed:
 * the receive must refuse it as a bad record, and the pool must go on
 * (not a txg sync that fails and suspends the pool).
 */
static void
test_hostile_checksum(void)
{
	spa_t *spa;
	dsl_pool_t *dp = pool_up(&spa, 256 * MB);
	create(dp, "p/a");
	TT_OK(dsl_prop_set(dp, "p/a", "compression", "gzip", err, sizeof (err)));
	objset_t *os = fs_os(dp, "p/a");
	uint64_t o = mkobj(os, 0, DMU_OT_PLAIN_FILE, 4096, DMU_OT_NONE, 0);
	wr_text(os, o, 0, 3 * 4096, 1);
	sync_all(dp);
	snap(dp, "p/a@1");
	mbuf_t mb = { 0 };
	TT_OK(send_to(dp, "p/a@1", NULL, DSL_SEND_COMPRESSED, &mb));
	size_t starts[4096];
	int n = record_starts(&mb, starts, 4096), stored = 0;
	for (int i = 0; i < n && stored == 0; i++) {
		uint8_t *h = mb.mb_buf + starts[i];
		uint16_t type, flags;
		memcpy(&type, h + 4, 2);
		memcpy(&flags, h + 6, 2);
		if (type == 4 && (flags & 1)) {
			uint64_t ck = ZIO_CHECKSUM_ON;
			memcpy(h + 24 + 5 * 8, &ck, 8);
			stored++;
		}
	}
	TT_ASSERT(stored == 1);
	reseal(mb.mb_buf, mb.mb_len);
	hang_test = "hostile_checksum";
	signal(SIGALRM, hang_alarm);
	alarm(30);
	quiet = true;
	int e = recv_buf(dp, "p/h", 0, mb.mb_buf, mb.mb_len);
	quiet = false;
	if (e != EBADMSG)
		fprintf(stderr, "  receive: %d %s\n", e, err);
	TT_CHECK(e == EBADMSG && strstr(err, "record") != NULL);
	if (e == 0)
		(void) dsl_dataset_destroy(dp, "p/h", true, err, sizeof (err));
	/* the pool goes on: a txg syncs, a snapshot can be taken and received */
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	TT_OK(send_to(dp, "p/a@1", NULL, DSL_SEND_COMPRESSED, &mb));
	recv_ok(dp, "p/k", 0, &mb);
	TT_CHECK(same_snap(dp, "p/a@1", "p/k@1", "p/k"));
	alarm(0);
	mb_free(&mb);
	pool_down(spa, dp);
}

static void
test_swap(void)
{
	spa_t *spa;
	dsl_pool_t *dp = pool_up(&spa, 512 * MB);
	src_t s;
	build_source(dp, "p/a", &s, 6);
	snap(dp, "p/a@1");
	change_source(dp, "p/a", &s, 1000);
	snap(dp, "p/a@2");
	mbuf_t full = { 0 }, incr = { 0 };
	TT_OK(send_to(dp, "p/a@1", NULL, 0, &full));
	TT_OK(send_to(dp, "p/a@2", "@1", 0, &incr));
	swapctx_t sw = { 0 };
	/* a new file system: no swap */
	TT_OK(recv_swap(dp, "p/b", 0, full.mb_buf, full.mb_len, &sw, NULL, 0));
	TT_EQ(sw.calls, 0);
	/* the swap refuses (a busy mount): the receive fails, nothing changes */
	sw.refuse = EBUSY;
	TT_EQ(recv_swap(dp, "p/b", 0, incr.mb_buf, incr.mb_len, &sw, NULL, 0), EBUSY);
	TT_EQ(sw.calls, 1);
	TT_CHECK(strcmp(sw.name, "p/b") == 0);
	TT_EQ(nsnaps(dp, "p/b"), 1);
	TT_CHECK(!has_work(dp, "p/b"));
	TT_CHECK(same_snap(dp, "p/a@1", "p/b@1", "p/b"));
	/* then it commits */
	sw.refuse = 0;
	TT_OK(recv_swap(dp, "p/b", 0, incr.mb_buf, incr.mb_len, &sw, NULL, 0));
	TT_EQ(sw.calls, 2);
	TT_CHECK(strcmp(sw.name, "p/b") == 0);
	TT_CHECK(same_snap(dp, "p/a@2", "p/b@2", "p/b"));
	/* -F of a full stream over a file system without snapshots swaps it too */
	create(dp, "p/c");
	wr(fs_os(dp, "p/c"), mkobj(fs_os(dp, "p/c"), 0, DMU_OT_UINT8, 512, DMU_OT_NONE, 0),
	    0, 100, 1);
	sync_all(dp);
	sw.calls = 0;
	TT_OK(recv_swap(dp, "p/c", DSL_RECV_FORCE, full.mb_buf, full.mb_len, &sw, NULL, 0));
	TT_EQ(sw.calls, 1);
	TT_CHECK(strcmp(sw.name, "p/c") == 0);
	TT_CHECK(same_snap(dp, "p/a@1", "p/c@1", "p/c"));
	/* dry runs never swap */
	sw.calls = 0;
	TT_OK(recv_swap(dp, "p/c", DSL_RECV_DRYRUN, incr.mb_buf, incr.mb_len, &sw, NULL, 0));
	TT_EQ(sw.calls, 0);
	TT_EQ(nsnaps(dp, "p/c"), 1);
	mb_free(&full);
	mb_free(&incr);
	pool_down(spa, dp);
}

static void
cleanup(void)
{
	tt_pool_files_remove(&devs);
}

TT_MAIN(
	{ "full", test_full },
	{ "incremental", test_incremental },
	{ "incremental_reuse", test_incremental_reuse },
	{ "force", test_force },
	{ "force_later", test_force_later },
	{ "base_missing", test_base_missing },
	{ "corrupt", test_corrupt },
	{ "resume", test_resume },
	{ "compressed", test_compressed },
	{ "space", test_space },
	{ "swap", test_swap },
	{ "stream_size", test_stream_size },
	{ "hostile_checksum", test_hostile_checksum },
	{ "hostile_object", test_hostile_object },
	{ "cleanup", cleanup },
)
