// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Stubs: what a site's "call rel32" reaches.
 *
 * A call rel32 reaches +-2 GiB, and the trampolines in libfhook may be
 * farther than that from a program's text, so each region of stubs is
 * mapped near the objects it serves.  A stub is 16 bytes of code that
 * never changes:
 *
 *	lea	slot(%rip), %r11	; its data slot
 *	jmp	*slot.tramp(%rip)	; the trampoline
 *
 * and its data slot lives on a separate read-write page, so making a stub
 * for an ops only stores data: the code pages are written once, before
 * they become executable, and are never writable and executable at once.
 *
 * Slot 0 of every region calls the list function; the others belong to
 * one owner each, forever (see struct fhook_stub).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <stddef.h>

#include "internal.h"
#include "arch/shadow.h"

#define STUB_SIZE		16
#define REGION_CODE		4096
#define STUBS_PER_REGION	(REGION_CODE / STUB_SIZE)
#define REGION_DATA		(STUBS_PER_REGION * sizeof(struct fhook_stub))
#define REGION_SIZE		(REGION_CODE + REGION_DATA)
/*
 * Every registration takes stubs of its own, which it keeps when it is
 * gone (a preempted thread may still be on its way through one): at most
 * this many regions in one place, 65,000 stubs and 5 MB (a registration
 * takes one for each class of its sites there); the sites of the
 * registrations after them call the list stub (correct, slower).
 */
#define REGIONS_MAX		256
/* keep every site within this distance of every stub */
#define REACH			((1UL << 31) - (1UL << 24))

struct fhook_stub_region {
	struct fhook_stub_region *next;		/* all regions */
	struct fhook_stub_region *more;		/* overflow, same place */
	unsigned long code;
	struct fhook_stub *slots;
	unsigned int nr_used;
};

static struct fhook_stub_region *regions;

/*
 * What a stub's grec names while no graph trampoline that reads it (the
 * records' and the frameless ones) is its own.
 */
const unsigned int fhook_fgraph_other = FGRAPH_DISABLED_BITS;
#define OTHER	((unsigned int *)&fhook_fgraph_other)
static const struct fhook_fgraph grec_none = {
	.flags_word = OTHER,
	.tramp_fw = { OTHER, OTHER, OTHER, OTHER, OTHER, OTHER, OTHER, OTHER, OTHER },
};

static void *stub_tramp(enum fhook_tramp_kind kind, unsigned int flags, unsigned int cls);

static bool in_reach(unsigned long a, unsigned long lo, unsigned long hi)
{
	unsigned long far_lo = a > lo ? a - lo : lo - a;
	unsigned long far_hi = a + REGION_SIZE > hi ? a + REGION_SIZE - hi : hi - a;

	return far_lo < REACH && far_hi < REACH;
}

