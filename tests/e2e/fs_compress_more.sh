#!/bin/bash
# compression=zle (runs of zeros) and zstd-fast-N (zstd's fast levels),
# as zfs has them: accepted by create -o and set, shown by get, and data
# written through the mount is stored smaller and reads back the same.
# zle needs the pool feature zle_compress (new pools have it; a version-1
# pool must be upgraded first); lzjb is refused, pointing at lz4.
. "$(dirname "$0")/lib.sh"
describe "compression=zle and zstd-fast-N"
require_daemon_mounts

mounted() {
	mountpoint -q "$1" 2>/dev/null
}

mkdevs 3 256M
tarn_ok pool create -m "$MNT" cz "${DEV[0]}" "${DEV[1]}"
mounted "$MNT" && pass || fail "pool not mounted at $MNT"
tarn_ok pool get -H -o value feature@zle_compress cz
out_is "active"
tarn_ok fs create -o compression=zle cz/zle
tarn_ok fs create -o compression=zstd-fast-1000 cz/f1000
tarn_ok fs create cz/fast
tarn_ok fs set compression=zstd-fast cz/fast
tarn_ok fs create -o compression=off cz/raw
tarn_ok fs get -H -o name,value,source compression cz/zle cz/f1000 cz/fast
out_is "$(printf 'cz/zle\tzle\tlocal\ncz/f1000\tzstd-fast-1000\tlocal\ncz/fast\tzstd-fast\tlocal')"
for n in 1 2 10 20 90 100 500; do
	tarn_ok fs set compression=zstd-fast-$n cz/fast
	tarn_ok fs get -H -o value compression cz/fast
	out_is "zstd-fast-$n"
done
tarn_err 1 "^cannot set property for 'cz/fast': 'compression' must be one of .*zle.*zstd-fast-\[1-10,20,30,40,50,60,70,80,90,100,500,1000\]" \
	fs set compression=zstd-fast-11 cz/fast
tarn_err 1 "^cannot set property for 'cz/fast': 'compression' value 'lzjb' is not supported.*use lz4" \
	fs set compression=lzjb cz/fast
tarn_ok fs get -H -o value compression cz/fast
out_is "zstd-fast-500"
tarn_ok fs set compression=zstd-fast cz/fast

# data: mostly zeros with some content (zle), text (zstd-fast); the same
# bytes uncompressed for comparison
python3 - "$MNT/raw/zeros" <<'PY'
import os, sys
with open(sys.argv[1], "wb") as f:
    for i in range(256):                # 8 MiB: 32 KiB blocks of zeros, 1 KiB of text
        f.write(b"\0" * 31744 + (b"block %06d " % i) * 85 + b"\0" * 4)
PY
ok cp "$MNT/raw/zeros" "$MNT/zle/zeros"
# text: 800 KiB of C-like lines from a fixed vocabulary, seeded, so the
# data (and its ratio) does not change with the source tree
python3 - "$E2E_TMP/text" <<'PY'
import random, sys
rnd = random.Random(26)
words = ("static int void uint64_t return if else for while struct spa_t vdev_t "
         "dmu_tx_t error txg offset size len buf arg ret NULL 0 1 sizeof const "
         "char bool true false break continue case switch default goto out "
         "tarn_alloc tarn_free VERIFY ASSERT SET_ERROR EIO ENOSPC EINVAL").split()
with open(sys.argv[1], "w") as f:
    size = 0
    while size < 800 * 1024:
        line = "\t" * rnd.randint(0, 3) + " ".join(rnd.choice(words)
            for _ in range(rnd.randint(3, 12))) + ";\n"
        line *= rnd.randint(1, 3)       # as code repeats itself
        f.write(line)
        size += len(line)
PY
ok cp "$E2E_TMP/text" "$MNT/fast/text"
ok cp "$E2E_TMP/text" "$MNT/f1000/text"
ok sync
tarn_ok pool sync cz
tarn_ok fs get -H -p -o value refcompressratio,referenced cz/zle
{ read -r ratio; read -r ref; } < "$OUT"
[ "${ratio%%.*}" -ge 4 ] && [ "$ref" -lt 2097152 ] && pass ||
	fail "zle: ratio $ratio, referenced $ref for 8 MiB mostly zeros"
for d in fast f1000; do
	tarn_ok fs get -H -p -o value refcompressratio cz/$d
	r=$(cat "$OUT")
	[ "${r%%.*}" -ge 2 ] || { [ "$d" = f1000 ] && [ "${r%%.*}" -ge 1 ] && [ "${r#*.}" -gt 10 ]; } &&
		pass || fail "zstd-fast ($d): ratio $r"
done
cmp -s "$MNT/raw/zeros" "$MNT/zle/zeros" && pass || fail "zle data differs"
cmp -s "$MNT/fast/text" "$MNT/f1000/text" && pass || fail "zstd-fast data differs"
# read back from the devices, not the page cache: export and import
tarn_ok pool export cz
tarn_ok pool import -d "$DEVDIR" cz
cmp -s "$MNT/raw/zeros" "$MNT/zle/zeros" && pass || fail "zle data differs after import"
cmp -s "$MNT/fast/text" "$E2E_TMP/text" && cmp -s "$MNT/f1000/text" "$E2E_TMP/text" && pass ||
	fail "zstd-fast data differs after import"
tarn_ok pool scrub -w cz
tarn_ok pool status -x cz
out_is "pool 'cz' is healthy"

# an old pool has no zle_compress: refused until upgraded
tarn_ok pool create -o version=1 -m none old "${DEV[2]}"
tarn_err 1 "^cannot set property for 'old': pool and or dataset must be upgraded" \
	fs set compression=zle old
tarn_err 1 "^cannot create 'old/z': pool and or dataset must be upgraded" \
	fs create -o compression=zle old/z
tarn_ok fs set compression=zstd-fast-5 old
tarn_ok pool upgrade old
out_has "^  zle_compress$"
tarn_ok fs set compression=zle old
tarn_ok pool destroy old
tarn_ok pool destroy cz
e2e_done
