// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * IPMODIFY ops whose handler is the kernel module's redirect by caller (a
 * range test of parent_ip, then regs->ip or the setter) get a copy made
 * for what the handler reads and changes (gen.c): the handler is proven
 * by its object's note (built with the assembler front end: test_ipmod)
 * or decoded at registration (built without: test_ipmod_nonote).  What
 * it must keep: the redirected caller reaches the replacement and the
 * other the function, with every integer and floating-point argument;
 * every word of pt_regs the handler reads as the generic trampolines give
 * it (sp, ip, the arguments, orig_ax, fhook_full); FTRACE_OPS_FL_RECURSION;
 * the same results with a signal handler calling both callers at any
 * moment (from inside the copy: the generic path); unwinding from a
 * signal that lands in the copy; no handler call once unregister
 * returned, with four threads calling.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>
#include <unwind.h>

#include <fhook/fhook.h>

#include "../check.h"
#include "../argregs.h"

/* ThreadSanitizer's builds take the C path, and sanitized handlers need not be proven */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define NO_COPIES	1
#else
#define NO_COPIES	0
#endif

#define NOTRACE __attribute__((noinline, noclone, patchable_function_entry(0, 0), \
			       no_sanitize("address", "thread", "undefined")))

NOINLINE double ipm_traced(long a, long b, long c, long d, long e, long f, double x, double y)
{
	__asm__ volatile("" ::: "memory");
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + x * y;
}

NOTRACE double ipm_new(long a, long b, long c, long d, long e, long f, double x, double y)
{
	__asm__ volatile("" ::: "memory");
	return -(a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + x * y);
}

/* not tail calls: the return address lies in the caller */
NOINLINE double caller_a(long i)
{
	return ipm_traced(i, 2, 3, 4, 5, 6, 1.5, 2.0) * 1.0 + 0.0;
}

NOINLINE double caller_b(long i)
{
	return ipm_traced(i, 2, 3, 4, 5, 6, 1.5, 2.0) * 1.0 + 0.0;
}

#define EXPECT(i)	((double)(i) + 2 * 2 + 3 * 3 + 4 * 4 + 5 * 5 + 6 * 6 + 3.0)

struct ftrace_handler {
	unsigned long new_addr;
	struct ftrace_ops ops;
};

static struct {
	unsigned long start_addr, end_addr;
} g_parent_symbol[1];

static struct ftrace_handler g_handler;

#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

static long calls, after_unregister, live = 1;

/* the caller-redirect module's handler, with a count */
NOTRACE static void module_handler(unsigned long ip, unsigned long parent_ip,
				   struct ftrace_ops *fops, struct ftrace_regs *fregs)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);
	struct ftrace_handler *handler;
	unsigned int i;

	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&live, __ATOMIC_ACQUIRE))
		__atomic_add_fetch(&after_unregister, 1, __ATOMIC_RELAXED);
	handler = container_of(fops, struct ftrace_handler, ops);
	for (i = 0; i < sizeof(g_parent_symbol) / sizeof(g_parent_symbol[0]); ++i) {
		if (g_parent_symbol[i].start_addr <= parent_ip &&
		    parent_ip < g_parent_symbol[i].end_addr)
			regs->ip = handler->new_addr;
	}
}

/* the 6.12 way: no SAVE_REGS, the setter */
NOTRACE static void setter_handler(unsigned long ip, unsigned long parent_ip,
				   struct ftrace_ops *fops, struct ftrace_regs *fregs)
{
	struct ftrace_handler *handler = container_of(fops, struct ftrace_handler, ops);

	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	if (g_parent_symbol[0].start_addr <= parent_ip && parent_ip < g_parent_symbol[0].end_addr)
		ftrace_regs_set_instruction_pointer(fregs, handler->new_addr);
}

/* reads words all over pt_regs, and checks them against what it knows */
static long bad_sp, bad_ip, bad_args, bad_orig, bad_full;

NOTRACE static void reading_handler(unsigned long ip, unsigned long parent_ip,
				    struct ftrace_ops *fops, struct ftrace_regs *fregs)
{
	struct ftrace_handler *handler = container_of(fops, struct ftrace_handler, ops);

	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	if (*(unsigned long *)fregs->regs.sp != parent_ip)
		bad_sp++;
	if (fregs->regs.ip != ip + 5)
		bad_ip++;
	if (fregs->regs.si != 2 || fregs->regs.dx != 3 || fregs->regs.cx != 4 ||
	    fregs->regs.r8 != 5 || fregs->regs.r9 != 6)
		bad_args++;
	if (fregs->regs.orig_ax != (unsigned long)-1)
		bad_orig++;
	if (!fregs->fhook_full)
		bad_full++;
	if (g_parent_symbol[0].start_addr <= parent_ip && parent_ip < g_parent_symbol[0].end_addr)
		fregs->regs.ip = handler->new_addr;
}

