// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Kprobe globs: "p [MOD:]GLOB" probes every function of one object whose
 * name matches, one kprobe each, placed in batches (register_kprobes():
 * one text_poke round for all), less the functions fhook runs itself
 * (nokprobe.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <fhook/kallsyms.h>

#include "core/core.h"
#include "kpglob.h"
#include "nokprobe.h"

struct glob_fn {
	unsigned long addr;
	bool skip;
};

/*
 * The addresses of the libc functions fhook runs, whatever name the
 * object's table keeps for each (fopen or _IO_fopen: kallsyms keeps one
 * name of several at an address).
 */
struct skip_addrs {
	unsigned long *a;
	size_t nr;
};

static int ul_cmp(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

static void skip_addrs_fill(struct skip_addrs *sk)
{
	size_t i, n = fhook_nokprobe_count();

	sk->a = calloc(n ? n : 1, sizeof(*sk->a));
	if (!sk->a)
		return;
	for (i = 0; i < n; i++) {
		void *p = fhook_libc_sym(fhook_nokprobe_at(i));

		if (p)
			sk->a[sk->nr++] = (unsigned long)p;
	}
	qsort(sk->a, sk->nr, sizeof(*sk->a), ul_cmp);
}

static bool skip_addrs_has(const struct skip_addrs *sk, unsigned long addr)
{
	return sk->nr && bsearch(&addr, sk->a, sk->nr, sizeof(*sk->a), ul_cmp);
}

struct glob_walk {
	const char *mod;		/* file name; NULL: the executable */
	const char *exe;		/* the executable's file name */
	const char *glob;
	struct skip_addrs skip;
	struct glob_fn *fns;
	size_t nr, cap;
	bool ret;		/* return probes: not what returns twice either */
	bool seen;
	bool oom;
};

static const char *base_of(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

/* Is the object of @object (NULL: the executable) the one @w names? */
static bool walk_object(const struct glob_walk *w, const char *object)
{
	if (!w->mod)
		return !object;
	if (object)
		return !strcmp(object, w->mod);
	return w->exe && !strcmp(w->exe, w->mod);
}

static int glob_cb(void *data, const struct fhook_symbol *sym)
{
	struct glob_walk *w = data;

	if (!walk_object(w, sym->object))
		return 0;
	w->seen = true;
	if (fnmatch(w->glob, sym->name, 0))
		return 0;
	if (w->nr == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 256;
		struct glob_fn *n = realloc(w->fns, cap * sizeof(*n));

		if (!n) {
			w->oom = true;
			return 1;
		}
		w->fns = n;
		w->cap = cap;
	}
	w->fns[w->nr].addr = sym->addr;
	w->fns[w->nr++].skip = fhook_nokprobe(sym->object, sym->name) != NULL ||
			       (w->ret && fhook_noretprobe(sym->name)) ||
			       (fhook_nokprobe_libc(sym->object) &&
				skip_addrs_has(&w->skip, sym->addr));
	return 0;
}

static int fn_cmp(const void *a, const void *b)
{
	const struct glob_fn *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct loaded_find {
	const char *mod;
	bool found;
};

static int loaded_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct loaded_find *f = arg;
	const char *b = base_of(info->dlpi_name);

	(void)size;
	if (b && *b && !strcmp(b, f->mod)) {
		f->found = true;
		return 1;
	}
	return 0;
}

int fhook_kprobe_glob(const char *mod, const char *glob, bool ret, struct fhook_kp_glob *g)
{
	unsigned long entry = ret ? getauxval(AT_ENTRY) : 0;
	struct glob_walk w = { .mod = base_of(mod), .glob = glob, .ret = ret };
	struct loaded_find lf = { .mod = w.mod };
	char exe[PATH_MAX];
	ssize_t n;
	size_t i, k;

	memset(g, 0, sizeof(*g));
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	w.exe = n > 0 ? base_of(exe) : NULL;
	/* the executable, or an object by that name: loaded even when it has no symbol */
	g->loaded = !w.mod || (w.exe && !strcmp(w.exe, w.mod));
	if (!g->loaded) {
		dl_iterate_phdr(loaded_cb, &lf);
		g->loaded = lf.found;
	}
	if (!g->loaded)
		return 0;
	if (fhook_nokprobe_libc(w.mod))
		skip_addrs_fill(&w.skip);
	fhook_kallsyms_for_each(glob_cb, &w);
	free(w.skip.a);
	if (w.oom) {
		free(w.fns);
		return -ENOMEM;
	}
	/* one probe per function: aliases are one address; skipped if any name is fhook's */
	qsort(w.fns, w.nr, sizeof(*w.fns), fn_cmp);
	for (i = 0, k = 0; i < w.nr; i++) {
		if (k && w.fns[k - 1].addr == w.fns[i].addr) {
			w.fns[k - 1].skip |= w.fns[i].skip;
			continue;
		}
		w.fns[k++] = w.fns[i];
	}
	g->addrs = calloc(k ? k : 1, sizeof(*g->addrs));
	if (!g->addrs) {
		free(w.fns);
		return -ENOMEM;
	}
	for (i = 0; i < k; i++) {
		if (w.fns[i].skip || w.fns[i].addr == entry)
			g->nr_skipped++;
		else
			g->addrs[g->nr++] = w.fns[i].addr;
	}
	free(w.fns);
	return 0;
}

void fhook_kprobe_glob_free(struct fhook_kp_glob *g)
{
	free(g->addrs);
	memset(g, 0, sizeof(*g));
}

/* ---- many at once ---- */

static void note_refusal(int i, int err, int *errs, char **whys)
{
	const char *why = fhook_kprobe_last_why();

	errs[i] = err;
	if (whys)
		whys[i] = why[0] ? strdup(why) : NULL;
}

/*
 * Register @items [lo, hi) as one batch; if the batch is refused, each half
 * alone, down to the one item that is: the others are placed all the same.
 */
static int kp_each(void **items, int lo, int hi, int (*reg)(void **items, int num), int *errs,
		char **whys)
{
	int ret, mid;

	ret = reg(items + lo, hi - lo);
	if (!ret)
		return hi - lo;
	if (hi - lo == 1) {
		note_refusal(lo, ret, errs, whys);
		return 0;
	}
	mid = lo + (hi - lo) / 2;
	return kp_each(items, lo, mid, reg, errs, whys) + kp_each(items, mid, hi, reg, errs, whys);
}

static int reg_kprobes(void **items, int num)
{
	return register_kprobes((struct kprobe **)items, num);
}

static int reg_kretprobes(void **items, int num)
{
	return register_kretprobes((struct kretprobe **)items, num);
}

static int kp_each_all(void **items, int num, int (*reg)(void **items, int num), int *errs,
		       char **whys)
{
	memset(errs, 0, (size_t)num * sizeof(*errs));
	if (whys)
		memset(whys, 0, (size_t)num * sizeof(*whys));
	return num > 0 ? kp_each(items, 0, num, reg, errs, whys) : 0;
}

int fhook_register_kprobes_each(struct kprobe **kps, int num, int *errs, char **whys)
{
	return kp_each_all((void **)kps, num, reg_kprobes, errs, whys);
}

int fhook_register_kretprobes_each(struct kretprobe **rps, int num, int *errs, char **whys)
{
	return kp_each_all((void **)rps, num, reg_kretprobes, errs, whys);
}
