#!/bin/bash
# Allocation classes and cache devices (zpool's log, special and cache
# vdevs): a pool created with all three shows them in status, list -v and
# iostat -v under zpool's section headers; metadata lands on the special
# mirror, and file blocks up to special_small_blocks too (the allocation
# counters of list -v say where); a full special class spills into the
# normal one and writes go on; fsync'd writes go to the log device (its
# write rate in iostat); a scrub repairs a damaged side of the special
# mirror; cache and log devices are added and removed; export/import and
# a daemon restart (the cache file) keep every class; bad input (a
# single-disk special on a mirror pool, devices too small or in use,
# removing a data or special vdev, bad special_small_blocks values) is
# refused with one line and changes nothing.
. "$(dirname "$0")/lib.sh"
describe "log, special and cache vdevs: config, placement, fallback, scrub, add/remove"
require_daemon_mounts

# alloc NAME: the ALLOC of vdev row NAME (mirror-N or a path) in list -v
alloc() {
	tarn_ok pool list -Hpv -o name,allocated tank
	awk -F'\t' -v n="$1" '$2 == n { print $3 }' "$OUT"
}
# sections: the section header lines of status, in order
sections() {
	tarn_ok pool status tank
	grep -E '^	(special|logs|cache|spares)' "$OUT" | tr -d '\t' | tr '\n' ' '
}
# tops: the data and class vdev rows of status (two-space indented names)
tops() {
	tarn_ok pool status tank
	awk '/^\t  [^ ]/ { print $1 }' "$OUT" | tr '\n' ' '
}

mkdevs 8 192M
truncate -s 64M "$DEVDIR/s0" "$DEVDIR/s1"
truncate -s 32M "$DEVDIR/small"
S0=$DEVDIR/s0 S1=$DEVDIR/s1

# ---- bad input at create: nothing is made ----
tarn_err 1 "^cannot create 'tank': mismatched replication level: pool uses 2-way mirror and new special vdev is disk; use -f to override$" \
	pool create tank mirror "${DEV[0]}" "${DEV[1]}" special "$S0"
tarn_err 1 "^cannot create 'tank': at least one data vdev is needed besides log, cache and special devices$" \
	pool create tank log "${DEV[0]}"
tarn_err 1 "^cannot create 'tank': .*small.*too small" \
	pool create tank mirror "${DEV[0]}" "${DEV[1]}" log "$DEVDIR/small"
tarn_err 1 "^cannot create 'tank': missing devices after 'cache'$" \
	pool create tank "${DEV[0]}" cache
tarn_err 1 "^cannot create 'tank': log devices must be single devices or mirrors, not 'raidz1'$" \
	pool create tank "${DEV[0]}" log raidz1 "${DEV[1]}" "${DEV[2]}"
tarn_err 1 "^cannot create 'tank': log, cache and special devices need feature flags \\(version 2\\)$" \
	pool create -o version=1 tank "${DEV[0]}" log "${DEV[1]}"
tarn_err 1 "^cannot open 'tank': no such pool$" pool status tank
# a pool without the feature (version 1) refuses them and names upgrade
tarn_ok pool create -o version=1 old "${DEV[0]}"
tarn_err 1 "^cannot add to 'old': the pool must be upgraded to add log, cache or special devices \\('zpool upgrade old'\\)$" \
	pool add old cache "${DEV[1]}"
tarn_ok pool destroy old

# ---- create with every class ----
tarn_ok pool create -m "$MNT" tank mirror "${DEV[0]}" "${DEV[1]}" \
	special mirror "$S0" "$S1" log "${DEV[2]}" cache "${DEV[3]}"
