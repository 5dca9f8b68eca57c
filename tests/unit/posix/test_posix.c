/*
 * Unit tests of the POSIX layer on a real pool of sparse files: names,
 * attributes, file data (block growth, sparse files, truncate, punch,
 * SEEK_DATA/HOLE), hard links, symlinks, the rename matrix, xattrs, the
 * unlinked set (also after a simulated crash), O_TMPFILE, persistence,
 * quota, atime.
 * Large directories, the random-operation model, ENOSPC and threads are in
 * test_posix_stress.c.
 */
#include "posix_tt.h"

static tfs_t t;

/* ---- names and attributes ---- */

static void basic_attrs(posix_ino_t file);
static void basic_readonly(posix_ino_t file);

static void
test_basic(void)
{
	tp_pool(&t, 1, 256 * MiB);
	posix_fs_t *fs = t.fs;
	posix_attr_t a, b, r;
	TT_OK(posix_getattr(fs, t.root, &r));
	TT_CHECK(S_ISDIR(r.pa_mode));
	TT_EQ(r.pa_nlink, 2);
	TT_EQ(r.pa_ino, t.root);
	TT_OK(posix_create(fs, t.root, "hello", S_IFREG | 0666, 0, &tp_user_cred, true, &a));
	TT_EQ(a.pa_mode, S_IFREG | 0644);
	TT_EQ(a.pa_uid, 1000);
	TT_EQ(a.pa_gid, 1000);
	TT_EQ(a.pa_nlink, 1);
	TT_EQ(a.pa_size, 0);
	TT_CHECK(a.pa_mtime.tv_sec == a.pa_crtime.tv_sec && a.pa_mtime.tv_nsec == a.pa_crtime.tv_nsec);
	TT_CHECK(a.pa_mtime.tv_nsec < 1000000000L);
	TT_OK(posix_lookup(fs, t.root, "hello", &b));
	TT_EQ(b.pa_ino, a.pa_ino);
	TT_EQ(b.pa_gen, a.pa_gen);
	TT_EQ(posix_create(fs, t.root, "hello", S_IFREG | 0644, 0, &tp_root_cred, true, &b), EEXIST);
	TT_OK(posix_create(fs, t.root, "hello", S_IFREG | 0644, 0, &tp_root_cred, false, &b));
	TT_EQ(b.pa_ino, a.pa_ino);
	TT_EQ(posix_lookup(fs, t.root, "nope", &b), ENOENT);
	char longname[300];
	memset(longname, 'x', 256);
	longname[256] = '\0';
	TT_EQ(posix_lookup(fs, t.root, longname, &b), ENAMETOOLONG);
	TT_EQ(posix_create(fs, t.root, longname, S_IFREG | 0644, 0, NULL, true, &b), ENAMETOOLONG);
	longname[255] = '\0';
	TT_OK(posix_create(fs, t.root, longname, S_IFREG | 0644, 0, NULL, true, &b));
	TT_OK(posix_lookup(fs, t.root, ".", &b));
	TT_EQ(b.pa_ino, t.root);
	TT_OK(posix_lookup(fs, t.root, "..", &b));
	TT_EQ(b.pa_ino, t.root);
	TT_EQ(posix_create(fs, t.root, "a/b", S_IFREG, 0, NULL, true, &b), EINVAL);
	TT_EQ(posix_create(fs, t.root, "..", S_IFREG, 0, NULL, true, &b), EEXIST);
	TT_EQ(posix_create(fs, t.root, "dd", S_IFDIR | 0755, 0, NULL, true, &b), EINVAL);
	basic_attrs(a.pa_ino);
	basic_readonly(a.pa_ino);
	tp_done(&t);
}

/* Supplementary groups of test callers: 8, or 9. */
static bool
tp_in_group_8(const posix_cred_t *cred, uint32_t gid)
{
	(void) cred;
	return (gid == 8);
}

static bool
tp_in_group_9(const posix_cred_t *cred, uint32_t gid)
{
	(void) cred;
	return (gid == 9);
}

/* Directories, setattr, special files, setgid directories, readdir types. */
static void
basic_attrs(posix_ino_t file)
{
	posix_fs_t *fs = t.fs;
	posix_attr_t a, b, r, d;
	TT_OK(posix_getattr(fs, file, &a));
	TT_OK(posix_mkdir(fs, t.root, "d", 0755, &tp_root_cred, &d));
	TT_CHECK(S_ISDIR(d.pa_mode));
	TT_EQ(d.pa_nlink, 2);
	TT_OK(posix_getattr(fs, t.root, &r));
	TT_EQ(r.pa_nlink, 3);
	TT_OK(posix_lookup(fs, d.pa_ino, "..", &b));
	TT_EQ(b.pa_ino, t.root);
	TT_EQ(posix_mkdir(fs, t.root, "d", 0755, NULL, &b), EEXIST);
	TT_EQ(posix_create(fs, a.pa_ino, "x", S_IFREG, 0, NULL, true, &b), ENOTDIR);
	TT_EQ(posix_lookup(fs, a.pa_ino, "x", &b), ENOTDIR);

	/* setattr: chmod, chown (drops set-user-ID), times with nanoseconds */
	posix_attr_t in;
	memset(&in, 0, sizeof (in));
	in.pa_mode = 04755;
	TT_OK(posix_setattr(fs, a.pa_ino, &in, POSIX_SET_MODE, NULL, &b));
	TT_EQ(b.pa_mode, S_IFREG | 04755);
	in.pa_uid = 7;
	in.pa_gid = 8;
	TT_OK(posix_setattr(fs, a.pa_ino, &in, POSIX_SET_UID | POSIX_SET_GID, NULL, &b));
	TT_EQ(b.pa_mode, S_IFREG | 0755);
	TT_EQ(b.pa_uid, 7);
	TT_EQ(b.pa_gid, 8);
	in.pa_atime = (struct timespec){ 1234567890, 123456789 };
	in.pa_mtime = (struct timespec){ 1000000000, 999999999 };
	TT_OK(posix_setattr(fs, a.pa_ino, &in, POSIX_SET_ATIME | POSIX_SET_MTIME, NULL, &b));
	TT_OK(posix_getattr(fs, a.pa_ino, &b));
	TT_EQ(b.pa_atime.tv_sec, 1234567890);
	TT_EQ(b.pa_atime.tv_nsec, 123456789);
	TT_EQ(b.pa_mtime.tv_sec, 1000000000);
	TT_EQ(b.pa_mtime.tv_nsec, 999999999);
	TT_CHECK(b.pa_ctime.tv_sec >= a.pa_ctime.tv_sec);
	in.pa_size = 10;
	TT_EQ(posix_setattr(fs, d.pa_ino, &in, POSIX_SET_SIZE, NULL, &b), EISDIR);

	/*
	 * The kill flags: set-user-ID goes; set-group-ID only when
	 * group-executable or with POSIX_SET_KILL_SGID; with a mode they
	 * apply to the new mode; with nothing to clear, nothing changes.
	 */
	in.pa_mode = 06745;
	TT_OK(posix_setattr(fs, a.pa_ino, &in, POSIX_SET_MODE, NULL, &b));
	TT_OK(posix_setattr(fs, a.pa_ino, &in, POSIX_SET_KILL_SUIDGID, NULL, &b));
	TT_EQ(b.pa_mode, S_IFREG | 02745);
	in.pa_ctime = (struct timespec){ 77, 0 };
	TT_OK(posix_setattr(fs, a.pa_ino, &in, POSIX_SET_CTIME, NULL, &b));
	TT_OK(posix_setattr(fs, a.pa_ino, &in, POSIX_SET_KILL_SUIDGID, NULL, &b));
	TT_EQ(b.pa_mode, S_IFREG | 02745);
	TT_EQ(b.pa_ctime.tv_sec, 77);           /* untouched: nothing was cleared */
	TT_OK(posix_setattr(fs, a.pa_ino, &in, POSIX_SET_KILL_SUIDGID | POSIX_SET_KILL_SGID,
	    NULL, &b));
	TT_EQ(b.pa_mode, S_IFREG | 0745);
	TT_CHECK(b.pa_ctime.tv_sec > 77);
	in.pa_mode = 06755;
	TT_OK(posix_setattr(fs, a.pa_ino, &in, POSIX_SET_MODE | POSIX_SET_KILL_SUIDGID, NULL,
	    &b));
	TT_EQ(b.pa_mode, S_IFREG | 0755);
	in.pa_mode = 04755;
	TT_OK(posix_setattr(fs, a.pa_ino, &in, POSIX_SET_MODE, NULL, &b));
	in.pa_size = 3;
	TT_OK(posix_setattr(fs, a.pa_ino, &in, POSIX_SET_SIZE | POSIX_SET_KILL_SUIDGID, NULL,
	    &b));
	TT_EQ(b.pa_mode, S_IFREG | 0755);
	TT_EQ(b.pa_size, 3);

	/*
	 * Without POSIX_SET_KILL_SGID the caller decides: set-group-ID
	 * without group execute stays for root, for a caller whose gid is
	 * the file's (8) and for a member through supplementary groups; it
	 * goes for anyone else.
	 */
	posix_cred_t c_root = { .pc_uid = 0, .pc_gid = 0 };
	posix_cred_t c_own = { .pc_uid = 1000, .pc_gid = 8 };
	posix_cred_t c_member = { .pc_uid = 1000, .pc_gid = 1000, .pc_in_group = tp_in_group_8 };
	posix_cred_t c_other = { .pc_uid = 1000, .pc_gid = 1000, .pc_in_group = tp_in_group_9 };
	posix_cred_t c_nogroups = { .pc_uid = 1000, .pc_gid = 1000 };
	const posix_cred_t *keeps[] = { &c_root, &c_own, &c_member };
	for (int i = 0; i < 3; i++) {
		in.pa_mode = 06745;
		TT_OK(posix_setattr(fs, a.pa_ino, &in, POSIX_SET_MODE, NULL, &b));
		TT_OK(posix_setattr(fs, a.pa_ino, &in, POSIX_SET_KILL_SUIDGID, keeps[i], &b));
		TT_EQ(b.pa_mode, S_IFREG | 02745);
	}
	const posix_cred_t *kills[] = { &c_other, &c_nogroups };
	for (int i = 0; i < 2; i++) {
		in.pa_mode = 06745;
		TT_OK(posix_setattr(fs, a.pa_ino, &in, POSIX_SET_MODE, NULL, &b));
		TT_OK(posix_setattr(fs, a.pa_ino, &in, POSIX_SET_KILL_SUIDGID, kills[i], &b));
		TT_EQ(b.pa_mode, S_IFREG | 0745);
	}
	in.pa_mode = 0755;
	TT_OK(posix_setattr(fs, a.pa_ino, &in, POSIX_SET_MODE, NULL, &b));

	/* special files, setgid directories */
	TT_OK(posix_create(fs, t.root, "fifo", S_IFIFO | 0644, 0, NULL, true, &b));
	TT_CHECK(S_ISFIFO(b.pa_mode));
	TT_OK(posix_create(fs, t.root, "null", S_IFCHR | 0666, makedev(1, 3), NULL, true, &b));
	TT_EQ(b.pa_rdev, makedev(1, 3));
	in.pa_mode = 02775;
	TT_OK(posix_setattr(fs, d.pa_ino, &in, POSIX_SET_MODE, NULL, &b));
	in.pa_gid = 55;
	TT_OK(posix_setattr(fs, d.pa_ino, &in, POSIX_SET_GID, NULL, &b));
	TT_OK(posix_create(fs, d.pa_ino, "f", S_IFREG | 0644, 0, &tp_user_cred, true, &b));
	TT_EQ(b.pa_gid, 55);
	TT_OK(posix_mkdir(fs, d.pa_ino, "sub", 0755, &tp_user_cred, &b));
	TT_EQ(b.pa_gid, 55);
	TT_CHECK(b.pa_mode & S_ISGID);

	/* readdir types */
	tp_rd_t rd;
	tp_rd_all(&t, t.root, &rd, 0);
	TT_EQ(rd.n, 7);         /* . .. hello long d fifo null */
	for (size_t i = 0; i < rd.n; i++) {
		if (strcmp(rd.ents[i].name, "fifo") == 0)
			TT_EQ(rd.ents[i].type, DT_FIFO);
		if (strcmp(rd.ents[i].name, "d") == 0)
			TT_EQ(rd.ents[i].type, DT_DIR);
		if (strcmp(rd.ents[i].name, "hello") == 0)
			TT_EQ(rd.ents[i].type, DT_REG);
	}
	TT_CHECK(strcmp(rd.ents[0].name, ".") == 0 && strcmp(rd.ents[1].name, "..") == 0);
	tp_rd_free(&rd);
}

