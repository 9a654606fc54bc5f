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

#include "graph.h"

/* offsets in struct ftrace_regs, as in lib/arch/x86_64/trampoline.S */
#define R14	8
#define R13	16
#define R12	24
#define R11	48
#define R10	56
#define R9	64
#define R8	72
#define RAX	80
#define RCX	88
#define RDX	96
#define RSI	104
#define RDI	112
#define RIP	128
#define RSP	152
#define FULL	168
#define XMM	192
#define FREGS_SIZE 320
#define X87	FREGS_SIZE		/* two 10-byte values, 16 apart */
#define X87TOP	(FREGS_SIZE + 32)
#define XMMHI	(FREGS_SIZE + 48)	/* %xmm8-15 on the C path */
#define FRAME	(FREGS_SIZE + 48 + 128)

/*
 * The graph return (the kernel's fgraph pop): the common case without C,
 * in the order and with the stores of lib/fprobe/rethook.c's fast path:
 * this thread's own top entry, returned through in order (so no frame
 * above it to report as unwound), not nested, no pool.  Puts the real return address back in
 * the slot, calls the exit handler inside a tasks section and under the
 * recursion lock, pops the entry and jumps to 4f; anything else falls
 * through to the C handler.  Uses the callee-saved slots of the frame's
 * ftrace_regs, which no exit handler reads.  The entry was found before
 * the frame (SHADOW_TOP in rethook_trampoline): %r10 and %rcx (its stub) as it
 * left them, %rsi its fgraph, %r11 the thread word's offset.
 */
.macro GRAPH_RETURN
	testq	$FGRAPH_FL_SLOW, FGRAPH_FLAGS(%rsi)
	jnz	9f
	FAST_ENTER %r11, %rax, 9f
	orq	$SHADOW_RETURNING, NODE(SHADOW_N_SP)(%rcx)
	movq	NODE(SHADOW_N_NEXT)(%rcx), %rdx
	movq	%rdx, 8(%rbp)			/* the slot plain again */
	movq	NODE(SHADOW_N_RET_IP)(%rcx), %rdx
	movq	%rdx, RIP(%rsp)
	movq	%rcx, R12(%rsp)
	movq	%r10, R14(%rsp)
	movq	FGRAPH_PROBE(%rsi), %rdi	/* NULL: going away */
	testq	%rdi, %rdi
	jz	8f
	PROBE_DISABLED %rsi, %r9, 8f
	movq	FGRAPH_EXIT(%rsi), %r11
	testq	%r11, %r11
	jz	8f
	ENTRY_DATA %r9, %rsi, %r10, %rcx
	movq	%r9, %r8			/* exit(probe, entry_ip, ret_ip, fregs, data) */
	movq	NODE(SHADOW_N_ENTRY_IP)(%rcx), %rsi
	movq	NODE(SHADOW_N_RET_IP)(%rcx), %rdx
	movq	%rsp, %rcx
	call	*%r11
8:	FAST_LEAVE %r9
	movq	R12(%rsp), %r8
	movq	R14(%rsp), %r10
	movq	$0, NODE(SHADOW_N_SP)(%r8)	/* the entry is free */
	leaq	-SHADOW_LINE(%r8), %rsi
	movq	%rsi, (%r10)			/* popped */
	jmp	4f				/* (the x87 stack was empty) */
9:
.endm

/*
 * The return of a probe whose records the trampolines write (graph
 * records, arch/shadow.h; the entry is graph_rec.S): before any frame,
 * with only the registers a return leaves dead, and the caller's red zone
 * (nothing is live there across a call) for %rax and %rdx while rdtsc
 * needs them.  This thread's top entry, in order, the same checks as the
 * entry; then the record is written, the slot gets the real return
 * address back, the entry is freed and popped, and we jump on.  Inside a tasks
 * section (the recording's rings are unmapped only after a grace period)
 * and under the recursion lock (a signal handler's records go to C).
 * Anything else goes on into the trampoline below.
 */
.macro GRAPH_RETURN_REC gen=0
	leaq	-8(%rsp), %r9			/* the slot */
