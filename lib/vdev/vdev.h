/*
 * vdev.h — the virtual device layer's contract.
 *
 * A pool's devices form a tree: a root whose children are the top-level
 * vdevs (striped), each a leaf (file or block device), a mirror or a
 * raidz1/2/3 group of leaves.  Block addresses (DVAs) name a top-level
 * vdev and a byte offset in its allocatable space; this layer maps that
 * to leaves, keeps per-leaf health and error counters, reads with
 * verification and repairs what it can, and owns the labels.
 * It knows nothing of what a block means: callers pass a verify callback.
 * Theory of RAID-Z: the comment at the top of vdev_raidz.c.
 *
 * Who may touch a vdev_t.  struct vdev is private to lib/vdev
 * (vdev_impl.h, which nothing outside lib/vdev includes); other layers,
 * the CLI, the tools and the tests see only the opaque vdev_t and the
 * functions below.  They read any field through its accessor (vdev_X(vd)
 * for field vdev_X, vdev_child(vd, c) for a child) and set only:
 *  - what building a tree needs before vdev_open (path, nparity, preset
 *    ashift/asize, spares; vdev_set_X);
 *  - the space layer's fields of a top-level vdev (metaslab array, shift,
 *    count and group: vdev_set_ms_*), which the vdev layer only keeps;
 *  - the pool layer's fields (offline flag and offline -t, fault state,
 *    resilvering, automatic spare, the DTL as saved in the labels, the
 *    fault request of a failing leaf), which the vdev layer reads and
 *    moves with a leaf but never decides.
 * Everything else (shape, sizes, states, counters, DTLs) changes only
 * through this layer's operations.  The accessors are plain functions,
 * not inline ones or a public "view" struct: the struct can then change
 * without touching any user, and no per-block path needs them often
 * enough to matter (zio looks up a block's top-level vdev and its size,
 * one call each; the space layer keeps its own copy of a group's vdev id
 * and metaslab shift).
 */
#ifndef TARN_VDEV_H
#define TARN_VDEV_H

#include <pthread.h>
#include "tarn_util.h"
#include "format.h"

/* Leaf layout: 4 labels (2 front, 2 back), data area between. */
#define VDEV_LABEL_SIZE        (256 * KiB)
#define VDEV_LABELS            4
#define VDEV_LABEL_START_SIZE  (4 * MiB)   /* 2 labels + reserved */
#define VDEV_LABEL_END_SIZE    (2 * VDEV_LABEL_SIZE)
#define VDEV_LABEL_CONFIG_OFF  (8 * KiB)   /* within a label */
#define VDEV_LABEL_CONFIG_SIZE (56 * KiB)
#define VDEV_LABEL_RING_OFF    (64 * KiB)
#define VDEV_LABEL_RING_SIZE   (192 * KiB)
#define VDEV_UB_SLOT_MIN       (1 * KiB)   /* slot = max(1K, 1 << ashift) */

#define VDEV_RAIDZ_MAXPARITY   3
#define VDEV_MAX_CHILDREN      255

typedef enum vdev_type {
	VDEV_TYPE_ROOT = 0,
	VDEV_TYPE_MIRROR,
	VDEV_TYPE_RAIDZ,
	VDEV_TYPE_FILE,
	VDEV_TYPE_DISK,
	VDEV_TYPE_MISSING,      /* placeholder for a leaf not found at import */
	VDEV_TYPE_REPLACING,    /* old leaf + new leaf while a replace resilvers */
	VDEV_TYPE_SPARE,        /* failed leaf + the hot spare standing in for it */
	VDEV_TYPE_HOLE,         /* top-level placeholder of a removed log vdev: keeps
	                           the ids of the vdevs after it (block addresses) */
	VDEV_TYPE_NTYPES
} vdev_type_t;

/* Health, in zpool's words (vdev_state_name()). */
typedef enum vdev_state {
	VDEV_STATE_UNKNOWN = 0,
	VDEV_STATE_CLOSED,
	VDEV_STATE_OFFLINE,
	VDEV_STATE_REMOVED,
	VDEV_STATE_CANT_OPEN,   /* shown as UNAVAIL */
	VDEV_STATE_FAULTED,
	VDEV_STATE_DEGRADED,
	VDEV_STATE_HEALTHY      /* shown as ONLINE */
} vdev_state_t;

/*
 * Allocation class of a top-level vdev (ZFS's allocation bias): which
 * metaslab class of the pool its space serves.  NORMAL: any block; LOG:
 * intent-log blocks; SPECIAL: metadata and small file blocks.  The pool
 * layer decides it; the label config carries it (docs/FORMAT.md).
 */