/* statfs, and a read-only file system refuses every change. */
static void
basic_readonly(posix_ino_t file)
{
	posix_fs_t *fs = t.fs;
	posix_attr_t a, b, in = { .pa_mode = 0644 };
	TT_OK(posix_getattr(fs, file, &a));
	struct statvfs st;
	TT_OK(posix_statfs(fs, &st));
	TT_CHECK(st.f_bavail > 100 * MiB / st.f_frsize);
	TT_EQ(st.f_namemax, 255);
	TT_CHECK(st.f_files > st.f_ffree);
	posix_fs_opts_t o = t.opts;
	o.pfo_readonly = true;
	posix_fs_set_opts(fs, &o);
	uint64_t n;
	TT_EQ(posix_create(fs, t.root, "ro", S_IFREG, 0, NULL, true, &b), EROFS);
	TT_EQ(posix_write(fs, a.pa_ino, 0, 1, "x", NULL, &n), EROFS);
	TT_EQ(posix_setattr(fs, a.pa_ino, &in, POSIX_SET_MODE, NULL, &b), EROFS);
	TT_EQ(posix_unlink(fs, t.root, "hello"), EROFS);
	TT_EQ(posix_setxattr(fs, a.pa_ino, "user.x", "1", 1, 0), EROFS);
	TT_OK(posix_statfs(fs, &st));
	TT_CHECK(st.f_flag & ST_RDONLY);
	posix_fs_set_opts(fs, &t.opts);
	TT_OK(posix_unlink(fs, t.root, "hello"));
}

/* ---- file data ---- */

static uint32_t
blksz_of(posix_ino_t ino)
{
	dmu_object_info_t doi;
	TT_OK(dmu_object_info(t.os, ino, &doi));
	return (doi.doi_data_block_size);
}

static void
check_range(posix_ino_t ino, uint64_t off, uint64_t len, const uint8_t *expect)
{
	uint8_t *rb = tarn_alloc(len);
	uint64_t n;
	TT_OK(posix_read(t.fs, ino, off, len, rb, &n));
	TT_EQ(n, len);
	for (uint64_t i = 0; i < len; i++) {
		uint8_t e = expect != NULL ? expect[i] : 0;
		if (rb[i] != e) {
			fprintf(stderr, "  byte %" PRIu64 ": %u != %u\n", off + i, rb[i], e);
			TT_ASSERT(0);
		}
	}
	tarn_free(rb);
}

static void
test_small_growth(void)
{
	tp_pool(&t, 1, 256 * MiB);
	uint8_t buf[300 * 1024];
	tp_fill(buf, sizeof (buf), 1);
	posix_ino_t f = tp_file(&t, t.root, "f", 100, 1);
	TT_EQ(blksz_of(f), 512);
	uint64_t n;
	TT_OK(posix_write(t.fs, f, 3000, 100, buf + 3000, NULL, &n));
	TT_EQ(blksz_of(f), 4096);
	check_range(f, 0, 100, buf);
	check_range(f, 100, 2900, NULL);
	check_range(f, 3000, 100, buf + 3000);
	TT_OK(posix_write(t.fs, f, 100, 2900, buf + 100, NULL, &n));
	TT_OK(posix_write(t.fs, f, 3100, 60000, buf + 3100, NULL, &n));
	TT_EQ(blksz_of(f), 64 * KiB);
	TT_OK(posix_write(t.fs, f, 63100, sizeof (buf) - 63100, buf + 63100, NULL, &n));
	TT_EQ(blksz_of(f), 128 * KiB);
	check_range(f, 0, sizeof (buf), buf);
	posix_attr_t a;
	TT_OK(posix_getattr(t.fs, f, &a));
	TT_EQ(a.pa_size, sizeof (buf));
	TT_EQ(a.pa_blksize, 128 * KiB);
	/* read past the end */
	TT_OK(posix_read(t.fs, f, sizeof (buf), 10, buf, &n));
	TT_EQ(n, 0);
	TT_OK(posix_read(t.fs, f, sizeof (buf) - 5, 10, buf, &n));
	TT_EQ(n, 5);
	/* too big */
	TT_EQ(posix_write(t.fs, f, 1ULL << 62, 1, buf, NULL, &n), EFBIG);
	posix_attr_t big = { .pa_size = 1ULL << 62 };
	TT_EQ(posix_setattr(t.fs, f, &big, POSIX_SET_SIZE, NULL, &a), EFBIG);
	TT_EQ(posix_fs_create(t.os, 0, 0), EEXIST);
	/* directories are not files */
	TT_EQ(posix_read(t.fs, t.root, 0, 10, buf, &n), EISDIR);
	TT_EQ(posix_write(t.fs, t.root, 0, 10, buf, NULL, &n), EISDIR);
	/* a write by a user drops set-user-ID */
	posix_attr_t in = { .pa_mode = 06755 };
	TT_OK(posix_setattr(t.fs, f, &in, POSIX_SET_MODE, NULL, &a));
	TT_OK(posix_write(t.fs, f, 0, 1, buf, &tp_root_cred, &n));
	TT_OK(posix_getattr(t.fs, f, &a));
	TT_EQ(a.pa_mode & 07777, 06755);
	TT_OK(posix_write(t.fs, f, 0, 1, buf, &tp_user_cred, &n));
	TT_OK(posix_getattr(t.fs, f, &a));
	TT_EQ(a.pa_mode & 07777, 0755);
	tp_done(&t);
}

static void
test_sparse_seek(void)
{
	tp_pool(&t, 1, 256 * MiB);
	uint8_t buf[4096];
	tp_fill(buf, sizeof (buf), 7);
	posix_attr_t a;
	TT_OK(posix_create(t.fs, t.root, "s", S_IFREG | 0644, 0, NULL, true, &a));
	posix_ino_t s = a.pa_ino;
	uint64_t n, off;
	TT_OK(posix_write(t.fs, s, 1ULL << 30, sizeof (buf), buf, NULL, &n));
	TT_OK(posix_write(t.fs, s, 1ULL << 40, sizeof (buf), buf, NULL, &n));
	TT_OK(posix_getattr(t.fs, s, &a));
	TT_EQ(a.pa_size, (1ULL << 40) + 4096);
	check_range(s, 1ULL << 30, 4096, buf);
	check_range(s, 1ULL << 40, 4096, buf);
	check_range(s, 1ULL << 35, 4096, NULL);
	check_range(s, 0, 4096, NULL);
	TT_OK(posix_lseek(t.fs, s, 0, SEEK_DATA, &off));
	TT_EQ(off, 1ULL << 30);
	TT_OK(posix_lseek(t.fs, s, 5, SEEK_HOLE, &off));
	TT_EQ(off, 5);
	TT_OK(posix_lseek(t.fs, s, (1ULL << 30) + 10, SEEK_HOLE, &off));
	TT_EQ(off, (1ULL << 30) + 128 * KiB);
	TT_OK(posix_lseek(t.fs, s, (1ULL << 40) + 10, SEEK_DATA, &off));
	TT_EQ(off, (1ULL << 40) + 10);
	TT_OK(posix_lseek(t.fs, s, (1ULL << 40) + 10, SEEK_HOLE, &off));
	TT_EQ(off, (1ULL << 40) + 4096);        /* the end of file */
	TT_EQ(posix_lseek(t.fs, s, (1ULL << 40) + 4096, SEEK_DATA, &off), ENXIO);
	TT_OK(posix_fs_sync(t.fs));
	TT_OK(posix_getattr(t.fs, s, &a));
	TT_CHECK(a.pa_blocks * 512 < 4 * MiB);  /* holes take no space */
	TT_CHECK(a.pa_blocks > 0);
	tp_done(&t);
}

static void
test_truncate_punch(void)
{
	tp_pool(&t, 1, 256 * MiB);
	uint8_t buf[16];
	posix_attr_t a;
	uint64_t n, off;
	/* truncate down zeroes the tail; up reads zeros */
	uint8_t *big = tarn_alloc(MiB);
	tp_fill(big, MiB, 9);
	posix_ino_t f = tp_file(&t, t.root, "t", 300 * KiB, 9);
	posix_attr_t in = { .pa_size = 150001 };
	TT_OK(posix_setattr(t.fs, f, &in, POSIX_SET_SIZE, NULL, &a));
	TT_EQ(a.pa_size, 150001);
	in.pa_size = 400 * KiB;
	TT_OK(posix_setattr(t.fs, f, &in, POSIX_SET_SIZE, NULL, &a));
	check_range(f, 0, 150001, big);
	check_range(f, 150001, 400 * KiB - 150001, NULL);
	in.pa_size = 0;
	TT_OK(posix_setattr(t.fs, f, &in, POSIX_SET_SIZE, NULL, &a));
	TT_OK(posix_read(t.fs, f, 0, 10, buf, &n));
	TT_EQ(n, 0);

	/* punch a hole */
	posix_ino_t p = tp_file(&t, t.root, "p", MiB, 9);
	TT_EQ(posix_falloc(t.fs, p, FALLOC_FL_PUNCH_HOLE, 100000, 300000), EOPNOTSUPP);
	TT_OK(posix_falloc(t.fs, p, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 100000, 300000));
	TT_OK(posix_getattr(t.fs, p, &a));
	TT_EQ(a.pa_size, MiB);
	check_range(p, 0, 100000, big);
	check_range(p, 100000, 300000, NULL);
	check_range(p, 400000, MiB - 400000, big + 400000);
	TT_OK(posix_lseek(t.fs, p, 0, SEEK_HOLE, &off));
	TT_EQ(off, 128 * KiB);
	TT_OK(posix_lseek(t.fs, p, 128 * KiB, SEEK_DATA, &off));
	TT_EQ(off, 384 * KiB);
	/* punch past the end changes nothing */
	TT_OK(posix_falloc(t.fs, p, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 2 * MiB, MiB));
	TT_OK(posix_getattr(t.fs, p, &a));
	TT_EQ(a.pa_size, MiB);

	/* fallocate: mode 0 extends, KEEP_SIZE does not, too much is ENOSPC */
	TT_OK(posix_falloc(t.fs, f, 0, 0, 3 * MiB));
	TT_OK(posix_getattr(t.fs, f, &a));
	TT_EQ(a.pa_size, 3 * MiB);
	TT_OK(posix_falloc(t.fs, f, FALLOC_FL_KEEP_SIZE, 0, 5 * MiB));
	TT_OK(posix_getattr(t.fs, f, &a));
	TT_EQ(a.pa_size, 3 * MiB);
	TT_EQ(posix_falloc(t.fs, f, 0, 0, 10 * GiB), ENOSPC);
	TT_EQ(posix_falloc(t.fs, f, 0, 0, 0), EINVAL);
	TT_EQ(posix_falloc(t.fs, t.root, 0, 0, 10), EISDIR);
	TT_EQ(posix_falloc(t.fs, f, FALLOC_FL_INSERT_RANGE, 0, 10), EOPNOTSUPP);
	TT_EQ(posix_falloc(t.fs, f, FALLOC_FL_COLLAPSE_RANGE, 0, 10), EOPNOTSUPP);
	TT_EQ(posix_falloc(t.fs, f, FALLOC_FL_ZERO_RANGE | FALLOC_FL_PUNCH_HOLE |
	    FALLOC_FL_KEEP_SIZE, 0, 10), EOPNOTSUPP);

	/* zero a range: inside (holes), then past the end with and without KEEP_SIZE */
	posix_ino_t z = tp_file(&t, t.root, "z", MiB, 11);
	uint8_t *zbig = tarn_alloc(MiB);
	tp_fill(zbig, MiB, 11);
	TT_OK(posix_falloc(t.fs, z, FALLOC_FL_ZERO_RANGE, 5000, 200000));
	TT_OK(posix_getattr(t.fs, z, &a));
	TT_EQ(a.pa_size, MiB);
	check_range(z, 0, 5000, zbig);
	check_range(z, 5000, 200000, NULL);
	check_range(z, 205000, MiB - 205000, zbig + 205000);
	TT_OK(posix_falloc(t.fs, z, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, MiB - 100,
	    1000));
	TT_OK(posix_getattr(t.fs, z, &a));
	TT_EQ(a.pa_size, MiB);
	check_range(z, MiB - 100, 100, NULL);
	TT_OK(posix_falloc(t.fs, z, FALLOC_FL_ZERO_RANGE, MiB - 50, 3000));
	TT_OK(posix_getattr(t.fs, z, &a));
	TT_EQ(a.pa_size, MiB + 2950);
	check_range(z, MiB - 100, 3050, NULL);
	tarn_free(zbig);
	tarn_free(big);
	tp_done(&t);
}

