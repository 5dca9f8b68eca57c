# tests/e2e/remote.bash — sourced (after lib.sh) by the replication tests
# (syncoid.sh, fs_replicate.sh): a second "host" on this machine, reached
# over a real ssh connection.
#
#  - A second tarnd with its own socket, run dir and cache file under
#    $R_TMP (rtarn ARGS... runs tarn against it); it stands for the
#    daemon of another machine.
#  - sshd from Debian's openssh-server on a free port of 127.0.0.1, with
#    a throwaway host key, a throwaway client key and a config of its own
#    (root login by key only, the key in a temp authorized_keys).  The key
#    is bound to a forced command, $R_TMP/ssh-session: it sets TARN_SOCKET,
#    TARN_RUNDIR, TARN_CACHEFILE and a PATH whose zfs, zpool and tarn are
#    links to this build's tarn (behind wrappers that log each call), so
#    that whatever runs over ssh talks to the second daemon, then runs the
#    client's command line with bash -c "$SSH_ORIGINAL_COMMAND".
#  - On the local side, zfs/zpool/tarn links and logging wrappers first in
#    PATH too ($LOG_L: "STATUS<TAB>zfs ARGS" per call, and for a failed one
#    "<TAB># " and the first line of its stderr; $LOG_R the same for the
#    remote side).
#  - SSH_OPTS: the client options that reach this sshd (port, key, no
#    known_hosts); $SSH_DEST is root@localhost.
#
# Cleanup (EXIT trap, chained before lib.sh's): the second daemon's pools
# destroyed and the daemon stopped by the PID in its PID file, sshd and
# the sessions it forked killed by their PIDs, the ssh control sockets
# syncoid left removed; then lib.sh's cleanup (the first daemon, temp dir).

R_TMP=$E2E_TMP/remote
R_ENV=(TARN_SOCKET="$R_TMP/run/tarnd.sock" TARN_RUNDIR="$R_TMP/run"
    TARN_CACHEFILE="$R_TMP/cache/tarn.cache")
BIN_L=$E2E_TMP/bin-local
BIN_R=$R_TMP/bin
LOG_L=$E2E_TMP/zfs-local.log
LOG_R=$R_TMP/zfs-remote.log
SSHD_PID=""
SSH_PORT=""
SSH_DEST=root@localhost
SSH_OPTS=()
mkdir -p "$R_TMP/run" "$R_TMP/cache" "$BIN_L" "$BIN_R" "$R_TMP/ssh"
: >"$LOG_L"
: >"$LOG_R"

# rtarn ARGS...: tarn against the second daemon (output in $OUT/$ERR, $RC)
rtarn() {
	run env "${R_ENV[@]}" "$TARN" "$@"
}
rtarn_ok() {
	rtarn "$@"
	if [ "$RC" -ne 0 ]; then
		fail "expected success (rc $RC): remote tarn $*"
		show_output
		return 1
	fi
	pass
}

# remote_daemon_pid: the second daemon's PID when its PID file names a
# tarnd serving the second socket
remote_daemon_pid() {
	local TARN_RUNDIR="$R_TMP/run" TARN_SOCKET="$R_TMP/run/tarnd.sock"
	daemon_pid
}

# remote_stop_daemon [SIGNAL]: stop the second daemon and wait until it is gone
remote_stop_daemon() {
	local TARN_RUNDIR="$R_TMP/run" TARN_SOCKET="$R_TMP/run/tarnd.sock"
	stop_daemon "${1:-TERM}"
}

