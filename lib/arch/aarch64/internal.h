/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * State shared by the files of lib/arch/aarch64/ and nothing else.
 */
#ifndef FHOOK_ARCH_AARCH64_INTERNAL_H
#define FHOOK_ARCH_AARCH64_INTERNAL_H

#include <stdint.h>

#include "arch/arch.h"
#include "util/startup.h"

#define __arch_hidden __attribute__((visibility("hidden")))

/* What generic code handed over in fhook_arch_init() (hooks.c). */
extern struct fhook_arch_hooks fhook_arch_hooks __arch_hidden;
/* The same pointers where the trampolines load them. */
extern void *fhook_arch_dispatch __arch_hidden;
extern void *fhook_arch_rethook_handler __arch_hidden;

/* trampoline.S: the ops trampolines a stub leads to (x10: the stub) */
extern char fhook_a64_tramp_args[], fhook_a64_tramp_regs[];
/*
 * graph_rec.S: the graph records' entries (the stub's grec: an fgraph of
 * kind FGRAPH_TRAMP_REC(0), and of FGRAPH_TRAMP_REC(1), returns hooked)
 */
extern char fhook_a64_tramp_grec[], fhook_a64_tramp_grec_exit[];

/*
 * Write @len bytes of code at @addr (page protection handled), then make
 * the instruction stream see them: cache maintenance for one word, and
 * with @sync a membarrier(SYNC_CORE) too.  Call with text_mutex held.
 */
int fhook_a64_text_write(unsigned long addr, const void *buf, size_t len, bool sync) __arch_hidden;

/* libgcc_s's handle, for the stubs' unwind information (stubs.c) */
void fhook_a64_unwind_init(void *libgcc) __arch_hidden;

/* The stub a literal slot names for the site's calls (stubs.c), or 0. */
unsigned long fhook_a64_stub_literal(unsigned long code) __arch_hidden;

/* Bytes of unwind tables (rethook.c). */
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

#endif /* FHOOK_ARCH_AARCH64_INTERNAL_H */
