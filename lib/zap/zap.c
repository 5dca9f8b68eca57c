/*
 * zap.c — the ZAP layer's public functions: argument checks, the striped
 * object locks, dispatch to the micro form (zap_micro.c) or the fat form
 * (zap_fat.c, zap_leaf.c), cursors and the block validator.
 *
 * Theory of ZAP objects
 * ---------------------
 * A ZAP object maps names (1..255 bytes, no NUL) to arrays of 1- or 8-byte
 * integers (at most ZAP_MAXVALUELEN bytes).  It is an ordinary DMU object
 * whose blocks this layer formats; every operation is reads (zap_read)
 * and dmu_writes of those blocks inside the caller's transaction, and
 * nothing about an object is cached in memory between operations, so an
 * aborted tx leaves no stale state behind.
 *
 * Keys.  A name is hashed with XXH3-64 seeded by a per-object random salt
 * (kept in the object's header, so names chosen to collide in one
 * directory cannot be chosen without reading it); the top 48 bits are the
 * entry's hash.  Entries whose hashes are equal get distinct collision
 * differentiators (cd, the lowest free one, 15 bits).  key = hash << 15 |
 * cd is unique in the object, is < 2^63, and is fixed for the life of
 * the entry: splits, table doubling, the micro->fat upgrade and updates
 * of the value all keep it.
 *
 * Two forms.  The micro form is a single block (512 B, doubling up to
 * 16 KiB) of sorted 64-byte entries (key, uint64, name of <= 47 bytes):
 * the cheap form for small directories.  The first entry that does not
 * fit (longer name, array or 1-byte value, or a full 16 KiB block)
 * upgrades the object to the fat form: extendible hashing, with a header
 * block, a table of 2^k leaf pointers indexed by the top k hash bits, and
 * 16 KiB leaves.  A leaf has a hash prefix of length n <= k and is
 * pointed to by 2^(k-n) consecutive table entries; it keeps a sorted slot
 * array and packed variable-size records (key, name, value), so a lookup
 * is one table read, one leaf read and a binary search; a full leaf
 * splits by hash bit n (doubling the table first when n == k).  Leaves
 * never merge; removed records become dead space reclaimed by compaction.
 * O(1) block reads per operation at any size.
 *
 * Concurrency.  Operations on one object are serialized by a table of
 * ZAP_NSTRIPES rwlocks hashed by (objset, object): readers share, writers
 * exclude; different objects almost always take different locks and run
 * in parallel.  Each stripe also counts modifications (zs_gen).
 *
 * Cursors.  A cursor's cookie is a key: "the next entry returned is the
 * one with the smallest key >= cookie".  Retrieving an entry sets the
 * cookie to its key, advancing sets it to key + 1.  Since keys are fixed
 * and the walk only moves up, every entry present for the whole walk is
 * returned exactly once, whatever is added or removed meanwhile (entries
 * added or removed during the walk may or may not be seen).  Micro
 * entries are sorted by the same keys, so an upgrade mid-walk changes
 * nothing.  For speed a cursor keeps the entries of the key range it last
 * read (a micro block or one leaf); the batch is used only while the
 * stripe's zs_gen is unchanged, i.e. while no object of the stripe was
 * modified.
 *
 * Damage.  Every block read is checked before use (magic, header fields,
 * and each offset before it is followed), table entries carry a tag,
 * leaves must match the hash prefix they are reached by, and every loop is
 * bounded, so a damaged object returns EINVAL (or the DMU's ECKSUM/EIO)
 * and never crashes or spins.  zap_block_validate() is the full check of
 * any single block (used by the fuzz target and verification).
 *
 * Errors and transactions.  All checks and reads come before the first
 * write of an operation; an error after that can only come from the DMU
 * itself (the tx is then to be aborted by the caller).
 */
#include "zap_impl.h"

#include <pthread.h>

#define ZAP_NSTRIPES 256

