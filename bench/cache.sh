#!/bin/bash
# bench/cache.sh — issue 30's figures: what the L2ARC, a log device (SLOG)
# and a special vdev buy on a slow pool, the ARC's hit ratio and the
# daemon's RAM against arc_max, and a reference row against zfs-fuse with
# a cache device.  Tarn runs through tarnd (its config file, cache file,
# socket and run directory in this script's temp dir); every device is a
# file on one tmpfs, made afresh for each part and removed after it.
#
# The slow disk: Tarn's pools are a raidz1 of four file vdevs, each
# delayed DELAY ms per I/O, one I/O at a time (`tarn inject -d DEV -D
# DELAY:1`, a spinning disk).  An export clears injections, so they are
# put back after every import.  The log, cache and special devices are
# files on the same tmpfs and are never delayed (the fast device beside
# the slow disks).  The datasets have recordsize=4K and compression=off,
# so that a 4 KiB random read is one block.
#
# Parts (Tarn's, on the delayed raidz1; --parts):
#   read   arc_max ARC (the config file; arc_min half of it, l2arc_write_max
#          1G so the cache device fills within the bench: the default rate
#          would take minutes) and a cache device.  A file of twice arc_max
#          is written, the pool exported and imported (ARC empty), the
#          delays put on, and then 4 KiB random reads (fio, psync,
#          direct=1 through the mount, seed 1234, RUNTIME s):
#            cold   the cache device empty (it is added after the import)
#            feed   one pass over every block in random order (fio's random
#                   map), with the delays taken off for the pass so that it
#                   ends within the bench: its evictions fill the cache
#                   device; then 3 s for the L2ARC writer's flush, delays on
#            warm   the same random reads
#            warm2  after export/import (the ARC empty, the cache device's
#                   ring read back, delays put on again), the same reads
#          For each: IOPS, the ARC's hit% and the L2ARC's hit% over the run
#          (arc-summary -j: hits/misses, l2_hits/l2_misses), ARC size,
#          l2_size and tarnd's VmRSS (by the PID in its PID file) at the
#          end.  Goal: warm >= 20x cold.
#   fsync  4 KiB writes with an fsync after each (fio --fsync=1, RUNTIME s)
#          on the delayed raidz1 without a log device, then on a fresh
#          pool with a log device on tmpfs.  Goal >= 10x.
#   meta   FILES empty files, 1,000 to a directory (python: open O_CREAT,
#          then syncfs), create; export/import (cold; delays back on,
#          kernel caches dropped); stat each by name; delete each (then
#          syncfs) — on the delayed raidz1, and on a fresh one with a
#          special mirror of two tmpfs files.  A phase that runs past CAP
#          seconds stops there and its rate is over the files it did
#          ("partial" in the table).
#          Then, paced (fio --rate_iops PACE, RUNTIME s): the mean time of
#          one write + its fsync, when the pool's txgs keep up.  (Every
#          block still reaches the slow raidz1 in a txg; the leaves'
#          queues merge a txg's adjacent blocks into 1 MiB I/Os, so the
#          txgs keep up, and the sustained figure is the log's too.)
#   ref    the cross-system row, on UNDELAYED tmpfs files (zfs-fuse has no
#          `tarn inject`; dm-delay under both would be fairer, and is used
#          by none here because the kernel this was written on has no
#          device-mapper: the header says whether it has): the same raidz1
#          of four, recordsize=4K, a cache device, the same random reads
#          cold (after export/import and dropping the kernel's caches) and
#          warm (after a feeding pass), on Tarn (arc_max ARC) and on
#          zfs-fuse (--targets; its cache device is a loop device over
#          the file: zfs-fuse 0.7 refuses a file, "cache device must be a
#          disk or disk slice"):
#            zfs-tuned    max-arc-size = ARC in MB, prefetch on (zfsrc is
#                         rewritten for the moment the daemon starts and
#                         put back at once, and at exit)
#            zfs-default  Debian's /etc/zfs/zfsrc (max-arc-size 100,
#                         zfs-prefetch-disable)
#          zfs-fuse's cache device use is shown from `zpool iostat -v`.
#
# Prints the figures as they come, then one table with the ratios.
#
# Usage: bench/cache.sh [--quick] [--arc SIZE] [--runtime SEC] [--files N]
#                       [--delay MS] [--cap SEC] [--parts LIST]
#                       [--targets LIST] [--build DIR]
#   --quick    a check run: --arc 32M --runtime 6 --files 5000 --cap 20
#   --arc      arc_max (default 64M); the random reads' working set is twice
#              it, the cache device three times it
#   --runtime  seconds of each timed fio job (default 25)
#   --files    files for the metadata part (default 100000)
#   --delay    ms per I/O of each delayed device (default 8)
#   --cap      seconds at most for a metadata phase (default 120)
#   --cache    the cache device's size (default three times --arc)
#   --pace     fsync'd writes a second in the paced fsync run (default 20)
#   --parts    comma list from read,fsync,meta,ref (default all)
#   --targets  the ref part's systems, comma list from tarn,zfs-tuned,
#              zfs-default (default all three)
#   --build    Tarn's build directory (default build)
# Needs root (tmpfs, drop_caches).  Installs fio and zfs-fuse with apt-get
# when missing.  zfs-fuse is skipped when another zfs-fuse daemon runs.
# Cleanup on exit and on Ctrl-C, even after a failure: Tarn's pools
# destroyed and tarnd stopped by the PID in its PID file, zfs-fuse's pool
# destroyed and its daemon stopped by its PID, /etc/zfs/zfsrc put back,
# the loop device detached, mounts unmounted, the tmpfs unmounted, the temp dir removed.  The
# machine may be shared and noisy: compare figures from one run.
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.bash
. "$SRC/bench/lib.bash"
ARC=64M
RUNTIME=25
NFILES=100000
DELAY=8
CAP=120
PACE=20
CACHE=""
PARTS=read,fsync,meta,ref
TARGETS=tarn,zfs-tuned,zfs-default
B=$SRC/build
QUICK=0

