/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * x86-64's register state at a site, and the kernel's accessors of it.
 * Included by <fhook/ftrace.h>; not on its own.
 */
#ifndef FHOOK_ARCH_X86_64_PTRACE_H
#define FHOOK_ARCH_X86_64_PTRACE_H

/*
 * Register state at a function's patchable site, in the kernel's x86-64
 * pt_regs order.  Only with FTRACE_OPS_FL_SAVE_REGS are the callee-saved
 * registers and flags valid; see ftrace_get_regs().
 */
struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx;
	unsigned long r11, r10, r9, r8, ax, cx, dx, si, di;
	unsigned long orig_ax;
	unsigned long ip, cs, flags, sp, ss;
};

/*
 * What a handler sees.  Treat it as opaque and use the accessors: they are
 * the kernel's names and are the only stable interface.
 */
struct ftrace_regs {
	struct pt_regs regs;
	unsigned long fhook_full;	/* non-zero when every field of regs is valid */
	unsigned long fhook_pad;
	unsigned char fhook_vregs[8][16] __attribute__((aligned(16)));	/* xmm0-7 */
};

/* a site's call: "call rel32" */
#define MCOUNT_INSN_SIZE	5

/* integer arguments in registers: rdi, rsi, rdx, rcx, r8, r9 */
#define FHOOK_NR_REG_ARGS	6

static inline unsigned long instruction_pointer(const struct pt_regs *regs)
{
	return regs->ip;
}

static inline void instruction_pointer_set(struct pt_regs *regs, unsigned long val)
{
	regs->ip = val;
}

static inline unsigned long user_stack_pointer(const struct pt_regs *regs)
{
	return regs->sp;
}

static inline unsigned long regs_return_value(const struct pt_regs *regs)
{
	return regs->ax;
}

static inline void regs_set_return_value(struct pt_regs *regs, unsigned long val)
{
	regs->ax = val;
}

/* Integer argument @n at a function's first instruction (0 past the registers). */
static inline unsigned long regs_get_kernel_argument(const struct pt_regs *regs, unsigned int n)
{
	switch (n) {
	case 0: return regs->di;
	case 1: return regs->si;
	case 2: return regs->dx;
	case 3: return regs->cx;
	case 4: return regs->r8;
	case 5: return regs->r9;
	}
	return 0;
}

static inline void regs_set_kernel_argument(struct pt_regs *regs, unsigned int n,
					    unsigned long val)
{
	switch (n) {
	case 0: regs->di = val; break;
	case 1: regs->si = val; break;
	case 2: regs->dx = val; break;
	case 3: regs->cx = val; break;
	case 4: regs->r8 = val; break;
	case 5: regs->r9 = val; break;
	}
}

/*
 * At a function's first instruction: where its return address is (the
 * word at the stack pointer), and the stack address of its stack
 * arguments (the first one past the registers is @regs_stack_args[0]).
 */
static inline unsigned long *regs_return_address_ptr(struct pt_regs *regs)
{
	return (unsigned long *)regs->sp;
}

static inline unsigned long *regs_stack_args(const struct pt_regs *regs)
{
	return (unsigned long *)regs->sp + 1;
}

/*
 * Make a function stopped at its first instruction return @val to its
 * caller at once (a kprobe's "return now").
 */
static inline void regs_return_now(struct pt_regs *regs, unsigned long val)
{
	regs->ax = val;
	regs->ip = *(unsigned long *)regs->sp;
	regs->sp += sizeof(long);
}

/* The raw 16 bytes of xmm@n (x86-64's name of ftrace_regs_get_vector()). */
#define ftrace_regs_get_xmm(fregs, n)	ftrace_regs_get_vector(fregs, n)

#endif /* FHOOK_ARCH_X86_64_PTRACE_H */