typedef struct zap_stripe {
	pthread_rwlock_t zs_lock;
	uint64_t zs_gen; /* modifications; atomic, under zs_lock (W) */
} __attribute__((aligned(64))) zap_stripe_t;

static zap_stripe_t zap_stripes[ZAP_NSTRIPES] = {
    [0 ... ZAP_NSTRIPES - 1] = {.zs_lock = PTHREAD_RWLOCK_INITIALIZER}};

static zap_stripe_t *
zap_stripe(objset_t *os, uint64_t obj)
{
	uint64_t h = ((uint64_t)(uintptr_t)os >> 4) * 0x9e3779b97f4a7c15ULL;
	h ^= obj * 0xc2b2ae3d27d4eb4fULL;
	h ^= h >> 31;
	h *= 0x94d049bb133111ebULL;
	return (&zap_stripes[(h >> 40) % ZAP_NSTRIPES]);
}

static zap_stripe_t *
zap_lock(objset_t *os, uint64_t obj, bool write)
{
	zap_stripe_t *zs = zap_stripe(os, obj);
	if (write) {
		VERIFY0(pthread_rwlock_wrlock(&zs->zs_lock));
		__atomic_add_fetch(&zs->zs_gen, 1, __ATOMIC_RELEASE);
	} else {
		VERIFY0(pthread_rwlock_rdlock(&zs->zs_lock));
	}
	return (zs);
}

static void
zap_unlock(zap_stripe_t *zs)
{
	VERIFY0(pthread_rwlock_unlock(&zs->zs_lock));
}

/*
 * A ZAP's reads go through a view and a copy rather than dmu_read: they
 * are no stream (every operation reads the header block again, which the
 * DMU's sequential-read detector took for a stream continuing, and an
 * unlink started read-ahead of the whole directory 1.5 times on average,
 * each a task hand-off and lock traffic against the unlink itself), and
 * the blocks are metadata that stays cached, not a stream's once blocks.
 */
int
zap_read(objset_t *os, uint64_t obj, uint64_t off, uint64_t len, void *buf)
{
	dmu_view_t v;
	int err = dmu_view(os, obj, off, len, &v);
	if (err == EINVAL)      /* crosses a block boundary, or past the end */
		return (dmu_read(os, obj, off, len, buf));
	if (err == 0) {
		memcpy(buf, v.dv_data, len);
		dmu_view_end(&v);
	}
	return (err);
}

/* Read and check the object's header (the first 128 bytes of block 0). */
static int
zap_obj_load(zap_obj_t *zo, objset_t *os, uint64_t obj, dmu_tx_t *tx)
{
	memset(zo, 0, sizeof(*zo));
	zo->zo_os = os;
	zo->zo_obj = obj;
	zo->zo_tx = tx;
	int err = zap_read(os, obj, 0, sizeof(zo->zo_hdrbuf), zo->zo_hdrbuf);
	if (err != 0)
		return (err);
	uint64_t magic;
	memcpy(&magic, zo->zo_hdrbuf, 8);
	if (magic == ZAP_MICRO_MAGIC) {
		memcpy(&zo->zo_micro, zo->zo_hdrbuf, sizeof(zo->zo_micro));
		uint32_t bs = zo->zo_micro.zm_blksz;
		if (bs < ZAP_MICRO_MIN_BLKSZ || bs > ZAP_MICRO_MAX_BLKSZ || !ISP2(bs) ||
		    zo->zo_micro.zm_nentries > ZAP_MICRO_CAP(bs))
			return (SET_ERROR(EINVAL));
		return (0);
	}
	if (magic == ZAP_FAT_MAGIC) {
		memcpy(&zo->zo_fatp, zo->zo_hdrbuf, sizeof(zo->zo_fatp));
		zo->zo_fat = true;
		return (zap_fat_check_hdr(&zo->zo_fatp));
	}
	return (SET_ERROR(EINVAL));
}

static uint64_t
zap_salt(const zap_obj_t *zo)
{
	return (zo->zo_fat ? zo->zo_fatp.zf_salt : zo->zo_micro.zm_salt);
}

