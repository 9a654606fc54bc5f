// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Stubs (lib/arch/arch.h) on aarch64: a "bl" reaches +-128 MiB, so the
 * code a site calls sits in a region mapped near each object, as the
 * kernel places its per-ops trampolines within a bl's reach.  A region
 * holds REGION_STUBS stubs of code, written once when it is mapped and
 * never again:
 *
 *	adr	x10, <this stub's struct fhook_stub>
 *	ldr	x16, [x10]		// its trampoline
 *	br	x16			// lands on the trampoline's "bti c"
 *	brk	#0
 *
 * and, after the code, the stubs' data, which binding a stub changes
 * (trampoline, handler, data) with no code written.  x10, x11 and x16
 * are free at a function's entry (the AAPCS64 gives no argument in
 * them); x9 holds the return address the site's "mov x9, x30" kept.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "arch/shadow.h"

#define REGION_STUBS	1024
#define STUB_CODE	16
#define REGION_CODE	(REGION_STUBS * STUB_CODE)
#define REGION_SIZE	(REGION_CODE + REGION_STUBS * sizeof(struct fhook_stub))

#define A64_ADR		0x10000000u
#define A64_LDR_X16_X10	0xf9400150u
#define A64_BR_X16	0xd61f0200u

struct fhook_stub_region {
	unsigned long code;		/* REGION_CODE bytes, then the stubs */
	struct fhook_stub *stubs;
	unsigned int nr;		/* handed out */
	struct fhook_stub_region *next;
	unsigned char eh_frame[64] __attribute__((aligned(8)));	/* its code's, for libgcc */
};

static struct fhook_stub_region *regions;
static pthread_mutex_t regions_lock = PTHREAD_MUTEX_INITIALIZER;
/* the owner of the stubs that call the list function */
static const char list_owner;

_Static_assert(offsetof(struct fhook_stub, tramp) == 0, "the stubs' ldr reads tramp at 0");
_Static_assert(offsetof(struct fhook_stub, grec) == 40, "graph.h STUB_GREC");

/*
 * What a stub's grec names while it is bound to no graph records'
 * trampoline (graph_rec.S): an fgraph of no kind, whose every word says
 * disabled.  Every stub names it from the start, never NULL: a thread
 * may read a stub's grec older than the trampoline it jumped through.
 */
#define OTHER	((unsigned int *)&fhook_fgraph_other)
static const struct fhook_fgraph grec_none = {
	.flags_word = OTHER,
	.tramp_fw = { OTHER, OTHER, OTHER, OTHER, OTHER, OTHER, OTHER, OTHER, OTHER },
};

static uint32_t adr(unsigned long pc, unsigned long target, unsigned int rd)
{
	long d = (long)(target - pc);

	return A64_ADR | rd | ((uint32_t)(d & 3) << 29) | ((uint32_t)((d >> 2) & 0x7ffff) << 5);
}

