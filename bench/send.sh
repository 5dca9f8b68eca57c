#!/bin/bash
# bench/send.sh — issue 29's send/receive figures, the same steps on Tarn
# (through tarnd: its cache file, socket and run directory in this
# script's temp dir), on zfs-fuse (Debian's 0.7) with two settings, and
# on btrfs on loop devices.  Each target gets a source and a destination
# (two pools in one daemon; btrfs: two file systems), each on its own
# file(s) on one tmpfs, made afresh for each part and removed after it.
#
# Targets:
#   tarn         Tarn, its default cache (1 GiB of clean blocks a pool)
#   zfs-tuned    zfs-fuse with max-arc-size = 1024 MB (Tarn's cache) and
#                prefetch on: /etc/zfs/zfsrc is rewritten for the moment
#                the daemon starts and put back at once (and at exit)
#   zfs-default  zfs-fuse with Debian's /etc/zfs/zfsrc (max-arc-size 100,
#                zfs-prefetch-disable)
#   btrfs        btrfs on loop devices: `subvolume snapshot -r`, then
#                `btrfs send [-p PARENT]` and `btrfs receive` into the
#                second file system
#
# Parts, each on fresh pools / file systems:
#   1. a data set of LARGE in files of FILESIZE (random bytes) and SMALL
#      in 4 KiB files (1,000 to a directory), written by one python loop
#      and synced: the write rate (ending with the snapshot @a, which
#      waits for the transaction to commit); then, cold each time (Tarn
#      and zfs-fuse export and import both pools; every target drops the
#      kernel's caches): the read rate (tar of the large files, then of
#      the small ones, through the mount, into a pipe), `send src@a`
#      into a pipe (counted by wc -c: the stream's size), and `send
#      src@a | receive dst/copy`.  Rates are the data set's bytes over the
#      wall time (MiB/s).  The issue's goals: send >= 80% of the read
#      rate, send | receive >= 70% of the write rate.  The copy is checked
#      (file count and bytes).
#   2. N files of B bytes (1,000 to a directory, written by 2 processes in
#      parallel), snapshot @a, a full send | receive into the destination
#      (the replica), 10 files changed (in 10 directories: see --change),
#      snapshot @b; then `send -i @a src@b` into a pipe, warm (the median
#      of 3), `send -i @a src@b | receive dst/copy` (the replica has @a),
#      and the send again cold (after the receive: an export and import
#      leave Tarn's datasets "modified", see part2).
#      The issue's goal: the incremental send under 1 s.  The replica is
#      checked (a changed file's contents).
#   3. (Tarn and btrfs; zfs-fuse 0.7 has no -c) a compressed data set:
#      COMP of compressible data (each 4 KiB half random, half zeros) in
#      files of FILESIZE on compression=lz4 (btrfs: mount -o
#      compress=lzo): `send -c` (btrfs: --compressed-data) and plain
#      `send` into a pipe, cold, with their stream sizes, and `send -c |
#      receive`.
#
# Prints one table: rows are figures, columns the targets, then ratios
# oriented so that > 1 means Tarn is better: Tarn/peer for rates (MiB/s,
# files/s), peer/Tarn for times (ms, s).  Rows marked "(x)" are a
# target's own ratio and get no peer ratio; "(i)" rows are information
# (sizes) with no ratio.  When Tarn's send or receive fails (before issue
# 29's engine landed they refused with ENOTSUP) its figures are "n/a" and
# the error is printed under the table; the peers' run regardless.
#
# Usage: bench/send.sh [--large SIZE] [--small SIZE] [--filesize SIZE]
#                      [--files N] [--bytes B] [--comp SIZE] [--parts LIST]
#                      [--layout single|mirror] [--targets LIST] [--build DIR]
#   --large    part 1: bytes in large files (default 1536M)
#   --small    part 1: bytes in 4 KiB files (default 512M: 131,072 files)
#   --filesize the large files' size, parts 1 and 3 (default 64M)
#   --files    part 2: files in the data set (default 100000; 1000000 by
#              hand for the issue's figure)
#   --bytes    part 2: bytes in each file (default 1024)
#   --change   part 2: overwrite (the first bytes of each changed file, in
#              place: default) or append (a line)
#   --comp     part 3: bytes of compressible data (default 512M)
#   --parts    comma list from 1,2,3 (default 1,2,3)
#   --layout   each pool a single file or a mirror of 2 (default single;
#              btrfs: -d/-m raid1 over 2 loop devices)
#   --targets  comma list from tarn,zfs-tuned,zfs-default,btrfs (default:
#              all four; without tarn only the peers run)
#   --build    Tarn's build directory (default build)
# Needs root (tmpfs, loop devices, drop_caches).  zfs-fuse is skipped when
# another zfs-fuse daemon runs (one a machine).  Installs zfs-fuse and
# btrfs-progs with apt-get when missing.  Cleanup on exit and on Ctrl-C,
# even after a failure: Tarn's pools destroyed and its daemon stopped by
# the PID in its PID file, zfs-fuse's pools destroyed and its daemon
# stopped by PID, /etc/zfs/zfsrc put back, mounts unmounted, our loop
# devices detached, the tmpfs unmounted, the temp dir removed.  The
# machine may be shared and noisy: compare figures from one run, not
# across runs.
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.bash
. "$SRC/bench/lib.bash"
LARGE=1536M
SMALL=512M
FILESIZE=64M
NFILES=100000
NBYTES=1024
CHANGE=overwrite
COMP=512M
PARTS=1,2,3
LAYOUT=single
TARGETS=tarn,zfs-tuned,zfs-default,btrfs
B=$SRC/build

