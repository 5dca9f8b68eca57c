#!/bin/bash
# syncoid.sh — Debian's syncoid (/usr/sbin/syncoid, perl, from the sanoid
# package) replicates Tarn file systems unchanged, through the zfs/zpool
# links first in PATH, over a real ssh connection to a second tarnd that
# stands for another host (remote.bash: sshd from openssh-server on a free
# port, throwaway keys, a forced command that points zfs at the second
# daemon):
#  - `syncoid sp/src root@localhost:dp/dst`: the first run sends a full
#    stream, the second (after files changed) an incremental one; after
#    each the target's files equal the source's, and syncoid's older sync
#    snapshot is pruned on both sides;
#  - local to local (`syncoid sp/src sp/copy`), full then incremental;
#  - resume: a syncoid run whose ssh link breaks after 2 MiB of an 8 MiB
#    increment fails and leaves receive_resume_token on the target; the
#    next run says it resumes (`zfs send -t`) and completes it;
#  - --no-sync-snap sends the newest existing snapshot and takes none;
#  - --recursive replicates a tree with a child.
# Every zfs/zpool call is logged (by wrappers around the links, on both
# sides) with its status: none failed except the ones syncoid expects to
# (the target-exists probe, and the receive of the broken link), and the
# commands syncoid ran are listed at the end.
#
# Cleanup (remote.bash, lib.sh): both daemons' pools destroyed, both
# daemons stopped by PID, sshd and its sessions killed by PID, syncoid's
# ssh control sockets removed, the temp dir removed.
. "$(dirname "$0")/lib.sh"
describe "syncoid over ssh to a second tarnd and locally: full, incremental, resume, -r"
require_daemon_mounts
require_cmd syncoid sanoid
require_cmd sshd openssh-server
require_cmd ssh openssh-client
require_cmd ssh-keygen openssh-client
. "$(dirname "$0")/remote.bash"
E2E_CMD_TIMEOUT=120

ssh_start || e2e_done
MNT2=$E2E_TMP/mnt2
mkdevs 1 256M s
tarn_ok pool create -m "$MNT" sp "${DEV[0]}"
mkdevs 1 256M r
rtarn_ok pool create -m "$MNT2" dp "${DEV[0]}"
# over ssh, zfs is the second daemon's
rssh zfs list -H -o name
[ "$RC" -eq 0 ] && [ "$(cat "$OUT")" = dp ] && pass ||
	{ fail "zfs list over ssh does not show the second daemon's pool alone"; show_output; }

tarn_ok fs create sp/src
run "$TARN" fs send sp/src@none
if grep -q "unrecognized command" "$ERR"; then
	skip "this build has no zfs send yet"
fi

# fill DIR SEED: a few files, a directory, a symlink, an empty file
fill() {
	mkdir -p "$1/dir/sub"
	head -c 300000 /dev/urandom >"$1/big.bin"
	seq 1 20000 >"$1/dir/numbers.txt"
	printf 'hello %s\n' "$2" >"$1/dir/sub/hello"
	: >"$1/empty"
	ln -sf dir/numbers.txt "$1/link"
	chmod 640 "$1/dir/numbers.txt"
}
# mounted SIDE FS DIR: DIR is FS's mount (mounted now if it is not)
mounted() {
	mountpoint -q "$3" && return 0
	echo "# $2 was not mounted after the receive; mounting it"
	if [ "$1" = local ]; then tarn fs mount "$2"; else rtarn fs mount "$2"; fi
	mountpoint -q "$3"
}
# snaps SIDE FS: its snapshots' names after the '@', oldest first
snaps() {
	if [ "$1" = local ]; then
		timeout 30 "$TARN" fs list -H -o name -t snapshot -s createtxg -d 1 "$2"
	else
		timeout 30 env "${R_ENV[@]}" "$TARN" fs list -H -o name -t snapshot -s createtxg -d 1 "$2"
	fi 2>/dev/null | sed 's/^[^@]*@//'
}
SYNCOID_OPTS=(--sshport "$SSH_PORT" --sshkey "$R_TMP/ssh/client_key"
    --sshoption StrictHostKeyChecking=no --sshoption UserKnownHostsFile=/dev/null
    --sshoption LogLevel=ERROR --sshoption AddressFamily=inet --sshoption BatchMode=yes)
