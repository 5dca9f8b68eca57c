/*
 * fs_replicate.c — `tarn fs replicate [-rnv] [options] SRC [[USER@]HOST:]DST`:
 * one command for what syncoid does with zfs send and receive, so that a
 * timer can keep a copy of a file system on another pool, here or on
 * another machine over ssh (contrib/systemd/tarn-replicate@.timer).
 *
 * One run, for SRC (and with -r each file system below it, parents first,
 * one at a time into the same place below DST):
 *  1. take SRC@replicate_<UTC time> (with -r one recursive snapshot of the
 *     tree, atomic), unless --no-snapshot: then the newest snapshot is sent;
 *  2. list the snapshots and bookmarks of SRC and of DST with their guids
 *     and creation txgs, and DST's receive_resume_token;
 *  3. a token (an earlier run broke off with its partial state kept):
 *     `send -t TOKEN | receive -s -F DST` completes it first; when the
 *     send cannot (the snapshot it named is gone), `receive -A` drops the
 *     partial state and the run goes on as if there had been none;
 *  4. the newest snapshot of SRC whose guid a snapshot of DST has (or a
 *     bookmark of SRC with that guid: --bookmark leaves one of each sent
 *     snapshot, so that the source may prune the snapshot) is the base:
 *     `send -i @base SRC@new` (or `-i #base`; one stream, so snapshots
 *     others took between two runs are not copied) into
 *     `receive -s -F DST`, after `rollback -r` of DST to the base when DST
 *     has younger snapshots; no base and no DST: a full stream of SRC@new;
 *     DST with snapshots but none in common is refused (nothing is
 *     destroyed);
 *  5. prune: the replicate_ snapshots (and, with --bookmark, bookmarks)
 *     beyond the newest --keep N (default 10) on both sides, never the
 *     one just sent or the base.
 * The send runs as a child of this command (/proc/self/exe fs send) and
 * writes straight into the receiving child (a local `tarn fs receive`, or
 * `ssh [-p PORT] [-i KEY] [-o OPT]... HOST '<target's commands>'`); the
 * target's commands of a step go in one ssh session (the listing and the
 * token in one, rollback, receive and prune in another), and the sessions
 * of a run share one connection (rep_cm_open: ssh's ControlMaster), so a
 * run costs one ssh handshake.  On the far side `tarn` must be in the
 * PATH of the ssh session.
 *
 * Output: nothing on success unless -v (each step, and the time the
 * transfer took); -n/--dry-run says what would be done and changes
 * nothing.  Failures: one line, "cannot replicate 'SRC' to 'DST': why"
 * (why: the failing child's message without its own "cannot VERB 'X': ",
 * or ssh's), exit 1; usage errors exit 2.  With -r a failure of one file
 * system does not stop the others.
 */
#include "tarn.h"
#include "tarn_array.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>

#define REP_PREFIX     "replicate_"
#define REP_MAX_SSHOPT 32
#define REP_WHY        1024

typedef struct rep {
	const char *r_host;             /* "[user@]host" of DST; NULL: here */
	const char *r_port, *r_key;
	const char *r_sshopt[REP_MAX_SSHOPT];
	int         r_nsshopt;
	long        r_keep;
	bool        r_snapshot, r_bookmark, r_recursive, r_dryrun, r_verbose;
	char        r_self[PATH_MAX];   /* this program (local commands) */
	char        r_cm[PATH_MAX];     /* ssh's ControlPath of this run, "": none */
	char        r_snapname[64];     /* replicate_... of this run */
} rep_t;

/* A snapshot or bookmark of a file system, as `fs list -p` shows it. */
typedef struct rep_snap {
	char     rs_name[DSL_NAME_MAX];     /* after the '@' or '#' */
	bool     rs_bookmark;
	uint64_t rs_guid, rs_txg;
} rep_snap_t;

/* A file system on one side: whether it exists, its snapshots, its token. */
typedef struct rep_fs {
	bool         rf_exists;
	tarn_array_t rf_snaps;          /* rep_snap_t, oldest (createtxg) first */
	char        *rf_token;          /* receive_resume_token, NULL: none */
} rep_fs_t;

/* What a child left: its stdout and stderr, and its exit status. */
typedef struct rep_out {
	char *ro_out, *ro_err;
	int   ro_status;                /* 128 + N: killed by signal N */
} rep_out_t;

/* ---- command lines ---- */

