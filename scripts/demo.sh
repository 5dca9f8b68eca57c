#!/bin/bash
# scripts/demo.sh — a two-minute tour: a raidz1 pool on four sparse files,
# its status and list, data written by tarn-stress (when built), export,
# import, destroy.  Everything lives in one temp dir, including the cache
# file (TARN_CACHEFILE) and the socket of the daemon that the first command
# starts (TARN_SOCKET), so /etc/tarn and /run/tarn are never touched; the
# daemon is stopped at the end.
set -u
cd "$(dirname "$0")/.."
B=${BUILD:-build}
TARN="$B/cmd/tarn/tarn"
STRESS="$B/cmd/tarn-stress/tarn-stress"
[ -x "$STRESS" ] || STRESS="$B/tarn-stress"

if [ ! -x "$TARN" ]; then
	echo "no $TARN: build first (./setup.sh, or meson setup build && ninja -C build)" >&2
	exit 1
fi
D=$(mktemp -d "${TMPDIR:-/tmp}/tarn-demo.XXXXXX")
export TARN_CACHEFILE="$D/tarn.cache"
export TARN_SOCKET="$D/tarnd.sock"
trap '"$TARN" daemon stop >/dev/null 2>&1' EXIT

step() {
	echo
	echo "\$ $*"
	"$@"
	local rc=$?
	[ $rc -ne 0 ] && echo "(exit status $rc)"
	return $rc
}

echo "== Tarn demo in $D (cache file: $TARN_CACHEFILE)"
truncate -s 256M "$D/disk0" "$D/disk1" "$D/disk2" "$D/disk3"
echo "four sparse 256M files: $D/disk0 .. disk3"

if ! step "$TARN" pool create demo raidz1 "$D/disk0" "$D/disk1" "$D/disk2" "$D/disk3"; then
	echo "the pool could not be created; stopping here (files left in $D)"
	exit 1
fi
step "$TARN" pool status demo
step "$TARN" pool list
step "$TARN" daemon status

if [ -x "$STRESS" ] && "$STRESS" --help >"$D/stress-help" 2>&1 &&
	grep -q -- "--pool" "$D/stress-help"; then
	# tarn-stress opens the pool itself: the daemon lets go of it first
	# (and opens it again with the next command)
	"$TARN" daemon stop
	step "$STRESS" --pool demo --seconds 10
	step "$TARN" pool list demo
else
	echo
	echo "(skipping the write step: $STRESS is not built yet or has no --pool option)"
fi

step "$TARN" pool export demo
step "$TARN" pool import -d "$D"
step "$TARN" pool import -d "$D" demo
step "$TARN" pool status -x
step "$TARN" pool destroy demo
step "$TARN" pool list

echo
step "$TARN" daemon stop
echo
echo "== demo done.  The pool is destroyed and the daemon stopped; to remove"
echo "   its files:  rm -rf $D"
