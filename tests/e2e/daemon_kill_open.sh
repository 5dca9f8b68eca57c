#!/bin/bash
# daemon_kill_open.sh — a program holding files open under a mount when
# tarnd dies by SIGKILL: once the daemon is gone, the next fstat, read
# (of data the kernel has not cached), write, fsync and open there fail
# with ENOTCONN ("Transport endpoint is not connected"), what FUSE file
# systems give and programs test for, over both request transports
# (io_uring queues when the kernel has them, /dev/fuse otherwise), and
# never ECANCELED.  A request in flight at the very moment of the kill is
# ended by the kernel instead (ECONNABORTED, or ECANCELED over io_uring:
# docs/DESIGN.md, "A daemon killed"); that is not asserted here.
. "$(dirname "$0")/lib.sh"
describe "SIGKILL of tarnd: open files get ENOTCONN"
require_daemon_mounts

mkdevs 1 256M
tarn_ok pool create -m "$MNT" tank "${DEV[0]}"
mountpoint -q "$MNT" && pass || { fail "not mounted at $MNT"; e2e_done; }
ok dd if=/dev/urandom of="$MNT/f" bs=1M count=4 status=none conv=fsync
pid=$(daemon_pid) || { fail "no daemon"; e2e_done; }

# the daemon's watcher (tarn_fuse_guard.c), which cuts its connections
# (file by file: processes come and go meanwhile, and mawk stops at the
# first status file that vanished before it opened it)
guard=
for f in /proc/[0-9]*/status; do
	st=$(cat "$f" 2>/dev/null) || continue
	grep -q "^PPid:[[:space:]]*$pid\$" <<<"$st" &&
		grep -q '^Name:[[:space:]]*tarn-fuse-guard$' <<<"$st" &&
		guard=$(basename "$(dirname "$f")")
done
[ -n "$guard" ] && pass || fail "tarnd $pid has no tarn-fuse-guard child"

# the holder: opens, reads a little, drops the cached pages, kills the
# daemon, waits (polling closely) until its last thread and its watcher
# are gone, then tries each operation at once.  Without the watcher the
# kernel kept the connection 5-10 ms longer, and what came meanwhile
# got ECONNABORTED or ECANCELED.
python3 - "$MNT/f" "$pid" "${guard:-0}" >"$E2E_TMP/holder.out" 2>&1 <<'PYEOF'
import errno, glob, os, signal, sys, time
path, pid, guard = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fd = os.open(path, os.O_RDWR)
os.read(fd, 4096)
os.fsync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
def alive(p):
    for st in glob.glob("/proc/%d/task/*/status" % p):
        try:
            for line in open(st):
                if line.startswith("State:") and line.split()[1] not in ("Z", "X"):
                    return True
        except OSError:
            pass
    return False
os.kill(pid, signal.SIGKILL)
end = time.time() + 20
while (alive(pid) or (guard and alive(guard))) and time.time() < end:
    time.sleep(0.001)
def attempt(name, op):
    try:
        op()
        print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, str(e.errno)))
attempt("fstat", lambda: os.fstat(fd))
attempt("read", lambda: os.pread(fd, 4096, 2 << 20))
attempt("write", lambda: os.pwrite(fd, b"x", 3 << 20))
attempt("fsync", lambda: os.fsync(fd))
attempt("open", lambda: os.close(os.open(path, os.O_RDONLY)))
attempt("stat", lambda: os.stat(path))
try:
    os.close(fd)
except OSError:
    pass
PYEOF
pid_alive "$pid" && fail "tarnd $pid still alive after SIGKILL" || pass
for op in fstat read write fsync open stat; do
	got=$(awk -v o=$op '$1 == o { print $2 }' "$E2E_TMP/holder.out")
	[ "$got" = ENOTCONN ] && pass || fail "$op after the daemon died: '$got', not ENOTCONN"
done
grep -q ECANCELED "$E2E_TMP/holder.out" && fail "ECANCELED: $(cat "$E2E_TMP/holder.out")" || pass

# the next daemon clears the dead mount and mounts the pool again
tarn_ok pool list -H -o name tank
out_is tank
tarn_ok fs mount -a
for ((i = 0; i < 50; i++)); do
	[ "$(stat -c %s "$MNT/f" 2>/dev/null)" = 4194304 ] && break
	sleep 0.1
done
[ "$(stat -c %s "$MNT/f" 2>/dev/null)" = 4194304 ] && pass || fail "the file is not back after the restart"
tarn_ok pool destroy -f tank
e2e_done
