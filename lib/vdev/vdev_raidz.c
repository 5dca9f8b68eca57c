/*
 * vdev_raidz.c — RAID-Z: single, double and triple parity over n leaves
 * with variable-width stripes.
 *
 * THEORY
 *
 * Address space.  A raidz vdev of n children and sector size
 * S = 1 << ashift is one long sequence of sectors interleaved across its
 * children: top-level sector s lives on child s % n at child sector
 * s / n.  Its allocatable size is n times its smallest child's.
 *
 * One block, one stripe.  A block of psize bytes needs D = ceil(psize/S)
 * data sectors.  It is cut into at most n - p data columns and given p
 * parity columns, so that it is a complete stripe of its own: no other
 * block shares its parity, a block is never updated in place (copy on
 * write), hence no read-modify-write of parity and no "write hole".
 * With dc = n - p data columns per row, q = D / dc full rows and
 * r = D % dc sectors left over, the block occupies
 *     tot = D + p * ceil(D / dc)
 * sectors: rows of n sectors starting at the block's first sector b
 * (column c of the block lies on child (b + c) % n, one sector deeper
 * when it wraps past the last child).  Column 0..p-1 are parity, the
 * rest data, in order.  When r != 0 the first bc = r + p columns are one
 * sector longer (q + 1) than the others (q).  When q == 0 only bc
 * columns exist.  The data of the block fills the data columns one
 * after another: column p holds the first bytes, and so on.  Each column
 * is contiguous on its child, so one pread/pwrite per column.
 *
 * Skip sectors.  The allocated size is tot rounded up to a multiple of
 * p + 1 sectors (vdev_raidz_asize).  Any free extent is then a multiple
 * of p + 1 sectors and can always hold the smallest block (one data
 * sector plus p parity sectors); the padding sectors are never written.
 *
 * Parity.  Columns are treated as vectors of bytes in GF(2^8) (ISA-L's
 * field, polynomial x^8+x^4+x^3+x^2+1).  Shorter data columns, and the
 * last data column past the block's end, count as zero-padded to the
 * longest column L.  With k data columns d_0..d_{k-1} (k = number of data
 * columns of this block), parity column j (0..p-1) is
 *     P_j = sum_i  d_i / ((k + j) XOR i)        (a Cauchy matrix)
 * which is ISA-L's gf_gen_cauchy1_matrix(k + p, k) below its identity.
 * Any square submatrix of a Cauchy matrix is invertible, so [I; C] is
 * MDS: any k of the k + p columns determine the others, for every width
 * up to 255 and p up to 3.  (P is therefore not plain XOR; the format
 * says so in docs/FORMAT.md.)  Encoding is one ec_encode_data() call.
 *
 * Reconstruction.  To rebuild a set E of columns (|E| <= p): take the
 * surviving data columns and as many surviving parity columns as there
 * are erased data columns, form the k x k matrix of their generator rows,
 * invert it (gf_invert_matrix), and its rows for the erased data columns
 * give them as combinations of the survivors (ec_encode_data again).
 * Erased parity is recomputed from the complete data.
 *
 * Reads.  The fast path reads the data columns straight into the
 * caller's buffer and verifies (checksum callback).  Columns of children
 * that cannot serve I/O, or that return EIO, are rebuilt from parity
 * first.  If the block still does not verify, the slow path reads every
 * column (parity too) and tries, in order: the errored columns alone,
 * then every combination of 1..p - #errored further columns presumed
 * bad, data and parity alike (combinations that cannot change the data
 * are skipped); the first reconstruction that verifies wins.  The data
 * then being known good, every column read is compared with what it
 * should hold: exactly those that differ (or gave EIO) are the bad
 * ones, charged a CKSUM (or READ) error and rewritten unless NOHEAL.  A
 * scrub takes the slow path at once, so parity is checked too.
 *
 * Writes compute parity, then write every column whose child can serve
 * I/O; the write succeeds while no more than p columns failed.
 *
 * Missed txgs (vdev_dtl.c).  A column whose child missed the block's
 * txg is treated as missing and rebuilt from parity; a scrub or
 * resilver then writes the rebuilt column into it.  Only when the block
 * cannot be read that way is a second try made that reads such columns
 * too (their errors uncharged).  A child may be a replacing/spare pair
 * of leaves; rc_leaf names the leaf that answered.
 */
