// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Does a handler leave the vector registers alone (lib/arch/arch.h)?
 *
 * A trampoline saves xmm0-7 around its handler only because the handler
 * may change them: at a function's entry they hold its floating-point
 * arguments.  The flags FHOOK_OPS_FL_GENERAL_REGS_ONLY and
 * FPROBE_FL_GENERAL_REGS_ONLY are the user's promise; this is the proof
 * for the handlers that need none: every instruction reachable from the
 * handler's entry is decoded (capstone), following direct branches, and
 * the handler qualifies only if none of them names a vector, MMX, x87 or
 * mask register, belongs to an instruction set extension that works on
 * them, touches its fregs argument, or leaves the code we can see (a
 * call, an indirect branch, a system call).  So only small leaf handlers
 * qualify; anything in doubt keeps the save.  A handler with a site of
 * its own does not qualify either (ops.c): what a redirect of it would
 * run is not known.
 *
 * The scan runs when an ops is registered, before its locks are taken,
 * if libcapstone is loaded in the process already (below); the
 * trampoline is chosen under them, from what the scan remembered.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "internal.h"
#include "cs.h"

#define cs fhook_cs

#define SCAN_INSNS	256		/* decoded per handler at most */
#define SCAN_BRANCHES	32		/* direct branch targets followed */
#define SCAN_CACHE	256		/* handlers remembered */

static struct {
	unsigned long func;
	bool vec_free;
} scanned[SCAN_CACHE];
static size_t nr_scanned;
static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;

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

static bool scan(unsigned long func)
{
	unsigned long todo[SCAN_BRANCHES], seen[SCAN_BRANCHES];
	size_t ntodo = 0, nseen = 0, budget = SCAN_INSNS;
	bool ok = true;
	cs_insn *insn;
	csh h;

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
		if (nseen == SCAN_BRANCHES) {
			ok = false;
			break;
		}
		seen[nseen++] = addr;
		for (;;) {
			uint8_t buf[16];
			uint64_t a = addr;

			/* a copy: the handler's last bytes may end its mapping */
			left = sizeof(buf);
			while (left && fhook_text_read(addr, buf, left))
				left--;
			code = buf;
			if (!budget-- || !cs.disasm_iter(h, &code, &left, &a, insn) ||
			    !insn_plain(insn)) {
				ok = false;
				break;
			}
			next = (unsigned long)a;
			if (cs.insn_group(h, insn, CS_GRP_RET))
				break;
			if (cs.insn_group(h, insn, CS_GRP_JUMP)) {
				unsigned long t = branch_target(insn);

				if (!t || ntodo == SCAN_BRANCHES) {
					ok = false;
					break;
				}
				todo[ntodo++] = t;
				if (insn->id == X86_INS_JMP)
					break;	/* no fall-through */
			}
			addr = next;
		}
	}
	fhook_cs_close(&h, insn);
	return ok;
}

/*
 * Our own handlers (the recorder's, kprobes') are not scanned: their
 * flags say what they do, and a traced process that only records must not
 * open libcapstone.
 */
static bool ours(unsigned long f)
{
	Dl_info self, other;

	return dladdr((void *)fhook_arch_handler_scan, &self) && dladdr((void *)f, &other) &&
	       self.dli_fbase == other.dli_fbase;
}

void fhook_arch_handler_scan(void *func)
{
	unsigned long f = (unsigned long)func;
	bool free_of_vec;
	size_t i;

	/*
	 * Only with libcapstone loaded already (by kprobes, or a redirect by
	 * caller): loading it costs about 10 ms of CPU and 380 page faults,
	 * more than the save it spares costs most programs, and a process
	 * that registers an ops at start-up would pay it every time.
	 */
	if (!fhook_cs_loaded() || ours(f))
		return;
	pthread_mutex_lock(&scan_lock);
	for (i = 0; i < nr_scanned; i++)
		if (scanned[i].func == f)
			break;
	if (i == nr_scanned && nr_scanned == SCAN_CACHE) {
		pthread_mutex_unlock(&scan_lock);
		return;
	}
	/*
	 * Scanned again at every registration: the object of a handler seen
	 * before may have been unloaded and another function loaded at its
	 * address since (while an ops is registered, its handler stays).
	 */
	free_of_vec = scan(f);
	__atomic_store_n(&scanned[i].vec_free, free_of_vec, __ATOMIC_RELAXED);
	if (i == nr_scanned) {
		scanned[i].func = f;
		__atomic_store_n(&nr_scanned, nr_scanned + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&scan_lock);
}

bool fhook_arch_handler_vec_free(void *func)
{
	size_t i, n = __atomic_load_n(&nr_scanned, __ATOMIC_ACQUIRE);

	for (i = 0; i < n; i++)
		if (scanned[i].func == (unsigned long)func)
			return __atomic_load_n(&scanned[i].vec_free, __ATOMIC_RELAXED);
	return false;
}
