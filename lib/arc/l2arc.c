/*
 * l2arc.c — the cache devices' ring, its RAM index, the feed and the
 * writer (l2arc.h has the contract).
 *
 * Theory.  A cache device's data area (past the front labels) holds a
 * device header and then a ring of fixed-size chunks (docs/FORMAT.md
 * "Cache devices").  A chunk is written whole, once per trip round the
 * ring: a 64 KiB header listing its blocks (identity, checksum word,
 * XXH3 of the bytes, offset, size) and the blocks' bytes after it.  The
 * feed copies blocks the ARC evicts into a chunk-sized buffer (the
 * header filled as it goes), which is bound to the next chunk of the next
 * device (round robin) the first time it is written; the writer thread
 * writes what is new in it (the new bytes, then the whole header) when it
 * is full, when it has waited lo_idle_ms, or when asked to flush, so a
 * slow feed fills a chunk in several writes rather than using a chunk a
 * second; then it sleeps long enough that it writes at most lo_write_max
 * bytes a second on average, so the cache device never takes the pool's
 * bandwidth.  A full buffer is swapped with the spare one (the feed goes
 * on meanwhile) and the next write starts the next chunk.  Before a
 * chunk is first written, its old blocks leave the index and reads of it
 * drain.
 *
 * The index is a hash of entries (56 bytes per cached block: the RAM
 * cost ls_hdr_size reports), one array of entries per written chunk.
 * Entries go in only after their chunk is on the device, so a read never
 * sees bytes not yet written.  A hit is verified against the XXH3 of the
 * bytes fed: bad bytes or an I/O error cost a miss, are counted, and drop
 * the entry; three I/O errors in a row and the device is left alone.
 *
 * The bytes of a write go before its header, so a header on the device
 * never lists bytes that are not there (a torn header fails its checksum
 * and the chunk is skipped).  Persistence: the chunk headers are the
 * index on disk.  l2arc_dev_add
 * reads the device header; when it is this pool's (pool guid, device
 * guid, geometry), every chunk header is read and verified, and the
 * entries go in in write order (newer chunks win), so an imported pool
 * or a restarted daemon has a warm cache at once.  A chunk torn by a
 * crash fails its checksum and is skipped; a buffer not yet written is
 * lost (at most lo_idle_ms of feed plus one chunk).
 *
 * Locking: l2_lock (lockorder rank L2ARC, innermost but for what it
 * calls nothing) guards everything but the device I/O, which happens
 * with it dropped: a reader counts itself on its chunk (d_readers), the
 * writer marks its device busy (d_busy); removal and overwrites wait on
 * l2_cv for those to drain.
 */
#include "l2arc.h"
#include "lockorder.h"
#include "tarn_hash.h"

#include <xxhash.h>

#define L2_MAGIC_DEV    0x5645443243524154ULL   /* "TARC2DEV" */
#define L2_MAGIC_CHUNK  0x4b4e4843324c5254ULL   /* "TRL2CHNK" */
#define L2_VERSION      1
#define L2_DEV_OFF      VDEV_LABEL_START_SIZE   /* the device header */
#define L2_DEV_HDR      (4 * KiB)
#define L2_RING_OFF     (L2_DEV_OFF + 1 * MiB)  /* the first chunk */
#define L2_CHUNK        (8 * MiB)
#define L2_CHUNK_HDR    (64 * KiB)
#define L2_CHUNK_DATA   (L2_CHUNK - L2_CHUNK_HDR)
#define L2_ALIGN        512
#define L2_MAX_ERRORS   3

/* On the device (little-endian, as the host: x86 / arm64). */
typedef struct l2_dev_phys {
	uint64_t ld_magic, ld_version, ld_pool_guid, ld_dev_guid, ld_epoch;
	uint64_t ld_chunk, ld_nchunks, ld_ring_off;
} l2_dev_phys_t;
typedef struct l2_ent_phys {
	uint64_t lp_key, lp_bpck, lp_hash;
	uint32_t lp_off, lp_size;       /* within the chunk's data */
} l2_ent_phys_t;
typedef struct l2_chunk_phys {
	uint64_t lc_magic, lc_version, lc_pool_guid, lc_dev_guid, lc_epoch, lc_seq;
	uint32_t lc_nent, lc_used;
	uint64_t lc_pad;
	l2_ent_phys_t lc_ent[];
} l2_chunk_phys_t;
#define L2_MAXENT ((L2_CHUNK_HDR - sizeof (l2_chunk_phys_t) - 8) / sizeof (l2_ent_phys_t))
_Static_assert(sizeof (l2_ent_phys_t) == 32, "l2_ent_phys_t is 32 bytes");
_Static_assert(sizeof (l2_chunk_phys_t) == 64, "l2_chunk_phys_t is 64 bytes");

