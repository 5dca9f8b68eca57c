/*
 * zap_micro.c — the micro form: one block (512 B .. 16 KiB) holding a
 * 64-byte header and fixed 64-byte entries (key, uint64 value, name of at
 * most 47 bytes) kept sorted by key, so lookups are a binary search and a
 * cursor walks the same key order as the fat form.  The block doubles
 * when full; past ZAP_MICRO_MAX_BLKSZ, or for an entry that a micro
 * entry cannot hold, zap_micro_upgrade() rewrites the object in fat form
 * keeping every key.  Theory: the top of zap.c.
 */
#include "zap_impl.h"

/*
 * The used part of the micro block (header and n entries), read from
 * disk, in a buffer with room for one entry more (not the whole block:
 * zeroing 16 KiB for a few entries was a tenth of an unlink's CPU, the
 * unlinked set being a micro ZAP).
 */
typedef struct micro_img {
	uint8_t *mi_buf;
	uint32_t mi_blksz;      /* the block's size (mi_buf is smaller) */
	zap_micro_phys_t *mi_hdr;
	zap_micro_ent_t *mi_ents;
} micro_img_t;

static int
micro_read(zap_obj_t *zo, micro_img_t *mi)
{
	const zap_micro_phys_t *zm = &zo->zo_micro;
	mi->mi_blksz = zm->zm_blksz;
	mi->mi_buf = tarn_alloc(MIN((size_t)mi->mi_blksz,
	    (size_t)ZAP_MICRO_ENTSZ * (zm->zm_nentries + 2)));
	mi->mi_hdr = (zap_micro_phys_t *)mi->mi_buf;
	mi->mi_ents = (zap_micro_ent_t *)(mi->mi_buf + ZAP_MICRO_ENTSZ);
	int err = zap_read(zo->zo_os, zo->zo_obj, 0,
	    (uint64_t)ZAP_MICRO_ENTSZ * (zm->zm_nentries + 1), mi->mi_buf);
	if (err == 0 && memcmp(mi->mi_hdr, zm, sizeof(*zm)) != 0)
		err = SET_ERROR(EINVAL);
	if (err != 0)
		tarn_free(mi->mi_buf);
	return (err);
}

/* Write header and entries [0, upto) back. */
static int
micro_write(zap_obj_t *zo, micro_img_t *mi, uint32_t upto)
{
	int err = dmu_write(zo->zo_os, zo->zo_obj, 0, (uint64_t)ZAP_MICRO_ENTSZ * (upto + 1),
	    mi->mi_buf, zo->zo_tx);
	if (err == 0)
		zo->zo_micro = *mi->mi_hdr;
	return (err);
}

/* First entry whose key is >= key. */
static uint32_t
micro_search(const micro_img_t *mi, uint64_t key)
{
	uint32_t lo = 0, hi = mi->mi_hdr->zm_nentries;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (mi->mi_ents[mid].me_key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo);
}

static int
micro_find(const micro_img_t *mi, uint64_t h, const char *name, uint32_t *idxp)
{
	size_t len = strlen(name);
	if (len >= ZAP_MICRO_NAMELEN)
		return (SET_ERROR(ENOENT));
	uint32_t n = mi->mi_hdr->zm_nentries;
	for (uint32_t i = micro_search(mi, ZAP_KEY(h, 0)); i < n; i++) {
		const zap_micro_ent_t *me = &mi->mi_ents[i];
		if (ZAP_KEY_HASH(me->me_key) != h)
			break;
		if (memcmp(me->me_name, name, len + 1) == 0) {
			*idxp = i;
			return (0);
		}
	}
	return (SET_ERROR(ENOENT));
}

static int
micro_next_cd(const micro_img_t *mi, uint64_t h, uint32_t *cdp)
{
	uint32_t n = mi->mi_hdr->zm_nentries, cd = 0;
	for (uint32_t i = micro_search(mi, ZAP_KEY(h, 0)); i < n; i++) {
		uint64_t k = mi->mi_ents[i].me_key;
		if (ZAP_KEY_HASH(k) != h || ZAP_KEY_CD(k) > cd)
			break;
		cd = ZAP_KEY_CD(k) + 1;
	}
	if (cd > ZAP_CD_MAX)
		return (SET_ERROR(EOVERFLOW));
	*cdp = cd;
	return (0);
}

int
zap_micro_create(objset_t *os, uint64_t obj, uint64_t salt, dmu_tx_t *tx)
{
	uint8_t buf[ZAP_MICRO_MIN_BLKSZ];
	memset(buf, 0, sizeof(buf));
	zap_micro_phys_t *zm = (zap_micro_phys_t *)buf;
	zm->zm_magic = ZAP_MICRO_MAGIC;
	zm->zm_salt = salt;
	zm->zm_blksz = ZAP_MICRO_MIN_BLKSZ;
	return (dmu_write(os, obj, 0, sizeof(buf), buf, tx));
}

