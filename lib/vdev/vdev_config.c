/*
 * vdev_config.c — the label config: encoding a pool header and its vdev
 * tree into the config area of a label, and decoding it back into an
 * unopened tree.  The byte layout is in docs/FORMAT.md ("Label config");
 * the constants below are its names.
 *
 * Decoding trusts nothing: every length, offset, index, type and string
 * is checked before use, and any inconsistency returns EINVAL (the
 * fuzz target tests/fuzz/fuzz_label.c holds it to that).  The checks
 * run in a first pass over the records; the tree is built only from
 * input that passed them all.
 *
 * The hot spares of a pool are records too: leaves flagged "spare" below
 * the root, after the top-level vdevs; they are decoded into a separate
 * list (root->vdev_spares), so the tree proper holds only what stores
 * data.  A spare in use also appears, with the same GUID, in the tree
 * (inside a spare group), so GUIDs are unique within the tree and within
 * the spare list, not across them.
 *
 * Cache devices are kept like spares: leaves flagged "cache" below the
 * root, after the top-level vdevs (and spares), decoded into
 * root->vdev_l2cache.  A top-level vdev's allocation class (log,
 * special) is a flag of its record; a record without one is normal, so
 * configs written before classes existed decode unchanged.
 */
#include "vdev_impl.h"

#define VCFG_MAGIC        VDEV_CONFIG_MAGIC
#define VCFG_VERSION      1
#define VCFG_HDR_SIZE     64     /* magic, cksum, version, length, reserved */
#define VCFG_CKSUM_OFF    8
#define VCFG_CKSUM_START  24     /* checksum covers [24, 64 + length) */
#define VCFG_POOL_SIZE    512    /* pool header at the start of the payload */
#define VCFG_REC_SIZE     128
#define VCFG_NO_PARENT    0xffffffffU
#define VCFG_F_OFFLINE    0x1U
#define VCFG_F_SPARE      0x2U   /* a hot spare (root's child, after the top-levels) */
#define VCFG_F_SPARE_AUTO 0x4U   /* spare group: the spare returns by itself */
#define VCFG_F_LOG        0x8U   /* top-level: allocation class log */
#define VCFG_F_SPECIAL    0x10U  /* top-level: allocation class special */
#define VCFG_F_CACHE      0x20U  /* a cache device (root's child, after the top-levels) */
#define VCFG_F_BIAS       (VCFG_F_LOG | VCFG_F_SPECIAL)
#define VCFG_F_AUX        (VCFG_F_SPARE | VCFG_F_CACHE)
#define VCFG_F_ALL        (VCFG_F_OFFLINE | VCFG_F_SPARE | VCFG_F_SPARE_AUTO | \
	VCFG_F_BIAS | VCFG_F_CACHE)

/* Pool header offsets (within the payload). */
enum {
	VP_NAME = 0, VP_POOL_GUID = 256, VP_VERSION = 264, VP_FEATURES = 272,
	VP_TXG = 280, VP_STATE = 288, VP_HOSTID = 296, VP_CTIME = 304,
	VP_LEAF_GUID = 312, VP_TOP_GUID = 320, VP_NREC = 328, VP_RECSIZE = 332,
	VP_STROFF = 336, VP_STRLEN = 340,
};

/* Record offsets. */
enum {
	VR_GUID = 0, VR_ID = 8, VR_ASIZE = 16, VR_MS_ARRAY = 24, VR_MS_SHIFT = 32,
	VR_MS_COUNT = 40, VR_TYPE = 48, VR_PARENT = 52, VR_NPARITY = 56,
	VR_ASHIFT = 60, VR_NCHILD = 64, VR_FLAGS = 68, VR_PATH_OFF = 72,
	VR_PATH_LEN = 76, VR_DTL_FIRST = 80, VR_DTL_LAST = 88,
};

static inline void
put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static inline void
put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static inline uint64_t
get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return (v);
}

static inline uint32_t
get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return (v);
}

static void
vcfg_cksum(const uint8_t *buf, uint32_t len, uint8_t out[16])
{
	zio_cksum_t zc;
	zio_checksum_compute(ZIO_CHECKSUM_XXH3_128, buf + VCFG_CKSUM_START,
	    VCFG_HDR_SIZE - VCFG_CKSUM_START + (size_t)len, &zc);
	memcpy(out, zc.zc_word, 16);
}

