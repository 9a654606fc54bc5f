// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * FHOOK_OPS_FL_GENERAL_REGS_ONLY: a handler that promises to leave xmm0-7
 * alone gets a trampoline that does not save them, and the traced
 * function's floating-point arguments still arrive intact.  An ops without
 * the flag whose handler clobbers every vector register stays safe too.
 *
 * Without the flag, a leaf handler that names no vector register is seen
 * to need no save at registration, once libcapstone is loaded in the
 * process (fhook_ops_saves_vectors() says which trampoline an ops got):
 * one whose clobbering is behind a branch, that reads its fregs, that has
 * a site or that calls anything keeps the save.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <fhook/fhook.h>
#include <fhook/kprobes.h>

#include "../check.h"

static long calls;

/* no site of its own (the test is built with fhook's flags) */
#define NOTRACE __attribute__((patchable_function_entry(0, 0)))

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

/*
 * A leaf of integer work, no promise made: seen not to need the save.
 * (Not instrumented by a sanitizer, whose calls would make it no leaf.)
 */
static NOTRACE __attribute__((no_sanitize("address", "thread", "undefined"))) void
leaf_handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
	     struct ftrace_regs *fregs)
{
	__asm__ volatile("lock incq %0" : "+m"(calls));
}

/* the same with a site of its own: a redirect of it could run anything */
static void leaf_site_handler(unsigned long ip, unsigned long parent_ip,
			      struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
}

/* a leaf that reads its fregs (an integer load of the xmm part): the save stays */
static NOTRACE void fregs_handler(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	unsigned long v;

	memcpy(&v, (char *)fregs + 192, sizeof(v));
	__atomic_add_fetch(&calls, v != 0, __ATOMIC_RELAXED);
}

/* the clobbering behind a branch the call takes: the scan must follow it */
static NOTRACE void branch_clobber_handler(unsigned long ip, unsigned long parent_ip,
				   struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	if (ip == (unsigned long)fsum)
		__asm__ volatile("pcmpeqd %%xmm0, %%xmm0\n\tpcmpeqd %%xmm7, %%xmm7"
				 ::: "xmm0", "xmm7");
}

static NOINLINE void count_call(void)
{
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
}

/* a call: what it reaches is not looked at, so the save stays */
static void calling_handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
			    struct ftrace_regs *fregs)
{
	count_call();
	__asm__ volatile("");
}

/*
 * A tail call back to a function with a site of its own (defined before
 * the handler, so below it): the site could run anything once enabled,
 * so the handler keeps the save, though both bodies name no vector register.
 */
static NOINLINE void count_with_site(void)
{
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
}

static NOTRACE void tail_back_handler(unsigned long ip, unsigned long parent_ip,
				      struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	count_with_site();
}

static void run_saves(struct ftrace_ops *ops, const char *name, int saves)
{
	char n[64];
	int got;

	calls = 0;
	snprintf(n, sizeof(n), "%s_register", name);
	CHECK_EQ(ftrace_set_filter_ip(ops, (unsigned long)fsum, 0, 1) ||
		 register_ftrace_function(ops), 0, n);
	got = fhook_ops_saves_vectors(ops);
	snprintf(n, sizeof(n), "%s_saves_vectors", name);
	CHECK(got == saves, n, "%d, expected %d", got, saves);
	unregister_ftrace_function(ops);
	ftrace_free_filter(ops);
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

	static struct ftrace_ops leaf = { .func = leaf_handler };
	static struct ftrace_ops branch = { .func = branch_clobber_handler };
	static struct ftrace_ops calling = { .func = calling_handler };
	static struct ftrace_ops leaf_site = { .func = leaf_site_handler };
	static struct ftrace_ops fregs_ops = { .func = fregs_handler };
	static struct ftrace_ops tail_back = { .func = tail_back_handler };

	struct kprobe kp = { .symbol_name = "fsum" };

	/* no libcapstone in the process yet: nothing is decoded, the save stays */
	run_saves(&leaf, "leaf_no_capstone", 1);
	/* a kprobe's registration loads it */
	CHECK_EQ(register_kprobe(&kp), 0, "kprobe_loads_capstone");
	unregister_kprobe(&kp);
	run(&gp, "general_regs_only");
	run(&clob, "vector_clobbering");
	run(&leaf, "leaf");
	run(&branch, "branch_clobbering");
	run(&calling, "calling");
	run_saves(&gp, "general_regs_only", 0);
	run_saves(&clob, "vector_clobbering", 1);
	run_saves(&leaf, "leaf", 0);
	run_saves(&branch, "branch_clobbering", 1);
	run_saves(&calling, "calling", 1);
	run_saves(&leaf_site, "leaf_with_site", 1);
	run_saves(&fregs_ops, "fregs_reading", 1);
	CHECK((unsigned long)count_with_site < (unsigned long)tail_back_handler &&
	      ftrace_location((unsigned long)count_with_site), "tail_back_layout",
	      "count_with_site %p (site %lx) not below tail_back_handler %p",
	      (void *)count_with_site, ftrace_location((unsigned long)count_with_site),
	      (void *)tail_back_handler);
	run_saves(&tail_back, "tail_call_back_to_site", 1);
	CHECK_EQ(fhook_ops_saves_vectors(&leaf), -EINVAL, "unregistered_einval");
	return check_exit();
}
