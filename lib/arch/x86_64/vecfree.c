// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Does a function leave the vector registers alone (vecfree.h)?
 *
 * A trampoline saves xmm0-7 around its handler only because the handler
 * may change them: at a function's entry they hold its floating-point
 * arguments.  Every instruction reachable from the function's entry is
 * decoded (capstone), following direct branches, and the function
 * qualifies only if none of them names a vector, MMX, x87 or mask
 * register, belongs to an instruction set extension that works on them,
 * touches the handler's fregs argument, or leaves the code we can see (a
 * call, an indirect branch, a system call).  So only small leaves
 * qualify; anything in doubt keeps the save.
 */
#define _GNU_SOURCE
#include <string.h>

#include "vecfree.h"

#define cs fhook_cs

static bool vector_reg(unsigned int r)
{
	return (r >= X86_REG_FP0 && r <= X86_REG_FP7) || (r >= X86_REG_K0 && r <= X86_REG_K7) ||
	       (r >= X86_REG_MM0 && r <= X86_REG_MM7) || (r >= X86_REG_ST0 && r <= X86_REG_ST7) ||
	       (r >= X86_REG_XMM0 && r <= X86_REG_ZMM31) || r == X86_REG_FPSW;
}

/* The groups an instruction may have and still leave the vector registers alone. */
static bool plain_group(uint8_t g)
{
	switch (g) {
	case X86_GRP_JUMP:
	case X86_GRP_RET:
	case X86_GRP_BRANCH_RELATIVE:
	case X86_GRP_ADX:
	case X86_GRP_BMI:
	case X86_GRP_BMI2:
	case X86_GRP_CMOV:
	case X86_GRP_MODE64:
	case X86_GRP_NOT64BITMODE:
		return true;
	default:
		return false;
	}
}

/* %rcx in any of its sizes */
static bool is_rcx(unsigned int r)
{
	return r == X86_REG_RCX || r == X86_REG_ECX || r == X86_REG_CX || r == X86_REG_CL ||
	       r == X86_REG_CH;
}

/*
 * Does @insn leave xmm/ymm/zmm, mm, st and k registers alone, and stay in
 * view?  It must not touch %rcx either: the handler's fregs, whose xmm
 * part is not filled in by a trampoline that saves none (a handler that
 * reads it with integer loads would read garbage).
 */
static bool insn_plain(const cs_insn *insn)
{
	const cs_detail *d = insn->detail;
	const cs_x86 *x = &d->x86;
	static const char *const prefixes[] = { "f", "v", "xsave", "xrstor", "emms", "ldmxcsr",
						"stmxcsr", "syscall", "sysenter", "int" };
	unsigned int i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(insn->mnemonic, prefixes[i], strlen(prefixes[i])))
			return false;
	if (strstr(insn->op_str, "mm") || strstr(insn->op_str, "st("))
		return false;
	for (i = 0; i < d->groups_count; i++)
		if (!plain_group(d->groups[i]))
			return false;
	for (i = 0; i < d->regs_read_count; i++)
		if (vector_reg(d->regs_read[i]) || is_rcx(d->regs_read[i]))
			return false;
	for (i = 0; i < d->regs_write_count; i++)
		if (vector_reg(d->regs_write[i]))
			return false;
	for (i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_REG && (vector_reg(op->reg) || is_rcx(op->reg)))
			return false;
		if (op->type == X86_OP_MEM && (is_rcx(op->mem.base) || is_rcx(op->mem.index)))
			return false;
	}
	return true;
}

/* The direct target of a branch, or 0 (indirect). */
static unsigned long branch_target(const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;

	if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM)
		return (unsigned long)x->operands[0].imm;
	return 0;
}

bool fhook_vec_free(unsigned long func, const struct fhook_vecfree_src *src,
		    unsigned long *end)
{
	unsigned long todo[VECFREE_BRANCHES], seen[VECFREE_BRANCHES];
	size_t ntodo = 0, nseen = 0, budget = VECFREE_INSNS;
	bool ok = true;
	cs_insn *insn;
	csh h;

	*end = func;
	if (fhook_cs_open(&h, &insn))
		return false;
	todo[ntodo++] = func;
	while (ok && ntodo) {
		unsigned long addr = todo[--ntodo], next;
		const uint8_t *code;
		size_t i, left;

		for (i = 0; i < nseen && seen[i] != addr; i++)
			;
		if (i < nseen)
			continue;
		if (nseen == VECFREE_BRANCHES) {
			ok = false;
			break;
		}
		seen[nseen++] = addr;
		for (;;) {
			uint8_t buf[16];
			uint64_t a = addr;

			/* a copy: the function's last bytes may end its mapping */
			left = src->read(src->ctx, addr, buf, sizeof(buf));
			code = buf;
			if (!budget-- || !cs.disasm_iter(h, &code, &left, &a, insn) ||
			    !insn_plain(insn) || (src->insn_ok && !src->insn_ok(src->ctx, insn))) {
				ok = false;
				break;
			}
			next = (unsigned long)a;
			if (next > *end)
				*end = next;
			if (cs.insn_group(h, insn, CS_GRP_RET))
				break;
			if (cs.insn_group(h, insn, CS_GRP_JUMP)) {
				unsigned long t = branch_target(insn);

				if (!t || ntodo == VECFREE_BRANCHES ||
				    (src->hi && (t < src->lo || t >= src->hi))) {
					ok = false;
					break;
				}
				todo[ntodo++] = t;
				if (insn->id == X86_INS_JMP)
					break;	/* no fall-through */
			}
			addr = next;
			if (src->hi && addr >= src->hi) {
				ok = false;	/* runs off its end */
				break;
			}
		}
	}
	fhook_cs_close(&h, insn);
	return ok;
}
