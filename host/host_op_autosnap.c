/*
 * host_op_autosnap.c — scheduled snapshots: one pass of `tarn fs
 * autosnap` (cmd/tarn/fs_autosnap.c), which contrib/systemd's timer runs
 * every 15 minutes.
 *
 *   fs.autosnap  now?: epoch seconds (default: the clock), dryrun,
 *                config?: the text of the retention file, config_name?
 *                    taken: [snapshot...], destroyed: [snapshot...],
 *                    held: [snapshot...]
 *
 * Theory.  Every file system of every imported pool is looked at.  Five
 * labels, each with its period: frequently (15 minutes), hourly, daily,
 * weekly (from Monday 00:00) and monthly (from the 1st, 00:00), all in
 * UTC, so that a pass means the same in the daemon and in any client and
 * no daylight-saving hour is taken twice or skipped.  A label's snapshots
 * are named "autosnap_YYYY-MM-DD_HH:MM:SS_LABEL" (sanoid's form) with the
 * pass's time, and their age is read from that name, not from the
 * snapshot's creation time: the names are what this policy wrote, and
 * the test clock (now) moves them as it moves the pass.
 *
 * Which labels apply to a file system: zfs-auto-snapshot's user
 * properties.  com.sun:auto-snapshot:LABEL (frequent, hourly, daily,
 * weekly, monthly; "frequently" is taken too), when set here or above,
 * decides for that label; else com.sun:auto-snapshot.  The value "false"
 * (any case) leaves the label alone, neither taken nor pruned; anything
 * else, or no value, manages it.
 *
 * Due: a label is due when its newest autosnap on the file system is
 * older than the start of the label's current period (frequently: the
 * quarter hour, hourly: minute 0, daily: 00:00, ...), or there is none.
 * A timer at :00, :15, :30, :45 thus takes a frequent snapshot each time
 * and an hourly one at minute 0; a pass after the machine was off takes
 * each label once, at once.
 *
 * Retention: how many of each label to keep, from the config text (the
 * command line reads the file; the syntax is parsed here, so the labels,
 * their defaults and the policy live in one place):
 *
 *	# comment
 *	frequently = 4          (the defaults: 4, 24, 31, 8, 12)
 *	hourly = 24
 *	[tank/home]             this file system and those below it
 *	daily = 62
 *
 * A key in a section overrides for that file system and its descendants;
 * the nearest section that sets a label wins, then the top, then the
 * default.  0 takes none of that label and destroys the ones there are.
 * After the take, the oldest autosnaps of a label beyond its count are
 * destroyed (the new one counts); other snapshots are never touched; a
 * held one (zfs hold) is skipped with a note ("held"), and no younger
 * one is destroyed in its place.
 *
 * Atomicity: the snapshots due in a pool are taken in one
 * dsl_snapshot_create call, one txg, all or nothing, so that every file
 * system of the pool has its hourly of the same instant.  dsl (like zfs)
 * refuses two snapshots of one file system in one call, so when several
 * labels are due at once (midnight on the 1st: frequently, hourly,
 * daily and monthly) the pass makes one call per label rank: the first
 * due label of each file system, then the second...; at most five, and
 * one in the usual quarter hour.  A call that fails is retried one
 * snapshot at a time, so one bad file system is reported ("cannot
 * snapshot 'x': ...") and the rest of the pass goes on; the same for
 * the destroys, one dsl_snapshot_destroy call per pool.  dryrun: the
 * pools are opened read-only and nothing is called; taken and destroyed
 * say what would be.
 */
#include "host_impl.h"
#include "tarn_array.h"

#include <time.h>
#include <strings.h>

#define AS_NLABELS  5
#define AS_PREFIX   "autosnap_"
#define AS_STAMPLEN 19      /* "2026-12-02_21:45:00" */
#define AS_MAXKEEP  1000000
#define AS_PROP     "com.sun:auto-snapshot"

typedef struct as_label {
	const char *al_name;     /* in snapshot names and the config: "frequently" */
	const char *al_prop;     /* zfs-auto-snapshot's: com.sun:auto-snapshot:frequent */
	int         al_default;  /* kept without a config value (zfs-auto-snapshot's) */
} as_label_t;

