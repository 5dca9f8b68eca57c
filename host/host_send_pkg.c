/*
 * host_send_pkg.c — package streams: zfs send -I (every snapshot between
 * the base and the sent one) and zfs send -R (a file system tree with its
 * snapshots, properties and clones).  Their receive: host_recv_pkg.c.
 *
 * A package is a package record whose payload is the header below, then
 * the substreams (one dsl_send each: a full or incremental stream of one
 * snapshot), then a package end record (dsl.h "send and receive").
 *
 * The header (JSON):
 *   { "version": 1, "toname": "pool/a@s" (the sent snapshot at the top),
 *     "from": "b" (the base's snapshot name; absent: a full package),
 *     "replicate": -R, "intermediate": -I, "holds": -h,
 *     "fss": [ { "name": "pool/a/c", "guid": the file system's guid,
 *                "origin": the origin snapshot's guid (clones only),
 *                "sent": it has the sent snapshot (its substreams follow),
 *                "props": its local properties (host_send_props),
 *                "snaps": [ { "name": "s1", "guid", "txg", "creation",
 *                             "holds": [tag...] (-h) } ... ] } ... ] }
 * fss lists the top file system and with -R every descendant, parents
 * before children; snaps lists each one's snapshots up to the sent one
 * (all of them where it has none), oldest first: what the receiver
 * matches by guid to follow renames and destroys (receive -F).
 *
 * Substreams, file system by file system, parents before children and a
 * clone's origin's file system before the clone:
 *  - with a base that the file system has (-I/-i with -R: the same
 *    snapshot name in each): from the base to each later snapshot up to
 *    the sent one (-I), or the base to the sent one (-i);
 *  - else: the first snapshot full (a clone whose origin is in the
 *    package: incremental from the origin, once the engine takes that:
 *    PKG_CLONES_AS_CLONES), then each next one up to the sent one.  A top file system's base may be a bookmark or, without
 *    -R, its origin (zfs send -I pool/orig@x pool/clone@s).
 * The property payload of each file system rides on its first substream
 * (-p, and -R always), for host_recv_one to set (with receive's -o/-x).
 * -v / -P: the estimate of each substream first, then the total, as
 * parts the command line prints in zfs's words (host_send_emit_*: "full
 * send of ...", "send from @a to fs@b estimated size is ...", "total
 * estimated size is ..."), and a start part before each substream for
 * its progress lines; -n: only the estimates, nothing is written.
 */
#include "host_impl.h"
#include "tarn_array.h"


/* One file system of the package. */
typedef struct pkg_fs {
	char      pf_name[DSL_NAME_MAX];
	uint64_t  pf_guid;
	char      pf_origin[DSL_NAME_MAX];  /* origin snapshot ("": not a clone) */
	uint64_t  pf_origin_guid;
	dsl_snap_info_t *pf_snaps;          /* up to the sent one (all when it has none) */
	int       pf_nsnaps;
	int       pf_to;                    /* index of the sent snapshot, -1: none */
	bool      pf_done;                  /* placed in the order */
} pkg_fs_t;

/* One substream: snapshot ps_snap from ps_from (full names; "": a full stream). */
typedef struct pkg_sub {
	char      ps_snap[DSL_NAME_MAX];
	char      ps_from[DSL_NAME_MAX];
	size_t    ps_fs;                    /* its file system */
	bool      ps_first;                 /* its file system's first: carries the properties */
	uint64_t  ps_size;                  /* estimate */
} pkg_sub_t;

typedef struct pkg_send {
	dsl_pool_t *pk_dp;
	const host_send_args_t *pk_a;
	char      pk_top[DSL_NAME_MAX];     /* the sent file system */
	const char *pk_snapname;            /* the sent snapshot's short name */
	char      pk_base[2 * DSL_NAME_MAX + 2];  /* the base, full name ("": none) */
	const char *pk_basename;            /* its short name when a snapshot of the top */
	uint64_t  pk_basetxg;
	tarn_array_t pk_fss;                /* pkg_fs_t, parents before children */
	tarn_array_t pk_subs;               /* pkg_sub_t, in sending order */
} pkg_send_t;

