/*
 * fuzz_label.c — fuzz target for the label parsers: the label config
 * decoder (vdev_config_decode) and the uberblock check
 * (uberblock_verify).  Damaged input must give an error, never a crash
 * or a leak.  Each input is decoded as given and once more resealed
 * (vdev_config_seal), so that mutations get past the checksum and reach
 * the structural checks.
 *
 * With libFuzzer: build with -DTARN_LIBFUZZER -fsanitize=fuzzer.  With
 * plain gcc, main() below feeds N (argv[1], default 20000) inputs made
 * by mutating valid encoded configs and uberblocks with a seeded PRNG
 * (argv[2], default 1).
 */
#include "vdev.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
walk_tree(const vdev_t *vd, uint64_t *count)
{
	(*count)++;
	(void) vdev_type_name(vd);
	for (int c = 0; c < vdev_children(vd); c++)
		walk_tree(vdev_child(vd, c), count);
}

static int
decode_one(const uint8_t *data, size_t size)
{
	vdev_label_config_t cfg;
	int err = vdev_config_decode(data, size, &cfg);
	if (err == 0) {
		uint64_t n = 0;
		walk_tree(cfg.vlc_tree, &n);
		if (cfg.vlc_leaf_guid != 0 &&
		    vdev_lookup_guid(cfg.vlc_tree, cfg.vlc_leaf_guid) == NULL)
			abort();
		vdev_config_free(&cfg);
	} else if (cfg.vlc_tree != NULL) {
		abort();      /* a failed decode must not hand out a tree */
	}
	return (err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void) decode_one(data, size);
	uint8_t *copy = malloc(size ? size : 1);
	if (copy == NULL)
		return (0);
	memcpy(copy, data, size);
	vdev_config_seal(copy, size);
	(void) decode_one(copy, size);
	free(copy);
	for (size_t off = 0; off + sizeof (uberblock_t) <= size; off += 1024) {
		uberblock_t ub;
		memcpy(&ub, data + off, sizeof (ub));
		(void) uberblock_verify(&ub);
	}
	return (0);
}

#ifndef TARN_LIBFUZZER

/* ---- seeds: valid encodings to mutate ---- */

static vdev_t *
leaf(const char *path)
{
	vdev_t *l = vdev_alloc(VDEV_TYPE_FILE, 0);
	vdev_set_path(l, path);
	vdev_set_ashift(l, 12);
	return (l);
}

static vdev_t *
seed_tree(int kind)
{
	vdev_t *root = vdev_alloc(VDEV_TYPE_ROOT, 0);
	char p[64];
	if (kind == 0) {
		vdev_set_asize(root, 1);
		vdev_add_child(root, leaf("/dev/sda"));
		return (root);
	}
	vdev_t *z = vdev_alloc(VDEV_TYPE_RAIDZ, 0);
	vdev_set_nparity(z, kind);
	vdev_set_ms_shift(z, 29);
	vdev_set_ms_count(z, 200);
	for (int i = 0; i < kind + 2; i++) {
		snprintf(p, sizeof (p), "/dev/disk/by-id/ata-%d", i);
		vdev_add_child(z, leaf(p));
	}
	vdev_add_child(root, z);
	vdev_t *m = vdev_alloc(VDEV_TYPE_MIRROR, 0);
	vdev_add_child(m, leaf("/tmp/a"));
	vdev_t *miss = vdev_alloc(VDEV_TYPE_MISSING, 0);
	if (kind != 2)
		vdev_set_path(miss, "/tmp/b");
	vdev_add_child(m, miss);
	vdev_add_child(root, m);
	vdev_add_child(root, leaf("/x"));
	/* device lifecycle: a replacing pair, missed txgs, spares (one in use) */
	vdev_t *old = vdev_child(z, 1);
	vdev_t *rp = vdev_group_insert(&old, VDEV_TYPE_REPLACING);
	vdev_t *nw = leaf("/dev/disk/by-id/new");
	vdev_set_dtl_txg(nw, 1);
	vdev_set_dtl_last(nw, kind == 3 ? VDEV_DTL_OPEN : 70);
	vdev_add_child(rp, nw);
	vdev_set_spares(root, vdev_alloc(VDEV_TYPE_ROOT, 0));
	vdev_t *sp = leaf("/dev/spare0");
	vdev_add_child(vdev_spares(root), sp);
	vdev_add_child(vdev_spares(root), leaf("/dev/spare1"));
	if (kind >= 2) {
		vdev_t *a = vdev_child(m, 0);
		vdev_t *sg = vdev_group_insert(&a, VDEV_TYPE_SPARE);
		vdev_t *inuse = vdev_alloc(VDEV_TYPE_FILE, vdev_guid(sp));
		vdev_set_path(inuse, "/dev/spare0");
		vdev_set_dtl_txg(inuse, 5);
		vdev_set_dtl_last(inuse, 5);
		vdev_add_child(sg, inuse);
	}
	/* allocation classes: a log leaf, a hole, a special mirror, cache devices */
	if (kind >= 1) {
		vdev_t *lg = leaf("/dev/log0");
		vdev_set_alloc_bias(lg, VDEV_BIAS_LOG);
		vdev_add_child(root, lg);
		vdev_add_child(root, vdev_alloc(VDEV_TYPE_HOLE, 0));
		vdev_t *sm = vdev_alloc(VDEV_TYPE_MIRROR, 0);
		vdev_add_child(sm, leaf("/dev/special0"));
		vdev_add_child(sm, leaf("/dev/special1"));
		vdev_set_alloc_bias(sm, VDEV_BIAS_SPECIAL);
		vdev_add_child(root, sm);
		vdev_set_l2cache(root, vdev_alloc(VDEV_TYPE_ROOT, 0));
		vdev_add_child(vdev_l2cache(root), leaf("/dev/cache0"));
		if (kind >= 2)
			vdev_add_child(vdev_l2cache(root), leaf("/dev/cache1"));
	}
	return (root);
}

