/*
 * spa_vdev.c — device changes (placeholder until implemented).
 */
#include "spa_impl.h"

int spa_vdev_attach(spa_t *spa, const char *existing, const char *path, bool force,
    char *err, size_t errlen) { snprintf(err, errlen, "not implemented"); return (SET_ERROR(ENOTSUP)); }
int spa_vdev_replace(spa_t *spa, const char *old, const char *path, bool force,
    char *err, size_t errlen) { snprintf(err, errlen, "not implemented"); return (SET_ERROR(ENOTSUP)); }
int spa_vdev_detach(spa_t *spa, const char *path, char *err, size_t errlen) { snprintf(err, errlen, "not implemented"); return (SET_ERROR(ENOTSUP)); }
int spa_vdev_online(spa_t *spa, const char *path, char *err, size_t errlen) { snprintf(err, errlen, "not implemented"); return (SET_ERROR(ENOTSUP)); }
int spa_vdev_offline(spa_t *spa, const char *path, bool temporary, char *err, size_t errlen) { snprintf(err, errlen, "not implemented"); return (SET_ERROR(ENOTSUP)); }
int spa_vdev_clear(spa_t *spa, const char *path, char *err, size_t errlen) { snprintf(err, errlen, "not implemented"); return (SET_ERROR(ENOTSUP)); }
int spa_vdev_add_spares(spa_t *spa, int n, char *const paths[], bool force,
    char *err, size_t errlen) { snprintf(err, errlen, "not implemented"); return (SET_ERROR(ENOTSUP)); }
vdev_t *spa_lookup_leaf(spa_t *spa, const char *name) { return (NULL); }
