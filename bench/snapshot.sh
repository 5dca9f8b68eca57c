#!/bin/bash
# bench/snapshot.sh — issue 28's snapshot figures, the same steps on Tarn
# (through tarnd: its cache file, socket and run directory in this
# script's temp dir), on zfs-fuse (Debian's 0.7: snapshots, no .zfs
# directory, no bookmarks) and on btrfs on a loop device (read-only
# subvolume snapshots).  Every pool or file system lives on one file of a
# tmpfs, made afresh for each part and removed after it.
#
# Parts, each on a fresh pool / file system:
#   1. a dataset with N files (100 directories of N/100 files of 1-4 KiB,
#      written by a python loop, whose rate is shown too): snapshot
#      create latency, median of R, then destroy latency of those R
#      snapshots (each holding nothing), median; `zfs diff` of two
#      snapshots 10 changed files apart when this Tarn has the verb
#      (zfs-fuse 0.7 and btrfs have none: n/a).
#   2. a SIZE file (fio, sequential 1 MiB writes, end_fsync): snapshot A,
#      then the cold reads of part 4, then the whole file overwritten in
#      place, snapshot B; destroying A frees SIZE (all its blocks are
#      unique to it), destroying B then frees nothing.  Both latencies and
#      their difference: the freed work.
#   3. K snapshots (default 1,000) of one dataset holding a SIZE file
#      "shared": the time to create them all (per snapshot; and the
#      medians of the first and the last tenth of them), to list them
#      (`zfs list -t snapshot`; btrfs: `subvolume list -s`), and to
#      destroy them all with one range FS@s0%sK-1 (zfs-fuse 0.7 has no
#      ranges: one destroy per snapshot, said under the table; btrfs: one
#      `subvolume delete` of all K).  Sequential write throughput (fio,
#      1 MiB, end_fsync) with none and with K snapshots present:
#      overwriting "shared" (with snapshots every overwritten block is
#      still held, so each write feeds the dead list), and a fresh file.
#      "none" is the mean of a run before the snapshots were taken and
#      one after they were destroyed.  The issue's goal: within 10%.
#   4. (in part 2's pool, before the overwrite) the SIZE file read cold
#      with dd bs=1M, live and through the snapshot in turn, R times
#      each (medians): Tarn
#      MNT/.zfs/snapshot/A/file when this build has the .zfs directory,
#      btrfs the snapshot subvolume; zfs-fuse has no .zfs (n/a).  Cold:
#      Tarn and zfs-fuse export and import the pool (their caches empty)
#      and every target drops the kernel's caches (echo 3 >
#      /proc/sys/vm/drop_caches).
# Destroy on btrfs is `subvolume delete --commit-after` followed by
# `subvolume sync` (waits until the cleaner has freed the subvolume), so
# that all three figures include freeing the blocks.
#
# Prints one table: rows are figures, columns the targets, then ratios
# oriented so that > 1 means Tarn is better: peer/Tarn for latencies
# (ms), Tarn/peer for throughputs (MiB/s).  Rows marked "(x)" are a
# target's own ratio (snapshot read / live read, write with K snapshots
# / with none) and get no peer ratio.
#
# Usage: bench/snapshot.sh [--files N] [--size SIZE] [--snaps K] [--reps R]
#                          [--reads R] [--targets LIST] [--build DIR]
#   --files    files in part 1's dataset (default 100000; 1000000 by hand)
#   --size     the big file of parts 2-4 (default 1G)
#   --snaps    snapshots in part 3 (default 1000)
#   --reps     creates and destroys in part 1, for the medians (default 5)
#   --reads    cold reads of each kind in part 4, live and snapshot in
#              turn, for the medians (default 3)
#   --targets  comma list from tarn,zfs-fuse,btrfs (default: all three)
#   --build    Tarn's build directory (default build)
# Needs root (tmpfs, loop devices, drop_caches).  zfs-fuse is skipped when
# another zfs-fuse daemon runs (one a machine).  Installs fio, zfs-fuse
# and btrfs-progs with apt-get when missing.  Cleanup on exit and on
# Ctrl-C, even after a failure: Tarn's pools destroyed and its daemon
# stopped by the PID in its PID file, zfs-fuse's pool destroyed and its
# daemon stopped by PID, mounts unmounted, our loop devices detached, the
# tmpfs unmounted, the temp dir removed.  The machine may be shared and
# noisy: compare figures from one run, not across runs.
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.bash
. "$SRC/bench/lib.bash"
NFILES=100000
SIZE=1G
NSNAPS=1000
REPS=5
READS=3
TARGETS=tarn,zfs-fuse,btrfs
B=$SRC/build