typedef struct l2_dev l2_dev_t;
typedef struct l2_ent {
	tarn_hlink_t le_link;
	uint64_t le_key, le_bpck, le_hash;
	l2_dev_t *le_dev;
	uint32_t le_chunk, le_off, le_size;
} l2_ent_t;

struct l2_dev {
	vdev_t   *d_leaf;
	uint64_t  d_guid, d_epoch, d_nchunks;
	uint64_t  d_next;               /* the chunk written next */
	l2_ent_t **d_ents;              /* per chunk: its entries (NULL: none) */
	uint32_t *d_nent;
	uint32_t *d_readers;            /* per chunk: reads under way */
	uint32_t  d_busy;               /* the writer is writing to it */
	uint32_t  d_errors;             /* I/O errors in a row */
	bool      d_dead, d_removing;
};

struct l2arc {
	pthread_mutex_t l2_lock;
	pthread_cond_t  l2_cv;
	l2arc_opts_t    l2_opts;
	tarn_hash_t     l2_index;
	l2_dev_t      **l2_devs;
	int             l2_ndevs;
	uint32_t        l2_rotor;
	uint8_t        *l2_buf, *l2_wbuf;   /* filling / being written (L2_CHUNK each) */
	uint32_t        l2_nent, l2_used;   /* of l2_buf */
	/* the chunk l2_buf is bound to once part of it is written (NULL: none) */
	l2_dev_t       *l2_odev;
	uint64_t        l2_ochunk, l2_oseq;
	uint32_t        l2_onent, l2_oused; /* what of l2_buf is on it */
	bool            l2_full;
	uint64_t        l2_first_ns;        /* the first feed into l2_buf */
	uint64_t        l2_seq;
	uint64_t        l2_flush_req, l2_flush_done;
	bool            l2_stop;
	pthread_t       l2_thread;
	l2arc_stats_t   l2_st;
};

static uint32_t
l2_ent_hash(const tarn_hlink_t *l)
{
	return ((uint32_t)TARN_HASH_ENTRY(l, l2_ent_t, le_link)->le_key);
}
static const tarn_hash_conf_t l2_hash_conf = { l2_ent_hash, 1024, 2 };

static uint64_t
l2_cksum(const void *buf, size_t len)
{
	return (XXH3_64bits(buf, len));
}

static l2_ent_t *
l2_find(l2arc_t *l2, uint64_t key, uint64_t bpck)
{
	l2_ent_t *e;
	TARN_HASH_FIND(&l2->l2_index, (uint32_t)key, e, le_link,
	    e->le_key == key && e->le_bpck == bpck);
	return (e);
}

/* Forget the blocks of dev's chunk c (lock held). */
static void
l2_chunk_drop(l2arc_t *l2, l2_dev_t *d, uint64_t c)
{
	l2_ent_t *ents = d->d_ents[c];
	for (uint32_t i = 0; i < d->d_nent[c]; i++) {
		l2_ent_t *e = &ents[i];
		if (e->le_dev == NULL)
			continue;       /* replaced by a newer copy, or dropped */
		tarn_hash_remove(&l2->l2_index, (uint32_t)e->le_key, &e->le_link);
		l2->l2_st.ls_size -= e->le_size;
		l2->l2_st.ls_asize -= P2ROUNDUP(e->le_size, L2_ALIGN);
		l2->l2_st.ls_blocks--;
	}
	tarn_free(ents);
	d->d_ents[c] = NULL;
	d->d_nent[c] = 0;
}

/* Take one entry out of the index (lock held); its slot stays, marked. */
static void
l2_ent_drop(l2arc_t *l2, l2_ent_t *e)
{
	tarn_hash_remove(&l2->l2_index, (uint32_t)e->le_key, &e->le_link);
	l2->l2_st.ls_size -= e->le_size;
	l2->l2_st.ls_asize -= P2ROUNDUP(e->le_size, L2_ALIGN);
	l2->l2_st.ls_blocks--;
	e->le_dev = NULL;
}

/*
 * Enter the blocks [from, to) of chunk c of d as its header lists them,
 * into its entry array, which holds at least `to` (lock held).
 */
static void
l2_chunk_enter_range(l2arc_t *l2, l2_dev_t *d, uint64_t c, const l2_chunk_phys_t *ch,
    uint32_t from, uint32_t to)
{
	l2_ent_t *ents = d->d_ents[c];
	for (uint32_t i = from; i < to; i++) {
		const l2_ent_phys_t *p = &ch->lc_ent[i];
		l2_ent_t *old = l2_find(l2, p->lp_key, p->lp_bpck);
		if (old != NULL)
			l2_ent_drop(l2, old);
		l2_ent_t *e = &ents[i];
		*e = (l2_ent_t){ .le_key = p->lp_key, .le_bpck = p->lp_bpck,
			.le_hash = p->lp_hash, .le_dev = d, .le_chunk = (uint32_t)c,
			.le_off = p->lp_off, .le_size = p->lp_size };
		tarn_hash_insert(&l2->l2_index, (uint32_t)e->le_key, &e->le_link);
		l2->l2_st.ls_size += e->le_size;
		l2->l2_st.ls_asize += P2ROUNDUP(e->le_size, L2_ALIGN);
		l2->l2_st.ls_blocks++;
	}
	d->d_nent[c] = to;
}

