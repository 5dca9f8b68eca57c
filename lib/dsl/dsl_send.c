/*
 * dsl_send.c — zfs send: a snapshot as a stream of records, full or
 * incremental from an older snapshot or a bookmark, and the resume
 * tokens that let an interrupted stream go on where it stopped.
 *
 * Theory.  The stream describes the snapshot's object set at the level
 * of the dmu: objects (type, block size, bonus) and their blocks.  The
 * file system above (inodes in bonus buffers, directories as ZAP
 * objects, xattrs, ACLs) travels as it is stored, so the receiver gets
 * every file attribute without this layer knowing any of them, and the
 * object numbers stay the same, which is what lets a later incremental
 * stream apply.  dmu_send_walk finds what changed after the base's txg
 * by birth times (a bookmark keeps just that txg and the guid), so an
 * incremental send reads only the changed blocks.
 *
 * The begin record names the snapshot and carries its guid and creation
 * time (the receiver gives its new snapshot the same guid: that is how
 * the next incremental finds its base) and the base's guid; the end
 * record repeats the guid.  -c / -w send blocks as stored (compressed
 * bytes with their algorithm), so the receiver writes them unchanged.
 *
 * A resume token (receive_resume_token) is "tarn1-" then the XXH3-64
 * of its text, then the text in hex: the snapshot's name, its guid, the
 * base's guid, the object and offset to go on from, the bytes received
 * and the stream's flags.  send -t sends from there: the walk skips
 * what lies before, and the begin record says where it starts.
 */
#include "dsl_recv_impl.h"

#include <endian.h>
#include <xxhash.h>

typedef struct dsl_send_base {
	uint64_t txg, guid;
	uint64_t snapobj;        /* 0 for a bookmark */
	bool     origin;         /* the clone's origin, not a snapshot of its own */
} dsl_send_base_t;

typedef struct dsl_send_snap {
	char     fs[DSL_NAME_MAX];
	uint64_t head, obj;
	dsl_snap_phys_t sp;
} dsl_send_snap_t;

/* The snapshot to send (lock held). */
static int
dsl_send_lookup(dsl_pool_t *dp, const char *snap, dsl_send_snap_t *s, char *err,
    size_t errlen)
{
	const char *at = strchr(snap, '@');
	if (at == NULL || at == snap || (size_t)(at - snap) >= sizeof (s->fs)) {
		(void) snprintf(err, errlen, "not a snapshot name");
		return (SET_ERROR(EINVAL));
	}
	(void) snprintf(s->fs, sizeof (s->fs), "%.*s", (int)(at - snap), snap);
	int e = dsl_snap_lookup(dp, snap, &s->head, &s->obj, err, errlen);
	if (e == 0)
		e = dsl_snap_read(dp->dp_mos, s->obj, &s->sp);
	return (e);
}

/* The base of an incremental stream: a snapshot or bookmark (lock held). */
static int
dsl_send_base(dsl_pool_t *dp, const dsl_send_snap_t *s, const char *from, dsl_send_base_t *b,
    char *err, size_t errlen)
{
	char name[DSL_NAME_MAX * 2];
	if (from[0] == '@' || from[0] == '#')
		(void) snprintf(name, sizeof (name), "%s%s", s->fs, from);
	else
		(void) snprintf(name, sizeof (name), "%s", from);
	const char *sep = strpbrk(name, "@#");
	if (sep == NULL) {
		(void) snprintf(err, errlen, "incremental source must be a snapshot or bookmark");
		return (SET_ERROR(EINVAL));
	}
	uint64_t head;
	int e;
	if (*sep == '@') {
		dsl_snap_phys_t bp;
		if ((e = dsl_snap_lookup(dp, name, &head, &b->snapobj, err, errlen)) != 0)
			return (e);
		if ((e = dsl_snap_read(dp->dp_mos, b->snapobj, &bp)) != 0)
			return (e);
		dsl_dataset_phys_t dd;
		if ((e = dsl_phys_read(dp, s->head, &dd)) != 0)
			return (e);
		/* the same file system, or (send -i origin) the clone's origin */
		if (head != s->head && b->snapobj != dd.dd_origin_obj) {
			(void) snprintf(err, errlen, "incremental source must be in same filesystem");
			return (SET_ERROR(EXDEV));
		}
		b->txg = bp.ds_txg;
		b->guid = bp.ds_guid;
		b->origin = head != s->head;
	} else {
		char fs[DSL_NAME_MAX];
		(void) snprintf(fs, sizeof (fs), "%.*s", (int)(sep - name), name);
		if (strcmp(fs, s->fs) != 0) {
			(void) snprintf(err, errlen, "incremental source must be in same filesystem");
			return (SET_ERROR(EXDEV));
		}
		dsl_dataset_phys_t dd;
		uint64_t rec[3];
		if ((e = dsl_lookup(dp, fs, &head, err, errlen)) != 0 ||
		    (e = dsl_phys_read(dp, head, &dd)) != 0)
			return (e);
		e = dd.dd_bookmark_zap == 0 ? SET_ERROR(ENOENT) :
		    zap_lookup(dp->dp_mos, dd.dd_bookmark_zap, sep + 1, 8, 3, rec);
		if (e == ENOENT)
			(void) snprintf(err, errlen, "bookmark '%s' does not exist", name);
		if (e != 0)
			return (e);
		b->guid = rec[0];
		b->txg = rec[1];
		b->snapobj = 0;
	}
	if (b->txg >= s->sp.ds_txg) {
		(void) snprintf(err, errlen, "incremental source must be an earlier snapshot of "
		    "the same dataset");
		return (SET_ERROR(EXDEV));
	}
	return (0);
}

