#!/bin/bash
# fs_snapdir.sh — the .zfs directory of a mount, as on zfs: .zfs/snapshot
# lists the snapshots, .zfs/snapshot/NAME shows FS@NAME read-only with
# the inode numbers the file system had (old contents after the live
# files changed; every write there is EROFS), .zfs is left out of the
# root's listing with snapdir=hidden but found by name; mkdir, rmdir and
# mv under .zfs/snapshot take, destroy and rename snapshots, for root
# only (EPERM for others), rmdir of a snapshot with a file open in it is
# EBUSY; a snapshot unused for TARN_SNAPDIR_IDLE_MS is closed (its file
# handles change) unless a file is open in it; unmount with snapshots
# open works and the snapshots are still there after.
. "$(dirname "$0")/lib.sh"
describe ".zfs/snapshot: snapshots read-only under the mount, mkdir/rmdir/mv, idle release"
require_daemon_mounts
require_cmd setpriv util-linux
require_cmd cmp diffutils
export TARN_SNAPDIR_IDLE_MS=1000

# nobody must reach the mount for the EPERM checks (the temp dir is 0700)
chmod 755 "$E2E_TMP"
Z="$MNT/.zfs"
S="$Z/snapshot"
REF="$E2E_TMP/ref"
mkdir -p "$REF"

# erofs CMD...: the command must fail with "Read-only file system"
erofs() {
	run "$@"
	if [ "$RC" -eq 0 ] || ! grep -q "Read-only file system" "$ERR"; then
		fail "expected EROFS (rc $RC): $*"
		show_output
		return 1
	fi
	pass
}
# fails_with TEXT CMD...: the command must fail saying TEXT
fails_with() {
	local text=$1
	shift
	run "$@"
	if [ "$RC" -eq 0 ] || ! grep -q -- "$text" "$ERR"; then
		fail "expected '$text' (rc $RC): $*"
		show_output
		return 1
	fi
	pass
}
# fhandle PATH: the kernel's file handle of PATH in hex (node id and generation)
fhandle() {
	python3 - "$1" <<'EOF'
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
class FH(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_uint), ("type", ctypes.c_int), ("f", ctypes.c_ubyte * 128)]
fh = FH()
fh.bytes = 128
mid = ctypes.c_int()
if libc.name_to_handle_at(-100, sys.argv[1].encode(), ctypes.byref(fh), ctypes.byref(mid), 0):
    sys.exit("name_to_handle_at: errno %d" % ctypes.get_errno())
print("%d:%s" % (fh.type, bytes(fh.f[:fh.bytes]).hex()))
EOF
}
listing() {
	ls -a "$1" 2>&1 | tr '\n' ' '
}

mkdevs 1 256M
tarn_ok pool create -m "$MNT" tank "${DEV[0]}"
mountpoint -q "$MNT" && pass || { fail "pool not mounted at $MNT"; e2e_done; }

# ---- .zfs before any snapshot
case " $(listing "$MNT") " in
*" .zfs "*) fail ".zfs listed in the root with snapdir=hidden: $(listing "$MNT")" ;;
*) pass ;;
esac
[ -d "$Z" ] && [ -d "$S" ] && pass || fail ".zfs/snapshot is not reachable by name"
run ls "$Z"
out_is "snapshot"
run ls "$S"
out_is ""
[ "$(stat -c %i "$Z")" = 281474976710655 ] && pass ||
	fail ".zfs has inode $(stat -c %i "$Z"), not zfs's 2^48-1"
fails_with "File exists" mkdir "$MNT/.zfs"
erofs touch "$Z/file"
erofs touch "$S/file"

# ---- files, a snapshot, changes
ok dd if=/dev/urandom of="$MNT/a" bs=64k count=16 status=none
ok mkdir -p "$MNT/dir/sub"
ok dd if=/dev/urandom of="$MNT/dir/b" bs=4k count=3 status=none
ok ln -s dir/b "$MNT/link"
ok truncate -s 10M "$MNT/sparse"
ok cp "$MNT/a" "$REF/a"
ok cp "$MNT/dir/b" "$REF/b"
ino_a=$(stat -c %i "$MNT/a")
ino_b=$(stat -c %i "$MNT/dir/b")
ino_root=$(stat -c %i "$MNT")
sync
run mkdir "$S/s1"
if [ "$RC" -ne 0 ]; then
	fail "mkdir .zfs/snapshot/s1 (taking a snapshot) failed: $(cat "$ERR")"
	e2e_done
fi
pass
ok dd if=/dev/urandom of="$MNT/a" bs=64k count=4 status=none conv=notrunc
ok rm "$MNT/dir/b"
ok touch "$MNT/c"
cmp -s "$MNT/a" "$REF/a" && fail "the live file did not change" || pass

