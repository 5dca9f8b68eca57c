/*
 * vdev_fault.c — the fault-injecting leaf, for tests and tarn-stress.
 *
 * An injector is attached to a path; every leaf opened on that path
 * afterwards (vdev_file_open looks it up) sends its I/O through it.
 * It can
 *   - fail reads or writes with EIO at random (ppm), or always (dead);
 *   - flip one random bit of what a read returns (ppm);
 *   - hold writes in memory until a flush (vfc_hold_unflushed): reads
 *     see them laid over the file, a flush applies them to the file in
 *     order and then fdatasyncs, and a power cut applies a random subset
 *     in a random order, tearing some (only a prefix of their 512-byte
 *     sectors lands), then leaves the device dead.
 * This is SQLite's crash simulation (test6.c) in a vdev's clothes.  All
 * randomness comes from a tarn_rand_t seeded by vfc_seed (or the caller's
 * for power cuts), so a failing seed replays exactly.
 *
 * Locking: vdev_fault_registry_lock guards the registry and every
 * injector's vf_refs; vf_lock guards the rest of an injector.  File I/O
 * happens under vf_lock so that a read never sees half of a flush.
 */
#include "vdev_impl.h"
#include "tarn_array.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#define VDEV_FAULT_SECTOR 512

typedef struct vdev_fault_held {
	uint64_t vfh_off;      /* physical offset */
	uint64_t vfh_len;
	uint8_t *vfh_data;
} vdev_fault_held_t;

struct vdev_fault {
	char            *vf_path;      /* as attached */
	char            *vf_real;      /* realpath at attach, or NULL */
	vdev_fault_t    *vf_next;      /* registry; registry lock */
	uint64_t         vf_refs;      /* registry lock */
	pthread_mutex_t  vf_lock;
	vdev_fault_cfg_t vf_cfg;       /* vf_lock, as everything below */
	tarn_rand_t      vf_rand;
	bool             vf_dead;
	tarn_array_t     vf_held;      /* of vdev_fault_held_t: writes not yet flushed, in order */
};

static pthread_mutex_t vdev_fault_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static vdev_fault_t *vdev_fault_registry;

vdev_fault_t *
vdev_fault_attach(const char *path, const vdev_fault_cfg_t *cfg)
{
	char real[PATH_MAX];
	vdev_fault_t *vf = tarn_alloc(sizeof (*vf));
	vf->vf_path = tarn_strdup(path);
	if (realpath(path, real) != NULL)
		vf->vf_real = tarn_strdup(real);
	vf->vf_cfg = *cfg;
	tarn_rand_seed(&vf->vf_rand, cfg->vfc_seed);
	VERIFY0(pthread_mutex_init(&vf->vf_lock, NULL));
	tarn_array_init(&vf->vf_held, sizeof (vdev_fault_held_t));
	vf->vf_refs = 1;
	VERIFY0(pthread_mutex_lock(&vdev_fault_registry_lock));
	vf->vf_next = vdev_fault_registry;
	vdev_fault_registry = vf;
	VERIFY0(pthread_mutex_unlock(&vdev_fault_registry_lock));
	return (vf);
}

static void
vdev_fault_drop_held(vdev_fault_t *vf)
{
	for (uint64_t i = 0; i < tarn_array_len(&vf->vf_held); i++)
		tarn_free(TARN_ARRAY_AT(&vf->vf_held, vdev_fault_held_t, i).vfh_data);
	tarn_array_clear(&vf->vf_held);
}

void
vdev_fault_rele(vdev_fault_t *vf)
{
	VERIFY0(pthread_mutex_lock(&vdev_fault_registry_lock));
	VERIFY3U(vf->vf_refs, >, 0);
	bool last = --vf->vf_refs == 0;
	VERIFY0(pthread_mutex_unlock(&vdev_fault_registry_lock));
	if (!last)
		return;
	vdev_fault_drop_held(vf);
	tarn_array_fini(&vf->vf_held);
	VERIFY0(pthread_mutex_destroy(&vf->vf_lock));
	tarn_free(vf->vf_real);
	tarn_free(vf->vf_path);
	tarn_free(vf);
}

