// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A program as the command sees it before (and after) running it: the
 * symbols of its files, which functions have a patchable site, and their
 * DWARF.  Event definitions are resolved against it (what the kernel does
 * against kallsyms and BTF), and the trace is symbolized with it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cxxname.h"
#include "ev.h"

#include <fhook/internal/elf.h>

#include "util/bsearch.h"
#include "kprobes/nokprobe.h"
#include "arch_insn.h"

static int ev_sym_cmp(const void *a, const void *b)
{
	const struct ev_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->func != y->func)
		return x->func ? -1 : 1;
	return x->size > y->size ? -1 : x->size < y->size;
}

/* The names looked up in a file whose table is not read: kept for the pointers handed out. */
struct ev_found {
	struct ev_found *next;
	size_t nr;
	char *name;
	struct ev_sym syms[];
};

/* ev_file_load() may run on the drain thread while the main one looks names up */
static pthread_mutex_t ev_load_lock = PTHREAD_MUTEX_INITIALIZER;

static int read_file_syms(struct ev_file *f)
{
	struct fhook_sym *es;
	struct ev_sym *syms;
	size_t i, nr;
	int ret;

	f->names = NULL;
	ret = fhook_elf_file_read_syms(f->elf, FHOOK_ELF_SYMS_DATA | FHOOK_ELF_SYMS_ALIASES, &es,
				  &nr, &f->names);
	if (ret)
		return ret;
	syms = calloc(nr ? nr : 1, sizeof(*syms));
	if (!syms) {
		free(es);
		free(f->names);
		f->names = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < nr; i++) {
		syms[i].addr = es[i].addr;
		syms[i].size = es[i].size;
		syms[i].name = f->names + es[i].name;
		syms[i].func = !es[i].data;
	}
	free(es);
	/* at one address: functions first, then the largest */
	qsort(syms, nr, sizeof(*syms), ev_sym_cmp);
	f->syms = syms;
	f->nr_syms = nr;
	return 0;
}

/* A site lies at the function's start, or after the arch's entry instructions. */
static bool site_of(const struct ev_sym *s, unsigned long site)
{
	return s->func && site >= s->addr && site - s->addr <= FHOOK_SITE_ENTRY_MAX;
}

static void mark_sites(struct ev_file *f)
{
	struct fhook_elf_sites es;
	size_t i, j;

	if (fhook_elf_file_read_sites(f->elf, &es))
		return;
	for (i = 0; i < es.nr; i++) {
		unsigned long a = es.addrs[i];
		size_t lo = fhook_upper_bound(f->nr_syms, k, f->syms[k].addr, a);

		for (j = lo; j-- > 0 && f->syms[j].addr + 8 > a;)
			if (site_of(&f->syms[j], a))
				f->syms[j].site = true;
	}
	free(es.addrs);
	free(es.from_mcount);
}