usage() {	# usage STATUS
	usage_exit "$0" '^#   --build' "$1"
}
ARGS=("$@")
for a in "$@"; do [ "$a" = --quick ] && QUICK=1; done
if [ "$QUICK" = 1 ]; then ARC=32M; RUNTIME=6; NFILES=5000; CAP=20; fi
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) shift; continue ;;
	-h|--help) usage 0 ;;
	esac
	[ $# -ge 2 ] || usage 2
	case "$1" in
	--arc) ARC=$2 ;;
	--runtime) RUNTIME=$2 ;;
	--files) NFILES=$2 ;;
	--delay) DELAY=$2 ;;
	--cap) CAP=$2 ;;
	--cache) CACHE=$2 ;;
	--pace) PACE=$2 ;;
	--parts) PARTS=$2 ;;
	--targets) TARGETS=$2 ;;
	--build) B=$2 ;;
	*) echo "unknown option: $1" >&2; usage 2 ;;
	esac
	shift 2
done
die2() { echo "cache.sh: $*" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "cache.sh: needs root" >&2; exit 1; }
ARC_B=$(numfmt --from=iec "$ARC" 2>/dev/null) || die2 "bad --arc $ARC"
ARC_M=$((ARC_B / 1048576))
[ "$ARC_M" -ge 16 ] || die2 "--arc wants 16M at least"
[[ "$RUNTIME" =~ ^[1-9][0-9]{0,3}$ ]] || die2 "--runtime wants seconds"
[[ "$NFILES" =~ ^[1-9][0-9]{2,7}$ ]] || die2 "--files wants a number >= 100"
[[ "$DELAY" =~ ^[1-9][0-9]{0,3}$ ]] || die2 "--delay wants ms"
[[ "$CAP" =~ ^[1-9][0-9]{0,4}$ ]] || die2 "--cap wants seconds"
[[ "$PARTS" =~ ^(read|fsync|meta|ref)(,(read|fsync|meta|ref))*$ ]] ||
	die2 "--parts wants a list from read,fsync,meta,ref"
[[ "$TARGETS" =~ ^(tarn|zfs-tuned|zfs-default)(,(tarn|zfs-tuned|zfs-default))*$ ]] ||
	die2 "--targets wants a list from tarn,zfs-tuned,zfs-default"
WS_M=$((ARC_M * 2))		# the random reads' working set
DEV_M=$((WS_M + 256))		# each raidz1 member (3 of 4 hold data)
CACHE_M=$((ARC_M * 3))
if [ -n "$CACHE" ]; then
	CACHE_M=$(($(numfmt --from=iec "$CACHE" 2>/dev/null || echo 0) / 1048576))
	[ "$CACHE_M" -ge 32 ] || die2 "--cache wants 32M at least"
