/*
 * dsl_stream.c — the records of a send stream: writing them with their
 * checksums, and reading them back verified.
 *
 * Theory.  A stream crosses pipes, ssh and files, where bytes can be
 * flipped, lost or cut off, and a receive must never apply a record it
 * cannot trust (docs/FORMAT.md "Send streams" has the layout).  Each
 * record is a 96-byte header and a payload.  Three things catch damage
 * at the record where it happens:
 *  - the record checksum (XXH3-64 of the header, with the field zeroed,
 *    seeded with the payload's XXH3-64): any flipped bit in the record;
 *  - the sequence number: a record lost or repeated whole;
 *  - the running checksum, carried in each header, of every record
 *    before it (each record's checksum chained into a seed): a gap or a
 *    splice that happens to keep numbering.
 * A cut-off stream shows as the end of input inside a record, or before
 * an end record.  XXH3 runs at memory speed, so the checks cost little
 * next to the data's own trip through the pool.
 *
 * Buffering.  Small records are gathered into a 1 MiB buffer and go out
 * in one write; a large payload is written from the caller's buffer
 * after the header, without a copy.  Reads go through a buffer of the
 * same size.
 */
#include "dsl_impl.h"

#include <endian.h>
#include <stdarg.h>
#include <xxhash.h>

#define DSL_STREAM_BUF (1 * MiB)

struct dsl_stream_out {
	dsl_stream_write_fn_t so_fn;
	void    *so_arg;
	uint64_t so_bytes;            /* handed to so_fn */
	uint64_t so_seq;
	uint64_t so_running;
	uint8_t *so_buf;
	size_t   so_len;
	int      so_error;            /* sticky */
};

struct dsl_stream_in {
	dsl_stream_read_fn_t si_fn;
	void    *si_arg;
	uint64_t si_bytes;            /* taken by records */
	uint64_t si_seq;
	uint64_t si_running;
	uint8_t *si_buf;              /* read buffer */
	size_t   si_off, si_len;
	bool     si_eof;
	uint8_t *si_payload;          /* the current record's payload */
	size_t   si_payload_cap;
	bool     si_peeked;           /* si_hdr holds a record not yet taken */
	uint64_t si_rec_start;        /* stream offset of the last record read */
	void   (*si_wait_fn)(void *); /* called before a read that may block */
	void    *si_wait_arg;
	dsl_drr_t si_hdr;
	int      si_error;            /* sticky */
	char     si_errmsg[256];
};

static const char *const dsl_drr_names[DSL_DRR_NTYPES] = {
	[0] = "?", [DSL_DRR_BEGIN] = "BEGIN", [DSL_DRR_OBJECT] = "OBJECT",
	[DSL_DRR_FREEOBJECTS] = "FREEOBJECTS", [DSL_DRR_WRITE] = "WRITE",
	[DSL_DRR_FREE] = "FREE", [DSL_DRR_END] = "END", [DSL_DRR_PACKAGE] = "PACKAGE",
	[DSL_DRR_PACKAGE_END] = "PACKAGE_END",
};

const char *
dsl_drr_type_name(int type)
{
	return (type > 0 && type < DSL_DRR_NTYPES ? dsl_drr_names[type] : "unknown type");
}

static uint64_t
dsl_drr_cksum(const dsl_drr_t *h, const void *payload)
{
	dsl_drr_t c = *h;
	c.drr_cksum = 0;
	uint64_t seed = XXH3_64bits(payload != NULL ? payload : "", h->drr_plen);
	return (XXH3_64bits_withSeed(&c, sizeof (c), seed));
}

static uint64_t
dsl_drr_chain(uint64_t running, uint64_t cksum)
{
	return (XXH3_64bits_withSeed(&cksum, sizeof (cksum), running));
}

/* ---- writing ---- */

dsl_stream_out_t *
dsl_stream_out_create(dsl_stream_write_fn_t fn, void *arg)
{
	dsl_stream_out_t *so = tarn_alloc(sizeof (*so));
	so->so_fn = fn;
	so->so_arg = arg;
	so->so_buf = tarn_alloc(DSL_STREAM_BUF);
	return (so);
}

uint64_t
dsl_stream_out_bytes(const dsl_stream_out_t *so)
{
	return (so->so_bytes + so->so_len);
}

