/*
 * Heavier tests of the POSIX layer on a real pool: a directory of 100,000
 * entries (and a listing that continues across creates and removes), a
 * seeded random-operation test of one file against an in-memory model,
 * ENOSPC on a small pool, and many threads changing one directory.
 * Seeded tests print their seed; TARN_SEED=<n> replays one.
 */
#include "posix_tt.h"

#include <time.h>

static tfs_t t;

static uint64_t
test_seed(const char *what)
{
	const char *e = getenv("TARN_SEED");
	uint64_t seed = e != NULL ? strtoull(e, NULL, 0) : (uint64_t)time(NULL) ^ tarn_now_ns();
	fprintf(stderr, "  %s: seed %" PRIu64 " (TARN_SEED=%" PRIu64 " replays it)\n", what,
	    seed, seed);
	return (seed);
}

/* ---- a large directory ---- */

#define BIG_N 100000

static int
name_index(const char *name, char prefix)
{
	if (name[0] != prefix)
		return (-1);
	return (atoi(name + 1));
}

/*
 * A listing in batches of 500 while entries come and go (20 removed and
 * 20 added per batch): every entry that stayed is seen exactly once.
 * Returns the number of g* entries added.
 */
static int
bigdir_churn(posix_ino_t dir, uint8_t *seen, uint8_t *removed)
{
	char name[32];
	posix_attr_t a;
	tp_rd_t rd;
	tarn_rand_t r;
	uint64_t seed = test_seed("bigdir");
	tarn_rand_seed(&r, seed);
	memset(seen, 0, BIG_N);
	uint8_t *seen_new = tarn_alloc(BIG_N);
	int added = 0;
	tp_rd_init(&rd, 500);
	bool more = true;
	while (more) {
		size_t from = rd.n;
		more = tp_rd_step(&t, dir, &rd);
		for (size_t i = from; i < rd.n; i++) {
			int k = name_index(rd.ents[i].name, 'f');
			if (k >= 0) {
				TT_ASSERT(seen[k] == 0);
				seen[k] = 1;
			} else if ((k = name_index(rd.ents[i].name, 'g')) >= 0) {
				TT_ASSERT(seen_new[k] == 0);
				seen_new[k] = 1;
			}
		}
		for (int j = 0; j < 20; j++) {
			int k = (int)tarn_rand_range(&r, BIG_N);
			if (!removed[k]) {
				snprintf(name, sizeof (name), "f%06d", k);
				TT_OK(posix_unlink(t.fs, dir, name));
				removed[k] = 1;
			}
			snprintf(name, sizeof (name), "g%06d", added++);
			TT_OK(posix_create(t.fs, dir, name, S_IFREG | 0644, 0, NULL, true, &a));
			posix_forget(t.fs, a.pa_ino, 1);
		}
	}
	int missing = 0;
	for (int k = 0; k < BIG_N; k++)
		missing += !removed[k] && !seen[k];
	TT_EQ(missing, 0);
	tp_rd_free(&rd);
	tarn_free(seen_new);
	return (added);
}

