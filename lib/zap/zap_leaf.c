/*
 * zap_leaf.c — the leaf block of a fat ZAP as an in-memory image: search,
 * insert, replace, remove, compaction, split, and the full validator.
 * These functions never touch the DMU; zap_fat.c reads a leaf, calls
 * them, and writes back the dirty ranges they record.  Every offset read
 * from the image is bounds-checked, so a damaged leaf yields EINVAL and
 * never a crash.  Layout: zap_impl.h and docs/FORMAT.md; theory: zap.c.
 */
#include "zap_impl.h"

#include <xxhash.h>

uint64_t
zap_hash(uint64_t salt, const char *name, size_t len)
{
	return (XXH3_64bits_withSeed(name, len, salt) >> (64 - ZAP_HASHBITS));
}

static inline uint16_t *
leaf_slots(const zap_leaf_t *l)
{
	return ((uint16_t *)(l->l_buf + ZAP_LEAF_HDRSZ));
}

static inline uint32_t
leaf_free(const zap_leaf_t *l)
{
	const zap_leaf_phys_t *zl = zap_leaf_phys(l);
	return (zl->zl_heap - (ZAP_LEAF_HDRSZ + 2U * zl->zl_nentries));
}

void
zap_leaf_mark_dirty(zap_leaf_t *l, uint32_t off, uint32_t end)
{
	if (l->l_all_dirty || off >= end)
		return;
	for (int i = 0; i < l->l_ndirty; i++) {
		uint32_t *d = l->l_dirty[i];
		if (off <= d[1] && end >= d[0]) {
			d[0] = MIN(d[0], off);
			d[1] = MAX(d[1], end);
			return;
		}
	}
	if (l->l_ndirty == ZAP_LEAF_NDIRTY) {
		l->l_all_dirty = true;
		return;
	}
	l->l_dirty[l->l_ndirty][0] = off;
	l->l_dirty[l->l_ndirty][1] = end;
	l->l_ndirty++;
}

void
zap_leaf_init(zap_leaf_t *l, uint64_t salt, uint64_t prefix, int prefix_len)
{
	memset(l->l_buf, 0, l->l_size);
	zap_leaf_phys_t *zl = zap_leaf_phys(l);
	zl->zl_magic = ZAP_LEAF_MAGIC;
	zl->zl_salt = salt;
	zl->zl_prefix = prefix;
	zl->zl_prefix_len = (uint16_t)prefix_len;
	zl->zl_heap = (uint16_t)l->l_size;
	zl->zl_blkshift = (uint32_t)(highbit64(l->l_size) - 1);
	l->l_all_dirty = true;
}

int
zap_leaf_check_hdr(const zap_leaf_t *l)
{
	const zap_leaf_phys_t *zl = zap_leaf_phys(l);
	if (zl->zl_magic != ZAP_LEAF_MAGIC || zl->zl_blkshift < 9 || zl->zl_blkshift > 15 ||
	    (1U << zl->zl_blkshift) != l->l_size || zl->zl_prefix_len > ZAP_HASHBITS ||
	    (zl->zl_prefix >> zl->zl_prefix_len) != 0 || zl->zl_heap > l->l_size ||
	    zl->zl_heap < ZAP_LEAF_HDRSZ + 2U * zl->zl_nentries ||
	    zl->zl_dead > l->l_size - zl->zl_heap)
		return (SET_ERROR(EINVAL));
	return (0);
}

