#!/bin/bash
# The weekly cron job of a ZFS admin, run through the `zpool` symlink:
#
#	zpool scrub -w POOL
#	[ "$(zpool status -x)" = "all pools are healthy" ]
#
# It must succeed on a healthy pool and fail on a damaged one (a mirror
# side overwritten while exported: the scrub repairs it, but the CKSUM
# counts make status -x report the pool, as zpool does) and on a
# degraded one (a side missing).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/health.bash"
describe "the weekly 'scrub -w; status -x' cron job on healthy and damaged pools"
require_engine
need_daemon "status -x reads the CKSUM counts the scrub left"

mkdir -p "$E2E_TMP/bin"
ln -s "$TARN" "$E2E_TMP/bin/zpool"
JOB="$E2E_TMP/bin/weekly-scrub"
cat >"$JOB" <<'EOF'
#!/bin/sh
# weekly-scrub POOL: scrub, wait, then ask whether all is well
PATH="$(dirname "$0"):$PATH"
zpool scrub -w "$1" || exit 2
[ "$(zpool status -x)" = "all pools are healthy" ]
EOF
chmod +x "$JOB"

# cron_is WANT POOL: the job's exit status must be WANT
cron_is() {
	run "$JOB" "$2"
	if [ "$RC" -eq "$1" ]; then pass; else
		fail "weekly-scrub $2: exit $RC, expected $1"
		show_output
	fi
}

make_pool wk mirror 2 64M || e2e_done
cron_is 0 wk
tarn_ok pool status wk
out_has "^  scan: scrub repaired 0B in [0-9:]+ with 0 errors on "

# damage one side while exported
tarn_ok pool export wk
blocks=$(corrupt_written "${DEV[1]}")
[ "$blocks" -gt 0 ] && pass || fail "nothing written on ${DEV[1]}"
tarn_ok pool import -d "$DEVDIR/wk" wk
cron_is 1 wk
run "$E2E_TMP/bin/zpool" status -x
out_has "^  pool: wk$"
out_has "^status: Devices returned bad or unreadable data\."
# cleared, the next week's run is happy again
tarn_ok pool clear wk
cron_is 0 wk

# a side gone
tarn_ok pool export wk
mv "${DEV[0]}" "$E2E_TMP/gone"
tarn_ok pool import -d "$DEVDIR/wk" wk
cron_is 1 wk
run "$E2E_TMP/bin/zpool" status -x
out_has "^ state: DEGRADED$"
tarn_ok pool destroy wk
e2e_done
