/*
 * spa_sync.c — the end of every txg, and the MOS objects behind it.
 *
 * Theory.  spa_sync(txg) runs in the sync thread once txg has quiesced:
 *   pass 1: every registered object set that is dirty writes its blocks
 *           (dmu_objset_sync) and its new root bp goes into the bonus of
 *           its MOS object; then the MOS itself is written;
 *   then:   each metaslab with allocations or frees in txg appends them to
 *           its space map (a MOS object), which dirties the MOS again, so
 *           the MOS is written again (pass 2, 3, ...).  From pass 2 on,
 *           blocks born in this txg are overwritten in place, so the
 *           passes converge: a pass that allocates nothing adds no space
 *           map entries and dirties nothing.
 *   finally: flush all devices, write the uberblock naming the new MOS
 *           root into every label ring, flush again.  Only now is txg
 *           committed; then dirty state of txg is dropped and its frees
 *           start their deferral.
 * A failure anywhere returns the error, and the dmu suspends the pool.
 */
#include "spa_impl.h"

/* ---- metaslabs and their space maps ---- */

/* Create metaslab groups for every top-level vdev (create: pick shifts). */
int
spa_setup_metaslabs(spa_t *spa, bool create)
{
	spa_classes_create(spa);
	for (int t = 0; t < vdev_children(spa->spa_root); t++) {
		vdev_t *top = vdev_child(spa->spa_root, t);
		if (vdev_is_hole(top))
			continue;       /* a removed log vdev's place: no space */
		if (create) {
			vdev_set_ms_shift(top, metaslab_pick_shift(vdev_asize(top)));
			vdev_set_ms_count(top, DIV_ROUND_UP(vdev_asize(top),
			    1ULL << vdev_ms_shift(top)));
		}
		if (vdev_ms_shift(top) == 0 || vdev_ms_count(top) == 0)
			return (SET_ERROR(EINVAL));
		vdev_set_ms_group(top, metaslab_group_create(spa_class_of(spa,
		    vdev_alloc_bias(top)), top));
		if (create) {
			for (uint64_t m = 0; m < vdev_ms_count(top); m++)
				VERIFY0(metaslab_load(metaslab_group_get(vdev_ms_group(top), m),
				    NULL, 0, 0));
		}
	}
	return (0);
}

int
spa_load_metaslabs(spa_t *spa, uint64_t synced_txg)
{
	objset_t *mos = spa->spa_mos;
	for (int t = 0; t < vdev_children(spa->spa_root); t++) {
		vdev_t *top = vdev_child(spa->spa_root, t);
		if (vdev_is_hole(top))
			continue;
		uint64_t *smobjs = tarn_alloc(sizeof (uint64_t) * vdev_ms_count(top));
		int e = dmu_read(mos, vdev_ms_array(top), 0, sizeof (uint64_t) * vdev_ms_count(top),
		    smobjs);
		for (uint64_t m = 0; e == 0 && m < vdev_ms_count(top); m++) {
			metaslab_t *ms = metaslab_group_get(vdev_ms_group(top), m);
			if (smobjs[m] == 0) {
				e = metaslab_load(ms, NULL, 0, synced_txg);
				continue;
			}
			spa_sm_phys_t smp;
			e = dmu_bonus_read(mos, smobjs[m], &smp, sizeof (smp));
			if (e != 0)
				break;
			if (smp.smp_length > 1ULL << 36 || smp.smp_length % SM_ENTRY_SIZE) {
				e = SET_ERROR(EIO);
				break;
			}
			void *buf = tarn_alloc(smp.smp_length);
			e = dmu_read(mos, smobjs[m], 0, smp.smp_length, buf);
			if (e == 0)
				e = metaslab_load(ms, buf, smp.smp_length, synced_txg);
			tarn_free(buf);
		}
		tarn_free(smobjs);
		if (e != 0)
			return (e);
	}
	return (0);
}