fi
[[ "$PACE" =~ ^[1-9][0-9]{0,4}$ ]] || die2 "--pace wants writes a second"
TARN=$B/cmd/tarn/tarn
ZPOOL=/usr/sbin/zpool		# zfs-fuse's; never a zpool/zfs found in PATH
ZFS=/usr/sbin/zfs
ZFSFUSE=/usr/sbin/zfs-fuse	# lib.bash's zfs_daemon runs it
export ZFSFUSE
has_part() { case ",$PARTS," in *,"$1",*) return 0 ;; esac; return 1; }
has_tgt() { case ",$TARGETS," in *,"$1",*) return 0 ;; esac; return 1; }

# --- packages (only what is missing)
need=()
for p in fio zfs-fuse; do
	dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "# installing: ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}" >/dev/null ||
		{ echo "cache.sh: apt-get install failed" >&2; exit 1; }
fi
[ -x "$TARN" ] || { echo "cache.sh: no $TARN (build first)" >&2; exit 1; }
[ -e /dev/fuse ] || { echo "cache.sh: no /dev/fuse" >&2; exit 1; }

# --- state for cleanup
T=$(mktemp -d /tmp/tarn-benchcache.XXXXXX) || exit 1
TMPFS=$T/tmpfs			# the backing tmpfs
MNT=$T/mnt			# the pool's mount
RES=$T/results			# "figure value" lines
NOTES=$T/notes			# lines printed under the table
export TARN_CACHEFILE=$T/tarn/cache/tarn.cache
export TARN_RUNDIR=$T/tarn/run
export TARN_SOCKET=$T/tarn/run/tarnd.sock
export TARN_CONFIG=$T/tarnd.conf
export TARN_AUTOMOUNT=1
TARN_POOL=""			# the Tarn pool that exists now
ZFS_PID=""			# zfs-fuse daemon
ZFS_POOL=""			# zfs-fuse pool imported now
ZFS_STOPPED=0
ZFS_LOOP=""			# the loop device under zfs-fuse's cache device
mkdir -p "$TMPFS" "$MNT" "$TARN_RUNDIR"
: >"$RES"
: >"$NOTES"
printf 'arc_max=%dM\narc_min=%dM\nl2arc_write_max=1G\n' "$ARC_M" $((ARC_M / 2)) >"$TARN_CONFIG"

zfs_stop() {
	zfs_pool_destroy
	ZFS_POOL=""
	if [ -n "$ZFS_PID" ]; then stop_pid "$ZFS_PID"; ZFS_PID=""; ZFS_STOPPED=1; fi
	if [ -n "$ZFS_LOOP" ]; then losetup -d "$ZFS_LOOP" 2>/dev/null; ZFS_LOOP=""; fi
}
cleanup() {
	trap - EXIT INT TERM
	local m
	[ -n "$TARN_POOL" ] && timeout 60 "$TARN" pool destroy -f "$TARN_POOL" >/dev/null 2>&1
	TARN_POOL=""
	tarn_daemon_stop
	zfsrc_restore
	zfs_stop
	for m in $(awk -v t="$T/" 'index($2, t) == 1 { print $2 }' /proc/mounts | sort -r); do
		[ "$m" = "$TMPFS" ] && continue
		fusermount3 -uz "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	mountpoint -q "$TMPFS" && umount "$TMPFS"
	case "$T" in /tmp/tarn-benchcache.*) rm -rf "$T" ;; esac
}
trap cleanup EXIT
trap 'echo "# interrupted" >&2; exit 130' INT TERM

mount -t tmpfs -o size=$((DEV_M * 4 + CACHE_M + 1024))m tmpfs "$TMPFS" ||
	{ echo "cache.sh: cannot mount a tmpfs" >&2; exit 1; }

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
}
rec() {		# rec FIGURE VALUE: one result, also shown as it comes
	echo "  $1: ${2:--}"
	echo "$1 ${2:--}" >>"$RES"
}
note() { echo "$*" >>"$NOTES"; }

# mkdevs: fresh raidz1 members $TMPFS/dev/d0..3 -> DEVS, and the fast
# devices' directory $TMPFS/fast
mkdevs() {
	local i
	rm -rf "${TMPFS:?}/dev" "${TMPFS:?}/fast"
	mkdir -p "$TMPFS/dev" "$TMPFS/fast"
	DEVS=()
	for ((i = 0; i < 4; i++)); do
		truncate -s "${DEV_M}M" "$TMPFS/dev/d$i"
		DEVS+=("$TMPFS/dev/d$i")
	done
}

