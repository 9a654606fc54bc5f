/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fhook: the kernel's ftrace_ops API for user-space processes.
 *
 * Names, flags and return conventions follow include/linux/ftrace.h so that
 * code written against the kernel ports with few changes.  Functions return
 * 0 or a negative errno, and also set errno to the positive value.
 */
#ifndef FHOOK_FTRACE_H
#define FHOOK_FTRACE_H

#include <stddef.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * struct pt_regs and struct ftrace_regs are the architecture's (the
 * kernel's layouts); their accessors below, and the kernel's register
 * accessors in the arch header (instruction_pointer(),
 * regs_get_kernel_argument(), regs_return_value(), ...), are the only
 * stable interface.
 */
#if defined(__x86_64__)
#include <fhook/arch/x86_64/ptrace.h>
#elif defined(__aarch64__)
#include <fhook/arch/aarch64/ptrace.h>
#else
#error "fhook: no struct pt_regs for this architecture (include/fhook/arch/)"
#endif

struct ftrace_ops;

typedef void (*ftrace_func_t)(unsigned long ip, unsigned long parent_ip,
			      struct ftrace_ops *op, struct ftrace_regs *fregs);

struct ftrace_hash;

/* Flags, with the kernel's meaning. */
enum {
	FTRACE_OPS_FL_ENABLED		= 1UL << 0,  /* set by fhook while registered */
	FTRACE_OPS_FL_DYNAMIC		= 1UL << 1,  /* ops may be freed after unregister */
	FTRACE_OPS_FL_SAVE_REGS		= 1UL << 2,  /* the handler needs every register */
	FTRACE_OPS_FL_SAVE_REGS_IF_SUPPORTED = 1UL << 3,
	FTRACE_OPS_FL_RECURSION		= 1UL << 4,  /* fhook adds recursion protection */
	FTRACE_OPS_FL_STUB		= 1UL << 5,
	FTRACE_OPS_FL_INITIALIZED	= 1UL << 6,
	FTRACE_OPS_FL_DELETED		= 1UL << 7,
	FTRACE_OPS_FL_ADDING		= 1UL << 8,
	FTRACE_OPS_FL_REMOVING		= 1UL << 9,
	FTRACE_OPS_FL_MODIFYING		= 1UL << 10,
	FTRACE_OPS_FL_ALLOC_TRAMP	= 1UL << 11,
	FTRACE_OPS_FL_IPMODIFY		= 1UL << 12, /* the handler may change the ip */
	FTRACE_OPS_FL_PID		= 1UL << 13,
	FTRACE_OPS_FL_RCU		= 1UL << 14,
	FTRACE_OPS_FL_TRACE_ARRAY	= 1UL << 15,
	FTRACE_OPS_FL_PERMANENT		= 1UL << 16, /* ftrace_enabled may not be cleared */
	FTRACE_OPS_FL_DIRECT		= 1UL << 17,
	/*
	 * fhook's own: the handler neither changes nor reads the vector argument registers (built
	 * with -mgeneral-regs-only, calling nothing that uses them, and not
	 * reading floating-point arguments), so the trampoline does not save
	 * them.  A handler that sets it and breaks the promise corrupts the
	 * traced program's floating-point arguments.
	 */
	FHOOK_OPS_FL_GENERAL_REGS_ONLY	= 1UL << 24,
	/*
	 * fhook's own layers: ops->private is a struct fhook_fgraph (an
	 * fprobe), whose common cases the trampoline runs without C.
	 */
	FHOOK_OPS_FL_FGRAPH		= 1UL << 25,
};

/*
 * struct ftrace_ops - a set of functions and the handler to call for them.
 *
 * Define it statically, zeroed except for @func, @flags and @private, as in
 * the kernel.  Every field after @private belongs to fhook.
 */
struct ftrace_ops {
	ftrace_func_t func;
	unsigned long flags;
#ifdef __cplusplus
	void *private_;		/* "private" is a C++ keyword */
#else
	void *private;
#endif
	/* fhook's own state */
	struct ftrace_ops *next;
	struct ftrace_hash *filter_hash;	/* NULL or empty: every site */
	struct ftrace_hash *notrace_hash;	/* wins over the filter */
	unsigned long nr_sites;			/* sites it is enabled on */
	/*
	 * Generated code that replaces trampoline and handler at the sites
	 * this ops alone uses (the kernel's direct calls); NULL: none.  Set
	 * by fhook's own layers, before registering.
	 */
	void *direct;
	/* which stubs serve this registration (a cookie new at each one) */
	unsigned long stub_owner;
};

int register_ftrace_function(struct ftrace_ops *ops);
int unregister_ftrace_function(struct ftrace_ops *ops);

int ftrace_set_filter_ip(struct ftrace_ops *ops, unsigned long ip, int remove, int reset);
int ftrace_set_filter_ips(struct ftrace_ops *ops, unsigned long *ips, unsigned int cnt,
			  int remove, int reset);