/* s quoted for sh (as it is when nothing in it needs quotes) */
static void
rep_q(FILE *f, const char *s)
{
	if (s[0] != '\0' && s[0] != '#' && s[0] != '~' &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	    "_-./:@#%+=,") == strlen(s)) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (; *s != '\0'; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

/*
 * printf for command lines: %T is tarn on the side (remote: "tarn" from
 * the ssh session's PATH), %Q a quoted string, %s a plain one.
 */
static void
rep_vcmd(FILE *f, const rep_t *r, bool remote, const char *fmt, va_list ap)
{
	for (const char *p = fmt; *p != '\0'; p++) {
		if (*p != '%' || p[1] == '\0') {
			fputc(*p, f);
			continue;
		}
		switch (*++p) {
		case 'T':
			if (remote)
				fputs("tarn", f);
			else
				rep_q(f, r->r_self);
			break;
		case 'Q': rep_q(f, va_arg(ap, const char *)); break;
		case 's': fputs(va_arg(ap, const char *), f); break;
		default: fputc(*p, f); break;
		}
	}
}

/* Append to the command line *f (opened by rep_cmd_open). */
static void
rep_cmd(FILE *f, const rep_t *r, bool remote, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rep_vcmd(f, r, remote, fmt, ap);
	va_end(ap);
}

/* argv running cmdline: `sh -c` here, `ssh [opts] HOST cmdline` there. */
static char **
rep_argv(const rep_t *r, bool remote, const char *cmdline)
{
	char **av = tarn_alloc(sizeof (char *) * (size_t)(2 * r->r_nsshopt + 16));
	int n = 0;

	if (!remote) {
		av[n++] = (char *)"/bin/sh";
		av[n++] = (char *)"-c";
		av[n++] = (char *)cmdline;
		return (av);
	}
	av[n++] = (char *)"ssh";
	if (r->r_port != NULL) {
		av[n++] = (char *)"-p";
		av[n++] = (char *)r->r_port;
	}
	if (r->r_key != NULL) {
		av[n++] = (char *)"-i";
		av[n++] = (char *)r->r_key;
	}
	/* ssh takes the first value of an option: the user's come first */
	for (int i = 0; i < r->r_nsshopt; i++) {
		av[n++] = (char *)"-o";
		av[n++] = (char *)r->r_sshopt[i];
	}
	av[n++] = (char *)"-o";
	av[n++] = (char *)"BatchMode=yes";     /* never a password prompt from a timer */
	if (r->r_cm[0] != '\0') {
		av[n++] = (char *)"-o";
		av[n++] = (char *)"ControlMaster=auto";
		av[n++] = (char *)"-o";
		av[n++] = (char *)"ControlPersist=10";
		av[n++] = (char *)"-S";
		av[n++] = (char *)r->r_cm;
	}
	av[n++] = (char *)r->r_host;
	av[n++] = (char *)cmdline;
	return (av);
}

/* ---- children ---- */

/* Start argv with the descriptors given as its 0, 1 and 2. */
static pid_t
rep_spawn(char **argv, int in, int out, int err)
{
	pid_t pid = fork();
	if (pid != 0)
		return (pid);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(127);
	for (int fd = 3; fd < 256; fd++)
		(void) close(fd);
	(void) signal(SIGPIPE, SIG_DFL);
	execvp(argv[0], argv);
	dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

static int
rep_wait(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return (127);
	return (WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

/* The whole of a temporary file (closed), NUL-terminated. */
static char *
rep_slurp(FILE *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char chunk[4096];
	size_t n;

	rewind(f);
	while ((n = fread(chunk, 1, sizeof (chunk), f)) > 0)
		fwrite(chunk, 1, n, m);
	fclose(m);
	fclose(f);
	return (buf);
}

static void
rep_out_free(rep_out_t *o)
{
	free(o->ro_out);
	free(o->ro_err);
	memset(o, 0, sizeof (*o));
}

/* Run cmdline on a side, stdin /dev/null; its output in *o.  0 or errno. */
static int
rep_run(const rep_t *r, bool remote, const char *cmdline, rep_out_t *o)
{
	FILE *out = tmpfile(), *err = tmpfile();
	int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int e = 0;

	memset(o, 0, sizeof (*o));
	if (out == NULL || err == NULL || in < 0) {
		e = errno;
		goto done;
	}
	char **av = rep_argv(r, remote, cmdline);
	fflush(NULL);
	pid_t pid = rep_spawn(av, in, fileno(out), fileno(err));
	tarn_free(av);
	if (pid < 0) {
		e = errno;
		goto done;
	}
	o->ro_status = rep_wait(pid);
	o->ro_out = rep_slurp(out);
	o->ro_err = rep_slurp(err);
	out = err = NULL;
done:
	if (out != NULL)
		fclose(out);
	if (err != NULL)
		fclose(err);
	if (in >= 0)
		close(in);
	return (e);
}

/*
 * Why a child failed, in one line: the first line of its stderr that
 * says something (not a usage line), without a leading "cannot VERB
 * 'NAME': " (the line we print says which); else its status.
 */
static void
rep_why(const rep_out_t *o, bool remote, char *buf, size_t len)
{
	const char *p = o->ro_err != NULL ? o->ro_err : "";

	while (*p != '\0') {
		size_t n = strcspn(p, "\n"), line = n;
		while (n > 0 && (p[n - 1] == '\r' || p[n - 1] == ' '))
			n--;        /* ssh ends its lines with \r\n */
		if (n > 0 && strncmp(p, "usage:", 6) != 0) {
			const char *q = p;
			if (strncmp(q, "cannot ", 7) == 0) {
				const char *c = strstr(q, "': ");
				if (c != NULL && c < p + n)
					q = c + 3;
			}
			(void) snprintf(buf, len, "%.*s", (int)(n - (size_t)(q - p)), q);
			return;
		}
		p += line + (p[line] == '\n');
	}
	if (remote && o->ro_status == 255)
		(void) snprintf(buf, len, "ssh failed (status 255)");
	else if (o->ro_status > 128)
		(void) snprintf(buf, len, "killed by signal %d", o->ro_status - 128);
	else
		(void) snprintf(buf, len, "failed with status %d", o->ro_status);
}

/* ---- the two sides' file systems ---- */

static int
rep_snap_cmp(const void *a, const void *b)
{
	const rep_snap_t *x = a, *y = b;
	if (x->rs_txg != y->rs_txg)
		return (x->rs_txg < y->rs_txg ? -1 : 1);
	return ((int)x->rs_bookmark - (int)y->rs_bookmark);  /* snapshot first */
}

/* One line of the listing (name, guid, createtxg) into f. */
static void
rep_parse_line(rep_fs_t *f, const char *fs, char *line)
{
	char *save = NULL;
	char *name = strtok_r(line, "\t", &save);
	char *guid = strtok_r(NULL, "\t", &save);
	char *txg = strtok_r(NULL, "\t", &save);
	size_t fl = strlen(fs);

	if (name == NULL)
		return;
	if (strcmp(name, "resume") == 0 && guid != NULL) {
		if (strcmp(guid, "-") != 0 && guid[0] != '\0')
			f->rf_token = tarn_strdup(guid);
		return;
	}
	if (txg == NULL)
		return;
	if (strcmp(name, fs) == 0) {
		f->rf_exists = true;
		return;
	}
	if (strncmp(name, fs, fl) != 0 || (name[fl] != '@' && name[fl] != '#'))
		return;         /* a child file system (-d 1) */
	rep_snap_t s;
	memset(&s, 0, sizeof (s));
	(void) snprintf(s.rs_name, sizeof (s.rs_name), "%s", name + fl + 1);
	s.rs_bookmark = name[fl] == '#';
	s.rs_guid = strtoull(guid, NULL, 10);
	s.rs_txg = strtoull(txg, NULL, 10);
	TARN_ARRAY_APPEND(&f->rf_snaps, rep_snap_t, s);
}

static void
rep_fs_fini(rep_fs_t *f)
{
	tarn_array_fini(&f->rf_snaps);
	free(f->rf_token);
	memset(f, 0, sizeof (*f));
}

/*
 * fs on a side: exists, its snapshots and bookmarks, its resume token
 * (asked with `get`, whose failure only means none: a build without the
 * property).  0 (a missing fs is not an error), or EIO with why.
 */
static int
rep_list(const rep_t *r, bool remote, const char *fs, rep_fs_t *f, char *why, size_t len)
{
	char *cmd = NULL;
	size_t clen = 0;
	FILE *c = open_memstream(&cmd, &clen);
	rep_out_t o;

	memset(f, 0, sizeof (*f));
	tarn_array_init(&f->rf_snaps, sizeof (rep_snap_t));
	rep_cmd(c, r, remote, "%T fs list -H -p -o name,guid,createtxg "
	    "-t filesystem,snapshot,bookmark -d 1 %Q || exit $?; printf 'resume\\t'; "
	    "%T fs get -H -o value receive_resume_token %Q 2>/dev/null || echo -", fs, fs);
	fclose(c);
	int e = rep_run(r, remote, cmd, &o);
	free(cmd);
	if (e != 0) {
		(void) snprintf(why, len, "%s", strerror(e));
		return (EIO);
	}
	if (o.ro_status != 0) {
		bool missing = o.ro_status == 1 && strstr(o.ro_err, "dataset does not exist");
		if (!missing)
			rep_why(&o, remote, why, len);
		rep_out_free(&o);
		return (missing ? 0 : EIO);
	}
	char *save = NULL;
	for (char *l = strtok_r(o.ro_out, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save))
		rep_parse_line(f, fs, l);
	rep_out_free(&o);
	if (tarn_array_len(&f->rf_snaps) > 1)      /* qsort of NULL, 0 is undefined */
		qsort(f->rf_snaps.ta_v, tarn_array_len(&f->rf_snaps), sizeof (rep_snap_t),
		    rep_snap_cmp);
	return (0);
}

static rep_snap_t *
rep_at(const rep_fs_t *f, size_t i)
{
	return (&TARN_ARRAY_AT(&f->rf_snaps, rep_snap_t, i));
}

/* The newest snapshot (not bookmark) of f, or NULL. */
static const rep_snap_t *
rep_newest(const rep_fs_t *f)
{
	for (size_t i = tarn_array_len(&f->rf_snaps); i-- > 0;)
		if (!rep_at(f, i)->rs_bookmark)
			return (rep_at(f, i));
	return (NULL);
}

/* A snapshot of f with this guid, or NULL. */
static const rep_snap_t *
rep_by_guid(const rep_fs_t *f, uint64_t guid, bool bookmarks)
{
	for (size_t i = tarn_array_len(&f->rf_snaps); i-- > 0;) {
		const rep_snap_t *s = rep_at(f, i);
		if (s->rs_guid == guid && (bookmarks || !s->rs_bookmark))
			return (s);
	}
	return (NULL);
}

/*
 * The base: the newest snapshot of src (or a bookmark, when no snapshot
 * of src has that guid) that a snapshot of dst has; *tsnap that snapshot
 * of dst.  NULL for none.
 */
static const rep_snap_t *
rep_common(const rep_fs_t *src, const rep_fs_t *dst, const rep_snap_t **tsnap)
{
	for (size_t i = tarn_array_len(&src->rf_snaps); i-- > 0;) {
		const rep_snap_t *s = rep_at(src, i);
		const rep_snap_t *t = rep_by_guid(dst, s->rs_guid, false);
		if (t == NULL)
			continue;
		*tsnap = t;
		const rep_snap_t *snap = rep_by_guid(src, s->rs_guid, false);
		return (snap != NULL ? snap : s);
	}
	return (NULL);
}

/* ---- one transfer: send here | receive on DST's side ---- */

typedef enum rep_pipe_res {
	REP_PIPE_OK = 0,
	REP_PIPE_SEND,          /* the send failed (why: its message) */
	REP_PIPE_RECV,          /* the receive side failed */
} rep_pipe_res_t;

/* Start the pair; their statuses in *ss, *rs, receive's stdout in rout. */
static int
rep_pipe_run(const rep_t *r, const char *send, const char *recv, FILE *serr, FILE *rout,
    FILE *rerr, int *ss, int *rs)
{
	int p[2], in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (in < 0 || pipe2(p, O_CLOEXEC) != 0) {
		int e = errno;
		if (in >= 0)
			close(in);
		return (e);
	}
	char **sav = rep_argv(r, false, send);
	char **rav = rep_argv(r, r->r_host != NULL, recv);
	fflush(NULL);
	pid_t ps = rep_spawn(sav, in, p[1], fileno(serr));
	pid_t pr = ps < 0 ? -1 : rep_spawn(rav, p[0], fileno(rout), fileno(rerr));
	int e = pr < 0 ? errno : 0;
	close(p[0]);
	close(p[1]);
	close(in);
	tarn_free(sav);
	tarn_free(rav);
	*ss = ps < 0 ? 127 : rep_wait(ps);
	*rs = pr < 0 ? 127 : rep_wait(pr);
	return (e);
}

/*
 * send | recv.  A send that failed by itself (not of the broken pipe the
 * receive left) is the cause; else the receive's failure.  why: the
 * cause's message.  *secs: how long the transfer took.
 */
static rep_pipe_res_t
rep_pipe(const rep_t *r, const char *send, const char *recv, char *why, size_t len, double *secs)
{
	FILE *serr = tmpfile(), *rout = tmpfile(), *rerr = tmpfile();
	struct timespec t0, t1;
	rep_out_t so, ro;
	int ss = 127, rs = 127, e = ENOMEM;

	memset(&so, 0, sizeof (so));
	memset(&ro, 0, sizeof (ro));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (serr != NULL && rout != NULL && rerr != NULL)
		e = rep_pipe_run(r, send, recv, serr, rout, rerr, &ss, &rs);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	so.ro_err = serr != NULL ? rep_slurp(serr) : NULL;
	ro.ro_out = rout != NULL ? rep_slurp(rout) : NULL;
	ro.ro_err = rerr != NULL ? rep_slurp(rerr) : NULL;
	so.ro_status = ss;
	ro.ro_status = rs;
	rep_pipe_res_t res = REP_PIPE_OK;
	if (e != 0) {
		(void) snprintf(why, len, "%s", strerror(e));
		res = REP_PIPE_SEND;
	} else if (ss != 0 && ss != 128 + SIGPIPE) {
		rep_why(&so, false, why, len);
		res = REP_PIPE_SEND;
	} else if (rs != 0) {
		rep_why(&ro, r->r_host != NULL, why, len);
		res = REP_PIPE_RECV;
	} else if (ss != 0) {
		rep_why(&so, false, why, len);
		res = REP_PIPE_SEND;
	}
	if (r->r_verbose && ro.ro_out != NULL)
		fputs(ro.ro_out, cli_out);
	rep_out_free(&so);
	rep_out_free(&ro);
	return (res);
}

/* ---- a file system's run ---- */

typedef struct rep_job {
	const char *j_src, *j_dst;
	char       *j_dstname;      /* DST as messages show it ("host:fs") */
	rep_fs_t    j_s, j_t;
	char        j_why[REP_WHY];
} rep_job_t;

static int
rep_fail(const rep_job_t *j, const char *why)
{
	fprintf(cli_err, "cannot replicate '%s' to '%s': %s\n", j->j_src, j->j_dstname, why);
	return (CLI_EXIT_ERROR);
}

/* Run a command line on a side; 0, or 1 after "cannot replicate" with why. */
static int
rep_side(const rep_t *r, const rep_job_t *j, bool remote, const char *cmd)
{
	rep_out_t o;
	char why[REP_WHY];

	if (r->r_verbose || r->r_dryrun)
		fprintf(cli_out, "%s%s: %s\n", r->r_dryrun ? "would run on " : "",
		    remote ? r->r_host : "local", cmd);
	if (r->r_dryrun)
		return (0);
	int e = rep_run(r, remote, cmd, &o);
	if (e != 0)
		(void) snprintf(why, sizeof (why), "%s", strerror(e));
	else if (o.ro_status != 0)
		rep_why(&o, remote, why, sizeof (why));
	int fail = e != 0 || o.ro_status != 0;
	rep_out_free(&o);
	return (fail ? rep_fail(j, why) : 0);
}

/* A command line built by rep_cmd, as a string (caller frees). */
#define REP_CMD(r, remote, ...) ({                              \
	char *_b = NULL;                                        \
	size_t _l = 0;                                          \
	FILE *_f = open_memstream(&_b, &_l);                    \
	rep_cmd(_f, (r), (remote), __VA_ARGS__);                \
	fclose(_f);                                             \
	_b;                                                     \
})

/*
 * A partial receive into DST: complete it with send -t.  When the send
 * cannot (what the token names is gone), drop the partial state
 * (receive -A) and go on.  Then DST is listed again.
 */
static int
rep_resume(const rep_t *r, rep_job_t *j)
{
	bool remote = r->r_host != NULL;
	char *send = REP_CMD(r, false, "%T fs send -t %Q", j->j_t.rf_token);
	char *recv = REP_CMD(r, remote, "%T fs receive -s -F %Q", j->j_dst);
	double secs = 0;
	int ret = 0;

	if (r->r_verbose || r->r_dryrun)
		fprintf(cli_out, "%sresume the interrupted receive into %s\n",
		    r->r_dryrun ? "would " : "", j->j_dstname);
	rep_pipe_res_t res = r->r_dryrun ? REP_PIPE_OK :
	    rep_pipe(r, send, recv, j->j_why, sizeof (j->j_why), &secs);
	if (res == REP_PIPE_RECV) {
		ret = rep_fail(j, j->j_why);
	} else if (res == REP_PIPE_SEND) {
		if (r->r_verbose)
			fprintf(cli_out, "cannot resume (%s): dropping the partial state of %s\n",
			    j->j_why, j->j_dstname);
		char *abort = REP_CMD(r, remote, "%T fs receive -A %Q", j->j_dst);
		ret = rep_side(r, j, remote, abort);
		free(abort);
	} else if (r->r_verbose && !r->r_dryrun) {
		fprintf(cli_out, "resumed into %s in %.3f s\n", j->j_dstname, secs);
	}
	free(send);
	free(recv);
	if (ret == 0 && !r->r_dryrun) {
		rep_fs_fini(&j->j_t);
		if (rep_list(r, remote, j->j_dst, &j->j_t, j->j_why, sizeof (j->j_why)) != 0)
			ret = rep_fail(j, j->j_why);
	}
	return (ret);
}

/* A replicate_ snapshot (bm: bookmark) of f not younger than upto. */
static bool
rep_ours(const rep_snap_t *s, bool bm, uint64_t upto)
{
	return (s->rs_bookmark == bm && s->rs_txg <= upto &&
	    strncmp(s->rs_name, REP_PREFIX, strlen(REP_PREFIX)) == 0);
}

/*
 * Append to cmd (after " && " when *any) the destroy of f's replicate_
 * snapshots and, with --bookmark, bookmarks beyond the newest keep: only
 * those not younger than upto (a rollback takes the younger ones), extra
 * (the one being received, NULL: none) counted as the newest, never
 * keep1 or keep2 (the one sent, the base).
 */
static void
rep_prune_cmd(const rep_t *r, bool remote, const char *fs, const rep_fs_t *f, uint64_t upto,
    const char *extra, const char *keep1, const char *keep2, FILE *cmd, bool *any)
{
	size_t n = tarn_array_len(&f->rf_snaps);

	for (int bm = 0; bm <= (r->r_bookmark ? 1 : 0); bm++) {
		size_t total = extra != NULL && !bm ? 1 : 0, k = 0;
		char *names = NULL;
		size_t nlen = 0;
		FILE *nf = open_memstream(&names, &nlen);
		for (size_t i = 0; i < n; i++)
			total += rep_ours(rep_at(f, i), bm, upto);
		for (size_t i = 0; i < n && total - k > (size_t)r->r_keep; i++) {
			const rep_snap_t *s = rep_at(f, i);
			if (!rep_ours(s, bm, upto))
				continue;
			k++;
			if ((keep1 != NULL && strcmp(s->rs_name, keep1) == 0) ||
			    (keep2 != NULL && strcmp(s->rs_name, keep2) == 0))
				continue;
			if (bm) {       /* bookmarks: one destroy each */
				rep_cmd(cmd, r, remote, "%s%T fs destroy ", *any ? " && " : "");
				rep_q(cmd, fs);
				fputc('#', cmd);
				rep_q(cmd, s->rs_name);
				*any = true;
			} else {
				fprintf(nf, "%s%s", ftell(nf) > 0 ? "," : "", s->rs_name);
			}
		}
		fclose(nf);
		if (nlen > 0) {
			rep_cmd(cmd, r, remote, "%s%T fs destroy ", *any ? " && " : "");
			rep_q(cmd, fs);
			fputc('@', cmd);
			rep_q(cmd, names);
			*any = true;
		}
		free(names);
	}
}

/* The snapshots of f (not bookmarks): whether it has any. */
static bool
rep_has_snaps(const rep_fs_t *f)
{
	return (rep_newest(f) != NULL);
}

/*
 * The receiving side's command line: rollback to the base when DST has
 * younger snapshots, receive, prune DST.
 */
static char *
rep_recv_cmd(const rep_t *r, const rep_job_t *j, const rep_snap_t *tbase, const char *newname)
{
	bool remote = r->r_host != NULL, any = false;
	uint64_t upto = UINT64_MAX;
	char *cmd = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&cmd, &len);
	const rep_snap_t *tnew = rep_newest(&j->j_t);

	if (tbase != NULL && tnew != NULL && tnew->rs_txg > tbase->rs_txg) {
		rep_cmd(f, r, remote, "%T fs rollback -r ");
		rep_q(f, j->j_dst);
		fputc('@', f);
		rep_q(f, tbase->rs_name);
		fputs(" && ", f);
		upto = tbase->rs_txg;
	}
	rep_cmd(f, r, remote, "%T fs receive -s -F %Q", j->j_dst);
	any = true;
	rep_prune_cmd(r, remote, j->j_dst, &j->j_t, upto, newname, newname,
	    tbase != NULL ? tbase->rs_name : NULL, f, &any);
	fclose(f);
	return (cmd);
}

/* The sending command line: full, or incremental from base. */
static char *
rep_send_cmd(const rep_t *r, const rep_job_t *j, const rep_snap_t *base, const char *newname)
{
	char *cmd = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&cmd, &len);

	rep_cmd(f, r, false, "%T fs send ");
	if (base != NULL) {
		/*
		 * -i: one stream, base to new; the snapshots taken between
		 * runs by others (sanoid's) stay on the source only
		 */
		fputs("-i ", f);
		rep_q(f, j->j_src);
		fputc(base->rs_bookmark ? '#' : '@', f);
		rep_q(f, base->rs_name);
		fputc(' ', f);
	}
	rep_q(f, j->j_src);
	fputc('@', f);
	rep_q(f, newname);
	fclose(f);
	return (cmd);
}

