/*
 * dsl_recv_commit.c — the work dataset of a receive: checking the target
 * against the stream, making the work dataset, saving a resumable
 * receive's state, and the commit that makes the work the target's new
 * state (dsl_recv.c has the theory).
 *
 * The state of a resumable receive is a MOS ZAP (dd_recv_state of the
 * work dataset): "toname" (the sent snapshot's name) and "state" =
 * [toguid, fromguid, object, offset, bytes, flags].  It is written only
 * by sync tasks, and a task runs after every transaction committed
 * before it is on disk, so the state never claims more than the pool
 * holds.  A work dataset without a state is a leftover (a receive that
 * died without -s) and is destroyed by the next receive into the target.
 */
#include "dsl_recv_impl.h"

#define RECV_CKPT_NS    (2ULL * 1000 * 1000 * 1000)
#define RECV_CKPT_BYTES (256 * MiB)

enum { RS_TOGUID = 0, RS_FROMGUID, RS_OBJ, RS_OFF, RS_BYTES, RS_FLAGS, RS_N };

/* ---- receives in progress (every handle of every pool) ---- */

typedef struct recv_active {
	spa_t   *ra_spa;
	uint64_t ra_obj;
} recv_active_t;
static pthread_mutex_t recv_active_lock = PTHREAD_MUTEX_INITIALIZER;
static tarn_array_t recv_active = TARN_ARRAY_INIT(recv_active_t);

bool
dsl_recv_is_active(spa_t *spa, uint64_t obj)
{
	bool found = false;
	pthread_mutex_lock(&recv_active_lock);
	for (size_t i = 0; i < tarn_array_len(&recv_active) && !found; i++) {
		recv_active_t *a = tarn_array_get(&recv_active, i);
		found = a->ra_spa == spa && a->ra_obj == obj;
	}
	pthread_mutex_unlock(&recv_active_lock);
	return (found);
}

static void
recv_active_set(spa_t *spa, uint64_t obj, bool on)
{
	pthread_mutex_lock(&recv_active_lock);
	if (on) {
		TARN_ARRAY_APPEND(&recv_active, recv_active_t, ((recv_active_t){ spa, obj }));
	} else {
		for (size_t i = 0; i < tarn_array_len(&recv_active); i++) {
			recv_active_t *a = tarn_array_get(&recv_active, i);
			if (a->ra_spa == spa && a->ra_obj == obj) {
				*a = *(recv_active_t *)tarn_array_get(&recv_active,
				    tarn_array_len(&recv_active) - 1);
				tarn_array_truncate(&recv_active, tarn_array_len(&recv_active) - 1);
				break;
			}
		}
	}
	pthread_mutex_unlock(&recv_active_lock);
}

void
dsl_recv_release(dsl_recv_t *rv)
{
	if (rv->rv_active) {
		recv_active_set(rv->rv_dp->dp_spa, rv->rv_wobj, false);
		rv->rv_active = false;
	}
}

/* ---- the saved state ---- */

static int
recv_state_read(dsl_pool_t *dp, uint64_t zapobj, dsl_resume_t *r)
{
	uint64_t v[RS_N];
	memset(r, 0, sizeof (*r));
	int e = zap_lookup(dp->dp_mos, zapobj, "state", 8, RS_N, v);
	if (e == 0)
		e = zap_lookup(dp->dp_mos, zapobj, "toname", 1, sizeof (r->dr_toname) - 1,
		    r->dr_toname);
	if (e != 0)
		return (e);
	r->dr_toguid = v[RS_TOGUID];
	r->dr_fromguid = v[RS_FROMGUID];
	r->dr_obj = v[RS_OBJ];
	r->dr_off = v[RS_OFF];
	r->dr_bytes = v[RS_BYTES];
	r->dr_flags = (int)v[RS_FLAGS];
	return (0);
}

static int
recv_state_write(dsl_pool_t *dp, uint64_t zapobj, const dsl_resume_t *r, dmu_tx_t *tx)
{
	uint64_t v[RS_N] = { r->dr_toguid, r->dr_fromguid, r->dr_obj, r->dr_off, r->dr_bytes,
		(uint64_t)r->dr_flags };
	int e = zap_update(dp->dp_mos, zapobj, "state", 8, RS_N, v, tx);
	if (e == 0)
		e = zap_update(dp->dp_mos, zapobj, "toname", 1, strlen(r->dr_toname) + 1,
		    r->dr_toname, tx);
	return (e);
}

static void
recv_state_of(const dsl_recv_t *rv, dsl_resume_t *r)
{
	memset(r, 0, sizeof (*r));
	(void) snprintf(r->dr_toname, sizeof (r->dr_toname), "%s", rv->rv_begin.dsb_toname);
	r->dr_toguid = rv->rv_begin.dsb_toguid;
	r->dr_fromguid = rv->rv_begin.dsb_fromguid;
	r->dr_obj = rv->rv_pos_obj;
	r->dr_off = rv->rv_pos_off;
	r->dr_bytes = dsl_stream_in_bytes(rv->rv_si);
	r->dr_flags = (int)rv->rv_begin.dsb_features;
	const dsl_stream_begin_t *b = &rv->rv_begin;
	if (b->dsb_saved) {
		/*
		 * A --saved stream carries a prefix of the interrupted stream
		 * (what the sender's pool held): this state never claims more
		 * than its resume point, and ends at it.
		 */
		if (rv->rv_saved_done || r->dr_obj > b->dsb_resume_obj ||
		    (r->dr_obj == b->dsb_resume_obj && r->dr_off > b->dsb_resume_off)) {
			r->dr_obj = b->dsb_resume_obj;
			r->dr_off = b->dsb_resume_off;
		}
		r->dr_bytes = MIN(r->dr_bytes, b->dsb_saved_bytes);
		if (rv->rv_saved_done)
			r->dr_bytes = b->dsb_saved_bytes;
		r->dr_flags = (int)b->dsb_saved_flags;
	}
}

