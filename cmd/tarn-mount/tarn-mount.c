/*
 * tarn-mount.c — mount the file system of a pool on its device files,
 * in the foreground: a developer tool and the driver of the FUSE tests
 * until datasets and tarnd exist.  It opens the pool on the devices
 * given (no cache file), or creates one from a vdev spec (-c); opens or
 * creates the object set "fs" holding a POSIX file system; mounts it;
 * serves until SIGINT/SIGTERM/SIGHUP or until the mount is removed from
 * outside (fusermount3 -u); then unmounts, syncs and closes the pool.
 */
#include "tarn_fuse.h"
#include "spa.h"

#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <unistd.h>

#define TM_OS_NAME "fs"

static const char *tm_prog = "tarn-mount";

static void
usage(FILE *f)
{
	fprintf(f, "usage: %s [-c] [-f] [-n POOL] [-p PIDFILE] [-o OPT,...] MOUNTPOINT DEVICE...\n"
	    "       %s -c ... MOUNTPOINT VDEV-SPEC...   (e.g. raidz2 /tmp/a /tmp/b /tmp/c /tmp/d)\n\n"
	    "  -c          create a new pool (and its file system) on the devices\n"
	    "  -f          with -c: use devices that seem to be in use\n"
	    "  -n POOL     name of the pool to create (default tarnmount)\n"
	    "  -p PIDFILE  write the process id there once mounted (removed at exit)\n"
	    "  -o OPTS     ro, atime=on|off|relatime, recordsize=N[K|M], allow_other,\n"
	    "              noallow_other, nosuid, nodev, noexec, writeback=on|off,\n"
	    "              splice, uring=on|off, poll=US, readaround=on|off (off), timeout=SECONDS,\n"
	    "              threads=N, txg_timeout=MS,\n"
	    "              sync=standard|always|disabled, debug\n\n"
	    "Runs in the foreground until SIGINT/SIGTERM or until unmounted\n"
	    "(fusermount3 -u MOUNTPOINT); then it unmounts, syncs and closes the pool.\n",
	    tm_prog, tm_prog);
}

typedef struct tm_cfg {
	bool              tc_create, tc_force;
	const char       *tc_pool;
	const char       *tc_pidfile;
	const char       *tc_mountpoint;
	int               tc_nwords;
	char            **tc_words;
	posix_fs_opts_t   tc_popts;
	tarn_fuse_opts_t  tc_fopts;
	dmu_pool_opts_t   tc_dmu;
} tm_cfg_t;

static int
tm_parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno != 0 || end == s)
		return (EINVAL);
	switch (*end) {
	case 'k': case 'K': v *= KiB; end++; break;
	case 'm': case 'M': v *= MiB; end++; break;
	default: break;
	}
	if (*end != '\0')
		return (EINVAL);
	*out = v;
	return (0);
}

