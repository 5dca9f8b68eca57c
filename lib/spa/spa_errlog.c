/*
 * spa_errlog.c — the persistent error log (placeholder until implemented).
 */
#include "spa_impl.h"

void spa_errlog_init(spa_t *spa) { }
int spa_errlog_load(spa_t *spa) { return (0); }
int spa_errlog_sync(spa_t *spa, uint64_t txg) { return (0); }
void spa_errlog_fini(spa_t *spa) { }
void spa_errlog_report(void *spa, objset_t *os, uint64_t obj, uint8_t level, uint64_t blkid,
    int error) { }
int spa_errlog_list(spa_t *spa, spa_errlog_ent_t **ents, int *n) { *ents = NULL; *n = 0; return (0); }
uint64_t spa_errlog_count(spa_t *spa) { return (0); }
