/*
 * spa_class.c — allocation classes and cache devices (zpool's log,
 * special and cache vdevs).  Theory: docs/DESIGN.md "Allocation classes".
 *
 * A top-level vdev is normal, log or special (its allocation bias, kept
 * in the label config).  The pool has one metaslab class per kind, made
 * as a family (space.h): spa_mc, the normal class, is the primary, and
 * frees, claims, syncs and scans go through it for every kind; only
 * allocations pick a class (zio for metadata and small blocks, lib/zil
 * for log blocks), falling back to the normal class when theirs is full
 * or empty.  Space: the pool's data space (spa_get_space, `available`)
 * is the normal class's; log and special space is shown per class.
 *
 * Cache devices are leaves outside the tree proper, like hot spares: the
 * root's cache list (vdev_l2cache), records flagged "cache" in the label
 * config, and labels of their own in state L2CACHE naming the pool, so
 * that an import finds them (by path in the config, or by a directory
 * scan that matches their GUID).  The pool keeps them open; what reads
 * and writes them is the L2ARC (lib/arc), which reaches them through
 * spa_l2cache_* and is told of arrivals and departures by its hooks.
 *
 * Removal (zpool remove): a cache device goes at once; a log vdev stops
 * taking allocations (its group passive), the pool syncs until the
 * intent-log blocks on it are freed (file systems give back their
 * chains' open blocks), and the vdev leaves the tree; when other
 * top-level vdevs follow it, a hole takes its place (block addresses
 * name top-level vdevs by index, as in ZFS).  Special vdevs, like data
 * vdevs, cannot be removed.
 *
 * Locking: device changes hold spa_vdev_lock (spa_vdev_enter/exit) and
 * the tree lock as writer around the change of the tree itself.
 */
#include "spa_impl.h"

/* ---- the classes ---- */

void
spa_classes_create(spa_t *spa)
{
	spa_classes_destroy(spa);
	spa->spa_mc = metaslab_class_create();
	spa->spa_mc_log = metaslab_class_create_aux(spa->spa_mc);
	spa->spa_mc_special = metaslab_class_create_aux(spa->spa_mc);
}

void
spa_classes_destroy(spa_t *spa)
{
	if (spa->spa_mc_log != NULL)
		metaslab_class_destroy(spa->spa_mc_log);
	if (spa->spa_mc_special != NULL)
		metaslab_class_destroy(spa->spa_mc_special);
	if (spa->spa_mc != NULL)
		metaslab_class_destroy(spa->spa_mc);
	spa->spa_mc = spa->spa_mc_log = spa->spa_mc_special = NULL;
}

metaslab_class_t *
spa_class_of(spa_t *spa, vdev_alloc_bias_t bias)
{
	switch (bias) {
	case VDEV_BIAS_LOG: return (spa->spa_mc_log);
	case VDEV_BIAS_SPECIAL: return (spa->spa_mc_special);
	default: return (spa->spa_mc);
	}
}

void
spa_class_space(spa_t *spa, vdev_alloc_bias_t bias, spa_space_t *out)
{
	metaslab_space_t ms;
	memset(out, 0, sizeof (*out));
	metaslab_class_t *mc = spa_class_of(spa, bias);
	if (mc == NULL)
		return;
	metaslab_class_space(mc, &ms);
	out->ss_size = ms.ms_total;
	out->ss_alloc = ms.ms_alloc + ms.ms_deferred;
	out->ss_free = ms.ms_free;
	out->ss_deferred = ms.ms_deferred;
}

/* ---- checks of a spec's classes ---- */

static bool
spec_uses_classes(const spa_vdev_spec_t *spec)
{
	for (int t = 0; t < spec->nchildren; t++)
		if (spec->children[t]->cache || spec->children[t]->bias != VDEV_BIAS_NORMAL)
			return (true);
	return (false);
}

/* Redundancy of a top-level: 0 for a single device, else mirror sides - 1 or parity. */
static int
spec_redundancy(const spa_vdev_spec_t *top, char *buf, size_t len)
{
	if (top->type == VDEV_TYPE_MIRROR) {
		(void) snprintf(buf, len, "%d-way mirror", top->nchildren);
		return (top->nchildren - 1);
	}
	if (top->type == VDEV_TYPE_RAIDZ) {
		(void) snprintf(buf, len, "%d-wide raidz%d", top->nchildren, top->nparity);
		return (top->nparity);
	}
	(void) snprintf(buf, len, "disk");
	return (0);
}

