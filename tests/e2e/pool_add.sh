#!/bin/bash
# zpool add: a mirror pool grows by a second mirror (add -n shows the
# result first and changes nothing); files larger than
# the first mirror could hold are written through the mount and read back
# byte-exact after export and import and after the daemon is killed right
# after an add; a scrub is clean.  Mismatched layouts need -f; a device of
# the pool, a missing one, a too-small one, log/cache and a bad spec are
# refused with nothing changed.
. "$(dirname "$0")/lib.sh"
describe "zpool add: top-level vdevs, their space, export/import, crash"
require_daemon_mounts

mounted() {
	mountpoint -q "$1" 2>/dev/null
}
# tops: the top-level vdev rows of `pool status` (mirror-N, raidz1-N, devices)
tops() {
	tarn_ok pool status tank
	awk '/^\t  [^ ]/ { print $1 }' "$OUT" | tr '\n' ' '
}

mkdevs 8 192M
tarn_ok pool create -m "$MNT" tank mirror "${DEV[0]}" "${DEV[1]}"
mounted "$MNT" && pass || fail "pool not mounted"
tarn_ok pool list -Hp -o size tank
size1=$(cat "$OUT")

# refusals: nothing changes
tarn_err 1 "^cannot add to 'tank': mismatched replication level: pool uses 2-way mirror and new vdev is disk; use -f to override$" \
	pool add tank "${DEV[2]}"
tarn_err 1 "^cannot add to 'tank': mismatched replication level: pool uses 2-way mirror and new vdev is 3-way mirror" \
	pool add tank mirror "${DEV[2]}" "${DEV[3]}" "${DEV[4]}"
tarn_err 1 "^cannot add to 'tank': .*'${DEV[0]}' is part of imported pool 'tank'" \
	pool add tank mirror "${DEV[0]}" "${DEV[2]}"
tarn_err 1 "^cannot add to 'tank': .*$DEVDIR/nope" pool add tank mirror "${DEV[2]}" "$DEVDIR/nope"
truncate -s 32M "$DEVDIR/small0" "$DEVDIR/small1"
tarn_err 1 "^cannot add to 'tank': .*too small" pool add tank mirror "$DEVDIR/small0" "$DEVDIR/small1"
tarn_err 1 "^cannot add to 'tank': .*log" pool add tank log raidz "${DEV[2]}" "${DEV[3]}"
tarn_err 1 "^cannot add to 'tank': .*cache" pool add tank cache mirror "${DEV[2]}" "${DEV[3]}"
tarn_err 1 "^cannot add to 'tank': add hot spares by themselves" \
	pool add tank mirror "${DEV[2]}" "${DEV[3]}" spare "${DEV[4]}"
tarn_err 1 "^cannot add to 'nope': no such pool$" pool add nope mirror "${DEV[2]}" "${DEV[3]}"
tarn_err 2 "^missing vdev specification$" pool add tank
[ "$(tops)" = "mirror-0 " ] && pass || fail "refused adds changed the pool: $(tops)"

# -n: the tree as it would be, nothing changed; its checks are add's
tarn_ok pool add -n tank mirror "${DEV[2]}" "${DEV[3]}"
out_is "$(printf "would update 'tank' to the following configuration:\n\n\ttank\n\t  mirror-0\n\t    %s\n\t    %s\n\t  mirror\n\t    %s\n\t    %s" \
	"${DEV[0]}" "${DEV[1]}" "${DEV[2]}" "${DEV[3]}")"
tarn_err 1 "^cannot add to 'tank': mismatched replication level" pool add -n tank "${DEV[2]}"
tarn_err 2 "^-n is for top-level vdevs, not spares$" pool add -n tank spare "${DEV[4]}"
[ "$(tops)" = "mirror-0 " ] && pass || fail "add -n changed the pool: $(tops)"
tarn_ok pool history tank
out_lacks "zpool add"

# a file of 120 MiB: most of what the first mirror holds
ok dd if=/dev/urandom of="$MNT/f1" bs=1M count=120 conv=fsync status=none
tarn_ok pool add tank mirror "${DEV[2]}" "${DEV[3]}"
[ "$(tops)" = "mirror-0 mirror-1 " ] && pass || fail "after add: $(tops)"
out_has "^	    ${DEV[2]} +ONLINE +0 +0 +0$"
out_has "^	    ${DEV[3]} +ONLINE +0 +0 +0$"
tarn_ok pool list -Hp -o size tank
size2=$(cat "$OUT")
[ "$size2" -gt "$((size1 * 19 / 10))" ] && pass || fail "size $size1 -> $size2 after adding a mirror as big"
tarn_ok pool history tank
out_has "zpool add tank mirror ${DEV[2]} ${DEV[3]}$"
# another 150 MiB: more than the first mirror has left, so it spans both
ok dd if=/dev/urandom of="$MNT/f2" bs=1M count=150 conv=fsync status=none
tarn_ok pool list -Hpv -o name,allocated tank
out_has "^	mirror-1	[1-9][0-9]{7,}$"
sums=$(cd "$MNT" && sha256sum f1 f2)

# export and import: the new tree is in the labels
tarn_ok pool export tank
tarn_ok pool import -d "$DEVDIR" tank
[ "$(tops)" = "mirror-0 mirror-1 " ] && pass || fail "after import: $(tops)"
mounted "$MNT" && pass || fail "not mounted after import"
[ "$(cd "$MNT" && sha256sum f1 f2)" = "$sums" ] && pass || fail "files differ after import"

# the daemon killed right after an add: it comes back with the vdev
tarn_ok pool add -f tank "${DEV[4]}"
stop_daemon KILL
tarn_ok pool list -H -o name,health
out_is "tank	ONLINE"
[ "$(tops)" = "mirror-0 mirror-1 ${DEV[4]} " ] && pass || fail "after SIGKILL: $(tops)"
mounted "$MNT" && pass || fail "not mounted after SIGKILL"
[ "$(cd "$MNT" && sha256sum f1 f2)" = "$sums" ] && pass || fail "files differ after SIGKILL"
ok dd if=/dev/urandom of="$MNT/f3" bs=1M count=40 conv=fsync status=none
tarn_ok pool scrub -w tank
tarn_ok pool status tank
out_has "with 0 errors"
out_has "^errors: No known data errors$"
tarn_ok pool destroy tank

# raidz: the same layout goes in; another parity needs -f
tarn_ok pool create tank raidz1 "${DEV[0]}" "${DEV[1]}" "${DEV[2]}"
tarn_err 1 "^cannot add to 'tank': mismatched replication level: pool uses 3-wide raidz1 and new vdev is 3-wide raidz2" \
	pool add tank raidz2 "${DEV[3]}" "${DEV[4]}" "${DEV[5]}"
tarn_ok pool add tank raidz1 "${DEV[3]}" "${DEV[4]}" "${DEV[5]}"
truncate -s 192M "$DEVDIR/d8"
tarn_ok pool add -f tank raidz2 "${DEV[6]}" "${DEV[7]}" "$DEVDIR/d8"
[ "$(tops)" = "raidz1-0 raidz1-1 raidz2-2 " ] && pass || fail "raidz adds: $(tops)"
tarn_ok pool export tank
tarn_ok pool import -d "$DEVDIR" tank
[ "$(tops)" = "raidz1-0 raidz1-1 raidz2-2 " ] && pass || fail "raidz after import: $(tops)"
tarn_ok pool scrub -w tank
tarn_ok pool status -x tank
out_is "pool 'tank' is healthy"
e2e_done
