#!/bin/bash
# zfs send --saved: the partial state of a resumable receive, sent on.
# Host A sends tank/src@a to host B, cut short under receive -s: B holds a
# partial state (receive_resume_token).  `zfs send --saved far/part` on
# B, received on A as tank/copy, ends in the same partial state: no
# snapshot, not listed, the same resume token; then A's `send -t TOKEN |
# receive -s tank/copy` completes it, file by file equal to the source,
# with the source's guid.  The same for an incremental stream (the work
# clone of the base travels as an incremental stream from the base).  A
# --saved stream cut short again under -s still resumes from the original
# source (a prefix of a prefix).  Refused: --saved of a file system with
# no partial state, of one that does not exist; a --saved stream into a
# target that has a partial state of its own; a saved stream with a
# flipped byte (nothing left behind without -s).  -nvP gives an estimate.
#
# Cleanup (send_lib.bash, lib.sh): pools destroyed on both daemons, both
# daemons stopped by their PIDs, the temp dir removed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/send_lib.bash"
describe "zfs send --saved: a partial receive sent on, then completed with send -t"
require_daemon_mounts
E2E_CMD_TIMEOUT=90

mkdevs 1 384M s
tarn_ok pool create -m "$MNT" -O atime=off tank "${DEV[0]}"
mkdevs 1 384M f
tarnb_ok pool create -m "$E2E_TMP/far" -O atime=off far "${DEV[0]}"

tarn_ok fs create tank/src
S=$MNT/src
check "bulk files" python3 "$SEND_TREE" bulk "$S" 24
mkdir "$S/tree"
check "a tree of every kind" python3 "$SEND_TREE" build "$S/tree"
sync -f "$S"
tarn_ok fs snapshot tank/src@a
manifest "$S/.zfs/snapshot/a" ma
check "changes" python3 - "$S" <<'EOF'
import os, sys
root = sys.argv[1]
with open(os.path.join(root, "L000"), "r+b") as f:
    f.write(os.urandom(3 << 20))
with open(os.path.join(root, "new-after-a"), "wb") as f:
    f.write(os.urandom(5 << 20))
os.unlink(os.path.join(root, "d00", "s00003"))
EOF
sync -f "$S"
tarn_ok fs snapshot tank/src@b
manifest "$S/.zfs/snapshot/b" mb
FULL=$E2E_TMP/full.s
INC=$E2E_TMP/inc.s
send_to_file a "$FULL" tank/src@a
send_to_file a "$INC" -i @a tank/src@b
FSIZE=$(stat -c %s "$FULL")
ISIZE=$(stat -c %s "$INC")
GUID_A=$(prop a tank/src@a guid)
GUID_B=$(prop a tank/src@b guid)

token_on() {    # token_on HOST FS
	on "$1" timeout -k 5 30 "$TARN" fs get -H -o value receive_resume_token "$2" 2>/dev/null
}

# ---- a full stream: cut on B, sent on from B to A, completed from A's source
recv_from b --truncate $((FSIZE / 2)) "$FULL" -- -s far/part
[ "$RC" -eq 1 ] && pass || { fail "receive -s of a cut stream (rc $RC)"; show_output; }
TOKB=$(token_on b far/part)
[ -n "$TOKB" ] && [ "$TOKB" != "-" ] && pass || fail "no token on far/part"

tarnb fs send -nvP --saved far/part
[ "$RC" -eq 0 ] && grep -Eq $'^full\tfar/part\t[0-9]+$' "$OUT" &&
	grep -Eq $'^size\t[0-9]+$' "$OUT" && pass || { fail "send -nvP --saved"; show_output; }
est=$(awk '$1 == "size" { print $2 }' "$OUT")
send_to_file b "$E2E_TMP/saved.s" --saved far/part
SSIZE=$(stat -c %s "$E2E_TMP/saved.s")
[ "$SSIZE" -lt "$FSIZE" ] && [ "$SSIZE" -gt $((FSIZE / 4)) ] && pass ||
	fail "the saved stream is $SSIZE bytes (the full one $FSIZE, half of it received)"
[ -n "$est" ] && [ "$est" -gt $((SSIZE / 2)) ] && [ "$est" -lt $((SSIZE * 2)) ] && pass ||
	fail "estimate $est for a saved stream of $SSIZE bytes"
# sending it changed nothing on B
[ "$(token_on b far/part)" = "$TOKB" ] && pass || fail "far/part's token changed by send --saved"

recv_from a "$E2E_TMP/saved.s" -- tank/copy
[ "$RC" -eq 0 ] && grep -q '^Partially received snapshot is saved\.$' "$ERR" && pass ||
	{ fail "receive of a --saved stream (rc $RC)"; show_output; }
[ "$(token_on a tank/copy)" = "$TOKB" ] && pass ||
	fail "tank/copy's token '$(token_on a tank/copy)' is not B's '$TOKB'"
