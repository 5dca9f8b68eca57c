/*
 * tarn_hash.c — intrusive chained hash tables (tarn_hash.h).
 *
 * Theory.  A table is a power-of-two array of singly linked chains; an
 * entry's bucket is its hash value's low bits.  The caller's hash function
 * must mix the key into those bits (the tables in Tarn multiply by a
 * 64-bit odd constant and take the high half).  An insert that would take
 * the table past thc_load entries a bucket first doubles the array and
 * moves every entry (bucket by bucket, each chain from its head, onto the
 * head of its new chain): n inserts move fewer than 2n entries in all, so
 * an insert is amortised O(1), and chains average at most thc_load
 * entries.  The doubling is a pause proportional to the table's size
 * under the caller's lock; the tables that use this already paid it (the
 * doubling code they had by hand did the same), and an incremental
 * rehash would add a second table to every lookup.  Tables never shrink
 * while they live (memory is bounded by the largest count they held);
 * tarn_hash_fini frees the array.  Removal walks the entry's chain for
 * its predecessor (one pointer a link, no back pointer), O(thc_load) on
 * average.
 */
#include "tarn_hash.h"

void
tarn_hash_init(tarn_hash_t *h, const tarn_hash_conf_t *conf)
{
	ASSERT(conf->thc_min_buckets != 0 && ISP2(conf->thc_min_buckets));
	ASSERT3U(conf->thc_load, >, 0);
	h->th_buckets = NULL;
	h->th_nbuckets = 0;
	h->th_count = 0;
	h->th_conf = conf;
}

void
tarn_hash_fini(tarn_hash_t *h)
{
	tarn_free(h->th_buckets);
	h->th_buckets = NULL;
	h->th_nbuckets = 0;
	h->th_count = 0;
}

void
tarn_hash_grow_(tarn_hash_t *h)
{
	const tarn_hash_conf_t *c = h->th_conf;
	VERIFY3U(h->th_nbuckets, <, 1U << 31);
	uint32_t nb = h->th_nbuckets != 0 ? h->th_nbuckets * 2 : c->thc_min_buckets;
	tarn_hlink_t **nt = tarn_alloc(sizeof (tarn_hlink_t *) * nb);
	for (uint32_t i = 0; i < h->th_nbuckets; i++) {
		tarn_hlink_t *l = h->th_buckets[i];
		while (l != NULL) {
			tarn_hlink_t *next = l->thl_next;
			uint32_t b = c->thc_hash(l) & (nb - 1);
			l->thl_next = nt[b];
			nt[b] = l;
			l = next;
		}
	}
	tarn_free(h->th_buckets);
	h->th_buckets = nt;
	h->th_nbuckets = nb;
}
