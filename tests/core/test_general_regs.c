// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * FHOOK_OPS_FL_GENERAL_REGS_ONLY: a handler that promises to leave xmm0-7
 * alone gets a trampoline that does not save them, and the traced
 * function's floating-point arguments still arrive intact.  An ops without
 * the flag whose handler clobbers every vector register stays safe too.
 */
#define _GNU_SOURCE
#include <stdio.h>

#include <fhook/fhook.h>

#include "../check.h"

static long calls;

NOINLINE double fsum(double a, double b, double c, double d, double e, double f, double g,
		     double h)
{
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}

/* integer work only: what a handler built with -mgeneral-regs-only does */
__attribute__((target("general-regs-only"))) static void
gp_handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
	   struct ftrace_regs *fregs)
{
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
}

static void clobber_handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
			    struct ftrace_regs *fregs)
{
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	__asm__ volatile("pcmpeqd %%xmm0, %%xmm0\n\tpcmpeqd %%xmm1, %%xmm1\n\t"
			 "pcmpeqd %%xmm2, %%xmm2\n\tpcmpeqd %%xmm3, %%xmm3\n\t"
			 "pcmpeqd %%xmm4, %%xmm4\n\tpcmpeqd %%xmm5, %%xmm5\n\t"
			 "pcmpeqd %%xmm6, %%xmm6\n\tpcmpeqd %%xmm7, %%xmm7\n\t"
			 ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7");
}

static void run(struct ftrace_ops *ops, const char *name)
{
	volatile double r;
	char n[64];

	calls = 0;
	snprintf(n, sizeof(n), "%s_register", name);
	CHECK_EQ(ftrace_set_filter_ip(ops, (unsigned long)fsum, 0, 1) ||
		 register_ftrace_function(ops), 0, n);
	r = fsum(1, 2, 3, 4, 5, 6, 7, 8);
	snprintf(n, sizeof(n), "%s_args_intact", name);
	CHECK(r == 204.0, n, "%g, expected 204", r);
	snprintf(n, sizeof(n), "%s_handler_ran", name);
	CHECK_EQ(calls, 1, n);
	unregister_ftrace_function(ops);
}

int main(void)
{
	static struct ftrace_ops gp = { .func = gp_handler,
					.flags = FHOOK_OPS_FL_GENERAL_REGS_ONLY };
	static struct ftrace_ops clob = { .func = clobber_handler };

	run(&gp, "general_regs_only");
	run(&clob, "vector_clobbering");
	return check_exit();
}
