/*
 * dsl_deadlist.c — dead lists: the blocks a snapshot holds that the next
 * state of its file system (a newer snapshot, or the file system itself)
 * no longer has.
 *
 * Theory.  When a file system frees a block born at or before its newest
 * snapshot, the snapshot still needs it: the block goes on the file
 * system's dead list instead of being freed.  Taking a snapshot hands
 * that list to the new snapshot and starts an empty one.  So each block
 * that only snapshots hold sits in exactly one dead list: that of the
 * first state that no longer had it.
 *
 * A dead list is split into buckets by the birth of its blocks, at the
 * txgs of the file system's older snapshots (and of a clone's origin):
 * the bucket with boundary m holds the blocks born after m and up to the
 * next boundary.  That is what makes the work of a destroy follow what it
 * frees.  Destroying snapshot S, whose older neighbour P was taken in txg
 * p and whose newer neighbour is N: the blocks only S held are those
 * born after p that N no longer has — exactly N's bucket p, which is
 * freed whole; S's own dead list (blocks born before p, still P's) moves
 * into N's by reference, bucket by bucket.  The same buckets answer the
 * space questions without reading a block pointer: a snapshot's `used`
 * is its successor's bucket at its predecessor's txg, `written@S` sums
 * the buckets below S's txg.
 *
 * Layout (FORMAT.md "Dead lists"): the list is a MOS object holding its
 * buckets as sorted (mintxg, bpobj) pairs; several pairs may share a
 * boundary after merges; a pair with bpobj 0 is a boundary with no block
 * yet.  A bpobj is a MOS object holding an array of block pointers, its
 * bonus their count and space.  All changes happen in syncing context
 * (sync tasks and the file systems' syncs), so nothing else races them.
 */
#include "dsl_impl.h"
#include "tarn_array.h"

#define DSL_DL_BLKSZ   (16 * KiB)
#define DSL_BPOBJ_BLKSZ (128 * KiB)

static int
dsl_dl_ent_cmp(const void *a, const void *b)
{
	const dsl_dl_ent_t *x = a, *y = b;
	if (x->dle_mintxg != y->dle_mintxg)
		return (x->dle_mintxg < y->dle_mintxg ? -1 : 1);
	return (x->dle_bpobj < y->dle_bpobj ? -1 : x->dle_bpobj > y->dle_bpobj);
}

static int
dsl_dl_store(objset_t *mos, uint64_t dl, const dsl_dl_ent_t *ents, int n, dmu_tx_t *tx)
{
	uint64_t count = (uint64_t)n;
	int e = dmu_free_range(mos, dl, 0, DMU_OBJECT_END, tx);
	if (e == 0 && n > 0)
		e = dmu_write(mos, dl, 0, sizeof (*ents) * (uint64_t)n, ents, tx);
	if (e == 0)
		e = dmu_bonus_write(mos, dl, &count, sizeof (count), tx);
	return (e);
}

int
dsl_dl_create(objset_t *mos, const uint64_t *keys, int n, dmu_tx_t *tx, uint64_t *objp)
{
	uint64_t obj;
	int e = dmu_object_alloc(mos, DMU_OT_DEADLIST, DSL_DL_BLKSZ, DMU_OT_DEADLIST,
	    sizeof (uint64_t), tx, &obj);
	if (e != 0)
		return (e);
	dsl_dl_ent_t *ents = tarn_alloc(sizeof (*ents) * (size_t)(n + 1));
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (k > 0 && ents[k - 1].dle_mintxg == keys[i])
			continue;
		ents[k].dle_mintxg = keys[i];
		ents[k++].dle_bpobj = 0;
	}
	qsort(ents, (size_t)k, sizeof (*ents), dsl_dl_ent_cmp);
	e = dsl_dl_store(mos, obj, ents, k, tx);
	tarn_free(ents);
	if (e == 0)
		*objp = obj;
	return (e);
}

int
dsl_dl_load(objset_t *mos, uint64_t dl, dsl_dl_ent_t **entsp, int *np)
{
	uint64_t count;
	*entsp = NULL;
	*np = 0;
	int e = dmu_bonus_read(mos, dl, &count, sizeof (count));
	if (e != 0)
		return (e);
	if (count > (1ULL << 24))
		return (SET_ERROR(EIO));
	dsl_dl_ent_t *ents = tarn_alloc(sizeof (*ents) * (count + 1));
	if (count > 0)
		e = dmu_read(mos, dl, 0, sizeof (*ents) * count, ents);
	if (e != 0) {
		tarn_free(ents);
		return (e);
	}
	*entsp = ents;
	*np = (int)count;
	return (0);
}

