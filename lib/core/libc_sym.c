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
	/*
	 * libc's handle, found once: start-up alone looks up a dozen
	 * functions, and each dlopen takes the loader's lock.  The reference
	 * RTLD_NOLOAD took is kept: libc is never unloaded.
	 */
	static void *libc;
	void *h = __atomic_load_n(&libc, __ATOMIC_ACQUIRE);
	void *sym = NULL;

	if (!h) {
		h = fhook_loader_dlopen(LIBC_SO, RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			void *old = NULL;

			/* a racing thread's handle wins; ours goes back */
			if (!__atomic_compare_exchange_n(&libc, &old, h, false, __ATOMIC_ACQ_REL,
							 __ATOMIC_ACQUIRE)) {
				fhook_loader_dlclose(h);
				h = old;
			}
		}
	}
	if (h)
		sym = dlsym(h, name);
	return sym ? sym : dlsym(RTLD_NEXT, name);
}
