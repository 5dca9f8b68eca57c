#!/bin/bash
# zfs send | zfs receive round trips, checked file by file: a file system
# with everything a file can have (data files large and 4 KiB, sizes
# around block boundaries, sparse files, empty files, hard links,
# symlinks, fifos, sockets, device nodes, deep and wide directories,
# setuid/setgid/sticky modes, owners, nanosecond mtimes, xattrs up to
# 64 KiB, POSIX ACLs; tests/e2e/send_tree.py) is sent full into another
# pool of the same daemon and into a pool of a SECOND daemon (its own
# socket, run dir and cache file: another host), then changed (append,
# overwrite, truncate, delete, rename, links, chmod/chown, xattrs, ACLs,
# a directory replaced by a file) and sent incrementally with -i, -I
# (the intermediate snapshot arrives too), from a bookmark and over a
# snapshot not sent; a clone is sent as an incremental from its origin
# and received as a clone of the target's copy of the origin.  After each
# receive the target equals the source's snapshot (as its .zfs/snapshot
# directory shows it): content, mode, owner, mtime (ns), size, holes
# (data map by SEEK_DATA/SEEK_HOLE, blocks), link counts and hard-link
# groups, symlink targets, rdev, xattrs and ACLs; the snapshots keep
# their guids.
# Compressed (-c) and raw (-w) streams of a gzip-9 / zstd-19 file system
# are smaller than a plain stream and land on targets with compression
# off still compressed (referenced, logicalreferenced and compressratio
# as at the source); a plain stream lands uncompressed there.  The targets
# are exported and imported (the same trees) and scrubbed (clean).
#
# Scale: SEND_SCALE=N multiplies the tree (default 1), SEND_TEXT_MIB the
# compressible data (default 8).
#
# Cleanup (send_lib.bash, lib.sh): pools destroyed with -f on both
# daemons, both daemons stopped by their PIDs, mounts left detached.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/send_lib.bash"
describe "send | receive round trips (full, -i, -I, #bookmark, clone, -c, -w) file by file, two daemons"
require_daemon_mounts
TEXT_MIB=${SEND_TEXT_MIB:-8}
E2E_CMD_TIMEOUT=$((E2E_CMD_TIMEOUT * ${SEND_SCALE:-1}))

POOLOPTS=(-O acltype=posix -O atime=off)
mkdevs 1 768M s
tarn_ok pool create -m "$MNT" "${POOLOPTS[@]}" tank "${DEV[0]}"
mkdevs 1 768M t
tarn_ok pool create -m "$E2E_TMP/dst" "${POOLOPTS[@]}" dst "${DEV[0]}"
mkdevs 1 768M f
tarnb_ok pool create -m "$E2E_TMP/far" "${POOLOPTS[@]}" far "${DEV[0]}"
PA=$(daemon_pid)
PB=$(hostb_pid)
[ -n "$PA" ] && [ -n "$PB" ] && [ "$PA" != "$PB" ] && pass ||
	fail "expected two daemons (this test's: '$PA', host B's: '$PB')"
DST=$E2E_TMP/dst
FAR=$E2E_TMP/far

# snaps HOST FS: the names of FS's snapshots, on one line
snaps() {
	tarn_on "$1" fs list -H -o name -t snapshot -r "$2"
	sed 's/.*@//' "$OUT" | tr '\n' ' '
}

# same_guid SRC HOST DST: a received snapshot keeps the sent one's guid
same_guid() {
	local a b
	a=$(prop a "$1" guid)
	b=$(prop "$2" "$3" guid)
	[ -n "$a" ] && [ "$a" = "$b" ] && pass ||
		fail "guid of $3 ('$b') is not that of $1 ('$a')"
}

# both_same WANT FS-ON-DST FS-ON-FAR: the targets' trees equal manifest WANT
both_same() {
	same_tree "dst: $2 vs $1" "$1" "$(mnt_of a "$2")"
	same_tree "far: $3 vs $1" "$1" "$(mnt_of b "$3")"
}

# section TEXT: a progress line, with the seconds since the start
section() {
	echo "# [${SECONDS}s] $*"
}

