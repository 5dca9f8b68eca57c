#!/bin/bash
# Create, list, status, export, import and destroy pools of every layout:
# single device, stripe, 2- and 3-way mirror, raidz1/2/3 and multi-group.
. "$(dirname "$0")/lib.sh"
describe "lifecycle of single, stripe, mirror, raidz1/2/3 and multi-group pools"
require_engine

# layout name | vdev words (Dn = nth device) | expected tree lines (regexes)
check_layout() {
	local label=$1 ndev=$2 spec=$3
	shift 3
	local words=() w
	mkdevs "$ndev" "$E2E_DEVSIZE" "$label-"
	for w in $spec; do
		case "$w" in
		D*) words+=("${DEV[${w#D}]}") ;;
		*) words+=("$w") ;;
		esac
	done
	tarn_ok pool create tank "${words[@]}" || return
	tarn_ok pool status tank
	out_has "^  pool: tank$"
	out_has "^ state: ONLINE$"
	out_has "^	NAME +STATE +READ WRITE CKSUM$"
	out_has "^	tank +ONLINE +0 +0 +0$"
	local re
	for re in "$@"; do out_has "$re"; done
	out_has "^errors: No known data errors$"
	for w in "${DEV[@]}"; do out_has "^	 +$w +ONLINE +0 +0 +0$"; done
	tarn_ok pool list -H -o name,health tank
	out_is "tank	ONLINE"
	tarn_ok pool export tank
	tarn_ok pool list
	out_is "no pools available"
	tarn_ok pool import -d "$DEVDIR"
	out_has "^   pool: tank$"
	out_has "^  state: ONLINE$"
	tarn_ok pool import -d "$DEVDIR" tank
	tarn_ok pool status -x
	out_is "all pools are healthy"
	tarn_ok pool destroy tank
	tarn_ok pool list
	out_is "no pools available"
	tarn_err 1 "no pools available to import" pool import -d "$DEVDIR"
	rm -f "${DEV[@]}"
}

check_layout single 1 "D0"
check_layout stripe 3 "D0 D1 D2"
check_layout mirror2 2 "mirror D0 D1" "^	  mirror-0 +ONLINE"
check_layout mirror3 3 "mirror D0 D1 D2" "^	  mirror-0 +ONLINE"
check_layout raidz1 3 "raidz D0 D1 D2" "^	  raidz1-0 +ONLINE"
check_layout raidz2 4 "raidz2 D0 D1 D2 D3" "^	  raidz2-0 +ONLINE"
check_layout raidz3 5 "raidz3 D0 D1 D2 D3 D4" "^	  raidz3-0 +ONLINE"
check_layout multi 7 "mirror D0 D1 raidz1 D2 D3 D4 mirror D5 D6" \
	"^	  mirror-0 +ONLINE" "^	  raidz1-1 +ONLINE" "^	  mirror-2 +ONLINE"
e2e_done
