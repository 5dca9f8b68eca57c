/*
 * dsl_prop.c — dataset properties: the table of what exists, parsing and
 * validation with zfs's messages, inheritance with its SOURCE, and sizes
 * printed and parsed as zfs does.  Local values are entries of the
 * dataset object's ZAP (numbers as one uint64, the mountpoint as bytes);
 * a property without a local value takes its parent's effective value
 * (inheritable ones) or its default.  Theory: dsl_dataset.c.
 */
#include "dsl_impl.h"
#include "tarn_array.h"
#include <ctype.h>
#include <math.h>
#include <time.h>

typedef enum dsl_ptype {
	DPT_STAT,       /* read-only, computed */
	DPT_INDEX,      /* one of a list */
	DPT_SIZE,       /* bytes; 0 is "none" for quotas */
	DPT_STRING,
	DPT_LIMIT,      /* a count; DSL_LIMIT_NONE is "none" */
} dsl_ptype_t;

typedef struct dsl_index {
	const char *di_name;
	uint64_t    di_value;
} dsl_index_t;

static const dsl_index_t idx_onoff[] = { { "off", 0 }, { "on", 1 }, { NULL, 0 } };
static const dsl_index_t idx_canmount[] = {
	{ "off", 0 }, { "on", 1 }, { "noauto", 2 }, { NULL, 0 } };
static const dsl_index_t idx_checksum[] = {
	{ "on", ZIO_CHECKSUM_ON }, { "off", ZIO_CHECKSUM_OFF },
	{ "fletcher4", ZIO_CHECKSUM_FLETCHER4 }, { "sha256", ZIO_CHECKSUM_SHA256 },
	{ "xxh3", ZIO_CHECKSUM_XXH3_128 }, { NULL, 0 } };
static const dsl_index_t idx_compress[] = {
	{ "on", ZIO_COMPRESS_ON }, { "off", ZIO_COMPRESS_OFF }, { "lz4", ZIO_COMPRESS_LZ4 },
	{ "zstd", ZIO_COMPRESS_ZSTD }, { "gzip", ZIO_COMPRESS_GZIP },
	{ "gzip-1", DSL_COMPRESS_GZIP_N(1) }, { "gzip-2", DSL_COMPRESS_GZIP_N(2) },
	{ "gzip-3", DSL_COMPRESS_GZIP_N(3) }, { "gzip-4", DSL_COMPRESS_GZIP_N(4) },
	{ "gzip-5", DSL_COMPRESS_GZIP_N(5) }, { "gzip-6", DSL_COMPRESS_GZIP_N(6) },
	{ "gzip-7", DSL_COMPRESS_GZIP_N(7) }, { "gzip-8", DSL_COMPRESS_GZIP_N(8) },
	{ "gzip-9", DSL_COMPRESS_GZIP_N(9) },
	{ "zstd-1", DSL_COMPRESS_ZSTD_N(1) }, { "zstd-2", DSL_COMPRESS_ZSTD_N(2) },
	{ "zstd-3", DSL_COMPRESS_ZSTD_N(3) }, { "zstd-4", DSL_COMPRESS_ZSTD_N(4) },
	{ "zstd-5", DSL_COMPRESS_ZSTD_N(5) }, { "zstd-6", DSL_COMPRESS_ZSTD_N(6) },
	{ "zstd-7", DSL_COMPRESS_ZSTD_N(7) }, { "zstd-8", DSL_COMPRESS_ZSTD_N(8) },
	{ "zstd-9", DSL_COMPRESS_ZSTD_N(9) }, { "zstd-10", DSL_COMPRESS_ZSTD_N(10) },
	{ "zstd-11", DSL_COMPRESS_ZSTD_N(11) }, { "zstd-12", DSL_COMPRESS_ZSTD_N(12) },
	{ "zstd-13", DSL_COMPRESS_ZSTD_N(13) }, { "zstd-14", DSL_COMPRESS_ZSTD_N(14) },
	{ "zstd-15", DSL_COMPRESS_ZSTD_N(15) }, { "zstd-16", DSL_COMPRESS_ZSTD_N(16) },
	{ "zstd-17", DSL_COMPRESS_ZSTD_N(17) }, { "zstd-18", DSL_COMPRESS_ZSTD_N(18) },
	{ "zstd-19", DSL_COMPRESS_ZSTD_N(19) }, { "zle", ZIO_COMPRESS_ZLE },
	{ "zstd-fast", DSL_COMPRESS_ZSTD_FAST_N(0) },
#define F(n) { "zstd-fast-" #n, DSL_COMPRESS_ZSTD_FAST_N(n) }
	F(1), F(2), F(3), F(4), F(5), F(6), F(7), F(8), F(9), F(10), F(20), F(30), F(40),
	F(50), F(60), F(70), F(80), F(90), F(100), F(500), F(1000),
#undef F
	{ NULL, 0 } };
static const dsl_index_t idx_sync[] = { { "standard", DSL_SYNC_STANDARD },
	{ "always", DSL_SYNC_ALWAYS }, { "disabled", DSL_SYNC_DISABLED }, { NULL, 0 } };
/* zfs's aliases after the names shown */
static const dsl_index_t idx_xattr[] = { { "off", DSL_OFF }, { "on", DSL_ON },
	{ "sa", DSL_XATTR_SA }, { "dir", DSL_XATTR_DIR }, { NULL, 0 } };
static const dsl_index_t idx_acltype[] = { { "off", DSL_ACLTYPE_OFF },
	{ "posix", DSL_ACLTYPE_POSIX }, { "noacl", DSL_ACLTYPE_OFF },
	{ "disabled", DSL_ACLTYPE_OFF }, { "posixacl", DSL_ACLTYPE_POSIX }, { NULL, 0 } };
static const dsl_index_t idx_copies[] = { { "1", 1 }, { "2", 2 }, { "3", 3 }, { NULL, 0 } };
static const dsl_index_t idx_norm[] = { { "none", DSL_NORM_NONE },
	{ "formC", DSL_NORM_FORMC }, { "formD", DSL_NORM_FORMD }, { "formKC", DSL_NORM_FORMKC },
	{ "formKD", DSL_NORM_FORMKD }, { NULL, 0 } };
static const dsl_index_t idx_case[] = { { "sensitive", DSL_CASE_SENSITIVE },
	{ "insensitive", DSL_CASE_INSENSITIVE }, { "mixed", DSL_CASE_MIXED }, { NULL, 0 } };
static const dsl_index_t idx_dnodesize[] = { { "legacy", DSL_DNODESIZE_LEGACY },
	{ "auto", DSL_DNODESIZE_AUTO }, { "1k", 1024 }, { "2k", 2048 }, { "4k", 4096 },
	{ "8k", 8192 }, { "16k", 16384 }, { NULL, 0 } };
static const dsl_index_t idx_snapdir[] = { { "hidden", DSL_SNAPDIR_HIDDEN },
	{ "visible", DSL_SNAPDIR_VISIBLE }, { NULL, 0 } };
static const dsl_index_t idx_redundant[] = { { "all", DSL_REDUNDANT_ALL },
	{ "most", DSL_REDUNDANT_MOST }, { "some", DSL_REDUNDANT_SOME },
	{ "none", DSL_REDUNDANT_NONE }, { NULL, 0 } };
/* primarycache, secondarycache: the dmu's DMU_CACHE_* */
static const dsl_index_t idx_cache[] = { { "all", DMU_CACHE_ALL },
	{ "metadata", DMU_CACHE_METADATA }, { "none", DMU_CACHE_NONE }, { NULL, 0 } };
static const dsl_index_t idx_logbias[] = { { "latency", DMU_LOGBIAS_LATENCY },
	{ "throughput", DMU_LOGBIAS_THROUGHPUT }, { NULL, 0 } };

typedef struct dsl_prop_desc {
	const char *dpd_name;
	const char *dpd_column;
	dsl_ptype_t dpd_type;
	bool        dpd_inherit;
	uint64_t    dpd_default;
	const dsl_index_t *dpd_index;
	bool        dpd_once;       /* set at creation only (-o), copied to children then */
} dsl_prop_desc_t;

