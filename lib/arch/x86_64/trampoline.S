/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The trampolines every stub jumps to.
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
#define STUB_COPY_FUNC	56
/* ftrace_ops.private (checked in stubs.c) */
#define OPS_PRIVATE	16

#include "graph.h"

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
	leave
	.cfi_def_cfa %rsp, 8
	ret
.endm

.macro SAVE_XMM
	movaps	%xmm0, XMM+0*16(%rsp)
	movaps	%xmm1, XMM+1*16(%rsp)
	movaps	%xmm2, XMM+2*16(%rsp)
	movaps	%xmm3, XMM+3*16(%rsp)
	movaps	%xmm4, XMM+4*16(%rsp)
	movaps	%xmm5, XMM+5*16(%rsp)
	movaps	%xmm6, XMM+6*16(%rsp)
	movaps	%xmm7, XMM+7*16(%rsp)
.endm

.macro RESTORE_XMM
	movaps	XMM+0*16(%rsp), %xmm0
	movaps	XMM+1*16(%rsp), %xmm1
	movaps	XMM+2*16(%rsp), %xmm2
	movaps	XMM+3*16(%rsp), %xmm3
	movaps	XMM+4*16(%rsp), %xmm4
	movaps	XMM+5*16(%rsp), %xmm5
	movaps	XMM+6*16(%rsp), %xmm6
	movaps	XMM+7*16(%rsp), %xmm7
.endm

.macro SAVE_ARGS sse
	movq	%rdi, RDI(%rsp)
	movq	%rsi, RSI(%rsp)
	movq	%rdx, RDX(%rsp)
	movq	%rcx, RCX(%rsp)
	movq	%r8, R8(%rsp)
	movq	%r9, R9(%rsp)
	movq	%rax, RAX(%rsp)
	movq	%r10, R10(%rsp)
	.if \sse
	SAVE_XMM
	.endif
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
.macro DISPATCH_C own=0
	movq	%r11, %rdx		/* the stub */
	.if \own
	orq	$1, %rdx		/* ... whose handler alone may be called */
	.endif
	movq	%rsp, %rcx		/* fregs */
	call	*fhook_arch_dispatch(%rip)
.endm

/*
 * The dispatch in assembly: no lock, no atomic.  The thread's tasks count
 * (util/tasks.h) counts it inside (fhook_tasks_synchronize() waits for it
 * to leave), then the stub's data says which handler: its own, or with no
 * data (unbound, or the list stub) the list function.  Usually the thread
 * is inside nothing of ours (util/thread_word.h): one compare and one
 * store enter, and the graph trampolines take the recursion lock in the
 * same store.  Else (nested, or a thread not yet known or exiting) the
 * count is incremented out of line, or the C dispatcher, which knows
 * what to do, takes the call.
 * With @own, a stub without data calls nothing (not the list function):
 * the frameless entries that saved only the registers their function
 * reads come here, and another ops' handler could read the others.
 * In: %rdi = ip, %rsi = parent_ip, %r11 = stub, %rsp = fregs.
 */
.macro DISPATCH_TASKS fgraph=0, sse=1, own=0
	movq	fhook_tls@gottpoff(%rip), %rax
	cmpq	$FHOOK_TW_IDLE, %fs:(%rax)
	jne	5f
	.if \fgraph
	movabsq	$FHOOK_TW_FAST, %rdx
	movq	%rdx, %fs:(%rax)		/* enter, with the recursion lock */
	movq	STUB_DATA(%r11), %rdx
	testq	%rdx, %rdx
	.if \own
	jz	8f
	.else
	jz	7f
	.endif
	GRAPH_ENTER \sse
	FAST_LEAVE %rax
	jmp	3f
	.else
	/* 64 bits, as the compare reads it (a narrower store would not forward) */
	movq	$2, %fs:(%rax)			/* enter */
	.endif
6:	movq	STUB_DATA(%r11), %rdx
	testq	%rdx, %rdx
	.if \own
	jz	4f
	.else
	jz	1f
	.endif
	movq	%rsp, %rcx
	.if \fgraph && !\sse
	/* fprobe's C handler: ours, built with vector registers */
	SAVE_XMM
	call	*STUB_FUNC(%r11)
	RESTORE_XMM
	.else
	call	*STUB_FUNC(%r11)
	.endif