void
dsl_stream_out_destroy(dsl_stream_out_t *so)
{
	if (so == NULL)
		return;
	tarn_free(so->so_buf);
	tarn_free(so);
}

static int
dsl_out_write(dsl_stream_out_t *so, const void *buf, size_t len)
{
	if (so->so_error != 0)
		return (so->so_error);
	int e = len > 0 ? so->so_fn(so->so_arg, buf, len) : 0;
	if (e != 0)
		so->so_error = e;
	else
		so->so_bytes += len;
	return (e);
}

int
dsl_stream_flush(dsl_stream_out_t *so)
{
	int e = dsl_out_write(so, so->so_buf, so->so_len);
	so->so_len = 0;
	return (e);
}

int
dsl_stream_put(dsl_stream_out_t *so, dsl_drr_t *h, const void *payload)
{
	if (so->so_error != 0)
		return (so->so_error);
	if (h->drr_plen > DSL_DRR_MAX_PAYLOAD)
		return (SET_ERROR(EINVAL));
	h->drr_magic = DSL_DRR_MAGIC;
	h->drr_pad = 0;
	h->drr_seq = so->so_seq++;
	h->drr_running = so->so_running;
	h->drr_cksum = dsl_drr_cksum(h, payload);
	so->so_running = dsl_drr_chain(so->so_running, h->drr_cksum);
	size_t need = sizeof (*h) + h->drr_plen;
	int e = 0;
	if (so->so_len + need > DSL_STREAM_BUF)
		e = dsl_stream_flush(so);
	if (e == 0 && need <= DSL_STREAM_BUF / 4) {
		memcpy(so->so_buf + so->so_len, h, sizeof (*h));
		if (h->drr_plen > 0)
			memcpy(so->so_buf + so->so_len + sizeof (*h), payload, h->drr_plen);
		so->so_len += need;
	} else if (e == 0) {
		memcpy(so->so_buf + so->so_len, h, sizeof (*h));
		so->so_len += sizeof (*h);
		e = dsl_stream_flush(so);
		if (e == 0)
			e = dsl_out_write(so, payload, h->drr_plen);
	}
	if (e == 0 && (h->drr_type == DSL_DRR_END || h->drr_type == DSL_DRR_PACKAGE_END))
		e = dsl_stream_flush(so);
	return (e);
}

int
dsl_stream_put_package(dsl_stream_out_t *so, const void *payload, size_t len)
{
	if (len > 16 * MiB)
		return (SET_ERROR(E2BIG));
	dsl_drr_t h = { .drr_type = DSL_DRR_PACKAGE, .drr_plen = (uint32_t)len };
	h.drr_u[0] = DSL_STREAM_VERSION;
	return (dsl_stream_put(so, &h, payload));
}

int
dsl_stream_put_package_end(dsl_stream_out_t *so)
{
	dsl_drr_t h = { .drr_type = DSL_DRR_PACKAGE_END };
	return (dsl_stream_put(so, &h, NULL));
}

/* ---- reading ---- */

dsl_stream_in_t *
dsl_stream_in_create(dsl_stream_read_fn_t fn, void *arg)
{
	dsl_stream_in_t *si = tarn_alloc(sizeof (*si));
	si->si_fn = fn;
	si->si_arg = arg;
	si->si_buf = tarn_alloc(DSL_STREAM_BUF);
	/* never NULL, even for records without a payload (memcpy, strnlen of 0 bytes) */
	si->si_payload_cap = 128 * KiB;
	si->si_payload = tarn_alloc(si->si_payload_cap);
	return (si);
}

uint64_t
dsl_stream_in_bytes(const dsl_stream_in_t *si)
{
	return (si->si_bytes);
}

void
dsl_stream_in_set_wait(dsl_stream_in_t *si, void (*fn)(void *), void *arg)
{
	si->si_wait_fn = fn;
	si->si_wait_arg = arg;
}

uint64_t
dsl_stream_in_record_start(const dsl_stream_in_t *si)
{
	return (si->si_rec_start);
}

uint64_t
dsl_stream_in_seq(const dsl_stream_in_t *si)
{
	return (si->si_seq);
}

void
dsl_stream_in_destroy(dsl_stream_in_t *si)
{
	if (si == NULL)
		return;
	tarn_free(si->si_buf);
	tarn_free(si->si_payload);
	tarn_free(si);
}