int ftrace_set_filter(struct ftrace_ops *ops, unsigned char *buf, int len, int reset);
int ftrace_set_notrace(struct ftrace_ops *ops, unsigned char *buf, int len, int reset);
void ftrace_free_filter(struct ftrace_ops *ops);

unsigned long ftrace_location(unsigned long ip);
int ftrace_ops_test(struct ftrace_ops *ops, unsigned long ip);

/*
 * The process-wide switch, like the kernel.ftrace_enabled sysctl.  Clearing
 * it turns every site back into a nop; -EBUSY while a PERMANENT ops is
 * registered.
 */
int ftrace_set_enabled(bool enabled);
bool ftrace_is_enabled(void);

/*
 * fhook's own: does @ops's trampoline save the vector argument registers around its handler?
 * Not when the ops is FHOOK_OPS_FL_GENERAL_REGS_ONLY, or when its handler
 * was seen, at registration, to be a leaf that names no vector register
 * and reads of its fregs only the registers, not the vector part (proven
 * by its build with $(fhook cflags), or decoded with capstone if the
 * process has it loaded already): 16 instructions less per call.  1 or 0,
 * or -EINVAL when @ops is not registered.
 */
int fhook_ops_saves_vectors(const struct ftrace_ops *ops);

/* ---- ftrace_regs accessors ---- */

static inline struct pt_regs *ftrace_get_regs(struct ftrace_regs *fregs)
{
	return fregs && fregs->fhook_full ? &fregs->regs : NULL;
}

static inline unsigned long ftrace_regs_get_instruction_pointer(struct ftrace_regs *fregs)
{
	return instruction_pointer(&fregs->regs);
}

/* Only an ops with FTRACE_OPS_FL_IPMODIFY may move the ip. */
static inline void ftrace_regs_set_instruction_pointer(struct ftrace_regs *fregs,
						       unsigned long ip)
{
	instruction_pointer_set(&fregs->regs, ip);
}

/* The 6.1 name of the same setter. */
static inline void ftrace_instruction_pointer_set(struct ftrace_regs *fregs, unsigned long ip)
{
	instruction_pointer_set(&fregs->regs, ip);
}

static inline unsigned long ftrace_regs_get_stack_pointer(struct ftrace_regs *fregs)
{
	return user_stack_pointer(&fregs->regs);
}

/* Integer argument @n, counted from 0 as in the kernel (the ABI's argument registers). */
static inline unsigned long ftrace_regs_get_argument(struct ftrace_regs *fregs, unsigned int n)
{
	return regs_get_kernel_argument(&fregs->regs, n);
}

static inline void ftrace_regs_set_argument(struct ftrace_regs *fregs, unsigned int n,
					    unsigned long val)
{
	regs_set_kernel_argument(&fregs->regs, n, val);
}

/* The raw 16 bytes of the vector argument register @n (0-7), or NULL. */
static inline void *ftrace_regs_get_vector(struct ftrace_regs *fregs, unsigned int n)
{
	return n < 8 ? fregs->fhook_vregs[n] : NULL;
}

/* Floating-point argument @n (the first eight vector registers), as a double. */
static inline double ftrace_regs_get_fp_argument(struct ftrace_regs *fregs, unsigned int n)
{
	double d = 0;

	if (n < 8)
		__builtin_memcpy(&d, fregs->fhook_vregs[n], sizeof(d));
	return d;
}

static inline void ftrace_regs_set_fp_argument(struct ftrace_regs *fregs, unsigned int n,
					       double d)
{
	if (n < 8)
		__builtin_memcpy(fregs->fhook_vregs[n], &d, sizeof(d));
}

static inline unsigned long ftrace_regs_get_return_value(struct ftrace_regs *fregs)
{
	return regs_return_value(&fregs->regs);
}

static inline void ftrace_regs_set_return_value(struct ftrace_regs *fregs, unsigned long val)
{
	regs_set_return_value(&fregs->regs, val);
}

static inline double ftrace_regs_get_fp_return_value(struct ftrace_regs *fregs)
{
	return ftrace_regs_get_fp_argument(fregs, 0);
}

/*
 * Make the traced function return @retval to its caller at once, without
 * running its body (the kernel's override_function_with_return).  Needs
 * FTRACE_OPS_FL_IPMODIFY.
 */
void ftrace_override_function_with_return(struct ftrace_regs *fregs, unsigned long retval);

/* ---- recursion protection, per thread ---- */

/*
 * ftrace_test_recursion_trylock - refuse re-entry of a handler on this thread
 *
 * Returns a bit (>= 0) to pass to ftrace_test_recursion_unlock(), or -1 when
 * this thread is already inside a protected section (a handler that called a
 * traced function, or a signal handler that interrupted one).  Async-signal-
 * safe; costs no atomic operation.
 */
int ftrace_test_recursion_trylock(unsigned long ip, unsigned long parent_ip);
void ftrace_test_recursion_unlock(int bit);

#ifdef __cplusplus
}
#endif

#endif /* FHOOK_FTRACE_H */