/* Double the block (the image grows with it): room for one more entry. */
static int
micro_grow(zap_obj_t *zo, micro_img_t *mi)
{
	uint32_t nsz = mi->mi_blksz * 2;
	int err = dmu_object_set_blocksize(zo->zo_os, zo->zo_obj, nsz, zo->zo_tx);
	if (err != 0)
		return (err);
	uint8_t *nbuf = tarn_alloc(nsz);
	memcpy(nbuf, mi->mi_buf, (size_t)ZAP_MICRO_ENTSZ * (mi->mi_hdr->zm_nentries + 1));
	tarn_free(mi->mi_buf);
	mi->mi_buf = nbuf;
	mi->mi_blksz = nsz;
	mi->mi_hdr = (zap_micro_phys_t *)nbuf;
	mi->mi_ents = (zap_micro_ent_t *)(nbuf + ZAP_MICRO_ENTSZ);
	mi->mi_hdr->zm_blksz = nsz;
	/* Write the whole new block: nothing of the old size stays behind. */
	err = dmu_write(zo->zo_os, zo->zo_obj, 0, nsz, nbuf, zo->zo_tx);
	if (err == 0)
		zo->zo_micro = *mi->mi_hdr;
	return (err);
}

static int
micro_insert(zap_obj_t *zo, micro_img_t *mi, const zap_req_t *rq)
{
	uint32_t cd = 0, n = mi->mi_hdr->zm_nentries;
	int err = micro_next_cd(mi, rq->zr_hash, &cd);
	if (err != 0)
		return (err);
	uint64_t key = ZAP_KEY(rq->zr_hash, cd);
	uint32_t pos = micro_search(mi, key);
	memmove(&mi->mi_ents[pos + 1], &mi->mi_ents[pos], (size_t)(n - pos) * ZAP_MICRO_ENTSZ);
	zap_micro_ent_t *me = &mi->mi_ents[pos];
	memset(me, 0, sizeof(*me));
	me->me_key = key;
	memcpy(&me->me_value, rq->zr_val, 8);
	memcpy(me->me_name, rq->zr_name, rq->zr_namelen);
	mi->mi_hdr->zm_nentries = n + 1;
	return (micro_write(zo, mi, n + 1));
}

/*
 * Add or replace per rq.  *upgradep is set (and nothing written) when the
 * object must first become fat: the entry does not fit a micro entry or
 * the block is at its largest and full.
 */
int
zap_micro_put(zap_obj_t *zo, const zap_req_t *rq, bool *upgradep)
{
	micro_img_t mi;
	uint32_t idx;
	*upgradep = false;
	int err = micro_read(zo, &mi);
	if (err != 0)
		return (err);
	bool fits = rq->zr_intsize == 8 && rq->zr_num == 1 && rq->zr_namelen < ZAP_MICRO_NAMELEN;
	err = micro_find(&mi, rq->zr_hash, rq->zr_name, &idx);
	if (err == 0) {
		if (!rq->zr_replace)
			err = SET_ERROR(EEXIST);
		else if (!fits)
			*upgradep = true;
		else
			err = dmu_write(zo->zo_os, zo->zo_obj, ZAP_MICRO_ENTSZ * (idx + 1) + 8, 8,
			    rq->zr_val, zo->zo_tx);
	} else if (err == ENOENT) {
		err = 0;
		uint32_t n = mi.mi_hdr->zm_nentries;
		if (!fits ||
		    (n >= ZAP_MICRO_CAP(mi.mi_blksz) && mi.mi_blksz >= ZAP_MICRO_MAX_BLKSZ))
			*upgradep = true;
		else if (n >= ZAP_MICRO_CAP(mi.mi_blksz))
			err = micro_grow(zo, &mi);
		if (err == 0 && !*upgradep)
			err = micro_insert(zo, &mi, rq);
	}
	tarn_free(mi.mi_buf);
	return (err);
}

int
zap_micro_lookup(zap_obj_t *zo, uint64_t h, const char *name, zap_found_t *f, int intsize,
    uint64_t num, void *val)
{
	micro_img_t mi;
	uint32_t idx;
	int err = micro_read(zo, &mi);
	if (err != 0)
		return (err);
	err = micro_find(&mi, h, name, &idx);
	if (err == 0) {
		f->fd_key = mi.mi_ents[idx].me_key;
		f->fd_intsize = 8;
		f->fd_num = 1;
		if (val != NULL && intsize == 8 && num >= 1)
			memcpy(val, &mi.mi_ents[idx].me_value, 8);
	}
	tarn_free(mi.mi_buf);
	return (err);
}

