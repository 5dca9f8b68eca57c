/*
 * fuzz_stream.c — fuzz target for send streams (lib/dsl/dsl_stream.c
 * and the receive that applies them, dsl_recv.c): a damaged or hostile
 * stream must be refused with an error, never crash, assert, overrun
 * (run under ASan) or hang, and a refused receive must leave nothing
 * behind in the pool.
 *
 * Receiving needs a pool: the driver makes one on a sparse file in a
 * temporary directory (TARN_TEST_TMP, else /dev/shm or /tmp) the first
 * time it runs, with a source file system (objects of several kinds, a
 * snapshot @1, changes, @2, with gzip so -c streams carry stored
 * blocks) and a copy fs/base at @1 that incremental streams apply to;
 * it removes them at exit.
 *
 * Each input is read as a stream: every substream is taken by a dry-run
 * receive (the records' checks: magic, length, checksums, numbering,
 * version, begin record), package records are taken apart; every 4th
 * input is also received for real (the checks of each record's fields
 * against the pool, and the work dataset's life), into a new file
 * system for a full stream or into the copy at the base for an
 * incremental one, and whatever it made is destroyed again.  After
 * every input no work dataset may be left, and the copy must still be
 * at @1 only.
 *
 * Built with libFuzzer (-DTARN_LIBFUZZER -fsanitize=fuzzer), inputs come
 * from the fuzzer.  Built with plain gcc, main() runs N (argv[1],
 * default 2000) inputs seeded by argv[2] (default 0x57e4): random bytes, and mutations of valid
 * streams (full, incremental, -c, a package around a substream) —
 * flipped, inserted and deleted bytes, header fields set to edge values,
 * records dropped, repeated or cut — most of them with every record's
 * checksum and the running checksums recomputed afterwards
 * (docs/FORMAT.md "Send streams"), so that they reach the receive's own
 * checks of the fields.  An input that runs over a minute is a hang: it
 * is saved ($TMPDIR/fuzz_stream-hang.bin) and `fuzz_stream FILE` reruns it.
 */
#include "dsl.h"
#include "spa.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <xxhash.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_POOL   "fz"
#define FZ_SRC    "fz/src"
#define FZ_BASE   "fz/base"     /* at @1: incremental streams apply here */
#define FZ_NEW    "fz/new"      /* full streams are received here */
#define FZ_REAL_EVERY 4

static char fz_dir[256], fz_dev[300];
static spa_t *fz_spa;
static dsl_pool_t *fz_dp;
static uint64_t fz_inputs;
static uint64_t fz_received;    /* real receives that went in */
static uint64_t fz_refused[4];  /* real receives refused: by the stream's checks, by a
                                   record's fields, by the target, other */

/* ---- streams in memory ---- */

typedef struct fz_buf {
	uint8_t *b;
	size_t len, cap;
} fz_buf_t;

static int
fz_write(void *arg, const void *buf, size_t len)
{
	fz_buf_t *m = arg;
	if (m->len + len > m->cap) {
		size_t cap = MAX(2 * m->cap, m->len + len + 64 * KiB);
		uint8_t *n = tarn_alloc(cap);
		if (m->len > 0)
			memcpy(n, m->b, m->len);
		tarn_free(m->b);
		m->b = n;
		m->cap = cap;
	}
	memcpy(m->b + m->len, buf, len);
	m->len += len;
	return (0);
}

typedef struct fz_rd {
	const uint8_t *b;
	size_t len, pos;
} fz_rd_t;

static ssize_t
fz_read(void *arg, void *buf, size_t len)
{
	fz_rd_t *r = arg;
	size_t n = MIN(len, r->len - r->pos);
	memcpy(buf, r->b + r->pos, n);
	r->pos += n;
	return ((ssize_t)n);
}

static const uint8_t *fz_cur;   /* the input being taken (gcc driver) */
static size_t fz_cur_len;
static long fz_cur_i = -1;

