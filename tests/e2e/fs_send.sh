#!/bin/bash
# zfs send | zfs receive of single streams through the daemon: a full
# stream into another pool of the same daemon (from a file and through a
# pipe), into the same pool (the send and the receive both in one
# daemon's pool: must not wait for each other) and into a second daemon
# (standing in for another host); the received file system equals the
# source (diff -r, and modes, owners, sizes, link counts, mtimes, symlink
# targets by find).  Incremental -i from a snapshot and from a bookmark.
# A receive into a mounted target: the old contents stay visible while
# the stream comes, the new ones right after, on the same mount.  -u
# leaves a new file system unmounted; without -F a target changed since
# its snapshot is refused with zfs's message and stays as it was, -F
# rolls it back; -p carries properties (zfs get shows them local), -x
# leaves one out, -o sets one.  send -n -v [-P] prints zfs's estimate
# lines, -v during a real send the progress header on stderr; receive
# -v its two lines.  No stream is written to or read from a terminal.  A
# reader that goes away ends the send with an error (no crash); a client
# killed during a receive ends the daemon's work on it.
#
# Cleanup (lib.sh): pools destroyed with -f (unmounts), the daemon stopped
# by its PID, mounts under the temp dir detached; the second daemon here
# the same way (its pools destroyed, stopped by the PID in its PID file).
. "$(dirname "$0")/lib.sh"
describe "zfs send | receive: full, incremental (snapshot, bookmark), mounted target, -u -F -p -x -o -n -v -P"
require_daemon_mounts

# ---- a second daemon: its own socket, run dir and cache file
D2_RUN="$E2E_TMP/run2"
D2_CACHE="$E2E_TMP/cache2/tarn.cache"
D2_ENV=(env TARN_SOCKET="$D2_RUN/tarnd.sock" TARN_RUNDIR="$D2_RUN" TARN_CACHEFILE="$D2_CACHE")
d2_cleanup() {
	local rc=$? name pid
	trap - EXIT
	if [ -f "$D2_CACHE" ]; then
		for name in $(awk '$1 == "pool" { print $3 }' "$D2_CACHE" 2>/dev/null); do
			timeout -k 5 30 "${D2_ENV[@]}" "$TARN" pool destroy -f "$name" >/dev/null 2>&1
		done
	fi
	pid=$(TARN_SOCKET="$D2_RUN/tarnd.sock" TARN_RUNDIR="$D2_RUN" daemon_pid) &&
		{ kill -TERM "$pid" 2>/dev/null; for _ in $(seq 100); do
			pid_alive "$pid" || break; sleep 0.1; done; }
	(exit $rc)
	e2e_cleanup
}
trap d2_cleanup EXIT

# sig DIR: what must be equal after a round trip, one line per entry.
# The reference is the sent snapshot under .zfs/snapshot: the live mount
# may show a time the kernel keeps (writeback cache) a moment longer.
sig() {
	(cd "$1" && find . -printf '%p %y %m %U %G %s %n %T@ %l\n' | LC_ALL=C sort)
}
# same_tree A B WHAT: contents (diff -r) and metadata (sig) equal
same_tree() {
	if diff -r "$1" "$2" >/dev/null 2>&1 && [ "$(sig "$1")" = "$(sig "$2")" ]; then
		pass
	else
		fail "$3: $2 differs from $1"
		diff -r "$1" "$2" 2>&1 | head -5 | sed 's/^/  /' >&2
		diff <(sig "$1") <(sig "$2") | head -10 | sed 's/^/  /' >&2
	fi
}
# stream FILE ARGS...: tarn fs send ARGS > FILE must succeed
stream() {
	local f=$1
	shift
	timeout -k 5 60 "$TARN" fs send "$@" >"$f" 2>"$ERR"
	RC=$?
	[ "$RC" -eq 0 ] && [ -s "$f" ] && pass || { fail "send $* (rc $RC)"; cat "$ERR" >&2; }
}
# recv_from FILE ARGS...: tarn fs receive ARGS < FILE, status in RC
recv_from() {
	local f=$1
	shift
	timeout -k 5 60 "$TARN" fs receive "$@" <"$f" >"$OUT" 2>"$ERR"
	RC=$?
}
getv() {   # getv PROP DATASET: "value source"
	"$TARN" fs get -H -o value,source "$1" "$2" | tr '\t' ' '
}

