/* Unit tests of the util layer's containers: tarn_array and tarn_hash. */
#include "tt.h"
#include "tarn_util.h"
#include "tarn_array.h"
#include "tarn_hash.h"

/* ---- tarn_array ---- */

typedef struct big { uint64_t b_v[5]; } big_t;   /* an odd-sized element */

static void
test_array_grow(void)
{
	tarn_array_t a = TARN_ARRAY_INIT(big_t);
	TT_EQ(tarn_array_len(&a), 0);
	TT_CHECK(tarn_array_base(&a) == NULL);
	for (uint64_t i = 0; i < 100000; i++) {
		big_t *b = tarn_array_push(&a);
		for (int k = 0; k < 5; k++)
			TT_EQ(b->b_v[k], 0);          /* pushed zeroed */
		b->b_v[0] = i;
		b->b_v[4] = ~i;
		TT_ASSERT(a.ta_cap >= a.ta_len && a.ta_cap < 2 * a.ta_len + 8);
	}
	TT_EQ(tarn_array_len(&a), 100000);
	for (uint64_t i = 0; i < 100000; i++) {
		big_t *b = tarn_array_get(&a, i);
		TT_EQ(b->b_v[0], i);
		TT_EQ(b->b_v[4], ~i);
		TT_EQ(TARN_ARRAY_AT(&a, big_t, i).b_v[0], i);
	}
	size_t cap = a.ta_cap;
	tarn_array_clear(&a);
	TT_EQ(tarn_array_len(&a), 0);
	TT_EQ(a.ta_cap, cap);                   /* clear keeps the memory */
	tarn_array_fini(&a);
	TT_CHECK(tarn_array_base(&a) == NULL);
	TT_EQ(a.ta_cap, 0);
	TARN_ARRAY_APPEND(&a, big_t, ((big_t){ { 7 } }));   /* usable after fini */
	TT_EQ(TARN_ARRAY_AT(&a, big_t, 0).b_v[0], 7);
	tarn_array_fini(&a);
}

/* After reserve(n), n pushes neither fail nor move the elements. */
static void
test_array_reserve(void)
{
	tarn_array_t a;
	tarn_array_init(&a, sizeof (uint32_t));
	TT_OK(tarn_array_reserve(&a, 1000));
	void *base = tarn_array_base(&a);
	for (uint32_t i = 0; i < 1000; i++) {
		void *e;
		TT_OK(tarn_array_try_push(&a, &e));
		*(uint32_t *)e = i;
		TT_CHECK(tarn_array_base(&a) == base);
	}
	TT_OK(tarn_array_reserve(&a, 0));
	TT_CHECK(tarn_array_base(&a) == base);
	/* sizes past size_t are refused, array unchanged */
	TT_EQ(tarn_array_reserve(&a, SIZE_MAX - 10), ENOMEM);
	TT_EQ(tarn_array_reserve(&a, SIZE_MAX / 2), ENOMEM);
	TT_EQ(tarn_array_len(&a), 1000);
	TT_CHECK(tarn_array_base(&a) == base);
	for (uint32_t i = 0; i < 1000; i++)
		TT_EQ(TARN_ARRAY_AT(&a, uint32_t, i), i);
	size_t n;
	uint32_t *v = tarn_array_steal(&a, &n);
	TT_EQ(n, 1000);
	TT_CHECK(v == base);
	TT_EQ(tarn_array_len(&a), 0);
	TT_CHECK(tarn_array_base(&a) == NULL);
	tarn_free(v);
	v = tarn_array_steal(&a, &n);
	TT_CHECK(v == NULL && n == 0);
}

static int
u64_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return (a < b ? -1 : a > b);
}

