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
 * does anything with the handler's fregs argument but load from it (or
 * store its ip: an IPMODIFY handler's one write), or leaves the code we can see (a call, an indirect branch, a system call).
 * So only small leaves qualify; anything in doubt keeps the save.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <string.h>

#include <fhook/ftrace.h>

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

/*
 * What a path through the function has seen: @depth bytes pushed since
 * the entry (the return address at depth 0), @fp the depth %rbp points at
 * after "push %rbp; mov %rbp, %rsp", else -1; @rcx_own once the path
 * wrote all of %rcx itself (the value it came with is gone).
 */
struct stack_state {
	long depth, fp;
	bool rcx_own;
};

/* %rcx in any of its sizes */
static bool is_rcx(unsigned int r)
{
	return r == X86_REG_RCX || r == X86_REG_ECX || r == X86_REG_CX || r == X86_REG_CL ||
	       r == X86_REG_CH;
}

bool fhook_insn_zeroes(const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;

	return (insn->id == X86_INS_XOR || insn->id == X86_INS_SUB) && x->op_count == 2 &&
	       x->operands[0].type == X86_OP_REG && x->operands[1].type == X86_OP_REG &&
	       x->operands[1].reg == x->operands[0].reg;
}

bool fhook_insn_writes_whole(const cs_insn *insn)
{
	switch (insn->id) {
	case X86_INS_MOV:
	case X86_INS_MOVABS:
	case X86_INS_MOVZX:
	case X86_INS_MOVSX:
	case X86_INS_MOVSXD:
	case X86_INS_LEA:
	case X86_INS_POP:
	case X86_INS_MOVD:
	case X86_INS_MOVQ:
	case X86_INS_CVTTSS2SI:
	case X86_INS_CVTTSD2SI:
		return true;
	default:
		return false;
	}
}

/* "xor %ecx, %ecx" and the like: all of %rcx written, nothing read */
static bool zeroes_rcx(const cs_insn *insn)
{
	const cs_x86_op *op0 = &insn->detail->x86.operands[0];

	return fhook_insn_zeroes(insn) && (op0->reg == X86_REG_RCX || op0->reg == X86_REG_ECX);
}

/* Is @insn's first operand all of %rcx, written without being read? */
static bool writes_rcx(const cs_insn *insn)
{
	const cs_x86_op *op0 = &insn->detail->x86.operands[0];

	return insn->detail->x86.op_count >= 1 && op0->type == X86_OP_REG &&
	       (op0->reg == X86_REG_RCX || op0->reg == X86_REG_ECX) &&
	       op0->access == CS_AC_WRITE && fhook_insn_writes_whole(insn);
}

/*
 * Is the memory operand @i of @insn only read, as a plain source?  By the
 * instruction, not capstone's access flags, which some read-modify-write
 * instructions (rol, cmpxchg, movbe) get wrong, and only where the operand
 * is read at its own address (not bt's, which a register offsets).
 */
static bool pure_source(const cs_insn *insn, unsigned int i)
{
	const cs_x86 *x = &insn->detail->x86;
	unsigned int g;

	switch (insn->id) {
	case X86_INS_CMP:
	case X86_INS_TEST:
		return x->op_count == 2;
	case X86_INS_PUSH:
		return x->op_count == 1 && i == 0;
	case X86_INS_MOV:
	case X86_INS_MOVZX:
	case X86_INS_MOVSX:
	case X86_INS_MOVSXD:
	case X86_INS_ADD:
	case X86_INS_SUB:
	case X86_INS_AND:
	case X86_INS_OR:
	case X86_INS_XOR:
	case X86_INS_ADC:
	case X86_INS_SBB:
	case X86_INS_IMUL:
		return x->op_count >= 2 && i >= 1 && x->operands[0].type == X86_OP_REG;
	default:
		break;
	}
	for (g = 0; g < insn->detail->groups_count; g++)
		if (insn->detail->groups[g] == X86_GRP_CMOV)
			return x->op_count == 2 && i == 1;
	return false;
}

/*
 * Is operand @i of @insn a load from the fregs in the %rcx the function
 * came with, within a struct ftrace_regs?  Then the words it reads widen
 * @fregs ([lo, hi) of them so far, lo > hi while none).
 */
static bool fregs_load(const cs_insn *insn, unsigned int i, unsigned int fregs[2])
{
	const cs_x86_op *op = &insn->detail->x86.operands[i];
	int64_t d = op->mem.disp;

	if (!pure_source(insn, i) || op->mem.base != X86_REG_RCX ||
	    op->mem.index != X86_REG_INVALID || op->mem.segment != X86_REG_INVALID ||
	    !op->size || d < 0 || d + op->size > VECFREE_FREGS_SLOTS * 8)
		return false;
	if (d / 8 < fregs[0])
		fregs[0] = d / 8;
	if ((d + op->size + 7) / 8 > fregs[1])
		fregs[1] = (d + op->size + 7) / 8;
	return true;
}