/* Append one metaslab's entries for this pass to its space map object. */
static int
spa_sync_metaslab(spa_t *spa, metaslab_t *ms, uint64_t txg)
{
	objset_t *mos = spa->spa_mos;
	vdev_t *top = metaslab_vdev(ms);
	void *buf = NULL;
	size_t len = 0;
	int e = metaslab_sync(ms, txg, &buf, &len);
	if (e != 0 || len == 0) {
		tarn_free(buf);
		return (e);
	}
	dmu_tx_t *tx = dmu_tx_create_syncing(mos, txg);
	uint64_t id = metaslab_id(ms), smobj = 0;
	e = dmu_read(mos, vdev_ms_array(top), id * sizeof (uint64_t), sizeof (uint64_t), &smobj);
	spa_sm_phys_t smp = { 0, 0 };
	if (e == 0 && smobj == 0) {
		e = dmu_object_alloc(mos, DMU_OT_SPACE_MAP, SPA_SM_BLKSZ, DMU_OT_SPACE_MAP,
		    sizeof (smp), tx, &smobj);
		if (e == 0)
			e = dmu_write(mos, vdev_ms_array(top), id * sizeof (uint64_t),
			    sizeof (uint64_t), &smobj, tx);
	} else if (e == 0) {
		e = dmu_bonus_read(mos, smobj, &smp, sizeof (smp));
	}
	if (e == 0 && metaslab_should_condense(ms, smp.smp_length + len)) {
		/* Rewrite the map from the in-memory state instead of appending. */
		void *cbuf = NULL;
		size_t clen = 0;
		e = metaslab_condense(ms, txg, &cbuf, &clen);
		if (e == 0) {
			e = dmu_free_range(mos, smobj, 0, DMU_OBJECT_END, tx);
			if (e == 0)
				e = dmu_write(mos, smobj, 0, clen, cbuf, tx);
			smp.smp_length = clen;
		}
		tarn_free(cbuf);
	} else if (e == 0) {
		e = dmu_write(mos, smobj, smp.smp_length, len, buf, tx);
		smp.smp_length += len;
	}
	smp.smp_alloc = metaslab_allocated(ms);
	if (e == 0)
		e = dmu_bonus_write(mos, smobj, &smp, sizeof (smp), tx);
	dmu_tx_commit(tx);
	tarn_free(buf);
	return (e);
}

/* ---- the sync ---- */

static int
spa_sync_objsets(spa_t *spa, uint64_t txg, int pass)
{
	int e = 0;
	tarn_mutex_lock(&spa->spa_lock, SPA);
	for (int i = 0; i < SPA_NOS(spa) && e == 0; i++) {
		spa_os_t *so = &SPA_OS(spa, i);
		if (so->so_os == NULL || !dmu_objset_is_dirty(so->so_os, txg))
			continue;
		blkptr_t bp;
		e = dmu_objset_sync(so->so_os, txg, pass, &bp);
		if (e != 0)
			break;
		dmu_tx_t *tx = dmu_tx_create_syncing(spa->spa_mos, txg);
		e = dmu_bonus_write(spa->spa_mos, so->so_obj, &bp, sizeof (bp), tx);
		dmu_tx_commit(tx);
		if (e == 0)
			e = spa_os_synced(spa, so->so_name, so->so_os, txg);
	}
	tarn_mutex_unlock(&spa->spa_lock);
	return (e);
}

static bool
spa_objsets_dirty(spa_t *spa, uint64_t txg)
{
	bool d = false;
	tarn_mutex_lock(&spa->spa_lock, SPA);
	for (int i = 0; i < SPA_NOS(spa) && !d; i++)
		if (SPA_OS(spa, i).so_os != NULL && dmu_objset_is_dirty(SPA_OS(spa, i).so_os, txg))
			d = true;
	tarn_mutex_unlock(&spa->spa_lock);
	return (d);
}

