/*
 * dsl_recv_impl.h — what dsl_recv.c (records) and dsl_recv_commit.c (the
 * work dataset, its state and the commit) share.
 */
#ifndef TARN_DSL_RECV_IMPL_H
#define TARN_DSL_RECV_IMPL_H

#include "dsl_impl.h"

typedef enum dsl_recv_mode {
	DSL_RECV_NEW = 1,        /* a new file system, received in place (inconsistent) */
	DSL_RECV_SWAP_FULL,      /* -F full stream: FS/%recv, swapped in */
	DSL_RECV_SWAP_INCR,      /* incremental: FS/%recv cloned from the base, swapped in */
} dsl_recv_mode_t;

typedef struct dsl_recv {
	dsl_pool_t *rv_dp;
	const dsl_recv_opts_t *rv_opts;
	dsl_stream_in_t *rv_si;
	dsl_stream_begin_t rv_begin;
	char    *rv_err;
	size_t   rv_errlen;
	bool     rv_resumable, rv_dryrun;
	bool     rv_resuming;             /* going on from a saved state */
	bool     rv_new;                  /* the file system is new */
	bool     rv_active;               /* the work dataset is registered busy */
	bool     rv_saved_done;           /* a --saved stream ended: its state is final */
	dsl_recv_mode_t rv_mode;
	char     rv_fs[DSL_NAME_MAX];     /* the target file system */
	char     rv_snap[ZAP_MAXNAMELEN]; /* the new snapshot's name */
	char     rv_wname[DSL_NAME_MAX + 8]; /* the work dataset */
	uint64_t rv_head, rv_wobj, rv_base;  /* target (0: new), work dataset, base snapshot */
	objset_t *rv_os;                  /* the work dataset's */
	dmu_tx_t *rv_tx;                  /* shared by records (dsl_recv.c) */
	uint64_t rv_tx_bytes;
	int      rv_tx_records;
	uint64_t rv_cur_obj, rv_cur_blksz;   /* the object being received */
	uint64_t rv_obj_limit;            /* above the base's objects (freeobjects walks) */
	uint64_t rv_pos_obj, rv_pos_off;     /* resume point after the last record applied */
	uint64_t rv_resume_obj;
	uint64_t rv_ckpt_ns, rv_ckpt_bytes;  /* the last checkpoint of the state */
	void    *rv_lbuf;                 /* decompressed -c blocks */
	uint64_t rv_lbuf_size;
	char    *rv_props;
	size_t   rv_propslen;
} dsl_recv_t;

/* send --saved: a partial receive's work dataset, held busy while it is sent. */
typedef struct dsl_recv_saved {
	dsl_resume_t sv_state;
	uint64_t sv_wobj;
	char     sv_wname[DSL_NAME_MAX + 8];
	blkptr_t sv_bp;                   /* its root as last synced */
	uint64_t sv_base_txg;             /* its origin's txg: what an incremental walk skips */
	bool     sv_clone;                /* a new file system received as a clone */
} dsl_recv_saved_t;
/* ENOENT "'fs' does not have any saved receive state", EBUSY (a receive is going on). */
int dsl_recv_saved_hold(dsl_pool_t *dp, const char *fs, dsl_recv_saved_t *sv, char *err,
    size_t errlen);
void dsl_recv_saved_rele(dsl_pool_t *dp, dsl_recv_saved_t *sv);

/* dsl_recv.c */
void dsl_recv_tx_commit(dsl_recv_t *rv);
/* dsl_recv_commit.c */
/* Check the target against the stream, make (or find) the work dataset and open it. */
int dsl_recv_prepare(dsl_recv_t *rv, const char *target);
/* The end record verified: make the work the target's new state. */
int dsl_recv_commit(dsl_recv_t *rv);
/* The receive failed (error e): destroy the work, or with -s keep it and its state. */
void dsl_recv_fail(dsl_recv_t *rv, int e);
/* The work dataset is no longer busy (dsl_receive's end). */
void dsl_recv_release(dsl_recv_t *rv);
/* The end of a --saved stream verified: save its state instead of a commit. */
int dsl_recv_save(dsl_recv_t *rv);
/* -s: save how far the receive got, every few seconds. */
void dsl_recv_checkpoint_maybe(dsl_recv_t *rv);

#endif