int
zap_leaf_rec(const zap_leaf_t *l, uint32_t i, zap_rec_t *r)
{
	const zap_leaf_phys_t *zl = zap_leaf_phys(l);
	if (i >= zl->zl_nentries)
		return (SET_ERROR(EINVAL));
	uint32_t off = leaf_slots(l)[i];
	if (off < zl->zl_heap || off + ZAP_REC_HDRSZ > l->l_size)
		return (SET_ERROR(EINVAL));
	const uint8_t *p = l->l_buf + off;
	memcpy(&r->r_key, p, 8);
	r->r_namelen = p[8];
	r->r_intsize = p[9];
	uint16_t num;
	memcpy(&num, p + 10, 2);
	r->r_num = num;
	if (r->r_namelen == 0 || (r->r_intsize != 1 && r->r_intsize != 8) || num == 0 ||
	    (uint64_t)r->r_intsize * num > ZAP_MAXVALUELEN)
		return (SET_ERROR(EINVAL));
	r->r_len = zap_rec_len(r->r_namelen, r->r_intsize, num);
	if (off + r->r_len > l->l_size)
		return (SET_ERROR(EINVAL));
	r->r_off = off;
	r->r_name = (const char *)p + ZAP_REC_HDRSZ;
	r->r_value = p + ZAP_REC_HDRSZ + r->r_namelen;
	return (0);
}

/* The key of slot i, bounds-checked (only the 8 key bytes are needed). */
static int
leaf_key(const zap_leaf_t *l, uint32_t i, uint64_t *keyp)
{
	uint32_t off = leaf_slots(l)[i];
	if (off < zap_leaf_phys(l)->zl_heap || off + ZAP_REC_HDRSZ > l->l_size)
		return (SET_ERROR(EINVAL));
	memcpy(keyp, l->l_buf + off, 8);
	return (0);
}

int
zap_leaf_search(const zap_leaf_t *l, uint64_t key, uint32_t *idxp)
{
	uint32_t lo = 0, hi = zap_leaf_phys(l)->zl_nentries;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint64_t k = 0;
		int err = leaf_key(l, mid, &k);
		if (err != 0)
			return (err);
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	*idxp = lo;
	return (0);
}

int
zap_leaf_find(const zap_leaf_t *l, uint64_t h, const char *name, int namelen, uint32_t *idxp)
{
	uint32_t i = 0, n = zap_leaf_phys(l)->zl_nentries;
	int err = zap_leaf_search(l, ZAP_KEY(h, 0), &i);
	for (; err == 0 && i < n; i++) {
		zap_rec_t r;
		if ((err = zap_leaf_rec(l, i, &r)) != 0)
			break;
		if (ZAP_KEY_HASH(r.r_key) != h)
			break;
		if (r.r_namelen == namelen && memcmp(r.r_name, name, namelen) == 0) {
			*idxp = i;
			return (0);
		}
	}
	return (err != 0 ? err : SET_ERROR(ENOENT));
}

int
zap_leaf_next_cd(const zap_leaf_t *l, uint64_t h, uint32_t *cdp)
{
	uint32_t i = 0, n = zap_leaf_phys(l)->zl_nentries, cd = 0;
	int err = zap_leaf_search(l, ZAP_KEY(h, 0), &i);
	for (; err == 0 && i < n; i++) {
		uint64_t k = 0;
		if ((err = leaf_key(l, i, &k)) != 0)
			return (err);
		if (ZAP_KEY_HASH(k) != h || ZAP_KEY_CD(k) > cd)
			break;
		cd = ZAP_KEY_CD(k) + 1;
	}
	if (err != 0)
		return (err);
	if (cd > ZAP_CD_MAX)
		return (SET_ERROR(EOVERFLOW));
	*cdp = cd;
	return (0);
}

/* Rewrite the records packed at the end, dropping the dead space. */
static int
leaf_compact(zap_leaf_t *l)
{
	zap_leaf_phys_t *zl = zap_leaf_phys(l);
	uint8_t *tmp = tarn_alloc(l->l_size);
	uint32_t n = zl->zl_nentries, heap = l->l_size;
	uint16_t *nslots = (uint16_t *)(tmp + ZAP_LEAF_HDRSZ);
	for (uint32_t i = 0; i < n; i++) {
		zap_rec_t r;
		int err = zap_leaf_rec(l, i, &r);
		if (err != 0 || heap < ZAP_LEAF_HDRSZ + 2 * n + r.r_len) {
			tarn_free(tmp);
			return (err != 0 ? err : SET_ERROR(EINVAL));
		}
		heap -= r.r_len;
		memcpy(tmp + heap, l->l_buf + r.r_off, r.r_len);
		nslots[i] = (uint16_t)heap;
	}
	memcpy(tmp, l->l_buf, ZAP_LEAF_HDRSZ);
	memcpy(l->l_buf, tmp, l->l_size);
	tarn_free(tmp);
	zl->zl_heap = (uint16_t)heap;
	zl->zl_dead = 0;
	l->l_all_dirty = true;
	return (0);
}