int ev_file_load(struct ev_file *f)
{
	int ret = 0;

	if (!__atomic_load_n(&f->unread, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&ev_load_lock);
	if (f->unread) {
		/* a file that cannot be read has no symbols, as a library skipped at open */
		ret = read_file_syms(f);
		if (!ret)
			mark_sites(f);
		__atomic_store_n(&f->unread, false, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&ev_load_lock);
	return ret;
}

static void mark_site(struct ev_sym *syms, size_t nr, unsigned long site)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (site_of(&syms[i], site))
			syms[i].site = true;
}

/*
 * The sites of @f that belong to the @nr functions @syms, from the site
 * sections mapped from the page cache (copied only where the mapped list
 * is not the whole truth).
 */
static void mark_found_sites(struct ev_file *f, struct ev_sym *syms, size_t nr)
{
	struct fhook_elf_site_map m;
	struct fhook_elf_sites es;
	unsigned int k;
	size_t j;

	if (!fhook_elf_file_map_sites(f->elf, 0, &m) && !m.copy_needed) {
		for (k = 0; k < m.nr; k++)
			for (j = 0; j < m.sec[k].nr; j++)
				if (m.sec[k].addrs[j])
					mark_site(syms, nr, m.sec[k].addrs[j]);
		fhook_elf_unmap_sites(&m);
		return;
	}
	fhook_elf_unmap_sites(&m);
	if (fhook_elf_file_read_sites(f->elf, &es))
		return;
	for (j = 0; j < es.nr; j++)
		mark_site(syms, nr, es.addrs[j]);
	free(es.addrs);
	free(es.from_mcount);
}

/*
 * @name's symbols in @f while its table is unread: found in the file's
 * table as it is, their sites marked, in the order of the sorted table.
 */
static struct ev_found *find_unread(struct ev_file *f, const char *name)
{
	struct fhook_elf_named *named;
	struct ev_found *fd;
	size_t i;
	int n;

	for (fd = f->found; fd; fd = fd->next)
		if (!strcmp(fd->name, name))
			return fd;
	n = fhook_elf_file_find_syms(f->elf, name, FHOOK_ELF_SYMS_DATA | FHOOK_ELF_SYMS_ALIASES,
				&named);
	if (n < 0)
		return NULL;
	fd = calloc(1, sizeof(*fd) + n * sizeof(fd->syms[0]));
	if (!fd || !(fd->name = strdup(name))) {
		free(fd);
		free(named);
		return NULL;
	}
	for (i = 0; i < (size_t)n; i++) {
		struct ev_sym *s = &fd->syms[i];

		s->addr = named[i].addr;
		s->size = named[i].size;
		s->name = fd->name;
		s->func = !named[i].data;
	}
	/* one pass over the sites, unsorted: a name has a symbol or two */
	if (n)
		mark_found_sites(f, fd->syms, n);
	fd->nr = n;
	qsort(fd->syms, fd->nr, sizeof(fd->syms[0]), ev_sym_cmp);
	free(named);
	pthread_mutex_lock(&ev_load_lock);
	fd->next = f->found;
	f->found = fd;
	pthread_mutex_unlock(&ev_load_lock);
	return fd;
}

struct fhook_event_prog *fhook_event_prog_open(const char *path, char **libs, int nr)
{
	struct fhook_event_prog *prog;
	int i;

	if (access(path, R_OK))
		return NULL;
	prog = calloc(1, sizeof(*prog));
	if (!prog)
		return NULL;
	prog->files = calloc(nr + 1, sizeof(*prog->files));
	if (!prog->files) {
		free(prog);
		return NULL;
	}
	for (i = 0; i <= nr; i++) {
		struct ev_file *f = &prog->files[prog->nr_files];

		f->path = strdup(i ? libs[i - 1] : path);
		f->unread = true;
		/*
		 * An ELF file of this machine's kind, opened once: its tables
		 * are read when needed, every question from this descriptor.
		 */
		if (!f->path || fhook_elf_file_open(f->path, &f->elf)) {
			free(f->path);
			memset(f, 0, sizeof(*f));
			if (!i) {
				fhook_event_prog_close(prog);
				errno = ENOEXEC;
				return NULL;
			}
			continue;
		}
		prog->nr_files++;
	}
	return prog;
}

/*
 * Where separate debug files are looked for: elfutils' default (the
 * file's directory, its .debug/, /usr/lib/debug/ by path and by
 * .build-id/), or FHOOK_DEBUGINFO_PATH in elfutils' own syntax
 * ("+:.debug:/my/debug"), as eu-addr2line --debuginfo-path.
 */
static char *ev_debuginfo_path;

static const Dwfl_Callbacks ev_dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &ev_debuginfo_path,
};

/*
 * The DWARF of @f: its own, or that of the debug file its
 * .gnu_debuglink or build-id names (Debian's -dbgsym packages, a
 * `objcopy --only-keep-debug` beside it), found and checked by libdwfl.
 */
static void file_dwarf(struct ev_file *f)
{
	Dwfl_Module *m;
	Dwarf_Addr bias;
	int fd;

	f->dwfl = dwfl_begin(&ev_dwfl_callbacks);
	if (!f->dwfl)
		return;
	/* (dwfl owns the descriptor it is given) */
	fd = dup(fhook_elf_file_fd(f->elf));
	m = fd < 0 ? NULL : dwfl_report_offline(f->dwfl, f->path, f->path, fd);
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (m)
		f->dw = dwfl_module_getdwarf(m, &bias);
	if (!f->dw) {
		dwfl_end(f->dwfl);
		f->dwfl = NULL;
	}
}

bool ev_prog_dwarf(struct fhook_event_prog *prog)
{
	int i;

	if (prog->dwarf_opened)
		return prog->has_dwarf;
	prog->dwarf_opened = true;
	if (!ev_debuginfo_path)
		ev_debuginfo_path = secure_getenv("FHOOK_DEBUGINFO_PATH");
	for (i = 0; i < prog->nr_files; i++) {
		struct ev_file *f = &prog->files[i];

		if (f->elf)
			file_dwarf(f);
		if (f->dw)
			prog->has_dwarf = true;
	}
	return prog->has_dwarf;
}

void fhook_event_prog_close(struct fhook_event_prog *prog)
{
	int i;

	if (!prog)
		return;
	for (i = 0; i < prog->nr_files; i++) {
		struct ev_file *f = &prog->files[i];

		if (f->dwfl)
			dwfl_end(f->dwfl);
		free(f->defs);
		fhook_elf_file_close(f->elf);
		free(f->path);
		free(f->syms);
		free(f->names);
		while (f->found) {
			struct ev_found *n = f->found->next;

			free(f->found->name);
			free(f->found);
			f->found = n;
		}
	}
	free(prog->files);
	free(prog);
}