/* Free the root blocks of object sets destroyed since the last sync (lib/dsl). */
static void
spa_sync_dead_roots(spa_t *spa, uint64_t txg)
{
	tarn_mutex_lock(&spa->spa_lock, SPA);
	size_t kept = 0;
	for (size_t i = 0; i < tarn_array_len(&spa->spa_dead_roots); i++) {
		spa_dead_root_t *d = tarn_array_get(&spa->spa_dead_roots, i);
		if (d->sdr_txg <= txg)
			zio_free(spa->spa_zio, &d->sdr_bp, txg);
		else
			TARN_ARRAY_AT(&spa->spa_dead_roots, spa_dead_root_t, kept++) = *d;
	}
	tarn_array_truncate(&spa->spa_dead_roots, kept);
	tarn_mutex_unlock(&spa->spa_lock);
}

static int spa_sync_impl(spa_t *spa, uint64_t txg);

/* The dmu's sync function: no whole-pool walk (spa_verify_all) runs meanwhile. */
int
spa_sync(void *arg, uint64_t txg)
{
	spa_t *spa = arg;
	tarn_rw_wrlock(&spa->spa_sync_rwlock, SPA_SYNC);
	int e = spa_sync_impl(spa, txg);
	tarn_rw_unlock(&spa->spa_sync_rwlock);
	return (e);
}

static int
spa_sync_impl(spa_t *spa, uint64_t txg)
{
	int e = 0, pass;
	blkptr_t rootbp = *dmu_objset_rootbp(spa->spa_mos);
	e = spa_scan_sync(spa, txg);
	if (e == 0)
		e = spa_errlog_sync(spa, txg);
	if (e == 0)
		e = spa_history_sync(spa, txg);
	if (e != 0)
		return (e);
	spa_sync_dead_roots(spa, txg);
	spa_zil_sync(spa, txg);
	for (pass = 1; pass <= SPA_MAX_PASSES; pass++) {
		e = spa_sync_objsets(spa, txg, pass);
		if (e == 0 && pass == 1)
			e = spa_sync_tasks_run(spa, txg);
		if (e == 0 && (pass == 1 || dmu_objset_is_dirty(spa->spa_mos, txg)))
			e = dmu_objset_sync(spa->spa_mos, txg, pass, &rootbp);
		bool any = false;
		for (metaslab_t *ms = metaslab_class_next_dirty(spa->spa_mc, txg, NULL);
		    e == 0 && ms != NULL; ms = metaslab_class_next_dirty(spa->spa_mc, txg, ms)) {
			e = spa_sync_metaslab(spa, ms, txg);
			any = true;
		}
		if (e != 0)
			return (e);
		if (!any && !dmu_objset_is_dirty(spa->spa_mos, txg) && !spa_objsets_dirty(spa, txg))
			break;
	}
	if (pass > SPA_MAX_PASSES)
		return (SET_ERROR(EAGAIN));
	if ((uint64_t)pass > spa->spa_sync_passes)
		spa->spa_sync_passes = pass;

	/* Commit: everything below on stable storage, then the uberblock. */
	e = zio_flush(spa->spa_zio);
	if (e != 0)
		return (e);
	uberblock_t ub;
	memset(&ub, 0, sizeof (ub));
	/* The tree lock (reader) keeps device changes out of the ub write. */
	vdev_tree_enter_read(spa->spa_root);
	ub.ub_magic = UBERBLOCK_MAGIC;
	ub.ub_version = spa->spa_version;
	ub.ub_txg = txg;
	ub.ub_guid_sum = vdev_guid_sum(spa->spa_root);
	ub.ub_timestamp = tarn_wall_sec();
	ub.ub_pool_guid = spa->spa_guid;
	ub.ub_features = spa->spa_features;
	ub.ub_rootbp = rootbp;
	uberblock_seal(&ub);
	e = vdev_uberblock_write_all(spa->spa_root, &ub);
	vdev_tree_exit(spa->spa_root);
	if (e == 0)
		e = zio_flush(spa->spa_zio);
	if (e != 0)
		return (e);
	tarn_mutex_lock(&spa->spa_lock, SPA);
	spa->spa_ub = ub;
	for (int i = 0; i < SPA_NOS(spa); i++)
		if (SPA_OS(spa, i).so_os != NULL)
			dmu_objset_sync_done(SPA_OS(spa, i).so_os, txg);
	tarn_mutex_unlock(&spa->spa_lock);
	dmu_objset_sync_done(spa->spa_mos, txg);
	/*
	 * Frees of an idle pool mature by a few empty txgs (txg_frees_maturing)
	 * when they matter: deferred frees at least as large as the free
	 * space or 1/256 of the pool (or the pool met ENOSPC lately: the dmu
	 * knows), not the few blocks any change frees.
	 */
	bool maturing = metaslab_class_sync_done(spa->spa_mc, txg), arm = false;
	if (maturing) {
		metaslab_space_t ms;
		metaslab_class_space(spa->spa_mc, &ms);
		arm = ms.ms_deferred >= ms.ms_free || ms.ms_deferred >= ms.ms_total / 256;
	}
	txg_frees_maturing(spa->spa_dp, maturing, arm);
	spa_vdev_sync_done(spa, txg);   /* missed txgs to the labels; wake spa_vdev.c */
	return (0);
}

