/*
 * host_vdev.c — what the operations that describe a vdev tree (pool.info,
 * pool.iostat, the import listing) say of one vdev the same way: its type
 * as the command line names it, the space zpool shows for it, and the
 * fields that name it in a result (host_vdev_ident).
 */
#include "host_impl.h"
#include "space.h"

const char *
host_vdev_type(const vdev_t *vd)
{
	switch (vdev_type(vd)) {
	case VDEV_TYPE_ROOT: return ("root");
	case VDEV_TYPE_MIRROR: return ("mirror");
	case VDEV_TYPE_RAIDZ: return ("raidz");
	case VDEV_TYPE_REPLACING: return ("replacing");
	case VDEV_TYPE_SPARE: return ("spare");
	case VDEV_TYPE_DISK: return ("disk");
	case VDEV_TYPE_MISSING: return ("missing");
	default: return ("file");
	}
}

bool
host_vdev_space(spa_t *spa, const vdev_t *vd, uint64_t *size, uint64_t *alloc)
{
	if (vdev_type(vd) == VDEV_TYPE_ROOT) {
		/* as zpool: the data and special classes, not the log devices */
		spa_space_t ss, sp;
		spa_get_space(spa, &ss);
		spa_class_space(spa, VDEV_BIAS_SPECIAL, &sp);
		*size = ss.ss_size + sp.ss_size;
		*alloc = ss.ss_alloc + sp.ss_alloc;
		return (true);
	}
	if (vdev_top(vd) != vd || vdev_ms_group(vd) == NULL)
		return (false);
	metaslab_space_t ms;
	metaslab_group_space((metaslab_group_t *)vdev_ms_group(vd), &ms);
	*size = ms.ms_total;
	*alloc = ms.ms_alloc + ms.ms_deferred;  /* as the pool's (spa_get_space) */
	return (true);
}

void
host_vdev_ident(json_object *o, const vdev_t *vd, const char *type)
{
	json_object_object_add(o, "type", json_object_new_string(type));
	json_object_object_add(o, "id", json_object_new_uint64(vdev_id(vd)));
	if (vdev_type(vd) == VDEV_TYPE_RAIDZ)
		json_object_object_add(o, "nparity", json_object_new_int(vdev_nparity(vd)));
	if (vdev_path(vd) != NULL && vdev_path(vd)[0] != '\0')
		json_object_object_add(o, "path", json_object_new_string(vdev_path(vd)));
	json_object_object_add(o, "guid", json_object_new_uint64(vdev_guid(vd)));
	/* a top-level vdev of the log or special class (zpool's sections) */
	if (vdev_parent(vd) != NULL && vdev_type(vdev_parent(vd)) == VDEV_TYPE_ROOT &&
	    vdev_top(vd) == vd && vdev_alloc_bias(vd) != VDEV_BIAS_NORMAL)
		json_object_object_add(o, "class",
		    json_object_new_string(vdev_bias_name(vdev_alloc_bias(vd))));
}
