# tests/e2e/send_lib.bash — sourced (after lib.sh) by the send/receive
# tests (fs_send_*.sh, fs_recv_kill.sh): a second daemon standing in for
# another host ("host B": its own socket, run dir and cache file under
# $E2E_TMP/hostb, started by its first command like the test's own),
# commands on either host, `zfs send | zfs receive` pipes between them,
# stream files fed to receive with a byte flipped or cut off
# (send_feed.py), and file-tree manifests compared (send_tree.py).
# Not named *.sh so that tests/run does not run it as a test.
#
# Cleanup: an EXIT trap stops the background helpers it was told of
# (SEND_BG), destroys host B's pools (-f: unmounts), stops host B's
# daemon by the PID in its PID file, fails the test when host B's log
# shows a crash, then runs lib.sh's cleanup (this test's daemon, FUSE
# mounts left under $E2E_TMP, the temp dir).

SEND_TREE="$E2E_SRC/tests/e2e/send_tree.py"
SEND_FEED="$E2E_SRC/tests/e2e/send_feed.py"
export PYTHONDONTWRITEBYTECODE=1
HB_DIR="$E2E_TMP/hostb"
HB_CACHEFILE="$HB_DIR/cache/tarn.cache"
HB_RUNDIR="$HB_DIR/run"
HB_SOCKET="$HB_RUNDIR/tarnd.sock"
HB_ENV=(TARN_CACHEFILE="$HB_CACHEFILE" TARN_RUNDIR="$HB_RUNDIR" TARN_SOCKET="$HB_SOCKET")
SEND_ERR="$E2E_TMP/.send.err"
SEND_RC=0
SEND_BG=()
mkdir -p "$HB_DIR"

send_cleanup() {
	local rc=$? name p
	trap - EXIT
	for p in "${SEND_BG[@]}"; do
		kill -KILL "$p" 2>/dev/null
		{ wait "$p"; } 2>/dev/null
	done
	if [ -x "$TARN" ] && [ -f "$HB_CACHEFILE" ]; then
		for name in $(awk '$1 == "pool" { print $3 }' "$HB_CACHEFILE" 2>/dev/null); do
			timeout -k 5 30 env "${HB_ENV[@]}" "$TARN" pool destroy -f "$name" \
				>/dev/null 2>&1
		done
	fi
	hostb_stop TERM
	if [ -f "$HB_RUNDIR/tarnd.log" ] &&
	    grep -Eq "panic|Sanitizer|runtime error" "$HB_RUNDIR/tarnd.log"; then
		echo "FAIL: host B's daemon's log shows a crash:" >&2
		grep -E -A20 "panic|Sanitizer|runtime error" "$HB_RUNDIR/tarnd.log" |
			head -n 60 | sed 's/^/  hostb tarnd.log: /' >&2
		[ "$rc" -eq 0 ] && rc=1
	fi
	(exit $rc)
	e2e_cleanup
}
trap send_cleanup EXIT

# check DESC CMD...: a command that must succeed (its output on failure).
check() {
	local desc=$1
	shift
	run "$@"
	if [ "$RC" -eq 0 ]; then pass; else
		fail "$desc (rc $RC): $*"
		show_output
	fi
}

# hostb_pid / hostb_stop [SIGNAL]: host B's daemon, as daemon_pid and
# stop_daemon do for this test's own.
hostb_pid() {
	(TARN_RUNDIR=$HB_RUNDIR TARN_SOCKET=$HB_SOCKET; daemon_pid)
}
hostb_stop() {
	(TARN_RUNDIR=$HB_RUNDIR TARN_SOCKET=$HB_SOCKET; stop_daemon "${1:-TERM}")
}

# hostenv HOST: the environment (for env) of host a (this test's daemon,
# nothing to change) or b.
hostenv() {
	[ "$1" = b ] && printf '%s\n' "${HB_ENV[@]}"
	return 0
}

# on HOST CMD...: run CMD as on host HOST (a or b).
on() {
	local h=$1
	shift
	if [ "$h" = b ]; then env "${HB_ENV[@]}" "$@"; else "$@"; fi
}

# tarnb / tarnb_ok / tarnb_err: tarn, tarn_ok and tarn_err on host B.
tarnb() {
	run env "${HB_ENV[@]}" "$TARN" "$@"
}
tarnb_ok() {
	ok env "${HB_ENV[@]}" "$TARN" "$@"
}
tarnb_err() {
	TARN_CACHEFILE=$HB_CACHEFILE TARN_RUNDIR=$HB_RUNDIR TARN_SOCKET=$HB_SOCKET tarn_err "$@"
}
# tarn_on HOST ARGS... / tarn_on_ok HOST ARGS...
tarn_on() {
	local h=$1
	shift
	if [ "$h" = b ]; then tarnb "$@"; else tarn "$@"; fi
}
tarn_on_ok() {
	local h=$1
	shift
	if [ "$h" = b ]; then tarnb_ok "$@"; else tarn_ok "$@"; fi
}

