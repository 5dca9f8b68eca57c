/*
 * space.h — free-space management: range trees, metaslabs with on-disk
 * space maps (append-only ALLOC/FREE logs), the allocator, and deferred
 * frees.  It knows vdev geometry but not who owns a block, and it does no
 * object I/O: the pool layer stores each metaslab's space map as a MOS
 * object and hands this layer the bytes (load) or takes bytes from it
 * (sync).  Theory: the comment at the top of metaslab.c.
 */
#ifndef TARN_SPACE_H
#define TARN_SPACE_H

#include <pthread.h>
#include "tarn_util.h"
#include "format.h"
#include "vdev.h"

#define TXG_DEFER_SIZE 3   /* frees become allocatable this many txgs later */

/* ---- range trees: sets of disjoint [start, start+size) segments ---- */

typedef struct range_tree range_tree_t;
typedef void (*range_tree_fn_t)(void *arg, uint64_t start, uint64_t size);

range_tree_t *range_tree_create(void);
void range_tree_destroy(range_tree_t *rt);       /* must be empty or not */
/* Add a segment; it must not overlap (VERIFY).  Adjacent ones merge. */
void range_tree_add(range_tree_t *rt, uint64_t start, uint64_t size);
/* Remove a segment that lies wholly inside the tree (VERIFY). */
void range_tree_remove(range_tree_t *rt, uint64_t start, uint64_t size);
bool range_tree_contains(const range_tree_t *rt, uint64_t start, uint64_t size);
bool range_tree_intersects(const range_tree_t *rt, uint64_t start, uint64_t size);
uint64_t range_tree_space(const range_tree_t *rt);
uint64_t range_tree_numsegs(const range_tree_t *rt);
/* In ascending order. */
void range_tree_walk(const range_tree_t *rt, range_tree_fn_t fn, void *arg);
/* Remove everything, calling fn (may be NULL) for each segment. */
void range_tree_vacate(range_tree_t *rt, range_tree_fn_t fn, void *arg);
/*
 * Find `size` bytes aligned to `align` in a segment at or after *cursor,
 * wrapping once; on success set *start and advance *cursor.  ENOSPC if
 * no segment can hold it.  O(log n) per segment visited.
 */
int range_tree_find(const range_tree_t *rt, uint64_t size, uint64_t align,
    uint64_t *cursor, uint64_t *start);
/*
 * Count, beside the space, the space in whole units of `unit` bytes (each
 * segment rounded down): how much of it blocks of that size can use.
 * 0 turns it off.  Walks the tree once.
 */
void range_tree_set_unit(range_tree_t *rt, uint64_t unit);
uint64_t range_tree_unit_space(const range_tree_t *rt);
/* Largest segment size (for fragmentation and "max alloc" stats). */
uint64_t range_tree_max_seg(const range_tree_t *rt);

/* ---- space map entries ---- */

/*
 * On disk a space map is a sequence of 16-byte little-endian entries
 * (docs/FORMAT.md "Space maps"): TXG markers open a group, ALLOC and FREE
 * entries within it carry offset and length (both in 512-byte units,
 * offsets relative to the metaslab start).  A FREE is deferred at load
 * (its space stays unusable until TXG_DEFER_SIZE txgs after its own);
 * a FREE_NOW frees a block born and freed in the same txg, whose space
 * was allocatable again at once.
 */
#define SM_ENTRY_SIZE 16
typedef enum sm_type {
	SM_TXG = 1, SM_ALLOC = 2, SM_FREE = 3, SM_FREE_NOW = 4
} sm_type_t;

typedef struct sm_entry {
	sm_type_t sme_type;
	uint64_t  sme_txg;      /* SM_TXG: the txg; others: inherited */
	uint64_t  sme_offset;   /* bytes, relative to the metaslab start */
	uint64_t  sme_size;     /* bytes */
} sm_entry_t;

/* Encode one entry into 16 bytes (at most 2^48 - 1 sectors per entry). */
void space_map_encode(const sm_entry_t *e, void *out16);
/*
 * Decode buf[0..len) calling fn for every ALLOC/FREE/FREE_NOW entry with
 * the txg of the preceding marker; a non-zero return from fn stops the
 * walk and is returned.  EINVAL (never a crash) on damaged input: len
 * not a multiple of 16, unknown type, non-zero reserved bits, length 0,
 * an entry reaching beyond msize, an entry before the first TXG marker,
 * a TXG marker lower than the previous one.
 */
typedef int (*space_map_fn_t)(void *arg, const sm_entry_t *e);
int space_map_iterate(const void *buf, size_t len, uint64_t msize,
    space_map_fn_t fn, void *arg);

/* ---- metaslabs ---- */

typedef struct metaslab metaslab_t;
typedef struct metaslab_group metaslab_group_t;
typedef struct metaslab_class metaslab_class_t;