4:	movq	fhook_tls@gottpoff(%rip), %rax
	subq	$1, %fs:(%rax)			/* leave (the count is at least 2) */
3:
.endm

/*
 * The graph entry (the kernel's fgraph push): an fprobe's common case
 * without C.  Its struct fhook_fgraph (arch/shadow.h) names the handlers;
 * a hook takes the next entry of the thread's shadow stack, calls the
 * entry handler under the recursion lock, and swaps the return address
 * for the entry's stub.  Every other case (no region yet, a top entry
 * that is not a caller's, nested, a pool, a tail call from a hooked
 * function, an entry-only probe while frames are being unwound) is the
 * fprobe's C handler's, through
 * the stub as for any ops.  Done in fprobe's order and with its stores
 * (lib/fprobe/fprobe.c keeps the same fast path for the C trampolines).
 * In: %rdi = ip, %rsi = parent_ip, %rdx = the ops, %r11 = stub, %rsp = fregs.
 */
.macro GRAPH_ENTER sse
	/*
	 * The ops as read once: an unregister may unbind the stub meanwhile,
	 * and the C handler must get the ops this section began with.
	 */
	movq	%rdx, R15(%rsp)
	movq	OPS_PRIVATE(%rdx), %r8		/* the fgraph */
	testq	$FGRAPH_FL_SLOW, FGRAPH_FLAGS(%r8)
	jnz	25f
	/*
	 * Tested here, the probe loaded only at the call below: safe because
	 * a probe is cleared (and its flags word changed) only once its stubs
	 * are unbound and a grace period has passed (unregister_fprobe()), so
	 * no thread is between the two then.
	 */
	PROBE_DISABLED %r8, %rax, 24f	/* disabled: no handler at all */
	movq	%rsi, %rax			/* a stub's address: a tail call */
	subq	fhook_shadow_base(%rip), %rax
	cmpq	fhook_shadow_size(%rip), %rax
	jb	25f
	testq	$FGRAPH_FL_EXIT, FGRAPH_FLAGS(%r8)
	jz	26f
	leaq	16(%rbp), %rdx			/* our return slot */
	SHADOW_NEXT %r10, %rax, %rdx, 25f
	movq	FGRAPH_RETHOOK(%r8), %rdx
	movq	%rdx, NODE(SHADOW_N_RETHOOK)(%rax)
	movq	%rdi, NODE(SHADOW_N_ENTRY_IP)(%rax)
	movq	%rsi, NODE(SHADOW_N_PARENT_IP)(%rax)
	movq	FGRAPH_ENTRY(%r8), %rdx
	testq	%rdx, %rdx
	jz	22f
	/* across the handler, in slots of fregs an args trampoline leaves unused */
	movq	%rax, R12(%rsp)
	movq	%r10, R14(%rsp)
	ENTRY_DATA %r9, %r8, %r10, %rax
	movq	%rdx, %rax
	movq	%rsi, %rdx			/* entry(probe, ip, parent_ip, fregs, data) */
	movq	%rdi, %rsi
	movq	FGRAPH_PROBE(%r8), %rdi
	movq	%rsp, %rcx
	movq	%r9, %r8
	call	*%rax
	testl	%eax, %eax
	jnz	24f				/* no return hook wanted */
	movq	R12(%rsp), %rax
	movq	R14(%rsp), %r10
22:	SHADOW_HOOK %rax, %r10, 16(%rbp), %rdx
	jmp	24f
26:	cmpl	$0, fhook_shadow_slow(%rip)	/* entry only: C reaps unwound frames */
	jne	25f
	movq	FGRAPH_ENTRY(%r8), %rax
	testq	%rax, %rax
	jz	24f
	movq	%rsi, %rdx
	movq	%rdi, %rsi
	movq	FGRAPH_PROBE(%r8), %rdi
	movq	%rsp, %rcx
	xorl	%r8d, %r8d
	call	*%rax
	jmp	24f