/* Make room for `need` bytes of free space: ENOSPC (unchanged) if impossible. */
static int
leaf_make_room(zap_leaf_t *l, uint32_t need)
{
	if (need <= leaf_free(l))
		return (0);
	if (need > leaf_free(l) + zap_leaf_phys(l)->zl_dead)
		return (SET_ERROR(ENOSPC));
	int err = leaf_compact(l);
	if (err == 0 && need > leaf_free(l))
		err = SET_ERROR(EINVAL);
	return (err);
}

static uint32_t
leaf_put_rec(zap_leaf_t *l, uint64_t key, const char *name, int namelen, int intsize, uint64_t num,
    const void *val)
{
	zap_leaf_phys_t *zl = zap_leaf_phys(l);
	uint32_t len = zap_rec_len(namelen, intsize, num);
	uint32_t off = zl->zl_heap - len;
	uint8_t *p = l->l_buf + off;
	uint16_t num16 = (uint16_t)num;
	memcpy(p, &key, 8);
	p[8] = (uint8_t)namelen;
	p[9] = (uint8_t)intsize;
	memcpy(p + 10, &num16, 2);
	memcpy(p + ZAP_REC_HDRSZ, name, namelen);
	memcpy(p + ZAP_REC_HDRSZ + namelen, val, (size_t)intsize * num);
	zl->zl_heap = (uint16_t)off;
	zap_leaf_mark_dirty(l, off, off + len);
	return (off);
}

int
zap_leaf_insert(zap_leaf_t *l, uint64_t key, const char *name, int namelen, int intsize,
    uint64_t num, const void *val)
{
	zap_leaf_phys_t *zl = zap_leaf_phys(l);
	uint32_t len = zap_rec_len(namelen, intsize, num), idx = 0;
	int err = leaf_make_room(l, len + 2);
	if (err == 0)
		err = zap_leaf_search(l, key, &idx);
	if (err != 0)
		return (err);
	uint32_t n = zl->zl_nentries;
	uint16_t *slots = leaf_slots(l);
	uint32_t off = leaf_put_rec(l, key, name, namelen, intsize, num, val);
	memmove(&slots[idx + 1], &slots[idx], (n - idx) * 2);
	slots[idx] = (uint16_t)off;
	zl->zl_nentries = (uint16_t)(n + 1);
	zap_leaf_mark_dirty(l, 0, ZAP_LEAF_HDRSZ + 2 * (n + 1));
	return (0);
}

int
zap_leaf_replace(zap_leaf_t *l, uint32_t i, int intsize, uint64_t num, const void *val)
{
	zap_leaf_phys_t *zl = zap_leaf_phys(l);
	zap_rec_t r;
	int err = zap_leaf_rec(l, i, &r);
	if (err != 0)
		return (err);
	uint32_t len = zap_rec_len(r.r_namelen, intsize, num);
	if (len == r.r_len) {
		uint8_t *p = l->l_buf + r.r_off;
		uint16_t num16 = (uint16_t)num;
		p[9] = (uint8_t)intsize;
		memcpy(p + 10, &num16, 2);
		memcpy(p + ZAP_REC_HDRSZ + r.r_namelen, val, (size_t)intsize * num);
		zap_leaf_mark_dirty(l, r.r_off, r.r_off + len);
		return (0);
	}
	if (len > leaf_free(l) + zl->zl_dead + r.r_len)
		return (SET_ERROR(ENOSPC));
	char name[ZAP_MAXNAMELEN];
	int namelen = r.r_namelen;
	uint64_t key = r.r_key;
	memcpy(name, r.r_name, namelen);
	if ((err = zap_leaf_remove(l, i)) == 0)
		err = zap_leaf_insert(l, key, name, namelen, intsize, num, val);
	return (err);
}