/* Names: 1..ZAP_MAXNAMELEN-1 bytes. */
static int
zap_name_check(const char *name, int *lenp)
{
	size_t len = strnlen(name, ZAP_MAXNAMELEN);
	if (len == 0)
		return (SET_ERROR(EINVAL));
	if (len >= ZAP_MAXNAMELEN)
		return (SET_ERROR(ENAMETOOLONG));
	*lenp = (int)len;
	return (0);
}

static int
zap_value_check(int intsize, uint64_t num)
{
	if ((intsize != 1 && intsize != 8) || num == 0)
		return (SET_ERROR(EINVAL));
	if (num > ZAP_MAXVALUELEN / (uint64_t)intsize)
		return (SET_ERROR(E2BIG));
	return (0);
}

int
zap_create_claim_bonus(objset_t *os, uint64_t obj, dmu_object_type_t type,
    dmu_object_type_t bonustype, uint32_t bonuslen, dmu_tx_t *tx)
{
	int err = dmu_object_claim(os, obj, type, ZAP_MICRO_MIN_BLKSZ, bonustype, bonuslen, tx);
	if (err != 0)
		return (err);
	zap_stripe_t *zs = zap_lock(os, obj, true);
	err = zap_micro_create(os, obj, tarn_guid(), tx);
	zap_unlock(zs);
	return (err);
}

int
zap_create_bonus(objset_t *os, dmu_object_type_t type, dmu_object_type_t bonustype,
    uint32_t bonuslen, dmu_tx_t *tx, uint64_t *objp)
{
	uint64_t obj;
	int err = dmu_object_alloc(os, type, ZAP_MICRO_MIN_BLKSZ, bonustype, bonuslen, tx, &obj);
	if (err != 0)
		return (err);
	zap_stripe_t *zs = zap_lock(os, obj, true);
	err = zap_micro_create(os, obj, tarn_guid(), tx);
	zap_unlock(zs);
	if (err == 0)
		*objp = obj;
	return (err);
}

int
zap_create(objset_t *os, dmu_object_type_t type, dmu_tx_t *tx, uint64_t *objp)
{
	return (zap_create_bonus(os, type, DMU_OT_NONE, 0, tx, objp));
}

int
zap_create_claim(objset_t *os, uint64_t obj, dmu_object_type_t type, dmu_tx_t *tx)
{
	return (zap_create_claim_bonus(os, obj, type, DMU_OT_NONE, 0, tx));
}

int
zap_destroy(objset_t *os, uint64_t zapobj, dmu_tx_t *tx)
{
	zap_stripe_t *zs = zap_lock(os, zapobj, true);
	int err = dmu_object_free(os, zapobj, tx);
	zap_unlock(zs);
	return (err);
}

/* Add and/or replace (per the flags) name's value. */
static int
zap_put(objset_t *os, uint64_t zapobj, const char *name, int intsize, uint64_t num, const void *val,
    bool replace, dmu_tx_t *tx)
{
	int namelen;
	int err = zap_name_check(name, &namelen);
	if (err == 0)
		err = zap_value_check(intsize, num);
	if (err != 0)
		return (err);
	zap_obj_t zo;
	zap_stripe_t *zs = zap_lock(os, zapobj, true);
	err = zap_obj_load(&zo, os, zapobj, tx);
	if (err == 0) {
		zap_req_t rq = {
		    .zr_name = name,
		    .zr_namelen = namelen,
		    .zr_hash = zap_hash(zap_salt(&zo), name, namelen),
		    .zr_intsize = intsize,
		    .zr_num = num,
		    .zr_val = val,
		    .zr_replace = replace,
		    .zr_add = true,
		    .zr_key = ZAP_KEY_END,
		};
		bool upgrade = false;
		if (!zo.zo_fat)
			err = zap_micro_put(&zo, &rq, &upgrade);
		if (err == 0 && upgrade)
			err = zap_micro_upgrade(&zo);
		if (err == 0 && zo.zo_fat)
			err = zap_fat_put(&zo, &rq);
	}
	zap_unlock(zs);
	return (err);
}