static void
fz_die(const char *what, const char *err)
{
	fprintf(stderr, "fuzz_stream: %s: %s\n", what, err);
	if (fz_cur != NULL) {
		const char *tmp = getenv("TMPDIR");
		char path[300];
		(void) snprintf(path, sizeof (path), "%s/fuzz_stream-fail.bin",
		    tmp != NULL ? tmp : "/tmp");
		FILE *f = fopen(path, "wb");
		if (f != NULL) {
			(void) fwrite(fz_cur, 1, fz_cur_len, f);
			(void) fclose(f);
		}
		fprintf(stderr, "fuzz_stream: input %ld (%zu bytes) saved as %s\n", fz_cur_i,
		    fz_cur_len, path);
	}
	if (fz_dev[0] != '\0')
		(void) unlink(fz_dev);
	if (fz_dir[0] != '\0')
		(void) rmdir(fz_dir);
	abort();
}

/* ---- the pool ---- */

static void
fz_cleanup(void)
{
	if (fz_dp != NULL)
		dsl_pool_close(fz_dp);
	if (fz_spa != NULL)
		spa_close(fz_spa);
	fz_dp = NULL;
	fz_spa = NULL;
	if (fz_dev[0] != '\0')
		(void) unlink(fz_dev);
	if (fz_dir[0] != '\0')
		(void) rmdir(fz_dir);
}

static void
fz_pool_make(void)
{
	const char *base = getenv("TARN_TEST_TMP");
	if (base == NULL)
		base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	(void) snprintf(fz_dir, sizeof (fz_dir), "%s/tarn-fuzz-stream-XXXXXX", base);
	if (mkdtemp(fz_dir) == NULL)
		fz_die("mkdtemp", strerror(errno));
	atexit(fz_cleanup);
	(void) snprintf(fz_dev, sizeof (fz_dev), "%s/d0", fz_dir);
	int fd = open(fz_dev, O_CREAT | O_RDWR | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, 256 * MiB) != 0)
		fz_die("device file", strerror(errno));
	close(fd);
	char err[256];
	char *argv[1] = { fz_dev };
	spa_vdev_spec_t *spec;
	if (spa_vdev_spec_parse(1, argv, &spec, err, sizeof (err)) != 0)
		fz_die("vdev spec", err);
	spa_create_opts_t o;
	memset(&o, 0, sizeof (o));
	o.sco_no_cache = true;
	int e = spa_create(FZ_POOL, spec, &o, &fz_spa, err, sizeof (err));
	spa_vdev_spec_free(spec);
	if (e != 0)
		fz_die("pool create", err);
	if (dsl_pool_open(fz_spa, NULL, NULL, &fz_dp) != 0)
		fz_die("dsl_pool_open", "failed");
}

static void
fz_txg(void)
{
	if (txg_wait_synced(spa_dmu_pool(fz_spa), 0) != 0)
		fz_die("txg_wait_synced", "failed");
}

static uint64_t
fz_obj(objset_t *os, uint64_t type, uint32_t blksz, uint64_t btype, uint32_t blen,
    uint64_t off, uint64_t len, uint8_t fill)
{
	uint8_t *buf = tarn_alloc(MAX(len, (uint64_t)blen) + 1);
	for (uint64_t i = 0; i < len; i++)
		buf[i] = fill == 0 ? (uint8_t)(i * 2654435761u >> 13) : (uint8_t)(fill + i / 512);
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_space(tx, len + 64 * KiB);
	if (dmu_tx_assign(tx, TXG_WAIT) != 0)
		fz_die("tx", "assign");
	uint64_t obj = 0;
	if (dmu_object_alloc(os, (dmu_object_type_t)type, blksz, (dmu_object_type_t)btype, blen,
	    tx, &obj) != 0)
		fz_die("object", "alloc");
	if (blen > 0 && dmu_bonus_write(os, obj, buf, blen, tx) != 0)
		fz_die("object", "bonus");
	if (len > 0 && dmu_write(os, obj, off, len, buf, tx) != 0)
		fz_die("object", "write");
	dmu_tx_commit(tx);
	tarn_free(buf);
	return (obj);
}

static void
fz_snap(const char *name)
{
	char err[256];
	const char *v[1] = { name };
	if (dsl_snapshot_create(fz_dp, v, 1, false, NULL, 0, err, sizeof (err)) != 0)
		fz_die(name, err);
}