/*
 * Free space less the reserve, and no more than what full-size blocks
 * can still be placed in (ms_usable: free segments in whole units of a
 * 128 KiB block's size, less half the reserve).  Without gang blocks a
 * block needs one contiguous piece: a pool whose free space is all in
 * holes a little smaller than a block (freed blocks that compressed a
 * little) would admit data its sync cannot place, and suspend.
 */
static uint64_t
spa_space_fit(uint64_t free, uint64_t usable, uint64_t reserve)
{
	uint64_t a = free > reserve ? free - reserve : 0;
	uint64_t b = usable > reserve / 2 ? usable - reserve / 2 : 0;
	return (MIN(a, b));
}

/*
 * Data bytes a tx may still use (the dmu's ENOSPC check, and what
 * datasets show as available).  With space_deflate the class's space is
 * deflated per top-level vdev, as used/referenced are; older pools scale
 * raw free space by the worst RAID-Z data fraction.
 */
uint64_t
spa_space_avail(void *arg, bool netfree)
{
	spa_t *spa = arg;
	if (spa->spa_features & SPA_FEATURE_SPACE_DEFLATE) {
		metaslab_space_t ms;
		metaslab_class_dspace(spa->spa_mc, &ms);
		uint64_t slop = spa_slop(ms.ms_total);
		return (spa_space_fit(ms.ms_free, ms.ms_usable, netfree ? slop / 2 : slop));
	}
	spa_space_t ss;
	spa_get_space(spa, &ss);
	metaslab_space_t raw;
	metaslab_class_space(spa->spa_mc, &raw);
	uint64_t avail = spa_space_fit(ss.ss_free, raw.ms_usable,
	    netfree ? ss.ss_slop / 2 : ss.ss_slop);
	if (avail == 0)
		return (0);
	/* RAID-Z stores parity too: scale by the worst data fraction. */
	uint64_t num = 1, den = 1;
	for (int t = 0; t < vdev_children(spa->spa_root); t++) {
		vdev_t *top = vdev_child(spa->spa_root, t);
		if (vdev_type(top) == VDEV_TYPE_RAIDZ && vdev_children(top) > 0) {
			uint64_t n = vdev_children(top) - vdev_nparity(top), d = vdev_children(top);
			if (n * den < num * d) {
				num = n;
				den = d;
			}
		}
	}
	return (avail / den * num);
}

/* ---- the pool directory and registered object sets ---- */

static int spa_dir_add_locked(spa_t *spa, const char *name, uint64_t obj, dmu_tx_t *tx);

