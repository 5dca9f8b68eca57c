#!/bin/bash
# Datasets through `tarn fs` and the `zfs` symlink: create (-p, -o),
# list/get in zfs's shapes, set/inherit with sources, rename, destroy
# (-r), persistence across export/import, and bad input (names, values,
# destroy with children) giving one-line errors with exit 1 or usage 2.
. "$(dirname "$0")/lib.sh"
describe "datasets: zfs create/list/get/set/inherit/rename/destroy"
require_engine
# Commands go through the test's own tarnd (TARN_NO_DAEMON=1: in-process).

ZFS="$E2E_TMP/bin/zfs"
mkdir -p "$E2E_TMP/bin"
ln -s "$TARN" "$ZFS"

mkdevs 1 256M
tarn_ok pool create tank "${DEV[0]}"

# the root dataset exists from the first command on
tarn_ok fs list -H -o name
out_is "tank"
tarn_ok fs create tank/home
tarn_ok fs create -p tank/home/ann/src
tarn_ok fs create -o compression=lz4 -o quota=1G -o mountpoint=/srv/data tank/data
tarn_ok fs list -H -o name
out_is "$(printf 'tank\ntank/data\ntank/home\ntank/home/ann\ntank/home/ann/src')"

# zfs list: header and columns
tarn_ok fs list
head -n 1 "$OUT" | grep -Eq '^NAME +USED +AVAIL +REFER +MOUNTPOINT$' && pass ||
	{ fail "list header"; show_output; }
out_has '^tank/home/ann/src +[0-9.]+[BKMG] +[0-9.]+[BKMG] +[0-9.]+[BKMG] +/tank/home/ann/src$'
out_has '^tank/data +.* +/srv/data$'
tarn_ok fs list -H -p -o name,used,quota tank/data
grep -Eq '^tank/data	[0-9]+	1073741824$' "$OUT" && pass || { fail "list -Hp"; show_output; }
tarn_ok fs list -d 1 -H -o name tank/home
out_is "$(printf 'tank/home\ntank/home/ann')"
tarn_ok fs list -r -H -o name tank/home/ann
out_is "$(printf 'tank/home/ann\ntank/home/ann/src')"
tarn_ok fs list -t snapshot -H
out_is ""
tarn_ok fs list -t snapshot
out_is ""
grep -qx "no datasets available" "$ERR" && pass || { fail "list -t snapshot: no message"; show_output; }
tarn_err 2 "invalid type 'bogus'" fs list -t bogus
tarn_err 2 "bad property list: invalid property 'nope'" fs list -o name,nope
# -s / -S: sorted by a property (numbers by value, ties in tree order),
# the first key the strongest
tarn_ok fs set quota=3G tank/home/ann
tarn_ok fs list -H -s quota -o name,quota
out_is "$(printf 'tank\tnone\ntank/home\tnone\ntank/home/ann/src\tnone\ntank/data\t1G\ntank/home/ann\t3G')"
tarn_ok fs list -H -S quota -S name -o name
out_is "$(printf 'tank/home/ann\ntank/data\ntank/home/ann/src\ntank/home\ntank')"
tarn_ok fs list -H -S mountpoint -o name -r tank/home
out_is "$(printf 'tank/home/ann/src\ntank/home/ann\ntank/home')"
tarn_ok fs set quota=none tank/home/ann
tarn_err 2 "invalid property 'nope'" fs list -s nope
# -o space: used split into the dataset's own bytes and its children's
# (a child's reservation counts in full); no snapshots
tarn_ok fs list -o space tank
head -n 1 "$OUT" | grep -Eq '^NAME +AVAIL +USED +USEDSNAP +USEDDS +USEDREFRESERV +USEDCHILD$' &&
	pass || { fail "list -o space header"; show_output; }
tarn_ok fs set reservation=40M tank/home/ann/src
tarn_ok fs list -H -p -o used,usedds,usedchild,referenced,usedsnap,usedrefreserv tank/home
read -r u ds ch ref snap rr < "$OUT"
[ "$ds" = "$ref" ] && [ "$((ds + ch))" = "$u" ] && [ "$snap" = 0 ] && [ "$rr" = 0 ] &&
	[ "$ch" -ge 41943040 ] && pass ||
	{ fail "usedby*: used $u usedds $ds usedchild $ch refer $ref"; show_output; }
tarn_ok fs set reservation=none tank/home/ann/src
# refreservation: the room the dataset's own data does not fill yet is in
# its used (usedbyrefreservation), and taken from the other datasets
tarn_ok fs list -H -p -o avail tank/data
read -r avail0 < "$OUT"
tarn_ok fs set refreserv=30M tank/home
tarn_ok fs get -H -o value,source refreservation tank/home
out_is "$(printf '30M\tlocal')"
tarn_ok fs list -H -p -o used,usedds,usedrefreserv,usedchild,avail tank/home
read -r u ds rr ch av < "$OUT"
[ "$((ds + rr))" = 31457280 ] && [ "$((ds + rr + ch))" = "$u" ] && pass ||
	{ fail "refreservation: used $u usedds $ds usedrefreserv $rr usedchild $ch"; show_output; }
