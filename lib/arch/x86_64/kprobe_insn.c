// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Relocating the instructions a kprobe replaces (lib/arch/arch.h), with
 * capstone: a copy that runs anywhere within +-2 GiB of them behaves as
 * they did at their own address.
 *
 *   rip-relative operands   the displacement is rewritten for the new place
 *   jmp / jcc / loop rel    an absolute "jmp *slot(%rip)", a jcc or loop
 *                           inverted over it (rel8 branches are widened)
 *   call rel / call *op     the last instruction only: "push $next" (the
 *                           original return address, from a slot) and a
 *                           jump, so the callee returns into the original
 *                           code, never into the copy, and unwinders see
 *                           the frames they expect
 *
 * and the copy ends with a jump back to the first byte after them (or, for
 * a trap probe with a post_handler, an int3).  What is refused says why, in
 * words fhook funcs --why prints.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "cs.h"
#include "kprobe.h"

#define cs fhook_cs

/* A branch's kind, from its raw bytes (capstone's groups mix rel and indirect). */
enum br_kind {
	BR_NONE,	/* not a branch, or one that needs no care (ret) */
	BR_JMP,		/* jmp rel8/rel32 */
	BR_JCC,		/* jcc rel8/rel32 */
	BR_LOOP,	/* loop*, jrcxz, jecxz: rel8 only */
	BR_CALL,	/* call rel32 */
	BR_CALL_IND,	/* call *r/m */
	BR_JMP_IND,	/* jmp *r/m */
	BR_BAD,		/* far branches, xbegin, 16-bit operands: not relocatable */
};

struct br {
	enum br_kind kind;
	unsigned int op;	/* offset of the opcode byte */
	unsigned char cc;	/* jcc: condition; loop: opcode */
	unsigned long target;	/* rel kinds */
};

static bool is_legacy_prefix(unsigned char b)
{
	switch (b) {
	case 0x66: case 0x67: case 0xf2: case 0xf3: case 0xf0:
	case 0x2e: case 0x3e: case 0x26: case 0x64: case 0x65: case 0x36:
		return true;
	}
	return false;
}

static long rel_at(const unsigned char *b, unsigned int size)
{
	int32_t r32;

	if (size == 1)
		return (int8_t)b[0];
	memcpy(&r32, b, 4);
	return r32;
}

static void classify(const unsigned char *b, unsigned int len, unsigned long ip, struct br *br)
{
	unsigned int i = 0;
	bool opsize = false;
	unsigned char o;

	memset(br, 0, sizeof(*br));
	while (i < len && is_legacy_prefix(b[i]))
		opsize |= b[i++] == 0x66;
	if (i < len && (b[i] & 0xf0) == 0x40)
		i++;
	if (i >= len)
		return;
	br->op = i;
	o = b[i];
	if (o == 0xeb || o == 0xe9 || (o >= 0x70 && o <= 0x7f) || o == 0xe8 ||
	    (o >= 0xe0 && o <= 0xe3)) {
		br->kind = o == 0xeb || o == 0xe9 ? BR_JMP : o == 0xe8 ? BR_CALL :
			   o >= 0xe0 ? BR_LOOP : BR_JCC;
		br->cc = o >= 0x70 && o <= 0x7f ? o & 0xf : o;
		br->target = ip + len + rel_at(b + i + 1, o == 0xe9 || o == 0xe8 ? 4 : 1);
	} else if (o == 0x0f && i + 1 < len && b[i + 1] >= 0x80 && b[i + 1] <= 0x8f) {
		br->kind = BR_JCC;
		br->cc = b[i + 1] & 0xf;
		br->target = ip + len + rel_at(b + i + 2, 4);
	} else if (o == 0xff && i + 1 < len) {
		unsigned int reg = (b[i + 1] >> 3) & 7;

		br->kind = reg == 2 ? BR_CALL_IND : reg == 4 ? BR_JMP_IND :
			   reg == 3 || reg == 5 ? BR_BAD : BR_NONE;
	} else if (o == 0xc7 && i + 1 < len && b[i + 1] == 0xf8) {
		br->kind = BR_BAD;	/* xbegin */
	} else if (o == 0x9a || o == 0xea) {
		br->kind = BR_BAD;
	}
	if (opsize && br->kind != BR_NONE && br->kind != BR_CALL_IND && br->kind != BR_JMP_IND)
		br->kind = BR_BAD;
}

