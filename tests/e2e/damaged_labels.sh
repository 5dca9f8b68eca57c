#!/bin/bash
# Damaged labels: with every label copy of every device overwritten the
# pool is simply not found (no crash, devices untouched by the attempt);
# with one copy damaged on one device the pool still imports ONLINE.
# Garbage files in an import directory are ignored.
. "$(dirname "$0")/lib.sh"
describe "damaged label sets and garbage files given to import -d"
require_engine

LABEL=$((256 * 1024))
# smash FILE OFFSET LEN: overwrite with random bytes
smash() {
	head -c "$3" /dev/urandom | dd of="$1" bs=4096 seek=$(($2 / 4096)) conv=notrunc status=none
}

# --- every label on every device
mkdevs 3
tarn_ok pool create dmg raidz1 "${DEV[@]}"
tarn_ok pool export dmg
for f in "${DEV[@]}"; do
	size=$(stat -c %s "$f")
	smash "$f" 0 $((2 * LABEL))
	smash "$f" $((size - 2 * LABEL)) $((2 * LABEL))
done
sums_save "${DEV[@]}"
tarn_err 1 "^no pools available to import" pool import -d "$DEVDIR"
tarn_err 1 "^cannot import 'dmg': " pool import -d "$DEVDIR" dmg
tarn_ok pool list
out_is "no pools available"
sums_check
# such devices are free for a new pool
tarn_ok pool create fresh raidz1 "${DEV[@]}"
tarn_ok pool destroy fresh
rm -f "${DEV[@]}"

# --- one label copy on one device
mkdevs 2 "$E2E_DEVSIZE" m
tarn_ok pool create onebad mirror "${DEV[@]}"
tarn_ok pool export onebad
smash "${DEV[0]}" 0 $LABEL
tarn_ok pool import -d "$DEVDIR"
out_has "^   pool: onebad$"
out_has "^  state: ONLINE$"
tarn_ok pool import -d "$DEVDIR" onebad
tarn_ok pool status onebad
out_has "^ state: ONLINE$"
tarn_ok pool destroy onebad
rm -f "${DEV[@]}"

# --- garbage in the import directory
G=$(scandir garbage)
: >"$G/empty"
head -c 1048576 /dev/urandom >"$G/random1m"
truncate -s 80M "$G/sparse-random-head"
smash "$G/sparse-random-head" 0 $((4 * LABEL))
truncate -s 80M "$G/zeros"
mkdir "$G/subdir"
ln -s "$G/nonexistent" "$G/dangling"
ln -s "$G/loop1" "$G/loop2"; ln -s "$G/loop2" "$G/loop1"
mkfifo "$G/fifo"
printf 'TarnUBLK%.0s' $(seq 2000) >"$G/magic-soup"
: >"$G/name with spaces"
sums_save "$G/random1m" "$G/sparse-random-head" "$G/magic-soup"
tarn_err 1 "^no pools available to import" pool import -d "$G"
tarn_err 1 "^cannot import 'tank': " pool import -d "$G" tank
tarn_err 1 "^cannot import '12345': " pool import -d "$G" 12345
run "$TARN" pool import -a -d "$G"
[ "$RC" -lt 128 ] && pass || fail "import -a crashed (rc $RC)"
sums_check
tarn_ok pool list
out_is "no pools available"
e2e_done