static size_t
encode_seed(int kind, uint8_t *buf, size_t bufsize)
{
	vdev_t *root = seed_tree(kind);
	vdev_label_config_t cfg;
	memset(&cfg, 0, sizeof (cfg));
	snprintf(cfg.vlc_name, sizeof (cfg.vlc_name), "pool%d", kind);
	cfg.vlc_pool_guid = 1000 + (uint64_t)kind;
	cfg.vlc_txg = 77;
	vdev_t *lf = vdev_child(root, 0);
	while (vdev_children(lf) > 0)
		lf = vdev_child(lf, vdev_children(lf) - 1);
	VERIFY0(vdev_config_encode(&cfg, root, lf, buf, bufsize));
	vdev_free(root);
	uint32_t paylen;
	memcpy(&paylen, buf + 28, 4);     /* docs/FORMAT.md: payload length */
	return (64 + (size_t)paylen);
}

static const uint32_t interesting[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 63, 64,
	127, 128, 255, 256, 511, 512, 1023, 1024, 4096, 65535, 0x7fffffff,
	0x80000000, 0xfffffffe, 0xffffffff };

static void
mutate(tarn_rand_t *r, uint8_t *buf, size_t *len, size_t cap)
{
	int nmut = 1 + (int)tarn_rand_range(r, 6);
	for (int m = 0; m < nmut; m++) {
		size_t n = *len;
		switch (tarn_rand_range(r, 6)) {
		case 0:     /* flip bits */
			if (n > 0)
				buf[tarn_rand_range(r, n)] ^= (uint8_t)(1u << tarn_rand_range(r, 8));
			break;
		case 1:     /* a random byte */
			if (n > 0)
				buf[tarn_rand_range(r, n)] = (uint8_t)tarn_rand_u64(r);
			break;
		case 2: {   /* an interesting 32-bit value at a 4-aligned spot */
			if (n < 4)
				break;
			uint32_t v = interesting[tarn_rand_range(r, sizeof (interesting) /
			    sizeof (interesting[0]))];
			size_t at = tarn_rand_range(r, n / 4) * 4;
			memcpy(buf + at, &v, 4);
			break;
		}
		case 3:     /* truncate */
			*len = tarn_rand_range(r, n + 1);
			break;
		case 4: {   /* grow with garbage */
			size_t add = tarn_rand_range(r, 300);
			if (n + add > cap)
				add = cap - n;
			for (size_t i = 0; i < add; i++)
				buf[n + i] = (uint8_t)tarn_rand_u64(r);
			*len = n + add;
			break;
		}
		default: {  /* copy a chunk over another (records over records) */
			if (n < 256)
				break;
			size_t l = 1 + tarn_rand_range(r, 128);
			size_t from = tarn_rand_range(r, n - l), to = tarn_rand_range(r, n - l);
			memmove(buf + to, buf + from, l);
			break;
		}
		}
	}
}

int
main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 20000;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
	enum { NSEEDS = 4, CAP = VDEV_LABEL_CONFIG_SIZE };
	static uint8_t seeds[NSEEDS][CAP], buf[CAP];
	size_t seedlen[NSEEDS];
	tarn_rand_t r;
	tarn_rand_seed(&r, seed);
	for (int k = 0; k < NSEEDS; k++)
		seedlen[k] = encode_seed(k, seeds[k], CAP);

	long decoded = 0;
	for (long i = 0; i < iters; i++) {
		size_t len;
		int what = (int)tarn_rand_range(&r, 10);
		if (what == 0) {          /* pure noise */
			len = tarn_rand_range(&r, 4096);
			for (size_t j = 0; j < len; j++)
				buf[j] = (uint8_t)tarn_rand_u64(&r);
		} else if (what == 1) {   /* a sealed uberblock, mutated */
			uberblock_t ub;
			memset(&ub, 0, sizeof (ub));
			ub.ub_magic = UBERBLOCK_MAGIC;
			ub.ub_txg = tarn_rand_u64(&r);
			uberblock_seal(&ub);
			memcpy(buf, &ub, sizeof (ub));
			len = sizeof (ub);
			mutate(&r, buf, &len, CAP);
		} else {
			int k = (int)tarn_rand_range(&r, NSEEDS);
			len = seedlen[k];
			memcpy(buf, seeds[k], len);
			mutate(&r, buf, &len, CAP);
		}
		uint8_t *copy = malloc(len ? len : 1);
		memcpy(copy, buf, len);
		vdev_config_seal(copy, len);
		if (decode_one(copy, len) == 0)
			decoded++;
		free(copy);
		LLVMFuzzerTestOneInput(buf, len);
	}
	/* The unmutated seeds must decode. */
	for (int k = 0; k < NSEEDS; k++)
		if (decode_one(seeds[k], seedlen[k]) != 0) {
			fprintf(stderr, "fuzz_label: seed %d does not decode\n", k);
			return (1);
		}
	printf("fuzz_label: %ld inputs, %ld decoded after resealing\n", iters, decoded);
	return (0);
}

#endif
