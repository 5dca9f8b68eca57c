/*
 * host_op_fs.c — the operations of the zfs verbs that change datasets
 * (lib/dsl does the change; the mount table, host_mount.c, follows it):
 *
 *   fs.set       names: [dataset...], props: [[property, value]...]   -
 *   fs.inherit   names: [dataset...], prop, recursive                  -
 *
 * set: each dataset in turn, each property in turn, as zfs set does;
 * a mountpoint or canmount change first takes the mounts concerned down
 * (a busy one refuses the change), other mount options follow in place
 * (host_mount_prop_before/changed).  inherit: the same for dropping the
 * local value, on the dataset and with recursive on all below it.
 * Failures are reported as zfs words them ("cannot set property for
 * 'x': ..."; "cannot inherit 'x': ..."); the others still go on, and the
 * command line of each pool changed goes into its history.
 */
#include "host_impl.h"

/* The i-th string of an array argument (NULL when it is not one). */
static const char *
fs_arg_idx(json_object *a, size_t i)
{
	json_object *v = json_object_array_get_idx(a, i);

	return (json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL);
}

/* An array argument that must be there; reports and fails when it is not. */
static int
fs_arg_array(json_object *args, const char *key, const char *op, json_object **ap)
{
	if (json_object_object_get_ex(args, key, ap) && json_object_is_type(*ap, json_type_array))
		return (0);
	return (host_report(op, key, EINVAL, "missing argument"));
}

/* ---- set ---- */

/* Set each of props on dataset name (open in fs), in order. */
static int
fs_set_props(host_fs_t *fs, const char *name, json_object *props)
{
	int rr = 0;

	for (size_t i = 0; i < json_object_array_length(props) && rr == 0; i++) {
		json_object *pv = json_object_array_get_idx(props, i);
		const char *prop = fs_arg_idx(pv, 0), *value = fs_arg_idx(pv, 1);
		char err[512];
		host_prop_change_t pc;
		if (prop == NULL || value == NULL)
			return (host_report("set property for", name, EINVAL, "bad property"));
		rr = host_mount_prop_before(fs->hf_dp, name, prop, &pc);
		if (rr != 0)
			break;
		int e = dsl_prop_set(fs->hf_dp, name, prop, value, err, sizeof (err));
		if (e != 0)
			rr = host_report("set property for", name, e, err);
		int mr = host_mount_prop_changed(fs->hf_dp, name, prop, &pc, "set property for");
		if (rr == 0)
			rr = mr;
	}
	return (rr);
}

static int
op_fs_set(json_object *args, json_object *res)
{
	json_object *names, *props;
	int r = 0;

	if (fs_arg_array(args, "names", "set", &names) != 0 ||
	    fs_arg_array(args, "props", "set", &props) != 0)
		return (HOST_FAILED);
	for (size_t d = 0; d < json_object_array_length(names); d++) {
		const char *name = fs_arg_idx(names, d);
		host_fs_t fs = { 0 };
		int rr = name != NULL ? host_fs_open_existing(name, false, &fs) :
		    host_report("set", "-", EINVAL, "bad dataset name");
		if (rr == 0)
			rr = fs_set_props(&fs, name, props);
		if (rr == 0)
			host_history_log(fs.hf_spa);
		if (name != NULL && fs.hf_dp != NULL)
			host_fs_close(&fs);
		if (rr != 0)
			r = HOST_FAILED;
	}
	return (r);
}

/* ---- inherit ---- */

typedef struct fs_inherit_arg {
	host_fs_t  *ia_fs;
	const char *ia_prop;
	int         ia_ret;
} fs_inherit_arg_t;

static int
fs_inherit_one(void *arg, const char *name, int depth)
{
	fs_inherit_arg_t *ia = arg;
	char err[512];
	host_prop_change_t pc;
	if ((ia->ia_ret = host_mount_prop_before(ia->ia_fs->hf_dp, name, ia->ia_prop,
	    &pc)) != 0)
		return (EBUSY);
	int e = dsl_prop_inherit(ia->ia_fs->hf_dp, name, ia->ia_prop, err, sizeof (err));
	if (e != 0)
		ia->ia_ret = host_report("inherit", name, e, err);
	int mr = host_mount_prop_changed(ia->ia_fs->hf_dp, name, ia->ia_prop, &pc, "inherit");
	if (e == 0 && mr != 0) {
		ia->ia_ret = mr;
		e = EBUSY;
	}
	return (e);
}

static int
op_fs_inherit(json_object *args, json_object *res)
{
	json_object *names;
	const char *prop;
	bool recursive = host_arg_bool(args, "recursive");
	int r = 0;

	if (fs_arg_array(args, "names", "inherit", &names) != 0 ||
	    host_arg_need(args, "prop", "inherit", &prop) != 0)
		return (HOST_FAILED);
	for (size_t d = 0; d < json_object_array_length(names); d++) {
		const char *name = fs_arg_idx(names, d);
		host_fs_t fs = { 0 };
		int rr = name != NULL ? host_fs_open_existing(name, false, &fs) :
		    host_report("inherit", "-", EINVAL, "bad dataset name");
		if (rr == 0) {
			fs_inherit_arg_t ia = { &fs, prop, 0 };
			(void) dsl_dataset_iter(fs.hf_dp, name, recursive ? -1 : 0,
			    fs_inherit_one, &ia);
			rr = ia.ia_ret;
			if (rr == 0)
				host_history_log(fs.hf_spa);
			host_fs_close(&fs);
		}
		if (rr != 0)
			r = HOST_FAILED;
	}
	return (r);
}

const host_op_t host_ops_fs[] = {
	{ "fs.set", op_fs_set },
	{ "fs.inherit", op_fs_inherit },
	{ NULL, NULL }
};
