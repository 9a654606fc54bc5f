// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The loaded objects of the process: found with dl_iterate_phdr(), their
 * symbols read from their files when first needed.  What the layer above
 * keeps per object (its sites) it sets up and frees in the hooks it hands
 * over with fhook_objects_set_ops().
 *
 * Work that patches an object's text runs inside a dl_iterate_phdr()
 * callback: glibc holds its loader-list lock there, and dlclose() unlinks
 * an object under that lock before it unmaps it, so an object we still see
 * in the list cannot lose its text under us.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "objects.h"
#include "util/bsearch.h"
#include "util/startup.h"

struct fhook_object *fhook_objects;
unsigned long fhook_objects_gen, fhook_objects_epoch;
static struct fhook_object *reaped;
/* recursive: reading an object's symbols may happen while syncing */
static pthread_mutex_t objects_mutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static unsigned long long seen_adds = ~0ULL, seen_subs = ~0ULL;
static int syncing;		/* syncs under way */
static const struct fhook_objects_ops *owner_ops;

void __fhook_startup fhook_objects_set_ops(const struct fhook_objects_ops *ops)
{
	owner_ops = ops;
}


struct fhook_object *fhook_object_of(unsigned long addr)
{
	struct fhook_object *obj;
	int i;

	for (obj = __atomic_load_n(&fhook_objects, __ATOMIC_ACQUIRE); obj;
	     obj = __atomic_load_n(&obj->next, __ATOMIC_ACQUIRE))
		for (i = 0; i < obj->nr_segs; i++)
			if (addr >= obj->segs[i].start && addr < obj->segs[i].end)
				return obj;
	return NULL;
}


/* Is @obj's file still the one that was loaded? */
static bool same_file(struct fhook_object *obj)
{
	struct stat st;

	return !stat(obj->path, &st) && st.st_dev == obj->dev && st.st_ino == obj->ino;
}