/* ---- encoding ---- */

typedef struct vcfg_enc {
	uint8_t *ve_rec;       /* next record */
	uint8_t *ve_str;       /* string table start */
	uint32_t ve_strlen;
	uint32_t ve_nrec;
} vcfg_enc_t;

/* Count records and string bytes; false when the tree cannot be encoded. */
static bool
vcfg_count(const vdev_t *vd, uint32_t *nrec, size_t *strlen_total)
{
	(*nrec)++;
	if (vd->vdev_ops->vop_leaf && vd->vdev_path != NULL) {
		size_t len = strlen(vd->vdev_path);
		if (len == 0 || len > VDEV_PATH_MAX)
			return (false);
		*strlen_total += len + 1;
	} else if (vd->vdev_ops->vop_leaf && vd->vdev_type != VDEV_TYPE_MISSING) {
		return (false);
	}
	for (int c = 0; c < VDEV_NCHILD(vd); c++)
		if (!vcfg_count(VDEV_CHILD(vd, c), nrec, strlen_total))
			return (false);
	const vdev_t *aux[2] = { vd->vdev_spares, vd->vdev_l2cache };
	for (int a = 0; vd->vdev_type == VDEV_TYPE_ROOT && a < 2; a++) {
		const vdev_t *sp = aux[a];
		for (int c = 0; sp != NULL && c < VDEV_NCHILD(sp); c++)
			if (!VDEV_CHILD(sp, c)->vdev_ops->vop_leaf ||
			    !vcfg_count(VDEV_CHILD(sp, c), nrec, strlen_total))
				return (false);
	}
	return (true);
}

/* Number of hot spares under root (0 for any other vdev). */
static int
vcfg_nspares(const vdev_t *vd)
{
	return (vd->vdev_type == VDEV_TYPE_ROOT && vd->vdev_spares != NULL ?
	    VDEV_NCHILD(vd->vdev_spares) : 0);
}

/* Number of cache devices under root (0 for any other vdev). */
static int
vcfg_ncache(const vdev_t *vd)
{
	return (vd->vdev_type == VDEV_TYPE_ROOT && vd->vdev_l2cache != NULL ?
	    VDEV_NCHILD(vd->vdev_l2cache) : 0);
}

/* The missed txgs of a leaf as recorded (vdev_dtl_encoded). */
static void
vcfg_put_dtl(uint8_t *r, const vdev_t *vd)
{
	uint64_t dtl[2];
	vdev_dtl_encoded(vd, dtl);
	put64(r + VR_DTL_FIRST, dtl[0]);
	put64(r + VR_DTL_LAST, dtl[1]);
}

