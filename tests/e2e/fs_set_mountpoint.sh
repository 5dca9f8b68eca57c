#!/bin/bash
# fs_set_mountpoint.sh — `zfs set mountpoint=DIR` mounts an unmounted
# dataset with canmount=on at DIR, as zfs does, and with it the
# descendants that take their mountpoint from it; not those with a
# mountpoint of their own, nor canmount=noauto/off, nor when the set
# fails.  `zfs inherit mountpoint` mounts the same way.  A mount that
# fails (directory not empty) makes the set fail, the value kept.
. "$(dirname "$0")/lib.sh"
describe "set mountpoint mounts an unmounted canmount=on dataset"
require_daemon_mounts

mounted() {
	mountpoint -q "$1" 2>/dev/null
}

mkdevs 1 256M
tarn_ok pool create -m "$MNT" tank "${DEV[0]}"
mounted "$MNT" && pass || fail "pool not mounted at $MNT"
# unmounted datasets: mountpoint=none, then a tree under it
tarn_ok fs create -o mountpoint=none tank/a
tarn_ok fs create tank/a/kid
tarn_ok fs create -o mountpoint="$E2E_TMP/own" tank/a/own
tarn_ok fs unmount tank/a/own
tarn_ok fs create -o canmount=noauto tank/a/na
tarn_ok fs get -H -o value mounted tank/a tank/a/kid tank/a/own tank/a/na
out_is "no
no
no
no"

tarn_ok fs set mountpoint="$E2E_TMP/x" tank/a
mounted "$E2E_TMP/x" && pass || fail "tank/a not mounted at its new mountpoint"
mounted "$E2E_TMP/x/kid" && pass || fail "tank/a/kid (inherits) not mounted"
mounted "$E2E_TMP/own" && fail "tank/a/own (own mountpoint) was mounted" || pass
mounted "$E2E_TMP/x/na" && fail "tank/a/na (canmount=noauto) was mounted" || pass
tarn_ok fs get -H -o value mounted tank/a tank/a/kid tank/a/own tank/a/na
out_is "yes
yes
no
no"
ok touch "$E2E_TMP/x/kid/f"

# mounted: the set moves it (as before)
tarn_ok fs set mountpoint="$E2E_TMP/y" tank/a
mounted "$E2E_TMP/y/kid" && [ -f "$E2E_TMP/y/kid/f" ] && pass || fail "tank/a/kid did not move"

# canmount=off is not mounted by a new mountpoint
tarn_ok fs create -o canmount=off -o mountpoint=none tank/off
tarn_ok fs set mountpoint="$E2E_TMP/off" tank/off
mounted "$E2E_TMP/off" && fail "canmount=off dataset mounted" || pass

# a failed set mounts nothing
tarn_ok fs create -o mountpoint=none tank/b
tarn_err 1 "^cannot set property for 'tank/b'" fs set mountpoint=relative tank/b
tarn_ok fs get -H -o value mounted,mountpoint tank/b
out_is "no
none"

# inherit: tank/b goes to the pool's mountpoint below $MNT
tarn_ok fs inherit mountpoint tank/b
mounted "$MNT/b" && pass || fail "inherit mountpoint did not mount tank/b"

# a mount that fails makes the set fail; the value stays set
tarn_ok fs create -o mountpoint=none tank/c
mkdir -p "$E2E_TMP/full" && touch "$E2E_TMP/full/x"
tarn_err 1 "^cannot mount 'tank/c': directory is not empty" \
	fs set mountpoint="$E2E_TMP/full" tank/c
tarn_ok fs get -H -o value mountpoint tank/c
out_is "$E2E_TMP/full"
mounted "$E2E_TMP/full" && fail "mounted over a non-empty directory" || pass

tarn_ok pool destroy -f tank
e2e_done
