#!/bin/bash
# tarn-stress's command line: --help, usage errors (exit 2 with a message),
# the seed on the first line, and replay: the same seed with one thread
# and -n makes the same operations (the same digest), another seed not.
. "$(dirname "$0")/lib.sh"
describe "tarn-stress usage errors, help, seed and replay digest"

STRESS=${TARN_STRESS:-$(dirname "$TARN")/../tarn-stress/tarn-stress}
[ -x "$STRESS" ] || skip "no tarn-stress binary at $STRESS (build first)"

# usage_err REGEX ARGS...: exit 2, nothing on stdout, REGEX on stderr's first line.
usage_err() {
	local re=$1
	shift
	run "$STRESS" -d "$E2E_TMP/bad" "$@"
	if [ "$RC" -ne 2 ]; then
		fail "expected exit 2, got $RC: tarn-stress $*"
		show_output
		return
	fi
	if [ -s "$OUT" ] || ! head -n 1 "$ERR" | grep -Eq -- "$re"; then
		fail "expected /$re/ on stderr only: tarn-stress $*"
		show_output
		return
	fi
	pass
}

ok "$STRESS" --help
out_has "^usage: tarn-stress "
out_has "-k KILLS"

usage_err "bad layout group 'raidz2'" -l raidz2
usage_err "unknown vdev type 'raidz9'" -l raidz9:3
usage_err "bad layout 'raidz2:2'" -l raidz2:2
usage_err "too small" -S 10M
usage_err "bad size" -S 12Q
usage_err "thread count must be 1..256" -t 0
usage_err "bad number of seconds" -T abc
usage_err "unexpected argument 'extra'" extra
usage_err "bad fault list 'x'" -f x
usage_err "no directory .* to check" --check
usage_err "do not go with kill mode" -k 2 -f all
run "$STRESS" --no-such-option
if [ "$RC" -eq 2 ]; then pass; else fail "unknown option: exit $RC, not 2"; fi
[ -e "$E2E_TMP/bad" ] && fail "a usage error left $E2E_TMP/bad behind" || pass

# replay: same seed, one thread, a fixed number of operations
digest() {
	sed -n 's/.*digest \([0-9a-f]*\)$/\1/p' "$OUT"
}
mkdir -p "$E2E_TMP/r"
ok "$STRESS" -d "$E2E_TMP/r" -s 4242 -t 1 -n 1500 -l mirror:2 -S 64M
out_has "^tarn-stress: seed 4242, layout mirror:2 "
out_has "^tarn-stress: ok \(seed 4242\): 1500 ops "
d1=$(digest)
ok "$STRESS" -d "$E2E_TMP/r" -s 4242 -t 1 -n 1500 -l mirror:2 -S 64M
d2=$(digest)
ok "$STRESS" -d "$E2E_TMP/r" -s 4243 -t 1 -n 1500 -l mirror:2 -S 64M
d3=$(digest)
if [ -n "$d1" ] && [ "$d1" = "$d2" ]; then pass; else
	fail "same seed, different operations: digest '$d1' then '$d2'"
fi
if [ "$d1" != "$d3" ]; then pass; else fail "seeds 4242 and 4243 gave the same digest $d1"; fi

# --keep, then --check of what it left
k="$E2E_TMP/keep"
ok "$STRESS" --keep -d "$k" -s 99 -t 1 -n 800 -l mirror:2 -S 64M
out_has "^tarn-stress: kept pool 'stress' \(exported\) in $k: $k/dev0 $k/dev1$"
[ -f "$k/dev0" ] && [ -f "$k/dev1" ] && [ -s "$k/stress.journal" ] && pass ||
	fail "--keep left no devices or journal in $k: $(ls "$k" | tr '\n' ' ')"
ok "$STRESS" --check -d "$k" -s 99 -t 1 -n 800
out_has "^tarn-stress: check of pool 'stress' in $k: [1-9][0-9]* objects, 0 unreadable, 0 mismatched$"
out_has "^tarn-stress: check ok: "
run "$STRESS" --check -d "$k" -s 98 -t 1 -n 800
if [ "$RC" -eq 1 ] && grep -q "filled with seed 99, not 98" "$ERR"; then pass; else
	fail "--check with the wrong seed: exit $RC"
	show_output
fi
run "$STRESS" --check -d "$E2E_TMP/nonexistent"
[ "$RC" -ne 0 ] && [ ! -e "$E2E_TMP/nonexistent" ] && pass ||
	fail "--check of a missing directory: exit $RC"

e2e_done
