/*
 * host_op_vdev.c — the operations of the device lifecycle verbs of
 * zpool (attach, detach, replace, online, offline, clear, add).
 */
#include "host_impl.h"

const host_op_t host_ops_vdev[] = {
	{ NULL, NULL }
};
