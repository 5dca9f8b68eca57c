/*
 * fuzz_zap.c — fuzz target for ZAP blocks: zap_block_validate() on any
 * input must return 0 or EINVAL, and the in-memory leaf operations that
 * run on blocks read from disk (after only the cheap header check) must
 * never crash on a damaged leaf.  Built with -DTARN_LIBFUZZER for
 * libFuzzer; otherwise a plain main() feeds N seeded mutations of valid
 * micro, fat-header, pointer-table and leaf blocks (N = argv[1], default
 * 20000; seed = argv[2]).
 */
#include "zap.h"
#include "zap_impl.h"

static void
exercise_leaf(const uint8_t *data, size_t size)
{
	zap_leaf_t l = {.l_buf = tarn_alloc(ZAP_FAT_BLKSZ), .l_size = ZAP_FAT_BLKSZ};
	memcpy(l.l_buf, data, size);
	if (zap_leaf_check_hdr(&l) != 0) {
		tarn_free(l.l_buf);
		return;
	}
	const zap_leaf_phys_t *zl = zap_leaf_phys(&l);
	uint32_t idx, cd, n = zl->zl_nentries;
	uint64_t h =
	    zl->zl_prefix_len == 0 ? 12345 : zl->zl_prefix << (ZAP_HASHBITS - zl->zl_prefix_len);
	uint64_t val[16] = {1, 2, 3, 4};
	(void)zap_leaf_find(&l, h, "name", 4, &idx);
	if (zap_leaf_next_cd(&l, h, &cd) == 0)
		(void)zap_leaf_insert(&l, ZAP_KEY(h, cd), "name", 4, 8, 4, val);
	for (uint32_t i = 0; i < n && i < 8; i++) {
		zap_rec_t r;
		if (zap_leaf_rec(&l, i, &r) == 0)
			(void)zap_leaf_find(&l, ZAP_KEY_HASH(r.r_key), r.r_name, r.r_namelen, &idx);
	}
	if (zap_leaf_phys(&l)->zl_nentries > 0)
		(void)zap_leaf_replace(&l, 0, 1, 100, val);
	if (zap_leaf_phys(&l)->zl_nentries > 1)
		(void)zap_leaf_remove(&l, 1);
	zap_leaf_t hi = {.l_buf = tarn_alloc(ZAP_FAT_BLKSZ), .l_size = ZAP_FAT_BLKSZ};
	(void)zap_leaf_split(&l, &hi);
	tarn_free(hi.l_buf);
	tarn_free(l.l_buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int err = zap_block_validate(data, size);
	if (err != 0 && err != EINVAL)
		abort();
	uint64_t magic = 0;
	if (size >= 8)
		memcpy(&magic, data, 8);
	if (magic == ZAP_LEAF_MAGIC && size == ZAP_FAT_BLKSZ)
		exercise_leaf(data, size);
	return (0);
}

#ifndef TARN_LIBFUZZER

static void
seed_name(tarn_rand_t *r, char *name, int *lenp, int maxlen)
{
	int len = 1 + (int)tarn_rand_range(r, (uint64_t)maxlen);
	for (int i = 0; i < len; i++)
		name[i] = (char)('!' + tarn_rand_range(r, 90));
	name[len] = '\0';
	*lenp = len;
}

static int
cmp_ent(const void *a, const void *b)
{
	uint64_t x = ((const zap_micro_ent_t *)a)->me_key;
	uint64_t y = ((const zap_micro_ent_t *)b)->me_key;
	return (x < y ? -1 : x > y);
}

/* A valid micro block of `size` bytes. */
static void
make_micro(tarn_rand_t *r, uint8_t *buf, size_t size)
{
	memset(buf, 0, size);
	zap_micro_phys_t *zm = (zap_micro_phys_t *)buf;
	zap_micro_ent_t *ents = (zap_micro_ent_t *)(buf + ZAP_MICRO_ENTSZ);
	zm->zm_magic = ZAP_MICRO_MAGIC;
	zm->zm_salt = tarn_rand_u64(r);
	zm->zm_blksz = (uint32_t)size;
	uint32_t n = (uint32_t)tarn_rand_range(r, ZAP_MICRO_CAP(size) + 1);
	for (uint32_t i = 0; i < n; i++) {
		int len;
		seed_name(r, ents[i].me_name, &len, ZAP_MICRO_NAMELEN - 8);
		len += snprintf(ents[i].me_name + len, 8, "#%u", i); /* unique */
		ents[i].me_key = ZAP_KEY(zap_hash(zm->zm_salt, ents[i].me_name, len), 0);
		ents[i].me_value = tarn_rand_u64(r);
	}
	qsort(ents, n, ZAP_MICRO_ENTSZ, cmp_ent);
	zm->zm_nentries = n;
}

/* A valid leaf with random entries. */
static void
make_leaf(tarn_rand_t *r, uint8_t *buf)
{
	zap_leaf_t l = {.l_buf = buf, .l_size = ZAP_FAT_BLKSZ};
	uint64_t salt = tarn_rand_u64(r);
	zap_leaf_init(&l, salt, 0, 0);
	uint8_t val[600];
	for (size_t i = 0; i < sizeof(val); i++)
		val[i] = (uint8_t)i;
	int n = (int)tarn_rand_range(r, 400);
	for (int i = 0; i < n; i++) {
		char name[ZAP_MAXNAMELEN];
		int len;
		seed_name(r, name, &len, tarn_rand_range(r, 4) == 0 ? 255 : 20);
		uint64_t h = zap_hash(salt, name, len);
		uint32_t cd;
		if (zap_leaf_next_cd(&l, h, &cd) != 0)
			break;
		int intsize = tarn_rand_range(r, 2) ? 8 : 1;
		uint64_t num = 1 + tarn_rand_range(r, intsize == 8 ? 4 : 64);
		if (tarn_rand_range(r, 50) == 0)
			num = sizeof(val) / intsize;
		if (zap_leaf_insert(&l, ZAP_KEY(h, cd), name, len, intsize, num, val) != 0)
			break;
		if (tarn_rand_range(r, 5) == 0 && zap_leaf_phys(&l)->zl_nentries > 0)
			zap_leaf_remove(
			    &l, (uint32_t)tarn_rand_range(r, zap_leaf_phys(&l)->zl_nentries));
	}
	if (tarn_rand_range(r, 3) == 0) {
		/* One split: keep the low half as a prefix-1 leaf. */
		zap_leaf_t hi = {.l_buf = tarn_alloc(ZAP_FAT_BLKSZ), .l_size = ZAP_FAT_BLKSZ};
		if (zap_leaf_split(&l, &hi) == 0 && tarn_rand_range(r, 2))
			memcpy(buf, hi.l_buf, ZAP_FAT_BLKSZ);
		tarn_free(hi.l_buf);
	}
}

static void
make_fat_hdr(tarn_rand_t *r, uint8_t *buf)
{
	memset(buf, 0, ZAP_FAT_BLKSZ);
	zap_fat_phys_t *zf = (zap_fat_phys_t *)buf;
	zf->zf_magic = ZAP_FAT_MAGIC;
	zf->zf_salt = tarn_rand_u64(r);
	zf->zf_blkshift = ZAP_FAT_BLKSHIFT;
	zf->zf_tbl_shift = (uint32_t)tarn_rand_range(r, 14);
	zf->zf_nleaves = 1 + tarn_rand_range(r, 1ULL << zf->zf_tbl_shift);
	zf->zf_next_blk = zf->zf_nleaves + 1 + 64;
	zf->zf_nentries = tarn_rand_range(r, 100000);
	if (zf->zf_tbl_shift > ZAP_EMBED_SHIFT) {
		zf->zf_tbl_nblks = (1ULL << zf->zf_tbl_shift) / (ZAP_FAT_BLKSZ / 8);
		zf->zf_tbl_blk = zf->zf_next_blk - zf->zf_tbl_nblks;
	} else {
		uint64_t *tbl = (uint64_t *)(buf + ZAP_EMBED_OFF);
		for (uint64_t i = 0; i < (1ULL << zf->zf_tbl_shift); i++)
			tbl[i] = ZAP_PTR(1 + i % zf->zf_nleaves);
	}
}

static size_t
make_seed(tarn_rand_t *r, uint8_t *buf)
{
	switch (tarn_rand_range(r, 5)) {
	case 0: {
		size_t size = ZAP_MICRO_MIN_BLKSZ << tarn_rand_range(r, 6);
		make_micro(r, buf, size);
		return (size);
	}
	case 1: make_fat_hdr(r, buf); return (ZAP_FAT_BLKSZ);
	case 2: {
		uint64_t *tbl = (uint64_t *)buf;
		for (size_t i = 0; i < ZAP_FAT_BLKSZ / 8; i++)
			tbl[i] = ZAP_PTR(1 + tarn_rand_range(r, 5000));
		return (ZAP_FAT_BLKSZ);
	}
	default: make_leaf(r, buf); return (ZAP_FAT_BLKSZ);
	}
}

static void
mutate(tarn_rand_t *r, uint8_t *buf, size_t *sizep)
{
	size_t size = *sizep;
	int n = 1 + (int)tarn_rand_range(r, 8);
	for (int i = 0; i < n; i++) {
		size_t at = tarn_rand_range(r, size);
		switch (tarn_rand_range(r, 6)) {
		case 0: buf[at] ^= (uint8_t)(1 << tarn_rand_range(r, 8)); break;
		case 1: buf[at] = (uint8_t)tarn_rand_u64(r); break;
		case 2: /* a header field or slot near the start */
			at = tarn_rand_range(r, MIN(size, 256));
			buf[at] = (uint8_t)tarn_rand_u64(r);
			break;
		case 3: { /* a plausible 16-bit offset */
			at = 64 + 2 * tarn_rand_range(r, 64);
			uint16_t v = (uint16_t)tarn_rand_range(r, ZAP_FAT_BLKSZ + 64);
			if (at + 2 <= size)
				memcpy(buf + at, &v, 2);
			break;
		}
		case 4: *sizep = MAX(1, tarn_rand_range(r, size + 1)); return;
		default: break; /* leave valid */
		}
	}
}

int
main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 20000;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
	tarn_rand_t r;
	tarn_rand_seed(&r, seed);
	uint8_t *buf = tarn_alloc(2 * ZAP_FAT_BLKSZ);
	long valid = 0, seeds_ok = 0, nseeds = 0;
	for (long it = 0; it < iters; it++) {
		size_t size = make_seed(&r, buf);
		if (it % 16 == 0) {
			nseeds++;
			if (zap_block_validate(buf, size) == 0)
				seeds_ok++;
			else
				fprintf(stderr, "seed %ld of kind %#" PRIx64 " does not validate\n",
				    it, *(uint64_t *)buf);
		}
		if (tarn_rand_range(&r, 20) == 0) {
			size = tarn_rand_range(&r, 2 * ZAP_FAT_BLKSZ);
			for (size_t i = 0; i < size; i++)
				buf[i] = (uint8_t)tarn_rand_u64(&r);
		} else {
			mutate(&r, buf, &size);
		}
		LLVMFuzzerTestOneInput(buf, size);
		valid += zap_block_validate(buf, size) == 0;
	}
	tarn_free(buf);
	printf("fuzz_zap: %ld inputs (seed %" PRIu64 "), %ld still valid after mutation, "
	       "%ld/%ld seeds valid\n",
	    iters, seed, valid, seeds_ok, nseeds);
	return (seeds_ok == nseeds ? 0 : 1);
}

#endif
