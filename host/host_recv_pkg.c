/*
 * host_recv_pkg.c — receive of a package stream (zfs send -R / -I; the
 * format and the header: host_send_pkg.c).
 *
 * The header says which file system was sent at the top ("toname"); it
 * goes to host_recv_target_name(target, toname) (-d / -e), and every
 * other sent file system to that name plus its part below the sent top.
 * Then each substream in turn: its begin record (dsl_stream_peek) names
 * the snapshot and its guid; a snapshot the target file system has
 * already (by guid) is read and dropped (a dry-run receive), as zfs skips
 * what was received before; else host_recv_one receives it into its file
 * system, whose missing parents are made first (a clone, an incremental
 * stream into a file system that does not exist, is dsl_receive's to
 * make from the snapshot with the base's guid).  The package end record closes it; a stream that ends
 * before it is refused (what was received stays: each substream is
 * atomic on its own, a package is not).
 *
 * -F with an incremental package (the header has "from"), before any
 * substream, makes the received tree follow the source, matching by
 * guid only within it: a target file system is the source's one that
 * has a snapshot of the same guid; one that has such a file system under
 * another name is renamed; one with snapshots none of which the source
 * has any more is destroyed (with what is below it); a snapshot whose
 * guid the source has under another name is renamed, one the source no
 * longer lists is destroyed.
 * Holds (-h on the send side): placed on the received snapshots at the
 * end.  -n: every substream read and checked, nothing changed.
 */
#include "host_impl.h"
#include "tarn_array.h"

typedef struct rpkg {
	dsl_pool_t *rp_dp;
	host_recv_args_t rp_a;              /* the caller's, -d/-e done here */
	const char *rp_target;              /* as given */
	json_object *rp_hdr;
	json_object *rp_fss;                /* the header's file systems */
	char        rp_srctop[DSL_NAME_MAX];    /* the sent top file system */
	char        rp_top[DSL_NAME_MAX];       /* where it goes */
	bool        rp_dry;
} rpkg_t;

#define RP_ERR(rp, e, msg) host_report("receive", "", (e), (msg))

static const char *
rp_str(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return (NULL);
	return (json_object_get_string(v));
}

static uint64_t
rp_u64(json_object *o, const char *key)
{
	json_object *v;
	return (json_object_object_get_ex(o, key, &v) ? json_object_get_uint64(v) : 0);
}

static json_object *
rp_arr(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_array))
		return (NULL);
	return (v);
}

/* The target of sent file system src (len bytes of it); EINVAL: not below the sent top. */
static int
rp_map(const rpkg_t *rp, const char *src, size_t len, char *out, size_t outlen)
{
	size_t tl = strlen(rp->rp_srctop);
	if (len < tl || strncmp(src, rp->rp_srctop, tl) != 0 || (len > tl && src[tl] != '/'))
		return (SET_ERROR(EINVAL));
	int n = snprintf(out, outlen, "%s%.*s", rp->rp_top, (int)(len - tl), src + tl);
	return (n < 0 || (size_t)n >= outlen ? SET_ERROR(ENAMETOOLONG) : 0);
}

/* The header checked: version, toname, file systems with their snapshots. */
static int
rp_header(rpkg_t *rp, const char *payload, size_t len)
{
	json_tokener *tok = json_tokener_new();
	rp->rp_hdr = json_tokener_parse_ex(tok, payload, (int)len);
	json_tokener_free(tok);
	if (rp->rp_hdr == NULL || !json_object_is_type(rp->rp_hdr, json_type_object))
		return (RP_ERR(rp, EBADMSG, "invalid package header in stream"));
	json_object *v;
	if (!json_object_object_get_ex(rp->rp_hdr, "version", &v) || json_object_get_int(v) != 1)
		return (RP_ERR(rp, ENOTSUP, "stream has unsupported package version"));
	const char *to = rp_str(rp->rp_hdr, "toname");
	rp->rp_fss = rp_arr(rp->rp_hdr, "fss");
	if (to == NULL || strchr(to, '@') == NULL || rp->rp_fss == NULL ||
	    strcspn(to, "@") >= sizeof (rp->rp_srctop))
		return (RP_ERR(rp, EBADMSG, "invalid package header in stream"));
	for (size_t i = 0; i < json_object_array_length(rp->rp_fss); i++) {
		json_object *f = json_object_array_get_idx(rp->rp_fss, i);
		if (rp_str(f, "name") == NULL || rp_arr(f, "snaps") == NULL)
			return (RP_ERR(rp, EBADMSG, "invalid package header in stream"));
	}
	(void) snprintf(rp->rp_srctop, sizeof (rp->rp_srctop), "%.*s", (int)strcspn(to, "@"),
	    to);
	return (0);
}

