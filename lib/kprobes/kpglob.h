/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kprobe globs (kpglob.c): the functions of one loaded object a glob
 * names, and registering many probes in batches where one that fails
 * does not take the others with it.  For the kprobe events of
 * lib/recorder/record_kprobe.c.
 */
#ifndef FHOOK_KPGLOB_H
#define FHOOK_KPGLOB_H

#include <stdbool.h>
#include <stddef.h>
#include <fhook/kprobes.h>

#define FHOOK_HIDDEN __attribute__((visibility("hidden")))

struct fhook_kp_glob {
	unsigned long *addrs;	/* the functions to probe, by address, one each */
	size_t nr;
	size_t nr_skipped;	/* matched, but fhook runs them (nokprobe.h) */
	bool loaded;		/* the object is in the process */
};

/*
 * The functions of the object @mod (a file name or path; NULL: the
 * executable, which a file name also names) whose symbol matches @glob
 * (fnmatch); for return probes (@ret), not the program's entry point,
 * which no call enters.  0 or -ENOMEM; @g->loaded false when no such
 * object is loaded yet.  Free with fhook_kprobe_glob_free().
 */
int fhook_kprobe_glob(const char *mod, const char *glob, bool ret, struct fhook_kp_glob *g)
	FHOOK_HIDDEN;
void fhook_kprobe_glob_free(struct fhook_kp_glob *g) FHOOK_HIDDEN;

/*
 * Register @num kprobes (kretprobes) in as few batches as can be: all at
 * once, and where that fails, each half again, so that a probe refused
 * alone is the only one left out.  Returns how many were registered;
 * each refused one has its errno in @errs[i] (0 for the others) and, if
 * @whys is not NULL, what refused it in @whys[i] (malloc'd, or NULL).
 */
int fhook_register_kprobes_each(struct kprobe **kps, int num, int *errs, char **whys)
	FHOOK_HIDDEN;
int fhook_register_kretprobes_each(struct kretprobe **rps, int num, int *errs, char **whys)
	FHOOK_HIDDEN;

/*
 * What refused this thread's last kprobe registration that failed, when
 * the errno alone does not say it (bytes that are not fhook's), or "".
 */
const char *fhook_kprobe_last_why(void) FHOOK_HIDDEN;
/* ... forgotten: a registration that fails before register_kprobes() says none */
void fhook_kprobe_why_clear(void) FHOOK_HIDDEN;
void fhook_kprobe_why_set(const char *why) FHOOK_HIDDEN;

#endif
