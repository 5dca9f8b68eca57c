/*
 * tarn_fuse_dir.c — directory listings: opendir, readdir and
 * readdirplus, releasedir, fsyncdir.
 *
 * A listing request is answered in two steps: first the entries that fit
 * in the kernel's buffer are gathered from posix_readdir (no other posix
 * call is made while it runs), then, for readdirplus, each entry other
 * than "." and ".." is looked up by name, which takes the reference the
 * kernel gets with it (see "Lookup counts" in tarn_fuse.c).  An entry
 * that vanished in between is sent without attributes (node id 0: the
 * kernel then takes no reference); one that was replaced is sent as
 * what the lookup found.  Offsets are posix cookies, so a listing
 * resumes correctly across concurrent changes.
 */
#include "tarn_fuse_impl.h"

#include <dirent.h>

typedef struct tf_dent {
	posix_ino_t td_ino;
	uint32_t    td_dtype;
	uint64_t    td_next;     /* cookie after this entry */
	uint32_t    td_name;     /* offset in tl_names */
} tf_dent_t;

typedef struct tf_listing {
	fuse_req_t  tl_req;
	bool        tl_plus;
	size_t      tl_size;     /* the kernel's buffer */
	size_t      tl_used;     /* bytes the gathered entries will take */
	tarn_array_t tl_ents;    /* tf_dent_t */
	tarn_array_t tl_names;   /* char: the names, each NUL-terminated */
} tf_listing_t;

static int
tf_gather(void *arg, const char *name, posix_ino_t ino, uint32_t dtype, uint64_t next)
{
	tf_listing_t *l = arg;
	size_t esz = l->tl_plus ?
	    fuse_add_direntry_plus(l->tl_req, NULL, 0, name, NULL, 0) :
	    fuse_add_direntry(l->tl_req, NULL, 0, name, NULL, 0);
	if (l->tl_used + esz > l->tl_size)
		return (1);
	tf_dent_t *d = tarn_array_push(&l->tl_ents);
	d->td_ino = ino;
	d->td_dtype = dtype;
	d->td_next = next;
	d->td_name = (uint32_t)tarn_array_len(&l->tl_names);
	(void) tarn_array_append(&l->tl_names, name, strlen(name) + 1);
	l->tl_used += esz;
	return (0);
}

