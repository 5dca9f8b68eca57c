#!/bin/bash
# The daemon starts with the first pool command and answers the ones
# after it: PID file and socket (mode 0600) in TARN_RUNDIR, `tarn daemon
# status|stop|start`, a client in $(...) that returns (the daemon keeps
# none of its descriptors), stop removing socket and PID file, exit
# statuses and stderr that are the command's own, a read-only import
# held (and listed) until exported, TARN_NO_DAEMON=1 in-process without a
# daemon, and a client naming another cache file refused.
. "$(dirname "$0")/lib.sh"
describe "auto-start, daemon status/stop/start, exit status and output"
require_engine
unset TARN_NO_DAEMON
TARND="$(dirname "$TARN")/tarnd"
[ -x "$TARND" ] || skip "no tarnd next to $TARN"

run "$TARN" daemon status
[ "$RC" -eq 1 ] && pass || fail "daemon status with none running: rc $RC"
out_has "not running"
tarn_ok daemon stop           # none running: nothing to do
[ -e "$TARN_SOCKET" ] && fail "daemon stop started a daemon" || pass

# the first command starts it
tarn_ok pool list
out_is "no pools available"
[ -S "$TARN_SOCKET" ] && pass || fail "no socket at $TARN_SOCKET"
[ "$(stat -c %a "$TARN_SOCKET")" = 600 ] && pass || fail "socket mode $(stat -c %a "$TARN_SOCKET")"
PID=$(daemon_pid) && pass || fail "no live tarnd in $TARN_RUNDIR/tarnd.pid"
[ -f "$TARN_RUNDIR/tarnd.log" ] && grep -q "started" "$TARN_RUNDIR/tarnd.log" && pass ||
	fail "no log with a start line in $TARN_RUNDIR"

# in $(...): the client returns at once, the daemon holds no pipe of it
got=$(timeout 20 "$TARN" pool list)
[ "$got" = "no pools available" ] && pass || fail "command substitution got '$got'"

tarn_ok daemon status
out_has "^tarnd .* is running, pid $PID"
out_has "^socket: +$TARN_SOCKET$"
out_has "^cache file: +$TARN_CACHEFILE$"

# commands run in it: exit statuses and stderr are the command's
mkdevs 2
tarn_ok pool create auto mirror "${DEV[@]}"
tarn_ok daemon status
out_has "auto +held, ONLINE"
tarn_err 1 "^cannot open 'nosuch': no such pool$" pool status nosuch
[ -s "$OUT" ] && fail "stdout not empty on an error" || pass
tarn_err 2 "^missing pool name argument$" pool create
grep -q "^usage:" "$ERR" && pass || fail "no usage after a usage error"
tarn_err 2 "^unrecognized command 'frob'$" pool frob
tarn_err 1 "^cannot create 'auto': " pool create auto "${DEV[0]}"
run "$TARN" pool status -x auto
[ "$RC" -eq 0 ] && [ "$(cat "$OUT")" = "pool 'auto' is healthy" ] && [ ! -s "$ERR" ] && pass ||
	{ fail "status -x auto"; show_output; }
# the same pid served all of it
[ "$(daemon_pid)" = "$PID" ] && pass || fail "the daemon changed: $PID -> $(daemon_pid)"

# a client that names another cache file is refused, the daemon's stays
TARN_CACHEFILE="$E2E_TMP/other.cache" run "$TARN" pool list
[ "$RC" -eq 1 ] && grep -q "uses the cache file $TARN_CACHEFILE" "$ERR" && pass ||
	{ fail "a client with another cache file was not refused"; show_output; }
# the same file named through another path is the same file
(cd "$E2E_TMP" && TARN_CACHEFILE=cache/../cache/tarn.cache run "$TARN" pool list -H -o name)
out_is "auto"

# a read-only import is held by the daemon (not in the cache file) and
# listed; exporting it lets it go
tarn_ok pool export auto
tarn_ok pool import -o readonly=on -d "$DEVDIR" auto
tarn_ok pool list -H -o name,health
out_is "auto	ONLINE"
grep -q " auto$" "$TARN_CACHEFILE" && fail "a read-only import went into the cache file" || pass
tarn_ok pool export auto
tarn_ok pool list
out_is "no pools available"
tarn_ok pool import -d "$DEVDIR" auto

# stop: clean, socket and PID file gone, the process gone
tarn_ok daemon stop
pid_alive "$PID" && fail "tarnd $PID still runs after daemon stop" || pass
[ -e "$TARN_SOCKET" ] && fail "socket left behind" || pass
[ -e "$TARN_RUNDIR/tarnd.pid" ] && fail "PID file left behind" || pass
grep -q "stopped" "$TARN_RUNDIR/tarnd.log" && pass || fail "no 'stopped' in the log"
grep -q "closing pool 'auto'" "$TARN_RUNDIR/tarnd.log" && pass || fail "auto was not closed"

# in-process: works without starting a daemon
TARN_NO_DAEMON=1 run "$TARN" pool list -H -o name,health
[ "$RC" -eq 0 ] && [ "$(cat "$OUT")" = "auto	ONLINE" ] && pass || { fail "TARN_NO_DAEMON list"; show_output; }
[ -e "$TARN_SOCKET" ] && fail "TARN_NO_DAEMON=1 started a daemon" || pass

# daemon start; a second tarnd on the same socket refuses to run
tarn_ok daemon start
PID2=$(daemon_pid) && pass || fail "daemon start: no daemon"
[ "$PID2" != "$PID" ] && pass || fail "the old pid again"
run "$TARND" -f -s "$TARN_SOCKET"
[ "$RC" -eq 1 ] && grep -q "already running (pid $PID2" "$ERR" && pass ||
	{ fail "a second tarnd did not refuse"; show_output; }
tarn_ok pool status -x
out_is "all pools are healthy"
# `tarn --stop-daemon` is the same as `tarn daemon stop`
tarn_ok --stop-daemon
pid_alive "$PID2" && fail "tarnd $PID2 still runs after --stop-daemon" || pass
tarn_err 2 "^unrecognized daemon command 'bogus'" daemon bogus
e2e_done
