/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * aarch64: where a call's return address lives, for the return hooks
 * (lib/fprobe, lib/kprobes), and what a kretprobe keeps of the registers.
 * Part of the arch contract (lib/arch/arch.h).
 */
#ifndef FHOOK_ARCH_REGS_H
#define FHOOK_ARCH_REGS_H

#include <fhook/ftrace.h>

/*
 * The return address is in the link register at a function's entry: a
 * return hook swaps the saved x30 of the trampoline's frame (before the
 * function's own paciasp signs it, so no signed address is ever
 * changed).  No stack slot holds it that fhook could read or restore; an
 * entry is known by the stack pointer of the function's entry, which is
 * the stack pointer again when it returns through the stub.
 */
#define FHOOK_RET_IN_SLOT	0

static inline unsigned long fhook_ret_key_at_return(unsigned long sp)
{
	return sp;
}

static inline void fhook_ret_slot_restore(unsigned long key, unsigned long ret)
{
	(void)key;
	(void)ret;
}

static inline unsigned long *fhook_fregs_ret_ptr(struct ftrace_regs *fregs)
{
	return regs_return_address_ptr(&fregs->regs);
}

/*
 * The argument registers that carry no return value (x2-x8): what a
 * kretprobe's entry saw of them is given back to its exit handler.
 */
struct fhook_regs_scratch {
	unsigned long x[7];
};

static inline void fhook_regs_scratch_save(struct fhook_regs_scratch *sv,
					   const struct pt_regs *regs)
{
	__builtin_memcpy(sv->x, &regs->regs[2], sizeof(sv->x));
}

static inline void fhook_regs_scratch_restore(struct pt_regs *regs,
					      const struct fhook_regs_scratch *sv)
{
	__builtin_memcpy(&regs->regs[2], sv->x, sizeof(sv->x));
}

/*
 * The names of struct pt_regs' words, in its order, as the kernel's
 * regs_query_register_offset() takes them: what %NAME fetches in an event.
 */
#define FHOOK_PT_REGS_NAMES \
	"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", \
	"x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", \
	"x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29", "x30", \
	"sp", "pc", "pstate"

/*
 * A struct returned in memory (the command's DWARF arguments,
 * lib/events/dwarf.c): its address is in x8, which carries no argument.
 */
#define FHOOK_ABI_SRET_TAKES_ARG	0

#endif /* FHOOK_ARCH_REGS_H */
