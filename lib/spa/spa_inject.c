/*
 * spa_inject.c — `tarn inject` on an imported pool: name a leaf as the
 * pool's other device commands do (path, GUID, last part of the path)
 * and add, list or remove run-time injections on it.  The mechanism is
 * the vdev layer's (vdev_inject.c: what each kind does, the lane model
 * of delays); this file only finds the leaf and keeps the tree still
 * meanwhile (spa_vdev_lock, which every device change holds).
 * Injections live on the leaves of the open tree and are never written:
 * export and destroy clear them first (spa.c), so that nothing of their
 * own (delays, failures) slows or fails the last label writes, and a
 * pool imported again starts without any.
 */
#include "spa_impl.h"

#include <stdarg.h>

static int __attribute__((format(printf, 4, 5)))
spa_inject_fail(int e, char *err, size_t errlen, const char *fmt, ...)
{
	if (err != NULL && errlen > 0) {
		va_list ap;
		va_start(ap, fmt);
		(void) vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return (e);
}

int
spa_inject_add(spa_t *spa, const char *dev, const vdev_inject_spec_t *spec, uint64_t *idp,
    char *err, size_t errlen)
{
	VERIFY0(tarn_mutex_lock(&spa->spa_vdev_lock, SPA_VDEV));
	vdev_t *leaf = spa_vdev_lookup(spa, dev), *top = leaf;
	while (top != NULL && vdev_parent(top) != NULL)
		top = vdev_parent(top);
	int e;
	if (leaf == NULL)
		e = spa_inject_fail(SET_ERROR(ENODEV), err, errlen, "no such device in pool");
	else if (top != spa->spa_root)
		e = spa_inject_fail(SET_ERROR(ENOTSUP), err, errlen,
		    "'%s' is a hot spare that is not in use", dev);
	else if ((e = vdev_inject_add(leaf, spec, idp)) != 0)
		(void) spa_inject_fail(e, err, errlen, "%s", e == EINVAL ?
		    "invalid injection" : "only leaf devices can be injected");
	VERIFY0(tarn_mutex_unlock(&spa->spa_vdev_lock));
	return (e);
}

int
spa_inject_clear(spa_t *spa, uint64_t id)
{
	VERIFY0(tarn_mutex_lock(&spa->spa_vdev_lock, SPA_VDEV));
	int n = spa->spa_root != NULL ? vdev_inject_clear(spa->spa_root, id) : 0;
	VERIFY0(tarn_mutex_unlock(&spa->spa_vdev_lock));
	return (n);
}

void
spa_inject_list(spa_t *spa, vdev_inject_fn_t fn, void *arg)
{
	VERIFY0(tarn_mutex_lock(&spa->spa_vdev_lock, SPA_VDEV));
	if (spa->spa_root != NULL)
		vdev_inject_list(spa->spa_root, fn, arg);
	VERIFY0(tarn_mutex_unlock(&spa->spa_vdev_lock));
}
