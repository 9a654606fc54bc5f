// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Frameless per-ops trampolines: an ops whose handler is proven at build
 * time (this program is built with `fhook cflags`' assembler front end)
 * to touch no vector register and never read its fregs gets, at sites
 * whose functions read no argument register but %rdi and %rsi (or those
 * and %rdx), a copy that pushes only those and builds no ftrace_regs.
 * What it must keep: every argument each function reads, %rdx returned
 * as a pair's second half, %rsi and %rdi across an ms_abi function, with
 * a handler that clobbers every register it may; ip and parent_ip right;
 * a handler that reads its fregs gets the real arguments (a frame); no
 * handler call once unregister_ftrace_function() has returned, under four
 * calling threads.  Which copy a site reaches: site_tramp() (argregs.h).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <fhook/fhook.h>

#include "../check.h"
#include "../argregs.h"

#define NOTRACE __attribute__((noinline, patchable_function_entry(0, 0), \
			       no_sanitize("address", "thread", "undefined")))

static long calls, after_unregister, live = 1;
static unsigned long last_ip, last_parent;

/* every register a handler may use (%rcx once written: not as its fregs) */
#define CLOBBER()								\
	__asm__ volatile("movq $-1, %%rax\n\tmovq $-1, %%rdx\n\tmovq $-1, %%rsi\n\t"	\
			 "movq $-1, %%rdi\n\tmovq $-1, %%r8\n\tmovq $-1, %%r9\n\t"	\
			 "movq $-1, %%r10\n\tmovq $-1, %%r11\n\tmovq $-1, %%rcx"		\
			 ::: "rax", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "rcx")

NOTRACE static void lean_handler(unsigned long ip, unsigned long parent_ip,
				 struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&live, __ATOMIC_ACQUIRE))
		__atomic_add_fetch(&after_unregister, 1, __ATOMIC_RELAXED);
	last_ip = ip;
	last_parent = parent_ip;
	CLOBBER();
}

static unsigned long fregs_di;

/* reads its fregs: a frame, and the real first argument */
NOTRACE static void fregs_handler(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *op, struct ftrace_regs *fregs)
{
#ifdef __SANITIZE_ADDRESS__
	fregs_di = fregs->regs.di;
#else
	fregs_di = ftrace_regs_get_argument(fregs, 0);
#endif
}

static const char *const names[] = { "a0_traced", "a1_traced", "a2_traced", "a3_traced",
				      "a2_dx_traced", "pass_traced", "a4_traced", "ms_traced" };

static int filter(struct ftrace_ops *ops)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; i < sizeof(names) / sizeof(names[0]) && !ret; i++)
		ret = ftrace_set_filter(ops, (unsigned char *)names[i], strlen(names[i]), 0);
	return ret;
}

static NOINLINE long call_all(struct lv_pair *p, int *ms)
{
	long s = a0_traced() + a1_traced(4) + a2_traced(9, 4) + a3_traced(3, 5, 7) +
		 a2_dx_traced(20, 3) + a4_traced(1, 2, 3, 4);

	*p = pass_traced(8, 9, 10);
	*ms = (int)ms_call();
	return s;
}

static void case_values(void)
{
	struct ftrace_ops ops = { .func = lean_handler };
	struct lv_pair p = { 0, 0 };
	int i, ms = 0;
	long s;

	calls = 0;
	CHECK_EQ(filter(&ops), 0, "values_filter");
	CHECK_EQ(register_ftrace_function(&ops), 0, "values_register");
	/* more than once: a thread's first call may take another way */
	for (i = 0; i < 3; i++) {
		char n[64];

		p.a = p.b = 0;
		s = call_all(&p, &ms);
		snprintf(n, sizeof(n), "values_results_%d", i);
		CHECK_EQ(s, 11 + 13 + 5 + 22 + 43 + 3, n);
		snprintf(n, sizeof(n), "values_rdx_returned_%d", i);
		CHECK(p.a == 8 && p.b == 10, n, "{%ld, %ld}, expected {8, 10}", p.a, p.b);
		snprintf(n, sizeof(n), "values_ms_abi_rsi_rdi_kept_%d", i);
		CHECK_EQ(ms, 1, n);
	}
	CHECK_EQ(calls, 24, "values_handler_ran");
	a1_traced(1);
	CHECK(last_ip == site_of(a1_traced), "values_ip", "%#lx, expected %#lx", last_ip,
	      site_of(a1_traced));
	CHECK(last_parent > (unsigned long)case_values &&
	      last_parent < (unsigned long)case_values + 4096, "values_parent_ip",
	      "%#lx, not in case_values at %p", last_parent, (void *)case_values);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
	{
		unsigned long t0 = site_tramp(a0_traced), t1 = site_tramp(a1_traced),
			      t2 = site_tramp(a2_traced), t3 = site_tramp(a3_traced),
			      tdx = site_tramp(a2_dx_traced), tp = site_tramp(pass_traced),
			      t4 = site_tramp(a4_traced), tms = site_tramp(ms_traced);

		CHECK(t1 && t0 == t1 && t1 == t2 && t2 == t3 && t3 == tp && tdx == tms, "values_classes",
		      "%#lx %#lx %#lx %#lx %#lx, %#lx %#lx", t0, t1, t2, t3, tp, tdx, tms);
		CHECK(tdx && t4 && tdx != t1 && t4 != t1 && t4 != tdx, "values_copies_differ",
		      "%#lx %#lx %#lx", t1, tdx, t4);
	}
#endif
	CHECK_EQ(unregister_ftrace_function(&ops), 0, "values_unregister");
	calls = 0;
	a1_traced(2);
	CHECK_EQ(calls, 0, "values_unregistered_calls_nothing");
	ftrace_free_filter(&ops);
}