/* One -o word; 0 or EINVAL (with a message). */
static int
tm_opt(tm_cfg_t *c, const char *w)
{
	const char *v = strchr(w, '=');
	size_t kl = v != NULL ? (size_t)(v - w) : strlen(w);
	uint64_t n;
#define KEY(k) (kl == strlen(k) && strncmp(w, k, kl) == 0)
	if (v != NULL)
		v++;
	if (KEY("ro") && v == NULL) {
		c->tc_popts.pfo_readonly = c->tc_fopts.tfo_readonly = true;
	} else if (KEY("rw") && v == NULL) {
		c->tc_popts.pfo_readonly = c->tc_fopts.tfo_readonly = false;
	} else if (KEY("atime") && v != NULL && (strcmp(v, "on") == 0 || strcmp(v, "off") == 0 ||
	    strcmp(v, "relatime") == 0)) {
		c->tc_popts.pfo_atime = strcmp(v, "on") == 0 ? POSIX_ATIME_ON :
		    strcmp(v, "off") == 0 ? POSIX_ATIME_OFF : POSIX_ATIME_RELATIME;
	} else if (KEY("recordsize") && v != NULL && tm_parse_size(v, &n) == 0 &&
	    n >= 512 && n <= 1 * MiB && ISP2(n)) {
		c->tc_popts.pfo_recordsize = (uint32_t)n;
	} else if (KEY("allow_other") && v == NULL) {
		c->tc_fopts.tfo_allow_other = true;
	} else if (KEY("noallow_other") && v == NULL) {
		c->tc_fopts.tfo_allow_other = false;
	} else if (KEY("nosuid") && v == NULL) {
		c->tc_fopts.tfo_nosuid = true;
	} else if (KEY("nodev") && v == NULL) {
		c->tc_fopts.tfo_nodev = true;
	} else if (KEY("noexec") && v == NULL) {
		c->tc_fopts.tfo_noexec = true;
	} else if (KEY("writeback") && v != NULL && (strcmp(v, "on") == 0 ||
	    strcmp(v, "off") == 0)) {
		c->tc_fopts.tfo_writeback = strcmp(v, "on") == 0;
	} else if (KEY("uring") && v != NULL && (strcmp(v, "on") == 0 || strcmp(v, "off") == 0)) {
		c->tc_fopts.tfo_uring = strcmp(v, "on") == 0;
	} else if (KEY("readaround") && v != NULL &&
	    (strcmp(v, "on") == 0 || strcmp(v, "off") == 0)) {
		c->tc_fopts.tfo_readaround = strcmp(v, "on") == 0;
	} else if (KEY("poll") && v != NULL && tm_parse_size(v, &n) == 0 && n <= 1000000) {
		c->tc_fopts.tfo_poll_us = (unsigned)n;
	} else if (KEY("splice") && v == NULL) {
		c->tc_fopts.tfo_splice = true;
	} else if (KEY("timeout") && v != NULL && tm_parse_size(v, &n) == 0) {
		c->tc_fopts.tfo_entry_timeout = c->tc_fopts.tfo_attr_timeout = (double)n;
	} else if (KEY("threads") && v != NULL && tm_parse_size(v, &n) == 0 && n >= 1 &&
	    n <= 256) {
		c->tc_fopts.tfo_max_threads = (unsigned)n;
	} else if (KEY("sync") && v != NULL && (strcmp(v, "standard") == 0 ||
	    strcmp(v, "always") == 0 || strcmp(v, "disabled") == 0)) {
		c->tc_popts.pfo_sync = strcmp(v, "always") == 0 ? POSIX_SYNC_ALWAYS :
		    strcmp(v, "disabled") == 0 ? POSIX_SYNC_DISABLED : POSIX_SYNC_STANDARD;
		if (c->tc_popts.pfo_sync == POSIX_SYNC_ALWAYS)
			c->tc_fopts.tfo_writeback = false;
	} else if (KEY("txg_timeout") && v != NULL && tm_parse_size(v, &n) == 0 && n >= 1) {
		c->tc_dmu.dpo_txg_timeout_ms = n;
	} else if (KEY("debug") && v == NULL) {
		c->tc_fopts.tfo_debug = true;
	} else {
		fprintf(stderr, "%s: invalid option '%s'; see '%s -h'\n", tm_prog, w, tm_prog);
		return (EINVAL);
	}
#undef KEY
	return (0);
}

static int
tm_opts(tm_cfg_t *c, const char *arg)
{
	char *dup = tarn_strdup(arg), *save = NULL;
	int e = 0;
	for (char *w = strtok_r(dup, ",", &save); w != NULL && e == 0;
	    w = strtok_r(NULL, ",", &save))
		e = tm_opt(c, w);
	tarn_free(dup);
	return (e);
}

