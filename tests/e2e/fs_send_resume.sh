#!/bin/bash
# Resumable receives and bad input for zfs send/receive.  receive -s of a
# stream cut short (head -c of a saved stream) fails with zfs's lines
# ("Partially received snapshot is saved" and the send -t command to go
# on), sets receive_resume_token (zfs get, zfs list -o), and `send -t
# TOKEN | receive -s` completes it to a file system equal to the source;
# the token is gone then.  The same for an incremental stream, whose
# target shows its old state meanwhile.  A partial state refuses other
# streams; receive -A abandons it.  Bad
# input: send of a missing snapshot, an incremental base that is not an
# earlier snapshot, a stream of random bytes, a stream with a flipped
# byte, an incremental stream into a file system without its base: one
# line "cannot ...", exit 1, the target unchanged (or absent).  Usage
# errors exit 2 with the usage.
#
# Cleanup (lib.sh): pools destroyed with -f (unmounts), the daemon stopped
# by its PID, mounts under the temp dir detached, the temp dir removed.
. "$(dirname "$0")/lib.sh"
describe "zfs receive -s / send -t / receive -A, and bad streams and names"
require_daemon_mounts

sig() {
	(cd "$1" && find . -printf '%p %y %m %U %G %s %n %T@ %l\n' | LC_ALL=C sort)
}
same_tree() {
	if diff -r "$1" "$2" >/dev/null 2>&1 && [ "$(sig "$1")" = "$(sig "$2")" ]; then
		pass
	else
		fail "$3: $2 differs from $1"
		diff <(sig "$1") <(sig "$2") | head -10 | sed 's/^/  /' >&2
	fi
}
recv_from() {   # recv_from FILE ARGS...: receive ARGS < FILE; RC, OUT, ERR
	local f=$1
	shift
	timeout -k 5 60 "$TARN" fs receive "$@" <"$f" >"$OUT" 2>"$ERR"
	RC=$?
}
token_of() {
	"$TARN" fs get -H -o value receive_resume_token "$1" 2>/dev/null
}

mkdevs 2 256M
tarn_ok pool create -m "$MNT/src" tank "${DEV[0]}"
tarn_ok pool create -m "$MNT/dst" tank2 "${DEV[1]}"
tarn_ok fs set atime=off tank2
tarn_ok fs create tank/a
A=$MNT/src/a
mkdir "$A/d"
for i in 1 2 3 4 5 6; do head -c 700000 /dev/urandom >"$A/d/f$i"; done
printf 'small\n' >"$A/s"
sync -f "$A"
tarn_ok fs snapshot tank/a@s1
timeout 60 "$TARN" fs send tank/a@s1 >"$E2E_TMP/full.s" && pass || fail "send tank/a@s1"
size=$(stat -c %s "$E2E_TMP/full.s")

# ---- -s: cut short, the token, send -t completes it (full, then incremental)
head -c $((size * 2 / 3)) "$E2E_TMP/full.s" >"$E2E_TMP/cut.s"
recv_from "$E2E_TMP/cut.s" -s tank2/r
[ "$RC" -eq 1 ] && grep -q '^cannot receive new filesystem stream: ' "$ERR" &&
	grep -q '^Partially received snapshot is saved\.$' "$ERR" &&
	grep -Eq '^    zfs send -t [^ ]+$' "$ERR" && pass ||
	{ fail "receive -s of a cut stream (rc $RC)"; show_output; }
tok=$(token_of tank2/r)
[ -n "$tok" ] && [ "$tok" != "-" ] && pass || fail "no receive_resume_token after the cut (got '$tok')"
grep -qF -- "zfs send -t $tok" "$ERR" && pass || fail "the hint does not name the token"
run "$TARN" fs list -H -o name,receive_resume_token tank2/r
[ "$RC" -eq 0 ] && [ "$(cut -f2 "$OUT")" = "$tok" ] && pass ||
	{ fail "zfs list -o receive_resume_token"; show_output; }
run bash -c "'$TARN' fs send -nvP -t '$tok'"
[ "$RC" -eq 0 ] && grep -Eq $'^full\ttank/a@s1\t[0-9]+$' "$OUT" && pass ||
	{ fail "send -nvP -t TOKEN"; show_output; }
