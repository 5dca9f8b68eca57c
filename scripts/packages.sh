# scripts/packages.sh — sourced by setup.sh and .ci/run: the Debian
# packages of scripts/packages.txt, the one list of what the build and the
# tests need.
#   packages_all       every package of the list, one a line
#   packages_missing   those of them not installed (dpkg), one a line

PACKAGES_FILE=${PACKAGES_FILE:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/packages.txt}

packages_all() {
	if [ ! -r "$PACKAGES_FILE" ]; then
		echo "cannot read the package list $PACKAGES_FILE" >&2
		return 1
	fi
	sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$PACKAGES_FILE"
}

packages_missing() {
	local p all
	all=$(packages_all) || return 1
	for p in $all; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			echo "$p"
	done
}
