/*
 * fs_send.c — the zfs verbs of replication streams:
 *   send [-RLPbcehnpvw] [-i|-I SNAP|#BM] FS@SNAP
 *   send [-Pnv] -t TOKEN
 *   send [-Pnv] --saved FS
 *   receive|recv [-Fnsuv] [-o prop=value]... [-x prop]... [-d|-e] FS[@SNAP]
 *   receive -A FS
 * Here: the options and usage errors, the checks that come before
 * anything is opened (a stream is never written to or read from a
 * terminal, as zfs refuses), and the text: send -v's estimate lines
 * ("full\tpool/fs@s\t<bytes>" with -P, "full send of pool/fs@s estimated
 * size is 1.23M" without; to stdout with -n, else stderr) and its
 * progress once a second on stderr, receive -v's "receiving ... into ..."
 * and "received ... stream in N seconds (.../sec)".  The host's
 * operations (host/host_op_send.c: fs.send, fs.receive, fs.recv_abort)
 * move the bytes themselves, on this process's own stdout and stdin, not
 * through the daemon's socket; they send what -v prints as parts.
 */
#include "tarn.h"
#include "dsl.h"

#include <signal.h>
#include <time.h>

/* ---- send ---- */

typedef struct send_cli {
	bool sc_parsable;
	FILE *sc_verbose;       /* where the estimates go: stdout with -n, else stderr */
} send_cli_t;

static void
send_print_estimate(send_cli_t *sc, json_object *e)
{
	const char *snap = cli_j_str(e, "snap"), *from = cli_j_str(e, "from");
	uint64_t bytes = cli_j_u64(e, "bytes");
	char size[32];

	if (sc->sc_parsable) {
		if (from != NULL)
			fprintf(sc->sc_verbose, "incremental\t%s\t%s\t%" PRIu64 "\n", from, snap,
			    bytes);
		else
			fprintf(sc->sc_verbose, "full\t%s\t%" PRIu64 "\n", snap, bytes);
		return;
	}
	dsl_nicebytes(bytes, size, sizeof (size));
	if (from != NULL)
		fprintf(sc->sc_verbose, "send from %s to %s estimated size is %s\n", from, snap,
		    size);
	else
		fprintf(sc->sc_verbose, "full send of %s estimated size is %s\n", snap, size);
}

static void
send_print_progress(send_cli_t *sc, json_object *p)
{
	time_t now = time(NULL);
	struct tm tm;
	char size[32];
	uint64_t bytes = cli_j_u64(p, "bytes");

	(void) localtime_r(&now, &tm);
	if (sc->sc_parsable) {
		fprintf(cli_err, "%02d:%02d:%02d\t%" PRIu64 "\t%s\n", tm.tm_hour, tm.tm_min,
		    tm.tm_sec, bytes, cli_j_str(p, "snap"));
	} else {
		dsl_nicebytes(bytes, size, sizeof (size));
		fprintf(cli_err, "%02d:%02d:%02d   %5s   %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec,
		    size, cli_j_str(p, "snap"));
	}
}

/* A part of fs.send: what -v prints. */
static int
send_part(void *arg, json_object *part)
{
	send_cli_t *sc = arg;
	json_object *v;
	char size[32];

	if (json_object_object_get_ex(part, "estimate", &v)) {
		send_print_estimate(sc, v);
	} else if (json_object_object_get_ex(part, "total", &v)) {
		uint64_t n = (uint64_t)json_object_get_uint64(v);
		dsl_nicebytes(n, size, sizeof (size));
		if (sc->sc_parsable)
			fprintf(sc->sc_verbose, "size\t%" PRIu64 "\n", n);
		else
			fprintf(sc->sc_verbose, "total estimated size is %s\n", size);
	} else if (json_object_object_get_ex(part, "start", &v)) {
		fprintf(cli_err, sc->sc_parsable ? "TIME\tSENT\tSNAPSHOT %s\n" :
		    "TIME        SENT   SNAPSHOT %s\n", json_object_get_string(v));
	} else if (json_object_object_get_ex(part, "progress", &v)) {
		send_print_progress(sc, v);
	}
	fflush(sc->sc_verbose);
	fflush(cli_err);
	return (0);
}

/* -i / -I's base as the host takes it: "fs@snap" / "fs#bm" (snap's fs for "@x", "#x", "x"). */
static int
send_from_name(const char *from, const char *snap, char *out, size_t len)
{
	size_t fl = strcspn(snap, "@");
	int n;

	if (from[0] == '@' || from[0] == '#')
		n = snprintf(out, len, "%.*s%s", (int)fl, snap, from);
	else if (strpbrk(from, "@#") != NULL)
		n = snprintf(out, len, "%s", from);
	else
		n = snprintf(out, len, "%.*s@%s", (int)fl, snap, from);
	return (n < 0 || (size_t)n >= len ? ENAMETOOLONG : 0);
}

