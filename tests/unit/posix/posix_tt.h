/*
 * posix_tt.h — helpers shared by the POSIX layer's unit tests: a real
 * pool on sparse files with one file system, reopen (also after a
 * simulated crash), and a readdir collector.
 */
#ifndef TARN_POSIX_TT_H
#define TARN_POSIX_TT_H

#include "posix.h"             /* first: posix_falloc is ours */
#include "tt.h"
#include "spa.h"
#include "tarn_array.h"

#include <dirent.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <sys/sysmacros.h>
#include <unistd.h>

typedef struct tfs {
	spa_t *spa;
	objset_t *os;
	posix_fs_t *fs;
	posix_ino_t root;
	int ndev;
	posix_fs_opts_t opts;
} tfs_t;

static char tp_paths[4][300];
static const char *tp_pathv[4];
static const posix_cred_t tp_root_cred = { .pc_uid = 0, .pc_gid = 0, .pc_umask = 022 };
static const posix_cred_t tp_user_cred = { .pc_uid = 1000, .pc_gid = 1000, .pc_umask = 022 };

static uint64_t
tp_avail(void *arg, bool *quota)
{
	if (quota != NULL)
		*quota = false;
	return (spa_get_avail(arg));
}

static void
tp_open_fs(tfs_t *t)
{
	t->opts.pfo_avail = tp_avail;
	t->opts.pfo_avail_arg = t->spa;
	TT_OK(posix_fs_open(t->os, &t->opts, &t->fs));
	t->root = posix_fs_root(t->fs);
}

/* A pool of n sparse files of `size` (n == 2: a mirror) with an empty file system. */
static void
tp_pool(tfs_t *t, int n, uint64_t size)
{
	memset(t, 0, sizeof (*t));
	t->ndev = n;
	char *argv[5];
	int argc = 0;
	if (n == 2)
		argv[argc++] = "mirror";
	for (int i = 0; i < n; i++) {
		snprintf(tp_paths[i], sizeof (tp_paths[i]), "%s/p%d", tt_tmpdir(), i);
		unlink(tp_paths[i]);
		int fd = open(tp_paths[i], O_CREAT | O_RDWR, 0644);
		TT_ASSERT(fd >= 0);
		TT_OK(ftruncate(fd, (off_t)size));
		close(fd);
		tp_pathv[i] = tp_paths[i];
		argv[argc++] = tp_paths[i];
	}
	spa_vdev_spec_t *spec;
	char err[256];
	TT_OK(spa_vdev_spec_parse(argc, argv, &spec, err, sizeof (err)));
	spa_create_opts_t o;
	memset(&o, 0, sizeof (o));
	o.sco_no_cache = true;
	int e = spa_create("posixtest", spec, &o, &t->spa, err, sizeof (err));
	if (e != 0)
		fprintf(stderr, "create: %s\n", err);
	spa_vdev_spec_free(spec);
	TT_OK(e);
	TT_OK(spa_objset_create(t->spa, "fs", DMU_OST_ZFS, &t->os));
	TT_OK(posix_fs_create(t->os, 0, 0));
	posix_fs_opts_default(&t->opts);
	tp_open_fs(t);
}

/* Close the file system as is (references and all) and the pool, and reopen both. */
static void
tp_reopen(tfs_t *t)
{
	posix_fs_close(t->fs);
	spa_close(t->spa);
	spa_import_opts_t o;
	memset(&o, 0, sizeof (o));
	o.sio_no_cache = true;
	char err[256];
	int e = spa_open_paths(tp_pathv, t->ndev, &o, &t->spa, err, sizeof (err));
	if (e != 0)
		fprintf(stderr, "open: %s\n", err);
	TT_OK(e);
	TT_OK(spa_objset_open(t->spa, "fs", &t->os));
	tp_open_fs(t);
}

