/*
 * dbuf.c — cached blocks of objects ("dbufs") and their dirty records.
 *
 * Theory.  A dbuf caches one block of one object: a level-0 data block or
 * an indirect block (an array of block pointers).  Level-0 blocks are
 * changed in open context, by transactions; each txg that changes a block
 * gets a dirty record holding the block as of the end of that txg.  The
 * newest record shares db_data; when a later txg changes a block whose
 * newest record belongs to an older txg, db_data is copied first, so the
 * older txg's buffer never changes again (the sync thread may be writing
 * it).  Records live until their txg is on disk (dbuf_sync_done).
 * Indirect blocks and meta-dnode blocks are changed only by the sync
 * thread (they describe where things are on disk, which only the sync
 * knows); they carry db_sync_dirty while they await their write.
 *
 * A dbuf with no holds, no records and not sync-dirty is clean and idle:
 * it is handed to the ARC (lib/arc, through the arc_node_t it embeds),
 * which keeps it on its MRU or MFU list, or refuses it (the dataset's
 * primarycache, or a once block past its share), and then it is freed at
 * once.  A hold takes it off the ARC's lists (still counted, ARC_HELD);
 * dirtying it takes it out of the ARC (dirty data is bounded by the
 * write throttle, not by the ARC).  When the ARC is over its limit it
 * picks victims and calls back here (dbuf_arc_ops) to free them: the
 * ARC's lock is taken after dn_mtx, and its evictor only try-locks
 * dn_mtx.  All dbuf fields are guarded by the owning dnode's dn_mtx.
 * Hits and misses are counted for the ARC where a reader meets a block:
 * dbuf_read (demand), dbuf_read_blocks (misses of a demand batch, which
 * its reader then does not count as hits: db_fetched; hits and misses
 * of read-ahead), and the dmu's copy of a cached block (dbuf_note_hit).
 * A block's identity for the ARC's ghosts (and the L2ARC) is its pool's
 * guid, first DVA and birth (arc_key), set when it is read from disk.
 *
 * Once blocks.  A level-0 block of 64 KiB or more that was filled by a
 * whole-block write, or read ahead for a sequential stream and then read
 * by that stream, and not read since by anything else (db_once), stays
 * cached once it is clean while such blocks take less than an
 * ARC_ONCE_DIV-th of the ARC, or while the ARC has free room for it
 * (arc_insert's ARC_F_ONCE); past both it is freed as soon as it is
 * clean and idle.  A stream written or read through the mount is in the
 * kernel's page cache anyway: letting it evict other blocks would push
 * out the blocks that random readers come back to (a scan-resistant
 * cache); so a stream evicts others for a bounded share only, and once
 * the ARC is full the rest of its buffers go back to the warm stacks
 * below, so its next blocks reuse memory that is already faulted in.
 * Into free room it goes whole: the kernel drops its pages at its own
 * pace (fadvise, memory pressure, fio's invalidate), and a stream read
 * again is then served from memory, as zfs serves it from its ARC.  The
 * price is the first fill of an idle cache: fresh memory is faulted in
 * (docs/PERFORMANCE.md, issue 30).  A read that is not part of a stream, or a read of
 * a block that was cached before the stream came (db_ahead clear), keeps
 * the block like any other.
 */
#include "dmu_impl.h"

#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23      /* Linux 5.14 */
#endif

static inline uint32_t
dbuf_hash(uint8_t level, uint64_t blkid)
{
	uint64_t h = (blkid * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)level << 56);
	return ((uint32_t)(h >> 32));
}

static uint32_t
dbuf_link_hash(const tarn_hlink_t *l)
{
	const dbuf_t *db = TARN_HASH_ENTRY(l, dbuf_t, db_hash_link);
	return (dbuf_hash(db->db_level, db->db_blkid));
}

const tarn_hash_conf_t dbuf_table_conf = {
	.thc_hash = dbuf_link_hash, .thc_min_buckets = 16, .thc_load = 1,
};

/* ---- block buffers (sequential speed) ---- */

/*
 * Each 4 KiB page of a fresh heap buffer costs a page fault (and a
 * zeroing) when it is first touched: for a stream of 128 KiB blocks that
 * was a fifth of the CPU of a write through the mount, and as much again
 * of a cold read, and glibc hands freed blocks back to the kernel only to
 * fault them in again.  So buffers of 4 KiB..1 MiB (one size class per
 * power of two) are carved from 2 MiB chunks of big anonymous mappings;
 * a new chunk is faulted in with one MADV_POPULATE_WRITE call instead of
 * 512 faults, and released buffers are kept on free stacks: "warm" ones
 * still have memory behind them (contents stale), "cold" ones were given
 * back with MADV_DONTNEED (they read as zeros) and are faulted in again
 * with one MADV_POPULATE_WRITE call when reused.  At most
 * dbuf_warm_max bytes stay warm (DBUF_POOL_WARM_MAX, half the old
 * default cache, unless the daemon set it lower to match its ARC with
 * dmu_buf_warm_max: warm buffers are memory the ARC does not count; a pool
 * closed and opened again, or a cache refilled after a big free, reuses
 * them instead of faulting everything in again, as glibc's heap used to
 * allow), the rest goes back to the kernel; mappings are never unmapped
 * (only address space stays).
 * The regions chunks are cut from ask for transparent huge pages
 * (MADV_HUGEPAGE; Debian's default THP mode is "madvise"): on a
 * paravirtualized guest (the Linux 6.18 benchmark machine) the first
 * touch of each 4 KiB page is slow even after MADV_POPULATE_WRITE, a
 * fault the hypervisor serves by all appearances (fresh memory filled at
 * ~250 MB/s, warm at 15 GB/s), while a 2 MiB page costs one such fault.  Streaming writes into a newly
 * started daemon went from 270-460 to 830-1090 MiB/s and cold reads
 * from 590-900 to 1360-1490 MiB/s (alternating builds, two runs each).
 * A cold buffer's MADV_DONTNEED splits its huge page; khugepaged may in
 * time collapse such a range again, which brings back at most memory the
 * pool already had (mappings only ever hold what the cache once used).
 * Down to 4 KiB (it was 64 KiB) for the daemon's memory: 4 KiB records
 * from malloc lay in glibc's per-thread arenas between live neighbours,
 * and the arenas kept 300 MiB for an ARC of 64 MiB (docs/DESIGN.md, "The
 * daemon's memory"); a page-sized buffer goes back to the kernel alone.
 * When the last pool of the process closes, every free buffer, the
 * ready chunks below and the rest of each class's current chunk go back
 * (dmu_buf_release).
 * Under AddressSanitizer the pool is off, so that overruns are still
 * caught.
 */
