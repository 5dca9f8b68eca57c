/*
 * Unit tests of lib/spa/spa_config.c: the vdev specification parser,
 * pool-name rules and the cache file (round trip through a real pool,
 * damage tolerance, atomic replacement).
 */
#include "tt.h"
#include "spa.h"

#include <sys/stat.h>
#include <unistd.h>

static char errbuf[512];

static int
parse(const char *words, spa_vdev_spec_t **spec)
{
	char *copy = tarn_strdup(words), *argv[64], *save = NULL;
	int argc = 0;

	for (char *w = strtok_r(copy, " ", &save); w != NULL && argc < 64;
	    w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	int error = spa_vdev_spec_parse(argc, argv, spec, errbuf, sizeof (errbuf));
	tarn_free(copy);
	return (error);
}

static void
test_spec_groups(void)
{
	spa_vdev_spec_t *s;

	TT_OK(parse("mirror /a /b raidz2 /c /d /e /f /g", &s));
	TT_EQ(s->type, VDEV_TYPE_ROOT);
	TT_EQ(s->nchildren, 2);
	TT_EQ(s->children[0]->type, VDEV_TYPE_MIRROR);
	TT_EQ(s->children[0]->nchildren, 2);
	TT_EQ(s->children[1]->type, VDEV_TYPE_RAIDZ);
	TT_EQ(s->children[1]->nparity, 2);
	TT_EQ(s->children[1]->nchildren, 5);
	TT_CHECK(strcmp(s->children[1]->children[4]->path, "/g") == 0);
	spa_vdev_spec_free(s);

	TT_OK(parse("raidz /a /b raidz1 /c /d raidz3 /e /f /g /h /i", &s));
	TT_EQ(s->nchildren, 3);
	TT_EQ(s->children[0]->nparity, 1);
	TT_EQ(s->children[1]->nparity, 1);
	TT_EQ(s->children[2]->nparity, 3);
	spa_vdev_spec_free(s);

	/* plain devices are top-level leaves; bare words name /dev/WORD */
	TT_OK(parse("sdx /a", &s));
	TT_EQ(s->nchildren, 2);
	TT_CHECK(strcmp(s->children[0]->path, "/dev/sdx") == 0);
	TT_CHECK(s->children[0]->nchildren == 0);
	spa_vdev_spec_free(s);
}

static void
test_spec_relative_paths(void)
{
	spa_vdev_spec_t *s;
	char cwd[4096], want[4200];

	TT_ASSERT(getcwd(cwd, sizeof (cwd)) != NULL);
	TT_OK(parse("./no-such-file-here", &s));
	(void) snprintf(want, sizeof (want), "%s/no-such-file-here", cwd);
	TT_CHECK(strcmp(s->children[0]->path, want) == 0);
	TT_CHECK(s->children[0]->path[0] == '/');
	spa_vdev_spec_free(s);
}

/* Class words mark the vdevs after them, up to the next class word. */
static void
test_spec_classes(void)
{
	spa_vdev_spec_t *s;

	TT_OK(parse("mirror /a /b special mirror /c /d log /e mirror /f /g cache /h /i", &s));
	TT_ASSERT(s->nchildren == 6);
	TT_CHECK(s->children[0]->bias == VDEV_BIAS_NORMAL && !s->children[0]->cache);
	TT_CHECK(s->children[1]->bias == VDEV_BIAS_SPECIAL &&
	    s->children[1]->type == VDEV_TYPE_MIRROR);
	TT_CHECK(s->children[2]->bias == VDEV_BIAS_LOG &&
	    strcmp(s->children[2]->path, "/e") == 0);
	TT_CHECK(s->children[3]->bias == VDEV_BIAS_LOG &&
	    s->children[3]->type == VDEV_TYPE_MIRROR);
	TT_CHECK(s->children[4]->cache && s->children[5]->cache &&
	    s->children[4]->bias == VDEV_BIAS_NORMAL);
	spa_vdev_spec_free(s);
	TT_OK(parse("cache /x", &s));        /* add POOL cache DEV */
	TT_CHECK(s->nchildren == 1 && s->children[0]->cache);
	spa_vdev_spec_free(s);
}

static void
test_spec_errors(void)
{
	spa_vdev_spec_t *s = (void *)1;

	TT_CHECK(parse("raidz2 /a /b", &s) == EINVAL);
	TT_CHECK(s == NULL);
	TT_CHECK(strstr(errbuf, "raidz2 requires at least 3 devices") != NULL);
	TT_CHECK(parse("mirror /a", &s) == EINVAL);
	TT_CHECK(strstr(errbuf, "mirror requires at least 2 devices") != NULL);
	TT_CHECK(parse("mirror raidz /a /b", &s) == EINVAL);
	TT_CHECK(strstr(errbuf, "mirror requires") != NULL);
	TT_CHECK(parse("raidz3 /a /b /c", &s) == EINVAL);
	TT_CHECK(strstr(errbuf, "raidz3 requires at least 4 devices") != NULL);
	TT_CHECK(parse("/x mirror /y /x", &s) == EINVAL);
	TT_CHECK(strstr(errbuf, "'/x' is specified multiple times") != NULL);
	TT_CHECK(parse("/a spare /b", &s) == ENOTSUP);
	TT_CHECK(strstr(errbuf, "not supported yet") != NULL);
	/* the class words: what they may hold */
	TT_CHECK(parse("/a log raidz /b /c", &s) == EINVAL);
	TT_CHECK(strstr(errbuf, "log devices must be single devices or mirrors") != NULL);
	TT_CHECK(parse("/a cache mirror /b /c", &s) == EINVAL);
	TT_CHECK(strstr(errbuf, "cache devices must be single devices") != NULL);
	TT_CHECK(parse("/a log", &s) == EINVAL);
	TT_CHECK(strstr(errbuf, "missing devices after 'log'") != NULL);
	TT_CHECK(parse("/a special cache /b", &s) == EINVAL);
	TT_CHECK(strstr(errbuf, "missing devices after 'special'") != NULL);
	TT_CHECK(parse("/a log /b cache /a", &s) == EINVAL);
	TT_CHECK(strstr(errbuf, "specified multiple times") != NULL);
	TT_CHECK(parse("draid /a /b", &s) == ENOTSUP);
	TT_CHECK(parse("raidz4 /a /b /c /d /e", &s) == EINVAL);
	TT_CHECK(parse("raidz0 /a /b", &s) == EINVAL);
	TT_CHECK(parse("", &s) == EINVAL);
	TT_CHECK(strstr(errbuf, "missing vdev specification") != NULL);
	/* the same file under two spellings */
	const char *d = tt_tmpdir();
	char p1[512], p2[1400];
	(void) snprintf(p1, sizeof (p1), "%s/f", d);
	FILE *f = fopen(p1, "w");
	TT_ASSERT(f != NULL);
	fclose(f);
	(void) snprintf(p2, sizeof (p2), "mirror %s %s/../%s/f", p1, d,
	    strrchr(d, '/') + 1);
	TT_CHECK(parse(p2, &s) == EINVAL);
	TT_CHECK(strstr(errbuf, "specified multiple times") != NULL);
	unlink(p1);
}

static void
test_names(void)
{
	const char *good[] = { "tank", "T", "a-b_c.d:e", "x1", "logs", "c0t0d0",
		"Mirror" };
	const char *bad[] = { "", "1tank", "_x", "mirror", "mirrorless", "raidz",
		"raidz2x", "draid1", "spare", "spares", "log", "cache", "ta nk", "ta/nk",
		"t@s", "t%", "\xc3\xa9" };
	char longname[SPA_NAME_MAX + 2];

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		int e = spa_name_validate(good[i], errbuf, sizeof (errbuf));
		if (e != 0)
			fprintf(stderr, "  '%s' refused: %s\n", good[i], errbuf);
		TT_CHECK(e == 0);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		errbuf[0] = '\0';
		TT_CHECK(spa_name_validate(bad[i], errbuf, sizeof (errbuf)) != 0);
		TT_CHECK(errbuf[0] != '\0' && strchr(errbuf, '\n') == NULL);
	}
	memset(longname, 'a', sizeof (longname) - 1);
	longname[sizeof (longname) - 1] = '\0';
	TT_CHECK(spa_name_validate(longname, errbuf, sizeof (errbuf)) != 0);
	longname[SPA_NAME_MAX] = '\0';
	TT_OK(spa_name_validate(longname, errbuf, sizeof (errbuf)));
	TT_CHECK(spa_name_validate("1x", errbuf, sizeof (errbuf)) == EINVAL);
	TT_CHECK(strstr(errbuf, "must begin with a letter") != NULL);
}

