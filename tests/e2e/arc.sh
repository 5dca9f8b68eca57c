#!/bin/bash
# arc.sh — the daemon's ARC through tarnd: arc_max/arc_min from the config
# file ($TARN_CONFIG) take effect at daemon start; random O_DIRECT reads
# over a file ten times arc_max, mixed with writes and a scrub, while
# `tarn arcstat` samples the cache five times a second: every sample is
# within arc_max plus the documented slack (blocks held by readers, one
# block per reading thread); the data read back is intact; `tarn daemon
# set arc_max=` lower shrinks the cache at once; primarycache=none and
# metadata keep the dataset's data out of the ARC, all keeps it; bad
# input (arc_max below arc_min or above RAM, bad sizes, unknown names)
# is refused with one line, exit 1, nothing changed; a hot file read
# twice survives a sequential read of a file ten times the cache.  Prints
# the daemon's RSS against arc_max.
#
# Cleanup even on failure: the sampler and the load are killed by PID
# (lib.sh's E2E_BGPIDS),
# lib.sh destroys the pool, stops the daemon and unmounts what is left.
. "$(dirname "$0")/lib.sh"
describe "ARC: hard limit under reads+writes+scrub, arc_max at run time, config, primarycache"
require_daemon_mounts

export TARN_CONFIG="$E2E_TMP/tarnd.conf"
MAX=$((32 * 1024 * 1024))
printf '# the daemon of arc.sh\narc_max = 32M\n  arc_min=16M   # floor\n' >"$TARN_CONFIG"

# --- the config file decides at daemon start
tarn_ok daemon get -Hp arc_max arc_min
out_is "arc_max	$MAX	config
arc_min	16777216	config"
tarn_ok arcstat -p -f c
[ "$(tail -n 1 "$OUT" | tr -d ' ')" = "$MAX" ] && pass || { fail "arcstat c is not arc_max"; show_output; }

# arc_val KEY: one figure of the daemon's ARC (arc.stats, through arc-summary -j)
arc_val() {
	"$TARN" arc-summary -j | python3 -c "import json,sys; print(json.load(sys.stdin)['stats']['$1'])"
}

cat >"$E2E_TMP/rr.py" <<'EOF'
# rr.py FILE SECONDS SEED: random O_DIRECT reads of 4K..128K (past the kernel's page cache)
import mmap, os, random, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
size = os.fstat(fd).st_size
buf = mmap.mmap(-1, 1 << 20)
r = random.Random(int(sys.argv[3]))
end = time.time() + float(sys.argv[2])
while time.time() < end:
    n = r.choice([4096, 16384, 65536, 131072])
    os.preadv(fd, [memoryview(buf)[:n]], r.randrange(0, size - n) & ~4095)
EOF
cat >"$E2E_TMP/pr.py" <<'EOF'
# pr.py FILE: md5 of FILE read with O_DIRECT 128K at a time in a scattered
# order (no sequential stream, whose blocks the ARC keeps only a share of)
import hashlib, mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
size = os.fstat(fd).st_size
n = (size + 131071) // 131072
out = bytearray(n * 131072)
buf = mmap.mmap(-1, 131072)
for i in range(n):
    b = (i * 7) % n if n % 7 else i
    got = os.preadv(fd, [buf], b * 131072)
    out[b * 131072:b * 131072 + got] = buf[:got]
print(hashlib.md5(bytes(out[:size])).hexdigest())
EOF
# direct_sum FILE: md5 of FILE read with O_DIRECT (through the daemon, not the page cache)
direct_sum() {
	dd if="$1" iflag=direct bs=1M status=none | md5sum | cut -d' ' -f1
}

mkdevs 2 512M
tarn_ok pool create -m "$MNT" tank "${DEV[@]}"
ok dd if=/dev/urandom of="$MNT/big" bs=1M count=320 conv=fsync status=none
sum_big=$(md5sum <"$MNT/big" | cut -d' ' -f1)