#define DBUF_CHUNK_SIZE     (2 * MiB)
#define DBUF_POOL_MIN_SHIFT 12
#define DBUF_POOL_MAX_SHIFT 20
#define DBUF_POOL_NCLASS    (DBUF_POOL_MAX_SHIFT - DBUF_POOL_MIN_SHIFT + 1)
#define DBUF_POOL_WARM_MAX  (512 * MiB)

#if defined(__SANITIZE_ADDRESS__)
#define DBUF_POOL_ENABLED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DBUF_POOL_ENABLED 0
#endif
#endif
#ifndef DBUF_POOL_ENABLED
#define DBUF_POOL_ENABLED 1
#endif

typedef tarn_array_t dbuf_stack_t;        /* of void *: free buffers, a stack */

typedef struct dbuf_pool {
	pthread_mutex_t bp_lock;
	dbuf_stack_t bp_warm[DBUF_POOL_NCLASS];   /* bp_lock, all fields */
	dbuf_stack_t bp_cold[DBUF_POOL_NCLASS];
	uint8_t  *bp_carve[DBUF_POOL_NCLASS];     /* rest of the current chunk */
	size_t    bp_carve_left[DBUF_POOL_NCLASS];
	uintptr_t *bp_chunks;   /* hash set: chunk base | class + 1; 0 empty */
	size_t    bp_nchunks, bp_chunk_cap;
	uint64_t  bp_warm_bytes;
} dbuf_pool_t;

static uint64_t dbuf_warm_max = DBUF_POOL_WARM_MAX;     /* atomic */

static dbuf_pool_t dbuf_pool = {
	.bp_lock = PTHREAD_MUTEX_INITIALIZER,
	.bp_warm = { [0 ... DBUF_POOL_NCLASS - 1] = TARN_ARRAY_INIT(void *) },
	.bp_cold = { [0 ... DBUF_POOL_NCLASS - 1] = TARN_ARRAY_INIT(void *) },
};

/* Size class of a buffer size, or -1 when the pool does not serve it. */
static int
dbuf_pool_class(uint32_t size)
{
	if (!DBUF_POOL_ENABLED || !ISP2(size) || size < (1U << DBUF_POOL_MIN_SHIFT) ||
	    size > (1U << DBUF_POOL_MAX_SHIFT))
		return (-1);
	return (highbit64(size) - 1 - DBUF_POOL_MIN_SHIFT);
}

static size_t
dbuf_chunk_slot(uintptr_t base, size_t cap)
{
	return ((size_t)(((base >> 21) * 0x9E3779B97F4A7C15ULL) >> 32) & (cap - 1));
}

/* Record a chunk in the hash set (bp_lock held). */
static void
dbuf_chunk_register(dbuf_pool_t *bp, uintptr_t base, int c)
{
	if (2 * (bp->bp_nchunks + 1) > bp->bp_chunk_cap) {
		size_t ncap = bp->bp_chunk_cap ? bp->bp_chunk_cap * 2 : 256;
		uintptr_t *nt = tarn_alloc(ncap * sizeof (uintptr_t));
		for (size_t i = 0; i < bp->bp_chunk_cap; i++) {
			uintptr_t e = bp->bp_chunks[i];
			if (e == 0)
				continue;
			size_t h = dbuf_chunk_slot(e, ncap);
			while (nt[h] != 0)
				h = (h + 1) & (ncap - 1);
			nt[h] = e;
		}
		tarn_free(bp->bp_chunks);
		bp->bp_chunks = nt;
		bp->bp_chunk_cap = ncap;
	}
	size_t h = dbuf_chunk_slot(base, bp->bp_chunk_cap);
	while (bp->bp_chunks[h] != 0)
		h = (h + 1) & (bp->bp_chunk_cap - 1);
	bp->bp_chunks[h] = base | (uintptr_t)(c + 1);
	bp->bp_nchunks++;
}

/* The class of the chunk holding buf, or -1 when buf is not ours (bp_lock held). */
static int
dbuf_chunk_class(dbuf_pool_t *bp, const void *buf)
{
	if (bp->bp_chunk_cap == 0)
		return (-1);
	uintptr_t base = P2ALIGN((uintptr_t)buf, (uintptr_t)DBUF_CHUNK_SIZE);
	for (size_t h = dbuf_chunk_slot(base, bp->bp_chunk_cap); bp->bp_chunks[h] != 0;
	    h = (h + 1) & (bp->bp_chunk_cap - 1)) {
		if (P2ALIGN(bp->bp_chunks[h], (uintptr_t)DBUF_CHUNK_SIZE) == base)
			return ((int)(bp->bp_chunks[h] & (DBUF_CHUNK_SIZE - 1)) - 1);
	}
	return (-1);
}

/*
 * A fresh 2 MiB-aligned chunk (bp_lock held), cut from a region of
 * DBUF_REGION_SIZE mapped at once with huge pages asked for: one mmap
 * and one madvise per region, not per chunk, so that faulting threads
 * rarely wait for the address-space lock.  NULL when mmap fails.
 */
#define DBUF_REGION_SIZE (64 * MiB)
static uint8_t *dbuf_region_next;
static size_t dbuf_region_left;
/* bp_lock: chunks once made ready, given back to the kernel unused (dmu_buf_release) */
static tarn_array_t dbuf_idle = TARN_ARRAY_INIT(uint8_t *);

