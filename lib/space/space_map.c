/*
 * space_map.c — the on-disk space map: encoding and decoding of its 16-byte
 * entries, and a small growable buffer that metaslab sync and condense fill.
 *
 * A space map is an append-only log of a metaslab's changes, grouped by the
 * txg that made them; replaying it (metaslab_load, theory in metaslab.c)
 * rebuilds the set of allocated space and the frees still deferred.  The
 * bit layout is in docs/FORMAT.md "Space maps":
 *
 *   word 0: bits 0-7 type, bits 8-15 zero, bits 16-63 length in sectors
 *           (0 for a TXG marker)
 *   word 1: offset in sectors from the metaslab start, or the TXG marker's txg
 *
 * Decoding trusts nothing: every field is range-checked before use.
 */
#include "space_impl.h"

#define SM_TYPE_MASK    0xffULL
#define SM_RSVD_MASK    0xff00ULL
#define SM_LEN_SHIFT    16

void
space_map_encode(const sm_entry_t *e, void *out16)
{
	uint64_t w[2];
	switch (e->sme_type) {
	case SM_TXG:
		w[0] = SM_TXG;
		w[1] = e->sme_txg;
		break;
	case SM_ALLOC:
	case SM_FREE:
	case SM_FREE_NOW:
		VERIFY(IS_P2ALIGNED(e->sme_offset, SPA_MINBLOCKSIZE));
		VERIFY(IS_P2ALIGNED(e->sme_size, SPA_MINBLOCKSIZE));
		VERIFY3U(e->sme_size, >, 0);
		VERIFY3U(e->sme_size >> SPA_MINBLOCKSHIFT, <=, SM_MAX_LEN_SECTORS);
		w[0] = (uint64_t)e->sme_type |
		    ((e->sme_size >> SPA_MINBLOCKSHIFT) << SM_LEN_SHIFT);
		w[1] = e->sme_offset >> SPA_MINBLOCKSHIFT;
		break;
	default:
		tarn_panic(__FILE__, __LINE__, "bad space map entry type %d",
		    (int)e->sme_type);
	}
	memcpy(out16, w, SM_ENTRY_SIZE);        /* little-endian host */
}

/* Decode one entry; EINVAL when it cannot be a valid entry of a msize map. */
static int
sm_decode(const uint8_t *p, uint64_t msize, sm_entry_t *e)
{
	uint64_t w[2];
	memcpy(w, p, SM_ENTRY_SIZE);
	uint64_t type = w[0] & SM_TYPE_MASK;
	if ((w[0] & SM_RSVD_MASK) != 0)
		return (SET_ERROR(EINVAL));
	memset(e, 0, sizeof (*e));
	switch (type) {
	case SM_TXG:
		if ((w[0] >> SM_LEN_SHIFT) != 0)
			return (SET_ERROR(EINVAL));
		e->sme_type = SM_TXG;
		e->sme_txg = w[1];
		return (0);
	case SM_ALLOC:
	case SM_FREE:
	case SM_FREE_NOW: {
		uint64_t len = w[0] >> SM_LEN_SHIFT, off = w[1];
		uint64_t msec = msize >> SPA_MINBLOCKSHIFT;
		if (len == 0 || off >= msec || len > msec - off)
			return (SET_ERROR(EINVAL));
		e->sme_type = (sm_type_t)type;
		e->sme_offset = off << SPA_MINBLOCKSHIFT;
		e->sme_size = len << SPA_MINBLOCKSHIFT;
		return (0);
	}
	default:
		return (SET_ERROR(EINVAL));
	}
}

int
space_map_iterate(const void *buf, size_t len, uint64_t msize,
    space_map_fn_t fn, void *arg)
{
	const uint8_t *p = buf;
	bool have_txg = false;
	uint64_t txg = 0;
	if (len % SM_ENTRY_SIZE != 0 || (len > 0 && buf == NULL))
		return (SET_ERROR(EINVAL));
	for (size_t i = 0; i < len; i += SM_ENTRY_SIZE) {
		sm_entry_t e;
		int err = sm_decode(p + i, msize, &e);
		if (err != 0)
			return (err);
		if (e.sme_type == SM_TXG) {
			/* txgs never go backwards within one map */
			if (have_txg && e.sme_txg < txg)
				return (SET_ERROR(EINVAL));
			have_txg = true;
			txg = e.sme_txg;
			continue;
		}
		if (!have_txg)
			return (SET_ERROR(EINVAL));
		e.sme_txg = txg;
		if (fn != NULL && (err = fn(arg, &e)) != 0)
			return (err);
	}
	return (0);
}

/* ---- building maps ---- */

static void
sm_buf_put(sm_buf_t *b, const sm_entry_t *e)
{
	space_map_encode(e, tarn_array_push(&b->sb_ents));
}

void
space_map_buf_txg(sm_buf_t *b, uint64_t txg)
{
	if (b->sb_have_txg && b->sb_txg == txg)
		return;
	if (tarn_array_len(&b->sb_ents) == 0)
		VERIFY0(tarn_array_reserve(&b->sb_ents, 64));     /* the first size */
	ASSERT(!b->sb_have_txg || txg >= b->sb_txg);
	sm_entry_t e = { .sme_type = SM_TXG, .sme_txg = txg };
	sm_buf_put(b, &e);
	b->sb_have_txg = true;
	b->sb_txg = txg;
}

void
space_map_buf_range(sm_buf_t *b, sm_type_t type, uint64_t off, uint64_t size)
{
	const uint64_t max = SM_MAX_LEN_SECTORS << SPA_MINBLOCKSHIFT;
	VERIFY(b->sb_have_txg);
	while (size > 0) {
		uint64_t n = MIN(size, max);
		sm_entry_t e = { .sme_type = type, .sme_offset = off, .sme_size = n };
		sm_buf_put(b, &e);
		off += n;
		size -= n;
	}
}

void
space_map_buf_take(sm_buf_t *b, void **buf, size_t *len)
{
	size_t n;
	*buf = tarn_array_steal(&b->sb_ents, &n);
	if (n == 0) {
		tarn_free(*buf);
		*buf = NULL;
	}
	*len = n * SM_ENTRY_SIZE;
	b->sb_txg = 0;
	b->sb_have_txg = false;
}