#include "vdev_impl.h"

#include <isa-l/erasure_code.h>

typedef struct raidz_col {
	vdev_t   *rc_vd;       /* the child leaf */
	uint64_t  rc_offset;   /* in the child's allocatable space */
	uint64_t  rc_size;     /* bytes on disk: whole sectors */
	uint64_t  rc_valid;    /* payload bytes; beyond them the column is zero */
	uint8_t  *rc_data;     /* data: into the caller's buffer; parity: scratch */
	uint8_t  *rc_copy;     /* slow path: what was read, zero-padded to rm_L */
	int       rc_error;    /* 0, EIO, or ENXIO for a missing child */
	bool      rc_missing;  /* child cannot serve I/O (or misses the txg) */
	bool      rc_lacking;  /* read although its child misses the txg */
	vdev_t   *rc_leaf;     /* the leaf that answered (charged for errors) */
	bool      rc_read;     /* read without error (rc_copy / rc_data valid) */
} raidz_col_t;

typedef struct raidz_map {
	int       rm_cols;     /* columns that hold something */
	int       rm_nparity;
	int       rm_ndata;    /* k */
	uint64_t  rm_L;        /* longest column (= every parity column), bytes */
	raidz_col_t rm_col[];
} raidz_map_t;

/* ---- the code: Cauchy generator rows and ISA-L tables, per (k, p) ---- */

typedef struct raidz_code {
	uint8_t *rcd_coef;     /* p rows of k coefficients */
	uint8_t *rcd_tbls;     /* ec_init_tables(k, p, coef) */
} raidz_code_t;

static raidz_code_t *raidz_codes[VDEV_RAIDZ_MAXPARITY + 1][256];
static pthread_mutex_t raidz_codes_lock = PTHREAD_MUTEX_INITIALIZER;

static const raidz_code_t *
raidz_code(int k, int p)
{
	ASSERT(k >= 1 && p >= 1 && p <= VDEV_RAIDZ_MAXPARITY && k + p <= 256);
	raidz_code_t *rc = __atomic_load_n(&raidz_codes[p][k], __ATOMIC_ACQUIRE);
	if (rc != NULL)
		return (rc);
	VERIFY0(pthread_mutex_lock(&raidz_codes_lock));
	rc = raidz_codes[p][k];
	if (rc == NULL) {
		uint8_t *gen = tarn_alloc((size_t)(k + p) * (size_t)k);
		gf_gen_cauchy1_matrix(gen, k + p, k);
		rc = tarn_alloc(sizeof (*rc));
		rc->rcd_coef = tarn_alloc((size_t)p * (size_t)k);
		memcpy(rc->rcd_coef, gen + (size_t)k * (size_t)k, (size_t)p * (size_t)k);
		rc->rcd_tbls = tarn_alloc(32 * (size_t)k * (size_t)p);
		ec_init_tables(k, p, rc->rcd_coef, rc->rcd_tbls);
		tarn_free(gen);
		__atomic_store_n(&raidz_codes[p][k], rc, __ATOMIC_RELEASE);
	}
	VERIFY0(pthread_mutex_unlock(&raidz_codes_lock));
	return (rc);
}

/*
 * dst[j] = sum_i coef(j, i) * src[i] over L bytes, where src[i] holds
 * svalid[i] bytes and is zero beyond, and only dvalid[j] bytes of dst[j]
 * are stored.  The common prefix that every buffer really holds is
 * computed in place; the short tail (at most a couple of sectors per
 * column, see the layout) goes through zero-padded scratch copies.
 */
