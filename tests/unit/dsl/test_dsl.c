/*
 * Unit tests of the dataset layer on a real pool of file vdevs: names,
 * create/destroy/rename/iterate, properties with inheritance and sources,
 * validation messages, persistence across reopen, space accounting after
 * writing through the dmu, quotas and reservations.
 */
#include "tt.h"
#include "tt_pool.h"
#include "spa.h"
#include "dsl.h"

#include <fcntl.h>
#include <unistd.h>

static char paths[2][300];
static const char *pathv[2];
static char err[512];

static spa_t *
make_pool(uint64_t size)
{
	snprintf(paths[0], sizeof (paths[0]), "%s/d0", tt_tmpdir());
	unlink(paths[0]);
	int fd = open(paths[0], O_CREAT | O_RDWR, 0644);
	TT_ASSERT(fd >= 0);
	TT_OK(ftruncate(fd, (off_t)size));
	close(fd);
	pathv[0] = paths[0];
	char *argv[1] = { paths[0] };
	spa_vdev_spec_t *spec;
	TT_OK(spa_vdev_spec_parse(1, argv, &spec, err, sizeof (err)));
	spa_create_opts_t o;
	memset(&o, 0, sizeof (o));
	o.sco_no_cache = true;
	spa_t *spa = NULL;
	int e = spa_create("tank", spec, &o, &spa, err, sizeof (err));
	if (e != 0)
		fprintf(stderr, "create: %s\n", err);
	TT_OK(e);
	spa_vdev_spec_free(spec);
	return (spa);
}

static spa_t *
reopen(void)
{
	spa_import_opts_t o;
	memset(&o, 0, sizeof (o));
	o.sio_no_cache = true;
	spa_t *spa = NULL;
	int e = spa_open_paths(pathv, 1, &o, &spa, err, sizeof (err));
	if (e != 0)
		fprintf(stderr, "open: %s\n", err);
	TT_OK(e);
	return (spa);
}

static int init_calls;

static int
count_init(void *arg, objset_t *os)
{
	init_calls++;
	return (0);
}

static void
create_ok(dsl_pool_t *dp, const char *name)
{
	int e = dsl_dataset_create(dp, name, false, NULL, 0, err, sizeof (err));
	if (e != 0)
		fprintf(stderr, "  create %s: %s\n", name, err);
	TT_OK(e);
}

/* Expect EINVAL-ish failure with exactly this message. */
#define TT_ERRMSG(call, msg) do { \
	err[0] = '\0'; \
	TT_CHECK((call) != 0); \
	if (strcmp(err, (msg)) != 0) { \
		fprintf(stderr, "  %s:%d: message '%s', want '%s'\n", __FILE__, __LINE__, err, (msg)); \
		tt_failed_checks++; } } while (0)

static void
get(dsl_pool_t *dp, const char *name, const char *prop, dsl_prop_val_t *v)
{
	int p = dsl_prop_lookup(prop);
	TT_ASSERT(p >= 0);
	TT_OK(dsl_prop_get(dp, name, p, false, v, err, sizeof (err)));
}

static void
check_prop(dsl_pool_t *dp, const char *name, const char *prop, const char *value,
    dsl_source_t src, const char *from)
{
	dsl_prop_val_t v;
	get(dp, name, prop, &v);
	bool ok = strcmp(v.dpv_str, value) == 0 && v.dpv_source == src &&
	    (from == NULL || strcmp(v.dpv_setpoint, from) == 0);
	if (!ok) {
		fprintf(stderr, "  %s %s = '%s' src %d from '%s'; want '%s' src %d from '%s'\n",
		    name, prop, v.dpv_str, v.dpv_source, v.dpv_setpoint, value, src,
		    from ? from : "");
		tt_failed_checks++;
	}
}

static void
test_names(void)
{
	TT_OK(dsl_name_validate("tank/a b/c-d_e.f:g", err, sizeof (err)));
	TT_ERRMSG(dsl_name_validate("tank/a/", err, sizeof (err)), "trailing slash in name");
	TT_ERRMSG(dsl_name_validate("/tank", err, sizeof (err)), "leading slash in name");
	TT_ERRMSG(dsl_name_validate("tank//a", err, sizeof (err)),
	    "empty component or misplaced '@' or '#' delimiter in name");
	TT_ERRMSG(dsl_name_validate("tank/a*b", err, sizeof (err)), "invalid character '*' in name");
	TT_ERRMSG(dsl_name_validate("tank/a@s", err, sizeof (err)),
	    "snapshot delimiter '@' is not expected here");
	TT_ERRMSG(dsl_name_validate("tank/..", err, sizeof (err)),
	    "parent reference, '..' is found in name");
	char big[300];
	memset(big, 'a', sizeof (big) - 1);
	big[sizeof (big) - 1] = '\0';
	memcpy(big, "tank/", 5);
	TT_ERRMSG(dsl_name_validate(big, err, sizeof (err)), "name is too long");
}

static void
test_sizes(void)
{
	char b[32];
	uint64_t v;
	dsl_nicebytes(0, b, sizeof (b));
	TT_CHECK(strcmp(b, "0B") == 0);
	dsl_nicebytes(512, b, sizeof (b));
	TT_CHECK(strcmp(b, "512B") == 0);
	dsl_nicebytes(128 * KiB, b, sizeof (b));
	TT_CHECK(strcmp(b, "128K") == 0);
	dsl_nicebytes(1536 * KiB, b, sizeof (b));
	TT_CHECK(strcmp(b, "1.50M") == 0);
	dsl_nicebytes(10 * GiB - 1, b, sizeof (b));
	TT_CHECK(strcmp(b, "10.0G") == 0);
	TT_OK(dsl_parse_size("10G", true, &v, err, sizeof (err)));
	TT_EQ(v, 10 * GiB);
	TT_OK(dsl_parse_size("1.5m", true, &v, err, sizeof (err)));
	TT_EQ(v, 1536 * KiB);
	TT_OK(dsl_parse_size("4KB", true, &v, err, sizeof (err)));
	TT_EQ(v, 4096);
	TT_OK(dsl_parse_size("none", true, &v, err, sizeof (err)));
	TT_EQ(v, 0);
	TT_ERRMSG(dsl_parse_size("abc", true, &v, err, sizeof (err)), "bad numeric value 'abc'");
	TT_ERRMSG(dsl_parse_size("10X", true, &v, err, sizeof (err)),
	    "invalid numeric suffix 'X'");
	TT_ERRMSG(dsl_parse_size("99999E", true, &v, err, sizeof (err)),
	    "numeric value is too large");
}

static int
iter_cb(void *arg, const char *name, int depth)
{
	char *s = arg;
	snprintf(s + strlen(s), 512 - strlen(s), "%s:%d ", name, depth);
	return (0);
}

static int
busy_y(void *arg, const char *name, char *e, size_t len)
{
	if (strcmp(name, "tank/x/y") != 0)
		return (0);
	snprintf(e, len, "dataset is busy");
	return (EBUSY);
}

