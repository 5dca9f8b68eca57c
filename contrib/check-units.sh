#!/bin/bash
# contrib/check-units.sh TARN TARND — the unit test `contrib_units`
# (tests/meson.build): the systemd units of contrib/systemd pass
# `systemd-analyze verify` with no complaint (it exits 0 on unknown keys,
# so any output about a unit fails too), the timer runs every 15 minutes
# and catches up (Persistent), and the service is a oneshot autosnap pass;
# the replication template (tarn-replicate@) verifies as an instance too,
# runs `tarn fs replicate` with its instance's config file every 5 minutes.
# The units name the installed paths (/usr/local/...); verify wants their
# programs to exist, so copies pointing at the build's TARN and TARND are
# checked.  Exit 77 (skipped) without systemd-analyze.
set -u
SRC=$(cd "$(dirname "$0")" && pwd)
TARN=${1:?usage: check-units.sh TARN TARND}
TARND=${2:?usage: check-units.sh TARN TARND}
if ! type -P systemd-analyze >/dev/null; then
	echo "contrib_units: SKIP: no systemd-analyze (Debian package systemd); units not verified"
	exit 77
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tarn-units.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
FAILS=0
fail() {
	echo "FAIL: $*" >&2
	FAILS=$((FAILS + 1))
}

for u in "$SRC"/systemd/*.service "$SRC"/systemd/*.timer; do
	sed -e "s|/usr/local/bin/tarn|$TARN|g" -e "s|/usr/local/sbin/tarnd|$TARND|g" \
		"$u" >"$TMP/$(basename "$u")"
done
# a template verifies as an instance of it
for u in "$TMP"/*@.service "$TMP"/*@.timer; do
	[ -f "$u" ] && cp "$u" "${u/@./@example.}"
done
out=$(cd "$TMP" && systemd-analyze verify ./*.service ./*.timer 2>&1)
rc=$?
# tarnd.service's Wants/After in the autosnap unit: verify looks for it
# among the installed units; a missing one is no fault of the files here
out=$(printf '%s\n' "$out" | grep -v '^$' | grep -v "tarnd.service: Unit tarnd.service not found" |
	grep -v "Failed to .* bus\|Cannot add dependency job")
[ "$rc" -eq 0 ] || fail "systemd-analyze verify exited $rc"
[ -z "$out" ] || fail "systemd-analyze verify complains: $out"

S=$SRC/systemd/tarn-autosnap.service
T=$SRC/systemd/tarn-autosnap.timer
[ -f "$SRC/autosnap.conf" ] || fail "no contrib/autosnap.conf"
grep -qx 'Type=oneshot' "$S" || fail "$S is not Type=oneshot"
grep -Eqx 'ExecStart=/usr/local/bin/tarn fs autosnap' "$S" || fail "$S does not run tarn fs autosnap"
grep -qx 'Persistent=true' "$T" || fail "$T is not Persistent"
cal=$(sed -n 's/^OnCalendar=//p' "$T")
norm=$(systemd-analyze calendar "$cal" 2>/dev/null | sed -n 's/^ *Normalized form: //p')
[ "$norm" = '*-*-* *:00/15:00' ] || fail "$T: OnCalendar=$cal is '$norm', not every 15 minutes"
grep -qx 'WantedBy=timers.target' "$T" || fail "$T is not wanted by timers.target"

S=$SRC/systemd/tarn-replicate@.service
T=$SRC/systemd/tarn-replicate@.timer
[ -f "$SRC/replicate.conf" ] || fail "no contrib/replicate.conf"
grep -qx 'Type=oneshot' "$S" || fail "$S is not Type=oneshot"
grep -qx 'EnvironmentFile=/etc/tarn/replicate/%i.conf' "$S" || fail "$S does not read its instance's file"
grep -Eqx 'ExecStart=/usr/local/bin/tarn fs replicate \$OPTIONS \$\{SOURCE\} \$\{TARGET\}' "$S" ||
	fail "$S does not run tarn fs replicate"
for k in SOURCE TARGET OPTIONS; do
	grep -q "^$k=" "$SRC/replicate.conf" || fail "contrib/replicate.conf sets no $k"
done
grep -qx 'Persistent=true' "$T" || fail "$T is not Persistent"
cal=$(sed -n 's/^OnCalendar=//p' "$T")
norm=$(systemd-analyze calendar "$cal" 2>/dev/null | sed -n 's/^ *Normalized form: //p')
[ "$norm" = '*-*-* *:00/5:00' ] || fail "$T: OnCalendar=$cal is '$norm', not every 5 minutes"
grep -qx 'WantedBy=timers.target' "$T" || fail "$T is not wanted by timers.target"

if [ "$FAILS" -gt 0 ]; then
	echo "contrib_units: $FAILS check(s) failed"
	exit 1
fi
echo "contrib_units: the units verify"
