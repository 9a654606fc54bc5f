// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Which argument registers does a traced function still read after its
 * site (the kernel's BPF trampolines save only the arguments BTF gives a
 * function; user space has no BTF, so we read the code)?
 *
 * A frameless fprobe entry saves the registers the function may take its
 * arguments in, because the handler's call clobbers them.  A function
 * that reads only %rdi loses nothing when the others are clobbered, and
 * the entry then saves one register instead of eight.  So the code after
 * the site is decoded (capstone), following direct branches, and a
 * register is live when some path reads it before writing all of it.
 *
 * Every doubt makes the answer "all of them": an instruction outside the
 * list below (whose register effects we know, implicit ones included), a
 * call or an indirect jump while some register is unwritten (the callee
 * may read it), a prefix that repeats, an int3 (a kprobe or a debugger),
 * too many instructions or branches, bytes that do not decode.  A write
 * counts as a write only for instructions that overwrite all of their
 * 32- or 64-bit destination whatever it held; every other write is taken
 * as a read.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>

#include "vecfree.h"

#define cs fhook_cs

#define LIVEIN_INSNS	48	/* decoded per function at most */

/* one decoder for every site, opened at first use and kept (a few KiB) */
static pthread_mutex_t livein_lock = PTHREAD_MUTEX_INITIALIZER;
static csh livein_h;
static cs_insn *livein_insn;
#define LIVEIN_BRANCHES	16	/* direct branch targets followed */

/* %rdi %rsi %rdx %rcx %r8 %r9 in argument order, then %rax (varargs) and %r10 (chain) */
enum { R_DI, R_SI, R_DX, R_CX, R_8, R_9, R_AX, R_10, NR_LIVE };
#define ALL_LIVE	((1u << NR_LIVE) - 1)

/* @r's index above and whether it names 32 or 64 bits of it; -1: none of them */
static int live_index(unsigned int r, bool *full)
{
	static const struct {
		unsigned int r64, r32, r16, r8a, r8b;
	} names[NR_LIVE] = {
		[R_DI] = { X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL, X86_REG_DIL },
		[R_SI] = { X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL, X86_REG_SIL },
		[R_DX] = { X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL, X86_REG_DH },
		[R_CX] = { X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL, X86_REG_CH },
		[R_8] = { X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B, X86_REG_R8B },
		[R_9] = { X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B, X86_REG_R9B },
		[R_AX] = { X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL, X86_REG_AH },
		[R_10] = { X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B, X86_REG_R10B },
	};
	int i;

	*full = false;
	for (i = 0; i < NR_LIVE; i++) {
		if (r == names[i].r64 || r == names[i].r32) {
			*full = true;
			return i;
		}
		if (r == names[i].r16 || r == names[i].r8a || r == names[i].r8b) {
			*full = false;
			return i;
		}
	}
	return -1;
}

/*
 * The instructions whose register effects are their operands' plus the
 * implicit ones listed (capstone's regs_read/regs_write, and %rax/%rdx
 * for the one-operand multiplies and divides, added below): integer
 * arithmetic, moves, stack, compares, conditional moves and sets, and the
 * scalar SSE that compilers emit for plain floating point (their general
 * registers are explicit).
 */
static bool known(const cs_insn *insn, csh h)
{
	switch (insn->id) {
	case X86_INS_MOV: case X86_INS_MOVABS: case X86_INS_MOVZX: case X86_INS_MOVSX:
	case X86_INS_MOVSXD: case X86_INS_LEA: case X86_INS_PUSH: case X86_INS_POP:
	case X86_INS_ADD: case X86_INS_SUB: case X86_INS_ADC: case X86_INS_SBB:
	case X86_INS_AND: case X86_INS_OR: case X86_INS_XOR: case X86_INS_CMP:
	case X86_INS_TEST: case X86_INS_INC: case X86_INS_DEC: case X86_INS_NEG:
	case X86_INS_NOT: case X86_INS_SHL: case X86_INS_SAL: case X86_INS_SHR:
	case X86_INS_SAR: case X86_INS_ROL: case X86_INS_ROR: case X86_INS_SHLD:
	case X86_INS_SHRD: case X86_INS_IMUL: case X86_INS_MUL: case X86_INS_DIV:
	case X86_INS_IDIV: case X86_INS_CDQE: case X86_INS_CWDE: case X86_INS_CDQ:
	case X86_INS_CQO: case X86_INS_BT: case X86_INS_BSWAP: case X86_INS_XCHG:
	case X86_INS_LEAVE:
	case X86_INS_SETA: case X86_INS_SETAE: case X86_INS_SETB: case X86_INS_SETBE:
	case X86_INS_SETE: case X86_INS_SETG: case X86_INS_SETGE: case X86_INS_SETL:
	case X86_INS_SETLE: case X86_INS_SETNE: case X86_INS_SETNO: case X86_INS_SETNP:
	case X86_INS_SETNS: case X86_INS_SETO: case X86_INS_SETP: case X86_INS_SETS:
	case X86_INS_MOVSS: case X86_INS_MOVSD: case X86_INS_MOVAPS: case X86_INS_MOVAPD:
	case X86_INS_MOVUPS: case X86_INS_MOVUPD: case X86_INS_MOVD: case X86_INS_MOVQ:
	case X86_INS_ADDSS: case X86_INS_ADDSD: case X86_INS_SUBSS: case X86_INS_SUBSD:
	case X86_INS_MULSS: case X86_INS_MULSD: case X86_INS_DIVSS: case X86_INS_DIVSD:
	case X86_INS_UCOMISS: case X86_INS_UCOMISD: case X86_INS_COMISS: case X86_INS_COMISD:
	case X86_INS_CVTSI2SS: case X86_INS_CVTSI2SD: case X86_INS_CVTTSS2SI:
	case X86_INS_CVTTSD2SI: case X86_INS_CVTSS2SD: case X86_INS_CVTSD2SS:
	case X86_INS_PXOR: case X86_INS_XORPS: case X86_INS_XORPD: case X86_INS_ANDPS:
	case X86_INS_ANDPD: case X86_INS_SQRTSS: case X86_INS_SQRTSD:
		return true;
	default:
		/* the conditional moves: a destination they may keep is read */
		return cs.insn_group(h, insn, X86_GRP_CMOV);
	}
}

