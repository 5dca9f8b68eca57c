#!/bin/bash
# fs_snap_full.sh — snapshots on a nearly full pool: a snapshot holding a
# file keeps its space after the file is overwritten, so the overwrite
# runs out of space (ENOSPC at write(2)) while the snapshot still reads
# its old contents; SIGKILL of the daemon while the pool is full: after
# the restart the snapshot and the file system read as acknowledged and a
# scrub is clean; destroying the snapshot on the full pool works (sync
# tasks may use the reserve) and the space comes back, so the overwrite
# then succeeds.
. "$(dirname "$0")/lib.sh"
describe "snapshots on a nearly full pool, with SIGKILL there"
require_daemon_mounts
E2E_CMD_TIMEOUT=120

wait_mounted() {
	local i
	for ((i = 0; i < 150; i++)); do
		mountpoint -q "$1" && return 0
		sleep 0.1
	done
	return 1
}

mkdevs 1 256M
tarn_ok pool create -m "$MNT" sf "${DEV[@]}"
tarn_ok fs set snapdir=visible sf
# a file of ~60% of the pool, then a snapshot that holds it
head -c 150M /dev/urandom >"$E2E_TMP/old"
cp "$E2E_TMP/old" "$MNT/f" && sync -f "$MNT/f" && pass || fail "first copy"
tarn_ok pool sync sf
tarn_ok fs get -Hp -o value available sf
avail0=$(cat "$OUT")
tarn_ok fs snapshot sf@keep
# overwriting it whole needs the same space again: not there
head -c 150M /dev/urandom >"$E2E_TMP/new"
if dd if="$E2E_TMP/new" of="$MNT/f" bs=1M conv=notrunc,fsync status=none 2>"$E2E_TMP/dd.err"; then
	fail "an overwrite of a file a snapshot holds fit twice into the pool"
else
	grep -q "No space left on device" "$E2E_TMP/dd.err" && pass ||
		fail "overwrite failed with: $(cat "$E2E_TMP/dd.err")"
fi
cmp -s "$E2E_TMP/old" "$MNT/.zfs/snapshot/keep/f" && pass || fail "the snapshot changed"
tarn_ok fs get -Hp -o value usedbysnapshots sf
[ "$(cat "$OUT")" -gt $((50 * 1048576)) ] && pass ||
	fail "usedbysnapshots $(cat "$OUT") after the overwrite"
# what the overwrite got to write before ENOSPC is what the file holds now
cp "$MNT/f" "$E2E_TMP/acked"

# SIGKILL of the daemon on the full pool; the restart imports and mounts it
stop_daemon KILL
tarn_ok pool list sf
wait_mounted "$MNT" || fail "not mounted again after SIGKILL"
cmp -s "$E2E_TMP/old" "$MNT/.zfs/snapshot/keep/f" && pass || fail "the snapshot after SIGKILL"
cmp -s "$E2E_TMP/acked" "$MNT/f" && pass || fail "the file after SIGKILL"

# destroy on the full pool works and gives the space back: as much as
# before the snapshot (the file is as large as it was), within 8 MiB
tarn_ok fs destroy sf@keep
for ((i = 0; i < 50; i++)); do
	tarn_ok pool sync sf
	tarn_ok fs get -Hp -o value available sf
	[ "$(cat "$OUT")" -gt $((avail0 - 8 * 1048576)) ] && break
	sleep 0.2
done
[ "$(cat "$OUT")" -gt $((avail0 - 8 * 1048576)) ] && pass ||
	fail "space not back: available $(cat "$OUT"), $avail0 before the snapshot"
# and an overwrite that fits that room succeeds
dd if="$E2E_TMP/new" of="$MNT/f" bs=1M count=40 conv=notrunc,fsync status=none && pass ||
	fail "overwrite after the destroy"
head -c 40M "$E2E_TMP/new" | cmp -s - <(head -c 40M "$MNT/f") && pass ||
	fail "the file after the overwrite"
tarn_ok pool scrub -w sf
tarn_ok pool status sf
out_has "with 0 errors"
out_has "errors: No known data errors"
e2e_done