25:	movq	fhook_tls@gottpoff(%rip), %rax	/* fprobe's C handler takes the lock itself */
	movl	$0, %fs:FHOOK_TW_RECURSION(%rax)
	movq	R15(%rsp), %rdx
	movq	%rsp, %rcx
	.if !\sse
	SAVE_XMM				/* ours, built with vector registers */
	call	*STUB_FUNC(%r11)
	RESTORE_XMM
	.else
	call	*STUB_FUNC(%r11)
	.endif
24:
.endm

/*
 * The slow ends of DISPATCH_TASKS, placed after the trampoline's ret.
 * They call handlers nobody vouched for (the list function's, the C
 * path's, malloc when a thread registers): without @sse saved on entry,
 * xmm0-7 are saved here.
 */
.macro DISPATCH_TASKS_SLOW sse, own=0
	.if \own
8:	FAST_LEAVE %rax				/* unbound: nothing called */
	jmp	3b
	.endif
5:	movl	%fs:FHOOK_TW_TASKS(%rax), %edx	/* nested, or not known yet */
	testl	%edx, %edx
	jle	2f
	addl	$1, %edx
	movl	%edx, %fs:FHOOK_TW_TASKS(%rax)	/* enter */
	jmp	6b
	.if !\own
7:	movl	$0, %fs:FHOOK_TW_RECURSION(%rax)	/* unbound: as if counted */
1:
	.if !\sse
	SAVE_XMM
	.endif
	movq	%rsp, %rcx		/* the list function: (ip, parent_ip, NULL, fregs) */
	call	*fhook_arch_list_func(%rip)
	.if !\sse
	RESTORE_XMM
	.endif
	jmp	4b
	.endif
2:	.if !\sse
	SAVE_XMM
	.endif
	DISPATCH_C \own
	.if !\sse
	RESTORE_XMM
	.endif
	jmp	3b
.endm

.macro RESTORE_ARGS sse, ip=1
	.if \ip
	movq	RIP(%rsp), %rax
	movq	%rax, 8(%rbp)		/* where we return to */
	.endif
	.if \sse
	RESTORE_XMM
	.endif
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

/* A trampoline's symbol (the library's own) and the start of its CFI. */
.macro TRAMP_BEGIN name
	.globl	\name
	.hidden	\name
	.type	\name, @function
	.p2align 4
\name:
	.cfi_startproc
.endm

/*
 * One trampoline: @full saves every register (SAVE_REGS ops, the list
 * stub), @sse saves xmm0-7 (unless the handler leaves them alone), @c
 * goes through the C dispatcher (ThreadSanitizer builds, which cannot see
 * the assembly's ordering, and FHOOK_SLOW_DISPATCH).
 */
.macro TRAMPOLINE name, full, sse, c, fgraph=0, own=0
	TRAMP_BEGIN \name
	FRAME_ENTER
	movq	$\full, FULL(%rsp)
	.if \full
	SAVE_REGS_EXTRA
	.endif
	SAVE_ARGS \sse
	.if \c
	DISPATCH_C
	.else
	DISPATCH_TASKS \fgraph, \sse, \own
	.endif
	RESTORE_ARGS \sse
	.if \full
	RESTORE_REGS_EXTRA
	.endif
	.if \c
	FRAME_LEAVE
	.else
	.cfi_remember_state
	FRAME_LEAVE
	.cfi_restore_state
	DISPATCH_TASKS_SLOW \sse, \own
	.endif
	.cfi_endproc
	.size	\name, .-\name
.endm

	TRAMPOLINE fhook_tramp_args_c, 0, 1, 1
	TRAMPOLINE fhook_tramp_regs_c, 1, 1, 1
	TRAMPOLINE fhook_tramp_args, 0, 1, 0
	TRAMPOLINE fhook_tramp_regs, 1, 1, 0
	TRAMPOLINE fhook_tramp_args_nosse, 0, 0, 0
	TRAMPOLINE fhook_tramp_regs_nosse, 1, 0, 0
	TRAMPOLINE fhook_tramp_fgraph, 0, 1, 0, 1
	TRAMPOLINE fhook_tramp_fgraph_nosse, 0, 0, 0, 1
	/* the C path of frameless entries that saved only what their function reads */
	TRAMPOLINE fhook_tramp_fgraph_own, 0, 0, 0, 1, 1