typedef struct recv_ckpt_task {
	dsl_pool_t *dp;
	uint64_t wobj;
	dsl_resume_t r;
} recv_ckpt_task_t;

static int
recv_ckpt_sync(void *arg, dmu_tx_t *tx)
{
	recv_ckpt_task_t *t = arg;
	dsl_dataset_phys_t dd;
	int e = dsl_phys_read(t->dp, t->wobj, &dd);
	if (e == 0 && dd.dd_recv_state == 0) {
		e = zap_create(t->dp->dp_mos, DMU_OT_ZAP, tx, &dd.dd_recv_state);
		if (e == 0)
			e = dsl_head_write(t->dp->dp_mos, t->wobj, &dd, tx);
	}
	if (e == 0)
		e = recv_state_write(t->dp, dd.dd_recv_state, &t->r, tx);
	return (e);
}

/* Save the state now: what was applied is on disk by the time the task runs. */
static int
recv_checkpoint(dsl_recv_t *rv)
{
	dsl_recv_tx_commit(rv);
	recv_ckpt_task_t t = { rv->rv_dp, rv->rv_wobj, { { 0 } } };
	recv_state_of(rv, &t.r);
	tarn_mutex_lock(&rv->rv_dp->dp_lock, DSL_POOL);
	int e = spa_sync_task(rv->rv_dp->dp_spa, recv_ckpt_sync, &t);
	tarn_mutex_unlock(&rv->rv_dp->dp_lock);
	rv->rv_ckpt_ns = tarn_now_ns();
	rv->rv_ckpt_bytes = dsl_stream_in_bytes(rv->rv_si);
	return (e);
}

/* The end of a --saved stream: keep the work dataset with the sender's state. */
int
dsl_recv_save(dsl_recv_t *rv)
{
	rv->rv_saved_done = true;
	int e = recv_checkpoint(rv);
	if (e != 0 && rv->rv_err[0] == '\0')
		(void) snprintf(rv->rv_err, rv->rv_errlen, "%s", strerror(e));
	return (e);
}

void
dsl_recv_checkpoint_maybe(dsl_recv_t *rv)
{
	if (tarn_now_ns() - rv->rv_ckpt_ns >= RECV_CKPT_NS ||
	    dsl_stream_in_bytes(rv->rv_si) - rv->rv_ckpt_bytes >= RECV_CKPT_BYTES)
		(void) recv_checkpoint(rv);
}

/* ---- the work dataset ---- */

typedef struct recv_make_task {
	dsl_recv_t *rv;
	const dsl_prop_setting_t *props;
	int nprops;
} recv_make_task_t;

static int
recv_make_sync(void *arg, dmu_tx_t *tx)
{
	recv_make_task_t *t = arg;
	dsl_recv_t *rv = t->rv;
	dsl_pool_t *dp = rv->rv_dp;
	int e;
	if (rv->rv_mode == DSL_RECV_SWAP_INCR || rv->rv_base != 0)
		e = dsl_clone_create_tx(dp, rv->rv_wname, rv->rv_base, t->props, t->nprops, tx,
		    &rv->rv_wobj, rv->rv_err, rv->rv_errlen);
	else
		e = dsl_create_obj_tx(dp, rv->rv_wname, t->props, t->nprops, tx, &rv->rv_wobj,
		    rv->rv_err, rv->rv_errlen);
	dsl_dataset_phys_t dd;
	if (e == 0)
		e = dsl_phys_read(dp, rv->rv_wobj, &dd);
	if (e == 0 && rv->rv_mode == DSL_RECV_NEW)
		dd.dd_flags |= DSL_DD_F_INCONSISTENT;
	if (e == 0 && rv->rv_resumable) {
		dsl_resume_t r;
		recv_state_of(rv, &r);
		e = zap_create(dp->dp_mos, DMU_OT_ZAP, tx, &dd.dd_recv_state);
		if (e == 0)
			e = recv_state_write(dp, dd.dd_recv_state, &r, tx);
	}
	if (e == 0)
		e = dsl_head_write(dp->dp_mos, rv->rv_wobj, &dd, tx);
	if (e == 0)
		dsl_history(dp, dmu_tx_get_txg(tx), "receive", rv->rv_wname, rv->rv_wobj, NULL);
	return (e);
}

/* Open the work dataset's object set (a new one is created empty); it is busy now. */
static int
recv_open(dsl_recv_t *rv)
{
	char key[32];
	dsl_os_key(rv->rv_wobj, key, sizeof (key));
	int e = spa_objset_open(rv->rv_dp->dp_spa, key, &rv->rv_os);
	if (e == ENOENT)
		e = spa_objset_create(rv->rv_dp->dp_spa, key, DMU_OST_ZFS, &rv->rv_os);
	if (e == 0 && !rv->rv_active) {
		recv_active_set(rv->rv_dp->dp_spa, rv->rv_wobj, true);
		rv->rv_active = true;
	}
	if (e == 0)     /* the base's objects lie below the first number never used */
		rv->rv_obj_limit = dmu_object_limit(rv->rv_os);
	return (e);
}

