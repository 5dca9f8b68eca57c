#!/bin/bash
# SIGKILL of the receiving daemon in the middle of a stream.  The
# receiver is a second daemon (its own socket, run dir and cache file:
# another host); a stream is fed to its zfs receive by a helper that
# stops after some MiB (send_feed.py --pause-at); meanwhile the daemon
# answers other commands; after a txg timeout (the partial receive has
# reached the disks) the daemon is killed with SIGKILL by its recorded
# PID.  After the restart (the next command
# starts it; it opens the pool of its cache file again) the target is its
# old state: a new file system is not there, an incremental target has
# its old snapshots and files -- or, under receive -s, the saved partial
# state with a receive_resume_token, and `zfs send -t TOKEN | zfs
# receive -s` completes it to the source's files.  Then the pool is
# scrubbed (clean) and, the received file systems destroyed, its
# allocated space is back near where it began (no leak from the killed
# receives).
#
# Knobs: SEND_MIB (size of the source, default 48), SEND_FEED_DELAY
# (seconds between 256 KiB pieces of a stream, default 0.1).
#
# Cleanup (send_lib.bash, lib.sh): the feeding pipelines killed, pools
# destroyed on both daemons, both daemons stopped by their PIDs.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/send_lib.bash"
describe "SIGKILL of the receiving daemon mid-stream: old state, or -s partial state that resumes; scrub clean, no leak"
require_daemon_mounts
MIB=${SEND_MIB:-48}
FEED_DELAY=${SEND_FEED_DELAY:-0.1}
E2E_CMD_TIMEOUT=$((60 + MIB))

mkdevs 1 $((MIB * 3 + 256))M s
tarn_ok pool create -m "$MNT" -O atime=off tank "${DEV[0]}"
mkdevs 1 $((MIB * 5 + 256))M f
tarnb_ok pool create -m "$E2E_TMP/far" -O atime=off far "${DEV[0]}"
tarnb_ok pool sync far
ALLOC0=$(allocated b far)

