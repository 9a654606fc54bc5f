// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * C++ names in event definitions: which functions of a program a C++
 * name or glob names (by its short, template or full form, never by its
 * return type), and the written form that names each one alone, for the
 * expansion of globs.  The demangled forms are worked out once per symbol
 * and kept with the program (struct cxx_memo).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxxname.h"
#include "ev.h"

#include "util/bsearch.h"
#include "kprobes/nokprobe.h"

/* Drop the blanks of @s in place: a definition's words cannot hold "f(int, char)". */
static void squeeze(char *s)
{
	char *d = s;

	for (; *s; s++)
		if (*s != ' ')
			*d++ = *s;
	*d = 0;
}

/* @name is squeezed already */
static bool name_match(const char *pattern, const char *name, bool glob)
{
	if (!name)
		return false;
	return glob ? !fnmatch(pattern, name, 0) : !strcmp(pattern, name);
}

/*
 * The demangled forms of a program's C++ symbols, worked out once each:
 * every definition of a glob's expansion names its function again, and
 * demangling the program's symbols for each would cost their number
 * squared.  Keyed by the symbol's name as the file's table holds it (the
 * pointer: the tables live as long as the program).
 */
struct cxx_memo {
	const char *key;
	char *f[CXX_NR_FORMS];		/* SHORT, TEMPL, FULL; SIG once asked */
	char *with_params;		/* SHORT and the parameters */
	bool sig_done;
};

static size_t memo_slot(const char *key, size_t cap)
{
	return (size_t)(((uintptr_t)key >> 3) * 0x9e3779b97f4a7c15ULL) & (cap - 1);
}

static int memo_grow(struct fhook_event_prog *prog)
{
	size_t cap = prog->cxx_memo_cap ? 2 * prog->cxx_memo_cap : 1024, i, k;
	struct cxx_memo *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (i = 0; i < prog->cxx_memo_cap; i++) {
		if (!prog->cxx_memo[i].key)
			continue;
		for (k = memo_slot(prog->cxx_memo[i].key, cap); t[k].key; k = (k + 1) & (cap - 1))
			;
		t[k] = prog->cxx_memo[i];
	}
	free(prog->cxx_memo);
	prog->cxx_memo = t;
	prog->cxx_memo_cap = cap;
	return 0;
}

/* @mangled's forms, squeezed; NULL when it is no C++ name or on no memory. */
static struct cxx_memo *cxx_memo_get(struct fhook_event_prog *prog, const char *mangled)
{
	struct cxx_memo *m;
	size_t k;
	int i;

	if (2 * (prog->cxx_memo_n + 1) > prog->cxx_memo_cap && memo_grow(prog))
		return NULL;
	for (k = memo_slot(mangled, prog->cxx_memo_cap); prog->cxx_memo[k].key;
	     k = (k + 1) & (prog->cxx_memo_cap - 1))
		if (prog->cxx_memo[k].key == mangled)
			return prog->cxx_memo[k].f[CXX_SHORT] ? &prog->cxx_memo[k] : NULL;
	m = &prog->cxx_memo[k];
	m->key = mangled;
	prog->cxx_memo_n++;
	/* (one that cannot be read is remembered as such: no forms) */
	if (cxx_names(mangled, (1U << CXX_SHORT) | (1U << CXX_TEMPL) | (1U << CXX_FULL), m->f))
		return NULL;
	if (asprintf(&m->with_params, "%s%s", m->f[CXX_SHORT],
		     cxx_params(m->f[CXX_FULL], m->f[CXX_TEMPL])) < 0) {
		m->with_params = NULL;
		for (i = 0; i < CXX_NR_FORMS; i++) {
			free(m->f[i]);
			m->f[i] = NULL;
		}
		return NULL;
	}
	squeeze(m->with_params);
	for (i = 0; i < CXX_NR_FORMS; i++)
		if (m->f[i])
			squeeze(m->f[i]);
	return m;
}

void ev_prog_cxx_free(struct fhook_event_prog *prog)
{
	size_t i;
	int k;

	for (i = 0; i < prog->cxx_memo_cap; i++) {
		for (k = 0; k < CXX_NR_FORMS; k++)
			free(prog->cxx_memo[i].f[k]);
		free(prog->cxx_memo[i].with_params);
	}
	free(prog->cxx_memo);
	prog->cxx_memo = NULL;
	prog->cxx_memo_cap = prog->cxx_memo_n = 0;
}

