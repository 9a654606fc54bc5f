/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Assembler macros the graph trampolines share (trampoline.S, graph_rec.S,
 * rethook_tramp.S): the shadow-stack push and the checks and writes of
 * graph records, on the layout of arch/shadow.h.  Included by assembly
 * only.  Local labels 1001-1009 are the macros' own.
 */
#ifndef FHOOK_ARCH_X86_64_GRAPH_H
#define FHOOK_ARCH_X86_64_GRAPH_H

#include "arch/shadow.h"
#include "util/thread_word.h"
#include "gen_layout.h"

/* struct fhook_stub's grec (arch.h): the fgraph a stub is bound for, checked in stubs.c */
#define STUB_GREC	40

/*
 * Generated copies (gen.c): a template's instruction that ends here has a
 * field @pos bytes before its end that the copy gets patched: GEN_TLS,
 * the thread's block's offset from the thread pointer + @arg; GEN_WORD,
 * the %rip-relative displacement of word @arg on the page after the
 * copy's (what the template reaches outside itself); GEN_REC and
 * GEN_CPU, a recording's offsets + @arg; GEN_PCREL, a displacement to
 * the library's own variable.  The entry says
 * where relative to itself: read-only, nothing for the loader to
 * relocate (no page written at start-up).  @kind: gen_layout.h.
 */

.macro GEN_RELOC kind, pos, arg
.Lgen_reloc\@:
	.pushsection fhook_gen_relocs, "a"
	.balign	4
	.long	.Lgen_reloc\@ - .
	.short	\kind, \pos
	.long	\arg
	.popsection
.endm

/*
 * @tls = the offset of the thread's block (util/thread_word.h struct
 * fhook_tls: its word first) from the thread pointer
 */
.macro TLS_WORDS tls
	movq	fhook_tls@gottpoff(%rip), \tls
.endm

/*
 * @hdr = the thread's header; @tls as TLS_WORDS left it, else one is
 * loaded into @tmp; "gen": a template's, patched (GEN_RELOC)
 */
.macro SHADOW_SELF hdr, tmp, tls
	.ifc \tls,gen
	movq	%fs:0x7ffffff0, \hdr
	GEN_RELOC GEN_TLS, 4, FHOOK_TLS_SHADOW
	.exitm
	.endif
	.ifb \tls
	TLS_WORDS \tmp
	movq	%fs:FHOOK_TLS_SHADOW(\tmp), \hdr
	.else
	movq	%fs:FHOOK_TLS_SHADOW(\tls), \hdr
	.endif
.endm

/*
 * A node's field @f, from its stub: stub i and line i are the same
 * distance from their arrays, so every field is one displacement from
 * the stub (arch/shadow.h), and a header's top is a stub.
 */
#define NODE(f)		(SHADOW_NODE_OFF + (f))

/*
 * The next shadow-stack entry for a return whose slot's address is in
 * the register @slot: @hdr = the thread's header (its top entry's stub
 * first), @stub = the entry's stub; to @fail when the thread has no
 * region yet (its header is FHOOK_SHADOW_NONE's, whose top entry is no
 * caller's), the top entry is not a caller's (stale, or this very
 * slot's), or it is full (the stub would be past the stubs: the region
 * is aligned to its size, and the stubs end at a power of two).  @tls:
 * as for SHADOW_SELF.
 */
.macro SHADOW_NEXT hdr, stub, slot, fail, tls=
	SHADOW_SELF \hdr, \stub, \tls
	movq	(\hdr), \stub			/* the top entry's */
	cmpq	NODE(SHADOW_N_SP)(\stub), \slot
	jae	\fail				/* the top entry is no caller's (line 0: none) */
	addq	$SHADOW_LINE, \stub
	testq	$SHADOW_NODE_OFF, \stub
	jnz	\fail
.endm

/*
 * The entry a return through the stub in the slot whose address is in
 * @slot is for, when that is the stub (at @stub_off in its line) of this
 * thread's top entry, hooked at this slot: @hdr = the thread's header,
 * @stub = the entry's stub; else @fail.  Another thread's stub (a
 * coroutine) is not this thread's top entry's, nor any
 * FHOOK_SHADOW_NONE's.  @tmp: for a @stub_off; @tls: as for SHADOW_SELF.
 */
.macro SHADOW_TOP hdr, stub, slot, fail, stub_off=0, tmp=, tls=
	SHADOW_SELF \hdr, \stub, \tls
	movq	(\hdr), \stub			/* the top entry's */
	.if \stub_off
	leaq	\stub_off(\stub), \tmp
	cmpq	(\slot), \tmp
	.else
	cmpq	(\slot), \stub
	.endif
	jne	\fail
	cmpq	NODE(SHADOW_N_SP)(\stub), \slot
	jne	\fail
