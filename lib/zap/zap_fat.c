/*
 * zap_fat.c — the fat form: extendible hashing over 16 KiB leaves.
 * Block 0 holds the header and, while it has at most 1024 entries, the
 * pointer table (2^k tagged leaf block ids indexed by the top k bits of
 * the hash); a bigger table lives in its own run of blocks and moves to a
 * run twice as long when it doubles.  A full leaf splits by one more hash
 * bit (zap_leaf_split); the table doubles first when the leaf was pointed
 * to by one entry only.  Leaves never merge.  Block ids are handed out
 * from zf_next_blk and never reused.  Theory: the top of zap.c.
 */
#include "zap_impl.h"

#include <pthread.h>

#define TBL_PER_BLK (ZAP_FAT_BLKSZ / 8)

static int
hdr_write(zap_obj_t *zo)
{
	return (
	    dmu_write(zo->zo_os, zo->zo_obj, 0, sizeof(zap_fat_phys_t), &zo->zo_fatp, zo->zo_tx));
}

static uint64_t
tbl_off(const zap_fat_phys_t *zf, uint64_t idx)
{
	if (zf->zf_tbl_blk == 0)
		return (ZAP_EMBED_OFF + 8 * idx);
	return (zf->zf_tbl_blk * ZAP_FAT_BLKSZ + 8 * idx);
}

static int
tbl_get(zap_obj_t *zo, uint64_t idx, uint64_t *blkp)
{
	uint64_t p;
	int err = zap_read(zo->zo_os, zo->zo_obj, tbl_off(&zo->zo_fatp, idx), 8, &p);
	if (err != 0)
		return (err);
	if (!ZAP_PTR_OK(p) || ZAP_PTR_BLK(p) >= zo->zo_fatp.zf_next_blk)
		return (SET_ERROR(EINVAL));
	*blkp = ZAP_PTR_BLK(p);
	return (0);
}

/* Point table entries [lo, hi) at blk. */
static int
tbl_set_range(zap_obj_t *zo, uint64_t lo, uint64_t hi, uint64_t blk)
{
	uint64_t chunk = MIN(hi - lo, TBL_PER_BLK);
	uint64_t *buf = tarn_alloc(chunk * 8);
	for (uint64_t i = 0; i < chunk; i++)
		buf[i] = ZAP_PTR(blk);
	int err = 0;
	for (uint64_t i = lo; i < hi && err == 0; i += chunk) {
		uint64_t n = MIN(chunk, hi - i);
		err = dmu_write(
		    zo->zo_os, zo->zo_obj, tbl_off(&zo->zo_fatp, i), 8 * n, buf, zo->zo_tx);
	}
	tarn_free(buf);
	return (err);
}

/*
 * Double the pointer table: each entry becomes two.  Stays embedded up
 * to 2^ZAP_EMBED_SHIFT entries, else moves to a new run of blocks (the
 * old run is freed).  Updates zo_fatp; the caller writes the header.
 */
