#!/bin/bash
# fs_posix.sh — POSIX behaviour through a Tarn mount (tarn-mount, raidz1
# of three file devices): files of many sizes written and read back
# byte-exact (also after a remount), sparse files and their holes, hard
# links and link counts, symlinks, renames with mv, extended attributes,
# a file unlinked while open (it still reads; its space comes back after
# the close), a directory of 20,000 files.  The errno values of the same
# operations are compared with ext4 in fs_compare.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fs_lib.bash"

describe "POSIX behaviour through the FUSE mount"
require_fuse
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

mkdevs 3 512M
fs_start -c -- raidz1 "${DEV[@]}" || e2e_done

# ---- data: sizes around the record size, written with cp and dd
SRC="$E2E_TMP/src"
mkdir -p "$SRC"
for sz in 0 1 4095 4096 131071 131072 131073 1048577 5242887; do
	head -c "$sz" /dev/urandom >"$SRC/f$sz"
done
head -c 64M /dev/urandom >"$SRC/big"
check "copy files in" cp "$SRC"/f* "$MNT/"
check "dd a 64 MiB file in" dd if="$SRC/big" of="$MNT/big" bs=1M conv=fsync status=none
for f in "$SRC"/f* "$SRC/big"; do
	check "read back $(basename "$f")" cmp "$f" "$MNT/$(basename "$f")"
done
check "sizes" test "$(stat -c %s "$MNT/f131073")" -eq 131073
# overwrite the middle of a file in place
check "overwrite in place" dd if=/dev/zero of="$MNT/f1048577" bs=1k seek=100 count=10 \
	conv=notrunc status=none
dd if=/dev/zero of="$SRC/f1048577" bs=1k seek=100 count=10 conv=notrunc status=none
check "overwritten file reads back" cmp "$SRC/f1048577" "$MNT/f1048577"

# ---- sparse files
# (du is checked after a txg sync: before it, the space used is an
# estimate, as in ZFS; fsync goes to the intent log and syncs no txg)
TXGS=($PY -c "import sys; sys.path.insert(0, sys.argv[2]); import fs_ops; fs_ops.force_txgs(sys.argv[1], 2)"
	"$MNT" "$(dirname "$FS_OPS")")
check "truncate -s 1G" truncate -s 1G "$MNT/sparse1g"
check "1 GiB sparse file has its size" test "$(stat -c %s "$MNT/sparse1g")" -eq 1073741824
check "sync it" sync "$MNT/sparse1g"
check "a txg syncs" "${TXGS[@]}"
check "and it takes almost nothing (du)" test "$(du -k "$MNT/sparse1g" | cut -f1)" -lt 1024
check "dd seek makes a hole" dd if=/dev/urandom of="$MNT/seek" bs=4k count=1 seek=10000 \
	conv=fsync status=none
check "size after dd seek" test "$(stat -c %s "$MNT/seek")" -eq $((10001 * 4096))
check "a txg syncs" "${TXGS[@]}"
check "du shows the hole" test "$(du -k "$MNT/seek" | cut -f1)" -lt 1024
check "the hole reads as zeros" cmp -n 4096 "$MNT/seek" /dev/zero
check "holes, SEEK_DATA/SEEK_HOLE, punching" $PY "$FS_OPS" holes "$MNT"
check "file handles (NFS export): found again after the kernel forgot them" \
	$PY "$FS_OPS" handles "$MNT"

# ---- hard links
mkdir -p "$MNT/links"
echo "linked" >"$MNT/links/a"
check "ln" ln "$MNT/links/a" "$MNT/links/b"
check "ln into another dir" ln "$MNT/links/a" "$MNT/c"
check "link count 3" test "$(stat -c %h "$MNT/links/a")" -eq 3
check "same inode" test "$(stat -c %i "$MNT/links/a")" = "$(stat -c %i "$MNT/c")"
check "rm one link" rm "$MNT/links/a"
check "link count 2" test "$(stat -c %h "$MNT/links/b")" -eq 2
check "content through the other link" grep -qx linked "$MNT/c"
check "directory link count" test "$(stat -c %h "$MNT/links")" -eq 2
mkdir "$MNT/links/sub1" "$MNT/links/sub2"
check "directory link count with subdirs" test "$(stat -c %h "$MNT/links")" -eq 4