usage() {	# usage STATUS
	usage_exit "$0" '^#   --build' "$1"
}
while [ $# -gt 0 ]; do
	case "$1" in
	--files) NFILES=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--snaps) NSNAPS=$2; shift 2 ;;
	--reps) REPS=$2; shift 2 ;;
	--reads) READS=$2; shift 2 ;;
	--targets) TARGETS=$2; shift 2 ;;
	--build) B=$2; shift 2 ;;
	-h|--help) usage 0 ;;
	*) echo "unknown option: $1" >&2; usage 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "snapshot.sh: needs root" >&2; exit 1; }
for v in files:"$NFILES" snaps:"$NSNAPS" reps:"$REPS" reads:"$READS"; do
	[[ "${v#*:}" =~ ^[1-9][0-9]{0,7}$ ]] ||
		{ echo "snapshot.sh: --${v%%:*} wants a positive number" >&2; exit 2; }
done
[ "$NFILES" -ge 100 ] || { echo "snapshot.sh: --files wants at least 100" >&2; exit 2; }
SIZE_B=$(numfmt --from=iec "$SIZE" 2>/dev/null) || { echo "snapshot.sh: bad --size" >&2; exit 2; }
SIZE_M=$((SIZE_B / 1048576))
[ "$SIZE_M" -ge 16 ] || { echo "snapshot.sh: --size too small (16M at least)" >&2; exit 2; }
TARN=$B/cmd/tarn/tarn
ZPOOL=/usr/sbin/zpool		# zfs-fuse's; never a zpool/zfs found in PATH
ZFS=/usr/sbin/zfs
ZFSFUSE=/usr/sbin/zfs-fuse

# --- packages (only what is missing)
need=()
for p in fio zfs-fuse btrfs-progs; do
	dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "# installing: ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}" >/dev/null ||
		{ echo "snapshot.sh: apt-get install failed" >&2; exit 1; }
fi
[ -x "$TARN" ] || { echo "snapshot.sh: no $TARN (build first)" >&2; exit 1; }
[ -e /dev/fuse ] || { echo "snapshot.sh: no /dev/fuse" >&2; exit 1; }

# --- state for cleanup
T=$(mktemp -d /tmp/tarn-benchsnap.XXXXXX) || exit 1
TMPFS=$T/tmpfs			# the backing tmpfs
MNT=$T/mnt			# where the target under test is mounted
RES=$T/results			# "target figure value" lines
NOTES=$T/notes			# lines printed under the table
export TARN_CACHEFILE=$T/tarn/cache/tarn.cache
export TARN_RUNDIR=$T/tarn/run
export TARN_SOCKET=$T/tarn/run/tarnd.sock
export TARN_AUTOMOUNT=1
TARN_POOL=""			# Tarn pool that exists now
ZFS_PID=""			# zfs-fuse daemon
ZFS_POOL=""			# zfs-fuse pool imported now
LOOP=""				# loop device we attached
mkdir -p "$TMPFS" "$MNT"
: >"$RES"
: >"$NOTES"


cleanup() {
	trap - EXIT INT TERM
	if [ -n "$TARN_POOL" ]; then
		timeout 60 "$TARN" pool destroy -f "$TARN_POOL" >/dev/null 2>&1
		TARN_POOL=""
	fi
	tarn_daemon_stop
	zfs_pool_destroy
	if [ -n "$ZFS_PID" ]; then stop_pid "$ZFS_PID"; ZFS_PID=""; fi
	# whatever is left mounted under our temp dir, deepest first
	local m
	for m in $(awk -v t="$MNT" 'index($2, t) == 1 { print $2 }' /proc/mounts | sort -r); do
		fusermount3 -uz "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	[ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null
	LOOP=""
	mountpoint -q "$TMPFS" && umount "$TMPFS"
	case "$T" in /tmp/tarn-benchsnap.*) rm -rf "$T" ;; esac
}
trap cleanup EXIT
trap 'echo "# interrupted" >&2; exit 130' INT TERM