.if \gen
	SHADOW_TOP %r10, %rcx, %r9, 19f, SHADOW_REC_STUB, %rsi, gen
	movq	NODE(SHADOW_N_RETHOOK)(%rcx), %rdi	/* its fgraph */
	FAST_ENTER gen, %r8, 19f
.else
	TLS_WORDS %r11
	SHADOW_TOP %r10, %rcx, %r9, 19f, SHADOW_REC_STUB, %rsi, %r11
	movq	NODE(SHADOW_N_RETHOOK)(%rcx), %rdi	/* its fgraph */
	FAST_ENTER %r11, %r8, 19f
.endif
	PROBE_DISABLED %rdi, %r8, 17f	/* (also when going away: rethook_going()) */
	REC_LIVE %rdi, %r8, %r9, %r9d, 17f, \gen
	movzwl	FGRAPH_REC_EXIT+6(%rdi), %edi	/* the event's id */
	REC_ROOM %r8, %r9, 17f
	movw	%di, 6(%r9)
	movq	%rax, -16(%rsp)			/* the return values, in the red zone */
	movq	%rdx, -24(%rsp)
	REC_TIME %r8, %r9, 15f
	/*
	 * everything holds: the record (| idx << 48: the line's bits of the
	 * stub, the region's shifted out; the address is below 2^47), ...
	 */
	movq	%rcx, %rsi
	shlq	$48 - SHADOW_LINE_SHIFT, %rsi
	orq	NODE(SHADOW_N_RET_IP)(%rcx), %rsi
	movq	%rsi, 8(%r9)
	/*
	 * ... where it goes on, read before the entry is free (a signal
	 * handler's C may take it then); the slot, below the stack pointer
	 * now, is nobody's ...
	 */
	movq	NODE(SHADOW_N_NEXT)(%rcx), %rdi
	movq	$0, NODE(SHADOW_N_SP)(%rcx)
	REC_PUBLISH %r8, %rdx
	subq	$SHADOW_LINE, (%r10)		/* ... popped (the top is %rcx: SHADOW_TOP) */
.if \gen
	FAST_LEAVE , 1
.else
	movq	$FHOOK_TW_IDLE, %fs:(%r11)	/* FAST_LEAVE: %r11 holds its offset */
.endif
	movq	-16(%rsp), %rax
	movq	-24(%rsp), %rdx
	jmp	*%rdi				/* to the caller (%rdi is dead at a return) */
15:	movq	-16(%rsp), %rax
	movq	-24(%rsp), %rdx
.if \gen
17:	FAST_LEAVE , 1
.else
17:	FAST_LEAVE %r11
.endif
19:
.endm

	.text
/*
 * The frameless returns (the kernel's fgraph pop, no frame at all): for a
 * probe whose exit handler is proven (FGRAPH_FL_LEAN_EXIT: a leaf that
 * touches no vector or x87 register and reads of its fregs at most the
 * return values, so those in %xmm0/%xmm1 and on the x87 stack stay where
 * they are, and no ftrace_regs need be built).  Before any frame, with only the
 * registers a return leaves dead, as GRAPH_RETURN checks: this thread's
 * top entry, in order.  The entry is popped before the handler runs, so
 * the slot is plain again while the handler runs, and nothing waits
 * across the call but %rax and %rdx.  The probe is read before its flags
 * word: going away, rethook_going() points that word at one that says
 * disabled before it clears the probe, so a NULL probe is never called
 * (x86 keeps the loads, and the stores, in order).  Everything of the
 * rethook is read before its entry is freed: a free entry no longer
 * keeps it (rethook_in_use()), and a sweep that waited for the threads
 * before we entered may free it then.
 *
 * Without entry data (the flags exactly these: no pool, no records), the
 * entry's fields are read before the pop too, and the thread needs only
 * a tasks section, not the recursion lock: nothing of the line is read
 * after the pop, so a signal handler's calls meanwhile may take it (a
 * proven handler is a leaf: it calls nothing that could recurse).  The
 * section is one more on the thread's count, whatever it was: a return
 * is hooked only on a thread that was known and is not exiting.  With
 * entry data, the recursion lock keeps the line and its data from being
 * taken while the handler reads them (a signal handler's calls go to C,
 * which refuses them), as it keeps the entry's; that path also gives an
 * exit handler that reads them the return values as an fregs
 * (FGRAPH_FL_LEAN_FREGS, which keeps it off the first).  In: the entry
 * found by SHADOW_TOP (%r10, %rcx its stub), %rsi its fgraph, %r9 the slot,
 * %r11 the thread word's offset.
 */
