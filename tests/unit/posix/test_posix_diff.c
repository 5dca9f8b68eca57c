/*
 * test_posix_diff.c — posix_diff (zfs diff's walk) between two states of
 * one file system, and its pure parts (type letters, escapes).  The older
 * state is the object set's root as synced at one txg, opened a second
 * time from its block pointer after later changes; the object set keeps
 * the blocks born up to then (dmu_objset_set_prev_snap_txg, what a
 * snapshot does), so the old tree stays readable.
 */
#pragma GCC diagnostic ignored "-Wunused-function"   /* posix_tt.h's other helpers */
#include "posix_tt.h"

static void
diff_type_chars(void)
{
	TT_CHECK(posix_diff_type_char(S_IFREG | 0644) == 'F');
	TT_CHECK(posix_diff_type_char(S_IFDIR | 0755) == '/');
	TT_CHECK(posix_diff_type_char(S_IFLNK | 0777) == '@');
	TT_CHECK(posix_diff_type_char(S_IFIFO) == '|');
	TT_CHECK(posix_diff_type_char(S_IFSOCK) == '=');
	TT_CHECK(posix_diff_type_char(S_IFBLK) == 'B');
	TT_CHECK(posix_diff_type_char(S_IFCHR) == 'C');
	TT_CHECK(posix_diff_type_char(0) == '?');
}

static void
diff_escape(void)
{
	char buf[64];
	TT_EQ(posix_diff_escape("/a/b.c", buf, sizeof (buf)), 6);
	TT_CHECK(strcmp(buf, "/a/b.c") == 0);
	TT_EQ(posix_diff_escape("a b", buf, sizeof (buf)), 7);
	TT_CHECK(strcmp(buf, "a\\0040b") == 0);
	(void) posix_diff_escape("x\\y\t\x7f", buf, sizeof (buf));
	TT_CHECK(strcmp(buf, "x\\0134y\\0011\\0177") == 0);
	(void) posix_diff_escape("\xc3\xa9", buf, sizeof (buf));      /* é in UTF-8 */
	TT_CHECK(strcmp(buf, "\\0303\\0251") == 0);
	/* truncation: the full length comes back, the buffer holds what fits */
	TT_EQ(posix_diff_escape("abc def", buf, 5), 11);
	TT_CHECK(strcmp(buf, "abc\\") == 0);
	TT_EQ(posix_diff_escape("", buf, sizeof (buf)), 0);
	TT_CHECK(buf[0] == '\0');
}

/* ---- the walk ---- */

typedef struct dcoll {
	tarn_array_t lines;     /* char *: "W\tpath[ -> new][\t(+n)]" */
	uint64_t last_ino;
	bool ordered;
	int stop_after;         /* > 0: return 1 after so many records */
	int n;
} dcoll_t;

static int
dcoll_fn(void *arg, const posix_diff_rec_t *r)
{
	dcoll_t *c = arg;
	char line[1024], links[32] = "";
	if (r->pdr_links != 0)
		snprintf(links, sizeof (links), "\t(%+" PRId64 ")", r->pdr_links);
	snprintf(line, sizeof (line), "%c\t%c\t%s%s%s%s", r->pdr_what,
	    posix_diff_type_char(r->pdr_mode), r->pdr_path, r->pdr_topath ? " -> " : "",
	    r->pdr_topath ? r->pdr_topath : "", links);
	if (r->pdr_ino < c->last_ino)
		c->ordered = false;
	c->last_ino = r->pdr_ino;
	TARN_ARRAY_APPEND(&c->lines, char *, tarn_strdup(line));
	c->n++;
	return (c->stop_after > 0 && c->n >= c->stop_after ? 1 : 0);
}

static bool
dcoll_has(dcoll_t *c, const char *line)
{
	for (size_t i = 0; i < tarn_array_len(&c->lines); i++)
		if (strcmp(TARN_ARRAY_AT(&c->lines, char *, i), line) == 0)
			return (true);
	fprintf(stderr, "  missing: %s\n", line);
	return (false);
}

static void
dcoll_free(dcoll_t *c)
{
	for (size_t i = 0; i < tarn_array_len(&c->lines); i++)
		tarn_free(TARN_ARRAY_AT(&c->lines, char *, i));
	tarn_array_fini(&c->lines);
}