tarn_ok fs list -H -p -o avail tank/data
read -r avail1 < "$OUT"
[ "$((avail0 - avail1))" -gt 30000000 ] && [ "$((avail0 - avail1))" -lt 33000000 ] && pass ||
	fail "refreservation=30M took $((avail0 - avail1)) bytes from tank/data"
[ "$av" -gt "$((avail1 + 29000000))" ] && pass ||
	fail "tank/home cannot write into its own refreservation: avail $av, others $avail1"
tarn_err 1 "^cannot set property for 'tank/home': size is greater than available space$" \
	fs set refreservation=100T tank/home
tarn_err 1 "property cannot be inherited" fs inherit refreservation tank/home
tarn_ok fs set refreservation=none tank/home
tarn_ok fs list -H -p -o usedrefreserv tank/home
out_is "0"

# zfs get: table, sources, -H -p -o
tarn_ok fs get compression tank/data
out_is "$(printf 'NAME       PROPERTY     VALUE  SOURCE\ntank/data  compression  lz4    local')"
tarn_ok fs get -H -o value,source mountpoint tank/home/ann
out_is "$(printf '/tank/home/ann\tdefault')"
tarn_ok fs set atime=off recordsize=16K tank/home
tarn_ok fs get -H -o name,value,source atime,recordsize tank/home/ann/src
out_is "$(printf 'tank/home/ann/src\toff\tinherited from tank/home\ntank/home/ann/src\t16K\tinherited from tank/home')"
tarn_ok fs get -Hp -o value recordsize tank/home/ann
out_is "16384"
tarn_ok fs get -H -o property all tank/home
for p in type creation used available referenced mounted quota reservation recordsize \
    mountpoint checksum compression atime devices exec setuid readonly canmount xattr \
    copies refquota refreservation relatime sync acltype; do
	grep -qx "$p" "$OUT" && pass || fail "get all lacks $p"
done
tarn_ok fs get -H -o value type,mounted tank/home
out_is "$(printf 'filesystem\nno')"
tarn_ok fs get -H name,type tank/home
out_is "$(printf 'tank/home\tname\ttank/home\t-\ntank/home\ttype\tfilesystem\t-')"
tarn_ok fs get -r -s local -H -o name,property atime tank
out_is "$(printf 'tank/home\tatime')"
tarn_ok fs inherit atime tank/home
tarn_ok fs get -H -o value,source atime tank/home/ann
out_is "$(printf 'on\tdefault')"
tarn_ok fs set mountpoint=/export tank/home
tarn_ok fs get -H -o value,source mountpoint tank/home/ann/src
out_is "$(printf '/export/ann/src\tinherited from tank/home')"

# rename, also under another parent; inherited values follow
tarn_ok fs rename tank/home/ann tank/data/ann
tarn_ok fs get -H -o value mountpoint tank/data/ann/src
out_is "/srv/data/ann/src"
tarn_err 1 "^cannot rename to 'tank/data': dataset already exists$" fs rename tank/home tank/data
tarn_err 1 "^cannot rename to 'tank/x/y': parent does not exist$" fs rename tank/home tank/x/y

# user properties (module:name): set, inherited, get all, list -o / -s,
# create -o, inherit removes them, bad names and values
tarn_ok fs set com.example:backup=weekly tank/data
tarn_ok fs create -o com.example:owner=ann tank/data/ann/docs
tarn_ok fs get -H -o name,property,value,source com.example:backup,com.example:owner tank/data/ann/docs
out_is "$(printf 'tank/data/ann/docs\tcom.example:backup\tweekly\tinherited from tank/data\ntank/data/ann/docs\tcom.example:owner\tann\tlocal')"
tarn_ok fs get -H -o value,source com.example:none tank/data
out_is "$(printf -- '-\t-')"
tarn_ok fs get -H -o property,value all tank/data/ann/docs
tail -n 2 "$OUT" | diff - <(printf 'com.example:backup\tweekly\ncom.example:owner\tann\n') >/dev/null &&
	pass || { fail "get all: user properties last"; show_output; }
tarn_ok fs get -H -o property all tank/home
grep -q : "$OUT" && { fail "get all: a user property where none is set"; show_output; } || pass
tarn_ok fs list -o name,com.example:owner -s com.example:owner -r tank/data/ann
out_is "$(printf 'NAME                COM.EXAMPLE:OWNER\ntank/data/ann       -\ntank/data/ann/src   -\ntank/data/ann/docs  ann')"
tarn_ok fs set com.example:backup=daily tank/data/ann
tarn_ok fs get -H -o value com.example:backup tank/data/ann/docs
out_is "daily"
tarn_ok fs inherit com.example:backup tank/data/ann
tarn_ok fs get -H -o value,source com.example:backup tank/data/ann/docs
out_is "$(printf 'weekly\tinherited from tank/data')"
tarn_ok fs inherit -r com.example:backup tank/data
tarn_ok fs get -H -o value com.example:backup tank/data/ann/docs
out_is "-"
tarn_err 1 "^cannot set property for 'tank/data': invalid property 'Com.Example:x'$" fs set Com.Example:x=1 tank/data
tarn_err 1 "is too long" fs set "com.example:big=$(printf 'v%.0s' {1..8200})" tank/data
tarn_err 2 "invalid property 'bad:Name'" fs list -o name,bad:Name
tarn_ok fs destroy tank/data/ann/docs