/*
 * A class is the set of top-level vdevs that allocations rotate over.
 * A pool has one class per kind of device (normal, log, special: ZFS's
 * allocation classes), made as a family: a primary class (the normal
 * one, metaslab_class_create) and auxiliary classes made from it
 * (metaslab_class_create_aux), before any of them has groups.
 *
 * What is per class and what is per family:
 *  - metaslab_alloc, metaslab_class_space / _dspace: this class only;
 *  - metaslab_free, metaslab_claim, metaslab_is_allocated take any class
 *    of the family: a DVA names its top-level vdev, whose group the
 *    family's address table (in the primary) finds, whatever its class;
 *  - metaslab_class_next_dirty, _sync_done, _hold_frees, _release_frees,
 *    _held_space on the primary cover every class of the family (a sync
 *    or a scan is pool-wide); on an auxiliary class they act for the
 *    family too.
 * Destroy the auxiliary classes before the primary.
 */
metaslab_class_t *metaslab_class_create(void);
metaslab_class_t *metaslab_class_create_aux(metaslab_class_t *primary);
void metaslab_class_destroy(metaslab_class_t *mc);
/* Top-level vdevs with a group in mc (this class only). */
int metaslab_class_ngroups(metaslab_class_t *mc);
/*
 * A passive group takes no new allocations (frees and claims still work):
 * a device on its way out.  metaslab_alloc of a class whose groups are
 * all passive is ENOSPC.
 */
void metaslab_group_set_passive(metaslab_group_t *mg, bool passive);
/* The class a group belongs to (the group of a top-level: vdev_ms_group). */
metaslab_class_t *metaslab_group_class(const metaslab_group_t *mg);

/*
 * Create top's metaslab group: `count` metaslabs of 1 << ms_shift bytes
 * (the last may be shorter, ending at vdev_asize(top)).  ms_shift and
 * count come from vdev_ms_shift(top) / vdev_ms_count(top) when set
 * (import), else they are chosen (metaslab_pick_shift) and stored there
 * (these fields of the vdev are the space layer's, see vdev.h); the group
 * is stored in vdev_ms_group(top).  All space is allocated (unusable)
 * until each metaslab is loaded.  VERIFYs that the geometry fits:
 * callers check imported values ((count - 1) << ms_shift < asize
 * rounded down to 512, ashift <= ms_shift < 63) before calling.
 */
metaslab_group_t *metaslab_group_create(metaslab_class_t *mc, vdev_t *top);
void metaslab_group_destroy(metaslab_group_t *mg);
/*
 * Pick ms_shift for a new top-level vdev of asize bytes: at most about
 * 200 metaslabs of at least 16 MiB (at most 16 GiB), but at least 4
 * metaslabs as long as they stay >= 1 MiB (small vdevs).
 */
uint64_t metaslab_pick_shift(uint64_t asize);

metaslab_t *metaslab_group_get(metaslab_group_t *mg, uint64_t index);
uint64_t metaslab_group_count(const metaslab_group_t *mg);

/*
 * Load a metaslab from its space map bytes (NULL/0 for a new, empty
 * metaslab: all free).  Frees recorded in a txg later than
 * synced_txg - TXG_DEFER_SIZE stay deferred until they mature.
 * synced_txg is the txg the map was read under: no entry may be newer.
 * EINVAL when the map is damaged or inconsistent (an ALLOC of space not
 * free, a FREE of space not allocated); the metaslab then stays
 * unloaded.  EBUSY when already loaded.
 */
int metaslab_load(metaslab_t *ms, const void *sm, size_t smlen, uint64_t synced_txg);

/*
 * Allocate `ndvas` copies of a block of psize bytes in txg, each on a
 * different top-level vdev while there are enough, else apart on the
 * same one.  Fills dvas[0..ndvas).  ENOSPC when even one copy does not
 * fit (then nothing is allocated).
 */
int metaslab_alloc(metaslab_class_t *mc, uint64_t psize, int ndvas,
    uint64_t txg, dva_t *dvas);
/*
 * Free a DVA in txg.  Blocks born before txg become allocatable
 * TXG_DEFER_SIZE txgs after txg is synced; a block born in txg itself
 * (never committed) is allocatable again at once.
 */
void metaslab_free(metaslab_class_t *mc, const dva_t *dva, uint64_t birth, uint64_t txg);
/*
 * True when the DVA lies within allocated space (for verification): in
 * a loaded metaslab, not allocatable and not freed (pending or deferred).
 */
bool metaslab_is_allocated(metaslab_class_t *mc, const dva_t *dva);
/*
 * Claim a DVA that is free in the loaded state but in use on the devices
 * (an intent-log block written after the last committed txg): allocated
 * in txg from now on.  EEXIST when not all of it is allocatable; EINVAL
 * when it lies outside the pool.
 */