/* Enter a whole chunk found on the device (lock held). */
static void
l2_chunk_enter(l2arc_t *l2, l2_dev_t *d, uint64_t c, const l2_chunk_phys_t *ch)
{
	d->d_ents[c] = tarn_alloc(sizeof (l2_ent_t) * MAX(ch->lc_nent, 1));
	l2_chunk_enter_range(l2, d, c, ch, 0, ch->lc_nent);
}

/*
 * A chunk written for the last time: its entries move from the array of
 * L2_MAXENT it was filled in to one of their own size (lock held).
 */
static void
l2_chunk_trim(l2arc_t *l2, l2_dev_t *d, uint64_t c)
{
	uint32_t n = d->d_nent[c];
	l2_ent_t *old = d->d_ents[c], *ents = tarn_alloc(sizeof (l2_ent_t) * MAX(n, 1));
	for (uint32_t i = 0; i < n; i++) {
		ents[i] = old[i];
		if (old[i].le_dev == NULL)
			continue;
		tarn_hash_remove(&l2->l2_index, (uint32_t)old[i].le_key, &old[i].le_link);
		tarn_hash_insert(&l2->l2_index, (uint32_t)ents[i].le_key, &ents[i].le_link);
	}
	tarn_free(old);
	d->d_ents[c] = ents;
}

static uint64_t
l2_chunk_off(uint64_t c)
{
	return (L2_RING_OFF + c * L2_CHUNK);
}

/* A chunk header as read: sound and of this device's ring. */
static bool
l2_chunk_valid(const l2arc_t *l2, const l2_dev_t *d, const l2_chunk_phys_t *ch)
{
	uint64_t sum;
	memcpy(&sum, (const uint8_t *)ch + L2_CHUNK_HDR - 8, 8);
	if (ch->lc_magic != L2_MAGIC_CHUNK || ch->lc_version != L2_VERSION ||
	    sum != l2_cksum(ch, L2_CHUNK_HDR - 8) || ch->lc_pool_guid != l2->l2_opts.lo_pool_guid ||
	    ch->lc_dev_guid != d->d_guid || ch->lc_epoch != d->d_epoch ||
	    ch->lc_nent > L2_MAXENT || ch->lc_used > L2_CHUNK_DATA)
		return (false);
	for (uint32_t i = 0; i < ch->lc_nent; i++) {
		const l2_ent_phys_t *p = &ch->lc_ent[i];
		if (p->lp_size == 0 || p->lp_size > L2ARC_BLOCK_MAX || p->lp_off > ch->lc_used ||
		    p->lp_size > ch->lc_used - p->lp_off)
			return (false);
	}
	return (true);
}

/* ---- the writer ---- */

/* The device the next chunk goes to (lock held), or NULL. */
static l2_dev_t *
l2_pick_dev(l2arc_t *l2)
{
	for (int i = 0; i < l2->l2_ndevs; i++) {
		l2_dev_t *d = l2->l2_devs[(l2->l2_rotor + (uint32_t)i) % (uint32_t)l2->l2_ndevs];
		if (!d->d_dead && !d->d_removing) {
			l2->l2_rotor = (l2->l2_rotor + (uint32_t)i + 1) % (uint32_t)l2->l2_ndevs;
			return (d);
		}
	}
	return (NULL);
}

/* Forget the filling buffer and its chunk (lock held): what it held is not written. */
static void
l2_buf_reset(l2arc_t *l2)
{
	l2->l2_nent = l2->l2_used = 0;
	l2->l2_full = false;
	l2->l2_odev = NULL;
}

/*
 * Bind the filling buffer to the next chunk of a device (lock held; may
 * wait for reads of that chunk): its old blocks are forgotten.  NULL when
 * there is no device to write to.
 */
static l2_dev_t *
l2_chunk_open(l2arc_t *l2)
{
	l2_dev_t *d = l2_pick_dev(l2);
	if (d == NULL)
		return (NULL);
	uint64_t c = d->d_next;
	if (d->d_ents[c] != NULL)
		l2_chunk_drop(l2, d, c);
	d->d_busy++;
	while (d->d_readers[c] != 0)
		pthread_cond_wait(&l2->l2_cv, &l2->l2_lock);
	d->d_busy--;
	d->d_ents[c] = tarn_alloc(sizeof (l2_ent_t) * L2_MAXENT);
	d->d_nent[c] = 0;
	l2->l2_odev = d;
	l2->l2_ochunk = c;
	l2->l2_oseq = l2->l2_seq++;
	l2->l2_onent = l2->l2_oused = 0;
	return (d);
}