/* Destroy the work dataset (lock held). */
static int
recv_destroy_work(dsl_pool_t *dp, uint64_t wobj, const char *wname)
{
	char key[32];
	dsl_os_key(wobj, key, sizeof (key));
	int e = txg_wait_synced(spa_dmu_pool(dp->dp_spa), 0);
	if (e == 0) {
		e = spa_objset_evict(dp->dp_spa, key);
		if (e == ENOENT)
			e = 0;
	}
	dsl_dataset_phys_t dd;
	if (e == 0)
		e = dsl_phys_read(dp, wobj, &dd);
	if (e == 0 && dd.dd_recv_state != 0) {
		dmu_tx_t *tx;
		if ((e = dsl_tx_begin(dp, true, &tx)) == 0) {
			e = zap_destroy(dp->dp_mos, dd.dd_recv_state, tx);
			dd.dd_recv_state = 0;
			if (e == 0)
				e = dsl_head_write(dp->dp_mos, wobj, &dd, tx);
			int e2 = dsl_tx_end(dp, tx);
			e = e ? e : e2;
		}
	}
	if (e == 0)
		e = dsl_destroy_one(dp, wobj, wname);
	return (e);
}

/*
 * The work dataset already there for fs (lock held): *wobj 0 if none,
 * else its object and name, and whether it has a saved state.
 */
static int
recv_find_work(dsl_pool_t *dp, const char *fs, uint64_t *wobj, char *wname, size_t len,
    dsl_dataset_phys_t *wd)
{
	uint64_t obj;
	*wobj = 0;
	if (dsl_lookup(dp, fs, &obj, NULL, 0) != 0)
		return (0);
	int e = dsl_phys_read(dp, obj, wd);
	if (e == 0 && (wd->dd_flags & DSL_DD_F_INCONSISTENT)) {
		*wobj = obj;
		(void) snprintf(wname, len, "%s", fs);
		return (0);
	}
	char w[DSL_NAME_MAX + 8];
	(void) snprintf(w, sizeof (w), "%s/%s", fs, DSL_RECV_TEMP);
	if (e == 0 && dsl_lookup(dp, w, &obj, NULL, 0) == 0 && (e = dsl_phys_read(dp, obj, wd)) == 0) {
		*wobj = obj;
		(void) snprintf(wname, len, "%s", w);
	}
	return (e);
}

/* ---- send --saved ---- */

int
dsl_recv_saved_hold(dsl_pool_t *dp, const char *fs, dsl_recv_saved_t *sv, char *err,
    size_t errlen)
{
	dsl_dataset_phys_t wd;
	memset(sv, 0, sizeof (*sv));
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	int e = recv_find_work(dp, fs, &sv->sv_wobj, sv->sv_wname, sizeof (sv->sv_wname), &wd);
	uint64_t head;
	if (e == 0 && sv->sv_wobj == 0 && dsl_lookup(dp, fs, &head, NULL, 0) != 0) {
		(void) snprintf(err, errlen, "dataset does not exist");
		e = SET_ERROR(ENOENT);
	} else if (e == 0 && (sv->sv_wobj == 0 || wd.dd_recv_state == 0 ||
	    recv_state_read(dp, wd.dd_recv_state, &sv->sv_state) != 0)) {
		(void) snprintf(err, errlen, "'%s' does not have any saved receive state", fs);
		e = SET_ERROR(ENOENT);
	} else if (e == 0 && dsl_recv_is_active(dp->dp_spa, sv->sv_wobj)) {
		(void) snprintf(err, errlen, "a receive into '%s' is in progress", fs);
		e = SET_ERROR(EBUSY);
	}
	dsl_snap_phys_t origin;
	if (e == 0 && wd.dd_origin_obj != 0 &&
	    (e = dsl_snap_read(dp->dp_mos, wd.dd_origin_obj, &origin)) == 0)
		sv->sv_base_txg = origin.ds_txg;
	sv->sv_clone = (wd.dd_flags & DSL_DD_F_INCONSISTENT) && wd.dd_origin_obj != 0;
	if (e == 0)
		recv_active_set(dp->dp_spa, sv->sv_wobj, true);
	tarn_mutex_unlock(&dp->dp_lock);
	if (e != 0)
		return (e);
	/* what the state describes is on disk: the root as last synced holds it */
	char key[32];
	dsl_os_key(sv->sv_wobj, key, sizeof (key));
	if ((e = txg_wait_synced(spa_dmu_pool(dp->dp_spa), 0)) == 0)
		e = spa_objset_root(dp->dp_spa, key, &sv->sv_bp);
	if (e != 0)
		dsl_recv_saved_rele(dp, sv);
	return (e);
}

void
dsl_recv_saved_rele(dsl_pool_t *dp, dsl_recv_saved_t *sv)
{
	if (sv->sv_wobj != 0)
		recv_active_set(dp->dp_spa, sv->sv_wobj, false);
	sv->sv_wobj = 0;
}

/* ---- prepare ---- */

