#!/bin/bash
# Commands in the daemon see the client's working directory: relative
# device paths and import -d directories mean what they mean in-process,
# also for two clients in different directories at once, and also when
# the daemon cannot give each thread its own cwd (TARND_NO_UNSHARE=1:
# arguments are made absolute from the client's PWD).  And a command's
# stdout, stderr and exit status through the daemon are byte for byte
# those of the same command run in-process (TARN_NO_DAEMON=1).
. "$(dirname "$0")/lib.sh"
describe "relative paths, per-client cwd, identical output in and out of the daemon"
require_engine
unset TARN_NO_DAEMON

mkdevs 8
mkdir -p "$DEVDIR/sub"
cd "$DEVDIR" || exit 1

# --- relative paths, with and without a per-thread cwd
for mode in unshare rewrite; do
	stop_daemon TERM
	if [ "$mode" = rewrite ]; then export TARND_NO_UNSHARE=1; fi
	tarn_ok pool create rel mirror ./d0 ../dev/d1
	tarn_ok pool status rel
	out_has "^	    $DEVDIR/d0 +ONLINE"
	out_has "^	    $DEVDIR/d1 +ONLINE"
	tarn_ok pool export rel
	(cd "$E2E_TMP" && run "$TARN" pool import -d dev)
	out_has "^   pool: rel$"
	(cd "$E2E_TMP" && run "$TARN" pool import -d ./dev rel)
	tarn_ok pool status -x rel
	out_is "pool 'rel' is healthy"
	tarn_ok pool destroy rel
	# a relative path that does not exist is named as in-process
	TARN_NO_DAEMON=1 run "$TARN" pool create bad ./nonexistent
	cp "$ERR" "$E2E_TMP/inproc.err"
	tarn_err 1 "^cannot create 'bad': " pool create bad ./nonexistent
	cmp -s "$ERR" "$E2E_TMP/inproc.err" && pass ||
		fail "$mode: './nonexistent': '$(cat "$ERR")' vs '$(cat "$E2E_TMP/inproc.err")'"
	unset TARND_NO_UNSHARE
done

# --- two clients in two directories at once
stop_daemon TERM
cp --sparse=always "$DEVDIR/d2" "$DEVDIR/sub/s0"
cp --sparse=always "$DEVDIR/d3" "$DEVDIR/sub/s1"
for k in 1 2 3; do
	(cd "$DEVDIR" && "$TARN" pool create "top$k" ./d4) >"$E2E_TMP/top.out" 2>&1 &
	a=$!
	(cd "$DEVDIR/sub" && "$TARN" pool create "sub$k" ./s0) >"$E2E_TMP/sub.out" 2>&1 &
	b=$!
	wait "$a" && pass || { fail "create top$k"; cat "$E2E_TMP/top.out" >&2; }
	wait "$b" && pass || { fail "create sub$k"; cat "$E2E_TMP/sub.out" >&2; }
	tarn_ok pool status "top$k"
	out_has "^	  $DEVDIR/d4 +ONLINE"
	tarn_ok pool status "sub$k"
	out_has "^	  $DEVDIR/sub/s0 +ONLINE"
	tarn_ok pool destroy "top$k"
	tarn_ok pool destroy "sub$k"
done

# --- the same output in-process and through the daemon
tarn_ok pool create same raidz1 ./d5 ./d6 ./d7
n=0
while IFS= read -r line; do
	eval "args=($line)"
	TARN_NO_DAEMON=1 timeout 60 "$TARN" "${args[@]}" >"$E2E_TMP/a.out" 2>"$E2E_TMP/a.err"
	arc=$?
	timeout 60 "$TARN" "${args[@]}" >"$E2E_TMP/b.out" 2>"$E2E_TMP/b.err"
	brc=$?
	n=$((n + 1))
	if [ "$arc" -eq "$brc" ] && cmp -s "$E2E_TMP/a.out" "$E2E_TMP/b.out" &&
	    cmp -s "$E2E_TMP/a.err" "$E2E_TMP/b.err"; then pass; else
		fail "differs in and out of the daemon (rc $arc/$brc): tarn $line"
		diff "$E2E_TMP/a.out" "$E2E_TMP/b.out" | sed 's/^/  out: /' >&2
		diff "$E2E_TMP/a.err" "$E2E_TMP/b.err" | sed 's/^/  err: /' >&2
	fi
done <<'CMDS'
pool list
pool list -H -o name,size,health
pool list -j
pool list -o bogus
pool status same
pool status -x
pool status -x same
pool status -j same
pool status nosuch same
pool status -Q
pool create
pool create same
pool create 1bad ./d0
pool create tank raidz2 ./d0 ./d1
pool create -o ashift=99 tank ./d0
pool create -n dry mirror ./d0 ./d1
pool destroy
pool destroy nosuch
pool export nosuch
pool import -d ./nonexistent
pool import -d . nosuch
pool frob
pool
pool help
pool status -?
CMDS
[ "$n" -ge 20 ] && pass || fail "only $n commands compared"
tarn_ok pool destroy same
e2e_done
