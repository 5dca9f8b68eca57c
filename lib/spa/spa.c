/*
 * spa.c — a pool's lifecycle.
 *
 * Theory.  A pool is a vdev tree plus its MOS (meta object set), whose
 * root is named by the newest uberblock in the label rings.  Create:
 * check every device before writing anything; build and open the tree;
 * create metaslabs (all free), the MOS with the pool directory and one
 * metaslab-array object per top-level vdev; write the labels (config
 * with the tree, empty rings); sync txg 1, which writes the first
 * uberblock.  Open/import: read the labels, build the tree from the
 * newest config, open the leaves, then try the uberblocks newest first:
 * the first whose MOS opens and whose metadata tree verifies block by
 * block is loaded (older ones are the rewind targets of `import -F`);
 * the metaslabs are loaded from their space maps, and the sync thread is
 * started unless the pool is read-only.  Close: sync, stop, free.
 * Export additionally marks the labels EXPORTED; destroy marks them
 * DESTROYED so that the devices can be reused without -f.
 */
#include "spa_impl.h"

#include <sys/stat.h>
#include <unistd.h>

spa_t *
spa_alloc(const char *name)
{
	spa_t *spa = tarn_alloc(sizeof (*spa));
	snprintf(spa->spa_name, sizeof (spa->spa_name), "%s", name);
	pthread_mutex_init(&spa->spa_lock, NULL);
	tarn_array_init(&spa->spa_os, sizeof (spa_os_t));
	tarn_array_init(&spa->spa_dead_roots, sizeof (spa_dead_root_t));
	spa_task_init(spa);
	pthread_mutex_init(&spa->spa_vdev_lock, NULL);
	pthread_mutex_init(&spa->spa_dir_lock, NULL);
	spa->spa_open_ns = tarn_now_ns();
	pthread_rwlock_init(&spa->spa_sync_rwlock, NULL);
	spa_scan_init(spa);
	spa_errlog_init(spa);
	spa_history_init(spa);
	spa_vdev_init(spa);          /* device lifecycle (spa_vdev.c) */
	return (spa);
}

void
spa_free(spa_t *spa)
{
	spa_classes_destroy(spa);
	if (spa->spa_root != NULL)
		vdev_free(spa->spa_root);
	tarn_array_fini(&spa->spa_os);
	tarn_array_fini(&spa->spa_dead_roots);
	spa_task_fini(spa);
	spa_vdev_fini(spa);          /* device lifecycle (spa_vdev.c) */
	spa_history_fini(spa);
	spa_errlog_fini(spa);
	pthread_mutex_destroy(&spa->spa_lock);
	pthread_mutex_destroy(&spa->spa_vdev_lock);
	pthread_mutex_destroy(&spa->spa_dir_lock);
	pthread_rwlock_destroy(&spa->spa_sync_rwlock);
	tarn_free(spa);
}

/* ---- accessors ---- */

const char *spa_name(const spa_t *spa) { return (spa->spa_name); }
uint64_t spa_guid(const spa_t *spa) { return (spa->spa_guid); }
vdev_t *spa_root_vdev(spa_t *spa) { return (spa->spa_root); }
dmu_pool_t *spa_dmu_pool(spa_t *spa) { return (spa->spa_dp); }
objset_t *spa_meta_objset(spa_t *spa) { return (spa->spa_mos); }
uint64_t spa_version(const spa_t *spa) { return (spa->spa_version); }
bool spa_readonly(const spa_t *spa) { return (spa->spa_readonly); }
uint64_t spa_create_time(const spa_t *spa) { return (spa->spa_create_time); }

uint64_t
spa_open_time(const spa_t *spa)
{
	return (spa->spa_open_ns);
}

uint64_t
spa_loaded_txg(const spa_t *spa)
{
	return (spa->spa_loaded_txg);
}

uint64_t
spa_last_synced_txg(spa_t *spa)
{
	return (spa->spa_dp ? txg_last_synced(spa->spa_dp) : spa->spa_ub.ub_txg);
}

vdev_state_t
spa_state(spa_t *spa)
{
	return (vdev_state(spa->spa_root));
}

