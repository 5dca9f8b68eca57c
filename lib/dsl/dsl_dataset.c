/*
 * dsl_dataset.c — the tree of datasets: create, destroy, rename, walk.
 * Properties are in dsl_prop.c, names in dsl_name.c, space in dsl_space.c.
 *
 * Theory.  A dataset is a MOS object: a ZAP (type DSL_DIR) whose entries
 * are its locally set properties, with a 128-byte bonus
 * (dsl_dataset_phys_t) naming its parent, its child table (another MOS
 * ZAP: component name -> dataset object) and its creation time.  The pool
 * directory entry "dsl:root" names the root dataset, which carries the
 * pool's name; a dataset's full name is the path of component names from
 * the root, so a rename only moves one entry between two child tables.
 * Each dataset's data lives in an object set registered with the pool
 * under the key "ds<object number>" (spa_objset_create/open), which does
 * not change when the dataset is renamed; the pool writes its root block
 * pointer at every sync.
 *
 * Every change is a MOS transaction followed by a wait for its txg to be
 * on disk, so that a command that returns has made its change durable.
 * A crash between creating a dataset object and its object set leaves a
 * dataset without one; dsl_os_get() creates the missing object set.
 */
#include "dsl_impl.h"
#include "tarn_array.h"

#include <stdarg.h>

/* ---- MOS helpers ---- */

int
dsl_tx_begin(dsl_pool_t *dp, bool netfree, dmu_tx_t **txp)
{
	dmu_tx_t *tx = dmu_tx_create(dp->dp_mos);
	dmu_tx_hold_space(tx, 256 * KiB);
	if (netfree)
		dmu_tx_mark_netfree(tx);
	int e = dmu_tx_assign(tx, TXG_WAIT);
	if (e != 0) {
		dmu_tx_abort(tx);
		return (e);
	}
	*txp = tx;
	return (0);
}

int
dsl_tx_end(dsl_pool_t *dp, dmu_tx_t *tx)
{
	uint64_t txg = dmu_tx_get_txg(tx);
	dmu_tx_commit(tx);
	return (txg_wait_synced(spa_dmu_pool(dp->dp_spa), txg));
}

int
dsl_writable(const dsl_pool_t *dp, char *err, size_t errlen)
{
	if (!dsl_readonly(dp))
		return (0);
	if (err != NULL)
		(void) snprintf(err, errlen, "pool is read-only");
	return (SET_ERROR(EROFS));
}

void
dsl_history(dsl_pool_t *dp, uint64_t txg, const char *op, const char *name, uint64_t obj,
    const char *fmt, ...)
{
	char extra[256] = "";
	if (fmt != NULL) {
		va_list ap;
		va_start(ap, fmt);
		(void) vsnprintf(extra, sizeof (extra), fmt, ap);
		va_end(ap);
	}
	/* zpool history -i's words: "create tank/a (5) " */
	(void) spa_history_log_internal(dp->dp_spa, txg, "%s %s (%" PRIu64 ") %s", op, name,
	    obj, extra);
}

int
dsl_phys_read(dsl_pool_t *dp, uint64_t obj, dsl_dataset_phys_t *phys)
{
	return (dmu_bonus_read(dp->dp_mos, obj, phys, sizeof (*phys)));
}

void
dsl_os_key(uint64_t obj, char *buf, size_t len)
{
	(void) snprintf(buf, len, DSL_OS_PREFIX "%" PRIu64, obj);
}

/* Make a dataset object (and link it under parent) in tx. */
int
dsl_obj_create(dsl_pool_t *dp, uint64_t parent, const char *component, dmu_tx_t *tx,
    uint64_t *objp)
{
	uint64_t obj, child;
	int e = zap_create_bonus(dp->dp_mos, DMU_OT_DSL_DIR, DMU_OT_DSL_DIR,
	    sizeof (dsl_dataset_phys_t), tx, &obj);
	if (e == 0)
		e = zap_create(dp->dp_mos, DMU_OT_ZAP, tx, &child);
	if (e != 0)
		return (e);
	dsl_dataset_phys_t phys;
	memset(&phys, 0, sizeof (phys));
	phys.dd_parent_obj = parent;
	phys.dd_child_zap = child;
	phys.dd_creation = tarn_wall_sec();
	phys.dd_type = DSL_TYPE_FILESYSTEM;
	phys.dd_create_txg = dmu_tx_get_txg(tx);
	phys.dd_guid = tarn_guid();
	e = dmu_bonus_write(dp->dp_mos, obj, &phys, sizeof (phys), tx);
	if (e == 0 && parent != 0) {
		dsl_dataset_phys_t pp;
		e = dsl_phys_read(dp, parent, &pp);
		if (e == 0)
			e = zap_add_int(dp->dp_mos, pp.dd_child_zap, component, obj, tx);
	}
	if (e == 0)
		*objp = obj;
	return (e);
}