/* What a path has seen: the registers it wrote whole, and those read before */
struct live_path {
	unsigned int written, live;
};

static void read_reg(struct live_path *p, unsigned int r)
{
	bool full;
	int i = live_index(r, &full);

	if (i >= 0 && !(p->written & (1u << i)))
		p->live |= 1u << i;
}

/* Everything @insn reads of the registers, and what it writes whole; false: in doubt */
static bool effects(const cs_insn *insn, csh h, struct live_path *p)
{
	const cs_detail *d = insn->detail;
	const cs_x86 *x = &d->x86;
	bool pure = fhook_insn_writes_whole(insn);
	unsigned int i, wrote = 0;

	if (!known(insn, h) || x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE)
		return false;
	if (fhook_insn_zeroes(insn)) {
		bool full;
		int r = live_index(x->operands[0].reg, &full);

		if (r >= 0 && full)
			p->written |= 1u << r;
		else
			read_reg(p, x->operands[0].reg);
		return true;
	}
	for (i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_MEM) {
			read_reg(p, op->mem.base);
			read_reg(p, op->mem.index);
		} else if (op->type == X86_OP_REG) {
			bool full;
			int r = live_index(op->reg, &full);

			/* only the destination of a pure write goes unread */
			if (!(i == 0 && pure && full && op->access == CS_AC_WRITE))
				read_reg(p, op->reg);
			else if (r >= 0)
				wrote |= 1u << r;
		}
	}
	for (i = 0; i < d->regs_read_count; i++)
		read_reg(p, d->regs_read[i]);
	for (i = 0; i < d->regs_write_count; i++)
		read_reg(p, d->regs_write[i]);
	if ((insn->id == X86_INS_MUL || insn->id == X86_INS_IMUL || insn->id == X86_INS_DIV ||
	     insn->id == X86_INS_IDIV) && x->op_count == 1) {
		read_reg(p, X86_REG_RAX);
		read_reg(p, X86_REG_RDX);
	}
	p->written |= wrote;
	return true;
}

/*
 * Is there a site at @t (or after an endbr64 there): another function's
 * entry, which a later hook may give anything to read?
 */
static bool reaches_site(unsigned long t, bool (*is_site)(unsigned long))
{
	uint8_t b[4];

	if (!is_site)
		return false;
	if (is_site(t))
		return true;
	return !fhook_text_read(t, b, 4) && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e &&
	       b[3] == 0xfa && is_site(t + 4);
}

static bool jump_target(const cs_insn *insn, unsigned long *t)
{
	const cs_x86 *x = &insn->detail->x86;

	if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return false;
	*t = (unsigned long)x->operands[0].imm;
	return true;
}

/*
 * @ret_dx: a return reads %rdx (a traced function's may return a pair);
 * else a return reads nothing (a handler returns an int, or nothing).
 */