/* Does the memory operand of @insn use %rsp (a push before it would move it)? */
static bool uses_rsp(const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;
	int i;

	for (i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_REG && op->reg == X86_REG_RSP)
			return true;
		if (op->type == X86_OP_MEM &&
		    (op->mem.base == X86_REG_RSP || op->mem.index == X86_REG_RSP))
			return true;
	}
	return false;
}

/* Does @insn hold @disp as 4 bytes at @off? */
static bool disp_at(const cs_insn *insn, unsigned int off, int64_t disp)
{
	int32_t d;

	if (!off || off + 4u > insn->size)
		return false;
	memcpy(&d, insn->bytes + off, 4);
	return d == disp;
}

/*
 * The rip-relative operand's displacement offset in @insn, 0 if none; -1
 * unsure.  A rip-relative displacement is always 4 bytes, right after the
 * ModRM byte (capstone 4 gets disp_size wrong with a 0x66 prefix).
 */
static int rip_disp_offset(const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;
	int i;

	for (i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type != X86_OP_MEM || op->mem.base != X86_REG_RIP)
			continue;
		if (disp_at(insn, x->encoding.disp_offset, op->mem.disp))
			return x->encoding.disp_offset;
		if (x->encoding.modrm_offset &&
		    disp_at(insn, x->encoding.modrm_offset + 1u, op->mem.disp))
			return x->encoding.modrm_offset + 1;
		return -1;
	}
	return 0;
}

/* The code being emitted, and the absolute addresses it jumps through. */
struct emit {
	struct kprobe_reloc *out;	/* a post_handler's exits go there; NULL: none */
	unsigned char *buf;
	size_t len, cap;
	unsigned long at;		/* address of buf[0] */
	unsigned long fstart;		/* the function's start, for messages */
	unsigned long abs[KPROBE_MAX_ABS];
	size_t abs_ref[KPROBE_MAX_ABS];	/* offset of each reference's disp32 */
	int nr_abs;
	bool overflow;
	/* branch targets moved with the copy: the instructions' new offsets */
	unsigned long map_start, map_end;	/* [start, end) of the original moved */
	const unsigned long *map_addr;
	const size_t *map_off;
	unsigned int map_nr;
};

/*
 * Where a branch to @t goes from the copy: into the copy if @t was moved
 * with it (the probed address itself: the entry, so the probe fires again
 * as it would in the original), else to the original.
 */
static unsigned long mapped(const struct emit *e, unsigned long t)
{
	unsigned int i;

	if (t < e->map_start || t >= e->map_end)
		return t;
	if (t == e->map_start)
		return e->at;
	for (i = 0; i < e->map_nr; i++)
		if (e->map_addr[i] == t)
			return e->at + e->map_off[i];
	return t;
}

static void put(struct emit *e, const void *b, size_t n)
{
	if (e->len + n > e->cap) {
		e->overflow = true;
		return;
	}
	memcpy(e->buf + e->len, b, n);
	e->len += n;
}

/* @op (ff 25: jmp, ff 35: push) through an 8-byte slot holding @abs */
static void put_abs(struct emit *e, unsigned char modrm, unsigned long abs)
{
	unsigned char b[6] = { 0xff, modrm, 0, 0, 0, 0 };

	if (e->nr_abs == KPROBE_MAX_ABS) {
		e->overflow = true;
		return;
	}
	e->abs[e->nr_abs] = abs;
	e->abs_ref[e->nr_abs++] = e->len + 2;
	put(e, b, sizeof(b));
}