# through the zfs symlink
ok "$ZFS" create tank/viazfs
ok "$ZFS" list -H -o name tank/viazfs
out_is "tank/viazfs"
ok "$ZFS" destroy tank/viazfs
run "$ZFS"
[ "$RC" -eq 2 ] && grep -q "^usage: zfs" "$ERR" && pass || { fail "bare zfs usage"; show_output; }

# bad input: one line, exit 1 (errors) or 2 (usage)
tarn_err 1 "^cannot create 'tank/a b\*': invalid character '\*' in name$" fs create 'tank/a b*'
tarn_err 1 "^cannot create 'tank/x/': trailing slash in name$" fs create tank/x/
tarn_err 1 "^cannot create 'tank//x': empty component or misplaced '@' or '#' delimiter in name$" fs create tank//x
tarn_err 1 "^cannot create 'tank/s@1': snapshot delimiter '@' is not expected here$" fs create tank/s@1
tarn_err 1 "^cannot create 'tank/$(printf 'a%.0s' {1..300})': name is too long$" fs create "tank/$(printf 'a%.0s' {1..300})"
tarn_err 1 "^cannot create 'tank/data': dataset already exists$" fs create tank/data
tarn_err 1 "^cannot create 'tank/no/such': parent does not exist$" fs create tank/no/such
tarn_err 1 "^cannot create 'nopool/x': no such pool 'nopool'$" fs create nopool/x
tarn_err 1 "^cannot create 'tank/r': 'recordsize' must be power of 2 from 512B to 1M$" fs create -o recordsize=3000 tank/r
tarn_err 1 "^cannot set property for 'tank/data': 'recordsize' must be power of 2 from 512B to 1M$" fs set recordsize=2M tank/data
tarn_err 1 "^cannot set property for 'tank/data': 'atime' must be one of 'off \| on'$" fs set atime=maybe tank/data
tarn_err 1 "^cannot set property for 'tank/data': bad numeric value 'lots'$" fs set quota=lots tank/data
tarn_err 1 "^cannot set property for 'tank/data': 'used' is readonly$" fs set used=1 tank/data
tarn_err 1 "^cannot set property for 'tank/data': invalid property 'bogus'$" fs set bogus=1 tank/data
tarn_err 1 "^cannot set property for 'tank/data': 'mountpoint' must be an absolute path, 'none', or 'legacy'$" fs set mountpoint=rel tank/data
tarn_err 1 "^cannot open 'tank/nope': dataset does not exist$" fs set atime=off tank/nope
tarn_err 1 "^cannot open 'tank/nope': dataset does not exist$" fs list tank/nope
tarn_err 1 "^cannot destroy 'tank/data': filesystem has children; use -r$" fs destroy tank/data
tarn_err 1 "^cannot destroy 'tank': operation does not apply to pools; use 'zfs destroy -r tank'" fs destroy tank
tarn_err 1 "^cannot inherit 'tank/data': 'quota' property cannot be inherited" fs inherit quota tank/data
tarn_err 2 "missing '=' for property argument" fs create -o compression tank/q
tarn_err 2 "invalid option 'Z'" fs create -Z tank/q
tarn_err 2 "missing dataset argument" fs destroy
tarn_err 2 "^unrecognized command 'frob'" fs frob
tarn_ok fs list -H -o name tank/data/ann
out_is "tank/data/ann"

# everything survives export/import
tarn_ok pool export tank
tarn_ok pool import -d "$DEVDIR" tank
tarn_ok fs list -H -o name
out_is "$(printf 'tank\ntank/data\ntank/data/ann\ntank/data/ann/src\ntank/home')"
tarn_ok fs get -H -o value,source compression,quota tank/data
out_is "$(printf 'lz4\tlocal\n1G\tlocal')"
tarn_ok fs set com.example:kept=yes tank/data
tarn_ok pool export tank
tarn_ok pool import -d "$DEVDIR" tank
tarn_ok fs get -H -o value com.example:kept tank/data/ann
out_is "yes"

# destroy -r removes the subtree
tarn_ok fs destroy -r tank/data
tarn_ok fs list -H -o name
out_is "$(printf 'tank\ntank/home')"
tarn_ok fs create tank/home/x
tarn_ok fs destroy -r tank
tarn_ok fs list -H -o name
out_is "tank"
tarn_ok pool destroy tank
e2e_done
