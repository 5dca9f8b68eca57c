#!/bin/bash
# Datasets mounted by the daemon: a raidz1 pool created with -m is mounted
# there; files written through the mount show in `zfs list`; datasets
# mount inside their parents; readonly gives EROFS, quota EDQUOT; destroy
# of a mounted dataset unmounts it (a busy one needs -f); export unmounts,
# import mounts again; the daemon remounts after SIGTERM, and after
# SIGKILL in the middle of writes (the dead FUSE mount is cleared) every
# fsync'd file is there and a scrub is clean.
#
# Cleanup even on failure: pools destroyed with -f (unmounts), the daemon
# stopped by its PID (SIGTERM unmounts), then any FUSE mount left under
# this test's temp dir is lazily unmounted (fusermount3 -uz).
. "$(dirname "$0")/lib.sh"
describe "datasets mounted by tarnd: mount, quota, readonly, busy, export, restart, crash"
require_daemon_mounts

# e2e_cleanup destroys the pool, stops the daemon, unmounts what is left

mounted() {
	mountpoint -q "$1" 2>/dev/null
}

mkdevs 4 256M
tarn_ok pool create -m "$MNT" tank raidz1 "${DEV[@]}"
mounted "$MNT" && pass || fail "pool not mounted at $MNT"
tarn_ok fs get -H -o value mounted,mountpoint tank
out_is "yes
$MNT"