mkdevs 3 256M
tarn_ok pool create -m "$MNT/src" tank "${DEV[0]}"
tarn_ok pool create -m "$MNT/dst" tank2 "${DEV[1]}"
tarn_ok fs set atime=off tank2      # reading a target must not change it
tarn_ok fs create tank/a
A=$MNT/src/a

# ---- the source: files of several sizes, a sparse one, links, modes, owners
mkdir -p "$A/d/e"
printf 'hello\n' >"$A/small"
head -c 3000000 /dev/urandom >"$A/big"
head -c 200000 /dev/urandom >"$A/d/mid"
truncate -s 20M "$A/sparse"
printf 'in the middle' | dd of="$A/sparse" bs=1 seek=10000000 conv=notrunc status=none
ln -s ../small "$A/d/link"
ln "$A/small" "$A/d/e/hard"
chmod 0640 "$A/d/mid"
chown 1234:5678 "$A/d/mid"
touch -d '2020-01-02 03:04:05' "$A/small"
sync -f "$A"
tarn_ok fs snapshot tank/a@s1

# ---- full: from a file, into another pool of the same daemon
stream "$E2E_TMP/full.s" tank/a@s1
recv_from "$E2E_TMP/full.s" tank2/b
[ "$RC" -eq 0 ] && pass || { fail "receive of a full stream (rc $RC)"; show_output; }
mountpoint -q "$MNT/dst/b" && pass || fail "tank2/b is not mounted after the receive"
same_tree "$A/.zfs/snapshot/s1" "$MNT/dst/b" "full stream from a file"
tarn_ok fs list -H -o name -t snapshot tank2/b
grep -qx 'tank2/b@s1' "$OUT" && pass || { fail "tank2/b@s1 not listed"; show_output; }

# through a pipe
run bash -c "'$TARN' fs send tank/a@s1 | '$TARN' fs receive tank2/c"
[ "$RC" -eq 0 ] && pass || { fail "send | receive (rc $RC)"; show_output; }
same_tree "$A/.zfs/snapshot/s1" "$MNT/dst/c" "send | receive"

# into the same pool: the send and the receive in one daemon's pool
run bash -c "'$TARN' fs send tank/a@s1 | '$TARN' fs receive tank/copy"
[ "$RC" -eq 0 ] && pass || { fail "send | receive within one pool (rc $RC)"; show_output; }
same_tree "$A/.zfs/snapshot/s1" "$MNT/src/copy" "send | receive within one pool"

# "fs@snap" as the target names the new snapshot
recv_from "$E2E_TMP/full.s" tank2/named@other
[ "$RC" -eq 0 ] && "$TARN" fs list -H -o name tank2/named@other >/dev/null 2>&1 && pass ||
	{ fail "receive into tank2/named@other"; show_output; }

# -d: the sent name without its pool under the target (missing parents
# made); -e: only its last element
tarn_ok fs create tank/a/kid
tarn_ok fs snapshot tank/a/kid@k
recv_from "$E2E_TMP/full.s" -d tank2/dd
[ "$RC" -eq 0 ] && "$TARN" fs list -H -o name tank2/dd/a@s1 >/dev/null 2>&1 && pass ||
	{ fail "receive -d into tank2/dd"; show_output; }
run bash -c "'$TARN' fs send tank/a/kid@k | '$TARN' fs receive -d tank2/dd"
[ "$RC" -eq 0 ] && "$TARN" fs list -H -o name tank2/dd/a/kid@k >/dev/null 2>&1 && pass ||
	{ fail "receive -d of tank/a/kid@k"; show_output; }
run bash -c "'$TARN' fs send tank/a/kid@k | '$TARN' fs receive -e tank2/ee"
[ "$RC" -eq 0 ] && "$TARN" fs list -H -o name tank2/ee/kid@k >/dev/null 2>&1 &&
	! "$TARN" fs list tank2/ee/a >/dev/null 2>&1 && pass ||
	{ fail "receive -e of tank/a/kid@k"; show_output; }
