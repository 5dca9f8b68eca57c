#!/bin/bash
# arc_rss.sh — the daemon's resident memory follows arc_max: with arc_max
# 32M, files of ten times arc_max with 4 KiB and 128 KiB records are
# written through one mount and then read at random (O_DIRECT, past the
# kernel's page cache) while tarnd's VmRSS is sampled five times a
# second; every sample stays within the bound of docs/DESIGN.md ("The
# ARC", "The daemon's memory"): arc_max * 4/3 + 48 MiB + 4 MiB per CPU
# (the mount's FUSE buffers) while reading, plus the dirty-data limit
# (arc_max / 4, at least 16 MiB) while writing.  After the export RSS
# falls to at most 48 MiB; the data reads back intact after an import
# (buffers given back are reused).
# Under AddressSanitizer (its shadow memory and quarantine) the figures
# are printed, not checked.
#
# Cleanup even on failure: the sampler and readers are killed by PID
# (lib.sh's E2E_BGPIDS); lib.sh destroys the pool, stops the daemon and
# unmounts what is left.
. "$(dirname "$0")/lib.sh"
describe "daemon RSS within arc_max + the documented bound; memory given back at export"
require_daemon_mounts

export TARN_CONFIG="$E2E_TMP/tarnd.conf"
MiB=$((1024 * 1024))
MAX=$((32 * MiB))
printf 'arc_max=32M\narc_min=16M\n' >"$TARN_CONFIG"
NCPU=$(nproc --all)
FIXED=$((48 * MiB + NCPU * 4 * MiB))
DIRTY=$((MAX / 4 > 16 * MiB ? MAX / 4 : 16 * MiB))
READ_BOUND=$((MAX * 4 / 3 + FIXED))
WRITE_BOUND=$((READ_BOUND + DIRTY))
AFTER_BOUND=$((48 * MiB))

cat >"$E2E_TMP/rr.py" <<'EOF'
# rr.py FILE SECONDS SEED: random O_DIRECT reads of 4K..128K
import mmap, os, random, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
size = os.fstat(fd).st_size
buf = mmap.mmap(-1, 1 << 20)
r = random.Random(int(sys.argv[3]))
end = time.time() + float(sys.argv[2])
while time.time() < end:
    n = r.choice([4096, 4096, 16384, 131072])
    os.preadv(fd, [memoryview(buf)[:n]], r.randrange(0, size - n) & ~4095)
EOF
# rss PID: VmRSS in bytes (one file read; empty when the process is gone)
rss() {
	local v
	v=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$1/status" 2>/dev/null)
	[ -n "$v" ] && echo $((v * 1024))
}
# sampler PID FILE: VmRSS every 0.2 s, one line each, until killed
sampler() {
	local v
	while v=$(rss "$1"); do
		echo "$v" >>"$2"
		sleep 0.2
	done
}
SAMPLER=""
sample_start() {	# sample_start FILE
	: >"$1"
	sampler "$pid" "$1" & SAMPLER=$!
	E2E_BGPIDS+=("$SAMPLER")
}
sample_stop() {
	kill "$SAMPLER" 2>/dev/null
	wait "$SAMPLER" 2>/dev/null
}
peak() { sort -n "$1" | tail -n 1; }
mib() { echo $((($1 + MiB - 1) / MiB)); }
direct_sum() {
	dd if="$1" iflag=direct bs=1M status=none | md5sum | cut -d' ' -f1
}

mkdevs 2 640M
tarn_ok pool create -m "$MNT" -O compression=off -O recordsize=4K tank "${DEV[@]}"
pid=$(daemon_pid) || { fail "no daemon"; e2e_done; }
asan=0
grep -q libasan "/proc/$pid/maps" 2>/dev/null && asan=1
# check WHAT VALUE BOUND: VALUE <= BOUND (printed only under ASan)
check() {
	echo "# $1: $(mib "$2") MiB (bound $(mib "$3") MiB)"
	[ "$asan" = 1 ] && return 0
	[ "$2" -le "$3" ] && pass || fail "$1: $(mib "$2") MiB is over $(mib "$3") MiB"
}
echo "# tarnd RSS at start: $(mib "$(rss "$pid")") MiB"

# --- writes: ten times arc_max each, 4 KiB and 128 KiB records
sample_start "$E2E_TMP/s.write"
ok dd if=/dev/urandom of="$MNT/f4" bs=1M count=320 conv=fsync status=none
tarn_ok fs set recordsize=128K tank             # for files created from now on
ok dd if=/dev/urandom of="$MNT/f128" bs=1M count=320 conv=fsync status=none
sample_stop
sum4=$(md5sum <"$MNT/f4" | cut -d' ' -f1)
sum128=$(md5sum <"$MNT/f128" | cut -d' ' -f1)
tarn_ok pool sync tank
check "peak while writing" "$(peak "$E2E_TMP/s.write")" "$WRITE_BOUND"

# --- random reads over both files
sample_start "$E2E_TMP/s.read"
python3 "$E2E_TMP/rr.py" "$MNT/f4" 10 1 & r1=$!
python3 "$E2E_TMP/rr.py" "$MNT/f4" 10 2 & r2=$!
python3 "$E2E_TMP/rr.py" "$MNT/f128" 10 3 & r3=$!
E2E_BGPIDS+=("$r1" "$r2" "$r3")
for p in "$r1" "$r2" "$r3"; do wait "$p" || fail "a reader failed"; done
sample_stop
n=$(wc -l <"$E2E_TMP/s.read")
[ "$n" -ge 25 ] && pass || fail "only $n samples while reading"
read_peak=$(peak "$E2E_TMP/s.read")
check "peak while reading" "$read_peak" "$READ_BOUND"
tarn_ok arcstat -p -f arcsz,c
echo "# ARC size and c after the reads: $(tail -n 1 "$OUT")"

# --- export: the cache's memory goes back
tarn_ok pool export tank
sleep 1
after=$(rss "$pid")
check "after the export" "$after" "$AFTER_BOUND"
[ "$asan" = 1 ] || { [ "$after" -le $((read_peak - MAX / 2)) ] && pass ||
	fail "RSS fell only from $(mib "$read_peak") to $(mib "$after") MiB at export"; }

# --- buffers given back are reused: the data reads back intact
tarn_ok pool import -d "$DEVDIR" tank
[ "$(direct_sum "$MNT/f4")" = "$sum4" ] && pass || fail "f4 reads back different"
[ "$(direct_sum "$MNT/f128")" = "$sum128" ] && pass || fail "f128 reads back different"
check "after reading both back" "$(rss "$pid")" "$READ_BOUND"

e2e_done
