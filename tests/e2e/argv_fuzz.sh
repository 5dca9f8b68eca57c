#!/bin/bash
# Random argument vectors never crash tarn: every run ends with status
# 0, 1 or 2, no sanitizer report, no panic.  Device words point only at
# files in the test's temp dir (never at /dev), and every import names
# a scan directory, so the fuzzing cannot reach real devices.
. "$(dirname "$0")/lib.sh"
describe "random argv: exit 0/1/2, never a crash"
[ -x "$TARN" ] || skip "no tarn binary at $TARN"

SEED=${E2E_SEED:-$RANDOM}
N=${E2E_FUZZ_RUNS:-300}
echo "# seed $SEED, $N runs (E2E_SEED=$SEED to repeat)"
RANDOM=$SEED
mkdevs 4
cd "$E2E_TMP" || exit 1
S=$(scandir scan)
LONG=$(printf 'a%.0s' $(seq 5000))
WORDS=(create destroy import export list status help -f -n -H -p -j -x -v -a -F -N
	-o -d -m -- - -? "" "-o" "ashift=12" "ashift=99" "version=1" "readonly=on"
	"cachefile=none" "name,size,health" ",,," "size,bogus" mirror raidz raidz1 raidz2
	raidz3 raidz0 raidz9 spare log cache draid tank tank2 1bad "ta nk" "%s%n%x"
	"$LONG" "${DEV[0]}" "${DEV[1]}" "${DEV[2]}" "${DEV[3]}" "$DEVDIR/none"
	"$DEVDIR" "$S" "$(printf '\001\377\n')" "./rel" "../up" "é")
VERBS=(create destroy import export list status help bogus "")

for ((i = 0; i < N; i++)); do
	argv=()
	verb=${VERBS[RANDOM % ${#VERBS[@]}]}
	n=$((RANDOM % 6))
	for ((j = 0; j < n; j++)); do
		argv+=("${WORDS[RANDOM % ${#WORDS[@]}]}")
	done
	# imports always name a scan directory: never scan /dev
	[ "$verb" = import ] && argv=(-d "$S" "${argv[@]}")
	case $((RANDOM % 3)) in
	0) run "$TARN" pool "$verb" "${argv[@]}" ;;
	1) run "$TARN" "$verb" "${argv[@]}" ;;
	2) run "$TARN" "${argv[@]}" ;;
	esac
	if [ "$RC" -gt 2 ] || grep -Eq "panic|AddressSanitizer|runtime error|LeakSanitizer" "$ERR"; then
		fail "run $i (rc $RC): tarn pool $verb ${argv[*]}"
		show_output
	else
		pass
	fi
done
e2e_done
