#!/bin/bash
# sanoid.sh — Debian's sanoid (/usr/sbin/sanoid, a perl script) works
# against Tarn unchanged, through `zfs`/`zpool` links first in PATH: with a
# test sanoid.conf (a template: frequently=2 hourly=1 daily=1) it takes
# its autosnap_*_frequently/_hourly/_daily snapshots of the configured
# file system only, takes nothing more while none is due, and prunes the
# old ones to the template's counts; every zfs command it ran (logged by
# a wrapper around the link) succeeded.
#
# Time: sanoid decides by the clock and by each snapshot's `creation`
# (`zfs get -Hrpt snapshot creation`), not by the names.  The creations
# are real, so later runs move sanoid's own clock forward instead: perl
# loads a small module first (-MFakeClock) that overrides its time() by
# FAKECLOCK_OFFSET seconds; the zfs commands it runs are not affected.
# Pruning by sanoid's rule ("older than count periods, and more than
# count of them"): with hourly=1, the first hourly goes once a second
# one is there and it is over an hour old; with frequently=2 (15-minute
# periods), the first frequent goes once three are there.
. "$(dirname "$0")/lib.sh"
describe "sanoid takes and prunes its snapshots through Tarn's zfs link"
require_engine
require_cmd sanoid sanoid
SANOID=$(type -P sanoid)

# zfs and zpool: links to tarn, behind wrappers that log each call and its status
LINKS=$E2E_TMP/links
WRAP=$E2E_TMP/bin
LOG=$E2E_TMP/zfs-calls.log
mkdir -p "$LINKS" "$WRAP"
for cmd in zfs zpool; do
	ln -s "$TARN" "$LINKS/$cmd"
	cat >"$WRAP/$cmd" <<EOF
#!/bin/bash
"$LINKS/$cmd" "\$@"
rc=\$?
printf '%s\t%s\n' "\$rc" "$cmd \$*" >>"$LOG"
exit \$rc
EOF
	chmod +x "$WRAP/$cmd"
done
export PATH="$WRAP:$PATH"
[ "$(type -P zfs)" = "$WRAP/zfs" ] && pass || fail "zfs in PATH is $(type -P zfs)"

mkdevs 1
ok zpool create sn "${DEV[0]}"
ok zfs create sn/data
ok zfs create sn/other
# the engine's snapshots and the zfs verbs sanoid uses; skip until the build has them
run zfs snapshot sn/data@manual
if [ "$RC" -ne 0 ] && grep -Eq "not implemented yet|unrecognized command" "$ERR"; then
	skip "this build has no snapshots yet: $(head -n 1 "$ERR")"
fi
[ "$RC" -eq 0 ] && pass || { fail "zfs snapshot sn/data@manual: rc $RC"; show_output; }
: >"$LOG"

CONFDIR=$E2E_TMP/sanoid
mkdir -p "$CONFDIR/cache" "$CONFDIR/run" "$E2E_TMP/perl"
cat >"$CONFDIR/sanoid.conf" <<'EOF'
[sn/data]
	use_template = test

[template_test]
	frequently = 2
	hourly = 1
	daily = 1
	weekly = 0
	monthly = 0
	yearly = 0
	autosnap = yes
	autoprune = yes
	frequent_period = 15
EOF
cat >"$E2E_TMP/perl/FakeClock.pm" <<'EOF'
# time() moved by FAKECLOCK_OFFSET seconds for the code compiled after this
package FakeClock;
BEGIN {
	*CORE::GLOBAL::time = sub () { CORE::time() + ($ENV{FAKECLOCK_OFFSET} || 0) };
}
1;
EOF

# sanoid_run OFFSET: one `sanoid --take-snapshots --prune-snapshots`, its
# clock OFFSET seconds ahead; it must print no error or warning.
sanoid_run() {
	run env TZ=UTC FAKECLOCK_OFFSET="$1" perl -I"$E2E_TMP/perl" -MFakeClock "$SANOID" \
		--configdir "$CONFDIR" --cache-dir "$CONFDIR/cache" --run-dir "$CONFDIR/run" \
		--take-snapshots --prune-snapshots --verbose
	if [ "$RC" -ne 0 ] || grep -Eiq "error|warn|could not|fatal|cannot" "$ERR" "$OUT"; then
		fail "sanoid (clock +$1 s): rc $RC"
		show_output
	else pass; fi
}
# autosnaps LABEL: the sanoid snapshots of sn/data of that label, oldest first
autosnaps() {
	timeout 30 "$TARN" fs list -H -o name -t snapshot -s creation -r sn |
		grep -E "^sn/data@autosnap_[0-9]{4}-[0-9]{2}-[0-9]{2}_[0-9]{2}:[0-9]{2}:[0-9]{2}_$1\$"
}
count_is() {
	local n
	n=$(autosnaps "$1" | wc -l)
	[ "$n" -eq "$2" ] && pass || { fail "$3: $n $1 snapshots, not $2"; autosnaps '.*' >&2; }
}
has() {
	timeout 30 "$TARN" fs list -H -o name -t snapshot -r sn | grep -qxF -- "$1" &&
		pass || fail "$2: $1 is gone"
}
gone() {
	timeout 30 "$TARN" fs list -H -o name -t snapshot -r sn | grep -qxF -- "$1" &&
		fail "$2: $1 is still there" || pass
}

