#!/bin/bash
# zpool online -e (grow a device to its new size) is not supported yet:
# it is refused with one line saying so, exit 1, and nothing changes (the
# device stays as it was, the history does not record it).
. "$(dirname "$0")/lib.sh"
describe "online -e is refused until devices can grow"
require_engine

mkdevs 2
tarn_ok pool create -m none ex mirror "${DEV[0]}" "${DEV[1]}"
tarn_ok pool list -Hp -o size ex
SIZE=$(cat "$OUT")
truncate -s 256M "${DEV[1]}"     # the device grew
tarn_err 1 "^cannot expand ${DEV[1]}: device expansion is not supported yet" \
	pool online -e ex "${DEV[1]}"
tarn_err 1 "^cannot expand ${DEV[0]}: device expansion is not supported yet" \
	pool online ex -e "${DEV[0]}"
tarn_ok pool list -Hp -o size,health ex
out_is "$SIZE	ONLINE"
tarn_ok pool history ex
out_lacks " zpool online"
# without -e, online of an online device still works
tarn_ok pool online ex "${DEV[1]}"
tarn_err 2 "^missing device name" pool online -e ex
tarn_ok pool destroy ex
e2e_done
