/*
 * tarn_fuse_nodes.c — the node table: for every inode the kernel holds,
 * how many lookups it has been given and not yet forgotten.  The counts
 * mirror the posix layer's references (see "Lookup counts" in
 * tarn_fuse.c); the table exists so that an unmount can give back what
 * the kernel never forgets explicitly, and so that invalidate_all knows
 * which inodes the kernel caches; it also keeps the error of a failed
 * write-back write until fsync or close reports it.  Sharded by inode number, one mutex a
 * shard, each shard a chained hash table that doubles when loaded.
 */
#include "tarn_fuse_impl.h"

static uint64_t
node_hash(posix_ino_t ino)
{
	uint64_t h = ino * 0x9e3779b97f4a7c15ULL;
	return (h ^ (h >> 29));
}

static tarn_fuse_shard_t *
node_shard(tarn_fuse_nodes_t *n, posix_ino_t ino)
{
	return (&n->tns_shard[node_hash(ino) % TF_NODE_SHARDS]);
}

static tarn_fuse_node_t **
node_slot(tarn_fuse_shard_t *s, posix_ino_t ino)
{
	uint64_t b = (node_hash(ino) / TF_NODE_SHARDS) & (s->ts_nbuckets - 1);
	tarn_fuse_node_t **pp = &s->ts_buckets[b];
	while (*pp != NULL && (*pp)->tn_ino != ino)
		pp = &(*pp)->tn_next;
	return (pp);
}

void
tarn_fuse_nodes_init(tarn_fuse_nodes_t *n)
{
	for (int i = 0; i < TF_NODE_SHARDS; i++) {
		tarn_fuse_shard_t *s = &n->tns_shard[i];
		VERIFY0(pthread_mutex_init(&s->ts_lock, NULL));
		s->ts_nbuckets = 64;
		s->ts_buckets = tarn_alloc(s->ts_nbuckets * sizeof (tarn_fuse_node_t *));
		s->ts_count = 0;
		s->ts_lookups = 0;
	}
}

void
tarn_fuse_nodes_fini(tarn_fuse_nodes_t *n)
{
	for (int i = 0; i < TF_NODE_SHARDS; i++) {
		tarn_fuse_shard_t *s = &n->tns_shard[i];
		VERIFY3U(s->ts_count, ==, 0);
		tarn_free(s->ts_buckets);
		VERIFY0(pthread_mutex_destroy(&s->ts_lock));
	}
}

/* Double the bucket array (s->ts_lock held). */
static void
node_grow(tarn_fuse_shard_t *s)
{
	uint64_t nb = s->ts_nbuckets * 2;
	tarn_fuse_node_t **nbk = tarn_alloc(nb * sizeof (tarn_fuse_node_t *));
	for (uint64_t i = 0; i < s->ts_nbuckets; i++) {
		tarn_fuse_node_t *tn = s->ts_buckets[i], *next;
		for (; tn != NULL; tn = next) {
			next = tn->tn_next;
			uint64_t b = (node_hash(tn->tn_ino) / TF_NODE_SHARDS) & (nb - 1);
			tn->tn_next = nbk[b];
			nbk[b] = tn;
		}
	}
	tarn_free(s->ts_buckets);
	s->ts_buckets = nbk;
	s->ts_nbuckets = nb;
}

void
tarn_fuse_nodes_ref(tarn_fuse_nodes_t *n, posix_ino_t ino)
{
	tarn_fuse_shard_t *s = node_shard(n, ino);
	pthread_mutex_lock(&s->ts_lock);
	tarn_fuse_node_t **pp = node_slot(s, ino);
	if (*pp == NULL) {
		tarn_fuse_node_t *tn = tarn_alloc(sizeof (*tn));
		tn->tn_ino = ino;
		*pp = tn;
		if (++s->ts_count > 2 * s->ts_nbuckets)
			node_grow(s);
		pp = node_slot(s, ino);
	}
	(*pp)->tn_nlookup++;
	s->ts_lookups++;
	pthread_mutex_unlock(&s->ts_lock);
}

uint64_t
tarn_fuse_nodes_unref(tarn_fuse_nodes_t *n, posix_ino_t ino, uint64_t count)
{
	tarn_fuse_shard_t *s = node_shard(n, ino);
	pthread_mutex_lock(&s->ts_lock);
	tarn_fuse_node_t **pp = node_slot(s, ino);
	tarn_fuse_node_t *tn = *pp;
	uint64_t held = tn != NULL ? tn->tn_nlookup : 0;
	if (count > held) {
		tarn_dprintf("fuse: forget of %" PRIu64 " lookups of inode %" PRIu64
		    " that has %" PRIu64 "\n", count, ino, held);
		count = held;
	}
	if (tn != NULL) {
		tn->tn_nlookup -= count;
		s->ts_lookups -= count;
		if (tn->tn_nlookup == 0) {
			*pp = tn->tn_next;
			s->ts_count--;
			tarn_free(tn);
		}
	}
	pthread_mutex_unlock(&s->ts_lock);
	return (count);
}