mountpoint -q "$MNT" && pass || fail "pool not mounted"
[ "$(sections)" = "special logs cache " ] && pass || fail "status sections: $(sections)"
[ "$(tops)" = "mirror-0 mirror-1 ${DEV[2]} ${DEV[3]} " ] && pass || fail "status rows: $(tops)"
out_has "^	special	$"
out_has "^	logs	$"
out_has "^	  ${DEV[2]} +ONLINE +0 +0 +0$"
out_has "^	cache$"
out_has "^	  ${DEV[3]} +ONLINE +0 +0 +0$"
tarn_ok pool list -v tank
out_has "^special +- +- +- "
out_has "^logs +- +- +- "
out_has "^cache +- +- +- "
tarn_ok pool iostat -v tank
out_has "^special +- +- +- +- +- +-$"
out_has "^logs +- +- +- +- +- +-$"
out_has "^cache +- +- +- +- +- +-$"
out_has "^  ${DEV[3]} "
tarn_ok pool status -j tank
cp "$OUT" "$E2E_TMP/status.json"
ok python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["pools"]["tank"]
assert list(p["vdevs"]["tank"]["vdevs"]) == ["mirror-0"], p["vdevs"]
assert list(p["special"]) == ["mirror-1"] and p["special"]["mirror-1"]["class"] == "special"
assert list(p["logs"]) == [sys.argv[2]] and list(p["l2cache"]) == [sys.argv[3]]
' "$E2E_TMP/status.json" "${DEV[2]}" "${DEV[3]}"
tarn_ok pool get -H -o value feature@allocation_classes tank
out_is "active"

# ---- bad input on a live pool: one line, nothing changed ----
tarn_err 1 "^cannot add to 'tank': mismatched replication level: pool uses 2-way mirror and new special vdev is disk; use -f to override$" \
	pool add tank special "${DEV[4]}"
tarn_err 1 "^cannot add to 'tank': '${DEV[0]}' is part of imported pool 'tank'" pool add tank cache "${DEV[0]}"
tarn_err 1 "^cannot add to 'tank': .*too small" pool add tank cache "$DEVDIR/small"
tarn_ok pool create other "${DEV[7]}"
tarn_err 1 "^cannot add to 'tank': .*'${DEV[7]}' is part of imported pool 'other'" \
	pool add tank log "${DEV[7]}"
tarn_ok pool destroy other
tarn_err 1 "^cannot remove '${DEV[0]}': only log, cache and hot spare devices can be removed" \
	pool remove tank "${DEV[0]}"
tarn_err 1 "^cannot remove '$S0': special vdevs cannot be removed" pool remove tank "$S0"
tarn_err 1 "^cannot remove 'mirror-1': special vdevs cannot be removed" pool remove tank mirror-1
tarn_err 1 "^cannot remove 'nope': no such device in pool$" pool remove tank nope
tarn_err 1 "^cannot set property for 'tank': invalid 'special_small_blocks=3000' property" \
	fs set special_small_blocks=3000 tank
tarn_err 1 "^cannot set property for 'tank': invalid 'special_small_blocks=2M' property" \
	fs set special_small_blocks=2M tank
[ "$(tops)" = "mirror-0 mirror-1 ${DEV[2]} ${DEV[3]} " ] && pass || fail "refusals changed the pool: $(tops)"

# ---- metadata goes to special, file data (above special_small_blocks) not ----
tarn_ok fs get -H -o value special_small_blocks tank
out_is "0"
n0=$(alloc mirror-0) s0=$(alloc mirror-1)
mkdir "$MNT/meta"
for i in $(seq 1 300); do mkdir "$MNT/meta/d$i"; : >"$MNT/meta/d$i/f"; done
ok dd if=/dev/urandom of="$MNT/big" bs=1M count=8 conv=fsync status=none
tarn_ok pool sync tank
n1=$(alloc mirror-0) s1=$(alloc mirror-1)
[ "$((s1 - s0))" -gt 200000 ] && pass || fail "special grew only $((s1 - s0)) bytes for 300 dirs"
[ "$((n1 - n0))" -ge 8388608 ] && pass || fail "normal grew only $((n1 - n0)) bytes for 8 MiB of data"
[ "$((s1 - s0))" -lt 4194304 ] && pass || fail "special took the file data: +$((s1 - s0))"

# ---- small file blocks (<= special_small_blocks) go to special, inherited ----
tarn_ok fs create tank/small
tarn_ok fs set special_small_blocks=32K tank
tarn_ok fs get -H -o value,source special_small_blocks tank/small
out_is "32K	inherited from tank"
n0=$(alloc mirror-0) s0=$(alloc mirror-1)
for i in $(seq 1 100); do
	head -c 16384 /dev/urandom >"$MNT/small/f$i"
