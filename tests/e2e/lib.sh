# tests/e2e/lib.sh — sourced by every end-to-end test script.
#
# Each script: `. "$(dirname "$0")/lib.sh"`, then `describe "what it tests"`,
# then checks, then `e2e_done`.  Setup gives a private temp dir ($E2E_TMP)
# with the cache file inside it (TARN_CACHEFILE), so tests never touch
# /etc/tarn, and the daemon's socket and PID file too (TARN_SOCKET,
# TARN_RUNDIR), so each test talks to a daemon of its own, started by its
# first pool command.  An EXIT trap destroys the pools left in that cache
# file, stops that daemon (by the PID in its PID file, never by name) and
# removes the temp dir, even when a check fails or the script is killed.
# Every tarn command runs under `timeout`, and tests/run runs each script
# under `timeout 120` too.
#
# Environment: TARN (path of the tarn binary; default build/cmd/tarn/tarn;
# its tarnd is the one next to it).  TARN_NO_DAEMON=1 runs every command
# in-process instead (the daemon_* tests then skip).
# Exit status: 0 all checks passed, 1 some failed, 77 skipped.

set -u
E2E_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TARN=${TARN:-$E2E_SRC/build/cmd/tarn/tarn}
E2E_NAME=$(basename "$0" .sh)
E2E_FAILS=0
E2E_CHECKS=0
E2E_CMD_TIMEOUT=${E2E_CMD_TIMEOUT:-60}
E2E_DEVSIZE=${E2E_DEVSIZE:-128M}

E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/tarn-e2e-$E2E_NAME.XXXXXX") || exit 1
export TARN_CACHEFILE="$E2E_TMP/cache/tarn.cache"
export TARN_RUNDIR="$E2E_TMP/run"
export TARN_SOCKET="$TARN_RUNDIR/tarnd.sock"
# the daemon's config file: none (defaults), whatever /etc/tarn/tarnd.conf
# the machine has; a test of the config file sets its own
export TARN_CONFIG="$E2E_TMP/tarnd.conf"
# the daemon mounts datasets only in tests that ask (fs_mount.sh sets 1)
export TARN_AUTOMOUNT=0
OUT="$E2E_TMP/.out"
ERR="$E2E_TMP/.err"
RC=0

