/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * aarch64: the inline part of the arch contract (lib/arch/arch.h).
 *
 * Sites follow the kernel's CALL_OPS design: built with
 * -fpatchable-function-entry=4,2, a function has two nops before its
 * entry (an 8-byte literal slot for the ops its calls go to) and two at
 * its entry, after any "bti c".  The compiler's record points at the
 * first nop before the entry.  At start-up the first entry nop becomes
 * "mov x9, x30" (the return address kept for the trampoline); the
 * second is the site, toggled between "nop" and "bl" with one aligned
 * 32-bit store, which the architecture allows while other threads run it.
 */
#ifndef FHOOK_ARCH_INSN_H
#define FHOOK_ARCH_INSN_H

#ifndef __ASSEMBLER__
#include <stdbool.h>
#include <stdint.h>
#endif

/* the ELF machine and the relocation that makes a word base + addend */
#define FHOOK_ELF_MACHINE	183	/* EM_AARCH64 */
/* every kprobe is a trap (a brk): none is a jump (lib/kprobes/nokprobe.c) */
#define FHOOK_KPROBE_TRAPS_ONLY	1
/* what a program is built with to have sites (`fhook cflags`; arch.mk's FHOOK_SITE_CFLAGS) */
#define FHOOK_SITE_CFLAG	"-fpatchable-function-entry=4,2"
#define FHOOK_ELF_R_RELATIVE	1027	/* R_AARCH64_RELATIVE */
#define FHOOK_ARCH_NAME		"AArch64"
/* the breakpoint instruction, as a message names it */
#define FHOOK_ARCH_TRAP_NAME	"a brk"
/* the program loader (the ELF interpreter) of this machine's programs */
#define FHOOK_ARCH_LOADER	"/lib/ld-linux-aarch64.so.1"

#define A64_NOP			0xd503201fu
#define A64_BTI_C		0xd503245fu
#define A64_PACIASP		0xd503233fu
#define A64_MOV_X9_X30		0xaa1e03e9u	/* orr x9, xzr, x30 */
#define A64_BL			0x94000000u
#define A64_BL_MASK		0xfc000000u
#define A64_BRK			0xd4200000u	/* brk #0 */

/* a bl reaches +-128 MiB */
#define A64_BL_REACH		(128UL << 20)

/* a kprobe's pre_handler sees the ip of the probed instruction, as the kernel's on arm64 */
#define FHOOK_KPROBE_HIT_IP_OFF	0

/* what a kprobe writes at most: one instruction */
#define FHOOK_KPROBE_MAX_BYTES	4

/* a site: "bl" or its nop */
#define FHOOK_SITE_LEN		4
#define FHOOK_SITE_MAX		4

/* bytes a function may start with before its site: "bti c", "mov x9, x30" */
#define FHOOK_SITE_ENTRY_MAX	8

/*
 * Where a function's entry lies from the compiler's record of its site,
 * read from a file (the command's view; a process adjusts with
 * fhook_site_adjust()): the record is the first of the two words before
 * the entry.
 */
#define FHOOK_SITE_REC_ENTRY	8

/*
 * return-hook stubs: three of them per shadow-stack line (arch/shadow.h),
 * each "adr x17, .; ldr x16, <target>; br x16", the targets at the end
 */
#define FHOOK_RETHOOK_STUB_SIZE	64
#define FHOOK_RETHOOK_EH_FRAME_MAX	128

#ifndef __ASSEMBLER__
/*
 * The generic timer's virtual count: constant-rate and synchronized across
 * cpus by the architecture.  The kernel keeps time with it when its
 * clocksource is this one (the command then records with it, and
 * measures its rate against CLOCK_MONOTONIC).
 */
#define FHOOK_ARCH_COUNTER_CLOCKSOURCE	"arch_sys_counter"
static inline uint64_t fhook_arch_counter(void)
{
	uint64_t v;

	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v) :: "memory");
	return v;
}

static inline uint32_t a64_word(const unsigned char *b)
{
	uint32_t w;

	__builtin_memcpy(&w, b, 4);
	return w;
}

/*
 * The site's nop.  The word alone: @b may be a copy.  Whether the word
 * before it keeps the return address yet is fhook_site_is_pad()'s
 * question, asked of live text only.
 */
static inline bool fhook_site_is_nop(const unsigned char *b)
{
	return a64_word(b) == A64_NOP;
}

/* the compiler's pad (live text): both entry nops still nops */
static inline bool fhook_site_is_pad(const unsigned char *b)
{
	return a64_word(b) == A64_NOP && a64_word(b - 4) == A64_NOP;
}

/* Target of the "bl" in @b at @ip, or 0 if @b is no such call. */
static inline unsigned long fhook_site_call_target(const unsigned char *b, unsigned long ip)
{
	uint32_t w = a64_word(b);
	long off;

	if ((w & A64_BL_MASK) != A64_BL)
		return 0;
	off = (long)((int32_t)(w << 6) >> 6) * 4;
	return ip + (unsigned long)off;
}

/*
 * Where a site lies in a function whose first FHOOK_SITE_ENTRY_MAX bytes
 * are @b: past its "bti c", if any, and the word that keeps the return
 * address.
 */
static inline unsigned int fhook_site_entry_off(const unsigned char *b)
{
	return a64_word(b) == A64_BTI_C ? 8 : 4;
}

/*
 * The site of the compiler's record @rec (the kernel's
 * ftrace_call_adjust()): the record is the first of the two nops before
 * the entry; the FHOOK_SITE_ADJUST_SPAN bytes from it must be readable.
 */
#define FHOOK_SITE_ADJUST_SPAN	20
static inline unsigned long fhook_site_adjust(unsigned long rec)
{
	return rec + 8 + fhook_site_entry_off((const unsigned char *)rec + 8);
}

/* The literal slot before the function of the site at @site (8 bytes, maybe misaligned). */
static inline unsigned long a64_site_literal(unsigned long site)
{
	return site - (a64_word((const unsigned char *)site - 8) == A64_BTI_C ? 16 : 12);
}
#endif /* !__ASSEMBLER__ */

#endif /* FHOOK_ARCH_INSN_H */