static void
raidz_lincomb(uint64_t L, int nsrc, uint8_t **src, const uint64_t *svalid,
    int ndst, uint8_t **dst, const uint64_t *dvalid, uint8_t *tbls)
{
	uint64_t bulk = L;
	for (int i = 0; i < nsrc; i++)
		bulk = MIN(bulk, svalid[i]);
	for (int j = 0; j < ndst; j++)
		bulk = MIN(bulk, dvalid[j]);
	if (bulk > 0)
		ec_encode_data((int)bulk, nsrc, ndst, tbls, src, dst);
	if (bulk == L)
		return;

	uint64_t tl = L - bulk;
	uint8_t *t = vdev_scratch(VDEV_SCRATCH_RAIDZ_TAIL,
	    (size_t)(nsrc + ndst) * tl + (size_t)(nsrc + ndst) * sizeof (uint8_t *));
	uint8_t **ts = (uint8_t **)t;
	uint8_t **td = ts + nsrc;
	uint8_t *area = t + (size_t)(nsrc + ndst) * sizeof (uint8_t *);
	for (int i = 0; i < nsrc; i++) {
		ts[i] = area + (size_t)i * tl;
		uint64_t have = svalid[i] > bulk ? MIN(svalid[i], L) - bulk : 0;
		memcpy(ts[i], src[i] + bulk, have);
		memset(ts[i] + have, 0, tl - have);
	}
	for (int j = 0; j < ndst; j++)
		td[j] = area + (size_t)(nsrc + j) * tl;
	ec_encode_data((int)tl, nsrc, ndst, tbls, ts, td);
	for (int j = 0; j < ndst; j++)
		if (dvalid[j] > bulk)
			memcpy(dst[j] + bulk, td[j], MIN(dvalid[j], L) - bulk);
}

/* Parity of the data columns (cols[p..]) into par[0..p-1] (L bytes each). */
static void
raidz_generate(raidz_map_t *rm, uint8_t **cols, const uint64_t *valid, uint8_t **par)
{
	int p = rm->rm_nparity, k = rm->rm_ndata;
	uint64_t pvalid[VDEV_RAIDZ_MAXPARITY];
	for (int j = 0; j < p; j++)
		pvalid[j] = rm->rm_L;
	const raidz_code_t *code = raidz_code(k, p);
	raidz_lincomb(rm->rm_L, k, cols + p, valid + p, p, par, pvalid, code->rcd_tbls);
}

/*
 * Rebuild the erased data columns.  cols[c]/valid[c]: every column
 * (parity first); erased[c]: columns not to be trusted (at most p in
 * all); the rebuilt data column c goes to dst[c] (dvalid[c] bytes).
 * Parity columns used: the first survivors, as many as erased data
 * columns.  0, or EIO when too few columns survive.
 */
static int
raidz_solve(raidz_map_t *rm, uint8_t **cols, const uint64_t *valid,
    const bool *erased, uint8_t **dst, const uint64_t *dvalid)
{
	int p = rm->rm_nparity, k = rm->rm_ndata;
	int ed[VDEV_RAIDZ_MAXPARITY], ned = 0, used = 0;
	uint8_t *srcs[256], *outs[VDEV_RAIDZ_MAXPARITY];
	uint64_t svalid[256], ovalid[VDEV_RAIDZ_MAXPARITY];

	for (int j = 0; j < k; j++) {
		if (!erased[p + j])
			continue;
		if (ned == p)
			return (SET_ERROR(EIO));
		ed[ned++] = j;
	}
	if (ned == 0)
		return (0);
	const raidz_code_t *code = raidz_code(k, p);
	uint8_t *mem = vdev_scratch(VDEV_SCRATCH_RAIDZ_TBLS,
	    2 * (size_t)k * (size_t)k + 32 * (size_t)k * (size_t)ned + (size_t)ned * k);
	uint8_t *b = mem, *binv = mem + (size_t)k * k;
	uint8_t *dec = binv + (size_t)k * k, *tbls = dec + (size_t)ned * k;
	memset(b, 0, (size_t)k * k);
	int row = 0;
	for (int j = 0; j < k; j++) {
		if (erased[p + j])
			continue;
		b[(size_t)row * k + j] = 1;
		srcs[row] = cols[p + j];
		svalid[row++] = valid[p + j];
	}
	for (int j = 0; j < p && used < ned; j++) {
		if (erased[j])
			continue;
		memcpy(b + (size_t)row * k, code->rcd_coef + (size_t)j * k, (size_t)k);
		srcs[row] = cols[j];
		svalid[row++] = valid[j];
		used++;
	}
	if (used < ned)
		return (SET_ERROR(EIO));
	if (gf_invert_matrix(b, binv, k) != 0)
		return (SET_ERROR(EIO));    /* cannot happen with a Cauchy code */
	for (int i = 0; i < ned; i++) {
		memcpy(dec + (size_t)i * k, binv + (size_t)ed[i] * k, (size_t)k);
		outs[i] = dst[p + ed[i]];
		ovalid[i] = dvalid[p + ed[i]];
	}
	ec_init_tables(k, ned, dec, tbls);
	raidz_lincomb(rm->rm_L, k, srcs, svalid, ned, outs, ovalid, tbls);
	return (0);
}

