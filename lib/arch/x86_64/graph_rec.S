/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Graph records (arch/shadow.h): the entry of a probe whose events are
 * plain, written straight into the thread's ring with no handler, no
 * saved argument register and no frame of ftrace_regs.
 *
 * A stub's "jmp *tramp" lands here with %r11 = the stub's data slot,
 * (%rsp) = the function's body (site + 5) and 8(%rsp) = the caller's
 * return address.  We push the scratch registers we use (every argument
 * register, %rax and %r10 reach the function unchanged), count the
 * thread in the tasks word and take the recursion lock (a signal handler
 * that records meanwhile goes to C, which refuses it: the ring's head
 * and the shadow stack's top are ours until we are done), check that
 * everything is the common case, then push the shadow-stack entry of the
 * return (as the graph entry of trampoline.S does) and write the entry
 * record.  Anything else (disabled, nested, no region or no ring yet, a
 * full ring, another cpu, a long gap, a tail call from a hooked
 * function, a stale top entry) undoes the pushes and continues in the
 * ordinary graph trampoline, which takes the C path.
 *
 * The return side is GRAPH_RETURN_REC in rethook_tramp.S.
 */
#include "arch/shadow.h"

#define STUB_DATA	8
#define OPS_PRIVATE	16
#define SAVED		56		/* seven registers pushed */
#define BODY		(SAVED)		/* site + 5 */
#define SLOT		(SAVED + 8)	/* the return address */

	.text
	.globl	fhook_tramp_grec
	.hidden	fhook_tramp_grec
	.type	fhook_tramp_grec, @function
	.p2align 4
fhook_tramp_grec:
	.cfi_startproc
	pushq	%r11				/* the stub, for the way back */
	.cfi_adjust_cfa_offset 8
	pushq	%rax
	.cfi_adjust_cfa_offset 8
	pushq	%rcx
	.cfi_adjust_cfa_offset 8
	pushq	%rdx
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%r8
	.cfi_adjust_cfa_offset 8
	movq	STUB_DATA(%r11), %rcx
	testq	%rcx, %rcx
	jz	90f				/* unbound: the list function */
	movq	OPS_PRIVATE(%rcx), %rcx		/* the fgraph */
	testq	$FGRAPH_FL_REC, FGRAPH_FLAGS(%rcx)
	jz	90f
	movq	FGRAPH_FLAGS_WORD(%rcx), %rax
	movl	(%rax), %eax
	andl	FGRAPH_DISABLED(%rcx), %eax
	jnz	90f
	/* tasks: enter (the fgraph is read inside) */
	movq	fhook_tasks_state@gottpoff(%rip), %rdx
	movq	%fs:(%rdx), %rax
	testq	%rax, %rax
	jle	90f
	addq	$1, %rax
	movq	%rax, %fs:(%rdx)
	/* the recursion lock */
	movq	fhook_recursion_bits@gottpoff(%rip), %rdx
	cmpl	$0, %fs:(%rdx)
	jne	89f
	movl	$1, %fs:(%rdx)
	/* a tail call from a hooked function: C */
	movq	SLOT(%rsp), %rax
	subq	fhook_shadow_base(%rip), %rax
	cmpq	fhook_shadow_size(%rip), %rax
	jb	88f
	/* the writer: this recording's ring, room below the limit, the same cpu */
	movq	FGRAPH_REC_TLS(%rcx), %rdi
	movq	FGRAPH_REC_GLOBAL(%rcx), %r11
	movq	%fs:REC_W_GEN(%rdi), %rax
	cmpq	REC_G_GEN(%r11), %rax
	jne	88f
	movq	%fs:REC_W_HEAD(%rdi), %rax
	addq	$16, %rax
	cmpq	%fs:REC_W_LIMIT(%rdi), %rax
	ja	88f
	movq	REC_G_CPU(%r11), %rax
	testq	%rax, %rax
	jz	33f
	movl	%fs:(%rax), %eax
	cmpl	%fs:REC_W_LAST_CPU(%rdi), %eax
	jne	88f
	jmp	34f
33:	testq	$63, %fs:REC_W_EVENTS(%rdi)	/* no rseq: C looks every 64 events */
	jz	88f
34:
	/* the shadow stack, if the return is hooked */
	xorl	%esi, %esi			/* idx: 0 without one */
	testq	$FGRAPH_FL_EXIT, FGRAPH_FLAGS(%rcx)
	jz	30f
	movq	fhook_shadow_self@gottpoff(%rip), %rax
	movq	%fs:(%rax), %rax		/* the thread's header */
	testq	%rax, %rax
	jz	88f
	movq	(%rax), %rsi			/* top */
	leaq	-SHADOW_HDR_OFF(%rax), %r8	/* the region */
	testq	%rsi, %rsi
	jz	31f
	movq	%rsi, %rax
	shlq	$4, %rax
	leaq	SLOT(%rsp), %rdx
	cmpq	SHADOW_RET_OFF+SHADOW_R_SP(%r8,%rax), %rdx
	jae	88f				/* the top entry is no caller's */
31:	addq	$1, %rsi
	cmpq	$SHADOW_DEPTH, %rsi
	jae	88f
30:	/* the time: near the last record's */
	rdtsc
	shlq	$32, %rdx
	orq	%rdx, %rax
	subq	REC_G_CLOCK_BASE(%r11), %rax
	movq	%rax, %rdx
	subq	%fs:REC_W_LAST_TS(%rdi), %rdx
	shrq	$(REC_TS_BITS - 1), %rdx
	jnz	88f
	/* everything holds: the record ... */
	movq	%rax, %fs:REC_W_LAST_TS(%rdi)
	shlq	$(64 - REC_TS_BITS), %rax
	shrq	$(64 - REC_TS_BITS), %rax
	orq	FGRAPH_REC_ENTRY(%rcx), %rax	/* w0 */
	movq	%fs:REC_W_HEAD(%rdi), %rdx
	andq	REC_G_MASK(%r11), %rdx
	addq	%fs:REC_W_DATA(%rdi), %rdx	/* where it goes */
	movq	%rax, (%rdx)
	movq	BODY(%rsp), %rax
	subq	$5, %rax			/* the site */
	movq	%rsi, %r11
	shlq	$REC_TS_BITS, %r11
	orq	%r11, %rax			/* w1 */
	movq	%rax, 8(%rdx)
	movq	%fs:REC_W_HEAD(%rdi), %rax
	addq	$16, %rax
	movq	%rax, %fs:REC_W_HEAD(%rdi)
	movq	%fs:REC_W_EVENTS(%rdi), %rdx
	addq	$1, %rdx
	movq	%rdx, %fs:REC_W_EVENTS(%rdi)
	movq	%fs:REC_W_RING(%rdi), %r11
	movq	%rdx, REC_RING_EVENTS(%r11)
	movq	%rax, REC_RING_HEAD(%r11)	/* published */
	/* ... and the shadow-stack entry */
	testq	%rsi, %rsi
	jz	32f
	leaq	(%rsi,%rsi,2), %rax
	shlq	$4, %rax
	leaq	SHADOW_NODE_OFF(%r8,%rax), %rax	/* the node */
	movq	FGRAPH_RETHOOK(%rcx), %rdx
	movq	%rdx, SHADOW_N_RETHOOK(%rax)
	movq	BODY(%rsp), %rdx
	subq	$5, %rdx
	movq	%rdx, SHADOW_N_ENTRY_IP(%rax)
	movq	SLOT(%rsp), %rdx
	movq	%rdx, SHADOW_N_PARENT_IP(%rax)
	movq	%rdx, SHADOW_N_NEXT(%rax)
	movq	%rdx, SHADOW_N_RET_IP(%rax)
	movl	$0, SHADOW_N_UNWOUND(%rax)
	movq	%rsi, %rax
	shlq	$4, %rax
	movq	%rdx, SHADOW_RET_OFF+SHADOW_R_RET(%r8,%rax)
	leaq	SLOT(%rsp), %rdx
	movq	%rdx, SHADOW_RET_OFF+SHADOW_R_SP(%r8,%rax)
	movq	%rsi, SHADOW_HDR_OFF(%r8)	/* top: the entry is complete */
	addq	%r8, %rax			/* its stub */
	movq	%rax, SLOT(%rsp)
32:	movq	fhook_recursion_bits@gottpoff(%rip), %rdx
	movl	$0, %fs:(%rdx)
	movq	fhook_tasks_state@gottpoff(%rip), %rdx
	subq	$1, %fs:(%rdx)
	popq	%r8
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rcx
	.cfi_adjust_cfa_offset -8
	popq	%rax
	.cfi_adjust_cfa_offset -8
	leaq	8(%rsp), %rsp			/* the stub */
	.cfi_adjust_cfa_offset -8
	ret					/* into the function's body */
	.cfi_adjust_cfa_offset SAVED
88:	movq	fhook_recursion_bits@gottpoff(%rip), %rdx
	movl	$0, %fs:(%rdx)
89:	movq	fhook_tasks_state@gottpoff(%rip), %rdx
	subq	$1, %fs:(%rdx)
90:	/* the ordinary graph trampoline, as if the stub had jumped there */
	popq	%r8
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rcx
	.cfi_adjust_cfa_offset -8
	popq	%rax
	.cfi_adjust_cfa_offset -8
	popq	%r11
	.cfi_adjust_cfa_offset -8
	jmp	fhook_tramp_fgraph
	.cfi_endproc
	.size	fhook_tramp_grec, .-fhook_tramp_grec

	.section .note.GNU-stack,"",@progbits
