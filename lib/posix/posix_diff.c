/*
 * posix_diff.c — what changed in a file system between two of its states
 * (zfs diff): an older snapshot's object set and a later one's (a later
 * snapshot of the same file system, a clone of it, or the live file
 * system as of its last txg sync).
 *
 * Theory.  Copy on write makes the changed objects cheap to find: every
 * block pointer carries its birth txg, and a block is rewritten, with
 * every indirect block above it up to the object set's root, whenever
 * anything below it changes.  So in the later tree, a block born at or
 * before the older state's txg (`from_txg`) is the very block the older
 * state has at that place, and so is everything below it.  dmu_traverse
 * with min_txg = from_txg + 1 visits only the rest: the meta-dnode's
 * level-0 blocks among them are the dnode blocks that changed, and any
 * change to an object (its data, its size, its bonus, i.e. the inode)
 * rewrites its dnode and so its dnode block.  The objects of those
 * blocks (32 each) are the candidates; each is compared in both states.
 *
 * One case escapes the walk: a dnode block whose objects were all freed
 * is no block at all in the later tree (an all-zero block is stored as a
 * hole, and holes carry no birth txg), so nothing is visited for it.
 * The indirect block above it was rewritten, though: for each changed
 * meta-dnode indirect block the walk reads it and asks the older object
 * set for the objects it had under each hole child (dmu_object_next,
 * resumed from where the last question ended, so a stretch of object
 * numbers is scanned at most once; a stretch that was empty in both
 * states is scanned only while the older state has objects after it).
 *
 * The candidates are sorted, so the records come in object order, as
 * zfs prints them.  For each object that is an inode in either state
 * (bonus type and size of a znode, a mode, a link count: an unlinked
 * file still open is no longer in the tree and counts as removed):
 *  - only in the later state: added ('+'); only in the older: removed
 *    ('-'), except that a regular file whose link count changed is
 *    reported as modified with the change (zfs's rule);
 *  - in both with another generation (the object number was reused) or
 *    another file type: removed, then added;
 *  - in both, the same ctime: unchanged (so an atime update, which never
 *    touches the ctime, is no change);
 *  - otherwise modified ('M', with the link count change of a non
 *    directory), or renamed ('R') when its path differs.
 * A directory whose entries changed has a new mtime and ctime, so it is
 * reported modified like any other inode.
 *
 * Paths.  An inode keeps the directory it was created or last renamed in
 * (zp_parent); its name there is found by reading that directory, and so
 * on up to the root.  Each directory read for this is read once per diff
 * and state, all its names kept (as zfs's path mapper does): the cost is
 * that of the directories that hold changes, not of the file system.  A
 * hard-linked file whose first link is gone has no name in zp_parent; it
 * is shown as "/(object N)".
 */
#include "posix_impl.h"
#include "tarn_array.h"

#define PD_PATH_MAX  16384
#define PD_DNODES    (DNODE_BLOCK_SIZE / DNODE_SIZE)

/* Table entries keyed by an object number. */
typedef struct pd_key {
	tarn_hlink_t pk_link;
	uint64_t pk_ino;
} pd_key_t;

/* A name found in a directory that was read: object ino is `name` in parent. */
typedef struct pd_ent {
	pd_key_t pe_key;
	uint64_t pe_parent;
	char pe_name[];
} pd_ent_t;

static uint32_t
pd_hash(uint64_t ino)
{
	return ((uint32_t)((ino * 0x9E3779B97F4A7C15ULL) >> 32));
}

static uint32_t
pd_link_hash(const tarn_hlink_t *l)
{
	return (pd_hash(TARN_HASH_ENTRY(l, pd_key_t, pk_link)->pk_ino));
}

static const tarn_hash_conf_t pd_conf = { pd_link_hash, 64, 2 };