# ---- symlinks
check "ln -s" ln -s links/b "$MNT/sym"
check "readlink" test "$(readlink "$MNT/sym")" = "links/b"
check "read through a symlink" grep -qx linked "$MNT/sym"
check "symlink to a directory" ln -s links "$MNT/symdir"
check "list through it" test "$(ls "$MNT/symdir/" | wc -l)" -eq 3
check "dangling symlink" ln -s nowhere "$MNT/dangling"
run cat "$MNT/dangling"
if [ "$RC" -ne 0 ] && grep -q "No such file" "$ERR"; then pass; else fail "dangling symlink reads"; fi

# ---- renames with mv
mkdir -p "$MNT/mv/a/deep" "$MNT/mv/b"
echo one >"$MNT/mv/one"
echo two >"$MNT/mv/two"
check "mv over a file" mv "$MNT/mv/one" "$MNT/mv/two"
check "replaced content" grep -qx one "$MNT/mv/two"
check "source gone" test ! -e "$MNT/mv/one"
check "mv into a directory" mv "$MNT/mv/two" "$MNT/mv/a/"
check "mv a directory across" mv "$MNT/mv/a" "$MNT/mv/b/"
check "moved tree" grep -qx one "$MNT/mv/b/a/two"
check "parent link counts after the move" test "$(stat -c %h "$MNT/mv")" -eq 3
run mv "$MNT/mv/b" "$MNT/mv/b/a/deep/"
if [ "$RC" -ne 0 ]; then pass; else fail "mv of a directory into itself succeeded"; fi
mkdir "$MNT/mv/empty"
check "mv -T over an empty directory" mv -T "$MNT/mv/b" "$MNT/mv/empty"
check "the tree is there" grep -qx one "$MNT/mv/empty/a/two"

# ---- extended attributes
check "setxattr/getxattr" $PY -c "
import os, sys
p = sys.argv[1]
os.setxattr(p, 'user.color', b'blue')
os.setxattr(p, 'user.big', b'x' * 60000)
assert os.getxattr(p, 'user.color') == b'blue'
assert len(os.getxattr(p, 'user.big')) == 60000
assert sorted(os.listxattr(p)) == ['user.big', 'user.color'], os.listxattr(p)
os.removexattr(p, 'user.big')
assert os.listxattr(p) == ['user.color']
" "$MNT/links/b"

# ---- copy_file_range (done inside the server)
check "copy_file_range" $PY -c "
import os, sys
src, dst = sys.argv[1], sys.argv[2]
fi = os.open(src, os.O_RDONLY)
fo = os.open(dst, os.O_CREAT | os.O_WRONLY, 0o644)
n, total = 0, os.fstat(fi).st_size
while n < total:
    c = os.copy_file_range(fi, fo, total - n)
    if c == 0:
        break
    n += c
assert n == total, (n, total)
" "$MNT/f5242887" "$MNT/copied"
check "the copy reads back" cmp "$SRC/f5242887" "$MNT/copied"

# ---- unlinked while open
check "unlinked while open" $PY "$FS_OPS" unlinked "$MNT"

# ---- a large directory
check "20,000 files" $PY "$FS_OPS" bigdir "$MNT" 20000
check "ls counts them" test "$(ls "$MNT/bigdir" | wc -l)" -eq 20000
check "ls -l stats them" test "$(ls -l "$MNT/bigdir" | grep -c '^-')" -eq 20000
check "rm -rf" rm -rf "$MNT/bigdir"
check "gone" test ! -e "$MNT/bigdir"

# ---- everything is still there after a remount
fs_stop
fs_start -- "${DEV[@]}" || e2e_done
for f in "$SRC"/f* "$SRC/big"; do
	check "after remount: $(basename "$f")" cmp "$f" "$MNT/$(basename "$f")"
done
check "after remount: links" test "$(stat -c %h "$MNT/links/b")" -eq 2
check "after remount: symlink" grep -qx linked "$MNT/sym"
check "after remount: sparse" test "$(stat -c %s "$MNT/sparse1g")" -eq 1073741824
check "after remount: xattr" $PY -c "
import os, sys
assert os.getxattr(sys.argv[1], 'user.color') == b'blue'" "$MNT/links/b"
fs_stop

# ---- a read-only mount, with setuid, devices and exec off
fs_start -o ro,nosuid,nodev,noexec -- "${DEV[@]}" || e2e_done
check "ro,nosuid,nodev,noexec in /proc/mounts" \
	grep -Eq " $MNT fuse.tarn ro,nosuid,nodev,noexec" /proc/mounts
check "read-only: reads work" cmp "$SRC/big" "$MNT/big"
run touch "$MNT/new"
if [ "$RC" -ne 0 ] && grep -q "Read-only file system" "$ERR"; then pass; else
	fail "create on a read-only mount: rc $RC"
	show_output
fi
fs_stop
e2e_done
