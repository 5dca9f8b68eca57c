/*
 * format.h — on-disk types shared by every layer: block pointers, DVAs,
 * the uberblock, object and compression type numbers, format version and
 * feature flags.  docs/FORMAT.md describes each byte; keep them in step.
 * All integers on disk are little-endian.
 */
#ifndef TARN_FORMAT_H
#define TARN_FORMAT_H

#include "cksum.h"

/*
 * Format version (independent of the software version).  Version 1 is the
 * first format; version 2 adds feature flags, each enabled per pool and
 * recorded in the labels and uberblocks.  `tarn pool upgrade` moves a
 * pool to the newest version with every feature this build knows.
 */
#define SPA_VERSION_1        1ULL
#define SPA_VERSION_2        2ULL   /* feature flags */
#define SPA_VERSION          SPA_VERSION_2
/* Feature flags (bits of ub_features / vlc_features). */
#define SPA_FEATURE_NONE     0ULL
#define SPA_FEATURE_HISTORY  (1ULL << 0)  /* pool command history in the MOS */
#define SPA_FEATURE_INTENT_LOG (1ULL << 1) /* per-dataset intent log (lib/zil) */
#define SPA_FEATURE_LOG_XATTR_PUNCH (1ULL << 2) /* xattr changes and hole punches logged */
/*
 * Space counted in data bytes (RAID-Z's parity and padding deflated
 * away).  Set only when a pool is created: a pool's existing counts stay
 * in the unit they were written in, so an upgrade never turns it on.
 */
#define SPA_FEATURE_SPACE_DEFLATE (1ULL << 3)
/* Small xattrs kept in the inode (docs/FORMAT.md "Extended attributes"). */
#define SPA_FEATURE_XATTR_INLINE (1ULL << 4)
/*
 * Each object set counts its blocks' logical and stored bytes (os_lsize,
 * os_psize: compressratio, logicalused), metadata at its stored size as
 * zfs counts it.  Set only when a pool is created: counts must start with
 * the first block, so an upgrade never turns it on.
 */
#define SPA_FEATURE_LOGICAL_SPACE (1ULL << 6)
/*
 * Retired: the first logical_space (pools made 2026-11-30 .. 12-02)
 * counted metadata at its logical size, so an empty file system showed a
 * compressratio of 40x.  Such pools import; their counts are not shown.
 */
#define SPA_FEATURE_LOGICAL_SPACE_V0 (1ULL << 5)
/* Blocks may be stored with bp_comp 6, zle (docs/FORMAT.md "Compressed blocks"). */
#define SPA_FEATURE_ZLE_COMPRESS (1ULL << 7)
/*
 * Snapshots, clones, holds and bookmarks (lib/dsl): an object set may
 * share blocks with snapshots, which software without this feature would
 * free.  An upgrade turns it on (nothing to convert).
 */
#define SPA_FEATURE_SNAPSHOTS (1ULL << 8)
/*
 * Allocation classes and cache devices: top-level vdevs may be log or
 * special, and the root may have cache devices (label config flags,
 * docs/FORMAT.md "Label config").  An upgrade turns it on (nothing to
 * convert); software without it cannot read such a config.
 */
#define SPA_FEATURE_ALLOCATION_CLASSES (1ULL << 9)
/* What an upgrade enables. */
#define SPA_FEATURES_ALL     (SPA_FEATURE_HISTORY | SPA_FEATURE_INTENT_LOG | \
                              SPA_FEATURE_LOG_XATTR_PUNCH | SPA_FEATURE_XATTR_INLINE | \
                              SPA_FEATURE_ZLE_COMPRESS | SPA_FEATURE_SNAPSHOTS | \
                              SPA_FEATURE_ALLOCATION_CLASSES)
/* What a new pool gets. */
#define SPA_FEATURES_NEW     (SPA_FEATURES_ALL | SPA_FEATURE_SPACE_DEFLATE | \
                              SPA_FEATURE_LOGICAL_SPACE)
/* Every bit this build understands (import refuses others). */
#define SPA_FEATURES_KNOWN   (SPA_FEATURES_NEW | SPA_FEATURE_LOGICAL_SPACE_V0)

#define SPA_MINBLOCKSHIFT    9
#define SPA_MINBLOCKSIZE     (1ULL << SPA_MINBLOCKSHIFT)
#define SPA_MAXBLOCKSHIFT    20
#define SPA_MAXBLOCKSIZE     (1ULL << SPA_MAXBLOCKSHIFT)
#define SPA_OLD_MAXBLOCKSIZE (128 * KiB)   /* default recordsize */
#define SPA_DVAS_PER_BP      3
#define SPA_MINDEVSIZE       (64 * MiB)

/*
 * Data virtual address: where one copy of a block lives.  dva_offset is a
 * byte offset in the top-level vdev's allocatable space (leaves add the
 * front label reserve themselves); dva_asize counts 512-byte units and
 * includes RAID-Z parity and padding.
 */
