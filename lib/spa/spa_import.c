/*
 * spa_import.c — finding pools on devices and opening them.
 *
 * Labels identify devices, paths do not: a scan reads the label of every
 * regular file and block device in the given directories, groups them by
 * pool GUID, takes the newest config (highest config txg) as the vdev
 * tree, and points each leaf of the tree at the device whose label
 * carries that leaf's GUID, wherever it is now.  Leaves not found become
 * MISSING (UNAVAIL when opened); the pool opens if every top-level vdev
 * keeps enough of its children.
 */
#include "spa_impl.h"
#include "tarn_array.h"

#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct found_label {
	char *fl_path;
	vdev_label_config_t fl_cfg;
} found_label_t;

typedef struct scan {
	tarn_array_t sc_found;  /* of found_label_t */
} scan_t;

static void
scan_add(scan_t *sc, const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)))
		return;
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size < SPA_MINDEVSIZE)
		return;
	vdev_label_config_t cfg;
	memset(&cfg, 0, sizeof (cfg));
	if (vdev_label_read_path(path, &cfg) != 0)
		return;
	found_label_t *fl = tarn_array_push(&sc->sc_found);
	fl->fl_path = tarn_strdup(path);
	fl->fl_cfg = cfg;
}

static void
scan_dir(scan_t *sc, const char *dir)
{
	DIR *d = opendir(dir);
	if (d == NULL) {
		scan_add(sc, dir);   /* a device path given directly */
		return;
	}
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char path[PATH_MAX];
		if (snprintf(path, sizeof (path), "%s/%s", dir, de->d_name) >= (int)sizeof (path))
			continue;
		scan_add(sc, path);
	}
	closedir(d);
}

static void
scan_free(scan_t *sc)
{
	for (int i = 0; i < (int)tarn_array_len(&sc->sc_found); i++) {
		tarn_free(TARN_ARRAY_AT(&sc->sc_found, found_label_t, i).fl_path);
		vdev_config_free(&TARN_ARRAY_AT(&sc->sc_found, found_label_t, i).fl_cfg);
	}
	tarn_array_fini(&sc->sc_found);
}

/* Point each leaf of tree at the found device with its GUID; MISSING otherwise. */
static void
spa_attach_paths(vdev_t *vd, scan_t *sc, uint64_t pool_guid)
{
	for (int c = 0; c < vdev_children(vd); c++)
		spa_attach_paths(vdev_child(vd, c), sc, pool_guid);
	if (vdev_children(vd) > 0 || vdev_type(vd) == VDEV_TYPE_ROOT || vdev_is_hole(vd))
		return;
	for (int i = 0; i < (int)tarn_array_len(&sc->sc_found); i++) {
		const vdev_label_config_t *c = &TARN_ARRAY_AT(&sc->sc_found, found_label_t, i).fl_cfg;
		if (c->vlc_pool_guid == pool_guid && c->vlc_leaf_guid == vdev_guid(vd)) {
			vdev_set_path(vd, TARN_ARRAY_AT(&sc->sc_found, found_label_t, i).fl_path);
			/* missing when the config was written, found now (spa_vdev.c) */
			if (vdev_type(vd) == VDEV_TYPE_MISSING)
				vdev_set_type(vd, VDEV_TYPE_FILE);
			return;
		}
	}
	vdev_set_type(vd, VDEV_TYPE_MISSING);
}

/* A cache device: its path where a label of it was found; as recorded otherwise. */
static void
spa_attach_cache_path(vdev_t *leaf, scan_t *sc, uint64_t pool_guid)
{
	for (int i = 0; i < (int)tarn_array_len(&sc->sc_found); i++) {
		const found_label_t *fl = tarn_array_get(&sc->sc_found, (size_t)i);
		if (fl->fl_cfg.vlc_pool_guid == pool_guid &&
		    fl->fl_cfg.vlc_leaf_guid == vdev_guid(leaf)) {
			vdev_set_path(leaf, fl->fl_path);
			return;
		}
	}
}