/* Split the target into file system and snapshot name. */
static int
recv_names(dsl_recv_t *rv, const char *target)
{
	const char *at = strchr(target, '@');
	const char *sat = strchr(rv->rv_begin.dsb_toname, '@');
	size_t fl = at != NULL ? (size_t)(at - target) : strlen(target);
	if (fl >= sizeof (rv->rv_fs) || sat == NULL) {
		(void) snprintf(rv->rv_err, rv->rv_errlen, "invalid name");
		return (SET_ERROR(EINVAL));
	}
	(void) snprintf(rv->rv_fs, sizeof (rv->rv_fs), "%.*s", (int)fl, target);
	(void) snprintf(rv->rv_snap, sizeof (rv->rv_snap), "%s", at != NULL ? at + 1 : sat + 1);
	if (strlen(rv->rv_fs) + 1 + strlen(rv->rv_snap) >= DSL_NAME_MAX) {
		(void) snprintf(rv->rv_err, rv->rv_errlen, "name is too long");
		return (SET_ERROR(ENAMETOOLONG));
	}
	char full[DSL_NAME_MAX];
	dsl_join(full, sizeof (full), rv->rv_fs, '@', rv->rv_snap);
	return (dsl_snap_name_validate(full, '@', rv->rv_err, rv->rv_errlen));
}

/* A saved state that this stream goes on from, or a leftover to clear (lock held). */
static int
recv_prepare_work(dsl_recv_t *rv)
{
	dsl_pool_t *dp = rv->rv_dp;
	dsl_dataset_phys_t wd;
	char wname[DSL_NAME_MAX + 8];
	uint64_t wobj;
	int e = recv_find_work(dp, rv->rv_fs, &wobj, wname, sizeof (wname), &wd);
	bool resume = rv->rv_begin.dsb_resume;
	if (e == 0 && wobj != 0 && dsl_recv_is_active(dp->dp_spa, wobj)) {
		(void) snprintf(rv->rv_err, rv->rv_errlen, "destination %s is busy: another "
		    "receive into it is in progress", rv->rv_fs);
		return (SET_ERROR(EBUSY));
	}
	if (e != 0 || wobj == 0) {
		if (e == 0 && resume) {
			(void) snprintf(rv->rv_err, rv->rv_errlen, "destination %s has no "
			    "partially-complete state to resume", rv->rv_fs);
			e = SET_ERROR(ENOENT);
		}
		return (e);
	}
	dsl_resume_t st;
	if (wd.dd_recv_state != 0 && recv_state_read(dp, wd.dd_recv_state, &st) == 0) {
		if (!resume || st.dr_toguid != rv->rv_begin.dsb_toguid ||
		    st.dr_obj != rv->rv_begin.dsb_resume_obj ||
		    st.dr_off != rv->rv_begin.dsb_resume_off) {
			(void) snprintf(rv->rv_err, rv->rv_errlen, "destination %s contains "
			    "partially-complete state from \"zfs receive -s\".", rv->rv_fs);
			return (SET_ERROR(EBUSY));
		}
		rv->rv_resuming = true;
		rv->rv_wobj = wobj;
		(void) snprintf(rv->rv_wname, sizeof (rv->rv_wname), "%s", wname);
		rv->rv_mode = (wd.dd_flags & DSL_DD_F_INCONSISTENT) ? DSL_RECV_NEW :
		    wd.dd_origin_obj != 0 ? DSL_RECV_SWAP_INCR : DSL_RECV_SWAP_FULL;
		rv->rv_new = rv->rv_mode == DSL_RECV_NEW;
		rv->rv_base = wd.dd_origin_obj;
		rv->rv_pos_obj = rv->rv_resume_obj = st.dr_obj;
		rv->rv_pos_off = st.dr_off;
		return (0);
	}
	/* a leftover of a receive that died: clear it */
	if ((e = recv_destroy_work(dp, wobj, wname)) != 0)
		return (e);
	if (resume) {
		(void) snprintf(rv->rv_err, rv->rv_errlen, "destination %s has no "
		    "partially-complete state to resume", rv->rv_fs);
		return (SET_ERROR(ENOENT));
	}
	return (0);
}

/* Which snapshot of head has guid (0: none); *newest: it is the newest (lock held). */
static int
recv_find_base(dsl_pool_t *dp, uint64_t head, uint64_t guid, uint64_t *obj, bool *newest,
    dsl_snap_ent_t **chainp, int *np)
{
	int e = dsl_snap_chain(dp, head, chainp, np);
	*obj = 0;
	for (int i = 0; e == 0 && i < *np; i++) {
		if ((*chainp)[i].se_phys.ds_guid == guid) {
			*obj = (*chainp)[i].se_obj;
			*newest = i == *np - 1;
		}
	}
	return (e);
}

/* -F: destroy the target's snapshots after the base (lock not held). */
static int
recv_destroy_later(dsl_recv_t *rv, const dsl_snap_ent_t *chain, int n, uint64_t base)
{
	int me = -1;
	for (int i = 0; i < n; i++)
		if (chain[i].se_obj == base)
			me = i;
	if (me < 0 || me == n - 1)
		return (0);
	char **later = tarn_alloc(sizeof (char *) * (size_t)(n - me));
	int nl = 0;
	for (int i = me + 1; i < n; i++) {
		later[nl] = tarn_alloc(DSL_NAME_MAX + ZAP_MAXNAMELEN);
		(void) snprintf(later[nl++], DSL_NAME_MAX + ZAP_MAXNAMELEN, "%s@%s", rv->rv_fs,
		    chain[i].se_name);
	}
	int e = dsl_snapshot_destroy(rv->rv_dp, (const char *const *)later, nl, 0, NULL, NULL,
	    NULL, rv->rv_err, rv->rv_errlen);
	for (int i = 0; i < nl; i++)
		tarn_free(later[i]);
	tarn_free(later);
	return (e);
}

