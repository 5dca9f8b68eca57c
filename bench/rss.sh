#!/bin/bash
# bench/rss.sh — where tarnd's memory goes against arc_max.  For each
# record size a fresh tarnd (config file, cache file, socket and run
# directory in this script's temp dir) gets a pool of two files on a
# tmpfs, a file of MULT x arc_max is written through the mount (dd from
# a file of random bytes, then fsync), read at random (two readers, 4 KiB
# O_DIRECT preads, RUNTIME s), and the pool exported.  Then (row
# "files") FILES files of 3,000 bytes each (1,000 to a directory) are
# made, the pool exported and imported, and every file read (open, read,
# close: its dnode, a block of another size than the records) and the
# pool exported again.  tarnd's VmRSS
# (/proc/PID/status) is sampled every 0.2 s; printed per phase: the peak
# and the value at its end, the ARC's size, and where the memory is
# (/proc/PID/smaps, by mapping kind):
#   bufs    dbuf.c's block-buffer regions (anonymous, MADV_HUGEPAGE: "hg")
#   heap    glibc's main heap ([heap])
#   arenas  glibc's thread arenas (anonymous, 64 MiB-aligned, <= 64 MiB)
#   other   everything else (stacks, the program, libraries, io_uring)
# With --malloc, also glibc's own count at the end of the reads and after
# the export (malloc_stats(3) called through gdb into tarnd's log: bytes
# the arenas hold from the system and bytes in use).
#
# Usage: bench/rss.sh [--arc SIZE] [--records LIST] [--mult N]
#                     [--runtime SEC] [--files N] [--malloc]
#                     [--heaptrack DIR] [--build DIR]
#   --arc        arc_max (default 64M; arc_min is half of it)
#   --records    comma list of record sizes (default 4K,128K)
#   --mult       the file is this many times arc_max (default 10)
#   --runtime    seconds of random reads (default 20)
#   --files      files of the metadata row (default 50000; 0: no such row)
#   --malloc     glibc's malloc_stats through gdb (needs gdb)
#   --heaptrack  run tarnd under heaptrack, its files in DIR (kept); read
#                them with heaptrack_print
#   --build      Tarn's build directory (default build)
# Needs root (tmpfs).  Cleanup on exit and Ctrl-C: pool destroyed, tarnd
# stopped by the PID in its PID file, mounts and tmpfs unmounted, the
# temp dir removed.
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.bash
. "$SRC/bench/lib.bash"
ARC=64M
RECORDS=4K,128K
MULT=10
RUNTIME=20
NFILES=50000
MALLOC=0
HEAPTRACK=""
B=$SRC/build
usage() {	# usage STATUS
	usage_exit "$0" '^#   --build' "$1"
}
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) usage 0 ;;
	--malloc) MALLOC=1; shift; continue ;;
	esac
	[ $# -ge 2 ] || usage 2
	case "$1" in
	--arc) ARC=$2 ;;
	--records) RECORDS=$2 ;;
	--mult) MULT=$2 ;;
	--runtime) RUNTIME=$2 ;;
	--files) NFILES=$2 ;;
	--heaptrack) HEAPTRACK=$2 ;;
	--build) B=$2 ;;
	*) echo "unknown option: $1" >&2; usage 2 ;;
	esac
	shift 2
