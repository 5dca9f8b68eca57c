#!/bin/bash
# create -n prints the layout and writes nothing; -o ashift / version and
# -m are accepted; import -o readonly=on opens without writing anything.
. "$(dirname "$0")/lib.sh"
describe "create -n/-o/-m and import -o readonly=on"
require_engine

mkdevs 4
sums_save "${DEV[@]}"
# -n still checks the devices: a missing one is an error
tarn_err 1 "^cannot create 'dry': .*$DEVDIR/extra" \
	pool create -n dry mirror "${DEV[0]}" "${DEV[1]}" raidz2 "${DEV[2]}" "${DEV[3]}" "$DEVDIR/extra"
truncate -s "$E2E_DEVSIZE" "$DEVDIR/extra"
sums_save "${DEV[@]}" "$DEVDIR/extra"
tarn_ok pool create -n dry mirror "${DEV[0]}" "${DEV[1]}" raidz2 "${DEV[2]}" "${DEV[3]}" "$DEVDIR/extra"
out_has "^would create 'dry' with the following layout:$"
out_has "^	dry$"
out_has "^	  mirror$"
out_has "^	  raidz2$"
out_has "^	    ${DEV[3]}$"
sums_check
tarn_ok pool list
out_is "no pools available"

tarn_ok pool create -o ashift=12 -o version=1 -m /mnt/opts opts mirror "${DEV[0]}" "${DEV[1]}"
tarn_ok pool status -x opts
out_is "pool 'opts' is healthy"
tarn_ok pool export opts
sums_save "${DEV[0]}" "${DEV[1]}"
# a read-only import opens and checks the pool without writing a byte;
# with no daemon to hold it, it is not remembered, so the pool stays
# importable
tarn_ok pool import -o readonly=on -d "$DEVDIR" opts
sums_check
tarn_ok pool import -d "$DEVDIR"
out_has "^   pool: opts$"
sums_check
tarn_ok pool import -d "$DEVDIR" opts
tarn_ok pool list -H -o name,health opts
out_is "opts	ONLINE"
tarn_ok pool destroy opts

# -O sets properties of the root file system; a bad one refuses the create
# before any device is touched
sums_save "${DEV[0]}" "${DEV[1]}"
tarn_err 2 "must be one of" pool create -O compression=bogus -m none fsopts mirror "${DEV[0]}" "${DEV[1]}"
sums_check
tarn_err 2 "invalid property 'nosuchprop'" pool create -O nosuchprop=1 fsopts mirror "${DEV[0]}" "${DEV[1]}"
sums_check
tarn_ok pool create -f -O compression=lz4 -O recordsize=64K -m none fsopts mirror "${DEV[0]}" "${DEV[1]}"
tarn_ok fs get -H -o value,source compression fsopts
out_is "lz4	local"
tarn_ok fs get -H -o value recordsize fsopts
out_is "64K"
tarn_ok pool destroy fsopts
e2e_done