/* Map REGION_SIZE bytes a bl from every address of [@lo, @hi) reaches. */
static void *map_near(unsigned long lo, unsigned long hi)
{
	unsigned long step = 1UL << 20, psz = (unsigned long)sysconf(_SC_PAGESIZE);
	unsigned long size = (REGION_SIZE + psz - 1) & ~(psz - 1);
	unsigned long i;

	/* below the object first, where nothing grows, then above it */
	for (i = 1; i < 128; i++) {
		unsigned long cand[2] = {
			lo > i * step + size ? (lo - i * step - size) & ~(psz - 1) : 0,
			(hi + i * step + psz - 1) & ~(psz - 1),
		};
		int k;

		for (k = 0; k < 2; k++) {
			unsigned long a = cand[k];
			void *p;

			if (!a || !fhook_site_in_reach(lo, a) || !fhook_site_in_reach(hi, a) ||
			    !fhook_site_in_reach(lo, a + size) || !fhook_site_in_reach(hi, a + size))
				continue;
			p = mmap((void *)a, size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (p == MAP_FAILED)
				continue;
			if ((unsigned long)p != a) {
				/* a kernel that took the flag for a hint */
				munmap(p, size);
				continue;
			}
			return p;
		}
	}
	return NULL;
}

/*
 * Unwind information for the stubs' code.  In a stub the state is the
 * site's: x30 past the site (in the traced function), x9 the function's
 * return address, sp the stack pointer of its entry.  So, as at the
 * trampoline's entry (trampoline.S): the return address column is x16,
 * found in x30; the function's x30 is in x9; a signal frame, so that the
 * function is looked up by the address past the site itself.  libgcc's
 * __register_frame() takes it: the program's own libgcc_s, else the one
 * the return-hook layer opens (fhook_arch_rethook_init()), and until
 * then the tables wait.
 */
extern void __register_frame(void *) __attribute__((weak));

#define EH_PENDING	64
static void (*eh_register)(void *);
static void *eh_pending[EH_PENDING];
static unsigned int eh_nr_pending;
static pthread_mutex_t eh_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t stubs_eh_frame(unsigned char *buf, unsigned long start, unsigned long len)
{
	unsigned char *p = buf, *cie = buf, *fde;

	p = fhook_put_u32(p, 0);		/* length, below */
	p = fhook_put_u32(p, 0);		/* CIE id */
	*p++ = 1;			/* version */
	*p++ = 'z'; *p++ = 'R'; *p++ = 'S'; *p++ = 0;
	p = fhook_put_uleb(p, 4);		/* code alignment */
	*p++ = 0x78;			/* data alignment -8 */
	*p++ = 16;			/* return address column: x16 */
	p = fhook_put_uleb(p, 1);		/* augmentation data length */
	*p++ = 0x00;			/* FDE addresses: DW_EH_PE_absptr */
	*p++ = 0x0c; *p++ = 31; *p++ = 0;	/* DW_CFA_def_cfa sp, 0 */
	*p++ = 0x09; *p++ = 16; *p++ = 30;	/* DW_CFA_register x16, x30 */
	*p++ = 0x09; *p++ = 30; *p++ = 9;	/* DW_CFA_register x30, x9 */
	while ((p - cie) % 8)
		*p++ = 0;		/* DW_CFA_nop */
	fhook_put_u32(cie, (uint32_t)(p - cie - 4));
	fde = p;
	p = fhook_put_u32(p, 0);
	p = fhook_put_u32(p, (uint32_t)(p - cie));	/* CIE pointer: back to the CIE */
	p = fhook_put_u64(p, start);
	p = fhook_put_u64(p, len);
	p = fhook_put_uleb(p, 0);		/* no augmentation data */
	while ((p - fde) % 8)
		*p++ = 0;
	fhook_put_u32(fde, (uint32_t)(p - fde - 4));
	p = fhook_put_u32(p, 0);		/* terminator */
	return p - buf;
}

static void eh_frame_register(void *eh)
{
	void (*reg)(void *);

	pthread_mutex_lock(&eh_lock);
	reg = eh_register ? eh_register : __register_frame;
	if (reg)
		reg(eh);
	else if (eh_nr_pending < EH_PENDING)
		eh_pending[eh_nr_pending++] = eh;
	pthread_mutex_unlock(&eh_lock);
}

/* libgcc_s as the return-hook layer opened it (hooks.c): register what waited */
void fhook_a64_unwind_init(void *libgcc)
{
	void (*reg)(void *) = libgcc ? (void (*)(void *))dlsym(libgcc, "__register_frame") : NULL;

	if (!reg)
		return;
	pthread_mutex_lock(&eh_lock);
	if (!__register_frame && !eh_register)
		eh_register = reg;
	reg = eh_register ? eh_register : __register_frame;
	while (eh_nr_pending)
		reg(eh_pending[--eh_nr_pending]);
	pthread_mutex_unlock(&eh_lock);
}

static bool reaches(const struct fhook_stub_region *r, unsigned long lo, unsigned long hi)
{
	return fhook_site_in_reach(lo, r->code) && fhook_site_in_reach(hi, r->code) &&
	       fhook_site_in_reach(lo, r->code + REGION_CODE) &&
	       fhook_site_in_reach(hi, r->code + REGION_CODE);
}

struct fhook_stub_region *fhook_region_near(unsigned long lo, unsigned long hi)
{
	struct fhook_stub_region *r;
	unsigned char *p;
	unsigned int i;

	pthread_mutex_lock(&regions_lock);
	for (r = regions; r; r = r->next)
		if (r->nr < REGION_STUBS && reaches(r, lo, hi))
			goto out;
	r = calloc(1, sizeof(*r));
	p = r ? map_near(lo, hi) : NULL;
	if (!p) {
		free(r);
		r = NULL;
		goto out;
	}
	r->code = (unsigned long)p;
	r->stubs = (struct fhook_stub *)(p + REGION_CODE);
	for (i = 0; i < REGION_STUBS; i++) {
		unsigned long pc = r->code + i * STUB_CODE;
		uint32_t w[4] = { adr(pc, (unsigned long)&r->stubs[i], 10), A64_LDR_X16_X10,
				  A64_BR_X16, A64_BRK };

		memcpy((void *)pc, w, sizeof(w));
		r->stubs[i].code = pc;
		r->stubs[i].tramp = fhook_a64_tramp_args;
		r->stubs[i].grec = &grec_none;
	}
	if (mprotect(p, REGION_CODE, PROT_READ | PROT_EXEC)) {
		munmap(p, (REGION_SIZE + (unsigned long)sysconf(_SC_PAGESIZE) - 1) &
			  ~((unsigned long)sysconf(_SC_PAGESIZE) - 1));
		free(r);
		r = NULL;
		goto out;
	}
	__builtin___clear_cache((char *)p, (char *)p + REGION_CODE);
	stubs_eh_frame(r->eh_frame, r->code, REGION_CODE);
	eh_frame_register(r->eh_frame);
	r->next = regions;
	__atomic_store_n(&regions, r, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&regions_lock);
	return r;
}

static struct fhook_stub *stub_for(struct fhook_stub_region *r, const void *owner)
{
	struct fhook_stub *s = NULL;
	unsigned int i;

	if (!r)
		return NULL;
	pthread_mutex_lock(&regions_lock);
	for (i = 0; i < r->nr; i++)
		if (r->stubs[i].owner == owner) {
			s = &r->stubs[i];
			goto out;
		}
	if (r->nr == REGION_STUBS)
		goto out;
	s = &r->stubs[r->nr];
	s->owner = owner;
	s->cls = 0;
	__atomic_store_n(&r->nr, r->nr + 1, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&regions_lock);
	return s;
}

struct fhook_stub *fhook_stub_get(struct fhook_stub_region *r, const void *owner,
				  unsigned int cls)
{
	(void)cls;
	return stub_for(r, owner);
}

/*
 * The list function serves every ops of a shared site, a SAVE_REGS one's
 * too (a kprobe beside an fprobe): its stub saves the full set, as the
 * site's flags then say (FTRACE_FL_REGS); with the arguments alone,
 * ftrace_ops_list_func() would skip the SAVE_REGS ops.
 */
struct fhook_stub *fhook_stub_list(struct fhook_stub_region *r)
{
	struct fhook_stub *s = stub_for(r, &list_owner);

	if (s && s->tramp != (void *)fhook_a64_tramp_regs)
		__atomic_store_n(&s->tramp, (void *)fhook_a64_tramp_regs, __ATOMIC_RELEASE);
	return s;
}

/* Lock-free: called in a handler's path and by the patcher. */
struct fhook_stub *fhook_stub_of_code(unsigned long code)
{
	struct fhook_stub_region *r;

	for (r = __atomic_load_n(&regions, __ATOMIC_ACQUIRE); r; r = r->next) {
		if (code - r->code < REGION_CODE && !((code - r->code) % STUB_CODE) &&
		    (code - r->code) / STUB_CODE < __atomic_load_n(&r->nr, __ATOMIC_ACQUIRE))
			return &r->stubs[(code - r->code) / STUB_CODE];
	}
	return NULL;
}

unsigned long fhook_a64_stub_literal(unsigned long code)
{
	return (unsigned long)fhook_stub_of_code(code);
}

/*
 * The ops trampolines go through the C dispatcher (hooks->dispatch),
 * which counts the thread in the tasks word around the handler; of the
 * flags that pick a specialized x86-64 trampoline, only the graph
 * records' pick one here (graph_rec.S, falling back to the arguments'
 * ops trampoline).  FHOOK_TRAMP_C (FHOOK_SLOW_DISPATCH) keeps every call
 * on the C path.
 */
void fhook_stub_set(struct fhook_stub *s, enum fhook_tramp_kind kind, unsigned int flags,
		    ftrace_func_t func, void *data)
{
	const struct fhook_fgraph *grec = &grec_none;
	void *tramp = kind == FHOOK_TRAMP_REGS ? (void *)fhook_a64_tramp_regs
					       : (void *)fhook_a64_tramp_args;

	if (func && (flags & FHOOK_TRAMP_GRAPH_REC) && kind == FHOOK_TRAMP_ARGS &&
	    !(flags & FHOOK_TRAMP_C)) {
		struct fhook_fgraph *fg = ((struct ftrace_ops *)data)->private;
		bool exit = flags & FHOOK_TRAMP_GRAPH_EXIT;

		/* this kind reads the probe's flags from now on */
		__atomic_store_n(&fg->tramp_fw[FGRAPH_TRAMP_REC(exit)],
				 __atomic_load_n(&fg->flags_word, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
		grec = fg;
		tramp = exit ? (void *)fhook_a64_tramp_grec_exit : (void *)fhook_a64_tramp_grec;
	}
	/*
	 * The dispatcher reads data (acquire), then func: unbinding clears
	 * data only, and a thread that read the old data still finds a
	 * handler; binding sets func before data.  The records' trampoline
	 * reads grec with no acquire, then the fgraph through it: the
	 * release, which an address dependency carries to those reads, makes
	 * the fgraph's fields and its kind's word visible with it (x86-64
	 * keeps stores in order; aarch64 does not).  grec is stored before
	 * the trampoline, and unbinding names no fgraph before anything else.
	 */
	if (func)
		__atomic_store_n(&s->func, func, __ATOMIC_RELAXED);
	__atomic_store_n(&s->grec, grec, __ATOMIC_RELEASE);
	__atomic_store_n(&s->data, func ? data : NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&s->tramp, tramp, __ATOMIC_RELEASE);
}

/* No generated direct code on aarch64: the stub calls @func as any other. */
void fhook_stub_set_direct(struct fhook_stub *s, void *code, ftrace_func_t func, void *data)
{
	(void)code;
	fhook_stub_set(s, FHOOK_TRAMP_ARGS, 0, func, data);
}

void fhook_stubs_set(const void *owner, enum fhook_tramp_kind kind, unsigned int flags,
		     ftrace_func_t func, void *data, void *code)
{
	struct fhook_stub_region *r;
	unsigned int i;

	(void)code;
	for (r = __atomic_load_n(&regions, __ATOMIC_ACQUIRE); r; r = r->next)
		for (i = 0; i < __atomic_load_n(&r->nr, __ATOMIC_ACQUIRE); i++)
			if (r->stubs[i].owner == owner)
				fhook_stub_set(&r->stubs[i], kind, flags, func, data);
}

/* No decoder of what a function reads: every site is of the class that saves all. */
unsigned int fhook_arch_site_class(unsigned long ip, bool (*is_site)(unsigned long))
{
	(void)ip;
	(void)is_site;
	return 0;
}

bool fhook_arch_site_class_ready(void)
{
	return false;
}

void fhook_arch_site_class_prepare(void)
{
}
