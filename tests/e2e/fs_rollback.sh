#!/bin/bash
# zfs rollback of a mounted file system: the mount stays (same device),
# and at once `cat` shows the snapshot's contents, `ls` its listing and
# stat its sizes; a descriptor open before on a file that did not exist
# at the snapshot reads "Stale file handle" (ESTALE), never old data, and
# so does one on a file that did (Tarn is stricter than zfs there); what
# an old descriptor writes never lands in the rolled-back state; a shell
# whose working directory is the mountpoint goes on there.  Younger
# snapshots (and bookmarks) refuse the rollback without -r with zfs's
# lines, nothing changed; -r destroys them; clones of them need -R, which
# destroys the clone (mounted: unmounted first).  An unmounted file system
# simply rolls back; -f is accepted; bad names fail as zfs words it.
# Mounts nested in a rolled-back file system (a clone inside its origin's
# mount) stay mounted; a busy one refuses the rollback; pool destroy -f
# after it unmounts everything.  Afterwards a scrub is clean.
#
# Cleanup (lib.sh): the pool is destroyed with -f (unmounts), the daemon
# stopped by its PID, FUSE mounts left under the temp dir detached.
. "$(dirname "$0")/lib.sh"
describe "zfs rollback while mounted: old contents at once, ESTALE for old files, -r/-R/-f"
require_daemon_mounts

# stderr_is TEXT: the last command's stderr, exactly
stderr_is() {
	if [ "$(cat "$ERR")" = "$1" ]; then pass; else
		fail "stderr is not exactly: $1"
		show_output
	fi
}

mkdevs 1 256M
tarn_ok pool create -m "$MNT" tank "${DEV[0]}"
tarn_ok fs create tank/a
M=$MNT/a
mountpoint -q "$M" && pass || fail "tank/a not mounted"

# --- the state of the snapshot (written back and synced first)
printf 'old\n' >"$M/f"
mkdir "$M/d"
printf '12345' >"$M/d/g"
sync -f "$M"
tarn_ok fs snapshot tank/a@s1
dev0=$(stat -c %d "$M")

# --- changes after it, and programs holding files of the new state
printf 'new contents, much longer\n' >"$M/f"
printf 'born after the snapshot\n' >"$M/born"
rm "$M/d/g"
printf 'x' >"$M/d/h"
mkdir "$M/e"
ls -A "$M" >/dev/null
stat "$M/f" "$M/born" "$M/d/h" >/dev/null          # the kernel caches their attributes
exec 3<"$M/born"
exec 4<"$M/f"
exec 5>>"$M/f"
cat "$M/born" "$M/f" >/dev/null                     # ... and their pages

# a shell in the mountpoint runs the rollback and lists what it sees then
run bash -c "cd '$M' && '$TARN' fs rollback tank/a@s1 && ls -A && cat f"
[ "$RC" -eq 0 ] && [ "$(cat "$OUT")" = "$(printf 'd\nf\nold')" ] && pass ||
	{ fail "rollback from inside the mount, then ls and cat there"; show_output; }

# --- the old state, at once, on the same mount
[ "$(stat -c %d "$M")" = "$dev0" ] && pass || fail "the mount was replaced (device changed)"
[ "$(cat "$M/f")" = "old" ] && pass || fail "cat shows '$(cat "$M/f")', not the snapshot's 'old'"
[ "$(ls -A "$M" | tr '\n' ' ')" = "d f " ] && pass || fail "ls shows: $(ls -A "$M" | tr '\n' ' ')"
[ "$(ls -A "$M/d" | tr '\n' ' ')" = "g " ] && pass || fail "ls d shows: $(ls -A "$M/d" | tr '\n' ' ')"
[ "$(stat -c %s "$M/f")" = 4 ] && pass || fail "size of f is $(stat -c %s "$M/f"), not 4"
[ "$(stat -c %s "$M/d/g")" = 5 ] && pass || fail "size of d/g is $(stat -c %s "$M/d/g") not 5"
[ ! -e "$M/born" ] && [ ! -e "$M/e" ] && [ ! -e "$M/d/h" ] && pass ||
	fail "names made after the snapshot are still there"
[ "$(cat "$M/d/g")" = 12345 ] && pass || fail "d/g: '$(cat "$M/d/g")'"