/* A region's worth of pages at @a, if they are free and in reach of [@lo, @hi]. */
static void *map_at(unsigned long a, unsigned long lo, unsigned long hi)
{
	void *p;

	if (a < (1UL << 16) || a > (1UL << 47) || !in_reach(a, lo, hi))
		return NULL;
	p = mmap((void *)a, REGION_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if ((unsigned long)p != a) {	/* old kernels ignore the flag */
		munmap(p, REGION_SIZE);
		return NULL;
	}
	return p;
}

/*
 * A region's worth of pages at @hint if it is free, else within @limit of
 * [@lo, @hi] (and in reach of every byte of it).
 */
static void *map_near(unsigned long lo, unsigned long hi, unsigned long limit,
		      unsigned long hint)
{
	const unsigned long step = 1UL << 20;
	unsigned long d;
	void *p;

	if (hint && (p = map_at(hint, lo, hi)))
		return p;
	/* below the object first: above the executable lies the heap */
	for (d = step; d < limit; d += step) {
		if ((p = map_at((lo & ~(step - 1)) - d, lo, hi)) ||
		    (p = map_at((hi & ~(step - 1)) + d + step, lo, hi)))
			return p;
	}
	return NULL;
}

static void write_stub(unsigned char *code, struct fhook_stub *slot)
{
	unsigned long ip = (unsigned long)code;
	int32_t d;

	/* lea slot(%rip), %r11 */
	code[0] = 0x4c;
	code[1] = 0x8d;
	code[2] = 0x1d;
	d = (int32_t)((long)slot - (long)(ip + 7));
	memcpy(code + 3, &d, 4);
	/* jmp *slot->tramp(%rip) */
	code[7] = 0xff;
	code[8] = 0x25;
	d = (int32_t)((long)&slot->tramp - (long)(ip + 13));
	memcpy(code + 9, &d, 4);
	memset(code + 13, INT3_INSN_OPCODE, STUB_SIZE - 13);
}

/* Slot @i of @r as it is handed out: to the list function until bound. */
static struct fhook_stub *slot_init(struct fhook_stub_region *r, unsigned int i)
{
	struct fhook_stub *s = &r->slots[i];

	s->code = r->code + i * STUB_SIZE;
	s->grec = &grec_none;
	s->tramp = stub_tramp(FHOOK_TRAMP_REGS, 0, 0);
	s->func = fhook_arch_hooks.list_func;
	return s;
}

static struct fhook_stub_region *region_new(unsigned long lo, unsigned long hi,
					    unsigned long limit, unsigned long hint)
{
	struct fhook_stub_region *r;
	unsigned char *p;
	unsigned int i;

	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	p = map_near(lo, hi, limit, hint);
	if (!p) {
		free(r);
		return NULL;
	}
	r->code = (unsigned long)p;
	r->slots = (struct fhook_stub *)(p + REGION_CODE);
	/*
	 * Every stub's code now (one page), but a slot's data only when it is
	 * handed out (fhook_stub_get()): no site jumps to an idle stub, and a
	 * process that hooks a few functions touches one of the four pages of
	 * slots, not all of them (a fault each, 10-20 us in a virtual machine).
	 */
	for (i = 0; i < STUBS_PER_REGION; i++)
		write_stub(p + i * STUB_SIZE, &r->slots[i]);
	slot_init(r, 0);
	if (mprotect(p, REGION_CODE, PROT_READ | PROT_EXEC)) {
		munmap(p, REGION_SIZE);
		free(r);
		return NULL;
	}
	r->nr_used = 1;		/* slot 0: the list function */
	/* a signal there unwinds to the site's function: two instructions, nothing pushed */
	fhook_gen_frame_plain(p, REGION_CODE);
	return r;
}

struct fhook_stub_region *fhook_region_near(unsigned long lo, unsigned long hi)
{
	struct fhook_stub_region *r;

	for (r = regions; r; r = r->next)
		if (in_reach(r->code, lo, hi))
			return r;
	r = region_new(lo, hi, REACH, 0);
	if (!r)
		return NULL;
	r->next = regions;
	regions = r;
	return r;
}

struct fhook_stub *fhook_stub_list(struct fhook_stub_region *r)
{
	return &r->slots[0];
}

_Static_assert(offsetof(struct fhook_stub, data) == 8, "trampoline.S STUB_DATA");
_Static_assert(offsetof(struct fhook_stub, func) == 16, "trampoline.S STUB_FUNC");
_Static_assert(offsetof(struct fhook_stub, grec) == 40, "graph.h STUB_GREC");
_Static_assert(offsetof(struct fhook_stub, copy_func) == 56, "trampoline.S STUB_COPY_FUNC");
_Static_assert(offsetof(struct ftrace_ops, private) == 16, "trampoline.S OPS_PRIVATE");
_Static_assert(offsetof(struct ftrace_regs, fhook_pad) == 176, "trampoline.S PAD");
_Static_assert(offsetof(struct ftrace_regs, fhook_vregs) == 192, "trampoline.S XMM");
_Static_assert(sizeof(struct ftrace_regs) == 320, "trampoline.S FREGS_SIZE");

/* [returns hooked][entry data][fregs read]: no entry data without a return hook */
static void *const lean_tramps[2][2][2] = {
	{ { fhook_tramp_fgraph_lean, fhook_tramp_fgraph_lean_fregs } },
	{ { fhook_tramp_fgraph_lean_exit, fhook_tramp_fgraph_lean_exit_fregs },
	  { fhook_tramp_fgraph_lean_exit_data, fhook_tramp_fgraph_lean_exit_data_fregs } },
};

/*
 * ... without fregs, for sites of class 1 and 2 (livein.c: the function
 * reads no argument register but %rdi and %rsi, or those and %rdx), which
 * save only those: [returns hooked + entry data][class - 1]
 */
static void *const lean_cls_tramps[3][2] = {
	{ fhook_tramp_fgraph_lean_a2, fhook_tramp_fgraph_lean_a3 },
	{ fhook_tramp_fgraph_lean_exit_a2, fhook_tramp_fgraph_lean_exit_a3 },
	{ fhook_tramp_fgraph_lean_exit_data_a2, fhook_tramp_fgraph_lean_exit_data_a3 },
};
#define LEAN_CLASSES	2

/*
 * The kind of fgraph @tramp is made for (FGRAPH_TRAMP_*), when it reads
 * the stub's: lean_tramps is laid out as FGRAPH_TRAMP_LEAN() counts, and
 * a class's entry is of its full one's kind; -1 for the others.
 */
static int grec_kind(const void *tramp)
{
	void *const *t = &lean_tramps[0][0][0];
	int i, c = fhook_gen_graph_kind(tramp);

	if (c >= 0)
		return c;		/* a copy */

	for (i = 0; i < (int)(sizeof(lean_tramps) / sizeof(t[0])); i++)
		if (t[i] && tramp == t[i])
			return i;
	for (i = 0; i < 3; i++)
		for (c = 0; c < LEAN_CLASSES; c++)
			if (tramp == lean_cls_tramps[i][c])
				return FGRAPH_TRAMP_LEAN(i > 0, i > 1, 0);
	if (tramp == (void *)fhook_tramp_grec)
		return FGRAPH_TRAMP_REC(0);
	if (tramp == (void *)fhook_tramp_grec_exit)
		return FGRAPH_TRAMP_REC(1);
	return -1;
}

_Static_assert(FGRAPH_TRAMP_LEAN(1, 1, 1) == 7 && FGRAPH_TRAMP_LEAN(0, 0, 1) == 1,
	       "lean_tramps[exit][data][fregs]");

static void *stub_tramp(enum fhook_tramp_kind kind, unsigned int flags, unsigned int cls)
{
	bool regs = kind == FHOOK_TRAMP_REGS;

#ifdef __SANITIZE_THREAD__
	/*
	 * ThreadSanitizer sees no synchronization in assembly: its builds
	 * take the C path, whose acquire load of stub->data pairs with the
	 * release in fhook_stub_set() and orders everything the owner wrote.
	 */
	flags |= FHOOK_TRAMP_C;
#endif
	if (flags & FHOOK_TRAMP_C)
		return regs ? (void *)fhook_tramp_regs_c : (void *)fhook_tramp_args_c;
	if ((flags & FHOOK_TRAMP_GRAPH_REC) && !regs)
		return (flags & FHOOK_TRAMP_GRAPH_EXIT) ? (void *)fhook_tramp_grec_exit
							: (void *)fhook_tramp_grec;
	if ((flags & FHOOK_TRAMP_FGRAPH) && (flags & FHOOK_TRAMP_LEAN) && !regs) {
		bool ret = flags & FHOOK_TRAMP_GRAPH_EXIT;
		bool data = ret && (flags & FHOOK_TRAMP_GRAPH_DATA);

		void *t;

		/* a bare copy (arch/shadow.h FGRAPH_TRAMP_LEAN_BARE) when there is one */
		if ((flags & (FHOOK_TRAMP_LEAN_BARE | FHOOK_TRAMP_GEN)) ==
		    (FHOOK_TRAMP_LEAN_BARE | FHOOK_TRAMP_GEN) && ret && !data &&
		    !(flags & FHOOK_TRAMP_LEAN_FREGS) &&
		    (t = fhook_gen_graph_bare(cls >= 1 && cls <= LEAN_CLASSES ? cls + 1 : 8)))
			return t;
		if (cls >= 1 && cls <= LEAN_CLASSES && !(flags & FHOOK_TRAMP_LEAN_FREGS))
			t = lean_cls_tramps[ret + data][cls - 1];
		else
			t = lean_tramps[ret][ret && (flags & FHOOK_TRAMP_GRAPH_DATA)]
				       [!!(flags & FHOOK_TRAMP_LEAN_FREGS)];
		/* its copy with the thread's block's offset an immediate (gen.c) */
		return (flags & FHOOK_TRAMP_GEN) ? fhook_gen_graph_tramp(t) : t;
	}
	if ((flags & FHOOK_TRAMP_FGRAPH) && !regs)
		return (flags & FHOOK_TRAMP_NOSSE) ? (void *)fhook_tramp_fgraph_nosse
						   : (void *)fhook_tramp_fgraph;
	if (flags & FHOOK_TRAMP_NOSSE)
		return regs ? (void *)fhook_tramp_regs_nosse : (void *)fhook_tramp_args_nosse;
	return regs ? (void *)fhook_tramp_regs : (void *)fhook_tramp_args;
}

/* Is @tramp generated code rather than one of trampoline.S's? */
static bool is_generated(const void *tramp)
{
	static const void *const known[] = {
		fhook_tramp_args, fhook_tramp_regs, fhook_tramp_args_nosse,
		fhook_tramp_regs_nosse, fhook_tramp_args_c, fhook_tramp_regs_c,
		fhook_tramp_fgraph, fhook_tramp_fgraph_nosse, fhook_tramp_grec,
		fhook_tramp_grec_exit,
	};
	size_t i;

	if (grec_kind(tramp) >= 0)
		return false;
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (tramp == known[i])
			return false;
	return true;
}

void fhook_stub_set(struct fhook_stub *s, enum fhook_tramp_kind kind, unsigned int flags,
		    ftrace_func_t func, void *data)
{
	const void *grec = &grec_none;
	void *gen = NULL, *tramp;
	int gk;

	if (!func) {
		/* a copy that loads the cleared data calls this (x86 keeps stores in order) */
		__atomic_store_n(&s->copy_func, (void *)fhook_gen_nop, __ATOMIC_RELAXED);
		__atomic_store_n(&s->grec, &grec_none, __ATOMIC_RELAXED);
		/*
		 * The list function takes its calls now.  Generated code
		 * calls no list function: the stub goes back to a trampoline
		 * first, which finds no data and takes that path.
		 */
		if (is_generated(s->tramp))
			__atomic_store_n(&s->tramp, stub_tramp(FHOOK_TRAMP_REGS, 0, 0),
					 __ATOMIC_RELEASE);
		__atomic_store_n(&s->data, NULL, __ATOMIC_RELEASE);
		return;
	}
#ifndef __SANITIZE_THREAD__
	if ((flags & FHOOK_TRAMP_IPMOD) && !(flags & (FHOOK_TRAMP_C | FHOOK_TRAMP_FGRAPH))) {
		const struct ftrace_ops *ops = data;
		void *h = (void *)ops->func;

		/* the recursion lock taken by the copy, not by ftrace_ops_assist_func() */
		gen = fhook_gen_ipmod_tramp(fhook_arch_handler_fregs(h),
					    kind == FHOOK_TRAMP_REGS,
					    ops->flags & FTRACE_OPS_FL_RECURSION,
					    stub_tramp(kind, FHOOK_TRAMP_NOSSE, 0));
		if (gen)
			__atomic_store_n(&s->copy_func, h, __ATOMIC_RELAXED);
	} else if ((flags & FHOOK_TRAMP_GEN) && kind == FHOOK_TRAMP_ARGS &&
		   !(flags & (FHOOK_TRAMP_C | FHOOK_TRAMP_FGRAPH))) {
		gen = fhook_gen_ops_tramp(!(flags & FHOOK_TRAMP_NOSSE),
					  (flags & FHOOK_TRAMP_OPS_LEAN) &&
					  (s->cls == 1 || s->cls == 2) ? s->cls + 1 : 0);
		if (gen)
			__atomic_store_n(&s->copy_func, (void *)func, __ATOMIC_RELAXED);
	}
#endif
	__atomic_store_n(&s->func, func, __ATOMIC_RELAXED);
	if (gen) {
		/* data and handler first: a thread on the old trampoline reads them */
		__atomic_store_n(&s->grec, &grec_none, __ATOMIC_RELAXED);
		__atomic_store_n(&s->data, data, __ATOMIC_RELEASE);
		__atomic_store_n(&s->tramp, gen, __ATOMIC_RELEASE);
		return;
	}
	tramp = stub_tramp(kind, flags, s->cls);
	/* the records' entry with the recording's offsets as immediates (gen.c) */
	if ((tramp == (void *)fhook_tramp_grec || tramp == (void *)fhook_tramp_grec_exit) &&
	    (flags & FHOOK_TRAMP_GEN)) {
		const struct fhook_fgraph *fg = ((struct ftrace_ops *)data)->private;
		void *c = fhook_gen_grec_tramp(tramp == (void *)fhook_tramp_grec_exit,
					       __atomic_load_n(&fg->rec_tls, __ATOMIC_RELAXED));

		if (c)
			tramp = c;
	}
	gk = grec_kind(tramp);
	if (gk >= 0) {
		struct fhook_fgraph *fg = ((struct ftrace_ops *)data)->private;

		/* this kind reads the probe's flags from now on */
		__atomic_store_n(&fg->tramp_fw[gk],
				 __atomic_load_n(&fg->flags_word, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
		grec = fg;
	}
	/* before the trampoline that reads it (and x86 keeps stores in order) */
	__atomic_store_n(&s->grec, grec, __ATOMIC_RELAXED);
	__atomic_store_n(&s->tramp, tramp, __ATOMIC_RELEASE);
	__atomic_store_n(&s->data, data, __ATOMIC_RELEASE);
}

/*
 * A thread that read the stub's trampoline before the switch still goes
 * through it, with the handler: both are set before the code is.
 */
void fhook_stub_set_direct(struct fhook_stub *s, void *code, ftrace_func_t func, void *data)
{
	__atomic_store_n(&s->grec, &grec_none, __ATOMIC_RELAXED);
	__atomic_store_n(&s->func, func, __ATOMIC_RELAXED);
	__atomic_store_n(&s->data, data, __ATOMIC_RELEASE);
	__atomic_store_n(&s->tramp, code, __ATOMIC_RELEASE);
}

/*
 * The stubs handed out lately, by region, owner and class: a slot keeps its
 * owner forever and a region is never freed, so an entry stays true.
 * Without it, each site of an update that names another owner than its
 * neighbour scans every slot of its region: 2,000 ops of one site each,
 * 2,000 x 2,000 per update.  Read and written under ftrace_lock.
 */
#define STUB_CACHE	4096

struct stub_cached {
	const struct fhook_stub_region *r;
	const void *owner;
	struct fhook_stub *s;
	unsigned int cls;
};

static struct stub_cached *stub_cache;

static struct stub_cached *stub_cached(const struct fhook_stub_region *r, const void *owner,
				       unsigned int cls)
{
	/* (owners are consecutive cookies: their low bits differ) */
	unsigned long h = (unsigned long)owner ^ ((unsigned long)r >> 12) ^ (unsigned long)cls << 40;

	/*
	 * Mapped, not calloc'd: 128 KiB that calloc would clear byte by byte
	 * from the heap, where fresh pages are zero and only those a program's
	 * few ops touch are ever faulted in.
	 */
	if (!stub_cache) {
		void *p = mmap(NULL, STUB_CACHE * sizeof(*stub_cache), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		stub_cache = p == MAP_FAILED ? NULL : p;
	}
	return stub_cache ? &stub_cache[(h * 0x9e3779b97f4a7c15UL) >> 52] : NULL;
}

struct fhook_stub *fhook_stub_get(struct fhook_stub_region *r, const void *owner,
				  unsigned int cls)
{
	struct stub_cached *c = stub_cached(r, owner, cls);
	struct fhook_stub_region *head = r, *last = r;
	unsigned int i, nr = 0;

	if (c && c->r == head && c->owner == owner && c->cls == cls)
		return c->s;
	for (; r; last = r, r = r->more, nr++)
		for (i = 1; i < r->nr_used; i++)
			if (r->slots[i].owner == owner && r->slots[i].cls == cls)
				goto found;
	for (r = last; r; r = r->more) {
		if (r->nr_used < STUBS_PER_REGION) {
			struct fhook_stub *s = slot_init(r, r->nr_used);

			s->owner = owner;
			s->cls = cls;
			r->nr_used++;
			if (c)
				*c = (struct stub_cached){ head, owner, s, cls };
			return s;
		}
		if (!r->more) {
			if (nr >= REGIONS_MAX)
				return NULL;
			nr++;
			/*
			 * every site in reach of the first region is in reach
			 * of one within REACH's margin of it: right after
			 * this one (256 regions are 5 MB), else a free MiB
			 */
			r->more = region_new(head->code, head->code + REGION_CODE,
					     (1UL << 24) - (2UL << 20),
					     r->code + REGION_SIZE);
			if (!r->more)
				return NULL;
		}
	}
	return NULL;
found:
	if (c)
		*c = (struct stub_cached){ head, owner, &r->slots[i], cls };
	return &r->slots[i];
}

void fhook_stubs_set(const void *owner, enum fhook_tramp_kind kind, unsigned int flags,
		     ftrace_func_t func, void *data, void *code)
{
	struct fhook_stub_region *g, *r;
	unsigned int i;

	for (g = regions; g; g = g->next)
		for (r = g; r; r = r->more)
			for (i = 1; i < r->nr_used; i++) {
				if (r->slots[i].owner != owner)
					continue;
				if (code && func)
					fhook_stub_set_direct(&r->slots[i], code, func, data);
				else
					fhook_stub_set(&r->slots[i], kind, flags, func, data);
			}
}

struct fhook_stub *fhook_stub_of_code(unsigned long code)
{
	struct fhook_stub_region *g, *r;

	for (g = regions; g; g = g->next)
		for (r = g; r; r = r->more)
			if (code >= r->code && code < r->code + REGION_CODE &&
			    !((code - r->code) % STUB_SIZE))
				return &r->slots[(code - r->code) / STUB_SIZE];
	return NULL;
}
