/*
 * bench_zio.c — throughput micro-benchmark of the block pipeline's CPU
 * work and of 1 MiB sequential I/O through zio.  Not a test: it prints
 * numbers.
 *
 *   bench_zio DIR [MiB]
 *
 * 1. per core, on one thread: memcpy, each block checksum, lz4/zstd
 *    compression of text-like data, RAID-Z parity with ISA-L (xor_gen =
 *    raidz1 P, pq_gen = raidz2 P+Q) over 4+1 / 4+2 columns of 256 KiB;
 * 2. through zio on file vdevs created in DIR (removed afterwards): a
 *    raidz1 of 4 and a mirror of 2, writing MiB (default 256) as 1 MiB
 *    blocks in batches of 32 (xxh3, no compression), flushing, dropping
 *    the files from the page cache, then reading everything back and
 *    verifying it.  Prints MB/s and CPU seconds (user + system, all
 *    threads, getrusage) per GiB moved.
 */
#include "zio.h"

#include <fcntl.h>
#include <isa-l/erasure_code.h>
#include <isa-l/raid.h>
#include <sys/resource.h>
#include <unistd.h>

#define BLK         SPA_MAXBLOCKSIZE
#define BATCH       32
#define CPU_SECONDS 0.4

static double
now_s(void)
{
	return (tarn_now_ns() / 1e9);
}

static double
cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
}

static void
fill_text(uint8_t *buf, size_t len)
{
	static const char *words[] = { "tarn ", "pool ", "block ", "pointer ",
	    "metaslab ", "vdev ", "checksum\n" };
	tarn_rand_t r;
	tarn_rand_seed(&r, 1);
	size_t off = 0;
	while (off < len) {
		const char *w = words[tarn_rand_range(&r, ARRAY_SIZE(words))];
		size_t n = MIN(strlen(w), len - off);
		memcpy(buf + off, w, n);
		off += n;
	}
}

static void
fill_random(uint8_t *buf, size_t len, uint64_t seed)
{
	tarn_rand_t r;
	tarn_rand_seed(&r, seed);
	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint64_t v = tarn_rand_u64(&r);
		memcpy(buf + i, &v, 8);
	}
}

/* ---- 1. CPU work per core ---- */

typedef void (*bench_fn_t)(void *arg, uint8_t *a, uint8_t *b);

static void
report_rate(const char *what, bench_fn_t fn, void *arg, uint8_t *a, uint8_t *b,
    uint64_t bytes_per_call)
{
	uint64_t calls = 0;
	double t0 = now_s(), t;
	do {
		fn(arg, a, b);
		calls++;
		t = now_s();
	} while (t - t0 < CPU_SECONDS);
	printf("  %-26s %9.0f MB/s\n", what, calls * bytes_per_call / (t - t0) / 1e6);
}

static void
b_memcpy(void *arg, uint8_t *a, uint8_t *b)
{
	memcpy(b, a, BLK);
	__asm__ volatile("" : : "r"(b) : "memory");
}

static void
b_cksum(void *arg, uint8_t *a, uint8_t *b)
{
	zio_cksum_t zc;
	zio_checksum_compute((int)(intptr_t)arg, a, BLK, &zc);
	__asm__ volatile("" : : "r"(&zc) : "memory");
}

static void
b_compress(void *arg, uint8_t *a, uint8_t *b)
{
	(void) zio_compress((int)(intptr_t)arg, 0, a, b, BLK);
}

static uint8_t *raidz_cols[8];

static void
b_xor(void *arg, uint8_t *a, uint8_t *b)
{
	VERIFY0(xor_gen(5, BLK / 4, (void **)raidz_cols));
}

static void
b_pq(void *arg, uint8_t *a, uint8_t *b)
{
	VERIFY0(pq_gen(6, BLK / 4, (void **)raidz_cols));
}

/*
 * The parity Tarn's RAID-Z really computes: ISA-L's Cauchy matrix rows
 * through ec_encode_data (vdev_raidz.c), 4 data columns, 1..3 parity.
 */
static unsigned char ec_tables[3][32 * 4 * 3];

static void
ec_setup(int nparity)
{
	unsigned char m[(4 + 3) * 4];
	gf_gen_cauchy1_matrix(m, 4 + nparity, 4);
	ec_init_tables(4, nparity, &m[4 * 4], ec_tables[nparity - 1]);
}

