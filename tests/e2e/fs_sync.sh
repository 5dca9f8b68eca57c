#!/bin/bash
# fs_sync.sh — the sync property through the daemon: standard by default
# and inherited; bad values refused; sync=always makes every write durable
# when write(2) returns (no fsync: the daemon is killed with SIGKILL right
# after, and the restarted daemon's mount has the data, replayed from the
# intent log); sync=disabled makes fsync return without committing; the
# pool scrubs clean afterwards.
. "$(dirname "$0")/lib.sh"
describe "the sync property: standard, always, disabled"
require_daemon_mounts

# e2e_cleanup destroys the pool, stops the daemon, unmounts what is left

mkdevs 2 256M
tarn_ok pool create -m "$MNT" tank mirror "${DEV[@]}"
tarn_ok fs get -H -o value,source sync tank
out_is "standard	default"
tarn_err 1 "must be one of .standard \| always \| disabled." fs set sync=sometimes tank
tarn_ok fs create tank/a
tarn_ok fs set sync=always tank
tarn_ok fs get -H -o value,source sync tank/a
out_is "always	inherited from tank"
mountpoint -q "$MNT/a" && pass || fail "tank/a not mounted again after the change"

# sync=always: plain writes (no fsync) survive SIGKILL of the daemon
head -c 3000000 /dev/urandom >"$E2E_TMP/data"
ok dd if="$E2E_TMP/data" of="$MNT/a/f" bs=64k status=none
stop_daemon KILL
for m in $(awk -v t="$E2E_TMP" 'index($2, t) == 1 { print $2 }' /proc/mounts | sort -r); do
	umount -l "$m" 2>/dev/null
done
tarn_ok pool list -H -o name
out_is "tank"
mountpoint -q "$MNT/a" && pass || fail "tank/a not mounted after the restart"
ok cmp "$E2E_TMP/data" "$MNT/a/f"

# sync=disabled: fsync returns without committing anything
tarn_ok fs set sync=disabled tank/a
tarn_ok fs get -H -o value,source sync tank/a
out_is "disabled	local"
ok dd if="$E2E_TMP/data" of="$MNT/a/g" bs=64k conv=fsync status=none
tarn_ok fs inherit sync tank/a
tarn_ok fs get -H -o value sync tank/a
out_is "always"
tarn_ok pool scrub -w tank
tarn_ok pool status tank
out_has "^  scan: scrub repaired 0B in [0-9:]+ with 0 errors on "
e2e_done
