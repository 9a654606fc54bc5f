/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * State shared by the files of lib/arch/x86_64/ and nothing else.
 */
#ifndef FHOOK_ARCH_X86_64_INTERNAL_H
#define FHOOK_ARCH_X86_64_INTERNAL_H

#include <stdint.h>

#include "arch/arch.h"
#include "util/startup.h"

#define __arch_hidden __attribute__((visibility("hidden")))

/* What generic code handed over in fhook_arch_init() (hooks.c). */
extern struct fhook_arch_hooks fhook_arch_hooks __arch_hidden;
/* The same pointers where the trampolines load them. */
extern void *fhook_arch_dispatch __arch_hidden;
extern void *fhook_arch_rethook_handler __arch_hidden;
extern void (*fhook_arch_before_longjmp)(unsigned long target_sp) __arch_hidden;

/* hooks->list_func, where the trampolines load it */
extern void *fhook_arch_list_func __arch_hidden;

/* the trampolines (trampoline.S): see TRAMPOLINE there */
extern char fhook_tramp_args[], fhook_tramp_regs[];
extern char fhook_tramp_args_nosse[], fhook_tramp_regs_nosse[];
extern char fhook_tramp_args_c[], fhook_tramp_regs_c[];
extern char fhook_tramp_fgraph[], fhook_tramp_fgraph_nosse[], fhook_tramp_fgraph_own[];
/* the frameless graph entries, [returns hooked][entry data][fregs read] */
extern char fhook_tramp_fgraph_lean[], fhook_tramp_fgraph_lean_fregs[];
extern char fhook_tramp_fgraph_lean_exit[], fhook_tramp_fgraph_lean_exit_fregs[];
extern char fhook_tramp_fgraph_lean_exit_data[], fhook_tramp_fgraph_lean_exit_data_fregs[];
/* ... without fregs, saving only %rdi %rsi, or %rdi %rsi %rdx */
extern char fhook_tramp_fgraph_lean_a2[], fhook_tramp_fgraph_lean_a3[];
extern char fhook_tramp_fgraph_lean_exit_a2[], fhook_tramp_fgraph_lean_exit_a3[];
extern char fhook_tramp_fgraph_lean_exit_data_a2[], fhook_tramp_fgraph_lean_exit_data_a3[];

/*
 * The argument registers (a mask of %rdi %rsi %rdx %rcx %r8 %r9, then
 * %rax and %r10) that the code from @body may read before writing them
 * all (livein.c); every one when in doubt.  A jump to where @is_site
 * says a site is counts as a call.
 */
unsigned int fhook_arch_live_args(unsigned long body,
				  bool (*is_site)(unsigned long)) __arch_hidden;
extern char fhook_tramp_grec[], fhook_tramp_grec_exit[];	/* graph_rec.S */

/*
 * gen.c: a copy of trampoline.S's OPS_TEMPLATE, or with @saves 2 or 3 of
 * OPS_LEAN_TEMPLATE, which calls the stub's copy_func with its data;
 * NULL: none
 */
void *fhook_gen_ops_tramp(bool sse, unsigned int saves) __arch_hidden;
/* What a copy calls through a stub no longer bound (gen.c): nothing. */
void fhook_gen_nop(unsigned long ip, unsigned long parent_ip, void *op, void *fregs) __arch_hidden;
/*
 * gen.c: the copy for an IPMODIFY ops whose handler (the stub's copy_func)
 * is proven for FHOOK_FREGS_IPMOD, what it reads and changes being @fregs
 * (vecfree.h); @full: a SAVE_REGS ops; @recursion: its thread enters
 * holding the recursion lock (FTRACE_OPS_FL_RECURSION); @slow: the
 * trampoline that takes a thread inside something of ours already.
 * NULL: none.
 */
void *fhook_gen_ipmod_tramp(unsigned int fregs, bool full, bool recursion,
			    void *slow) __arch_hidden;
/* What of its fregs the handler at @func reads and changes (vecfree.h); 0: nothing known */
unsigned int fhook_arch_handler_fregs(void *func) __arch_hidden;
void *fhook_gen_graph_tramp(void *tramp) __arch_hidden;
void *fhook_gen_graph_bare(unsigned int saves) __arch_hidden;
int fhook_gen_graph_kind(const void *tramp) __arch_hidden;
void *fhook_gen_rethook_tramp(bool bare, void *first) __arch_hidden;
void *fhook_gen_rethook_rec_tramp(void) __arch_hidden;
void *fhook_gen_grec_tramp(bool exit, long rec) __arch_hidden;
void fhook_gen_unwind_init(void *libgcc) __arch_hidden;
void fhook_rethook_target_init(void) __arch_hidden;
void fhook_gen_frame_plain(const void *code, size_t len) __arch_hidden;

/*
 * The bytes from @func that its object's notes prove leave the vector
 * registers alone (vecnote.c); 0: not proven.  @fregs: what of its fregs
 * it reads (vecfree.h VECFREE_FREGS()).
 */
size_t fhook_vecnote_proven(unsigned long func, unsigned int *fregs) __arch_hidden;

/* Bytes of unwind tables (rethook.c, gen.c). */
static inline unsigned char *fhook_put_uleb(unsigned char *p, unsigned long v)
{
	do {
		unsigned char b = v & 0x7f;

		v >>= 7;
		*p++ = b | (v ? 0x80 : 0);
	} while (v);
	return p;
}

static inline unsigned char *fhook_put_u32(unsigned char *p, uint32_t v)
{
	__builtin_memcpy(p, &v, 4);
	return p + 4;
}

static inline unsigned char *fhook_put_u64(unsigned char *p, uint64_t v)
{
	__builtin_memcpy(p, &v, 8);
	return p + 8;
}

/*
 * Write @len bytes of code no thread runs yet (a kprobe's new slot) into
 * pages that stay executable for the others (text_poke.c).
 */
int fhook_text_write_new(unsigned long addr, const void *buf, size_t len) __arch_hidden;

/*
 * The SIGTRAP handler's question to kprobe.c: is the int3 at @ip a
 * kprobe's (or a post_handler's exit from a copy)?  If so the thread in
 * the signal context @ctx is handled, and true is returned.
 */
bool fhook_kprobe_trap(unsigned long ip, void *ctx) __arch_hidden;

#endif /* FHOOK_ARCH_X86_64_INTERNAL_H */
