/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The shadow stack of return hooks, as the graph trampolines see it.
 *
 * The fprobe layer owns the shadow stack (lib/fprobe/rethook.[ch]) and
 * keeps its rules; the trampolines of an architecture take its common
 * cases without calling C (the kernel's fgraph: push an entry, call the
 * handler, pop it on return), and need its layout and anchors for that.
 * So the layout is part of the contract between the two, here, and the
 * anchors (where the reservation is, each thread's region) are the
 * arch's variables that the fprobe layer sets.  Included by assembly:
 * plain definitions only outside the __ASSEMBLER__ part.
 *
 * Every thread that hooks a return has a region of 1 << SHADOW_SHIFT
 * bytes, aligned to its size:
 *
 *	+0			SHADOW_DEPTH code stubs, one per SHADOW_LINE bytes
 *	+SHADOW_NODE_OFF	a line of SHADOW_LINE bytes per stub: its node
 *				(below), then its return entry
 *	+SHADOW_HDR_OFF		the thread's header: its top entry's stub first
 *	+SHADOW_DATA_OFF	SHADOW_DATA_MAX bytes of entry data per stub
 *
 * Stub i and line i are both i * SHADOW_LINE from their array's start,
 * so a stub's offset in the region is its line's offset in the lines:
 * one index computation finds everything of an entry, whose fields are
 * then each one displacement from it.
 */
#ifndef FHOOK_ARCH_SHADOW_H
#define FHOOK_ARCH_SHADOW_H

#include "arch_insn.h"

#define SHADOW_DEPTH		8192
#define SHADOW_DATA_MAX		256
#define SHADOW_SHIFT		22
#define SHADOW_REGION		(1 << SHADOW_SHIFT)
#define SHADOW_LINE_SHIFT	6
#define SHADOW_LINE		(1 << SHADOW_LINE_SHIFT)
#define SHADOW_NODE_SIZE	48
#define SHADOW_NODE_OFF		(SHADOW_DEPTH * SHADOW_LINE)
#define SHADOW_RET_OFF		(SHADOW_NODE_OFF + SHADOW_NODE_SIZE)	/* line 0's return entry */
#define SHADOW_HDR_OFF		(SHADOW_NODE_OFF + SHADOW_DEPTH * SHADOW_LINE)
#define SHADOW_DATA_OFF		(SHADOW_HDR_OFF + 4096)

#if FHOOK_RETHOOK_STUB_SIZE != SHADOW_LINE
#error "a stub per line"
#endif

/*
 * A line's stub is two: at +0 the one C and the graph entry hook returns
 * with, at +SHADOW_REC_STUB the one of entries whose record the
 * trampolines write (graph records): its return needs no test for that.
 * Either leads to the same entry (its offset rounded down to the line).
 */
#define SHADOW_REC_STUB		16
/* ... and at +SHADOW_BARE_STUB the one of the bare entries' returns (FGRAPH_TRAMP_LEAN_BARE) */
#define SHADOW_BARE_STUB	32

/* a node */
#define SHADOW_N_RETHOOK	0	/* its probe's rethook: a struct fhook_fgraph first */
#define SHADOW_N_ENTRY_IP	8
#define SHADOW_N_PARENT_IP	16
#define SHADOW_N_RET_IP		24	/* the real return address (the stubs' FDE reads it) */
#define SHADOW_N_NEXT		32	/* where the return goes on */
#define SHADOW_N_UNWOUND	40	/* int */
#define SHADOW_N_SP		(SHADOW_NODE_SIZE + SHADOW_R_SP)	/* the line's return entry's */

/*
 * a return entry: {sp}, the slot's address; sp | SHADOW_RETURNING while
 * its return is handled, 0: free.  Line 0's (no entry) is ~0: every slot
 * is below it, so the push needs no test for an empty stack.
 */
#define SHADOW_R_SP		0
#define SHADOW_RETURNING	1

/* struct fhook_fgraph */
#define FGRAPH_ENTRY		0
#define FGRAPH_EXIT		8
#define FGRAPH_PROBE		16
#define FGRAPH_RETHOOK		24
#define FGRAPH_FLAGS_WORD	32
#define FGRAPH_DISABLED_BITS	1	/* of *flags_word: FPROBE_FL_DISABLED */
#define FGRAPH_FLAGS		48

#define FGRAPH_REC_TLS		56
#define FGRAPH_REC_ENTRY	64
#define FGRAPH_REC_EXIT		72
#define FGRAPH_TRAMP_FW		80

/*
 * The trampolines that read a stub's fgraph (struct fhook_stub's grec)
 * are each made for one kind of fgraph: the frameless ones for whether
 * returns are hooked, entry data given and fregs read, the records' for
 * whether returns are hooked.  A thread that jumped into one and stalled
 * before it counted itself in may read the fgraph of a later binding of
 * the same stub, of another kind; so each reads its flags word from its
 * own word of the fgraph, which names the probe's flags for the kind the
 * fgraph's stubs are bound to and fhook_fgraph_other (disabled) for the
 * others: one load, as the flags word's own, and a kind that does not
 * match goes to C.
 */
#define FGRAPH_TRAMP_LEAN(exit, data, fregs)	((exit) * 4 + (data) * 2 + (fregs))
#define FGRAPH_TRAMP_REC(exit)			(2 + (exit))
/*
 * ... and the bare ones (generated only): returns hooked, handlers that
 * read none of the arguments they are called with but the entry's ip and
 * parent_ip (those go into the entry anyway), so none is loaded; their
 * entries return through the line's third stub, whose return calls the
 * exit handler with nothing loaded and tests no kind
 */
#define FGRAPH_TRAMP_LEAN_BARE			8
#define FGRAPH_TRAMPS				9

/* fhook_fgraph.flags */
#define FGRAPH_FL_SLOW		1	/* every call takes the C path (a pool to count) */
#define FGRAPH_FL_DATA		2	/* handlers get the entry data */
#define FGRAPH_FL_EXIT		4	/* returns are hooked */
#define FGRAPH_FL_REC		8	/* the trampolines write plain records (rec_*) */
#define FGRAPH_FL_REC_EXIT	16	/* both: one bit for the records' entry to test */
/*
 * The exit handler is proven (vecfree.h) and the probe has no pool: the
 * return calls it with no frame (rethook_tramp.S), set by the core when
 * the probe registers.
 */
#define FGRAPH_FL_LEAN_EXIT	32
/* ... and reads its fregs: the return gives it one (%rcx), with %rax and %rdx */
#define FGRAPH_FL_LEAN_FREGS	64

/*
 * Graph records: a probe whose events are plain (an entry and a return
 * record of 16 bytes, no arguments) is written by the trampolines
 * straight into the thread's ring, in the events layer's format
 * (lib/recorder/ring.h): w0 = time (48 bits) | id << 48, w1 = address
 * (48 bits) | shadow-stack slot << 48.  The writer is a thread's (events'
 * struct rec_thread begins with it), the global part the recording's
 * (struct fhook_rec_global, read rip-relative: one recording at a time).
 * The trampolines write only when the record fits below the writer's
 * limit (wptr < wlim), the cpu is the last record's and the time's high
 * 32 bits are those of the last record the events layer's C wrote; they
 * advance the write pointer wptr by 16 and publish the ring's head.
 * Everything else is the events layer's C, which keeps wptr at the
 * ring's bytes + (head modulo its size) while wlim is not 0.
 */
#define REC_W_LAST_TS		24	/* the time of the last record C wrote */
#define REC_W_RING		32	/* the ring's header: head at 0 */
#define REC_W_LAST_CPU		40	/* 32 bits, then ... */
#define REC_W_GEN		44	/* ... 32 bits: REC_G_GEN's when its ring was claimed */
#define REC_W_TAG		REC_W_LAST_CPU	/* both in one 64-bit word */
#define REC_W_WPTR		48	/* where the next record goes */
#define REC_W_WLIM		56	/* a record fits while wptr is below this; 0: none */

/*
 * The recording is live and the thread on its last record's cpu when
 * that cpu | REC_G_TAG's word (stopped | gen << 32) equals REC_W_TAG's
 * (last cpu | gen << 32): stopped is 0 or REC_G_STOPPED, a bit no cpu
 * number has, so one compare tells all three.
 */
#define REC_G_TAG		0	/* 64 bits: stopped, then ... */
#define REC_G_GEN		4	/* ... the generation */
#define REC_G_STOPPED		0x80000000
#define REC_G_CLOCK_BASE	8	/* subtracted from the clock: 0 for graph records */
#define REC_G_CPU		16	/* the offset from the thread pointer of the cpu to
					 * compare with the last record's: rseq's cpu_id, or
					 * without rseq the writer's last cpu itself (its
					 * limit then sends every 256th record to C) */

