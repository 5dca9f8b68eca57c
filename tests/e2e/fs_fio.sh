#!/bin/bash
# fs_fio.sh — fio with --verify through a Tarn mount on raidz2 (six file
# devices): random writes of mixed block sizes from two jobs, each block
# checksummed (crc32c) and verified after the write phase; the same with
# the mmap engine; then after a remount fio verifies the first data set
# again (--verify_only), so what was on disk is checked, not the cache,
# once through /dev/fuse and once through io_uring.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fs_lib.bash"

describe "fio --verify on raidz2"
require_fuse
require_cmd fio fio

mkdevs 6 256M
# the transport options: a wrong value is refused before anything is touched
for bad in uring=maybe poll=abc poll=2000000; do
	"$TARN_MOUNT" -o "$bad" "$MNT" "${DEV[0]}" 2>/dev/null
	rc=$?
	[ "$rc" -eq 2 ] && pass || fail "tarn-mount -o $bad: exit $rc, not 2"
done
fs_start -c -o poll=50 -- raidz2 "${DEV[@]}" || e2e_done

FIO_COMMON=(--directory="$MNT" --size=48m --numjobs=2 --verify=crc32c --verify_fatal=1
	--randrepeat=1 --randseed=4242 --group_reporting --minimal --verify_state_save=0)
RAND=(--name=rand --rw=randwrite --bsrange=4k-256k --ioengine=psync --fsync_on_close=1)
check "random writes, verified" fio "${RAND[@]}" "${FIO_COMMON[@]}"
check "mmap random writes, verified" fio --name=mmap --rw=randwrite --bs=16k --ioengine=mmap \
	"${FIO_COMMON[@]}"
check "sequential 1 MiB writes, verified" fio --name=seq --rw=write --bs=1m --ioengine=psync \
	--end_fsync=1 "${FIO_COMMON[@]}"

fs_stop
# the same data read back through both request transports: /dev/fuse, and
# per-CPU io_uring queues (used when the kernel allows them; see
# scripts/fuse-uring.sh)
fs_start -o uring=off -- "${DEV[@]}" || e2e_done
check "after a remount (/dev/fuse) the random data verifies" \
	fio "${RAND[@]}" "${FIO_COMMON[@]}" --verify_only
fs_stop
fs_start -o uring=on -- "${DEV[@]}" || e2e_done
check "after a remount (io_uring if allowed) the random data verifies" \
	fio "${RAND[@]}" "${FIO_COMMON[@]}" --verify_only
fs_stop
e2e_done
