/*
 * spa_config.c — the pool configuration as the administrator gives it and
 * as this host remembers it: parsing a `zpool create` vdev specification,
 * checking pool names, and the cache file of imported pools.
 *
 * Theory of the cache file.  The labels on the devices are the truth about
 * a pool (DESIGN.md, invariant 3); the cache file only remembers which
 * pools this host has imported and where their leaves were last seen, so
 * that `tarn pool status tank` can open tank without scanning every device.
 * It is therefore a hint: losing it loses nothing that `import -d` cannot
 * find again, and a damaged line is skipped with a warning, never trusted
 * and never fatal.  It is a small text file (docs/FORMAT.md, "Cache file"):
 *
 *	# comment
 *	pool GUID NAME
 *	path /absolute/path/of/a/leaf      (backslash escapes '\' and newline)
 *	end
 *
 * Writers take an exclusive flock(2) on the file's directory, read the
 * current entries, change them and write a new file next to the old one
 * (temp name, fsync, rename, fsync of the directory), so a reader sees
 * either the old file or the new one, whole.
 */
#include "spa.h"
#include "tarn_array.h"

#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define SPA_CACHEFILE_DEFAULT  "/etc/tarn/tarn.cache"
#define SPA_CACHEFILE_MAXSIZE  (16 * MiB)   /* larger files are damaged */
#define SPA_CACHE_MAXPATHS     4096          /* per pool */

/* ------------------------------------------------------------------ */
/* vdev specifications                                                 */
/* ------------------------------------------------------------------ */

static void
spa_errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
spa_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	(void) vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Kinds of words in a vdev specification. */
typedef enum spec_word {
	SPEC_DEVICE,
	SPEC_MIRROR,
	SPEC_RAIDZ,
	SPEC_UNSUPPORTED,  /* a ZFS keyword Tarn does not do yet */
	SPEC_BAD_RAIDZ,    /* raidz0, raidz4, raidz01 ... */
	SPEC_LOG,          /* the allocation class keywords */
	SPEC_SPECIAL,
	SPEC_CACHE,
} spec_word_t;

static spec_word_t
spec_classify(const char *w, int *nparity)
{
	static const char *const unsupported[] = {
		"spare", "dedup", "replacing",
	};

	if (strcmp(w, "log") == 0)
		return (SPEC_LOG);
	if (strcmp(w, "special") == 0)
		return (SPEC_SPECIAL);
	if (strcmp(w, "cache") == 0)
		return (SPEC_CACHE);

	if (strcmp(w, "mirror") == 0)
		return (SPEC_MIRROR);
	if (strncmp(w, "raidz", 5) == 0) {
		const char *p = w + 5;
		if (*p == '\0') {
			*nparity = 1;
			return (SPEC_RAIDZ);
		}
		if (p[0] >= '1' && p[0] <= '3' && p[1] == '\0') {
			*nparity = p[0] - '0';
			return (SPEC_RAIDZ);
		}
		/* "raidz" followed by digits only is a keyword, just a bad one */
		for (; *p != '\0'; p++)
			if (!isdigit((unsigned char)*p))
				return (SPEC_DEVICE);
		return (SPEC_BAD_RAIDZ);
	}
	if (strncmp(w, "draid", 5) == 0)
		return (SPEC_UNSUPPORTED);
	for (size_t i = 0; i < ARRAY_SIZE(unsupported); i++)
		if (strcmp(w, unsupported[i]) == 0)
			return (SPEC_UNSUPPORTED);
	return (SPEC_DEVICE);
}

/*
 * Make `word` an absolute path: words without '/' name /dev/WORD; relative
 * paths are resolved against the current directory (through realpath when
 * the file exists, so "../x" and "./x" come out clean).
 */