int
zap_add(objset_t *os, uint64_t zapobj, const char *name, int intsize, uint64_t num, const void *val,
    dmu_tx_t *tx)
{
	return (zap_put(os, zapobj, name, intsize, num, val, false, tx));
}

int
zap_update(objset_t *os, uint64_t zapobj, const char *name, int intsize, uint64_t num,
    const void *val, dmu_tx_t *tx)
{
	return (zap_put(os, zapobj, name, intsize, num, val, true, tx));
}

/* Find name: *f describes it; the value is copied per zap_lookup's rules. */
static int
zap_find(objset_t *os, uint64_t zapobj, const char *name, zap_found_t *f, int intsize, uint64_t num,
    void *val)
{
	int namelen;
	int err = zap_name_check(name, &namelen);
	if (err != 0)
		return (err);
	zap_obj_t zo;
	zap_stripe_t *zs = zap_lock(os, zapobj, false);
	err = zap_obj_load(&zo, os, zapobj, NULL);
	if (err == 0) {
		uint64_t h = zap_hash(zap_salt(&zo), name, namelen);
		if (zo.zo_fat)
			err = zap_fat_lookup(&zo, h, name, f, intsize, num, val);
		else
			err = zap_micro_lookup(&zo, h, name, f, intsize, num, val);
	}
	zap_unlock(zs);
	return (err);
}

int
zap_lookup(objset_t *os, uint64_t zapobj, const char *name, int intsize, uint64_t num, void *val)
{
	zap_found_t f;
	int err = zap_find(os, zapobj, name, &f, intsize, num, val);
	if (err != 0)
		return (err);
	if (f.fd_intsize != intsize)
		return (SET_ERROR(EINVAL));
	if (num < f.fd_num)
		return (SET_ERROR(EOVERFLOW));
	return (0);
}

int
zap_length(objset_t *os, uint64_t zapobj, const char *name, int *intsize, uint64_t *num)
{
	zap_found_t f;
	int err = zap_find(os, zapobj, name, &f, 0, 0, NULL);
	if (err == 0) {
		if (intsize != NULL)
			*intsize = f.fd_intsize;
		if (num != NULL)
			*num = f.fd_num;
	}
	return (err);
}

int
zap_remove(objset_t *os, uint64_t zapobj, const char *name, dmu_tx_t *tx)
{
	int namelen;
	int err = zap_name_check(name, &namelen);
	if (err != 0)
		return (err);
	zap_obj_t zo;
	zap_stripe_t *zs = zap_lock(os, zapobj, true);
	err = zap_obj_load(&zo, os, zapobj, tx);
	if (err == 0) {
		uint64_t h = zap_hash(zap_salt(&zo), name, namelen);
		if (zo.zo_fat)
			err = zap_fat_remove(&zo, h, name);
		else
			err = zap_micro_remove(&zo, h, name);
	}
	zap_unlock(zs);
	return (err);
}

int
zap_count(objset_t *os, uint64_t zapobj, uint64_t *count)
{
	zap_obj_t zo;
	zap_stripe_t *zs = zap_lock(os, zapobj, false);
	int err = zap_obj_load(&zo, os, zapobj, NULL);
	if (err == 0)
		*count = zo.zo_fat ? zo.zo_fatp.zf_nentries : zo.zo_micro.zm_nentries;
	zap_unlock(zs);
	return (err);
}

int
zap_value_search(objset_t *os, uint64_t zapobj, uint64_t value, uint64_t mask, char *name,
    size_t len)
{
	zap_cursor_t zc;
	zap_attribute_t za;
	int err;
	if (mask == 0)
		mask = ~0ULL;
	zap_cursor_init(&zc, os, zapobj, 0);
	while ((err = zap_cursor_retrieve(&zc, &za)) == 0) {
		if (za.za_intsize == 8 && za.za_num > 0 && (za.za_first_integer & mask) == value) {
			(void) snprintf(name, len, "%s", za.za_name);
			break;
		}
		zap_cursor_advance(&zc);
	}
	zap_cursor_fini(&zc);
	return (err);
}

