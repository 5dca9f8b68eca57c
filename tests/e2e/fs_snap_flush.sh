#!/bin/bash
# fs_snap_flush.sh — a snapshot holds every write that returned, also
# those of a file still open (the kernel's writeback cache keeps them in
# its page cache until the file is closed or synced): the snapshot syncs
# the mount first, as zfs's snapshot sees every write.
. "$(dirname "$0")/lib.sh"
describe "snapshot holds writes still in the page cache"
require_daemon_mounts
mkdevs 1 256M
tarn_ok pool create -m "$MNT" tank "${DEV[@]}"
tarn_ok fs set snapdir=visible tank
for i in 1 2 3; do
	head -c $((i * 40000)) /dev/urandom >"$E2E_TMP/src$i"
	exec 3>"$MNT/f$i"
	cat "$E2E_TMP/src$i" >&3
	tarn_ok fs snapshot tank@s$i
	exec 3>&-
	cmp -s "$E2E_TMP/src$i" "$MNT/.zfs/snapshot/s$i/f$i" && pass ||
		fail "s$i lacks the write of a file still open"
done
e2e_done
