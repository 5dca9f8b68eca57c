#!/bin/bash
# zpool history records zfs's commands too (create, set, rename, inherit,
# destroy), with their times; -l adds who ran them and where ("[user 0
# (root) on HOST]"), -i the internal events with their txg ("[txg:7]
# create tank/a (5) ", scans set up and done, features enabled by an
# upgrade), as zpool history prints them.  A command that failed is not
# recorded.
. "$(dirname "$0")/lib.sh"
describe "history: zfs commands, -l and -i"
require_engine

T='[0-9]{4}-[0-9]{2}-[0-9]{2}\.[0-9]{2}:[0-9]{2}:[0-9]{2}'
HOST=$(uname -n)
ME="user $(id -u) \\($(id -un)\\) on $HOST"
mkdevs 2
tarn_ok pool create -m none hz "${DEV[0]}"
tarn_ok fs create -o atime=off hz/a
tarn_ok fs set compression=lz4 com.example:x=1 hz/a
tarn_ok fs set mountpoint=/hz-nowhere hz/a
tarn_ok fs rename hz/a hz/b
tarn_ok fs inherit compression hz/b
tarn_err 1 "^cannot set property" fs set recordsize=3 hz/b
tarn_ok pool scrub -w hz
tarn_ok fs destroy hz/b

tarn_ok pool history hz
out_has "^$T zpool create -m none hz ${DEV[0]}$"
out_has "^$T zfs create -o atime=off hz/a$"
out_has "^$T zfs set compression=lz4 com.example:x=1 hz/a$"
out_has "^$T zfs set mountpoint=/hz-nowhere hz/a$"
out_has "^$T zfs rename hz/a hz/b$"
out_has "^$T zfs inherit compression hz/b$"
out_has "^$T zfs destroy hz/b$"
out_lacks "recordsize=3"        # failed: not recorded
out_lacks "\\[txg:"             # internal events only with -i
out_lacks "\\[user "
# in the order they ran
order=$(grep -oE "zfs (create|set compression|rename|inherit|destroy)" "$OUT" | tr '\n' ,)
[ "$order" = "zfs create,zfs set compression,zfs rename,zfs inherit,zfs destroy," ] && pass ||
	fail "history out of order: $order"

tarn_ok pool history -l hz
out_has "^$T zfs create -o atime=off hz/a \\[$ME\\]$"
out_has "^$T zpool scrub -w hz \\[$ME\\]$"
out_lacks "\\[txg:"

tarn_ok pool history -i hz
out_has "^$T \\[txg:[0-9]+\\] create pool version 2; software version tarn-[^;]+; uts $HOST "
out_has "^$T \\[txg:[0-9]+\\] create hz/a \\([0-9]+\\) $"
out_has "^$T \\[txg:[0-9]+\\] set hz/a \\([0-9]+\\) compression=3$"
out_has "^$T \\[txg:[0-9]+\\] set hz/a \\([0-9]+\\) com.example:x=1$"
out_has "^$T \\[txg:[0-9]+\\] set hz/a \\([0-9]+\\) mountpoint=/hz-nowhere$"
out_has "^$T \\[txg:[0-9]+\\] rename hz/a \\([0-9]+\\) -> hz/b$"
out_has "^$T \\[txg:[0-9]+\\] inherit hz/b \\([0-9]+\\) compression$"
out_has "^$T \\[txg:[0-9]+\\] scan setup func=1 mintxg=0 maxtxg=[0-9]+$"
out_has "^$T \\[txg:[0-9]+\\] scan done errors=0$"
out_has "^$T \\[txg:[0-9]+\\] destroy hz/b \\([0-9]+\\) $"
out_has "^$T zfs destroy hz/b$"
# the event is tagged with the txg the change went into, the create's before the set's
c=$(grep -oE "\\[txg:[0-9]+\\] create hz/a" "$OUT" | grep -oE "[0-9]+" | head -n 1)
s=$(grep -oE "\\[txg:[0-9]+\\] set hz/a \\([0-9]+\\) compression" "$OUT" | grep -oE "[0-9]+" | head -n 1)
[ -n "$c" ] && [ -n "$s" ] && [ "$c" -lt "$s" ] && pass || fail "txgs: create $c, set $s"

tarn_ok pool history -il hz
out_has "^$T \\[txg:[0-9]+\\] create hz/a \\([0-9]+\\)  \\[on $HOST\\]$"
out_has "^$T zfs rename hz/a hz/b \\[$ME\\]$"

# an upgrade: the version and each feature it enables, then the command
tarn_ok pool create -o version=1 -m none hv "${DEV[1]}"
tarn_ok pool upgrade hv
tarn_ok pool history -i hv
out_has "^$T \\[txg:[0-9]+\\] set version=2$"
out_has "^$T \\[txg:[0-9]+\\] set feature@history=enabled$"
out_has "^$T \\[txg:[0-9]+\\] set feature@intent_log=enabled$"
out_lacks "feature@space_deflate"
out_has "^$T zpool upgrade hv$"
tarn_ok fs create hv/c
tarn_ok pool history hv
out_has "^$T zfs create hv/c$"

tarn_err 2 "^invalid option 'x'" pool history -x hz
tarn_ok pool destroy hv
tarn_ok pool destroy hz
e2e_done