/*
 * Send SRC@newname (from the base when there is one) into DST.  *base,
 * *sent: what it was sent from (NULL: full) and whether anything was.
 */
static int
rep_transfer(const rep_t *r, rep_job_t *j, const char *newname, uint64_t newguid,
    const rep_snap_t **basep, bool *sent)
{
	const rep_snap_t *tbase = NULL;
	const rep_snap_t *base = rep_common(&j->j_s, &j->j_t, &tbase);
	double secs = 0;

	*basep = base;
	*sent = false;
	if (base == NULL && j->j_t.rf_exists && rep_has_snaps(&j->j_t)) {
		(void) snprintf(j->j_why, sizeof (j->j_why), "destination has snapshots (eg. %s@%s) "
		    "but none in common with the source; destroy them or choose another "
		    "destination", j->j_dst, rep_newest(&j->j_t)->rs_name);
		return (rep_fail(j, j->j_why));
	}
	if (base != NULL && base->rs_guid == newguid) {
		if (r->r_verbose || r->r_dryrun)
			fprintf(cli_out, "%s is up to date with %s@%s\n", j->j_dstname, j->j_src,
			    newname);
		return (0);
	}
	char *send = rep_send_cmd(r, j, base, newname);
	char *recv = rep_recv_cmd(r, j, tbase, newname);
	if (r->r_verbose || r->r_dryrun) {
		fprintf(cli_out, "%ssend %s %s@%s%s%s to %s\n", r->r_dryrun ? "would " : "",
		    base == NULL ? "full" : "incremental", j->j_src, newname,
		    base == NULL ? "" : base->rs_bookmark ? " from #" : " from @",
		    base == NULL ? "" : base->rs_name, j->j_dstname);
		if (r->r_verbose)
			fprintf(cli_out, "local: %s\n%s: %s\n", send,
			    r->r_host != NULL ? r->r_host : "local", recv);
	}
	rep_pipe_res_t res = r->r_dryrun ? REP_PIPE_OK :
	    rep_pipe(r, send, recv, j->j_why, sizeof (j->j_why), &secs);
	free(send);
	free(recv);
	if (res != REP_PIPE_OK)
		return (rep_fail(j, j->j_why));
	if (r->r_verbose && !r->r_dryrun)
		fprintf(cli_out, "sent %s@%s to %s in %.3f s\n", j->j_src, newname, j->j_dstname,
		    secs);
	*sent = !r->r_dryrun;
	return (0);
}

