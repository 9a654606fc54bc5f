// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libc's own definition of a function libfhook interposes (the signal-mask
 * calls, backtrace).
 *
 * Not dlsym(RTLD_NEXT): when libfhook arrives as the dependency of a
 * preloaded object (LD_PRELOAD=probe.so, probe.so needing libfhook.so),
 * the loader's search order is the program, probe.so, the program's own
 * libraries (libc among them), and only then libfhook: nothing after
 * libfhook defines these, and RTLD_NEXT finds NULL.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <gnu/lib-names.h>
#include <stddef.h>

#include "core.h"

void *fhook_libc_sym(const char *name)
{
	fhook_internal_guard();
	void *libc = fhook_loader_dlopen(LIBC_SO, RTLD_LAZY | RTLD_NOLOAD);
	void *sym = NULL;

	if (libc) {
		sym = dlsym(libc, name);
		/* RTLD_NOLOAD took a reference like any dlopen */
		fhook_loader_dlclose(libc);
	}
	return sym ? sym : dlsym(RTLD_NEXT, name);
}
