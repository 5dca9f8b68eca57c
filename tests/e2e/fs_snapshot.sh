#!/bin/bash
# Snapshots, holds and bookmarks through the zfs verbs: snapshot (-r, -o,
# several names at once, all or nothing), list -t/-s/-S/-d/-r over
# snapshots and bookmarks, get on snapshots (statistics, what they keep
# of their file system, user properties, get all's rows), destroy of
# snapshots (ranges, lists, -r, -d, -n -v, -p) and bookmarks, a file
# system with snapshots refused without -r, rename (-r), hold/holds/
# release, bookmark, snapdir, the limits and counts, the pool history and
# export/import; bad input: one-line zfs-style errors, exit 1, nothing
# changed.  Runs through the test's tarnd, or in-process with
# TARN_NO_DAEMON=1.
. "$(dirname "$0")/lib.sh"
describe "snapshots: zfs snapshot/destroy/rename/hold/holds/release/bookmark, list and get"
require_engine

mkdevs 1 256M
tarn_ok pool create tank "${DEV[0]}"
tarn_ok fs create -p tank/a/b

# ---- snapshot: bad input first (nothing is made) ----
tarn_err 1 "^cannot create snapshot 'tank/x@s': dataset does not exist$" fs snapshot tank/x@s
tarn_err 1 "^cannot create snapshot 'tank/a@b!c': invalid character '!' in name$" \
    fs snapshot 'tank/a@b!c'
tarn_err 1 "^cannot create snapshot 'tank/a@b/c': trailing slash in name$" \
    fs snapshot 'tank/a@b/c'
long=$(printf 'x%.0s' $(seq 1 260))
tarn_err 1 "name is too long$" fs snapshot "tank/a@$long"
tarn_err 1 "^cannot create snapshot 'tank/a': missing '@' delimiter in snapshot name$" \
    fs snapshot tank/a
tarn_err 1 "empty component or misplaced '@' or '#' delimiter in name$" fs snapshot tank/a@
tarn_err 1 "multiple '@' and/or '#' delimiters in name$" fs snapshot tank/a@x@y
tarn_err 2 "missing snapshot argument" fs snapshot
tarn_err 2 "invalid option 'x'" fs snapshot -x tank/a@s
tarn_err 1 "this property can not be modified for snapshots$" \
    fs snapshot -o compression=lz4 tank/a@s
tarn_ok fs list -H -t snapshot -o name
out_is ""

# ---- take ----
tarn_ok fs snapshot tank/a@s1
tarn_err 1 "^cannot create snapshot 'tank/a@s1': dataset already exists$" fs snapshot tank/a@s1
# several names are one operation: one bad name and none is made
tarn_err 1 "^cannot create snapshot 'tank/nope@s2': dataset does not exist$" \
    fs snapshot tank/a@s2 tank/nope@s2
tarn_ok fs list -H -o name -t snapshot tank/a
out_is "tank/a@s1"
tarn_ok fs snap tank/a@s2 tank@s2
tarn_ok fs snapshot -r tank/a@s3
tarn_ok fs snapshot -o com.example:k=v tank/a@s4
tarn_ok fs list -H -o name -t snapshot -r tank
out_is "$(printf 'tank@s2\ntank/a@s1\ntank/a@s2\ntank/a@s3\ntank/a@s4\ntank/a/b@s3')"

# ---- list ----
tarn_ok fs list -H -o name
out_is "$(printf 'tank\ntank/a\ntank/a/b')"
tarn_ok fs list -t all -r tank/a
head -n 1 "$OUT" | grep -Eq '^NAME +USED +AVAIL +REFER +MOUNTPOINT$' && pass ||
	{ fail "list -t all header"; show_output; }