static void
fz_send(const char *snap, const char *from, int flags, bool package, fz_buf_t *out)
{
	char err[256];
	out->len = 0;
	dsl_stream_out_t *so = dsl_stream_out_create(fz_write, out);
	static const char pkg[] = "{\"fuzz\":1}";
	int e = package ? dsl_stream_put_package(so, pkg, sizeof (pkg) - 1) : 0;
	dsl_send_opts_t o = { .dso_from = from, .dso_flags = flags };
	if (e == 0)
		e = dsl_send(fz_dp, snap, &o, so, err, sizeof (err));
	if (e == 0 && package)
		e = dsl_stream_put_package_end(so);
	dsl_stream_out_destroy(so);
	if (e != 0)
		fz_die("send", err);
}

enum { FZ_FULL, FZ_INCR, FZ_COMP, FZ_PKG, FZ_NSTREAMS };
static fz_buf_t fz_streams[FZ_NSTREAMS];

/* The pool, the source and the valid streams (once). */
static void
fz_setup(void)
{
	if (fz_dp != NULL)
		return;
	fz_pool_make();
	char err[256];
	if (dsl_dataset_create(fz_dp, FZ_SRC, false, NULL, 0, err, sizeof (err)) != 0 ||
	    dsl_prop_set(fz_dp, FZ_SRC, "compression", "gzip", err, sizeof (err)) != 0)
		fz_die("source", err);
	objset_t *os;
	if (dsl_dataset_objset(fz_dp, FZ_SRC, &os) != 0)
		fz_die("source", "objset");
	uint64_t a = fz_obj(os, DMU_OT_PLAIN_FILE, 4096, DMU_OT_PLAIN_FILE, 64, 0, 6000, 0);
	uint64_t b = fz_obj(os, DMU_OT_UINT8, 512, DMU_OT_NONE, 0, 0, 1, 7);
	(void) fz_obj(os, DMU_OT_PLAIN_FILE, 32 * KiB, DMU_OT_NONE, 0, 0, 40000, 'a');
	(void) fz_obj(os, DMU_OT_TEST, 512, DMU_OT_UINT64, 16, 0, 0, 0);
	fz_txg();
	fz_snap(FZ_SRC "@1");
	/* changes: a new object, a freed one, an overwrite */
	(void) fz_obj(os, DMU_OT_UINT8, 8192, DMU_OT_NONE, 0, 0, 9000, 'x');
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_free(tx, b, 0, DMU_OBJECT_END);
	dmu_tx_hold_write(tx, a, 100, 200);
	if (dmu_tx_assign(tx, TXG_WAIT) != 0)
		fz_die("tx", "assign");
	uint8_t buf[200];
	memset(buf, 'z', sizeof (buf));
	if (dmu_object_free(os, b, tx) != 0 || dmu_write(os, a, 100, 200, buf, tx) != 0)
		fz_die("source", "change");
	dmu_tx_commit(tx);
	fz_txg();
	fz_snap(FZ_SRC "@2");
	fz_send(FZ_SRC "@1", NULL, 0, false, &fz_streams[FZ_FULL]);
	fz_send(FZ_SRC "@2", "@1", 0, false, &fz_streams[FZ_INCR]);
	fz_send(FZ_SRC "@2", NULL, DSL_SEND_COMPRESSED, false, &fz_streams[FZ_COMP]);
	fz_send(FZ_SRC "@2", "@1", 0, true, &fz_streams[FZ_PKG]);
	/* the copy at the base */
	fz_rd_t r = { fz_streams[FZ_FULL].b, fz_streams[FZ_FULL].len, 0 };
	dsl_stream_in_t *si = dsl_stream_in_create(fz_read, &r);
	dsl_recv_opts_t ro = { 0 };
	dsl_recv_result_t res;
	int e = dsl_receive(fz_dp, FZ_BASE, &ro, si, &res, err, sizeof (err));
	dsl_stream_in_destroy(si);
	if (e != 0)
		fz_die("receive of the base", err);
	tarn_free(res.drr_props);
}

/* ---- one input ---- */

