/*
 * dmu_impl.h — private structures of the dmu layer (objects, dbufs,
 * transactions, txgs).  Nothing outside lib/dmu includes this header.
 *
 * Lock order: docs/DESIGN.md, "Lock order" (lib/util/lockorder.h checks
 * part of it).  Within this layer, outer first: os_alloc_lock,
 * dn_struct_rwlock (block-pointer tree of one object; held across I/O),
 * os_lock (dnode table; the two never nest), dn_mtx (dbufs, dirty
 * records and per-txg state of one object), dp_lock (txg state; taken
 * briefly under all of these, never held while waiting for them),
 * os_dirty_lock, then the ARC's arc_lock (lib/arc: taken under dn_mtx;
 * its evictor only try-locks dn_mtx).
 * No I/O is issued while holding os_lock, dn_mtx or arc_lock.
 */
#ifndef TARN_DMU_IMPL_H
#define TARN_DMU_IMPL_H

#include <pthread.h>
#include "dmu.h"
#include "arc.h"
#include "tarn_array.h"
#include "tarn_hash.h"

#define TXG_SIZE 4
#define TXG_MASK (TXG_SIZE - 1)
#define TXG_IDX(txg) ((txg) & TXG_MASK)
#define DN_DNODES_PER_BLOCK (DNODE_BLOCK_SIZE / DNODE_SIZE)     /* 32 */
#define DN_EPB_SHIFT (DN_INDIRECT_SHIFT - 7)                    /* bps per indirect: 1024 */
#define DN_MAX_LEVELS 8

/* ---- on-disk ---- */

typedef struct dnode_phys {
	uint8_t  dn_type;           /* dmu_object_type_t; NONE = free slot */
	uint8_t  dn_indblkshift;
	uint8_t  dn_nlevels;        /* 1 = the blkptr points at data */
	uint8_t  dn_nblkptr;        /* always 1 in version 1 */
	uint8_t  dn_bonustype;
	uint8_t  dn_checksum;       /* 0 = inherit from the objset */
	uint8_t  dn_compress;       /* 0 = inherit from the objset */
	uint8_t  dn_flags;
	uint16_t dn_datablkszsec;   /* data block size in 512-byte units (0 = 1 MiB... see FORMAT) */
	uint16_t dn_bonuslen;
	uint32_t dn_datablkshift_pad;
	uint64_t dn_maxblkid;       /* largest level-0 block id with data (0 if none) */
	uint64_t dn_used;           /* bytes its blocks take (zio_bp_dsize) */
	uint64_t dn_gen;            /* txg the object was allocated in */
	uint64_t dn_pad[3];
	blkptr_t dn_blkptr[1];
	uint8_t  dn_bonus[DN_MAX_BONUSLEN];
} dnode_phys_t;
_Static_assert(sizeof (dnode_phys_t) == DNODE_SIZE, "dnode_phys_t is 512 bytes");

#define OBJSET_PHYS_SIZE 1024
typedef struct objset_phys {
	dnode_phys_t os_meta_dnode;
	uint64_t os_type;           /* dmu_objset_type_t */
	uint64_t os_flags;
	/*
	 * Bytes taken (zio_bp_dsize: allocated, deflated by RAID-Z's data
	 * ratio on pools with space_deflate) by every block below this objset_phys:
	 * the sum of every dnode's dn_used, the meta-dnode's included, as of
	 * the txg that wrote this block.  Added for dataset space accounting
	 * (lib/dsl: used/referenced); read with dmu_objset_space().
	 */
	uint64_t os_used;
	zil_header_t os_zil_header; /* intent log of a file system (lib/zil) */
	/*
	 * The same blocks' logical (bp_lsize) and stored (bp_psize) bytes,
	 * each block once whatever its copies: zfs's logicalreferenced and
	 * the ratio refcompressratio.  Kept on every pool, meaningful on pools
	 * created with the feature logical_space (counted from the first block).
	 */
	uint64_t os_lsize;
	uint64_t os_psize;
	uint64_t os_pad[39];
} objset_phys_t;
_Static_assert(sizeof (objset_phys_t) == OBJSET_PHYS_SIZE, "objset_phys_t is 1 KiB");

/* ---- in memory ---- */

typedef struct dnode dnode_t;
typedef struct dbuf dbuf_t;

