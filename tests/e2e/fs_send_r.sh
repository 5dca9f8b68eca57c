#!/bin/bash
# zfs send -R / -I (package streams) and their receive, into another pool
# of the same daemon:
#  - send -R of a tree (children, a grandchild, a clone inside the tree,
#    user and native properties, three snapshots): the target has the same
#    datasets and snapshots (zfs list -t filesystem,snapshot), the sent properties (zfs
#    get), the same files
#    (diff -r of the mounts and of a snapshot under .zfs);
#  - then at the source a new snapshot, a renamed snapshot, a destroyed
#    snapshot, a destroyed file system, a renamed file system and a new
#    child; send -R -I from the common snapshot and receive -F: the target
#    matches again (renames and destroys followed);
#  - send -I without -R: every snapshot between arrives (also from a
#    bookmark); -R -i: only the base and the sent snapshot, a descendant
#    without the sent snapshot left out;
#  - receive -d / -e / -u of packages, send -nvP / -nv lines, -h holds, receive -v;
#  - bad input: -R of a missing snapshot, receive of a package into a
#    missing parent, a truncated package: one line, exit 1, the target
#    unchanged; with receive -s the cut substream's partial state is kept,
#    send -t completes it and the whole package again takes the rest.
#
# Cleanup (lib.sh): both pools destroyed with -f (unmounts), the daemon
# stopped by its PID, FUSE mounts left under the temp dir detached, the
# stream files removed with the temp dir.
. "$(dirname "$0")/lib.sh"
describe "zfs send -R / -I and receive (-F): trees, clones, properties, renames, destroys"
require_daemon_mounts

MNT2="$E2E_TMP/mnt2"
S="$E2E_TMP/streams"
mkdir -p "$S"

# send ARGS... >FILE / recv ARGS... <FILE through a shell (the stream is binary)
send_to() {
	local file=$1
	shift
	run bash -c '"$0" fs send "$@" >"'"$file"'"' "$TARN" "$@"
	if [ "$RC" -eq 0 ]; then pass; else fail "send $* (rc $RC)"; show_output; fi
}
recv_from() {
	local file=$1
	shift
	run bash -c '"$0" fs receive "$@" <"'"$file"'"' "$TARN" "$@"
	if [ "$RC" -eq 0 ]; then pass; else fail "receive $* (rc $RC)"; show_output; fi
}

# listing POOLFS: names of the tree and its snapshots, relative to POOLFS
# (bookmarks are not sent, as with zfs)
listing() {
	"$TARN" fs list -H -o name -t filesystem,snapshot -r "$1" 2>&1 | sed "s,^$1,X," | sort
}

# same_tree DESC SRC DST: zfs list -t all of both trees must be equal
same_tree() {
	listing "$2" >"$E2E_TMP/l.src"
	listing "$3" >"$E2E_TMP/l.dst"
	if diff -u "$E2E_TMP/l.src" "$E2E_TMP/l.dst" >"$E2E_TMP/l.diff"; then pass; else
		fail "$1: the trees differ (- $2, + $3)"
		sed 's/^/  /' "$E2E_TMP/l.diff" >&2
	fi
}

# same_files DESC DIR1 DIR2
same_files() {
	if diff -r "$2" "$3" >"$E2E_TMP/f.diff" 2>&1; then pass; else
		fail "$1: files differ ($2, $3)"
		head -n 20 "$E2E_TMP/f.diff" | sed 's/^/  /' >&2
	fi
}

# props DATASET: the sent properties' values
props() {
	"$TARN" fs get -H -o value com.example:tag,com.example:x,compression,recordsize "$1" 2>&1
}

same_props() {
	local a b
	a=$(props "$2")
	b=$(props "$3")
	if [ "$a" = "$b" ]; then pass; else
		fail "$1: properties differ: '$a' vs '$b'"
	fi
}

mkdevs 2 256M
tarn_ok pool create -m "$MNT" tank "${DEV[0]}"
tarn_ok pool create -m "$MNT2" dst "${DEV[1]}"