#define PKG_FS(pk, i)   TARN_ARRAY_AT(&(pk)->pk_fss, pkg_fs_t, i)
#define PKG_SUB(pk, i)  TARN_ARRAY_AT(&(pk)->pk_subs, pkg_sub_t, i)

/* dsl_dataset_iter: one more file system, with its snapshots up to the sent one. */
static int
pkg_fs_add(void *arg, const char *name, int depth)
{
	pkg_send_t *pk = arg;
	char err[256];
	(void) depth;

	pkg_fs_t *f = tarn_array_push(&pk->pk_fss);
	(void) snprintf(f->pf_name, sizeof (f->pf_name), "%s", name);
	f->pf_to = -1;
	dsl_prop_val_t *v = tarn_alloc(sizeof (*v));
	if (dsl_prop_get(pk->pk_dp, name, DSL_PROP_GUID, true, v, err, sizeof (err)) == 0)
		f->pf_guid = v->dpv_num;
	tarn_free(v);
	dsl_snap_info_t si;
	if (dsl_dataset_origin(pk->pk_dp, name, f->pf_origin, sizeof (f->pf_origin)) != 0)
		f->pf_origin[0] = '\0';
	if (f->pf_origin[0] != '\0' &&
	    dsl_snapshot_info(pk->pk_dp, f->pf_origin, &si, err, sizeof (err)) == 0)
		f->pf_origin_guid = si.dsi_guid;
	int e = dsl_snapshot_list(pk->pk_dp, name, &f->pf_snaps, &f->pf_nsnaps, err,
	    sizeof (err));
	if (e != 0) {
		(void) host_report("send", name, e, err);
		return (HOST_FAILED);
	}
	for (int i = 0; i < f->pf_nsnaps; i++) {
		const char *at = strchr(f->pf_snaps[i].dsi_name, '@');
		if (at != NULL && strcmp(at + 1, pk->pk_snapname) == 0) {
			f->pf_to = i;
			f->pf_nsnaps = i + 1;   /* the later ones are not the package's */
			break;
		}
	}
	return (0);
}

static void
pkg_fini(pkg_send_t *pk)
{
	for (size_t i = 0; i < tarn_array_len(&pk->pk_fss); i++)
		tarn_free(PKG_FS(pk, i).pf_snaps);
	tarn_array_fini(&pk->pk_fss);
	tarn_array_fini(&pk->pk_subs);
}

/* The package's file system of that name (len bytes of it), -1: not there. */
static int
pkg_fs_find(pkg_send_t *pk, const char *name, size_t len)
{
	for (size_t i = 0; i < tarn_array_len(&pk->pk_fss); i++) {
		const char *n = PKG_FS(pk, i).pf_name;
		if (strlen(n) == len && strncmp(n, name, len) == 0)
			return ((int)i);
	}
	return (-1);
}

/* The snapshot of f with that short name, -1: none. */
static int
pkg_snap_find(const pkg_fs_t *f, const char *snapname)
{
	for (int i = 0; i < f->pf_nsnaps; i++) {
		const char *at = strchr(f->pf_snaps[i].dsi_name, '@');
		if (at != NULL && strcmp(at + 1, snapname) == 0)
			return (i);
	}
	return (-1);
}

/* A bookmark of the top file system as the base: its txg (reported when missing). */
static int
pkg_base_bookmark(pkg_send_t *pk)
{
	dsl_bookmark_info_t *bv = NULL;
	int n = 0, found = -1;
	char err[256];

	if (dsl_bookmark_list(pk->pk_dp, pk->pk_top, &bv, &n, err, sizeof (err)) == 0) {
		for (int i = 0; i < n; i++)
			if (strcmp(bv[i].dbi_name, pk->pk_base) == 0)
				found = i;
	}
	if (found >= 0)
		pk->pk_basetxg = bv[found].dbi_txg;
	tarn_free(bv);
	if (found < 0)
		return (host_report("open", pk->pk_base, ENOENT, "dataset does not exist"));
	if (pk->pk_a->hsa_replicate)
		return (host_report("send", pk->pk_base, EINVAL,
		    "a bookmark cannot be the base of a replication stream"));
	return (0);
}