tarn_err 1 "^cannot receive 'tank2/x@y': " fs receive -d tank2/x@y <"$E2E_TMP/full.s"
tarn_ok fs destroy -r tank/a/kid

# into a second daemon (another host's stand-in)
run "${D2_ENV[@]}" "$TARN" pool create -m "$MNT/far" far "${DEV[2]}"
[ "$RC" -eq 0 ] && pass || { fail "second daemon: pool create"; show_output; }
run bash -c "'$TARN' fs send tank/a@s1 | TARN_SOCKET='$D2_RUN/tarnd.sock' \
TARN_RUNDIR='$D2_RUN' TARN_CACHEFILE='$D2_CACHE' '$TARN' fs receive far/x"
[ "$RC" -eq 0 ] && pass || { fail "send | receive into a second daemon (rc $RC)"; show_output; }
same_tree "$A/.zfs/snapshot/s1" "$MNT/far/x" "into the second daemon"

# ---- incremental: from a snapshot, from a bookmark
tarn_ok fs bookmark tank/a@s1 'tank/a#b1'
printf 'changed\n' >"$A/small"
rm "$A/d/mid"
head -c 500000 /dev/urandom >"$A/new"
sync -f "$A"
tarn_ok fs snapshot tank/a@s2
stream "$E2E_TMP/inc12.s" -i @s1 tank/a@s2
recv_from "$E2E_TMP/inc12.s" tank2/b
[ "$RC" -eq 0 ] && pass || { fail "incremental receive (-i @s1) (rc $RC)"; show_output; }
same_tree "$A/.zfs/snapshot/s2" "$MNT/dst/b" "incremental from a snapshot"
[ "$(stat -c %s "$E2E_TMP/inc12.s")" -lt "$(stat -c %s "$E2E_TMP/full.s")" ] && pass ||
	fail "the incremental stream is not smaller than the full one"
run bash -c "'$TARN' fs send -i 'tank/a#b1' tank/a@s2 | '$TARN' fs receive tank2/c"
[ "$RC" -eq 0 ] && pass || { fail "incremental from a bookmark (rc $RC)"; show_output; }
same_tree "$A/.zfs/snapshot/s2" "$MNT/dst/c" "incremental from a bookmark"

# ---- a mounted target keeps its old state until the stream ended
recv_from "$E2E_TMP/full.s" tank2/m
M=$MNT/dst/m
dev0=$(stat -c %d "$M")
half=$(($(stat -c %s "$E2E_TMP/inc12.s") / 2))
( head -c "$half" "$E2E_TMP/inc12.s"; sleep 3; tail -c +$((half + 1)) "$E2E_TMP/inc12.s" ) |
	timeout 60 "$TARN" fs receive tank2/m >"$E2E_TMP/m.out" 2>&1 &
rpid=$!
sleep 1.5
[ "$(cat "$M/small")" = hello ] && [ -e "$M/d/mid" ] && [ ! -e "$M/new" ] && pass ||
	fail "half-way through the receive the mount does not show the old state"
wait "$rpid"
[ $? -eq 0 ] && pass || { fail "receive into the mounted target"; cat "$E2E_TMP/m.out" >&2; }
[ "$(cat "$M/small")" = changed ] && [ ! -e "$M/d/mid" ] && [ -e "$M/new" ] && pass ||
	fail "after the receive the mount does not show the new state"
[ "$(stat -c %d "$M")" = "$dev0" ] && pass || fail "the mount was replaced (device changed)"
same_tree "$A/.zfs/snapshot/s2" "$M" "received under a mount"

# ---- -u: not mounted
recv_from "$E2E_TMP/full.s" -u tank2/u
[ "$RC" -eq 0 ] && pass || { fail "receive -u (rc $RC)"; show_output; }
! mountpoint -q "$MNT/dst/u" && [ "$(getv mounted tank2/u)" = "no -" ] && pass ||
	fail "receive -u mounted tank2/u"

