#!/bin/bash
# fs_replicate.sh — `tarn fs replicate SRC [[user@]host:]DST`, locally and
# over a real ssh connection to a second tarnd (remote.bash):
#  - bad input changes nothing: a missing SRC, an unreachable host, an
#    unknown host each give one line "cannot replicate ...", exit 1, and no
#    snapshot is taken; usage errors exit 2;
#  - local and over ssh: the first run sends a full stream, the next ones
#    incremental streams after changes; the target's files equal the
#    source's after each; a run with nothing new is "up to date";
#  - a one-file change replicated over ssh, timed (printed);
#  - -n changes nothing;
#  - resume: a run whose ssh link breaks after 3 MiB of a 12 MiB increment
#    exits 1 with one line and leaves receive_resume_token on the target;
#    the next run resumes it (send -t) and goes on; files equal; a first
#    full transfer broken off is resumed too;
#  - a one-file change replicated locally, timed (printed);
#  - pruning: with --keep 3 after five runs, three replicate_ snapshots on
#    each side, the newest the same snapshot (guid); other snapshots stay;
#  - --bookmark: after the source's replicate_ snapshots are destroyed,
#    the next run sends from the bookmark;
#  - -r: a tree with a child, one file system at a time.
#
# Cleanup (remote.bash, lib.sh): both daemons' pools destroyed, both
# daemons stopped by PID, sshd and its sessions killed by PID, temp dir.
. "$(dirname "$0")/lib.sh"
describe "tarn fs replicate: local and over ssh, incremental, resume, pruning, bad input"
require_daemon_mounts
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
tarn_ok fs create sp/src
tarn_ok fs create sp/empty

RSSH=(--ssh-port "$SSH_PORT" --ssh-key "$R_TMP/ssh/client_key"
    --ssh-opt StrictHostKeyChecking=no --ssh-opt UserKnownHostsFile=/dev/null
    --ssh-opt LogLevel=ERROR --ssh-opt AddressFamily=inet)
# snaps SIDE FS: its snapshots (and #bookmarks) after the fs name, oldest first
snaps() {
	local t=${3:-snapshot}
	if [ "$1" = local ]; then
		timeout 30 "$TARN" fs list -H -o name -t "$t" -s createtxg -d 1 "$2"
	else
		timeout 30 env "${R_ENV[@]}" "$TARN" fs list -H -o name -t "$t" -s createtxg -d 1 "$2"
	fi 2>/dev/null | sed 's/^[^@#]*//'
}
# guid SIDE NAME
guid() {
	if [ "$1" = local ]; then
		timeout 30 "$TARN" fs get -H -p -o value guid "$2"
	else
		timeout 30 env "${R_ENV[@]}" "$TARN" fs get -H -p -o value guid "$2"
	fi 2>/dev/null
}
# mounted SIDE FS DIR: DIR is FS's mount (mounted now if it is not)
mounted() {
	mountpoint -q "$3" && return 0
	echo "# $2 was not mounted after the receive; mounting it"
	if [ "$1" = local ]; then tarn fs mount "$2"; else rtarn fs mount "$2"; fi
	mountpoint -q "$3"
}
fill() {
	mkdir -p "$1/dir/sub"
	head -c 200000 /dev/urandom >"$1/big.bin"
	seq 1 20000 >"$1/dir/numbers.txt"
	printf 'hello %s\n' "$2" >"$1/dir/sub/hello"
	ln -sf dir/numbers.txt "$1/link"
}
# rep_ok WHAT ARGS...: a replicate run that must succeed, nothing on stderr
rep_ok() {
	local what=$1
	shift
	run "$TARN" fs replicate "$@"
	if [ "$RC" -ne 0 ] || [ -s "$ERR" ]; then
		fail "$what: tarn fs replicate $* (rc $RC)"
		show_output
		return 1
	fi
	pass
}

# ---- bad input: one line, exit 1 (2: usage), nothing changed
DEADPORT=$(free_port)
tarn_err 1 "^cannot replicate 'sp/nope': dataset does not exist$" fs replicate sp/nope sp/x
tarn_err 1 "^cannot replicate 'sp/src' to 'root@127.0.0.1:dp/dst': ssh: connect to host 127.0.0.1 port $DEADPORT: Connection refused$" \
	fs replicate --ssh-port "$DEADPORT" --ssh-opt ConnectTimeout=5 sp/src root@127.0.0.1:dp/dst
tarn_err 1 "^cannot replicate 'sp/src' to 'root@no-such-host.invalid:dp/dst': ssh: Could not resolve hostname" \
	fs replicate --ssh-opt ConnectTimeout=5 sp/src root@no-such-host.invalid:dp/dst
tarn_err 1 "^cannot replicate 'sp/empty': it has no snapshot to send" fs replicate --no-snapshot sp/empty sp/x
[ -z "$(snaps local sp/src)" ] && pass || fail "a failed run left snapshots: $(snaps local sp/src)"
tarn_err 2 "^missing destination argument" fs replicate sp/src
tarn_err 2 "^invalid --keep '0'" fs replicate --keep 0 sp/src sp/x
tarn_err 2 "^invalid source name 'sp/src@x'" fs replicate sp/src@x sp/x
tarn_err 2 "^invalid option" fs replicate --bogus sp/src sp/x
tarn_err 2 "^invalid host" fs replicate sp/src :dp/dst