static void
test_bigdir(void)
{
	tp_pool(&t, 1, 512 * MiB);
	posix_attr_t d, a;
	TT_OK(posix_mkdir(t.fs, t.root, "big", 0755, NULL, &d));
	posix_ino_t dir = d.pa_ino;
	char name[32];
	uint64_t t0 = tarn_now_ns();
	for (int i = 0; i < BIG_N; i++) {
		snprintf(name, sizeof (name), "f%06d", i);
		TT_OK(posix_create(t.fs, dir, name, S_IFREG | 0644, 0, NULL, true, &a));
		posix_forget(t.fs, a.pa_ino, 1);
	}
	uint64_t t1 = tarn_now_ns();
	TT_OK(posix_getattr(t.fs, dir, &d));
	TT_EQ(d.pa_size, BIG_N + 2);
	for (int i = 0; i < BIG_N; i++) {
		snprintf(name, sizeof (name), "f%06d", i);
		TT_OK(posix_lookup(t.fs, dir, name, &a));
		posix_forget(t.fs, a.pa_ino, 1);
	}
	uint64_t t2 = tarn_now_ns();
	/* every entry exactly once, in batches of 1000 */
	uint8_t *seen = tarn_alloc(BIG_N), *removed = tarn_alloc(BIG_N);
	tp_rd_t rd;
	tp_rd_all(&t, dir, &rd, 1000);
	TT_EQ(rd.n, BIG_N + 2);
	for (size_t i = 2; i < rd.n; i++) {
		int k = name_index(rd.ents[i].name, 'f');
		TT_ASSERT(k >= 0 && k < BIG_N);
		TT_ASSERT(seen[k] == 0);
		seen[k] = 1;
		TT_EQ(rd.ents[i].type, DT_REG);
	}
	tp_rd_free(&rd);
	uint64_t t3 = tarn_now_ns();

	int added = bigdir_churn(dir, seen, removed);
	uint64_t t4 = tarn_now_ns();

	/* remove everything */
	for (int k = 0; k < BIG_N; k++) {
		if (removed[k])
			continue;
		snprintf(name, sizeof (name), "f%06d", k);
		TT_OK(posix_unlink(t.fs, dir, name));
	}
	for (int k = 0; k < added; k++) {
		snprintf(name, sizeof (name), "g%06d", k);
		TT_OK(posix_unlink(t.fs, dir, name));
	}
	TT_OK(posix_getattr(t.fs, dir, &d));
	TT_EQ(d.pa_size, 2);
	tp_rd_all(&t, dir, &rd, 0);
	TT_EQ(rd.n, 2);
	tp_rd_free(&rd);
	TT_OK(posix_rmdir(t.fs, t.root, "big"));
	uint64_t t5 = tarn_now_ns();
	fprintf(stderr, "  %d entries: create %.1fs lookup %.1fs readdir %.1fs churn %.1fs "
	    "remove %.1fs\n", BIG_N, (t1 - t0) / 1e9, (t2 - t1) / 1e9, (t3 - t2) / 1e9,
	    (t4 - t3) / 1e9, (t5 - t4) / 1e9);
	tarn_free(seen);
	tarn_free(removed);
	tp_done(&t);
}

/* ---- random operations on one file against a model ---- */

#define MODEL_MAX (6 * MiB)

typedef struct model {
	uint8_t *m;
	uint64_t size;
} model_t;

static void
model_compare(posix_ino_t ino, const model_t *md, uint64_t off, uint64_t len, uint8_t *rb,
    uint64_t op)
{
	uint64_t n;
	TT_OK(posix_read(t.fs, ino, off, len, rb, &n));
	uint64_t want = off >= md->size ? 0 : MIN(len, md->size - off);
	if (n != want) {
		fprintf(stderr, "  op %" PRIu64 ": read %" PRIu64 "+%" PRIu64 " gave %" PRIu64
		    " bytes, model %" PRIu64 "\n", op, off, len, n, want);
		TT_ASSERT(0);
	}
	for (uint64_t i = 0; i < n; i++) {
		if (rb[i] != md->m[off + i]) {
			fprintf(stderr, "  op %" PRIu64 ": byte %" PRIu64 " is %u, model %u\n", op,
			    off + i, rb[i], md->m[off + i]);
			TT_ASSERT(0);
		}
	}
}

/* SEEK_DATA / SEEK_HOLE may call a hole data, never data a hole. */
static void
model_seek(posix_ino_t ino, const model_t *md, uint64_t off)
{
	uint64_t out;
	int e = posix_lseek(t.fs, ino, off, SEEK_DATA, &out);
	if (off >= md->size) {
		TT_EQ(e, ENXIO);
		return;
	}
	uint64_t lim = e == ENXIO ? md->size : out;
	TT_ASSERT(e == 0 || e == ENXIO);
	TT_ASSERT(lim >= off && lim <= md->size);
	for (uint64_t i = off; i < lim; i++)
		TT_ASSERT(md->m[i] == 0);
	TT_OK(posix_lseek(t.fs, ino, off, SEEK_HOLE, &out));
	TT_ASSERT(out >= off && out <= md->size);
	if (out < md->size)
		TT_ASSERT(md->m[out] == 0);
}

