#!/bin/bash
# The health verbs' syntax and output formats: iostat's table (headers,
# -v rows, -H, INTERVAL COUNT), scrub's messages (-s/-p without a scrub,
# bad combinations), usage errors of attach/detach/replace/online/
# offline/clear/add, and `scrub` on a pool that does not exist.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/health.bash"
describe "syntax and output of iostat, scrub and the device verbs"
require_engine

tarn_err 1 "^no pools available" pool iostat
mkdevs 3
tarn_ok pool create io raidz1 "${DEV[@]}"

# zpool iostat's layout, to the space
tarn_ok pool iostat io
[ "$(sed -n 1p "$OUT")" = "              capacity     operations     bandwidth " ] && pass ||
	{ fail "iostat header line 1"; show_output; }
[ "$(sed -n 2p "$OUT")" = "pool        alloc   free   read  write   read  write" ] && pass ||
	{ fail "iostat header line 2"; show_output; }
[ "$(sed -n 3p "$OUT")" = "----------  -----  -----  -----  -----  -----  -----" ] && pass ||
	{ fail "iostat header line 3"; show_output; }
out_has "^io          [ 0-9.KMG]{5}  [ 0-9.KMG]{5}  [ 0-9.KMG]{5}  [ 0-9.KMG]{5}  [ 0-9.KMG]{5}  [ 0-9.KMG]{5}$"
[ "$(wc -l <"$OUT")" -eq 4 ] && pass || { fail "iostat: 4 lines expected"; show_output; }

tarn_ok pool iostat -v io
W=$((${#DEV[0]} + 4))
out_has "^pool {$((W - 4))}  alloc   free"
out_has "^  raidz1-0 +[0-9.KMG]+ +[0-9.KMG]+ "
out_has "^    ${DEV[0]} +-      - +[0-9.KMG]+ "
[ "$(grep -c '^-----' "$OUT")" -eq 2 ] && pass || { fail "iostat -v: two rules"; show_output; }

# the pool's row is the sum of its top-level vdevs' rows, frees that are
# not yet reusable (deferred) counted in both: a destroyed dataset leaves some
tarn_ok fs create io/gone
tarn_ok fs destroy io/gone
tarn_ok pool iostat -Hpv io
POOL_ALLOC=$(awk -F'\t' '$1 == "io" { print $2 }' "$OUT")
TOP_ALLOC=$(awk -F'\t' '$1 == "raidz1-0" { print $2 }' "$OUT")
[ -n "$POOL_ALLOC" ] && [ "$POOL_ALLOC" = "$TOP_ALLOC" ] && pass ||
	{ fail "iostat -v: pool alloc $POOL_ALLOC, raidz1-0 alloc $TOP_ALLOC"; show_output; }

tarn_ok pool iostat -H io
out_has "^io	[0-9.KMG]+	[0-9.KMG]+	[0-9.KMG]+	[0-9.KMG]+	[0-9.KMG]+	[0-9.KMG]+$"
tarn_ok pool iostat -Hp io
ALLOC=$(cut -f2 "$OUT")
tarn_ok pool list -Hp -o allocated io
out_is "$ALLOC"

# INTERVAL COUNT: COUNT reports, INTERVAL apart; -y leaves out the first
start=$(date +%s.%N)
tarn_ok pool iostat io 0.5 3
end=$(date +%s.%N)
[ "$(grep -c '^io ' "$OUT")" -eq 3 ] && pass || { fail "iostat 0.5 3: 3 rows"; show_output; }
[ "$(grep -c '^pool ' "$OUT")" -eq 1 ] && pass || { fail "iostat 0.5 3: one header"; show_output; }
awk -v s="$start" -v e="$end" 'BEGIN { exit !(e - s >= 0.9) }' && pass ||
	fail "iostat 0.5 3 took less than a second"
tarn_ok pool iostat -y io 0.2 2
[ "$(grep -c '^io ' "$OUT")" -eq 2 ] && pass || { fail "iostat -y 0.2 2: 2 rows"; show_output; }
tarn_ok pool iostat -v io 0.2 2
[ "$(grep -c '^pool ' "$OUT")" -eq 2 ] && pass || { fail "iostat -v: a header per report"; show_output; }
tarn_err 2 "invalid interval" pool iostat io 0
tarn_err 1 "^cannot open 'nosuch': " pool iostat nosuch
tarn_err 2 "^invalid option 'z'" pool iostat -z

# scrub's messages
tarn_err 1 "^cannot cancel scrubbing 'io': there is no active scrub$" pool scrub -s io
tarn_err 1 "^cannot pause scrubbing 'io': there is no active scrub$" pool scrub -p io
tarn_err 2 "mutually exclusive" pool scrub -s -p io
tarn_err 2 "-w cannot be used with -p or -s" pool scrub -w -s io
tarn_err 2 "^missing pool name" pool scrub
tarn_err 1 "^cannot scrub 'nosuch': " pool scrub nosuch
tarn_ok pool scrub -w io
tarn_ok pool status io
out_has "^  scan: scrub repaired 0B in [0-9]{2}:[0-9]{2}:[0-9]{2} with 0 errors on [A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9]{2} [0-9:]{8} [0-9]{4}$"
tarn_ok pool status -j io
out_has '"scan_stats": \{"function": "SCRUB", "state": "FINISHED"'
out_has '"error_count": "0"'

# the device verbs' usage errors
tarn_err 2 "^missing <new_device> specification" pool attach io "${DEV[0]}"
tarn_err 2 "^missing <device> specification" pool detach io
tarn_err 2 "too many arguments" pool replace io a b c
tarn_err 2 "^missing device name" pool online io
tarn_err 2 "^missing device name" pool offline io
tarn_err 2 "^invalid option 'x'" pool offline -x io "${DEV[0]}"
tarn_err 2 "too many arguments" pool clear io a b
tarn_err 1 "^cannot add to 'io': cannot open '$DEVDIR/x'" pool add io "$DEVDIR/x"
tarn_err 1 "^cannot online" pool online io "$DEVDIR/not-in-pool"
tarn_err 1 "^cannot attach 'nosuch': " pool attach nosuch a "$DEVDIR/new"
tarn_ok pool help attach
out_has "attach \[-fw\] <pool> <device> <new-device>"
tarn_ok pool destroy io
e2e_done