# --- the source: everything a file can have
section "build the source"
tarn_ok fs create tank/src
S=$MNT/src
check "build the tree" python3 "$SEND_TREE" build "$S"
sync -f "$S"
tarn_ok fs snapshot tank/src@s1
manifest "$S/.zfs/snapshot/s1" m1
grep -q '"type": "c"' "$E2E_TMP/m1.json" && grep -q '"system.posix_acl_default"' \
	"$E2E_TMP/m1.json" && grep -q '"links": \[' "$E2E_TMP/m1.json" && pass ||
	fail "the source tree lacks device nodes, default ACLs or hard links"

# --- full stream, into a pool of this daemon and one of host B
section "full"
xfer_ok a a tank/src@s1 -- dst/r
xfer_ok a b tank/src@s1 -- far/r
mountpoint -q "$DST/r" && pass || fail "receive did not mount dst/r at $DST/r"
mountpoint -q "$FAR/r" && pass || fail "receive did not mount far/r at $FAR/r"
both_same m1 dst/r far/r
same_guid tank/src@s1 a dst/r@s1
same_guid tank/src@s1 b far/r@s1
[ "$(snaps a dst/r)" = "s1 " ] && pass || fail "dst/r's snapshots: $(snaps a dst/r)"

# --- incremental -i (short and full base names)
section "incremental -i"
check "mutate 1" python3 "$SEND_TREE" mutate "$S" 1
sync -f "$S"
tarn_ok fs snapshot tank/src@s2
manifest "$S/.zfs/snapshot/s2" m2
xfer_ok a a -i @s1 tank/src@s2 -- dst/r
xfer_ok a b -i tank/src@s1 tank/src@s2 -- far/r
both_same m2 dst/r far/r
same_guid tank/src@s2 b far/r@s2
# the old snapshot on the target still shows the old tree
same_tree "dst/r@s1 after an incremental" m1 "$DST/r/.zfs/snapshot/s1"

# --- -I to dst (the intermediate snapshot too); to host B from a
# bookmark (its snapshot destroyed at the source), then -i
section "-I, and -i from a bookmark"
check "mutate 2" python3 "$SEND_TREE" mutate "$S" 2
sync -f "$S"
tarn_ok fs snapshot tank/src@s3
manifest "$S/.zfs/snapshot/s3" m3
check "mutate 3" python3 "$SEND_TREE" mutate "$S" 3
sync -f "$S"
tarn_ok fs snapshot tank/src@s4
manifest "$S/.zfs/snapshot/s4" m4
xfer_ok a a -I @s2 tank/src@s4 -- dst/r
[ "$(snaps a dst/r)" = "s1 s2 s3 s4 " ] && pass || fail "dst/r after -I: $(snaps a dst/r)"
same_tree "dst/r@s3 (from -I)" m3 "$DST/r/.zfs/snapshot/s3"
same_guid tank/src@s3 a dst/r@s3
tarn_ok fs bookmark tank/src@s2 'tank/src#b2'
tarn_ok fs destroy tank/src@s2
xfer_ok a b -i '#b2' tank/src@s3 -- far/r
same_tree "far/r from bookmark #b2 to s3" m3 "$(mnt_of b far/r)"
same_guid tank/src@s3 b far/r@s3
xfer_ok a b -i @s3 tank/src@s4 -- far/r
[ "$(snaps b far/r)" = "s1 s2 s3 s4 " ] && pass || fail "far/r's snapshots: $(snaps b far/r)"
both_same m4 dst/r far/r
# and a bookmark named in full, to dst
tarn_ok fs bookmark tank/src@s3 'tank/src#b3'
tarn_ok fs destroy tank/src@s3
check "mutate 4" python3 "$SEND_TREE" mutate "$S" 4
sync -f "$S"
tarn_ok fs snapshot tank/src@s5
manifest "$S/.zfs/snapshot/s5" m5
tarn_ok fs rollback -r dst/r@s3
xfer_ok a a -i 'tank/src#b3' tank/src@s5 -- dst/r
same_tree "dst/r from bookmark #b3 to s5" m5 "$(mnt_of a dst/r)"
same_guid tank/src@s5 a dst/r@s5