# descendants PID: every process below PID (children, their children...)
descendants() {
	local table todo=("$1") p
	table=$(cat /proc/[0-9]*/stat 2>/dev/null | sed -E 's/^([0-9]+) \(.*\) [A-Za-z] ([0-9]+) .*/\1 \2/')
	while [ ${#todo[@]} -gt 0 ]; do
		p=${todo[0]}
		todo=("${todo[@]:1}")
		for k in $(awk -v p="$p" '$2 == p { print $1 }' <<<"$table"); do
			echo "$k"
			todo+=("$k")
		done
	done
}

remote_cleanup() {
	local rc=$? name p
	trap - EXIT
	if [ -n "$SSHD_PID" ]; then
		# the listener first (no new sessions), then the sessions it forked
		local kids
		kids=$(descendants "$SSHD_PID")
		kill -TERM "$SSHD_PID" 2>/dev/null
		for p in $kids; do kill -TERM "$p" 2>/dev/null; done
		wait "$SSHD_PID" 2>/dev/null
	fi
	rm -f /tmp/syncoid-"$SSH_DEST"-* 2>/dev/null
	if [ -x "$TARN" ] && [ -f "$R_TMP/cache/tarn.cache" ]; then
		for name in $(awk '$1 == "pool" { print $3 }' "$R_TMP/cache/tarn.cache" 2>/dev/null); do
			timeout -k 5 30 env "${R_ENV[@]}" "$TARN" pool destroy -f "$name" >/dev/null 2>&1
		done
	fi
	remote_stop_daemon TERM
	if [ -f "$R_TMP/run/tarnd.log" ] &&
	    grep -Eq "panic|Sanitizer|runtime error" "$R_TMP/run/tarnd.log"; then
		echo "FAIL: the second daemon's log shows a crash:" >&2
		grep -E -A20 "panic|Sanitizer|runtime error" "$R_TMP/run/tarnd.log" |
			head -n 60 | sed 's/^/  tarnd.log (remote): /' >&2
		[ "$rc" -eq 0 ] && rc=1
	fi
	(exit $rc)
	e2e_cleanup
}
trap remote_cleanup EXIT

# bin_links DIR LOG: zfs, zpool and tarn in DIR, each a wrapper that runs
# a link to $TARN of that name and logs "STATUS<TAB>NAME ARGS" to LOG
bin_links() {
	local dir=$1 log=$2 cmd
	mkdir -p "$dir/links"
	for cmd in zfs zpool tarn; do
		ln -sf "$TARN" "$dir/links/$cmd"
		cat >"$dir/$cmd" <<EOF
#!/bin/bash
err="$dir/.err.\$\$"
"$dir/links/$cmd" "\$@" 2>"\$err"
rc=\$?
cat "\$err" >&2
why=
[ \$rc -ne 0 ] && why="\$(printf '\t# %s' "\$(head -n 1 "\$err")")"
printf '%s\t%s%s\n' "\$rc" "$cmd \$*" "\$why" >>"$log"
rm -f "\$err"
exit \$rc
EOF
		chmod +x "$dir/$cmd"
	done
}
bin_links "$BIN_L" "$LOG_L"
bin_links "$BIN_R" "$LOG_R"
export PATH="$BIN_L:$PATH"

# free_port: a TCP port of 127.0.0.1 nobody listens on now
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ssh_start: keys, config and sshd -D in the background; waits until a
# command goes through (ssh ... true), else fails the test
ssh_start() {
	local d=$R_TMP/ssh i
	ssh-keygen -q -t ed25519 -N '' -C tarn-e2e-host -f "$d/host_key" || fail "ssh-keygen (host)"
	ssh-keygen -q -t ed25519 -N '' -C tarn-e2e-client -f "$d/client_key" || fail "ssh-keygen (client)"
	cat >"$R_TMP/ssh-session" <<EOF
#!/bin/bash
# forced command of the test's key: the "remote host" is the second daemon
export TARN_SOCKET="$R_TMP/run/tarnd.sock" TARN_RUNDIR="$R_TMP/run"
export TARN_CACHEFILE="$R_TMP/cache/tarn.cache" TARN_AUTOMOUNT="${TARN_AUTOMOUNT:-0}"
export PATH="$BIN_R:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
printf '%s\n' "\$SSH_ORIGINAL_COMMAND" >>"$R_TMP/ssh-commands.log"
[ -n "\$SSH_ORIGINAL_COMMAND" ] || { echo "no command given" >&2; exit 1; }
exec bash -c "\$SSH_ORIGINAL_COMMAND"
EOF
	chmod +x "$R_TMP/ssh-session"
	printf 'command="%s",no-pty,no-port-forwarding,no-agent-forwarding,no-X11-forwarding %s\n' \
		"$R_TMP/ssh-session" "$(cat "$d/client_key.pub")" >"$d/authorized_keys"
	SSH_PORT=$(free_port)
	cat >"$d/sshd_config" <<EOF
Port $SSH_PORT
ListenAddress 127.0.0.1
HostKey $d/host_key
PidFile $d/sshd.pid
AuthorizedKeysFile $d/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
MaxSessions 50
MaxStartups 50
EOF
	# sshd's privilege separation directory (Debian's service makes it)
	[ -d /run/sshd ] || mkdir -p -m 0755 /run/sshd
	/usr/sbin/sshd -D -e -f "$d/sshd_config" >>"$R_TMP/sshd.log" 2>&1 &
	SSHD_PID=$!
	SSH_OPTS=(-p "$SSH_PORT" -i "$d/client_key" -o IdentitiesOnly=yes -o BatchMode=yes
	    -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR
	    -o AddressFamily=inet -o ConnectTimeout=10)
	for ((i = 0; i < 100; i++)); do
		if ! kill -0 "$SSHD_PID" 2>/dev/null; then
			fail "sshd exited at start:"
			sed 's/^/  sshd: /' "$R_TMP/sshd.log" >&2
			SSHD_PID=""
			return 1
		fi
		timeout 10 ssh "${SSH_OPTS[@]}" "$SSH_DEST" true >/dev/null 2>&1 && { pass; return 0; }
		sleep 0.1
	done
	fail "no ssh session to sshd on port $SSH_PORT within 10 s"
	sed 's/^/  sshd: /' "$R_TMP/sshd.log" >&2
	return 1
}

# rssh COMMAND...: run a command line on the "remote host" (output in $OUT/$ERR, $RC)
rssh() {
	run ssh "${SSH_OPTS[@]}" "$SSH_DEST" "$@"
}

# log_failures LOG WHAT: every call logged in LOG succeeded
log_failures() {
	local bad
	bad=$(awk -F'\t' '$1 != 0' "$1")
	[ -z "$bad" ] && pass || fail "$2 commands that failed: $(printf '%s' "$bad" | tr '\n' ';')"
}

# tree_equal DIR1 DIR2 WHAT: the same names, types, modes, sizes and
# contents under both (the .zfs directories left out)
tree_equal() {
	local a=$1 b=$2
	if [ ! -d "$a" ] || [ ! -d "$b" ]; then
		fail "$3: cannot compare: $a or $b is not a directory"
		return 1
	fi
	if diff -r --no-dereference -x .zfs "$a" "$b" >"$E2E_TMP/.treediff" 2>&1 &&
	    [ "$(cd "$a" && find . -path ./.zfs -prune -o -printf '%P %y %m %s\n' | sort)" = \
	      "$(cd "$b" && find . -path ./.zfs -prune -o -printf '%P %y %m %s\n' | sort)" ]; then
		pass
	else
		fail "$3: $a and $b differ:"
		head -n 20 "$E2E_TMP/.treediff" | sed 's/^/  /' >&2
		return 1
	fi
}