typedef struct dva {
	uint32_t dva_vdev;     /* top-level vdev id */
	uint32_t dva_asize;    /* allocated size in 512-byte units */
	uint64_t dva_offset;   /* bytes */
} dva_t;

/* bp_flags */
#define BP_F_DEDUP      0x01  /* counted in the dedup table */
#define BP_F_ENCRYPTED  0x02  /* dva[2] holds IV+salt, cksum words 2..3 the MAC */
#define BP_F_EMBEDDED   0x04  /* reserved: payload stored in the bp itself */
#define BP_F_GANG       0x08  /* reserved: gang block */

/* A block pointer: 128 bytes. */
typedef struct blkptr {
	dva_t       bp_dva[SPA_DVAS_PER_BP]; /* 48 */
	uint32_t    bp_lsize;      /* logical (uncompressed) size, bytes */
	uint32_t    bp_psize;      /* physical (stored) size, bytes */
	uint8_t     bp_cksum;      /* enum zio_checksum */
	uint8_t     bp_comp;       /* enum zio_compress */
	uint8_t     bp_type;       /* dmu_object_type_t of the content */
	uint8_t     bp_level;      /* 0 = data, >0 = indirect */
	uint8_t     bp_ndvas;      /* number of valid DVAs */
	uint8_t     bp_flags;      /* BP_F_* */
	uint16_t    bp_pad;
	uint64_t    bp_birth;      /* logical birth txg; 0 means a hole */
	uint64_t    bp_phys_birth; /* txg in which the DVAs were written */
	uint64_t    bp_fill;       /* non-hole level-0 blocks beneath (1 for L0) */
	zio_cksum_t bp_cksum_val;  /* checksum of the bp_psize stored bytes */
	uint64_t    bp_reserved;
} blkptr_t;
_Static_assert(sizeof (blkptr_t) == 128, "blkptr_t must be 128 bytes");

#define BP_IS_HOLE(bp)   ((bp)->bp_birth == 0)
#define BP_ZERO(bp)      memset((bp), 0, sizeof (blkptr_t))
#define DVA_IS_VALID(d)  ((d)->dva_asize != 0)
#define DVA_ASIZE(d)     ((uint64_t)(d)->dva_asize << SPA_MINBLOCKSHIFT)

static inline bool
bp_equal(const blkptr_t *a, const blkptr_t *b)
{
	return (memcmp(a, b, sizeof (*a)) == 0);
}

/* Compression algorithms (block pointer and property values). */
enum zio_compress {
	ZIO_COMPRESS_INHERIT = 0,  /* property only */
	ZIO_COMPRESS_ON = 1,       /* property only */
	ZIO_COMPRESS_OFF = 2,
	ZIO_COMPRESS_LZ4 = 3,
	ZIO_COMPRESS_ZSTD = 4,
	ZIO_COMPRESS_GZIP = 5,
	ZIO_COMPRESS_ZLE = 6,      /* feature zle_compress */
	ZIO_COMPRESS_FUNCTIONS
};

/* Object types. */
typedef enum dmu_object_type {
	DMU_OT_NONE = 0,
	DMU_OT_OBJECT_DIRECTORY,   /* MOS object 1: a ZAP naming pool objects */
	DMU_OT_OBJECT_ARRAY,       /* array of uint64 object numbers */
	DMU_OT_SPACE_MAP,          /* metaslab space map */
	DMU_OT_DNODE,              /* blocks of dnodes (meta-dnode content) */
	DMU_OT_OBJSET,             /* objset_phys blocks */
	DMU_OT_ZAP,                /* generic key->value object */
	DMU_OT_UINT8,              /* plain bytes */
	DMU_OT_UINT64,             /* array of uint64 */
	DMU_OT_PACKED_CONFIG,      /* pool configuration */
	DMU_OT_DEFER_FREE,         /* deferred-free log */
	DMU_OT_DSL_DIR,
	DMU_OT_DSL_DATASET,
	DMU_OT_PLAIN_FILE,
	DMU_OT_DIRECTORY,
	DMU_OT_TEST,               /* objects made by tarn-stress and tests */
	DMU_OT_INTENT_LOG,         /* intent-log blocks (never in a dnode tree) */
	DMU_OT_DSL_SNAP,           /* a snapshot: ZAP of its user properties + dsl_snap_phys_t */
	DMU_OT_DEADLIST,           /* a dead list: sorted (mintxg, bpobj) pairs */
	DMU_OT_BPOBJ,              /* an array of block pointers (one dead-list bucket) */
	DMU_OT_NUMTYPES
} dmu_object_type_t;

/*
 * Uberblock: the root of one committed transaction group.  One is
 * written into a slot of every label's ring on every leaf at the end of
 * each txg.  ub_cksum covers the whole slot-sized struct with the field
 * itself zeroed (XXH3-128).
 */
