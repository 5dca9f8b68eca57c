/*
 * test_zil.c — the intent log through the POSIX layer on real pools:
 * fsync'd writes survive a power cut (unflushed writes dropped or torn)
 * although no txg after them committed; a crash whose log was claimed by
 * one import is replayed by a later one; unlogged changes make fsync sync
 * a txg; log blocks do not leak; a damaged log block ends the replay
 * cleanly; scrub and resilver read a claimed chain that awaits replay.
 */
#include "posix.h"
#include "tt.h"
#include "tt_pool.h"
#include "vdev.h"
#include "tarn_array.h"

#define ZT_FILE_SIZE (1 * MiB)
#define ZT_BS        4096

static const posix_cred_t zt_cred = { .pc_uid = 0, .pc_gid = 0, .pc_umask = 022 };

typedef struct zt {
	tt_pool_devs_t devs;
	vdev_fault_t *vf[TT_POOL_MAXDEV];
	spa_t *spa;
	objset_t *os;
	zil_t *zil;
	posix_fs_t *fs;
	posix_ino_t ino;
	uint8_t *model;               /* the file as of the last fsync */
	uint64_t model_size;
} zt_t;

/* No txg syncs unless asked: the log alone must carry fsync'd data. */
static const dmu_pool_opts_t zt_slow = { .dpo_txg_timeout_ms = 600000 };

static void
zt_faults(zt_t *z, bool on)
{
	for (int i = 0; i < z->devs.tpd_n; i++) {
		if (on) {
			vdev_fault_cfg_t cfg = { .vfc_hold_unflushed = true, .vfc_seed = 7 + i };
			z->vf[i] = vdev_fault_attach(z->devs.tpd_paths[i], &cfg);
		} else if (z->vf[i] != NULL) {
			vdev_fault_detach(z->vf[i]);
			z->vf[i] = NULL;
		}
	}
}

static void
zt_mount(zt_t *z, bool with_zil)
{
	TT_OK(spa_objset_open(z->spa, "fs", &z->os));
	z->zil = with_zil ? spa_objset_zil(z->spa, z->os) : NULL;
	posix_fs_opts_t o;
	posix_fs_opts_default(&o);
	o.pfo_zil = z->zil;
	TT_OK(posix_fs_open(z->os, &o, &z->fs));
	posix_attr_t a;
	TT_OK(posix_lookup(z->fs, posix_fs_root(z->fs), "f", &a));
	z->ino = a.pa_ino;
}

/* A pool (type NULL: one file) with a file system holding file "f". */
static void
zt_setup(zt_t *z, const char *type, int n)
{
	memset(z, 0, sizeof (*z));
	tt_pool_files(&z->devs, n, 256 * MiB);
	zt_faults(z, true);
	z->spa = tt_pool_create(&z->devs, "ziltest", type, &zt_slow);
	TT_CHECK(spa_features(z->spa) & SPA_FEATURE_INTENT_LOG);
	TT_OK(spa_objset_create(z->spa, "fs", DMU_OST_ZFS, &z->os));
	TT_OK(posix_fs_create(z->os, 0, 0));
	TT_OK(txg_wait_synced(spa_dmu_pool(z->spa), 0));
	posix_fs_opts_t o;
	posix_fs_opts_default(&o);
	TT_OK(posix_fs_open(z->os, &o, &z->fs));
	posix_attr_t a;
	TT_OK(posix_create(z->fs, posix_fs_root(z->fs), "f", S_IFREG | 0644, 0, &zt_cred,
	    true, &a));
	posix_fs_close(z->fs);
	TT_OK(txg_wait_synced(spa_dmu_pool(z->spa), 0));
	z->model = tarn_alloc(ZT_FILE_SIZE);
	zt_mount(z, true);
}

static void
zt_write(zt_t *z, uint64_t off, uint64_t len, uint64_t seed, bool fsync)
{
	uint8_t *buf = tarn_alloc(len);
	tt_fill(buf, len, seed);
	uint64_t done = 0;
	TT_OK(posix_write(z->fs, z->ino, off, len, buf, &zt_cred, &done));
	TT_EQ(done, len);
	if (fsync) {
		TT_OK(posix_fsync(z->fs, z->ino, false));
		memcpy(z->model + off, buf, len);
		z->model_size = MAX(z->model_size, off + len);
	}
	tarn_free(buf);
}

/* The file reads back as the model (size and bytes). */
static void
zt_check(zt_t *z)
{
	posix_attr_t a;
	TT_OK(posix_getattr(z->fs, z->ino, &a));
	TT_EQ(a.pa_size, z->model_size);
	uint8_t *buf = tarn_alloc(ZT_FILE_SIZE);
	uint64_t got = 0;
	TT_OK(posix_read(z->fs, z->ino, 0, ZT_FILE_SIZE, buf, &got));
	TT_EQ(got, z->model_size);
	TT_CHECK(memcmp(buf, z->model, z->model_size) == 0);
	tarn_free(buf);
}

/* Power cut: held writes dropped/torn, the pool abandoned, devices clean again. */
static void
zt_powercut(zt_t *z, uint64_t seed)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, seed);
	for (int i = 0; i < z->devs.tpd_n; i++)
		vdev_fault_powercut(z->vf[i], &r);
	posix_fs_close(z->fs);
	z->fs = NULL;
	spa_abandon(z->spa);
	z->spa = NULL;
	zt_faults(z, false);
}

static void
zt_teardown(zt_t *z)
{
	if (z->fs != NULL)
		posix_fs_close(z->fs);
	if (z->spa != NULL)
		TT_OK(spa_export(z->spa));
	zt_faults(z, false);
	tt_pool_files_remove(&z->devs);
	tarn_free(z->model);
}