static int
spec_abspath(const char *word, char **pathp, char *err, size_t errlen)
{
	char buf[PATH_MAX];
	char cwd[PATH_MAX];
	int n;

	if (word[0] == '\0') {
		spa_errf(err, errlen, "empty device name");
		return (SET_ERROR(EINVAL));
	}
	if (word[0] == '/') {
		n = snprintf(buf, sizeof (buf), "%s", word);
	} else if (strchr(word, '/') == NULL) {
		n = snprintf(buf, sizeof (buf), "/dev/%s", word);
	} else if (realpath(word, buf) != NULL) {
		n = (int)strlen(buf);
	} else if (getcwd(cwd, sizeof (cwd)) != NULL) {
		const char *w = word;
		while (strncmp(w, "./", 2) == 0)
			w += 2;
		n = snprintf(buf, sizeof (buf), "%s/%s",
		    strcmp(cwd, "/") == 0 ? "" : cwd, w);
	} else {
		spa_errf(err, errlen, "cannot resolve path '%s': %s", word,
		    strerror(errno));
		return (SET_ERROR(errno ? errno : ENOENT));
	}
	if (n < 0 || n > VDEV_PATH_MAX) {
		spa_errf(err, errlen, "device path '%.64s...' is too long "
		    "(at most %d bytes)", word, VDEV_PATH_MAX);
		return (SET_ERROR(ENAMETOOLONG));
	}
	*pathp = tarn_strdup(buf);
	return (0);
}

static spa_vdev_spec_t *
spec_alloc(vdev_type_t type)
{
	spa_vdev_spec_t *s = tarn_alloc(sizeof (*s));
	s->type = type;
	return (s);
}

/*
 * A node's children grow in kids, a tarn_array the parser holds while it
 * adds to that node; children/nchildren always show kids' elements (the
 * node owns that memory, so kids is never freed: spa_vdev_spec_free frees it).
 */
static void
spec_add_child(spa_vdev_spec_t *parent, tarn_array_t *kids, spa_vdev_spec_t *child)
{
	TARN_ARRAY_APPEND(kids, spa_vdev_spec_t *, child);
	parent->children = tarn_array_base(kids);
	parent->nchildren = (int)tarn_array_len(kids);
}