#define REC_RING_HEAD		0
#define REC_TS_BITS		48

#ifndef __ASSEMBLER__
#include <stddef.h>

#include "util/thread_word.h"

/*
 * A probe as the graph trampolines call it (ftrace_ops.private of an ops
 * flagged FHOOK_OPS_FL_FGRAPH; the first member of the fprobe layer's
 * struct rethook, which a node names).
 */
struct fhook_fgraph {
	/* int entry(probe, ip, parent_ip, fregs, data): non-zero, no return hook */
	void *entry;
	/* void exit(probe, entry_ip, ret_ip, fregs, data) */
	void *exit;
	void *probe;			/* NULL once it is going away */
	void *rethook;			/* what a node records; NULL: entry only */
	/* the probe's flags, FGRAPH_DISABLED_BITS "disabled"; all ones once going */
	unsigned int *flags_word;
	/* set as it registers: its handlers may be served bare (FGRAPH_TRAMP_LEAN_BARE) */
	unsigned long bare;
	unsigned long flags;		/* FGRAPH_FL_* */
	/* FGRAPH_FL_REC: the writer's offset from the thread pointer, ... */
	long rec_tls;
	unsigned long rec_entry;	/* ... and the events' ids << 48 */
	unsigned long rec_exit;
	/* by FGRAPH_TRAMP_*: the flags word for that kind of trampoline */
	unsigned int *tramp_fw[FGRAPH_TRAMPS];
};

