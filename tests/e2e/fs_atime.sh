#!/bin/bash
# fs_atime.sh — the kernel's atime flag of a mount (what mount(8) and
# /proc/mounts show) says what the atime and relatime properties say, as
# on zfs: atime=off shows noatime, atime=on with relatime=on relatime,
# relatime=off neither (strictatime); at mount, after a set in place, and
# with `zfs mount -o noatime`.  And what the daemon does: a read that
# reaches it sets atime with atime=on relatime=off, never with atime=off;
# relatime sets it when atime is not newer than mtime.
. "$(dirname "$0")/lib.sh"
describe "atime and relatime: the mount's flag and the daemon's updates"
require_daemon_mounts

mounted() {
	mountpoint -q "$1" 2>/dev/null
}
# flag DIR: the atime word of the mount's options (noatime, relatime, or strict)
flag() {
	local o
	o=$(findmnt -n -o OPTIONS --mountpoint "$1")
	case ",$o," in
	*,noatime,*) echo noatime ;;
	*,relatime,*) echo relatime ;;
	*) echo strict ;;
	esac
}
want_flag() {
	local got
	got=$(flag "$1")
	[ "$got" = "$2" ] && pass || fail "$1: mount shows '$got', not '$2' ($3)"
}

mkdevs 1 256M
tarn_ok pool create -m "$MNT" tank "${DEV[0]}"
mounted "$MNT" && pass || { fail "pool not mounted at $MNT"; e2e_done; }
tarn_ok fs get -H -o value atime,relatime tank
out_is "on
off"
want_flag "$MNT" strict "defaults: atime=on relatime=off"

tarn_ok fs create -o atime=off tank/off
want_flag "$MNT/off" noatime "created with atime=off"
tarn_ok fs create -o relatime=on tank/rel
want_flag "$MNT/rel" relatime "created with relatime=on"
tarn_ok fs create tank/strict
want_flag "$MNT/strict" strict "created with the defaults"

# in place
tarn_ok fs set atime=off tank
want_flag "$MNT" noatime "set atime=off"
want_flag "$MNT/strict" noatime "inherits atime=off"
want_flag "$MNT/rel" noatime "atime=off, relatime=on"
tarn_ok fs set atime=on tank
want_flag "$MNT" strict "set atime=on"
want_flag "$MNT/rel" relatime "atime=on, relatime=on"
tarn_ok fs set relatime=on tank
want_flag "$MNT" relatime "set relatime=on"
want_flag "$MNT/strict" relatime "inherits relatime=on"
tarn_ok fs inherit relatime tank
want_flag "$MNT" strict "inherit relatime"

# a mount's own option
tarn_ok fs unmount tank/strict
tarn_ok fs mount -o noatime tank/strict
want_flag "$MNT/strict" noatime "zfs mount -o noatime"
tarn_ok fs get -H -o value,source atime tank/strict
out_is "$(printf 'off\ttemporary')"

# what the daemon records: a read after a remount (nothing cached)
# (relatime: f's atime is older than its mtime; h's is newer than its
# ctime after a first read, and a second read leaves it)
old=200001010000
for ds in off strict rel; do
	ok dd if=/dev/urandom of="$MNT/$ds/f" bs=64k count=1 status=none conv=fsync
	ok touch -a -t $old "$MNT/$ds/f"
done
ok dd if=/dev/urandom of="$MNT/rel/h" bs=64k count=1 status=none conv=fsync
remount() {
	local ds
	for ds in "$@"; do
		tarn_ok fs unmount tank/$ds
		tarn_ok fs mount tank/$ds
	done
}
remount strict off rel
cat "$MNT/off/f" "$MNT/strict/f" "$MNT/rel/f" "$MNT/rel/h" >/dev/null
recent=$(($(date +%s) - 600))
a=$(stat -c %X "$MNT/off/f")
[ "$a" -lt 1000000000 ] && pass || fail "atime=off: a read set atime ($a)"
a=$(stat -c %X "$MNT/strict/f")
[ "$a" -gt $recent ] && pass || fail "atime=on relatime=off: a read did not set atime ($a)"
a=$(stat -c %X "$MNT/rel/f")
[ "$a" -gt $recent ] && pass || fail "relatime: atime older than mtime not set by a read ($a)"
h1=$(stat -c %x "$MNT/rel/h")
s1=$(stat -c %x "$MNT/strict/f")
sleep 1.1
remount strict rel
cat "$MNT/strict/f" "$MNT/rel/h" >/dev/null
h2=$(stat -c %x "$MNT/rel/h")
[ "$h1" = "$h2" ] && pass || fail "relatime: a recent atime newer than ctime changed ($h1 -> $h2)"
s2=$(stat -c %x "$MNT/strict/f")
[ "$s1" != "$s2" ] && pass || fail "atime=on relatime=off: a second read left atime ($s1)"

tarn_ok pool destroy -f tank
e2e_done