static void
test_tree(void)
{
	spa_t *spa = make_pool(256 * MiB);
	dsl_pool_t *dp;
	TT_CHECK(dsl_pool_open_reader(spa, &dp) == ENOENT);   /* no root yet */
	init_calls = 0;
	TT_OK(dsl_pool_open(spa, count_init, NULL, &dp));
	TT_EQ(init_calls, 1);        /* the root dataset's file system */
	TT_CHECK(dsl_dataset_exists(dp, "tank"));
	create_ok(dp, "tank/a");
	create_ok(dp, "tank/a/b");
	TT_EQ(init_calls, 3);
	TT_ERRMSG(dsl_dataset_create(dp, "tank/a", false, NULL, 0, err, sizeof (err)),
	    "dataset already exists");
	TT_ERRMSG(dsl_dataset_create(dp, "tank/x/y/z", false, NULL, 0, err, sizeof (err)),
	    "parent does not exist");
	TT_ERRMSG(dsl_dataset_create(dp, "other/x", false, NULL, 0, err, sizeof (err)),
	    "no such pool 'other'");
	TT_ERRMSG(dsl_dataset_create(dp, "tank/a/", false, NULL, 0, err, sizeof (err)),
	    "trailing slash in name");
	/* object set keys and back (zpool status -v names damaged objects so) */
	char key[64], nm[DSL_NAME_MAX];
	TT_OK(dsl_dataset_oskey(dp, "tank/a/b", key, sizeof (key)));
	TT_OK(dsl_dataset_key_name(dp, key, nm, sizeof (nm)));
	TT_CHECK(strcmp(nm, "tank/a/b") == 0);
	TT_OK(dsl_dataset_oskey(dp, "tank", key, sizeof (key)));
	TT_OK(dsl_dataset_key_name(dp, key, nm, sizeof (nm)));
	TT_CHECK(strcmp(nm, "tank") == 0);
	TT_EQ(dsl_dataset_oskey(dp, "tank/nope", key, sizeof (key)), ENOENT);
	TT_EQ(dsl_dataset_key_name(dp, "<MOS>", nm, sizeof (nm)), ENOENT);
	TT_EQ(dsl_dataset_key_name(dp, "ds", nm, sizeof (nm)), ENOENT);
	TT_EQ(dsl_dataset_key_name(dp, "ds12x", nm, sizeof (nm)), ENOENT);
	TT_EQ(dsl_dataset_key_name(dp, "ds999999", nm, sizeof (nm)), ENOENT);
	TT_OK(dsl_dataset_create(dp, "tank/x/y/z", true, NULL, 0, err, sizeof (err)));
	TT_CHECK(dsl_dataset_exists(dp, "tank/x"));
	TT_CHECK(dsl_dataset_exists(dp, "tank/x/y"));
	TT_CHECK(dsl_dataset_exists(dp, "tank/x/y/z"));

	/* destroy */
	TT_ERRMSG(dsl_dataset_destroy(dp, "tank/x", false, err, sizeof (err)),
	    "filesystem has children; use -r");
	TT_ERRMSG(dsl_dataset_destroy(dp, "tank/nope", false, err, sizeof (err)),
	    "dataset does not exist");
	TT_CHECK(dsl_dataset_destroy(dp, "tank", false, err, sizeof (err)) == EINVAL);
	/* a busy dataset (mounted, say) anywhere below stops the whole destroy */
	dsl_pool_set_busy_fn(dp, busy_y, NULL);
	TT_ERRMSG(dsl_dataset_destroy(dp, "tank/x", true, err, sizeof (err)),
	    "dataset is busy");
	TT_CHECK(dsl_dataset_exists(dp, "tank/x/y/z"));
	dsl_pool_set_busy_fn(dp, NULL, NULL);
	TT_OK(dsl_dataset_destroy(dp, "tank/x", true, err, sizeof (err)));
	TT_CHECK(!dsl_dataset_exists(dp, "tank/x/y/z"));
	TT_CHECK(!dsl_dataset_exists(dp, "tank/x"));

	/* rename, also under another parent */
	create_ok(dp, "tank/c");
	TT_OK(dsl_dataset_rename(dp, "tank/a/b", "tank/c/b2", false, err, sizeof (err)));
	TT_CHECK(!dsl_dataset_exists(dp, "tank/a/b"));
	TT_CHECK(dsl_dataset_exists(dp, "tank/c/b2"));
	TT_ERRMSG(dsl_dataset_rename(dp, "tank/c", "tank/a", false, err, sizeof (err)),
	    "dataset already exists");
	TT_ERRMSG(dsl_dataset_rename(dp, "tank/c", "tank/c/d", false, err, sizeof (err)),
	    "new dataset name cannot be a descendant of current dataset name");
	TT_ERRMSG(dsl_dataset_rename(dp, "tank/c", "other/c", false, err, sizeof (err)),
	    "datasets must be within same pool");
	TT_ERRMSG(dsl_dataset_rename(dp, "tank/c", "tank/q/c", false, err, sizeof (err)),
	    "parent does not exist");
	TT_OK(dsl_dataset_rename(dp, "tank/c", "tank/q/c", true, err, sizeof (err)));
	TT_CHECK(dsl_dataset_exists(dp, "tank/q/c/b2"));

	/* the walk: depth-first, children sorted */
	char names[512] = "";
	TT_OK(dsl_dataset_iter(dp, "tank", -1, iter_cb, names));
	TT_CHECK(strcmp(names, "tank:0 tank/a:1 tank/q:1 tank/q/c:2 tank/q/c/b2:3 ") == 0);
	names[0] = '\0';
	TT_OK(dsl_dataset_iter(dp, "tank", 1, iter_cb, names));
	TT_CHECK(strcmp(names, "tank:0 tank/a:1 tank/q:1 ") == 0);
	dsl_pool_close(dp);
	spa_close(spa);

	/* everything survives reopen; the root is not created again */
	spa = reopen();
	init_calls = 0;
	TT_OK(dsl_pool_open(spa, count_init, NULL, &dp));
	TT_EQ(init_calls, 0);
	names[0] = '\0';
	TT_OK(dsl_dataset_iter(dp, "tank", -1, iter_cb, names));
	TT_CHECK(strcmp(names, "tank:0 tank/a:1 tank/q:1 tank/q/c:2 tank/q/c/b2:3 ") == 0);
	uint64_t blocks, errors;
	TT_OK(spa_verify_all(spa, true, &blocks, &errors));
	TT_EQ(errors, 0);
	/* a reader sees the same tree and changes nothing */
	dsl_pool_t *rd;
	TT_OK(dsl_pool_open_reader(spa, &rd));
	names[0] = '\0';
	TT_OK(dsl_dataset_iter(rd, "tank", -1, iter_cb, names));
	TT_CHECK(strcmp(names, "tank:0 tank/a:1 tank/q:1 tank/q/c:2 tank/q/c/b2:3 ") == 0);
	TT_CHECK(dsl_dataset_create(rd, "tank/n", false, NULL, 0, err, sizeof (err)) == EROFS);
	TT_CHECK(dsl_dataset_destroy(rd, "tank/a", false, err, sizeof (err)) == EROFS);
	TT_CHECK(dsl_dataset_rename(rd, "tank/a", "tank/a2", false, err, sizeof (err)) == EROFS);
	TT_CHECK(dsl_prop_set(rd, "tank/a", "atime", "off", err, sizeof (err)) == EROFS);
	TT_CHECK(dsl_prop_inherit(rd, "tank/a", "atime", err, sizeof (err)) == EROFS);
	dsl_pool_close(rd);
	dsl_pool_close(dp);
	spa_close(spa);
}

