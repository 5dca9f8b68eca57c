/*
 * bench_pool.c — sequential throughput through the library (no FUSE):
 * create a pool of file vdevs in DIR (use a tmpfs), write SIZE MiB into
 * one object with 1 MiB writes (128 KiB blocks), sync, then read it back
 * cold (pool closed and reopened, so nothing is cached) and warm.  Prints
 * MiB/s and CPU seconds per GiB for each phase.
 *
 *   bench_pool DIR LAYOUT [SIZE_MIB]     LAYOUT: raidz1:4, mirror:2, stripe:1
 */
#include "spa.h"
#include "dmu.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

static double
cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
}

static void
report(const char *layout, const char *phase, uint64_t bytes, uint64_t ns, double cpu)
{
	double mib = bytes / (double)MiB, secs = ns / 1e9;
	printf("%-10s %-12s %9.1f MiB/s %8.2f cpu-s/GiB\n", layout, phase, mib / secs,
	    cpu / (bytes / (double)GiB));
}

int
main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench_pool DIR LAYOUT [SIZE_MIB]\n");
		return (2);
	}
	const char *dir = argv[1], *layout = argv[2];
	uint64_t size = (argc > 3 ? strtoull(argv[3], NULL, 10) : 1024) * MiB;
	char type[32];
	int n = 1;
	if (sscanf(layout, "%31[a-z0-9]:%d", type, &n) < 1 || n < 1 || n > 16) {
		fprintf(stderr, "bad layout %s\n", layout);
		return (2);
	}
	char paths[16][512];
	const char *pv[16];
	char *args[17];
	int ac = 0;
	if (strcmp(type, "stripe") != 0)
		args[ac++] = type;
	uint64_t devsize = size * 2 / (uint64_t)(strcmp(type, "mirror") == 0 ? 1 : n) + 256 * MiB;
	for (int i = 0; i < n; i++) {
		snprintf(paths[i], sizeof (paths[i]), "%s/bench-%d", dir, i);
		int fd = open(paths[i], O_CREAT | O_TRUNC | O_RDWR, 0644);
		if (fd < 0 || ftruncate(fd, (off_t)devsize) != 0) {
			perror(paths[i]);
			return (1);
		}
		close(fd);
		pv[i] = paths[i];
		args[ac++] = paths[i];
	}
	char err[256];
	spa_vdev_spec_t *spec;
	if (spa_vdev_spec_parse(ac, args, &spec, err, sizeof (err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return (1);
	}
	spa_create_opts_t co;
	memset(&co, 0, sizeof (co));
	co.sco_no_cache = true;
	spa_t *spa;
	if (spa_create("bench", spec, &co, &spa, err, sizeof (err)) != 0) {
		fprintf(stderr, "create: %s\n", err);
		return (1);
	}
	spa_vdev_spec_free(spec);
	objset_t *os;
	VERIFY0(spa_objset_create(spa, "b", DMU_OST_TEST, &os));
	uint8_t *buf = tarn_alloc_aligned(MiB);
	for (uint64_t i = 0; i < MiB; i++)
		buf[i] = (uint8_t)(i * 131 + (i >> 12));
	uint64_t obj;
	dmu_tx_t *tx = dmu_tx_create(os);
	VERIFY0(dmu_tx_assign(tx, TXG_WAIT));
	VERIFY0(dmu_object_alloc(os, DMU_OT_TEST, 128 * KiB, DMU_OT_NONE, 0, tx, &obj));
	dmu_tx_commit(tx);

	double c0 = cpu_seconds();
	uint64_t t0 = tarn_now_ns();
	for (uint64_t off = 0; off < size; off += MiB) {
		buf[0] = (uint8_t)(off >> 20);   /* every MiB differs */
		tx = dmu_tx_create(os);
		dmu_tx_hold_write(tx, obj, off, MiB);
		VERIFY0(dmu_tx_assign(tx, TXG_WAIT));
		VERIFY0(dmu_write(os, obj, off, MiB, buf, tx));
		dmu_tx_commit(tx);
	}
	VERIFY0(txg_wait_synced(spa_dmu_pool(spa), 0));
	report(layout, "write", size, tarn_now_ns() - t0, cpu_seconds() - c0);
	spa_close(spa);

	spa_import_opts_t io;
	memset(&io, 0, sizeof (io));
	io.sio_no_cache = true;
	io.sio_flags = SPA_OPEN_NOVERIFY;
	VERIFY0(spa_open_paths(pv, n, &io, &spa, err, sizeof (err)));
	VERIFY0(spa_objset_open(spa, "b", &os));
	for (int phase = 0; phase < 2; phase++) {
		c0 = cpu_seconds();
		t0 = tarn_now_ns();
		for (uint64_t off = 0; off < size; off += MiB) {
			VERIFY0(dmu_read(os, obj, off, MiB, buf));
			VERIFY3U(buf[0], ==, (uint8_t)(off >> 20));
		}
		report(layout, phase == 0 ? "read-cold" : "read-warm", size, tarn_now_ns() - t0,
		    cpu_seconds() - c0);
	}
	spa_close(spa);
	for (int i = 0; i < n; i++)
		unlink(paths[i]);
	tarn_free(buf);
	return (0);
}
