// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Return-hook stubs (lib/arch/arch.h, arch/shadow.h) on aarch64.  A
 * hooked function returns ("ret") to a stub of its shadow-stack line,
 * which names itself in x17 and goes to its trampoline:
 *
 *	+0, +32		adr x17, .; ldr x16, +48; br x16; brk #0
 *	+16		adr x17, .; ldr x16, +56; br x16; brk #0
 *	+48		rethook_trampoline
 *	+56		rethook_rec_trampoline
 *
 * The three stubs of a line lead to the same entry.  The second
 * (SHADOW_REC_STUB) is the return of an entry whose record graph_rec.S
 * wrote, which writes the return's record the same way; the others'
 * returns go through the C handler.
 */
#include <string.h>

#include "internal.h"
#include "arch/shadow.h"

#define A64_ADR_X17	0x10000011u
#define A64_LDR_X16_LIT	0x58000010u	/* ldr x16, <literal>: imm19 at bit 5 */
#define A64_BR_X16	0xd61f0200u

void fhook_rethook_stubs_write(unsigned char *code, size_t nr)
{
	unsigned long target[2] = { (unsigned long)rethook_trampoline,
				    (unsigned long)rethook_rec_trampoline };
	size_t i;
	int k;

	for (i = 0; i < nr; i++) {
		unsigned char *line = code + i * FHOOK_RETHOOK_STUB_SIZE;

		for (k = 0; k < 3; k++) {
			unsigned int off = (unsigned int)k * 16;
			unsigned int lit = off == SHADOW_REC_STUB ? 56 : 48;
			uint32_t w[4] = {
				A64_ADR_X17,
				A64_LDR_X16_LIT | (((lit - (off + 4)) / 4) << 5),
				A64_BR_X16,
				A64_BRK,
			};

			memcpy(line + off, w, sizeof(w));
		}
		memcpy(line + 48, target, sizeof(target));
	}
	__builtin___clear_cache((char *)code, (char *)code + nr * FHOOK_RETHOOK_STUB_SIZE);
}

/* DWARF registers: x30 (the link register), sp */
#define DW_A64_LR	30
#define DW_A64_SP	31
/*
 * What of a saved x30 is the address: a return address signed with
 * pointer authentication (a hooked function built with
 * -mbranch-protection saves the stub's address signed) carries its code
 * in the bits above the 48-bit user address space.
 */
#define A64_VA_MASK	((1UL << 48) - 1)

/*
 * A CIE and one FDE over the whole reservation.  At a stub the "frame" is
 * the caller's state right after the hooked function returned: sp and
 * every callee-saved register as the caller left them, and x30 the stub's
 * own address ("ret" went there through it).  The real return address is
 * at (x30 & -SHADOW_LINE) + @ret_off, the entry of the stub's line.
 *
 * The CFA is sp + 1, not sp: libgcc identifies a frame by its CFA, and
 * with CFA = sp the pseudo-frame's would equal the hooked function's (sp
 * at its entry), so a handler found in phase 1 would "match" the
 * pseudo-frame in phase 2 and libgcc would abort.  The caller's sp is
 * given by value.
 *
 * The personality routine (the return-hook layer's) is how fhook learns
 * that an exception or a forced unwind (pthread_exit, cancellation)
 * removes the hooked frame below a stub.
 *
 * Built at run time because the reservation's address is only known then.
 */
size_t fhook_rethook_eh_frame(unsigned char *buf, size_t size, unsigned long start,
			      unsigned long len, void *personality, unsigned long ret_off)
{
	unsigned char *p = buf, *cie_len, *fde_len, *expr_len;
	unsigned char *cie;

	if (size < FHOOK_RETHOOK_EH_FRAME_MAX)
		return 0;
	cie = p;
	cie_len = p;
	p = fhook_put_u32(p, 0);		/* length, below */
	p = fhook_put_u32(p, 0);		/* CIE id */
	*p++ = 1;			/* version */
	*p++ = 'z'; *p++ = 'P'; *p++ = 'R'; *p++ = 0;
	p = fhook_put_uleb(p, 4);		/* code alignment */
	*p++ = 0x78;			/* data alignment -8 */
	*p++ = DW_A64_LR;		/* return address column: x30 */
	p = fhook_put_uleb(p, 10);		/* augmentation data length */
	*p++ = 0x00;			/* personality: DW_EH_PE_absptr */
	p = fhook_put_u64(p, (unsigned long)personality);
	*p++ = 0x00;			/* FDE addresses: DW_EH_PE_absptr */
	*p++ = 0x0c; *p++ = DW_A64_SP; *p++ = 1;	/* DW_CFA_def_cfa sp, 1 */
	*p++ = 0x16; *p++ = DW_A64_SP; *p++ = 2;	/* DW_CFA_val_expression sp */
	*p++ = 0x31;			/* DW_OP_lit1 (on top of the CFA) */
	*p++ = 0x1c;			/* DW_OP_minus: sp is unchanged */
	*p++ = 0x10; *p++ = DW_A64_LR;	/* DW_CFA_expression x30 */
	expr_len = p++;
	*p++ = 0x70 + DW_A64_LR;	/* DW_OP_breg30 0: the stub */
	*p++ = 0;
	*p++ = 0x10;			/* DW_OP_constu: the address bits of ... */
	p = fhook_put_uleb(p, A64_VA_MASK & -(unsigned long)SHADOW_LINE);
	*p++ = 0x1a;			/* DW_OP_and: ... its line's first */
	*p++ = 0x10;			/* DW_OP_constu ret_off */
	p = fhook_put_uleb(p, ret_off);
	*p++ = 0x22;			/* DW_OP_plus: where the real one is */
	*expr_len = (unsigned char)(p - expr_len - 1);
	while ((p - cie) % 8)
		*p++ = 0;		/* DW_CFA_nop */
	fhook_put_u32(cie_len, (uint32_t)(p - cie - 4));

	fde_len = p;
	p = fhook_put_u32(p, 0);
	p = fhook_put_u32(p, (uint32_t)(p - cie));	/* CIE pointer: back to the CIE */
	p = fhook_put_u64(p, start);
	p = fhook_put_u64(p, len);
	p = fhook_put_uleb(p, 0);		/* no augmentation data */
	while ((p - fde_len) % 8)
		*p++ = 0;
	fhook_put_u32(fde_len, (uint32_t)(p - fde_len - 4));
	p = fhook_put_u32(p, 0);		/* terminator */
	return p - buf;
}

/* the anchors of the shadow stack (arch/shadow.h), set by the fprobe layer */
unsigned long fhook_shadow_base;
unsigned long fhook_shadow_size;
int fhook_shadow_slow;
/* what graph records compare with (arch/shadow.h), set by the events layer */
struct fhook_rec_global fhook_rec_g __fhook_startup_data;
/* the flags word of no probe: disabled (arch/shadow.h) */
const unsigned int fhook_fgraph_other = FGRAPH_DISABLED_BITS;