static void
set_cachefile(char *buf, size_t len, const char *name)
{
	(void) snprintf(buf, len, "%s/%s", tt_tmpdir(), name);
	setenv("TARN_CACHEFILE", buf, 1);
}

static void
write_text(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");
	TT_ASSERT(f != NULL);
	TT_ASSERT(fwrite(text, 1, len, f) == len);
	fclose(f);
}

static void
test_cache_tolerates_damage(void)
{
	char path[512];
	spa_cache_entry_t *ents;
	int n;
	static const char text[] =
	    "# comment\n"
	    "garbage line\n"
	    "pool 123 good\n"
	    "path /dev/a\n"
	    "path relative\n"
	    "path /with\\nnewline\\\\slash\n"
	    "path /bad\\escape\n"
	    "end\n"
	    "path /orphan\n"
	    "pool 0 zeroguid\n"
	    "path /x\n"
	    "end\n"
	    "pool 77 1badname\n"
	    "end\n"
	    "pool 123 dupguid\n"
	    "end\n"
	    "pool 456 nul\0inside\n"
	    "pool 789 last\n"
	    "path /tail";

	set_cachefile(path, sizeof (path), "damaged.cache");
	write_text(path, text, sizeof (text) - 1);
	TT_OK(spa_cache_read(&ents, &n));
	TT_EQ(n, 2);
	TT_CHECK(strcmp(ents[0].sce_name, "good") == 0);
	TT_EQ(ents[0].sce_guid, 123);
	TT_EQ(ents[0].sce_npaths, 2);
	TT_CHECK(strcmp(ents[0].sce_paths[0], "/dev/a") == 0);
	TT_CHECK(strcmp(ents[0].sce_paths[1], "/with\nnewline\\slash") == 0);
	TT_CHECK(strcmp(ents[1].sce_name, "last") == 0);
	TT_EQ(ents[1].sce_npaths, 1);
	spa_cache_free(ents, n);

	/* random bytes: no crash, nothing trusted */
	tarn_rand_t r;
	tarn_rand_seed(&r, 42);
	for (int round = 0; round < 200; round++) {
		char junk[2048];
		size_t len = (size_t)tarn_rand_range(&r, sizeof (junk));
		for (size_t i = 0; i < len; i++) {
			uint64_t v = tarn_rand_u64(&r);
			/* bias towards the file's own words */
			junk[i] = (v & 7) == 0 ? '\n' : (v & 7) == 1 ? ' ' :
			    "pool 12end/path\\n"[(v >> 3) % 17];
		}
		write_text(path, junk, len);
		TT_OK(spa_cache_read(&ents, &n));
		for (int i = 0; i < n; i++) {
			TT_CHECK(ents[i].sce_guid != 0);
			for (int p = 0; p < ents[i].sce_npaths; p++)
				TT_CHECK(ents[i].sce_paths[p][0] == '/');
		}
		spa_cache_free(ents, n);
	}
	unlink(path);

	/* missing file: empty; "none": disabled */
	TT_OK(spa_cache_read(&ents, &n));
	TT_EQ(n, 0);
	setenv("TARN_CACHEFILE", "none", 1);
	TT_CHECK(strcmp(spa_cachefile_path(), "none") == 0);
	TT_OK(spa_cache_remove("anything"));
	TT_OK(spa_cache_read(&ents, &n));
	TT_EQ(n, 0);
	unsetenv("TARN_CACHEFILE");
	TT_CHECK(strcmp(spa_cachefile_path(), "/etc/tarn/tarn.cache") == 0);
}

