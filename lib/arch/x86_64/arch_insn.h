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

#define INT3_INSN_OPCODE	0xcc
#define CALL_INSN_OPCODE	0xe8
#define CALL_INSN_SIZE		5

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