/*
 * Is operand @i of @insn the one store a proven handler may make through
 * the fregs in the %rcx it came with: all of pt_regs.ip, by a plain mov
 * (an IPMODIFY handler's ftrace_regs_set_instruction_pointer())?
 */
static bool fregs_store_ip(const cs_insn *insn, unsigned int i)
{
	const cs_x86 *x = &insn->detail->x86;
	const cs_x86_op *op = &x->operands[i];

	return insn->id == X86_INS_MOV && x->op_count == 2 && i == 0 &&
	       op->mem.base == X86_REG_RCX && op->mem.index == X86_REG_INVALID &&
	       op->mem.segment == X86_REG_INVALID && op->size == 8 &&
	       op->mem.disp == (int64_t)offsetof(struct pt_regs, ip) &&
	       (x->operands[1].type == X86_OP_REG || x->operands[1].type == X86_OP_IMM);
}

/* The VECFREE_CLOB_* bit of the register @r is part of; 0: none */
static unsigned int clob_bit(unsigned int r)
{
	switch (r) {
	case X86_REG_RAX: case X86_REG_EAX: case X86_REG_AX: case X86_REG_AL: case X86_REG_AH:
		return VECFREE_CLOB_RAX;
	case X86_REG_R8: case X86_REG_R8D: case X86_REG_R8W: case X86_REG_R8B:
		return VECFREE_CLOB_R8;
	case X86_REG_R9: case X86_REG_R9D: case X86_REG_R9W: case X86_REG_R9B:
		return VECFREE_CLOB_R9;
	case X86_REG_R10: case X86_REG_R10D: case X86_REG_R10W: case X86_REG_R10B:
		return VECFREE_CLOB_R10;
	default:
		return 0;
	}
}

/*
 * What of %rax, %r8, %r9, %r10 @insn may change: any it names as an
 * operand (written or not: the access flags are not trusted) or writes
 * implicitly
 */
static unsigned int insn_clob(const cs_insn *insn)
{
	const cs_detail *d = insn->detail;
	unsigned int i, m = 0;

	for (i = 0; i < d->regs_write_count; i++)
		m |= clob_bit(d->regs_write[i]);
	for (i = 0; i < d->x86.op_count; i++)
		if (d->x86.operands[i].type == X86_OP_REG)
			m |= clob_bit(d->x86.operands[i].reg);
	return m;
}

/*
 * Does @insn leave xmm/ymm/zmm, mm, st and k registers alone, and stay in
 * view?  The %rcx the function came with, the handler's fregs, it may
 * only load from: the trampolines tell from @fregs whether they give it
 * the words it reads (one that saves no vector register does not fill in
 * the xmm part, a frameless one builds only what it pushed); a handler
 * that took its address or stored through it could read garbage or
 * write anywhere.  Once the path wrote all of %rcx itself (@st), it is a
 * register like any other.
 */
static bool insn_plain(const cs_insn *insn, struct stack_state *st, unsigned int fregs[3])
{
	const cs_detail *d = insn->detail;
	const cs_x86 *x = &d->x86;
	/* (enter, far and interrupt returns move the stack as no path follows; std breaks the ABI) */
	static const char *const prefixes[] = { "f", "v", "xsave", "xrstor", "emms", "ldmxcsr",
						"stmxcsr", "syscall", "sysenter", "int", "enter",
						"retf", "lret", "iret", "std" };
	bool zero = zeroes_rcx(insn), write = writes_rcx(insn);
	unsigned int i;

	/* "test %rcx, %rcx": is there an fregs (ftrace_get_regs()), nothing else of it */
	if (insn->id == X86_INS_TEST && x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	    x->operands[1].type == X86_OP_REG && x->operands[0].reg == X86_REG_RCX &&
	    x->operands[1].reg == X86_REG_RCX)
		return true;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(insn->mnemonic, prefixes[i], strlen(prefixes[i])))
			return false;
	if (strstr(insn->op_str, "mm") || strstr(insn->op_str, "st("))
		return false;
	for (i = 0; i < d->groups_count; i++)
		if (!plain_group(d->groups[i]))
			return false;
	for (i = 0; i < d->regs_read_count; i++)
		if (vector_reg(d->regs_read[i]) ||
		    (is_rcx(d->regs_read[i]) && !st->rcx_own && !zero))
			return false;
	for (i = 0; i < d->regs_write_count; i++)
		if (vector_reg(d->regs_write[i]))
			return false;
	for (i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_REG &&
		    (vector_reg(op->reg) ||
		     (is_rcx(op->reg) && !st->rcx_own && !zero && !(i == 0 && write))))
			return false;
		if (op->type == X86_OP_MEM && (is_rcx(op->mem.base) || is_rcx(op->mem.index)) &&
		    !st->rcx_own) {
			if (fregs_store_ip(insn, i))
				fregs[2] |= VECFREE_FREGS_STORES_IP;
			else if (!fregs_load(insn, i, fregs))
				return false;
		}
	}
	fregs[2] |= insn_clob(insn);
	st->rcx_own |= zero || write;
	return true;
}

