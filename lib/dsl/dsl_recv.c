/*
 * dsl_recv.c — zfs receive: apply a stream's records to a file system,
 * all or nothing.
 *
 * Theory.  The records go into a dataset nobody else sees, and only a
 * verified end record makes it the target's new state:
 *  - a full stream into a new file system goes into the file system
 *    itself, created flagged inconsistent (DSL_DD_F_INCONSISTENT:
 *    iteration skips it, so it is neither listed nor mounted);
 *  - an incremental stream goes into a clone of the base snapshot named
 *    FS/%recv (names with '%' are never listed either), and a full
 *    stream with -F over a file system without snapshots into a new
 *    dataset of that name.
 * The commit (dsl_recv_commit.c) is one sync task: for the first case it
 * clears the flag and takes the snapshot; for the others it swaps the
 * target's root block and dead list with the work dataset's (the target
 * keeps its name, properties, children and snapshots; what it wrote
 * since the base goes with the work dataset, which is destroyed after)
 * and takes the snapshot, with the stream's guid and creation time, in
 * the same txg.  A mounted target is swapped under its mount (the
 * caller's swap function).  On any failure the work dataset is
 * destroyed, or with -s kept: its state (the stream's names and guids,
 * and how far it got) is a MOS ZAP hung off the work dataset, written
 * by a sync task every few seconds as records are applied and at the
 * failure, always after the data it describes is on disk.
 *
 * Applying records.  An object record claims the object (or frees and
 * claims it again when its type, sizes or generation differ from what
 * is there: the sender then sends all its data) and writes its bonus;
 * write records write whole blocks (-c / -w blocks keep their stored
 * form: dmu_write_stored); free records free ranges and objects.  The
 * records share transactions of up to 4 MiB, so a stream of small files
 * costs a few transactions per thousand records, not one per record.
 * Every field a record carries is checked before use: a stream that
 * passed its checksums can still be hostile, and gets EBADMSG, never an
 * assertion.
 */
#include "dsl_recv_impl.h"

#define RECV_TX_BYTES   (4 * MiB)
#define RECV_TX_RECORDS 2048

static int
recv_bad(dsl_recv_t *rv, const dsl_drr_t *h, const char *what)
{
	(void) snprintf(rv->rv_err, rv->rv_errlen, "record %" PRIu64 " (%s): %s", h->drr_seq,
	    dsl_drr_type_name(h->drr_type), what);
	return (SET_ERROR(EBADMSG));
}

/* The open transaction, new if the current one is full or missing. */
static int
recv_tx(dsl_recv_t *rv, uint64_t bytes)
{
	if (rv->rv_tx != NULL && (rv->rv_tx_bytes + bytes > RECV_TX_BYTES ||
	    rv->rv_tx_records >= RECV_TX_RECORDS))
		dsl_recv_tx_commit(rv);
	if (rv->rv_tx != NULL) {
		rv->rv_tx_bytes += bytes;
		rv->rv_tx_records++;
		return (0);
	}
	dmu_tx_t *tx = dmu_tx_create(rv->rv_os);
	dmu_tx_hold_space(tx, RECV_TX_BYTES + MAX(bytes, 1 * MiB));
	int e = dmu_tx_assign(tx, TXG_WAIT);
	if (e != 0) {
		dmu_tx_abort(tx);
		(void) snprintf(rv->rv_err, rv->rv_errlen, "%s", e == ENOSPC ?
		    "out of space" : strerror(e));
		return (e);
	}
	rv->rv_tx = tx;
	rv->rv_tx_bytes = bytes;
	rv->rv_tx_records = 1;
	return (0);
}

/* Before the input is read (it may wait): no transaction stays open meanwhile. */
static void
dsl_recv_tx_commit_cb(void *arg)
{
	dsl_recv_tx_commit(arg);
}

void
dsl_recv_tx_commit(dsl_recv_t *rv)
{
	if (rv->rv_tx != NULL) {
		dmu_tx_commit(rv->rv_tx);
		rv->rv_tx = NULL;
	}
}

static bool
recv_blksz_ok(uint64_t b)
{
	return (b >= SPA_MINBLOCKSIZE && b <= SPA_MAXBLOCKSIZE && (b & (b - 1)) == 0);
}

