# tests/e2e/health.bash — helpers shared by the pool-health tests
# (tests/e2e/health_*.sh), sourced after lib.sh.  Not a test itself
# (tests/run runs *.sh only).
#
#   make_pool NAME LAYOUT N [SIZE]   a pool NAME of N devices ($DEVDIR/NAME/*)
#                                    with data in it when tarn-stress can
#                                    leave some behind; imported; sets DEV,
#                                    HAVE_DATA (0/1)
#   put_data NAME                    make the pool change (history records,
#                                    new txgs) without a data writer
#   check_data NAME [WANT [REGEX]]   with data: export, `tarn-stress --check`
#                                    compares every byte with its model (exit
#                                    WANT, default 0; its output matching
#                                    REGEX), import again
#   corrupt_written FILE             overwrite every written 4 KiB block of a
#                                    device's data area with random bytes
#   dev_counts NAME                  "READ WRITE CKSUM" of a row of the last
#                                    status output ($OUT)
#   scan_line                        the "  scan: ..." line of $OUT
#   wait_scan NAME                   poll status until no scan runs (60 s)
#   in_process                       true when commands run without tarnd
#   need_daemon WHY                  skip the test when they do

STRESS=${TARN_STRESS:-$(dirname "$TARN")/../tarn-stress/tarn-stress}
HAVE_DATA=0

# Can tarn-stress leave a filled pool behind (its --keep option)?
stress_can_keep() {
	[ -x "$STRESS" ] && "$STRESS" --help 2>/dev/null | grep -q -- '--keep'
}

# make_pool NAME LAYOUT N [SIZE]: LAYOUT is stripe, mirror, raidz1..3.
make_pool() {
	local name=$1 layout=$2 n=$3 size=${4:-$E2E_DEVSIZE} dir="$DEVDIR/$1" i
	mkdir -p "$dir"
	DEV=()
	HAVE_DATA=0
	if stress_can_keep; then
		# tarn-stress builds the pool "stress" there, fills it, exports it
		STRESS_ARGS=(-d "$dir" -l "$layout:$n" -S "$size" -s 7 -t 1 -n 3000)
		run "$STRESS" --keep "${STRESS_ARGS[@]}"
		if [ "$RC" -ne 0 ]; then
			fail "tarn-stress --keep could not fill a $layout pool"
			show_output
			return 1
		fi
		for i in "$dir"/dev*; do DEV+=("$i"); done
		tarn_ok pool import -d "$dir" stress "$name" || return 1
		HAVE_DATA=1
		return 0
	fi
	for ((i = 0; i < n; i++)); do
		truncate -s "$size" "$dir/$name$i" || fail "truncate $dir/$name$i"
		DEV+=("$dir/$name$i")
	done
	if [ "$layout" = stripe ]; then
		tarn_ok pool create -o ashift=9 "$name" "${DEV[@]}" || return 1
	else
		tarn_ok pool create -o ashift=9 "$name" "$layout" "${DEV[@]}" || return 1
	fi
	put_data "$name"
}

# check_data NAME [WANT]: the data tarn-stress left must read back
# byte-exact (--check replays the seed's operations into its model and
# compares; it opens the devices in the directory, whatever the pool is
# called now).  Without data there is nothing to compare.
check_data() {
	local name=$1 want=${2:-0} want_re=${3:-}
	[ "$HAVE_DATA" -eq 1 ] || return 0
	tarn_ok pool export "$name" || return 1
	run "$STRESS" --check "${STRESS_ARGS[@]}"
	if [ "$RC" -eq "$want" ]; then pass; else
		fail "tarn-stress --check of '$name': exit $RC, expected $want"
		show_output
	fi
	echo "  $(grep -m1 'check of pool' "$OUT")"
	[ -z "$want_re" ] || out_has "$want_re"
	tarn_ok pool import -d "$DEVDIR/$name" "$name"
}

# put_data NAME: without a data writer the pool's own metadata must do:
# each command that changes it appends a record to its history (a MOS
# object; 30 clears fill about a block), and each export and import ends
# txgs.  The pool is in $DEVDIR/NAME.
put_data() {
	local k
	for ((k = 0; k < 30; k++)); do run "$TARN" pool clear "$1"; done
	for k in 1 2 3; do
		tarn_ok pool export "$1"
		tarn_ok pool import -d "$DEVDIR/$1" "$1"
	done
}

# corrupt_written FILE [N]: every 4 KiB block of the data area (4 MiB ..
# end - 512 KiB, docs/FORMAT.md "Leaf layout") that was ever written (the
# device is a sparse file: the rest reads as zeros) gets random bytes; with
# N, only N of them chosen at random (the same N for the same device).
# Prints how many blocks.  A superset of "random sectors", so that live
# blocks are hit for sure.  One python process: thousands of dd's are slow.
corrupt_written() {
	python3 - "$1" "${2:-0}" <<'PYEOF'
import os, random, sys
path, sample = sys.argv[1], int(sys.argv[2])
start = 4 << 20
end = (os.path.getsize(path) // 262144) * 262144 - (512 << 10)
fd = os.open(path, os.O_RDWR)
zero = bytes(4096)
offs = [off for off in range(start, end, 4096) if os.pread(fd, 4096, off) != zero]
if sample > 0:
    offs = random.Random(sample).sample(offs, min(sample, len(offs)))
for off in offs:
    os.pwrite(fd, os.urandom(4096), off)
os.fsync(fd)
os.close(fd)
print(len(offs))
PYEOF
}

# dev_counts NAME: READ WRITE CKSUM of the config row named NAME in $OUT.
dev_counts() {
	awk -v n="$1" '$1 == n && NF >= 5 { print $3, $4, $5; exit }' "$OUT"
}

# dev_state NAME: the STATE column of that row.
dev_state() {
	awk -v n="$1" '$1 == n && NF >= 2 { print $2; exit }' "$OUT"
}

scan_line() {
	grep -m1 '^  scan: ' "$OUT"
}

# wait_scan NAME: until status shows no scan in progress (at most 60 s).
wait_scan() {
	local i
	for ((i = 0; i < 120; i++)); do
		run "$TARN" pool status "$1"
		grep -q 'in progress since' "$OUT" || return 0
		sleep 0.5
	done
	fail "the scan of '$1' did not end within 60 s"
	return 1
}

# Commands run in-process (TARN_NO_DAEMON=1): every command opens and
# closes the pool itself, so what lives only while a pool is open (error
# counters, a running scan, offline -t) does not outlive the command, as
# zpool's would not outlive the kernel module.
in_process() {
	[ "${TARN_NO_DAEMON:-0}" = 1 ]
}

need_daemon() {
	in_process && skip "$* (needs tarnd: TARN_NO_DAEMON=1 is set)"
	return 0
}