/* The snapshot and the base of a send (the pool's lock taken here). */
static int
dsl_send_resolve(dsl_pool_t *dp, const char *snap, const dsl_send_opts_t *opts,
    dsl_send_snap_t *s, dsl_send_base_t *b, char *err, size_t errlen)
{
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	int e = dsl_feature_check(dp, err, errlen);
	if (e == 0)
		e = dsl_send_lookup(dp, snap, s, err, errlen);
	if (e == 0 && opts->dso_from != NULL)
		e = dsl_send_base(dp, s, opts->dso_from, b, err, errlen);
	tarn_mutex_unlock(&dp->dp_lock);
	return (e);
}

/* ---- the records ---- */

/*
 * Frees are gathered before they are written: adjacent ranges of one
 * object (the holes of an indirect block, the range past the end) and
 * adjacent free-object ranges go out as one record each.
 */
typedef struct dsl_send_ctx {
	dsl_stream_out_t *so;
	int flags;
	uint64_t fr_obj, fr_off, fr_len;       /* pending FREE (fr_len 0: none) */
	uint64_t fo_first, fo_count;           /* pending FREEOBJECTS (0: none) */
} dsl_send_ctx_t;

static int
dsl_send_flush(dsl_send_ctx_t *c)
{
	int e = 0;
	if (c->fr_len != 0) {
		dsl_drr_t h = { .drr_type = DSL_DRR_FREE };
		h.drr_u[0] = c->fr_obj;
		h.drr_u[1] = c->fr_off;
		h.drr_u[2] = c->fr_len;
		c->fr_len = 0;
		e = dsl_stream_put(c->so, &h, NULL);
	}
	if (e == 0 && c->fo_count != 0) {
		dsl_drr_t h = { .drr_type = DSL_DRR_FREEOBJECTS };
		h.drr_u[0] = c->fo_first;
		h.drr_u[1] = c->fo_count;
		c->fo_count = 0;
		e = dsl_stream_put(c->so, &h, NULL);
	}
	return (e);
}

static int
dsl_send_object(void *arg, const dmu_send_object_t *o)
{
	dsl_send_ctx_t *c = arg;
	int e = dsl_send_flush(c);
	if (e != 0)
		return (e);
	dsl_drr_t h = { .drr_type = DSL_DRR_OBJECT, .drr_plen = o->dso_bonuslen,
		.drr_flags = o->dso_new ? DSL_DRR_F_NEW : 0 };
	h.drr_u[0] = o->dso_obj;
	h.drr_u[1] = o->dso_type;
	h.drr_u[2] = o->dso_bonustype;
	h.drr_u[3] = o->dso_blksz;
	h.drr_u[4] = o->dso_bonuslen;
	h.drr_u[5] = o->dso_nlevels | ((uint64_t)o->dso_checksum << 8) |
	    ((uint64_t)o->dso_compress << 16);
	h.drr_u[6] = o->dso_maxblkid;
	return (dsl_stream_put(c->so, &h, o->dso_bonus));
}