static posix_ino_t
dt_mkdir(tfs_t *t, posix_ino_t dir, const char *name)
{
	posix_attr_t a;
	TT_OK(posix_mkdir(t->fs, dir, name, 0755, &tp_root_cred, &a));
	posix_forget(t->fs, a.pa_ino, 1);
	return (a.pa_ino);
}

static posix_ino_t
dt_file(tfs_t *t, posix_ino_t dir, const char *name, uint64_t len)
{
	posix_ino_t ino = tp_file(t, dir, name, len, 7);
	posix_forget(t->fs, ino, 1);
	return (ino);
}

/* The file system's state now: its root bp and txg; later frees of it are kept. */
static void
dt_mark(tfs_t *t, blkptr_t *bp, uint64_t *txg)
{
	TT_OK(posix_fs_sync(t->fs));
	*bp = *dmu_objset_rootbp(t->os);
	*txg = bp->bp_birth;
	dmu_objset_set_prev_snap_txg(t->os, *txg);
}

static void
dt_done(tfs_t *t)
{
	/* the kept blocks are nobody's: no verify of the space (tp_done would) */
	dmu_objset_set_prev_snap_txg(t->os, 0);
	TT_OK(posix_fs_sync(t->fs));
	blkptr_t *bps;
	(void) dmu_objset_dead_take(t->os, &bps);
	tarn_free(bps);
	posix_fs_close(t->fs);
	spa_close(t->spa);
	for (int i = 0; i < t->ndev; i++)
		unlink(tp_paths[i]);
	memset(t, 0, sizeof (*t));
}

static void
diff_changes(void)
{
	tfs_t t;
	tp_pool(&t, 1, 256 << 20);
	posix_ino_t r = t.root, d1 = dt_mkdir(&t, r, "d1"), d2 = dt_mkdir(&t, r, "d2");
	posix_ino_t a = dt_file(&t, r, "a", 5000);
	(void) dt_file(&t, d1, "b", 100);
	posix_ino_t ren = dt_file(&t, r, "ren", 10), mv = dt_file(&t, d1, "mv", 10);
	posix_ino_t chm = dt_file(&t, r, "chm", 10), hl = dt_file(&t, r, "hl", 10);
	posix_ino_t at = dt_file(&t, r, "at", 10), sp = dt_file(&t, r, "sp ace", 10);
	(void) dt_file(&t, r, "del", 10);
	char name[32];
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof (name), "f%03d", i);
		(void) dt_file(&t, d2, name, 1);
	}
	(void) sp;
	blkptr_t oldbp;
	uint64_t txg;
	dt_mark(&t, &oldbp, &txg);

	/* the changes */
	uint8_t buf[100] = { 1 };
	uint64_t n;
	TT_OK(posix_write(t.fs, a, 10, sizeof (buf), buf, NULL, &n));
	posix_ino_t nf = dt_file(&t, d1, "new", 0);
	posix_ino_t nd = dt_mkdir(&t, r, "newdir");
	posix_attr_t sa;
	TT_OK(posix_symlink(t.fs, nd, "sym", "/x", &tp_root_cred, &sa));
	posix_forget(t.fs, sa.pa_ino, 1);
	TT_OK(posix_rename(t.fs, r, "ren", r, "ren2", 0));
	TT_OK(posix_rename(t.fs, d1, "mv", r, "mv", 0));
	posix_attr_t in = { .pa_mode = 0600 }, out;
	TT_OK(posix_setattr(t.fs, chm, &in, POSIX_SET_MODE, &tp_root_cred, &out));
	TT_OK(posix_link(t.fs, hl, d1, "hl2", &out));
	posix_forget(t.fs, hl, 1);
	/* a read's atime update changes no ctime: no change for zfs diff */
	posix_attr_t a0, a1;
	TT_OK(posix_getattr(t.fs, at, &a0));
	t.opts.pfo_atime = POSIX_ATIME_ON;
	posix_fs_set_opts(t.fs, &t.opts);
	posix_touch_atime(t.fs, at);
	TT_OK(posix_getattr(t.fs, at, &a1));
	TT_CHECK(a0.pa_atime.tv_nsec != a1.pa_atime.tv_nsec ||
	    a0.pa_atime.tv_sec != a1.pa_atime.tv_sec);
	TT_OK(posix_unlink(t.fs, r, "del"));
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof (name), "f%03d", i);
		TT_OK(posix_unlink(t.fs, d2, name));
	}
	TT_OK(posix_rmdir(t.fs, r, "d2"));
	TT_OK(posix_fs_sync(t.fs));

	objset_t *old;
	TT_OK(dmu_objset_open(spa_dmu_pool(t.spa), &oldbp, NULL, &old));
	dcoll_t c = { .lines = TARN_ARRAY_INIT(char *), .ordered = true };
	TT_OK(posix_diff(old, t.os, txg, dcoll_fn, &c));
	TT_CHECK(c.ordered);
	TT_CHECK(dcoll_has(&c, "M\t/\t/"));
	TT_CHECK(dcoll_has(&c, "M\t/\t/d1"));
	TT_CHECK(dcoll_has(&c, "M\tF\t/a"));
	TT_CHECK(dcoll_has(&c, "+\tF\t/d1/new"));
	TT_CHECK(dcoll_has(&c, "+\t/\t/newdir"));
	TT_CHECK(dcoll_has(&c, "+\t@\t/newdir/sym"));
	TT_CHECK(dcoll_has(&c, "R\tF\t/ren -> /ren2"));
	TT_CHECK(dcoll_has(&c, "R\tF\t/d1/mv -> /mv"));
	TT_CHECK(dcoll_has(&c, "M\tF\t/chm"));
	TT_CHECK(dcoll_has(&c, "M\tF\t/hl\t(+1)"));
	TT_CHECK(dcoll_has(&c, "-\tF\t/del"));
	TT_CHECK(dcoll_has(&c, "-\t/\t/d2"));
	for (int i = 0; i < 100; i++) {
		char line[64];
		snprintf(line, sizeof (line), "-\tF\t/d2/f%03d", i);
		TT_CHECK(dcoll_has(&c, line));
	}
	/* and nothing else: the atime-only change, b, sp ace are not there */
	TT_EQ(tarn_array_len(&c.lines), 12 + 100);
	(void) nf;
	(void) mv;
	(void) ren;
	dcoll_free(&c);

	/* a callback's non-zero return stops the walk and comes back */
	dcoll_t s = { .lines = TARN_ARRAY_INIT(char *), .ordered = true, .stop_after = 3 };
	TT_EQ(posix_diff(old, t.os, txg, dcoll_fn, &s), 1);
	TT_EQ(tarn_array_len(&s.lines), 3);
	dcoll_free(&s);

	/* a state against itself: nothing */
	dcoll_t z = { .lines = TARN_ARRAY_INIT(char *), .ordered = true };
	TT_OK(posix_diff(old, old, txg, dcoll_fn, &z));
	TT_EQ(tarn_array_len(&z.lines), 0);
	dcoll_free(&z);
	dmu_objset_close(old);
	dt_done(&t);
}