static uint64_t
rand_len(tarn_rand_t *r)
{
	switch (tarn_rand_range(r, 4)) {
	case 0: return (1 + tarn_rand_range(r, 100));
	case 1: return (1 + tarn_rand_range(r, 8192));
	case 2: return (1 + tarn_rand_range(r, 128 * KiB));
	default: return (1 + tarn_rand_range(r, 700 * KiB));
	}
}

static void
model_op(posix_ino_t ino, model_t *md, tarn_rand_t *r, uint8_t *buf, uint8_t *rb, uint64_t op)
{
	uint64_t len = rand_len(r), n;
	uint64_t off = tarn_rand_range(r, MODEL_MAX - len);
	uint64_t k = tarn_rand_range(r, 100);
	if (k < 40) {
		for (uint64_t i = 0; i < len; i += 8) {
			uint64_t v = tarn_rand_u64(r);
			memcpy(buf + i, &v, MIN(8, len - i));
		}
		TT_OK(posix_write(t.fs, ino, off, len, buf, NULL, &n));
		TT_EQ(n, len);
		memcpy(md->m + off, buf, len);
		md->size = MAX(md->size, off + len);
	} else if (k < 70) {
		if (tarn_rand_range(r, 2) == 0 && md->size > 0)
			off = tarn_rand_range(r, md->size);
		model_compare(ino, md, off, len, rb, op);
	} else if (k < 78) {
		uint64_t ns = tarn_rand_range(r, 4) == 0 ? 0 : tarn_rand_range(r, MODEL_MAX);
		posix_attr_t in = { .pa_size = ns }, a;
		TT_OK(posix_setattr(t.fs, ino, &in, POSIX_SET_SIZE, NULL, &a));
		if (ns < md->size)
			memset(md->m + ns, 0, md->size - ns);
		md->size = ns;
	} else if (k < 88) {
		TT_OK(posix_falloc(t.fs, ino, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off,
		    len));
		if (off < md->size)
			memset(md->m + off, 0, MIN(len, md->size - off));
	} else if (k < 92) {
		bool keep = tarn_rand_range(r, 2);
		TT_OK(posix_falloc(t.fs, ino, keep ? FALLOC_FL_KEEP_SIZE : 0, off, len));
		if (!keep)
			md->size = MAX(md->size, off + len);
	} else {
		model_seek(ino, md, md->size > 0 ? tarn_rand_range(r, md->size + 10) : 0);
	}
	posix_attr_t a;
	TT_OK(posix_getattr(t.fs, ino, &a));
	if (a.pa_size != md->size) {
		fprintf(stderr, "  op %" PRIu64 " (kind %" PRIu64 "): size %" PRIu64 ", model %"
		    PRIu64 "\n", op, k, a.pa_size, md->size);
		TT_ASSERT(0);
	}
}

static void
test_random_model(void)
{
	enum { OPS = 40000 };
	tp_pool(&t, 1, 512 * MiB);
	uint64_t seed = test_seed("random_model");
	tarn_rand_t r;
	tarn_rand_seed(&r, seed);
	/* small records make deeper trees and more partial blocks */
	const uint32_t rs[] = { 4 * KiB, 16 * KiB, 128 * KiB, 128 * KiB };
	t.opts.pfo_recordsize = rs[tarn_rand_range(&r, ARRAY_SIZE(rs))];
	posix_fs_set_opts(t.fs, &t.opts);
	model_t md = { .m = tarn_alloc(MODEL_MAX), .size = 0 };
	uint8_t *buf = tarn_alloc(MODEL_MAX), *rb = tarn_alloc(MODEL_MAX);
	posix_attr_t a;
	TT_OK(posix_create(t.fs, t.root, "model", S_IFREG | 0644, 0, NULL, true, &a));
	posix_ino_t ino = a.pa_ino;
	for (uint64_t op = 0; op < OPS; op++) {
		model_op(ino, &md, &r, buf, rb, op);
		if (op % 1000 == 999)
			TT_OK(posix_fs_sync(t.fs));
		if (op % 2500 == 2499)
			model_compare(ino, &md, 0, MODEL_MAX, rb, op);
		if (op % 10000 == 9999) {
			/* the record size may change between mounts */
			t.opts.pfo_recordsize = rs[tarn_rand_range(&r, ARRAY_SIZE(rs))];
			tp_reopen(&t);
			model_compare(ino, &md, 0, MODEL_MAX, rb, op);
		}
	}
	model_compare(ino, &md, 0, MODEL_MAX, rb, OPS);
	uint64_t nz = 0;
	for (uint64_t i = 0; i < md.size; i++)
		nz += md.m[i] != 0;
	fprintf(stderr, "  %d ops, records of %u; final size %" PRIu64 ", %" PRIu64 " non-zero bytes\n", OPS,
	    t.opts.pfo_recordsize, md.size, nz);
	tarn_free(md.m);
	tarn_free(buf);
	tarn_free(rb);
	tp_done(&t);
}

