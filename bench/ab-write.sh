#!/bin/bash
# bench/ab-write.sh — sequential writes through tarn-mount, two (or more)
# builds taking turns: a 1 GiB file in 1 MiB writes and a 256 MiB file in
# 4 KiB writes (dd, conv=fsync), on one 3 GiB file vdev on a tmpfs, a
# fresh pool per run.  For A/B checks of changes on the write path; the
# full comparison with the peers is bench/run-fs.sh.
#
# Usage: bench/ab-write.sh [--rounds N] BUILD [BUILD...]   (root: tmpfs)
# Cleanup on exit and Ctrl-C: tarn-mount stopped by its PID, the tmpfs
# unmounted, the temp directory removed.
set -u
ROUNDS=3
if [ "${1:-}" = "--rounds" ]; then ROUNDS=$2; shift 2; fi
[ $# -ge 1 ] || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
T=$(mktemp -d /tmp/ab-write.XXXXXX)
cleanup() {
	[ -s "$T/pid" ] && kill "$(cat "$T/pid")" 2>/dev/null
	sleep 0.5
	mountpoint -q "$T/m" && fusermount3 -uz "$T/m"
	mountpoint -q "$T" && umount "$T"
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
mount -t tmpfs -o size=6G tmpfs "$T" && mkdir "$T/m" || exit 1
rate() { echo "$1 / ($3 - $2)" | bc -l | cut -c1-6; }
for ((r = 1; r <= ROUNDS; r++)); do
	for b in "$@"; do
		truncate -s 3G "$T/d0"
		rm -f "$T/pid"
		"$b/cmd/tarn-mount/tarn-mount" -p "$T/pid" -c "$T/m" "$T/d0" >"$T/log" 2>&1 &
		for ((i = 0; i < 100; i++)); do mountpoint -q "$T/m" && break; sleep 0.1; done
		s=$(date +%s.%N)
		dd if=/dev/zero of="$T/m/f" bs=1M count=1024 conv=fsync status=none
		e=$(date +%s.%N)
		dd if=/dev/zero of="$T/m/g" bs=4k count=65536 conv=fsync status=none
		e2=$(date +%s.%N)
		echo "$b round $r: 1 MiB writes $(rate 1024 "$s" "$e") MiB/s," \
		    "4 KiB writes $(rate 256 "$e" "$e2") MiB/s"
		kill "$(cat "$T/pid")"
		for ((i = 0; i < 100; i++)); do mountpoint -q "$T/m" || break; sleep 0.1; done
		wait
		rm -f "$T/d0" "$T/pid"
	done
done