void
tarn_fuse_nodes_walk(tarn_fuse_nodes_t *n, tarn_fuse_node_fn_t fn, void *arg)
{
	for (int i = 0; i < TF_NODE_SHARDS; i++) {
		tarn_fuse_shard_t *s = &n->tns_shard[i];
		int stop = 0;
		pthread_mutex_lock(&s->ts_lock);
		for (uint64_t b = 0; b < s->ts_nbuckets && !stop; b++) {
			for (tarn_fuse_node_t *tn = s->ts_buckets[b]; tn != NULL && !stop;
			    tn = tn->tn_next)
				stop = fn(arg, tn->tn_ino, tn->tn_nlookup);
		}
		pthread_mutex_unlock(&s->ts_lock);
		if (stop)
			return;
	}
}

void
tarn_fuse_nodes_drain(tarn_fuse_nodes_t *n, tarn_fuse_node_fn_t fn, void *arg)
{
	for (int i = 0; i < TF_NODE_SHARDS; i++) {
		tarn_fuse_shard_t *s = &n->tns_shard[i];
		pthread_mutex_lock(&s->ts_lock);
		for (uint64_t b = 0; b < s->ts_nbuckets; b++) {
			tarn_fuse_node_t *tn = s->ts_buckets[b], *next;
			for (; tn != NULL; tn = next) {
				next = tn->tn_next;
				(void) fn(arg, tn->tn_ino, tn->tn_nlookup);
				tarn_free(tn);
			}
			s->ts_buckets[b] = NULL;
		}
		s->ts_count = 0;
		s->ts_lookups = 0;
		pthread_mutex_unlock(&s->ts_lock);
	}
}

void
tarn_fuse_nodes_count(tarn_fuse_nodes_t *n, uint64_t *nodes, uint64_t *lookups)
{
	uint64_t c = 0, l = 0;
	for (int i = 0; i < TF_NODE_SHARDS; i++) {
		tarn_fuse_shard_t *s = &n->tns_shard[i];
		pthread_mutex_lock(&s->ts_lock);
		c += s->ts_count;
		l += s->ts_lookups;
		pthread_mutex_unlock(&s->ts_lock);
	}
	*nodes = c;
	*lookups = l;
}

void
tarn_fuse_nodes_set_error(tarn_fuse_nodes_t *n, posix_ino_t ino, int err)
{
	tarn_fuse_shard_t *s = node_shard(n, ino);
	pthread_mutex_lock(&s->ts_lock);
	tarn_fuse_node_t *tn = *node_slot(s, ino);
	if (tn != NULL && tn->tn_wb_err == 0)
		tn->tn_wb_err = err;
	pthread_mutex_unlock(&s->ts_lock);
}

int
tarn_fuse_nodes_take_error(tarn_fuse_nodes_t *n, posix_ino_t ino)
{
	tarn_fuse_shard_t *s = node_shard(n, ino);
	pthread_mutex_lock(&s->ts_lock);
	tarn_fuse_node_t *tn = *node_slot(s, ino);
	int err = 0;
	if (tn != NULL) {
		err = tn->tn_wb_err;
		tn->tn_wb_err = 0;
	}
	pthread_mutex_unlock(&s->ts_lock);
	return (err);
}

void
tarn_fuse_nodes_writers(tarn_fuse_nodes_t *n, posix_ino_t ino, int delta)
{
	tarn_fuse_shard_t *s = node_shard(n, ino);
	pthread_mutex_lock(&s->ts_lock);
	tarn_fuse_node_t *tn = *node_slot(s, ino);
	if (tn != NULL) {
		if (delta > 0)
			tn->tn_writers++;
		else if (tn->tn_writers > 0)
			tn->tn_writers--;
	}
	pthread_mutex_unlock(&s->ts_lock);
}

void
tarn_fuse_nodes_each_writer(tarn_fuse_nodes_t *n, void (*fn)(void *, posix_ino_t), void *arg)
{
	for (int i = 0; i < TF_NODE_SHARDS; i++) {
		tarn_fuse_shard_t *s = &n->tns_shard[i];
		posix_ino_t found[64];
		uint64_t b = 0;
		/* a shard at a time, in pieces of 64, so fn runs unlocked */
		for (;;) {
			int cnt = 0;
			pthread_mutex_lock(&s->ts_lock);
			for (; b < s->ts_nbuckets && cnt < 64 - 8; b++)
				for (tarn_fuse_node_t *tn = s->ts_buckets[b]; tn != NULL &&
				    cnt < 64; tn = tn->tn_next)
					if (tn->tn_writers > 0)
						found[cnt++] = tn->tn_ino;
			bool more = b < s->ts_nbuckets;
			pthread_mutex_unlock(&s->ts_lock);
			for (int k = 0; k < cnt; k++)
				fn(arg, found[k]);
			if (!more)
				break;
		}
	}
}