static int
vdev_redundancy(const vdev_t *top, char *buf, size_t len)
{
	if (vdev_type(top) == VDEV_TYPE_MIRROR) {
		(void) snprintf(buf, len, "%d-way mirror", vdev_children(top));
		return (vdev_children(top) - 1);
	}
	if (vdev_type(top) == VDEV_TYPE_RAIDZ) {
		(void) snprintf(buf, len, "%d-wide raidz%d", vdev_children(top), vdev_nparity(top));
		return (vdev_nparity(top));
	}
	(void) snprintf(buf, len, "disk");
	return (0);
}

/*
 * Special vdevs hold the pool's metadata: one without redundancy in a
 * pool whose data has some would be its weakest point.  zpool refuses
 * that without -f ("mismatched replication level"); so does this.
 */
static int
spec_check_special(const spa_vdev_spec_t *spec, int data_red, const char *data_layout,
    bool force, char *err, size_t errlen)
{
	char layout[64];
	for (int t = 0; t < spec->nchildren && !force; t++) {
		const spa_vdev_spec_t *top = spec->children[t];
		if (top->cache || top->bias != VDEV_BIAS_SPECIAL)
			continue;
		if (data_red > 0 && spec_redundancy(top, layout, sizeof (layout)) == 0)
			return (spa_vdev_fail(SET_ERROR(EINVAL), err, errlen, "mismatched "
			    "replication level: pool uses %s and new special vdev is %s; use -f "
			    "to override", data_layout, layout));
	}
	return (0);
}

int
spa_class_check_create(const spa_vdev_spec_t *spec, bool force, uint64_t version,
    char *err, size_t errlen)
{
	const spa_vdev_spec_t *first = NULL;
	if (!spec_uses_classes(spec))
		return (0);
	if (version < SPA_VERSION_2)
		return (spa_vdev_fail(SET_ERROR(ENOTSUP), err, errlen, "log, cache and special "
		    "devices need feature flags (version 2)"));
	for (int t = 0; t < spec->nchildren && first == NULL; t++)
		if (!spec->children[t]->cache && spec->children[t]->bias == VDEV_BIAS_NORMAL)
			first = spec->children[t];
	if (first == NULL)
		return (spa_vdev_fail(SET_ERROR(EINVAL), err, errlen, "at least one data vdev "
		    "is needed besides log, cache and special devices"));
	char layout[64];
	int red = spec_redundancy(first, layout, sizeof (layout));
	return (spec_check_special(spec, red, layout, force, err, errlen));
}

int
spa_class_check_add(spa_t *spa, const spa_vdev_spec_t *spec, bool force, char *err,
    size_t errlen)
{
	if (!spec_uses_classes(spec))
		return (0);
	if (!(spa->spa_features & SPA_FEATURE_ALLOCATION_CLASSES))
		return (spa_vdev_fail(SET_ERROR(ENOTSUP), err, errlen, "the pool must be "
		    "upgraded to add log, cache or special devices ('zpool upgrade %s')",
		    spa->spa_name));
	const vdev_t *root = spa->spa_root, *first = NULL;
	for (int t = 0; t < vdev_children(root) && first == NULL; t++)
		if (vdev_alloc_bias(vdev_child(root, t)) == VDEV_BIAS_NORMAL &&
		    !vdev_is_hole(vdev_child(root, t)))
			first = vdev_child(root, t);
	if (first == NULL)
		return (0);
	char layout[64];
	int red = vdev_redundancy(first, layout, sizeof (layout));
	return (spec_check_special(spec, red, layout, force, err, errlen));
}

/*
 * After a load: a log vdev that cannot open (imported with -m) takes no
 * allocations; intent-log blocks go to the normal class (lib/zil).
 */
void
spa_class_idle_dead_logs(spa_t *spa)
{
	const vdev_t *root = spa->spa_root;
	for (int t = 0; t < vdev_children(root); t++) {
		vdev_t *top = vdev_child(root, t);
		if (vdev_is_dead_log(top) && vdev_ms_group(top) != NULL)
			metaslab_group_set_passive(vdev_ms_group(top), true);
	}
}

/* A log vdev that opens again (zpool online of a lost log device) takes allocations again. */
void
spa_class_wake_log(spa_t *spa, vdev_t *top)
{
	if (vdev_alloc_bias(top) == VDEV_BIAS_LOG && !vdev_is_dead_log(top) &&
	    vdev_ms_group(top) != NULL)
		metaslab_group_set_passive(vdev_ms_group(top), false);
}

