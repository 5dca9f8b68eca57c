/*
 * dsl_snap.c — snapshots, clones, rollback, holds and bookmarks.
 * (Placeholder while the engine is written: every call says ENOTSUP.)
 */
#include "dsl_impl.h"

static int
dsl_snap_notyet(char *err, size_t errlen)
{
	if (err != NULL)
		(void) snprintf(err, errlen, "snapshots are not implemented yet");
	return (SET_ERROR(ENOTSUP));
}

int
dsl_snapshot_create(dsl_pool_t *dp, const char *const *names, int n, bool recursive,
    const dsl_prop_setting_t *props, int nprops, char *err, size_t errlen)
{
	return (dsl_snap_notyet(err, errlen));
}

int
dsl_snapshot_list(dsl_pool_t *dp, const char *fs, dsl_snap_info_t **out, int *n,
    char *err, size_t errlen)
{
	*out = NULL;
	*n = 0;
	return (0);
}

int
dsl_snapshot_info(dsl_pool_t *dp, const char *snap, dsl_snap_info_t *out, char *err,
    size_t errlen)
{
	(void) snprintf(err, errlen, "dataset does not exist");
	return (SET_ERROR(ENOENT));
}

int
dsl_snapshot_clones(dsl_pool_t *dp, const char *snap, char *buf, size_t len)
{
	buf[0] = '\0';
	return (0);
}

int
dsl_snapshot_destroy(dsl_pool_t *dp, const char *const *names, int n, int flags,
    uint64_t *reclaim, dsl_name_fn_t visit, void *visit_arg, char *err, size_t errlen)
{
	return (dsl_snap_notyet(err, errlen));
}

int
dsl_snapshot_rename(dsl_pool_t *dp, const char *oldname, const char *newname, bool recursive,
    char *err, size_t errlen)
{
	return (dsl_snap_notyet(err, errlen));
}

int
dsl_dataset_rollback(dsl_pool_t *dp, const char *snap, bool destroy_later, bool destroy_clones,
    dsl_name_fn_t visit, void *visit_arg, char *err, size_t errlen)
{
	return (dsl_snap_notyet(err, errlen));
}

int
dsl_clone_create(dsl_pool_t *dp, const char *snap, const char *fs, bool parents,
    const dsl_prop_setting_t *props, int nprops, char *err, size_t errlen)
{
	return (dsl_snap_notyet(err, errlen));
}

int
dsl_dataset_promote(dsl_pool_t *dp, const char *fs, char *err, size_t errlen)
{
	return (dsl_snap_notyet(err, errlen));
}

int
dsl_dataset_origin(dsl_pool_t *dp, const char *fs, char *buf, size_t len)
{
	buf[0] = '\0';
	return (0);
}

int
dsl_hold(dsl_pool_t *dp, const char *const *snaps, int n, const char *tag, bool recursive,
    char *err, size_t errlen)
{
	return (dsl_snap_notyet(err, errlen));
}

int
dsl_release(dsl_pool_t *dp, const char *const *snaps, int n, const char *tag, bool recursive,
    char *err, size_t errlen)
{
	return (dsl_snap_notyet(err, errlen));
}

int
dsl_holds(dsl_pool_t *dp, const char *snap, dsl_hold_fn_t fn, void *arg, char *err,
    size_t errlen)
{
	return (dsl_snap_notyet(err, errlen));
}

int
dsl_bookmark_create(dsl_pool_t *dp, const char *src, const char *bm, char *err, size_t errlen)
{
	return (dsl_snap_notyet(err, errlen));
}

int
dsl_bookmark_list(dsl_pool_t *dp, const char *fs, dsl_bookmark_info_t **out, int *n,
    char *err, size_t errlen)
{
	*out = NULL;
	*n = 0;
	return (0);
}

int
dsl_bookmark_destroy(dsl_pool_t *dp, const char *bm, char *err, size_t errlen)
{
	return (dsl_snap_notyet(err, errlen));
}

int
dsl_snapshot_objset_open(dsl_pool_t *dp, const char *snap, objset_t **osp, char *err,
    size_t errlen)
{
	return (dsl_snap_notyet(err, errlen));
}

void
dsl_snapshot_objset_close(dsl_pool_t *dp, objset_t *os)
{
}

int
dsl_dataset_written_since(dsl_pool_t *dp, const char *name, const char *snap, uint64_t *out,
    char *err, size_t errlen)
{
	return (dsl_snap_notyet(err, errlen));
}
