#!/bin/bash
# Scrub repairs what redundancy allows: for mirrors (2 and 3 sides) and
# raidz1, raidz2, raidz3, a pool with data is exported, every written
# block of the data area of `parity` devices (all sides but one of a
# mirror) is overwritten with random bytes, and the pool imported again.
# `scrub -w` repairs it all ("scrub repaired X in T with 0 errors on
# DATE"), the CKSUM column counts errors on exactly the damaged devices,
# status -x reports the pool until `clear`, and a second scrub repairs
# nothing.  Data comes from `tarn-stress --keep` when it has that option,
# else the pool's own metadata (history, space maps) is what is damaged.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/health.bash"
describe "scrub repairs damage within redundancy (mirror, raidz1-3)"
require_engine
need_daemon "the CKSUM counts of a scrub are read by later commands"

# check_layout LAYOUT N BAD: a pool of N devices whose first BAD are damaged.
check_layout() {
	local layout=$1 n=$2 bad=$3 name="h$1x$2" i blocks c
	make_pool "$name" "$layout" "$n" 64M || return
	tarn_ok pool export "$name" || return
	for ((i = 0; i < bad; i++)); do
		blocks=$(corrupt_written "${DEV[$i]}")
		if [ "$blocks" -gt 0 ]; then pass; else
			fail "$layout: nothing was ever written on ${DEV[$i]}"
		fi
	done
	tarn_ok pool import -d "$DEVDIR/$name" "$name" || return
	tarn_ok pool scrub -w "$name"
	tarn_ok pool status "$name"
	out_has "^ state: ONLINE$"
	out_has "^  scan: scrub repaired [0-9.]+[BKMGT] in [0-9]{2}:[0-9]{2}:[0-9]{2} with 0 errors on [A-Z][a-z]{2} "
	out_lacks "scrub repaired 0B "     # not all was healed by the import's reads
	out_has "^errors: No known data errors$"
	out_has "^status: Devices returned bad or unreadable data\."
	for ((i = 0; i < n; i++)); do
		c=$(dev_counts "${DEV[$i]}")
		if [ "$i" -lt "$bad" ]; then
			if [[ "$c" =~ ^0\ 0\ [1-9] ]]; then pass; else
				fail "$layout: ${DEV[$i]} was damaged, its counts are '$c'"
				show_output
			fi
		elif [ "$c" = "0 0 0" ]; then pass; else
			fail "$layout: ${DEV[$i]} was intact, its counts are '$c'"
			show_output
		fi
	done
	tarn_ok pool status -x
	out_has "^  pool: $name$"
	# the repair holds: a second scrub finds nothing more
	tarn_ok pool scrub -w "$name"
	tarn_ok pool status "$name"
	out_has "^  scan: scrub repaired 0B in [0-9:]+ with 0 errors on "
	check_data "$name"    # every byte as written (export, compare, import)
	tarn_ok pool clear "$name"
	tarn_ok pool status -x "$name"
	out_is "pool '$name' is healthy"
	tarn_ok pool history "$name"
	out_has "^[0-9]{4}-[0-9]{2}-[0-9]{2}\.[0-9:]{8} zpool scrub -w $name$"
	tarn_ok pool destroy "$name"
	rm -rf "${DEVDIR:?}/$name"
}

check_layout mirror 2 1
check_layout mirror 3 2
check_layout raidz1 3 1
check_layout raidz2 5 2
check_layout raidz3 5 3
e2e_done