static uint8_t *
dbuf_chunk_map(void)
{
	if (tarn_array_len(&dbuf_idle) > 0)
		return (*(uint8_t **)tarn_array_pop(&dbuf_idle));
	if (dbuf_region_left < DBUF_CHUNK_SIZE) {
		size_t len = DBUF_REGION_SIZE + DBUF_CHUNK_SIZE;
		uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			return (NULL);
		uint8_t *a = (uint8_t *)P2ROUNDUP((uintptr_t)p, (uintptr_t)DBUF_CHUNK_SIZE);
		if (a > p)
			(void) munmap(p, (size_t)(a - p));
		size_t tail = (size_t)((p + len) - (a + DBUF_REGION_SIZE));
		if (tail > 0)
			(void) munmap(a + DBUF_REGION_SIZE, tail);
		(void) madvise(a, DBUF_REGION_SIZE, MADV_HUGEPAGE);   /* advice only */
		dbuf_region_next = a;
		dbuf_region_left = DBUF_REGION_SIZE;
	}
	uint8_t *chunk = dbuf_region_next;
	dbuf_region_next += DBUF_CHUNK_SIZE;
	dbuf_region_left -= DBUF_CHUNK_SIZE;
	return (chunk);
}

/*
 * Chunks faulted in ahead of need.  Populating a fresh chunk is most of
 * the daemon's CPU while its cache first fills (a cold read after a
 * start: 40%), and it ran inside the read that needed the buffer while
 * the other core idled.  A background thread keeps up to
 * DBUF_READY_MAX chunks mapped and populated; an allocation that needs
 * a new chunk takes one of them, and maps and populates one itself only
 * when none is ready.  The thread starts with the first chunk a process
 * needs (tools that never fill a cache pay nothing) and is made again in
 * a forked child.  Ready chunks are memory nobody uses yet: at most half
 * the warm budget of them are kept (dbuf_ready_max, set with it by
 * dmu_buf_warm_max; the daemon's arc_max / 16).
 */
#define DBUF_READY_MAX 16           /* 32 MiB */

static pthread_mutex_t dbuf_ready_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t dbuf_ready_cv = PTHREAD_COND_INITIALIZER;
static uint8_t *dbuf_ready[DBUF_READY_MAX];     /* dbuf_ready_lock */
static int dbuf_nready;
/* dbuf_ready_lock: chunks kept ready, at most; half the warm budget (dmu_buf_warm_max) */
static int dbuf_ready_max = DBUF_READY_MAX;
static bool dbuf_ready_started, dbuf_ready_atfork;

static void *
dbuf_ready_thread(void *arg)
{
	dbuf_pool_t *bp = arg;
	pthread_mutex_lock(&dbuf_ready_lock);
	for (;;) {
		while (dbuf_nready >= dbuf_ready_max)
			pthread_cond_wait(&dbuf_ready_cv, &dbuf_ready_lock);
		pthread_mutex_unlock(&dbuf_ready_lock);
		pthread_mutex_lock(&bp->bp_lock);
		uint8_t *chunk = dbuf_chunk_map();
		pthread_mutex_unlock(&bp->bp_lock);
		if (chunk != NULL)
			(void) madvise(chunk, DBUF_CHUNK_SIZE, MADV_POPULATE_WRITE);
		pthread_mutex_lock(&dbuf_ready_lock);
		if (chunk == NULL) {
			dbuf_ready_started = false;     /* out of address space: stop */
			break;
		}
		dbuf_ready[dbuf_nready++] = chunk;
	}
	pthread_mutex_unlock(&dbuf_ready_lock);
	return (NULL);
}

static void
dbuf_ready_child(void)
{
	pthread_mutex_init(&dbuf_ready_lock, NULL);
	pthread_cond_init(&dbuf_ready_cv, NULL);
	dbuf_nready = 0;                /* the parent's chunks: not ours to use */
	dbuf_ready_started = false;
}

/*
 * A populated chunk, or NULL (the caller maps and populates one itself).
 * Called with bp_lock held (the order is bp_lock, then dbuf_ready_lock;
 * the thread never holds both).
 */
static uint8_t *
dbuf_ready_take(dbuf_pool_t *bp)
{
	uint8_t *chunk = NULL;
	pthread_mutex_lock(&dbuf_ready_lock);
	if (!dbuf_ready_atfork) {
		VERIFY0(pthread_atfork(NULL, NULL, dbuf_ready_child));
		dbuf_ready_atfork = true;
	}
	if (!dbuf_ready_started) {
		pthread_t th;
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (tarn_thread_create(&th, &attr, dbuf_ready_thread, bp) == 0)
			dbuf_ready_started = true;
		pthread_attr_destroy(&attr);
	}
	if (dbuf_nready > 0)
		chunk = dbuf_ready[--dbuf_nready];
	pthread_cond_signal(&dbuf_ready_cv);
	pthread_mutex_unlock(&dbuf_ready_lock);
	return (chunk);
}

static void
dbuf_stack_push(dbuf_stack_t *ds, void *buf)
{
	TARN_ARRAY_APPEND(ds, void *, buf);
}

void *
dbuf_buf_alloc(uint32_t size, bool zero)
{
	int c = dbuf_pool_class(size);
	if (c < 0)
		return (tarn_alloc(size));
	dbuf_pool_t *bp = &dbuf_pool;
	void *buf = NULL;
	uint8_t *fresh = NULL;
	bool stale = false, cold = false;
	pthread_mutex_lock(&bp->bp_lock);
	if (tarn_array_len(&bp->bp_warm[c]) > 0) {
		buf = *(void **)tarn_array_pop(&bp->bp_warm[c]);
		bp->bp_warm_bytes -= size;
		stale = true;
	} else if (tarn_array_len(&bp->bp_cold[c]) > 0) {
		buf = *(void **)tarn_array_pop(&bp->bp_cold[c]);
		cold = true;
	} else {
		if (bp->bp_carve_left[c] < size) {
			/* a chunk the background thread populated, or a new one */
			uint8_t *chunk = dbuf_ready_take(bp);
			bool populated = chunk != NULL;
			if (chunk == NULL)
				chunk = dbuf_chunk_map();
			if (chunk == NULL) {
				pthread_mutex_unlock(&bp->bp_lock);
				return (tarn_alloc(size));
			}
			dbuf_chunk_register(bp, (uintptr_t)chunk, c);
			if (!populated)
				fresh = chunk;
			bp->bp_carve[c] = chunk;
			bp->bp_carve_left[c] = DBUF_CHUNK_SIZE;
		}
		buf = bp->bp_carve[c];
		bp->bp_carve[c] += size;
		bp->bp_carve_left[c] -= size;
	}
	pthread_mutex_unlock(&bp->bp_lock);
	/*
	 * Fault a new chunk in with one call rather than 512 page faults
	 * (outside the lock: a thread that takes a buffer of it meanwhile
	 * merely faults its pages itself).
	 */
	if (fresh != NULL)
		(void) madvise(fresh, DBUF_CHUNK_SIZE, MADV_POPULATE_WRITE);
	else if (cold)
		(void) madvise(buf, size, MADV_POPULATE_WRITE);   /* one call, not a fault a page */
	if (zero && stale)
		memset(buf, 0, size);
	return (buf);
}