/* The target's snapshot of fs with that guid: its name into out (NULL: just whether). */
static bool
rp_fs_has_guid(dsl_pool_t *dp, const char *fs, uint64_t guid, char *out, size_t len)
{
	dsl_snap_info_t *sv = NULL;
	int n = 0;
	bool found = false;
	char err[256];

	if (dsl_snapshot_list(dp, fs, &sv, &n, err, sizeof (err)) != 0)
		return (false);
	for (int i = 0; i < n && !found; i++) {
		if (sv[i].dsi_guid == guid) {
			found = true;
			if (out != NULL)
				(void) snprintf(out, len, "%s", sv[i].dsi_name);
		}
	}
	tarn_free(sv);
	return (found);
}

/*
 * Make the parents of fs, a file system that a substream creates (those
 * the package did not carry: zfs makes them too).  A clone (an
 * incremental substream into a new file system) is dsl_receive's to make,
 * of the snapshot whose guid is the stream's base.
 */
static int
rp_prepare_new(rpkg_t *rp, const char *fs)
{
	char parent[DSL_NAME_MAX], err[512];
	const char *slash = strrchr(fs, '/');

	if (slash == NULL)
		return (0);
	(void) snprintf(parent, sizeof (parent), "%.*s", (int)(slash - fs), fs);
	if (dsl_dataset_exists(rp->rp_dp, parent))
		return (0);
	int e = dsl_dataset_create(rp->rp_dp, parent, true, NULL, 0, err, sizeof (err));
	if (e != 0)
		return (host_report("create", parent, e, err));
	if (!rp->rp_a.hra_nomount)
		(void) host_mount_tree(rp->rp_dp, parent, true);
	return (0);
}

/* Read one substream and drop it (what the target has already), checked all the same. */
static int
rp_skip(rpkg_t *rp, const char *fs, const dsl_stream_begin_t *b, dsl_stream_in_t *si)
{
	char err[512];
	(void) rp;
	(void) fs;
	int e = dsl_stream_skip(si, err, sizeof (err));
	if (e != 0)
		return (host_report("receive", b->dsb_toname, e, err));
	return (0);
}

static json_object *rp_src_fs_of_guid(const rpkg_t *rp, uint64_t guid, json_object **snapp);

/* One substream (its begin record is next). */
static int
rp_substream(rpkg_t *rp, const dsl_stream_begin_t *b, dsl_stream_in_t *si)
{
	char fs[DSL_NAME_MAX];
	size_t fl = strcspn(b->dsb_toname, "@");

	if (rp_map(rp, b->dsb_toname, fl, fs, sizeof (fs)) != 0)
		return (host_report("receive", b->dsb_toname, EBADMSG,
		    "stream's snapshot is not part of the package"));
	bool exists = dsl_dataset_exists(rp->rp_dp, fs);
	if (exists && rp_fs_has_guid(rp->rp_dp, fs, b->dsb_toguid, NULL, 0))
		return (rp_skip(rp, fs, b, si));
	if (!exists && rp->rp_dry && b->dsb_fromguid != 0)
		return (rp_skip(rp, fs, b, si));   /* -n: a file system the package creates */
	if (!exists && !rp->rp_dry && rp_prepare_new(rp, fs) != 0)
		return (HOST_FAILED);
	/* a clone's first stream is from its origin, a snapshot of another file system */
	host_recv_args_t a = rp->rp_a;
	json_object *snap;
	json_object *from = b->dsb_fromguid != 0 ? rp_src_fs_of_guid(rp, b->dsb_fromguid, &snap) :
	    NULL;
	if (!exists && from != NULL && from != rp_src_fs_of_guid(rp, b->dsb_toguid, &snap))
		a.hra_flags |= DSL_RECV_CLONES;
	dsl_recv_result_t res;
	memset(&res, 0, sizeof (res));
	int r = host_recv_one(rp->rp_dp, &a, fs, si, &res);
	tarn_free(res.drr_props);
	return (r);
}

/* ---- receive -F of an incremental package: follow renames and destroys ---- */

/* The header's file system that has a snapshot of that guid, or NULL. */
static json_object *
rp_src_fs_of_guid(const rpkg_t *rp, uint64_t guid, json_object **snapp)
{
	for (size_t i = 0; i < json_object_array_length(rp->rp_fss); i++) {
		json_object *f = json_object_array_get_idx(rp->rp_fss, i);
		json_object *snaps = rp_arr(f, "snaps");
		for (size_t j = 0; j < json_object_array_length(snaps); j++) {
			json_object *s = json_object_array_get_idx(snaps, j);
			if (rp_u64(s, "guid") == guid) {
				if (snapp != NULL)
					*snapp = s;
				return (f);
			}
		}
	}
	return (NULL);
}