# --- Tarn
# tarn_create EXTRA...: pool "cachebench" on the raidz1 plus EXTRA vdev
# words, mounted at $MNT, recordsize=4K, compression off, atime off
tarn_create() {
	timeout 120 "$TARN" pool create -f -m "$MNT" -O recordsize=4K -O compression=off \
		-O atime=off cachebench raidz1 "${DEVS[@]}" "$@" >"$T/create.out" 2>&1 ||
		{ echo "cache.sh: tarn pool create failed: $(cat "$T/create.out")" >&2; return 1; }
	TARN_POOL=cachebench
	mountpoint -q "$MNT" || { echo "cache.sh: Tarn's pool is not mounted" >&2; return 1; }
}
tarn_delay() {	# the raidz1 members delayed
	local d
	for d in "${DEVS[@]}"; do
		"$TARN" inject -d "$d" -D "$DELAY:1" cachebench >/dev/null 2>"$T/inject.err" ||
			{ echo "cache.sh: tarn inject failed: $(cat "$T/inject.err")" >&2; return 1; }
	done
}
tarn_undelay() { "$TARN" inject -c all >/dev/null; }
# tarn_cold [DELAY]: export, drop the kernel's caches, import (delays put
# back on unless DELAY is "nodelay")
tarn_cold() {
	timeout 120 "$TARN" pool export cachebench >/dev/null || return 1
	drop_caches
	timeout 120 "$TARN" pool import -d "$TMPFS/dev" -d "$TMPFS/fast" cachebench >/dev/null ||
		return 1
	mountpoint -q "$MNT" || return 1
	[ "${1:-}" = nodelay ] || tarn_delay
}
tarn_teardown() {
	[ -n "$TARN_POOL" ] && { timeout 120 "$TARN" pool destroy -f "$TARN_POOL" >/dev/null 2>&1 ||
		echo "cache.sh: tarn pool destroy failed" >&2; }
	TARN_POOL=""
	rm -rf "${TMPFS:?}/dev" "${TMPFS:?}/fast"
}
# arcs: "hits misses l2_hits l2_misses size c l2_size l2_rebuild_blocks"
arcs() {
	"$TARN" arc-summary -j 2>/dev/null | python3 -c '
import json, sys
s = json.load(sys.stdin)["stats"]
print(" ".join(str(s.get(k, 0)) for k in ("hits", "misses", "l2_hits", "l2_misses",
	"size", "c", "l2_size", "l2_rebuild_blocks")))' 2>/dev/null || echo "0 0 0 0 0 0 0 0"
}
rss_mib() {	# tarnd's VmRSS in MiB
	local pid
	pid=$(tarnd_pid) || { echo -; return; }
	awk '/^VmRSS:/ { printf "%.0f", $2 / 1024 }' "/proc/$pid/status"
}
# arc_delta NAME BEFORE: the ARC's and L2ARC's hit% since BEFORE (an
# arcs line), the ARC's size and l2_size now, tarnd's RSS
arc_delta() {
	local now
	now=$(arcs)
	python3 - "$1" "$2" "$now" >>"$RES" <<'EOF'
import sys
n = sys.argv[1]
a = [int(x) for x in sys.argv[2].split()]
b = [int(x) for x in sys.argv[3].split()]
h, m, l2h, l2m = (b[i] - a[i] for i in range(4))
pct = lambda x, y: "%.1f" % (100.0 * x / (x + y)) if x + y else "-"
print("%s_arc_hit %s" % (n, pct(h, m)))
print("%s_l2_hit %s" % (n, pct(l2h, l2m)))
print("%s_arc_mib %.0f" % (n, b[4] / 1048576))
print("%s_l2_mib %.0f" % (n, b[6] / 1048576))
for k, v in (("arc_hit", pct(h, m)), ("l2_hit", pct(l2h, l2m)),
		("arc_mib", "%.0f" % (b[4] / 1048576)), ("l2_mib", "%.0f" % (b[6] / 1048576))):
	print("  %s_%s: %s" % (n, k, v), file=sys.stderr)
EOF
	rec "${1}_rss_mib" "$(rss_mib)"
}

