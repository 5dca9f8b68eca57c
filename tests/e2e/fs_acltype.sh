#!/bin/bash
# The acltype and xattr properties through the mount, as a ZFS admin sets
# them (zfs create -o xattr=sa -o acltype=posixacl): zfs's values and
# aliases; acltype=off refuses ACLs (EOPNOTSUPP, as getfacl/setfacl see
# on a file system without them) and stops the kernel enforcing them, a
# named user let in by an ACL is kept out; acltype=posix brings the stored
# ACL back; a busy mount refuses the change (the kernel's ACL checks are
# fixed for a mount's life) and keeps the property; zfs mount -o noacl is
# a temporary value.  xattr=dir and sa keep attributes readable either way.
#
# Cleanup even on failure: e2e_cleanup destroys the pool (unmounting),
# stops the daemon by its PID and unmounts what is left.
. "$(dirname "$0")/lib.sh"
describe "acltype, xattr=sa|dir and mount -o -a through the mount"
require_daemon_mounts
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3     # nobody cannot use root's pyenv
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
chmod 755 "$E2E_TMP"                                # nobody must reach the mount

# PYX set PATH NAME VALUE | get PATH NAME | list PATH
PYX=("$PY" -c 'import os, sys
a = sys.argv[1:]
if a[0] == "set": os.setxattr(a[1], a[2], a[3].encode())
elif a[0] == "get": print(os.getxattr(a[1], a[2]).decode())
else: print(" ".join(sorted(os.listxattr(a[1]))))')

mounted() {
	mountpoint -q "$1" 2>/dev/null
}

# pyacl OP PATH: set (root: an access ACL letting uid 65534 read, mode
# 0600 for the rest), get (prints the entries' count or the errno name)
pyacl() {
	"$PY" - "$@" <<'EOF'
import errno, os, struct, sys
op, path = sys.argv[1], sys.argv[2]
A = "system.posix_acl_access"
try:
    if op == "set":
        ents = [(1, 6, 0xFFFFFFFF), (2, 4, 65534), (4, 0, 0xFFFFFFFF),
                (0x10, 4, 0xFFFFFFFF), (0x20, 0, 0xFFFFFFFF)]
        os.setxattr(path, A, struct.pack("<I", 2) +
                    b"".join(struct.pack("<HHI", *e) for e in ents))
        print("set")
    else:
        print((len(os.getxattr(path, A)) - 4) // 8)
except OSError as e:
    print("EOPNOTSUPP" if e.errno == errno.EOPNOTSUPP else errno.errorcode[e.errno])
EOF
}

# as_nobody_reads FILE: "yes" or "no"
as_nobody_reads() {
	"${NOBODY[@]}" cat "$1" >/dev/null 2>&1 && echo yes || echo no
}

mkdevs 1 256M
tarn_ok pool create -m "$MNT" -O xattr=sa -O acltype=posixacl tank "${DEV[0]}"
mounted "$MNT" && pass || fail "pool not mounted at $MNT"

# --- values as zfs shows them: aliases print the canonical name
tarn_ok fs get -H -o value,source xattr,acltype tank
out_is "$(printf 'sa\tlocal\nposix\tlocal')"
tarn_ok fs create -o acltype=noacl -o xattr=dir tank/a
tarn_ok fs get -H -o value,source acltype,xattr tank/a
out_is "$(printf 'off\tlocal\ndir\tlocal')"
tarn_ok fs set acltype=disabled tank/a
tarn_ok fs get -H -o value acltype tank/a
out_is "off"
tarn_ok fs inherit acltype tank/a
tarn_ok fs get -H -o value,source acltype tank/a
out_is "$(printf 'posix\tinherited from tank')"
tarn_ok fs inherit xattr tank/a
tarn_ok fs inherit -r acltype tank
tarn_ok fs inherit xattr tank
tarn_ok fs get -H -o value,source acltype,xattr tank
out_is "$(printf 'posix\tdefault\non\tdefault')"
tarn_err 1 "'acltype' must be one of 'off \| posix" fs set acltype=nfsv4 tank
tarn_err 1 "'xattr' must be one of 'off \| on \| sa \| dir'" fs set xattr=yes tank

# --- an ACL lets nobody read a 0600 file
F="$MNT/a/secret"
ok sh -c "echo secret >'$F'"
ok chmod 600 "$F"
[ "$(as_nobody_reads "$F")" = no ] && pass || fail "nobody read a 0600 file without an ACL"
[ "$(pyacl set "$F")" = set ] && pass || fail "could not set an ACL (acltype=posix)"
[ "$(as_nobody_reads "$F")" = yes ] && pass || fail "the ACL did not let nobody read"

# --- busy: refused, the property kept, the ACL still enforced
bash -c 'cd "$1" && exec sleep 30' busy "$MNT/a" &
busy=$!
sleep 0.5
tarn_err 1 "^cannot set property for 'tank/a': '$MNT/a' is busy \(acltype takes a remount" \
	fs set acltype=off tank/a
tarn_ok fs get -H -o value,source acltype tank/a
out_is "$(printf 'posix\tdefault')"
[ "$(as_nobody_reads "$F")" = yes ] && pass || fail "a refused acltype=off changed the ACL checks"
kill "$busy" 2>/dev/null
wait "$busy" 2>/dev/null

# --- idle: acltype=off remounts; no ACLs, nobody kept out by the mode
tarn_ok fs set acltype=off tank/a
mounted "$MNT/a" && pass || fail "tank/a not mounted again after acltype=off"
[ "$(pyacl get "$F")" = EOPNOTSUPP ] && pass || fail "acltype=off: the ACL is still readable"
[ "$(pyacl set "$F")" = EOPNOTSUPP ] && pass || fail "acltype=off: an ACL could be set"
[ "$(as_nobody_reads "$F")" = no ] && pass || fail "acltype=off: the ACL still let nobody in"
ok "${PYX[@]}" list "$F"
out_is ""
# --- back to posix: the stored ACL is back and enforced
tarn_ok fs set acltype=posixacl tank/a
[ "$(pyacl get "$F")" = 5 ] && pass || fail "acltype=posix: the stored ACL is not back"
[ "$(as_nobody_reads "$F")" = yes ] && pass || fail "acltype=posix: the ACL is not enforced"

# --- zfs mount -o noacl: temporary, gone at the next mount
tarn_ok fs unmount tank/a
tarn_ok fs mount -o noacl tank/a
tarn_ok fs get -H -o value,source acltype tank/a
out_is "$(printf 'off\ttemporary')"
[ "$(as_nobody_reads "$F")" = no ] && pass || fail "mount -o noacl: the ACL still let nobody in"
tarn_ok fs unmount tank/a
tarn_ok fs mount tank/a
tarn_ok fs get -H -o value,source acltype tank/a
out_is "$(printf 'posix\tlocal')"

# --- zfs mount -o OPTS -a: the options for every mount it makes
tarn_ok fs unmount -a
tarn_ok fs mount -o noacl,noexec -a
for m in "$MNT" "$MNT/a"; do
	grep -q " $m fuse.tarn [^ ]*noexec" /proc/mounts && pass || fail "mount -o noexec -a: $m"
done
tarn_ok fs get -H -o name,value,source acltype -r tank
out_is "$(printf 'tank\toff\ttemporary\ntank/a\toff\ttemporary')"
tarn_ok fs unmount -a
tarn_ok fs mount -a
tarn_ok fs get -H -o value,source acltype tank/a
out_is "$(printf 'posix\tlocal')"

# --- xattr=dir and sa: attributes set under each stay readable under both
tarn_ok fs set xattr=dir tank/a
ok "${PYX[@]}" set "$F" user.DOSATTRIB dos-under-dir
tarn_ok fs set xattr=sa tank/a
ok "${PYX[@]}" set "$F" user.small s
tarn_ok fs set xattr=dir tank/a
ok "${PYX[@]}" get "$F" user.DOSATTRIB
out_is "dos-under-dir"
ok "${PYX[@]}" get "$F" user.small
out_is "s"
ok "${PYX[@]}" set "$F" user.small moved-under-dir
tarn_ok fs unmount tank/a
tarn_ok fs mount tank/a
ok "${PYX[@]}" list "$F"
out_is "system.posix_acl_access user.DOSATTRIB user.small"
ok "${PYX[@]}" get "$F" user.small
out_is "moved-under-dir"
e2e_done
