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
#include "util/startup.h"
#include "util/recursion.h"
#include <stddef.h>

#define __hidden __attribute__((visibility("hidden")))

/* Registered ops, RCU-protected; changed under ftrace_lock. */
extern struct ftrace_ops *ftrace_ops_list __hidden;
extern pthread_mutex_t ftrace_lock __hidden;

void ftrace_ops_list_func(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
			  struct ftrace_regs *fregs) __hidden;
ftrace_func_t fhook_ops_func(struct ftrace_ops *ops) __hidden;
void fhook_ops_retramp(struct ftrace_ops *ops) __hidden;
/*
 * Which of an fprobe's paths run with no frame: 1, its entries; 2, its
 * returns (the handlers proven); -EINVAL unless @ops is a registered graph ops.
 */
int fhook_ops_frameless(const struct ftrace_ops *ops) __hidden;
/*
 * May a kprobe go to @addr (ops.c)?  -EBUSY inside a registered handler that
 * runs without xmm0-7 saved; else no handler with it among its bytes is
 * proven from now on.
 */
int fhook_ops_probe_check(unsigned long addr) __hidden;

/* ---- sites (sites.c, modify.c) ---- */

struct fhook_object;
struct fhook_stub;
struct text_poke_loc;
struct dyn_ftrace;

/* Hand the arch and objects layers the hooks of this one; once, at start-up. */
void fhook_sites_init(void) __hidden;
/* The record of the site at @ip, if @obj's sites are loaded; never reads. */
/*
 * What the ops with a filter want at one site (site_tally.c): how many,
 * the one when there is one, and the FTRACE_FL_IPMODIFY/REGS they ask.
 */
struct site_want {
	unsigned long ip;		/* 0: a free slot */
	struct ftrace_ops *last;
	unsigned int count;
	unsigned long flags;
};

struct site_tally {
	struct site_want *slots;	/* by address, open addressing */
	size_t mask;
	/* the ops on every function, asked site by site; NULL-terminated */
	struct ftrace_ops **every;
	size_t nr_every;
};

/* The record flags an ops asks of the sites it wants. */
static inline unsigned long fhook_ops_site_flags(const struct ftrace_ops *op)
{
	return (op->flags & FTRACE_OPS_FL_IPMODIFY ? FTRACE_FL_IPMODIFY : 0) |
	       (op->flags & FTRACE_OPS_FL_SAVE_REGS ? FTRACE_FL_REGS : 0);
}

/*
 * Under ftrace_lock, ftrace enabled: walk the filters of ftrace_ops_list into
 * @t, counting each ops's sites in its nr_sites (the others' are counted as
 * they are asked).  0 or -ENOMEM (@t empty: ask every ops at every site).
 */
int fhook_site_tally_build(struct site_tally *t) __hidden;
const struct site_want *fhook_site_tally_find(const struct site_tally *t,
					      unsigned long ip) __hidden;
void fhook_site_tally_free(struct site_tally *t) __hidden;

struct dyn_ftrace *fhook_object_rec(struct fhook_object *obj, unsigned long ip) __hidden;
/*
 * Read @obj's sites if they are not yet (once; any thread).  Returns 0, or
 * a negative errno when the file could not be read (the object then has no
 * sites).
 */
int fhook_object_load_sites(struct fhook_object *obj) __hidden;
/*
 * Has any loaded object patchable sites (read or not yet)?  Learns the
 * objects loaded since the last look first.
 */
bool fhook_objects_have_sites(void) __hidden;
/* Load the sites of every known object (diagnostics, "every function"). */
void fhook_objects_load_all_sites(void) __hidden;

/* The kernel's ftrace_bug(): what failed at @ip, what we expected and found. */
void fhook_ftrace_bug(int err, unsigned long ip, const unsigned char *expected,
		      const unsigned char *actual, size_t len) __hidden;
void fhook_ftrace_bug_obj(struct fhook_object *obj, int err, unsigned long ip,
			  const unsigned char *expected, const unsigned char *actual,
			  size_t len) __hidden;
/*
 * What ftrace_init_nop must write at @rec, given its current bytes @cur
 * (FHOOK_SITE_MAX).  Returns 1 and fills @loc when a write is needed, 0
 * when the site is already a nop, -EINVAL for bytes that are no known pad.
 */
int fhook_init_nop_prepare(struct dyn_ftrace *rec, const unsigned char *cur,
			   struct text_poke_loc *loc) __hidden;

/* The trampolines' slow path (lib/arch/hooks.h); in dispatch.c. */
void fhook_dispatch(unsigned long ip, unsigned long parent_ip, struct fhook_stub *stub,
		    struct ftrace_regs *fregs) __hidden;

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
 * fhook_loader_keep_addresses - from now on, the address range of an
 * object that dlclose() unmaps is kept reserved (no access, no memory),
 * so that no later object gets its addresses: a recording names an
 * address by the objects the process loaded, and one whose addresses a
 * newer object took would be named by the newer one's symbols.  For the
 * recorder; once per process is enough.
 */
void fhook_loader_keep_addresses(void) __hidden;

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
/* pthread_atfork() for libfhook's own handlers (init.c) */
int fhook_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void)) __hidden;

/*
 * The attach channel (control.c, ctl_thread.c): one request run as
 * fhook_attach_ctl() runs it, the reply malloc'd (NULL without memory);
 * and the control thread started, once, if it is not running.
 */
char *fhook_ctl_serve(const char *req) __hidden;
void fhook_ctl_thread_start(void) __hidden;
/*
 * When process @pid (a tracer) exits, the control thread (running, or
 * started later) serves @req as if the tracer had sent it ("trace-stop PID").
 * A watch per tracer (a new one of the same @pid replaces its request), a few
 * at once; 0, or a negative errno (-ESRCH: no such process, -ENOSPC: too many).
 */
int fhook_ctl_watch(pid_t pid, const char *req) __hidden;
void fhook_ctl_unwatch(pid_t pid) __hidden;

#endif /* FHOOK_CORE_H */