/* Can top open with the leaves found?  (A top-level vdev, not a hole.) */
static bool
spa_top_can_open(const vdev_t *top)
{
	int missing = 0;
	if (vdev_children(top) == 0)
		return (vdev_type(top) != VDEV_TYPE_MISSING);
	for (int c = 0; c < vdev_children(top); c++)
		missing += vdev_type(vdev_child(top, c)) == VDEV_TYPE_MISSING;
	if (vdev_type(top) == VDEV_TYPE_MIRROR && missing == vdev_children(top))
		return (false);
	if (vdev_type(top) == VDEV_TYPE_RAIDZ && missing > vdev_nparity(top))
		return (false);
	return (true);
}

/* The name of top's first leaf (its path, else its GUID) into buf. */
static void
spa_top_leaf_name(const vdev_t *top, char *buf, size_t len)
{
	while (vdev_children(top) > 0)
		top = vdev_child(top, 0);
	if (vdev_path(top) != NULL)
		snprintf(buf, len, "%s", vdev_path(top));
	else
		snprintf(buf, len, "%" PRIu64, vdev_guid(top));
}

/*
 * Whether ic's tree can open: every top-level vdev can, except that a
 * log vdev that cannot only costs its unreplayed intent log, which
 * import accepts with -m (sic_missing_log), as zpool import -m.
 */
static void
spa_cand_check_open(spa_import_cand_t *ic)
{
	const vdev_t *root = ic->sic_tree;
	ic->sic_can_open = true;
	ic->sic_missing_log = false;
	for (int t = 0; t < vdev_children(root); t++) {
		const vdev_t *top = vdev_child(root, t);
		if (spa_top_can_open(top))
			continue;
		if (vdev_alloc_bias(top) != VDEV_BIAS_LOG) {
			ic->sic_can_open = false;
		} else if (!ic->sic_missing_log) {
			ic->sic_missing_log = true;
			spa_top_leaf_name(top, ic->sic_missing_name, sizeof (ic->sic_missing_name));
		}
	}
}

/* ENXIO with the message when ic has a missing log vdev and opts lack -m. */
static int
spa_cand_check_log(const spa_import_cand_t *ic, const spa_import_opts_t *opts, char *err,
    size_t errlen)
{
	if (!ic->sic_missing_log || opts->sio_missing_log)
		return (0);
	snprintf(err, errlen, "one or more devices are missing from the system: the log "
	    "device %s; use '-m' to import the pool without the log device (its "
	    "unreplayed intent log is lost)", ic->sic_missing_name);
	return (SET_ERROR(ENXIO));
}

/* The best label of each pool found, as candidates (tree ownership moves). */
static int
spa_scan_to_cands(scan_t *sc, spa_import_cand_t **candsp, int *np)
{
	tarn_array_t all = TARN_ARRAY_INIT(spa_import_cand_t);
	for (int i = 0; i < (int)tarn_array_len(&sc->sc_found); i++) {
		vdev_label_config_t *c = &TARN_ARRAY_AT(&sc->sc_found, found_label_t, i).fl_cfg;
		/* A hot spare's label (SPARE) never describes its pool (spa_vdev.c). */
		if (c->vlc_state == POOL_STATE_DESTROYED || c->vlc_state == POOL_STATE_SPARE ||
		    c->vlc_state == POOL_STATE_L2CACHE ||
		    c->vlc_tree == NULL)
			continue;
		spa_import_cand_t *ic = NULL;
		for (size_t j = 0; j < tarn_array_len(&all) && ic == NULL; j++)
			if (TARN_ARRAY_AT(&all, spa_import_cand_t, j).sic_guid == c->vlc_pool_guid)
				ic = tarn_array_get(&all, j);
		if (ic != NULL) {
			if (c->vlc_txg <= ic->sic_txg)
				continue;
			vdev_free(ic->sic_tree);
		} else {
			ic = tarn_array_push(&all);
		}
		snprintf(ic->sic_name, sizeof (ic->sic_name), "%s", c->vlc_name);
		ic->sic_guid = c->vlc_pool_guid;
		ic->sic_txg = c->vlc_txg;
		ic->sic_state = (pool_state_t)c->vlc_state;
		ic->sic_tree = c->vlc_tree;
		c->vlc_tree = NULL;
	}
	size_t n;
	spa_import_cand_t *cands = tarn_array_steal(&all, &n);
	for (size_t j = 0; j < n; j++) {
		spa_attach_paths(cands[j].sic_tree, sc, cands[j].sic_guid);
		/* cache devices found by their labels too (else their recorded path) */
		vdev_t *l2 = vdev_l2cache(cands[j].sic_tree);
		for (int c = 0; l2 != NULL && c < vdev_children(l2); c++)
			spa_attach_cache_path(vdev_child(l2, c), sc, cands[j].sic_guid);
		spa_cand_check_open(&cands[j]);
	}
	*candsp = cands;
	*np = (int)n;
	return (0);
}

