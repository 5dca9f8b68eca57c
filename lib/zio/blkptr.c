/*
 * blkptr.c — block pointers as text (for debugging and `tarn debug`) and
 * the structural checks made on a block pointer read from disk before it
 * is followed (docs/FORMAT.md "Block pointer").  Nothing here does I/O.
 */
#include "zio.h"

#include <stdarg.h>

static const char *const blkptr_type_names[DMU_OT_NUMTYPES] = {
	[DMU_OT_NONE] = "none",
	[DMU_OT_OBJECT_DIRECTORY] = "objdir",
	[DMU_OT_OBJECT_ARRAY] = "objarray",
	[DMU_OT_SPACE_MAP] = "spacemap",
	[DMU_OT_DNODE] = "dnode",
	[DMU_OT_OBJSET] = "objset",
	[DMU_OT_ZAP] = "zap",
	[DMU_OT_UINT8] = "uint8",
	[DMU_OT_UINT64] = "uint64",
	[DMU_OT_PACKED_CONFIG] = "config",
	[DMU_OT_DEFER_FREE] = "deferfree",
	[DMU_OT_DSL_DIR] = "dsldir",
	[DMU_OT_DSL_DATASET] = "dataset",
	[DMU_OT_PLAIN_FILE] = "file",
	[DMU_OT_DIRECTORY] = "dir",
	[DMU_OT_TEST] = "test",
	[DMU_OT_INTENT_LOG] = "intent log",
};

/* Append to buf at *off, never past len; keeps buf terminated. */
static void
bp_appendf(char *buf, size_t len, size_t *off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
bp_appendf(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	if (*off >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (n > 0)
		*off = MIN(len, *off + (size_t)n);
}

void
blkptr_describe(const blkptr_t *bp, char *buf, size_t len)
{
	size_t off = 0;
	if (len == 0)
		return;
	buf[0] = '\0';
	if (BP_IS_HOLE(bp)) {
		bp_appendf(buf, len, &off, "HOLE lsize=%" PRIx32 "L type=%u",
		    bp->bp_lsize, bp->bp_type);
		return;
	}
	const char *tn = bp->bp_type < DMU_OT_NUMTYPES ?
	    blkptr_type_names[bp->bp_type] : "?";
	bp_appendf(buf, len, &off, "L%u %s", bp->bp_level, tn);
	for (int i = 0; i < SPA_DVAS_PER_BP; i++) {
		const dva_t *d = &bp->bp_dva[i];
		if (!DVA_IS_VALID(d))
			continue;
		bp_appendf(buf, len, &off, " DVA[%d]=<%" PRIu32 ":%" PRIx64 ":%"
		    PRIx64 ">", i, d->dva_vdev, d->dva_offset, DVA_ASIZE(d));
	}
	bp_appendf(buf, len, &off, " %s %s size=%" PRIx32 "L/%" PRIx32 "P"
	    " birth=%" PRIu64 "L/%" PRIu64 "P fill=%" PRIu64 " ndvas=%u",
	    zio_checksum_name(bp->bp_cksum), zio_compress_name(bp->bp_comp),
	    bp->bp_lsize, bp->bp_psize, bp->bp_birth, bp->bp_phys_birth,
	    bp->bp_fill, bp->bp_ndvas);
	if (bp->bp_flags != 0)
		bp_appendf(buf, len, &off, " flags=%#x", bp->bp_flags);
	const uint64_t *w = bp->bp_cksum_val.zc_word;
	bp_appendf(buf, len, &off, " cksum=%" PRIx64 ":%" PRIx64 ":%" PRIx64
	    ":%" PRIx64, w[0], w[1], w[2], w[3]);
}

static bool
bp_is_zero(const blkptr_t *bp)
{
	static const blkptr_t zero;
	return (memcmp(bp, &zero, sizeof (zero)) == 0);
}

/* One DVA against the pool's geometry. */
static int
dva_validate(const dva_t *d, uint64_t psize, vdev_t *root)
{
	if (!DVA_IS_VALID(d) || !IS_P2ALIGNED(d->dva_offset, SPA_MINBLOCKSIZE))
		return (SET_ERROR(EINVAL));
	if (root == NULL)
		return (0);
	if (d->dva_vdev >= (uint64_t)vdev_children(root))
		return (SET_ERROR(EINVAL));
	vdev_t *top = vdev_lookup_top(root, d->dva_vdev);
	if (top == NULL || vdev_asize(top) == 0)
		return (SET_ERROR(EINVAL));
	uint64_t asize = DVA_ASIZE(d);
	if (d->dva_offset >= vdev_asize(top) ||
	    asize > vdev_asize(top) - d->dva_offset)
		return (SET_ERROR(EINVAL));
	if (asize < vdev_psize_to_asize(top, psize))
		return (SET_ERROR(EINVAL));
	return (0);
}

int
blkptr_validate(const blkptr_t *bp, vdev_t *root)
{
	if (BP_IS_HOLE(bp))
		return (bp_is_zero(bp) ? 0 : SET_ERROR(EINVAL));
	uint64_t lsize = bp->bp_lsize, psize = bp->bp_psize;
	if (lsize == 0 || psize == 0 || !IS_P2ALIGNED(lsize, SPA_MINBLOCKSIZE) ||
	    !IS_P2ALIGNED(psize, SPA_MINBLOCKSIZE) || lsize > SPA_MAXBLOCKSIZE)
		return (SET_ERROR(EINVAL));
	if (bp->bp_comp == ZIO_COMPRESS_OFF ? psize != lsize : psize >= lsize)
		return (SET_ERROR(EINVAL));
	if (bp->bp_cksum < ZIO_CHECKSUM_OFF || bp->bp_cksum >= ZIO_CHECKSUM_FUNCTIONS ||
	    bp->bp_comp < ZIO_COMPRESS_OFF || bp->bp_comp >= ZIO_COMPRESS_FUNCTIONS ||
	    bp->bp_type >= DMU_OT_NUMTYPES || bp->bp_level > BP_MAX_LEVEL)
		return (SET_ERROR(EINVAL));
	if ((bp->bp_flags & ~(BP_F_DEDUP | BP_F_ENCRYPTED)) != 0 ||
	    bp->bp_pad != 0 || bp->bp_reserved != 0 || bp->bp_phys_birth == 0)
		return (SET_ERROR(EINVAL));
	/* An encrypted block keeps its IV and salt in the third DVA. */
	int maxdvas = (bp->bp_flags & BP_F_ENCRYPTED) ? 2 : SPA_DVAS_PER_BP;
	if (bp->bp_ndvas < 1 || bp->bp_ndvas > maxdvas)
		return (SET_ERROR(EINVAL));
	for (int i = 0; i < maxdvas; i++) {
		const dva_t *d = &bp->bp_dva[i];
		if (i >= bp->bp_ndvas) {
			if (d->dva_vdev != 0 || d->dva_asize != 0 || d->dva_offset != 0)
				return (SET_ERROR(EINVAL));
			continue;
		}
		int err = dva_validate(d, psize, root);
		if (err != 0)
			return (err);
	}
	return (0);
}