# --- the source tree
tarn_ok fs create -o com.example:tag=one tank/src
tarn_ok fs create -o com.example:x=two tank/src/c1
tarn_ok fs create tank/src/c1/g
tarn_ok fs create -o compression=lz4 -o recordsize=16K tank/src/c2
printf 'top\n' >"$MNT/src/f"
mkdir -p "$MNT/src/d"
head -c 300000 /dev/urandom >"$MNT/src/d/big"
printf 'one\n' >"$MNT/src/c1/f"
printf 'grand\n' >"$MNT/src/c1/g/f"
seq 1 20000 >"$MNT/src/c2/seq"
sync -f "$MNT/src"
tarn_ok fs snapshot -r tank/src@s1
printf 'second\n' >>"$MNT/src/f"
printf 'two\n' >"$MNT/src/c1/f2"
rm "$MNT/src/c2/seq"
sync -f "$MNT/src"
tarn_ok fs snapshot -r tank/src@s2
tarn_ok fs clone tank/src/c1@s1 tank/src/cl
printf 'in the clone\n' >"$MNT/src/cl/own"
printf 'third\n' >>"$MNT/src/f"
sync -f "$MNT/src"
tarn_ok fs snapshot -r tank/src@s3

# --- send -R, receive into the other pool
send_to "$S/full" -R tank/src@s3
recv_from "$S/full" dst/copy
same_tree "full -R" tank/src dst/copy
for d in "" /c1 /c1/g /c2 /cl; do
	same_props "full -R: tank/src$d" "tank/src$d" "dst/copy$d"
done
# the clone arrives as a clone of the received origin
tarn_ok fs get -H -o value origin dst/copy/cl; out_is "dst/copy/c1@s1"
same_files "full -R" "$MNT/src" "$MNT2/copy"
same_files "full -R, snapshot s1" "$MNT/src/.zfs/snapshot/s1" "$MNT2/copy/.zfs/snapshot/s1"
same_files "full -R, snapshot s2 of c2" "$MNT/src/c2/.zfs/snapshot/s2" \
	"$MNT2/copy/c2/.zfs/snapshot/s2"

# --- changes at the source, then send -R -I and receive -F
printf 'fourth\n' >>"$MNT/src/f"
printf 'changed\n' >"$MNT/src/c1/f"
tarn_ok fs snapshot tank/src/c1@s3b           # only c1 has it
tarn_ok fs rename tank/src/c1@s2 tank/src/c1@s2r
tarn_ok fs destroy tank/src@s2
tarn_ok fs destroy -r tank/src/c1/g
tarn_ok fs rename tank/src/c2 tank/src/c2b
tarn_ok fs create tank/src/c3
printf 'new child\n' >"$MNT/src/c3/f"
sync -f "$MNT/src"
tarn_ok fs snapshot -r tank/src@s4
send_to "$S/incr" -R -I @s3 tank/src@s4
# the target's snapshots that -F destroys and renames have been looked at
# under .zfs/snapshot (opened there: -F closes them first)
ls "$MNT2/copy/.zfs/snapshot/s2" "$MNT2/copy/c1/.zfs/snapshot/s2" >/dev/null && pass ||
	fail "the target's snapshots under .zfs/snapshot"
recv_from "$S/incr" -F dst/copy
same_tree "incremental -R -I, receive -F" tank/src dst/copy
same_files "incremental -R -I" "$MNT/src" "$MNT2/copy"
same_props "incremental: tank/src/c2b" tank/src/c2b dst/copy/c2b
# a second receive of the same package changes nothing (all there by guid)
recv_from "$S/incr" -F dst/copy
same_tree "the same package again" tank/src dst/copy

# --- send -I without -R: every snapshot between
tarn_ok fs create tank/solo
for s in a b c d; do
	printf '%s\n' "$s" >>"$MNT/solo/f"
	sync -f "$MNT/solo"
	tarn_ok fs snapshot "tank/solo@$s"
