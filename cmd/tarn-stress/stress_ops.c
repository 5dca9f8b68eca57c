/*
 * stress_ops.c — the random operation executor: one step picks an
 * operation on one of the worker's own objects (create, write, overwrite,
 * punch a hole, truncate, destroy, bonus write, read and compare, kick or
 * wait for a txg), runs it in one tx (sometimes two or three changes to
 * the same object in one tx), journals the records with the tx's txg
 * before the tx commits, and applies them to the model.
 *
 * Each object belongs to one worker, so the changes to an object are
 * serialized by its owner and the model needs no locks.  The choice of
 * every operation depends only on the worker's random stream and its own
 * objects, so with one worker the same seed gives the same operations;
 * only object numbers and txg boundaries depend on timing.
 */
#include "stress.h"

#define STRESS_MAX_SUBOPS 3
/* An object cut into more extents than this is truncated or destroyed,
 * so the model stays under ~50 KiB an object. */
#define STRESS_MAX_EXTENTS 2048

typedef struct stress_tx {
	stress_op_t st_ops[STRESS_MAX_SUBOPS];
	int      st_nops;
	uint64_t st_oid;            /* identity of the object the tx changes */
} stress_tx_t;

void
stress_worker_init(stress_worker_t *w, int id, uint64_t seed, objset_t *os,
    stress_model_t *m, const stress_limits_t *lim)
{
	memset(w, 0, sizeof (*w));
	w->sw_id = id;
	tarn_rand_seed(&w->sw_rand, seed * 0x9E3779B97F4A7C15ULL + (uint64_t)id * 7919 + 1);
	w->sw_os = os;
	w->sw_model = m;
	w->sw_lim = *lim;
	w->sw_buf = tarn_alloc(lim->sl_write_max);
	w->sw_buf2 = tarn_alloc(MAX(lim->sl_write_max, DN_MAX_BONUSLEN));
}

void
stress_worker_fini(stress_worker_t *w)
{
	tarn_free(w->sw_buf);
	tarn_free(w->sw_buf2);
	w->sw_buf = w->sw_buf2 = NULL;
}

/* Fold what an operation was (not its txg or object number) into the digest. */
static void
stress_digest(stress_worker_t *w, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	uint64_t h = w->sw_digest;
	uint64_t v[4] = { a, b, c, d };
	for (int i = 0; i < 4; i++) {
		h ^= v[i] + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
		h *= 0xff51afd7ed558ccdULL;
	}
	w->sw_digest = h;
}

static uint64_t
rnd(stress_worker_t *w, uint64_t n)
{
	return (tarn_rand_range(&w->sw_rand, n));
}

static stress_owner_t *
stress_own(stress_worker_t *w)
{
	return (&w->sw_model->sm_own[w->sw_id]);
}

/* A fresh identity or generation: the owner in the top bits, a counter below. */
static uint64_t
stress_new_id(stress_worker_t *w)
{
	return (((uint64_t)(w->sw_id + 1) << 40) | stress_own(w)->so_next_id++);
}

/* Objects with small blocks stay smaller (at most 1024 blocks). */
static uint64_t
stress_obj_limit(const stress_worker_t *w, uint32_t blksz)
{
	return (MIN(w->sw_lim.sl_obj_max, (uint64_t)blksz * 1024));
}

static stress_op_t *
stress_tx_add(stress_tx_t *t, stress_worker_t *w, char type, uint64_t obj)
{
	VERIFY3S(t->st_nops, <, STRESS_MAX_SUBOPS);
	stress_op_t *op = &t->st_ops[t->st_nops++];
	memset(op, 0, sizeof (*op));
	op->so_type = type;
	op->so_thread = w->sw_id;
	op->so_obj = obj;
	return (op);
}

/* A write range: mostly small, sometimes large, anywhere / over data / appended. */
static void
stress_pick_write(stress_worker_t *w, uint32_t blksz, uint64_t end, uint64_t *offp,
    uint64_t *lenp)
{
	uint64_t lim = stress_obj_limit(w, blksz), r = rnd(w, 100), len, off;
	if (r < 55)
		len = 1 + rnd(w, 8 * KiB);
	else if (r < 85)
		len = 1 + rnd(w, 64 * KiB);
	else
		len = 1 + rnd(w, w->sw_lim.sl_write_max);
	len = MIN(len, MIN(lim, w->sw_lim.sl_write_max));
	uint64_t mode = rnd(w, 10);
	if (mode < 4)
		off = rnd(w, lim - len + 1);
	else if (mode < 7)
		off = rnd(w, MIN(end, lim - len) + 1);
	else
		off = MIN(end, lim - len);
	if (rnd(w, 10) < 3) {
		off = P2ALIGN(off, blksz);
		len = MIN(P2ROUNDUP(len, blksz), MIN(lim - off, w->sw_lim.sl_write_max));
	}
	*offp = off;
	*lenp = len;
}

