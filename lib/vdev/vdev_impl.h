/*
 * vdev_impl.h — the inside of the vdev layer: the ops tables of each
 * vdev type, leaf I/O helpers that keep the counters, the fault
 * injector's hooks used by leaves, per-thread scratch buffers and the
 * label geometry.  Nothing outside lib/vdev/ includes this header.
 */
#ifndef TARN_VDEV_IMPL_H
#define TARN_VDEV_IMPL_H

#include "vdev.h"
#include "tarn_array.h"

/*
 * A node of the vdev tree.  Other layers read it through vdev.h's
 * accessors (vdev_access.c) and set only what vdev.h lets them set.
 */
struct vdev {
	vdev_type_t   vdev_type;
	const vdev_ops_t *vdev_ops;
	uint64_t      vdev_guid;
	uint64_t      vdev_id;          /* index in parent */
	vdev_t       *vdev_parent;
	vdev_t       *vdev_top;         /* top-level ancestor (self if top) */
	tarn_array_t  vdev_child;       /* vdev_t *, by vdev_id: VDEV_CHILD, VDEV_NCHILD */
	int           vdev_nparity;     /* raidz */
	uint64_t      vdev_ashift;      /* log2 of the smallest I/O */
	uint64_t      vdev_asize;       /* allocatable bytes */
	uint64_t      vdev_psize;       /* leaf: device size in bytes */
	char         *vdev_path;        /* leaf; owned (tarn_strdup'd, freed by vdev_free) */
	vdev_state_t  vdev_state;
	bool          vdev_offline;     /* administratively offline (vdev_set_offline;
	                                   the pool layer records it too) */
	vdev_stat_t   vdev_stat;
	uint64_t      vdev_guid_sum;    /* self + descendants */
	/*
	 * Top-level: the space layer's bookkeeping (owned by the space and
	 * pool layers, set through vdev_set_ms_*; vdev.h).  The vdev layer
	 * carries array, shift and count in the label config.
	 */
	uint64_t      vdev_ms_array;    /* MOS object of the metaslab array */
	uint64_t      vdev_ms_shift;
	uint64_t      vdev_ms_count;
	void         *vdev_ms_group;    /* space layer's metaslab group */
	/* leaf */
	int           vdev_fd;
	vdev_fault_t *vdev_fault;
	vdev_inject_t *vdev_inject;     /* leaf: run-time injections, or NULL; set
	                                   once (atomic), kept across close/open,
	                                   freed with the vdev_t (vdev_inject.c) */
	bool          vdev_readonly;
	void         *vdev_tsd;         /* type-specific data */
	int           vdev_open_error;  /* leaf: errno of the last failed open, else 0 */
	/*
	 * Device lifecycle (vdev_dtl.c, vdev_tree.c; the pool layer drives
	 * them).  Fields marked (atomic) are updated by I/O threads.  Those
	 * marked "pool layer" are the pool layer's (its setters in vdev.h);
	 * this layer reads them and moves them with the leaf.
	 */
	uint64_t      vdev_dtl_txg;     /* leaf: first txg it missed; 0: none (atomic) */
	uint64_t      vdev_dtl_last;    /* leaf: last txg it missed (atomic) */
	uint64_t      vdev_dtl_saved[2]; /* pool layer: DTL as last written to labels */
	bool          vdev_resilvering; /* pool layer: a resilver is copying what
	                                   the leaf missed */
	bool          vdev_offline_temp; /* pool layer: offline -t, not recorded in
	                                   the labels */
	vdev_state_t  vdev_fault_state; /* pool layer: FAULTED or REMOVED after
	                                   errors (0: not faulted) */
	uint32_t      vdev_err_run;     /* leaf: consecutive failed I/Os (atomic) */
	uint32_t      vdev_writing;     /* leaf: writes in progress (atomic) */
	bool          vdev_fault_req;   /* leaf: too many errors, fault me (atomic) */
	pthread_rwlock_t *vdev_tree_lock; /* root: the tree lock (vdev_tree.c) */
	vdev_t       *vdev_spares;      /* root: hot spares (a ROOT node whose
	                                   children are the spare leaves), or NULL */
	vdev_t       *vdev_l2cache;     /* root: cache devices (a ROOT node whose
	                                   children are the cache leaves), or NULL */
	vdev_alloc_bias_t vdev_alloc_bias; /* pool layer: top-level's allocation
	                                   class (normal, log, special) */
	bool          vdev_spare_auto;  /* pool layer: spare group put in for a
	                                   failed leaf (not by replace): the spare
	                                   goes back by itself once that leaf is
	                                   whole again */
};