static int
tbl_double(zap_obj_t *zo)
{
	zap_fat_phys_t *zf = &zo->zo_fatp, nzf = *zf;
	uint64_t oldn = 1ULL << zf->zf_tbl_shift, newn = oldn * 2;
	nzf.zf_tbl_shift++;
	if (nzf.zf_tbl_shift > ZAP_EMBED_SHIFT) {
		nzf.zf_tbl_nblks = MAX(1, newn / TBL_PER_BLK);
		nzf.zf_tbl_blk = zf->zf_next_blk;
		nzf.zf_next_blk += nzf.zf_tbl_nblks;
	}
	uint64_t chunk = MIN(newn, TBL_PER_BLK);
	uint64_t *src = tarn_alloc(chunk / 2 * 8), *dst = tarn_alloc(chunk * 8);
	int err = 0;
	for (uint64_t i = 0; i < newn && err == 0; i += chunk) {
		err = zap_read(zo->zo_os, zo->zo_obj, tbl_off(zf, i / 2), chunk / 2 * 8, src);
		for (uint64_t j = 0; j < chunk && err == 0; j++)
			dst[j] = src[j / 2];
		if (err == 0)
			err = dmu_write(
			    zo->zo_os, zo->zo_obj, tbl_off(&nzf, i), chunk * 8, dst, zo->zo_tx);
	}
	tarn_free(src);
	tarn_free(dst);
	if (err == 0 && zf->zf_tbl_blk != 0)
		err = dmu_free_range(zo->zo_os, zo->zo_obj, zf->zf_tbl_blk * ZAP_FAT_BLKSZ,
		    zf->zf_tbl_nblks * ZAP_FAT_BLKSZ, zo->zo_tx);
	else if (err == 0 && nzf.zf_tbl_blk != 0) {
		uint8_t *zero = tarn_alloc(ZAP_FAT_BLKSZ - ZAP_EMBED_OFF);
		err = dmu_write(zo->zo_os, zo->zo_obj, ZAP_EMBED_OFF, ZAP_FAT_BLKSZ - ZAP_EMBED_OFF,
		    zero, zo->zo_tx);
		tarn_free(zero);
	}
	if (err == 0)
		*zf = nzf;
	return (err);
}

/*
 * Leaf images come from a small per-thread cache: an operation needs one
 * or two, and allocating (and zeroing) 16 KiB each time costs as much as
 * reading the leaf.  Images from the cache are not zeroed.
 */
#define LEAF_CACHE 4
typedef struct leaf_cache {
	int lc_n;
	void *lc_bufs[LEAF_CACHE];
} leaf_cache_t;

static pthread_key_t leaf_cache_key;
static pthread_once_t leaf_cache_once = PTHREAD_ONCE_INIT;

static void
leaf_cache_destroy(void *arg)
{
	leaf_cache_t *lc = arg;
	for (int i = 0; i < lc->lc_n; i++)
		tarn_free(lc->lc_bufs[i]);
	tarn_free(lc);
}

static void
leaf_cache_init(void)
{
	VERIFY0(pthread_key_create(&leaf_cache_key, leaf_cache_destroy));
}

static leaf_cache_t *
leaf_cache(void)
{
	VERIFY0(pthread_once(&leaf_cache_once, leaf_cache_init));
	leaf_cache_t *lc = pthread_getspecific(leaf_cache_key);
	if (lc == NULL) {
		lc = tarn_alloc(sizeof(*lc));
		VERIFY0(pthread_setspecific(leaf_cache_key, lc));
	}
	return (lc);
}

static void
leaf_alloc(zap_leaf_t *l, uint64_t blk)
{
	leaf_cache_t *lc = leaf_cache();
	memset(l, 0, sizeof(*l));
	l->l_buf = lc->lc_n > 0 ? lc->lc_bufs[--lc->lc_n] : tarn_alloc(ZAP_FAT_BLKSZ);
	l->l_size = ZAP_FAT_BLKSZ;
	l->l_blk = blk;
}

static void
leaf_release(zap_leaf_t *l)
{
	if (l->l_view.dv_db != NULL) {
		dmu_view_end(&l->l_view);
		l->l_buf = NULL;
		return;
	}
	leaf_cache_t *lc = leaf_cache();
	if (l->l_buf != NULL && lc->lc_n < LEAF_CACHE)
		lc->lc_bufs[lc->lc_n++] = l->l_buf;
	else
		tarn_free(l->l_buf);
	l->l_buf = NULL;
}

static int
leaf_write(zap_obj_t *zo, zap_leaf_t *l)
{
	uint64_t base = l->l_blk * ZAP_FAT_BLKSZ;
	int err = 0;
	if (l->l_all_dirty)
		err = dmu_write(zo->zo_os, zo->zo_obj, base, l->l_size, l->l_buf, zo->zo_tx);
	for (int i = 0; i < l->l_ndirty && err == 0 && !l->l_all_dirty; i++) {
		uint32_t off = l->l_dirty[i][0], end = l->l_dirty[i][1];
		err = dmu_write(
		    zo->zo_os, zo->zo_obj, base + off, end - off, l->l_buf + off, zo->zo_tx);
	}
	l->l_all_dirty = false;
	l->l_ndirty = 0;
	return (err);
}