/*
 * The frame of the frameless returns with entry data or an fregs: below
 * the slot, %rax and %rdx where an fregs at LEAN_RET_FREGS(%rsp) has them
 * (vecscan.c FHOOK_FREGS_RETVAL; the word between them unused, and those
 * below %rax's the handler's call and frame)
 */
#define LEAN_RET_FRAME	32
#define LEAN_RET_RAX	0
#define LEAN_RET_RDX	16
#define LEAN_RET_FREGS	(LEAN_RET_RAX - RAX)
#if LEAN_RET_RDX - LEAN_RET_RAX != RDX - RAX
#error "LEAN_RET_RDX"
#endif

.macro RETURN_LEAN_FAST gen=0, bare=0
	.if !\bare
	cmpq	$(FGRAPH_FL_EXIT | FGRAPH_FL_LEAN_EXIT), FGRAPH_FLAGS(%rsi)
	jne	32f
	.endif
	.if \gen
	incq	%fs:0x7ffffff0			/* a tasks section (64 bits, as FAST_ENTER reads) */
	GEN_RELOC GEN_TLS, 4, FHOOK_TLS_TW
	.else
	incq	%fs:(%r11)			/* a tasks section (64 bits, as FAST_ENTER reads) */
	.endif
	.cfi_remember_state
	subq	$8, %rsp			/* the slot is our return address */
	.cfi_adjust_cfa_offset 8
	pushq	%rax
	.cfi_adjust_cfa_offset 8
	pushq	%rdx
	.cfi_adjust_cfa_offset 8
	.if \bare
	movq	FGRAPH_EXIT(%rsi), %rax		/* a handler that reads no argument */
	movq	FGRAPH_FLAGS_WORD(%rsi), %rdx
	testl	$FGRAPH_DISABLED_BITS, (%rdx)	/* (also when going away) ... */
	SHADOW_POP %rcx, %r10, (%r9), %r11
	jnz	26f				/* ... disabled: popped, no call */
	.else
	movq	FGRAPH_PROBE(%rsi), %rdi	/* (first: see rethook_going()) */
	movq	FGRAPH_EXIT(%rsi), %rax
	movq	FGRAPH_FLAGS_WORD(%rsi), %rdx
	movq	NODE(SHADOW_N_ENTRY_IP)(%rcx), %rsi	/* exit(probe, entry_ip, ret_ip, fregs, NULL) */
	testl	$FGRAPH_DISABLED_BITS, (%rdx)	/* (also when going away) ... */
	movq	NODE(SHADOW_N_RET_IP)(%rcx), %rdx
	SHADOW_POP %rcx, %r10, (%r9), %r11
	jnz	26f				/* ... disabled: popped, no call */
	xorl	%r8d, %r8d
	.endif
	call	*%rax
26:	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rax
	.cfi_adjust_cfa_offset -8
	.if \gen
	decq	%fs:0x7ffffff0			/* the section left */
	GEN_RELOC GEN_TLS, 4, FHOOK_TLS_TW
	.else
	TLS_WORDS %r11
	decq	%fs:(%r11)			/* the section left */
	.endif
	leaq	8(%rsp), %rsp			/* past the slot, as the return left it */
	.cfi_adjust_cfa_offset -8
	jmp	*-8(%rsp)			/* to the caller (a "ret" would mispredict) */
	.cfi_restore_state
.endm

.macro GRAPH_RETURN_LEAN
	RETURN_LEAN_FAST
32:
	.globl	rethook_tramp_not_lean
	.hidden	rethook_tramp_not_lean
