/*
 * stress_model.c — the model tarn-stress checks the pool against: for
 * every object, its block size, bonus bytes and a sorted list of extents
 * (ranges holding the content of one write generation; zeros elsewhere).
 * Content is a pure function of (seed, oid, generation, offset), so the
 * model costs a few dozen bytes per write, not the bytes themselves, and
 * a piece of a split extent still describes its bytes.  Also the journal
 * line format of operation records, and verification of an object set.
 */
#include "stress.h"

/* ---- content ---- */

static inline uint64_t
stress_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return (x);
}

void
stress_fill(uint64_t seed, uint64_t oid, uint64_t gen, uint64_t off, uint64_t len,
    uint8_t *buf)
{
	uint64_t base = stress_mix(seed ^ stress_mix(oid * 0x9E3779B97F4A7C15ULL ^
	    stress_mix(gen + 0x632BE59BD9B4E019ULL)));
	uint64_t p = off, end = off + len;
	while (p < end && (p & 7) != 0) {
		uint64_t w = stress_mix(base + (p >> 3));
		*buf++ = (uint8_t)(w >> ((p & 7) * 8));
		p++;
	}
	for (; p + 8 <= end; p += 8, buf += 8) {
		uint64_t w = stress_mix(base + (p >> 3));
		memcpy(buf, &w, 8);
	}
	if (p < end) {
		uint64_t w = stress_mix(base + (p >> 3));
		memcpy(buf, &w, end - p);
	}
}

/* ---- journal lines ---- */

const char *
stress_op_name(char type)
{
	switch (type) {
	case STRESS_OP_CREATE: return ("create");
	case STRESS_OP_WRITE: return ("write");
	case STRESS_OP_PUNCH: return ("punch");
	case STRESS_OP_TRUNC: return ("truncate");
	case STRESS_OP_DESTROY: return ("destroy");
	case STRESS_OP_BONUS: return ("bonus write");
	case STRESS_OP_SYNCED: return ("synced");
	default: return ("?");
	}
}

int
stress_op_format(const stress_op_t *op, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%c %" PRIu64 " %d %" PRIu64 " %" PRIu64 " %" PRIu64
	    " %" PRIx64 " %d", op->so_type, op->so_txg, op->so_thread, op->so_obj,
	    op->so_a, op->so_b, op->so_gen, op->so_failed ? 1 : 0);
	return (n < 0 || (size_t)n >= len ? SET_ERROR(ENAMETOOLONG) : 0);
}

int
stress_op_parse(const char *line, stress_op_t *op)
{
	char type;
	int thread, failed, used = 0;
	uint64_t txg, obj, a, b, gen;
	memset(op, 0, sizeof (*op));
	if (sscanf(line, "%c %" SCNu64 " %d %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNx64
	    " %d%n", &type, &txg, &thread, &obj, &a, &b, &gen, &failed, &used) != 8 ||
	    line[used] != '\0' || thread < 0 || (failed != 0 && failed != 1))
		return (SET_ERROR(EINVAL));
	if (strchr("CWPTDBS", type) == NULL)
		return (SET_ERROR(EINVAL));
	op->so_type = type;
	op->so_txg = txg;
	op->so_thread = thread;
	op->so_obj = obj;
	op->so_a = a;
	op->so_b = b;
	op->so_gen = gen;
	op->so_failed = failed != 0;
	return (0);
}

/* ---- the model ---- */

stress_model_t *
stress_model_create(uint64_t seed, int nowners)
{
	stress_model_t *m = tarn_alloc(sizeof (*m));
	m->sm_seed = seed;
	m->sm_nowners = nowners;
	m->sm_own = tarn_alloc(sizeof (stress_owner_t) * (size_t)nowners);
	for (int i = 0; i < nowners; i++) {
		tarn_array_init(&m->sm_own[i].so_objs, sizeof (stress_obj_t *));
		m->sm_own[i].so_next_id = 1;
	}
	return (m);
}

static void
stress_obj_free(stress_obj_t *o)
{
	tarn_array_fini(&o->sob_ext);
	tarn_free(o);
}

void
stress_model_free(stress_model_t *m)
{
	if (m == NULL)
		return;
	for (int i = 0; i < m->sm_nowners; i++) {
		stress_owner_t *ow = &m->sm_own[i];
		for (int j = 0; j < stress_owner_nobjs(ow); j++)
			stress_obj_free(stress_owner_obj(ow, j));
		tarn_array_fini(&ow->so_objs);
	}
	tarn_free(m->sm_own);
	tarn_free(m);
}

