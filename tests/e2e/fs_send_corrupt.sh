#!/bin/bash
# Damaged streams are refused, and refused cleanly: a ~64 MiB stream of
# mixed files (large and 4 KiB) and an incremental one are fed to
# zfs receive with one byte flipped at sampled positions (the first
# bytes, spread over the stream, the last bytes) and cut off at sampled
# points: every time receive exits 1 with ONE line naming the record
# ("record N") and the target is as before (zfs list -t all the same:
# no new file system, snapshot or hidden dataset; the old files).  With
# -s a cut-off receive leaves receive_resume_token, and
# `zfs send -t TOKEN | zfs receive -s` completes it to the same files;
# receive -A drops such a state.  Random bytes, an empty stream, a stream
# of a newer format version and an incremental stream onto the wrong
# base (or no target) get one-line errors, exit 1, nothing changed.  At
# the end a scrub of the target pool is clean.
#
# Knobs: SEND_MIB (stream size, default 64), SEND_FLIPS (flipped
# positions, default 40), SEND_CUTS (cut points, default 12), SEND_SEED
# (the positions' seed, printed; replays a run).
#
# Cleanup (send_lib.bash, lib.sh): pools destroyed, the daemon stopped by
# its PID, mounts detached, stream files removed with the temp dir.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/send_lib.bash"
describe "flipped bytes, cut-off, random, empty, newer and misplaced streams: one-line errors, target unchanged, -s resumes"
require_daemon_mounts
MIB=${SEND_MIB:-64}
FLIPS=${SEND_FLIPS:-40}
CUTS=${SEND_CUTS:-12}
SEED=${SEND_SEED:-$(( (RANDOM << 15 | RANDOM) + 1 ))}
echo "# seed $SEED (replay with SEND_SEED=$SEED), stream of ~$MIB MiB, $FLIPS flips, $CUTS cuts"
E2E_CMD_TIMEOUT=$((60 + MIB))

# section TEXT: a progress line, with the seconds since the start
section() {
	echo "# [${SECONDS}s] $*"
}

POOLOPTS=(-O atime=off)
mkdevs 1 $((MIB * 3 + 256))M s
tarn_ok pool create -m "$MNT" "${POOLOPTS[@]}" tank "${DEV[0]}"
mkdevs 1 $((MIB * 5 + 256))M t
tarn_ok pool create -m "$E2E_TMP/dst" "${POOLOPTS[@]}" dst "${DEV[0]}"

# --- the source: @a (~MIB MiB) and @b (some of it changed)
section "the source"
tarn_ok fs create tank/src
S=$MNT/src
check "bulk files" python3 "$SEND_TREE" bulk "$S" "$MIB"
sync -f "$S"
tarn_ok fs snapshot tank/src@a
manifest "$S/.zfs/snapshot/a" ma
# (the changes keep every directory's entry count: how a growing
# directory is received is fs_send_roundtrip's business, not this test's)
check "changes" python3 - "$S" <<'EOF'
import os, sys
root = sys.argv[1]
with open(os.path.join(root, "L000"), "r+b") as f:
    f.seek(1 << 20)
    f.write(os.urandom(3 << 20))
os.unlink(os.path.join(root, "d00", "s00007"))
os.mkdir(os.path.join(root, "d00", "s00007"))
os.rename(os.path.join(root, "d00", "s00008"), os.path.join(root, "d00", "renamed"))
for i in range(200):
    with open(os.path.join(root, "d00", "s00007", "new%03d" % i), "wb") as f:
        f.write(os.urandom(4096))
EOF
sync -f "$S"
tarn_ok fs snapshot tank/src@b
manifest "$S/.zfs/snapshot/b" mb
echo extra >"$S/L000"
sync -f "$S"
tarn_ok fs snapshot tank/src@c

FULL=$E2E_TMP/full.stream
INC=$E2E_TMP/inc.stream
send_to_file a "$FULL" tank/src@a
send_to_file a "$INC" -i @a tank/src@b
send_to_file a "$E2E_TMP/bc.stream" -i @b tank/src@c
FSIZE=$(stat -c %s "$FULL")
ISIZE=$(stat -c %s "$INC")
echo "# full stream $FSIZE bytes, incremental $ISIZE bytes"
[ "$FSIZE" -ge $((MIB * 1024 * 1024 * 9 / 10)) ] && pass ||
	fail "the full stream is only $FSIZE bytes for ~$MIB MiB of files"

