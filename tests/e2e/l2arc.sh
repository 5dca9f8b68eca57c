#!/bin/bash
# l2arc.sh — the L2ARC through tarnd: a pool with a cache device and a
# small ARC (arc_max 32M in the daemon's config file, l2arc_write_max
# raised so that the cache warms within the test).  A file five times the
# ARC is read block by block (O_DIRECT, past the kernel's page cache) in
# a scattered order: what the ARC evicts goes to the cache device
# (`zpool iostat -v` shows its writes); read again, most blocks come from
# the cache device (l2_hits), byte for byte.  After export and import the
# cache is warm at once (l2_rebuild_blocks, hits on the first pass), and
# so it is after a SIGKILL of the daemon.  With the cache device's data
# area scribbled over, every block still reads back right and the bad
# ones are counted (l2_cksum_bad).  `zpool remove` of the cache device
# while a reader runs: the reader sees no error.  Bad input: a cache
# device too small.
#
# Cleanup even on failure: the background reader killed by its PID
# (lib.sh's E2E_BGPIDS);
# lib.sh destroys the pool, stops the daemon by its PID, unmounts and
# removes the temp dir.
. "$(dirname "$0")/lib.sh"
describe "L2ARC: hits after eviction, warm after import and SIGKILL, bad cache bytes never returned, removal mid-read"
require_daemon_mounts

export TARN_CONFIG="$E2E_TMP/tarnd.conf"
printf 'arc_max=32M\narc_min=16M\nl2arc_write_max=1G\n' >"$TARN_CONFIG"

# l2 KEY: one figure of the daemon's ARC statistics (arc.stats)
l2() {
	"$TARN" arc-summary -j | python3 -c "import json,sys; print(json.load(sys.stdin)['stats']['$1'])"
}