int
zap_leaf_remove(zap_leaf_t *l, uint32_t i)
{
	zap_leaf_phys_t *zl = zap_leaf_phys(l);
	zap_rec_t r;
	int err = zap_leaf_rec(l, i, &r);
	if (err != 0)
		return (err);
	uint32_t n = zl->zl_nentries;
	uint16_t *slots = leaf_slots(l);
	memset(l->l_buf + r.r_off, 0, r.r_len);
	zap_leaf_mark_dirty(l, r.r_off, r.r_off + r.r_len);
	if (r.r_off == zl->zl_heap)
		zl->zl_heap = (uint16_t)(zl->zl_heap + r.r_len);
	else if (zl->zl_dead + r.r_len <= l->l_size - zl->zl_heap)
		zl->zl_dead = (uint16_t)(zl->zl_dead + r.r_len);
	memmove(&slots[i], &slots[i + 1], (n - i - 1) * 2);
	slots[n - 1] = 0;
	zl->zl_nentries = (uint16_t)(n - 1);
	zap_leaf_mark_dirty(l, 0, ZAP_LEAF_HDRSZ + 2 * n);
	return (0);
}

/* Copy slots [from, to) of src into the empty image dst, in order. */
static int
leaf_copy_range(const zap_leaf_t *src, uint32_t from, uint32_t to, zap_leaf_t *dst)
{
	zap_leaf_phys_t *zd = zap_leaf_phys(dst);
	uint16_t *slots = leaf_slots(dst);
	for (uint32_t i = from; i < to; i++) {
		zap_rec_t r;
		int err = zap_leaf_rec(src, i, &r);
		if (err != 0)
			return (err);
		uint32_t n = zd->zl_nentries;
		if (leaf_free(dst) < r.r_len + 2)
			return (SET_ERROR(EINVAL));
		zd->zl_heap = (uint16_t)(zd->zl_heap - r.r_len);
		memcpy(dst->l_buf + zd->zl_heap, src->l_buf + r.r_off, r.r_len);
		slots[n] = zd->zl_heap;
		zd->zl_nentries = (uint16_t)(n + 1);
	}
	return (0);
}

int
zap_leaf_split(zap_leaf_t *l, zap_leaf_t *hi)
{
	zap_leaf_phys_t *zl = zap_leaf_phys(l);
	int plen = zl->zl_prefix_len;
	if (plen >= ZAP_HASHBITS)
		return (SET_ERROR(ENOSPC));
	uint64_t p0 = zl->zl_prefix << 1, p1 = p0 | 1;
	uint32_t s = 0, n = zl->zl_nentries;
	int err = zap_leaf_search(l, ZAP_KEY(p1 << (ZAP_HASHBITS - plen - 1), 0), &s);
	if (err != 0)
		return (err);
	zap_leaf_t lo = {.l_buf = tarn_alloc(l->l_size), .l_size = l->l_size};
	zap_leaf_init(&lo, zl->zl_salt, p0, plen + 1);
	zap_leaf_init(hi, zl->zl_salt, p1, plen + 1);
	err = leaf_copy_range(l, 0, s, &lo);
	if (err == 0)
		err = leaf_copy_range(l, s, n, hi);
	if (err == 0) {
		memcpy(l->l_buf, lo.l_buf, l->l_size);
		l->l_all_dirty = true;
	}
	tarn_free(lo.l_buf);
	return (err);
}

static int
cmp_u64pair(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x < y ? -1 : x > y);
}

