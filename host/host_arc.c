/*
 * host_arc.c — the daemon's ARC: one cache for every pool the process
 * opens (all pools share arc_max, as in ZFS), made from the daemon's
 * config file the first time a pool is opened, and its tunables.
 *
 * The config file is $TARN_CONFIG, else /etc/tarn/tarnd.conf: lines of
 * key=value ('#' starts a comment; blanks around key and value are
 * ignored).  Keys: arc_max, arc_min (sizes: 1G, 512M, bytes),
 * l2arc_write_max (bytes a second each pool's L2ARC may write to its
 * cache devices).  A missing file means the defaults (arc_max
 * ARC_DEFAULT_PCT % of RAM, arc_min arc_max / 32, at least 32 MiB,
 * l2arc_write_max L2ARC_WRITE_MAX_DEFAULT); a line that cannot be used is logged
 * (tarnd's log, or stderr in-process) and skipped, so a typo never keeps
 * the daemon from starting.  `tarn daemon set` changes a tunable for the
 * running daemon only (source "local"); the file is not rewritten.
 *
 * The block buffers the dmu keeps faulted in for reuse after the ARC
 * freed them are memory the ARC does not count: they are limited to
 * arc_max / HOST_WARM_DIV (dmu_buf_warm_max), and each pool's dirty data
 * to arc_max / HOST_DIRTY_DIV (between HOST_DIRTY_MIN and the dmu's 512
 * MiB default; dmu_pool_set_dirty_max), so that the daemon's memory
 * follows arc_max (docs/DESIGN.md, "The ARC").
 *
 * Locking: host_arc_lock guards the tunables' values and sources; the
 * ARC has its own lock.  arc_set_limits may evict for a while (it takes
 * dbufs' locks only by try-lock), so it is called with host_arc_lock
 * held: two concurrent sets apply in some order, each whole.
 */
#include "host_impl.h"
#include "arc.h"

#include <ctype.h>

#define HOST_CONFIG_DEFAULT "/etc/tarn/tarnd.conf"
/* freed block buffers kept faulted in for reuse: arc_max / this (dmu_buf_warm_max) */
#define HOST_WARM_DIV 8
/* each pool's dirty data: arc_max / this, within [HOST_DIRTY_MIN, HOST_DIRTY_MAX] */
#define HOST_DIRTY_DIV 4
#define HOST_DIRTY_MIN (16 * MiB)
#define HOST_DIRTY_MAX (512 * MiB)

static pthread_mutex_t host_arc_lock = PTHREAD_MUTEX_INITIALIZER;
static arc_t *host_arc_cache;                   /* host_arc_lock */
static host_tunable_t host_tunables[] = {
	{ "arc_max", 0, "default" },
	{ "arc_min", 0, "default" },
	{ "l2arc_write_max", 0, "default" },
};
#define HT_ARC_MAX 0
#define HT_ARC_MIN 1
#define HT_L2_WRITE 2

const char *
host_config_path(void)
{
	const char *p = getenv("TARN_CONFIG");
	return (p != NULL && p[0] != '\0' ? p : HOST_CONFIG_DEFAULT);
}

static void
host_config_warn(const char *path, int line, const char *what)
{
	host_log_fn_t logf = host_daemon_log();
	if (host_daemon_mode() && logf != NULL)
		logf("%s line %d: %s; ignored", path, line, what);
	else
		fprintf(stderr, "tarn: %s line %d: %s; ignored\n", path, line, what);
}

static char *
host_trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return (s);
}

/* Read the config file into the tunables (host_arc_lock held). */
static void
host_config_read(void)
{
	const char *path = host_config_path();
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return;                 /* missing: the defaults */
	char buf[512], msg[600];
	int line = 0;
	while (fgets(buf, sizeof (buf), f) != NULL) {
		line++;
		char *hash = strchr(buf, '#');
		if (hash != NULL)
			*hash = '\0';
		char *s = host_trim(buf);
		if (*s == '\0')
			continue;
		char *eq = strchr(s, '=');
		if (eq == NULL) {
			host_config_warn(path, line, "not key=value");
			continue;
		}
		*eq = '\0';
		char *key = host_trim(s), *val = host_trim(eq + 1);
		int t = host_tunable_lookup(key);
		uint64_t v;
		if (t < 0) {
			(void) snprintf(msg, sizeof (msg), "unknown key '%s'", key);
			host_config_warn(path, line, msg);
		} else if (arc_parse_size(val, &v) != 0) {
			(void) snprintf(msg, sizeof (msg), "bad size '%s' for %s", val, key);
			host_config_warn(path, line, msg);
		} else {
			host_tunables[t].ht_value = v;
			host_tunables[t].ht_source = "config";
		}
	}
	(void) fclose(f);
}