/* ---- links ---- */

static void
test_links(void)
{
	tp_pool(&t, 1, 256 * MiB);
	posix_attr_t a, d, b;
	posix_ino_t f = tp_file(&t, t.root, "a", 5000, 3);
	TT_OK(posix_mkdir(t.fs, t.root, "d", 0755, NULL, &d));
	TT_OK(posix_link(t.fs, f, t.root, "b", &a));
	TT_EQ(a.pa_nlink, 2);
	TT_OK(posix_link(t.fs, f, d.pa_ino, "c", &a));
	TT_EQ(a.pa_nlink, 3);
	TT_EQ(posix_link(t.fs, f, t.root, "b", &a), EEXIST);
	TT_EQ(posix_link(t.fs, d.pa_ino, t.root, "dl", &a), EPERM);
	TT_EQ(posix_link(t.fs, f, f, "x", &a), ENOTDIR);
	/* paths for reports: a name in the directory it was made in ("a" or its link "b") */
	char path[64];
	TT_OK(posix_ino_path(t.fs, f, path, sizeof (path)));
	TT_CHECK(strcmp(path, "/a") == 0 || strcmp(path, "/b") == 0);
	TT_OK(posix_ino_path(t.fs, t.root, path, sizeof (path)));
	TT_CHECK(strcmp(path, "/") == 0);
	posix_attr_t dd;
	TT_OK(posix_mkdir(t.fs, d.pa_ino, "deeper", 0755, NULL, &dd));
	posix_ino_t g = tp_file(&t, dd.pa_ino, "g", 10, 1);
	TT_OK(posix_ino_path(t.fs, g, path, sizeof (path)));
	TT_CHECK(strcmp(path, "/d/deeper/g") == 0);
	TT_EQ(posix_ino_path(t.fs, g, path, 8), ENAMETOOLONG);
	TT_EQ(posix_ino_path(t.fs, 999999, path, sizeof (path)), ENOENT);
	TT_OK(posix_unlink(t.fs, dd.pa_ino, "g"));
	TT_EQ(posix_ino_path(t.fs, g, path, sizeof (path)), ENOENT);     /* unlinked */
	TT_OK(posix_rmdir(t.fs, d.pa_ino, "deeper"));
	TT_OK(posix_unlink(t.fs, t.root, "a"));
	TT_OK(posix_lookup(t.fs, d.pa_ino, "c", &b));
	TT_EQ(b.pa_ino, f);
	TT_EQ(b.pa_nlink, 2);
	tp_check_file(&t, f, 5000, 3);
	TT_EQ(posix_unlink(t.fs, t.root, "a"), ENOENT);
	TT_EQ(posix_unlink(t.fs, t.root, "d"), EISDIR);
	TT_EQ(posix_rmdir(t.fs, t.root, "b"), ENOTDIR);
	TT_EQ(posix_rmdir(t.fs, t.root, "d"), ENOTEMPTY);
	TT_EQ(posix_rmdir(t.fs, t.root, "."), EINVAL);
	TT_EQ(posix_unlink(t.fs, t.root, ".."), EISDIR);
	TT_OK(posix_unlink(t.fs, t.root, "b"));
	TT_OK(posix_unlink(t.fs, d.pa_ino, "c"));
	/* referenced (create, two links, one lookup): alive with no link */
	TT_OK(posix_getattr(t.fs, f, &b));
	TT_EQ(b.pa_nlink, 0);
	tp_check_file(&t, f, 5000, 3);
	TT_EQ(posix_link(t.fs, f, t.root, "again", &a), ENOENT);
	posix_forget(t.fs, f, 3);
	TT_OK(posix_getattr(t.fs, f, &b));
	posix_forget(t.fs, f, 1);
	TT_EQ(posix_getattr(t.fs, f, &b), ENOENT);
	TT_OK(posix_rmdir(t.fs, t.root, "d"));
	TT_OK(posix_getattr(t.fs, t.root, &b));
	TT_EQ(b.pa_nlink, 2);
	TT_EQ(b.pa_size, 2);
	tp_done(&t);
}

static void
test_symlinks(void)
{
	tp_pool(&t, 1, 256 * MiB);
	char target[5000], buf[5000];
	posix_attr_t a;
	const size_t lens[] = { 1, 20, 144, 145, 1000, 4095 };
	for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
		for (size_t j = 0; j < lens[i]; j++)
			target[j] = (char)('a' + (i + j) % 26);
		target[lens[i]] = '\0';
		char name[32];
		snprintf(name, sizeof (name), "l%zu", lens[i]);
		TT_OK(posix_symlink(t.fs, t.root, name, target, &tp_user_cred, &a));
		TT_EQ(a.pa_mode, S_IFLNK | 0777);
		TT_EQ(a.pa_size, lens[i]);
		TT_OK(posix_readlink(t.fs, a.pa_ino, buf, sizeof (buf)));
		TT_CHECK(strcmp(buf, target) == 0);
		TT_EQ(posix_readlink(t.fs, a.pa_ino, buf, lens[i]), ERANGE);
	}
	memset(target, 'z', 4096);
	target[4096] = '\0';
	TT_EQ(posix_symlink(t.fs, t.root, "toolong", target, NULL, &a), ENAMETOOLONG);
	TT_EQ(posix_symlink(t.fs, t.root, "empty", "", NULL, &a), ENOENT);
	TT_EQ(posix_symlink(t.fs, t.root, "l1", "x", NULL, &a), EEXIST);
	posix_ino_t f = tp_file(&t, t.root, "file", 10, 1);
	TT_EQ(posix_readlink(t.fs, f, buf, sizeof (buf)), EINVAL);
	TT_OK(posix_lookup(t.fs, t.root, "l1000", &a));
	TT_EQ(posix_setxattr(t.fs, a.pa_ino, "user.x", "1", 1, 0), EPERM);
	TT_OK(posix_setxattr(t.fs, a.pa_ino, "trusted.x", "1", 1, 0));
	tp_rd_t rd;
	tp_rd_all(&t, t.root, &rd, 0);
	for (size_t i = 0; i < rd.n; i++)
		if (rd.ents[i].name[0] == 'l')
			TT_EQ(rd.ents[i].type, DT_LNK);
	tp_rd_free(&rd);
	TT_OK(posix_unlink(t.fs, t.root, "l4095"));
	tp_reopen(&t);
	TT_OK(posix_lookup(t.fs, t.root, "l1000", &a));
	TT_OK(posix_readlink(t.fs, a.pa_ino, buf, sizeof (buf)));
	TT_EQ(strlen(buf), 1000);
	TT_EQ(posix_lookup(t.fs, t.root, "l4095", &a), ENOENT);
	tp_done(&t);
}

/* ---- rename ---- */

static posix_ino_t
ino_of(posix_ino_t dir, const char *name)
{
	posix_attr_t a;
	int e = posix_lookup(t.fs, dir, name, &a);
	if (e != 0)
		return (0);
	posix_forget(t.fs, a.pa_ino, 1);
	return (a.pa_ino);
}

static uint32_t
nlink_of(posix_ino_t ino)
{
	posix_attr_t a;
	TT_OK(posix_getattr(t.fs, ino, &a));
	return (a.pa_nlink);
}

static void rename_dirs(void);
static void rename_exchange(void);

static void
test_rename(void)
{
	tp_pool(&t, 1, 256 * MiB);
	posix_fs_t *fs = t.fs;
	posix_ino_t R = t.root;
	posix_attr_t a;
	/* file over file */
	posix_ino_t fa = tp_file(&t, R, "a", 1000, 1);
	posix_ino_t fb = tp_file(&t, R, "b", 2000, 2);
	TT_OK(posix_rename(fs, R, "a", R, "b", 0));
	TT_EQ(ino_of(R, "a"), 0);
	TT_EQ(ino_of(R, "b"), fa);
	tp_check_file(&t, fa, 1000, 1);
	TT_EQ(nlink_of(fb), 0);         /* still referenced by its creation */
	posix_forget(fs, fb, 1);
	TT_EQ(posix_getattr(fs, fb, &a), ENOENT);
	/* two names of one inode: nothing happens */
	TT_OK(posix_link(fs, fa, R, "b2", &a));
	TT_OK(posix_rename(fs, R, "b", R, "b2", 0));
	TT_EQ(ino_of(R, "b"), fa);
	TT_EQ(ino_of(R, "b2"), fa);
	TT_EQ(posix_rename(fs, R, "b", R, "b2", POSIX_RENAME_NOREPLACE), EEXIST);
	/* missing source, bad flags, dots */
	TT_EQ(posix_rename(fs, R, "nope", R, "x", 0), ENOENT);
	TT_EQ(posix_rename(fs, R, "b", R, "x", 3), EINVAL);
	TT_EQ(posix_rename(fs, R, "b", R, "x", 4), EINVAL);
	TT_EQ(posix_rename(fs, R, ".", R, "x", 0), EBUSY);
	TT_EQ(posix_rename(fs, R, "b", R, "..", 0), EBUSY);
	/* NOREPLACE */
	TT_OK(posix_rename(fs, R, "b2", R, "c", POSIX_RENAME_NOREPLACE));
	TT_EQ(ino_of(R, "c"), fa);
	rename_dirs();
	rename_exchange();
	tp_done(&t);
}