static void
vcfg_put_rec(vcfg_enc_t *e, const vdev_t *vd, uint32_t parent, uint64_t id,
    uint32_t flags)
{
	uint8_t *r = e->ve_rec;
	uint32_t self = e->ve_nrec++;
	e->ve_rec += VCFG_REC_SIZE;
	put64(r + VR_GUID, vd->vdev_guid);
	put64(r + VR_ID, id);
	put64(r + VR_ASIZE, vd->vdev_asize);
	put64(r + VR_MS_ARRAY, vd->vdev_ms_array);
	put64(r + VR_MS_SHIFT, vd->vdev_ms_shift);
	put64(r + VR_MS_COUNT, vd->vdev_ms_count);
	put32(r + VR_TYPE, (uint32_t)vd->vdev_type);
	put32(r + VR_PARENT, parent);
	put32(r + VR_NPARITY, (uint32_t)vd->vdev_nparity);
	put32(r + VR_ASHIFT, (uint32_t)vd->vdev_ashift);
	put32(r + VR_NCHILD, (uint32_t)(VDEV_NCHILD(vd) + vcfg_nspares(vd) +
	    vcfg_ncache(vd)));
	if (vd->vdev_offline && !vd->vdev_offline_temp)
		flags |= VCFG_F_OFFLINE;
	if (vd->vdev_type == VDEV_TYPE_SPARE && vd->vdev_spare_auto)
		flags |= VCFG_F_SPARE_AUTO;
	if (vd->vdev_top == vd && (flags & VCFG_F_AUX) == 0)
		flags |= vd->vdev_alloc_bias == VDEV_BIAS_LOG ? VCFG_F_LOG :
		    vd->vdev_alloc_bias == VDEV_BIAS_SPECIAL ? VCFG_F_SPECIAL : 0;
	put32(r + VR_FLAGS, flags);
	vcfg_put_dtl(r, vd);
	if (vd->vdev_ops->vop_leaf && vd->vdev_path != NULL) {
		uint32_t len = (uint32_t)strlen(vd->vdev_path);
		put32(r + VR_PATH_OFF, e->ve_strlen);
		put32(r + VR_PATH_LEN, len);
		memcpy(e->ve_str + e->ve_strlen, vd->vdev_path, len + 1);
		e->ve_strlen += len + 1;
	}
	for (int c = 0; c < VDEV_NCHILD(vd); c++)
		vcfg_put_rec(e, VDEV_CHILD(vd, c), self, VDEV_CHILD(vd, c)->vdev_id, 0);
	for (int c = 0; c < vcfg_nspares(vd); c++)
		vcfg_put_rec(e, VDEV_CHILD(vd->vdev_spares, c), self,
		    (uint64_t)(VDEV_NCHILD(vd) + c), VCFG_F_SPARE);
	for (int c = 0; c < vcfg_ncache(vd); c++)
		vcfg_put_rec(e, VDEV_CHILD(vd->vdev_l2cache, c), self,
		    (uint64_t)(VDEV_NCHILD(vd) + vcfg_nspares(vd) + c), VCFG_F_CACHE);
}

/* Is leaf in root's tree (not one of its spares)? */
static bool
vcfg_in_tree(const vdev_t *root, const vdev_t *leaf)
{
	while (leaf->vdev_parent != NULL)
		leaf = leaf->vdev_parent;
	return (leaf == root);
}

static void
vcfg_put_pool(uint8_t *pl, const vdev_label_config_t *cfg, const vdev_t *root,
    const vdev_t *leaf)
{
	size_t nlen = strnlen(cfg->vlc_name, VDEV_POOL_NAME_MAX);
	memcpy(pl + VP_NAME, cfg->vlc_name, nlen);
	put64(pl + VP_POOL_GUID, cfg->vlc_pool_guid);
	put64(pl + VP_VERSION, cfg->vlc_version);
	put64(pl + VP_FEATURES, cfg->vlc_features);
	put64(pl + VP_TXG, cfg->vlc_txg);
	put64(pl + VP_STATE, cfg->vlc_state);
	put64(pl + VP_HOSTID, cfg->vlc_hostid);
	put64(pl + VP_CTIME, cfg->vlc_create_time);
	if (leaf != NULL) {
		put64(pl + VP_LEAF_GUID, leaf->vdev_guid);
		put64(pl + VP_TOP_GUID, leaf->vdev_top != NULL && vcfg_in_tree(root, leaf) ?
		    leaf->vdev_top->vdev_guid : 0);
	} else {
		put64(pl + VP_LEAF_GUID, cfg->vlc_leaf_guid);
		put64(pl + VP_TOP_GUID, cfg->vlc_top_guid);
	}
}