/* Read up to len bytes into dst; returns how many (short only at the end), or -errno. */
static ssize_t
dsl_in_read(dsl_stream_in_t *si, void *dst, size_t len)
{
	uint8_t *d = dst;
	size_t got = 0;
	while (got < len) {
		if (si->si_off < si->si_len) {
			size_t n = MIN(len - got, si->si_len - si->si_off);
			memcpy(d + got, si->si_buf + si->si_off, n);
			si->si_off += n;
			got += n;
			continue;
		}
		if (si->si_eof)
			break;
		if (si->si_wait_fn != NULL)
			si->si_wait_fn(si->si_wait_arg);
		/* big reads go straight to the destination */
		bool direct = len - got >= DSL_STREAM_BUF / 2;
		ssize_t r = si->si_fn(si->si_arg, direct ? d + got : si->si_buf,
		    direct ? len - got : DSL_STREAM_BUF);
		if (r < 0)
			return (r);
		if (r == 0) {
			si->si_eof = true;
			break;
		}
		if (direct) {
			got += (size_t)r;
		} else {
			si->si_off = 0;
			si->si_len = (size_t)r;
		}
	}
	si->si_bytes += got;
	return ((ssize_t)got);
}

static int
dsl_in_fail(dsl_stream_in_t *si, int e, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int
dsl_in_fail(dsl_stream_in_t *si, int e, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	(void) vsnprintf(si->si_errmsg, sizeof (si->si_errmsg), fmt, ap);
	va_end(ap);
	si->si_error = e;
	(void) snprintf(err, errlen, "%s", si->si_errmsg);
	return (e);
}

/* Read and verify the next record into si_hdr / si_payload. */
static int
dsl_in_next(dsl_stream_in_t *si, char *err, size_t errlen)
{
	dsl_drr_t *h = &si->si_hdr;
	uint64_t n = si->si_seq;
	si->si_rec_start = si->si_bytes;
	ssize_t r = dsl_in_read(si, h, sizeof (*h));
	if (r < 0)
		return (dsl_in_fail(si, (int)-r, err, errlen, "cannot read the stream: %s",
		    strerror((int)-r)));
	if (r == 0) {
		memset(h, 0, sizeof (*h));
		return (0);               /* the end of input, between records */
	}
	if ((size_t)r < sizeof (*h))
		return (dsl_in_fail(si, SET_ERROR(EBADMSG), err, errlen,
		    "stream ends early: record %" PRIu64 " is cut short in its header", n));
	if (h->drr_magic != DSL_DRR_MAGIC)
		return (dsl_in_fail(si, SET_ERROR(EBADMSG), err, errlen, n == 0 ?
		    "not a Tarn send stream (record 0 has no stream magic)" :
		    "record %" PRIu64 ": bad record header (no stream magic)", n));
	const char *tn = dsl_drr_type_name(h->drr_type);
	if (h->drr_plen > DSL_DRR_MAX_PAYLOAD)
		return (dsl_in_fail(si, SET_ERROR(EBADMSG), err, errlen,
		    "record %" PRIu64 " (%s): payload length %u is impossible", n, tn,
		    h->drr_plen));
	if (si->si_payload_cap < h->drr_plen) {
		tarn_free(si->si_payload);
		si->si_payload_cap = MAX(h->drr_plen, 128 * KiB);
		si->si_payload = tarn_alloc(si->si_payload_cap);
	}
	r = dsl_in_read(si, si->si_payload, h->drr_plen);
	if (r < 0)
		return (dsl_in_fail(si, (int)-r, err, errlen, "cannot read the stream: %s",
		    strerror((int)-r)));
	if ((size_t)r < h->drr_plen)
		return (dsl_in_fail(si, SET_ERROR(EBADMSG), err, errlen,
		    "stream ends early: record %" PRIu64 " (%s) is cut short", n, tn));
	if (dsl_drr_cksum(h, si->si_payload) != h->drr_cksum)
		return (dsl_in_fail(si, SET_ERROR(EBADMSG), err, errlen,
		    "record %" PRIu64 " (%s): checksum mismatch (the stream is damaged)", n, tn));
	if (h->drr_seq != n)
		return (dsl_in_fail(si, SET_ERROR(EBADMSG), err, errlen,
		    "record %" PRIu64 " (%s): out of sequence (numbered %" PRIu64 "; records "
		    "missing or repeated)", n, tn, h->drr_seq));
	if (h->drr_running != si->si_running)
		return (dsl_in_fail(si, SET_ERROR(EBADMSG), err, errlen,
		    "record %" PRIu64 " (%s): running checksum mismatch (bytes missing or "
		    "changed before it)", n, tn));
	if (h->drr_type == 0 || h->drr_type >= DSL_DRR_NTYPES)
		return (dsl_in_fail(si, SET_ERROR(EBADMSG), err, errlen,
		    "record %" PRIu64 ": unknown record type %u", n, h->drr_type));
	if ((h->drr_type == DSL_DRR_BEGIN || h->drr_type == DSL_DRR_PACKAGE) &&
	    h->drr_u[DRB_VERSION] > DSL_STREAM_VERSION)
		return (dsl_in_fail(si, SET_ERROR(ENOTSUP), err, errlen,
		    "record %" PRIu64 " (%s): stream format version %" PRIu64 " is newer than "
		    "this Tarn reads (%d)", n, tn, h->drr_u[DRB_VERSION], DSL_STREAM_VERSION));
	si->si_running = dsl_drr_chain(si->si_running, h->drr_cksum);
	si->si_seq++;
	return (0);
}

/* The next record in si_hdr (read unless a peek holds it), or the sticky error. */
static int
dsl_in_fill(dsl_stream_in_t *si, char *err, size_t errlen)
{
	if (si->si_error != 0) {
		(void) snprintf(err, errlen, "%s", si->si_errmsg);
		return (si->si_error);
	}
	return (si->si_peeked ? 0 : dsl_in_next(si, err, errlen));
}

int
dsl_stream_get(dsl_stream_in_t *si, dsl_drr_t *h, const void **payload, char *err,
    size_t errlen)
{
	int e = dsl_in_fill(si, err, errlen);
	if (e != 0)
		return (e);
	si->si_peeked = false;
	*h = si->si_hdr;
	*payload = si->si_payload;
	if (h->drr_magic == 0 && h->drr_type == 0) {
		(void) snprintf(err, errlen, si->si_seq == 0 ? "the stream is empty" :
		    "stream ends early: after record %" PRIu64 ", before its end record",
		    si->si_seq - 1);
		return (SET_ERROR(EBADMSG));
	}
	return (0);
}

int
dsl_stream_peek(dsl_stream_in_t *si, dsl_stream_kind_t *kind, dsl_stream_begin_t *begin,
    char *err, size_t errlen)
{
	err[0] = '\0';
	int e = dsl_in_fill(si, err, errlen);
	if (e != 0)
		return (e);
	si->si_peeked = true;
	const dsl_drr_t *h = &si->si_hdr;
	switch (h->drr_magic == 0 ? 0 : h->drr_type) {
	case 0:
		*kind = DSL_STREAM_EOF;
		si->si_peeked = false;
		return (0);
	case DSL_DRR_BEGIN:
		*kind = DSL_STREAM_BEGIN;
		break;
	case DSL_DRR_PACKAGE:
		*kind = DSL_STREAM_PACKAGE;
		return (0);
	case DSL_DRR_PACKAGE_END:
		*kind = DSL_STREAM_PACKAGE_END;
		return (0);
	default:
		(void) snprintf(err, errlen, "record %" PRIu64 " (%s): a substream must start "
		    "with a BEGIN record", si->si_seq - 1, dsl_drr_type_name(h->drr_type));
		return (SET_ERROR(EBADMSG));
	}
	if (begin == NULL)
		return (0);
	memset(begin, 0, sizeof (*begin));
	size_t nl = strnlen((const char *)si->si_payload, h->drr_plen);
	if (nl == 0 || nl >= h->drr_plen || nl >= sizeof (begin->dsb_toname)) {
		(void) snprintf(err, errlen, "record %" PRIu64 " (BEGIN): no snapshot name",
		    si->si_seq - 1);
		return (SET_ERROR(EBADMSG));
	}
	memcpy(begin->dsb_toname, si->si_payload, nl + 1);
	begin->dsb_toguid = h->drr_u[DRB_TOGUID];
	begin->dsb_fromguid = h->drr_u[DRB_FROMGUID];
	begin->dsb_creation = h->drr_u[DRB_CREATION];
	begin->dsb_features = h->drr_u[DRB_FEATURES];
	begin->dsb_resume_obj = h->drr_u[DRB_RESUME_OBJ];
	begin->dsb_resume_off = h->drr_u[DRB_RESUME_OFF];
	begin->dsb_has_props = (h->drr_flags & DSL_DRR_F_PROPS) != 0;
	begin->dsb_clone = (h->drr_flags & DSL_DRR_F_CLONE) != 0;
	begin->dsb_saved = (begin->dsb_features & DSL_SEND_SAVED) != 0;
	begin->dsb_resume = !begin->dsb_saved && ((h->drr_flags & DSL_DRR_F_RESUME) != 0 ||
	    begin->dsb_resume_obj != 0 || begin->dsb_resume_off != 0);
	if ((begin->dsb_features & ~(uint64_t)DSL_STREAM_FEATURES) != 0) {
		(void) snprintf(err, errlen, "stream has unsupported feature, feature flags = "
		    "%#" PRIx64, begin->dsb_features);
		return (SET_ERROR(ENOTSUP));
	}
	if (begin->dsb_saved) {
		/* after the name: the interrupted stream's flags and bytes (le64 each) */
		const uint8_t *x = (const uint8_t *)si->si_payload + nl + 1;
		if (h->drr_plen != nl + 1 + 16 || begin->dsb_has_props || begin->dsb_resume) {
			(void) snprintf(err, errlen, "record %" PRIu64 " (BEGIN): a saved "
			    "state's begin record is malformed", si->si_seq - 1);
			return (SET_ERROR(EBADMSG));
		}
		uint64_t v[2];
		memcpy(v, x, sizeof (v));
		begin->dsb_saved_flags = le64toh(v[0]);
		begin->dsb_saved_bytes = le64toh(v[1]);
	}
	return (0);
}

int
dsl_stream_get_package(dsl_stream_in_t *si, char **payload, size_t *len, char *err,
    size_t errlen)
{
	dsl_drr_t h;
	const void *p;
	int e = dsl_stream_get(si, &h, &p, err, errlen);
	if (e == 0 && h.drr_type != DSL_DRR_PACKAGE) {
		(void) snprintf(err, errlen, "record %" PRIu64 " (%s): expected a PACKAGE record",
		    h.drr_seq, dsl_drr_type_name(h.drr_type));
		e = SET_ERROR(EBADMSG);
	}
	if (e != 0)
		return (e);
	*payload = tarn_alloc((size_t)h.drr_plen + 1);
	memcpy(*payload, p, h.drr_plen);
	*len = h.drr_plen;
	return (0);
}

int
dsl_stream_skip(dsl_stream_in_t *si, char *err, size_t errlen)
{
	dsl_drr_t h;
	const void *p;
	int e = dsl_stream_get(si, &h, &p, err, errlen);
	if (e == 0 && h.drr_type != DSL_DRR_BEGIN) {
		(void) snprintf(err, errlen, "record %" PRIu64 " (%s): a substream must start "
		    "with a BEGIN record", h.drr_seq, dsl_drr_type_name(h.drr_type));
		e = SET_ERROR(EBADMSG);
	}
	while (e == 0) {
		if ((e = dsl_stream_get(si, &h, &p, err, errlen)) != 0)
			break;
		if (h.drr_type == DSL_DRR_END)
			return (0);
		if (h.drr_type == DSL_DRR_BEGIN || h.drr_type == DSL_DRR_PACKAGE ||
		    h.drr_type == DSL_DRR_PACKAGE_END) {
			(void) snprintf(err, errlen, "record %" PRIu64 " (%s): unexpected inside a "
			    "substream", h.drr_seq, dsl_drr_type_name(h.drr_type));
			e = SET_ERROR(EBADMSG);
		}
	}
	return (e);
}

int
dsl_stream_get_package_end(dsl_stream_in_t *si, char *err, size_t errlen)
{
	dsl_drr_t h;
	const void *p;
	int e = dsl_stream_get(si, &h, &p, err, errlen);
	if (e == 0 && h.drr_type != DSL_DRR_PACKAGE_END) {
		(void) snprintf(err, errlen, "record %" PRIu64 " (%s): expected the PACKAGE_END "
		    "record", h.drr_seq, dsl_drr_type_name(h.drr_type));
		e = SET_ERROR(EBADMSG);
	}
	return (e);
}
