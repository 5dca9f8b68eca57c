/*
 * zap_impl.h — inside the ZAP layer: the on-disk structures of both forms
 * (micro block, fat header, pointer table, leaf), the in-memory leaf
 * operations (zap_leaf.c, pure functions on a block buffer), and the
 * per-object context shared by zap.c, zap_micro.c and zap_fat.c.
 * docs/FORMAT.md "ZAP objects" describes every byte; the theory is at the
 * top of zap.c.  Only the layer and its own tests include this header.
 */
#ifndef TARN_ZAP_IMPL_H
#define TARN_ZAP_IMPL_H

#include "zap.h"
#include "tarn_array.h"

/*
 * Keys.  An entry's key is its 48-bit name hash and a 15-bit collision
 * differentiator (cd): key = hash48 << 15 | cd, so keys are < 2^63 and
 * the key order is the hash order.  (hash48, cd) is unique in an object
 * and never changes while the entry lives: cursors walk in key order and
 * their cookie is a key.
 */
#define ZAP_HASHBITS	48
#define ZAP_CD_BITS	15
#define ZAP_CD_MAX	((1U << ZAP_CD_BITS) - 2) /* 32766; 32767 unused */
#define ZAP_KEY(h, cd)	(((uint64_t)(h) << ZAP_CD_BITS) | (uint64_t)(cd))
#define ZAP_KEY_HASH(k) ((k) >> ZAP_CD_BITS)
#define ZAP_KEY_CD(k)	((uint32_t)((k) & ((1U << ZAP_CD_BITS) - 1)))
#define ZAP_KEY_END	(1ULL << 63) /* past every key */

/* Magic numbers: the first 8 bytes of each block kind ("TarnZAP?"). */
#define ZAP_MICRO_MAGIC 0x4d50415a6e726154ULL /* "TarnZAPM" */
#define ZAP_FAT_MAGIC	0x4650415a6e726154ULL /* "TarnZAPF" */
#define ZAP_LEAF_MAGIC	0x4c50415a6e726154ULL /* "TarnZAPL" */
/* A pointer-table entry is ZAP_PTR_TAG << 48 | leaf block id. */
#define ZAP_PTR_TAG    0x7a70ULL /* "pz" */
#define ZAP_PTR(blk)   ((ZAP_PTR_TAG << 48) | (uint64_t)(blk))
#define ZAP_PTR_OK(p)  (((p) >> 48) == ZAP_PTR_TAG && ((p) & ((1ULL << 48) - 1)) != 0)
#define ZAP_PTR_BLK(p) ((p) & ((1ULL << 48) - 1))

/* ---- micro form: one block, sorted fixed-size entries ---- */

#define ZAP_MICRO_MIN_BLKSZ 512
#define ZAP_MICRO_MAX_BLKSZ (16 * 1024)
#define ZAP_MICRO_NAMELEN   48 /* bytes including the NUL: names <= 47 */
#define ZAP_MICRO_ENTSZ	    64

typedef struct zap_micro_phys {
	uint64_t zm_magic;    /* ZAP_MICRO_MAGIC */
	uint64_t zm_salt;     /* hash seed of this object */
	uint32_t zm_nentries; /* entries in use, at slots 0..n-1 */
	uint32_t zm_blksz;    /* this block's size */
	uint64_t zm_pad[5];
} zap_micro_phys_t;
_Static_assert(sizeof(zap_micro_phys_t) == 64, "micro header is 64 bytes");

typedef struct zap_micro_ent {
	uint64_t me_key; /* ZAP_KEY(hash48, cd) */
	uint64_t me_value;
	char me_name[ZAP_MICRO_NAMELEN]; /* NUL-terminated, zero-padded */
} zap_micro_ent_t;
_Static_assert(sizeof(zap_micro_ent_t) == ZAP_MICRO_ENTSZ, "micro entry is 64 bytes");

#define ZAP_MICRO_CAP(blksz) ((blksz) / ZAP_MICRO_ENTSZ - 1)

/* ---- fat form: header block 0, pointer table, leaves ---- */

#define ZAP_FAT_BLKSHIFT  14
#define ZAP_FAT_BLKSZ	  (1U << ZAP_FAT_BLKSHIFT) /* 16 KiB */
#define ZAP_EMBED_OFF	  (ZAP_FAT_BLKSZ / 2)	   /* table inside block 0 */
#define ZAP_EMBED_SHIFT	  10			   /* 1024 pointers */
#define ZAP_TBL_SHIFT_MAX 30			   /* refuse to grow past */
_Static_assert(ZAP_MICRO_MAX_BLKSZ <= ZAP_FAT_BLKSZ, "an upgrade never shrinks block 0");