/* In zfs get all's order. */
static const dsl_prop_desc_t dsl_props[DSL_NUM_PROPS] = {
	[DSL_PROP_TYPE] = { "type", "TYPE", DPT_STAT, false, 0, NULL },
	[DSL_PROP_CREATION] = { "creation", "CREATION", DPT_STAT, false, 0, NULL },
	[DSL_PROP_USED] = { "used", "USED", DPT_STAT, false, 0, NULL },
	[DSL_PROP_AVAILABLE] = { "available", "AVAIL", DPT_STAT, false, 0, NULL },
	[DSL_PROP_REFERENCED] = { "referenced", "REFER", DPT_STAT, false, 0, NULL },
	[DSL_PROP_COMPRESSRATIO] = { "compressratio", "RATIO", DPT_STAT, false, 0, NULL },
	[DSL_PROP_MOUNTED] = { "mounted", "MOUNTED", DPT_STAT, false, 0, NULL },
	[DSL_PROP_ORIGIN] = { "origin", "ORIGIN", DPT_STAT, false, 0, NULL },
	[DSL_PROP_QUOTA] = { "quota", "QUOTA", DPT_SIZE, false, 0, NULL },
	[DSL_PROP_RESERVATION] = { "reservation", "RESERV", DPT_SIZE, false, 0, NULL },
	[DSL_PROP_RECORDSIZE] = { "recordsize", "RECSIZE", DPT_SIZE, true, 128 * KiB, NULL },
	[DSL_PROP_MOUNTPOINT] = { "mountpoint", "MOUNTPOINT", DPT_STRING, true, 0, NULL },
	[DSL_PROP_CHECKSUM] = { "checksum", "CHECKSUM", DPT_INDEX, true, ZIO_CHECKSUM_ON,
		idx_checksum },
	[DSL_PROP_COMPRESSION] = { "compression", "COMPRESS", DPT_INDEX, true,
		ZIO_COMPRESS_OFF, idx_compress },
	[DSL_PROP_ATIME] = { "atime", "ATIME", DPT_INDEX, true, 1, idx_onoff },
	[DSL_PROP_DEVICES] = { "devices", "DEVICES", DPT_INDEX, true, 1, idx_onoff },
	[DSL_PROP_EXEC] = { "exec", "EXEC", DPT_INDEX, true, 1, idx_onoff },
	[DSL_PROP_SETUID] = { "setuid", "SETUID", DPT_INDEX, true, 1, idx_onoff },
	[DSL_PROP_READONLY] = { "readonly", "RDONLY", DPT_INDEX, true, 0, idx_onoff },
	[DSL_PROP_SNAPDIR] = { "snapdir", "SNAPDIR", DPT_INDEX, true, DSL_SNAPDIR_HIDDEN,
		idx_snapdir },
	[DSL_PROP_CREATETXG] = { "createtxg", "CREATETXG", DPT_STAT, false, 0, NULL },
	[DSL_PROP_UTF8ONLY] = { "utf8only", "UTF8ONLY", DPT_INDEX, false, DSL_OFF, idx_onoff,
		true },
	[DSL_PROP_NORMALIZATION] = { "normalization", "NORMALIZATION", DPT_INDEX, false,
		DSL_NORM_NONE, idx_norm, true },
	[DSL_PROP_CASESENSITIVITY] = { "casesensitivity", "CASE", DPT_INDEX, false,
		DSL_CASE_SENSITIVE, idx_case, true },
	[DSL_PROP_GUID] = { "guid", "GUID", DPT_STAT, false, 0, NULL },
	[DSL_PROP_OBJSETID] = { "objsetid", "OBJSETID", DPT_STAT, false, 0, NULL },
	[DSL_PROP_DNODESIZE] = { "dnodesize", "DNSIZE", DPT_INDEX, true, DSL_DNODESIZE_LEGACY,
		idx_dnodesize },
	[DSL_PROP_REDUNDANT_METADATA] = { "redundant_metadata", "REDUND_MD", DPT_INDEX, true,
		DSL_REDUNDANT_ALL, idx_redundant },
	[DSL_PROP_CANMOUNT] = { "canmount", "CANMOUNT", DPT_INDEX, false, 1, idx_canmount },
	[DSL_PROP_XATTR] = { "xattr", "XATTR", DPT_INDEX, true, DSL_ON, idx_xattr },
	[DSL_PROP_COPIES] = { "copies", "COPIES", DPT_INDEX, true, 1, idx_copies },
	[DSL_PROP_REFQUOTA] = { "refquota", "REFQUOTA", DPT_SIZE, false, 0, NULL },
	[DSL_PROP_REFRESERVATION] = { "refreservation", "REFRESERV", DPT_SIZE, false, 0, NULL },
	[DSL_PROP_USEDSNAP] = { "usedbysnapshots", "USEDSNAP", DPT_STAT, false, 0, NULL },
	[DSL_PROP_USEDDS] = { "usedbydataset", "USEDDS", DPT_STAT, false, 0, NULL },
	[DSL_PROP_USEDCHILD] = { "usedbychildren", "USEDCHILD", DPT_STAT, false, 0, NULL },
	[DSL_PROP_USEDREFRESERV] = { "usedbyrefreservation", "USEDREFRESERV", DPT_STAT, false,
		0, NULL },
	[DSL_PROP_DEFER_DESTROY] = { "defer_destroy", "DEFER_DESTROY", DPT_STAT, false, 0,
		NULL },
	[DSL_PROP_USERREFS] = { "userrefs", "USERREFS", DPT_STAT, false, 0, NULL },
	[DSL_PROP_WRITTEN] = { "written", "WRITTEN", DPT_STAT, false, 0, NULL },
	[DSL_PROP_CLONES] = { "clones", "CLONES", DPT_STAT, false, 0, NULL },
	[DSL_PROP_RECEIVE_RESUME_TOKEN] = { "receive_resume_token", "RESUMETOK", DPT_STAT, false,
		0, NULL },
	[DSL_PROP_FILESYSTEM_LIMIT] = { "filesystem_limit", "FSLIMIT", DPT_LIMIT, false,
		DSL_LIMIT_NONE, NULL },
	[DSL_PROP_SNAPSHOT_LIMIT] = { "snapshot_limit", "SSLIMIT", DPT_LIMIT, false,
		DSL_LIMIT_NONE, NULL },
	[DSL_PROP_FILESYSTEM_COUNT] = { "filesystem_count", "FSCOUNT", DPT_STAT, false, 0,
		NULL },
	[DSL_PROP_SNAPSHOT_COUNT] = { "snapshot_count", "SSCOUNT", DPT_STAT, false, 0, NULL },
	[DSL_PROP_RELATIME] = { "relatime", "RELATIME", DPT_INDEX, true, 0, idx_onoff },
	[DSL_PROP_SYNC] = { "sync", "SYNC", DPT_INDEX, true, DSL_SYNC_STANDARD, idx_sync },
	[DSL_PROP_REFCOMPRESSRATIO] = { "refcompressratio", "REFRATIO", DPT_STAT, false, 0,
		NULL },
	[DSL_PROP_LOGICALUSED] = { "logicalused", "LUSED", DPT_STAT, false, 0, NULL },
	[DSL_PROP_LOGICALREFERENCED] = { "logicalreferenced", "LREFER", DPT_STAT, false, 0,
		NULL },
	/* posix by default, unlike zfs on Linux: ACLs work as on ext4 (Samba needs them) */
	[DSL_PROP_ACLTYPE] = { "acltype", "ACLTYPE", DPT_INDEX, true, DSL_ACLTYPE_POSIX,
		idx_acltype },
	[DSL_PROP_PRIMARYCACHE] = { "primarycache", "PRIMARYCACHE", DPT_INDEX, true,
		DMU_CACHE_ALL, idx_cache },
	[DSL_PROP_SECONDARYCACHE] = { "secondarycache", "SECONDARYCACHE", DPT_INDEX, true,
		DMU_CACHE_ALL, idx_cache },
	[DSL_PROP_SPECIAL_SMALL_BLOCKS] = { "special_small_blocks", "SPECSMALL", DPT_SIZE, true,
		0, NULL },
	[DSL_PROP_LOGBIAS] = { "logbias", "LOGBIAS", DPT_INDEX, true, DMU_LOGBIAS_LATENCY,
		idx_logbias },
};

int
dsl_prop_lookup(const char *name)
{
	for (int p = 0; p < DSL_NUM_PROPS; p++)
		if (strcmp(dsl_props[p].dpd_name, name) == 0)
			return (p);
	/* zfs's short names */
	static const struct { const char *a; int p; } alias[] = {
		{ "avail", DSL_PROP_AVAILABLE }, { "refer", DSL_PROP_REFERENCED },
		{ "reserv", DSL_PROP_RESERVATION }, { "recsize", DSL_PROP_RECORDSIZE },
		{ "refreserv", DSL_PROP_REFRESERVATION }, { "lused", DSL_PROP_LOGICALUSED },
		{ "lrefer", DSL_PROP_LOGICALREFERENCED }, { "refratio", DSL_PROP_REFCOMPRESSRATIO },
		{ "ratio", DSL_PROP_COMPRESSRATIO },
		{ "compress", DSL_PROP_COMPRESSION }, { "rdonly", DSL_PROP_READONLY },
		{ "usedsnap", DSL_PROP_USEDSNAP }, { "usedds", DSL_PROP_USEDDS },
		{ "usedchild", DSL_PROP_USEDCHILD }, { "usedrefreserv", DSL_PROP_USEDREFRESERV },
	};
	for (size_t i = 0; i < sizeof (alias) / sizeof (alias[0]); i++)
		if (strcmp(alias[i].a, name) == 0)
			return (alias[i].p);
	return (-1);
}

const char *
dsl_prop_name(int prop)
{
	return (prop >= 0 && prop < DSL_NUM_PROPS ? dsl_props[prop].dpd_name : "?");
}

bool
dsl_prop_readonly(int prop)
{
	return (dsl_props[prop].dpd_type == DPT_STAT);
}

bool
dsl_prop_once(int prop)
{
	return (dsl_props[prop].dpd_once);
}

bool
dsl_prop_inheritable(int prop)
{
	return (dsl_props[prop].dpd_inherit);
}

const char *
dsl_prop_column(int prop)
{
	return (dsl_props[prop].dpd_column);
}