stress_model_t *
stress_model_clone(const stress_model_t *m)
{
	stress_model_t *c = stress_model_create(m->sm_seed, m->sm_nowners);
	for (int i = 0; i < m->sm_nowners; i++) {
		const stress_owner_t *ow = &m->sm_own[i];
		stress_owner_t *cw = &c->sm_own[i];
		*cw = *ow;
		tarn_array_init(&cw->so_objs, sizeof (stress_obj_t *));
		VERIFY0(tarn_array_reserve(&cw->so_objs, (size_t)MAX(stress_owner_nobjs(ow), 1)));
		for (int j = 0; j < stress_owner_nobjs(ow); j++) {
			const stress_obj_t *o = stress_owner_obj(ow, j);
			stress_obj_t *n = tarn_alloc(sizeof (*n));
			*n = *o;
			tarn_array_init(&n->sob_ext, sizeof (stress_extent_t));
			(void) tarn_array_append(&n->sob_ext, tarn_array_base(&o->sob_ext),
			    tarn_array_len(&o->sob_ext));
			TARN_ARRAY_APPEND(&cw->so_objs, stress_obj_t *, n);
		}
	}
	return (c);
}

stress_obj_t *
stress_model_find(const stress_model_t *m, int owner, uint64_t obj)
{
	if (owner < 0 || owner >= m->sm_nowners)
		return (NULL);
	const stress_owner_t *ow = &m->sm_own[owner];
	for (int j = 0; j < stress_owner_nobjs(ow); j++)
		if (stress_owner_obj(ow, j)->sob_obj == obj)
			return (stress_owner_obj(ow, j));
	return (NULL);
}

uint64_t
stress_model_objects(const stress_model_t *m)
{
	uint64_t n = 0;
	for (int i = 0; i < m->sm_nowners; i++)
		n += (uint64_t)stress_owner_nobjs(&m->sm_own[i]);
	return (n);
}

uint64_t
stress_model_bytes(const stress_model_t *m)
{
	uint64_t n = 0;
	for (int i = 0; i < m->sm_nowners; i++)
		n += m->sm_own[i].so_bytes;
	return (n);
}

/*
 * Make [off, off + len) hold generation gen (0: zeros), splitting the
 * extents it cuts.  Content depends on the absolute offset, so the kept
 * head and tail of a cut extent keep their generation.
 */