void
dbuf_buf_free(void *buf, uint32_t size)
{
	if (buf == NULL)
		return;
	if (dbuf_pool_class(size) < 0) {
		tarn_free(buf);
		return;
	}
	dbuf_pool_t *bp = &dbuf_pool;
	pthread_mutex_lock(&bp->bp_lock);
	int c = dbuf_chunk_class(bp, buf);
	if (c < 0) {
		pthread_mutex_unlock(&bp->bp_lock);
		tarn_free(buf);
		return;
	}
	uint64_t csize = 1ULL << (c + DBUF_POOL_MIN_SHIFT);
	ASSERT3U(csize, ==, size);
	if (bp->bp_warm_bytes + csize <= __atomic_load_n(&dbuf_warm_max, __ATOMIC_RELAXED)) {
		dbuf_stack_push(&bp->bp_warm[c], buf);
		bp->bp_warm_bytes += csize;
		pthread_mutex_unlock(&bp->bp_lock);
		return;
	}
	pthread_mutex_unlock(&bp->bp_lock);
	(void) madvise(buf, csize, MADV_DONTNEED);
	pthread_mutex_lock(&bp->bp_lock);
	dbuf_stack_push(&bp->bp_cold[c], buf);
	pthread_mutex_unlock(&bp->bp_lock);
}

/*
 * Give the ready chunks past keep back to the kernel (bp_lock held): they
 * stay mapped, on dbuf_idle, to be populated again when needed.
 */
static void
dbuf_ready_trim(dbuf_pool_t *bp, int keep)
{
	uint8_t *drop[DBUF_READY_MAX];
	int n = 0;
	pthread_mutex_lock(&dbuf_ready_lock);
	while (dbuf_nready > keep)
		drop[n++] = dbuf_ready[--dbuf_nready];
	pthread_mutex_unlock(&dbuf_ready_lock);
	for (int i = 0; i < n; i++) {
		(void) madvise(drop[i], DBUF_CHUNK_SIZE, MADV_DONTNEED);
		TARN_ARRAY_APPEND(&dbuf_idle, uint8_t *, drop[i]);
	}
}

/* Warm buffers past max go cold, largest first (bp_lock held). */
static void
dbuf_warm_trim(dbuf_pool_t *bp, uint64_t max)
{
	for (int c = DBUF_POOL_NCLASS - 1; c >= 0; c--) {
		uint64_t csize = 1ULL << (c + DBUF_POOL_MIN_SHIFT);
		while (bp->bp_warm_bytes > max && tarn_array_len(&bp->bp_warm[c]) > 0) {
			void *buf = *(void **)tarn_array_pop(&bp->bp_warm[c]);
			bp->bp_warm_bytes -= csize;
			(void) madvise(buf, csize, MADV_DONTNEED);
			dbuf_stack_push(&bp->bp_cold[c], buf);
		}
	}
}

void
dmu_buf_warm_max(uint64_t bytes)
{
	dbuf_pool_t *bp = &dbuf_pool;
	uint64_t max = MIN(bytes, (uint64_t)DBUF_POOL_WARM_MAX);
	int ready = (int)MIN((uint64_t)DBUF_READY_MAX, max / 2 / DBUF_CHUNK_SIZE);
	__atomic_store_n(&dbuf_warm_max, max, __ATOMIC_RELAXED);
	/* give the excess back to the kernel now */
	pthread_mutex_lock(&bp->bp_lock);
	pthread_mutex_lock(&dbuf_ready_lock);
	dbuf_ready_max = MAX(ready, 1);
	pthread_mutex_unlock(&dbuf_ready_lock);
	dbuf_ready_trim(bp, MAX(ready, 1));
	dbuf_warm_trim(bp, max);
	pthread_mutex_unlock(&bp->bp_lock);
}

void
dmu_buf_release(void)
{
	dbuf_pool_t *bp = &dbuf_pool;
	pthread_mutex_lock(&bp->bp_lock);
	dbuf_ready_trim(bp, 0);
	dbuf_warm_trim(bp, 0);
	/* the rest of each class's current chunk: faulted in, not handed out */
	for (int c = 0; c < DBUF_POOL_NCLASS; c++)
		if (bp->bp_carve_left[c] > 0)   /* page-aligned: sizes are 4 KiB or more */
			(void) madvise(bp->bp_carve[c], bp->bp_carve_left[c], MADV_DONTNEED);
	pthread_mutex_unlock(&bp->bp_lock);
	tarn_mem_trim_now();
}

dbuf_t *
dbuf_find_locked(dnode_t *dn, uint8_t level, uint64_t blkid)
{
	dbuf_t *db;
	TARN_HASH_FIND(&dn->dn_dbufs, dbuf_hash(level, blkid), db, db_hash_link,
	    db->db_level == level && db->db_blkid == blkid);
	return (db);
}

static void
dbuf_table_remove(dnode_t *dn, dbuf_t *db)
{
	tarn_hash_remove(&dn->dn_dbufs, dbuf_hash(db->db_level, db->db_blkid), &db->db_hash_link);
}

/* Block size of a dbuf at level of dn (dn_mtx held). */
static uint32_t
dbuf_size(dnode_t *dn, uint8_t level)
{
	if (level > 0)
		return (1U << (dn->dn_phys.dn_indblkshift ? dn->dn_phys.dn_indblkshift :
		    DN_INDIRECT_SHIFT));
	return (dn->dn_blksz);
}