/* Find name in the pool directory: its slot and object. ENOENT if absent. */
static int
spa_dir_find(spa_t *spa, const char *name, uint64_t *slot, uint64_t *obj)
{
	dmu_object_info_t doi;
	int e = dmu_object_info(spa->spa_mos, SPA_DIR_OBJ, &doi);
	if (e != 0)
		return (e);
	uint64_t size = doi.doi_max_offset;
	spa_dir_ent_t *ents = tarn_alloc(size);
	e = dmu_read(spa->spa_mos, SPA_DIR_OBJ, 0, size, ents);
	if (e == 0) {
		e = SET_ERROR(ENOENT);
		for (uint64_t i = 0; i < size / sizeof (*ents); i++) {
			if (ents[i].sde_obj != 0 &&
			    strncmp(ents[i].sde_name, name, SPA_DIR_NAMELEN) == 0) {
				*slot = i;
				*obj = ents[i].sde_obj;
				e = 0;
				break;
			}
		}
	}
	tarn_free(ents);
	return (e);
}

int
spa_dir_lookup(spa_t *spa, const char *name, uint64_t *obj)
{
	uint64_t slot;
	return (spa_dir_find(spa, name, &slot, obj));
}

/*
 * Add a name.  spa_dir_lock makes the read-modify-write atomic between
 * open-context and syncing-context adders; it is never held across a
 * tx assignment, so the sync thread cannot wait on a holder.
 */
int
spa_dir_add(spa_t *spa, const char *name, uint64_t obj, dmu_tx_t *tx)
{
	if (strlen(name) >= SPA_DIR_NAMELEN)
		return (SET_ERROR(ENAMETOOLONG));
	tarn_mutex_lock(&spa->spa_dir_lock, SPA_DIR);
	int e = spa_dir_add_locked(spa, name, obj, tx);
	tarn_mutex_unlock(&spa->spa_dir_lock);
	return (e);
}

static int
spa_dir_add_locked(spa_t *spa, const char *name, uint64_t obj, dmu_tx_t *tx)
{
	uint64_t existing;
	if (spa_dir_lookup(spa, name, &existing) == 0)
		return (SET_ERROR(EEXIST));
	dmu_object_info_t doi;
	int e = dmu_object_info(spa->spa_mos, SPA_DIR_OBJ, &doi);
	if (e != 0)
		return (e);
	uint64_t size = doi.doi_max_offset + sizeof (spa_dir_ent_t);
	spa_dir_ent_t *ents = tarn_alloc(size);
	e = dmu_read(spa->spa_mos, SPA_DIR_OBJ, 0, size, ents);
	uint64_t i = 0;
	while (e == 0 && ents[i].sde_obj != 0)
		i++;
	if (e == 0) {
		spa_dir_ent_t ent;
		memset(&ent, 0, sizeof (ent));
		ent.sde_obj = obj;
		snprintf(ent.sde_name, sizeof (ent.sde_name), "%s", name);
		e = dmu_write(spa->spa_mos, SPA_DIR_OBJ, i * sizeof (ent), sizeof (ent), &ent, tx);
	}
	tarn_free(ents);
	return (e);
}

static void
spa_os_register(spa_t *spa, const char *name, uint64_t obj, objset_t *os)
{
	tarn_mutex_lock(&spa->spa_lock, SPA);
	spa_os_t *so = tarn_array_push(&spa->spa_os);
	snprintf(so->so_name, sizeof (so->so_name), "%s", name);
	so->so_obj = obj;
	so->so_os = os;
	tarn_mutex_unlock(&spa->spa_lock);
}