typedef enum vdev_alloc_bias {
	VDEV_BIAS_NORMAL = 0,
	VDEV_BIAS_LOG,
	VDEV_BIAS_SPECIAL,
	VDEV_BIAS_COUNT
} vdev_alloc_bias_t;
const char *vdev_bias_name(vdev_alloc_bias_t bias);   /* "normal", "log", "special" */

/* Counters, updated atomically. */
typedef struct vdev_stat {
	uint64_t vs_ops[2];        /* [0] read, [1] write */
	uint64_t vs_bytes[2];
	uint64_t vs_read_errors;
	uint64_t vs_write_errors;
	uint64_t vs_checksum_errors;
	uint64_t vs_repaired_bytes; /* bytes rewritten by self-heal */
} vdev_stat_t;

typedef struct vdev vdev_t;
typedef struct vdev_fault vdev_fault_t;
typedef struct vdev_inject vdev_inject_t;

/*
 * Verify callback: return 0 when buf[0..size) is the wanted block (its
 * checksum matches), ECKSUM otherwise.
 */
typedef int (*vdev_verify_fn_t)(void *arg, const void *buf, uint64_t size);

/* vdev_io flags */
#define VDEV_IO_SCRUB    0x01  /* read and verify every copy/column; repair */
#define VDEV_IO_NOHEAL   0x02  /* do not rewrite bad copies (read-only pool) */
#define VDEV_IO_PROBE    0x04  /* errors are expected: do not count them */
#define VDEV_IO_REPAIR   0x08  /* rewrite of an existing block (self-heal):
                                  a leaf that misses it is not marked (DTL) */

/* One I/O against a (top-level or leaf) vdev. */
typedef struct vdev_io {
	uint64_t vio_offset;        /* in the vdev's allocatable space */
	uint64_t vio_size;          /* psize: bytes of payload */
	void    *vio_buf;           /* vio_size bytes */
	int      vio_flags;
	vdev_verify_fn_t vio_verify; /* may be NULL */
	void    *vio_verify_arg;
	uint64_t vio_txg;           /* birth txg of the block (0: unknown); leaves
	                               that missed it are not read (vdev_dtl.c) */
	/* results */
	uint64_t vio_repaired;      /* bytes rewritten on bad children */
	int      vio_bad_children;  /* copies/columns found bad */
} vdev_io_t;

typedef struct vdev_ops {
	int  (*vop_open)(vdev_t *vd);             /* sets vdev_psize/asize/ashift */
	void (*vop_close)(vdev_t *vd);
	uint64_t (*vop_asize)(vdev_t *vd, uint64_t psize); /* bytes allocated */
	int  (*vop_read)(vdev_t *vd, vdev_io_t *io);
	int  (*vop_write)(vdev_t *vd, vdev_io_t *io);
	int  (*vop_flush)(vdev_t *vd);
	void (*vop_state_change)(vdev_t *vd);     /* recompute from children */
	const char *vop_name;                     /* "mirror", "raidz", "file" */
	bool vop_leaf;
} vdev_ops_t;

/* ---- reading a vdev (vdev_access.c) ---- */

/*
 * Fields, read through these functions (plain calls: the struct is
 * private, see the top of this file).  A node's shape and geometry
 * change only under the tree write lock; counters and the fields marked
 * (atomic) in vdev_impl.h are read with relaxed atomic loads where they
 * are.  vdev_child(vd, c): 0 <= c < vdev_children(vd).
 */
vdev_type_t vdev_type(const vdev_t *vd);
const vdev_ops_t *vdev_ops(const vdev_t *vd);
uint64_t vdev_guid(const vdev_t *vd);
uint64_t vdev_id(const vdev_t *vd);              /* index in parent */
vdev_t *vdev_parent(const vdev_t *vd);
vdev_t *vdev_top(const vdev_t *vd);              /* top-level ancestor (self if top) */
vdev_t *vdev_child(const vdev_t *vd, int c);
int vdev_children(const vdev_t *vd);
int vdev_nparity(const vdev_t *vd);              /* raidz */
uint64_t vdev_ashift(const vdev_t *vd);          /* log2 of the smallest I/O */
uint64_t vdev_asize(const vdev_t *vd);           /* allocatable bytes */
uint64_t vdev_psize(const vdev_t *vd);           /* leaf: device size in bytes */
const char *vdev_path(const vdev_t *vd);         /* leaf, or NULL */
vdev_state_t vdev_state(const vdev_t *vd);
bool vdev_offline(const vdev_t *vd);             /* administratively offline */
const vdev_stat_t *vdev_stat(const vdev_t *vd);  /* counters, updated atomically */
uint64_t vdev_guid_sum(const vdev_t *vd);        /* self + descendants */
bool vdev_readonly(const vdev_t *vd);            /* leaf opened read-only */
int vdev_fd(const vdev_t *vd);                   /* leaf: -1 when closed */
vdev_fault_t *vdev_fault(const vdev_t *vd);      /* leaf: its fault injector, or NULL */
int vdev_open_error(const vdev_t *vd);           /* leaf: errno of the last failed open */
uint64_t vdev_dtl_txg(const vdev_t *vd);         /* leaf: first txg missed (0: none) */
uint64_t vdev_dtl_last(const vdev_t *vd);        /* leaf: last txg missed */
vdev_t *vdev_spares(const vdev_t *root);         /* root: hot spares (a ROOT node), or NULL */
vdev_t *vdev_l2cache(const vdev_t *root);        /* root: cache devices (a ROOT node), or NULL */
vdev_alloc_bias_t vdev_alloc_bias(const vdev_t *vd); /* its top-level's class */

