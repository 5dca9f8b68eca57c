/*
 * posix_xinline.c — small extended attributes kept in the inode itself:
 * the znode's 144-byte zp_inline area, which only symlinks use otherwise
 * (for their target).  A file that Samba serves gets a user.DOSATTRIB of
 * some 60 bytes on every create; kept in an xattr ZAP object it cost a
 * fat ZAP (a header block and a 16 KiB leaf, 4 KiB or more on disk) and
 * tripled the time of a create.  Kept here it costs nothing.
 *
 * The area (FORMAT.md "Extended attributes"): entries packed from its
 * start, each a u8 name length (1..255), a u8 value length (0..255), the
 * name (no NUL) and the value; a name length of 0, or too little room
 * left for an entry's header, ends them.  These functions only read and
 * rewrite the 144 bytes; where an attribute goes (here or the ZAP) is
 * posix_xattr.c's decision.  Every read checks the lengths first: a
 * damaged area is EIO, never a read past its end.
 */
#include "posix_impl.h"

#define XI_HDR 2        /* namelen, valuelen */

/* The offset just past the entries (every one checked), or -1 (damaged). */
static int
xi_end(const uint8_t *a)
{
	int off = 0;
	while (off + XI_HDR <= POSIX_INLINE_MAX && a[off] != 0) {
		int next = off + XI_HDR + a[off] + a[off + 1];
		if (next > POSIX_INLINE_MAX || memchr(a + off + XI_HDR, 0, a[off]) != NULL)
			return (-1);
		off = next;
	}
	/* what follows the entries is zero (an area is always written so) */
	for (int i = off; i < POSIX_INLINE_MAX; i++)
		if (a[i] != 0)
			return (-1);
	return (off);
}

int
posix_xinline_check(const uint8_t *area)
{
	return (xi_end(area) < 0 ? SET_ERROR(EIO) : 0);
}

/* Offset of name's entry, -1 when absent; the area was checked. */
static int
xi_find(const uint8_t *a, const char *name)
{
	size_t n = strlen(name);
	for (int off = 0; off + XI_HDR <= POSIX_INLINE_MAX && a[off] != 0;
	    off += XI_HDR + a[off] + a[off + 1]) {
		if (a[off] == n && memcmp(a + off + XI_HDR, name, n) == 0)
			return (off);
	}
	return (-1);
}

int
posix_xinline_get(const uint8_t *area, const char *name, const uint8_t **value, size_t *len)
{
	if (xi_end(area) < 0)
		return (SET_ERROR(EIO));
	int off = xi_find(area, name);
	if (off < 0)
		return (SET_ERROR(ENODATA));
	*value = area + off + XI_HDR + area[off];
	*len = area[off + 1];
	return (0);
}

int
posix_xinline_remove(uint8_t *area, const char *name)
{
	int end = xi_end(area);
	if (end < 0)
		return (SET_ERROR(EIO));
	int off = xi_find(area, name);
	if (off < 0)
		return (SET_ERROR(ENODATA));
	int len = XI_HDR + area[off] + area[off + 1];
	memmove(area + off, area + off + len, (size_t)(end - off - len));
	memset(area + end - len, 0, (size_t)len);
	return (0);
}

bool
posix_xinline_fits(const char *name, size_t len)
{
	size_t n = strlen(name);
	return (n >= 1 && n <= UINT8_MAX && len <= UINT8_MAX &&
	    XI_HDR + n + len <= POSIX_INLINE_MAX);
}

int
posix_xinline_set(uint8_t *area, const char *name, const void *value, size_t len)
{
	if (!posix_xinline_fits(name, len))
		return (SET_ERROR(ENOSPC));
	uint8_t next[POSIX_INLINE_MAX];
	memcpy(next, area, sizeof (next));
	int err = posix_xinline_remove(next, name);
	if (err != 0 && err != ENODATA)
		return (err);
	int end = xi_end(next);
	size_t n = strlen(name);
	if ((size_t)end + XI_HDR + n + len > POSIX_INLINE_MAX)
		return (SET_ERROR(ENOSPC));     /* the area is left as it was */
	next[end] = (uint8_t)n;
	next[end + 1] = (uint8_t)len;
	memcpy(next + end + XI_HDR, name, n);
	if (len > 0)
		memcpy(next + end + XI_HDR + n, value, len);
	memcpy(area, next, sizeof (next));
	return (0);
}

int
posix_xinline_list(const uint8_t *area, char *list, size_t size, size_t *total)
{
	if (xi_end(area) < 0)
		return (SET_ERROR(EIO));
	for (int off = 0; off + XI_HDR <= POSIX_INLINE_MAX && area[off] != 0;
	    off += XI_HDR + area[off] + area[off + 1]) {
		size_t n = area[off];
		if (size != 0 && *total + n + 1 > size)
			return (SET_ERROR(ERANGE));
		if (size != 0) {
			memcpy(list + *total, area + off + XI_HDR, n);
			list[*total + n] = '\0';
		}
		*total += n + 1;
	}
	return (0);
}

bool
posix_xinline_empty(const uint8_t *area)
{
	return (area[0] == 0);
}