run bash -c "'$TARN' fs send -t '$tok' | '$TARN' fs receive -s tank2/r"
[ "$RC" -eq 0 ] && pass || { fail "send -t | receive -s (rc $RC)"; show_output; }
same_tree "$A/.zfs/snapshot/s1" "$MNT/dst/r" "the resumed receive"
[ "$(token_of tank2/r)" = "-" ] && pass || fail "the token is still set after the resume"

# an incremental stream cut short: the target keeps its old state, the
# token resumes it
for i in 7 8 9; do head -c 700000 /dev/urandom >"$A/d/g$i"; done
rm "$A/d/f1"
sync -f "$A"
tarn_ok fs snapshot tank/a@i2
timeout 60 "$TARN" fs send -i @s1 tank/a@i2 >"$E2E_TMP/inc_i2.s" && pass || fail "send -i @s1 @i2"
isize=$(stat -c %s "$E2E_TMP/inc_i2.s")
head -c $((isize * 2 / 3)) "$E2E_TMP/inc_i2.s" >"$E2E_TMP/inc_cut.s"
recv_from "$E2E_TMP/inc_cut.s" -s tank2/r
[ "$RC" -eq 1 ] && grep -q '^cannot receive incremental stream: ' "$ERR" && pass ||
	{ fail "receive -s of a cut incremental stream (rc $RC)"; show_output; }
itok=$(token_of tank2/r)
[ -n "$itok" ] && [ "$itok" != "-" ] && pass || fail "no token after the cut incremental"
same_tree "$A/.zfs/snapshot/s1" "$MNT/dst/r" "the target while its incremental receive is partial"
run bash -c "'$TARN' fs send -t '$itok' | '$TARN' fs receive -s tank2/r"
[ "$RC" -eq 0 ] && pass || { fail "send -t | receive -s of the incremental (rc $RC)"; show_output; }
same_tree "$A/.zfs/snapshot/i2" "$MNT/dst/r" "the resumed incremental receive"
[ "$(token_of tank2/r)" = "-" ] && pass || fail "the token is still set after the incremental resume"

# a partial state refuses another stream that is not its resume
head -c $((size / 2)) "$E2E_TMP/full.s" >"$E2E_TMP/half.s"
recv_from "$E2E_TMP/half.s" -s tank2/r2
[ "$RC" -eq 1 ] && pass || { fail "receive -s of half a stream (rc $RC)"; show_output; }
[ "$(token_of tank2/r2)" != "-" ] && pass || fail "no token for tank2/r2"
recv_from "$E2E_TMP/full.s" -F tank2/r2
[ "$RC" -eq 1 ] && [ "$(wc -l <"$ERR")" -eq 1 ] &&
	grep -q 'contains partially-complete state from "zfs receive -s"' "$ERR" && pass ||
	{ fail "a stream that is not the resume, into a partial state (rc $RC)"; show_output; }

# ---- -A abandons it; then a fresh receive works
tarn_ok fs receive -A tank2/r2
[ "$(token_of tank2/r2)" != "-" ] 2>/dev/null && "$TARN" fs list tank2/r2 >/dev/null 2>&1 &&
	fail "receive -A left the partial state" || pass
tarn_err 1 "does not have any resumable receive state to abort" fs receive -A tank2/r
recv_from "$E2E_TMP/full.s" tank2/r2
[ "$RC" -eq 0 ] && pass || { fail "receive after -A (rc $RC)"; show_output; }
same_tree "$A/.zfs/snapshot/s1" "$MNT/dst/r2" "received after -A"

# ---- without -s a cut stream leaves nothing
recv_from "$E2E_TMP/cut.s" tank2/gone
[ "$RC" -eq 1 ] && [ "$(wc -l <"$ERR")" -eq 1 ] &&
	grep -q '^cannot receive new filesystem stream: ' "$ERR" && pass ||
	{ fail "a cut stream without -s (rc $RC)"; show_output; }
! "$TARN" fs list tank2/gone >/dev/null 2>&1 && pass || fail "tank2/gone exists after a cut stream"

# ---- bad input: one line, exit 1, nothing changed
tarn_err 1 "^cannot (send|open) 'tank/a@nope': dataset does not exist" fs send tank/a@nope
printf 'x' >"$A/x"
sync -f "$A"
tarn_ok fs snapshot tank/a@s2
run bash -c "'$TARN' fs send -i @s2 tank/a@s1 >/dev/null"
[ "$RC" -eq 1 ] && [ "$(wc -l <"$ERR")" -eq 1 ] &&
	grep -q "^cannot send 'tank/a@s1': " "$ERR" && pass ||
	{ fail "send -i of a later base (rc $RC)"; show_output; }