# --- -i over an intermediate snapshot (host B: s4 -> s6, skipping s5)
section "-i skipping a snapshot"
check "mutate 5" python3 "$SEND_TREE" mutate "$S" 5
sync -f "$S"
tarn_ok fs snapshot tank/src@s6
manifest "$S/.zfs/snapshot/s6" m6
xfer_ok a b -i @s4 tank/src@s6 -- far/r
same_tree "far/r after -i s4 s6" m6 "$(mnt_of b far/r)"
[ "$(snaps b far/r)" = "s1 s2 s3 s4 s6 " ] && pass || fail "far/r's snapshots: $(snaps b far/r)"
xfer_ok a a -i @s5 tank/src@s6 -- dst/r
same_tree "dst/r after -i s5 s6" m6 "$(mnt_of a dst/r)"

# --- a clone, sent as an incremental from its origin
section "clone"
# (of s1, which both targets have whatever the increments did; changes
# to files only: the increments above have the directory changes)
tarn_ok fs clone tank/src@s1 tank/cl
C=$(mnt_of a tank/cl)
check "change the clone" python3 - "$C" <<'EOF'
import os, sys
r = sys.argv[1]
with open(os.path.join(r, "large", "big0"), "ab") as f:
    f.write(os.urandom(200000) + b"\1")
with open(os.path.join(r, "large", "big1"), "r+b") as f:
    f.seek(3 << 20)
    f.write(b"\1" + os.urandom(70000))
os.truncate(os.path.join(r, "sizes", "s131073"), 1000)
os.chmod(os.path.join(r, "perm", "u2_m600"), 0o4711)
os.setxattr(os.path.join(r, "xattr", "f"), "user.small", b"changed in the clone")
os.utime(os.path.join(r, "sizes", "s1"), ns=(5, 123456789123456789))
EOF
sync -f "$C"
tarn_ok fs snapshot tank/cl@c1
manifest "$C/.zfs/snapshot/c1" mc1
xfer_ok a a -i tank/src@s1 tank/cl@c1 -- dst/cl
xfer_ok a b -i tank/src@s1 tank/cl@c1 -- far/cl
both_same mc1 dst/cl far/cl
[ "$(prop a dst/cl origin)" = dst/r@s1 ] && pass ||
	fail "dst/cl's origin is '$(prop a dst/cl origin)', not dst/r@s1"
[ "$(prop b far/cl origin)" = far/r@s1 ] && pass ||
	fail "far/cl's origin is '$(prop b far/cl origin)', not far/r@s1"
same_guid tank/cl@c1 b far/cl@c1
# the origin on the target is untouched by its clone's receive
same_tree "dst/r@s1 after the clone's receive" m1 "$DST/r/.zfs/snapshot/s1"

# --- compressed and raw streams carry the stored blocks
# within SIZE1 SIZE2: equal within metadata slack (5% + 256 KiB)
within() {
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d;
		exit !(d <= 0.05 * (a > b ? a : b) + 262144) }'
}
# stored_as_source WHERE SNAP: referenced, logicalreferenced and
# compressratio of SNAP (on WHERE) are those of the source snapshot
stored_as_source() {
	local h=$1 snap=$2 src=$3 p a b
	for p in referenced logicalreferenced; do
		a=$(prop a "$src" $p)
		b=$(prop "$h" "$snap" $p)
		within "$a" "$b" && pass || fail "$p of $snap is $b, of $src $a"
	done
	a=$(prop a "$src" compressratio)
	b=$(prop "$h" "$snap" compressratio)
	awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; exit !(d < 0.05 && d > -0.05) }' && pass ||
		fail "compressratio of $snap is $b, of $src $a"
}
section "-c, -w"
tarn_ok fs create -o compression=gzip-9 tank/gz
check "compressible files" python3 "$SEND_TREE" text "$MNT/gz" "$TEXT_MIB"
sync -f "$MNT/gz"
tarn_ok fs snapshot tank/gz@c
manifest "$MNT/gz/.zfs/snapshot/c" mgz
ratio=$(prop a tank/gz@c compressratio)
awk -v r="$ratio" 'BEGIN { exit !(r >= 2) }' && pass ||
	fail "gzip-9 compressed the text only ${ratio}x (the test needs >= 2x)"
