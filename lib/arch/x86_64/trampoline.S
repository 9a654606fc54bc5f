/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The two trampolines every stub jumps to.
 *
 * On entry a site's "call stub" has pushed the address after the site,
 * the caller's return address sits above it, and the stub has put its data
 * slot in %r11 (a scratch register at function entry).  We build a
 * struct ftrace_regs on an aligned frame, call the C dispatcher(ip,
 * parent_ip, stub, fregs), put back what the handler may have changed and
 * return to fregs->regs.ip: the function body, or wherever an IPMODIFY
 * handler pointed it.
 *
 * %rax (the vector count of a varargs call), %r10 (the static chain), every
 * argument register and xmm0-7 reach the function unchanged unless a
 * handler changed them on purpose.  Frame-pointer and CFI unwinding work
 * through the trampoline.
 */

/* offsets in struct ftrace_regs (checked by a static assertion in C) */
#define R15	0
#define R14	8
#define R13	16
#define R12	24
#define RBP	32
#define RBX	40
#define R11	48
#define R10	56
#define R9	64
#define R8	72
#define RAX	80
#define RCX	88
#define RDX	96
#define RSI	104
#define RDI	112
#define ORIG_RAX 120
#define RIP	128
#define CS	136
#define EFLAGS	144
#define RSP	152
#define SS	160
#define FULL	168
#define PAD	176
#define XMM	192
#define FREGS_SIZE 320

/* offsets in struct fhook_stub (checked in stubs.c) */
#define STUB_DATA	8
#define STUB_FUNC	16
#define STUB_CODE	24

	.text

.macro FRAME_ENTER
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	subq	$FREGS_SIZE, %rsp
	andq	$-16, %rsp		/* callers need not have kept the ABI's alignment */
.endm

.macro FRAME_LEAVE
	movq	%rbp, %rsp
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	ret
.endm

.macro SAVE_ARGS
	movq	%rdi, RDI(%rsp)
	movq	%rsi, RSI(%rsp)
	movq	%rdx, RDX(%rsp)
	movq	%rcx, RCX(%rsp)
	movq	%r8, R8(%rsp)
	movq	%r9, R9(%rsp)
	movq	%rax, RAX(%rsp)
	movq	%r10, R10(%rsp)
	movaps	%xmm0, XMM+0*16(%rsp)
	movaps	%xmm1, XMM+1*16(%rsp)
	movaps	%xmm2, XMM+2*16(%rsp)
	movaps	%xmm3, XMM+3*16(%rsp)
	movaps	%xmm4, XMM+4*16(%rsp)
	movaps	%xmm5, XMM+5*16(%rsp)
	movaps	%xmm6, XMM+6*16(%rsp)
	movaps	%xmm7, XMM+7*16(%rsp)
	movq	8(%rbp), %rdi		/* site + 5 */
	movq	%rdi, RIP(%rsp)
	leaq	16(%rbp), %rsi		/* sp at function entry */
	movq	%rsi, RSP(%rsp)
	subq	$5, %rdi		/* ip: the site */
	movq	16(%rbp), %rsi		/* parent_ip */
.endm

/*
 * The C dispatcher generic code handed over (hooks->dispatch):
 * dispatch(ip, parent_ip, stub, fregs)
 */
.macro DISPATCH_C
	movq	%r11, %rdx		/* the stub */
	movq	%rsp, %rcx		/* fregs */
	call	*fhook_arch_dispatch(%rip)
.endm

/*
 * The fast dispatch, for a stub with one handler: urcu-bp's read lock
 * inlined (the form it takes when the writer has sys_membarrier, which is
 * the only case the fast trampolines are used in), the "does the site still
 * call this stub" check, and a direct call of the handler.  Anything
 * unusual (a thread not yet known to urcu, a nested section, a site that
 * changed, a stub with no data) goes to the dispatcher in C, which decides
 * again under its own read lock.
 * In: %rdi = ip, %rsi = parent_ip, %r11 = stub, %rsp = fregs.
 */
.macro DISPATCH_FAST
	movq	urcu_bp_reader@gottpoff(%rip), %rax
	movq	%fs:(%rax), %rax
	testq	%rax, %rax
	jz	2f
	movq	(%rax), %rdx
	testl	%edx, %edx		/* nested: the C path counts nesting */
	jnz	2f
	movq	urcu_bp_gp@GOTPCREL(%rip), %rdx
	movq	(%rdx), %rdx
	movq	%rdx, (%rax)		/* read lock: our counter takes the current phase */
	movq	%rax, PAD(%rsp)
	movq	STUB_DATA(%r11), %rdx
	testq	%rdx, %rdx
	jz	1f
	cmpb	$0xe8, (%rdi)
	jne	1f
	movslq	1(%rdi), %rcx
	leaq	5(%rdi,%rcx), %rcx
	cmpq	%rcx, STUB_CODE(%r11)
	jne	1f
	movq	%rsp, %rcx
	call	*STUB_FUNC(%r11)
	movq	PAD(%rsp), %rax
	subq	$1, (%rax)		/* read unlock */
