#!/bin/bash
# fs_crash.sh — what fsync acknowledged survives a crash of the server:
# writers create, fsync, rename (fsyncing the directory) and log each
# acknowledged step outside the mount; tarn-mount is killed with SIGKILL
# in the middle, three times; after each remount every logged file must
# be there, byte-exact, under its last name.  A file unlinked while open
# at the crash is reclaimed at the next mount (its space comes back), and
# so is an O_TMPFILE never named, while one named and fsync'd is there.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fs_lib.bash"

describe "fsync'd data survives SIGKILL of the FUSE server"
require_fuse
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
LOG="$E2E_TMP/synced.log"
: >"$LOG"

trap 'rc=$?; fs_stop_bg; (exit $rc); fs_cleanup' EXIT

mkdevs 3 1G      # the writers fill ~0.5 GB in three rounds now that fsync is cheap
fs_start -c -- raidz1 "${DEV[@]}" || e2e_done
for round in 1 2 3; do
	for w in 1 2; do
		$PY "$FS_OPS" fsync-writer "$MNT" "$LOG.$w" "r$round-w$w" >>"$E2E_TMP/writers.out" 2>&1 &
		BG+=($!)
	done
	sleep 3
	fs_crash
	fs_stop_bg
	check "round $round: writers acknowledged something" test -s "$LOG.1" -a -s "$LOG.2"
	fs_start -- "${DEV[@]}" || e2e_done
	for w in 1 2; do
		check "round $round: writer $w's synced files after the crash" \
			$PY "$FS_OPS" verify-log "$MNT" "$LOG.$w"
	done
done

# an unlinked open file at the crash is reclaimed by the next mount
# (measured by what the file system says it uses: df's Used)
nudge() {
	$PY -c "import sys; sys.path.insert(0, sys.argv[2]); import fs_ops; fs_ops.force_txgs(sys.argv[1], 2)" \
	    "$MNT" "$(dirname "$FS_OPS")"
}
nudge
before=$(df -B1 --output=used "$MNT" | tail -1)
check "a 64 MiB file" dd if=/dev/urandom of="$MNT/victim" bs=1M count=64 conv=fsync status=none
nudge
with=$(df -B1 --output=used "$MNT" | tail -1)
check "it is counted as used ($before before, $with with it)" \
	test $((with - before)) -gt $((48 << 20))
iused=$(df --output=iused "$MNT" | tail -1)
$PY "$FS_OPS" hold "$MNT/victim" 300 >"$E2E_TMP/hold.out" 2>&1 &
BG+=($!)
# and two O_TMPFILEs: one named by linkat, then fsync'd; one never named
$PY "$FS_OPS" tmpfile-hold "$MNT" 300 >"$E2E_TMP/tmpfile.out" 2>&1 &
BG+=($!)
for ((i = 0; i < 100; i++)); do
	grep -q held "$E2E_TMP/hold.out" && grep -q held "$E2E_TMP/tmpfile.out" && break
	sleep 0.1
done
check "held open after unlink" grep -q held "$E2E_TMP/hold.out"
check "O_TMPFILEs made, one named" grep -q held "$E2E_TMP/tmpfile.out"
check "gone from the directory" test ! -e "$MNT/victim"
fs_crash
fs_stop_bg
fs_start -- "${DEV[@]}" || e2e_done
check "still gone after the crash" test ! -e "$MNT/victim"
check "the named O_TMPFILE has what was fsync'd" $PY "$FS_OPS" tmpfile-check "$MNT"
# the victim and the unnamed O_TMPFILE reclaimed, the named one counted
iused2=$(df --output=iused "$MNT" | tail -1)
check "inodes in use: $iused before, $iused2 after (victim out, tmpfile in)" \
	test "$iused2" -eq "$iused"
after=$with
for ((i = 0; i < 30; i++)); do
	nudge
	after=$(df -B1 --output=used "$MNT" | tail -1)
	[ $((after - before)) -lt $((8 << 20)) ] && break
	sleep 0.2
done
check "its space came back at the next mount (used: $before before, $after after)" \
	test $((after - before)) -lt $((8 << 20))
rm -f "$MNT/.txg-nudge"
fs_stop
e2e_done