# --- the target: dst/base at @a, from the good stream
section "the target"
recv_from a "$FULL" -- dst/base
[ "$RC" -eq 0 ] && pass || { fail "receive of the undamaged stream"; show_output; }
BASE=$(mnt_of a dst/base)
same_tree "dst/base vs tank/src@a" ma "$BASE"
state a dst "$E2E_TMP/state0"
grep -q "^dst/base@a" "$E2E_TMP/state0" && pass || fail "no dst/base@a: $(cat "$E2E_TMP/state0")"

# refused DESC REGEX: the last receive exited 1 with one line matching REGEX
refused() {
	if [ "$RC" -ne 1 ]; then
		fail "$1: receive exited $RC, not 1"
		show_output
		return 1
	fi
	if [ "$(wc -l <"$ERR")" -ne 1 ] || [ -s "$OUT" ]; then
		fail "$1: not one line of error (and nothing on stdout)"
		show_output
		return 1
	fi
	if ! grep -Eq -- "$2" "$ERR"; then
		fail "$1: the error does not match /$2/: $(cat "$ERR")"
		return 1
	fi
	pass
}

# token FS: FS's receive_resume_token, printed ("-" or empty: none)
token() {
	prop a "$1" receive_resume_token
}

# refused_s DESC REGEX FS: a refused -s receive: exit 1, the first line
# matching REGEX; when it kept a partial state, zfs's three lines of how
# to resume follow, naming FS's receive_resume_token
refused_s() {
	local tok
	if [ "$RC" -ne 1 ] || ! head -n 1 "$ERR" | grep -Eq -- "$2" || [ -s "$OUT" ]; then
		fail "$1: want exit 1 and /$2/ first (rc $RC)"
		show_output
		return 1
	fi
	pass
	[ "$(wc -l <"$ERR")" -eq 1 ] && return 0
	tok=$(token "$3")
	if [ "$(tail -n +2 "$ERR")" = "Partially received snapshot is saved.
A resuming stream can be generated on the sending system by running:
    zfs send -t $tok" ]; then pass; else
		fail "$1: the lines after the error are not the resume hint for '$tok'"
		show_output
	fi
}

# unchanged DESC [full]: dst as in state0; with full also dst/base's files
unchanged() {
	state a dst "$E2E_TMP/state1"
	if cmp -s "$E2E_TMP/state0" "$E2E_TMP/state1"; then pass; else
		fail "$1: zfs list -t all of dst changed:"
		diff "$E2E_TMP/state0" "$E2E_TMP/state1" | sed 's/^/  /' >&2
	fi
	[ "${2:-}" = full ] && same_tree "$1: dst/base's files" ma "$BASE"
}

# positions N STREAM flip|cut: N sampled byte positions of STREAM, a
# "POSITION RECORD" line each (RECORD: the number of the record the byte
# is in, from the stream's record table, send_feed.py --records): for
# flips the first bytes, fields of record headers (magic, type, length,
# sequence, running checksum, checksum) of the first, the last and
# sampled records, one at random in each of equal slices of the stream,
# the last bytes; for cuts, the same without the header fields.
positions() {
	python3 "$SEND_FEED" --records "$2" >"$E2E_TMP/records" || fail "records of $2"
	python3 - "$1" "$(stat -c %s "$2")" "$SEED" "$3" "$E2E_TMP/records" <<'PYEOF'
import bisect, random, sys
n, size, seed, kind = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
recs = [int(l.split()[0]) for l in open(sys.argv[5])]
rng = random.Random(seed + size + len(kind))
head = [p for p in (0, 1, 5, 9, 17, 40, 100, 333) if p < size][:max(1, n // 6)]
tail = [p for p in (size - 1, size - 2, size - 9, size - 77) if p >= 0][:max(1, n // 10)]
hdr = []
if kind == "flip" and recs:
    picks = [recs[1] if len(recs) > 1 else recs[0], recs[-1]]
    picks += [rng.choice(recs) for _ in range(n // 6)]
    fields = [0, 4, 8, 16, 24, 80, 88]
    hdr = [r + fields[k % len(fields)] + rng.randrange(4) for k, r in enumerate(picks)]
rest = max(0, n - len(head) - len(tail) - len(hdr))
mid = [rng.randrange(size * k // rest, size * (k + 1) // rest) for k in range(rest)]
for p in sorted(set(head + hdr + mid + tail)):
    print(p, bisect.bisect_right(recs, p) - 1)
PYEOF
}

# names_record DESC WANT...: the last error names one of the records WANT
names_record() {
	local desc=$1 got w
	shift
	got=$(grep -o 'record [0-9]\+' "$ERR" | head -n 1 | cut -d' ' -f2)
	for w in "$@"; do
		[ "$got" = "$w" ] && { pass; return 0; }
	done
	fail "$desc: the error names record '$got', not $* ($(cat "$ERR"))"
}

# --- flipped bytes: 3/4 in the full stream (a new file system), 1/4 in
# the incremental one (onto dst/base, whose files must stay)
section "flipped bytes"
NF=$((FLIPS * 3 / 4))
NI=$((FLIPS - NF))
while read -r p r <&3; do
	recv_from a --flip "$p" "$FULL" -- dst/new
	refused "full stream, byte $p (record $r) flipped" "record [0-9]+" &&
		names_record "full stream, byte $p flipped" "$r"
	unchanged "full stream, byte $p flipped"
done 3< <(positions "$NF" "$FULL" flip)
k=0
while read -r p r <&3; do
	recv_from a --flip "$p" "$INC" -- dst/base
	refused "incremental stream, byte $p (record $r) flipped" "record [0-9]+" &&
		names_record "incremental stream, byte $p flipped" "$r"
	# the files checked every third time (a full manifest is slow)
	if [ $((k % 3)) -eq 0 ]; then
		unchanged "incremental stream, byte $p flipped" full
	else
		unchanged "incremental stream, byte $p flipped"
	fi
	k=$((k + 1))
done 3< <(positions "$NI" "$INC" flip)

# --- cut off: the full stream and the incremental one (a cut at the
# start of a record may name the record before it, the last one read)
section "cuts"
while read -r p r <&3; do
	[ "$p" -eq 0 ] && continue          # the empty stream: below
	recv_from a --truncate "$p" "$FULL" -- dst/new
	refused "full stream cut at $p (in record $r)" "record [0-9]+" &&
		names_record "full stream cut at $p" "$r" $((r - 1))
	unchanged "full stream cut at $p"
done 3< <(positions "$CUTS" "$FULL" cut)
while read -r p r <&3; do
	[ "$p" -eq 0 ] && continue
	recv_from a --truncate "$p" "$INC" -- dst/base
	refused "incremental stream cut at $p (in record $r)" "record [0-9]+" &&
		names_record "incremental stream cut at $p" "$r" $((r - 1))
	unchanged "incremental stream cut at $p"
done 3< <(positions $((CUTS / 2)) "$INC" cut)
unchanged "after the cut incremental streams" full

# --- random bytes, an empty stream: one-line errors
section "random, empty"
recv_from a --random 1048576 - -- dst/new
refused "1 MiB of random bytes" "^cannot receive"
unchanged "random bytes"
recv_from a --truncate 0 "$FULL" -- dst/new
refused "an empty stream" "^cannot receive"
unchanged "an empty stream"
recv_from a --random 1048576 - -- dst/base
refused "random bytes onto dst/base" "^cannot receive"
unchanged "random bytes onto dst/base" full

# --- a stream of a newer format version: a small stream with the
# version of its BEGIN record raised and its checksums made again (so
# that only the version is wrong); made again at version 1 it is the
# same stream byte for byte (the re-sealing is right)
section "newer version"
tarn_ok fs create tank/tiny
echo tiny >"$MNT/tiny/f"
sync -f "$MNT/tiny"
tarn_ok fs snapshot tank/tiny@v
send_to_file a "$E2E_TMP/tiny.stream" tank/tiny@v
python3 "$SEND_FEED" --set-version 1 "$E2E_TMP/tiny.stream" >"$E2E_TMP/tiny1.stream"
cmp -s "$E2E_TMP/tiny.stream" "$E2E_TMP/tiny1.stream" && pass ||
	fail "a stream re-sealed at version 1 differs from the stream sent"
python3 "$SEND_FEED" --set-version 2 "$E2E_TMP/tiny.stream" >"$E2E_TMP/tiny2.stream"
recv_from a "$E2E_TMP/tiny2.stream" -- dst/new
refused "a stream of version 2" "record 0 \(BEGIN\): stream format version 2 is newer"
unchanged "a newer stream"
recv_from a "$E2E_TMP/tiny1.stream" -- dst/tiny
[ "$RC" -eq 0 ] && pass || { fail "receive of the re-sealed version 1 stream"; show_output; }
[ "$(cat "$(mnt_of a dst/tiny)/f")" = tiny ] && pass || fail "dst/tiny/f after receive"
tarn_ok fs destroy -r dst/tiny

# --- incremental streams onto the wrong base, or onto nothing
section "wrong base"
recv_from a "$E2E_TMP/bc.stream" -- dst/base
refused "incremental @b..@c onto dst/base@a" "does not match incremental source"
unchanged "the wrong base" full
# (the @b..@c stream's base is nowhere in dst: no clone of it can be
# made either, as for a clone's stream sent from its origin)
recv_from a "$E2E_TMP/bc.stream" -- dst/none
refused "incremental onto a missing file system" "'dst/none' does not exist"
unchanged "a missing target"

# --- -s: a cut-off receive keeps its partial state; send -t resumes it
section "-s and resume"
n=0
for p in $((FSIZE / 3)) $((FSIZE * 2 / 3)) $((FSIZE - 5)); do
	n=$((n + 1))
	recv_from a --truncate "$p" "$FULL" -- -s "dst/res$n"
	refused_s "-s: full stream cut at $p" "record [0-9]+" "dst/res$n"
	tok=$(token "dst/res$n")
	if [ -z "$tok" ] || [ "$tok" = - ]; then
		fail "-s: no receive_resume_token on dst/res$n after a cut at $p"
		continue
	fi
	pass
	tarn fs list -H -t snapshot -o name -r "dst/res$n"
	[ ! -s "$OUT" ] && pass || fail "a partial receive shows snapshots: $(cat "$OUT")"
	xfer_ok a a -t "$tok" -- -s "dst/res$n"
	tok=$(token "dst/res$n")
	[ -z "$tok" ] || [ "$tok" = - ] && pass || fail "dst/res$n keeps a token after resuming"
	same_tree "dst/res$n resumed (cut at $p)" ma "$(mnt_of a "dst/res$n")"
	same_guid_ok=$(prop a tank/src@a guid)
	[ "$(prop a "dst/res$n@a" guid)" = "$same_guid_ok" ] && pass ||
		fail "dst/res$n@a's guid is not tank/src@a's"
done
# an incremental cut off under -s: the old files stay visible meanwhile
recv_from a --truncate $((ISIZE / 2)) "$INC" -- -s dst/base
refused_s "-s: incremental stream cut in the middle" "record [0-9]+" dst/base
tok=$(token dst/base)
[ -n "$tok" ] && [ "$tok" != - ] && pass || fail "-s: no token on dst/base after a cut"
same_tree "dst/base during a partial incremental" ma "$BASE"
# another stream than the resume is refused while the state is there
recv_from a "$INC" -- dst/base
refused "a new stream onto a partial receive" "partially-complete state"
xfer_ok a a -t "$tok" -- -s dst/base
same_tree "dst/base resumed to @b" mb "$(mnt_of a dst/base)"
tarn fs list -H -o name -t snapshot -r dst/base
out_is "dst/base@a
dst/base@b"
# a flipped byte under -s: refused; a kept state resumes to the same
recv_from a --flip $((FSIZE / 2)) "$FULL" -- -s dst/flip
refused_s "-s: full stream, byte $((FSIZE / 2)) flipped" "record [0-9]+" dst/flip
tok=$(token dst/flip)
if [ -n "$tok" ] && [ "$tok" != - ]; then
	xfer_ok a a -t "$tok" -- -s dst/flip
	same_tree "dst/flip resumed" ma "$(mnt_of a dst/flip)"
else
	tarn fs list -H -o name dst/flip
	[ "$RC" -ne 0 ] && pass || fail "dst/flip is there without a resume token"
fi
# -A drops a partial state, and the file system it would have been
recv_from a --truncate $((FSIZE / 2)) "$FULL" -- -s dst/drop
refused_s "-s: full stream cut in the middle (for -A)" "record [0-9]+" dst/drop
tarn_ok fs receive -A dst/drop
tarn fs list -H -o name dst/drop
[ "$RC" -ne 0 ] && pass || fail "dst/drop is still there after receive -A"
tarn_err 1 "does not have any resumable receive state to abort" fs receive -A dst

# --- the target pool is clean
section "scrub"
tarn_ok pool scrub -w dst
tarn_ok pool status dst
out_has "with 0 errors"
out_has "errors: No known data errors"
e2e_done
