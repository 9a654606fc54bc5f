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
		unsigned long a = es.addrs[i] + FHOOK_SITE_REC_ENTRY;
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
					mark_site(syms, nr, m.sec[k].addrs[j] +
							FHOOK_SITE_REC_ENTRY);
		fhook_elf_unmap_sites(&m);
		return;
	}
	fhook_elf_unmap_sites(&m);
	if (fhook_elf_file_read_sites(f->elf, &es))
		return;
	for (j = 0; j < es.nr; j++)
		mark_site(syms, nr, es.addrs[j] + FHOOK_SITE_REC_ENTRY);
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
	ev_prog_cxx_free(prog);
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

char *ev_mod_colon(char *sym)
{
	char *p, *found = NULL;

	for (p = sym; (p = strchr(p, ':')); p++) {
		if (p[1] == ':') {
			p++;
			continue;
		}
		found = p;
	}
	return found;
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

struct ev_file *ev_prog_kprobe_file(struct fhook_event_prog *prog, const char *mod, int *file)
{
	int i;

	for (i = 0; i < prog->nr_files; i++) {
		if (mod ? ev_file_is(&prog->files[i], mod) : !i) {
			*file = i;
			ev_file_load(&prog->files[i]);
			return &prog->files[i];
		}
	}
	return NULL;
}

int ev_prog_kprobe_glob_each(struct fhook_event_prog *prog, const char *mod, const char *glob,
			     int *file, int *skipped, ev_glob_fn fn, void *arg)
{
	const struct ev_sym *first = NULL;	/* the current address's first name */
	struct ev_file *f = ev_prog_kprobe_file(prog, mod, file);
	bool last_skip = false;
	int n = 0, skip = 0, r;
	size_t j;

	if (!f)
		return -ENOENT;
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
