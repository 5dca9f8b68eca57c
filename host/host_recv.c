/*
 * host_recv.c — one substream into a file system (zfs receive; a package
 * stream's receive, host_send_pkg.c, calls it once per substream), and
 * the property payload send -p carries.
 *
 * Where it goes (host_recv_target_name): the target as given ("fs", the
 * snapshot keeping the stream's name, or "fs@snap"); with -d the sent
 * name without its pool part appended to the target (pool/a/b@s under
 * dst: dst/a/b); with -e only its last element (dst/b).  With either, the
 * missing file systems above it are made (and mounted) as zfs makes them.
 *
 * The receive itself is dsl_receive's, atomic: the target keeps its old
 * state until the end record verified.  Its commit replaces the file
 * system's object set, and a mounted target is swapped in place under its
 * mount as rollback does (dro_swap: host_swap_dataset), so programs see
 * the old files until the end and the new ones right after.
 *
 * Properties.  The stream's payload (send -p, -R: host_send_props' JSON,
 * {"props": {name: value...}}: the file system's local properties, user
 * ones too, as `zfs get -s local -p` shows them) is set after the commit,
 * without the -x names and the -o names; then -o's values, which for a
 * file system the receive creates are given to dsl_receive instead
 * (dro_props: set at its creation).  A property that will not set is
 * reported ("cannot receive P property on 'fs': ...") and the others
 * still go.  Then the file system is mounted, as create mounts a new one
 * (canmount=on with a mountpoint, the daemon mounting by itself), unless
 * -u; a target mounted before stays mounted.
 *
 * -v: parts {receiving: ...} before and {received: ...} after (the
 * command line prints zfs's lines).  A -s receive that broke off leaves
 * its partial state; the part {resume_token: {name, token}} says how to
 * go on (zfs prints "Partially received snapshot is saved...").  So does
 * the receive of a --saved stream, which ends in such a state (no
 * snapshot, no properties, no mount).
 */
#include "host_impl.h"

int
host_recv_target_name(const host_recv_args_t *a, const char *target, const char *toname,
    char *out, size_t len)
{
	size_t fl = strcspn(toname, "@");
	const char *tail = NULL;
	char sent[DSL_NAME_MAX];

	(void) snprintf(sent, sizeof (sent), "%.*s", (int)fl, toname);
	if (a->hra_discard) {
		tail = strchr(sent, '/');
		tail = tail != NULL ? tail + 1 : "";
	} else if (a->hra_lastonly) {
		tail = strrchr(sent, '/');
		tail = tail != NULL ? tail + 1 : sent;
	}
	if (tail != NULL && strchr(target, '@') != NULL)
		return (host_report("receive", target, EINVAL, "a snapshot name cannot be "
		    "the target of -d or -e: give a file system"));
	int n = tail == NULL || tail[0] == '\0' ? snprintf(out, len, "%s", target) :
	    snprintf(out, len, "%s/%s", target, tail);
	if (n < 0 || (size_t)n >= len || (size_t)n >= DSL_NAME_MAX)
		return (host_report("receive", target, ENAMETOOLONG, "name is too long"));
	return (0);
}

/*
 * While records are applied the pool's lock is let go, so `zfs list` and
 * `zpool status` answer during a long receive; the engine keeps the work
 * dataset busy meanwhile, and the commit takes the lock again.
 */
static void
recv_exclusive(void *arg, bool exclusive)
{
	spa_t *spa = arg;
	if (exclusive)
		host_pool_relock(spa);
	else
		host_pool_unlock(spa);
}

void
host_recv_cleanup(const char *pool)
{
	spa_t *spa;
	dsl_pool_t *dp;
	char err[512];

	if (host_pool_open(pool, 0, &spa, err, sizeof (err)) != 0)
		return;
	if (!spa_readonly(spa) && dsl_pool_open(spa, host_fs_init, NULL, &dp) == 0) {
		(void) dsl_recv_cleanup(dp);
		dsl_pool_close(dp);
	}
	host_pool_close(spa);
}

/* ---- the swap under a mount (dro_swap) ---- */

typedef struct recv_swap {
	dsl_pool_t *rs_dp;
	dsl_recv_commit_fn_t rs_commit;
	void       *rs_cookie;
	int         rs_error;
	bool        rs_ran;
	bool        rs_reported;    /* host_swap_dataset said why it could not */
} recv_swap_t;