/*
 * Unregister.  Leaves already open on the path keep using the injector
 * until they close; held writes that were never flushed are lost then.
 */
void
vdev_fault_detach(vdev_fault_t *vf)
{
	VERIFY0(pthread_mutex_lock(&vdev_fault_registry_lock));
	for (vdev_fault_t **pp = &vdev_fault_registry; *pp != NULL; pp = &(*pp)->vf_next) {
		if (*pp == vf) {
			*pp = vf->vf_next;
			break;
		}
	}
	VERIFY0(pthread_mutex_unlock(&vdev_fault_registry_lock));
	vdev_fault_rele(vf);
}

vdev_fault_t *
vdev_fault_lookup(const char *path)
{
	char real[PATH_MAX];
	bool have_real = realpath(path, real) != NULL;
	vdev_fault_t *found = NULL;

	VERIFY0(pthread_mutex_lock(&vdev_fault_registry_lock));
	for (vdev_fault_t *vf = vdev_fault_registry; vf != NULL; vf = vf->vf_next) {
		if (strcmp(vf->vf_path, path) == 0 ||
		    (have_real && vf->vf_real != NULL && strcmp(vf->vf_real, real) == 0)) {
			found = vf;
			found->vf_refs++;
			break;
		}
	}
	VERIFY0(pthread_mutex_unlock(&vdev_fault_registry_lock));
	return (found);
}

/* True with probability ppm / 10^6. */
static bool
vdev_fault_chance(vdev_fault_t *vf, uint32_t ppm)
{
	return (ppm != 0 && tarn_rand_range(&vf->vf_rand, 1000000) < ppm);
}

/* Lay the held writes that overlap [off, off+size) over buf, oldest first. */
static void
vdev_fault_overlay(vdev_fault_t *vf, uint8_t *buf, uint64_t size, uint64_t off)
{
	for (uint64_t i = 0; i < tarn_array_len(&vf->vf_held); i++) {
		vdev_fault_held_t *h = &TARN_ARRAY_AT(&vf->vf_held, vdev_fault_held_t, i);
		uint64_t s = MAX(off, h->vfh_off);
		uint64_t e = MIN(off + size, h->vfh_off + h->vfh_len);
		if (s < e)
			memcpy(buf + (s - off), h->vfh_data + (s - h->vfh_off), e - s);
	}
}