_Static_assert(offsetof(struct fhook_fgraph, entry) == FGRAPH_ENTRY, "FGRAPH_ENTRY");
_Static_assert(offsetof(struct fhook_fgraph, exit) == FGRAPH_EXIT, "FGRAPH_EXIT");
_Static_assert(offsetof(struct fhook_fgraph, probe) == FGRAPH_PROBE, "FGRAPH_PROBE");
_Static_assert(offsetof(struct fhook_fgraph, rethook) == FGRAPH_RETHOOK, "FGRAPH_RETHOOK");
_Static_assert(offsetof(struct fhook_fgraph, flags_word) == FGRAPH_FLAGS_WORD, "FLAGS_WORD");
_Static_assert(offsetof(struct fhook_fgraph, flags) == FGRAPH_FLAGS, "FGRAPH_FLAGS");
_Static_assert(offsetof(struct fhook_fgraph, rec_tls) == FGRAPH_REC_TLS, "FGRAPH_REC_TLS");
_Static_assert(offsetof(struct fhook_fgraph, rec_entry) == FGRAPH_REC_ENTRY, "REC_ENTRY");
_Static_assert(offsetof(struct fhook_fgraph, rec_exit) == FGRAPH_REC_EXIT, "REC_EXIT");
_Static_assert(offsetof(struct fhook_fgraph, tramp_fw) == FGRAPH_TRAMP_FW, "TRAMP_FW");

/* What a kind of trampoline an fgraph is not bound to reads: disabled. */
extern const unsigned int fhook_fgraph_other __attribute__((visibility("hidden")));

/* No kind of trampoline bound yet (before the fgraph's stubs are bound). */
static inline void fhook_fgraph_tramps_init(struct fhook_fgraph *fg)
{
	unsigned int i;

	for (i = 0; i < FGRAPH_TRAMPS; i++)
		__atomic_store_n(&fg->tramp_fw[i], (unsigned int *)&fhook_fgraph_other,
				 __ATOMIC_RELAXED);
}

/* The fgraph's flags word is @w from now on, for every kind bound too. */
static inline void fhook_fgraph_set_flags_word(struct fhook_fgraph *fg, unsigned int *w)
{
	unsigned int *old = fg->flags_word, i;

	for (i = 0; i < FGRAPH_TRAMPS; i++)
		if (fg->tramp_fw[i] == old)
			__atomic_store_n(&fg->tramp_fw[i], w, __ATOMIC_RELEASE);
	__atomic_store_n(&fg->flags_word, w, __ATOMIC_RELEASE);
}

/*
 * What every writer compares with (REC_G_*), the events layer's: a
 * generation bumped when an attached recording ends (the rings that
 * threads still name are gone), beside it the switch that stops all
 * recording; the clock's base, the cpu's offset.
 */
struct fhook_rec_global {
	unsigned int stopped;		/* 0 or REC_G_STOPPED */
	unsigned int gen;
	unsigned long clock_base;
	long cpu_off;
};

_Static_assert(offsetof(struct fhook_rec_global, stopped) == REC_G_TAG &&
	       offsetof(struct fhook_rec_global, gen) == REC_G_GEN, "REC_G_TAG");
_Static_assert(offsetof(struct fhook_rec_global, clock_base) == REC_G_CLOCK_BASE, "CLOCK_BASE");
_Static_assert(offsetof(struct fhook_rec_global, cpu_off) == REC_G_CPU, "REC_G_CPU");

extern struct fhook_rec_global fhook_rec_g __attribute__((visibility("hidden")));

/* The reservation of every region (0 until the first return hook). */
extern unsigned long fhook_shadow_base __attribute__((visibility("hidden")));
extern unsigned long fhook_shadow_size __attribute__((visibility("hidden")));
/* Non-zero: entry-only probes take the C path (frames are being unwound). */
extern int fhook_shadow_slow __attribute__((visibility("hidden")));
/*
 * What a thread's fhook_shadow_self names until it has a region
 * (util/thread_word.h): a header whose top entry's stub is such that the
 * entry's return entry is the array's second word, 0: below every slot,
 * so that the trampolines' push fails on it with no test of its own, and
 * no slot is its top entry's.  Only those two words are ever read.
 */
#define FHOOK_SHADOW_NONE	((void *)fhook_tls_none)
_Static_assert(FHOOK_TLS_NONE_DISP == SHADOW_NODE_OFF + SHADOW_N_SP, "FHOOK_TLS_NONE_DISP");
/*
 * The calling thread's region header; FHOOK_SHADOW_NONE until it hooks a
 * return.  Beside the thread word (util/thread_word.h struct fhook_tls).
 */
#define fhook_shadow_self	(fhook_tls.shadow)
#endif

#endif /* FHOOK_ARCH_SHADOW_H */