/* The header's file system matching target file system fs (a common snapshot guid). */
static json_object *
rp_src_fs_of(const rpkg_t *rp, const dsl_snap_info_t *sv, int n)
{
	for (int i = 0; i < n; i++) {
		json_object *f = rp_src_fs_of_guid(rp, sv[i].dsi_guid, NULL);
		if (f != NULL)
			return (f);
	}
	return (NULL);
}

typedef struct rp_walk {
	rpkg_t     *w_rp;
	tarn_array_t w_names;       /* char[DSL_NAME_MAX]: the file systems of the tree */
} rp_walk_t;

static int
rp_walk_visit(void *arg, const char *name, int depth)
{
	rp_walk_t *w = arg;
	(void) depth;
	char *slot = tarn_array_push(&w->w_names);
	(void) snprintf(slot, DSL_NAME_MAX, "%s", name);
	return (0);
}

/* The file systems of root and below, parents first (char[DSL_NAME_MAX]; caller finis). */
static void
rp_tree(rpkg_t *rp, const char *root, tarn_array_t *names)
{
	rp_walk_t w = { .w_rp = rp };
	tarn_array_init(&w.w_names, DSL_NAME_MAX);
	(void) dsl_dataset_iter(rp->rp_dp, root, -1, rp_walk_visit, &w);
	*names = w.w_names;
}

/* File system fs and all below it, with their snapshots and bookmarks. */
static int
rp_destroy_tree(rpkg_t *rp, const char *fs, char *err, size_t errlen)
{
	tarn_array_t names, snaps;
	int e = 0;

	rp_tree(rp, fs, &names);
	tarn_array_init(&snaps, sizeof (char *));
	for (size_t i = 0; i < tarn_array_len(&names) && e == 0; i++) {
		const char *n = tarn_array_get(&names, i);
		dsl_snap_info_t *sv = NULL;
		dsl_bookmark_info_t *bv = NULL;
		int ns = 0, nb = 0;
		if (dsl_snapshot_list(rp->rp_dp, n, &sv, &ns, err, errlen) == 0)
			for (int j = 0; j < ns; j++)
				TARN_ARRAY_APPEND(&snaps, char *, tarn_strdup(sv[j].dsi_name));
		if (dsl_bookmark_list(rp->rp_dp, n, &bv, &nb, err, errlen) == 0)
			for (int j = 0; j < nb && e == 0; j++)
				e = dsl_bookmark_destroy(rp->rp_dp, bv[j].dbi_name, err, errlen);
		tarn_free(sv);
		tarn_free(bv);
	}
	size_t n = tarn_array_len(&snaps);
	if (e == 0 && n > 0)
		e = dsl_snapshot_destroy(rp->rp_dp, tarn_array_base(&snaps), (int)n, 0, NULL,
		    NULL, NULL, err, errlen);
	if (e == 0)
		e = dsl_dataset_destroy(rp->rp_dp, fs, true, err, errlen);
	for (size_t i = 0; i < n; i++)
		tarn_free(TARN_ARRAY_AT(&snaps, char *, i));
	tarn_array_fini(&snaps);
	tarn_array_fini(&names);
	return (e);
}

/* Rename or destroy file system fs (mounts down and up around it). */
static int
rp_fs_change(rpkg_t *rp, const char *fs, const char *to)
{
	struct mnt_names *down;
	char err[512], top[DSL_NAME_MAX];
	int e;

	if (host_mount_down(rp->rp_dp, fs, false, to != NULL ? "rename" : "destroy",
	    &down) != 0)
		return (HOST_FAILED);
	if (to != NULL) {
		host_fs_mount_top(rp->rp_dp, to, true, top);
		e = dsl_dataset_rename(rp->rp_dp, fs, to, true, err, sizeof (err));
		host_mount_up(rp->rp_dp, fs, e == 0 ? to : NULL, top, down);
	} else {
		e = rp_destroy_tree(rp, fs, err, sizeof (err));
		host_mount_up(rp->rp_dp, fs, NULL, NULL, down);
	}
	if (e != 0)
		return (host_report(to != NULL ? "rename" : "destroy", fs, e, err));
	return (0);
}

/*
 * One change of -F to the tree's file systems: the first one found that
 * the source renamed (renamed) or destroyed (destroyed with all below
 * it).  *done: whether there was one.
 */