tarn fs list -H -r -t all -o name tank
out_lacks "tank/copy@a"
out_lacks "tank/copy"
# a second --saved stream into it is refused: it has a partial state
recv_from a "$E2E_TMP/saved.s" -- tank/copy
[ "$RC" -eq 1 ] && grep -q 'contains partially-complete state' "$ERR" && pass ||
	{ fail "a saved stream into a partial state (rc $RC)"; show_output; }
xfer_ok a a -t "$TOKB" -- -s tank/copy
same_tree "tank/copy completed from the saved state" ma "$(mnt_of a tank/copy)"
[ "$(prop a tank/copy@a guid)" = "$GUID_A" ] && pass || fail "tank/copy@a has another guid"
[ "$(token_on a tank/copy)" = "-" ] && pass || fail "tank/copy still has a token"
# B's own partial state completes too (it was only read)
xfer_ok a b -t "$TOKB" -- -s far/part
same_tree "far/part completed" ma "$(mnt_of b far/part)"

# ---- an incremental stream: the work clone of @a goes as an increment
tarnb_ok fs snapshot far/part@local-unused
tarnb_ok fs destroy far/part@local-unused
recv_from b --truncate $((ISIZE / 2)) "$INC" -- -s -F far/part
[ "$RC" -eq 1 ] && pass || { fail "receive -s of a cut incremental (rc $RC)"; show_output; }
TOKI=$(token_on b far/part)
[ -n "$TOKI" ] && [ "$TOKI" != "-" ] && pass || fail "no token after the cut incremental"
same_tree "far/part keeps @a's files meanwhile" ma "$(mnt_of b far/part)"
send_to_file b "$E2E_TMP/saved-i.s" --saved far/part
ISAVED=$(stat -c %s "$E2E_TMP/saved-i.s")
[ "$ISAVED" -lt "$ISIZE" ] && pass || fail "saved incremental $ISAVED bytes >= the stream's $ISIZE"
recv_from a "$E2E_TMP/saved-i.s" -- -F tank/copy
[ "$RC" -eq 0 ] && [ "$(token_on a tank/copy)" = "$TOKI" ] && pass ||
	{ fail "receive of the saved incremental (rc $RC, token $(token_on a tank/copy))"; show_output; }
same_tree "tank/copy keeps @a's files under its partial state" ma "$(mnt_of a tank/copy)"
xfer_ok a a -t "$TOKI" -- -s -F tank/copy
same_tree "tank/copy completed to @b" mb "$(mnt_of a tank/copy)"
[ "$(prop a tank/copy@b guid)" = "$GUID_B" ] && pass || fail "tank/copy@b has another guid"

# ---- a saved stream cut again: its own partial state resumes from the source
recv_from a --truncate $((SSIZE / 2)) "$E2E_TMP/saved.s" -- -s tank/again
[ "$RC" -eq 1 ] && pass || { fail "a cut saved stream under -s (rc $RC)"; show_output; }
TOK2=$(token_on a tank/again)
[ -n "$TOK2" ] && [ "$TOK2" != "-" ] && pass || fail "no token on tank/again"
xfer_ok a a -t "$TOK2" -- -s tank/again
same_tree "tank/again completed from a cut saved stream" ma "$(mnt_of a tank/again)"

# ---- bad input
tarn_err 1 "^cannot send 'tank/src': 'tank/src' does not have any saved receive state\$" \
	fs send --saved tank/src
tarn_err 1 "^cannot send 'tank/nosuch': dataset does not exist\$" fs send --saved tank/nosuch
tarn fs send --saved tank/src@a
[ "$RC" -eq 1 ] && pass || fail "send --saved of a snapshot name (rc $RC)"
tarn fs send --saved -i @a tank/src
[ "$RC" -eq 2 ] && pass || fail "send --saved -i: usage error expected (rc $RC)"
state a tank "$E2E_TMP/st0"
recv_from a --flip $((SSIZE / 3)) "$E2E_TMP/saved.s" -- tank/flipped
[ "$RC" -eq 1 ] && grep -Eq '^cannot receive new filesystem stream: record [0-9]+ \(' "$ERR" &&
	[ "$(wc -l <"$ERR")" -eq 1 ] && pass || { fail "a flipped saved stream (rc $RC)"; show_output; }
state a tank "$E2E_TMP/st1"
cmp -s "$E2E_TMP/st0" "$E2E_TMP/st1" && pass || fail "a refused saved stream changed tank"
tarn fs get -H -o value receive_resume_token tank/flipped
[ "$RC" -eq 1 ] && pass || { fail "tank/flipped left something without -s"; show_output; }
tarn_ok pool scrub -w tank
tarn pool status -x tank
out_has "is healthy"
e2e_done
