/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * x86-64: the inline part of the arch contract (lib/arch/arch.h).
 */
#ifndef FHOOK_ARCH_INSN_H
#define FHOOK_ARCH_INSN_H

#ifndef __ASSEMBLER__
#include <stdbool.h>
#include <stdint.h>
#endif

/* the ELF machine and the relocation that makes a word base + addend */
#define FHOOK_ELF_MACHINE	62	/* EM_X86_64 */
/* a kprobe is a jump where its instructions can be moved, else a trap */
#define FHOOK_KPROBE_TRAPS_ONLY	0
/* what a program is built with to have sites (`fhook cflags`; arch.mk's FHOOK_SITE_CFLAGS) */
#define FHOOK_SITE_CFLAG	"-fpatchable-function-entry=5"
#define FHOOK_ELF_R_RELATIVE	8	/* R_X86_64_RELATIVE */
#define FHOOK_ARCH_NAME		"x86-64"
/* the breakpoint instruction, as a message names it */
#define FHOOK_ARCH_TRAP_NAME	"an int3"
/* the program loader (the ELF interpreter) of this machine's programs */
#define FHOOK_ARCH_LOADER	"/lib64/ld-linux-x86-64.so.2"

#define INT3_INSN_OPCODE	0xcc
#define CALL_INSN_OPCODE	0xe8
#define CALL_INSN_SIZE		5

/* a kprobe's pre_handler sees the ip past its int3, as the kernel's on x86 */
#define FHOOK_KPROBE_HIT_IP_OFF	1

/* what a kprobe writes at most: "jmp rel32" */
#define FHOOK_KPROBE_MAX_BYTES	5

/* a site: "call rel32" or its 5-byte nop */
#define FHOOK_SITE_LEN		5
/* -pg in PIE: "call *__fentry__@GOTPCREL(%rip)", 6 bytes */
#define FHOOK_SITE_MAX		6

/*
 * return-hook stubs: "jmp *8(%rip-relative)" and the target, one per
 * shadow-stack line (arch/shadow.h), the rest int3
 */
#define FHOOK_RETHOOK_STUB_SIZE	64
/* what fhook_rethook_eh_frame() may write */
#define FHOOK_RETHOOK_EH_FRAME_MAX	128

#ifndef __ASSEMBLER__
/*
 * The time-stamp counter; the kernel keeps time with it when its
 * clocksource is this one (the command then records with it, and
 * measures its rate against CLOCK_MONOTONIC).
 */
#define FHOOK_ARCH_COUNTER_CLOCKSOURCE	"tsc"
static inline uint64_t fhook_arch_counter(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* nopl 0(%rax,%rax,1); clang writes the same nop with a non-zero displacement */
static inline bool fhook_site_is_nop(const unsigned char *b)
{
	uint32_t w;

	__builtin_memcpy(&w, b, 4);
	return w == 0x00441f0fu;
}

/*
 * gcc's pad: five 1-byte nops (fhook_site_classify() says the same, with
 * split set; this is its inline fast path for start-up).
 */
static inline bool fhook_site_is_pad(const unsigned char *b)
{
	uint32_t w;

	__builtin_memcpy(&w, b, 4);
	return w == 0x90909090u && b[4] == 0x90;
}

/* bytes a function may start with before its site: an endbr64 */
#define FHOOK_SITE_ENTRY_MAX	4

/*
 * Where a function's entry lies from the compiler's record of its site,
 * read from a file: the record is the site, at the entry or after its
 * endbr64.
 */
#define FHOOK_SITE_REC_ENTRY	0

/*
 * Where a site lies in a function whose first FHOOK_SITE_ENTRY_MAX bytes
 * are @b: after its endbr64 (-fcf-protection), else at its start.
 */
static inline unsigned int fhook_site_entry_off(const unsigned char *b)
{
	uint32_t w;

	__builtin_memcpy(&w, b, 4);
	return w == 0xfa1e0ff3u ? 4 : 0;
}

/* The compiler's record of a site is the site. */
#define FHOOK_SITE_ADJUST_SPAN	0
static inline unsigned long fhook_site_adjust(unsigned long rec)
{
	return rec;
}

/* Target of "call rel32" in @b at @ip, or 0 if @b is no such call. */
static inline unsigned long fhook_site_call_target(const unsigned char *b, unsigned long ip)
{
	int32_t rel;

	if (b[0] != CALL_INSN_OPCODE)
		return 0;
	__builtin_memcpy(&rel, b + 1, 4);
	return ip + CALL_INSN_SIZE + (long)rel;
}
#endif /* !__ASSEMBLER__ */

#endif /* FHOOK_ARCH_INSN_H */