/* The snapshot with guid anywhere below dataset obj (lock held); 0: none. */
static uint64_t
recv_find_guid(dsl_pool_t *dp, uint64_t obj, uint64_t guid, int depth)
{
	dsl_snap_ent_t *chain;
	int n;
	uint64_t found = 0;
	if (depth > 64 || dsl_snap_chain(dp, obj, &chain, &n) != 0)
		return (0);
	for (int i = 0; i < n && found == 0; i++)
		if (chain[i].se_phys.ds_guid == guid)
			found = chain[i].se_obj;
	tarn_free(chain);
	dsl_child_t *kids;
	if (found != 0 || dsl_children(dp, obj, &kids, &n) != 0)
		return (found);
	for (int i = 0; i < n && found == 0; i++)
		found = recv_find_guid(dp, kids[i].dc_obj, guid, depth + 1);
	tarn_free(kids);
	return (found);
}

/*
 * An incremental stream into a file system that does not exist: a clone
 * sent from its origin, received as a clone of the snapshot of the pool
 * with the base's guid (lock held).
 */
static int
recv_check_clone(dsl_recv_t *rv)
{
	dsl_pool_t *dp = rv->rv_dp;
	char parent[DSL_NAME_MAX];
	(void) snprintf(parent, sizeof (parent), "%s", rv->rv_fs);
	char *sl = strrchr(parent, '/');
	uint64_t pobj;
	if (sl == NULL || (*sl = '\0', dsl_lookup(dp, parent, &pobj, NULL, 0) != 0)) {
		(void) snprintf(rv->rv_err, rv->rv_errlen, "destination '%s' does not exist",
		    rv->rv_fs);
		return (SET_ERROR(ENOENT));
	}
	rv->rv_base = recv_find_guid(dp, dp->dp_root_obj, rv->rv_begin.dsb_fromguid, 0);
	if (rv->rv_base == 0) {
		(void) snprintf(rv->rv_err, rv->rv_errlen, "destination '%s' does not exist, "
		    "and no snapshot of the pool is the stream's incremental source", rv->rv_fs);
		return (SET_ERROR(ENOENT));
	}
	rv->rv_mode = DSL_RECV_NEW;
	rv->rv_new = true;
	return (0);
}

/* An incremental stream: the base and whether the target may take it (lock held). */
static int
recv_check_incr(dsl_recv_t *rv, bool *unlock_destroy, dsl_snap_ent_t **chain, int *n)
{
	dsl_pool_t *dp = rv->rv_dp;
	bool force = (rv->rv_opts->dro_flags & DSL_RECV_FORCE) != 0, newest = false;
	if (rv->rv_head == 0 && ((rv->rv_opts->dro_flags & DSL_RECV_CLONES) ||
	    rv->rv_begin.dsb_clone))
		return (recv_check_clone(rv));
	if (rv->rv_head == 0) {
		(void) snprintf(rv->rv_err, rv->rv_errlen, "destination '%s' does not exist",
		    rv->rv_fs);
		return (SET_ERROR(ENOENT));
	}
	int e = recv_find_base(dp, rv->rv_head, rv->rv_begin.dsb_fromguid, &rv->rv_base, &newest,
	    chain, n);
	if (e == 0 && (rv->rv_base == 0 || (!newest && !force))) {
		(void) snprintf(rv->rv_err, rv->rv_errlen, "most recent snapshot of %s does not "
		    "match incremental source", rv->rv_fs);
		return (SET_ERROR(ENOENT));
	}
	*unlock_destroy = e == 0 && !newest;
	rv->rv_mode = DSL_RECV_SWAP_INCR;
	return (e);
}

/* A full stream: a new file system, or -F over one without snapshots (lock held). */
static int
recv_check_full(dsl_recv_t *rv)
{
	dsl_pool_t *dp = rv->rv_dp;
	if (rv->rv_head == 0) {
		char parent[DSL_NAME_MAX];
		(void) snprintf(parent, sizeof (parent), "%s", rv->rv_fs);
		char *sl = strrchr(parent, '/');
		uint64_t pobj;
		if (sl == NULL || (*sl = '\0', dsl_lookup(dp, parent, &pobj, NULL, 0) != 0)) {
			(void) snprintf(rv->rv_err, rv->rv_errlen, "parent of '%s' does not exist",
			    rv->rv_fs);
			return (SET_ERROR(ENOENT));
		}
		rv->rv_mode = DSL_RECV_NEW;
		rv->rv_new = true;
		return (0);
	}
	dsl_dataset_phys_t dd;
	int e = dsl_phys_read(dp, rv->rv_head, &dd);
	if (e != 0)
		return (e);
	if (!(rv->rv_opts->dro_flags & DSL_RECV_FORCE)) {
		(void) snprintf(rv->rv_err, rv->rv_errlen, "destination '%s' exists\nmust "
		    "specify -F to overwrite it", rv->rv_fs);
		return (SET_ERROR(EEXIST));
	}
	if (dd.dd_prev_snap_obj != 0 || dd.dd_origin_obj != 0) {
		char sname[ZAP_MAXNAMELEN] = "";
		if (dd.dd_prev_snap_obj != 0)
			(void) zap_value_search(dp->dp_mos, dd.dd_snap_zap, dd.dd_prev_snap_obj, 0,
			    sname, sizeof (sname));
		if (dd.dd_prev_snap_obj != 0)
			(void) snprintf(rv->rv_err, rv->rv_errlen, "destination has snapshots (eg. "
			    "%s@%s)\nmust destroy them to overwrite it", rv->rv_fs, sname);
		else
			(void) snprintf(rv->rv_err, rv->rv_errlen, "destination '%s' is a clone\n"
			    "must destroy it to overwrite it", rv->rv_fs);
		return (SET_ERROR(EEXIST));
	}
	rv->rv_mode = DSL_RECV_SWAP_FULL;
	return (0);
}

