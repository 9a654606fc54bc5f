/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Graph records (arch/shadow.h): the entry of a probe whose events are
 * plain, written straight into the thread's ring with no handler, no
 * saved argument register and no frame of ftrace_regs.
 *
 * A stub's "jmp *tramp" lands here with %r11 = the stub's data slot,
 * (%rsp) = the function's body (site + 5) and 8(%rsp) = the caller's
 * return address.  We keep the scratch registers we use (every argument
 * register, %rax and %r10 reach the function unchanged), enter a tasks
 * section with the recursion lock (a signal handler that records
 * meanwhile goes to C, which refuses it: the ring's head and the shadow
 * stack's top are ours until we are done), check that
 * everything is the common case, then push the shadow-stack entry of the
 * return (as the graph entry of trampoline.S does) and write the entry
 * record.  Anything else (disabled, nested, no region or no ring yet, a
 * full ring, another cpu, a long gap, a tail call from a hooked
 * function, a stale top entry) restores the registers and continues in the
 * ordinary graph trampoline, which takes the C path.
 *
 * The return side is rethook_rec_trampoline in rethook_tramp.S, where the
 * entry's stub (SHADOW_REC_STUB) leads.
 */
#include "graph.h"

#define BODY		0		/* site + 5 */
#define SLOT		8		/* the return address */

/*
 * The scratch registers are kept below %rsp, in the red zone: nothing of
 * the caller's is live there across its call, signal delivery skips it,
 * and the function's own use of it begins after we return to its body.
 * So the CFA stays %rsp + 8 throughout.
 */
#define SAVE_R11	-8
#define SAVE_RAX	-16
#define SAVE_RCX	-24
#define SAVE_RDX	-32
#define SAVE_RDI	-40
#define SAVE_R8		-48

.macro SCRATCH_RESTORE
	movq	SAVE_RAX(%rsp), %rax
	movq	SAVE_RCX(%rsp), %rcx
	movq	SAVE_RDX(%rsp), %rdx
	movq	SAVE_RDI(%rsp), %rdi
	movq	SAVE_R8(%rsp), %r8
.endm

/*
 * The entry of a probe that hooks returns (@exit 1: the shadow-stack
 * entry and the record's slot) or not (0).  Which one a stub jumps to is
 * fixed when it is bound (FHOOK_TRAMP_GRAPH_EXIT): a probe hooks returns
 * or not for its whole life.
 */
.macro GRAPH_REC_ENTRY exit
	.cfi_startproc
	movq	%r11, SAVE_R11(%rsp)		/* the stub, for the way back */
	movq	%rax, SAVE_RAX(%rsp)
	movq	%rcx, SAVE_RCX(%rsp)
	movq	%rdx, SAVE_RDX(%rsp)
	movq	%rdi, SAVE_RDI(%rsp)
	movq	%r8, SAVE_R8(%rsp)
	/* first: the ops and its fgraph are read inside (an unregister waits) */
	TLS_WORDS %rdx
	FAST_ENTER %rdx, %rax, 90f
	/* the fgraph the stub is bound for, or one of no kind (struct fhook_stub) */
	movq	STUB_GREC(%r11), %rcx
	KIND_DISABLED %rcx, FGRAPH_TRAMP_REC(\exit), %rax, 89f	/* (or not of this kind) */
	/* a tail call from a hooked function: C */
	movq	SLOT(%rsp), %rax
	subq	fhook_shadow_base(%rip), %rax
	cmpq	fhook_shadow_size(%rip), %rax
	jb	89f
	REC_LIVE %rcx, %rdi, %rax, %eax, 89f
.if \exit
	leaq	SLOT(%rsp), %rax
	SHADOW_NEXT %r8, %r11, %rax, 89f, %rdx
	/* its rethook, which begins with the fgraph (the entry is not live before its top) */
	movq	%rcx, NODE(SHADOW_N_RETHOOK)(%r11)
.endif
	movzwl	FGRAPH_REC_ENTRY+6(%rcx), %edx	/* the event's id */
	REC_ROOM %rdi, %rcx, 89f
	/* everything but the time holds: the record ... */
	movw	%dx, 6(%rcx)
	REC_TIME %rdi, %rcx, 89f
	movq	BODY(%rsp), %rax
	subq	$5, %rax			/* the site */
.if \exit
	movq	%rax, NODE(SHADOW_N_ENTRY_IP)(%r11)	/* (no one reads entry_parent_ip) */
.endif
	movq	%rax, 8(%rcx)
.if \exit
	STUB_INDEX %r11, %rax			/* (%rsi is never ours: not kept) */
	movw	%ax, 14(%rcx)			/* | idx << 48 (a site is below 2^47) */
.endif
	REC_PUBLISH %rdi, %rcx
.if \exit
	/* ... and the shadow-stack entry */
	SHADOW_HOOK %r11, %r8, SLOT(%rsp), %rdx, SHADOW_REC_STUB
.endif
	FAST_LEAVE %rdx
	SCRATCH_RESTORE
	ret					/* into the function's body */
89:	FAST_LEAVE %rdx
90:	/* the ordinary graph trampoline, as if the stub had jumped there */
	SCRATCH_RESTORE
	movq	SAVE_R11(%rsp), %r11
	jmp	fhook_tramp_fgraph
	.cfi_endproc
.endm

/*
 * The template of the copies (gen.c) a recording's stubs go to when they
 * can be made: the entry above with the thread's block, the writer (its
 * offset from the thread pointer is the same in every thread and for
 * every probe of the recording) and the cpu's word as %fs:imm32, the
 * recording's switch read rip-relative from the copy, the shadow stack's
 * reservation from the page after.  That frees the registers which held
 * them: %rdi and %r8 are not kept, and without a return hook neither is
 * %rcx.  The fgraph takes %r11 (kept only for the way back to C), the
 * record's position takes it after the id; the thread's header is read
 * again rather than kept.  Anything else goes to the ordinary graph
 * trampoline (word GEN_W_FGRAPH), as from the entry above.
 */
.macro GRAPH_REC_GEN exit
	.cfi_startproc
	movq	%r11, SAVE_R11(%rsp)		/* the stub, for the way back */
	movq	%rax, SAVE_RAX(%rsp)
.if \exit
	movq	%rcx, SAVE_RCX(%rsp)
.endif
	movq	%rdx, SAVE_RDX(%rsp)
	FAST_ENTER gen, %rax, 90f
	movq	STUB_GREC(%r11), %r11
	KIND_DISABLED %r11, FGRAPH_TRAMP_REC(\exit), %rax, 89f
	/* a tail call from a hooked function: C */
	movq	SLOT(%rsp), %rax
	subq	0x7ffffff0(%rip), %rax
	GEN_RELOC GEN_WORD, 4, GEN_W_BASE
	cmpq	0x7ffffff0(%rip), %rax
	GEN_RELOC GEN_WORD, 4, GEN_W_SIZE
	jb	89f
	REC_LIVE_GEN %rax, %eax, 89f
.if \exit
	movq	%fs:0x7ffffff0, %rcx		/* the thread's header */
	GEN_RELOC GEN_TLS, 4, FHOOK_TLS_SHADOW
	movq	(%rcx), %rcx			/* SHADOW_NEXT, its top entry's stub first */
	leaq	SLOT(%rsp), %rax
	cmpq	NODE(SHADOW_N_SP)(%rcx), %rax
	jae	89f
	addq	$SHADOW_LINE, %rcx
	testq	$SHADOW_NODE_OFF, %rcx
	jnz	89f
	movq	%r11, NODE(SHADOW_N_RETHOOK)(%rcx)
.endif
	movzwl	FGRAPH_REC_ENTRY+6(%r11), %edx	/* the event's id */
	movq	%fs:0x7ffffff0, %r11		/* REC_ROOM */
	GEN_RELOC GEN_REC, 4, REC_W_WPTR
	cmpq	%fs:0x7ffffff0, %r11
	GEN_RELOC GEN_REC, 4, REC_W_WLIM
	jae	89f
	movw	%dx, 6(%r11)
	rdtsc					/* REC_TIME */
	cmpl	%fs:0x7ffffff0, %edx
	GEN_RELOC GEN_REC, 4, REC_W_LAST_TS+4
	jne	89f
	movl	%eax, (%r11)
	movw	%dx, 4(%r11)
	movq	BODY(%rsp), %rax
	subq	$5, %rax			/* the site */
.if \exit
	movq	%rax, NODE(SHADOW_N_ENTRY_IP)(%rcx)
	movq	%rcx, %rdx			/* | idx << 48: the line's bits, the region's shifted out */
	shlq	$48 - SHADOW_LINE_SHIFT, %rdx
	orq	%rdx, %rax
.endif
	movq	%rax, 8(%r11)
	addq	$16, %fs:0x7ffffff0		/* REC_PUBLISH */
	GEN_RELOC GEN_REC, 5, REC_W_WPTR
	movq	%fs:0x7ffffff0, %rax
	GEN_RELOC GEN_REC, 4, REC_W_RING
	addq	$16, REC_RING_HEAD(%rax)
.if \exit
	movq	SLOT(%rsp), %rax		/* SHADOW_HOOK */
	movq	%rax, NODE(SHADOW_N_NEXT)(%rcx)
	movq	%rax, NODE(SHADOW_N_RET_IP)(%rcx)
	movl	$0, NODE(SHADOW_N_UNWOUND)(%rcx)
	leaq	SLOT(%rsp), %rax
	movq	%rax, NODE(SHADOW_N_SP)(%rcx)
	movq	%fs:0x7ffffff0, %rax
	GEN_RELOC GEN_TLS, 4, FHOOK_TLS_SHADOW
	movq	%rcx, (%rax)			/* top: the entry is complete */
	leaq	SHADOW_REC_STUB(%rcx), %rax
	movq	%rax, SLOT(%rsp)
.endif
	FAST_LEAVE , 1
	movq	SAVE_RAX(%rsp), %rax
.if \exit
	movq	SAVE_RCX(%rsp), %rcx
.endif
	movq	SAVE_RDX(%rsp), %rdx
	ret					/* into the function's body */
89:	FAST_LEAVE , 1
90:	movq	SAVE_RAX(%rsp), %rax
.if \exit
	movq	SAVE_RCX(%rsp), %rcx
.endif
	movq	SAVE_RDX(%rsp), %rdx
	movq	SAVE_R11(%rsp), %r11
	GEN_JMP GEN_W_FGRAPH
	.cfi_endproc
.endm

	.text
	.globl	fhook_tramp_grec
	.hidden	fhook_tramp_grec
	.type	fhook_tramp_grec, @function
	.p2align 4
fhook_tramp_grec:
	GRAPH_REC_ENTRY 0
	.size	fhook_tramp_grec, .-fhook_tramp_grec

	.globl	fhook_tramp_grec_exit
	.hidden	fhook_tramp_grec_exit
	.type	fhook_tramp_grec_exit, @function
	.p2align 4
fhook_tramp_grec_exit:
	GRAPH_REC_ENTRY 1
	.size	fhook_tramp_grec_exit, .-fhook_tramp_grec_exit

#ifndef __SANITIZE_THREAD__
	.globl	fhook_tmpl_grec
	.hidden	fhook_tmpl_grec
	.type	fhook_tmpl_grec, @function
	.p2align 4
fhook_tmpl_grec:
	GRAPH_REC_GEN 0
	.size	fhook_tmpl_grec, .-fhook_tmpl_grec
	.globl	fhook_tmpl_grec_end
	.hidden	fhook_tmpl_grec_end
fhook_tmpl_grec_end:

	.globl	fhook_tmpl_grec_exit
	.hidden	fhook_tmpl_grec_exit
	.type	fhook_tmpl_grec_exit, @function
	.p2align 4
fhook_tmpl_grec_exit:
	GRAPH_REC_GEN 1
	.size	fhook_tmpl_grec_exit, .-fhook_tmpl_grec_exit
	.globl	fhook_tmpl_grec_exit_end
	.hidden	fhook_tmpl_grec_exit_end
fhook_tmpl_grec_exit_end:
#endif

	.section .note.GNU-stack,"",@progbits