static bool
mounted_a(void *arg, const char *name)
{
	return (strcmp(name, "tank/a") == 0);
}

/* Each settable property: default, local, inherited, and back by inherit. */
static void
test_props_inherit(void)
{
	spa_t *spa = make_pool(256 * MiB);
	dsl_pool_t *dp;
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	create_ok(dp, "tank/a");
	create_ok(dp, "tank/a/b");
	static const struct { const char *p, *def, *val; bool inh; } cases[] = {
		{ "canmount", "on", "noauto", false },
		{ "readonly", "off", "on", true },
		{ "atime", "on", "off", true },
		{ "relatime", "off", "on", true },
		{ "recordsize", "128K", "16K", true },
		{ "checksum", "on", "sha256", true },
		{ "compression", "off", "gzip-5", true },
		{ "copies", "1", "2", true },
		{ "exec", "on", "off", true },
		{ "setuid", "on", "off", true },
		{ "devices", "on", "off", true },
		{ "xattr", "on", "off", true },
		{ "quota", "none", "1G", false },
		{ "refquota", "none", "512M", false },
		{ "reservation", "none", "1M", false },
	};
	for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
		check_prop(dp, "tank/a/b", cases[i].p, cases[i].def, DSL_SRC_DEFAULT, NULL);
		TT_OK(dsl_prop_set(dp, "tank/a", cases[i].p, cases[i].val, err, sizeof (err)));
		check_prop(dp, "tank/a", cases[i].p, cases[i].val, DSL_SRC_LOCAL, "tank/a");
		if (cases[i].inh)
			check_prop(dp, "tank/a/b", cases[i].p, cases[i].val, DSL_SRC_INHERITED,
			    "tank/a");
		else
			check_prop(dp, "tank/a/b", cases[i].p, cases[i].def, DSL_SRC_DEFAULT, NULL);
		if (cases[i].inh || strcmp(cases[i].p, "canmount") == 0) {
			TT_OK(dsl_prop_inherit(dp, "tank/a", cases[i].p, err, sizeof (err)));
			check_prop(dp, "tank/a", cases[i].p, cases[i].def, DSL_SRC_DEFAULT, NULL);
		} else {
			TT_CHECK(dsl_prop_inherit(dp, "tank/a", cases[i].p, err, sizeof (err)) ==
			    EINVAL);
			TT_OK(dsl_prop_set(dp, "tank/a", cases[i].p, "none", err, sizeof (err)));
			check_prop(dp, "tank/a", cases[i].p, "none", DSL_SRC_LOCAL, NULL);
		}
	}
	/* mountpoint: default follows the name; inherited appends the path */
	check_prop(dp, "tank", "mountpoint", "/tank", DSL_SRC_DEFAULT, NULL);
	check_prop(dp, "tank/a/b", "mountpoint", "/tank/a/b", DSL_SRC_DEFAULT, NULL);
	TT_OK(dsl_prop_set(dp, "tank/a", "mountpoint", "/srv/data/", err, sizeof (err)));
	check_prop(dp, "tank/a", "mountpoint", "/srv/data", DSL_SRC_LOCAL, NULL);
	check_prop(dp, "tank/a/b", "mountpoint", "/srv/data/b", DSL_SRC_INHERITED, "tank/a");
	TT_OK(dsl_prop_set(dp, "tank", "mountpoint", "/", err, sizeof (err)));
	TT_OK(dsl_prop_inherit(dp, "tank/a", "mountpoint", err, sizeof (err)));
	check_prop(dp, "tank/a/b", "mountpoint", "/a/b", DSL_SRC_INHERITED, "tank");
	TT_OK(dsl_prop_set(dp, "tank", "mountpoint", "none", err, sizeof (err)));
	check_prop(dp, "tank/a/b", "mountpoint", "none", DSL_SRC_INHERITED, "tank");
	/* read-only statistics */
	check_prop(dp, "tank/a", "type", "filesystem", DSL_SRC_NONE, NULL);
	check_prop(dp, "tank/a", "mounted", "no", DSL_SRC_NONE, NULL);
	dsl_pool_set_mounted_fn(dp, mounted_a, NULL);
	check_prop(dp, "tank/a", "mounted", "yes", DSL_SRC_NONE, NULL);
	check_prop(dp, "tank/a/b", "mounted", "no", DSL_SRC_NONE, NULL);
	dsl_pool_set_mounted_fn(dp, NULL, NULL);
	dsl_prop_val_t v;
	TT_OK(dsl_prop_get(dp, "tank/a", DSL_PROP_CREATION, true, &v, err, sizeof (err)));
	TT_CHECK(v.dpv_num > 1700000000 && v.dpv_num <= (uint64_t)time(NULL));
	/* -o at create; a rename changes what is inherited */
	dsl_prop_setting_t o[2] = { { "compression", "lz4" }, { "atime", "off" } };
	TT_OK(dsl_dataset_create(dp, "tank/c", false, o, 2, err, sizeof (err)));
	check_prop(dp, "tank/c", "compression", "lz4", DSL_SRC_LOCAL, NULL);
	check_prop(dp, "tank/c", "atime", "off", DSL_SRC_LOCAL, NULL);
	TT_OK(dsl_prop_set(dp, "tank/c", "exec", "off", err, sizeof (err)));
	TT_OK(dsl_dataset_rename(dp, "tank/a/b", "tank/c/b", false, err, sizeof (err)));
	check_prop(dp, "tank/c/b", "exec", "off", DSL_SRC_INHERITED, "tank/c");
	dsl_pool_close(dp);
	spa_close(spa);

	/* persistence */
	spa = reopen();
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	check_prop(dp, "tank/c", "compression", "lz4", DSL_SRC_LOCAL, NULL);
	check_prop(dp, "tank/c/b", "exec", "off", DSL_SRC_INHERITED, "tank/c");
	check_prop(dp, "tank/c/b", "mountpoint", "none", DSL_SRC_INHERITED, "tank");
	check_prop(dp, "tank/a", "quota", "none", DSL_SRC_LOCAL, NULL);
	dsl_pool_close(dp);
	spa_close(spa);
}