/* Writes with fsync, then more without; power cut; the fsync'd state comes back. */
static void
zt_powercut_case(const char *type, int n, uint64_t seed)
{
	zt_t z;
	zt_setup(&z, type, n);
	uint64_t loaded = spa_last_synced_txg(z.spa);
	tarn_rand_t r;
	tarn_rand_seed(&r, seed);
	for (int i = 0; i < 64; i++) {
		uint64_t off = tarn_rand_range(&r, ZT_FILE_SIZE / ZT_BS - 4) * ZT_BS +
		    tarn_rand_range(&r, 512);
		uint64_t len = 1 + tarn_rand_range(&r, i % 8 == 7 ? 3 * ZT_BS : ZT_BS);
		zt_write(&z, off, len, seed * 1000 + i, true);
	}
	zil_stats_t st;
	zil_get_stats(z.zil, &st);
	TT_EQ(st.zs_commits, 64);
	TT_CHECK(st.zs_log_writes >= 63);      /* the first may need a sync */
	TT_CHECK(st.zs_blocks >= 63);
	/* the file's own syncs: only the one that created the chain */
	uint64_t last = spa_last_synced_txg(z.spa);
	TT_CHECK(last <= loaded + 2);
	for (int i = 0; i < 8; i++)                 /* not fsync'd: may be lost */
		zt_write(&z, (uint64_t)i * 5000, 3000, 77 + i, false);
	zt_powercut(&z, seed);

	z.spa = tt_pool_reopen(&z.devs, 0, &zt_slow);
	TT_CHECK(spa_loaded_txg(z.spa) <= last);
	zt_mount(&z, true);
	zt_check(&z);
	TT_CHECK(!zil_replay_needed(z.zil));
	/* a clean reopen replays nothing and keeps the content */
	posix_fs_close(z.fs);
	z.fs = NULL;
	TT_OK(spa_export(z.spa));
	z.spa = tt_pool_reopen(&z.devs, 0, &zt_slow);
	zt_mount(&z, true);
	TT_CHECK(!zil_replay_needed(z.zil));
	zt_check(&z);
	zt_teardown(&z);
}

static void
test_zil_powercut_single(void)
{
	zt_powercut_case(NULL, 1, 11);
}

static void
test_zil_powercut_mirror(void)
{
	zt_powercut_case("mirror", 2, 12);
}

static void
test_zil_powercut_raidz1(void)
{
	zt_powercut_case("raidz1", 4, 13);
}

/*
 * One side of a mirror fails every I/O (its flush too): the log writes
 * and flushes through the other side (the commit's own flush of each
 * leaf fails and falls back to the pool's flush, which judges the
 * mirror by its redundancy), and what was fsync'd survives a power cut.
 */
static void
test_zil_flush_side_dead(void)
{
	zt_t z;
	zt_setup(&z, "mirror", 2);
	zt_write(&z, 0, 3 * ZT_BS, 60, true);
	vdev_fault_set_dead(z.vf[1], true);
	zil_stats_t st0, st;
	zil_get_stats(z.zil, &st0);
	for (int i = 0; i < 16; i++)
		zt_write(&z, (uint64_t)(i + 4) * ZT_BS + 100, 2000, 61 + i, true);
	zil_get_stats(z.zil, &st);
	TT_EQ(st.zs_commits - st0.zs_commits, 16);
	TT_EQ(st.zs_log_writes - st0.zs_log_writes, 16);
	vdev_fault_set_dead(z.vf[1], false);
	zt_powercut(&z, 71);
	z.spa = tt_pool_reopen(&z.devs, 0, &zt_slow);
	zt_mount(&z, true);
	zt_check(&z);
	zt_teardown(&z);
}

/*
 * An import claims the log but nothing mounts; the pool is exported
 * and imported again; the mount then replays what the first claimed.
 */
static void
test_zil_claimed_then_reimported(void)
{
	zt_t z;
	zt_setup(&z, "mirror", 2);
	for (int i = 0; i < 20; i++)
		zt_write(&z, (uint64_t)i * 7777, 5000, 500 + i, true);
	zt_powercut(&z, 5);
	z.spa = tt_pool_reopen(&z.devs, 0, &zt_slow);
	TT_OK(spa_objset_open(z.spa, "fs", &z.os));
	TT_CHECK(zil_replay_needed(spa_objset_zil(z.spa, z.os)));
	TT_OK(spa_export(z.spa));
	z.spa = tt_pool_reopen(&z.devs, 0, &zt_slow);
	TT_OK(spa_objset_open(z.spa, "fs", &z.os));
	TT_CHECK(zil_replay_needed(spa_objset_zil(z.spa, z.os)));
	zt_mount(&z, true);
	zt_check(&z);
	zt_teardown(&z);
}

/* ---- namespace records ---- */

/* A dump of the namespace: the lines, in an array of char (no NUL until zt_dump ends it). */
static void
zt_dump_add(tarn_array_t *d, const char *line)
{
	(void) tarn_array_append(d, line, strlen(line));
}

typedef struct zt_names {
	char name[64][256];
	int n;
} zt_names_t;

static int
zt_collect_name(void *arg, const char *name, posix_ino_t ino, uint32_t dtype, uint64_t next)
{
	zt_names_t *nm = arg;
	if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0 && nm->n < 64)
		snprintf(nm->name[nm->n++], sizeof (nm->name[0]), "%s", name);
	return (0);
}

static int
zt_cmp(const void *a, const void *b)
{
	return (strcmp(a, b));
}

