#!/bin/bash
# Damage beyond redundancy: on a one-device pool with data, a share of the
# written blocks is overwritten.  Data blocks have one copy and cannot be
# repaired; metadata has two or three (ditto blocks) and survives.  The
# pool imports and stays imported, a scrub ends "with N errors", status
# says "N data errors, use '-v' for a list" and -v lists the damaged
# blocks by object set, object and offset; no crash.  Needs data in the
# pool: `tarn-stress --keep`.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/health.bash"
describe "damage beyond redundancy: errors listed by status -v, pool stays"
require_engine
stress_can_keep || skip "needs 'tarn-stress --keep' to put data blocks in a pool"

make_pool bad stripe 1 64M || e2e_done
tarn_ok pool export bad
# 40 of the written 4 KiB blocks, chosen at random: most of what was
# written is data (a quarter of it live), so live data blocks are hit for
# sure, while all two or three copies of one metadata block (which may
# span many 4 KiB blocks) are not (and would still be reported, not crash)
f=${DEV[0]}
hit=$(corrupt_written "$f" 40)
echo "  overwrote $hit blocks of 4 KiB"
[ "$hit" -gt 0 ] && pass || fail "nothing written on $f"

tarn_ok pool import -d "$DEVDIR/bad" bad
run "$TARN" pool scrub -w bad
[ "$RC" -lt 128 ] && pass || fail "scrub crashed (rc $RC)"
tarn_ok pool status bad
out_has "^  scan: scrub repaired [0-9.]+[BKMGT] in [0-9:]+ with [1-9][0-9]* errors on "
out_has "^errors: [1-9][0-9]* data errors, use '-v' for a list$"
out_has "^status: One or more devices has experienced an error resulting in data$"
tarn_ok pool status -v bad
out_has "^errors: Permanent errors have been detected in the following files:$"
out_has "^        [^ ]+:<0x[0-9a-f]+> "
tarn_ok pool status -x
out_has "^  pool: bad$"
tarn_ok pool list -H -o name bad     # still imported
out_is "bad"
# the damaged blocks read as EIO, no crash, the rest as written
check_data bad 1 " [1-9][0-9]* unreadable, 0 mismatched$"
# the error log survives an export and import
tarn_ok pool export bad
tarn_ok pool import -d "$DEVDIR/bad" bad
tarn_ok pool status bad
out_has "^errors: [1-9][0-9]* data errors, use '-v' for a list$"
tarn_ok pool destroy bad
e2e_done