static void
test_props_invalid(void)
{
	spa_t *spa = make_pool(256 * MiB);
	dsl_pool_t *dp;
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	create_ok(dp, "tank/a");
#define SETERR(p, v, msg) TT_ERRMSG(dsl_prop_set(dp, "tank/a", p, v, err, sizeof (err)), msg)
	SETERR("recordsize", "1000", "'recordsize' must be power of 2 from 512B to 1M");
	SETERR("recordsize", "2M", "'recordsize' must be power of 2 from 512B to 1M");
	SETERR("recordsize", "256", "'recordsize' must be power of 2 from 512B to 1M");
	SETERR("atime", "yes", "'atime' must be one of 'off | on'");
	SETERR("canmount", "maybe", "'canmount' must be one of 'off | on | noauto'");
	SETERR("copies", "4", "'copies' must be one of '1 | 2 | 3'");
	SETERR("checksum", "md5",
	    "'checksum' must be one of 'on | off | fletcher4 | sha256 | xxh3'");
	SETERR("compression", "gzip-10",
	    "'compression' must be one of 'on | off | lz4 | zstd | gzip | gzip-[1-9] | "
	    "zstd-[1-19] | zle | zstd-fast | zstd-fast-[1-10,20,30,40,50,60,70,80,90,100,"
	    "500,1000]'");
	SETERR("compression", "zstd-20",
	    "'compression' must be one of 'on | off | lz4 | zstd | gzip | gzip-[1-9] | "
	    "zstd-[1-19] | zle | zstd-fast | zstd-fast-[1-10,20,30,40,50,60,70,80,90,100,"
	    "500,1000]'");
	SETERR("compression", "zstd-fast-15",
	    "'compression' must be one of 'on | off | lz4 | zstd | gzip | gzip-[1-9] | "
	    "zstd-[1-19] | zle | zstd-fast | zstd-fast-[1-10,20,30,40,50,60,70,80,90,100,"
	    "500,1000]'");
	SETERR("compression", "lzjb", "'compression' value 'lzjb' is not supported (a format "
	    "kept for old pools); use lz4, which is faster and smaller");
	SETERR("mountpoint", "rel/path",
	    "'mountpoint' must be an absolute path, 'none', or 'legacy'");
	SETERR("quota", "lots", "bad numeric value 'lots'");
	SETERR("quota", "0", "use 'none' to disable quota/refquota");
	SETERR("used", "10G", "'used' is readonly");
	SETERR("available", "1", "'available' is readonly");
	SETERR("nosuch", "1", "invalid property 'nosuch'");
	SETERR("reservation", "100T", "size is greater than available space");
	TT_ERRMSG(dsl_prop_set(dp, "tank/zz", "atime", "off", err, sizeof (err)),
	    "dataset does not exist");
	TT_ERRMSG(dsl_prop_inherit(dp, "tank/a", "quota", err, sizeof (err)),
	    "'quota' property cannot be inherited; use 'zfs set quota=none' to clear");
	dsl_prop_setting_t o[1] = { { "recordsize", "3K" } };
	TT_ERRMSG(dsl_dataset_create(dp, "tank/b", false, o, 1, err, sizeof (err)),
	    "'recordsize' must be power of 2 from 512B to 1M");
	TT_CHECK(!dsl_dataset_exists(dp, "tank/b"));
	dsl_prop_setting_t o2[1] = { { "bogus", "3K" } };
	TT_ERRMSG(dsl_dataset_create(dp, "tank/b", false, o2, 1, err, sizeof (err)),
	    "invalid property 'bogus'");
	TT_CHECK(!dsl_dataset_exists(dp, "tank/b"));
	/* aliases and the values that are accepted */
	TT_OK(dsl_prop_set(dp, "tank/a", "compress", "on", err, sizeof (err)));
	TT_OK(dsl_prop_set(dp, "tank/a", "checksum", "off", err, sizeof (err)));
	TT_OK(dsl_prop_set(dp, "tank/a", "recordsize", "1M", err, sizeof (err)));
	TT_OK(dsl_prop_set(dp, "tank/a", "recordsize", "512", err, sizeof (err)));
	TT_OK(dsl_prop_set(dp, "tank/a", "mountpoint", "legacy", err, sizeof (err)));
	check_prop(dp, "tank/a", "recsize", "512B", DSL_SRC_LOCAL, NULL);
	/* long mountpoints: up to DSL_MOUNTPOINT_MAX - 1 bytes, inherited below */
	char mp[DSL_MOUNTPOINT_MAX + 8], want[DSL_MOUNTPOINT_MAX + 8];
	memset(mp, 'm', sizeof (mp));
	mp[0] = '/';
	mp[DSL_MOUNTPOINT_MAX - 1] = '\0';
	TT_OK(dsl_prop_set(dp, "tank/a", "mountpoint", mp, err, sizeof (err)));
	create_ok(dp, "tank/a/kid");
	snprintf(want, sizeof (want), "%s/kid", mp);
	check_prop(dp, "tank/a/kid", "mountpoint", want, DSL_SRC_INHERITED, "tank/a");
	mp[DSL_MOUNTPOINT_MAX - 1] = 'm';
	mp[DSL_MOUNTPOINT_MAX] = '\0';
	SETERR("mountpoint", mp, "'mountpoint' is too long");
	dsl_pool_close(dp);
	spa_close(spa);
}

/* Write buf[0..len) into a new object of the dataset's object set (not synced). */
static uint64_t
write_object(dsl_pool_t *dp, const char *name, const void *buf, uint64_t len)
{
	objset_t *os;
	TT_OK(dsl_dataset_objset(dp, name, &os));
	uint64_t obj;
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_write(tx, 0, 0, len);
	TT_OK(dmu_tx_assign(tx, TXG_WAIT));
	TT_OK(dmu_object_alloc(os, DMU_OT_PLAIN_FILE, 128 * KiB, DMU_OT_NONE, 0, tx, &obj));
	TT_OK(dmu_write(os, obj, 0, len, buf, tx));
	dmu_tx_commit(tx);
	return (obj);
}

/* Write `len` random bytes into a new object of the dataset's object set and sync. */
static uint64_t
write_data(dsl_pool_t *dp, const char *name, uint64_t len)
{
	uint8_t *buf = tarn_alloc(len);
	tarn_rand_t r;
	tarn_rand_seed(&r, len);
	for (uint64_t i = 0; i + 8 <= len; i += 8) {
		uint64_t v = tarn_rand_u64(&r);
		memcpy(buf + i, &v, 8);
	}
	uint64_t obj = write_object(dp, name, buf, len);
	tarn_free(buf);
	TT_OK(txg_wait_synced(spa_dmu_pool(dsl_pool_spa(dp)), 0));
	return (obj);
}

/*
 * The pool's own metadata (space maps, MOS) briefly takes a few MiB now and
 * then; a dataset's steady available space is the largest of a few samples
 * taken across txgs.
 */
static uint64_t
steady_avail(dsl_pool_t *dp, const char *name)
{
	uint64_t best = 0;
	for (int i = 0; i < 4; i++) {
		dsl_space_t s;
		TT_OK(dsl_dataset_space(dp, name, &s));
		best = MAX(best, s.ds_available);
		TT_OK(txg_wait_synced(spa_dmu_pool(dsl_pool_spa(dp)), 0));
	}
	return (best);
}

static int names_t_count;

static int
count_cb(void *arg, const char *name, int depth)
{
	names_t_count++;
	return (0);
}