static int
rp_force_fs_one(rpkg_t *rp, bool *done)
{
	tarn_array_t names;
	int r = 0;

	*done = false;
	rp_tree(rp, rp->rp_top, &names);
	for (size_t i = 1; i < tarn_array_len(&names) && !*done; i++) {
		const char *t = tarn_array_get(&names, i);
		dsl_snap_info_t *sv = NULL;
		int n = 0;
		char err[256], want[DSL_NAME_MAX];
		if (dsl_snapshot_list(rp->rp_dp, t, &sv, &n, err, sizeof (err)) != 0)
			continue;
		json_object *f = rp_src_fs_of(rp, sv, n);
		tarn_free(sv);
		if (f == NULL && n > 0) {
			*done = true;
			r = rp_fs_change(rp, t, NULL);
		} else if (f != NULL) {
			const char *src = rp_str(f, "name");
			size_t tl = strlen(t);
			if (rp_map(rp, src, strlen(src), want, sizeof (want)) != 0 ||
			    strcmp(want, t) == 0 || dsl_dataset_exists(rp->rp_dp, want) ||
			    (strncmp(want, t, tl) == 0 && want[tl] == '/'))
				continue;
			*done = true;
			r = rp_fs_change(rp, t, want);
		}
	}
	tarn_array_fini(&names);
	return (r);
}

/* -F: the snapshots of target file system t that the source destroyed or renamed. */
static int
rp_force_snaps_of(rpkg_t *rp, const char *t)
{
	dsl_snap_info_t *sv = NULL;
	int n = 0, r = 0;
	char err[512];

	if (dsl_snapshot_list(rp->rp_dp, t, &sv, &n, err, sizeof (err)) != 0)
		return (0);
	json_object *f = rp_src_fs_of(rp, sv, n);
	for (int i = 0; f != NULL && i < n && r == 0; i++) {
		json_object *s = NULL;
		json_object *sf = rp_src_fs_of_guid(rp, sv[i].dsi_guid, &s);
		const char *name = sf == f ? rp_str(s, "name") : NULL;
		const char *have = strchr(sv[i].dsi_name, '@') + 1;
		const char *one = sv[i].dsi_name;
		bool rename = sf == f && name != NULL && strcmp(name, have) != 0;
		if (sf == f && !rename)
			continue;
		/* open under .zfs/snapshot: closed first, as zfs unmounts it */
		int e = host_mount_snap_release(one);
		if (e != 0)
			(void) snprintf(err, sizeof (err), "dataset is busy");
		else if (rename)
			e = dsl_snapshot_rename(rp->rp_dp, one, name, false, err, sizeof (err));
		else
			e = dsl_snapshot_destroy(rp->rp_dp, &one, 1, 0, NULL, NULL, NULL, err,
			    sizeof (err));
		if (e != 0)
			r = host_report(rename ? "rename" : "destroy", one, e, err);
	}
	tarn_free(sv);
	return (r);
}

/* receive -F of an incremental package: the tree follows the source (theory comment). */
static int
rp_force(rpkg_t *rp)
{
	bool done = true;
	int r = 0;

	for (int round = 0; r == 0 && done && round < 10000; round++)
		r = rp_force_fs_one(rp, &done);
	if (r != 0)
		return (r);
	tarn_array_t names;
	rp_tree(rp, rp->rp_top, &names);
	for (size_t i = 0; i < tarn_array_len(&names) && r == 0; i++)
		r = rp_force_snaps_of(rp, tarn_array_get(&names, i));
	tarn_array_fini(&names);
	return (r);
}

/* ---- the package ---- */

/* Holds of the source's snapshots (send -h) on the received ones. */
static int
rp_holds(rpkg_t *rp)
{
	int r = 0;

	for (size_t i = 0; i < json_object_array_length(rp->rp_fss); i++) {
		json_object *f = json_object_array_get_idx(rp->rp_fss, i), *snaps;
		const char *src = rp_str(f, "name");
		char fs[DSL_NAME_MAX], snap[DSL_NAME_MAX + 8], err[512];
		if (rp_map(rp, src, strlen(src), fs, sizeof (fs)) != 0)
			continue;
		snaps = rp_arr(f, "snaps");
		for (size_t j = 0; j < json_object_array_length(snaps); j++) {
			json_object *s = json_object_array_get_idx(snaps, j);
			json_object *tags = rp_arr(s, "holds");
			if (tags == NULL || !rp_fs_has_guid(rp->rp_dp, fs, rp_u64(s, "guid"),
			    snap, sizeof (snap)))
				continue;
			const char *one = snap;
			for (size_t k = 0; k < json_object_array_length(tags); k++) {
				json_object *tag = json_object_array_get_idx(tags, k);
				if (!json_object_is_type(tag, json_type_string))
					continue;
				int e = dsl_hold(rp->rp_dp, &one, 1, json_object_get_string(tag),
				    false, err, sizeof (err));
				if (e != 0 && e != EEXIST)
					r = host_report("hold", snap, e, err);
			}
		}
	}
	return (r);
}

