#!/bin/bash
# bench/run-cpu.sh — what a metadata operation costs the server: creates and
# deletes of empty files through tarn-mount, with the daemon's CPU time
# (user + system, from /proc) per operation beside the rate: the cost a
# change to the server alters, where the rate also depends on the client
# and the kernel.  Give two build directories and the rounds alternate
# between them (a fresh pool each time), then the medians.  On a noisy
# 2-CPU machine both figures move 10-20% between rounds (session 10: four
# pairs could not tell changes of a few percent apart).
#
# Usage: bench/run-cpu.sh [--files N] [--rounds N] [--layout L]
#                         [--tarn-opts OPTS] BUILD [BUILD2]
#   --files    files created, then deleted, per round (default 32768)
#   --rounds   rounds per build (default 3)
#   --layout   single, mirror or raidz1 (default single), on 1 GiB files
#   --tarn-opts OPTS  tarn-mount -o OPTS for every build (e.g. poll=0:
#              without polling the CPU time is the work alone)
# Needs root (tmpfs) and python3.  Cleanup on exit and on Ctrl-C: the
# daemon stopped by its PID, the mount and the tmpfs unmounted, the temp
# directory removed.
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.bash
. "$SRC/bench/lib.bash"
NFILES=32768
ROUNDS=3
LAYOUT=single
TARN_OPTS=()
BUILDS=()

usage() {	# usage STATUS
	usage_exit "$0" '^#              without polling' "$1"
}
while [ $# -gt 0 ]; do
	case "$1" in
	--files) NFILES=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	--layout) LAYOUT=$2; shift 2 ;;
	--tarn-opts) TARN_OPTS=(-o "$2"); shift 2 ;;
	-h|--help) usage 0 ;;
	-*) echo "run-cpu.sh: unknown option: $1" >&2; usage 2 ;;
	*) BUILDS+=("$1"); shift ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "run-cpu.sh: needs root" >&2; exit 1; }
if [ "${#BUILDS[@]}" -lt 1 ] || [ "${#BUILDS[@]}" -gt 2 ]; then usage 2; fi
[[ "$NFILES" =~ ^[1-9][0-9]{0,7}$ ]] || { echo "run-cpu.sh: --files wants a number" >&2; exit 2; }
[[ "$ROUNDS" =~ ^[1-9][0-9]{0,2}$ ]] || { echo "run-cpu.sh: --rounds wants 1 to 999" >&2; exit 2; }
case "$LAYOUT" in single|mirror|raidz1) ;; *) echo "run-cpu.sh: bad --layout" >&2; exit 2 ;; esac
for b in "${BUILDS[@]}"; do
	[ -x "$b/cmd/tarn-mount/tarn-mount" ] ||
		{ echo "run-cpu.sh: no $b/cmd/tarn-mount/tarn-mount (build first)" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "run-cpu.sh: needs python3" >&2; exit 1; }

T=$(mktemp -d /tmp/tarn-benchcpu.XXXXXX) || exit 1
TMPFS=$T/tmpfs
MNT=$T/mnt
RES=$T/results			# "build phase rate us_per_op" lines
TARN_PID=""
mkdir -p "$TMPFS" "$MNT"
: >"$RES"

cleanup() {
	trap - EXIT INT TERM
	if [ -n "$TARN_PID" ]; then stop_pid "$TARN_PID"; TARN_PID=""; fi
	unmount_mnt
	mountpoint -q "$TMPFS" && umount "$TMPFS"
	case "$T" in /tmp/tarn-benchcpu.*) rm -rf "$T" ;; esac
}
trap cleanup EXIT
trap 'echo "# interrupted" >&2; exit 130' INT TERM
mount -t tmpfs -o size=5g tmpfs "$TMPFS" ||
	{ echo "run-cpu.sh: cannot mount a tmpfs" >&2; exit 1; }

# cpu_ticks PID: user + system clock ticks of the process so far
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# one_round INDEX BUILD: fresh pool, N creates, N deletes
one_round() {
	local idx=$1 b=$2 i devs=() pidf=$T/pid
	rm -f "$TMPFS"/d* "$pidf"
	for i in 0 1 2 3; do truncate -s 1G "$TMPFS/d$i"; done
	case "$LAYOUT" in
	single) devs=("$TMPFS/d0") ;;
	mirror) devs=(mirror "$TMPFS/d0" "$TMPFS/d1") ;;
	raidz1) devs=(raidz1 "$TMPFS/d0" "$TMPFS/d1" "$TMPFS/d2" "$TMPFS/d3") ;;
	esac
	"$b/cmd/tarn-mount/tarn-mount" -c -f -n benchcpu -p "$pidf" "${TARN_OPTS[@]}" \
		"$MNT" "${devs[@]}" >>"$T/tarn-mount.log" 2>&1 &
	TARN_PID=$!
	if ! wait_mounted "$TARN_PID" "$pidf"; then
		echo "run-cpu.sh: tarn-mount did not mount; its log:" >&2
		tail -n 20 "$T/tarn-mount.log" >&2
		exit 1
	fi
	# each phase: python times it, the ticks bracket it
	local t0 t1 t2 w
	t0=$(cpu_ticks "$TARN_PID")
	w=$(python3 -c '
import os, sys, time
d, n = sys.argv[1], int(sys.argv[2])
os.mkdir(d)
t = time.perf_counter()
for i in range(n):
    os.close(os.open("%s/%08d" % (d, i), os.O_CREAT | os.O_WRONLY, 0o644))
print(time.perf_counter() - t)' "$MNT/d" "$NFILES") || exit 1
	t1=$(cpu_ticks "$TARN_PID")
	echo "$idx create $w $((t1 - t0))" >>"$RES"
	sleep 6		# the creates' txgs on disk: the deletes start from a quiet daemon
	t1=$(cpu_ticks "$TARN_PID")
	w=$(python3 -c '
import os, sys, time
d = sys.argv[1]
names = os.listdir(d)
t = time.perf_counter()
for nm in names:
    os.unlink(d + "/" + nm)
print(time.perf_counter() - t)' "$MNT/d") || exit 1
	t2=$(cpu_ticks "$TARN_PID")
	echo "$idx delete $w $((t2 - t1))" >>"$RES"
	stop_pid "$TARN_PID"
	TARN_PID=""
	unmount_mnt
}

for ((r = 1; r <= ROUNDS; r++)); do
	for ((k = 0; k < ${#BUILDS[@]}; k++)); do
		echo "# round $r of $ROUNDS: ${BUILDS[$k]}" >&2
		one_round "$k" "${BUILDS[$k]}"
	done
done

HZ=$(getconf CLK_TCK)
echo "# $NFILES empty files, $LAYOUT, ${TARN_OPTS[*]:-default options}; medians of $ROUNDS rounds"
python3 - "$RES" "$NFILES" "$HZ" "${BUILDS[@]}" <<'PY'
import statistics, sys
res, n, hz, builds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
rows = {}
for line in open(res):
    k, phase, wall, ticks = line.split()
    rows.setdefault((int(k), phase), []).append((float(wall), int(ticks)))
print("%-40s %-7s %10s %14s" % ("build", "phase", "ops/s", "server us/op"))
for k, b in enumerate(builds):
    for phase in ("create", "delete"):
        v = rows.get((k, phase), [])
        if not v:
            continue
        rate = statistics.median(n / w for w, _ in v)
        cpu = statistics.median(t * 1e6 / hz / n for _, t in v)
        print("%-40s %-7s %10.0f %14.1f" % (b[-40:], phase, rate, cpu))
PY