/* ---- geometry ---- */

static uint64_t
vdev_raidz_asize(vdev_t *vd, uint64_t psize)
{
	uint64_t ashift = vd->vdev_ashift;
	uint64_t n = (uint64_t)VDEV_NCHILD(vd), p = (uint64_t)vd->vdev_nparity;
	if (n <= p)
		return (0);     /* not a valid raidz (never opened) */
	uint64_t d = DIV_ROUND_UP(psize, 1ULL << ashift);
	uint64_t tot = d + p * DIV_ROUND_UP(d, n - p);
	tot = DIV_ROUND_UP(tot, p + 1) * (p + 1);
	return (tot << ashift);
}

/* How raidz_map_alloc judges which columns are missing. */
enum raidz_use {
	RAIDZ_WRITE,           /* missing: cannot be written */
	RAIDZ_READ,            /* missing: cannot be read, or misses the txg */
	RAIDZ_READ_LACKING,    /* missing: cannot be read at all */
};

/* The columns of the block at offset/psize, data pointing into buf. */
static raidz_map_t *
raidz_map_alloc(vdev_t *vd, uint64_t offset, uint64_t psize, uint8_t *buf,
    uint64_t txg, enum raidz_use use)
{
	uint64_t ashift = vd->vdev_ashift, sec = 1ULL << ashift;
	uint64_t n = (uint64_t)VDEV_NCHILD(vd), p = (uint64_t)vd->vdev_nparity;
	uint64_t b = offset >> ashift, s = DIV_ROUND_UP(psize, sec);
	uint64_t f = b % n, o = b / n;
	uint64_t q = s / (n - p), r = s - q * (n - p);
	uint64_t bc = r == 0 ? 0 : r + p;
	uint64_t acols = q == 0 ? bc : n;

	raidz_map_t *rm = tarn_alloc(sizeof (*rm) + acols * sizeof (raidz_col_t));
	rm->rm_cols = (int)acols;
	rm->rm_nparity = (int)p;
	rm->rm_ndata = (int)(acols - p);
	rm->rm_L = (q + (r != 0)) << ashift;
	uint64_t doff = 0;
	for (uint64_t c = 0; c < acols; c++) {
		raidz_col_t *rc = &rm->rm_col[c];
		uint64_t child = f + c, coff = o;
		if (child >= n) {
			child -= n;
			coff++;
		}
		rc->rc_vd = VDEV_CHILD(vd, child);
		rc->rc_offset = coff << ashift;
		rc->rc_size = (c < bc ? q + 1 : q) << ashift;
		rc->rc_leaf = rc->rc_vd;
		if (use == RAIDZ_READ) {
			rc->rc_missing = !vdev_child_readable(rc->rc_vd, txg);
		} else {
			rc->rc_missing = !vdev_child_writable(rc->rc_vd);
			rc->rc_lacking = use == RAIDZ_READ_LACKING && !rc->rc_missing &&
			    !vdev_child_readable(rc->rc_vd, txg);
		}
		if (c < p) {
			rc->rc_valid = rc->rc_size;
		} else {
			ASSERT3U(doff, <, psize);
			rc->rc_data = buf + doff;
			rc->rc_valid = MIN(rc->rc_size, psize - doff);
			doff += rc->rc_size;
		}
	}
	return (rm);
}

/* Column pointers and valid lengths, from rc_data or rc_copy. */
static void
raidz_vectors(raidz_map_t *rm, bool copies, uint8_t **cols, uint64_t *valid)
{
	for (int c = 0; c < rm->rm_cols; c++) {
		raidz_col_t *rc = &rm->rm_col[c];
		cols[c] = copies ? rc->rc_copy : rc->rc_data;
		valid[c] = copies ? rm->rm_L : rc->rc_valid;
	}
}

/* ---- open, state, flush ---- */

static int
vdev_raidz_open(vdev_t *vd)
{
	uint64_t n = (uint64_t)VDEV_NCHILD(vd);
	if (vd->vdev_nparity < 1 || vd->vdev_nparity > VDEV_RAIDZ_MAXPARITY ||
	    n <= (uint64_t)vd->vdev_nparity) {
		vd->vdev_state = VDEV_STATE_CANT_OPEN;
		return (SET_ERROR(EINVAL));
	}
	uint64_t preset = vd->vdev_asize;
	uint64_t a = vdev_group_child_asize(vd, preset / n);
	if (preset == 0)
		vd->vdev_asize = a * n;
	vd->vdev_ops->vop_state_change(vd);
	return (vdev_usable(vd) ? 0 : SET_ERROR(ENXIO));
}

