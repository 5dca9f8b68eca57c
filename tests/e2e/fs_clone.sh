#!/bin/bash
# zfs clone and promote: a clone holds its snapshot's files and is
# mounted at once (as zfs create mounts); writing in the clone leaves the
# origin unchanged and the other way round; `zfs get origin,clones`;
# destroying the origin snapshot is refused without -R with zfs's lines;
# clone -o sets properties (compression=lz4 compresses), -p makes the
# parents (mounted too); promote swaps the dependency (the origin
# becomes the clone of the promoted file system's snapshot) and the files
# stay; errors as zfs words them, nothing changed.  Afterwards a scrub is
# clean.
#
# Cleanup (lib.sh): the pool is destroyed with -f (unmounts), the daemon
# stopped by its PID, FUSE mounts left under the temp dir detached.
. "$(dirname "$0")/lib.sh"
describe "zfs clone and promote: contents, origin/clones, destroy -R, -o, -p, errors"
require_daemon_mounts

mounted() {
	mountpoint -q "$1" 2>/dev/null
}

# get PROP DATASET: the value zfs get -H prints
get() {
	"$TARN" fs get -H -o value "$1" "$2" 2>/dev/null
}

mkdevs 1 256M
tarn_ok pool create -m "$MNT" tank "${DEV[0]}"
tarn_ok fs create tank/a
printf 'hello\n' >"$MNT/a/f"
mkdir "$MNT/a/d"
printf 'deep\n' >"$MNT/a/d/g"
sync -f "$MNT/a"
tarn_ok fs snapshot tank/a@s

# --- the clone: the snapshot's files, mounted at once
tarn_ok fs clone tank/a@s tank/c
mounted "$MNT/c" && pass || fail "clone not mounted at $MNT/c"
[ "$(cat "$MNT/c/f" 2>&1)" = hello ] && [ "$(cat "$MNT/c/d/g" 2>&1)" = deep ] && pass ||
	fail "clone does not hold the snapshot's files"
tarn_ok fs get -H -o value mounted,mountpoint tank/c
out_is "yes
$MNT/c"

# --- each side's writes stay on its side
printf 'changed in the clone\n' >"$MNT/c/f"
printf 'new\n' >"$MNT/c/n"
rm "$MNT/c/d/g"
printf 'changed in the origin\n' >"$MNT/a/d/g"
sync -f "$MNT/c"
sync -f "$MNT/a"
[ "$(cat "$MNT/a/f")" = hello ] && [ ! -e "$MNT/a/n" ] && pass ||
	fail "writes in the clone changed the origin"
[ "$(cat "$MNT/c/f")" = "changed in the clone" ] && [ ! -e "$MNT/c/d/g" ] && pass ||
	fail "the clone lost its writes or saw the origin's"

# --- origin and clones
tarn_ok fs get -H -o name,property,value,source origin,clones tank/c tank/a@s tank/a
out_is "$(printf 'tank/c\torigin\ttank/a@s\t-
tank/c\tclones\t-\t-
tank/a@s\torigin\t-\t-
tank/a@s\tclones\ttank/c\t-
tank/a\torigin\t-\t-
tank/a\tclones\t-\t-')"

# --- the origin snapshot cannot go while the clone needs it
tarn fs destroy tank/a@s
[ "$RC" -eq 1 ] && [ "$(cat "$ERR")" = "cannot destroy 'tank/a@s': snapshot has dependent clones
use '-R' to destroy the following datasets:
tank/c" ] && pass || { fail "destroy of the origin snapshot"; show_output; }
tarn_ok fs list -H -o name -t all -r tank
out_is "tank
tank/a
tank/a@s
tank/c"

# --- clone -o: the property is the clone's own, and works
tarn_ok fs clone -o compression=lz4 tank/a@s tank/z
tarn_ok fs get -H -o value,source compression tank/z
out_is "$(printf 'lz4\tlocal')"
ok sh -c "cat '$E2E_SRC'/lib/*/*.c '$E2E_SRC'/lib/*/*.c > '$MNT/z/text' && sync -f '$MNT/z'"
tarn_ok pool sync tank
tarn_ok fs get -H -p -o value refcompressratio tank/z
[ "$(cut -d. -f1 "$OUT")" -ge 2 ] && pass || { fail "clone -o compression=lz4 does not compress"; show_output; }
tarn_ok fs destroy tank/z

# --- clone -p: the parents are made, and mounted
tarn_ok fs clone -p tank/a@s tank/x/y/w
mounted "$MNT/x" && mounted "$MNT/x/y" && mounted "$MNT/x/y/w" && pass ||
	fail "clone -p did not mount the parents and the clone"
[ "$(cat "$MNT/x/y/w/f" 2>&1)" = hello ] && pass || fail "clone -p: files"
tarn_ok fs destroy -r tank/x

# --- bad input: one zfs line, nothing changed
tarn_err 1 "^cannot create 'tank/q/r': parent does not exist$" fs clone tank/a@s tank/q/r
tarn_err 1 "^cannot open 'tank/a@nope': dataset does not exist$" fs clone tank/a@nope tank/n
tarn_err 1 "^cannot open 'tank/a': missing '@' delimiter in snapshot name$" \
	fs clone tank/a tank/n
tarn_err 1 "^cannot create 'tank/c': dataset already exists$" fs clone tank/a@s tank/c
tarn_err 1 "^cannot create 'other/n': source and target pools differ$" \
	fs clone tank/a@s other/n
tarn_err 1 "^cannot promote 'tank/a': not a cloned filesystem$" fs promote tank/a
tarn_err 1 "^cannot open 'tank/nope': dataset does not exist$" fs promote tank/nope
tarn_err 1 "^cannot open 'tank/c@s': snapshot delimiter '@' is not expected here$" \
	fs promote tank/c@s
tarn_err 2 "^missing target dataset argument$" fs clone tank/a@s
tarn_err 2 "^missing source dataset argument$" fs clone
tarn_err 2 "^missing clone filesystem argument$" fs promote
tarn_err 2 "^invalid option 'x'$" fs clone -x tank/a@s tank/n
tarn_ok fs list -H -o name -t all -r tank
out_is "tank
tank/a
tank/a@s
tank/c"

# --- promote: the snapshot moves to the clone, the origin becomes its clone
tarn_ok fs promote tank/c
tarn_ok fs get -H -o name,value origin tank/a tank/c
out_is "$(printf 'tank/a\ttank/c@s\ntank/c\t-')"
tarn_ok fs get -H -o value clones tank/c@s
out_is "tank/a"
tarn_ok fs list -H -o name -t snapshot -r tank
out_is "tank/c@s"
[ "$(cat "$MNT/a/f")" = hello ] && [ "$(cat "$MNT/a/d/g")" = "changed in the origin" ] &&
	[ "$(cat "$MNT/c/f")" = "changed in the clone" ] && pass ||
	fail "promote changed the files"
# now the former origin is the clone: destroying it frees the snapshot
tarn_ok fs destroy tank/a
tarn_ok fs destroy tank/c@s
tarn_ok fs list -H -o name -t all -r tank
out_is "tank
tank/c"

# --- history and a clean scrub
tarn_ok pool history tank
out_has "zfs clone tank/a@s tank/c"
out_has "zfs promote tank/c"
tarn_ok pool scrub -w tank
tarn_ok pool status -x tank
out_is "pool 'tank' is healthy"

e2e_done