/*
 * The object set of dataset obj, created (and given to the init
 * function) when it does not exist yet.
 */
/*
 * Serializes opening object sets across every dsl_pool_t: readers sharing
 * a pool in the daemon would otherwise register the same object set twice
 * (spa_objset_open looks up, then opens and registers).
 */
static pthread_mutex_t dsl_os_lock = PTHREAD_MUTEX_INITIALIZER;

bool
dsl_readonly(const dsl_pool_t *dp)
{
	return (dp->dp_reader || spa_readonly(dp->dp_spa));
}

int
dsl_os_get(dsl_pool_t *dp, uint64_t obj, objset_t **osp)
{
	char key[32];
	dsl_os_key(obj, key, sizeof (key));
	tarn_mutex_lock(&dsl_os_lock, DSL_OS);
	int e = spa_objset_open(dp->dp_spa, key, osp);
	tarn_mutex_unlock(&dsl_os_lock);
	if (e != ENOENT || dsl_readonly(dp))
		return (e);
	tarn_mutex_lock(&dsl_os_lock, DSL_OS);
	e = spa_objset_create(dp->dp_spa, key, DMU_OST_ZFS, osp);
	tarn_mutex_unlock(&dsl_os_lock);
	if (e == 0 && dp->dp_init_fn != NULL)
		e = dp->dp_init_fn(dp->dp_init_arg, *osp);
	if (e == 0)
		e = txg_wait_synced(spa_dmu_pool(dp->dp_spa), 0);
	return (e);
}

/* ---- the pool ---- */

int
dsl_pool_open(spa_t *spa, dsl_fs_init_fn_t init_fn, void *init_arg, dsl_pool_t **dpp)
{
	dsl_pool_t *dp = tarn_alloc(sizeof (*dp));
	dp->dp_spa = spa;
	dp->dp_mos = spa_meta_objset(spa);
	dp->dp_init_fn = init_fn;
	dp->dp_init_arg = init_arg;
	tarn_array_init(&dp->dp_snap_sums, sizeof (dsl_snap_sum_t));
	pthread_mutex_init(&dp->dp_lock, NULL);
	dsl_snap_hooks_install(spa);
	int e = spa_dir_lookup(spa, DSL_DIR_ROOT, &dp->dp_root_obj);
	if (e == ENOENT && !spa_readonly(spa)) {
		dmu_tx_t *tx;
		e = dsl_tx_begin(dp, false, &tx);
		if (e == 0) {
			e = dsl_obj_create(dp, 0, NULL, tx, &dp->dp_root_obj);
			if (e == 0)
				e = spa_dir_add(spa, DSL_DIR_ROOT, dp->dp_root_obj, tx);
			int e2 = dsl_tx_end(dp, tx);
			e = e ? e : e2;
		}
		objset_t *os;
		if (e == 0)
			e = dsl_os_get(dp, dp->dp_root_obj, &os);
	}
	if (e != 0) {
		dsl_pool_close(dp);
		return (e);
	}
	*dpp = dp;
	return (0);
}

int
dsl_pool_open_reader(spa_t *spa, dsl_pool_t **dpp)
{
	dsl_pool_t *dp = tarn_alloc(sizeof (*dp));
	dp->dp_spa = spa;
	dp->dp_mos = spa_meta_objset(spa);
	dp->dp_reader = true;
	tarn_array_init(&dp->dp_snap_sums, sizeof (dsl_snap_sum_t));
	pthread_mutex_init(&dp->dp_lock, NULL);
	dsl_snap_hooks_install(spa);
	int e = spa_dir_lookup(spa, DSL_DIR_ROOT, &dp->dp_root_obj);
	if (e != 0) {
		dsl_pool_close(dp);
		return (e);
	}
	*dpp = dp;
	return (0);
}

void
dsl_pool_close(dsl_pool_t *dp)
{
	if (dp == NULL)
		return;
	dsl_space_fini(dp);
	tarn_array_fini(&dp->dp_snap_sums);
	pthread_mutex_destroy(&dp->dp_lock);
	tarn_free(dp);
}

void
dsl_pool_set_busy_fn(dsl_pool_t *dp, dsl_busy_fn_t fn, void *arg)
{
	dp->dp_busy_fn = fn;
	dp->dp_busy_arg = arg;
}

