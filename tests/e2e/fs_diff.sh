#!/bin/bash
# zfs diff through the daemon's mount and the `zfs` link: between two
# snapshots and between a snapshot and the live file system, every kind
# of change as zfs prints it — modified file and directory (M), created
# file, directory, symlink and fifo (+), deleted file and a deleted
# directory of 100 files (-), rename in one directory and across two (R),
# chmod (M), a new hard link (M with "(+1)"), a name with a space
# (escaped \0040) — with -F (types), -H (rename's tab) and -t (ctime as
# stat shows it); reads alone (atime) change nothing; bad names, missing
# datasets and snapshots in the wrong order are one-line errors (exit 1),
# usage errors exit 2.  A clone against its origin snapshot, once the
# `clone` verb exists.
#
# Cleanup even on failure: lib.sh's EXIT trap destroys the pool (which
# unmounts), stops this test's daemon by its PID and removes the temp dir
# (the `zfs` symlink in it too).
. "$(dirname "$0")/lib.sh"
describe "zfs diff: + - M R lines, -F -H -t, snapshot to snapshot and to the live fs, errors"
require_daemon_mounts

ZFS="$E2E_TMP/zfs"
ln -s "$TARN" "$ZFS"
zfs() {
	run "$ZFS" "$@"
}
zfs_ok() {
	ok "$ZFS" "$@"
}

# sorted_is TEXT: the last stdout, sorted, is exactly TEXT sorted (zfs
# prints in object order, which the test does not fix)
sorted_is() {
	if [ "$(sort "$OUT")" = "$(printf '%s\n' "$1" | sort)" ]; then pass; else
		fail "diff output is not as expected"
		diff <(printf '%s\n' "$1" | sort) <(sort "$OUT") | sed 's/^/  /' >&2
	fi
}

mkdevs 1 256M
tarn_ok pool create -m "$MNT" tank "${DEV[0]}"
mountpoint -q "$MNT" && pass || fail "tank not mounted at $MNT"
M=$MNT

# --- the first state
ok mkdir "$M/d1" "$M/big"
ok sh -c "echo one > '$M/a'; echo b > '$M/d1/b'; echo r > '$M/ren'; echo m > '$M/d1/mv';
	echo c > '$M/chm'; echo h > '$M/hl'; echo d > '$M/del'; echo s > '$M/same'"
ok sh -c "for i in \$(seq 1 100); do echo \$i > '$M/big/f'\$i; done"
ok sync
zfs_ok snapshot tank@s1

# --- the changes
ok sh -c "echo two >> '$M/a'"
ok touch "$M/d1/new"
ok mkdir "$M/newdir"
ok ln -s /x "$M/newdir/sym"
ok mkfifo "$M/ff"
ok mv "$M/ren" "$M/ren2"
ok mv "$M/d1/mv" "$M/mv"
ok chmod 600 "$M/chm"
ok ln "$M/hl" "$M/d1/hl2"
ok rm "$M/del"
ok rm -r "$M/big"
ok touch "$M/sp ace"
ok cat "$M/same"
ok sync
zfs_ok snapshot tank@s2

T=$'\t'
expect="M${T}$M/
M${T}$M/d1
M${T}$M/a
+${T}$M/d1/new
+${T}$M/newdir
+${T}$M/newdir/sym
+${T}$M/ff
R${T}$M/ren -> $M/ren2
R${T}$M/d1/mv -> $M/mv
M${T}$M/chm
M${T}$M/hl${T}(+1)
-${T}$M/del
-${T}$M/big
+${T}$M/sp\\0040ace"
for i in $(seq 1 100); do
	expect+=$'\n'"-${T}$M/big/f$i"
done
zfs_ok diff tank@s1 tank@s2
sorted_is "$expect"
[ "$(wc -l < "$OUT")" -eq 114 ] && pass || fail "diff has $(wc -l < "$OUT") lines, not 114"
# the same through tarn fs, and with the file system named once
tarn_ok fs diff tank@s1 @s2
sorted_is "$expect"
tarn_ok fs diff @s1 tank@s2
sorted_is "$expect"

# -F: the type after the change
zfs_ok diff -F tank@s1 tank@s2
out_has "^M${T}/${T}$M/\$"
out_has "^M${T}F${T}$M/a\$"
out_has "^\\+${T}/${T}$M/newdir\$"
out_has "^\\+${T}@${T}$M/newdir/sym\$"
out_has "^\\+${T}\\|${T}$M/ff\$"
out_has "^R${T}F${T}$M/ren -> $M/ren2\$"
out_has "^M${T}F${T}$M/hl${T}\\(\\+1\\)\$"
out_has "^-${T}/${T}$M/big\$"
out_has "^-${T}F${T}$M/big/f7\$"
# -H: a rename's paths separated by a tab
zfs_ok diff -H tank@s1 tank@s2
out_has "^R${T}$M/ren${T}$M/ren2\$"
out_lacks " -> "
# -t: the inode's change time first, as stat shows it
zfs_ok diff -t tank@s1 tank@s2
line=$(grep -E "${T}M${T}$M/chm\$" "$OUT")
want=$(stat -c %Z "$M/chm")
[[ "$line" =~ ^\ *([0-9]+)\.([0-9]{9})$T ]] && [ "${BASH_REMATCH[1]}" = "$want" ] && pass ||
	{ fail "-t: '$line' does not start with the ctime $want"; show_output; }
