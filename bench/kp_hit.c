// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The cost of one hit (bench/kprobes.sh): a loop calls a tiny function N
 * times, probed or not, and prints the nanoseconds per call.
 *
 *   kp_hit MODE N
 *     none       nothing registered (also: a bpftrace uprobe attached from outside)
 *     ops        an empty ftrace_ops on f_site (it has an fhook site)
 *     kp_site    a kprobe with an empty pre_handler on f_site (site method)
 *     kp_jump    the same on f_plain (no site: a jump)
 *     kp_trap    the same, as a trap (run with FHOOK_KPROBE_NOJUMP=1)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fhook/ftrace.h>
#include <fhook/kprobes.h>

__attribute__((noinline)) int f_site(int x)
{
	__asm__ __volatile__("");
	return x + 1;
}

/* the same body, without the site the rest of this file gets */
__attribute__((noinline, patchable_function_entry(0, 0))) int f_plain(int x)
{
	__asm__ __volatile__("");
	return x + 1;
}

static void empty_func(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		       struct ftrace_regs *fregs)
{
}

static int empty_pre(struct kprobe *p, struct pt_regs *regs)
{
	return 0;
}

static struct ftrace_ops ops = { .func = empty_func };
static struct kprobe kp = { .pre_handler = empty_pre };

int main(int argc, char **argv)
{
	int (*volatile fn)(int) = f_plain;
	const char *mode = argc > 1 ? argv[1] : "none";
	long n = argc > 2 ? atol(argv[2]) : 1000000, i, s = 0;
	struct timespec t0, t1;
	int ret = 0;

	if (!strcmp(mode, "ops")) {
		fn = f_site;
		ret = ftrace_set_filter_ip(&ops, (unsigned long)f_site, 0, 0);
		ret = ret ? ret : register_ftrace_function(&ops);
	} else if (!strcmp(mode, "kp_site")) {
		fn = f_site;
		kp.addr = (kprobe_opcode_t *)f_site;
		ret = register_kprobe(&kp);
	} else if (!strcmp(mode, "kp_jump") || !strcmp(mode, "kp_trap")) {
		kp.addr = (kprobe_opcode_t *)f_plain;
		ret = register_kprobe(&kp);
	}
	if (ret) {
		fprintf(stderr, "kp_hit: %s: registration failed (%d)\n", mode, ret);
		return 1;
	}
	if (kp.fhook_site)
		fprintf(stderr, "kp_hit: %s: %s\n", mode,
			kprobe_method_name(kprobe_method(&kp, NULL, 0)));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++)
		s += fn((int)i);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.2f\n", ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
	       (double)n);
	return s == 42;	/* s is used */
}