/* ---- ENOSPC on a small pool ---- */

static void
test_enospc(void)
{
	tp_pool(&t, 1, 64 * MiB);
	enum { FILE_SZ = 4 * MiB, CHUNK = MiB };
	uint8_t *buf = tarn_alloc(CHUNK);
	char name[32];
	int nfiles = 0, err = 0;
	uint64_t last_len = 0;
	posix_ino_t inos[64];
	while (err == 0 && nfiles < 64) {
		posix_attr_t a;
		snprintf(name, sizeof (name), "fill%d", nfiles);
		err = posix_create(t.fs, t.root, name, S_IFREG | 0644, 0, NULL, true, &a);
		if (err != 0)
			break;
		inos[nfiles++] = a.pa_ino;
		posix_forget(t.fs, a.pa_ino, 1);
		for (uint64_t off = 0; off < FILE_SZ && err == 0; off += CHUNK) {
			uint64_t n;
			tp_fill(buf, CHUNK, (uint64_t)nfiles * 100 + off / CHUNK);
			err = posix_write(t.fs, a.pa_ino, off, CHUNK, buf, NULL, &n);
			last_len = err == 0 ? off + n : off;
		}
	}
	TT_EQ(err, ENOSPC);
	TT_CHECK(nfiles >= 4);
	/* everything written before reads back */
	for (int i = 0; i < nfiles; i++) {
		uint64_t len = i == nfiles - 1 ? last_len : FILE_SZ, n;
		for (uint64_t off = 0; off < len; off += CHUNK) {
			tp_fill(buf, CHUNK, (uint64_t)(i + 1) * 100 + off / CHUNK);
			uint8_t *rb = tarn_alloc(CHUNK);
			TT_OK(posix_read(t.fs, inos[i], off, CHUNK, rb, &n));
			TT_ASSERT(memcmp(rb, buf, n) == 0);
			tarn_free(rb);
		}
	}
	/* a full pool still deletes, and the space comes back */
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof (name), "fill%d", i);
		TT_OK(posix_unlink(t.fs, t.root, name));
	}
	for (int i = 0; i < 5; i++)
		TT_OK(posix_fs_sync(t.fs));
	posix_ino_t f = tp_file(&t, t.root, "after", 2 * FILE_SZ, 77);
	tp_check_file(&t, f, 2 * FILE_SZ, 77);
	tarn_free(buf);
	tp_done(&t);
}

/* ---- many threads in one directory ---- */

#define TH_N     6
#define TH_OPS   10000
#define TH_NAMES 48
#define TH_STABLE 200

typedef struct th_arg {
	int id;
	posix_ino_t dir;
	uint64_t seed;
	int bad;
	int listings;
	volatile bool *stop;
} th_arg_t;

static bool
th_errno_ok(int e)
{
	return (e == 0 || e == ENOENT || e == EEXIST || e == ENOTEMPTY || e == EISDIR ||
	    e == ENOTDIR || e == EPERM);
}