/* After the transfer: --bookmark's bookmark, and the source's pruning. */
static int
rep_source_after(const rep_t *r, rep_job_t *j, const char *newname, const rep_snap_t *base)
{
	char *cmd = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&cmd, &len);
	bool any = false;

	if (r->r_bookmark) {
		bool have = false;
		for (size_t i = 0; i < tarn_array_len(&j->j_s.rf_snaps); i++)
			have |= rep_at(&j->j_s, i)->rs_bookmark &&
			    strcmp(rep_at(&j->j_s, i)->rs_name, newname) == 0;
		if (!have) {
			rep_cmd(f, r, false, "%T fs bookmark ");
			rep_q(f, j->j_src);
			fputc('@', f);
			rep_q(f, newname);
			fputc(' ', f);
			rep_q(f, j->j_src);
			fputc('#', f);
			rep_q(f, newname);
			any = true;
		}
	}
	rep_prune_cmd(r, false, j->j_src, &j->j_s, UINT64_MAX, NULL, newname,
	    base != NULL ? base->rs_name : NULL, f, &any);
	fclose(f);
	int ret = any ? rep_side(r, j, false, cmd) : 0;
	free(cmd);
	return (ret);
}

/* DST pruned when nothing was received (receive's command line does it otherwise). */
static int
rep_target_prune(const rep_t *r, rep_job_t *j, const char *newname)
{
	char *cmd = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&cmd, &len);
	bool any = false;

	rep_prune_cmd(r, r->r_host != NULL, j->j_dst, &j->j_t, UINT64_MAX, NULL, newname, NULL,
	    f, &any);
	fclose(f);
	int ret = any ? rep_side(r, j, r->r_host != NULL, cmd) : 0;
	free(cmd);
	return (ret);
}