int
spa_objset_create(spa_t *spa, const char *name, dmu_objset_type_t type, objset_t **osp)
{
	char key[SPA_DIR_NAMELEN];
	if (snprintf(key, sizeof (key), "os:%s", name) >= (int)sizeof (key))
		return (SET_ERROR(ENAMETOOLONG));
	if (spa->spa_readonly)
		return (SET_ERROR(EROFS));
	dmu_tx_t *tx = dmu_tx_create(spa->spa_mos);
	dmu_tx_hold_space(tx, 64 * KiB);
	int e = dmu_tx_assign(tx, TXG_WAIT);
	uint64_t obj = 0;
	if (e == 0)
		e = dmu_object_alloc(spa->spa_mos, DMU_OT_DSL_DATASET, SPA_MINBLOCKSIZE,
		    DMU_OT_DSL_DATASET, sizeof (blkptr_t), tx, &obj);
	if (e == 0)
		e = spa_dir_add(spa, key, obj, tx);
	objset_t *os = NULL;
	if (e == 0) {
		dmu_objset_props_t p = { .osp_checksum = ZIO_CHECKSUM_DEFAULT,
			.osp_compress = ZIO_COMPRESS_OFF, .osp_copies = 1 };
		e = dmu_objset_create(spa->spa_dp, type, &p, &os);
	}
	if (e == 0)
		spa_os_register(spa, name, obj, os);
	dmu_tx_commit(tx);
	if (e == 0)
		*osp = os;
	return (e);
}

int
spa_objset_open(spa_t *spa, const char *name, objset_t **osp)
{
	char key[SPA_DIR_NAMELEN];
	if (snprintf(key, sizeof (key), "os:%s", name) >= (int)sizeof (key))
		return (SET_ERROR(ENAMETOOLONG));
	tarn_mutex_lock(&spa->spa_lock, SPA);
	for (int i = 0; i < SPA_NOS(spa); i++) {
		if (strcmp(SPA_OS(spa, i).so_name, name) == 0) {
			*osp = SPA_OS(spa, i).so_os;
			tarn_mutex_unlock(&spa->spa_lock);
			return (0);
		}
	}
	tarn_mutex_unlock(&spa->spa_lock);
	uint64_t obj;
	int e = spa_dir_lookup(spa, key, &obj);
	if (e != 0)
		return (e);
	blkptr_t bp;
	e = dmu_bonus_read(spa->spa_mos, obj, &bp, sizeof (bp));
	if (e != 0)
		return (e);
	dmu_objset_props_t p = { .osp_checksum = ZIO_CHECKSUM_DEFAULT,
		.osp_compress = ZIO_COMPRESS_OFF, .osp_copies = 1 };
	objset_t *os;
	e = dmu_objset_open(spa->spa_dp, &bp, &p, &os);
	if (e == EIO || e == ECKSUM)    /* its root block: object 0, as the scan logs it */
		spa_errlog_add(spa, name, 0, 0, 0);
	if (e != 0)
		return (e);
	const spa_dsl_hooks_t *h = __atomic_load_n(&spa->spa_dsl_hooks, __ATOMIC_ACQUIRE);
	if (h != NULL && h->sdh_opened != NULL)
		h->sdh_opened(spa, name, os);
	/* Another thread may have opened it meanwhile: keep the first. */
	objset_t *first = NULL;
	tarn_mutex_lock(&spa->spa_lock, SPA);
	for (int i = 0; i < SPA_NOS(spa) && first == NULL; i++)
		if (strcmp(SPA_OS(spa, i).so_name, name) == 0)
			first = SPA_OS(spa, i).so_os;
	if (first == NULL) {
		spa_os_t *so = tarn_array_push(&spa->spa_os);
		snprintf(so->so_name, sizeof (so->so_name), "%s", name);
		so->so_obj = obj;
		so->so_os = os;
	}
	tarn_mutex_unlock(&spa->spa_lock);
	if (first != NULL) {
		dmu_objset_close(os);
		os = first;
	}
	*osp = os;
	return (0);
}

/* ---- added for lib/dsl: dataset destroy and available space ---- */