run "$TARN" fs send sp/src@none
if grep -q "unrecognized command" "$ERR"; then
	skip "this build has no zfs send yet"
fi

fill "$MNT/src" one
sync -f "$MNT/src"

# ---- local: full, then incremental
rep_ok "first local run" -v sp/src sp/copy || e2e_done     # the rest builds on it
grep -q "^send full sp/src@replicate_" "$OUT" && pass || { fail "first run not full"; show_output; }
mounted local sp/copy "$MNT/copy" && tree_equal "$MNT/src" "$MNT/copy" "local, after the full run"
[ "$(snaps local sp/copy)" = "$(snaps local sp/src)" ] && pass ||
	fail "snapshots: source $(snaps local sp/src), copy $(snaps local sp/copy)"
printf 'two\n' >>"$MNT/src/dir/sub/hello"
rm "$MNT/src/link"
head -c 50000 /dev/urandom >"$MNT/src/new.bin"
sync -f "$MNT/src"
rep_ok "second local run" -v sp/src sp/copy
grep -q "^send incremental sp/src@replicate_.* from @replicate_" "$OUT" && pass ||
	{ fail "second run not incremental"; show_output; }
tree_equal "$MNT/src" "$MNT/copy" "local, after the incremental run"

# ---- -n: says what it would do, changes nothing
before=$(snaps local sp/src | wc -l)
rep_ok "dry run" -n sp/src sp/copy
grep -q "^would send incremental" "$OUT" && pass || { fail "-n output"; show_output; }
[ "$(snaps local sp/src | wc -l)" -eq "$before" ] && pass || fail "-n took a snapshot"

# ---- over ssh: full, incremental, up to date
rep_ok "first run over ssh" -v "${RSSH[@]}" sp/src root@localhost:dp/dst
grep -q "^send full sp/src@replicate_" "$OUT" && pass || { fail "first ssh run not full"; show_output; }
mounted remote dp/dst "$MNT2/dst" && tree_equal "$MNT/src" "$MNT2/dst" "ssh, after the full run"
printf 'three\n' >"$MNT/src/three"
chmod 600 "$MNT/src/three"
sync -f "$MNT/src"
rep_ok "second run over ssh" -v "${RSSH[@]}" sp/src root@localhost:dp/dst
grep -q "^send incremental" "$OUT" && pass || { fail "second ssh run not incremental"; show_output; }
tree_equal "$MNT/src" "$MNT2/dst" "ssh, after the incremental run"
rep_ok "run with nothing new" -v --no-snapshot "${RSSH[@]}" sp/src root@localhost:dp/dst
grep -q "is up to date" "$OUT" && pass || { fail "no 'up to date'"; show_output; }

# ---- a one-file change over ssh, timed
printf 'one more line\n' >>"$MNT/src/dir/numbers.txt"
sync -f "$MNT/src"
t0=$(date +%s%N)
rep_ok "one-file change over ssh" -v "${RSSH[@]}" sp/src root@localhost:dp/dst
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
echo "# a one-file change replicated over ssh in ${ms} ms end to end" \
	"($(grep -o 'in [0-9.]* s' "$OUT" | tail -n 1) for the transfer itself)"
[ "$(tail -n 1 "$MNT2/dst/dir/numbers.txt")" = "one more line" ] && pass ||
	fail "the change did not arrive"
[ "$ms" -lt 30000 ] && pass || fail "a one-file change took ${ms} ms"

# ---- resume: the link breaks after 3 MiB of a 12 MiB increment
head -c $((12 << 20)) /dev/urandom >"$MNT/src/huge.bin"
sync -f "$MNT/src"
mkdir -p "$E2E_TMP/cutssh"
cat >"$E2E_TMP/cutssh/ssh" <<'EOF'
#!/bin/bash
# ssh whose link breaks after $SSH_CUT bytes of a receive's input
case "$*" in
*"fs receive -s"*)
	head -c "$SSH_CUT" | /usr/bin/ssh "$@"
	exit 255 ;;
esac
exec /usr/bin/ssh "$@"
EOF
chmod +x "$E2E_TMP/cutssh/ssh"
run env PATH="$E2E_TMP/cutssh:$PATH" SSH_CUT=$((3 << 20)) \
	"$TARN" fs replicate "${RSSH[@]}" sp/src root@localhost:dp/dst
[ "$RC" -eq 1 ] && [ "$(wc -l <"$ERR")" -eq 1 ] &&
	grep -q "^cannot replicate 'sp/src' to 'root@localhost:dp/dst': " "$ERR" && pass ||
	{ fail "the run with the broken link: rc $RC, not one 'cannot replicate' line"; show_output; }
rssh tarn fs get -H -o value receive_resume_token dp/dst
[ "$RC" -eq 0 ] && [ -n "$(cat "$OUT")" ] && [ "$(cat "$OUT")" != - ] && pass ||
	{ fail "no receive_resume_token on dp/dst after the broken run"; show_output; }
