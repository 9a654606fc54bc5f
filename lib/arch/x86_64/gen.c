// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Per-ops trampolines (the kernel's create_trampoline()): for ops that
 * alone use their sites, a copy of trampoline.S's OPS_TEMPLATE with the
 * thread word's offset from the thread pointer and the C dispatcher
 * patched in as immediates.  The generic trampolines load the thread's
 * word through the GOT, choose between handler and list function, and
 * write the ip back for handlers that may change it; the copy does none
 * of that.
 *
 * A copy is made once per kind (and for IPMODIFY, per shape), on a page
 * of its own that is written before it becomes executable and never
 * again, and is never unmapped (a preempted thread may be inside it long
 * after its ops is gone, as in the generic trampolines, which are never
 * unmapped either).  An FDE registered with libgcc describes it as the
 * template's CFI does, so unwinders walk through it from inside a
 * handler.  The ops and the handler it calls come from the stub that
 * jumped to it (its data and copy_func), read once the thread is counted
 * in: a stub serves one registration, and once that is unregistered it
 * holds no ops and fhook_gen_nop().  Nothing of an ops is in a copy, so
 * none is made per registration.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"
#include "arch/shadow.h"
#include "gen_layout.h"
#include "vecfree.h"
#include "util/recursion.h"
#include "util/tasks.h"
#include "util/thread_word.h"

#define GEN_PAGE	4096UL
#define GEN_EH_FRAME	256

extern char fhook_tmpl_ops[], fhook_tmpl_ops_tls1[], fhook_tmpl_ops_tls2[],
	fhook_tmpl_ops_func[], fhook_tmpl_ops_tls3[], fhook_tmpl_ops_ret[],
	fhook_tmpl_ops_slow[], fhook_tmpl_ops_disp[], fhook_tmpl_ops_end[];
extern char fhook_tmpl_ops_nosse[], fhook_tmpl_ops_nosse_tls1[], fhook_tmpl_ops_nosse_tls2[],
	fhook_tmpl_ops_nosse_func[], fhook_tmpl_ops_nosse_tls3[], fhook_tmpl_ops_nosse_ret[],
	fhook_tmpl_ops_nosse_slow[], fhook_tmpl_ops_nosse_disp[], fhook_tmpl_ops_nosse_end[];

struct gen_template {
	char *start, *tls1, *tls2, *func, *tls3, *ret, *disp, *end;
};

static const struct gen_template templates[2] = {
	{ fhook_tmpl_ops, fhook_tmpl_ops_tls1, fhook_tmpl_ops_tls2,
	  fhook_tmpl_ops_func, fhook_tmpl_ops_tls3, fhook_tmpl_ops_ret, fhook_tmpl_ops_disp,
	  fhook_tmpl_ops_end },
	{ fhook_tmpl_ops_nosse, fhook_tmpl_ops_nosse_tls1, fhook_tmpl_ops_nosse_tls2,
	  fhook_tmpl_ops_nosse_func, fhook_tmpl_ops_nosse_tls3, fhook_tmpl_ops_nosse_ret,
	  fhook_tmpl_ops_nosse_disp, fhook_tmpl_ops_nosse_end },
};

/*
 * The frameless templates (OPS_LEAN_TEMPLATE), for sites of class 1 and 2
 * (livein.c): the same patches, but the dispatcher's, and the generic
 * trampoline in the word on the page after.  @saves registers are
 * pushed (one byte each) from tls2 and popped from func.
 */
extern char fhook_tmpl_ops_lean2[], fhook_tmpl_ops_lean2_tls1[], fhook_tmpl_ops_lean2_tls2[],
	fhook_tmpl_ops_lean2_func[], fhook_tmpl_ops_lean2_popped[],
	fhook_tmpl_ops_lean2_tls3[], fhook_tmpl_ops_lean2_ret[], fhook_tmpl_ops_lean2_slow[],
	fhook_tmpl_ops_lean2_end[];
extern char fhook_tmpl_ops_lean3[], fhook_tmpl_ops_lean3_tls1[], fhook_tmpl_ops_lean3_tls2[],
	fhook_tmpl_ops_lean3_func[], fhook_tmpl_ops_lean3_popped[],
	fhook_tmpl_ops_lean3_tls3[], fhook_tmpl_ops_lean3_ret[], fhook_tmpl_ops_lean3_slow[],
	fhook_tmpl_ops_lean3_end[];

struct gen_lean_template {
	char *start, *tls1, *tls2, *func, *popped, *tls3, *ret, *slow, *end;
	unsigned int saves;
};

static const struct gen_lean_template lean_templates[2] = {
	{ fhook_tmpl_ops_lean2, fhook_tmpl_ops_lean2_tls1, fhook_tmpl_ops_lean2_tls2,
	  fhook_tmpl_ops_lean2_func, fhook_tmpl_ops_lean2_popped,
	  fhook_tmpl_ops_lean2_tls3, fhook_tmpl_ops_lean2_ret, fhook_tmpl_ops_lean2_slow,
	  fhook_tmpl_ops_lean2_end, 2 },
	{ fhook_tmpl_ops_lean3, fhook_tmpl_ops_lean3_tls1, fhook_tmpl_ops_lean3_tls2,
	  fhook_tmpl_ops_lean3_func, fhook_tmpl_ops_lean3_popped,
	  fhook_tmpl_ops_lean3_tls3, fhook_tmpl_ops_lean3_ret, fhook_tmpl_ops_lean3_slow,
	  fhook_tmpl_ops_lean3_end, 3 },
};

struct gen_tramp {
	struct gen_tramp *next;
	int kind;			/* GEN_SSE, GEN_NOSSE, GEN_LEAN2, GEN_LEAN3, GEN_IPMOD */
	unsigned int shape;		/* GEN_IPMOD: what it was written for */
	unsigned char *code;
};

enum { GEN_SSE, GEN_NOSSE, GEN_LEAN2, GEN_LEAN3, GEN_IPMOD };

/* What a copy calls through a stub no longer bound. */
void fhook_gen_nop(unsigned long ip, unsigned long parent_ip, void *op, void *fregs)
{
}

static struct gen_tramp *gen_list;

/*
 * libgcc's, when the program has libgcc_s (every C++ program, and any
 * that cancels threads): looked up by the dynamic linker, since the
 * per-ops copies may be made under the loader's lock, where we may not
 * dlopen(); or handed over from the return-hook layer's dlopen() of it
 * (fhook_gen_unwind_init()), before the first copy of the frameless
 * graph paths.  Without it the per-ops copies still keep frame pointers.
 */
extern void __register_frame(void *) __attribute__((weak));

struct dwarf_eh_bases {
	void *tbase, *dbase, *func;
};

extern const void *_Unwind_Find_FDE(void *pc, struct dwarf_eh_bases *bases)
	__attribute__((weak));