static int
recv_change(void *arg)
{
	recv_swap_t *rs = arg;
	rs->rs_ran = true;
	rs->rs_error = rs->rs_commit(rs->rs_cookie);
	return (rs->rs_error != 0 ? HOST_FAILED : 0);
}

static int
recv_swap(void *arg, const char *name, dsl_recv_commit_fn_t commit, void *cookie)
{
	recv_swap_t *rs = arg;
	rs->rs_commit = commit;
	rs->rs_cookie = cookie;
	rs->rs_ran = false;
	rs->rs_error = 0;
	(void) host_swap_dataset(rs->rs_dp, name, false, "receive", recv_change, rs);
	if (!rs->rs_ran) {
		rs->rs_reported = true;
		return (SET_ERROR(EBUSY));
	}
	return (rs->rs_error);
}

/* ---- properties ---- */

static bool
recv_listed(const char *const *v, int n, const char *name, bool setting)
{
	size_t l = strlen(name);
	for (int i = 0; i < n; i++) {
		if (!setting && strcmp(v[i], name) == 0)
			return (true);
		if (setting && strncmp(v[i], name, l) == 0 && v[i][l] == '=')
			return (true);
	}
	return (false);
}

/* -o's "prop=value" words as settings (values point into a copy: *bufp, freed by the caller). */
static dsl_prop_setting_t *
recv_settings(const host_recv_args_t *a, char ***bufp)
{
	dsl_prop_setting_t *s = tarn_alloc(sizeof (*s) * ((size_t)a->hra_nset + 1));
	char **copies = tarn_alloc(sizeof (char *) * ((size_t)a->hra_nset + 1));
	for (int i = 0; i < a->hra_nset; i++) {
		copies[i] = tarn_strdup(a->hra_setprops[i]);
		char *eq = strchr(copies[i], '=');
		if (eq != NULL)
			*eq++ = '\0';
		s[i].dps_name = copies[i];
		s[i].dps_value = eq != NULL ? eq : "";
	}
	*bufp = copies;
	return (s);
}

static void
recv_settings_free(dsl_prop_setting_t *s, char **copies, int n)
{
	for (int i = 0; i < n; i++)
		tarn_free(copies[i]);
	tarn_free(copies);
	tarn_free(s);
}

/* Set one property on fs (mounted: with the mount following); 0 or reported. */
static int
recv_prop_set(dsl_pool_t *dp, const char *fs, const char *prop, const char *value,
    bool mounted)
{
	char err[512] = "", verb[300];
	host_prop_change_t pc;
	(void) snprintf(verb, sizeof (verb), "receive %s property on", prop);
	if (mounted && host_mount_prop_before(dp, fs, prop, &pc) != 0)
		return (HOST_FAILED);
	int e = dsl_prop_set(dp, fs, prop, value, err, sizeof (err));
	int r = e != 0 ? host_report(verb, fs, e, err) : 0;
	if (mounted && host_mount_prop_changed(dp, fs, prop, &pc, verb) != 0)
		r = HOST_FAILED;
	return (r);
}

/* The stream's properties (payload), then -o unless given at creation; 0 or reported. */
static int
recv_props(dsl_pool_t *dp, const host_recv_args_t *a, const char *fs,
    const dsl_recv_result_t *res, bool mounted)
{
	json_object *top = NULL, *props;
	int r = 0;

	if (res->drr_props != NULL) {
		top = json_tokener_parse(res->drr_props);
		if (top == NULL)
			r = host_report("receive properties on", fs, EBADMSG,
			    "the stream's property payload is not valid");
	}
	if (top != NULL && json_object_object_get_ex(top, "props", &props) &&
	    json_object_is_type(props, json_type_object)) {
		json_object_object_foreach(props, name, val) {
			int p = dsl_prop_lookup(name);
			if (recv_listed(a->hra_exclprops, a->hra_nexcl, name, false) ||
			    recv_listed(a->hra_setprops, a->hra_nset, name, true) ||
			    (p >= 0 && (dsl_prop_once(p) || dsl_prop_readonly(p))) ||
			    !json_object_is_type(val, json_type_string))
				continue;
			if (recv_prop_set(dp, fs, name, json_object_get_string(val), mounted) != 0)
				r = HOST_FAILED;
		}
	}
	json_object_put(top);
	for (int i = 0; i < a->hra_nset && !res->drr_created; i++) {
		char *c = tarn_strdup(a->hra_setprops[i]), *eq = strchr(c, '=');
		if (eq != NULL) {
			*eq = '\0';
			if (recv_prop_set(dp, fs, c, eq + 1, mounted) != 0)
				r = HOST_FAILED;
		}
		tarn_free(c);
	}
	return (r);
}