/* One state of the file system and what was learnt of its names. */
typedef struct pd_side {
	objset_t   *ps_os;
	uint64_t    ps_root;
	tarn_hash_t ps_names;       /* pd_ent_t: names of the directories read */
	tarn_hash_t ps_dirs;        /* pd_key_t: the directories read */
	char       *ps_path;        /* the last path built */
	char       *ps_tmp;
} pd_side_t;

typedef struct pd {
	pd_side_t   pd_from, pd_to;
	tarn_array_t pd_objs;       /* uint64_t: candidate objects */
	uint64_t    pd_gap_lo;      /* the older state has no object in [lo, hi) */
	uint64_t    pd_gap_hi;
	posix_diff_fn_t pd_fn;
	void       *pd_arg;
} pd_t;

/* ---- the pure parts: type letters and escapes (also for the command line) ---- */

char
posix_diff_type_char(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFBLK: return ('B');
	case S_IFCHR: return ('C');
	case S_IFDIR: return ('/');
	case S_IFIFO: return ('|');
	case S_IFLNK: return ('@');
	case S_IFSOCK: return ('=');
	case S_IFREG: return ('F');
	default: return ('?');
	}
}

size_t
posix_diff_escape(const char *s, char *buf, size_t len)
{
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
		char one[8];
		size_t k;
		if (*p > ' ' && *p != '\\' && *p < 0177) {
			one[0] = (char)*p;
			k = 1;
		} else {
			k = (size_t)snprintf(one, sizeof (one), "\\%04o", *p);
		}
		for (size_t i = 0; i < k; i++, n++)
			if (n + 1 < len)
				buf[n] = one[i];
	}
	if (len > 0)
		buf[MIN(n, len - 1)] = '\0';
	return (n);
}

/* ---- inodes and names ---- */

/* Object obj of os as an inode in the tree; ENOENT when it is none. */
static int
pd_znode(objset_t *os, uint64_t obj, znode_phys_t *zp)
{
	dmu_object_info_t doi;

	if (obj == DMU_META_DNODE_OBJECT || obj >= DMU_MAX_OBJECT)
		return (SET_ERROR(ENOENT));
	int err = dmu_object_info(os, obj, &doi);
	if (err != 0)
		return (err == EINVAL ? SET_ERROR(ENOENT) : err);
	if ((doi.doi_type != DMU_OT_PLAIN_FILE && doi.doi_type != DMU_OT_DIRECTORY) ||
	    doi.doi_bonus_type != POSIX_BONUS_TYPE || doi.doi_bonus_size != POSIX_ZNODE_SIZE)
		return (SET_ERROR(ENOENT));
	err = dmu_bonus_read(os, obj, zp, sizeof (*zp));
	if (err == 0 && (zp->zp_mode == 0 || zp->zp_nlink == 0))
		err = SET_ERROR(ENOENT);
	return (err == EINVAL ? SET_ERROR(ENOENT) : err);
}

/* Read directory dir of the side and keep its names (first one of each object). */
static int
pd_read_dir(pd_side_t *s, uint64_t dir)
{
	pd_key_t *k = tarn_alloc(sizeof (*k));
	k->pk_ino = dir;
	tarn_hash_insert(&s->ps_dirs, pd_hash(dir), &k->pk_link);

	zap_cursor_t zc;
	zap_attribute_t *za = tarn_alloc(sizeof (*za));
	int err;
	zap_cursor_init(&zc, s->ps_os, dir, 0);
	while ((err = zap_cursor_retrieve(&zc, za)) == 0) {
		uint64_t ino = POSIX_DE_INO(za->za_first_integer);
		pd_ent_t *e;
		TARN_HASH_FIND(&s->ps_names, pd_hash(ino), e, pe_key.pk_link,
		    e->pe_key.pk_ino == ino && e->pe_parent == dir);
		if (e == NULL) {
			size_t nl = strlen(za->za_name);
			e = tarn_alloc(sizeof (*e) + nl + 1);
			e->pe_key.pk_ino = ino;
			e->pe_parent = dir;
			memcpy(e->pe_name, za->za_name, nl + 1);
			tarn_hash_insert(&s->ps_names, pd_hash(ino), &e->pe_key.pk_link);
		}
		zap_cursor_advance(&zc);
	}
	zap_cursor_fini(&zc);
	tarn_free(za);
	return (err == ENOENT ? 0 : err);
}