/*
 * The frameless graph entries: for an fprobe whose entry handler is
 * proven (vecfree.h: a leaf that touches no vector register and never
 * reads its fregs, which these build none of) and that has no pool.  The
 * registers a function may take arguments in are pushed (the handler may
 * clobber any of them, and we use them), nothing else: no frame, no
 * ftrace_regs, no alignment (a proven handler has no instruction that
 * needs any).  In the order and with the stores of GRAPH_ENTER, but for
 * one: the return is hooked before the handler runs, not after, so that
 * nothing of the entry waits across the call; a handler that declines
 * the return hook has its entry undone (its slot plain, the entry free,
 * popped).  Everything else (nested, unbound, a tail call from a hooked
 * function, a stale top entry, a full stack, no region yet, frames being
 * unwound for an entry-only probe) restores the registers and goes on
 * in fhook_tramp_fgraph, which takes the C path.
 *
 * A site whose function reads no argument register after the site but
 * %rdi and %rsi (@saves 2), or those and %rdx (@saves 3), takes an entry
 * that pushes only those (livein.c): nothing else of what we and the
 * handler clobber is read again.  @saves 8: all of them.
 */
#define LEAN_BODY(saves)	(8 * (saves))		/* site + 5, above the pushes */
#define LEAN_SLOT(saves)	(8 * (saves) + 8)	/* the return address */

.macro LEAN_PUSH reg
	pushq	\reg
	.cfi_adjust_cfa_offset 8
.endm

.macro LEAN_POP reg
	popq	\reg
	.cfi_adjust_cfa_offset -8
.endm

/*
 * In struct pt_regs' order, %r10 (at %rsp) to %rdi: LEAN_FREGS(%rsp) is
 * then an fregs whose argument words are these (vecscan.c
 * FHOOK_FREGS_ARGS); its words below %r10's lie under the stack pointer
 * and are not given (the handler's call and frame take them).
 */
#define LEAN_FREGS	-56		/* - offsetof(struct pt_regs, r10) */

.macro LEAN_SAVE saves
	.if \saves >= 1
	LEAN_PUSH %rdi
	.endif
	.if \saves >= 2
	LEAN_PUSH %rsi
	.endif
	.if \saves >= 3
	LEAN_PUSH %rdx
	.endif
	.if \saves == 8
	LEAN_PUSH %rcx
	LEAN_PUSH %rax
	LEAN_PUSH %r8
	LEAN_PUSH %r9
	LEAN_PUSH %r10
	.endif
.endm

.macro LEAN_RESTORE saves
	.if \saves == 8
	LEAN_POP %r10
	LEAN_POP %r9
	LEAN_POP %r8
	LEAN_POP %rax
	LEAN_POP %rcx
	.endif
	.if \saves >= 3
	LEAN_POP %rdx
	.endif
	.if \saves >= 2
	LEAN_POP %rsi
	.endif
	.if \saves >= 1
	LEAN_POP %rdi
	.endif
.endm

/*
 * @gen: the template of a copy (gen.c) with the thread's block's offset
 * as an immediate, and what it reaches outside itself in the words
 * GEN_W_* of gen_layout.h after it.
 */

/* A label gen.c finds in a template: global, hidden, here */
.macro GEN_LABEL label
	.globl	\label
	.hidden	\label
\label:
.endm

.macro GRAPH_LEAN name, exit, data, fregs, saves=8, gen=0, bare=0
	TRAMP_BEGIN \name
	LEAN_SAVE \saves
	/*
	 * with pushed registers (%rdi holds the block's offset until the
	 * push of the shadow stack): 90 restores the function's exactly
	 */
.if \gen
	FAST_ENTER gen, %rsi, 90f
.else
	TLS_WORDS %rdi
	FAST_ENTER %rdi, %rsi, 90f
.endif
	movq	STUB_GREC(%r11), %r8		/* the fgraph (an unbound stub's: of no kind) */
	/*
	 * disabled: no handler at all; not of this kind (or none): C.  The
	 * probe is loaded later: see GRAPH_ENTER for why it cannot be cleared
	 * in between.
	 */
	.if \bare
	KIND_DISABLED %r8, FGRAPH_TRAMP_LEAN_BARE, %rax, 86f
	.else
	KIND_DISABLED %r8, FGRAPH_TRAMP_LEAN(\exit, \data, \fregs), %rax, 86f
	.endif
	movq	LEAN_SLOT(\saves)(%rsp), %rdx		/* parent_ip */
	movq	%rdx, %rax			/* a stub's address: a tail call */