static void
stress_obj_set_range(stress_obj_t *o, uint64_t off, uint64_t len, uint64_t gen)
{
	uint64_t end = len > UINT64_MAX - off ? UINT64_MAX : off + len;
	int lo = 0, hi = stress_obj_next(o);
	while (lo < hi) {                   /* first extent ending after off */
		int mid = (lo + hi) / 2;
		stress_extent_t *e = stress_obj_ext(o, mid);
		if (e->se_off + e->se_len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	int i = lo, j = lo;
	while (j < stress_obj_next(o) && stress_obj_ext(o, j)->se_off < end)
		j++;
	stress_extent_t repl[3];
	int nr = 0;
	if (i < j && stress_obj_ext(o, i)->se_off < off)
		repl[nr++] = (stress_extent_t){ stress_obj_ext(o, i)->se_off,
		    off - stress_obj_ext(o, i)->se_off, stress_obj_ext(o, i)->se_gen };
	if (gen != 0 && end > off)
		repl[nr++] = (stress_extent_t){ off, end - off, gen };
	if (i < j && stress_obj_ext(o, j - 1)->se_off + stress_obj_ext(o, j - 1)->se_len > end) {
		stress_extent_t *l = stress_obj_ext(o, j - 1);
		repl[nr++] = (stress_extent_t){ end, l->se_off + l->se_len - end, l->se_gen };
	}
	for (int k = i; k < j; k++)
		o->sob_bytes -= stress_obj_ext(o, k)->se_len;
	for (int k = 0; k < nr; k++)
		o->sob_bytes += repl[k].se_len;
	/* the extents [i, j) give way to repl[0 .. nr-1] */
	tarn_array_remove_range(&o->sob_ext, (size_t)i, (size_t)(j - i));
	if (nr > 0)
		memcpy(tarn_array_insert_n(&o->sob_ext, (size_t)i, (size_t)nr), repl,
		    sizeof (stress_extent_t) * (size_t)nr);
	int newn = stress_obj_next(o);
	o->sob_end = newn == 0 ? 0 :
	    stress_obj_ext(o, newn - 1)->se_off + stress_obj_ext(o, newn - 1)->se_len;
}

static void
stress_owner_add(stress_owner_t *ow, stress_obj_t *o)
{
	TARN_ARRAY_APPEND(&ow->so_objs, stress_obj_t *, o);
}

static void
stress_owner_remove(stress_owner_t *ow, stress_obj_t *o)
{
	for (int j = 0; j < stress_owner_nobjs(ow); j++) {
		if (stress_owner_obj(ow, j) == o) {
			tarn_array_remove_swap(&ow->so_objs, (size_t)j);
			return;
		}
	}
	VERIFY(0);
}

/* Keep counters ahead of every id the journal has shown. */
static void
stress_owner_saw_id(stress_owner_t *ow, uint64_t id)
{
	uint64_t ctr = id & ((1ULL << 40) - 1);
	if (ctr >= ow->so_next_id)
		ow->so_next_id = ctr + 1;
}

int
stress_model_apply(stress_model_t *m, const stress_op_t *op, char *err, size_t errlen)
{
	if (op->so_type == STRESS_OP_SYNCED)
		return (0);
	if (op->so_failed || op->so_thread < 0 || op->so_thread >= m->sm_nowners) {
		snprintf(err, errlen, "cannot apply %s of object %" PRIu64 " (txg %" PRIu64
		    ", thread %d%s)", stress_op_name(op->so_type), op->so_obj, op->so_txg,
		    op->so_thread, op->so_failed ? ", failed" : "");
		return (SET_ERROR(EINVAL));
	}
	stress_owner_t *ow = &m->sm_own[op->so_thread];
	stress_obj_t *o = stress_model_find(m, op->so_thread, op->so_obj);
	if ((op->so_type == STRESS_OP_CREATE) != (o == NULL)) {
		snprintf(err, errlen, "%s of object %" PRIu64 " (txg %" PRIu64 "): the object %s",
		    stress_op_name(op->so_type), op->so_obj, op->so_txg,
		    o == NULL ? "does not exist" : "already exists");
		return (SET_ERROR(EINVAL));
	}
	uint64_t before = o ? o->sob_bytes : 0;
	switch (op->so_type) {
	case STRESS_OP_CREATE:
		o = tarn_alloc(sizeof (*o));
		tarn_array_init(&o->sob_ext, sizeof (stress_extent_t));
		o->sob_obj = op->so_obj;
		o->sob_oid = op->so_gen;
		o->sob_blksz = (uint32_t)op->so_a;
		o->sob_bonuslen = (uint32_t)MIN(op->so_b, DN_MAX_BONUSLEN);
		stress_owner_add(ow, o);
		stress_owner_saw_id(ow, op->so_gen);
		break;
	case STRESS_OP_WRITE:
		stress_obj_set_range(o, op->so_a, op->so_b, op->so_gen);
		stress_owner_saw_id(ow, op->so_gen);
		break;
	case STRESS_OP_PUNCH:
		stress_obj_set_range(o, op->so_a, op->so_b, 0);
		break;
	case STRESS_OP_TRUNC:
		stress_obj_set_range(o, op->so_a, UINT64_MAX, 0);
		break;
	case STRESS_OP_DESTROY:
		ow->so_bytes -= before;
		stress_owner_remove(ow, o);
		stress_obj_free(o);
		return (0);
	case STRESS_OP_BONUS:
		stress_fill(m->sm_seed, o->sob_oid, op->so_gen, 0,
		    MIN(op->so_b, o->sob_bonuslen), o->sob_bonus);
		stress_owner_saw_id(ow, op->so_gen);
		break;
	default:
		snprintf(err, errlen, "unknown operation '%c'", op->so_type);
		return (SET_ERROR(EINVAL));
	}
	ow->so_bytes += o->sob_bytes - before;
	return (0);
}

void
stress_obj_expect(const stress_model_t *m, const stress_obj_t *o, uint64_t off,
    uint64_t len, uint8_t *buf)
{
	memset(buf, 0, len);
	uint64_t end = off + len;
	for (int k = 0; k < stress_obj_next(o); k++) {
		const stress_extent_t *e = stress_obj_ext(o, k);
		uint64_t s = MAX(off, e->se_off), t = MIN(end, e->se_off + e->se_len);
		if (e->se_off >= end)
			break;
		if (s < t)
			stress_fill(m->sm_seed, o->sob_oid, e->se_gen, s, t - s, buf + (s - off));
	}
}

/* Describe what the model says about byte off of o. */
static void
stress_obj_describe(const stress_obj_t *o, uint64_t off, char *buf, size_t len)
{
	for (int k = 0; k < stress_obj_next(o); k++) {
		const stress_extent_t *e = stress_obj_ext(o, k);
		if (off >= e->se_off && off < e->se_off + e->se_len) {
			snprintf(buf, len, "written by generation %" PRIx64 " in [%" PRIu64 ", %"
			    PRIu64 ")", e->se_gen, e->se_off, e->se_off + e->se_len);
			return;
		}
	}
	snprintf(buf, len, "a hole (%d extents, data ends at %" PRIu64 ")", stress_obj_next(o),
	    o->sob_end);
}

static int
stress_obj_compare(const stress_obj_t *o, uint64_t off, const uint8_t *want,
    const uint8_t *got, uint64_t len, char *err, size_t errlen)
{
	if (memcmp(want, got, len) == 0)
		return (0);
	uint64_t i = 0;
	while (want[i] == got[i])
		i++;
	uint64_t last = i;
	uint64_t nbad = 0;
	for (uint64_t k = i; k < len; k++) {
		if (want[k] != got[k]) {
			nbad++;
			last = k;
		}
	}
	char what[160];
	stress_obj_describe(o, off + i, what, sizeof (what));
	snprintf(err, errlen, "object %" PRIu64 " (oid %" PRIx64 ", block size %u): byte %"
	    PRIu64 " is 0x%02x, the model says 0x%02x, %s; %" PRIu64 " bytes differ in [%"
	    PRIu64 ", %" PRIu64 "]", o->sob_obj, o->sob_oid, o->sob_blksz, off + i, got[i],
	    want[i], what, nbad, off + i, off + last);
	return (SET_ERROR(STRESS_EMISMATCH));
}

int
stress_obj_check_range(objset_t *os, const stress_model_t *m, const stress_obj_t *o,
    uint64_t off, uint64_t len, char *err, size_t errlen)
{
	const uint64_t chunk = 1 * MiB;
	uint64_t bsz = MIN(len, chunk);
	uint8_t *want = tarn_alloc(MAX(bsz, 1)), *got = tarn_alloc(MAX(bsz, 1));
	int e = 0;
	for (uint64_t p = off; p < off + len && e == 0; p += chunk) {
		uint64_t n = MIN(chunk, off + len - p);
		e = dmu_read(os, o->sob_obj, p, n, got);
		if (e != 0) {
			snprintf(err, errlen, "reading object %" PRIu64 " [%" PRIu64 ", %" PRIu64
			    "): %s", o->sob_obj, p, p + n, tarn_strerror(e));
			break;
		}
		stress_obj_expect(m, o, p, n, want);
		e = stress_obj_compare(o, p, want, got, n, err, errlen);
	}
	tarn_free(want);
	tarn_free(got);
	return (e);
}

/* Check one object's attributes, bytes and bonus (stress.h). */
int
stress_obj_verify(objset_t *os, const stress_model_t *m, const stress_obj_t *o,
    uint64_t obj_max, uint64_t *bytes, char *err, size_t errlen)
{
	dmu_object_info_t doi;
	int e = dmu_object_info(os, o->sob_obj, &doi);
	if (e != 0) {
		snprintf(err, errlen, "object %" PRIu64 " (oid %" PRIx64 ", %" PRIu64
		    " bytes of data): %s", o->sob_obj, o->sob_oid, o->sob_bytes, tarn_strerror(e));
		return (e == ENOENT ? SET_ERROR(STRESS_EMISMATCH) : e);
	}
	if (doi.doi_type != DMU_OT_TEST || doi.doi_data_block_size != o->sob_blksz ||
	    doi.doi_bonus_size != o->sob_bonuslen) {
		snprintf(err, errlen, "object %" PRIu64 ": type %d, block size %u, bonus %u; "
		    "the model says type %d, block size %u, bonus %u", o->sob_obj,
		    (int)doi.doi_type, doi.doi_data_block_size, doi.doi_bonus_size,
		    (int)DMU_OT_TEST, o->sob_blksz, o->sob_bonuslen);
		return (SET_ERROR(STRESS_EMISMATCH));
	}
	uint64_t cap = P2ROUNDUP(MAX(obj_max, o->sob_end), o->sob_blksz);
	if (doi.doi_max_offset > cap) {
		snprintf(err, errlen, "object %" PRIu64 ": max offset %" PRIu64 " is beyond "
		    "anything ever written (%" PRIu64 ")", o->sob_obj, doi.doi_max_offset, cap);
		return (SET_ERROR(STRESS_EMISMATCH));
	}
	/* everything up to the max offset, and one block past it (zeros) */
	uint64_t len = MAX(o->sob_end, doi.doi_max_offset) + o->sob_blksz;
	e = stress_obj_check_range(os, m, o, 0, len, err, errlen);
	if (e != 0)
		return (e);
	if (bytes != NULL)
		*bytes += len;
	uint8_t bonus[DN_MAX_BONUSLEN];
	e = dmu_bonus_read(os, o->sob_obj, bonus, o->sob_bonuslen);
	if (e != 0) {
		snprintf(err, errlen, "object %" PRIu64 ": bonus read: %s", o->sob_obj,
		    tarn_strerror(e));
		return (e);
	}
	if (memcmp(bonus, o->sob_bonus, o->sob_bonuslen) != 0) {
		uint32_t i = 0;
		while (bonus[i] == o->sob_bonus[i])
			i++;
		snprintf(err, errlen, "object %" PRIu64 ": bonus byte %u of %u is 0x%02x, "
		    "the model says 0x%02x", o->sob_obj, i, o->sob_bonuslen, bonus[i],
		    o->sob_bonus[i]);
		return (SET_ERROR(STRESS_EMISMATCH));
	}
	return (0);
}

static int
stress_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x < y ? -1 : x > y);
}