out_has '^tank/a@s1 +[0-9.]+[BKMG] +- +[0-9.]+[BKMG] +-$'
out_has '^tank/a +[0-9.]+[BKMG] +[0-9.]+[BKMG] +[0-9.]+[BKMG] +/tank/a$'
# a snapshot is one level below its file system
tarn_ok fs list -H -o name -t all -d 1 tank/a
out_is "$(printf 'tank/a\ntank/a@s1\ntank/a@s2\ntank/a@s3\ntank/a@s4\ntank/a/b')"
tarn_ok fs list -H -o name -t filesystem,snapshot -d 0 tank/a
out_is "tank/a"
tarn_ok fs list -H -o name -t snap -r tank/a/b
out_is "tank/a/b@s3"
tarn_ok fs list -H -o name tank/a@s2
out_is "tank/a@s2"
tarn_err 1 "^cannot open 'tank/a@nope': dataset does not exist$" fs list tank/a@nope
tarn_ok fs list -H -o name -t snapshot -s creation tank/a
out_is "$(printf 'tank/a@s1\ntank/a@s2\ntank/a@s3\ntank/a@s4')"
tarn_ok fs list -H -o name -t snapshot -S createtxg tank/a
out_is "$(printf 'tank/a@s4\ntank/a@s3\ntank/a@s2\ntank/a@s1')"
tarn_ok fs list -H -o name -t snapshot -S name tank/a
out_is "$(printf 'tank/a@s4\ntank/a@s3\ntank/a@s2\ntank/a@s1')"
tarn_ok fs list -H -p -o name,used,refer,creation -t snapshot -s used tank/a
[ "$(grep -cE '^tank/a@s[1-4]	[0-9]+	[0-9]+	[0-9]+$' "$OUT")" -eq 4 ] && pass ||
	{ fail "list -Hp of snapshots"; show_output; }
tarn_err 2 "invalid type 'snapshots'" fs list -t snapshots

# ---- get on snapshots ----
tarn_ok fs get -H -o property,value,source type,available,mountpoint,exec,userrefs,defer_destroy tank/a@s1
out_is "$(printf 'type\tsnapshot\t-\navailable\t-\t-\nmountpoint\t-\t-\nexec\ton\tdefault\nuserrefs\t0\t-\ndefer_destroy\toff\t-')"
tarn_ok fs set exec=off tank/a
tarn_ok fs get -H -o value,source exec tank/a@s1
out_is "$(printf 'off\tinherited from tank/a')"
tarn_ok fs inherit exec tank/a
tarn_ok fs get -H -o property all tank/a@s1
out_is "$(printf '%s\n' type creation used referenced compressratio devices exec setuid \
    createtxg xattr utf8only normalization casesensitivity guid defer_destroy userrefs \
    objsetid refcompressratio written clones logicalreferenced acltype)"
# sanoid's question: the creation time of each snapshot, in seconds
tarn_ok fs get -Hpd 1 -t snapshot creation tank/a
[ "$(grep -cE '^tank/a@s[1-4]	creation	[0-9]+	-$' "$OUT")" -eq 4 ] &&
	[ "$(wc -l <"$OUT")" -eq 4 ] && pass || { fail "get -Hpd 1 -t snapshot"; show_output; }
tarn_ok fs get -H -o name -t snapshot creation tank/a
out_is ""
# the first snapshot's written is all it references; createtxg grows
tarn_ok fs get -Hp -o value written,referenced tank/a@s1
{ read -r w1; read -r r1; } <"$OUT"
[ -n "$w1" ] && [ "$w1" = "$r1" ] && pass || fail "written $w1 referenced $r1 of the first snapshot"
tarn_ok fs get -Hp -o value createtxg tank/a@s1 tank/a@s2
{ read -r t1; read -r t2; } <"$OUT"
[ "$t1" -lt "$t2" ] && pass || fail "createtxg $t1 $t2"
tarn_ok fs get -Hp -o value usedbysnapshots,written,written@s1 tank/a
[ "$(grep -cE '^[0-9]+$' "$OUT")" -eq 3 ] && pass || { fail "usedbysnapshots/written"; show_output; }
tarn_ok fs list -H -o name,written@s1 tank/a
grep -Eq '^tank/a	[0-9.]+[BKMG]$' "$OUT" && pass || { fail "list -o written@s1"; show_output; }
tarn_ok fs get -H -o value origin tank/a
out_is "-"
tarn_ok fs get -H -o property all tank/a
out_lacks '^(origin|defer_destroy|userrefs|clones)$'
order=$(grep -xE "readonly|snapdir|createtxg|refcompressratio|written|logicalused|logicalreferenced|filesystem_limit|snapshot_limit|filesystem_count|snapshot_count|acltype" "$OUT" | tr '\n' ' ')
[ "$order" = "readonly snapdir createtxg refcompressratio written logicalused logicalreferenced filesystem_limit snapshot_limit filesystem_count snapshot_count acltype " ] &&
	pass || fail "get all order: $order"

