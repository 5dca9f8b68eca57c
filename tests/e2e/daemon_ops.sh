#!/bin/bash
# The control socket speaks operations (docs/DESIGN.md, "host"): a client
# other than `tarn` sends an operation's name and JSON arguments and gets
# a JSON result and an exit status back.  Bad requests — an unknown
# operation, arguments that are not JSON or not an object, a command line
# instead of an operation, a wrong magic number, a request cut short or
# absurdly long — get a clear answer or a closed connection, are logged,
# and the daemon goes on serving.
. "$(dirname "$0")/lib.sh"
describe "operations on the socket, and bad requests refused"
require_engine
require_cmd python3 python3
unset TARN_NO_DAEMON
[ -x "$(dirname "$TARN")/tarnd" ] || skip "no tarnd next to $TARN"
PY="$(dirname "$0")/daemon_ops.py"

ask() {    # ask CASE: the daemon's answer, one line a frame, in $OUT
	python3 "$PY" "$TARN_SOCKET" "$1" >"$OUT" 2>"$ERR"
	RC=$?
}

mkdevs 1
tarn_ok pool create tank "${DEV[0]}"       # starts the daemon

ask names
[ "$RC" -eq 0 ] && pass || fail "names: client rc $RC: $(cat "$ERR")"
grep -q '^RESULT .*"names": *\[ *"tank" *\]' "$OUT" && pass || fail "names: $(cat "$OUT")"
grep -q '^EXIT 0$' "$OUT" && pass || fail "names: exit: $(cat "$OUT")"

ask nosuchpool
grep -q '"reports": *\[ *\[ *"sync", *"nosuch", *[0-9]*, *"no such pool" *\] *\]' "$OUT" && pass ||
	fail "nosuchpool: $(cat "$OUT")"
grep -q '^EXIT 1$' "$OUT" && pass || fail "nosuchpool: exit: $(cat "$OUT")"

ask unknown
grep -q '^RESULT .*"error": *2' "$OUT" && pass || fail "unknown op: $(cat "$OUT")"
grep -q '^EXIT 1$' "$OUT" && pass || fail "unknown op: exit: $(cat "$OUT")"
grep -q "bad operation 'no.such'" "$TARN_RUNDIR/tarnd.log" && pass || fail "unknown op not logged"

for c in badjson notobject; do
	ask $c
	grep -q '^RESULT .*"error": *22' "$OUT" && pass || fail "$c: $(cat "$OUT")"
	grep -q '^EXIT 1$' "$OUT" && pass || fail "$c: exit: $(cat "$OUT")"
done

ask control
grep -q '^ERR tarn: the daemon runs operations, not command lines' "$OUT" && pass ||
	fail "command line: $(cat "$OUT")"
grep -q '^EXIT 2$' "$OUT" && pass || fail "command line: exit: $(cat "$OUT")"

ask status
grep -q '^OUT tarnd .* is running' "$OUT" && pass || fail "daemon status: $(cat "$OUT")"

for c in badmagic truncated toomany; do
	ask $c
	[ "$(cat "$OUT")" = CLOSED ] && pass || fail "$c: not just closed: $(cat "$OUT")"
done
grep -q "bad request from a client" "$TARN_RUNDIR/tarnd.log" && pass || fail "bad requests not logged"

# the daemon is still there, with the pool, and tarn still gets its answers
tarn_ok pool list -H -o name
out_is "tank"
tarn_ok pool destroy tank
e2e_done
