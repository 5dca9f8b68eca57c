/*
 * host_fs.c — dataset handles: a command that works on datasets opens
 * the pool of the dataset through the registry (host_pool_open) and lib/dsl
 * on it, with the mount table's hooks attached (host_mount_attach) so
 * that the dsl layer sees which datasets are mounted.
 */
#include "host_impl.h"

/* A new file system's object set gets the POSIX layout. */
int
host_fs_init(void *arg, objset_t *os)
{
	return (posix_fs_create(os, 0, 0));
}

int
host_fs_open(const char *verb, const char *name, bool readonly, host_fs_t *fs)
{
	char pool[SPA_NAME_MAX + 1], err[512];
	size_t n = strcspn(name, "/@#");
	memset(fs, 0, sizeof (*fs));
	if (n == 0 || n > SPA_NAME_MAX) {
		(void) host_report(verb, name, EINVAL, "dataset does not exist");
		return (HOST_FAILED);
	}
	memcpy(pool, name, n);
	pool[n] = '\0';
	int e = host_pool_open(pool, readonly ? SPA_OPEN_READONLY : 0, &fs->hf_spa, err,
	    sizeof (err));
	if (e == HOST_ENOPOOL) {
		if (strcmp(verb, "create") == 0)
			(void) snprintf(err, sizeof (err), "no such pool '%s'", pool);
		else
			(void) snprintf(err, sizeof (err), "dataset does not exist");
	}
	if (e != 0) {
		(void) host_report(strcmp(verb, "create") == 0 ? verb : "open", name, e, err);
		return (HOST_FAILED);
	}
	if (readonly)
		e = dsl_pool_open_reader(fs->hf_spa, &fs->hf_dp);
	else
		e = dsl_pool_open(fs->hf_spa, host_fs_init, NULL, &fs->hf_dp);
	if (e == ENOENT && readonly) {
		/* no root dataset yet: open writable once so that it is made */
		host_pool_close(fs->hf_spa);
		return (host_fs_open(verb, name, false, fs));
	}
	if (e != 0) {
		(void) host_report("open", name, e, e == ENOENT ?
		    "the pool has no datasets yet and is read-only" : NULL);
		host_pool_close(fs->hf_spa);
		fs->hf_spa = NULL;
		return (HOST_FAILED);
	}
	host_mount_attach(fs->hf_dp);
	return (0);
}

void
host_fs_close(host_fs_t *fs)
{
	dsl_pool_close(fs->hf_dp);
	if (fs->hf_spa != NULL)
		host_pool_close(fs->hf_spa);
	memset(fs, 0, sizeof (*fs));
}

/* Open and check that name exists ("cannot open 'x': dataset does not exist"). */
int
host_fs_open_existing(const char *name, bool readonly, host_fs_t *fs)
{
	char err[512];
	memset(fs, 0, sizeof (*fs));
	if (dsl_name_validate(name, err, sizeof (err)) != 0)
		return (host_report("open", name, EINVAL, err));
	int r = host_fs_open("open", name, readonly, fs);
	if (r != 0)
		return (r);
	if (!dsl_dataset_exists(fs->hf_dp, name)) {
		host_fs_close(fs);
		return (host_report("open", name, ENOENT, "dataset does not exist"));
	}
	return (0);
}