int
zap_micro_remove(zap_obj_t *zo, uint64_t h, const char *name)
{
	micro_img_t mi;
	uint32_t idx;
	int err = micro_read(zo, &mi);
	if (err != 0)
		return (err);
	err = micro_find(&mi, h, name, &idx);
	if (err == 0) {
		uint32_t n = mi.mi_hdr->zm_nentries;
		memmove(&mi.mi_ents[idx], &mi.mi_ents[idx + 1],
		    (size_t)(n - idx - 1) * ZAP_MICRO_ENTSZ);
		memset(&mi.mi_ents[n - 1], 0, ZAP_MICRO_ENTSZ);
		mi.mi_hdr->zm_nentries = n - 1;
		err = micro_write(zo, &mi, n);
	}
	tarn_free(mi.mi_buf);
	return (err);
}

int
zap_micro_batch(zap_obj_t *zo, uint64_t key, zap_batch_t *b)
{
	micro_img_t mi;
	int err = micro_read(zo, &mi);
	if (err != 0)
		return (err);
	zap_batch_reset(b, key, ZAP_KEY_END);
	uint32_t n = mi.mi_hdr->zm_nentries;
	for (uint32_t i = micro_search(&mi, key); i < n; i++) {
		const zap_micro_ent_t *me = &mi.mi_ents[i];
		size_t len = strnlen(me->me_name, ZAP_MICRO_NAMELEN - 1);
		if (len == 0) {
			err = SET_ERROR(EINVAL);
			break;
		}
		zap_batch_add(b, me->me_key, me->me_name, (int)len, 8, 1, me->me_value);
	}
	tarn_free(mi.mi_buf);
	return (err);
}

/*
 * Rewrite the object in fat form with the same salt and keys (so that the
 * hash order, and any cursor's cookie, stays valid).
 */
int
zap_micro_upgrade(zap_obj_t *zo)
{
	micro_img_t mi;
	int err = micro_read(zo, &mi);
	if (err != 0)
		return (err);
	uint64_t salt = mi.mi_hdr->zm_salt;
	uint32_t n = mi.mi_hdr->zm_nentries;
	/*
	 * The micro block is the object's only block and is never bigger
	 * than a fat block: grow it in place; zap_fat_create then overwrites
	 * all of block 0.
	 */
	ASSERT3U(mi.mi_blksz, <=, ZAP_FAT_BLKSZ);
	if (mi.mi_blksz != ZAP_FAT_BLKSZ)
		err = dmu_object_set_blocksize(zo->zo_os, zo->zo_obj, ZAP_FAT_BLKSZ, zo->zo_tx);
	if (err == 0)
		err = zap_fat_create(zo, salt);
	for (uint32_t i = 0; i < n && err == 0; i++) {
		const zap_micro_ent_t *me = &mi.mi_ents[i];
		size_t len = strnlen(me->me_name, ZAP_MICRO_NAMELEN - 1);
		zap_req_t rq = {
		    .zr_name = me->me_name,
		    .zr_namelen = (int)len,
		    .zr_hash = ZAP_KEY_HASH(me->me_key),
		    .zr_intsize = 8,
		    .zr_num = 1,
		    .zr_val = &me->me_value,
		    .zr_add = true,
		    .zr_key = me->me_key,
		};
		err = len == 0 ? SET_ERROR(EINVAL) : zap_fat_put(zo, &rq);
	}
	tarn_free(mi.mi_buf);
	return (err);
}

int
zap_micro_validate(const void *buf, size_t size)
{
	if (size < ZAP_MICRO_MIN_BLKSZ || size > ZAP_MICRO_MAX_BLKSZ || !ISP2(size))
		return (SET_ERROR(EINVAL));
	const zap_micro_phys_t *zm = buf;
	const zap_micro_ent_t *ents =
	    (const zap_micro_ent_t *)((const uint8_t *)buf + ZAP_MICRO_ENTSZ);
	uint32_t n = zm->zm_nentries, cap = ZAP_MICRO_CAP(size);
	if (zm->zm_magic != ZAP_MICRO_MAGIC || zm->zm_blksz != size || n > cap)
		return (SET_ERROR(EINVAL));
	static const uint8_t zero[ZAP_MICRO_ENTSZ];
	for (uint32_t i = 0; i < cap; i++) {
		const zap_micro_ent_t *me = &ents[i];
		if (i >= n) {
			if (memcmp(me, zero, ZAP_MICRO_ENTSZ) != 0)
				return (SET_ERROR(EINVAL));
			continue;
		}
		const char *nul = memchr(me->me_name, '\0', ZAP_MICRO_NAMELEN);
		if (nul == NULL || nul == me->me_name ||
		    memcmp(nul, zero, ZAP_MICRO_NAMELEN - (nul - me->me_name)) != 0 ||
		    me->me_key >= ZAP_KEY_END || ZAP_KEY_CD(me->me_key) > ZAP_CD_MAX ||
		    (i > 0 && me->me_key <= ents[i - 1].me_key) ||
		    zap_hash(zm->zm_salt, me->me_name, nul - me->me_name) !=
			ZAP_KEY_HASH(me->me_key))
			return (SET_ERROR(EINVAL));
	}
	return (0);
}
