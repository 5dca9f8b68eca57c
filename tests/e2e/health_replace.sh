#!/bin/bash
# A wiped device: a mirror whose second side was wiped (a new empty file
# at its path) imports DEGRADED with its data intact (a scrub finds no
# error); `replace -w POOL DEVICE` (the same device) resilvers it and the
# pool is ONLINE again, a scrub clean.  A raidz1 device wiped while the
# pool was exported is replaced by a new device instead.  Hot spares:
# `add POOL spare DEV` lists it under "spares" as AVAIL; when a device is
# missing at import the spare stands in for it (INUSE, in a spare-N
# group) and `detach` of the missing device keeps the spare for good.
# attach turns a single device into a mirror and widens it; detach
# narrows it back.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/health.bash"
describe "wiped devices: DEGRADED, replace, resilver, ONLINE; hot spares"
require_engine

# --- the same device, wiped
make_pool wipe mirror 2 64M || e2e_done
tarn_ok pool export wipe
truncate -s 0 "${DEV[1]}" && truncate -s 64M "${DEV[1]}"
tarn_ok pool import -d "$DEVDIR/wipe" wipe
tarn_ok pool status wipe
out_has "^ state: DEGRADED$"
out_has "^status: Devices could not be opened; the pool still works on$"
out_has "^action: Reconnect the missing devices and bring them back with$"
[ "$(dev_state "${DEV[1]}")" = UNAVAIL ] && pass || { fail "wiped side not UNAVAIL"; show_output; }
tarn_ok pool status -x
out_has "^  pool: wipe$"
tarn_ok pool scrub -w wipe          # the data is intact on the other side
tarn_ok pool status wipe
out_has "^  scan: scrub repaired [0-9.]+[BKMGT] in [0-9:]+ with 0 errors on "
out_has "^errors: No known data errors$"
tarn_ok pool replace -w wipe "${DEV[1]}"
tarn_ok pool status wipe
out_has "^ state: ONLINE$"
out_has "^  scan: resilvered [0-9.]+[BKMGT] in [0-9:]+ with 0 errors on "
out_lacks "resilvered 0B "
[ "$(dev_state "${DEV[1]}")" = ONLINE ] && pass || { fail "replaced side not ONLINE"; show_output; }
out_lacks "replacing-"
tarn_ok pool scrub -w wipe
tarn_ok pool status wipe
out_has "^  scan: scrub repaired 0B in [0-9:]+ with 0 errors on "
check_data wipe
tarn_ok pool clear wipe
tarn_ok pool status -x wipe
out_is "pool 'wipe' is healthy"
# the replaced side alone holds the pool: take the other away
tarn_ok pool export wipe
mv "${DEV[0]}" "$E2E_TMP/away"
tarn_ok pool import -d "$DEVDIR/wipe" wipe
tarn_ok pool scrub -w wipe
tarn_ok pool status wipe
out_has "^ state: DEGRADED$"
out_has "with 0 errors on "
out_has "^errors: No known data errors$"
tarn_ok pool destroy wipe
rm -rf "${DEVDIR:?}/wipe"

# --- a new device in the place of a wiped one
make_pool rz raidz1 3 64M || e2e_done
NEWDEV="$DEVDIR/rz/new0"
truncate -s 64M "$NEWDEV"
tarn_ok pool export rz
dd if=/dev/zero of="${DEV[0]}" bs=1M count=64 conv=notrunc status=none
tarn_ok pool import -d "$DEVDIR/rz" rz
tarn_ok pool status rz
out_has "^ state: DEGRADED$"
out_has "^	  raidz1-0 +DEGRADED"
tarn_err 1 "^cannot replace" pool replace rz "${DEV[1]}" "$DEVDIR/rz/nonexistent"
tarn_ok pool replace -w rz "${DEV[0]}" "$NEWDEV"
tarn_ok pool status rz
out_has "^ state: ONLINE$"
out_has "^  scan: resilvered [0-9.]+[BKMGT] in [0-9:]+ with 0 errors on "
[ "$(dev_state "$NEWDEV")" = ONLINE ] && pass || { fail "new device not ONLINE"; show_output; }
out_lacks "^	    ${DEV[0]} "
tarn_ok pool scrub -w rz
tarn_ok pool status rz
out_has "^  scan: scrub repaired 0B in [0-9:]+ with 0 errors on "
tarn_ok pool history rz
out_has " zpool replace -w rz ${DEV[0]} $NEWDEV$"
check_data rz

# --- hot spares: one stands in when a device goes missing
SPARE="$DEVDIR/rz/spare0"
truncate -s 64M "$SPARE"
tarn_err 1 "^cannot add to 'rz': cannot open '$DEVDIR/rz/x'" pool add rz mirror "$DEVDIR/rz/x" "$DEVDIR/rz/y"
tarn_ok pool add rz spare "$SPARE"
tarn_ok pool status rz
out_has "^	spares$"
out_has "^	  $SPARE +AVAIL *$"
tarn_ok pool export rz
mv "${DEV[1]}" "$E2E_TMP/rz1-away"
tarn_ok pool import -d "$DEVDIR/rz" rz
wait_scan rz
tarn_ok pool status rz
out_has "^ state: DEGRADED$"
out_has "^	    spare-[0-9]+ +DEGRADED"
out_has "^	      $SPARE +ONLINE +0 +0 +0$"
out_has "^	  $SPARE +INUSE +currently in use$"
out_has "^  scan: resilvered [0-9.]+[BKMGT] in [0-9:]+ with 0 errors on "
tarn_ok pool scrub -w rz
tarn_ok pool status rz
out_has "^  scan: scrub repaired 0B in [0-9:]+ with 0 errors on "
# detaching the missing device makes the spare a member for good
tarn_ok pool detach rz "${DEV[1]}"
tarn_ok pool status rz
out_has "^ state: ONLINE$"
out_has "^	    $SPARE +ONLINE"
out_lacks "^	spares$"
tarn_ok pool destroy rz
rm -rf "${DEVDIR:?}/rz"

# --- attach: a single device becomes a mirror, a mirror widens; detach
make_pool one stripe 1 64M || e2e_done
A2="$DEVDIR/one/second"
A3="$DEVDIR/one/third"
truncate -s 64M "$A2" "$A3"
tarn_ok pool attach -w one "${DEV[0]}" "$A2"
tarn_ok pool status one
out_has "^	  mirror-0 +ONLINE"
out_has "^	    $A2 +ONLINE"
out_has "^  scan: resilvered [0-9.]+[BKMGT] in [0-9:]+ with 0 errors on "
tarn_ok pool attach -w one "$A2" "$A3"
tarn_ok pool status one
out_has "^	    $A3 +ONLINE"
tarn_err 1 "^cannot attach '$A3' to " pool attach one "${DEV[0]}" "$A3"
tarn_ok pool detach one "${DEV[0]}"
tarn_ok pool detach one "$A2"
tarn_ok pool status one
out_lacks "mirror-0"
out_has "^	  $A3 +ONLINE"
tarn_err 1 "^cannot detach '$A3': " pool detach one "$A3"
tarn_ok pool scrub -w one
tarn_ok pool status one
out_has "^  scan: scrub repaired 0B in [0-9:]+ with 0 errors on "
tarn_ok pool destroy one
e2e_done