/* Checks on the target that need no work dataset (lock held). */
static int
recv_check(dsl_recv_t *rv, bool *destroy_later, dsl_snap_ent_t **chain, int *n)
{
	dsl_pool_t *dp = rv->rv_dp;
	int e = dsl_writable(dp, rv->rv_err, rv->rv_errlen);
	if (e == 0)
		e = dsl_feature_check(dp, rv->rv_err, rv->rv_errlen);
	if (e != 0)
		return (e);
	if (dsl_lookup(dp, rv->rv_fs, &rv->rv_head, NULL, 0) != 0)
		rv->rv_head = 0;
	if (rv->rv_head != 0 && !rv->rv_dryrun) {
		char snap[DSL_NAME_MAX + ZAP_MAXNAMELEN];
		uint64_t h, s;
		(void) snprintf(snap, sizeof (snap), "%s@%s", rv->rv_fs, rv->rv_snap);
		if (dsl_snap_lookup(dp, snap, &h, &s, NULL, 0) == 0) {
			(void) snprintf(rv->rv_err, rv->rv_errlen, "destination '%s' exists", snap);
			return (SET_ERROR(EEXIST));
		}
	}
	if (rv->rv_begin.dsb_fromguid != 0)
		return (recv_check_incr(rv, destroy_later, chain, n));
	return (recv_check_full(rv));
}

/* Without -F, refuse a target changed since its newest snapshot (lock not held). */
static int
recv_check_modified(dsl_recv_t *rv)
{
	if ((rv->rv_opts->dro_flags & DSL_RECV_FORCE) || rv->rv_mode != DSL_RECV_SWAP_INCR)
		return (0);
	int e = txg_wait_synced(spa_dmu_pool(rv->rv_dp->dp_spa), 0);
	dsl_space_t sp;
	if (e == 0)
		e = dsl_dataset_space(rv->rv_dp, rv->rv_fs, &sp);
	if (e == 0 && sp.ds_written > 0) {
		(void) snprintf(rv->rv_err, rv->rv_errlen, "destination %s has been modified\n"
		    "since most recent snapshot", rv->rv_fs);
		e = SET_ERROR(ETXTBSY);
	}
	return (e);
}

int
dsl_recv_prepare(dsl_recv_t *rv, const char *target)
{
	dsl_pool_t *dp = rv->rv_dp;
	int e = recv_names(rv, target);
	if (e != 0)
		return (e);
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	if (!rv->rv_dryrun)
		e = recv_prepare_work(rv);
	if (e == 0 && rv->rv_resuming) {
		if (rv->rv_mode != DSL_RECV_NEW)
			e = dsl_lookup(dp, rv->rv_fs, &rv->rv_head, rv->rv_err, rv->rv_errlen);
		if (e == 0)
			e = recv_open(rv);
		tarn_mutex_unlock(&dp->dp_lock);
		return (e);
	}
	bool later = false;
	dsl_snap_ent_t *chain = NULL;
	int n = 0;
	if (e == 0)
		e = recv_check(rv, &later, &chain, &n);
	tarn_mutex_unlock(&dp->dp_lock);
	if (e == 0 && later && !rv->rv_dryrun)
		e = recv_destroy_later(rv, chain, n, rv->rv_base);
	tarn_free(chain);
	if (e == 0)
		e = recv_check_modified(rv);
	if (e != 0 || rv->rv_dryrun)
		return (e);
	/* the work dataset */
	if (rv->rv_mode == DSL_RECV_NEW)
		(void) snprintf(rv->rv_wname, sizeof (rv->rv_wname), "%s", rv->rv_fs);
	else
		(void) snprintf(rv->rv_wname, sizeof (rv->rv_wname), "%s/%s", rv->rv_fs,
		    DSL_RECV_TEMP);
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	recv_make_task_t t = { rv, rv->rv_mode == DSL_RECV_NEW ? rv->rv_opts->dro_props : NULL,
		rv->rv_mode == DSL_RECV_NEW ? rv->rv_opts->dro_nprops : 0 };
	e = spa_sync_task(dp->dp_spa, recv_make_sync, &t);
	if (e == 0)
		e = recv_open(rv);
	tarn_mutex_unlock(&dp->dp_lock);
	rv->rv_ckpt_ns = tarn_now_ns();
	return (e);
}

/* ---- commit ---- */

typedef struct recv_commit_task {
	dsl_recv_t *rv;
} recv_commit_task_t;