[ ! -e "$MNT2/dst/huge.bin" ] && pass || fail "half a stream shows on the target"
rep_ok "run after the broken one" -v "${RSSH[@]}" sp/src root@localhost:dp/dst
grep -q "^resumed into root@localhost:dp/dst" "$OUT" && pass || { fail "it did not resume"; show_output; }
rssh tarn fs get -H -o value receive_resume_token dp/dst
[ "$(cat "$OUT")" = - ] && pass || fail "the token is still there: $(cat "$OUT")"
tree_equal "$MNT/src" "$MNT2/dst" "after the resumed run"
cmp -s "$MNT/src/huge.bin" "$MNT2/dst/huge.bin" && pass || fail "huge.bin differs after resume"

# ---- a first (full) transfer broken off: the new file system's partial
# state is resumed by the next run
tarn_ok fs snapshot sp/src@cut
run bash -c "'$TARN' fs send sp/src@cut | head -c $((1 << 20)) | '$TARN' fs receive -s sp/fresh"
tarn fs get -H -o value receive_resume_token sp/fresh
[ "$RC" -eq 0 ] && [ "$(cat "$OUT")" != - ] && pass || { fail "no token on sp/fresh"; show_output; }
rep_ok "run after a broken full transfer" -v --no-snapshot sp/src sp/fresh
grep -q "^resumed into sp/fresh" "$OUT" && pass || { fail "the full transfer was not resumed"; show_output; }
mounted local sp/fresh "$MNT/fresh" && tree_equal "$MNT/src" "$MNT/fresh" "after the resumed full transfer"
tarn_ok fs destroy -r sp/fresh
tarn_ok fs destroy sp/src@cut

# ---- a one-file change, locally, timed
printf 'local line\n' >>"$MNT/src/dir/numbers.txt"
sync -f "$MNT/src"
t0=$(date +%s%N)
rep_ok "one-file change locally" -v sp/src sp/copy
t1=$(date +%s%N)
echo "# a one-file change replicated locally in $(((t1 - t0) / 1000000)) ms end to end" \
	"($(grep -o 'in [0-9.]* s' "$OUT" | tail -n 1) for the transfer itself)"
[ "$(tail -n 1 "$MNT/copy/dir/numbers.txt")" = "local line" ] && pass || fail "the local change did not arrive"

# ---- pruning: --keep 3 after five runs; other snapshots stay
tarn_ok fs snapshot sp/src@keepme
for i in 1 2 3 4 5; do
	printf '%s\n' "$i" >"$MNT/src/run"
	sync -f "$MNT/src"
	rep_ok "pruning run $i" --keep 3 sp/src sp/copy
done
ns=$(snaps local sp/src | grep -c '^@replicate_')
nc=$(snaps local sp/copy | grep -c '^@replicate_')
[ "$ns" -eq 3 ] && [ "$nc" -eq 3 ] && pass ||
	fail "--keep 3: $ns replicate_ snapshots on the source, $nc on the copy"
last=$(snaps local sp/src | grep '^@replicate_' | tail -n 1)
[ -n "$last" ] && [ "$(guid local "sp/src$last")" = "$(guid local "sp/copy$last")" ] && pass ||
	fail "the newest replicate_ snapshot $last is not the same on both sides"
snaps local sp/src | grep -qx '@keepme' && pass || fail "pruning took sp/src@keepme"
tree_equal "$MNT/src" "$MNT/copy" "after the pruning runs"

# ---- --bookmark: the source's snapshots may go, the bookmark is the base
rep_ok "bookmark run" --bookmark sp/src sp/copy
snaps local sp/src bookmark | grep -q '^#replicate_' && pass || fail "--bookmark left no bookmark"
for s in $(snaps local sp/src | grep '^@replicate_'); do
	tarn_ok fs destroy "sp/src$s"
done
printf 'after bookmark\n' >"$MNT/src/bm"
sync -f "$MNT/src"
rep_ok "run from the bookmark" -v --bookmark sp/src sp/copy
grep -q "from #replicate_" "$OUT" && pass || { fail "not sent from the bookmark"; show_output; }
tree_equal "$MNT/src" "$MNT/copy" "after the run from a bookmark"

# ---- -r: a tree with a child, over ssh
tarn_ok fs create sp/tree
tarn_ok fs create sp/tree/child
fill "$MNT/tree" parent
fill "$MNT/tree/child" child
sync -f "$MNT/tree" "$MNT/tree/child"
rep_ok "-r over ssh" -r "${RSSH[@]}" sp/tree root@localhost:dp/tree
rtarn fs list -H -o name -r dp/tree
[ "$(tr '\n' ' ' <"$OUT")" = "dp/tree dp/tree/child " ] && pass || { fail "dp/tree after -r"; show_output; }
mounted remote dp/tree/child "$MNT2/tree/child" &&
	tree_equal "$MNT/tree/child" "$MNT2/tree/child" "the child after -r"
e2e_done