/*
 * Setting up a node before vdev_open (or a tree decoded from labels
 * before import), as the callers of vdev_alloc do: a leaf's path (copied;
 * the old one is freed), a raidz's parity, a preset ashift or top-level
 * size, a leaf's read-only flag, the root's hot spares (the ROOT node
 * becomes the tree's), a leaf's type and state in a tree that is not
 * open (import: MISSING or FILE; a candidate's states as shown).
 */
void vdev_set_path(vdev_t *vd, const char *path);
void vdev_set_nparity(vdev_t *vd, int nparity);
void vdev_set_ashift(vdev_t *vd, uint64_t ashift);
void vdev_set_asize(vdev_t *vd, uint64_t asize);
void vdev_set_readonly(vdev_t *vd, bool readonly);
void vdev_set_spares(vdev_t *root, vdev_t *spares);
/* The root's cache devices (a ROOT node of leaves; the tree's from now on). */
void vdev_set_l2cache(vdev_t *root, vdev_t *l2cache);
/* A top-level vdev's allocation class (pool layer; before its metaslabs exist). */
void vdev_set_alloc_bias(vdev_t *top, vdev_alloc_bias_t bias);
void vdev_set_type(vdev_t *vd, vdev_type_t type);
void vdev_set_state(vdev_t *vd, vdev_state_t state);
/* Count bytes rewritten on top-level vd by a repair above this layer (zio). */
void vdev_stat_repaired(vdev_t *vd, uint64_t bytes);

/* ---- fields owned by the space layer (vdev_access.c) ---- */

/*
 * A top-level vdev's metaslab bookkeeping: the MOS object of its
 * metaslab array (the pool layer allocates it), log2 of the metaslab
 * size, the number of metaslabs, and the space layer's metaslab group.
 * The space and pool layers set them; the vdev layer only keeps them,
 * carries array, shift and count in the label config, and keeps them on
 * the top-level's vdev_t when a group is inserted (vdev_group_insert).
 */
uint64_t vdev_ms_array(const vdev_t *top);
uint64_t vdev_ms_shift(const vdev_t *top);
uint64_t vdev_ms_count(const vdev_t *top);
void *vdev_ms_group(const vdev_t *top);
void vdev_set_ms_array(vdev_t *top, uint64_t obj);
void vdev_set_ms_shift(vdev_t *top, uint64_t shift);
void vdev_set_ms_count(vdev_t *top, uint64_t count);
void vdev_set_ms_group(vdev_t *top, void *mg);

/* ---- fields owned by the pool layer (vdev_access.c) ---- */

/*
 * The pool layer (lib/spa, spa_vdev.c) decides these; the vdev layer
 * reads them (open, label config) and moves them with a leaf when a
 * group is inserted or collapsed (vdev_tree.c).
 *
 * offline flag: the leaf is administratively offline (vdev_set_offline
 *   closes and reopens; this only records it);
 * offline_temp: offline -t, not recorded in the labels;
 * fault_state: FAULTED or REMOVED after errors (0: not faulted), the
 *   state the leaf keeps when opened;
 * resilvering: a resilver is copying what the leaf missed;
 * spare_auto: a spare group put in by the pool for a failed leaf (not by
 *   replace): the spare goes back by itself once that leaf is whole;
 * dtl_saved: the leaf's DTL as last written to the labels ({first, last});
 * dtl_last: turning an open end (VDEV_DTL_OPEN) into a real txg once the
 *   leaf can be written (atomic store);
 * err_run, fault_req: the run of failed I/Os and the request to fault
 *   the leaf that the I/O path raises (atomic); vdev_fault_req_take
 *   reads and clears the request.
 */