# the devices: part 1's holds N files (~3 KiB each, plus metadata), part
# 3's the shared file, its overwrite and a fresh file (3 x SIZE)
DEV1_M=$((NFILES * 8 / 1024 + 1024))
DEV2_M=$((SIZE_M * 3 + 1024))
DEV3_M=$((SIZE_M * 4 + 1024))
TMPFS_M=$DEV1_M
[ "$DEV2_M" -gt "$TMPFS_M" ] && TMPFS_M=$DEV2_M
[ "$DEV3_M" -gt "$TMPFS_M" ] && TMPFS_M=$DEV3_M
mount -t tmpfs -o size=${TMPFS_M}m tmpfs "$TMPFS" ||
	{ echo "snapshot.sh: cannot mount a tmpfs" >&2; exit 1; }
DEVDIR=$TMPFS/dev

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
}
now_ns() { echo "${EPOCHREALTIME/./}000"; }	# bash's clock: no fork
# ms T0 T1: milliseconds between two now_ns, 1 decimal
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1e6 }'; }
# median V...: the median of the numbers given ("-" when none)
median() {
	[ $# -gt 0 ] || { echo -; return; }
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
		END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# rec TARGET FIGURE VALUE: one result, also shown as it comes
rec() {
	echo "  $2: $3"
	echo "$1 $2 ${3:--}" >>"$RES"
}
note() { echo "$*" >>"$NOTES"; }
# timed CMD...: run CMD (output to $T/cmd.out), print its wall time in ms;
# false (and its output on stderr) when it failed
timed() {
	local t0 t1 rc
	t0=$(now_ns)
	"$@" >"$T/cmd.out" 2>&1
	rc=$?
	t1=$(now_ns)
	if [ "$rc" -ne 0 ]; then
		echo "  failed ($rc): $* : $(head -c 400 "$T/cmd.out")" >&2
		return 1
	fi
	ms "$t0" "$t1"
}

# mkdev MIB: a fresh sparse device file $DEV on the tmpfs
mkdev() {
	rm -rf "$DEVDIR"
	mkdir -p "$DEVDIR"
	DEV=$DEVDIR/d0
	truncate -s "${1}M" "$DEV"
}

# --- the targets.  Each has: TGT_setup MIB (a fresh pool / file system,
# its data at $DATA), TGT_snap NAME, TGT_destroy NAME, TGT_destroy_all K
# (s0..sK-1), TGT_list, TGT_cold (empty caches), TGT_snapfile NAME FILE
# (a path to FILE in snapshot NAME; false when there is none), TGT_diff A
# B (false when there is none), TGT_teardown.

# Tarn: pool "sbench" on $DEV, root dataset mounted at $MNT by tarnd
tarn_setup() {
	mkdev "$1"
	timeout 120 "$TARN" pool create -m "$MNT" sbench "$DEV" >"$T/create.out" 2>&1 ||
		{ echo "snapshot.sh: tarn pool create failed: $(cat "$T/create.out")" >&2; return 1; }
	TARN_POOL=sbench
	mountpoint -q "$MNT" || { echo "snapshot.sh: Tarn's pool is not mounted" >&2; return 1; }
	DATA=$MNT
}
tarn_snap() { "$TARN" fs snapshot "sbench@$1"; }
tarn_destroy() { "$TARN" fs destroy "sbench@$1"; }
tarn_destroy_all() { "$TARN" fs destroy "sbench@s0%s$(($1 - 1))"; }
tarn_list() { "$TARN" fs list -t snapshot; }
tarn_cold() {
	timeout 120 "$TARN" pool export sbench >/dev/null || return 1
	drop_caches
	timeout 120 "$TARN" pool import -d "$DEVDIR" sbench >/dev/null || return 1
	mountpoint -q "$MNT"
}
tarn_snapfile() {
	[ -d "$MNT/.zfs/snapshot" ] || return 1
	echo "$MNT/.zfs/snapshot/$1/$2"
}
tarn_diff() { "$TARN" fs diff "sbench@$1" "sbench@$2"; }
tarn_has_diff() { "$TARN" fs diff 2>&1 | grep -q 'diff \['; }
tarn_teardown() {
	timeout 120 "$TARN" pool destroy -f sbench >/dev/null 2>&1 ||
		echo "snapshot.sh: tarn pool destroy failed" >&2
	TARN_POOL=""
	rm -rf "$DEVDIR"
}

# zfs-fuse: pool "sbenchzfs" on $DEV, root dataset at $MNT
zfs_daemon_once() {
	[ -n "$ZFS_PID" ] && return 0
	# one zfs-fuse a machine (one socket): another's daemon would get our
	# commands, so the target is skipped
	if pgrep -x zfs-fuse >/dev/null; then
		echo "snapshot.sh: another zfs-fuse daemon runs; zfs-fuse skipped" >&2
		note "# zfs-fuse: skipped (another zfs-fuse daemon was running)"
		return 1
	fi
	zfs_daemon
}
zfs_setup() {
	mkdev "$1"
	zfs_daemon_once || return 1
	# cachefile=none: nothing of ours in zfs-fuse's /var/lib/zfs/zpool.cache
	"$ZPOOL" create -f -o cachefile=none -m "$MNT" sbenchzfs "$DEV" >"$T/create.out" 2>&1 ||
		{ echo "snapshot.sh: zpool create failed: $(cat "$T/create.out")" >&2; return 1; }
	ZFS_POOL=sbenchzfs
	DATA=$MNT
}
zfs_snap() { "$ZFS" snapshot "sbenchzfs@$1"; }
zfs_destroy() { "$ZFS" destroy "sbenchzfs@$1"; }
ZFS_RANGE=""	# yes / no: zfs-fuse's zfs takes FS@A%B
zfs_destroy_all() {
	local i
	if [ -z "$ZFS_RANGE" ]; then
		if "$ZFS" destroy "sbenchzfs@s0%s$(($1 - 1))" 2>/dev/null; then
			ZFS_RANGE=yes
			return 0
		fi
		ZFS_RANGE=no
		note "# zfs-fuse: no FS@A%B ranges; its snaps_destroy_all is $1 destroys, one each"
	elif [ "$ZFS_RANGE" = yes ]; then
		"$ZFS" destroy "sbenchzfs@s0%s$(($1 - 1))"
		return
	fi
	for ((i = 0; i < $1; i++)); do
		"$ZFS" destroy "sbenchzfs@s$i" || return 1
	done
}
zfs_list() { "$ZFS" list -t snapshot; }
zfs_cold() {
	local i
	for ((i = 0; i < 20; i++)); do
		"$ZPOOL" export sbenchzfs >/dev/null 2>&1 && break
		sleep 0.5
	done
	[ "$i" -lt 20 ] || return 1
	drop_caches
	"$ZPOOL" import -o cachefile=none -d "$DEVDIR" sbenchzfs >/dev/null
}
zfs_snapfile() { return 1; }
zfs_diff() { return 1; }
zfs_has_diff() { return 1; }
zfs_teardown() {
	zfs_pool_destroy
	rm -rf "$DEVDIR"
}

# btrfs on a loop device: the data in subvolume $MNT/fs, snapshots in
# $MNT/snaps/NAME (read-only)
btrfs_setup() {
	mkdev "$1"
	LOOP=$(losetup -f --show "$DEV") || { echo "snapshot.sh: losetup failed" >&2; LOOP=""; return 1; }
	if ! mkfs.btrfs -f "$LOOP" >"$T/mkfs.log" 2>&1 || ! mount "$LOOP" "$MNT"; then
		echo "snapshot.sh: mkfs.btrfs/mount failed: $(tail -n 3 "$T/mkfs.log")" >&2
		return 1
	fi
	btrfs subvolume create "$MNT/fs" >/dev/null && mkdir "$MNT/snaps" || return 1
	DATA=$MNT/fs
}
btrfs_snap() { btrfs subvolume snapshot -r "$MNT/fs" "$MNT/snaps/$1"; }
btrfs_destroy() {
	btrfs subvolume delete -c "$MNT/snaps/$1" && btrfs subvolume sync "$MNT"
}
btrfs_destroy_all() {
	local i p=()
	for ((i = 0; i < $1; i++)); do p+=("$MNT/snaps/s$i"); done
	btrfs subvolume delete -c "${p[@]}" && btrfs subvolume sync "$MNT"
}
btrfs_list() { btrfs subvolume list -s "$MNT"; }
btrfs_cold() { drop_caches; }
btrfs_snapfile() { echo "$MNT/snaps/$1/$2"; }
btrfs_diff() { return 1; }
btrfs_has_diff() { return 1; }
btrfs_teardown() {
	umount "$MNT" || umount -l "$MNT"
	losetup -d "$LOOP"
	LOOP=""
	rm -rf "$DEVDIR"
}

# --- workloads

# populate DIR N: 100 directories of N/100 files of 1-4 KiB (seeded)
populate() {
	python3 - "$1" "$2" <<'EOF'
import os, random, sys, time
d, n = sys.argv[1], int(sys.argv[2])
rnd = random.Random(28)
buf = os.urandom(1 << 16)
per = n // 100
t = time.perf_counter()
for i in range(100):
	sub = os.path.join(d, "d%02d" % i)
	os.mkdir(sub)
	for j in range(per):
		fd = os.open(os.path.join(sub, "f%06d" % j), os.O_CREAT | os.O_WRONLY, 0o644)
		size = rnd.randint(1024, 4096)
		off = rnd.randint(0, len(buf) - size)
		os.write(fd, buf[off:off + size])
		os.close(fd)
os.sync()
print("%.0f" % (per * 100 / (time.perf_counter() - t)))
EOF
}

# write_mibs FILE: MiB/s of a sequential SIZE write of FILE (fio, 1 MiB,
# end_fsync, no preallocation; an existing file is overwritten in place)
write_mibs() {
	local out=$T/fio.json
	fio --output-format=json --output="$out" --name=w --filename="$1" --rw=write \
		--bs=1M --size="${SIZE_M}m" --ioengine=psync --direct=0 --end_fsync=1 \
		--fallocate=none --randseed=1234 >/dev/null 2>"$T/fio.err" ||
		{ echo "  fio failed: $(head -c 300 "$T/fio.err")" >&2; echo -; return 1; }
	python3 -c 'import json, sys; print("%.0f" % (json.load(open(sys.argv[1]))["jobs"][0]["write"]["bw"] / 1024.0))' "$out"
}
# read_mibs FILE: MiB/s of a dd bs=1M read of FILE
read_mibs() {
	local t0 t1
	t0=$(now_ns)
	dd if="$1" of=/dev/null bs=1M status=none || { echo -; return 1; }
	t1=$(now_ns)
	awk -v n="$SIZE_M" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", n / ((b - a) / 1e9) }'
}

# part1 TGT: create and destroy latency on a dataset with N files
part1() {
	local t=$1 i v c=() d=()
	echo "-- part 1: $NFILES files, $REPS snapshots created then destroyed"
	"${t}_setup" "$DEV1_M" || return 1
	v=$(populate "$DATA" "$NFILES") || return 1
	rec "$t" populate "$v"
	for ((i = 0; i < REPS; i++)); do
		sync
		v=$(timed "${t}_snap" "c$i") && c+=("$v")
	done
	echo "  creates (ms): ${c[*]}"
	if "${t}_has_diff"; then
		for ((i = 0; i < 10; i++)); do
			echo changed >>"$DATA/$(printf d%02d/f%06d $((i * 7 % 100)) "$i")" || break
		done
		sync
		"${t}_snap" dB >/dev/null 2>&1 &&
			v=$(timed "${t}_diff" "c$((REPS - 1))" dB) &&
			[ "$(wc -l <"$T/cmd.out")" -ge 10 ] && rec "$t" diff_10 "$v"
		"${t}_destroy" dB >/dev/null 2>&1
	fi
	for ((i = 0; i < REPS; i++)); do
		v=$(timed "${t}_destroy" "c$i") && d+=("$v")
	done
	echo "  destroys (ms): ${d[*]}"
	rec "$t" create_nfiles "$(median "${c[@]}")"
	rec "$t" destroy_nfiles "$(median "${d[@]}")"
	"${t}_teardown"
}

# part2 TGT: destroy of a snapshot holding SIZE of unique blocks vs one
# holding none; part 4's cold reads on the way
part2() {
	local t=$1 v f i l=() s=()
	echo "-- part 2 (and 4): $SIZE_M MiB file, snapshot A, overwrite, snapshot B"
	"${t}_setup" "$DEV2_M" || return 1
	v=$(write_mibs "$DATA/file") || return 1
	echo "  write: $v MiB/s"
	sync
	"${t}_snap" A >/dev/null || return 1
	# part 4: the same blocks, read live and through the snapshot, in turn
	f=$("${t}_snapfile" A file) || f=""
	for ((i = 0; i < READS; i++)); do
		"${t}_cold" || { echo "  export/import failed" >&2; break; }
		v=$(read_mibs "$DATA/file") && l+=("$v")
		[ -n "$f" ] || continue
		"${t}_cold" || { echo "  export/import failed" >&2; break; }
		v=$(read_mibs "$f") && s+=("$v")
	done
	echo "  reads live: ${l[*]}; snapshot: ${s[*]:-n/a} MiB/s"
	rec "$t" read_live "$(median "${l[@]}")"
	if [ -n "$f" ]; then rec "$t" read_snap "$(median "${s[@]}")"; else rec "$t" read_snap n/a; fi
	v=$(write_mibs "$DATA/file") || return 1
	echo "  overwrite: $v MiB/s"
	sync
	"${t}_snap" B >/dev/null || return 1
	sync
	v=$(timed "${t}_destroy" A) && rec "$t" destroy_unique "$v"
	sync
	v=$(timed "${t}_destroy" B) && rec "$t" destroy_none "$v"
	"${t}_teardown"
}

# part3 TGT: K snapshots; write throughput with none and with K
part3() {
	local t=$1 i v t0 t1 n ob fb each
	echo "-- part 3: $NSNAPS snapshots of a dataset holding a $SIZE_M MiB file"
	"${t}_setup" "$DEV3_M" || return 1
	write_mibs "$DATA/shared" >/dev/null || return 1
	ob=$(write_mibs "$DATA/shared")
	fb=$(write_mibs "$DATA/fresh")
	rm -f "$DATA/fresh"
	echo "  none, before: overwrite $ob, fresh $fb MiB/s"
	sync
	each=()
	t0=$(now_ns)
	for ((i = 0; i < NSNAPS; i++)); do
		v=$(now_ns)
		"${t}_snap" "s$i" >/dev/null 2>"$T/snap.err" ||
			{ echo "  snapshot s$i failed: $(cat "$T/snap.err")" >&2; break; }
		each+=("$(ms "$v" "$(now_ns)")")
	done
	t1=$(now_ns)
	[ "$i" -eq "$NSNAPS" ] || { "${t}_teardown"; return 1; }
	rec "$t" snaps_create_each "$(awk -v a="$t0" -v b="$t1" -v k="$NSNAPS" \
		'BEGIN { printf "%.1f", (b - a) / 1e6 / k }')"
	# does a snapshot cost more when many exist?  the first tenth's
	# median against the last tenth's
	n=$(((NSNAPS + 9) / 10))
	rec "$t" snaps_create_first "$(median "${each[@]:0:n}")"
	rec "$t" snaps_create_last "$(median "${each[@]:NSNAPS-n}")"
	if v=$(timed "${t}_list"); then
		n=$(grep -c -E '(@|/)s[0-9]+' "$T/cmd.out")
		[ "$n" -eq "$NSNAPS" ] || echo "  list shows $n snapshots, not $NSNAPS" >&2
		rec "$t" snaps_list "$v"
	fi
	rec "$t" write_over_snaps "$(write_mibs "$DATA/shared")"
	rec "$t" write_fresh_snaps "$(write_mibs "$DATA/fresh")"
	rm -f "$DATA/fresh"
	sync
	if v=$(timed "${t}_destroy_all" "$NSNAPS"); then
		rec "$t" snaps_destroy_all "$v"
		"${t}_list" >"$T/list.out" 2>&1
		grep -q -E '(@|/)s[0-9]+' "$T/list.out" && echo "  snapshots left after the destroy" >&2
	fi
	v=$(write_mibs "$DATA/shared")
	i=$(write_mibs "$DATA/fresh")
	echo "  none, after: overwrite $v, fresh $i MiB/s"
	rec "$t" write_over_none "$(awk -v a="$ob" -v b="$v" 'BEGIN { printf "%.0f", (a + b) / 2 }')"
	rec "$t" write_fresh_none "$(awk -v a="$fb" -v b="$i" 'BEGIN { printf "%.0f", (a + b) / 2 }')"
	"${t}_teardown"
}

# --- header
tarn_ver=$(git -C "$SRC" describe --always --dirty 2>/dev/null || echo unknown)
btype=$(meson introspect "$B" --buildoptions 2>/dev/null | python3 -c \
	'import json, sys; print([o["value"] for o in json.load(sys.stdin) if o["name"] == "buildtype"][0])' \
	2>/dev/null || echo "?")
echo "# snapshot.sh: $(date -u '+%Y-%m-%d %H:%M UTC'); $NFILES files (part 1), $SIZE_M MiB file"
echo "#   (parts 2-4), $NSNAPS snapshots (part 3), medians of $REPS (part 1); devices on one tmpfs"
echo "# machine: $(nproc) CPUs, $(free -g | awk '/^Mem:/ { print $2 " GiB RAM, " $7 " GiB available" }'),"
echo "#   kernel $(uname -r); $(wake_latency)"
echo "# Tarn: $tarn_ver ($btype build, $B), through tarnd; zfs-fuse $(dpkg-query -W -f '${Version}' zfs-fuse);"
echo "#   btrfs-progs $(dpkg-query -W -f '${Version}' btrfs-progs); $(fio --version)"
echo "# cold reads: Tarn and zfs-fuse export + import the pool, then every target drops the"
echo "#   kernel's caches (echo 3 > /proc/sys/vm/drop_caches)"
echo "# btrfs destroy = subvolume delete --commit-after + subvolume sync (space freed)"
START=$(date +%s)
IFS=, read -r -a TLIST <<<"$TARGETS"
for tgt in "${TLIST[@]}"; do
	case "$tgt" in
	tarn) f=tarn ;;
	zfs-fuse) f=zfs ;;
	btrfs) f=btrfs ;;
	*) echo "unknown target $tgt" >&2; continue ;;
	esac
	echo "== $tgt"
	for p in part1 part2 part3; do
		"$p" "$f" || { echo "  $p failed on $tgt" >&2; "${f}_teardown" >/dev/null 2>&1; }
	done
	if [ "$f" = tarn ]; then tarn_daemon_stop; fi
	if [ "$f" = zfs ] && [ -n "$ZFS_PID" ]; then stop_pid "$ZFS_PID"; ZFS_PID=""; fi
