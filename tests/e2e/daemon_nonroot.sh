#!/bin/bash
# Only root may use the daemon: a non-root user gets one clear line
# ("permission denied: the tarn daemon is for root only", exit 1) whether
# the socket's permissions stop it (mode 0600, the normal case) or the
# daemon itself refuses it (its peer's uid, checked on every connection,
# shown here by opening the socket's permissions up); and a non-root user
# never starts a daemon on the default socket.
. "$(dirname "$0")/lib.sh"
describe "non-root users are refused with one clear line"
require_engine
unset TARN_NO_DAEMON
[ "$(id -u)" -eq 0 ] || skip "must run as root"
require_cmd setpriv util-linux
id nobody >/dev/null 2>&1 || skip "no user 'nobody'"
NOBODY=(setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups)
"${NOBODY[@]}" test -x "$TARN" || skip "user nobody cannot run $TARN"
MSG="^permission denied: the tarn daemon is for root only$"

# as_nobody ARGS...: tarn as nobody; rc in RC, output in OUT/ERR
as_nobody() {
	"${NOBODY[@]}" timeout 20 "$TARN" "$@" >"$E2E_TMP/nb.out" 2>"$E2E_TMP/nb.err"
	RC=$?
	cp "$E2E_TMP/nb.out" "$OUT"
	cp "$E2E_TMP/nb.err" "$ERR"
}
refused() {
	if [ "$RC" -eq 1 ] && [ "$(wc -l <"$ERR")" -eq 1 ] && grep -Eq "$MSG" "$ERR" &&
	    [ ! -s "$OUT" ]; then pass; else
		fail "$1: not refused with the one-line message (rc $RC)"
		show_output
	fi
}

mkdevs 1
tarn_ok pool create rootonly "${DEV[0]}"
PID=$(daemon_pid) && pass || fail "no daemon"

# the socket's directory and mode keep nobody out
chmod 755 "$E2E_TMP"     # let nobody reach the run dir, not the socket
chmod 755 "$TARN_RUNDIR"
as_nobody pool list
refused "socket mode 0600"

# with the socket opened up, the daemon's own check refuses
chmod 666 "$TARN_SOCKET"
as_nobody pool list
refused "peer credentials"
as_nobody pool destroy -f rootonly
refused "destroy as nobody"
as_nobody daemon stop
refused "daemon stop as nobody"
grep -q "refused a client with uid $(id -u nobody)" "$TARN_RUNDIR/tarnd.log" && pass ||
	fail "the refusal is not in the log"
chmod 600 "$TARN_SOCKET"
chmod 700 "$TARN_RUNDIR" "$E2E_TMP"

# root still can, and the pool is untouched
[ "$(daemon_pid)" = "$PID" ] && pass || fail "the daemon did not survive"
tarn_ok pool list -H -o name,health
out_is "rootonly	ONLINE"

# nobody never starts a daemon on the default socket
"${NOBODY[@]}" env -u TARN_SOCKET -u TARN_RUNDIR -u TARN_NO_DAEMON \
	TARN_CACHEFILE=/nonexistent/tarn.cache timeout 20 "$TARN" pool list \
	>"$OUT" 2>"$ERR"
RC=$?
refused "default socket"
e2e_done