static int setup_range(const char *caller)
{
	unsigned long size = 0, off;

	g_parent_symbol[0].start_addr = kallsyms_lookup_name(caller);
	if (!g_parent_symbol[0].start_addr ||
	    !kallsyms_lookup_size_offset(g_parent_symbol[0].start_addr, &size, &off))
		return -1;
	g_parent_symbol[0].end_addr = g_parent_symbol[0].start_addr + size;
	return 0;
}

static int reg(ftrace_func_t func, unsigned long flags)
{
	memset(&g_handler, 0, sizeof(g_handler));
	g_handler.new_addr = (unsigned long)ipm_new;
	g_handler.ops.func = func;
	g_handler.ops.flags = FTRACE_OPS_FL_DYNAMIC | FTRACE_OPS_FL_IPMODIFY | flags;
	if (setup_range("caller_a") ||
	    ftrace_set_filter_ip(&g_handler.ops, kallsyms_lookup_name("ipm_traced"), 0, 0))
		return -1;
	return register_ftrace_function(&g_handler.ops);
}

static void unreg(void)
{
	unregister_ftrace_function(&g_handler.ops);
	ftrace_free_filter(&g_handler.ops);
}

/* Does the site of ipm_traced() reach a copy (not one of libfhook's trampolines)? */
static bool in_copy(void)
{
	unsigned long t = site_tramp((void *)ipm_traced);
	Dl_info self, other;

	return t && dladdr((void *)fhook_ops_saves_vectors, &self) &&
	       !(dladdr((void *)t, &other) && other.dli_fbase == self.dli_fbase);
}

static void redirects(const char *name, ftrace_func_t func, unsigned long flags)
{
	char what[96];
	long i, wrong_a = 0, wrong_b = 0;

	calls = 0;
	snprintf(what, sizeof(what), "%s_registered", name);
	CHECK_EQ(reg(func, flags), 0, what);
	snprintf(what, sizeof(what), "%s_copy", name);
	CHECK(in_copy() || NO_COPIES, what, "the site reaches %#lx, one of libfhook's trampolines",
	      site_tramp((void *)ipm_traced));
	for (i = 0; i < 1000; i++) {
		wrong_a += caller_a(i) != -EXPECT(i);
		wrong_b += caller_b(i) != EXPECT(i);
	}
	snprintf(what, sizeof(what), "%s_redirected_caller", name);
	CHECK_EQ(wrong_a, 0, what);
	snprintf(what, sizeof(what), "%s_other_caller", name);
	CHECK_EQ(wrong_b, 0, what);
	snprintf(what, sizeof(what), "%s_calls", name);
	CHECK_EQ(calls, 2000, what);
	unreg();
	snprintf(what, sizeof(what), "%s_unregistered", name);
	CHECK(caller_a(7) == EXPECT(7) && caller_b(7) == EXPECT(7), what, "still redirected");
}

static void case_module(void)
{
	redirects("module", module_handler, FTRACE_OPS_FL_SAVE_REGS);
}

static void case_setter(void)
{
	redirects("setter", setter_handler, 0);
}

static void case_recursion(void)
{
	redirects("recursion", setter_handler, FTRACE_OPS_FL_RECURSION);
}

static void case_regs(void)
{
	bad_sp = bad_ip = bad_args = bad_orig = bad_full = 0;
	redirects("regs", reading_handler, FTRACE_OPS_FL_SAVE_REGS);
	CHECK_EQ(bad_sp, 0, "regs_sp");
	CHECK_EQ(bad_ip, 0, "regs_ip");
	CHECK_EQ(bad_args, 0, "regs_args");
	CHECK_EQ(bad_orig, 0, "regs_orig_ax");
	CHECK_EQ(bad_full, 0, "regs_full");
}

/* ---- signals: nested calls, and unwinding from inside the copy ---- */

static volatile long sig_wrong, sig_n, sig_in_copy, sig_unwound;
static unsigned long copy_lo, spin_lo, spin_size;