send_to_file a "$E2E_TMP/plain.stream" tank/gz@c
send_to_file a "$E2E_TMP/c.stream" -c tank/gz@c
send_to_file a "$E2E_TMP/w.stream" -w tank/gz@c
plain=$(stat -c %s "$E2E_TMP/plain.stream")
for s in c w; do
	n=$(stat -c %s "$E2E_TMP/$s.stream")
	[ "$n" -lt $((plain * 2 / 3)) ] && pass ||
		fail "the -$s stream ($n bytes) is not smaller than the plain one ($plain)"
done
[ "$(prop a dst compression)" = off ] && pass || fail "dst's compression is not off"
recv_from a "$E2E_TMP/c.stream" -- dst/zc
[ "$RC" -eq 0 ] && pass || { fail "receive of the -c stream"; show_output; }
recv_from a "$E2E_TMP/w.stream" -- dst/zw
[ "$RC" -eq 0 ] && pass || { fail "receive of the -w stream"; show_output; }
recv_from a "$E2E_TMP/plain.stream" -- dst/zp
[ "$RC" -eq 0 ] && pass || { fail "receive of the plain stream"; show_output; }
for fs in zc zw zp; do
	same_tree "dst/$fs vs tank/gz@c" mgz "$(mnt_of a dst/$fs)"
done
stored_as_source a dst/zc@c tank/gz@c
stored_as_source a dst/zw@c tank/gz@c
[ "$(prop a dst/zc compression)" = off ] && pass ||
	fail "dst/zc's compression is '$(prop a dst/zc compression)' (want off, inherited)"
# the plain stream is stored with the target's compression: off
ref=$(prop a dst/zp@c referenced)
lref=$(prop a dst/zp@c logicalreferenced)
src_lref=$(prop a tank/gz@c logicalreferenced)
within "$ref" "$lref" && within "$lref" "$src_lref" && pass ||
	fail "dst/zp@c: referenced $ref, logicalreferenced $lref (source logical $src_lref)"
awk -v r="$(prop a dst/zp@c compressratio)" 'BEGIN { exit !(r < 1.05) }' && pass ||
	fail "dst/zp@c's compressratio is $(prop a dst/zp@c compressratio), want 1.00"

# zstd-19, raw, to host B (compression off there too)
tarn_ok fs create -o compression=zstd-19 tank/zs
check "compressible files" python3 "$SEND_TREE" text "$MNT/zs" $((TEXT_MIB / 4 + 1))
sync -f "$MNT/zs"
tarn_ok fs snapshot tank/zs@z
manifest "$MNT/zs/.zfs/snapshot/z" mzs
xfer_ok a b -w tank/zs@z -- far/zw
same_tree "far/zw vs tank/zs@z" mzs "$(mnt_of b far/zw)"
stored_as_source b far/zw@z tank/zs@z
# and -c incrementally on top of it
cp "$MNT/gz/t000.txt" "$MNT/zs/copied.txt"
sync -f "$MNT/zs"
tarn_ok fs snapshot tank/zs@z2
manifest "$MNT/zs/.zfs/snapshot/z2" mzs2
xfer_ok a b -c -i @z tank/zs@z2 -- far/zw
same_tree "far/zw vs tank/zs@z2" mzs2 "$(mnt_of b far/zw)"
stored_as_source b far/zw@z2 tank/zs@z2

# --- what the devices hold: export, import, the same trees; scrubs clean
tarn_ok pool export dst
tarn_ok pool import -d "$DEVDIR" dst
tarnb_ok pool export far
tarnb_ok pool import -d "$DEVDIR" far
section "export, import, scrub"
both_same m6 dst/r far/r
both_same mc1 dst/cl far/cl
same_tree "dst/zc after import" mgz "$(mnt_of a dst/zc)"
tarn_ok pool scrub -w dst
tarn_ok pool status dst
out_has "with 0 errors"
out_has "errors: No known data errors"
tarnb_ok pool scrub -w far
tarnb_ok pool status far
out_has "with 0 errors"
out_has "errors: No known data errors"
e2e_done
