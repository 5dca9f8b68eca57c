#!/bin/bash
# fs_snapdir_race.sh — lookups under .zfs/snapshot never fail while
# other snapshots are taken, renamed and destroyed (by zfs and by
# mkdir/mv/rmdir there) and idle snapshots are closed and opened again
# under the readers (TARN_SNAPDIR_IDLE_MS small): every read of a
# snapshot that exists must succeed (tests/e2e/fs_snapdir_race.py).
# TARN_SEED=S replays the changer's choices (the timing differs),
# TARN_RACE_SECONDS=N sets the time (20 s).
. "$(dirname "$0")/lib.sh"
describe ".zfs/snapshot: lookups of existing snapshots racing snapshot changes and idle release"
require_daemon_mounts
export PYTHONDONTWRITEBYTECODE=1
export TARN_SNAPDIR_IDLE_MS=${TARN_SNAPDIR_IDLE_MS:-40}
PY="$E2E_SRC/tests/e2e/fs_snapdir_race.py"
SECS=${TARN_RACE_SECONDS:-20}
[ -n "${ASAN_OPTIONS:-}" ] && SECS=${TARN_RACE_SECONDS:-10}

mkdevs 1 256M
tarn_ok pool create -m "$MNT" tank "${DEV[@]}"
tarn_ok fs set snapdir=visible tank
mountpoint -q "$MNT" && pass || { fail "pool not mounted at $MNT"; e2e_done; }
mkdir -p "$MNT/d/e"
for k in k0 k1 k2 k3; do
	head -c 70000 /dev/urandom >"$MNT/f-$k"
	head -c 5000 /dev/urandom >"$MNT/d/e/g-$k"
	tarn_ok fs snapshot "tank@$k"
done
timeout -k 5 $((SECS + 60)) python3 "$PY" "$MNT" tank "$TARN" "$SECS" >"$E2E_TMP/race.out" 2>&1
rc=$?
sed 's/^/  /' "$E2E_TMP/race.out"
[ "$rc" -eq 0 ] && pass || fail "lookups under .zfs/snapshot failed (rc $rc)"
# the stable snapshots are still whole
for k in k0 k1 k2 k3; do
	[ -f "$MNT/.zfs/snapshot/$k/f-$k" ] && pass || fail "@$k: f-$k missing"
done
tarn_ok pool destroy -f tank
e2e_done
