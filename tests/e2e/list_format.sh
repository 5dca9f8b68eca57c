#!/bin/bash
# `list` and `status` print zpool's formats: the list header, -H (tabs, no
# header), -p (exact bytes), -o (columns), -j (JSON that parses), -v (a
# row per vdev, and the spares).
. "$(dirname "$0")/lib.sh"
describe "list and status output formats (-H, -p, -o, -j)"
require_engine

tarn_ok pool list
out_is "no pools available"
tarn_ok pool list -H
out_is ""

mkdevs 4 256M
tarn_ok pool create fmt raidz1 "${DEV[@]}"
tarn_ok pool list
HDR=$(head -n 1 "$OUT" | tr -s ' ')
[ "$HDR" = "NAME SIZE ALLOC FREE CKPOINT EXPANDSZ FRAG CAP DEDUP HEALTH ALTROOT" ] && pass ||
	fail "list header is '$HDR'"
out_has "^fmt +[0-9.]+[KMGT] +[0-9.]+[KMGT]? +[0-9.]+[KMGT] +- +- +[-0-9%]+ +[0-9]+% +1\.00x +ONLINE  -$"

tarn_ok pool list -Hp
read -r name size alloc free rest <"$OUT"
[ "$name" = fmt ] && pass || fail "list -Hp name '$name'"
if [[ "$size" =~ ^[0-9]+$ && "$alloc" =~ ^[0-9]+$ && "$free" =~ ^[0-9]+$ ]]; then
	pass
	# raidz1 of 4 x 256M: more than 3 x 200M usable, less than 4 x 256M
	[ "$size" -gt $((600 * 1024 * 1024)) ] && [ "$size" -lt $((1024 * 1024 * 1024)) ] &&
		pass || fail "size $size out of range"
	[ $((alloc + free)) -le "$size" ] && pass || fail "alloc+free > size"
else
	fail "list -Hp gave non-numeric sizes: $(cat "$OUT")"
fi
[ "$(awk -F'\t' '{ print NF }' "$OUT")" = 11 ] && pass || fail "list -H: not 11 tab-separated fields"

tarn_ok pool list -o name,health,cap
out_has "^NAME +HEALTH +CAP$"
out_has "^fmt +ONLINE +[0-9]+%$"
tarn_ok pool list -H -o NAME,Health
out_is "fmt	ONLINE"

# -v: a row per vdev, indented by depth; capacity on the top-level vdev
# only, a leaf's own size; -H puts a tab before a vdev's name
tarn_ok pool list -v
out_has "^fmt  "
out_has "^  raidz1-0 +[0-9.]+M +[0-9.]+[KM] +[0-9.]+M +- +- +- +[0-9.]+% +- +ONLINE$"
[ "$(grep -cE "^    $DEVDIR/d[0-9] +256M +- +- +- +- +- +- +- +ONLINE$" "$OUT")" = 4 ] &&
	pass || { fail "list -v: not 4 leaf rows of 256M"; show_output; }
tarn_ok pool list -vHp
[ "$(grep -c "^	" "$OUT")" = 5 ] && pass || fail "list -vH: vdev rows do not start with a tab"
# a tab, the name, SIZE..HEALTH (no ALTROOT): 11 fields as the pool's row
[ "$(awk -F'\t' '{ print NF }' "$OUT" | sort -u)" = 11 ] && pass ||
	fail "list -vH: rows of $(awk -F'\t' '{ print NF }' "$OUT" | sort -u | tr '\n' ' ')fields"
vsize=$(awk -F'\t' '$2 == "raidz1-0" { print $3 }' "$OUT")
psize=$(awk -F'\t' '$1 == "fmt" { print $2 }' "$OUT")
[ -n "$vsize" ] && [ "$vsize" = "$psize" ] && pass ||
	fail "list -vHp: raidz1-0 size '$vsize', pool size '$psize'"
tarn_ok pool list -v -o name,health
out_has "^  raidz1-0 +ONLINE$"
if command -v python3 >/dev/null; then
	tarn_ok pool list -jv
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=d["pools"]["fmt"]; r=p["vdevs"]["fmt"]["vdevs"]["raidz1-0"]; assert r["vdev_type"] == "raidz"; assert len(r["vdevs"]) == 4' "$OUT" &&
		pass || fail "list -jv is not the expected JSON"
	tarn_ok pool list -j
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["pools"]["fmt"]["properties"]["health"]["value"] == "ONLINE"' "$OUT" &&
		pass || fail "list -j is not the expected JSON"
	tarn_ok pool status -j
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=d["pools"]["fmt"]; assert p["state"] == "ONLINE"; assert "raidz1-0" in p["vdevs"]["fmt"]["vdevs"]' "$OUT" &&
		pass || fail "status -j is not the expected JSON"
fi

# status layout, column by column
tarn_ok pool status fmt
out_has "^	NAME +STATE +READ WRITE CKSUM$"
W=$(awk -F'\t' '/^\tNAME/ { print index($2, "STATE") }' "$OUT")
bad=$(awk -F'\t' -v w="$W" 'started && NF > 1 && $2 != "" && index($2, "ONLINE") != w { print }
	/^\tNAME/ { started = 1 }' "$OUT")
[ -z "$bad" ] && pass || fail "STATE column not aligned: $bad"
tarn_ok pool status -p fmt
out_has "^	fmt +ONLINE +0 +0 +0$"
truncate -s 256M "$DEVDIR/spare0"
tarn_ok pool add fmt spare "$DEVDIR/spare0"
tarn_ok pool list -v
out_has "^spare +- +- +- +- +- +- +- +- +-$"
out_has "^  $DEVDIR/spare0 +[0-9.]+M( +-){7} +AVAIL$"

if command -v python3 >/dev/null; then
	tarn_ok pool list -jv
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["pools"]["fmt"]["spares"]; assert list(s.values())[0]["properties"]["health"]["value"] == "AVAIL"' "$OUT" &&
		pass || fail "list -jv: no AVAIL spare"
fi
tarn_ok pool destroy fmt
e2e_done