done
send_to "$S/solo_a" tank/solo@a
recv_from "$S/solo_a" dst/solo
send_to "$S/solo_ad" -I @a tank/solo@d
recv_from "$S/solo_ad" dst/solo
same_tree "-I without -R" tank/solo dst/solo
same_files "-I without -R" "$MNT/solo" "$MNT2/solo"
same_files "-I without -R, snapshot b" "$MNT/solo/.zfs/snapshot/b" \
	"$MNT2/solo/.zfs/snapshot/b"

# --- -I from a bookmark: every snapshot after it
tarn_ok fs bookmark tank/solo@b tank/solo#bb
send_to "$S/solo_b" -i @a tank/solo@b
recv_from "$S/solo_a" dst/solobm
recv_from "$S/solo_b" dst/solobm
send_to "$S/solo_bmd" -I '#bb' tank/solo@d
recv_from "$S/solo_bmd" dst/solobm
same_tree "-I from a bookmark" tank/solo dst/solobm

# --- -R -i: only the base and the sent snapshot of each file system; a
# descendant without the sent snapshot is left out and left alone
tarn_ok fs create tank/ri
tarn_ok fs create tank/ri/k
tarn_ok fs snapshot -r tank/ri@x
tarn_ok fs snapshot -r tank/ri@y
tarn_ok fs snapshot -r tank/ri@z
tarn_ok fs create tank/ri/nosnap
send_to "$S/ri_x" -R tank/ri@x
recv_from "$S/ri_x" dst/ri
send_to "$S/ri_xz" -R -i @x tank/ri@z
recv_from "$S/ri_xz" -F dst/ri
listing dst/ri >"$E2E_TMP/l.ri"
[ "$(tr '\n' ' ' <"$E2E_TMP/l.ri")" = "X X/k X/k@x X/k@z X@x X@z " ] && pass ||
	{ fail "-R -i: not the base and the sent snapshot only:"; cat "$E2E_TMP/l.ri" >&2; }

# --- -u: nothing of the received tree is mounted
recv_from "$S/ri_x" -u dst/unm
tarn_ok fs get -H -o value -r -t filesystem mounted dst/unm
out_is "no
no"

# --- -d and -e: the sent names under the target
tarn_ok fs create dst/dd
recv_from "$S/full" -d dst/dd
recv_from "$S/incr" -d -F dst/dd
same_tree "receive -d" tank/src dst/dd/src
tarn_ok fs list -H -o name dst/dd/src/c2b
tarn_ok fs create dst/ee
run bash -c '"$0" fs receive -e dst/ee <"$1"' "$TARN" "$S/incr"
[ "$RC" -eq 1 ] && pass || fail "an incremental package into an empty -e target: rc $RC"
recv_from "$S/full" -e dst/ee
tarn_ok fs list -H -o name dst/ee/src/c1/g

# --- -n -v -P of a package: every substream's estimate and the total, nothing sent
run "$TARN" fs send -nvP -R -I @s3 tank/src@s4
[ "$RC" -eq 0 ] && pass || { fail "send -nvP -R -I (rc $RC)"; show_output; }
grep -q "^incremental	.*	tank/src/c1@s3b	[0-9]" "$OUT" && pass ||
	{ fail "send -nvP: no line for c1@s3b"; show_output; }
grep -q "^full	tank/src/c3@s4	[0-9]" "$OUT" && pass ||
	{ fail "send -nvP: no full line for the new child"; show_output; }
grep -q "^size	[0-9][0-9]*$" "$OUT" && pass || { fail "send -nvP: no size line"; show_output; }
run "$TARN" fs send -nv -I @a tank/solo@d
[ "$(grep -c '^send from @[abc] to tank/solo@[bcd] estimated size is' "$OUT")" -eq 3 ] &&
	grep -q "^total estimated size is" "$OUT" && pass ||
	{ fail "send -nv -I: a line a snapshot and the total"; show_output; }

# --- -h: holds go with the package; receive -v says what it receives
tarn_ok fs hold keep tank/solo@b
send_to "$S/holds" -R -h tank/solo@d
recv_from "$S/holds" -v dst/held
grep -q "receiving full stream of tank/solo@a into dst/held@a" "$OUT" "$ERR" && pass ||
	{ fail "receive -v: no line for the first substream"; show_output; }