int
spa_suspended(spa_t *spa)
{
	return (spa->spa_dp != NULL ? dmu_pool_sync_error(spa->spa_dp) : 0);
}

void
spa_get_space(spa_t *spa, spa_space_t *out)
{
	metaslab_space_t ms;
	metaslab_class_space(spa->spa_mc, &ms);
	memset(out, 0, sizeof (*out));
	/* in use until deferred frees mature counts as allocated; free is allocatable now */
	out->ss_size = ms.ms_total;
	out->ss_alloc = ms.ms_alloc + ms.ms_deferred;
	out->ss_free = ms.ms_free;
	out->ss_deferred = ms.ms_deferred;
	out->ss_slop = spa_slop(ms.ms_total);
}

/*
 * The reserve kept for metadata and frees: 1/32 of the pool, but at
 * least min(32 MiB, 1/4 of the pool), so that on a small pool free
 * space never gets so fragmented that a sync cannot place its blocks.
 */
uint64_t
spa_slop(uint64_t total)
{
	return (MAX(total >> 5, MIN(32 * MiB, total / 4)));
}

/* ---- labels ---- */

static void
spa_label_config(spa_t *spa, pool_state_t state, vdev_label_config_t *cfg)
{
	memset(cfg, 0, sizeof (*cfg));
	snprintf(cfg->vlc_name, sizeof (cfg->vlc_name), "%s", spa->spa_name);
	cfg->vlc_pool_guid = spa->spa_guid;
	cfg->vlc_version = spa->spa_version;
	cfg->vlc_features = spa->spa_features;
	cfg->vlc_txg = spa->spa_config_txg;
	cfg->vlc_state = state;
	cfg->vlc_hostid = (uint64_t)gethostid();
	cfg->vlc_create_time = spa->spa_create_time;
}

int
spa_write_labels(spa_t *spa, pool_state_t state, bool wipe_rings)
{
	vdev_label_config_t cfg;
	spa_label_config(spa, state, &cfg);
	return (vdev_label_write_all(spa->spa_root, &cfg, wipe_rings));
}

/* The config, in state, into the labels of the leaves under vd only, flushed. */
int
spa_write_labels_under(spa_t *spa, vdev_t *vd, pool_state_t state)
{
	if (vdev_children(vd) == 0) {
		vdev_label_config_t cfg;
		spa_label_config(spa, state, &cfg);
		return (vdev_label_write_leaf(vd, spa->spa_root, &cfg));
	}
	for (int c = 0; c < vdev_children(vd); c++) {
		int e = spa_write_labels_under(spa, vdev_child(vd, c), state);
		if (e != 0)
			return (e);
	}
	return (0);
}

/* ---- building a tree from a spec ---- */

vdev_t *
spa_tree_from_spec(const spa_vdev_spec_t *spec, uint64_t ashift)
{
	vdev_t *vd = vdev_alloc(spec->type, tarn_guid());
	if (spec->type == VDEV_TYPE_RAIDZ)
		vdev_set_nparity(vd, spec->nparity);
	if (spec->path != NULL)
		vdev_set_path(vd, spec->path);
	vdev_set_ashift(vd, ashift);
	vdev_set_alloc_bias(vd, spec->bias);
	for (int i = 0; i < spec->nchildren; i++) {
		const spa_vdev_spec_t *c = spec->children[i];
		if (!c->cache) {
			vdev_add_child(vd, spa_tree_from_spec(c, ashift));
			continue;
		}
		/* a cache device: the root's cache list, at its own sector size */
		if (vdev_l2cache(vd) == NULL)
			vdev_set_l2cache(vd, vdev_alloc(VDEV_TYPE_ROOT, 0));
		vdev_add_child(vdev_l2cache(vd), spa_tree_from_spec(c, 0));
	}
	return (vd);
}

typedef struct spa_leaf_check {
	const char *path;
	uint64_t size;
	dev_t dev;
	ino_t ino;
} spa_leaf_check_t;

/*
 * Check one leaf before anything is written: it exists, is big enough,
 * is not used twice, and is not part of a live pool (unless force).
 */
