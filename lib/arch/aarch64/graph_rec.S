/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Graph records (arch/shadow.h) on aarch64: the entry of a probe whose
 * events are plain, written straight into the thread's ring with no
 * handler, no saved register and no frame, and its return, reached
 * through the shadow line's second stub (SHADOW_REC_STUB).  The x86-64
 * paths (graph_rec.S, rethook_tramp.S GRAPH_RETURN_REC) with the same
 * protocol: a tasks section with the recursion lock (a signal handler
 * that records meanwhile goes to C, which refuses it: the ring's head and
 * the shadow stack's top are ours until we are done), the common case
 * checked, the record and the shadow-stack entry written as C writes
 * them.  Anything else takes the C path: the entry the ops trampoline,
 * the return rethook_trampoline.
 *
 * Only x9-x17 are used, the AAPCS64's scratch registers: at an entry the
 * arguments (x0-x8, q0-q7) and at a return its values reach the function
 * and its caller untouched, and there is no frame, not even for the C
 * path, whose trampolines find every register as the site or the stub
 * left it.
 */
#include "graph.h"

	.text

/*
 * The entry.  The site ran "mov x9, x30" and "bl <stub>"; the stub put
 * its struct fhook_stub in x10 and branched here with "br x16" (a "bti c"
 * lands it).  So x9 is the function's return address, x30 the address
 * past the site, sp the stack pointer of its entry: the key of its
 * shadow-stack entry (arch_regs.h), as C makes it.  We go on past the
 * site with x30 the return address, or the entry's stub when the return
 * is hooked: swapped before the function's paciasp, as C does.
 *
 * Which of the two a stub leads to (@exit: returns hooked) is fixed when
 * it is bound (FHOOK_TRAMP_GRAPH_EXIT): a probe hooks returns or not for
 * its whole life.  The unwind information is the ops trampolines' (the
 * function's callee, returning past the site, its x30 in x9) until x30
 * is swapped.
 */
.macro GRAPH_REC_ENTRY exit
	.cfi_startproc
	.cfi_signal_frame
	.cfi_return_column x16
	.cfi_register x16, x30
	.cfi_register x30, x9
	bti	c
	mrs	x11, tpidr_el0
	TLS_BLOCK 12, 11
	ldp	x13, x16, [x12]			/* the thread word; the shadow-stack header */
	FAST_ENTER 12, 13, 90f
	/*
	 * the ops and its fgraph are read inside (an unregister waits): the
	 * fgraph the stub is bound for, or one of no kind (struct fhook_stub)
	 */
	ldr	x14, [x10, #STUB_GREC]
	/* the kind's word (shadow.h FGRAPH_TRAMP_FW): disabled, or not of this kind */
	ldr	x13, [x14, #FGRAPH_TRAMP_FW + 8 * FGRAPH_TRAMP_REC(\exit)]
	ldr	w13, [x13]
	tbnz	w13, #0, 89f
	/* a tail call from a hooked function: C */
	adrp	x13, fhook_shadow_base
	ldr	x13, [x13, #:lo12:fhook_shadow_base]
	adrp	x15, fhook_shadow_size
	ldr	x15, [x15, #:lo12:fhook_shadow_size]
	sub	x13, x9, x13
	cmp	x13, x15
	b.lo	89f
.if !\exit
	/* entry only: C reaps the frames removed without their returns */
	adrp	x13, fhook_shadow_slow
	ldr	w13, [x13, #:lo12:fhook_shadow_slow]
	cbnz	w13, 89f
.endif
	REC_LIVE 14, 11, 15, 13, 89f
.if \exit
	/*
	 * SHADOW_NEXT: the next entry (x17 its stub, x13 its node), when the
	 * top entry is a caller's (deeper: stale, or this very frame's; line
	 * 0 and FHOOK_SHADOW_NONE's are no one's) and the stack is not full
	 * (the region is aligned to its size, and the stubs end at a power of
	 * two)
	 */
	ldr	x17, [x16]			/* the top entry's stub */
	NODE_OF 13, 17
	ldr	x13, [x13, #SHADOW_N_SP]
	cmp	sp, x13
	b.hs	89f
	add	x17, x17, #SHADOW_LINE
	tbnz	x17, #SHADOW_FULL_BIT, 89f
	NODE_OF 13, 17
	/* its rethook, which begins with the fgraph (the entry is not live before its top) */
	str	x14, [x13, #SHADOW_N_RETHOOK]
.endif
	/* (x13 is free again: the node is one add from its stub) */
	ldrh	w14, [x14, #FGRAPH_REC_ENTRY + 6]	/* the event's id */
	REC_ROOM 15, 11, 16, 89f
	REC_TIME 15, 16, 13, 89f
	/* everything holds (x10, the stub, is no longer needed): the record ... */
	bfi	x16, x14, #48, #16		/* time (48 bits) | id << 48 */
	sub	x14, x30, #4			/* the site */
.if \exit
	lsr	x10, x17, #SHADOW_LINE_SHIFT	/* the entry's index (the region's bits are above 16) */
	bfi	x14, x10, #48, #16		/* | idx << 48 (a site is below 2^48) */
.endif
	stp	x16, x14, [x11]
	REC_PUBLISH 15, 11, 16
.if \exit
	/* ... and the shadow-stack entry, as fprobe_handler() fills it */
	NODE_OF 13, 17
	sub	x14, x30, #4
	str	x14, [x13, #SHADOW_N_ENTRY_IP]
	stp	x9, x9, [x13, #SHADOW_N_PARENT_IP]	/* and ret_ip: a plain return address */
	stp	x9, xzr, [x13, #SHADOW_N_NEXT]		/* and unwound (the word's pad too) */
	mov	x14, sp
	str	x14, [x13, #SHADOW_N_SP]
	ldr	x16, [x12, #FHOOK_TLS_SHADOW]
	str	x17, [x16]			/* top: the entry is complete */
.endif
	FAST_LEAVE 12, 13
	.cfi_remember_state
	mov	x16, x30
	.cfi_same_value x16
.if \exit
	add	x30, x17, #SHADOW_REC_STUB	/* the return hooked */
.else
	mov	x30, x9
.endif
	.cfi_same_value x30
	ret	x16				/* into the function's body (no BTI check) */
	.cfi_restore_state
89:	FAST_LEAVE 12, 13
90:	/* the ops trampoline, as if the stub had branched there: x9, x10, x30 and sp kept */
	b	fhook_a64_tramp_args
	.cfi_endproc
.endm

	.p2align 3
	.globl	fhook_a64_tramp_grec
	.hidden	fhook_a64_tramp_grec
	.type	fhook_a64_tramp_grec, %function
fhook_a64_tramp_grec:
	GRAPH_REC_ENTRY 0
	.size	fhook_a64_tramp_grec, .-fhook_a64_tramp_grec

	.p2align 3
	.globl	fhook_a64_tramp_grec_exit
	.hidden	fhook_a64_tramp_grec_exit
	.type	fhook_a64_tramp_grec_exit, %function
fhook_a64_tramp_grec_exit:
	GRAPH_REC_ENTRY 1
	.size	fhook_a64_tramp_grec_exit, .-fhook_a64_tramp_grec_exit

/*
 * The return of an entry whose record the entry above wrote: the
 * function returned ("ret") to its line's second stub, which put its own
 * address in x17 and branched here.  x0-x8 and q0-q7 may hold the return
 * value; sp is the stack pointer of the function's entry again.  This
 * thread's top entry, in order, the same checks as the entry; then the
 * record is written, the entry freed and popped, and we return to where
 * it goes on.  Anything else goes through the line's first stub's C path.
 *
 * No frame: to an unwinder the return address is x30, the stub (whose
 * own unwind information, rethook.c, leads to the real one while the
 * entry's node holds it: it is never cleared), then where the return
 * goes on.
 */
	.p2align 3
	.globl	rethook_rec_trampoline
	.hidden	rethook_rec_trampoline
	.type	rethook_rec_trampoline, %function
rethook_rec_trampoline:
	.cfi_startproc
	bti	c
	mrs	x9, tpidr_el0
	TLS_BLOCK 10, 9
	ldp	x11, x12, [x10]			/* the thread word; the shadow-stack header */
	/*
	 * SHADOW_TOP: this thread's top entry is the stub's, hooked at this
	 * stack pointer (another thread's stub, a coroutine's, is not; nor
	 * any of FHOOK_SHADOW_NONE's)
	 */
	ldr	x13, [x12]			/* the top entry's stub */
	add	x14, x13, #SHADOW_REC_STUB
	cmp	x14, x17
	b.ne	19f
	NODE_OF 14, 13
	ldr	x15, [x14, #SHADOW_N_SP]
	cmp	sp, x15
	b.ne	19f
	FAST_ENTER 10, 11, 19f
	ldr	x15, [x14, #SHADOW_N_RETHOOK]	/* its fgraph */
	/* disabled (also when going away: rethook_going()) */
	ldr	x11, [x15, #FGRAPH_FLAGS_WORD]
	ldr	w11, [x11]
	tbnz	w11, #0, 17f
	REC_LIVE 15, 9, 16, 11, 17f
	ldrh	w15, [x15, #FGRAPH_REC_EXIT + 6]	/* the event's id */
	REC_ROOM 16, 9, 11, 17f
	REC_TIME 16, 11, 17, 17f
	/* everything holds: the record, ... */
	bfi	x11, x15, #48, #16		/* time (48 bits) | id << 48 */
	ldr	x15, [x14, #SHADOW_N_RET_IP]
	lsr	x17, x13, #SHADOW_LINE_SHIFT	/* the entry's index */
	bfi	x15, x17, #48, #16		/* | idx << 48 (the address is below 2^48) */
	stp	x11, x15, [x9]
	/*
	 * ... where it goes on, read before the entry is free (a signal
	 * handler's C may take it then) ...
	 */
	ldr	x30, [x14, #SHADOW_N_NEXT]
	str	xzr, [x14, #SHADOW_N_SP]
	REC_PUBLISH 16, 9, 11
	sub	x13, x13, #SHADOW_LINE
	str	x13, [x12]			/* ... popped */
	FAST_LEAVE 10, 11
	ret
17:	FAST_LEAVE 10, 11
	mov	x17, x13			/* (the stub's line, checked above) */
19:	/* everything else as for any entry: through the line's first stub */
	and	x17, x17, #-SHADOW_LINE
	b	rethook_trampoline
	.cfi_endproc
	.size	rethook_rec_trampoline, .-rethook_rec_trampoline

	.section .note.GNU-stack, "", %progbits