/* Directories: over an empty one, not a non-empty one, "..", own subtree. */
static void
rename_dirs(void)
{
	posix_fs_t *fs = t.fs;
	posix_ino_t R = t.root;
	posix_attr_t d1, d2, d3, e;
	TT_OK(posix_mkdir(fs, R, "d1", 0755, NULL, &d1));
	TT_OK(posix_mkdir(fs, R, "d2", 0755, NULL, &d2));
	TT_OK(posix_mkdir(fs, R, "d3", 0755, NULL, &d3));
	tp_file(&t, d1.pa_ino, "in1", 10, 10);
	tp_file(&t, d3.pa_ino, "in3", 10, 11);
	TT_EQ(nlink_of(R), 5);
	TT_EQ(posix_rename(fs, R, "d1", R, "d3", 0), ENOTEMPTY);
	TT_EQ(posix_rename(fs, R, "d1", R, "c", 0), ENOTDIR);
	TT_EQ(posix_rename(fs, R, "c", R, "d1", 0), EISDIR);
	TT_OK(posix_rename(fs, R, "d1", R, "d2", 0));
	TT_EQ(ino_of(R, "d2"), d1.pa_ino);
	TT_EQ(ino_of(d1.pa_ino, "in1") != 0, 1);
	TT_EQ(nlink_of(R), 4);
	TT_EQ(posix_getattr(fs, d2.pa_ino, &e), 0);     /* referenced: kept */
	TT_EQ(e.pa_nlink, 0);
	posix_forget(fs, d2.pa_ino, 1);
	TT_EQ(posix_getattr(fs, d2.pa_ino, &e), ENOENT);
	/* move a directory: ".." and the parents' link counts follow */
	posix_attr_t p, q, m;
	TT_OK(posix_mkdir(fs, R, "p", 0755, NULL, &p));
	TT_OK(posix_mkdir(fs, p.pa_ino, "q", 0755, NULL, &q));
	TT_OK(posix_mkdir(fs, R, "m", 0755, NULL, &m));
	uint32_t rl = nlink_of(R);
	TT_OK(posix_rename(fs, R, "m", q.pa_ino, "m", 0));
	TT_EQ(ino_of(m.pa_ino, ".."), q.pa_ino);
	TT_EQ(nlink_of(q.pa_ino), 3);
	TT_EQ(nlink_of(R), rl - 1);
	tp_rd_t rd;
	tp_rd_all(&t, m.pa_ino, &rd, 0);
	TT_EQ(rd.n, 2);
	TT_EQ(rd.ents[1].ino, q.pa_ino);
	tp_rd_free(&rd);
	/* into its own subtree */
	TT_EQ(posix_rename(fs, R, "p", q.pa_ino, "p2", 0), EINVAL);
	TT_EQ(posix_rename(fs, R, "p", m.pa_ino, "p2", 0), EINVAL);
	TT_EQ(posix_rename(fs, R, "p", p.pa_ino, "p2", 0), EINVAL);
	TT_EQ(posix_rename(fs, p.pa_ino, "q", R, "p", POSIX_RENAME_EXCHANGE), EINVAL);
}

/* EXCHANGE a file and a directory in different directories, and in one. */
static void
rename_exchange(void)
{
	posix_fs_t *fs = t.fs;
	posix_ino_t R = t.root;
	posix_attr_t x, y, xf, yd, e;
	tp_rd_t rd;
	TT_OK(posix_mkdir(fs, R, "x", 0755, NULL, &x));
	TT_OK(posix_mkdir(fs, R, "y", 0755, NULL, &y));
	TT_OK(posix_create(fs, x.pa_ino, "f", S_IFREG | 0644, 0, NULL, true, &xf));
	TT_OK(posix_mkdir(fs, y.pa_ino, "d", 0755, NULL, &yd));
	TT_EQ(posix_rename(fs, x.pa_ino, "f", y.pa_ino, "none", POSIX_RENAME_EXCHANGE), ENOENT);
	TT_OK(posix_rename(fs, x.pa_ino, "f", y.pa_ino, "d", POSIX_RENAME_EXCHANGE));
	TT_EQ(ino_of(x.pa_ino, "f"), yd.pa_ino);
	TT_EQ(ino_of(y.pa_ino, "d"), xf.pa_ino);
	TT_EQ(ino_of(yd.pa_ino, ".."), x.pa_ino);
	TT_EQ(nlink_of(x.pa_ino), 3);
	TT_EQ(nlink_of(y.pa_ino), 2);
	tp_rd_all(&t, x.pa_ino, &rd, 0);
	TT_EQ(rd.n, 3);
	TT_EQ(rd.ents[2].type, DT_DIR);
	tp_rd_free(&rd);
	/* EXCHANGE in one directory */
	posix_ino_t c = ino_of(R, "c");
	TT_OK(posix_rename(fs, R, "c", R, "x", POSIX_RENAME_EXCHANGE));
	TT_EQ(ino_of(R, "c"), x.pa_ino);
	TT_EQ(ino_of(R, "x"), c);
	/* rename within a directory onto itself */
	TT_OK(posix_rename(fs, R, "x", R, "x", 0));
	TT_EQ(ino_of(R, "x"), c);
	/* target directory removed */
	TT_OK(posix_mkdir(fs, R, "gone", 0755, NULL, &e));
	TT_OK(posix_rmdir(fs, R, "gone"));
	TT_EQ(posix_rename(fs, R, "x", e.pa_ino, "x", 0), ENOENT);
	tp_reopen(&t);
	TT_EQ(ino_of(t.root, "x"), c);
	TT_EQ(ino_of(yd.pa_ino, ".."), x.pa_ino);
	TT_EQ(nlink_of(x.pa_ino), 3);
}

/* ---- xattrs ---- */

static uint64_t
count_objects(void)
{
	uint64_t obj = 0, n = 0;
	while (dmu_object_next(t.os, &obj) == 0)
		n++;
	return (n);
}

static void
xattr_roundtrip(posix_ino_t ino, const char *name, size_t len, uint64_t seed)
{
	uint8_t *v = tarn_alloc(len + 1), *r = tarn_alloc(len + 1);
	tp_fill(v, len, seed);
	size_t out = 12345;
	TT_OK(posix_setxattr(t.fs, ino, name, v, len, 0));
	TT_OK(posix_getxattr(t.fs, ino, name, NULL, 0, &out));
	TT_EQ(out, len);
	TT_OK(posix_getxattr(t.fs, ino, name, r, len + 1, &out));
	TT_EQ(out, len);
	TT_ASSERT(memcmp(v, r, len) == 0);
	tarn_free(v);
	tarn_free(r);
}

/*
 * ACLs in Linux's xattr form: version 2, then {tag, perm, id} entries
 * (USER_OBJ 1, USER 2, GROUP_OBJ 4, GROUP 8, MASK 0x10, OTHER 0x20).
 */
#define ACL_E(tag, perm, id) tag, 0, perm, 0, (id) & 0xff, ((id) >> 8) & 0xff, 0, 0
#define ACL_NOID 0xffff
static const uint8_t acl_named[] = {    /* u::rw- u:1000:rw- g::r-- m::r-- o::--- */
	2, 0, 0, 0, ACL_E(1, 6, ACL_NOID), ACL_E(2, 6, 1000), ACL_E(4, 4, ACL_NOID),
	ACL_E(0x10, 4, ACL_NOID), ACL_E(0x20, 0, ACL_NOID)
};
static const uint8_t acl_base[] = {     /* u::rwx g::r-x o::r-- (what the mode says) */
	2, 0, 0, 0, ACL_E(1, 7, ACL_NOID), ACL_E(4, 5, ACL_NOID), ACL_E(0x20, 4, ACL_NOID)
};

static void xattr_sizes(posix_ino_t f);
static void xattr_reopen(posix_ino_t f, uint64_t objs0);

static void
test_xattrs(void)
{
	tp_pool(&t, 1, 256 * MiB);
	posix_fs_t *fs = t.fs;
	uint64_t objs0 = count_objects();
	posix_ino_t f = tp_file(&t, t.root, "f", 10, 1);
	char buf[128];
	size_t n;
	posix_attr_t a, b;
	TT_OK(posix_getattr(fs, f, &a));
	TT_OK(posix_setxattr(fs, f, "user.a", "hello", 5, 0));
	TT_OK(posix_getattr(fs, f, &b));
	TT_CHECK(b.pa_ctime.tv_sec > a.pa_ctime.tv_sec ||
	    (b.pa_ctime.tv_sec == a.pa_ctime.tv_sec && b.pa_ctime.tv_nsec > a.pa_ctime.tv_nsec));
	TT_OK(posix_getxattr(fs, f, "user.a", buf, sizeof (buf), &n));
	TT_EQ(n, 5);
	TT_CHECK(memcmp(buf, "hello", 5) == 0);
	TT_EQ(posix_getxattr(fs, f, "user.a", buf, 3, &n), ERANGE);
	TT_EQ(posix_getxattr(fs, f, "user.b", buf, sizeof (buf), &n), ENODATA);
	TT_EQ(posix_setxattr(fs, f, "user.a", "x", 1, POSIX_XATTR_CREATE), EEXIST);
	TT_EQ(posix_setxattr(fs, f, "user.b", "x", 1, POSIX_XATTR_REPLACE), ENODATA);
	TT_OK(posix_setxattr(fs, f, "user.a", "bye", 3, POSIX_XATTR_REPLACE));
	TT_OK(posix_getxattr(fs, f, "user.a", buf, sizeof (buf), &n));
	TT_EQ(n, 3);
	TT_OK(posix_setxattr(fs, f, "user.b", "", 0, POSIX_XATTR_CREATE));
	TT_OK(posix_getxattr(fs, f, "user.b", buf, sizeof (buf), &n));
	TT_EQ(n, 0);
	/* namespaces */
	TT_OK(posix_setxattr(fs, f, "trusted.t", "1", 1, 0));
	TT_OK(posix_setxattr(fs, f, "security.selinux", "ctx", 3, 0));
	TT_OK(posix_setxattr(fs, f, "system.posix_acl_access", acl_named, sizeof (acl_named), 0));
	TT_OK(posix_setxattr(fs, t.root, "system.posix_acl_default", acl_named,
	    sizeof (acl_named), 0));
	TT_EQ(posix_setxattr(fs, f, "foo.bar", "1", 1, 0), EOPNOTSUPP);
	TT_EQ(posix_setxattr(fs, f, "system.other", "1", 1, 0), EOPNOTSUPP);
	TT_EQ(posix_setxattr(fs, f, "user.", "1", 1, 0), EINVAL);
	char longname[300] = "user.";
	memset(longname + 5, 'n', 251);
	TT_EQ(posix_setxattr(fs, f, longname, "1", 1, 0), ERANGE);
	longname[255] = '\0';
	TT_OK(posix_setxattr(fs, f, longname, "1", 1, 0));
	/* list */
	TT_OK(posix_listxattr(fs, f, NULL, 0, &n));
	size_t want = 7 + 7 + 10 + 17 + 24 + 256;
	TT_EQ(n, want);
	char *list = tarn_alloc(want);
	TT_EQ(posix_listxattr(fs, f, list, want - 1, &n), ERANGE);
	TT_OK(posix_listxattr(fs, f, list, want, &n));
	int found = 0;
	for (size_t i = 0; i < n; i += strlen(list + i) + 1)
		found += strcmp(list + i, "user.a") == 0 || strcmp(list + i, "security.selinux") == 0;
	TT_EQ(found, 2);
	tarn_free(list);
	/* remove */
	TT_OK(posix_removexattr(fs, f, "user.a"));
	TT_EQ(posix_getxattr(fs, f, "user.a", buf, sizeof (buf), &n), ENODATA);
	TT_EQ(posix_removexattr(fs, f, "user.a"), ENODATA);
	xattr_sizes(f);
	xattr_reopen(f, objs0);
	tp_done(&t);
}