static bool is_rsp(unsigned int r)
{
	return r == X86_REG_RSP || r == X86_REG_ESP || r == X86_REG_SP || r == X86_REG_SPL;
}

static bool is_rbp(unsigned int r)
{
	return r == X86_REG_RBP || r == X86_REG_EBP || r == X86_REG_BP || r == X86_REG_BPL;
}


/* Does [@base_depth - @disp - @size, ...) stay below the return address? */
static bool below_ret(long base_depth, int64_t disp, unsigned int size)
{
	return disp + (int64_t)size <= base_depth;
}

/*
 * @x's operands give no register the stack's address (%rsp, or %rbp while
 * it holds it: a write of %rbp alone ends that) and reach no memory at or
 * above the return address through them.
 */
static bool operands_plain(const cs_x86 *x, struct stack_state *st)
{
	unsigned int i;

	for (i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_REG) {
			if (is_rsp(op->reg))
				return false;
			if (is_rbp(op->reg)) {
				if (st->fp >= 0 && op->access != CS_AC_WRITE)
					return false;
				st->fp = -1;
			}
		} else if (op->type == X86_OP_MEM) {
			if (is_rsp(op->mem.index) || (st->fp >= 0 && is_rbp(op->mem.index)))
				return false;
			if (is_rsp(op->mem.base) && !below_ret(st->depth, op->mem.disp, op->size))
				return false;
			if (st->fp >= 0 && is_rbp(op->mem.base) &&
			    !below_ret(st->fp, op->mem.disp, op->size))
				return false;
		}
	}
	return true;
}

/*
 * Does @insn leave the return address and the trampoline's frame above it
 * alone, and return only with the stack as it found it?  A "ret" after a
 * push of some address, or a store over the return address, would run
 * code never looked at.  So the stack pointer moves only by push, pop, an
 * immediate add or sub and the frame-pointer idiom, no register is given
 * its value (nor %rbp's while that holds it), and no memory at or above
 * the return address is touched through them.
 */
static bool stack_plain(const cs_insn *insn, struct stack_state *st)
{
	const cs_detail *d = insn->detail;
	const cs_x86 *x = &d->x86;
	const cs_x86_op *op0 = &x->operands[0], *op1 = &x->operands[1];
	bool moves_sp = false;
	unsigned int i;

	/* an operand-size prefix makes push, pop and ret move 2 bytes */
	for (i = 0; i < 4; i++)
		if (x->prefix[i] == 0x66 &&
		    (insn->id == X86_INS_PUSH || insn->id == X86_INS_POP || insn->id == X86_INS_RET))
			return false;
	for (i = 0; i < d->regs_write_count; i++)
		moves_sp |= is_rsp(d->regs_write[i]);
	switch (insn->id) {
	case X86_INS_RET:
		return x->op_count == 0 && st->depth == 0;
	case X86_INS_PUSH:
		if (x->op_count != 1 || !operands_plain(x, st))
			return false;
		st->depth += 8;
		return true;
	case X86_INS_PUSHFQ:
		st->depth += 8;
		return true;
	case X86_INS_POP:
		if (x->op_count != 1 || op0->type != X86_OP_REG || is_rsp(op0->reg) ||
		    st->depth < 8)
			return false;
		st->depth -= 8;
		if (is_rbp(op0->reg))
			st->fp = -1;
		return true;
	case X86_INS_LEAVE:
		if (st->fp < 8)
			return false;
		st->depth = st->fp - 8;
		st->fp = -1;
		return true;
	case X86_INS_MOV:
		/* mov %rsp, %rbp: the frame pointer */
		if (x->op_count == 2 && op0->type == X86_OP_REG && op0->reg == X86_REG_RBP &&
		    op1->type == X86_OP_REG && op1->reg == X86_REG_RSP) {
			st->fp = st->depth;
			return true;
		}
		break;
	case X86_INS_ADD:
	case X86_INS_SUB:
		if (x->op_count == 2 && op0->type == X86_OP_REG && op0->reg == X86_REG_RSP &&
		    op1->type == X86_OP_IMM) {
			st->depth += insn->id == X86_INS_SUB ? op1->imm : -op1->imm;
			return st->depth >= 0 && !(st->depth & 7);
		}
		break;
	default:
		break;
	}
	if (moves_sp || !operands_plain(x, st))
		return false;
	/* the stack's address into a register */
	if (insn->id == X86_INS_LEA && op1->type == X86_OP_MEM &&
	    (is_rsp(op1->mem.base) || (st->fp >= 0 && is_rbp(op1->mem.base))))
		return false;
	return true;
}

