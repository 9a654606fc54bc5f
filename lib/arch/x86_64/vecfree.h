/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Does a function leave the vector registers alone?  The decision, on
 * bytes from wherever they are: the process's text when a handler is
 * registered (vecscan.c), or an object the assembler just wrote
 * (cli/as_vecproof.c), whose proof the library then checks (vecnote.h).
 */
#ifndef FHOOK_ARCH_X86_64_VECFREE_H
#define FHOOK_ARCH_X86_64_VECFREE_H

#include <stdbool.h>
#include <stddef.h>

#include "cs.h"

#define VECFREE_INSNS		256	/* decoded per function at most */
#define VECFREE_BRANCHES	32	/* direct branch targets followed */
#define VECFREE_MAX_BYTES	4096	/* from the entry, when scanned in a process */

/* Where the bytes come from. */
struct fhook_vecfree_src {
	/* Copy up to @len bytes at @addr to @buf; how many could be (0: none). */
	size_t (*read)(void *ctx, unsigned long addr, void *buf, size_t len);
	/* May @insn be taken as decoded?  NULL: yes (build time: no relocated branch). */
	bool (*insn_ok)(void *ctx, const cs_insn *insn);
	/* Branch targets must be in [lo, hi); hi 0: anywhere. */
	unsigned long lo, hi;
	void *ctx;
};

/*
 * A handler's fregs is a struct ftrace_regs of VECFREE_FREGS_SLOTS words.
 * What of it a proven handler reads, as the words [lo, hi) that its
 * loads through the %rcx it came with touch: VECFREE_FREGS(lo, hi), 0
 * for none.
 */
#define VECFREE_FREGS_SLOTS	40
#define VECFREE_FREGS(lo, hi)	((unsigned int)(lo) | (unsigned int)(hi) << 8)
#define VECFREE_FREGS_LO(f)	((f) & 0xff)
#define VECFREE_FREGS_HI(f)	(((f) >> 8) & 0xff)
/* the words it loads, without the bits below */
#define VECFREE_FREGS_LOADS(f)	((f) & 0xffff)
/*
 * It stores to its fregs' ip (an 8-byte mov to pt_regs.ip through the
 * %rcx it came with, and no other store through it): an IPMODIFY
 * handler's ftrace_regs_set_instruction_pointer().  Only then, what of
 * %rax, %r8, %r9 and %r10 it may change (VECFREE_CLOB_*), so that a
 * trampoline made for it saves only those (and the four it passes its
 * arguments in); notes of the functions that store nothing stay as
 * they were.
 */
#define VECFREE_FREGS_STORES_IP	(1u << 16)
#define VECFREE_CLOB_SHIFT	17
#define VECFREE_CLOB_RAX	(1u << 17)
#define VECFREE_CLOB_R8		(1u << 18)
#define VECFREE_CLOB_R9		(1u << 19)
#define VECFREE_CLOB_R10	(1u << 20)
#define VECFREE_FREGS_BITS	21	/* bits the value may have */

/*
 * True when every instruction reachable from @func, following direct
 * branches, names no vector, MMX, x87 or mask register, belongs to no
 * extension that works on them, uses the %rcx it came with (its fregs)
 * only as the base of loads within a struct ftrace_regs, keeps to its own
 * stack frame and stays in view (no call, indirect branch or system
 * call).  False too when it cannot be decoded (no libcapstone, past the
 * limits above).  When true: @end, where the last byte decoded ends;
 * @fregs, what of its fregs it reads (VECFREE_FREGS()), and whether it
 * stores its ip (VECFREE_FREGS_STORES_IP, with the VECFREE_CLOB_* bits).
 *
 * The trampolines that save no vector register give a proven handler an
 * fregs whose vector part is not filled in, and the frameless fprobe
 * ones only the words they pushed, with %rsp not aligned to 16: whoever
 * relaxes this predicate (stores through fregs, calls) must give them
 * back the frame and the alignment.
 */
bool fhook_vec_free(unsigned long func, const struct fhook_vecfree_src *src,
		    unsigned long *end, unsigned int *fregs) __arch_hidden;

/*
 * Does @insn overwrite all of its first operand (when that is a 32- or
 * 64-bit register) whatever it held: a plain write, not a conditional
 * move, not a narrower register whose upper bits stay?  (livein.c too)
 */
bool fhook_insn_writes_whole(const cs_insn *insn) __arch_hidden;
/* "xor %eax, %eax" and the like: the register written, nothing read */
bool fhook_insn_zeroes(const cs_insn *insn) __arch_hidden;

/* Is @insn a jump or a return (decoded with details)? */
bool fhook_insn_is_branch(const cs_insn *insn) __arch_hidden;

#endif