static void
vdev_raidz_close(vdev_t *vd)
{
}

static void
vdev_raidz_state_change(vdev_t *vd)
{
	int failed = 0;
	bool partial = false;
	for (int c = 0; c < VDEV_NCHILD(vd); c++) {
		const vdev_t *cvd = VDEV_CHILD(vd, c);
		if (!vdev_usable(cvd))
			failed++;
		else
			partial |= cvd->vdev_ops->vop_leaf ? !vdev_dtl_empty(cvd) :
			    cvd->vdev_state != VDEV_STATE_HEALTHY;
	}
	if (failed == 0 && !partial)
		vd->vdev_state = VDEV_STATE_HEALTHY;
	else if (failed <= vd->vdev_nparity)
		vd->vdev_state = VDEV_STATE_DEGRADED;
	else
		vd->vdev_state = VDEV_STATE_CANT_OPEN;
}

static int
vdev_raidz_flush(vdev_t *vd)
{
	int errs[VDEV_MAX_CHILDREN];
	int failed = 0;
	vdev_children_flush(vd, errs);
	for (int c = 0; c < VDEV_NCHILD(vd); c++)
		if (errs[c] != 0)
			failed++;
	return (failed <= vd->vdev_nparity ? 0 : SET_ERROR(EIO));
}

/* ---- write ---- */

static int
vdev_raidz_write(vdev_t *vd, vdev_io_t *io)
{
	if (!IS_P2ALIGNED(io->vio_offset, vdev_sector(vd)))
		return (SET_ERROR(EINVAL));
	raidz_map_t *rm = raidz_map_alloc(vd, io->vio_offset, io->vio_size, io->vio_buf,
	    io->vio_txg, RAIDZ_WRITE);
	int p = rm->rm_nparity, failed = 0;
	uint8_t *cols[256], *par = vdev_scratch(VDEV_SCRATCH_RAIDZ_COLS, p * rm->rm_L);
	uint64_t valid[256];

	for (int j = 0; j < p; j++)
		rm->rm_col[j].rc_data = par + (size_t)j * rm->rm_L;
	raidz_vectors(rm, false, cols, valid);
	raidz_generate(rm, cols, valid, cols);
	vdev_t *cvd[256];
	uint8_t order[256];
	for (int c = 0; c < rm->rm_cols; c++)
		cvd[c] = rm->rm_col[c].rc_vd;
	vdev_write_order(cvd, rm->rm_cols, io, order);
	for (int i = 0; i < rm->rm_cols; i++) {
		raidz_col_t *rc = &rm->rm_col[order[i]];
		if (vdev_child_write(rc->rc_vd, io, rc->rc_data, rc->rc_valid,
		    rc->rc_offset, io->vio_flags) != 0)
			failed++;
	}
	tarn_free(rm);
	return (failed <= p ? 0 : SET_ERROR(EIO));
}

/* ---- read ---- */

static bool
raidz_verify(vdev_io_t *io)
{
	return (io->vio_verify == NULL ||
	    io->vio_verify(io->vio_verify_arg, io->vio_buf, io->vio_size) == 0);
}

/*
 * Read column c into buf (rc_valid bytes for data, rc_size for parity);
 * rc_error says how it went.
 */
static void
raidz_read_col(raidz_map_t *rm, int c, uint8_t *buf, const vdev_io_t *io)
{
	raidz_col_t *rc = &rm->rm_col[c];
	rc->rc_read = false;
	if (rc->rc_missing) {
		rc->rc_error = ENXIO;
		return;
	}
	/* EIO is charged once the read is over (raidz_finish / raidz_fail). */
	uint64_t len = c < rm->rm_nparity ? rc->rc_size : rc->rc_valid;
	rc->rc_error = vdev_child_read(rc->rc_vd, io, buf, len, rc->rc_offset,
	    io->vio_flags | VDEV_IO_PROBE, rc->rc_lacking, &rc->rc_leaf) == 0 ? 0 : EIO;
	rc->rc_read = rc->rc_error == 0;
}

