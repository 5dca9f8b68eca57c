/*
 * fuzz_zil.c — fuzz target for the intent log's block parsers (lib/zil):
 * zil_block_verify (header, verifier, both checksums) and
 * zil_block_records (the record walk a replay does).  Damaged input must
 * give an error, never a crash, an overrun (run under ASan) or a hang.
 *
 * Input: the bytes of one log block (rounded down to 8 KiB .. 128 KiB by
 * zero-extending); the bp that names it is built from the block's own
 * GUID and sequence number, so most inputs reach the checksum check, and
 * the records are walked whether or not the block verifies.
 *
 * Build with libFuzzer: -DTARN_LIBFUZZER -fsanitize=fuzzer.  Built with
 * plain gcc, main() runs N (argv[1], default 20000) seeded inputs: random
 * bytes, and mutations of valid sealed blocks with write and times records.
 */
#include "zil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct fz_count {
	uint64_t records, bytes;
} fz_count_t;

static int
fz_record(void *arg, const zil_lr_t *lr, const void *data)
{
	fz_count_t *c = arg;
	c->records++;
	/* touch every data byte the parser promises is inside the block */
	const uint8_t *p = data;
	for (uint64_t i = 0; i < lr->lr_len; i++)
		c->bytes += p[i];
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t bsize = P2ROUNDUP(MAX(size, (size_t)8192), 4096);
	if (bsize > 128 * KiB)
		bsize = 128 * KiB;
	uint8_t *buf = tarn_alloc(bsize);
	memcpy(buf, data, MIN(size, bsize));
	const zil_block_t *blk = (const zil_block_t *)buf;
	blkptr_t bp;
	BP_ZERO(&bp);
	bp.bp_psize = bp.bp_lsize = (uint32_t)bsize;
	bp.bp_cksum_val.zc_word[0] = blk->zlb_guid;
	bp.bp_cksum_val.zc_word[1] = blk->zlb_seq;
	(void) zil_block_verify(&bp, buf, bsize);
	fz_count_t c = { 0, 0 };
	(void) zil_block_records(blk, bsize, fz_record, &c);
	tarn_free(buf);
	return (0);
}

#ifndef TARN_LIBFUZZER
/* A valid sealed block with n records (the format of docs/FORMAT.md). */
static size_t
fz_valid_block(uint8_t *buf, size_t cap, tarn_rand_t *r)
{
	memset(buf, 0, cap);
	zil_block_t *blk = (zil_block_t *)buf;
	blk->zlb_magic = ZIL_BLOCK_MAGIC;
	blk->zlb_guid = tarn_rand_u64(r);
	blk->zlb_seq = 1 + tarn_rand_range(r, 1000);
	uint32_t used = ZIL_BLOCK_HDR;
	int n = (int)tarn_rand_range(r, 6);
	for (int i = 0; i < n; i++) {
		bool times = tarn_rand_range(r, 3) == 0;
		uint64_t len = times ? 48 : 1 + tarn_rand_range(r, 3000);
		uint32_t reclen = (uint32_t)(sizeof (zil_lr_t) + P2ROUNDUP(len, 8));
		if (used + reclen > cap)
			break;
		zil_lr_t lr = { .lr_type = times ? ZIL_LR_TIMES : ZIL_LR_WRITE,
			.lr_reclen = reclen, .lr_txg = 5 + i, .lr_obj = 2 + i,
			.lr_off = times ? 0 : tarn_rand_range(r, 1 << 20), .lr_len = len };
		memcpy(buf + used, &lr, sizeof (lr));
		for (uint64_t k = 0; k < len; k++)
			buf[used + sizeof (lr) + k] = (uint8_t)tarn_rand_u64(r);
		used += reclen;
		blk->zlb_nrec++;
	}
	blk->zlb_used = used;
	zio_cksum_t a, b;
	zio_checksum_compute(ZIO_CHECKSUM_XXH3_128, blk, sizeof (*blk), &a);
	zio_checksum_compute(ZIO_CHECKSUM_XXH3_128, buf + ZIL_BLOCK_HDR, used - ZIL_BLOCK_HDR, &b);
	a.zc_word[2] = b.zc_word[0];
	a.zc_word[3] = b.zc_word[1];
	blk->zlb_cksum = a;
	return (cap);
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	tarn_rand_t r;
	tarn_rand_seed(&r, 0x5a11);
	uint8_t *buf = tarn_alloc(128 * KiB);
	/* the valid block must verify (the fuzzer's baseline) */
	size_t len = fz_valid_block(buf, 8192, &r);
	blkptr_t bp;
	BP_ZERO(&bp);
	bp.bp_psize = bp.bp_lsize = (uint32_t)len;
	bp.bp_cksum_val.zc_word[0] = ((zil_block_t *)buf)->zlb_guid;
	bp.bp_cksum_val.zc_word[1] = ((zil_block_t *)buf)->zlb_seq;
	if (zil_block_verify(&bp, buf, len) != 0) {
		fprintf(stderr, "fuzz_zil: a valid block does not verify\n");
		return (1);
	}
	for (long i = 0; i < n; i++) {
		size_t cap = 8192 << tarn_rand_range(&r, 3);
		len = fz_valid_block(buf, cap, &r);
		int kind = (int)tarn_rand_range(&r, 4);
		if (kind == 0) {
			for (size_t k = 0; k < len; k++)
				buf[k] = (uint8_t)tarn_rand_u64(&r);
		} else {
			int flips = 1 + (int)tarn_rand_range(&r, 8);
			size_t span = kind == 1 ? ZIL_BLOCK_HDR : len;
			for (int f = 0; f < flips; f++)
				buf[tarn_rand_range(&r, span)] ^= (uint8_t)(1 + tarn_rand_range(&r, 255));
			if (kind == 3)          /* a record header field gone wild */
				memset(buf + ZIL_BLOCK_HDR + 4, 0xff, 4);
		}
		(void) LLVMFuzzerTestOneInput(buf, len - tarn_rand_range(&r, 64));
	}
	tarn_free(buf);
	printf("fuzz_zil: %ld inputs\n", n);
	return (0);
}
#endif
