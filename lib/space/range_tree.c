/*
 * range_tree.c — ordered sets of disjoint [start, end) segments, built for
 * millions of segments (a metaslab's free space, the per-txg change sets).
 *
 * Theory.  A range tree is a B+tree keyed by segment start.  Leaves hold
 * sorted arrays of (start, end) pairs, 16 bytes a segment; inner nodes hold
 * for every child its smallest start (an exact key, not a separator) and
 * the size of the largest segment anywhere below it.  With leaves at least
 * a third full on average this costs about 20-30 bytes per segment, against
 * ~64 for a pointer-per-segment AVL tree.
 *
 *   - Every operation walks one root-to-leaf path, recorded in an rt_path_t
 *     (the tree keeps no parent pointers).  After a leaf changes, the key and
 *     max entries on the path are recomputed bottom-up, stopping as soon as a
 *     level is unchanged, so add/remove/contains are O(log n).
 *   - Adjacent segments always merge, so no two segments touch: the tree is
 *     the canonical form of the set, and numsegs/max_seg describe it exactly.
 *   - The largest segment of the whole tree is the max of the root, O(1);
 *     the same per-subtree max lets range_tree_find() skip every subtree whose
 *     segments are all too small, so first-fit costs O(log n) per segment
 *     actually examined rather than a scan from the cursor.
 *   - Inserting into a full leaf splits it; when the insertion is an append
 *     at the right edge the old leaf stays full (sequential fills pack
 *     densely).  A leaf or inner node that falls below a third of its
 *     capacity after a removal merges with a sibling, or takes entries from
 *     it when both do not fit in one node; a root with one child is dropped.
 *
 * A range tree has no lock: its owner (a metaslab) serialises access.
 */
#include "space.h"

#define RT_LEAF_CAP   64    /* segments in a leaf: 1032-byte nodes */
#define RT_INNER_CAP  48    /* children of an inner node: 1160-byte nodes */
#define RT_MAX_DEPTH  16    /* 48^15 leaves: more than any address space */

typedef struct rt_seg {
	uint64_t rs_start;
	uint64_t rs_end;
} rt_seg_t;

typedef struct rt_node rt_node_t;

typedef struct rt_ent {
	uint64_t   re_key;      /* smallest start in the child's subtree */
	uint64_t   re_max;      /* largest segment size in the child's subtree */
	rt_node_t *re_child;
} rt_ent_t;

struct rt_node {
	uint32_t rn_count;
	uint32_t rn_leaf;
	uint64_t rn_data[];     /* rt_seg_t[] (leaf) or rt_ent_t[] (inner) */
};

struct range_tree {
	rt_node_t *rt_root;     /* NULL when empty */
	int        rt_height;   /* 1: the root is a leaf */
	uint64_t   rt_space;
	uint64_t   rt_numsegs;
	uint64_t   rt_unit;        /* 0, or the unit of rt_units (range_tree_set_unit) */
	uint64_t   rt_units;       /* sum over segments of size rounded down to rt_unit */
};

/* A segment's whole units, in bytes. */
static inline uint64_t
rt_units(const range_tree_t *rt, uint64_t start, uint64_t end)
{
	return (rt->rt_unit == 0 ? 0 : (end - start) / rt->rt_unit * rt->rt_unit);
}

/* A root-to-leaf path: rp_node[0] is the root, rp_node[depth-1] the leaf. */
typedef struct rt_path {
	rt_node_t *rp_node[RT_MAX_DEPTH];
	int        rp_idx[RT_MAX_DEPTH];    /* position within rp_node[d] */
	int        rp_depth;
} rt_path_t;

/* ---- node helpers ---- */

static inline rt_seg_t *
rn_seg(const rt_node_t *n)
{
	return ((rt_seg_t *)n->rn_data);
}

static inline rt_ent_t *
rn_ent(const rt_node_t *n)
{
	return ((rt_ent_t *)n->rn_data);
}

static inline size_t
rn_esize(const rt_node_t *n)
{
	return (n->rn_leaf ? sizeof (rt_seg_t) : sizeof (rt_ent_t));
}

static inline uint32_t
rn_cap(const rt_node_t *n)
{
	return (n->rn_leaf ? RT_LEAF_CAP : RT_INNER_CAP);
}

