// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Per-ops trampolines (the kernel's create_trampoline()): for an ops that
 * alone uses its sites, a copy of trampoline.S's OPS_TEMPLATE with the
 * ops, its handler, the thread word's offset from the thread pointer and
 * the C dispatcher patched in as immediates.  The generic trampolines
 * load all of that on every call (the stub's data, the handler, the
 * thread's word through the GOT) and write the ip back for handlers that
 * may change it; the copy does neither.
 *
 * A copy is made once per owner, handler and kind, on a page of its own
 * that is written before it becomes executable and never again, and is
 * never unmapped (a preempted thread may be inside it long after its ops
 * is gone, as in the generic trampolines, which are never unmapped
 * either).  An FDE registered with libgcc describes it as the template's
 * CFI does, so unwinders walk through it from inside a handler.  The
 * handler it calls is a word on the writable page after it: the ops'
 * handler while its stubs are bound, else gen_nop().
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"
#include "util/tasks.h"

#define GEN_PAGE	4096UL
#define GEN_EH_FRAME	128

extern char fhook_tmpl_ops[], fhook_tmpl_ops_tls1[], fhook_tmpl_ops_tls2[],
	fhook_tmpl_ops_ops[], fhook_tmpl_ops_func[], fhook_tmpl_ops_tls3[], fhook_tmpl_ops_ret[],
	fhook_tmpl_ops_slow[], fhook_tmpl_ops_disp[], fhook_tmpl_ops_end[];
extern char fhook_tmpl_ops_nosse[], fhook_tmpl_ops_nosse_tls1[], fhook_tmpl_ops_nosse_tls2[],
	fhook_tmpl_ops_nosse_ops[], fhook_tmpl_ops_nosse_func[], fhook_tmpl_ops_nosse_tls3[],
	fhook_tmpl_ops_nosse_ret[], fhook_tmpl_ops_nosse_slow[], fhook_tmpl_ops_nosse_disp[],
	fhook_tmpl_ops_nosse_end[];

struct gen_template {
	char *start, *tls1, *tls2, *ops, *func, *tls3, *ret, *disp, *end;
};

static const struct gen_template templates[2] = {
	{ fhook_tmpl_ops, fhook_tmpl_ops_tls1, fhook_tmpl_ops_tls2, fhook_tmpl_ops_ops,
	  fhook_tmpl_ops_func, fhook_tmpl_ops_tls3, fhook_tmpl_ops_ret, fhook_tmpl_ops_disp,
	  fhook_tmpl_ops_end },
	{ fhook_tmpl_ops_nosse, fhook_tmpl_ops_nosse_tls1, fhook_tmpl_ops_nosse_tls2,
	  fhook_tmpl_ops_nosse_ops, fhook_tmpl_ops_nosse_func, fhook_tmpl_ops_nosse_tls3,
	  fhook_tmpl_ops_nosse_ret, fhook_tmpl_ops_nosse_disp, fhook_tmpl_ops_nosse_end },
};

/*
 * The frameless templates (OPS_LEAN_TEMPLATE), for sites of class 1 and 2
 * (livein.c): the same patches, but the dispatcher's, and the generic
 * trampoline in the word after the handler's.  @saves registers are
 * pushed (one byte each) from tls2 and popped from func.
 */
extern char fhook_tmpl_ops_lean2[], fhook_tmpl_ops_lean2_tls1[], fhook_tmpl_ops_lean2_tls2[],
	fhook_tmpl_ops_lean2_ops[], fhook_tmpl_ops_lean2_func[], fhook_tmpl_ops_lean2_popped[],
	fhook_tmpl_ops_lean2_tls3[], fhook_tmpl_ops_lean2_ret[], fhook_tmpl_ops_lean2_slow[],
	fhook_tmpl_ops_lean2_end[];
extern char fhook_tmpl_ops_lean3[], fhook_tmpl_ops_lean3_tls1[], fhook_tmpl_ops_lean3_tls2[],
	fhook_tmpl_ops_lean3_ops[], fhook_tmpl_ops_lean3_func[], fhook_tmpl_ops_lean3_popped[],
	fhook_tmpl_ops_lean3_tls3[], fhook_tmpl_ops_lean3_ret[], fhook_tmpl_ops_lean3_slow[],
	fhook_tmpl_ops_lean3_end[];

struct gen_lean_template {
	char *start, *tls1, *tls2, *ops, *func, *popped, *tls3, *ret, *slow, *end;
	unsigned int saves;
};

static const struct gen_lean_template lean_templates[2] = {
	{ fhook_tmpl_ops_lean2, fhook_tmpl_ops_lean2_tls1, fhook_tmpl_ops_lean2_tls2,
	  fhook_tmpl_ops_lean2_ops, fhook_tmpl_ops_lean2_func, fhook_tmpl_ops_lean2_popped,
	  fhook_tmpl_ops_lean2_tls3, fhook_tmpl_ops_lean2_ret, fhook_tmpl_ops_lean2_slow,
	  fhook_tmpl_ops_lean2_end, 2 },
	{ fhook_tmpl_ops_lean3, fhook_tmpl_ops_lean3_tls1, fhook_tmpl_ops_lean3_tls2,
	  fhook_tmpl_ops_lean3_ops, fhook_tmpl_ops_lean3_func, fhook_tmpl_ops_lean3_popped,
	  fhook_tmpl_ops_lean3_tls3, fhook_tmpl_ops_lean3_ret, fhook_tmpl_ops_lean3_slow,
	  fhook_tmpl_ops_lean3_end, 3 },
};

struct gen_tramp {
	struct gen_tramp *next;
	const void *owner;
	void *func;
	int kind;			/* GEN_SSE, GEN_NOSSE, GEN_LEAN2, GEN_LEAN3 */
	unsigned char *code;
	void **word;			/* the handler it calls */
};

enum { GEN_SSE, GEN_NOSSE, GEN_LEAN2, GEN_LEAN3 };

/* What a copy calls once its ops is unregistered. */
static void gen_nop(unsigned long ip, unsigned long parent_ip, void *op, void *fregs)
{
}

static struct gen_tramp *gen_list;

/*
 * libgcc's, when the program has libgcc_s (every C++ program, and any
 * that cancels threads): looked up by the dynamic linker, since we run
 * under the loader's lock here and may not dlopen().  Without it the
 * copies still keep frame pointers.
 */
extern void __register_frame(void *) __attribute__((weak));

/*
 * A CIE and an FDE for the copy at @code, as the template's CFI says:
 * after "push %rbp" the CFA is %rsp + 16 and %rbp saved below it, after
 * "mov %rsp, %rbp" the CFA is %rbp + 16, at the "ret" %rsp + 8 again,
 * and after it (the slow path) %rbp + 16.
 */
static size_t gen_eh_frame(unsigned char *buf, const unsigned char *code, size_t len,
			   size_t ret_off)
{
	unsigned char *p = buf, *cie = buf, *fde;
	uint32_t l;

	p = fhook_put_u32(p + 4, 0);	/* the length (below), the CIE id */
	*p++ = 1;			/* version */
	*p++ = 'z'; *p++ = 'R'; *p++ = 0;
	p = fhook_put_uleb(p, 1);	/* code alignment */
	*p++ = 0x78;			/* data alignment -8 */
	*p++ = 16;			/* return address: %rip */
	p = fhook_put_uleb(p, 1);
	*p++ = 0x00;			/* FDE addresses: DW_EH_PE_absptr */
	*p++ = 0x0c; *p++ = 7; *p++ = 8;	/* DW_CFA_def_cfa %rsp, 8 */
	*p++ = 0x80 | 16; *p++ = 1;	/* DW_CFA_offset %rip, cfa - 8 */
	while ((p - cie) % 8)
		*p++ = 0;
	l = (uint32_t)(p - cie - 4);
	memcpy(cie, &l, 4);
	fde = p;
	p = fhook_put_u32(p + 4, (uint32_t)(p + 4 - cie));	/* back to the CIE */
	p = fhook_put_u64(p, (uint64_t)(unsigned long)code);
	p = fhook_put_u64(p, len);
	*p++ = 0;			/* no augmentation data */
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
	while ((p - fde) % 8)
		*p++ = 0;
	l = (uint32_t)(p - fde - 4);
	memcpy(fde, &l, 4);
	p = fhook_put_u32(p, 0);	/* the terminator */
	return (size_t)(p - buf);
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
	unsigned char *p = buf, *cie = buf, *fde;
	unsigned int i;
	uint32_t l;

	p = fhook_put_u32(p + 4, 0);
	*p++ = 1;
	*p++ = 'z'; *p++ = 'R'; *p++ = 0;
	p = fhook_put_uleb(p, 1);
	*p++ = 0x78;
	*p++ = 16;
	p = fhook_put_uleb(p, 1);
	*p++ = 0x00;
	*p++ = 0x0c; *p++ = 7; *p++ = 8;	/* DW_CFA_def_cfa %rsp, 8 */
	*p++ = 0x80 | 16; *p++ = 1;	/* DW_CFA_offset %rip, cfa - 8 */
	while ((p - cie) % 8)
		*p++ = 0;
	l = (uint32_t)(p - cie - 4);
	memcpy(cie, &l, 4);
	fde = p;
	p = fhook_put_u32(p + 4, (uint32_t)(p + 4 - cie));
	p = fhook_put_u64(p, (uint64_t)(unsigned long)code);
	p = fhook_put_u64(p, len);
	*p++ = 0;
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
	while ((p - fde) % 8)
		*p++ = 0;
	l = (uint32_t)(p - fde - 4);
	memcpy(fde, &l, 4);
	p = fhook_put_u32(p, 0);
	return (size_t)(p - buf);
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
	if (__register_frame && eh_len <= GEN_EH_FRAME)
		__register_frame(p + GEN_PAGE - GEN_EH_FRAME);
	return true;
}

/*
 * What both templates patch alike, at the ends of their instructions
 * (@tls1 ... @tls3 their labels' offsets): the thread word's offset in
 * "cmpq $1", "movq $2" and "subq $1" of %fs:disp32, the ops in a movabs,
 * and the call through the word on the page after, which holds @func.
 */
static void gen_patch(unsigned char *p, size_t tls1, size_t tls2, size_t ops, size_t call,
		      size_t tls3, long tls, const void *owner, void *func)
{
	fhook_put_u32(p + tls1 - 5, (int32_t)tls);
	fhook_put_u32(p + tls2 - 8, (int32_t)tls);
	fhook_put_u64(p + ops - 8, (uint64_t)(unsigned long)owner);
	*(void **)(p + GEN_PAGE) = func;
	fhook_put_u32(p + call - 4, (uint32_t)(GEN_PAGE - call));
	fhook_put_u32(p + tls3 - 5, (int32_t)tls);
}

static unsigned char *gen_copy_ops(const void *owner, void *func, bool sse, long tls)
{
	const struct gen_template *t = &templates[sse ? 0 : 1];
	size_t len = (size_t)(t->end - t->start);
	unsigned char *p;

	if (!fhook_arch_dispatch || !(p = gen_page(len)))
		return NULL;
	memcpy(p, t->start, len);
	gen_patch(p, t->tls1 - t->start, t->tls2 - t->start, t->ops - t->start,
		  t->func - t->start, t->tls3 - t->start, tls, owner, func);
	fhook_put_u64(p + (t->disp - t->start) - 8, (uint64_t)(unsigned long)fhook_arch_dispatch);
	return gen_seal(p, len, gen_eh_frame(p + GEN_PAGE - GEN_EH_FRAME, p, len,
					     (size_t)(t->ret - t->start))) ? p : NULL;
}

static unsigned char *gen_copy_lean(const void *owner, void *func, unsigned int saves, long tls)
{
	const struct gen_lean_template *t = &lean_templates[saves == 3];
	size_t len = (size_t)(t->end - t->start), eh_len;
	unsigned char *p;

	if (!(p = gen_page(len)))
		return NULL;
	memcpy(p, t->start, len);
	gen_patch(p, t->tls1 - t->start, t->tls2 - t->start, t->ops - t->start,
		  t->func - t->start, t->tls3 - t->start, tls, owner, func);
	/* the generic trampoline this ops' stubs would take: the handler is proven */
	*(void **)(p + GEN_PAGE + 8) = fhook_tramp_args_nosse;
	fhook_put_u32(p + (t->slow - t->start) - 4,	/* jmp *disp32(%rip) */
		      (uint32_t)(GEN_PAGE + 8 - (size_t)(t->slow - t->start)));
	eh_len = gen_eh_frame_lean(p + GEN_PAGE - GEN_EH_FRAME, p, len,
				   (size_t)(t->tls2 - t->start), (size_t)(t->func - t->start),
				   t->saves);
	return gen_seal(p, len, eh_len) ? p : NULL;
}

/**
 * fhook_gen_ops_tramp - the per-ops trampoline of @owner calling @func
 *
 * With @saves 2 or 3, the frameless one for a handler proven to read no
 * fregs, at sites whose functions read no argument register but the
 * first two or three; else the one that builds an ftrace_regs, with
 * xmm0-7 per @sse.  Made on first use; NULL when it cannot be (no
 * memory), and the generic trampolines serve.  Called under the caller's
 * lock.
 */
void *fhook_gen_ops_tramp(const void *owner, void *func, bool sse, unsigned int saves)
{
	int kind = saves == 2 ? GEN_LEAN2 : saves == 3 ? GEN_LEAN3 : sse ? GEN_SSE : GEN_NOSSE;
	struct gen_tramp *g;
	unsigned char *p;
	long tls;

	for (g = gen_list; g; g = g->next)
		if (g->owner == owner && g->func == func && g->kind == kind) {
			__atomic_store_n(g->word, func, __ATOMIC_RELEASE);
			return g->code;
		}
	tls = gen_tls();
	if (!tls)
		return NULL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	p = kind >= GEN_LEAN2 ? gen_copy_lean(owner, func, saves, tls)
			      : gen_copy_ops(owner, func, sse, tls);
	if (!p) {
		free(g);
		return NULL;
	}
	g->owner = owner;
	g->func = func;
	g->kind = kind;
	g->code = p;
	g->word = (void **)(p + GEN_PAGE);
	g->next = gen_list;
	gen_list = g;
	return p;
}

/**
 * fhook_gen_ops_retire - @owner's copies call nothing any more
 *
 * Its stubs are unbound (it is being unregistered): a thread that
 * entered a copy before and was preempted ahead of counting itself in
 * calls gen_nop() when it resumes.  Binding again points the word back at
 * the handler (fhook_gen_ops_tramp()).  Called under the caller's lock.
 */
void fhook_gen_ops_retire(const void *owner)
{
	struct gen_tramp *g;

	for (g = gen_list; g; g = g->next)
		if (g->owner == owner)
			__atomic_store_n(g->word, (void *)gen_nop, __ATOMIC_RELEASE);
}