static int
dsl_send_freeobjects(void *arg, uint64_t first, uint64_t count)
{
	dsl_send_ctx_t *c = arg;
	if (c->fo_count != 0 && c->fr_len == 0 && c->fo_first + c->fo_count == first) {
		c->fo_count += count;
		return (0);
	}
	int e = dsl_send_flush(c);
	c->fo_first = first;
	c->fo_count = count;
	return (e);
}

static int
dsl_send_block(void *arg, const dmu_send_block_t *b)
{
	dsl_send_ctx_t *c = arg;
	int e = dsl_send_flush(c);
	if (e != 0)
		return (e);
	dsl_drr_t h = { .drr_type = DSL_DRR_WRITE, .drr_plen = b->dsb_psize };
	if (b->dsb_comp != ZIO_COMPRESS_OFF)
		h.drr_flags |= DSL_DRR_F_STORED;
	h.drr_u[0] = b->dsb_obj;
	h.drr_u[1] = b->dsb_blkid * b->dsb_lsize;
	h.drr_u[2] = b->dsb_lsize;
	h.drr_u[3] = b->dsb_psize;
	h.drr_u[4] = b->dsb_comp;
	h.drr_u[5] = (c->flags & DSL_SEND_RAW) ? b->dsb_cksum : 0;
	return (dsl_stream_put(c->so, &h, b->dsb_data));
}

static int
dsl_send_free(void *arg, uint64_t obj, uint64_t off, uint64_t len)
{
	dsl_send_ctx_t *c = arg;
	if (c->fr_len != 0 && c->fo_count == 0 && c->fr_obj == obj &&
	    c->fr_len != DMU_OBJECT_END && c->fr_off + c->fr_len == off) {
		c->fr_len = len == DMU_OBJECT_END || c->fr_len + len < len ? DMU_OBJECT_END :
		    c->fr_len + len;
		return (0);
	}
	int e = dsl_send_flush(c);
	c->fr_obj = obj;
	c->fr_off = off;
	c->fr_len = len;
	return (e);
}

static const dmu_send_cb_t dsl_send_cb = {
	.dsc_object = dsl_send_object, .dsc_freeobjects = dsl_send_freeobjects,
	.dsc_block = dsl_send_block, .dsc_free = dsl_send_free,
};

static int
dsl_send_begin(dsl_stream_out_t *so, const char *snap, const dsl_send_snap_t *s,
    const dsl_send_base_t *b, const dsl_send_opts_t *o)
{
	size_t nl = strlen(snap) + 1, pl = o->dso_props != NULL ? o->dso_propslen : 0;
	if (nl + pl > 16 * MiB)
		return (SET_ERROR(E2BIG));
	char *payload = tarn_alloc(nl + pl);
	memcpy(payload, snap, nl);
	if (pl > 0)
		memcpy(payload + nl, o->dso_props, pl);
	dsl_drr_t h = { .drr_type = DSL_DRR_BEGIN, .drr_plen = (uint32_t)(nl + pl),
		.drr_flags = (pl > 0 ? DSL_DRR_F_PROPS : 0) |
		    (b != NULL && b->origin ? DSL_DRR_F_CLONE : 0) |
		    (o->dso_resume ? DSL_DRR_F_RESUME : 0) };
	h.drr_u[DRB_VERSION] = DSL_STREAM_VERSION;
	h.drr_u[DRB_FEATURES] = (uint64_t)o->dso_flags &
	    (DSL_SEND_COMPRESSED | DSL_SEND_RAW | DSL_SEND_LARGE | DSL_SEND_EMBED);
	h.drr_u[DRB_TOGUID] = s->sp.ds_guid;
	h.drr_u[DRB_FROMGUID] = b != NULL ? b->guid : 0;
	h.drr_u[DRB_CREATION] = s->sp.ds_creation;
	h.drr_u[DRB_RESUME_OBJ] = o->dso_resume_obj;
	h.drr_u[DRB_RESUME_OFF] = o->dso_resume_off;
	int e = dsl_stream_put(so, &h, payload);
	tarn_free(payload);
	return (e);
}