bool
dsl_prop_is_numeric(int prop)
{
	return (dsl_props[prop].dpd_type == DPT_SIZE || dsl_props[prop].dpd_type == DPT_LIMIT ||
	    prop == DSL_PROP_USED || prop == DSL_PROP_WRITTEN || prop == DSL_PROP_USERREFS ||
	    prop == DSL_PROP_FILESYSTEM_COUNT || prop == DSL_PROP_SNAPSHOT_COUNT ||
	    prop == DSL_PROP_AVAILABLE || prop == DSL_PROP_REFERENCED ||
	    prop == DSL_PROP_USEDSNAP || prop == DSL_PROP_USEDDS ||
	    prop == DSL_PROP_USEDCHILD || prop == DSL_PROP_USEDREFRESERV ||
	    prop == DSL_PROP_LOGICALUSED || prop == DSL_PROP_LOGICALREFERENCED ||
	    prop == DSL_PROP_COMPRESSRATIO || prop == DSL_PROP_REFCOMPRESSRATIO);
}

/* ---- sizes ---- */

void
dsl_nicebytes(uint64_t n, char *buf, size_t len)
{
	static const char units[] = "BKMGTPE";
	int i = 0;
	uint64_t v = n;
	while (v >= 1024 && i < 6) {
		v /= 1024;
		i++;
	}
	if (i == 0 || (n & ((1ULL << (10 * i)) - 1)) == 0) {
		(void) snprintf(buf, len, "%" PRIu64 "%c", v, units[i]);
		return;
	}
	double d = (double)n / (double)(1ULL << (10 * i));
	for (int prec = 2; prec >= 0; prec--) {
		if (snprintf(buf, len, "%.*f%c", prec, d, units[i]) <= 5)
			return;
	}
}

int
dsl_parse_size(const char *s, bool none_ok, uint64_t *out, char *err, size_t errlen)
{
	if (none_ok && strcmp(s, "none") == 0) {
		*out = 0;
		return (0);
	}
	char *end;
	errno = 0;
	double d = strtod(s, &end);
	if (end == s || !isdigit((unsigned char)s[0]) || errno != 0 || d < 0 || isnan(d)) {
		(void) snprintf(err, errlen, "bad numeric value '%s'", s);
		return (SET_ERROR(EINVAL));
	}
	static const char units[] = "BKMGTPE";
	int shift = 0;
	if (*end != '\0') {
		const char *u = strchr(units, toupper((unsigned char)*end));
		const char *rest = end + 1;
		if (u != NULL && u != units &&
		    (strcasecmp(rest, "") == 0 || strcasecmp(rest, "b") == 0 ||
		    strcasecmp(rest, "ib") == 0))
			shift = (int)(u - units) * 10;
		else if (u != units || *rest != '\0') {
			(void) snprintf(err, errlen, "invalid numeric suffix '%s'", end);
			return (SET_ERROR(EINVAL));
		}
	}
	if (shift == 0 && d != floor(d)) {
		(void) snprintf(err, errlen, "bad numeric value '%s'", s);
		return (SET_ERROR(EINVAL));
	}
	double v = ldexp(d, shift);
	if (v >= 18446744073709551615.0) {
		(void) snprintf(err, errlen, "numeric value is too large");
		return (SET_ERROR(ERANGE));
	}
	*out = (uint64_t)v;
	return (0);
}

/* ---- parsing values ---- */

static int
dsl_index_parse(int prop, const char *value, uint64_t *num, char *err, size_t errlen)
{
	const dsl_index_t *ix = dsl_props[prop].dpd_index;
	for (int i = 0; ix[i].di_name != NULL; i++) {
		if (strcmp(ix[i].di_name, value) == 0) {
			*num = ix[i].di_value;
			return (0);
		}
	}
	if (prop == DSL_PROP_COMPRESSION && strcmp(value, "lzjb") == 0) {
		(void) snprintf(err, errlen, "'compression' value 'lzjb' is not supported "
		    "(a format kept for old pools); use lz4, which is faster and smaller");
		return (SET_ERROR(EINVAL));
	}
	char list[512] = "";
	for (int i = 0; ix[i].di_name != NULL; i++) {
		if (prop == DSL_PROP_COMPRESSION && (strncmp(ix[i].di_name, "gzip-", 5) == 0 ||
		    strncmp(ix[i].di_name, "zstd-", 5) == 0)) {
			if (strcmp(ix[i].di_name, "gzip-1") == 0)
				strcat(list, " | gzip-[1-9]");
			if (strcmp(ix[i].di_name, "zstd-1") == 0)
				strcat(list, " | zstd-[1-19]");
			if (strcmp(ix[i].di_name, "zstd-fast") == 0)
				strcat(list, " | zstd-fast | zstd-fast-[1-10,20,30,40,50,60,70,"
				    "80,90,100,500,1000]");
			continue;
		}
		if (i > 0)
			strcat(list, " | ");
		strcat(list, ix[i].di_name);
	}
	(void) snprintf(err, errlen, "'%s' must be one of '%s'", dsl_props[prop].dpd_name, list);
	return (SET_ERROR(EINVAL));
}

static const char *
dsl_index_name(int prop, uint64_t v)
{
	const dsl_index_t *ix = dsl_props[prop].dpd_index;
	for (int i = 0; ix[i].di_name != NULL; i++)
		if (ix[i].di_value == v)
			return (ix[i].di_name);
	return ("-");
}

/* snapshot_limit, filesystem_limit: "none" or a count. */
static int
dsl_limit_parse(const char *value, uint64_t *num, char *err, size_t errlen)
{
	char *end;
	if (strcmp(value, "none") == 0) {
		*num = DSL_LIMIT_NONE;
		return (0);
	}
	errno = 0;
	unsigned long long v = strtoull(value, &end, 10);
	if (!isdigit((unsigned char)value[0]) || *end != '\0' || errno != 0 ||
	    v == DSL_LIMIT_NONE) {
		(void) snprintf(err, errlen, "bad numeric value '%s'", value);
		return (SET_ERROR(EINVAL));
	}
	*num = v;
	return (0);
}

/*
 * Values Tarn names but cannot honour yet are refused rather than taken
 * and ignored: lookups are exact byte comparisons, so no normalization
 * and no case folding.
 */
static int
dsl_prop_mode_check(int prop, const char *value, uint64_t num, char *err, size_t errlen)
{
	if ((prop == DSL_PROP_NORMALIZATION && num != DSL_NORM_NONE) ||
	    (prop == DSL_PROP_CASESENSITIVITY && num != DSL_CASE_SENSITIVE)) {
		(void) snprintf(err, errlen, "'%s=%s' is not supported yet: names are compared "
		    "byte for byte (use %s)", dsl_props[prop].dpd_name, value,
		    prop == DSL_PROP_NORMALIZATION ? "normalization=none" :
		    "casesensitivity=sensitive");
		return (SET_ERROR(ENOTSUP));
	}
	return (0);
}

int
dsl_prop_parse(int prop, const char *value, uint64_t *num, char *str, size_t len,
    char *err, size_t errlen)
{
	if (prop < 0 || prop >= DSL_NUM_PROPS) {
		(void) snprintf(err, errlen, "invalid property '%s'", value);
		return (SET_ERROR(EINVAL));
	}
	const dsl_prop_desc_t *d = &dsl_props[prop];
	*num = 0;
	if (str != NULL && len > 0)
		str[0] = '\0';
	switch (d->dpd_type) {
	case DPT_STAT:
		(void) snprintf(err, errlen, "'%s' is readonly", d->dpd_name);
		return (SET_ERROR(EINVAL));
	case DPT_INDEX:
		if (dsl_index_parse(prop, value, num, err, errlen) != 0)
			return (SET_ERROR(EINVAL));
		return (dsl_prop_mode_check(prop, value, *num, err, errlen));
	case DPT_STRING:
		if (value[0] != '/' && strcmp(value, "none") != 0 && strcmp(value, "legacy") != 0) {
			(void) snprintf(err, errlen,
			    "'mountpoint' must be an absolute path, 'none', or 'legacy'");
			return (SET_ERROR(EINVAL));
		}
		if (strlen(value) >= len || strlen(value) >= DSL_MOUNTPOINT_MAX) {
			(void) snprintf(err, errlen, "'mountpoint' is too long");
			return (SET_ERROR(ENAMETOOLONG));
		}
		(void) snprintf(str, len, "%s", value);
		/* no trailing slashes except for "/" itself */
		for (size_t n = strlen(str); n > 1 && str[n - 1] == '/'; n--)
			str[n - 1] = '\0';
		return (0);
	case DPT_LIMIT:
		return (dsl_limit_parse(value, num, err, errlen));
	case DPT_SIZE:
		break;
	}
	bool none_ok = prop != DSL_PROP_RECORDSIZE && prop != DSL_PROP_SPECIAL_SMALL_BLOCKS;
	int e = dsl_parse_size(value, none_ok, num, err, errlen);
	if (e == 0 && *num == 0 && strcmp(value, "none") != 0 &&
	    (prop == DSL_PROP_QUOTA || prop == DSL_PROP_REFQUOTA)) {
		(void) snprintf(err, errlen, "use 'none' to disable quota/refquota");
		return (SET_ERROR(EINVAL));
	}
	if (prop == DSL_PROP_RECORDSIZE &&
	    (e != 0 || *num < 512 || *num > MiB || (*num & (*num - 1)) != 0)) {
		(void) snprintf(err, errlen, "'recordsize' must be power of 2 from 512B to 1M");
		return (SET_ERROR(EINVAL));
	}
	if (prop == DSL_PROP_SPECIAL_SMALL_BLOCKS && (e != 0 || (*num != 0 &&
	    (*num < 512 || *num > MiB || (*num & (*num - 1)) != 0)))) {
		(void) snprintf(err, errlen, "invalid 'special_small_blocks=%s' property: must be "
		    "zero or a power of 2 from 512B to 1M", value);
		return (SET_ERROR(EINVAL));
	}
	return (e);
}