/* Fill in defaults and make the values consistent (host_arc_lock held). */
static void
host_tunables_settle(void)
{
	host_tunable_t *mx = &host_tunables[HT_ARC_MAX], *mn = &host_tunables[HT_ARC_MIN];
	uint64_t ram = arc_physmem();
	if (mx->ht_value == 0 || mx->ht_value > ram) {
		if (mx->ht_value > ram)
			host_config_warn(host_config_path(), 0, "arc_max is more than the RAM");
		mx->ht_value = arc_default_max();
		mx->ht_source = "default";
	}
	if (host_tunables[HT_L2_WRITE].ht_value == 0) {
		host_tunables[HT_L2_WRITE].ht_value = L2ARC_WRITE_MAX_DEFAULT;
		host_tunables[HT_L2_WRITE].ht_source = "default";
	}
	spa_l2arc_set_default_write_max(host_tunables[HT_L2_WRITE].ht_value);
	if (mn->ht_value == 0 || mn->ht_value > mx->ht_value) {
		if (mn->ht_value > mx->ht_value)
			host_config_warn(host_config_path(), 0, "arc_min is more than arc_max");
		mn->ht_value = arc_default_min(mx->ht_value);
		mn->ht_source = "default";
	}
}

arc_t *
host_arc(void)
{
	pthread_mutex_lock(&host_arc_lock);
	if (host_arc_cache == NULL) {
		host_config_read();
		host_tunables_settle();
		host_arc_cache = arc_create(host_tunables[HT_ARC_MIN].ht_value,
		    host_tunables[HT_ARC_MAX].ht_value);
		dmu_buf_warm_max(host_tunables[HT_ARC_MAX].ht_value / HOST_WARM_DIV);
	}
	arc_t *arc = host_arc_cache;
	pthread_mutex_unlock(&host_arc_lock);
	return (arc);
}

/* A pool's dirty-data limit for the daemon's arc_max. */
static uint64_t
host_dirty_max(uint64_t arc_max)
{
	return (MAX(HOST_DIRTY_MIN, MIN(HOST_DIRTY_MAX, arc_max / HOST_DIRTY_DIV)));
}

void
host_dmu_opts(dmu_pool_opts_t *o)
{
	o->dpo_arc = host_arc();
	pthread_mutex_lock(&host_arc_lock);
	o->dpo_dirty_max = host_dirty_max(host_tunables[HT_ARC_MAX].ht_value);
	pthread_mutex_unlock(&host_arc_lock);
}

int
host_tunable_lookup(const char *name)
{
	for (int i = 0; i < (int)ARRAY_SIZE(host_tunables); i++)
		if (strcmp(host_tunables[i].ht_name, name) == 0)
			return (i);
	return (-1);
}

int
host_tunable_count(void)
{
	return ((int)ARRAY_SIZE(host_tunables));
}

void
host_tunable_get(int i, host_tunable_t *out)
{
	(void) host_arc();
	pthread_mutex_lock(&host_arc_lock);
	*out = host_tunables[i];
	pthread_mutex_unlock(&host_arc_lock);
}

/* A size for a message: "16M", "1.50G" (zfs's style), or bytes. */
static void
host_size_str(uint64_t n, char *buf, size_t len)
{
	static const char units[] = "BKMGTPE";
	int i = 0;
	uint64_t v = n;
	while (v >= 1024 && i < 6 && (v % 1024 == 0 || v >= 10 * 1024)) {
		v /= 1024;
		i++;
	}
	if (i == 0 || (n & ((1ULL << (10 * i)) - 1)) == 0)
		(void) snprintf(buf, len, "%" PRIu64 "%c", v, units[i]);
	else
		(void) snprintf(buf, len, "%.2f%c", (double)n / (double)(1ULL << (10 * i)),
		    units[i]);
}

