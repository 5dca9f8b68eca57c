#!/bin/bash
# Bad input gives one clear line on stderr and exit status 1 (2 for usage
# errors), never a crash, and devices that were not accepted are left
# byte-for-byte unchanged.
. "$(dirname "$0")/lib.sh"
describe "bad devices, names, options and labels: clear errors, devices untouched"
require_engine

mkdevs 6
D=("${DEV[@]}")
# give the devices some content so that "unchanged" means something
for f in "${D[@]}"; do
	head -c 300000 /dev/urandom | dd of="$f" bs=64k seek=100 conv=notrunc status=none
done
sums_save "${D[@]}"

# --- the vdev specification
tarn_err 1 "^cannot create 't': raidz2 requires at least 3 devices" \
	pool create t raidz2 "${D[0]}" "${D[1]}"
tarn_err 1 "^cannot create 't': raidz3 requires at least 4 devices" \
	pool create t raidz3 "${D[0]}" "${D[1]}" "${D[2]}"
tarn_err 1 "^cannot create 't': mirror requires at least 2 devices" \
	pool create t mirror "${D[0]}"
tarn_err 1 "^cannot create 't': mirror requires at least 2 devices" \
	pool create t mirror raidz1 "${D[0]}" "${D[1]}"
tarn_err 1 "^cannot create 't': '${D[0]}' is specified multiple times" \
	pool create t mirror "${D[0]}" "${D[0]}"
tarn_err 1 "is specified multiple times" \
	pool create t "${D[0]}" mirror "${D[1]}" "$DEVDIR/../dev/d0"
tarn_err 1 "^cannot create 't': .*not supported yet" \
	pool create t "${D[0]}" spare "${D[1]}"
tarn_err 1 "^cannot create 't': log devices must be single devices or mirrors, not 'raidz'$" \
	pool create t "${D[0]}" log raidz "${D[1]}" "${D[2]}"
tarn_err 1 "^cannot create 't': invalid vdev type 'raidz7'" \
	pool create t raidz7 "${D[0]}" "${D[1]}"
tarn_err 1 "^cannot create 't': .*$DEVDIR/missing" \
	pool create t mirror "${D[0]}" "$DEVDIR/missing"
truncate -s 10M "$DEVDIR/small"
sums_save "${D[@]}" "$DEVDIR/small"
tarn_err 1 "^cannot create 't': .*$DEVDIR/small.*small" \
	pool create t mirror "${D[0]}" "$DEVDIR/small"
sums_check

# --- pool names
for name in 1tank mirror raidz2x spare1 log "ta nk" "ta/nk" "tank@snap" \
	"$(printf 'x%.0s' $(seq 300))" "tab	bed" "é"; do
	tarn_err 1 "^cannot create '" pool create "$name" "${D[0]}"
done
tarn_err 1 "^cannot create '': " pool create "" "${D[0]}"
sums_check

# --- options and arguments
tarn_err 2 "^invalid option 'z'" pool create -z t "${D[0]}"
tarn_err 2 "^missing argument for 'o' option" pool create -o
tarn_err 2 "ashift" pool create -o ashift=3 t "${D[0]}"
tarn_err 2 "ashift" pool create -o ashift=twelve t "${D[0]}"
tarn_err 2 "not a valid pool property" pool create -o colour=blue t "${D[0]}"
tarn_err 2 "missing '='" pool create -o ashift t "${D[0]}"
tarn_err 2 "mountpoint" pool create -m relative t "${D[0]}"
tarn_err 2 "^missing pool name" pool create
tarn_err 2 "^missing vdev specification" pool create t
tarn_err 2 "^missing pool argument" pool destroy
tarn_err 2 "^too many arguments" pool destroy a b
tarn_err 2 "^missing pool argument" pool export
tarn_err 2 "^missing argument for 'd' option" pool import -d
tarn_err 2 "readonly" pool import -o readonly=perhaps x
tarn_err 2 "^-n is only valid with -F" pool import -n x
tarn_err 2 "^too many arguments" pool import -d "$DEVDIR" a b c
tarn_err 2 "^bad property list: invalid property 'bogus'" pool list -o bogus
tarn_err 2 "^invalid option 'q'" pool status -q
tarn_err 2 "^unrecognized command 'frob'" pool frob
sums_check

# --- pools that do not exist
tarn_err 1 "^cannot open 'nope': no such pool" pool status nope
tarn_err 1 "^cannot open 'nope': no such pool" pool list nope
tarn_err 1 "^cannot destroy 'nope': no such pool" pool destroy nope
tarn_err 1 "^cannot export 'nope': no such pool" pool export nope
tarn_err 1 "^cannot search '$DEVDIR/nodir'" pool import -d "$DEVDIR/nodir"
sums_check

# --- a device that belongs to another pool
tarn_ok pool create old mirror "${D[0]}" "${D[1]}"
tarn_ok pool export old
sums_save "${D[0]}" "${D[1]}" "${D[2]}"
tarn_err 1 "^cannot create 'new': .*${D[0]}.*pool 'old'.*-f" \
	pool create new mirror "${D[2]}" "${D[0]}"
sums_check
tarn_ok pool create -f new mirror "${D[2]}" "${D[0]}"
tarn_ok pool status -x new
out_is "pool 'new' is healthy"
tarn_ok pool create active "${D[3]}"
sums_save "${D[3]}" "${D[4]}"
tarn_err 1 "^cannot create 'other': .*${D[3]}.*pool 'active'" \
	pool create other "${D[4]}" "${D[3]}"
sums_check
# -f is for exported pools: a device of a pool imported here stays taken
tarn_err 1 "^cannot create 'other': .*${D[3]}.*imported pool 'active'" \
	pool create -f other "${D[4]}" "${D[3]}"
sums_check
tarn_err 1 "^cannot create 'active': " pool create active "${D[4]}"
sums_check
tarn_ok pool destroy new
tarn_ok pool destroy active

# --- import under a bad new name, or a name already in use
mkdevs 2 "$E2E_DEVSIZE" imp
tarn_ok pool create imp mirror "${DEV[@]}"
tarn_ok pool create busy "${D[5]}"
tarn_ok pool export imp
tarn_err 1 "^cannot import 'imp': .*name must begin with a letter" \
	pool import -d "$DEVDIR" imp 9lives
tarn_err 1 "^cannot import 'imp': " pool import -d "$DEVDIR" imp busy
tarn_ok pool import -d "$DEVDIR" imp
tarn_ok pool destroy imp
tarn_ok pool destroy busy
e2e_done