done

# --- the table
echo
python3 - "$RES" "$NFILES" "$SIZE_M" "$NSNAPS" "${TLIST[@]}" <<'EOF'
import sys
res = {}
for line in open(sys.argv[1]):
	t, f, v = line.split()
	t = {"zfs": "zfs-fuse"}.get(t, t)
	try:
		res[(t, f)] = float(v)
	except ValueError:
		res[(t, f)] = v
nfiles, size, k = sys.argv[2], sys.argv[3], sys.argv[4]
targets = sys.argv[5:]
peers = [t for t in targets if t != "tarn"]
# derived figures: a target's own ratios and the freed work
for t in targets:
	def g(f):
		v = res.get((t, f))
		return v if isinstance(v, float) else None
	a, b = g("destroy_unique"), g("destroy_none")
	if a is not None and b is not None:
		res[(t, "destroy_freed")] = a - b
	for num, den, name in (("read_snap", "read_live", "read_ratio"),
			("write_over_snaps", "write_over_none", "write_over_ratio"),
			("write_fresh_snaps", "write_fresh_none", "write_fresh_ratio")):
		a, b = g(num), g(den)
		if a is not None and b:
			res[(t, name)] = a / b
		elif res.get((t, num)) == "n/a":
			res[(t, name)] = "n/a"