/* The name of ino in directory dir (read first when it was not); ENOENT when none. */
static int
pd_name(pd_side_t *s, uint64_t ino, uint64_t dir, const char **namep)
{
	pd_key_t *k;
	pd_ent_t *e;

	TARN_HASH_FIND(&s->ps_dirs, pd_hash(dir), k, pk_link, k->pk_ino == dir);
	if (k == NULL) {
		int err = pd_read_dir(s, dir);
		if (err != 0)
			return (err);
	}
	TARN_HASH_FIND(&s->ps_names, pd_hash(ino), e, pe_key.pk_link,
	    e->pe_key.pk_ino == ino && e->pe_parent == dir);
	if (e == NULL)
		return (SET_ERROR(ENOENT));
	*namep = e->pe_name;
	return (0);
}

/*
 * The path of inode ino (znode zp) from the file system's root ("/" for
 * the root) in s->ps_path; a name that cannot be found gives "/(object N)".
 * Errors other than a missing name (I/O) are returned.
 */
static int
pd_path(pd_side_t *s, uint64_t ino, const znode_phys_t *zp)
{
	char *path = s->ps_path;
	uint64_t parent = zp->zp_parent, obj = ino;
	int err = 0;

	path[0] = '\0';
	for (int depth = 0; obj != s->ps_root && err == 0; depth++) {
		const char *name;
		znode_phys_t pzp;
		if (depth > 4096)
			err = SET_ERROR(ENOENT);
		else if ((err = pd_name(s, obj, parent, &name)) == 0)
			err = tarn_path_prepend(path, PD_PATH_MAX, name, s->ps_tmp);
		obj = parent;
		if (err == 0 && obj != s->ps_root && (err = pd_znode(s->ps_os, obj, &pzp)) == 0)
			parent = pzp.zp_parent;
	}
	if (err == ENOENT || err == ENAMETOOLONG) {
		(void) snprintf(path, PD_PATH_MAX, "/(object %" PRIu64 ")", ino);
		err = 0;
	}
	if (err == 0 && path[0] == '\0')
		(void) snprintf(path, PD_PATH_MAX, "/");
	return (err);
}

static int
pd_side_init(pd_side_t *s, objset_t *os)
{
	memset(s, 0, sizeof (*s));
	s->ps_os = os;
	tarn_hash_init(&s->ps_names, &pd_conf);
	tarn_hash_init(&s->ps_dirs, &pd_conf);
	s->ps_path = tarn_alloc(PD_PATH_MAX);
	s->ps_tmp = tarn_alloc(PD_PATH_MAX);
	int err = zap_lookup(os, POSIX_MASTER_OBJ, POSIX_M_ROOT, 8, 1, &s->ps_root);
	return (err == ENOENT ? SET_ERROR(EINVAL) : err);
}

static void
pd_side_fini(pd_side_t *s)
{
	pd_ent_t *e;
	pd_key_t *k;

	TARN_HASH_FOREACH(&s->ps_names, e, pe_key.pk_link)
		tarn_free(e);
	TARN_HASH_FOREACH(&s->ps_dirs, k, pk_link)
		tarn_free(k);
	tarn_hash_fini(&s->ps_names);
	tarn_hash_fini(&s->ps_dirs);
	tarn_free(s->ps_path);
	tarn_free(s->ps_tmp);
}

/* ---- finding the candidates ---- */

