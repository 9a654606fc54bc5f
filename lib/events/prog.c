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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ev.h"

#include <fhook/internal/elf.h>

#include "util/bsearch.h"

static int ev_sym_cmp(const void *a, const void *b)
{
	const struct ev_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->func != y->func)
		return x->func ? -1 : 1;
	return x->size > y->size ? -1 : x->size < y->size;
}

static int read_file_syms(struct ev_file *f)
{
	struct fhook_sym *es;
	struct ev_sym *syms;
	size_t i, nr;
	int ret;

	f->names = NULL;
	ret = fhook_elf_read_syms(f->path, FHOOK_ELF_SYMS_DATA | FHOOK_ELF_SYMS_ALIASES, &es,
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

static void mark_sites(struct ev_file *f)
{
	struct fhook_elf_sites es;
	size_t i, j;

	if (fhook_elf_read_sites(f->path, &es))
		return;
	/* a site lies at the function's start, or after its endbr64 */
	for (i = 0; i < es.nr; i++) {
		unsigned long a = es.addrs[i];
		size_t lo = fhook_upper_bound(f->nr_syms, k, f->syms[k].addr, a);

		for (j = lo; j-- > 0 && f->syms[j].addr + 8 > a;)
			if (f->syms[j].func && a - f->syms[j].addr <= 4)
				f->syms[j].site = true;
	}
	free(es.addrs);
	free(es.from_mcount);
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
		f->fd = -1;
		if (!f->path || read_file_syms(f)) {
			free(f->path);
			free(f->syms);
			free(f->names);
			memset(f, 0, sizeof(*f));
			if (!i) {
				fhook_event_prog_close(prog);
				errno = ENOEXEC;
				return NULL;
			}
			continue;
		}
		mark_sites(f);
		f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
		if (f->fd >= 0) {
			f->dw = dwarf_begin(f->fd, DWARF_C_READ);
			if (f->dw)
				prog->has_dwarf = true;
		}
		prog->nr_files++;
	}
	return prog;
}

void fhook_event_prog_close(struct fhook_event_prog *prog)
{
	int i;

	if (!prog)
		return;
	for (i = 0; i < prog->nr_files; i++) {
		struct ev_file *f = &prog->files[i];

		if (f->dw)
			dwarf_end(f->dw);
		if (f->fd >= 0)
			close(f->fd);
		free(f->path);
		free(f->syms);
		free(f->names);
	}
	free(prog->files);
	free(prog);
}

const struct ev_sym *ev_prog_find(struct fhook_event_prog *prog, const char *name,
				  bool func, int *file)
{
	const struct ev_sym *best = NULL;
	int i;
	size_t j;

	for (i = 0; i < prog->nr_files; i++) {
		struct ev_file *f = &prog->files[i];

		for (j = 0; j < f->nr_syms; j++) {
			if (strcmp(f->syms[j].name, name) || (func && !f->syms[j].func))
				continue;
			/* prefer a function with a site, as kallsyms of loaded code would */
			if (!best || (f->syms[j].site && !best->site)) {
				best = &f->syms[j];
				if (file)
					*file = i;
			}
		}
		if (best && (!func || best->site))
			break;
	}
	return best;
}

int ev_prog_match_glob(struct fhook_event_prog *prog, const char *glob)
{
	int i, n = 0;
	size_t j;

	for (i = 0; i < prog->nr_files; i++)
		for (j = 0; j < prog->files[i].nr_syms; j++) {
			const struct ev_sym *s = &prog->files[i].syms[j];

			if (s->func && s->site && !fnmatch(glob, s->name, 0))
				n++;
		}
	return n;
}

/* libstdc++'s demangler (the command links it) */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Drop the blanks of @s in place: a definition's words cannot hold "f(int, char)". */
static void squeeze(char *s)
{
	char *d = s;

	for (; *s; s++)
		if (*s != ' ')
			*d++ = *s;
	*d = 0;
}

static bool name_match(const char *pattern, const char *name, bool glob)
{
	return glob ? !fnmatch(pattern, name, 0) : !strcmp(pattern, name);
}

/*
 * Does the C++ function behind @mangled match @pattern, as written with or
 * without its parameter list ("ns::Class::method", "ns::Class::*",
 * "f(int,char)"; blanks do not count)?
 */
static bool cxx_match(const char *mangled, const char *pattern, bool glob)
{
	char *dm, *paren;
	int status = -1, depth = 0;
	bool ok;

	if (mangled[0] != '_' || mangled[1] != 'Z')
		return false;
	dm = __cxa_demangle(mangled, NULL, NULL, &status);
	if (status || !dm) {
		free(dm);
		return false;
	}
	squeeze(dm);
	ok = name_match(pattern, dm, glob);
	/* the name without its parameters: up to the first '(' outside a template */
	for (paren = dm; *paren && !ok; paren++) {
		if (*paren == '<')
			depth++;
		else if (*paren == '>')
			depth--;
		else if (*paren == '(' && !depth && paren != dm) {
			*paren = 0;
			ok = name_match(pattern, dm, glob);
			break;
		}
	}
	free(dm);
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