# ---- a changed target: refused without -F, rolled back with -F
printf 'local change\n' >"$MNT/dst/b/local"
sync -f "$MNT/dst/b"
printf 'third\n' >"$A/third"
sync -f "$A"
tarn_ok fs snapshot tank/a@s3
stream "$E2E_TMP/inc23.s" -i tank/a@s2 tank/a@s3
recv_from "$E2E_TMP/inc23.s" tank2/b
[ "$RC" -eq 1 ] && [ "$(wc -l <"$ERR")" -eq 1 ] &&
	grep -q "^cannot receive incremental stream: destination tank2/b has been modified since most recent snapshot" "$ERR" &&
	pass || { fail "a changed target without -F (rc $RC)"; show_output; }
[ -e "$MNT/dst/b/local" ] && [ ! -e "$MNT/dst/b/third" ] && pass ||
	fail "the refused receive changed the target"
recv_from "$E2E_TMP/inc23.s" -F tank2/b
[ "$RC" -eq 0 ] && pass || { fail "receive -F (rc $RC)"; show_output; }
[ ! -e "$MNT/dst/b/local" ] && same_tree "$A/.zfs/snapshot/s3" "$MNT/dst/b" "receive -F"

# ---- properties: -p carries them, -x leaves one out, -o sets one
tarn_ok fs set compression=gzip-3 tank/a
tarn_ok fs set com.example:tag=blue tank/a
tarn_ok fs set recordsize=64K tank/a
tarn_ok fs snapshot tank/a@p
stream "$E2E_TMP/props.s" -p tank/a@p
recv_from "$E2E_TMP/props.s" tank2/p
[ "$RC" -eq 0 ] && pass || { fail "receive of send -p (rc $RC)"; show_output; }
[ "$(getv compression tank2/p)" = "gzip-3 local" ] &&
	[ "$(getv com.example:tag tank2/p)" = "blue local" ] &&
	[ "$(getv recordsize tank2/p)" = "64K local" ] && pass ||
	fail "send -p: tank2/p has compression '$(getv compression tank2/p)', tag '$(getv com.example:tag tank2/p)'"
recv_from "$E2E_TMP/props.s" -x com.example:tag -o compression=off tank2/q
[ "$RC" -eq 0 ] && pass || { fail "receive -x -o (rc $RC)"; show_output; }
[ "$(getv compression tank2/q)" = "off local" ] &&
	[ "$(getv com.example:tag tank2/q)" = "- -" ] &&
	[ "$(getv recordsize tank2/q)" = "64K local" ] && pass ||
	fail "receive -x -o: compression '$(getv compression tank2/q)', tag '$(getv com.example:tag tank2/q)'"
stream "$E2E_TMP/noprops.s" tank/a@p
recv_from "$E2E_TMP/noprops.s" tank2/np
[ "$(getv compression tank2/np)" != "gzip-3 local" ] && pass ||
	fail "a stream without -p carried properties"

# ---- send -n -v [-P]: zfs's estimate lines, nothing written
tarn_ok fs send -n -v -P tank/a@s1
[ "$(wc -l <"$OUT")" -eq 2 ] && grep -Eqx $'full\ttank/a@s1\t[0-9]+' "$OUT" &&
	grep -Eqx $'size\t[0-9]+' "$OUT" &&
	[ "$(sed -n '1s/.*\t//p' "$OUT")" = "$(sed -n '2s/.*\t//p' "$OUT")" ] && pass ||
	{ fail "send -nvP of a full stream"; show_output; }
tarn_ok fs send -nvP -i @s1 tank/a@s2
grep -Eqx $'incremental\ttank/a@s1\ttank/a@s2\t[0-9]+' "$OUT" && pass ||
	{ fail "send -nvP of an incremental stream"; show_output; }
tarn_ok fs send -n -v tank/a@s1
grep -Eqx 'full send of tank/a@s1 estimated size is [0-9.]+[BKMG]' "$OUT" &&
	grep -Eqx 'total estimated size is [0-9.]+[BKMG]' "$OUT" && pass ||
	{ fail "send -nv"; show_output; }