void vdev_set_offline_flag(vdev_t *leaf, bool offline);
bool vdev_offline_temp(const vdev_t *leaf);
void vdev_set_offline_temp(vdev_t *leaf, bool temporary);
vdev_state_t vdev_fault_state(const vdev_t *leaf);
void vdev_set_fault_state(vdev_t *leaf, vdev_state_t state);
bool vdev_resilvering(const vdev_t *leaf);
void vdev_set_resilvering(vdev_t *leaf, bool resilvering);
bool vdev_spare_auto(const vdev_t *group);
void vdev_set_spare_auto(vdev_t *group, bool automatic);
const uint64_t *vdev_dtl_saved(const vdev_t *leaf);   /* [2] */
void vdev_set_dtl_saved(vdev_t *leaf, const uint64_t dtl[2]);
void vdev_set_dtl_txg(vdev_t *leaf, uint64_t txg);
void vdev_set_dtl_last(vdev_t *leaf, uint64_t txg);
uint32_t vdev_err_run(const vdev_t *leaf);
void vdev_set_err_run(vdev_t *leaf, uint32_t n);
void vdev_set_fault_req(vdev_t *leaf, bool req);
bool vdev_fault_req_take(vdev_t *leaf);

/* ---- building and opening trees ---- */

/*
 * Allocate a node (guid 0: a fresh random one); children are added with
 * vdev_add_child().  Callers set the path on leaves (vdev_set_path), the
 * parity on RAIDZ (vdev_set_nparity), and may preset the ashift (leaf or
 * top, vdev_set_ashift).  The
 * only shapes allowed are root -> top-level (mirror, raidz or leaf) and
 * mirror/raidz -> leaf; anything else is a programming error (VERIFY).
 */
vdev_t *vdev_alloc(vdev_type_t type, uint64_t guid);
/* Append child; it gets vdev_id = its index, vdev_top and guid sums are set. */
void vdev_add_child(vdev_t *parent, vdev_t *child);
/* Close and free the whole subtree (and unlink it from its parent). */
void vdev_free(vdev_t *vd);

/*
 * Open every leaf and compute sizes bottom-up.  A leaf that cannot be
 * opened is CANT_OPEN; groups become DEGRADED or FAULTED as their
 * redundancy allows.  Returns 0, or an errno when the root cannot
 * serve I/O (some top-level FAULTED): EBUSY when a leaf is held by
 * another opener, ENXIO otherwise.
 *
 * Sizes: a leaf's asize is P2ALIGN(psize, VDEV_LABEL_SIZE) minus the
 * label areas, rounded down to its sector; a mirror's is the smallest
 * child's, a raidz's the smallest child's times the number of children
 * (both rounded down to the group's sector).  A top-level vdev whose
 * vdev_asize was already set (from the label config, or a previous open)
 * keeps that size: children too small for it are CANT_OPEN, bigger ones
 * do not grow it.  Group ashift: the preset value, else the largest
 * child's.  Leaf ashift: the preset value, else max(9, log2(physical
 * sector size)).
 */
int vdev_open(vdev_t *root, bool readonly);
void vdev_close(vdev_t *root);

/*
 * Take a leaf offline (close it; state OFFLINE) or bring it back online
 * (reopen it, vdev_leaf_reopen).  Going offline fails with EBUSY when
 * its top-level vdev would lose data (vdev_dtl_required: counting the
 * txgs other leaves missed).  Must not race with I/O on the leaf (tree
 * write lock).  The pool layer's spa_vdev_offline/online add labels and
 * resilvers.
 */
int vdev_set_offline(vdev_t *leaf, bool offline);
/* Zero the READ/WRITE/CKSUM error counters of vd and its descendants. */
void vdev_clear_errors(vdev_t *vd);

/*
 * Put a hole in the place of top-level vdev top (a removed log vdev),
 * freeing top and its leaves (closed): the vdevs after it keep their
 * ids, which block addresses name.  A hole has no space, serves no I/O,
 * is always "healthy" and is carried in the label config.  Tree write
 * lock held; top's metaslab group must be gone.  Returns the hole.
 */
vdev_t *vdev_hole_insert(vdev_t *top);
bool vdev_is_hole(const vdev_t *vd);
/* A top-level log vdev that cannot do I/O (a missing log device: import -m). */
bool vdev_is_dead_log(const vdev_t *vd);

/* Recompute states from leaves up after a leaf changed. */
void vdev_propagate_state(vdev_t *vd);
const char *vdev_state_name(vdev_state_t s);  /* ONLINE, DEGRADED, ... */
const char *vdev_type_name(const vdev_t *vd); /* "mirror", "raidz2", path */