/* 0, or an exit status (2: usage). */
static int
tm_parse(tm_cfg_t *c, int argc, char **argv)
{
	int ch;
	memset(c, 0, sizeof (*c));
	c->tc_pool = "tarnmount";
	posix_fs_opts_default(&c->tc_popts);
	tarn_fuse_opts_init(&c->tc_fopts);
	while ((ch = getopt(argc, argv, "+cfhn:o:p:")) != -1) {
		switch (ch) {
		case 'c': c->tc_create = true; break;
		case 'f': c->tc_force = true; break;
		case 'n': c->tc_pool = optarg; break;
		case 'p': c->tc_pidfile = optarg; break;
		case 'o':
			if (tm_opts(c, optarg) != 0)
				return (2);
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return (2);
		}
	}
	if (argc - optind < 2) {
		fprintf(stderr, "%s: missing %s\n", tm_prog, argc - optind < 1 ?
		    "mount point and devices" : "devices");
		usage(stderr);
		return (2);
	}
	c->tc_mountpoint = argv[optind];
	c->tc_words = argv + optind + 1;
	c->tc_nwords = argc - optind - 1;
	return (0);
}

/*
 * Room left for the file system: what the pool can allocate now, less
 * the slop, in data bytes (spa_get_avail).  Frees still deferred do not count (they are not allocatable
 * yet; promising them could make a txg's sync fail for want of space).
 */
static uint64_t
tm_avail(void *arg, bool *quota)
{
	if (quota != NULL)
		*quota = false;         /* no datasets here: the pool is the limit */
	return (spa_get_avail(arg));
}

static int
tm_create_pool(tm_cfg_t *c, spa_t **spap, objset_t **osp)
{
	spa_vdev_spec_t *spec = NULL;
	char err[256] = "";
	int e = spa_vdev_spec_parse(c->tc_nwords, c->tc_words, &spec, err, sizeof (err));
	if (e == 0) {
		spa_create_opts_t o;
		memset(&o, 0, sizeof (o));
		o.sco_no_cache = true;
		o.sco_force = c->tc_force;
		o.sco_dmu = c->tc_dmu;
		e = spa_create(c->tc_pool, spec, &o, spap, err, sizeof (err));
		spa_vdev_spec_free(spec);
	}
	if (e != 0) {
		fprintf(stderr, "%s: cannot create the pool: %s\n", tm_prog, err);
		return (e);
	}
	e = spa_objset_create(*spap, TM_OS_NAME, DMU_OST_ZFS, osp);
	if (e == 0)
		e = posix_fs_create(*osp, 0, 0);
	if (e == 0)
		e = txg_wait_synced(spa_dmu_pool(*spap), 0);
	if (e != 0) {
		fprintf(stderr, "%s: cannot create the file system: %s\n", tm_prog,
		    tarn_strerror(e));
		spa_close(*spap);
		*spap = NULL;
	}
	return (e);
}

static int
tm_open_pool(tm_cfg_t *c, spa_t **spap, objset_t **osp)
{
	char err[256] = "";
	char **paths = tarn_alloc(sizeof (char *) * (size_t)c->tc_nwords);
	for (int i = 0; i < c->tc_nwords; i++) {
		char *rp = realpath(c->tc_words[i], NULL);
		paths[i] = tarn_strdup(rp != NULL ? rp : c->tc_words[i]);
		free(rp);
	}
	spa_import_opts_t o;
	memset(&o, 0, sizeof (o));
	o.sio_no_cache = true;
	o.sio_force = true;
	o.sio_dmu = c->tc_dmu;
	if (c->tc_popts.pfo_readonly)
		o.sio_flags |= SPA_OPEN_READONLY;
	int e = spa_open_paths((const char *const *)paths, c->tc_nwords, &o, spap, err,
	    sizeof (err));
	for (int i = 0; i < c->tc_nwords; i++)
		tarn_free(paths[i]);
	tarn_free(paths);
	if (e != 0) {
		fprintf(stderr, "%s: cannot open the pool: %s\n", tm_prog, err);
		return (e);
	}
	e = spa_objset_open(*spap, TM_OS_NAME, osp);
	if (e == ENOENT && !c->tc_popts.pfo_readonly) {
		e = spa_objset_create(*spap, TM_OS_NAME, DMU_OST_ZFS, osp);
		if (e == 0)
			e = posix_fs_create(*osp, 0, 0);
		if (e == 0)
			e = txg_wait_synced(spa_dmu_pool(*spap), 0);
	}
	if (e != 0) {
		fprintf(stderr, "%s: cannot open the file system: %s\n", tm_prog,
		    tarn_strerror(e));
		spa_close(*spap);
		*spap = NULL;
	}
	return (e);
}