# --- descriptors of before: ESTALE, not old data
run cat /dev/fd/3
[ "$RC" -ne 0 ] && grep -q "Stale file handle" "$ERR" && ! grep -q born "$OUT" && pass ||
	{ fail "read of a file born after the snapshot, open across the rollback"; show_output; }
run bash -c 'cat <&4'
[ "$RC" -ne 0 ] && grep -q "Stale file handle" "$ERR" && [ ! -s "$OUT" ] && pass ||
	{ fail "read of f through a descriptor open across the rollback"; show_output; }
echo "written through an old descriptor" >&5 2>/dev/null
exec 3<&- 4<&- 5>&-
sync -f "$M" 2>/dev/null
[ "$(cat "$M/f")" = "old" ] && pass || fail "an old descriptor's write landed: '$(cat "$M/f")'"

# --- the file system goes on normally
printf 'after\n' >>"$M/f"
mkdir "$M/later"
sync -f "$M"
[ "$(cat "$M/f")" = "$(printf 'old\nafter')" ] && [ -d "$M/later" ] && pass ||
	fail "writes after the rollback"

# --- younger snapshots and bookmarks: refused without -r, nothing changed
tarn_ok fs snapshot tank/a@s2
printf 'third\n' >"$M/f"
sync -f "$M"
tarn_ok fs snapshot tank/a@s3
tarn_ok fs bookmark tank/a@s3 tank/a#b3
printf 'fourth\n' >"$M/f"
sync -f "$M"
tarn fs rollback tank/a@s1
[ "$RC" -eq 1 ] && pass || { fail "rollback past younger snapshots: rc $RC"; show_output; }
stderr_is "cannot rollback to 'tank/a@s1': more recent snapshots or bookmarks exist
use '-r' to force deletion of the following snapshots and bookmarks:
tank/a@s2
tank/a@s3
tank/a#b3"
[ "$(cat "$M/f")" = fourth ] && pass || fail "a refused rollback changed the files"
tarn_ok fs list -H -o name -t snapshot,bookmark -r tank/a
out_is "tank/a@s1
tank/a@s2
tank/a@s3
tank/a#b3"

# --- a clone of a younger snapshot: -r is not enough, -R destroys it too
tarn_ok fs clone tank/a@s2 tank/c
mountpoint -q "$MNT/c" && pass || fail "clone tank/c not mounted"
tarn fs rollback -r tank/a@s1
[ "$RC" -eq 1 ] && pass || { fail "rollback -r past a clone: rc $RC"; show_output; }
stderr_is "cannot rollback to 'tank/a@s1': clones of previous snapshots exist
use '-R' to force deletion of the following clones and dependents:
tank/c"
tarn_ok fs list -H -o name -t snapshot -r tank/a
out_is "tank/a@s1
tank/a@s2
tank/a@s3"
# busy clone: -R alone refuses, -R -f unmounts it
exec 6<"$MNT/c/f"
tarn fs rollback -R tank/a@s1
[ "$RC" -eq 1 ] && grep -q "busy" "$ERR" && pass ||
	{ fail "rollback -R with the clone busy, without -f"; show_output; }
[ "$(cat "$M/f")" = fourth ] && pass || fail "a refused rollback -R changed the files"
tarn_ok fs rollback -R -f tank/a@s1
exec 6<&-
tarn_ok fs list -H -o name -t all -r tank
out_is "tank
tank/a
tank/a@s1"
mountpoint -q "$MNT/c" && fail "the destroyed clone is still mounted" || pass
[ "$(cat "$M/f")" = old ] && pass || fail "after rollback -R: '$(cat "$M/f")'"

# --- -r with younger snapshots only
printf 'two\n' >"$M/f"
sync -f "$M"
tarn_ok fs snapshot tank/a@s2
printf 'three\n' >"$M/f"
tarn_ok fs rollback -r tank/a@s1
[ "$(cat "$M/f")" = old ] && pass || fail "after rollback -r: '$(cat "$M/f")'"
tarn_ok fs list -H -o name -t snapshot tank/a
out_is "tank/a@s1"

# --- the newest snapshot: rollback again (and -f is accepted)
printf 'scratch\n' >"$M/f"
tarn_ok fs rollback -f tank/a@s1
[ "$(cat "$M/f")" = old ] && pass || fail "rollback -f: '$(cat "$M/f")'"