# --- fio: fio_iops FIGURE ARGS...: prints IOPS (read + write), records it
fio_iops() {
	local fig=$1 out=$T/fio.json v
	shift
	if ! fio --output-format=json --output="$out" --ioengine=psync --randseed=1234 \
	    --group_reporting "$@" >/dev/null 2>"$T/fio.err"; then
		echo "  $fig: fio failed: $(head -c 300 "$T/fio.err")" >&2
		rec "$fig" -
		return 1
	fi
	v=$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print("%.0f" % (j["read"]["iops"] + j["write"]["iops"]))' "$out")
	rec "$fig" "$v"
}
rr() {		# rr FIGURE FILE: the timed 4 KiB random reads
	fio_iops "$1" --name=rr --filename="$2" --rw=randread --bs=4k --direct=1 \
		--size="${WS_M}m" --time_based --runtime="$RUNTIME"
}
feed() {	# feed FILE: one random-order pass over every block
	fio_iops "${2:-feed}" --name=feed --filename="$1" --rw=randread --bs=4k --direct=1 \
		--size="${WS_M}m"
}
mkfile() {	# mkfile FILE: the working set, written and synced
	fio --name=mk --filename="$1" --rw=write --bs=1M --size="${WS_M}m" --end_fsync=1 \
		--ioengine=psync --randseed=1234 >/dev/null 2>"$T/fio.err" ||
		{ echo "cache.sh: writing the working set failed: $(head -c 300 "$T/fio.err")" >&2; return 1; }
}

# --- part read
part_read() {
	local a f=$MNT/ws
	echo "-- read: 4 KiB random reads over ${WS_M} MiB, arc_max ${ARC_M} MiB, cache device ${CACHE_M} MiB"
	mkdevs
	truncate -s "${CACHE_M}M" "$TMPFS/fast/cache0"
	tarn_create || return 1
	mkfile "$f" || return 1
	tarn_cold || { echo "  export/import failed" >&2; return 1; }
	timeout 60 "$TARN" pool add cachebench cache "$TMPFS/fast/cache0" >"$T/add.out" 2>&1 ||
		{ echo "cache.sh: zpool add cache failed: $(cat "$T/add.out")" >&2; return 1; }
	a=$(arcs)
	rr rd_cold "$f"
	arc_delta rd_cold "$a"
	tarn_undelay
	a=$(arcs)
	feed "$f" rd_feed_undelayed
	sleep 3
	arc_delta rd_feed "$a"
	tarn_delay || return 1
	a=$(arcs)
	rr rd_warm "$f"
	arc_delta rd_warm "$a"
	sleep 2
	rec rd_l2_mib_at_export "$(arcs | awk '{ printf "%.0f", $7 / 1048576 }')"
	tarn_cold || { echo "  export/import failed" >&2; return 1; }
	rec rd_rebuild_blocks "$(arcs | cut -d' ' -f8)"
	rec rd_l2_mib_after_import "$(arcs | awk '{ printf "%.0f", $7 / 1048576 }')"
	a=$(arcs)
	rr rd_warm2 "$f"
	arc_delta rd_warm2 "$a"
	"$TARN" pool iostat -v cachebench >"$T/iostat.out" 2>&1 && sed 's/^/  /' "$T/iostat.out"
	tarn_teardown
}

# --- part fsync
fsync_run() {	# fsync_run FIGURE
	local f=$MNT/fs
	fio --name=lay --filename="$f" --size=32m --create_only=1 >/dev/null 2>&1
	sync -f "$MNT"
	tarn_delay || return 1
	fio_iops "$1" --name=fw --filename="$f" --rw=randwrite --bs=4k --size=32m \
		--fsync=1 --time_based --runtime="$RUNTIME"
	# paced: PACE writes a second, which the pool's txgs keep up with; the
	# mean of write + fsync per operation
	sleep 2
	fio_iops "${1}_paced" --name=fp --filename="$f" --rw=randwrite --bs=4k --size=32m \
		--fsync=1 --rate_iops="$PACE" --time_based --runtime="$RUNTIME" &&
		rec "${1}_op_ms" "$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print("%.2f" % ((j["write"]["clat_ns"]["mean"] + j["sync"]["lat_ns"]["mean"]) / 1e6))' "$T/fio.json")"
}
part_fsync() {
	echo "-- fsync: 4 KiB writes, fsync after each, ${RUNTIME} s"
	mkdevs
	tarn_create || return 1
	fsync_run fs_nolog
	tarn_teardown
	mkdevs
	truncate -s 256M "$TMPFS/fast/log0"
	tarn_create log "$TMPFS/fast/log0" || return 1
	fsync_run fs_slog
	tarn_teardown
}

