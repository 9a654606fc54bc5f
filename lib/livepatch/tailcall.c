// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Does a named caller really call the target?
 *
 * The route test looks at the return address.  A caller that ends with
 * "jmp target" (a tail call, common at -O2) leaves its own caller's return
 * address on the stack, so the target sees parent_ip outside the named
 * caller and the call is not routed.  We disassemble the caller with
 * capstone and look for a call that reaches the target: directly, or
 * through a PLT stub or GOT slot whose current value is the target (we run
 * inside the process, so the GOT can be read).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <capstone/capstone.h>

#include <fhook/kallsyms.h>

#include "lp.h"

static bool is_target(const struct fhook_lp *lp, unsigned long addr)
{
	return addr && (addr == lp->addr || addr == lp->site);
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
	stub = cs_malloc(h);
	if (!stub)
		return dest;
	code = (const uint8_t *)dest;
	addr = dest;
	for (i = 0; i < 2 && cs_disasm_iter(h, &code, &size, &addr, stub); i++) {
		if (stub->id == X86_INS_ENDBR64)
			continue;
		if (stub->id == X86_INS_JMP && (slot = rip_slot(stub)))
			dest = *(const unsigned long *)slot;
		break;
	}
	cs_free(stub, 1);
	return dest;
}

int fhook_lp_check_caller(struct fhook_lp *lp, const char *caller, char *how, size_t how_len)
{
	unsigned long start, size, off, dest, first_jmp = 0;
	int calls = 0, indirect = 0, ret = 0;
	const uint8_t *code;
	size_t left;
	uint64_t addr;
	cs_insn *insn;
	char dummy[8];
	csh h;

	if (!how) {
		how = dummy;
		how_len = sizeof(dummy);
	}
	*how = 0;
	start = kallsyms_lookup_name(caller);
	if (!start || !kallsyms_lookup_size_offset(start, &size, &off) || !size)
		return -ENOENT;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return -ENOMEM;
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	insn = cs_malloc(h);
	if (!insn) {
		cs_close(&h);
		return -ENOMEM;
	}
	code = (const uint8_t *)start;
	left = size;
	addr = start;
	while (left) {
		bool ind;

		if (!cs_disasm_iter(h, &code, &left, &addr, insn)) {
			/* data or padding in the text: step over one byte */
			code++;
			addr++;
			left--;
			continue;
		}
		if (cs_insn_group(h, insn, CS_GRP_CALL)) {
			dest = resolve(h, insn, &ind);
			indirect += ind;
			if (is_target(lp, dest)) {
				snprintf(how, how_len, "calls it at %s+%#lx", caller,
					 (unsigned long)insn->address - start);
				calls++;
				break;
			}
		} else if (cs_insn_group(h, insn, CS_GRP_JUMP)) {
			dest = resolve(h, insn, &ind);
			if (is_target(lp, dest) && !first_jmp)
				first_jmp = insn->address;
		}
	}
	cs_free(insn, 1);
	cs_close(&h);
	if (calls)
		ret = 1;
	else if (first_jmp)
		snprintf(how, how_len, "reaches '%s' with a jump at %s+%#lx (a tail call), "
			 "so the return address is that of its own caller", lp->target, caller,
			 first_jmp - start);
	else if (indirect)
		snprintf(how, how_len, "contains no direct call to '%s' (%d indirect calls "
			 "could not be resolved)", lp->target, indirect);
	else
		snprintf(how, how_len, "contains no call to '%s'", lp->target);
	return ret;
}