/* ---- the ARC's side (lib/arc) ---- */

static bool
dbuf_arc_trylock(arc_node_t *n)
{
	dbuf_t *db = TARN_HASH_ENTRY(n, dbuf_t, db_arc);
	return (pthread_mutex_trylock(&db->db_dn->dn_mtx) == 0);
}

/*
 * A block leaving the ARC goes to the L2ARC (dn_mtx held) when the pool
 * has cache devices, the dataset's secondarycache takes it, and its
 * bytes are still those of the block pointer it was read by: in its
 * stored form (compressed again as it was written), which every hit is
 * checked against (dbuf_read_bp).  l2arc_wants first, so that a feed the
 * cache would not take costs no compression.
 */
static void
dbuf_l2_feed(dbuf_t *db)
{
	objset_t *os = db->db_dn->dn_os;
	l2arc_t *l2 = dmu_pool_l2arc(os->os_dp);
	if (l2 == NULL || !db->db_l2ok || db->db_data == NULL)
		return;
	uint8_t sc = __atomic_load_n(&os->os_secondarycache, __ATOMIC_RELAXED);
	if (sc == DMU_CACHE_NONE || (sc == DMU_CACHE_METADATA && !dbuf_is_meta(db)))
		return;
	uint64_t key = db->db_arc.an_key;
	if (key == 0 || !l2arc_wants(l2, key, db->db_l2ck, db->db_psize))
		return;
	blkptr_t bp;
	BP_ZERO(&bp);
	bp.bp_lsize = db->db_size;
	bp.bp_psize = db->db_psize;
	bp.bp_comp = db->db_comp;
	int level = dbuf_is_meta(db) ? 0 : os->os_props.osp_level;
	void *p = db->db_comp == ZIO_COMPRESS_OFF ? db->db_data : tarn_alloc(db->db_psize);
	if (p == db->db_data || zio_stored_form(&bp, level, db->db_data, p) == 0)
		l2arc_feed(l2, key, db->db_l2ck, p, db->db_psize);
	if (p != db->db_data)
		tarn_free(p);
}

static void
dbuf_arc_evict(arc_node_t *n)
{
	dbuf_t *db = TARN_HASH_ENTRY(n, dbuf_t, db_arc);
	dnode_t *dn = db->db_dn;
	dbuf_l2_feed(db);
	dbuf_evict_one(db);
	pthread_mutex_unlock(&dn->dn_mtx);
}

static const arc_ops_t dbuf_arc_ops = {
	.ao_trylock = dbuf_arc_trylock, .ao_evict = dbuf_arc_evict,
};

bool
dbuf_is_meta(const dbuf_t *db)
{
	if (db->db_level > 0)
		return (true);
	const dnode_t *dn = db->db_dn;
	if (dn->dn_object == DMU_META_DNODE_OBJECT || dn->dn_os->os_props.osp_is_mos)
		return (true);
	uint8_t t = dn->dn_phys.dn_type;
	return (t != DMU_OT_PLAIN_FILE && t != DMU_OT_TEST && t != DMU_OT_UINT8);
}

void
dbuf_arc_forget(dbuf_t *db)
{
	arc_forget(db->db_dn->dn_os->os_dp->dp_arc, &db->db_arc);
}

/*
 * Hand an idle cached dbuf to the ARC (dn_mtx held).  False when it is
 * not to be kept (primarycache, or a once block past its share): the
 * caller frees it.
 */
#define DBUF_ONCE_MIN (64 * KiB)  /* the smallest block the once rule applies to */

static bool
dbuf_arc_insert(dbuf_t *db)
{
	objset_t *os = db->db_dn->dn_os;
	arc_t *arc = os->os_dp->dp_arc;
	bool meta = dbuf_is_meta(db);
	uint8_t pc = __atomic_load_n(&os->os_primarycache, __ATOMIC_RELAXED);
	if (pc == DMU_CACHE_NONE || (pc == DMU_CACHE_METADATA && !meta)) {
		arc_forget(arc, &db->db_arc);
		arc_note_uncached(arc);
		return (false);
	}
	bool once = db->db_once && db->db_level == 0 &&
	    db->db_size >= DBUF_ONCE_MIN;
	return (arc_insert(arc, &db->db_arc, db->db_size,
	    (meta ? ARC_F_META : 0) | (once ? ARC_F_ONCE : 0)));
}

/* The reader-side bookkeeping of a block found cached (dn_mtx held). */
static void
dbuf_arc_hit(dbuf_t *db, bool prefetch)
{
	arc_t *arc = db->db_dn->dn_os->os_dp->dp_arc;
	int acc = (prefetch ? ARC_ACC_PREFETCH : 0) | (dbuf_is_meta(db) ? ARC_ACC_META : 0);
	if (db->db_fetched) {
		db->db_fetched = false;         /* this read's own miss, counted already */
		return;
	}
	/* a block read ahead and now read: a hit, but its first use */
	arc_hit(arc, &db->db_arc, acc, !prefetch && !db->db_ahead);
}

void
dbuf_note_hit(dbuf_t *db)
{
	dbuf_arc_hit(db, false);
}

static void
dbuf_arc_miss(dbuf_t *db, bool prefetch)
{
	arc_miss(db->db_dn->dn_os->os_dp->dp_arc,
	    (prefetch ? ARC_ACC_PREFETCH : 0) | (dbuf_is_meta(db) ? ARC_ACC_META : 0));
}

static bool
dbuf_is_idle(const dbuf_t *db)
{
	return (db->db_holds == 0 && db->db_dirty == NULL && !db->db_sync_dirty &&
	    db->db_state != DB_READING);
}

/* Free a dbuf that is idle (dn_mtx held, not in the ARC). */
void
dbuf_evict_one(dbuf_t *db)
{
	dnode_t *dn = db->db_dn;
	ASSERT(dbuf_is_idle(db));
	ASSERT(db->db_arc.an_list == ARC_NONE);
	dbuf_table_remove(dn, db);
	dbuf_buf_free(db->db_data, db->db_size);
	tarn_free(db);
}