done
ok sync -f "$MNT/small/f1"
tarn_ok pool sync tank
n1=$(alloc mirror-0) s1=$(alloc mirror-1)
[ "$((s1 - s0))" -ge 1400000 ] && pass || fail "special grew $((s1 - s0)) bytes for 1.6 MB of 16K files"
[ "$((n1 - n0))" -lt 1048576 ] && pass || fail "normal took the small files: +$((n1 - n0))"

# ---- fsync'd writes go to the log device ----
cat >"$E2E_TMP/fsyncs.py" <<'EOF'
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
end = time.time() + float(sys.argv[2])
while time.time() < end:
    os.write(fd, os.urandom(4096))
    os.fsync(fd)
os.close(fd)
EOF
python3 "$E2E_TMP/fsyncs.py" "$MNT/synced" 3 &
fs_pid=$!
sleep 0.5
tarn_ok pool iostat -vHp tank 1 2
wait "$fs_pid" && pass || fail "fsync loop failed"
# the second round (the last row of each device): writes per second
logw=$(awk -F'\t' -v n="${DEV[2]}" '$1 == n { w = $7 } END { print w + 0 }' "$OUT")
cachew=$(awk -F'\t' -v n="${DEV[3]}" '$1 == n { w = $7 } END { print w + 0 }' "$OUT")
[ "$logw" -gt 100000 ] && pass || fail "log device wrote $logw bytes/s during fsyncs"
[ "$cachew" -eq 0 ] && pass || fail "cache device wrote $cachew bytes/s"

# ---- add and remove cache and log devices ----
tarn_ok pool add tank cache "${DEV[4]}"
tarn_ok pool add tank log "${DEV[5]}"
[ "$(tops)" = "mirror-0 mirror-1 ${DEV[2]} ${DEV[5]} ${DEV[3]} ${DEV[4]} " ] && pass ||
	fail "after adds: $(tops)"
tarn_ok pool remove tank "${DEV[4]}"
# the first log vdev, with the fsyncs' chain, and another after it: a hole keeps ids
tarn_ok pool remove tank "${DEV[2]}"
[ "$(tops)" = "mirror-0 mirror-1 ${DEV[5]} ${DEV[3]} " ] && pass || fail "after removes: $(tops)"
ok python3 "$E2E_TMP/fsyncs.py" "$MNT/synced2" 0.5
tarn_ok pool remove tank "${DEV[5]}"
[ "$(tops)" = "mirror-0 mirror-1 ${DEV[3]} " ] && pass || fail "after removes: $(tops)"
[ "$(sections)" = "special cache " ] && pass || fail "sections after removes: $(sections)"
tarn_err 1 "^cannot remove '${DEV[5]}': no such device in pool$" pool remove tank "${DEV[5]}"
tarn_ok pool labelclear "${DEV[4]}"      # no label left: nothing to refuse
tarn_ok pool add tank log "${DEV[2]}"
[ "$(sections)" = "special logs cache " ] && pass || fail "sections after re-add: $(sections)"
tarn_ok pool iostat -v tank
out_has "^  ${DEV[2]} "
ok python3 "$E2E_TMP/fsyncs.py" "$MNT/synced3" 0.5
tarn_ok pool history tank
out_has "zpool remove tank ${DEV[5]}$"

# ---- export/import (directory scan) and a daemon restart keep every class ----
sums=$(cd "$MNT" && sha256sum big small/f1 small/f100 synced synced2 synced3)
tarn_ok pool export tank
tarn_ok pool import -d "$DEVDIR" tank
[ "$(tops)" = "mirror-0 mirror-1 ${DEV[2]} ${DEV[3]} " ] && pass || fail "after import: $(tops)"
[ "$(sections)" = "special logs cache " ] && pass || fail "sections after import: $(sections)"
[ "$(cd "$MNT" && sha256sum big small/f1 small/f100 synced synced2 synced3)" = "$sums" ] && pass ||
	fail "files differ after import"
stop_daemon TERM
[ "$(tops)" = "mirror-0 mirror-1 ${DEV[2]} ${DEV[3]} " ] && pass || fail "after restart: $(tops)"
out_has "^	  ${DEV[3]} +ONLINE +0 +0 +0$"