# --- part meta: meta_phase DIR create|stat|delete: prints "ops/s done"
meta_phase() {
	python3 - "$1" "$2" "$NFILES" "$CAP" <<'EOF'
import ctypes, os, sys, time
root, what, n, cap = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
libc = ctypes.CDLL(None)
t0 = time.perf_counter()
done = 0
for i in range(n):
	d = os.path.join(root, "d%03d" % (i // 1000))
	p = os.path.join(d, "f%d" % (i % 1000))
	if what == "create":
		if i % 1000 == 0:
			os.mkdir(d)
		os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o644))
	elif what == "stat":
		os.lstat(p)
	else:
		os.unlink(p)
	done += 1
	if done % 200 == 0 and time.perf_counter() - t0 > cap:
		break
if what != "stat":
	fd = os.open(root, os.O_RDONLY)
	libc.syncfs(fd)
	os.close(fd)
dt = time.perf_counter() - t0
print("%.0f %d" % (done / dt, done))
EOF
}
meta_run() {	# meta_run PREFIX
	local ph v r n
	mkdir -p "$MNT/m"
	tarn_delay || return 1
	for ph in create stat delete; do
		if [ "$ph" = stat ]; then
			tarn_cold || { echo "  export/import failed" >&2; return 1; }
		fi
		v=$(meta_phase "$MNT/m" "$ph") || { echo "  $ph failed" >&2; rec "${1}_$ph" -; return 1; }
		read -r r n <<<"$v"
		rec "${1}_$ph" "$r"
		if [ "$n" -lt "$NFILES" ]; then
			rec "${1}_${ph}_partial" "$n"
			note "# $1 $ph: stopped after $CAP s, $n of $NFILES files"
			# what stat did not reach, delete does not find either
			[ "$ph" = create ] && break
		fi
	done
}
part_meta() {
	echo "-- meta: $NFILES empty files create / stat (cold) / delete"
	mkdevs
	tarn_create || return 1
	meta_run mt_plain
	tarn_teardown
	mkdevs
	truncate -s 256M "$TMPFS/fast/s0"
	truncate -s 256M "$TMPFS/fast/s1"
	tarn_create special mirror "$TMPFS/fast/s0" "$TMPFS/fast/s1" || return 1
	meta_run mt_special
	"$TARN" pool list -v cachebench 2>&1 | sed 's/^/  /'
	tarn_teardown
}