/* Child c of vd (0 <= c < VDEV_NCHILD(vd)) and the number of children, inline for I/O paths. */
#define VDEV_CHILD(vd, c)   TARN_ARRAY_AT(&(vd)->vdev_child, vdev_t *, (c))
#define VDEV_NCHILD(vd)     ((int)tarn_array_len(&(vd)->vdev_child))

/* Ops tables, one per vdev type (VDEV_TYPE_FILE and _DISK share one). */
extern const vdev_ops_t vdev_root_ops;
extern const vdev_ops_t vdev_mirror_ops;
extern const vdev_ops_t vdev_raidz_ops;
extern const vdev_ops_t vdev_file_ops;
extern const vdev_ops_t vdev_missing_ops;
extern const vdev_ops_t vdev_replacing_ops;   /* vdev_mirror.c */
extern const vdev_ops_t vdev_spare_ops;       /* vdev_mirror.c */
extern const vdev_ops_t vdev_hole_ops;
const vdev_ops_t *vdev_ops_for(vdev_type_t type);

/* A vdev can serve I/O (HEALTHY or DEGRADED). */
static inline bool
vdev_usable(const vdev_t *vd)
{
	return (vd->vdev_state >= VDEV_STATE_DEGRADED);
}

/* A leaf whose device is open and usable. */
static inline bool
vdev_leaf_usable(const vdev_t *vd)
{
	return (vd->vdev_ops->vop_leaf && vd->vdev_fd >= 0 && vdev_usable(vd));
}

static inline uint64_t
vdev_sector(const vdev_t *vd)
{
	return (1ULL << vd->vdev_ashift);
}

/* ---- counters (vdev.c) ---- */

static inline void
vdev_stat_add(uint64_t *ctr, uint64_t n)
{
	__atomic_add_fetch(ctr, n, __ATOMIC_RELAXED);
}

/* Count an I/O of `size` bytes (rw: 0 read, 1 write). */
void vdev_stat_io(vdev_t *vd, int rw, uint64_t size);
/* Count a checksum error on vd unless VDEV_IO_PROBE is in flags. */
void vdev_stat_cksum(vdev_t *vd, int flags);
/* Count a READ (rw 0) or WRITE (rw 1) error unless VDEV_IO_PROBE. */
void vdev_stat_ioerr(vdev_t *vd, int rw, int flags);
/* Bytes rewritten by self-heal on leaf vd. */
void vdev_stat_repair(vdev_t *vd, vdev_io_t *io, uint64_t bytes);

/* ---- leaf I/O (vdev_file.c) ---- */

/*
 * Read or write `size` bytes at `off` of the leaf's allocatable space
 * (the physical offset is VDEV_LABEL_START_SIZE + off).  Counts the
 * operation, and a READ/WRITE error on EIO unless VDEV_IO_PROBE.
 * EINVAL when the range is outside the leaf, ENXIO when the leaf is not
 * open, EROFS when it is read-only and this is a write.
 */
int vdev_leaf_read(vdev_t *leaf, void *buf, uint64_t size, uint64_t off, int flags);
int vdev_leaf_write(vdev_t *leaf, const void *buf, uint64_t size, uint64_t off, int flags);
/*
 * Like vdev_leaf_write, then zero-fill up to the next sector boundary so
 * that a partial last sector never keeps stale bytes.
 */
int vdev_leaf_write_padded(vdev_t *leaf, const void *buf, uint64_t size,
    uint64_t off, int flags);
/* fdatasync the leaf (through its fault injector when attached). */
int vdev_leaf_flush(vdev_t *leaf);

/* The device I/O of a leaf, through its path-attached fault injector. */
int vdev_leaf_dev_io(vdev_t *leaf, int rw, void *buf, uint64_t size, uint64_t phys);

/* Plain pread/pwrite loops on a file descriptor: 0 or EIO. */
int vdev_fd_pread(int fd, void *buf, uint64_t size, uint64_t off);
int vdev_fd_pwrite(int fd, const void *buf, uint64_t size, uint64_t off);

/* ---- fault injector hooks (vdev_fault.c) ---- */

/* The injector registered for path (a reference is taken), or NULL. */
vdev_fault_t *vdev_fault_lookup(const char *path);
void vdev_fault_rele(vdev_fault_t *vf);
int vdev_fault_pread(vdev_fault_t *vf, int fd, void *buf, uint64_t size, uint64_t off);
int vdev_fault_pwrite(vdev_fault_t *vf, int fd, const void *buf, uint64_t size,
    uint64_t off);
int vdev_fault_flush(vdev_fault_t *vf, int fd);

/* ---- the leaf I/O queue (vdev_queue.c) ---- */

/*
 * A delayed leaf's queue: the one I/O it holds open for merging (the
 * theory is at the top of vdev_queue.c).  Lives in the leaf's injection
 * handle (vdev_inject_queue); vq_lock guards every field and is taken
 * after no other lock of this layer but the tree lock, and before
 * vi_lock.
 */