int
vdev_config_encode(const vdev_label_config_t *cfg, const vdev_t *root,
    const vdev_t *leaf, void *buf, size_t bufsize)
{
	uint32_t nrec = 0;
	size_t slen = 0;
	if (root == NULL || root->vdev_type != VDEV_TYPE_ROOT ||
	    VDEV_NCHILD(root) == 0 || !vcfg_count(root, &nrec, &slen))
		return (SET_ERROR(EINVAL));
	size_t paylen = VCFG_POOL_SIZE + (size_t)nrec * VCFG_REC_SIZE + slen;
	if (VCFG_HDR_SIZE + paylen > bufsize)
		return (SET_ERROR(E2BIG));

	uint8_t *b = buf;
	memset(b, 0, bufsize);
	uint8_t *pl = b + VCFG_HDR_SIZE;
	vcfg_put_pool(pl, cfg, root, leaf);
	put32(pl + VP_NREC, nrec);
	put32(pl + VP_RECSIZE, VCFG_REC_SIZE);
	put32(pl + VP_STROFF, VCFG_POOL_SIZE + nrec * VCFG_REC_SIZE);
	put32(pl + VP_STRLEN, (uint32_t)slen);
	vcfg_enc_t e = {
		.ve_rec = pl + VCFG_POOL_SIZE,
		.ve_str = pl + VCFG_POOL_SIZE + (size_t)nrec * VCFG_REC_SIZE,
	};
	vcfg_put_rec(&e, root, VCFG_NO_PARENT, root->vdev_id, 0);
	VERIFY3U(e.ve_nrec, ==, nrec);
	VERIFY3U(e.ve_strlen, ==, slen);

	put64(b, VCFG_MAGIC);
	put32(b + 24, VCFG_VERSION);
	put32(b + 28, (uint32_t)paylen);
	vcfg_cksum(b, (uint32_t)paylen, b + VCFG_CKSUM_OFF);
	return (0);
}

void
vdev_config_seal(void *buf, size_t bufsize)
{
	uint8_t *b = buf;
	if (bufsize < VCFG_HDR_SIZE || get64(b) != VCFG_MAGIC)
		return;
	uint32_t len = get32(b + 28);
	if (len > bufsize - VCFG_HDR_SIZE)
		return;
	vcfg_cksum(b, len, b + VCFG_CKSUM_OFF);
}

/* ---- decoding ---- */

typedef struct vcfg_rec {
	uint32_t vr_type, vr_parent, vr_nparity, vr_ashift, vr_nchild;
	uint32_t vr_seen;          /* children found so far */
	bool     vr_spare;         /* flagged a hot spare */
	bool     vr_cache;         /* flagged a cache device */
	bool     vr_spares_seen;   /* root: a spare or cache came; no top-level may follow */
	uint32_t vr_nspares;       /* root: how many of its children are spares or caches */
	uint32_t vr_flags;
	const char *vr_path;       /* into the string table, or NULL */
} vcfg_rec_t;

static bool
vcfg_is_leaf_type(uint32_t t)
{
	return (t == VDEV_TYPE_FILE || t == VDEV_TYPE_DISK || t == VDEV_TYPE_MISSING);
}

static bool
vcfg_is_pair_type(uint32_t t)
{
	return (t == VDEV_TYPE_REPLACING || t == VDEV_TYPE_SPARE);
}

/*
 * Shapes: root -> top-level (mirror, raidz, replacing, spare, leaf) or
 * spare-flagged leaf; mirror/raidz -> leaf or replacing/spare pair;
 * replacing/spare -> leaf.
 */
static bool
vcfg_shape_ok(vcfg_rec_t *pr, const vcfg_rec_t *r)
{
	bool leaf = vcfg_is_leaf_type(r->vr_type);
	if (pr->vr_type == VDEV_TYPE_ROOT) {
		if (r->vr_spare || r->vr_cache) {
			pr->vr_spares_seen = true;
			pr->vr_nspares++;
			return (leaf && (r->vr_flags & VCFG_F_BIAS) == 0);
		}
		/* one class at most */
		return (!pr->vr_spares_seen && (r->vr_flags & VCFG_F_BIAS) != VCFG_F_BIAS);
	}
	if (r->vr_spare || r->vr_cache || (r->vr_flags & VCFG_F_BIAS) != 0)
		return (false);
	if (pr->vr_type == VDEV_TYPE_MIRROR || pr->vr_type == VDEV_TYPE_RAIDZ)
		return (leaf || vcfg_is_pair_type(r->vr_type));
	if (vcfg_is_pair_type(pr->vr_type))
		return (leaf);
	return (false);
}

/* Missed txgs: leaves only; none, or first <= last. */
static bool
vcfg_dtl_ok(const uint8_t *rp, bool leaf)
{
	uint64_t first = get64(rp + VR_DTL_FIRST), last = get64(rp + VR_DTL_LAST);
	if (first == 0)
		return (last == 0);
	return (leaf && last >= first);
}