/* Sizes around the inline limit, up to 64 KiB, and replacing across forms. */
static void
xattr_sizes(posix_ino_t f)
{
	posix_fs_t *fs = t.fs;
	char buf[128];
	size_t n;
	xattr_roundtrip(f, "user.s4096", 4096, 1);
	xattr_roundtrip(f, "user.s4097", 4097, 2);
	xattr_roundtrip(f, "user.s8192", 8192, 3);
	xattr_roundtrip(f, "user.big", 64 * KiB, 4);
	xattr_roundtrip(f, "user.big", 100, 5);
	xattr_roundtrip(f, "user.big", 20000, 6);
	uint8_t *huge = tarn_alloc(64 * KiB + 1);
	TT_EQ(posix_setxattr(fs, f, "user.huge", huge, 64 * KiB + 1, 0), E2BIG);
	tarn_free(huge);
	TT_EQ(posix_getxattr(fs, f, "user.big", buf, sizeof (buf), &n), ERANGE);
	/* directories have xattrs too */
	xattr_roundtrip(t.root, "user.dir", 10, 7);
}

/* Persisted; disabled by the option; freed with their inode. */
static void
xattr_reopen(posix_ino_t f, uint64_t objs0)
{
	char buf[128];
	size_t n;
	posix_attr_t a;
	tp_reopen(&t);
	posix_fs_t *fs = t.fs;
	TT_OK(posix_getxattr(fs, f, "user.big", NULL, 0, &n));
	TT_EQ(n, 20000);
	TT_OK(posix_getxattr(fs, f, "security.selinux", buf, sizeof (buf), &n));
	TT_CHECK(n == 3 && memcmp(buf, "ctx", 3) == 0);
	/* disabled */
	posix_fs_opts_t o = t.opts;
	o.pfo_xattr = false;
	posix_fs_set_opts(fs, &o);
	TT_EQ(posix_getxattr(fs, f, "user.b", buf, sizeof (buf), &n), EOPNOTSUPP);
	TT_EQ(posix_listxattr(fs, f, buf, sizeof (buf), &n), EOPNOTSUPP);
	posix_fs_set_opts(fs, &t.opts);
	/* freeing the file frees its xattr objects */
	TT_OK(posix_removexattr(fs, t.root, "user.dir"));
	TT_OK(posix_removexattr(fs, t.root, "system.posix_acl_default"));
	TT_OK(posix_unlink(fs, t.root, "f"));       /* no references after reopen */
	TT_EQ(posix_getattr(fs, f, &a), ENOENT);
	TT_EQ(count_objects(), objs0 + 1);          /* the root's xattr object stays */
}

/* ---- small xattrs in the inode (feature xattr_inline) ---- */

static void
xinline_has(posix_ino_t f, const char *name, const void *want, size_t wantlen)
{
	char buf[512];
	size_t n;
	TT_OK(posix_getxattr(t.fs, f, name, buf, sizeof (buf), &n));
	TT_EQ(n, wantlen);
	TT_CHECK(memcmp(buf, want, wantlen) == 0);
}

/* How many times each name is listed ("a\0b\0"), for names[0..n). */
static void
xinline_listed_once(posix_ino_t f, const char *const *names, int n)
{
	char list[1024];
	size_t len;
	TT_OK(posix_listxattr(t.fs, f, list, sizeof (list), &len));
	int total = 0;
	for (size_t off = 0; off < len; off += strlen(list + off) + 1)
		total++;
	TT_EQ(total, n);
	for (int i = 0; i < n; i++) {
		int seen = 0;
		for (size_t off = 0; off < len; off += strlen(list + off) + 1)
			seen += strcmp(list + off, names[i]) == 0;
		TT_EQ(seen, 1);
	}
}

/* A pool whose file system keeps small xattrs in the inode; returns file "f". */
static posix_ino_t
xinline_setup(void)
{
	tp_pool(&t, 1, 256 * MiB);
	t.opts.pfo_xattr_inline = true;
	tp_reopen(&t);
	return (tp_file(&t, t.root, "f", 10, 1));
}

static void
test_xattr_inline(void)
{
	posix_ino_t f = xinline_setup();
	posix_fs_t *fs = t.fs;
	uint64_t objs0 = count_objects();
	uint8_t dos[60], big[200], mid[100];
	memset(dos, 0x11, sizeof (dos));
	memset(big, 0x22, sizeof (big));
	memset(mid, 0x33, sizeof (mid));
	/* a Samba-sized attribute: in the inode, no object made */
	TT_OK(posix_setxattr(fs, f, "user.DOSATTRIB", dos, sizeof (dos), POSIX_XATTR_CREATE));
	TT_EQ(count_objects(), objs0);
	xinline_has(f, "user.DOSATTRIB", dos, sizeof (dos));
	TT_EQ(posix_setxattr(fs, f, "user.DOSATTRIB", dos, 1, POSIX_XATTR_CREATE), EEXIST);
	TT_EQ(posix_setxattr(fs, f, "user.none", dos, 1, POSIX_XATTR_REPLACE), ENODATA);
	size_t n;
	TT_EQ(posix_getxattr(fs, f, "user.DOSATTRIB", dos, 10, &n), ERANGE);
	TT_OK(posix_getxattr(fs, f, "user.DOSATTRIB", NULL, 0, &n));
	TT_EQ(n, sizeof (dos));
	/* one too big for the area goes to the ZAP; both are listed once */
	TT_OK(posix_setxattr(fs, f, "user.big", big, sizeof (big), 0));
	TT_EQ(count_objects(), objs0 + 1);
	TT_OK(posix_setxattr(fs, f, "trusted.t", "1", 1, 0));
	TT_OK(posix_setxattr(fs, f, "user.empty", "", 0, 0));
	const char *names4[] = { "user.DOSATTRIB", "user.big", "trusted.t", "user.empty" };
	xinline_listed_once(f, names4, 4);
	/* a value that outgrows the room left moves to the ZAP, and back */
	TT_OK(posix_setxattr(fs, f, "user.DOSATTRIB", mid, sizeof (mid), POSIX_XATTR_REPLACE));
	xinline_has(f, "user.DOSATTRIB", mid, sizeof (mid));
	xinline_listed_once(f, names4, 4);
	TT_OK(posix_setxattr(fs, f, "user.DOSATTRIB", dos, 8, POSIX_XATTR_REPLACE));
	xinline_has(f, "user.DOSATTRIB", dos, 8);
	xinline_listed_once(f, names4, 4);
	/* ACLs stay in the ZAP, symlinks keep their target */
	TT_OK(posix_setxattr(fs, f, "system.posix_acl_access", acl_named, sizeof (acl_named), 0));
	posix_attr_t sl;
	TT_OK(posix_symlink(fs, t.root, "sl", "target-of-the-link", &tp_root_cred, &sl));
	uint64_t objs1 = count_objects();
	TT_OK(posix_setxattr(fs, sl.pa_ino, "trusted.s", "v", 1, 0));
	TT_EQ(count_objects(), objs1 + 1);
	char target[64];
	TT_OK(posix_readlink(fs, sl.pa_ino, target, sizeof (target)));
	TT_CHECK(strcmp(target, "target-of-the-link") == 0);
	posix_forget(fs, sl.pa_ino, 1);
	/* all of it after a remount */
	tp_reopen(&t);
	fs = t.fs;
	xinline_has(f, "user.DOSATTRIB", dos, 8);
	xinline_has(f, "user.big", big, sizeof (big));
	xinline_has(f, "trusted.t", "1", 1);
	xinline_has(f, "user.empty", "", 0);
	TT_OK(posix_readlink(fs, sl.pa_ino, target, sizeof (target)));
	TT_CHECK(strcmp(target, "target-of-the-link") == 0);
	/* removed from where they are */
	TT_OK(posix_removexattr(fs, f, "user.DOSATTRIB"));
	TT_OK(posix_removexattr(fs, f, "user.big"));
	TT_EQ(posix_removexattr(fs, f, "user.DOSATTRIB"), ENODATA);
	TT_EQ(posix_getxattr(fs, f, "user.DOSATTRIB", NULL, 0, &n), ENODATA);
	const char *names2[] = { "trusted.t", "user.empty", "system.posix_acl_access" };
	xinline_listed_once(f, names2, 3);
	/* many small ones: what fits stays in the inode, the rest spills */
	posix_ino_t g = tp_file(&t, t.root, "g", 10, 2);
	for (int i = 0; i < 20; i++) {
		char nm[32];
		snprintf(nm, sizeof (nm), "user.k%02d", i);
		TT_OK(posix_setxattr(fs, g, nm, nm, strlen(nm), 0));
	}
	for (int i = 0; i < 20; i++) {
		char nm[32];
		snprintf(nm, sizeof (nm), "user.k%02d", i);
		xinline_has(g, nm, nm, strlen(nm));
	}
	uint64_t objs2 = count_objects();
	TT_OK(posix_unlink(fs, t.root, "g"));
	posix_forget(fs, g, 1);                     /* its xattr object goes with it */
	TT_OK(posix_fs_sync(fs));
	TT_EQ(count_objects(), objs2 - 2);
	tp_done(&t);
}

/*
 * xattr=dir: new attributes go to the ZAP; one already in the inode stays
 * readable there and moves out when set; back to sa, small ones go to the
 * inode again.
 */
static void
test_xattr_dir(void)
{
	posix_ino_t f = xinline_setup();
	posix_fs_t *fs = t.fs;
	uint64_t objs0 = count_objects();
	TT_OK(posix_setxattr(fs, f, "user.a", "in", 2, 0));
	TT_EQ(count_objects(), objs0);                  /* in the inode */
	posix_fs_opts_t o = t.opts;
	o.pfo_xattr_dir = true;
	posix_fs_set_opts(fs, &o);
	TT_OK(posix_setxattr(fs, f, "user.b", "zap", 3, 0));
	TT_EQ(count_objects(), objs0 + 1);              /* the ZAP, made for it */
	xinline_has(f, "user.a", "in", 2);
	TT_OK(posix_setxattr(fs, f, "user.a", "moved", 5, 0));
	const char *names[] = { "user.a", "user.b" };
	xinline_listed_once(f, names, 2);
	xinline_has(f, "user.a", "moved", 5);
	TT_OK(posix_removexattr(fs, f, "user.a"));
	size_t n;
	TT_EQ(posix_getxattr(fs, f, "user.a", NULL, 0, &n), ENODATA);   /* no copy left */
	/* back to sa */
	posix_fs_set_opts(fs, &t.opts);
	posix_ino_t g = tp_file(&t, t.root, "g", 10, 2);
	uint64_t objs1 = count_objects();
	TT_OK(posix_setxattr(fs, g, "user.c", "x", 1, 0));
	TT_EQ(count_objects(), objs1);
	tp_reopen(&t);
	xinline_has(f, "user.b", "zap", 3);
	xinline_has(g, "user.c", "x", 1);
	tp_done(&t);
}

/* ---- the unlinked set ---- */

static uint64_t
pool_alloc(void)
{
	spa_space_t ss;
	spa_get_space(t.spa, &ss);
	return (ss.ss_alloc);
}

static uint64_t
unlinked_count(void)
{
	uint64_t unl, n;
	TT_OK(zap_lookup_int(t.os, 1, "UNLINKED", &unl));
	TT_OK(zap_count(t.os, unl, &n));
	return (n);
}