static void (*gen_register)(void *);
static const void *(*gen_find_fde)(void *pc, struct dwarf_eh_bases *bases);

/* libgcc's __register_frame(), or NULL */
static void (*gen_register_frame(void))(void *)
{
	void (*reg)(void *) = __atomic_load_n(&gen_register, __ATOMIC_ACQUIRE);

	return reg ? reg : __register_frame;
}

/*
 * Unwind information written before libgcc was known (copies and stub
 * pages made before the first return hook, in a program without
 * libgcc_s of its own): registered once it is.
 */
#define GEN_PENDING	64
static void *gen_pending[GEN_PENDING] __fhook_cold_bss;
static unsigned int gen_nr_pending;
static pthread_mutex_t gen_pending_lock = PTHREAD_MUTEX_INITIALIZER;

static void gen_register_eh(void *eh)
{
	void (*reg)(void *);

	pthread_mutex_lock(&gen_pending_lock);
	reg = gen_register_frame();
	if (reg)
		reg(eh);
	else if (gen_nr_pending < GEN_PENDING)
		gen_pending[gen_nr_pending++] = eh;
	pthread_mutex_unlock(&gen_pending_lock);
}

/**
 * fhook_gen_unwind_init - libgcc_s, as the return-hook layer opened it
 *
 * @libgcc: its dlopen() handle, or NULL.  Called before any return stub
 * is written (under the return-hook layer's lock).
 */
void fhook_gen_unwind_init(void *libgcc)
{
	void *reg, *find;

	if (!libgcc)
		return;
	reg = dlsym(libgcc, "__register_frame");
	find = dlsym(libgcc, "_Unwind_Find_FDE");
	if (!reg || !find)
		return;
	pthread_mutex_lock(&gen_pending_lock);
	__atomic_store_n((void **)&gen_find_fde, find, __ATOMIC_RELAXED);
	if (!__register_frame)
		__atomic_store_n((void **)&gen_register, reg, __ATOMIC_RELEASE);
	while (gen_nr_pending)
		((void (*)(void *))reg)(gen_pending[--gen_nr_pending]);
	pthread_mutex_unlock(&gen_pending_lock);
}

/*
 * The CIE of our unwind information at @buf: FDE addresses absolute, and
 * at an FDE's start the CFA %rsp + 8 with the return address below it
 * (a function's entry).  Returns where its FDE goes.
 */
static unsigned char *gen_cie(unsigned char *buf)
{
	unsigned char *p = fhook_put_u32(buf + 4, 0);	/* the length (below), the CIE id */
	uint32_t l;

	*p++ = 1;			/* version */
	*p++ = 'z'; *p++ = 'R'; *p++ = 0;
	p = fhook_put_uleb(p, 1);	/* code alignment */
	*p++ = 0x78;			/* data alignment -8 */
	*p++ = 16;			/* return address: %rip */
	p = fhook_put_uleb(p, 1);
	*p++ = 0x00;			/* FDE addresses: DW_EH_PE_absptr */
	*p++ = 0x0c; *p++ = 7; *p++ = 8;	/* DW_CFA_def_cfa %rsp, 8 */
	*p++ = 0x80 | 16; *p++ = 1;	/* DW_CFA_offset %rip, cfa - 8 */
	while ((p - buf) % 8)
		*p++ = 0;
	l = (uint32_t)(p - buf - 4);
	memcpy(buf, &l, 4);
	return p;
}

/* The start of an FDE at @fde for [@code, @code + @len); its instructions go at the return */
static unsigned char *gen_fde(unsigned char *fde, unsigned char *cie, const void *code,
			      size_t len)
{
	unsigned char *p = fhook_put_u32(fde + 4, (uint32_t)(fde + 4 - cie));	/* back to the CIE */

	p = fhook_put_u64(p, (uint64_t)(unsigned long)code);
	p = fhook_put_u64(p, len);
	*p++ = 0;			/* no augmentation data */
	return p;
}

/* The FDE at @fde ends at @p: padded, its length, the terminator; returns the end */
static unsigned char *gen_fde_end(unsigned char *fde, unsigned char *p)
{
	uint32_t l;

	while ((p - fde) % 8)
		*p++ = 0;		/* DW_CFA_nop */
	l = (uint32_t)(p - fde - 4);
	memcpy(fde, &l, 4);
	return fhook_put_u32(p, 0);
}

/*
 * A CIE and an FDE for the copy at @code, as the template's CFI says:
 * after "push %rbp" the CFA is %rsp + 16 and %rbp saved below it, after
 * "mov %rsp, %rbp" the CFA is %rbp + 16, at the "ret" %rsp + 8 again,
 * and after it (the slow path) %rbp + 16.
 */
static size_t gen_eh_frame(unsigned char *buf, const unsigned char *code, size_t len,
			   size_t ret_off)
{
	unsigned char *fde = gen_cie(buf), *p = gen_fde(fde, buf, code, len);

	*p++ = 0x40 | 1;		/* advance 1: after push %rbp */
	*p++ = 0x0e; *p++ = 16;		/* DW_CFA_def_cfa_offset 16 */
	*p++ = 0x80 | 6; *p++ = 2;	/* DW_CFA_offset %rbp, cfa - 16 */
	*p++ = 0x40 | 3;		/* advance 3: after mov %rsp, %rbp */
	*p++ = 0x0d; *p++ = 6;		/* DW_CFA_def_cfa_register %rbp */
	*p++ = 0x04;			/* DW_CFA_advance_loc4 to the ret */
	p = fhook_put_u32(p, (uint32_t)(ret_off - 4));
	*p++ = 0x0c; *p++ = 7; *p++ = 8;	/* DW_CFA_def_cfa %rsp, 8 */
	*p++ = 0xc0 | 6;		/* DW_CFA_restore %rbp */
	*p++ = 0x40 | 1;		/* advance 1: after the ret, the slow path */
	*p++ = 0x0c; *p++ = 6; *p++ = 16;	/* DW_CFA_def_cfa %rbp, 16 */
	*p++ = 0x80 | 6; *p++ = 2;	/* DW_CFA_offset %rbp, cfa - 16 */
	return (size_t)(gen_fde_end(fde, p) - buf);
}

/* DW_CFA_advance_loc of @delta bytes */
static unsigned char *gen_advance(unsigned char *p, size_t delta)
{
	if (delta < 64) {
		*p++ = 0x40 | (unsigned char)delta;
	} else {
		*p++ = 0x04;		/* DW_CFA_advance_loc4 */
		p = fhook_put_u32(p, (uint32_t)delta);
	}
	return p;
}

/*
 * ... and for a frameless copy: the CFA is %rsp + 8, + 8 for each of the
 * @saves one-byte pushes from @push_off, - 8 for each pop from @pop_off
 * (the FDE's first part as gen_eh_frame()'s CIE has it).
 */