static void
test_space(void)
{
	spa_t *spa = make_pool(256 * MiB);
	dsl_pool_t *dp;
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	create_ok(dp, "tank/a");
	create_ok(dp, "tank/a/b");
	dsl_space_t root0, a0, b0, b1, a1, root1;
	TT_OK(dsl_dataset_space(dp, "tank", &root0));
	TT_OK(dsl_dataset_space(dp, "tank/a", &a0));
	TT_OK(dsl_dataset_space(dp, "tank/a/b", &b0));
	TT_CHECK(b0.ds_referenced < 64 * KiB);
	TT_CHECK(root0.ds_available > 100 * MiB);
	uint64_t avail0 = steady_avail(dp, "tank");
	write_data(dp, "tank/a/b", 8 * MiB);
	TT_OK(dsl_dataset_space(dp, "tank/a/b", &b1));
	TT_OK(dsl_dataset_space(dp, "tank/a", &a1));
	TT_OK(dsl_dataset_space(dp, "tank", &root1));
	TT_CHECK(b1.ds_referenced >= b0.ds_referenced + 8 * MiB);
	TT_CHECK(b1.ds_referenced < b0.ds_referenced + 9 * MiB);
	TT_EQ(b1.ds_used, b1.ds_referenced);
	TT_EQ(a1.ds_referenced, a0.ds_referenced);
	TT_EQ(a1.ds_used, a1.ds_referenced + b1.ds_used);
	TT_CHECK(root1.ds_used >= a1.ds_used);
	uint64_t avail1 = steady_avail(dp, "tank");
	TT_CHECK(avail1 + 7 * MiB <= avail0);
	TT_CHECK(avail1 + 10 * MiB > avail0);
	dsl_pool_close(dp);
	spa_close(spa);

	/* referenced is persisted with the object set */
	spa = reopen();
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	dsl_space_t b2;
	TT_OK(dsl_dataset_space(dp, "tank/a/b", &b2));
	TT_EQ(b2.ds_referenced, b1.ds_referenced);
	/* destroy gives the space back after the frees' deferral */
	spa_space_t s0, s1;
	spa_get_space(spa, &s0);
	TT_OK(dsl_dataset_destroy(dp, "tank/a", true, err, sizeof (err)));
	for (int i = 0; i < 50; i++) {
		spa_get_space(spa, &s1);
		if (s1.ss_alloc + 7 * MiB <= s0.ss_alloc)
			break;
		/* a txg with something in it, so that the deferral moves on */
		(void) spa_history_log(spa, "dsl test: wait for frees");
		txg_kick(spa_dmu_pool(spa));
		TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	}
	if (s1.ss_alloc + 7 * MiB > s0.ss_alloc)
		fprintf(stderr, "  alloc before %" PRIu64 " after %" PRIu64 " deferred %" PRIu64 "\n",
		    s0.ss_alloc, s1.ss_alloc, s1.ss_deferred);
	TT_CHECK(s1.ss_alloc + 7 * MiB <= s0.ss_alloc);
	dsl_space_t r2;
	TT_OK(dsl_dataset_space(dp, "tank", &r2));
	TT_CHECK(r2.ds_used < 1 * MiB);
	uint64_t blocks, errors;
	TT_OK(spa_verify_all(spa, true, &blocks, &errors));
	TT_EQ(errors, 0);
	/* create and destroy many: each root block is freed exactly once */
	for (int i = 0; i < 20; i++) {
		char name[64];
		snprintf(name, sizeof (name), "tank/t%d", i);
		create_ok(dp, name);
		if (i % 2 == 1)
			write_data(dp, name, 64 * KiB);
	}
	for (int i = 0; i < 10; i++) {
		char name[64];
		snprintf(name, sizeof (name), "tank/t%d", i);
		TT_OK(dsl_dataset_destroy(dp, name, false, err, sizeof (err)));
	}
	/* zfs destroy -r POOL: everything below the root goes, the root stays */
	TT_OK(dsl_dataset_destroy(dp, "tank", true, err, sizeof (err)));
	TT_CHECK(dsl_dataset_exists(dp, "tank"));
	TT_CHECK(!dsl_dataset_exists(dp, "tank/t10"));
	dsl_pool_close(dp);
	spa_close(spa);
	/* the space maps replay (a double free would not) and nothing is left */
	spa = reopen();
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	names_t_count = 0;
	TT_OK(dsl_dataset_iter(dp, "tank", -1, count_cb, NULL));
	TT_EQ(names_t_count, 1);
	TT_OK(spa_verify_all(spa, true, &blocks, &errors));
	TT_EQ(errors, 0);
	/* nothing of the data is left (the pool's metadata may briefly hold ~5 MiB) */
	spa_get_space(spa, &s1);
	if (s1.ss_alloc >= 7 * MiB)
		fprintf(stderr, "  alloc %" PRIu64 " deferred %" PRIu64 "\n", s1.ss_alloc,
		    s1.ss_deferred);
	TT_CHECK(s1.ss_alloc < 7 * MiB);
	dsl_pool_close(dp);
	spa_close(spa);
}

static void
test_quota(void)
{
	spa_t *spa = make_pool(256 * MiB);
	dsl_pool_t *dp;
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	create_ok(dp, "tank/q");
	create_ok(dp, "tank/q/c");
	create_ok(dp, "tank/r");
	dsl_space_t root, q, c, r;
	TT_OK(dsl_dataset_space(dp, "tank", &root));
	uint64_t pool = steady_avail(dp, "tank");
	/* quota on the parent limits the child */
	TT_OK(dsl_prop_set(dp, "tank/q", "quota", "20M", err, sizeof (err)));
	TT_OK(dsl_dataset_space(dp, "tank/q/c", &c));
	TT_OK(dsl_dataset_space(dp, "tank/q", &q));
	TT_EQ(q.ds_available, 20 * MiB - q.ds_used);
	TT_EQ(c.ds_available, 20 * MiB - q.ds_used);
	write_data(dp, "tank/q/c", 4 * MiB);
	TT_OK(dsl_dataset_space(dp, "tank/q", &q));
	TT_OK(dsl_dataset_space(dp, "tank/q/c", &c));
	TT_CHECK(q.ds_used >= 4 * MiB);
	TT_EQ(c.ds_available, 20 * MiB - q.ds_used);
	bool qb = false;
	TT_EQ(dsl_dataset_avail(dp, "tank/q/c", &qb), c.ds_available);
	TT_CHECK(qb && c.ds_quota_bound);       /* the parent's quota limits it */
	TT_OK(dsl_dataset_space(dp, "tank/r", &r));
	TT_CHECK(!r.ds_quota_bound);            /* the pool does */
	TT_EQ(dsl_dataset_avail(dp, "tank/r", &qb), r.ds_available);
	TT_CHECK(!qb);
	/* refquota limits only the dataset's own data */
	TT_OK(dsl_prop_set(dp, "tank/q/c", "refquota", "6M", err, sizeof (err)));
	TT_OK(dsl_dataset_space(dp, "tank/q/c", &c));
	TT_EQ(c.ds_available, 6 * MiB - c.ds_referenced);
	/* a quota below what is used is refused */
	TT_ERRMSG(dsl_prop_set(dp, "tank/q", "quota", "1M", err, sizeof (err)),
	    "size is less than current used or reserved space");
	TT_ERRMSG(dsl_prop_set(dp, "tank/q/c", "refquota", "1M", err, sizeof (err)),
	    "size is less than current used or reserved space");
	/* a reservation is charged to the parent and taken from everyone else */
	TT_OK(dsl_prop_set(dp, "tank/r", "reservation", "30M", err, sizeof (err)));
	/* (two reads of the same pool state: retry if a sync came between) */
	for (int i = 0; i < 20; i++) {
		TT_OK(dsl_dataset_space(dp, "tank/r", &r));
		TT_OK(dsl_dataset_space(dp, "tank", &root));
		if (r.ds_available == root.ds_available + 30 * MiB - r.ds_used)
			break;
	}
	TT_CHECK(root.ds_used >= 30 * MiB);
	TT_CHECK(r.ds_used < 1 * MiB);
	uint64_t unused = 30 * MiB - r.ds_used;
	/* tank/r may use its reservation plus what the pool has free */
	TT_CHECK(r.ds_available > root.ds_available);
	TT_EQ(r.ds_available, root.ds_available + unused);
	/* (slack: deferred frees of metadata mature meanwhile) */
	uint64_t now = steady_avail(dp, "tank");
	if (now + unused + 3 * MiB > pool || now + unused + 8 * MiB <= pool)
		fprintf(stderr, "  pool %" PRIu64 " now %" PRIu64 " unused %" PRIu64 " q.used %"
		    PRIu64 "\n", pool, now, unused, q.ds_used);
	TT_CHECK(now + unused + 3 * MiB <= pool);
	TT_CHECK(now + unused + 8 * MiB > pool);
	TT_ERRMSG(dsl_prop_set(dp, "tank/q", "quota", "10M", err, sizeof (err)) == 0 ?
	    dsl_prop_set(dp, "tank/q", "reservation", "11M", err, sizeof (err)) : 1,
	    "size is greater than the quota");
	TT_OK(dsl_prop_set(dp, "tank/r", "reservation", "none", err, sizeof (err)));
	TT_OK(dsl_dataset_space(dp, "tank", &root));
	TT_CHECK(root.ds_used < 8 * MiB);
	dsl_pool_close(dp);
	spa_close(spa);
}

