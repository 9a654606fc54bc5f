/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * aarch64 kprobes: what kprobe.c (slots, placement, the SIGTRAP handler)
 * shares with kprobe_insn.c (which instructions, and their simulation).
 */
#ifndef FHOOK_ARCH_AARCH64_KPROBE_H
#define FHOOK_ARCH_AARCH64_KPROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/*
 * The brk immediates of a probe and of the return from a slot's copy (the
 * kernel's arm64 kprobes use the same two); other tools' are left alone.
 */
#define A64_KP_BRK_IMM		0x004
#define A64_KP_SS_BRK_IMM	0x006
#define A64_BRK_OF(imm)		(A64_BRK | ((uint32_t)(imm) << 5))

/* how the instruction at a probe runs */
enum {
	A64_KP_XOL,		/* out of line, in the slot */
	A64_KP_B, A64_KP_BL, A64_KP_BCOND, A64_KP_CBZ, A64_KP_CBNZ, A64_KP_TBZ, A64_KP_TBNZ,
	A64_KP_ADR, A64_KP_ADRP, A64_KP_BR, A64_KP_BLR, A64_KP_RET,
	A64_KP_LDR_W, A64_KP_LDR_X, A64_KP_LDRSW, A64_KP_PRFM,
	A64_KP_LDR_S, A64_KP_LDR_D, A64_KP_LDR_Q,
};

/*
 * The kind of @w (above), or -1 with *@why saying why it cannot be
 * probed.
 */
int fhook_a64_kp_decode(uint32_t w, const char **why) __arch_hidden;
bool fhook_a64_is_load_exclusive(uint32_t w) __arch_hidden;
bool fhook_a64_is_store_exclusive(uint32_t w) __arch_hidden;

/* The registers a simulation reads and writes: a trap's. */
struct fhook_a64_sim_regs {
	unsigned long *x;		/* x0-x30 */
	unsigned long pc, pstate;
	unsigned char *v;		/* v0-v31, 16 bytes each */
};

/*
 * Run @w, of kind @kind (not A64_KP_XOL), as at @pc: @r->pc gets where the
 * thread goes on.
 */
void fhook_a64_kp_simulate(int kind, uint32_t w, unsigned long pc,
			   struct fhook_a64_sim_regs *r) __arch_hidden;

/*
 * Byte copies for the SIGTRAP handler's path, which calls no libc function
 * (a probe may be on memcpy): the volatile store keeps the compiler from
 * making them calls.
 */
static inline void fhook_a64_trap_copy(void *dst, const void *src, size_t n)
{
	volatile unsigned char *d = dst;
	const unsigned char *s = src;

	while (n--)
		*d++ = *s++;
}

static inline void fhook_a64_trap_zero(void *dst, size_t n)
{
	volatile unsigned char *d = dst;

	while (n--)
		*d++ = 0;
}

#endif /* FHOOK_ARCH_AARCH64_KPROBE_H */
