#!/bin/bash
# Separate intent-log devices (SLOG) and the sync properties, through the
# CLI and the mount: fsync'd 4 KiB writes go to the log device (its write
# rate in iostat) while the main device writes little until a txg; the
# data of fsyncs survives a SIGKILL of the daemon (replayed from the log
# device); a log mirror whose one side was scribbled on before the replay
# still replays (self-heal from the other side, the checksum error
# counted); logbias=throughput keeps a dataset's log off the log device,
# sync=always logs writes without fsync, sync=disabled logs nothing;
# zpool import refuses a pool whose log device is missing with a message
# naming it and -m, and import -m imports it DEGRADED (the log vdev
# UNAVAIL; committed data intact, an fsync'd-only file lost with the
# log; new fsyncs work; zpool remove of the lost log makes it ONLINE, and
# so does zpool online of the device brought back, which takes the log).
# Bad input: import -m of a pool missing a data device, logbias=foo.
. "$(dirname "$0")/lib.sh"
describe "SLOG: log devices, logbias, sync, import -m"
require_daemon_mounts

mkdevs 5 1G         # sparse; a small pool syncs txgs for its space gate
MAIN=${DEV[0]} LOG=${DEV[1]}

cat >"$E2E_TMP/fsyncs.py" <<'EOF'
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
end = time.time() + float(sys.argv[2])
sync = len(sys.argv) < 4
while time.time() < end:
    os.write(fd, os.urandom(4096))
    if sync:
        os.fsync(fd)
    time.sleep(0.004)
os.close(fd)
EOF
cat >"$E2E_TMP/crash.py" <<'EOF'
import os, sys
data = open(sys.argv[1], "rb").read()
fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT, 0o644)
for off in range(0, len(data), 4096):
    os.write(fd, data[off:off + 4096])
    os.fsync(fd)
os.close(fd)
EOF
head -c 262144 /dev/urandom >"$E2E_TMP/crash.src"

# rounds FILE SECS [nosync]: write FILE for SECS s (fsync each 4 KiB unless
# nosync) while iostat takes 1-second rounds; $OUT holds them
rounds() {
	python3 "$E2E_TMP/fsyncs.py" "$@" &
	local pid=$!
	sleep 0.3
	tarn_ok pool iostat -vHpy tank 1 $(($2 - 1))
	wait "$pid" || fail "writer of $1 failed"
}
# devw DEV: the write bytes/s of DEV in each round of $OUT, one a line
devw() { awk -F'\t' -v n="$1" '$1 == n { print $7 + 0 }' "$OUT"; }
# scribble DEV: random bytes over the written extents of DEV's data area
scribble() {
	python3 - "$1" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
size = os.fstat(fd).st_size
off, end, n = 4 << 20, size - (512 << 10), 0
while off < end:
    try:
        data = os.lseek(fd, off, os.SEEK_DATA)
    except OSError:
        break
    if data >= end:
        break
    hole = min(os.lseek(fd, data, os.SEEK_HOLE), end)
    os.pwrite(fd, os.urandom(hole - data), data)
    n += hole - data
    off = hole
os.fsync(fd)
print(n)
PY
}
# maxw DEV: the largest of them
maxw() { devw "$1" | sort -n | tail -n 1; }

tarn_ok pool create -m "$MNT" tank "$MAIN" log "$LOG"
tarn_ok fs get -H -o value,source logbias tank
out_is "latency	default"
tarn_err 1 "^cannot set property for 'tank': 'logbias' must be one of 'latency \\| throughput'$" \
	fs set logbias=foo tank
tarn_ok fs get -H -o value logbias tank
out_is "latency"

# ---- fsync'd 4 KiB writes: the log device writes, the main device waits for a txg ----
rounds "$MNT/synced" 4
logw=$(maxw "$LOG")
[ "$logw" -gt 100000 ] && pass || fail "log device wrote $logw bytes/s during fsyncs"
# at most one of the three rounds holds a txg (every 5 s): the others show
# the main device (nearly) idle
quiet=$(paste <(devw "$MAIN") <(devw "$LOG") | awk '$1 * 8 < $2' | wc -l)
[ "$quiet" -ge 2 ] && pass || fail "main device wrote as much as the log: $(devw "$MAIN" | tr '\n' ' ')"