/*
 * Find or (create) make a dbuf and take a hold on it.  The caller holds
 * the dnode.  Returns NULL only when !create and it is not cached.
 */
dbuf_t *
dbuf_hold(dnode_t *dn, uint8_t level, uint64_t blkid, bool create)
{
	dmu_pool_t *dp = dn->dn_os->os_dp;
	pthread_mutex_lock(&dn->dn_mtx);
	dbuf_t *db = dbuf_find_locked(dn, level, blkid);
	if (db == NULL) {
		if (!create) {
			pthread_mutex_unlock(&dn->dn_mtx);
			return (NULL);
		}
		db = tarn_alloc(sizeof (*db));
		db->db_dn = dn;
		db->db_level = level;
		db->db_blkid = blkid;
		db->db_size = dbuf_size(dn, level);
		db->db_state = DB_UNCACHED;
		db->db_arc.an_ops = &dbuf_arc_ops;
		tarn_hash_insert(&dn->dn_dbufs, dbuf_hash(level, blkid), &db->db_hash_link);
	}
	db->db_holds++;
	arc_hold(dp->dp_arc, &db->db_arc);
	pthread_mutex_unlock(&dn->dn_mtx);
	return (db);
}

void
dbuf_rele(dbuf_t *db)
{
	dnode_t *dn = db->db_dn;
	dmu_pool_t *dp = dn->dn_os->os_dp;
	bool evict = false;
	pthread_mutex_lock(&dn->dn_mtx);
	VERIFY3S(db->db_holds, >, 0);
	db->db_holds--;
	if (dbuf_is_idle(db)) {
		if (db->db_state == DB_CACHED && dbuf_arc_insert(db)) {
			evict = true;
		} else {
			dbuf_arc_forget(db);
			dbuf_evict_one(db);
		}
	}
	pthread_mutex_unlock(&dn->dn_mtx);
	if (evict)
		arc_evict(dp->dp_arc);
}

/*
 * A reader of the dmu got db's contents (dn_mtx held): the once-block rule
 * (top of this file).  stream: the reader is a sequential stream;
 * fetched: db was not cached when the reader came to it.
 */
void
dbuf_note_read(dbuf_t *db, bool stream, bool fetched)
{
	if (!stream)
		db->db_once = false;
	else if (fetched || db->db_ahead)
		db->db_once = true;
	db->db_ahead = false;
}

/* Give a dbuf that just became clean to the ARC, or free it (dn_mtx held). */
void
dbuf_maybe_idle(dbuf_t *db)
{
	if (dbuf_is_idle(db) && (db->db_state != DB_CACHED || !dbuf_arc_insert(db))) {
		dbuf_arc_forget(db);
		dbuf_evict_one(db);
	}
}

/* Bring the ARC back within its limit (after dbufs were handed to it). */
void
dbuf_cache_evict(dmu_pool_t *dp)
{
	arc_evict(dp->dp_arc);
}

/* Drop every dbuf of a dnode being destroyed (dn_mtx held). */
void
dbuf_destroy_all(dnode_t *dn)
{
	dmu_pool_t *dp = dn->dn_os->os_dp;
	dbuf_t *db;
	DN_FOREACH_DBUF(dn, db) {
		/* Only an abandoned pool has dirty dbufs here: drop them. */
		dirty_record_t *dr = db->db_dirty;
		while (dr != NULL) {
			dirty_record_t *nx = dr->dr_next_txg;
			if (dr->dr_data != db->db_data)
				dbuf_buf_free(dr->dr_data, dr->dr_size);
			tarn_free(dr->dr_stored);
			tarn_free(dr);
			dr = nx;
		}
		arc_forget(dp->dp_arc, &db->db_arc);
		dbuf_buf_free(db->db_data, db->db_size);
		tarn_free(db);
	}
	tarn_hash_fini(&dn->dn_dbufs);
}

static uint64_t dbuf_bp_key(const dnode_t *dn, const blkptr_t *bp);

/*
 * Block bp from the pool's L2ARC into buf (bp_lsize bytes): true when it
 * was there and its stored bytes verified against bp's checksum.  Bytes
 * that do not are the cache device's fault: counted, dropped, a miss.
 */
static bool
dbuf_l2_read(dnode_t *dn, const blkptr_t *bp, void *buf)
{
	l2arc_t *l2 = dmu_pool_l2arc(dn->dn_os->os_dp);
	if (l2 == NULL || BP_IS_HOLE(bp) || bp->bp_psize > L2ARC_BLOCK_MAX)
		return (false);
	uint64_t key = dbuf_bp_key(dn, bp), ck = bp->bp_cksum_val.zc_word[0];
	void *p = bp->bp_comp == ZIO_COMPRESS_OFF ? buf : tarn_alloc(bp->bp_psize);
	bool hit = l2arc_read(l2, key, ck, p, bp->bp_psize);
	if (hit && zio_stored_decode(bp, p, buf) != 0) {
		l2arc_bad(l2, key, ck);
		hit = false;
	}
	if (p != buf)
		tarn_free(p);
	return (hit);
}

/*
 * Read block bp of a dbuf of `size` bytes into a new buffer *bufp.  A
 * hole reads as zeros; a block of another logical size (written before a
 * block-size change) is cut or zero-extended.  *bufp is set even on
 * error (the caller frees it).
 */
static int
dbuf_read_bp(dnode_t *dn, const blkptr_t *bp, uint32_t size, void **bufp)
{
	zio_ctx_t *zc = dn->dn_os->os_dp->dp_zio;
	int err = 0;
	if (BP_IS_HOLE(bp)) {
		*bufp = dbuf_buf_alloc(size, true);
	} else if (bp->bp_lsize == size) {
		*bufp = dbuf_buf_alloc(size, false);   /* zio_read fills or zeroes it */
		if (!dbuf_l2_read(dn, bp, *bufp))
			err = zio_read(zc, bp, *bufp, 0);
	} else if (bp->bp_lsize <= SPA_MAXBLOCKSIZE && bp->bp_lsize > 0) {
		*bufp = dbuf_buf_alloc(size, true);
		void *tmp = tarn_alloc(bp->bp_lsize);
		err = zio_read(zc, bp, tmp, 0);
		memcpy(*bufp, tmp, MIN(size, bp->bp_lsize));
		tarn_free(tmp);
	} else {
		*bufp = dbuf_buf_alloc(size, true);
		err = SET_ERROR(EIO);
	}
	return (err);
}