rethook_tramp_not_lean:
	testq	$FGRAPH_FL_LEAN_EXIT, FGRAPH_FLAGS(%rsi)
	jz	30f
	FAST_ENTER %r11, %rdi, 30f
	.cfi_remember_state
	subq	$LEAN_RET_FRAME, %rsp		/* the slot (the frame's top word) stays our return address */
	.cfi_adjust_cfa_offset LEAN_RET_FRAME
	movq	%rax, LEAN_RET_RAX(%rsp)
	movq	%rdx, LEAN_RET_RDX(%rsp)
	ENTRY_DATA %r11, %rsi, %r10, %rcx
	movq	FGRAPH_PROBE(%rsi), %rdi	/* (first: see rethook_going()) */
	movq	FGRAPH_EXIT(%rsi), %rax
	movq	FGRAPH_FLAGS_WORD(%rsi), %rsi
	testl	$FGRAPH_DISABLED_BITS, (%rsi)
	SHADOW_POP %rcx, %r10, (%r9), %rdx
	movq	%r11, %r8			/* exit(probe, entry_ip, ret_ip, fregs, data) */
	jnz	27f
	movq	NODE(SHADOW_N_ENTRY_IP)(%rcx), %rsi	/* (the line stays ours: the recursion lock) */
	movq	NODE(SHADOW_N_RET_IP)(%rcx), %rdx
	leaq	LEAN_RET_FREGS(%rsp), %rcx
	call	*%rax
27:	movq	LEAN_RET_RAX(%rsp), %rax
	movq	LEAN_RET_RDX(%rsp), %rdx
	FAST_LEAVE %r11
	leaq	LEAN_RET_FRAME(%rsp), %rsp	/* past the slot, as the return left it */
	.cfi_adjust_cfa_offset -LEAN_RET_FRAME
	jmp	*-8(%rsp)
	.cfi_restore_state
.endm

/*
 * The frame of a return that is not frameless: a struct ftrace_regs on an
 * aligned frame with the return values; a long double returned (the x87
 * stack not empty) goes to 10f.
 */
/*
 * The vector registers a return leaves to the caller, before any C runs
 * (the way to the frame touches none): given back when a handler asks
 * (fhook_full: a kretprobe's), for callers built with GCC's -fipa-ra that
 * keep values in the ones their local callee leaves alone.
 */
.macro SAVE_XMM_REST
	movaps	%xmm2, XMM+2*16(%rsp)
	movaps	%xmm3, XMM+3*16(%rsp)
	movaps	%xmm4, XMM+4*16(%rsp)
	movaps	%xmm5, XMM+5*16(%rsp)
	movaps	%xmm6, XMM+6*16(%rsp)
	movaps	%xmm7, XMM+7*16(%rsp)
	movaps	%xmm8, XMMHI+0*16(%rsp)
	movaps	%xmm9, XMMHI+1*16(%rsp)
	movaps	%xmm10, XMMHI+2*16(%rsp)
	movaps	%xmm11, XMMHI+3*16(%rsp)
	movaps	%xmm12, XMMHI+4*16(%rsp)
	movaps	%xmm13, XMMHI+5*16(%rsp)
	movaps	%xmm14, XMMHI+6*16(%rsp)
	movaps	%xmm15, XMMHI+7*16(%rsp)
.endm

.macro RESTORE_XMM_REST
	movaps	XMM+2*16(%rsp), %xmm2
	movaps	XMM+3*16(%rsp), %xmm3
	movaps	XMM+4*16(%rsp), %xmm4
	movaps	XMM+5*16(%rsp), %xmm5
	movaps	XMM+6*16(%rsp), %xmm6
	movaps	XMM+7*16(%rsp), %xmm7
	movaps	XMMHI+0*16(%rsp), %xmm8
	movaps	XMMHI+1*16(%rsp), %xmm9
	movaps	XMMHI+2*16(%rsp), %xmm10
	movaps	XMMHI+3*16(%rsp), %xmm11
	movaps	XMMHI+4*16(%rsp), %xmm12
	movaps	XMMHI+5*16(%rsp), %xmm13
	movaps	XMMHI+6*16(%rsp), %xmm14
	movaps	XMMHI+7*16(%rsp), %xmm15
.endm

.macro RETURN_FRAME
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
	 * Such returns take the C path, out of line.
	 */
	leaq	16(%rbp), %rax		/* the caller's %rsp */
	movq	%rax, RSP(%rsp)
	movq	$0, FULL(%rsp)
	fnstsw	%ax
	testl	$0x3800, %eax		/* TOP 0: the stack is empty, as usual */
	jnz	10f