/* Check records' keys, names and hashes, and that they tile the heap. */
static int
leaf_validate_recs(const zap_leaf_t *l)
{
	const zap_leaf_phys_t *zl = zap_leaf_phys(l);
	uint32_t n = zl->zl_nentries;
	uint64_t *ext = tarn_alloc((n + 1) * 2 * sizeof(uint64_t)), used = 0;
	uint64_t prev = 0;
	int err = 0;
	for (uint32_t i = 0; i < n && err == 0; i++) {
		zap_rec_t r;
		if ((err = zap_leaf_rec(l, i, &r)) != 0)
			break;
		uint64_t h = ZAP_KEY_HASH(r.r_key);
		int plen = zl->zl_prefix_len;
		if ((i > 0 && r.r_key <= prev) || r.r_key >= ZAP_KEY_END ||
		    ZAP_KEY_CD(r.r_key) > ZAP_CD_MAX ||
		    (plen > 0 && (h >> (ZAP_HASHBITS - plen)) != zl->zl_prefix) ||
		    memchr(r.r_name, '\0', r.r_namelen) != NULL ||
		    zap_hash(zl->zl_salt, r.r_name, r.r_namelen) != h)
			err = SET_ERROR(EINVAL);
		prev = r.r_key;
		ext[2 * i] = r.r_off;
		ext[2 * i + 1] = r.r_len;
		used += r.r_len;
	}
	if (err == 0) {
		qsort(ext, n, 2 * sizeof(uint64_t), cmp_u64pair);
		for (uint32_t i = 1; i < n && err == 0; i++)
			if (ext[2 * (i - 1)] + ext[2 * (i - 1) + 1] > ext[2 * i])
				err = SET_ERROR(EINVAL);
		if (used + zl->zl_dead != l->l_size - zl->zl_heap)
			err = SET_ERROR(EINVAL);
	}
	tarn_free(ext);
	return (err);
}

int
zap_leaf_validate(const void *buf, size_t size)
{
	if (size < 512 || size > 32 * KiB || !ISP2(size))
		return (SET_ERROR(EINVAL));
	/* The checks only read the image; the cast drops const for the type. */
	zap_leaf_t l = {.l_buf = (uint8_t *)buf, .l_size = (uint32_t)size};
	int err = zap_leaf_check_hdr(&l);
	if (err == 0)
		err = leaf_validate_recs(&l);
	return (err);
}

void
zap_batch_init(zap_batch_t *b)
{
	b->zb_lo = b->zb_hi = 0;
	tarn_array_init(&b->zb_ents, sizeof (zap_batch_ent_t));
	tarn_array_init(&b->zb_names, 1);
}

void
zap_batch_fini(zap_batch_t *b)
{
	tarn_array_fini(&b->zb_ents);
	tarn_array_fini(&b->zb_names);
}

/* Empty the batch for [lo, hi); the first fill gets room for 64 entries and 4 KiB of names. */
void
zap_batch_reset(zap_batch_t *b, uint64_t lo, uint64_t hi)
{
	b->zb_lo = lo;
	b->zb_hi = hi;
	tarn_array_clear(&b->zb_ents);
	tarn_array_clear(&b->zb_names);
	VERIFY0(tarn_array_reserve(&b->zb_ents, 64));
	VERIFY0(tarn_array_reserve(&b->zb_names, 4096));
}

void
zap_batch_add(zap_batch_t *b, uint64_t key, const char *name, int namelen, int intsize,
    uint64_t num, uint64_t first)
{
	zap_batch_ent_t *e = tarn_array_push(&b->zb_ents);
	e->be_key = key;
	e->be_first = first;
	e->be_num = num;
	e->be_intsize = (uint8_t)intsize;
	e->be_namelen = (uint8_t)namelen;
	e->be_nameoff = (uint32_t)tarn_array_len(&b->zb_names);
	(void) tarn_array_append(&b->zb_names, name, (size_t)namelen);
}