cat >"$E2E_TMP/blocks.py" <<'EOF'
# blocks.py make FILE MIB | check FILE SEED: a file of 128 KiB blocks whose
# content follows from the block number (half random, half runs: lz4 takes
# it to about 60%); check reads every block with O_DIRECT in an order of
# SEED, compares, prints the number of bad blocks.
import mmap, os, random, sys
BS = 128 << 10
def block(i):
    r = random.Random(i)
    return r.randbytes(BS // 2) + bytes([i % 251]) * (BS // 2)
if sys.argv[1] == "make":
    with open(sys.argv[2], "wb") as f:
        for i in range(int(sys.argv[3]) * 8):
            f.write(block(i))
    sys.exit(0)
fd = os.open(sys.argv[2], os.O_RDONLY | os.O_DIRECT)
n = os.fstat(fd).st_size // BS
order = list(range(n))
random.Random(int(sys.argv[3])).shuffle(order)
buf = mmap.mmap(-1, BS)
bad = 0
for i in order:
    if os.preadv(fd, [buf], i * BS) != BS or buf[:] != block(i):
        bad += 1
print(bad)
EOF

mkdevs 2 512M
truncate -s 256M "$DEVDIR/cache0"
truncate -s 8M "$E2E_TMP/tiny"
tarn_ok pool create -m "$MNT" -O compression=lz4 -O atime=off tank "${DEV[0]}" \
	cache "$DEVDIR/cache0"
tarn pool status tank
out_has "cache"
ok python3 "$E2E_TMP/blocks.py" make "$MNT/f" 160
tarn_ok pool export tank
tarn_ok pool import -d "$DEVDIR" tank

# pass 1: from the pool; the evictions feed the cache device
run python3 "$E2E_TMP/blocks.py" check "$MNT/f" 1
[ "$RC" -eq 0 ] && [ "$(cat "$OUT")" = 0 ] && pass || { fail "pass 1 read bad blocks"; show_output; }
sleep 2                                 # the writer's idle flush
size1=$(l2 l2_size)
[ "$size1" -gt $((40 << 20)) ] && pass || fail "l2_size after pass 1 is $size1"
tarn pool iostat -v -Hp tank
grep -q "cache0" "$OUT" && pass || { fail "iostat -v does not show the cache device"; show_output; }

# pass 2: mostly from the cache device
h0=$(l2 l2_hits)
run python3 "$E2E_TMP/blocks.py" check "$MNT/f" 2
[ "$RC" -eq 0 ] && [ "$(cat "$OUT")" = 0 ] && pass || { fail "pass 2 read bad blocks"; show_output; }
h1=$(l2 l2_hits)
echo "# pass 2: $((h1 - h0)) L2 hits of 1280 blocks, l2_size $size1"
[ $((h1 - h0)) -gt 400 ] && pass || fail "only $((h1 - h0)) L2 hits on pass 2"

# export / import: warm at once
tarn_ok pool export tank
tarn_ok pool import -d "$DEVDIR" tank
rb=$(l2 l2_rebuild_blocks)
[ "$rb" -gt 200 ] && pass || fail "l2_rebuild_blocks after import is $rb"
h0=$(l2 l2_hits)
run python3 "$E2E_TMP/blocks.py" check "$MNT/f" 3
[ "$RC" -eq 0 ] && [ "$(cat "$OUT")" = 0 ] && pass || { fail "after import: bad blocks"; show_output; }
h1=$(l2 l2_hits)
echo "# after export/import: $rb blocks found again, $((h1 - h0)) hits on the first pass"
[ $((h1 - h0)) -gt 200 ] && pass || fail "only $((h1 - h0)) L2 hits after import"

# SIGKILL of the daemon: warm again after the restart
sleep 2
pid=$(daemon_pid) && pass || fail "no daemon to kill"
stop_daemon KILL
fusermount3 -u -z "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
tarn_ok pool status tank              # starts the daemon: it opens tank again
if [ "$RC" -ne 0 ] && [ -f "$TARN_RUNDIR/tarnd.log" ]; then
	tail -n 20 "$TARN_RUNDIR/tarnd.log" | sed 's/^/  tarnd.log: /' >&2
fi
for i in $(seq 50); do mountpoint -q "$MNT" && break; sleep 0.1; done
rb=$(l2 l2_rebuild_blocks)
[ "$rb" -gt 200 ] && pass || fail "l2_rebuild_blocks after SIGKILL is $rb"
h0=$(l2 l2_hits)
run python3 "$E2E_TMP/blocks.py" check "$MNT/f" 4
[ "$RC" -eq 0 ] && [ "$(cat "$OUT")" = 0 ] && pass || { fail "after SIGKILL: bad blocks"; show_output; }
h1=$(l2 l2_hits)
echo "# after SIGKILL: $rb blocks found again, $((h1 - h0)) hits"
[ $((h1 - h0)) -gt 200 ] && pass || fail "only $((h1 - h0)) L2 hits after the restart"

# the cache device's data scribbled over (past its labels and ring header):
# every block still right, the bad ones counted
python3 - "$DEVDIR/cache0" <<'EOF'
import os, sys
with open(sys.argv[1], "r+b") as f:
    for off in range(6 << 20, 240 << 20, 3 << 20):
        f.seek(off)
        f.write(b"\x5a" * (1 << 20))
EOF
c0=$(l2 l2_cksum_bad)
run python3 "$E2E_TMP/blocks.py" check "$MNT/f" 5
[ "$RC" -eq 0 ] && [ "$(cat "$OUT")" = 0 ] && pass || { fail "bad cache bytes reached a reader"; show_output; }
c1=$(l2 l2_cksum_bad)
echo "# scribbled: $((c1 - c0)) bad cache blocks caught"
[ $((c1 - c0)) -gt 0 ] && pass || fail "no bad cache block counted"
tarn pool status -x tank
out_has "is healthy"

# zpool remove of the cache device while a reader runs
python3 "$E2E_TMP/blocks.py" check "$MNT/f" 6 >"$E2E_TMP/bg.out" 2>&1 &
E2E_BGPIDS+=($!)
sleep 0.5
tarn_ok pool remove tank "$DEVDIR/cache0"
wait "${E2E_BGPIDS[0]}"
[ "$?" -eq 0 ] && [ "$(cat "$E2E_TMP/bg.out")" = 0 ] && pass ||
	{ fail "the reader during the removal: $(cat "$E2E_TMP/bg.out")"; }
tarn pool status tank
out_lacks "cache0"
run python3 "$E2E_TMP/blocks.py" check "$MNT/f" 7
[ "$RC" -eq 0 ] && [ "$(cat "$OUT")" = 0 ] && pass || { fail "reads after the removal"; show_output; }

# bad input
tarn_err 1 "" pool add tank cache "$E2E_TMP/tiny"
tarn pool status tank
out_lacks "tiny"
e2e_done
