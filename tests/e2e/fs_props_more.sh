#!/bin/bash
# Properties scripts read, as zfs get prints them: guid, createtxg and
# objsetid (numbers, source -), redundant_metadata (all|most|some|none)
# and dnodesize (legacy|auto|1k..16k), inheritable; utf8only,
# normalization and casesensitivity are fixed at creation (create -o or
# pool create -O; a child takes its parent's; source -), and utf8only=on
# refuses names that are not UTF-8 (EILSEQ) through the mount.  Modes
# Tarn cannot honour yet (normalization other than none, case-insensitive
# lookups) are refused, not taken and ignored.  get all lists them in
# zfs's order.
. "$(dirname "$0")/lib.sh"
describe "guid, createtxg, objsetid, redundant_metadata, dnodesize, utf8only, normalization, casesensitivity"
require_engine

mkdevs 2
tarn_ok pool create -m none -O utf8only=on pm "${DEV[0]}"
tarn_ok fs create pm/a
tarn_ok fs create pm/a/b
tarn_ok fs create -o utf8only=off -o normalization=none -o casesensitivity=sensitive pm/plain

# get all: the new rows, in zfs's order among the others
tarn_ok fs get -H -o property all pm/a
order=$(grep -xE "readonly|createtxg|canmount|copies|utf8only|normalization|casesensitivity|refquota|refreservation|guid|usedbysnapshots|usedbyrefreservation|objsetid|sync|dnodesize|refcompressratio|relatime|redundant_metadata" "$OUT" | tr '\n' ' ')
[ "$order" = "readonly createtxg canmount copies utf8only normalization casesensitivity refquota refreservation guid usedbysnapshots usedbyrefreservation objsetid sync dnodesize refcompressratio relatime redundant_metadata " ] &&
	pass || fail "get all order: $order"

# values and sources as zfs prints them
tarn_ok fs get -H -o property,value,source utf8only,normalization,casesensitivity,redundant_metadata,dnodesize pm/a/b
out_is "$(printf 'utf8only\ton\t-\nnormalization\tnone\t-\ncasesensitivity\tsensitive\t-\nredundant_metadata\tall\tdefault\ndnodesize\tlegacy\tdefault')"
tarn_ok fs get -H -o value utf8only pm/plain
out_is "off"
tarn_ok fs get -H -o name,source guid,createtxg,objsetid pm/a
out_is "$(printf 'pm/a\t-\npm/a\t-\npm/a\t-')"
# guid: a number, one per dataset, the same after export and import
tarn_ok fs get -H -p -o value guid pm pm/a pm/a/b
guids=$(cat "$OUT")
[ "$(grep -cE '^[0-9]+$' "$OUT")" -eq 3 ] && [ "$(sort -u "$OUT" | wc -l)" -eq 3 ] && pass ||
	fail "guids: $guids"
# createtxg grows with each create; objsetid differs
tarn_ok fs get -H -o value createtxg pm pm/a pm/a/b
{ read -r t0; read -r t1; read -r t2; } < "$OUT"
[ "$t0" -lt "$t1" ] && [ "$t1" -lt "$t2" ] && pass || fail "createtxg $t0 $t1 $t2"
tarn_ok fs get -H -o value objsetid pm pm/a pm/a/b
[ "$(grep -cE '^[0-9]+$' "$OUT")" -eq 3 ] && [ "$(sort -u "$OUT" | wc -l)" -eq 3 ] && pass ||
	fail "objsetids: $(cat "$OUT")"
tarn_err 1 "^cannot set property for 'pm/a': 'guid' is readonly" fs set guid=5 pm/a
tarn_err 1 "^cannot set property for 'pm/a': 'createtxg' is readonly" fs set createtxg=5 pm/a

# redundant_metadata and dnodesize: set, inherited, checked
tarn_ok fs set redundant_metadata=most dnodesize=auto pm/a
tarn_ok fs get -H -o value,source redundant_metadata,dnodesize pm/a/b
out_is "$(printf 'most\tinherited from pm/a\nauto\tinherited from pm/a')"
for v in legacy auto 1k 2k 4k 8k 16k; do
	tarn_ok fs set dnodesize=$v pm/a/b
	tarn_ok fs get -H -o value dnodesize pm/a/b
	out_is "$v"