static void
stress_add_write(stress_tx_t *t, stress_worker_t *w, uint64_t obj, uint32_t blksz,
    uint64_t end)
{
	stress_op_t *op = stress_tx_add(t, w, STRESS_OP_WRITE, obj);
	stress_pick_write(w, blksz, end, &op->so_a, &op->so_b);
	op->so_gen = stress_new_id(w);
}

static void
stress_add_punch(stress_tx_t *t, stress_worker_t *w, const stress_obj_t *o)
{
	stress_op_t *op = stress_tx_add(t, w, STRESS_OP_PUNCH, o->sob_obj);
	uint64_t end = MAX(o->sob_end, 1);
	if (rnd(w, 10) == 0)
		end += 4 * (uint64_t)o->sob_blksz;      /* past the data too */
	op->so_a = rnd(w, end);
	op->so_b = 1 + rnd(w, end - op->so_a);
	if (rnd(w, 10) < 3) {
		op->so_a = P2ALIGN(op->so_a, o->sob_blksz);
		op->so_b = P2ROUNDUP(op->so_b, o->sob_blksz);
	}
}

static void
stress_add_trunc(stress_tx_t *t, stress_worker_t *w, const stress_obj_t *o)
{
	stress_op_t *op = stress_tx_add(t, w, STRESS_OP_TRUNC, o->sob_obj);
	uint64_t r = rnd(w, 10);
	op->so_a = r == 0 ? 0 : rnd(w, o->sob_end + 1);
	if (r < 4)
		op->so_a = P2ALIGN(op->so_a, o->sob_blksz);
}

static bool
stress_add_bonus(stress_tx_t *t, stress_worker_t *w, uint64_t obj, uint32_t bonuslen)
{
	if (bonuslen == 0)
		return (false);
	stress_op_t *op = stress_tx_add(t, w, STRESS_OP_BONUS, obj);
	op->so_b = 1 + rnd(w, bonuslen);
	op->so_gen = stress_new_id(w);
	return (true);
}

/* A second change to the same object in the same tx, sometimes. */
static void
stress_maybe_more(stress_tx_t *t, stress_worker_t *w, const stress_obj_t *o)
{
	if (t->st_nops >= STRESS_MAX_SUBOPS || rnd(w, 100) >= 15)
		return;
	uint64_t r = rnd(w, 3);
	if (r == 0 || !stress_add_bonus(t, w, o->sob_obj, o->sob_bonuslen)) {
		if (r == 1)
			stress_add_punch(t, w, o);
		else
			stress_add_write(t, w, o->sob_obj, o->sob_blksz, o->sob_end);
	}
}

static void
stress_plan_create(stress_tx_t *t, stress_worker_t *w)
{
	stress_op_t *op = stress_tx_add(t, w, STRESS_OP_CREATE, 0);
	op->so_a = SPA_MINBLOCKSIZE << rnd(w, 9);              /* 512 B .. 128 KiB */
	op->so_b = rnd(w, 10) < 3 ? 0 : rnd(w, DN_MAX_BONUSLEN + 1);
	op->so_gen = stress_new_id(w);
	t->st_oid = op->so_gen;
	if (rnd(w, 2) == 0)
		stress_add_write(t, w, 0, (uint32_t)op->so_a, 0);
	if (rnd(w, 4) == 0)
		(void) stress_add_bonus(t, w, 0, (uint32_t)op->so_b);
}

/* Short of space: destroy an object or cut one down. */
static void
stress_plan_free(stress_tx_t *t, stress_worker_t *w, stress_obj_t *o)
{
	if (rnd(w, 2) == 0 || o->sob_end == 0) {
		stress_tx_add(t, w, STRESS_OP_DESTROY, o->sob_obj);
	} else {
		stress_op_t *op = stress_tx_add(t, w, STRESS_OP_TRUNC, o->sob_obj);
		op->so_a = P2ALIGN(rnd(w, o->sob_end / 2 + 1), o->sob_blksz);
	}
}

/*
 * Decide the next operation.  Returns 'R' for a read-check of *rop,
 * 'K' / 'S' for a txg kick / wait, or 'X' for a tx planned in t.
 */