vdev_t *vdev_lookup_top(vdev_t *root, uint64_t id);
vdev_t *vdev_lookup_guid(vdev_t *root, uint64_t guid);
/* A group (mirror, raidz, replacing, spare), as opposed to a leaf or the root. */
bool vdev_is_group(const vdev_t *vd);
/* A leaf whose device is open and can serve I/O. */
bool vdev_leaf_ready(const vdev_t *vd);

/* ---- tree lock and device changes (vdev_tree.c) ---- */

/*
 * The tree lock is a pool-wide rwlock on the root vdev.  Every block
 * I/O (zio), label and uberblock write and flush holds it as reader for
 * one vdev call at a time, never nested; a change of the tree's shape
 * or of a leaf's open/closed/offline state holds it as writer.  A
 * writer never waits for I/O or a txg while holding it.  Writers are
 * preferred, so a stream of I/O cannot starve a device change.
 */
void vdev_tree_enter_read(vdev_t *root);
void vdev_tree_enter_write(vdev_t *root);
void vdev_tree_exit(vdev_t *root);

/*
 * Put a new group of `type` (VDEV_TYPE_MIRROR at the top level only,
 * REPLACING or SPARE) in the place of *leafp, with the leaf as its only
 * child, and return the group.  A top-level leaf is converted in place:
 * the group keeps the vdev_t (so pointers to the top-level, e.g. the
 * space layer's, stay valid, with its id, asize, ashift and metaslabs)
 * and the leaf moves to a new vdev_t, so *leafp is updated.  The group
 * gets a new GUID.  Tree write lock held.
 */
vdev_t *vdev_group_insert(vdev_t **leafp, vdev_type_t type);
/*
 * A mirror, replacing or spare group left with one child: the child
 * takes the group's place (in place at the top level: the vdev_t of the
 * group becomes the leaf).  Returns the leaf at its final address.
 * Tree write lock held.
 */
vdev_t *vdev_group_collapse(vdev_t *group);
/* Turn a replacing group into a spare group or back.  Tree write lock held. */
void vdev_group_set_type(vdev_t *pair, vdev_type_t type);
/* Detach and free a leaf (closing it) from its group.  Tree write lock held. */
void vdev_leaf_remove(vdev_t *leaf);

/*
 * Close and reopen a leaf on its path (a MISSING leaf becomes a file or
 * disk leaf again).  The state is set (HEALTHY, CANT_OPEN, or OFFLINE /
 * the fault state when those are set) and propagated.  min_asize: the
 * leaf must provide at least this many bytes (0: no check), else it is
 * closed with EOVERFLOW.  Tree write lock held.
 */
int vdev_leaf_reopen(vdev_t *leaf, uint64_t min_asize);
/* Allocatable bytes a leaf in this slot must provide (its parent's need). */
uint64_t vdev_slot_asize(const vdev_t *vd);

/* ---- missed txgs ("DTL", vdev_dtl.c) ---- */

/*
 * A leaf that could not take a write of txg (closed, offline, faulted,
 * or the write failed) remembers the range of txgs it missed:
 * [vdev_dtl_txg, vdev_dtl_last].  It is not read for blocks born in
 * that range (other sides and parity serve them), a scrub or resilver
 * read (VDEV_IO_SCRUB) writes the good data into it, and the pool layer
 * clears the range when a resilver has covered it.
 */
void vdev_dtl_mark(vdev_t *leaf, uint64_t txg);
/* Does the leaf miss blocks born in txg (txg 0: any block)? */
bool vdev_dtl_contains(const vdev_t *leaf, uint64_t txg);
bool vdev_dtl_empty(const vdev_t *leaf);
void vdev_dtl_clear(vdev_t *leaf);
/*
 * The DTL as the label config records it: {first, last}, {0, 0} when
 * empty; last is VDEV_DTL_OPEN while the leaf cannot be written (it goes
 * on missing txgs).  After import, the pool layer turns an open end into
 * a real txg once the leaf can be written.
 */
#define VDEV_DTL_OPEN UINT64_MAX
void vdev_dtl_encoded(const vdev_t *leaf, uint64_t out[2]);
/*
 * Can vd (any node) serve every block of its subtree, counting only
 * leaves that are usable, with an empty DTL and not `without`?
 */
bool vdev_complete(const vdev_t *vd, const vdev_t *without);
/*
 * Would taking leaf away (offline, detach) lose data its top-level vdev
 * can serve now?  True also when the top-level is already incomplete
 * and the leaf is usable (what it holds may be the only copy).
 */
bool vdev_dtl_required(const vdev_t *leaf);
/* Leaves whose error run says they should be faulted (vdev_err_run()). */
#define VDEV_FAULT_ERRORS 16