static unsigned int live_args(unsigned long body, bool (*is_site)(unsigned long), bool ret_dx)
{
	struct {
		unsigned long addr;
		unsigned int written;
	} todo[LIVEIN_BRANCHES], seen[LIVEIN_BRANCHES];
	size_t ntodo = 1, nseen = 0, budget = LIVEIN_INSNS;
	unsigned int live = 0;
	cs_insn *insn;
	csh h;

	pthread_mutex_lock(&livein_lock);
	if (!livein_insn && fhook_cs_open(&livein_h, &livein_insn)) {
		pthread_mutex_unlock(&livein_lock);
		return ALL_LIVE;
	}
	h = livein_h;
	insn = livein_insn;
	todo[0].addr = body;
	todo[0].written = 0;
	while (ntodo && live != ALL_LIVE) {
		struct live_path p = { todo[--ntodo].written, 0 };
		unsigned long addr = todo[ntodo].addr;
		size_t i;

		for (i = 0; i < nseen && seen[i].addr != addr; i++)
			;
		if (i < nseen) {
			/* followed already knowing at most as much written */
			if ((seen[i].written & p.written) == seen[i].written)
				continue;
			p.written &= seen[i].written;
			seen[i].written = p.written;
		} else if (nseen == LIVEIN_BRANCHES) {
			live = ALL_LIVE;
			break;
		} else {
			seen[nseen].addr = addr;
			seen[nseen++].written = p.written;
		}
		for (;;) {
			uint8_t buf[16];
			const uint8_t *code = buf;
			uint64_t a = addr;
			size_t left = sizeof(buf);

			while (left && fhook_text_read(addr, buf, left))
				left--;
			if (!budget-- || !cs.disasm_iter(h, &code, &left, &a, insn)) {
				p.live = ALL_LIVE;
				break;
			}
			if (insn->id == X86_INS_UD2)
				break;
			/*
			 * %rdx is also a return register: a function that returns
			 * its third argument as a pair's second half never names it
			 * (%rax is never an argument but for varargs' %al, read as
			 * any other register)
			 */
			if (cs.insn_group(h, insn, CS_GRP_RET)) {
				if (ret_dx)
					read_reg(&p, X86_REG_RDX);
				break;
			}
			if (cs.insn_group(h, insn, CS_GRP_CALL) || insn->id == X86_INS_JMP) {
				unsigned long t;

				/* a call may read any register not written yet, as a site may */
				if (insn->id != X86_INS_JMP || !jump_target(insn, &t) ||
				    ntodo == LIVEIN_BRANCHES || reaches_site(t, is_site)) {
					p.live |= ~p.written & ALL_LIVE;
					break;
				}
				todo[ntodo].addr = t;
				todo[ntodo++].written = p.written;
				break;
			}
			if (cs.insn_group(h, insn, CS_GRP_JUMP)) {
				unsigned long t;

				/* jrcxz and loop read %rcx: not in the list */
				if (insn->id == X86_INS_JRCXZ || insn->id == X86_INS_JECXZ ||
				    insn->id == X86_INS_LOOP || insn->id == X86_INS_LOOPE ||
				    insn->id == X86_INS_LOOPNE || !jump_target(insn, &t) ||
				    ntodo == LIVEIN_BRANCHES) {
					p.live = ALL_LIVE;
					break;
				}
				if (reaches_site(t, is_site))
					p.live |= ~p.written & ALL_LIVE;
				else {
					todo[ntodo].addr = t;
					todo[ntodo++].written = p.written;
				}
			} else if (insn->id != X86_INS_NOP && insn->id != X86_INS_ENDBR64 &&
				   !effects(insn, h, &p)) {
				p.live = ALL_LIVE;
				break;
			}
			addr = (unsigned long)a;
		}
		live |= p.live;
	}
	pthread_mutex_unlock(&livein_lock);
	return live;
}

unsigned int fhook_arch_live_args(unsigned long body, bool (*is_site)(unsigned long))
{
	return live_args(body, is_site, true);
}

/*
 * A handler's arguments: from its first instruction, a return reading
 * none (a proven handler is a leaf: it calls nothing that could read
 * them).  Only with the decoder already loaded: asked as a probe
 * registers, it never loads one.
 */
bool fhook_arch_handler_reads_args(void *func, unsigned int args)
{
	if (!fhook_cs_loaded())
		return true;
	return live_args((unsigned long)func, NULL, false) & args & ((1u << R_AX) - 1);
}

/*
 * The class of a site: 1 when its function may read no argument register
 * but %rdi and %rsi, 2 when also %rdx, 0 (all of them) else.  %rdi and
 * %rsi are always saved: the Microsoft ABI, which GCC compiles ms_abi
 * functions to (Wine's), has them callee-saved, and a caller of such a
 * function may keep its own values there.  stubs.c picks the entry that
 * saves those.
 */
unsigned int fhook_arch_site_class(unsigned long ip, bool (*is_site)(unsigned long))
{
	unsigned int live = fhook_arch_live_args(ip + FHOOK_SITE_LEN, is_site);

	if (live & ~((1u << R_DI) | (1u << R_SI) | (1u << R_DX)))
		return 0;
	return (live & (1u << R_DX)) ? 2 : 1;
}

bool fhook_arch_site_class_ready(void)
{
	return fhook_cs_loaded();
}

void fhook_arch_site_class_prepare(void)
{
	/* an optimization: without libcapstone, every site saves everything, silently */
	if (!fhook_cs_loaded()) {
		bool quiet = fhook_cs_quiet;

		fhook_cs_quiet = true;
		fhook_cs_load();
		fhook_cs_quiet = quiet;
	}
}