typedef struct send_opts {
	const char *so_from;
	bool so_I, so_R, so_p, so_h, so_b, so_c, so_w, so_L, so_e;
	bool so_n, so_v, so_P, so_saved;
	const char *so_token;
} send_opts_t;

static const struct option send_longopts[] = {
	{ "replicate", no_argument, NULL, 'R' }, { "props", no_argument, NULL, 'p' },
	{ "parsable", no_argument, NULL, 'P' }, { "dryrun", no_argument, NULL, 'n' },
	{ "verbose", no_argument, NULL, 'v' }, { "large-block", no_argument, NULL, 'L' },
	{ "embed", no_argument, NULL, 'e' }, { "resume", required_argument, NULL, 't' },
	{ "compressed", no_argument, NULL, 'c' }, { "raw", no_argument, NULL, 'w' },
	{ "backup", no_argument, NULL, 'b' }, { "holds", no_argument, NULL, 'h' },
	{ "saved", no_argument, NULL, 'S' }, { NULL, 0, NULL, 0 },
};

/* The options; 0 or the usage error's status. */
static int
send_parse(int argc, char **argv, send_opts_t *o)
{
	int c;
	memset(o, 0, sizeof (*o));
	while ((c = getopt_long(argc, argv, ":Ri:I:cLewpbhnvPt:", send_longopts, NULL)) != -1) {
		switch (c) {
		case 'i': case 'I':
			if (o->so_from != NULL)
				return (cli_fs_usage_error("send", "only one of -i or -I may be "
				    "given"));
			o->so_from = optarg;
			o->so_I = c == 'I';
			break;
		case 'R': o->so_R = true; break;
		case 'p': o->so_p = true; break;
		case 'h': o->so_h = true; break;
		case 'b': o->so_b = true; break;
		case 'c': o->so_c = true; break;
		case 'w': o->so_w = true; break;
		case 'L': o->so_L = true; break;
		case 'e': o->so_e = true; break;
		case 'n': o->so_n = true; break;
		case 'v': o->so_v = true; break;
		case 'P': o->so_P = o->so_v = true; break;
		case 't': o->so_token = optarg; break;
		case 'S': o->so_saved = true; break;
		default:
			return (cli_fs_bad_option("send", c, optopt));
		}
	}
	return (0);
}

/* The option combinations zfs refuses, and the argument count; 0 or usage status. */
static int
send_check(const send_opts_t *o, int argc)
{
	if (o->so_token != NULL) {
		if (o->so_from != NULL || o->so_R || o->so_p || o->so_b || o->so_h || o->so_saved)
			return (cli_fs_usage_error("send", "invalid flags combined with -t"));
		if (argc > 0)
			return (cli_fs_usage_error("send", "too many arguments"));
		return (0);
	}
	if (o->so_saved && (o->so_from != NULL || o->so_R || o->so_p || o->so_h || o->so_b))
		return (cli_fs_usage_error("send", "incompatible flags combined with saved "
		    "send flag"));
	if (argc < 1)
		return (cli_fs_usage_error("send", o->so_saved ? "missing filesystem argument" :
		    "missing snapshot argument"));
	if (argc > 1)
		return (cli_fs_usage_error("send", "too many arguments"));
	return (0);
}

static json_object *
send_args_json(const send_opts_t *o, const char *snap, const char *from)
{
	json_object *a = json_object_new_object();
	if (snap != NULL)
		json_object_object_add(a, "snap", json_object_new_string(snap));
	if (from != NULL)
		json_object_object_add(a, "from", json_object_new_string(from));
	if (o->so_token != NULL)
		json_object_object_add(a, "token", json_object_new_string(o->so_token));
	const struct { const char *k; bool v; } b[] = {
		{ "intermediate", o->so_I }, { "replicate", o->so_R }, { "props", o->so_p },
		{ "holds", o->so_h }, { "verbose", o->so_v }, { "parsable", o->so_P },
		{ "dryrun", o->so_n }, { "compressed", o->so_c }, { "raw", o->so_w },
		{ "large", o->so_L }, { "embed", o->so_e }, { "saved", o->so_saved },
	};
	for (size_t i = 0; i < ARRAY_SIZE(b); i++)
		if (b[i].v)
			json_object_object_add(a, b[i].k, json_object_new_boolean(true));
	return (a);
}

