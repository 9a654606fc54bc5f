// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * x86-64 code of the return hooks: the per-slot stubs a hooked return goes
 * through, and the call frame information that lets unwinders walk
 * through them.  The trampoline itself is in rethook_tramp.S.
 */
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "arch/shadow.h"
#include "util/startup.h"

/* the anchors of the shadow stack (arch/shadow.h), set by the fprobe layer */
unsigned long fhook_shadow_base;
unsigned long fhook_shadow_size;
int fhook_shadow_slow;
/*
 * What graph records compare with (arch/shadow.h), set by the events
 * layer at start-up: beside its other start-up variables, not on a zero
 * page of its own.
 */
struct fhook_rec_global fhook_rec_g __fhook_startup_data;

/* "jmp *2(%rip)", two int3, and the target: position-independent */
static void put_stub(unsigned char *s, unsigned long target)
{
	s[0] = 0xff; s[1] = 0x25;
	s[2] = 2; s[3] = 0; s[4] = 0; s[5] = 0;
	s[6] = INT3_INSN_OPCODE; s[7] = INT3_INSN_OPCODE;
	memcpy(s + 8, &target, 8);
}

/*
 * Where the stubs go (the first, the second and the third of a line): the
 * returns' generated copies, made once, or rethook_trampoline and
 * rethook_rec_trampoline
 */
static void *rethook_target, *rethook_rec_target, *rethook_bare_target;

void fhook_rethook_target_init(void)
{
	void *first;

	if (__atomic_load_n(&rethook_target, __ATOMIC_ACQUIRE))
		return;
	first = fhook_gen_rethook_tramp(false, NULL);
	__atomic_store_n(&rethook_bare_target, fhook_gen_rethook_tramp(true, first),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&rethook_rec_target, fhook_gen_rethook_rec_tramp(), __ATOMIC_RELAXED);
	__atomic_store_n(&rethook_target, first, __ATOMIC_RELEASE);
}

void fhook_rethook_stubs_write(unsigned char *code, size_t nr)
{
	void *target = __atomic_load_n(&rethook_target, __ATOMIC_ACQUIRE);
	void *rec = __atomic_load_n(&rethook_rec_target, __ATOMIC_RELAXED);
	void *bare = __atomic_load_n(&rethook_bare_target, __ATOMIC_RELAXED);
	size_t i;

	if (!target)
		target = rethook_trampoline;
	if (!rec)
		rec = rethook_rec_trampoline;
	if (!bare)
		bare = rethook_rec_trampoline;

	/*
	 * Line i's stubs (arch/shadow.h): jmp *8(stub) -- the trampoline's
	 * address is stored in the stub itself, so the region can be
	 * anywhere.  Stub 0 is never used: its first byte is where an
	 * unwinder looks up stub 1's "caller" (stub - 1).
	 */
	for (i = 0; i < nr; i++) {
		unsigned char *s = code + i * FHOOK_RETHOOK_STUB_SIZE;

		put_stub(s, (unsigned long)target);
		put_stub(s + SHADOW_REC_STUB, (unsigned long)rec);
		put_stub(s + SHADOW_BARE_STUB, (unsigned long)bare);
	}
	memset(code, INT3_INSN_OPCODE, FHOOK_RETHOOK_STUB_SIZE);
}

/*
 * A CIE and one FDE over the whole reservation.  At a stub the "frame" is
 * the caller's state right after the hooked function returned: %rsp and
 * every other register unchanged, and the return address saved at
 * (*(slot) & -SHADOW_LINE) + @ret_off, i.e. entry i's real return
 * address, found from the stub address still in the slot (either of its
 * line's).
 *
 * The CFA is %rsp + 1, not %rsp: libgcc identifies a frame by the CFA of
 * the frame it returns from, and with CFA = %rsp the caller's identity
 * would equal the pseudo-frame's (both the hooked function's CFA), so a
 * handler found in phase 1 would "match" the pseudo-frame in phase 2 and
 * libgcc would abort.  %rsp + 1 lies strictly between the hooked
 * function's CFA and the caller's, and the caller's %rsp is given by value.
 *
 * The personality routine (the return-hook layer's) is how fhook learns that an
 * exception or a forced unwind (pthread_exit, cancellation) removes the
 * hooked frame below a stub: libgcc calls it for the stub's pseudo-frame.
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
	p = fhook_put_uleb(p, 1);		/* code alignment */
	*p++ = 0x78;			/* data alignment -8 */
	*p++ = 16;			/* return address column: %rip */
	p = fhook_put_uleb(p, 10);		/* augmentation data length */
	*p++ = 0x00;			/* personality: DW_EH_PE_absptr */
	p = fhook_put_u64(p, (unsigned long)personality);
	*p++ = 0x00;			/* FDE addresses: DW_EH_PE_absptr */
	*p++ = 0x0c; *p++ = 7; *p++ = 1;	/* DW_CFA_def_cfa %rsp, 1 */
	*p++ = 0x16; *p++ = 7; *p++ = 2;	/* DW_CFA_val_expression %rsp */
	*p++ = 0x31;			/* DW_OP_lit1 (on top of the CFA) */
	*p++ = 0x1c;			/* DW_OP_minus: %rsp is unchanged */
	*p++ = 0x10; *p++ = 16;		/* DW_CFA_expression %rip */
	expr_len = p++;
	*p++ = 0x39;			/* DW_OP_lit9 (on top of the CFA) */
	*p++ = 0x1c;			/* DW_OP_minus: the slot */
	*p++ = 0x06;			/* DW_OP_deref: the stub */
	*p++ = 0x09;			/* DW_OP_const1s -SHADOW_LINE ... */
	*p++ = (unsigned char)-SHADOW_LINE;
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

