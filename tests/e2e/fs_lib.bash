# tests/e2e/fs_lib.bash — sourced (after lib.sh) by the file system
# tests, tests/e2e/fs_*.sh: start tarn-mount on a pool of device files,
# stop it (SIGTERM: clean unmount), kill it (SIGKILL: a crash), remount.
# Not named *.sh so that tests/run does not run it as a test.
#
# Cleanup: an EXIT trap kills tarn-mount by its PID, removes a mount left
# behind (lazy unmount) and then runs lib.sh's cleanup, which removes the
# devices and the temp dir.
#
# Environment: TARN_MOUNT (default: tarn-mount next to $TARN's build dir).

TARN_MOUNT=${TARN_MOUNT:-$(cd "$(dirname "$TARN")/.." 2>/dev/null && pwd)/tarn-mount/tarn-mount}
FS_OPS="$E2E_SRC/tests/e2e/fs_ops.py"
export PYTHONDONTWRITEBYTECODE=1        # fs_crash.sh imports fs_ops: no __pycache__ in the tree
MNT="$E2E_TMP/mnt"
TM_PIDFILE="$E2E_TMP/tarn-mount.pid"
TM_LOG="$E2E_TMP/tarn-mount.log"
TM_PID=""
TM_SHELL=""
mkdir -p "$MNT"

fs_cleanup() {
	local rc=$?
	trap - EXIT
	fs_halt KILL >/dev/null 2>&1
	(exit $rc)
	e2e_cleanup
}
trap fs_cleanup EXIT

# The only reason to skip: no FUSE device.  A missing tarn-mount is a failure.
require_fuse() {
	[ -e /dev/fuse ] || skip "no /dev/fuse"
	if [ ! -x "$TARN_MOUNT" ]; then
		echo "FAIL: no tarn-mount at $TARN_MOUNT (build first)" >&2
		exit 1
	fi
	require_cmd python3 python3
}

fs_mounted() {
	mountpoint -q "$MNT" 2>/dev/null
}

# fs_start [tarn-mount options] -- DEVICE-OR-SPEC...: start tarn-mount in
# the background on $MNT and wait until it is mounted (its PID file).
# It runs inside a subshell that records its exit status, so that killing
# it does not make bash print job notices.
fs_start() {
	local opts=() i
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		opts+=("$1")
		shift
	done
	[ "${1:-}" = "--" ] && shift
	rm -f "$TM_PIDFILE" "$E2E_TMP/tm.status"
	("$TARN_MOUNT" -p "$TM_PIDFILE" "${opts[@]}" "$MNT" "$@" >>"$TM_LOG" 2>&1
	 echo $? >"$E2E_TMP/tm.status") 2>/dev/null &
	TM_SHELL=$!
	TM_PID=""
	for ((i = 0; i < 300; i++)); do
		if [ -s "$TM_PIDFILE" ] && fs_mounted; then
			TM_PID=$(cat "$TM_PIDFILE")
			return 0
		fi
		if [ -s "$E2E_TMP/tm.status" ]; then
			wait "$TM_SHELL" 2>/dev/null
			fail "tarn-mount exited (status $(cat "$E2E_TMP/tm.status")) before" \
			    "mounting: ${opts[*]} $*"
			sed 's/^/  tarn-mount: /' "$TM_LOG" >&2
			return 1
		fi
		sleep 0.1
	done
	fail "tarn-mount did not mount within 30 s"
	TM_PID=$(cat "$TM_PIDFILE" 2>/dev/null)
	return 1
}

# fs_halt TERM|KILL: stop tarn-mount; with KILL also remove the dead mount.
# Returns tarn-mount's exit status (TERM) or 0.
fs_halt() {
	local sig=$1 i st=0
	if [ -n "$TM_PID" ] && kill -0 "$TM_PID" 2>/dev/null; then
		kill -"$sig" "$TM_PID" 2>/dev/null
		for ((i = 0; i < 600; i++)); do
			kill -0 "$TM_PID" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$TM_PID" 2>/dev/null; then
			echo "  tarn-mount $TM_PID did not stop on SIG$sig; killing it" >&2
			kill -KILL "$TM_PID" 2>/dev/null
			st=1
		fi
	fi
	if [ -n "${TM_SHELL:-}" ]; then
		wait "$TM_SHELL" 2>/dev/null
		if [ "$sig" = TERM ] && [ $st -eq 0 ]; then
			st=$(cat "$E2E_TMP/tm.status" 2>/dev/null || echo 1)
		fi
	fi
	TM_PID=""
	TM_SHELL=""
	if fs_mounted || grep -q " $MNT " /proc/mounts 2>/dev/null; then
		umount -l "$MNT" 2>/dev/null || fusermount3 -u -z "$MNT" 2>/dev/null
	fi
	return $st
}

# fs_stop: a clean stop (SIGTERM): tarn-mount must exit 0 and unmount.
fs_stop() {
	if fs_halt TERM; then pass; else
		fail "tarn-mount did not stop cleanly"
		sed 's/^/  tarn-mount: /' "$TM_LOG" >&2
	fi
	if grep -q " $MNT " /proc/mounts; then
		fail "still mounted after tarn-mount stopped"
	fi
}

# fs_crash: SIGKILL tarn-mount (the mount is left dead, then removed).
fs_crash() {
	fs_halt KILL
}

# check DESC CMD...: a check that must succeed (its output on failure).
check() {
	local desc=$1
	shift
	run "$@"
	if [ "$RC" -eq 0 ]; then pass; else
		fail "$desc (rc $RC): $*"
		show_output
	fi
}

# same_output DESC FILE1 FILE2: two result listings must be equal.
same_output() {
	if diff -u "$2" "$3" >"$E2E_TMP/.diff"; then pass; else
		fail "$1 differ (- ${2##*/}, + ${3##*/}):"
		sed 's/^/  /' "$E2E_TMP/.diff" >&2
	fi
}

# Background helpers of a test: started with `cmd & BG+=($!)`, stopped
# (SIGKILL, then reaped) by fs_stop_bg, also from the EXIT trap.
BG=()
fs_stop_bg() {
	local p
	for p in "${BG[@]}"; do
		kill -KILL "$p" 2>/dev/null
		{ wait "$p"; } 2>/dev/null
	done
	BG=()
}
