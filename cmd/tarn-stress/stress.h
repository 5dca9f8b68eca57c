/*
 * stress.h — the pieces of tarn-stress that the power-cut unit test
 * (tests/unit/spa/test_powercut.c) shares: the model of an object set,
 * the operation records that change it (the journal), and the random
 * operation executor.  Theory: the comment at the top of stress.c.
 */
#ifndef TARN_STRESS_H
#define TARN_STRESS_H

#include "tarn_util.h"
#include "tarn_array.h"
#include "spa.h"
#include "dmu.h"

/* Content that differs from the model (a verification failure). */
#define STRESS_EMISMATCH EBADMSG

/* ---- operation records ---- */

/*
 * One change to one object, made inside one tx.  An executed tx gives one
 * record per change, all with the tx's txg, written to the journal before
 * the tx commits (so a synced txg always has its records in the journal).
 */
typedef enum stress_op_type {
	STRESS_OP_CREATE = 'C',   /* so_a = block size, so_b = bonus length, so_gen = oid */
	STRESS_OP_WRITE = 'W',    /* [so_a, so_a + so_b) := content(oid, so_gen) */
	STRESS_OP_PUNCH = 'P',    /* [so_a, so_a + so_b) := zeros (dmu_free_range) */
	STRESS_OP_TRUNC = 'T',    /* [so_a, end) := zeros (free to the end) */
	STRESS_OP_DESTROY = 'D',  /* the object is freed */
	STRESS_OP_BONUS = 'B',    /* bonus [0, so_b) := content(oid, so_gen) */
	STRESS_OP_SYNCED = 'S',   /* not a change: so_txg was seen on disk */
} stress_op_type_t;

typedef struct stress_op {
	char     so_type;         /* stress_op_type_t */
	bool     so_failed;       /* the dmu call failed: its effect is unknown */
	int      so_thread;       /* owner of the object */
	uint64_t so_txg;
	uint64_t so_obj;
	uint64_t so_a, so_b;
	uint64_t so_gen;
} stress_op_t;

/* One journal line (no newline) for op, and back.  Parse: 0 or EINVAL. */
int stress_op_format(const stress_op_t *op, char *buf, size_t len);
int stress_op_parse(const char *line, stress_op_t *op);
const char *stress_op_name(char type);

/* ---- the model ---- */

/* Bytes [se_off, se_off + se_len) hold content(oid, se_gen). */
typedef struct stress_extent {
	uint64_t se_off, se_len, se_gen;
} stress_extent_t;

/* What one object must contain: its extents (sorted, disjoint); zeros elsewhere. */
typedef struct stress_obj {
	uint64_t sob_obj;               /* object number */
	uint64_t sob_oid;               /* identity, part of the content seed */
	uint32_t sob_blksz;
	uint32_t sob_bonuslen;
	uint8_t  sob_bonus[DN_MAX_BONUSLEN];
	tarn_array_t sob_ext;           /* stress_extent_t: stress_obj_ext, stress_obj_next */
	uint64_t sob_bytes;             /* sum of extent lengths */
	uint64_t sob_end;               /* end of the last extent (0 if none) */
} stress_obj_t;

/* The objects of one owner (a worker thread). */
typedef struct stress_owner {
	tarn_array_t so_objs;           /* stress_obj_t *: stress_owner_obj, stress_owner_nobjs */
	uint64_t so_bytes;              /* live bytes of all its objects */
	uint64_t so_next_id;            /* next oid / generation counter */
} stress_owner_t;

/* Extent k of o (0 <= k < stress_obj_next(o)), and their number. */
static inline stress_extent_t *
stress_obj_ext(const stress_obj_t *o, int k)
{
	return (&TARN_ARRAY_AT(&o->sob_ext, stress_extent_t, k));
}

static inline int
stress_obj_next(const stress_obj_t *o)
{
	return ((int)tarn_array_len(&o->sob_ext));
}

/* Object j of ow (0 <= j < stress_owner_nobjs(ow)), and their number. */
static inline stress_obj_t *
stress_owner_obj(const stress_owner_t *ow, int j)
{
	return (TARN_ARRAY_AT(&ow->so_objs, stress_obj_t *, j));
}

static inline int
stress_owner_nobjs(const stress_owner_t *ow)
{
	return ((int)tarn_array_len(&ow->so_objs));
}

/*
 * The model of an object set.  Each object belongs to one owner and only
 * that owner changes it, so owners need no lock against each other; a
 * reader of the whole model (verification) runs while no owner does.
 */
