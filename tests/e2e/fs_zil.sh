#!/bin/bash
# fs_zil.sh — the intent log through the mount: writers rewrite regions of
# existing files with fsync after each; tarn-mount runs with a txg
# timeout of 10 minutes, so only the log can carry those writes; it is
# killed with SIGKILL after a few seconds, twice (the second time the
# pool is imported in between without a mount, which claims the log, one
# side of the mirror is replaced, and the remount sees the new device
# alone); every acknowledged region must read back after the remount,
# which says it replayed records; the pool then scrubs clean.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fs_lib.bash"

describe "fsync'd in-place writes survive SIGKILL through the intent log"
require_fuse
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
trap 'rc=$?; fs_stop_bg; (exit $rc); fs_cleanup' EXIT

mkdevs 2 512M
SLOW="-o txg_timeout=600000"
fs_start -c $SLOW -- mirror "${DEV[@]}" || e2e_done
for w in 1 2; do
	check "file $w laid out" dd if=/dev/zero of="$MNT/f$w" bs=1M count=16 conv=fsync status=none
done
# the layout is a create: make sure it is committed before the crashes
fs_stop
for round in 1 2; do
	fs_start $SLOW -- "${DEV[@]}" || e2e_done
	for w in 1 2; do
		: >"$E2E_TMP/log.$round.$w"
		$PY "$FS_OPS" region-writer "$MNT/f$w" "$E2E_TMP/log.$round.$w" "$round$w" 16 \
		    >>"$E2E_TMP/writers.out" 2>&1 &
		BG+=($!)
	done
	sleep 3
	fs_crash
	fs_stop_bg
	check "round $round: writers acknowledged writes" \
	    test -s "$E2E_TMP/log.$round.1" -a -s "$E2E_TMP/log.$round.2"
	if [ "$round" = 2 ]; then
		# an import claims the log without mounting (-N); no block tree
		# points to the claimed blocks, so it is the resilver's own walk
		# of them that copies them onto a device replacing one side; the
		# mount then has that device alone to replay from
		tarn_ok pool import -N -f -d "$DEVDIR" tarnmount
		truncate -s 512M "$DEVDIR/new1"
		tarn_ok pool replace -w tarnmount "${DEV[1]}" "$DEVDIR/new1"
		tarn_ok pool export tarnmount
		mv "${DEV[0]}" "$E2E_TMP/d0.aside"
		rm -f "${DEV[1]}"
		DEV=("$DEVDIR/new1")
	fi
	: >"$TM_LOG"
	fs_start $SLOW -- "${DEV[@]}" || e2e_done
	check "round $round: the mount replayed the log" grep -q "replayed [0-9]* intent-log records" "$TM_LOG"
	for w in 1 2; do
		check "round $round: file $w's acknowledged regions" \
		    $PY "$FS_OPS" verify-regions "$MNT/f$w" "$E2E_TMP/log.$round.$w"
	done
	fs_stop
done
tarn_ok pool import -f -d "$DEVDIR" tarnmount
tarn_ok pool scrub -w tarnmount
tarn_ok pool status tarnmount
out_has "^  scan: scrub repaired 0B in [0-9:]+ with 0 errors on "
out_has "^errors: No known data errors$"
tarn_ok pool export tarnmount
e2e_done