/* Zero the pool-directory entry `name` in tx. */
static int
spa_dir_remove(spa_t *spa, const char *name, dmu_tx_t *tx)
{
	uint64_t slot, obj;
	tarn_mutex_lock(&spa->spa_dir_lock, SPA_DIR);
	int e = spa_dir_find(spa, name, &slot, &obj);
	if (e == 0) {
		spa_dir_ent_t zero;
		memset(&zero, 0, sizeof (zero));
		e = dmu_write(spa->spa_mos, SPA_DIR_OBJ, slot * sizeof (zero), sizeof (zero),
		    &zero, tx);
	}
	tarn_mutex_unlock(&spa->spa_dir_lock);
	return (e);
}

int
spa_objset_destroy(spa_t *spa, const char *name)
{
	char key[SPA_DIR_NAMELEN];
	if (snprintf(key, sizeof (key), "os:%s", name) >= (int)sizeof (key))
		return (SET_ERROR(ENAMETOOLONG));
	if (spa->spa_readonly)
		return (SET_ERROR(EROFS));
	uint64_t obj;
	int e = spa_dir_lookup(spa, key, &obj);
	if (e != 0)
		return (e);
	objset_t *os;
	zil_t *zl;
	if ((e = spa_os_unregister(spa, name, &os, &zl)) != 0)
		return (e);
	dmu_tx_t *tx = dmu_tx_create(spa->spa_mos);
	dmu_tx_hold_space(tx, 64 * KiB);
	dmu_tx_mark_netfree(tx);
	e = dmu_tx_assign(tx, TXG_WAIT);
	if (e != 0) {
		dmu_tx_abort(tx);
		zil_close(zl);
		if (os != NULL)
			dmu_objset_close(os);
		return (e);
	}
	if (zl != NULL)
		zil_destroy(zl, tx);   /* its log blocks go with it */
	zil_close(zl);
	if (os != NULL)
		dmu_objset_close(os);
	blkptr_t root;
	e = dmu_bonus_read(spa->spa_mos, obj, &root, sizeof (root));
	if (e == 0)
		e = spa_dir_remove(spa, key, tx);
	if (e == 0)
		e = dmu_object_free(spa->spa_mos, obj, tx);
	/* the root block goes in the txg that drops the entry naming it */
	if (e == 0 && !BP_IS_HOLE(&root)) {
		tarn_mutex_lock(&spa->spa_lock, SPA);
		spa_dead_root_t *d = tarn_array_push(&spa->spa_dead_roots);
		d->sdr_bp = root;
		d->sdr_txg = dmu_tx_get_txg(tx);
		tarn_mutex_unlock(&spa->spa_lock);
	}
	dmu_tx_commit(tx);
	return (e);
}

uint64_t
spa_get_avail(spa_t *spa)
{
	return (spa_space_avail(spa, false));
}

void
spa_objset_name(spa_t *spa, objset_t *os, char *buf, size_t len)
{
	snprintf(buf, len, "<unknown>");
	if (os == spa->spa_mos) {
		snprintf(buf, len, "<MOS>");
		return;
	}
	tarn_mutex_lock(&spa->spa_lock, SPA);
	for (int i = 0; i < SPA_NOS(spa); i++)
		if (SPA_OS(spa, i).so_os == os)
			snprintf(buf, len, "%s", SPA_OS(spa, i).so_name);
	tarn_mutex_unlock(&spa->spa_lock);
}

typedef struct spa_verify_arg {
	uint64_t blocks;
	uint64_t errors;
	int flags;
} spa_verify_arg_t;

static int
spa_verify_cb(void *arg, objset_t *os, uint64_t obj, const blkptr_t *bp, uint64_t blkid)
{
	((spa_verify_arg_t *)arg)->blocks++;
	return (0);
}

static int spa_verify_all_impl(spa_t *spa, bool data, uint64_t *blocks, uint64_t *errors);

/*
 * Walk the MOS and every object set named in the pool directory.  No txg
 * syncs during the walk (writers wait at the dirty limit), so the roots it
 * starts from and every block below them stay as they are.
 */