done
die2() { echo "rss.sh: $*" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "rss.sh: needs root" >&2; exit 1; }
ARC_B=$(numfmt --from=iec "$ARC" 2>/dev/null) || die2 "bad --arc $ARC"
ARC_M=$((ARC_B / 1048576))
[ "$ARC_M" -ge 32 ] || die2 "--arc wants 32M at least"
[[ "$MULT" =~ ^[1-9][0-9]?$ ]] || die2 "--mult wants 1..99"
[[ "$RUNTIME" =~ ^[1-9][0-9]{0,3}$ ]] || die2 "--runtime wants seconds"
[[ "$NFILES" =~ ^[0-9]{1,7}$ ]] || die2 "--files wants a number"
[[ "$RECORDS" =~ ^[0-9]+[KM](,[0-9]+[KM])*$ ]] || die2 "--records wants a list like 4K,128K"
[ "$MALLOC" = 0 ] || command -v gdb >/dev/null || die2 "--malloc needs gdb"
[ -z "$HEAPTRACK" ] || command -v heaptrack >/dev/null || die2 "--heaptrack needs heaptrack"
TARN=$B/cmd/tarn/tarn
TARND=$B/cmd/tarn/tarnd
[ -x "$TARN" ] || { echo "rss.sh: no $TARN (build first)" >&2; exit 1; }
[ -e /dev/fuse ] || { echo "rss.sh: no /dev/fuse" >&2; exit 1; }
WS_M=$((ARC_M * MULT))

T=$(mktemp -d /tmp/tarn-benchrss.XXXXXX) || exit 1
TMPFS=$T/tmpfs
MNT=$T/mnt
export TARN_CACHEFILE=$T/tarn/cache/tarn.cache
export TARN_RUNDIR=$T/tarn/run
export TARN_SOCKET=$T/tarn/run/tarnd.sock
export TARN_CONFIG=$T/tarnd.conf
export TARN_AUTOMOUNT=1
POOL=""
EXTRA=""			# a note for the next report line
SAMPLER=""
READERS=()
mkdir -p "$TMPFS" "$MNT" "$TARN_RUNDIR"
printf 'arc_max=%dM\narc_min=%dM\n' "$ARC_M" $((ARC_M / 2)) >"$TARN_CONFIG"

cleanup() {
	trap - EXIT INT TERM
	local p
	for p in $SAMPLER "${READERS[@]}"; do kill "$p" 2>/dev/null; done
	[ -n "$POOL" ] && timeout 60 "$TARN" pool destroy -f "$POOL" >/dev/null 2>&1
	tarn_daemon_stop
	mountpoint -q "$MNT" && { fusermount3 -uz "$MNT" 2>/dev/null || umount -l "$MNT"; }
	mountpoint -q "$TMPFS" && umount "$TMPFS"
	case "$T" in /tmp/tarn-benchrss.*) rm -rf "$T" ;; esac
}
trap cleanup EXIT
trap 'echo "# interrupted" >&2; exit 130' INT TERM
mount -t tmpfs -o size=$((WS_M * 3 + 1024))m tmpfs "$TMPFS" ||
	{ echo "rss.sh: cannot mount a tmpfs" >&2; exit 1; }
head -c $((WS_M * 1048576)) /dev/urandom >"$TMPFS/src" || exit 1

