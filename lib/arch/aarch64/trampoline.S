/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * aarch64 trampolines: what a site's stub leads to, the return-hook
 * trampoline, the counted-redirect thunk and "just return".
 *
 * At a site the function has run "mov x9, x30" and "bl <stub>"; the stub
 * put its struct fhook_stub in x10 and branched here with "br x16".  So:
 * x9 is the function's return address, x30 the address past the site
 * (where the function goes on), sp the stack pointer of its entry, and
 * x0-x8 and q0-q7 its arguments.  The trampoline builds a struct
 * ftrace_regs (include/fhook/arch/aarch64/ptrace.h) on the stack, with
 * every general register and q0-q7 (unless nothing can read or change
 * them, the arguments are all a handler may want), and two frame records,
 * the function's (x29, x9) and its own, so that a backtrace from the
 * handler shows the function and its caller, as the kernel's
 * ftrace_caller does.  It calls the C dispatcher, then goes on where the
 * ip says with x30 the (maybe swapped) return address: "ret x16", which
 * BTI does not check, so the function's body needs no landing pad.
 */

#define FR_X(n)		((n) * 8)
#define FR_LR		(30 * 8)
#define FR_SP		(31 * 8)
#define FR_PC		(32 * 8)
#define FR_PSTATE	(33 * 8)
#define FR_FULL		(34 * 8)
#define FR_V		(36 * 8)
#define FR_SIZE		(FR_V + 8 * 16)
#define FR_REC1		FR_SIZE
#define FR_REC2		(FR_SIZE + 16)
#define FRAME		(FR_SIZE + 32)

	.macro save_gprs
	stp	x0, x1, [sp, #FR_X(0)]
	stp	x2, x3, [sp, #FR_X(2)]
	stp	x4, x5, [sp, #FR_X(4)]
	stp	x6, x7, [sp, #FR_X(6)]
	stp	x8, x9, [sp, #FR_X(8)]
	stp	x10, x11, [sp, #FR_X(10)]
	stp	x12, x13, [sp, #FR_X(12)]
	stp	x14, x15, [sp, #FR_X(14)]
	stp	x16, x17, [sp, #FR_X(16)]
	stp	x18, x19, [sp, #FR_X(18)]
	stp	x20, x21, [sp, #FR_X(20)]
	stp	x22, x23, [sp, #FR_X(22)]
	stp	x24, x25, [sp, #FR_X(24)]
	stp	x26, x27, [sp, #FR_X(26)]
	stp	x28, x29, [sp, #FR_X(28)]
	stp	q0, q1, [sp, #FR_V]
	stp	q2, q3, [sp, #FR_V + 32]
	stp	q4, q5, [sp, #FR_V + 64]
	stp	q6, q7, [sp, #FR_V + 96]
	.endm

	/* x0-x28 and q0-q7 as the handler left them; x29 the caller's */
	.macro restore_gprs
	ldp	q0, q1, [sp, #FR_V]
	ldp	q2, q3, [sp, #FR_V + 32]
	ldp	q4, q5, [sp, #FR_V + 64]
	ldp	q6, q7, [sp, #FR_V + 96]
	ldp	x0, x1, [sp, #FR_X(0)]
	ldp	x2, x3, [sp, #FR_X(2)]
	ldp	x4, x5, [sp, #FR_X(4)]
	ldp	x6, x7, [sp, #FR_X(6)]
	ldp	x8, x9, [sp, #FR_X(8)]
	ldp	x10, x11, [sp, #FR_X(10)]
	ldp	x12, x13, [sp, #FR_X(12)]
	ldp	x14, x15, [sp, #FR_X(14)]
	ldp	x16, x17, [sp, #FR_X(16)]
	ldp	x18, x19, [sp, #FR_X(18)]
	ldp	x20, x21, [sp, #FR_X(20)]
	ldp	x22, x23, [sp, #FR_X(22)]
	ldp	x24, x25, [sp, #FR_X(24)]
	ldp	x26, x27, [sp, #FR_X(26)]
	ldp	x28, x29, [sp, #FR_X(28)]
	.endm

	.text

/*
 * x10: the stub; x11: 1 for the full register set (FTRACE_OPS_FL_SAVE_REGS).
 *
 * The unwind information makes the trampoline the traced function's
 * callee: the "return address" is x30 (past the site), and the function's
 * own x30 is in x9, then in the frame.  A DWARF frame has one return
 * address column and x30 holds the other value, so the column is x16
 * (free at a site, and where "ret x16" goes at the end).  The frame is
 * marked a signal frame, so that unwinders look the function up by that
 * address itself, not by the address before it as for a call's: the
 * site is the last word before the function's own unwind information,
 * which -fpatchable-function-entry starts after the entry's pad.
 */
	.p2align 3
	.globl	fhook_a64_tramp_regs
	.hidden	fhook_a64_tramp_regs
	.type	fhook_a64_tramp_regs, %function
fhook_a64_tramp_regs:
	.cfi_startproc
	.cfi_signal_frame
	.cfi_return_column x16
	.cfi_register x16, x30
	.cfi_register x30, x9
	bti	c
	mov	x11, #1
	b	1f
	.cfi_endproc
	.size	fhook_a64_tramp_regs, .-fhook_a64_tramp_regs

	.p2align 3
	.globl	fhook_a64_tramp_args
	.hidden	fhook_a64_tramp_args
	.type	fhook_a64_tramp_args, %function
fhook_a64_tramp_args:
	.cfi_startproc
	.cfi_signal_frame
	.cfi_return_column x16
	.cfi_register x16, x30
	.cfi_register x30, x9
	bti	c
	mov	x11, #0
1:	sub	sp, sp, #FRAME
	.cfi_def_cfa_offset FRAME
	save_gprs
	.cfi_offset x29, FR_X(29) - FRAME
	str	x9, [sp, #FR_LR]
	.cfi_offset x30, FR_LR - FRAME
	add	x12, sp, #FRAME
	stp	x12, x30, [sp, #FR_SP]		/* sp at the entry, pc past the site */
	.cfi_offset x16, FR_PC - FRAME
	stp	xzr, x11, [sp, #FR_PSTATE]	/* pstate unknown; fhook_full */
	stp	x29, x9, [sp, #FR_REC1]		/* the function's frame record */
	add	x29, sp, #FR_REC1
	stp	x29, x30, [sp, #FR_REC2]	/* ours */
	add	x29, sp, #FR_REC2
	.cfi_def_cfa x29, FRAME - FR_REC2
	sub	x0, x30, #4			/* ip: the site */
	mov	x1, x9				/* parent_ip */
	mov	x2, x10				/* the stub */
	mov	x3, sp				/* fregs */
	adrp	x16, fhook_arch_dispatch
	ldr	x16, [x16, #:lo12:fhook_arch_dispatch]
	blr	x16
	.cfi_def_cfa sp, FRAME			/* x29 is about to be the function's */
	restore_gprs
	.cfi_same_value x29
	ldr	x30, [sp, #FR_LR]
	.cfi_same_value x30
	ldr	x16, [sp, #FR_PC]
	.cfi_same_value x16
	add	sp, sp, #FRAME
	.cfi_def_cfa_offset 0
	ret	x16
	.cfi_endproc
	.size	fhook_a64_tramp_args, .-fhook_a64_tramp_args

/*
 * A hooked return: the function returned to a stub of the shadow stack
 * ("ret" to it, so x30 holds it too), the stub put its own address in
 * x17.  x0-x7, x8 and q0-q7 may hold the return value; sp is the stack
 * pointer of the function's entry again.  The handler gives the real
 * return address back.
 *
 * To an unwinder the trampoline returns to the stub (x30, kept in the
 * frame), whose own unwind information (rethook.c) leads to the real
 * return address; once the handler gave that back, to it directly.
 */
	.p2align 3
	.globl	rethook_trampoline
	.hidden	rethook_trampoline
	.type	rethook_trampoline, %function
rethook_trampoline:
	.cfi_startproc
	bti	c
	sub	sp, sp, #FRAME
	.cfi_def_cfa_offset FRAME
	save_gprs
	.cfi_offset x29, FR_X(29) - FRAME
	str	x17, [sp, #FR_LR]
	.cfi_offset x30, FR_LR - FRAME		/* the stub (x30 is x17 here) */
	add	x12, sp, #FRAME
	stp	x12, x17, [sp, #FR_SP]		/* sp; pc: the stub */
	stp	xzr, xzr, [sp, #FR_PSTATE]
	stp	x29, x17, [sp, #FR_REC1]
	add	x29, sp, #FR_REC1
	mov	x0, x17
	mov	x1, sp
	adrp	x16, fhook_arch_rethook_handler
	ldr	x16, [x16, #:lo12:fhook_arch_rethook_handler]
	blr	x16
	mov	x30, x0				/* the real return address */
	.cfi_same_value x30
	restore_gprs
	.cfi_same_value x29
	add	sp, sp, #FRAME
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	rethook_trampoline, .-rethook_trampoline

/* ftrace_override_function_with_return(): x30 is the caller's again */
	.p2align 3
	.globl	fhook_just_return
	.hidden	fhook_just_return
	.type	fhook_just_return, %function
fhook_just_return:
	bti	c
	ret
	.size	fhook_just_return, .-fhook_just_return

/*
 * Counted redirects (lib/arch/arch.h): pop the thread's pending redirect,
 * uncount it and go to the target with every argument register intact.
 * At a function's entry x9-x15 are free.
 */
	.p2align 3
	.globl	fhook_redirect_thunk
	.hidden	fhook_redirect_thunk
	.type	fhook_redirect_thunk, %function
fhook_redirect_thunk:
	bti	c
	mrs	x9, tpidr_el0
	adrp	x10, :gottprel:fhook_redirect_tls
	ldr	x10, [x10, #:gottprel_lo12:fhook_redirect_tls]
	add	x9, x9, x10
	ldr	w10, [x9]
	sub	w10, w10, #1
	add	x11, x9, x10, lsl #4
	ldp	x12, x13, [x11, #8]		/* the target, inflight */
	str	w10, [x9]			/* entry popped */
2:	ldaxr	x14, [x13]			/* the last touch of the owner's memory */
	sub	x14, x14, #1
	stlxr	w15, x14, [x13]
	cbnz	w15, 2b
	mov	x16, x12
	br	x16
	.size	fhook_redirect_thunk, .-fhook_redirect_thunk

	.section .note.GNU-stack, "", %progbits