/* What the parity columns should hold, computed from the data in vio_buf. */
static uint8_t *
raidz_good_parity(raidz_map_t *rm)
{
	int p = rm->rm_nparity;
	uint8_t *good = vdev_scratch(VDEV_SCRATCH_RAIDZ_OUT, p * rm->rm_L);
	uint8_t *par[VDEV_RAIDZ_MAXPARITY], *cols[256];
	uint64_t valid[256];
	for (int j = 0; j < p; j++)
		par[j] = good + (size_t)j * rm->rm_L;
	raidz_vectors(rm, false, cols, valid);
	raidz_generate(rm, cols, valid, par);
	return (good);
}

/*
 * The block is known good in vio_buf.  Charge and rewrite every column
 * that failed with EIO, and when `compare` (the slow path read them all
 * into rc_copy) every column whose content differs from what it should
 * hold.  Content is judged only when there is a verify callback: without
 * one, "what it should hold" is not known.
 */
static void
raidz_finish(vdev_t *vd, raidz_map_t *rm, vdev_io_t *io, bool compare)
{
	int p = rm->rm_nparity;
	uint8_t *good = NULL;
	bool judge = compare && io->vio_verify != NULL;
	bool settle = (io->vio_flags & (VDEV_IO_SCRUB | VDEV_IO_NOHEAL)) == VDEV_IO_SCRUB &&
	    io->vio_verify != NULL;

	for (int c = 0; c < rm->rm_cols; c++) {
		raidz_col_t *rc = &rm->rm_col[c];
		bool eio = rc->rc_error == EIO;
		bool fill = settle && (rc->rc_missing || (!eio && rc->rc_read));
		if (!fill && (rc->rc_missing || (!eio && !(judge && rc->rc_read))))
			continue;
		if (c < p && good == NULL)
			good = raidz_good_parity(rm);
		const uint8_t *want = c < p ? good + (size_t)c * rm->rm_L : rc->rc_data;
		if (rc->rc_missing) {
			/* resilver: fill the leaves that missed the block */
			vdev_child_settle(rc->rc_vd, io, want, rc->rc_valid, rc->rc_offset, NULL);
			continue;
		}
		if (eio) {
			if (!rc->rc_lacking)
				vdev_stat_ioerr(rc->rc_leaf, 0, io->vio_flags);
		} else if (judge && memcmp(rc->rc_copy, want, rc->rc_valid) != 0) {
			if (!rc->rc_lacking)
				vdev_stat_cksum(rc->rc_leaf, io->vio_flags);
		} else {
			vdev_child_settle(rc->rc_vd, io, want, rc->rc_valid, rc->rc_offset,
			    rc->rc_leaf);
			continue;
		}
		if (!rc->rc_lacking)
			io->vio_bad_children++;
		if ((io->vio_flags & VDEV_IO_NOHEAL) || rc->rc_vd->vdev_readonly)
			continue;
		if (vdev_child_write(rc->rc_vd, io, want, rc->rc_valid, rc->rc_offset,
		    io->vio_flags | VDEV_IO_REPAIR) == 0)
			vdev_stat_repair(rc->rc_leaf, io, rc->rc_size);
	}
}

/* The read failed for good: charge the columns that gave EIO, and vd. */
static int
raidz_fail(vdev_t *vd, raidz_map_t *rm, vdev_io_t *io, int err)
{
	io->vio_bad_children = 0;
	for (int c = 0; c < rm->rm_cols; c++) {
		raidz_col_t *rc = &rm->rm_col[c];
		if (rc->rc_error == 0)
			continue;
		if (rc->rc_lacking)
			continue;
		io->vio_bad_children++;
		if (rc->rc_error == EIO)
			vdev_stat_ioerr(rc->rc_leaf, 0, io->vio_flags);
	}
	if (err == EIO)
		vdev_stat_ioerr(vd, 0, io->vio_flags);
	else
		vdev_stat_cksum(vd, io->vio_flags);
	return (SET_ERROR(err));
}

/*
 * Fast path: data columns into the caller's buffer; columns that are
 * missing or fail are rebuilt from the first parity columns that read.
 * Returns 0 (verified and finished), ECKSUM (try the slow path) or EIO
 * (too many columns lost).
 */