static int
spa_check_leaf(const spa_vdev_spec_t *leaf, bool force, spa_leaf_check_t *seen, int nseen,
    spa_leaf_check_t *out, char *err, size_t errlen)
{
	struct stat st;
	if (stat(leaf->path, &st) != 0) {
		snprintf(err, errlen, "cannot open '%s': %s", leaf->path, strerror(errno));
		return (SET_ERROR(ENOENT));
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		snprintf(err, errlen, "'%s' is not a regular file or block device", leaf->path);
		return (SET_ERROR(EINVAL));
	}
	for (int i = 0; i < nseen; i++) {
		if (seen[i].dev == st.st_dev && seen[i].ino == st.st_ino &&
		    S_ISREG(st.st_mode)) {
			snprintf(err, errlen, "'%s' and '%s' are the same file", seen[i].path,
			    leaf->path);
			return (SET_ERROR(EINVAL));
		}
		if (S_ISBLK(st.st_mode) && seen[i].dev == st.st_rdev) {
			snprintf(err, errlen, "'%s' is specified multiple times", leaf->path);
			return (SET_ERROR(EINVAL));
		}
	}
	uint64_t size = 0, sector = 0;
	bool is_disk = false;
	int e = vdev_leaf_probe(leaf->path, &size, &sector, &is_disk);
	if (e != 0) {
		snprintf(err, errlen, "cannot open '%s': %s", leaf->path, strerror(e));
		return (e);
	}
	if (size < SPA_MINDEVSIZE) {
		snprintf(err, errlen, "'%s' is too small: %" PRIu64 " bytes, at least 64M needed",
		    leaf->path, size);
		return (SET_ERROR(EOVERFLOW));
	}
	vdev_label_config_t cfg;
	memset(&cfg, 0, sizeof (cfg));
	if (vdev_label_read_path(leaf->path, &cfg) == 0) {
		bool live = cfg.vlc_state == POOL_STATE_ACTIVE ||
		    cfg.vlc_state == POOL_STATE_EXPORTED || cfg.vlc_state == POOL_STATE_SPARE ||
		    cfg.vlc_state == POOL_STATE_L2CACHE;
		if (live && spa_cache_has_guid(cfg.vlc_pool_guid)) {
			/* -f never takes a device from a pool imported on this host */
			snprintf(err, errlen, "'%s' is part of imported pool '%s'; export or "
			    "destroy it first", leaf->path, cfg.vlc_name);
			vdev_config_free(&cfg);
			return (SET_ERROR(EBUSY));
		}
		if (live && !force) {
			snprintf(err, errlen, "'%s' is %s pool '%s'; use -f to override",
			    leaf->path, cfg.vlc_state == POOL_STATE_ACTIVE ? "part of active" :
			    cfg.vlc_state == POOL_STATE_SPARE ? "a hot spare of" :
			    cfg.vlc_state == POOL_STATE_L2CACHE ? "a cache device of" :
			    "part of exported",
			    cfg.vlc_name);
			vdev_config_free(&cfg);
			return (SET_ERROR(EBUSY));
		}
		vdev_config_free(&cfg);
	}
	out->path = leaf->path;
	out->size = size;
	out->dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
	out->ino = st.st_ino;
	return (0);
}

/* True when the cache file lists a pool with this GUID (imported here). */
bool
spa_cache_has_guid(uint64_t guid)
{
	spa_cache_entry_t *ents = NULL;
	int n = 0;
	bool found = false;
	if (spa_cache_read(&ents, &n) == 0) {
		for (int i = 0; i < n; i++)
			found |= ents[i].sce_guid == guid;
		spa_cache_free(ents, n);
	}
	return (found);
}

/* True when the cache file lists a pool of this name with another GUID. */
bool
spa_cache_name_in_use(const char *name, uint64_t guid)
{
	spa_cache_entry_t *ents = NULL;
	int n = 0;
	bool taken = false;
	if (spa_cache_read(&ents, &n) == 0) {
		for (int i = 0; i < n; i++)
			taken |= strcmp(ents[i].sce_name, name) == 0 && ents[i].sce_guid != guid;
		spa_cache_free(ents, n);
	}
	return (taken);
}