/* ---- block I/O ---- */

/* Bytes a block of psize occupies on top-level vd (parity, padding). */
uint64_t vdev_psize_to_asize(vdev_t *top, uint64_t psize);

/*
 * Data bytes per 512 allocated bytes on top-level vd, taken from a
 * 128 KiB block: 512 for a leaf or mirror, less on RAID-Z (parity and
 * padding).  Space accounting multiplies allocated 512-byte units by it
 * (ZFS's deflate ratio), so used and available are in data bytes.
 */
#define VDEV_DEFLATE_UNIT 512
uint64_t vdev_deflate_ratio(vdev_t *top);

/*
 * Read io->vio_size bytes at io->vio_offset of top-level vd into
 * vio_buf.  When vio_verify is set and the first attempt does not
 * verify (or fails with EIO), every other mirror side and every RAID-Z
 * reconstruction (up to nparity columns) is tried; the first that
 * verifies is returned, and the bad children are rewritten unless
 * VDEV_IO_NOHEAL.  Errors are counted on the leaf that caused them
 * (READ for EIO, CKSUM for bad data).  Returns 0, ECKSUM or EIO.
 */
int vdev_read(vdev_t *top, vdev_io_t *io);
/* Write to every child (mirror) or every column with parity (raidz). */
int vdev_write(vdev_t *top, vdev_io_t *io);
/* Flush write caches of every leaf under vd (fdatasync). */
int vdev_flush(vdev_t *vd);

/* ---- leaves ---- */

/* Size of a device or file at path (BLKGETSIZE64 for block devices). */
int vdev_leaf_probe(const char *path, uint64_t *size, uint64_t *sector, bool *is_disk);
/* Raw leaf I/O at a physical offset (labels use these). */
int vdev_leaf_pread(vdev_t *leaf, void *buf, uint64_t size, uint64_t off);
int vdev_leaf_pwrite(vdev_t *leaf, const void *buf, uint64_t size, uint64_t off);

/* ---- labels (vdev_label.c) ---- */

/*
 * The label config: a pool header and the whole vdev tree as a flat
 * array of fixed-size records (see docs/FORMAT.md).  It is the same on
 * every leaf except vlc_leaf_guid / vlc_top_guid.  The tree's hot spares
 * travel with it (records flagged "spare", decoded into
 * vdev_spares(vlc_tree)); so do each leaf's missed txgs (DTL) and the
 * replacing/spare groups.
 */
#define VDEV_POOL_NAME_MAX 255
#define VDEV_PATH_MAX      1023

typedef enum pool_state {
	POOL_STATE_ACTIVE = 0,
	POOL_STATE_EXPORTED = 1,
	POOL_STATE_DESTROYED = 2,
	POOL_STATE_SPARE = 3,
	POOL_STATE_L2CACHE = 4,   /* a cache device: names its pool, never its config */
} pool_state_t;

typedef struct vdev_label_config {
	char     vlc_name[VDEV_POOL_NAME_MAX + 1];
	uint64_t vlc_pool_guid;
	uint64_t vlc_version;
	uint64_t vlc_features;
	uint64_t vlc_txg;          /* txg when the config was written */
	uint64_t vlc_state;        /* pool_state_t */
	uint64_t vlc_hostid;
	uint64_t vlc_create_time;
	uint64_t vlc_leaf_guid;    /* which leaf this label is on */
	uint64_t vlc_top_guid;
	vdev_t  *vlc_tree;         /* decoded tree (root), owned by the config */
} vdev_label_config_t;

/* Encode cfg (tree from `root`) for leaf `leaf` into buf (VDEV_LABEL_CONFIG_SIZE). */
int vdev_config_encode(const vdev_label_config_t *cfg, const vdev_t *root,
    const vdev_t *leaf, void *buf, size_t bufsize);
/* Decode; builds an unopened tree in cfg->vlc_tree.  EINVAL on damage. */
int vdev_config_decode(const void *buf, size_t bufsize, vdev_label_config_t *cfg);
void vdev_config_free(vdev_label_config_t *cfg);
/*
 * Recompute the header checksum of an encoded config in place (for
 * tools and fuzzing: lets damaged structure reach the parser).  No-op
 * when buf does not start with a config header.
 */
void vdev_config_seal(void *buf, size_t bufsize);

/*
 * Write the config to all labels of every healthy leaf under root:
 * labels 0 and 2 first, flush, then 1 and 3, flush.  The uberblock
 * rings are left as they are unless wipe_rings.  Each leaf's copy names
 * that leaf and its top-level (vlc_leaf_guid / vlc_top_guid).  EIO when
 * some top-level vdev got no label on any of its leaves.  Hot spares
 * (vdev_spares(root)) that are open and not in use in the tree get the
 * same config with vlc_state POOL_STATE_SPARE, cache devices
 * (vdev_l2cache(root)) with POOL_STATE_L2CACHE (the pool's state when it
 * is DESTROYED), best effort.
 */