void
dsl_pool_set_mounted_fn(dsl_pool_t *dp, dsl_mounted_fn_t fn, void *arg)
{
	dp->dp_mounted_fn = fn;
	dp->dp_mounted_arg = arg;
}

spa_t *
dsl_pool_spa(dsl_pool_t *dp)
{
	return (dp->dp_spa);
}

/* ---- names to objects ---- */

/*
 * The dataset object of name.  ENOENT "dataset does not exist" (also for
 * another pool's name).
 */
int
dsl_lookup(dsl_pool_t *dp, const char *name, uint64_t *objp, char *err, size_t errlen)
{
	const char *pool = spa_name(dp->dp_spa);
	size_t pl = strlen(pool);
	if (strncmp(name, pool, pl) != 0 || (name[pl] != '\0' && name[pl] != '/'))
		goto noent;
	uint64_t obj = dp->dp_root_obj;
	const char *p = name + pl;
	while (*p == '/') {
		p++;
		const char *end = strchr(p, '/');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char comp[ZAP_MAXNAMELEN];
		if (n == 0 || n >= sizeof (comp))
			goto noent;
		memcpy(comp, p, n);
		comp[n] = '\0';
		dsl_dataset_phys_t phys;
		int e = dsl_phys_read(dp, obj, &phys);
		if (e == 0)
			e = zap_lookup_int(dp->dp_mos, phys.dd_child_zap, comp, &obj);
		if (e == ENOENT)
			goto noent;
		if (e != 0)
			return (e);
		p += n;
	}
	*objp = obj;
	return (0);
noent:
	if (err != NULL)
		(void) snprintf(err, errlen, "dataset does not exist");
	return (SET_ERROR(ENOENT));
}

bool
dsl_dataset_exists(dsl_pool_t *dp, const char *name)
{
	uint64_t obj;
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	bool ok = dsl_lookup(dp, name, &obj, NULL, 0) == 0;
	tarn_mutex_unlock(&dp->dp_lock);
	return (ok);
}

int
dsl_dataset_oskey(dsl_pool_t *dp, const char *name, char *key, size_t len)
{
	uint64_t obj;
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	int e = dsl_lookup(dp, name, &obj, NULL, 0);
	tarn_mutex_unlock(&dp->dp_lock);
	if (e == 0)
		dsl_os_key(obj, key, len);
	return (e);
}

/* The component name parent's child table gives obj (lock held). */
static int
dsl_child_name(dsl_pool_t *dp, uint64_t parent, uint64_t obj, char *out, size_t len)
{
	dsl_dataset_phys_t phys;
	int e = dsl_phys_read(dp, parent, &phys);
	if (e != 0)
		return (e);
	return (zap_value_search(dp->dp_mos, phys.dd_child_zap, obj, 0, out, len));
}

int
dsl_dataset_key_name(dsl_pool_t *dp, const char *key, char *name, size_t len)
{
	size_t pl = strlen(DSL_OS_PREFIX);
	char *end;
	if (strncmp(key, DSL_OS_PREFIX, pl) != 0 || key[pl] < '0' || key[pl] > '9')
		return (SET_ERROR(ENOENT));
	uint64_t obj = strtoull(key + pl, &end, 10);
	if (*end != '\0')
		return (SET_ERROR(ENOENT));
	char *tail = tarn_alloc(len), *comp = tarn_alloc(ZAP_MAXNAMELEN);
	int e = 0;
	tail[0] = '\0';
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	dsl_snap_phys_t sp;
	if (dsl_snap_read(dp->dp_mos, obj, &sp) == 0) {        /* a snapshot: "@name" */
		dsl_dataset_phys_t hd;
		if ((e = dsl_phys_read(dp, sp.ds_head_obj, &hd)) == 0 &&
		    (e = zap_value_search(dp->dp_mos, hd.dd_snap_zap, obj, 0, comp,
		    ZAP_MAXNAMELEN)) == 0)
			(void) snprintf(tail, len, "@%s", comp);
		obj = sp.ds_head_obj;
	}
	for (int depth = 0; e == 0; depth++) {
		dsl_dataset_phys_t phys;
		if (depth > DSL_NAME_MAX || (e = dsl_phys_read(dp, obj, &phys)) != 0)
			break;
		if (phys.dd_parent_obj == 0) {          /* the root: the pool's name */
			(void) snprintf(name, len, "%s%s", spa_name(dp->dp_spa), tail);
			break;
		}
		if ((e = dsl_child_name(dp, phys.dd_parent_obj, obj, comp, ZAP_MAXNAMELEN)) != 0 ||
		    (e = tarn_path_prepend(tail, len, comp, name)) != 0)
			break;
		obj = phys.dd_parent_obj;
	}
	tarn_mutex_unlock(&dp->dp_lock);
	tarn_free(tail);
	tarn_free(comp);
	return (e == 0 ? 0 : SET_ERROR(ENOENT));
}