static void
test_cache_remove_rewrites(void)
{
	char path[600], dir[512];
	spa_cache_entry_t *ents;
	int n;
	static const char text[] = "pool 1 one\npath /a\nend\npool 2 two\npath /b\nend\n"
	    "junk\n";

	(void) snprintf(dir, sizeof (dir), "%s/new/dirs", tt_tmpdir());
	(void) snprintf(path, sizeof (path), "%s/c", dir);
	setenv("TARN_CACHEFILE", path, 1);
	/* remove on a missing file in a missing directory creates both */
	TT_OK(spa_cache_remove("one"));
	struct stat st;
	TT_OK(stat(path, &st));
	write_text(path, text, sizeof (text) - 1);
	TT_OK(spa_cache_remove("one"));
	TT_OK(spa_cache_read(&ents, &n));
	TT_EQ(n, 1);
	TT_CHECK(strcmp(ents[0].sce_name, "two") == 0);
	TT_CHECK(strcmp(ents[0].sce_paths[0], "/b") == 0);
	spa_cache_free(ents, n);
	/* the junk line is gone after a rewrite, and no temp file is left */
	FILE *f = fopen(path, "r");
	char line[256];
	bool junk = false;
	TT_ASSERT(f != NULL);
	while (fgets(line, sizeof (line), f) != NULL)
		junk |= strncmp(line, "junk", 4) == 0;
	fclose(f);
	TT_CHECK(!junk);
	char cmd[700];
	(void) snprintf(cmd, sizeof (cmd), "ls '%s' | grep -q tmp", dir);
	TT_CHECK(system(cmd) != 0);
	unsetenv("TARN_CACHEFILE");
}