/* ---- what the pool's features allow ---- */

int
dsl_prop_pool_check(dsl_pool_t *dp, int prop, uint64_t num, char *err, size_t errlen)
{
	if (prop == DSL_PROP_COMPRESSION && num == ZIO_COMPRESS_ZLE &&
	    !(spa_features(dp->dp_spa) & SPA_FEATURE_ZLE_COMPRESS)) {
		(void) snprintf(err, errlen, "pool and or dataset must be upgraded to set "
		    "this property or value (feature zle_compress: 'zpool upgrade')");
		return (SET_ERROR(ENOTSUP));
	}
	return (0);
}

/* ---- stored values ---- */

int
dsl_prop_local(dsl_pool_t *dp, uint64_t obj, int prop, uint64_t *num, char *str, size_t len)
{
	const char *name = dsl_props[prop].dpd_name;
	if (dsl_props[prop].dpd_type == DPT_STRING) {
		char buf[DSL_MOUNTPOINT_MAX + 1];
		int isz;
		uint64_t n;
		int e = zap_length(dp->dp_mos, obj, name, &isz, &n);
		if (e == 0 && (isz != 1 || n >= sizeof (buf)))
			e = SET_ERROR(EIO);
		if (e == 0)
			e = zap_lookup(dp->dp_mos, obj, name, 1, n, buf);
		if (e == 0 && str != NULL) {
			buf[n] = '\0';
			(void) snprintf(str, len, "%s", buf);
		}
		return (e);
	}
	return (zap_lookup_int(dp->dp_mos, obj, name, num));
}

int
dsl_prop_store(dsl_pool_t *dp, uint64_t obj, int prop, uint64_t num, const char *str,
    dmu_tx_t *tx)
{
	const char *name = dsl_props[prop].dpd_name;
	if (dsl_props[prop].dpd_type == DPT_STRING)
		return (zap_update(dp->dp_mos, obj, name, 1, strlen(str) + 1, str, tx));
	return (zap_update_int(dp->dp_mos, obj, name, num, tx));
}

/* ---- effective values ---- */

/* Raw value and source of a settable property on name (lock held). */
static int
dsl_prop_resolve(dsl_pool_t *dp, const char *name, int prop, uint64_t *num, char *str,
    size_t len, dsl_prop_val_t *val)
{
	const dsl_prop_desc_t *d = &dsl_props[prop];
	char *cur = tarn_strdup(name);
	int e = 0;
	val->dpv_source = DSL_SRC_DEFAULT;
	for (;;) {
		uint64_t obj;
		e = dsl_lookup(dp, cur, &obj, NULL, 0);
		if (e != 0)
			break;
		e = dsl_prop_local(dp, obj, prop, num, str, len);
		if (e == 0) {
			bool self = strcmp(cur, name) == 0;
			val->dpv_source = self ? DSL_SRC_LOCAL : DSL_SRC_INHERITED;
			(void) snprintf(val->dpv_setpoint, sizeof (val->dpv_setpoint), "%s", cur);
			break;
		}
		if (e != ENOENT || !d->dpd_inherit)
			break;
		char *slash = strrchr(cur, '/');
		if (slash == NULL)
			break;
		*slash = '\0';
	}
	tarn_free(cur);
	if (e == ENOENT) {
		*num = d->dpd_default;
		if (str != NULL)
			(void) snprintf(str, len, "/%s", name);
		return (0);
	}
	return (e);
}

static void
dsl_mountpoint(const char *name, const dsl_prop_val_t *val, const char *raw, char *out,
    size_t len)
{
	if (val->dpv_source != DSL_SRC_INHERITED || raw[0] != '/') {
		(void) snprintf(out, len, "%s", raw);
		return;
	}
	const char *rest = name + strlen(val->dpv_setpoint) + 1;
	(void) snprintf(out, len, "%s/%s", strcmp(raw, "/") == 0 ? "" : raw, rest);
}

/*
 * compressratio and the logical sizes, which only pools created with the
 * feature logical_space count ("-" elsewhere).  A ratio is kept as
 * hundredths (for sorting) and printed as zfs prints it: "1.85x", or
 * "1.85" parsable.  Sizes are left to the caller's formatting.
 */
static void
dsl_prop_logical(dsl_pool_t *dp, int prop, bool parsable, const dsl_space_t *s,
    dsl_prop_val_t *val)
{
	if (!(spa_features(dp->dp_spa) & SPA_FEATURE_LOGICAL_SPACE)) {
		val->dpv_num = 0;
		(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "-");
		return;
	}
	bool ref = prop == DSL_PROP_REFCOMPRESSRATIO || prop == DSL_PROP_LOGICALREFERENCED;
	uint64_t l = ref ? s->ds_lreferenced : s->ds_lused;
	uint64_t p = ref ? s->ds_preferenced : s->ds_pused;
	if (prop == DSL_PROP_LOGICALUSED || prop == DSL_PROP_LOGICALREFERENCED) {
		val->dpv_num = l;
		return;
	}
	/* 100 * l / p without overflow, rounded down as zfs does; 1.00x when empty */
	val->dpv_num = p == 0 ? 100 : (uint64_t)((unsigned __int128)l * 100 / p);
	(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "%" PRIu64 ".%02" PRIu64 "%s",
	    val->dpv_num / 100, val->dpv_num % 100, parsable ? "" : "x");
}

/*
 * createtxg, guid and objsetid, printed as zfs prints them (decimal, -p
 * or not).  A dataset made before guids were kept has dd_guid 0: its guid
 * is derived from the pool's and its object number, the same every time.
 */
static int
dsl_prop_ids(dsl_pool_t *dp, uint64_t obj, int prop, dsl_prop_val_t *val)
{
	dsl_dataset_phys_t phys;
	int e = dsl_phys_read(dp, obj, &phys);
	if (e != 0)
		return (e);
	if (prop == DSL_PROP_CREATETXG) {
		val->dpv_num = phys.dd_create_txg;
	} else if (prop == DSL_PROP_OBJSETID) {
		val->dpv_num = obj;
	} else if (phys.dd_guid != 0) {
		val->dpv_num = phys.dd_guid;
	} else {
		uint64_t z = spa_guid(dp->dp_spa) + obj * 0x9e3779b97f4a7c15ULL;  /* splitmix64 */
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		val->dpv_num = (z ^ (z >> 31)) | 1;
	}
	(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "%" PRIu64, val->dpv_num);
	return (0);
}

static int
dsl_prop_stat(dsl_pool_t *dp, const char *name, int prop, bool parsable, dsl_prop_val_t *val)
{
	val->dpv_source = DSL_SRC_NONE;
	if (prop == DSL_PROP_TYPE) {
		(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "filesystem");
		return (0);
	}
	if (prop == DSL_PROP_MOUNTED) {
		val->dpv_num = dp->dp_mounted_fn != NULL &&
		    dp->dp_mounted_fn(dp->dp_mounted_arg, name);
		(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "%s",
		    val->dpv_num ? "yes" : "no");
		return (0);
	}
	uint64_t obj;
	int e = dsl_lookup(dp, name, &obj, NULL, 0);
	if (e != 0)
		return (e);
	if (prop == DSL_PROP_CREATION) {
		dsl_dataset_phys_t phys;
		if ((e = dsl_phys_read(dp, obj, &phys)) != 0)
			return (e);
		val->dpv_num = phys.dd_creation;
		time_t t = (time_t)phys.dd_creation;
		struct tm tm;
		if (parsable)
			(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "%" PRIu64,
			    phys.dd_creation);
		else
			(void) strftime(val->dpv_str, sizeof (val->dpv_str), "%a %b %e %H:%M %Y",
			    localtime_r(&t, &tm));
		return (0);
	}
	if (prop == DSL_PROP_CREATETXG || prop == DSL_PROP_GUID || prop == DSL_PROP_OBJSETID)
		return (dsl_prop_ids(dp, obj, prop, val));
	if (prop == DSL_PROP_ORIGIN || prop == DSL_PROP_DEFER_DESTROY ||
	    prop == DSL_PROP_USERREFS || prop == DSL_PROP_CLONES ||
	    prop == DSL_PROP_RECEIVE_RESUME_TOKEN ||
	    prop == DSL_PROP_FILESYSTEM_COUNT || prop == DSL_PROP_SNAPSHOT_COUNT) {
		/* snapshots' own, or read without the lock (dsl_prop_get) */
		(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "-");
		return (0);
	}
	dsl_space_t s = { 0 };
	if ((e = dsl_space_locked(dp, name, &s)) != 0)
		return (e);
	switch (prop) {
	case DSL_PROP_USED: val->dpv_num = s.ds_used; break;
	case DSL_PROP_AVAILABLE: val->dpv_num = s.ds_available; break;
	/* used = usedbydataset + usedbyrefreservation + usedbychildren (+ snapshots) */
	case DSL_PROP_USEDDS: val->dpv_num = s.ds_referenced; break;
	case DSL_PROP_USEDREFRESERV: val->dpv_num = s.ds_refreserved; break;
	case DSL_PROP_USEDCHILD:
		val->dpv_num = s.ds_used - s.ds_referenced - s.ds_refreserved;
		break;
	case DSL_PROP_USEDSNAP: val->dpv_num = s.ds_usedsnap; break;
	case DSL_PROP_WRITTEN: val->dpv_num = s.ds_written; break;
	case DSL_PROP_COMPRESSRATIO:
	case DSL_PROP_REFCOMPRESSRATIO:
	case DSL_PROP_LOGICALUSED:
	case DSL_PROP_LOGICALREFERENCED:
		dsl_prop_logical(dp, prop, parsable, &s, val);
		break;
	default: val->dpv_num = s.ds_referenced; break;
	}
	return (0);
}