/*
 * The stream describes an object the work dataset has (a number in use at
 * the base): make it what the stream says.  A new object of the same
 * kind (a file for a file) is emptied in place, and a block size changed
 * in place when the object has at most one block (the sender sends all
 * of its data then: every block was rewritten); anything else is freed
 * and claimed again, which takes a txg sync in between (a dnode cannot
 * be freed and allocated in one txg).  ENOENT: claim it afresh.
 */
static int
recv_reuse(dsl_recv_t *rv, uint64_t obj, const dmu_object_info_t *doi, uint64_t type,
    uint64_t btype, uint64_t blen, uint64_t blksz, bool fresh)
{
	int e = 0;
	if (doi->doi_type == type && doi->doi_bonus_type == btype && doi->doi_bonus_size == blen) {
		if (fresh)
			e = dmu_free_range(rv->rv_os, obj, 0, DMU_OBJECT_END, rv->rv_tx);
		if (e == 0 && doi->doi_data_block_size != blksz)
			e = dmu_object_set_blocksize(rv->rv_os, obj, (uint32_t)blksz, rv->rv_tx);
		if (e != ENOTSUP)
			return (e);
	}
	/* free it, let the free reach the disk, then claim the number again */
	if ((e = dmu_object_free(rv->rv_os, obj, rv->rv_tx)) != 0)
		return (e);
	dsl_recv_tx_commit(rv);
	if ((e = txg_wait_synced(dmu_objset_pool(rv->rv_os), 0)) != 0)
		return (e);
	if ((e = recv_tx(rv, blen + 512)) != 0)
		return (e);
	return (SET_ERROR(ENOENT));
}

static int
recv_object(dsl_recv_t *rv, const dsl_drr_t *h, const void *bonus)
{
	uint64_t obj = h->drr_u[0], type = h->drr_u[1], btype = h->drr_u[2];
	uint64_t blksz = h->drr_u[3], blen = h->drr_u[4];
	if (obj == 0 || obj >= DMU_MAX_OBJECT || type == DMU_OT_NONE ||
	    type >= DMU_OT_NUMTYPES || btype >= DMU_OT_NUMTYPES || !recv_blksz_ok(blksz) ||
	    blen > DN_MAX_BONUSLEN || blen != h->drr_plen)
		return (recv_bad(rv, h, "impossible object description"));
	int e = recv_tx(rv, blen + 512);
	if (e != 0)
		return (e);
	dmu_object_info_t doi;
	e = dmu_object_info(rv->rv_os, obj, &doi);
	bool resumed = rv->rv_resuming && obj == rv->rv_resume_obj;
	if (e == 0)
		e = recv_reuse(rv, obj, &doi, type, btype, blen, blksz,
		    (h->drr_flags & DSL_DRR_F_NEW) && !resumed);
	if (e == ENOENT)
		e = dmu_object_claim(rv->rv_os, obj, (dmu_object_type_t)type, (uint32_t)blksz,
		    (dmu_object_type_t)btype, (uint32_t)blen, rv->rv_tx);
	if (e == 0 && blen > 0)
		e = dmu_bonus_write(rv->rv_os, obj, bonus, (uint32_t)blen, rv->rv_tx);
	if (e != 0)
		return (e == EINVAL || e == EEXIST ? recv_bad(rv, h, "cannot make the object") : e);
	rv->rv_pos_obj = obj;
	rv->rv_pos_off = 0;
	rv->rv_cur_obj = obj;
	rv->rv_cur_blksz = blksz;
	return (0);
}

static int
recv_freeobjects(dsl_recv_t *rv, const dsl_drr_t *h)
{
	uint64_t first = h->drr_u[0], count = h->drr_u[1];
	if (first > DMU_MAX_OBJECT || count > DMU_MAX_OBJECT - first)
		return (recv_bad(rv, h, "impossible object range"));
	uint64_t end = first + count;
	if (first == 0)
		first = 1;
	int e = 0;
	/* a short range is checked object by object, a long one by the allocated ones */
	uint64_t obj = first - 1;
	while (e == 0) {
		if (count <= 64) {
			if (++obj >= end)
				break;
		} else {
			/*
			 * Records come in object order, so what this range may
			 * hold are the base's objects: numbers below what the
			 * work dataset had when the receive began.
			 */
			e = dmu_object_next_below(rv->rv_os, &obj, MIN(end, rv->rv_obj_limit));
			if (e == ESRCH || (e == 0 && obj >= end)) {
				e = 0;
				break;
			}
			if (e != 0)
				break;
		}
		dmu_object_info_t doi;
		if (dmu_object_info(rv->rv_os, obj, &doi) != 0)
			continue;
		if ((e = recv_tx(rv, 512)) == 0)
			e = dmu_object_free(rv->rv_os, obj, rv->rv_tx);
		if (obj == rv->rv_cur_obj)
			rv->rv_cur_obj = 0;
	}
	return (e);
}

