/*
 * tarn_array.h — a growable array of fixed-size elements, the one copy of
 * the "double the capacity when full" code that callers used to write by
 * hand.  Theory in tarn_array.c.
 *
 * An array is a plain struct the caller embeds (no allocation until the
 * first element); it has no lock of its own: the caller's lock guards it
 * like any other field.  Element addresses stay valid until the next call
 * that may grow the array (push, insert, append, reserve) or the array is freed.
 */
#ifndef TARN_ARRAY_H
#define TARN_ARRAY_H

#include "tarn_util.h"

typedef struct tarn_array {
	void   *ta_v;       /* ta_cap elements of ta_esize bytes, or NULL */
	size_t  ta_len;     /* elements in use: ta_v[0 .. ta_len-1] */
	size_t  ta_cap;     /* elements allocated */
	size_t  ta_esize;   /* bytes an element */
} tarn_array_t;

/* Static initialiser: tarn_array_t a = TARN_ARRAY_INIT(uint64_t); */
#define TARN_ARRAY_INIT(type) { NULL, 0, 0, sizeof (type) }

/* Element i as an lvalue of type (no bounds check: hot loops). */
#define TARN_ARRAY_AT(a, type, i) (((type *)(a)->ta_v)[i])
/* Append value (of the array's element type); fatal on allocation failure. */
#define TARN_ARRAY_APPEND(a, type, value) \
	((void)(*(type *)tarn_array_push(a) = (value)))

void tarn_array_init(tarn_array_t *a, size_t esize);
/* Free the elements' memory; the array stays usable (empty). */
void tarn_array_fini(tarn_array_t *a);
/*
 * Make room for n more elements, so that the next n pushes cannot fail
 * (nor move the elements).  0, or ENOMEM with the array unchanged.
 */
int tarn_array_reserve(tarn_array_t *a, size_t n);
/* A new zeroed last element, or ENOMEM (array unchanged). */
int tarn_array_try_push(tarn_array_t *a, void **elemp);
/*
 * Hand the elements' memory to the caller (tarn_free it; NULL when the
 * array never held any): *lenp gets the count.  The array is left empty.
 */
void *tarn_array_steal(tarn_array_t *a, size_t *lenp);
/*
 * A new zeroed element at index i (i <= len), the elements from i on moved
 * up by one (for arrays kept sorted); allocation failure is fatal.
 */
void *tarn_array_insert(tarn_array_t *a, size_t i);
/* n new zeroed elements at i..i+n-1 (i <= len), the same way; NULL when n is 0. */
void *tarn_array_insert_n(tarn_array_t *a, size_t i, size_t n);
/* Remove element i by moving the last element into its place. */
void tarn_array_remove_swap(tarn_array_t *a, size_t i);
/* Remove element i keeping the order of the others. */
void tarn_array_remove(tarn_array_t *a, size_t i);
/* Remove the n elements from i on (i + n <= len) keeping the order of the others. */
void tarn_array_remove_range(tarn_array_t *a, size_t i, size_t n);
/* qsort the elements. */
void tarn_array_sort(tarn_array_t *a, int (*cmp)(const void *, const void *));

/* Out of line: the slow path of tarn_array_push. */
void tarn_array_grow_(tarn_array_t *a);

static inline size_t
tarn_array_len(const tarn_array_t *a)
{
	return (a->ta_len);
}

/* Element i (i < len). */
static inline void *
tarn_array_get(const tarn_array_t *a, size_t i)
{
	ASSERT3U(i, <, a->ta_len);
	return ((char *)a->ta_v + i * a->ta_esize);
}

/* The first element (NULL when none was ever allocated). */
static inline void *
tarn_array_base(const tarn_array_t *a)
{
	return (a->ta_v);
}

/* A new zeroed last element; allocation failure is fatal (tarn_alloc's rule). */
static inline void *
tarn_array_push(tarn_array_t *a)
{
	if (a->ta_len == a->ta_cap)
		tarn_array_grow_(a);
	void *e = (char *)a->ta_v + a->ta_len++ * a->ta_esize;
	memset(e, 0, a->ta_esize);
	return (e);
}

/*
 * Append n elements copied from src (for byte buffers: esize 1) and return
 * the first of them (NULL when n is 0); allocation failure is fatal.
 */
static inline void *
tarn_array_append(tarn_array_t *a, const void *src, size_t n)
{
	if (n == 0)
		return (NULL);
	if (n > a->ta_cap - a->ta_len)
		VERIFY0(tarn_array_reserve(a, n));
	void *e = (char *)a->ta_v + a->ta_len * a->ta_esize;
	memcpy(e, src, n * a->ta_esize);
	a->ta_len += n;
	return (e);
}

/* Remove the last element and return it (valid until the next push). */
static inline void *
tarn_array_pop(tarn_array_t *a)
{
	ASSERT3U(a->ta_len, >, 0);
	return ((char *)a->ta_v + --a->ta_len * a->ta_esize);
}

/* Drop every element, keeping the memory for the next ones. */
static inline void
tarn_array_clear(tarn_array_t *a)
{
	a->ta_len = 0;
}

/* Keep the first n elements (n <= len). */
static inline void
tarn_array_truncate(tarn_array_t *a, size_t n)
{
	ASSERT3U(n, <=, a->ta_len);
	a->ta_len = n;
}

#endif /* TARN_ARRAY_H */
