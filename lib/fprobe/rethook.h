/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rethook: return hooks on a per-thread shadow stack (internal to fprobe).
 *
 * Every thread that hooks a return gets a region of a large reservation:
 *
 *	+0		RETHOOK_DEPTH code stubs, one per 64 bytes, read+exec
 *	+NODE_OFF	a line of 64 bytes per stub: struct rethook_node, then
 *			struct rethook_ret (the slot address)
 *	+HDR_OFF	struct rethook_thread
 *	+DATA_OFF	RETHOOK_DATA_MAX bytes of entry data per stub
 *
 * Stub i stands for shadow-stack entry i: a hooked function's return slot
 * holds the address of its stub, so the entry is found from the slot
 * alone, and one FDE registered with libgcc describes every stub of every
 * thread position-independently: "the return address is saved at
 * (*(CFA - 8)) + NODE_OFF + the node's ret_ip".  An unwinder that meets a stub address (C++
 * exceptions, pthread_exit and cancellation, backtrace()) steps through a
 * one-instruction pseudo-frame to the real caller without our help.
 */
#ifndef FHOOK_RETHOOK_H
#define FHOOK_RETHOOK_H

#include <stddef.h>

#include <fhook/ftrace.h>

#include "arch/arch.h"
#include "arch/shadow.h"

#define __hidden __attribute__((visibility("hidden")))

#define RETHOOK_DEPTH		SHADOW_DEPTH	/* stubs per thread; stub 0 unused */
#define RETHOOK_DATA_MAX	SHADOW_DATA_MAX
#define RETHOOK_REGION_SHIFT	SHADOW_SHIFT
#define RETHOOK_REGION_SIZE	(1UL << RETHOOK_REGION_SHIFT)
#define RETHOOK_MAX_THREADS	512
#define RETHOOK_STUB_SIZE	FHOOK_RETHOOK_STUB_SIZE
#define RETHOOK_LINE		SHADOW_LINE	/* an entry's node and return entry */
#define RETHOOK_CODE_SIZE	SHADOW_NODE_OFF	/* the stubs */
#define RETHOOK_RET_OFF		SHADOW_RET_OFF
#define RETHOOK_NODE_OFF	SHADOW_NODE_OFF
#define RETHOOK_HDR_OFF		SHADOW_HDR_OFF
#define RETHOOK_DATA_OFF	SHADOW_DATA_OFF

struct rethook_node;

typedef void (*rethook_handler_t)(struct rethook_node *node, void *data, unsigned long ret_ip,
				  struct ftrace_regs *fregs);

/* One per fprobe with an exit handler: the pool's accounting. */
struct rethook {
	/*
	 * What the graph trampolines read (arch/shadow.h); its probe is the
	 * fprobe, NULL once it is going away (the grace period covers it).
	 */
	struct fhook_fgraph fgraph;
	rethook_handler_t handler;
	long ref;		/* with a pool: 1 for the owner + one per node in flight */
	long pool_size;
	bool capped;		/* a pool (nr_maxactive): the only shared count */
	struct rethook *next_dead;	/* detached, waiting for its nodes to return */
	bool unwind;		/* also report frames removed without a return */
};

struct rethook_node {
	struct rethook *rethook;
	unsigned long entry_ip;
	unsigned long entry_parent_ip;
	unsigned long ret_ip;	/* the real return address, for reporting */
	unsigned long next;	/* where the return goes on: ret_ip, or the stub of a
				 * hook placed on the same return before this one */
	int unwound;		/* its removal without a return was reported */
};

struct rethook_ret {
	unsigned long sp;	/* the slot's address (| RETHOOK_RETURNING); 0: a hole */
	unsigned long pad;
};

/* In rethook_ret.sp (slots are 8-aligned): the return is being handled. */
#define RETHOOK_RETURNING	1UL