/*
 * One file system: src (here) into dst.  pre: dst as listed already
 * (taken over), or NULL.
 */
static int
rep_one(const rep_t *r, const char *src, const char *dst, rep_fs_t *pre)
{
	rep_job_t j;
	int ret;

	memset(&j, 0, sizeof (j));
	j.j_src = src;
	j.j_dst = dst;
	if (asprintf(&j.j_dstname, "%s%s%s", r->r_host != NULL ? r->r_host : "",
	    r->r_host != NULL ? ":" : "", dst) < 0)
		return (cli_cannot("replicate", src, ENOMEM, NULL));
	if (rep_list(r, false, src, &j.j_s, j.j_why, sizeof (j.j_why)) != 0) {
		ret = rep_fail(&j, j.j_why);
		goto out;
	}
	if (!j.j_s.rf_exists) {
		fprintf(cli_err, "cannot replicate '%s': dataset does not exist\n", src);
		ret = CLI_EXIT_ERROR;
		goto out;
	}
	if (pre != NULL) {
		j.j_t = *pre;
		memset(pre, 0, sizeof (*pre));
	} else if (rep_list(r, r->r_host != NULL, dst, &j.j_t, j.j_why, sizeof (j.j_why)) != 0) {
		ret = rep_fail(&j, j.j_why);
		goto out;
	}
	if (j.j_t.rf_token != NULL && (ret = rep_resume(r, &j)) != 0)
		goto out;
	/* what to send: this run's snapshot, else (--no-snapshot) the newest */
	const rep_snap_t *newest = rep_newest(&j.j_s);
	const char *newname = r->r_snapshot ? r->r_snapname : newest != NULL ?
	    newest->rs_name : NULL;
	uint64_t newguid = 0;
	if (newname == NULL) {
		fprintf(cli_err, "cannot replicate '%s': it has no snapshot to send "
		    "(--no-snapshot)\n", src);
		ret = CLI_EXIT_ERROR;
		goto out;
	}
	if (newest != NULL && strcmp(newest->rs_name, newname) == 0)
		newguid = newest->rs_guid;
	else if (!r->r_dryrun) {
		ret = rep_fail(&j, "the new snapshot is not the newest of the source");
		goto out;
	}
	const rep_snap_t *base;
	bool sent;
	if ((ret = rep_transfer(r, &j, newname, newguid, &base, &sent)) != 0)
		goto out;
	ret = rep_source_after(r, &j, newname, base);
	if (ret == 0 && !sent)
		ret = rep_target_prune(r, &j, newname);
out:
	rep_fs_fini(&j.j_s);
	rep_fs_fini(&j.j_t);
	free(j.j_dstname);
	return (ret);
}

