/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fhook: function hooks for user-space processes, after the kernel's
 * ftrace, fprobe and livepatch.  This header pulls in every layer.
 */
#ifndef FHOOK_FHOOK_H
#define FHOOK_FHOOK_H

#include <fhook/ftrace.h>
#include <fhook/dyn_ftrace.h>
#include <fhook/kallsyms.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FHOOK_VERSION "0.1.0"

/*
 * fhook_refresh - learn about objects loaded or unloaded since the last
 * look.  libfhook's dlopen() and dlclose() do this themselves, and so does
 * every ftrace call; call it after a dlopen() that did not go through
 * libfhook's (libfhook only the dependency of a preloaded object).
 */
int fhook_refresh(void);

/* Counters, for tests and benchmarks. */
struct fhook_stats {
	unsigned long nr_objects;	/* objects known */
	unsigned long nr_sites;		/* patchable sites in them */
	unsigned long nr_enabled;	/* sites that call a trampoline */
	unsigned long nr_disabled;	/* sites we refused to touch */
	unsigned long batches;		/* text-patching batches */
	unsigned long syncs;		/* core serializations */
	unsigned long writes;		/* text writes */
	unsigned long traps_emulated;	/* threads that met an int3 mid-patch */
	unsigned long traps_rewound;
	int procmem;			/* last batch wrote through /proc/self/mem */
};
void fhook_get_stats(struct fhook_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* FHOOK_FHOOK_H */
