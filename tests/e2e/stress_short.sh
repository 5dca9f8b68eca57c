#!/bin/bash
# tarn-stress for a short while: random object operations checked against
# its model on raidz2:6 and mirror:2 (verified every few seconds and after
# a reopen), and a kill run that SIGKILLs the workload 5 times and checks
# each re-import against the journal.  Every run must exit 0 and remove
# its device files.
. "$(dirname "$0")/lib.sh"
describe "tarn-stress 20 s on raidz2:6 and mirror:2, and a run with 5 kills"

STRESS=${TARN_STRESS:-$(dirname "$TARN")/../tarn-stress/tarn-stress}
[ -x "$STRESS" ] || skip "no tarn-stress binary at $STRESS (build first)"

# stress_ok LABEL ARGS...: tarn-stress ARGS in its own directory must pass.
stress_ok() {
	local label=$1 dir="$E2E_TMP/$1"
	shift
	mkdir -p "$dir"
	E2E_CMD_TIMEOUT=60 ok "$STRESS" -d "$dir" "$@" || return
	out_has "^tarn-stress: seed [0-9]+, layout "
	out_has "^tarn-stress: ok \(seed [0-9]+\): "
	if [ -z "$(ls -A "$dir")" ]; then pass; else
		fail "$label: files left in $dir: $(ls "$dir" | tr '\n' ' ')"
	fi
	echo "  $label: $(tail -n 1 "$OUT")"
}

stress_ok raidz2 -l raidz2:6 -t 4 -T 20
stress_ok mirror -l mirror:2 -t 3 -T 20
stress_ok kill -l raidz1:3 -t 2 -k 5 -T 15
out_has " 5 rounds, [0-9]+ killed; "

e2e_done