/* One txg's version of a level-0 block that was changed in that txg. */
typedef struct dirty_record {
	uint64_t dr_txg;
	void    *dr_data;           /* block contents as of the end of dr_txg */
	uint32_t dr_size;           /* bytes of dr_data */
	bool     dr_hole;           /* the whole block was freed: write a hole */
	bool     dr_written;        /* written by a sync pass of dr_txg */
	uint8_t  dr_comp, dr_cksum; /* of dr_stored */
	uint32_t dr_psize;          /* bytes of dr_stored */
	void    *dr_stored;         /* the block's stored form (dmu_write_stored) or NULL */
	struct dirty_record *dr_next_txg; /* newer record of the same dbuf */
	dbuf_t  *dr_dbuf;
	struct dirty_record *dr_dnode_next; /* list of dn_txg[].dt_records */
} dirty_record_t;

typedef enum dbuf_state {
	DB_UNCACHED = 0,            /* db_data not valid */
	DB_READING,                 /* a thread is reading it */
	DB_CACHED,
} dbuf_state_t;

struct dbuf {
	dnode_t   *db_dn;
	uint64_t   db_blkid;
	uint8_t    db_level;
	dbuf_state_t db_state;      /* guarded by dn_mtx */
	uint32_t   db_size;
	void      *db_data;         /* newest contents (shared with newest record) */
	dirty_record_t *db_dirty;   /* oldest dirty record, chain by dr_next_txg */
	int        db_holds;        /* guarded by dn_mtx */
	arc_node_t db_arc;          /* in the ARC while clean and cached (dbuf.c) */
	tarn_hlink_t db_hash_link;  /* in dn_dbufs */
	bool       db_sync_dirty;   /* indirect / meta-dnode block changed by sync */
	bool       db_once;         /* dn_mtx: filled by a whole-block write or read
	                             * ahead, and read since only by a stream (dbuf.c) */
	bool       db_ahead;        /* dn_mtx: read in a batch, not read by anyone since */
	bool       db_fetched;      /* dn_mtx: read by a demand batch, its miss counted */
	/* dn_mtx: the block as read from the pool, for the L2ARC (dbuf.c) */
	bool       db_l2ok;         /* read whole from the pool, not changed since */
	uint8_t    db_comp;         /* its bp's compression */
	uint32_t   db_psize;        /* its bp's stored size */
	uint64_t   db_l2ck;         /* its bp's first checksum word */
};

/* A range of level-0 block ids [start, end) freed in one txg. */
typedef struct free_range {
	uint64_t fr_start, fr_end;
} free_range_t;

/* What one txg changed about a dnode. */
typedef struct dnode_txg {
	bool      dt_dirty;         /* dnode has changes in this txg (holds a hold) */
	bool      dt_in_synced;     /* on os_synced[txg] */
	bool      dt_listed;        /* dnode is on os_dirty[txg] for the next pass */
	bool      dt_trunc_applied;
	size_t    dt_ranges_applied;
	bool      dt_alloc;         /* allocated in this txg */
	bool      dt_free;          /* freed in this txg */
	bool      dt_bonus_dirty;
	uint8_t   dt_bonus[DN_MAX_BONUSLEN];
	uint32_t  dt_blksz;         /* block size as of this txg (alloc/set) */
	dmu_object_type_t dt_type, dt_bonustype;
	uint32_t  dt_bonuslen;
	bool      dt_trunc;         /* freed to the end at dt_trunc_blkid */
	uint64_t  dt_trunc_blkid;
	tarn_array_t dt_ranges;     /* free_range_t */
	dirty_record_t *dt_records; /* unordered */
	dnode_t  *dt_dirty_next;    /* os_dirty list link */
} dnode_txg_t;

struct dnode {
	objset_t *dn_os;
	uint64_t  dn_object;
	pthread_rwlock_t dn_struct_rwlock;  /* tree: dn_phys.dn_blkptr, nlevels, indirects */
	pthread_mutex_t dn_mtx;
	pthread_cond_t  dn_cv;              /* dbuf state changes */
	/* As synced (the tree is also updated by sync in place): */
	dnode_phys_t dn_phys;               /* dn_struct_rwlock + dn_mtx */
	/* Open-context view (dn_mtx): */
	bool      dn_allocated;
	dmu_object_type_t dn_type, dn_bonustype;
	uint32_t  dn_blksz;
	uint32_t  dn_bonuslen;
	uint64_t  dn_maxblkid;              /* open view (max written blkid) */
	uint8_t   dn_bonus[DN_MAX_BONUSLEN];
	uint64_t  dn_free_txg;              /* freed in this txg, not yet synced */
	dnode_txg_t dn_txg[TXG_SIZE];
	/* dbuf table (dn_mtx) */
	tarn_hash_t dn_dbufs;               /* of dbuf_t, by (level, blkid) */
	/* dnode table membership (os_lock) */
	int       dn_holds;                 /* atomic */
	bool      dn_in_lru;                /* os_lock */
	tarn_hlink_t dn_hash_link;          /* in os_dnodes */
	/* sync thread only: indirect dbufs awaiting their write */
	/*
	 * Zero-copy reads (dmu.c): cached level-0 buffers of this dnode lent
	 * to readers (held dbufs whose db_data a reply points at).  While
	 * dn_loans > 0, open-context writers wait (on dn_cv) before they
	 * change or replace any level-0 buffer; while a writer waits
	 * (dn_loan_waiters) new reads copy instead of borrowing.  dn_mtx.
	 */
	int       dn_loans;
	int       dn_loan_waiters;
	tarn_array_t dn_sdirty;             /* of dbuf_t * */
	dnode_t  *dn_lru_prev, *dn_lru_next;
};