# user properties on snapshots; native ones refused
tarn_ok fs get -H -o value,source com.example:k tank/a@s4
out_is "$(printf 'v\tlocal')"
tarn_ok fs set com.example:y=z tank/a@s1
tarn_ok fs set com.example:w=fs tank/a
tarn_ok fs get -H -o property,value,source com.example:y,com.example:w tank/a@s1
out_is "$(printf 'com.example:y\tz\tlocal\ncom.example:w\tfs\tinherited from tank/a')"
tarn_ok fs get -H -o property,value all tank/a@s1
tail -n 2 "$OUT" | diff - <(printf 'com.example:w\tfs\ncom.example:y\tz\n') >/dev/null &&
	pass || { fail "get all of a snapshot: user properties last"; show_output; }
tarn_ok fs inherit com.example:y tank/a@s1
tarn_ok fs get -H -o value com.example:y tank/a@s1
out_is "-"
tarn_err 1 "^cannot set property for 'tank/a@s1': this property can not be modified for snapshots$" \
    fs set compression=lz4 tank/a@s1

# ---- snapdir ----
tarn_ok fs get -H -o value,source snapdir tank/a/b
out_is "$(printf 'hidden\tdefault')"
tarn_ok fs set snapdir=visible tank/a
tarn_ok fs get -H -o value,source snapdir tank/a/b
out_is "$(printf 'visible\tinherited from tank/a')"
tarn_err 1 "'snapdir' must be one of 'hidden \| visible'" fs set snapdir=shown tank/a
tarn_ok fs inherit snapdir tank/a

# ---- limits and counts ----
tarn_ok fs get -H -o value,source snapshot_limit,snapshot_count,filesystem_count tank/a
out_is "$(printf 'none\tdefault\nnone\tdefault\nnone\tdefault')"
tarn_ok fs set snapshot_limit=5 tank/a
tarn_ok fs get -H -o value,source snapshot_limit,snapshot_count,filesystem_count tank/a
out_is "$(printf '5\tlocal\n5\t-\n1\t-')"
tarn_err 1 "^cannot create snapshot 'tank/a@over': out of space$" fs snapshot tank/a@over
tarn_err 1 "bad numeric value 'many'" fs set snapshot_limit=many tank/a
tarn_ok fs set snapshot_limit=none filesystem_limit=1 tank/a
tarn_err 1 "^cannot create 'tank/a/c': out of space$" fs create tank/a/c
tarn_ok fs create tank/c
tarn_ok fs set filesystem_limit=none tank/a
tarn_ok fs create tank/a/c
tarn_ok fs destroy tank/a/c

# ---- holds ----
tarn_ok fs hold keep tank/a@s1
tarn_ok fs holds tank/a@s1
head -n 1 "$OUT" | grep -Eq '^NAME +TAG +TIMESTAMP$' && pass || { fail "holds header"; show_output; }
tarn_ok fs holds -H tank/a@s1
out_has '^tank/a@s1	keep	[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9][0-9] [0-9]{2}:[0-9]{2} [0-9]{4}$'
tarn_err 1 "^cannot hold snapshot 'tank/a@s1': tag already exists on this dataset$" \
    fs hold keep tank/a@s1
tarn_err 1 "^cannot hold snapshot 'tank/a@nope': dataset does not exist$" fs hold keep tank/a@nope
tarn_err 2 "missing snapshot argument" fs hold keep
tarn_ok fs get -H -o value userrefs tank/a@s1
out_is "1"
tarn_err 1 "^cannot destroy 'tank/a@s1': dataset is busy$" fs destroy tank/a@s1
tarn_ok fs list -H -o name tank/a@s1
out_is "tank/a@s1"
# -d: marked now, destroyed when the last hold goes
tarn_ok fs destroy -d tank/a@s1
tarn_ok fs get -H -o value defer_destroy tank/a@s1
out_is "on"
tarn_err 1 "^cannot release hold from snapshot 'tank/a@s1': no such tag on this dataset$" \
    fs release nope tank/a@s1
