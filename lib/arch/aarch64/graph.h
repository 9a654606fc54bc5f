/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Assembler macros of the aarch64 graph records (graph_rec.S): the
 * thread's block, the common cases' entry and leave, and the checks and
 * writes of a record, on the layouts of arch/shadow.h and
 * util/thread_word.h, as x86-64's graph.h has them.  Included by
 * assembly only.
 *
 * What differs from x86-64: no red zone, but no need for one either,
 * since x9-x17 are the AAPCS64's scratch registers and carry neither an
 * argument at a function's entry nor a return value at its return; the
 * clock is the generic timer's virtual count, read as the C writer reads
 * it (arch_insn.h fhook_arch_counter()); and the ring's head is published
 * with a store-release, the weaker memory model's price of what x86 stores
 * give for nothing.
 */
#ifndef FHOOK_ARCH_AARCH64_GRAPH_H
#define FHOOK_ARCH_AARCH64_GRAPH_H

#include "arch/shadow.h"
#include "util/thread_word.h"

/* struct fhook_stub's grec (arch.h), checked in stubs.c */
#define STUB_GREC	40

/* a node's fields are too far from its stub for one displacement: one add */
#if SHADOW_NODE_OFF & ((1 << 12) - 1) || SHADOW_NODE_OFF >> 24
#error "SHADOW_NODE_OFF is added as one immediate shifted by 12"
#endif
/* the push is full when the next stub reaches the nodes: one bit to test */
#if SHADOW_NODE_OFF != 1 << 19
#error "SHADOW_FULL_BIT"
#endif
#define SHADOW_FULL_BIT	19

#if FGRAPH_DISABLED_BITS != 1
#error "the disabled test is one tbnz of bit 0"
#endif
#if (FHOOK_TW_FAST & 0xffffffff) >> 16 || FHOOK_TW_FAST >> 48
#error "FAST_ENTER builds FHOOK_TW_FAST in two moves"
#endif

#if FHOOK_TLS_TW || REC_RING_HEAD
#error "the word and the head are stored with stlr, which takes no offset"
#endif

/*
 * The macros name registers by number (5: x5, and w5 for its low half)
 * where they use both views of one.
 */

/* x@node = the node of the entry whose stub is x@stub (arch/shadow.h) */
.macro NODE_OF node, stub
	add	x\node, x\stub, #(SHADOW_NODE_OFF >> 12), lsl #12
.endm

/*
 * x@tls = the thread's block (util/thread_word.h struct fhook_tls: the
 * thread word, then the shadow-stack header), from the thread pointer
 * already in x@tp
 */
.macro TLS_BLOCK tls, tp
	adrp	x\tls, :gottprel:fhook_tls
	ldr	x\tls, [x\tls, #:gottprel_lo12:fhook_tls]
	add	x\tls, x\tp, x\tls
.endm

/*
 * The common cases' entry (util/thread_word.h): to @fail unless the
 * thread word x@tw (its value, from the block x@tls) is FHOOK_TW_IDLE,
 * the thread known and inside nothing of ours; else one tasks section
 * and the recursion lock, in one store, which the grace period's
 * membarrier orders as it does C's (fhook_fast_enter()).  Clobbers x@tw.
 */
.macro FAST_ENTER tls, tw, fail
	cmp	x\tw, #FHOOK_TW_IDLE
	b.ne	\fail
	mov	x\tw, #(FHOOK_TW_FAST & 0xffff)
	movk	x\tw, #(FHOOK_TW_FAST >> 32), lsl #32
	str	x\tw, [x\tls]
.endm

/*
 * ... and its leave: the word as FAST_ENTER found it, with release (what
 * the section read happens before a free, as fhook_fast_leave()).
 * Clobbers x@tmp.
 */
.macro FAST_LEAVE tls, tmp
	mov	x\tmp, #FHOOK_TW_IDLE
	stlr	x\tmp, [x\tls]
.endm

/*
 * The recording of x@fgraph's records is live, and the thread on its
 * last record's cpu (REC_G_TAG): else @fail.  x@tp = the thread pointer;
 * leaves x@w = the thread's writer.  Clobbers x@tp and x@tmp.
 */
.macro REC_LIVE fgraph, tp, w, tmp, fail
	ldr	x\w, [x\fgraph, #FGRAPH_REC_TLS]
	add	x\w, x\tp, x\w
	adrp	x\tmp, fhook_rec_g
	ldr	x\tmp, [x\tmp, #:lo12:fhook_rec_g + REC_G_CPU]
	ldr	w\tmp, [x\tp, x\tmp]		/* the cpu (rseq's, or the writer's own) */
	adrp	x\tp, fhook_rec_g
	ldr	x\tp, [x\tp, #:lo12:fhook_rec_g + REC_G_TAG]
	orr	x\tmp, x\tmp, x\tp
	ldr	x\tp, [x\w, #REC_W_TAG]
	cmp	x\tmp, x\tp
	b.ne	\fail
.endm

/* x@pos = where the record goes, when it fits below the writer's limit; else @fail */
.macro REC_ROOM w, pos, tmp, fail
	ldp	x\pos, x\tmp, [x\w, #REC_W_WPTR]
	cmp	x\pos, x\tmp
	b.hs	\fail
.endm

/*
 * x@time = the clock (graph records' has no base), when its high 32 bits
 * are those of the last record C wrote: the reader extends 48 bits of
 * time from the record before, which is then less than 2^32 away (C
 * takes a gap of 2^46 from that record as one).  Else @fail.  Read as C
 * reads it (fhook_arch_counter(): the isb keeps the read after what came
 * before it), so a thread's records are in time order whoever wrote them.
 */
.macro REC_TIME w, time, tmp, fail
	isb
	mrs	x\time, cntvct_el0
	ldr	w\tmp, [x\w, #REC_W_LAST_TS + 4]
	cmp	x\tmp, x\time, lsr #32
	b.ne	\fail
.endm

/*
 * The record is written at x@pos: publish it, wptr past it and the ring's
 * head with a release, so that the reader, which acquires the head, finds
 * the record's words.  Only this thread writes its ring's header, and a
 * signal handler's records meanwhile go to C, which refuses them: plain
 * adds.  Clobbers x@w, x@pos and x@tmp.
 */
.macro REC_PUBLISH w, pos, tmp
	add	x\pos, x\pos, #16
	str	x\pos, [x\w, #REC_W_WPTR]
	ldr	x\w, [x\w, #REC_W_RING]
	ldr	x\tmp, [x\w]			/* (events counts it: ev_ring_events()) */
	add	x\tmp, x\tmp, #16
	stlr	x\tmp, [x\w]
.endm

#endif /* FHOOK_ARCH_AARCH64_GRAPH_H */
