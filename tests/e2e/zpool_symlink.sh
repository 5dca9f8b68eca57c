#!/bin/bash
# Invoked through a symlink named `zpool`, tarn behaves as `tarn pool`;
# `tarn help`, `tarn --version` and a bare `tarn pool` behave.
. "$(dirname "$0")/lib.sh"
describe "the zpool symlink, help, version and usage"
[ -x "$TARN" ] || skip "no tarn binary at $TARN"

ZPOOL="$E2E_TMP/bin/zpool"
mkdir -p "$E2E_TMP/bin"
ln -s "$TARN" "$ZPOOL"

tarn_ok --version
out_has "^tarn [0-9]+\.[0-9]+"
tarn_ok help
out_has "pool"
tarn_err 2 "^usage: tarn" 
tarn_err 2 "^usage: tarn pool" pool
tarn_err 2 "^unrecognized command 'frobnicate'" frobnicate
tarn_ok pool help
out_has "create"
out_has "import"

run "$ZPOOL"
[ "$RC" -eq 2 ] && pass || fail "bare zpool: expected exit 2, got $RC"
grep -q "^usage: zpool" "$ERR" && pass || { fail "bare zpool: no zpool usage"; show_output; }

require_engine
mkdevs 2
ok "$ZPOOL" create viasym mirror "${DEV[@]}"
ok "$ZPOOL" list -H -o name,health
out_is "viasym	ONLINE"
ok "$ZPOOL" status viasym
out_has "^	  mirror-0 +ONLINE"
ok "$ZPOOL" status -x
out_is "all pools are healthy"
# the same pool through tarn pool
tarn_ok pool list -H -o name
out_is "viasym"
ok "$ZPOOL" export viasym
ok "$ZPOOL" import -d "$DEVDIR" viasym
ok "$ZPOOL" destroy viasym
run "$ZPOOL" frobnicate
[ "$RC" -eq 2 ] && pass || fail "zpool frobnicate: expected exit 2, got $RC"
e2e_done