int
dsl_dl_keys(objset_t *mos, uint64_t dl, uint64_t **keysp, int *np)
{
	dsl_dl_ent_t *ents;
	int n, k = 0;
	int e = dsl_dl_load(mos, dl, &ents, &n);
	if (e != 0)
		return (e);
	uint64_t *keys = tarn_alloc(sizeof (uint64_t) * (size_t)(n + 1));
	for (int i = 0; i < n; i++)
		if (k == 0 || keys[k - 1] != ents[i].dle_mintxg)
			keys[k++] = ents[i].dle_mintxg;
	tarn_free(ents);
	*keysp = keys;
	*np = k;
	return (0);
}

static int
dsl_bpobj_create(objset_t *mos, dmu_tx_t *tx, uint64_t *objp)
{
	dsl_bpobj_phys_t bp;
	memset(&bp, 0, sizeof (bp));
	int e = dmu_object_alloc(mos, DMU_OT_BPOBJ, DSL_BPOBJ_BLKSZ, DMU_OT_BPOBJ,
	    sizeof (bp), tx, objp);
	if (e == 0)
		e = dmu_bonus_write(mos, *objp, &bp, sizeof (bp), tx);
	return (e);
}

/* Append n block pointers to bpobj obj. */
static int
dsl_bpobj_append(spa_t *spa, uint64_t obj, const blkptr_t *bps, size_t n, dmu_tx_t *tx)
{
	objset_t *mos = spa_meta_objset(spa);
	zio_ctx_t *zc = dmu_pool_zio(spa_dmu_pool(spa));
	dsl_bpobj_phys_t ph;
	int e = dmu_bonus_read(mos, obj, &ph, sizeof (ph));
	if (e == 0)
		e = dmu_write(mos, obj, ph.bpo_num * sizeof (blkptr_t), n * sizeof (blkptr_t), bps, tx);
	if (e != 0)
		return (e);
	for (size_t i = 0; i < n; i++) {
		ph.bpo_bytes += zio_bp_dsize(zc, &bps[i]);
		ph.bpo_lsize += bps[i].bp_lsize;
		ph.bpo_psize += bps[i].bp_psize;
	}
	ph.bpo_num += n;
	return (dmu_bonus_write(mos, obj, &ph, sizeof (ph), tx));
}

static int
dsl_bp_birth_cmp(const void *a, const void *b)
{
	uint64_t x = ((const blkptr_t *)a)->bp_birth, y = ((const blkptr_t *)b)->bp_birth;
	return (x < y ? -1 : x > y);
}

int
dsl_dl_insert(spa_t *spa, uint64_t dl, const blkptr_t *bps, size_t n, dmu_tx_t *tx)
{
	objset_t *mos = spa_meta_objset(spa);
	dsl_dl_ent_t *ents;
	int ne;
	int e = dsl_dl_load(mos, dl, &ents, &ne);
	if (e != 0)
		return (e);
	blkptr_t *sorted = tarn_alloc(sizeof (blkptr_t) * (n + 1));
	memcpy(sorted, bps, sizeof (blkptr_t) * n);
	qsort(sorted, n, sizeof (blkptr_t), dsl_bp_birth_cmp);
	bool changed = false;
	size_t i = 0;
	while (e == 0 && i < n) {
		/* the last bucket whose boundary is below this birth */
		int b = -1;
		for (int k = 0; k < ne; k++)
			if (ents[k].dle_mintxg < sorted[i].bp_birth)
				b = k;
		if (b < 0) {
			e = SET_ERROR(EIO);     /* no boundary 0: a damaged list */
			break;
		}
		uint64_t hi = UINT64_MAX;
		for (int k = b + 1; k < ne; k++)
			if (ents[k].dle_mintxg > ents[b].dle_mintxg) {
				hi = ents[k].dle_mintxg;
				break;
			}
		size_t j = i;
		while (j < n && sorted[j].bp_birth <= hi)
			j++;
		if (ents[b].dle_bpobj == 0) {
			e = dsl_bpobj_create(mos, tx, &ents[b].dle_bpobj);
			changed = true;
		}
		if (e == 0)
			e = dsl_bpobj_append(spa, ents[b].dle_bpobj, &sorted[i], j - i, tx);
		i = j;
	}
	if (e == 0 && changed)
		e = dsl_dl_store(mos, dl, ents, ne, tx);
	tarn_free(sorted);
	tarn_free(ents);
	return (e);
}

