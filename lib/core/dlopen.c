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
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>

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

int dlclose(void *handle)
{
	int ret = fhook_loader_dlclose(handle);

	if (!ret)
		after_loader_call();
	return ret;
}