/* Check the whole spec; sizes within each group must match unless force. */
int
spa_check_spec(const spa_vdev_spec_t *root, bool force, char *err, size_t errlen)
{
	spa_leaf_check_t seen[1024];
	int nseen = 0;
	if (root->nchildren == 0) {
		snprintf(err, errlen, "no devices given");
		return (SET_ERROR(EINVAL));
	}
	for (int t = 0; t < root->nchildren; t++) {
		const spa_vdev_spec_t *top = root->children[t];
		int nleaves = top->nchildren ? top->nchildren : 1;
		uint64_t minsz = UINT64_MAX, maxsz = 0;
		for (int l = 0; l < nleaves; l++) {
			const spa_vdev_spec_t *leaf = top->nchildren ? top->children[l] : top;
			if (nseen >= (int)ARRAY_SIZE(seen)) {
				snprintf(err, errlen, "too many devices");
				return (SET_ERROR(EINVAL));
			}
			int e = spa_check_leaf(leaf, force, seen, nseen, &seen[nseen], err, errlen);
			if (e != 0)
				return (e);
			minsz = MIN(minsz, seen[nseen].size);
			maxsz = MAX(maxsz, seen[nseen].size);
			nseen++;
		}
		if (top->nchildren && maxsz - minsz > maxsz / 64 && !force) {
			snprintf(err, errlen, "%s contains devices of different sizes; "
			    "use -f to override (the smallest decides)",
			    top->type == VDEV_TYPE_MIRROR ? "mirror" : "raidz");
			return (SET_ERROR(EINVAL));
		}
	}
	return (0);
}

static void
spa_register_dp(spa_t *spa, uint64_t last_txg, const dmu_pool_opts_t *dpo)
{
	spa->spa_zio = zio_ctx_create(spa->spa_root, spa->spa_mc, 0);
	zio_ctx_set_readonly(spa->spa_zio, spa->spa_readonly);
	zio_ctx_set_class(spa->spa_zio, VDEV_BIAS_LOG, spa->spa_mc_log);
	zio_ctx_set_class(spa->spa_zio, VDEV_BIAS_SPECIAL, spa->spa_mc_special);
	zio_ctx_set_deflate(spa->spa_zio,
	    (spa->spa_features & SPA_FEATURE_SPACE_DEFLATE) != 0);
	dmu_pool_opts_t o = *dpo;
	o.dpo_pool_guid = spa->spa_guid;
	spa->spa_dp = dmu_pool_create(spa->spa_zio, last_txg, &o, spa_sync,
	    spa_space_avail, spa);
	dmu_pool_set_error_cb(spa->spa_dp, spa_errlog_report, spa);
}