# --- the limit under load: samples of size, held and c every 0.2 s
"$TARN" arcstat -p -f arcsz,held,c 0.2 >"$E2E_TMP/samples" 2>&1 &
E2E_BGPIDS+=($!)
python3 "$E2E_TMP/rr.py" "$MNT/big" 10 1 & E2E_BGPIDS+=($!)
python3 "$E2E_TMP/rr.py" "$MNT/big" 10 2 & E2E_BGPIDS+=($!)
(for i in 1 2 3 4 5 6; do
	dd if=/dev/urandom of="$MNT/w$((i % 2))" bs=128k count=256 conv=fsync status=none
done) & E2E_BGPIDS+=($!)
sleep 1
tarn_ok pool scrub -w tank
for p in "${E2E_BGPIDS[@]:1}"; do wait "$p"; done
sleep 0.5
kill "${E2E_BGPIDS[0]}" 2>/dev/null
wait "${E2E_BGPIDS[0]}" 2>/dev/null
E2E_BGPIDS=()
# slack (docs/DESIGN.md, "The ARC"): blocks held by readers (here at most
# 2 readers x 2 blocks of 128K, FUSE's threads answering them) and one
# block per thread between its insert and its evict (16 FUSE threads, 2
# read-ahead, the sync: 2.4 MiB); allowed: 16 MiB in all, 4 MiB outside
# held blocks
SLACK=$((16 * 1024 * 1024))
nsamples=$(awk '$1 ~ /^[0-9]+$/' "$E2E_TMP/samples" | wc -l)
over=$(awk -v max=$MAX -v slack=$SLACK '$1 ~ /^[0-9]+$/ &&
	($1 > $3 + slack || $1 - $2 > $3 + 4194304 || $3 != max) { print }' "$E2E_TMP/samples")
peak=$(awk '$1 ~ /^[0-9]+$/ && $1 > m { m = $1 } END { print m + 0 }' "$E2E_TMP/samples")
echo "# $nsamples samples under load, peak size $((peak / 1024)) KiB of $((MAX / 1024)) KiB"
[ "$nsamples" -ge 40 ] && pass || { fail "only $nsamples samples"; cat "$E2E_TMP/samples" >&2; }
[ -z "$over" ] && pass || fail "samples over arc_max + slack: $over"
[ "$(arc_val evictions)" -gt 0 ] && pass || fail "no evictions under a load 10x arc_max"
[ "$(direct_sum "$MNT/big")" = "$sum_big" ] && pass || fail "big reads back different"
tarn_ok arcstat -f read,miss%,arcsz,c,l2read,l2hit%
echo "# arcstat (totals): $(tail -n 1 "$OUT")"
pid=$(daemon_pid) && echo "# tarnd RSS $(awk '/VmRSS/ { print $2 " " $3 }' /proc/"$pid"/status) with arc_max 32M"

# --- a hot set survives a sequential read ten times the cache: read twice
# (MFU), then all of big streamed through the daemon; reading the hot file
# again misses nothing
ok dd if=/dev/urandom of="$MNT/hot" bs=1M count=8 conv=fsync status=none
sum_hot=$(md5sum <"$MNT/hot" | cut -d' ' -f1)
for i in 1 2; do
	[ "$(python3 "$E2E_TMP/pr.py" "$MNT/hot")" = "$sum_hot" ] || fail "hot reads back different"
done
[ "$(direct_sum "$MNT/big")" = "$sum_big" ] && pass || fail "big streams back different"
m0=$(arc_val demand_data_misses)
[ "$(python3 "$E2E_TMP/pr.py" "$MNT/hot")" = "$sum_hot" ] || fail "hot reads back different"
m1=$(arc_val demand_data_misses)
echo "# hot 8 MiB file after a 320 MiB stream: $((m1 - m0)) data misses of 64 blocks"
# (an LRU misses all 64; under the sanitizers, whose slowness lets some of
# the stream's blocks be read as if at random, 7 were seen: up to 1/8 is
# allowed)
[ "$((m1 - m0))" -le 8 ] && pass || fail "the stream evicted the hot set: $((m1 - m0)) misses"

# --- arc_max lowered at run time: the cache shrinks before set returns
tarn_ok daemon set arc_max=20M
tarn_ok arcstat -p -f arcsz,held,c
read -r sz held c < <(tail -n 1 "$OUT")
[ "$c" -eq $((20 * 1024 * 1024)) ] && [ "$((sz - held))" -le "$c" ] && pass ||
	fail "after set arc_max=20M: size $sz held $held c $c"
tarn_ok daemon get -H arc_max
out_is "arc_max	20M	local"

# --- bad input: one line, exit 1 (2 for usage), nothing changed
tarn_err 1 "^cannot set 'arc_max': arc_max is below arc_min" daemon set arc_max=8M
tarn_err 1 "^cannot set 'arc_max': arc_max is more than the machine's memory" \
	daemon set arc_max=4096T
tarn_err 1 "^cannot set 'arc_max': bad size '12Q'" daemon set arc_max=12Q
tarn_err 1 "^cannot set 'arc_max': bad size ''" daemon set arc_max=
tarn_err 1 "^cannot set 'arc_min': arc_min is above arc_max" daemon set arc_min=64M
tarn_err 1 "^cannot set 'arc_maxx': unknown daemon property" daemon set arc_maxx=1G
tarn_err 1 "^cannot set 'arc_max': bad size" daemon set arc_min=8M arc_max=x
tarn_err 2 "expected NAME=VALUE" daemon set arc_max
tarn_err 1 "^cannot get 'bogus': unknown daemon property" daemon get bogus
tarn_err 2 "invalid field 'nope'" arcstat -f time,nope
tarn_err 2 "invalid interval" arcstat 0
tarn_err 2 "invalid count" arcstat 1 x
tarn_ok daemon get -Hp arc_max arc_min
out_is "arc_max	20971520	local
arc_min	16777216	config"

# --- primarycache: what of a dataset's blocks the ARC keeps
tarn_ok daemon set arc_max=96M
tarn_ok fs create -o primarycache=none tank/pc
tarn_ok fs get -H -o value primarycache,secondarycache tank/pc
out_is "none
all"
ok dd if=/dev/urandom of="$MNT/pc/f" bs=1M count=16 conv=fsync status=none
tarn_ok pool sync tank
sum_pc=$(md5sum <"$MNT/pc/f" | cut -d' ' -f1)
# pc_read: read tank/pc's file through the daemon, print the growth of the
# ARC's data bytes and of its count of blocks not kept
pc_read() {
	local d0 u0
	d0=$(arc_val data_size)
	u0=$(arc_val uncached)
	[ "$(python3 "$E2E_TMP/pr.py" "$MNT/pc/f")" = "$sum_pc" ] ||
		fail "tank/pc/f reads back different"
	echo "$(($(arc_val data_size) - d0)) $(($(arc_val uncached) - u0))"
}
read -r dd_none un_none < <(pc_read)
[ "$dd_none" -lt $((1024 * 1024)) ] && [ "$un_none" -ge 128 ] && pass ||
	fail "primarycache=none: data grew by $dd_none, $un_none blocks not kept"
tarn_ok fs set primarycache=metadata tank/pc
read -r dd_meta un_meta < <(pc_read)
[ "$dd_meta" -lt $((1024 * 1024)) ] && [ "$un_meta" -ge 128 ] && pass ||
	fail "primarycache=metadata: data grew by $dd_meta, $un_meta blocks not kept"
tarn_ok fs inherit primarycache tank/pc
tarn_ok fs get -H -o value,source primarycache tank/pc
out_is "all	default"
read -r dd_all un_all < <(pc_read)
[ "$dd_all" -ge $((15 * 1024 * 1024)) ] && [ "$un_all" -eq 0 ] && pass ||
	fail "primarycache=all: data grew by $dd_all, $un_all blocks not kept"
echo "# primarycache none/metadata/all: ARC data +$((dd_none / 1024))/+$((dd_meta / 1024))/+$((dd_all / 1024)) KiB for a 16 MiB read"
tarn_err 1 "primarycache' must be one of" fs set primarycache=some tank/pc
tarn_ok fs set secondarycache=metadata tank/pc
tarn_ok fs get -H -o value secondarycache tank/pc
out_is "metadata"

e2e_done