/* ---- cache devices ---- */

static spa_l2cache_hooks_t spa_l2cache_hooks_none;

void
spa_l2cache_set_hooks(spa_t *spa, const spa_l2cache_hooks_t *hooks, void *arg)
{
	spa_vdev_hold(spa);
	spa->spa_l2cache_hooks = hooks != NULL ? hooks : &spa_l2cache_hooks_none;
	spa->spa_l2cache_arg = arg;
	spa_vdev_rele(spa);
}

static void
spa_l2cache_notify(spa_t *spa, vdev_t *leaf, bool added)
{
	const spa_l2cache_hooks_t *h = spa->spa_l2cache_hooks;
	if (h == NULL)
		return;
	if (added && h->slh_added != NULL && vdev_leaf_ready(leaf))
		h->slh_added(spa->spa_l2cache_arg, leaf);
	else if (!added && h->slh_removing != NULL)
		h->slh_removing(spa->spa_l2cache_arg, leaf);
}

int
spa_l2cache_count(spa_t *spa)
{
	vdev_t *l2 = vdev_l2cache(spa->spa_root);
	return (l2 != NULL ? vdev_children(l2) : 0);
}

vdev_t *
spa_l2cache_leaf(spa_t *spa, int i)
{
	vdev_t *l2 = vdev_l2cache(spa->spa_root);
	return (l2 != NULL && i >= 0 && i < vdev_children(l2) ? vdev_child(l2, i) : NULL);
}

/*
 * Open the cache devices (pool start; spa_vdev_lock held).  Those whose
 * labels do not name this pool and leaf stay CANT_OPEN: the device at
 * that path is someone else's now.  check_label false: a pool being
 * created, whose devices have no labels yet.
 */
void
spa_l2cache_open_all(spa_t *spa, bool check_label)
{
	vdev_t *l2 = vdev_l2cache(spa->spa_root);
	for (int c = 0; l2 != NULL && c < vdev_children(l2); c++) {
		vdev_t *e = vdev_child(l2, c);
		if (vdev_leaf_ready(e))
			continue;
		vdev_set_readonly(e, spa->spa_readonly);
		vdev_set_state(e, VDEV_STATE_CANT_OPEN);
		if (check_label && !spa_vdev_label_is(spa, vdev_path(e), vdev_guid(e)))
			continue;
		vdev_tree_enter_write(spa->spa_root);
		(void) vdev_leaf_reopen(e, 0);
		vdev_tree_exit(spa->spa_root);
		if (!check_label && vdev_leaf_ready(e))
			(void) vdev_label_init(e);
		spa_l2cache_notify(spa, e, true);
	}
}

void
spa_l2cache_open(spa_t *spa)
{
	spa_l2cache_open_all(spa, true);
}

int
spa_vdev_add_cache(spa_t *spa, const spa_vdev_spec_t *spec, bool force, char *err,
    size_t errlen)
{
	int e = spa_vdev_enter(spa, err, errlen), added = 0;
	if (e != 0)
		return (e);
	for (int i = 0; e == 0 && i < spec->nchildren; i++) {
		const char *path = spec->children[i]->path;
		vdev_t *nv = NULL;
		if (!spec->children[i]->cache)
			continue;
		e = spa_vdev_check_new(spa, path, 0, 0, force, err, errlen);
		if (e == 0)
			e = spa_vdev_open_new(path, 0, 0, &nv, err, errlen);
		if (e == 0 && (e = vdev_label_init(nv)) != 0) {
			vdev_free(nv);
			e = spa_vdev_fail(e, err, errlen, "cannot write to '%s'", path);
		}
		if (e != 0)
			break;
		vdev_tree_enter_write(spa->spa_root);
		if (vdev_l2cache(spa->spa_root) == NULL)
			vdev_set_l2cache(spa->spa_root, vdev_alloc(VDEV_TYPE_ROOT, 0));
		vdev_add_child(vdev_l2cache(spa->spa_root), nv);
		vdev_tree_exit(spa->spa_root);
		spa_l2cache_notify(spa, nv, true);
		added++;
	}
	return (spa_vdev_exit(spa, e, added > 0, err, errlen));
}

/* ---- removal ---- */

