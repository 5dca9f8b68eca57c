/*
 * fuzz_blkptr.c — fuzz target for the parsers of on-disk block data the
 * zio layer owns: blkptr_validate (against a real small pool of file
 * vdevs: a plain file, a 2-way mirror and a 3-wide raidz1), blkptr_describe
 * and zio_decompress.  Damaged input must give an error, never a crash,
 * an overrun (run under ASan) or a hang.
 *
 * Input layout: bytes 0..127 a blkptr_t; byte 128 an algorithm; the rest
 * a stored (compressed) block.  Shorter inputs are zero-extended.
 *
 * Build with libFuzzer: -DTARN_LIBFUZZER -fsanitize=fuzzer.  Built with
 * plain gcc, main() runs N (argv[1], default 20000) seeded inputs: random
 * bytes, and mutations of valid block pointers and compressed blocks.
 */
#include "zio.h"

#include <fcntl.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static vdev_t *fz_root;
static char fz_dir[256];

static void
fz_cleanup(void)
{
	if (fz_root != NULL) {
		vdev_close(fz_root);
		vdev_free(fz_root);
		fz_root = NULL;
	}
	if (fz_dir[0] != '\0') {
		char cmd[300];
		snprintf(cmd, sizeof (cmd), "rm -rf '%s'", fz_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cleanup of %s failed\n", fz_dir);
		fz_dir[0] = '\0';
	}
}

static vdev_t *
fz_leaf(int i)
{
	char path[320];
	snprintf(path, sizeof (path), "%s/d%d", fz_dir, i);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	VERIFY(fd >= 0);
	VERIFY0(ftruncate(fd, SPA_MINDEVSIZE));
	close(fd);
	vdev_t *vd = vdev_alloc(VDEV_TYPE_FILE, tarn_guid());
	vdev_set_path(vd, path);
	return (vd);
}

/* A pool with three top-level vdevs of different geometry, opened once. */
static vdev_t *
fz_pool(void)
{
	if (fz_root != NULL)
		return (fz_root);
	const char *base = getenv("TARN_TEST_TMP");
	snprintf(fz_dir, sizeof (fz_dir), "%s/tarn-fuzz-XXXXXX", base ? base : "/tmp");
	VERIFY(mkdtemp(fz_dir) != NULL);
	atexit(fz_cleanup);
	vdev_t *root = vdev_alloc(VDEV_TYPE_ROOT, tarn_guid());
	vdev_add_child(root, fz_leaf(0));
	vdev_t *m = vdev_alloc(VDEV_TYPE_MIRROR, tarn_guid());
	vdev_add_child(m, fz_leaf(1));
	vdev_add_child(m, fz_leaf(2));
	vdev_add_child(root, m);
	vdev_t *rz = vdev_alloc(VDEV_TYPE_RAIDZ, tarn_guid());
	vdev_set_nparity(rz, 1);
	for (int i = 3; i < 6; i++)
		vdev_add_child(rz, fz_leaf(i));
	vdev_add_child(root, rz);
	VERIFY0(vdev_open(root, false));
	fz_root = root;
	return (root);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[SPA_MAXBLOCKSIZE];
	vdev_t *root = fz_pool();
	blkptr_t bp;
	char text[512];

	memset(&bp, 0, sizeof (bp));
	memcpy(&bp, data, MIN(size, sizeof (bp)));
	int e1 = blkptr_validate(&bp, root);
	int e2 = blkptr_validate(&bp, NULL);
	VERIFY(e1 == 0 || e1 == EINVAL);
	VERIFY(e2 == 0 || e2 == EINVAL);
	VERIFY(e1 != 0 || e2 == 0);   /* the full check implies the partial one */
	blkptr_describe(&bp, text, sizeof (text));
	blkptr_describe(&bp, text, 7);
	VERIFY(strlen(text) < 7);

	if (size <= sizeof (bp) + 1)
		return (0);
	int alg = data[sizeof (bp)] % (ZIO_COMPRESS_FUNCTIONS + 1);
	const uint8_t *payload = data + sizeof (bp) + 1;
	uint64_t psize = size - sizeof (bp) - 1;
	uint64_t lsize = bp.bp_lsize % (SPA_MAXBLOCKSIZE + 1);
	if (lsize == 0)
		lsize = 128 * KiB;
	int rc = zio_decompress(alg, payload, psize, out, lsize);
	VERIFY(rc == 0 || rc == EINVAL);
	return (0);
}

#ifndef TARN_LIBFUZZER

/* A block pointer that passes blkptr_validate on the fuzz pool. */
static void
fz_valid_bp(tarn_rand_t *r, blkptr_t *bp)
{
	vdev_t *root = fz_pool();
	memset(bp, 0, sizeof (*bp));
	bp->bp_lsize = (uint32_t)(512 * (1 + tarn_rand_range(r, 256)));
	bp->bp_comp = (uint8_t)(ZIO_COMPRESS_OFF + tarn_rand_range(r, 4));
	bp->bp_psize = bp->bp_comp == ZIO_COMPRESS_OFF ? bp->bp_lsize :
	    (uint32_t)(512 * (1 + tarn_rand_range(r, bp->bp_lsize / 512)));
	if (bp->bp_psize == bp->bp_lsize && bp->bp_comp != ZIO_COMPRESS_OFF)
		bp->bp_comp = ZIO_COMPRESS_OFF;
	bp->bp_cksum = (uint8_t)(ZIO_CHECKSUM_OFF + tarn_rand_range(r, 4));
	bp->bp_type = (uint8_t)tarn_rand_range(r, DMU_OT_NUMTYPES);
	bp->bp_level = (uint8_t)tarn_rand_range(r, 4);
	bp->bp_ndvas = (uint8_t)(1 + tarn_rand_range(r, 3));
	bp->bp_birth = bp->bp_phys_birth = 1 + tarn_rand_range(r, 1000);
	bp->bp_fill = 1;
	for (int i = 0; i < bp->bp_ndvas; i++) {
		int v = (int)tarn_rand_range(r, vdev_children(root));
		vdev_t *top = vdev_lookup_top(root, v);
		uint64_t asize = vdev_psize_to_asize(top, bp->bp_psize);
		bp->bp_dva[i].dva_vdev = (uint32_t)v;
		bp->bp_dva[i].dva_asize = (uint32_t)(asize >> SPA_MINBLOCKSHIFT);
		bp->bp_dva[i].dva_offset = P2ALIGN(tarn_rand_range(r,
		    vdev_asize(top) - asize), 1ULL << vdev_ashift(top));
	}
	bp->bp_cksum_val.zc_word[0] = tarn_rand_u64(r);
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 20000;
	tarn_rand_t r;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
	tarn_rand_seed(&r, seed);
	printf("fuzz_blkptr: %ld inputs, seed %" PRIu64 "\n", n, seed);

	size_t cap = sizeof (blkptr_t) + 1 + 256 * KiB;
	uint8_t *in = tarn_alloc(cap), *src = tarn_alloc(128 * KiB);
	for (size_t i = 0; i < 128 * KiB; i++)
		src[i] = (uint8_t)("tarn pool block "[i % 16] + (i / 4096));
	long valid = 0;
	for (long it = 0; it < n; it++) {
		size_t size = sizeof (blkptr_t) + 1;
		blkptr_t bp;
		fz_valid_bp(&r, &bp);
		VERIFY0(blkptr_validate(&bp, fz_pool()));
		memcpy(in, &bp, sizeof (bp));
		int alg = (int)tarn_rand_range(&r, ZIO_COMPRESS_FUNCTIONS + 1);
		in[sizeof (bp)] = (uint8_t)alg;
		uint8_t *pl = in + sizeof (bp) + 1;
		switch (it % 3) {
		case 0:     /* random bytes everywhere */
			for (size_t i = 0; i < cap; i++)
				in[i] = (uint8_t)tarn_rand_u64(&r);
			size = tarn_rand_range(&r, 4096);
			break;
		case 1: {   /* a valid compressed block, mutated */
			uint64_t lsize = 4 * KiB * (1 + tarn_rand_range(&r, 16));
			uint64_t psize = zio_compress(alg, 0, src, pl, lsize);
			((blkptr_t *)in)->bp_lsize = (uint32_t)lsize;
			size += psize;
			break;
		}
		default:    /* a valid bp, garbage payload */
			size += tarn_rand_range(&r, 2048);
			for (size_t i = sizeof (bp) + 1; i < size; i++)
				in[i] = (uint8_t)tarn_rand_u64(&r);
			break;
		}
		int flips = (int)tarn_rand_range(&r, 4);
		for (int f = 0; f < flips && size > 0; f++)
			in[tarn_rand_range(&r, size)] ^= (uint8_t)(1 << tarn_rand_range(&r, 8));
		LLVMFuzzerTestOneInput(in, size);
		memcpy(&bp, in, sizeof (bp));
		valid += size >= sizeof (bp) && blkptr_validate(&bp, fz_pool()) == 0;
	}
	printf("fuzz_blkptr: done, %ld inputs had a valid bp\n", valid);
	tarn_free(in);
	tarn_free(src);
	return (0);
}

#endif
