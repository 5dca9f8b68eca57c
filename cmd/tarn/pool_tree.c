/*
 * pool_tree.c — pools and their vdev trees as the host describes them
 * (operation pool.info, host/host_op_info.c, whose theory comment lists
 * the fields): asking for them the way the reading verbs (status, list,
 * get, set) look at pools, and reading the JSON tree back (a vdev's
 * display name, the width of a tree's NAME column, its space figures).
 *
 * cli_pool_info_each keeps the old look at each pool: every pool named
 * (or every pool of the host) in order; one that is not imported here
 * gets "cannot open 'X': no such pool" in its place and the others are
 * still shown; one that would not open is shown with its error.
 */
#include "tarn.h"

/* ---- reading JSON results ---- */

json_object *
cli_j_get(json_object *o, const char *key)
{
	json_object *v;

	return (o != NULL && json_object_object_get_ex(o, key, &v) ? v : NULL);
}

uint64_t
cli_j_u64(json_object *o, const char *key)
{
	json_object *v = cli_j_get(o, key);

	return (v != NULL ? json_object_get_uint64(v) : 0);
}

int
cli_j_int(json_object *o, const char *key)
{
	json_object *v = cli_j_get(o, key);

	return (v != NULL ? json_object_get_int(v) : 0);
}

const char *
cli_j_str(json_object *o, const char *key)
{
	json_object *v = cli_j_get(o, key);

	return (v != NULL && json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) : NULL);
}

bool
cli_j_bool(json_object *o, const char *key)
{
	json_object *v = cli_j_get(o, key);

	return (v != NULL && json_object_get_boolean(v));
}

int
cli_j_len(json_object *a)
{
	return (a != NULL && json_object_is_type(a, json_type_array) ?
	    (int)json_object_array_length(a) : 0);
}

json_object *
cli_j_idx(json_object *a, int i)
{
	return (json_object_array_get_idx(a, (size_t)i));
}

/* ---- vdevs ---- */

int
cli_jvdev_nchildren(json_object *vd)
{
	return (cli_j_len(cli_j_get(vd, "children")));
}

json_object *
cli_jvdev_child(json_object *vd, int i)
{
	return (cli_j_idx(cli_j_get(vd, "children"), i));
}

bool
cli_jvdev_type_is(json_object *vd, const char *type)
{
	const char *t = cli_j_str(vd, "type");

	return (t != NULL && strcmp(t, type) == 0);
}

bool
cli_jvdev_state_is(json_object *vd, vdev_state_t st)
{
	const char *s = cli_j_str(vd, "state");

	return (s != NULL && strcmp(s, vdev_state_name(st)) == 0);
}

const char *
cli_jvdev_state(json_object *vd)
{
	const char *s = cli_j_str(vd, "state");

	return (s != NULL ? s : vdev_state_name(VDEV_STATE_UNKNOWN));
}

void
cli_jvdev_name(json_object *vd, bool with_id, char *buf, size_t len)
{
	const char *type = cli_j_str(vd, "type"), *path = cli_j_str(vd, "path");
	uint64_t id = cli_j_u64(vd, "id");

	if (type == NULL)
		type = "";
	if (strcmp(type, "mirror") == 0 || strcmp(type, "replacing") == 0 ||
	    strcmp(type, "spare") == 0) {
		if (with_id)
			(void) snprintf(buf, len, "%s-%" PRIu64, type, id);
		else
			(void) snprintf(buf, len, "%s", type);
	} else if (strcmp(type, "raidz") == 0) {
		if (with_id)
			(void) snprintf(buf, len, "raidz%d-%" PRIu64, cli_j_int(vd, "nparity"), id);
		else
			(void) snprintf(buf, len, "raidz%d", cli_j_int(vd, "nparity"));
	} else if (strcmp(type, "root") == 0) {
		(void) snprintf(buf, len, "root");
	} else if (path != NULL && path[0] != '\0') {
		(void) snprintf(buf, len, "%s", path);
	} else {
		(void) snprintf(buf, len, "%" PRIu64, cli_j_u64(vd, "guid"));
	}
}

int
cli_jtree_namewidth(json_object *vd, const char *rootname, int depth, int width)
{
	char name[VDEV_PATH_MAX + 32];

	if (cli_jvdev_type_is(vd, "root"))
		(void) snprintf(name, sizeof (name), "%s", rootname);
	else
		cli_jvdev_name(vd, true, name, sizeof (name));
	width = MAX(width, depth + (int)strlen(name));
	width = MAX(width, 10);
	for (int c = 0; c < cli_jvdev_nchildren(vd); c++)
		width = cli_jtree_namewidth(cli_jvdev_child(vd, c), rootname, depth + 2, width);
	return (width);
}

bool
cli_jvdev_space(json_object *vd, uint64_t *size, uint64_t *alloc)
{
	if (cli_j_get(vd, "alloc") == NULL)
		return (false);
	*size = cli_j_u64(vd, "size");
	*alloc = cli_j_u64(vd, "alloc");
	return (true);
}

/* ---- asking ---- */

int
cli_pool_info(const char *verb, int argc, char **argv, json_object *args,
    json_object **resp)
{
	json_object_object_add(args, "verb", json_object_new_string(verb));
	if (argc > 0) {
		json_object *names = json_object_new_array_ext(argc);
		for (int i = 0; i < argc; i++)
			json_object_array_add(names, json_object_new_string(argv[i]));
		json_object_object_add(args, "names", names);
	}
	int r = cli_call("pool.info", args, resp);
	if (*resp != NULL && cli_j_get(*resp, "pools") == NULL) {
		json_object_put(*resp);     /* the host could not list its pools */
		*resp = NULL;
	}
	return (*resp == NULL && r == CLI_EXIT_OK ? CLI_EXIT_ERROR : r);
}

int
cli_pool_info_each(json_object *res, cli_pool_info_fn_t fn, void *arg)
{
	json_object *pools = cli_j_get(res, "pools");
	int ret = CLI_EXIT_OK;

	for (int i = 0; i < cli_j_len(pools); i++) {
		json_object *p = cli_j_idx(pools, i);
		const char *name = cli_j_str(p, "name"), *err = cli_j_str(p, "error");
		if (name == NULL)
			continue;
		if (cli_j_bool(p, "nopool")) {
			/* in its place, as when tarnd ran the verb (stdout sent first) */
			if (!cli_local())
				fflush(cli_out);
			ret = cli_cannot("open", name, cli_j_int(p, "errno"), err);
			continue;
		}
		fn(arg, cli_j_get(p, "error") != NULL ? NULL : p, name, err != NULL ? err : "");
	}
	return (ret);
}