/* ---- snapshots and bookmarks, and what needs the snapshot calls ---- */

static uint64_t dsl_prop_numval(dsl_pool_t *dp, const char *name, int prop);

bool
dsl_prop_applies(int prop, const char *name)
{
	if (prop < 0 || prop >= DSL_NUM_PROPS)
		return (false);
	if (strchr(name, '#') != NULL)
		return (prop == DSL_PROP_TYPE || prop == DSL_PROP_CREATION ||
		    prop == DSL_PROP_CREATETXG || prop == DSL_PROP_GUID);
	if (strchr(name, '@') == NULL)
		return (prop != DSL_PROP_DEFER_DESTROY && prop != DSL_PROP_USERREFS &&
		    prop != DSL_PROP_CLONES);
	switch (prop) {
	case DSL_PROP_TYPE: case DSL_PROP_CREATION: case DSL_PROP_USED:
	case DSL_PROP_REFERENCED: case DSL_PROP_COMPRESSRATIO: case DSL_PROP_DEVICES:
	case DSL_PROP_EXEC: case DSL_PROP_SETUID: case DSL_PROP_CREATETXG:
	case DSL_PROP_XATTR: case DSL_PROP_UTF8ONLY: case DSL_PROP_NORMALIZATION:
	case DSL_PROP_CASESENSITIVITY: case DSL_PROP_GUID: case DSL_PROP_DEFER_DESTROY:
	case DSL_PROP_USERREFS: case DSL_PROP_OBJSETID: case DSL_PROP_REFCOMPRESSRATIO:
	case DSL_PROP_WRITTEN: case DSL_PROP_CLONES: case DSL_PROP_LOGICALREFERENCED:
	case DSL_PROP_ACLTYPE:
		return (true);
	default:
		return (false);
	}
}

static void
dsl_prop_fmt_num(dsl_prop_val_t *val, uint64_t n, bool size, bool parsable)
{
	val->dpv_num = n;
	if (size && !parsable)
		dsl_nicebytes(n, val->dpv_str, sizeof (val->dpv_str));
	else
		(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "%" PRIu64, n);
}

static void
dsl_prop_fmt_time(dsl_prop_val_t *val, uint64_t t, bool parsable)
{
	val->dpv_num = t;
	time_t tt = (time_t)t;
	struct tm tm;
	if (parsable)
		(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "%" PRIu64, t);
	else
		(void) strftime(val->dpv_str, sizeof (val->dpv_str), "%a %b %e %H:%M %Y",
		    localtime_r(&tt, &tm));
}

/* A ratio of logical to stored bytes as dsl_prop_logical prints it. */
static void
dsl_prop_fmt_ratio(dsl_pool_t *dp, dsl_prop_val_t *val, uint64_t l, uint64_t p, bool parsable)
{
	dsl_space_t s = { .ds_lreferenced = l, .ds_preferenced = p };
	dsl_prop_logical(dp, DSL_PROP_REFCOMPRESSRATIO, parsable, &s, val);
}

/* A bookmark's property ("fs#bm"). */
static int
dsl_prop_bookmark_get(dsl_pool_t *dp, const char *name, int prop, bool parsable,
    dsl_prop_val_t *val, char *err, size_t errlen)
{
	char fs[DSL_NAME_MAX];
	(void) snprintf(fs, sizeof (fs), "%.*s", (int)strcspn(name, "#"), name);
	dsl_bookmark_info_t *bms = NULL;
	int n = 0, e = dsl_bookmark_list(dp, fs, &bms, &n, err, errlen);
	int i = 0;
	while (e == 0 && i < n && strcmp(bms[i].dbi_name, name) != 0)
		i++;
	if (e == 0 && i == n) {
		if (err != NULL)
			(void) snprintf(err, errlen, "dataset does not exist");
		e = SET_ERROR(ENOENT);
	}
	if (e == 0) {
		if (prop == DSL_PROP_TYPE)
			(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "bookmark");
		else if (prop == DSL_PROP_CREATION)
			dsl_prop_fmt_time(val, bms[i].dbi_creation, parsable);
		else if (prop == DSL_PROP_CREATETXG)
			dsl_prop_fmt_num(val, bms[i].dbi_txg, false, true);
		else if (prop == DSL_PROP_GUID)
			dsl_prop_fmt_num(val, bms[i].dbi_guid, false, true);
		else
			(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "-");
	}
	tarn_free(bms);
	return (e);
}

/* What a snapshot keeps of its file system fs: its value, inherited from there. */
static int
dsl_prop_snap_inherited(dsl_pool_t *dp, const char *fs, int prop, bool parsable,
    dsl_prop_val_t *val)
{
	int e = dsl_prop_get(dp, fs, prop, parsable, val, NULL, 0);
	if (e == 0 && val->dpv_source == DSL_SRC_LOCAL) {
		val->dpv_source = DSL_SRC_INHERITED;
		(void) snprintf(val->dpv_setpoint, sizeof (val->dpv_setpoint), "%s", fs);
	}
	return (e);
}

/* The statistics of a snapshot ("fs@snap") from dsl_snapshot_info. */
static void
dsl_prop_snap_stat(dsl_pool_t *dp, const dsl_snap_info_t *si, int prop, bool parsable,
    dsl_prop_val_t *val)
{
	switch (prop) {
	case DSL_PROP_TYPE:
		(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "snapshot");
		break;
	case DSL_PROP_CREATION: dsl_prop_fmt_time(val, si->dsi_creation, parsable); break;
	case DSL_PROP_USED: dsl_prop_fmt_num(val, si->dsi_used, true, parsable); break;
	case DSL_PROP_REFERENCED:
		dsl_prop_fmt_num(val, si->dsi_referenced, true, parsable);
		break;
	case DSL_PROP_WRITTEN: dsl_prop_fmt_num(val, si->dsi_written, true, parsable); break;
	case DSL_PROP_CREATETXG: dsl_prop_fmt_num(val, si->dsi_txg, false, true); break;
	case DSL_PROP_GUID: dsl_prop_fmt_num(val, si->dsi_guid, false, true); break;
	case DSL_PROP_OBJSETID: dsl_prop_fmt_num(val, si->dsi_obj, false, true); break;
	case DSL_PROP_USERREFS: dsl_prop_fmt_num(val, si->dsi_userrefs, false, true); break;
	case DSL_PROP_DEFER_DESTROY:
		val->dpv_num = si->dsi_defer_destroy;
		(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "%s",
		    si->dsi_defer_destroy ? "on" : "off");
		break;
	case DSL_PROP_COMPRESSRATIO:
	case DSL_PROP_REFCOMPRESSRATIO:
		dsl_prop_fmt_ratio(dp, val, si->dsi_lreferenced, si->dsi_preferenced, parsable);
		break;
	case DSL_PROP_LOGICALREFERENCED:
		if (!(spa_features(dp->dp_spa) & SPA_FEATURE_LOGICAL_SPACE))
			(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "-");
		else
			dsl_prop_fmt_num(val, si->dsi_lreferenced, true, parsable);
		break;
	case DSL_PROP_CLONES:
		(void) dsl_snapshot_clones(dp, si->dsi_name, val->dpv_str, sizeof (val->dpv_str));
		break;
	default:
		(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "-");
		break;
	}
}

/*
 * A property of a snapshot or bookmark: its own statistics, what it keeps
 * of its file system (inherited from there, as zfs shows it), "-" for
 * the others (dsl_prop_applies).  Called without dp_lock: the snapshot
 * calls take it.
 */
