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

/* A name printed into a buffer of the stack, then copied: one malloc, of its size. */
struct out {
	char buf[1024];
	size_t len;
	char *big;		/* past the buffer: malloc'd */
	bool failed;
};

static void out_add(const char *s, size_t len, void *opaque)
{
	struct out *o = opaque;
	char *nb;

	if (o->failed)
		return;
	if (!o->big && o->len + len < sizeof(o->buf)) {
		memcpy(o->buf + o->len, s, len);
		o->len += len;
		return;
	}
	nb = realloc(o->big, o->len + len + 1);
	if (!nb) {
		o->failed = true;
		return;
	}
	if (!o->big)
		memcpy(nb, o->buf, o->len);
	memcpy(nb + o->len, s, len);
	o->big = nb;
	o->len += len;
}

/*
 * Unmark a printed tree.  The printer first counts a tree's nodes, marking
 * each (d_counting), and does not count below a node marked twice: a tree
 * printed again would be under-counted, and would not print.  Below a kind
 * of node not known here the marks stay: that print fails, and the name is
 * parsed anew.
 */
static void unmark(struct demangle_component *dc)
{
	if (!dc || !dc->d_counting)
		return;
	dc->d_counting = 0;
	switch (dc->type) {
	case DEMANGLE_COMPONENT_QUAL_NAME:
	case DEMANGLE_COMPONENT_LOCAL_NAME:
	case DEMANGLE_COMPONENT_TYPED_NAME:
	case DEMANGLE_COMPONENT_TEMPLATE:
	case DEMANGLE_COMPONENT_VTABLE:
	case DEMANGLE_COMPONENT_VTT:
	case DEMANGLE_COMPONENT_CONSTRUCTION_VTABLE:
	case DEMANGLE_COMPONENT_TYPEINFO:
	case DEMANGLE_COMPONENT_TYPEINFO_NAME:
	case DEMANGLE_COMPONENT_TYPEINFO_FN:
	case DEMANGLE_COMPONENT_THUNK:
	case DEMANGLE_COMPONENT_VIRTUAL_THUNK:
	case DEMANGLE_COMPONENT_COVARIANT_THUNK:
	case DEMANGLE_COMPONENT_JAVA_CLASS:
	case DEMANGLE_COMPONENT_GUARD:
	case DEMANGLE_COMPONENT_TLS_INIT:
	case DEMANGLE_COMPONENT_TLS_WRAPPER:
	case DEMANGLE_COMPONENT_REFTEMP:
	case DEMANGLE_COMPONENT_HIDDEN_ALIAS:
	case DEMANGLE_COMPONENT_RESTRICT:
	case DEMANGLE_COMPONENT_VOLATILE:
	case DEMANGLE_COMPONENT_CONST:
	case DEMANGLE_COMPONENT_RESTRICT_THIS:
	case DEMANGLE_COMPONENT_VOLATILE_THIS:
	case DEMANGLE_COMPONENT_CONST_THIS:
	case DEMANGLE_COMPONENT_REFERENCE_THIS:
	case DEMANGLE_COMPONENT_RVALUE_REFERENCE_THIS:
	case DEMANGLE_COMPONENT_TRANSACTION_SAFE:
	case DEMANGLE_COMPONENT_NOEXCEPT:
	case DEMANGLE_COMPONENT_THROW_SPEC:
	case DEMANGLE_COMPONENT_VENDOR_TYPE_QUAL:
	case DEMANGLE_COMPONENT_POINTER:
	case DEMANGLE_COMPONENT_REFERENCE:
	case DEMANGLE_COMPONENT_RVALUE_REFERENCE:
	case DEMANGLE_COMPONENT_COMPLEX:
	case DEMANGLE_COMPONENT_IMAGINARY:
	case DEMANGLE_COMPONENT_VENDOR_TYPE:
	case DEMANGLE_COMPONENT_FUNCTION_TYPE:
	case DEMANGLE_COMPONENT_ARRAY_TYPE:
	case DEMANGLE_COMPONENT_PTRMEM_TYPE:
	case DEMANGLE_COMPONENT_VECTOR_TYPE:
	case DEMANGLE_COMPONENT_ARGLIST:
	case DEMANGLE_COMPONENT_TEMPLATE_ARGLIST:
	case DEMANGLE_COMPONENT_TPARM_OBJ:
	case DEMANGLE_COMPONENT_INITIALIZER_LIST:
	case DEMANGLE_COMPONENT_CAST:
	case DEMANGLE_COMPONENT_CONVERSION:
	case DEMANGLE_COMPONENT_NULLARY:
	case DEMANGLE_COMPONENT_UNARY:
	case DEMANGLE_COMPONENT_BINARY:
	case DEMANGLE_COMPONENT_BINARY_ARGS:
	case DEMANGLE_COMPONENT_TRINARY:
	case DEMANGLE_COMPONENT_TRINARY_ARG1:
	case DEMANGLE_COMPONENT_TRINARY_ARG2:
	case DEMANGLE_COMPONENT_LITERAL:
	case DEMANGLE_COMPONENT_LITERAL_NEG:
	case DEMANGLE_COMPONENT_VENDOR_EXPR:
	case DEMANGLE_COMPONENT_JAVA_RESOURCE:
	case DEMANGLE_COMPONENT_COMPOUND_NAME:
	case DEMANGLE_COMPONENT_DECLTYPE:
	case DEMANGLE_COMPONENT_TRANSACTION_CLONE:
	case DEMANGLE_COMPONENT_NONTRANSACTION_CLONE:
	case DEMANGLE_COMPONENT_PACK_EXPANSION:
	case DEMANGLE_COMPONENT_TAGGED_NAME:
	case DEMANGLE_COMPONENT_CLONE:
		unmark(dc->u.s_binary.left);
		unmark(dc->u.s_binary.right);
		break;
	case DEMANGLE_COMPONENT_GLOBAL_CONSTRUCTORS:
	case DEMANGLE_COMPONENT_GLOBAL_DESTRUCTORS:
	case DEMANGLE_COMPONENT_MODULE_ENTITY:
		unmark(dc->u.s_binary.left);
		break;
	case DEMANGLE_COMPONENT_CTOR:
		unmark(dc->u.s_ctor.name);
		break;
	case DEMANGLE_COMPONENT_DTOR:
		unmark(dc->u.s_dtor.name);
		break;
	case DEMANGLE_COMPONENT_EXTENDED_OPERATOR:
		unmark(dc->u.s_extended_operator.name);
		break;
	case DEMANGLE_COMPONENT_LAMBDA:
	case DEMANGLE_COMPONENT_DEFAULT_ARG:
		unmark(dc->u.s_unary_num.sub);
		break;
	default:
		break;
	}
}