struct objset {
	dmu_pool_t *os_dp;
	bool      os_replaying;             /* atomic: txs may use the reserve (dmu_objset_replaying) */
	dmu_objset_type_t os_type;
	dmu_objset_props_t os_props;
	uint8_t   os_primarycache;          /* atomic: DMU_CACHE_* (what the ARC keeps) */
	uint8_t   os_secondarycache;        /* atomic: DMU_CACHE_* (what the L2ARC is fed) */
	uint8_t   os_logbias;               /* atomic: DMU_LOGBIAS_* (read by the zil) */
	pthread_mutex_t os_lock;
	dnode_t  *os_meta_dnode;
	blkptr_t  os_rootbp;                /* as last synced */
	/* dnode table (os_lock) */
	tarn_hash_t os_dnodes;               /* of dnode_t, by object number */
	dnode_t  *os_dn_lru_head, *os_dn_lru_tail; /* idle dnodes, oldest first */
	/* dirty dnodes per txg (os_lock) */
	dnode_t  *os_dirty[TXG_SIZE];        /* to write in the next pass */
	tarn_array_t os_synced[TXG_SIZE];    /* of dnode_t *: written this txg, for sync_done */
	tarn_array_t os_meta_dirty;          /* of dbuf_t *: meta-dnode blocks changed by sync */
	pthread_mutex_t os_alloc_lock;       /* object number allocation */
	pthread_mutex_t os_dirty_lock;       /* os_dirty lists; after dn_mtx */
	bool      os_new;                    /* never synced: write it */
	bool      os_phys_dirty[TXG_SIZE];  /* new objset: write even if empty */
	uint64_t  os_obj_next;              /* allocation hint (os_lock) */
	tarn_array_t os_free_objs;          /* of uint64_t: freed and synced numbers to reuse */
	uint64_t  os_used;                  /* sum of dn_used (atomic; changed in syncing context) */
	uint64_t  os_lsize, os_psize;       /* logical and stored bytes (atomic; as os_used) */
	objset_t *os_next;                  /* dp_objsets */
	zil_header_t os_zil_header;         /* os_dirty_lock; written with the phys */
	bool      os_zil_dirty[TXG_SIZE];   /* header changed for that txg */
	/* asynchronous read-ahead in flight (dmu.c); close waits for none */
	pthread_mutex_t os_ra_lock;
	pthread_cond_t  os_ra_cv;
	int       os_ra_pending;            /* os_ra_lock */
	/*
	 * Snapshots (lib/dsl): blocks born at or before os_prev_snap_txg are
	 * still in a snapshot's tree, so the sync hands them to os_dead (of
	 * blkptr_t) instead of freeing them, and the dataset layer
	 * takes them after the sync (dmu_objset_dead_take) for its dead list.
	 */
	uint64_t  os_prev_snap_txg;         /* atomic */
	pthread_mutex_t os_dead_lock;       /* os_dead; a leaf lock */
	tarn_array_t os_dead;
};

/* Free bp in txg, or keep it for a snapshot's dead list (see os_prev_snap_txg). */
void dmu_objset_free_bp(objset_t *os, const blkptr_t *bp, uint64_t txg);

struct dmu_tx {
	objset_t *tx_os;
	uint64_t  tx_txg;
	uint64_t  tx_space;                 /* estimated bytes */
	uint64_t  tx_shared_key[2];         /* the one write's windows (0: none or
	                                       several writes; dmu_tx_hold_write) */
	uint64_t  tx_shared[2];             /* of tx_space: what txs writing the
	                                       same window in one txg share */
	bool      tx_writes;                /* a write is held */
	bool      tx_netfree;
	bool      tx_syncing;               /* created by dmu_tx_create_syncing */
	bool      tx_assigned;
	struct dmu_tx_mine *tx_mine;        /* the assigning thread's holds */
};

