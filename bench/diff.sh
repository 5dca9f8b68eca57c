#!/bin/bash
# bench/diff.sh — `zfs diff` for a few changes in a big file system: a
# dataset of N files (1,000 to a directory), a snapshot, 10 files changed
# (appended to, in 10 directories), a second snapshot, then the time of
# `zfs diff fs@s1 fs@s2` and of `zfs diff fs@s1` (against the live file
# system), each run twice (cold: the first after the pool was exported
# and imported; warm: the second).  A diff that walks what changed costs
# the same at 100k files as at 1M; one that walks the tree grows with N.
# For scale, the same steps on the peers when they are installed:
#   zfs-fuse (0.7 has snapshots but no `zfs diff`: said so, and only the
#     snapshot is timed),
#   btrfs on a loop device: read-only snapshots, and `btrfs subvolume
#     find-new SNAP2 GEN1` (the files changed since the first snapshot's
#     generation) as the nearest thing to a diff,
# and `find -newer` over Tarn's mount (what a tree walk costs there).
# Prints one line per figure: "target figure seconds".
#
# Usage: bench/diff.sh [--files N] [--build DIR] [--targets LIST]
#   --files    files in the dataset (default 100000; DIFF_FILES=1000000
#              in the environment does the same for the issue's figure)
#   --build    Tarn's build directory (default build)
#   --targets  comma list from tarn,zfs-fuse,btrfs (default: all; a peer
#              that is not installed is skipped with a note)
# Needs root (FUSE mounts, loop devices).  Installs nothing.  Cleanup on
# exit and on Ctrl-C: pools destroyed, daemons stopped by their PIDs,
# mounts unmounted, loop devices detached, the temp dir removed.
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.bash
. "$SRC/bench/lib.bash"
NFILES=${DIFF_FILES:-100000}
B=$SRC/build
TARGETS=tarn,zfs-fuse,btrfs
usage() {
	usage_exit "$0" '^#   --targets' "$1"
}
while [ $# -gt 0 ]; do
	case "$1" in
	--files) NFILES=$2; shift 2 ;;
	--build) B=$2; shift 2 ;;
	--targets) TARGETS=$2; shift 2 ;;
	-h|--help) usage 0 ;;
	*) echo "unknown option: $1" >&2; usage 2 ;;
	esac
done
[[ "$NFILES" =~ ^[0-9]+$ ]] && [ "$NFILES" -ge 10000 ] ||
	{ echo "diff.sh: --files wants a number >= 10000" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "diff.sh: needs root" >&2; exit 1; }
TARN=$B/cmd/tarn/tarn
ZPOOL=/usr/sbin/zpool           # zfs-fuse's, never a zpool found in PATH
ZFS=/usr/sbin/zfs
ZFSFUSE=/usr/sbin/zfs-fuse
NDIRS=$(((NFILES + 999) / 1000))
DEVSIZE=$((NFILES / 1000 * 12 + 1024))M    # ~12 KiB a file, and room

T=$(mktemp -d /tmp/tarn-benchdiff.XXXXXX) || exit 1
MNT=$T/mnt
mkdir -p "$MNT" "$T/dev"
# a daemon, socket and cache file of our own (never /etc/tarn's)
export TARN_CACHEFILE=$T/tarn.cache TARN_RUNDIR=$T/run TARN_SOCKET=$T/run/tarnd.sock
export TARN_AUTOMOUNT=1
TARN_POOL=""
ZFS_PID=""
ZFS_POOL=""
LOOP=""

tarnd_pid() {
	tr -dc '0-9' <"$TARN_RUNDIR/tarnd.pid" 2>/dev/null
}

cleanup() {
	trap - EXIT INT TERM
	[ -n "$TARN_POOL" ] && timeout 120 "$TARN" pool destroy -f "$TARN_POOL" >/dev/null 2>&1
	local pid
	pid=$(tarnd_pid)
	[ -n "$pid" ] && stop_pid "$pid"
	[ -n "$ZFS_POOL" ] && timeout 120 "$ZPOOL" destroy -f "$ZFS_POOL" >/dev/null 2>&1
	[ -n "$ZFS_PID" ] && stop_pid "$ZFS_PID"
	mountpoint -q "$T/btrfs" 2>/dev/null && umount "$T/btrfs"
	[ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null
	unmount_mnt
	case "$T" in /tmp/tarn-benchdiff.*) rm -rf "$T" ;; esac
}
trap cleanup EXIT
trap 'echo "# interrupted" >&2; exit 130' INT TERM

want() {
	case ",$TARGETS," in *",$1,"*) return 0 ;; esac
	return 1
}

# secs CMD...: run CMD (stdout to $T/out), print the seconds it took
secs() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >"$T/out" 2>"$T/err" || { echo "diff.sh: failed: $* ($(head -c 200 "$T/err"))" >&2; }
	t1=$(date +%s.%N)
	echo "$t0 $t1" | awk '{ printf "%.3f", $2 - $1 }'
}

