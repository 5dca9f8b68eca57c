/*
 * spa_scan.c — scrub and resilver (placeholder until implemented).
 */
#include "spa_impl.h"

void spa_scan_init(spa_t *spa) { }
int spa_scan_load(spa_t *spa) { return (0); }
void spa_scan_start_pool(spa_t *spa) { }
int spa_scan_sync(spa_t *spa, uint64_t txg) { return (0); }
void spa_scan_fini(spa_t *spa) { }
int spa_scan_start(spa_t *spa, spa_scan_func_t func, uint64_t min_txg) { return (SET_ERROR(ENOTSUP)); }
int spa_scan_stop(spa_t *spa) { return (SET_ERROR(ENOENT)); }
int spa_scan_pause(spa_t *spa) { return (SET_ERROR(ENOENT)); }
int spa_scan_wait(spa_t *spa) { return (0); }
void spa_scan_get_stat(spa_t *spa, spa_scan_stat_t *out) { memset(out, 0, sizeof (*out)); }