usage() {	# usage STATUS
	usage_exit "$0" '^#   --build' "$1"
}
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || case "$1" in -h|--help) ;; *) usage 2 ;; esac
	case "$1" in
	--large) LARGE=$2; shift 2 ;;
	--small) SMALL=$2; shift 2 ;;
	--filesize) FILESIZE=$2; shift 2 ;;
	--files) NFILES=$2; shift 2 ;;
	--bytes) NBYTES=$2; shift 2 ;;
	--change) CHANGE=$2; shift 2 ;;
	--comp) COMP=$2; shift 2 ;;
	--parts) PARTS=$2; shift 2 ;;
	--layout) LAYOUT=$2; shift 2 ;;
	--targets) TARGETS=$2; shift 2 ;;
	--build) B=$2; shift 2 ;;
	-h|--help) usage 0 ;;
	*) echo "unknown option: $1" >&2; usage 2 ;;
	esac
done
die2() { echo "send.sh: $*" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "send.sh: needs root" >&2; exit 1; }
bytes() {	# bytes NAME SIZE: SIZE in bytes, or exit 2
	numfmt --from=iec "$2" 2>/dev/null || die2 "bad --$1 $2"
}
LARGE_B=$(bytes large "$LARGE")
SMALL_B=$(bytes small "$SMALL")
FILE_B=$(bytes filesize "$FILESIZE")
COMP_B=$(bytes comp "$COMP")
[ "$FILE_B" -ge 1048576 ] && [ $((FILE_B % 1048576)) -eq 0 ] ||
	die2 "--filesize wants whole MiB, 1M at least"
[ $((LARGE_B % FILE_B)) -eq 0 ] && [ $((COMP_B % FILE_B)) -eq 0 ] ||
	die2 "--large and --comp want multiples of --filesize"
[ $((SMALL_B % 4096)) -eq 0 ] || die2 "--small wants a multiple of 4K"
[ $((LARGE_B + SMALL_B)) -gt 0 ] || die2 "part 1 wants some data"
[[ "$NFILES" =~ ^[1-9][0-9]{0,7}$ ]] && [ "$NFILES" -ge 1000 ] ||
	die2 "--files wants a number >= 1000"
[[ "$NBYTES" =~ ^[0-9]{1,7}$ ]] || die2 "--bytes wants a number"
[[ "$PARTS" =~ ^[123](,[123])*$ ]] || die2 "--parts wants a list from 1,2,3"
case "$LAYOUT" in single|mirror) ;; *) die2 "--layout wants single or mirror" ;; esac
case "$CHANGE" in overwrite|append) ;; *) die2 "--change wants overwrite or append" ;; esac
DATA_B=$((LARGE_B + SMALL_B))
DATA_M=$((DATA_B / 1048576))
NSMALL=$((SMALL_B / 4096))
TARN=$B/cmd/tarn/tarn
ZPOOL=/usr/sbin/zpool		# zfs-fuse's; never a zpool/zfs found in PATH
ZFS=/usr/sbin/zfs
ZFSFUSE=/usr/sbin/zfs-fuse

# --- packages (only what is missing)
need=()
for p in zfs-fuse btrfs-progs; do
	dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "# installing: ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}" >/dev/null ||
		{ echo "send.sh: apt-get install failed" >&2; exit 1; }
fi
case ",$TARGETS," in
*,tarn,*)
	[ -x "$TARN" ] || { echo "send.sh: no $TARN (build first)" >&2; exit 1; } ;;
esac
[ -e /dev/fuse ] || { echo "send.sh: no /dev/fuse" >&2; exit 1; }

# --- state for cleanup
T=$(mktemp -d /tmp/tarn-benchsend.XXXXXX) || exit 1
TMPFS=$T/tmpfs			# the backing tmpfs
MNT=$T/mnt			# the source's mount
MNT2=$T/mnt2			# the destination's
RES=$T/results			# "target figure value" lines
NOTES=$T/notes			# lines printed under the table
export TARN_CACHEFILE=$T/tarn/cache/tarn.cache
export TARN_RUNDIR=$T/tarn/run
export TARN_SOCKET=$T/tarn/run/tarnd.sock
export TARN_AUTOMOUNT=1
TARN_POOLS=()			# Tarn pools that exist now
ZFS_PID=""			# zfs-fuse daemon
ZFS_POOLS=()			# zfs-fuse pools imported now
LOOPS=()			# loop devices we attached
mkdir -p "$TMPFS" "$MNT" "$MNT2"
: >"$RES"
: >"$NOTES"

zfs_stop() {	# destroy our zfs-fuse pools, stop its daemon
	local p
	for p in "${ZFS_POOLS[@]}"; do
		ZFS_POOL=$p
		zfs_pool_destroy
	done
	ZFS_POOLS=()
	ZFS_POOL=""
	if [ -n "$ZFS_PID" ]; then stop_pid "$ZFS_PID"; ZFS_PID=""; ZFS_STOPPED=1; fi
}

