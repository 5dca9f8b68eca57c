#!/bin/bash
# fs_corrupt.sh — self-healing under a mounted raidz pool: files of varied
# sizes are copied in through the daemon's mount and fsync'd; then random
# bytes overwrite half of the written 4 KiB blocks in the data area
# (4 MiB .. end - 512 KiB) of ONE device of a raidz1 pool while it is
# mounted.  After the page cache is dropped and the pool exported and
# imported (so neither the kernel nor Tarn has a cached copy), the files
# read back with their sha256 (all but two, left for the scrub to find);
# status counts CKSUM errors on exactly that device; a scrub repairs
# (repaired > 0, 0 errors), a second one repairs nothing; after `pool
# clear` status -x says all pools are healthy and every file reads back.
# Then the scrub must have restored full redundancy: every written block
# of another device is overwritten, and still every file reads back, a
# scrub ends with 0 errors and the next one repairs nothing.  The same
# again with TWO devices of a raidz2 pool (and then two others).
# The seed (which devices, which blocks) is printed; TARN_SEED=S replays.
#
# Cleanup even on failure: pools destroyed with -f (unmounts), the daemon
# stopped by its PID, any FUSE mount left under this test's temp dir
# lazily unmounted.
. "$(dirname "$0")/lib.sh"
describe "corrupt devices under a mounted raidz pool: reads heal, scrub repairs"
require_daemon_mounts
SEED=${TARN_SEED:-$(( (RANDOM << 15 | RANDOM) + 1 ))}
echo "# seed $SEED (replay with TARN_SEED=$SEED)"

# e2e_cleanup destroys the pool, stops the daemon, unmounts what is left