typedef struct zap_fat_phys {
	uint64_t zf_magic; /* ZAP_FAT_MAGIC */
	uint64_t zf_salt;
	uint64_t zf_nentries;
	uint64_t zf_nleaves;
	uint64_t zf_next_blk;  /* first never-used block id */
	uint32_t zf_blkshift;  /* ZAP_FAT_BLKSHIFT */
	uint32_t zf_tbl_shift; /* the pointer table has 2^shift entries */
	uint64_t zf_tbl_blk;   /* 0: embedded at ZAP_EMBED_OFF of block 0 */
	uint64_t zf_tbl_nblks; /* blocks of an external table */
	uint64_t zf_pad[8];
} zap_fat_phys_t;
_Static_assert(sizeof(zap_fat_phys_t) == 128, "fat header is 128 bytes");

/*
 * Leaf: a 64-byte header, then a slot array of uint16 record offsets
 * sorted by key, growing up; records are packed at the end of the block,
 * growing down from the end towards zl_heap.  A record is
 *   u64 key, u8 namelen, u8 intsize, u16 num, name[namelen], value[]
 * (the name without its NUL; values little-endian).
 */
#define ZAP_LEAF_HDRSZ 64
#define ZAP_REC_HDRSZ  12

typedef struct zap_leaf_phys {
	uint64_t zl_magic;	/* ZAP_LEAF_MAGIC */
	uint64_t zl_salt;	/* copy of the object's salt (verification) */
	uint64_t zl_prefix;	/* every key's hash48 starts with these bits */
	uint16_t zl_prefix_len; /* 0..48 */
	uint16_t zl_nentries;
	uint16_t zl_heap;     /* offset of the lowest record byte */
	uint16_t zl_dead;     /* bytes in [zl_heap, end) of no live record */
	uint32_t zl_blkshift; /* ZAP_FAT_BLKSHIFT */
	uint32_t zl_pad0;
	uint64_t zl_pad[3];
} zap_leaf_phys_t;
_Static_assert(sizeof(zap_leaf_phys_t) == ZAP_LEAF_HDRSZ, "leaf header is 64 bytes");

/*
 * An in-memory leaf image being read or changed, with what to write back;
 * or, for a lookup, a view of the cached leaf itself (l_view.dv_db set:
 * l_buf must not be written).
 */
#define ZAP_LEAF_NDIRTY 3
typedef struct zap_leaf {
	uint8_t *l_buf; /* ZAP_FAT_BLKSZ bytes */
	dmu_view_t l_view;
	uint32_t l_size;
	uint64_t l_blk;
	bool l_all_dirty;
	int l_ndirty;
	uint32_t l_dirty[ZAP_LEAF_NDIRTY][2]; /* [off, end) ranges */
} zap_leaf_t;

/* A record decoded (pointers into the leaf buffer). */
typedef struct zap_rec {
	uint64_t r_key;
	uint32_t r_off; /* record offset in the leaf */
	uint32_t r_len; /* record bytes */
	int r_namelen;
	int r_intsize;
	uint32_t r_num;
	const char *r_name; /* not NUL-terminated */
	const uint8_t *r_value;
} zap_rec_t;

static inline zap_leaf_phys_t *
zap_leaf_phys(const zap_leaf_t *l)
{
	return ((zap_leaf_phys_t *)l->l_buf);
}

static inline uint32_t
zap_rec_len(int namelen, int intsize, uint64_t num)
{
	return ((uint32_t)(ZAP_REC_HDRSZ + namelen + (uint64_t)intsize * num));
}

/* zap_leaf.c: pure operations on a leaf image; all bounds-checked. */
void zap_leaf_init(zap_leaf_t *l, uint64_t salt, uint64_t prefix, int prefix_len);
/* Cheap O(1) checks of a leaf just read from disk: EINVAL when damaged. */
int zap_leaf_check_hdr(const zap_leaf_t *l);
/* Decode slot i: EINVAL when its record lies outside the block. */
int zap_leaf_rec(const zap_leaf_t *l, uint32_t i, zap_rec_t *r);
/* First slot whose key is >= key (n when none); EINVAL on damage. */
int zap_leaf_search(const zap_leaf_t *l, uint64_t key, uint32_t *idxp);
/* Find name (hash48 h): slot in *idxp; ENOENT, or EINVAL on damage. */
int zap_leaf_find(const zap_leaf_t *l, uint64_t h, const char *name, int namelen, uint32_t *idxp);
/* Lowest unused cd for hash48 h: EOVERFLOW when exhausted. */
int zap_leaf_next_cd(const zap_leaf_t *l, uint64_t h, uint32_t *cdp);
/*
 * Insert a record with key (absent from the leaf): ENOSPC when it does
 * not fit even after compaction (the leaf is then unchanged).
 */
