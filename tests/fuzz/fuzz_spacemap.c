/*
 * fuzz_spacemap.c — fuzz target for the space map parser and its replay:
 * space_map_iterate on any bytes, then metaslab_load of a small metaslab.
 * A map that loads must survive a condense round trip to the same state.
 * Damaged input must give an error, never a crash.
 *
 * Input: byte 0 is the synced txg given to the load, the rest is the map.
 * Built with -DTARN_LIBFUZZER for libFuzzer; otherwise main() feeds N
 * seeded inputs (argv[1], default 20000; seed argv[2]): consistent maps
 * from a model, mutated ones, and plain noise.
 */
#include "tarn_util.h"
#include "space.h"
#include "vdev.h"

#define FZ_MSHIFT 16                    /* 64 KiB metaslabs: 128 sectors */
#define FZ_MSIZE  (1ULL << FZ_MSHIFT)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static long fz_loads;   /* inputs whose map loaded (for the driver's report) */

static int
fz_count_cb(void *arg, const sm_entry_t *e)
{
	VERIFY(e->sme_size > 0 && e->sme_offset + e->sme_size <= *(uint64_t *)arg);
	return (0);
}

typedef struct fz_state {
	uint64_t fs_v[3 * 512];
	int      fs_n;
	uint64_t fs_base;
} fz_state_t;

static void
fz_seg_cb(void *arg, uint64_t start, uint64_t size)
{
	fz_state_t *s = arg;
	VERIFY(s->fs_n < 512);
	s->fs_v[3 * s->fs_n] = 0;
	s->fs_v[3 * s->fs_n + 1] = start - s->fs_base;
	s->fs_v[3 * s->fs_n + 2] = size;
	s->fs_n++;
}

static void
fz_defer_cb(void *arg, uint64_t txg, uint64_t start, uint64_t size)
{
	fz_state_t *s = arg;
	fz_seg_cb(arg, start, size);
	s->fs_v[3 * (s->fs_n - 1)] = txg;
}

static void
fz_state(metaslab_t *ms, fz_state_t *s)
{
	memset(s, 0, sizeof (*s));
	s->fs_base = metaslab_start(ms);
	metaslab_walk_free(ms, fz_seg_cb, s);
	s->fs_v[3 * s->fs_n++] = UINT64_MAX;    /* separator */
	metaslab_walk_deferred(ms, fz_defer_cb, s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return (0);
	uint64_t synced = data[0];
	const uint8_t *map = data + 1;
	size_t len = size - 1;

	uint64_t sizes[] = { FZ_MSIZE, 512, 0, UINT64_MAX };
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++)
		(void) space_map_iterate(map, len, sizes[i], fz_count_cb, &sizes[i]);

	/* A vdev of four 64 KiB metaslabs, the last one 512 bytes short. */
	vdev_t *vd = vdev_alloc(VDEV_TYPE_FILE, 1);
	vdev_set_asize(vd, 4 * FZ_MSIZE - 512);
	vdev_set_ashift(vd, 9);
	vdev_set_ms_shift(vd, FZ_MSHIFT);
	metaslab_class_t *mc = metaslab_class_create();
	metaslab_group_t *mg = metaslab_group_create(mc, vd);
	metaslab_t *ms = metaslab_group_get(mg, 0);
	metaslab_t *last = metaslab_group_get(mg, 3);
	(void) metaslab_load(last, map, len - len % SM_ENTRY_SIZE, synced);
	if (metaslab_load(ms, map, len - len % SM_ENTRY_SIZE, synced) == 0) {
		fz_loads++;
		/* Condense at the next txg; a fresh load must agree. */
		void *buf;
		size_t blen;
		VERIFY0(metaslab_condense(ms, synced + 1, &buf, &blen));
		metaslab_class_sync_done(mc, synced + 1);
		metaslab_t *copy = metaslab_group_get(mg, 1);
		VERIFY0(metaslab_load(copy, buf, blen, synced + 1));
		tarn_free(buf);
		fz_state_t *a = tarn_alloc(sizeof (*a)), *b = tarn_alloc(sizeof (*b));
		fz_state(ms, a);
		fz_state(copy, b);
		VERIFY(memcmp(a, b, sizeof (*a) - sizeof (a->fs_base)) == 0);
		tarn_free(a);
		tarn_free(b);
		/* and the loaded metaslab works */
		dva_t d;
		if (metaslab_alloc(mc, 512, 1, synced + 2, &d) == 0)
			metaslab_free(mc, &d, synced + 2, synced + 2);
	}
	metaslab_class_destroy(mc);
	vdev_free(vd);
	return (0);
}