/* spa_cache_add through a real pool on sparse files. */
static void
test_cache_add_real_pool(void)
{
	char path[512], dev[3][512];
	spa_vdev_spec_t *spec;
	spa_create_opts_t opts = { .sco_no_cache = true };
	spa_cache_entry_t *ents;
	spa_t *spa;
	int n;

	set_cachefile(path, sizeof (path), "real.cache");
	for (int i = 0; i < 3; i++) {
		(void) snprintf(dev[i], sizeof (dev[i]), "%s/dev%d", tt_tmpdir(), i);
		FILE *f = fopen(dev[i], "w");
		TT_ASSERT(f != NULL);
		TT_ASSERT(ftruncate(fileno(f), 128 * MiB) == 0);
		fclose(f);
	}
	char words[2000];
	(void) snprintf(words, sizeof (words), "raidz1 %s %s %s", dev[0], dev[1], dev[2]);
	TT_OK(parse(words, &spec));
	int e = spa_create("cachetest", spec, &opts, &spa, errbuf, sizeof (errbuf));
	spa_vdev_spec_free(spec);
	if (e != 0)
		fprintf(stderr, "  spa_create: %s\n", errbuf);
	TT_ASSERT(e == 0);
	TT_OK(spa_cache_add(spa));
	TT_OK(spa_cache_add(spa));       /* replaces, does not duplicate */
	TT_OK(spa_cache_read(&ents, &n));
	TT_EQ(n, 1);
	TT_CHECK(strcmp(ents[0].sce_name, "cachetest") == 0);
	TT_EQ(ents[0].sce_guid, spa_guid(spa));
	TT_EQ(ents[0].sce_npaths, 3);
	for (int i = 0; i < 3 && i < ents[0].sce_npaths; i++)
		TT_CHECK(strcmp(ents[0].sce_paths[i], dev[i]) == 0);
	spa_cache_free(ents, n);
	TT_OK(spa_destroy(spa));
	TT_OK(spa_cache_remove("cachetest"));
	TT_OK(spa_cache_read(&ents, &n));
	TT_EQ(n, 0);
	for (int i = 0; i < 3; i++)
		unlink(dev[i]);
	unsetenv("TARN_CACHEFILE");
}