static void
test_unlinked(void)
{
	tp_pool(&t, 1, 256 * MiB);
	posix_ino_t f = tp_file(&t, t.root, "big", 16 * MiB, 5);
	TT_OK(posix_setxattr(t.fs, f, "user.v", "v", 1, 0));
	TT_OK(posix_fs_sync(t.fs));
	uint64_t before = pool_alloc();
	TT_OK(posix_unlink(t.fs, t.root, "big"));
	TT_EQ(unlinked_count(), 1);
	posix_attr_t a;
	TT_OK(posix_getattr(t.fs, f, &a));
	TT_EQ(a.pa_nlink, 0);
	tp_check_file(&t, f, 16 * MiB, 5);
	uint64_t n;
	uint8_t b[10] = "0123456789";
	TT_OK(posix_write(t.fs, f, 0, 10, b, NULL, &n));       /* still writable */
	posix_forget(t.fs, f, 1);
	TT_EQ(posix_getattr(t.fs, f, &a), ENOENT);
	TT_EQ(unlinked_count(), 0);
	for (int i = 0; i < 5; i++)
		TT_OK(posix_fs_sync(t.fs));
	TT_CHECK(pool_alloc() + 15 * MiB < before);

	/* a clean close with references left: reclaimed at the next open */
	struct statvfs st0, st1;
	posix_ino_t keep = tp_file(&t, t.root, "keep", 1000, 6);
	posix_ino_t g = tp_file(&t, t.root, "ghost", 8 * MiB, 7);
	TT_OK(posix_statfs(t.fs, &st0));
	TT_OK(posix_unlink(t.fs, t.root, "ghost"));
	TT_EQ(unlinked_count(), 1);
	tp_reopen(&t);
	TT_EQ(unlinked_count(), 0);
	dmu_object_info_t doi;
	TT_EQ(dmu_object_info(t.os, g, &doi), ENOENT);
	tp_check_file(&t, keep, 1000, 6);
	TT_OK(posix_statfs(t.fs, &st1));
	TT_EQ(st1.f_files - st1.f_ffree, st0.f_files - st0.f_ffree - 1);

	/* a crash: synced, then the power goes (no close of anything) */
	g = tp_file(&t, t.root, "ghost2", 4 * MiB, 8);
	TT_OK(posix_unlink(t.fs, t.root, "ghost2"));
	TT_OK(posix_fs_sync(t.fs));
	TT_OK(posix_statfs(t.fs, &st0));
	posix_fs_opts_t o = t.opts;
	o.pfo_readonly = true;          /* so that the close writes nothing */
	posix_fs_set_opts(t.fs, &o);
	posix_fs_close(t.fs);
	t.fs = NULL;
	spa_abandon(t.spa);
	spa_import_opts_t io;
	memset(&io, 0, sizeof (io));
	io.sio_no_cache = true;
	char err[256];
	TT_OK(spa_open_paths(tp_pathv, 1, &io, &t.spa, err, sizeof (err)));
	TT_OK(spa_objset_open(t.spa, "fs", &t.os));
	tp_open_fs(&t);
	TT_EQ(unlinked_count(), 0);
	TT_EQ(dmu_object_info(t.os, g, &doi), ENOENT);
	TT_OK(posix_statfs(t.fs, &st1));        /* counters recounted by a walk */
	TT_EQ(st1.f_files - st1.f_ffree, st0.f_files - st0.f_ffree - 1);
	tp_check_file(&t, keep, 1000, 6);
	tp_done(&t);
}

/* ---- O_TMPFILE ---- */

static void
test_tmpfile(void)
{
	tp_pool(&t, 1, 256 * MiB);
	posix_attr_t a, b, c, d, root0, root1;
	uint64_t n;
	uint8_t buf[4096], back[4096];
	memset(buf, 0x5a, sizeof (buf));
	TT_OK(posix_getattr(t.fs, t.root, &root0));
	/* made as a create would make it, but with no name */
	TT_OK(posix_tmpfile(t.fs, t.root, 0666, &tp_user_cred, &a));
	TT_EQ(a.pa_nlink, 0);
	TT_EQ(a.pa_mode, S_IFREG | 0644);
	TT_EQ(a.pa_uid, 1000);
	TT_EQ(unlinked_count(), 1);
	TT_OK(posix_getattr(t.fs, t.root, &root1));
	TT_EQ(root1.pa_size, root0.pa_size);
	TT_OK(posix_write(t.fs, a.pa_ino, 0, sizeof (buf), buf, NULL, &n));
	/* linkat gives it a name: out of the unlinked set, then an ordinary file */
	TT_OK(posix_link(t.fs, a.pa_ino, t.root, "named", &b));
	TT_EQ(b.pa_nlink, 1);
	TT_EQ(unlinked_count(), 0);
	TT_OK(posix_link(t.fs, a.pa_ino, t.root, "named2", &b));
	TT_EQ(b.pa_nlink, 2);
	posix_forget(t.fs, a.pa_ino, 3);
	tp_reopen(&t);
	TT_OK(posix_lookup(t.fs, t.root, "named", &b));
	TT_EQ(b.pa_nlink, 2);
	TT_OK(posix_read(t.fs, b.pa_ino, 0, sizeof (back), back, &n));
	TT_EQ(n, sizeof (back));
	TT_CHECK(memcmp(buf, back, sizeof (buf)) == 0);
	posix_forget(t.fs, b.pa_ino, 1);

	/* never named: freed at its last forget */
	dmu_object_info_t doi;
	TT_OK(posix_tmpfile(t.fs, t.root, 0600, &tp_root_cred, &c));
	TT_OK(posix_write(t.fs, c.pa_ino, 0, sizeof (buf), buf, NULL, &n));
	TT_EQ(unlinked_count(), 1);
	posix_forget(t.fs, c.pa_ino, 1);
	TT_EQ(unlinked_count(), 0);
	TT_EQ(posix_getattr(t.fs, c.pa_ino, &d), ENOENT);
	/* ... or at the next open when still referenced at the close */
	TT_OK(posix_tmpfile(t.fs, t.root, 0600, &tp_root_cred, &c));
	tp_reopen(&t);
	TT_EQ(unlinked_count(), 0);
	TT_EQ(dmu_object_info(t.os, c.pa_ino, &doi), ENOENT);

	/* a file unlinked while open is not linkable, unlike an O_TMPFILE */
	TT_OK(posix_create(t.fs, t.root, "u", S_IFREG | 0644, 0, &tp_root_cred, true, &d));
	TT_OK(posix_unlink(t.fs, t.root, "u"));
	TT_EQ(posix_link(t.fs, d.pa_ino, t.root, "again", &b), ENOENT);
	posix_forget(t.fs, d.pa_ino, 1);
	TT_OK(posix_lookup(t.fs, t.root, "named", &b));
	TT_EQ(posix_tmpfile(t.fs, b.pa_ino, 0600, &tp_root_cred, &c), ENOTDIR);
	posix_forget(t.fs, b.pa_ino, 1);
	posix_fs_opts_t o = t.opts;
	o.pfo_readonly = true;
	posix_fs_set_opts(t.fs, &o);
	TT_EQ(posix_tmpfile(t.fs, t.root, 0600, &tp_root_cred, &c), EROFS);
	o.pfo_readonly = false;
	posix_fs_set_opts(t.fs, &o);
	tp_done(&t);
}

/* ---- persistence of everything ---- */

static void
test_persist(void)
{
	tp_pool(&t, 2, 128 * MiB);
	posix_fs_t *fs = t.fs;
	posix_attr_t d, s, l, fifo, in, x;
	TT_OK(posix_mkdir(fs, t.root, "dir", 0750, &tp_user_cred, &d));
	posix_ino_t small = tp_file(&t, d.pa_ino, "small", 333, 1);
	posix_ino_t large = tp_file(&t, d.pa_ino, "large", 3 * MiB + 17, 2);
	uint64_t n;
	TT_OK(posix_write(fs, large, 1ULL << 33, 5, "sparse", NULL, &n));
	TT_OK(posix_link(fs, small, t.root, "hard", &x));
	TT_OK(posix_symlink(fs, d.pa_ino, "sym", "small", NULL, &s));
	char longt[600];
	memset(longt, 'q', 599);
	longt[599] = '\0';
	TT_OK(posix_symlink(fs, t.root, "longsym", longt, NULL, &l));
	TT_OK(posix_create(fs, t.root, "fifo", S_IFIFO | 0600, 0, &tp_user_cred, true, &fifo));
	memset(&in, 0, sizeof (in));
	in.pa_atime = (struct timespec){ 111, 222 };
	in.pa_mtime = (struct timespec){ 333, 444 };
	TT_OK(posix_setattr(fs, small, &in, POSIX_SET_ATIME | POSIX_SET_MTIME, NULL, &x));
	posix_attr_t before;
	TT_OK(posix_getattr(fs, small, &before));
	uint8_t xv[30000];
	tp_fill(xv, sizeof (xv), 3);
	TT_OK(posix_setxattr(fs, large, "user.big", xv, sizeof (xv), 0));
	TT_OK(posix_setxattr(fs, large, "user.small", xv, 10, 0));
	tp_reopen(&t);
	fs = t.fs;
	tp_reopen(&t);
	fs = t.fs;
	posix_attr_t a;
	TT_OK(posix_lookup(fs, t.root, "dir", &a));
	TT_EQ(a.pa_ino, d.pa_ino);
	TT_EQ(a.pa_mode, S_IFDIR | 0750);
	TT_EQ(a.pa_uid, 1000);
	TT_OK(posix_lookup(fs, d.pa_ino, "small", &a));
	TT_EQ(a.pa_nlink, 2);
	TT_EQ(a.pa_atime.tv_sec, 111);
	TT_EQ(a.pa_atime.tv_nsec, 222);
	TT_EQ(a.pa_mtime.tv_sec, 333);
	TT_EQ(a.pa_mtime.tv_nsec, 444);
	TT_EQ(a.pa_ctime.tv_nsec, before.pa_ctime.tv_nsec);
	TT_EQ(a.pa_crtime.tv_nsec, before.pa_crtime.tv_nsec);
	TT_EQ(a.pa_gen, before.pa_gen);
	tp_check_file(&t, small, 333, 1);
	uint8_t *buf = tarn_alloc(3 * MiB + 17), *rb = tarn_alloc(3 * MiB + 17);
	tp_fill(buf, 3 * MiB + 17, 2);
	TT_OK(posix_read(fs, large, 0, 3 * MiB + 17, rb, &n));
	TT_ASSERT(memcmp(buf, rb, 3 * MiB + 17) == 0);
	TT_OK(posix_read(fs, large, 1ULL << 33, 10, rb, &n));
	TT_EQ(n, 5);
	TT_CHECK(memcmp(rb, "spars", 5) == 0);
	check_range(large, 1ULL << 32, 1000, NULL);
	char lb[700];
	TT_OK(posix_lookup(fs, t.root, "longsym", &a));
	TT_OK(posix_readlink(fs, a.pa_ino, lb, sizeof (lb)));
	TT_CHECK(strcmp(lb, longt) == 0);
	TT_OK(posix_lookup(fs, d.pa_ino, "sym", &a));
	TT_OK(posix_readlink(fs, a.pa_ino, lb, sizeof (lb)));
	TT_CHECK(strcmp(lb, "small") == 0);
	TT_OK(posix_lookup(fs, t.root, "fifo", &a));
	TT_EQ(a.pa_mode, S_IFIFO | 0600);
	size_t xn;
	uint8_t xr[30000];
	TT_OK(posix_getxattr(fs, large, "user.big", xr, sizeof (xr), &xn));
	TT_EQ(xn, sizeof (xv));
	TT_CHECK(memcmp(xr, xv, sizeof (xv)) == 0);
	TT_OK(posix_getattr(fs, t.root, &a));
	TT_EQ(a.pa_nlink, 3);
	TT_EQ(a.pa_size, 2 + 4);
	tarn_free(buf);
	tarn_free(rb);
	tp_done(&t);
}

/* ---- quota and atime ---- */

