/*
 * dsl_name.c — dataset names, checked as zfs checks them: components of
 * letters, digits and "-_.: " separated by single slashes, the first being
 * the pool's name, at most 255 bytes in all.  Snapshots ('@') and
 * bookmarks ('#') do not exist yet and are refused.
 */
#include "dsl_impl.h"
#include <ctype.h>

static bool
dsl_valid_char(char c)
{
	return (isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.' || c == ':' ||
	    c == ' ');
}

int
dsl_name_validate(const char *name, char *err, size_t errlen)
{
	size_t len = strlen(name);
	if (len == 0) {
		(void) snprintf(err, errlen, "empty component or misplaced '@' or '#' "
		    "delimiter in name");
		return (SET_ERROR(EINVAL));
	}
	if (len >= DSL_NAME_MAX) {
		(void) snprintf(err, errlen, "name is too long");
		return (SET_ERROR(ENAMETOOLONG));
	}
	if (name[0] == '/') {
		(void) snprintf(err, errlen, "leading slash in name");
		return (SET_ERROR(EINVAL));
	}
	if (name[len - 1] == '/') {
		(void) snprintf(err, errlen, "trailing slash in name");
		return (SET_ERROR(EINVAL));
	}
	const char *comp = name;
	for (const char *p = name;; p++) {
		if (*p == '/' || *p == '\0') {
			size_t n = (size_t)(p - comp);
			if (n == 0) {
				(void) snprintf(err, errlen, "empty component or misplaced '@' "
				    "or '#' delimiter in name");
				return (SET_ERROR(EINVAL));
			}
			if ((n == 1 && comp[0] == '.') || (n == 2 && strncmp(comp, "..", 2) == 0)) {
				(void) snprintf(err, errlen, "%s reference, '%.*s' is found in name",
				    n == 1 ? "self" : "parent", (int)n, comp);
				return (SET_ERROR(EINVAL));
			}
			if (*p == '\0')
				break;
			comp = p + 1;
			continue;
		}
		if (*p == '@' || *p == '#') {
			(void) snprintf(err, errlen, "%s delimiter '%c' is not expected here",
			    *p == '@' ? "snapshot" : "bookmark", *p);
			return (SET_ERROR(EINVAL));
		}
		if (!dsl_valid_char(*p)) {
			if (isprint((unsigned char)*p))
				(void) snprintf(err, errlen, "invalid character '%c' in name", *p);
			else
				(void) snprintf(err, errlen, "invalid character in name");
			return (SET_ERROR(EINVAL));
		}
	}
	return (0);
}