int
zap_add_int(objset_t *os, uint64_t zapobj, const char *name, uint64_t value, dmu_tx_t *tx)
{
	return (zap_add(os, zapobj, name, 8, 1, &value, tx));
}

int
zap_update_int(objset_t *os, uint64_t zapobj, const char *name, uint64_t value, dmu_tx_t *tx)
{
	return (zap_update(os, zapobj, name, 8, 1, &value, tx));
}

int
zap_lookup_int(objset_t *os, uint64_t zapobj, const char *name, uint64_t *value)
{
	return (zap_lookup(os, zapobj, name, 8, 1, value));
}

void
zap_tx_hold(dmu_tx_t *tx, objset_t *os, uint64_t zapobj, uint64_t nops)
{
	/* Per change: a leaf, the header, and a split's new leaf and table. */
	uint64_t per_op = 4 * ZAP_FAT_BLKSZ, est = nops * per_op;
	dmu_object_info_t doi;
	if (zapobj != 0 && dmu_object_info(os, zapobj, &doi) == 0) {
		/* A tx cannot dirty more than the whole object plus its growth. */
		uint64_t cap = doi.doi_max_offset + 2 * ZAP_FAT_BLKSZ +
		    nops * (ZAP_MAXNAMELEN + 64) + (doi.doi_max_offset / 8);
		est = MIN(est, cap);
	}
	dmu_tx_hold_space(tx, MAX(est, ZAP_FAT_BLKSZ));
}

/* ---- cursors ---- */

typedef struct zap_cursor_state {
	bool cs_valid; /* cs_batch reflects the object at cs_gen */
	uint64_t cs_gen;
	bool cs_have_cur; /* zc_cookie is the key of a retrieved entry */
	zap_batch_t cs_batch;
} zap_cursor_state_t;

void
zap_cursor_init(zap_cursor_t *zc, objset_t *os, uint64_t zapobj, uint64_t cookie)
{
	zc->zc_os = os;
	zc->zc_zapobj = zapobj;
	zc->zc_cookie = cookie; /* >= ZAP_KEY_END: at the end */
	zc->zc_priv = NULL;
}

/* Read the entries of the key range holding zc_cookie into the batch. */
static int
zap_cursor_fill(zap_cursor_t *zc, zap_cursor_state_t *cs)
{
	zap_obj_t zo;
	zap_stripe_t *zs = zap_lock(zc->zc_os, zc->zc_zapobj, false);
	cs->cs_valid = false;
	cs->cs_gen = __atomic_load_n(&zs->zs_gen, __ATOMIC_ACQUIRE);
	int err = zap_obj_load(&zo, zc->zc_os, zc->zc_zapobj, NULL);
	if (err == 0 && zo.zo_fat)
		err = zap_fat_batch(&zo, zc->zc_cookie, &cs->cs_batch);
	else if (err == 0)
		err = zap_micro_batch(&zo, zc->zc_cookie, &cs->cs_batch);
	zap_unlock(zs);
	cs->cs_valid = err == 0;
	return (err);
}

static bool
zap_cursor_batch_ok(const zap_cursor_t *zc, const zap_cursor_state_t *cs)
{
	const zap_stripe_t *zs = zap_stripe(zc->zc_os, zc->zc_zapobj);
	return (cs->cs_valid && cs->cs_gen == __atomic_load_n(&zs->zs_gen, __ATOMIC_ACQUIRE) &&
	    zc->zc_cookie >= cs->cs_batch.zb_lo && zc->zc_cookie < cs->cs_batch.zb_hi);
}