/* Random pushes, pops, removes, truncates and sorts against a plain array. */
static void
test_array_model(void)
{
	uint64_t seed = tarn_now_ns();
	printf("  seed %" PRIu64 "\n", seed);
	tarn_rand_t r;
	tarn_rand_seed(&r, seed);
	enum { MAXN = 5000 };
	static uint64_t model[MAXN];
	size_t n = 0;
	tarn_array_t a = TARN_ARRAY_INIT(uint64_t);
	for (int step = 0; step < 200000; step++) {
		uint64_t op = tarn_rand_range(&r, 100);
		if (op < 55 && n < MAXN) {
			uint64_t v = tarn_rand_u64(&r);
			TARN_ARRAY_APPEND(&a, uint64_t, v);
			model[n++] = v;
		} else if (op < 70 && n > 0) {
			TT_EQ(*(uint64_t *)tarn_array_pop(&a), model[--n]);
		} else if (op < 85 && n > 0) {
			size_t i = tarn_rand_range(&r, n);
			tarn_array_remove_swap(&a, i);
			model[i] = model[--n];
		} else if (op < 95 && n > 0) {
			size_t i = tarn_rand_range(&r, n);
			tarn_array_remove(&a, i);
			memmove(&model[i], &model[i + 1], (n - i - 1) * sizeof (uint64_t));
			n--;
		} else if (op < 97) {
			tarn_array_sort(&a, u64_cmp);
			qsort(model, n, sizeof (uint64_t), u64_cmp);
		} else if (op < 98) {
			n = tarn_rand_range(&r, n + 1);
			tarn_array_truncate(&a, n);
		} else if (op < 99 && n > 0) {
			size_t i = tarn_rand_range(&r, n);
			*(uint64_t *)tarn_array_get(&a, i) = model[i] = tarn_rand_u64(&r);
		}
		TT_ASSERT(tarn_array_len(&a) == n);
		if (step % 1000 == 0 || n < 8)
			for (size_t i = 0; i < n; i++)
				TT_EQ(TARN_ARRAY_AT(&a, uint64_t, i), model[i]);
	}
	for (size_t i = 0; i < n; i++)
		TT_EQ(TARN_ARRAY_AT(&a, uint64_t, i), model[i]);
	tarn_array_fini(&a);
}

/*
 * A sorted set kept by tarn_array_insert (at the place a binary search
 * finds) and thinned by tarn_array_remove_range, against a plain array.
 */