static int
recv_write(dsl_recv_t *rv, const dsl_drr_t *h, const void *payload)
{
	uint64_t obj = h->drr_u[0], off = h->drr_u[1], lsize = h->drr_u[2];
	uint64_t psize = h->drr_u[3], comp = h->drr_u[4], cksum = h->drr_u[5];
	bool stored = (h->drr_flags & DSL_DRR_F_STORED) != 0;
	if (obj != rv->rv_cur_obj || obj == 0)
		return (recv_bad(rv, h, "data for an object the stream did not describe"));
	if (lsize != rv->rv_cur_blksz || off % lsize != 0 || psize != h->drr_plen ||
	    off / lsize >= (1ULL << 40) || (stored ? psize > lsize || psize == 0 ||
	    comp <= ZIO_COMPRESS_OFF || comp >= ZIO_COMPRESS_FUNCTIONS ||
	    psize % SPA_MINBLOCKSIZE != 0 : psize != lsize) ||
	    (cksum != 0 && (cksum < ZIO_CHECKSUM_OFF || cksum >= ZIO_CHECKSUM_FUNCTIONS)))
		return (recv_bad(rv, h, "impossible block description"));
	int e = recv_tx(rv, lsize);
	if (e != 0)
		return (e);
	if (!stored) {
		e = dmu_write(rv->rv_os, obj, off, lsize, payload, rv->rv_tx);
	} else {
		if (rv->rv_lbuf_size < lsize) {
			tarn_free(rv->rv_lbuf);
			rv->rv_lbuf = tarn_alloc(lsize);
			rv->rv_lbuf_size = lsize;
		}
		if (zio_decompress((int)comp, payload, psize, rv->rv_lbuf, lsize) != 0)
			return (recv_bad(rv, h, "the compressed block does not decompress"));
		e = dmu_write_stored(rv->rv_os, obj, off, (uint32_t)lsize, rv->rv_lbuf, payload,
		    (uint32_t)psize, (uint8_t)comp, (uint8_t)cksum, rv->rv_tx);
	}
	if (e == EINVAL || e == EFBIG)
		return (recv_bad(rv, h, "cannot write the block"));
	rv->rv_pos_obj = obj;
	rv->rv_pos_off = off + lsize;
	return (e);
}

static int
recv_free(dsl_recv_t *rv, const dsl_drr_t *h)
{
	uint64_t obj = h->drr_u[0], off = h->drr_u[1], len = h->drr_u[2];
	if (obj == 0 || obj >= DMU_MAX_OBJECT)
		return (recv_bad(rv, h, "impossible object number"));
	dmu_object_info_t doi;
	if (dmu_object_info(rv->rv_os, obj, &doi) != 0)
		return (0);
	if (len != DMU_OBJECT_END && off + len < off)
		len = DMU_OBJECT_END;
	/* nothing there: nothing to do (the common free past an object's end) */
	if (off >= doi.doi_max_offset && doi.doi_max_offset != 0)
		return (0);
	int e = recv_tx(rv, 4096);
	if (e == 0)
		e = dmu_free_range(rv->rv_os, obj, off, len, rv->rv_tx);
	return (e);
}

