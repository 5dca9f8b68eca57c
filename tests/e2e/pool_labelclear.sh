#!/bin/bash
# zpool labelclear: a device of an exported pool is cleared with -f only,
# and then neither `import` finds its pool nor `create` calls it in use;
# a device of an imported pool (member or hot spare) is never cleared;
# a potentially active pool's device (labels of a pool not imported here,
# not exported) needs -f; a device without labels is left as it is.
. "$(dirname "$0")/lib.sh"
describe "labelclear: exported, imported, active and spare devices"
require_engine

mkdevs 5
# a pool imported here: its members and its spare stay, -f or not
tarn_ok pool create tank mirror "${DEV[0]}" "${DEV[1]}"
tarn_ok pool add tank spare "${DEV[4]}"
for f in "" -f; do
	tarn_err 1 "^cannot clear label for '${DEV[0]}': the device is part of imported pool 'tank'$" \
		pool labelclear $f "${DEV[0]}"
	tarn_err 1 "^cannot clear label for '${DEV[4]}': the device is part of imported pool 'tank'$" \
		pool labelclear $f "${DEV[4]}"
done
tarn_ok pool status -x tank
out_is "pool 'tank' is healthy"

# an exported pool: -f needed; after it, the other half alone is found
tarn_ok pool export tank
tarn_err 1 "^cannot clear label for '${DEV[1]}': the device is a member of exported pool 'tank'; use -f" \
	pool labelclear "${DEV[1]}"
tarn_ok pool labelclear -f "${DEV[1]}"
# the spare's label names the pool, now exported: needs -f too
tarn_err 1 "^cannot clear label for '${DEV[4]}': the device is a hot spare of pool 'tank'; use -f" \
	pool labelclear "${DEV[4]}"
tarn_ok pool import -d "$DEVDIR" tank
tarn_ok pool status tank
out_has "DEGRADED|UNAVAIL"
out_has "${DEV[0]} +ONLINE"
tarn_ok pool destroy tank

# a cleared device is new: create takes it without -f, and no pool shows
tarn_err 1 "^no pools available to import$" pool import -d "$DEVDIR"
tarn_ok pool create fresh "${DEV[1]}"
tarn_ok pool destroy fresh

# labels of a pool that is not imported here and was not exported
# (another host's, or a crash's: the cache file forgot it) need -f
tarn_ok pool create gone "${DEV[2]}"
cp --sparse=always "${DEV[2]}" "$DEVDIR/copy"
tarn_ok pool destroy gone
tarn_ok pool import -d "$DEVDIR"
out_has "pool: gone"
tarn_err 1 "^cannot clear label for '$DEVDIR/copy': the device is a member of potentially active pool 'gone'; use -f" \
	pool labelclear "$DEVDIR/copy"
tarn_ok pool labelclear -f "$DEVDIR/copy"
tarn_err 1 "^no pools available to import$" pool import -d "$DEVDIR"

# no labels: nothing to do; a missing device: an error; usage errors
truncate -s 64M "$DEVDIR/blank"
tarn_ok pool labelclear "$DEVDIR/blank"
tarn_err 1 "^cannot clear label for '$DEVDIR/nonexistent'" pool labelclear "$DEVDIR/nonexistent"
tarn_err 2 "^missing vdev name$" pool labelclear
tarn_err 2 "^too many arguments$" pool labelclear "${DEV[0]}" "${DEV[1]}"
tarn_err 2 "^invalid option 'x'" pool labelclear -x "${DEV[0]}"
e2e_done
