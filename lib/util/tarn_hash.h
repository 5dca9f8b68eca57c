/*
 * tarn_hash.h — an intrusive chained hash table: the caller embeds a
 * tarn_hlink_t in its struct, computes each entry's 32-bit hash value,
 * and compares keys inline (TARN_HASH_FIND is a macro: no call per
 * comparison).  The table allocates only its bucket array, never per
 * entry, and has no lock: the caller's lock guards it.  Theory in
 * tarn_hash.c.
 */
#ifndef TARN_HASH_H
#define TARN_HASH_H

#include "tarn_util.h"

typedef struct tarn_hlink {
	struct tarn_hlink *thl_next;    /* bucket chain */
} tarn_hlink_t;

/* How a kind of table grows; one static const a kind. */
typedef struct tarn_hash_conf {
	/* an entry's hash value, the one it was inserted with (used to regrow) */
	uint32_t (*thc_hash)(const tarn_hlink_t *);
	uint32_t thc_min_buckets;   /* first bucket count, a power of 2 */
	uint32_t thc_load;          /* double when an insert would pass thc_load a bucket */
} tarn_hash_conf_t;

typedef struct tarn_hash {
	tarn_hlink_t **th_buckets;      /* th_nbuckets chains, or NULL */
	uint32_t th_nbuckets;           /* 0 or a power of 2 */
	uint32_t th_count;              /* entries */
	const tarn_hash_conf_t *th_conf;
} tarn_hash_t;

/* The struct of type `type` whose member `member` is link l. */
#define TARN_HASH_ENTRY(l, type, member) \
	((type *)(void *)((char *)(l) - offsetof(type, member)))

void tarn_hash_init(tarn_hash_t *h, const tarn_hash_conf_t *conf);
/*
 * Free the bucket array (the entries are the caller's: free them first,
 * e.g. with TARN_HASH_FOREACH).  The table stays usable, empty.
 */
void tarn_hash_fini(tarn_hash_t *h);
/* Out of line: double the bucket array (insert's slow path). */
void tarn_hash_grow_(tarn_hash_t *h);

static inline uint32_t
tarn_hash_count(const tarn_hash_t *h)
{
	return (h->th_count);
}

/* The first link of hash value hv's chain (NULL when none). */
static inline tarn_hlink_t *
tarn_hash_chain(const tarn_hash_t *h, uint32_t hv)
{
	if (h->th_nbuckets == 0)
		return (NULL);
	return (h->th_buckets[hv & (h->th_nbuckets - 1)]);
}

/* Bucket b's chain (b < th_nbuckets), for walks that resume by bucket. */
static inline tarn_hlink_t *
tarn_hash_bucket(const tarn_hash_t *h, uint32_t b)
{
	ASSERT3U(b, <, h->th_nbuckets);
	return (h->th_buckets[b]);
}

/*
 * Set var (a pointer to the entry type) to the first entry of hash value
 * hv's chain for which the expression match (which may use var) is true,
 * or to NULL.  Usage:
 *	dnode_t *dn;
 *	TARN_HASH_FIND(&os->os_dnodes, dn_hash(obj), dn, dn_link, dn->dn_object == obj);
 */
#define TARN_HASH_FIND(h, hv, var, member, match) do {				\
	tarn_hlink_t *thf_l_ = tarn_hash_chain((h), (hv));			\
	for ((var) = NULL; thf_l_ != NULL; thf_l_ = thf_l_->thl_next) {		\
		(var) = TARN_HASH_ENTRY(thf_l_, __typeof__(*(var)), member);	\
		if (match)							\
			break;							\
		(var) = NULL;							\
	}									\
} while (0)

/*
 * Add an entry that is not in the table (the caller looked) at the head
 * of its chain; grows the table first when it is full.  hv must be what
 * the conf's thc_hash returns for this entry.
 */
static inline void
tarn_hash_insert(tarn_hash_t *h, uint32_t hv, tarn_hlink_t *l)
{
	if (h->th_count >= (uint64_t)h->th_nbuckets * h->th_conf->thc_load)
		tarn_hash_grow_(h);
	tarn_hlink_t **b = &h->th_buckets[hv & (h->th_nbuckets - 1)];
	l->thl_next = *b;
	*b = l;
	h->th_count++;
}

/* Take an entry that is in the table (inserted with hash value hv) out. */
static inline void
tarn_hash_remove(tarn_hash_t *h, uint32_t hv, tarn_hlink_t *l)
{
	tarn_hlink_t **pp = &h->th_buckets[hv & (h->th_nbuckets - 1)];
	while (*pp != l)
		pp = &(*pp)->thl_next;
	*pp = l->thl_next;
	h->th_count--;
}

/* A walk over every entry, bucket by bucket, each chain from its head. */
typedef struct tarn_hash_iter {
	const tarn_hash_t *thi_h;
	uint32_t      thi_b;        /* the next bucket to start */
	tarn_hlink_t *thi_cur;      /* the entry returned last */
	tarn_hlink_t *thi_next;     /* the next entry of the current chain */
} tarn_hash_iter_t;

static inline tarn_hash_iter_t
tarn_hash_iter_start(const tarn_hash_t *h)
{
	tarn_hash_iter_t it = { h, 0, NULL, NULL };
	return (it);
}

/*
 * Step to the next entry (it->thi_cur); false at the end.  The entry
 * returned last may be removed (and freed) before the next step; no
 * other entry may be, and nothing may be inserted during a walk.
 */
static inline bool
tarn_hash_iter_next(tarn_hash_iter_t *it)
{
	while (it->thi_next == NULL) {
		if (it->thi_b >= it->thi_h->th_nbuckets)
			return (false);
		it->thi_next = it->thi_h->th_buckets[it->thi_b++];
	}
	it->thi_cur = it->thi_next;
	it->thi_next = it->thi_cur->thl_next;
	return (true);
}

/*
 * for each entry var (a pointer to the entry type) of table h; `break`
 * leaves the walk; removing (and freeing) var in the body is allowed.
 */
#define TARN_HASH_FOREACH(h, var, member)					\
	for (tarn_hash_iter_t thfe_it_ = tarn_hash_iter_start(h);		\
	    tarn_hash_iter_next(&thfe_it_) &&					\
	    ((var) = TARN_HASH_ENTRY(thfe_it_.thi_cur, __typeof__(*(var)), member), true); )

#endif /* TARN_HASH_H */