/* the layout the graph trampolines know (arch/shadow.h) */
_Static_assert(sizeof(struct rethook_node) == SHADOW_NODE_SIZE, "SHADOW_NODE_SIZE");
_Static_assert(offsetof(struct rethook_node, rethook) == SHADOW_N_RETHOOK, "N_RETHOOK");
_Static_assert(offsetof(struct rethook_node, entry_ip) == SHADOW_N_ENTRY_IP, "N_ENTRY_IP");
_Static_assert(offsetof(struct rethook_node, entry_parent_ip) == SHADOW_N_PARENT_IP, "N_PARENT");
_Static_assert(offsetof(struct rethook_node, ret_ip) == SHADOW_N_RET_IP, "N_RET_IP");
_Static_assert(offsetof(struct rethook_node, next) == SHADOW_N_NEXT, "N_NEXT");
_Static_assert(offsetof(struct rethook_node, unwound) == SHADOW_N_UNWOUND, "N_UNWOUND");
_Static_assert(sizeof(struct rethook_node) + sizeof(struct rethook_ret) == SHADOW_LINE, "a line");
_Static_assert(offsetof(struct rethook_ret, sp) == SHADOW_R_SP, "SHADOW_R_SP");
_Static_assert(RETHOOK_RETURNING == SHADOW_RETURNING, "SHADOW_RETURNING");
_Static_assert(offsetof(struct rethook, fgraph) == 0, "a node's rethook is its fgraph");

struct rethook_thread {
	/*
	 * The stub of the top entry: entries 1..top are in use or holes.
	 * A stub, not an index, so that the trampolines compare a slot with
	 * it and address the entry's fields from it with no arithmetic
	 * (rethook_top(), rethook_top_set()).
	 */
	unsigned long top_stub;
	int slot;		/* region number */
	int tid;		/* the thread's id, for reuse after it exited */
	int prepared;
	/* the top entry last found alive on another stack (not read again) */
	unsigned long kept_idx, kept_sp;
	int holes;		/* a return left a hole below the top (a hint) */
	unsigned int full;	/* hooks that found it full since the last slot scan */
	unsigned int scan_every;	/* doubles while scans find nothing dead */
	/* the thread's own stack, once looked up (rethook_unwind.c); 0: not yet */
	unsigned long stack_lo, stack_hi;
};

/* the trampolines read the header's first word as its top entry's stub */
_Static_assert(offsetof(struct rethook_thread, top_stub) == 0, "top_stub first");

/*
 * The anchors are the arch's (arch/shadow.h): the reservation, the bytes
 * reserved from it (RETHOOK_REGION_SIZE x regions, rethook_setup), the
 * registered rethooks that report frames removed without a return (the
 * trampolines leave all to C while there are any), the thread's header.
 */
#define rethook_base		fhook_shadow_base
#define rethook_size		fhook_shadow_size
#define rethook_unwind_users	fhook_shadow_slow
#define rethook_self		rethook_self_get()

/* The thread's header, NULL while the trampolines see none (arch/shadow.h). */
static inline struct rethook_thread *rethook_self_get(void)
{
	void *t = fhook_shadow_self;

	return t == FHOOK_SHADOW_NONE ? NULL : t;
}

static inline void rethook_self_set(struct rethook_thread *t)
{
	fhook_shadow_self = t ? (void *)t : FHOOK_SHADOW_NONE;
}

static inline unsigned long rethook_region_of(unsigned long addr)
{
	return addr & ~(RETHOOK_REGION_SIZE - 1);
}

static inline struct rethook_thread *rethook_thread_of(unsigned long base)
{
	return (struct rethook_thread *)(base + RETHOOK_HDR_OFF);
}

static inline struct rethook_ret *rethook_ret_of(unsigned long base, unsigned long idx)
{
	return (struct rethook_ret *)(base + RETHOOK_RET_OFF + idx * RETHOOK_LINE);
}

static inline struct rethook_node *rethook_node_of(unsigned long base, unsigned long idx)
{
	return (struct rethook_node *)(base + RETHOOK_NODE_OFF + idx * RETHOOK_LINE);
}

static inline unsigned long rethook_stub_of(unsigned long base, unsigned long idx)
{
	return base + idx * RETHOOK_STUB_SIZE;
}

/* The index of @t's top entry (its stub's line), loaded with @order. */
static inline unsigned long rethook_top(const struct rethook_thread *t, int order)
{
	return (__atomic_load_n(&t->top_stub, order) & (RETHOOK_REGION_SIZE - 1)) /
	       RETHOOK_STUB_SIZE;
}

/* Make entry @idx @t's top, stored with @order. */
static inline void rethook_top_set(struct rethook_thread *t, unsigned long idx, int order)
{
	__atomic_store_n(&t->top_stub, rethook_stub_of(rethook_region_of((unsigned long)t), idx),
			 order);
}