# corrupt FILE SHARE SEED: random bytes over SHARE percent of the written
# 4 KiB blocks of FILE's data area (the device is a sparse file: what was
# never written reads as zeros).  Prints how many blocks.
corrupt() {
	python3 - "$1" "$2" "$3" <<'PYEOF'
import os, random, sys
path, share, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
start, end = 4 << 20, os.path.getsize(path) - (512 << 10)
fd = os.open(path, os.O_RDWR)
zero = bytes(4096)
offs = [o for o in range(start, end, 4096) if os.pread(fd, 4096, o) != zero]
rng = random.Random(seed)
offs = rng.sample(offs, len(offs) * share // 100)
for o in offs:
    os.pwrite(fd, rng.randbytes(4096), o)
os.fsync(fd)
os.close(fd)
print(len(offs))
PYEOF
}

# cksum_of DEV: the CKSUM column of DEV's row in the last status output
cksum_of() {
	awk -v p="$1" -v b="${1##*/}" '($1 == p || $1 == b) && NF >= 5 { print $5; exit }' "$OUT"
}

# round LAYOUT NDEV I...: a pool of NDEV devices, files in, devices I...
# corrupted under the mount, then the checks above
round() {
	local layout=$1 n=$2 i bad=() hit total f c
	shift 2
	bad=("$@")
	echo "# $layout of $n devices, corrupting device(s) ${bad[*]}"
	mkdevs "$n" 128M
	tarn_ok pool create -m "$MNT" tank "$layout" "${DEV[@]}" || return
	mountpoint -q "$MNT" || { fail "pool not mounted at $MNT"; return; }
	# files of varied sizes, and a tree of small ones
	i=0
	for size in 0 1 511 4096 4097 65536 131071 131072 131073 1000000 3145728 9000001; do
		head -c "$size" /dev/urandom >"$MNT/f$i.$size"
		i=$((i + 1))
	done
	cp -r "$E2E_SRC/lib" "$MNT/lib"
	(cd "$MNT" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$E2E_TMP/sums.read"
	# and files nobody reads until the scrub has been: it must repair them
	mkdir "$MNT/unread"
	for i in 1 2; do
		head -c 4194304 /dev/urandom >"$MNT/unread/u$i"
	done
	(cd "$MNT" && sha256sum unread/*) >"$E2E_TMP/sums.unread"
	cat "$E2E_TMP/sums.read" "$E2E_TMP/sums.unread" >"$E2E_TMP/sums"
	# syncfs does not reach Tarn (libfuse 3.14 has no syncfs request, so
	# `sync -f` flushes the kernel's pages but forces no txg): fsync each
	# file, which returns when its data is on the devices
	ok sync -f "$MNT"
	ok python3 -c 'import os, sys
for d, _, fs in os.walk(sys.argv[1]):
    for f in fs:
        fd = os.open(os.path.join(d, f), os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)' "$MNT"
	total=0
	for i in "${bad[@]}"; do
		hit=$(corrupt "${DEV[$i]}" 50 "$((SEED + i))")
		echo "  overwrote $hit blocks of 4 KiB on ${DEV[$i]##*/}"
		[ "${hit:-0}" -gt 0 ] && pass || fail "nothing written on ${DEV[$i]##*/}?"
	done
	# cold caches: the kernel's (page cache of the mount and the devices)
	# and Tarn's (export and import)
	tarn_ok pool export tank
	sync
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
	tarn_ok pool import -d "$DEVDIR" tank
	mountpoint -q "$MNT" || { fail "not mounted after import"; return; }
	if (cd "$MNT" && sha256sum --quiet -c "$E2E_TMP/sums.read") >"$E2E_TMP/check.out" 2>&1; then
		pass
	else
		fail "files read back differently from a damaged $layout:"
		sed 's/^/  /' "$E2E_TMP/check.out" | head -20 >&2
	fi
	tarn_ok pool status -p tank
	grep -E "^[[:space:]]+(/|raidz|tank)" "$OUT" | sed "s|$DEVDIR/||; s/^/  /"
	for ((i = 0; i < n; i++)); do
		c=$(cksum_of "${DEV[$i]}")
		if [[ " ${bad[*]} " == *" $i "* ]]; then
			[ "${c:-0}" -gt 0 ] && pass ||
			    { fail "no CKSUM errors on corrupted ${DEV[$i]##*/}"; show_output; }
		else
			[ "${c:-x}" = 0 ] && pass ||
			    { fail "CKSUM '$c' on intact ${DEV[$i]##*/}"; show_output; }
		fi
	done
	tarn_ok pool scrub -w tank
	tarn_ok pool status tank
	grep "^  scan:" "$OUT"
	out_has "^  scan: scrub repaired [1-9][0-9.]*[BKMGT] in [0-9:]+ with 0 errors on "
	out_has "^errors: No known data errors$"
	tarn_ok pool scrub -w tank
	tarn_ok pool status tank
	out_has "^  scan: scrub repaired 0B in [0-9:]+ with 0 errors on "
	tarn_ok pool clear tank
	tarn_ok pool status -x
	out_is "all pools are healthy"
	if (cd "$MNT" && sha256sum --quiet -c "$E2E_TMP/sums") >"$E2E_TMP/check.out" 2>&1; then
		pass
	else
		fail "files differ after the scrubs"
		sed 's/^/  /' "$E2E_TMP/check.out" | head -20 >&2
	fi
	# the scrub restored full redundancy: every written block of as many
	# OTHER devices as there is parity overwritten now, and still every
	# file reads back (only from the repaired devices)
	tarn_ok pool export tank
	local other=()
	for ((i = 0; i < n && ${#other[@]} < ${#bad[@]}; i++)); do
		[[ " ${bad[*]} " == *" $i "* ]] || other+=("$i")
	done
	for i in "${other[@]}"; do
		hit=$(corrupt "${DEV[$i]}" 100 "$((SEED + 10 + i))")
		echo "  then overwrote all $hit written blocks on ${DEV[$i]##*/}"
	done
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
	tarn_ok pool import -d "$DEVDIR" tank
	if (cd "$MNT" && sha256sum --quiet -c "$E2E_TMP/sums") >"$E2E_TMP/check.out" 2>&1; then
		pass
	else
		fail "after the scrub, losing devices ${other[*]} loses data: the scrub left damage on ${bad[*]}"
		sed 's/^/  /' "$E2E_TMP/check.out" | head -20 >&2
	fi
	tarn_ok pool scrub -w tank
	tarn_ok pool status tank
	grep "^  scan:" "$OUT"
	out_has "^  scan: scrub repaired [0-9.]+[BKMGT] in [0-9:]+ with 0 errors on "
	tarn_ok pool scrub -w tank
	tarn_ok pool status tank
	out_has "^  scan: scrub repaired 0B in [0-9:]+ with 0 errors on "
	tarn_ok pool destroy tank
	mountpoint -q "$MNT" && fail "still mounted after destroy"
}

round raidz1 4 $((SEED % 4))
round raidz2 5 $((SEED % 5)) $(((SEED + 2) % 5))
e2e_done