static int
raidz_read_fast(vdev_t *vd, raidz_map_t *rm, vdev_io_t *io)
{
	int p = rm->rm_nparity, nerr = 0, have = 0;
	bool erased[256] = { false };
	uint8_t *cols[256];
	uint64_t valid[256];

	for (int c = p; c < rm->rm_cols; c++) {
		raidz_read_col(rm, c, rm->rm_col[c].rc_data, io);
		if ((erased[c] = rm->rm_col[c].rc_error != 0))
			nerr++;
	}
	if (nerr > 0) {
		uint8_t *par = vdev_scratch(VDEV_SCRATCH_RAIDZ_COLS, p * rm->rm_L);
		for (int c = 0; c < p; c++) {
			rm->rm_col[c].rc_data = par + (size_t)c * rm->rm_L;
			erased[c] = true;
			if (have < nerr) {
				raidz_read_col(rm, c, rm->rm_col[c].rc_data, io);
				if (rm->rm_col[c].rc_read) {
					erased[c] = false;
					have++;
				}
			}
		}
		if (have < nerr)
			return (SET_ERROR(EIO));
		raidz_vectors(rm, false, cols, valid);
		VERIFY0(raidz_solve(rm, cols, valid, erased, cols, valid));
	}
	if (!raidz_verify(io))
		return (SET_ERROR(ECKSUM));
	if (nerr > 0)
		raidz_finish(vd, rm, io, false);
	return (0);
}

/*
 * One trial of the slow path: rebuild the data columns in `erased` from
 * the copies, place them in the caller's buffer and verify.  On failure
 * the buffer is put back as read.
 */
static bool
raidz_try(raidz_map_t *rm, vdev_io_t *io, const bool *erased)
{
	int p = rm->rm_nparity;
	uint8_t *cols[256], *dst[256];
	uint64_t valid[256], dvalid[256];
	int nout = 0;

	raidz_vectors(rm, true, cols, valid);
	for (int c = p; c < rm->rm_cols; c++)
		if (erased[c])
			nout++;
	uint8_t *out = vdev_scratch(VDEV_SCRATCH_RAIDZ_OUT, MAX(nout, 1) * rm->rm_L);
	for (int c = 0, i = 0; c < rm->rm_cols; c++) {
		dst[c] = NULL;
		dvalid[c] = rm->rm_L;
		if (c >= p && erased[c])
			dst[c] = out + (size_t)(i++) * rm->rm_L;
	}
	if (raidz_solve(rm, cols, valid, erased, dst, dvalid) != 0)
		return (false);
	for (int c = p; c < rm->rm_cols; c++)
		if (erased[c])
			memcpy(rm->rm_col[c].rc_data, dst[c], rm->rm_col[c].rc_valid);
	if (raidz_verify(io))
		return (true);
	for (int c = p; c < rm->rm_cols; c++)
		if (erased[c] && rm->rm_col[c].rc_read)
			memcpy(rm->rm_col[c].rc_data, rm->rm_col[c].rc_copy,
			    rm->rm_col[c].rc_valid);
	return (false);
}

/*
 * Whether the erased set is worth a trial: it must erase some data
 * (unless it is the errored set alone), leave enough parity, and not
 * erase a parity column that the solver would not have used anyway
 * (that trial equals a smaller one already made).
 */
static bool
raidz_trial_useful(raidz_map_t *rm, const bool *erased, bool base)
{
	int p = rm->rm_nparity, ned = 0, used = 0, last_used = -1;
	for (int c = p; c < rm->rm_cols; c++)
		ned += erased[c];
	if (ned == 0)
		return (base);
	for (int j = 0; j < p && used < ned; j++)
		if (!erased[j]) {
			used++;
			last_used = j;
		}
	if (used < ned)
		return (false);
	for (int j = last_used + 1; j < p; j++)
		if (erased[j] && !base && rm->rm_col[j].rc_error == 0)
			return (false);
	return (true);
}