static const as_label_t as_labels[AS_NLABELS] = {
	{ "frequently", "frequent", 4 },
	{ "hourly", "hourly", 24 },
	{ "daily", "daily", 31 },
	{ "weekly", "weekly", 8 },
	{ "monthly", "monthly", 12 },
};

/* A config section: counts for a file system and those below it (-1: unset). */
typedef struct as_section {
	char as_name[DSL_NAME_MAX];
	int  as_keep[AS_NLABELS];
} as_section_t;

typedef struct as_policy {
	int          ap_keep[AS_NLABELS];   /* the top of the file (-1: unset) */
	tarn_array_t ap_sections;           /* as_section_t */
} as_policy_t;

/* An autosnap of a file system. */
typedef struct as_snap {
	char     sn_name[DSL_NAME_MAX];     /* fs@autosnap_... */
	int64_t  sn_ts;                     /* from the name */
	uint64_t sn_txg;
	uint64_t sn_refs;                   /* holds */
} as_snap_t;

typedef struct as_fs {
	char         af_name[DSL_NAME_MAX];
	bool         af_on[AS_NLABELS];     /* the properties let the label be managed */
	int          af_keep[AS_NLABELS];
	bool         af_due[AS_NLABELS];
	bool         af_took[AS_NLABELS];   /* taken (dry run: would be) */
	tarn_array_t af_snaps[AS_NLABELS];  /* as_snap_t, oldest first */
} as_fs_t;

typedef struct as_pass {
	dsl_pool_t        *ps_dp;
	const as_policy_t *ps_pol;
	int64_t            ps_now;
	bool               ps_dryrun;
	char               ps_stamp[AS_STAMPLEN + 1];
	tarn_array_t       ps_fs;           /* as_fs_t, of the pool being done */
	json_object       *ps_taken, *ps_destroyed, *ps_held;
	bool               ps_changed;      /* something taken or destroyed in this pool */
	int                ps_ret;
} as_pass_t;

static int
as_label_find(const char *s)
{
	for (int l = 0; l < AS_NLABELS; l++)
		if (strcmp(as_labels[l].al_name, s) == 0)
			return (l);
	return (-1);
}

/* ---- the config text ---- */

static char *
as_trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return (s);
}

/* A "[name]" line: a new section.  0, or EINVAL with the reason in err. */
static int
as_parse_section(as_policy_t *pol, char *line, char *err, size_t errlen)
{
	size_t n = strlen(line);
	if (line[n - 1] != ']') {
		(void) snprintf(err, errlen, "missing ']'");
		return (EINVAL);
	}
	line[n - 1] = '\0';
	char *name = as_trim(line + 1), why[256];
	if (strpbrk(name, "@#") != NULL || dsl_name_validate(name, why, sizeof (why)) != 0) {
		(void) snprintf(err, errlen, "'%s' is not a file system name", name);
		return (EINVAL);
	}
	as_section_t *s = tarn_array_push(&pol->ap_sections);
	(void) snprintf(s->as_name, sizeof (s->as_name), "%s", name);
	for (int l = 0; l < AS_NLABELS; l++)
		s->as_keep[l] = -1;
	return (0);
}

/* A "key = value" line into keep.  0, or EINVAL with the reason in err. */
static int
as_parse_setting(int *keep, char *line, char *err, size_t errlen)
{
	char *eq = strchr(line, '=');
	if (eq == NULL) {
		(void) snprintf(err, errlen, "expected 'label = count' or '[filesystem]'");
		return (EINVAL);
	}
	*eq = '\0';
	char *key = as_trim(line), *val = as_trim(eq + 1), *end;
	int l = as_label_find(key);
	if (l < 0) {
		(void) snprintf(err, errlen, "unknown key '%.64s' (frequently, hourly, daily, "
		    "weekly or monthly)", key);
		return (EINVAL);
	}
	errno = 0;
	long v = *val >= '0' && *val <= '9' ? strtol(val, &end, 10) : -1;
	if (v < 0 || errno != 0 || *end != '\0' || v > AS_MAXKEEP) {
		(void) snprintf(err, errlen, "'%.64s' is not a count of snapshots (0 to %d)",
		    val, AS_MAXKEEP);
		return (EINVAL);
	}
	keep[l] = (int)v;
	return (0);
}