/* The chunk header of l2_buf as it stands: nent blocks, used bytes (lock held). */
static void
l2_chunk_header(l2arc_t *l2, const l2_dev_t *d, uint32_t nent, uint32_t used)
{
	l2_chunk_phys_t *ch = (l2_chunk_phys_t *)l2->l2_buf;
	ch->lc_magic = L2_MAGIC_CHUNK;
	ch->lc_version = L2_VERSION;
	ch->lc_pool_guid = l2->l2_opts.lo_pool_guid;
	ch->lc_dev_guid = d->d_guid;
	ch->lc_epoch = d->d_epoch;
	ch->lc_seq = l2->l2_oseq;
	ch->lc_nent = nent;
	ch->lc_used = used;
	ch->lc_pad = 0;
	memset(&ch->lc_ent[nent], 0, L2_CHUNK_HDR - 8 - sizeof (*ch) - nent * sizeof (l2_ent_phys_t));
	uint64_t sum = l2_cksum(ch, L2_CHUNK_HDR - 8);
	memcpy(l2->l2_buf + L2_CHUNK_HDR - 8, &sum, 8);
}

/*
 * Write what the filling buffer holds to its chunk (lock held, dropped
 * inside): the new bytes, then the header listing every block so far.
 * A chunk is filled in one or more writes (a slow feed writes part of a
 * chunk every lo_idle_ms, not a chunk each time); the last (buffer full)
 * swaps the buffers, so the feed goes on into the other one meanwhile,
 * and moves on to the next chunk.  Returns the bytes written.
 */
static uint64_t
l2_write_chunk(l2arc_t *l2)
{
	l2_dev_t *d = l2->l2_odev != NULL ? l2->l2_odev : l2_chunk_open(l2);
	if (d == NULL) {
		l2_buf_reset(l2);
		return (0);
	}
	uint64_t c = l2->l2_ochunk;
	uint32_t nent = l2->l2_nent, used = l2->l2_used;
	uint32_t nfrom = l2->l2_onent, from = l2->l2_oused;
	bool last = l2->l2_full || l2->l2_stop || l2->l2_nent >= L2_MAXENT ||
	    l2->l2_used + 4 * KiB > L2_CHUNK_DATA;
	l2_chunk_header(l2, d, nent, used);
	if (last) {
		uint8_t *b = l2->l2_buf;
		l2->l2_buf = l2->l2_wbuf;
		l2->l2_wbuf = b;
		l2_buf_reset(l2);
	} else {
		memcpy(l2->l2_wbuf, l2->l2_buf, L2_CHUNK_HDR);
		memcpy(l2->l2_wbuf + L2_CHUNK_HDR + from, l2->l2_buf + L2_CHUNK_HDR + from,
		    used - from);
	}
	d->d_busy++;
	tarn_mutex_unlock(&l2->l2_lock);
	uint64_t off = l2_chunk_off(c);
	int err = used > from ? vdev_leaf_pwrite(d->d_leaf, l2->l2_wbuf + L2_CHUNK_HDR + from,
	    used - from, off + L2_CHUNK_HDR + from) : 0;
	if (err == 0)
		err = vdev_leaf_pwrite(d->d_leaf, l2->l2_wbuf, L2_CHUNK_HDR, off);
	tarn_mutex_lock(&l2->l2_lock, L2ARC);
	d->d_busy--;
	if (err == 0) {
		l2_chunk_enter_range(l2, d, c, (const l2_chunk_phys_t *)l2->l2_wbuf, nfrom, nent);
		if (l2->l2_odev == d && !last) {
			l2->l2_onent = nent;
			l2->l2_oused = used;
		}
		d->d_errors = 0;
		l2->l2_st.ls_writes++;
		l2->l2_st.ls_write_bytes += L2_CHUNK_HDR + (used - from);
	} else {
		l2->l2_st.ls_io_errors++;
		if (++d->d_errors >= L2_MAX_ERRORS)
			d->d_dead = true;
		if (l2->l2_odev == d)
			l2_buf_reset(l2);       /* the blocks not written are dropped */
		last = true;
	}
	if (last && !d->d_removing) {
		l2_chunk_trim(l2, d, c);
		d->d_next = (c + 1) % d->d_nchunks;
	}
	pthread_cond_broadcast(&l2->l2_cv);
	return (err == 0 ? L2_CHUNK_HDR + (uint64_t)(used - from) : 0);
}

/* Whether the writer should write the filling buffer now (lock held); else how long to wait. */
static bool
l2_ready(l2arc_t *l2, uint64_t *wait_ns)
{
	*wait_ns = 1000ull * 1000 * 1000;
	if (l2->l2_nent == (l2->l2_odev != NULL ? l2->l2_onent : 0))
		return (false);         /* nothing new since the last write */
	if (l2->l2_full || l2->l2_flush_req != l2->l2_flush_done || l2->l2_stop)
		return (true);
	uint64_t idle = (l2->l2_opts.lo_idle_ms ? l2->l2_opts.lo_idle_ms : 1000) * 1000000ull;
	uint64_t age = tarn_now_ns() - l2->l2_first_ns;
	if (age >= idle)
		return (true);
	*wait_ns = idle - age;
	return (false);
}