/* Try every set of `extra` more columns presumed bad; true when one verifies. */
static bool
raidz_combinations(raidz_map_t *rm, vdev_io_t *io, bool *erased, int extra)
{
	int cand[256], m = 0, idx[VDEV_RAIDZ_MAXPARITY];
	for (int c = 0; c < rm->rm_cols; c++)
		if (rm->rm_col[c].rc_error == 0)
			cand[m++] = c;
	if (extra > m)
		return (false);
	for (int i = 0; i < extra; i++)
		idx[i] = i;
	for (;;) {
		for (int i = 0; i < extra; i++)
			erased[cand[idx[i]]] = true;
		bool ok = raidz_trial_useful(rm, erased, extra == 0) &&
		    raidz_try(rm, io, erased);
		if (ok)
			return (true);
		for (int i = 0; i < extra; i++)
			erased[cand[idx[i]]] = false;
		int i = extra - 1;
		while (i >= 0 && idx[i] == m - extra + i)
			i--;
		if (i < 0)
			return (false);
		idx[i]++;
		for (int j = i + 1; j < extra; j++)
			idx[j] = idx[j - 1] + 1;
	}
}

/*
 * Slow path (and scrub): read every column into its own copy, then try
 * reconstructions from the fewest presumed-bad columns up.
 */
static int
raidz_read_slow(vdev_t *vd, raidz_map_t *rm, vdev_io_t *io)
{
	int p = rm->rm_nparity, nerr = 0;
	bool erased[256] = { false };
	uint64_t L = rm->rm_L;
	uint8_t *copies = vdev_scratch(VDEV_SCRATCH_RAIDZ_COLS, rm->rm_cols * L);

	for (int c = 0; c < rm->rm_cols; c++) {
		raidz_col_t *rc = &rm->rm_col[c];
		if (c < p)
			rc->rc_data = NULL;      /* parity lives in rc_copy from now on */
		rc->rc_copy = copies + (size_t)c * L;
		raidz_read_col(rm, c, rc->rc_copy, io);
		uint64_t got = rc->rc_read ? (c < p ? rc->rc_size : rc->rc_valid) : 0;
		memset(rc->rc_copy + got, 0, L - got);
		if (c >= p && rc->rc_read)
			memcpy(rc->rc_data, rc->rc_copy, rc->rc_valid);
		if ((erased[c] = rc->rc_error != 0))
			nerr++;
	}
	io->vio_bad_children = 0;
	for (int extra = 0; nerr <= p && extra <= p - nerr; extra++) {
		if (raidz_combinations(rm, io, erased, extra)) {
			raidz_finish(vd, rm, io, true);
			return (0);
		}
	}
	return (raidz_fail(vd, rm, io, nerr > p ? EIO : ECKSUM));
}

/* One try of the read with the columns judged as `use` says. */
static int
raidz_read_try(vdev_t *vd, vdev_io_t *io, enum raidz_use use, bool *lacking)
{
	raidz_map_t *rm = raidz_map_alloc(vd, io->vio_offset, io->vio_size, io->vio_buf,
	    io->vio_txg, use);
	int err = ECKSUM;
	*lacking = false;
	for (int c = 0; c < rm->rm_cols; c++)
		*lacking |= rm->rm_col[c].rc_missing &&
		    vdev_child_writable(rm->rm_col[c].rc_vd);
	if (!(io->vio_flags & VDEV_IO_SCRUB)) {
		err = raidz_read_fast(vd, rm, io);
		if (err == EIO)
			err = raidz_fail(vd, rm, io, EIO);
	}
	if (err == ECKSUM)
		err = raidz_read_slow(vd, rm, io);
	tarn_free(rm);
	return (err);
}

static int
vdev_raidz_read(vdev_t *vd, vdev_io_t *io)
{
	if (!IS_P2ALIGNED(io->vio_offset, vdev_sector(vd)))
		return (SET_ERROR(EINVAL));
	bool lacking = false;
	int err = raidz_read_try(vd, io, RAIDZ_READ, &lacking);
	if (err != 0 && lacking && io->vio_verify != NULL) {
		/* Last resort: read the columns that missed the txg as well. */
		int err2 = raidz_read_try(vd, io, RAIDZ_READ_LACKING, &lacking);
		if (err2 == 0)
			err = 0;
	}
	return (err);
}

const vdev_ops_t vdev_raidz_ops = {
	.vop_open = vdev_raidz_open,
	.vop_close = vdev_raidz_close,
	.vop_asize = vdev_raidz_asize,
	.vop_read = vdev_raidz_read,
	.vop_write = vdev_raidz_write,
	.vop_flush = vdev_raidz_flush,
	.vop_state_change = vdev_raidz_state_change,
	.vop_name = "raidz",
	.vop_leaf = false,
};
