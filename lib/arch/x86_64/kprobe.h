/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The x86-64 kprobe files' own declarations (kprobe.c, kprobe_insn.c,
 * kprobe_tramp.S).
 *
 * A slot's code, in memory mapped within +-2 GiB of the probed function:
 *
 *	hdr+0	the struct fhook_kprobe_slot (8 bytes)
 *	hdr+8	the trampoline's address (8 bytes)
 *	hdr+16	entry:	lea -128(%rsp), %rsp	; step over the red zone
 *			call *hdr+8(%rip)	; the handlers
 *			lea 128(%rsp), %rsp
 *	resume:		the relocated instructions
 *			jmp *back(%rip)
 *			the absolute addresses jumped through
 *
 * For a post_handler every way out of the copy of the one probed
 * instruction passes an int3 (as the kernel's kprobes do since they stopped
 * single-stepping with the trap flag): after an instruction that falls
 * through, before the far jump of a taken branch or a call; a ret, and an
 * indirect jmp or call, are emulated there (the latter two first push
 * their target, read through the same operand).
 *
 * The trampoline finds the slot from its return address:
 * *(ret - KPROBE_RET_TO_HDR).
 */
#ifndef FHOOK_ARCH_X86_64_KPROBE_H
#define FHOOK_ARCH_X86_64_KPROBE_H

#define KPROBE_HDR		16
#define KPROBE_PREFIX		19	/* entry to resume */

/* the kinds of a post_handler's exits */
#define KPROBE_EXIT_FALL	1	/* went on after the instruction, or branched: at ->ip */
#define KPROBE_EXIT_RET		2	/* a ret, to emulate */
#define KPROBE_EXIT_JMP_IND	3	/* jmp *: the target pushed below the red zone */
#define KPROBE_EXIT_CALL_IND	4	/* call *: the target pushed where the return goes */
#define KPROBE_RET_TO_HDR	(KPROBE_HDR + 5 + 6)
#define KPROBE_RED_ZONE		128
/* offsets in struct fhook_kprobe_slot, for the trampolines */
#define KPROBE_SLOT_ADDR	0
#define KPROBE_SLOT_COOKIE	8

#ifndef __ASSEMBLER__
#include <stddef.h>
#include "internal.h"

#define KPROBE_MAX_INSNS	32
#define KPROBE_MAX_ABS		24
#define KPROBE_CODE_MAX		496
/* a loop back into the first bytes: moved whole if it ends within this */
#define KPROBE_EXTEND_MAX	64

struct kprobe_reloc_req {
	unsigned long addr;		/* the probe */
	unsigned long start, size;	/* its function (@size 0: unknown) */
	const unsigned char *code;	/* the function's original bytes, and @pad more */
	unsigned int pad;		/* bytes after the function that no symbol holds */
	unsigned int min_len;		/* 5: a jump; 1: a trap's single instruction */
	unsigned int prefix_len;	/* bytes before the copy */
	unsigned long dest;		/* where code[0] of the result will be */
	bool post;			/* for a post_handler: int3s at the exits */
	/* @len bytes at @addr of the object (jump tables); false if not there */
	bool (*read)(void *ctx, unsigned long addr, void *buf, size_t len);
	void *ctx;
};

struct kprobe_reloc {
	unsigned char code[KPROBE_HDR + KPROBE_CODE_MAX];	/* room to put the header first */
	size_t len;
	unsigned int covered;		/* bytes of original instructions */
	unsigned int nr_exits;		/* a post_handler's exits */
	struct {
		unsigned int off;	/* of its int3 */
		unsigned char kind;
		unsigned short imm;
		unsigned long ip, resume;
	} exits[3];
	unsigned int ends[KPROBE_MAX_INSNS];	/* end of each instruction */
	unsigned int offs[KPROBE_MAX_INSNS];	/* where each one's copy begins in @code */
	unsigned int nr_insns;
};

/*
 * Relocate the instructions at req->addr covering req->min_len bytes into
 * @out.  0, -ENOSYS (no capstone), -ENOMEM, or -EILSEQ with @why saying
 * what refused them.
 */
int fhook_kprobe_relocate(const struct kprobe_reloc_req *req, struct kprobe_reloc *out,
			  char *why, size_t size) __arch_hidden;

/* kprobe_tramp.S */
extern char fhook_kprobe_tramp_entry[] __arch_hidden;
extern char fhook_kprobe_tramp_full[] __arch_hidden;
/* after the int3 by which the full trampoline sets every register (kprobe.c) */
extern char fhook_kprobe_setregs[] __arch_hidden;
extern unsigned long fhook_kprobe_xsave_size __arch_hidden;

/* what the trampolines call: the generic hook's hit(cookie, regs) */
extern int (*fhook_kprobe_hit_hook)(void *cookie, struct pt_regs *regs,
				    const void *vregs) __arch_hidden;

_Static_assert(offsetof(struct fhook_kprobe_slot, addr) == KPROBE_SLOT_ADDR &&
	       offsetof(struct fhook_kprobe_slot, cookie) == KPROBE_SLOT_COOKIE,
	       "the trampolines' slot offsets");

#endif
#endif