/* Split "a/b/c" into parent "a/b" and the last component "c". */
static void
dsl_split(const char *name, char *parent, size_t plen, const char **last)
{
	const char *slash = strrchr(name, '/');
	size_t n = slash ? (size_t)(slash - name) : 0;
	(void) snprintf(parent, plen, "%.*s", (int)n, name);
	*last = slash ? slash + 1 : name;
}

int
dsl_dataset_objset(dsl_pool_t *dp, const char *name, objset_t **osp)
{
	uint64_t obj;
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	int e = dsl_lookup(dp, name, &obj, NULL, 0);
	if (e == 0)
		e = dsl_os_get(dp, obj, osp);
	if (e == 0)
		dsl_prop_apply(dp, name, *osp);
	tarn_mutex_unlock(&dp->dp_lock);
	return (e);
}

/* ---- children ---- */

static int
dsl_child_cmp(const void *a, const void *b)
{
	return (strcmp(((const dsl_child_t *)a)->dc_name, ((const dsl_child_t *)b)->dc_name));
}

int
dsl_children(dsl_pool_t *dp, uint64_t obj, dsl_child_t **kidsp, int *np)
{
	dsl_dataset_phys_t phys;
	int e = dsl_phys_read(dp, obj, &phys);
	if (e != 0)
		return (e);
	tarn_array_t kids = TARN_ARRAY_INIT(dsl_child_t);
	zap_cursor_t zc;
	zap_attribute_t za;
	zap_cursor_init(&zc, dp->dp_mos, phys.dd_child_zap, 0);
	while ((e = zap_cursor_retrieve(&zc, &za)) == 0) {
		dsl_child_t *k = tarn_array_push(&kids);
		(void) snprintf(k->dc_name, sizeof (k->dc_name), "%s", za.za_name);
		k->dc_obj = za.za_first_integer;
		zap_cursor_advance(&zc);
	}
	zap_cursor_fini(&zc);
	if (e != ENOENT) {
		tarn_array_fini(&kids);
		return (e);
	}
	tarn_array_sort(&kids, dsl_child_cmp);
	size_t n;
	*kidsp = tarn_array_steal(&kids, &n);
	*np = (int)n;
	return (0);
}

static int
dsl_iter_impl(dsl_pool_t *dp, uint64_t obj, const char *name, int depth, int maxdepth,
    dsl_iter_fn_t fn, void *arg)
{
	int e = fn(arg, name, depth);
	if (e != 0 || (maxdepth >= 0 && depth >= maxdepth))
		return (e);
	dsl_child_t *kids;
	int n;
	if ((e = dsl_children(dp, obj, &kids, &n)) != 0)
		return (e);
	char *cname = tarn_alloc(DSL_NAME_MAX + ZAP_MAXNAMELEN);
	for (int i = 0; i < n && e == 0; i++) {
		/* a receive's work in progress is nobody's business (dsl_recv.c) */
		dsl_dataset_phys_t kd;
		if (strchr(kids[i].dc_name, '%') != NULL ||
		    (dsl_phys_read(dp, kids[i].dc_obj, &kd) == 0 &&
		    (kd.dd_flags & DSL_DD_F_INCONSISTENT)))
			continue;
		(void) snprintf(cname, DSL_NAME_MAX + ZAP_MAXNAMELEN, "%s/%s", name,
		    kids[i].dc_name);
		e = dsl_iter_impl(dp, kids[i].dc_obj, cname, depth + 1, maxdepth, fn, arg);
	}
	tarn_free(cname);
	tarn_free(kids);
	return (e);
}

/*
 * The callback runs without the lock held (it may call dsl_prop_get and
 * friends); the tree is read again below each visited dataset.
 */
int
dsl_dataset_iter(dsl_pool_t *dp, const char *name, int maxdepth, dsl_iter_fn_t fn, void *arg)
{
	uint64_t obj;
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	int e = dsl_lookup(dp, name, &obj, NULL, 0);
	tarn_mutex_unlock(&dp->dp_lock);
	if (e != 0)
		return (e);
	return (dsl_iter_impl(dp, obj, name, 0, maxdepth, fn, arg));
}

/* ---- create ---- */