.if \gen
	subq	0x7ffffff0(%rip), %rax
	GEN_RELOC GEN_WORD, 4, GEN_W_BASE
	cmpq	0x7ffffff0(%rip), %rax
	GEN_RELOC GEN_WORD, 4, GEN_W_SIZE
.else
	subq	fhook_shadow_base(%rip), %rax
	cmpq	fhook_shadow_size(%rip), %rax
.endif
	jb	89f
	movq	LEAN_BODY(\saves)(%rsp), %rsi
	subq	$5, %rsi			/* ip: the site */
.if \exit
	leaq	LEAN_SLOT(\saves)(%rsp), %rcx
.if \gen
	SHADOW_NEXT %r10, %rax, %rcx, 89f, gen
.else
	SHADOW_NEXT %r10, %rax, %rcx, 89f, %rdi
.endif
	/*
	 * SHADOW_HOOK's stores, from the registers (no one reads
	 * entry_parent_ip); the rethook begins with the fgraph
	 */
	movq	%r8, NODE(SHADOW_N_RETHOOK)(%rax)
	movq	%rsi, NODE(SHADOW_N_ENTRY_IP)(%rax)
	movq	%rdx, NODE(SHADOW_N_NEXT)(%rax)	/* the real return address */
	movq	%rdx, NODE(SHADOW_N_RET_IP)(%rax)
	movl	$0, NODE(SHADOW_N_UNWOUND)(%rax)
	movq	%rcx, NODE(SHADOW_N_SP)(%rax)	/* the slot */
	movq	%rax, (%r10)			/* top: the entry is complete */
.if \bare
	leaq	SHADOW_BARE_STUB(%rax), %rcx
	movq	%rcx, LEAN_SLOT(\saves)(%rsp)	/* its line's bare stub */
.else
	movq	%rax, LEAN_SLOT(\saves)(%rsp)	/* its stub */
.endif
.if \data
	ENTRY_DATA_AT %r9, %r10, %rax
.endif
.else
	cmpl	$0, fhook_shadow_slow(%rip)	/* entry only: C reaps unwound frames */
	jne	89f
.endif
	movq	FGRAPH_ENTRY(%r8), %rax		/* entry(probe, ip, parent_ip, fregs, data) */
.if !\bare
	movq	FGRAPH_PROBE(%r8), %rdi
.if \data
	movq	%r9, %r8
.else
	xorl	%r8d, %r8d
.endif
.endif
.if \fregs
	leaq	LEAN_FREGS(%rsp), %rcx
.endif
	call	*%rax
.if \exit
	testl	%eax, %eax
	jnz	87f				/* no return hook wanted */
.endif
88:	FAST_LEAVE %rax, \gen
	.cfi_remember_state
	LEAN_RESTORE \saves
	ret					/* into the function's body */
	.cfi_restore_state
.if \exit
.if \gen
87:	SHADOW_SELF %rdx, %rax, gen	/* the header */
.else
87:	SHADOW_SELF %rdx, %rax		/* the header */
.endif
	movq	(%rdx), %rcx			/* top: our entry's stub */
	SHADOW_POP %rcx, %rdx, LEAN_SLOT(\saves)(%rsp), %rdi
	jmp	88b
.endif
.if \saves == 8
.if \gen
86:	cmpq	0x7ffffff0(%rip), %rax		/* not of this kind, or unbound: C */
	GEN_RELOC GEN_WORD, 4, GEN_W_OTHER
.else
86:	leaq	fhook_fgraph_other(%rip), %rdx	/* not of this kind, or unbound: C */
	cmpq	%rdx, %rax
.endif
	jne	88b
89:	FAST_LEAVE %rax, \gen
90:	LEAN_RESTORE \saves
.if \gen
	GEN_JMP GEN_W_FGRAPH			/* %r11 still the stub */
.else
	jmp	fhook_tramp_fgraph		/* %r11 still the stub */