typedef struct recv_user {
	dsl_pool_t  *ru_dp;
	const char  *ru_fs;
	json_object *ru_props;
	dsl_prop_val_t *ru_v;
} recv_user_t;

static void
send_props_user(void *arg, const char *prop)
{
	recv_user_t *ru = arg;
	if (dsl_prop_user_get(ru->ru_dp, ru->ru_fs, prop, ru->ru_v, NULL, 0) == 0 &&
	    ru->ru_v->dpv_source == DSL_SRC_LOCAL)
		json_object_object_add(ru->ru_props, prop,
		    json_object_new_string(ru->ru_v->dpv_str));
}

char *
host_send_props(struct dsl_pool *dp, const char *fs, size_t *len)
{
	json_object *top = json_object_new_object(), *props = json_object_new_object();
	dsl_prop_val_t *v = tarn_alloc(sizeof (*v));

	for (int p = 0; p < DSL_NUM_PROPS; p++) {
		if (dsl_prop_readonly(p) || !dsl_prop_applies(p, fs) ||
		    dsl_prop_get(dp, fs, p, true, v, NULL, 0) != 0 ||
		    v->dpv_source != DSL_SRC_LOCAL)
			continue;
		json_object_object_add(props, dsl_prop_name(p), json_object_new_string(v->dpv_str));
	}
	recv_user_t ru = { dp, fs, props, v };
	(void) dsl_prop_user_iter(dp, fs, send_props_user, &ru);
	json_object_object_add(top, "props", props);
	char *text = tarn_strdup(json_object_to_json_string_ext(top, JSON_C_TO_STRING_PLAIN));
	*len = strlen(text);
	json_object_put(top);
	tarn_free(v);
	return (text);
}

/* ---- one substream ---- */

static void
recv_emit(const char *key, json_object *v)
{
	json_object *part = json_object_new_object();
	json_object_object_add(part, key, v);
	(void) host_emit(part);
}

/* -d, -e: the file systems above fs that are missing, made; 0 or reported. */
static int
recv_parents(dsl_pool_t *dp, const char *target, const char *fs)
{
	char parent[DSL_NAME_MAX], err[512] = "", top[DSL_NAME_MAX];
	const char *slash = strrchr(fs, '/');
	if (slash == NULL || strlen(fs) <= strlen(target))
		return (0);
	(void) snprintf(parent, sizeof (parent), "%.*s", (int)(slash - fs), fs);
	if (dsl_dataset_exists(dp, parent))
		return (0);
	host_fs_mount_top(dp, parent, true, top);
	int e = dsl_dataset_create(dp, parent, true, NULL, 0, err, sizeof (err));
	if (e != 0)
		return (host_report("create", parent, e, err));
	if (host_mount_auto())
		(void) host_mount_tree(dp, top, true);
	return (0);
}

/* What -v says before: "receiving full stream of X into Y". */
static void
recv_say_receiving(const host_recv_args_t *a, const dsl_stream_begin_t *b, const char *dest)
{
	char into[DSL_NAME_MAX * 2];
	const char *at = strchr(b->dsb_toname, '@');
	if (strchr(dest, '@') != NULL || at == NULL)
		(void) snprintf(into, sizeof (into), "%s", dest);
	else
		(void) snprintf(into, sizeof (into), "%s%s", dest, at);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "incremental", json_object_new_boolean(b->dsb_fromguid != 0));
	json_object_object_add(o, "snap", json_object_new_string(b->dsb_toname));
	json_object_object_add(o, "into", json_object_new_string(into));
	json_object_object_add(o, "dryrun",
	    json_object_new_boolean((a->hra_flags & DSL_RECV_DRYRUN) != 0));
	recv_emit("receiving", o);
}

