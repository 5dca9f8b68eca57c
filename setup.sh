#!/bin/bash
# setup.sh — one command from a fresh clone to a working Tarn: install the
# Debian packages of scripts/packages.txt that are missing (apt-get, only
# those: what the build and tests/run need), build in build/,
# then run the demo (scripts/demo.sh).  Safe to run again.
#   ./setup.sh             install + build + demo
#   ./setup.sh --no-demo   install + build
set -eu
cd "$(dirname "$0")"

# the one list of what the build and tests/run need: scripts/packages.txt
. scripts/packages.sh
packages_all >/dev/null    # an unreadable list stops here (set -e)
missing=()
mapfile -t missing < <(packages_missing)
if [ ${#missing[@]} -gt 0 ]; then
	echo "== installing missing packages: ${missing[*]}"
	SUDO=
	[ "$(id -u)" -ne 0 ] && SUDO=sudo
	$SUDO apt-get update
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
else
	echo "== all needed packages are installed"
fi

echo "== building in build/"
[ -f build/build.ninja ] || meson setup build
ninja -C build

# per-CPU FUSE request queues (fuse/tarn_fuse_uring.c), when the kernel has them
SUDO=
[ "$(id -u)" -ne 0 ] && SUDO=sudo
$SUDO scripts/fuse-uring.sh || true

if [ "${1:-}" != "--no-demo" ]; then
	echo
	scripts/demo.sh
fi
echo
echo "Next: run every test with   tests/run"