static void
th_one(th_arg_t *ta, tarn_rand_t *r)
{
	char a[100], b[16];
	bool adir = tarn_rand_range(r, 4) == 0, bdir = tarn_rand_range(r, 4) == 0;
	snprintf(a, sizeof (a), "%c%u", adir ? 'd' : 'n', (unsigned)tarn_rand_range(r, TH_NAMES));
	snprintf(b, sizeof (b), "%c%u", bdir ? 'd' : 'n', (unsigned)tarn_rand_range(r, TH_NAMES));
	posix_attr_t at;
	int e = 0;
	uint64_t n;
	switch (tarn_rand_range(r, 8)) {
	case 0:
		e = adir ? posix_mkdir(t.fs, ta->dir, a, 0755, NULL, &at) :
		    posix_create(t.fs, ta->dir, a, S_IFREG | 0644, 0, NULL, true, &at);
		if (e == 0)
			posix_forget(t.fs, at.pa_ino, 1);
		break;
	case 1:
		e = adir ? posix_rmdir(t.fs, ta->dir, a) : posix_unlink(t.fs, ta->dir, a);
		break;
	case 2: case 3:
		e = posix_rename(t.fs, ta->dir, a, ta->dir, b,
		    (unsigned)tarn_rand_range(r, 3));
		break;
	case 4:
		if ((e = posix_lookup(t.fs, ta->dir, a, &at)) == 0) {
			e = posix_link(t.fs, at.pa_ino, ta->dir, b, NULL);
			posix_forget(t.fs, at.pa_ino, 1);
		}
		break;
	case 5:
		if ((e = posix_lookup(t.fs, ta->dir, a, &at)) == 0) {
			if (!S_ISDIR(at.pa_mode))
				e = posix_write(t.fs, at.pa_ino, tarn_rand_range(r, 100000), 100, a,
				    NULL, &n);
			posix_forget(t.fs, at.pa_ino, 1);
		}
		break;
	default:
		if ((e = posix_lookup(t.fs, ta->dir, a, &at)) == 0)
			posix_forget(t.fs, at.pa_ino, 1);
		break;
	}
	if (!th_errno_ok(e)) {
		fprintf(stderr, "  thread %d: error %d\n", ta->id, e);
		ta->bad++;
	}
}

static void *
th_worker(void *p)
{
	th_arg_t *ta = p;
	tarn_rand_t r;
	tarn_rand_seed(&r, ta->seed + (uint64_t)ta->id);
	for (int i = 0; i < TH_OPS; i++)
		th_one(ta, &r);
	return (NULL);
}

/* Lists the directory in small batches: the stable names come exactly once. */
static void *
th_lister(void *p)
{
	th_arg_t *ta = p;
	uint8_t seen[TH_STABLE];
	while (!*ta->stop) {
		tp_rd_t rd;
		memset(seen, 0, sizeof (seen));
		tp_rd_all(&t, ta->dir, &rd, 7);
		for (size_t i = 0; i < rd.n; i++) {
			int k = name_index(rd.ents[i].name, 's');
			if (k >= 0 && seen[k]++ != 0)
				ta->bad++;
		}
		for (int k = 0; k < TH_STABLE; k++)
			ta->bad += seen[k] != 1;
		tp_rd_free(&rd);
		ta->listings++;
	}
	return (NULL);
}

/* After the storm: the directory's entries, sizes and link counts agree. */
static void
th_check(posix_ino_t dir)
{
	tp_rd_t rd;
	tp_rd_all(&t, dir, &rd, 0);
	posix_attr_t d;
	TT_OK(posix_getattr(t.fs, dir, &d));
	TT_EQ(d.pa_size, rd.n);
	uint32_t subdirs = 0;
	for (size_t i = 2; i < rd.n; i++) {
		posix_attr_t a;
		TT_OK(posix_lookup(t.fs, dir, rd.ents[i].name, &a));
		posix_forget(t.fs, a.pa_ino, 1);
		TT_EQ(a.pa_ino, rd.ents[i].ino);
		TT_EQ(rd.ents[i].type, (a.pa_mode >> 12) & 15);
		if (S_ISDIR(a.pa_mode)) {
			subdirs++;
			TT_EQ(a.pa_nlink, 2);
			TT_EQ(a.pa_size, 2);
			continue;
		}
		uint32_t links = 0;
		for (size_t j = 2; j < rd.n; j++)
			links += rd.ents[j].ino == a.pa_ino;
		TT_EQ(a.pa_nlink, links);
	}
	TT_EQ(d.pa_nlink, 2 + subdirs);
	tp_rd_free(&rd);
}