/*
 * The base as given (-i/-I: "@b", "b", "fs@b", "#bm", "fs#bm") made a
 * full name and checked: it exists, is of the top file system (or its
 * origin, without -R) and older than the sent snapshot.
 */
static int
pkg_base(pkg_send_t *pk)
{
	const char *from = pk->pk_a->hsa_from;
	const pkg_fs_t *top = &PKG_FS(pk, 0);
	char err[256];

	if (from == NULL || from[0] == '\0')
		return (0);
	if (from[0] == '@' || from[0] == '#')
		(void) snprintf(pk->pk_base, sizeof (pk->pk_base), "%s%s", pk->pk_top, from);
	else if (strpbrk(from, "@#") == NULL)
		(void) snprintf(pk->pk_base, sizeof (pk->pk_base), "%s@%s", pk->pk_top, from);
	else
		(void) snprintf(pk->pk_base, sizeof (pk->pk_base), "%s", from);
	if (strlen(pk->pk_base) >= DSL_NAME_MAX)
		return (host_report("send", from, ENAMETOOLONG, "name is too long"));
	size_t fl = strcspn(pk->pk_base, "@#");
	bool same = fl == strlen(pk->pk_top) && strncmp(pk->pk_base, pk->pk_top, fl) == 0;
	if (pk->pk_base[fl] == '#') {
		if (!same)
			return (host_report("send", pk->pk_a->hsa_snap, EXDEV,
			    "incremental source must be an earlier snapshot of the same dataset"));
		if (pkg_base_bookmark(pk) != 0)
			return (HOST_FAILED);
	} else {
		dsl_snap_info_t si;
		int e = dsl_snapshot_info(pk->pk_dp, pk->pk_base, &si, err, sizeof (err));
		if (e != 0)
			return (host_report("open", pk->pk_base, e, err));
		pk->pk_basetxg = si.dsi_txg;
		if (same)
			pk->pk_basename = pk->pk_base + fl + 1;
		else if (pk->pk_a->hsa_replicate || strcmp(top->pf_origin, pk->pk_base) != 0)
			return (host_report("send", pk->pk_a->hsa_snap, EXDEV,
			    "incremental source must be an earlier snapshot of the same dataset"));
	}
	if (same && pk->pk_basetxg >= top->pf_snaps[top->pf_to].dsi_txg)
		return (host_report("send", pk->pk_a->hsa_snap, EXDEV,
		    "incremental source must be an earlier snapshot of the same dataset"));
	return (0);
}

/* The file system of a snapshot name in the package, -1: none. */
static int
pkg_fs_of(pkg_send_t *pk, const char *snap)
{
	return (pkg_fs_find(pk, snap, strcspn(snap, "@#")));
}

/*
 * Whether a clone goes as an incremental stream from its origin (as zfs
 * sends it: the receiver makes it a clone of the origin it has by guid)
 * or as a full stream (a file system of its own at the target): the
 * former, since dsl_receive makes a new file system whose base is a
 * snapshot elsewhere in the pool a clone of it.
 */
#define PKG_CLONES_AS_CLONES true

/* Is f's origin a snapshot the package carries (so that f goes as its clone)? */
static bool
pkg_origin_sent(pkg_send_t *pk, const pkg_fs_t *f)
{
	if (!PKG_CLONES_AS_CLONES || f->pf_origin[0] == '\0')
		return (false);
	int o = pkg_fs_of(pk, f->pf_origin);
	if (o < 0 || PKG_FS(pk, o).pf_to < 0)
		return (false);
	return (pkg_snap_find(&PKG_FS(pk, o), strchr(f->pf_origin, '@') + 1) >= 0);
}