bool ev_file_is(const struct ev_file *f, const char *mod)
{
	const char *base = strrchr(f->path, '/');

	return !strcmp(f->path, mod) || !strcmp(base ? base + 1 : f->path, mod);
}

bool ev_prog_has_mod(struct fhook_event_prog *prog, const char *mod)
{
	int i;

	for (i = 0; i < prog->nr_files; i++)
		if (ev_file_is(&prog->files[i], mod))
			return true;
	return false;
}

const struct ev_sym *ev_prog_find(struct fhook_event_prog *prog, const char *name,
				  bool func, int *file)
{
	return ev_prog_find_in(prog, NULL, name, func, file);
}

const struct ev_sym *ev_prog_find_in(struct fhook_event_prog *prog, const char *mod,
				     const char *name, bool func, int *file)
{
	const struct ev_sym *best = NULL;
	int i;
	size_t j;

	for (i = 0; i < prog->nr_files; i++) {
		struct ev_file *f = &prog->files[i];
		const struct ev_sym *syms = f->syms;
		size_t nr = f->nr_syms;

		if (mod && !ev_file_is(f, mod))
			continue;
		if (__atomic_load_n(&f->unread, __ATOMIC_ACQUIRE)) {
			struct ev_found *fd = find_unread(f, name);

			syms = fd ? fd->syms : NULL;
			nr = fd ? fd->nr : 0;
		}
		for (j = 0; j < nr; j++) {
			if (strcmp(syms[j].name, name) || (func && !syms[j].func))
				continue;
			/* prefer a function with a site, as kallsyms of loaded code would */
			if (!best || (syms[j].site && !best->site)) {
				best = &syms[j];
				if (file)
					*file = i;
			}
		}
		if (best && (!func || best->site))
			break;
	}
	return best;
}

int ev_prog_match_glob_each(struct fhook_event_prog *prog, const char *glob, ev_glob_fn fn,
			    void *arg)
{
	int i, n = 0, r;
	size_t j;

	for (i = 0; i < prog->nr_files; i++) {
		ev_file_load(&prog->files[i]);
		for (j = 0; j < prog->files[i].nr_syms; j++) {
			const struct ev_sym *s = &prog->files[i].syms[j];

			if (!s->func || !s->site || fnmatch(glob, s->name, 0))
				continue;
			n++;
			if (fn && (r = fn(s->name, arg)))
				return r;
		}
	}
	return n;
}

int ev_prog_match_glob(struct fhook_event_prog *prog, const char *glob)
{
	return ev_prog_match_glob_each(prog, glob, NULL, NULL);
}

int ev_prog_kprobe_glob_each(struct fhook_event_prog *prog, const char *mod, const char *glob,
			     int *file, int *skipped, ev_glob_fn fn, void *arg)
{
	const struct ev_sym *first = NULL;	/* the current address's first name */
	struct ev_file *f = NULL;
	bool last_skip = false;
	int i, n = 0, skip = 0, r;
	size_t j;

	for (i = 0; i < prog->nr_files && !f; i++)
		if (mod ? ev_file_is(&prog->files[i], mod) : !i)
			f = &prog->files[i];
	if (!f)
		return -ENOENT;
	*file = i - 1;
	ev_file_load(f);
	/*
	 * Sorted by address: aliases are neighbours, one function, left out if
	 * any name is fhook's; a function is handed to @fn once its aliases
	 * are all seen.
	 */
	for (j = 0; j <= f->nr_syms; j++) {
		const struct ev_sym *s = j < f->nr_syms ? &f->syms[j] : NULL;
		bool sk;

		if (s && (!s->func || fnmatch(glob, s->name, 0)))
			continue;
		if (s && first && s->addr == first->addr) {
			sk = fhook_nokprobe(f->path, s->name) != NULL;
			if (sk && !last_skip)
				skip++;
			last_skip |= sk;
			continue;
		}
		if (first && !last_skip && fn && (r = fn(first->name, arg)))
			return r;
		if (!s)
			break;
		sk = fhook_nokprobe(f->path, s->name) != NULL;
		n++;
		skip += sk;
		first = s;
		last_skip = sk;
	}
	*skipped = skip;
	return n;
}

int ev_prog_kprobe_glob(struct fhook_event_prog *prog, const char *mod, const char *glob,
			int *file, int *skipped)
{
	return ev_prog_kprobe_glob_each(prog, mod, glob, file, skipped, NULL, NULL);
}