static _Unwind_Reason_Code one_frame(struct _Unwind_Context *ctx, void *arg)
{
	unsigned long *found = arg, pc = _Unwind_GetIP(ctx);

	if (pc - 1 - spin_lo < spin_size)
		*found = 1;
	return _URC_NO_REASON;
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	unsigned long pc = ((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];

	sig_n++;
	sig_wrong += caller_a(sig_n) != -EXPECT(sig_n);
	sig_wrong += caller_b(sig_n) != EXPECT(sig_n);
	if (copy_lo && pc - copy_lo < 4096) {
		unsigned long found = 0;

		sig_in_copy++;
		_Unwind_Backtrace(one_frame, &found);
		sig_unwound += found;
	}
}

NOINLINE long spin(long n)
{
	long i, wrong = 0;

	for (i = 0; i < n; i++) {
		wrong += caller_a(i) != -EXPECT(i);
		wrong += caller_b(i) != EXPECT(i);
	}
	return wrong;
}

static void case_signals(void)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO | SA_RESTART };
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	long wrong = 0, rounds;
	unsigned long off;

	spin_lo = kallsyms_lookup_name("spin");
	CHECK(spin_lo && kallsyms_lookup_size_offset(spin_lo, &spin_size, &off),
	      "signals_spin_found", "no size for spin");
	CHECK_EQ(reg(module_handler, FTRACE_OPS_FL_SAVE_REGS), 0, "signals_registered");
	copy_lo = in_copy() ? site_tramp((void *)ipm_traced) : 0;
	sig_wrong = sig_n = sig_in_copy = sig_unwound = 0;
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	/*
	 * Until enough signals landed inside the copy, within bounds.  The
	 * profiling timer fires at the tick (about 45 signals in 400 rounds
	 * here) and about one signal in 14 lands in the copy, so the bound
	 * is on signals delivered: 600 of them miss the copy every time with
	 * a chance below 1e-18.
	 */
	for (rounds = 0; rounds < (NO_COPIES ? 20 : 40000) && sig_in_copy < 10 && sig_n < 600;
	     rounds++)
		wrong += spin(20000);
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_PROF, &it, NULL);
	signal(SIGPROF, SIG_DFL);
	unreg();
	CHECK_EQ(wrong, 0, "signals_results");
	CHECK(sig_n > 0, "signals_delivered", "no signal");
	CHECK_EQ(sig_wrong, 0, "signals_nested_results");
	CHECK(sig_in_copy > 0 || NO_COPIES, "signals_in_copy",
	      "no signal landed in the copy at %#lx (%ld signals, %ld rounds)", copy_lo, sig_n, rounds);
	CHECK_EQ(sig_unwound, sig_in_copy, "signals_unwind_through_copy");
}

/* ---- unregister under calling threads ---- */

static volatile int stop;

static void *caller_thread(void *arg)
{
	long i = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		double a = caller_a(i), b = caller_b(i);

		if ((a != EXPECT(i) && a != -EXPECT(i)) || b != EXPECT(i))
			__atomic_add_fetch((long *)arg, 1, __ATOMIC_RELAXED);
		i++;
	}
	return NULL;
}

static void case_unregister(void)
{
	pthread_t t[4];
	long wrong = 0, fails = 0;
	int i, r;

	after_unregister = 0;
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, caller_thread, &wrong);
	for (r = 0; r < 40; r++) {
		__atomic_store_n(&live, 1, __ATOMIC_RELEASE);
		fails += reg(module_handler, FTRACE_OPS_FL_SAVE_REGS) != 0;
		usleep(2000);
		unregister_ftrace_function(&g_handler.ops);
		__atomic_store_n(&live, 0, __ATOMIC_RELEASE);
		usleep(1000);
		ftrace_free_filter(&g_handler.ops);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(fails, 0, "unregister_registered");
	CHECK_EQ(wrong, 0, "unregister_results");
	CHECK_EQ(after_unregister, 0, "unregister_no_call_after");
	__atomic_store_n(&live, 1, __ATOMIC_RELEASE);
}

static const struct check_case cases[] = {
	CHECK_CASE(module),
	CHECK_CASE(setter),
	CHECK_CASE(recursion),
	CHECK_CASE(regs),
	CHECK_CASE(signals),
	CHECK_CASE(unregister),
};

int main(void)
{
	return check_run_cases(cases);
}
