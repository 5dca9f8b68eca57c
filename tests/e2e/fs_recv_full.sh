#!/bin/bash
# zfs receive into a nearly full pool.  A 256 MiB pool holding ~120 MiB
# of files is sent a ~150 MiB stream.  Without -s the receive is refused
# with one line naming the lack of space, exit 1; no dataset is left, the
# files there are intact, and the pool's allocated space comes back to
# where it was.  With -s the partial state is kept (a resume token) and
# the pool still works (its files read back, scrub is clean); receive -A
# gives the space back.  Once room is made, the same stream is received
# whole and equals the source.
#
# Cleanup (lib.sh): pools destroyed (-f: unmounts), the daemon stopped by
# its PID, the temp dir removed.
. "$(dirname "$0")/lib.sh"
describe "zfs receive into a nearly full pool: refused, nothing left, space back; -s keeps a state that -A frees"
require_daemon_mounts

alloc() {
	"$TARN" pool get -Hp allocated "$1" 2>/dev/null | awk '{ v = $3 } END { print v + 0 }'
}
near() {        # near A B SLACK: |A - B| <= SLACK
	local d=$(($1 - $2))
	[ "${d#-}" -le "$3" ]
}

mkdevs 2 512M
tarn_ok pool create -m "$MNT/src" -O compression=off tank "${DEV[0]}"
truncate -s 256M "$E2E_TMP/small.img"
tarn_ok pool create -m "$MNT/small" -O compression=off small "$E2E_TMP/small.img"
tarn_ok fs create tank/big
for i in $(seq 1 15); do head -c $((10 << 20)) /dev/urandom >"$MNT/src/big/f$i"; done
sync -f "$MNT/src/big"
tarn_ok fs snapshot tank/big@s
run bash -c "'$TARN' fs send tank/big@s >'$E2E_TMP/big.s'"
[ "$RC" -eq 0 ] && pass || { fail "send tank/big@s"; show_output; }

tarn_ok fs create small/keep
for i in $(seq 1 12); do head -c $((10 << 20)) /dev/urandom >"$MNT/small/keep/k$i"; done
sync -f "$MNT/small/keep"
(cd "$MNT/small/keep" && sha256sum k*) >"$E2E_TMP/keep.sums"
tarn_ok pool sync small
A0=$(alloc small)
[ "$A0" -gt $((100 << 20)) ] && pass || fail "small holds only $A0 bytes"

# ---- without -s: refused, nothing left, space back
run bash -c "timeout -k 5 120 '$TARN' fs receive small/new <'$E2E_TMP/big.s'"
[ "$RC" -eq 1 ] && [ "$(wc -l <"$ERR")" -eq 1 ] &&
	grep -Eq "^cannot receive new filesystem stream: .*(out of space|No space left)" "$ERR" &&
	pass || { fail "receive into a full pool (rc $RC)"; show_output; }
tarn fs list -H -r -t all -o name small
out_lacks "small/new"
tarn_ok pool sync small
sleep 1
tarn_ok pool sync small
A1=$(alloc small)
near "$A1" "$A0" $((4 << 20)) && pass || fail "allocated $A1 after the refused receive, $A0 before"
(cd "$MNT/small/keep" && sha256sum -c --quiet "$E2E_TMP/keep.sums") >/dev/null 2>&1 && pass ||
	fail "small/keep's files changed"

# ---- with -s: a state kept, the pool works, -A frees it
run bash -c "timeout -k 5 120 '$TARN' fs receive -s small/part <'$E2E_TMP/big.s'"
[ "$RC" -eq 1 ] && grep -q '^Partially received snapshot is saved\.$' "$ERR" && pass ||
	{ fail "receive -s into a full pool (rc $RC)"; show_output; }
tok=$("$TARN" fs get -H -o value receive_resume_token small/part 2>/dev/null)
[ -n "$tok" ] && [ "$tok" != "-" ] && pass || fail "no resume token after the -s receive"
(cd "$MNT/small/keep" && sha256sum -c --quiet "$E2E_TMP/keep.sums") >/dev/null 2>&1 && pass ||
	fail "small/keep's files do not read back while the pool is full"
tarn_ok pool scrub -w small
tarn pool status -x small
out_has "is healthy"
tarn_ok fs receive -A small/part
tarn fs get -H -o value receive_resume_token small/part
[ "$RC" -ne 0 ] && pass || fail "small/part still there after receive -A"
tarn_ok pool sync small
sleep 1
tarn_ok pool sync small
A2=$(alloc small)
near "$A2" "$A0" $((4 << 20)) && pass || fail "allocated $A2 after receive -A, $A0 before"

# ---- room made: the same stream goes in whole
tarn_ok fs destroy -r small/keep
run bash -c "timeout -k 5 120 '$TARN' fs receive small/new <'$E2E_TMP/big.s'"
[ "$RC" -eq 0 ] && pass || { fail "receive once there is room (rc $RC)"; show_output; }
diff -r "$MNT/src/big" "$MNT/small/new" >/dev/null && pass || fail "small/new differs from tank/big"
tarn_ok pool scrub -w small
tarn pool status -x small
out_has "is healthy"
e2e_done