# ---- SIGKILL right after fsync: the log device replays it ----
ok python3 "$E2E_TMP/crash.py" "$E2E_TMP/crash.src" "$MNT/crash"
stop_daemon KILL
tarn_ok pool status tank                 # a new daemon imports and replays
ok cmp "$E2E_TMP/crash.src" "$MNT/crash"

# ---- logbias=throughput: that dataset's log stays off the log device ----
tarn_ok fs create -o logbias=throughput tank/tp
tarn_ok fs create tank/tp/kid
tarn_ok fs get -H -o value,source logbias tank/tp/kid
out_is "throughput	inherited from tank/tp"
rounds "$MNT/tp/kid/synced" 3
logw=$(maxw "$LOG")
[ "$logw" -lt 20000 ] && pass || fail "logbias=throughput: log device wrote $logw bytes/s"
ok python3 "$E2E_TMP/crash.py" "$E2E_TMP/crash.src" "$MNT/tp/kid/crash"
stop_daemon KILL
tarn_ok pool status tank
ok cmp "$E2E_TMP/crash.src" "$MNT/tp/kid/crash"    # logged in the normal class
tarn_ok fs inherit logbias tank/tp
rounds "$MNT/tp/kid/synced2" 3
logw=$(maxw "$LOG")
[ "$logw" -gt 100000 ] && pass || fail "logbias inherited back: log device wrote $logw bytes/s"

# ---- sync=always logs every write; sync=disabled logs nothing ----
tarn_ok fs create -o sync=always tank/sa
rounds "$MNT/sa/f" 3 nosync
logw=$(maxw "$LOG")
[ "$logw" -gt 100000 ] && pass || fail "sync=always without fsync: log device wrote $logw bytes/s"
tarn_ok fs create -o sync=disabled tank/sd
rounds "$MNT/sd/f" 3
logw=$(maxw "$LOG")
[ "$logw" -lt 20000 ] && pass || fail "sync=disabled: log device wrote $logw bytes/s"

# ---- import -m: the log device gone ----
head -c 1048576 /dev/urandom >"$E2E_TMP/kept.src"
ok cp "$E2E_TMP/kept.src" "$MNT/kept"
tarn_ok pool sync tank
tarn_ok pool export tank
# all there: the listing has a "logs" section and no complaint
tarn_ok pool import -d "$DEVDIR"
out_lacks "status:"
out_has "^	logs$"
out_has "^	  $LOG +ONLINE$"
mv "$LOG" "$E2E_TMP/log.away"     # out of the scanned directory
tarn_err 1 "^cannot import 'tank': .*the log device $LOG.*use '-m' to import the pool without the log device" \
	pool import -d "$DEVDIR" tank
tarn_ok pool import -d "$DEVDIR"
out_has "^  state: DEGRADED$"
out_has "^ status: The log device $LOG is missing from the system\\.$"
out_has "the '-m' flag"
out_has "^	logs$"
out_has "^	  $LOG +UNAVAIL"
tarn_ok pool import -m -d "$DEVDIR" tank
tarn_ok pool status tank
out_has "^ *state: DEGRADED$"
out_has "^	  $LOG +UNAVAIL "
tarn_ok pool list -H -o health tank
out_is "DEGRADED"
ok cmp "$E2E_TMP/kept.src" "$MNT/kept"
ok cmp "$E2E_TMP/crash.src" "$MNT/crash"
# new writes and fsyncs work (their log in the normal class) and survive a kill
ok python3 "$E2E_TMP/crash.py" "$E2E_TMP/crash.src" "$MNT/after"
stop_daemon KILL
tarn_ok pool status tank
out_has "^ *state: DEGRADED$"
ok cmp "$E2E_TMP/crash.src" "$MNT/after"
tarn_ok pool remove tank "$LOG"
tarn_ok pool status tank
out_has "^ *state: ONLINE$"
out_lacks "UNAVAIL"
tarn_ok pool list -H -o health tank
out_is "ONLINE"
ok cmp "$E2E_TMP/kept.src" "$MNT/kept"