bool fhook_insn_is_branch(const cs_insn *insn)
{
	unsigned int i;

	for (i = 0; i < insn->detail->groups_count; i++)
		if (insn->detail->groups[i] == CS_GRP_JUMP ||
		    insn->detail->groups[i] == CS_GRP_BRANCH_RELATIVE ||
		    insn->detail->groups[i] == CS_GRP_RET)
			return true;
	return false;
}

/*
 * Not a branch the decoder may read differently from the cpu: with an
 * operand-size prefix, capstone takes a near jump's displacement as 16
 * bits, where 64-bit mode ignores the prefix and reads 32.
 */
static bool branch_plain(const cs_insn *insn)
{
	unsigned int i;

	if (!fhook_insn_is_branch(insn))
		return true;
	for (i = 0; i < 4; i++)
		if (insn->detail->x86.prefix[i] == 0x66 || insn->detail->x86.prefix[i] == 0x67)
			return false;
	return true;
}

/*
 * The direct target of a branch into @t; false for an indirect one.  (0 is
 * a target like any other: an object's function at the start of its
 * section, decoded at build time, branches there.)
 */
static bool branch_target(const cs_insn *insn, unsigned long *t)
{
	const cs_x86 *x = &insn->detail->x86;

	if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return false;
	*t = (unsigned long)x->operands[0].imm;
	return true;
}

bool fhook_vec_free(unsigned long func, const struct fhook_vecfree_src *src,
		    unsigned long *end, unsigned int *fregs)
{
	unsigned int fr[3] = { VECFREE_FREGS_SLOTS, 0, 0 };
	struct {
		unsigned long addr;
		struct stack_state st;
	} todo[VECFREE_BRANCHES], seen[VECFREE_BRANCHES];
	size_t ntodo = 0, nseen = 0, budget = VECFREE_INSNS;
	bool ok = true;
	cs_insn *insn;
	csh h;

	*end = func;
	if (fhook_cs_open(&h, &insn))
		return false;
	todo[0].addr = func;
	todo[0].st.depth = 0;
	todo[0].st.fp = -1;
	todo[0].st.rcx_own = false;
	ntodo = 1;
	while (ok && ntodo) {
		unsigned long addr = todo[--ntodo].addr, next;
		struct stack_state st = todo[ntodo].st;
		const uint8_t *code;
		size_t i, left;

		for (i = 0; i < nseen && seen[i].addr != addr; i++)
			;
		if (i < nseen) {
			/* reached again: only with the stack as the first time */
			if (seen[i].st.depth != st.depth || seen[i].st.fp != st.fp)
				ok = false;
			/* followed already knowing as little of %rcx, or once more */
			if (!ok || st.rcx_own || !seen[i].st.rcx_own)
				continue;
			seen[i].st.rcx_own = false;
		} else if (nseen == VECFREE_BRANCHES) {
			ok = false;
			break;
		} else {
			seen[nseen].addr = addr;
			seen[nseen++].st = st;
		}
		for (;;) {
			uint8_t buf[16];
			uint64_t a = addr;

			/* a copy: the function's last bytes may end its mapping */
			left = src->read(src->ctx, addr, buf, sizeof(buf));
			code = buf;
			if (!budget-- || !cs.disasm_iter(h, &code, &left, &a, insn) ||
			    !insn_plain(insn, &st, fr) || !stack_plain(insn, &st) || !branch_plain(insn) ||
			    (src->insn_ok && !src->insn_ok(src->ctx, insn))) {
				ok = false;
				break;
			}
			next = (unsigned long)a;
			if (next > *end)
				*end = next;
			if (cs.insn_group(h, insn, CS_GRP_RET))
				break;
			if (cs.insn_group(h, insn, CS_GRP_JUMP)) {
				unsigned long t;

				if (!branch_target(insn, &t) || ntodo == VECFREE_BRANCHES ||
				    (src->hi && (t < src->lo || t >= src->hi))) {
					ok = false;
					break;
				}
				todo[ntodo].addr = t;
				todo[ntodo++].st = st;
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
	*fregs = fr[0] < fr[1] ? VECFREE_FREGS(fr[0], fr[1]) : 0;
	if (fr[2] & VECFREE_FREGS_STORES_IP)
		*fregs |= fr[2];
	return ok;
}
