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
# every 8th written 4 KiB block: three copies of a metadata block all hit
# is unlikely (and would still be reported, not crash)
f=${DEV[0]}
start=$((4 << 20))
size=$(stat -c %s "$f")
len=$(((size / 262144) * 262144 - (512 << 10) - start))
hit=0
for off in $(od -A d -t x8 -w4096 -j "$start" -N "$len" "$f" |
    awk 'NF > 1 { for (i = 2; i <= NF; i++) if ($i != "0000000000000000") { print $1; next } }' |
    awk 'NR % 8 == 3'); do
	dd if=/dev/urandom of="$f" bs=4096 seek=$((off / 4096)) count=1 conv=notrunc status=none
	hit=$((hit + 1))
done
echo "  overwrote $hit blocks of 4 KiB"
[ "$hit" -gt 0 ] && pass || fail "nothing written on $f"

tarn_ok pool import -d "$DEVDIR/bad" bad
run "$TARN" pool scrub -w bad
[ "$RC" -lt 128 ] && pass || fail "scrub crashed (rc $RC)"
tarn_ok pool status bad
out_has "^  scan: scrub repaired [0-9.]+[BKMGT] in [0-9:]+ with [1-9][0-9]* errors on "
out_has "^errors: [1-9][0-9]* data errors, use '-v' for a list$"
out_has "^status: Some data could not be repaired: blocks were damaged$"
tarn_ok pool status -v bad
out_has "^errors: Permanent errors have been detected in the following files:$"
out_has "^        [^ ]+:<0x[0-9a-f]+> "
tarn_ok pool status -x
out_has "^  pool: bad$"
tarn_ok pool list -H -o name bad     # still imported
out_is "bad"
# the damaged blocks read as EIO, no crash, the rest as written
check_data bad 1
# the error log survives an export and import
tarn_ok pool export bad
tarn_ok pool import -d "$DEVDIR/bad" bad
tarn_ok pool status bad
out_has "^errors: [1-9][0-9]* data errors, use '-v' for a list$"
tarn_ok pool destroy bad
e2e_done