/*
 * Set tunables values[i] for names[i] (n of them, parsed already), all
 * or none: EINVAL with msg when the result would be inconsistent
 * (arc_min > arc_max, arc_max above RAM or 0).  *bad: the index of the
 * name the message is about.
 */
/* New l2arc_write_max and arc_max for the pools the daemon holds (host_arc_lock not held). */
static void
host_pools_apply(uint64_t write_max, uint64_t arc_max)
{
	char **names, err[256];
	int n;
	if (!host_daemon_mode() || host_pool_names(&names, &n) != 0)
		return;
	for (int i = 0; i < n; i++) {
		spa_t *spa;
		if (host_pool_open(names[i], SPA_OPEN_READONLY, &spa, err, sizeof (err)) == 0) {
			spa_l2arc_set_write_max(spa, write_max);
			dmu_pool_set_dirty_max(spa_dmu_pool(spa), host_dirty_max(arc_max));
			host_pool_close(spa);
		}
	}
	host_names_free(names, n);
}

int
host_tunables_set(int n, const int *idx, const uint64_t *values, int *bad, char *msg,
    size_t msglen)
{
	arc_t *arc = host_arc();
	pthread_mutex_lock(&host_arc_lock);
	uint64_t v[ARRAY_SIZE(host_tunables)];
	for (int i = 0; i < (int)ARRAY_SIZE(host_tunables); i++)
		v[i] = host_tunables[i].ht_value;
	for (int i = 0; i < n; i++)
		v[idx[i]] = values[i];
	uint64_t ram = arc_physmem();
	int error = 0;
	char a[32], b[32];
	host_size_str(ram, a, sizeof (a));
	*bad = 0;
	for (int i = 0; i < n && error == 0; i++) {
		*bad = i;
		if (idx[i] == HT_ARC_MAX && v[HT_ARC_MAX] > ram) {
			(void) snprintf(msg, msglen, "arc_max is more than the machine's memory "
			    "(%s)", a);
			error = SET_ERROR(EINVAL);
		} else if (idx[i] == HT_ARC_MAX && v[HT_ARC_MAX] < v[HT_ARC_MIN]) {
			host_size_str(v[HT_ARC_MIN], b, sizeof (b));
			(void) snprintf(msg, msglen, "arc_max is below arc_min (%s)", b);
			error = SET_ERROR(EINVAL);
		} else if (idx[i] == HT_ARC_MIN && v[HT_ARC_MIN] > v[HT_ARC_MAX]) {
			host_size_str(v[HT_ARC_MAX], b, sizeof (b));
			(void) snprintf(msg, msglen, "arc_min is above arc_max (%s)", b);
			error = SET_ERROR(EINVAL);
		} else if (idx[i] == HT_ARC_MAX && v[HT_ARC_MAX] == 0) {
			(void) snprintf(msg, msglen, "arc_max must be more than 0");
			error = SET_ERROR(EINVAL);
		} else if (idx[i] == HT_L2_WRITE && v[HT_L2_WRITE] < 64 * KiB) {
			(void) snprintf(msg, msglen, "l2arc_write_max must be at least 64K");
			error = SET_ERROR(EINVAL);
		}
	}
	if (error == 0)
		error = arc_set_limits(arc, v[HT_ARC_MIN], v[HT_ARC_MAX]);
	if (error == 0)
		dmu_buf_warm_max(v[HT_ARC_MAX] / HOST_WARM_DIV);
	if (error == 0) {
		for (int i = 0; i < n; i++) {
			host_tunables[idx[i]].ht_value = values[i];
			host_tunables[idx[i]].ht_source = "local";
		}
		spa_l2arc_set_default_write_max(v[HT_L2_WRITE]);
	}
	pthread_mutex_unlock(&host_arc_lock);
	if (error == 0)
		host_pools_apply(v[HT_L2_WRITE], v[HT_ARC_MAX]);
	return (error);
}