/*
 * send --saved FS: the partial state of a resumable receive into FS, as
 * a stream whose receive saves that state again (the sender of the
 * interrupted stream can then complete it with send -t).  Its begin
 * record has the interrupted stream's name, guids and resume point, the
 * feature DSL_SEND_SAVED, and after the name its flags and bytes.  The
 * work dataset's objects go as an incremental stream from its origin
 * (the base) or as a full one.
 */
static int
dsl_send_saved_begin(dsl_stream_out_t *so, const dsl_recv_saved_t *sv,
    const dsl_send_opts_t *o)
{
	const dsl_resume_t *st = &sv->sv_state;
	size_t nl = strlen(st->dr_toname) + 1;
	uint8_t payload[DSL_NAME_MAX + 16];
	uint64_t v[2] = { htole64((uint64_t)st->dr_flags), htole64(st->dr_bytes) };
	memcpy(payload, st->dr_toname, nl);
	memcpy(payload + nl, v, sizeof (v));
	dsl_drr_t h = { .drr_type = DSL_DRR_BEGIN, .drr_plen = (uint32_t)(nl + sizeof (v)),
		.drr_flags = sv->sv_clone ? DSL_DRR_F_CLONE : 0 };
	h.drr_u[DRB_VERSION] = DSL_STREAM_VERSION;
	h.drr_u[DRB_FEATURES] = ((uint64_t)o->dso_flags & (DSL_SEND_COMPRESSED | DSL_SEND_RAW |
	    DSL_SEND_LARGE | DSL_SEND_EMBED)) | DSL_SEND_SAVED;
	h.drr_u[DRB_TOGUID] = st->dr_toguid;
	h.drr_u[DRB_FROMGUID] = st->dr_fromguid;
	h.drr_u[DRB_RESUME_OBJ] = st->dr_obj;
	h.drr_u[DRB_RESUME_OFF] = st->dr_off;
	return (dsl_stream_put(so, &h, payload));
}

static int
dsl_send_saved(dsl_pool_t *dp, const char *fs, const dsl_send_opts_t *opts,
    dsl_stream_out_t *so, char *err, size_t errlen)
{
	dsl_recv_saved_t sv;
	int e = dsl_recv_saved_hold(dp, fs, &sv, err, errlen);
	if (e != 0)
		return (e);
	dmu_objset_props_t p = { .osp_checksum = ZIO_CHECKSUM_DEFAULT,
		.osp_compress = ZIO_COMPRESS_OFF, .osp_copies = 1 };
	objset_t *os = NULL;
	e = dmu_objset_open(spa_dmu_pool(dp->dp_spa), &sv.sv_bp, &p, &os);
	if (e == 0)
		e = dsl_send_saved_begin(so, &sv, opts);
	dsl_send_ctx_t c = { so, opts->dso_flags };
	int wflags = (opts->dso_flags & (DSL_SEND_COMPRESSED | DSL_SEND_RAW)) ?
	    DMU_SEND_STORED : 0;
	if (e == 0)
		e = dmu_send_walk(os, sv.sv_base_txg, wflags, 0, 0, &dsl_send_cb, &c);
	if (e == 0)
		e = dsl_send_flush(&c);
	if (e == 0) {
		dsl_drr_t h = { .drr_type = DSL_DRR_END };
		h.drr_u[0] = sv.sv_state.dr_toguid;
		e = dsl_stream_put(so, &h, NULL);
	}
	if (os != NULL)
		dmu_objset_close(os);
	dsl_recv_saved_rele(dp, &sv);
	if (e != 0 && err[0] == '\0')
		(void) snprintf(err, errlen, "%s", e == ECKSUM ?
		    "a block could not be read intact (see zpool status -v)" : strerror(e));
	return (e);
}

