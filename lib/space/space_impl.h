/*
 * space_impl.h — inside the space layer: metaslab, group and class
 * structures, and the space map buffer used by sync and condense.
 * Nothing outside lib/space includes this header.
 */
#ifndef TARN_SPACE_IMPL_H
#define TARN_SPACE_IMPL_H

#include "space.h"
#include "tarn_array.h"

#define TXG_SIZE        4               /* txgs in flight: open, quiescing, syncing, + 1 */
#define TXG_MASK        (TXG_SIZE - 1)
#define SM_MAX_LEN_SECTORS ((1ULL << 48) - 1)

/* A growable buffer of encoded space map entries. */
typedef struct sm_buf {
	tarn_array_t sb_ents;   /* uint8_t[SM_ENTRY_SIZE]: the entries, encoded */
	uint64_t sb_txg;        /* txg of the last marker written */
	bool     sb_have_txg;
} sm_buf_t;

/* sm_buf_t b = SM_BUF_INIT; */
#define SM_BUF_INIT { .sb_ents = TARN_ARRAY_INIT(uint8_t[SM_ENTRY_SIZE]) }

/* Emit a TXG marker unless the last one written has this txg. */
void space_map_buf_txg(sm_buf_t *b, uint64_t txg);
/* Emit entries of `type` for [off, off+size) (offsets relative to the ms). */
void space_map_buf_range(sm_buf_t *b, sm_type_t type, uint64_t off, uint64_t size);
/* Hand the bytes to the caller (NULL when empty) and reset b. */
void space_map_buf_take(sm_buf_t *b, void **buf, size_t *len);

/*
 * A metaslab.  Every range tree holds absolute offsets in the top-level
 * vdev's allocatable space.  All fields after ms_size are guarded by
 * ms_lock; the ms_stat_* copies are also read without it (atomics).
 */
struct metaslab {
	pthread_mutex_t   ms_lock;
	metaslab_group_t *ms_group;
	uint64_t          ms_id;
	uint64_t          ms_start;
	uint64_t          ms_size;

	bool              ms_loaded;
	range_tree_t     *ms_allocatable;           /* free now */
	range_tree_t     *ms_allocating[TXG_SIZE];  /* allocated, ALLOC not yet emitted */
	range_tree_t     *ms_freenow[TXG_SIZE];     /* born+freed in txg, FREE_NOW not yet emitted */
	range_tree_t     *ms_freeing[TXG_SIZE];     /* freed, FREE not yet emitted */
	range_tree_t     *ms_freed[TXG_SIZE];       /* FREE emitted, txg not yet synced */
	range_tree_t     *ms_defer[TXG_DEFER_SIZE]; /* synced frees, maturing */
	uint64_t          ms_defer_txg[TXG_DEFER_SIZE]; /* txg of each defer slot's frees */
	range_tree_t     *ms_held;                  /* matured while the class held frees */
	uint64_t          ms_cursor;                /* first-fit starts here */

	/* Statistics: written under ms_lock, read with atomics. */
	uint64_t          ms_stat_free;             /* space of ms_allocatable */
	uint64_t          ms_stat_max_seg;          /* largest allocatable segment */
	uint64_t          ms_stat_usable;           /* allocatable, in whole block units */
	uint64_t          ms_stat_deferred;         /* freeing + freed + defer + held */
};

struct metaslab_group {
	metaslab_class_t *mg_class;
	vdev_t           *mg_vd;
	uint64_t          mg_id;            /* vdev_id(mg_vd), fixed for a top-level */
	uint64_t          mg_shift;         /* vdev_ms_shift(mg_vd): log2 metaslab size */
	uint64_t          mg_count;
	metaslab_t      **mg_ms;
	int               mg_index;         /* in mc_groups; mc_groups_lock */

	pthread_mutex_t   mg_lock;          /* serialises picking mg_active */
	metaslab_t       *mg_active;        /* atomic: where single copies go */
	metaslab_t       *mg_active_copy[SPA_DVAS_PER_BP - 1]; /* atomic: where copy
	                                       2, 3 of a block went last */
	bool              mg_passive;       /* atomic: takes no new allocations
	                                       (a device being removed) */
	uint64_t          mg_allocs;        /* atomic: allocations, for re-picks */

	/* Sums over loaded metaslabs, updated atomically. */
	uint64_t          mg_total;
	uint64_t          mg_free;
	uint64_t          mg_deferred;
	uint64_t          mg_usable;        /* free space in whole units of mg_unit */
	uint64_t          mg_unit;          /* the asize of a 128 KiB block here */
};

/* The bytes a block of psize takes in mg's vdev (parity, padding, sectors). */
uint64_t metaslab_group_asize(const metaslab_group_t *mg, uint64_t psize);

struct metaslab_class {
	pthread_rwlock_t   mc_groups_lock;  /* guards the arrays below */
	tarn_array_t       mc_groups;       /* metaslab_group_t *, in creation order */
	tarn_array_t       mc_byid;         /* metaslab_group_t * by top-level vdev id, or NULL;
	                                       in a primary class: the groups of every
	                                       class of its family */
	metaslab_class_t  *mc_primary;      /* the family's primary class (self for it) */
	tarn_array_t       mc_aux;          /* primary: its auxiliary classes (fixed
	                                       once groups exist) */

	pthread_mutex_t    mc_rotor_lock;
	int                mc_rotor;        /* index in mc_groups */
	int64_t            mc_aliquot_left; /* bytes before the rotor moves on */

	pthread_mutex_t    mc_hold_lock;    /* serialises hold/release */
	uint64_t           mc_holds;        /* atomic: metaslab_class_hold_frees count */
	uint64_t           mc_held;         /* atomic: bytes in every ms_held */
};

/* mc's groups, in creation order (mc_groups_lock held). */
static inline int
mc_ngroups(const metaslab_class_t *mc)
{
	return ((int)tarn_array_len(&mc->mc_groups));
}

static inline metaslab_group_t *
mc_group(const metaslab_class_t *mc, int g)
{
	return (TARN_ARRAY_AT(&mc->mc_groups, metaslab_group_t *, g));
}

/* The group of top-level vdev id, or NULL (mc_groups_lock held; in a
 * primary class: of any class of the family). */
static inline metaslab_group_t *
mc_group_byid(const metaslab_class_t *mc, uint64_t id)
{
	return (id < tarn_array_len(&mc->mc_byid) ?
	    TARN_ARRAY_AT(&mc->mc_byid, metaslab_group_t *, id) : NULL);
}

/* Number of entries of mc_byid (mc_groups_lock held). */
static inline uint64_t
mc_nbyid(const metaslab_class_t *mc)
{
	return (tarn_array_len(&mc->mc_byid));
}

/* metaslab.c, used by metaslab_alloc.c */
void metaslab_update_stats(metaslab_t *ms);
bool metaslab_range_in_use(const metaslab_t *ms, uint64_t off, uint64_t size);
metaslab_group_t *metaslab_class_group_by_id(metaslab_class_t *mc, uint64_t id);

#endif