/* Two leaves are the same device when their files are the same inode. */
static bool
spec_same_device(const char *a, const char *b)
{
	struct stat sa, sb;

	if (strcmp(a, b) == 0)
		return (true);
	if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
		return (false);
	if (S_ISBLK(sa.st_mode) && S_ISBLK(sb.st_mode))
		return (sa.st_rdev == sb.st_rdev);
	return (sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
}

/* Is `path` already a leaf somewhere in the tree under `s`? */
static const char *
spec_find_dup(const spa_vdev_spec_t *s, const char *path)
{
	if (s->path != NULL)
		return (spec_same_device(s->path, path) ? s->path : NULL);
	for (int c = 0; c < s->nchildren; c++) {
		const char *d = spec_find_dup(s->children[c], path);
		if (d != NULL)
			return (d);
	}
	return (NULL);
}

static int
spec_make_leaf(const spa_vdev_spec_t *root, const char *word,
    spa_vdev_spec_t **leafp, char *err, size_t errlen)
{
	struct stat st;
	char *path;
	int error;

	if ((error = spec_abspath(word, &path, err, errlen)) != 0)
		return (error);
	if (spec_find_dup(root, path) != NULL) {
		spa_errf(err, errlen, "'%s' is specified multiple times; "
		    "give each device once", path);
		tarn_free(path);
		return (SET_ERROR(EINVAL));
	}
	/* Missing files are reported by spa_create, which checks sizes too. */
	spa_vdev_spec_t *leaf = spec_alloc(
	    stat(path, &st) == 0 && S_ISBLK(st.st_mode) ?
	    VDEV_TYPE_DISK : VDEV_TYPE_FILE);
	leaf->path = path;
	*leafp = leaf;
	return (0);
}

/*
 * Parse one group starting at argv[0] (a mirror/raidz keyword): its
 * devices run to the next keyword.  Returns the words consumed.
 */
static int
spec_parse_group(spa_vdev_spec_t *root, tarn_array_t *tops, int argc, char *const argv[],
    spec_word_t kind, int nparity, char *err, size_t errlen, int *errorp)
{
	spa_vdev_spec_t *g = spec_alloc(kind == SPEC_MIRROR ?
	    VDEV_TYPE_MIRROR : VDEV_TYPE_RAIDZ);
	tarn_array_t kids = TARN_ARRAY_INIT(spa_vdev_spec_t *);
	int mindev = kind == SPEC_MIRROR ? 2 : nparity + 1;
	int np, c;

	g->nparity = kind == SPEC_MIRROR ? 0 : nparity;
	spec_add_child(root, tops, g);   /* so duplicates inside the group are found */
	for (c = 1; c < argc && argv[c] != NULL &&
	    spec_classify(argv[c], &np) == SPEC_DEVICE; c++) {
		spa_vdev_spec_t *leaf;
		if (g->nchildren >= VDEV_MAX_CHILDREN) {
			spa_errf(err, errlen, "%s supports no more than %d devices",
			    argv[0], VDEV_MAX_CHILDREN);
			*errorp = SET_ERROR(EINVAL);
			return (c);
		}
		*errorp = spec_make_leaf(root, argv[c], &leaf, err, errlen);
		if (*errorp != 0)
			return (c);
		spec_add_child(g, &kids, leaf);
	}
	if (g->nchildren < mindev) {
		spa_errf(err, errlen, "%s requires at least %d devices%s",
		    argv[0], mindev, g->nchildren == 0 ? "" :
		    kind == SPEC_MIRROR ? "; add a device or drop the word 'mirror'" :
		    "; add devices or use fewer parity");
		*errorp = SET_ERROR(EINVAL);
	}
	return (c);
}

/*
 * A class keyword at argv[i]: the vdevs up to the next one are of that
 * class (*cls: SPEC_LOG, SPEC_SPECIAL, SPEC_CACHE).  Checks that
 * something follows it and that the class takes that kind of vdev.
 */
static int
spec_class_word(int argc, char *const argv[], int i, spec_word_t kind, spec_word_t *cls,
    char *err, size_t errlen)
{
	int np;
	spec_word_t next = i + 1 < argc && argv[i + 1] != NULL ?
	    spec_classify(argv[i + 1], &np) : SPEC_LOG;
	if (i + 1 >= argc || argv[i + 1] == NULL || next == SPEC_LOG ||
	    next == SPEC_SPECIAL || next == SPEC_CACHE) {
		spa_errf(err, errlen, "missing devices after '%s'", argv[i]);
		return (SET_ERROR(EINVAL));
	}
	*cls = kind;
	return (0);
}

/* May a vdev of this kind (mirror, raidz, device) go into class cls? */
static int
spec_class_allows(spec_word_t cls, spec_word_t kind, const char *w, char *err, size_t errlen)
{
	if (cls == SPEC_CACHE && kind != SPEC_DEVICE) {
		spa_errf(err, errlen, "cache devices must be single devices, not '%s'", w);
		return (SET_ERROR(EINVAL));
	}
	if (cls == SPEC_LOG && kind == SPEC_RAIDZ) {
		spa_errf(err, errlen, "log devices must be single devices or mirrors, "
		    "not '%s'", w);
		return (SET_ERROR(EINVAL));
	}
	return (0);
}

/* Mark the top-level vdev just parsed with its class. */
static void
spec_set_class(spa_vdev_spec_t *root, spec_word_t cls)
{
	spa_vdev_spec_t *top = root->children[root->nchildren - 1];
	top->cache = cls == SPEC_CACHE;
	top->bias = cls == SPEC_LOG ? VDEV_BIAS_LOG :
	    cls == SPEC_SPECIAL ? VDEV_BIAS_SPECIAL : VDEV_BIAS_NORMAL;
}

int
spa_vdev_spec_parse(int argc, char *const argv[], spa_vdev_spec_t **specp,
    char *err, size_t errlen)
{
	spa_vdev_spec_t *root = spec_alloc(VDEV_TYPE_ROOT);
	tarn_array_t tops = TARN_ARRAY_INIT(spa_vdev_spec_t *);
	int error = 0, i = 0, nparity = 0;
	spec_word_t cls = SPEC_DEVICE;     /* the class of what follows: normal */

	*specp = NULL;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	while (i < argc && error == 0) {
		const char *w = argv[i];
		spec_word_t kind = w == NULL ? SPEC_DEVICE : spec_classify(w, &nparity);

		if (w == NULL)
			break;
		if (root->nchildren >= VDEV_MAX_CHILDREN) {
			spa_errf(err, errlen, "too many top-level vdevs (at most %d)",
			    VDEV_MAX_CHILDREN);
			error = SET_ERROR(EINVAL);
		} else if (kind == SPEC_UNSUPPORTED) {
			spa_errf(err, errlen, "'%s' vdevs are not supported yet; "
			    "use mirror or raidz groups", w);
			error = SET_ERROR(ENOTSUP);
		} else if (kind == SPEC_BAD_RAIDZ) {
			spa_errf(err, errlen, "invalid vdev type '%s'; "
			    "use raidz1, raidz2 or raidz3", w);
			error = SET_ERROR(EINVAL);
		} else if (kind == SPEC_LOG || kind == SPEC_SPECIAL || kind == SPEC_CACHE) {
			error = spec_class_word(argc, argv, i, kind, &cls, err, errlen);
			i++;
		} else if ((error = spec_class_allows(cls, kind, w, err, errlen)) != 0) {
			break;
		} else if (kind == SPEC_DEVICE) {
			spa_vdev_spec_t *leaf;
			error = spec_make_leaf(root, w, &leaf, err, errlen);
			if (error == 0) {
				spec_add_child(root, &tops, leaf);
				spec_set_class(root, cls);
			}
			i++;
		} else {
			i += spec_parse_group(root, &tops, argc - i, argv + i, kind,
			    nparity, err, errlen, &error);
			spec_set_class(root, cls);
		}
	}
	if (error == 0 && root->nchildren == 0) {
		spa_errf(err, errlen, "missing vdev specification; "
		    "name at least one device");
		error = SET_ERROR(EINVAL);
	}
	if (error != 0) {
		spa_vdev_spec_free(root);
		return (error);
	}
	*specp = root;
	return (0);
}

void
spa_vdev_spec_free(spa_vdev_spec_t *spec)
{
	if (spec == NULL)
		return;
	for (int c = 0; c < spec->nchildren; c++)
		spa_vdev_spec_free(spec->children[c]);
	tarn_free(spec->children);
	tarn_free(spec->path);
	tarn_free(spec);
}

/* ------------------------------------------------------------------ */
/* pool names                                                          */
/* ------------------------------------------------------------------ */

int
spa_name_validate(const char *name, char *err, size_t errlen)
{
	static const char *const reserved_prefix[] = {
		"mirror", "raidz", "draid", "spare",
	};
	static const char *const reserved[] = { "log", "cache", "special", "dedup" };

	if (name == NULL || name[0] == '\0') {
		spa_errf(err, errlen, "pool name is empty");
		return (SET_ERROR(EINVAL));
	}
	if (strlen(name) > SPA_NAME_MAX) {
		spa_errf(err, errlen, "name is too long (at most %d characters)",
		    SPA_NAME_MAX);
		return (SET_ERROR(ENAMETOOLONG));
	}
	for (const char *c = name; *c != '\0'; c++) {
		unsigned char ch = (unsigned char)*c;
		if (isascii(ch) && (isalnum(ch) || strchr("_-.:", ch) != NULL))
			continue;
		if (isascii(ch) && isgraph(ch))
			spa_errf(err, errlen, "invalid character '%c' in pool name; "
			    "use letters, digits, '_', '-', '.' and ':'", ch);
		else
			spa_errf(err, errlen, "invalid character 0x%02x in pool name; "
			    "use letters, digits, '_', '-', '.' and ':'", ch);
		return (SET_ERROR(EINVAL));
	}
	if (!isalpha((unsigned char)name[0])) {
		spa_errf(err, errlen, "name must begin with a letter");
		return (SET_ERROR(EINVAL));
	}
	for (size_t i = 0; i < ARRAY_SIZE(reserved_prefix); i++) {
		if (strncmp(name, reserved_prefix[i], strlen(reserved_prefix[i])) == 0) {
			spa_errf(err, errlen, "name is reserved (names may not begin "
			    "with '%s'); choose another name", reserved_prefix[i]);
			return (SET_ERROR(EINVAL));
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(reserved); i++) {
		if (strcmp(name, reserved[i]) == 0) {
			spa_errf(err, errlen, "name is reserved; choose another name");
			return (SET_ERROR(EINVAL));
		}
	}
	return (0);
}

/* ------------------------------------------------------------------ */
/* the cache file                                                      */
/* ------------------------------------------------------------------ */

const char *
spa_cachefile_path(void)
{
	const char *p = getenv("TARN_CACHEFILE");

	if (p != NULL && p[0] != '\0')
		return (p);
	return (SPA_CACHEFILE_DEFAULT);
}

static bool
cache_disabled(const char *path)
{
	return (strcmp(path, "none") == 0);
}

/* Warnings about a damaged cache file are printed by the first read only. */
static __thread bool cache_quiet;

static void
cache_warn(const char *path, int line, const char *what)
{
	if (!cache_quiet)
		fprintf(stderr, "tarn: warning: cache file %s, line %d: %s; "
		    "line ignored\n", path, line, what);
}

static void
cache_entry_clear(spa_cache_entry_t *e)
{
	for (int i = 0; i < e->sce_npaths; i++)
		tarn_free(e->sce_paths[i]);
	tarn_free(e->sce_paths);
	e->sce_paths = NULL;
	e->sce_npaths = 0;
}

void
spa_cache_free(spa_cache_entry_t *ents, int n)
{
	if (ents == NULL)
		return;
	for (int i = 0; i < n; i++)
		cache_entry_clear(&ents[i]);
	tarn_free(ents);
}

/* Free the entries of an array of spa_cache_entry_t (it stays usable, empty). */
static void
cache_ents_fini(tarn_array_t *ents)
{
	size_t n;
	spa_cache_entry_t *v = tarn_array_steal(ents, &n);
	spa_cache_free(v, (int)n);
}

/*
 * An entry's paths grow in paths, a tarn_array its builder holds;
 * sce_paths/sce_npaths always show its elements (the entry owns that
 * memory: cache_entry_clear frees it, paths is never freed).
 */
static void
cache_entry_add_path(spa_cache_entry_t *e, tarn_array_t *paths, const char *path)
{
	TARN_ARRAY_APPEND(paths, char *, tarn_strdup(path));
	e->sce_paths = tarn_array_base(paths);
	e->sce_npaths = (int)tarn_array_len(paths);
}

/* Undo the escapes of a path line in place; false on a bad escape. */
static bool
cache_unescape(char *s)
{
	char *w = s;

	for (char *r = s; *r != '\0'; r++) {
		if (*r != '\\') {
			*w++ = *r;
			continue;
		}
		r++;
		if (*r == '\\')
			*w++ = '\\';
		else if (*r == 'n')
			*w++ = '\n';
		else
			return (false);
	}
	*w = '\0';
	return (true);
}

/* The parser's state between lines. */
typedef struct cache_parse {
	const char        *cp_file;
	tarn_array_t       cp_ents;     /* spa_cache_entry_t */
	tarn_array_t       cp_paths;    /* char *: the open entry's paths */
	bool               cp_open;     /* inside a pool ... end block */
	bool               cp_skip;     /* inside a block being ignored */
} cache_parse_t;

static void
cache_parse_pool(cache_parse_t *cp, int lineno, char *args)
{
	char *end, namebuf[64];
	uint64_t guid;

	if (cp->cp_open)
		cache_warn(cp->cp_file, lineno, "pool block without 'end'");
	cp->cp_open = false;
	cp->cp_skip = true;
	errno = 0;
	guid = strtoull(args, &end, 10);
	if (errno != 0 || end == args || guid == 0 || *end != ' ' ||
	    !isdigit((unsigned char)args[0])) {
		cache_warn(cp->cp_file, lineno, "bad pool GUID");
		return;
	}
	const char *name = end + 1;
	if (spa_name_validate(name, namebuf, sizeof (namebuf)) != 0) {
		cache_warn(cp->cp_file, lineno, "bad pool name");
		return;
	}
	for (size_t i = 0; i < tarn_array_len(&cp->cp_ents); i++) {
		const spa_cache_entry_t *o = tarn_array_get(&cp->cp_ents, i);
		if (strcmp(o->sce_name, name) == 0 || o->sce_guid == guid) {
			cache_warn(cp->cp_file, lineno, "pool listed twice");
			return;
		}
	}
	spa_cache_entry_t *e = tarn_array_push(&cp->cp_ents);
	tarn_array_init(&cp->cp_paths, sizeof (char *));     /* e's, empty */
	(void) snprintf(e->sce_name, sizeof (e->sce_name), "%s", name);
	e->sce_guid = guid;
	cp->cp_open = true;
	cp->cp_skip = false;
}

static void
cache_parse_line(cache_parse_t *cp, int lineno, char *line)
{
	if (line[0] == '\0' || line[0] == '#')
		return;
	if (strncmp(line, "pool ", 5) == 0) {
		cache_parse_pool(cp, lineno, line + 5);
	} else if (strncmp(line, "path ", 5) == 0) {
		spa_cache_entry_t *e = cp->cp_open ?
		    tarn_array_get(&cp->cp_ents, tarn_array_len(&cp->cp_ents) - 1) : NULL;
		char *p = line + 5;
		if (cp->cp_skip)
			return;
		if (e == NULL)
			cache_warn(cp->cp_file, lineno, "path outside a pool block");
		else if (!cache_unescape(p) || p[0] != '/' || strlen(p) > VDEV_PATH_MAX)
			cache_warn(cp->cp_file, lineno, "bad device path");
		else if (e->sce_npaths >= SPA_CACHE_MAXPATHS)
			cache_warn(cp->cp_file, lineno, "too many paths");
		else
			cache_entry_add_path(e, &cp->cp_paths, p);
	} else if (strcmp(line, "end") == 0) {
		if (!cp->cp_open && !cp->cp_skip)
			cache_warn(cp->cp_file, lineno, "'end' without 'pool'");
		cp->cp_open = false;
		cp->cp_skip = false;
	} else {
		cache_warn(cp->cp_file, lineno, "not understood");
	}
}

/* Parse the whole text `buf` (len bytes, NUL-terminated by the caller). */
static void
cache_parse_text(cache_parse_t *cp, char *buf, size_t len)
{
	int lineno = 0;
	char *line = buf;

	while (line < buf + len) {
		char *nl = memchr(line, '\n', (size_t)(buf + len - line));
		char *next = nl != NULL ? nl + 1 : buf + len;
		lineno++;
		if (nl != NULL)
			*nl = '\0';
		else
			buf[len] = '\0';
		if (strlen(line) != (size_t)((nl ? nl : buf + len) - line))
			cache_warn(cp->cp_file, lineno, "NUL byte in line");
		else
			cache_parse_line(cp, lineno, line);
		line = next;
	}
	if (cp->cp_open && !cache_quiet)
		fprintf(stderr, "tarn: warning: cache file %s: the last pool block "
		    "has no 'end'; its paths may be incomplete\n", cp->cp_file);
	cache_quiet = true;
}

/*
 * Read and parse path into *ents (spa_cache_entry_t, initialised here);
 * a missing file is an empty cache.
 */
static int
cache_read_path(const char *path, tarn_array_t *ents)
{
	cache_parse_t cp = { .cp_file = path };
	struct stat st;
	char *buf;
	size_t len = 0;
	int fd;

	tarn_array_init(&cp.cp_ents, sizeof (spa_cache_entry_t));
	*ents = cp.cp_ents;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return (errno == ENOENT ? 0 : SET_ERROR(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		int e = errno ? errno : EINVAL;
		(void) close(fd);
		fprintf(stderr, "tarn: warning: cache file %s is not a regular "
		    "file; ignored\n", path);
		return (e == EINVAL ? 0 : SET_ERROR(e));
	}
	size_t cap = (size_t)MIN((uint64_t)st.st_size, SPA_CACHEFILE_MAXSIZE);
	if ((uint64_t)st.st_size > SPA_CACHEFILE_MAXSIZE)
		fprintf(stderr, "tarn: warning: cache file %s is too large; "
		    "only its first %llu bytes are read\n", path,
		    (unsigned long long)SPA_CACHEFILE_MAXSIZE);
	buf = tarn_alloc(cap + 1);
	while (len < cap) {
		ssize_t r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	(void) close(fd);
	cache_parse_text(&cp, buf, len);
	tarn_free(buf);
	*ents = cp.cp_ents;
	return (0);
}

void
spa_cache_parse(const char *file, const char *text, size_t len, spa_cache_entry_t **ents,
    int *n)
{
	cache_parse_t cp = { .cp_file = file };
	tarn_array_init(&cp.cp_ents, sizeof (spa_cache_entry_t));
	char *buf = tarn_alloc(len + 1);
	memcpy(buf, text, len);
	cache_parse_text(&cp, buf, len);
	tarn_free(buf);
	size_t nents;
	*ents = tarn_array_steal(&cp.cp_ents, &nents);
	*n = (int)nents;
}

int
spa_cache_read(spa_cache_entry_t **ents, int *n)
{
	const char *path = spa_cachefile_path();

	if (cache_disabled(path)) {
		*ents = NULL;
		*n = 0;
		return (0);
	}
	tarn_array_t all;
	int error = cache_read_path(path, &all);
	size_t nents;
	*ents = tarn_array_steal(&all, &nents);
	*n = (int)nents;
	return (error);
}

/* mkdir -p of the directory part of path; the directory's name in *dirp. */
static int
cache_mkdirs(const char *path, char **dirp)
{
	char *dir = tarn_strdup(path);
	char *slash = strrchr(dir, '/');

	if (slash == NULL) {
		tarn_free(dir);
		*dirp = tarn_strdup(".");
		return (0);
	}
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	for (char *p = dir + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
			int e = errno;
			tarn_free(dir);
			return (SET_ERROR(e));
		}
		*p = c;
		if (c == '\0')
			break;
	}
	*dirp = dir;
	return (0);
}

static int
cache_write_all(int fd, const char *s, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, s, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return (SET_ERROR(errno));
		s += w;
		len -= (size_t)w;
	}
	return (0);
}

char *
spa_cache_render(const spa_cache_entry_t *ents, int n, size_t *lenp)
{
	tarn_array_t out = TARN_ARRAY_INIT(char);
	VERIFY0(tarn_array_reserve(&out, 256));

#define CACHE_PUT(c) TARN_ARRAY_APPEND(&out, char, (c))
	const char *hdr = "# Tarn cache file, format 1: the pools this host has "
	    "imported.\n# Written by tarn (temp file + rename); a damaged line "
	    "is ignored.\n";
	for (const char *h = hdr; *h != '\0'; h++)
		CACHE_PUT(*h);
	for (int i = 0; i < n; i++) {
		char line[SPA_NAME_MAX + 64];
		(void) snprintf(line, sizeof (line), "pool %" PRIu64 " %s\n",
		    ents[i].sce_guid, ents[i].sce_name);
		for (const char *c = line; *c != '\0'; c++)
			CACHE_PUT(*c);
		for (int p = 0; p < ents[i].sce_npaths; p++) {
			for (const char *c = "path "; *c != '\0'; c++)
				CACHE_PUT(*c);
			for (const char *c = ents[i].sce_paths[p]; *c != '\0'; c++) {
				if (*c == '\\' || *c == '\n')
					CACHE_PUT('\\');
				CACHE_PUT(*c == '\n' ? 'n' : *c);
			}
			CACHE_PUT('\n');
		}
		for (const char *c = "end\n"; *c != '\0'; c++)
			CACHE_PUT(*c);
	}
#undef CACHE_PUT
	TARN_ARRAY_APPEND(&out, char, '\0');
	size_t tlen;
	char *text = tarn_array_steal(&out, &tlen);
	*lenp = tlen - 1;
	return (text);
}

/* Replace the file at path with the entries: temp + fsync + rename. */
static int
cache_write_path(const char *path, int dirfd, const spa_cache_entry_t *ents, int n)
{
	char tmp[PATH_MAX];
	size_t len;
	int fd, error;

	if (snprintf(tmp, sizeof (tmp), "%s.tmp.%ld", path, (long)getpid()) >=
	    (int)sizeof (tmp))
		return (SET_ERROR(ENAMETOOLONG));
	(void) unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0)
		return (SET_ERROR(errno));
	char *text = spa_cache_render(ents, n, &len);
	error = cache_write_all(fd, text, len);
	tarn_free(text);
	if (error == 0 && fsync(fd) != 0)
		error = SET_ERROR(errno);
	if (close(fd) != 0 && error == 0)
		error = SET_ERROR(errno);
	if (error == 0 && rename(tmp, path) != 0)
		error = SET_ERROR(errno);
	if (error != 0)
		(void) unlink(tmp);
	else if (dirfd >= 0)
		(void) fsync(dirfd);
	return (error);
}

/*
 * Read-modify-write under the directory lock: `change` edits the entries
 * (an array of spa_cache_entry_t) in place, dropping and adding entries.
 */
typedef void (*cache_change_fn_t)(tarn_array_t *ents, void *arg);

static int
cache_update(cache_change_fn_t change, void *arg)
{
	const char *path = spa_cachefile_path();
	tarn_array_t ents;
	char *dir = NULL;
	int dirfd, error;

	if (cache_disabled(path))
		return (0);
	if ((error = cache_mkdirs(path, &dir)) != 0)
		return (error);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	tarn_free(dir);
	if (dirfd < 0)
		return (SET_ERROR(errno));
	while (flock(dirfd, LOCK_EX) != 0) {
		if (errno != EINTR) {
			error = SET_ERROR(errno);
			(void) close(dirfd);
			return (error);
		}
	}
	error = cache_read_path(path, &ents);
	if (error == 0) {
		change(&ents, arg);
		error = cache_write_path(path, dirfd, tarn_array_base(&ents),
		    (int)tarn_array_len(&ents));
	}
	cache_ents_fini(&ents);
	(void) flock(dirfd, LOCK_UN);
	(void) close(dirfd);
	return (error);
}

/* Drop entries whose name is `name` or whose GUID is `guid` (0: none). */
static void
cache_drop(tarn_array_t *ents, const char *name, uint64_t guid)
{
	spa_cache_entry_t *v = tarn_array_base(ents);
	size_t w = 0;

	for (size_t i = 0; i < tarn_array_len(ents); i++) {
		if ((name != NULL && strcmp(v[i].sce_name, name) == 0) ||
		    (guid != 0 && v[i].sce_guid == guid)) {
			cache_entry_clear(&v[i]);
			continue;
		}
		v[w++] = v[i];
	}
	tarn_array_truncate(ents, w);
}

static void
cache_collect_leaves(const vdev_t *vd, spa_cache_entry_t *e, tarn_array_t *paths)
{
	if (vd == NULL)
		return;
	if (vdev_children(vd) == 0 && vdev_path(vd) != NULL &&
	    vdev_path(vd)[0] == '/' && e->sce_npaths < SPA_CACHE_MAXPATHS) {
		cache_entry_add_path(e, paths, vdev_path(vd));
		return;
	}
	for (int c = 0; c < vdev_children(vd); c++)
		cache_collect_leaves(vdev_child(vd, c), e, paths);
}

/* Drop the entries of name or guid, then add one for them with tree's leaves. */
static void
cache_replace(tarn_array_t *ents, const char *name, uint64_t guid, const vdev_t *tree)
{
	cache_drop(ents, name, guid);
	spa_cache_entry_t *e = tarn_array_push(ents);
	(void) snprintf(e->sce_name, sizeof (e->sce_name), "%s", name);
	e->sce_guid = guid;
	tarn_array_t paths = TARN_ARRAY_INIT(char *);
	cache_collect_leaves(tree, e, &paths);
}

static void
cache_change_add(tarn_array_t *ents, void *arg)
{
	spa_t *spa = arg;

	cache_replace(ents, spa_name(spa), spa_guid(spa), spa_root_vdev(spa));
}

int
spa_cache_add(spa_t *spa)
{
	return (cache_update(cache_change_add, spa));
}

typedef struct cache_cand_arg {
	const char *name;
	uint64_t guid;
	const vdev_t *tree;
} cache_cand_arg_t;

static void
cache_change_add_cand(tarn_array_t *ents, void *arg)
{
	cache_cand_arg_t *ca = arg;

	cache_replace(ents, ca->name, ca->guid, ca->tree);
}

int
spa_cache_add_found(const char *name, uint64_t guid, const vdev_t *tree)
{
	cache_cand_arg_t ca = { .name = name, .guid = guid, .tree = tree };
	return (cache_update(cache_change_add_cand, &ca));
}

static void
cache_change_remove(tarn_array_t *ents, void *arg)
{
	cache_drop(ents, arg, 0);
}

int
spa_cache_remove(const char *name)
{
	return (cache_update(cache_change_remove, (void *)name));
}