#ifndef TARN_LIBFUZZER

/* A consistent map of random changes over a few txgs (a 128-sector model). */
static size_t
fz_gen_map(tarn_rand_t *r, uint8_t *out, size_t cap, uint64_t *last_txg)
{
	uint8_t used[FZ_MSIZE >> 9] = { 0 };
	const uint64_t nsec = FZ_MSIZE >> 9;
	uint64_t txg = 1 + tarn_rand_range(r, 20);
	size_t n = 0;
	int entries = (int)tarn_rand_range(r, 40);
	for (int i = 0; i < entries && n + 2 * SM_ENTRY_SIZE <= cap; i++) {
		if (i == 0 || tarn_rand_range(r, 4) == 0) {
			txg += tarn_rand_range(r, 3);
			sm_entry_t m = { .sme_type = SM_TXG, .sme_txg = txg };
			space_map_encode(&m, out + n);
			n += SM_ENTRY_SIZE;
		}
		uint64_t s = tarn_rand_range(r, nsec), len = 1;
		uint8_t v = used[s];
		while (s + len < nsec && used[s + len] == v && len < 16)
			len++;
		len = 1 + tarn_rand_range(r, len);
		sm_entry_t e = { .sme_offset = s << 9, .sme_size = len << 9 };
		e.sme_type = v ? (tarn_rand_range(r, 3) ? SM_FREE : SM_FREE_NOW) : SM_ALLOC;
		memset(used + s, !v, len);
		space_map_encode(&e, out + n);
		n += SM_ENTRY_SIZE;
	}
	*last_txg = txg;
	return (n);
}

static void
fz_mutate(tarn_rand_t *r, uint8_t *buf, size_t *len, size_t cap)
{
	int k = (int)tarn_rand_range(r, 4);
	for (int i = 0; i < k && *len > 0; i++) {
		switch (tarn_rand_range(r, 5)) {
		case 0:     /* flip a bit */
			buf[tarn_rand_range(r, *len)] ^= (uint8_t)(1u << tarn_rand_range(r, 8));
			break;
		case 1:     /* a random byte */
			buf[tarn_rand_range(r, *len)] = (uint8_t)tarn_rand_u64(r);
			break;
		case 2:     /* truncate */
			*len = tarn_rand_range(r, *len + 1);
			break;
		case 3:     /* duplicate an entry */
			if (*len >= 1 + SM_ENTRY_SIZE && *len + SM_ENTRY_SIZE <= cap) {
				size_t e = 1 + SM_ENTRY_SIZE * tarn_rand_range(r, (*len - 1) / SM_ENTRY_SIZE);
				memcpy(buf + *len, buf + e, SM_ENTRY_SIZE);
				*len += SM_ENTRY_SIZE;
			}
			break;
		default:    /* a random 64-bit word */
			if (*len >= 9) {
				uint64_t w = tarn_rand_u64(r);
				memcpy(buf + 1 + 8 * tarn_rand_range(r, (*len - 1) / 8), &w, 8);
			}
			break;
		}
	}
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x5eed;
	tarn_rand_t r;
	tarn_rand_seed(&r, seed);
	static uint8_t buf[1 + 64 * SM_ENTRY_SIZE];
	for (long i = 0; i < n; i++) {
		size_t len;
		uint64_t last;
		if (tarn_rand_range(&r, 8) == 0) {
			len = tarn_rand_range(&r, sizeof (buf));
			for (size_t k = 0; k < len; k++)
				buf[k] = (uint8_t)tarn_rand_u64(&r);
		} else {
			len = 1 + fz_gen_map(&r, buf + 1, sizeof (buf) - 1, &last);
			buf[0] = (uint8_t)(last + tarn_rand_range(&r, 5));
			if (tarn_rand_range(&r, 2))
				fz_mutate(&r, buf, &len, sizeof (buf));
		}
		LLVMFuzzerTestOneInput(buf, len);
	}
	printf("fuzz_spacemap: %ld inputs (%ld loaded), seed %#" PRIx64 ", no crash\n",
	    n, fz_loads, seed);
	return (0);
}

#endif