/* Check one record against its parent; fills r.  false on damage. */
static bool
vcfg_check_rec(const uint8_t *rp, uint32_t i, vcfg_rec_t *recs,
    const char *str, uint32_t strlen_total)
{
	vcfg_rec_t *r = &recs[i];
	r->vr_type = get32(rp + VR_TYPE);
	r->vr_parent = get32(rp + VR_PARENT);
	r->vr_nparity = get32(rp + VR_NPARITY);
	r->vr_ashift = get32(rp + VR_ASHIFT);
	r->vr_nchild = get32(rp + VR_NCHILD);
	uint32_t flags = get32(rp + VR_FLAGS);
	uint32_t poff = get32(rp + VR_PATH_OFF), plen = get32(rp + VR_PATH_LEN);
	bool leaf = vcfg_is_leaf_type(r->vr_type);
	r->vr_spare = (flags & VCFG_F_SPARE) != 0;
	r->vr_cache = (flags & VCFG_F_CACHE) != 0;
	r->vr_flags = flags;
	if (r->vr_spare && r->vr_cache)
		return (false);

	if (r->vr_type >= VDEV_TYPE_NTYPES || get64(rp + VR_GUID) == 0 ||
	    (flags & ~VCFG_F_ALL) != 0 || get64(rp + VR_MS_SHIFT) > 63 ||
	    !vcfg_dtl_ok(rp, leaf) ||
	    ((flags & VCFG_F_SPARE_AUTO) != 0 && r->vr_type != VDEV_TYPE_SPARE))
		return (false);
	if (r->vr_ashift != 0 && (r->vr_ashift < SPA_MINBLOCKSHIFT || r->vr_ashift > 16))
		return (false);
	bool hole = r->vr_type == VDEV_TYPE_HOLE;
	if (r->vr_nchild > VDEV_MAX_CHILDREN || ((leaf || hole) && r->vr_nchild != 0) ||
	    (!leaf && !hole && r->vr_nchild == 0))
		return (false);
	if (hole && (r->vr_parent != 0 || r->vr_spare || r->vr_cache ||
	    (flags & VCFG_F_BIAS) != 0 || i == 0))
		return (false);     /* a hole is a top-level vdev of no class */
	if (r->vr_type == VDEV_TYPE_RAIDZ ? (r->vr_nparity < 1 ||
	    r->vr_nparity > VDEV_RAIDZ_MAXPARITY || r->vr_nchild <= r->vr_nparity) :
	    r->vr_nparity != 0)
		return (false);
	/* Shape: record 0 is the root; others hang below an earlier group. */
	if (i == 0) {
		if (r->vr_type != VDEV_TYPE_ROOT || r->vr_parent != VCFG_NO_PARENT ||
		    r->vr_spare || r->vr_cache || (flags & VCFG_F_BIAS) != 0)
			return (false);
	} else {
		if (r->vr_type == VDEV_TYPE_ROOT || r->vr_parent >= i)
			return (false);
		vcfg_rec_t *pr = &recs[r->vr_parent];
		if (!vcfg_shape_ok(pr, r))
			return (false);
		if (get64(rp + VR_ID) != pr->vr_seen || pr->vr_seen >= pr->vr_nchild)
			return (false);
		pr->vr_seen++;
	}
	/* Path: leaves only, NUL-terminated inside the table, no inner NUL. */
	r->vr_path = NULL;
	if (!leaf)
		return (plen == 0 && poff == 0);
	if (plen == 0)
		return (r->vr_type == VDEV_TYPE_MISSING && poff == 0);
	if (plen > VDEV_PATH_MAX || poff >= strlen_total ||
	    plen >= strlen_total - poff || str[poff + plen] != '\0' ||
	    strnlen(str + poff, plen) != plen)
		return (false);
	r->vr_path = str + poff;
	return (true);
}

/* GUIDs are unique within the tree, within the spare list and the cache list. */
static bool
vcfg_guids_unique(const uint8_t *recs, uint32_t n)
{
	uint64_t *g = tarn_alloc((size_t)n * sizeof (uint64_t));
	uint32_t *sp = tarn_alloc((size_t)n * sizeof (uint32_t));
	bool ok = true;
	for (uint32_t i = 0; i < n && ok; i++) {
		const uint8_t *rp = recs + (size_t)i * VCFG_REC_SIZE;
		g[i] = get64(rp + VR_GUID);
		sp[i] = get32(rp + VR_FLAGS) & VCFG_F_AUX;
		for (uint32_t j = 0; j < i && ok; j++)
			ok = g[j] != g[i] || sp[j] != sp[i];
	}
	tarn_free(sp);
	tarn_free(g);
	return (ok);
}