/*
 * Import lists a pool in the cache file before it marks the labels
 * active.  A crash between the two leaves an exported pool listed: the
 * next start (spa_open by name) must open it, and a normal import lists
 * the pool with every leaf.
 */
static void
test_cache_import_crash_window(void)
{
	char path[512], dev[2][512], words[1100];
	spa_vdev_spec_t *spec;
	spa_create_opts_t opts = { .sco_no_cache = true };
	spa_cache_entry_t *ents;
	spa_t *spa;
	int n;

	set_cachefile(path, sizeof (path), "window.cache");
	for (int i = 0; i < 2; i++) {
		(void) snprintf(dev[i], sizeof (dev[i]), "%s/wdev%d", tt_tmpdir(), i);
		FILE *f = fopen(dev[i], "w");
		TT_ASSERT(f != NULL);
		TT_ASSERT(ftruncate(fileno(f), 128 * MiB) == 0);
		fclose(f);
	}
	(void) snprintf(words, sizeof (words), "mirror %s %s", dev[0], dev[1]);
	TT_OK(parse(words, &spec));
	TT_OK(spa_create("window", spec, &opts, &spa, errbuf, sizeof (errbuf)));
	spa_vdev_spec_free(spec);
	uint64_t guid = spa_guid(spa);
	TT_OK(spa_export(spa));

	/* the state a kill between listing and opening leaves behind */
	const char *dirs[1] = { tt_tmpdir() };
	spa_import_cand_t *cands;
	int nc, match = -1;
	TT_OK(spa_import_scan(dirs, 1, &cands, &nc));
	for (int i = 0; i < nc; i++)
		if (cands[i].sic_guid == guid)
			match = i;
	TT_ASSERT(match >= 0);
	TT_EQ(cands[match].sic_state, POOL_STATE_EXPORTED);
	TT_OK(spa_cache_add_found("window", guid, cands[match].sic_tree));
	spa_import_cands_free(cands, nc);
	int e = spa_open("window", 0, &spa, errbuf, sizeof (errbuf));
	if (e != 0)
		fprintf(stderr, "  spa_open: %s\n", errbuf);
	TT_ASSERT(e == 0);
	TT_EQ(spa_guid(spa), guid);
	TT_OK(spa_export(spa));
	TT_OK(spa_cache_read(&ents, &n));
	TT_EQ(n, 0);                     /* export unlisted it */
	spa_cache_free(ents, n);

	/* a normal import lists it with both leaves */
	spa_import_opts_t io;
	memset(&io, 0, sizeof (io));
	TT_OK(spa_import("window", dirs, 1, &io, &spa, errbuf, sizeof (errbuf)));
	TT_OK(spa_cache_read(&ents, &n));
	TT_EQ(n, 1);
	if (n == 1) {
		TT_EQ(ents[0].sce_guid, guid);
		TT_EQ(ents[0].sce_npaths, 2);
	}
	spa_cache_free(ents, n);
	TT_OK(spa_destroy(spa));
	for (int i = 0; i < 2; i++)
		unlink(dev[i]);
	unsetenv("TARN_CACHEFILE");
}

static void
test_cleanup(void)
{
	tt_tmpdir_cleanup();
}

TT_MAIN(
	{ "spec_groups", test_spec_groups },
	{ "spec_relative_paths", test_spec_relative_paths },
	{ "spec_classes", test_spec_classes },
	{ "spec_errors", test_spec_errors },
	{ "names", test_names },
	{ "cache_tolerates_damage", test_cache_tolerates_damage },
	{ "cache_remove_rewrites", test_cache_remove_rewrites },
	{ "cache_add_real_pool", test_cache_add_real_pool },
	{ "cache_import_crash_window", test_cache_import_crash_window },
	{ "cleanup", test_cleanup },
)