static void
l2_timedwait(l2arc_t *l2, uint64_t ns)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + ns;
	ts.tv_sec = (time_t)(t / 1000000000ull);
	ts.tv_nsec = (long)(t % 1000000000ull);
	(void) pthread_cond_timedwait(&l2->l2_cv, &l2->l2_lock, &ts);
}

static void *
l2_writer(void *arg)
{
	l2arc_t *l2 = arg;
	tarn_mutex_lock(&l2->l2_lock, L2ARC);
	for (;;) {
		uint64_t wait_ns, req = l2->l2_flush_req;
		if (!l2_ready(l2, &wait_ns)) {
			l2->l2_flush_done = req;
			pthread_cond_broadcast(&l2->l2_cv);
			if (l2->l2_stop)
				break;
			l2_timedwait(l2, wait_ns);
			continue;
		}
		uint64_t bytes = l2_write_chunk(l2);
		l2->l2_flush_done = req;
		pthread_cond_broadcast(&l2->l2_cv);
		/* the rate: the bytes just written at lo_write_max a second */
		uint64_t rate = l2->l2_opts.lo_write_max ? l2->l2_opts.lo_write_max :
		    L2ARC_WRITE_MAX_DEFAULT;
		uint64_t until = tarn_now_ns() + bytes * 1000000000ull / rate;
		while (bytes > 0 && !l2->l2_stop && l2->l2_flush_req == l2->l2_flush_done &&
		    tarn_now_ns() < until)
			l2_timedwait(l2, until - tarn_now_ns());
	}
	tarn_mutex_unlock(&l2->l2_lock);
	return (NULL);
}

/* ---- the cache ---- */