.endm

	.globl	rethook_rec_trampoline
	.hidden	rethook_rec_trampoline
	.type	rethook_rec_trampoline, @function
	.p2align 4
rethook_rec_trampoline:
	.cfi_startproc
	.cfi_def_cfa %rsp, 0
	.cfi_offset %rip, -8
#ifndef __SANITIZE_THREAD__
	/* ThreadSanitizer sees no ordering in assembly: its builds take the C path */
	GRAPH_RETURN_REC
#endif
	/* everything else as for any entry: through the line's first stub */
	andq	$-SHADOW_LINE, -8(%rsp)
	jmp	rethook_trampoline
	.cfi_endproc
	.size	rethook_rec_trampoline, .-rethook_rec_trampoline

	.globl	rethook_trampoline
	.hidden	rethook_trampoline
	.type	rethook_trampoline, @function
	.p2align 4
rethook_trampoline:
	.cfi_startproc
	.cfi_def_cfa %rsp, 0
	.cfi_offset %rip, -8
#ifndef __SANITIZE_THREAD__
	/*
	 * This thread's top entry found first, with no frame: a frameless
	 * exit handler's return ends there; the others build the frame,
	 * then take the graph return (30) or, not the top entry, C (31).
	 */
	.cfi_remember_state
	leaq	-8(%rsp), %r9			/* the slot */
	TLS_WORDS %r11
	SHADOW_TOP %r10, %rcx, %r9, 31f, 0, , %r11
	movq	NODE(SHADOW_N_RETHOOK)(%rcx), %rsi	/* its fgraph */
	GRAPH_RETURN_LEAN
30:	RETURN_FRAME
	GRAPH_RETURN
	SAVE_XMM_REST			/* to C */
	jmp	12f
	.cfi_restore_state
31:
	.globl	rethook_tramp_c
	.hidden	rethook_tramp_c
rethook_tramp_c:
#endif
	RETURN_FRAME
	SAVE_XMM_REST
12:
	movl	$0, X87TOP(%rsp)
11:	movq	8(%rbp), %rdi		/* the stub */
	movq	%rsp, %rsi
	call	*fhook_arch_rethook_handler(%rip)	/* the return-hook layer's handler */
	cmpl	$0, X87TOP(%rsp)
	je	4f
	movl	X87TOP(%rsp), %eax
	cmpl	$7, %eax
	je	3f
	cmpl	$6, %eax
	jne	4f
	fldt	X87+16(%rsp)
3:	fldt	X87(%rsp)
4:
	/*
	 * A handler that set fhook_full (a kretprobe's) gave every
	 * caller-saved register the value the caller expects, and the vector
	 * ones are as the function left them: a program built with GCC's
	 * -fipa-ra (not for fhook) keeps values in the registers a local
	 * callee leaves alone, which this path clobbered.
	 */
	cmpq	$0, FULL(%rsp)
	je	13f
	movq	RCX(%rsp), %rcx
	movq	RSI(%rsp), %rsi
	movq	RDI(%rsp), %rdi
	movq	R8(%rsp), %r8
	movq	R9(%rsp), %r9
	movq	R10(%rsp), %r10
	movq	R11(%rsp), %r11
	RESTORE_XMM_REST
13:
	movaps	XMM+0*16(%rsp), %xmm0
	movaps	XMM+1*16(%rsp), %xmm1
	movq	RAX(%rsp), %rax
	movq	RDX(%rsp), %rdx
	.cfi_remember_state
	leave
	.cfi_def_cfa %rsp, 8
	.cfi_restore %rbp
	/*
	 * To the real return address, now in the slot, by a jump: the
	 * function's own "ret" to the stub already took the return-stack
	 * predictor's entry for it, so a "ret" here would take its caller's
	 * and every return after it up the stack would be mispredicted.
	 * The slot is in the red zone once %rsp is past it, which signal
	 * delivery skips.
	 */
	leaq	8(%rsp), %rsp
	.cfi_def_cfa %rsp, 0
	jmp	*-8(%rsp)
	.cfi_restore_state
10:	SAVE_XMM_REST
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
2:	jmp	11b
	.cfi_endproc
	.size	rethook_trampoline, .-rethook_trampoline

