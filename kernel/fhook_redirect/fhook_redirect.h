/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fhook_redirect: caller-selective redirection of kernel functions.
 *
 * A redirect names one target function and one or more callers, each with
 * its own replacement.  Every call of the target is seen by an ftrace_ops
 * with IPMODIFY; when the call came from inside a listed caller (ftrace's
 * parent_ip lies in [caller, caller + size)) the saved instruction pointer
 * is replaced, so the replacement runs instead of the target and returns
 * straight to the caller.  Calls from anywhere else run the original.
 *
 * On kernels with CONFIG_FPROBE the same caller filter is offered as a
 * probe: entry and exit counts of a function, per caller.
 */
#ifndef _FHOOK_REDIRECT_H
#define _FHOOK_REDIRECT_H

#include <linux/atomic.h>
#include <linux/ftrace.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/types.h>
#if IS_ENABLED(CONFIG_FPROBE)
#include <linux/fprobe.h>
#endif

/* Upper bound on callers per redirect or probe: the handler walks them all. */
#define FHOOK_MAX_CALLERS	16
/* Call sites remembered per caller, for the debugfs view. */
#define FHOOK_MAX_SITES		4

/**
 * struct fhook_caller - one caller of a redirect's target
 * @symbol:      name of the calling function (set by the client)
 * @replacement: function with the target's prototype that the calls made
 *               from @symbol are sent to (set by the client); it must not
 *               block, see fhook_redirect_unregister()
 * @start:       first byte of the caller (filled in by the framework)
 * @end:         one past its last byte: the range is [@start, @end)
 * @sites:       offsets of the calls to the target found in the caller
 * @nr_sites:    how many of @sites are valid
 * @hits:        calls redirected to @replacement
 */
struct fhook_caller {
	const char *symbol;
	void *replacement;

	unsigned long start;
	unsigned long end;
	unsigned long sites[FHOOK_MAX_SITES];
	unsigned int nr_sites;
	atomic_long_t hits;
};

/**
 * struct fhook_redirect - a target and the callers whose calls go elsewhere
 * @target:     name of the redirected function (set by the client)
 * @callers:    array of @nr_callers callers (set by the client)
 * @nr_callers: 1..FHOOK_MAX_CALLERS
 * @owner:      the client's THIS_MODULE, shown in debugfs
 *
 * The rest is private to the framework.  The structure and @callers must
 * stay in place from fhook_redirect_register() until
 * fhook_redirect_unregister() returns.
 */
struct fhook_redirect {
	const char *target;
	struct fhook_caller *callers;
	unsigned int nr_callers;
	struct module *owner;

	unsigned long target_addr;
	unsigned long target_size;
	unsigned long site;
	atomic_long_t passthrough;
	atomic_long_t missed;
	struct ftrace_ops ops;
	struct list_head node;
};

/**
 * fhook_lookup_name() - kallsyms_lookup_name() for modules
 * @name: symbol name
 *
 * Process context.  It walks the whole symbol table, so it belongs in
 * load-time code, never on a hot path.
 *
 * Return: the address of @name, or 0 when there is no such symbol.
 */
unsigned long fhook_lookup_name(const char *name);

/**
 * fhook_redirect_register() - start redirecting @rd's callers
 * @rd: the redirect, filled in as documented in struct fhook_redirect
 *
 * Process context; takes the framework mutex.  Resolves every symbol,
 * checks that the target is traceable and that each caller really
 * contains a call to it, then arms one ftrace_ops on the target.
 *
 * Return: 0 on success; -EINVAL for a malformed @rd, an untraceable
 * target or a caller that does not call the target; -ENOENT for an
 * unknown symbol; -EBUSY when something else (livepatch, another
 * redirect) already modifies the target's ip; other negative errno from
 * ftrace.  On failure nothing is left registered.
 */
int fhook_redirect_register(struct fhook_redirect *rd);

/**
 * fhook_redirect_unregister() - stop redirecting and wait for stragglers
 * @rd: a redirect for which fhook_redirect_register() returned 0
 *
 * Process context; sleeps.  Returns once no task can still be running
 * the handler or a replacement, so the client may then free @rd and its
 * module text.  The wait is an RCU-tasks grace period, which treats a
 * voluntary sleep as quiescent: a replacement must therefore not block.
 */
void fhook_redirect_unregister(struct fhook_redirect *rd);

#if IS_ENABLED(CONFIG_FPROBE)
/**
 * struct fhook_probe_caller - per-caller counters of a probe
 * @symbol:  name of the calling function (set by the client)
 * @start:   [@start, @end) of the caller (filled in by the framework)
 * @end:     see @start
 * @entries: calls of the target made from this caller
 * @exits:   returns of those calls
 */
struct fhook_probe_caller {
	const char *symbol;

	unsigned long start;
	unsigned long end;
	atomic_long_t entries;
	atomic_long_t exits;
};

/**
 * struct fhook_probe - entry/exit counts of a function, per caller
 * @target:     name of the probed function (set by the client)
 * @callers:    array of @nr_callers callers (set by the client)
 * @nr_callers: 1..FHOOK_MAX_CALLERS
 * @owner:      the client's THIS_MODULE, shown in debugfs
 *
 * The rest is private.  Built on fprobe, so it shares the target with a
 * redirect (fprobe does not use IPMODIFY).
 */
struct fhook_probe {
	const char *target;
	struct fhook_probe_caller *callers;
	unsigned int nr_callers;
	struct module *owner;

	unsigned long target_addr;
	atomic_long_t other;
	struct fprobe fp;
	struct list_head node;
};

/**
 * fhook_probe_register() - start counting calls of @pr's target per caller
 * @pr: the probe
 *
 * Process context.  Return: 0, or -EINVAL / -ENOENT as for
 * fhook_redirect_register(), or a negative errno from fprobe.
 */
int fhook_probe_register(struct fhook_probe *pr);

/**
 * fhook_probe_unregister() - stop the probe
 * @pr: a registered probe
 *
 * Process context; sleeps until no handler of @pr can still run.
 */
void fhook_probe_unregister(struct fhook_probe *pr);
#endif /* CONFIG_FPROBE */

#endif /* _FHOOK_REDIRECT_H */
