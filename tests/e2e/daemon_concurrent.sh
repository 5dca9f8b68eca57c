#!/bin/bash
# Several clients at once: clients that find no daemon start exactly one
# between them; readers (status, list) run side by side with commands that
# change pools (export/import, create/destroy) without an error, a wrong
# answer or a crash; the daemon stays up and the pools end ONLINE.
. "$(dirname "$0")/lib.sh"
describe "concurrent clients: one daemon, readers beside writers"
require_engine
unset TARN_NO_DAEMON

# count_daemons: live tarnd processes serving this test's socket
count_daemons() {
	local n=0 p
	for p in /proc/[0-9]*; do
		[ -r "$p/cmdline" ] || continue
		if tr '\0' '\n' <"$p/cmdline" 2>/dev/null | head -n 1 | grep -q 'tarnd$' &&
		    tr '\0' '\n' <"$p/cmdline" 2>/dev/null | grep -qxF -- "$TARN_SOCKET" &&
		    pid_alive "${p#/proc/}"; then
			n=$((n + 1))
		fi
	done
	echo "$n"
}

# --- six clients start at once with no daemon running
pids=()
for i in 1 2 3 4 5 6; do
	timeout 60 "$TARN" pool list >"$E2E_TMP/start$i.out" 2>&1 &
	pids+=($!)
done
for i in "${!pids[@]}"; do
	if wait "${pids[$i]}"; then pass; else
		fail "client $((i + 1)) of the simultaneous start failed"
		sed 's/^/  /' "$E2E_TMP/start$((i + 1)).out" >&2
	fi
done
[ "$(count_daemons)" -eq 1 ] && pass || fail "$(count_daemons) daemons for one socket"

mkdevs 6
tarn_ok pool create steady mirror "${DEV[0]}" "${DEV[1]}"
tarn_ok pool create moving mirror "${DEV[2]}" "${DEV[3]}"

# --- readers beside writers
reader() {
	local k bad=0
	for ((k = 0; k < 25; k++)); do
		got=$("$TARN" pool list -H -o name,health steady 2>&1) || bad=$((bad + 1))
		[ "$got" = "steady	ONLINE" ] || { echo "list: '$got'"; bad=$((bad + 1)); }
		"$TARN" pool status steady >/dev/null 2>&1 || { echo "status failed"; bad=$((bad + 1)); }
	done
	return "$bad"
}
writer() {
	local k bad=0
	for ((k = 0; k < 8; k++)); do
		"$TARN" pool export moving || bad=$((bad + 1))
		"$TARN" pool import -d "$DEVDIR" moving || bad=$((bad + 1))
	done
	return "$bad"
}
creator() {
	local k bad=0
	for ((k = 0; k < 6; k++)); do
		"$TARN" pool create "c$1" "${DEV[$1]}" || bad=$((bad + 1))
		"$TARN" pool destroy "c$1" || bad=$((bad + 1))
	done
	return "$bad"
}
jobs_pids=()
for i in 1 2 3; do
	reader >"$E2E_TMP/reader$i.out" 2>&1 &
	jobs_pids+=($!)
done
writer >"$E2E_TMP/writer.out" 2>&1 &
jobs_pids+=($!)
creator 4 >"$E2E_TMP/creator4.out" 2>&1 &
jobs_pids+=($!)
creator 5 >"$E2E_TMP/creator5.out" 2>&1 &
jobs_pids+=($!)
names=(reader1 reader2 reader3 writer creator4 creator5)
for i in "${!jobs_pids[@]}"; do
	if wait "${jobs_pids[$i]}"; then pass; else
		fail "${names[$i]} saw errors"
		sed 's/^/  /' "$E2E_TMP/${names[$i]}.out" >&2
	fi
done

# the daemon is the same one, and everything is in order
[ "$(count_daemons)" -eq 1 ] && pass || fail "$(count_daemons) daemons after the run"
tarn_ok pool list -H -o name,health
out_is "moving	ONLINE
steady	ONLINE"
tarn_ok pool status -x
out_is "all pools are healthy"
grep -Eq "panic|AddressSanitizer|runtime error" "$TARN_RUNDIR/tarnd.log" &&
	fail "the daemon's log shows a crash: $(grep -E 'panic|Sanitizer|runtime error' "$TARN_RUNDIR/tarnd.log" | head -3)" || pass
e2e_done