static int
fz_nsnaps(const char *fs)
{
	char err[256];
	dsl_snap_info_t *si;
	int n;
	if (dsl_snapshot_list(fz_dp, fs, &si, &n, err, sizeof (err)) != 0)
		return (-1);
	tarn_free(si);
	return (n);
}

/* Put the pool back as it was after a receive that went in. */
static void
fz_undo(const dsl_recv_result_t *res)
{
	char err[256];
	if (dsl_dataset_exists(fz_dp, FZ_NEW) &&
	    dsl_dataset_destroy(fz_dp, FZ_NEW, true, err, sizeof (err)) != 0)
		fz_die("destroy of a received file system", err);
	if (res->drr_snap[0] != '\0' && strncmp(res->drr_snap, FZ_BASE "@", 8) == 0 &&
	    fz_nsnaps(FZ_BASE) > 1) {
		if (dsl_dataset_rollback(fz_dp, FZ_BASE "@1", true, false, NULL, NULL, err,
		    sizeof (err)) != 0)
			fz_die("rollback of the base", err);
	}
}

/* Nothing left of a receive: no work dataset, the copy at @1 only. */
static void
fz_check_clean(void)
{
	char err[256];
	if (dsl_dataset_exists(fz_dp, FZ_NEW))
		fz_die("after a receive", FZ_NEW " was left behind");
	if (dsl_dataset_exists(fz_dp, FZ_BASE "/%recv"))
		fz_die("after a receive", FZ_BASE "/%recv was left behind");
	if (fz_nsnaps(FZ_BASE) != 1)
		fz_die("after a receive", "the base copy has other snapshots");
	char tok[1024];
	if (dsl_recv_resume_token(fz_dp, FZ_BASE, tok, sizeof (tok)) != ENOENT ||
	    dsl_recv_resume_token(fz_dp, FZ_NEW, tok, sizeof (tok)) != ENOENT)
		fz_die("after a receive", "a resume state was left behind");
	(void) err;
}

/* Which of fz_refused a refusal counts in. */
static int
fz_classify(int e, const char *err)
{
	if (e == EBADMSG && strncmp(err, "record", 6) == 0 && strstr(err, "checksum") == NULL &&
	    strstr(err, "sequence") == NULL)
		return (1);
	if (e == EBADMSG)
		return (0);
	return (e == ENOENT || e == EEXIST || e == EINVAL ? 2 : 3);
}

/* Take every record of the input; real: receive the substreams for real. */
static void
fz_take(const uint8_t *data, size_t size, bool real)
{
	char err[512];
	fz_rd_t r = { data, size, 0 };
	dsl_stream_in_t *si = dsl_stream_in_create(fz_read, &r);
	for (int i = 0; i < 64; i++) {
		dsl_stream_kind_t kind;
		dsl_stream_begin_t b;
		if (dsl_stream_peek(si, &kind, &b, err, sizeof (err)) != 0 ||
		    kind == DSL_STREAM_EOF)
			break;
		int e;
		if (kind == DSL_STREAM_PACKAGE) {
			char *p = NULL;
			size_t len = 0;
			e = dsl_stream_get_package(si, &p, &len, err, sizeof (err));
			tarn_free(p);
		} else if (kind == DSL_STREAM_PACKAGE_END) {
			e = dsl_stream_get_package_end(si, err, sizeof (err));
		} else {
			const char *target = b.dsb_fromguid != 0 ? FZ_BASE : FZ_NEW;
			/* now and then with -F or -s: other paths through the checks */
			uint64_t turn = fz_inputs / FZ_REAL_EVERY % 4;
			int flags = !real ? DSL_RECV_DRYRUN : turn == 1 ? DSL_RECV_FORCE :
			    turn == 3 ? DSL_RECV_RESUMABLE : 0;
			dsl_recv_opts_t ro = { .dro_flags = flags };
			dsl_recv_result_t res;
			memset(&res, 0, sizeof (res));
			e = dsl_receive(fz_dp, target, &ro, si, &res, err, sizeof (err));
			if (e == 0)
				tarn_free(res.drr_props);
			if (real && (flags & DSL_RECV_RESUMABLE) && e != 0)
				(void) dsl_recv_abort(fz_dp, target, err, sizeof (err));
			if (real && e != 0)
				fz_refused[fz_classify(e, err)]++;
			if (getenv("FZ_VERBOSE") != NULL && real)
				fprintf(stderr, "%d %s\n", e, err);
			if (real && e == 0) {
				fz_received++;
				fz_undo(&res);
			}
			if (real)
				fz_check_clean();
		}
		if (e != 0)
			break;
	}
	dsl_stream_in_destroy(si);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_setup();
	fz_inputs++;
	fz_take(data, size, fz_inputs % FZ_REAL_EVERY == 0);
	fz_check_clean();
	return (0);
}

