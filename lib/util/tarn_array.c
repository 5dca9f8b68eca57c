/*
 * tarn_array.c — growable arrays of fixed-size elements.
 *
 * Theory.  The capacity doubles when a push finds the array full (the
 * first allocation holds TARN_ARRAY_FIRST_BYTES, or 4 elements when they
 * are larger), so n pushes copy fewer than 2n elements in all: amortised
 * O(1) a push, and at most half the allocation is ever unused.  Memory is
 * only given back by tarn_array_fini (or taken by tarn_array_steal):
 * tarn_array_clear keeps it, for arrays refilled every txg or every
 * request.  Sizes that would overflow size_t are refused as ENOMEM before
 * anything is allocated.  tarn_array_push follows tarn_alloc's rule that
 * running out of memory is fatal; tarn_array_try_push and
 * tarn_array_reserve report it for the few callers that can do better.
 */
#include "tarn_array.h"

#define TARN_ARRAY_FIRST_BYTES 64

void
tarn_array_init(tarn_array_t *a, size_t esize)
{
	ASSERT3U(esize, >, 0);
	a->ta_v = NULL;
	a->ta_len = a->ta_cap = 0;
	a->ta_esize = esize;
}

void
tarn_array_fini(tarn_array_t *a)
{
	tarn_free(a->ta_v);
	a->ta_v = NULL;
	a->ta_len = a->ta_cap = 0;
}

/* Grow to hold at least want elements (want > cap).  0 or ENOMEM. */
static int
tarn_array_resize(tarn_array_t *a, size_t want)
{
	VERIFY3U(a->ta_esize, >, 0);        /* tarn_array_init'ed */
	size_t ncap = a->ta_cap != 0 ? a->ta_cap : MAX(4, TARN_ARRAY_FIRST_BYTES / a->ta_esize);
	while (ncap < want) {
		if (ncap > SIZE_MAX / 2)
			return (SET_ERROR(ENOMEM));
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / a->ta_esize)
		return (SET_ERROR(ENOMEM));
	void *nv = realloc(a->ta_v, ncap * a->ta_esize);
	if (nv == NULL)
		return (SET_ERROR(ENOMEM));
	a->ta_v = nv;
	a->ta_cap = ncap;
	return (0);
}

int
tarn_array_reserve(tarn_array_t *a, size_t n)
{
	if (n <= a->ta_cap - a->ta_len)
		return (0);
	if (n > SIZE_MAX - a->ta_len)
		return (SET_ERROR(ENOMEM));
	return (tarn_array_resize(a, a->ta_len + n));
}

void
tarn_array_grow_(tarn_array_t *a)
{
	VERIFY0(tarn_array_reserve(a, 1));
}

int
tarn_array_try_push(tarn_array_t *a, void **elemp)
{
	int err = tarn_array_reserve(a, 1);
	if (err != 0)
		return (err);
	*elemp = tarn_array_push(a);
	return (0);
}

void *
tarn_array_steal(tarn_array_t *a, size_t *lenp)
{
	void *v = a->ta_v;
	*lenp = a->ta_len;
	a->ta_v = NULL;
	a->ta_len = a->ta_cap = 0;
	return (v);
}

void
tarn_array_remove_swap(tarn_array_t *a, size_t i)
{
	ASSERT3U(i, <, a->ta_len);
	a->ta_len--;
	if (i != a->ta_len)
		memcpy((char *)a->ta_v + i * a->ta_esize,
		    (char *)a->ta_v + a->ta_len * a->ta_esize, a->ta_esize);
}

void *
tarn_array_insert(tarn_array_t *a, size_t i)
{
	return (tarn_array_insert_n(a, i, 1));
}

void *
tarn_array_insert_n(tarn_array_t *a, size_t i, size_t n)
{
	ASSERT3U(i, <=, a->ta_len);
	if (n == 0)
		return (NULL);
	VERIFY0(tarn_array_reserve(a, n));
	char *e = (char *)a->ta_v + i * a->ta_esize;
	memmove(e + n * a->ta_esize, e, (a->ta_len - i) * a->ta_esize);
	memset(e, 0, n * a->ta_esize);
	a->ta_len += n;
	return (e);
}

void
tarn_array_remove(tarn_array_t *a, size_t i)
{
	tarn_array_remove_range(a, i, 1);
}

void
tarn_array_remove_range(tarn_array_t *a, size_t i, size_t n)
{
	ASSERT3U(i, <=, a->ta_len);
	ASSERT3U(n, <=, a->ta_len - i);
	if (n == 0)
		return;
	memmove((char *)a->ta_v + i * a->ta_esize, (char *)a->ta_v + (i + n) * a->ta_esize,
	    (a->ta_len - i - n) * a->ta_esize);
	a->ta_len -= n;
}

void
tarn_array_sort(tarn_array_t *a, int (*cmp)(const void *, const void *))
{
	if (a->ta_len > 1)
		qsort(a->ta_v, a->ta_len, a->ta_esize, cmp);
}