# --- the source: @a, and @b with some of it changed
tarn_ok fs create tank/src
S=$MNT/src
check "bulk files" python3 "$SEND_TREE" bulk "$S" "$MIB"
sync -f "$S"
tarn_ok fs snapshot tank/src@a
manifest "$S/.zfs/snapshot/a" ma
# (the changes leave every directory's size class alone: a growing
# directory is fs_send_roundtrip's business, not this test's)
check "changes" python3 - "$S" "$MIB" <<'EOF'
import os, sys
root, mib = sys.argv[1], int(sys.argv[2])
with open(os.path.join(root, "L000"), "r+b") as f:
    f.write(os.urandom(min(6, mib // 2) << 20))
for i in range(1, 4):
    p = os.path.join(root, "L%03d" % i)
    if os.path.exists(p):
        with open(p, "ab") as f:
            f.write(os.urandom(max(1, mib // 16) << 20))
os.unlink(os.path.join(root, "d00", "s00003"))
EOF
sync -f "$S"
tarn_ok fs snapshot tank/src@b
manifest "$S/.zfs/snapshot/b" mb
FULL=$E2E_TMP/full.stream
INC=$E2E_TMP/inc.stream
send_to_file a "$FULL" tank/src@a
send_to_file a "$INC" -i @a tank/src@b
FSIZE=$(stat -c %s "$FULL")
ISIZE=$(stat -c %s "$INC")
echo "# full stream $FSIZE bytes, incremental $ISIZE bytes"

# host B has far/base at @a (from the whole stream) for the incrementals
recv_from b "$FULL" -- far/base
[ "$RC" -eq 0 ] && pass || { fail "receive of the whole stream on host B"; show_output; }
same_tree "far/base vs tank/src@a" ma "$(mnt_of b far/base)"

# killed_recv STREAM AT RECV-ARGS...: feed STREAM to receive on host B
# at ~2.5 MiB/s (FEED_DELAY per 256 KiB: a link, so that the receive
# saves its progress as it goes, every 2 s), pausing after AT bytes (a
# stalled link); the daemon must answer another command
# meanwhile (pool list, within 10 s); after the txg timeout (5 s: the
# partial receive reaches the disks) SIGKILL host B's daemon; the
# receive must fail; then restart the daemon (a pool list starts it).
killed_recv() {
	local stream=$1 at=$2 bg pid i rc
	shift 2
	rm -f "$E2E_TMP/paused" "$E2E_TMP/go" "$E2E_TMP/recv.rc"
	(
		python3 "$SEND_FEED" --pause-at "$at" --signal "$E2E_TMP/paused" \
			--wait "$E2E_TMP/go" --chunk 262144 --delay "$FEED_DELAY" "$stream" 2>/dev/null |
			env "${HB_ENV[@]}" timeout -k 5 120 "$TARN" fs receive "$@" \
			>"$E2E_TMP/recv.out" 2>"$E2E_TMP/recv.err"
		echo "${PIPESTATUS[1]}" >"$E2E_TMP/recv.rc"
	) &
	bg=$!
	SEND_BG+=("$bg")
	for ((i = 0; i < 600; i++)); do
		[ -f "$E2E_TMP/paused" ] || [ -f "$E2E_TMP/recv.rc" ] && break
		sleep 0.1
	done
	if [ -f "$E2E_TMP/paused" ]; then pass; else
		fail "receive $* did not take $at bytes (receive rc '$(cat "$E2E_TMP/recv.rc" \
			2>/dev/null)')"
		sed 's/^/  receive stderr: /' "$E2E_TMP/recv.err" >&2
	fi
	sleep 1                                 # the daemon takes what it was sent
	E2E_CMD_TIMEOUT=10 tarnb pool list -H -o name far
	[ "$RC" -eq 0 ] && pass ||
		fail "host B's daemon did not answer pool list (rc $RC) while a receive waited for input"
	sleep 5                                 # a txg timeout: the partial receive is on disk
	pid=$(hostb_pid)
	if [ -z "$pid" ]; then
		fail "no daemon on host B to kill"
	else
		kill -KILL "$pid"
		for ((i = 0; i < 300; i++)); do
			pid_alive "$pid" || break
			sleep 0.1
		done
		pid_alive "$pid" && fail "host B's daemon $pid still runs 30 s after SIGKILL"
	fi
	touch "$E2E_TMP/go"
	wait "$bg"
	# an error exit (the command line's own 255 for a lost daemon too), no signal
	rc=$(cat "$E2E_TMP/recv.rc" 2>/dev/null)
	[ -n "$rc" ] && [ "$rc" -ne 0 ] && { [ "$rc" -lt 124 ] || [ "$rc" -eq 255 ]; } && pass ||
		{ fail "receive $* with its daemon killed exited '$rc' (want an error)"; \
		  sed 's/^/  receive stderr: /' "$E2E_TMP/recv.err" >&2; }
	# the restart: the next command starts the daemon, which opens far
	tarnb_ok pool list -H -o name,health far
	out_is "$(printf 'far\tONLINE')"
	[ -n "$(hostb_pid)" ] && [ "$(hostb_pid)" != "$pid" ] && pass ||
		fail "no new daemon on host B after the kill"
}

# token FS: FS's receive_resume_token on host B ("-" or empty: none)
token() {
	prop b "$1" receive_resume_token
}

state b far "$E2E_TMP/state0"

# --- without -s: a new file system is not there after the restart
killed_recv "$FULL" $((FSIZE * 2 / 5)) far/new
tarnb fs list -H -o name far/new
if [ "$RC" -eq 1 ]; then pass; else
	fail "far/new is there after its receive was killed: $(cat "$OUT")"
	tarnb fs get -H -o property,value type,receive_resume_token,referenced,mounted far/new
	sed 's/^/  far\/new: /' "$OUT" >&2
fi

state b far "$E2E_TMP/state1"
cmp -s "$E2E_TMP/state0" "$E2E_TMP/state1" && pass ||
	{ fail "far changed by a killed receive:"; diff "$E2E_TMP/state0" "$E2E_TMP/state1" >&2; }
# the same command again (what a user does after the crash) works
recv_from b "$FULL" -- far/new
[ "$RC" -eq 0 ] && pass || { fail "receive into far/new again after the kill"; show_output; }
same_tree "far/new received again after the kill" ma "$(mnt_of b far/new)"
tarnb fs destroy -r far/new

# --- without -s, an incremental: the old snapshots and files
killed_recv "$INC" $((ISIZE / 2)) far/base
state b far "$E2E_TMP/state1"
cmp -s "$E2E_TMP/state0" "$E2E_TMP/state1" && pass ||
	{ fail "far changed by a killed incremental:"; diff "$E2E_TMP/state0" "$E2E_TMP/state1" >&2; }
same_tree "far/base after a killed incremental" ma "$(mnt_of b far/base)"
tok=$(token far/base)
[ -z "$tok" ] || [ "$tok" = - ] && pass || fail "far/base has a resume token without -s"

# --- with -s, a new file system: the partial state, resumed
killed_recv "$FULL" $((FSIZE / 2)) -s far/res
tok=$(token far/res)
if [ -n "$tok" ] && [ "$tok" != - ]; then
	pass
	xfer_ok a b -t "$tok" -- -s far/res
	same_tree "far/res resumed after the kill" ma "$(mnt_of b far/res)"
	[ "$(prop b far/res@a guid)" = "$(prop a tank/src@a guid)" ] && pass ||
		fail "far/res@a's guid is not tank/src@a's"
else
	fail "-s: no receive_resume_token on far/res after the kill (synced before it)"
	tarnb fs list -H -t all -r -o name far
	show_output
fi

# --- with -s, killed right after the stream began: whatever is left,
# a partial state resumes (or nothing is there)
killed_recv "$FULL" 4096 -s far/early
tok=$(token far/early)
if [ -n "$tok" ] && [ "$tok" != - ]; then
	xfer_ok a b -t "$tok" -- -s far/early
	same_tree "far/early resumed after a kill at its start" ma "$(mnt_of b far/early)"
else
	tarnb fs list -H -o name far/early
	[ "$RC" -eq 1 ] && pass || fail "far/early is there without a resume token: $(cat "$OUT")"
fi

# --- with -s, an incremental: old files meanwhile, then resumed to @b
killed_recv "$INC" $((ISIZE / 2)) -s far/base
tok=$(token far/base)
same_tree "far/base with a partial incremental" ma "$(mnt_of b far/base)"
if [ -n "$tok" ] && [ "$tok" != - ]; then
	pass
	xfer_ok a b -t "$tok" -- -s far/base
	same_tree "far/base resumed to @b after the kill" mb "$(mnt_of b far/base)"
	tarnb_ok fs list -H -o name -t snapshot -r far/base
	out_is "far/base@a
far/base@b"
else
	fail "-s: no receive_resume_token on far/base after the kill (synced before it)"
fi

# --- a kill during the resume itself, then the resume of the resume
tarnb_ok fs destroy -r far/res
killed_recv "$FULL" $((FSIZE / 3)) -s far/res
tok=$(token far/res)
if [ -n "$tok" ] && [ "$tok" != - ]; then
	send_to_file a "$E2E_TMP/resume.stream" -t "$tok"
	RSIZE=$(stat -c %s "$E2E_TMP/resume.stream")
	[ "$RSIZE" -lt "$FSIZE" ] && pass ||
		fail "the resuming stream ($RSIZE bytes) is not shorter than the whole ($FSIZE)"
	killed_recv "$E2E_TMP/resume.stream" $((RSIZE / 2)) -s far/res
	tok=$(token far/res)
	if [ -n "$tok" ] && [ "$tok" != - ]; then
		xfer_ok a b -t "$tok" -- -s far/res
		same_tree "far/res after two kills" ma "$(mnt_of b far/res)"
	else
		fail "-s: no token after a kill during the resume"
	fi
else
	fail "-s: no receive_resume_token on far/res after the kill"
fi

# --- the pool: restarted once more, scrubbed clean, no leaked space
hostb_stop TERM
tarnb_ok pool scrub -w far
tarnb_ok pool status far
out_has "with 0 errors"
out_has "errors: No known data errors"
# (zfs destroy -r takes a partial receive with it; should it refuse,
# receive -A first, so that the space check below still means something)
for fs in far/base far/res far/new far/early; do
	tarnb fs list -H -o name "$fs"
	[ "$RC" -eq 0 ] || continue
	tarnb_ok fs destroy -r "$fs" && continue
	tarnb fs receive -A "$fs"
	tarnb fs destroy -r "$fs"
done
tarnb_ok fs list -H -t all -r -o name far
out_is "far"
for ((i = 0; i < 20; i++)); do
	tarnb pool sync far
	ALLOC=$(allocated b far)
	[ "$ALLOC" -le $((ALLOC0 + ALLOC0 / 4 + 1048576)) ] && break
	sleep 0.5
done
[ "$ALLOC" -le $((ALLOC0 + ALLOC0 / 4 + 1048576)) ] && pass ||
	fail "far's allocated space is $ALLOC after destroying everything, $ALLOC0 at the start"
echo "# far allocated: $ALLOC0 at the start, $ALLOC at the end"
e2e_done