# daemon_pid: the pid in this test's PID file when that process is a tarnd
# serving this test's socket (so a stale file never names a stranger).
daemon_pid() {
	local pidf="$TARN_RUNDIR/tarnd.pid" pid
	[ -f "$pidf" ] || return 1
	pid=$(head -c 32 "$pidf" | tr -dc '0-9')
	[ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
	tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | head -n 1 | grep -q 'tarnd$' || return 1
	if tr '\0' '\n' <"/proc/$pid/cmdline" | grep -qxF -- "$TARN_SOCKET" ||
	    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null |
	    grep -qxF -- "TARN_SOCKET=$TARN_SOCKET"; then
		echo "$pid"
		return 0
	fi
	return 1
}

# pid_alive PID: some thread of it still runs (a zombie nobody reaped yet
# counts as gone).  Every thread is looked at: a killed multi-threaded
# process shows its main thread as a zombie while the others still exit,
# and until the last one has, its descriptors (the daemon's listening
# socket) stay open.
pid_alive() {
	local st t
	for t in /proc/"$1"/task/*/status; do
		st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "$t" 2>/dev/null)
		[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ] && return 0
	done
	return 1
}

# stop_daemon [SIGNAL]: stop this test's daemon (SIGTERM: cleanly; or the
# signal given) and wait until it is gone; SIGKILL after 20 s.
stop_daemon() {
	local sig=${1:-TERM} pid i
	pid=$(daemon_pid) || return 0
	kill -"$sig" "$pid" 2>/dev/null
	for ((i = 0; i < 200; i++)); do
		pid_alive "$pid" || return 0
		sleep 0.1
	done
	echo "# tarnd $pid did not stop on SIG$sig; killing it" >&2
	kill -KILL "$pid" 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		pid_alive "$pid" || return 0
		sleep 0.1
	done
}

# Background helpers a test starts (their PIDs in E2E_BGPIDS) are killed
# first by e2e_cleanup.
E2E_BGPIDS=()
e2e_cleanup() {
	local rc=$? name
	trap - EXIT INT TERM
	for name in "${E2E_BGPIDS[@]}"; do
		kill "$name" 2>/dev/null
		wait "$name" 2>/dev/null
	done
	if [ -x "$TARN" ] && [ -f "$TARN_CACHEFILE" ]; then
		for name in $(awk '$1 == "pool" { print $3 }' "$TARN_CACHEFILE" 2>/dev/null); do
			timeout -k 5 30 "$TARN" pool destroy -f "$name" >/dev/null 2>&1
		done
	fi
	stop_daemon TERM
	# FUSE mounts left under this test's temp dir (the daemon gone)
	for name in $(awk -v t="$E2E_TMP" 'index($2, t) == 1 { print $2 }' /proc/mounts |
	    sort -r); do
		fusermount3 -uz "$name" 2>/dev/null || umount -l "$name" 2>/dev/null
	done
	# what the daemon's sanitizers or panics said went to its log
	if [ -f "$TARN_RUNDIR/tarnd.log" ] &&
	    grep -Eq "panic|Sanitizer|runtime error" "$TARN_RUNDIR/tarnd.log"; then
		echo "FAIL: the daemon's log shows a crash:" >&2
		grep -E -A20 "panic|Sanitizer|runtime error" "$TARN_RUNDIR/tarnd.log" |
			head -n 60 | sed 's/^/  tarnd.log: /' >&2
		[ "$rc" -eq 0 ] && rc=1
	fi
	case "$E2E_TMP" in
	*/tarn-e2e-*) chmod -R u+rwx "$E2E_TMP" 2>/dev/null; rm -rf "$E2E_TMP" ;;
	esac
	exit $rc
}
trap e2e_cleanup EXIT
trap 'exit 130' INT TERM

describe() {
	echo "# $E2E_NAME: $*"
}

fail() {
	E2E_FAILS=$((E2E_FAILS + 1))
	echo "FAIL: $*" >&2
}

pass() {
	E2E_CHECKS=$((E2E_CHECKS + 1))
}

# Finish: exit 0 when every check passed.
e2e_done() {
	if [ "$E2E_FAILS" -gt 0 ]; then
		echo "# $E2E_NAME: $E2E_FAILS check(s) failed"
		exit 1
	fi
	echo "# $E2E_NAME: all $E2E_CHECKS checks passed"
	exit 0
}

skip() {
	echo "# $E2E_NAME: SKIP: $*"
	exit 77
}

# The tests need a built tarn; without one they are skipped, not failed.
require_engine() {
	[ -x "$TARN" ] || skip "no tarn binary at $TARN (build first)"
}

# require_cmd CMD PACKAGE: the test needs the command CMD, from the Debian
# package PACKAGE; without it the test fails (not skips: ./setup.sh
# installs every package of scripts/packages.txt, and e2e/deps_list checks
# that each PACKAGE named this way is in that list).
require_cmd() {
	command -v "$1" >/dev/null && return 0
	echo "FAIL: $1 is not installed (Debian package $2; ./setup.sh installs" \
		"every package of scripts/packages.txt)" >&2
	exit 1
}

# require_daemon_mounts: the test mounts datasets through tarnd; skip
# without a tarn binary, the daemon or /dev/fuse (python3 must be there).  Turns the
# daemon's automatic mounts on and sets MNT (a directory to mount at).
require_daemon_mounts() {
	require_engine
	[ -n "${TARN_NO_DAEMON:-}" ] && skip "mounting needs the daemon"
	[ -e /dev/fuse ] || skip "no /dev/fuse"
	require_cmd python3 python3
	export TARN_AUTOMOUNT=1
	MNT="$E2E_TMP/mnt"
}

