/*
 * posix_zil.c — the file system's side of the intent log (lib/zil):
 * which changes are logged, fsync through the log, replay at mount.
 */
#include "posix_impl.h"

void
posix_zil_unlogged(posix_fs_t *fs, dmu_tx_t *tx)
{
	(void) fs;
	(void) tx;
}