# --- files through the mount; USED grows
tarn_ok fs list -H -p -o used tank
used0=$(cat "$OUT")
ok dd if=/dev/urandom of="$MNT/big" bs=1M count=8 conv=fsync status=none
ok cp -r "$E2E_SRC/lib/util" "$MNT/util"
sums=$(cd "$MNT" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
tarn_ok fs list -H -p -o used tank
used1=$(cat "$OUT")
[ "$used1" -gt "$((used0 + 8000000))" ] && pass || fail "USED did not grow: $used0 -> $used1"
# in data bytes, as on zfs: raidz1's parity is not counted (8 MiB would
# take 10.7 MiB with it)
[ "$used1" -lt "$((used0 + 8912896))" ] && pass ||
	fail "USED counts parity: $used0 -> $used1 for 8 MiB and 33 KiB of files"

# --- compressratio and the logical sizes, as zfs counts them: source text
# under lz4 compresses at least 2x, the same bytes uncompressed do not
tarn_ok fs create -o compression=lz4 tank/lz
tarn_ok fs create -o compression=off tank/raw
# an empty file system: its metadata counts what it takes (zfs: 1.00x)
tarn_ok pool sync tank
tarn_ok fs get -H -o value compressratio,refcompressratio tank/raw
[ "$(tr '\n' ' ' < "$OUT")" = "1.00x 1.00x " ] && pass ||
	{ fail "compressratio of an empty dataset"; show_output; }
ok sh -c "cat '$E2E_SRC'/lib/*/*.c '$E2E_SRC'/lib/*/*.c > '$MNT/lz/text' &&
	cp '$MNT/lz/text' '$MNT/raw/text' && sync"
tarn_ok pool sync tank          # sync(1) sent the data to the pool; this writes it
tarn_err 1 "^cannot sync 'nope': no such pool$" pool sync tank nope
tsize=$(stat -c %s "$MNT/lz/text")
tarn_ok fs get -H -p -o value refcompressratio,logicalreferenced,referenced tank/lz
{ read -r ratio; read -r lref; read -r ref; } < "$OUT"
[ "${ratio%%.*}" -ge 2 ] && [ "$lref" -ge "$tsize" ] && [ "$ref" -lt "$((tsize / 2))" ] &&
	pass || { fail "lz4: ratio $ratio logicalreferenced $lref referenced $ref for $tsize bytes"; show_output; }
tarn_ok fs get -H -o value compressratio tank/lz
grep -Eq '^[0-9]+\.[0-9]{2}x$' "$OUT" && pass || { fail "compressratio not as zfs prints it"; show_output; }
tarn_ok fs get -H -p -o value refcompressratio,logicalreferenced tank/raw
{ read -r ratio; read -r lref; } < "$OUT"
[ "${ratio%%.*}" = 1 ] && [ "$lref" -ge "$tsize" ] && pass ||
	{ fail "compression=off: ratio $ratio logicalreferenced $lref"; show_output; }
# the root's logicalused holds its children's
tarn_ok fs get -H -p -o value logicalused tank
[ "$(cat "$OUT")" -ge "$((2 * tsize))" ] && pass || { fail "logicalused of tank"; show_output; }
tarn_ok fs destroy tank/lz
tarn_ok fs destroy tank/raw

# --- datasets mount inside their parents; zfs mount lists them
tarn_ok fs create tank/a
mounted "$MNT/a" && pass || fail "tank/a not mounted at $MNT/a"
tarn_ok fs create tank/a/b
mounted "$MNT/a/b" && pass || fail "tank/a/b not mounted inside tank/a"
# create -p mounts the parents it creates too (zfs does); left unmounted,
# their mountpoints would hold the child's and never mount again
tarn_ok fs create -p tank/p/q/r
for d in p p/q p/q/r; do
	mounted "$MNT/$d" && pass || fail "create -p: $MNT/$d not mounted"
done
tarn_ok fs get -H -o value mounted tank/p
out_is "yes"
# and so does rename -p
tarn_ok fs rename -p tank/p/q/r tank/m/n/r
for d in m m/n m/n/r; do
	mounted "$MNT/$d" && pass || fail "rename -p: $MNT/$d not mounted"
done
tarn_ok fs mount
out_has "^tank/a/b +$MNT/a/b$"
out_has "^tank/p/q +$MNT/p/q$"
out_has "^tank +$MNT$"
tarn_err 1 "^cannot mount 'tank/a': filesystem already mounted" fs mount tank/a
ok sh -c "echo hello >'$MNT/a/b/f'"

# --- readonly: EROFS, and back
tarn_ok fs set readonly=on tank/a
run sh -c "echo x >'$MNT/a/new'"
grep -q "Read-only file system" "$ERR" && pass || fail "no EROFS on readonly=on"
run sh -c "echo x >'$MNT/a/b/new'"
grep -q "Read-only file system" "$ERR" && pass || fail "child did not inherit readonly"
tarn_ok fs set readonly=off tank/a
ok sh -c "echo x >'$MNT/a/new'"
[ "$(cat "$MNT/a/b/f")" = hello ] && pass || fail "tank/a/b lost its file over the remount"

# --- quota: EDQUOT (random data: zero blocks are holes and cost nothing)
tarn_ok fs create -o quota=2M tank/q
# under a quota the mount has no writeback cache, so write(2) itself says
# EDQUOT, as on zfs (with the cache it would come at close, where the
# kernel can only say EIO); the sparse file past the quota costs nothing
ok truncate -s 1G "$MNT/q/sparse"
run dd if=/dev/urandom of="$MNT/q/plain" bs=256K count=40
grep -q "error writing.*Disk quota exceeded" "$ERR" && pass ||
	{ fail "write(2) over quota did not say EDQUOT"; show_output; }
# at the quota even a create is refused, as on zfs
run dd if=/dev/urandom of="$MNT/q/fill" bs=256K count=40 conv=fsync
grep -q "quota exceeded" "$ERR" && pass || { fail "no EDQUOT over quota"; show_output; }
# USED at the quota is data bytes, so about the quota: a write may pass
# it by its own size (with raidz1's parity counted the 2 MiB admitted
# showed as 2.7 MiB)
tarn_ok fs list -H -p -o used tank/q
qused=$(cat "$OUT")
[ "$qused" -le $((2097152 + 524288)) ] && pass || fail "2M quota shows $qused used"
# a quota set on a mounted dataset remounts it (and its child) likewise
tarn_ok fs create tank/r
tarn_ok fs create tank/r/c
ok dd if=/dev/zero of="$MNT/r/c/before" bs=64K count=2 status=none
tarn_ok fs set quota=1M tank/r
mounted "$MNT/r" && mounted "$MNT/r/c" && pass || fail "tank/r or tank/r/c not mounted after set quota"
run dd if=/dev/urandom of="$MNT/r/after" bs=256K count=40
grep -q "error writing.*Disk quota exceeded" "$ERR" && pass ||
	{ fail "a dataset given a quota did not say EDQUOT at write(2)"; show_output; }
tarn_ok fs set quota=none tank/r
mounted "$MNT/r/c" && [ "$(stat -c %s "$MNT/r/c/before")" = 131072 ] && pass ||
	fail "tank/r/c lost over the remounts"
ok dd if=/dev/zero of="$MNT/r/after" bs=256K count=40 status=none
# busy (a process has its cwd there): the quota is set, the mounts stay
bash -c 'cd "$1" && exec sleep 30' busy "$MNT/r/c" &
busy=$!
sleep 0.5
tarn_ok fs set quota=2M tank/r
mounted "$MNT/r" && mounted "$MNT/r/c" && pass || fail "a busy tank/r lost a mount at set quota"
tarn_ok fs get -H -o value quota tank/r
out_is "2M"
# and holds at once (the mount keeps its writeback cache until it is
# mounted again, so the error comes at fsync)
run dd if=/dev/urandom of="$MNT/r/c/over" bs=256K count=16 conv=fsync
[ "$RC" -ne 0 ] && pass || fail "4 MiB went into a busy dataset given a 2M quota"
# a change that takes a remount is refused while busy (as zfs refuses it):
# exit 1, the property as it was, the mounts as they were
tarn_err 1 "^cannot remount 'tank/r': '$MNT/r/c' is busy \(files are open there\)$" \
	fs set mountpoint=/nowhere tank/r
tarn_ok fs get -H -o value,source mountpoint tank/r/c
out_is "$(printf '%s\tinherited from tank' "$MNT/r/c")"
mounted "$MNT/r" && mounted "$MNT/r/c" && pass || fail "a refused mountpoint change lost a mount"
rm -f "$MNT/r/c/over"
tarn_ok fs set quota=none tank/r
# mount options change in place, busy or not (as zfs remounts in place):
# the kernel's flags with mount_setattr, the daemon's with its options
mntopts() {
	findmnt -n -o OPTIONS --mountpoint "$1"
}
printf '#!/bin/sh\necho ran\n' >"$MNT/r/c/prog" && chmod +x "$MNT/r/c/prog"
tarn_ok fs set exec=off tank/r
mntopts "$MNT/r/c" | grep -q noexec && pass || fail "exec=off: no noexec on the busy child"
run "$MNT/r/c/prog"
[ "$RC" -ne 0 ] && grep -q "Permission denied" "$ERR" && pass ||
	fail "a program ran on an exec=off dataset"
tarn_ok fs inherit exec tank/r
ok "$MNT/r/c/prog"
mntopts "$MNT/r/c" | grep -q noexec && fail "inherit exec left noexec" || pass
tarn_ok fs set setuid=off devices=off tank/r/c
mntopts "$MNT/r/c" | grep -q "nosuid.*nodev" && pass || fail "setuid/devices=off not in place"
# read-only with only a cwd there: in place, EROFS at once, and back
tarn_ok fs set readonly=on tank/r
mntopts "$MNT/r/c" | grep -q "^ro" && pass || fail "readonly=on: busy child not read-only"
run sh -c "echo x >'$MNT/r/c/ro'"
grep -q "Read-only file system" "$ERR" && pass || fail "no EROFS after readonly=on in place"
tarn_ok fs set readonly=off tank/r
ok sh -c "echo x >'$MNT/r/c/rw'"
# a file open for writing: the kernel refuses read-only, so does set, and
# the property stays as it was
bash -c 'exec 3>>"$1" && exec sleep 30' writer "$MNT/r/c/rw" &
writer=$!
sleep 0.5
tarn_err 1 "^cannot set property for 'tank/r': '$MNT/r/c' is busy \(files are open for writing there\)$" \
	fs set readonly=on tank/r
tarn_ok fs get -H -o value,source readonly tank/r/c
out_is "$(printf 'off\tinherited from tank/r')"
ok sh -c "echo y >>'$MNT/r/c/rw'"
mntopts "$MNT/r" | grep -q "^rw" && pass || fail "a refused readonly=on left tank/r read-only"
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null
# sync: disabled and standard in place; always needs the mount without
# the writeback cache, so a busy one refuses it
tarn_ok fs set sync=disabled tank/r
tarn_ok fs get -H -o value,source sync tank/r/c
out_is "$(printf 'disabled\tinherited from tank/r')"
tarn_err 1 "^cannot set property for 'tank/r': '$MNT/r/c' is busy \(sync=always takes a remount" \
	fs set sync=always tank/r
tarn_ok fs get -H -o value,source sync tank/r
out_is "$(printf 'disabled\tlocal')"
tarn_ok fs inherit sync tank/r
mounted "$MNT/r" && mounted "$MNT/r/c" && pass || fail "in-place changes lost a mount"
kill "$busy" 2>/dev/null
wait "$busy" 2>/dev/null
# idle: sync=always takes the remount
tarn_ok fs set sync=always tank/r
tarn_ok fs get -H -o value sync tank/r/c
out_is "always"
mounted "$MNT/r/c" && pass || fail "tank/r/c not mounted again after sync=always"
tarn_ok fs inherit sync tank/r
# mounted read-only (idle, so mounted again), then busy: read-write takes
# a mount that replays the intent log, so it waits until nothing is open
tarn_ok fs set readonly=on tank/r
bash -c 'cd "$1" && exec sleep 30' busy "$MNT/r/c" &
busy=$!
sleep 0.5
tarn_err 1 "^cannot inherit 'tank/r': '$MNT/r/c' is busy \(read-write takes a remount" \
	fs inherit readonly tank/r
tarn_ok fs get -H -o value,source readonly tank/r/c
out_is "$(printf 'on\tinherited from tank/r')"
kill "$busy" 2>/dev/null
wait "$busy" 2>/dev/null
tarn_ok fs inherit readonly tank/r
ok sh -c "echo z >'$MNT/r/c/rw'"
# not busy: the change is made and the subtree mounts at the new place;
# an unmounted dataset stays unmounted
tarn_ok fs set mountpoint="$MNT/r2" tank/r
mounted "$MNT/r2/c" && pass || fail "tank/r/c not mounted at its new mountpoint"
tarn_ok fs unmount tank/r/c
tarn_ok fs set exec=off tank/r/c
tarn_ok fs set readonly=on tank/r
mounted "$MNT/r2/c" && fail "set exec=off or readonly=on mounted an unmounted dataset" || pass
tarn_ok fs destroy -r -f tank/r

# --- mountpoint: moved by set, must be empty, none unmounts; atime in place
tarn_ok fs set mountpoint="$E2E_TMP/elsewhere" tank/q
mounted "$E2E_TMP/elsewhere" && pass || fail "tank/q not remounted at its new mountpoint"
mounted "$MNT/q" && fail "tank/q still mounted at the old place" || pass
tarn_ok fs inherit mountpoint tank/q
mounted "$MNT/q" && pass || fail "tank/q not back under tank"
tarn_ok fs set atime=off tank
mkdir -p "$E2E_TMP/full" && touch "$E2E_TMP/full/x"
tarn_err 1 "^cannot mount 'tank/n': directory is not empty" fs create -o mountpoint="$E2E_TMP/full" tank/n
tarn_ok fs get -H -o value mounted tank/n
out_is "no"
tarn_ok fs set mountpoint=none tank/n
tarn_ok fs destroy tank/n
TARN_NO_DAEMON=1 tarn_err 1 "^cannot mount 'tank/q': mounting needs the daemon" fs mount tank/q

# --- unmount / mount by hand; destroy of a mounted dataset
tarn_ok fs unmount tank/q
mounted "$MNT/q" && fail "tank/q still mounted" || pass
tarn_ok fs get -H -o value mounted tank/q
out_is "no"
tarn_ok fs mount tank/q
mounted "$MNT/q" && pass || fail "tank/q not mounted again"
# unmounted behind the daemon's back (umount(8)): no longer mounted for
# zfs either, and it mounts again with its files
ok umount "$MNT/q"
tarn_ok fs get -H -o value mounted tank/q
out_is "no"
tarn_ok fs mount
out_lacks "^tank/q "
tarn_ok fs mount tank/q
mounted "$MNT/q" && [ -e "$MNT/q/sparse" ] && pass ||
	fail "tank/q not mounted again with its files after umount(8)"
# destroy, as zfs: a mounted dataset is unmounted first; a busy one needs
# -f; children without -r are refused before anything is unmounted
# (exec: the PID we kill is the sleep itself; a subshell's orphaned sleep
# would keep the lazily detached mount busy for its whole 30 s)
bash -c 'cd "$1" && exec sleep 30' busy "$MNT/a/b" &
busy=$!
sleep 0.5
tarn_err 1 "^cannot unmount 'tank/a'" fs unmount tank/a
tarn_err 1 "^cannot destroy 'tank/a': filesystem has children; use -r$" fs destroy tank/a
mounted "$MNT/a" && mounted "$MNT/a/b" && pass || fail "a refused destroy lost a mount"
tarn_err 1 "^cannot destroy 'tank/a': '$MNT/a/b' is busy \(files are open there\); use -f$" \
	fs destroy -r tank/a
mounted "$MNT/a" && mounted "$MNT/a/b" && pass || fail "a busy destroy -r lost a mount"
tarn_ok fs list -H -o name tank/a/b
tarn_ok fs destroy -f -r tank/a
mounted "$MNT/a/b" && fail "tank/a/b still mounted after destroy -f" || pass
kill "$busy" 2>/dev/null
wait "$busy" 2>/dev/null
tarn_ok fs destroy tank/q
mounted "$MNT/q" && fail "tank/q still mounted after its destroy" || pass
tarn_err 1 "^cannot open 'tank/q': dataset does not exist" fs list tank/q

# --- canmount: noauto leaves a mounted dataset mounted (mount -a skips
# it), off unmounts it and refuses zfs mount
tarn_ok fs create tank/cm
tarn_ok fs set canmount=noauto tank/cm
mounted "$MNT/cm" && pass || fail "canmount=noauto unmounted tank/cm"
tarn_ok fs set canmount=off tank/cm
mounted "$MNT/cm" && fail "canmount=off left tank/cm mounted" || pass
tarn_err 1 "^cannot mount 'tank/cm': 'canmount' property is set to 'off'" fs mount tank/cm
tarn_ok fs destroy tank/cm

# --- options for one mount (zfs mount -o): above the properties while it lasts
tarn_ok fs create tank/t
tarn_ok fs unmount tank/t
tarn_ok fs mount -o ro,noexec tank/t
run sh -c "echo x >'$MNT/t/f'"
grep -q "Read-only file system" "$ERR" && pass || fail "zfs mount -o ro: no EROFS"
findmnt -n -o OPTIONS --mountpoint "$MNT/t" | grep -q "^ro,.*noexec" && pass ||
	fail "zfs mount -o ro,noexec: not in the kernel's flags"
# zfs get shows the mount's own values as temporary, the rest as before
tarn_ok fs get -H -o property,value,source readonly,exec,setuid tank/t
out_is "$(printf 'readonly\ton\ttemporary\nexec\toff\ttemporary\nsetuid\ton\tdefault')"
tarn_ok fs get -H -s temporary -o property all tank/t
out_is "$(printf 'exec\nreadonly')"
tarn_ok fs unmount tank/t
tarn_ok fs get -H -o value,source readonly tank/t
out_is "$(printf 'off\tdefault')"
tarn_ok fs mount tank/t
ok sh -c "echo x >'$MNT/t/f'"
tarn_err 2 "invalid mount option 'bogus'" fs mount -o bogus tank/t

# --- legacy mountpoints: mount(8) mounts them through mount.tarn (here a
# link of our own to the binary, called as mount(8) calls a helper)
ln -s "$TARN" "$E2E_TMP/mount.tarn"
HELPER="$E2E_TMP/mount.tarn"
tarn_ok fs create -o mountpoint=legacy tank/leg
tarn_ok fs get -H -o value mounted tank/leg
out_is "no"
tarn_err 1 "^cannot mount 'tank/leg': legacy mountpoint; use mount\(8\)" fs mount tank/leg
mkdir -p "$E2E_TMP/leg"
run "$HELPER" tank/leg "$E2E_TMP/leg" -o rw,noexec,defaults,_netdev
[ "$RC" -eq 0 ] && mounted "$E2E_TMP/leg" && pass ||
	{ fail "mount.tarn did not mount tank/leg (exit $RC)"; show_output; }
findmnt -n -o OPTIONS --mountpoint "$E2E_TMP/leg" | grep -q noexec && pass ||
	fail "mount.tarn -o noexec: not in the kernel's flags"
tarn_ok fs get -H -o value mounted tank/leg
out_is "yes"
ok sh -c "echo legacy >'$E2E_TMP/leg/f'"
# a dataset with a mountpoint of its own is zfs mount's, not mount(8)'s
mkdir -p "$E2E_TMP/other"
run "$HELPER" tank/t "$E2E_TMP/other"
[ "$RC" -eq 32 ] && grep -q "not a legacy mountpoint" "$ERR" && pass ||
	{ fail "mount.tarn of a non-legacy dataset: exit $RC"; show_output; }
run "$HELPER" tank/t "$E2E_TMP/nodir"
[ "$RC" -eq 32 ] && grep -qi "mount point '$E2E_TMP/nodir': no such file or directory" "$ERR" &&
	pass || { fail "mount.tarn at a missing directory: exit $RC"; show_output; }
run "$HELPER" tank/leg
[ "$RC" -eq 1 ] && grep -q "^usage: mount.tarn" "$ERR" && pass ||
	fail "mount.tarn without a directory: exit $RC"
# umount(8) unmounts it; mounted again read-only, the file is there
ok umount "$E2E_TMP/leg"
tarn_ok fs get -H -o value mounted tank/leg
out_is "no"
run "$HELPER" tank/leg "$E2E_TMP/leg" -o ro
[ "$RC" -eq 0 ] && [ "$(cat "$E2E_TMP/leg/f")" = legacy ] && pass ||
	fail "tank/leg mounted again read-only without its file (exit $RC)"
run sh -c "echo x >'$E2E_TMP/leg/g'"
grep -q "Read-only file system" "$ERR" && pass || fail "mount.tarn -o ro: no EROFS"
# a property change that takes a remount keeps it at its directory, with its options
tarn_ok fs set quota=1G tank/leg
mounted "$E2E_TMP/leg" && findmnt -n -o OPTIONS --mountpoint "$E2E_TMP/leg" | grep -q "^ro" &&
	pass || fail "tank/leg not back at its directory, read-only, after set quota"
# rename brings back what it took down: the legacy mount at its directory
tarn_ok fs rename tank/leg tank/leg2
mounted "$E2E_TMP/leg" && [ "$(cat "$E2E_TMP/leg/f")" = legacy ] && pass ||
	fail "tank/leg2 not mounted again at its directory after the rename"
tarn_ok fs get -H -o value mounted tank/leg2
out_is "yes"
tarn_ok fs unmount tank/leg2
mounted "$E2E_TMP/leg" && fail "zfs unmount left the legacy mount" || pass
tarn_ok fs destroy tank/leg2
# ... and a child unmounted before the rename stays unmounted
tarn_ok fs create tank/rn
tarn_ok fs create tank/rn/c
tarn_ok fs unmount tank/rn/c
tarn_ok fs rename tank/rn tank/rn2
mounted "$MNT/rn2" && pass || fail "tank/rn2 not mounted after the rename"
mounted "$MNT/rn2/c" && fail "the rename mounted tank/rn2/c, unmounted before" || pass
# busy: refused, or with -f the mount is forced off and comes back renamed
bash -c 'cd "$1" && exec sleep 30' busy "$MNT/rn2" &
busy=$!
sleep 0.5
tarn_err 1 "^cannot rename 'tank/rn2': '$MNT/rn2' is busy" fs rename tank/rn2 tank/rn3
mounted "$MNT/rn2" && pass || fail "a refused rename lost the mount"
tarn_ok fs rename -f tank/rn2 tank/rn3
mounted "$MNT/rn3" && pass || fail "rename -f: tank/rn3 not mounted"
kill "$busy" 2>/dev/null
wait "$busy" 2>/dev/null
tarn_ok fs destroy -r -f tank/rn3
tarn_ok fs destroy -f tank/t

# --- export unmounts, import mounts again with the data
tarn_ok pool export tank
mounted "$MNT" && fail "still mounted after export" || pass
tarn_ok pool import -d "$DEVDIR" tank
mounted "$MNT" && pass || fail "not mounted after import"
mounted "$MNT/p/q" && mounted "$MNT/m/n/r" && pass ||
	fail "datasets of create -p / rename -p not mounted after import"
got=$(cd "$MNT" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
[ "$got" = "$sums" ] && pass || fail "files differ after export/import"

# --- SIGTERM: unmounted; the next command's daemon mounts again
stop_daemon TERM
mounted "$MNT" && fail "still mounted after SIGTERM" || pass
tarn_ok pool list -H -o name
mounted "$MNT" && pass || fail "not mounted again after a restart"

# --- SIGKILL in the middle of writes: fsync'd files survive
python3 - "$MNT/crash" 2>/dev/null <<'EOF' &
import os, sys
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
i = 0
while True:
    with open(os.path.join(d, "f%05d" % i), "wb") as f:
        f.write(os.urandom(65536))
        f.flush()
        os.fsync(f.fileno())
    with open(os.path.join(d, "..", "crash.log"), "a") as log:
        log.write("f%05d\n" % i)
        log.flush()
        os.fsync(log.fileno())
    i += 1
EOF
writer=$!
sleep 3
cp "$MNT/crash.log" "$E2E_TMP/crash.log" 2>/dev/null
stop_daemon KILL
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null
n=$(wc -l <"$E2E_TMP/crash.log")
[ "$n" -gt 0 ] && pass || fail "the writer wrote nothing before the kill"
tarn_ok pool list -H -o name,health
out_is "tank	ONLINE"
mounted "$MNT" && pass || fail "not mounted again after SIGKILL"
missing=0
while read -r f; do
	[ "$(stat -c %s "$MNT/crash/$f" 2>/dev/null)" = 65536 ] || missing=$((missing + 1))
done <"$E2E_TMP/crash.log"
[ "$missing" -eq 0 ] && pass || fail "$missing of $n fsync'd files missing or short after SIGKILL"
got=$(cd "$MNT" && find . -path ./crash -prune -o -name crash.log -prune -o -type f -print0 |
	sort -z | xargs -0 sha256sum)
[ "$got" = "$sums" ] && pass || fail "files differ after SIGKILL"
tarn_ok pool scrub -w tank
tarn_ok pool status tank
out_has "with 0 errors"

# --- destroy of the pool unmounts it
tarn_ok pool destroy tank
mounted "$MNT" && fail "still mounted after pool destroy" || pass

e2e_done