/* ---- the command ---- */

/*
 * One ssh connection for the run: the first ssh command becomes the
 * master (ControlMaster=auto, its socket in a private directory) and the
 * next ones ride on it, so a run costs one ssh handshake; the master goes
 * at the end (-O exit), or 10 s after its last session if this command
 * was killed.  Not when the user's --ssh-opt chose multiplexing.
 */
static void
rep_cm_open(rep_t *r)
{
	char dir[PATH_MAX - 8];      /* room for "/cm" */
	const char *tmp = getenv("TMPDIR");

	for (int i = 0; i < r->r_nsshopt; i++)
		if (strncasecmp(r->r_sshopt[i], "ControlPath", 11) == 0 ||
		    strncasecmp(r->r_sshopt[i], "ControlMaster", 13) == 0)
			return;
	if (snprintf(dir, sizeof (dir), "%s/tarn-replicate.XXXXXX",
	    tmp != NULL && tmp[0] == '/' ? tmp : "/tmp") >= (int)sizeof (dir) ||
	    mkdtemp(dir) == NULL)
		return;         /* no multiplexing: each command connects */
	(void) snprintf(r->r_cm, sizeof (r->r_cm), "%s/cm", dir);
}

static void
rep_cm_close(rep_t *r)
{
	if (r->r_cm[0] == '\0')
		return;
	if (access(r->r_cm, F_OK) == 0) {
		char *av[] = { (char *)"ssh", (char *)"-S", r->r_cm, (char *)"-O",
		    (char *)"exit", (char *)r->r_host, NULL };
		FILE *out = tmpfile();
		int in = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (out != NULL && in >= 0) {
			pid_t pid = rep_spawn(av, in, in, fileno(out));
			if (pid > 0)
				(void) rep_wait(pid);
		}
		if (out != NULL)
			fclose(out);
		if (in >= 0)
			close(in);
		(void) unlink(r->r_cm);
	}
	char *slash = strrchr(r->r_cm, '/');
	*slash = '\0';
	(void) rmdir(r->r_cm);
	r->r_cm[0] = '\0';
}