# xfer FROM TO SEND-ARGS... -- RECV-ARGS...: `tarn fs send SEND-ARGS` on
# host FROM piped into `tarn fs receive RECV-ARGS` on host TO.  Send's
# status in SEND_RC and stderr in $SEND_ERR; receive's in RC, $OUT, $ERR.
xfer() {
	local from=$1 to=$2 sa=() fe=() te=() st
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		sa+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	mapfile -t fe < <(hostenv "$from")
	mapfile -t te < <(hostenv "$to")
	timeout -k 5 "$E2E_CMD_TIMEOUT" env "${fe[@]}" "$TARN" fs send "${sa[@]}" 2>"$SEND_ERR" |
		timeout -k 5 "$E2E_CMD_TIMEOUT" env "${te[@]}" "$TARN" fs receive "$@" \
		>"$OUT" 2>"$ERR"
	st=("${PIPESTATUS[@]}")
	SEND_RC=${st[0]}
	RC=${st[1]}
}

# xfer_ok FROM TO SEND-ARGS... -- RECV-ARGS...: both sides must succeed.
xfer_ok() {
	local what="$*"
	xfer "$@"
	if [ "$SEND_RC" -eq 0 ] && [ "$RC" -eq 0 ]; then pass; else
		fail "send | receive (send rc $SEND_RC, receive rc $RC): $what"
		sed 's/^/  send stderr: /' "$SEND_ERR" >&2
		show_output
		return 1
	fi
}

# send_to_file HOST FILE SEND-ARGS...: the stream into FILE; must succeed.
send_to_file() {
	local h=$1 f=$2 he=()
	shift 2
	mapfile -t he < <(hostenv "$h")
	timeout -k 5 "$E2E_CMD_TIMEOUT" env "${he[@]}" "$TARN" fs send "$@" >"$f" 2>"$SEND_ERR"
	SEND_RC=$?
	if [ "$SEND_RC" -eq 0 ] && [ -s "$f" ]; then pass; else
		fail "send $* > ${f##*/} (rc $SEND_RC, $(stat -c %s "$f" 2>/dev/null) bytes)"
		sed 's/^/  send stderr: /' "$SEND_ERR" >&2
		return 1
	fi
}

# recv_from HOST FEED-ARGS... -- RECV-ARGS...: `python3 send_feed.py
# FEED-ARGS | tarn fs receive RECV-ARGS` on host HOST: the status in RC,
# output in $OUT and $ERR (the feeder's own errors in $E2E_TMP/.feed.err).
recv_from() {
	local h=$1 fa=() he=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		fa+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	mapfile -t he < <(hostenv "$h")
	python3 "$SEND_FEED" "${fa[@]}" 2>"$E2E_TMP/.feed.err" |
		timeout -k 5 "$E2E_CMD_TIMEOUT" env "${he[@]}" "$TARN" fs receive "$@" \
		>"$OUT" 2>"$ERR"
	RC=${PIPESTATUS[1]}
}

# manifest DIR NAME: save DIR's tree manifest as $E2E_TMP/NAME.json.
manifest() {
	python3 "$SEND_TREE" manifest "$1" >"$E2E_TMP/$2.json" 2>"$E2E_TMP/.manifest.err" ||
		{ fail "manifest of $1"; sed 's/^/  /' "$E2E_TMP/.manifest.err" >&2; }
}

# same_tree DESC WANT GOT: WANT a saved manifest's NAME (or a directory),
# GOT a directory: equal file by file (send_tree.py compare).
same_tree() {
	local w=$2
	[ -d "$w" ] || w="$E2E_TMP/$w.json"
	if [ ! -d "$3" ]; then
		fail "$1: $3 is not there (not mounted?)"
		return 1
	fi
	if python3 "$SEND_TREE" compare "$w" "$3" >"$E2E_TMP/.cmp" 2>&1; then pass; else
		fail "$1: the trees differ (want ${2##*/}, got $3):"
		sed 's/^/  /' "$E2E_TMP/.cmp" >&2
		return 1
	fi
}

# mnt_of HOST FS: FS's mountpoint, printed, once FS is mounted there: a
# daemon restarted after a kill mounts again on its own (waited for up
# to 5 s); else FS is mounted (receive -u, or a receive that does not
# mount).
mnt_of() {
	local h=$1 fs=$2 m i
	m=$(on "$h" timeout -k 5 30 "$TARN" fs get -H -o value mountpoint "$fs" 2>/dev/null)
	[ -z "$m" ] && return 0                 # (no such file system)
	for ((i = 0; i < 100; i++)); do
		[ -n "$m" ] && mountpoint -q "$m" && break
		[ $i -eq 50 ] && on "$h" timeout -k 5 30 "$TARN" fs mount "$fs" >/dev/null 2>&1
		sleep 0.1
	done
	echo "$m"
}

# prop HOST NAME PROPERTY: a property's parsable value, printed.
prop() {
	on "$1" timeout -k 5 30 "$TARN" fs get -H -p -o value "$3" "$2" 2>/dev/null
}

# state HOST POOL FILE: what `zfs list -t all` says of POOL (names and
# guids), saved to FILE, to check that a refused receive changed nothing.
state() {
	on "$1" timeout -k 5 30 "$TARN" fs list -H -p -t all -r -o name,guid "$2" >"$3" 2>&1
}

# allocated HOST POOL: the pool's allocated bytes, printed (0 if unknown).
allocated() {
	on "$1" timeout -k 5 30 "$TARN" pool get -Hp allocated "$2" 2>/dev/null |
		awk '$2 == "allocated" { v = $3 } END { print v + 0 }'
}