# ---- an unreplayed log on the lost device: only it is lost ----
tarn_ok pool add tank log "${DEV[2]}"
tarn_ok pool sync tank
ok python3 "$E2E_TMP/crash.py" "$E2E_TMP/crash.src" "$MNT/lost"
stop_daemon KILL
rm -f "$TARN_CACHEFILE"                  # the next daemon does not open it
mv "${DEV[2]}" "$E2E_TMP/log2.away"
tarn_err 1 "^cannot import 'tank': .*the log device ${DEV[2]}.*'-m'" pool import -f -d "$DEVDIR" tank
tarn_ok pool import -f -m -d "$DEVDIR" tank
ok cmp "$E2E_TMP/kept.src" "$MNT/kept"
ok cmp "$E2E_TMP/crash.src" "$MNT/after"
# the fsync'd-only file: at most what was synced in a txg, never other bytes
if [ -e "$MNT/lost" ]; then
	sz=$(stat -c %s "$MNT/lost")
	ok cmp -n "$sz" "$E2E_TMP/crash.src" "$MNT/lost"
else
	pass
fi
# the device back: zpool online makes the log vdev take the log again
mv "$E2E_TMP/log2.away" "${DEV[2]}"
tarn_ok pool online tank "${DEV[2]}"
tarn_ok pool list -H -o health tank
out_is "ONLINE"
tarn_ok pool list -Hpv -o name,allocated tank
a0=$(awk -F'\t' -v n="${DEV[2]}" '$2 == n { print $3 }' "$OUT")
ok python3 "$E2E_TMP/crash.py" "$E2E_TMP/crash.src" "$MNT/back"
tarn_ok pool list -Hpv -o name,allocated tank
a1=$(awk -F'\t' -v n="${DEV[2]}" '$2 == n { print $3 }' "$OUT")
[ "${a1:-0}" -gt "${a0:-0}" ] && pass || fail "the log device back online took no log blocks ($a0 -> $a1)"
tarn_ok pool remove tank "${DEV[2]}"
tarn_ok pool list -H -o health tank
out_is "ONLINE"

# ---- bad input: -m does not cover a missing data device ----
tarn_ok pool add tank log "${DEV[3]}"
tarn_ok pool export tank
mv "$MAIN" "$E2E_TMP/main.away"
tarn_err 1 "^cannot import 'tank': one or more devices are missing; the pool cannot be opened$" \
	pool import -m -d "$DEVDIR" tank
mv "$E2E_TMP/main.away" "$MAIN"
tarn_ok pool import -d "$DEVDIR" tank
tarn_ok pool list -H -o health tank
out_is "ONLINE"
tarn_ok pool destroy tank

# ---- a log mirror: one side scribbled on before the replay heals from the other ----
tarn_ok pool create -m "$MNT" tank "$MAIN" log mirror "${DEV[3]}" "${DEV[4]}"
tarn_ok pool sync tank
ok python3 "$E2E_TMP/crash.py" "$E2E_TMP/crash.src" "$MNT/mirrored"
stop_daemon KILL
# every written extent of one side's data area (past the front labels and
# the boot area, before the back labels): its log blocks among them
n=$(scribble "${DEV[3]}")
[ "$n" -gt 0 ] && pass || fail "nothing written on ${DEV[3]} to scribble on"
tarn_ok pool status -p tank
ok cmp "$E2E_TMP/crash.src" "$MNT/mirrored"
tarn_ok pool status -p tank
cks=$(awk -v n="${DEV[3]}" '$1 == n { print $5 }' "$OUT")
[ "${cks:-0}" -gt 0 ] && pass || fail "no checksum error counted on ${DEV[3]}: $(cat "$OUT")"
tarn_ok pool destroy tank
e2e_done