struct dmu_pool {
	zio_ctx_t *dp_zio;
	dmu_pool_opts_t dp_opts;
	dmu_pool_sync_fn_t dp_sync_fn;
	dmu_pool_space_fn_t dp_space_fn;
	void      *dp_arg;
	void     (*dp_synced_cb)(void *, uint64_t);
	int        dp_defer_syncs;  /* dp_lock; empty txgs still to sync for maturing frees */
	uint64_t   dp_frees_txg;    /* dp_lock; the last txg a netfree tx committed to */
	uint64_t   dp_enospc_ns;    /* dp_lock; when space last ran out (0: never) */
	uint64_t   dp_avail_seen;   /* dp_lock; free space at the last space check */
	uint64_t  *dp_shared_seen[TXG_SIZE]; /* dp_lock; windows charged per txg
	                                       (DMU_SHARED_SLOTS, direct-mapped) */
	dmu_error_fn_t dp_error_cb;
	void      *dp_error_arg;
	void      *dp_synced_arg;

	pthread_mutex_t dp_lock;
	pthread_cond_t  dp_sync_cv;          /* wakes the sync thread */
	pthread_cond_t  dp_synced_cv;        /* a txg synced */
	pthread_cond_t  dp_quiesce_cv;       /* holds dropped */
	pthread_cond_t  dp_dirty_cv;         /* dirty data went down */
	pthread_cond_t  dp_open_cv;          /* the quiescing txg's holds are gone */
	uint64_t  dp_open_txg;
	uint64_t  dp_quiescing_txg;          /* 0 unless one waits for its holds */
	uint64_t  dp_syncing_txg;            /* 0 when idle */
	uint64_t  dp_synced_txg;
	uint64_t  dp_wait_txg;               /* someone waits for this txg */
	uint64_t  dp_holds[TXG_SIZE];
	uint64_t  dp_dirty[TXG_SIZE];        /* dirty bytes per txg (whole records) */
	uint64_t  dp_written[TXG_SIZE];      /* bytes dmu_write was given per txg (atomic) */
	uint64_t  dp_space_pending[TXG_SIZE];/* estimated bytes per txg */
	uint64_t  dp_dirty_total;
	bool      dp_kick;
	bool      dp_exit;
	bool      dp_running;
	bool      dp_suspended;
	int       dp_sync_error;
	uint64_t  dp_open_time;              /* ns, when dp_open_txg opened */
	pthread_t dp_thread;
	dmu_pool_stats_t dp_stats;
	objset_t *dp_objsets;                /* dp_lock */

	/* the clean blocks' cache: the daemon's (dpo_arc) or the pool's own */
	arc_t    *dp_arc;
	bool      dp_arc_own;
	/* the pool's cache devices (set once, the first time it has one; atomic) */
	l2arc_t  *dp_l2arc;
};

/* txg.c */
void dmu_pool_dirty_add(dmu_pool_t *dp, uint64_t txg, uint64_t bytes);
void dmu_pool_written_add(dmu_pool_t *dp, uint64_t txg, uint64_t bytes);
/* dmu.c: wait until no read-ahead of os is in flight (before close). */
void dmu_readahead_drain(objset_t *os);
/* dmu.c: wait until no buffer of dn is lent to a reader (dn_mtx held). */
void dmu_loan_wait_locked(dnode_t *dn);
/* dmu_objset.c: apply a change of some dnode's dn_used to os_used. */
void dmu_objset_used_delta(objset_t *os, int64_t delta);
/* bp was born into (sign 1) or left (sign -1) os: its logical and stored bytes */
void dmu_objset_bp_delta(objset_t *os, const blkptr_t *bp, int sign);

/* dbuf.c */
dbuf_t *dbuf_hold(dnode_t *dn, uint8_t level, uint64_t blkid, bool create);
void dbuf_rele(dbuf_t *db);
void dbuf_note_read(dbuf_t *db, bool stream, bool fetched);
/* A reader found db cached without dbuf_read: the ARC's hit (dn_mtx held). */
void dbuf_note_hit(dbuf_t *db);
int dbuf_read(dbuf_t *db);
dbuf_t *dbuf_find_locked(dnode_t *dn, uint8_t level, uint64_t blkid);
/* How the tables of dbufs (dn_dbufs) and of dnodes (os_dnodes) grow. */
extern const tarn_hash_conf_t dbuf_table_conf;
extern const tarn_hash_conf_t dnode_table_conf;
/* for each dbuf db of dn (dn_mtx held); the body may evict db itself */
#define DN_FOREACH_DBUF(dn, db) TARN_HASH_FOREACH(&(dn)->dn_dbufs, db, db_hash_link)
void dbuf_cache_evict(dmu_pool_t *dp);
void dbuf_destroy_all(dnode_t *dn);
/* db leaves the ARC (dirtied, freed): dn_mtx held */
void dbuf_arc_forget(dbuf_t *db);
/* db is metadata for the ARC's statistics and primarycache=metadata (dn_mtx held) */
bool dbuf_is_meta(const dbuf_t *db);
void dbuf_evict_one(dbuf_t *db);
void dbuf_maybe_idle(dbuf_t *db);
dirty_record_t *dbuf_dirty(dbuf_t *db, uint64_t txg);
void dbuf_sync_done(dbuf_t *db, dirty_record_t *dr);

