#!/bin/bash
# bench/run-pool.sh — the pool engine's figures, through the library (no FUSE):
#   * checksum, compression and RAID-Z parity throughput per core beside memcpy
#     (bench_zio, part 1);
#   * sequential 1 MiB write and read (cold and warm) on raidz1 of 4 and a
#     mirror of 2 file vdevs on tmpfs, in MiB/s and CPU seconds per GiB
#     (bench_pool; a single device too), and the same through zio alone
#     (bench_zio, part 2).
# Usage: bench/run-pool.sh [SIZE_MIB]      (default 1024; needs root for tmpfs)
# The machine is shared and noisy: compare figures from one run, not across runs.
set -eu
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SIZE=${1:-1024}
B=${TARN_BUILD_DIR:-$SRC/build}
ninja -C "$B" bench/bench_pool bench/bench_zio >/dev/null
DIR=$(mktemp -d /tmp/tarn-bench.XXXXXX)
MOUNTED=0
cleanup() {
	[ "$MOUNTED" -eq 1 ] && umount "$DIR"
	rmdir "$DIR"
}
trap cleanup EXIT
if mount -t tmpfs -o size=$((SIZE * 6 + 2048))m tmpfs "$DIR" 2>/dev/null; then
	MOUNTED=1
else
	echo "note: could not mount a tmpfs (not root?); using $DIR as it is"
fi
echo "== CPU work per core and zio alone (bench_zio)"
"$B/bench/bench_zio" "$DIR" "$((SIZE / 4))"
echo
echo "== through the object layer (bench_pool), ${SIZE} MiB"
for layout in stripe:1 mirror:2 raidz1:4; do
	"$B/bench/bench_pool" "$DIR" "$layout" "$SIZE"
done