static bool
tf_is_dot(const char *name)
{
	return (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')));
}

/* Fill buf with the gathered entries (looking each up for readdirplus). */
static size_t
tf_fill(tarn_fuse_t *t, const tf_tgt_t *tg, tf_listing_t *l, char *buf, bool *took)
{
	posix_ino_t dir = tg->tt_ino;
	size_t off = 0;
	const char *names = tarn_array_base(&l->tl_names);
	for (size_t i = 0; i < tarn_array_len(&l->tl_ents); i++) {
		tf_dent_t *d = &TARN_ARRAY_AT(&l->tl_ents, tf_dent_t, i);
		const char *name = names + d->td_name;
		size_t n;
		/* DT_UNKNOWN: .zfs, a directory we send without attributes */
		mode_t type = (mode_t)(d->td_dtype == DT_UNKNOWN ? DT_DIR : d->td_dtype) << 12;
		took[i] = false;
		if (!l->tl_plus) {
			struct stat st;
			memset(&st, 0, sizeof (st));
			st.st_ino = d->td_ino;
			st.st_mode = type;
			n = fuse_add_direntry(l->tl_req, buf + off, l->tl_size - off, name, &st,
			    (off_t)d->td_next);
		} else {
			struct fuse_entry_param ep;
			posix_attr_t pa;
			if (d->td_dtype != DT_UNKNOWN && !tf_is_dot(name) &&
			    posix_lookup(tg->tt_fs, dir, name, &pa) == 0) {
				tarn_fuse_entry_fill(t, tg, &pa, &ep);
				tarn_fuse_entry_ref(t, tg, &pa);
				took[i] = tg->tt_kind == TF_SNAP || pa.pa_ino != t->tf_root;
				d->td_ino = pa.pa_ino;
			} else {
				memset(&ep, 0, sizeof (ep));
				ep.attr.st_ino = d->td_ino;
				ep.attr.st_mode = type;
			}
			n = fuse_add_direntry_plus(l->tl_req, buf + off, l->tl_size - off, name,
			    &ep, (off_t)d->td_next);
		}
		VERIFY3U(off + n, <=, l->tl_size);
		off += n;
	}
	return (off);
}

/*
 * snapdir=visible: the root's listing starts with .zfs (at offset 0; its
 * next offset TF_ZFS_COOKIE means posix's 0).  Sent without attributes
 * (DT_UNKNOWN marks it for tf_fill; the kernel gets DT_DIR).
 */
static int
tf_gather_zfs(tarn_fuse_t *t, const tf_tgt_t *tg, tf_listing_t *l, uint64_t *off)
{
	if (tg->tt_kind != TF_LIVE || tg->tt_ino != t->tf_root || !tf_snapdir_listed(t)) {
		if (*off == TF_ZFS_COOKIE)
			*off = 0;
		return (0);
	}
	if (*off == 0) {
		if (tf_gather(l, ".zfs", TF_OBJ_MASK, DT_UNKNOWN, TF_ZFS_COOKIE) != 0)
			return (SET_ERROR(EINVAL));     /* not even one entry fits */
	} else if (*off == TF_ZFS_COOKIE) {
		*off = 0;
	}
	return (0);
}

static void
tf_list(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus)
{
	tarn_fuse_t *t = tf_enter(req);
	tf_tgt_t tg;
	int e = tf_resolve(t, ino, &tg);
	if (e == 0 && tg.tt_kind >= TF_ZFSDIR) {
		tf_ctl_readdir(t, req, &tg, size, off, plus);
		return;
	}
	if (e != 0) {
		tarn_fuse_reply_err(req, e);
		return;
	}
	posix_ino_t dir = tg.tt_ino;
	uint64_t from = (uint64_t)off;
	tf_listing_t l;
	memset(&l, 0, sizeof (l));
	l.tl_req = req;
	l.tl_plus = plus;
	l.tl_size = size;
	/* the first sizes: 64 entries, 1 KiB of names */
	tarn_array_init(&l.tl_ents, sizeof (tf_dent_t));
	tarn_array_init(&l.tl_names, 1);
	VERIFY0(tarn_array_reserve(&l.tl_ents, 64));
	VERIFY0(tarn_array_reserve(&l.tl_names, 1024));
	e = tf_gather_zfs(t, &tg, &l, &from);
	if (e == 0)
		e = posix_readdir(tg.tt_fs, dir, from, tf_gather, &l);
	if (e != 0) {
		tarn_fuse_reply_err(req, e);
	} else {
		char *buf = tarn_fuse_scratch(size);
		size_t n = tarn_array_len(&l.tl_ents);
		bool *took = tarn_alloc(n * sizeof (bool) + 1);
		size_t len = tf_fill(t, &tg, &l, buf, took);
		if (off == 0)
			posix_touch_atime(tg.tt_fs, dir);
		if (fuse_reply_buf(req, buf, len) == -ENOENT) {
			for (size_t i = 0; i < n; i++) {
				if (!took[i])
					continue;
				const tf_dent_t *d = tarn_array_get(&l.tl_ents, i);
				posix_attr_t pa = { .pa_ino = d->td_ino };
				tarn_fuse_entry_unref(t, &tg, &pa);
			}
		}
		tarn_free(took);
	}
	tarn_array_fini(&l.tl_ents);
	tarn_array_fini(&l.tl_names);
	tf_tgt_rele(t, &tg);
}

static void
tf_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	tarn_fuse_t *t = tf_enter(req);
	fi->fh = tf_swap_fh(t);
	/*
	 * No kernel readdir cache (FOPEN_CACHE_DIR): its validity stamp is
	 * taken when a listing starts on an empty cache, so a second listing
	 * starting while the first one's first READDIR is with us re-stamps
	 * the cache after a concurrent create, and the first listing then
	 * completes the cache without that name, stamped as current.
	 * tests/e2e/fs_concurrent.sh caught it.  Listings come from posix.
	 */
	fi->cache_readdir = 0;
	fi->keep_cache = 0;
	if (TF_SLOT(ino) != 0) {
		/* a snapshot's directory: counted, so that rmdir of it is EBUSY */
		tf_tgt_t tg;
		int e = tf_resolve(t, ino, &tg);
		if (e != 0) {
			tarn_fuse_reply_err(req, e);
			return;
		}
		tf_tgt_rele(t, &tg);
		tf_snap_open(t, ino, 1);
		if (fuse_reply_open(req, fi) == -ENOENT)
			tf_snap_open(t, ino, -1);
		return;
	}
	(void) fuse_reply_open(req, fi);
}

static void
tf_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	tf_list(req, ino, size, off, false);
}

static void
tf_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
    struct fuse_file_info *fi)
{
	tf_list(req, ino, size, off, true);
}

static void
tf_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	tarn_fuse_t *t = tf_enter(req);
	if (TF_SLOT(ino) != 0)
		tf_snap_open(t, ino, -1);
	tarn_fuse_reply_err(req, 0);
}

static void
tf_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	tarn_fuse_t *t = tf_enter(req);
	tarn_fuse_reply_err(req, TF_SLOT(ino) != 0 ? 0 :
	    posix_fsync(t->tf_fs, TF_PINO(t, ino), datasync != 0));
}

void
tarn_fuse_ops_dir(struct fuse_lowlevel_ops *ops)
{
	ops->opendir = tf_opendir;
	ops->readdir = tf_readdir;
	ops->readdirplus = tf_readdirplus;
	ops->releasedir = tf_releasedir;
	ops->fsyncdir = tf_fsyncdir;
}
