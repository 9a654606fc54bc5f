/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Core state shared by the files of lib/core.
 */
#ifndef FHOOK_CORE_H
#define FHOOK_CORE_H

#include <pthread.h>
#include <fhook/ftrace.h>
#include <fhook/fhook.h>

#include "hash.h"
#include "recursion.h"

#define __hidden __attribute__((visibility("hidden")))

/* Registered ops, RCU-protected; changed under ftrace_lock. */
extern struct ftrace_ops *ftrace_ops_list __hidden;
extern pthread_mutex_t ftrace_lock __hidden;

void ftrace_ops_list_func(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
			  struct ftrace_regs *fregs) __hidden;
ftrace_func_t fhook_ops_func(struct ftrace_ops *ops) __hidden;

/* ---- filters that follow the object list (filter.c) ---- */

struct fhook_ipvec {
	unsigned long *v;
	size_t n, cap;
};

int fhook_ipvec_push(struct fhook_ipvec *iv, unsigned long ip) __hidden;
/*
 * Sites of functions whose names match @glob, in objects loaded after
 * generation @min_gen (0: every object), appended to @iv.  Returns how
 * many, or -ENOMEM.  Objects synced; ftrace_lock held.
 */
int fhook_match_glob(const char *glob, unsigned long min_gen, struct fhook_ipvec *iv) __hidden;
/*
 * @h brought up to date with the object list: the addresses of objects
 * gone dropped, its globs applied to the objects loaded since it was made.
 * Returns the new set (to publish in place of @h), or NULL when nothing
 * changes (@h may have been restamped) or on error (*@err = -ENOMEM).
 */
struct ftrace_hash *fhook_hash_refresh(struct ftrace_hash *h, int *err) __hidden;
/* Record that @h was made from the objects known now. */
void fhook_hash_stamp(struct ftrace_hash *h) __hidden;

/*
 * Objects may have been loaded or unloaded (dlopen, dlclose returned):
 * learn them, bring the filters of registered ops up to date and their
 * sites in line.  Cheap when the loader reports no change.
 */
void fhook_ops_loader_event(void) __hidden;

/*
 * fhook_loader_notify - call @fn after each dlopen/dlmopen/dlclose that
 * returned success, in the caller's thread, after the ops are in line.
 * For the layers above core that keep their own view of the objects (the
 * recorder announces them to the command).  At most a few; -ENOSPC beyond.
 */
int fhook_loader_notify(void (*fn)(void)) __hidden;

/*
 * fhook_exec_notify - call @fn with the program about to be started by
 * an interposed exec or spawn call (exec_env.c): a path, or for the
 * PATH-searching calls a bare name.  @fn may run in a vfork child: only
 * async-signal-safe work there.  One; a second replaces it.
 */
void fhook_exec_notify(void (*fn)(const char *path, bool search)) __hidden;

/*
 * Set @ops' filter to the functions matching @filter but not @notfilter
 * (may be NULL), as globs that later objects are matched against too.
 * -ENOENT when no function matches.  @ops must not be registered.
 */
int fhook_ops_set_globs(struct ftrace_ops *ops, const char *filter,
			const char *notfilter) __hidden;

/*
 * The loader's dlopen() and dlclose(), without what libfhook's do after
 * them: for libfhook's own uses, which may run with ftrace_lock held.
 */
void *fhook_loader_dlopen(const char *file, int mode) __hidden;
int fhook_loader_dlclose(void *handle) __hidden;

/* Wait until no thread can be inside a handler that began before. */
void fhook_synchronize(void) __hidden;
void *fhook_libc_sym(const char *name) __hidden;

#endif /* FHOOK_CORE_H */