int
spa_import_scan(const char *const *dirs, int ndirs, spa_import_cand_t **cands, int *n)
{
	static const char *const dflt[] = { "/dev" };
	if (dirs == NULL || ndirs == 0) {
		dirs = dflt;
		ndirs = 1;
	}
	scan_t sc = { TARN_ARRAY_INIT(found_label_t) };
	for (int i = 0; i < ndirs; i++)
		scan_dir(&sc, dirs[i]);
	int e = spa_scan_to_cands(&sc, cands, n);
	scan_free(&sc);
	return (e);
}

void
spa_import_cands_free(spa_import_cand_t *cands, int n)
{
	for (int i = 0; i < n; i++)
		if (cands[i].sic_tree != NULL)
			vdev_free(cands[i].sic_tree);
	tarn_free(cands);
}

/* Open the candidate: take its tree and load the pool. */
static int
spa_open_cand(spa_import_cand_t *ic, const spa_import_opts_t *opts, spa_t **spap,
    char *err, size_t errlen)
{
	spa_t *spa = spa_alloc(opts->sio_newname ? opts->sio_newname : ic->sic_name);
	spa->spa_root = ic->sic_tree;
	ic->sic_tree = NULL;
	vdev_label_config_t cfg;
	memset(&cfg, 0, sizeof (cfg));
	snprintf(cfg.vlc_name, sizeof (cfg.vlc_name), "%s", spa->spa_name);
	cfg.vlc_pool_guid = ic->sic_guid;
	cfg.vlc_txg = ic->sic_txg;
	cfg.vlc_state = ic->sic_state;
	/* version/features/create time come from a label of the pool */
	int e = 0;
	for (int pass = 0; pass < 1; pass++) {
		vdev_t *stack[64];
		int sp = 0;
		stack[sp++] = spa->spa_root;
		while (sp > 0) {
			vdev_t *vd = stack[--sp];
			if (vdev_children(vd) == 0 && vdev_path(vd) != NULL &&
			    vdev_type(vd) != VDEV_TYPE_MISSING) {
				vdev_label_config_t lc;
				memset(&lc, 0, sizeof (lc));
				if (vdev_label_read_path(vdev_path(vd), &lc) == 0) {
					cfg.vlc_version = lc.vlc_version;
					cfg.vlc_features = lc.vlc_features;
					cfg.vlc_create_time = lc.vlc_create_time;
					vdev_config_free(&lc);
					sp = 0;
					break;
				}
			}
			for (int c = 0; c < vdev_children(vd) && sp < 64; c++)
				stack[sp++] = vdev_child(vd, c);
		}
	}
	e = spa_load(spa, &cfg, opts, err, errlen);
	if (e != 0) {
		spa_unload(spa, false);
		spa_free(spa);
		return (e);
	}
	if (opts->sio_newname != NULL && !spa->spa_readonly) {
		spa_vdev_hold(spa);   /* the device thread writes labels too */
		spa->spa_config_txg = spa_last_synced_txg(spa) + 1;
		(void) spa_write_labels(spa, POOL_STATE_ACTIVE, false);
		spa_vdev_rele(spa);
	}
	*spap = spa;
	return (0);
}

