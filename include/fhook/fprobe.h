/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fhook: fprobe, the kernel's function entry/exit probe, for user space.
 *
 * One struct fprobe puts an entry handler and an exit handler on many
 * functions through a single ftrace_ops, as kernel/trace/fprobe.c at
 * v6.12 does.  The exit is caught by a return hook (rethook): the traced
 * function's return address is swapped for a trampoline and the real one
 * is kept on a per-thread shadow stack.
 *
 * Difference from the 6.12 kernel: the handlers take a struct ftrace_regs
 * (as the kernel's fprobe does from 6.14 on), not a struct pt_regs.  The
 * ftrace_regs is what fhook's cheap trampoline builds, it carries the
 * floating-point argument and return registers that pt_regs lacks, and a
 * pt_regs would force FTRACE_OPS_FL_SAVE_REGS (the slow path) on every
 * probed function.  Use ftrace_regs_get_argument(),
 * ftrace_regs_get_return_value(), ftrace_regs_get_fp_return_value() and
 * friends from <fhook/ftrace.h>.
 */
#ifndef FHOOK_FPROBE_H
#define FHOOK_FPROBE_H

#include <fhook/ftrace.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fprobe;
struct rethook;

/*
 * The entry handler.  @entry_ip is the probed function's patchable site
 * (its address, or past the arch's entry instructions: an endbr64,
 * aarch64's bti c and mov x9, x30), @ret_ip the address it
 * will return to, @entry_data the fprobe's per-call scratch area
 * (@entry_data_size bytes, NULL when that is 0), handed on to the exit
 * handler of the same call.  Returning non-zero cancels the exit handler
 * for this call.
 */
typedef int (*fprobe_entry_cb)(struct fprobe *fp, unsigned long entry_ip,
			       unsigned long ret_ip, struct ftrace_regs *fregs,
			       void *entry_data);

/*
 * The exit handler.  @ret_ip is the address the function returns to.
 * @fregs is NULL for a frame removed without a return (only with
 * FPROBE_FL_EXIT_ON_UNWIND).  In @fregs only the return value registers (ftrace_regs_get_return_value(),
 * ftrace_regs_get_fp_return_value(); x86-64: rdx, xmm0-1; aarch64: x0-x8, q0-q7), the instruction
 * pointer (== @ret_ip) and the stack pointer (after the return) are valid;
 * a changed return value is what the caller sees.
 */
typedef void (*fprobe_exit_cb)(struct fprobe *fp, unsigned long entry_ip,
			       unsigned long ret_ip, struct ftrace_regs *fregs,
			       void *entry_data);

/**
 * struct fprobe - ftrace-based probe on many functions' entries and exits
 * @ops:	the ftrace_ops (fhook's; do not touch)
 * @nmissed:	events dropped: a refused recursion (both handlers skipped)
 *		or no free return hook (both handlers skipped, as in 6.12)
 * @flags:	FPROBE_FL_*
 * @rethook:	the return-hook pool (internal)
 * @entry_data_size: bytes of per-call scratch shared by entry and exit
 *		handler (at most FPROBE_ENTRY_DATA_MAX)
 * @nr_maxactive: return hooks in flight at once, over all threads; 0 means
 *		no cap but each thread's shadow stack (8191 entries; the
 *		kernel's 2 * CPUs * functions does not fit user stacks)
 * @entry_handler: called on entry, may be NULL
 * @exit_handler: called on exit, may be NULL (then no return is hooked)
 *
 * Zero it, set the handlers and sizes, and register it.
 */
struct fprobe {
	struct ftrace_ops ops;
	unsigned long nmissed;
	unsigned int flags;
	struct rethook *rethook;
	size_t entry_data_size;
	int nr_maxactive;
	fprobe_entry_cb entry_handler;
	fprobe_exit_cb exit_handler;
};

/* Registered but off: neither handler runs (set it with disable_fprobe()). */
#define FPROBE_FL_DISABLED	1
/* Accepted for source compatibility; fhook has no kprobes to share with. */
#define FPROBE_FL_KPROBE_SHARED	2
/*
 * fhook's own (not in the kernel): the exit handler is also called for
 * every hooked frame that leaves the stack without returning -- a C++
 * exception or a forced unwind (pthread_exit(), cancellation) passing
 * through it, longjmp()/siglongjmp() jumping over it -- once, innermost
 * first, with @fregs NULL, @ret_ip the frame's real return address and
 * @entry_ip and @entry_data as for its return.  It comes before the next
 * hooked entry or return at a shallower position on that thread (during
 * the unwinding itself for exceptions and forced unwinds, in longjmp
 * before the jump for a jump within the thread's own stack) and at the
 * latest when the thread exits; a frame on another stack (a parked
 * coroutine) is never reported while it can still return.  The recursion
 * rules of a return apply (refused: counted in nmissed).  Read when the
 * fprobe is registered; needs an exit handler.  See docs/fprobe.md.
 */
#define FPROBE_FL_EXIT_ON_UNWIND	4
/*
 * fhook's own: both handlers neither change nor read the vector argument registers, as
 * FHOOK_OPS_FL_GENERAL_REGS_ONLY says of an ftrace_ops handler (built with
 * -mgeneral-regs-only, calling nothing that uses them): the entry then
 * saves no vector register.  A probe that sets it and breaks the promise
 * corrupts the traced program's floating-point arguments.  Read when the
 * fprobe is registered.
 */
#define FPROBE_FL_GENERAL_REGS_ONLY	8

/* The largest entry_data_size a shadow-stack slot holds. */
#define FPROBE_ENTRY_DATA_MAX	256
/* Return hooks one thread can have in flight (its shadow stack's depth). */
#define FPROBE_MAX_DEPTH	8191

static inline bool fprobe_disabled(struct fprobe *fp)
{
	return fp && (__atomic_load_n(&fp->flags, __ATOMIC_RELAXED) & FPROBE_FL_DISABLED);
}

/* fprobe_is_registered - true between a successful register and unregister. */
static inline bool fprobe_is_registered(struct fprobe *fp)
{
	return fp && fp->ops.func;
}

/**
 * register_fprobe - probe every function whose name matches a glob
 * @fp:		the probe
 * @filter:	glob (fnmatch: '*', '?', '[...]') of the functions to probe
 * @notfilter:	glob of functions to leave out, or NULL
 *
 * Only functions with a patchable site count.  The globs stay with the
 * probe: matching functions of a library opened later with dlopen() are
 * probed from the moment dlopen() returns (its constructors, which run
 * inside dlopen(), are not), and those of a library closed with dlclose()
 * leave the probe.  Call from ordinary thread context, not from a handler.
 * Returns 0, -EINVAL for bad arguments, -EBUSY if @fp is registered
 * already, -ENOENT if nothing matches now, -E2BIG if @entry_data_size is
 * too large, or what ftrace returned.
 */
int register_fprobe(struct fprobe *fp, const char *filter, const char *notfilter);

/**
 * register_fprobe_ips - probe the functions at @addrs
 * @fp:		the probe
 * @addrs:	function addresses or their patchable sites
 * @num:	how many
 *
 * Returns as register_fprobe(); -ENOENT if an address has no site.
 */
int register_fprobe_ips(struct fprobe *fp, unsigned long *addrs, int num);

/**
 * register_fprobe_syms - probe the functions named in @syms
 * @fp:		the probe
 * @syms:	function names, looked up with kallsyms_lookup_name()
 * @num:	how many
 *
 * Returns as register_fprobe(); -ENOENT for an unknown name or a function
 * without a patchable site.
 */
int register_fprobe_syms(struct fprobe *fp, const char **syms, int num);

/**
 * unregister_fprobe - remove @fp
 *
 * Waits until no thread is in either handler; once it returns neither
 * handler runs again, even for calls still in flight (their functions
 * return to their callers as usual), and @fp may be freed.  Until it
 * returns, the exit handler may still run for a call whose entry handler
 * ran: the sites are unhooked first, the returns cut off after.  From
 * ordinary thread context, not from a handler of @fp.  Returns 0, or
 * -EINVAL if @fp is not registered.
 */
int unregister_fprobe(struct fprobe *fp);

/* Turn a registered fprobe's handlers off and on; no waiting. */
static inline void disable_fprobe(struct fprobe *fp)
{
	if (fp)
		__atomic_or_fetch(&fp->flags, FPROBE_FL_DISABLED, __ATOMIC_RELAXED);
}

static inline void enable_fprobe(struct fprobe *fp)
{
	if (fp)
		__atomic_and_fetch(&fp->flags, ~FPROBE_FL_DISABLED, __ATOMIC_RELAXED);
}

/*
 * fhook's own: which of @fp's paths run with no frame at all, for a
 * registered probe without a pool.  FHOOK_FPROBE_FRAMELESS_ENTRY: its
 * entry handler was proven, when it registered, to be a leaf that touches
 * no vector or x87 register and never reads its fregs (the assembler
 * front end of `fhook cflags` proves it at build time; see
 * fhook_ops_saves_vectors()), so its trampoline builds no ftrace_regs;
 * FHOOK_FPROBE_FRAMELESS_EXIT: the same of its exit handler, for the
 * return.  Returns the bits, or -EINVAL when @fp is not registered.
 */
#define FHOOK_FPROBE_FRAMELESS_ENTRY	1
#define FHOOK_FPROBE_FRAMELESS_EXIT	2
int fhook_fprobe_frameless(struct fprobe *fp);

/*
 * fprobe_nmissed - the events dropped so far (fp->nmissed, read atomically).
 */
static inline unsigned long fprobe_nmissed(struct fprobe *fp)
{
	return __atomic_load_n(&fp->nmissed, __ATOMIC_RELAXED);
}

/*
 * rethook_find_ret_addr - the real return address behind @addr
 *
 * If @addr is one of this thread's return-hook trampolines, the address it
 * stands for; else @addr.  For code that reads return addresses itself
 * (__builtin_return_address() in a probed function sees the trampoline).
 */
unsigned long rethook_find_ret_addr(unsigned long addr);

#ifdef __cplusplus
}
#endif

#endif /* FHOOK_FPROBE_H */