head -c 100000 /dev/urandom >"$E2E_TMP/random.s"
recv_from "$E2E_TMP/random.s" tank2/rand
[ "$RC" -eq 1 ] && [ "$(wc -l <"$ERR")" -eq 1 ] && grep -q '^cannot receive' "$ERR" && pass ||
	{ fail "a random stream (rc $RC)"; show_output; }
! "$TARN" fs list tank2/rand >/dev/null 2>&1 && pass || fail "tank2/rand exists"
: >"$E2E_TMP/empty.s"
recv_from "$E2E_TMP/empty.s" tank2/rand
[ "$RC" -eq 1 ] && [ "$(wc -l <"$ERR")" -eq 1 ] && grep -q '^cannot receive' "$ERR" && pass ||
	{ fail "an empty stream (rc $RC)"; show_output; }

# a flipped byte in the middle: refused, the target unchanged
cp "$E2E_TMP/full.s" "$E2E_TMP/flip.s"
off=$((size / 2))
b=$(od -An -tu1 -j "$off" -N1 "$E2E_TMP/flip.s" | tr -d ' ')
printf "$(printf '\\%03o' $(((b ^ 1) & 255)))" |
	dd of="$E2E_TMP/flip.s" bs=1 seek="$off" conv=notrunc status=none
recv_from "$E2E_TMP/flip.s" tank2/flip
[ "$RC" -eq 1 ] && [ "$(wc -l <"$ERR")" -eq 1 ] && grep -q '^cannot receive' "$ERR" && pass ||
	{ fail "a stream with a flipped byte (rc $RC)"; show_output; }
! "$TARN" fs list tank2/flip >/dev/null 2>&1 && pass || fail "tank2/flip exists"

# an incremental stream into a file system without its base
timeout 60 "$TARN" fs send -i @s1 tank/a@s2 >"$E2E_TMP/inc.s" && pass || fail "send -i"
before=$(sig "$MNT/dst/r")
run bash -c "'$TARN' fs send tank/a@s2 | '$TARN' fs receive tank2/other"
recv_from "$E2E_TMP/inc.s" tank2/nothere
[ "$RC" -eq 1 ] && [ "$(wc -l <"$ERR")" -eq 1 ] &&
	grep -q "^cannot receive incremental stream: " "$ERR" && pass ||
	{ fail "incremental into a missing file system (rc $RC)"; show_output; }
recv_from "$E2E_TMP/inc.s" tank2/other
[ "$RC" -eq 1 ] && grep -q "^cannot receive incremental stream: " "$ERR" && pass ||
	{ fail "incremental into a file system without its base (rc $RC)"; show_output; }
[ "$(sig "$MNT/dst/r")" = "$before" ] && pass || fail "tank2/r changed"

# ---- usage errors: exit 2, the usage after the line
tarn_err 2 "missing snapshot argument" fs send
tarn_err 2 "too many arguments" fs send tank/a@s1 tank/a@s2
tarn_err 2 "invalid option 'Z'" fs send -Z tank/a@s1
tarn_err 2 "invalid flags combined with -t" fs send -R -t xyz
tarn_err 2 "only one of -i or -I" fs send -i @s1 -I @s1 tank/a@s2
tarn_err 2 "missing argument for 'i' option" fs send tank/a@s1 -i
tarn_err 2 "missing snapshot argument" fs receive
tarn_err 2 "mutually exclusive" fs receive -d -e tank2
tarn_err 2 "missing '=' for property argument" fs receive -o compression tank2/x
tarn_err 2 "invalid option combined with -A" fs receive -A -F tank2/x
grep -q '^usage:' "$ERR" && pass || { fail "no usage after a usage error"; show_output; }
tarn_err 1 "^cannot send 'tank/a': missing '@' delimiter in snapshot name" fs send tank/a
run bash -c "'$TARN' fs send -t garbage >/dev/null"
[ "$RC" -eq 1 ] && [ "$(wc -l <"$ERR")" -eq 1 ] && grep -q "resume token is corrupt" "$ERR" &&
	pass || { fail "send -t garbage (rc $RC)"; show_output; }

tarn_ok pool scrub -w tank2
tarn_ok pool status -x tank2
e2e_done