/*
 * Space of many datasets, asked through a second handle (a mount's
 * reader) while the first changes them: the figures each txg's walk
 * keeps follow every change once it has synced, and the tree's used is
 * the sum of its parts.
 */
static void
test_space_many(void)
{
	enum { N = 100 };
	spa_t *spa = make_pool(256 * MiB);
	dsl_pool_t *dp, *rd;
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	char name[64];
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof (name), "tank/d%d", i);
		create_ok(dp, name);
	}
	create_ok(dp, "tank/d0/c");
	TT_OK(dsl_pool_open_reader(spa, &rd));
	dsl_space_t a, b, c;
	TT_OK(dsl_dataset_space(rd, "tank/d50", &a));
	TT_CHECK(a.ds_available > 100 * MiB && !a.ds_quota_bound);
	/* a reservation elsewhere is taken from tank/d50, not from tank/d7 */
	TT_OK(dsl_prop_set(dp, "tank/d7", "reservation", "20M", err, sizeof (err)));
	for (int i = 0; i < 20; i++) {
		TT_OK(dsl_dataset_space(rd, "tank/d50", &b));
		TT_OK(dsl_dataset_space(rd, "tank/d7", &c));
		if (c.ds_available == b.ds_available + 20 * MiB - c.ds_used)
			break;
	}
	TT_EQ(c.ds_available, b.ds_available + 20 * MiB - c.ds_used);
	TT_CHECK(b.ds_available + 18 * MiB < a.ds_available);
	TT_CHECK(b.ds_available + 22 * MiB > a.ds_available);
	/* a quota on the parent bounds the child */
	TT_OK(dsl_prop_set(dp, "tank/d0", "quota", "5M", err, sizeof (err)));
	TT_OK(dsl_dataset_space(rd, "tank/d0/c", &c));
	TT_CHECK(c.ds_quota_bound && c.ds_available <= 5 * MiB);
	/* a new dataset is there at once; written data once synced */
	create_ok(dp, "tank/new");
	TT_OK(dsl_dataset_space(rd, "tank/new", &c));
	write_data(dp, "tank/d3", 4 * MiB);
	TT_OK(dsl_dataset_space(rd, "tank/d3", &c));
	TT_CHECK(c.ds_referenced >= 4 * MiB && c.ds_used == c.ds_referenced);
	/* the root's used is its own bytes plus each child's used or reservation */
	dsl_space_t root;
	uint64_t sum;
	for (int tries = 0; tries < 20; tries++) {
		TT_OK(dsl_dataset_space(rd, "tank", &root));
		sum = root.ds_referenced;
		for (int i = 0; i <= N; i++) {
			if (i < N)
				snprintf(name, sizeof (name), "tank/d%d", i);
			else
				snprintf(name, sizeof (name), "tank/new");
			TT_OK(dsl_dataset_space(rd, name, &c));
			sum += i == 7 ? MAX(c.ds_used, 20 * MiB) : c.ds_used;
		}
		dsl_space_t again;
		TT_OK(dsl_dataset_space(rd, "tank", &again));
		if (again.ds_used == root.ds_used)      /* no sync came between */
			break;
	}
	TT_EQ(root.ds_used, sum);
	TT_CHECK(root.ds_used > 24 * MiB);
	dsl_pool_close(rd);
	TT_OK(dsl_dataset_destroy(dp, "tank/d0", true, err, sizeof (err)));
	dsl_pool_close(dp);
	spa_close(spa);
}

/* Referenced bytes of tank/a after 16 MiB of random data (raidz1 of 4). */
static uint64_t
raidz_referenced(tt_pool_devs_t *d, uint64_t version, uint64_t *phys, uint64_t *drop)
{
	dmu_pool_opts_t dpo;
	memset(&dpo, 0, sizeof (dpo));
	char *argv[5] = { "raidz1" };
	for (int i = 0; i < 4; i++)
		argv[i + 1] = d->tpd_paths[i];
	spa_vdev_spec_t *spec;
	TT_OK(spa_vdev_spec_parse(5, argv, &spec, err, sizeof (err)));
	spa_create_opts_t o;
	memset(&o, 0, sizeof (o));
	o.sco_no_cache = true;
	o.sco_version = version;
	spa_t *spa = NULL;
	TT_OK(spa_create("tank", spec, &o, &spa, err, sizeof (err)));
	spa_vdev_spec_free(spec);
	dsl_pool_t *dp;
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	create_ok(dp, "tank/a");
	uint64_t before = steady_avail(dp, "tank");
	uint64_t obj = write_data(dp, "tank/a", 16 * MiB);
	*drop = before - MIN(before, steady_avail(dp, "tank"));
	objset_t *os;
	TT_OK(dsl_dataset_objset(dp, "tank/a", &os));
	dmu_object_info_t doi;
	TT_OK(dmu_object_info(os, obj, &doi));
	*phys = doi.doi_physical_bytes;
	dsl_space_t a;
	TT_OK(dsl_dataset_space(dp, "tank/a", &a));
	dsl_pool_close(dp);
	spa_close(spa);

	/* the same count after a reopen, and after an upgrade */
	spa = tt_pool_reopen(d, 0, NULL);
	bool deflate = (spa_features(spa) & SPA_FEATURE_SPACE_DEFLATE) != 0;
	TT_EQ(deflate, version == 0);
	if (version != 0)
		TT_OK(spa_upgrade(spa, SPA_VERSION, err, sizeof (err)));
	TT_EQ((spa_features(spa) & SPA_FEATURE_SPACE_DEFLATE) != 0, deflate);
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	dsl_space_t a2;
	TT_OK(dsl_dataset_space(dp, "tank/a", &a2));
	TT_EQ(a2.ds_referenced, a.ds_referenced);
	TT_OK(dsl_dataset_destroy(dp, "tank/a", true, err, sizeof (err)));
	dsl_pool_close(dp);
	TT_OK(spa_destroy(spa));
	return (a.ds_referenced);
}