/* Take a cache or spare entry out of its list (tree write lock held). */
static void
spa_aux_remove(spa_t *spa, vdev_t *leaf, bool cache)
{
	vdev_t *list = vdev_parent(leaf);
	vdev_free(leaf);
	if (vdev_children(list) == 0) {
		if (cache)
			vdev_set_l2cache(spa->spa_root, NULL);
		else
			vdev_set_spares(spa->spa_root, NULL);
		vdev_free(list);
	}
}

/*
 * A log vdev leaves: no new log blocks go there; each sync frees the log
 * blocks whose records a committed txg holds, and deferred frees mature
 * TXG_DEFER_SIZE txgs later; so a few syncs empty it unless a file
 * system's live chain still has its next block there (it moves at its
 * next commit).  spa_vdev_lock held; it is dropped while syncing.
 */
static int
spa_log_drain(spa_t *spa, vdev_t *top, char *err, size_t errlen)
{
	metaslab_group_t *mg = vdev_ms_group(top);
	metaslab_space_t ms = { 0 };
	int e = 0;
	metaslab_group_set_passive(mg, true);
	for (int i = 0; i < 12 && e == 0; i++) {
		metaslab_group_space(mg, &ms);
		if (ms.ms_alloc + ms.ms_deferred == 0)
			return (0);
		/*
		 * A lost log device (import -m): the blocks on it that no
		 * chain could read stay allocated; give them up with it.
		 */
		if (vdev_is_dead_log(top) && i >= 4)
			return (0);
		/* the chains' open blocks: only a commit would move them */
		if (i % 4 == 0)
			spa_zil_release_all(spa);
		spa_vdev_rele(spa);
		e = txg_wait_synced(spa->spa_dp, 0);
		spa_vdev_hold(spa);
	}
	metaslab_group_set_passive(mg, false);
	if (e != 0)
		return (spa_vdev_fail(e, err, errlen, "cannot sync the pool: %s",
		    tarn_strerror(e)));
	return (spa_vdev_fail(SET_ERROR(EBUSY), err, errlen, "the log device still holds "
	    "intent-log blocks in use; sync the file systems and try again"));
}

/* MOS objects a removed vdev leaves behind: its metaslab array and space maps. */
typedef struct spa_gone_objs {
	uint64_t *sgo_obj;
	uint64_t  sgo_n;
} spa_gone_objs_t;

static void
spa_gone_objs_collect(spa_t *spa, vdev_t *top, spa_gone_objs_t *g)
{
	uint64_t n = vdev_ms_count(top);
	g->sgo_obj = tarn_alloc(sizeof (uint64_t) * (n + 1));
	g->sgo_n = 0;
	if (vdev_ms_array(top) == 0)
		return;
	if (n > 0 && dmu_read(spa->spa_mos, vdev_ms_array(top), 0, n * sizeof (uint64_t),
	    g->sgo_obj) != 0)
		n = 0;          /* unreadable: leave the maps (a leak, not damage) */
	for (uint64_t i = 0; i < n; i++)
		if (g->sgo_obj[i] != 0)
			g->sgo_obj[g->sgo_n++] = g->sgo_obj[i];
	g->sgo_obj[g->sgo_n++] = vdev_ms_array(top);
}

/*
 * Free them, once the labels no longer name the vdev (before that, an
 * import of the old config would need them).  Best effort: a failure
 * leaks a few MOS objects.
 */
static void
spa_gone_objs_free(spa_t *spa, spa_gone_objs_t *g)
{
	if (g->sgo_n > 0) {
		dmu_tx_t *tx = dmu_tx_create(spa->spa_mos);
		if (dmu_tx_assign(tx, TXG_WAIT) == 0) {
			for (uint64_t i = 0; i < g->sgo_n; i++)
				(void) dmu_object_free(spa->spa_mos, g->sgo_obj[i], tx);
			dmu_tx_commit(tx);
		} else {
			dmu_tx_abort(tx);
		}
	}
	tarn_free(g->sgo_obj);
	g->sgo_obj = NULL;
	g->sgo_n = 0;
}