int
dsl_send(dsl_pool_t *dp, const char *snap, const dsl_send_opts_t *opts,
    dsl_stream_out_t *so, char *err, size_t errlen)
{
	err[0] = '\0';
	if (opts->dso_flags & DSL_SEND_SAVED)
		return (dsl_send_saved(dp, snap, opts, so, err, errlen));
	dsl_send_snap_t s;
	dsl_send_base_t b = { 0 };
	int e = dsl_send_resolve(dp, snap, opts, &s, &b, err, errlen);
	if (e != 0)
		return (e);
	objset_t *os;
	if ((e = dsl_snapshot_objset_open(dp, snap, &os, err, errlen)) != 0)
		return (e);
	e = dsl_send_begin(so, snap, &s, opts->dso_from ? &b : NULL, opts);
	dsl_send_ctx_t c = { so, opts->dso_flags };
	int wflags = (opts->dso_flags & (DSL_SEND_COMPRESSED | DSL_SEND_RAW)) ?
	    DMU_SEND_STORED : 0;
	if (e == 0)
		e = dmu_send_walk(os, b.txg, wflags, opts->dso_resume_obj, opts->dso_resume_off,
		    &dsl_send_cb, &c);
	if (e == 0)
		e = dsl_send_flush(&c);
	if (e == 0) {
		dsl_drr_t h = { .drr_type = DSL_DRR_END };
		h.drr_u[0] = s.sp.ds_guid;
		e = dsl_stream_put(so, &h, NULL);
	}
	dsl_snapshot_objset_close(dp, os);
	if (e != 0 && err[0] == '\0')
		(void) snprintf(err, errlen, "%s", e == ECKSUM ?
		    "a block could not be read intact (see zpool status -v)" : strerror(e));
	return (e);
}

int
dsl_send_estimate(dsl_pool_t *dp, const char *snap, const dsl_send_opts_t *opts,
    uint64_t *bytes, char *err, size_t errlen)
{
	err[0] = '\0';
	*bytes = 0;
	if (opts->dso_flags & DSL_SEND_SAVED) {
		/* about what the interrupted stream had brought */
		dsl_recv_saved_t sv;
		int e = dsl_recv_saved_hold(dp, snap, &sv, err, errlen);
		if (e == 0)
			*bytes = sv.sv_state.dr_bytes + 2 * sizeof (dsl_drr_t);
		if (e == 0)
			dsl_recv_saved_rele(dp, &sv);
		return (e);
	}
	dsl_send_snap_t s;
	dsl_send_base_t b = { 0 };
	int e = dsl_send_resolve(dp, snap, opts, &s, &b, err, errlen);
	if (e != 0)
		return (e);
	bool stored = (opts->dso_flags & (DSL_SEND_COMPRESSED | DSL_SEND_RAW)) != 0;
	uint64_t data = stored && s.sp.ds_preferenced != 0 ? s.sp.ds_preferenced :
	    s.sp.ds_lreferenced != 0 ? s.sp.ds_lreferenced : s.sp.ds_referenced;
	if (opts->dso_from != NULL && s.sp.ds_referenced != 0) {
		/* what was born after the base, scaled as the data is */
		uint64_t w = 0;
		char base[DSL_NAME_MAX * 2];
		if (b.snapobj != 0 && opts->dso_from[0] == '@')
			(void) snprintf(base, sizeof (base), "%s%s", s.fs, opts->dso_from);
		else
			(void) snprintf(base, sizeof (base), "%s", opts->dso_from);
		if (b.snapobj != 0 && dsl_dataset_written_since(dp, snap, base, &w, err,
		    errlen) == 0)
			data = (uint64_t)((double)data * ((double)w / (double)s.sp.ds_referenced));
		err[0] = '\0';
	}
	/* record headers: about one per 128 KiB of data, plus the fixed ones */
	*bytes = data + data / (128 * KiB) * sizeof (dsl_drr_t) + 4 * sizeof (dsl_drr_t) +
	    strlen(snap) + 1;
	return (0);
}

/* ---- resume tokens ---- */

int
dsl_resume_token_parse(const char *token, dsl_resume_t *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof (*out));
	uint64_t sum;
	int pos = 0;
	size_t tl = strlen(token);
	if (tl > 4096 || sscanf(token, "tarn1-%16" SCNx64 "-%n", &sum, &pos) != 1 || pos == 0 ||
	    (tl - (size_t)pos) % 2 != 0) {
		(void) snprintf(err, errlen, "resume token is corrupt");
		return (SET_ERROR(EINVAL));
	}
	size_t n = (tl - (size_t)pos) / 2;
	char *text = tarn_alloc(n + 1);
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (sscanf(token + pos + 2 * i, "%2x", &v) != 1)
			v = 0;
		text[i] = (char)v;
	}
	int e = 0, used = 0;
	char name[DSL_NAME_MAX];
	if (XXH3_64bits(text, n) != sum || strlen(text) != n ||
	    sscanf(text, "%255[^\t]\t%" SCNu64 "\t%" SCNu64 "\t%" SCNu64 "\t%" SCNu64 "\t%"
	    SCNu64 "\t%d%n", name, &out->dr_toguid, &out->dr_fromguid, &out->dr_obj,
	    &out->dr_off, &out->dr_bytes, &out->dr_flags, &used) != 7 || (size_t)used != n) {
		(void) snprintf(err, errlen, "resume token is corrupt");
		e = SET_ERROR(EINVAL);
	} else {
		(void) snprintf(out->dr_toname, sizeof (out->dr_toname), "%s", name);
	}
	tarn_free(text);
	return (e);
}

