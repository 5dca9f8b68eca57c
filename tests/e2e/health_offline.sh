#!/bin/bash
# A device taken offline misses the txgs written meanwhile; brought back
# online it is resilvered from the txg it missed on, so the resilver
# copies far less than the pool holds.  offline -t lasts until the next
# import only; a mirror's last side cannot go offline.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/health.bash"
describe "offline, write, online: the resilver copies only what was missed"
require_engine

# to_bytes 1.50M -> 1572864 (zpool's nicenum / nicebytes)
to_bytes() {
	awk -v s="$1" 'BEGIN {
		n = s + 0; u = substr(s, length(s), 1); m = 1
		if (u == "K") m = 1024; else if (u == "M") m = 1048576
		else if (u == "G") m = 1073741824; else if (u == "T") m = 1099511627776
		printf "%d\n", n * m }'
}

make_pool off mirror 2 64M || e2e_done
if [ "$HAVE_DATA" -eq 0 ]; then
	# no data writer: let the history grow (a record per command)
	for ((k = 0; k < 150; k++)); do run "$TARN" pool clear off; done
fi
tarn_ok pool export off                  # all of it synced
tarn_ok pool import -d "$DEVDIR/off" off
tarn_ok pool list -Hp -o allocated off
ALLOC=$(cat "$OUT")

tarn_ok pool offline off "${DEV[1]}"
tarn_ok pool status off
out_has "^ state: DEGRADED$"
out_has "^status: Devices were taken offline by an administrator; the$"
[ "$(dev_state "${DEV[1]}")" = OFFLINE ] && pass || { fail "not OFFLINE"; show_output; }
tarn_ok pool status -x
out_has "^  pool: off$"
tarn_err 1 "^cannot offline" pool offline off "${DEV[0]}"   # the last replica
# write while it is away (kept across export and import: not -t)
put_data off
tarn_ok pool status off
[ "$(dev_state "${DEV[1]}")" = OFFLINE ] && pass || { fail "offline did not persist"; show_output; }

tarn_ok pool online off "${DEV[1]}"
wait_scan off
tarn_ok pool status off
out_has "^ state: ONLINE$"
out_has "^  scan: resilvered [0-9.]+[BKMGT] in [0-9:]+ with 0 errors on "
COPIED=$(to_bytes "$(scan_line | awk '{ print $3 }')")
echo "  pool holds $ALLOC bytes; the resilver copied $COPIED"
# with data the pool holds megabytes; without, its metadata churns more
# (in-process, each command is an import and an export of its own)
[ "$HAVE_DATA" -eq 1 ] && LIMIT=$((ALLOC / 4)) || LIMIT=$((ALLOC / 2))
if [ "$COPIED" -gt 0 ] && [ "$COPIED" -lt "$LIMIT" ]; then pass; else
	fail "resilver copied $COPIED bytes of $ALLOC allocated: not 'far less'"
	show_output
fi
tarn_ok pool scrub -w off
tarn_ok pool status off
out_has "^  scan: scrub repaired 0B in [0-9:]+ with 0 errors on "
tarn_ok pool status -x off
out_is "pool 'off' is healthy"
check_data off

# offline -t: back online at the next import (in-process every command
# is an import, so it cannot be seen offline there)
in_process && { tarn_ok pool destroy off; e2e_done; }
tarn_ok pool offline -t off "${DEV[0]}"
tarn_ok pool status off
[ "$(dev_state "${DEV[0]}")" = OFFLINE ] && pass || { fail "-t: not OFFLINE"; show_output; }
tarn_ok pool export off
tarn_ok pool import -d "$DEVDIR/off" off
wait_scan off
tarn_ok pool status off
[ "$(dev_state "${DEV[0]}")" = ONLINE ] && pass || { fail "-t: still offline after import"; show_output; }
tarn_ok pool history off
out_has " zpool offline off ${DEV[1]}$"
out_has " zpool online off ${DEV[1]}$"
out_has " zpool offline -t off ${DEV[0]}$"
tarn_ok pool destroy off
e2e_done