#define UBERBLOCK_MAGIC 0x5461726e55424c4bULL /* "TarnUBLK" */
typedef struct uberblock {
	uint64_t    ub_magic;
	uint64_t    ub_version;     /* SPA_VERSION_* */
	uint64_t    ub_txg;
	uint64_t    ub_guid_sum;    /* sum of all vdev GUIDs in the pool */
	uint64_t    ub_timestamp;   /* seconds since the epoch */
	uint64_t    ub_pool_guid;
	uint64_t    ub_features;    /* active feature flags */
	uint64_t    ub_pad[9];
	blkptr_t    ub_rootbp;      /* the MOS objset_phys */
	zio_cksum_t ub_cksum;
	uint64_t    ub_reserved[12];
} uberblock_t;
_Static_assert(sizeof (uberblock_t) == 384, "uberblock_t is 384 bytes");

/*
 * Intent log (lib/zil; docs/FORMAT.md "Intent log").  The header lives in
 * the objset_phys of each file system; it names the first block of a
 * chain of log blocks.  A log block starts with zil_block_t and carries
 * its own checksum; the bp naming it (the header's zh_log, or the
 * previous block's zlb_next) is allocated before the block is written:
 * its birth is the txg of the allocation and its bp_cksum_val words 0
 * and 1 hold the chain GUID and the block's sequence number, which the
 * block must repeat (a stale block at that address does not).
 */
typedef struct zil_header {
	blkptr_t zh_log;            /* first block of the chain; hole: no log */
	uint64_t zh_claim_txg;      /* first txg after the import that claimed
	                               the chain (0: not claimed); records of
	                               txgs >= this are replayed at mount */
	uint64_t zh_claim_seq;      /* claimed: seq of the first block past
	                               the claimed part of the chain */
	uint64_t zh_flags;          /* ZH_F_* */
	uint64_t zh_replay_pos;     /* claimed: records up to this position are
	                               replayed and committed (block seq << 24 |
	                               record index + 1; 0: none) */
} zil_header_t;
#define ZH_F_END_ALLOCATED 0x1  /* claimed: the block at zh_claim_seq is
	                               allocated (unwritten) and is ours to free */
_Static_assert(sizeof (zil_header_t) == 160, "zil_header_t is 160 bytes");

#define ZIL_BLOCK_MAGIC 0x5461726e5a4c4f47ULL /* "TarnZLOG" */
#define ZIL_BLOCK_HDR   256
typedef struct zil_block {
	uint64_t    zlb_magic;
	uint64_t    zlb_guid;       /* chain GUID */
	uint64_t    zlb_seq;        /* block number in the chain */
	uint32_t    zlb_used;       /* bytes used, this header included */
	uint32_t    zlb_nrec;       /* records after the header */
	zio_cksum_t zlb_cksum;      /* XXH3-128 of zlb_used bytes, this field zero */
	blkptr_t    zlb_next;       /* the next block (allocated, maybe unwritten) */
	uint64_t    zlb_pad[8];
} zil_block_t;
_Static_assert(sizeof (zil_block_t) == ZIL_BLOCK_HDR, "zil_block_t is 256 bytes");

/* A log record; lr_reclen covers the header and the data, 8-byte aligned. */
#define ZIL_LR_WRITE 1              /* lr_len bytes of data at lr_off of lr_obj */
#define ZIL_LR_TIMES 2              /* lr_obj's atime, mtime, ctime: 6 x uint64
                                       (s, ns) as data, lr_len 48, lr_off 0 */
/* Namespace and attribute records: their data is the file system's
 * (lib/posix/posix_zil.c; docs/FORMAT.md "Intent log"). */
#define ZIL_LR_CREATE  3
#define ZIL_LR_REMOVE  4
#define ZIL_LR_LINK    5
#define ZIL_LR_RENAME  6
#define ZIL_LR_SETATTR 7
#define ZIL_LR_XATTR   8            /* feature log_xattr_punch: set or remove an xattr */
#define ZIL_LR_PUNCH   9            /* feature log_xattr_punch: free a range of a file */
#define ZIL_LR_MAX     9
#define ZIL_LR_MAXPAYLOAD (16 * 1024)
typedef struct zil_lr {
	uint32_t lr_type;
	uint32_t lr_reclen;
	uint64_t lr_txg;            /* txg of the change */
	uint64_t lr_obj;
	uint64_t lr_off;
	uint64_t lr_len;
	uint64_t lr_mtime[2];       /* file's mtime after the change (s, ns) */
} zil_lr_t;
_Static_assert(sizeof (zil_lr_t) == 56, "zil_lr_t is 56 bytes");

/* Seal or check an uberblock's self-checksum. */
void uberblock_seal(uberblock_t *ub);
bool uberblock_verify(const uberblock_t *ub);

#endif
