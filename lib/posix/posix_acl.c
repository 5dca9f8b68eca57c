/*
 * posix_acl.c — POSIX ACLs in the form Linux passes them through
 * extended attributes (system.posix_acl_access, system.posix_acl_default):
 * a 4-byte header (version 2) and 8-byte entries {tag u16, perm u16,
 * id u32}, all little-endian, sorted by tag and then by id.  The kernel
 * checks permissions against the access ACL itself (the mount asks for
 * FUSE_CAP_POSIX_ACL); what it leaves to the file system is here: which
 * values are valid, the mode an access ACL implies (setfacl changes the
 * mode with it), the ACL a chmod changes, and the access ACL and mode a
 * new inode gets from its directory's default ACL.  The values are
 * stored as they come (docs/FORMAT.md "Extended attributes").
 */
#include "posix_impl.h"

#define ACL_HDR       4
#define ACL_ENT       8
#define ACL_VERSION   2

#define ACL_USER_OBJ  0x01
#define ACL_USER      0x02
#define ACL_GROUP_OBJ 0x04
#define ACL_GROUP     0x08
#define ACL_MASK      0x10
#define ACL_OTHER     0x20

static uint16_t
acl_get16(const uint8_t *p)
{
	return ((uint16_t)(p[0] | (p[1] << 8)));
}

static uint32_t
acl_get32(const uint8_t *p)
{
	return ((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	    ((uint32_t)p[3] << 24));
}

static void
acl_set_perm(uint8_t *e, uint32_t perm)
{
	e[2] = (uint8_t)(perm & 7);
	e[3] = 0;
}

static size_t
acl_count(size_t len)
{
	return ((len - ACL_HDR) / ACL_ENT);
}

int
posix_acl_check(const void *val, size_t len)
{
	const uint8_t *v = val;
	if (v == NULL || len < ACL_HDR || (len - ACL_HDR) % ACL_ENT != 0 ||
	    acl_count(len) > POSIX_ACL_MAX_ENTRIES || acl_get32(v) != ACL_VERSION)
		return (SET_ERROR(EINVAL));
	int user_obj = 0, group_obj = 0, other = 0, mask = 0, named = 0;
	uint16_t prev_tag = 0;
	uint32_t prev_id = 0;
	for (size_t i = 0; i < acl_count(len); i++) {
		const uint8_t *e = v + ACL_HDR + i * ACL_ENT;
		uint16_t tag = acl_get16(e), perm = acl_get16(e + 2);
		uint32_t id = acl_get32(e + 4);
		if (perm & ~7U || tag < prev_tag)
			return (SET_ERROR(EINVAL));
		switch (tag) {
		case ACL_USER_OBJ: user_obj++; break;
		case ACL_GROUP_OBJ: group_obj++; break;
		case ACL_OTHER: other++; break;
		case ACL_MASK: mask++; break;
		case ACL_USER:
		case ACL_GROUP:
			/* named entries: ids ascending, no two alike */
			if (tag == prev_tag && id <= prev_id)
				return (SET_ERROR(EINVAL));
			named++;
			prev_id = id;
			break;
		default:
			return (SET_ERROR(EINVAL));
		}
		prev_tag = tag;
	}
	if (user_obj != 1 || group_obj != 1 || other != 1 || mask > 1 ||
	    (named > 0 && mask == 0))
		return (SET_ERROR(EINVAL));
	return (0);
}

uint32_t
posix_acl_mode(const void *val, size_t len, bool *equiv)
{
	const uint8_t *v = val;
	uint32_t mode = 0;
	bool eq = true;
	for (size_t i = 0; i < acl_count(len); i++) {
		const uint8_t *e = v + ACL_HDR + i * ACL_ENT;
		uint32_t perm = acl_get16(e + 2) & 7;
		switch (acl_get16(e)) {
		case ACL_USER_OBJ: mode |= perm << 6; break;
		case ACL_GROUP_OBJ: mode |= perm << 3; break;
		case ACL_OTHER: mode |= perm; break;
		case ACL_MASK:
			/* sorted after GROUP_OBJ: the mask is what the group bits show */
			mode = (mode & ~070U) | (perm << 3);
			eq = false;
			break;
		default:
			eq = false;
			break;
		}
	}
	if (equiv != NULL)
		*equiv = eq;
	return (mode);
}

void
posix_acl_chmod(void *val, size_t len, uint32_t mode)
{
	uint8_t *v = val, *group_obj = NULL, *mask = NULL;
	for (size_t i = 0; i < acl_count(len); i++) {
		uint8_t *e = v + ACL_HDR + i * ACL_ENT;
		switch (acl_get16(e)) {
		case ACL_USER_OBJ: acl_set_perm(e, mode >> 6); break;
		case ACL_GROUP_OBJ: group_obj = e; break;
		case ACL_MASK: mask = e; break;
		case ACL_OTHER: acl_set_perm(e, mode); break;
		default: break;
		}
	}
	if (mask != NULL)
		acl_set_perm(mask, mode >> 3);
	else if (group_obj != NULL)
		acl_set_perm(group_obj, mode >> 3);
}

bool
posix_acl_inherit(const void *dval, size_t len, uint32_t *mode, void *out)
{
	uint8_t *v = out, *group_obj = NULL, *mask = NULL;
	uint32_t m = *mode & 0777;
	bool needed = false;
	memcpy(out, dval, len);
	for (size_t i = 0; i < acl_count(len); i++) {
		uint8_t *e = v + ACL_HDR + i * ACL_ENT;
		uint32_t perm = acl_get16(e + 2) & 7;
		switch (acl_get16(e)) {
		case ACL_USER_OBJ:
			perm &= m >> 6;
			acl_set_perm(e, perm);
			m = (m & ~0700U) | (perm << 6);
			break;
		case ACL_OTHER:
			perm &= m;
			acl_set_perm(e, perm);
			m = (m & ~07U) | perm;
			break;
		case ACL_GROUP_OBJ: group_obj = e; break;
		case ACL_MASK: mask = e; needed = true; break;
		default: needed = true; break;
		}
	}
	/* the mask (or, without one, the owning group) is capped by the group bits */
	uint8_t *g = mask != NULL ? mask : group_obj;
	if (g != NULL) {
		uint32_t perm = acl_get16(g + 2) & 7 & (m >> 3);
		acl_set_perm(g, perm);
		m = (m & ~070U) | (perm << 3);
	}
	*mode = (*mode & ~0777U) | m;
	return (needed);
}