static void
pkg_sub_add(pkg_send_t *pk, size_t fi, const char *snap, const char *from)
{
	pkg_sub_t *s = tarn_array_push(&pk->pk_subs);
	(void) snprintf(s->ps_snap, sizeof (s->ps_snap), "%s", snap);
	(void) snprintf(s->ps_from, sizeof (s->ps_from), "%s", from != NULL ? from : "");
	s->ps_fs = fi;
	s->ps_first = tarn_array_len(&pk->pk_subs) == 1 ||
	    PKG_SUB(pk, tarn_array_len(&pk->pk_subs) - 2).ps_fs != fi;
}

/* The substreams of file system fi (see the theory comment). */
static void
pkg_fs_subs(pkg_send_t *pk, size_t fi)
{
	const pkg_fs_t *f = &PKG_FS(pk, fi);
	const char *start = NULL;
	int i0 = 0;

	if (f->pf_to < 0)
		return;
	if (fi == 0 && pk->pk_base[0] != '\0') {
		start = pk->pk_base;
		while (i0 < f->pf_nsnaps && f->pf_snaps[i0].dsi_txg <= pk->pk_basetxg)
			i0++;
	} else if (pk->pk_basename != NULL && pkg_snap_find(f, pk->pk_basename) >= 0) {
		i0 = pkg_snap_find(f, pk->pk_basename);
		start = f->pf_snaps[i0++].dsi_name;
	} else if (pkg_origin_sent(pk, f)) {
		start = f->pf_origin;
	}
	if (i0 > f->pf_to)
		return;
	if (start != NULL && !pk->pk_a->hsa_intermediate) {
		/* -R -i: the base to the sent snapshot only */
		pkg_sub_add(pk, fi, f->pf_snaps[f->pf_to].dsi_name, start);
		return;
	}
	for (int i = i0; i <= f->pf_to; i++)
		pkg_sub_add(pk, fi, f->pf_snaps[i].dsi_name, i == i0 ? start :
		    f->pf_snaps[i - 1].dsi_name);
}

/* May f go now: its parent and its origin's file system (when in the package) went? */
static bool
pkg_fs_ready(pkg_send_t *pk, const pkg_fs_t *f)
{
	const char *slash = strrchr(f->pf_name, '/');
	if (slash != NULL) {
		int p = pkg_fs_find(pk, f->pf_name, (size_t)(slash - f->pf_name));
		if (p >= 0 && !PKG_FS(pk, p).pf_done)
			return (false);
	}
	if (f->pf_origin[0] != '\0') {
		int o = pkg_fs_of(pk, f->pf_origin);
		if (o >= 0 && !PKG_FS(pk, o).pf_done)
			return (false);
	}
	return (true);
}

/* Every substream, file systems in an order the receiver can follow. */
static void
pkg_plan(pkg_send_t *pk)
{
	size_t n = tarn_array_len(&pk->pk_fss), placed = 0;

	while (placed < n) {
		bool progress = false;
		for (size_t i = 0; i < n; i++) {
			pkg_fs_t *f = &PKG_FS(pk, i);
			if (f->pf_done || !pkg_fs_ready(pk, f))
				continue;
			f->pf_done = true;
			pkg_fs_subs(pk, i);
			placed++;
			progress = true;
		}
		if (!progress) {
			/* a cycle cannot be; should one be, the rest goes in order */
			for (size_t i = 0; i < n; i++) {
				if (!PKG_FS(pk, i).pf_done) {
					PKG_FS(pk, i).pf_done = true;
					pkg_fs_subs(pk, i);
					placed++;
				}
			}
		}
	}
}

/* dsl_holds: one more tag of the snapshot. */
static void
pkg_hold_add(void *arg, const char *snap, const char *tag, uint64_t when)
{
	(void) snap; (void) when;
	json_object_array_add(arg, json_object_new_string(tag));
}

