#!/bin/bash
# inject.sh — `tarn inject` (the zinject of Tarn) through the CLI and a
# daemon of its own, with files read through the daemon's mount:
#  - checksum errors on one side of a mirror: files read back intact
#    (cold caches), CKSUM rises on that side only, a scrub repairs, and
#    once cleared a scrub repairs nothing;
#  - io errors: READ errors counted, files intact;
#  - nxio (a pulled disk): the side is faulted/unavailable, the pool
#    DEGRADED, files readable; `pool clear` cannot bring it back while the
#    injection holds, and brings it back (resilvered, ONLINE) once it is
#    cleared;
#  - checksum errors on a raidz1 column: files intact, CKSUM on it;
#  - -D 20:1 on a one-device pool: N uncached record reads take at least
#    N * 20 ms (a lower bound), a cold read of the other pool meanwhile
#    is not held up by it, and export of the slow pool does not hang;
#  - -l lists (ID, pool, device, type, frequency, delay, lanes), -c ID and
#    -c all clear, export clears; bad input exits 1 (or 2 for usage) with
#    one line and changes nothing.
# Cleanup (even on failure): lib.sh destroys the pools, stops the daemon
# by its PID, unmounts, removes the temp dir.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/health.bash"
describe "tarn inject: checksum/io/nxio faults and -D delays on live pools"
require_daemon_mounts
need_daemon "injections live in tarnd"

# dev_row NAME: STATE READ WRITE CKSUM of the status row of NAME in $OUT
dev_row() {
	awk -v n="$1" '$1 == n && NF >= 5 { print $2, $3, $4, $5; exit }' "$OUT"
}

# cold POOL: export and import, with the kernel's caches dropped, so that
# neither the page cache nor the pool's cache holds file data
cold() {
	tarn_ok pool export "$1"
	sync
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
	tarn_ok pool import -d "$2" "$1"
	mountpoint -q "$MNT/$1" || fail "$1 is not mounted at $MNT/$1 after import"
}

# fill DIR: files of varied sizes; their sums in $E2E_TMP/sums.DIRNAME
fill() {
	local d=$1 i=0 size
	for size in 1 4097 131072 1000000 3145728; do
		head -c "$size" /dev/urandom >"$d/f$i"
		i=$((i + 1))
	done
	python3 -c 'import os, sys
for f in sys.argv[1:]:
    fd = os.open(f, os.O_RDONLY); os.fsync(fd); os.close(fd)' "$d"/f*
	(cd "$d" && sha256sum f*) >"$E2E_TMP/sums.${d##*/}"
}

# intact DIR WHAT: every file of DIR reads back with its sum
intact() {
	if (cd "$1" && sha256sum --quiet -c "$E2E_TMP/sums.${1##*/}") >"$E2E_TMP/check.out" 2>&1
	then pass; else
		fail "$2: files read back differently"
		sed 's/^/  /' "$E2E_TMP/check.out" | head >&2
	fi
}

mkdir -p "$DEVDIR/m" "$DEVDIR/z" "$DEVDIR/s"
for i in 0 1; do truncate -s 128M "$DEVDIR/m/d$i"; done
for i in 0 1 2; do truncate -s 128M "$DEVDIR/z/d$i"; done
truncate -s 128M "$DEVDIR/s/d0"
M0=$DEVDIR/m/d0 M1=$DEVDIR/m/d1
tarn_ok pool create -m "$MNT/tank" tank mirror "$M0" "$M1" || e2e_done
fill "$MNT/tank"

# ---- nothing yet; bad input changes nothing ----
tarn_ok inject
out_is "No handlers registered."
tarn_err 2 "^missing device \(-d\)$" inject -e io tank
tarn_err 2 "^missing error type \(-e\) or delay \(-D\)$" inject -d "$M0" tank
tarn_err 2 "^missing pool name$" inject -d "$M0" -e io
tarn_err 2 "^too many arguments$" inject -d "$M0" -e io tank tank
tarn_err 2 "^invalid error type 'bogus'$" inject -d "$M0" -e bogus tank
tarn_err 2 "^invalid I/O type 'sideways'$" inject -d "$M0" -e io -T sideways tank
tarn_err 2 "^-e and -D cannot be used together$" inject -d "$M0" -e io -D 8 tank
tarn_err 2 "^-f cannot be used with -D$" inject -d "$M0" -D 8 -f 50 tank
tarn_err 2 "^-l and -c take no other options" inject -l -c all
tarn_err 2 "^invalid option 'x'$" inject -x
tarn_err 2 "^missing argument for 'd' option$" inject -d
for f in 0 200 abc 0.00001 -5 nan; do
	tarn_err 1 "^cannot inject: invalid frequency" inject -d "$M0" -e io -f "$f" tank
done
for d in 0 abc 8:0 8:2000 8:x 70000 -1; do
	tarn_err 1 "^cannot inject: invalid (latency|number of lanes)" inject -d "$M0" -D "$d" tank
done
tarn_err 1 "^cannot inject: checksum errors apply to reads only" \
    inject -d "$M0" -e checksum -T write tank