# --- an unmounted file system simply rolls back
printf 'unmounted\n' >"$M/f"
sync -f "$M"
tarn_ok fs unmount tank/a
tarn_ok fs rollback tank/a@s1
mountpoint -q "$M" && fail "rollback mounted an unmounted file system" || pass
tarn_ok fs mount tank/a
[ "$(cat "$M/f")" = old ] && pass || fail "rollback while unmounted: '$(cat "$M/f")'"

# --- bad input: one zfs line, nothing changed
tarn_err 1 "^cannot open 'tank/a@nope': dataset does not exist$" fs rollback tank/a@nope
tarn_err 1 "^cannot open 'tank/nope@s1': dataset does not exist$" fs rollback tank/nope@s1
tarn_err 1 "^cannot open 'tank/a': missing '@' delimiter in snapshot name$" fs rollback tank/a
tarn_err 2 "^missing dataset argument$" fs rollback
tarn_err 2 "^too many arguments$" fs rollback tank/a@s1 tank/a@s1
tarn_err 2 "^invalid option 'x'$" fs rollback -x tank/a@s1
[ "$(cat "$M/f")" = old ] && pass || fail "bad input changed the files"

# --- mounts nested in a rolled-back file system stay mounted: a clone
# mounted inside its origin's mount (and tank/a), through rollbacks of
# the clone and of the origin (whose snapshot has no directory cl)
printf 'root\n' >"$MNT/rootfile"
sync -f "$MNT"
tarn_ok fs snapshot tank@r
tarn_ok fs clone tank@r tank/cl
CL=$MNT/cl
mountpoint -q "$CL" && pass || fail "the clone is not mounted"
printf 'in the clone\n' >"$CL/g"
sync -f "$CL"
tarn_ok fs snapshot tank/cl@c
printf 'later\n' >"$CL/h"
[ "$(cat "$CL/.zfs/snapshot/c/g")" = "in the clone" ] && pass || fail "clone's .zfs/snapshot/c/g"
tarn_ok fs rollback tank/cl@c
[ ! -e "$CL/h" ] && [ "$(cat "$CL/g")" = "in the clone" ] && pass ||
	fail "rollback of the mounted clone"
printf 'after\n' >"$MNT/rootfile"
tarn_ok fs rollback tank@r
[ "$(cat "$MNT/rootfile")" = root ] && pass || fail "rollback of the origin: '$(cat "$MNT/rootfile")'"
mountpoint -q "$CL" && pass || fail "the clone's mount went with the origin's rollback"
mountpoint -q "$M" && pass || fail "tank/a's mount went with tank's rollback"
[ "$(cat "$CL/g" 2>&1)" = "in the clone" ] && [ "$(cat "$M/f" 2>&1)" = old ] && pass ||
	fail "nested mounts after the origin's rollback: '$(cat "$CL/g" 2>&1)' '$(cat "$M/f" 2>&1)'"
[ "$(cat "$CL/.zfs/snapshot/c/g" 2>&1)" = "in the clone" ] && pass ||
	fail "the clone's .zfs after the origin's rollback"
# a busy nested mount refuses the rollback (nothing changed); -f unmounts it
printf 'after\n' >"$MNT/rootfile"
sync -f "$MNT"
exec 6<"$CL/g"
tarn_err 1 "^cannot rollback 'tank': '$CL' is busy \(files are open there\); use -f$" \
	fs rollback tank@r
[ "$(cat "$MNT/rootfile")" = after ] && pass || fail "a refused rollback changed the files"
mountpoint -q "$CL" && pass || fail "a refused rollback took the clone's mount"
exec 6<&-

# --- history and a clean scrub
tarn_ok pool history tank
out_has "zfs rollback -R -f tank/a@s1"
tarn_ok pool scrub -w tank
tarn_ok pool status -x tank
out_is "pool 'tank' is healthy"

# --- the origin rolled back again, nothing touched since: pool destroy -f
# unmounts every mount (the clone's was lost behind its back before)
printf 'after\n' >"$MNT/rootfile"
tarn_ok fs rollback tank@r
tarn_ok pool destroy -f tank
mountpoint -q "$CL" && fail "the clone is still mounted after pool destroy -f" || pass
mountpoint -q "$MNT" && fail "the pool is still mounted after pool destroy -f" || pass

e2e_done