/* Parse text into pol; a failure reported as "cannot read 'NAME': line N: ...". */
static int
as_parse(const char *text, const char *name, as_policy_t *pol)
{
	char *copy = tarn_strdup(text), err[160];
	int lineno = 0, e = 0;
	bool more = true;

	for (char *p = copy; more && e == 0; lineno++) {
		char *nl = strchr(p, '\n');
		more = nl != NULL;
		if (more)
			*nl = '\0';
		char *hash = strchr(p, '#');
		if (hash != NULL)
			*hash = '\0';
		char *line = as_trim(p);
		p = more ? nl + 1 : p;
		if (*line == '\0')
			continue;
		if (*line == '[') {
			e = as_parse_section(pol, line, err, sizeof (err));
		} else {
			size_t ns = tarn_array_len(&pol->ap_sections);
			int *keep = ns == 0 ? pol->ap_keep :
			    ((as_section_t *)tarn_array_get(&pol->ap_sections, ns - 1))->as_keep;
			e = as_parse_setting(keep, line, err, sizeof (err));
		}
	}
	tarn_free(copy);
	if (e == 0)
		return (0);
	char msg[200];
	(void) snprintf(msg, sizeof (msg), "line %d: %s", lineno, err);
	return (host_report("read", name, e, msg));
}

/* How many of label l to keep on file system fs. */
static int
as_keep(const as_policy_t *pol, const char *fs, int l)
{
	size_t best = 0;
	int keep = pol->ap_keep[l] >= 0 ? pol->ap_keep[l] : as_labels[l].al_default;

	for (size_t i = 0; i < tarn_array_len(&pol->ap_sections); i++) {
		const as_section_t *s = tarn_array_get(&pol->ap_sections, i);
		size_t n = strlen(s->as_name);
		if (s->as_keep[l] < 0 || n < best || strncmp(fs, s->as_name, n) != 0 ||
		    (fs[n] != '\0' && fs[n] != '/'))
			continue;
		best = n;
		keep = s->as_keep[l];
	}
	return (keep);
}

/* ---- time ---- */

static int64_t
as_mod(int64_t a, int64_t b)
{
	int64_t m = a % b;
	return (m < 0 ? m + b : m);
}

/* The start of label l's period that holds now (UTC). */
static int64_t
as_period_start(int l, int64_t now)
{
	int64_t day = (now - as_mod(now, 86400)) / 86400;
	struct tm tm;
	time_t t = (time_t)now;

	switch (l) {
	case 0:
		return (now - as_mod(now, 15 * 60));
	case 1:
		return (now - as_mod(now, 3600));
	case 2:
		return (day * 86400);
	case 3:
		return ((day - as_mod(day + 3, 7)) * 86400);   /* 1970-01-01 was a Thursday */
	default:
		(void) gmtime_r(&t, &tm);
		tm.tm_mday = 1;
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		return ((int64_t)timegm(&tm));
	}
}

/* "YYYY-MM-DD_HH:MM:SS" of a time (UTC). */
static void
as_stamp(int64_t now, char buf[AS_STAMPLEN + 1])
{
	struct tm tm;
	time_t t = (time_t)now;
	(void) gmtime_r(&t, &tm);
	(void) strftime(buf, AS_STAMPLEN + 1, "%Y-%m-%d_%H:%M:%S", &tm);
}

