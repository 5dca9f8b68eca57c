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
