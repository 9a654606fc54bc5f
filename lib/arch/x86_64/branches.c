// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Where a function's calls and jumps go (lib/arch/arch.h), decoded with
 * capstone: directly, or through a PLT stub or GOT slot whose current
 * value is read (we run inside the process, so the GOT can be read).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "internal.h"
#include "cs.h"

#define cs fhook_cs

static bool is_target(const unsigned long *targets, int nr, unsigned long addr)
{
	int i;

	for (i = 0; addr && i < nr; i++)
		if (addr == targets[i])
			return true;
	return false;
}

/* The address a "jmp/call *disp(%rip)" at @insn reads, or 0. */
static unsigned long rip_slot(const cs_insn *insn)
{
	const cs_x86_op *op;

	if (insn->detail->x86.op_count != 1)
		return 0;
	op = &insn->detail->x86.operands[0];
	if (op->type != X86_OP_MEM || op->mem.base != X86_REG_RIP ||
	    op->mem.index != X86_REG_INVALID)
		return 0;
	return insn->address + insn->size + op->mem.disp;
}

/*
 * Where control goes from a call or jump whose operand is @insn's: a
 * direct target, or the current content of a rip-relative slot, followed
 * through one PLT stub (endbr64, then a jmp through the GOT).
 */
static unsigned long resolve(csh h, const cs_insn *insn, bool *indirect)
{
	const cs_x86_op *op = &insn->detail->x86.operands[0];
	unsigned long dest, slot;
	const uint8_t *code;
	size_t size = 16;
	uint64_t addr;
	cs_insn *stub;
	int i;

	*indirect = false;
	if (insn->detail->x86.op_count != 1)
		return 0;
	if (op->type == X86_OP_IMM) {
		dest = op->imm;
	} else if ((slot = rip_slot(insn))) {
		dest = *(const unsigned long *)slot;
	} else {
		*indirect = true;	/* through a register: unknowable */
		return 0;
	}
	stub = cs.malloc(h);
	if (!stub)
		return dest;
	code = (const uint8_t *)dest;
	addr = dest;
	for (i = 0; i < 2 && cs.disasm_iter(h, &code, &size, &addr, stub); i++) {
		if (stub->id == X86_INS_ENDBR64)
			continue;
		if (stub->id == X86_INS_JMP && (slot = rip_slot(stub)))
			dest = *(const unsigned long *)slot;
		break;
	}
	cs.free(stub, 1);
	return dest;
}

int fhook_insn_scan_branches(unsigned long start, unsigned long size,
			     const unsigned long *targets, int nr,
			     struct fhook_branch_scan *out)
{
	unsigned long dest;
	const uint8_t *code;
	size_t left;
	uint64_t addr;
	cs_insn *insn;
	csh h;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = fhook_cs_open(&h, &insn);
	if (ret)
		return ret;
	code = (const uint8_t *)start;
	left = size;
	addr = start;
	while (left) {
		bool ind;

		if (!cs.disasm_iter(h, &code, &left, &addr, insn)) {
			/* data or padding in the text: step over one byte */
			code++;
			addr++;
			left--;
			continue;
		}
		if (cs.insn_group(h, insn, CS_GRP_CALL)) {
			dest = resolve(h, insn, &ind);
			out->indirect += ind;
			if (is_target(targets, nr, dest)) {
				out->call_at = insn->address;
				break;
			}
		} else if (cs.insn_group(h, insn, CS_GRP_JUMP)) {
			dest = resolve(h, insn, &ind);
			if (is_target(targets, nr, dest) && !out->jump_at)
				out->jump_at = insn->address;
		}
	}
	fhook_cs_close(&h, insn);
	return 0;
}