/* Is @addr one of the stubs (of any thread)? */
static inline bool rethook_is_stub(unsigned long addr)
{
	unsigned long base = __atomic_load_n(&rethook_base, __ATOMIC_RELAXED);

	return base && addr - base < __atomic_load_n(&rethook_size, __ATOMIC_RELAXED) &&
		(addr & (RETHOOK_REGION_SIZE - 1)) < RETHOOK_CODE_SIZE;
}

/*
 * What a slot's value @v is to compare with rethook_stub_of(): a stub's
 * line's first stub (the graph trampolines hook returns with the line's
 * other one, arch/shadow.h: both lead to the same entry), else @v.
 */
static inline unsigned long rethook_stub_canon(unsigned long v)
{
	return rethook_is_stub(v) ? v & ~(unsigned long)(RETHOOK_STUB_SIZE - 1) : v;
}

/* The real return address a stub stands for (the one its entry reports). */
static inline unsigned long rethook_stub_ret_ip(unsigned long stub)
{
	unsigned long base = stub & ~(RETHOOK_REGION_SIZE - 1);

	return rethook_node_of(base, (stub - base) / RETHOOK_STUB_SIZE)->ret_ip;
}

int rethook_setup(void) __hidden;
/* fprobe.c: graph records (arch/shadow.h) for a registered probe */
struct fprobe;
void fprobe_graph_rec(struct fprobe *fp, long tls, unsigned long entry, unsigned long exit)
	__hidden;
struct rethook *rethook_alloc(void *data, rethook_handler_t handler, long pool_size,
			      bool unwind) __hidden;
void rethook_free(struct rethook *rh) __hidden;
struct rethook_node *rethook_try_get(struct rethook *rh, unsigned long sp,
				     unsigned long ret) __hidden;
void rethook_recycle(struct rethook_node *node) __hidden;
void rethook_hook(struct rethook_node *node, unsigned long sp, unsigned long *ret) __hidden;
bool rethook_drop_entry(unsigned long base, unsigned long i, bool locked) __hidden;
void rethook_for_each_pending(void (*fn)(void *probe, unsigned long entry_ip,
					 unsigned long slot, void *arg), void *arg) __hidden;

/* rethook_unwind.c: frames removed without a return */
void rethook_report_unwound(struct rethook_node *node, bool locked) __hidden;
bool rethook_on_own_stack(struct rethook_thread *t, unsigned long a, unsigned long b) __hidden;
void rethook_reap_deeper(unsigned long sp, bool locked) __hidden;
void *rethook_personality_addr(void) __hidden;
void rethook_unwind_init(void *libgcc) __hidden;

/*
 * The shadow-stack slot (1..RETHOOK_DEPTH-1) whose entry data @data is:
 * what an fprobe handler can tell a trace reader to pair an exit with its
 * entry, without storing the function's address twice.
 */
static inline unsigned long rethook_data_index(const void *data)
{
	unsigned long off = (unsigned long)data & (RETHOOK_REGION_SIZE - 1);

	return (off - RETHOOK_DATA_OFF) / RETHOOK_DATA_MAX;
}

/*
 * Can a reader pair the exit of the entry whose data is @data with its
 * entry by slot?  It keeps a thread's open calls as one stack, so only
 * when the entry is this thread's top one: not after a switch of stacks
 * (ucontext, coroutines: another stack's entries above it), nor for
 * another thread's entry (a coroutine resumed there); those exits carry
 * their function's address.  For an exit handler: the entry is popped
 * after it.
 */
static inline bool rethook_data_pairs(const void *data)
{
	struct rethook_thread *t = rethook_self;

	return t && rethook_region_of((unsigned long)data) == rethook_region_of((unsigned long)t) &&
	       rethook_data_index(data) == rethook_top(t, __ATOMIC_RELAXED);
}

static inline void *rethook_node_data(struct rethook_node *node)
{
	unsigned long base = (unsigned long)node & ~(RETHOOK_REGION_SIZE - 1);
	unsigned long idx = ((unsigned long)node - base - RETHOOK_NODE_OFF) / RETHOOK_LINE;

	return (void *)(base + RETHOOK_DATA_OFF + idx * RETHOOK_DATA_MAX);
}

#endif
