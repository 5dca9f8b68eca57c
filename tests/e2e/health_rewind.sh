#!/bin/bash
# import -F: the newest txg is damaged on every device, so a plain import
# fails with a message naming -F; `import -F -n` says what a rewind would
# discard and imports nothing; `import -F` returns the pool to the txg
# before, and a scrub of it is clean.
#
# How the newest txg is damaged: the uberblock with the highest txg is
# read from the ring of label 0 (docs/FORMAT.md "Labels": 64 KiB into the
# label, slots of 1 KiB at ashift 9) and the blocks its ub_rootbp points
# at (the MOS objset of that txg, bytes 128.. of the uberblock: three
# DVAs of u32 vdev, u32 asize in 512-byte units, u64 offset) are
# overwritten on both sides of the mirror (physical offset = 4 MiB +
# DVA offset, "Leaf layout").  The uberblock itself stays valid; what it
# names does not verify.  The older txgs' trees are intact (frees are
# deferred three txgs).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/health.bash"
describe "import -F rewinds past a damaged newest txg; -n only says so"
require_engine

MAGIC=$(printf '%d' 0x5461726e55424c4b)   # "TarnUBLK"

# newest_ub FILE: "TXG TIMESTAMP vdev:asize:offset ..." of the newest
# uberblock in label 0's ring
newest_ub() {
	od -A d -t u8 -v -w1024 -j $((64 * 1024)) -N $((192 * 1024)) "$1" |
	    awk -v m="$MAGIC" '$2 "" == m "" && $4 + 0 > best {
		best = $4 + 0; line = $4 " " $6
		for (d = 0; d < 3; d++) {
			w = $(18 + 2 * d); o = $(19 + 2 * d)
			a = int(w / 4294967296); v = w - a * 4294967296
			if (a > 0) line = line " " v ":" a ":" o
		}
	} END { print line }'
}

make_pool rw mirror 2 64M || e2e_done
put_data rw
tarn_ok pool export rw
read -r TXG TS DVAS <<<"$(newest_ub "${DEV[0]}")"
echo "  newest txg $TXG (at $TS), MOS root at $DVAS"
[ -n "$DVAS" ] && pass || { fail "no uberblock found in ${DEV[0]}"; e2e_done; }
read -r TXG1 _ <<<"$(newest_ub "${DEV[1]}")"
[ "$TXG1" = "$TXG" ] && pass || fail "the two sides' newest txgs differ ($TXG, $TXG1)"
for dva in $DVAS; do
	IFS=: read -r v a o <<<"$dva"
	[ "$v" -eq 0 ] || { fail "DVA on vdev $v: a mirror pool has only vdev 0"; continue; }
	for f in "${DEV[@]}"; do
		head -c $((a * 512)) /dev/urandom | dd of="$f" bs=512 \
		    seek=$((((4 << 20) + o) / 512)) conv=notrunc status=none
	done
done
sums_save "${DEV[@]}"

tarn_err 1 "^cannot import 'rw': .*-F" pool import -d "$DEVDIR/rw" rw
tarn_ok pool list
out_is "no pools available"
sums_check                                   # a failed import writes nothing

tarn_ok pool import -d "$DEVDIR/rw" -F -n rw
out_has "^Would be able to return rw to its state as of [A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9]{2} [0-9:]{8} [0-9]{4}\.$"
tarn_ok pool list
out_is "no pools available"
sums_check                                   # nor does a trial

tarn_ok pool import -d "$DEVDIR/rw" -F rw
out_has "^Pool rw returned to its state as of [A-Z][a-z]{2} .*[0-9]{4}\.$"
tarn_ok pool status rw
out_has "^ state: ONLINE$"
tarn_ok pool scrub -w rw
tarn_ok pool status rw
out_has "^  scan: scrub repaired 0B in [0-9:]+ with 0 errors on "
out_has "^errors: No known data errors$"
# the pool goes on from there, and imports plainly from now on
tarn_ok pool export rw
tarn_ok pool import -d "$DEVDIR/rw" rw
tarn_ok pool history rw
out_has " zpool import -d $DEVDIR/rw -F rw$"

# -o readonly=on: imports, writes nothing
tarn_ok pool export rw
sums_save "${DEV[@]}"
tarn_ok pool import -o readonly=on -d "$DEVDIR/rw" rw
run "$TARN" pool status rw
if [ "$RC" -eq 0 ]; then
	tarn_err 1 "^cannot scrub 'rw': .*read-only" pool scrub rw
	run "$TARN" pool export rw
fi
sums_check
e2e_done
