#!/bin/bash
# import_readonly_mount.sh — `zpool import -o readonly=on` mounts the
# pool's datasets read-only, as zfs does: the files are there, the mounts
# are ro, a write or a create gets EROFS, and nothing is written to the
# devices; the next read-write import mounts them writable again.
. "$(dirname "$0")/lib.sh"
describe "import -o readonly=on mounts the datasets read-only"
require_daemon_mounts

mounted() {
	mountpoint -q "$1" 2>/dev/null
}
# errno_of OP PATH: the errno name python gets for a write-like operation
errno_of() {
	python3 - "$1" "$2" <<'PYEOF'
import errno, os, sys
op, path = sys.argv[1], sys.argv[2]
try:
    if op == "write":
        fd = os.open(path, os.O_WRONLY)
        os.write(fd, b"x")
        os.close(fd)
    elif op == "create":
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))
    elif op == "mkdir":
        os.mkdir(path)
    print("ok")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
PYEOF
}

mkdevs 2 256M
tarn_ok pool create -m "$MNT" tank mirror "${DEV[@]}"
tarn_ok fs create tank/a
tarn_ok fs create -o canmount=noauto tank/na
ok dd if=/dev/urandom of="$MNT/top" bs=64k count=4 status=none conv=fsync
ok dd if=/dev/urandom of="$MNT/a/f" bs=64k count=4 status=none conv=fsync
sums=$(cd "$MNT" && sha256sum top a/f)
ok mkdir "$MNT/na"      # its mountpoint, which a read-only tank cannot make
tarn_ok pool export tank
mounted "$MNT" && fail "still mounted after export" || pass

sums_save "${DEV[@]}"
tarn_ok pool import -o readonly=on -d "$DEVDIR" tank
tarn_ok pool get -H -o value readonly tank
out_is "on"
mounted "$MNT" && pass || fail "tank not mounted after a read-only import"
mounted "$MNT/a" && pass || fail "tank/a not mounted after a read-only import"
mounted "$MNT/na" && fail "canmount=noauto tank/na was mounted" || pass
tarn_ok fs get -H -o value mounted tank tank/a
out_is "yes
yes"
[ "$(cd "$MNT" && sha256sum top a/f)" = "$sums" ] && pass || fail "files differ on the read-only mount"
for d in "$MNT" "$MNT/a"; do
	findmnt -n -o OPTIONS --mountpoint "$d" | grep -q '^ro' && pass ||
		fail "$d is not mounted ro: $(findmnt -n -o OPTIONS --mountpoint "$d")"
done
[ "$(errno_of write "$MNT/a/f")" = EROFS ] && pass || fail "write: $(errno_of write "$MNT/a/f"), not EROFS"
[ "$(errno_of create "$MNT/new")" = EROFS ] && pass || fail "create: $(errno_of create "$MNT/new"), not EROFS"
[ "$(errno_of mkdir "$MNT/a/d")" = EROFS ] && pass || fail "mkdir: $(errno_of mkdir "$MNT/a/d"), not EROFS"
# zfs mount of a dataset left out mounts it read-only too
tarn_ok fs mount tank/na
findmnt -n -o OPTIONS --mountpoint "$MNT/na" | grep -q '^ro' && pass || fail "tank/na not mounted ro"
tarn_ok pool export tank
mounted "$MNT/a" && fail "tank/a still mounted after export" || pass
sums_check

# read-write again: mounted writable
tarn_ok pool import -d "$DEVDIR" tank
mounted "$MNT/a" && pass || fail "tank/a not mounted after a read-write import"
[ "$(errno_of write "$MNT/a/f")" = ok ] && pass || fail "write after a read-write import: $(errno_of write "$MNT/a/f")"
tarn_ok pool destroy -f tank
e2e_done