static int
dsl_prop_snap_get(dsl_pool_t *dp, const char *name, int prop, bool parsable,
    dsl_prop_val_t *val, char *err, size_t errlen)
{
	memset(val, 0, sizeof (*val));
	val->dpv_source = DSL_SRC_NONE;
	if (strchr(name, '#') != NULL)
		return (dsl_prop_bookmark_get(dp, name, prop, parsable, val, err, errlen));
	dsl_snap_info_t *si = tarn_alloc(sizeof (*si));
	int e = dsl_snapshot_info(dp, name, si, err, errlen);
	if (e == 0 && dsl_prop_applies(prop, name) && dsl_props[prop].dpd_type != DPT_STAT) {
		char fs[DSL_NAME_MAX];
		(void) snprintf(fs, sizeof (fs), "%.*s", (int)strcspn(name, "@"), name);
		e = dsl_prop_snap_inherited(dp, fs, prop, parsable, val);
	} else if (e == 0 && dsl_prop_applies(prop, name)) {
		dsl_prop_snap_stat(dp, si, prop, parsable, val);
	} else if (e == 0) {
		(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "-");
	}
	tarn_free(si);
	return (e);
}

typedef struct dsl_count_arg {
	dsl_pool_t *ca_dp;
	uint64_t    ca_fs, ca_snaps;
} dsl_count_arg_t;

static int
dsl_count_one(void *arg, const char *name, int depth)
{
	dsl_count_arg_t *ca = arg;
	dsl_snap_info_t *si = NULL;
	int n = 0;
	if (depth > 0)
		ca->ca_fs++;
	if (dsl_snapshot_list(ca->ca_dp, name, &si, &n, NULL, 0) == 0)
		ca->ca_snaps += (uint64_t)n;
	tarn_free(si);
	return (0);
}

/* A limit is set on name or one of its ancestors (the counts are kept below it). */
static bool
dsl_prop_limited(dsl_pool_t *dp, const char *name)
{
	char *cur = tarn_strdup(name);
	bool limited = false;
	for (;;) {
		limited = dsl_prop_numval(dp, cur, DSL_PROP_FILESYSTEM_LIMIT) != DSL_LIMIT_NONE ||
		    dsl_prop_numval(dp, cur, DSL_PROP_SNAPSHOT_LIMIT) != DSL_LIMIT_NONE;
		char *slash = strrchr(cur, '/');
		if (limited || slash == NULL)
			break;
		*slash = '\0';
	}
	tarn_free(cur);
	return (limited);
}

/*
 * origin, filesystem_count and snapshot_count of a file system, read
 * through calls that take dp_lock themselves.  The counts are those of
 * the subtree below it (its own snapshots too), shown as zfs shows them:
 * only where a limit is set at or above it, else "none" (default).
 */
static int
dsl_prop_fs_extra(dsl_pool_t *dp, const char *name, int prop, dsl_prop_val_t *val,
    char *err, size_t errlen)
{
	memset(val, 0, sizeof (*val));
	val->dpv_source = DSL_SRC_NONE;
	if (!dsl_dataset_exists(dp, name)) {
		if (err != NULL)
			(void) snprintf(err, errlen, "dataset does not exist");
		return (SET_ERROR(ENOENT));
	}
	if (prop == DSL_PROP_RECEIVE_RESUME_TOKEN) {
		if (dsl_recv_resume_token(dp, name, val->dpv_str, sizeof (val->dpv_str)) != 0)
			(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "-");
		return (0);
	}
	if (prop == DSL_PROP_ORIGIN) {
		int e = dsl_dataset_origin(dp, name, val->dpv_str, sizeof (val->dpv_str));
		if (e == 0 && val->dpv_str[0] == '\0')
			(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "-");
		return (e);
	}
	if (!dsl_prop_limited(dp, name)) {
		val->dpv_num = DSL_LIMIT_NONE;
		val->dpv_source = DSL_SRC_DEFAULT;
		(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "none");
		return (0);
	}
	dsl_count_arg_t ca = { dp, 0, 0 };
	int e = dsl_dataset_iter(dp, name, -1, dsl_count_one, &ca);
	dsl_prop_fmt_num(val, prop == DSL_PROP_FILESYSTEM_COUNT ? ca.ca_fs : ca.ca_snaps,
	    false, true);
	return (e);
}

/* The numeric value of prop on name, taking dp_lock (0 on errors). */
static uint64_t
dsl_prop_numval(dsl_pool_t *dp, const char *name, int prop)
{
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	uint64_t n = dsl_prop_num(dp, name, prop);
	tarn_mutex_unlock(&dp->dp_lock);
	return (n);
}

int
dsl_prop_get_locked(dsl_pool_t *dp, const char *name, int prop, bool parsable,
    dsl_prop_val_t *val, char *err, size_t errlen)
{
	memset(val, 0, sizeof (*val));
	uint64_t obj;
	int e = dsl_lookup(dp, name, &obj, err, errlen);
	if (e != 0)
		return (e);
	const dsl_prop_desc_t *d = &dsl_props[prop];
	char raw[DSL_MOUNTPOINT_MAX] = "";
	if (d->dpd_type == DPT_STAT)
		e = dsl_prop_stat(dp, name, prop, parsable, val);
	else
		e = dsl_prop_resolve(dp, name, prop, &val->dpv_num, raw, sizeof (raw), val);
	if (e != 0)
		return (e);
	if (d->dpd_once)
		val->dpv_source = DSL_SRC_NONE;         /* zfs: "-", fixed at creation */
	switch (d->dpd_type) {
	case DPT_INDEX:
		(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "%s",
		    dsl_index_name(prop, val->dpv_num));
		break;
	case DPT_STRING:
		dsl_mountpoint(name, val, raw, val->dpv_str, sizeof (val->dpv_str));
		break;
	case DPT_LIMIT:
		if (val->dpv_num == DSL_LIMIT_NONE)
			(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "none");
		else
			(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "%" PRIu64,
			    val->dpv_num);
		break;
	case DPT_SIZE:
	case DPT_STAT:
		/* statistics that print themselves (creation, ratios, "-") */
		if (d->dpd_type == DPT_STAT && (!dsl_prop_is_numeric(prop) ||
		    val->dpv_str[0] != '\0'))
			break;
		if (parsable)
			(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "%" PRIu64,
			    val->dpv_num);
		else if (val->dpv_num == 0 && d->dpd_type == DPT_SIZE)
			(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "%s",
			    prop == DSL_PROP_SPECIAL_SMALL_BLOCKS ? "0" : "none");
		else
			dsl_nicebytes(val->dpv_num, val->dpv_str, sizeof (val->dpv_str));
		break;
	}
	return (0);
}

int
dsl_prop_get(dsl_pool_t *dp, const char *name, int prop, bool parsable, dsl_prop_val_t *val,
    char *err, size_t errlen)
{
	if (prop < 0 || prop >= DSL_NUM_PROPS)
		return (SET_ERROR(EINVAL));
	if (strchr(name, '@') != NULL || strchr(name, '#') != NULL)
		return (dsl_prop_snap_get(dp, name, prop, parsable, val, err, errlen));
	if (prop == DSL_PROP_ORIGIN || prop == DSL_PROP_FILESYSTEM_COUNT ||
	    prop == DSL_PROP_SNAPSHOT_COUNT || prop == DSL_PROP_RECEIVE_RESUME_TOKEN)
		return (dsl_prop_fs_extra(dp, name, prop, val, err, errlen));
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	int e = dsl_prop_get_locked(dp, name, prop, parsable, val, err, errlen);
	tarn_mutex_unlock(&dp->dp_lock);
	return (e);
}

uint64_t
dsl_prop_num(dsl_pool_t *dp, const char *name, int prop)
{
	dsl_prop_val_t *v = tarn_alloc(sizeof (*v));
	uint64_t n = 0;
	if (dsl_prop_get_locked(dp, name, prop, true, v, NULL, 0) == 0)
		n = v->dpv_num;
	tarn_free(v);
	return (n);
}

void
dsl_prop_apply(dsl_pool_t *dp, const char *name, objset_t *os)
{
	dmu_objset_props_t p = { 0 };
	uint64_t ck = dsl_prop_num(dp, name, DSL_PROP_CHECKSUM);
	uint64_t cp = dsl_prop_num(dp, name, DSL_PROP_COMPRESSION);
	p.osp_checksum = (ck == ZIO_CHECKSUM_ON || ck == 0) ? ZIO_CHECKSUM_DEFAULT : (uint8_t)ck;
	if (cp == ZIO_COMPRESS_ON) {
		p.osp_compress = ZIO_COMPRESS_LZ4;
	} else if (cp >= DSL_COMPRESS_ZSTD_FAST_N(0) && cp <= DSL_COMPRESS_ZSTD_FAST_N(1000)) {
		p.osp_compress = ZIO_COMPRESS_ZSTD;
		p.osp_level = (int16_t)-MAX(1, (int)(cp - DSL_COMPRESS_ZSTD_FAST_N(0)));
	} else if (cp >= DSL_COMPRESS_ZSTD_N(1) && cp <= DSL_COMPRESS_ZSTD_N(19)) {
		p.osp_compress = ZIO_COMPRESS_ZSTD;
		p.osp_level = (int16_t)(cp - DSL_COMPRESS_ZSTD_N(0));
	} else if (cp >= DSL_COMPRESS_GZIP_N(1) && cp <= DSL_COMPRESS_GZIP_N(9)) {
		p.osp_compress = ZIO_COMPRESS_GZIP;
		p.osp_level = (int16_t)(cp - DSL_COMPRESS_GZIP_N(0));
	} else if (cp >= ZIO_COMPRESS_FUNCTIONS) {
		p.osp_compress = ZIO_COMPRESS_OFF;      /* a value from newer software */
	} else
		p.osp_compress = cp ? (uint8_t)cp : ZIO_COMPRESS_OFF;
	uint64_t copies = dsl_prop_num(dp, name, DSL_PROP_COPIES);
	p.osp_copies = (uint8_t)(copies >= 1 && copies <= 3 ? copies : 1);
	uint64_t pc = dsl_prop_num(dp, name, DSL_PROP_PRIMARYCACHE);
	uint64_t sc = dsl_prop_num(dp, name, DSL_PROP_SECONDARYCACHE);
	p.osp_primarycache = (uint8_t)(pc <= DMU_CACHE_NONE ? pc : DMU_CACHE_ALL);
	p.osp_secondarycache = (uint8_t)(sc <= DMU_CACHE_NONE ? sc : DMU_CACHE_ALL);
	uint64_t small = dsl_prop_num(dp, name, DSL_PROP_SPECIAL_SMALL_BLOCKS);
	p.osp_special_small = (uint32_t)(small <= MiB ? small : 0);
	uint64_t lb = dsl_prop_num(dp, name, DSL_PROP_LOGBIAS);
	p.osp_logbias = (uint8_t)(lb == DMU_LOGBIAS_THROUGHPUT ? lb : DMU_LOGBIAS_LATENCY);
	dmu_objset_set_props(os, &p);
}

