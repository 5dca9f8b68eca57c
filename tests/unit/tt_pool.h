/*
 * tt_pool.h — pools on sparse files for unit tests above the pool layer:
 * make the device files, create a pool from zpool-style words, reopen
 * it, fill buffers with seeded content.  Never uses the cache file.
 * Include after tt.h.
 */
#ifndef TARN_TT_POOL_H
#define TARN_TT_POOL_H

#include <fcntl.h>
#include <unistd.h>
#include "spa.h"

#define TT_POOL_MAXDEV 16

typedef struct tt_pool_devs {
	int  tpd_n;
	char tpd_paths[TT_POOL_MAXDEV][300];
	const char *tpd_pathv[TT_POOL_MAXDEV];
} tt_pool_devs_t;

/* n sparse files of size bytes in tt_tmpdir(): d0, d1, ... (recreated). */
static inline void
tt_pool_files(tt_pool_devs_t *d, int n, uint64_t size)
{
	TT_ASSERT(n > 0 && n <= TT_POOL_MAXDEV);
	d->tpd_n = n;
	for (int i = 0; i < n; i++) {
		snprintf(d->tpd_paths[i], sizeof (d->tpd_paths[i]), "%s/d%d", tt_tmpdir(), i);
		unlink(d->tpd_paths[i]);
		int fd = open(d->tpd_paths[i], O_CREAT | O_RDWR, 0644);
		TT_ASSERT(fd >= 0);
		TT_OK(ftruncate(fd, (off_t)size));
		close(fd);
		d->tpd_pathv[i] = d->tpd_paths[i];
	}
}

static inline void
tt_pool_files_remove(tt_pool_devs_t *d)
{
	for (int i = 0; i < d->tpd_n; i++)
		unlink(d->tpd_paths[i]);
}

/*
 * Create pool `name` on the devices; type is "mirror", "raidz2", ... or
 * NULL for a stripe of single disks.  dpo may be NULL.
 */
static inline spa_t *
tt_pool_create(tt_pool_devs_t *d, const char *name, const char *type,
    const dmu_pool_opts_t *dpo)
{
	char *argv[TT_POOL_MAXDEV + 1], err[256];
	int argc = 0;
	if (type != NULL)
		argv[argc++] = (char *)type;
	for (int i = 0; i < d->tpd_n; i++)
		argv[argc++] = d->tpd_paths[i];
	spa_vdev_spec_t *spec;
	TT_OK(spa_vdev_spec_parse(argc, argv, &spec, err, sizeof (err)));
	spa_create_opts_t o;
	memset(&o, 0, sizeof (o));
	o.sco_no_cache = true;
	if (dpo != NULL)
		o.sco_dmu = *dpo;
	spa_t *spa = NULL;
	int e = spa_create(name, spec, &o, &spa, err, sizeof (err));
	if (e != 0)
		fprintf(stderr, "  create: %s\n", err);
	spa_vdev_spec_free(spec);
	TT_OK(e);
	return (spa);
}

/* Open the pool on the devices again (flags: SPA_OPEN_*; dpo may be NULL). */
static inline spa_t *
tt_pool_reopen(tt_pool_devs_t *d, int flags, const dmu_pool_opts_t *dpo)
{
	spa_import_opts_t o;
	memset(&o, 0, sizeof (o));
	o.sio_no_cache = true;
	o.sio_flags = flags;
	if (dpo != NULL)
		o.sio_dmu = *dpo;
	spa_t *spa = NULL;
	char err[256];
	int e = spa_open_paths(d->tpd_pathv, d->tpd_n, &o, &spa, err, sizeof (err));
	if (e != 0)
		fprintf(stderr, "  open: %s\n", err);
	TT_OK(e);
	return (spa);
}

/* len bytes of content determined by seed. */
static inline void
tt_fill(uint8_t *buf, size_t len, uint64_t seed)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, seed);
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = tarn_rand_u64(&r);
		memcpy(buf + i, &v, MIN(8, len - i));
	}
}

#endif