# (key, label, kind): kind "ms" lower is better, "mibs" higher is better,
# "x" a target's own ratio
rows = [
	("populate", "write the %s files (files/s)" % nfiles, "mibs"),
	("create_nfiles", "snapshot create, %s files (ms)" % nfiles, "ms"),
	("destroy_nfiles", "snapshot destroy, %s files (ms)" % nfiles, "ms"),
	("diff_10", "zfs diff, 10 changed of %s (ms)" % nfiles, "ms"),
	("destroy_unique", "destroy, %s MiB unique (ms)" % size, "ms"),
	("destroy_none", "destroy, nothing unique (ms)", "ms"),
	("destroy_freed", "  difference: the freeing (ms)", "ms"),
	("snaps_create_each", "%s snapshots: create, each (ms)" % k, "ms"),
	("snaps_create_first", "  first tenth: each, median (ms)", "ms"),
	("snaps_create_last", "  last tenth: each, median (ms)", "ms"),
	("snaps_list", "%s snapshots: list all (ms)" % k, "ms"),
	("snaps_destroy_all", "%s snapshots: destroy all (ms)" % k, "ms"),
	("write_over_none", "overwrite, no snapshots (MiB/s)", "mibs"),
	("write_over_snaps", "overwrite, %s snapshots (MiB/s)" % k, "mibs"),
	("write_over_ratio", "  (x) overwrite %s/none" % k, "x"),
	("write_fresh_none", "fresh file, no snapshots (MiB/s)", "mibs"),
	("write_fresh_snaps", "fresh file, %s snapshots (MiB/s)" % k, "mibs"),
	("write_fresh_ratio", "  (x) fresh %s/none" % k, "x"),
	("read_live", "cold read, live (MiB/s)", "mibs"),
	("read_snap", "cold read, snapshot (MiB/s)", "mibs"),
	("read_ratio", "  (x) snapshot/live", "x"),
]
def ratio(x):
	return "%.2f" % x if x >= 0.1 else "%.3f" % x