/* ---- user properties ---- */

/* The object of snapshot name ("fs@snap"): ENOENT "dataset does not exist". */
static int
dsl_prop_snap_obj(dsl_pool_t *dp, const char *name, uint64_t *objp, char *err, size_t errlen)
{
	dsl_snap_info_t *si = tarn_alloc(sizeof (*si));
	int e = dsl_snapshot_info(dp, name, si, err, errlen);
	*objp = si->dsi_obj;
	tarn_free(si);
	return (e);
}

bool
dsl_prop_user_name(const char *name)
{
	return (strchr(name, ':') != NULL);
}

int
dsl_prop_user_check(const char *name, const char *value, char *err, size_t errlen)
{
	bool ok = dsl_prop_user_name(name) && name[0] != '-';
	for (const char *c = name; ok && *c != '\0'; c++)
		ok = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
		    strchr("-_.:", *c) != NULL;
	if (!ok) {
		(void) snprintf(err, errlen, "invalid property '%s'", name);
		return (SET_ERROR(EINVAL));
	}
	if (strlen(name) >= ZAP_MAXNAMELEN) {
		(void) snprintf(err, errlen, "property name '%.40s...' is too long", name);
		return (SET_ERROR(EINVAL));
	}
	if (value != NULL && strlen(value) >= DSL_USERPROP_MAX) {
		(void) snprintf(err, errlen, "'%s' is too long (%d bytes at most)", name,
		    DSL_USERPROP_MAX - 1);
		return (SET_ERROR(EINVAL));
	}
	return (0);
}

/* The string stored under prop in dataset object obj (ENOENT: none). */
static int
dsl_prop_user_local(dsl_pool_t *dp, uint64_t obj, const char *prop, char *str, size_t len)
{
	int isz;
	uint64_t n;
	int e = zap_length(dp->dp_mos, obj, prop, &isz, &n);
	if (e == 0 && (isz != 1 || n == 0 || n > len))
		e = SET_ERROR(EIO);
	if (e == 0)
		e = zap_lookup(dp->dp_mos, obj, prop, 1, n, str);
	if (e == 0)
		str[n - 1] = '\0';
	return (e);
}

int
dsl_prop_user_get(dsl_pool_t *dp, const char *name, const char *prop, dsl_prop_val_t *val,
    char *err, size_t errlen)
{
	memset(val, 0, sizeof (*val));
	int e = dsl_prop_user_check(prop, NULL, err, errlen);
	if (e != 0)
		return (e);
	uint64_t sobj = 0;
	if (strchr(name, '@') != NULL && (e = dsl_prop_snap_obj(dp, name, &sobj, err,
	    errlen)) != 0)
		return (e);
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	char *cur = tarn_strdup(name);
	cur[strcspn(cur, "@")] = '\0';
	val->dpv_source = DSL_SRC_NONE;
	(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "-");
	bool snap = strchr(name, '@') != NULL;
	if (snap && dsl_prop_user_local(dp, sobj, prop, val->dpv_str, DSL_USERPROP_MAX) == 0) {
		val->dpv_source = DSL_SRC_LOCAL;
		(void) snprintf(val->dpv_setpoint, sizeof (val->dpv_setpoint), "%s", name);
		goto out;
	}
	for (bool first = !snap; ; first = false) {
		uint64_t obj;
		e = dsl_lookup(dp, cur, &obj, first ? err : NULL, first ? errlen : 0);
		if (e != 0)
			break;
		e = dsl_prop_user_local(dp, obj, prop, val->dpv_str, DSL_USERPROP_MAX);
		if (e == 0) {
			val->dpv_source = first ? DSL_SRC_LOCAL : DSL_SRC_INHERITED;
			(void) snprintf(val->dpv_setpoint, sizeof (val->dpv_setpoint), "%s", cur);
			break;
		}
		char *slash = strrchr(cur, '/');
		if (e != ENOENT || slash == NULL)
			break;
		*slash = '\0';
	}
	if (e == ENOENT) {
		e = 0;
		(void) snprintf(val->dpv_str, sizeof (val->dpv_str), "-");
	}
out:
	tarn_free(cur);
	tarn_mutex_unlock(&dp->dp_lock);
	return (e);
}

