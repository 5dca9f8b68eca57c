#!/bin/bash
# `replace POOL DEVICE SPARE` with a hot spare, as zpool does it: the
# spare goes in beside the device (a spare-N group), is INUSE in the
# spares list, is resilvered, and stays there (across export/import and
# a daemon restart) until a detach: of the spare (it is AVAIL again and
# the group collapses back to the device) or of the device (the spare
# becomes a member for good and leaves the spares list).  A spare in use
# cannot be used again, by this pool or another.  A single-disk
# top-level vdev takes a spare too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/health.bash"
describe "replace with a hot spare: spare-N, INUSE, resilver; detach of either side"
require_engine

make_pool sp mirror 2 128M || e2e_done
SPARE="$DEVDIR/sp/spare0"
SPARE2="$DEVDIR/sp/spare1"
truncate -s 128M "$SPARE" "$SPARE2"
tarn_ok pool add sp spare "$SPARE" "$SPARE2"

# expect_spare_in: status shows the spare beside DEV[1], INUSE, resilvered
expect_spare_in() {
	tarn_ok pool status sp
	out_has "^ state: ONLINE$"
	out_has "^	  mirror-0 +ONLINE +0 +0 +0$"
	out_has "^	    ${DEV[0]} +ONLINE +0 +0 +0$"
	out_has "^	    spare-1 +ONLINE +0 +0 +0$"
	out_has "^	      ${DEV[1]} +ONLINE +0 +0 +0$"
	out_has "^	      $SPARE +ONLINE +0 +0 +0$"
	out_has "^	spares$"
	out_has "^	  $SPARE +INUSE +currently in use$"
	out_has "^	  $SPARE2 +AVAIL *$"
}

# --- the issue's example: replace with the spare
tarn_ok pool replace sp "${DEV[1]}" "$SPARE"
out_is ""
wait_scan sp
expect_spare_in
out_has "^  scan: resilvered [0-9.]+[BKMGT] in [0-9:]+ with 0 errors on "
[ "$HAVE_DATA" -eq 0 ] || out_lacks "resilvered 0B "
tarn_ok pool history sp
out_has " zpool replace sp ${DEV[1]} $SPARE$"
# it stays: a scrub, then another look
tarn_ok pool scrub -w sp
expect_spare_in
out_has "^  scan: scrub repaired 0B in [0-9:]+ with 0 errors on "
out_has "^errors: No known data errors$"
# a spare in use serves nobody else
tarn_err 1 "^cannot replace '${DEV[0]}' with '$SPARE': hot spare '$SPARE' is already in use$" \
	pool replace sp "${DEV[0]}" "$SPARE"
tarn_err 1 "^cannot replace '${DEV[1]}' with '$SPARE2': '${DEV[1]}' already has a hot spare; detach it first$" \
	pool replace sp "${DEV[1]}" "$SPARE2"
truncate -s 128M "$DEVDIR/other0"
tarn_ok pool create -m none other "$DEVDIR/other0"
tarn_err 1 "^cannot add to 'other': '$SPARE' is part of active pool 'sp'; use -f" \
	pool add other spare "$SPARE"
tarn_ok pool destroy other
tarn_err 1 "^cannot create 'other': $SPARE is part of imported pool 'sp'" \
	pool create other "$SPARE"
# export/import and a daemon restart keep it
tarn_ok pool export sp
tarn_ok pool import -d "$DEVDIR/sp" sp
expect_spare_in
if ! in_process; then
	stop_daemon
	expect_spare_in