/* An inode's xattrs as " name=len:hash" (listed in name order). */
static void
zt_xattrs(posix_fs_t *fs, posix_ino_t ino, char *out, size_t cap)
{
	char list[1024];
	size_t n;
	if (posix_listxattr(fs, ino, list, sizeof (list), &n) != 0)
		return;
	zt_names_t *nm = tarn_alloc(sizeof (*nm));
	for (size_t i = 0; i < n && nm->n < 64; i += strlen(list + i) + 1)
		snprintf(nm->name[nm->n++], sizeof (nm->name[0]), "%s", list + i);
	qsort(nm->name, (size_t)nm->n, sizeof (nm->name[0]), zt_cmp);
	uint8_t *v = tarn_alloc(64 * KiB);
	for (int i = 0; i < nm->n; i++) {
		size_t len = 0;
		TT_OK(posix_getxattr(fs, ino, nm->name[i], v, 64 * KiB, &len));
		zio_cksum_t ck;
		zio_checksum_compute(ZIO_CHECKSUM_XXH3_128, v, len, &ck);
		size_t used = strlen(out);
		snprintf(out + used, cap - used, " %s=%zu:%08" PRIx64, nm->name[i], len,
		    ck.zc_word[0] & 0xffffffff);
	}
	tarn_free(v);
	tarn_free(nm);
}

/* Every entry below dir: path, ino, type+mode, owner, size, links, mtime, ctime, content, xattrs. */
static void
zt_dump_tree(posix_fs_t *fs, posix_ino_t dir, const char *path, tarn_array_t *d)
{
	zt_names_t *nm = tarn_alloc(sizeof (*nm));
	TT_OK(posix_readdir(fs, dir, 0, zt_collect_name, nm));
	qsort(nm->name, (size_t)nm->n, sizeof (nm->name[0]), zt_cmp);
	for (int i = 0; i < nm->n; i++) {
		posix_attr_t a;
		TT_OK(posix_lookup(fs, dir, nm->name[i], &a));
		char sub[600], line[5000], extra[4200] = "";
		snprintf(sub, sizeof (sub), "%s/%s", path, nm->name[i]);
		if (S_ISREG(a.pa_mode)) {
			uint8_t *buf = tarn_alloc(a.pa_size + 1);
			uint64_t got = 0;
			TT_OK(posix_read(fs, a.pa_ino, 0, a.pa_size, buf, &got));
			zio_cksum_t ck;
			zio_checksum_compute(ZIO_CHECKSUM_XXH3_128, buf, got, &ck);
			snprintf(extra, sizeof (extra), "%016" PRIx64, ck.zc_word[0]);
			tarn_free(buf);
		} else if (S_ISLNK(a.pa_mode)) {
			TT_OK(posix_readlink(fs, a.pa_ino, extra, sizeof (extra)));
		}
		char xl[512] = "";
		zt_xattrs(fs, a.pa_ino, xl, sizeof (xl));
		snprintf(line, sizeof (line), "%s ino=%" PRIu64 " mode=%o uid=%u gid=%u size=%" PRIu64
		    " nlink=%u mtime=%ld.%09ld ctime=%ld.%09ld %s%s\n", sub, a.pa_ino, a.pa_mode,
		    a.pa_uid, a.pa_gid, a.pa_size, a.pa_nlink, (long)a.pa_mtime.tv_sec,
		    (long)a.pa_mtime.tv_nsec, (long)a.pa_ctime.tv_sec, (long)a.pa_ctime.tv_nsec,
		    extra, xl);
		zt_dump_add(d, line);
		posix_forget(fs, a.pa_ino, 1);
		if (S_ISDIR(a.pa_mode))
			zt_dump_tree(fs, a.pa_ino, sub, d);
	}
	tarn_free(nm);
}

static char *
zt_dump(zt_t *z)
{
	tarn_array_t d = TARN_ARRAY_INIT(char);
	zt_dump_tree(z->fs, posix_fs_root(z->fs), "", &d);
	TARN_ARRAY_APPEND(&d, char, '\0');
	size_t n;
	return (tarn_array_steal(&d, &n));
}

static posix_ino_t
zt_ino(zt_t *z, posix_ino_t dir, const char *name)
{
	posix_attr_t a;
	TT_OK(posix_lookup(z->fs, dir, name, &a));
	posix_forget(z->fs, a.pa_ino, 1);
	return (a.pa_ino);
}

static void
zt_put(zt_t *z, posix_ino_t ino, uint64_t len, uint64_t seed)
{
	uint8_t *buf = tarn_alloc(len);
	tt_fill(buf, len, seed);
	uint64_t done;
	TT_OK(posix_write(z->fs, ino, 0, len, buf, &zt_cred, &done));
	tarn_free(buf);
}