static void
test_array_insert(void)
{
	uint64_t seed = tarn_now_ns();
	printf("  seed %" PRIu64 "\n", seed);
	tarn_rand_t r;
	tarn_rand_seed(&r, seed);
	enum { MAXN = 3000 };
	static uint64_t model[MAXN];
	size_t n = 0;
	tarn_array_t a = TARN_ARRAY_INIT(uint64_t);
	/* insert at both ends and in the middle of an empty and a small array */
	*(uint64_t *)tarn_array_insert(&a, 0) = 2;
	*(uint64_t *)tarn_array_insert(&a, 0) = 0;
	*(uint64_t *)tarn_array_insert(&a, 2) = 3;
	TT_EQ(*(uint64_t *)tarn_array_insert(&a, 1), 0);   /* inserted zeroed */
	TARN_ARRAY_AT(&a, uint64_t, 1) = 1;
	for (uint64_t i = 0; i < 4; i++)
		TT_EQ(TARN_ARRAY_AT(&a, uint64_t, i), i);
	tarn_array_remove_range(&a, 1, 2);
	TT_EQ(tarn_array_len(&a), 2);
	TT_EQ(TARN_ARRAY_AT(&a, uint64_t, 0), 0);
	TT_EQ(TARN_ARRAY_AT(&a, uint64_t, 1), 3);
	tarn_array_remove_range(&a, 2, 0);
	tarn_array_remove_range(&a, 0, 2);
	TT_EQ(tarn_array_len(&a), 0);
	/* insert_n: several at once, zeroed, the others moved up */
	TT_CHECK(tarn_array_insert_n(&a, 0, 0) == NULL);
	for (uint64_t i = 0; i < 10; i++)
		TARN_ARRAY_APPEND(&a, uint64_t, i);
	uint64_t *ins = tarn_array_insert_n(&a, 4, 100);
	TT_CHECK(ins == &TARN_ARRAY_AT(&a, uint64_t, 4));
	TT_EQ(tarn_array_len(&a), 110);
	for (uint64_t i = 0; i < 110; i++)
		TT_EQ(TARN_ARRAY_AT(&a, uint64_t, i), i < 4 ? i : i < 104 ? 0 : i - 100);
	tarn_array_remove_range(&a, 4, 100);
	ins = tarn_array_insert_n(&a, 10, 3);       /* at the end */
	ins[0] = 10, ins[1] = 11, ins[2] = 12;
	for (uint64_t i = 0; i < 13; i++)
		TT_EQ(TARN_ARRAY_AT(&a, uint64_t, i), i);
	tarn_array_clear(&a);
	for (int step = 0; step < 100000; step++) {
		if (tarn_rand_range(&r, 100) < 97 && n < MAXN) {
			uint64_t v = tarn_rand_range(&r, 1000000);
			size_t lo = 0, hi = tarn_array_len(&a);
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (TARN_ARRAY_AT(&a, uint64_t, mid) < v)
					lo = mid + 1;
				else
					hi = mid;
			}
			*(uint64_t *)tarn_array_insert(&a, lo) = v;
			memmove(&model[lo + 1], &model[lo], (n - lo) * sizeof (uint64_t));
			model[lo] = v;
			n++;
		} else {
			size_t i = tarn_rand_range(&r, n + 1);
			size_t k = tarn_rand_range(&r, n - i + 1);
			tarn_array_remove_range(&a, i, k);
			memmove(&model[i], &model[i + k], (n - i - k) * sizeof (uint64_t));
			n -= k;
		}
		TT_ASSERT(tarn_array_len(&a) == n);
		if (step % 1000 == 0 || n < 8)
			for (size_t i = 0; i < n; i++)
				TT_EQ(TARN_ARRAY_AT(&a, uint64_t, i), model[i]);
	}
	for (size_t i = 0; i < n; i++) {
		TT_EQ(TARN_ARRAY_AT(&a, uint64_t, i), model[i]);
		if (i > 0)
			TT_ASSERT(model[i - 1] <= model[i]);
	}
	tarn_array_fini(&a);
}

/* A byte buffer filled by tarn_array_append, against a plain buffer. */
static void
test_array_append(void)
{
	tarn_array_t a = TARN_ARRAY_INIT(char);
	static char model[1 << 20];
	char chunk[300];
	size_t n = 0;
	TT_CHECK(tarn_array_append(&a, chunk, 0) == NULL);
	TT_CHECK(tarn_array_base(&a) == NULL);
	for (unsigned i = 0; n + sizeof (chunk) <= sizeof (model); i++) {
		size_t k = (i * 37) % sizeof (chunk);
		for (size_t j = 0; j < k; j++)
			chunk[j] = (char)(i + j);
		char *at = tarn_array_append(&a, chunk, k);
		TT_CHECK(k == 0 || at == (char *)tarn_array_base(&a) + n);
		memcpy(model + n, chunk, k);
		n += k;
		TT_EQ(tarn_array_len(&a), n);
		TT_ASSERT(a.ta_cap < 2 * n + 64 + sizeof (chunk));
	}
	TT_CHECK(memcmp(tarn_array_base(&a), model, n) == 0);
	/* elements larger than a byte are copied whole */
	tarn_array_t w = TARN_ARRAY_INIT(uint64_t);
	uint64_t v[3] = { 1, 2, 3 };
	tarn_array_append(&w, v, 3);
	tarn_array_append(&w, v, 2);
	TT_EQ(tarn_array_len(&w), 5);
	TT_EQ(TARN_ARRAY_AT(&w, uint64_t, 2), 3);
	TT_EQ(TARN_ARRAY_AT(&w, uint64_t, 4), 2);
	tarn_array_fini(&w);
	tarn_array_fini(&a);
}

