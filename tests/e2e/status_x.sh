#!/bin/bash
# `status -x`: "no pools available" with none, exactly "all pools are
# healthy" when every pool is ONLINE, and the status of the unhealthy ones
# otherwise (a mirror with a device gone is DEGRADED).
. "$(dirname "$0")/lib.sh"
describe "status -x literal strings and unhealthy pools"
require_engine

tarn_ok pool status -x
out_is "no pools available"
tarn_ok pool status
out_is "no pools available"

mkdevs 3
tarn_ok pool create good "${DEV[0]}"
tarn_ok pool create fragile mirror "${DEV[1]}" "${DEV[2]}"
tarn_ok pool status -x
out_is "all pools are healthy"
tarn_ok pool status -x good
out_is "pool 'good' is healthy"

# both pools in plain status, sorted by name, separated by one blank line
tarn_ok pool status
out_has "^  pool: fragile$"
out_has "^  pool: good$"
[ "$(grep -c '^errors: No known data errors$' "$OUT")" -eq 2 ] && pass ||
	fail "expected two errors: lines"

# take one side of the mirror away (while no daemon holds it open, as
# across a reboot)
stop_daemon
mv "${DEV[2]}" "${DEV[2]}.gone"
tarn_ok pool status -x
out_has "^  pool: fragile$"
out_has "^ state: DEGRADED$"
out_lacks "^  pool: good$"
out_lacks "all pools are healthy"
out_has "^	  mirror-0 +DEGRADED"
out_has "UNAVAIL"
tarn_ok pool list -H -o name,health fragile
out_is "fragile	DEGRADED"
stop_daemon
mv "${DEV[2]}.gone" "${DEV[2]}"
# the daemon resilvers what the mirror missed (in-process status just looks)
for ((i = 0; i < 120; i++)); do
	run "$TARN" pool status -x
	[ "$(cat "$OUT")" = "all pools are healthy" ] && break
	sleep 0.5
done
tarn_ok pool status -x
out_is "all pools are healthy"
tarn_ok pool destroy fragile
tarn_ok pool destroy good
e2e_done
