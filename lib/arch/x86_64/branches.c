// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Where a function's calls and jumps go (lib/arch/arch.h), decoded with
 * capstone: directly, or through a PLT stub or GOT slot whose current
 * value is read (we run inside the process, so the GOT can be read).
 *
 * libcapstone is opened with dlopen() the first time a function is
 * scanned, not linked: relocating its tables costs hundreds of page
 * faults, and every process that loads libfhook would pay them even
 * though only redirects by caller ever use it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "cs.h"

#define cs fhook_cs

struct fhook_cs fhook_cs;
static pthread_once_t cs_once = PTHREAD_ONCE_INIT;
static bool cs_ok;

static void cs_load(void)
{
	/* never closed: a second check must not pay the load again */
	void *h = dlopen("libcapstone.so.4", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "fhook: cannot load libcapstone.so.4 (%s); instructions "
			"cannot be decoded\n", dlerror());
		return;
	}
	*(void **)&cs.open = dlsym(h, "cs_open");
	*(void **)&cs.option = dlsym(h, "cs_option");
	*(void **)&cs.malloc = dlsym(h, "cs_malloc");
	*(void **)&cs.disasm_iter = dlsym(h, "cs_disasm_iter");
	*(void **)&cs.insn_group = dlsym(h, "cs_insn_group");
	*(void **)&cs.free = dlsym(h, "cs_free");
	*(void **)&cs.close = dlsym(h, "cs_close");
	__atomic_store_n(&cs_ok, cs.open && cs.option && cs.malloc && cs.disasm_iter &&
			 cs.insn_group && cs.free && cs.close, __ATOMIC_RELEASE);
}

bool fhook_cs_loaded(void)
{
	return __atomic_load_n(&cs_ok, __ATOMIC_ACQUIRE);
}

bool fhook_cs_load(void)
{
	pthread_once(&cs_once, cs_load);
	return cs_ok;
}

int fhook_cs_open(csh *h, cs_insn **insn)
{
	if (!fhook_cs_load())
		return -ENOSYS;
	if (cs.open(CS_ARCH_X86, CS_MODE_64, h) != CS_ERR_OK)
		return -ENOMEM;
	cs.option(*h, CS_OPT_DETAIL, CS_OPT_ON);
	*insn = cs.malloc(*h);
	if (!*insn) {
		cs.close(h);
		return -ENOMEM;
	}
	return 0;
}

void fhook_cs_close(csh *h, cs_insn *insn)
{
	cs.free(insn, 1);
	cs.close(h);
}

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
