# bench/lib.bash — helpers the bench scripts share (sourced, not run).
# The caller sets MNT (where the target under test is mounted) before it
# calls unmount_mnt or wait_mounted.

# usage_exit SCRIPT LAST STATUS: print SCRIPT's header from "# Usage:" to
# the line matching LAST (a sed pattern) without the "# ", exit STATUS
usage_exit() {
	sed -n "/^# Usage:/,/$2/p" "$1" | sed 's/^# \{0,1\}//'
	exit "$3"
}

# pid_alive PID: the process exists and is not a zombie
pid_alive() {
	local st
	st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# stop_pid PID: SIGTERM, wait up to 30 s, then SIGKILL.
stop_pid() {
	local pid=$1 i
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null
	for ((i = 0; i < 300; i++)); do
		pid_alive "$pid" || return 0
		sleep 0.1
	done
	echo "# pid $pid did not stop; killing it" >&2
	kill -KILL "$pid" 2>/dev/null
	sleep 0.5
}

# unmount_mnt: whatever is mounted at $MNT goes
unmount_mnt() {
	local i
	for ((i = 0; i < 3; i++)); do
		mountpoint -q "$MNT" 2>/dev/null || return 0
		fusermount3 -u "$MNT" 2>/dev/null || umount "$MNT" 2>/dev/null ||
			umount -l "$MNT" 2>/dev/null
	done
}

# wait_mounted PID PIDFILE: wait (up to 60 s) until the daemon PID wrote
# PIDFILE and $MNT is mounted; false if it died or the time ran out
wait_mounted() {
	local i
	for ((i = 0; i < 600; i++)); do
		[ -s "$2" ] && mountpoint -q "$MNT" && return 0
		pid_alive "$1" || return 1
		sleep 0.1
	done
	return 1
}

# wake_latency: one line on how fast this machine wakes a sleeping task,
# which bounds every FUSE round trip: the median of 2,000 pipe round trips
# between two processes on different CPUs (each wake-up lands on a CPU
# that went idle: on a VM whose host is busy this grows from tens to
# hundreds of microseconds) and on one CPU.  Figures taken while the first
# number is large are latency-bound everywhere, not only in FUSE.
wake_latency() {
	python3 - <<'PYEOF' 2>/dev/null || echo "wake-up latency: not measured"
import os, time
def trip(cpu_a, cpu_b, n=2000):
    r1, w1 = os.pipe(); r2, w2 = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.sched_setaffinity(0, {cpu_b})
        for _ in range(n + 1):
            os.read(r1, 1); os.write(w2, b"x")
        os._exit(0)
    os.sched_setaffinity(0, {cpu_a})
    t = []
    for _ in range(n + 1):
        t0 = time.perf_counter_ns()
        os.write(w1, b"x"); os.read(r2, 1)
        t.append(time.perf_counter_ns() - t0)
    os.waitpid(pid, 0)
    for fd in (r1, w1, r2, w2):
        os.close(fd)
    t = sorted(t[1:])
    return t[len(t) // 2] / 1000
cpus = sorted(os.sched_getaffinity(0))
cross = trip(cpus[0], cpus[-1]) if len(cpus) > 1 else float("nan")
same = trip(cpus[0], cpus[0])
os.sched_setaffinity(0, set(cpus))
print("wake-up latency: pipe round trip %.0f us across CPUs, %.0f us on one CPU"
      % (cross, same))
PYEOF
}

# --- tarnd (the caller sets TARN, TARN_RUNDIR)

# tarnd_pid: the PID in our tarnd's PID file, when it names a tarnd
tarnd_pid() {
	local pid
	pid=$(head -c 32 "$TARN_RUNDIR/tarnd.pid" 2>/dev/null | tr -dc '0-9')
	[ -n "$pid" ] && tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null |
		head -n 1 | grep -q 'tarnd$' && echo "$pid"
}
# tarn_daemon_stop: stop our tarnd (daemon stop, then by its PID)
tarn_daemon_stop() {
	local pid
	pid=$(tarnd_pid) || return 0
	timeout 60 "$TARN" daemon stop >/dev/null 2>&1
	pid_alive "$pid" && stop_pid "$pid"
	return 0
}

# --- zfs-fuse (the caller sets ZFSFUSE, ZPOOL, T, ZFS_PID, ZFS_POOL)

# zfs_daemon: start zfs-fuse (pid file in $T) unless ZFS_PID is set, and
# wait until it answers; false (with a message) if it did not
zfs_daemon() {
	local i me=${0##*/}
	[ -n "$ZFS_PID" ] && return 0
	rm -f "$T/zfs-fuse.pid"
	"$ZFSFUSE" --pidfile "$T/zfs-fuse.pid" >>"$T/zfs-fuse.log" 2>&1
	for ((i = 0; i < 100; i++)); do
		[ -s "$T/zfs-fuse.pid" ] && break
		sleep 0.1
	done
	ZFS_PID=$(tr -dc '0-9' <"$T/zfs-fuse.pid" 2>/dev/null)
	[ -n "$ZFS_PID" ] || { echo "$me: zfs-fuse did not start" >&2; return 1; }
	for ((i = 0; i < 100; i++)); do
		"$ZPOOL" list >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "$me: zfs-fuse does not answer" >&2
	return 1
}

# zfs_daemon_as default|ARC_MB: zfs-fuse started with Debian's
# /etc/zfs/zfsrc as it is, or tuned: max-arc-size ARC_MB and prefetch on
# (the file is changed for the start only: zfs-fuse reads it then, and it
# is put back at once; ZFSRC_SAVED names the copy meanwhile, for the
# caller's cleanup to put back after a kill).  A running zfs-fuse of ours
# with the other setting is stopped first (ZFS_RUNNING_AS says which runs).
ZFSRC=${ZFSRC:-/etc/zfs/zfsrc}
ZFSRC_SAVED=""
ZFS_RUNNING_AS=""
zfsrc_restore() {
	[ -n "$ZFSRC_SAVED" ] && [ -s "$ZFSRC_SAVED" ] && cat "$ZFSRC_SAVED" >"$ZFSRC"
	ZFSRC_SAVED=""
}
zfs_daemon_as() {
	local want=$1 rc
	if [ -n "$ZFS_PID" ] && [ "$ZFS_RUNNING_AS" != "$want" ]; then
		stop_pid "$ZFS_PID"
		ZFS_PID=""
	fi
	[ -n "$ZFS_PID" ] && return 0
	if [ "$want" != default ]; then
		cp "$ZFSRC" "$T/zfsrc.orig" || return 1
		ZFSRC_SAVED=$T/zfsrc.orig
		sed -e "s/^[[:space:]]*max-arc-size.*/max-arc-size = $want/" \
			-e 's/^[[:space:]]*zfs-prefetch-disable/# &/' "$T/zfsrc.orig" >"$ZFSRC"
		grep -q '^max-arc-size' "$ZFSRC" || echo "max-arc-size = $want" >>"$ZFSRC"
	fi
	zfs_daemon
	rc=$?
	zfsrc_restore
	[ "$rc" -eq 0 ] && ZFS_RUNNING_AS=$want
	return $rc
}

# zfs_pool_destroy: destroy $ZFS_POOL; FUSE releases files asynchronously,
# so "pool is busy" right after a job is retried for a while
zfs_pool_destroy() {
	local i
	[ -n "$ZFS_POOL" ] || return 0
	for ((i = 0; i < 20; i++)); do
		timeout 60 "$ZPOOL" destroy -f "$ZFS_POOL" >/dev/null 2>&1 &&
			{ ZFS_POOL=""; return 0; }
		sleep 0.5
	done
	echo "${0##*/}: zpool destroy $ZFS_POOL failed" >&2
	return 1
}
