// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel's ftrace_modify_call contract, for one site at a time: read
 * the site, compare it with what must be there, and only then write
 * (0, -EFAULT, -EINVAL or -EPERM), with ftrace_bug() saying what failed.
 * The instruction bytes come from the arch layer; the records and the
 * report are generic.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <fhook/kallsyms.h>

#include "core.h"
#include "arch/arch.h"
#include "kallsyms/objects.h"

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
	unsigned char cur[FHOOK_SITE_LEN];
	int ret;

	fhook_text_lock();
	ret = fhook_text_read(rec->ip, cur, sizeof(cur));
	if (ret) {
		fhook_text_unlock();
		fhook_ftrace_bug(ret, rec->ip, expected, NULL, sizeof(cur));
		return ret;
	}
	if (memcmp(cur, expected, sizeof(cur)) &&
	    !(fhook_site_is_nop(expected) && fhook_site_is_nop(cur))) {
		fhook_text_unlock();
		fhook_ftrace_bug(-EINVAL, rec->ip, expected, cur, sizeof(cur));
		return -EINVAL;
	}
	memset(&loc, 0, sizeof(loc));
	loc.addr = rec->ip;
	loc.len = FHOOK_SITE_LEN;
	loc.emu_len = (rec->flags & FTRACE_FL_PAD6) ? 6 : FHOOK_SITE_LEN;
	memcpy(loc.new, new, FHOOK_SITE_LEN);
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
	if (!fhook_site_in_reach(rec->ip, addr)) {
		fprintf(stderr, "fhook: call from %#lx cannot reach %#lx\n", rec->ip, addr);
		return -EINVAL;
	}
	fhook_site_encode_call(buf, rec->ip, addr);
	return 0;
}

int ftrace_make_nop(struct dyn_ftrace *rec, unsigned long addr)
{
	fhook_internal_guard();
	unsigned char old[FHOOK_SITE_LEN];
	int ret;

	ret = encode_call(rec, addr, old);
	if (ret)
		return ret;
	return modify_site(rec, old, fhook_site_nop);
}

int ftrace_make_call(struct dyn_ftrace *rec, unsigned long addr)
{
	fhook_internal_guard();
	unsigned char new[FHOOK_SITE_LEN];
	int ret;

	ret = encode_call(rec, addr, new);
	if (ret)
		return ret;
	return modify_site(rec, fhook_site_nop, new);
}

/* Even when @addr == @old_addr the whole read-compare-write is done. */
int ftrace_modify_call(struct dyn_ftrace *rec, unsigned long old_addr, unsigned long addr)
{
	fhook_internal_guard();
	unsigned char old[FHOOK_SITE_LEN], new[FHOOK_SITE_LEN];
	int ret;

	ret = encode_call(rec, old_addr, old);
	if (ret)
		return ret;
	ret = encode_call(rec, addr, new);
	if (ret)
		return ret;
	return modify_site(rec, old, new);
}

int fhook_init_nop_prepare(struct dyn_ftrace *rec, const unsigned char *cur,
			   struct text_poke_loc *loc)
{
	struct fhook_site_nop nop;

	if (fhook_site_classify(cur, FHOOK_SITE_MAX, rec->flags & FTRACE_FL_MCOUNT, &nop))
		return -EINVAL;
	if (nop.insn_len > FHOOK_SITE_LEN)
		rec->flags |= FTRACE_FL_PAD6;
	memset(loc, 0, sizeof(*loc));
	loc->addr = rec->ip;
	loc->len = nop.len;
	loc->emu_len = nop.insn_len;
	memcpy(loc->new, nop.bytes, sizeof(loc->new));
	return nop.len ? 1 : 0;
}

int ftrace_init_nop(struct dyn_ftrace *rec)
{
	fhook_internal_guard();
	struct text_poke_loc loc;
	unsigned char cur[FHOOK_SITE_MAX];
	int ret;

	fhook_text_lock();
	ret = fhook_text_read(rec->ip, cur, sizeof(cur));
	if (ret) {
		fhook_text_unlock();
		fhook_ftrace_bug(ret, rec->ip, fhook_site_nop, NULL, FHOOK_SITE_LEN);
		return ret;
	}
	ret = fhook_init_nop_prepare(rec, cur, &loc);
	if (ret < 0) {
		fhook_text_unlock();
		fhook_ftrace_bug(ret, rec->ip, fhook_site_nop, cur, FHOOK_SITE_LEN);
		return ret;
	}
	if (ret > 0 && fhook_text_poke_batch(&loc, 1)) {
		fhook_text_unlock();
		fhook_ftrace_bug(-EPERM, rec->ip, fhook_site_nop, cur, FHOOK_SITE_LEN);
		return -EPERM;
	}
	fhook_text_unlock();
	return 0;
}
