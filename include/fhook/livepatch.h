/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fhook: caller-selective redirect and fault injection, after the kernel's
 * livepatch (klp_ftrace_handler) and fail_function.
 *
 * A struct fhook_lp holds one target function and a list of routes.  A
 * route names a caller (a function symbol) and what happens to calls of
 * the target made from it: they go to a replacement function, or (for
 * fault injection) return a chosen value without running the target.  A
 * call belongs to a caller when its return address (ftrace's parent_ip)
 * lies in the caller's [start, start + size) range, as in seed 000.  Calls
 * from anywhere else run the original target.  A route without a caller
 * takes every call no named route took.
 *
 * A call the replacement itself makes to the target always reaches the
 * original: parent_ip inside any replacement of the same struct fhook_lp
 * is never redirected or failed.
 *
 * The target must be instrumented (-fpatchable-function-entry=5 or
 * -pg -mfentry); callers and replacements need not be.  Every function
 * here may allocate and take locks: call them from ordinary thread
 * context, never from an ftrace handler or a signal handler.  On failure a
 * message naming the offending symbol goes to stderr (unless
 * FHOOK_LP_QUIET), the function returns a negative errno, errno is set,
 * and nothing has changed.
 */
#ifndef FHOOK_LIVEPATCH_H
#define FHOOK_LIVEPATCH_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fhook_lp;

enum {
	FHOOK_LP_QUIET		= 1U << 0,	/* no messages on stderr */
	FHOOK_LP_NO_TAILCALL_CHECK = 1U << 1,	/* don't disassemble named callers */
};

/*
 * struct fhook_lp_opts - options of fhook_lp_new()
 * @sz:    sizeof(struct fhook_lp_opts); fields past @sz read as zero
 * @flags: FHOOK_LP_*
 * @name:  what messages call this patch ("patch", "inject"); NULL: "livepatch"
 */
struct fhook_lp_opts {
	size_t sz;
	unsigned int flags;
	const char *name;
};

/*
 * struct fhook_fault_attr - when an injected fault fires, after the
 * kernel's struct fault_attr (Documentation/fault-injection)
 * @sz:          sizeof(struct fhook_fault_attr)
 * @probability: percent (0-100) of eligible calls that fail
 * @interval:    only every @interval-th eligible call may fail (0 or 1: all)
 * @times:       how many failures at most; -1: no limit
 * @seed:        seed of the random sequence @probability draws from
 *
 * The decision for a call from a route that injects is the kernel's
 * should_fail(), in this order: probability 0 -> pass; @times already
 * used up -> pass; if @interval > 1, count the call and pass unless the
 * count is a multiple of @interval; draw r = next random value % 100 and
 * pass if @probability <= r; otherwise fail and use up one of @times.
 * Random values come from splitmix64 over a counter that starts at @seed
 * and advances by 0x9e3779b97f4a7c15 per draw, so a single-threaded run
 * with a fixed seed fails exactly the same calls every time.  The
 * attribute is shared by every injecting route of one struct fhook_lp
 * (the kernel has one attribute per function too).
 *
 * Unlike debugfs (probability 0, times 1), a NULL attribute means
 * probability 100, interval 1, times -1: every eligible call fails.
 */
struct fhook_fault_attr {
	size_t sz;
	unsigned long probability;
	unsigned long interval;
	long times;
	unsigned long long seed;
};

/*
 * fhook_lp_new - prepare a patch of @target
 *
 * Looks @target up (kallsyms_lookup_name) and checks that it has a
 * patchable site.  Returns the new patch, or NULL with errno set:
 * ENOENT (no such function, or it is not instrumented), ENOMEM, EINVAL.
 */
struct fhook_lp *fhook_lp_new(const char *target, const struct fhook_lp_opts *opts);

/*
 * fhook_lp_redirect - route calls of the target made from @caller to
 * @new_func
 *
 * @caller NULL routes every call that no named route takes.  Only before
 * fhook_lp_apply() (or after fhook_lp_remove()).  Warns when @caller has
 * no call instruction to the target (a tail call; see README-livepatch).
 * Returns 0, -ENOENT (no function @caller), -EEXIST (@caller already has a
 * route), -EBUSY (applied), -EINVAL, -ENOMEM.
 */
int fhook_lp_redirect(struct fhook_lp *lp, const char *caller, void *new_func);

/*
 * fhook_lp_fail - make calls of the target from @caller return @retval
 * without running it, as decided by the patch's fault attribute
 *
 * @caller NULL: every call that no named route takes.  Same rules and
 * returns as fhook_lp_redirect().
 */
int fhook_lp_fail(struct fhook_lp *lp, const char *caller, unsigned long retval);

/*
 * fhook_lp_set_fault_attr - set the fault attribute (copied; NULL: fail
 * every call) and restart its counters.  Only while not applied: -EBUSY.
 */
int fhook_lp_set_fault_attr(struct fhook_lp *lp, const struct fhook_fault_attr *attr);

/*
 * fhook_lp_apply - start routing calls, while other threads go on calling
 *
 * From its return every call of the target is routed; a call that started
 * before may still run the original.  Returns 0, -EBUSY (another IPMODIFY
 * ops, e.g. another patch, owns the target: nothing changed), -EALREADY,
 * -EINVAL (no routes), or the error of register_ftrace_function().
 */
int fhook_lp_apply(struct fhook_lp *lp);

/*
 * fhook_lp_remove - stop routing: every caller runs the original again
 *
 * Returns once no thread can still enter a replacement through the hook:
 * it waits for an RCU grace period (no handler running) and then for
 * every thread the handler sent towards a replacement to have reached
 * it.  After that, a replacement's code may be unloaded once the threads
 * already inside it have left (that is the caller's business, as in the
 * kernel).  Returns 0 or -ENODEV (not applied).
 */
int fhook_lp_remove(struct fhook_lp *lp);

/* fhook_lp_free - remove if applied, then free.  NULL is fine. */
void fhook_lp_free(struct fhook_lp *lp);

/*
 * struct fhook_lp_stat - counters of one route
 * @caller: its caller, NULL for the route of all other callers, or for
 *          the calls no route took (the last entry, when named routes
 *          exist but no catch-all route does)
 * @seen:   calls of the target that this route saw
 * @hit:    calls redirected or failed
 */
struct fhook_lp_stat {
	const char *caller;
	unsigned long seen;
	unsigned long hit;
};

/*
 * fhook_lp_stats - copy up to @max route counters into @st; returns how
 * many entries there are (which may exceed @max).  Any thread; counters
 * of calls still running may be missing.
 */
int fhook_lp_stats(struct fhook_lp *lp, struct fhook_lp_stat *st, int max);

/* fhook_lp_print_summary - the table `fhook inject` prints at exit. */
void fhook_lp_print_summary(struct fhook_lp *lp, FILE *f);

/*
 * fhook_lp_check_caller - does @caller contain a call to the target?
 *
 * Disassembles @caller (capstone).  Returns 1 when a direct call (also
 * through a resolved PLT or GOT entry) reaches the target, 0 when none
 * does, -ENOENT for an unknown caller.  @how (may be NULL) receives a
 * sentence describing what was found, e.g. the tail jump.
 */
int fhook_lp_check_caller(struct fhook_lp *lp, const char *caller, char *how, size_t how_len);

#ifdef __cplusplus
}
#endif

#endif /* FHOOK_LIVEPATCH_H */
