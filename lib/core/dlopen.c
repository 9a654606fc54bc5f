// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Code loaded at run time: libfhook interposes dlopen(), dlmopen() and
 * dlclose(), and once the real call has returned, learns the objects it
 * loaded or unloaded and brings every registered ops in line with them
 * (filter.c): a glob filter, an fprobe's glob or an empty filter ("every
 * function") then covers a library opened after it was set, and the sites
 * of a closed one leave every filter.
 *
 * What this cannot see:
 *  - the library's constructors, and whatever they call: they run inside
 *    the real dlopen(), before it returns to us;
 *  - a dlopen() that does not reach libfhook's: when libfhook is only the
 *    dependency of a preloaded object, libc comes first in the search
 *    order.  The next fhook call (or fhook_refresh()) then catches up.
 *
 * While a process is recorded, what a dlclose() unmaps stays reserved
 * (fhook_loader_keep_addresses()): every object of a process image then
 * has addresses of its own, and a record is named by the one object that
 * held its address, before or after a dlclose().
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/mman.h>

#include "core.h"

typedef void *(*dlopen_fn)(const char *file, int mode);
typedef void *(*dlmopen_fn)(Lmid_t lmid, const char *file, int mode);
typedef int (*dlclose_fn)(void *handle);

static dlopen_fn real_dlopen;
static dlmopen_fn real_dlmopen;
static dlclose_fn real_dlclose;

/*
 * The loader's own function: the next definition after libfhook, or, when
 * libfhook comes after libc in the search order (it is then only the
 * dependency of a preloaded object, and nothing follows it), the first
 * one, which is then not ours.  Not fhook_libc_sym(): it calls dlopen().
 */
static void *loader_sym(const char *name, void *ours)
{
	void *sym = dlsym(RTLD_NEXT, name);

	if (!sym)
		sym = dlsym(RTLD_DEFAULT, name);
	return sym == ours ? NULL : sym;
}

#define LOADER_NOTIFY_MAX	4

static void (*loader_notify[LOADER_NOTIFY_MAX])(void);

int __fhook_startup fhook_loader_notify(void (*fn)(void))
{
	int i;

	for (i = 0; i < LOADER_NOTIFY_MAX; i++) {
		void (*none)(void) = NULL;

		if (__atomic_compare_exchange_n(&loader_notify[i], &none, fn, false,
						__ATOMIC_RELEASE, __ATOMIC_RELAXED))
			return 0;
	}
	return -ENOSPC;
}

/* After the loader's call returned: errno and dlerror() stay the caller's. */
static void after_loader_call(void)
{
	int saved = errno, i;

	fhook_ops_loader_event();
	for (i = 0; i < LOADER_NOTIFY_MAX; i++) {
		void (*fn)(void) = __atomic_load_n(&loader_notify[i], __ATOMIC_ACQUIRE);

		if (fn)
			fn();
	}
	errno = saved;
}

void *fhook_loader_dlopen(const char *file, int mode)
{
	dlopen_fn real = __atomic_load_n(&real_dlopen, __ATOMIC_RELAXED);

	if (!real) {
		real = (dlopen_fn)loader_sym("dlopen", (void *)dlopen);
		__atomic_store_n(&real_dlopen, real, __ATOMIC_RELAXED);
	}
	return real ? real(file, mode) : NULL;
}

int fhook_loader_dlclose(void *handle)
{
	dlclose_fn real = __atomic_load_n(&real_dlclose, __ATOMIC_RELAXED);

	if (!real) {
		real = (dlclose_fn)loader_sym("dlclose", (void *)dlclose);
		__atomic_store_n(&real_dlclose, real, __ATOMIC_RELAXED);
	}
	return real ? real(handle) : -1;
}

void *dlopen(const char *file, int mode)
{
	void *h = fhook_loader_dlopen(file, mode);

	if (h && !(mode & RTLD_NOLOAD))
		after_loader_call();
	return h;
}