/* The older state's objects in [lo, hi) are candidates (what it had under a hole). */
static void
pd_probe(pd_t *d, uint64_t lo, uint64_t hi)
{
	if (lo >= d->pd_gap_lo && lo < d->pd_gap_hi)
		lo = d->pd_gap_hi;
	if (lo >= hi)
		return;
	uint64_t o = lo > 0 ? lo - 1 : 0, start = lo;
	while (dmu_object_next(d->pd_from.ps_os, &o) == 0) {
		if (o >= hi) {
			d->pd_gap_lo = start;
			d->pd_gap_hi = o;
			return;
		}
		TARN_ARRAY_APPEND(&d->pd_objs, uint64_t, o);
		start = o + 1;
	}
	d->pd_gap_lo = start;
	d->pd_gap_hi = UINT64_MAX;
}

/*
 * A changed indirect block of the meta-dnode (level >= 1, block id blkid
 * at its level): probe the object ranges under its hole children.
 */
static int
pd_holes(pd_t *d, const blkptr_t *bp, uint64_t blkid)
{
	uint64_t n = bp->bp_lsize / sizeof (blkptr_t);
	if (n < 2 || (n & (n - 1)) != 0)
		return (SET_ERROR(EIO));
	int shift = __builtin_ctzll(n);
	/* dnode blocks under one child: n^(level-1); past DMU_MAX_OBJECT is nothing */
	int cshift = shift * (bp->bp_level - 1);
	uint64_t maxblk = DMU_MAX_OBJECT / PD_DNODES;
	if (cshift >= 48 || blkid > (maxblk >> cshift) >> shift)
		return (0);
	blkptr_t *kids = tarn_alloc(bp->bp_lsize);
	int err = zio_read(dmu_pool_zio(dmu_objset_pool(d->pd_to.ps_os)), bp, kids, 0);
	uint64_t run = UINT64_MAX;      /* first dnode block of the current run of holes */
	for (uint64_t i = 0; i <= n && err == 0; i++) {
		uint64_t blk = ((blkid << shift) + i) << cshift;
		bool hole = i < n && BP_IS_HOLE(&kids[i]) && blk < maxblk;
		if (hole && run == UINT64_MAX)
			run = blk;
		if (!hole && run != UINT64_MAX) {
			pd_probe(d, run * PD_DNODES, MIN(blk, maxblk) * PD_DNODES);
			run = UINT64_MAX;
		}
	}
	tarn_free(kids);
	return (err);
}

static int
pd_visit(void *arg, objset_t *os, uint64_t obj, const blkptr_t *bp, uint64_t blkid)
{
	pd_t *d = arg;

	(void) os;
	if (obj != DMU_META_DNODE_OBJECT || bp->bp_type == DMU_OT_OBJSET)
		return (0);     /* an object's own blocks: its dnode changed too */
	if (bp->bp_level > 0)
		return (pd_holes(d, bp, blkid));
	for (uint64_t i = 0; i < PD_DNODES; i++)
		if (blkid * PD_DNODES + i != DMU_META_DNODE_OBJECT)
			TARN_ARRAY_APPEND(&d->pd_objs, uint64_t, blkid * PD_DNODES + i);
	return (0);
}

/* ---- comparing one object ---- */

static int
pd_emit(pd_t *d, char what, uint64_t ino, const znode_phys_t *zp, const char *path,
    const char *topath, int64_t links)
{
	posix_diff_rec_t r = {
		.pdr_what = what, .pdr_ino = ino, .pdr_mode = (uint32_t)zp->zp_mode,
		.pdr_ctime = { (int64_t)zp->zp_ctime[0], (int64_t)zp->zp_ctime[1] },
		.pdr_path = path, .pdr_topath = topath, .pdr_links = links,
	};
	return (d->pd_fn(d->pd_arg, &r));
}