3:
.endm

/* The slow ends of DISPATCH_FAST, placed after the trampoline's ret. */
.macro DISPATCH_FAST_SLOW
1:	subq	$1, (%rax)		/* the site changed under us: let C decide */
2:	DISPATCH_C
	jmp	3b
.endm

.macro RESTORE_ARGS
	movq	RIP(%rsp), %rax
	movq	%rax, 8(%rbp)		/* where we return to */
	movaps	XMM+0*16(%rsp), %xmm0
	movaps	XMM+1*16(%rsp), %xmm1
	movaps	XMM+2*16(%rsp), %xmm2
	movaps	XMM+3*16(%rsp), %xmm3
	movaps	XMM+4*16(%rsp), %xmm4
	movaps	XMM+5*16(%rsp), %xmm5
	movaps	XMM+6*16(%rsp), %xmm6
	movaps	XMM+7*16(%rsp), %xmm7
	movq	RDI(%rsp), %rdi
	movq	RSI(%rsp), %rsi
	movq	RDX(%rsp), %rdx
	movq	RCX(%rsp), %rcx
	movq	R8(%rsp), %r8
	movq	R9(%rsp), %r9
	movq	R10(%rsp), %r10
	movq	RAX(%rsp), %rax
.endm

/* The rest of pt_regs, for handlers that want every register. */
.macro SAVE_REGS_EXTRA
	movq	%r15, R15(%rsp)
	movq	%r14, R14(%rsp)
	movq	%r13, R13(%rsp)
	movq	%r12, R12(%rsp)
	movq	%rbx, RBX(%rsp)
	movq	$0, R11(%rsp)		/* scratch at entry; the stub used it */
	movq	$-1, ORIG_RAX(%rsp)
	movq	$0, CS(%rsp)
	movq	$0, SS(%rsp)
	movq	(%rbp), %r12		/* the function's %rbp */
	movq	%r12, RBP(%rsp)
	pushfq
	popq	%r12
	movq	%r12, EFLAGS(%rsp)
.endm

.macro RESTORE_REGS_EXTRA
	movq	RBP(%rsp), %r12
	movq	%r12, (%rbp)		/* a handler may change %rbp */
	movq	R15(%rsp), %r15
	movq	R14(%rsp), %r14
	movq	R13(%rsp), %r13
	movq	R12(%rsp), %r12
	movq	RBX(%rsp), %rbx
.endm

/*
 * One trampoline: @full saves every register (SAVE_REGS ops, the list
 * stub), @fast inlines the dispatch (see DISPATCH_FAST).
 */
.macro TRAMPOLINE name, full, fast
	.globl	\name
	.hidden	\name
	.type	\name, @function
	.p2align 4
\name:
	.cfi_startproc
	FRAME_ENTER
	movq	$\full, FULL(%rsp)
	.if \full
	SAVE_REGS_EXTRA
	.endif
	SAVE_ARGS
	.if \fast
	DISPATCH_FAST
	.else
	DISPATCH_C
	.endif
	RESTORE_ARGS
	.if \full
	RESTORE_REGS_EXTRA
	.endif
	.if \fast
	.cfi_remember_state
	FRAME_LEAVE
	.cfi_restore_state
	DISPATCH_FAST_SLOW
	.else
	FRAME_LEAVE
	.endif
	.cfi_endproc
	.size	\name, .-\name
.endm

	TRAMPOLINE fhook_tramp_args, 0, 0
	TRAMPOLINE fhook_tramp_args_fast, 0, 1
	TRAMPOLINE fhook_tramp_regs, 1, 0
	TRAMPOLINE fhook_tramp_regs_fast, 1, 1

/*
 * Where ftrace_override_function_with_return() points the ip: the stack is
 * as it was at the traced function's entry, so this returns to its caller
 * with the %rax the handler chose.
 */
	.globl	fhook_just_return
	.hidden	fhook_just_return
	.type	fhook_just_return, @function
	.p2align 4
fhook_just_return:
	.cfi_startproc
	ret
	.cfi_endproc
	.size	fhook_just_return, .-fhook_just_return

	.section .note.GNU-stack,"",@progbits
