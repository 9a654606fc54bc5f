/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared by the "traced output == untraced output" tests: an fprobe with
 * entry and exit handlers on every function of the test program, which
 * checks in each exit that the entry data (entry ip and return address)
 * came back intact.
 */
#ifndef FHOOK_TEST_PROGS_H
#define FHOOK_TEST_PROGS_H

#include <fhook/fhook.h>
#include <fhook/fprobe.h>

struct h_call {
	unsigned long ip, ret_ip;
};

static unsigned long h_entries, h_exits, h_bad;

static int h_all_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		       struct ftrace_regs *fregs, void *data)
{
	struct h_call *c = (struct h_call *)data;

	__atomic_add_fetch(&h_entries, 1, __ATOMIC_RELAXED);
	c->ip = ip;
	c->ret_ip = ret_ip;
	return 0;
}

static void h_all_exit(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		       struct ftrace_regs *fregs, void *data)
{
	struct h_call *c = (struct h_call *)data;

	__atomic_add_fetch(&h_exits, 1, __ATOMIC_RELAXED);
	if (c->ip != ip || c->ret_ip != ret_ip ||
	    ftrace_regs_get_instruction_pointer(fregs) != ret_ip)
		__atomic_add_fetch(&h_bad, 1, __ATOMIC_RELAXED);
}

static struct fprobe h_all_fp;

static int h_all_register(void)
{
	h_all_fp.entry_handler = h_all_entry;
	h_all_fp.exit_handler = h_all_exit;
	h_all_fp.entry_data_size = sizeof(struct h_call);
	/* deep recursion and many threads: a large pool */
	h_all_fp.nr_maxactive = 1 << 20;
	/* the handlers themselves (mangled in C++) would only count as misses */
	return register_fprobe(&h_all_fp, "*", "*h_all_*");
}

#endif