/* The slots after the code; each reference's disp32 now points at its slot. */
static void put_abs_table(struct emit *e)
{
	int i;

	while (e->len % 8)
		put(e, (unsigned char[]){ INT3_INSN_OPCODE }, 1);
	for (i = 0; i < e->nr_abs && !e->overflow; i++) {
		int32_t d = (int32_t)(e->len - (e->abs_ref[i] + 4));

		memcpy(e->buf + e->abs_ref[i], &d, 4);
		put(e, &e->abs[i], 8);
	}
}

static int why(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int why(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return -EILSEQ;
}

/*
 * Emit @insn (at @ip in the original, @last: the last one relocated) at
 * e->at + e->len.  Returns 0 or -EILSEQ with @w said.
 */
/*
 * A post_handler's exit: an int3 here (for the kinds that leave by a far
 * jump, just before it), the thread then seen at @ip and going on at
 * @resume.  Without a post_handler: nothing.
 */
static void put_exit(struct emit *e, unsigned char kind, unsigned long ip, unsigned long resume,
		     unsigned short imm)
{
	struct kprobe_reloc *o = e->out;

	if (!o)
		return;
	if (o->nr_exits == sizeof(o->exits) / sizeof(o->exits[0])) {
		e->overflow = true;
		return;
	}
	o->exits[o->nr_exits].off = (unsigned int)e->len;
	o->exits[o->nr_exits].kind = kind;
	o->exits[o->nr_exits].imm = imm;
	o->exits[o->nr_exits].ip = ip;
	o->exits[o->nr_exits++].resume = resume;
	put(e, (unsigned char[]){ INT3_INSN_OPCODE }, 1);
}

static int emit_insn(struct emit *e, const cs_insn *insn, unsigned long ip, bool last,
		     char *w, size_t wsize)
{
	unsigned long next = ip + insn->size;
	unsigned char x = e->out ? 1 : 0;	/* the exit's int3 before a far jump */
	struct br br;
	int doff;

	classify(insn->bytes, insn->size, ip, &br);
	switch (br.kind) {
	case BR_BAD:
		return why(w, wsize, "%s at +0x%lx cannot be moved", insn->mnemonic, ip - e->fstart);
	case BR_JMP:
		put_exit(e, KPROBE_EXIT_FALL, br.target, mapped(e, br.target), 0);
		put_abs(e, 0x25, mapped(e, br.target));
		return 0;
	case BR_JCC:
		/* j!cc over the 6-byte jump */
		put(e, (unsigned char[]){ 0x70 | (br.cc ^ 1), 6 + x }, 2);
		put_exit(e, KPROBE_EXIT_FALL, br.target, mapped(e, br.target), 0);
		put_abs(e, 0x25, mapped(e, br.target));
		return 0;
	case BR_LOOP: {
		/* loop +2; jmp +6; jmp *target: taken goes to the far jump */
		unsigned char b[5] = { 0 }, n = 0;

		if (br.op && insn->bytes[0] == 0x67)
			b[n++] = 0x67;
		b[n++] = br.cc;
		b[n++] = 2;
		b[n++] = 0xeb;
		b[n++] = 6 + x;
		put(e, b, n);
		put_exit(e, KPROBE_EXIT_FALL, br.target, mapped(e, br.target), 0);
		put_abs(e, 0x25, mapped(e, br.target));
		return 0;
	}
	case BR_CALL:
	case BR_CALL_IND:
		if (!last)
			return why(w, wsize, "a call at +0x%lx before the end of the bytes replaced",
				   ip - e->fstart);
		if (br.kind == BR_CALL_IND && uses_rsp(insn))
			return why(w, wsize, "a call through %%rsp at +0x%lx", ip - e->fstart);
		if (br.kind == BR_CALL_IND && e->out)
			break;		/* push the target, below */
		/* the return address is the original one */
		put_abs(e, 0x35, next);
		if (br.kind == BR_CALL) {
			put_exit(e, KPROBE_EXIT_FALL, br.target, br.target, 0);
			put_abs(e, 0x25, br.target);
			return 0;
		}
		/* the same operand, as a jmp: ModRM reg 2 -> 4, below */
		break;
	case BR_JMP_IND:
		if (!e->out)
			break;
		if (uses_rsp(insn))
			return why(w, wsize, "a jmp through %%rsp at +0x%lx, with a post_handler",
				   ip - e->fstart);
		/* below the red zone: the target is pushed there, not over live data */
		put(e, (unsigned char[]){ 0x48, 0x8d, 0x64, 0x24, 0x80 }, 5);
		break;
	default:
		if (e->out && (insn->bytes[br.op] == 0xc3 || insn->bytes[br.op] == 0xc2)) {
			unsigned short imm = 0;

			if (insn->bytes[br.op] == 0xc2)
				memcpy(&imm, insn->bytes + br.op + 1, 2);
			put_exit(e, KPROBE_EXIT_RET, 0, 0, imm);
			return 0;
		}
		break;
	}
	doff = rip_disp_offset(insn);
	if (doff < 0)
		return why(w, wsize, "%s %s at +0x%lx: its operand is not understood",
			   insn->mnemonic, insn->op_str, ip - e->fstart);
	{
		unsigned char b[16];
		unsigned long new_next = e->at + e->len + insn->size;

		memcpy(b, insn->bytes, insn->size);
		if (e->out && (br.kind == BR_CALL_IND || br.kind == BR_JMP_IND))
			/* push the same operand (ModRM reg 6): the target, then the exit */
			b[br.op + 1] = (unsigned char)((b[br.op + 1] & ~0x38) | (6 << 3));
		else if (br.kind == BR_CALL_IND)
			b[br.op + 1] = (unsigned char)((b[br.op + 1] & ~0x38) | (4 << 3));
		if (doff) {
			int32_t d;
			long nd;

			memcpy(&d, b + doff, 4);
			nd = (long)(next + d) - (long)new_next;
			if (nd != (int32_t)nd)
				return why(w, wsize, "rip-relative operand at +0x%lx out of reach",
					   ip - e->fstart);
			d = (int32_t)nd;
			memcpy(b + doff, &d, 4);
		}
		put(e, b, insn->size);
	}
	if (e->out && br.kind == BR_CALL_IND)
		put_exit(e, KPROBE_EXIT_CALL_IND, next, 0, 0);
	else if (e->out && br.kind == BR_JMP_IND)
		put_exit(e, KPROBE_EXIT_JMP_IND, 0, 0, 0);
	return 0;
}

/* The range a jump may not land in, and the function it is in. */
struct into {
	unsigned long start, size;	/* the function */
	unsigned long a, len;		/* (a, a + len): past the jump's first byte */
	const struct kprobe_reloc_req *req;	/* its read() for tables */
	/*
	 * Direct branches into the range from [a, a + KPROBE_EXTEND_MAX) are
	 * allowed, and the end of the last one noted: the copy can take them
	 * along (a loop whose head is in the first bytes).
	 */
	unsigned long src_end;
	char first_why[96];		/* the first such branch, in words */
	unsigned long moved_end;	/* non-zero: branches from [a, moved_end) move too */
};

static bool lands_inside(const struct into *in, unsigned long target)
{
	return target > in->a && target < in->a + in->len;
}

static bool in_function(const struct into *in, unsigned long target)
{
	return target >= in->start && target < in->start + in->size;
}

/*
 * A jump table at @table, if that is what it is: 32-bit offsets from the
 * table (position-independent code) or 64-bit addresses, read for as long
 * as they land in the function.  True if one lands inside the range.
 * Reading a table that is none (a string, say) costs nothing but, at
 * worst, a trap where a jump would have done.
 */
static bool table_lands_inside(const struct into *in, unsigned long table)
{
	unsigned long k;

	if (in_function(in, table))
		return false;
	for (k = 0; k < 4096; k++) {
		int32_t rel;

		if (!in->req->read(in->req->ctx, table + 4 * k, &rel, 4))
			break;
		if (!in_function(in, table + rel))
			break;
		if (lands_inside(in, table + rel))
			return true;
	}
	for (k = 0; k < 4096; k++) {
		unsigned long abs;

		if (!in->req->read(in->req->ctx, table + 8 * k, &abs, 8))
			break;
		if (!in_function(in, abs))
			break;
		if (lands_inside(in, abs))
			return true;
	}
	return false;
}

/*
 * Is any branch of the function aimed inside the range?  A thread would
 * land in the middle of the jump.  Every instruction is decoded (one that
 * cannot be makes it unsure); direct branches are compared, and where the
 * function jumps through a register or a table, every table it could use
 * (what a rip-relative lea or an absolute operand points at) is read.  A
 * register jump with no table is a tail call through a pointer.
 * @code is the function's original bytes.
 */
#define MAX_TABLES	1024

/*
 * Where a jump table may be, from an instruction's bytes (@op: its opcode
 * byte): 1 for "lea disp(%rip), %reg" (the caller adds the address), the
 * absolute disp of "mov/movslq/jmp disp(,%idx,scale)", else 0.
 */
static long table_operand(const unsigned char *b, unsigned int len, unsigned int op)
{
	unsigned char modrm, sib;

	if (op + 2 > len)
		return 0;
	modrm = b[op + 1];
	if (b[op] == 0x8d && (modrm & 0xc7) == 0x05 && op + 6 <= len)
		return 1;
	if ((b[op] == 0x8b || b[op] == 0x63 || b[op] == 0xff) && (modrm & 0xc7) == 0x04 &&
	    op + 7 <= len) {
		sib = b[op + 2];
		/* no base, an index */
		if ((sib & 7) == 5 && ((sib >> 3) & 7) != 4)
			return rel_at(b + op + 3, 4) > 1 ? rel_at(b + op + 3, 4) : 0;
	}
	return 0;
}

static int check_branches_into(csh h, cs_insn *insn, const unsigned char *code,
			       struct into *in, char *w, size_t wsize)
{
	unsigned long tables[MAX_TABLES];
	int nr_tables = 0, indirect = 0, i;
	const uint8_t *p = code;
	uint64_t addr = in->start;
	size_t left = in->size;

	/* capstone's operand details cost ten times the decoding: bytes will do */
	cs.option(h, CS_OPT_DETAIL, CS_OPT_OFF);
	while (left) {
		struct br br;
		long t;

		if (!cs.disasm_iter(h, &p, &left, &addr, insn)) {
			cs.option(h, CS_OPT_DETAIL, CS_OPT_ON);
			return why(w, wsize, "undecodable bytes at +0x%lx",
				   (unsigned long)addr - in->start);
		}
		classify(insn->bytes, insn->size, insn->address, &br);
		if ((br.kind == BR_JMP || br.kind == BR_JCC || br.kind == BR_LOOP ||
		     br.kind == BR_CALL) && lands_inside(in, br.target)) {
			unsigned long end = insn->address + insn->size;

			if (in->moved_end && insn->address >= in->a && insn->address < in->moved_end)
				continue;	/* moved with the copy */
			if (!in->src_end)
				snprintf(in->first_why, sizeof(in->first_why),
					 "a %s at +0x%lx jumps back into the bytes replaced",
					 insn->mnemonic, (unsigned long)insn->address - in->start);
			if (br.kind == BR_CALL || insn->address < in->a || in->moved_end ||
			    end > in->a + KPROBE_EXTEND_MAX) {
				cs.option(h, CS_OPT_DETAIL, CS_OPT_ON);
				return why(w, wsize, "%s", in->first_why);
			}
			in->src_end = end > in->src_end ? end : in->src_end;
		}
		if (br.kind == BR_JMP_IND)
			indirect++;
		t = table_operand(insn->bytes, insn->size, br.op);
		if (t && nr_tables < MAX_TABLES)
			tables[nr_tables++] = t == 1 ? 0 : (unsigned long)t;
		if (t == 1)	/* rip-relative: from the end of the instruction */
			tables[nr_tables - 1] = insn->address + insn->size +
				rel_at(insn->bytes + br.op + 2, 4);
	}
	cs.option(h, CS_OPT_DETAIL, CS_OPT_ON);
	if (!indirect)
		return 0;
	if (nr_tables == MAX_TABLES)
		return why(w, wsize, "an indirect jump and too many tables to read");
	for (i = 0; i < nr_tables; i++)
		if (table_lands_inside(in, tables[i]))
			return why(w, wsize, "a jump table leads into the bytes replaced");
	return 0;
}

/* Does @insn never fall through to the next instruction? */
static bool is_terminal(const cs_insn *insn)
{
	switch (insn->id) {
	case X86_INS_RET:
	case X86_INS_JMP:
	case X86_INS_UD2:
	case X86_INS_HLT:
		return true;
	}
	return false;
}

/* Are @n bytes at @b the padding a linker or assembler puts between functions? */
static bool is_padding(csh h, cs_insn *insn, const unsigned char *b, size_t n, unsigned long at)
{
	const uint8_t *p = b;
	uint64_t addr = at;
	size_t left = n, done = 0;

	while (done < n) {
		if (b[done] == INT3_INSN_OPCODE || b[done] == 0x90) {
			done++;
			continue;
		}
		p = b + done;
		left = 15;
		addr = at + done;
		if (!cs.disasm_iter(h, &p, &left, &addr, insn) || insn->id != X86_INS_NOP)
			return false;
		done += insn->size;
	}
	return true;
}

/*
 * The instructions of [@a, @a + @len) into @ends (their end offsets) and
 * @nr: a region moved whole, whose branches the copy keeps.  Nothing that
 * could leave a return address or a jump target inside it: no call, no
 * indirect jump.  0, or -EILSEQ.
 */
static int extend(csh h, cs_insn *insn, const unsigned char *code, unsigned long a,
		  unsigned int len, unsigned int *ends, unsigned int *nr)
{
	const uint8_t *p = code;
	uint64_t addr = a;
	size_t left = len;
	unsigned int n = 0;

	while (left) {
		struct br br;

		if (n == KPROBE_MAX_INSNS || !cs.disasm_iter(h, &p, &left, &addr, insn))
			return -EILSEQ;
		classify(insn->bytes, insn->size, insn->address, &br);
		if (br.kind == BR_CALL || br.kind == BR_CALL_IND || br.kind == BR_JMP_IND ||
		    br.kind == BR_BAD)
			return -EILSEQ;
		ends[n++] = (unsigned int)(addr - a);
	}
	*nr = n;
	return 0;
}

int fhook_kprobe_relocate(const struct kprobe_reloc_req *req, struct kprobe_reloc *out,
			  char *w, size_t wsize)
{
	const unsigned long a = req->addr;
	const unsigned char *code = req->code + (a - req->start);
	size_t avail = req->start + req->size - a;
	unsigned int covered = 0, nr = 0;
	bool padded = false;
	unsigned int ends[KPROBE_MAX_INSNS], pass;
	unsigned long insn_addr[KPROBE_MAX_INSNS];
	size_t insn_off[KPROBE_MAX_INSNS];
	struct emit e = { .buf = out->code, .cap = KPROBE_CODE_MAX, .at = req->dest,
			  .fstart = req->start, .out = req->post ? out : NULL };
	const uint8_t *p;
	uint64_t addr;
	size_t left;
	cs_insn *insn;
	csh h;
	int ret = 0;
	unsigned int i;

	w[0] = 0;
	ret = fhook_cs_open(&h, &insn);
	if (ret)
		return ret;
	/* a probe inside a function: on an instruction's first byte */
	if (req->size && a > req->start) {
		p = req->code;
		left = a - req->start;
		addr = req->start;
		while (left && cs.disasm_iter(h, &p, &left, &addr, insn))
			;
		if (addr != a) {
			ret = why(w, wsize, "+0x%lx is not the start of an instruction",
				  a - req->start);
			goto out;
		}
	}
	/* which instructions the probe replaces */
	p = code;
	left = avail;
	addr = a;
	while (covered < req->min_len) {
		if (!left && nr && is_terminal(insn) && covered + req->pad >= req->min_len &&
		    is_padding(h, insn, code + covered, req->min_len - covered, a + covered)) {
			/* a short function: the jump's tail lies on the padding after it */
			padded = true;
			break;
		}
		if (!left && req->min_len > 1) {
			ret = why(w, wsize, "%lu bytes from the probe to the end of the function: "
				  "shorter than a jump", (unsigned long)avail);
			goto out;
		}
		if (nr == KPROBE_MAX_INSNS || !left ||
		    !cs.disasm_iter(h, &p, &left, &addr, insn)) {
			ret = why(w, wsize, "undecodable bytes at +0x%lx",
				  a + covered - req->start);
			goto out;
		}
		if (insn->bytes[0] == INT3_INSN_OPCODE) {
			ret = why(w, wsize, "an int3 is there already (a debugger's?)");
			goto out;
		}
		covered += insn->size;
		ends[nr++] = covered;
	}
	if (req->min_len > 1) {
		struct into in = { .start = req->start, .size = req->size, .a = a,
				   .len = padded ? req->min_len : covered, .req = req };

		ret = check_branches_into(h, insn, req->code, &in, w, wsize);
		if (ret)
			goto out;
		if (in.src_end > a + covered) {
			/* a loop back into the first bytes: moved whole */
			ret = extend(h, insn, code, a, (unsigned int)(in.src_end - a), ends, &nr);
			if (ret) {
				ret = why(w, wsize, "%s", in.first_why);
				goto out;
			}
			covered = (unsigned int)(in.src_end - a);
			/*
			 * The moved loop's branches land anywhere in it: nothing
			 * from outside may enter it, or it would take them in
			 * the original and reach the first bytes.
			 */
			in.len = covered;
			in.moved_end = a + covered;
			ret = check_branches_into(h, insn, req->code, &in, w, wsize);
			if (ret) {
				ret = why(w, wsize, "a branch from outside enters the loop at the start");
				goto out;
			}
		}
	}
	/* the copy, behind the call to the handlers: the offsets, then the code */
	e.map_start = a;
	e.map_end = a + covered;
	e.map_nr = nr;
	e.map_addr = insn_addr;
	e.map_off = insn_off;
	for (i = 0; i < nr; i++)
		insn_addr[i] = a + (i ? ends[i - 1] : 0);
	for (pass = 0; pass < 2 && !ret; pass++) {
		e.len = req->prefix_len;
		e.nr_abs = 0;
		out->nr_exits = 0;
		p = code;
		left = covered;
		addr = a;
		for (i = 0; i < nr && !ret; i++) {
			cs.disasm_iter(h, &p, &left, &addr, insn);
			insn_off[i] = e.len;
			ret = emit_insn(&e, insn, insn->address, i == nr - 1, w, wsize);
		}
	}
	if (ret)
		goto out;
	/* after an instruction that went on: the last exit, then back */
	put_exit(&e, KPROBE_EXIT_FALL, a + covered, a + covered, 0);
	put_abs(&e, 0x25, a + covered);
	put_abs_table(&e);
	if (e.overflow) {
		ret = why(w, wsize, "the copy of the bytes replaced does not fit");
		goto out;
	}
	out->len = e.len;
	out->covered = padded ? req->min_len : covered;
	memcpy(out->ends, ends, sizeof(ends[0]) * nr);
	for (i = 0; i < nr; i++)
		out->offs[i] = (unsigned int)insn_off[i];
	out->nr_insns = nr;
out:
	fhook_cs_close(&h, insn);
	return ret;
}
