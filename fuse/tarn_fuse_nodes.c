/*
 * tarn_fuse_nodes.c — the node table: for every inode the kernel holds,
 * how many lookups it has been given and not yet forgotten.  The counts
 * mirror the posix layer's references (see "Lookup counts" in
 * tarn_fuse.c); the table exists so that an unmount can give back what
 * the kernel never forgets explicitly, and so that invalidate_all knows
 * which inodes the kernel caches; it also keeps the error of a failed
 * write-back write until fsync or close reports it.  After a swap of the
 * served file system (tarn_fuse_swap.c) a node also counts the lookups
 * the kernel still holds of the inode's node ids from before (tn_stale),
 * which their forgets take back without a word to posix.  Sharded by inode number, one mutex a shard, each shard a
 * tarn_hash table (doubles past two nodes a bucket).
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

/* The hash value within a shard: the bits node_shard did not use. */
static uint32_t
node_hashv(posix_ino_t ino)
{
	return ((uint32_t)(node_hash(ino) / TF_NODE_SHARDS));
}

static uint32_t
node_link_hash(const tarn_hlink_t *l)
{
	return (node_hashv(TARN_HASH_ENTRY(l, tarn_fuse_node_t, tn_link)->tn_ino));
}

static const tarn_hash_conf_t node_table_conf = {
	.thc_hash = node_link_hash, .thc_min_buckets = 64, .thc_load = 2,
};

/* The node of ino, or NULL (s->ts_lock held). */
static tarn_fuse_node_t *
node_find(tarn_fuse_shard_t *s, posix_ino_t ino)
{
	tarn_fuse_node_t *tn;
	TARN_HASH_FIND(&s->ts_nodes, node_hashv(ino), tn, tn_link, tn->tn_ino == ino);
	return (tn);
}

/*
 * ino's contents change: bump its change count and wait for a read-around
 * store of it in progress (s->ts_lock held, dropped while waiting).  Its
 * node after, or NULL.
 */
static tarn_fuse_node_t *
node_change(tarn_fuse_shard_t *s, posix_ino_t ino)
{
	tarn_fuse_node_t *tn = node_find(s, ino);
	if (tn != NULL)
		tn->tn_change++;
	while (tn != NULL && tn->tn_storing) {
		pthread_cond_wait(&s->ts_cv, &s->ts_lock);
		tn = node_find(s, ino);
	}
	return (tn);
}

/* Free tn once the kernel holds no lookup of it, old or new (s->ts_lock held). */
static void
node_drop_if_done(tarn_fuse_shard_t *s, tarn_fuse_node_t *tn)
{
	if (tn->tn_nlookup != 0 || tn->tn_stale != 0)
		return;
	tarn_hash_remove(&s->ts_nodes, node_hashv(tn->tn_ino), &tn->tn_link);
	tarn_free(tn);
}

void
tarn_fuse_nodes_init(tarn_fuse_nodes_t *n)
{
	for (int i = 0; i < TF_NODE_SHARDS; i++) {
		tarn_fuse_shard_t *s = &n->tns_shard[i];
		VERIFY0(pthread_mutex_init(&s->ts_lock, NULL));
		VERIFY0(pthread_cond_init(&s->ts_cv, NULL));
		tarn_hash_init(&s->ts_nodes, &node_table_conf);
		s->ts_lookups = 0;
	}
}

void
tarn_fuse_nodes_fini(tarn_fuse_nodes_t *n)
{
	for (int i = 0; i < TF_NODE_SHARDS; i++) {
		tarn_fuse_shard_t *s = &n->tns_shard[i];
		VERIFY3U(tarn_hash_count(&s->ts_nodes), ==, 0);
		tarn_hash_fini(&s->ts_nodes);
		VERIFY0(pthread_mutex_destroy(&s->ts_lock));
		VERIFY0(pthread_cond_destroy(&s->ts_cv));
	}
}

void
tarn_fuse_nodes_ref(tarn_fuse_nodes_t *n, posix_ino_t ino)
{
	tarn_fuse_shard_t *s = node_shard(n, ino);
	pthread_mutex_lock(&s->ts_lock);
	tarn_fuse_node_t *tn = node_find(s, ino);
	if (tn == NULL) {
		tn = tarn_alloc(sizeof (*tn));
		tn->tn_ino = ino;
		tarn_hash_insert(&s->ts_nodes, node_hashv(ino), &tn->tn_link);
	}
	tn->tn_nlookup++;
	s->ts_lookups++;
	pthread_mutex_unlock(&s->ts_lock);
}

uint64_t
tarn_fuse_nodes_unref(tarn_fuse_nodes_t *n, posix_ino_t ino, uint64_t count)
{
	tarn_fuse_shard_t *s = node_shard(n, ino);
	pthread_mutex_lock(&s->ts_lock);
	tarn_fuse_node_t *tn = node_find(s, ino);
	uint64_t held = tn != NULL ? tn->tn_nlookup : 0;
	if (count > held) {
		tarn_dprintf("fuse: forget of %" PRIu64 " lookups of inode %" PRIu64
		    " that has %" PRIu64 "\n", count, ino, held);
		count = held;
	}
	if (tn != NULL) {
		tn->tn_nlookup -= count;
		s->ts_lookups -= count;
		node_drop_if_done(s, tn);
	}
	pthread_mutex_unlock(&s->ts_lock);
	return (count);
}

void
tarn_fuse_nodes_forget_stale(tarn_fuse_nodes_t *n, posix_ino_t ino, uint64_t count)
{
	tarn_fuse_shard_t *s = node_shard(n, ino);
	pthread_mutex_lock(&s->ts_lock);
	tarn_fuse_node_t *tn = node_find(s, ino);
	if (tn != NULL) {
		tn->tn_stale -= MIN(tn->tn_stale, count);
		node_drop_if_done(s, tn);
	}
	pthread_mutex_unlock(&s->ts_lock);
}

