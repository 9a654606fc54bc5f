/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * x86-64: where a call's return address lives, for the return hooks
 * (lib/fprobe, lib/kprobes), and what a kretprobe keeps of the registers.
 * Part of the arch contract (lib/arch/arch.h).
 */
#ifndef FHOOK_ARCH_REGS_H
#define FHOOK_ARCH_REGS_H

#include <fhook/ftrace.h>

/*
 * The return address is a word on the stack (the slot), at the stack
 * pointer when the function is entered: a return hook writes its stub
 * there and an entry is known by that slot's address.  After the return
 * through a stub, the stack pointer is one word above the slot.
 */
#define FHOOK_RET_IN_SLOT	1

static inline unsigned long fhook_ret_key_at_return(unsigned long sp)
{
	return sp - sizeof(long);
}

/* The hooked return went through its stub: the slot gets the real address back. */
static inline void fhook_ret_slot_restore(unsigned long key, unsigned long ret)
{
	*(unsigned long *)key = ret;
}

/* Where the return address of the function entered with @fregs lives. */
static inline unsigned long *fhook_fregs_ret_ptr(struct ftrace_regs *fregs)
{
	return regs_return_address_ptr(&fregs->regs);
}

/*
 * The registers a function may clobber that carry no return value: what
 * a kretprobe's entry saw of them is given back to its exit handler, as
 * the kernel's kretprobe trampoline shows the registers at the return.
 */
struct fhook_regs_scratch {
	unsigned long cx, si, di, r8, r9, r10, r11;
};

static inline void fhook_regs_scratch_save(struct fhook_regs_scratch *sv,
					   const struct pt_regs *regs)
{
	*sv = (struct fhook_regs_scratch){
		.cx = regs->cx, .si = regs->si, .di = regs->di, .r8 = regs->r8, .r9 = regs->r9,
		.r10 = regs->r10, .r11 = regs->r11,
	};
}

static inline void fhook_regs_scratch_restore(struct pt_regs *regs,
					      const struct fhook_regs_scratch *sv)
{
	regs->cx = sv->cx;
	regs->si = sv->si;
	regs->di = sv->di;
	regs->r8 = sv->r8;
	regs->r9 = sv->r9;
	regs->r10 = sv->r10;
	regs->r11 = sv->r11;
}

/*
 * The names of struct pt_regs' words, in its order, as the kernel's
 * regs_query_register_offset() takes them: what %NAME fetches in an event.
 */
#define FHOOK_PT_REGS_NAMES \
	"r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", \
	"ax", "cx", "dx", "si", "di", "orig_ax", "ip", "cs", "flags", "sp", "ss"

/*
 * A struct returned in memory (the command's DWARF arguments,
 * lib/events/dwarf.c): its address is the first integer argument (%rdi).
 */
#define FHOOK_ABI_SRET_TAKES_ARG	1

#endif /* FHOOK_ARCH_REGS_H */