# syncoid_run ARGS...: syncoid in a process group of its own, output in
# $OUT/$ERR, status in $RC; after $E2E_CMD_TIMEOUT s the whole group (its
# pipeline too) is killed by its id and RC is 124
syncoid_run() {
	local pid i
	setsid syncoid "$@" </dev/null >"$OUT" 2>"$ERR" &
	pid=$!
	for ((i = 0; i < E2E_CMD_TIMEOUT * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "  (timed out after ${E2E_CMD_TIMEOUT}s: syncoid $*)" >&2
		kill -TERM -- -"$pid" 2>/dev/null
		sleep 1
		kill -KILL -- -"$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		RC=124
		return 0
	fi
	wait "$pid"
	RC=$?
}
# syncoid_ok WHAT ARGS...: a syncoid run that must succeed without complaint
syncoid_ok() {
	local what=$1
	shift
	syncoid_run "${SYNCOID_OPTS[@]}" "$@"
	if [ "$RC" -ne 0 ] || grep -Eq "CRITICAL|ERROR|WARN: ZFS resume" "$OUT" "$ERR"; then
		fail "$what: syncoid $* (rc $RC)"
		show_output
		return 1
	fi
	pass
}

# syncoid sends increments with -I (every snapshot in between: a package
# stream); a build whose send has no -I yet runs it with --no-stream (-i)
tarn_ok fs snapshot sp/src@probe1
tarn_ok fs snapshot sp/src@probe2
run "$TARN" fs send -I sp/src@probe1 sp/src@probe2
if [ "$RC" -ne 0 ]; then
	echo "# this build's zfs send -I fails ($(head -n 1 "$ERR")): syncoid runs with --no-stream"
	SYNCOID_OPTS+=(--no-stream)
fi
tarn_ok fs destroy sp/src@probe1,probe2

fill "$MNT/src" one
sync -f "$MNT/src"

# ---- over ssh: full
syncoid_ok "first run over ssh" sp/src root@localhost:dp/dst || e2e_done   # the rest builds on it
grep -Eq "(Sending oldest|sending newest) full snapshot sp/src@syncoid_" "$OUT" && pass ||
	{ fail "the first run did not send a full stream"; show_output; }
mounted remote dp/dst "$MNT2/dst" && tree_equal "$MNT/src" "$MNT2/dst" "after the full run"
S1=$(snaps local sp/src | grep '^syncoid_')
[ "$(snaps remote dp/dst)" = "$S1" ] && pass ||
	fail "target snapshots '$(snaps remote dp/dst | tr '\n' ' ')', not the sync snapshot '$S1'"

# ---- over ssh: incremental after changes
printf 'changed\n' >>"$MNT/src/dir/sub/hello"
rm "$MNT/src/empty"
head -c 70000 /dev/urandom >"$MNT/src/new.bin"
sync -f "$MNT/src"
sleep 1.1       # syncoid's snapshot names are by the second
syncoid_ok "second run over ssh" sp/src root@localhost:dp/dst
grep -q "Sending incremental sp/src@syncoid_" "$OUT" && pass ||
	{ fail "the second run did not send an incremental stream"; show_output; }
tree_equal "$MNT/src" "$MNT2/dst" "after the incremental run"
S2=$(snaps local sp/src | grep '^syncoid_')
[ "$(echo "$S2" | wc -l)" -eq 1 ] && [ "$S2" != "$S1" ] && pass ||
	fail "source sync snapshots after run 2: $S2 (the old one is pruned, one new)"
[ "$(snaps remote dp/dst)" = "$S2" ] && pass ||
	fail "target snapshots after run 2: $(snaps remote dp/dst | tr '\n' ' ')"

# ---- resume: the link breaks after 2 MiB of an 8 MiB increment
head -c $((8 << 20)) /dev/urandom >"$MNT/src/huge.bin"
sync -f "$MNT/src"
sleep 1.1
mkdir -p "$E2E_TMP/cutssh"
cat >"$E2E_TMP/cutssh/ssh" <<'EOF'
#!/bin/bash
# ssh whose link breaks after $SSH_CUT bytes of a receive's input
case "$*" in
*"zfs receive "*)
	head -c "$SSH_CUT" | /usr/bin/ssh "$@"
	exit 255 ;;
esac
exec /usr/bin/ssh "$@"
EOF
chmod +x "$E2E_TMP/cutssh/ssh"
PATH="$E2E_TMP/cutssh:$PATH" SSH_CUT=$((2 << 20)) \
	syncoid_run "${SYNCOID_OPTS[@]}" --compress=none sp/src root@localhost:dp/dst
[ "$RC" -ne 0 ] && pass || { fail "the run with the broken link succeeded"; show_output; }
rssh zfs get -H -o value receive_resume_token dp/dst
TOKEN=$(cat "$OUT")
[ "$RC" -eq 0 ] && [ -n "$TOKEN" ] && [ "$TOKEN" != - ] && pass ||
	{ fail "no receive_resume_token on dp/dst after the broken run"; show_output; }
[ ! -e "$MNT2/dst/huge.bin" ] && pass || fail "half a stream shows on the target"
syncoid_ok "run after the broken one" sp/src root@localhost:dp/dst
grep -q "Resuming interrupted zfs send/receive" "$OUT" && pass ||
	{ fail "syncoid did not resume"; show_output; }
grep -Eq "zfs send .*-t [0-9a-zA-Z]" "$LOG_L" && pass || fail "no 'zfs send -t' was run"
rssh zfs get -H -o value receive_resume_token dp/dst
[ "$RC" -ne 0 ] || [ "$(cat "$OUT")" = - ] && pass || fail "the token is still there: $(cat "$OUT")"
tree_equal "$MNT/src" "$MNT2/dst" "after the resumed run"
cmp -s "$MNT/src/huge.bin" "$MNT2/dst/huge.bin" && pass || fail "huge.bin differs after resume"

# ---- --no-sync-snap: the newest existing snapshot, none taken
printf 'manual\n' >"$MNT/src/manual"
sync -f "$MNT/src"
tarn_ok fs snapshot sp/src@manual1
before=$(snaps local sp/src | grep -c '^syncoid_')
syncoid_ok "--no-sync-snap run" --no-sync-snap sp/src root@localhost:dp/dst
[ "$(snaps local sp/src | grep -c '^syncoid_')" -eq "$before" ] && pass ||
	fail "--no-sync-snap took a snapshot"
[ "$(snaps remote dp/dst | tail -n 1)" = manual1 ] && pass ||
	fail "target's newest snapshot is $(snaps remote dp/dst | tail -n 1), not manual1"
tree_equal "$MNT/src" "$MNT2/dst" "after --no-sync-snap"

# ---- --recursive: a tree with a child
tarn_ok fs create sp/tree
tarn_ok fs create sp/tree/child
fill "$MNT/tree" parent
fill "$MNT/tree/child" child
sync -f "$MNT/tree" "$MNT/tree/child"
syncoid_ok "--recursive run" --recursive sp/tree root@localhost:dp/tree
rtarn fs list -H -o name -r dp/tree
[ "$(cat "$OUT" | tr '\n' ' ')" = "dp/tree dp/tree/child " ] && pass ||
	{ fail "dp/tree after -r"; show_output; }
mounted remote dp/tree/child "$MNT2/tree/child" &&
	tree_equal "$MNT/tree/child" "$MNT2/tree/child" "the child after -r"
mounted remote dp/tree "$MNT2/tree" && diff -r -x child -x .zfs "$MNT/tree" "$MNT2/tree" >/dev/null &&
	pass || fail "the parent after -r differs"

# ---- local to local (last: both ends in one daemon; mbuffer, which
# syncoid puts between them when it is installed, holds the stream's last
# block until the send has exited)
syncoid_ok "local run" sp/src sp/copy
mounted local sp/copy "$MNT/copy" && tree_equal "$MNT/src" "$MNT/copy" "local copy, full"
printf 'third\n' >"$MNT/src/third"
sync -f "$MNT/src"
sleep 1.1
syncoid_ok "second local run" sp/src sp/copy
grep -q "Sending incremental" "$OUT" && pass || { fail "local run 2 not incremental"; show_output; }
tree_equal "$MNT/src" "$MNT/copy" "local copy, incremental"

# ---- what syncoid ran; only the failures it expects
bad=$(awk -F'\t' '$1 != 0' "$LOG_L" "$LOG_R" | grep -Ev $'\tzfs get -H name |\tzfs receive ')
[ -z "$bad" ] && pass || fail "zfs commands syncoid ran failed: $(echo "$bad" | tr '\n' ';')"
echo "# the zfs/zpool commands syncoid ran (count, local then remote):"
for log in "$LOG_L" "$LOG_R"; do
	cut -f2 "$log" | sed -E 's/([sd]p\/[^@ ]*)@[^ ]*/\1@SNAP/g; s/(send( -nvP)?) -t [^ ]+/\1 -t TOKEN/' |
		sort | uniq -c |
		sed "s|^|#   $( [ "$log" = "$LOG_L" ] && echo local || echo remote): |"
done
e2e_done