cleanup() {
	trap - EXIT INT TERM
	local p m l
	for p in "${TARN_POOLS[@]}"; do
		timeout 60 "$TARN" pool destroy -f "$p" >/dev/null 2>&1
	done
	TARN_POOLS=()
	[ -x "$TARN" ] && tarn_daemon_stop
	zfsrc_restore
	zfs_stop
	# whatever is left mounted under our temp dir, deepest first
	for m in $(awk -v t="$T/" 'index($2, t) == 1 { print $2 }' /proc/mounts | sort -r); do
		[ "$m" = "$TMPFS" ] && continue
		fusermount3 -uz "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null; done
	LOOPS=()
	mountpoint -q "$TMPFS" && umount "$TMPFS"
	case "$T" in /tmp/tarn-benchsend.*) rm -rf "$T" ;; esac
}
trap cleanup EXIT
trap 'echo "# interrupted" >&2; exit 130' INT TERM

# the devices, sparse on the tmpfs; a pool holds its part's data once
NDEV=1
[ "$LAYOUT" = mirror ] && NDEV=2
DEV1_M=$((DATA_M * 3 / 2 + 1024))
DEV2_M=$((NFILES * (NBYTES + 4096 + 1023) / 1024 / 1024 * 2 + 1024))
DEV3_M=$((COMP_B / 1048576 * 3 / 2 + 1024))
use_m=0
case ",$PARTS," in *,1,*) use_m=$((DATA_M * 3 / 2 + 512)) ;; esac
case ",$PARTS," in *,2,*)
	v=$((NFILES * (NBYTES + 4096 + 1023) / 1024 / 1024 + 512))
	[ "$v" -gt "$use_m" ] && use_m=$v ;;
esac
case ",$PARTS," in *,3,*)
	v=$((COMP_B / 1048576 * 2 + 512))
	[ "$v" -gt "$use_m" ] && use_m=$v ;;
esac
TMPFS_M=$((use_m * 2 * NDEV + 1024))
mount -t tmpfs -o size=${TMPFS_M}m tmpfs "$TMPFS" ||
	{ echo "send.sh: cannot mount a tmpfs" >&2; exit 1; }

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
}
now_ns() { echo "${EPOCHREALTIME/./}000"; }	# bash's clock: no fork
# ms T0 T1: milliseconds between two now_ns, 1 decimal
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1e6 }'; }
# mibs BYTES MS: MiB/s
mibs() { awk -v n="$1" -v t="$2" 'BEGIN { if (t > 0) printf "%.0f", n / 1048576 / (t / 1e3); else print "-" }'; }
# rec TARGET FIGURE VALUE: one result, also shown as it comes
rec() {
	echo "  $2: ${3:--}"
	echo "$1 $2 ${3:--}" >>"$RES"
}
note() { echo "$*" >>"$NOTES"; }

# pipe_ms LEFT RIGHT: run "LEFT | RIGHT" (two shell words, each a command
# line run by bash -c), print its wall time in ms; RIGHT's stdout in
# $T/pipe.out, both stderrs in $T/pipe.err; false when either failed
pipe_ms() {
	local t0 t1 s
	t0=$(now_ns)
	bash -c "$1" 2>"$T/pipe.err" | bash -c "$2" >"$T/pipe.out" 2>>"$T/pipe.err"
	s=("${PIPESTATUS[@]}")
	t1=$(now_ns)
	if [ "${s[0]}" -ne 0 ] || [ "${s[1]}" -ne 0 ]; then
		echo "  failed (${s[0]}, ${s[1]}): $1 | $2: $(head -c 400 "$T/pipe.err")" >&2
		return 1
	fi
	ms "$t0" "$t1"
}

# mkdevs DIR MIB: NDEV fresh sparse device files DIR/d0.. -> DEVS
mkdevs() {
	local i
	rm -rf "$1"
	mkdir -p "$1"
	DEVS=()
	for ((i = 0; i < NDEV; i++)); do
		truncate -s "${2}M" "$1/d$i"
		DEVS+=("$1/d$i")
	done
}
# vspec: the vdev words for DEVS
vspec() {
	if [ "$LAYOUT" = mirror ]; then echo "mirror ${DEVS[*]}"; else echo "${DEVS[*]}"; fi
}

# --- the targets.  Each kind (tarn, zfs, btrfs) has: K_setup MIB [COMP]
# (a fresh source and destination, the source's data at $DATA; COMP: the
# source compressed), K_snap NAME, K_cold (empty caches), K_send LINE
# (prints the command line sending SNAP [from BASE]: K_send SNAP [BASE]
# [-c]), K_recv (the command line receiving into the destination),
# K_copy (the received data's path), K_teardown.  The source is the pool's
# root dataset (btrfs: subvolume fs), the destination DST/copy.