tarn_err 1 "^cannot inject into 'nopool': " inject -d "$M0" -e io nopool
tarn_err 1 "^cannot inject into '$DEVDIR/nodev': no such device in pool$" \
    inject -d "$DEVDIR/nodev" -e io tank
tarn_err 1 "^cannot clear injection 'abc': invalid handle" inject -c abc
tarn_err 1 "^cannot clear injection '999': no such injection$" inject -c 999
tarn_ok inject -l
out_is "No handlers registered."

# ---- checksum errors on one side of the mirror ----
cold tank "$DEVDIR/m"
tarn_ok inject -d "$M0" -e checksum tank
out_has "^Added handler [0-9]+ with the following properties:$"
CK=$(sed -n 's/^Added handler \([0-9]*\) .*/\1/p' "$OUT")
tarn_ok inject -l
out_has "^ *$CK +tank +$M0 +checksum +read +100% +- +-$"
intact "$MNT/tank" "checksum errors on one side"
tarn_ok pool status tank
read -r st r w c <<<"$(dev_row "$M0")"
echo "  $M0 (checksum injected): $st $r $w $c"
[ "${c:-0}" -gt 0 ] && pass || { fail "no CKSUM errors counted on $M0"; show_output; }
[ "$(dev_row "$M1")" = "ONLINE 0 0 0" ] && pass || { fail "errors on the intact side"; show_output; }
tarn_ok pool scrub -w tank
tarn_ok pool status tank
out_has "^  scan: scrub repaired [1-9][0-9.]*[BKMGT] in [0-9:]+ with 0 errors on "
tarn_ok inject -c "$CK"
tarn_ok pool clear tank
tarn_ok pool scrub -w tank
tarn_ok pool status tank
out_has "^  scan: scrub repaired 0B in [0-9:]+ with 0 errors on "
[ "$(dev_row "$M0")" = "ONLINE 0 0 0" ] && pass || { fail "errors after the clear"; show_output; }

# ---- io errors on reads ----
cold tank "$DEVDIR/m"
tarn_ok inject -d "$M1" -e io -T read tank
intact "$MNT/tank" "io errors on one side"
tarn_ok pool status tank
read -r st r w c <<<"$(dev_row "$M1")"
echo "  $M1 (io injected): $st $r $w $c"
[ "${r:-0}" -gt 0 ] && pass || { fail "no READ errors counted on $M1"; show_output; }
[ "${w:-x}" = 0 ] && pass || { fail "WRITE errors on $M1 with -T read"; show_output; }
tarn_ok inject -c all
out_is "removed all registered handlers"
tarn_ok pool clear tank
wait_scan tank

# ---- nxio: a pulled disk ----
tarn_ok inject -d "$M0" -e nxio tank
NX=$(sed -n 's/^Added handler \([0-9]*\) .*/\1/p' "$OUT")
tarn_ok inject -l
out_has "^ *$NX +tank +$M0 +nxio +all +100% "
mkdir -p "$MNT/tank/new"
for ((k = 0; k < 40; k++)); do
	head -c 262144 /dev/urandom >"$MNT/tank/new/n$k"
	python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)' \
	    "$MNT/tank/new/n$k"
	run "$TARN" pool status tank
	case "$(dev_row "$M0")" in FAULTED*|UNAVAIL*|REMOVED*) break ;; esac
done
tarn_ok pool status tank
echo "  $M0 (nxio injected): $(dev_row "$M0")"
[[ "$(dev_row "$M0")" =~ ^(FAULTED|UNAVAIL|REMOVED) ]] && pass ||
    { fail "$M0 not faulted/unavailable under nxio"; show_output; }
out_has "^ state: DEGRADED$"
(cd "$MNT/tank/new" && sha256sum n*) >"$E2E_TMP/sums.new"
intact "$MNT/tank" "nxio on one side"
# clear cannot reopen a device that is still gone
run "$TARN" pool clear tank
tarn_ok pool status tank
[[ "$(dev_row "$M0")" =~ ^ONLINE ]] && { fail "$M0 came back while still gone"; show_output; } ||
    pass
tarn_ok inject -c "$NX"
tarn_ok pool clear tank
wait_scan tank
tarn_ok pool status tank
out_has "^ state: ONLINE$"
[[ "$(dev_row "$M0")" =~ ^ONLINE ]] && pass || { fail "$M0 not back after clear"; show_output; }
cold tank "$DEVDIR/m"
intact "$MNT/tank" "after the nxio device came back"
intact "$MNT/tank/new" "files written while a side was gone"
tarn_ok pool scrub -w tank
tarn_ok pool status tank
out_has "^  scan: scrub repaired [0-9.]+[BKMGT] in [0-9:]+ with 0 errors on "

# ---- raidz1: checksum errors on one column ----
Z1=$DEVDIR/z/d1
tarn_ok pool create -m "$MNT/rz" rz raidz1 "$DEVDIR"/z/d0 "$Z1" "$DEVDIR"/z/d2
fill "$MNT/rz"
cold rz "$DEVDIR/z"
tarn_ok inject -d "$Z1" -e checksum rz
intact "$MNT/rz" "raidz1 with checksum errors on one column"
tarn_ok pool status rz
read -r st r w c <<<"$(dev_row "$Z1")"
echo "  $Z1 (checksum injected): $st $r $w $c"
[ "${c:-0}" -gt 0 ] && pass || { fail "no CKSUM errors counted on $Z1"; show_output; }
# export clears the pool's injections
tarn_ok pool export rz
tarn_ok inject -l
out_is "No handlers registered."
tarn_ok pool destroy tank