static void
zap_cursor_fill_attr(const zap_batch_t *b, uint32_t i, zap_attribute_t *za)
{
	const zap_batch_ent_t *e = &TARN_ARRAY_AT(&b->zb_ents, zap_batch_ent_t, i);
	memcpy(za->za_name, (const char *)tarn_array_base(&b->zb_names) + e->be_nameoff,
	    e->be_namelen);
	za->za_name[e->be_namelen] = '\0';
	za->za_intsize = e->be_intsize;
	za->za_num = e->be_num;
	za->za_first_integer = e->be_first;
}

int
zap_cursor_retrieve(zap_cursor_t *zc, zap_attribute_t *za)
{
	if (zc->zc_priv == NULL) {
		zap_cursor_state_t *ncs = tarn_alloc(sizeof(zap_cursor_state_t));
		zap_batch_init(&ncs->cs_batch);
		zc->zc_priv = ncs;
	}
	zap_cursor_state_t *cs = zc->zc_priv;
	while (zc->zc_cookie < ZAP_KEY_END) {
		if (!zap_cursor_batch_ok(zc, cs)) {
			int err = zap_cursor_fill(zc, cs);
			if (err != 0)
				return (err);
		}
		const zap_batch_t *b = &cs->cs_batch;
		const uint32_t n = (uint32_t)tarn_array_len(&b->zb_ents);
		uint32_t lo = 0, hi = n;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (TARN_ARRAY_AT(&b->zb_ents, zap_batch_ent_t, mid).be_key < zc->zc_cookie)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n) {
			zap_cursor_fill_attr(b, lo, za);
			zc->zc_cookie = TARN_ARRAY_AT(&b->zb_ents, zap_batch_ent_t, lo).be_key;
			cs->cs_have_cur = true;
			return (0);
		}
		/* Nothing left in this range: on to the next one, if any. */
		if (b->zb_hi >= ZAP_KEY_END)
			break;
		zc->zc_cookie = b->zb_hi;
	}
	return (SET_ERROR(ENOENT));
}

void
zap_cursor_advance(zap_cursor_t *zc)
{
	zap_attribute_t *za = NULL;
	zap_cursor_state_t *cs = zc->zc_priv;
	if (cs == NULL || !cs->cs_have_cur) {
		za = tarn_alloc(sizeof(*za));
		int err = zap_cursor_retrieve(zc, za);
		tarn_free(za);
		if (err != 0)
			return;
		cs = zc->zc_priv;
	}
	if (zc->zc_cookie < ZAP_KEY_END)
		zc->zc_cookie++;
	cs->cs_have_cur = false;
}

uint64_t
zap_cursor_serialize(const zap_cursor_t *zc)
{
	return (zc->zc_cookie);
}

void
zap_cursor_fini(zap_cursor_t *zc)
{
	zap_cursor_state_t *cs = zc->zc_priv;
	if (cs != NULL) {
		zap_batch_fini(&cs->cs_batch);
		tarn_free(cs);
	}
	zc->zc_priv = NULL;
}

/* Dispatch on the block's first 8 bytes; works on a private aligned copy. */
int
zap_block_validate(const void *buf, size_t size)
{
	uint64_t magic;
	if (buf == NULL || size < 8 || size > SPA_MAXBLOCKSIZE)
		return (SET_ERROR(EINVAL));
	void *copy = tarn_alloc(size);
	memcpy(copy, buf, size);
	memcpy(&magic, copy, 8);
	int err;
	if (magic == ZAP_MICRO_MAGIC)
		err = zap_micro_validate(copy, size);
	else if (magic == ZAP_FAT_MAGIC)
		err = zap_fat_validate_hdr(copy, size);
	else if (magic == ZAP_LEAF_MAGIC)
		err = zap_leaf_validate(copy, size);
	else if (ZAP_PTR_OK(magic))
		err = zap_fat_validate_tbl(copy, size);
	else
		err = SET_ERROR(EINVAL);
	tarn_free(copy);
	return (err);
}