/* Every kind of namespace change, fsync'd through the log (no txg sync). */
static void
zt_namespace_ops(zt_t *z)
{
	posix_ino_t root = posix_fs_root(z->fs);
	posix_attr_t a;
	TT_OK(posix_mkdir(z->fs, root, "d", 0750, &zt_cred, &a));
	posix_ino_t d = a.pa_ino;
	TT_OK(posix_create(z->fs, d, "a", S_IFREG | 0640, 0, &zt_cred, true, &a));
	zt_put(z, a.pa_ino, 5000, 1);
	TT_OK(posix_symlink(z->fs, d, "s", "target/x", &zt_cred, &a));
	char longt[3000];
	memset(longt, 'L', sizeof (longt) - 1);
	longt[sizeof (longt) - 1] = '\0';
	TT_OK(posix_symlink(z->fs, d, "long", longt, &zt_cred, &a));
	TT_OK(posix_link(z->fs, zt_ino(z, d, "a"), d, "a2", &a));
	TT_OK(posix_create(z->fs, d, "b", S_IFREG | 0644, 0, &zt_cred, true, &a));
	zt_put(z, a.pa_ino, 300, 2);
	TT_OK(posix_rename(z->fs, d, "b", d, "c", 0));
	TT_OK(posix_create(z->fs, d, "e", S_IFREG | 0644, 0, &zt_cred, true, &a));
	TT_OK(posix_unlink(z->fs, d, "e"));
	TT_OK(posix_mkdir(z->fs, d, "sub", 0755, &zt_cred, &a));
	TT_OK(posix_mkdir(z->fs, d, "sub2", 0755, &zt_cred, &a));
	TT_OK(posix_rmdir(z->fs, d, "sub"));
	TT_OK(posix_create(z->fs, a.pa_ino, "deep", S_IFIFO | 0600, 0, &zt_cred, true, &a));
	posix_attr_t at;
	memset(&at, 0, sizeof (at));
	at.pa_mode = 0600;
	TT_OK(posix_setattr(z->fs, zt_ino(z, d, "a"), &at, POSIX_SET_MODE, NULL, NULL));
	at.pa_uid = 1000;
	at.pa_gid = 1001;
	TT_OK(posix_setattr(z->fs, zt_ino(z, d, "c"), &at, POSIX_SET_UID | POSIX_SET_GID,
	    NULL, NULL));
	at.pa_size = 1000;
	TT_OK(posix_setattr(z->fs, z->ino, &at, POSIX_SET_SIZE, NULL, NULL));
	z->model_size = MIN(z->model_size, 1000);
	TT_OK(posix_rename(z->fs, d, "a2", d, "c", POSIX_RENAME_EXCHANGE));
	TT_OK(posix_rename(z->fs, d, "s", root, "s-moved", 0));
	TT_OK(posix_create(z->fs, d, "b", S_IFREG | 0644, 0, &zt_cred, true, &a));
	zt_put(z, a.pa_ino, 777, 3);
	TT_OK(posix_rename(z->fs, d, "b", d, "c", 0));       /* over an existing name */
	/* fallocate that extends a file, then writes into the new part */
	TT_OK(posix_create(z->fs, d, "pre", S_IFREG | 0644, 0, &zt_cred, true, &a));
	TT_OK(posix_falloc(z->fs, a.pa_ino, 0, 0, 300000));
	uint8_t pb[5000];
	uint64_t pdone;
	tt_fill(pb, sizeof (pb), 4);
	TT_OK(posix_write(z->fs, a.pa_ino, 100000, sizeof (pb), pb, &zt_cred, &pdone));
	TT_OK(posix_falloc(z->fs, zt_ino(z, d, "c"), FALLOC_FL_KEEP_SIZE, 0, 90000));
	/* xattrs (small, stored apart, an ACL that sets the mode, removed) and a punched hole */
	posix_ino_t c = zt_ino(z, d, "c");
	uint8_t big[6000];
	tt_fill(big, sizeof (big), 5);
	TT_OK(posix_setxattr(z->fs, c, "user.small", "v1", 2, 0));
	TT_OK(posix_setxattr(z->fs, c, "user.big", big, sizeof (big), 0));
	TT_OK(posix_setxattr(z->fs, c, "user.gone", "x", 1, 0));
	TT_OK(posix_removexattr(z->fs, c, "user.gone"));
	static const uint8_t acl[] = { 2, 0, 0, 0, 1, 0, 6, 0, 0xff, 0xff, 0xff, 0xff,
		2, 0, 4, 0, 0xe8, 3, 0, 0, 4, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,
		0x10, 0, 5, 0, 0xff, 0xff, 0xff, 0xff, 0x20, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	TT_OK(posix_setxattr(z->fs, c, "system.posix_acl_access", acl, sizeof (acl), 0));
	/* the same ACL set by a caller outside the group: set-group-ID goes (and stays gone) */
	TT_OK(posix_create(z->fs, d, "sg", S_IFREG | 0644, 0, &zt_cred, true, &a));
	at.pa_mode = 02775;
	TT_OK(posix_setattr(z->fs, a.pa_ino, &at, POSIX_SET_MODE, NULL, NULL));
	TT_OK(posix_setxattr(z->fs, a.pa_ino, "system.posix_acl_access", acl, sizeof (acl),
	    POSIX_XATTR_KILL_SGID));
	TT_OK(posix_getattr(z->fs, a.pa_ino, &a));
	TT_EQ(a.pa_mode & 07777, 0650);
	TT_OK(posix_setxattr(z->fs, d, "user.dir", "d", 1, 0));
	TT_OK(posix_falloc(z->fs, zt_ino(z, d, "pre"), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
	    101000, 2000));
	/* zeroed ranges: one inside (a punch), one past the end (a punch and a size) */
	TT_OK(posix_falloc(z->fs, zt_ino(z, d, "pre"), FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
	    104000, 500));
	TT_OK(posix_falloc(z->fs, zt_ino(z, d, "pre"), FALLOC_FL_ZERO_RANGE, 290000, 30000));
	TT_OK(posix_getattr(z->fs, zt_ino(z, d, "pre"), &a));
	TT_EQ(a.pa_size, 320000);
	TT_OK(posix_fsync(z->fs, z->ino, false));
}

static void
test_zil_namespace(void)
{
	zt_t z;
	zt_setup(&z, "mirror", 2);
	zt_write(&z, 0, 4000, 7, true);                  /* the chain exists now */
	zil_stats_t s0, s1;
	zil_get_stats(z.zil, &s0);
	uint64_t last = spa_last_synced_txg(z.spa);
	zt_namespace_ops(&z);
	zil_get_stats(z.zil, &s1);
	TT_EQ(s1.zs_txg_syncs, s0.zs_txg_syncs);        /* all through the log */
	TT_CHECK(spa_last_synced_txg(z.spa) == last);
	char *want = zt_dump(&z);
	zt_powercut(&z, 31);
	z.spa = tt_pool_reopen(&z.devs, 0, &zt_slow);
	zt_mount(&z, true);
	TT_CHECK(posix_fs_replayed(z.fs) > 20);
	char *got = zt_dump(&z);
	if (strcmp(want, got) != 0)
		fprintf(stderr, "  before the cut:\n%s  after replay:\n%s", want, got);
	TT_CHECK(strcmp(want, got) == 0);
	tarn_free(got);
	/* and it stays so across a clean export and import */
	posix_fs_close(z.fs);
	z.fs = NULL;
	TT_OK(spa_export(z.spa));
	z.spa = tt_pool_reopen(&z.devs, 0, &zt_slow);
	zt_mount(&z, true);
	got = zt_dump(&z);
	TT_CHECK(strcmp(want, got) == 0);
	tarn_free(got);
	tarn_free(want);
	zt_teardown(&z);
}

/* A change the log does not record (an xattr, without log_xattr_punch) makes the next fsync sync a txg. */
static void
test_zil_unlogged_syncs(void)
{
	zt_t z;
	zt_setup(&z, NULL, 1);
	zil_set_xattr_punch(z.zil, false);          /* a pool without log_xattr_punch */
	zt_write(&z, 0, 100, 1, true);
	zil_stats_t a, b;
	zil_get_stats(z.zil, &a);
	TT_OK(posix_setxattr(z.fs, z.ino, "user.k", "v", 1, 0));
	TT_OK(posix_fsync(z.fs, z.ino, false));
	zil_get_stats(z.zil, &b);
	TT_EQ(b.zs_txg_syncs, a.zs_txg_syncs + 1);
	zt_write(&z, 100, 100, 2, true);            /* back to the log */
	zil_get_stats(z.zil, &a);
	TT_EQ(a.zs_txg_syncs, b.zs_txg_syncs);
	TT_EQ(a.zs_log_writes, b.zs_log_writes + 1);
	zt_write(&z, 300, 5000, 3, true);
	/* times only (what the kernel sends before an fsync): logged */
	posix_attr_t tm;
	memset(&tm, 0, sizeof (tm));
	tm.pa_mtime.tv_sec = 1234567890;
	tm.pa_mtime.tv_nsec = 4321;
	tm.pa_ctime.tv_sec = 1234567891;
	TT_OK(posix_setattr(z.fs, z.ino, &tm, POSIX_SET_MTIME | POSIX_SET_CTIME, NULL, NULL));
	TT_OK(posix_fsync(z.fs, z.ino, false));
	zil_get_stats(z.zil, &b);
	TT_EQ(b.zs_txg_syncs, a.zs_txg_syncs);
	zt_powercut(&z, 9);
	z.spa = tt_pool_reopen(&z.devs, 0, &zt_slow);
	zt_mount(&z, true);
	zt_check(&z);
	TT_OK(posix_getattr(z.fs, z.ino, &tm));
	TT_EQ(tm.pa_mtime.tv_sec, 1234567890);
	TT_EQ(tm.pa_mtime.tv_nsec, 4321);
	TT_EQ(tm.pa_ctime.tv_sec, 1234567891);
	char v[8];
	size_t vl = 0;
	TT_OK(posix_getxattr(z.fs, z.ino, "user.k", v, sizeof (v), &vl));
	TT_EQ(vl, 1);
	zt_teardown(&z);
}

/*
 * A replay cut short (the process dies after a few records, after a txg
 * committed them) goes on from there at the next mount: records that
 * are not idempotent (rename a->b, then create a) are not applied twice.
 */
static void
test_zil_replay_cut_short(void)
{
	zt_t z;
	zt_setup(&z, NULL, 1);
	zt_write(&z, 0, 4000, 7, true);
	posix_ino_t root = posix_fs_root(z.fs);
	posix_attr_t a;
	TT_OK(posix_create(z.fs, root, "x", S_IFREG | 0644, 0, &zt_cred, true, &a));
	zt_put(&z, a.pa_ino, 100, 1);
	TT_OK(posix_rename(z.fs, root, "x", root, "y", 0));
	TT_OK(posix_create(z.fs, root, "x", S_IFREG | 0644, 0, &zt_cred, true, &a));
	zt_put(&z, a.pa_ino, 200, 2);
	TT_OK(posix_unlink(z.fs, root, "y"));
	TT_OK(posix_create(z.fs, root, "z", S_IFREG | 0600, 0, &zt_cred, true, &a));
	zil_stats_t st;
	zil_get_stats(z.zil, &st);
	TT_OK(posix_fsync(z.fs, z.ino, false));
	zil_stats_t st2;
	zil_get_stats(z.zil, &st2);
	TT_EQ(st2.zs_txg_syncs, st.zs_txg_syncs);
	char *want = zt_dump(&z);
	zt_powercut(&z, 41);
	for (int round = 0; round < 2; round++) {
		/*
		 * First through "unlink y" (10 records with the directory's
		 * times), then one more: applied again from the start, "rename
		 * x y" would now move the second x and "unlink y" remove it.
		 */
		uint64_t limit = round == 0 ? 10 : 1;
		z.spa = tt_pool_reopen(&z.devs, 0, &zt_slow);
		TT_OK(spa_objset_open(z.spa, "fs", &z.os));
		posix_fs_opts_t o;
		posix_fs_opts_default(&o);
		o.pfo_zil = spa_objset_zil(z.spa, z.os);
		posix_zil_set_replay_limit(limit);
		posix_fs_t *fs = NULL;
		int e = posix_fs_open(z.os, &o, &fs);
		posix_zil_set_replay_limit(0);
		TT_EQ(e, EINTR);
		/* what was replayed commits, then the process dies */
		TT_OK(txg_wait_synced(spa_dmu_pool(z.spa), 0));
		TT_OK(txg_wait_synced(spa_dmu_pool(z.spa), 0));
		spa_abandon(z.spa);
		z.spa = NULL;
	}
	z.spa = tt_pool_reopen(&z.devs, 0, &zt_slow);
	zt_mount(&z, true);
	char *got = zt_dump(&z);
	if (strcmp(want, got) != 0)
		fprintf(stderr, "  before the cut:\n%s  after replay:\n%s", want, got);
	TT_CHECK(strcmp(want, got) == 0);
	tarn_free(got);
	tarn_free(want);
	zt_teardown(&z);
}

/*
 * Power cuts while txgs sync every few milliseconds under a stream of
 * fsync'd writes: log blocks are freed and reused all the time, and at
 * the cut the committed header may be one txg old.  Every acknowledged
 * write must come back (a block freed in the txg it was born in, and
 * reused at once, broke the chain that the old header named).
 */
static void
test_zil_powercut_syncing(void)
{
	dmu_pool_opts_t fast = { .dpo_txg_timeout_ms = 3 };
	for (int cycle = 0; cycle < 6; cycle++) {
		zt_t z;
		zt_setup(&z, cycle % 2 ? "mirror" : NULL, cycle % 2 ? 2 : 1);
		posix_fs_close(z.fs);
		z.fs = NULL;
		TT_OK(spa_export(z.spa));
		z.spa = tt_pool_reopen(&z.devs, 0, &fast);
		zt_mount(&z, true);
		tarn_rand_t r;
		tarn_rand_seed(&r, 100 + cycle);
		int n = 200 + (int)tarn_rand_range(&r, 400);
		for (int i = 0; i < n; i++) {
			uint64_t off = tarn_rand_range(&r, ZT_FILE_SIZE / ZT_BS - 1) * ZT_BS;
			zt_write(&z, off, 1 + tarn_rand_range(&r, ZT_BS), 1000 * cycle + i, true);
		}
		zt_powercut(&z, 500 + cycle);
		z.spa = tt_pool_reopen(&z.devs, 0, &zt_slow);
		zt_mount(&z, true);
		zt_check(&z);
		zt_teardown(&z);
	}
}

/* Thousands of fsyncs with txgs syncing meanwhile: log blocks are freed. */
static void
test_zil_no_leak(void)
{
	zt_t z;
	memset(&z, 0, sizeof (z));
	zt_setup(&z, NULL, 1);
	posix_fs_close(z.fs);
	z.fs = NULL;
	TT_OK(spa_export(z.spa));
	zt_faults(&z, false);
	dmu_pool_opts_t fast = { .dpo_txg_timeout_ms = 50 };
	z.spa = tt_pool_reopen(&z.devs, 0, &fast);
	zt_mount(&z, true);
	zt_write(&z, 0, 16 * ZT_BS, 1, true);
	TT_OK(txg_wait_synced(spa_dmu_pool(z.spa), 0));
	spa_space_t s0, s1;
	spa_get_space(z.spa, &s0);
	for (int i = 0; i < 3000; i++)
		zt_write(&z, (uint64_t)(i % 16) * ZT_BS, ZT_BS, 100 + i, true);
	for (int i = 0; i < 6; i++)
		TT_OK(txg_wait_synced(spa_dmu_pool(z.spa), 0));
	spa_get_space(z.spa, &s1);
	zil_stats_t st;
	zil_get_stats(z.zil, &st);
	TT_CHECK(st.zs_blocks > 1000);          /* most fsyncs went to the log */
	/* freed log blocks: far less than 3000 blocks of 8 KiB stay allocated */
	TT_CHECK(s1.ss_alloc < s0.ss_alloc + 4 * MiB);
	zt_check(&z);
	zt_teardown(&z);
}

/*
 * Damage the second log block of a crashed pool: the replay stops before
 * it (the first block's records are back, nothing after), no crash, and
 * the pool works on.
 */
typedef struct zt_bps {
	blkptr_t bp[8];
	int n;
} zt_bps_t;

static int
zt_collect(void *arg, const blkptr_t *bp, const zil_block_t *blk)
{
	zt_bps_t *b = arg;
	if (b->n < 8)
		b->bp[b->n++] = *bp;
	return (0);
}

static void
test_zil_damaged_block(void)
{
	zt_t z;
	zt_setup(&z, NULL, 1);
	zt_write(&z, 0, 1000, 1, true);             /* may sync: creates the chain */
	zt_write(&z, 2000, 1000, 2, true);          /* block 2 */
	uint8_t *keep = tarn_alloc(ZT_FILE_SIZE);
	memcpy(keep, z.model, ZT_FILE_SIZE);
	uint64_t keep_size = z.model_size;
	zt_write(&z, 4000, 1000, 3, true);          /* block 3 */
	zt_write(&z, 6000, 1000, 4, true);
	zt_powercut(&z, 3);
	z.spa = tt_pool_reopen(&z.devs, 0, &zt_slow);
	TT_OK(spa_objset_open(z.spa, "fs", &z.os));
	zil_t *zl = spa_objset_zil(z.spa, z.os);
	zt_bps_t b = { .n = 0 };
	uint64_t nblocks = 0;
	TT_OK(zil_walk(zl, 8, zt_collect, &b, &nblocks));
	TT_CHECK(nblocks >= 3);
	TT_OK(spa_export(z.spa));
	/* find the block holding write 3 and zero it on the device */
	int victim = b.n - 2;                       /* write 3's block */
	TT_ASSERT(victim >= 1);
	int fd = open(z.devs.tpd_paths[0], O_RDWR);
	TT_ASSERT(fd >= 0);
	uint8_t *zero = tarn_alloc(b.bp[victim].bp_psize);
	memset(zero, 0x5a, b.bp[victim].bp_psize);
	TT_EQ(pwrite(fd, zero, b.bp[victim].bp_psize,
	    (off_t)(b.bp[victim].bp_dva[0].dva_offset + VDEV_LABEL_START_SIZE)),
	    b.bp[victim].bp_psize);
	close(fd);
	tarn_free(zero);
	z.spa = tt_pool_reopen(&z.devs, 0, &zt_slow);
	zt_mount(&z, true);
	/* everything before the damaged block came back, nothing after */
	memcpy(z.model, keep, ZT_FILE_SIZE);
	z.model_size = keep_size;
	zt_check(&z);
	zt_write(&z, 8000, 1000, 5, true);
	zt_check(&z);
	tarn_free(keep);
	zt_teardown(&z);
}

/* ---- scrub and resilver of a claimed chain ---- */

/* Overwrite the bytes of log block bp on one leaf of a mirror (or single). */
static void
zt_damage_leaf(const char *path, const blkptr_t *bp, uint8_t fill)
{
	int fd = open(path, O_RDWR);
	TT_ASSERT(fd >= 0);
	uint8_t *junk = tarn_alloc(bp->bp_psize);
	memset(junk, fill, bp->bp_psize);
	TT_EQ(pwrite(fd, junk, bp->bp_psize,
	    (off_t)(bp->bp_dva[0].dva_offset + VDEV_LABEL_START_SIZE)), bp->bp_psize);
	close(fd);
	tarn_free(junk);
}

/* Do two leaves of a mirror hold the same bytes for block bp? */
static bool
zt_leaves_agree(const char *a, const char *b, const blkptr_t *bp)
{
	uint8_t *x = tarn_alloc(bp->bp_psize), *y = tarn_alloc(bp->bp_psize);
	off_t off = (off_t)(bp->bp_dva[0].dva_offset + VDEV_LABEL_START_SIZE);
	int fa = open(a, O_RDONLY), fb = open(b, O_RDONLY);
	bool same = fa >= 0 && fb >= 0 &&
	    pread(fa, x, bp->bp_psize, off) == (ssize_t)bp->bp_psize &&
	    pread(fb, y, bp->bp_psize, off) == (ssize_t)bp->bp_psize &&
	    memcmp(x, y, bp->bp_psize) == 0;
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	tarn_free(x);
	tarn_free(y);
	return (same);
}

/*
 * Power cut, then an import that claims the log and no mount (zpool
 * import -N): *b gets the claimed blocks, oldest first.
 */
static void
zt_claimed(zt_t *z, uint64_t seed, zt_bps_t *b)
{
	zt_powercut(z, seed);
	z->spa = tt_pool_reopen(&z->devs, 0, &zt_slow);
	TT_OK(spa_objset_open(z->spa, "fs", &z->os));
	zil_t *zl = spa_objset_zil(z->spa, z->os);
	TT_CHECK(zil_replay_needed(zl));
	b->n = 0;
	uint64_t nblocks = 0;
	TT_OK(zil_walk(zl, 8, zt_collect, b, &nblocks));
}

static void
zt_scrub(zt_t *z, spa_scan_stat_t *st)
{
	TT_OK(spa_scan_start(z->spa, SPA_SCAN_SCRUB, 0));
	TT_OK(spa_scan_wait(z->spa));
	spa_scan_get_stat(z->spa, st);
	TT_EQ(st->sss_state, SPA_SCAN_STATE_FINISHED);
}

/*
 * A crash, then an import that claims the log but no mount to replay it
 * (zpool import -N).  No block tree points to the claimed blocks, so the
 * scrub walks the chain itself: one side of a mirror damaged under two
 * blocks is repaired (both sides agree again), both sides damaged under
 * the last block is an error.  The mount then replays up to that block.
 */
static void
test_zil_claimed_scrub(void)
{
	zt_t z;
	zt_setup(&z, "mirror", 2);
	zt_write(&z, 0, 1000, 1, true);             /* may sync: creates the chain */
	for (int i = 0; i < 4; i++)                 /* a block each */
		zt_write(&z, 2000 + (uint64_t)i * 3000, 1500, 2 + i, true);
	uint8_t *keep = tarn_alloc(ZT_FILE_SIZE);
	memcpy(keep, z.model, ZT_FILE_SIZE);
	uint64_t keep_size = z.model_size;
	zt_write(&z, 20000, 1500, 9, true);         /* the last block */
	zt_bps_t b;
	zt_claimed(&z, 17, &b);
	TT_ASSERT(b.n >= 5 && b.n < 8);
	const char *d0 = z.devs.tpd_paths[0], *d1 = z.devs.tpd_paths[1];
	for (int k = 0; k < b.n; k++)
		TT_ASSERT(zt_leaves_agree(d0, d1, &b.bp[k]));

	/* one side of the first two blocks: repaired, no error */
	zt_damage_leaf(d0, &b.bp[0], 0x5a);
	zt_damage_leaf(d1, &b.bp[1], 0xa5);
	TT_CHECK(!zt_leaves_agree(d0, d1, &b.bp[0]));
	spa_scan_stat_t st;
	zt_scrub(&z, &st);
	TT_EQ(st.sss_errors, 0);
	TT_CHECK(st.sss_repaired >= b.bp[0].bp_psize + b.bp[1].bp_psize);
	for (int k = 0; k < b.n; k++)
		TT_CHECK(zt_leaves_agree(d0, d1, &b.bp[k]));
	zt_scrub(&z, &st);                          /* nothing left to do */
	TT_EQ(st.sss_errors, 0);
	TT_EQ(st.sss_repaired, 0);

	/* both sides of the last block: an error the scrub counts */
	zt_damage_leaf(d0, &b.bp[b.n - 1], 0x11);
	zt_damage_leaf(d1, &b.bp[b.n - 1], 0x22);
	zt_scrub(&z, &st);
	TT_EQ(st.sss_errors, 1);

	/* the mount replays everything before the lost block */
	zt_mount(&z, true);
	memcpy(z.model, keep, ZT_FILE_SIZE);
	z.model_size = keep_size;
	zt_check(&z);
	TT_CHECK(!zil_replay_needed(z.zil));
	zt_scrub(&z, &st);                          /* replayed, freed: clean */
	TT_EQ(st.sss_errors, 0);
	tarn_free(keep);
	zt_teardown(&z);
}

/*
 * A claimed chain is copied onto a device that replaces a mirror side:
 * after the resilver the old side goes, the remaining one loses its
 * copies of the log blocks, and the mount still replays every fsync'd
 * write from the new device.
 */
static void
test_zil_claimed_resilver(void)
{
	zt_t z;
	zt_setup(&z, "mirror", 2);
	zt_write(&z, 0, 1000, 1, true);
	for (int i = 0; i < 5; i++)
		zt_write(&z, 3000 + (uint64_t)i * 4100, 2500, 40 + i, true);
	zt_bps_t b;
	zt_claimed(&z, 23, &b);
	TT_ASSERT(b.n >= 5);

	char fresh[sizeof (z.devs.tpd_paths[0])], gone[sizeof (z.devs.tpd_paths[0])];
	snprintf(fresh, sizeof (fresh), "%s/d9", tt_tmpdir());
	snprintf(gone, sizeof (gone), "%s", z.devs.tpd_paths[1]);
	int fd = open(fresh, O_CREAT | O_TRUNC | O_RDWR, 0644);
	TT_ASSERT(fd >= 0);
	TT_OK(ftruncate(fd, (off_t)(256 * MiB)));
	close(fd);
	char err[256];
	int e = spa_vdev_replace(z.spa, gone, fresh, false, err, sizeof (err));
	if (e != 0)
		fprintf(stderr, "  replace: %s\n", err);
	TT_OK(e);
	TT_OK(spa_vdev_wait(z.spa));
	TT_CHECK(spa_lookup_leaf(z.spa, gone) == NULL);
	snprintf(z.devs.tpd_paths[1], sizeof (z.devs.tpd_paths[1]), "%s", fresh);
	unlink(gone);
	for (int k = 0; k < b.n; k++) {
		TT_CHECK(zt_leaves_agree(z.devs.tpd_paths[0], fresh, &b.bp[k]));
		zt_damage_leaf(z.devs.tpd_paths[0], &b.bp[k], 0x77);
	}
	zt_mount(&z, true);
	zt_check(&z);
	spa_scan_stat_t st;
	zt_scrub(&z, &st);
	TT_EQ(st.sss_errors, 0);
	zt_teardown(&z);
}

/*
 * sync=always: a write is durable when it returns (no fsync); sync=
 * disabled: fsync returns at once and commits nothing (what was written
 * after the last txg is lost in a power cut, as documented).
 */
static void
zt_set_sync(zt_t *z, posix_sync_mode_t mode)
{
	posix_fs_opts_t o;
	posix_fs_opts_default(&o);
	o.pfo_sync = mode;
	posix_fs_set_opts(z->fs, &o);
}

static void
test_zil_sync_property(void)
{
	zt_t z;
	zt_setup(&z, "mirror", 2);
	zt_set_sync(&z, POSIX_SYNC_ALWAYS);
	for (int i = 0; i < 10; i++) {
		zt_write(&z, (uint64_t)i * 9000, 4000, 40 + i, false);
		/* no fsync: the write itself was committed */
		uint8_t *buf = tarn_alloc(4000);
		tt_fill(buf, 4000, 40 + i);
		memcpy(z.model + (uint64_t)i * 9000, buf, 4000);
		z.model_size = MAX(z.model_size, (uint64_t)i * 9000 + 4000);
		tarn_free(buf);
	}
	zil_stats_t st;
	zil_get_stats(z.zil, &st);
	TT_EQ(st.zs_commits, 10);
	zt_set_sync(&z, POSIX_SYNC_DISABLED);
	zt_write(&z, 200000, 4000, 99, false);
	TT_OK(posix_fsync(z.fs, z.ino, false));
	zil_stats_t st2;
	zil_get_stats(z.zil, &st2);
	TT_EQ(st2.zs_commits, st.zs_commits);   /* nothing was committed */
	zt_powercut(&z, 21);
	z.spa = tt_pool_reopen(&z.devs, 0, &zt_slow);
	zt_mount(&z, true);
	zt_check(&z);                               /* the sync=always writes, not the last */
	zt_teardown(&z);
}

TT_MAIN(
	{ "zil_powercut_single", test_zil_powercut_single },
	{ "zil_powercut_mirror", test_zil_powercut_mirror },
	{ "zil_powercut_raidz1", test_zil_powercut_raidz1 },
	{ "zil_flush_side_dead", test_zil_flush_side_dead },
	{ "zil_claimed_then_reimported", test_zil_claimed_then_reimported },
	{ "zil_namespace", test_zil_namespace },
	{ "zil_unlogged_syncs", test_zil_unlogged_syncs },
	{ "zil_replay_cut_short", test_zil_replay_cut_short },
	{ "zil_powercut_syncing", test_zil_powercut_syncing },
	{ "zil_no_leak", test_zil_no_leak },
	{ "zil_damaged_block", test_zil_damaged_block },
	{ "zil_claimed_scrub", test_zil_claimed_scrub },
	{ "zil_claimed_resilver", test_zil_claimed_resilver },
	{ "zil_sync_property", test_zil_sync_property },
)
