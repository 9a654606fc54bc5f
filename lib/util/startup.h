/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Start-up code and data, kept together.
 *
 * Every process that loads libfhook runs its start-up path once, and on a
 * virtual machine each page it touches first costs a fault of 10-20 µs:
 * more than the instructions of the whole path.  A text fault maps the
 * 64 KiB around it, so the functions of that path sit in .text.startup,
 * where GCC puts the constructors and the linker puts it before the rest
 * of .text; a short process then touches one or two windows of libfhook's
 * text, not one per file it calls into.  So do the fork handlers a child
 * runs before it execs: a forked child has no text mapped, and faults in
 * again every window it runs.  The few variables the start-up
 * and exit paths read in a process fhook does nothing in sit in .data,
 * on the page the loader writes anyway, not each on a zero page of .bss
 * of its own.
 */
#ifndef FHOOK_UTIL_STARTUP_H
#define FHOOK_UTIL_STARTUP_H

#include <sys/auxv.h>

#define __fhook_startup		__attribute__((section(".text.startup")))
#define __fhook_startup_data	__attribute__((section(".data.startup")))
/*
 * The large tables only tracing fills: after the rest of .bss (the linker
 * script lib/libfhook.ld), not between the variables the start-up touches.
 */
#define __fhook_cold_bss	__attribute__((section(".bss.fhook_cold")))

/*
 * The page size, from the auxiliary vector the start-up reads anyway, not
 * sysconf(): its code and its table are libc pages a short process never
 * touches otherwise.
 */
static inline unsigned long fhook_page_size(void)
{
	unsigned long psz = getauxval(AT_PAGESZ);

	return psz ? psz : 4096;
}

#endif /* FHOOK_UTIL_STARTUP_H */