/*
 * Read the leaf that hash48 h maps to, into a new image, or for a lookup
 * (view) see it in place in the cache: a lookup copied a whole 16 KiB
 * leaf to find one name, a third of the work of an unlink.  Released by
 * the caller, also on error.  *idxp: the table index used.
 */
static int
leaf_get(zap_obj_t *zo, uint64_t h, bool view, zap_leaf_t *l, uint64_t *idxp)
{
	int k = (int)zo->zo_fatp.zf_tbl_shift;
	uint64_t idx = k == 0 ? 0 : h >> (ZAP_HASHBITS - k), blk = 0;
	if (view)
		memset(l, 0, sizeof(*l));
	else
		leaf_alloc(l, 0);
	int err = tbl_get(zo, idx, &blk);
	if (err == 0 && view) {
		err = dmu_view(zo->zo_os, zo->zo_obj, blk * ZAP_FAT_BLKSZ, ZAP_FAT_BLKSZ, &l->l_view);
		if (err == 0) {
			l->l_buf = (uint8_t *)(uintptr_t)l->l_view.dv_data;
			l->l_size = ZAP_FAT_BLKSZ;
		}
	} else if (err == 0) {
		err = zap_read(zo->zo_os, zo->zo_obj, blk * ZAP_FAT_BLKSZ, ZAP_FAT_BLKSZ, l->l_buf);
	}
	if (err == 0)
		err = zap_leaf_check_hdr(l);
	if (err != 0)
		return (err);
	const zap_leaf_phys_t *zl = zap_leaf_phys(l);
	if (zl->zl_salt != zo->zo_fatp.zf_salt || zl->zl_prefix_len > k ||
	    (idx >> (k - zl->zl_prefix_len)) != zl->zl_prefix)
		return (SET_ERROR(EINVAL));
	l->l_blk = blk;
	*idxp = idx;
	return (0);
}

int
zap_fat_check_hdr(const zap_fat_phys_t *zf)
{
	uint64_t k = zf->zf_tbl_shift;
	if (zf->zf_magic != ZAP_FAT_MAGIC || zf->zf_blkshift != ZAP_FAT_BLKSHIFT ||
	    k > ZAP_TBL_SHIFT_MAX || zf->zf_next_blk < 2 || zf->zf_next_blk >= (1ULL << 40) ||
	    zf->zf_nleaves < 1 || zf->zf_nleaves >= zf->zf_next_blk)
		return (SET_ERROR(EINVAL));
	if (zf->zf_tbl_blk == 0) {
		if (k > ZAP_EMBED_SHIFT || zf->zf_tbl_nblks != 0)
			return (SET_ERROR(EINVAL));
	} else if (k <= ZAP_EMBED_SHIFT || zf->zf_tbl_nblks != MAX(1, (1ULL << k) / TBL_PER_BLK) ||
	    zf->zf_tbl_blk >= zf->zf_next_blk ||
	    zf->zf_tbl_nblks > zf->zf_next_blk - zf->zf_tbl_blk) {
		return (SET_ERROR(EINVAL));
	}
	return (0);
}

int
zap_fat_validate_tbl(const void *buf, size_t size)
{
	if (size < 8 || size % 8 != 0)
		return (SET_ERROR(EINVAL));
	const uint64_t *p = buf;
	for (size_t i = 0; i < size / 8; i++)
		if (!ZAP_PTR_OK(p[i]))
			return (SET_ERROR(EINVAL));
	return (0);
}