# ---- -D: a slow disk ----
tarn_ok pool create -m "$MNT/slow" slow "$DEVDIR/s/d0"
head -c $((4 * 1048576)) /dev/urandom >"$MNT/slow/big"
python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)' "$MNT/slow/big"
tarn_ok pool import -d "$DEVDIR/z" rz
cold slow "$DEVDIR/s"
tarn_ok inject -d "$DEVDIR/s/d0" -D 20:1 slow
tarn_ok inject -l
out_has "^ *[0-9]+ +slow +$DEVDIR/s/d0 +delay +all +- +20ms +1$"
t0=$(date +%s%N)
ok cat "$MNT/slow/big"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
# 32 records of 128 KiB; the leaf's queue merges adjacent reads that wait
# behind the busy lane (prefetch), up to 1 MiB a device read: 4 at least
echo "  4 MiB (32 records) read cold at 20ms:1 -> $ms ms (>= 80 ms expected)"
[ "$ms" -ge 80 ] && pass || fail "32 uncached reads at 20ms:1 took only $ms ms"
# another pool is not held up while the slow one is read
cold slow "$DEVDIR/s"
tarn_ok inject -d "$DEVDIR/s/d0" -D 200:1 slow
cat "$MNT/slow/big" >/dev/null 2>&1 &
SLOWCAT=$!
sleep 0.5
t0=$(date +%s%N)
intact "$MNT/rz" "raidz1 read while the slow pool is busy"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "  cold read of rz during the slow read -> $ms ms"
[ "$ms" -lt 4000 ] && pass || fail "reading rz took $ms ms while slow was busy"
# export while reads queue behind the delay: it clears the injection
# (waking them) and does not hang
kill "$SLOWCAT" 2>/dev/null
wait "$SLOWCAT" 2>/dev/null
t0=$(date +%s%N)
E2E_CMD_TIMEOUT=30 tarn_ok pool export slow
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "  export of the slow pool right after the read -> $ms ms"
[ "$ms" -lt 10000 ] && pass || fail "export of a delayed pool took $ms ms"
tarn_ok inject
out_is "No handlers registered."

# ---- -l and -c ----
tarn_ok pool import -d "$DEVDIR/s" slow
tarn_ok inject -d "$DEVDIR/z/d0" -e io -f 0.5 rz
A=$(sed -n 's/^Added handler \([0-9]*\) .*/\1/p' "$OUT")
tarn_ok inject -d "$(basename "$Z1")" -e io -T write -f 25% rz
B=$(sed -n 's/^Added handler \([0-9]*\) .*/\1/p' "$OUT")
tarn_ok inject -d "$DEVDIR/s/d0" -D 8:4 slow
C=$(sed -n 's/^Added handler \([0-9]*\) .*/\1/p' "$OUT")
tarn_ok inject -l
out_has "^ID +POOL +DEVICE +TYPE +IO +FREQ +DELAY +LANES$"
out_has "^ *$A +rz +$DEVDIR/z/d0 +io +read +0.5% +- +-$"
out_has "^ *$B +rz +$Z1 +io +write +25% +- +-$"
out_has "^ *$C +slow +$DEVDIR/s/d0 +delay +all +- +8ms +4$"
[ "$(wc -l <"$OUT")" -eq 4 ] && pass || { fail "inject -l: not 3 rows"; show_output; }
tarn_ok inject -c "$B"
tarn_ok inject
out_lacks "^ *$B "
out_has "^ *$A "
tarn_ok inject -c all
tarn_ok inject
out_is "No handlers registered."
# random argument vectors: exit 0, 1 or 2, never a crash
SEED=${E2E_SEED:-$RANDOM}
echo "# argv seed $SEED (E2E_SEED=$SEED to repeat)"
RANDOM=$SEED
WORDS=(-d -e -T -f -D -l -c -h -x -- io checksum nxio bogus read write all 0 1 50 100
	200 0.0001 1e-9 nan inf 8 8:1 8:0 :4 20:1024 20:1025 all 99999999999999999999
	-1 rz slow nopool "" "%s%n" "$DEVDIR/z/d0" "$DEVDIR/s/d0" d1 "$DEVDIR/none")
for ((i = 0; i < 60; i++)); do
	argv=()
	for ((j = RANDOM % 7; j > 0; j--)); do argv+=("${WORDS[RANDOM % ${#WORDS[@]}]}"); done
	run "$TARN" inject "${argv[@]}"
	if [ "$RC" -gt 2 ]; then
		fail "tarn inject ${argv[*]}: exit $RC"
		show_output
	fi
done
pass
tarn_ok inject -c all
tarn_ok pool destroy slow
tarn_ok pool destroy rz
e2e_done