tarn_ok fs release keep tank/a@s1
tarn_err 1 "^cannot open 'tank/a@s1': dataset does not exist$" fs list tank/a@s1
# -r: the snapshot of that name in every descendant
tarn_ok fs hold -r t2 tank/a@s3
tarn_ok fs holds -rH tank/a@s3
[ "$(cut -f1,2 "$OUT")" = "$(printf 'tank/a@s3\tt2\ntank/a/b@s3\tt2')" ] && pass ||
	{ fail "holds -r"; show_output; }
tarn_ok fs release -r t2 tank/a@s3
tarn_ok fs holds -rH tank/a@s3
out_is ""

# ---- rename ----
tarn_ok fs rename tank/a@s2 tank/a@r2
tarn_ok fs list -H -o name -t snapshot tank/a
out_is "$(printf 'tank/a@r2\ntank/a@s3\ntank/a@s4')"
tarn_ok fs rename tank/a@r2 s2
tarn_ok fs list -H -o name tank/a@s2
out_is "tank/a@s2"
tarn_err 1 "^cannot rename to 'tank/c@x': snapshots must be part of same dataset$" \
    fs rename tank/a@s2 tank/c@x
tarn_err 1 "^cannot rename to 'tank/a@s3': dataset already exists$" fs rename tank/a@s2 tank/a@s3
tarn_err 1 "dataset does not exist$" fs rename tank/a@nope tank/a@x
tarn_err 2 "-r can only be used on snapshots" fs rename -r tank/a tank/z
tarn_ok fs rename -r tank/a@s3 tank/a@t3
tarn_ok fs list -H -o name -t snapshot -r tank/a
out_is "$(printf 'tank/a@s2\ntank/a@t3\ntank/a@s4\ntank/a/b@t3')"

# ---- bookmarks ----
tarn_ok fs bookmark tank/a@s2 tank/a#bm1
tarn_ok fs bookmark tank/a#bm1 tank/a#bm2
tarn_ok fs list -H -o name -t bookmark tank/a
out_is "$(printf 'tank/a#bm1\ntank/a#bm2')"
tarn_ok fs list -t bookmark tank/a
out_has '^tank/a#bm1 +- +- +- +-$'
tarn_ok fs get -Hp -o value createtxg,guid tank/a@s2
snapids=$(cat "$OUT")
tarn_ok fs get -Hp -o value createtxg,guid tank/a#bm1
[ "$(cat "$OUT")" = "$snapids" ] && pass || fail "bookmark's createtxg/guid differ from its snapshot's"
tarn_ok fs get -H -o property,value type tank/a#bm1
out_is "$(printf 'type\tbookmark')"
tarn_ok fs get -H -o property all tank/a#bm1
out_is "$(printf 'type\ncreation\ncreatetxg\nguid')"
tarn_err 1 "^cannot create bookmark 'tank/c#x': source is not an ancestor of the new bookmark's dataset$" \
    fs bookmark tank/a@s2 tank/c#x
tarn_err 1 "^cannot create bookmark 'tank/a#b@d': multiple '@' and/or '#' delimiters in name$" \
    fs bookmark tank/a@s2 'tank/a#b@d'
tarn_ok fs destroy tank/a#bm2
tarn_ok fs list -H -o name -t bookmark tank/a
out_is "tank/a#bm1"
tarn_ok fs list -H -o name -t all -r tank/a
out_is "$(printf 'tank/a\ntank/a@s2\ntank/a@t3\ntank/a@s4\ntank/a#bm1\ntank/a/b\ntank/a/b@t3')"

# ---- destroy: ranges, lists, -n -v, -p, -r ----
tarn_ok fs create tank/r
for s in r1 r2 r3 r4 r5 r6; do tarn_ok fs snapshot tank/r@$s; done
tarn_ok fs destroy -nv tank/r@r2%r4
out_is "$(printf 'would destroy tank/r@r2\nwould destroy tank/r@r3\nwould destroy tank/r@r4\n%s' \
    "$(tail -n 1 "$OUT")")"
tail -n 1 "$OUT" | grep -Eq '^would reclaim [0-9.]+[BKMG]$' && pass || { fail "would reclaim"; show_output; }
tarn_ok fs destroy -nvp tank/r@r2%r4
head -n 3 "$OUT" | diff - <(printf 'destroy\ttank/r@r2\ndestroy\ttank/r@r3\ndestroy\ttank/r@r4\n') \
    >/dev/null && tail -n 1 "$OUT" | grep -Eq '^reclaim	[0-9]+$' && pass ||
	{ fail "destroy -nvp"; show_output; }
