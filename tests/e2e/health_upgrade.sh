#!/bin/bash
# Format versions and history: a pool created with -o version=1 (no
# feature flags) works, records no history, and is listed by `upgrade`;
# `upgrade POOL` moves it to feature flags (enabling `history`), after
# which every command that changes it is recorded with its time, in
# zpool history's format.  `upgrade -v` lists versions and features.
. "$(dirname "$0")/lib.sh"
describe "version=1 pools, upgrade, upgrade -v and history"
require_engine

mkdevs 4
tarn_ok pool create -o version=1 old mirror "${DEV[0]}" "${DEV[1]}"
tarn_ok pool create new mirror "${DEV[2]}" "${DEV[3]}"
tarn_ok pool list -H -o name,version,health
out_has "^old	1	ONLINE$"
out_has "^new	2	ONLINE$"

# an old format is not a problem for status -x, but status says so
tarn_ok pool status -x
out_is "all pools are healthy"
tarn_ok pool status old
out_has "^status: The pool uses an older on-disk format"
out_has "^action: Run '.*upgrade' to enable them; older Tarn releases$"
tarn_ok pool status new
out_lacks "^status:"

# a version-1 pool works (export, import) but keeps no history
tarn_ok pool export old
tarn_ok pool import -d "$DEVDIR" old
tarn_ok pool history old
out_is "History for 'old':"

tarn_ok pool upgrade
out_has "^This system supports ZFS pool feature flags\.$"
out_has "^The following pools are formatted with legacy version numbers and can$"
out_has "^VER  POOL$"
out_has "^1    old$"
out_lacks "^1 +new$"
out_has "^Every feature flags pool has all supported and requested features enabled\.$"

tarn_ok pool upgrade -v
out_has "^This system supports ZFS pool feature flags\.$"
out_has "^The following features are supported:$"
out_has "^history"
out_has "^The following legacy versions are also supported:$"
out_has "^ 1   "

# compressratio and the logical sizes are counted on pools created with
# logical_space only: "-" on the old pool, before and after the upgrade
tarn_ok fs get -H -o value compressratio,logicalused old
out_is "$(printf -- '-\n-')"
tarn_ok fs get -H -o value compressratio new
out_has '^[0-9]+\.[0-9]{2}x$'
tarn_ok pool upgrade old
out_has "^Successfully upgraded 'old' from version 1 to feature flags\.$"
out_has "^Enabled the following features on 'old':$"
out_has "^  history$"
# space_deflate and logical_space count every block from the first: an
# upgrade cannot enable them, and says so instead of claiming everything
out_lacks "^  (space_deflate|logical_space)$"
out_has "^These features can only be enabled when a pool is created and stay$"
out_has "^  space_deflate +\(the space counts on disk are in allocated bytes\)$"
out_has "^  logical_space +\(the logical sizes of the data already written were never counted\)$"
tarn_ok pool list -H -o name,version old
out_is "old	2"
tarn_ok pool get -H -o value feature@history,feature@space_deflate,feature@logical_space old
out_is "$(printf 'active\ndisabled\ndisabled')"
tarn_ok fs get -H -o value logicalreferenced old
out_is "-"
tarn_ok pool upgrade old
out_has "^Pool 'old' already has all the features an upgrade can enable; these can$"
out_has "^  space_deflate "
out_lacks "all supported and requested features enabled"
tarn_ok pool upgrade
out_has "^All pools are formatted using feature flags\.$"
out_has "^The following features can only be enabled when a pool is created;$"
out_has "^old$"
out_has "^      logical_space "
out_lacks "^new$"
out_has "^Every feature flags pool has all the features an upgrade can enable\.$"
out_lacks "all supported and requested features enabled"
tarn_ok pool upgrade -a
out_has "^All pools are already formatted using feature flags\.$"
out_has "^Every feature flags pool already has all the features an upgrade can enable;$"
out_lacks "^Every feature flags pool already has all supported"
tarn_ok pool upgrade new
out_is "$(printf "This system supports ZFS pool feature flags.\n\nPool 'new' already has all supported and requested features enabled.")"
# the versions that exist: 1 (legacy) and 2 (feature flags), as get shows them
tarn_ok pool upgrade -v
out_has "^A pool with feature flags is at version 2 \('zpool get version' shows it\);$"
# zfs upgrade: file system versions (one so far: every dataset is current)
tarn_ok fs upgrade
out_is "$(printf 'This system is currently running ZFS filesystem version 1.\n\nAll filesystems are formatted with the current version.')"
tarn_ok fs upgrade -v
out_has "^ 1   Initial Tarn file system format$"
tarn_ok fs upgrade -a
out_is "$(printf '0 filesystems upgraded\n2 filesystems already at this version')"
tarn_err 1 "^cannot open 'old/none': dataset does not exist$" fs upgrade old/none
tarn_err 2 "^-a takes no dataset names$" fs upgrade -a old
tarn_ok pool status old
out_lacks "^status:"
tarn_err 2 "^invalid version '9'" pool upgrade -V 9 old
tarn_err 1 "^cannot upgrade 'nosuch': " pool upgrade nosuch

# from now on its history records what changes it
tarn_ok pool export old
tarn_ok pool import -d "$DEVDIR" old
tarn_ok pool history old
out_has "^History for 'old':$"
out_has "^[0-9]{4}-[0-9]{2}-[0-9]{2}\.[0-9]{2}:[0-9]{2}:[0-9]{2} zpool upgrade old$"
out_has "^[0-9]{4}-[0-9]{2}-[0-9]{2}\.[0-9:]{8} zpool export old$"
out_has "^[0-9]{4}-[0-9]{2}-[0-9]{2}\.[0-9:]{8} zpool import -d $DEVDIR old$"
out_lacks "zpool create"
[ "$(grep -c 'zpool upgrade old$' "$OUT")" -eq 1 ] && pass ||
	fail "the no-op upgrade was recorded too"
# the order is the order of the commands, and the output ends with a blank line
[ "$(grep -n 'upgrade old$' "$OUT" | cut -d: -f1)" -lt \
    "$(grep -n 'export old$' "$OUT" | cut -d: -f1)" ] && pass || fail "history out of order"
[ -z "$(tail -n 1 "$OUT")" ] && pass || fail "history does not end with a blank line"

tarn_ok pool history new
out_has "^[0-9]{4}-[0-9]{2}-[0-9]{2}\.[0-9:]{8} zpool create new mirror ${DEV[2]} ${DEV[3]}$"
# all pools, sorted, each with its header
tarn_ok pool history
[ "$(grep -c '^History for ' "$OUT")" -eq 2 ] && pass || fail "history of all pools"
tarn_err 1 "^cannot get history 'nosuch': " pool history nosuch
tarn_ok pool destroy old
tarn_ok pool destroy new
e2e_done
