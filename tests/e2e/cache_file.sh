#!/bin/bash
# The cache file is a hint: a damaged line is skipped with a warning, a
# pool whose devices vanished shows as UNAVAIL and can be forgotten with
# export -f; the cache directory is created when missing; the file is
# replaced atomically (no temp files left behind).
. "$(dirname "$0")/lib.sh"
describe "cache file damage, stale pools and atomic updates"
require_engine

export TARN_CACHEFILE="$E2E_TMP/cache/deeper/still/tarn.cache"
mkdevs 2
tarn_ok pool create cached mirror "${DEV[@]}"
[ -f "$TARN_CACHEFILE" ] && pass || fail "cache file not created in a new directory"
grep -q "^pool [0-9]* cached$" "$TARN_CACHEFILE" && pass || fail "cache file lacks the pool"
ls "$(dirname "$TARN_CACHEFILE")" | grep -q tmp && fail "temp file left behind" || pass

# damage: garbage lines, a truncated block, binary junk
cp "$TARN_CACHEFILE" "$E2E_TMP/cache.good"
{
	echo "complete garbage"
	echo "pool notanumber broken"
	echo "path relative/path"
	printf 'pool 99 \001\002\n'
	head -c 200 /dev/urandom | tr -d '\n'; echo
	cat "$E2E_TMP/cache.good"
} >"$TARN_CACHEFILE"
tarn_ok pool list -H -o name,health
out_is "cached	ONLINE"
grep -q "warning: cache file" "$ERR" && pass || fail "no warning about the damaged cache file"
tarn_ok pool status -x
out_is "all pools are healthy"

# a cache file that is all junk, or empty, or a directory
head -c 4096 /dev/urandom >"$TARN_CACHEFILE"
tarn_ok pool list
out_is "no pools available"
: >"$TARN_CACHEFILE"
tarn_ok pool list
out_is "no pools available"
cp "$E2E_TMP/cache.good" "$TARN_CACHEFILE"

# devices gone: the pool shows as UNAVAIL, export -f forgets it
# (while the daemon holds the pool its devices stay open: they vanish
# while it is down, as across a reboot)
stop_daemon
mkdir -p "$E2E_TMP/away"
mv "${DEV[@]}" "$E2E_TMP/away/"
run "$TARN" pool status cached
[ "$RC" -lt 128 ] && pass || fail "status crashed on a pool without devices"
grep -q "UNAVAIL\|FAULTED" "$OUT" && pass || { fail "status does not say UNAVAIL"; show_output; }
run "$TARN" pool status -x
grep -q "all pools are healthy" "$OUT" && fail "status -x calls a pool without devices healthy" || pass
tarn_ok pool list -H -o name,health cached
out_has "^cached	(UNAVAIL|FAULTED)$"
tarn_err 1 "^cannot export 'cached': .*-f" pool export cached
tarn_ok pool export -f cached
tarn_ok pool list
out_is "no pools available"
# and the devices come back through import
mv "$E2E_TMP/away/"* "$DEVDIR/"
tarn_ok pool import -d "$DEVDIR" -f cached
tarn_ok pool status -x cached
out_is "pool 'cached' is healthy"
tarn_ok pool destroy cached
e2e_done