/* The time and label of an autosnap's name (after the '@'); false for any other name. */
static bool
as_snap_parse(const char *snap, int64_t *ts, int *label)
{
	static const char form[] = "dddd-dd-dd_dd:dd:dd";
	const char *s = snap + strlen(AS_PREFIX);
	if (strncmp(snap, AS_PREFIX, strlen(AS_PREFIX)) != 0 || strlen(s) < AS_STAMPLEN + 2)
		return (false);
	for (int i = 0; i < AS_STAMPLEN; i++)
		if (form[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != form[i])
			return (false);
	if (s[AS_STAMPLEN] != '_' || (*label = as_label_find(s + AS_STAMPLEN + 1)) < 0)
		return (false);
	struct tm tm = { 0 };
	if (sscanf(s, "%4d-%2d-%2d_%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
	    &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6 || tm.tm_mon < 1 || tm.tm_mon > 12 ||
	    tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
	    tm.tm_sec > 60)
		return (false);
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*ts = (int64_t)timegm(&tm);
	return (true);
}

/* ---- looking at the file systems ---- */

/* Does the file system's com.sun:auto-snapshot[:label] leave label l alone? */
static bool
as_excluded(dsl_pool_t *dp, const char *fs, int l)
{
	dsl_prop_val_t *v = tarn_alloc(sizeof (*v));    /* 8 KiB: not on the stack */
	const char *names[3] = { as_labels[l].al_prop, as_labels[l].al_name, NULL };
	char prop[64], err[256];
	bool off = false;

	for (int i = 0; i < 3; i++) {
		if (i < 2)
			(void) snprintf(prop, sizeof (prop), AS_PROP ":%s", names[i]);
		else
			(void) snprintf(prop, sizeof (prop), AS_PROP);
		if (dsl_prop_user_get(dp, fs, prop, v, err, sizeof (err)) == 0 &&
		    v->dpv_source != DSL_SRC_NONE) {
			off = strcasecmp(v->dpv_str, "false") == 0;
			break;
		}
	}
	tarn_free(v);
	return (off);
}

static int
as_snap_cmp(const void *a, const void *b)
{
	const as_snap_t *x = a, *y = b;
	if (x->sn_ts != y->sn_ts)
		return (x->sn_ts < y->sn_ts ? -1 : 1);
	if (x->sn_txg != y->sn_txg)
		return (x->sn_txg < y->sn_txg ? -1 : 1);
	return (strcmp(x->sn_name, y->sn_name));
}

/* Sort the autosnaps of af by label; 0 or the failure (reported). */
static int
as_fs_snaps(as_pass_t *p, as_fs_t *af)
{
	dsl_snap_info_t *si;
	char err[512];
	int n;

	int e = dsl_snapshot_list(p->ps_dp, af->af_name, &si, &n, err, sizeof (err));
	if (e != 0)
		return (host_report("list snapshots of", af->af_name, e, err));
	for (int i = 0; i < n; i++) {
		const char *at = strchr(si[i].dsi_name, '@');
		int64_t ts;
		int l;
		if (at == NULL || !as_snap_parse(at + 1, &ts, &l) || !af->af_on[l])
			continue;
		as_snap_t *s = tarn_array_push(&af->af_snaps[l]);
		(void) snprintf(s->sn_name, sizeof (s->sn_name), "%s", si[i].dsi_name);
		s->sn_ts = ts;
		s->sn_txg = si[i].dsi_txg;
		s->sn_refs = si[i].dsi_userrefs;
	}
	tarn_free(si);
	for (int l = 0; l < AS_NLABELS; l++)
		tarn_array_sort(&af->af_snaps[l], as_snap_cmp);
	return (0);
}

/* dsl_dataset_iter: what is due and kept on one file system. */
static int
as_scan_one(void *arg, const char *name, int depth)
{
	as_pass_t *p = arg;
	bool any = false;

	if (strpbrk(name, "@#") != NULL)
		return (0);             /* file systems only */
	as_fs_t *af = tarn_array_push(&p->ps_fs);
	(void) snprintf(af->af_name, sizeof (af->af_name), "%s", name);
	for (int l = 0; l < AS_NLABELS; l++) {
		tarn_array_init(&af->af_snaps[l], sizeof (as_snap_t));
		af->af_on[l] = !as_excluded(p->ps_dp, name, l);
		af->af_keep[l] = as_keep(p->ps_pol, name, l);
		any |= af->af_on[l];
	}
	if (!any)
		return (0);
	if (as_fs_snaps(p, af) != 0) {
		for (int l = 0; l < AS_NLABELS; l++)
			af->af_on[l] = false;   /* unknown: leave it alone */
		p->ps_ret = HOST_FAILED;
		return (0);
	}
	for (int l = 0; l < AS_NLABELS; l++) {
		size_t n = tarn_array_len(&af->af_snaps[l]);
		const as_snap_t *newest = n > 0 ? tarn_array_get(&af->af_snaps[l], n - 1) : NULL;
		af->af_due[l] = af->af_on[l] && af->af_keep[l] > 0 &&
		    (newest == NULL || newest->sn_ts < as_period_start(l, p->ps_now));
	}
	return (0);
}

/* ---- taking ---- */

/* One dsl_snapshot_create of names (file systems' and labels' in fss/ls). */
static void
as_create(as_pass_t *p, char **names, as_fs_t **fss, int *ls, int n)
{
	char err[512];
	if (!p->ps_dryrun)
		host_snap_flush((const char *const *)names, n, false);
	int e = p->ps_dryrun ? 0 : dsl_snapshot_create(p->ps_dp, (const char *const *)names,
	    n, false, NULL, 0, err, sizeof (err));

	for (int i = 0; i < n; i++) {
		int ei = e;
		if (e != 0 && n > 1)        /* find which one failed: one at a time */
			ei = dsl_snapshot_create(p->ps_dp, (const char *const *)&names[i], 1,
			    false, NULL, 0, err, sizeof (err));
		if (ei != 0) {
			p->ps_ret = host_report("snapshot", names[i], ei, err);
			continue;
		}
		fss[i]->af_took[ls[i]] = true;
		p->ps_changed |= !p->ps_dryrun;
	}
}

/* The snapshots taken, into the result: by file system, then label. */
static void
as_taken_json(as_pass_t *p)
{
	char name[DSL_NAME_MAX + 64];

	for (size_t i = 0; i < tarn_array_len(&p->ps_fs); i++) {
		as_fs_t *af = tarn_array_get(&p->ps_fs, i);
		for (int l = 0; l < AS_NLABELS; l++) {
			if (!af->af_took[l])
				continue;
			(void) snprintf(name, sizeof (name), "%s@" AS_PREFIX "%s_%s", af->af_name,
			    p->ps_stamp, as_labels[l].al_name);
			json_object_array_add(p->ps_taken, json_object_new_string(name));
		}
	}
}

/* Take the due snapshots of the pool: one call per rank of due label. */
static void
as_take(as_pass_t *p)
{
	size_t nfs = tarn_array_len(&p->ps_fs);
	char **names = tarn_alloc(sizeof (char *) * (nfs + 1));
	as_fs_t **fss = tarn_alloc(sizeof (as_fs_t *) * (nfs + 1));
	int *ls = tarn_alloc(sizeof (int) * (nfs + 1));

	for (int rank = 0; rank < AS_NLABELS; rank++) {
		int n = 0;
		for (size_t i = 0; i < nfs; i++) {
			as_fs_t *af = tarn_array_get(&p->ps_fs, i);
			for (int l = 0, r = 0; l < AS_NLABELS; l++) {
				if (!af->af_due[l] || r++ != rank)
					continue;
				names[n] = tarn_alloc(DSL_NAME_MAX + 64);
				(void) snprintf(names[n], DSL_NAME_MAX + 64, "%s@" AS_PREFIX "%s_%s",
				    af->af_name, p->ps_stamp, as_labels[l].al_name);
				if (strlen(names[n]) >= DSL_NAME_MAX) {
					p->ps_ret = host_report("snapshot", names[n], ENAMETOOLONG,
					    "dataset name is too long");
					tarn_free(names[n]);
					continue;
				}
				fss[n] = af;
				ls[n++] = l;
			}
		}
		if (n > 0)
			as_create(p, names, fss, ls, n);
		for (int i = 0; i < n; i++)
			tarn_free(names[i]);
	}
	as_taken_json(p);
	tarn_free(names);
	tarn_free(fss);
	tarn_free(ls);
}

/* ---- pruning ---- */

/* The autosnaps beyond their count, oldest first, into *names (held: noted). */
static void
as_prune_pick(as_pass_t *p, tarn_array_t *names)
{
	for (size_t i = 0; i < tarn_array_len(&p->ps_fs); i++) {
		as_fs_t *af = tarn_array_get(&p->ps_fs, i);
		for (int l = 0; l < AS_NLABELS; l++) {
			size_t n = tarn_array_len(&af->af_snaps[l]) + (af->af_took[l] ? 1 : 0);
			if (!af->af_on[l] || n <= (size_t)af->af_keep[l])
				continue;
			for (size_t k = 0; k < n - (size_t)af->af_keep[l]; k++) {
				as_snap_t *s = tarn_array_get(&af->af_snaps[l], k);
				if (s->sn_refs > 0)
					json_object_array_add(p->ps_held,
					    json_object_new_string(s->sn_name));
				else
					TARN_ARRAY_APPEND(names, const char *, s->sn_name);
			}
		}
	}
}

/* Destroy what is beyond the counts: one call, or one at a time when it fails. */
static void
as_prune(as_pass_t *p)
{
	tarn_array_t names = TARN_ARRAY_INIT(const char *);
	char err[512];

	as_prune_pick(p, &names);
	int n = (int)tarn_array_len(&names);
	const char **v = tarn_array_base(&names);
	int e = p->ps_dryrun || n == 0 ? 0 : dsl_snapshot_destroy(p->ps_dp, v, n, 0, NULL,
	    NULL, NULL, err, sizeof (err));
	for (int i = 0; i < n; i++) {
		int ei = e;
		if (e != 0 && n > 1)
			ei = dsl_snapshot_destroy(p->ps_dp, &v[i], 1, 0, NULL, NULL, NULL, err,
			    sizeof (err));
		if (ei != 0) {
			p->ps_ret = host_report("destroy", v[i], ei, err);
			continue;
		}
		p->ps_changed |= !p->ps_dryrun;
		json_object_array_add(p->ps_destroyed, json_object_new_string(v[i]));
	}
	tarn_array_fini(&names);
}

/* ---- the pass ---- */

static void
as_pool(as_pass_t *p, const char *pool)
{
	host_fs_t fs;

	if (host_fs_open_existing(pool, p->ps_dryrun, &fs) != 0) {
		p->ps_ret = HOST_FAILED;
		return;
	}
	p->ps_dp = fs.hf_dp;
	p->ps_changed = false;
	tarn_array_init(&p->ps_fs, sizeof (as_fs_t));
	(void) dsl_dataset_iter(fs.hf_dp, pool, -1, as_scan_one, p);
	as_take(p);
	as_prune(p);
	if (p->ps_changed)
		host_history_log(fs.hf_spa);
	for (size_t i = 0; i < tarn_array_len(&p->ps_fs); i++) {
		as_fs_t *af = tarn_array_get(&p->ps_fs, i);
		for (int l = 0; l < AS_NLABELS; l++)
			tarn_array_fini(&af->af_snaps[l]);
	}
	tarn_array_fini(&p->ps_fs);
	host_fs_close(&fs);
}

static int
op_fs_autosnap(json_object *args, json_object *res)
{
	as_policy_t pol;
	as_pass_t p = { .ps_pol = &pol, .ps_dryrun = host_arg_bool(args, "dryrun") };
	const char *text = host_arg_str(args, "config"), *cname = host_arg_str(args, "config_name");
	json_object *now;
	char **pools;
	int npools;

	p.ps_now = (int64_t)time(NULL);
	if (json_object_object_get_ex(args, "now", &now))
		p.ps_now = json_object_get_int64(now);
	if (p.ps_now < 0)
		return (host_report("autosnap", "now", EINVAL, "a time before 1970"));
	as_stamp(p.ps_now, p.ps_stamp);
	for (int l = 0; l < AS_NLABELS; l++)
		pol.ap_keep[l] = -1;
	tarn_array_init(&pol.ap_sections, sizeof (as_section_t));
	p.ps_taken = json_object_new_array();
	p.ps_destroyed = json_object_new_array();
	p.ps_held = json_object_new_array();
	json_object_object_add(res, "taken", p.ps_taken);
	json_object_object_add(res, "destroyed", p.ps_destroyed);
	json_object_object_add(res, "held", p.ps_held);
	if (text != NULL && as_parse(text, cname != NULL ? cname : "config", &pol) != 0) {
		tarn_array_fini(&pol.ap_sections);
		return (HOST_FAILED);
	}
	if (host_pool_names(&pools, &npools) != 0) {
		p.ps_ret = host_report("autosnap", "pools", EIO, "cannot read the pool list");
	} else {
		for (int i = 0; i < npools; i++)
			as_pool(&p, pools[i]);
		host_names_free(pools, npools);
	}
	tarn_array_fini(&pol.ap_sections);
	return (p.ps_ret);
}

const host_op_t host_ops_autosnap[] = {
	{ "fs.autosnap", op_fs_autosnap },
	{ NULL, NULL }
};