/* Make a token (dsl_recv.c). */
int
dsl_resume_token_make(const dsl_resume_t *r, char *buf, size_t len)
{
	char text[DSL_NAME_MAX + 160];
	int n = snprintf(text, sizeof (text), "%s\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%"
	    PRIu64 "\t%" PRIu64 "\t%d", r->dr_toname, r->dr_toguid, r->dr_fromguid, r->dr_obj,
	    r->dr_off, r->dr_bytes, r->dr_flags);
	if (n < 0 || (size_t)n >= sizeof (text) || len < 24 + 2 * (size_t)n)
		return (SET_ERROR(ENAMETOOLONG));
	int o = snprintf(buf, len, "tarn1-%016" PRIx64 "-", XXH3_64bits(text, (size_t)n));
	for (int i = 0; i < n; i++)
		o += snprintf(buf + o, len - (size_t)o, "%02x", (unsigned char)text[i]);
	return (0);
}

int
dsl_resume_send_opts(dsl_pool_t *dp, const dsl_resume_t *r, char *snap, size_t snaplen,
    char *from, size_t fromlen, dsl_send_opts_t *opts, char *err, size_t errlen)
{
	err[0] = '\0';
	memset(opts, 0, sizeof (*opts));
	from[0] = '\0';
	dsl_send_snap_t s;
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	int e = dsl_send_lookup(dp, r->dr_toname, &s, err, errlen);
	if (e == 0 && s.sp.ds_guid != r->dr_toguid) {
		(void) snprintf(err, errlen, "'%s' no longer has the same GUID as when the "
		    "stream was started", r->dr_toname);
		e = SET_ERROR(EXDEV);
	}
	tarn_mutex_unlock(&dp->dp_lock);
	if (e == 0 && r->dr_fromguid != 0) {
		/* the base: a snapshot of the same file system (or its origin), or a bookmark */
		dsl_snap_info_t *si;
		int n;
		bool found = false;
		if (dsl_snapshot_list(dp, s.fs, &si, &n, err, errlen) == 0) {
			for (int i = 0; i < n && !found; i++) {
				if (si[i].dsi_guid == r->dr_fromguid) {
					(void) snprintf(from, fromlen, "%s", si[i].dsi_name);
					found = true;
				}
			}
			tarn_free(si);
		}
		dsl_bookmark_info_t *bi;
		if (!found && dsl_bookmark_list(dp, s.fs, &bi, &n, err, errlen) == 0) {
			for (int i = 0; i < n && !found; i++) {
				if (bi[i].dbi_guid == r->dr_fromguid) {
					(void) snprintf(from, fromlen, "%s", bi[i].dbi_name);
					found = true;
				}
			}
			tarn_free(bi);
		}
		char origin[DSL_NAME_MAX];
		if (!found && dsl_dataset_origin(dp, s.fs, origin, sizeof (origin)) == 0 &&
		    origin[0] != '\0') {
			dsl_snap_info_t oi;
			if (dsl_snapshot_info(dp, origin, &oi, err, errlen) == 0 &&
			    oi.dsi_guid == r->dr_fromguid) {
				(void) snprintf(from, fromlen, "%s", origin);
				found = true;
			}
		}
		err[0] = '\0';
		if (!found) {
			(void) snprintf(err, errlen, "incremental source %" PRIu64 " no longer exists",
			    r->dr_fromguid);
			e = SET_ERROR(ENOENT);
		}
	}
	if (e != 0)
		return (e);
	(void) snprintf(snap, snaplen, "%s", r->dr_toname);
	opts->dso_from = from[0] != '\0' ? from : NULL;
	opts->dso_flags = r->dr_flags;
	opts->dso_resume_obj = r->dr_obj;
	opts->dso_resume_off = r->dr_off;
	opts->dso_resume = true;
	return (0);
}