.endm

/*
 * Hook the return whose slot is at @slot_addr (a memory operand: the
 * slot) for the entry of @stub, whose node has its rethook and entry
 * fields: the rest of the node, the return entry, the new top, and the
 * slot holding the entry's stub (at @stub_off in its line).  Clobbers
 * @tmp.
 */
.macro SHADOW_HOOK stub, hdr, slot, tmp, stub_off=0
	movq	\slot, \tmp			/* the real return address */
	movq	\tmp, NODE(SHADOW_N_NEXT)(\stub)
	movq	\tmp, NODE(SHADOW_N_RET_IP)(\stub)
	movl	$0, NODE(SHADOW_N_UNWOUND)(\stub)
	leaq	\slot, \tmp
	movq	\tmp, NODE(SHADOW_N_SP)(\stub)
	movq	\stub, (\hdr)			/* top: the entry is complete */
	.if \stub_off
	leaq	\stub_off(\stub), \tmp
	movq	\tmp, \slot
	.else
	movq	\stub, \slot
	.endif
.endm

/*
 * Pop the entry of @stub (the thread's header @hdr), whose slot is @slot
 * (a memory operand): the entry free, the slot plain again, the top one
 * lower.  Free first: C in a signal handler meanwhile finds a hole, where
 * a live entry whose slot no longer held its stub would be a frame gone
 * without its return.  Changes no flag (a test before it still holds
 * after).  Clobbers @tmp.
 */
.macro SHADOW_POP stub, hdr, slot, tmp
	movq	$0, NODE(SHADOW_N_SP)(\stub)
	movq	NODE(SHADOW_N_NEXT)(\stub), \tmp
	movq	\tmp, \slot
	leaq	-SHADOW_LINE(\stub), \tmp
	movq	\tmp, (\hdr)
.endm

/* @tmp = the entry index of @stub (its line), for a record's 16 bits */
.macro STUB_INDEX stub, tmp
	movq	\stub, \tmp
	shrq	$SHADOW_LINE_SHIFT, \tmp	/* (the region's bits are above 16) */
.endm

/*
 * To @fail when the probe of @fgraph is disabled, for a trampoline made
 * for fgraphs of @kind (FGRAPH_TRAMP_*): or when @fgraph is not of that
 * kind (its word for the kind is fhook_fgraph_other's).  @tmp = the word's
 * address.
 */
.macro KIND_DISABLED fgraph, kind, tmp, fail
	movq	FGRAPH_TRAMP_FW+8*(\kind)(\fgraph), \tmp
	testl	$FGRAPH_DISABLED_BITS, (\tmp)
	jnz	\fail
.endm

/* To @fail when the probe of @fgraph is disabled (its flags say so now). */
.macro PROBE_DISABLED fgraph, tmp, fail
	movq	FGRAPH_FLAGS_WORD(\fgraph), \tmp
	testl	$FGRAPH_DISABLED_BITS, (\tmp)
	jnz	\fail
.endm

#if SHADOW_DATA_MAX != 4 * SHADOW_LINE || SHADOW_SHIFT - SHADOW_LINE_SHIFT > 16
#error "ENTRY_DATA_AT scales a stub's offset by 4; STUB_INDEX keeps 16 bits"
#endif

/*
 * @data = the entry data of the entry of @stub, from the thread's header
 * @hdr: the region + SHADOW_DATA_OFF + 4 x the stub's offset, which is
 * 4 x (@stub - @hdr) + @hdr + 3 x SHADOW_HDR_OFF + SHADOW_DATA_OFF
 */
.macro ENTRY_DATA_AT data, hdr, stub
	movq	\stub, \data
	subq	\hdr, \data
	leaq	3*SHADOW_HDR_OFF+SHADOW_DATA_OFF(\hdr,\data,4), \data
.endm

/* ... if @fgraph's handlers take it, else 0 */
.macro ENTRY_DATA data, fgraph, hdr, stub
	xorl	\data\()d, \data\()d
	testq	$FGRAPH_FL_DATA, FGRAPH_FLAGS(\fgraph)
	jz	1004f
	ENTRY_DATA_AT \data, \hdr, \stub
1004:
.endm

/*
 * The recording of @fgraph's records is live, and the thread on its last
 * record's cpu (REC_G_TAG); else @fail.  Leaves @w = the writer's offset
 * from the thread pointer.  @gen: in a template (GEN_RELOC).
 */