/* dnode.c */
int dnode_hold(objset_t *os, uint64_t obj, bool must_exist, dnode_t **dnp);
void dnode_rele(dnode_t *dn);
void dnode_setdirty(dnode_t *dn, uint64_t txg);
int dnode_resolve_bp(dnode_t *dn, uint64_t level, uint64_t blkid, blkptr_t *bp);
bool dnode_block_freed(dnode_t *dn, uint64_t blkid);
dnode_t *dnode_create(objset_t *os, uint64_t obj, const dnode_phys_t *phys);
void dnode_destroy(dnode_t *dn);
void dnode_sync_done(dnode_t *dn, uint64_t txg);
uint32_t dnode_phys_blksz(const dnode_phys_t *dnp);
void dnode_open_view_from_phys(dnode_t *dn);

/* One block handed to the tree sync: a level-0 block of a dnode. */
typedef struct sync_item {
	uint64_t si_blkid;
	void    *si_data;          /* NULL: write a hole */
	uint32_t si_size;
	blkptr_t si_bp;            /* old bp in, new bp out */
	blkptr_t si_old;
	dirty_record_t *si_dr;
	const void *si_stored;     /* the stored form to write as it is (or NULL) */
	uint32_t si_psize;
	uint8_t  si_comp, si_cksum;
	dbuf_t  *si_db;            /* meta-dnode blocks: the sync-dirty dbuf */
	dnode_t *si_dn;
} sync_item_t;

/* dnode_sync.c */
typedef struct dnode_sync_ctx dnode_sync_ctx_t;
int dnode_sync_prepare(dnode_t *dn, uint64_t txg, sync_item_t **items, int *nitems);
int dnode_sync_finish(dnode_t *dn, uint64_t txg, int pass, sync_item_t *items, int nitems);
int dnode_sync_items_write(objset_t *os, uint64_t txg, int pass, dnode_t **dns,
    sync_item_t **items, int *nitems, int ndn);

/* dmu_objset.c */
zio_prop_t dmu_objset_block_prop(objset_t *os, const dnode_phys_t *dnp, uint8_t level,
    dmu_object_type_t type);

/* sequential speed */
/*
 * Block buffers (dbuf.c): the data of dbufs and dirty records.  Buffers
 * of 64 KiB..1 MiB come from a process-wide pool of pre-faulted chunks
 * and are recycled, so a stream of blocks does not page-fault each
 * 4 KiB page afresh; other sizes use tarn_alloc.  zero: the caller needs
 * zeros (otherwise the contents are undefined and the caller fills
 * every byte).  dbuf_buf_free accepts any buffer of the given size that
 * dbuf_buf_alloc or tarn_alloc returned.
 */
void *dbuf_buf_alloc(uint32_t size, bool zero);
void dbuf_buf_free(void *buf, uint32_t size);
/* Give every free buffer and unused chunk back to the kernel, and glibc's free pages. */
void dmu_buf_release(void);
/*
 * Read the level-0 blocks [first, last] of dn that are not cached (at
 * most 64), in parallel (one zio batch), into the cache; blocks already
 * cached or being read by another thread are left alone.  Errors are
 * reported as dbuf_read reports them and the block stays uncached;
 * returns the first error of a block in [first, need] (0 when none).
 * The caller holds dn and dn_struct_rwlock (reader).  prefetch: the
 * read-ahead's (the ARC counts its misses as prefetch misses).
 */
int dbuf_read_blocks(dnode_t *dn, uint64_t first, uint64_t last, uint64_t need,
    bool prefetch);
/*
 * dbuf_dirty for a change that overwrites the whole block: when the
 * record needs a buffer of its own, the old contents are not copied into
 * it (they are undefined; the caller writes every byte under dn_mtx).
 */
dirty_record_t *dbuf_dirty_whole(dbuf_t *db, uint64_t txg);

#endif