/*
 * The creation-time properties (utf8only, ...) that -o did not give: the
 * parent's, kept on the new dataset, since they can never change there.
 */
static int
dsl_create_once_props(dsl_pool_t *dp, const char *parent, uint64_t obj,
    const dsl_prop_setting_t *props, int nprops, dmu_tx_t *tx)
{
	int e = 0;
	for (int p = 0; p < DSL_NUM_PROPS && e == 0; p++) {
		if (!dsl_prop_once(p))
			continue;
		bool given = false;
		for (int i = 0; i < nprops; i++)
			given |= dsl_prop_lookup(props[i].dps_name) == p;
		uint64_t pobj, v;
		if (given || dsl_lookup(dp, parent, &pobj, NULL, 0) != 0 ||
		    dsl_prop_local(dp, pobj, p, &v, NULL, 0) != 0)
			continue;
		e = dsl_prop_store(dp, obj, p, v, NULL, tx);
	}
	return (e);
}

/* The dataset object of name and its -o properties, in tx (open or syncing). */
int
dsl_create_obj_tx(dsl_pool_t *dp, const char *name, const dsl_prop_setting_t *props,
    int nprops, dmu_tx_t *tx, uint64_t *objp, char *err, size_t errlen)
{
	char parent[DSL_NAME_MAX];
	const char *last;
	uint64_t pobj, obj;
	dsl_split(name, parent, sizeof (parent), &last);
	int e = dsl_lookup(dp, parent, &pobj, NULL, 0);
	if (e == ENOENT)
		(void) snprintf(err, errlen, "parent does not exist");
	if (e == 0)
		e = dsl_obj_create(dp, pobj, last, tx, &obj);
	for (int i = 0; i < nprops && e == 0; i++) {
		int prop = dsl_prop_lookup(props[i].dps_name);
		uint64_t num;
		char str[DSL_MOUNTPOINT_MAX];
		if (prop < 0) {         /* a user property (checked) */
			e = dsl_prop_user_store(dp, obj, props[i].dps_name, props[i].dps_value, tx);
			continue;
		}
		e = dsl_prop_parse(prop, props[i].dps_value, &num, str, sizeof (str), err, errlen);
		if (e == 0)
			e = dsl_prop_store(dp, obj, prop, num, str, tx);
	}
	if (e == 0)
		e = dsl_create_once_props(dp, parent, obj, props, nprops, tx);
	if (e == 0)
		*objp = obj;
	return (e);
}

static int
dsl_create_one(dsl_pool_t *dp, const char *name, const dsl_prop_setting_t *props,
    int nprops, char *err, size_t errlen)
{
	char parent[DSL_NAME_MAX];
	const char *last;
	uint64_t pobj, obj;
	dsl_split(name, parent, sizeof (parent), &last);
	int e = dsl_lookup(dp, parent, &pobj, NULL, 0);
	if (e == ENOENT) {
		(void) snprintf(err, errlen, "parent does not exist");
		return (e);
	}
	dmu_tx_t *tx;
	if (e == 0)
		e = dsl_tx_begin(dp, false, &tx);
	if (e != 0)
		return (e);
	e = dsl_create_obj_tx(dp, name, props, nprops, tx, &obj, err, errlen);
	uint64_t txg = dmu_tx_get_txg(tx);
	int e2 = dsl_tx_end(dp, tx);
	e = e ? e : e2;
	if (e == 0)
		dsl_history(dp, txg, "create", name, obj, NULL);
	objset_t *os;
	if (e == 0)
		e = dsl_os_get(dp, obj, &os);
	return (e);
}

/* Check the name and the -o list before anything is written. */
int
dsl_create_check(dsl_pool_t *dp, const char *name, const dsl_prop_setting_t *props,
    int nprops, char *err, size_t errlen)
{
	int e = dsl_name_validate(name, err, errlen);
	if (e != 0)
		return (e);
	const char *pool = spa_name(dp->dp_spa);
	size_t pl = strlen(pool);
	if (strncmp(name, pool, pl) != 0 || (name[pl] != '\0' && name[pl] != '/')) {
		(void) snprintf(err, errlen, "no such pool '%.*s'", (int)strcspn(name, "/"), name);
		return (SET_ERROR(ENOENT));
	}
	if (strchr(name, '/') == NULL) {
		(void) snprintf(err, errlen, "missing dataset name");
		return (SET_ERROR(EINVAL));
	}
	for (int i = 0; i < nprops; i++) {
		int prop = dsl_prop_lookup(props[i].dps_name);
		if (prop < 0 && dsl_prop_user_name(props[i].dps_name)) {
			e = dsl_prop_user_check(props[i].dps_name, props[i].dps_value, err, errlen);
			if (e != 0)
				return (e);
			continue;
		}
		if (prop < 0) {
			(void) snprintf(err, errlen, "invalid property '%s'", props[i].dps_name);
			return (SET_ERROR(EINVAL));
		}
		uint64_t num;
		char str[DSL_MOUNTPOINT_MAX];
		e = dsl_prop_parse(prop, props[i].dps_value, &num, str, sizeof (str), err, errlen);
		if (e == 0)
			e = dsl_prop_pool_check(dp, prop, num, err, errlen);
		if (e != 0)
			return (e);
	}
	return (0);
}