/* The ARC's identity of the block bp of dn points at (0: a hole, none). */
static uint64_t
dbuf_bp_key(const dnode_t *dn, const blkptr_t *bp)
{
	if (BP_IS_HOLE(bp))
		return (0);
	return (arc_key(dn->dn_os->os_dp->dp_opts.dpo_pool_guid, bp->bp_dva[0].dva_vdev,
	    bp->bp_dva[0].dva_offset, bp->bp_birth));
}

/*
 * A read of db (state DB_READING, claimed by this thread) ended: install
 * buf or give it back, and wake the waiters; ahead: read in a batch, for
 * a reader yet to come (db_ahead); key: the block's identity (dbuf_bp_key).
 * dn_mtx not held.
 */
static void
dbuf_read_done(dbuf_t *db, void *buf, int err, bool ahead, const blkptr_t *bp)
{
	dnode_t *dn = db->db_dn;
	if (err != 0 && err != ENOMEM)
		dmu_pool_report_error(dn->dn_os->os_dp, dn->dn_os, dn->dn_object, db->db_level,
		    db->db_blkid, err);
	pthread_mutex_lock(&dn->dn_mtx);
	if (err != 0) {
		dbuf_buf_free(buf, db->db_size);
		db->db_state = DB_UNCACHED;
	} else {
		/* A free that raced this read wins: the block is a hole now. */
		if (db->db_level == 0 && dnode_block_freed(dn, db->db_blkid))
			memset(buf, 0, db->db_size);
		db->db_data = buf;
		db->db_state = DB_CACHED;
		db->db_ahead = ahead;
		db->db_arc.an_key = bp != NULL ? dbuf_bp_key(dn, bp) : 0;
		/* what the L2ARC needs to keep it in its stored form (dbuf_l2_feed) */
		db->db_l2ok = bp != NULL && !BP_IS_HOLE(bp) && bp->bp_lsize == db->db_size;
		if (db->db_l2ok) {
			db->db_comp = bp->bp_comp;
			db->db_psize = bp->bp_psize;
			db->db_l2ck = bp->bp_cksum_val.zc_word[0];
		}
	}
	pthread_cond_broadcast(&dn->dn_cv);
	pthread_mutex_unlock(&dn->dn_mtx);
}

/*
 * Make db's contents valid.  The caller holds db and dn_struct_rwlock
 * (either mode).  Level-0 blocks freed in an unsynced txg read as zeros.
 */
int
dbuf_read(dbuf_t *db)
{
	dnode_t *dn = db->db_dn;
	pthread_mutex_lock(&dn->dn_mtx);
	while (db->db_state == DB_READING)
		pthread_cond_wait(&dn->dn_cv, &dn->dn_mtx);
	if (db->db_state == DB_CACHED)
		dbuf_arc_hit(db, false);
	db->db_once = db->db_ahead = false;      /* wanted by a reader: keep it */
	if (db->db_state == DB_CACHED) {
		pthread_mutex_unlock(&dn->dn_mtx);
		return (0);
	}
	if (db->db_level == 0 && dnode_block_freed(dn, db->db_blkid)) {
		db->db_data = dbuf_buf_alloc(db->db_size, true);
		db->db_state = DB_CACHED;
		pthread_mutex_unlock(&dn->dn_mtx);
		return (0);
	}
	db->db_state = DB_READING;
	uint32_t size = db->db_size;
	dbuf_arc_miss(db, false);
	pthread_mutex_unlock(&dn->dn_mtx);

	blkptr_t bp;
	void *buf = NULL;
	int err = dnode_resolve_bp(dn, db->db_level, db->db_blkid, &bp);
	if (err == 0)
		err = dbuf_read_bp(dn, &bp, size, &buf);
	dbuf_read_done(db, buf, err, false, err == 0 ? &bp : NULL);
	return (err);
}

/* One block of a parallel read (dbuf_read_blocks). */
typedef struct dbuf_pread {
	dbuf_t  *dp_db;
	void    *dp_buf;
	blkptr_t dp_bp;
	int      dp_err;
	bool     dp_batched;     /* read by the zio batch */
} dbuf_pread_t;

#define DBUF_READ_BLOCKS_MAX 64

/*
 * Claim (DB_READING) the uncached blocks of the range, read the plain
 * ones in one zio batch, and those of another logical size (or whose bp
 * cannot be resolved) one by one the usual way.
 */
