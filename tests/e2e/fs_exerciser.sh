#!/bin/bash
# fs_exerciser.sh — random operations through the FUSE mount, checked
# against an in-memory model (tests/e2e/fs_exerciser.py): writes at random
# offsets (holes), reads, truncate, hole punching, fallocate, mmap, rename,
# fsync.  The same seed runs first on a temp dir of the host's own file
# system, as a self-check of the model, then on a raidz1 pool mounted by
# the test's own daemon; the files both runs leave must be equal, and stay
# equal after export and import (read back from the devices); a scrub is
# clean.  The seed is printed; TARN_SEED=S replays, TARN_OPS=N sets the
# number of operations (default 100000; 30000 under a sanitizer build).
#
# Cleanup even on failure: the pool destroyed with -f (unmounts), the
# daemon stopped by its PID, any FUSE mount left under this test's temp
# dir lazily unmounted.
. "$(dirname "$0")/lib.sh"
describe "random operations through the mount against a model"
require_daemon_mounts
export PYTHONDONTWRITEBYTECODE=1
EXPID=""
EX="$E2E_SRC/tests/e2e/fs_exerciser.py"
SEED=${TARN_SEED:-$(( (RANDOM << 15 | RANDOM) + 1 ))}
export TARN_SEED=$SEED
# 100,000 operations take about 50 s through the mount on 2 cores; a
# sanitizer build (tests/run --sanitize sets ASAN_OPTIONS) is slower
[ -n "${ASAN_OPTIONS:-}" ] && export TARN_OPS=${TARN_OPS:-30000}
echo "# seed $SEED (replay with TARN_SEED=$SEED)"

fx_cleanup() {
	local rc=$?
	trap - EXIT
	if [ -n "${EXPID:-}" ]; then
		kill -TERM "$EXPID" 2>/dev/null
		wait "$EXPID" 2>/dev/null
	fi
	(exit $rc)
	e2e_cleanup     # destroys the pool, stops the daemon, unmounts what is left
}
trap fx_cleanup EXIT

# exercise DIR: run the exerciser there (its output shown); pass or fail
exercise() {
	mkdir -p "$1"
	# in the background, so that a signal to this script is handled at once
	timeout -k 5 100 python3 "$EX" "$1" >"$E2E_TMP/ex.out" 2>&1 &
	EXPID=$!
	wait "$EXPID"
	local rc=$?
	EXPID=""
	sed 's/^/  /' "$E2E_TMP/ex.out"
	if [ "$rc" -eq 0 ]; then pass; else
		fail "exerciser in $1 (seed $SEED, rc $rc)"
		return 1
	fi
}

# same_tree DESC: the files on the mount equal the host run's
same_tree() {
	local a b
	a=$(cd "$E2E_TMP/host" && ls)
	b=$(cd "$MNT/ex" && ls)
	if [ "$a" != "$b" ]; then
		fail "$1: names differ: host [$a] tarn [$b]"
		return
	fi
	for f in $a; do
		if ! cmp -s "$E2E_TMP/host/$f" "$MNT/ex/$f"; then
			fail "$1: $f differs from the host run's: $(cmp "$E2E_TMP/host/$f" "$MNT/ex/$f" 2>&1 | head -1)"
			return
		fi
	done
	pass
}

echo "# self-check of the model on the host's file system"
exercise "$E2E_TMP/host" || e2e_done

mkdevs 3 256M
tarn_ok pool create -m "$MNT" tank raidz1 "${DEV[@]}"
mountpoint -q "$MNT" && pass || { fail "pool not mounted at $MNT"; e2e_done; }
echo "# the same seed on a raidz1 pool through the mount"
exercise "$MNT/ex"
same_tree "after the run"

tarn_ok pool export tank
tarn_ok pool import -d "$DEVDIR" tank
mountpoint -q "$MNT" && pass || fail "not mounted after import"
same_tree "after export and import"

tarn_ok pool scrub -w tank
tarn_ok pool status tank
out_has "with 0 errors"
out_has "errors: No known data errors"
e2e_done