void *dlmopen(Lmid_t lmid, const char *file, int mode)
{
	dlmopen_fn real = __atomic_load_n(&real_dlmopen, __ATOMIC_RELAXED);
	void *h;

	if (!real) {
		real = (dlmopen_fn)loader_sym("dlmopen", (void *)dlmopen);
		__atomic_store_n(&real_dlmopen, real, __ATOMIC_RELAXED);
	}
	if (!real)
		return NULL;
	h = real(lmid, file, mode);
	if (h && !(mode & RTLD_NOLOAD))
		after_loader_call();
	return h;
}

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

static bool keep_addresses;

void fhook_loader_keep_addresses(void)
{
	__atomic_store_n(&keep_addresses, true, __ATOMIC_RELEASE);
}

/* The objects loaded before a dlclose(): their load addresses and extents. */
#define KEEP_MAX	512
struct keep_obj {
	unsigned long base, start, end;
};
static struct keep_obj keep_before[KEEP_MAX] __fhook_cold_bss;
static int keep_nr;
static pthread_mutex_t keep_lock = PTHREAD_MUTEX_INITIALIZER;

static int keep_extent(struct dl_phdr_info *info, struct keep_obj *o)
{
	unsigned long lo = ~0UL, hi = 0, page = 4096;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !ph->p_memsz)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (lo >= hi)
		return -1;
	o->base = info->dlpi_addr;
	o->start = lo & ~(page - 1);
	o->end = (hi + page - 1) & ~(page - 1);
	return 0;
}

static int keep_snap_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	if (keep_nr < KEEP_MAX && !keep_extent(info, &keep_before[keep_nr]))
		keep_nr++;
	return 0;
}

/* Still loaded: clear its entry in the snapshot. */
static int keep_still_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct keep_obj o;
	int i;

	if (keep_extent(info, &o))
		return 0;
	for (i = 0; i < keep_nr; i++)
		if (keep_before[i].base == o.base && keep_before[i].start == o.start)
			keep_before[i].end = 0;
	return 0;
}

/*
 * Reserve what was unmapped.  Where something else has taken a part of it
 * already (another thread's mapping), that part is left to it.
 */
/*
 * At most this many ranges reserved: each is a mapping of the process's,
 * whose count the kernel bounds (vm.max_map_count, 65530 by default); a
 * program that loads and unloads more libraries than this while traced
 * may get an unloaded one's addresses again, and its names then.
 */
#define KEEP_RESERVED_MAX	4096
static unsigned int keep_reserved;

static void keep_reserve(const struct keep_obj *o)
{
	unsigned long a;
	void *p;

	if (keep_reserved >= KEEP_RESERVED_MAX)
		return;
	keep_reserved++;
	p = mmap((void *)o->start, o->end - o->start, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == (void *)o->start)
		return;
	if (p != MAP_FAILED)
		munmap(p, o->end - o->start);	/* a kernel that took it for a hint */
	for (a = o->start; a < o->end; a += 4096) {
		p = mmap((void *)a, 4096, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != MAP_FAILED && p != (void *)a)
			munmap(p, 4096);
	}
}

int dlclose(void *handle)
{
	bool keep = __atomic_load_n(&keep_addresses, __ATOMIC_ACQUIRE);
	int ret, saved, i;

	if (!keep) {
		ret = fhook_loader_dlclose(handle);
		if (!ret)
			after_loader_call();
		return ret;
	}
	pthread_mutex_lock(&keep_lock);
	keep_nr = 0;
	dl_iterate_phdr(keep_snap_cb, NULL);
	ret = fhook_loader_dlclose(handle);
	if (!ret) {
		saved = errno;
		dl_iterate_phdr(keep_still_cb, NULL);
		for (i = 0; i < keep_nr; i++)
			if (keep_before[i].end)
				keep_reserve(&keep_before[i]);
		errno = saved;
	}
	pthread_mutex_unlock(&keep_lock);
	if (!ret)
		after_loader_call();
	return ret;
}