int
dbuf_read_blocks(dnode_t *dn, uint64_t first, uint64_t last, uint64_t need, bool prefetch)
{
	dbuf_pread_t rd[DBUF_READ_BLOCKS_MAX];
	int n = 0, err = 0;
	if (last < first)
		return (0);
	last = MIN(last, first + DBUF_READ_BLOCKS_MAX - 1);
	/* Most blocks of a stream are cached already: find the others under one lock. */
	uint64_t want[DBUF_READ_BLOCKS_MAX];
	int nwant = 0;
	pthread_mutex_lock(&dn->dn_mtx);
	for (uint64_t blkid = first; blkid <= last; blkid++) {
		dbuf_t *db = dbuf_find_locked(dn, 0, blkid);
		if (db == NULL || db->db_state == DB_UNCACHED)
			want[nwant++] = blkid;
		else if (prefetch && db->db_state == DB_CACHED)
			dbuf_arc_hit(db, true);
	}
	pthread_mutex_unlock(&dn->dn_mtx);
	for (int w = 0; w < nwant; w++) {
		uint64_t blkid = want[w];
		dbuf_t *db = dbuf_hold(dn, 0, blkid, true);
		pthread_mutex_lock(&dn->dn_mtx);
		bool claim = db->db_state == DB_UNCACHED && !dnode_block_freed(dn, blkid);
		if (claim) {
			db->db_state = DB_READING;
			dbuf_arc_miss(db, prefetch);
			db->db_fetched = !prefetch;     /* its reader counts no hit */
		}
		pthread_mutex_unlock(&dn->dn_mtx);
		if (!claim) {
			dbuf_rele(db);
			continue;
		}
		memset(&rd[n], 0, sizeof (rd[n]));
		rd[n++].dp_db = db;
	}
	if (n == 0)
		return (0);
	zio_batch_t *b = zio_batch_create(dn->dn_os->os_dp->dp_zio);
	for (int i = 0; i < n; i++) {
		dbuf_pread_t *r = &rd[i];
		uint32_t size = r->dp_db->db_size;
		r->dp_err = dnode_resolve_bp(dn, 0, r->dp_db->db_blkid, &r->dp_bp);
		if (r->dp_err != 0 || BP_IS_HOLE(&r->dp_bp) || r->dp_bp.bp_lsize != size)
			continue;
		r->dp_buf = dbuf_buf_alloc(size, false);
		if (dbuf_l2_read(dn, &r->dp_bp, r->dp_buf))
			continue;       /* dp_err 0, not batched: done */
		r->dp_batched = true;
		zio_batch_read(b, &r->dp_bp, r->dp_buf, 0, &r->dp_err);
	}
	(void) zio_batch_wait(b);
	for (int i = 0; i < n; i++) {
		dbuf_pread_t *r = &rd[i];
		if (!r->dp_batched && r->dp_err == 0 && r->dp_buf == NULL)
			r->dp_err = dbuf_read_bp(dn, &r->dp_bp, r->dp_db->db_size, &r->dp_buf);
		if (r->dp_err != 0 && err == 0 && r->dp_db->db_blkid <= need)
			err = r->dp_err;
		dbuf_read_done(r->dp_db, r->dp_buf, r->dp_err, true,
		    r->dp_err == 0 ? &r->dp_bp : NULL);
		dbuf_rele(r->dp_db);
	}
	return (err);
}

static dirty_record_t *dbuf_dirty_impl(dbuf_t *db, uint64_t txg, bool keep);

/*
 * Mark db (level 0, cached, held) dirty in txg and return the record the
 * caller changes (dr_data): txg's, or, when a newer txg has dirtied db
 * already, the newest, which holds what readers see.  In open context txg
 * is always the newest (no tx joins the next txg while one of the closing
 * txg runs: txg.c); syncing context, changing the syncing txg, may find a
 * record of the open txg.  dn_mtx held.
 */
/* The caller is about to change dr's data: a stored form no longer matches it. */
static dirty_record_t *
dbuf_drop_stored(dirty_record_t *dr)
{
	if (dr->dr_stored != NULL) {
		tarn_free(dr->dr_stored);
		dr->dr_stored = NULL;
	}
	return (dr);
}

dirty_record_t *
dbuf_dirty(dbuf_t *db, uint64_t txg)
{
	return (dbuf_drop_stored(dbuf_dirty_impl(db, txg, true)));
}

dirty_record_t *
dbuf_dirty_whole(dbuf_t *db, uint64_t txg)
{
	return (dbuf_drop_stored(dbuf_dirty_impl(db, txg, false)));
}

/* dbuf_dirty; keep: a new buffer gets the old contents (else undefined). */
static dirty_record_t *
dbuf_dirty_impl(dbuf_t *db, uint64_t txg, bool keep)
{
	dnode_t *dn = db->db_dn;
	ASSERT(db->db_state == DB_CACHED);
	db->db_once = !keep;
	db->db_ahead = false;
	dirty_record_t *newest = db->db_dirty, *dr;
	while (newest != NULL && newest->dr_next_txg != NULL)
		newest = newest->dr_next_txg;
	dirty_record_t *mine = db->db_dirty;
	while (mine != NULL && mine->dr_txg != txg)
		mine = mine->dr_next_txg;
	/*
	 * An older txg after a newer one (syncing context only): the change
	 * goes where the newer change is, the buffer readers see; made in
	 * txg's own record it would be missing from the newest, and lost from
	 * the cache and from the next txg on disk.  When the syncing txg has
	 * a record of its own, that is what is being written: it changes that.
	 */
	if (newest != NULL && newest->dr_txg > txg && (mine == NULL ||
	    txg != __atomic_load_n(&dn->dn_os->os_dp->dp_syncing_txg, __ATOMIC_ACQUIRE)))
		return (newest);
	if (mine != NULL) {
		if (mine->dr_written) {
			/* syncing context changed it again: write it once more */
			mine->dr_written = false;
			dnode_setdirty(dn, txg);
		}
		return (mine);
	}
	if (newest != NULL && newest->dr_data == db->db_data) {
		/* The older txg keeps its buffer; we change a copy. */
		void *copy = dbuf_buf_alloc(db->db_size, false);
		if (keep)
			memcpy(copy, db->db_data, db->db_size);
		db->db_data = copy;
	}
	dr = tarn_alloc(sizeof (*dr));
	dr->dr_txg = txg;
	dr->dr_data = db->db_data;
	dr->dr_size = db->db_size;
	dr->dr_dbuf = db;
	if (newest != NULL)
		newest->dr_next_txg = dr;
	else
		db->db_dirty = dr;
	dnode_txg_t *dt = &dn->dn_txg[TXG_IDX(txg)];
	dr->dr_dnode_next = dt->dt_records;
	dt->dt_records = dr;
	dbuf_arc_forget(db);            /* dirty data is the write throttle's */
	db->db_l2ok = false;            /* no longer the bytes of the bp it was read by */
	dnode_setdirty(dn, txg);
	dmu_pool_dirty_add(dn->dn_os->os_dp, txg, db->db_size);
	return (dr);
}

/*
 * After txg is on disk: drop db's record for txg (the oldest).  dn_mtx
 * held.
 */
void
dbuf_sync_done(dbuf_t *db, dirty_record_t *dr)
{
	VERIFY3P(db->db_dirty, ==, dr);
	db->db_dirty = dr->dr_next_txg;
	if (dr->dr_data != db->db_data)
		dbuf_buf_free(dr->dr_data, dr->dr_size);
	tarn_free(dr->dr_stored);
	tarn_free(dr);
	dbuf_maybe_idle(db);
}