l2arc_t *
l2arc_create(const l2arc_opts_t *o)
{
	l2arc_t *l2 = tarn_alloc(sizeof (*l2));
	l2->l2_opts = *o;
	pthread_mutex_init(&l2->l2_lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_cond_init(&l2->l2_cv, &ca);
	pthread_condattr_destroy(&ca);
	tarn_hash_init(&l2->l2_index, &l2_hash_conf);
	l2->l2_buf = tarn_alloc(L2_CHUNK);
	l2->l2_wbuf = tarn_alloc(L2_CHUNK);
	l2->l2_seq = 1;
	if (tarn_thread_create(&l2->l2_thread, NULL, l2_writer, l2) != 0)
		tarn_panic(__FILE__, __LINE__, "l2arc: cannot start its writer");
	return (l2);
}

/* Forget d and free it (lock held; nothing uses it any more). */
static void
l2_dev_free(l2arc_t *l2, l2_dev_t *d)
{
	for (uint64_t c = 0; c < d->d_nchunks; c++)
		if (d->d_ents[c] != NULL)
			l2_chunk_drop(l2, d, c);
	l2->l2_st.ls_dev_size -= d->d_nchunks * L2_CHUNK;
	tarn_free(d->d_ents);
	tarn_free(d->d_nent);
	tarn_free(d->d_readers);
	tarn_free(d);
}

void
l2arc_destroy(l2arc_t *l2)
{
	l2arc_flush(l2);
	tarn_mutex_lock(&l2->l2_lock, L2ARC);
	l2->l2_stop = true;
	pthread_cond_broadcast(&l2->l2_cv);
	tarn_mutex_unlock(&l2->l2_lock);
	pthread_join(l2->l2_thread, NULL);
	tarn_mutex_lock(&l2->l2_lock, L2ARC);
	for (int i = 0; i < l2->l2_ndevs; i++)
		l2_dev_free(l2, l2->l2_devs[i]);
	tarn_mutex_unlock(&l2->l2_lock);
	tarn_free(l2->l2_devs);
	tarn_hash_fini(&l2->l2_index);
	tarn_free(l2->l2_buf);
	tarn_free(l2->l2_wbuf);
	pthread_cond_destroy(&l2->l2_cv);
	pthread_mutex_destroy(&l2->l2_lock);
	tarn_free(l2);
}

uint64_t
l2arc_min_size(void)
{
	return (L2_RING_OFF + 2 * L2_CHUNK + VDEV_LABEL_END_SIZE);
}

/* Read d's ring back (d is not listed yet): its chunks go in oldest first, under the lock. */
static void
l2_rebuild(l2arc_t *l2, l2_dev_t *d)
{
	uint8_t *hdr = tarn_alloc(L2_CHUNK_HDR);
	l2_chunk_phys_t **found = tarn_alloc(sizeof (l2_chunk_phys_t *) * d->d_nchunks);
	uint64_t nf = 0, newest = 0, best = 0;
	for (uint64_t c = 0; c < d->d_nchunks; c++) {
		const l2_chunk_phys_t *ch = (const l2_chunk_phys_t *)hdr;
		if (vdev_leaf_pread(d->d_leaf, hdr, L2_CHUNK_HDR, l2_chunk_off(c)) != 0 ||
		    !l2_chunk_valid(l2, d, ch))
			continue;
		/* keep the header and its entries only; lc_pad holds the chunk's number */
		size_t len = sizeof (*ch) + ch->lc_nent * sizeof (l2_ent_phys_t);
		found[nf] = tarn_alloc(len);
		memcpy(found[nf], ch, len);
		found[nf++]->lc_pad = c;
		if (ch->lc_seq >= best) {
			best = ch->lc_seq;
			newest = c;
		}
	}
	/* oldest first (insertion sort: the ring is mostly in order already) */
	for (uint64_t i = 1; i < nf; i++)
		for (uint64_t j = i; j > 0 && found[j - 1]->lc_seq > found[j]->lc_seq; j--) {
			l2_chunk_phys_t *t = found[j];
			found[j] = found[j - 1];
			found[j - 1] = t;
		}
	tarn_mutex_lock(&l2->l2_lock, L2ARC);
	for (uint64_t i = 0; i < nf; i++) {
		l2_chunk_enter(l2, d, found[i]->lc_pad, found[i]);
		l2->l2_st.ls_rebuild_blocks += found[i]->lc_nent;
		if (found[i]->lc_seq >= l2->l2_seq)
			l2->l2_seq = found[i]->lc_seq + 1;
		tarn_free(found[i]);
	}
	tarn_mutex_unlock(&l2->l2_lock);
	d->d_next = nf > 0 ? (newest + 1) % d->d_nchunks : 0;
	tarn_free(found);
	tarn_free(hdr);
}

/* The device header: d's ring is this pool's (true), or write a new one. */
static int
l2_dev_header(l2arc_t *l2, l2_dev_t *d, bool *rebuild)
{
	uint8_t *b = tarn_alloc(L2_DEV_HDR);
	l2_dev_phys_t *h = (l2_dev_phys_t *)b;
	uint64_t sum;
	*rebuild = false;
	if (vdev_leaf_pread(d->d_leaf, b, L2_DEV_HDR, L2_DEV_OFF) == 0) {
		memcpy(&sum, b + L2_DEV_HDR - 8, 8);
		*rebuild = h->ld_magic == L2_MAGIC_DEV && h->ld_version == L2_VERSION &&
		    sum == l2_cksum(b, L2_DEV_HDR - 8) &&
		    h->ld_pool_guid == l2->l2_opts.lo_pool_guid && h->ld_dev_guid == d->d_guid &&
		    h->ld_chunk == L2_CHUNK && h->ld_nchunks == d->d_nchunks &&
		    h->ld_ring_off == L2_RING_OFF;
	}
	int err = 0;
	if (*rebuild) {
		d->d_epoch = h->ld_epoch;
	} else {
		/* a new epoch: chunks of an earlier ring on this device never count */
		d->d_epoch = (tarn_now_ns() ^ (d->d_guid * 0x9e3779b97f4a7c15ull)) | 1;
		memset(b, 0, L2_DEV_HDR);
		*h = (l2_dev_phys_t){ L2_MAGIC_DEV, L2_VERSION, l2->l2_opts.lo_pool_guid, d->d_guid,
			d->d_epoch, L2_CHUNK, d->d_nchunks, L2_RING_OFF };
		sum = l2_cksum(b, L2_DEV_HDR - 8);
		memcpy(b + L2_DEV_HDR - 8, &sum, 8);
		err = vdev_leaf_pwrite(d->d_leaf, b, L2_DEV_HDR, L2_DEV_OFF);
		if (err == 0)
			err = vdev_flush(d->d_leaf);
	}
	tarn_free(b);
	return (err != 0 ? SET_ERROR(EIO) : 0);
}

int
l2arc_dev_add(l2arc_t *l2, vdev_t *leaf, uint64_t dev_guid)
{
	uint64_t psize = vdev_psize(leaf);
	if (psize < l2arc_min_size())
		return (SET_ERROR(ENOSPC));
	tarn_mutex_lock(&l2->l2_lock, L2ARC);
	for (int i = 0; i < l2->l2_ndevs; i++) {
		if (l2->l2_devs[i]->d_leaf == leaf) {
			tarn_mutex_unlock(&l2->l2_lock);
			return (SET_ERROR(EEXIST));
		}
	}
	tarn_mutex_unlock(&l2->l2_lock);
	l2_dev_t *d = tarn_alloc(sizeof (*d));
	d->d_leaf = leaf;
	d->d_guid = dev_guid;
	d->d_nchunks = (psize - VDEV_LABEL_END_SIZE - L2_RING_OFF) / L2_CHUNK;
	d->d_ents = tarn_alloc(sizeof (l2_ent_t *) * d->d_nchunks);
	d->d_nent = tarn_alloc(sizeof (uint32_t) * d->d_nchunks);
	d->d_readers = tarn_alloc(sizeof (uint32_t) * d->d_nchunks);
	bool rebuild;
	int err = l2_dev_header(l2, d, &rebuild);
	if (err == 0 && rebuild)
		l2_rebuild(l2, d);
	tarn_mutex_lock(&l2->l2_lock, L2ARC);
	if (err != 0) {
		l2->l2_st.ls_dev_size += d->d_nchunks * L2_CHUNK;     /* l2_dev_free takes it off */
		l2_dev_free(l2, d);
	} else {
		l2->l2_devs = tarn_realloc(l2->l2_devs, sizeof (l2_dev_t *) *
		    (size_t)(l2->l2_ndevs + 1));
		l2->l2_devs[l2->l2_ndevs++] = d;
		l2->l2_st.ls_dev_size += d->d_nchunks * L2_CHUNK;
	}
	tarn_mutex_unlock(&l2->l2_lock);
	return (err);
}

int
l2arc_dev_remove(l2arc_t *l2, vdev_t *leaf)
{
	tarn_mutex_lock(&l2->l2_lock, L2ARC);
	int i;
	for (i = 0; i < l2->l2_ndevs && l2->l2_devs[i]->d_leaf != leaf; i++)
		;
	if (i == l2->l2_ndevs) {
		tarn_mutex_unlock(&l2->l2_lock);
		return (SET_ERROR(ENOENT));
	}
	l2_dev_t *d = l2->l2_devs[i];
	d->d_removing = true;
	for (;;) {
		bool busy = d->d_busy != 0;
		for (uint64_t c = 0; c < d->d_nchunks && !busy; c++)
			busy = d->d_readers[c] != 0;
		if (!busy)
			break;
		pthread_cond_wait(&l2->l2_cv, &l2->l2_lock);
	}
	if (l2->l2_odev == d)
		l2_buf_reset(l2);       /* its pending blocks go with it */
	l2->l2_devs[i] = l2->l2_devs[--l2->l2_ndevs];
	l2_dev_free(l2, d);
	tarn_mutex_unlock(&l2->l2_lock);
	return (0);
}

int
l2arc_ndevs(l2arc_t *l2)
{
	tarn_mutex_lock(&l2->l2_lock, L2ARC);
	int n = l2->l2_ndevs;
	tarn_mutex_unlock(&l2->l2_lock);
	return (n);
}

bool
l2arc_read(l2arc_t *l2, uint64_t key, uint64_t bpck, void *buf, uint32_t size)
{
	tarn_mutex_lock(&l2->l2_lock, L2ARC);
	if (l2->l2_ndevs == 0) {
		tarn_mutex_unlock(&l2->l2_lock);
		return (false);
	}
	l2_ent_t *e = l2_find(l2, key, bpck);
	if (e == NULL || e->le_size != size || e->le_dev->d_dead || e->le_dev->d_removing) {
		l2->l2_st.ls_misses++;
		tarn_mutex_unlock(&l2->l2_lock);
		return (false);
	}
	l2_dev_t *d = e->le_dev;
	uint32_t c = e->le_chunk;
	uint64_t off = l2_chunk_off(c) + L2_CHUNK_HDR + e->le_off, hash = e->le_hash;
	d->d_readers[c]++;
	tarn_mutex_unlock(&l2->l2_lock);
	int err = vdev_leaf_pread(d->d_leaf, buf, size, off);
	bool ok = err == 0 && l2_cksum(buf, size) == hash;
	tarn_mutex_lock(&l2->l2_lock, L2ARC);
	if (--d->d_readers[c] == 0)
		pthread_cond_broadcast(&l2->l2_cv);
	if (ok) {
		l2->l2_st.ls_hits++;
		l2->l2_st.ls_read_bytes += size;
		d->d_errors = 0;
	} else {
		l2->l2_st.ls_misses++;
		if (err != 0) {
			l2->l2_st.ls_io_errors++;
			if (++d->d_errors >= L2_MAX_ERRORS)
				d->d_dead = true;
		} else {
			l2->l2_st.ls_cksum_bad++;
		}
		/* the chunk was not written over meanwhile: readers hold it */
		if ((e = l2_find(l2, key, bpck)) != NULL && e->le_dev == d && e->le_chunk == c)
			l2_ent_drop(l2, e);
	}
	tarn_mutex_unlock(&l2->l2_lock);
	return (ok);
}

void
l2arc_feed(l2arc_t *l2, uint64_t key, uint64_t bpck, const void *buf, uint32_t size)
{
	if (size == 0 || size > L2ARC_BLOCK_MAX)
		return;
	uint64_t hash = l2_cksum(buf, size);    /* outside the lock */
	tarn_mutex_lock(&l2->l2_lock, L2ARC);
	if (l2->l2_ndevs == 0 || l2_find(l2, key, bpck) != NULL) {
		tarn_mutex_unlock(&l2->l2_lock);
		return;
	}
	l2->l2_st.ls_feeds++;
	uint32_t off = l2->l2_used;
	if (l2->l2_nent >= L2_MAXENT || (uint64_t)off + size > L2_CHUNK_DATA) {
		l2->l2_st.ls_feed_drops++;
		l2->l2_full = true;
		pthread_cond_broadcast(&l2->l2_cv);
		tarn_mutex_unlock(&l2->l2_lock);
		return;
	}
	/* the bytes and their entry go in the filling chunk image */
	memcpy(l2->l2_buf + L2_CHUNK_HDR + off, buf, size);
	l2_chunk_phys_t *ch = (l2_chunk_phys_t *)l2->l2_buf;
	ch->lc_ent[l2->l2_nent] = (l2_ent_phys_t){ key, bpck, hash, off, size };
	if (l2->l2_nent++ == (l2->l2_odev != NULL ? l2->l2_onent : 0))
		l2->l2_first_ns = tarn_now_ns();        /* the first block not yet written */
	l2->l2_used = (uint32_t)P2ROUNDUP((uint64_t)off + size, L2_ALIGN);
	if (l2->l2_used + 4 * KiB > L2_CHUNK_DATA || l2->l2_nent == L2_MAXENT) {
		l2->l2_full = true;
		pthread_cond_broadcast(&l2->l2_cv);
	}
	tarn_mutex_unlock(&l2->l2_lock);
}

bool
l2arc_wants(l2arc_t *l2, uint64_t key, uint64_t bpck, uint32_t size)
{
	if (size == 0 || size > L2ARC_BLOCK_MAX)
		return (false);
	tarn_mutex_lock(&l2->l2_lock, L2ARC);
	bool room = !l2->l2_full && l2->l2_nent < L2_MAXENT &&
	    (uint64_t)l2->l2_used + size <= L2_CHUNK_DATA;
	bool w = l2->l2_ndevs > 0 && room && l2_find(l2, key, bpck) == NULL;
	if (!w && l2->l2_ndevs > 0 && l2_find(l2, key, bpck) == NULL) {
		l2->l2_st.ls_feeds++;
		l2->l2_st.ls_feed_drops++;
	}
	if (!room && l2->l2_ndevs > 0 && !l2->l2_full) {
		l2->l2_full = true;     /* the writer closes this chunk now */
		pthread_cond_broadcast(&l2->l2_cv);
	}
	tarn_mutex_unlock(&l2->l2_lock);
	return (w);
}

void
l2arc_bad(l2arc_t *l2, uint64_t key, uint64_t bpck)
{
	tarn_mutex_lock(&l2->l2_lock, L2ARC);
	l2_ent_t *e = l2_find(l2, key, bpck);
	if (e != NULL)
		l2_ent_drop(l2, e);
	l2->l2_st.ls_cksum_bad++;
	if (l2->l2_st.ls_hits > 0)
		l2->l2_st.ls_hits--;            /* l2arc_read counted it a hit */
	l2->l2_st.ls_misses++;
	tarn_mutex_unlock(&l2->l2_lock);
}

void
l2arc_flush(l2arc_t *l2)
{
	tarn_mutex_lock(&l2->l2_lock, L2ARC);
	uint64_t req = ++l2->l2_flush_req;
	pthread_cond_broadcast(&l2->l2_cv);
	while (l2->l2_flush_done < req && !l2->l2_stop)
		pthread_cond_wait(&l2->l2_cv, &l2->l2_lock);
	tarn_mutex_unlock(&l2->l2_lock);
}

void
l2arc_set_write_max(l2arc_t *l2, uint64_t bytes_per_sec)
{
	tarn_mutex_lock(&l2->l2_lock, L2ARC);
	l2->l2_opts.lo_write_max = bytes_per_sec;
	pthread_cond_broadcast(&l2->l2_cv);
	tarn_mutex_unlock(&l2->l2_lock);
}

void
l2arc_stats(l2arc_t *l2, l2arc_stats_t *out)
{
	tarn_mutex_lock(&l2->l2_lock, L2ARC);
	*out = l2->l2_st;
	out->ls_hdr_size = out->ls_blocks * sizeof (l2_ent_t) +
	    (uint64_t)l2->l2_index.th_nbuckets * sizeof (void *);
	out->ls_write_max = l2->l2_opts.lo_write_max ? l2->l2_opts.lo_write_max :
	    L2ARC_WRITE_MAX_DEFAULT;
	tarn_mutex_unlock(&l2->l2_lock);
}