tarn_ok fs send -n tank/a@s1
[ ! -s "$OUT" ] && [ ! -s "$ERR" ] && pass || { fail "send -n printed something"; show_output; }
timeout 60 "$TARN" fs send -v tank/a@s1 >"$E2E_TMP/v.s" 2>"$ERR"
[ $? -eq 0 ] && cmp -s "$E2E_TMP/v.s" "$E2E_TMP/full.s" &&
	grep -Eq '^full send of tank/a@s1 estimated size is ' "$ERR" &&
	grep -q '^TIME        SENT   SNAPSHOT tank/a@s1$' "$ERR" && pass ||
	{ fail "send -v: the stream, the lines on stderr"; show_output; }

# ---- receive -v
recv_from "$E2E_TMP/full.s" -v tank2/v
[ "$RC" -eq 0 ] && grep -qx 'receiving full stream of tank/a@s1 into tank2/v@s1' "$OUT" &&
	grep -Eqx 'received [0-9.]+[BKMG] stream in [0-9]+ seconds \([0-9.]+[BKMG]/sec\)' "$OUT" &&
	pass || { fail "receive -v"; show_output; }
recv_from "$E2E_TMP/inc12.s" -v tank2/v
grep -qx 'receiving incremental stream of tank/a@s2 into tank2/v@s2' "$OUT" && pass ||
	{ fail "receive -v of an incremental stream"; show_output; }

# ---- no terminals
python3 - "$TARN" "$E2E_TMP/tty" <<'EOF'
import os, pty, subprocess, sys
tarn, out = sys.argv[1], sys.argv[2]
m, s = pty.openpty()
a = subprocess.run([tarn, "fs", "send", "tank/a@s1"], stdout=s, stderr=subprocess.PIPE)
b = subprocess.run([tarn, "fs", "receive", "tank2/tty"], stdin=s, stderr=subprocess.PIPE)
with open(out, "w") as f:
    f.write("%d\n%s%d\n%s" % (a.returncode, a.stderr.decode(), b.returncode, b.stderr.decode()))
EOF
[ "$(cat "$E2E_TMP/tty")" = "1
Error: Stream can not be written to a terminal.
You must redirect standard output.
1
Error: Backup stream can not be read from a terminal.
You must redirect standard input." ] && pass || { fail "terminals:"; cat "$E2E_TMP/tty" >&2; }

# ---- a reader that goes away: the send fails with a message, nothing else
run bash -c "set -o pipefail; '$TARN' fs send tank/a@s1 | head -c 1000 >/dev/null"
[ "$RC" -eq 1 ] && grep -q "^cannot send 'tank/a@s1': " "$ERR" && pass ||
	{ fail "send into a pipe whose reader went away (rc $RC)"; show_output; }

# ---- a receive whose client is killed ends in the daemon too
mkfifo "$E2E_TMP/fifo"
"$TARN" fs receive tank2/never <"$E2E_TMP/fifo" >/dev/null 2>&1 &
rpid=$!
exec 7>"$E2E_TMP/fifo"          # a writer that never writes
sleep 1
kill "$rpid" 2>/dev/null
wait "$rpid" 2>/dev/null
for _ in $(seq 50); do
	"$TARN" daemon status | grep -q '^commands:   1 running' && break
	sleep 0.2
done
"$TARN" daemon status | grep -q '^commands:   1 running' && pass ||
	{ fail "the receive of a killed client still runs in the daemon"; "$TARN" daemon status >&2; }
exec 7>&-
# ... and so does a send whose reader never reads
"$TARN" fs send tank/a@s1 >"$E2E_TMP/fifo" 2>/dev/null &
rpid=$!
exec 7<"$E2E_TMP/fifo"          # a reader that never reads
sleep 1
kill "$rpid" 2>/dev/null
wait "$rpid" 2>/dev/null
for _ in $(seq 50); do
	"$TARN" daemon status | grep -q '^commands:   1 running' && break
	sleep 0.2
done
"$TARN" daemon status | grep -q '^commands:   1 running' && pass ||
	{ fail "the send of a killed client still runs in the daemon"; "$TARN" daemon status >&2; }
exec 7<&-
! "$TARN" fs list tank2/never >/dev/null 2>&1 && pass || fail "tank2/never exists"

# ---- the pools are consistent afterwards
tarn_ok pool scrub -w tank2
tarn_ok pool status -x tank2
e2e_done
