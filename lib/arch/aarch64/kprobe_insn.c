// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Which aarch64 instructions a kprobe can take, and how the ones that read
 * the pc are simulated.
 *
 * Every A64 instruction is one aligned word, and only a few classes read
 * the pc: those are simulated in the SIGTRAP handler on the registers the
 * trap saved (the kernel's arm64 kprobes simulate the same classes), every
 * other instruction runs out of line, as it is, in a slot.  Refused, as
 * the kernel refuses them: what raises an exception on purpose (svc, brk,
 * ...), returns from one (eret), writes PSTATE fields (msr immediate),
 * hints other than nop, bti and the pointer-authentication ones,
 * exclusive loads and stores (the trap between them would clear the
 * exclusive monitor: the store would fail every time, the loop around it
 * would never end), any instruction between an exclusive load and its
 * store, and the branches that authenticate their target (braa, retaa,
 * ...), which cannot be simulated without the keys.
 */
#include "kprobe.h"

static bool is_exclusive(uint32_t w)
{
	/* the load/store exclusive group, o2 == 0, without CASP (bit 31 clear, o1 set) */
	return (w & 0x3f800000u) == 0x08000000u &&
	       !(!(w & 0x80000000u) && (w & 0x00200000u));
}

bool fhook_a64_is_load_exclusive(uint32_t w)
{
	return is_exclusive(w) && (w & 0x00400000u);
}

bool fhook_a64_is_store_exclusive(uint32_t w)
{
	return is_exclusive(w) && !(w & 0x00400000u);
}

/* nop, xpaclri, the pac*, aut* hints and bti */
static bool hint_steppable(unsigned int crm_op2)
{
	switch (crm_op2) {
	case 0x00:				/* nop */
	case 0x07:				/* xpaclri */
	case 0x08: case 0x0a: case 0x0c: case 0x0e:	/* pacia1716 ... autib1716 */
	case 0x18: case 0x19: case 0x1a: case 0x1b:	/* paciaz, paciasp, pacibz, pacibsp */
	case 0x1c: case 0x1d: case 0x1e: case 0x1f:	/* autiaz ... autibsp */
	case 0x20: case 0x22: case 0x24: case 0x26:	/* bti, bti c, bti j, bti jc */
		return true;
	}
	return false;
}

int fhook_a64_kp_decode(uint32_t w, const char **why)
{
	unsigned int op0 = (w >> 25) & 0xf;

	*why = NULL;
	if ((w & 0x7c000000u) == 0x14000000u)
		return w & 0x80000000u ? A64_KP_BL : A64_KP_B;
	if ((w & 0xff000000u) == 0x54000000u)
		return A64_KP_BCOND;
	if ((w & 0x7e000000u) == 0x34000000u)
		return w & 0x01000000u ? A64_KP_CBNZ : A64_KP_CBZ;
	if ((w & 0x7e000000u) == 0x36000000u)
		return w & 0x01000000u ? A64_KP_TBNZ : A64_KP_TBZ;
	if ((w & 0x1f000000u) == 0x10000000u)
		return w & 0x80000000u ? A64_KP_ADRP : A64_KP_ADR;
	if ((w & 0xfffffc1fu) == 0xd61f0000u)
		return A64_KP_BR;
	if ((w & 0xfffffc1fu) == 0xd63f0000u)
		return A64_KP_BLR;
	if ((w & 0xfffffc1fu) == 0xd65f0000u)
		return A64_KP_RET;
	if ((w & 0xfe000000u) == 0xd6000000u) {
		*why = "an authenticated branch, eret or drps: cannot be simulated";
		return -1;
	}
	if ((w & 0xff000000u) == 0xd4000000u) {
		*why = "an exception-generating instruction (svc, brk, hlt, ...): refused";
		return -1;
	}
	if ((w & 0xfffff01fu) == 0xd503201fu) {
		if (hint_steppable((w >> 5) & 0x7f))
			return A64_KP_XOL;
		*why = "a hint other than nop, bti or pointer authentication: refused";
		return -1;
	}
	if ((w & 0xfff8f01fu) == 0xd500401fu) {
		*why = "an msr to a PSTATE field: refused";
		return -1;
	}
	if ((w & 0x3b000000u) == 0x18000000u) {
		/* literal loads: opc (31:30), V (26) */
		switch (((w >> 30) << 1) | ((w >> 26) & 1)) {
		case 0: return A64_KP_LDR_W;
		case 1: return A64_KP_LDR_S;
		case 2: return A64_KP_LDR_X;
		case 3: return A64_KP_LDR_D;
		case 4: return A64_KP_LDRSW;
		case 5: return A64_KP_LDR_Q;
		case 6: return A64_KP_PRFM;
		}
		*why = "an unallocated literal load: refused";
		return -1;
	}
	if (is_exclusive(w)) {
		*why = "an exclusive load or store: a trap would clear the exclusive monitor";
		return -1;
	}
	if (op0 == 0 || op0 == 1 || op0 == 3) {
		*why = "an undefined or reserved encoding (udf, ...): refused";
		return -1;
	}
	return A64_KP_XOL;
}

static inline unsigned long sext(unsigned long v, unsigned int bits)
{
	return (unsigned long)((long)(v << (64 - bits)) >> (64 - bits));
}

static unsigned long xreg(const struct fhook_a64_sim_regs *r, unsigned int n)
{
	return n == 31 ? 0 : r->x[n];
}

static void xreg_set(struct fhook_a64_sim_regs *r, unsigned int n, unsigned long v)
{
	if (n != 31)
		r->x[n] = v;
}

/* Does condition @cond hold for the flags of @pstate (NZCV in bits 31:28)? */
static bool cond_holds(unsigned int cond, unsigned long pstate)
{
	bool n = pstate >> 31 & 1, z = pstate >> 30 & 1, c = pstate >> 29 & 1,
	     v = pstate >> 28 & 1, r;

	switch (cond >> 1) {
	case 0: r = z; break;			/* eq */
	case 1: r = c; break;			/* cs */
	case 2: r = n; break;			/* mi */
	case 3: r = v; break;			/* vs */
	case 4: r = c && !z; break;		/* hi */
	case 5: r = n == v; break;		/* ge */
	case 6: r = n == v && !z; break;	/* gt */
	default: r = true; break;		/* al, nv */
	}
	/* the odd conditions invert, but for 0b1111 (nv), which is always */
	return (cond & 1) && cond != 0xf ? !r : r;
}

void fhook_a64_kp_simulate(int kind, uint32_t w, unsigned long pc, struct fhook_a64_sim_regs *r)
{
	unsigned int rt = w & 0x1f, rn = (w >> 5) & 0x1f;
	unsigned long imm19 = sext((w >> 5) & 0x7ffff, 19) << 2, lit = pc + imm19, next = pc + 4;
	unsigned long v;

	switch (kind) {
	case A64_KP_BL:
		r->x[30] = pc + 4;
		/* fallthrough */
	case A64_KP_B:
		next = pc + (sext(w & 0x3ffffff, 26) << 2);
		break;
	case A64_KP_BCOND:
		if (cond_holds(w & 0xf, r->pstate))
			next = lit;
		break;
	case A64_KP_CBZ:
	case A64_KP_CBNZ:
		v = xreg(r, rt);
		if (!(w & 0x80000000u))
			v = (uint32_t)v;
		if ((v == 0) == (kind == A64_KP_CBZ))
			next = lit;
		break;
	case A64_KP_TBZ:
	case A64_KP_TBNZ: {
		unsigned int bit = ((w >> 26) & 0x20) | ((w >> 19) & 0x1f);
		bool set = xreg(r, rt) >> bit & 1;

		if (set == (kind == A64_KP_TBNZ))
			next = pc + (sext((w >> 5) & 0x3fff, 14) << 2);
		break;
	}
	case A64_KP_ADR:
	case A64_KP_ADRP: {
		unsigned long imm = sext((((w >> 5) & 0x7ffff) << 2) | ((w >> 29) & 3), 21);

		if (kind == A64_KP_ADR)
			xreg_set(r, rt, pc + imm);
		else
			xreg_set(r, rt, (pc & ~0xfffUL) + (imm << 12));
		break;
	}
	case A64_KP_BR:
	case A64_KP_RET:
		next = xreg(r, rn);
		break;
	case A64_KP_BLR:
		next = xreg(r, rn);	/* before x30 changes: "blr x30" */
		r->x[30] = pc + 4;
		break;
	case A64_KP_LDR_W:
		xreg_set(r, rt, *(const volatile uint32_t *)lit);
		break;
	case A64_KP_LDR_X:
		xreg_set(r, rt, *(const volatile uint64_t *)lit);
		break;
	case A64_KP_LDRSW:
		xreg_set(r, rt, (unsigned long)(long)*(const volatile int32_t *)lit);
		break;
	case A64_KP_LDR_S:
	case A64_KP_LDR_D:
	case A64_KP_LDR_Q: {
		/* a scalar load zeroes the rest of the vector register */
		size_t len = kind == A64_KP_LDR_S ? 4 : kind == A64_KP_LDR_D ? 8 : 16;

		fhook_a64_trap_zero(r->v + 16 * rt, 16);
		fhook_a64_trap_copy(r->v + 16 * rt, (const void *)lit, len);
		break;
	}
	case A64_KP_PRFM:
	default:
		break;
	}
	r->pc = next;
}