static int
pd_object(pd_t *d, uint64_t obj)
{
	znode_phys_t fz, tz;
	int ferr = pd_znode(d->pd_from.ps_os, obj, &fz);
	int terr = pd_znode(d->pd_to.ps_os, obj, &tz);

	if ((ferr != 0 && ferr != ENOENT) || (terr != 0 && terr != ENOENT))
		return (ferr != 0 && ferr != ENOENT ? ferr : terr);
	if (ferr != 0 && terr != 0)
		return (0);
	/* unchanged: the same inode (generation, type) and the same ctime */
	if (ferr == 0 && terr == 0 && fz.zp_gen == tz.zp_gen &&
	    ((fz.zp_mode ^ tz.zp_mode) & S_IFMT) == 0 &&
	    fz.zp_ctime[0] == tz.zp_ctime[0] && fz.zp_ctime[1] == tz.zp_ctime[1])
		return (0);
	const char *fpath = d->pd_from.ps_path, *tpath = d->pd_to.ps_path;
	int err = 0;
	if (ferr == 0)
		err = pd_path(&d->pd_from, obj, &fz);
	if (err == 0 && terr == 0)
		err = pd_path(&d->pd_to, obj, &tz);
	if (err != 0)
		return (err);
	if (ferr != 0)
		return (pd_emit(d, POSIX_DIFF_ADDED, obj, &tz, tpath, NULL, 0));
	if (terr != 0)
		return (pd_emit(d, POSIX_DIFF_REMOVED, obj, &fz, fpath, NULL, 0));
	if (fz.zp_gen != tz.zp_gen || ((fz.zp_mode ^ tz.zp_mode) & S_IFMT) != 0) {
		/* the object number was reused: another inode */
		err = pd_emit(d, POSIX_DIFF_REMOVED, obj, &fz, fpath, NULL, 0);
		return (err != 0 ? err : pd_emit(d, POSIX_DIFF_ADDED, obj, &tz, tpath, NULL, 0));
	}
	int64_t links = S_ISDIR(tz.zp_mode) ? 0 : (int64_t)tz.zp_nlink - (int64_t)fz.zp_nlink;
	if (links != 0)
		return (pd_emit(d, POSIX_DIFF_MODIFIED, obj, &tz, links > 0 ? fpath : tpath, NULL,
		    links));
	if (strcmp(fpath, tpath) == 0)
		return (pd_emit(d, POSIX_DIFF_MODIFIED, obj, &tz, tpath, NULL, 0));
	return (pd_emit(d, POSIX_DIFF_RENAMED, obj, &tz, fpath, tpath, 0));
}

static int
pd_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x < y ? -1 : x > y);
}

int
posix_diff(objset_t *from, objset_t *to, uint64_t from_txg, posix_diff_fn_t fn, void *arg)
{
	pd_t *d = tarn_alloc(sizeof (*d));
	uint64_t errors = 0;
	d->pd_fn = fn;
	d->pd_arg = arg;
	tarn_array_init(&d->pd_objs, sizeof (uint64_t));
	int err = pd_side_init(&d->pd_from, from);
	int err2 = pd_side_init(&d->pd_to, to);
	if (err == 0)
		err = err2;
	if (err == 0)
		err = dmu_traverse(to, 0, 0, from_txg + 1, pd_visit, d, &errors);
	if (err == 0 && errors != 0)
		err = SET_ERROR(EIO);
	if (err == 0) {
		tarn_array_sort(&d->pd_objs, pd_cmp_u64);
		size_t n = tarn_array_len(&d->pd_objs);
		for (size_t i = 0; i < n && err == 0; i++) {
			uint64_t o = TARN_ARRAY_AT(&d->pd_objs, uint64_t, i);
			if (i == 0 || o != TARN_ARRAY_AT(&d->pd_objs, uint64_t, i - 1))
				err = pd_object(d, o);
		}
	}
	tarn_array_fini(&d->pd_objs);
	pd_side_fini(&d->pd_from);
	pd_side_fini(&d->pd_to);
	tarn_free(d);
	return (err);
}
