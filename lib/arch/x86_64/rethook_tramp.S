/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rethook_trampoline: where a hooked function returns to (through its
 * stub, "jmp *8(stub)").
 *
 * On entry %rsp is the caller's stack pointer after the return, the slot
 * just below it (in the red zone, which signal delivery skips) still holds
 * the stub's address, and the live registers are the return values: %rax,
 * %rdx, %xmm0, %xmm1, and %st0/%st1 for long double.  Every other
 * caller-saved register is dead at a return, and the C handler keeps the
 * callee-saved ones.  We take the slot back as our return-address slot,
 * build a struct ftrace_regs on an aligned frame, let
 * the return-hook layer's handler put the real return address into the slot
 * and run the exit handler, restore the (possibly changed) return values
 * and return to the caller with "ret".
 *
 * CFI: the frame's CFA is the caller's %rsp and its return address is in
 * the slot; until the handler rewrote it, the slot holds the stub, and the
 * FDE registered for the stubs (rethook.c) yields the real address from
 * there.  So an unwinder started inside the exit handler, or by a signal
 * anywhere in here, finds the real caller.
 */

/* offsets in struct ftrace_regs, as in lib/arch/x86_64/trampoline.S */
#define RAX	80
#define RDX	96
#define RIP	128
#define RSP	152
#define FULL	168
#define XMM	192
#define FREGS_SIZE 320
#define X87	FREGS_SIZE		/* two 10-byte values, 16 apart */
#define X87TOP	(FREGS_SIZE + 32)
#define FRAME	(FREGS_SIZE + 48)

	.text
	.globl	rethook_trampoline
	.hidden	rethook_trampoline
	.type	rethook_trampoline, @function
	.p2align 4
rethook_trampoline:
	.cfi_startproc
	.cfi_def_cfa %rsp, 0
	.cfi_offset %rip, -8
	subq	$8, %rsp		/* the slot, holding the stub */
	.cfi_def_cfa_offset 8
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	subq	$FRAME, %rsp
	andq	$-16, %rsp
	movq	%rax, RAX(%rsp)
	movq	%rdx, RDX(%rsp)
	movaps	%xmm0, XMM+0*16(%rsp)
	movaps	%xmm1, XMM+1*16(%rsp)
	/*
	 * The x87 stack is empty at a return unless the function returns a
	 * long double (one value, TOP = 7) or a complex long double (two,
	 * TOP = 6); the handler may use the x87 unit only if it is empty.
	 */
	fnstsw	%ax
	shrl	$11, %eax
	andl	$7, %eax
	movl	%eax, X87TOP(%rsp)
	cmpl	$7, %eax
	je	1f
	cmpl	$6, %eax
	jne	2f
	fstpt	X87(%rsp)
	fstpt	X87+16(%rsp)
	jmp	2f
1:	fstpt	X87(%rsp)
2:
	leaq	16(%rbp), %rax		/* the caller's %rsp */
	movq	%rax, RSP(%rsp)
	movq	$0, FULL(%rsp)
	movq	8(%rbp), %rdi		/* the stub */
	movq	%rsp, %rsi
	call	*fhook_arch_rethook_handler(%rip)	/* the return-hook layer's handler */
	movl	X87TOP(%rsp), %eax
	cmpl	$7, %eax
	je	3f
	cmpl	$6, %eax
	jne	4f
	fldt	X87+16(%rsp)
3:	fldt	X87(%rsp)
4:
	movaps	XMM+0*16(%rsp), %xmm0
	movaps	XMM+1*16(%rsp), %xmm1
	movq	RAX(%rsp), %rax
	movq	RDX(%rsp), %rdx
	movq	%rbp, %rsp
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	.cfi_restore %rbp
	ret				/* to the real return address, now in the slot */
	.cfi_endproc
	.size	rethook_trampoline, .-rethook_trampoline

	.section .note.GNU-stack,"",@progbits
