// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * C++ names (lib/events/cxxname.h).
 *
 * libiberty parses a mangled name into a tree of components and prints a
 * tree back; the forms are prints of the same tree with parts left out.
 * Working on the tree, not on the printed text, is what keeps operator<,
 * operator< <int>, operator() and {lambda(int)#1} intact: a printed name
 * cannot be cut at its '<' and '(' without parsing C++ again.  Nodes are
 * never changed in place (a substitution shares one node between the name
 * and its parameters): a node that changes is copied into a small arena.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "cxxname.h"

/* What the tree is parsed and printed with: parameters, const (as c++filt). */
#define CXX_PARSE	(DMGL_PARAMS | DMGL_ANSI)

/* Copied nodes: a name nests a few levels; one deeper than this keeps its longer form. */
#define CXX_ARENA	64

struct arena {
	int used;
	bool full;
	struct demangle_component n[CXX_ARENA];
};

static struct demangle_component *node_copy(struct arena *a, const struct demangle_component *dc)
{
	struct demangle_component *n;

	if (a->used == CXX_ARENA) {
		a->full = true;
		return NULL;
	}
	n = &a->n[a->used++];
	*n = *dc;
	return n;
}

/* @dc with its left and right children replaced (a copy, or @dc if they are the same). */
static struct demangle_component *with_kids(struct arena *a, struct demangle_component *dc,
					    struct demangle_component *l,
					    struct demangle_component *r)
{
	struct demangle_component *n;

	if (l == dc->u.s_binary.left && r == dc->u.s_binary.right)
		return dc;
	n = node_copy(a, dc);
	if (!n)
		return dc;
	n->u.s_binary.left = l;
	n->u.s_binary.right = r;
	return n;
}

/* The qualifiers of a member function's `this` (const, &&, noexcept): not part of its name. */
static bool is_fnqual(const struct demangle_component *dc)
{
	switch (dc->type) {
	case DEMANGLE_COMPONENT_RESTRICT_THIS:
	case DEMANGLE_COMPONENT_VOLATILE_THIS:
	case DEMANGLE_COMPONENT_CONST_THIS:
	case DEMANGLE_COMPONENT_REFERENCE_THIS:
	case DEMANGLE_COMPONENT_RVALUE_REFERENCE_THIS:
	case DEMANGLE_COMPONENT_TRANSACTION_SAFE:
	case DEMANGLE_COMPONENT_NOEXCEPT:
	case DEMANGLE_COMPONENT_THROW_SPEC:
		return true;
	default:
		return false;
	}
}

/* Special functions that name another: "non-virtual thunk to B::f()". */
static bool is_wrapper(const struct demangle_component *dc)
{
	switch (dc->type) {
	case DEMANGLE_COMPONENT_THUNK:
	case DEMANGLE_COMPONENT_VIRTUAL_THUNK:
	case DEMANGLE_COMPONENT_COVARIANT_THUNK:
	case DEMANGLE_COMPONENT_TRANSACTION_CLONE:
	case DEMANGLE_COMPONENT_NONTRANSACTION_CLONE:
	case DEMANGLE_COMPONENT_HIDDEN_ALIAS:
		return true;
	default:
		return false;
	}
}

static struct demangle_component *strip_fnquals(struct demangle_component *dc)
{
	while (dc && is_fnqual(dc))
		dc = dc->u.s_binary.left;
	return dc;
}

/*
 * The template form: the function's name without its type, as libiberty
 * prints a name without DMGL_PARAMS (the qualifiers of a function local to
 * another sit on the local name's right, as there).
 */
static struct demangle_component *templ_of(struct arena *a, struct demangle_component *dc)
{
	if (dc->type == DEMANGLE_COMPONENT_TYPED_NAME) {
		dc = strip_fnquals(dc->u.s_binary.left);
		if (dc && dc->type == DEMANGLE_COMPONENT_LOCAL_NAME)
			dc = with_kids(a, dc, dc->u.s_binary.left,
				       strip_fnquals(dc->u.s_binary.right));
		return dc;
	}
	if (dc->type == DEMANGLE_COMPONENT_CLONE)
		return templ_of(a, dc->u.s_binary.left);
	if (is_wrapper(dc) && dc->u.s_binary.left)
		return with_kids(a, dc, templ_of(a, dc->u.s_binary.left), dc->u.s_binary.right);
	return dc;
}

/*
 * The full form: the function without its return type (a template's, or a
 * conversion's in a thunk's target).  DMGL_RET_DROP would drop the return
 * types of the function types inside it too (X<void ()>).
 */
static struct demangle_component *noret_of(struct arena *a, struct demangle_component *dc)
{
	struct demangle_component *ft;

	switch (dc->type) {
	case DEMANGLE_COMPONENT_TYPED_NAME:
		ft = dc->u.s_binary.right;
		if (!ft || ft->type != DEMANGLE_COMPONENT_FUNCTION_TYPE || !ft->u.s_binary.left)
			return dc;
		ft = with_kids(a, ft, NULL, ft->u.s_binary.right);
		return with_kids(a, dc, dc->u.s_binary.left, ft);
	case DEMANGLE_COMPONENT_CLONE:
		return with_kids(a, dc, noret_of(a, dc->u.s_binary.left), dc->u.s_binary.right);
	default:
		if (is_wrapper(dc) && dc->u.s_binary.left)
			return with_kids(a, dc, noret_of(a, dc->u.s_binary.left),
					 dc->u.s_binary.right);
		return dc;
	}
}

/*
 * The short form: down the name's scopes, every template's arguments, ABI
 * tag, function type and `this` qualifier left out.  What a scope holds
 * that is no scope is kept whole: a lambda's parameters, a conversion
 * operator's type, the template arguments of a type named inside a lambda.
 */
static struct demangle_component *short_of(struct arena *a, struct demangle_component *dc)
{
	struct demangle_component *n, *m;
	const char *lt;

	if (!dc)
		return NULL;
	switch (dc->type) {
	case DEMANGLE_COMPONENT_TEMPLATE:
	case DEMANGLE_COMPONENT_TAGGED_NAME:
	case DEMANGLE_COMPONENT_TYPED_NAME:
	case DEMANGLE_COMPONENT_CLONE:
		return short_of(a, dc->u.s_binary.left);
	case DEMANGLE_COMPONENT_QUAL_NAME:
	case DEMANGLE_COMPONENT_LOCAL_NAME:
		return with_kids(a, dc, short_of(a, dc->u.s_binary.left),
				 short_of(a, dc->u.s_binary.right));
	case DEMANGLE_COMPONENT_MODULE_ENTITY:
		return with_kids(a, dc, short_of(a, dc->u.s_binary.left), dc->u.s_binary.right);
	case DEMANGLE_COMPONENT_CTOR:
		m = short_of(a, dc->u.s_ctor.name);
		if (m == dc->u.s_ctor.name || !(n = node_copy(a, dc)))
			return dc;
		n->u.s_ctor.name = m;
		return n;
	case DEMANGLE_COMPONENT_DTOR:
		m = short_of(a, dc->u.s_dtor.name);
		if (m == dc->u.s_dtor.name || !(n = node_copy(a, dc)))
			return dc;
		n->u.s_dtor.name = m;
		return n;
	case DEMANGLE_COMPONENT_SUB_STD:
		/* std::string's constructors are printed from one string: "std::basic_string<char, ...>" */
		lt = memchr(dc->u.s_string.string, '<', dc->u.s_string.len);
		if (!lt || !(n = node_copy(a, dc)))
			return dc;
		n->type = DEMANGLE_COMPONENT_NAME;
		n->u.s_name.s = dc->u.s_string.string;
		n->u.s_name.len = (int)(lt - dc->u.s_string.string);
		return n;
	default:
		if (is_fnqual(dc))
			return short_of(a, dc->u.s_binary.left);
		if (is_wrapper(dc))
			return with_kids(a, dc, short_of(a, dc->u.s_binary.left),
					 dc->u.s_binary.right);
		return dc;
	}
}

static char *print(struct demangle_component *dc, int options, int len_hint)
{
	size_t size;

	if (!dc)
		return NULL;
	return cplus_demangle_print(options, dc, len_hint, &size);
}

/*
 * One form of @raw, from a tree of its own: libiberty's printer counts a
 * tree's nodes by marking them, and a tree printed twice is under-counted
 * (and then fails to print).
 */
static char *one_form(const char *raw, enum cxx_form form, struct arena *a)
{
	struct demangle_component *tree, *dc;
	void *mem = NULL;
	char *s = NULL;
	int hint = (int)strlen(raw) * 2;

	/* on failure, libiberty has freed what it allocated */
	tree = cplus_demangle_v3_components(raw, CXX_PARSE, &mem);
	if (!tree)
		return NULL;
	a->used = 0;
	a->full = false;
	switch (form) {
	case CXX_SIG:
		s = print(tree, CXX_PARSE, hint);
		break;
	case CXX_FULL:
		s = print(noret_of(a, tree), CXX_PARSE, hint);
		break;
	case CXX_TEMPL:
		s = print(templ_of(a, tree), CXX_PARSE, hint);
		break;
	case CXX_SHORT:
		dc = short_of(a, templ_of(a, tree));
		s = a->full ? NULL : print(dc, CXX_PARSE, hint / 2);
		break;
	default:
		break;
	}
	if (a->full) {
		free(s);
		s = NULL;
	}
	free(mem);
	return s;
}

int cxx_names(const char *raw, unsigned int want, char *out[CXX_NR_FORMS])
{
	struct arena a;
	int i;

	for (i = 0; i < CXX_NR_FORMS; i++)
		out[i] = NULL;
	if (!cxx_mangled(raw))
		return -EINVAL;
	for (i = 0; i < CXX_NR_FORMS; i++) {
		if (!(want & (1U << i)))
			continue;
		out[i] = one_form(raw, i, &a);
		/*
		 * A short name that does not print alone (a lambda's parameter
		 * naming its enclosing template's argument) or that nests too
		 * deep: the template form then.
		 */
		if (!out[i] && i == CXX_SHORT)
			out[i] = one_form(raw, CXX_TEMPL, &a);
		if (!out[i])
			goto fail;
	}
	return 0;
fail:
	/* a tree that does not print is no name either (or memory ran out: libiberty does not say) */
	for (i = 0; i < CXX_NR_FORMS; i++) {
		free(out[i]);
		out[i] = NULL;
	}
	return -EINVAL;
}

char *cxx_name(const char *raw, enum cxx_form form)
{
	char *out[CXX_NR_FORMS];

	if (form >= CXX_NR_FORMS || cxx_names(raw, 1U << form, out))
		return NULL;
	return out[form];
}

const char *cxx_params(const char *full, const char *templ)
{
	size_t n = strlen(templ);

	return strncmp(full, templ, n) ? full + strlen(full) : full + n;
}

/* ---- sets of symbols ---------------------------------------------------- */

#define NONE		UINT32_MAX

struct cxx_ent {
	const char *raw;
	uint64_t hash;		/* of raw */
	char *shrt;		/* its short form; NULL: no C++ name (then raw stands for it) */
	char *name;		/* what tells it apart: shrt, or a longer form (owned when != shrt) */
	uint32_t next_same;	/* the next entry whose short name is the same */
	uint32_t nr_same;	/* at a group's first entry: how many */
};

/* One working-out of the names, kept for the pointers handed out. */
struct cxx_gen {
	struct cxx_gen *older;
	struct cxx_ent *ents;
	uint32_t nr;
	uint32_t *index;	/* by raw: entry numbers, NONE where free */
	size_t mask;
};

struct cxx_set {
	const char **raws;
	size_t nr_raws, cap_raws;
	struct cxx_gen *gen;	/* the names of the first gen->nr... raws; NULL: not worked out */
	bool stale;		/* raws were added since */
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

struct cxx_set *cxx_set_new(void)
{
	return calloc(1, sizeof(struct cxx_set));
}

static void gen_free(struct cxx_gen *g)
{
	uint32_t i;

	for (i = 0; i < g->nr; i++) {
		if (g->ents[i].name != g->ents[i].shrt)
			free(g->ents[i].name);
		free(g->ents[i].shrt);
	}
	free(g->ents);
	free(g->index);
	free(g);
}

void cxx_set_free(struct cxx_set *s)
{
	if (!s)
		return;
	while (s->gen) {
		struct cxx_gen *g = s->gen;

		s->gen = g->older;
		gen_free(g);
	}
	free(s->raws);
	free(s);
}

int cxx_set_add(struct cxx_set *s, const char *raw)
{
	if (s->nr_raws == s->cap_raws) {
		size_t cap = s->cap_raws ? 2 * s->cap_raws : 1024;
		const char **nr = realloc(s->raws, cap * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		s->raws = nr;
		s->cap_raws = cap;
	}
	s->raws[s->nr_raws++] = raw;
	s->stale = true;
	return 0;
}

/* The entry of @raw (of hash @h) in @g, or NONE. */
static uint32_t gen_find(const struct cxx_gen *g, const char *raw, uint64_t h)
{
	size_t i;

	for (i = h & g->mask; g->index[i] != NONE; i = (i + 1) & g->mask) {
		const struct cxx_ent *e = &g->ents[g->index[i]];

		if (e->hash == h && !strcmp(e->raw, raw))
			return g->index[i];
	}
	return NONE;
}

/* A group member's candidate names, one form at a time. */
struct cand {
	const char *name;	/* under the form tried */
	const char *full;	/* CXX_FULL (a C function: its name) */
	uint32_t member;
};

static int cand_cmp(const void *x, const void *y)
{
	const struct cand *a = x, *b = y;
	int c = strcmp(a->name, b->name);

	return c ? c : strcmp(a->full, b->full);
}

struct member {
	struct cxx_ent *e;
	char *templ, *full;	/* NULL for a C function */
	char *with_params;	/* short form + parameters */
	const char *form[3];	/* the candidates, in the order they are tried */
	int chosen;		/* -1: not yet */
};

/*
 * The entries of one group share a short name: give each the first form
 * under which no member with another full form has the same name.
 */
static int split_group(struct cxx_gen *g, uint32_t first, uint32_t nr)
{
	struct member *m = calloc(nr, sizeof(*m));
	struct cand *c = calloc(nr, sizeof(*c));
	uint32_t i, j, k, e;
	int ret = -ENOMEM, f;
	bool all_same = true;

	if (!m || !c)
		goto out;
	/* the full forms first: most groups are one function's symbols (C1 and C2) */
	for (i = 0, e = first; i < nr; i++, e = g->ents[e].next_same) {
		struct member *p = &m[i];

		p->e = &g->ents[e];
		p->chosen = -1;
		p->full = p->e->shrt ? cxx_name(p->e->raw, CXX_FULL) : NULL;
		/* a C function of that name (or one libiberty reads once only): its own name */
		p->form[0] = p->form[1] = p->form[2] =
			p->full ? p->full : p->e->shrt ? p->e->shrt : p->e->raw;
		if (i && strcmp(p->form[2], m[0].form[2]))
			all_same = false;
	}
	if (all_same) {
		ret = 0;	/* one function under several symbols */
		goto out;
	}
	for (i = 0; i < nr; i++) {
		struct member *p = &m[i];

		if (!p->full)
			continue;
		p->templ = cxx_name(p->e->raw, CXX_TEMPL);
		if (!p->templ) {
			p->form[0] = p->form[1] = p->full;
			continue;
		}
		if (asprintf(&p->with_params, "%s%s", p->e->shrt,
			     cxx_params(p->full, p->templ)) < 0) {
			p->with_params = NULL;
			goto out;
		}
		p->form[0] = p->with_params;
		p->form[1] = p->templ;
	}
	for (f = 0; f < 3; f++) {
		for (i = 0; i < nr; i++) {
			c[i].name = m[i].form[f];
			c[i].full = m[i].form[2];
			c[i].member = i;
		}
		qsort(c, nr, sizeof(*c), cand_cmp);
		for (i = 0; i < nr; i = j) {
			bool unique = true;

			for (j = i + 1; j < nr && !strcmp(c[j].name, c[i].name); j++)
				if (strcmp(c[j].full, c[i].full))
					unique = false;
			if (!unique)
				continue;
			for (k = i; k < j; k++)
				if (m[c[k].member].chosen < 0)
					m[c[k].member].chosen = f;
		}
	}
	for (i = 0; i < nr; i++) {
		struct member *p = &m[i];
		const char *name = p->form[p->chosen < 0 ? 2 : p->chosen];

		/* a C function keeps its own name; the last form is always unique */
		if (!p->e->shrt || !strcmp(name, p->e->shrt))
			continue;
		p->e->name = strdup(name);
		if (!p->e->name) {
			p->e->name = p->e->shrt;
			goto out;
		}
	}
	ret = 0;
out:
	for (i = 0; m && i < nr; i++) {
		free(m[i].templ);
		free(m[i].full);
		free(m[i].with_params);
	}
	free(m);
	free(c);
	return ret;
}

/* Work out the names of every raw added so far, as a new generation. */
static int set_resolve(struct cxx_set *s)
{
	struct cxx_gen *g = calloc(1, sizeof(*g));
	uint32_t *groups = NULL;
	size_t cap, i, gmask;
	int ret = -ENOMEM;

	if (!g || s->nr_raws >= NONE / 4)
		goto fail;
	for (cap = 16; cap < 2 * s->nr_raws; cap *= 2)
		;
	g->mask = cap - 1;
	g->ents = calloc(s->nr_raws ? s->nr_raws : 1, sizeof(*g->ents));
	g->index = malloc(cap * sizeof(*g->index));
	groups = malloc(cap * sizeof(*groups));
	if (!g->ents || !g->index || !groups)
		goto fail;
	memset(g->index, 0xff, cap * sizeof(*g->index));
	memset(groups, 0xff, cap * sizeof(*groups));
	gmask = cap - 1;
	for (i = 0; i < s->nr_raws; i++) {
		uint64_t h = str_hash(s->raws[i]);
		struct cxx_ent *e;
		const char *key;
		size_t k;

		if (gen_find(g, s->raws[i], h) != NONE)
			continue;
		e = &g->ents[g->nr];
		e->raw = s->raws[i];
		e->hash = h;
		e->next_same = NONE;
		for (k = h & g->mask; g->index[k] != NONE; k = (k + 1) & g->mask)
			;
		g->index[k] = g->nr;
		if (cxx_mangled(e->raw)) {
			e->shrt = cxx_name(e->raw, CXX_SHORT);
			e->name = e->shrt;
		}
		/* a C function takes part by its own name: a C++ one of that short name must differ */
		key = e->shrt ? e->shrt : e->raw;
		h = e->shrt ? str_hash(key) : h;
		for (k = h & gmask; groups[k] != NONE; k = (k + 1) & gmask) {
			struct cxx_ent *head = &g->ents[groups[k]];

			if (!strcmp(head->shrt ? head->shrt : head->raw, key))
				break;
		}
		if (groups[k] == NONE) {
			groups[k] = g->nr;
			e->nr_same = 1;
		} else {
			/* after the group's first entry, which keeps the count */
			struct cxx_ent *head = &g->ents[groups[k]];

			e->next_same = head->next_same;
			head->next_same = g->nr;
			head->nr_same++;
		}
		g->nr++;
	}
	for (i = 0; i < cap; i++) {
		uint32_t first = groups[i], e;
		bool any_cxx = false;

		if (first == NONE || g->ents[first].nr_same < 2)
			continue;
		for (e = first; e != NONE; e = g->ents[e].next_same)
			any_cxx |= g->ents[e].shrt != NULL;
		if (any_cxx && split_group(g, first, g->ents[first].nr_same))
			goto fail;
	}
	free(groups);
	g->older = s->gen;
	s->gen = g;
	s->stale = false;
	return 0;
fail:
	free(groups);
	if (g)
		gen_free(g);
	return ret;
}

const char *cxx_set_short(struct cxx_set *s, const char *raw)
{
	uint32_t e;

	if (!cxx_mangled(raw))
		return NULL;
	if ((!s->gen || s->stale) && set_resolve(s))
		return NULL;
	e = gen_find(s->gen, raw, str_hash(raw));
	return e == NONE ? NULL : s->gen->ents[e].name;
}