static char
stress_plan(stress_worker_t *w, stress_tx_t *t, stress_obj_t **rop)
{
	stress_owner_t *ow = stress_own(w);
	uint64_t r = rnd(w, 1000);
	int nobjs = stress_owner_nobjs(ow);
	stress_obj_t *o = nobjs ? stress_owner_obj(ow, (int)rnd(w, (uint64_t)nobjs)) : NULL;
	t->st_oid = o ? o->sob_oid : 0;
	bool full = ow->so_bytes >= w->sw_lim.sl_budget;
	if (o != NULL && (w->sw_pressure || full || stress_obj_next(o) > STRESS_MAX_EXTENTS)) {
		stress_plan_free(t, w, o);
		return ('X');
	}
	if (o == NULL || (r < 80 && nobjs < w->sw_lim.sl_max_objs)) {
		stress_plan_create(t, w);
		return ('X');
	}
	if (r >= 680 && r < 850) {
		*rop = o;
		return ('R');
	}
	if (r >= 850 && r < 875 && w->sw_lim.sl_sync_ops)
		return (r < 870 ? 'K' : 'S');
	if (r < 480 || r >= 850) {
		stress_add_write(t, w, o->sob_obj, o->sob_blksz, o->sob_end);
		if (ow->so_bytes + t->st_ops[0].so_b > w->sw_lim.sl_budget) {
			t->st_nops = 0;               /* would pass the budget */
			stress_add_trunc(t, w, o);
		}
	} else if (r < 560) {
		stress_add_punch(t, w, o);
	} else if (r < 610) {
		stress_add_trunc(t, w, o);
	} else if (r < 640) {
		stress_tx_add(t, w, STRESS_OP_DESTROY, o->sob_obj);
		return ('X');
	} else if (!stress_add_bonus(t, w, o->sob_obj, o->sob_bonuslen)) {
		stress_add_write(t, w, o->sob_obj, o->sob_blksz, o->sob_end);
	}
	stress_maybe_more(t, w, o);
	return ('X');
}

static void
stress_tx_holds(dmu_tx_t *tx, const stress_tx_t *t)
{
	bool onlyfree = true;
	for (int i = 0; i < t->st_nops; i++) {
		const stress_op_t *op = &t->st_ops[i];
		switch (op->so_type) {
		case STRESS_OP_CREATE:
			dmu_tx_hold_write(tx, 0, 0, op->so_a);
			break;
		case STRESS_OP_WRITE:
			dmu_tx_hold_write(tx, op->so_obj, op->so_a, op->so_b);
			break;
		case STRESS_OP_PUNCH:
			dmu_tx_hold_free(tx, op->so_obj, op->so_a, op->so_b);
			break;
		case STRESS_OP_TRUNC:
		case STRESS_OP_DESTROY:
			dmu_tx_hold_free(tx, op->so_obj, op->so_a, DMU_OBJECT_END);
			break;
		case STRESS_OP_BONUS:
			dmu_tx_hold_bonus(tx, op->so_obj);
			break;
		}
		if (op->so_type != STRESS_OP_TRUNC && op->so_type != STRESS_OP_DESTROY)
			onlyfree = false;
	}
	if (onlyfree)
		dmu_tx_mark_netfree(tx);
}

/* Run one change; a create sets the object number of the changes after it. */
static int
stress_exec_one(stress_worker_t *w, stress_tx_t *t, int i, dmu_tx_t *tx)
{
	stress_op_t *op = &t->st_ops[i];
	objset_t *os = w->sw_os;
	uint64_t seed = w->sw_model->sm_seed;
	int e = 0;
	switch (op->so_type) {
	case STRESS_OP_CREATE:
		e = dmu_object_alloc(os, DMU_OT_TEST, (uint32_t)op->so_a, DMU_OT_NONE,
		    (uint32_t)op->so_b, tx, &op->so_obj);
		for (int k = i + 1; e == 0 && k < t->st_nops; k++)
			t->st_ops[k].so_obj = op->so_obj;
		break;
	case STRESS_OP_WRITE:
		stress_fill(seed, t->st_oid, op->so_gen, op->so_a, op->so_b, w->sw_buf);
		e = dmu_write(os, op->so_obj, op->so_a, op->so_b, w->sw_buf, tx);
		w->sw_bytes_written += op->so_b;
		break;
	case STRESS_OP_PUNCH:
		e = dmu_free_range(os, op->so_obj, op->so_a, op->so_b, tx);
		break;
	case STRESS_OP_TRUNC:
		e = dmu_free_range(os, op->so_obj, op->so_a, DMU_OBJECT_END, tx);
		break;
	case STRESS_OP_DESTROY:
		e = dmu_object_free(os, op->so_obj, tx);
		break;
	case STRESS_OP_BONUS:
		stress_fill(seed, t->st_oid, op->so_gen, 0, op->so_b, w->sw_buf2);
		e = dmu_bonus_write(os, op->so_obj, w->sw_buf2, (uint32_t)op->so_b, tx);
		break;
	default:
		VERIFY(0);
	}
	return (e);
}