/* The snapshot (--saved: file system) and base names as zfs checks them; 0 or 1. */
static int
send_names(const send_opts_t *o, const char *snap, char *from, size_t fromlen)
{
	char err[512];
	if (o->so_saved) {
		if (dsl_name_validate(snap, err, sizeof (err)) != 0)
			return (cli_cannot("send", snap, EINVAL, err));
	} else if (cli_snap_name_check(snap, '@', err, sizeof (err)) != 0) {
		return (cli_cannot("send", snap, EINVAL, err));
	}
	if (o->so_from == NULL)
		return (0);
	if (send_from_name(o->so_from, snap, from, fromlen) != 0)
		return (cli_cannot("send", o->so_from, ENAMETOOLONG, "name is too long"));
	char delim = strchr(from, '#') != NULL ? '#' : '@';
	if (cli_snap_name_check(from, delim, err, sizeof (err)) != 0)
		return (cli_cannot("send", from, EINVAL, err));
	return (0);
}

int
cli_fs_send(int argc, char **argv)
{
	send_opts_t o;
	char from[DSL_NAME_MAX * 2];
	int r;

	if ((r = send_parse(argc, argv, &o)) != 0)
		return (r);
	argc -= optind;
	argv += optind;
	if ((r = send_check(&o, argc)) != 0)
		return (r);
	const char *snap = argc > 0 ? argv[0] : NULL;
	if (snap != NULL && send_names(&o, snap, from, sizeof (from)) != 0)
		return (CLI_EXIT_ERROR);
	if (!o.so_n && isatty(STDOUT_FILENO)) {
		fprintf(cli_err, "Error: Stream can not be written to a terminal.\n"
		    "You must redirect standard output.\n");
		return (CLI_EXIT_ERROR);
	}
	if (cli_local())
		(void) signal(SIGPIPE, SIG_IGN);    /* a reader gone: EPIPE, said */
	send_cli_t sc = { .sc_parsable = o.so_P, .sc_verbose = o.so_n ? cli_out : cli_err };
	json_object *res;
	r = cli_call_parts("fs.send", send_args_json(&o, snap, o.so_from != NULL ? from : NULL),
	    send_part, &sc, &res);
	json_object_put(res);
	return (r);
}

/* ---- receive ---- */

typedef struct recv_cli {
	char *rc_token;          /* a -s receive broke off: how to resume */
} recv_cli_t;

static int
recv_part(void *arg, json_object *part)
{
	recv_cli_t *rc = arg;
	json_object *v;
	char a[32], b[32];

	if (json_object_object_get_ex(part, "receiving", &v)) {
		fprintf(cli_out, "%s %s stream of %s into %s\n",
		    cli_j_bool(v, "dryrun") ? "would receive" : "receiving",
		    cli_j_bool(v, "incremental") ? "incremental" : "full",
		    cli_j_str(v, "snap"), cli_j_str(v, "into"));
	} else if (json_object_object_get_ex(part, "received", &v)) {
		uint64_t bytes = cli_j_u64(v, "bytes"), secs = cli_j_u64(v, "seconds");
		if (secs == 0)
			secs = 1;
		dsl_nicebytes(bytes, a, sizeof (a));
		dsl_nicebytes(bytes / secs, b, sizeof (b));
		fprintf(cli_out, "received %s stream in %" PRIu64 " seconds (%s/sec)\n", a, secs,
		    b);
	} else if (json_object_object_get_ex(part, "resume_token", &v) &&
	    cli_j_str(v, "token") != NULL) {
		tarn_free(rc->rc_token);
		rc->rc_token = tarn_strdup(cli_j_str(v, "token"));
	}
	fflush(cli_out);
	return (0);
}

static int
recv_abort(const char *name)
{
	json_object *args = json_object_new_object(), *res;
	json_object_object_add(args, "name", json_object_new_string(name));
	int r = cli_call("fs.recv_abort", args, &res);
	if (r != CLI_EXIT_OK && cli_j_str(res, "message") != NULL)
		fprintf(cli_err, "%s\n", cli_j_str(res, "message"));
	json_object_put(res);
	return (r);
}

typedef struct recv_opts {
	bool ro_F, ro_u, ro_s, ro_d, ro_e, ro_n, ro_v, ro_A;
	json_object *ro_set, *ro_excl;
} recv_opts_t;

/* -o prop=value: checked and added; 0 or the usage / error status. */
static int
recv_opt_set(recv_opts_t *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char name[DSL_NAME_MAX], err[512];
	if (eq == NULL)
		return (cli_fs_usage_error("receive", "missing '=' for property argument '%s'",
		    arg));
	(void) snprintf(name, sizeof (name), "%.*s", (int)(eq - arg), arg);
	if (dsl_prop_user_name(name) ? dsl_prop_user_check(name, eq + 1, err,
	    sizeof (err)) != 0 : dsl_prop_lookup(name) < 0) {
		if (!dsl_prop_user_name(name))
			(void) snprintf(err, sizeof (err), "invalid property '%s'", name);
		return (cli_cannot("receive", name, EINVAL, err));
	}
	json_object_array_add(o->ro_set, json_object_new_string(arg));
	return (0);
}