static inline char *
rn_elem(const rt_node_t *n, uint32_t i)
{
	return ((char *)n->rn_data + i * rn_esize(n));
}

/* Both element kinds start with their key (rs_start / re_key). */
static inline uint64_t
rn_key(const rt_node_t *n, uint32_t i)
{
	return (*(const uint64_t *)rn_elem(n, i));
}

static rt_node_t *
rn_alloc(bool leaf)
{
	size_t esz = leaf ? sizeof (rt_seg_t) : sizeof (rt_ent_t);
	uint32_t cap = leaf ? RT_LEAF_CAP : RT_INNER_CAP;
	rt_node_t *n = tarn_alloc(sizeof (rt_node_t) + esz * cap);
	n->rn_leaf = leaf;
	return (n);
}

static uint64_t
rn_max(const rt_node_t *n)
{
	uint64_t m = 0;
	if (n->rn_leaf) {
		const rt_seg_t *s = rn_seg(n);
		for (uint32_t i = 0; i < n->rn_count; i++)
			m = MAX(m, s[i].rs_end - s[i].rs_start);
	} else {
		const rt_ent_t *e = rn_ent(n);
		for (uint32_t i = 0; i < n->rn_count; i++)
			m = MAX(m, e[i].re_max);
	}
	return (m);
}

static void
rn_insert_at(rt_node_t *n, uint32_t i, const void *elem)
{
	size_t esz = rn_esize(n);
	ASSERT3U(n->rn_count, <, rn_cap(n));
	memmove(rn_elem(n, i + 1), rn_elem(n, i), (n->rn_count - i) * esz);
	memcpy(rn_elem(n, i), elem, esz);
	n->rn_count++;
}

static void
rn_remove_at(rt_node_t *n, uint32_t i)
{
	size_t esz = rn_esize(n);
	ASSERT3U(i, <, n->rn_count);
	memmove(rn_elem(n, i), rn_elem(n, i + 1), (n->rn_count - i - 1) * esz);
	n->rn_count--;
}

/* Index of the last element whose key is <= x, or -1. */
static int
rn_search(const rt_node_t *n, uint64_t x)
{
	int lo = 0, hi = (int)n->rn_count;  /* answer in [lo-1, hi-1] */
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (rn_key(n, mid) <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo - 1);
}

static void
rn_set_ent(rt_ent_t *e, rt_node_t *child)
{
	e->re_key = rn_key(child, 0);
	e->re_max = rn_max(child);
	e->re_child = child;
}

/* ---- paths ---- */

/*
 * Descend towards x.  At each inner level take the last child whose key is
 * <= x (the first child if none); in the leaf rp_idx is the last segment
 * with start <= x, or -1 when x precedes every segment.
 */
static void
rt_lookup(const range_tree_t *rt, uint64_t x, rt_path_t *p)
{
	rt_node_t *n = rt->rt_root;
	int d = 0;
	ASSERT(n != NULL);
	for (;;) {
		int i = rn_search(n, x);
		p->rp_node[d] = n;
		if (n->rn_leaf) {
			p->rp_idx[d] = i;
			p->rp_depth = d + 1;
			return;
		}
		if (i < 0)
			i = 0;
		p->rp_idx[d] = i;
		n = rn_ent(n)[i].re_child;
		d++;
		VERIFY3S(d, <, RT_MAX_DEPTH);
	}
}

static inline rt_node_t *
rp_leaf(const rt_path_t *p)
{
	return (p->rp_node[p->rp_depth - 1]);
}

static inline rt_seg_t *
rp_seg(const rt_path_t *p)
{
	return (&rn_seg(rp_leaf(p))[p->rp_idx[p->rp_depth - 1]]);
}

/* Move p to the next segment in order; false at the end. */
static bool
rt_path_next(rt_path_t *p)
{
	int d = p->rp_depth - 1;
	if (p->rp_idx[d] + 1 < (int)p->rp_node[d]->rn_count) {
		p->rp_idx[d]++;
		return (true);
	}
	/* Climb to the first ancestor with a right sibling subtree. */
	while (--d >= 0) {
		if (p->rp_idx[d] + 1 < (int)p->rp_node[d]->rn_count)
			break;
	}
	if (d < 0)
		return (false);
	p->rp_idx[d]++;
	for (; d + 1 < p->rp_depth; d++) {
		p->rp_node[d + 1] = rn_ent(p->rp_node[d])[p->rp_idx[d]].re_child;
		p->rp_idx[d + 1] = 0;
	}
	return (true);
}

