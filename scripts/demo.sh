#!/bin/bash
# scripts/demo.sh — a two-minute tour: a raidz1 pool on four sparse files,
# mounted in the temp dir when FUSE is there (/dev/fuse), files copied in,
# its status and list, a dataset with a quota, export, import, destroy.
# Everything lives in one temp dir, including the cache
# file (TARN_CACHEFILE) and the socket of the daemon that the first command
# starts (TARN_SOCKET), so /etc/tarn and /run/tarn are never touched; the
# daemon is stopped at the end.
set -u
cd "$(dirname "$0")/.."
B=${BUILD:-build}
TARN="$B/tarn"

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

# The daemon mounts the pool's file system at -m's directory (FUSE).
MNT="$D/mnt"
if [ -e /dev/fuse ]; then
	MOPT=(-m "$MNT")
else
	MOPT=(-m none)
	echo "(no /dev/fuse here: the pool is made without mounting it)"
fi
if ! step "$TARN" pool create "${MOPT[@]}" demo raidz1 "$D/disk0" "$D/disk1" "$D/disk2" "$D/disk3"; then
	echo "the pool could not be created; stopping here (files left in $D)"
	exit 1
fi
step "$TARN" pool status demo
step "$TARN" pool list
step "$TARN" daemon status

if mountpoint -q "$MNT" 2>/dev/null; then
	echo
	echo "the pool's file system is mounted at $MNT; copying files in:"
	step cp -r lib "$MNT/lib"
	step cp README.md "$MNT/"
	step df -h "$MNT"
	step "$TARN" fs create -o quota=10M demo/small
	step "$TARN" fs mount
	echo
	echo "\$ dd if=/dev/urandom of=$MNT/small/fill bs=1M count=20   # over the 10M quota"
	dd if=/dev/urandom of="$MNT/small/fill" bs=1M count=20 2>&1 | head -n 1
	echo "\$ sleep 6   # USED counts what the last txg sync wrote (one every 5 s)"
	sleep 6
	step "$TARN" fs list -o name,used,avail,quota,mountpoint
else
	echo
	echo "(skipping the file system step: the pool is not mounted here -" \
	    "no /dev/fuse, or the daemon could not mount; see $TARN pool create -m)"
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
echo "== demo done.  The pool is destroyed (its file systems unmounted) and"
echo "   the daemon stopped; to remove its files:  rm -rf $D"
echo "   (had it stopped half-way: $TARN pool destroy -f demo; $TARN daemon stop;"
echo "    fusermount3 -uz $MNT if a mount is left; then rm -rf $D)"