static size_t gen_eh_frame_lean(unsigned char *buf, const unsigned char *code, size_t len,
				size_t push_off, size_t pop_off, unsigned int saves)
{
	unsigned char *fde = gen_cie(buf), *p = gen_fde(fde, buf, code, len);
	unsigned int i;

	p = gen_advance(p, push_off + 1);
	for (i = 1; i <= saves; i++) {
		*p++ = 0x0e; *p++ = (unsigned char)(8 + 8 * i);	/* DW_CFA_def_cfa_offset */
		if (i < saves)
			p = gen_advance(p, 1);
	}
	p = gen_advance(p, pop_off + 1 - (push_off + saves));
	for (i = saves; i >= 1; i--) {
		*p++ = 0x0e; *p++ = (unsigned char)(8 * i);
		if (i > 1)
			p = gen_advance(p, 1);
	}
	return (size_t)(gen_fde_end(fde, p) - buf);
}


/* A page for a copy of @len bytes and its words (the page after); NULL: none */
static unsigned char *gen_page(size_t len)
{
	unsigned char *p;

	if (len > GEN_PAGE - GEN_EH_FRAME)
		return NULL;
	p = mmap(NULL, 2 * GEN_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* How far from the library a copy that reads its variables %rip-relative may be */
#define GEN_NEAR	(1L << 30)

/*
 * ... within GEN_NEAR of @near (a template of the library): the kernel
 * takes a hint where nothing is mapped, and the libraries and anonymous
 * mappings are usually close anyway; NULL when none of a few hints is.
 */
static unsigned char *gen_page_near(size_t len, const void *near)
{
	static const long hints[] = { 0, -(64L << 20), 64L << 20, -(256L << 20), 256L << 20,
				      -(768L << 20), 768L << 20 };
	unsigned long at = (unsigned long)near & ~(GEN_PAGE - 1);
	unsigned int i;
	unsigned char *p;
	long d;

	if (len > GEN_PAGE - GEN_EH_FRAME)
		return NULL;
	for (i = 0; i < sizeof(hints) / sizeof(hints[0]); i++) {
		p = mmap(hints[i] ? (void *)(at + hints[i]) : NULL, 2 * GEN_PAGE,
			 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			continue;
		d = (long)((unsigned long)p - at);
		if (d < GEN_NEAR && d > -GEN_NEAR)
			return p;
		munmap(p, 2 * GEN_PAGE);
	}
	return NULL;
}

/*
 * The thread word's offset from the thread pointer, read the way the
 * linker can turn into a constant when it links us statically; 0 when it
 * does not fit a displacement.
 */
static long gen_tls(void)
{
	long tls;

	__asm__("movq fhook_tls@gottpoff(%%rip), %0" : "=r"(tls));
	return tls == (int32_t)tls ? tls : 0;
}

/*
 * Make the copy at @p (@len bytes, its unwind information of @eh_len
 * bytes written at the end of its page) executable, then tell libgcc
 * about it (never about a page that is gone).
 */
static bool gen_seal(unsigned char *p, size_t len, size_t eh_len)
{
	memset(p + len, INT3_INSN_OPCODE, GEN_PAGE - GEN_EH_FRAME - len);
	if (mprotect(p, GEN_PAGE, PROT_READ | PROT_EXEC)) {
		munmap(p, 2 * GEN_PAGE);
		return false;
	}
	if (eh_len && eh_len <= GEN_EH_FRAME)
		gen_register_eh(p + GEN_PAGE - GEN_EH_FRAME);
	return true;
}

/*
 * What both templates patch alike, at the ends of their instructions
 * (@tls1 ... @tls3 their labels' offsets): the thread word's offset in
 * "cmpq $1", "movq $2" and "subq $1" of %fs:disp32.
 */
static void gen_patch(unsigned char *p, size_t tls1, size_t tls2, size_t tls3, long tls)
{
	fhook_put_u32(p + tls1 - 5, (int32_t)tls);
	fhook_put_u32(p + tls2 - 8, (int32_t)tls);
	fhook_put_u32(p + tls3 - 5, (int32_t)tls);
}

static unsigned char *gen_copy_ops(bool sse, long tls)
{
	const struct gen_template *t = &templates[sse ? 0 : 1];
	size_t len = (size_t)(t->end - t->start);
	unsigned char *p;

	if (!fhook_arch_dispatch || !(p = gen_page(len)))
		return NULL;
	memcpy(p, t->start, len);
	gen_patch(p, t->tls1 - t->start, t->tls2 - t->start, t->tls3 - t->start, tls);
	fhook_put_u64(p + (t->disp - t->start) - 8, (uint64_t)(unsigned long)fhook_arch_dispatch);
	return gen_seal(p, len, gen_eh_frame(p + GEN_PAGE - GEN_EH_FRAME, p, len,
					     (size_t)(t->ret - t->start))) ? p : NULL;
}

static unsigned char *gen_copy_lean(unsigned int saves, long tls)
{
	const struct gen_lean_template *t = &lean_templates[saves == 3];
	size_t len = (size_t)(t->end - t->start), eh_len;
	unsigned char *p;

	if (!(p = gen_page(len)))
		return NULL;
	memcpy(p, t->start, len);
	gen_patch(p, t->tls1 - t->start, t->tls2 - t->start, t->tls3 - t->start, tls);
	/* the generic trampoline this ops' stubs would take: the handler is proven */
	*(void **)(p + GEN_PAGE) = fhook_tramp_args_nosse;
	fhook_put_u32(p + (t->slow - t->start) - 4,	/* jmp *disp32(%rip) */
		      (uint32_t)(GEN_PAGE - (size_t)(t->slow - t->start)));
	eh_len = gen_eh_frame_lean(p + GEN_PAGE - GEN_EH_FRAME, p, len,
				   (size_t)(t->tls2 - t->start), (size_t)(t->func - t->start),
				   t->saves);
	return gen_seal(p, len, eh_len) ? p : NULL;
}

/**
 * fhook_gen_frame_plain - unwind information for [@code, @code + @len)
 *
 * Code that runs with its caller's return address on top of the stack and
 * nothing else pushed (the entry stubs: a lea and a jmp), registered with
 * libgcc when the process has it, so that an unwinder started by a signal
 * there (a profiler's) goes on to the caller.  Kept as long as the code,
 * which is never unmapped.
 */
void fhook_gen_frame_plain(const void *code, size_t len)
{
	unsigned char *buf, *fde;

	if (!(buf = calloc(1, 64)))
		return;
	fde = gen_cie(buf);
	gen_fde_end(fde, gen_fde(fde, buf, code, len));	/* no instructions */
	gen_register_eh(buf);
}

/* A field of a template a copy gets patched (GEN_RELOC in graph.h) */
struct gen_reloc {
	int32_t at;			/* the end of its instruction, from here */
	uint16_t kind, pos;		/* GEN_TLS or GEN_WORD; bytes from that end */
	int32_t arg;
};

extern const struct gen_reloc __start_fhook_gen_relocs[] __attribute__((visibility("hidden")));
extern const struct gen_reloc __stop_fhook_gen_relocs[] __attribute__((visibility("hidden")));

/* FHOOK_GEN=0: no generated copies at all (the trampolines of trampoline.S serve) */
static bool gen_off(void)
{
	static int off = -1;
	int v = __atomic_load_n(&off, __ATOMIC_RELAXED);

	if (v < 0) {
		const char *e = secure_getenv("FHOOK_GEN");

		v = e && !strcmp(e, "0");
		__atomic_store_n(&off, v, __ATOMIC_RELAXED);
	}
	return v;
}

/*
 * The template's own CIE and FDE, for its copy at @code (@len bytes): the
 * copy's instructions are the template's at the same offsets, so the
 * template's CFI describes it as it is.  GNU as writes a CIE of version 1,
 * "zR", FDE addresses pc-relative 4 bytes: anything else, none (0).
 */
static size_t gen_eh_frame_copy(unsigned char *buf, size_t size, const char *tmpl,
				const unsigned char *code, size_t len)
{
	const void *(*find)(void *, struct dwarf_eh_bases *) =
		__atomic_load_n(&gen_find_fde, __ATOMIC_ACQUIRE);
	struct dwarf_eh_bases bases;
	const unsigned char *fde, *cie, *q;
	uint32_t fde_len, cie_len, cie_off;
	unsigned char *p = buf;

	if (!find)
		find = _Unwind_Find_FDE;
	if (!find)
		return 0;
	fde = find((void *)(tmpl + 1), &bases);
	if (!fde || bases.func != tmpl)
		return 0;
	memcpy(&fde_len, fde, 4);
	memcpy(&cie_off, fde + 4, 4);
	cie = fde + 4 - cie_off;
	memcpy(&cie_len, cie, 4);
	if (fde_len < 12 || fde_len == 0xffffffff || cie_len == 0xffffffff ||
	    (size_t)cie_len + fde_len + 12 > size)
		return 0;
	q = cie + 8;
	if (q[0] != 1 || memcmp(q + 1, "zR", 3))
		return 0;
	for (q += 4; *q & 0x80; q++)		/* code alignment */
		;
	for (q++; *q & 0x80; q++)		/* data alignment */
		;
	q += 3;					/* its last byte, the return column, the length */
	if (q[-1] != 1 || *q != 0x1b)		/* DW_EH_PE_pcrel | DW_EH_PE_sdata4 */
		return 0;
	memcpy(p, cie, cie_len + 4);
	p += cie_len + 4;
	memcpy(p, fde, fde_len + 4);
	fhook_put_u32(p + 4, (uint32_t)(p + 4 - buf));			/* back to the CIE */
	fhook_put_u32(p + 8, (uint32_t)(int32_t)((long)code - (long)(p + 8)));
	fhook_put_u32(p + 12, (uint32_t)len);
	p += fde_len + 4;
	fhook_put_u32(p, 0);			/* the terminator */
	return (size_t)(p + 4 - buf);
}

/*
 * A copy of the template [@start, @end) with its fields patched: the
 * offsets @vals by kind (GEN_TLS: the thread's block's, GEN_REC and
 * GEN_CPU: a recording's, 0 where the template has none), the words
 * @words[@nr] on the page after the copy's, which the template reaches
 * there, and the displacements to the library's variables; unwind
 * information as the template's.  NULL: none (no memory, a field we do
 * not know, or the library out of a displacement's reach).
 */
static unsigned char *gen_copy_tmpl_at(const char *start, const char *end, const long *vals,
				       void *const *words, unsigned int nr)
{
	size_t len = (size_t)(end - start), off, eh_len = 0;
	const struct gen_reloc *r;
	unsigned char *p;
	bool pcrel = false;
	long v;
	/*
	 * libgcc allocates as it registers and looks up unwind information,
	 * maybe through the program's traced malloc: not the program's calls
	 */
	fhook_internal_guard();

	for (r = __start_fhook_gen_relocs; r < __stop_fhook_gen_relocs; r++) {
		unsigned long at = (unsigned long)&r->at + r->at;

		if (at > (unsigned long)start && at <= (unsigned long)end && r->kind == GEN_PCREL)
			pcrel = true;
	}
	if (!(p = pcrel ? gen_page_near(len, start) : gen_page(len)))
		return NULL;
	memcpy(p, start, len);
	for (r = __start_fhook_gen_relocs; r < __stop_fhook_gen_relocs; r++) {
		unsigned long at = (unsigned long)&r->at + r->at;
		int32_t d;

		if (at <= (unsigned long)start || at > (unsigned long)end)
			continue;
		off = at - (unsigned long)start;
		if (r->pos > off)
			goto fail;
		v = r->kind < GEN_VALS && r->kind != GEN_WORD ? vals[r->kind] : 0;
		if (v && (long)(int32_t)(v + r->arg) == v + r->arg)
			fhook_put_u32(p + off - r->pos, (uint32_t)(int32_t)(v + r->arg));
		else if (r->kind == GEN_WORD && r->pos == 4 && r->arg >= 0 &&
			 (unsigned int)r->arg < nr)
			fhook_put_u32(p + off - 4, (uint32_t)(GEN_PAGE + 8 * (size_t)r->arg - off));
		else if (r->kind == GEN_PCREL && r->pos >= 4) {
			/* the same target from the copy's end of the instruction */
			memcpy(&d, p + off - r->pos, 4);
			v = d + (long)start - (long)p;
			if ((long)(int32_t)v != v)
				goto fail;
			fhook_put_u32(p + off - r->pos, (uint32_t)(int32_t)v);
		} else
			goto fail;
	}
	memcpy(p + GEN_PAGE, words, nr * sizeof(*words));
	if (gen_register_frame()) {
		eh_len = gen_eh_frame_copy(p + GEN_PAGE - GEN_EH_FRAME, GEN_EH_FRAME, start, p, len);
		if (!eh_len)
			goto fail;	/* a copy an unwinder could not walk through */
	}
	return gen_seal(p, len, eh_len) ? p : NULL;
fail:
	munmap(p, 2 * GEN_PAGE);
	return NULL;
}

/* ... of a template with no recording's offsets */
static unsigned char *gen_copy_tmpl(const char *start, const char *end, long tls,
				    void *const *words, unsigned int nr)
{
	long vals[GEN_VALS] = { [GEN_TLS] = tls };

	return gen_copy_tmpl_at(start, end, vals, words, nr);
}

/*
 * The copies of the frameless graph entries that hook returns, one each
 * for the process, made on first use: the thread's block's offset an
 * immediate, the rest as in trampoline.S (GRAPH_LEAN), whose stubs'
 * bindings they take over (stubs.c).
 */

#define GRAPH_TMPL(x)							\
	extern char fhook_tmpl_fgraph_lean_##x[], fhook_tmpl_fgraph_lean_##x##_end[]
GRAPH_TMPL(exit);
GRAPH_TMPL(exit_fregs);
GRAPH_TMPL(exit_data);
GRAPH_TMPL(exit_data_fregs);
GRAPH_TMPL(exit_a2);
GRAPH_TMPL(exit_data_a2);
GRAPH_TMPL(exit_a3);
GRAPH_TMPL(exit_data_a3);
GRAPH_TMPL(bare);
GRAPH_TMPL(bare_a2);
GRAPH_TMPL(bare_a3);

static struct gen_graph {
	char *orig, *start, *end;	/* orig: trampoline.S's (none for the bare ones) */
	int kind;			/* FGRAPH_TRAMP_* */
	unsigned int saves;		/* argument registers pushed */
	void *copy;			/* once made; (void *)1: cannot be */
} gen_graphs[] = {
#define GRAPH_COPY(x, data, fregs, saves)						\
	{ fhook_tramp_fgraph_lean_##x, fhook_tmpl_fgraph_lean_##x,			\
	  fhook_tmpl_fgraph_lean_##x##_end, FGRAPH_TRAMP_LEAN(1, data, fregs), saves, NULL }
#define GRAPH_BARE(x, saves)								\
	{ NULL, fhook_tmpl_fgraph_lean_##x, fhook_tmpl_fgraph_lean_##x##_end,		\
	  FGRAPH_TRAMP_LEAN_BARE, saves, NULL }
	GRAPH_COPY(exit, 0, 0, 8),
	GRAPH_COPY(exit_fregs, 0, 1, 8),
	GRAPH_COPY(exit_data, 1, 0, 8),
	GRAPH_COPY(exit_data_fregs, 1, 1, 8),
	GRAPH_COPY(exit_a2, 0, 0, 2),
	GRAPH_COPY(exit_data_a2, 1, 0, 2),
	GRAPH_COPY(exit_a3, 0, 0, 3),
	GRAPH_COPY(exit_data_a3, 1, 0, 3),
	GRAPH_BARE(bare, 8),
	GRAPH_BARE(bare_a2, 2),
	GRAPH_BARE(bare_a3, 3),
#undef GRAPH_COPY
#undef GRAPH_BARE
};

/* the bare entries' return is there (the lines' third stubs go to it) */
static bool gen_bare_ret;

#define GEN_NONE	((void *)1)

/* The words of a graph entry's copy (the page after it): where it goes on, the shadow stack */
static void gen_graph_words(void **words, unsigned long base)
{
	words[GEN_W_FGRAPH] = fhook_tramp_fgraph;
	words[GEN_W_OWN] = fhook_tramp_fgraph_own;
	words[GEN_W_OTHER] = (void *)&fhook_fgraph_other;
	words[GEN_W_BASE] = (void *)base;
	words[GEN_W_SIZE] = (void *)fhook_shadow_size;
}

/* @g's copy, made on first use; NULL when it cannot be */
static void *gen_graph_copy(struct gen_graph *g)
{
	unsigned long base = __atomic_load_n(&fhook_shadow_base, __ATOMIC_ACQUIRE);
	long tls;

#ifdef __SANITIZE_THREAD__
	return NULL;
#endif
	if (!base || gen_off())
		return NULL;
	if (!g->copy) {
		void *words[GEN_W_GRAPH];

		gen_graph_words(words, base);
		tls = gen_tls();
		g->copy = tls ? gen_copy_tmpl(g->start, g->end, tls, words, GEN_W_GRAPH) : NULL;
		if (!g->copy)
			g->copy = GEN_NONE;
	}
	return g->copy == GEN_NONE ? NULL : g->copy;
}

/**
 * fhook_gen_graph_tramp - the copy of the frameless graph entry @tramp
 *
 * Made on first use, for the kinds that hook returns once the shadow
 * stack's reservation is there; else @tramp itself.  Called under the
 * caller's lock.
 */
void *fhook_gen_graph_tramp(void *tramp)
{
	unsigned int i;
	void *c;

	for (i = 0; i < sizeof(gen_graphs) / sizeof(gen_graphs[0]); i++)
		if (gen_graphs[i].orig && gen_graphs[i].orig == tramp)
			return (c = gen_graph_copy(&gen_graphs[i])) ? c : tramp;
	return tramp;
}

/**
 * fhook_gen_graph_bare - the bare entry (FGRAPH_TRAMP_LEAN_BARE) that
 * pushes @saves argument registers (8, 2 or 3), made on first use; NULL
 * when there is none (no copies, or no bare return for its entries).
 * Called under the caller's lock.
 */
void *fhook_gen_graph_bare(unsigned int saves)
{
	unsigned int i;

	if (!__atomic_load_n(&gen_bare_ret, __ATOMIC_ACQUIRE))
		return NULL;
	for (i = 0; i < sizeof(gen_graphs) / sizeof(gen_graphs[0]); i++)
		if (gen_graphs[i].kind == FGRAPH_TRAMP_LEAN_BARE && gen_graphs[i].saves == saves)
			return gen_graph_copy(&gen_graphs[i]);
	return NULL;
}

/*
 * The copies of the records' entries (graph_rec.S GRAPH_REC_GEN), made for
 * a recording's writer and cpu word: those are the same for every probe
 * of the process's recording (its first slot's, the only one whose
 * records the trampolines write) and every recording of it, so there are
 * one or two, kept for good as the others.
 */
extern char fhook_tmpl_grec[], fhook_tmpl_grec_end[];
extern char fhook_tmpl_grec_exit[], fhook_tmpl_grec_exit_end[];

#define GEN_GRECS	8

static struct gen_grec {
	long rec, cpu;
	bool exit;
	void *copy;
} gen_grecs[GEN_GRECS];

/**
 * fhook_gen_grec_tramp - the copy of the records' entry for @rec
 *
 * @exit: the one that hooks returns; @rec: the writer's offset from the
 * thread pointer (struct fhook_fgraph rec_tls).  Made on first use, once
 * the recording's cpu word is known and the shadow stack's reservation
 * is there; NULL when it cannot be, and graph_rec.S's serves.  Called
 * under the caller's lock.
 */
void *fhook_gen_grec_tramp(bool exit, long rec)
{
#ifndef __SANITIZE_THREAD__
	unsigned long base = __atomic_load_n(&fhook_shadow_base, __ATOMIC_ACQUIRE);
	long cpu = __atomic_load_n(&fhook_rec_g.cpu_off, __ATOMIC_RELAXED), tls;
	struct gen_grec *g;
	unsigned int i;

	if (!base || !rec || !cpu || gen_off())
		return NULL;
	for (i = 0; i < GEN_GRECS; i++) {
		g = &gen_grecs[i];
		if (g->copy && g->exit == exit && g->rec == rec && g->cpu == cpu)
			return g->copy == GEN_NONE ? NULL : g->copy;
		if (!g->copy)
			break;
	}
	if (i == GEN_GRECS || !(tls = gen_tls()))
		return NULL;
	{
		void *words[GEN_W_GRAPH];
		long vals[GEN_VALS] = { [GEN_TLS] = tls, [GEN_REC] = rec, [GEN_CPU] = cpu };

		gen_graph_words(words, base);

		g->copy = exit ? gen_copy_tmpl_at(fhook_tmpl_grec_exit, fhook_tmpl_grec_exit_end,
						  vals, words, GEN_W_GRAPH)
			       : gen_copy_tmpl_at(fhook_tmpl_grec, fhook_tmpl_grec_end, vals,
						  words, GEN_W_GRAPH);
	}
	g->exit = exit;
	g->rec = rec;
	g->cpu = cpu;
	if (!g->copy)
		g->copy = GEN_NONE;
	return g->copy == GEN_NONE ? NULL : g->copy;
#else
	return NULL;
#endif
}

/* The kind (FGRAPH_TRAMP_*) of @tramp if it is a copy of a graph entry; else -1 */
int fhook_gen_graph_kind(const void *tramp)
{
	unsigned int i;

	if (tramp == GEN_NONE)
		return -1;
	for (i = 0; i < sizeof(gen_graphs) / sizeof(gen_graphs[0]); i++)
		if (gen_graphs[i].copy == tramp)
			return gen_graphs[i].kind;
	for (i = 0; i < GEN_GRECS; i++)
		if (gen_grecs[i].copy == tramp)
			return FGRAPH_TRAMP_REC(gen_grecs[i].exit);
	return -1;
}

extern char fhook_tmpl_rethook[], fhook_tmpl_rethook_end[];
extern char fhook_tmpl_rethook_bare[], fhook_tmpl_rethook_bare_end[];
extern char fhook_tmpl_rethook_rec[], fhook_tmpl_rethook_rec_end[];
extern char rethook_tramp_not_lean[], rethook_tramp_c[];

#ifndef __SANITIZE_THREAD__
/* A copy of the return template [@start, @end) that goes on to @on when it does not take a return */
static void *gen_ret_copy(const char *start, const char *end, void *on)
{
	void *words[GEN_W_RET] = {
		[GEN_W_RET_ON] = on,
		[GEN_W_RET_C] = rethook_tramp_c,
	};
	long tls = gen_off() ? 0 : gen_tls();

	return tls ? gen_copy_tmpl(start, end, tls, words, GEN_W_RET) : NULL;
}
#endif

/**
 * fhook_gen_rethook_rec_tramp - where the lines' second stubs go (the
 * records' returns): their copy, made once, else rethook_rec_trampoline
 */
void *fhook_gen_rethook_rec_tramp(void)
{
#ifndef __SANITIZE_THREAD__
	void *p = gen_ret_copy(fhook_tmpl_rethook_rec, fhook_tmpl_rethook_rec_end,
			       rethook_trampoline);

	if (p)
		return p;
#endif
	return rethook_rec_trampoline;
}

/**
 * fhook_gen_rethook_tramp - where the return stubs go
 *
 * @bare: the lines' third stubs, the bare entries' (arch/shadow.h); else
 * their first.  The copy of the frameless return made for them; else for
 * the first, rethook_trampoline, and for the third rethook_rec_trampoline,
 * which takes any return it does not know the way of the first stub's.
 * @first: where the first stubs go, for the third's others.
 */
void *fhook_gen_rethook_tramp(bool bare, void *first)
{
#ifndef __SANITIZE_THREAD__
	void *p;

	if (bare) {
		p = gen_ret_copy(fhook_tmpl_rethook_bare, fhook_tmpl_rethook_bare_end, first);
		if (p)
			__atomic_store_n(&gen_bare_ret, true, __ATOMIC_RELEASE);
		return p ? p : rethook_rec_trampoline;
	}
	p = gen_ret_copy(fhook_tmpl_rethook, fhook_tmpl_rethook_end, rethook_tramp_not_lean);
	if (p)
		return p;
#endif
	return bare ? rethook_rec_trampoline : rethook_trampoline;
}

/**
 * fhook_gen_ops_tramp - the copy for stubs of ops that alone use their sites
 *
 * With @saves 2 or 3, the frameless one for a handler proven to read no
 * fregs, at sites whose functions read no argument register but the
 * first two or three; else the one that builds an ftrace_regs, with
 * xmm0-7 per @sse.  Made on first use and shared by every stub of its
 * kind; NULL when it cannot be (no memory), and the generic trampolines
 * serve.  Called under the caller's lock.
 */
void *fhook_gen_ops_tramp(bool sse, unsigned int saves)
{
	int kind = saves == 2 ? GEN_LEAN2 : saves == 3 ? GEN_LEAN3 : sse ? GEN_SSE : GEN_NOSSE;
	struct gen_tramp *g;
	unsigned char *p;
	long tls;

	for (g = gen_list; g; g = g->next)
		if (g->kind == kind)
			return g->code;
	tls = gen_off() ? 0 : gen_tls();
	if (!tls)
		return NULL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	p = kind >= GEN_LEAN2 ? gen_copy_lean(saves, tls) : gen_copy_ops(sse, tls);
	if (!p) {
		free(g);
		return NULL;
	}
	g->kind = kind;
	g->code = p;
	g->next = gen_list;
	gen_list = g;
	return p;
}

/*
 * The IPMODIFY copies: for an ops that may move the ip and whose handler
 * is proven (vecfree.h: a leaf naming no vector register, whose only
 * store through its fregs is the ip).  The kernel's own way of
 * redirecting one caller is such a handler: a range test of parent_ip
 * and ftrace_regs_set_instruction_pointer().  The generic trampolines
 * build the whole ftrace_regs and save every argument register (and with
 * SAVE_REGS every register and the flags) for it; the copy is written for
 * what the handler reads and changes, as the kernel's BPF trampolines
 * are written for what a program reads:
 *
 *	cmpq	$IDLE, %fs:tw		nested, or a thread not known yet:
 *	jne	slow			the generic trampoline
 *	movq	$2, %fs:tw		enter (and movl $1, %fs:tw+4 with
 *					RECURSION: FHOOK_TW_FAST)
 *	push	...			the words of pt_regs it reads, from
 *					the highest down, and the ip: a copy
 *					of the return slot (words it does not
 *					read are skipped with one sub)
 *	push	%rdi %rsi %rdx %rcx	what it clobbers: its arguments, and
 *	push	[%rax %r8 %r9 %r10]	those of these it may change
 *	movq	SLOT(%rsp), %rdi; subq $5, %rdi; movq SLOT+8(%rsp), %rsi
 *	movq	8(%r11), %rdx		the ops, from the stub (%r11 is kept
 *	leaq	FREGS(%rsp), %rcx	for this: nothing above writes it)
 *	call	*56(%r11)		the handler (its copy_func)
 *	pop	...
 *	addq	$BELOW, %rsp		the words below the ip, if any
 *	movq	$IDLE, %fs:tw		leave
 *	ret	$ABOVE			to the ip word, dropping the words
 *					above it and the return slot
 *	slow:	jmp *generic(%rip)
 *
 * fregs points where pt_regs would begin, so that each word it reads is
 * where the handler looks (those it does not read may lie anywhere, even
 * under the stack pointer: it never touches them).  A proven handler
 * needs no aligned stack and keeps to its frame, so nothing else is kept.
 */

struct gen_emit {
	unsigned char *p, *code;
	unsigned char *cfi;		/* the FDE's instructions so far */
	size_t cfi_at;			/* offset of the last CFA change */
	long depth;			/* bytes pushed since the entry */
};

static void emit(struct gen_emit *e, const void *b, size_t n)
{
	memcpy(e->p, b, n);
	e->p += n;
}

/* the CFA is %rsp + 8 + depth from here */
static void emit_cfa(struct gen_emit *e)
{
	size_t at = (size_t)(e->p - e->code);

	e->cfi = gen_advance(e->cfi, at - e->cfi_at);
	e->cfi_at = at;
	*e->cfi++ = 0x0e;		/* DW_CFA_def_cfa_offset */
	e->cfi = fhook_put_uleb(e->cfi, (unsigned long)(8 + e->depth));
}

static void emit_push(struct gen_emit *e, const void *b, size_t n)
{
	emit(e, b, n);
	e->depth += 8;
	emit_cfa(e);
}

/* push %reg (reg: 0-15, the encoding's number) */
static void emit_push_reg(struct gen_emit *e, unsigned int reg)
{
	unsigned char b[2] = { 0x41, (unsigned char)(0x50 + (reg & 7)) };

	if (reg >= 8)
		emit_push(e, b, 2);
	else
		emit_push(e, b + 1, 1);
}

static void emit_pop_reg(struct gen_emit *e, unsigned int reg)
{
	unsigned char b[2] = { 0x41, (unsigned char)(0x58 + (reg & 7)) };

	if (reg >= 8)
		emit(e, b, 2);
	else
		emit(e, b + 1, 1);
	e->depth -= 8;
	emit_cfa(e);
}

static void emit_push_imm8(struct gen_emit *e, signed char v)
{
	unsigned char b[2] = { 0x6a, (unsigned char)v };

	emit_push(e, b, 2);
}

/* op disp32(%rsp) with a ModRM of @modrm (its reg field set), after @pre */
static void emit_rsp_disp(struct gen_emit *e, const unsigned char *pre, size_t n,
			  unsigned char modrm, long disp)
{
	unsigned char b[8];

	memcpy(b, pre, n);
	b[n] = (unsigned char)(0x84 | modrm);	/* mod 10, r/m 100: SIB follows */
	b[n + 1] = 0x24;			/* base %rsp, no index */
	fhook_put_u32(b + n + 2, (uint32_t)(int32_t)disp);
	emit(e, b, n + 6);
}

/* an instruction on %fs:@tls: @pre, ModRM with @reg, SIB disp32, then @imm of @imm_len */
static void emit_tls(struct gen_emit *e, const unsigned char *pre, size_t n, unsigned char reg,
		     long tls, uint32_t imm, size_t imm_len)
{
	unsigned char b[16];

	b[0] = 0x64;				/* %fs: */
	memcpy(b + 1, pre, n);
	b[n + 1] = (unsigned char)(0x04 | reg << 3);	/* mod 00, r/m 100 */
	b[n + 2] = 0x25;			/* no base, no index: disp32 */
	fhook_put_u32(b + n + 3, (uint32_t)(int32_t)tls);
	memcpy(b + n + 7, &imm, imm_len);
	emit(e, b, n + 7 + imm_len);
}

/* register numbers of the encoding */
enum { R_AX, R_CX, R_DX, R_BX, R_SP, R_BP, R_SI, R_DI, R_8, R_9, R_10, R_11, R_12, R_13,
       R_14, R_15 };

/* the register of each word of pt_regs that holds one at the site; -1: not a register's */
static const signed char pt_reg[21] = {
	R_15, R_14, R_13, R_12, R_BP, R_BX, -1, R_10, R_9, R_8, R_AX, R_CX, R_DX, R_SI, R_DI,
	-1, -1, -1, -1, -1, -1,
};

#define W_IP		16
#define W_CS		17
#define W_FLAGS		18
#define W_SP		19
#define W_FULL		21

/* push word @w of the ftrace_regs the handler reads */
static void emit_word(struct gen_emit *e, unsigned int w, bool full)
{
	static const unsigned char push_mem[] = { 0xff };		/* push disp32(%rsp) */
	unsigned char b = 0x9c;						/* pushfq */

	if (w < 21 && pt_reg[w] >= 0)
		emit_push_reg(e, (unsigned int)pt_reg[w]);
	else if (w == W_IP) {
		emit_rsp_disp(e, push_mem, 1, 6 << 3, e->depth);	/* the return slot */
		e->depth += 8;
		emit_cfa(e);
	} else if (w == W_SP) {
		/* push %rsp; addq $depth+8, (%rsp): %r11, the stub, is read later */
		unsigned char add[8] = { 0x48, 0x81, 0x04, 0x24 };

		fhook_put_u32(add + 4, (uint32_t)(e->depth + 8));
		emit_push(e, "\x54", 1);
		emit(e, add, 8);
	} else if (w == W_FLAGS)
		emit_push(e, &b, 1);
	else if (w == W_FULL)
		emit_push_imm8(e, full);
	else
		emit_push_imm8(e, w == 15 ? -1 : 0);	/* orig_ax; r11, cs, ss */
}

/* the bytes of a CIE, an FDE and the terminator at @eh */
static size_t eh_len_of(const unsigned char *eh)
{
	uint32_t cie, fde;

	memcpy(&cie, eh, 4);
	memcpy(&fde, eh + 4 + cie, 4);
	return 4 + (size_t)cie + 4 + (size_t)fde + 4;
}

static size_t gen_ipmod_code(unsigned char *code, unsigned char *eh, unsigned int fregs,
			     bool full, bool recursion, long tls)
{
	static const unsigned char cmpq[] = { 0x48, 0x83 }, movq_imm[] = { 0x48, 0xc7 },
		movl_imm[] = { 0xc7 }, mov_load[] = { 0x48, 0x8b },
		lea[] = { 0x48, 0x8d };
	unsigned int lo = W_IP, hi = W_IP + 1, w, skip = 0, i, nsaved = 4;
	unsigned char saved[8] = { R_DI, R_SI, R_DX, R_CX };
	struct gen_emit e = { code, code, NULL, 0, 0 };
	unsigned char *fde = gen_cie(eh), *jne;
	long slot, below;

	e.cfi = gen_fde(fde, eh, code, 0);	/* its length below */
	if (VECFREE_FREGS_LOADS(fregs)) {
		lo = VECFREE_FREGS_LO(fregs) < lo ? VECFREE_FREGS_LO(fregs) : lo;
		hi = VECFREE_FREGS_HI(fregs) > hi ? VECFREE_FREGS_HI(fregs) : hi;
	}
	if (fregs & VECFREE_CLOB_RAX)
		saved[nsaved++] = R_AX;
	if (fregs & VECFREE_CLOB_R8)
		saved[nsaved++] = R_8;
	if (fregs & VECFREE_CLOB_R9)
		saved[nsaved++] = R_9;
	if (fregs & VECFREE_CLOB_R10)
		saved[nsaved++] = R_10;

	emit_tls(&e, cmpq, 2, 7, tls, FHOOK_TW_IDLE, 1);	/* cmpq $IDLE, %fs:tw */
	emit(&e, "\x0f\x85\0\0\0\0", 6);			/* jne slow */
	jne = e.p;
	emit_tls(&e, movq_imm, 2, 0, tls, 2, 4);		/* movq $2, %fs:tw */
	/*
	 * the recursion bit (FHOOK_TW_FAST), in the upper half: from the
	 * first store the thread is inside, as without it; %r11 is the stub
	 */
	if (recursion)
		emit_tls(&e, movl_imm, 1, 0, tls + 4, FHOOK_TW_FAST >> 32, 4);
	for (w = hi; w-- > lo;) {
		bool wanted = w == W_IP || (VECFREE_FREGS_LOADS(fregs) &&
					   w >= VECFREE_FREGS_LO(fregs) &&
					   w < VECFREE_FREGS_HI(fregs));

		if (!wanted) {
			skip++;
			continue;
		}
		if (skip) {			/* lea -8n(%rsp), %rsp: words never read */
			unsigned char b[8] = { 0x48, 0x8d, 0xa4, 0x24 };

			fhook_put_u32(b + 4, (uint32_t)(-8 * (int32_t)skip));
			emit(&e, b, 8);
			e.depth += 8 * skip;
			emit_cfa(&e);
			skip = 0;
		}
		emit_word(&e, w, full);
	}
	for (i = 0; i < nsaved; i++)
		emit_push_reg(&e, saved[i]);
	slot = e.depth;
	emit_rsp_disp(&e, mov_load, 2, R_DI << 3, slot);		/* movq slot, %rdi */
	emit(&e, "\x48\x83\xef\x05", 4);				/* subq $5, %rdi */
	emit_rsp_disp(&e, mov_load, 2, R_SI << 3, slot + 8);		/* parent_ip */
	emit(&e, "\x49\x8b\x53\x08", 4);				/* movq STUB_DATA(%r11), %rdx */
	emit_rsp_disp(&e, lea, 2, R_CX << 3, 8 * (long)nsaved - 8 * (long)lo);	/* fregs */
	emit(&e, "\x41\xff\x53\x38", 4);				/* call *STUB_COPY_FUNC(%r11) */
	while (nsaved)
		emit_pop_reg(&e, saved[--nsaved]);
	below = 8 * (long)(W_IP - lo);
	if (below) {					/* lea below(%rsp), %rsp */
		unsigned char b[8] = { 0x48, 0x8d, 0xa4, 0x24 };

		fhook_put_u32(b + 4, (uint32_t)below);
		emit(&e, b, 8);
		e.depth -= below;
		emit_cfa(&e);
	}
	emit_tls(&e, movq_imm, 2, 0, tls, FHOOK_TW_IDLE, 4);	/* leave */
	emit(&e, "\xc2", 1);					/* ret $above */
	*e.p++ = (unsigned char)(8 * (hi - W_IP));
	*e.p++ = 0;
	/* the slow path: nothing pushed */
	fhook_put_u32(jne - 4, (uint32_t)(e.p - jne));
	e.depth = 0;
	emit_cfa(&e);
	emit(&e, "\xff\x25", 2);				/* jmp *word(%rip) */
	fhook_put_u32(e.p, (uint32_t)(GEN_PAGE - (size_t)(e.p + 4 - code)));
	e.p += 4;
	/* the FDE's length now that the code's is known */
	fhook_put_u64(fde + 16, (uint64_t)(e.p - code));
	gen_fde_end(fde, e.cfi);
	return (size_t)(e.p - code);
}

/**
 * fhook_gen_ipmod_tramp - the IPMODIFY copy for a handler of @fregs
 *
 * Written for @fregs (what the handler reads and changes), @full and
 * @recursion; made on first use and shared by the stubs of every ops of
 * that shape (the handler is their copy_func).  NULL when it cannot be (no memory, no copies, an
 * ip never stored: nothing to gain), and the generic trampolines serve.
 * Called under the caller's lock.
 */
void *fhook_gen_ipmod_tramp(unsigned int fregs, bool full, bool recursion, void *slow)
{
	unsigned int shape = fregs | (unsigned int)full << 30 | (unsigned int)recursion << 31;
	unsigned char eh[1024], *p;
	struct gen_tramp *g;
	size_t len;
	long tls;

	if (!(fregs & VECFREE_FREGS_STORES_IP))
		return NULL;
	for (g = gen_list; g; g = g->next)
		if (g->kind == GEN_IPMOD && g->shape == shape)
			return g->code;
	tls = gen_off() ? 0 : gen_tls();
	if (!tls || !(g = calloc(1, sizeof(*g))))
		return NULL;
	if (!(p = gen_page(GEN_PAGE - GEN_EH_FRAME)))
		goto fail;
	len = gen_ipmod_code(p, eh, fregs, full, recursion, tls);
	if (len > GEN_PAGE - GEN_EH_FRAME || eh_len_of(eh) > GEN_EH_FRAME) {
		munmap(p, 2 * GEN_PAGE);
		goto fail;
	}
	memcpy(p + GEN_PAGE - GEN_EH_FRAME, eh, eh_len_of(eh));
	*(void **)(p + GEN_PAGE) = slow;
	if (!gen_seal(p, len, eh_len_of(eh)))
		goto fail;
	g->kind = GEN_IPMOD;
	g->shape = shape;
	g->code = p;
	g->next = gen_list;
	gen_list = g;
	return p;
fail:
	free(g);
	return NULL;
}