/* The header's entry of one file system. */
static json_object *
pkg_fs_json(pkg_send_t *pk, const pkg_fs_t *f)
{
	json_object *o = json_object_new_object(), *snaps = json_object_new_array();
	char err[256];

	json_object_object_add(o, "name", json_object_new_string(f->pf_name));
	json_object_object_add(o, "guid", json_object_new_uint64(f->pf_guid));
	if (f->pf_origin_guid != 0)
		json_object_object_add(o, "origin", json_object_new_uint64(f->pf_origin_guid));
	json_object_object_add(o, "sent", json_object_new_boolean(f->pf_to >= 0));
	size_t plen;
	char *props = host_send_props(pk->pk_dp, f->pf_name, &plen);
	json_object *po = props != NULL ? json_tokener_parse(props) : NULL;
	tarn_free(props);
	json_object_object_add(o, "props", po != NULL ? po : json_object_new_object());
	for (int i = 0; i < f->pf_nsnaps; i++) {
		const dsl_snap_info_t *si = &f->pf_snaps[i];
		json_object *s = json_object_new_object();
		json_object_object_add(s, "name", json_object_new_string(strchr(si->dsi_name,
		    '@') + 1));
		json_object_object_add(s, "guid", json_object_new_uint64(si->dsi_guid));
		json_object_object_add(s, "txg", json_object_new_uint64(si->dsi_txg));
		json_object_object_add(s, "creation", json_object_new_uint64(si->dsi_creation));
		if (pk->pk_a->hsa_holds && si->dsi_userrefs > 0) {
			json_object *h = json_object_new_array();
			(void) dsl_holds(pk->pk_dp, si->dsi_name, pkg_hold_add, h, err,
			    sizeof (err));
			json_object_object_add(s, "holds", h);
		}
		json_object_array_add(snaps, s);
	}
	json_object_object_add(o, "snaps", snaps);
	return (o);
}

/* The header (see the theory comment), as JSON text (caller puts). */
static json_object *
pkg_header(pkg_send_t *pk)
{
	const host_send_args_t *a = pk->pk_a;
	json_object *h = json_object_new_object(), *fss = json_object_new_array();

	json_object_object_add(h, "version", json_object_new_int(1));
	json_object_object_add(h, "toname", json_object_new_string(a->hsa_snap));
	if (pk->pk_basename != NULL)
		json_object_object_add(h, "from", json_object_new_string(pk->pk_basename));
	json_object_object_add(h, "replicate", json_object_new_boolean(a->hsa_replicate));
	json_object_object_add(h, "intermediate", json_object_new_boolean(a->hsa_intermediate));
	json_object_object_add(h, "holds", json_object_new_boolean(a->hsa_holds));
	for (size_t i = 0; i < tarn_array_len(&pk->pk_fss); i++)
		json_object_array_add(fss, pkg_fs_json(pk, &PKG_FS(pk, i)));
	json_object_object_add(h, "fss", fss);
	return (h);
}

/* The base of a substream as zfs prints it: "@a" of the same file system, else whole. */
static const char *
pkg_from_short(const pkg_sub_t *s)
{
	size_t fl = strcspn(s->ps_from, "@#");
	if (fl == strcspn(s->ps_snap, "@") && strncmp(s->ps_from, s->ps_snap, fl) == 0)
		return (s->ps_from + fl);
	return (s->ps_from);
}

/* -v / -P: each substream's estimate and the total (parts the command line prints). */
static int
pkg_estimate(pkg_send_t *pk)
{
	const host_send_args_t *a = pk->pk_a;
	uint64_t total = 0;
	char err[512];

	for (size_t i = 0; i < tarn_array_len(&pk->pk_subs); i++) {
		pkg_sub_t *s = &PKG_SUB(pk, i);
		dsl_send_opts_t o = { .dso_from = s->ps_from[0] != '\0' ? s->ps_from : NULL,
			.dso_flags = a->hsa_flags };
		int e = dsl_send_estimate(pk->pk_dp, s->ps_snap, &o, &s->ps_size, err,
		    sizeof (err));
		if (e != 0)
			return (host_report("send", s->ps_snap, e, err));
		total += s->ps_size;
		host_send_emit_estimate(s->ps_from[0] != '\0' ? pkg_from_short(s) : NULL,
		    s->ps_snap, s->ps_size);
	}
	host_send_emit_total(total);
	return (0);
}

