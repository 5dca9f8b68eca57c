#!/bin/bash
# tarn-stress -f: faults within redundancy while the workload runs (bit
# flips and EIO on reads of up to parity devices of a group, a device that
# disappears and comes back, scrubs and the resilvers that follow), on
# raidz2:6 and mirror:3.  Every read must still return the model's bytes,
# the final scrub must leave nothing unrepaired, and the summary must show
# faults and repairs.  Also: -f on a layout without redundancy is refused.
. "$(dirname "$0")/lib.sh"
describe "tarn-stress -f (fault injection within redundancy) on raidz2:6 and mirror:3"

STRESS=${TARN_STRESS:-$(dirname "$TARN")/../tarn-stress/tarn-stress}
[ -x "$STRESS" ] || skip "no tarn-stress binary at $STRESS (build first)"

# faults_ok LABEL ARGS...: tarn-stress -f all ARGS must pass and report faults.
faults_ok() {
	local label=$1 dir="$E2E_TMP/$1"
	shift
	mkdir -p "$dir"
	E2E_CMD_TIMEOUT=55 ok "$STRESS" -d "$dir" -f all "$@" || return
	out_has "^tarn-stress: ok \(seed [0-9]+\): "
	out_has "^tarn-stress: faults: [1-9][0-9]* device episodes with bit flips/EIO, [1-9][0-9]* devices disappeared and came back; "
	out_has "repairs: [0-9]+ checksum errors, [0-9]+ read errors, [0-9.]+ [KMG]iB repaired by scans; [1-9][0-9]* scrubs, [0-9]+ resilvers; 0 unrepaired$"
	# something was actually repaired: device errors counted
	if grep -Eq "repairs: ([1-9][0-9]* checksum errors|[0-9]+ checksum errors, [1-9][0-9]* read errors)" "$OUT"; then
		pass
	else
		fail "$label: no checksum or read error was counted: $(tail -n 1 "$OUT")"
	fi
	if [ -z "$(ls -A "$dir")" ]; then pass; else
		fail "$label: files left in $dir: $(ls "$dir" | tr '\n' ' ')"
	fi
	echo "  $label: $(tail -n 1 "$OUT")"
}

faults_ok raidz2 -l raidz2:6 -t 3 -T 15
faults_ok mirror -l mirror:3 -t 3 -T 15

# no redundancy, nothing to inject within: refused (exit 2, clear message)
run "$STRESS" -d "$E2E_TMP/plain" -l stripe:2 -f all -T 1
if [ "$RC" -eq 2 ] && grep -q "needs redundancy" "$ERR"; then pass; else
	fail "-f on stripe:2: exit $RC, expected 2 with 'needs redundancy'"
	show_output
fi
run "$STRESS" -d "$E2E_TMP/plain" -l mirror:2 -f bogus -T 1
[ "$RC" -eq 2 ] && pass || fail "-f bogus: exit $RC, expected 2"

e2e_done
