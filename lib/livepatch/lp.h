/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * State shared by the files of lib/livepatch.
 */
#ifndef FHOOK_LP_H
#define FHOOK_LP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <fhook/ftrace.h>
#include <fhook/livepatch.h>

#define __lp_hidden __attribute__((visibility("hidden")))

/*
 * One caller's route.  [start, start + size) is the caller (everything
 * for the catch-all route); new_func 0 means "fail with retval".
 */
struct lp_route {
	unsigned long start, size;
	unsigned long new_func, new_size;
	unsigned long retval;
	char *caller;			/* NULL: every other caller */
	unsigned long seen, hit;	/* atomics */
};

/* Routes are only changed while the ops is not registered. */
struct fhook_lp {
	struct ftrace_ops ops;
	struct lp_route *routes;
	unsigned int nr_routes;
	unsigned int flags;
	bool applied;
	char *name;
	char *target;
	unsigned long addr;		/* the target function */
	unsigned long site;		/* its patchable site */
	long inflight;			/* threads between handler and replacement */
	unsigned long other_seen;	/* calls no route took */
	void *nosite;			/* without a site: lp_nosite's state */
	/* the generated code of an applied patch (NULL: the handler path) */
	struct fhook_direct *direct;
	/* fault attribute and its state */
	struct fhook_fault_attr attr;
	long times_left;
	unsigned long count;
	uint64_t rnd;
};

/* Set by the attach channel (attach.c): messages go to its reply. */
extern __thread FILE *fhook_lp_err_file __lp_hidden;
/*
 * The function LIB.so:SYMBOL names (@with), loaded and never unloaded;
 * NULL, said through fhook_lp_err(), when it cannot be loaded or is not
 * a function (a variable would be executed as code).
 */
void *fhook_lp_replacement(struct fhook_lp *lp, const char *with) __lp_hidden;
void fhook_lp_err(const struct fhook_lp *lp, const char *fmt, ...) __lp_hidden
	__attribute__((format(printf, 2, 3)));

/* What a call of the target from @parent_ip does (the handler's decision, counted). */
enum {
	LP_CALL_RUN,		/* the target runs */
	LP_CALL_REDIRECT,	/* *to: where the thread goes instead, with the call's registers */
	LP_CALL_RETURN,		/* *to: the value the call returns at once */
};
int fhook_lp_route_call(struct fhook_lp *lp, unsigned long parent_ip, unsigned long *to)
	__lp_hidden;

/*
 * A target with no patchable site: lib/kprobes puts a kprobe on its entry
 * whose pre_handler asks fhook_lp_route_call() (the kernel's livepatch and
 * bpf_override_return on a kprobe).  @apply places it, @remove takes it
 * off and returns once no thread is in the pre_handler; 0 or a negative
 * errno, said through fhook_lp_err().
 */
struct fhook_lp_nosite {
	int (*apply)(struct fhook_lp *lp);
	int (*remove)(struct fhook_lp *lp);
};
void fhook_lp_set_nosite(const struct fhook_lp_nosite *ops) __lp_hidden;

#endif /* FHOOK_LP_H */