typedef struct stress_model {
	uint64_t sm_seed;
	int      sm_nowners;
	stress_owner_t *sm_own;
} stress_model_t;

stress_model_t *stress_model_create(uint64_t seed, int nowners);
stress_model_t *stress_model_clone(const stress_model_t *m);
void stress_model_free(stress_model_t *m);
stress_obj_t *stress_model_find(const stress_model_t *m, int owner, uint64_t obj);
uint64_t stress_model_objects(const stress_model_t *m);
uint64_t stress_model_bytes(const stress_model_t *m);
/*
 * Apply one (not failed, not SYNCED) record.  EINVAL with a message when
 * it does not fit the model (creating an object that exists, changing
 * one that does not): the journal and the model disagree.
 */
int stress_model_apply(stress_model_t *m, const stress_op_t *op, char *err, size_t errlen);

/* The content of (oid, gen) at absolute offsets [off, off + len). */
void stress_fill(uint64_t seed, uint64_t oid, uint64_t gen, uint64_t off, uint64_t len,
    uint8_t *buf);
/* What the model says bytes [off, off + len) of o hold. */
void stress_obj_expect(const stress_model_t *m, const stress_obj_t *o, uint64_t off,
    uint64_t len, uint8_t *buf);
/*
 * Compare o with what the object set holds in [off, off + len).  0, or
 * STRESS_EMISMATCH / the read's errno with a message.
 */
int stress_obj_check_range(objset_t *os, const stress_model_t *m, const stress_obj_t *o,
    uint64_t off, uint64_t len, char *err, size_t errlen);
/*
 * Verify the whole object set against the model: every object's type,
 * block size, bonus and every byte up to its maximum offset (which must
 * not pass obj_max rounded up to its block size), and that no other
 * object exists.  *bytes (may be NULL) counts bytes compared.
 */
int stress_model_verify(objset_t *os, const stress_model_t *m, uint64_t obj_max,
    uint64_t *bytes, char *err, size_t errlen);

/*
 * The two halves of stress_model_verify: one object (its type, block
 * size, bytes and bonus: 0, STRESS_EMISMATCH, or the read's errno), and
 * that the object set holds no object the model does not.
 */
int stress_obj_verify(objset_t *os, const stress_model_t *m, const stress_obj_t *o,
    uint64_t obj_max, uint64_t *bytes, char *err, size_t errlen);
int stress_model_check_extra(objset_t *os, const stress_model_t *m, char *err, size_t errlen);

/* ---- the random operation executor ---- */

typedef struct stress_limits {
	int      sl_max_objs;           /* objects per owner */
	uint64_t sl_obj_max;            /* largest object (bytes) */
	uint64_t sl_budget;             /* live bytes per owner */
	uint64_t sl_write_max;          /* largest single write */
	bool     sl_sync_ops;           /* may kick / wait for txgs itself */
} stress_limits_t;

/* Receives the records of one tx before it commits (nops >= 1). */
typedef void (*stress_journal_fn_t)(void *arg, const stress_op_t *ops, int nops);

typedef struct stress_worker {
	int      sw_id;                 /* owner number in the model */
	tarn_rand_t sw_rand;
	objset_t *sw_os;
	stress_model_t *sw_model;
	stress_limits_t sw_lim;
	stress_journal_fn_t sw_journal;
	void    *sw_journal_arg;
	uint8_t *sw_buf, *sw_buf2;      /* sl_write_max bytes each */
	bool     sw_pressure;           /* short of space: prefer frees */
	/* statistics */
	uint64_t sw_ops, sw_txs, sw_bytes_written, sw_bytes_checked;
	uint64_t sw_enospc, sw_enospc_run;
	uint64_t sw_digest;             /* of the operations chosen (not txgs/objects) */
} stress_worker_t;

/* The worker's random stream depends only on (seed, id). */
void stress_worker_init(stress_worker_t *w, int id, uint64_t seed, objset_t *os,
    stress_model_t *m, const stress_limits_t *lim);
void stress_worker_fini(stress_worker_t *w);
/*
 * Execute one random operation on the worker's own objects and apply it
 * to the model.  Returns 0; ENOSPC when the tx was refused (nothing
 * changed); EIO and the like when the pool failed (the op's records were
 * journaled with so_failed); STRESS_EMISMATCH when a read disagreed with
 * the model.  err gets a one-line description on error.
 */
int stress_worker_step(stress_worker_t *w, char *err, size_t errlen);

#endif