int zap_leaf_insert(zap_leaf_t *l, uint64_t key, const char *name, int namelen, int intsize,
    uint64_t num, const void *val);
/* Replace the value of slot i: ENOSPC when it does not fit (unchanged). */
int zap_leaf_replace(zap_leaf_t *l, uint32_t i, int intsize, uint64_t num, const void *val);
/* Remove slot i. */
int zap_leaf_remove(zap_leaf_t *l, uint32_t i);
/*
 * Split l (prefix p, length n) by the next hash bit: l keeps the keys
 * whose bit is 0 (prefix 2p), `hi` (initialised here, block id set by the
 * caller) gets the others (prefix 2p+1).
 */
int zap_leaf_split(zap_leaf_t *l, zap_leaf_t *hi);
/* Full check of a leaf image (the validator). */
int zap_leaf_validate(const void *buf, size_t size);
void zap_leaf_mark_dirty(zap_leaf_t *l, uint32_t off, uint32_t end);

/* Hash of a name under an object's salt, 48 bits. */
uint64_t zap_hash(uint64_t salt, const char *name, size_t len);

/* ---- the per-operation object context (zap.c) ---- */

typedef struct zap_obj {
	objset_t *zo_os;
	uint64_t zo_obj;
	dmu_tx_t *zo_tx; /* NULL for readers */
	bool zo_fat;
	union {
		zap_micro_phys_t zo_micro;
		zap_fat_phys_t zo_fatp;
	};
	uint8_t zo_hdrbuf[128]; /* first 128 bytes of block 0 as read */
} zap_obj_t;

/* What an add/update wants. */
typedef struct zap_req {
	const char *zr_name;
	int zr_namelen;
	uint64_t zr_hash; /* hash48 */
	int zr_intsize;
	uint64_t zr_num;
	const void *zr_val;
	bool zr_replace; /* update: replace if present */
	bool zr_add;	 /* add if absent (false: only replace) */
	uint64_t zr_key; /* fixed key (upgrade), else ZAP_KEY_END */
} zap_req_t;

/* One entry found (for lookups and cursors). */
typedef struct zap_found {
	uint64_t fd_key;
	int fd_intsize;
	uint64_t fd_num;
} zap_found_t;

/* A batch of entries of one key range, for cursors. */
typedef struct zap_batch_ent {
	uint64_t be_key;
	uint64_t be_first;
	uint64_t be_num;
	uint32_t be_nameoff;
	uint8_t be_intsize;
	uint8_t be_namelen;
} zap_batch_ent_t;

typedef struct zap_batch {
	uint64_t zb_lo, zb_hi; /* key range covered: [lo, hi) */
	tarn_array_t zb_ents;  /* zap_batch_ent_t, by key */
	tarn_array_t zb_names; /* char: the names, unterminated, at be_nameoff */
} zap_batch_t;
void zap_batch_init(zap_batch_t *b);
void zap_batch_fini(zap_batch_t *b);
void zap_batch_reset(zap_batch_t *b, uint64_t lo, uint64_t hi);
void zap_batch_add(zap_batch_t *b, uint64_t key, const char *name, int namelen, int intsize,
    uint64_t num, uint64_t first);

/* zap.c: read bytes of a ZAP object (no read-ahead, no stream) */
int zap_read(objset_t *os, uint64_t obj, uint64_t off, uint64_t len, void *buf);

/* zap_micro.c */
int zap_micro_validate(const void *buf, size_t size);
int zap_micro_create(objset_t *os, uint64_t obj, uint64_t salt, dmu_tx_t *tx);
int zap_micro_put(zap_obj_t *zo, const zap_req_t *rq, bool *upgradep);
int zap_micro_lookup(zap_obj_t *zo, uint64_t h, const char *name, zap_found_t *f, int intsize,
    uint64_t num, void *val);
int zap_micro_remove(zap_obj_t *zo, uint64_t h, const char *name);
int zap_micro_batch(zap_obj_t *zo, uint64_t key, zap_batch_t *b);
int zap_micro_upgrade(zap_obj_t *zo);

/* zap_fat.c */
int zap_fat_validate_hdr(const void *buf, size_t size);
int zap_fat_validate_tbl(const void *buf, size_t size);
int zap_fat_check_hdr(const zap_fat_phys_t *zf);
int zap_fat_create(zap_obj_t *zo, uint64_t salt);
int zap_fat_put(zap_obj_t *zo, const zap_req_t *rq);
int zap_fat_lookup(zap_obj_t *zo, uint64_t h, const char *name, zap_found_t *f, int intsize,
    uint64_t num, void *val);
int zap_fat_remove(zap_obj_t *zo, uint64_t h, const char *name);
int zap_fat_batch(zap_obj_t *zo, uint64_t key, zap_batch_t *b);

#endif