int
spa_create(const char *name, const spa_vdev_spec_t *spec, const spa_create_opts_t *opts,
    spa_t **spap, char *err, size_t errlen)
{
	spa_create_opts_t dflt;
	memset(&dflt, 0, sizeof (dflt));
	if (opts == NULL)
		opts = &dflt;
	int e = spa_name_validate(name, err, errlen);
	if (e != 0)
		return (e);
	if (opts->sco_ashift != 0 && (opts->sco_ashift < 9 || opts->sco_ashift > 16)) {
		snprintf(err, errlen, "ashift must be between 9 and 16");
		return (SET_ERROR(EINVAL));
	}
	if (opts->sco_version > SPA_VERSION) {
		snprintf(err, errlen, "version %" PRIu64 " is newer than this software supports (%llu)",
		    opts->sco_version, (unsigned long long)SPA_VERSION);
		return (SET_ERROR(ENOTSUP));
	}
	if (!opts->sco_no_cache) {
		spa_cache_entry_t *ents = NULL;
		int n = 0;
		if (spa_cache_read(&ents, &n) == 0) {
			for (int i = 0; i < n; i++) {
				if (strcmp(ents[i].sce_name, name) == 0) {
					spa_cache_free(ents, n);
					snprintf(err, errlen, "a pool with that name already exists");
					return (SET_ERROR(EEXIST));
				}
			}
			spa_cache_free(ents, n);
		}
	}
	e = spa_check_spec(spec, opts->sco_force, err, errlen);
	if (e == 0)
		e = spa_class_check_create(spec, opts->sco_force,
		    opts->sco_version ? opts->sco_version : SPA_VERSION, err, errlen);
	if (e != 0)
		return (e);

	spa_t *spa = spa_alloc(name);
	spa->spa_guid = tarn_guid();
	spa->spa_version = opts->sco_version ? opts->sco_version : SPA_VERSION;
	spa->spa_features = spa->spa_version >= SPA_VERSION_2 ? SPA_FEATURES_NEW : 0;
	spa->spa_create_time = tarn_wall_sec();
	spa->spa_config_txg = 1;
	spa->spa_no_cache = opts->sco_no_cache;
	spa->spa_root = spa_tree_from_spec(spec, opts->sco_ashift);
	e = vdev_open(spa->spa_root, false);
	if (e != 0 || vdev_state(spa->spa_root) != VDEV_STATE_HEALTHY) {
		snprintf(err, errlen, "cannot open the devices: %s",
		    tarn_strerror(e ? e : EIO));
		spa_free(spa);
		return (e ? e : SET_ERROR(EIO));
	}
	spa_l2cache_open_all(spa, false);    /* cache devices: new, unlabeled */
	e = spa_setup_metaslabs(spa, true);
	if (e == 0) {
		spa_register_dp(spa, 0, &opts->sco_dmu);
		dmu_objset_props_t mp = { .osp_checksum = ZIO_CHECKSUM_DEFAULT,
			.osp_compress = ZIO_COMPRESS_OFF, .osp_copies = 3, .osp_is_mos = true };
		e = dmu_objset_create(spa->spa_dp, DMU_OST_META, &mp, &spa->spa_mos);
	}
	if (e == 0) {
		dmu_pool_start(spa->spa_dp);
		dmu_tx_t *tx = dmu_tx_create(spa->spa_mos);
		e = dmu_tx_assign(tx, TXG_WAIT);
		if (e == 0)
			e = dmu_object_claim(spa->spa_mos, SPA_DIR_OBJ, DMU_OT_OBJECT_DIRECTORY,
			    SPA_DIR_BLKSZ, DMU_OT_NONE, 0, tx);
		for (int t = 0; e == 0 && t < vdev_children(spa->spa_root); t++) {
			vdev_t *top = vdev_child(spa->spa_root, t);
			if (vdev_is_hole(top))
				continue;
			uint64_t obj = vdev_ms_array(top);
			e = dmu_object_alloc(spa->spa_mos, DMU_OT_OBJECT_ARRAY, SPA_MS_ARRAY_BLKSZ,
			    DMU_OT_NONE, 0, tx, &obj);
			vdev_set_ms_array(top, obj);
		}
		dmu_tx_commit(tx);
	}
	if (e == 0)
		e = spa_write_labels(spa, POOL_STATE_ACTIVE, true);
	if (e == 0)
		e = txg_wait_synced(spa->spa_dp, 0);
	if (e != 0) {
		snprintf(err, errlen, "cannot initialize the pool: %s", tarn_strerror(e));
		spa_unload(spa, false);
		spa_free(spa);
		return (e);
	}
	spa_vdev_start(spa);         /* device lifecycle: faults, spares, resilvers */
	if (!spa->spa_no_cache)
		(void) spa_cache_add(spa);
	*spap = spa;
	return (0);
}

/* Close object sets, stop the dmu, free zio and metaslab state. */
void
spa_unload(spa_t *spa, bool sync)
{
	spa_vdev_stop(spa, sync);    /* device lifecycle thread first (spa_vdev.c) */
	spa_scan_fini(spa);
	spa_l2arc_flush(spa);        /* a warm cache for the next import */
	if (spa->spa_dp != NULL) {
		dmu_pool_stop(spa->spa_dp, sync && !spa->spa_readonly);
		spa_zil_close_all(spa);
		for (int i = 0; i < SPA_NOS(spa); i++)
			if (SPA_OS(spa, i).so_os != NULL)
				dmu_objset_close(SPA_OS(spa, i).so_os);
		tarn_array_clear(&spa->spa_os);
		if (spa->spa_mos != NULL)
			dmu_objset_close(spa->spa_mos);
		spa->spa_mos = NULL;
		dmu_pool_destroy(spa->spa_dp, false);
		spa->spa_dp = NULL;
	}
	spa_l2arc_stop(spa);         /* after the dmu, which fed it */
	if (spa->spa_zio != NULL) {
		zio_ctx_destroy(spa->spa_zio);
		spa->spa_zio = NULL;
	}
	if (spa->spa_root != NULL)
		vdev_close(spa->spa_root);
}

