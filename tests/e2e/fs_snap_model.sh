#!/bin/bash
# fs_snap_model.sh — random file operations and snapshots through the
# mount, checked against a model after every step (tests/e2e/fs_snap_model.py):
# every snapshot's tree under .zfs/snapshot equals the model's copy taken
# when it was made, the live tree equals the model, writes under
# .zfs/snapshot get EROFS.  Then the pool is exported and imported and the
# last check runs again on what the devices hold, and a scrub is clean.
# The seed is printed; TARN_SEED=S replays, TARN_STEPS=N sets the steps.
. "$(dirname "$0")/lib.sh"
describe "files and snapshots against a model, through .zfs/snapshot"
require_daemon_mounts
export PYTHONDONTWRITEBYTECODE=1
PY="$E2E_SRC/tests/e2e/fs_snap_model.py"
SEED=${TARN_SEED:-$(( (RANDOM << 15 | RANDOM) + 1 ))}
export TARN_SEED=$SEED
[ -n "${ASAN_OPTIONS:-}" ] && export TARN_STEPS=${TARN_STEPS:-150}
echo "# seed $SEED (replay with TARN_SEED=$SEED)"

mkdevs 2 256M
tarn_ok pool create -m "$MNT" tank mirror "${DEV[@]}"
tarn_ok fs set snapdir=visible tank
mountpoint -q "$MNT" && pass || { fail "pool not mounted at $MNT"; e2e_done; }
timeout -k 5 110 python3 "$PY" "$MNT" tank "$TARN" >"$E2E_TMP/model.out" 2>&1
rc=$?
sed 's/^/  /' "$E2E_TMP/model.out"
[ "$rc" -eq 0 ] && pass || fail "model run (seed $SEED, rc $rc)"

# what the devices hold: the same snapshots after export and import
tarn_ok fs list -H -o name -t snapshot -r tank
before=$(cat "$OUT")
tarn_ok pool export tank
tarn_ok pool import -d "$DEVDIR" tank
tarn_ok fs list -H -o name -t snapshot -r tank
[ "$(cat "$OUT")" = "$before" ] && pass || fail "snapshots differ after import: $(cat "$OUT")"
tarn_ok pool scrub -w tank
tarn_ok pool status tank
out_has "with 0 errors"
out_has "errors: No known data errors"
e2e_done