[ "$(grep -cvE "^ *[0-9]+\.[0-9]{9}${T}[-+MR]${T}" "$OUT")" -eq 0 ] && pass ||
	{ fail "-t: a line without a time"; show_output; }
zfs_ok diff -FHt tank@s1 tank@s2
out_has "^ *[0-9]+\.[0-9]{9}${T}R${T}F${T}$M/ren${T}$M/ren2\$"

# --- the live file system: a snapshot against now
zfs_ok diff tank@s2
out_is ""
ok cat "$M/a" "$M/d1/b"
ok ls -l "$M" "$M/d1"
zfs_ok diff tank@s2 tank
out_is ""
ok rm "$M/a"
ok sh -c "echo three >> '$M/d1/b'"
ok sync
zfs_ok diff tank@s2
sorted_is "M${T}$M/
-${T}$M/a
M${T}$M/d1/b"
zfs_ok diff tank@s2 tank
sorted_is "M${T}$M/
-${T}$M/a
M${T}$M/d1/b"
zfs_ok diff @s2 tank
sorted_is "M${T}$M/
-${T}$M/a
M${T}$M/d1/b"
# many changes: the lines come in several parts, in object (inode) order
ok mkdir "$M/many"
ok sh -c "cd '$M/many' && for i in \$(seq 1 1200); do : > f\$i; done; sync"
zfs_ok diff tank@s2
[ "$(wc -l < "$OUT")" -eq 1204 ] && pass || fail "many: $(wc -l < "$OUT") lines, not 1204"
[ "$(grep -c "^+${T}$M/many/f" "$OUT")" -eq 1200 ] && pass || fail "many: not 1200 files"
grep -v "^-" "$OUT" | cut -f2 | sed 's/ -> .*//' | xargs -d '\n' stat -c %i > "$E2E_TMP/inos"
sort -n -c "$E2E_TMP/inos" && pass || fail "lines not in inode order"
ok rm -r "$M/many"
# the first snapshot against now: a's two changes are one removal
zfs_ok diff tank@s1
out_has "^-${T}$M/a\$"
out_lacks "^M${T}$M/a\$"

# --- errors
zfs
[ "$RC" -eq 2 ] && grep -q "usage:" "$ERR" && pass || { fail "zfs alone"; show_output; }
tarn_err 2 "^must provide at least one snapshot name$" fs diff
tarn_err 2 "^too many arguments$" fs diff tank@s1 tank@s2 tank
tarn_err 2 "^invalid option 'x'$" fs diff -x tank@s1
tarn_err 2 "^must provide a file system with" fs diff @s1
tarn_err 1 "^cannot diff 'tank@nope': snapshot does not exist$" fs diff tank@nope
tarn_err 1 "^cannot diff 'tank@nope': snapshot does not exist$" fs diff tank@s1 tank@nope
tarn_err 1 "^cannot open 'tank/nope': dataset does not exist$" fs diff tank/nope@s1
tarn_err 1 "^cannot open 'nopool': dataset does not exist$" fs diff nopool@s1
tarn_err 1 "^cannot diff 'tank@s2': not an earlier snapshot from the same fs$" \
	fs diff tank@s2 tank@s1
tarn_err 1 "^cannot diff 'tank@s1': not an earlier snapshot from the same fs$" \
	fs diff tank@s1 tank@s1
tarn_ok fs create tank/other
tarn_ok fs snapshot tank/other@x
tarn_err 1 "^cannot diff 'tank@s1': not an earlier snapshot from the same fs$" \
	fs diff tank@s1 tank/other@x
tarn_err 1 "^cannot diff 'tank': badly formed snapshot name$" fs diff tank
tarn_err 1 "^cannot diff 'tank@s1': unable to determine which snapshots to compare$" \
	fs diff tank@s1 @
long=$(printf 'a%.0s' $(seq 1 300))
tarn_err 1 "^cannot diff 'a+@s1': name is too long$" fs diff "$long@s1"
# a file system without a mountpoint that is not mounted has no paths
tarn_ok fs create -o mountpoint=none tank/nomnt
tarn_ok fs snapshot tank/nomnt@a
tarn_err 1 "^cannot diff 'tank/nomnt': file system is not mounted$" fs diff tank/nomnt@a
# nothing was changed by any of it
tarn_ok fs list -H -o name -t snapshot -r tank
out_is "tank@s1
tank@s2
tank/nomnt@a
tank/other@x"

# --- a clone against its origin (once `zfs clone` exists)
if "$TARN" fs help 2>&1 | grep -q "clone"; then
	tarn_ok fs clone tank@s1 tank/cl
	ok sh -c "echo x > '$M/cl/cnew'; rm '$M/cl/del'; sync"
	tarn_ok fs diff tank@s1 tank/cl
	sorted_is "M${T}$M/cl/
+${T}$M/cl/cnew
-${T}$M/cl/del"
	tarn_ok fs snapshot tank/cl@c1
	tarn_ok fs diff tank@s1 tank/cl@c1
	sorted_is "M${T}$M/cl/
+${T}$M/cl/cnew
-${T}$M/cl/del"
	tarn_err 1 "^cannot diff 'tank@s2': not an earlier snapshot from the same fs$" \
		fs diff tank@s2 tank/cl@c1
	tarn_err 1 "^cannot diff 'tank/cl@nope': snapshot does not exist$" \
		fs diff tank@s1 tank/cl@nope
fi

e2e_done
