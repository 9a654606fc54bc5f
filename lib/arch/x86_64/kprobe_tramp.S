/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a kprobe's detour calls (see kprobe.h for the detour): a whole
 * struct pt_regs on the stack, fhook_kprobe_detour_hit(slot, regs), then
 * every register as the handlers left it, and back into the detour, or
 * on at regs->ip when a pre_handler returned 1.
 *
 * Two flavours: at a function's entry only the argument registers among
 * the vector ones are live (xmm0-7: saved), as at a site; anywhere else
 * any may be, and the whole extended state is saved with xsave.
 *
 * On entry: (%rsp) = the return into the detour, 128 bytes of red zone
 * above it, then the probed code's own stack pointer.
 */
#include "kprobe.h"

#define PT_SIZE		(21 * 8)
#define PT_IP		(16 * 8)
#define PT_SP		(19 * 8)

	.text

.macro SAVE_REGS entry
	pushq	$0x2b			/* ss */
	pushq	%rsp			/* sp: the ss slot's address, made the code's below */
	pushfq
	pushq	$0x33			/* cs */
	pushq	$0			/* ip, set by the C side */
	pushq	$-1			/* orig_ax */
	pushq	%rdi
	pushq	%rsi
	pushq	%rdx
	pushq	%rcx
	pushq	%rax
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
	pushq	%rbx
	pushq	%rbp
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	.if !\entry
	cld				/* the ABI's direction flag, for C (clear at an entry) */
	.endif
	addq	$(16 + KPROBE_RED_ZONE), PT_SP(%rsp)	/* past the ss slot, the return, the red zone */
	movq	%rsp, %rbx			/* pt_regs, kept across the call */
.endm

/*
 * The hook: hit(slot->cookie, regs, vregs) with regs->ip = slot->addr + 1, as
 * the kernel shows an int3's; %eax: non-zero to go on at regs->ip.
 */
.macro CALL_HIT vregs
	leaq	\vregs, %rdx			/* xmm0-7 as the code had them */
	movq	PT_SIZE(%rbx), %rdi		/* the return into the detour */
	movq	-KPROBE_RET_TO_HDR(%rdi), %rdi	/* the slot */
	movq	KPROBE_SLOT_ADDR(%rdi), %rax
	incq	%rax
	movq	%rax, PT_IP(%rbx)
	movq	KPROBE_SLOT_COOKIE(%rdi), %rdi
	movq	%rbx, %rsi
	call	*fhook_kprobe_hit_hook(%rip)
.endm

/* the general registers of pt_regs, r15 first, back from the stack */
.macro POP_GPRS
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbp
	popq	%rbx
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rax
	popq	%rcx
	popq	%rdx
	popq	%rsi
	popq	%rdi
.endm

/*
 * Registers back, and out: to the detour, or to regs->ip.  At a
 * function's entry the flags are no live state (the ABI keeps none across
 * a call, and DF is clear): popfq, which is slow, is left out there.
 */
.macro RESTORE_AND_LEAVE flags
	movq	%rbx, %rsp
	testl	%eax, %eax
	jnz	1f
	POP_GPRS
	.if \flags
	addq	$24, %rsp			/* orig_ax, ip, cs */
	popfq
	leaq	16(%rsp), %rsp			/* sp, ss (lea: the flags stay as popped) */
	.else
	leaq	48(%rsp), %rsp			/* orig_ax, ip, cs, flags, sp, ss */
	.endif
	ret
1:	.if \flags
	/*
	 * Inside a function the red zone may be live: every register, the
	 * ip and the stack pointer are set at once by the SIGTRAP handler,
	 * from the pt_regs %rsp points at (the signal frame goes below the
	 * red zone).
	 */
	.globl	fhook_kprobe_setregs
	.hidden	fhook_kprobe_setregs
	int3
fhook_kprobe_setregs:
	ud2
	.else
	/*
	 * The new ip goes just below the probed code's stack pointer (the
	 * top of its red zone: nothing lives there at a function's entry),
	 * and a ret from there leaves the stack as the code had it.
	 */
	movq	PT_SP(%rsp), %rax
	movq	PT_IP(%rsp), %rcx
	movq	%rcx, -8(%rax)
	POP_GPRS
	addq	$24, %rsp
	popfq
	movq	(%rsp), %rsp			/* the code's own stack pointer */
	leaq	-8(%rsp), %rsp
	ret
	.endif
.endm

	.globl	fhook_kprobe_tramp_entry
	.hidden	fhook_kprobe_tramp_entry
	.type	fhook_kprobe_tramp_entry, @function
fhook_kprobe_tramp_entry:
	SAVE_REGS 1
	andq	$-16, %rsp
	subq	$128, %rsp
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	movdqa	%xmm\n, \n * 16(%rsp)
	.endr
	CALL_HIT (%rsp)
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	movdqa	\n * 16(%rsp), %xmm\n
	.endr
	RESTORE_AND_LEAVE 0
	.size	fhook_kprobe_tramp_entry, . - fhook_kprobe_tramp_entry

	.globl	fhook_kprobe_tramp_full
	.hidden	fhook_kprobe_tramp_full
	.type	fhook_kprobe_tramp_full, @function
fhook_kprobe_tramp_full:
	SAVE_REGS 0
	subq	fhook_kprobe_xsave_size(%rip), %rsp
	andq	$-64, %rsp
	/* xrstor refuses a header with reserved bytes set: start it at zero */
	xorl	%eax, %eax
	.irp	off, 512, 520, 528, 536, 544, 552, 560, 568
	movq	%rax, \off(%rsp)
	.endr
	movl	$-1, %eax
	movl	$-1, %edx
	xsave64	(%rsp)
	CALL_HIT 160(%rsp)			/* the legacy area's xmm0 */
	movl	%eax, %r12d
	movl	$-1, %eax
	movl	$-1, %edx
	xrstor64 (%rsp)
	movl	%r12d, %eax
	RESTORE_AND_LEAVE 1
	.size	fhook_kprobe_tramp_full, . - fhook_kprobe_tramp_full

	.data
	.globl	fhook_kprobe_xsave_size
	.hidden	fhook_kprobe_xsave_size
	.balign	8
fhook_kprobe_xsave_size:
	.quad	4096

	.section .note.GNU-stack, "", @progbits