/*
 * Does the C++ function behind @mangled match @pattern (blanks squeezed
 * out)?  By its name, short or with its template arguments
 * ("ns::Class::method", "ns::Class<int>::*", "std::_Rb_tree<*>::_M_erase");
 * a pattern with a parameter list by the name and its parameters, short
 * or whole ("f(int,char)", "ns::Class::method(int)const", "geo::scale(*)").
 * A glob never reaches into a return type: "geo::*" is no match for
 * "std::vector<geo::P> std::make<geo::P>()".  A pattern written out whole
 * may be the signature c++filt prints, return type and all.
 */
static bool cxx_match(struct fhook_event_prog *prog, const char *mangled, const char *pattern,
		      bool glob)
{
	bool params = strchr(pattern, '(') != NULL;
	struct cxx_memo *m;

	if (!cxx_mangled(mangled) || !(m = cxx_memo_get(prog, mangled)))
		return false;
	/* the signature c++filt prints: only for a name written out whole */
	if (params && !glob && !m->sig_done) {
		m->f[CXX_SIG] = cxx_name(mangled, CXX_SIG);
		if (m->f[CXX_SIG])
			squeeze(m->f[CXX_SIG]);
		m->sig_done = true;
	}
	/* a '(' may be a name's own: "(anonymous namespace)::f", "main::{lambda(int)#1}" */
	return name_match(pattern, m->f[CXX_SHORT], glob) ||
	       name_match(pattern, m->f[CXX_TEMPL], glob) ||
	       (params && (name_match(pattern, m->with_params, glob) ||
			   name_match(pattern, m->f[CXX_FULL], glob) ||
			   (!glob && name_match(pattern, m->f[CXX_SIG], glob))));
}

int ev_prog_match_cxx(struct fhook_event_prog *prog, const char *pattern, bool glob,
		      char ***out)
{
	char **v = NULL, *pat = strdup(pattern);
	int i, n = 0;
	size_t j;

	if (!pat)
		return -ENOMEM;
	squeeze(pat);
	pattern = pat;

	for (i = 0; i < prog->nr_files; i++) {
		ev_file_load(&prog->files[i]);
		for (j = 0; j < prog->files[i].nr_syms; j++) {
			const struct ev_sym *s = &prog->files[i].syms[j];
			char **nv;
			int k;

			if (!s->func || !s->site || !cxx_match(prog, s->name, pattern, glob))
				continue;
			for (k = 0; k < n && strcmp(v[k], s->name); k++)
				;
			if (k < n)
				continue;	/* an alias, or the same function in another file */
			nv = realloc(v, (n + 1) * sizeof(*v));
			if (!nv)
				goto oom;
			v = nv;
			if (!(v[n] = strdup(s->name)))
				goto oom;
			n++;
		}
	}
	free(pat);
	*out = v;
	return n;
oom:
	while (n--)
		free(v[n]);
	free(v);
	free(pat);
	return -ENOMEM;
}

bool ev_cxx_name(const char *name)
{
	return strstr(name, "::") || strpbrk(name, "(<");
}

/* A C++ function of the program, by the forms a definition may name it. */
struct cxx_fn {
	const char *mangled;
	unsigned long addr;
	char *sp;		/* short name and parameters, squeezed */
	char *full;		/* CXX_FULL, squeezed */
	bool match;
	bool skip;		/* a kprobe glob leaves it out (lib/kprobes/nokprobe.c) */
};

/* The functions a C++ pattern is matched against, and how they are counted. */
struct cfn_set {
	struct cxx_fn *fns;
	size_t n, cap;
	bool by_addr;		/* a kprobe's file: one function per address */
};

static int cxx_fn_cmp_sp(const void *a, const void *b)
{
	return strcmp(((const struct cxx_fn *)a)->sp, ((const struct cxx_fn *)b)->sp);
}

/* How many of @fns (@n, sorted by sp) have the sp @sp. */
static size_t cxx_count_sp(const struct cxx_fn *fns, size_t n, const char *sp)
{
	size_t lo = fhook_upper_bound(n, k, strcmp(fns[k].sp, sp) < 0 ? 0 : 1, 0);
	size_t c = 0;

	while (lo + c < n && !strcmp(fns[lo + c].sp, sp))
		c++;
	return c;
}

