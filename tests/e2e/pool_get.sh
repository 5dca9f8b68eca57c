#!/bin/bash
# `pool get` prints zpool get's rows (NAME PROPERTY VALUE SOURCE): list's
# values (the same numbers as `pool list -p`), the ashift in use, readonly,
# cachefile and a feature@ row for every feature `upgrade -v` names, active
# or disabled as the pool really has them; -H, -p, -o; every pool when
# none is named.  `pool set` refuses every property with zpool's reason,
# exits 1 and changes nothing.
. "$(dirname "$0")/lib.sh"
describe "pool get and pool set"
require_engine

mkdevs 4
tarn_ok pool create tank "${DEV[0]}"
tarn_ok pool create -o ashift=12 big "${DEV[1]}"
tarn_ok pool create -o version=1 old "${DEV[2]}"

# the features this build knows, from upgrade -v
tarn_ok pool upgrade -v
FEATURES=$(awk '/^FEAT DESCRIPTION/ { f = 1; next } f && /^$/ { exit }
	f && /^[a-z]/ { print $1 }' "$OUT")
[ -n "$FEATURES" ] && pass || fail "upgrade -v lists no features"
RETIRED=logical_space_v0        # known, but never set on a new pool

# get all: zpool's header and properties in zpool's order, then the features
tarn_ok pool get all tank
HDR=$(head -n 1 "$OUT" | tr -s ' ')
[ "$HDR" = "NAME PROPERTY VALUE SOURCE" ] && pass || fail "get header is '$HDR'"
props=$(awk 'NR > 1 && $2 !~ /^feature@/ { printf "%s ", $2 }' "$OUT")
[ "$props" = "size capacity altroot health guid version cachefile dedupratio free allocated readonly ashift expandsize checkpoint fragmentation " ] &&
	pass || fail "get all: properties are '$props'"
feats=$(awk 'NR > 1 && $2 ~ /^feature@/ { sub(/^feature@/, "", $2); print $2 }' "$OUT")
[ "$feats" = "$FEATURES" ] && pass ||
	fail "get all: feature rows '$(echo $feats)', upgrade -v knows '$(echo $FEATURES)'"
[ "$(awk 'NR > 1 { print $1 }' "$OUT" | sort -u)" = tank ] && pass ||
	fail "get all tank: rows of another pool"
out_has "^tank +size +[0-9.]+[KMG] +-$"
out_has "^tank +capacity +[0-9]+% +-$"
out_has "^tank +altroot +- +default$"
out_has "^tank +health +ONLINE +-$"
out_has "^tank +version +2 +default$"
out_has "^tank +cachefile +- +default$"
out_has "^tank +dedupratio +1\.00x +-$"
out_has "^tank +readonly +off +-$"
# file devices have 512-byte sectors: ashift 9 when none is given
out_has "^tank +ashift +9 +default$"
out_has "^tank +fragmentation +[-0-9%]+ +-$"
for f in $FEATURES; do
	if [ "$f" = "$RETIRED" ]; then
		out_has "^tank +feature@$f +disabled +default$"
	else
		out_has "^tank +feature@$f +active +local$"
	fi
done

# the values are list's: guid, and exact sizes (-p) read the same
tarn_ok pool list -H -o guid tank
guid=$(cat "$OUT")
tarn_ok pool get -H -o value guid tank
out_is "$guid"
tarn_ok pool list -Hp -o size,allocated tank
want=$(tr '\t' '\n' <"$OUT")
[[ "$want" =~ ^[0-9]+$'\n'[0-9]+$ ]] && pass || fail "list -Hp: '$want'"
tarn_ok pool get -Hp -o value size,allocated tank
out_is "$want"
tarn_ok pool get -Hp -o value capacity tank
out_has "^[0-9]+$"
tarn_ok pool get -H -o value health tank
out_is "ONLINE"
tarn_ok pool get -H -o value name tank
out_is "tank"
tarn_ok pool get name tank
out_has "^tank +name +tank +-$"

# -o: the fields asked for, in that order; -H: tabs, no header
tarn_ok pool get -o name,value version old
out_is "$(printf 'NAME  VALUE\nold   1')"
tarn_ok pool get -H -o source,property ashift big
out_is "$(printf 'local\tashift')"
tarn_ok pool get -H -o all health tank
out_is "$(printf 'tank\thealth\tONLINE\t-')"

# ashift: the one in use, local when create was given it
tarn_ok pool get -H -o value,source ashift big
out_is "$(printf '12\tlocal')"
# a version-1 pool keeps no history: the ashift, but no telling where from
tarn_ok pool get -H -o value,source ashift old
out_is "$(printf '9\t-')"

# an old pool: version 1, every feature disabled
tarn_ok pool get all old
out_has "^old +version +1 +local$"
for f in $FEATURES; do
	out_has "^old +feature@$f +disabled +default$"
done

# several pools; none named is every pool, sorted
tarn_ok pool get -H -o name,value health
out_is "$(printf 'big\tONLINE\nold\tONLINE\ntank\tONLINE')"
tarn_ok pool get -H -o name,property,value feature@history tank old
out_is "$(printf 'tank\tfeature@history\tactive\nold\tfeature@history\tdisabled')"
tarn_ok pool get -H -o name,value readonly
out_is "$(printf 'big\toff\nold\toff\ntank\toff')"

# mistakes
tarn_err 2 "^bad property list: invalid property 'foo'$" pool get foo tank
tarn_err 2 "^bad property list: invalid property 'feature@nosuch'$" pool get feature@nosuch tank
tarn_err 2 "^bad property list: property 'autoexpand' is not supported by Tarn$" \
	pool get autoexpand tank
tarn_err 2 "^invalid field 'bogus'" pool get -o name,bogus size tank
tarn_err 2 "^missing property argument$" pool get
tarn_err 2 "^invalid option 'x'" pool get -x size tank
tarn_err 1 "^cannot open 'nope': no such pool$" pool get all nope
# a missing pool is reported, the others still shown
tarn pool get -H -o name,value health nope tank
[ "$RC" = 1 ] && pass || fail "get health nope tank: exit $RC"
[ "$(cat "$ERR")" = "cannot open 'nope': no such pool" ] && pass || { fail "get nope: stderr"; show_output; }
out_is "$(printf 'tank\tONLINE')"

# set: nothing can be set; zpool's reasons, exit 1
for p in size capacity health guid free allocated dedupratio expandsize checkpoint \
    fragmentation name; do
	tarn_err 1 "^cannot set property for 'tank': '$p' is readonly$" pool set "$p=1" tank
done
tarn_err 1 "^cannot set property for 'big': property 'ashift' can only be set at creation time" \
	pool set ashift=9 big
tarn_err 1 "^cannot set property for 'tank': property 'altroot' can only be set at creation or import time" \
	pool set altroot=/mnt tank
tarn_err 1 "^cannot set property for 'tank': property 'readonly' can only be set at import time" \
	pool set readonly=on tank
tarn_err 1 "^cannot set property for 'tank': property 'cachefile' can only be set at creation or import time" \
	pool set cachefile=none tank
tarn_err 1 "^cannot set property for 'old': property 'version' can only be set at creation time; use '.*upgrade'" \
	pool set version=2 old
for p in autoexpand autoreplace autotrim bootfs comment delegation failmode \
    listsnapshots multihost compatibility; do
	tarn_err 1 "^cannot set property for 'tank': property '$p' is not supported by Tarn$" \
		pool set "$p=on" tank
done
tarn_err 1 "^cannot set property for 'old': features are enabled by '.*upgrade old'" \
	pool set feature@history=enabled old
tarn_err 1 "^cannot set property for 'tank': property 'feature@history' can only be set to 'enabled'" \
	pool set feature@history=disabled tank
tarn_err 1 "^cannot set property for 'old': feature 'space_deflate' can only be enabled when a pool is created" \
	pool set feature@space_deflate=enabled old
tarn_err 1 "^cannot set property for 'tank': invalid property 'foo'$" pool set foo=bar tank
tarn_err 1 "^cannot set property for 'tank': invalid property 'feature@nosuch'$" \
	pool set feature@nosuch=enabled tank
# an active feature is already enabled: nothing to do, as zpool
tarn_ok pool set feature@history=enabled tank
out_is ""
tarn_err 1 "^cannot open 'nope': no such pool$" pool set autoexpand=on nope
tarn_err 2 "^missing value in property=value argument$" pool set autoexpand tank
tarn_err 2 "^missing property=value argument$" pool set
tarn_err 2 "^missing pool name$" pool set autoexpand=on
tarn_err 2 "^too many pool names$" pool set autoexpand=on tank big

# ... and nothing changed
tarn_ok pool get -H -o value ashift big
out_is "12"
tarn_ok pool get -H -o value version,feature@history,feature@intent_log old
out_is "$(printf '1\ndisabled\ndisabled')"
tarn_ok pool get -H -o value cachefile,readonly tank
out_is "$(printf -- '-\noff')"
tarn_ok pool history tank
out_lacks " set "

# what upgrade enables shows as active; what only new pools get does not
tarn_ok pool upgrade old
tarn_ok pool get -H -o property,value,source feature@history,feature@space_deflate old
out_is "$(printf 'feature@history\tactive\tlocal\nfeature@space_deflate\tdisabled\tdefault')"

# the daemon holds pools outside the cache file: cachefile=none, and a
# read-only import (in-process neither is remembered)
if [ -z "${TARN_NO_DAEMON:-}" ]; then
	tarn_ok pool create -o cachefile=none nc "${DEV[3]}"
	tarn_ok pool get -H -o value,source cachefile,readonly nc
	out_is "$(printf 'none\tlocal\noff\t-')"
	tarn_ok pool destroy nc
	tarn_ok pool export big
	tarn_ok pool import -o readonly=on -d "$DEVDIR" big
	tarn_ok pool get -H -o name,value readonly
	out_is "$(printf 'big\ton\nold\toff\ntank\toff')"
	tarn_ok pool get -H -o value ashift big
	out_is "12"
	tarn_ok pool export big
fi
e2e_done