def fmt(v, kind):
	if v is None:
		return "n/a" if kind != "x" else "-"
	if isinstance(v, str):
		return v
	if kind == "x":
		return "%.2f" % v
	return "%.1f" % v if abs(v) < 100 else "%.0f" % v
cols = targets + ["%s/tarn" % p for p in peers]
lw = max(len(r[1]) for r in rows) + 1
w = max(10, max(len(c) for c in cols) + 2)
print("# ratios: > 1 means Tarn is better; for latencies (ms) peer/tarn, for rates")
print("#   (MiB/s, files/s) tarn/peer.  (x) rows: each target's own ratio.  n/a: no such feature")
print("%-*s" % (lw, "figure") + "".join("%*s" % (w, c) for c in cols))
for key, label, kind in rows:
	row = [fmt(res.get((t, key)), kind) for t in targets]
	for p in peers:
		a, b = res.get(("tarn", key)), res.get((p, key))
		ok = kind != "x" and all(isinstance(x, float) and x > 0 for x in (a, b))
		if not ok:
			row.append("-")
		elif kind == "ms":
			row.append(ratio(b / a))
		else:
			row.append(ratio(a / b))
	print("%-*s" % (lw, label) + "".join("%*s" % (w, c) for c in row))
print("# issue 28's goal: write throughput with %s snapshots within 10%% of none" % k)
print("#   ((x) overwrite and fresh rows >= 0.90)")
EOF
awk '!seen[$0]++' "$NOTES"
echo "# took $(($(date +%s) - START)) s"