/* Drop the blanks of @s in place: a definition's words cannot hold "f(int, char)". */
static void squeeze(char *s)
{
	char *d = s;

	for (; *s; s++)
		if (*s != ' ')
			*d++ = *s;
	*d = 0;
}

static bool name_match(const char *pattern, char *name, bool glob)
{
	if (!name)
		return false;
	squeeze(name);
	return glob ? !fnmatch(pattern, name, 0) : !strcmp(pattern, name);
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
static bool cxx_match(const char *mangled, const char *pattern, bool glob)
{
	bool params = strchr(pattern, '(') != NULL, ok;
	char *f[CXX_NR_FORMS], *with_params = NULL;
	unsigned int want;
	int i;

	if (!cxx_mangled(mangled))
		return false;
	want = (1U << CXX_SHORT) | (1U << CXX_TEMPL);
	if (params)
		want |= 1U << CXX_FULL;
	if (params && !glob)
		want |= 1U << CXX_SIG;
	if (cxx_names(mangled, want, f))
		return false;
	/* the short name and the parameters: "ns::Class::method(int) const" */
	if (params && asprintf(&with_params, "%s%s", f[CXX_SHORT],
			       cxx_params(f[CXX_FULL], f[CXX_TEMPL])) < 0)
		with_params = NULL;
	/* a '(' may be a name's own: "(anonymous namespace)::f", "main::{lambda(int)#1}" */
	ok = name_match(pattern, f[CXX_SHORT], glob) || name_match(pattern, f[CXX_TEMPL], glob) ||
	     name_match(pattern, with_params, glob) || name_match(pattern, f[CXX_FULL], glob) ||
	     name_match(pattern, f[CXX_SIG], glob);
	free(with_params);
	for (i = 0; i < CXX_NR_FORMS; i++)
		free(f[i]);
	return ok;
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

			if (!s->func || !s->site || !cxx_match(s->name, pattern, glob))
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
static int cfn_set_add(struct cfn_set *set, const struct ev_file *f, const struct ev_sym *s,
		       const char *pattern, bool glob)
{
	struct cxx_fn *fn;
	char *v[CXX_NR_FORMS];
	size_t k;
	int i, ret = 0;

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
	if (cxx_names(s->name, (1U << CXX_SHORT) | (1U << CXX_TEMPL) | (1U << CXX_FULL), v))
		return -ENOMEM;
	if (asprintf(&fn->sp, "%s%s", v[CXX_SHORT], cxx_params(v[CXX_FULL], v[CXX_TEMPL])) < 0) {
		fn->sp = NULL;
		ret = -ENOMEM;
	} else {
		squeeze(fn->sp);
		fn->full = v[CXX_FULL];
		v[CXX_FULL] = NULL;
		squeeze(fn->full);
		fn->match = cxx_match(s->name, pattern, glob);
		set->n++;
	}
	for (i = 0; i < CXX_NR_FORMS; i++)
		free(v[i]);
	return ret;
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
				r = cfn_set_add(&set, f, &f->syms[j], pat, true);
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
	struct ev_file *f = NULL;
	int i, r = 0;
	size_t j;

	for (i = 0; i < prog->nr_files && !f; i++)
		if (mod ? ev_file_is(&prog->files[i], mod) : !i)
			f = &prog->files[i];
	if (!f)
		return -ENOENT;
	*file = i - 1;
	ev_file_load(f);
	set->by_addr = true;
	for (j = 0; j < f->nr_syms && !r; j++)
		if (f->syms[j].func)
			r = cfn_set_add(set, f, &f->syms[j], pattern, glob);
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
	struct cfn_set set = { 0 };
	char *pat = strdup(name);
	int r, n = 0;
	size_t j;

	if (!pat)
		return -ENOMEM;
	squeeze(pat);
	r = cfn_kprobe_set(prog, mod, pat, false, file, &set);
	for (j = 0; !r && j < set.n; j++) {
		if (!set.fns[j].match)
			continue;
		if (!n++ && !(*mangled = strdup(set.fns[j].mangled)))
			r = -ENOMEM;
	}
	if (!r && n != 1 && n)
		free(*mangled);
	cfn_set_free(&set);
	free(pat);
	return r ? r : n;
}

const struct ev_sym *ev_file_sym_at(const struct ev_file *f, unsigned long addr)
{
	size_t lo = fhook_upper_bound(f->nr_syms, k, f->syms[k].addr, addr);
	const struct ev_sym *best = NULL;

	/* the closest function at or before addr that contains it */
	while (lo-- > 0) {
		const struct ev_sym *s = &f->syms[lo];

		if (!s->func)
			continue;
		if (addr < s->addr + (s->size ? s->size : 1))
			best = s;
		break;
	}
	return best;
}