int fhook_object_load_syms(struct fhook_object *obj)
{
	struct fhook_sym *syms;
	size_t nr, i;
	char *names;
	int ret;

	if (__atomic_load_n(&obj->syms_loaded, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&objects_mutex);
	ret = 0;
	if (obj->syms_loaded)
		goto out;
	if (!same_file(obj)) {
		fprintf(stderr, "fhook: %s changed on disk since it was loaded; its "
			"symbols are not used\n", obj->path);
		ret = -ESTALE;
	} else {
		ret = fhook_elf_read_syms(obj->path, 0, &syms, &nr, &names);
	}
	if (ret) {
		/* remember that there is nothing to read */
		syms = NULL;
		nr = 0;
		names = strdup("");
	}
	for (i = 0; i < nr; i++)
		syms[i].addr += obj->base;
	obj->syms = syms;
	obj->nr_syms = nr;
	obj->names = names;
	__atomic_store_n(&obj->syms_loaded, true, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&objects_mutex);
	return ret;
}

static int cmp_range(const void *a, const void *b)
{
	const struct fhook_sym_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int fhook_object_find_name(struct fhook_object *obj, const char *name,
			   struct fhook_sym_range **out)
{
	struct fhook_elf_named *found = NULL;
	struct fhook_sym_range *r;
	int i, n = 0, nr;

	*out = NULL;
	/* a file changed on disk: the table is read, which says so once, and is empty */
	if (!__atomic_load_n(&obj->syms_loaded, __ATOMIC_ACQUIRE) && same_file(obj)) {
		nr = fhook_elf_find_syms(obj->path, name, 0, &found);
		if (nr <= 0)
			return nr;
		r = calloc(nr, sizeof(*r));
		for (i = 0; r && i < nr; i++) {
			unsigned long end = found[i].addr + (found[i].size ? found[i].size : 1);

			/* an alias the table drops is not a name sym_at() gives */
			if (!found[i].kept)
				continue;
			if (found[i].next && found[i].next < end)
				end = found[i].next;
			r[n].start = obj->base + found[i].addr;
			r[n++].end = obj->base + end;
		}
		free(found);
		if (!r)
			return -ENOMEM;
		qsort(r, n, sizeof(*r), cmp_range);
		*out = r;
		return n;
	}
	fhook_object_load_syms(obj);
	for (i = 0; i < (int)obj->nr_syms; i++) {
		const struct fhook_sym *s = &obj->syms[i];
		unsigned long end = s->addr + (s->size ? s->size : 1);

		if (strcmp(fhook_sym_name(obj, s), name))
			continue;
		if (i + 1 < (int)obj->nr_syms && obj->syms[i + 1].addr < end)
			end = obj->syms[i + 1].addr;
		r = realloc(*out, (n + 1) * sizeof(*r));
		if (!r) {
			free(*out);
			*out = NULL;
			return -ENOMEM;
		}
		*out = r;
		r[n].start = s->addr;
		r[n++].end = end;
	}
	return n;
}

const struct fhook_sym *fhook_object_sym_at(struct fhook_object *obj, unsigned long addr)
{
	const struct fhook_sym *s;
	size_t lo;

	if (fhook_object_load_syms(obj) && !obj->nr_syms)
		return NULL;
	/* the last symbol starting at or below addr */
	lo = fhook_upper_bound(obj->nr_syms, k, obj->syms[k].addr, addr);
	if (!lo)
		return NULL;
	s = &obj->syms[lo - 1];
	if (addr < s->addr + (s->size ? s->size : 1))
		return s;
	return NULL;
}

int fhook_object_format(struct fhook_object *obj, unsigned long ip, char *buf, size_t size,
			bool with_offset)
{
	const struct fhook_sym *sym = obj ? fhook_object_sym_at(obj, ip) : NULL;
	int n;

	if (!sym)
		n = snprintf(buf, size, "0x%lx", ip);
	else if (with_offset)
		n = snprintf(buf, size, "%s+0x%lx/0x%x", fhook_sym_name(obj, sym),
			     ip - sym->addr, sym->size);
	else
		n = snprintf(buf, size, "%s", fhook_sym_name(obj, sym));
	if (sym && obj->modname && n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, " [%s]", obj->modname);
	if (size && n >= (int)size)
		n = (int)size - 1;
	return n;
}

/* ---- building an object ---- */

static struct fhook_object *__fhook_startup object_new(struct dl_phdr_info *info, bool first)
{
	struct fhook_object *obj;
	char path[PATH_MAX];
	long psz = (long)fhook_page_size();
	struct stat st;
	int i;

	if (first && !info->dlpi_name[0]) {
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

		if (n <= 0)
			return NULL;
		path[n] = 0;
	} else {
		size_t len = strlen(info->dlpi_name);

		/*
		 * no file: the vdso ("linux-vdso.so.1"); a name without a slash
		 * is none (strrchr(), not memchr(): libc's start-up ran that one)
		 */
		if (!len || len >= sizeof(path) || !strrchr(info->dlpi_name, '/'))
			return NULL;
		/* not snprintf: its code is pages a short process never touches otherwise */
		memcpy(path, info->dlpi_name, len + 1);
	}
	if (stat(path, &st))
		return NULL;	/* the vdso, or a file gone from disk */

	obj = calloc(1, sizeof(*obj));
	if (!obj)
		return NULL;
	obj->path = strdup(path);
	if (!obj->path) {
		free(obj);
		return NULL;
	}
	obj->is_main = first && !info->dlpi_name[0];
	if (!obj->is_main) {
		const char *slash = strrchr(obj->path, '/');

		obj->modname = slash ? slash + 1 : obj->path;
	}
	obj->base = info->dlpi_addr;
	obj->phdr = info->dlpi_phdr;
	obj->gen = ++fhook_objects_gen;
	obj->dev = st.st_dev;
	obj->ino = st.st_ino;
	obj->text_lo = ~0UL;
	for (i = 0; i < info->dlpi_phnum && obj->nr_segs < FHOOK_MAX_SEGS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		unsigned long lo, hi;

		if (ph->p_type != PT_LOAD)
			continue;
		lo = (info->dlpi_addr + ph->p_vaddr) & ~(psz - 1);
		hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + psz - 1) & ~(psz - 1);
		obj->segs[obj->nr_segs].start = lo;
		obj->segs[obj->nr_segs].end = hi;
		obj->segs[obj->nr_segs].prot = ((ph->p_flags & PF_R) ? PROT_READ : 0) |
					       ((ph->p_flags & PF_W) ? PROT_WRITE : 0) |
					       ((ph->p_flags & PF_X) ? PROT_EXEC : 0);
		obj->nr_segs++;
		if (ph->p_flags & PF_X) {
			obj->nr_exec_segs++;
			if (lo < obj->text_lo)
				obj->text_lo = lo;
			if (hi > obj->text_hi)
				obj->text_hi = hi;
		}
	}
	if (obj->text_lo == ~0UL)
		obj->text_lo = obj->text_hi = 0;
	return obj;
}

static void object_free(struct fhook_object *obj)
{
	if (owner_ops && owner_ops->release)
		owner_ops->release(obj);
	free(obj->syms);
	free(obj->names);
	free(obj->path);
	free(obj);
}

/*
 * Is @obj still what the loader reports at the same address?  A library
 * unloaded and another (or the same one, freshly mapped) loaded at the
 * same base must not inherit the old one's sites.
 */
static bool __fhook_startup object_is(struct fhook_object *obj, struct dl_phdr_info *info,
				      bool first)
{
	struct stat st;

	if (obj->is_main)
		return first;
	if (strcmp(obj->path, info->dlpi_name) || stat(obj->path, &st) ||
	    st.st_dev != obj->dev || st.st_ino != obj->ino)
		return false;
	return !owner_ops || !owner_ops->same || owner_ops->same(obj);
}

struct sync_state {
	struct fhook_object *added;
	int first;
	int changed;
};

static int __fhook_startup sync_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct sync_state *st = data;
	struct fhook_object *obj;
	bool first = !st->first++;

	(void)size;
	if (first && info->dlpi_adds == seen_adds && info->dlpi_subs == seen_subs)
		return 1;	/* nothing was loaded or unloaded */
	if (first) {
		__atomic_store_n(&seen_adds, info->dlpi_adds, __ATOMIC_RELAXED);
		__atomic_store_n(&seen_subs, info->dlpi_subs, __ATOMIC_RELAXED);
		for (obj = fhook_objects; obj; obj = obj->next)
			obj->seen = false;
		st->changed = -1;	/* a full walk follows */
	}
	for (obj = fhook_objects; obj; obj = obj->next)
		if (obj->base == info->dlpi_addr && obj->phdr == info->dlpi_phdr &&
		    object_is(obj, info, first)) {
			obj->seen = true;
			return 0;
		}
	for (obj = st->added; obj; obj = obj->next)
		if (obj->base == info->dlpi_addr && obj->phdr == info->dlpi_phdr)
			return 0;
	obj = object_new(info, first);
	if (obj) {
		obj->next = st->added;
		st->added = obj;
	}
	return 0;
}