/*
 * On RAID-Z, used/referenced/available count data bytes (parity and
 * padding deflated away, ZFS's dsize) on pools created with
 * space_deflate; a version-1 pool keeps counting allocated bytes, also
 * after an upgrade.
 */
static void
test_space_raidz(void)
{
	tt_pool_devs_t d;
	tt_pool_files(&d, 4, 128 * MiB);
	uint64_t phys, drop;
	uint64_t refd = raidz_referenced(&d, 0, &phys, &drop);
	fprintf(stderr, "  deflated: referenced %" PRIu64 " object %" PRIu64 " avail drop %"
	    PRIu64 "\n", refd, phys, drop);
	TT_CHECK(refd > 15 * MiB + 768 * KiB);
	TT_CHECK(refd < 16 * MiB + 512 * KiB);
	TT_CHECK(phys > 15 * MiB + 768 * KiB && phys <= 16 * MiB);
	TT_CHECK(drop > 15 * MiB && drop < 17 * MiB);
	uint64_t raw = raidz_referenced(&d, SPA_VERSION_1, &phys, &drop);
	fprintf(stderr, "  raw: referenced %" PRIu64 " object %" PRIu64 "\n", raw, phys);
	TT_CHECK(raw > 21 * MiB);       /* 16 MiB + a third for parity and padding */
	TT_CHECK(phys > 21 * MiB);
	tt_pool_files_remove(&d);
}

/*
 * refreservation: the part the dataset's own data does not fill yet is in
 * its used (usedbyrefreservation) and its parent's, is taken from every
 * other dataset's available space, its children's too, and is the
 * dataset's own to write into; writing fills it rather than growing used.
 * Too big for the pool or above the quota is refused, inheriting too.
 */
static void
test_refreservation(void)
{
	spa_t *spa = make_pool(256 * MiB);
	dsl_pool_t *dp;
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	create_ok(dp, "tank/rr");
	create_ok(dp, "tank/rr/c");
	create_ok(dp, "tank/other");
	uint64_t before = steady_avail(dp, "tank/other");
	TT_OK(dsl_prop_set(dp, "tank/rr", "refreservation", "40M", err, sizeof (err)));
	dsl_space_t rr, c, o, root;
	/* (several reads of the same pool state: retry if a sync came between) */
	for (int i = 0; i < 20; i++) {
		TT_OK(dsl_dataset_space(dp, "tank/rr", &rr));
		TT_OK(dsl_dataset_space(dp, "tank/rr/c", &c));
		TT_OK(dsl_dataset_space(dp, "tank/other", &o));
		if (rr.ds_available == o.ds_available + rr.ds_refreserved &&
		    c.ds_available == o.ds_available)
			break;
	}
	TT_EQ(rr.ds_refreserved, 40 * MiB - rr.ds_referenced);
	TT_EQ(rr.ds_used, rr.ds_referenced + rr.ds_refreserved + c.ds_used);
	TT_EQ(rr.ds_available, o.ds_available + rr.ds_refreserved);
	TT_EQ(c.ds_available, o.ds_available);      /* not the child's to use */
	TT_CHECK(o.ds_available + 38 * MiB < before && o.ds_available + 42 * MiB > before);
	dsl_prop_val_t v;
	TT_OK(dsl_prop_get(dp, "tank/rr", DSL_PROP_USEDREFRESERV, true, &v, err,
	    sizeof (err)));
	TT_EQ(v.dpv_num, rr.ds_refreserved);
	TT_OK(dsl_prop_get(dp, "tank/rr", DSL_PROP_USEDCHILD, true, &v, err, sizeof (err)));
	TT_EQ(v.dpv_num, c.ds_used);
	TT_OK(dsl_dataset_space(dp, "tank", &root));
	TT_CHECK(root.ds_used >= 40 * MiB);
	/* written data fills the refreservation: used stays, the room shrinks */
	uint64_t used0 = rr.ds_used;
	write_data(dp, "tank/rr", 8 * MiB);
	TT_OK(dsl_dataset_space(dp, "tank/rr", &rr));
	TT_CHECK(rr.ds_referenced >= 8 * MiB);
	TT_EQ(rr.ds_refreserved, 40 * MiB - rr.ds_referenced);
	TT_EQ(rr.ds_used, used0 + (rr.ds_referenced + rr.ds_refreserved) -
	    40 * MiB);
	/* refused: beyond the pool, above the quota, inherited */
	TT_ERRMSG(dsl_prop_set(dp, "tank/other", "refreservation", "1T", err, sizeof (err)),
	    "size is greater than available space");
	TT_OK(dsl_prop_set(dp, "tank/other", "quota", "10M", err, sizeof (err)));
	TT_ERRMSG(dsl_prop_set(dp, "tank/other", "refreservation", "11M", err, sizeof (err)),
	    "size is greater than the quota");
	TT_ERRMSG(dsl_prop_inherit(dp, "tank/rr", "refreservation", err, sizeof (err)),
	    "'refreservation' property cannot be inherited; use 'zfs set "
	    "refreservation=none' to clear");
	/* a refreservation cannot pay for its own growth */
	uint64_t room = steady_avail(dp, "tank/rr/c");
	char big[32];
	snprintf(big, sizeof (big), "%" PRIu64, rr.ds_referenced + rr.ds_refreserved + room +
	    rr.ds_refreserved / 2);
	TT_ERRMSG(dsl_prop_set(dp, "tank/rr", "refreservation", big, err, sizeof (err)),
	    "size is greater than available space");
	/* none: back to the data alone, everyone's space back */
	TT_OK(dsl_prop_set(dp, "tank/rr", "refreservation", "none", err, sizeof (err)));
	TT_OK(dsl_dataset_space(dp, "tank/rr", &rr));
	TT_EQ(rr.ds_refreserved, 0);
	TT_EQ(rr.ds_used, rr.ds_referenced + c.ds_used);
	dsl_pool_close(dp);
	spa_close(spa);
}

/* Write len bytes of word salad (compressible, better at higher levels) to a new object. */
static void
write_text(dsl_pool_t *dp, const char *name, uint64_t len)
{
	static const char *const words[] = { "pool", "vdev", "raidz", "mirror", "scrub",
		"resilver", "dataset", "snapshot", "txg", "dnode", "checksum", "block",
		"metaslab", "spacemap", "uberblock", "label", "intent", "log" };
	char *buf = tarn_alloc(len);
	tarn_rand_t r;
	tarn_rand_seed(&r, 42);
	for (uint64_t i = 0; i < len; ) {
		const char *w = words[tarn_rand_u64(&r) % ARRAY_SIZE(words)];
		for (size_t k = 0; w[k] != '\0' && i < len; k++)
			buf[i++] = w[k];
		if (i < len)
			buf[i++] = tarn_rand_u64(&r) % 7 == 0 ? '\n' : ' ';
	}
	(void) write_object(dp, name, buf, len);
	tarn_free(buf);
}

/*
 * compression=gzip-N and zstd-N write at their level: the same text takes
 * less room at gzip-9 than at gzip-1, at zstd-19 than at zstd-1 (the
 * stored bytes that refcompressratio divides by).
 */
