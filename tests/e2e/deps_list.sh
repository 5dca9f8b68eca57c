#!/bin/bash
# deps_list.sh — scripts/packages.txt is the one list of Debian packages
# that the build and tests/run need: setup.sh and .ci/run both install it
# (through scripts/packages.sh) and keep no list of their own; every
# `require_cmd CMD PACKAGE` in the e2e scripts names a package of that
# list; and a command an e2e script probes with `command -v CMD` is one
# that some require_cmd declares (so a new tool cannot slip in unlisted,
# as fio once did: installed by .ci/run, missing after ./setup.sh).
. "$(dirname "$0")/lib.sh"

describe "one package list for setup.sh, .ci/run and the tests"
SRC=$E2E_SRC
LIST=$SRC/scripts/packages.txt

[ -r "$LIST" ] && pass || { fail "no $LIST"; e2e_done; }
# shellcheck source=../../scripts/packages.sh
. "$SRC/scripts/packages.sh"
mapfile -t PKGS < <(packages_all)
[ ${#PKGS[@]} -ge 10 ] && pass || fail "packages_all lists only ${#PKGS[@]} packages"
listed() {
	local p
	for p in "${PKGS[@]}"; do [ "$p" = "$1" ] && return 0; done
	return 1
}
for p in meson gcc libfuse3-dev fuse3 python3 fio; do
	listed "$p" && pass || fail "$p is not in scripts/packages.txt"
done
bad=$(printf '%s\n' "${PKGS[@]}" | grep -Ev '^[a-z0-9][a-z0-9.+-]+$')
[ -z "$bad" ] && pass || fail "not package names in the list: $bad"

# both installers read the list and keep no PKGS=(...) of their own
for f in setup.sh .ci/run; do
	grep -q '^\. scripts/packages\.sh' "$SRC/$f" && grep -q packages_missing "$SRC/$f" &&
		pass || fail "$f does not install from scripts/packages.sh"
	grep -Eq '^[[:space:]]*[A-Z_]*PKGS=\(' "$SRC/$f" &&
		fail "$f has a package list of its own" || pass
done

# declared FILES...: "require_cmd CMD PACKAGE" lines, one per pair
declared() {
	grep -hoE '^[^#]*\brequire_cmd [^ ;|&]+ [^ ;|&]+' "$@" |
		grep -oE 'require_cmd [^ ;|&]+ [^ ;|&]+' | grep -v '"\$' | sort -u
}
# probed FILES...: the commands probed with `command -v`, one a line
probed() {
	grep -hoE '^[^#]*command -v [^ ;|&)]+' "$@" | grep -oE 'command -v [^ ;|&)]+' |
		awk '{ print $3 }' | grep -v '^"\$' | sort -u
}
# problems FILES...: one line per unlisted package or undeclared command
problems() {
	local decl cmd pkg
	decl=$(declared "$@")
	while read -r _ cmd pkg; do
		[ -z "$cmd" ] && continue
		listed "$pkg" ||
			echo "require_cmd $cmd $pkg: $pkg is not in scripts/packages.txt"
	done <<<"$decl"
	for cmd in $(probed "$@"); do
		echo "$decl" | awk -v c="$cmd" '$2 == c { f = 1 } END { exit !f }' ||
			echo "'$cmd' is probed with command -v, but no require_cmd says which package has it"
	done
}

# every require_cmd CMD PACKAGE of the e2e scripts names a listed package,
# and every command they probe with `command -v` is declared by one
SCRIPTS=()
for f in "$SRC"/tests/e2e/*.sh "$SRC"/tests/e2e/*.bash; do
	[ "$(basename "$f")" = deps_list.sh ] || SCRIPTS+=("$f")
done
[ -n "$(declared "${SCRIPTS[@]}")" ] && pass || fail "no require_cmd in the e2e scripts"
declared "${SCRIPTS[@]}" | grep -q '^require_cmd fio fio$' && pass ||
	fail "e2e/fs_fio does not declare fio"
p=$(problems "${SCRIPTS[@]}")
[ -z "$p" ] && pass || fail "$p"

# the check itself catches an unlisted package and an undeclared command
printf 'require_cmd frobnicate no-such-package\ncommand -v zork >/dev/null\n' >"$E2E_TMP/t.sh"
p=$(problems "$E2E_TMP/t.sh")
echo "$p" | grep -q "no-such-package is not in" && pass || fail "an unlisted package passed: $p"
echo "$p" | grep -q "'zork' is probed" && pass || fail "an undeclared command passed: $p"

e2e_done
