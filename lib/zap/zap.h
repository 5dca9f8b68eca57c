/*
 * zap.h — key→value objects: directories, property lists, name tables.
 * A name (up to ZAP_MAXNAMELEN-1 bytes, NUL-terminated) maps to an array
 * of 1- or 8-byte integers (ZAP_MAXVALUELEN bytes at most).  Small ZAPs
 * live in one block (micro form); large ones use extendible hashing over
 * leaf blocks (fat form) and stay O(1) block reads per operation at
 * millions of entries.  Operations on one ZAP object are serialized
 * internally; the caller supplies the transaction.  Theory and on-disk
 * layout: the comment at the top of zap.c and docs/FORMAT.md.
 */
#ifndef TARN_ZAP_H
#define TARN_ZAP_H

#include "dmu.h"

#define ZAP_MAXNAMELEN	256	  /* including the NUL */
#define ZAP_MAXVALUELEN (8 * KiB) /* bytes of value */

/* Create an empty ZAP object of `type` (DMU_OT_ZAP, DMU_OT_DIRECTORY...). */
int zap_create(objset_t *os, dmu_object_type_t type, dmu_tx_t *tx, uint64_t *objp);
int zap_create_claim(objset_t *os, uint64_t obj, dmu_object_type_t type, dmu_tx_t *tx);
/* The same with a bonus buffer (e.g. a directory's inode attributes). */
int zap_create_bonus(objset_t *os, dmu_object_type_t type, dmu_object_type_t bonustype,
    uint32_t bonuslen, dmu_tx_t *tx, uint64_t *objp);
int zap_create_claim_bonus(objset_t *os, uint64_t obj, dmu_object_type_t type,
    dmu_object_type_t bonustype, uint32_t bonuslen, dmu_tx_t *tx);
int zap_destroy(objset_t *os, uint64_t zapobj, dmu_tx_t *tx);

/*
 * Declare in tx (before dmu_tx_assign) that it will make nops changes
 * (adds, updates, removes) to zapobj (0: an object created in this tx):
 * a space estimate (dmu_tx_hold_space) bounded by the object's size.
 */
void zap_tx_hold(dmu_tx_t *tx, objset_t *os, uint64_t zapobj, uint64_t nops);

/*
 * Errors common to every function: EINVAL for an empty name, a bad
 * intsize (not 1 or 8), num == 0, or a damaged object (the same for a
 * block that is not a ZAP block); ENAMETOOLONG for a name of
 * ZAP_MAXNAMELEN bytes or more; E2BIG for a value over ZAP_MAXVALUELEN
 * bytes; ENOSPC when a leaf cannot be split any further (pathological
 * hash collisions); EOVERFLOW on adding a name whose 48-bit hash 32767
 * others already share; and whatever the DMU returns (EIO, ECKSUM, ENOENT
 * for a missing object).
 */

/* EEXIST if present.  intsize is 1 or 8; num values. */
int zap_add(objset_t *os, uint64_t zapobj, const char *name, int intsize, uint64_t num,
    const void *val, dmu_tx_t *tx);
/* Add or replace. */
int zap_update(objset_t *os, uint64_t zapobj, const char *name, int intsize, uint64_t num,
    const void *val, dmu_tx_t *tx);
/*
 * ENOENT if absent; EINVAL if intsize differs; EOVERFLOW if num is less
 * than the stored count (nothing copied).  When num is larger, only the
 * stored count is copied.
 */
int zap_lookup(
    objset_t *os, uint64_t zapobj, const char *name, int intsize, uint64_t num, void *val);
int zap_length(objset_t *os, uint64_t zapobj, const char *name, int *intsize, uint64_t *num);
int zap_remove(objset_t *os, uint64_t zapobj, const char *name, dmu_tx_t *tx);
int zap_count(objset_t *os, uint64_t zapobj, uint64_t *count);

/* One uint64 value: the common case. */
int zap_add_int(objset_t *os, uint64_t zapobj, const char *name, uint64_t value, dmu_tx_t *tx);
int zap_update_int(objset_t *os, uint64_t zapobj, const char *name, uint64_t value, dmu_tx_t *tx);
int zap_lookup_int(objset_t *os, uint64_t zapobj, const char *name, uint64_t *value);
/*
 * The name of an entry whose first 8-byte value v has (v & mask) == value
 * (mask 0: all bits), found by a walk of every entry; ENOENT when none.
 * For reverse lookups that are rare (a path or a dataset name for a
 * report).
 */
int zap_value_search(objset_t *os, uint64_t zapobj, uint64_t value, uint64_t mask,
    char *name, size_t len);

/*
 * Cursors walk entries in hash order.  A cursor's position is a 64-bit
 * cookie (zap_cursor_serialize) that stays meaningful across concurrent
 * adds and removes: every entry present for the whole walk is returned
 * exactly once.  Cookies are < 2^63 (they fit an off_t); 0 is the start.
 * zap_cursor_retrieve returns the entry at the cursor without moving it
 * (the cookie then names that entry); zap_cursor_advance moves past it.
 * za_first_integer is the first value (of either intsize).  A cursor is
 * used by one thread at a time.
 */
typedef struct zap_attribute {
	char za_name[ZAP_MAXNAMELEN];
	int za_intsize;
	uint64_t za_num;
	uint64_t za_first_integer; /* first value when intsize is 8 */
} zap_attribute_t;

typedef struct zap_cursor {
	objset_t *zc_os;
	uint64_t zc_zapobj;
	uint64_t zc_cookie; /* hash position; 0 = start */
	void *zc_priv;	    /* internal buffer */
} zap_cursor_t;

void zap_cursor_init(zap_cursor_t *zc, objset_t *os, uint64_t zapobj, uint64_t cookie);
/* ENOENT at the end. */
int zap_cursor_retrieve(zap_cursor_t *zc, zap_attribute_t *za);
void zap_cursor_advance(zap_cursor_t *zc);
uint64_t zap_cursor_serialize(const zap_cursor_t *zc);
void zap_cursor_fini(zap_cursor_t *zc);

/*
 * Validate the ZAP block at buf (a micro block, a fat header, a pointer
 * table block or a leaf): EINVAL when damaged.  For fuzzing and verify.
 */
int zap_block_validate(const void *buf, size_t size);

#endif
