#!/bin/bash
# scripts/fuse-uring.sh — let FUSE servers take requests through io_uring
# (Linux 6.14+): loads the fuse module if needed and turns its
# enable_uring parameter on.  Tarn's mounts then use one request queue
# per CPU (fuse/tarn_fuse_uring.c); without it they use /dev/fuse.
# Needs root; never fails (prints what it could do).
#   scripts/fuse-uring.sh          turn it on
#   scripts/fuse-uring.sh status   print on, off or unsupported
P=/sys/module/fuse/parameters/enable_uring
[ -e /sys/module/fuse ] || modprobe fuse 2>/dev/null
if [ ! -e "$P" ]; then
	echo "FUSE over io_uring: unsupported by this kernel ($(uname -r))"
	exit 0
fi
if [ "${1:-}" != status ] && [ "$(cat "$P")" != Y ]; then
	if ! echo Y 2>/dev/null >"$P"; then
		echo "FUSE over io_uring: off (turning it on needs root)"
		exit 0
	fi
fi
if [ "$(cat "$P")" = Y ]; then
	echo "FUSE over io_uring: on"
else
	echo "FUSE over io_uring: off"
fi
