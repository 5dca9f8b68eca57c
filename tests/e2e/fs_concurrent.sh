#!/bin/bash
# fs_concurrent.sh — many writers in one directory at once: six jobs
# create, write, rename, remove and read back files in the same
# directory while two listers run ls -l on it, plus one job that makes
# and removes subdirectories; every job checks what it reads, and in the
# end (and again after a remount) the directory holds exactly the files
# the jobs left, with their contents, each name once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fs_lib.bash"

describe "concurrent creates, renames, removes and listings in one directory"
require_fuse
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
NW=6
OPS=1500
trap 'rc=$?; fs_stop_bg; (exit $rc); fs_cleanup' EXIT

mkdevs 3 512M
fs_start -c -- raidz1 "${DEV[@]}" || e2e_done
D="$MNT/shared"
mkdir -p "$D"
: >"$E2E_TMP/stop"

# listers and a directory churner run until the workers are done
for l in 1 2; do
	(while [ -e "$E2E_TMP/stop" ]; do ls -l "$D" >/dev/null 2>&1; done) &
	BG+=($!)
done
(i=0; while [ -e "$E2E_TMP/stop" ]; do
	mkdir "$D/dir$i" && rmdir "$D/dir$i" || echo "dir churn failed at $i"
	i=$((i + 1))
done) >"$E2E_TMP/churn.out" 2>&1 &
BG+=($!)

WPIDS=()
for ((w = 0; w < NW; w++)); do
	$PY "$FS_OPS" worker "$D" "$w" "$OPS" >"$E2E_TMP/worker.$w" 2>&1 &
	WPIDS+=($!)
done
for ((w = 0; w < NW; w++)); do
	if wait "${WPIDS[$w]}"; then pass; else
		fail "worker $w failed"
		sed 's/^/  /' "$E2E_TMP/worker.$w" >&2
	fi
done
rm -f "$E2E_TMP/stop"               # the listers and the churner finish their round
for p in "${BG[@]}"; do
	{ wait "$p"; } 2>/dev/null
done
BG=()
check "directory churn" test ! -s "$E2E_TMP/churn.out"
check "what the workers left" $PY "$FS_OPS" verify "$D" "$NW"

fs_stop
fs_start -- "${DEV[@]}" || e2e_done
check "what the workers left, after a remount" $PY "$FS_OPS" verify "$D" "$NW"
check "rm -rf" rm -rf "$D"
fs_stop
e2e_done