#ifndef __SANITIZE_THREAD__
/*
 * The template of the copy (gen.c) that the stubs go to, when it could be
 * made: rethook_trampoline's frameless return without entry data, with
 * the thread's block's offset as an immediate.  Anything else goes on in
 * rethook_trampoline, past its own finding of the entry (word
 * GEN_W_RET_ON, with %r11 the block's offset as there), or to its C path
 * (GEN_W_RET_C), each reached with the state it expects.
 */

	.globl	fhook_tmpl_rethook
	.hidden	fhook_tmpl_rethook
	.type	fhook_tmpl_rethook, @function
	.p2align 4
fhook_tmpl_rethook:
	.cfi_startproc
	.cfi_def_cfa %rsp, 0
	.cfi_offset %rip, -8
	leaq	-8(%rsp), %r9			/* the slot */
	SHADOW_TOP %r10, %rcx, %r9, 31f, 0, , gen
	movq	NODE(SHADOW_N_RETHOOK)(%rcx), %rsi	/* its fgraph */
	RETURN_LEAN_FAST 1
32:	movq	$0x7ffffff0, %r11		/* the block's offset, as TLS_WORDS leaves it */
	GEN_RELOC GEN_TLS, 4, FHOOK_TLS_TW
	GEN_JMP GEN_W_RET_ON
31:	GEN_JMP GEN_W_RET_C
	.cfi_endproc
	.size	fhook_tmpl_rethook, .-fhook_tmpl_rethook
	.globl	fhook_tmpl_rethook_end
	.hidden	fhook_tmpl_rethook_end
fhook_tmpl_rethook_end:

/*
 * ... and of the records' returns (the lines' second stub), the thread's
 * block's offset an immediate and the recording's variables read from
 * the library, within reach of the copy; anything else goes on as from
 * rethook_rec_trampoline, through the line's first stub (GEN_W_RET_ON).
 */
	.globl	fhook_tmpl_rethook_rec
	.hidden	fhook_tmpl_rethook_rec
	.type	fhook_tmpl_rethook_rec, @function
	.p2align 4
fhook_tmpl_rethook_rec:
	.cfi_startproc
	.cfi_def_cfa %rsp, 0
	.cfi_offset %rip, -8
	GRAPH_RETURN_REC 1
	andq	$-SHADOW_LINE, -8(%rsp)
	GEN_JMP GEN_W_RET_ON
	.cfi_endproc
	.size	fhook_tmpl_rethook_rec, .-fhook_tmpl_rethook_rec
	.globl	fhook_tmpl_rethook_rec_end
	.hidden	fhook_tmpl_rethook_rec_end
fhook_tmpl_rethook_rec_end:

/*
 * ... and of the bare entries' returns (the lines' third stub, arch/shadow.h
 * FGRAPH_TRAMP_LEAN_BARE): only such an entry hooks a return with it, for
 * a probe without entry data whose exit handler is frameless and reads no
 * argument, so there is no kind to test and nothing to load for the call.
 * Anything else (not this thread's top entry at this slot) goes the way of
 * the first stub's returns, the slot made that stub again.
 */
	.globl	fhook_tmpl_rethook_bare
	.hidden	fhook_tmpl_rethook_bare
	.type	fhook_tmpl_rethook_bare, @function
	.p2align 4
fhook_tmpl_rethook_bare:
	.cfi_startproc
	.cfi_def_cfa %rsp, 0
	.cfi_offset %rip, -8
	leaq	-8(%rsp), %r9			/* the slot */
	SHADOW_TOP %r10, %rcx, %r9, 31f, SHADOW_BARE_STUB, %rsi, gen
	movq	NODE(SHADOW_N_RETHOOK)(%rcx), %rsi	/* its fgraph */
	RETURN_LEAN_FAST 1, 1
31:	andq	$-SHADOW_LINE, -8(%rsp)		/* the line's first stub */
	GEN_JMP GEN_W_RET_ON
	.cfi_endproc
	.size	fhook_tmpl_rethook_bare, .-fhook_tmpl_rethook_bare
	.globl	fhook_tmpl_rethook_bare_end
	.hidden	fhook_tmpl_rethook_bare_end
fhook_tmpl_rethook_bare_end:
#endif

	.section .note.GNU-stack,"",@progbits