/* A file replaced by a directory of the same name: removed, then added. */
static void
diff_replace(void)
{
	tfs_t t;
	tp_pool(&t, 1, 256 << 20);
	posix_ino_t r = t.root;
	(void) dt_file(&t, r, "x", 10);
	blkptr_t oldbp;
	uint64_t txg;
	dt_mark(&t, &oldbp, &txg);
	/* x goes and its object number is taken by a directory of the same name */
	TT_OK(posix_unlink(t.fs, r, "x"));
	TT_OK(posix_fs_sync(t.fs));
	(void) dt_mkdir(&t, r, "x");
	TT_OK(posix_fs_sync(t.fs));
	objset_t *old;
	TT_OK(dmu_objset_open(spa_dmu_pool(t.spa), &oldbp, NULL, &old));
	dcoll_t c = { .lines = TARN_ARRAY_INIT(char *), .ordered = true };
	TT_OK(posix_diff(old, t.os, txg, dcoll_fn, &c));
	TT_CHECK(dcoll_has(&c, "-\tF\t/x"));
	TT_CHECK(dcoll_has(&c, "+\t/\t/x"));
	TT_CHECK(dcoll_has(&c, "M\t/\t/"));
	TT_EQ(tarn_array_len(&c.lines), 3);
	dcoll_free(&c);
	dmu_objset_close(old);
	dt_done(&t);
}

TT_MAIN(
	{ "diff_type_chars", diff_type_chars },
	{ "diff_escape", diff_escape },
	{ "diff_changes", diff_changes },
	{ "diff_replace", diff_replace },
)