int
zap_fat_validate_hdr(const void *buf, size_t size)
{
	const zap_fat_phys_t *zf = buf;
	if (size != ZAP_FAT_BLKSZ || zap_fat_check_hdr(zf) != 0)
		return (SET_ERROR(EINVAL));
	if (zf->zf_tbl_blk != 0)
		return (0);
	const uint64_t *tbl = (const uint64_t *)((const uint8_t *)buf + ZAP_EMBED_OFF);
	for (uint64_t i = 0; i < (1ULL << zf->zf_tbl_shift); i++)
		if (!ZAP_PTR_OK(tbl[i]) || ZAP_PTR_BLK(tbl[i]) >= zf->zf_next_blk)
			return (SET_ERROR(EINVAL));
	return (0);
}

int
zap_fat_create(zap_obj_t *zo, uint64_t salt)
{
	uint8_t *buf = tarn_alloc(ZAP_FAT_BLKSZ);
	zap_fat_phys_t *zf = (zap_fat_phys_t *)buf;
	zf->zf_magic = ZAP_FAT_MAGIC;
	zf->zf_salt = salt;
	zf->zf_nleaves = 1;
	zf->zf_next_blk = 2;
	zf->zf_blkshift = ZAP_FAT_BLKSHIFT;
	*(uint64_t *)(buf + ZAP_EMBED_OFF) = ZAP_PTR(1);
	int err = dmu_write(zo->zo_os, zo->zo_obj, 0, ZAP_FAT_BLKSZ, buf, zo->zo_tx);
	zap_leaf_t l;
	leaf_alloc(&l, 1);
	zap_leaf_init(&l, salt, 0, 0);
	if (err == 0)
		err = leaf_write(zo, &l);
	if (err == 0) {
		zo->zo_fat = true;
		zo->zo_fatp = *zf;
	}
	leaf_release(&l);
	tarn_free(buf);
	return (err);
}

/* Split leaf l (reached through table index idx), doubling the table if needed. */
static int
fat_split(zap_obj_t *zo, zap_leaf_t *l, uint64_t idx)
{
	zap_fat_phys_t *zf = &zo->zo_fatp;
	int plen = zap_leaf_phys(l)->zl_prefix_len;
	int err = 0;
	if (plen >= ZAP_HASHBITS)
		return (SET_ERROR(ENOSPC));
	if (plen == (int)zf->zf_tbl_shift) {
		if (zf->zf_tbl_shift >= ZAP_TBL_SHIFT_MAX)
			return (SET_ERROR(ENOSPC));
		if ((err = tbl_double(zo)) != 0)
			return (err);
	}
	int k = (int)zf->zf_tbl_shift;
	uint64_t prefix = zap_leaf_phys(l)->zl_prefix;
	uint64_t lo = prefix << (k - plen), hi = (prefix + 1) << (k - plen);
	zap_leaf_t nl;
	leaf_alloc(&nl, zf->zf_next_blk);
	err = zap_leaf_split(l, &nl);
	if (err == 0)
		err = leaf_write(zo, &nl);
	if (err == 0)
		err = leaf_write(zo, l);
	if (err == 0)
		err = tbl_set_range(zo, lo + (hi - lo) / 2, hi, nl.l_blk);
	if (err == 0) {
		zf->zf_next_blk++;
		zf->zf_nleaves++;
		err = hdr_write(zo);
	}
	leaf_release(&nl);
	(void)idx;
	return (err);
}

/* Apply rq to leaf l: ENOSPC when the leaf is too full (l unchanged). */
static int
fat_put_leaf(zap_obj_t *zo, const zap_req_t *rq, zap_leaf_t *l, bool *addedp)
{
	uint32_t i = 0, cd = 0;
	int err = zap_leaf_find(l, rq->zr_hash, rq->zr_name, rq->zr_namelen, &i);
	*addedp = false;
	if (err == 0) {
		if (!rq->zr_replace)
			return (SET_ERROR(EEXIST));
		return (zap_leaf_replace(l, i, rq->zr_intsize, rq->zr_num, rq->zr_val));
	}
	if (err != ENOENT || !rq->zr_add)
		return (err);
	uint64_t key = rq->zr_key;
	if (key == ZAP_KEY_END) {
		if ((err = zap_leaf_next_cd(l, rq->zr_hash, &cd)) != 0)
			return (err);
		key = ZAP_KEY(rq->zr_hash, cd);
	}
	err = zap_leaf_insert(
	    l, key, rq->zr_name, rq->zr_namelen, rq->zr_intsize, rq->zr_num, rq->zr_val);
	*addedp = err == 0;
	return (err);
}