/* The substreams themselves. */
static int
pkg_send_subs(pkg_send_t *pk, dsl_stream_out_t *so)
{
	const host_send_args_t *a = pk->pk_a;
	bool props = a->hsa_props || a->hsa_replicate;
	char err[512];

	for (size_t i = 0; i < tarn_array_len(&pk->pk_subs); i++) {
		const pkg_sub_t *s = &PKG_SUB(pk, i);
		dsl_send_opts_t o = { .dso_from = s->ps_from[0] != '\0' ? s->ps_from : NULL,
			.dso_flags = a->hsa_flags };
		char *p = NULL;
		if (props && s->ps_first) {
			p = host_send_props(pk->pk_dp, PKG_FS(pk, s->ps_fs).pf_name,
			    &o.dso_propslen);
			o.dso_props = p;
		}
		host_send_emit_start(s->ps_snap);
		int e = dsl_send(pk->pk_dp, s->ps_snap, &o, so, err, sizeof (err));
		tarn_free(p);
		if (e != 0)
			return (host_report("send", s->ps_snap, e, err));
	}
	return (0);
}

/* Gather the package: its file systems, the base, the substreams. */
static int
pkg_gather(pkg_send_t *pk)
{
	const host_send_args_t *a = pk->pk_a;
	const char *at = strchr(a->hsa_snap, '@');

	if (at == NULL || at[1] == '\0')
		return (host_report("send", a->hsa_snap, EINVAL, "not a snapshot name"));
	(void) snprintf(pk->pk_top, sizeof (pk->pk_top), "%.*s", (int)(at - a->hsa_snap),
	    a->hsa_snap);
	pk->pk_snapname = at + 1;
	if (!dsl_dataset_exists(pk->pk_dp, pk->pk_top))
		return (host_report("open", a->hsa_snap, ENOENT, "dataset does not exist"));
	if (dsl_dataset_iter(pk->pk_dp, pk->pk_top, a->hsa_replicate ? -1 : 0, pkg_fs_add,
	    pk) != 0)
		return (HOST_FAILED);
	if (tarn_array_len(&pk->pk_fss) == 0 || PKG_FS(pk, 0).pf_to < 0)
		return (host_report("open", a->hsa_snap, ENOENT, "dataset does not exist"));
	if (pkg_base(pk) != 0)
		return (HOST_FAILED);
	pkg_plan(pk);
	return (0);
}

int
host_send_package(struct dsl_pool *dp, const host_send_args_t *a, dsl_stream_out_t *so)
{
	pkg_send_t pk = { .pk_dp = dp, .pk_a = a };
	int r;

	tarn_array_init(&pk.pk_fss, sizeof (pkg_fs_t));
	tarn_array_init(&pk.pk_subs, sizeof (pkg_sub_t));
	r = pkg_gather(&pk);
	if (r == 0 && (a->hsa_verbose || a->hsa_parsable))
		r = pkg_estimate(&pk);
	if (r == 0 && !a->hsa_dryrun) {
		json_object *h = pkg_header(&pk);
		size_t len;
		const char *text = json_object_to_json_string_length(h, JSON_C_TO_STRING_PLAIN,
		    &len);
		int e = dsl_stream_put_package(so, text, len);
		json_object_put(h);
		if (e == 0 && (r = pkg_send_subs(&pk, so)) == 0)
			e = dsl_stream_put_package_end(so);
		if (e != 0)
			r = host_report("send", a->hsa_snap, e, NULL);
	}
	pkg_fini(&pk);
	return (r);
}