# --- part ref: undelayed, Tarn and zfs-fuse
ref_tarn() {
	local f=$MNT/ws
	echo "-- ref: tarn (undelayed)"
	mkdevs
	truncate -s "${CACHE_M}M" "$TMPFS/fast/cache0"
	tarn_create cache "$TMPFS/fast/cache0" || return 1
	mkfile "$f" || return 1
	tarn_cold nodelay || return 1
	rr ref_tarn_cold "$f"
	feed "$f" ref_tarn_feed
	sleep 3
	rr ref_tarn_warm "$f"
	tarn_teardown
}
zfs_daemon_setting() {	# zfs_daemon_setting tuned|default
	local i
	for ((i = 0; i < 50 && ZFS_STOPPED; i++)); do
		pgrep -x zfs-fuse >/dev/null || break
		sleep 0.2
	done
	ZFS_STOPPED=0
	if pgrep -x zfs-fuse >/dev/null && [ -z "$ZFS_PID" ]; then
		note "# zfs-fuse: skipped (another zfs-fuse daemon was running)"
		return 1
	fi
	if [ "$1" = tuned ]; then
		zfs_daemon_as "$ARC_M"
	else
		zfs_daemon_as default
	fi
}
ref_zfs() {	# ref_zfs tuned|default
	local f=$MNT/ws n=ref_zfs_$1 i
	echo "-- ref: zfs-$1 (undelayed)"
	zfs_daemon_setting "$1" || return 1
	mkdevs
	truncate -s "${CACHE_M}M" "$TMPFS/fast/cache0"
	if ! "$ZPOOL" create -f -o cachefile=none -m "$MNT" zcachebench raidz1 "${DEVS[@]}" \
	    >"$T/create.out" 2>&1; then
		echo "cache.sh: zpool create failed: $(cat "$T/create.out")" >&2
		return 1
	fi
	ZFS_POOL=zcachebench
	"$ZFS" set recordsize=4K zcachebench && "$ZFS" set atime=off zcachebench || return 1
	# zfs-fuse 0.7 takes a block device only ("cache device must be a
	# disk or disk slice"): the cache file on a loop device
	ZFS_LOOP=$(losetup -f --show "$TMPFS/fast/cache0") || ZFS_LOOP=""
	if [ -n "$ZFS_LOOP" ] &&
	    "$ZPOOL" add -f zcachebench cache "$ZFS_LOOP" >"$T/add.out" 2>&1; then
		note "# zfs-$1: zpool add cache works (a loop device over the tmpfs file)"
	else
		note "# zfs-$1: zpool add cache failed: $(head -c 200 "$T/add.out")"
	fi
	mkfile "$f" || return 1
	for ((i = 0; i < 20; i++)); do
		"$ZPOOL" export zcachebench >/dev/null 2>&1 && break
		sleep 0.5
	done
	drop_caches
	"$ZPOOL" import -o cachefile=none -d "$TMPFS/dev" -d "$TMPFS/fast" zcachebench \
		>/dev/null 2>"$T/import.err" ||
		{ echo "  zfs-fuse import failed: $(cat "$T/import.err")" >&2; return 1; }
	rr "${n}_cold" "$f"
	feed "$f" "${n}_feed"
	sleep 3
	rr "${n}_warm" "$f"
	"$ZPOOL" iostat -v zcachebench >"$T/iostat.out" 2>&1
	sed 's/^/  /' "$T/iostat.out"
	[ -n "$ZFS_LOOP" ] &&
		rec "${n}_cache_alloc" "$(awk -v d="${ZFS_LOOP##*/}" '$1 ~ d { print $2 }' "$T/iostat.out" | tail -n 1)"
	zfs_stop
	rm -rf "${TMPFS:?}/dev" "${TMPFS:?}/fast"
}

# --- header
tarn_ver=$(git -C "$SRC" describe --always --dirty 2>/dev/null || echo unknown)
btype=$(meson introspect "$B" --buildoptions 2>/dev/null | python3 -c \
	'import json, sys; print([o["value"] for o in json.load(sys.stdin) if o["name"] == "buildtype"][0])' \
	2>/dev/null || echo "?")
echo "# cache.sh $(printf '%s ' "${ARGS[@]}"): $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "#   arc_max ${ARC_M} MiB (arc_min $((ARC_M / 2)) MiB, l2arc_write_max 1G in \$TARN_CONFIG),"
echo "#   working set ${WS_M} MiB, cache device ${CACHE_M} MiB, raidz1 of 4 x ${DEV_M} MiB files,"
echo "#   all on one tmpfs; delayed parts: ${DELAY} ms per I/O, 1 lane (tarn inject -D ${DELAY}:1);"
echo "#   recordsize=4K, compression=off; fio psync direct=1 seed 1234, ${RUNTIME} s a job;"
echo "#   meta: $NFILES files, a phase stops after $CAP s"
echo "# machine: $(nproc) CPUs, $(free -g | awk '/^Mem:/ { print $2 " GiB RAM, " $7 " GiB available" }'),"
echo "#   kernel $(uname -r); load $(cut -d' ' -f1-3 /proc/loadavg); $(wake_latency)"
echo "# device-mapper delay target: $(dmsetup targets 2>/dev/null | grep -q '^delay' && echo present || echo 'absent (no dm-delay: zfs-fuse runs undelayed)')"
echo "# Tarn: $tarn_ver ($btype build, $B), through tarnd; zfs-fuse $(dpkg-query -W -f '${Version}' zfs-fuse)"
echo "# zfs-fuse default ($ZFSRC): $(grep -Ev '^[[:space:]]*(#|$)' "$ZFSRC" 2>/dev/null | tr -s ' \n' ' ')"
START=$(date +%s)
if has_part read; then part_read || { echo "  part read failed" >&2; tarn_teardown; }; fi
if has_part fsync; then part_fsync || { echo "  part fsync failed" >&2; tarn_teardown; }; fi
if has_part meta; then part_meta || { echo "  part meta failed" >&2; tarn_teardown; }; fi
if has_part ref; then
	if has_tgt tarn; then ref_tarn || { echo "  ref tarn failed" >&2; tarn_teardown; }; fi
	tarn_daemon_stop
	for s in tuned default; do
		has_tgt "zfs-$s" || continue
		ref_zfs "$s" || { echo "  ref zfs-$s failed" >&2; zfs_stop; }
	done
fi
tarn_daemon_stop
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg); $(wake_latency)"