int vdev_label_write_all(vdev_t *root, const vdev_label_config_t *cfg, bool wipe_rings);
/*
 * Read the best label config from the device at path (first label that
 * decodes; the one with the highest vlc_txg wins).  ENOENT when the
 * device has no Tarn label (no config magic in any label and no valid
 * uberblock in any ring), EINVAL when it has but no label decodes, EIO
 * when no label could be read; open errors as they come (ENOENT...).
 */
int vdev_label_read_path(const char *path, vdev_label_config_t *cfg);
/* Zero all labels on the device at path (destroy, or `labelclear`). */
int vdev_label_clear_path(const char *path);

/*
 * Zero all four labels of an open leaf (config and uberblock rings), so
 * that a device joining a pool carries nothing of its past.
 */
int vdev_label_init(vdev_t *leaf);
/*
 * Write the config to the labels of one open leaf outside the tree
 * (hot spares: cfg->vlc_state is POOL_STATE_SPARE).  Config area only.
 */
int vdev_label_write_leaf(vdev_t *leaf, vdev_t *root, const vdev_label_config_t *cfg);
/* Newest txg of an uberblock of pool_guid on this leaf (0: none). */
uint64_t vdev_uberblock_newest(vdev_t *leaf, uint64_t pool_guid);
/* The same for the device at path, opened read-only for it (0: none or error). */
uint64_t vdev_uberblock_newest_path(const char *path, uint64_t pool_guid);

/*
 * Write ub into slot (txg % nslots) of every label of every writable
 * leaf; no flush.  EIO when not one copy could be written.
 */
int vdev_uberblock_write_all(vdev_t *root, const uberblock_t *ub);
/*
 * Collect every valid uberblock of pool_guid from all labels of every
 * leaf under root that can be read, newest txg first (equal txgs: newer
 * timestamp), duplicates removed.  *ubs is allocated (tarn_free; NULL
 * when *n is 0).  Returns 0.
 */
int vdev_uberblock_collect(vdev_t *root, uint64_t pool_guid, uberblock_t **ubs, int *n);

/* ---- fault injection (vdev_fault.c), for tests and tarn-stress ---- */

typedef struct vdev_fault_cfg {
	bool     vfc_hold_unflushed;   /* keep writes in memory until flush */
	uint32_t vfc_read_eio_ppm;     /* chance per read of EIO */
	uint32_t vfc_write_eio_ppm;
	uint32_t vfc_bitflip_ppm;      /* chance per read of one flipped bit */
	uint64_t vfc_seed;
} vdev_fault_cfg_t;

/*
 * From now on, any leaf opened on `path` goes through this fault
 * injector (it is found by path, or by the path's realpath, at open).
 * Detach when done; leaves already open keep using it until they close.
 * Thread-safe.
 */
vdev_fault_t *vdev_fault_attach(const char *path, const vdev_fault_cfg_t *cfg);
void vdev_fault_detach(vdev_fault_t *vf);
/*
 * Simulate a power cut: each write still held (not yet flushed) is
 * independently dropped, applied whole, or torn (a random prefix of its
 * 512-byte sectors applied), in a random order; afterwards the device
 * refuses all I/O with EIO (until vdev_fault_set_dead(false), or until
 * it is detached and its leaves reopened).  Deterministic for a given
 * rand state.
 */
void vdev_fault_powercut(vdev_fault_t *vf, tarn_rand_t *r);
/* Make the device fail every I/O (true) or work again (false). */
void vdev_fault_set_dead(vdev_fault_t *vf, bool dead);
/* Change the random fault rates (ppm) of a live injector (tarn-stress -f). */
void vdev_fault_set_rates(vdev_fault_t *vf, uint32_t read_eio_ppm, uint32_t write_eio_ppm,
    uint32_t bitflip_ppm);
uint64_t vdev_fault_held_writes(vdev_fault_t *vf);

/* ---- run-time fault and latency injection (vdev_inject.c) ---- */