/* ---- tarn_hash ---- */

typedef struct ent {
	uint64_t     e_key;
	uint64_t     e_val;
	tarn_hlink_t e_link;
} ent_t;

static uint32_t
ent_hashv(uint64_t key)
{
	return ((uint32_t)((key * 0x9E3779B97F4A7C15ULL) >> 32));
}

static uint32_t
ent_hash(const tarn_hlink_t *l)
{
	return (ent_hashv(TARN_HASH_ENTRY(l, ent_t, e_link)->e_key));
}

static const tarn_hash_conf_t ent_conf = { ent_hash, 16, 1 };
static const tarn_hash_conf_t ent_conf2 = { ent_hash, 64, 2 };

static ent_t *
ent_find(tarn_hash_t *h, uint64_t key)
{
	ent_t *e;
	TARN_HASH_FIND(h, ent_hashv(key), e, e_link, e->e_key == key);
	return (e);
}

static ent_t *
ent_add(tarn_hash_t *h, uint64_t key)
{
	ent_t *e = tarn_alloc(sizeof (*e));
	e->e_key = key;
	e->e_val = key * 3;
	tarn_hash_insert(h, ent_hashv(key), &e->e_link);
	return (e);
}

static void
ent_del(tarn_hash_t *h, ent_t *e)
{
	tarn_hash_remove(h, ent_hashv(e->e_key), &e->e_link);
	tarn_free(e);
}

/* Check the load bound and that every chain holds only its own entries. */
static void
hash_check_shape(tarn_hash_t *h)
{
	uint64_t seen = 0;
	TT_ASSERT(h->th_nbuckets == 0 || ISP2(h->th_nbuckets));
	TT_ASSERT(h->th_count <= (uint64_t)h->th_nbuckets * h->th_conf->thc_load);
	for (uint32_t b = 0; b < h->th_nbuckets; b++)
		for (tarn_hlink_t *l = h->th_buckets[b]; l != NULL; l = l->thl_next) {
			TT_ASSERT((ent_hash(l) & (h->th_nbuckets - 1)) == b);
			seen++;
		}
	TT_EQ(seen, h->th_count);
}

/* Many doublings; every entry found after them; deletes during and after growth. */
static void
test_hash_grow(void)
{
	const tarn_hash_conf_t *confs[] = { &ent_conf, &ent_conf2 };
	for (int c = 0; c < 2; c++) {
		tarn_hash_t h;
		tarn_hash_init(&h, confs[c]);
		TT_CHECK(ent_find(&h, 1) == NULL);      /* empty, no buckets */
		uint32_t nb = 0;
		int grows = 0;
		const uint64_t N = 200000;
		for (uint64_t k = 0; k < N; k++) {
			ent_add(&h, k * 7);
			if (k % 3 == 2)                 /* delete while growing */
				ent_del(&h, ent_find(&h, (k - 1) * 7));
			if (h.th_nbuckets != nb) {
				grows++;
				nb = h.th_nbuckets;
				hash_check_shape(&h);
			}
		}
		TT_CHECK(grows >= 10);
		hash_check_shape(&h);
		for (uint64_t k = 0; k < N; k++) {
			ent_t *e = ent_find(&h, k * 7);
			if (k % 3 == 1 && k + 1 < N) {
				TT_CHECK(e == NULL);
			} else {
				TT_ASSERT(e != NULL);
				TT_EQ(e->e_val, k * 21);
			}
			TT_CHECK(ent_find(&h, k * 7 + 1) == NULL);
		}
		/* delete every other entry after growth; the rest stay findable */
		for (uint64_t k = 0; k < N; k += 2)
			if (ent_find(&h, k * 7) != NULL)
				ent_del(&h, ent_find(&h, k * 7));
		hash_check_shape(&h);
		TT_EQ(h.th_nbuckets, nb);               /* never shrinks */
		for (uint64_t k = 1; k < N; k += 2)
			TT_CHECK((ent_find(&h, k * 7) != NULL) == (k % 3 != 1 || k + 1 == N));
		/* the walk sees each entry once and may free the current one */
		uint64_t n = 0, count = tarn_hash_count(&h);
		ent_t *e;
		TARN_HASH_FOREACH(&h, e, e_link) {
			n++;
			ent_del(&h, e);
		}
		TT_EQ(n, count);
		TT_EQ(tarn_hash_count(&h), 0);
		tarn_hash_fini(&h);
		TT_CHECK(h.th_buckets == NULL && ent_find(&h, 7) == NULL);
		ent_add(&h, 5);                         /* usable after fini */
		TT_CHECK(ent_find(&h, 5) != NULL);
		TT_EQ(h.th_nbuckets, confs[c]->thc_min_buckets);
		ent_del(&h, ent_find(&h, 5));
		tarn_hash_fini(&h);
	}
}