.macro REC_LIVE fgraph, w, tmp, tmp32, fail, gen=0
	movq	FGRAPH_REC_TLS(\fgraph), \w
	movq	fhook_rec_g+REC_G_CPU(%rip), \tmp
	.if \gen
	GEN_RELOC GEN_PCREL, 4, 0
	.endif
	movl	%fs:(\tmp), \tmp32
	orq	fhook_rec_g+REC_G_TAG(%rip), \tmp
	.if \gen
	GEN_RELOC GEN_PCREL, 4, 0
	.endif
	cmpq	%fs:REC_W_TAG(\w), \tmp
	jne	\fail
.endm

/*
 * ... in a template (GEN_RELOC): the writer's and the cpu's offsets are
 * the copy's immediates (GEN_REC, GEN_CPU), the switch is read from the
 * library, within reach of the copy (GEN_PCREL).
 */
.macro REC_LIVE_GEN tmp, tmp32, fail
	movl	%fs:0x7ffffff0, \tmp32
	GEN_RELOC GEN_CPU, 4, 0
	orq	fhook_rec_g+REC_G_TAG(%rip), \tmp
	GEN_RELOC GEN_PCREL, 4, 0
	cmpq	%fs:0x7ffffff0, \tmp
	GEN_RELOC GEN_REC, 4, REC_W_TAG
	jne	\fail
.endm

/* @pos = where the record goes, when it fits below the writer's limit; else @fail */
.macro REC_ROOM w, pos, fail
	movq	%fs:REC_W_WPTR(\w), \pos
	cmpq	%fs:REC_W_WLIM(\w), \pos
	jae	\fail
.endm

/*
 * The record's time (the TSC: graph records' clock has no base) into its
 * first word at @pos, when the time's high 32 bits are those of the last
 * record C wrote: the reader extends 48 bits of time from the record
 * before, which is then less than 2^32 away (C takes a gap from that
 * record of 2^46 as one).  Else @fail, having written only bytes past the
 * head, which are ours.  Clobbers %rax and %rdx; the id's 16 bits are the
 * caller's.
 */
.macro REC_TIME w, pos, fail
	rdtsc
	cmpl	%fs:REC_W_LAST_TS+4(\w), %edx
	jne	\fail
	movl	%eax, (\pos)
	movw	%dx, 4(\pos)
.endm

/*
 * The record is written: publish it (head with the ring's release, x86
 * stores).  Only this thread writes its ring's header, and a signal
 * handler's records meanwhile go to C, which refuses them: plain adds.
 */
.macro REC_PUBLISH w, tmp
	addq	$16, %fs:REC_W_WPTR(\w)
	movq	%fs:REC_W_RING(\w), \tmp
	addq	$16, REC_RING_HEAD(\tmp)	/* (events counts it: ev_ring_events()) */
.endm

/*
 * The common cases' entry (util/thread_word.h): to @fail unless the
 * thread is known and inside nothing of ours, else one tasks section and
 * the recursion lock, in one store.  @tw as TLS_WORDS left it.
 */
.macro FAST_ENTER tw, tmp, fail
	.ifc \tw,gen
	cmpq	$FHOOK_TW_IDLE, %fs:0x7ffffff0
	GEN_RELOC GEN_TLS, 5, FHOOK_TLS_TW
	jne	\fail
	movabsq	$FHOOK_TW_FAST, \tmp
	movq	\tmp, %fs:0x7ffffff0
	GEN_RELOC GEN_TLS, 4, FHOOK_TLS_TW
	.else
	cmpq	$FHOOK_TW_IDLE, %fs:(\tw)
	jne	\fail
	movabsq	$FHOOK_TW_FAST, \tmp
	movq	\tmp, %fs:(\tw)
	.endif
.endm

/* ... and its leave: the word as FAST_ENTER found it ("gen": in a template) */
.macro FAST_LEAVE tw, gen=0
	.if \gen
	movq	$FHOOK_TW_IDLE, %fs:0x7ffffff0
	GEN_RELOC GEN_TLS, 8, FHOOK_TLS_TW
	.else
	TLS_WORDS \tw
	movq	$FHOOK_TW_IDLE, %fs:(\tw)
	.endif
.endm

/* A jump to word @k on the page after a generated copy's (GEN_RELOC) */
.macro GEN_JMP k
	jmp	*0x7ffffff0(%rip)
	GEN_RELOC GEN_WORD, 4, \k
.endm

#endif /* FHOOK_ARCH_X86_64_GRAPH_H */