/* Every allocated object of os must be in the model, and no more. */
int
stress_model_check_extra(objset_t *os, const stress_model_t *m, char *err, size_t errlen)
{
	uint64_t n = stress_model_objects(m), k = 0;
	uint64_t *nums = tarn_alloc(sizeof (uint64_t) * (size_t)MAX(n, 1));
	for (int i = 0; i < m->sm_nowners; i++)
		for (int j = 0; j < stress_owner_nobjs(&m->sm_own[i]); j++)
			nums[k++] = stress_owner_obj(&m->sm_own[i], j)->sob_obj;
	qsort(nums, (size_t)n, sizeof (uint64_t), stress_u64_cmp);
	uint64_t obj = 0, seen = 0;
	int e;
	while ((e = dmu_object_next(os, &obj)) == 0) {
		if (bsearch(&obj, nums, (size_t)n, sizeof (uint64_t), stress_u64_cmp) == NULL) {
			snprintf(err, errlen, "object %" PRIu64 " exists but the model has no such "
			    "object (it was never created, or was freed)", obj);
			tarn_free(nums);
			return (SET_ERROR(STRESS_EMISMATCH));
		}
		seen++;
	}
	tarn_free(nums);
	if (e != ESRCH) {
		snprintf(err, errlen, "listing objects: %s", tarn_strerror(e));
		return (e);
	}
	if (seen != n) {
		snprintf(err, errlen, "the object set lists %" PRIu64 " objects, the model has %"
		    PRIu64, seen, n);
		return (SET_ERROR(STRESS_EMISMATCH));
	}
	return (0);
}

int
stress_model_verify(objset_t *os, const stress_model_t *m, uint64_t obj_max,
    uint64_t *bytes, char *err, size_t errlen)
{
	for (int i = 0; i < m->sm_nowners; i++) {
		const stress_owner_t *ow = &m->sm_own[i];
		for (int j = 0; j < stress_owner_nobjs(ow); j++) {
			int e = stress_obj_verify(os, m, stress_owner_obj(ow, j), obj_max, bytes,
			    err, errlen);
			if (e != 0)
				return (e);
		}
	}
	return (stress_model_check_extra(os, m, err, errlen));
}
