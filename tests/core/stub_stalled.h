/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What test_stub_stalled (the trap flag holds the thread) and
 * test_stub_stalled_ptrace (a tracer holds it) share: the functions, and
 * the one handler both registrations use, as every patch of `fhook patch`
 * does, which counts a call for a site its registration does not want.
 */
#ifndef FHOOK_TEST_STUB_STALLED_H
#define FHOOK_TEST_STUB_STALLED_H

#include <fhook/fhook.h>

#include "../check.h"

NOINLINE long f(long x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

NOINLINE long g(long x)
{
	__asm__ volatile("" ::: "memory");
	return x + 2;
}

NOINLINE long f_new(long x)
{
	__asm__ volatile("" ::: "memory");
	return x + 100;
}

NOINLINE long g_new(long x)
{
	__asm__ volatile("" ::: "memory");
	return x + 200;
}

/* a registration's private data */
struct want {
	unsigned long ip;	/* the only site this registration is on */
	unsigned long target;	/* IPMODIFY: where its calls go */
};

static long wrong_site;

static __attribute__((unused)) void handler(unsigned long ip, unsigned long parent_ip,
					     struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	const struct want *w = op->private;

	if (ip != w->ip)
		__atomic_add_fetch(&wrong_site, 1, __ATOMIC_RELAXED);
	if (w->target)
		ftrace_regs_set_instruction_pointer(fregs, w->target);
}

#endif