tarn_ok fs list -H -o name -t snapshot tank/r
[ "$(wc -l <"$OUT")" -eq 6 ] && pass || fail "destroy -n destroyed something"
tarn_ok fs destroy -v tank/r@r2%r3
out_is "$(printf 'will destroy tank/r@r2\nwill destroy tank/r@r3\n%s' "$(tail -n 1 "$OUT")")"
tail -n 1 "$OUT" | grep -Eq '^will reclaim [0-9.]+[BKMG]$' && pass || { fail "will reclaim"; show_output; }
tarn_ok fs destroy tank/r@r1,r5
tarn_ok fs list -H -o name -t snapshot tank/r
out_is "$(printf 'tank/r@r4\ntank/r@r6')"
tarn_err 1 "^cannot destroy 'tank/r@nope': could not find any snapshots to destroy; check snapshot names.$" \
    fs destroy tank/r@nope
tarn_err 1 "could not find any snapshots to destroy; check snapshot names.$" fs destroy tank/r@nope%r6
tarn_ok fs destroy tank/r@%r4
tarn_ok fs list -H -o name -t snapshot tank/r
out_is "tank/r@r6"
tarn_ok fs destroy tank/r@r6%
tarn_ok fs list -H -o name -t snapshot tank/r
out_is ""
tarn_ok fs destroy -r tank/a@t3
tarn_ok fs list -H -o name -t snapshot -r tank/a
out_is "$(printf 'tank/a@s2\ntank/a@s4')"

# ---- a file system with snapshots: refused without -r, as zfs ----
tarn_ok fs snapshot tank/a/b@z
tarn fs destroy tank/a/b
[ "$RC" -eq 1 ] && diff "$ERR" <(printf "cannot destroy 'tank/a/b': filesystem has children\nuse '-r' to destroy the following datasets:\ntank/a/b@z\n") >/dev/null &&
	pass || { fail "destroy of a file system with snapshots"; show_output; }
tarn_ok fs list -H -o name -t all -r tank/a/b
out_is "$(printf 'tank/a/b\ntank/a/b@z')"
tarn_ok fs destroy -nv -r tank/a/b
out_is "$(printf 'would destroy tank/a/b@z\nwould destroy tank/a/b\n%s' "$(tail -n 1 "$OUT")")"
tail -n 1 "$OUT" | grep -Eq '^would reclaim [0-9.]+[BKMG]$' && pass || { fail "would reclaim"; show_output; }
tarn_ok fs list -H -o name tank/a/b
out_is "tank/a/b"
tarn_ok fs destroy -r tank/a/b
tarn_err 1 "^cannot open 'tank/a/b': dataset does not exist$" fs list tank/a/b

# ---- export and import: all still there ----
tarn_ok pool export tank
tarn_ok pool import -d "$DEVDIR" tank
tarn_ok fs list -H -o name -t all -r tank
out_is "$(printf 'tank\ntank@s2\ntank/a\ntank/a@s2\ntank/a@s4\ntank/a#bm1\ntank/c\ntank/r')"

# ---- the pool history has each verb's command line ----
tarn_ok pool history tank
for l in "zfs snapshot tank/a@s1" "zfs snap tank/a@s2 tank@s2" "zfs snapshot -r tank/a@s3" \
    "zfs hold keep tank/a@s1" "zfs destroy -d tank/a@s1" "zfs release keep tank/a@s1" \
    "zfs rename tank/a@s2 tank/a@r2" "zfs rename -r tank/a@s3 tank/a@t3" \
    "zfs bookmark tank/a@s2 tank/a#bm1" "zfs destroy tank/a#bm2" \
    "zfs destroy tank/r@r1,r5" "zfs set com.example:y=z tank/a@s1" \
    "zfs destroy -r tank/a/b"; do
	grep -qF " $l" "$OUT" && pass || fail "history lacks '$l'"
done
grep -qF "zfs snapshot tank/x@s" "$OUT" && fail "history has a failed snapshot" || pass
grep -qF "zfs destroy -nv" "$OUT" && fail "history has a dry run" || pass
e2e_done