static size_t cxx_count_full(const struct cxx_fn *fns, size_t n, const char *full)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += !strcmp(fns[i].full, full);
	return c;
}

/*
 * The written form of @f an exact definition names it alone by: its name
 * and parameters ("geo::scale(double,int)"), else its template form and
 * parameters ("geo::Box<int>::get()const"), else its mangled name.  A '%'
 * (operator%) would end the symbol of an f definition: the mangled name.
 */
static const char *cxx_written(const struct cxx_fn *fns, size_t n, const struct cxx_fn *f)
{
	if (!strchr(f->sp, '%') && cxx_count_sp(fns, n, f->sp) == 1)
		return f->sp;
	if (!strchr(f->full, '%') && cxx_count_full(fns, n, f->full) == 1)
		return f->full;
	return f->mangled;
}

/* Add @s of @f to @set unless it is there (by name, or by address), matched against @pattern. */
static int cfn_set_add(struct fhook_event_prog *prog, struct cfn_set *set,
		       const struct ev_file *f, const struct ev_sym *s, const char *pattern,
		       bool glob)
{
	struct cxx_memo *m;
	struct cxx_fn *fn;
	size_t k;

	/* (a name in several files is made once after: cfn_set_unique_names()) */
	for (k = set->n; set->by_addr && k-- > 0;) {
		if (set->fns[k].addr == s->addr) {
			/* an alias: left out if any of its names is fhook's */
			set->fns[k].skip |= fhook_nokprobe(f->path, s->name) != NULL;
			return 0;
		}
		if (set->fns[k].addr < s->addr)
			break;	/* sorted by address: aliases are neighbours */
	}
	if (!cxx_mangled(s->name))
		return 0;
	if (set->n == set->cap) {
		size_t cap = set->cap ? 2 * set->cap : 256;
		struct cxx_fn *nf = realloc(set->fns, cap * sizeof(*nf));

		if (!nf)
			return -ENOMEM;
		set->fns = nf;
		set->cap = cap;
	}
	fn = &set->fns[set->n];
	memset(fn, 0, sizeof(*fn));
	fn->mangled = s->name;
	fn->addr = s->addr;
	fn->skip = set->by_addr && fhook_nokprobe(f->path, s->name) != NULL;
	/* (a name libiberty cannot read is no function a C++ pattern names) */
	m = cxx_memo_get(prog, s->name);
	if (!m)
		return 0;
	fn->sp = strdup(m->with_params);
	fn->full = strdup(m->f[CXX_FULL]);
	if (!fn->sp || !fn->full) {
		free(fn->sp);
		free(fn->full);
		return -ENOMEM;
	}
	fn->match = cxx_match(prog, s->name, pattern, glob);
	set->n++;
	return 0;
}

static int cxx_fn_cmp_mangled(const void *a, const void *b)
{
	const struct cxx_fn *x = *(const struct cxx_fn *const *)a;
	const struct cxx_fn *y = *(const struct cxx_fn *const *)b;
	int c = strcmp(x->mangled, y->mangled);

	return c ? c : (x > y) - (x < y);
}

/*
 * Each mangled name once, where it first came (a function in the tables
 * of several files): by sorting, where comparing each with all before it
 * took minutes for the tens of thousands of functions of a C++ program.
 */
static int cfn_set_unique_names(struct cfn_set *set)
{
	struct cxx_fn **by = malloc((set->n ? set->n : 1) * sizeof(*by));
	bool *dup = calloc(set->n ? set->n : 1, sizeof(*dup));
	size_t j, m = 0;

	if (!by || !dup) {
		free(by);
		free(dup);
		return -ENOMEM;
	}
	for (j = 0; j < set->n; j++)
		by[j] = &set->fns[j];
	/* a name's copies in the order they came: the first is kept */
	qsort(by, set->n, sizeof(*by), cxx_fn_cmp_mangled);
	for (j = 1; j < set->n; j++)
		if (!strcmp(by[j]->mangled, by[j - 1]->mangled))
			dup[by[j] - set->fns] = true;
	free(by);
	for (j = 0; j < set->n; j++) {
		if (dup[j]) {
			free(set->fns[j].sp);
			free(set->fns[j].full);
			continue;
		}
		set->fns[m++] = set->fns[j];
	}
	set->n = m;
	free(dup);
	return 0;
}

static void cfn_set_free(struct cfn_set *set)
{
	size_t j;

	for (j = 0; j < set->n; j++) {
		free(set->fns[j].sp);
		free(set->fns[j].full);
	}
	free(set->fns);
}