static void
b_ec(void *arg, uint8_t *a, uint8_t *b)
{
	int p = (int)(intptr_t)arg;
	ec_encode_data(BLK / 4, 4, p, ec_tables[p - 1], raidz_cols, raidz_cols + 4);
}

static void
bench_cpu(void)
{
	uint8_t *a = tarn_alloc_aligned(BLK), *b = tarn_alloc_aligned(BLK);
	fill_random(a, BLK, 3);
	printf("per core (one thread, 1 MiB buffers):\n");
	report_rate("memcpy", b_memcpy, NULL, a, b, BLK);
	report_rate("checksum fletcher4", b_cksum, (void *)(intptr_t)ZIO_CHECKSUM_FLETCHER4, a, b, BLK);
	report_rate("checksum sha256", b_cksum, (void *)(intptr_t)ZIO_CHECKSUM_SHA256, a, b, BLK);
	report_rate("checksum xxh3-128", b_cksum, (void *)(intptr_t)ZIO_CHECKSUM_XXH3_128, a, b, BLK);
	fill_text(a, BLK);
	report_rate("compress lz4 (text)", b_compress, (void *)(intptr_t)ZIO_COMPRESS_LZ4, a, b, BLK);
	report_rate("compress zstd-3 (text)", b_compress, (void *)(intptr_t)ZIO_COMPRESS_ZSTD, a, b, BLK);
	for (int i = 0; i < 7; i++) {
		raidz_cols[i] = tarn_alloc_aligned(BLK / 4);
		fill_random(raidz_cols[i], BLK / 4, 10 + i);
	}
	/* bytes counted are the data columns (4 x 256 KiB = 1 MiB) */
	report_rate("raidz1 parity P (xor_gen)", b_xor, NULL, a, b, BLK);
	report_rate("raidz2 parity PQ (pq_gen)", b_pq, NULL, a, b, BLK);
	for (int p = 1; p <= 2; p++)
		ec_setup(p);
	report_rate("raidz1 parity (Tarn: Cauchy)", b_ec, (void *)(intptr_t)1, a, b, BLK);
	report_rate("raidz2 parity (Tarn: Cauchy)", b_ec, (void *)(intptr_t)2, a, b, BLK);
	for (int i = 0; i < 7; i++)
		tarn_free(raidz_cols[i]);
	tarn_free(a);
	tarn_free(b);
}

/* ---- 2. sequential I/O through zio ---- */

typedef struct bpool {
	vdev_t *root;
	metaslab_class_t *mc;
	zio_ctx_t *zc;
	char paths[8][512];
	int nleaves;
} bpool_t;

static vdev_t *
bench_leaf(bpool_t *p, const char *dir, uint64_t size)
{
	char *path = p->paths[p->nleaves++];
	snprintf(path, sizeof (p->paths[0]), "%s/bench-zio-%d-%d", dir, (int)getpid(),
	    p->nleaves);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
		perror(path);
		exit(1);
	}
	close(fd);
	vdev_t *vd = vdev_alloc(VDEV_TYPE_FILE, tarn_guid());
	vdev_set_path(vd, path);
	return (vd);
}

static void
bench_pool_open(bpool_t *p, const char *dir, vdev_type_t type, int width,
    uint64_t leaf_size)
{
	memset(p, 0, sizeof (*p));
	p->root = vdev_alloc(VDEV_TYPE_ROOT, tarn_guid());
	vdev_t *top = vdev_alloc(type, tarn_guid());
	vdev_set_nparity(top, type == VDEV_TYPE_RAIDZ ? 1 : 0);
	for (int i = 0; i < width; i++)
		vdev_add_child(top, bench_leaf(p, dir, leaf_size));
	vdev_add_child(p->root, top);
	VERIFY0(vdev_open(p->root, false));
	p->mc = metaslab_class_create();
	vdev_set_ms_shift(top, metaslab_pick_shift(vdev_asize(top)));
	vdev_set_ms_count(top, DIV_ROUND_UP(vdev_asize(top),
	    1ULL << vdev_ms_shift(top)));
	metaslab_group_t *mg = metaslab_group_create(p->mc, top);
	vdev_set_ms_group(top, mg);
	for (uint64_t m = 0; m < metaslab_group_count(mg); m++)
		VERIFY0(metaslab_load(metaslab_group_get(mg, m), NULL, 0, 0));
	p->zc = zio_ctx_create(p->root, p->mc, 0);
}

