/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared by the "traced output == untraced output" tests: an fprobe with
 * entry and exit handlers on every function of the test program, which
 * checks in each exit that the entry data (entry ip and return address)
 * came back intact.
 *
 * Built with H_LEAN (and `fhook cflags`' assembler front end, which proves
 * the handlers), the same probe has no pool and handlers that build no
 * site and never read their fregs: every call and return the trampolines
 * can take goes through the frameless ones, and registering checks that
 * they are the ones bound.  Built with H_FRAMED (no front end), it has no
 * pool either, and every call and return the trampolines can take goes
 * through the ones that build a frame.
 */
#ifndef FHOOK_TEST_PROGS_H
#define FHOOK_TEST_PROGS_H

#include <fhook/fhook.h>
#include <fhook/fprobe.h>

struct h_call {
	unsigned long ip, ret_ip;
};

static unsigned long h_entries, h_exits, h_bad;

#ifdef H_LEAN
/* no site of its own, nothing a sanitizer adds: proven at build time */
#define H_NOTRACE __attribute__((noinline, patchable_function_entry(0, 0), \
				 no_sanitize("address", "thread", "undefined")))
#ifdef __SANITIZE_THREAD__
#define H_FRAMELESS 0	/* ThreadSanitizer's builds of libfhook take the C path */
#else
#define H_FRAMELESS (FHOOK_FPROBE_FRAMELESS_ENTRY | FHOOK_FPROBE_FRAMELESS_EXIT)
#endif
#else
#define H_NOTRACE
#define H_FRAMELESS 0
#endif

H_NOTRACE static int h_all_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		       struct ftrace_regs *fregs, void *data)
{
	struct h_call *c = (struct h_call *)data;

	__atomic_add_fetch(&h_entries, 1, __ATOMIC_RELAXED);
	c->ip = ip;
	c->ret_ip = ret_ip;
	return 0;
}

H_NOTRACE static void h_all_exit(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		       struct ftrace_regs *fregs, void *data)
{
	struct h_call *c = (struct h_call *)data;

	__atomic_add_fetch(&h_exits, 1, __ATOMIC_RELAXED);
	if (c->ip != ip || c->ret_ip != ret_ip
#ifndef H_LEAN
	    || ftrace_regs_get_instruction_pointer(fregs) != ret_ip
#endif
	    )
		__atomic_add_fetch(&h_bad, 1, __ATOMIC_RELAXED);
}

static struct fprobe h_all_fp;

static int h_all_register(void)
{
	h_all_fp.entry_handler = h_all_entry;
	h_all_fp.exit_handler = h_all_exit;
	h_all_fp.entry_data_size = sizeof(struct h_call);
#if !defined(H_LEAN) && !defined(H_FRAMED)
	/* deep recursion and many threads: a large pool (every call in C) */
	h_all_fp.nr_maxactive = 1 << 20;
#endif
	/* the handlers themselves (mangled in C++) would only count as misses */
	int r = register_fprobe(&h_all_fp, "*", "*h_all_*");
#if defined(H_LEAN) || defined(H_FRAMED)
	/* the paths wanted, or a distinct failure */
	if (!r && fhook_fprobe_frameless(&h_all_fp) != H_FRAMELESS)
		r = -1000 - fhook_fprobe_frameless(&h_all_fp);
#endif
	return r;
}

#endif
