// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The arch functions of dynamic ftrace (seed 004): read the site, compare
 * it with what must be there, and only then write.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <fhook/kallsyms.h>

#include "arch.h"
#include "../../kallsyms/objects.h"
#include "../../core/recursion.h"

static const char *bug_what(int err)
{
	switch (err) {
	case -EFAULT:
		return "ftrace faulted on reading";
	case -EINVAL:
		return "ftrace failed to modify";
	case -EPERM:
		return "ftrace faulted on writing";
	}
	return "ftrace failed";
}

/*
 * The kernel's ftrace_bug(): say what failed, where, what we expected and
 * what we found.
 */
void fhook_ftrace_bug_obj(struct fhook_object *obj, int err, unsigned long ip,
			  const unsigned char *expected, const unsigned char *actual, size_t len)
{
	char sym[KSYM_SYMBOL_LEN], hex[64];

	fhook_object_format(obj, ip, sym, sizeof(sym), true);
	fprintf(stderr, "fhook: %s [<%016lx>] %s\n", bug_what(err), ip, sym);
	if (expected) {
		fhook_insn_hex(hex, sizeof(hex), expected, len);
		fprintf(stderr, "fhook:  expected: %s\n", hex);
	}
	if (actual) {
		fhook_insn_hex(hex, sizeof(hex), actual, len);
		fprintf(stderr, "fhook:  actual:   %s\n", hex);
	}
}

void fhook_ftrace_bug(int err, unsigned long ip, const unsigned char *expected,
		      const unsigned char *actual, size_t len)
{
	fhook_ftrace_bug_obj(fhook_object_of(ip), err, ip, expected, actual, len);
}

/* Read, compare, write one site; the common body of the three functions. */
static int modify_site(struct dyn_ftrace *rec, const unsigned char *expected,
		       const unsigned char *new)
{
	struct text_poke_loc loc;
	unsigned char cur[CALL_INSN_SIZE];
	int ret;

	fhook_text_lock();
	ret = fhook_text_read(rec->ip, cur, sizeof(cur));
	if (ret) {
		fhook_text_unlock();
		fhook_ftrace_bug(ret, rec->ip, expected, NULL, sizeof(cur));
		return ret;
	}
	if (memcmp(cur, expected, sizeof(cur)) &&
	    !(fhook_insn_is_nop5(expected) && fhook_insn_is_nop5(cur))) {
		fhook_text_unlock();
		fhook_ftrace_bug(-EINVAL, rec->ip, expected, cur, sizeof(cur));
		return -EINVAL;
	}
	memset(&loc, 0, sizeof(loc));
	loc.addr = rec->ip;
	loc.len = CALL_INSN_SIZE;
	loc.emu_len = (rec->flags & FTRACE_FL_PAD6) ? 6 : CALL_INSN_SIZE;
	memcpy(loc.new, new, CALL_INSN_SIZE);
	ret = fhook_text_poke_batch(&loc, 1);
	fhook_text_unlock();
	if (ret) {
		fhook_ftrace_bug(-EPERM, rec->ip, expected, cur, sizeof(cur));
		return -EPERM;
	}
	return 0;
}

static int encode_call(struct dyn_ftrace *rec, unsigned long addr, unsigned char *buf)
{
	if (!fhook_call_in_reach(rec->ip, addr)) {
		fprintf(stderr, "fhook: call from %#lx cannot reach %#lx\n", rec->ip, addr);
		return -EINVAL;
	}
	fhook_insn_call(buf, rec->ip, addr);
	return 0;
}

int ftrace_make_nop(struct dyn_ftrace *rec, unsigned long addr)
{
	fhook_internal_guard();
	unsigned char old[CALL_INSN_SIZE];
	int ret;

	ret = encode_call(rec, addr, old);
	if (ret)
		return ret;
	return modify_site(rec, old, fhook_nop5);
}

int ftrace_make_call(struct dyn_ftrace *rec, unsigned long addr)
{
	fhook_internal_guard();
	unsigned char new[CALL_INSN_SIZE];
	int ret;

	ret = encode_call(rec, addr, new);
	if (ret)
		return ret;
	return modify_site(rec, fhook_nop5, new);
}

/* Even when @addr == @old_addr the whole read-compare-write is done. */
int ftrace_modify_call(struct dyn_ftrace *rec, unsigned long old_addr, unsigned long addr)
{
	fhook_internal_guard();
	unsigned char old[CALL_INSN_SIZE], new[CALL_INSN_SIZE];
	int ret;

	ret = encode_call(rec, old_addr, old);
	if (ret)
		return ret;
	ret = encode_call(rec, addr, new);
	if (ret)
		return ret;
	return modify_site(rec, old, new);
}

/*
 * What ftrace_init_nop must write at @rec, given the @cur bytes there.
 * Returns 1 and fills @loc when a write is needed, 0 when the site is
 * already a nop, -EINVAL for bytes that are no known pad.
 */
int fhook_init_nop_prepare(struct dyn_ftrace *rec, const unsigned char *cur,
			   struct text_poke_loc *loc)
{
	memset(loc, 0, sizeof(*loc));
	loc->addr = rec->ip;
	loc->len = CALL_INSN_SIZE;
	loc->emu_len = CALL_INSN_SIZE;
	memcpy(loc->new, fhook_nop5, CALL_INSN_SIZE);

	if (fhook_insn_is_nop5(cur)) {
		if ((rec->flags & FTRACE_FL_MCOUNT) && cur[5] == 0x90)
			rec->flags |= FTRACE_FL_PAD6;
		return 0;
	}
	if (fhook_insn_is_pad5(cur))
		return 1;
	if (cur[0] == CALL_INSN_OPCODE && (rec->flags & FTRACE_FL_MCOUNT))
		return 1;
	/* PIE: call *__fentry__@GOTPCREL(%rip), six bytes */
	if (cur[0] == 0xff && cur[1] == 0x15 && (rec->flags & FTRACE_FL_MCOUNT)) {
		loc->len = 6;
		loc->emu_len = 6;
		loc->new[5] = 0x90;
		rec->flags |= FTRACE_FL_PAD6;
		return 1;
	}
	return -EINVAL;
}

int ftrace_init_nop(struct dyn_ftrace *rec)
{
	fhook_internal_guard();
	struct text_poke_loc loc;
	unsigned char cur[6];
	int ret;

	fhook_text_lock();
	ret = fhook_text_read(rec->ip, cur, sizeof(cur));
	if (ret) {
		fhook_text_unlock();
		fhook_ftrace_bug(ret, rec->ip, fhook_nop5, NULL, CALL_INSN_SIZE);
		return ret;
	}
	ret = fhook_init_nop_prepare(rec, cur, &loc);
	if (ret < 0) {
		fhook_text_unlock();
		fhook_ftrace_bug(ret, rec->ip, fhook_nop5, cur, CALL_INSN_SIZE);
		return ret;
	}
	if (ret > 0 && fhook_text_poke_batch(&loc, 1)) {
		fhook_text_unlock();
		fhook_ftrace_bug(-EPERM, rec->ip, fhook_nop5, cur, CALL_INSN_SIZE);
		return -EPERM;
	}
	fhook_text_unlock();
	return 0;
}