/* A -s receive broke off: say how to resume it (when there is state). */
static void
recv_say_token(dsl_pool_t *dp, const char *fs)
{
	size_t len = 64 * 1024;
	char *buf = tarn_alloc(len);
	if (dsl_recv_resume_token(dp, fs, buf, len) == 0) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(fs));
		json_object_object_add(o, "token", json_object_new_string(buf));
		recv_emit("resume_token", o);
	}
	tarn_free(buf);
}

/* After the commit: properties, mount, -v's line.  0 or reported. */
static int
recv_after(dsl_pool_t *dp, const host_recv_args_t *a, const char *fs,
    const dsl_recv_result_t *res, uint64_t t0)
{
	bool mounted = host_mount_any(fs);
	int r = recv_props(dp, a, fs, res, mounted);
	if (!a->hra_nomount && !mounted && host_mount_auto() &&
	    host_mount_tree(dp, fs, true) != 0)
		r = HOST_FAILED;
	if (a->hra_verbose) {
		uint64_t secs = (tarn_now_ns() - t0) / 1000000000ull;
		json_object *o = json_object_new_object();
		json_object_object_add(o, "bytes", json_object_new_uint64(res->drr_bytes));
		json_object_object_add(o, "seconds", json_object_new_uint64(secs));
		recv_emit("received", o);
	}
	return (r);
}

int
host_recv_one(struct dsl_pool *dp, const host_recv_args_t *a, const char *target,
    dsl_stream_in_t *si, dsl_recv_result_t *res)
{
	dsl_stream_begin_t *b = tarn_alloc(sizeof (*b));
	dsl_stream_kind_t kind;
	char dest[DSL_NAME_MAX], fs[DSL_NAME_MAX], err[512] = "", **copies = NULL;
	recv_swap_t rs = { .rs_dp = dp };
	dsl_prop_setting_t *s = NULL;
	uint64_t t0 = tarn_now_ns();
	int r, e;

	memset(res, 0, sizeof (*res));
	if ((e = dsl_stream_peek(si, &kind, b, err, sizeof (err))) != 0 ||
	    kind != DSL_STREAM_BEGIN) {
		tarn_free(b);
		return (host_report("receive", "", e != 0 ? e : EBADMSG, e != 0 ? err :
		    "invalid stream (no begin record where a stream should start)"));
	}
	const char *verb = b->dsb_fromguid == 0 ? "receive new filesystem stream" :
	    "receive incremental stream";
	if ((r = host_recv_target_name(a, target, b->dsb_toname, dest, sizeof (dest))) != 0)
		goto out;
	(void) snprintf(fs, sizeof (fs), "%.*s", (int)strcspn(dest, "@"), dest);
	bool dry = (a->hra_flags & DSL_RECV_DRYRUN) != 0;
	if ((a->hra_discard || a->hra_lastonly) && !dry &&
	    (r = recv_parents(dp, target, fs)) != 0)
		goto out;
	if (a->hra_verbose)
		recv_say_receiving(a, b, dest);
	dsl_recv_opts_t o = { .dro_flags = a->hra_flags, .dro_swap = recv_swap,
		.dro_swap_arg = &rs, .dro_exclusive = recv_exclusive,
		.dro_exclusive_arg = dsl_pool_spa(dp) };
	if (!dsl_dataset_exists(dp, fs)) {
		s = recv_settings(a, &copies);
		o.dro_props = s;
		o.dro_nprops = a->hra_nset;
	}
	e = dsl_receive(dp, dest, &o, si, res, err, sizeof (err));
	if (e != 0) {
		r = rs.rs_reported ? HOST_FAILED : host_report(verb, "", e, err);
		if ((a->hra_flags & DSL_RECV_RESUMABLE) != 0)
			recv_say_token(dp, fs);
		goto out;
	}
	if (res->drr_saved && !dry) {
		/* a --saved stream: its state saved again, resumable with send -t */
		recv_say_token(dp, fs);
		r = 0;
	} else {
		r = dry ? 0 : recv_after(dp, a, fs, res, t0);
	}
out:
	if (s != NULL)
		recv_settings_free(s, copies, a->hra_nset);
	tarn_free(b);
	return (r);
}