/*
 * Recompute key and max of every ancestor entry from level `from` (the
 * level of the node that changed) up, stopping when a level is unchanged.
 */
static void
rt_fixup(rt_path_t *p, int from)
{
	for (int d = from - 1; d >= 0; d--) {
		rt_ent_t *e = &rn_ent(p->rp_node[d])[p->rp_idx[d]];
		rt_node_t *child = p->rp_node[d + 1];
		uint64_t key = rn_key(child, 0), max = rn_max(child);
		if (e->re_key == key && e->re_max == max)
			return;
		e->re_key = key;
		e->re_max = max;
	}
}

/* ---- insertion ---- */

/*
 * Insert elem at position i of the node at level d of p, splitting as
 * needed, and repair the ancestors.
 */
static void
rt_insert_level(range_tree_t *rt, rt_path_t *p, int d, uint32_t i, const void *elem)
{
	rt_node_t *n = p->rp_node[d];
	if (n->rn_count < rn_cap(n)) {
		rn_insert_at(n, i, elem);
		rt_fixup(p, d);
		return;
	}

	/* Split: left keeps `keep` elements, the rest go to a new right node. */
	uint32_t cap = rn_cap(n);
	uint32_t keep = (i == cap) ? cap : cap / 2;
	rt_node_t *r = rn_alloc(n->rn_leaf);
	size_t esz = rn_esize(n);
	memcpy(rn_elem(r, 0), rn_elem(n, keep), (cap - keep) * esz);
	r->rn_count = cap - keep;
	n->rn_count = keep;
	if (i <= keep && keep < cap)
		rn_insert_at(n, i, elem);
	else
		rn_insert_at(r, i - keep, elem);
	rt_fixup(p, d);

	rt_ent_t ne;
	rn_set_ent(&ne, r);
	if (d == 0) {
		/* The root split: grow a level. */
		rt_node_t *root = rn_alloc(false);
		rt_ent_t le;
		rn_set_ent(&le, n);
		rn_insert_at(root, 0, &le);
		rn_insert_at(root, 1, &ne);
		rt->rt_root = root;
		rt->rt_height++;
		return;
	}
	rt_insert_level(rt, p, d - 1, (uint32_t)p->rp_idx[d - 1] + 1, &ne);
}

/* The first segment of an empty tree. */
static void
rt_insert_first(range_tree_t *rt, uint64_t start, uint64_t end)
{
	rt_seg_t s = { start, end };
	ASSERT(rt->rt_root == NULL);
	rt->rt_root = rn_alloc(true);
	rt->rt_height = 1;
	rn_insert_at(rt->rt_root, 0, &s);
}

/* ---- deletion ---- */

/*
 * The node at level d (d > 0) of p is underfull: merge it with a sibling
 * or take entries from one, then repair upwards.
 */
static void
rt_rebalance(range_tree_t *rt, rt_path_t *p, int d)
{
	rt_node_t *parent = p->rp_node[d - 1];
	int pi = p->rp_idx[d - 1];
	rt_ent_t *pe = rn_ent(parent);
	if (parent->rn_count < 2)
		return;     /* only child: nothing to balance against */
	int li = pi > 0 ? pi - 1 : pi;          /* left of the pair */
	rt_node_t *l = pe[li].re_child, *r = pe[li + 1].re_child;
	size_t esz = rn_esize(l);
	uint32_t cap = rn_cap(l);

	if (l->rn_count + r->rn_count <= cap) {
		memcpy(rn_elem(l, l->rn_count), rn_elem(r, 0), r->rn_count * esz);
		l->rn_count += r->rn_count;
		tarn_free(r);
		rn_set_ent(&pe[li], l);
		rn_remove_at(parent, (uint32_t)li + 1);
	} else {
		/* Redistribute evenly. */
		uint32_t total = l->rn_count + r->rn_count, nl = total / 2;
		if (l->rn_count > nl) {
			uint32_t mv = l->rn_count - nl;
			memmove(rn_elem(r, mv), rn_elem(r, 0), r->rn_count * esz);
			memcpy(rn_elem(r, 0), rn_elem(l, nl), mv * esz);
			r->rn_count += mv;
			l->rn_count = nl;
		} else {
			uint32_t mv = nl - l->rn_count;
			memcpy(rn_elem(l, l->rn_count), rn_elem(r, 0), mv * esz);
			memmove(rn_elem(r, 0), rn_elem(r, mv), (r->rn_count - mv) * esz);
			l->rn_count = nl;
			r->rn_count -= mv;
		}
		rn_set_ent(&pe[li], l);
		rn_set_ent(&pe[li + 1], r);
	}
	/* The parent's entries changed: repair from the parent's level up. */
	p->rp_idx[d - 1] = li;
	rt_fixup(p, d - 1);
	if (d - 1 > 0 && parent->rn_count < RT_INNER_CAP / 3)
		rt_rebalance(rt, p, d - 1);
}