/* The header and pool fields; *pl / *paylen locate the payload. */
static int
vcfg_check_header(const uint8_t *b, size_t bufsize, const uint8_t **plp,
    uint32_t *paylenp)
{
	uint8_t ck[16];
	if (bufsize < VCFG_HDR_SIZE || get64(b) != VCFG_MAGIC)
		return (SET_ERROR(EINVAL));
	uint32_t paylen = get32(b + 28);
	if (paylen > bufsize - VCFG_HDR_SIZE || paylen < VCFG_POOL_SIZE)
		return (SET_ERROR(EINVAL));
	vcfg_cksum(b, paylen, ck);
	if (memcmp(ck, b + VCFG_CKSUM_OFF, 16) != 0)
		return (SET_ERROR(EINVAL));
	if (get32(b + 24) != VCFG_VERSION)
		return (SET_ERROR(ENOTSUP_FORMAT));
	const uint8_t *pl = b + VCFG_HDR_SIZE;
	if (memchr(pl + VP_NAME, '\0', VDEV_POOL_NAME_MAX + 1) == NULL ||
	    pl[VP_NAME] == '\0' || get64(pl + VP_STATE) > POOL_STATE_L2CACHE ||
	    get64(pl + VP_POOL_GUID) == 0)
		return (SET_ERROR(EINVAL));
	*plp = pl;
	*paylenp = paylen;
	return (0);
}

/* Build the tree from records already checked. */
static vdev_t *
vcfg_build(const uint8_t *recp, const vcfg_rec_t *recs, uint32_t n)
{
	vdev_t **v = tarn_alloc((size_t)n * sizeof (vdev_t *));
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *rp = recp + (size_t)i * VCFG_REC_SIZE;
		vdev_t *vd = vdev_alloc((vdev_type_t)recs[i].vr_type, get64(rp + VR_GUID));
		vd->vdev_asize = get64(rp + VR_ASIZE);
		vd->vdev_ms_array = get64(rp + VR_MS_ARRAY);
		vd->vdev_ms_shift = get64(rp + VR_MS_SHIFT);
		vd->vdev_ms_count = get64(rp + VR_MS_COUNT);
		vd->vdev_nparity = (int)recs[i].vr_nparity;
		vd->vdev_ashift = recs[i].vr_ashift;
		vd->vdev_offline = (get32(rp + VR_FLAGS) & VCFG_F_OFFLINE) != 0;
		vd->vdev_spare_auto = (get32(rp + VR_FLAGS) & VCFG_F_SPARE_AUTO) != 0;
		vd->vdev_alloc_bias = (recs[i].vr_flags & VCFG_F_LOG) ? VDEV_BIAS_LOG :
		    (recs[i].vr_flags & VCFG_F_SPECIAL) ? VDEV_BIAS_SPECIAL : VDEV_BIAS_NORMAL;
		vd->vdev_dtl_txg = vd->vdev_dtl_saved[0] = get64(rp + VR_DTL_FIRST);
		vd->vdev_dtl_last = vd->vdev_dtl_saved[1] = get64(rp + VR_DTL_LAST);
		if (recs[i].vr_path != NULL)
			vd->vdev_path = tarn_strdup(recs[i].vr_path);
		if (recs[i].vr_spare) {
			if (v[0]->vdev_spares == NULL)
				v[0]->vdev_spares = vdev_alloc(VDEV_TYPE_ROOT, 0);
			vdev_add_child(v[0]->vdev_spares, vd);
		} else if (recs[i].vr_cache) {
			if (v[0]->vdev_l2cache == NULL)
				v[0]->vdev_l2cache = vdev_alloc(VDEV_TYPE_ROOT, 0);
			vdev_add_child(v[0]->vdev_l2cache, vd);
		} else if (i > 0) {
			vdev_add_child(v[recs[i].vr_parent], vd);
		}
		v[i] = vd;
	}
	vdev_t *root = v[0];
	tarn_free(v);
	return (root);
}