fi
# the spare holds all the data: only it is left of the mirror (the
# other spare steps in by itself for the missing ${DEV[0]})
tarn_ok pool export sp
mkdir -p "$E2E_TMP/away"
mv "${DEV[0]}" "${DEV[1]}" "$E2E_TMP/away/"
tarn_ok pool import -d "$DEVDIR/sp" sp
wait_scan sp
tarn_ok pool scrub -w sp
tarn_ok pool status sp
out_has "^ state: DEGRADED$"
out_has "^	      $SPARE +ONLINE +0 +0 +0$"
out_has "^	  $SPARE2 +INUSE +currently in use$"
out_has "^  scan: scrub repaired 0B in [0-9:]+ with 0 errors on "
out_has "^errors: No known data errors$"
check_data sp
# back: the device the pool spared by itself gets its spare taken back
# once resilvered; the one replaced by a spare keeps it
tarn_ok pool export sp
mv "$E2E_TMP/away/"* "$DEVDIR/sp/"
tarn_ok pool import -d "$DEVDIR/sp" sp
for ((i = 0; i < 60; i++)); do
	run "$TARN" pool status sp
	grep -Eq "^	  $SPARE2 +AVAIL" "$OUT" && ! grep -q "in progress" "$OUT" && break
	sleep 0.5
done
expect_spare_in
out_lacks "spare-0"

# --- detach the spare: it goes back to the list, spare-1 collapses
tarn_ok pool detach sp "$SPARE"
tarn_ok pool status sp
out_has "^ state: ONLINE$"
out_lacks "spare-"
out_has "^	    ${DEV[1]} +ONLINE +0 +0 +0$"
out_has "^	  $SPARE +AVAIL *$"
tarn_ok pool export sp
tarn_ok pool import -d "$DEVDIR/sp" sp
tarn_ok pool status sp
out_lacks "spare-"
out_has "^	  $SPARE +AVAIL *$"
out_has "^	  $SPARE2 +AVAIL *$"
tarn_ok pool scrub -w sp
tarn_ok pool status sp
out_has "^  scan: scrub repaired 0B in [0-9:]+ with 0 errors on "

# --- again, then detach the device: the spare is a member for good
tarn_ok pool replace -w sp "${DEV[1]}" "$SPARE"
expect_spare_in
tarn_ok pool export sp
tarn_ok pool import -d "$DEVDIR/sp" sp
expect_spare_in
tarn_ok pool detach sp "${DEV[1]}"
tarn_ok pool status sp
out_has "^ state: ONLINE$"
out_lacks "spare-"
out_lacks "${DEV[1]}"
out_has "^	    $SPARE +ONLINE +0 +0 +0$"
out_lacks "^	  $SPARE +(AVAIL|INUSE)"
out_has "^	  $SPARE2 +AVAIL *$"
tarn_ok pool export sp
tarn_ok pool import -d "$DEVDIR/sp" sp
tarn_ok pool status sp
out_has "^	    $SPARE +ONLINE +0 +0 +0$"
out_lacks "${DEV[1]}"
out_lacks "^	  $SPARE +(AVAIL|INUSE)"
tarn_ok pool scrub -w sp
tarn_ok pool status sp
out_has "^  scan: scrub repaired 0B in [0-9:]+ with 0 errors on "
out_has "^errors: No known data errors$"
# the old device left the pool: its labels are gone, it is free to reuse
tarn_ok pool labelclear "${DEV[1]}"
check_data sp
tarn_ok pool destroy sp

# --- a single-disk top-level vdev takes a spare too
mkdevs 2 128M one
tarn_ok pool create -o ashift=9 one "${DEV[0]}"
tarn_ok pool add one spare "${DEV[1]}"
tarn_ok pool replace -w one "${DEV[0]}" "${DEV[1]}"
tarn_ok pool status one
out_has "^	  spare-0 +ONLINE +0 +0 +0$"
out_has "^	  ${DEV[1]} +INUSE +currently in use$"
tarn_ok pool export one
tarn_ok pool import -d "$DEVDIR" one
tarn_ok pool status one
out_has "^	  spare-0 +ONLINE +0 +0 +0$"
tarn_ok pool detach one "${DEV[1]}"
tarn_ok pool status one
out_lacks "spare-"
out_has "^	  ${DEV[0]} +ONLINE +0 +0 +0$"
out_has "^	  ${DEV[1]} +AVAIL *$"
tarn_ok pool scrub -w one
tarn_ok pool status one
out_has "^  scan: scrub repaired 0B in [0-9:]+ with 0 errors on "
tarn_ok pool destroy one
e2e_done
