/*
 * dsl_name.c — dataset names, checked as zfs checks them: components of
 * letters, digits and "-_.: " separated by single slashes, the first being
 * the pool's name, at most 255 bytes in all.  dsl_name_validate takes
 * file system names only; dsl_snap_name_validate "FS@SNAP" or "FS#BM".
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

int
dsl_snap_name_validate(const char *name, char sep, char *err, size_t errlen)
{
	size_t len = strlen(name);
	if (len >= DSL_NAME_MAX) {
		(void) snprintf(err, errlen, "name is too long");
		return (SET_ERROR(ENAMETOOLONG));
	}
	const char *at = strpbrk(name, "@#");
	if (at == NULL || *at != sep) {
		(void) snprintf(err, errlen, sep == '@' ? "not a snapshot name" :
		    "not a bookmark name");
		return (SET_ERROR(EINVAL));
	}
	if (strpbrk(at + 1, "@#") != NULL) {
		(void) snprintf(err, errlen, "multiple '@' and/or '#' delimiters in name");
		return (SET_ERROR(EINVAL));
	}
	if (at == name || at[1] == '\0') {
		(void) snprintf(err, errlen, "empty component or misplaced '@' or '#' "
		    "delimiter in name");
		return (SET_ERROR(EINVAL));
	}
	char *fs = tarn_strdup(name);
	fs[at - name] = '\0';
	int e = dsl_name_validate(fs, err, errlen);
	tarn_free(fs);
	for (const char *p = at + 1; e == 0 && *p != '\0'; p++) {
		if (*p == '/') {
			(void) snprintf(err, errlen, "trailing slash in name");
			e = SET_ERROR(EINVAL);
		} else if (!dsl_valid_char(*p)) {
			if (isprint((unsigned char)*p))
				(void) snprintf(err, errlen, "invalid character '%c' in name", *p);
			else
				(void) snprintf(err, errlen, "invalid character in name");
			e = SET_ERROR(EINVAL);
		}
	}
	return (e);
}