tarn_ok fs holds -H dst/held@b
out_has "keep"

# --- bad input
tarn_err 1 "^cannot open 'tank/src@s9': dataset does not exist" fs send -I @s1 tank/src@s9
tarn_err 1 "^cannot open 'tank/src@nope': dataset does not exist" fs send -R tank/src@nope
# unchanged DESC DATASET: the listing saved in $E2E_TMP/before is still the same
unchanged() {
	listing "$2" >"$E2E_TMP/after"
	if diff -u "$E2E_TMP/before" "$E2E_TMP/after" >"$E2E_TMP/u.diff"; then pass; else
		fail "$1 changed $2:"
		sed 's/^/  /' "$E2E_TMP/u.diff" >&2
	fi
}
# recv_bad DESC FILE TARGET: the receive fails with one line, exit 1
recv_bad() {
	run bash -c '"$0" fs receive "$1" <"$2"' "$TARN" "$3" "$2"
	[ "$RC" -eq 1 ] && [ "$(wc -l <"$ERR")" -eq 1 ] && pass ||
		{ fail "$1 (rc $RC)"; show_output; }
}
listing dst >"$E2E_TMP/before"
recv_bad "receive of a package into a missing parent" "$S/full" dst/nope/x
unchanged "a receive into a missing parent" dst
# a truncated package: cut in its header, and in its first (big) substream
tarn_ok fs create tank/tr
printf 'a\n' >"$MNT/tr/f"
sync -f "$MNT/tr"
tarn_ok fs snapshot tank/tr@a
head -c 2000000 /dev/urandom >"$MNT/tr/big"
sync -f "$MNT/tr"
tarn_ok fs snapshot tank/tr@b
printf 'c\n' >>"$MNT/tr/f"
sync -f "$MNT/tr"
tarn_ok fs snapshot tank/tr@c
send_to "$S/tr_a" tank/tr@a
recv_from "$S/tr_a" dst/tr
send_to "$S/tr_ac" -I @a tank/tr@c
size=$(stat -c %s "$S/tr_ac")
listing dst/tr >"$E2E_TMP/before"
for cut in 40 $((size / 2)) $((size - 1)); do
	head -c "$cut" "$S/tr_ac" >"$S/cut"
	recv_bad "receive of a package cut at byte $cut of $size" "$S/cut" dst/tr
	# the last cut may leave the first substreams received: -F takes the rest
	[ "$cut" -lt $((size - 1)) ] && unchanged "a package cut at byte $cut" dst/tr
done
recv_from "$S/tr_ac" dst/tr
same_tree "the whole package after the cut ones" tank/tr dst/tr
same_files "the whole package after the cut ones" "$MNT/tr" "$MNT2/tr"
# -s: a package cut inside its first substream keeps that one's partial
# state; send -t completes it, and the whole package again takes the rest
# (what syncoid does after a broken link)
send_to "$S/tr_a3" tank/tr@a
recv_from "$S/tr_a3" dst/trs
head -c $((size / 2)) "$S/tr_ac" >"$S/cut"
run bash -c '"$0" fs receive -s dst/trs <"$1"' "$TARN" "$S/cut"
[ "$RC" -eq 1 ] && pass || { fail "receive -s of a cut package (rc $RC)"; show_output; }
tok=$("$TARN" fs get -H -o value receive_resume_token dst/trs 2>/dev/null)
[ -n "$tok" ] && [ "$tok" != "-" ] && pass || fail "no resume token after a cut package (got '$tok')"
send_to "$S/tr_tok" -t "$tok"
recv_from "$S/tr_tok" -s dst/trs
recv_from "$S/tr_ac" -s dst/trs
same_tree "a cut package resumed with send -t, then again whole" tank/tr dst/trs
same_files "a cut package resumed" "$MNT/tr" "$MNT2/trs"

tarn_ok pool scrub -w dst
tarn_ok pool status -x dst
out_has "healthy"
e2e_done