rss_kb() {	# rss_kb PID: VmRSS in KiB
	sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$1/status" 2>/dev/null
}
# sampler PID FILE: VmRSS every 0.2 s into FILE (one file read at a time)
sampler() {
	local v
	while v=$(rss_kb "$1") && [ -n "$v" ]; do
		echo "$v" >>"$2"
		sleep 0.2
	done
}
sample_start() { : >"$T/samples"; sampler "$1" "$T/samples" & SAMPLER=$!; }
sample_stop() {	# prints the peak in MiB
	kill "$SAMPLER" 2>/dev/null; wait "$SAMPLER" 2>/dev/null; SAMPLER=""
	sort -n "$T/samples" | tail -n 1 | awk '{ printf "%.0f", $1 / 1024 }'
}
arc_mib() {
	"$TARN" arc-summary -j 2>/dev/null | python3 -c '
import json, sys
print("%.0f" % (json.load(sys.stdin)["stats"]["size"] / 1048576))' 2>/dev/null || echo "?"
}
# breakdown PID: MiB resident in bufs heap arenas other (smaps)
breakdown() {
	python3 - "/proc/$1/smaps" <<'EOF'
import sys
kinds = {"bufs": 0, "heap": 0, "arenas": 0, "other": 0}
cur = None
def close(c):
	if c is None:
		return
	lo, hi, name, rss, flags = c
	if name == "[heap]":
		k = "heap"
	elif "hg" in flags and name == "":
		k = "bufs"
	elif name == "" and lo % (64 << 20) == 0 and hi - lo <= (64 << 20) and "rd" in flags:
		k = "arenas"
	else:
		k = "other"
	kinds[k] += rss
for line in open(sys.argv[1]):
	f = line.split()
	if "-" in f[0] and not f[0].endswith(":"):
		close(cur)
		lo, hi = (int(x, 16) for x in f[0].split("-"))
		cur = [lo, hi, f[5] if len(f) > 5 else "", 0, []]
	elif f[0] == "Rss:":
		cur[3] = int(f[1])
	elif f[0] == "VmFlags:":
		cur[4] = f[1:]
close(cur)
print(" ".join("%s %.0f" % (k, v / 1024) for k, v in kinds.items()))
EOF
}
# mstats PID: glibc's "system in-use" MiB (malloc_stats into tarnd's log)
mstats() {
	local log=$TARN_RUNDIR/tarnd.log n
	[ "$MALLOC" = 1 ] || { echo "- -"; return; }
	[ -f "$log" ] || { echo "- -"; return; }
	n=$(wc -l <"$log")
	timeout 60 gdb -p "$1" -batch -ex 'call (void) malloc_stats()' >/dev/null 2>&1
	sleep 0.5
	tail -n +"$((n + 1))" "$log" | awk '/^Total/ { t = 1 } t && /system bytes/ { s = $4 }
		t && /in use bytes/ { u = $5 } END { printf "%.0f %.0f\n", s / 1048576, u / 1048576 }'
}
report() {	# report PHASE PEAK PID
	local end
	end=$(awk '{ printf "%.0f", $1 / 1024 }' <<<"$(rss_kb "$3")")
	printf '%-6s %-8s %6s %6s %6s  %s  malloc(sys,used) %s%s\n' "$REC" "$1" "$2" "$end" \
		"$(arc_mib)" "$(breakdown "$3")" "$(mstats "$3")" \
		"${EXTRA:+  ($EXTRA)}"
	EXTRA=""
}

