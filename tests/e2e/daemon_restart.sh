#!/bin/bash
# The daemon's pools survive it: after SIGTERM (clean stop) and after
# SIGKILL (a crash, socket and PID file left behind) the next command
# starts a new daemon, which opens every pool of the cache file again;
# the pools are ONLINE and their state is what was committed.  A SIGKILL
# while commands change pools loses nothing committed either, and a scrub
# (when the verb exists) finds nothing wrong.
. "$(dirname "$0")/lib.sh"
describe "pools re-opened after SIGTERM, SIGKILL and a kill during commands"
require_engine
unset TARN_NO_DAEMON

mkdevs 5
tarn_ok pool create keep1 mirror "${DEV[0]}" "${DEV[1]}"
tarn_ok pool create keep2 raidz1 "${DEV[2]}" "${DEV[3]}" "${DEV[4]}"
PID=$(daemon_pid) && pass || fail "no daemon after create"

# --- SIGTERM: a clean stop
stop_daemon TERM
[ -e "$TARN_SOCKET" ] && fail "socket left after SIGTERM" || pass
[ -e "$TARN_RUNDIR/tarnd.pid" ] && fail "PID file left after SIGTERM" || pass
grep -q "pool 'keep1'" "$TARN_RUNDIR/tarnd.log" && pass || fail "log does not mention keep1"
tarn_ok pool list -H -o name,health
out_is "keep1	ONLINE
keep2	ONLINE"
PID2=$(daemon_pid) && [ "$PID2" != "$PID" ] && pass || fail "no new daemon after SIGTERM"
grep -q "opened pool 'keep2'" "$TARN_RUNDIR/tarnd.log" && pass || fail "keep2 not re-opened at start"

# --- SIGKILL: a crash leaves socket and PID file; the next start copes
stop_daemon KILL
[ -S "$TARN_SOCKET" ] && pass || fail "expected a stale socket after SIGKILL"
[ -f "$TARN_RUNDIR/tarnd.pid" ] && pass || fail "expected a stale PID file after SIGKILL"
tarn_ok pool status -x
out_is "all pools are healthy"
PID3=$(daemon_pid) && [ "$PID3" != "$PID2" ] && pass || fail "no new daemon after SIGKILL"
tarn_ok pool list -H -o name,health
out_is "keep1	ONLINE
keep2	ONLINE"

# a stale PID file naming a live process that is not tarnd does not matter
stop_daemon KILL
echo 1 >"$TARN_RUNDIR/tarnd.pid"
tarn_ok pool status -x keep1
out_is "pool 'keep1' is healthy"

# --- SIGKILL while commands change the pools
mkdevs 2 "$E2E_DEVSIZE" w
(
	for ((i = 0; i < 40; i++)); do
		"$TARN" pool create "churn$i" mirror "${DEV[0]}" "${DEV[1]}" >/dev/null 2>&1
		"$TARN" pool export keep2 >/dev/null 2>&1
		"$TARN" pool import -d "$DEVDIR" keep2 >/dev/null 2>&1
		"$TARN" pool destroy -f "churn$i" >/dev/null 2>&1
	done
) &
CHURN=$!
sleep 3
stop_daemon KILL
# the loop's next commands start a new daemon; let it finish
wait "$CHURN"
# keep2 may be exported or imported, whatever was committed last
run "$TARN" pool list -H -o name keep2
if [ "$RC" -ne 0 ]; then
	tarn_ok pool import -d "$DEVDIR" keep2
fi
for p in keep1 keep2; do
	tarn_ok pool status -x "$p"
	out_is "pool '$p' is healthy"
done
if "$TARN" pool help 2>/dev/null | grep -q "scrub"; then
	for p in keep1 keep2; do
		tarn_ok pool scrub -w "$p"
		tarn_ok pool status "$p"
		out_has "^  scan: scrub repaired .* with 0 errors"
	done
fi
# leftovers of the churn go too
for name in $("$TARN" pool list -H -o name); do
	case "$name" in churn*) tarn_ok pool destroy -f "$name" ;; esac
done
stop_daemon TERM
tarn_ok pool list -H -o name,health
out_is "keep1	ONLINE
keep2	ONLINE"
e2e_done