#ifndef TARN_LIBFUZZER
/* ---- mutations (the gcc driver) ---- */

#define FZ_HDR 96

/* Offsets of the records whose headers lie whole in buf (at most max). */
static int
fz_records(const uint8_t *buf, size_t len, size_t *starts, int max)
{
	size_t off = 0;
	int n = 0;
	while (off + FZ_HDR <= len && n < max) {
		uint32_t plen;
		memcpy(&plen, buf + off + 8, 4);
		starts[n++] = off;
		if (plen > len - off - FZ_HDR)
			break;
		off += FZ_HDR + plen;
	}
	return (n);
}

/*
 * Make every record's checksum and running checksum right again (and,
 * renumber: its sequence number), as docs/FORMAT.md defines them, for
 * the records that lie whole in buf.
 */
static void
fz_reseal(uint8_t *buf, size_t len, bool renumber)
{
	size_t off = 0;
	uint64_t running = 0, seq = 0;
	while (off + FZ_HDR <= len) {
		uint8_t *h = buf + off;
		uint32_t plen;
		memcpy(&plen, h + 8, 4);
		if (plen > len - off - FZ_HDR)
			break;
		if (renumber)
			memcpy(h + 16, &seq, 8);
		memcpy(h + 80, &running, 8);
		uint64_t zero = 0, ck;
		memcpy(h + 88, &zero, 8);
		uint64_t pseed = XXH3_64bits(h + FZ_HDR, plen);
		ck = XXH3_64bits_withSeed(h, FZ_HDR, pseed);
		memcpy(h + 88, &ck, 8);
		running = XXH3_64bits_withSeed(&ck, 8, running);
		seq++;
		off += FZ_HDR + plen;
	}
}

static uint64_t
fz_edge(tarn_rand_t *r, uint64_t old)
{
	static const uint64_t edges[] = { 0, 1, 2, 7, 8, 511, 512, 513, 4096, 131072,
		131073, 1ULL << 20, 1ULL << 24, 1ULL << 31, 1ULL << 32, 1ULL << 40,
		1ULL << 48, 1ULL << 63, UINT64_MAX, UINT64_MAX - 1, 0x7fffffff, 320, 321 };
	switch (tarn_rand_range(r, 4)) {
	case 0:
		return (edges[tarn_rand_range(r, sizeof (edges) / sizeof (edges[0]))]);
	case 1:
		return (old + tarn_rand_range(r, 5) - 2);
	case 2:
		return (old ^ (1ULL << tarn_rand_range(r, 64)));
	default:
		return (tarn_rand_u64(r));
	}
}