/* A space hook allowing tq_room bytes, limited by a quota when tq_quota is set. */
static bool tq_quota;
static uint64_t tq_room;
static uint64_t
tq_avail(void *arg, bool *quota)
{
	if (quota != NULL)
		*quota = tq_quota;
	return (tq_room);
}

static uint64_t
tq_used(posix_fs_t *fs)
{
	struct statvfs st;
	TT_OK(posix_statfs(fs, &st));
	return ((st.f_blocks - st.f_bfree) * st.f_frsize);
}

/*
 * Quotas count the space blocks take, as zfs does: a sparse file or zero
 * blocks cost nothing; what was written since the last sync counts at
 * once (a writer waits for the sync that shows what it took when that
 * fills the room); at the quota even an overwrite gets EDQUOT.
 */
/*
 * A full pool: plain writes stop short of the reserve kept for the
 * kernel's cached pages (posix_fs_set_reserve), the gate says so, cached
 * writes still fit in the reserve, posix_extend needs no space, and after
 * a delete the space comes back with no other activity.
 */
static void
test_full_pool(void)
{
	tp_pool(&t, 1, 128 * MiB);
	const uint64_t reserve = 16 * MiB;
	posix_fs_set_reserve(t.fs, reserve);
	uint8_t *buf = tarn_alloc(MiB);
	for (size_t i = 0; i < MiB; i += 8)
		*(uint64_t *)(buf + i) = i * 0x9E3779B97F4A7C15ULL + 7;
	posix_attr_t a, b;
	uint64_t n = 0, off = 0;
	TT_EQ(posix_space_gate(t.fs, true), 0);
	TT_OK(posix_create(t.fs, t.root, "fill", S_IFREG | 0644, 0, NULL, true, &a));
	int e;
	/* until a write right after a sync fails: nothing pending can free room */
	for (int round = 0; round < 100; round++) {
		bool first = true, refused = false;
		while ((e = posix_write(t.fs, a.pa_ino, off, 64 * 1024, buf, NULL, &n)) == 0 &&
		    n == 64 * 1024) {
			off += n;
			first = false;
		}
		off += n;
		TT_EQ(e == 0 ? ENOSPC : e, ENOSPC);
		refused = first;
		TT_OK(posix_fs_sync(t.fs));
		if (refused)
			break;
	}
	TT_CHECK(off > 32 * MiB);
	TT_EQ(posix_space_gate(t.fs, true), ENOSPC);
	TT_EQ(posix_space_gate(t.fs, false), ENOSPC);
	/* what the kernel cached before the gate closed still lands */
	for (int i = 0; i < 8; i++) {
		TT_OK(posix_write_cached(t.fs, a.pa_ino, off, MiB, buf, NULL, &n));
		TT_EQ(n, MiB);
		off += MiB;
	}
	/* a failed write-back's size: no space needed */
	TT_OK(posix_extend(t.fs, a.pa_ino, off + 5 * MiB));
	TT_OK(posix_getattr(t.fs, a.pa_ino, &b));
	TT_EQ(b.pa_size, off + 5 * MiB);
	TT_OK(posix_extend(t.fs, a.pa_ino, 4096));          /* never shrinks */
	TT_OK(posix_getattr(t.fs, a.pa_ino, &b));
	TT_EQ(b.pa_size, off + 5 * MiB);
	TT_OK(posix_fs_sync(t.fs));
	uint8_t *rd = tarn_alloc(MiB);
	TT_OK(posix_read(t.fs, a.pa_ino, off - MiB, MiB, rd, &n));
	TT_CHECK(n == MiB && memcmp(rd, buf, MiB) == 0);
	TT_OK(posix_read(t.fs, a.pa_ino, off, MiB, rd, &n));
	TT_EQ(n, MiB);
	TT_CHECK(rd[0] == 0 && rd[MiB - 1] == 0);        /* the extension is a hole */
	/* delete: the space is back within seconds, nothing else happening */
	uint64_t before = spa_get_avail(t.spa);
	TT_OK(posix_unlink(t.fs, t.root, "fill"));
	posix_forget(t.fs, a.pa_ino, 1);
	uint64_t now = before;
	for (int i = 0; i < 50 && now < before + 64 * MiB; i++) {
		usleep(100 * 1000);
		now = spa_get_avail(t.spa);
	}
	TT_CHECK(now >= before + 64 * MiB);
	TT_EQ(posix_space_gate(t.fs, true), 0);
	TT_OK(posix_create(t.fs, t.root, "again", S_IFREG | 0644, 0, NULL, true, &a));
	TT_OK(posix_write(t.fs, a.pa_ino, 0, MiB, buf, NULL, &n));
	tarn_free(rd);
	tarn_free(buf);
	tp_done(&t);
}

static void
test_quota(void)
{
	tp_pool(&t, 1, 256 * MiB);
	posix_fs_opts_t o = t.opts;
	o.pfo_quota = 8 * MiB;
	posix_fs_set_opts(t.fs, &o);
	uint8_t *buf = tarn_alloc(16 * MiB);
	for (size_t i = 0; i < 6 * MiB; i += 8)
		*(uint64_t *)(buf + i) = i * 0x9E3779B97F4A7C15ULL + 1;
	posix_attr_t a, b;
	uint64_t n;
	TT_OK(posix_create(t.fs, t.root, "q", S_IFREG | 0644, 0, NULL, true, &a));
	TT_OK(posix_write(t.fs, a.pa_ino, 0, 6 * MiB, buf, NULL, &n));
	TT_OK(posix_write(t.fs, a.pa_ino, 6 * MiB, 3 * MiB, buf, NULL, &n));    /* passes by its size */
	TT_OK(posix_fs_sync(t.fs));
	TT_CHECK(tq_used(t.fs) >= 9 * MiB);
	TT_EQ(posix_write(t.fs, a.pa_ino, 9 * MiB, MiB, buf, NULL, &n), EDQUOT);
	TT_EQ(posix_write(t.fs, a.pa_ino, 0, 4096, buf, NULL, &n), EDQUOT);     /* at the quota */
	posix_attr_t in = { .pa_size = 100 * MiB };
	TT_OK(posix_setattr(t.fs, a.pa_ino, &in, POSIX_SET_SIZE, NULL, &b));     /* a hole */
	struct statvfs st;
	TT_OK(posix_statfs(t.fs, &st));
	TT_EQ(st.f_bavail, 0);
	TT_CHECK(tq_used(t.fs) < 10 * MiB);
	TT_OK(posix_unlink(t.fs, t.root, "q"));
	posix_forget(t.fs, a.pa_ino, 1);
	TT_OK(posix_fs_sync(t.fs));
	TT_OK(posix_fs_sync(t.fs));
	TT_CHECK(tq_used(t.fs) < MiB);
	/* a petabyte of hole and 16 MiB of zeros fit in 8 MiB */
	TT_OK(posix_create(t.fs, t.root, "s", S_IFREG | 0644, 0, NULL, true, &a));
	in.pa_size = 1ULL << 50;
	TT_OK(posix_setattr(t.fs, a.pa_ino, &in, POSIX_SET_SIZE, NULL, &b));
	TT_OK(posix_create(t.fs, t.root, "z", S_IFREG | 0644, 0, NULL, true, &a));
	memset(buf + 6 * MiB, 0, 8 * MiB);
	TT_OK(posix_write(t.fs, a.pa_ino, 0, 8 * MiB, buf + 6 * MiB, NULL, &n));
	TT_OK(posix_write(t.fs, a.pa_ino, 8 * MiB, 8 * MiB, buf + 6 * MiB, NULL, &n));
	TT_OK(posix_create(t.fs, t.root, "q2", S_IFREG | 0644, 0, NULL, true, &a));
	TT_OK(posix_write(t.fs, a.pa_ino, 0, 6 * MiB, buf, NULL, &n));
	/* the figures survive a clean reopen */
	TT_OK(posix_fs_sync(t.fs));
	TT_OK(posix_statfs(t.fs, &st));
	tp_reopen(&t);
	struct statvfs st2;
	TT_OK(posix_statfs(t.fs, &st2));
	TT_EQ(st2.f_files - st2.f_ffree, st.f_files - st.f_ffree);
	TT_CHECK(st2.f_blocks - st2.f_bfree == st.f_blocks - st.f_bfree);
	/*
	 * No room in what the space hook allows: EDQUOT when it says a quota
	 * is the limit, ENOSPC when the pool is.
	 */
	o = t.opts;
	o.pfo_quota = 0;
	o.pfo_avail = tq_avail;
	tq_quota = true;
	tq_room = 2 * MiB;
	posix_fs_set_opts(t.fs, &o);
	TT_OK(posix_create(t.fs, t.root, "h", S_IFREG | 0644, 0, NULL, true, &a));
	TT_OK(posix_write(t.fs, a.pa_ino, 0, MiB, buf, NULL, &n));
	tq_room = 0;
	TT_EQ(posix_write(t.fs, a.pa_ino, MiB, 3 * MiB, buf, NULL, &n), EDQUOT);
	tq_quota = false;
	tq_room = 2 * MiB;
	TT_EQ(posix_write(t.fs, a.pa_ino, MiB, 3 * MiB, buf, NULL, &n), ENOSPC);
	tarn_free(buf);
	tp_done(&t);
}

static void
set_atime_mode(posix_atime_mode_t m)
{
	posix_fs_opts_t o = t.opts;
	o.pfo_atime = m;
	posix_fs_set_opts(t.fs, &o);
}

static struct timespec
atime_of(posix_ino_t ino)
{
	posix_attr_t a;
	TT_OK(posix_getattr(t.fs, ino, &a));
	return (a.pa_atime);
}

static bool
ts_eq(struct timespec a, struct timespec b)
{
	return (a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec);
}

static void
test_atime(void)
{
	tp_pool(&t, 1, 256 * MiB);
	posix_ino_t f = tp_file(&t, t.root, "f", 10, 1);
	struct timespec a0 = atime_of(f);
	set_atime_mode(POSIX_ATIME_OFF);
	posix_touch_atime(t.fs, f);
	TT_CHECK(ts_eq(atime_of(f), a0));
	set_atime_mode(POSIX_ATIME_RELATIME);
	posix_touch_atime(t.fs, f);             /* atime <= mtime: updated */
	struct timespec a1 = atime_of(f);
	TT_CHECK(!ts_eq(a1, a0));
	posix_touch_atime(t.fs, f);             /* newer than mtime and ctime: not */
	TT_CHECK(ts_eq(atime_of(f), a1));
	posix_attr_t in = { .pa_atime = { time(NULL) - 2 * 86400, 0 } }, b;
	TT_OK(posix_setattr(t.fs, f, &in, POSIX_SET_ATIME, NULL, &b));
	posix_attr_t in2 = { .pa_ctime = { 1, 0 }, .pa_mtime = { 1, 0 } };
	TT_OK(posix_setattr(t.fs, f, &in2, POSIX_SET_CTIME | POSIX_SET_MTIME, NULL, &b));
	posix_touch_atime(t.fs, f);             /* older than a day: updated */
	TT_CHECK(atime_of(f).tv_sec > time(NULL) - 100);
	set_atime_mode(POSIX_ATIME_ON);
	struct timespec a2 = atime_of(f);
	posix_touch_atime(t.fs, f);
	TT_CHECK(!ts_eq(atime_of(f), a2));
	tp_done(&t);
}

/* The ACL f carries now, compared with want (NULL: none). */
static void
acl_is(posix_ino_t f, const char *name, const uint8_t *want, size_t wlen)
{
	uint8_t buf[256];
	size_t n;
	int e = posix_getxattr(t.fs, f, name, buf, sizeof (buf), &n);
	if (want == NULL) {
		TT_EQ(e, ENODATA);
		return;
	}
	TT_OK(e);
	TT_EQ(n, wlen);
	TT_CHECK(memcmp(buf, want, wlen) == 0);
}