static int
dsl_str_cmp(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

int
dsl_prop_user_iter(dsl_pool_t *dp, const char *name, dsl_prop_user_fn_t fn, void *arg)
{
	tarn_array_t all = TARN_ARRAY_INIT(char *);
	uint64_t sobj = 0;
	if (strchr(name, '#') != NULL)
		return (0);
	if (strchr(name, '@') != NULL && dsl_prop_snap_obj(dp, name, &sobj, NULL, 0) != 0)
		return (0);
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	char *cur = tarn_strdup(name);
	cur[strcspn(cur, "@")] = '\0';
	int e;
	for (bool first = true; ; first = false) {
		uint64_t obj;
		if (first && strchr(name, '@') != NULL)
			obj = sobj;     /* the snapshot's own, then its file system's */
		else if ((e = dsl_lookup(dp, cur, &obj, NULL, 0)) != 0)
			break;
		zap_cursor_t zc;
		zap_attribute_t za;
		zap_cursor_init(&zc, dp->dp_mos, obj, 0);
		while ((e = zap_cursor_retrieve(&zc, &za)) == 0) {
			if (dsl_prop_user_name(za.za_name))
				TARN_ARRAY_APPEND(&all, char *, tarn_strdup(za.za_name));
			zap_cursor_advance(&zc);
		}
		zap_cursor_fini(&zc);
		if (first && strchr(name, '@') != NULL && e == ENOENT)
			continue;
		char *slash = strrchr(cur, '/');
		if (e != ENOENT || slash == NULL)
			break;
		*slash = '\0';
	}
	tarn_free(cur);
	tarn_mutex_unlock(&dp->dp_lock);
	if (e == ENOENT)
		e = 0;
	tarn_array_sort(&all, dsl_str_cmp);
	size_t n;
	char **names = tarn_array_steal(&all, &n);
	for (size_t i = 0; i < n; i++)
		if (e == 0 && (i == 0 || strcmp(names[i], names[i - 1]) != 0))
			fn(arg, names[i]);
	for (size_t i = 0; i < n; i++)
		tarn_free(names[i]);
	tarn_free(names);
	return (e);
}

int
dsl_prop_user_store(dsl_pool_t *dp, uint64_t obj, const char *prop, const char *value,
    dmu_tx_t *tx)
{
	return (zap_update(dp->dp_mos, obj, prop, 1, strlen(value) + 1, value, tx));
}

/* ---- set and inherit ---- */

/* Quota and reservation checks against the dataset's space (lock held). */
static int
dsl_prop_space_check(dsl_pool_t *dp, const char *name, int prop, uint64_t num, char *err,
    size_t errlen)
{
	if (num == 0)
		return (0);
	dsl_space_t s = { 0 };
	int e = dsl_space_locked(dp, name, &s);
	if (e != 0)
		return (e);
	uint64_t obj, res = 0;
	(void) dsl_lookup(dp, name, &obj, NULL, 0);
	(void) dsl_prop_local(dp, obj, DSL_PROP_RESERVATION, &res, NULL, 0);
	if ((prop == DSL_PROP_QUOTA && (num < s.ds_used || num < res)) ||
	    (prop == DSL_PROP_REFQUOTA && num < s.ds_referenced)) {
		(void) snprintf(err, errlen, "size is less than current used or reserved space");
		return (SET_ERROR(EINVAL));
	}
	if (prop == DSL_PROP_RESERVATION || prop == DSL_PROP_REFRESERVATION) {
		uint64_t quota = 0;
		(void) dsl_prop_local(dp, obj, DSL_PROP_QUOTA, &quota, NULL, 0);
		/*
		 * What the dataset holds now; of its available space, what it
		 * holds unused already (its own reservation's or
		 * refreservation's room) cannot pay for more.
		 */
		bool r = prop == DSL_PROP_RESERVATION;
		uint64_t have = r ? MAX(res, s.ds_used) : s.ds_referenced + s.ds_refreserved;
		uint64_t own = r ? have - s.ds_used : s.ds_refreserved;
		uint64_t avail = s.ds_available > own ? s.ds_available - own : 0;
		if (quota != 0 && num > quota) {
			(void) snprintf(err, errlen, "size is greater than the quota");
			return (SET_ERROR(EINVAL));
		}
		if (num > have && num - have > avail) {
			(void) snprintf(err, errlen, "size is greater than available space");
			return (SET_ERROR(ENOSPC));
		}
	}
	return (0);
}

/*
 * Properties the object set applies (dsl_prop_apply): write properties,
 * and what the caches keep of it.
 */
static bool
dsl_prop_is_write(int prop)
{
	return (prop == DSL_PROP_COMPRESSION || prop == DSL_PROP_CHECKSUM ||
	    prop == DSL_PROP_COPIES || prop == DSL_PROP_PRIMARYCACHE ||
	    prop == DSL_PROP_SECONDARYCACHE || prop == DSL_PROP_SPECIAL_SMALL_BLOCKS ||
	    prop == DSL_PROP_LOGBIAS);
}

static int
dsl_prop_reapply_one(void *arg, const char *name, int depth)
{
	objset_t *os;
	(void) dsl_dataset_objset(arg, name, &os);     /* applies the properties */
	return (0);
}

/*
 * After a change of a write property on name: its object set and its
 * descendants' (which may inherit it) write with the new value from now
 * on, mounted or not, as on zfs.  Call without dp_lock.
 */
static void
dsl_prop_reapply(dsl_pool_t *dp, const char *name, int prop)
{
	if (prop >= 0 && dsl_prop_is_write(prop) && !dsl_readonly(dp))
		(void) dsl_dataset_iter(dp, name, -1, dsl_prop_reapply_one, dp);
}

static int dsl_prop_set_impl(dsl_pool_t *dp, const char *name, const char *propname,
    const char *value, bool creating, char *err, size_t errlen);

/*
 * zfs set / inherit on a snapshot: user properties only (kept in the
 * snapshot's own object, dsi_obj, as a file system keeps them in its
 * dataset object); value NULL removes one.  Native ones are refused as
 * zfs refuses them, and bookmarks have none.
 */
static int
dsl_prop_snap_set(dsl_pool_t *dp, const char *name, int prop, const char *propname,
    const char *value, char *err, size_t errlen)
{
	if (prop >= 0 || strchr(name, '#') != NULL) {
		(void) snprintf(err, errlen, "this property can not be modified for %s",
		    strchr(name, '#') != NULL ? "bookmarks" : "snapshots");
		return (SET_ERROR(EINVAL));
	}
	uint64_t obj;
	int e = dsl_prop_user_check(propname, value, err, errlen);
	if (e == 0)
		e = dsl_prop_snap_obj(dp, name, &obj, err, errlen);
	if (e != 0)
		return (e);
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	dmu_tx_t *tx;
	e = dsl_writable(dp, err, errlen);
	if (e == 0 && (e = dsl_tx_begin(dp, false, &tx)) == 0) {
		if (value != NULL)
			e = dsl_prop_user_store(dp, obj, propname, value, tx);
		else if ((e = zap_remove(dp->dp_mos, obj, propname, tx)) == ENOENT)
			e = 0;
		uint64_t txg = dmu_tx_get_txg(tx);
		int e2 = dsl_tx_end(dp, tx);
		e = e ? e : e2;
		if (e == 0)
			dsl_history(dp, txg, value != NULL ? "set" : "inherit", name, obj, "%s%s%s",
			    propname, value != NULL ? "=" : "", value != NULL ? value : "");
	}
	tarn_mutex_unlock(&dp->dp_lock);
	return (e);
}

int
dsl_prop_set(dsl_pool_t *dp, const char *name, const char *propname, const char *value,
    char *err, size_t errlen)
{
	return (dsl_prop_set_impl(dp, name, propname, value, false, err, errlen));
}

int
dsl_prop_set_create(dsl_pool_t *dp, const char *name, const char *propname,
    const char *value, char *err, size_t errlen)
{
	return (dsl_prop_set_impl(dp, name, propname, value, true, err, errlen));
}

static int
dsl_prop_set_impl(dsl_pool_t *dp, const char *name, const char *propname, const char *value,
    bool creating, char *err, size_t errlen)
{
	err[0] = '\0';
	int prop = dsl_prop_lookup(propname);
	bool user = prop < 0 && dsl_prop_user_name(propname);
	if (prop < 0 && !user) {
		(void) snprintf(err, errlen, "invalid property '%s'", propname);
		return (SET_ERROR(EINVAL));
	}
	if (!user && dsl_props[prop].dpd_once && !creating) {
		(void) snprintf(err, errlen, "'%s' is readonly (set it at creation: "
		    "create -o %s=...)", dsl_props[prop].dpd_name, dsl_props[prop].dpd_name);
		return (SET_ERROR(EINVAL));
	}
	if (strchr(name, '@') != NULL || strchr(name, '#') != NULL)
		return (dsl_prop_snap_set(dp, name, prop, propname, value, err, errlen));
	uint64_t num = 0;
	char str[DSL_MOUNTPOINT_MAX];
	int e = user ? dsl_prop_user_check(propname, value, err, errlen) :
	    dsl_prop_parse(prop, value, &num, str, sizeof (str), err, errlen);
	if (e != 0)
		return (e);
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	uint64_t obj;
	e = dsl_lookup(dp, name, &obj, err, errlen);
	if (e == 0)
		e = dsl_writable(dp, err, errlen);
	if (e == 0 && !user)
		e = dsl_prop_pool_check(dp, prop, num, err, errlen);
	if (e == 0 && !user)
		e = dsl_prop_space_check(dp, name, prop, num, err, errlen);
	dmu_tx_t *tx;
	if (e == 0 && (e = dsl_tx_begin(dp, false, &tx)) == 0) {
		e = user ? dsl_prop_user_store(dp, obj, propname, value, tx) :
		    dsl_prop_store(dp, obj, prop, num, str, tx);
		uint64_t txg = dmu_tx_get_txg(tx);
		int e2 = dsl_tx_end(dp, tx);
		e = e ? e : e2;
		/* as zfs logs it: numbers as stored, strings as given */
		if (e == 0 && (user || dsl_props[prop].dpd_type == DPT_STRING))
			dsl_history(dp, txg, "set", name, obj, "%s=%s", user ? propname :
			    dsl_props[prop].dpd_name, user ? value : str);
		else if (e == 0)
			dsl_history(dp, txg, "set", name, obj, "%s=%" PRIu64,
			    dsl_props[prop].dpd_name, num);
	}
	tarn_mutex_unlock(&dp->dp_lock);
	if (e == 0 && !user)
		dsl_prop_reapply(dp, name, prop);
	return (e);
}

int
dsl_prop_inherit(dsl_pool_t *dp, const char *name, const char *propname, char *err,
    size_t errlen)
{
	err[0] = '\0';
	int prop = dsl_prop_lookup(propname);
	bool user = prop < 0 && dsl_prop_user_name(propname);
	if (prop < 0 && !user) {
		(void) snprintf(err, errlen, "invalid property '%s'", propname);
		return (SET_ERROR(EINVAL));
	}
	if (strchr(name, '@') != NULL || strchr(name, '#') != NULL)
		return (dsl_prop_snap_set(dp, name, prop, propname, NULL, err, errlen));
	if (!user && (dsl_prop_readonly(prop) || dsl_props[prop].dpd_once)) {
		(void) snprintf(err, errlen, "'%s' property is read-only", dsl_prop_name(prop));
		return (SET_ERROR(EINVAL));
	}
	if (!user && (prop == DSL_PROP_QUOTA || prop == DSL_PROP_RESERVATION ||
	    prop == DSL_PROP_REFQUOTA || prop == DSL_PROP_REFRESERVATION)) {
		(void) snprintf(err, errlen, "'%s' property cannot be inherited; "
		    "use 'zfs set %s=none' to clear", dsl_prop_name(prop), dsl_prop_name(prop));
		return (SET_ERROR(EINVAL));
	}
	tarn_mutex_lock(&dp->dp_lock, DSL_POOL);
	uint64_t obj;
	int e = dsl_lookup(dp, name, &obj, err, errlen);
	if (e == 0)
		e = dsl_writable(dp, err, errlen);
	dmu_tx_t *tx;
	if (e == 0 && (e = dsl_tx_begin(dp, false, &tx)) == 0) {
		e = zap_remove(dp->dp_mos, obj, user ? propname : dsl_prop_name(prop), tx);
		bool had = e == 0;
		if (e == ENOENT)
			e = 0;
		uint64_t txg = dmu_tx_get_txg(tx);
		int e2 = dsl_tx_end(dp, tx);
		e = e ? e : e2;
		if (e == 0 && had)
			dsl_history(dp, txg, "inherit", name, obj, "%s",
			    user ? propname : dsl_prop_name(prop));
	}
	tarn_mutex_unlock(&dp->dp_lock);
	if (e == 0 && !user)
		dsl_prop_reapply(dp, name, prop);
	return (e);
}