static void case_fregs_reader(void)
{
	struct ftrace_ops ops = { .func = fregs_handler };
	long r;

	fregs_di = 0;
	CHECK_EQ(filter(&ops), 0, "fregs_filter");
	CHECK_EQ(register_ftrace_function(&ops), 0, "fregs_register");
	r = a1_traced(77);
	CHECK_EQ(r, 232, "fregs_result");
	CHECK_EQ(fregs_di, 77, "fregs_first_argument");
	unregister_ftrace_function(&ops);
	ftrace_free_filter(&ops);
}

static void *caller(void *arg)
{
	long *bad = arg;

	while (__atomic_load_n(&live, __ATOMIC_ACQUIRE) >= 0) {
		if (a1_traced(5) != 16 || a2_dx_traced(1, 1) != 3)
			__atomic_add_fetch(bad, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void case_unregister_race(void)
{
	struct ftrace_ops ops = { .func = lean_handler };
	pthread_t t[4];
	long bad = 0;
	int i, fails = 0;

	calls = after_unregister = 0;
	__atomic_store_n(&live, 0, __ATOMIC_RELEASE);
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, caller, &bad);
	CHECK_EQ(filter(&ops), 0, "race_filter");
	for (i = 0; i < 300; i++) {
		__atomic_store_n(&live, 1, __ATOMIC_RELEASE);
		fails += register_ftrace_function(&ops) != 0;
		fails += unregister_ftrace_function(&ops) != 0;
		__atomic_store_n(&live, 0, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&live, -1, __ATOMIC_RELEASE);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	__atomic_store_n(&live, 1, __ATOMIC_RELEASE);
	ftrace_free_filter(&ops);
	CHECK_EQ(fails, 0, "race_cycles_succeed");
	CHECK_EQ(bad, 0, "race_results");
	CHECK(calls > 0, "race_handler_ran", "%ld calls", calls);
	CHECK_EQ(after_unregister, 0, "race_no_call_after_unregister");
}

/* calls through the recursion assist (C, unproven): the copy that builds a frame */
static void case_recursion_assist(void)
{
	struct ftrace_ops ops = { .func = lean_handler, .flags = FTRACE_OPS_FL_RECURSION };
	struct lv_pair p;
	int i, ms;

	calls = 0;
	CHECK_EQ(filter(&ops), 0, "assist_filter");
	CHECK_EQ(register_ftrace_function(&ops), 0, "assist_register");
	for (i = 0; i < 3; i++)
		CHECK_EQ(call_all(&p, &ms), 11 + 13 + 5 + 22 + 43 + 3, "assist_results");
	CHECK(p.a == 8 && p.b == 10 && ms == 1, "assist_rdx_rsi_rdi", "{%ld, %ld}, %d", p.a, p.b,
	      ms);
	CHECK_EQ(calls, 24, "assist_handler_ran");
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
	CHECK(site_tramp(a1_traced) == site_tramp(a4_traced), "assist_one_copy", "%#lx %#lx",
	      site_tramp(a1_traced), site_tramp(a4_traced));
#endif
	unregister_ftrace_function(&ops);
	ftrace_free_filter(&ops);
}

/* an ops on every function: no decoding (its start-up stays light), one copy */
static void case_every_function(void)
{
	struct ftrace_ops ops = { .func = lean_handler };
	struct lv_pair p;
	int ms;

	calls = 0;
	CHECK_EQ(register_ftrace_function(&ops), 0, "every_register");
	CHECK_EQ(call_all(&p, &ms), 11 + 13 + 5 + 22 + 43 + 3, "every_results");
	CHECK(p.a == 8 && p.b == 10 && ms == 1, "every_rdx_rsi_rdi", "{%ld, %ld}, %d", p.a, p.b,
	      ms);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
	CHECK(site_tramp(a1_traced) == site_tramp(a4_traced), "every_one_copy", "%#lx %#lx",
	      site_tramp(a1_traced), site_tramp(a4_traced));
#endif
	unregister_ftrace_function(&ops);
	CHECK(calls > 8, "every_handler_ran", "%ld calls", calls);
}

static const struct check_case cases[] = {
	CHECK_CASE(values),
	CHECK_CASE(fregs_reader),
	CHECK_CASE(recursion_assist),
	CHECK_CASE(every_function),
	CHECK_CASE(unregister_race),
};

static bool capstone_mapped(void)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		found |= strstr(line, "libcapstone") != NULL;
	if (f)
		fclose(f);
	return found;
}

/*
 * "test_ops_lean all", under FHOOK_SAVE_ALL_ARGS=1 (test_ops_lean.sh):
 * every site saves every argument register, and no decoder is loaded
 */
static int all_args(void)
{
	struct ftrace_ops ops = { .func = lean_handler };
	struct lv_pair p;
	int ms;

	CHECK_EQ(filter(&ops), 0, "all_filter");
	CHECK_EQ(register_ftrace_function(&ops), 0, "all_register");
	CHECK_EQ(call_all(&p, &ms), 11 + 13 + 5 + 22 + 43 + 3, "all_results");
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
	CHECK(site_tramp(a1_traced) && site_tramp(a1_traced) == site_tramp(a4_traced) &&
	      site_tramp(a2_dx_traced) == site_tramp(a4_traced), "all_one_copy",
	      "%#lx %#lx %#lx", site_tramp(a1_traced), site_tramp(a2_dx_traced),
	      site_tramp(a4_traced));
#endif
	CHECK(!capstone_mapped(), "all_no_decoder_loaded", "libcapstone was loaded");
	unregister_ftrace_function(&ops);
	ftrace_free_filter(&ops);
	return check_exit();
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "all"))
		return all_args();
	return check_run_cases(cases);
}