static void
test_threads(void)
{
	tp_pool(&t, 1, 256 * MiB);
	posix_attr_t d, a;
	TT_OK(posix_mkdir(t.fs, t.root, "shared", 0755, NULL, &d));
	char name[16];
	for (int k = 0; k < TH_STABLE; k++) {
		snprintf(name, sizeof (name), "s%d", k);
		TT_OK(posix_create(t.fs, d.pa_ino, name, S_IFREG | 0644, 0, NULL, true, &a));
		posix_forget(t.fs, a.pa_ino, 1);
	}
	uint64_t seed = test_seed("threads");
	volatile bool stop = false;
	pthread_t th[TH_N + 1];
	th_arg_t ta[TH_N + 1];
	for (int i = 0; i <= TH_N; i++) {
		ta[i] = (th_arg_t){ .id = i, .dir = d.pa_ino, .seed = seed, .stop = &stop };
		pthread_create(&th[i], NULL, i < TH_N ? th_worker : th_lister, &ta[i]);
	}
	for (int i = 0; i < TH_N; i++)
		pthread_join(th[i], NULL);
	stop = true;
	pthread_join(th[TH_N], NULL);
	for (int i = 0; i <= TH_N; i++)
		TT_EQ(ta[i].bad, 0);
	TT_CHECK(ta[TH_N].listings > 0);
	th_check(d.pa_ino);
	TT_OK(posix_getattr(t.fs, d.pa_ino, &a));
	fprintf(stderr, "  %d threads x %d ops: %" PRIu64 " entries left, %d listings\n", TH_N,
	    TH_OPS, a.pa_size - 2, ta[TH_N].listings);
	TT_OK(zap_lookup_int(t.os, 1, "UNLINKED", &a.pa_ino));
	uint64_t n;
	TT_OK(zap_count(t.os, a.pa_ino, &n));
	TT_EQ(n, 0);
	tp_reopen(&t);
	th_check(d.pa_ino);
	tp_done(&t);
}


/* ---- many threads moving directories around a tree ---- */

#define TREE_TH   4
#define TREE_OPS  10000
#define TREE_MAX  512

typedef struct tree {
	pthread_mutex_t lock;
	posix_ino_t dirs[TREE_MAX];     /* known directories (may be stale) */
	int n;
} tree_t;

typedef struct tree_arg {
	tree_t *tr;
	int id;
	uint64_t seed;
	int bad;
	int renamed;
} tree_arg_t;

static posix_ino_t
tree_pick(tree_t *tr, tarn_rand_t *r)
{
	pthread_mutex_lock(&tr->lock);
	posix_ino_t d = tr->dirs[tarn_rand_range(r, (uint64_t)tr->n)];
	pthread_mutex_unlock(&tr->lock);
	return (d);
}

