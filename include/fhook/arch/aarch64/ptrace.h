/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * aarch64's register state at a site, and the kernel's accessors of it.
 * Included by <fhook/ftrace.h>; not on its own.
 */
#ifndef FHOOK_ARCH_AARCH64_PTRACE_H
#define FHOOK_ARCH_AARCH64_PTRACE_H

/*
 * Register state at a function's patchable site, in the kernel's arm64
 * user_pt_regs order.  At a site, regs[30] is the function's return
 * address (the site's "mov x9, x30" kept it), pc where the function goes
 * on (past the site's "bl"), sp the stack pointer of its entry.  Without
 * FTRACE_OPS_FL_SAVE_REGS only x0-x8, fp, lr, sp and pc are valid (the
 * kernel's ftrace_regs); see ftrace_get_regs().
 */
struct pt_regs {
	unsigned long regs[31];
	unsigned long sp;
	unsigned long pc;
	unsigned long pstate;
};

/*
 * What a handler sees.  Treat it as opaque and use the accessors: they are
 * the kernel's names and are the only stable interface.
 */
struct ftrace_regs {
	struct pt_regs regs;
	unsigned long fhook_full;	/* non-zero when every field of regs is valid */
	unsigned long fhook_pad;
	unsigned char fhook_vregs[8][16] __attribute__((aligned(16)));	/* q0-q7 */
};

/* a site's call: "bl" */
#define MCOUNT_INSN_SIZE	4

/* integer arguments in registers: x0-x7 (x8 holds the indirect result's address) */
#define FHOOK_NR_REG_ARGS	8

static inline unsigned long instruction_pointer(const struct pt_regs *regs)
{
	return regs->pc;
}

static inline void instruction_pointer_set(struct pt_regs *regs, unsigned long val)
{
	regs->pc = val;
}

static inline unsigned long user_stack_pointer(const struct pt_regs *regs)
{
	return regs->sp;
}

static inline unsigned long regs_return_value(const struct pt_regs *regs)
{
	return regs->regs[0];
}

static inline void regs_set_return_value(struct pt_regs *regs, unsigned long val)
{
	regs->regs[0] = val;
}

/* Integer argument @n at a function's first instruction (0 past the registers). */
static inline unsigned long regs_get_kernel_argument(const struct pt_regs *regs, unsigned int n)
{
	return n < FHOOK_NR_REG_ARGS ? regs->regs[n] : 0;
}

static inline void regs_set_kernel_argument(struct pt_regs *regs, unsigned int n,
					    unsigned long val)
{
	if (n < FHOOK_NR_REG_ARGS)
		regs->regs[n] = val;
}

/*
 * At a function's first instruction: where its return address is (the
 * link register), and where its stack arguments start (at the stack
 * pointer: no return address is pushed).
 */
static inline unsigned long *regs_return_address_ptr(struct pt_regs *regs)
{
	return &regs->regs[30];
}

static inline unsigned long *regs_stack_args(const struct pt_regs *regs)
{
	return (unsigned long *)regs->sp;
}

/*
 * Make a function stopped at its first instruction return @val to its
 * caller at once (a kprobe's "return now").
 */
static inline void regs_return_now(struct pt_regs *regs, unsigned long val)
{
	regs->regs[0] = val;
	regs->pc = regs->regs[30];
}

#endif /* FHOOK_ARCH_AARCH64_PTRACE_H */