echo "# rss.sh: arc_max ${ARC_M} MiB, file ${WS_M} MiB, 2 readers x 4 KiB O_DIRECT for ${RUNTIME} s; $NFILES files"
echo "# Tarn $(git -C "$SRC" describe --always --dirty 2>/dev/null); $(nproc) CPUs; kernel $(uname -r)"
echo "# MiB: peak and end of each phase (VmRSS), the ARC's size, smaps by kind"
printf '%-6s %-8s %6s %6s %6s  %s\n' rec phase peak end arc "where (end)"
# pool_start RECORDSIZE: a fresh tarnd (under heaptrack with --heaptrack)
# and pool rssbench mounted at $MNT; sets pid
pool_start() {
	local i
	if [ -n "$HEAPTRACK" ]; then
		mkdir -p "$HEAPTRACK"
		heaptrack -o "$HEAPTRACK/tarnd-$REC" "$TARND" -f >"$T/heaptrack.out" 2>&1 &
		for ((i = 0; i < 300; i++)); do [ -S "$TARN_SOCKET" ] && break; sleep 0.1; done
		[ -S "$TARN_SOCKET" ] ||
			{ echo "rss.sh: tarnd under heaptrack did not start: $(cat "$T/heaptrack.out")" >&2; exit 1; }
	fi
	truncate -s $((WS_M + 512))M "$TMPFS/d0" "$TMPFS/d1"
	timeout 120 "$TARN" pool create -f -m "$MNT" -O recordsize="$1" -O compression=off \
		-O atime=off rssbench "$TMPFS/d0" "$TMPFS/d1" >"$T/create.out" 2>&1 ||
		{ echo "rss.sh: pool create failed: $(cat "$T/create.out")" >&2; exit 1; }
	POOL=rssbench
	pid=$(tarnd_pid) || { echo "rss.sh: no tarnd" >&2; exit 1; }
}
pool_stop() {
	timeout 120 "$TARN" pool import -d "$TMPFS" rssbench >/dev/null 2>&1
	timeout 120 "$TARN" pool destroy -f rssbench >/dev/null
	POOL=""
	tarn_daemon_stop
	rm -f "$TMPFS/d0" "$TMPFS/d1"
}
for REC in ${RECORDS//,/ }; do
	pool_start "$REC"
	report created - "$pid"
	sample_start "$pid"
	t0=$(date +%s.%N)
	dd if="$TMPFS/src" of="$MNT/f" bs=1M conv=fsync status=none
	EXTRA="$(python3 -c "print('%.0f' % ($WS_M / ($(date +%s.%N) - $t0)))") MiB/s"
	report write "$(sample_stop)" "$pid"
	sample_start "$pid"
	cat >"$T/rr.py" <<'EOF'
import mmap, os, random, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
size = os.fstat(fd).st_size
buf = mmap.mmap(-1, 4096)
r = random.Random(int(sys.argv[3]))
end = time.time() + float(sys.argv[2])
n = 0
while time.time() < end:
	os.preadv(fd, [buf], r.randrange(0, size // 4096) * 4096)
	n += 1
print(n)
EOF
	READERS=()
	python3 "$T/rr.py" "$MNT/f" "$RUNTIME" 1 >"$T/rr1" & READERS+=($!)
	python3 "$T/rr.py" "$MNT/f" "$RUNTIME" 2 >"$T/rr2" & READERS+=($!)
	wait "${READERS[@]}"
	READERS=()
	EXTRA="$((($(cat "$T/rr1") + $(cat "$T/rr2")) / RUNTIME)) reads/s"
	report read "$(sample_stop)" "$pid"
	timeout 120 "$TARN" pool export rssbench >/dev/null || { echo "rss.sh: export failed" >&2; exit 1; }
	POOL=""
	sleep 2
	report export - "$pid"
	pool_stop
done

# --- many small files: dnodes and blocks below 4 KiB
if [ "$NFILES" -gt 0 ]; then
	REC=files
	pool_start 128K
	report created - "$pid"
	sample_start "$pid"
	t0=$(date +%s.%N)
	python3 - "$MNT" "$NFILES" <<'EOF' || { echo "rss.sh: making files failed" >&2; exit 1; }
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
data = b"x" * 3000
for i in range(n):
	d = "%s/d%d" % (root, i // 1000)
	if i % 1000 == 0:
		os.mkdir(d)
	with open("%s/f%d" % (d, i), "wb") as f:
		f.write(data)
os.sync()
EOF
	EXTRA="$(python3 -c "print('%.1f' % ($(date +%s.%N) - $t0))") s"
	report make "$(sample_stop)" "$pid"
	timeout 120 "$TARN" pool export rssbench >/dev/null &&
		timeout 120 "$TARN" pool import -d "$TMPFS" rssbench >/dev/null ||
		{ echo "rss.sh: export/import failed" >&2; exit 1; }
	echo 3 >/proc/sys/vm/drop_caches
	sample_start "$pid"
	t0=$(date +%s.%N)
	python3 - "$MNT" "$NFILES" <<'EOF' || { echo "rss.sh: reading files failed" >&2; exit 1; }
import sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
	with open("%s/d%d/f%d" % (root, i // 1000, i), "rb") as f:
		f.read()
EOF
	EXTRA="$(python3 -c "print('%.1f' % ($(date +%s.%N) - $t0))") s"
	report read "$(sample_stop)" "$pid"
	timeout 120 "$TARN" pool export rssbench >/dev/null || { echo "rss.sh: export failed" >&2; exit 1; }
	POOL=""
	sleep 2
	report export - "$pid"
	pool_stop
fi