/* A break in TARN_HASH_FOREACH leaves the walk. */
static void
test_hash_walk_break(void)
{
	tarn_hash_t h;
	tarn_hash_init(&h, &ent_conf);
	for (uint64_t k = 0; k < 100; k++)
		ent_add(&h, k);
	int n = 0;
	ent_t *e;
	TARN_HASH_FOREACH(&h, e, e_link) {
		if (++n == 10)
			break;
	}
	TT_EQ(n, 10);
	TARN_HASH_FOREACH(&h, e, e_link)
		tarn_free(e);
	tarn_hash_fini(&h);
}

/* Random inserts, deletes and lookups against a direct-mapped model. */
static void
test_hash_model(void)
{
	uint64_t seed = tarn_now_ns();
	printf("  seed %" PRIu64 "\n", seed);
	tarn_rand_t r;
	tarn_rand_seed(&r, seed);
	enum { KEYS = 20000 };
	static ent_t *model[KEYS];
	memset(model, 0, sizeof (model));
	uint32_t n = 0;
	tarn_hash_t h;
	tarn_hash_init(&h, &ent_conf);
	for (int step = 0; step < 300000; step++) {
		/* phases: mostly insert, then mostly delete, and so on */
		bool grow = (step / 50000) % 2 == 0;
		uint64_t k = tarn_rand_range(&r, KEYS);
		uint64_t op = tarn_rand_range(&r, 10);
		ent_t *e = ent_find(&h, k);
		TT_ASSERT(e == model[k]);
		if (op < (grow ? 6u : 3u)) {
			if (e == NULL) {
				model[k] = ent_add(&h, k);
				n++;
			}
		} else if (op < 8) {
			if (e != NULL) {
				ent_del(&h, e);
				model[k] = NULL;
				n--;
			}
		}
		TT_ASSERT(tarn_hash_count(&h) == n);
		if (step % 20000 == 0)
			hash_check_shape(&h);
	}
	for (uint64_t k = 0; k < KEYS; k++)
		TT_ASSERT(ent_find(&h, k) == model[k]);
	uint32_t walked = 0;
	ent_t *e;
	TARN_HASH_FOREACH(&h, e, e_link) {
		TT_ASSERT(model[e->e_key] == e);
		model[e->e_key] = NULL;             /* each entry once */
		walked++;
		ent_del(&h, e);
	}
	TT_EQ(walked, n);
	tarn_hash_fini(&h);
}

TT_MAIN(
	{ "array_grow", test_array_grow },
	{ "array_reserve", test_array_reserve },
	{ "array_model", test_array_model },
	{ "array_insert", test_array_insert },
	{ "array_append", test_array_append },
	{ "hash_grow", test_hash_grow },
	{ "hash_walk_break", test_hash_walk_break },
	{ "hash_model", test_hash_model },
)