int
zap_fat_put(zap_obj_t *zo, const zap_req_t *rq)
{
	int err = 0;
	for (int tries = 0; tries <= ZAP_HASHBITS + 1; tries++) {
		zap_leaf_t l;
		uint64_t idx;
		bool added = false;
		err = leaf_get(zo, rq->zr_hash, false, &l, &idx);
		if (err == 0)
			err = fat_put_leaf(zo, rq, &l, &added);
		if (err == 0)
			err = leaf_write(zo, &l);
		if (err == 0 && added) {
			zo->zo_fatp.zf_nentries++;
			err = hdr_write(zo);
		}
		if (err == ENOSPC)
			err = fat_split(zo, &l, idx);
		else if (err == 0) {
			leaf_release(&l);
			return (0);
		}
		leaf_release(&l);
		if (err != 0)
			return (err);
	}
	return (SET_ERROR(ENOSPC));
}

int
zap_fat_lookup(zap_obj_t *zo, uint64_t h, const char *name, zap_found_t *f, int intsize,
    uint64_t num, void *val)
{
	zap_leaf_t l;
	uint64_t idx;
	uint32_t i = 0;
	zap_rec_t r;
	int err = leaf_get(zo, h, true, &l, &idx);
	if (err == 0)
		err = zap_leaf_find(&l, h, name, (int)strlen(name), &i);
	if (err == 0)
		err = zap_leaf_rec(&l, i, &r);
	if (err == 0) {
		f->fd_key = r.r_key;
		f->fd_intsize = r.r_intsize;
		f->fd_num = r.r_num;
		if (val != NULL && intsize == r.r_intsize && num >= r.r_num)
			memcpy(val, r.r_value, (size_t)r.r_intsize * r.r_num);
	}
	leaf_release(&l);
	return (err);
}

int
zap_fat_remove(zap_obj_t *zo, uint64_t h, const char *name)
{
	zap_leaf_t l;
	uint64_t idx;
	uint32_t i = 0;
	int err = leaf_get(zo, h, false, &l, &idx);
	if (err == 0)
		err = zap_leaf_find(&l, h, name, (int)strlen(name), &i);
	if (err == 0)
		err = zap_leaf_remove(&l, i);
	if (err == 0)
		err = leaf_write(zo, &l);
	if (err == 0) {
		if (zo->zo_fatp.zf_nentries > 0)
			zo->zo_fatp.zf_nentries--;
		err = hdr_write(zo);
	}
	leaf_release(&l);
	return (err);
}

/* Entries with keys >= key in the leaf holding key; the batch covers the leaf's range. */
int
zap_fat_batch(zap_obj_t *zo, uint64_t key, zap_batch_t *b)
{
	zap_leaf_t l;
	uint64_t idx;
	uint32_t i = 0;
	int err = leaf_get(zo, ZAP_KEY_HASH(key), true, &l, &idx);
	if (err == 0)
		err = zap_leaf_search(&l, key, &i);
	if (err != 0) {
		leaf_release(&l);
		return (err);
	}
	const zap_leaf_phys_t *zl = zap_leaf_phys(&l);
	int shift = ZAP_HASHBITS - zl->zl_prefix_len;
	zap_batch_reset(b, key, ZAP_KEY((zl->zl_prefix + 1) << shift, 0));
	for (; i < zl->zl_nentries && err == 0; i++) {
		zap_rec_t r;
		if ((err = zap_leaf_rec(&l, i, &r)) != 0)
			break;
		uint64_t first = 0;
		memcpy(&first, r.r_value, r.r_intsize);
		zap_batch_add(b, r.r_key, r.r_name, r.r_namelen, r.r_intsize, r.r_num, first);
	}
	leaf_release(&l);
	return (err);
}