int
spa_verify_all(spa_t *spa, bool data, uint64_t *blocks, uint64_t *errors)
{
	tarn_rw_rdlock(&spa->spa_sync_rwlock, SPA_SYNC);
	int e = spa_verify_all_impl(spa, data, blocks, errors);
	tarn_rw_unlock(&spa->spa_sync_rwlock);
	return (e);
}

/*
 * Open every object set named in the pool directory and call fn on it
 * (ENOENT/EIO from an open: fn gets os NULL).  Stops at fn's first error.
 */
int
spa_foreach_objset(spa_t *spa, spa_objset_fn_t fn, void *arg)
{
	dmu_object_info_t doi;
	if (dmu_object_info(spa->spa_mos, SPA_DIR_OBJ, &doi) != 0)
		return (0);
	uint64_t size = doi.doi_max_offset;
	spa_dir_ent_t *ents = tarn_alloc(size);
	int e = dmu_read(spa->spa_mos, SPA_DIR_OBJ, 0, size, ents);
	for (uint64_t i = 0; e == 0 && i < size / sizeof (*ents); i++) {
		if (ents[i].sde_obj == 0 || strncmp(ents[i].sde_name, "os:", 3) != 0)
			continue;
		objset_t *os = NULL;
		if (spa_objset_open(spa, ents[i].sde_name + 3, &os) != 0)
			os = NULL;
		e = fn(spa, os, arg);
	}
	tarn_free(ents);
	return (e);
}

static int
spa_verify_os(spa_t *spa, objset_t *os, void *arg)
{
	spa_verify_arg_t *va = arg;
	if (os == NULL) {
		va->errors++;
		return (0);
	}
	uint64_t err2 = 0;
	(void) dmu_traverse(os, va->flags, ZIO_FLAG_SPECULATIVE, 0, spa_verify_cb, va, &err2);
	va->errors += err2;
	return (0);
}

typedef struct spa_verify_root_arg {
	spa_t *spa;
	spa_verify_arg_t *va;
} spa_verify_root_arg_t;

/* A snapshot's tree (lib/dsl's roots hook), from the blocks born after min_txg. */
static int
spa_verify_root(void *arg, const char *name, const blkptr_t *bp, uint64_t min_txg)
{
	spa_verify_root_arg_t *ra = arg;
	dmu_objset_props_t p = { .osp_checksum = ZIO_CHECKSUM_DEFAULT,
		.osp_compress = ZIO_COMPRESS_OFF, .osp_copies = 1 };
	objset_t *os;
	if (dmu_objset_open(ra->spa->spa_dp, bp, &p, &os) != 0) {
		ra->va->errors++;
		return (0);
	}
	uint64_t err2 = 0;
	(void) dmu_traverse(os, ra->va->flags, ZIO_FLAG_SPECULATIVE, min_txg, spa_verify_cb, ra->va,
	    &err2);
	ra->va->errors += err2;
	dmu_objset_close(os);
	return (0);
}

static int
spa_verify_all_impl(spa_t *spa, bool data, uint64_t *blocks, uint64_t *errors)
{
	spa_verify_arg_t va = { 0 };
	uint64_t err1 = 0, total_err = 0;
	int flags = data ? TRAVERSE_DATA : 0;
	int e = dmu_traverse(spa->spa_mos, flags, ZIO_FLAG_SPECULATIVE, 0, spa_verify_cb, &va, &err1);
	total_err += err1;
	va.flags = flags;
	if (e == 0)
		e = spa_foreach_objset(spa, spa_verify_os, &va);
	const spa_dsl_hooks_t *h = __atomic_load_n(&spa->spa_dsl_hooks, __ATOMIC_ACQUIRE);
	if (e == 0 && h != NULL && h->sdh_roots != NULL) {
		spa_verify_root_arg_t ra = { spa, &va };
		e = h->sdh_roots(spa, spa->spa_mos, spa_verify_root, &ra);
	}
	total_err += va.errors;
	if (blocks != NULL)
		*blocks = va.blocks;
	if (errors != NULL)
		*errors = total_err;
	return (e);
}