static void
tm_write_pidfile(const char *path)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof (tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (f == NULL || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0 ||
	    rename(tmp, path) != 0)
		fprintf(stderr, "%s: cannot write %s: %s\n", tm_prog, path, strerror(errno));
}

/* Serve until a signal or an outside unmount; then unmount. */
static int
tm_serve(tarn_fuse_t *t, const sigset_t *sigs)
{
	struct timespec tick = { 0, 200 * 1000 * 1000 };
	int sig = 0;
	while (!tarn_fuse_exited(t)) {
		sig = sigtimedwait(sigs, NULL, &tick);
		if (sig > 0)
			break;
	}
	/* a signal means: go now; forcibly if files are still open */
	int e = tarn_fuse_unmount(t, false);
	if (e == EBUSY && sig > 0) {
		fprintf(stderr, "%s: %s is busy; unmounting forcibly\n", tm_prog,
		    tarn_fuse_mountpoint(t));
		e = tarn_fuse_unmount(t, true);
	}
	if (e != 0)
		fprintf(stderr, "%s: cannot unmount: %s\n", tm_prog, strerror(e));
	return (e);
}

int
main(int argc, char **argv)
{
	tm_cfg_t c;
	int rc = tm_parse(&c, argc, argv);
	if (rc != 0)
		return (rc);

	/* signals are taken synchronously by the main thread only */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	spa_t *spa = NULL;
	objset_t *os = NULL;
	int e = c.tc_create ? tm_create_pool(&c, &spa, &os) : tm_open_pool(&c, &spa, &os);
	if (e != 0)
		return (1);
	c.tc_popts.pfo_avail = tm_avail;
	c.tc_popts.pfo_avail_arg = spa;
	c.tc_popts.pfo_zil = spa_objset_zil(spa, os);
	c.tc_popts.pfo_xattr_inline = (spa_features(spa) & SPA_FEATURE_XATTR_INLINE) != 0;
	posix_fs_t *fs = NULL;
	e = posix_fs_open(os, &c.tc_popts, &fs);
	if (e != 0) {
		fprintf(stderr, "%s: cannot open the file system: %s\n", tm_prog,
		    tarn_strerror(e));
		spa_close(spa);
		return (1);
	}
	if (posix_fs_replayed(fs) > 0)
		fprintf(stderr, "%s: replayed %" PRIu64 " intent-log records\n", tm_prog,
		    posix_fs_replayed(fs));
	char fsname[SPA_NAME_MAX + 8];
	snprintf(fsname, sizeof (fsname), "%s/%s", spa_name(spa), TM_OS_NAME);
	c.tc_fopts.tfo_fsname = fsname;
	c.tc_fopts.tfo_atime = c.tc_popts.pfo_atime == POSIX_ATIME_OFF ? TARN_FUSE_NOATIME :
	    c.tc_popts.pfo_atime == POSIX_ATIME_ON ? TARN_FUSE_STRICTATIME : TARN_FUSE_RELATIME;
	tarn_fuse_t *t = NULL;
	e = tarn_fuse_mount(fs, c.tc_mountpoint, &c.tc_fopts, &t);
	if (e != 0) {
		fprintf(stderr, "%s: cannot mount on %s: %s\n", tm_prog, c.tc_mountpoint,
		    strerror(e));
		posix_fs_close(fs);
		spa_close(spa);
		return (1);
	}
	if (c.tc_pidfile != NULL)
		tm_write_pidfile(c.tc_pidfile);
	rc = tm_serve(t, &sigs) != 0 ? 1 : 0;
	if (rc == 0) {
		e = c.tc_popts.pfo_readonly ? 0 : posix_fs_sync(fs);
		if (e != 0) {
			fprintf(stderr, "%s: cannot sync: %s\n", tm_prog, tarn_strerror(e));
			rc = 1;
		}
		posix_fs_close(fs);
		spa_close(spa);
	}
	if (c.tc_pidfile != NULL)
		(void) unlink(c.tc_pidfile);
	return (rc);
}