int
vdev_config_decode(const void *buf, size_t bufsize, vdev_label_config_t *cfg)
{
	const uint8_t *pl = NULL;
	uint32_t paylen = 0;
	memset(cfg, 0, sizeof (*cfg));
	int err = vcfg_check_header(buf, bufsize, &pl, &paylen);
	if (err != 0)
		return (err);
	uint32_t nrec = get32(pl + VP_NREC), stroff = get32(pl + VP_STROFF);
	uint32_t strl = get32(pl + VP_STRLEN);
	if (get32(pl + VP_RECSIZE) != VCFG_REC_SIZE || nrec < 2 ||
	    nrec > (paylen - VCFG_POOL_SIZE) / VCFG_REC_SIZE ||
	    stroff != VCFG_POOL_SIZE + nrec * VCFG_REC_SIZE ||
	    strl > paylen - stroff)
		return (SET_ERROR(EINVAL));
	const uint8_t *recp = pl + VCFG_POOL_SIZE;
	const char *str = (const char *)pl + stroff;
	vcfg_rec_t *recs = tarn_alloc((size_t)nrec * sizeof (vcfg_rec_t));
	bool ok = vcfg_guids_unique(recp, nrec);
	for (uint32_t i = 0; ok && i < nrec; i++)
		ok = vcfg_check_rec(recp + (size_t)i * VCFG_REC_SIZE, i, recs, str, strl);
	for (uint32_t i = 0; ok && i < nrec; i++)
		ok = recs[i].vr_seen == recs[i].vr_nchild;
	if (ok)
		ok = recs[0].vr_nchild > recs[0].vr_nspares;   /* some top-level */
	if (!ok) {
		tarn_free(recs);
		return (SET_ERROR(EINVAL));
	}
	vdev_t *root = vcfg_build(recp, recs, nrec);
	tarn_free(recs);

	uint64_t leaf_guid = get64(pl + VP_LEAF_GUID), top_guid = get64(pl + VP_TOP_GUID);
	vdev_t *leaf = leaf_guid ? vdev_lookup_guid(root, leaf_guid) : NULL;
	vdev_t *top = top_guid ? vdev_lookup_guid(root, top_guid) : NULL;
	bool spare_leaf = false;
	if (leaf_guid && leaf == NULL && root->vdev_spares != NULL) {
		/* the label of a hot spare names no top-level vdev */
		leaf = vdev_lookup_guid(root->vdev_spares, leaf_guid);
		spare_leaf = leaf != NULL;
	}
	if (leaf_guid && leaf == NULL && root->vdev_l2cache != NULL) {
		/* nor does a cache device's */
		leaf = vdev_lookup_guid(root->vdev_l2cache, leaf_guid);
		spare_leaf = leaf != NULL;
	}
	if ((leaf_guid && (leaf == NULL || !leaf->vdev_ops->vop_leaf)) ||
	    (top_guid && (top == NULL || top->vdev_top != top || spare_leaf)) ||
	    (leaf != NULL && top != NULL && leaf->vdev_top != top)) {
		vdev_free(root);
		return (SET_ERROR(EINVAL));
	}
	memcpy(cfg->vlc_name, pl + VP_NAME, VDEV_POOL_NAME_MAX + 1);
	cfg->vlc_pool_guid = get64(pl + VP_POOL_GUID);
	cfg->vlc_version = get64(pl + VP_VERSION);
	cfg->vlc_features = get64(pl + VP_FEATURES);
	cfg->vlc_txg = get64(pl + VP_TXG);
	cfg->vlc_state = get64(pl + VP_STATE);
	cfg->vlc_hostid = get64(pl + VP_HOSTID);
	cfg->vlc_create_time = get64(pl + VP_CTIME);
	cfg->vlc_leaf_guid = leaf_guid;
	cfg->vlc_top_guid = top_guid;
	cfg->vlc_tree = root;
	return (0);
}

void
vdev_config_free(vdev_label_config_t *cfg)
{
	if (cfg->vlc_tree != NULL)
		vdev_free(cfg->vlc_tree);
	cfg->vlc_tree = NULL;
}
