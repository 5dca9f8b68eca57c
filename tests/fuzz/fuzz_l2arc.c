/*
 * fuzz_l2arc.c — fuzz target for the cache device's ring as l2arc_dev_add
 * reads it back (lib/arc/l2arc.c: the device header and the chunk
 * headers, the persistent L2ARC's index on disk).  A ring of known blocks
 * is written on a file device; the input then overwrites bytes of its
 * device header, its chunk headers and data (and, when asked, puts back
 * a sound checksum over the damaged header, so the checks behind the
 * checksum are reached too).  Whatever the bytes, adding the device must
 * not crash (run under ASan), and every read of a known block is a miss
 * or returns exactly that block's bytes; a chunk with a sound header and
 * untouched entries still hits.
 *
 * Input: a list of edits, 8 bytes each: u8 where (0: device header,
 * 1: first chunk header, 2: second chunk header, 3: first chunk's data),
 * u8 flags (bit 0: fix that header's checksum afterwards), u16 offset,
 * u32 value (XORed in, little-endian).  Built with libFuzzer
 * (-DTARN_LIBFUZZER -fsanitize=fuzzer) it is a libFuzzer target; with
 * plain gcc, main() runs N/10 (argv[1], default 3000) seeded inputs: each
 * opens a device (40 ms), where the other drivers' inputs take
 * microseconds, and CI gives every driver the same N.
 */
#include "l2arc.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#define POOL  0xf022ULL
#define DEVG  0xd3ULL
#define BLK   4096
#define NBLK  600
#define CHUNK (8 * MiB)
#define CHDR  (64 * KiB)
#define RING  (VDEV_LABEL_START_SIZE + 1 * MiB)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[256];
static uint8_t *image;          /* the sound ring: device header to the end of chunk 2's header */
static size_t image_len;

static void
blk_fill(uint8_t *b, uint64_t i)
{
	for (int k = 0; k < BLK; k += 8) {
		uint64_t v = XXH3_64bits_withSeed(&k, sizeof (k), i);
		memcpy(b + k, &v, 8);
	}
}

static vdev_t *
dev_open(vdev_t **rootp)
{
	vdev_t *root = vdev_alloc(VDEV_TYPE_ROOT, 0);
	vdev_t *leaf = vdev_alloc(VDEV_TYPE_FILE, 0);
	vdev_set_path(leaf, path);
	vdev_add_child(root, leaf);
	VERIFY0(vdev_open(root, false));
	*rootp = root;
	return (leaf);
}

static void
dev_close(vdev_t *root)
{
	vdev_close(root);
	vdev_free(root);
}

/* Write two chunks of known blocks once and keep the bytes as the image. */
static void
setup(void)
{
	snprintf(path, sizeof (path), "%s/tarn-fuzz-l2arc-%d", getenv("TMPDIR") ?
	    getenv("TMPDIR") : "/tmp", (int)getpid());
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	VERIFY(fd >= 0);
	VERIFY0(ftruncate(fd, (off_t)l2arc_min_size()));
	vdev_t *root, *leaf = dev_open(&root);
	l2arc_opts_t o = { .lo_pool_guid = POOL, .lo_idle_ms = 3600000 };
	l2arc_t *l2 = l2arc_create(&o);
	VERIFY0(l2arc_dev_add(l2, leaf, DEVG));
	uint8_t b[BLK];
	for (uint64_t i = 0; i < NBLK; i++) {
		blk_fill(b, i);
		l2arc_feed(l2, i * 31 + 7, i, b, BLK);
		if (i == NBLK / 2)
			l2arc_flush(l2);        /* two chunks */
	}
	l2arc_destroy(l2);
	dev_close(root);
	image_len = RING + CHUNK + CHDR - VDEV_LABEL_START_SIZE;
	image = tarn_alloc(image_len);
	VERIFY(pread(fd, image, image_len, VDEV_LABEL_START_SIZE) == (ssize_t)image_len);
	close(fd);
}

static void
fix_cksum(uint8_t *hdr, size_t len)
{
	uint64_t sum = XXH3_64bits(hdr, len - 8);
	memcpy(hdr + len - 8, &sum, 8);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (image == NULL)
		setup();
	uint8_t *img = tarn_alloc(image_len);
	memcpy(img, image, image_len);
	size_t dev_hdr = 0, c0 = RING - VDEV_LABEL_START_SIZE, c1 = c0 + CHUNK;
	for (size_t at = 0; at + 8 <= size; at += 8) {
		uint16_t off;
		uint32_t v;
		memcpy(&off, data + at + 2, 2);
		memcpy(&v, data + at + 4, 4);
		size_t base, len;
		switch (data[at] % 4) {
		case 0: base = dev_hdr; len = 4096; break;
		case 1: base = c0; len = CHDR; break;
		case 2: base = c1; len = CHDR; break;
		default: base = c0 + CHDR; len = 65536; break;
		}
		size_t o = off % (len - 3);
		for (int k = 0; k < 4; k++)
			img[base + o + (size_t)k] ^= (uint8_t)(v >> (8 * k));
		if ((data[at + 1] & 1) && (data[at] % 4) != 3)
			fix_cksum(img + base, len);
	}
	int fd = open(path, O_RDWR);
	VERIFY(fd >= 0);
	/* only the parts an edit can reach go back */
	const size_t part[4][2] = { { dev_hdr, 4096 }, { c0, CHDR }, { c1, CHDR },
		{ c0 + CHDR, 65536 } };
	for (int k = 0; k < 4; k++)
		VERIFY(pwrite(fd, img + part[k][0], part[k][1], (off_t)(VDEV_LABEL_START_SIZE +
		    part[k][0])) == (ssize_t)part[k][1]);
	close(fd);
	vdev_t *root, *leaf = dev_open(&root);
	l2arc_opts_t o = { .lo_pool_guid = POOL, .lo_idle_ms = 3600000 };
	l2arc_t *l2 = l2arc_create(&o);
	int e = l2arc_dev_add(l2, leaf, DEVG);
	VERIFY(e == 0 || e == EIO);
	uint8_t b[BLK], want[BLK];
	uint64_t hits = 0;
	for (uint64_t i = 0; e == 0 && i < NBLK; i++) {
		if (l2arc_read(l2, i * 31 + 7, i, b, BLK)) {
			blk_fill(want, i);
			VERIFY0(memcmp(b, want, BLK));
			hits++;
		}
	}
	if (size < 8)
		VERIFY(hits == NBLK);   /* nothing damaged: all found again */
	l2arc_destroy(l2);
	dev_close(root);
	tarn_free(img);
	return (0);
}

#ifndef TARN_LIBFUZZER
int
main(int argc, char **argv)
{
	long n = (argc > 1 ? atol(argv[1]) : 3000) / 10;
	tarn_rand_t r;
	tarn_rand_seed(&r, 0x12a2c);
	uint8_t in[8 * 16];
	for (long i = 0; i < n; i++) {
		size_t edits = i == 0 ? 0 : 1 + tarn_rand_range(&r, 16);
		for (size_t k = 0; k < edits * 8; k++)
			in[k] = (uint8_t)tarn_rand_u64(&r);
		/* mostly the headers' first bytes and entries, where the fields are */
		for (size_t k = 0; k < edits; k++) {
			uint16_t off = (uint16_t)tarn_rand_range(&r, tarn_rand_range(&r, 2) ? 512 : 65536);
			memcpy(in + k * 8 + 2, &off, 2);
		}
		LLVMFuzzerTestOneInput(in, edits * 8);
	}
	(void) unlink(path);
	printf("%ld inputs\n", n);
	return (0);
}
#endif
