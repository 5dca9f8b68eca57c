#!/bin/bash
# bench/snapdir-read.sh — a file read through .zfs/snapshot against the
# same file read live: a 1 GiB file (random bytes) in a pool of one file
# vdev on disk, mounted by tarnd, snapshot taken with mkdir under
# .zfs/snapshot; each read is cold (the pool exported and imported, so
# the ARC is empty, and the kernel's caches dropped: echo 3 >
# /proc/sys/vm/drop_caches), dd with 1 MiB reads.  Prints both rates and
# snapshot/live per round.  Issue 28 wants the ratio near 1: the two go
# through the same read path (posix_read, the loaned-block reply).
#
# Usage: bench/snapdir-read.sh [--rounds N] [--size MIB] [--dir DIR]   (root)
#   TARN=path/to/tarn (default build/cmd/tarn/tarn); DIR holds the vdev
#   (default /var/tmp: on disk, so that a cold read reads the disk).
# Cleanup on exit and Ctrl-C: the pool destroyed, this script's tarnd
# stopped by its PID, the temp directory removed.
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/lib.bash"
ROUNDS=3
SIZE=1024
DIR=/var/tmp
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) ROUNDS=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--dir) DIR=$2; shift 2 ;;
	*) usage_exit "$0" '^# Cleanup' 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "snapdir-read.sh: run as root (drop_caches, mounts)" >&2; exit 2; }
TARN=${TARN:-$SRC/build/cmd/tarn/tarn}
[ -x "$TARN" ] || { echo "snapdir-read.sh: no tarn at $TARN (build first)" >&2; exit 1; }
T=$(mktemp -d "$DIR/snapdir-read.XXXXXX") || exit 1
export TARN_CACHEFILE="$T/cache/tarn.cache" TARN_RUNDIR="$T/run"
export TARN_SOCKET="$T/run/tarnd.sock" TARN_AUTOMOUNT=1
MNT="$T/m"
POOL=snapbench$$
cleanup() {
	timeout 60 "$TARN" pool destroy -f "$POOL" >/dev/null 2>&1
	[ -s "$TARN_RUNDIR/tarnd.pid" ] && stop_pid "$(head -c 32 "$TARN_RUNDIR/tarnd.pid" | tr -dc 0-9)"
	unmount_mnt
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() { echo "snapdir-read.sh: $*" >&2; exit 1; }
# cold: nothing of the pool cached, in the daemon (ARC) or the kernel
cold() {
	"$TARN" pool export "$POOL" >/dev/null || die "export failed"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	"$TARN" pool import -d "$T" "$POOL" >/dev/null || die "import failed"
	mountpoint -q "$MNT" || die "not mounted again after import"
}
# rate FILE: MiB/s of a cold sequential read of FILE
rate() {
	local s e
	cold
	s=$(date +%s.%N)
	dd if="$1" of=/dev/null bs=1M status=none || die "read of $1 failed"
	e=$(date +%s.%N)
	awk -v n="$SIZE" -v s="$s" -v e="$e" 'BEGIN { print n / (e - s) }'
}

truncate -s $((SIZE * 3 + 512))M "$T/d0"
"$TARN" pool create -m "$MNT" "$POOL" "$T/d0" || die "pool create failed"
mountpoint -q "$MNT" || die "the pool is not mounted at $MNT"
dd if=/dev/urandom of="$MNT/f" bs=1M count="$SIZE" conv=fsync status=none ||
	die "cannot write the file"
mkdir "$MNT/.zfs/snapshot/bench" || die "cannot take a snapshot (mkdir .zfs/snapshot/bench)"
cmp -s "$MNT/f" "$MNT/.zfs/snapshot/bench/f" || die "the snapshot's file differs"
echo "# $SIZE MiB, cold reads, 1 MiB dd; vdev in $DIR; $(uname -r)"
for ((r = 1; r <= ROUNDS; r++)); do
	live=$(rate "$MNT/f")
	snap=$(rate "$MNT/.zfs/snapshot/bench/f")
	awk -v r="$r" -v l="$live" -v s="$snap" 'BEGIN { printf "round %d: live %.1f MiB/s, " \
	    ".zfs/snapshot %.1f MiB/s, ratio %.3f\n", r, l, s, s / l }'
done
