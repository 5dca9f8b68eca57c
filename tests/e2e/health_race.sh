#!/bin/bash
# Reading the device tree while resilvers end: in the daemon the pool's
# own thread detaches the replaced device when a resilver finishes (its
# replacing-N group collapses and both are freed), while `pool status`,
# `pool list -v` and `pool iostat -v` of other clients walk the tree.
# Readers hold the tree (spa_vdev_hold) while they walk it; without that
# they read freed devices (a sanitizer build's daemon dies with a
# use-after-free; lib.sh fails the test on its log).  Here one client
# replaces a mirror side back and forth with `replace -w` while another
# runs status/list/iostat in a loop: every command succeeds, every tree
# printed names only the pool's devices, the daemon lives on.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/health.bash"
describe "status, list -v, iostat -v while resilvers end and detach devices"
require_engine
need_daemon "the race is between daemon threads"

ROUNDS=${RACE_ROUNDS:-100}
make_pool race mirror 2 64M || e2e_done
truncate -s 64M "$DEVDIR/race/spare" || fail "truncate spare"
OTHER="$DEVDIR/race/spare"
CUR=${DEV[1]}
DONE="$E2E_TMP/replaced"

# the writer: replace the second side with the other file, wait, again
(
	cur=$CUR other=$OTHER
	for ((r = 0; r < ROUNDS; r++)); do
		"$TARN" pool replace -w race "$cur" "$other" >/dev/null 2>"$E2E_TMP/replace.err" ||
			{ echo "round $r: replace $cur $other failed" >>"$E2E_TMP/replace.fail"; break; }
		t=$cur cur=$other other=$t
	done
	touch "$DONE"
) &
WRITER=$!

# long-running readers: iostat -v every millisecond (walk after walk)
IOSTAT=()
for i in 0 1; do
	"$TARN" pool iostat -v race 0.001 1000000 >"$E2E_TMP/iostat$i.out" \
		2>"$E2E_TMP/iostat$i.err" &
	IOSTAT+=($!)
done

# the readers, until the writer is done
reads=0 bad=0
allowed="^($DEVDIR/race/(race[01]|dev[0-9]+|spare)|race|mirror-0|replacing-[0-9]+)$"
while [ ! -e "$DONE" ]; do
	for cmd in "pool status race" "pool list -v -H -o name race" "pool iostat -v race"; do
		# shellcheck disable=SC2086
		tarn $cmd
		reads=$((reads + 1))
		if [ "$RC" -ne 0 ]; then
			bad=$((bad + 1))
			fail "tarn $cmd: exit $RC during a replace"
			show_output
			break 2
		fi
		# the names of the tree (status: after "config:"; list -H: one a row)
		names=$(case $cmd in
			*status*) sed -n '/^config:/,/^errors:/p' "$OUT" | awk 'NR > 3 && NF >= 2 && $1 != "errors:" { print $1 }' ;;
			*list*) sed 's/^[[:space:]]*//' "$OUT" ;;
			*iostat*) awk 'NR > 3 && $1 !~ /^-/ { print $1 }' "$OUT" ;;
		esac)
		if echo "$names" | grep -Evq "$allowed|^$"; then
			bad=$((bad + 1))
			fail "tarn $cmd printed a device that is not the pool's"
			show_output
			break 2
		fi
	done
done
wait "$WRITER"
for i in 0 1; do
	if kill -0 "${IOSTAT[$i]}" 2>/dev/null; then
		kill "${IOSTAT[$i]}" && wait "${IOSTAT[$i]}"
		pass
	else
		wait "${IOSTAT[$i]}"
		fail "iostat -v 0.001 ended during the replaces (exit $?)"
		sed 's/^/  stderr: /' "$E2E_TMP/iostat$i.err" >&2
	fi
	if awk '$1 !~ /^-/ && $1 != "capacity" && $1 != "pool" { print $1 }' \
	    "$E2E_TMP/iostat$i.out" | grep -Evq "$allowed|^$"; then
		fail "iostat -v 0.001 printed a device that is not the pool's"
	else
		pass
	fi
done
[ ! -e "$E2E_TMP/replace.fail" ] && pass ||
	{ fail "$(cat "$E2E_TMP/replace.fail")"; sed 's/^/  stderr: /' "$E2E_TMP/replace.err" >&2; }
echo "  $reads reads during $ROUNDS replaces, $bad bad"
[ "$reads" -gt 0 ] && pass || fail "no read ran during the replaces"
daemon_pid >/dev/null && pass || fail "the daemon died"

# after it all: the mirror of two, healthy, as the last replace left it
tarn_ok pool status race
out_has "^ state: ONLINE$"
out_lacks "replacing-"
tarn_ok pool destroy race
e2e_done