static bool
spa_cand_matches(const spa_import_cand_t *ic, const char *which)
{
	if (strcmp(ic->sic_name, which) == 0)
		return (true);
	char *end;
	unsigned long long g = strtoull(which, &end, 10);
	return (*end == '\0' && g == ic->sic_guid);
}

int
spa_import(const char *which, const char *const *dirs, int ndirs,
    const spa_import_opts_t *opts, spa_t **spap, char *err, size_t errlen)
{
	spa_import_cand_t *cands = NULL;
	int n = 0, match = -1, nmatch = 0;
	spa_import_scan(dirs, ndirs, &cands, &n);
	for (int i = 0; i < n; i++) {
		if (spa_cand_matches(&cands[i], which)) {
			match = i;
			nmatch++;
		}
	}
	int e;
	if (nmatch == 0) {
		snprintf(err, errlen, "no such pool available");
		e = SET_ERROR(ENOENT);
	} else if (nmatch > 1) {
		snprintf(err, errlen, "more than one matching pool; import by numeric ID instead");
		e = SET_ERROR(EEXIST);
	} else if (!cands[match].sic_can_open) {
		snprintf(err, errlen, "one or more devices are missing; the pool cannot be opened");
		e = SET_ERROR(ENXIO);
	} else if ((e = spa_cand_check_log(&cands[match], opts, err, errlen)) != 0) {
		/* the message is in err */
	} else if (cands[match].sic_state == POOL_STATE_ACTIVE && !opts->sio_force &&
	    !opts->sio_no_cache) {
		/* Active on this host and still in our cache file: it is imported. */
		spa_cache_entry_t *ents = NULL;
		int ne = 0;
		bool ours = false;
		if (spa_cache_read(&ents, &ne) == 0) {
			for (int i = 0; i < ne; i++)
				if (ents[i].sce_guid == cands[match].sic_guid)
					ours = true;
			spa_cache_free(ents, ne);
		}
		if (ours) {
			snprintf(err, errlen, "a pool with that name is already imported");
			e = SET_ERROR(EEXIST);
		} else {
			snprintf(err, errlen, "pool was not exported and may be in use; "
			    "use -f to import anyway");
			e = SET_ERROR(EBUSY);
		}
	} else if (!opts->sio_no_cache && spa_cache_name_in_use(opts->sio_newname ?
	    opts->sio_newname : cands[match].sic_name, cands[match].sic_guid)) {
		snprintf(err, errlen, "a pool named '%s' is already imported; import under "
		    "another name", opts->sio_newname ? opts->sio_newname : cands[match].sic_name);
		e = SET_ERROR(EEXIST);
	} else {
		/*
		 * Listed first, opened (labels marked active) second: killed in
		 * between, the next start opens the pool from the cache file,
		 * instead of finding it active and refusing it without -f.
		 */
		const char *name = opts->sio_newname ? opts->sio_newname : cands[match].sic_name;
		bool cache = !opts->sio_no_cache && !(opts->sio_flags & SPA_OPEN_READONLY);
		if (cache)
			(void) spa_cache_add_found(name, cands[match].sic_guid,
			    cands[match].sic_tree);
		e = spa_open_cand(&cands[match], opts, spap, err, errlen);
		if (e == 0 && cache)
			(void) spa_cache_add(*spap);
		else if (cache)
			(void) spa_cache_remove(name);
	}
	spa_import_cands_free(cands, n);
	return (e);
}

int
spa_open_paths(const char *const *paths, int npaths, const spa_import_opts_t *opts,
    spa_t **spap, char *err, size_t errlen)
{
	spa_import_opts_t dflt;
	memset(&dflt, 0, sizeof (dflt));
	if (opts == NULL)
		opts = &dflt;
	scan_t sc = { TARN_ARRAY_INIT(found_label_t) };
	for (int i = 0; i < npaths; i++)
		scan_add(&sc, paths[i]);
	spa_import_cand_t *cands = NULL;
	int n = 0;
	spa_scan_to_cands(&sc, &cands, &n);
	scan_free(&sc);
	int e;
	if (n != 1) {
		snprintf(err, errlen, n == 0 ? "no pool found on the devices" :
		    "the devices belong to more than one pool");
		e = SET_ERROR(n == 0 ? ENOENT : EINVAL);
	} else if (!cands[0].sic_can_open) {
		snprintf(err, errlen, "one or more devices are missing; the pool cannot be opened");
		e = SET_ERROR(ENXIO);
	} else if ((e = spa_cand_check_log(&cands[0], opts, err, errlen)) != 0) {
		/* the message is in err */
	} else {
		e = spa_open_cand(&cands[0], opts, spap, err, errlen);
	}
	spa_import_cands_free(cands, n);
	return (e);
}