# mkdevs N [SIZE] [PREFIX]: sparse files $DEVDIR/PREFIX0..N-1 -> ${DEV[@]}
DEVDIR="$E2E_TMP/dev"
mkdir -p "$DEVDIR"
mkdevs() {
	local n=$1 size=${2:-$E2E_DEVSIZE} prefix=${3:-d} i
	DEV=()
	for ((i = 0; i < n; i++)); do
		rm -f "$DEVDIR/$prefix$i"
		truncate -s "$size" "$DEVDIR/$prefix$i" || fail "truncate $prefix$i"
		DEV+=("$DEVDIR/$prefix$i")
	done
}

# run CMD...: run with a timeout; stdout in $OUT, stderr in $ERR, status in $RC.
run() {
	timeout -k 5 "$E2E_CMD_TIMEOUT" "$@" >"$OUT" 2>"$ERR"
	RC=$?
	if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then
		echo "  (timed out after ${E2E_CMD_TIMEOUT}s: $*)" >&2
	fi
	return 0
}

tarn() {
	run "$TARN" "$@"
}

show_output() {
	sed 's/^/  stdout: /' "$OUT" >&2
	sed 's/^/  stderr: /' "$ERR" >&2
}

# ok CMD...: the command must succeed.
ok() {
	run "$@"
	if [ "$RC" -ne 0 ]; then
		fail "expected success (rc $RC): $*"
		show_output
		return 1
	fi
	pass
}

# tarn_ok ARGS...: `tarn ARGS` must succeed.
tarn_ok() {
	ok "$TARN" "$@"
}

# tarn_err RC REGEX ARGS...: `tarn ARGS` must exit with RC (1: error,
# 2: usage), print nothing on stdout, and its stderr must begin with one
# line matching REGEX (usage errors add the usage text after it).
tarn_err() {
	local want=$1 re=$2
	shift 2
	run "$TARN" "$@"
	if [ "$RC" -ge 128 ]; then
		fail "crashed (signal $((RC - 128))): tarn $*"
		show_output
		return 1
	fi
	if [ "$RC" -ne "$want" ]; then
		fail "expected exit $want, got $RC: tarn $*"
		show_output
		return 1
	fi
	if [ "$want" -eq 1 ] && [ "$(wc -l <"$ERR")" -ne 1 ]; then
		fail "expected exactly one line on stderr: tarn $*"
		show_output
		return 1
	fi
	if ! head -n 1 "$ERR" | grep -Eq -- "$re"; then
		fail "stderr does not match /$re/: tarn $*"
		show_output
		return 1
	fi
	pass
}

# out_has REGEX / out_lacks REGEX / out_is TEXT: checks on the last stdout.
out_has() {
	if grep -Eq -- "$1" "$OUT"; then pass; else
		fail "stdout lacks /$1/"
		show_output
	fi
}

out_lacks() {
	if grep -Eq -- "$1" "$OUT"; then
		fail "stdout unexpectedly has /$1/"
		show_output
	else pass; fi
}

out_is() {
	if [ "$(cat "$OUT")" = "$1" ]; then pass; else
		fail "stdout is not exactly '$1'"
		show_output
	fi
}

# sums_save FILES... / sums_check: the files must be byte-for-byte unchanged.
sums_save() {
	md5sum "$@" >"$E2E_TMP/.sums" 2>/dev/null
}

sums_check() {
	if md5sum --quiet -c "$E2E_TMP/.sums" >/dev/null 2>&1; then pass; else
		fail "devices changed: $(md5sum --quiet -c "$E2E_TMP/.sums" 2>&1 | tr '\n' ' ')"
	fi
}

# Scratch directory for import -d (so scans see only what a test puts there).
scandir() {
	local d="$E2E_TMP/$1"
	mkdir -p "$d"
	echo "$d"
}
