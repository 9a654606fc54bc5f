/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fhook: the arch layer of dynamic ftrace (the kernel's ftrace_make_nop,
 * ftrace_make_call, ftrace_modify_call and ftrace_init_nop) for x86-64
 * user space.
 *
 * Every function reads the site, compares it with the bytes it expects and
 * writes only when they match.  Returns:
 *   0        success
 *   -EFAULT  the site could not be read
 *   -EINVAL  the site does not hold the expected bytes (nothing is written)
 *   -EPERM   the site could not be written
 * A failure also prints an ftrace-bug report naming the site as
 * symbol+0xoff/0xsize with the expected and the actual bytes.
 *
 * The write is done with the int3 protocol: int3 on the first byte, every
 * thread serialized, the tail written, serialized, the first byte written,
 * serialized.  A thread that meets the int3 meanwhile behaves as if it had
 * met the new instruction.  Callers are serialized by an internal mutex;
 * these functions may be called from any thread, never from a signal handler.
 */
#ifndef FHOOK_DYN_FTRACE_H
#define FHOOK_DYN_FTRACE_H

#ifdef __cplusplus
extern "C" {
#endif

#include <fhook/ftrace.h>	/* MCOUNT_INSN_SIZE, the arch's */

/*
 * struct dyn_ftrace - one patchable site (16 bytes, as the kernel's)
 * @ip:    address of the site's call (after the arch's entry instructions, if any)
 * @flags: reference count of ops (low 24 bits) and FTRACE_FL_* bits
 */
struct dyn_ftrace {
	unsigned long ip;
	unsigned long flags;
};

#define FTRACE_REF_MAX_SHIFT	24
#define FTRACE_REF_MAX		((1UL << FTRACE_REF_MAX_SHIFT) - 1)

enum {
	FTRACE_FL_ENABLED	= 1UL << 31,	/* the site calls a trampoline */
	FTRACE_FL_REGS		= 1UL << 30,	/* ... one that saves every register */
	FTRACE_FL_IPMODIFY	= 1UL << 28,	/* an IPMODIFY ops owns the site */
	FTRACE_FL_PAD6		= 1UL << 27,	/* a 6-byte site: nop5 + nop1 */
	FTRACE_FL_DISABLED	= 1UL << 25,	/* unusable: bytes were not a known pad */
	FTRACE_FL_MCOUNT	= 1UL << 24,	/* recorded in __mcount_loc */
};

int ftrace_make_nop(struct dyn_ftrace *rec, unsigned long addr);
int ftrace_make_call(struct dyn_ftrace *rec, unsigned long addr);
int ftrace_modify_call(struct dyn_ftrace *rec, unsigned long old_addr, unsigned long addr);

/*
 * ftrace_init_nop - turn a site as the compiler left it into one 5-byte nop
 *
 * Accepts five 1-byte nops (-fpatchable-function-entry=5), any 5-byte nop,
 * a call rel32 (-pg -mfentry) or a 6-byte call *__fentry__@GOTPCREL(%rip)
 * (PIE), which becomes a 5-byte and a 1-byte nop.  Already a nop: 0.
 */
int ftrace_init_nop(struct dyn_ftrace *rec);

/* Look up the record of the site at @ip; NULL if @ip is no site. */
struct dyn_ftrace *ftrace_lookup_rec(unsigned long ip);

#ifdef __cplusplus
}
#endif

#endif /* FHOOK_DYN_FTRACE_H */