done
for v in all most some none; do
	tarn_ok fs set redundant_metadata=$v pm/a/b
	tarn_ok fs get -H -o value redundant_metadata pm/a/b
	out_is "$v"
done
tarn_err 1 "'dnodesize' must be one of 'legacy \| auto \| 1k \| 2k \| 4k \| 8k \| 16k'" \
	fs set dnodesize=32k pm/a
tarn_err 1 "'redundant_metadata' must be one of 'all \| most \| some \| none'" \
	fs set redundant_metadata=half pm/a
tarn_ok fs inherit dnodesize pm/a/b
tarn_ok fs get -H -o value,source dnodesize pm/a/b
out_is "$(printf 'auto\tinherited from pm/a')"

# creation-time properties: not afterwards, not inherited, unsupported modes refused
tarn_err 1 "^cannot set property for 'pm/a': 'utf8only' is readonly" fs set utf8only=off pm/a
tarn_err 1 "^cannot set property for 'pm/a': 'casesensitivity' is readonly" \
	fs set casesensitivity=sensitive pm/a
tarn_err 1 "^cannot inherit 'pm/a': 'normalization' property is read-only" \
	fs inherit normalization pm/a
tarn_err 1 "^cannot create 'pm/ci': 'casesensitivity=insensitive' is not supported yet" \
	fs create -o casesensitivity=insensitive pm/ci
tarn_err 1 "^cannot create 'pm/cm': 'casesensitivity=mixed' is not supported yet" \
	fs create -o casesensitivity=mixed pm/cm
tarn_err 1 "^cannot create 'pm/nd': 'normalization=formD' is not supported yet" \
	fs create -o normalization=formD pm/nd
tarn_err 1 "'normalization' must be one of 'none \| formC \| formD \| formKC \| formKD'" \
	fs create -o normalization=nfc pm/nx
tarn_ok fs list -H -o name -r pm
out_lacks "^pm/(ci|cm|nd|nx)$"

tarn_ok pool export pm
tarn_ok pool import -d "$DEVDIR" pm
tarn_ok fs get -H -p -o value guid pm pm/a pm/a/b
[ "$(cat "$OUT")" = "$guids" ] && pass || fail "guids changed across export/import"
tarn_ok fs get -H -o value utf8only,redundant_metadata pm/a/b
out_is "$(printf 'on\tnone' | tr '\t' '\n')"

# utf8only=on through the mount: a name that is not UTF-8 is EILSEQ
if [ -z "${TARN_NO_DAEMON:-}" ] && [ -e /dev/fuse ] && command -v python3 >/dev/null; then
	export TARN_AUTOMOUNT=1
	MNT="$E2E_TMP/mnt"
	mkdir -p "$MNT"
	tarn_ok fs set mountpoint="$MNT/u" pm/a
	tarn_ok fs set mountpoint="$MNT/p" pm/plain
	tarn_ok fs mount pm/a
	tarn_ok fs mount pm/plain
	ok python3 - "$MNT" <<'PY'
import errno, os, sys
m = sys.argv[1].encode()
for bad in (b"caf\xe9", b"\xff", b"\xc0\xaf"):
    try:
        os.close(os.open(m + b"/u/" + bad, os.O_CREAT | os.O_WRONLY, 0o644))
        sys.exit("utf8only=on took %r" % bad)
    except OSError as e:
        if e.errno != errno.EILSEQ:
            sys.exit("%r: %s, not EILSEQ" % (bad, e))
os.close(os.open(m + "/u/café €".encode(), os.O_CREAT | os.O_WRONLY, 0o644))
os.mkdir(m + "/u/dir-\u00e9".encode())
try:
    os.mkdir(m + b"/u/dir-\xe9")
    sys.exit("mkdir took a latin-1 name")
except OSError as e:
    assert e.errno == errno.EILSEQ, e
os.close(os.open(m + b"/p/caf\xe9", os.O_CREAT | os.O_WRONLY, 0o644))  # utf8only=off
PY
	tarn_ok fs unmount pm/a
	tarn_ok fs unmount pm/plain
else
	echo "  (no daemon mounts: the EILSEQ check through the mount is left out)"
fi
tarn_ok pool destroy pm
e2e_done