int __fhook_startup fhook_objects_sync(void)
{
	struct sync_state st = { 0 };
	struct fhook_object **pp, *obj;
	int changed = 0;

	pthread_mutex_lock(&objects_mutex);
	__atomic_add_fetch(&syncing, 1, __ATOMIC_SEQ_CST);
	dl_iterate_phdr(sync_cb, &st);
	if (st.changed) {
		/* unlink what the loader no longer has */
		for (pp = &fhook_objects; (obj = *pp);) {
			if (obj->seen) {
				pp = &obj->next;
				continue;
			}
			__atomic_store_n(pp, obj->next, __ATOMIC_RELEASE);
			obj->next = reaped;
			reaped = obj;
			changed++;
		}
	}
	if (st.added) {
		/* keep load order: the executable first, as the kernel's vmlinux */
		struct fhook_object *rev = NULL;

		while ((obj = st.added)) {
			st.added = obj->next;
			obj->next = rev;
			rev = obj;
			changed++;
		}
		for (pp = &fhook_objects; *pp; pp = &(*pp)->next)
			;
		__atomic_store_n(pp, rev, __ATOMIC_RELEASE);
		/*
		 * Sites become nops before anyone can hook them: ops are changed
		 * only inside the loader's lock, which we hold.  Publishing first
		 * lets the patcher read and find the protection of these pages
		 * directly, not through a system call per site.
		 */
		if (owner_ops && owner_ops->added)
			owner_ops->added(rev);
	}
	if (changed)
		__atomic_add_fetch(&fhook_objects_epoch, 1, __ATOMIC_SEQ_CST);
	__atomic_sub_fetch(&syncing, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&objects_mutex);
	return changed;
}

static int changed_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(bool *)data = info->dlpi_adds != __atomic_load_n(&seen_adds, __ATOMIC_RELAXED) ||
			info->dlpi_subs != __atomic_load_n(&seen_subs, __ATOMIC_RELAXED);
	return 1;
}

bool fhook_objects_loader_changed(void)
{
	bool changed = true;

	/* a sync under way may have recorded the loader's counts already */
	if (__atomic_load_n(&syncing, __ATOMIC_SEQ_CST))
		return true;
	dl_iterate_phdr(changed_cb, &changed);
	return changed;
}

struct fhook_object *fhook_objects_detach_reaped(void)
{
	struct fhook_object *list;

	pthread_mutex_lock(&objects_mutex);
	list = reaped;
	reaped = NULL;
	pthread_mutex_unlock(&objects_mutex);
	return list;
}

void fhook_objects_free_list(struct fhook_object *list)
{
	while (list) {
		struct fhook_object *next = list->next;

		object_free(list);
		list = next;
	}
}

struct locked_call {
	int (*fn)(void *arg);
	void *arg;
	int ret;
	int done;
};

static int __fhook_startup locked_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct locked_call *c = data;

	(void)info;
	(void)size;
	c->ret = c->fn(c->arg);
	c->done = 1;
	return 1;
}

int __fhook_startup fhook_loader_locked(int (*fn)(void *arg), void *arg)
{
	struct locked_call c = { fn, arg, 0, 0 };

	dl_iterate_phdr(locked_cb, &c);
	if (!c.done)
		c.ret = fn(arg);
	return c.ret;
}

static int __fhook_startup sync_fn(void *arg)
{
	(void)arg;
	return fhook_objects_sync();
}

int __fhook_startup fhook_objects_refresh(void)
{
	return fhook_loader_locked(sync_fn, NULL);
}