void
tarn_fuse_nodes_retire(tarn_fuse_nodes_t *n, tarn_fuse_node_fn_t fn, void *arg)
{
	for (int i = 0; i < TF_NODE_SHARDS; i++) {
		tarn_fuse_shard_t *s = &n->tns_shard[i];
		pthread_mutex_lock(&s->ts_lock);
		tarn_fuse_node_t *tn;
		TARN_HASH_FOREACH(&s->ts_nodes, tn, tn_link) {
			if (tn->tn_nlookup == 0 || fn(arg, tn->tn_ino, tn->tn_nlookup) != 0)
				continue;
			s->ts_lookups -= tn->tn_nlookup;
			tn->tn_stale += tn->tn_nlookup;
			tn->tn_nlookup = 0;
			tn->tn_wb_err = 0;
		}
		pthread_mutex_unlock(&s->ts_lock);
	}
}

void
tarn_fuse_nodes_walk(tarn_fuse_nodes_t *n, tarn_fuse_node_fn_t fn, void *arg)
{
	for (int i = 0; i < TF_NODE_SHARDS; i++) {
		tarn_fuse_shard_t *s = &n->tns_shard[i];
		int stop = 0;
		pthread_mutex_lock(&s->ts_lock);
		tarn_fuse_node_t *tn;
		TARN_HASH_FOREACH(&s->ts_nodes, tn, tn_link) {
			stop = fn(arg, tn->tn_ino, tn->tn_nlookup);
			if (stop)
				break;
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
		tarn_fuse_node_t *tn;
		TARN_HASH_FOREACH(&s->ts_nodes, tn, tn_link) {
			if (tn->tn_nlookup != 0)
				(void) fn(arg, tn->tn_ino, tn->tn_nlookup);
			tarn_free(tn);
		}
		tarn_hash_fini(&s->ts_nodes);
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
		c += tarn_hash_count(&s->ts_nodes);
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
	tarn_fuse_node_t *tn = node_find(s, ino);
	if (tn != NULL && tn->tn_wb_err == 0)
		tn->tn_wb_err = err;
	pthread_mutex_unlock(&s->ts_lock);
}

int
tarn_fuse_nodes_take_error(tarn_fuse_nodes_t *n, posix_ino_t ino)
{
	tarn_fuse_shard_t *s = node_shard(n, ino);
	pthread_mutex_lock(&s->ts_lock);
	tarn_fuse_node_t *tn = node_find(s, ino);
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
	tarn_fuse_node_t *tn = node_find(s, ino);
	if (tn != NULL) {
		if (delta > 0) {
			/* a writer may dirty pages: no read-around store from now on */
			if ((tn = node_change(s, ino)) != NULL)
				tn->tn_writers++;
		}
		else if (tn->tn_writers > 0)
			tn->tn_writers--;
	}
	pthread_mutex_unlock(&s->ts_lock);
}

bool
tarn_fuse_nodes_around(tarn_fuse_nodes_t *n, posix_ino_t ino, uint32_t *gen, bool start)
{
	tarn_fuse_shard_t *s = node_shard(n, ino);
	pthread_mutex_lock(&s->ts_lock);
	tarn_fuse_node_t *tn = node_find(s, ino);
	bool ok = tn != NULL && tn->tn_nlookup > 0 && tn->tn_writers == 0 &&
	    (!start || tn->tn_change == *gen);
	if (ok && start)
		tn->tn_storing = true;
	else if (ok)
		*gen = tn->tn_change;
	pthread_mutex_unlock(&s->ts_lock);
	return (ok);
}

void
tarn_fuse_nodes_around_done(tarn_fuse_nodes_t *n, posix_ino_t ino)
{
	tarn_fuse_shard_t *s = node_shard(n, ino);
	pthread_mutex_lock(&s->ts_lock);
	tarn_fuse_node_t *tn = node_find(s, ino);
	if (tn != NULL)
		tn->tn_storing = false;
	pthread_cond_broadcast(&s->ts_cv);
	pthread_mutex_unlock(&s->ts_lock);
}

void
tarn_fuse_nodes_change(tarn_fuse_nodes_t *n, posix_ino_t ino)
{
	tarn_fuse_shard_t *s = node_shard(n, ino);
	pthread_mutex_lock(&s->ts_lock);
	(void) node_change(s, ino);
	pthread_mutex_unlock(&s->ts_lock);
}

void
tarn_fuse_nodes_each_writer(tarn_fuse_nodes_t *n, void (*fn)(void *, posix_ino_t), void *arg)
{
	for (int i = 0; i < TF_NODE_SHARDS; i++) {
		tarn_fuse_shard_t *s = &n->tns_shard[i];
		posix_ino_t found[64];
		uint32_t b = 0;
		/* a shard at a time, in pieces of 64, so fn runs unlocked */
		for (;;) {
			int cnt = 0;
			pthread_mutex_lock(&s->ts_lock);
			for (; b < s->ts_nodes.th_nbuckets && cnt < 64 - 8; b++)
				for (tarn_hlink_t *l = tarn_hash_bucket(&s->ts_nodes, b);
				    l != NULL && cnt < 64; l = l->thl_next) {
					tarn_fuse_node_t *tn =
					    TARN_HASH_ENTRY(l, tarn_fuse_node_t, tn_link);
					if (tn->tn_writers > 0)
						found[cnt++] = tn->tn_ino;
				}
			bool more = b < s->ts_nodes.th_nbuckets;
			pthread_mutex_unlock(&s->ts_lock);
			for (int k = 0; k < cnt; k++)
				fn(arg, found[k]);
			if (!more)
				break;
		}
	}
}