/* Swap the target's root and dead list with the work dataset's. */
static int
recv_swap(dsl_recv_t *rv, dmu_tx_t *tx)
{
	dsl_pool_t *dp = rv->rv_dp;
	spa_t *spa = dp->dp_spa;
	char hkey[32], wkey[32];
	dsl_os_key(rv->rv_head, hkey, sizeof (hkey));
	dsl_os_key(rv->rv_wobj, wkey, sizeof (wkey));
	dsl_dataset_phys_t hd, wd;
	blkptr_t hr, wr;
	int e = dsl_phys_read(dp, rv->rv_head, &hd);
	if (e == 0)
		e = dsl_phys_read(dp, rv->rv_wobj, &wd);
	if (e == 0 && rv->rv_mode == DSL_RECV_SWAP_INCR && hd.dd_prev_snap_obj != rv->rv_base) {
		(void) snprintf(rv->rv_err, rv->rv_errlen, "most recent snapshot of %s does not "
		    "match incremental source", rv->rv_fs);
		return (SET_ERROR(ENOENT));
	}
	if (e == 0)
		e = spa_objset_root(spa, hkey, &hr);
	if (e == 0)
		e = spa_objset_root(spa, wkey, &wr);
	if (e == 0)
		e = spa_objset_set_root_sync(spa, hkey, &wr, tx);
	if (e == 0)
		e = spa_objset_set_root_sync(spa, wkey, &hr, tx);
	if (e == 0 && rv->rv_mode == DSL_RECV_SWAP_INCR && hd.dd_deadlist != 0 &&
	    wd.dd_deadlist != 0) {
		/* the work's dead blocks, sorted under the target's snapshots */
		uint64_t *keys;
		int nk;
		e = dsl_dl_keys(dp->dp_mos, hd.dd_deadlist, &keys, &nk);
		if (e == 0) {
			e = dsl_dl_rebucket(spa, wd.dd_deadlist, UINT64_MAX, keys, nk, tx);
			tarn_free(keys);
		}
	}
	uint64_t dl = hd.dd_deadlist;
	hd.dd_deadlist = wd.dd_deadlist;
	wd.dd_deadlist = dl;
	if (e == 0)
		e = dsl_head_write(dp->dp_mos, rv->rv_head, &hd, tx);
	if (e == 0)
		e = dsl_head_write(dp->dp_mos, rv->rv_wobj, &wd, tx);
	return (e);
}

static int
recv_commit_sync(void *arg, dmu_tx_t *tx)
{
	recv_commit_task_t *t = arg;
	dsl_recv_t *rv = t->rv;
	dsl_pool_t *dp = rv->rv_dp;
	int e = 0;
	uint64_t head = rv->rv_mode == DSL_RECV_NEW ? rv->rv_wobj : rv->rv_head;
	if (rv->rv_mode == DSL_RECV_NEW) {
		dsl_dataset_phys_t dd;
		e = dsl_phys_read(dp, head, &dd);
		dd.dd_flags &= ~(uint64_t)DSL_DD_F_INCONSISTENT;
		if (e == 0 && dd.dd_recv_state != 0)
			e = zap_destroy(dp->dp_mos, dd.dd_recv_state, tx);
		dd.dd_recv_state = 0;
		if (e == 0)
			e = dsl_head_write(dp->dp_mos, head, &dd, tx);
	} else {
		e = recv_swap(rv, tx);
	}
	dsl_snap_req_t r;
	memset(&r, 0, sizeof (r));
	r.dsr_head = head;
	(void) snprintf(r.dsr_snap, sizeof (r.dsr_snap), "%s", rv->rv_snap);
	dsl_join(r.dsr_name, sizeof (r.dsr_name), rv->rv_fs, '@', rv->rv_snap);
	r.dsr_guid = rv->rv_begin.dsb_toguid;
	r.dsr_creation = rv->rv_begin.dsb_creation;
	if (e == 0)
		e = dsl_snap_take_one(dp, &r, tx, rv->rv_err, rv->rv_errlen);
	return (e);
}

/* The commit proper (the target's users closed, for a swap). */
static int
recv_commit_locked(void *cookie)
{
	dsl_recv_t *rv = cookie;
	dsl_pool_t *dp = rv->rv_dp;
	spa_t *spa = dp->dp_spa;
	char hkey[32], wkey[32];
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	int e = txg_wait_synced(spa_dmu_pool(spa), 0);
	if (e == 0 && rv->rv_mode != DSL_RECV_NEW) {
		dsl_os_key(rv->rv_head, hkey, sizeof (hkey));
		dsl_os_key(rv->rv_wobj, wkey, sizeof (wkey));
		e = spa_objset_evict(spa, wkey);
		rv->rv_os = NULL;
		if (e == 0 || e == ENOENT)
			e = spa_objset_evict(spa, hkey);
		if (e == ENOENT)
			e = 0;
		if (e == EBUSY)
			(void) snprintf(rv->rv_err, rv->rv_errlen, "dataset is busy");
	}
	if (e == 0) {
		recv_commit_task_t t = { rv };
		e = spa_sync_task(spa, recv_commit_sync, &t);
	}
	if (e == 0 && rv->rv_mode != DSL_RECV_NEW)
		(void) recv_destroy_work(dp, rv->rv_wobj, rv->rv_wname);
	tarn_mutex_unlock(&dp->dp_lock);
	return (e);
}

int
dsl_recv_commit(dsl_recv_t *rv)
{
	const dsl_recv_opts_t *o = rv->rv_opts;
	int e = txg_wait_synced(spa_dmu_pool(rv->rv_dp->dp_spa), 0);
	if (e != 0)
		return (e);
	if (rv->rv_mode == DSL_RECV_NEW || o->dro_swap == NULL)
		e = recv_commit_locked(rv);
	else
		e = o->dro_swap(o->dro_swap_arg, rv->rv_fs, recv_commit_locked, rv);
	if (e != 0 && rv->rv_err[0] == '\0')
		(void) snprintf(rv->rv_err, rv->rv_errlen, "%s", strerror(e));
	if (e != 0)
		dsl_recv_fail(rv, e);
	return (e);
}

