#!/bin/bash
# Labels identify devices, paths don't: an exported pool whose files were
# renamed and moved to another directory imports by name and by GUID, also
# under a new name, and status shows the new paths.
. "$(dirname "$0")/lib.sh"
describe "import after renaming and moving the device files (by name and GUID)"
require_engine

mkdevs 3
tarn_ok pool create moveme raidz1 "${DEV[@]}"
tarn_ok pool export moveme
NEW=$(scandir elsewhere)
mv "${DEV[0]}" "$NEW/first"
mv "${DEV[1]}" "$NEW/second"
mv "${DEV[2]}" "$NEW/third"

tarn_ok pool import -d "$NEW"
out_has "^   pool: moveme$"
out_has "^  state: ONLINE$"
out_has "^	    $NEW/first +ONLINE$"
GUID=$(awk '$1 == "id:" { print $2 }' "$OUT")
[ -n "$GUID" ] && pass || fail "no id: line in the import listing"

tarn_ok pool import -d "$NEW" "$GUID" renamed
tarn_ok pool status renamed
out_has "^  pool: renamed$"
out_has "^	    $NEW/first +ONLINE"
out_has "^	    $NEW/third +ONLINE"
tarn_ok pool list -H -o name renamed
out_is "renamed"

# and back, by name this time, from a second move
tarn_ok pool export renamed
NEW2=$(scandir again)
mv "$NEW"/* "$NEW2/"
tarn_ok pool import -d "$NEW2" renamed
tarn_ok pool status -x renamed
out_is "pool 'renamed' is healthy"

# two exported pools of the same name: the name is ambiguous, the id is not
tarn_ok pool export renamed
mkdevs 1 "$E2E_DEVSIZE" other
OTHER=$(scandir other)
mv "${DEV[0]}" "$OTHER/x"
tarn_ok pool create renamed "$OTHER/x"
tarn_ok pool export renamed
mv "$OTHER/x" "$NEW2/x"
tarn_err 1 "^cannot import 'renamed': " pool import -d "$NEW2" renamed
tarn_ok pool import -d "$NEW2" "$GUID"
tarn_ok pool status renamed
out_has "^	    $NEW2/second +ONLINE"
tarn_ok pool destroy renamed
e2e_done