.endif
.else
	/*
	 * Registers the function does not read are clobbered from here: a
	 * stub unbound or rebound meanwhile (86) calls nothing this time,
	 * and C (89) calls no other ops' handler, which could read them
	 */
86:	jmp	88b
89:	FAST_LEAVE %rax, \gen
	.cfi_remember_state
	LEAN_RESTORE \saves
.if \gen
	GEN_JMP GEN_W_OWN
.else
	jmp	fhook_tramp_fgraph_own
.endif
	.cfi_restore_state
90:	LEAN_RESTORE \saves
.if \gen
	GEN_JMP GEN_W_FGRAPH
.else
	jmp	fhook_tramp_fgraph
.endif
.endif
	.cfi_endproc
	.size	\name, .-\name
.if \gen
	GEN_LABEL \name\()_end
.endif
.endm

	/*
	 * entry only (no entry data without a return hook), and returns
	 * hooked, without and with entry data; each for a handler that
	 * reads no fregs and for one that reads its arguments there
	 */
	GRAPH_LEAN fhook_tramp_fgraph_lean, 0, 0, 0
	GRAPH_LEAN fhook_tramp_fgraph_lean_fregs, 0, 0, 1
	GRAPH_LEAN fhook_tramp_fgraph_lean_exit, 1, 0, 0
	GRAPH_LEAN fhook_tramp_fgraph_lean_exit_fregs, 1, 0, 1
	GRAPH_LEAN fhook_tramp_fgraph_lean_exit_data, 1, 1, 0
	GRAPH_LEAN fhook_tramp_fgraph_lean_exit_data_fregs, 1, 1, 1

	/*
	 * ... and without fregs, for sites whose functions read no argument
	 * register but %rdi and %rsi, or those and %rdx
	 */
	.irp saves, 2, 3
	GRAPH_LEAN fhook_tramp_fgraph_lean_a\saves, 0, 0, 0, \saves
	GRAPH_LEAN fhook_tramp_fgraph_lean_exit_a\saves, 1, 0, 0, \saves
	GRAPH_LEAN fhook_tramp_fgraph_lean_exit_data_a\saves, 1, 1, 0, \saves
	.endr

	/*
	 * The templates of their copies (gen.c) for the kinds that hook
	 * returns, in the order of gen.c's table
	 */
	GRAPH_LEAN fhook_tmpl_fgraph_lean_exit, 1, 0, 0, 8, 1
	GRAPH_LEAN fhook_tmpl_fgraph_lean_exit_fregs, 1, 0, 1, 8, 1
	GRAPH_LEAN fhook_tmpl_fgraph_lean_exit_data, 1, 1, 0, 8, 1
	GRAPH_LEAN fhook_tmpl_fgraph_lean_exit_data_fregs, 1, 1, 1, 8, 1
	.irp saves, 2, 3
	GRAPH_LEAN fhook_tmpl_fgraph_lean_exit_a\saves, 1, 0, 0, \saves, 1
	GRAPH_LEAN fhook_tmpl_fgraph_lean_exit_data_a\saves, 1, 1, 0, \saves, 1
	.endr
	/* the bare ones (FGRAPH_TRAMP_LEAN_BARE): copies only */
	GRAPH_LEAN fhook_tmpl_fgraph_lean_bare, 1, 0, 0, 8, 1, 1
	.irp saves, 2, 3
	GRAPH_LEAN fhook_tmpl_fgraph_lean_bare_a\saves, 1, 0, 0, \saves, 1, 1
	.endr

/*
 * The template of a per-ops trampoline (the kernel's create_trampoline):
 * gen.c copies it for stubs of ops that alone use their sites and
 * patches in the thread word's offset from the thread pointer and the C
 * dispatcher, so the call path loads neither.  Arguments only, no ip
 * written back (no IPMODIFY), xmm0-7 saved per @sse.  The labels after
 * the patched instructions tell gen.c where their operands end.  The ops
 * and its handler come from the stub (%r11), once the thread is counted
 * in: a stub no longer bound holds no ops and a handler that does
 * nothing, and a thread that jumped in and was preempted before it
 * counted itself in (not waited for by an unregistering) then calls no
 * handler of an unregistered ops.  A stub serves one registration only,
 * so that is all the check there is.
 */