/* Drop root levels that have a single child. */
static void
rt_shrink_root(range_tree_t *rt)
{
	while (rt->rt_root != NULL && !rt->rt_root->rn_leaf &&
	    rt->rt_root->rn_count == 1) {
		rt_node_t *old = rt->rt_root;
		rt->rt_root = rn_ent(old)[0].re_child;
		rt->rt_height--;
		tarn_free(old);
	}
	if (rt->rt_root != NULL && rt->rt_root->rn_count == 0) {
		tarn_free(rt->rt_root);
		rt->rt_root = NULL;
		rt->rt_height = 0;
	}
}

/* Delete the segment p points at. */
static void
rt_delete_at(range_tree_t *rt, rt_path_t *p)
{
	int d = p->rp_depth - 1;
	rt_node_t *leaf = p->rp_node[d];
	rn_remove_at(leaf, (uint32_t)p->rp_idx[d]);
	if (leaf->rn_count == 0 && d > 0) {
		/* Unlink the empty leaf (its parent has >= 2 children, or it is
		 * also emptied and handled the same way). */
		while (d > 0 && p->rp_node[d]->rn_count == 0) {
			tarn_free(p->rp_node[d]);
			rn_remove_at(p->rp_node[d - 1], (uint32_t)p->rp_idx[d - 1]);
			d--;
		}
		if (p->rp_node[d]->rn_count > 0) {
			if (p->rp_idx[d] >= (int)p->rp_node[d]->rn_count)
				p->rp_idx[d] = (int)p->rp_node[d]->rn_count - 1;
			if (d > 0)
				rt_fixup(p, d);
			if (d > 0 && p->rp_node[d]->rn_count < RT_INNER_CAP / 3)
				rt_rebalance(rt, p, d);
		}
	} else if (leaf->rn_count > 0 && d > 0) {
		rt_fixup(p, d);
		if (leaf->rn_count < RT_LEAF_CAP / 3)
			rt_rebalance(rt, p, d);
	}
	rt_shrink_root(rt);
}

/* Change the segment p points at (keeps order) and repair the path. */
static void
rt_update_at(rt_path_t *p, uint64_t start, uint64_t end)
{
	rt_seg_t *s = rp_seg(p);
	s->rs_start = start;
	s->rs_end = end;
	rt_fixup(p, p->rp_depth - 1);
}

/* ---- public interface ---- */

range_tree_t *
range_tree_create(void)
{
	return (tarn_alloc(sizeof (range_tree_t)));
}

static void
rt_free_node(rt_node_t *n)
{
	if (!n->rn_leaf) {
		for (uint32_t i = 0; i < n->rn_count; i++)
			rt_free_node(rn_ent(n)[i].re_child);
	}
	tarn_free(n);
}

void
range_tree_destroy(range_tree_t *rt)
{
	if (rt == NULL)
		return;
	if (rt->rt_root != NULL)
		rt_free_node(rt->rt_root);
	tarn_free(rt);
}