int
dsl_dataset_create(dsl_pool_t *dp, const char *name, bool parents,
    const dsl_prop_setting_t *props, int nprops, char *err, size_t errlen)
{
	err[0] = '\0';
	int e = dsl_create_check(dp, name, props, nprops, err, errlen);
	if (e != 0)
		return (e);
	if ((e = dsl_writable(dp, err, errlen)) != 0)
		return (e);
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	e = dsl_create_parents(dp, name, parents, err, errlen);
	if (e == 0)
		e = dsl_create_one(dp, name, props, nprops, err, errlen);
	tarn_mutex_unlock(&dp->dp_lock);
	return (e);
}

/*
 * Before creating name (lock held): EEXIST if it exists; with parents
 * (-p) make each missing ancestor, top-down, with no properties.
 */
int
dsl_create_parents(dsl_pool_t *dp, const char *name, bool parents, char *err, size_t errlen)
{
	uint64_t obj;
	int e = 0;
	if (dsl_lookup(dp, name, &obj, NULL, 0) == 0) {
		(void) snprintf(err, errlen, "dataset already exists");
		e = SET_ERROR(EEXIST);
	}
	char *anc = tarn_strdup(name);
	for (char *s = strchr(anc + strlen(spa_name(dp->dp_spa)) + 1, '/');
	    e == 0 && parents && s != NULL; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (dsl_lookup(dp, anc, &obj, NULL, 0) != 0)
			e = dsl_create_one(dp, anc, NULL, 0, err, errlen);
		*s = '/';
	}
	tarn_free(anc);
	return (e);
}

/* ---- destroy ---- */


typedef struct dsl_free_task {
	dsl_pool_t *dp;
	uint64_t obj;
	zio_ctx_t *zc;
	uint64_t txg;
	blkptr_t root;
} dsl_free_task_t;

static int
dsl_free_cb(void *arg, objset_t *os, uint64_t obj, const blkptr_t *bp, uint64_t blkid)
{
	dsl_free_task_t *f = arg;
	if (!BP_IS_HOLE(bp) && !bp_equal(bp, &f->root))
		zio_free(f->zc, bp, f->txg);
	return (0);
}

/*
 * Syncing context: free what a dataset's tree holds of its own — the
 * blocks born after its newest snapshot or its origin (all of them
 * without either) — found by one walk that skips every older subtree, so
 * it costs what is freed, not a transaction per object (a file system
 * of a million files, a receive's work dataset after its commit, which
 * holds the target's old tree).  The root block goes with the object set.
 */
static int
dsl_free_sync(void *arg, dmu_tx_t *tx)
{
	dsl_free_task_t *f = arg;
	dsl_pool_t *dp = f->dp;
	dmu_pool_t *pool = spa_dmu_pool(dp->dp_spa);
	dsl_dataset_phys_t dd;
	char key[32];
	dsl_os_key(f->obj, key, sizeof (key));
	int e = dsl_phys_read(dp, f->obj, &dd);
	if (e == 0)
		e = spa_objset_root(dp->dp_spa, key, &f->root);
	if (e == ENOENT)
		return (0);             /* never synced: nothing of its own on disk */
	if (e != 0 || BP_IS_HOLE(&f->root))
		return (e);
	f->zc = dmu_pool_zio(pool);
	f->txg = dmu_tx_get_txg(tx);
	dmu_objset_props_t p = { .osp_checksum = ZIO_CHECKSUM_DEFAULT,
		.osp_compress = ZIO_COMPRESS_OFF, .osp_copies = 1 };
	objset_t *os;
	uint64_t errors = 0;
	e = dmu_objset_open(pool, &f->root, &p, &os);
	if (e == 0) {
		e = dmu_traverse(os, 0, 0, dd.dd_prev_snap_txg + 1, dsl_free_cb, f, &errors);
		dmu_objset_close(os);
	}
	return (e == 0 && errors != 0 ? SET_ERROR(EIO) : e);
}