/* One mutation of buf (len bytes, room for cap); returns the new length. */
static size_t
fz_mutate(uint8_t *buf, size_t len, size_t cap, tarn_rand_t *r)
{
	size_t starts[4096];
	int n = fz_records(buf, len, starts, 4096);
	size_t rec = n > 0 ? starts[tarn_rand_range(r, (uint64_t)n)] : 0;
	/* mostly a record other than the many FREE / FREEOBJECTS ones */
	static size_t other[4096];
	int no = 0;
	for (int i = 0; i < n; i++) {
		uint16_t type;
		memcpy(&type, buf + starts[i] + 4, 2);
		if (type != 3 && type != 5)
			other[no++] = starts[i];
	}
	if (no > 0 && tarn_rand_range(r, 4) != 0)
		rec = other[tarn_rand_range(r, (uint64_t)no)];
	switch (tarn_rand_range(r, 10)) {
	case 0:         /* a flipped byte */
		if (len > 0)
			buf[tarn_rand_range(r, len)] ^= (uint8_t)(1 + tarn_rand_range(r, 255));
		break;
	case 1: {       /* bytes inserted */
		size_t k = 1 + tarn_rand_range(r, 16), at = tarn_rand_range(r, len + 1);
		if (len + k > cap)
			break;
		memmove(buf + at + k, buf + at, len - at);
		for (size_t i = 0; i < k; i++)
			buf[at + i] = (uint8_t)tarn_rand_u64(r);
		len += k;
		break;
	}
	case 2: {       /* bytes deleted */
		if (len == 0)
			break;
		/* the random count first: MIN evaluates its arguments twice */
		size_t at = tarn_rand_range(r, len), want = 1 + tarn_rand_range(r, 64);
		size_t k = MIN(len - at, want);
		memmove(buf + at, buf + at + k, len - at - k);
		len -= k;
		break;
	}
	case 3:         /* cut short */
		len = tarn_rand_range(r, len + 1);
		break;
	case 4: case 5: case 6: {   /* a field of drr_u[] (the most useful) */
		if (n == 0)
			break;
		size_t f = rec + 24 + 8 * tarn_rand_range(r, 7);
		uint64_t v;
		memcpy(&v, buf + f, 8);
		v = fz_edge(r, v);
		memcpy(buf + f, &v, 8);
		break;
	}
	case 7: {       /* type, flags or payload length */
		if (n == 0)
			break;
		int which = (int)tarn_rand_range(r, 3);
		if (which == 0) {
			uint16_t t = (uint16_t)tarn_rand_range(r, 10);
			memcpy(buf + rec + 4, &t, 2);
		} else if (which == 1) {
			uint16_t fl = (uint16_t)fz_edge(r, 0);
			memcpy(buf + rec + 6, &fl, 2);
		} else {
			uint32_t pl;
			memcpy(&pl, buf + rec + 8, 4);
			pl = (uint32_t)fz_edge(r, pl);
			memcpy(buf + rec + 8, &pl, 4);
		}
		break;
	}
	case 8: {       /* a record dropped or repeated */
		if (n < 2)
			break;
		int i = (int)tarn_rand_range(r, (uint64_t)n);
		size_t end = i + 1 < n ? starts[i + 1] : len, rl = end - starts[i];
		if (tarn_rand_range(r, 2) == 0) {
			memmove(buf + starts[i], buf + end, len - end);
			len -= rl;
		} else if (len + rl <= cap) {
			memmove(buf + end + rl, buf + end, len - end);
			memcpy(buf + end, buf + starts[i], rl);
			len += rl;
		}
		break;
	}
	default: {      /* a payload byte of a record (bonus, block, name) */
		if (n == 0)
			break;
		uint32_t pl;
		memcpy(&pl, buf + rec + 8, 4);
		uint8_t x = (uint8_t)(1 + tarn_rand_range(r, 255));
		if (pl > 0 && rec + FZ_HDR + pl <= len)
			buf[rec + FZ_HDR + tarn_rand_range(r, pl)] ^= x;
		break;
	}
	}
	return (len);
}

/*
 * A watchdog: an input that takes over a minute is a hang.  The handler
 * (async-signal-safe calls only) says which input, saves it for a rerun
 * (fuzz_stream FILE takes it, received for real), removes the pool file
 * and exits non-zero.
 */
static char fz_hang_msg[512], fz_hang_path[300];

static void
fz_hang(int sig)
{
	(void) sig;
	(void) write(2, fz_hang_msg, strlen(fz_hang_msg));
	int fd = open(fz_hang_path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd >= 0) {
		(void) write(fd, fz_cur, fz_cur_len);
		close(fd);
	}
	if (fz_dev[0] != '\0')
		(void) unlink(fz_dev);
	if (fz_dir[0] != '\0')
		(void) rmdir(fz_dir);
	_exit(1);
}