void
range_tree_add(range_tree_t *rt, uint64_t start, uint64_t size)
{
	uint64_t end = start + size;
	VERIFY3U(size, >, 0);
	VERIFY3U(end, >, start);
	rt->rt_space += size;
	if (rt->rt_root == NULL) {
		rt_insert_first(rt, start, end);
		rt->rt_numsegs++;
		rt->rt_units += rt_units(rt, start, end);
		return;
	}
	rt_path_t pred, succ;
	rt_lookup(rt, start, &pred);
	bool has_pred = pred.rp_idx[pred.rp_depth - 1] >= 0;
	succ = pred;
	bool has_succ;
	if (has_pred) {
		has_succ = rt_path_next(&succ);
	} else {
		succ.rp_idx[succ.rp_depth - 1] = 0;  /* the leftmost segment */
		has_succ = true;
	}
	rt_seg_t ps = has_pred ? *rp_seg(&pred) : (rt_seg_t){ 0, 0 };
	rt_seg_t ss = has_succ ? *rp_seg(&succ) : (rt_seg_t){ 0, 0 };
	if (has_pred)
		VERIFY3U(ps.rs_end, <=, start);     /* no overlap */
	if (has_succ)
		VERIFY3U(ss.rs_start, >=, end);
	bool mp = has_pred && ps.rs_end == start;
	bool ms = has_succ && ss.rs_start == end;

	if (mp && ms) {
		rt->rt_units += rt_units(rt, ps.rs_start, ss.rs_end) -
		    rt_units(rt, ps.rs_start, ps.rs_end) - rt_units(rt, ss.rs_start, ss.rs_end);
		rt_update_at(&pred, ps.rs_start, ss.rs_end);
		rt_lookup(rt, ss.rs_start, &succ);    /* finds succ itself */
		rt_delete_at(rt, &succ);
		rt->rt_numsegs--;
	} else if (mp) {
		rt->rt_units += rt_units(rt, ps.rs_start, end) - rt_units(rt, ps.rs_start, ps.rs_end);
		rt_update_at(&pred, ps.rs_start, end);
	} else if (ms) {
		rt->rt_units += rt_units(rt, start, ss.rs_end) - rt_units(rt, ss.rs_start, ss.rs_end);
		rt_update_at(&succ, start, ss.rs_end);
	} else {
		rt->rt_units += rt_units(rt, start, end);
		int d = pred.rp_depth - 1;
		rt_insert_level(rt, &pred, d, (uint32_t)(pred.rp_idx[d] + 1),
		    &(rt_seg_t){ start, end });
		rt->rt_numsegs++;
	}
}

void
range_tree_remove(range_tree_t *rt, uint64_t start, uint64_t size)
{
	uint64_t end = start + size;
	VERIFY3U(size, >, 0);
	VERIFY(rt->rt_root != NULL);
	rt_path_t p;
	rt_lookup(rt, start, &p);
	VERIFY3S(p.rp_idx[p.rp_depth - 1], >=, 0);
	rt_seg_t s = *rp_seg(&p);
	VERIFY3U(s.rs_start, <=, start);
	VERIFY3U(s.rs_end, >=, end);        /* wholly inside one segment */
	VERIFY3U(end, >, start);
	rt->rt_space -= size;

	bool left = s.rs_start == start, right = s.rs_end == end;
	rt->rt_units -= rt_units(rt, s.rs_start, s.rs_end);
	if (!left)
		rt->rt_units += rt_units(rt, s.rs_start, start);
	if (!right)
		rt->rt_units += rt_units(rt, end, s.rs_end);
	if (left && right) {
		rt_delete_at(rt, &p);
		rt->rt_numsegs--;
	} else if (left) {
		rt_update_at(&p, end, s.rs_end);
	} else if (right) {
		rt_update_at(&p, s.rs_start, start);
	} else {
		rt_update_at(&p, s.rs_start, start);
		int d = p.rp_depth - 1;
		rt_insert_level(rt, &p, d, (uint32_t)(p.rp_idx[d] + 1),
		    &(rt_seg_t){ end, s.rs_end });
		rt->rt_numsegs++;
	}
}

bool
range_tree_contains(const range_tree_t *rt, uint64_t start, uint64_t size)
{
	if (rt->rt_root == NULL || size == 0)
		return (false);
	rt_path_t p;
	rt_lookup(rt, start, &p);
	if (p.rp_idx[p.rp_depth - 1] < 0)
		return (false);
	const rt_seg_t *s = rp_seg(&p);
	return (s->rs_start <= start && start + size <= s->rs_end &&
	    start + size > start);
}

bool
range_tree_intersects(const range_tree_t *rt, uint64_t start, uint64_t size)
{
	if (rt->rt_root == NULL || size == 0)
		return (false);
	uint64_t last = start + size - 1;
	if (last < start)
		last = UINT64_MAX;
	rt_path_t p;
	rt_lookup(rt, last, &p);        /* last segment starting <= last */
	if (p.rp_idx[p.rp_depth - 1] < 0)
		return (false);
	return (rp_seg(&p)->rs_end > start);
}