int
spa_open(const char *name, int flags, spa_t **spap, char *err, size_t errlen)
{
	return (spa_open_opts(name, flags, NULL, spap, err, errlen));
}

int
spa_open_opts(const char *name, int flags, const dmu_pool_opts_t *dpo, spa_t **spap,
    char *err, size_t errlen)
{
	spa_cache_entry_t *ents = NULL;
	int n = 0;
	int e = spa_cache_read(&ents, &n);
	const spa_cache_entry_t *ent = NULL;
	for (int i = 0; e == 0 && i < n; i++)
		if (strcmp(ents[i].sce_name, name) == 0)
			ent = &ents[i];
	if (ent == NULL) {
		spa_cache_free(ents, n);
		snprintf(err, errlen, "no such pool");
		return (SET_ERROR(ENOENT));
	}
	/* Look at the recorded paths, and their folders in case devices moved. */
	scan_t sc = { TARN_ARRAY_INIT(found_label_t) };
	char **dirs = tarn_alloc(sizeof (char *) * (ent->sce_npaths + 1));
	int ndirs = 0;
	for (int i = 0; i < ent->sce_npaths; i++)
		scan_add(&sc, ent->sce_paths[i]);
	spa_import_cand_t *cands = NULL;
	int nc = 0;
	spa_scan_to_cands(&sc, &cands, &nc);
	int match = -1;
	for (int i = 0; i < nc; i++)
		if (cands[i].sic_guid == ent->sce_guid)
			match = i;
	if (match < 0 || !cands[match].sic_can_open || cands[match].sic_missing_log) {
		spa_import_cands_free(cands, nc);
		scan_free(&sc);
		sc = (scan_t){ TARN_ARRAY_INIT(found_label_t) };
		for (int i = 0; i < ent->sce_npaths; i++) {
			char *d = tarn_strdup(ent->sce_paths[i]);
			char *slash = strrchr(d, '/');
			if (slash != NULL && slash != d)
				*slash = '\0';
			bool dup = false;
			for (int j = 0; j < ndirs; j++)
				dup |= strcmp(dirs[j], d) == 0;
			if (dup)
				tarn_free(d);
			else
				dirs[ndirs++] = d;
		}
		for (int i = 0; i < ndirs; i++)
			scan_dir(&sc, dirs[i]);
		spa_scan_to_cands(&sc, &cands, &nc);
		match = -1;
		for (int i = 0; i < nc; i++)
			if (cands[i].sic_guid == ent->sce_guid)
				match = i;
	}
	scan_free(&sc);
	for (int i = 0; i < ndirs; i++)
		tarn_free(dirs[i]);
	tarn_free(dirs);
	spa_import_opts_t opts;
	memset(&opts, 0, sizeof (opts));
	opts.sio_flags = flags;
	if (dpo != NULL)
		opts.sio_dmu = *dpo;
	opts.sio_missing_log = true;   /* imported already: opens DEGRADED, as zfs */
	if (match < 0) {
		snprintf(err, errlen, "the pool's devices were not found");
		e = SET_ERROR(ENXIO);
	} else {
		/* the cache file's name wins: labels may carry an older name */
		opts.sio_newname = NULL;
		snprintf(cands[match].sic_name, sizeof (cands[match].sic_name), "%s", name);
		e = spa_open_cand(&cands[match], &opts, spap, err, errlen);
	}
	spa_import_cands_free(cands, nc);
	spa_cache_free(ents, n);
	return (e);
}
