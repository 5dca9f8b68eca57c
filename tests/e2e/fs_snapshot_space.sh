#!/bin/bash
# Snapshot space as zfs reports it, against known writes through a mount
# (tarnd's): written and written@SNAP after a write, usedbysnapshots and a
# snapshot's used after the file is removed, destroy -nv's "would
# reclaim" and what destroy gives back.  Sizes are compared within a
# margin for metadata (64 KiB + 5%).
. "$(dirname "$0")/lib.sh"
describe "snapshot space: written, written@, usedbysnapshots, used, reclaim"
require_daemon_mounts

mkdevs 1 256M
tarn_ok pool create -m "$MNT" tank "${DEV[0]}"
tarn_ok fs create tank/s
mounted() { mountpoint -q "$1"; }
mounted "$MNT/s" && pass || fail "tank/s not mounted"

# near A B: A is B within 64 KiB + 5%
near() {
	local a=$1 b=$2 d
	d=$((a > b ? a - b : b - a))
	[ "$d" -le $((65536 + b / 20)) ]
}
prop() {
	run "$TARN" fs get -Hp -o value "$1" "$2"
	cat "$OUT"
}

M=1048576
ok dd if=/dev/urandom of="$MNT/s/two" bs=1M count=2 conv=fsync status=none
tarn_ok pool sync tank
tarn_ok fs snapshot tank/s@s1
w=$(prop written tank/s)
near "$w" 0 && pass || fail "written right after a snapshot: $w"
ok dd if=/dev/urandom of="$MNT/s/one" bs=1M count=1 conv=fsync status=none
tarn_ok pool sync tank
w=$(prop written tank/s)
near "$w" $M && pass || fail "written after 1M: $w"
wa=$(prop written@s1 tank/s)
[ "$wa" = "$w" ] && pass || fail "written@s1 $wa, written $w"
us=$(prop usedbysnapshots tank/s)
near "$us" 0 && pass || fail "usedbysnapshots with nothing removed: $us"
ok rm "$MNT/s/two"
ok sync
tarn_ok pool sync tank
us=$(prop usedbysnapshots tank/s)
near "$us" $((2 * M)) && pass || fail "usedbysnapshots after removing 2M: $us"
u1=$(prop used tank/s@s1)
near "$u1" $((2 * M)) && pass || fail "used of the snapshot holding 2M: $u1"
r1=$(prop referenced tank/s@s1)
near "$r1" $((2 * M)) && pass || fail "referenced of the snapshot: $r1"
tarn_ok fs destroy -nvp tank/s@s1
rc=$(awk -F'\t' '$1 == "reclaim" { print $2 }' "$OUT")
[ "$rc" = "$u1" ] && pass || fail "destroy -nvp reclaim $rc, used $u1"
tarn_ok pool list -Hp -o alloc tank
a0=$(cat "$OUT")
tarn_ok fs destroy tank/s@s1
tarn_ok pool sync tank
tarn_ok pool list -Hp -o alloc tank
a1=$(cat "$OUT")
near $((a0 - a1)) "$u1" && pass || fail "destroy gave back $((a0 - a1)), snapshot used $u1"
us=$(prop usedbysnapshots tank/s)
[ "$us" = 0 ] && pass || fail "usedbysnapshots without snapshots: $us"
e2e_done