run ls "$S"
out_is "s1"
cmp -s "$S/s1/a" "$REF/a" && pass || fail ".zfs/snapshot/s1/a differs from a at the snapshot"
cmp -s "$S/s1/dir/b" "$REF/b" && pass || fail ".zfs/snapshot/s1/dir/b differs"
[ ! -e "$S/s1/c" ] && pass || fail "c (made after the snapshot) is in it"
[ "$(readlink "$S/s1/link")" = dir/b ] && pass || fail "symlink in the snapshot"
[ "$(stat -c %s "$S/s1/sparse")" = 10485760 ] && pass || fail "sparse file's size"
[ "$(stat -c %i "$S/s1/a")" = "$ino_a" ] && pass || fail "a's inode number differs in s1"
[ "$(stat -c %i "$S/s1/dir/b")" = "$ino_b" ] && pass || fail "b's inode number differs in s1"
[ "$(stat -c %i "$S/s1")" = "$ino_root" ] && pass || fail "s1's root has another inode"
[ "$(cd "$S/s1/dir/sub/../.." && pwd -P)" = "$S/s1" ] && pass || fail ".. inside s1"
[ "$(stat -c %i "$S/s1/..")" = "$(stat -c %i "$S")" ] && pass || fail ".. of s1 is not .zfs/snapshot"

# ---- writes under it
erofs touch "$S/s1/new"
erofs sh -c "echo x > '$S/s1/a'"
erofs sh -c "echo x >> '$S/s1/a'"
erofs rm "$S/s1/a"
erofs mkdir "$S/s1/d"
erofs rmdir "$S/s1/dir/sub"
erofs mv "$MNT/c" "$S/s1/"
erofs mv "$S/s1/a" "$S/s1/a2"
erofs chmod 600 "$S/s1/a"
erofs truncate -s 0 "$S/s1/a"
erofs ln -s x "$S/s1/sl"
erofs python3 -c "import os; os.setxattr('$S/s1/a', 'user.x', b'1')"
cmp -s "$S/s1/a" "$REF/a" && pass || fail "s1/a changed by the refused writes"
[ -e "$MNT/c" ] && pass || fail "mv into the snapshot lost the file"

# ---- snapdir=hidden|visible
run "$TARN" fs set snapdir=visible tank
if [ "$RC" -eq 0 ]; then
	case " $(listing "$MNT") " in
	*" .zfs "*) pass ;;
	*) fail ".zfs not listed with snapdir=visible: $(listing "$MNT")" ;;
	esac
	tarn_ok fs set snapdir=hidden tank
	case " $(listing "$MNT") " in
	*" .zfs "*) fail ".zfs listed with snapdir=hidden again" ;;
	*) pass ;;
	esac
else
	echo "# (no snapdir property in this build: visible not checked)"
fi

# ---- root only
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fails_with "Operation not permitted" "${NOBODY[@]}" mkdir "$S/x"
fails_with "Operation not permitted" "${NOBODY[@]}" rmdir "$S/s1"
fails_with "Operation not permitted" "${NOBODY[@]}" mv "$S/s1" "$S/s9"
run "${NOBODY[@]}" cat "$S/s1/dir/sub/../../a"
[ "$RC" -eq 0 ] && pass || fail "nobody cannot read a snapshot's file: $(cat "$ERR")"
run ls "$S"
out_is "s1"

# ---- mv, mkdir, rmdir, busy
ok mv "$S/s1" "$S/s2"
run ls "$S"
out_is "s2"
cmp -s "$S/s2/a" "$REF/a" && pass || fail "s2 (renamed s1) differs"
[ ! -e "$S/s1" ] && pass || fail "s1 still there after mv"
ok mkdir "$S/s3"
cmp -s "$S/s3/a" "$MNT/a" && pass || fail "s3/a is not the live a"
run ls "$S"
out_is "s2
s3"
exec 3<"$S/s3/a"
fails_with "busy" rmdir "$S/s3"
exec 3<&-
ok rmdir "$S/s3"
run ls "$S"
out_is "s2"
[ ! -e "$S/s3" ] && pass || fail "s3 still there after rmdir"
fails_with "No such file" rmdir "$S/s3"
fails_with "File exists" mkdir "$S/s2"

# ---- idle release: the snapshot is closed and opened again (new file handles)
h1=$(fhandle "$S/s2/a")
exec 4<"$S/s2/a"
sleep 3
h2=$(fhandle "$S/s2/a")
[ -n "$h1" ] && [ "$h1" = "$h2" ] && pass ||
	fail "a snapshot with a file open was released (handles '$h1' '$h2')"
exec 4<&-
sleep 4
h3=$(fhandle "$S/s2/a")
[ -n "$h3" ] && [ "$h3" != "$h1" ] && pass ||
	fail "an idle snapshot was not released (handles '$h1' '$h3')"
cmp -s "$S/s2/a" "$REF/a" && pass || fail "s2 after it was opened again"

# ---- unmount with a snapshot open, mount again
ls "$S/s2/dir" >/dev/null
tarn_ok fs unmount tank
mountpoint -q "$MNT" && fail "still mounted after unmount" || pass
tarn_ok fs mount tank
cmp -s "$S/s2/a" "$REF/a" && pass || fail "s2 after a remount"
cmp -s "$S/s2/dir/b" "$REF/b" && pass || fail "s2/dir/b after a remount"
ok rmdir "$S/s2"
run ls "$S"
out_is ""
e2e_done