int
dsl_dl_space(objset_t *mos, uint64_t dl, uint64_t lo, uint64_t hi, uint64_t *bytes,
    uint64_t *lsize, uint64_t *psize)
{
	uint64_t b = 0, l = 0, p = 0;
	dsl_dl_ent_t *ents = NULL;
	int n = 0, e = dl == 0 ? 0 : dsl_dl_load(mos, dl, &ents, &n);
	for (int i = 0; e == 0 && i < n; i++) {
		if (ents[i].dle_bpobj == 0 || ents[i].dle_mintxg < lo || ents[i].dle_mintxg > hi)
			continue;
		dsl_bpobj_phys_t ph;
		e = dmu_bonus_read(mos, ents[i].dle_bpobj, &ph, sizeof (ph));
		b += ph.bpo_bytes;
		l += ph.bpo_lsize;
		p += ph.bpo_psize;
	}
	tarn_free(ents);
	if (bytes != NULL)
		*bytes = b;
	if (lsize != NULL)
		*lsize = l;
	if (psize != NULL)
		*psize = p;
	return (e);
}

/* Free every block of bpobj obj in tx's txg, then the object. */
static int
dsl_bpobj_free_all(spa_t *spa, uint64_t obj, dmu_tx_t *tx, uint64_t *freed)
{
	objset_t *mos = spa_meta_objset(spa);
	zio_ctx_t *zc = dmu_pool_zio(spa_dmu_pool(spa));
	dsl_bpobj_phys_t ph;
	int e = dmu_bonus_read(mos, obj, &ph, sizeof (ph));
	if (e != 0)
		return (e);
	size_t chunk = DSL_BPOBJ_BLKSZ / sizeof (blkptr_t);
	blkptr_t *bps = tarn_alloc(DSL_BPOBJ_BLKSZ);
	for (uint64_t at = 0; e == 0 && at < ph.bpo_num; at += chunk) {
		size_t n = (size_t)MIN((uint64_t)chunk, ph.bpo_num - at);
		e = dmu_read(mos, obj, at * sizeof (blkptr_t), n * sizeof (blkptr_t), bps);
		for (size_t i = 0; e == 0 && i < n; i++)
			if (!BP_IS_HOLE(&bps[i]))
				zio_free(zc, &bps[i], dmu_tx_get_txg(tx));
	}
	tarn_free(bps);
	if (e == 0) {
		*freed += ph.bpo_bytes;
		e = dmu_object_free(mos, obj, tx);
	}
	return (e);
}

int
dsl_dl_free_range(spa_t *spa, uint64_t dl, uint64_t lo, uint64_t hi, dmu_tx_t *tx,
    uint64_t *freed)
{
	objset_t *mos = spa_meta_objset(spa);
	dsl_dl_ent_t *ents;
	int n, k = 0;
	int e = dsl_dl_load(mos, dl, &ents, &n);
	if (e != 0)
		return (e);
	for (int i = 0; i < n; i++) {
		if (ents[i].dle_mintxg >= lo && ents[i].dle_mintxg <= hi) {
			if (e == 0 && ents[i].dle_bpobj != 0)
				e = dsl_bpobj_free_all(spa, ents[i].dle_bpobj, tx, freed);
			continue;
		}
		ents[k++] = ents[i];
	}
	if (e == 0)
		e = dsl_dl_store(mos, dl, ents, k, tx);
	tarn_free(ents);
	return (e);
}