# ---- fsync'd data on the log device survives a SIGKILL of the daemon ----
head -c 1048576 /dev/urandom >"$E2E_TMP/crash.src"
cat >"$E2E_TMP/crash.py" <<'EOF'
import os, sys
data = open(sys.argv[1], "rb").read()
fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT, 0o644)
for off in range(0, len(data), 65536):
    os.write(fd, data[off:off + 65536])
    os.fsync(fd)
os.close(fd)
EOF
ok python3 "$E2E_TMP/crash.py" "$E2E_TMP/crash.src" "$MNT/crash"
stop_daemon KILL
tarn_ok pool status tank                 # a new daemon imports and replays
ok cmp "$E2E_TMP/crash.src" "$MNT/crash"

# ---- scrub covers special: a damaged side is repaired ----
tarn_ok pool sync tank
ok dd if=/dev/urandom of="$S0" bs=1M seek=4 count=20 conv=notrunc status=none
tarn_ok pool scrub -w tank
tarn_ok pool status tank
out_has "scrub repaired [1-9][0-9.]*[BKM] in .* with 0 errors"
out_has "^	    $S0 +ONLINE +0 +0 +[1-9]"
out_has "^errors: No known data errors$"
tarn_ok pool clear tank
tarn_ok pool scrub -w tank
tarn_ok pool status tank
out_has "scrub repaired 0B in .* with 0 errors"

# ---- a full special class spills into the normal one ----
tarn_ok fs set special_small_blocks=128K tank
n0=$(alloc mirror-0)
ok dd if=/dev/urandom of="$MNT/small/fill" bs=128K count=600 conv=fsync status=none
tarn_ok pool sync tank
n1=$(alloc mirror-0) s1=$(alloc mirror-1)
tarn_ok pool list -Hpv -o name,size tank
ssize=$(awk -F'\t' '$2 == "mirror-1" { print $3 }' "$OUT")
[ "$((s1 * 100 / ssize))" -ge 85 ] && pass || fail "special only $s1 of $ssize bytes used"
[ "$((n1 - n0))" -gt 10485760 ] && pass || fail "normal took only $((n1 - n0)) bytes of the spill"
ok cmp -n 1 "$MNT/small/fill" "$MNT/small/fill"
ok dd if="$MNT/small/fill" of=/dev/null bs=1M status=none
tarn_ok pool scrub -w tank
tarn_ok pool status -x tank
out_is "pool 'tank' is healthy"

# ---- add -n shows the sections; a cache device gone at import is UNAVAIL ----
# a log mirror: a side is refused (detach it), the mirror goes by its name
tarn_ok pool add tank log mirror "${DEV[5]}" "${DEV[6]}"
tarn_err 1 "^cannot remove '${DEV[6]}': '${DEV[6]}' is part of log vdev mirror-[0-9]+: detach it" \
	pool remove tank "${DEV[6]}"
tarn_ok pool status tank
mname=$(awk '/^\tlogs/ { f = 1 } f && /^\t  mirror-/ { print $1; exit }' "$OUT")
tarn_ok pool remove tank "$mname"
[ "$(sections)" = "special logs cache " ] && pass || fail "sections after the mirror: $(sections)"
tarn_ok pool add -n tank log "${DEV[5]}"
out_is "$(printf "would update 'tank' to the following configuration:\n\n\ttank\n\t  mirror-0\n\t    %s\n\t    %s\nspecial\n\t  mirror-1\n\t    %s\n\t    %s\n\tlogs\n\t  %s\n\t  %s" \
	"${DEV[0]}" "${DEV[1]}" "$S0" "$S1" "${DEV[2]}" "${DEV[5]}" | sed 's/^special/\tspecial/')"
tarn_ok pool export tank
mv "${DEV[3]}" "$E2E_TMP/cache-away"
tarn_ok pool import -d "$DEVDIR" tank
tarn_ok pool status tank
out_has "^	  ${DEV[3]} +UNAVAIL +0 +0 +0  cannot open$"
ok cmp "$E2E_TMP/crash.src" "$MNT/crash"
tarn_ok pool remove tank "${DEV[3]}"
[ "$(sections)" = "special logs " ] && pass || fail "sections after removing a gone cache: $(sections)"
e2e_done
