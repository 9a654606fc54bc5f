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
 * lies in the caller's [start, start + size) range.  Calls
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
	FHOOK_LP_NO_DIRECT	= 1U << 2,	/* the handler for every call, never
						 * generated code */
};

/**
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

/**
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

/**
 * fhook_lp_new() - prepare a patch of a function
 * @target: name of the function, looked up with kallsyms_lookup_name()
 * @opts:   NULL or options (@opts->sz first)
 *
 * Context: any thread; not from a handler or a signal handler.
 * Return: the new patch, not applied; or NULL with errno set: ENOENT (no
 * such function, or it has no patchable site), ENOMEM, EINVAL.
 */
struct fhook_lp *fhook_lp_new(const char *target, const struct fhook_lp_opts *opts);

/**
 * fhook_lp_redirect() - route calls of the target made from @caller to @new_func
 * @lp:       the patch, not applied
 * @caller:   function whose calls are routed; NULL: every call that no
 *            named route takes (named routes are tested first)
 * @new_func: the replacement, with the target's prototype
 *
 * Warns on stderr when @caller contains no call instruction to the target
 * (a tail call; see fhook_lp_check_caller() and README-livepatch.md).
 * Context: as fhook_lp_new(); never concurrently with another call on @lp.
 * Return: 0; -ENOENT (no function @caller), -EEXIST (@caller already has
 * a route), -EBUSY (@lp is applied), -EINVAL, -ENOMEM.
 */
int fhook_lp_redirect(struct fhook_lp *lp, const char *caller, void *new_func);

/**
 * fhook_lp_fail() - make calls of the target from @caller return @retval
 * @lp:     the patch, not applied
 * @caller: as for fhook_lp_redirect()
 * @retval: the value the target returns (in its integer result register) without running
 *
 * Which calls fail is decided by the patch's fault attribute
 * (fhook_lp_set_fault_attr()).  Context and return: as fhook_lp_redirect().
 */
int fhook_lp_fail(struct fhook_lp *lp, const char *caller, unsigned long retval);

/**
 * fhook_lp_set_fault_attr() - set the fault attribute of a patch
 * @lp:   the patch, not applied
 * @attr: copied; NULL: every eligible call fails
 *
 * Restarts the attribute's counters (times, interval count, random
 * sequence).  Return: 0, -EBUSY (applied), -EINVAL (probability above 100
 * or times below -1).
 */
int fhook_lp_set_fault_attr(struct fhook_lp *lp, const struct fhook_fault_attr *attr);

/**
 * fhook_lp_apply() - start routing calls
 * @lp: the patch, with at least one route
 *
 * Other threads may be calling the target meanwhile: each call is routed
 * or not as a whole.  From the return on, every new call is routed.
 * Context: any thread; not from a handler.  Waits for text patching.
 * Return: 0; -EBUSY (another IPMODIFY ops owns the target: nothing
 * changed), -EALREADY, -EINVAL (no routes), or the error of
 * register_ftrace_function().
 */
int fhook_lp_apply(struct fhook_lp *lp);

/**
 * fhook_lp_remove() - stop routing: every caller runs the original again
 * @lp: an applied patch
 *
 * Waits for an RCU grace period (no thread in the handler) and then for
 * every thread the handler sent towards a replacement to have reached it;
 * after that no thread can enter a replacement through the hook.  A
 * replacement's code may be unloaded once the threads already inside it
 * have left, which is the caller's business, as in the kernel.  Blocks as
 * long as a thread is stopped between handler and replacement.
 * Context: any thread; not from a handler or a replacement.
 * Return: 0, or -ENODEV (not applied).
 */
int fhook_lp_remove(struct fhook_lp *lp);

/**
 * fhook_lp_free() - remove the patch if applied, then free it
 * @lp: the patch, or NULL
 */
void fhook_lp_free(struct fhook_lp *lp);

/**
 * struct fhook_lp_stat - counters of one route
 * @caller: its caller; NULL for the catch-all route, or for the calls no
 *          route took (the last entry, when there is no catch-all route)
 * @seen:   calls of the target that this route saw
 * @hit:    calls redirected or failed
 */
struct fhook_lp_stat {
	const char *caller;
	unsigned long seen;
	unsigned long hit;
};

/**
 * fhook_lp_stats() - copy route counters
 * @lp:  the patch
 * @st:  array of @max entries
 * @max: size of @st
 *
 * Context: any thread, applied or not; counters of calls still running may
 * be missing.  Return: how many entries there are (may exceed @max).
 */
int fhook_lp_stats(struct fhook_lp *lp, struct fhook_lp_stat *st, int max);

/**
 * fhook_lp_print_summary() - print the table `fhook inject` prints at exit
 * @lp: the patch
 * @f:  where to
 */
void fhook_lp_print_summary(struct fhook_lp *lp, FILE *f);

/**
 * fhook_lp_check_caller() - does @caller contain a call to the target?
 * @lp:      the patch (gives the target)
 * @caller:  function to disassemble (capstone)
 * @how:     NULL, or receives a sentence on what was found (the tail jump)
 * @how_len: size of @how
 *
 * Return: 1 when a direct call, or one through a resolved PLT or GOT
 * entry, reaches the target; 0 when none does; -ENOENT for an unknown
 * caller, -ENOMEM; -ENOSYS when libcapstone.so.4 cannot be loaded (it is
 * opened with dlopen() at the first call, not linked).
 */
int fhook_lp_check_caller(struct fhook_lp *lp, const char *caller, char *how, size_t how_len);

#ifdef __cplusplus
}
#endif

#endif /* FHOOK_LIVEPATCH_H */