void
spa_close(spa_t *spa)
{
	spa_unload(spa, true);
	spa_free(spa);
}

void
spa_abandon(spa_t *spa)
{
	spa_unload(spa, false);
	spa_free(spa);
}

int
spa_export(spa_t *spa)
{
	int e = 0;
	(void) spa_inject_clear(spa, 0);   /* run-time only (spa_inject.c) */
	if (spa->spa_readonly) {
		/* nothing was written: closing it is exporting it */
		spa_close(spa);
		return (0);
	}
	if (spa->spa_dp != NULL)
		e = txg_wait_synced(spa->spa_dp, 0);
	if (e == 0) {
		spa_vdev_stop(spa, true);  /* no label writes of its own after this */
		dmu_pool_stop(spa->spa_dp, true);
		e = spa_write_labels(spa, POOL_STATE_EXPORTED, false);
	}
	if (e != 0)
		return (e);
	if (!spa->spa_no_cache)
		(void) spa_cache_remove(spa->spa_name);
	spa_close(spa);
	return (0);
}

int
spa_destroy(spa_t *spa)
{
	if (spa->spa_readonly)
		return (SET_ERROR(EROFS));
	(void) spa_inject_clear(spa, 0);   /* run-time only (spa_inject.c) */
	spa_vdev_stop(spa, true);    /* no label writes of its own after this */
	dmu_pool_stop(spa->spa_dp, true);
	int e = spa_write_labels(spa, POOL_STATE_DESTROYED, false);
	if (e != 0)
		return (e);
	if (!spa->spa_no_cache)
		(void) spa_cache_remove(spa->spa_name);
	spa_close(spa);
	return (0);
}

/* ---- loading an existing pool ---- */

/* Try one uberblock: open the MOS and verify its metadata. */
static int
spa_try_uberblock(spa_t *spa, const uberblock_t *ub, uint64_t newest_txg,
    const spa_import_opts_t *opts)
{
	/*
	 * After a rewind, new txgs are numbered past the newest uberblock
	 * found, so the damaged newer ones can never win a later import.
	 */
	spa_errlog_reset(spa);      /* what an earlier try reported is not this tree's */
	spa_register_dp(spa, MAX(ub->ub_txg, newest_txg), &opts->sio_dmu);
	dmu_objset_props_t mp = { .osp_checksum = ZIO_CHECKSUM_DEFAULT,
		.osp_compress = ZIO_COMPRESS_OFF, .osp_copies = 3, .osp_is_mos = true };
	int e = dmu_objset_open(spa->spa_dp, &ub->ub_rootbp, &mp, &spa->spa_mos);
	if (e == 0 && !(opts->sio_flags & SPA_OPEN_NOVERIFY)) {
		uint64_t errors = 0;
		(void) dmu_traverse(spa->spa_mos, 0, ZIO_FLAG_SPECULATIVE | ZIO_FLAG_NOHEAL, 0,
		    NULL, NULL, &errors);
		if (errors > 0)
			e = SET_ERROR(ECKSUM);
	}
	if (e == 0)
		e = spa_load_metaslabs(spa, ub->ub_txg);
	if (e == 0)
		e = spa_errlog_load(spa);
	if (e == 0)
		e = spa_history_load(spa);
	if (e == 0)
		e = spa_scan_load(spa);
	if (e != 0) {
		if (spa->spa_mos != NULL)
			dmu_objset_close(spa->spa_mos);
		spa->spa_mos = NULL;
		dmu_pool_destroy(spa->spa_dp, false);
		spa->spa_dp = NULL;
		zio_ctx_destroy(spa->spa_zio);
		spa->spa_zio = NULL;
		spa_classes_destroy(spa);
		return (e);
	}
	spa->spa_ub = *ub;
	spa->spa_loaded_txg = ub->ub_txg;
	return (0);
}