static void *
tree_worker(void *p)
{
	tree_arg_t *ta = p;
	tarn_rand_t r;
	tarn_rand_seed(&r, ta->seed * 31 + (uint64_t)ta->id);
	for (int i = 0; i < TREE_OPS; i++) {
		posix_ino_t a = tree_pick(ta->tr, &r), b = tree_pick(ta->tr, &r);
		char an[8], bn[8];
		snprintf(an, sizeof (an), "d%u", (unsigned)tarn_rand_range(&r, 8));
		snprintf(bn, sizeof (bn), "d%u", (unsigned)tarn_rand_range(&r, 8));
		posix_attr_t at;
		int e;
		uint64_t k = tarn_rand_range(&r, 10);
		if (k < 3) {
			e = posix_mkdir(t.fs, a, an, 0755, NULL, &at);
			if (e == 0) {
				posix_forget(t.fs, at.pa_ino, 1);
				pthread_mutex_lock(&ta->tr->lock);
				if (ta->tr->n < TREE_MAX)
					ta->tr->dirs[ta->tr->n++] = at.pa_ino;
				pthread_mutex_unlock(&ta->tr->lock);
			}
		} else if (k < 4) {
			e = posix_rmdir(t.fs, a, an);
		} else {
			e = posix_rename(t.fs, a, an, b, bn, (unsigned)tarn_rand_range(&r, 3));
			ta->renamed += e == 0;
		}
		if (e != 0 && e != ENOENT && e != EEXIST && e != ENOTEMPTY && e != EINVAL &&
		    e != ENOTDIR) {
			fprintf(stderr, "  tree thread %d: op %" PRIu64 " error %d\n", ta->id, k, e);
			ta->bad++;
		}
	}
	return (NULL);
}

/* Walk the tree: every directory once, ".." right, link counts right. */
static void
tree_walk(posix_ino_t dir, posix_ino_t parent, uint8_t *seen, uint64_t *ndirs, int depth)
{
	TT_ASSERT(depth < TREE_MAX);
	TT_ASSERT(dir < 1000000 && seen[dir] == 0);
	seen[dir] = 1;
	(*ndirs)++;
	tp_rd_t rd;
	tp_rd_all(&t, dir, &rd, 0);
	TT_EQ(rd.ents[1].ino, parent);
	uint32_t subdirs = 0;
	for (size_t i = 2; i < rd.n; i++) {
		TT_EQ(rd.ents[i].type, DT_DIR);
		subdirs++;
		tree_walk(rd.ents[i].ino, dir, seen, ndirs, depth + 1);
	}
	posix_attr_t a;
	TT_OK(posix_getattr(t.fs, dir, &a));
	TT_EQ(a.pa_nlink, 2 + subdirs);
	TT_EQ(a.pa_size, rd.n);
	tp_rd_free(&rd);
}

static void
tree_check(void)
{
	uint8_t *seen = tarn_alloc(1000000);
	uint64_t ndirs = 0, obj = 0, live = 0;
	tree_walk(t.root, t.root, seen, &ndirs, 0);
	/* no directory is cut off from the root */
	while (dmu_object_next(t.os, &obj) == 0) {
		posix_attr_t a;
		if (posix_getattr(t.fs, obj, &a) == 0 && S_ISDIR(a.pa_mode) && a.pa_nlink > 0) {
			live++;
			TT_CHECK(seen[obj]);
		}
	}
	TT_EQ(live, ndirs);
	tarn_free(seen);
}

static void
test_tree_threads(void)
{
	tp_pool(&t, 1, 256 * MiB);
	tree_t tr = { .n = 1 };
	pthread_mutex_init(&tr.lock, NULL);
	tr.dirs[0] = t.root;
	uint64_t seed = test_seed("tree_threads");
	pthread_t th[TREE_TH];
	tree_arg_t ta[TREE_TH];
	for (int i = 0; i < TREE_TH; i++) {
		ta[i] = (tree_arg_t){ .tr = &tr, .id = i, .seed = seed };
		pthread_create(&th[i], NULL, tree_worker, &ta[i]);
	}
	int renamed = 0;
	for (int i = 0; i < TREE_TH; i++) {
		pthread_join(th[i], NULL);
		TT_EQ(ta[i].bad, 0);
		renamed += ta[i].renamed;
	}
	fprintf(stderr, "  %d directories made, %d renames\n", tr.n - 1, renamed);
	tree_check();
	tp_reopen(&t);
	tree_check();
	pthread_mutex_destroy(&tr.lock);
	tp_done(&t);
}

static void
cleanup(void)
{
	tt_tmpdir_cleanup();
}

TT_MAIN(
	{ "bigdir", test_bigdir },
	{ "random_model", test_random_model },
	{ "enospc", test_enospc },
	{ "threads", test_threads },
	{ "tree_threads", test_tree_threads },
	{ "cleanup", cleanup },
)