# Tarn: pools "sendsrc" (mounted at $MNT) and "senddst" ($MNT2), one tarnd
tarn_setup() {
	local p
	for p in sendsrc senddst; do
		mkdevs "$TMPFS/$p" "$1"
		local m=$MNT
		[ "$p" = senddst ] && m=$MNT2
		# shellcheck disable=SC2046
		timeout 120 "$TARN" pool create -m "$m" "$p" $(vspec) >"$T/create.out" 2>&1 ||
			{ echo "send.sh: tarn pool create $p failed: $(cat "$T/create.out")" >&2; return 1; }
		TARN_POOLS+=("$p")
	done
	mountpoint -q "$MNT" || { echo "send.sh: Tarn's pool is not mounted" >&2; return 1; }
	DATA=$MNT
	if [ "${2:-}" = comp ]; then
		"$TARN" fs set compression=lz4 sendsrc || return 1
	fi
}
tarn_snap() { "$TARN" fs snapshot "sendsrc@$1"; }
tarn_cold() {
	local p
	for p in senddst sendsrc; do
		timeout 120 "$TARN" pool export "$p" >/dev/null || return 1
	done
	drop_caches
	for p in sendsrc senddst; do
		timeout 120 "$TARN" pool import -d "$TMPFS/$p" "$p" >/dev/null || return 1
	done
	mountpoint -q "$MNT"
}
tarn_send() {
	local c=""
	[ "${3:-}" = -c ] && c="-c "
	if [ -n "${2:-}" ]; then
		echo "'$TARN' fs send $c-i sendsrc@$2 sendsrc@$1"
	else
		echo "'$TARN' fs send ${c}sendsrc@$1"
	fi
}
tarn_recv() { echo "'$TARN' fs receive senddst/copy"; }
tarn_copy() { echo "$MNT2/copy"; }
tarn_teardown() {
	local p
	for p in "${TARN_POOLS[@]}"; do
		timeout 120 "$TARN" pool destroy -f "$p" >/dev/null 2>&1 ||
			echo "send.sh: tarn pool destroy $p failed" >&2
	done
	TARN_POOLS=()
	rm -rf "$TMPFS/sendsrc" "$TMPFS/senddst"
}

# zfs-fuse: pools "zsendsrc" ($MNT) and "zsenddst" ($MNT2), one daemon
# started with setting ZFS_SETTING (tuned / default)
ZFS_SETTING=""
ZFS_STOPPED=0			# 1: we just stopped our zfs-fuse daemon
zfs_daemon_setting() {
	local i
	# the previous target's daemon may take a moment to go (pgrep also
	# sees it as a zombie until init reaps it)
	for ((i = 0; i < 50 && ZFS_STOPPED; i++)); do
		pgrep -x zfs-fuse >/dev/null || break
		sleep 0.2
	done
	ZFS_STOPPED=0
	if pgrep -x zfs-fuse >/dev/null && [ -z "$ZFS_PID" ]; then
		echo "send.sh: another zfs-fuse daemon runs; zfs-fuse skipped" >&2
		note "# zfs-fuse: skipped (another zfs-fuse daemon was running)"
		return 1
	fi
	[ -n "$ZFS_PID" ] && return 0
	# tuned: Tarn's cache size and prefetch on (lib.bash)
	if [ "$ZFS_SETTING" = tuned ]; then
		zfs_daemon_as 1024
	else
		zfs_daemon_as default
	fi
}
zfs_setup() {
	local p m
	zfs_daemon_setting || return 1
	for p in zsendsrc zsenddst; do
		mkdevs "$TMPFS/$p" "$1"
		m=$MNT
		[ "$p" = zsenddst ] && m=$MNT2
		# cachefile=none: nothing of ours in zfs-fuse's zpool.cache
		# shellcheck disable=SC2046
		"$ZPOOL" create -f -o cachefile=none -m "$m" "$p" $(vspec) >"$T/create.out" 2>&1 ||
			{ echo "send.sh: zpool create $p failed: $(cat "$T/create.out")" >&2; return 1; }
		ZFS_POOLS+=("$p")
	done
	DATA=$MNT
	if [ "${2:-}" = comp ]; then
		"$ZFS" set compression=on zsendsrc || return 1
	fi
}
zfs_snap() { "$ZFS" snapshot "zsendsrc@$1"; }
zfs_cold() {
	local p i
	for p in zsenddst zsendsrc; do
		for ((i = 0; i < 20; i++)); do
			"$ZPOOL" export "$p" >/dev/null 2>&1 && break
			sleep 0.5
		done
		[ "$i" -lt 20 ] || return 1
	done
	drop_caches
	for p in zsendsrc zsenddst; do
		"$ZPOOL" import -o cachefile=none -d "$TMPFS/$p" "$p" >/dev/null || return 1
	done
}
zfs_send() {
	[ "${3:-}" = -c ] && return 1	# 0.7 has no -c
	if [ -n "${2:-}" ]; then
		echo "$ZFS send -i zsendsrc@$2 zsendsrc@$1"
	else
		echo "$ZFS send zsendsrc@$1"
	fi
}
zfs_recv() { echo "$ZFS receive zsenddst/copy"; }
zfs_copy() { echo "$MNT2/copy"; }
zfs_teardown() {
	local p
	for p in "${ZFS_POOLS[@]}"; do
		ZFS_POOL=$p
		zfs_pool_destroy
	done
	ZFS_POOLS=()
	ZFS_POOL=""
	rm -rf "$TMPFS/zsendsrc" "$TMPFS/zsenddst"
}

# btrfs: two file systems on loop devices ($MNT, $MNT2); the data in
# subvolume $MNT/fs, snapshots $MNT/snaps/NAME (read-only), received
# into $MNT2/NAME