/* Destroy one childless dataset without snapshots (lock held). */
int
dsl_destroy_one(dsl_pool_t *dp, uint64_t obj, const char *name)
{
	dsl_dataset_phys_t phys, pphys;
	int e = dsl_phys_read(dp, obj, &phys);
	if (e == 0)
		e = dsl_phys_read(dp, phys.dd_parent_obj, &pphys);
	if (e != 0)
		return (e);
	char key[32];
	dsl_os_key(obj, key, sizeof (key));
	e = txg_wait_synced(spa_dmu_pool(dp->dp_spa), 0);
	if (e == 0 && (e = spa_objset_evict(dp->dp_spa, key)) == ENOENT)
		e = 0;
	if (e == 0) {
		dsl_free_task_t f = { .dp = dp, .obj = obj };
		e = spa_sync_task(dp->dp_spa, dsl_free_sync, &f);
	}
	if (e == 0)
		e = spa_objset_destroy(dp->dp_spa, key);
	if (e != 0 && e != ENOENT)
		return (e);
	const char *last = strrchr(name, '/') + 1;
	dmu_tx_t *tx;
	if ((e = dsl_tx_begin(dp, true, &tx)) != 0)
		return (e);
	e = zap_remove(dp->dp_mos, pphys.dd_child_zap, last, tx);
	if (e == 0)
		e = dsl_head_destroy_tx(dp, obj, tx);
	if (e == 0)
		e = zap_destroy(dp->dp_mos, phys.dd_child_zap, tx);
	if (e == 0)
		e = zap_destroy(dp->dp_mos, obj, tx);
	uint64_t txg = dmu_tx_get_txg(tx);
	int e2 = dsl_tx_end(dp, tx);
	e = e ? e : e2;
	if (e == 0)
		dsl_history(dp, txg, "destroy", name, obj, NULL);
	if (e == 0)
		e = dsl_snap_destroy_deferred_locked(dp, phys.dd_origin_obj);
	return (e);
}

/*
 * Check (check: ask the busy callback) or destroy (deepest first) the
 * subtree of obj; with self false, only what is below obj.
 */
static int
dsl_destroy_tree(dsl_pool_t *dp, uint64_t obj, const char *name, bool self, bool check,
    char *err, size_t errlen)
{
	int e = 0;
	if (self && check && dsl_recv_is_active(dp->dp_spa, obj)) {
		(void) snprintf(err, errlen, "dataset is busy");
		e = SET_ERROR(EBUSY);
	}
	if (e == 0 && self && check && dp->dp_busy_fn != NULL)
		e = dp->dp_busy_fn(dp->dp_busy_arg, name, err, errlen);
	dsl_child_t *kids;
	int n;
	if (e != 0 || (e = dsl_children(dp, obj, &kids, &n)) != 0)
		return (e);
	char *cname = tarn_alloc(DSL_NAME_MAX + ZAP_MAXNAMELEN);
	for (int i = 0; i < n && e == 0; i++) {
		(void) snprintf(cname, DSL_NAME_MAX + ZAP_MAXNAMELEN, "%s/%s", name,
		    kids[i].dc_name);
		e = dsl_destroy_tree(dp, kids[i].dc_obj, cname, true, check, err, errlen);
	}
	tarn_free(cname);
	tarn_free(kids);
	if (e == 0 && self)
		e = dsl_snap_destroy_head_locked(dp, obj, check, err, errlen);
	if (e == 0 && self && !check)
		e = dsl_destroy_one(dp, obj, name);
	return (e);
}

int
dsl_dataset_destroy(dsl_pool_t *dp, const char *name, bool recursive, char *err,
    size_t errlen)
{
	err[0] = '\0';
	int e = dsl_name_validate(name, err, errlen);
	if (e != 0)
		return (e);
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	uint64_t obj;
	e = dsl_lookup(dp, name, &obj, err, errlen);
	/* zfs destroy -r POOL destroys every dataset below the pool's root */
	bool root = e == 0 && obj == dp->dp_root_obj;
	if (root && !recursive) {
		(void) snprintf(err, errlen, "operation does not apply to pools; use "
		    "'zfs destroy -r %s' to destroy all datasets in the pool or "
		    "'zpool destroy %s' to destroy the pool itself", name, name);
		e = SET_ERROR(EINVAL);
	}
	dsl_child_t *kids = NULL;
	int n = 0;
	if (e == 0)
		e = dsl_children(dp, obj, &kids, &n);
	tarn_free(kids);
	dsl_dataset_phys_t dd;
	if (e == 0 && n == 0 && (e = dsl_phys_read(dp, obj, &dd)) == 0 && dd.dd_prev_snap_obj != 0)
		n = 1;                  /* snapshots are children too */
	if (e == 0 && n > 0 && !recursive) {
		(void) snprintf(err, errlen, "filesystem has children; use -r");
		e = SET_ERROR(EEXIST);
	}
	if (e == 0)
		e = dsl_writable(dp, err, errlen);
	/* as zfs: -r takes partial receives (FS/%recv, saved or not) with it */
	if (e == 0 && recursive)
		dsl_recv_destroy_below_locked(dp, obj, name);
	if (e == 0)
		e = dsl_destroy_tree(dp, obj, name, !root, true, err, errlen);
	if (e == 0)
		e = dsl_destroy_tree(dp, obj, name, !root, false, err, errlen);
	tarn_mutex_unlock(&dp->dp_lock);
	return (e);
}