int metaslab_claim(metaslab_class_t *mc, const dva_t *dva, uint64_t txg);

/*
 * Sync: hand out the entries for changes to ms made in txg since the
 * last call (one TXG marker then FREE_NOW, ALLOC and FREE entries) to
 * be appended to its space map; *buf is allocated (caller tarn_frees
 * it), or NULL when *len is 0 (nothing to write).  Called once per sync
 * pass until no metaslab has anything left.
 */
int metaslab_sync(metaslab_t *ms, uint64_t txg, void **buf, size_t *len);
/* Iterate over metaslabs with unsynced changes in txg. */
metaslab_t *metaslab_class_next_dirty(metaslab_class_t *mc, uint64_t txg, metaslab_t *prev);
/*
 * After txg is on disk: frees of txg start their deferral, frees of
 * txg - TXG_DEFER_SIZE become allocatable.  True while deferred frees
 * are still maturing (more txgs must sync before they are usable).
 */
bool metaslab_class_sync_done(metaslab_class_t *mc, uint64_t txg);

/*
 * Holding frees (for scrub and resilver).  A scan walks a committed tree
 * of blocks while new txgs free some of them; once such a free matures
 * (TXG_DEFER_SIZE txgs) its space could be allocated again and the
 * scan's read, or worse its repair write, would touch someone else's
 * live data.  While the class is held (a count: holds nest), frees that
 * mature go to a per-metaslab held tree instead of becoming allocatable;
 * they stay counted as deferred (metaslab_space_t.ms_deferred) and are
 * not allocatable.  When the last hold is released every held range
 * becomes allocatable at once.  On disk nothing changes: a held free is
 * an ordinary matured FREE, so after an import it is simply free (no
 * scan survives a close).  Release must pair with hold.
 */
void metaslab_class_hold_frees(metaslab_class_t *mc);
void metaslab_class_release_frees(metaslab_class_t *mc);
/* Bytes matured while held and not yet released (all metaslabs). */
uint64_t metaslab_class_held_space(metaslab_class_t *mc);

/* Condensing: true when ms's space map is much longer than its state. */
bool metaslab_should_condense(const metaslab_t *ms, uint64_t smlen);
/*
 * A fresh, minimal space map describing ms as of txg (for a rewrite that
 * replaces the whole map), deferred frees included.  Called in syncing
 * context of txg instead of metaslab_sync: it absorbs the changes of txg
 * not yet synced, so a later metaslab_sync in txg appends only newer ones.
 */
int metaslab_condense(metaslab_t *ms, uint64_t txg, void **buf, size_t *len);

/* Identity and accounting. */
uint64_t metaslab_id(const metaslab_t *ms);
vdev_t *metaslab_vdev(const metaslab_t *ms);
uint64_t metaslab_start(const metaslab_t *ms);
uint64_t metaslab_size(const metaslab_t *ms);
uint64_t metaslab_allocated(const metaslab_t *ms); /* bytes in use incl. deferred */

/*
 * Verification (tests, leak checks): walk ms's allocatable segments in
 * ascending order, or its deferred frees (synced, not yet mature) with
 * the txg that freed them, oldest txg first.  Nothing if not loaded.
 */
typedef void (*metaslab_defer_fn_t)(void *arg, uint64_t txg, uint64_t start,
    uint64_t size);
void metaslab_walk_free(metaslab_t *ms, range_tree_fn_t fn, void *arg);
void metaslab_walk_deferred(metaslab_t *ms, metaslab_defer_fn_t fn, void *arg);

/* ms_total = ms_alloc + ms_deferred + ms_free */
typedef struct metaslab_space {
	uint64_t ms_total;      /* allocatable bytes of all loaded metaslabs */
	uint64_t ms_alloc;      /* allocated (in use), deferred frees excluded */
	uint64_t ms_deferred;   /* freed, not yet allocatable (held frees included) */
	uint64_t ms_free;       /* allocatable now */
	uint64_t ms_max_seg;    /* largest free segment */
	uint64_t ms_usable;     /* of ms_free, what full-size blocks can use (its
	                         * segments in whole units of a 128 KiB block's asize) */
} metaslab_space_t;
void metaslab_class_space(metaslab_class_t *mc, metaslab_space_t *out);
void metaslab_group_space(metaslab_group_t *mg, metaslab_space_t *out);
/*
 * The class's space in data bytes: each group's figures deflated by its
 * vdev's ratio (vdev_deflate_ratio; RAID-Z's parity taken out), as ZFS's
 * dspace.  ms_max_seg stays raw.
 */
void metaslab_class_dspace(metaslab_class_t *mc, metaslab_space_t *out);

#endif