# fill DIR: NFILES empty files, 1,000 to a directory d0..
fill() {
	python3 - "$1" "$NFILES" <<'EOF'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
	d = os.path.join(root, "d%d" % (i // 1000))
	if i % 1000 == 0:
		os.mkdir(d)
	os.close(os.open(os.path.join(d, "f%d" % (i % 1000)), os.O_CREAT | os.O_WRONLY, 0o644))
EOF
}

# change DIR: append to 10 files in 10 directories
change() {
	local i
	for ((i = 0; i < 10; i++)); do
		echo changed >>"$1/d$((i * NDIRS / 10))/f$((i * 37 % 1000))"
	done
	sync
}

report() {	# report TARGET FIGURE SECONDS
	printf '%-9s %-28s %s\n' "$1" "$2" "$3"
}

bench_tarn() {
	[ -x "$TARN" ] || { echo "# tarn: no $TARN (build first)"; return; }
	[ -e /dev/fuse ] || { echo "# tarn: no /dev/fuse"; return; }
	truncate -s "$DEVSIZE" "$T/dev/tarn0"
	"$TARN" pool create -m "$MNT" benchdiff "$T/dev/tarn0" || return
	TARN_POOL=benchdiff
	local s
	echo "# tarn: $NFILES files in $NDIRS directories"
	fill "$MNT"
	sync
	report tarn snapshot_create "$(secs "$TARN" fs snapshot benchdiff@s1)"
	change "$MNT"
	"$TARN" fs snapshot benchdiff@s2
	"$TARN" pool export benchdiff && "$TARN" pool import -d "$T/dev" benchdiff ||
		{ echo "# tarn: export/import failed" >&2; return; }
	report tarn "diff_snap_cold" "$(secs "$TARN" fs diff benchdiff@s1 benchdiff@s2)"
	report tarn "  (lines)" "$(wc -l <"$T/out")"
	report tarn "diff_snap_warm" "$(secs "$TARN" fs diff benchdiff@s1 benchdiff@s2)"
	report tarn "diff_live" "$(secs "$TARN" fs diff benchdiff@s1)"
	touch -d '1 hour ago' "$T/stamp"
	s=$(secs find "$MNT" -newer "$T/stamp")
	report tarn "find_newer (tree walk)" "$s"
	"$TARN" pool destroy -f benchdiff && TARN_POOL=""
	rm -f "$T/dev/tarn0"
}

bench_zfs_fuse() {
	[ -x "$ZFSFUSE" ] || { echo "# zfs-fuse: not installed (Debian package zfs-fuse)"; return; }
	pgrep -x zfs-fuse >/dev/null &&
		{ echo "# zfs-fuse: another zfs-fuse daemon runs (one a machine): skipped"; return; }
	zfs_daemon || { echo "# zfs-fuse: the daemon did not start"; return; }
	truncate -s "$DEVSIZE" "$T/dev/zfs0"
	"$ZPOOL" create -m "$MNT" zbenchdiff "$T/dev/zfs0" || return
	ZFS_POOL=zbenchdiff
	echo "# zfs-fuse: $NFILES files in $NDIRS directories"
	fill "$MNT"
	sync
	report zfs-fuse snapshot_create "$(secs "$ZFS" snapshot zbenchdiff@s1)"
	change "$MNT"
	"$ZFS" snapshot zbenchdiff@s2
	if "$ZFS" 2>&1 | grep -qw diff; then
		report zfs-fuse diff_snap "$(secs "$ZFS" diff zbenchdiff@s1 zbenchdiff@s2)"
	else
		echo "# zfs-fuse: no 'zfs diff' in this version (0.7 predates it)"
	fi
	report zfs-fuse "find_newer (tree walk)" "$(touch -d '1 hour ago' "$T/stamp";
	    secs find "$MNT" -newer "$T/stamp")"
	# FUSE lets go of files asynchronously: "pool is busy" for a while
	for ((i = 0; i < 20; i++)); do
		"$ZPOOL" destroy -f zbenchdiff >/dev/null 2>&1 && { ZFS_POOL=""; break; }
		sleep 0.5
	done
	stop_pid "$ZFS_PID"
	ZFS_PID=""
	rm -f "$T/dev/zfs0"
}

bench_btrfs() {
	command -v mkfs.btrfs >/dev/null && command -v btrfs >/dev/null ||
		{ echo "# btrfs: not installed (Debian package btrfs-progs)"; return; }
	local b=$T/btrfs gen
	mkdir -p "$b"
	truncate -s "$DEVSIZE" "$T/dev/btrfs0"
	LOOP=$(losetup -f --show "$T/dev/btrfs0") || { LOOP=""; return; }
	mkfs.btrfs -q -f "$LOOP" >/dev/null && mount "$LOOP" "$b" || return
	btrfs subvolume create "$b/fs" >/dev/null || return
	echo "# btrfs: $NFILES files in $NDIRS directories"
	fill "$b/fs"
	sync
	report btrfs snapshot_create "$(secs btrfs subvolume snapshot -r "$b/fs" "$b/s1")"
	change "$b/fs"
	btrfs subvolume snapshot -r "$b/fs" "$b/s2" >/dev/null
	gen=$(btrfs subvolume find-new "$b/s1" 99999999999 | sed -n 's/.*transid marker was \([0-9]*\).*/\1/p')
	report btrfs "find_new (nearest diff)" "$(secs btrfs subvolume find-new "$b/s2" "$gen")"
	report btrfs "  (lines)" "$(grep -c '^inode' "$T/out")"
	umount "$b"
	losetup -d "$LOOP"
	LOOP=""
	rm -f "$T/dev/btrfs0"
}

want tarn && bench_tarn
want zfs-fuse && bench_zfs_fuse
want btrfs && bench_btrfs
exit 0