static int
recv_parse(int argc, char **argv, recv_opts_t *o)
{
	int c, r;
	while ((c = getopt(argc, argv, ":FusdeAnvo:x:")) != -1) {
		switch (c) {
		case 'F': o->ro_F = true; break;
		case 'u': o->ro_u = true; break;
		case 's': o->ro_s = true; break;
		case 'n': o->ro_n = true; break;
		case 'v': o->ro_v = true; break;
		case 'A': o->ro_A = true; break;
		case 'd': case 'e':
			if ((c == 'd' && o->ro_e) || (c == 'e' && o->ro_d))
				return (cli_fs_usage_error("receive", "invalid: -d and -e are "
				    "mutually exclusive"));
			o->ro_d |= c == 'd';
			o->ro_e |= c == 'e';
			break;
		case 'o':
			if ((r = recv_opt_set(o, optarg)) != 0)
				return (r);
			break;
		case 'x':
			if (dsl_prop_lookup(optarg) < 0 && !dsl_prop_user_name(optarg))
				return (cli_cannot("receive", optarg, EINVAL, "invalid property"));
			json_object_array_add(o->ro_excl, json_object_new_string(optarg));
			break;
		default:
			return (cli_fs_bad_option("receive", c, optopt));
		}
	}
	return (0);
}

static json_object *
recv_args_json(recv_opts_t *o, const char *target)
{
	json_object *a = json_object_new_object();
	json_object_object_add(a, "target", json_object_new_string(target));
	const struct { const char *k; bool v; } b[] = {
		{ "force", o->ro_F }, { "nomount", o->ro_u }, { "resumable", o->ro_s },
		{ "discard", o->ro_d }, { "lastonly", o->ro_e }, { "dryrun", o->ro_n },
		{ "verbose", o->ro_v },
	};
	for (size_t i = 0; i < ARRAY_SIZE(b); i++)
		json_object_object_add(a, b[i].k, json_object_new_boolean(b[i].v));
	json_object_object_add(a, "set", json_object_get(o->ro_set));
	json_object_object_add(a, "exclude", json_object_get(o->ro_excl));
	return (a);
}

/* The receive itself, and after a broken -s receive how to resume it. */
static int
recv_run(recv_opts_t *o, const char *target)
{
	recv_cli_t rc = { NULL };
	json_object *res;
	int r = cli_call_parts("fs.receive", recv_args_json(o, target), recv_part, &rc, &res);
	json_object_put(res);
	if (rc.rc_token != NULL)        /* broken off with -s, or a --saved stream */
		fprintf(cli_err, "Partially received snapshot is saved.\n"
		    "A resuming stream can be generated on the sending system by running:\n"
		    "    zfs send -t %s\n", rc.rc_token);
	tarn_free(rc.rc_token);
	return (r);
}

int
cli_fs_receive(int argc, char **argv)
{
	recv_opts_t o = { .ro_set = json_object_new_array(),
		.ro_excl = json_object_new_array() };
	char err[512];
	int r;

	cli_history_begin_zfs(argc, argv);
	if ((r = recv_parse(argc, argv, &o)) != 0)
		goto out;
	argc -= optind;
	argv += optind;
	if (o.ro_A && (o.ro_F || o.ro_u || o.ro_s || o.ro_d || o.ro_e || o.ro_n ||
	    json_object_array_length(o.ro_set) > 0 || json_object_array_length(o.ro_excl) > 0)) {
		r = cli_fs_usage_error("receive", "invalid option combined with -A");
		goto out;
	}
	if (argc < 1 || argc > 1) {
		r = cli_fs_usage_error("receive", argc < 1 ? "missing snapshot argument" :
		    "too many arguments");
		goto out;
	}
	char fs[DSL_NAME_MAX];
	(void) snprintf(fs, sizeof (fs), "%.*s", (int)strcspn(argv[0], "@"), argv[0]);
	if (strlen(argv[0]) >= DSL_NAME_MAX || dsl_name_validate(fs, err, sizeof (err)) != 0 ||
	    (strchr(argv[0], '@') != NULL &&
	    cli_snap_name_check(argv[0], '@', err, sizeof (err)) != 0)) {
		r = cli_cannot("receive", argv[0], EINVAL, strlen(argv[0]) >= DSL_NAME_MAX ?
		    "name is too long" : err);
		goto out;
	}
	if (o.ro_A) {
		r = recv_abort(argv[0]);
		goto out;
	}
	if (isatty(STDIN_FILENO)) {
		fprintf(cli_err, "Error: Backup stream can not be read from a terminal.\n"
		    "You must redirect standard input.\n");
		r = CLI_EXIT_ERROR;
		goto out;
	}
	r = recv_run(&o, argv[0]);
out:
	json_object_put(o.ro_set);
	json_object_put(o.ro_excl);
	return (r);
}