uint64_t
range_tree_space(const range_tree_t *rt)
{
	return (rt->rt_space);
}

uint64_t
range_tree_numsegs(const range_tree_t *rt)
{
	return (rt->rt_numsegs);
}

static void
rt_walk_node(const rt_node_t *n, range_tree_fn_t fn, void *arg)
{
	if (n->rn_leaf) {
		const rt_seg_t *s = rn_seg(n);
		for (uint32_t i = 0; i < n->rn_count; i++)
			fn(arg, s[i].rs_start, s[i].rs_end - s[i].rs_start);
		return;
	}
	for (uint32_t i = 0; i < n->rn_count; i++)
		rt_walk_node(rn_ent(n)[i].re_child, fn, arg);
}

void
range_tree_walk(const range_tree_t *rt, range_tree_fn_t fn, void *arg)
{
	if (rt->rt_root != NULL)
		rt_walk_node(rt->rt_root, fn, arg);
}

static void
rt_units_cb(void *arg, uint64_t start, uint64_t size)
{
	range_tree_t *rt = arg;
	rt->rt_units += rt_units(rt, start, start + size);
}

void
range_tree_set_unit(range_tree_t *rt, uint64_t unit)
{
	rt->rt_unit = unit;
	rt->rt_units = 0;
	if (unit != 0)
		range_tree_walk(rt, rt_units_cb, rt);
}

uint64_t
range_tree_unit_space(const range_tree_t *rt)
{
	return (rt->rt_units);
}

void
range_tree_vacate(range_tree_t *rt, range_tree_fn_t fn, void *arg)
{
	if (rt->rt_root == NULL)
		return;
	rt_node_t *root = rt->rt_root;
	rt->rt_root = NULL;
	rt->rt_height = 0;
	rt->rt_space = 0;
	rt->rt_numsegs = 0;
	rt->rt_units = 0;
	if (fn != NULL)
		rt_walk_node(root, fn, arg);
	rt_free_node(root);
}

/*
 * First fit below n: the first segment with end > lo and start < hi that
 * holds `size` bytes aligned to `align` starting at or after lo.
 */
static bool
rt_fit(const rt_node_t *n, uint64_t lo, uint64_t hi, uint64_t size,
    uint64_t align, uint64_t *out)
{
	int i = rn_search(n, lo);
	if (i < 0)
		i = 0;
	if (!n->rn_leaf) {
		const rt_ent_t *e = rn_ent(n);
		for (; i < (int)n->rn_count && e[i].re_key < hi; i++) {
			if (e[i].re_max >= size &&
			    rt_fit(e[i].re_child, lo, hi, size, align, out))
				return (true);
		}
		return (false);
	}
	const rt_seg_t *s = rn_seg(n);
	for (; i < (int)n->rn_count && s[i].rs_start < hi; i++) {
		if (s[i].rs_end <= lo || s[i].rs_end - s[i].rs_start < size)
			continue;
		uint64_t b = MAX(s[i].rs_start, lo);
		uint64_t a = P2ROUNDUP(b, align);
		if (a >= b && a < s[i].rs_end && s[i].rs_end - a >= size) {
			*out = a;
			return (true);
		}
	}
	return (false);
}

int
range_tree_find(const range_tree_t *rt, uint64_t size, uint64_t align,
    uint64_t *cursor, uint64_t *start)
{
	if (align == 0)
		align = 1;
	VERIFY(ISP2(align));
	if (rt->rt_root == NULL || size == 0 || range_tree_max_seg(rt) < size)
		return (SET_ERROR(ENOSPC));
	uint64_t a;
	if (rt_fit(rt->rt_root, *cursor, UINT64_MAX, size, align, &a) ||
	    (*cursor > 0 && rt_fit(rt->rt_root, 0, *cursor, size, align, &a))) {
		*start = a;
		*cursor = a + size;
		return (0);
	}
	return (SET_ERROR(ENOSPC));
}

uint64_t
range_tree_max_seg(const range_tree_t *rt)
{
	return (rt->rt_root == NULL ? 0 : rn_max(rt->rt_root));
}
