// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Return-hook stubs (lib/arch/arch.h, arch/shadow.h) on aarch64.  A
 * hooked function returns ("ret") to the stub of its shadow-stack line,
 * which names itself in x17 and goes to rethook_trampoline:
 *
 *	+0, +16, +32	adr x17, .; ldr x16, +48; br x16; brk #0
 *	+48		rethook_trampoline
 *	+56		brk #0, brk #0
 *
 * (the three stubs of a line lead to the same entry; on aarch64 every
 * return goes through the C handler).
 */
#include <string.h>

#include "internal.h"
#include "arch/shadow.h"

#define A64_ADR_X17	0x10000011u
#define A64_LDR_X16_LIT	0x58000010u	/* ldr x16, <literal>: imm19 at bit 5 */
#define A64_BR_X16	0xd61f0200u

void fhook_rethook_stubs_write(unsigned char *code, size_t nr)
{
	unsigned long target = (unsigned long)rethook_trampoline;
	size_t i;
	int k;

	for (i = 0; i < nr; i++) {
		unsigned char *line = code + i * FHOOK_RETHOOK_STUB_SIZE;
		uint32_t brk[2] = { A64_BRK, A64_BRK };

		for (k = 0; k < 3; k++) {
			unsigned int off = (unsigned int)k * 16;
			uint32_t w[4] = {
				A64_ADR_X17,
				A64_LDR_X16_LIT | (((48 - (off + 4)) / 4) << 5),
				A64_BR_X16,
				A64_BRK,
			};

			memcpy(line + off, w, sizeof(w));
		}
		memcpy(line + 48, &target, 8);
		memcpy(line + 56, brk, 8);
	}
	__builtin___clear_cache((char *)code, (char *)code + nr * FHOOK_RETHOOK_STUB_SIZE);
}

/*
 * No unwind information for the stubs yet: an unwinder that meets a
 * hooked return (a C++ exception through it) stops there.
 */
size_t fhook_rethook_eh_frame(unsigned char *buf, size_t size, unsigned long start,
			      unsigned long len, void *personality, unsigned long ret_off)
{
	(void)start;
	(void)len;
	(void)personality;
	(void)ret_off;
	if (size >= 4)
		memset(buf, 0, 4);	/* a terminator: nothing registered */
	return 0;
}

/* the anchors of the shadow stack (arch/shadow.h), set by the fprobe layer */
unsigned long fhook_shadow_base;
unsigned long fhook_shadow_size;
int fhook_shadow_slow;
/* what graph records compare with (arch/shadow.h), set by the events layer */
struct fhook_rec_global fhook_rec_g __fhook_startup_data;
/* the flags word of no probe: disabled (arch/shadow.h) */
const unsigned int fhook_fgraph_other = FGRAPH_DISABLED_BITS;