/*
 * The file systems of the run: src alone, or (-r) its tree, parents
 * first; a missing src is said here, before anything changed.
 */
static int
rep_sources(const rep_t *r, const char *src, tarn_array_t *names)
{
	rep_out_t o;
	char why[REP_WHY];

	char *cmd = REP_CMD(r, false, "%T fs list -H -o name -t filesystem %s%Q",
	    r->r_recursive ? "-r " : "", src);
	int e = rep_run(r, false, cmd, &o);
	free(cmd);
	if (e != 0 || o.ro_status != 0) {
		if (e != 0)
			(void) snprintf(why, sizeof (why), "%s", strerror(e));
		else
			rep_why(&o, false, why, sizeof (why));
		fprintf(cli_err, "cannot replicate '%s': %s\n", src, why);
		rep_out_free(&o);
		return (CLI_EXIT_ERROR);
	}
	char *save = NULL;
	for (char *l = strtok_r(o.ro_out, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save))
		TARN_ARRAY_APPEND(names, char *, tarn_strdup(l));
	rep_out_free(&o);
	return (0);
}

/* This run's snapshot of src (-r: of its tree, at once). */
static int
rep_snapshot(const rep_t *r, const char *src)
{
	rep_out_t o;
	char why[REP_WHY];
	char *cmd = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&cmd, &len);

	rep_cmd(f, r, false, "%T fs snapshot %s", r->r_recursive ? "-r " : "");
	rep_q(f, src);
	fputc('@', f);
	rep_q(f, r->r_snapname);
	fclose(f);
	if (r->r_verbose || r->r_dryrun)
		fprintf(cli_out, "%stake %s@%s%s\n", r->r_dryrun ? "would " : "", src,
		    r->r_snapname, r->r_recursive ? " (recursive)" : "");
	int e = r->r_dryrun ? 0 : rep_run(r, false, cmd, &o);
	free(cmd);
	if (r->r_dryrun)
		return (0);
	if (e != 0 || o.ro_status != 0) {
		if (e != 0)
			(void) snprintf(why, sizeof (why), "%s", strerror(e));
		else
			rep_why(&o, false, why, sizeof (why));
		fprintf(cli_err, "cannot replicate '%s': %s\n", src, why);
		rep_out_free(&o);
		return (CLI_EXIT_ERROR);
	}
	rep_out_free(&o);
	return (0);
}

/* replicate_<UTC time, to the millisecond>: names sort as times do. */
static void
rep_snapname(rep_t *r)
{
	struct timespec ts;
	struct tm tm;
	char stamp[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof (stamp), "%Y%m%dT%H%M%S", &tm);
	(void) snprintf(r->r_snapname, sizeof (r->r_snapname), REP_PREFIX "%s.%03ldZ", stamp,
	    ts.tv_nsec / 1000000);
}

/* A file system's name as given: not empty, no snapshot or bookmark. */
static int
rep_check_fs(const char *what, const char *name)
{
	if (name[0] == '\0' || name[0] == '/' || name[0] == '-')
		return (cli_fs_usage_error("replicate", "invalid %s name '%s'", what, name));
	if (strpbrk(name, "@#") != NULL)
		return (cli_fs_usage_error("replicate", "invalid %s name '%s': a file system, "
		    "not a snapshot or bookmark", what, name));
	return (0);
}