/* Where the package goes (rp_top), checked before anything changes. */
static int
rp_start(rpkg_t *rp, const host_recv_args_t *a)
{
	const char *to = rp_str(rp->rp_hdr, "toname");
	char parent[DSL_NAME_MAX];

	if (strpbrk(rp->rp_target, "@#") != NULL)
		return (RP_ERR(rp, EINVAL,
		    "cannot specify snapshot name for multi-snapshot stream"));
	if (host_recv_target_name(a, rp->rp_target, to, rp->rp_top, sizeof (rp->rp_top)) != 0)
		return (RP_ERR(rp, ENAMETOOLONG, "name is too long"));
	if (a->hra_discard || a->hra_lastonly) {
		if (!dsl_dataset_exists(rp->rp_dp, rp->rp_target)) {
			char msg[DSL_NAME_MAX + 64];
			(void) snprintf(msg, sizeof (msg), "specified fs (%s) does not exist",
			    rp->rp_target);
			return (RP_ERR(rp, ENOENT, msg));
		}
		return (0);
	}
	const char *slash = strrchr(rp->rp_top, '/');
	if (slash == NULL)
		return (0);
	(void) snprintf(parent, sizeof (parent), "%.*s", (int)(slash - rp->rp_top), rp->rp_top);
	if (!dsl_dataset_exists(rp->rp_dp, parent)) {
		char msg[DSL_NAME_MAX + 64];
		(void) snprintf(msg, sizeof (msg), "parent of '%s' does not exist", rp->rp_top);
		return (host_report("receive new filesystem stream", "", ENOENT, msg));
	}
	return (0);
}

/* The substreams up to the package end record. */
static int
rp_loop(rpkg_t *rp, dsl_stream_in_t *si)
{
	char err[512];

	for (;;) {
		dsl_stream_kind_t kind;
		dsl_stream_begin_t b;
		int e = dsl_stream_peek(si, &kind, &b, err, sizeof (err));
		if (e != 0)
			return (RP_ERR(rp, e, err));
		switch (kind) {
		case DSL_STREAM_BEGIN:
			if (strchr(b.dsb_toname, '@') == NULL)
				return (RP_ERR(rp, EBADMSG, "invalid snapshot name in stream"));
			if (rp_substream(rp, &b, si) != 0)
				return (HOST_FAILED);
			break;
		case DSL_STREAM_PACKAGE_END:
			e = dsl_stream_get_package_end(si, err, sizeof (err));
			return (e != 0 ? RP_ERR(rp, e, err) : 0);
		case DSL_STREAM_EOF:
			return (RP_ERR(rp, EBADMSG, "stream ends before the end of its package"));
		default:
			return (RP_ERR(rp, EBADMSG, "unexpected package record in stream"));
		}
	}
}

int
host_recv_package(struct dsl_pool *dp, const host_recv_args_t *a, const char *target,
    dsl_stream_in_t *si)
{
	rpkg_t rp = { .rp_dp = dp, .rp_a = *a, .rp_target = target };
	char *payload = NULL, err[512];
	size_t len = 0;

	rp.rp_a.hra_discard = rp.rp_a.hra_lastonly = false;
	rp.rp_dry = (a->hra_flags & DSL_RECV_DRYRUN) != 0;
	int e = dsl_stream_get_package(si, &payload, &len, err, sizeof (err));
	if (e != 0)
		return (host_report("receive", target, e, err));
	int r = rp_header(&rp, payload, len);
	tarn_free(payload);
	if (r == 0)
		r = rp_start(&rp, a);
	/* as zfs: only a replication stream (-R) makes -F follow the source's destroys */
	json_object *repl;
	bool replicate = json_object_object_get_ex(rp.rp_hdr, "replicate", &repl) &&
	    json_object_get_boolean(repl);
	if (r == 0 && !rp.rp_dry && (a->hra_flags & DSL_RECV_FORCE) && replicate &&
	    rp_str(rp.rp_hdr, "from") != NULL && dsl_dataset_exists(dp, rp.rp_top))
		r = rp_force(&rp);
	if (r == 0)
		r = rp_loop(&rp, si);
	if (r == 0 && !rp.rp_dry)
		r = rp_holds(&rp);
	json_object_put(rp.rp_hdr);
	return (r);
}