void
dsl_recv_fail(dsl_recv_t *rv, int e)
{
	(void) e;
	dsl_recv_tx_commit(rv);
	if (rv->rv_wobj == 0)
		return;
	if (rv->rv_resumable) {
		(void) recv_checkpoint(rv);
		return;
	}
	tarn_mutex_lock(&rv->rv_dp->dp_lock, DSL_POOL);
	(void) recv_destroy_work(rv->rv_dp, rv->rv_wobj, rv->rv_wname);
	tarn_mutex_unlock(&rv->rv_dp->dp_lock);
}

/* ---- leftovers ---- */

/* The leftover work datasets below obj, deepest first (lock held). */
static void
recv_leftovers(dsl_pool_t *dp, uint64_t obj, const char *name, tarn_array_t *out, int depth,
    bool saved)
{
	dsl_child_t *kids;
	int n;
	if (depth > 64 || dsl_children(dp, obj, &kids, &n) != 0)
		return;
	for (int i = 0; i < n; i++) {
		char cname[DSL_NAME_MAX];
		if (strlen(name) + 1 + strlen(kids[i].dc_name) >= sizeof (cname))
			continue;
		dsl_join(cname, sizeof (cname), name, '/', kids[i].dc_name);
		recv_leftovers(dp, kids[i].dc_obj, cname, out, depth + 1, saved);
		dsl_dataset_phys_t dd;
		if (dsl_phys_read(dp, kids[i].dc_obj, &dd) != 0 ||
		    (dd.dd_recv_state != 0 && !saved) ||
		    dsl_recv_is_active(dp->dp_spa, kids[i].dc_obj))
			continue;
		if ((dd.dd_flags & DSL_DD_F_INCONSISTENT) ||
		    strcmp(kids[i].dc_name, DSL_RECV_TEMP) == 0) {
			dsl_child_t *c = tarn_array_push(out);
			c->dc_obj = kids[i].dc_obj;
			(void) snprintf(c->dc_name, sizeof (c->dc_name), "%s", cname);
		}
	}
	tarn_free(kids);
}

/* Destroy the work datasets below obj (saved: with a resumable state too; lock held). */
static int
recv_cleanup_below(dsl_pool_t *dp, uint64_t obj, const char *name, bool saved)
{
	tarn_array_t left = TARN_ARRAY_INIT(dsl_child_t);
	recv_leftovers(dp, obj, name, &left, 0, saved);
	int n = 0;
	for (size_t i = 0; i < tarn_array_len(&left); i++) {
		dsl_child_t *c = tarn_array_get(&left, i);
		dsl_dataset_phys_t dd;
		dsl_child_t *kids = NULL;
		int nk = 0;
		/* only a leaf without snapshots: anything else is not a receive's */
		if (dsl_phys_read(dp, c->dc_obj, &dd) == 0 && dd.dd_prev_snap_obj == 0 &&
		    dsl_children(dp, c->dc_obj, &kids, &nk) == 0 && nk == 0 &&
		    recv_destroy_work(dp, c->dc_obj, c->dc_name) == 0)
			n++;
		tarn_free(kids);
	}
	tarn_array_fini(&left);
	return (n);
}

int
dsl_recv_cleanup(dsl_pool_t *dp)
{
	if (dsl_readonly(dp))
		return (0);
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	int n = recv_cleanup_below(dp, dp->dp_root_obj, spa_name(dp->dp_spa), false);
	tarn_mutex_unlock(&dp->dp_lock);
	return (n);
}

void
dsl_recv_destroy_below_locked(dsl_pool_t *dp, uint64_t obj, const char *name)
{
	(void) recv_cleanup_below(dp, obj, name, true);
}

int
dsl_recv_destroy_below(dsl_pool_t *dp, const char *fs)
{
	uint64_t obj;
	if (dsl_readonly(dp))
		return (0);
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	int e = dsl_lookup(dp, fs, &obj, NULL, 0);
	if (e == 0)
		dsl_recv_destroy_below_locked(dp, obj, fs);
	tarn_mutex_unlock(&dp->dp_lock);
	return (e);
}

/* ---- the token and -A ---- */

int
dsl_recv_resume_token(dsl_pool_t *dp, const char *fs, char *buf, size_t len)
{
	dsl_dataset_phys_t wd;
	char wname[DSL_NAME_MAX + 8];
	uint64_t wobj;
	dsl_resume_t r;
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	int e = recv_find_work(dp, fs, &wobj, wname, sizeof (wname), &wd);
	if (e == 0 && (wobj == 0 || wd.dd_recv_state == 0))
		e = SET_ERROR(ENOENT);
	if (e == 0)
		e = recv_state_read(dp, wd.dd_recv_state, &r);
	tarn_mutex_unlock(&dp->dp_lock);
	if (e == 0)
		e = dsl_resume_token_make(&r, buf, len);
	return (e);
}

int
dsl_recv_abort(dsl_pool_t *dp, const char *fs, char *err, size_t errlen)
{
	dsl_dataset_phys_t wd;
	char wname[DSL_NAME_MAX + 8];
	uint64_t wobj;
	err[0] = '\0';
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	int e = dsl_writable(dp, err, errlen);
	if (e == 0)
		e = recv_find_work(dp, fs, &wobj, wname, sizeof (wname), &wd);
	if (e == 0 && (wobj == 0 || wd.dd_recv_state == 0)) {
		(void) snprintf(err, errlen, "'%s' does not have any resumable receive state to "
		    "abort", fs);
		e = SET_ERROR(ENOENT);
	}
	if (e == 0)
		e = recv_destroy_work(dp, wobj, wname);
	tarn_mutex_unlock(&dp->dp_lock);
	return (e);
}