static void
fz_one(const uint8_t *buf, size_t len, long i, uint64_t seed)
{
	fz_cur = buf;
	fz_cur_len = len;
	fz_cur_i = i;
	(void) snprintf(fz_hang_msg, sizeof (fz_hang_msg), "fuzz_stream: input %ld (seed %#"
	    PRIx64 ", %zu bytes) hangs; saved as %s\n", i, seed, len, fz_hang_path);
	alarm(60);
	(void) LLVMFuzzerTestOneInput(buf, len);
	alarm(0);
	fz_cur = NULL;
}

/* fuzz_stream FILE: one saved input, received for real. */
static int
fz_replay(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		perror(path);
		return (1);
	}
	uint8_t *buf = tarn_alloc(32 * MiB);
	size_t len = fread(buf, 1, 32 * MiB, f);
	fclose(f);
	fz_setup();
	fz_inputs = FZ_REAL_EVERY - 1;
	fz_one(buf, len, 0, 0);
	tarn_free(buf);
	printf("fuzz_stream: %s: %" PRIu64 " went in\n", path, fz_received);
	return (0);
}

int
main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");
	(void) snprintf(fz_hang_path, sizeof (fz_hang_path), "%s/fuzz_stream-hang.bin",
	    tmp != NULL ? tmp : "/tmp");
	signal(SIGALRM, fz_hang);
	if (argc > 1 && access(argv[1], R_OK) == 0)
		return (fz_replay(argv[1]));
	long n = argc > 1 ? atol(argv[1]) : 2000;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x57e4;
	tarn_rand_t r;
	tarn_rand_seed(&r, seed);
	uint64_t t0 = tarn_now_ns();
	fz_setup();
	/* the valid streams go in, plain and with -F (the fuzzer's baseline) */
	for (int k = 0; k < 2 * FZ_NSTREAMS; k++) {
		fz_inputs = (uint64_t)(k / FZ_NSTREAMS) * FZ_REAL_EVERY + FZ_REAL_EVERY - 1;
		uint64_t before = fz_received;
		(void) LLVMFuzzerTestOneInput(fz_streams[k % FZ_NSTREAMS].b,
		    fz_streams[k % FZ_NSTREAMS].len);
		if (fz_received != before + 1)
			fz_die("a valid stream", "was not received");
	}
	size_t cap = 0;
	for (int k = 0; k < FZ_NSTREAMS; k++)
		cap = MAX(cap, fz_streams[k].len);
	cap += 64 * KiB;
	uint8_t *buf = tarn_alloc(cap);
	fz_inputs = 0;
	for (long i = 0; i < n; i++) {
		size_t len;
		if (tarn_rand_range(&r, 20) == 0) {
			len = tarn_rand_range(&r, 4096);
			for (size_t k = 0; k < len; k++)
				buf[k] = (uint8_t)tarn_rand_u64(&r);
			if (len >= 4 && tarn_rand_range(&r, 2) == 0)
				memcpy(buf, "STRN", 4);     /* past the magic check */
		} else {
			const fz_buf_t *s = &fz_streams[tarn_rand_range(&r, FZ_NSTREAMS)];
			memcpy(buf, s->b, s->len);
			len = s->len;
			int muts = 1 + (int)tarn_rand_range(&r, 3);
			for (int m = 0; m < muts; m++)
				len = fz_mutate(buf, len, cap, &r);
			/* most mutants get their checksums right again */
			if (tarn_rand_range(&r, 5) != 0)
				fz_reseal(buf, len, tarn_rand_range(&r, 2) == 0);
		}
		fz_one(buf, len, i, seed);
	}
	tarn_free(buf);
	for (int k = 0; k < FZ_NSTREAMS; k++)
		tarn_free(fz_streams[k].b);
	printf("fuzz_stream: %ld inputs, %.1f s; real receives: %" PRIu64 " went in, refused %"
	    PRIu64 " by the stream's checks, %" PRIu64 " by a record's fields, %" PRIu64
	    " by the target, %" PRIu64 " otherwise\n", n, (double)(tarn_now_ns() - t0) / 1e9,
	    fz_received, fz_refused[0], fz_refused[1], fz_refused[2], fz_refused[3]);
	return (0);
}
#endif