static uint32_t
mode_of(posix_ino_t f)
{
	posix_attr_t a;
	TT_OK(posix_getattr(t.fs, f, &a));
	return (a.pa_mode & 07777);
}

/*
 * POSIX ACLs: values checked, the mode follows the access ACL and the
 * ACL follows chmod, an ACL that says no more than the mode is not kept,
 * new inodes inherit a directory's default ACL (the umask does not
 * apply then), all of it persisted.
 */
static void acls_off(posix_ino_t g, posix_ino_t d);

static void
test_acls(void)
{
	tp_pool(&t, 1, 256 * MiB);
	posix_fs_t *fs = t.fs;
	posix_ino_t f = tp_file(&t, t.root, "f", 10, 1);
	const char *A = "system.posix_acl_access", *D = "system.posix_acl_default";
	/* malformed values */
	uint8_t bad[sizeof (acl_named)];
	TT_EQ(posix_setxattr(fs, f, A, "\2\0\0\0", 4, 0), EINVAL);         /* no entries */
	TT_EQ(posix_setxattr(fs, f, A, acl_named, sizeof (acl_named) - 1, 0), EINVAL);
	memcpy(bad, acl_named, sizeof (bad));
	bad[0] = 1;                                                 /* version */
	TT_EQ(posix_setxattr(fs, f, A, bad, sizeof (bad), 0), EINVAL);
	memcpy(bad, acl_named, sizeof (bad));
	bad[4 + 2] = 8;                                             /* perm > 7 */
	TT_EQ(posix_setxattr(fs, f, A, bad, sizeof (bad), 0), EINVAL);
	memcpy(bad, acl_named, sizeof (bad));
	bad[4 + 3 * 8] = 0x20;                                      /* mask -> 2nd other */
	TT_EQ(posix_setxattr(fs, f, A, bad, sizeof (bad), 0), EINVAL);
	memcpy(bad, acl_named, sizeof (bad));
	memcpy(bad + 4 + 8, acl_named + 4 + 16, 8);                 /* unsorted */
	memcpy(bad + 4 + 16, acl_named + 4 + 8, 8);
	TT_EQ(posix_setxattr(fs, f, A, bad, sizeof (bad), 0), EINVAL);
	TT_EQ(posix_setxattr(fs, f, D, acl_named, sizeof (acl_named), 0), EACCES);
	acl_is(f, A, NULL, 0);
	/* setfacl: the mode shows owner, mask and other */
	TT_OK(posix_setxattr(fs, f, A, acl_named, sizeof (acl_named), 0));
	TT_EQ(mode_of(f), 0640);
	acl_is(f, A, acl_named, sizeof (acl_named));
	/* chmod rewrites owner, mask and other in the ACL */
	posix_attr_t in = { .pa_mode = 0604 }, out;
	TT_OK(posix_setattr(fs, f, &in, POSIX_SET_MODE, &tp_root_cred, &out));
	uint8_t want[sizeof (acl_named)];
	memcpy(want, acl_named, sizeof (want));
	want[4 + 2] = 6;
	want[4 + 3 * 8 + 2] = 0;
	want[4 + 4 * 8 + 2] = 4;
	acl_is(f, A, want, sizeof (want));
	/* an ACL the mode says all of: mode set, nothing kept */
	TT_OK(posix_setxattr(fs, f, A, acl_base, sizeof (acl_base), 0));
	TT_EQ(mode_of(f), 0754);
	acl_is(f, A, NULL, 0);
	/* default ACL: new file and directory */
	posix_attr_t a;
	TT_OK(posix_mkdir(fs, t.root, "d", 0755, &tp_root_cred, &a));
	posix_ino_t d = a.pa_ino;
	TT_OK(posix_setxattr(fs, d, D, acl_named, sizeof (acl_named), 0));
	TT_OK(posix_create(fs, d, "g", S_IFREG | 0666, 0, &tp_root_cred, true, &a));
	posix_ino_t g = a.pa_ino;
	TT_EQ(a.pa_mode & 07777, 0640);             /* masked by the ACL, not by umask 022 */
	acl_is(g, A, acl_named, sizeof (acl_named));
	acl_is(g, D, NULL, 0);
	TT_OK(posix_create(fs, d, "h", S_IFREG | 0600, 0, &tp_root_cred, true, &a));
	memcpy(want, acl_named, sizeof (want));
	want[4 + 3 * 8 + 2] = 0;                    /* mask capped by the group bits 0 */
	acl_is(a.pa_ino, A, want, sizeof (want));
	TT_OK(posix_mkdir(fs, d, "sub", 0777, &tp_root_cred, &a));
	posix_ino_t sub = a.pa_ino;
	TT_EQ(a.pa_mode & 07777, 0640);             /* u::rw- caps the owner too */
	acl_is(sub, D, acl_named, sizeof (acl_named));
	TT_OK(posix_symlink(fs, d, "l", "g", &tp_root_cred, &a));
	acl_is(a.pa_ino, A, NULL, 0);               /* symlinks get none */
	/* without a default ACL the umask applies */
	TT_OK(posix_removexattr(fs, d, D));
	TT_OK(posix_create(fs, d, "u", S_IFREG | 0666, 0, &tp_root_cred, true, &a));
	TT_EQ(a.pa_mode & 07777, 0644);
	acl_is(a.pa_ino, A, NULL, 0);
	/* persisted */
	tp_reopen(&t);
	acl_is(g, A, acl_named, sizeof (acl_named));
	acl_is(sub, D, acl_named, sizeof (acl_named));
	TT_EQ(mode_of(f), 0754);
	/* xattr=off: no ACLs to read (the kernel asks on permission checks) */
	posix_fs_opts_t o = t.opts;
	o.pfo_xattr = false;
	posix_fs_set_opts(t.fs, &o);
	uint8_t buf[64];
	size_t n;
	TT_EQ(posix_getxattr(t.fs, g, A, buf, sizeof (buf), &n), ENODATA);
	TT_EQ(posix_setxattr(t.fs, g, A, acl_named, sizeof (acl_named), 0), EOPNOTSUPP);
	acls_off(g, sub);
	tp_done(&t);
}

/*
 * acltype=off: the ACL names are refused and not listed, a default ACL is
 * not inherited (the umask applies), chmod leaves the stored ACL alone;
 * acltype=posix brings the stored ACLs back.  g has acl_named as its
 * access ACL, directory d that as its default ACL.
 */
static void
acls_off(posix_ino_t g, posix_ino_t d)
{
	const char *A = "system.posix_acl_access", *D = "system.posix_acl_default";
	posix_fs_t *fs = t.fs;
	posix_fs_opts_t o = t.opts;
	o.pfo_acl = false;
	posix_fs_set_opts(fs, &o);
	uint8_t buf[64];
	size_t n;
	TT_EQ(posix_getxattr(fs, g, A, buf, sizeof (buf), &n), EOPNOTSUPP);
	TT_EQ(posix_getxattr(fs, d, D, buf, sizeof (buf), &n), EOPNOTSUPP);
	TT_EQ(posix_setxattr(fs, g, A, acl_base, sizeof (acl_base), 0), EOPNOTSUPP);
	TT_EQ(posix_removexattr(fs, g, A), EOPNOTSUPP);
	TT_OK(posix_setxattr(fs, g, "user.u", "1", 1, 0));
	char list[256];
	TT_OK(posix_listxattr(fs, g, list, sizeof (list), &n));
	TT_CHECK(n == sizeof ("user.u") && strcmp(list, "user.u") == 0);
	posix_attr_t a;
	TT_OK(posix_create(fs, d, "off", S_IFREG | 0666, 0, &tp_root_cred, true, &a));
	TT_EQ(a.pa_mode & 07777, 0644);             /* the umask, not the default ACL */
	posix_ino_t off = a.pa_ino;
	posix_attr_t in = { .pa_mode = 0600 }, out;
	TT_OK(posix_setattr(fs, g, &in, POSIX_SET_MODE, &tp_root_cred, &out));
	/* on again: what was stored is back, untouched by the chmod */
	posix_fs_set_opts(fs, &t.opts);
	acl_is(g, A, acl_named, sizeof (acl_named));
	acl_is(d, D, acl_named, sizeof (acl_named));
	acl_is(off, A, NULL, 0);
	TT_EQ(mode_of(g), 0600);
}

static void
cleanup(void)
{
	tt_tmpdir_cleanup();
}

/* utf8only: names that are not UTF-8 are EILSEQ when made, never stored. */
static void
test_utf8only(void)
{
	static const char *good[] = { "plain", "caf\xc3\xa9", "\xe2\x82\xac",
	    "\xf0\x9f\x98\x80", "\xed\x9f\xbf", "\xf4\x8f\xbf\xbf" };
	static const char *bad[] = { "\xff", "caf\xe9", "\xc3", "\xc0\xaf",
	    "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf8\x88\x80\x80\x80",
	    "a\x80" "b", "\xe2\x82" };
	for (size_t i = 0; i < ARRAY_SIZE(good); i++)
		TT_CHECK(posix_utf8_valid(good[i], strlen(good[i])));
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		TT_CHECK(!posix_utf8_valid(bad[i], strlen(bad[i])));
	tp_pool(&t, 1, 256 * MiB);
	posix_fs_t *fs = t.fs;
	posix_attr_t a, b;
	/* off (the default): any bytes but '/' */
	TT_OK(posix_create(fs, t.root, "latin1-\xe9", S_IFREG | 0644, 0, NULL, true, &a));
	posix_fs_opts_t o = t.opts;
	o.pfo_utf8only = true;
	posix_fs_set_opts(fs, &o);
	TT_EQ(posix_create(fs, t.root, "caf\xe9", S_IFREG | 0644, 0, NULL, true, &b), EILSEQ);
	TT_EQ(posix_mkdir(fs, t.root, "\xff", 0755, NULL, &b), EILSEQ);
	TT_EQ(posix_symlink(fs, t.root, "\xc0\xaf", "target", NULL, &b), EILSEQ);
	TT_EQ(posix_link(fs, a.pa_ino, t.root, "x\x80", &b), EILSEQ);
	TT_EQ(posix_rename(fs, t.root, "latin1-\xe9", t.root, "y\xfe", 0), EILSEQ);
	TT_EQ(posix_lookup(fs, t.root, "caf\xe9", &b), ENOENT);
	TT_OK(posix_create(fs, t.root, "caf\xc3\xa9", S_IFREG | 0644, 0, NULL, true, &b));
	/* an old name stays reachable and can be renamed to a valid one */
	TT_OK(posix_rename(fs, t.root, "latin1-\xe9", t.root, "latin1-\xc3\xa9", 0));
	TT_OK(posix_lookup(fs, t.root, "latin1-\xc3\xa9", &b));
	posix_fs_set_opts(fs, &t.opts);
	tp_done(&t);
}

TT_MAIN(
	{ "utf8only", test_utf8only },
	{ "basic", test_basic },
	{ "small_growth", test_small_growth },
	{ "sparse_seek", test_sparse_seek },
	{ "truncate_punch", test_truncate_punch },
	{ "links", test_links },
	{ "symlinks", test_symlinks },
	{ "rename", test_rename },
	{ "xattrs", test_xattrs },
	{ "xattr_inline", test_xattr_inline },
	{ "xattr_dir", test_xattr_dir },
	{ "acls", test_acls },
	{ "unlinked", test_unlinked },
	{ "tmpfile", test_tmpfile },
	{ "persist", test_persist },
	{ "quota", test_quota },
	{ "full_pool", test_full_pool },
	{ "atime", test_atime },
	{ "cleanup", cleanup },
)