# runs 1 and 2 use the real clock: not within 20 s of a quarter hour or
# of 23:59 (sanoid's daily time), so that both see the same periods
m=$(date -u +%M)
s=$(date -u +%S)
if [ "${s#0}" -ge 40 ] && { [ $((10#$m % 15)) -eq 14 ] || [ "$m" = 58 ]; }; then
	sleep $((61 - 10#$s))
fi

# ---- run 1: none yet, so one of each label is taken
sanoid_run 0
grep -q "^taking snapshot sn/data@autosnap_.*_frequently" "$OUT" && pass ||
	{ fail "run 1 did not say it takes a frequent snapshot"; show_output; }
count_is frequently 1 "run 1"
count_is hourly 1 "run 1"
count_is daily 1 "run 1"
F1=$(autosnaps frequently)
H1=$(autosnaps hourly)
D1=$(autosnaps daily)
timeout 30 "$TARN" fs list -H -o name -t snapshot -r sn/other | grep -q . &&
	fail "sanoid took snapshots of sn/other, which its config does not name" || pass
has sn/data@manual "run 1"

# ---- run 2, at once: nothing due, nothing to prune
sleep 1.1
sanoid_run 0
grep -q "^taking snapshot" "$OUT" && { fail "run 2 took snapshots"; show_output; } || pass
count_is frequently 1 "run 2"
count_is hourly 1 "run 2"
count_is daily 1 "run 2"

# ---- run 3, two hours on: a new frequent and hourly; none pruned yet
# (sanoid prunes by what it saw when it started: one of each)
sleep 1.1
sanoid_run 7200
count_is frequently 2 "run 3"
count_is hourly 2 "run 3"
has "$F1" "run 3"
has "$H1" "run 3"
H3=$(autosnaps hourly | grep -vxF -- "$H1")

# ---- run 4, four hours on: the first hourly is over an hour old and a
# second is there: pruned; two frequents are not more than two: kept
sleep 1.1
sanoid_run 14400
grep -q "^INFO: pruning $H1" "$OUT" && pass || { fail "run 4 did not prune $H1"; show_output; }
gone "$H1" "run 4"
has "$F1" "run 4"
count_is frequently 3 "run 4"
count_is hourly 2 "run 4"

# ---- run 5, six hours on: three frequents: the oldest goes; the older hourly too
sleep 1.1
sanoid_run 21600
gone "$F1" "run 5"
gone "$H3" "run 5"
count_is frequently 3 "run 5"
count_is hourly 2 "run 5"
# dailies: none pruned (not a day old).  More when 23:59 fell within the
# six hours: sanoid's clock is faked but the snapshots' creation times are
# the real clock's, so a daily taken after the faked 23:59 still looks
# older than it to the next run, which takes one more: at most one a run
# from the first run past the faked 23:59 (runs 3, 4 and 5: four in all
# when the real time is within two hours before 23:59 UTC)
has "$D1" "run 5"
n=$(autosnaps daily | wc -l)
[ "$n" -ge 1 ] && [ "$n" -le 4 ] && pass || fail "run 5: $n daily snapshots"
has sn/data@manual "run 5"

# ---- what sanoid ran: every zfs command succeeded
[ -s "$LOG" ] && pass || fail "no zfs command was logged"
bad=$(awk -F'\t' '$1 != 0' "$LOG")
[ -z "$bad" ] && pass || fail "zfs commands sanoid ran failed: $bad"
for verb in "get -Hrpt snapshot creation" "snapshot sn/data@autosnap_" "destroy sn/data@autosnap_"; do
	grep -qF "	zfs $verb" "$LOG" && pass || fail "sanoid never ran 'zfs $verb'"
done
echo "# the zfs commands sanoid ran:"
cut -f2 "$LOG" | sed -E 's/@autosnap_[^ ]*/@autosnap_.../' | sort | uniq -c | sed 's/^/#   /'
e2e_done