/*
 * Load the pool described by cfg (tree paths already set to where the
 * leaves are now).  Takes ownership of cfg->vlc_tree.
 */
int
spa_load(spa_t *spa, const vdev_label_config_t *cfg, const spa_import_opts_t *opts,
    char *err, size_t errlen)
{
	spa->spa_guid = cfg->vlc_pool_guid;
	spa->spa_version = cfg->vlc_version;
	spa->spa_features = cfg->vlc_features;
	spa->spa_create_time = cfg->vlc_create_time;
	spa->spa_config_txg = cfg->vlc_txg;
	spa->spa_readonly = (opts->sio_flags & SPA_OPEN_READONLY) != 0;
	spa->spa_no_cache = opts->sio_no_cache;
	if (spa->spa_version == 0 || spa->spa_version > SPA_VERSION ||
	    (cfg->vlc_features & ~SPA_FEATURES_KNOWN) != 0) {
		snprintf(err, errlen, "the pool uses a newer format (version %" PRIu64
		    ") than this software supports", spa->spa_version);
		return (SET_ERROR(ENOTSUP));
	}
	int e = vdev_open(spa->spa_root, spa->spa_readonly);
	if (e != 0) {
		snprintf(err, errlen, e == EBUSY ? "the pool is in use by another process" :
		    "not enough devices to open the pool (%s)", tarn_strerror(e));
		return (e);
	}
	uberblock_t *ubs = NULL;
	int nub = 0;
	e = vdev_uberblock_collect(spa->spa_root, spa->spa_guid, &ubs, &nub);
	if (e != 0 || nub == 0) {
		tarn_free(ubs);
		snprintf(err, errlen, "no valid uberblock found on the devices");
		return (e ? e : SET_ERROR(EIO));
	}
	int tried = 0;
	e = SET_ERROR(EIO);
	for (int i = 0; i < nub; i++) {
		if (opts->sio_rewind_txg != 0 && ubs[i].ub_txg > opts->sio_rewind_txg)
			continue;
		tried++;
		e = spa_setup_metaslabs(spa, false);
		if (e == 0)
			e = spa_try_uberblock(spa, &ubs[i], ubs[0].ub_txg, opts);
		if (e == 0)
			break;
		tarn_dprintf("uberblock txg %" PRIu64 " did not load: %d\n", ubs[i].ub_txg, e);
		if (opts->sio_rewind_txg == 0)
			break;   /* only the newest without a rewind request */
	}
	uint64_t newest = ubs[0].ub_txg;
	tarn_free(ubs);
	if (e == 0)
		spa_class_idle_dead_logs(spa);
	if (e != 0) {
		if (opts->sio_rewind_txg == 0 && nub > 1)
			snprintf(err, errlen, "the pool metadata at txg %" PRIu64 " is damaged; "
			    "an older txg may import with -F", newest);
		else
			snprintf(err, errlen, "no importable txg found (%s)", tarn_strerror(e));
		return (e);
	}
	(void) tried;
	/*
	 * Registered object sets are opened on demand (spa_objset_open),
	 * except that the intent logs are claimed now, before the first
	 * allocation (lib/zil).
	 */
	if (!spa->spa_readonly) {
		e = spa_zil_claim_all(spa, opts->sio_rewind_txg != 0);
		if (e != 0) {
			snprintf(err, errlen, "cannot read the intent logs: %s", tarn_strerror(e));
			return (e);
		}
		dmu_pool_start(spa->spa_dp);
		spa_scan_start_pool(spa);
		if (cfg->vlc_state != POOL_STATE_ACTIVE || cfg->vlc_txg == 0) {
			e = spa_write_labels(spa, POOL_STATE_ACTIVE, false);
			if (e != 0) {
				snprintf(err, errlen, "cannot write the labels: %s", tarn_strerror(e));
				return (e);
			}
		}
	}
	spa_vdev_start(spa);         /* device lifecycle: spares, missed txgs, resilvers */
	return (0);
}