/* ---- rename ---- */

static int
dsl_rename_check(dsl_pool_t *dp, const char *oldname, const char *newname, char *err,
    size_t errlen)
{
	const char *pool = spa_name(dp->dp_spa);
	size_t pl = strlen(pool);
	if (strncmp(newname, pool, pl) != 0 || newname[pl] != '/') {
		(void) snprintf(err, errlen, "datasets must be within same pool");
		return (SET_ERROR(EXDEV));
	}
	size_t ol = strlen(oldname);
	if (strncmp(newname, oldname, ol) == 0 && newname[ol] == '/') {
		(void) snprintf(err, errlen,
		    "new dataset name cannot be a descendant of current dataset name");
		return (SET_ERROR(EINVAL));
	}
	return (0);
}

int
dsl_dataset_rename(dsl_pool_t *dp, const char *oldname, const char *newname, bool parents,
    char *err, size_t errlen)
{
	err[0] = '\0';
	int e = dsl_name_validate(oldname, err, errlen);
	if (e == 0)
		e = dsl_name_validate(newname, err, errlen);
	if (e != 0)
		return (e);
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	uint64_t obj, nobj, npobj;
	e = dsl_lookup(dp, oldname, &obj, err, errlen);
	if (e == 0 && obj == dp->dp_root_obj) {
		(void) snprintf(err, errlen, "operation does not apply to pools");
		e = SET_ERROR(EINVAL);
	}
	if (e == 0)
		e = dsl_writable(dp, err, errlen);
	if (e == 0)
		e = dsl_rename_check(dp, oldname, newname, err, errlen);
	if (e == 0 && dsl_lookup(dp, newname, &nobj, NULL, 0) == 0) {
		(void) snprintf(err, errlen, "dataset already exists");
		e = SET_ERROR(EEXIST);
	}
	char nparent[DSL_NAME_MAX];
	const char *nlast;
	dsl_split(newname, nparent, sizeof (nparent), &nlast);
	if (e == 0 && dsl_lookup(dp, nparent, &npobj, NULL, 0) != 0) {
		if (parents) {
			tarn_mutex_unlock(&dp->dp_lock);
			e = dsl_dataset_create(dp, nparent, true, NULL, 0, err, errlen);
			tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
			if (e == 0)
				e = dsl_lookup(dp, nparent, &npobj, err, errlen);
		} else {
			(void) snprintf(err, errlen, "parent does not exist");
			e = SET_ERROR(ENOENT);
		}
	}
	dsl_dataset_phys_t phys, op, np;
	if (e == 0)
		e = dsl_phys_read(dp, obj, &phys);
	if (e == 0)
		e = dsl_phys_read(dp, phys.dd_parent_obj, &op);
	if (e == 0)
		e = dsl_phys_read(dp, npobj, &np);
	dmu_tx_t *tx;
	if (e == 0 && (e = dsl_tx_begin(dp, false, &tx)) == 0) {
		e = zap_remove(dp->dp_mos, op.dd_child_zap, strrchr(oldname, '/') + 1, tx);
		if (e == 0)
			e = zap_add_int(dp->dp_mos, np.dd_child_zap, nlast, obj, tx);
		phys.dd_parent_obj = npobj;
		if (e == 0)
			e = dmu_bonus_write(dp->dp_mos, obj, &phys, sizeof (phys), tx);
		uint64_t txg = dmu_tx_get_txg(tx);
		int e2 = dsl_tx_end(dp, tx);
		e = e ? e : e2;
		if (e == 0)
			dsl_history(dp, txg, "rename", oldname, obj, "-> %s", newname);
	}
	tarn_mutex_unlock(&dp->dp_lock);
	return (e);
}

