/*
 * arc.h — the adaptive replacement cache: which clean blocks stay in RAM.
 *
 * The ARC holds no data itself.  Its owner (the dmu's dbufs) embeds an
 * arc_node_t in each cached block and tells the ARC when the block
 * becomes idle and clean (arc_insert), is taken by a reader (arc_hold),
 * or leaves the cache for another reason (arc_forget: dirtied, freed,
 * destroyed).  The ARC keeps the recency and frequency lists (MRU, MFU),
 * their ghost lists (block identities only), the adaptive target p, the
 * byte accounting against c (= arc_max) and the statistics; when it is
 * over c it picks victims and calls back into the owner (arc_ops_t) to
 * free them.  One arc_t may serve many pools (the daemon's ARC: all
 * pools share arc_max, as in ZFS).  Theory, locking and the limit's
 * slack: the comment at the top of arc.c and docs/DESIGN.md "The ARC".
 */
#ifndef TARN_ARC_H
#define TARN_ARC_H

#include "tarn_util.h"

typedef struct arc arc_t;
typedef struct arc_node arc_node_t;

/* Where a node is (an_list). */
typedef enum arc_list {
	ARC_NONE = 0,       /* not accounted: uncached, being read, dirty */
	ARC_HELD,           /* cached and clean, taken by a reader: counted, not evictable */
	ARC_MRU,            /* idle, seen once since it came in ("T1") */
	ARC_MFU,            /* idle, seen again since ("T2") */
} arc_list_t;

/* arc_insert flags */
#define ARC_F_META  0x01    /* metadata (indirect, dnode, ZAP... blocks) */
#define ARC_F_ONCE  0x02    /* a streamed block: evicts others only within ARC_ONCE_DIV
                             * of c, else kept only in free room */
#define ARC_ONCE_DIV 16

/*
 * The owner's side of eviction.  ao_trylock is called with the ARC's
 * lock held and may only try-lock the owner's lock of n (true: taken).
 * ao_evict is then called without the ARC's lock, n already off every
 * list: the owner frees the block (feeding the L2ARC first, when there
 * is one) and drops the lock ao_trylock took.
 */
typedef struct arc_ops {
	bool (*ao_trylock)(arc_node_t *n);
	void (*ao_evict)(arc_node_t *n);
} arc_ops_t;

/*
 * Embedded in a cached block; zero it when the block is made, and set
 * an_ops.  All fields but an_ref are the ARC's; the owner calls the
 * functions below with its own lock of n held, which is also what makes
 * reading an_list safe for it.
 */
struct arc_node {
	arc_node_t *an_prev, *an_next;  /* arc lock: on MRU/MFU, head = newest */
	const arc_ops_t *an_ops;
	uint64_t an_key;        /* owner: block identity (arc_key), 0 = unknown */
	uint32_t an_size;       /* bytes counted while an_list != ARC_NONE */
	uint8_t  an_list;       /* arc_list_t */
	uint8_t  an_last;       /* ARC_MRU/ARC_MFU it was last on; ARC_NONE: new */
	uint8_t  an_flags;      /* ARC_F_META | ARC_F_ONCE as counted */
	bool     an_ref;        /* owner lock: hit by a reader since it was inserted */
};

/*
 * The identity of a block on disk, for ghosts and the L2ARC: its pool's
 * guid, first DVA and birth (stable across imports and restarts).
 */
uint64_t arc_key(uint64_t pool, uint64_t vdev, uint64_t offset, uint64_t birth);

/* A cache of at most max bytes (min: the floor of max). */
arc_t *arc_create(uint64_t min, uint64_t max);
/* Free it; no node may be accounted any more. */
void arc_destroy(arc_t *arc);

/*
 * n (idle and clean, owner lock held) goes on a list: MRU when new,
 * MFU when a reader hit it since it came in or it was a ghost.  False
 * when the ARC does not keep it (a once block past its share with no
 * free room left): n is
 * then ARC_NONE and the owner frees the block.  When the cache is then
 * over c it evicts before returning, skipping victims whose owner lock
 * the caller holds (ao_trylock fails for them); call arc_evict once the
 * owner's lock is dropped to finish.
 */
bool arc_insert(arc_t *arc, arc_node_t *n, uint32_t size, int flags);
/* A reader takes n: off its list, still counted (ARC_HELD).  No-op unless listed. */
void arc_hold(arc_t *arc, arc_node_t *n);
/* n leaves the cache (dirtied, freed, dropped): no longer counted, no ghost. */
void arc_forget(arc_t *arc, arc_node_t *n);
/* Evict until the cache is within c (call holding no owner lock). */
void arc_evict(arc_t *arc);

/* Access kinds, for the statistics. */
#define ARC_ACC_PREFETCH 0x01   /* a read-ahead (else a demand read) */
#define ARC_ACC_META     0x02
/* A reader found n cached (owner lock held); promote: counts as a second use. */
void arc_hit(arc_t *arc, arc_node_t *n, int acc, bool promote);
/* A reader had to read a block from disk. */
void arc_miss(arc_t *arc, int acc);
/* A block dropped as soon as idle by the dataset's primarycache. */
void arc_note_uncached(arc_t *arc);

/*
 * New limits: min <= max (EINVAL otherwise, nothing changed).  Lowering
 * max evicts at once, from the caller's thread (holding no owner lock).
 */
int arc_set_limits(arc_t *arc, uint64_t min, uint64_t max);
/* arc_max now (no lock: for owners that size caches of their own by it). */
uint64_t arc_limit(arc_t *arc);

typedef struct arc_stats {
	uint64_t as_size;               /* as_mru + as_mfu + as_held */
	uint64_t as_c, as_p, as_min, as_max;
	uint64_t as_mru_size, as_mfu_size, as_held_size;
	uint64_t as_data_size, as_meta_size;    /* of as_size */
	uint64_t as_once_size;          /* streamed blocks in MRU */
	uint64_t as_mru_ghost_size, as_mfu_ghost_size, as_ghost_count;
	uint64_t as_hits, as_misses;
	uint64_t as_demand_data_hits, as_demand_data_misses;
	uint64_t as_demand_meta_hits, as_demand_meta_misses;
	uint64_t as_prefetch_data_hits, as_prefetch_data_misses;
	uint64_t as_prefetch_meta_hits, as_prefetch_meta_misses;
	uint64_t as_mru_hits, as_mfu_hits;
	uint64_t as_mru_ghost_hits, as_mfu_ghost_hits;
	uint64_t as_evictions, as_evict_bytes, as_evict_skip;
	uint64_t as_once_drops, as_uncached;
	uint64_t as_inserts;
	/* the L2ARC's: zero until it exists */
	uint64_t as_l2_hits, as_l2_misses, as_l2_reads, as_l2_writes;
	uint64_t as_l2_size, as_l2_asize, as_l2_hdr_size;
} arc_stats_t;
void arc_stats(arc_t *arc, arc_stats_t *out);

/* Parse a size ("1G", "512M", "1073741824", "1.5G"); EINVAL when not one. */
int arc_parse_size(const char *s, uint64_t *out);
/* The machine's RAM in bytes (sysconf). */
uint64_t arc_physmem(void);
/* The default arc_max: ARC_DEFAULT_PCT % of RAM; arc_min: max / 32, at least 32 MiB. */
#define ARC_DEFAULT_PCT 25
uint64_t arc_default_max(void);
uint64_t arc_default_min(uint64_t max);

#endif