static void
test_compress_levels(void)
{
	spa_t *spa = make_pool(256 * MiB);
	dsl_pool_t *dp;
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	const char *lv[] = { "gzip-1", "gzip-9", "zstd-1", "zstd-19" };
	uint64_t stored[4];
	for (int i = 0; i < 4; i++) {
		char name[32];
		snprintf(name, sizeof (name), "tank/%s", lv[i]);
		create_ok(dp, name);
		TT_OK(dsl_prop_set(dp, name, "compression", lv[i], err, sizeof (err)));
		write_text(dp, name, 4 * MiB);
	}
	TT_OK(txg_wait_synced(spa_dmu_pool(spa), 0));
	for (int i = 0; i < 4; i++) {
		char name[32];
		snprintf(name, sizeof (name), "tank/%s", lv[i]);
		dsl_space_t s;
		TT_OK(dsl_dataset_space(dp, name, &s));
		TT_CHECK(s.ds_lreferenced >= 4 * MiB);
		stored[i] = s.ds_preferenced;
		fprintf(stderr, "  %s: %" PRIu64 " bytes stored for %" PRIu64 "\n", lv[i],
		    stored[i], s.ds_lreferenced);
	}
	TT_CHECK(stored[1] < stored[0] * 95 / 100);
	TT_CHECK(stored[3] < stored[2] * 95 / 100);
	dsl_pool_close(dp);
	spa_close(spa);
}

static void
cleanup(void)
{
	unlink(paths[0]);
	tt_tmpdir_cleanup();
}

static void
collect_user(void *arg, const char *prop)
{
	char *out = arg;
	strcat(out, prop);
	strcat(out, ";");
}

/* User properties: set, inherited, listed, removed; bad names and values. */
static void
test_props_user(void)
{
	spa_t *spa = make_pool(256 * MiB);
	dsl_pool_t *dp;
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	create_ok(dp, "tank/a");
	create_ok(dp, "tank/a/b");
	dsl_prop_val_t *v = tarn_alloc(sizeof (*v));
	TT_OK(dsl_prop_user_get(dp, "tank/a/b", "org.x:note", v, err, sizeof (err)));
	TT_CHECK(strcmp(v->dpv_str, "-") == 0 && v->dpv_source == DSL_SRC_NONE);
	TT_OK(dsl_prop_set(dp, "tank/a", "org.x:note", "hello world", err, sizeof (err)));
	TT_OK(dsl_prop_set(dp, "tank/a/b", "org.x:b-only", "", err, sizeof (err)));
	TT_OK(dsl_prop_set(dp, "tank", "a:z", "top", err, sizeof (err)));
	TT_OK(dsl_prop_user_get(dp, "tank/a/b", "org.x:note", v, err, sizeof (err)));
	TT_CHECK(strcmp(v->dpv_str, "hello world") == 0 && v->dpv_source == DSL_SRC_INHERITED &&
	    strcmp(v->dpv_setpoint, "tank/a") == 0);
	TT_OK(dsl_prop_user_get(dp, "tank/a/b", "org.x:b-only", v, err, sizeof (err)));
	TT_CHECK(strcmp(v->dpv_str, "") == 0 && v->dpv_source == DSL_SRC_LOCAL);
	char names[256] = "";
	TT_OK(dsl_prop_user_iter(dp, "tank/a/b", collect_user, names));
	TT_CHECK(strcmp(names, "a:z;org.x:b-only;org.x:note;") == 0);
	names[0] = '\0';
	TT_OK(dsl_prop_user_iter(dp, "tank/a", collect_user, names));
	TT_CHECK(strcmp(names, "a:z;org.x:note;") == 0);
	/* a value of the largest size, and one byte more */
	char *big = tarn_alloc(DSL_USERPROP_MAX + 1);
	memset(big, 'v', DSL_USERPROP_MAX - 1);
	TT_OK(dsl_prop_set(dp, "tank/a", "org.x:big", big, err, sizeof (err)));
	TT_OK(dsl_prop_user_get(dp, "tank/a/b", "org.x:big", v, err, sizeof (err)));
	TT_CHECK(strcmp(v->dpv_str, big) == 0);
	big[DSL_USERPROP_MAX - 1] = 'v';
	TT_CHECK(dsl_prop_set(dp, "tank/a", "org.x:big", big, err, sizeof (err)) == EINVAL);
	tarn_free(big);
	/* inherit removes the local value; the next one up shows */
	TT_OK(dsl_prop_set(dp, "tank/a/b", "a:z", "low", err, sizeof (err)));
	TT_OK(dsl_prop_inherit(dp, "tank/a/b", "a:z", err, sizeof (err)));
	TT_OK(dsl_prop_user_get(dp, "tank/a/b", "a:z", v, err, sizeof (err)));
	TT_CHECK(strcmp(v->dpv_str, "top") == 0 && v->dpv_source == DSL_SRC_INHERITED);
	TT_OK(dsl_prop_inherit(dp, "tank/a/b", "a:never-set", err, sizeof (err)));
	/* bad names: no colon, capitals, a leading '-', other characters */
	TT_ERRMSG(dsl_prop_set(dp, "tank/a", "nocolon", "1", err, sizeof (err)),
	    "invalid property 'nocolon'");
	TT_ERRMSG(dsl_prop_set(dp, "tank/a", "Org:x", "1", err, sizeof (err)),
	    "invalid property 'Org:x'");
	TT_ERRMSG(dsl_prop_set(dp, "tank/a", "-a:x", "1", err, sizeof (err)),
	    "invalid property '-a:x'");
	TT_ERRMSG(dsl_prop_set(dp, "tank/a", "a:x y", "1", err, sizeof (err)),
	    "invalid property 'a:x y'");
	TT_CHECK(dsl_prop_user_get(dp, "tank/a", "a b:c", v, err, sizeof (err)) == EINVAL);
	/* create -o; kept across a close and open */
	dsl_prop_setting_t o[2] = { { "atime", "off" }, { "org.x:made", "at create" } };
	TT_OK(dsl_dataset_create(dp, "tank/c", false, o, 2, err, sizeof (err)));
	dsl_prop_setting_t bad[1] = { { "org.X:made", "1" } };
	TT_CHECK(dsl_dataset_create(dp, "tank/d", false, bad, 1, err, sizeof (err)) == EINVAL);
	TT_CHECK(!dsl_dataset_exists(dp, "tank/d"));
	dsl_pool_close(dp);
	TT_OK(dsl_pool_open(spa, NULL, NULL, &dp));
	TT_OK(dsl_prop_user_get(dp, "tank/c", "org.x:made", v, err, sizeof (err)));
	TT_CHECK(strcmp(v->dpv_str, "at create") == 0 && v->dpv_source == DSL_SRC_LOCAL);
	TT_OK(dsl_prop_user_get(dp, "tank/a/b", "org.x:note", v, err, sizeof (err)));
	TT_CHECK(strcmp(v->dpv_str, "hello world") == 0);
	tarn_free(v);
	dsl_pool_close(dp);
	spa_close(spa);
}

TT_MAIN(
	{ "names", test_names },
	{ "sizes", test_sizes },
	{ "tree", test_tree },
	{ "props_inherit", test_props_inherit },
	{ "props_invalid", test_props_invalid },
	{ "props_user", test_props_user },
	{ "space", test_space },
	{ "quota", test_quota },
	{ "space_raidz", test_space_raidz },
	{ "space_many", test_space_many },
	{ "refreservation", test_refreservation },
	{ "compress_levels", test_compress_levels },
	{ "cleanup", cleanup },
)