/*
 * Hand each matched function of @set to @fn by its written form, decided
 * over the whole set; how many matched (those left out in *@skipped, when
 * given), or a negative errno.
 */
static int cfn_set_each(struct cfn_set *set, int *skipped, ev_cxx_fn fn, void *arg)
{
	struct cxx_fn *byname = malloc((set->n ? set->n : 1) * sizeof(*byname));
	int r = 0, nr = 0, skip = 0;
	size_t j;

	if (!byname)
		return -ENOMEM;
	memcpy(byname, set->fns, set->n * sizeof(*byname));
	qsort(byname, set->n, sizeof(*byname), cxx_fn_cmp_sp);
	for (j = 0; j < set->n && !r; j++) {
		if (!set->fns[j].match)
			continue;
		nr++;
		if (set->fns[j].skip) {
			skip++;
			continue;
		}
		if (fn)
			r = fn(cxx_written(byname, set->n, &set->fns[j]), set->fns[j].mangled, arg);
	}
	free(byname);
	if (skipped)
		*skipped = skip;
	return r ? r : nr;
}

int ev_prog_cxx_glob_each(struct fhook_event_prog *prog, const char *pattern, ev_cxx_fn fn,
			  void *arg)
{
	struct cfn_set set = { 0 };
	char *pat = strdup(pattern);
	int i, r = 0;
	size_t j;

	if (!pat)
		return -ENOMEM;
	squeeze(pat);
	/* every sited C++ function once by its mangled name (aliases in several files) */
	for (i = 0; i < prog->nr_files && !r; i++) {
		struct ev_file *f = &prog->files[i];

		ev_file_load(f);
		for (j = 0; j < f->nr_syms && !r; j++)
			if (f->syms[j].func && f->syms[j].site)
				r = cfn_set_add(prog, &set, f, &f->syms[j], pat, true);
	}
	if (!r)
		r = cfn_set_unique_names(&set);
	if (!r)
		r = cfn_set_each(&set, NULL, fn, arg);
	cfn_set_free(&set);
	free(pat);
	return r;
}

/* The C++ functions of kprobe file @mod (NULL: the executable), one per address. */
static int cfn_kprobe_set(struct fhook_event_prog *prog, const char *mod, const char *pattern,
			  bool glob, int *file, struct cfn_set *set)
{
	struct ev_file *f = ev_prog_kprobe_file(prog, mod, file);
	int r = 0;
	size_t j;

	if (!f)
		return -ENOENT;
	set->by_addr = true;
	for (j = 0; j < f->nr_syms && !r; j++)
		if (f->syms[j].func)
			r = cfn_set_add(prog, set, f, &f->syms[j], pattern, glob);
	return r;
}

int ev_prog_kprobe_cxx_glob_each(struct fhook_event_prog *prog, const char *mod,
				 const char *pattern, int *file, int *skipped, ev_cxx_fn fn,
				 void *arg)
{
	struct cfn_set set = { 0 };
	char *pat = strdup(pattern);
	int r;

	if (!pat)
		return -ENOMEM;
	squeeze(pat);
	r = cfn_kprobe_set(prog, mod, pat, true, file, &set);
	if (!r)
		r = cfn_set_each(&set, skipped, fn, arg);
	cfn_set_free(&set);
	free(pat);
	return r;
}

int ev_prog_kprobe_cxx(struct fhook_event_prog *prog, const char *mod, const char *name,
		       int *file, char **mangled)
{
	struct ev_file *f = ev_prog_kprobe_file(prog, mod, file);
	const struct ev_sym *first = NULL, *last = NULL;
	char *pat;
	int n = 0;
	size_t j;

	if (!f)
		return -ENOENT;
	pat = strdup(name);
	if (!pat)
		return -ENOMEM;
	squeeze(pat);
	/* the functions it names, by address (aliases are neighbours in the sorted table) */
	for (j = 0; j < f->nr_syms; j++) {
		const struct ev_sym *s = &f->syms[j];

		if (!s->func || !cxx_match(prog, s->name, pat, false))
			continue;
		if (last && last->addr == s->addr)
			continue;
		if (!n++)
			first = s;
		last = s;
	}
	free(pat);
	if (n != 1)
		return n;
	*mangled = strdup(first->name);
	return *mangled ? 1 : -ENOMEM;
}