/* Apply records until the end record; 0 once it verified. */
int
dsl_recv_apply(dsl_recv_t *rv)
{
	for (;;) {
		dsl_drr_t h;
		const void *p;
		int e = dsl_stream_get(rv->rv_si, &h, &p, rv->rv_err, rv->rv_errlen);
		if (e != 0)
			return (e);
		if (rv->rv_dryrun && h.drr_type != DSL_DRR_END && h.drr_type != DSL_DRR_BEGIN &&
		    h.drr_type != DSL_DRR_PACKAGE && h.drr_type != DSL_DRR_PACKAGE_END)
			continue;
		switch (h.drr_type) {
		case DSL_DRR_OBJECT:
			e = recv_object(rv, &h, p);
			break;
		case DSL_DRR_FREEOBJECTS:
			e = recv_freeobjects(rv, &h);
			break;
		case DSL_DRR_WRITE:
			e = recv_write(rv, &h, p);
			break;
		case DSL_DRR_FREE:
			e = recv_free(rv, &h);
			break;
		case DSL_DRR_END:
			if (h.drr_u[0] != rv->rv_begin.dsb_toguid || h.drr_plen != 0)
				return (recv_bad(rv, &h, "does not match the stream's begin record"));
			dsl_recv_tx_commit(rv);
			return (0);
		default:
			return (recv_bad(rv, &h, "unexpected inside a substream"));
		}
		if (e != 0)
			return (e);
		if (rv->rv_resumable)
			dsl_recv_checkpoint_maybe(rv);
	}
}

int
dsl_receive(dsl_pool_t *dp, const char *target, const dsl_recv_opts_t *opts,
    dsl_stream_in_t *si, dsl_recv_result_t *res, char *err, size_t errlen)
{
	memset(res, 0, sizeof (*res));
	err[0] = '\0';
	dsl_recv_t *rv = tarn_alloc(sizeof (*rv));
	rv->rv_dp = dp;
	rv->rv_opts = opts;
	rv->rv_si = si;
	rv->rv_err = err;
	rv->rv_errlen = errlen;
	rv->rv_resumable = (opts->dro_flags & DSL_RECV_RESUMABLE) != 0;
	rv->rv_dryrun = (opts->dro_flags & DSL_RECV_DRYRUN) != 0;
	dsl_stream_kind_t kind;
	int e = dsl_stream_peek(si, &kind, &rv->rv_begin, err, errlen);
	uint64_t start = dsl_stream_in_record_start(si);
	if (e == 0 && kind != DSL_STREAM_BEGIN) {
		(void) snprintf(err, errlen, kind == DSL_STREAM_EOF ? "the stream is empty" :
		    "a substream must start with a BEGIN record");
		e = SET_ERROR(EBADMSG);
	}
	if (e == 0)
		e = dsl_recv_prepare(rv, target);
	if (e == 0) {
		/* the begin record's payload: the name, then the properties */
		dsl_drr_t h;
		const void *p;
		e = dsl_stream_get(si, &h, &p, err, errlen);
		size_t nl = strlen(rv->rv_begin.dsb_toname) + 1;
		if (e == 0 && rv->rv_begin.dsb_has_props && h.drr_plen > nl) {
			rv->rv_props = tarn_alloc(h.drr_plen - nl + 1);
			memcpy(rv->rv_props, (const char *)p + nl, h.drr_plen - nl);
			rv->rv_propslen = h.drr_plen - nl;
		}
	}
	dsl_stream_in_set_wait(si, dsl_recv_tx_commit_cb, rv);
	bool shared = false;
	if (e == 0 && opts->dro_exclusive != NULL && !rv->rv_dryrun) {
		opts->dro_exclusive(opts->dro_exclusive_arg, false);
		shared = true;
	}
	if (e == 0)
		e = dsl_recv_apply(rv);
	if (shared)
		opts->dro_exclusive(opts->dro_exclusive_arg, true);
	if (e == 0 && !rv->rv_dryrun && rv->rv_begin.dsb_saved) {
		if ((e = dsl_recv_save(rv)) != 0)
			dsl_recv_fail(rv, e);
	} else if (e == 0 && !rv->rv_dryrun)
		e = dsl_recv_commit(rv);
	else if (!rv->rv_dryrun)
		dsl_recv_fail(rv, e);
	dsl_recv_release(rv);
	dsl_stream_in_set_wait(si, NULL, NULL);
	if (e == 0) {
		dsl_join(res->drr_snap, sizeof (res->drr_snap), rv->rv_fs, '@', rv->rv_snap);
		res->drr_created = rv->rv_new && !rv->rv_begin.dsb_saved;
		res->drr_saved = rv->rv_begin.dsb_saved;
		res->drr_props = rv->rv_props;
		res->drr_propslen = rv->rv_propslen;
		rv->rv_props = NULL;
	}
	res->drr_bytes = dsl_stream_in_bytes(si) - start;
	tarn_free(rv->rv_props);
	tarn_free(rv->rv_lbuf);
	tarn_free(rv);
	return (e);
}
