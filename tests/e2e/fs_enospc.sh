#!/bin/bash
# fs_enospc.sh — a full pool through the mount: four writers at once
# (write, writev, mmap, and write with no fsync) fill a small pool; each
# must get ENOSPC — at write, or, since the kernel's writeback cache
# writes later, at fsync, msync or close (the last writer: at close, as
# the kernel sends no FLUSH) — never a silent success; tarn-mount stays up, a file
# written before reads back intact, and deleting makes the space usable
# again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fs_lib.bash"

describe "ENOSPC on a full pool through the FUSE mount"
require_fuse
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

mkdevs 1 128M
fs_start -c -- "${DEV[@]}" || e2e_done
head -c 8M /dev/urandom >"$E2E_TMP/keep"
check "a file written before" dd if="$E2E_TMP/keep" of="$MNT/keep" bs=1M conv=fsync status=none

PIDS=()
for how in write writev mmap close; do
	$PY "$FS_OPS" fill "$MNT/fill-$how" "$how" 200 >"$E2E_TMP/fill.$how" 2>&1 &
	PIDS+=($!)
done
for p in "${PIDS[@]}"; do
	wait "$p"
done
for how in write writev mmap close; do
	check "the $how writer got ENOSPC ($(cat "$E2E_TMP/fill.$how"))" \
		grep -q '^ENOSPC at ' "$E2E_TMP/fill.$how"
done
check "tarn-mount is still up" kill -0 "$TM_PID"
check "the earlier file reads back" cmp "$E2E_TMP/keep" "$MNT/keep"
check "a single dd gets ENOSPC too" bash -c "! dd if=/dev/zero of='$MNT/dd' bs=1M count=200 \
	conv=fsync status=none 2>'$E2E_TMP/dd.err'"
check "and says so" grep -q "No space left on device" "$E2E_TMP/dd.err"

check "delete the fillers" rm -f "$MNT"/fill-* "$MNT/dd"
ok=0
for ((i = 0; i < 30; i++)); do
	if dd if=/dev/urandom of="$MNT/again" bs=1M count=32 conv=fsync status=none 2>/dev/null; then
		ok=1
		break
	fi
	rm -f "$MNT/again"
	sleep 0.5
done
check "after deleting, 32 MiB fit again" test $ok -eq 1
check "the earlier file still reads back" cmp "$E2E_TMP/keep" "$MNT/keep"
fs_stop
fs_start -- "${DEV[@]}" || e2e_done
check "after a remount too" cmp "$E2E_TMP/keep" "$MNT/keep"
fs_stop
e2e_done