static void
stress_describe(const stress_op_t *op, char *buf, size_t len)
{
	snprintf(buf, len, "%s of object %" PRIu64 " (a %" PRIu64 ", b %" PRIu64 ") in txg %"
	    PRIu64, stress_op_name(op->so_type), op->so_obj, op->so_a, op->so_b, op->so_txg);
}

/* Execute the planned tx: assign, change, journal, commit, apply. */
static int
stress_run_tx(stress_worker_t *w, stress_tx_t *t, char *err, size_t errlen)
{
	dmu_tx_t *tx = dmu_tx_create(w->sw_os);
	stress_tx_holds(tx, t);
	int e = dmu_tx_assign(tx, TXG_WAIT);
	if (e != 0) {
		dmu_tx_abort(tx);
		snprintf(err, errlen, "dmu_tx_assign for a %s: %s", stress_op_name(t->st_ops[0].so_type),
		    tarn_strerror(e));
		if (e == ENOSPC) {
			w->sw_enospc++;
			w->sw_enospc_run++;
			w->sw_pressure = true;
		}
		return (e);
	}
	uint64_t txg = dmu_tx_get_txg(tx);
	int n = t->st_nops;
	for (int i = 0; i < t->st_nops; i++) {
		t->st_ops[i].so_txg = txg;
		e = stress_exec_one(w, t, i, tx);
		if (e != 0) {
			t->st_ops[i].so_failed = true;
			n = i + 1;
			char what[200];
			stress_describe(&t->st_ops[i], what, sizeof (what));
			snprintf(err, errlen, "%s: %s", what, tarn_strerror(e));
			break;
		}
	}
	if (w->sw_journal != NULL)
		w->sw_journal(w->sw_journal_arg, t->st_ops, n);
	dmu_tx_commit(tx);
	w->sw_txs++;
	if (e != 0)
		return (e);
	w->sw_enospc_run = 0;
	for (int i = 0; i < n; i++) {
		char aerr[256];
		int ae = stress_model_apply(w->sw_model, &t->st_ops[i], aerr, sizeof (aerr));
		if (ae != 0)
			tarn_panic(__FILE__, __LINE__, "model: %s", aerr);
		const stress_op_t *op = &t->st_ops[i];
		stress_digest(w, (uint64_t)op->so_type, op->so_a, op->so_b, op->so_gen);
	}
	w->sw_ops++;
	stress_owner_t *ow = stress_own(w);
	if (w->sw_pressure && ow->so_bytes <= w->sw_lim.sl_budget / 2)
		w->sw_pressure = false;
	return (0);
}

/* Read a part of o (or all of it) and compare with the model. */
static int
stress_read_check(stress_worker_t *w, stress_obj_t *o, char *err, size_t errlen)
{
	uint64_t off = 0, len = o->sob_end + o->sob_blksz;
	if (rnd(w, 2) == 0) {
		uint64_t lim = stress_obj_limit(w, o->sob_blksz);
		off = rnd(w, lim);
		len = 1 + rnd(w, MIN(lim - off, 256 * KiB));
	}
	len = MIN(len, 4 * MiB);
	int e = stress_obj_check_range(w->sw_os, w->sw_model, o, off, len, err, errlen);
	if (e == 0) {
		w->sw_bytes_checked += len;
		w->sw_ops++;
	}
	return (e);
}

static int
stress_wait(stress_worker_t *w, char *err, size_t errlen)
{
	dmu_pool_t *dp = dmu_objset_pool(w->sw_os);
	int e = txg_wait_synced(dp, 0);
	if (e != 0) {
		snprintf(err, errlen, "txg_wait_synced: %s", tarn_strerror(e));
		return (e);
	}
	stress_op_t s = { .so_type = STRESS_OP_SYNCED, .so_thread = w->sw_id,
		.so_txg = txg_last_synced(dp) };
	if (w->sw_journal != NULL)
		w->sw_journal(w->sw_journal_arg, &s, 1);
	w->sw_ops++;
	return (0);
}

int
stress_worker_step(stress_worker_t *w, char *err, size_t errlen)
{
	stress_tx_t t;
	memset(&t, 0, sizeof (t));
	stress_obj_t *o = NULL;
	char what = stress_plan(w, &t, &o);
	if (what != 'X')
		stress_digest(w, (uint64_t)what, o ? o->sob_oid : 0, 0, 0);
	switch (what) {
	case 'R':
		return (stress_read_check(w, o, err, errlen));
	case 'K':
		txg_kick(dmu_objset_pool(w->sw_os));
		w->sw_ops++;
		return (0);
	case 'S':
		return (stress_wait(w, err, errlen));
	default:
		return (stress_run_tx(w, &t, err, errlen));
	}
}