# --- the table
echo
python3 - "$RES" "$ARC_M" <<'EOF'
import sys
res = {}
for line in open(sys.argv[1]):
	k, v = line.split()
	try:
		res[k] = float(v)
	except ValueError:
		res[k] = v
arc = sys.argv[2]
def g(k):
	return res.get(k)
def f(v):
	if v is None:
		return "-"
	if isinstance(v, str):
		return v
	return "%.1f" % v if abs(v) < 100 and v != int(v) else "%.0f" % v
def ratio(a, b):
	a, b = g(a), g(b)
	if isinstance(a, float) and isinstance(b, float) and b > 0:
		return "%.1fx" % (a / b)
	return "-"
if "rd_cold" in res:
	print("# Tarn, delayed raidz1, 4 KiB random reads (IOPS), arc_max %s MiB" % arc)
	print("%-8s %8s %8s %8s %8s %8s %8s" % ("run", "IOPS", "ARC hit%", "L2 hit%",
		"ARC MiB", "L2 MiB", "RSS MiB"))
	for r in ("rd_cold", "rd_feed", "rd_warm", "rd_warm2"):
		io = g(r) if r != "rd_feed" else g("rd_feed_undelayed")
		print("%-8s %8s %8s %8s %8s %8s %8s" % (r[3:], f(io), f(g(r + "_arc_hit")),
			f(g(r + "_l2_hit")), f(g(r + "_arc_mib")), f(g(r + "_l2_mib")),
			f(g(r + "_rss_mib"))))
	print("# warm / cold %s (goal >= 20x); warm2 / cold %s" % (ratio("rd_warm", "rd_cold"),
		ratio("rd_warm2", "rd_cold")))
	print("# l2_size before export %s MiB, after import %s MiB; blocks found again at import"
		" (l2_rebuild_blocks) %s" % (f(g("rd_l2_mib_at_export")), f(g("rd_l2_mib_after_import")),
		f(g("rd_rebuild_blocks"))))
	print("# feed: one pass with the delays off")
if "fs_nolog" in res or "fs_slog" in res:
	print()
	print("# Tarn, delayed raidz1, fsync'd 4 KiB writes")
	print("%-26s %10s %10s %8s" % ("", "no log", "SLOG", "ratio"))
	print("%-26s %10s %10s %8s" % ("sustained (ops/s)", f(g("fs_nolog")), f(g("fs_slog")),
		ratio("fs_slog", "fs_nolog")))
	print("%-26s %10s %10s %8s" % ("paced: write+fsync (ms)", f(g("fs_nolog_op_ms")),
		f(g("fs_slog_op_ms")), ratio("fs_nolog_op_ms", "fs_slog_op_ms")))
	print("# goal >= 10x; paced: fio --rate_iops, the mean of each write + fsync")
if "mt_plain_create" in res:
	print()
	print("# Tarn, delayed raidz1, files/s (stat and delete cold, after export/import)")
	print("%-8s %10s %10s %8s" % ("phase", "plain", "special", "ratio"))
	for ph in ("create", "stat", "delete"):
		a, b = "mt_plain_" + ph, "mt_special_" + ph
		pa = " (partial %s)" % f(g(a + "_partial")) if a + "_partial" in res else ""
		pb = " (partial %s)" % f(g(b + "_partial")) if b + "_partial" in res else ""
		print("%-8s %10s %10s %8s%s%s" % (ph, f(g(a)), f(g(b)), ratio(b, a), pa, pb))
refs = [t for t in ("tarn", "zfs_tuned", "zfs_default") if "ref_%s_cold" % t in res]
if refs:
	print()
	print("# undelayed tmpfs files, raidz1 + cache device, 4 KiB random reads (IOPS)")
	print("%-10s" % "run" + "".join("%18s" % t for t in refs) +
		"".join("%18s" % ("tarn/" + t) for t in refs if t != "tarn"))
	for r in ("cold", "feed", "warm"):
		row = [f(g("ref_%s_%s" % (t, r))) for t in refs]
		row += [ratio("ref_tarn_" + r, "ref_%s_%s" % (t, r)) for t in refs if t != "tarn"]
		print("%-10s" % r + "".join("%18s" % c for c in row))
	for t in refs:
		if "ref_%s_cache_alloc" % t in res:
			print("# %s: cache device alloc after the warm run: %s" % (t, f(g("ref_%s_cache_alloc" % t))))
EOF
awk '!seen[$0]++' "$NOTES"
echo "# took $(($(date +%s) - START)) s"