static void
bench_pool_close(bpool_t *p)
{
	zio_ctx_destroy(p->zc);
	vdev_t *top = vdev_child(p->root, 0);
	metaslab_group_destroy(vdev_ms_group(top));
	vdev_set_ms_group(top, NULL);
	metaslab_class_destroy(p->mc);
	vdev_close(p->root);
	vdev_free(p->root);
	for (int i = 0; i < p->nleaves; i++)
		unlink(p->paths[i]);
}

static void
drop_cache(bpool_t *p)
{
	for (int i = 0; i < p->nleaves; i++) {
		int fd = open(p->paths[i], O_RDONLY);
		if (fd >= 0) {
			(void) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
			close(fd);
		}
	}
}

static void
print_io(const char *what, uint64_t bytes, double secs, double cpu)
{
	printf("  %-26s %9.0f MB/s  %6.2f CPU s/GiB\n", what, bytes / secs / 1e6,
	    cpu / ((double)bytes / GiB));
}

static void
bench_io(const char *dir, const char *name, vdev_type_t type, int width, uint64_t mib)
{
	bpool_t p;
	uint64_t nblk = mib;
	uint64_t data_bytes = nblk * BLK * (type == VDEV_TYPE_MIRROR ? 1 : 2);
	uint64_t leaf = P2ROUNDUP(data_bytes / (type == VDEV_TYPE_MIRROR ? 1 : width - 1),
	    MiB) + 64 * MiB;
	bench_pool_open(&p, dir, type, width, leaf);
	int nthreads = taskq_nthreads(zio_ctx_taskq(p.zc));

	uint8_t *src = tarn_alloc_aligned(BATCH * BLK);
	uint8_t *dst = tarn_alloc_aligned(BATCH * BLK);
	fill_random(src, BATCH * BLK, 42);
	blkptr_t *bps = tarn_alloc(nblk * sizeof (blkptr_t));
	zio_prop_t zp = { .zp_checksum = ZIO_CHECKSUM_XXH3_128,
	    .zp_compress = ZIO_COMPRESS_OFF, .zp_copies = 1, .zp_type = DMU_OT_TEST };

	double c0 = cpu_s(), t0 = now_s();
	for (uint64_t i = 0; i < nblk; i += BATCH) {
		zio_batch_t *b = zio_batch_create(p.zc);
		for (uint64_t j = i; j < MIN(nblk, i + BATCH); j++)
			zio_batch_write(b, 4, &zp, src + (j % BATCH) * BLK, BLK, &bps[j], false);
		VERIFY0(zio_batch_wait(b));
	}
	VERIFY0(zio_flush(p.zc));
	double t1 = now_s(), c1 = cpu_s();
	drop_cache(&p);

	double c2 = cpu_s(), t2 = now_s();
	for (uint64_t i = 0; i < nblk; i += BATCH) {
		zio_batch_t *b = zio_batch_create(p.zc);
		for (uint64_t j = i; j < MIN(nblk, i + BATCH); j++)
			zio_batch_read(b, &bps[j], dst + (j - i) * BLK, 0, NULL);
		VERIFY0(zio_batch_wait(b));
		for (uint64_t j = i; j < MIN(nblk, i + BATCH); j++)
			VERIFY(memcmp(dst + (j - i) * BLK, src + (j % BATCH) * BLK, BLK) == 0);
	}
	double t3 = now_s(), c3 = cpu_s();

	printf("%s, %" PRIu64 " MiB in 1 MiB blocks, %d zio threads:\n", name, mib, nthreads);
	print_io("write (incl. flush)", nblk * BLK, t1 - t0, c1 - c0);
	print_io("read (verified)", nblk * BLK, t3 - t2, c3 - c2);
	tarn_free(bps);
	tarn_free(src);
	tarn_free(dst);
	bench_pool_close(&p);
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_zio DIR [MiB]\n"
		    "  DIR: where to create the file vdevs (removed afterwards)\n");
		return (2);
	}
	uint64_t mib = argc > 2 ? strtoull(argv[2], NULL, 10) : 256;
	if (mib == 0)
		mib = 256;
	bench_cpu();
	bench_io(argv[1], "raidz1 of 4 file vdevs", VDEV_TYPE_RAIDZ, 4, mib);
	bench_io(argv[1], "mirror of 2 file vdevs", VDEV_TYPE_MIRROR, 2, mib);
	return (0);
}