btrfs_setup() {
	local p m l devs raid=() opts=()
	[ "${2:-}" = comp ] && opts=(-o compress=lzo)
	[ "$LAYOUT" = mirror ] && raid=(-d raid1 -m raid1)
	for p in bsrc bdst; do
		mkdevs "$TMPFS/$p" "$1"
		devs=()
		for d in "${DEVS[@]}"; do
			l=$(losetup -f --show "$d") || { echo "send.sh: losetup failed" >&2; return 1; }
			LOOPS+=("$l")
			devs+=("$l")
		done
		m=$MNT
		[ "$p" = bdst ] && m=$MNT2
		if ! mkfs.btrfs -f "${raid[@]}" "${devs[@]}" >"$T/mkfs.log" 2>&1 ||
			! mount "${opts[@]}" "${devs[0]}" "$m"; then
			echo "send.sh: mkfs.btrfs/mount failed: $(tail -n 3 "$T/mkfs.log")" >&2
			return 1
		fi
	done
	btrfs subvolume create "$MNT/fs" >/dev/null && mkdir "$MNT/snaps" || return 1
	DATA=$MNT/fs
}
btrfs_snap() { btrfs subvolume snapshot -r "$MNT/fs" "$MNT/snaps/$1" >/dev/null; }
btrfs_cold() { drop_caches; }
btrfs_send() {
	local c=""
	[ "${3:-}" = -c ] && c="--compressed-data "
	if [ -n "${2:-}" ]; then
		echo "btrfs send -q $c-p $MNT/snaps/$2 $MNT/snaps/$1"
	else
		echo "btrfs send -q $c$MNT/snaps/$1"
	fi
}
btrfs_recv() { echo "btrfs receive -q $MNT2"; }
BTRFS_LAST=a
btrfs_copy() { echo "$MNT2/$BTRFS_LAST"; }
btrfs_teardown() {
	local l
	umount "$MNT2" 2>/dev/null || umount -l "$MNT2"
	umount "$MNT" 2>/dev/null || umount -l "$MNT"
	for l in "${LOOPS[@]}"; do losetup -d "$l"; done
	LOOPS=()
	rm -rf "$TMPFS/bsrc" "$TMPFS/bdst"
}

# --- workloads

