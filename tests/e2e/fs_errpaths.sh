#!/bin/bash
# Damaged files named by path, as zpool names them: on a one-device pool
# mounted by tarnd, the data blocks of two files (one in a child dataset)
# are overwritten on the device while the pool is exported.  Reading them
# gives EIO, other files read back, a scrub counts the errors, and
# `pool status -v` lists each damaged file once by its path under the
# mount; once the child dataset is unmounted, its damage is listed as
# DATASET:<0xOBJECT> with the block's offset.  Data is uncompressed
# (compression is off by default), so the files' blocks are found on the
# device by the marker each 4 KiB of them starts with, and metadata is
# not touched.
#
# Cleanup even on failure (e2e_cleanup): pools destroyed with -f, the
# daemon stopped by its PID, FUSE mounts under the test's temp dir undone.
. "$(dirname "$0")/lib.sh"
describe "status -v names damaged files by path"
require_daemon_mounts

# marked FILE TAG: 1 MiB, each 4 KiB block starting with "TARNDAMAGE-TAG-"
marked() {
	python3 - "$1" "$2" <<'EOF'
import os, sys
path, tag = sys.argv[1], sys.argv[2].encode()
with open(path, "wb") as f:
    for i in range(256):
        head = b"TARNDAMAGE-" + tag + b"-%05d-" % i
        f.write(head + os.urandom(4096 - len(head)))
    f.flush()
    os.fsync(f.fileno())
EOF
}

mkdevs 1 256M
tarn_ok pool create -m "$MNT" tank "${DEV[0]}"
tarn_ok fs create tank/sub
ok mkdir -p "$MNT/dir/deeper"
marked "$MNT/dir/deeper/victim" A && marked "$MNT/sub/hurt" B && pass ||
	fail "could not write the marked files"
ok dd if=/dev/urandom of="$MNT/fine" bs=64K count=16 conv=fsync status=none
fine_sum=$(sha256sum <"$MNT/fine")
tarn_ok pool export tank

# every marked block on the device gets random bytes
hit=$(python3 - "${DEV[0]}" <<'EOF'
import os, sys
mark = b"TARNDAMAGE-"
fd = os.open(sys.argv[1], os.O_RDWR)
size, hit, chunk = os.fstat(fd).st_size, [], 8 << 20
for base in range(0, size, chunk):      # blocks sit on 512-byte sectors
    buf = os.pread(fd, chunk + 4096, base)
    i = buf.find(mark)
    while 0 <= i < chunk:
        hit.append(base + i)
        i = buf.find(mark, i + 4096)
for off in hit:
    os.pwrite(fd, os.urandom(4096), off)
os.close(fd)
print(len(hit))
EOF
)
[ "$hit" -ge 512 ] && pass || fail "found $hit marked blocks on the device, want 512"

tarn_ok pool import -d "$DEVDIR" tank
run cat "$MNT/dir/deeper/victim"
[ "$RC" -ne 0 ] && grep -q "Input/output error" "$ERR" && pass ||
	{ fail "a damaged file read without EIO"; show_output; }
run cat "$MNT/sub/hurt"
[ "$RC" -ne 0 ] && pass || fail "the damaged file of tank/sub read without an error"
[ "$(sha256sum <"$MNT/fine")" = "$fine_sum" ] && pass || fail "an undamaged file changed"
run "$TARN" pool scrub -w tank
[ "$RC" -lt 128 ] && pass || fail "scrub crashed (rc $RC)"

tarn_ok pool status -v tank
out_has "^errors: Permanent errors have been detected in the following files:$"
[ "$(grep -cx "        $MNT/dir/deeper/victim" "$OUT")" = 1 ] && pass ||
	{ fail "status -v: $MNT/dir/deeper/victim not listed once"; show_output; }
[ "$(grep -cx "        $MNT/sub/hurt" "$OUT")" = 1 ] && pass ||
	{ fail "status -v: $MNT/sub/hurt not listed once"; show_output; }
grep -q "<0x" "$OUT" && { fail "status -v: an object without its path"; show_output; } || pass

# not mounted: the dataset's name and the object, block by block
tarn_ok fs unmount tank/sub
tarn_ok pool status -v tank
out_has "^        tank/sub:<0x[0-9a-f]+> offset 0x[0-9a-f]+$"
out_has "^        $MNT/dir/deeper/victim$"
grep -q " ds[0-9]*:" "$OUT" && { fail "status -v: an object set key, not a name"; show_output; } || pass
tarn_ok pool destroy -f tank
e2e_done