static int
spa_remove_log(spa_t *spa, vdev_t *top, spa_gone_objs_t *gone, char *err, size_t errlen)
{
	vdev_t *root = spa->spa_root;
	int e = spa_log_drain(spa, top, err, errlen);
	if (e != 0)
		return (e);
	/* nothing of it is allocated: its group goes, its MOS objects after the labels */
	spa_gone_objs_collect(spa, top, gone);
	metaslab_group_destroy(vdev_ms_group(top));
	char *paths[VDEV_MAX_CHILDREN + 1];
	int n = 0;
	if (vdev_children(top) == 0)
		paths[n++] = tarn_strdup(vdev_path(top) ? vdev_path(top) : "");
	for (int c = 0; c < vdev_children(top); c++)
		paths[n++] = tarn_strdup(vdev_path(vdev_child(top, c)) ?
		    vdev_path(vdev_child(top, c)) : "");
	/*
	 * The last top-level vdev just goes; one with others after it leaves
	 * a hole, so that their ids (in every block address) stay.
	 */
	vdev_tree_enter_write(root);
	if (vdev_id(top) == (uint64_t)vdev_children(root) - 1)
		vdev_free(top);
	else
		(void) vdev_hole_insert(top);
	vdev_propagate_state(root);
	vdev_tree_exit(root);
	for (int i = 0; i < n; i++) {
		if (paths[i][0] != '\0')
			spa_vdev_forget(paths[i]);    /* closed: its labels go */
		tarn_free(paths[i]);
	}
	return (0);
}

/* A top-level vdev named as status shows it ("mirror-2"), or NULL. */
static vdev_t *
spa_top_named(spa_t *spa, const char *name)
{
	unsigned id;
	char tail;
	if (sscanf(name, "mirror-%u%c", &id, &tail) != 1 ||
	    id >= (unsigned)vdev_children(spa->spa_root))
		return (NULL);
	vdev_t *top = vdev_child(spa->spa_root, (int)id);
	return (vdev_type(top) == VDEV_TYPE_MIRROR ? top : NULL);
}

int
spa_vdev_remove(spa_t *spa, const char *name, char *err, size_t errlen)
{
	int e = spa_vdev_enter(spa, err, errlen);
	if (e != 0)
		return (e);
	vdev_t *leaf = spa_vdev_lookup(spa, name), *root = spa->spa_root;
	if (leaf == NULL)
		leaf = spa_top_named(spa, name);
	if (leaf == NULL)
		return (spa_vdev_exit(spa, spa_vdev_fail(SET_ERROR(ENOENT), err, errlen,
		    "no such device in pool"), false, err, errlen));
	bool cache = vdev_parent(leaf) == vdev_l2cache(root);
	bool spare = vdev_parent(leaf) == vdev_spares(root);
	if (cache || spare) {
		if (spare && spa_spare_in_use(spa, leaf))
			return (spa_vdev_exit(spa, spa_vdev_fail(SET_ERROR(EBUSY), err, errlen,
			    "hot spare '%s' is in use; detach it first", name), false, err,
			    errlen));
		char *path = vdev_path(leaf) ? tarn_strdup(vdev_path(leaf)) : NULL;
		if (cache)
			spa_l2cache_notify(spa, leaf, false);
		vdev_tree_enter_write(root);
		spa_aux_remove(spa, leaf, cache);
		vdev_tree_exit(root);
		spa_vdev_forget(path);
		tarn_free(path);
		return (spa_vdev_exit(spa, 0, true, err, errlen));
	}
	vdev_t *top = vdev_top(leaf);
	vdev_alloc_bias_t bias = vdev_alloc_bias(top);
	spa_gone_objs_t gone = { NULL, 0 };
	if (bias == VDEV_BIAS_SPECIAL)
		e = spa_vdev_fail(SET_ERROR(ENOTSUP), err, errlen, "special vdevs cannot be "
		    "removed (no device removal for vdevs that hold data)");
	else if (bias == VDEV_BIAS_NORMAL)
		e = spa_vdev_fail(SET_ERROR(ENOTSUP), err, errlen, "only log, cache and hot "
		    "spare devices can be removed (no device removal for data vdevs)");
	else if (top != leaf && vdev_ops(leaf)->vop_leaf)
		e = spa_vdev_fail(SET_ERROR(ENOTSUP), err, errlen, "'%s' is part of log vdev "
		    "%s-%" PRIu64 ": detach it, or remove the whole vdev by that name", name,
		    vdev_type_name(top), vdev_id(top));
	else
		e = spa_remove_log(spa, top, &gone, err, errlen);
	e = spa_vdev_exit(spa, e, e == 0, err, errlen);
	if (e == 0)
		spa_gone_objs_free(spa, &gone);
	tarn_free(gone.sgo_obj);
	return (e);
}