#define VDEV_QUEUE_AGG_LIMIT  (1 * MiB)   /* bytes of one issued I/O at most */
#define VDEV_QUEUE_SEGS       256         /* requests merged into one at most */
#define VDEV_QUEUE_GAP_LIMIT  (4 * KiB)   /* bytes between merged requests at most */

typedef struct vdev_queue_seg {
	uint64_t vqs_off;            /* physical offset */
	uint64_t vqs_size;
} vdev_queue_seg_t;

typedef struct vdev_queue {
	pthread_mutex_t  vq_lock;
	int              vq_rw;      /* the open I/O: 0 read, 1 write, -1 none */
	uint64_t         vq_off;     /* its physical range */
	uint64_t         vq_size;
	uint64_t         vq_start;   /* when the device starts it (ns) */
	uint64_t         vq_until;   /* when it completes (ns) */
	uint8_t         *vq_buf;     /* write data, vq_size bytes from vq_off; or NULL */
	uint32_t         vq_nseg;
	vdev_queue_seg_t *vq_seg;    /* the requests in it, [VDEV_QUEUE_SEGS] */
	int              vq_err;     /* a write that failed after its caller
	                                returned: the next flush says EIO */
	uint64_t         vq_issued[2]; /* device I/Os issued for queued requests */
} vdev_queue_t;

void vdev_queue_init(vdev_queue_t *vq);
void vdev_queue_fini(vdev_queue_t *vq);
/*
 * One leaf I/O of a leaf with run-time injections: met by its faults,
 * then merged into the open I/O or issued (physical offset phys).
 */
int vdev_queue_io(vdev_t *leaf, vdev_inject_t *vi, int rw, void *buf, uint64_t size,
    uint64_t phys);
/*
 * Write out the open I/O (before a flush, a close, or anything that must
 * see the device as the callers left it); returns and clears a failure
 * of a write whose caller has already returned (EIO), else 0.
 */
int vdev_queue_drain(vdev_t *leaf);

/* ---- run-time injection hooks (vdev_inject.c) ---- */

/*
 * Before a leaf I/O of `size` bytes (rw: 0 read, 1 write): ENXIO or EIO
 * when an injection fails it (then it is not done), else 0.  charge: a
 * delay is reserved for this thread (vdev_inject_settle), and svc (may
 * be NULL) gets when the device starts serving it and when it completes
 * (ns; {0, 0}: no delay);
 * not charge: the I/O rides on one already charged (vdev_queue.c), only
 * the fault kinds are met.  *damage_bit: the bit of the buffer a
 * successful read must flip, or UINT64_MAX.
 */
int vdev_inject_io_start(vdev_inject_t *vi, int rw, uint64_t size, bool charge,
    uint64_t *damage_bit, uint64_t svc[2]);
/* This thread's I/O completes no earlier than `until` (ns; settle waits). */
void vdev_inject_join(uint64_t until);
/* The leaf's I/O queue, which lives in its injection handle. */
vdev_queue_t *vdev_inject_queue(vdev_inject_t *vi);
/* ENXIO when a flush of the leaf must fail (the device is gone). */
int vdev_inject_flush_error(vdev_inject_t *vi);
/* The device is gone for good (NXIO at 100%): opening it fails. */
bool vdev_inject_gone(vdev_inject_t *vi);
void vdev_inject_free(vdev_inject_t *vi);

/* ---- per-thread scratch buffers (vdev.c) ---- */

/*
 * A buffer of at least `size` bytes owned by the calling thread, kept
 * between calls (contents undefined).  Each slot has one user at a time:
 * a function must not call another that uses the same slot while it
 * holds a pointer from it.
 */
enum vdev_scratch_slot {
	VDEV_SCRATCH_RAIDZ_COLS = 0,  /* raidz parity / column copies */
	VDEV_SCRATCH_RAIDZ_TAIL,      /* raidz lincomb tails */
	VDEV_SCRATCH_RAIDZ_OUT,       /* raidz reconstruction outputs */
	VDEV_SCRATCH_RAIDZ_TBLS,      /* raidz decode matrices and tables */
	VDEV_SCRATCH_MIRROR,          /* mirror scrub: other sides */
	VDEV_SCRATCH_GROUP,           /* replacing/spare child: scrub compare */
	VDEV_SCRATCH_SLOTS
};
void *vdev_scratch(enum vdev_scratch_slot slot, size_t size);

/* ---- labels (vdev_label.c, vdev_config.c) ---- */

/* First 8 bytes of an encoded config ("TarnVCFG"; docs/FORMAT.md). */
#define VDEV_CONFIG_MAGIC 0x5461726e56434647ULL