/* DST: "[user@]host:fs" (no '/' before the ':') or a local "fs". */
static int
rep_parse_dst(rep_t *r, char *arg, const char **dst)
{
	char *colon = strchr(arg, ':');
	char *slash = strchr(arg, '/');

	*dst = arg;
	if (colon != NULL && (slash == NULL || colon < slash)) {
		*colon = '\0';
		r->r_host = arg;
		*dst = colon + 1;
		if (arg[0] == '\0' || arg[0] == '-' || arg[strlen(arg) - 1] == '@')
			return (cli_fs_usage_error("replicate", "invalid host '%s'", arg));
	}
	return (rep_check_fs("destination", *dst));
}

static int
rep_options(rep_t *r, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "recursive", no_argument, NULL, 'r' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "no-snapshot", no_argument, NULL, 'S' },
		{ "keep", required_argument, NULL, 'k' },
		{ "bookmark", no_argument, NULL, 'b' },
		{ "ssh-port", required_argument, NULL, 'p' },
		{ "ssh-key", required_argument, NULL, 'i' },
		{ "ssh-opt", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 }
	};
	int c;
	char *end;

	while ((c = getopt_long(argc, argv, ":rnv", longopts, NULL)) != -1) {
		switch (c) {
		case 'r': r->r_recursive = true; break;
		case 'n': r->r_dryrun = true; break;
		case 'v': r->r_verbose = true; break;
		case 'S': r->r_snapshot = false; break;
		case 'b': r->r_bookmark = true; break;
		case 'k':
			errno = 0;
			r->r_keep = strtol(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || end == optarg || r->r_keep < 1 ||
			    r->r_keep > 1000000)
				return (cli_fs_usage_error("replicate", "invalid --keep '%s': "
				    "a number of snapshots, at least 1", optarg));
			break;
		case 'p':
			if (strtol(optarg, &end, 10) < 1 || *end != '\0' ||
			    strtol(optarg, NULL, 10) > 65535)
				return (cli_fs_usage_error("replicate", "invalid --ssh-port '%s'",
				    optarg));
			r->r_port = optarg;
			break;
		case 'i': r->r_key = optarg; break;
		case 'o':
			if (r->r_nsshopt == REP_MAX_SSHOPT)
				return (cli_fs_usage_error("replicate", "too many --ssh-opt"));
			r->r_sshopt[r->r_nsshopt++] = optarg;
			break;
		default:
			if (c == '?' && optopt == 0)
				return (cli_fs_usage_error("replicate", "invalid option '%s'",
				    argv[optind - 1]));
			return (cli_fs_bad_option("replicate", c, optopt));
		}
	}
	return (0);
}

int
cli_fs_replicate(int argc, char **argv)
{
	rep_t r;
	const char *dst;
	tarn_array_t names = TARN_ARRAY_INIT(char *);
	int ret;

	memset(&r, 0, sizeof (r));
	r.r_keep = 10;
	r.r_snapshot = true;
	if ((ret = rep_options(&r, argc, argv)) != 0)
		return (ret);
	if (argc - optind < 2)
		return (cli_fs_usage_error("replicate", "missing %s argument",
		    argc - optind == 0 ? "source" : "destination"));
	if (argc - optind > 2)
		return (cli_fs_usage_error("replicate", "too many arguments"));
	const char *src = argv[optind];
	if ((ret = rep_check_fs("source", src)) != 0 ||
	    (ret = rep_parse_dst(&r, argv[optind + 1], &dst)) != 0)
		return (ret);
	ssize_t n = readlink("/proc/self/exe", r.r_self, sizeof (r.r_self) - 1);
	if (n <= 0) {
		fprintf(cli_err, "cannot replicate '%s': cannot find this program: %s\n", src,
		    strerror(errno));
		return (CLI_EXIT_ERROR);
	}
	r.r_self[n] = '\0';
	rep_snapname(&r);
	if ((ret = rep_sources(&r, src, &names)) != 0)
		return (ret);
	if (r.r_host != NULL)
		rep_cm_open(&r);
	/* DST's side is asked before the snapshot: unreachable, nothing changes */
	rep_fs_t top;
	char why[REP_WHY];
	if (rep_list(&r, r.r_host != NULL, dst, &top, why, sizeof (why)) != 0) {
		fprintf(cli_err, "cannot replicate '%s' to '%s%s%s': %s\n", src,
		    r.r_host != NULL ? r.r_host : "", r.r_host != NULL ? ":" : "", dst, why);
		ret = CLI_EXIT_ERROR;
	}
	if (ret == 0 && r.r_snapshot)
		ret = rep_snapshot(&r, src);
	/* with -r, a file system that fails does not stop the others */
	bool failed = ret != 0;
	for (size_t i = 0; ret == 0 && i < tarn_array_len(&names); i++) {
		const char *fs = TARN_ARRAY_AT(&names, char *, i);
		char child[2 * DSL_NAME_MAX];
		(void) snprintf(child, sizeof (child), "%s%s", dst, fs + strlen(src));
		failed |= rep_one(&r, fs, child, i == 0 ? &top : NULL) != 0;
	}
	rep_fs_fini(&top);
	rep_cm_close(&r);
	ret = failed ? CLI_EXIT_ERROR : CLI_EXIT_OK;
	for (size_t i = 0; i < tarn_array_len(&names); i++)
		tarn_free(TARN_ARRAY_AT(&names, char *, i));
	tarn_array_fini(&names);
	return (ret);
}