.macro OPS_TEMPLATE name, sse
	.globl	\name
	.hidden	\name
	.p2align 4
\name:
	.cfi_startproc
	FRAME_ENTER
	movq	$0, FULL(%rsp)
	SAVE_ARGS \sse
	cmpq	$FHOOK_TW_IDLE, %fs:0x7ffffff0	/* the thread word */
	GEN_LABEL \name\()_tls1
	jne	2f				/* nested, or not known: C */
	movq	$2, %fs:0x7ffffff0		/* enter, 64 bits as the compare reads */
	GEN_LABEL \name\()_tls2
	movq	STUB_DATA(%r11), %rdx		/* the ops, then (after: x86 loads in order) */
	movq	%rsp, %rcx
	call	*STUB_COPY_FUNC(%r11)		/* its handler */
	GEN_LABEL \name\()_func
	subq	$1, %fs:0x7ffffff0		/* leave */
	GEN_LABEL \name\()_tls3
3:	RESTORE_ARGS \sse, 0
	.cfi_remember_state
	leave
	.cfi_def_cfa %rsp, 8
	GEN_LABEL \name\()_ret
	ret
	.cfi_restore_state
	GEN_LABEL \name\()_slow
2:	.if !\sse
	SAVE_XMM
	.endif
	movq	%r11, %rdx			/* dispatch(ip, parent_ip, stub, fregs) */
	movq	%rsp, %rcx
	movabsq	$0x1122334455667788, %rax	/* the C dispatcher */
	GEN_LABEL \name\()_disp
	call	*%rax
	.if !\sse
	RESTORE_XMM
	.endif
	jmp	3b
	.cfi_endproc
	GEN_LABEL \name\()_end
.endm

	OPS_TEMPLATE fhook_tmpl_ops, 1
	OPS_TEMPLATE fhook_tmpl_ops_nosse, 0

/*
 * The frameless per-ops template: for a handler proven a leaf that
 * touches no vector register and never reads its fregs (vecfree.h), at
 * sites whose functions read no argument register but %rdi and %rsi
 * (@saves 2) or those and %rdx (3) (livein.c).  Those are pushed, and
 * nothing else is kept or built: the handler clobbers only what no one
 * reads again, and gets no fregs (%rcx is what it was).  A thread not
 * idle takes the generic trampoline, through the word on the page after
 * the copy's (nothing pushed yet, %r11 still the stub).  gen.c patches the
 * thread word's offset as in OPS_TEMPLATE, and describes the
 * pushes and pops to unwinders: each is one byte, at the labels.
 */
.macro OPS_LEAN_TEMPLATE name, saves
	.globl	\name
	.hidden	\name
	.p2align 4
\name:
	.cfi_startproc
	cmpq	$FHOOK_TW_IDLE, %fs:0x7ffffff0	/* the thread word */
	GEN_LABEL \name\()_tls1
	jne	2f				/* nested, or not known: the generic path */
	movq	$2, %fs:0x7ffffff0		/* enter, 64 bits as the compare reads */
	GEN_LABEL \name\()_tls2
	LEAN_SAVE \saves
	movq	LEAN_BODY(\saves)(%rsp), %rdi
	subq	$5, %rdi			/* ip: the site */
	movq	LEAN_SLOT(\saves)(%rsp), %rsi	/* parent_ip */
	movq	STUB_DATA(%r11), %rdx		/* the ops and its handler, from the stub */
	call	*STUB_COPY_FUNC(%r11)
	GEN_LABEL \name\()_func
	LEAN_RESTORE \saves
	GEN_LABEL \name\()_popped
	subq	$1, %fs:0x7ffffff0		/* leave */
	GEN_LABEL \name\()_tls3
	GEN_LABEL \name\()_ret
	ret
2:	jmp	*0x7ffffff0(%rip)		/* the generic trampoline: the word after the page */
	GEN_LABEL \name\()_slow
	.cfi_endproc
	GEN_LABEL \name\()_end
.endm

	OPS_LEAN_TEMPLATE fhook_tmpl_ops_lean2, 2
	OPS_LEAN_TEMPLATE fhook_tmpl_ops_lean3, 3

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
