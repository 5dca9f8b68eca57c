#!/bin/bash
# fs_compare.sh — the same operations on ext4 and on a Tarn mount must
# give the same results and errno values: fs_ops.py's errno suite (files,
# directories, names, links, symlinks, renames with RENAME_NOREPLACE,
# RENAME_EXCHANGE and RENAME_WHITEOUT, xattrs, times, owners, modes,
# special files, open and unlinked files, fallocate) as root, and its
# permission suite as the unprivileged user nobody (read/write/create/
# unlink/chmod/chown/utime/xattr permission checks, sticky and setgid
# directories, setuid cleared on write, protected hard links, POSIX ACLs:
# named users let in and kept out, the mask, setfacl's mode, chmod's ACL,
# default ACLs inherited by new files and directories).  ext4 is a
# loop-mounted image; without loop devices, a temp dir on the root file
# system if that is ext4.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fs_lib.bash"

describe "errno values and permission checks: Tarn against ext4"
require_fuse
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3     # nobody cannot use root's pyenv
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

# nobody must reach the mounts: the temp dir is 0700
chmod 755 "$E2E_TMP"
EXT4="$E2E_TMP/ext4"
mkdir -p "$EXT4"
EXT4_LOOP=0
truncate -s 64M "$E2E_TMP/ext4.img"
if mkfs.ext4 -q -F -b 4096 "$E2E_TMP/ext4.img" >/dev/null 2>&1 &&
    mount -o loop "$E2E_TMP/ext4.img" "$EXT4" 2>/dev/null; then
	EXT4_LOOP=1
elif [ "$(stat -f -c %T "$E2E_TMP")" != "ext2/ext3" ]; then
	echo "FAIL: no loop-mounted ext4 and $E2E_TMP is not on ext4: nothing to compare with" >&2
	exit 1
fi
cleanup_ext4() {
	[ "$EXT4_LOOP" -eq 1 ] && umount "$EXT4" 2>/dev/null
	EXT4_LOOP=0
}
trap 'rc=$?; cleanup_ext4; (exit $rc); fs_cleanup' EXIT

mkdevs 2 256M
fs_start -c -- mirror "${DEV[@]}" || e2e_done
chmod 755 "$MNT"

for side in ext4 tarn; do
	[ $side = ext4 ] && root=$EXT4 || root=$MNT
	mkdir -p "$root/errno" "$root/perm"
	$PY "$FS_OPS" errno "$root/errno" >"$E2E_TMP/errno.$side" 2>&1
	$PY "$FS_OPS" perm-setup "$root/perm" >"$E2E_TMP/perm-setup.$side" 2>&1 ||
		fail "perm-setup on $side: $(cat "$E2E_TMP/perm-setup.$side")"
	"${NOBODY[@]}" $PY "$FS_OPS" perm "$root/perm" >"$E2E_TMP/perm.$side" 2>&1
done
check "the errno suite ran" test "$(wc -l <"$E2E_TMP/errno.tarn")" -ge 90
check "the permission suite ran as nobody" grep -qx "whoami: (65534, 65534)" "$E2E_TMP/perm.tarn"
same_output "errno suite results (ext4 vs tarn)" "$E2E_TMP/errno.ext4" "$E2E_TMP/errno.tarn"
same_output "permission suite results (ext4 vs tarn)" "$E2E_TMP/perm.ext4" "$E2E_TMP/perm.tarn"
check "the ACL steps ran" grep -q "^acl-remove-own: 0o40" "$E2E_TMP/perm.tarn"

# the same after a remount (what was cached in the kernel is gone)
fs_stop
fs_start -- "${DEV[@]}" || e2e_done
"${NOBODY[@]}" $PY -c "
import os, sys
r = sys.argv[1]
for p in ('perm/f600', 'perm/priv/inner', 'perm/acl-r', 'perm/acl-deny'):
    try:
        open(os.path.join(r, p)).read()
        print(p, 'readable')
    except PermissionError:
        print(p, 'EACCES')
print('sgid', oct(os.stat(os.path.join(r, 'perm/sgid/d')).st_mode), os.stat(os.path.join(r, 'perm/sgid/f')).st_gid)
" "$MNT" >"$E2E_TMP/after.tarn" 2>&1
check "permissions after remount" grep -qx "perm/f600 EACCES" "$E2E_TMP/after.tarn"
check "ACLs after remount" sh -c "grep -qx 'perm/acl-r readable' '$E2E_TMP/after.tarn' &&
	grep -qx 'perm/acl-deny EACCES' '$E2E_TMP/after.tarn'"
check "setgid directory after remount" grep -qx "sgid 0o42755 4242" "$E2E_TMP/after.tarn"
fs_stop
cleanup_ext4
e2e_done
