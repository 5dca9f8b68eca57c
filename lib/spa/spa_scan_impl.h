/*
 * spa_scan_impl.h — what the scan (spa_scan.c) and the error log
 * (spa_errlog.c) tell each other.  Private to those two files.
 */
#ifndef TARN_SPA_SCAN_IMPL_H
#define TARN_SPA_SCAN_IMPL_H

#include "spa_impl.h"

/*
 * The scan walks private, read-only instances of the object sets (opened
 * from the last committed uberblock), which spa_objset_name() does not
 * know: it names them here for the error log while it walks them.
 */
void spa_errlog_alias(spa_t *spa, objset_t *os, const char *name);
void spa_errlog_unalias(spa_t *spa, objset_t *os);
/*
 * A full walk (every block, min_txg 0) begins: from now on every reported
 * block also goes into the walk's own set.  When the walk ends with
 * `finished`, the log becomes that set: blocks read intact since (or
 * freed) drop out.  A walk that does not finish leaves the log as it is.
 */
void spa_errlog_scrub_begin(spa_t *spa);
void spa_errlog_scrub_end(spa_t *spa, bool finished);

/* Free the scan state (called once, from spa_errlog_fini in spa_free). */
void spa_scan_destroy(spa_t *spa);

#endif