/* @raw parsed once, printed in any form. */
struct parsed {
	const char *raw;
	struct demangle_component *tree;
	void *mem;
	bool printed;		/* its marks then need undoing first */
	struct arena a;
};

static int parse(struct parsed *p)
{
	free(p->mem);
	p->mem = NULL;
	p->printed = false;
	/* on failure, libiberty has freed what it allocated */
	p->tree = cplus_demangle_v3_components(p->raw, CXX_PARSE, &p->mem);
	if (!p->tree)
		p->mem = NULL;
	return p->tree ? 0 : -EINVAL;
}

static char *print_once(struct parsed *p, enum cxx_form form)
{
	struct demangle_component *dc = NULL;
	struct out o;
	char *s;

	p->a.used = 0;
	p->a.full = false;
	switch (form) {
	case CXX_SIG:
		dc = p->tree;
		break;
	case CXX_FULL:
		dc = noret_of(&p->a, p->tree);
		break;
	case CXX_TEMPL:
		dc = templ_of(&p->a, p->tree);
		break;
	case CXX_SHORT:
		dc = short_of(&p->a, templ_of(&p->a, p->tree));
		break;
	default:
		break;
	}
	if (!dc || p->a.full)
		return NULL;
	o.len = 0;
	o.big = NULL;
	o.failed = false;
	p->printed = true;
	if (!cplus_demangle_print_callback(CXX_PARSE, dc, out_add, &o) || o.failed) {
		unmark(dc);
		free(o.big);
		return NULL;
	}
	unmark(dc);
	if (o.big) {
		o.big[o.len] = 0;
		return o.big;
	}
	s = malloc(o.len + 1);
	if (s) {
		memcpy(s, o.buf, o.len);
		s[o.len] = 0;
	}
	return s;
}

/* @form of @p; a tree printed before and that now fails is parsed anew, once. */
static char *print_form(struct parsed *p, enum cxx_form form)
{
	char *s;

	if (!p->tree)
		return NULL;
	s = print_once(p, form);
	if (!s && p->printed && !parse(p))
		s = print_once(p, form);
	return s;
}

int cxx_names(const char *raw, unsigned int want, char *out[CXX_NR_FORMS])
{
	struct parsed p = { .raw = raw };
	int i;

	for (i = 0; i < CXX_NR_FORMS; i++)
		out[i] = NULL;
	if (!cxx_mangled(raw) || parse(&p))
		return -EINVAL;
	for (i = 0; i < CXX_NR_FORMS; i++) {
		if (!(want & (1U << i)))
			continue;
		out[i] = print_form(&p, i);
		/*
		 * A short name that does not print alone (a lambda's parameter
		 * naming its enclosing template's argument) or that nests too
		 * deep: the template form then.
		 */
		if (!out[i] && i == CXX_SHORT)
			out[i] = print_form(&p, CXX_TEMPL);
		if (!out[i])
			goto fail;
	}
	free(p.mem);
	return 0;
fail:
	/* a tree that does not print is no name either (or memory ran out: libiberty does not say) */
	for (i = 0; i < CXX_NR_FORMS; i++) {
		free(out[i]);
		out[i] = NULL;
	}
	free(p.mem);
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

/* One working-out of the names. */
struct cxx_gen {
	struct cxx_ent *ents;
	uint32_t nr;
	uint32_t *index;	/* by raw: entry numbers, NONE where free */
	size_t mask;
};

struct cxx_set {
	const char **raws;
	size_t nr_raws, cap_raws;
	struct cxx_gen *gen;	/* the names last worked out; NULL: none yet */
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
	if (s->gen)
		gen_free(s->gen);
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
	for (i = 0, e = first; i < nr; i++, e = g->ents[e].next_same) {
		struct member *p = &m[i];
		char *forms[CXX_NR_FORMS];

		p->e = &g->ents[e];
		p->chosen = -1;
		if (p->e->shrt && !cxx_names(p->e->raw, (1U << CXX_TEMPL) | (1U << CXX_FULL), forms)) {
			p->templ = forms[CXX_TEMPL];
			p->full = forms[CXX_FULL];
			p->form[0] = p->form[1] = p->form[2] = p->full;
		} else {
			/* a C function of that name (or one libiberty reads once only): its own name */
			p->form[0] = p->form[1] = p->form[2] = p->e->shrt ? p->e->shrt : p->e->raw;
		}
		if (i && strcmp(p->form[2], m[0].form[2]))
			all_same = false;
	}
	if (all_same) {
		ret = 0;	/* one function under several symbols (a constructor's C1 and C2) */
		goto out;
	}
	for (i = 0; i < nr; i++) {
		struct member *p = &m[i];

		if (!p->full)
			continue;
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
	if (s->gen)
		gen_free(s->gen);
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