int
vdev_fault_pread(vdev_fault_t *vf, int fd, void *buf, uint64_t size, uint64_t off)
{
	int err = 0;
	VERIFY0(pthread_mutex_lock(&vf->vf_lock));
	if (vf->vf_dead || vdev_fault_chance(vf, vf->vf_cfg.vfc_read_eio_ppm)) {
		err = SET_ERROR(EIO);
	} else if ((err = vdev_fd_pread(fd, buf, size, off)) == 0) {
		vdev_fault_overlay(vf, buf, size, off);
		if (size > 0 && vdev_fault_chance(vf, vf->vf_cfg.vfc_bitflip_ppm)) {
			uint64_t bit = tarn_rand_range(&vf->vf_rand, size * 8);
			((uint8_t *)buf)[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		}
	}
	VERIFY0(pthread_mutex_unlock(&vf->vf_lock));
	return (err);
}

int
vdev_fault_pwrite(vdev_fault_t *vf, int fd, const void *buf, uint64_t size,
    uint64_t off)
{
	int err = 0;
	VERIFY0(pthread_mutex_lock(&vf->vf_lock));
	if (vf->vf_dead || vdev_fault_chance(vf, vf->vf_cfg.vfc_write_eio_ppm)) {
		err = SET_ERROR(EIO);
	} else if (vf->vf_cfg.vfc_hold_unflushed) {
		vdev_fault_held_t *h = tarn_array_push(&vf->vf_held);
		h->vfh_off = off;
		h->vfh_len = size;
		h->vfh_data = tarn_alloc(size);
		memcpy(h->vfh_data, buf, size);
	} else {
		err = vdev_fd_pwrite(fd, buf, size, off);
	}
	VERIFY0(pthread_mutex_unlock(&vf->vf_lock));
	return (err);
}

int
vdev_fault_flush(vdev_fault_t *vf, int fd)
{
	int err = 0;
	VERIFY0(pthread_mutex_lock(&vf->vf_lock));
	if (vf->vf_dead) {
		err = SET_ERROR(EIO);
	} else {
		for (uint64_t i = 0; i < tarn_array_len(&vf->vf_held) && err == 0; i++) {
			vdev_fault_held_t *h = &TARN_ARRAY_AT(&vf->vf_held, vdev_fault_held_t, i);
			err = vdev_fd_pwrite(fd, h->vfh_data, h->vfh_len, h->vfh_off);
		}
		vdev_fault_drop_held(vf);
		if (err == 0 && fdatasync(fd) != 0)
			err = SET_ERROR(EIO);
	}
	VERIFY0(pthread_mutex_unlock(&vf->vf_lock));
	return (err);
}

void
vdev_fault_powercut(vdev_fault_t *vf, tarn_rand_t *r)
{
	VERIFY0(pthread_mutex_lock(&vf->vf_lock));
	uint64_t n = tarn_array_len(&vf->vf_held);
	uint64_t *order = tarn_alloc(MAX(n, 1) * sizeof (uint64_t));
	for (uint64_t i = 0; i < n; i++)
		order[i] = i;
	for (uint64_t i = n; i > 1; i--) {      /* Fisher-Yates */
		uint64_t j = tarn_rand_range(r, i);
		uint64_t t = order[i - 1];
		order[i - 1] = order[j];
		order[j] = t;
	}
	int fd = n > 0 ? open(vf->vf_path, O_WRONLY | O_CLOEXEC) : -1;
	for (uint64_t i = 0; i < n; i++) {
		vdev_fault_held_t *h = &TARN_ARRAY_AT(&vf->vf_held, vdev_fault_held_t, order[i]);
		uint64_t nsec = DIV_ROUND_UP(h->vfh_len, VDEV_FAULT_SECTOR);
		uint64_t len = 0;
		switch (tarn_rand_range(r, 3)) {
		case 0: len = 0; break;                       /* dropped */
		case 1: len = h->vfh_len; break;              /* landed whole */
		default:                                      /* torn */
			len = MIN(h->vfh_len,
			    tarn_rand_range(r, nsec + 1) * VDEV_FAULT_SECTOR);
			break;
		}
		if (len > 0 && fd >= 0)
			(void) vdev_fd_pwrite(fd, h->vfh_data, len, h->vfh_off);
	}
	if (fd >= 0) {
		(void) fdatasync(fd);
		(void) close(fd);
	}
	tarn_free(order);
	vdev_fault_drop_held(vf);
	vf->vf_dead = true;
	VERIFY0(pthread_mutex_unlock(&vf->vf_lock));
}

void
vdev_fault_set_dead(vdev_fault_t *vf, bool dead)
{
	VERIFY0(pthread_mutex_lock(&vf->vf_lock));
	vf->vf_dead = dead;
	VERIFY0(pthread_mutex_unlock(&vf->vf_lock));
}

void
vdev_fault_set_rates(vdev_fault_t *vf, uint32_t read_eio_ppm, uint32_t write_eio_ppm,
    uint32_t bitflip_ppm)
{
	VERIFY0(pthread_mutex_lock(&vf->vf_lock));
	vf->vf_cfg.vfc_read_eio_ppm = read_eio_ppm;
	vf->vf_cfg.vfc_write_eio_ppm = write_eio_ppm;
	vf->vf_cfg.vfc_bitflip_ppm = bitflip_ppm;
	VERIFY0(pthread_mutex_unlock(&vf->vf_lock));
}

uint64_t
vdev_fault_held_writes(vdev_fault_t *vf)
{
	VERIFY0(pthread_mutex_lock(&vf->vf_lock));
	uint64_t n = tarn_array_len(&vf->vf_held);
	VERIFY0(pthread_mutex_unlock(&vf->vf_lock));
	return (n);
}