/*
 * Injections on an OPEN leaf of a live tree, for administrators, tests
 * and benchmarks (`tarn inject`, like zinject).  They hang on the leaf's
 * vdev_t, not on its file descriptor: they survive the leaf being closed
 * (faulted) and reopened (clear, online), move with it when a group is
 * put in its place, and go away with it (vdev_free: detach, export).
 * They are never written anywhere.  Kinds:
 *   EIO    the I/O is not done and fails with EIO (counted as a READ or
 *          WRITE error by the leaf I/O path, like a media error);
 *   CKSUM  a read is done, then one bit of what it returns is flipped,
 *          so the block's checksum does not verify (CKSUM error, then
 *          self-heal from redundancy); reads only;
 *   NXIO   the device is gone: I/O and flushes fail with ENXIO, and a
 *          reopen fails too while the injection is at 100%;
 *   DELAY  each I/O completes `latency` after it starts, and at most
 *          `lanes` are in service at once: an I/O starts when the lane
 *          that frees first is free (zinject -D).  The thread that
 *          issued it learns of its completion in vdev_inject_settle(),
 *          which vdev_tree_exit() calls after dropping the tree lock, so
 *          the leaves of one vdev call (mirror sides, raidz columns,
 *          labels) are in service at the same time, as a real vdev
 *          issues them, and nobody waiting for the tree lock waits for
 *          a delay.
 * vis_rw says which I/O: VDEV_INJECT_READ, _WRITE or both (label I/O
 * included); vis_ppm the chance per I/O in parts per million (1..10^6).
 * Theory and locking: the comment at the top of vdev_inject.c.
 */
typedef enum vdev_inject_kind {
	VDEV_INJECT_EIO = 1,
	VDEV_INJECT_CKSUM,
	VDEV_INJECT_NXIO,
	VDEV_INJECT_DELAY,
} vdev_inject_kind_t;

#define VDEV_INJECT_READ       0x1
#define VDEV_INJECT_WRITE      0x2
#define VDEV_INJECT_PPM_MAX    1000000u
#define VDEV_INJECT_LANES_MAX  1024u
#define VDEV_INJECT_LATENCY_MAX_US (60ULL * 1000 * 1000)   /* a minute */

typedef struct vdev_inject_spec {
	vdev_inject_kind_t vis_kind;
	int      vis_rw;          /* VDEV_INJECT_READ | VDEV_INJECT_WRITE */
	uint32_t vis_ppm;         /* chance per I/O, 1..VDEV_INJECT_PPM_MAX */
	uint64_t vis_latency_us;  /* DELAY: service time of one I/O, > 0 */
	uint32_t vis_lanes;       /* DELAY: I/Os in service at once, >= 1 */
} vdev_inject_spec_t;

/*
 * Add an injection to a leaf; *idp gets its number (unique in the
 * process, never reused).  EINVAL for a bad spec (a kind, rw, ppm,
 * latency or lane count out of range, CKSUM on writes), ENOTSUP when vd
 * is not a leaf.  The caller keeps the tree from changing shape (the
 * pool's device lock); I/O may run meanwhile.
 */
int vdev_inject_add(vdev_t *leaf, const vdev_inject_spec_t *spec, uint64_t *idp);
/*
 * Remove injection `id` (0: every one) from the leaves under vd (and the
 * root's hot spares); returns how many were removed.  Threads sleeping
 * out a delay wake up at once.
 */
int vdev_inject_clear(vdev_t *vd, uint64_t id);
/* Each injection under vd (and the spares), in the order of their ids per leaf. */
typedef void (*vdev_inject_fn_t)(void *arg, vdev_t *leaf, uint64_t id,
    const vdev_inject_spec_t *spec);
void vdev_inject_list(vdev_t *vd, vdev_inject_fn_t fn, void *arg);
/*
 * Wait until the delayed I/O this thread issued has completed (called by
 * vdev_tree_exit; callers issuing leaf I/O outside the tree lock call it
 * themselves).  Returns at once when there is none.
 */
void vdev_inject_settle(void);
/*
 * Completion deferred over many vdev calls, as a caller that issues I/O
 * asynchronously sees it (the zio layer's batches: every block of a batch
 * is in the devices' queues at once, where adjacent ones merge,
 * vdev_queue.c).  vdev_inject_defer(true): vdev_inject_settle keeps this
 * thread's completion time instead of sleeping; returns the previous
 * setting.  vdev_inject_take: the completion time kept (ns, 0: none) and
 * its generation, now cleared; vdev_inject_wait sleeps until then (woken
 * early by a clear after gen).
 */
bool vdev_inject_defer(bool on);
uint64_t vdev_inject_take(uint64_t *gen);
void vdev_inject_wait(uint64_t until, uint64_t gen);
/*
 * Device I/Os issued by a leaf's queue (reads, writes) against the
 * requests it took (vdev_stat's vs_ops): their difference is what merging
 * saved.  Zero for a leaf that never had a run-time injection.
 */
void vdev_queue_stats(vdev_t *leaf, uint64_t issued[2]);

#endif