int
dsl_dl_merge(objset_t *mos, uint64_t dst, uint64_t src, dmu_tx_t *tx)
{
	dsl_dl_ent_t *d, *s;
	int nd, ns;
	int e = dsl_dl_load(mos, dst, &d, &nd);
	if (e != 0)
		return (e);
	e = dsl_dl_load(mos, src, &s, &ns);
	if (e != 0) {
		tarn_free(d);
		return (e);
	}
	d = tarn_realloc(d, sizeof (*d) * (size_t)(nd + ns + 1));
	for (int i = 0; i < ns; i++) {
		bool have = false;
		for (int j = 0; j < nd && !have; j++)
			have = d[j].dle_mintxg == s[i].dle_mintxg &&
			    (d[j].dle_bpobj == s[i].dle_bpobj || s[i].dle_bpobj == 0);
		if (!have)
			d[nd++] = s[i];
	}
	/* a boundary with no blocks next to one with blocks is redundant */
	qsort(d, (size_t)nd, sizeof (*d), dsl_dl_ent_cmp);
	int k = 0;
	for (int i = 0; i < nd; i++) {
		if (d[i].dle_bpobj == 0 && ((i + 1 < nd && d[i + 1].dle_mintxg == d[i].dle_mintxg) ||
		    (k > 0 && d[k - 1].dle_mintxg == d[i].dle_mintxg)))
			continue;
		d[k++] = d[i];
	}
	e = dsl_dl_store(mos, dst, d, k, tx);
	if (e == 0)
		e = dmu_object_free(mos, src, tx);
	tarn_free(d);
	tarn_free(s);
	return (e);
}

int
dsl_dl_destroy(objset_t *mos, uint64_t dl, dmu_tx_t *tx)
{
	if (dl == 0)
		return (0);
	dsl_dl_ent_t *ents;
	int n;
	int e = dsl_dl_load(mos, dl, &ents, &n);
	for (int i = 0; e == 0 && i < n; i++)
		if (ents[i].dle_bpobj != 0)
			e = dmu_object_free(mos, ents[i].dle_bpobj, tx);
	tarn_free(ents);
	if (e == 0)
		e = dmu_object_free(mos, dl, tx);
	return (e);
}

/*
 * Re-sort the blocks of every bucket below `below` under the boundaries
 * keys[0..n) (all below `below`): promote gives a clone its origin's older
 * snapshots, whose txgs then split what used to be the clone's one bucket
 * of the origin's blocks.  Reads those blocks' pointers once.
 */
int
dsl_dl_rebucket(spa_t *spa, uint64_t dl, uint64_t below, const uint64_t *keys, int nk,
    dmu_tx_t *tx)
{
	objset_t *mos = spa_meta_objset(spa);
	dsl_dl_ent_t *ents;
	int n;
	int e = dsl_dl_load(mos, dl, &ents, &n);
	if (e != 0)
		return (e);
	tarn_array_t bps = TARN_ARRAY_INIT(blkptr_t);
	tarn_array_t kept = TARN_ARRAY_INIT(dsl_dl_ent_t);
	for (int i = 0; i < n && e == 0; i++) {
		if (ents[i].dle_mintxg >= below) {
			*(dsl_dl_ent_t *)tarn_array_push(&kept) = ents[i];
			continue;
		}
		if (ents[i].dle_bpobj == 0)
			continue;
		dsl_bpobj_phys_t ph;
		e = dmu_bonus_read(mos, ents[i].dle_bpobj, &ph, sizeof (ph));
		if (e == 0 && ph.bpo_num > 0) {
			size_t at = tarn_array_len(&bps);
			VERIFY0(tarn_array_reserve(&bps, at + ph.bpo_num));
			tarn_array_truncate(&bps, at);
			for (uint64_t k = 0; k < ph.bpo_num; k++)
				(void) tarn_array_push(&bps);
			e = dmu_read(mos, ents[i].dle_bpobj, 0, ph.bpo_num * sizeof (blkptr_t),
			    tarn_array_get(&bps, at));
		}
		if (e == 0)
			e = dmu_object_free(mos, ents[i].dle_bpobj, tx);
	}
	for (int i = 0; i < nk && e == 0; i++)
		*(dsl_dl_ent_t *)tarn_array_push(&kept) = (dsl_dl_ent_t){ keys[i], 0 };
	if (e == 0) {
		tarn_array_sort(&kept, dsl_dl_ent_cmp);
		e = dsl_dl_store(mos, dl, tarn_array_base(&kept), (int)tarn_array_len(&kept), tx);
	}
	if (e == 0 && tarn_array_len(&bps) > 0)
		e = dsl_dl_insert(spa, dl, tarn_array_base(&bps), tarn_array_len(&bps), tx);
	tarn_array_fini(&bps);
	tarn_array_fini(&kept);
	tarn_free(ents);
	return (e);
}