# populate_mix DIR: part 1's data set; prints "large_ms small_ms" (each
# phase ends with a syncfs of DIR)
populate_mix() {
	python3 - "$1" "$LARGE_B" "$FILE_B" "$NSMALL" <<'EOF'
import ctypes, os, random, sys, time
d, large, fsize, nsmall = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
libc = ctypes.CDLL(None, use_errno=True)
def syncfs():
	fd = os.open(d, os.O_RDONLY)
	libc.syncfs(fd)
	os.close(fd)
MiB = 1 << 20
buf = random.Random(29).randbytes(fsize + MiB)
t0 = time.perf_counter()
os.mkdir(os.path.join(d, "big"))
for i in range(large // fsize):
	fd = os.open(os.path.join(d, "big", "f%04d" % i), os.O_CREAT | os.O_WRONLY, 0o644)
	off = (i * 4096 * 37) % MiB		# each file different
	for o in range(0, fsize, MiB):
		os.write(fd, buf[off + o:off + o + MiB])
	os.close(fd)
syncfs()
t1 = time.perf_counter()
os.mkdir(os.path.join(d, "small"))
for i in range(nsmall):
	if i % 1000 == 0:
		sub = os.path.join(d, "small", "d%04d" % (i // 1000))
		os.mkdir(sub)
	fd = os.open(os.path.join(sub, "f%04d" % (i % 1000)), os.O_CREAT | os.O_WRONLY, 0o644)
	off = (i * 4096 + i // 7) % (len(buf) - 4096)
	os.write(fd, buf[off:off + 4096])
	os.close(fd)
syncfs()
t2 = time.perf_counter()
print("%.1f %.1f" % ((t1 - t0) * 1e3, (t2 - t1) * 1e3))
EOF
}

# populate_comp DIR: part 3's compressible files (each 4 KiB half random,
# half zeros)
populate_comp() {
	python3 - "$1" "$COMP_B" "$FILE_B" <<'EOF'
import os, random, sys
d, total, fsize = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(293)
MiB = 1 << 20
blk = bytearray()
for i in range(256):
	blk += rnd.randbytes(2048) + bytes(2048)
blk = bytes(blk)
os.mkdir(os.path.join(d, "comp"))
for i in range(total // fsize):
	fd = os.open(os.path.join(d, "comp", "c%04d" % i), os.O_CREAT | os.O_WRONLY, 0o644)
	for o in range(0, fsize, MiB):
		os.write(fd, blk[2048 * ((i + o // MiB) % 2):] + blk[:2048 * ((i + o // MiB) % 2)])
	os.close(fd)
os.sync()
EOF
}

# fill DIR: part 2's NFILES files of NBYTES, 1,000 to a directory, two
# writers in parallel; prints files/s
fill() {
	python3 - "$1" "$NFILES" "$NBYTES" <<'EOF'
import ctypes, os, sys, time
root, n, nb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ndirs = (n + 999) // 1000
t = time.perf_counter()
pids = []
for k in range(2):
	pid = os.fork()
	if pid == 0:
		for dn in range(k, ndirs, 2):
			d = os.path.join(root, "d%d" % dn)
			os.mkdir(d)
			for j in range(min(1000, n - dn * 1000)):
				fd = os.open(os.path.join(d, "f%d" % j), os.O_CREAT | os.O_WRONLY, 0o644)
				if nb:
					os.write(fd, (b"%d/%d " % (dn, j) * (nb // 4 + 1))[:nb])
				os.close(fd)
		os._exit(0)
	pids.append(pid)
ok = all(os.waitpid(p, 0)[1] == 0 for p in pids)
fd = os.open(root, os.O_RDONLY)
ctypes.CDLL(None).syncfs(fd)
os.close(fd)
if not ok:
	sys.exit(1)
print("%.0f" % (n / (time.perf_counter() - t)))
EOF
}

# change DIR: 10 files in 10 directories changed: their first bytes
# overwritten in place (CHANGE=overwrite) or a line appended to them
# (CHANGE=append: a file of one block then gets a bigger block)
CHANGED=()
change() {
	local i ndirs=$(((NFILES + 999) / 1000)) f
	CHANGED=()
	for ((i = 0; i < 10; i++)); do
		f=d$((i * ndirs / 10))/f$((i * 37 % 1000))
		if [ "$CHANGE" = append ]; then
			echo "changed $i" >>"$1/$f"
		else
			printf 'changed %d' "$i" |
				dd of="$1/$f" conv=notrunc status=none
		fi
		CHANGED+=("$f")
	done
	sync -f "$1"
}

# tree_sum DIR: "files bytes" of the regular files under DIR
tree_sum() {
	find "$1" -type f -printf '%s\n' | awk '{ n++; b += $1 } END { printf "%d %d\n", n, b }'
}

# tarn_cmd_ok: false (and a note, once) when Tarn's send/receive is not
# there; TARN_SR: "", "ok" or "no"
TARN_SR=""
sr_failed() {	# sr_failed TGT WHAT: note why Tarn's WHAT failed
	[ "$1" = tarn ] || return 0
	[ "$TARN_SR" = no ] && return 0
	TARN_SR=no
	note "# tarn: $2 failed, its send/receive figures are n/a: $(tr '\n' ' ' <"$T/pipe.err" | head -c 300)"
}
sr_skip() {	# sr_skip TGT: true when TGT is Tarn and its send failed before
	[ "$1" = tarn ] && [ "$TARN_SR" = no ]
}

# part1 TGT KIND: the mixed data set's write, read, send, send | receive
part1() {
	local t=$1 k=$2 v w r lw sw lr sr t0 c
	echo "-- part 1: $((LARGE_B / 1048576)) MiB in $((LARGE_B / FILE_B)) files, $NSMALL files of 4 KiB"
	"${k}_setup" "$DEV1_M" || return 1
	t0=$(now_ns)
	v=$(populate_mix "$DATA") || return 1
	"${k}_snap" a || return 1
	w=$(ms "$t0" "$(now_ns)")
	read -r lw sw <<<"$v"
	rec "$t" write "$(mibs "$DATA_B" "$w")"
	rec "$t" write_large "$(mibs "$LARGE_B" "$lw")"
	rec "$t" write_small "$(mibs "$SMALL_B" "$sw")"
	"${k}_cold" || { echo "  export/import failed" >&2; return 1; }
	lr=$(pipe_ms "tar -C '$DATA' -cf - big" "wc -c") || return 1
	sr=$(pipe_ms "tar -C '$DATA' -cf - small" "wc -c") || return 1
	r=$(awk -v a="$lr" -v b="$sr" 'BEGIN { print a + b }')
	rec "$t" read "$(mibs "$DATA_B" "$r")"
	rec "$t" read_large "$(mibs "$LARGE_B" "$lr")"
	rec "$t" read_small "$(mibs "$SMALL_B" "$sr")"
	sr_skip "$t" || {
		"${k}_cold" || { echo "  export/import failed" >&2; return 1; }
		if v=$(pipe_ms "$("${k}_send" a)" "wc -c"); then
			rec "$t" send "$(mibs "$DATA_B" "$v")"
			rec "$t" send_read "$(awk -v s="$v" -v r="$r" 'BEGIN { printf "%.2f", r / s }')"
			rec "$t" stream_mib "$(awk '{ printf "%.0f", $1 / 1048576 }' "$T/pipe.out")"
		else
			sr_failed "$t" send
		fi
	}
	sr_skip "$t" || {
		"${k}_cold" || { echo "  export/import failed" >&2; return 1; }
		BTRFS_LAST=a
		if v=$(pipe_ms "$("${k}_send" a)" "$("${k}_recv")"); then
			rec "$t" sendrecv "$(mibs "$DATA_B" "$v")"
			rec "$t" sendrecv_write "$(awk -v s="$v" -v w="$w" 'BEGIN { printf "%.2f", w / s }')"
			c=$(tree_sum "$("${k}_copy")")
			if [ "$c" != "$(tree_sum "$DATA")" ]; then
				echo "  the copy differs: $c (files bytes)" >&2
				note "# $t: part 1's copy differs from the source ($c files bytes)"
			fi
		else
			sr_failed "$t" "send | receive"
		fi
	}
	"${k}_teardown"
}

# part2 TGT KIND: incremental send of 10 changed files among NFILES
part2() {
	local t=$1 k=$2 v i c=() w=()
	echo "-- part 2: $NFILES files of $NBYTES bytes, 10 changed"
	"${k}_setup" "$DEV2_M" || return 1
	v=$(fill "$DATA") || return 1
	rec "$t" fill "$v"
	"${k}_snap" a || return 1
	sr_skip "$t" || {
		BTRFS_LAST=a
		if v=$(pipe_ms "$("${k}_send" a)" "$("${k}_recv")"); then
			rec "$t" full_sendrecv "$(awk -v v="$v" 'BEGIN { printf "%.1f", v / 1e3 }')"
		else
			sr_failed "$t" "send | receive"
		fi
	}
	change "$DATA"
	"${k}_snap" b || return 1
	# warm first, and the replica's receive before any export/import:
	# an import leaves Tarn's datasets "modified since the most recent
	# snapshot" (written > 0), which a receive without -F refuses
	if ! sr_skip "$t"; then
		for ((i = 0; i < 3; i++)); do
			v=$(pipe_ms "$("${k}_send" b a)" "wc -c") && w+=("$v")
		done
		if [ ${#w[@]} -eq 3 ]; then
			echo "  warm (ms): ${w[*]}"
			rec "$t" inc_send_warm "$(printf '%s\n' "${w[@]}" | sort -g | sed -n 2p)"
			rec "$t" inc_stream_kib "$(awk '{ printf "%.0f", $1 / 1024 }' "$T/pipe.out")"
		else
			sr_failed "$t" "incremental send"
		fi
	fi
	sr_skip "$t" || {
		BTRFS_LAST=b
		if v=$(pipe_ms "$("${k}_send" b a)" "$("${k}_recv")"); then
			rec "$t" inc_sendrecv "$v"
			cmp -s "$("${k}_copy")/${CHANGED[9]}" "$DATA/${CHANGED[9]}" || {
				echo "  the replica's changed file differs" >&2
				note "# $t: part 2's replica differs in ${CHANGED[9]}"
			}
		else
			sr_failed "$t" "incremental send | receive"
		fi
	}
	if ! sr_skip "$t"; then
		"${k}_cold" || { echo "  export/import failed" >&2; return 1; }
		v=$(pipe_ms "$("${k}_send" b a)" "wc -c") && rec "$t" inc_send_cold "$v"
	fi
	"${k}_teardown"
}

# part3 TGT KIND: send -c of a compressed data set
part3() {
	local t=$1 k=$2 v c
	echo "-- part 3: $((COMP_B / 1048576)) MiB compressible, send -c"
	c=$("${k}_send" a "" -c) || { echo "  no send -c"; return 0; }
	"${k}_setup" "$DEV3_M" comp || return 1
	populate_comp "$DATA" || return 1
	"${k}_snap" a || return 1
	sr_skip "$t" && { "${k}_teardown"; return 0; }
	"${k}_cold" || { echo "  export/import failed" >&2; return 1; }
	if v=$(pipe_ms "$("${k}_send" a "" -c)" "wc -c"); then
		rec "$t" c_send "$(mibs "$COMP_B" "$v")"
		rec "$t" c_stream_mib "$(awk '{ printf "%.0f", $1 / 1048576 }' "$T/pipe.out")"
	else
		sr_failed "$t" "send -c"
	fi
	"${k}_cold" || { echo "  export/import failed" >&2; return 1; }
	if v=$(pipe_ms "$("${k}_send" a)" "wc -c"); then
		rec "$t" u_send "$(mibs "$COMP_B" "$v")"
		rec "$t" u_stream_mib "$(awk '{ printf "%.0f", $1 / 1048576 }' "$T/pipe.out")"
	fi
	"${k}_cold" || { echo "  export/import failed" >&2; return 1; }
	BTRFS_LAST=a
	if v=$(pipe_ms "$("${k}_send" a "" -c)" "$("${k}_recv")"); then
		rec "$t" c_sendrecv "$(mibs "$COMP_B" "$v")"
	else
		sr_failed "$t" "send -c | receive"
	fi
	"${k}_teardown"
}

# --- header
tarn_ver=$(git -C "$SRC" describe --always --dirty 2>/dev/null || echo unknown)
btype=$(meson introspect "$B" --buildoptions 2>/dev/null | python3 -c \
	'import json, sys; print([o["value"] for o in json.load(sys.stdin) if o["name"] == "buildtype"][0])' \
	2>/dev/null || echo "?")
echo "# send.sh: $(date -u '+%Y-%m-%d %H:%M UTC'); parts $PARTS, layout $LAYOUT; part 1:"
echo "#   $((LARGE_B / 1048576)) MiB in $((LARGE_B / FILE_B)) files + $NSMALL files of 4 KiB; part 2:"
echo "#   $NFILES files of $NBYTES bytes, 10 changed ($CHANGE); part 3: $((COMP_B / 1048576)) MiB compressible; devices on one tmpfs"
echo "# machine: $(nproc) CPUs, $(free -g | awk '/^Mem:/ { print $2 " GiB RAM, " $7 " GiB available" }'),"
echo "#   kernel $(uname -r); load $(cut -d' ' -f1-3 /proc/loadavg); $(wake_latency)"
echo "# Tarn: $tarn_ver ($btype build, $B), through tarnd; zfs-fuse $(dpkg-query -W -f '${Version}' zfs-fuse);"
echo "#   btrfs-progs $(dpkg-query -W -f '${Version}' btrfs-progs)"
echo "# zfs-fuse default ($ZFSRC): $(grep -Ev '^[[:space:]]*(#|$)' "$ZFSRC" 2>/dev/null | tr -s ' \n' ' ')"
echo "# zfs-fuse tuned: the same with max-arc-size = 1024 (Tarn's cache) and prefetch on"
echo "# cold: Tarn and zfs-fuse export + import both pools, then every target drops the"
echo "#   kernel's caches (echo 3 > /proc/sys/vm/drop_caches)"
START=$(date +%s)
IFS=, read -r -a TLIST <<<"$TARGETS"
IFS=, read -r -a PLIST <<<"$PARTS"
for tgt in "${TLIST[@]}"; do
	case "$tgt" in
	tarn) k=tarn ;;
	zfs-tuned) k=zfs; ZFS_SETTING=tuned ;;
	zfs-default) k=zfs; ZFS_SETTING=default ;;
	btrfs) k=btrfs ;;
	*) echo "unknown target $tgt" >&2; continue ;;
	esac
	echo "== $tgt"
	for p in "${PLIST[@]}"; do
		"part$p" "$tgt" "$k" ||
			{ echo "  part $p failed on $tgt" >&2; "${k}_teardown" >/dev/null 2>&1; }
	done
	if [ "$k" = tarn ]; then tarn_daemon_stop; fi
	if [ "$k" = zfs ]; then zfs_stop; fi
done
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg); $(wake_latency)"

# --- the table
echo
python3 - "$RES" "$NFILES" "$((COMP_B / 1048576))" "${TLIST[@]}" <<'EOF'
import sys
res = {}
for line in open(sys.argv[1]):
	t, f, v = line.split()
	try:
		res[(t, f)] = float(v)
	except ValueError:
		res[(t, f)] = v
nfiles, comp = int(sys.argv[2]), sys.argv[3]
targets = sys.argv[4:]
peers = [t for t in targets if t != "tarn"]
# (key, label, kind): "ms"/"s" lower is better, "rate" higher is better,
# "x" a target's own ratio, "i" information
rows = [
	("write", "write, mixed data set (MiB/s)", "rate"),
	("write_large", "  of it: large files (MiB/s)", "rate"),
	("write_small", "  of it: 4 KiB files (MiB/s)", "rate"),
	("read", "read cold, tar (MiB/s)", "rate"),
	("read_large", "  of it: large files (MiB/s)", "rate"),
	("read_small", "  of it: 4 KiB files (MiB/s)", "rate"),
	("send", "full send > pipe, cold (MiB/s)", "rate"),
	("send_read", "  (x) send / read (goal >= 0.80)", "x"),
	("stream_mib", "  (i) stream (MiB)", "i"),
	("sendrecv", "full send | receive, cold (MiB/s)", "rate"),
	("sendrecv_write", "  (x) send|recv / write (goal >= 0.70)", "x"),
	("fill", "write %d files (files/s)" % nfiles, "rate"),
	("full_sendrecv", "full send | receive, %d files (s)" % nfiles, "ms"),
	("inc_send_cold", "incremental send, 10 changed, cold (ms)", "ms"),
	("inc_send_warm", "incremental send, warm (ms)", "ms"),
	("inc_stream_kib", "  (i) stream (KiB)", "i"),
	("inc_sendrecv", "incremental send | receive (ms)", "ms"),
	("c_send", "send -c, %s MiB compressible (MiB/s)" % comp, "rate"),
	("c_stream_mib", "  (i) stream -c (MiB)", "i"),
	("u_send", "send without -c (MiB/s)", "rate"),
	("u_stream_mib", "  (i) stream without -c (MiB)", "i"),
	("c_sendrecv", "send -c | receive (MiB/s)", "rate"),
]
have = {k for (_, k) in res}
rows = [r for r in rows if r[0] in have]
def ratio(x):
	return "%.2f" % x if x >= 0.1 else "%.3f" % x
def fmt(v, kind):
	if v is None:
		return "n/a"
	if isinstance(v, str):
		return v
	if kind == "x":
		return "%.2f" % v
	return "%.1f" % v if abs(v) < 100 else "%.0f" % v
cols = targets + ["%s/tarn" % p for p in peers] if "tarn" in targets else targets
lw = max(len(r[1]) for r in rows) + 1 if rows else 10
w = max(10, max(len(c) for c in cols) + 2)
if "tarn" in targets:
	print("# ratios: > 1 means Tarn is better; for times (ms, s) peer/tarn, for rates")
	print("#   tarn/peer.  (x) rows: each target's own ratio; (i): information")
print("%-*s" % (lw, "figure") + "".join("%*s" % (w, c) for c in cols))
for key, label, kind in rows:
	row = [fmt(res.get((t, key)), kind) for t in targets]
	if "tarn" in targets:
		for p in peers:
			a, b = res.get(("tarn", key)), res.get((p, key))
			ok = kind in ("ms", "rate") and all(isinstance(x, float) and x > 0 for x in (a, b))
			if not ok:
				row.append("-")
			elif kind == "ms":
				row.append(ratio(b / a))
			else:
				row.append(ratio(a / b))
	print("%-*s" % (lw, label) + "".join("%*s" % (w, c) for c in row))
EOF
awk '!seen[$0]++' "$NOTES"
echo "# took $(($(date +%s) - START)) s"