static void
tp_done(tfs_t *t)
{
	if (t->fs != NULL)
		posix_fs_close(t->fs);
	if (t->spa != NULL) {
		uint64_t blocks = 0, errors = 0;
		TT_OK(spa_verify_all(t->spa, true, &blocks, &errors));
		TT_EQ(errors, 0);
		spa_close(t->spa);
	}
	for (int i = 0; i < t->ndev; i++)
		unlink(tp_paths[i]);
	memset(t, 0, sizeof (*t));
}

static void
tp_fill(uint8_t *buf, size_t len, uint64_t seed)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, seed);
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = tarn_rand_u64(&r);
		memcpy(buf + i, &v, MIN(8, len - i));
	}
}

/* Create a regular file and write len bytes of seeded data; returns its ino. */
static posix_ino_t
tp_file(tfs_t *t, posix_ino_t dir, const char *name, uint64_t len, uint64_t seed)
{
	posix_attr_t a;
	TT_OK(posix_create(t->fs, dir, name, S_IFREG | 0644, 0, &tp_root_cred, true, &a));
	if (len > 0) {
		uint8_t *buf = tarn_alloc(len);
		tp_fill(buf, len, seed);
		uint64_t n;
		TT_OK(posix_write(t->fs, a.pa_ino, 0, len, buf, NULL, &n));
		TT_EQ(n, len);
		tarn_free(buf);
	}
	return (a.pa_ino);
}

static void
tp_check_file(tfs_t *t, posix_ino_t ino, uint64_t len, uint64_t seed)
{
	uint8_t *buf = tarn_alloc(len + 1), *rb = tarn_alloc(len + 1);
	tp_fill(buf, len, seed);
	uint64_t n;
	TT_OK(posix_read(t->fs, ino, 0, len + 1, rb, &n));
	TT_EQ(n, len);
	TT_ASSERT(memcmp(buf, rb, len) == 0);
	tarn_free(buf);
	tarn_free(rb);
}

/* ---- readdir collector ---- */

typedef struct tp_dirent {
	char name[POSIX_NAME_MAX + 1];
	posix_ino_t ino;
	uint32_t type;
} tp_dirent_t;

typedef struct tp_rd {
	tp_dirent_t *ents;      /* the entries read so far: all's elements */
	size_t n;
	tarn_array_t all;       /* tp_dirent_t: where ents grows */
	size_t batch, limit;    /* refuse after `limit` entries per call (0: none) */
	uint64_t cookie;        /* where to continue */
} tp_rd_t;

static int
tp_rd_fn(void *arg, const char *name, posix_ino_t ino, uint32_t dtype, uint64_t next)
{
	tp_rd_t *r = arg;
	if (r->limit != 0 && r->batch >= r->limit)
		return (1);
	tp_dirent_t *e = tarn_array_push(&r->all);
	snprintf(e->name, sizeof (e->name), "%s", name);
	e->ino = ino;
	e->type = dtype;
	r->ents = tarn_array_base(&r->all);
	r->n = tarn_array_len(&r->all);
	r->batch++;
	r->cookie = next;
	return (0);
}

/* One call of readdir from r->cookie; false at the end of the directory. */
static bool
tp_rd_step(tfs_t *t, posix_ino_t dir, tp_rd_t *r)
{
	r->batch = 0;
	TT_OK(posix_readdir(t->fs, dir, r->cookie, tp_rd_fn, r));
	return (r->limit != 0 && r->batch >= r->limit);
}

/* An empty listing that refuses after `limit` entries a call (0: none). */
static void
tp_rd_init(tp_rd_t *r, size_t limit)
{
	memset(r, 0, sizeof (*r));
	tarn_array_init(&r->all, sizeof (tp_dirent_t));
	VERIFY0(tarn_array_reserve(&r->all, 256));
	r->limit = limit;
}

static void
tp_rd_all(tfs_t *t, posix_ino_t dir, tp_rd_t *r, size_t limit)
{
	tp_rd_init(r, limit);
	while (tp_rd_step(t, dir, r))
		;
}

static void
tp_rd_free(tp_rd_t *r)
{
	tarn_array_fini(&r->all);
	memset(r, 0, sizeof (*r));
}

#endif
