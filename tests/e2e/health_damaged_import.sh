#!/bin/bash
# Damaged metadata found at import is reported, not called healthy: a
# stripe of two plain devices gets a 50M file through its mount, is
# exported, and 60M in the middle of BOTH devices is overwritten with
# random bytes (no redundancy can repair that).  Then, as zpool does:
# `import` imports the pool but says "cannot mount" and exits 1; the
# blocks that could not be read are in the error log at once (no scrub
# needed), so `status -v` names the dataset and object, the status text
# says data was lost (zpool's words) and `status -x` lists the pool;
# `fs list` of the dataset whose metadata cannot be read prints an error
# and exits 1 instead of a row of '-'.  The error log survives export
# and import; a scrub keeps what it still cannot read.
. "$(dirname "$0")/lib.sh"
describe "damaged metadata at import: cannot mount (exit 1), error log, status says so"
require_daemon_mounts

B="$E2E_TMP/b"
mkdir -p "$B"
truncate -s 256M "$B/b0" "$B/b1"
tarn_ok pool create -m "$MNT" bug "$B/b0" "$B/b1"
mountpoint -q "$MNT" && pass || fail "bug is not mounted at $MNT"
ok dd if=/dev/urandom of="$MNT/victim" bs=1M count=50 status=none
ok sync
tarn_ok pool export bug
for f in b0 b1; do
	ok dd if=/dev/urandom of="$B/$f" bs=1M seek=20 count=60 conv=notrunc status=none
done

# check_damaged: what import and status must say about the pool now
check_damaged() {
	run "$TARN" pool import -d "$B" bug
	[ "$RC" -eq 1 ] && pass || { fail "import: exit $RC, expected 1"; show_output; }
	grep -Eq "^cannot mount 'bug': " "$ERR" && pass ||
		{ fail "import does not say it cannot mount 'bug'"; show_output; }
	mountpoint -q "$MNT" && fail "$MNT is mounted" || pass
	tarn_ok pool list -H -o name bug        # imported all the same
	out_is "bug"
	tarn_ok pool status bug
	out_has "^status: One or more devices has experienced an error resulting in data$"
	out_has "^	corruption.  Applications may be affected.$"
	out_has "^action: Restore the file in question if possible.  Otherwise restore the$"
	out_has "^errors: [1-9][0-9]* data errors, use '-v' for a list$"
	out_lacks "No known data errors"
	tarn_ok pool status -v bug
	out_has "^errors: Permanent errors have been detected in the following files:$"
	out_has "^        bug:<0x[0-9a-f]+>"               # the dataset and the object
	tarn_ok pool status -x
	out_lacks "healthy"
	out_has "^  pool: bug$"
	tarn_err 1 "^cannot read 'bug': .*status -v bug" fs list bug
	[ ! -s "$OUT" ] && pass || { fail "fs list printed a row for 'bug'"; show_output; }
	tarn_err 1 "^cannot read 'bug': " fs list
}

check_damaged
# no scrub was needed; the log is on disk: the same after export/import
tarn_ok pool export bug
check_damaged
# a scrub cannot read it either: it stays listed
tarn_ok pool scrub -w bug
tarn_ok pool status -v bug
out_has "^  scan: scrub repaired [0-9.]+[BKMGT] in [0-9:]+ with [1-9][0-9]* errors on "
out_has "^        bug:<0x[0-9a-f]+>"
tarn_ok pool destroy bug
e2e_done