/* Physical offset of label l (0..3) on a device of psize bytes. */
static inline uint64_t
vdev_label_offset(uint64_t psize, int l)
{
	uint64_t end = P2ALIGN(psize, VDEV_LABEL_SIZE);
	return (l < 2 ? (uint64_t)l * VDEV_LABEL_SIZE :
	    end - (uint64_t)(VDEV_LABELS - l) * VDEV_LABEL_SIZE);
}

/* Uberblock slot size for leaves under a top-level vdev of this ashift. */
static inline uint64_t
vdev_ub_slot_size(uint64_t ashift)
{
	if (ashift < 10)
		return (VDEV_UB_SLOT_MIN);
	if (ashift > 16)
		ashift = 16;
	return (1ULL << ashift);
}

/* Smallest device the layout accepts: labels plus one 8 KiB sector. */
#define VDEV_LEAF_MIN_PSIZE \
	(VDEV_LABEL_START_SIZE + VDEV_LABEL_END_SIZE + 8 * KiB)

/* Open / close a leaf (vdev_file.c); used by vdev_open and label code. */
int vdev_file_open(vdev_t *vd);
void vdev_file_close(vdev_t *vd);

/* Recompute the guid sums of vd and its ancestors. */
void vdev_guid_sum_update(vdev_t *vd);

/*
 * Run every child's vop_flush in parallel; errs[c] gets each result
 * (ENXIO for a child that cannot serve I/O, without flushing it).
 */
void vdev_children_flush(vdev_t *vd, int *errs);

/*
 * Group sizes (vdev_mirror.c, vdev_raidz.c share it): set the group's
 * ashift from the preset or its children, close children too small for
 * a preset top size (CANT_OPEN), and return the smallest usable child
 * asize rounded down to the group's sector (0 when none is usable).
 */
uint64_t vdev_group_child_asize(vdev_t *vd, uint64_t min_child_asize);

/* ---- children of mirrors and raidz groups (vdev_dtl.c) ---- */

/*
 * A child of a mirror or raidz is a leaf, or a replacing/spare group of
 * leaves.  Writable: some leaf under it is open.  Readable for a block
 * born in txg: some open leaf under it does not miss txg (DTL).
 */
bool vdev_child_writable(const vdev_t *cvd);
bool vdev_child_readable(const vdev_t *cvd, uint64_t txg);
/*
 * Read size bytes at off (leaf allocatable space) from the child: a
 * leaf, or the first leaf of a group that holds the block (then, when
 * lacking_ok, the ones that miss it, with their errors not counted).
 * *leafp: the leaf that answered (or was tried last).  0, EIO, ENXIO.
 */
int vdev_child_read(vdev_t *cvd, const vdev_io_t *pio, void *buf, uint64_t size,
    uint64_t off, int flags, bool lacking_ok, vdev_t **leafp);
/*
 * Write (zero-padded to the sector) to every open leaf under the child;
 * a leaf that is not open or fails misses pio->vio_txg (marked in its
 * DTL unless flags has VDEV_IO_REPAIR).  0 when one leaf took it.
 */
int vdev_child_write(vdev_t *cvd, const vdev_io_t *pio, const void *buf,
    uint64_t size, uint64_t off, int flags);
/*
 * The child's range is known to hold `want`.  On a scrub (VDEV_IO_SCRUB
 * without NOHEAL): write it into every open leaf under the child that
 * misses the block (resilver), and for groups read and compare every
 * other leaf than `served`, charging and rewriting those that differ.
 * Repairs are counted in pio->vio_repaired and on the leaves.
 */
void vdev_child_settle(vdev_t *cvd, vdev_io_t *pio, const void *want, uint64_t size,
    uint64_t off, const vdev_t *served);

/*
 * The order in which a write visits n children.  The worker threads
 * write neighbouring blocks at the same time, and a leaf file takes one
 * writer at a time (the kernel's inode lock: the other thread spins, then
 * sleeps), so a write takes first the children no other thread is
 * writing to (a leaf's vdev_writing; a group child counts as idle),
 * starting at one that depends on the block's 128 KiB slot, then the
 * others.  Any order is correct.  order[] gets the n child indexes.
 */
static inline void
vdev_write_order(vdev_t *const *child, int n, const vdev_io_t *io, uint8_t *order)
{
	int first = n > 1 ? (int)((io->vio_offset >> 17) % (uint64_t)n) : 0, k = 0, nbusy = 0;
	uint8_t busy[VDEV_MAX_CHILDREN];
	for (int i = 0; i < n; i++) {
		int c = (first + i) % n;
		/* read once: the count changes under us */
		if (__atomic_load_n(&child[c]->vdev_writing, __ATOMIC_RELAXED) != 0)
			busy[nbusy++] = (uint8_t)c;
		else
			order[k++] = (uint8_t)c;
	}
	memcpy(order + k, busy, (size_t)nbusy);
}

#endif
