// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A thread preempted between a site's call and the moment its trampoline
 * counts it in is not waited for by unregister_ftrace_function(): when it
 * resumes, it must find no handler, or the one of a registration that
 * wants its function, never one that does not.  The same memory is
 * registered again as another ops (a patch freed and the next one
 * allocated where it was) while the thread is held there, on f()'s stub
 * or at its trampoline's first instruction; it then runs on into f().
 *
 * The thread is held with the trap flag: it single-steps until it is
 * where the case wants it, and waits in its SIGTRAP handler.  Both
 * registrations use one handler (as every patch of `fhook patch` does),
 * so a copy of the trampoline made for the first is the second's too.
 * x86-64 only (the trap flag); bounded: 5 s a case at most.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#include "stub_stalled.h"

#ifdef __x86_64__

/* ---- holding a thread where the case wants it ---- */

enum hold_at { AT_STUB, AT_TRAMPOLINE };

static unsigned long stub;		/* what f()'s site calls */
static unsigned long held_ip;
static enum hold_at hold_at;
static bool was_in_stub;
static int held, release, steps;

static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	greg_t *gr = ((ucontext_t *)ctx)->uc_mcontext.gregs;
	unsigned long ip = (unsigned long)gr[REG_RIP];
	bool in = ip - stub < 16;
	bool here = hold_at == AT_STUB ? in : (was_in_stub && !in);
	struct timespec ms = { 0, 1000000 };
	int i;

	(void)sig;
	(void)si;
	was_in_stub |= in;
	if (!here && ++steps < 100000)
		return;			/* the flag stays: one more instruction */
	if (here) {
		held_ip = ip;
		__atomic_store_n(&held, 1, __ATOMIC_RELEASE);
		for (i = 0; i < 5000 && !__atomic_load_n(&release, __ATOMIC_ACQUIRE); i++)
			nanosleep(&ms, NULL);
	}
	gr[REG_EFL] &= ~0x100L;		/* on at full speed */
}

static long result;

static void *stepped(void *arg)
{
	(void)arg;
	__asm__ volatile("pushfq; orq $0x100, (%%rsp); popfq" ::: "memory", "cc");
	result = f(41);
	return NULL;
}

static bool wait_for(int *flag)
{
	struct timespec ms = { 0, 1000000 };
	int i;

	for (i = 0; i < 5000 && !__atomic_load_n(flag, __ATOMIC_ACQUIRE); i++)
		nanosleep(&ms, NULL);
	return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

static void one_case(const char *name, enum hold_at at, bool ipmodify)
{
	static struct ftrace_ops ops;	/* both registrations' memory */
	static struct want first, second;
	unsigned long f_ip = (unsigned long)f + TEST_SITE_OFF;
	unsigned long g_ip = (unsigned long)g + TEST_SITE_OFF;
	unsigned long flags = ipmodify ? FTRACE_OPS_FL_IPMODIFY : 0;
	char what[128];
	pthread_t t;
	Dl_info dl;
	int ret;

	first = (struct want){ f_ip, ipmodify ? (unsigned long)f_new : 0 };
	second = (struct want){ g_ip, ipmodify ? (unsigned long)g_new : 0 };
	memset(&ops, 0, sizeof(ops));
	ops.func = handler;
	ops.flags = flags;
	ops.private = &first;
	wrong_site = 0;
	held = release = steps = 0;
	was_in_stub = false;
	hold_at = at;
	ret = ftrace_set_filter_ip(&ops, f_ip, 0, 1);
	if (!ret)
		ret = register_ftrace_function(&ops);
	snprintf(what, sizeof(what), "%s_first_registered", name);
	CHECK_EQ(ret, 0, what);
	if (ret)
		return;
	stub = test_site_call_target(f_ip);
	snprintf(what, sizeof(what), "%s_site_calls", name);
	CHECK(stub != 0, what, "f's site holds %02x", *(const unsigned char *)f_ip);

	pthread_create(&t, NULL, stepped, NULL);
	snprintf(what, sizeof(what), "%s_thread_held", name);
	CHECK(wait_for(&held), what, "not held after %d steps", steps);
	if (held && dladdr((void *)held_ip, &dl) && dl.dli_sname)
		printf("# %s: held at %s\n", name, dl.dli_sname);
	else if (held)
		printf("# %s: held in generated code\n", name);

	/* the first registration goes, its memory becomes the second's */
	ret = unregister_ftrace_function(&ops);
	ftrace_free_filter(&ops);
	memset(&ops, 0, sizeof(ops));
	ops.func = handler;
	ops.flags = flags;
	ops.private = &second;
	if (!ret)
		ret = ftrace_set_filter_ip(&ops, g_ip, 0, 1);
	if (!ret)
		ret = register_ftrace_function(&ops);
	snprintf(what, sizeof(what), "%s_second_registered", name);
	CHECK_EQ(ret, 0, what);

	__atomic_store_n(&release, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	snprintf(what, sizeof(what), "%s_no_call_for_another_site", name);
	CHECK_EQ(wrong_site, 0, what);
	snprintf(what, sizeof(what), "%s_result", name);
	CHECK(result == 42 || (ipmodify && result == 141), what, "f(41) = %ld", result);
	/* the second registration serves its own function */
	snprintf(what, sizeof(what), "%s_second_serves", name);
	CHECK_EQ(g(1), ipmodify ? 201 : 3, what);
	unregister_ftrace_function(&ops);
	ftrace_free_filter(&ops);
}

int main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGTRAP, &sa, NULL);
	one_case("stub", AT_STUB, false);
	one_case("trampoline", AT_TRAMPOLINE, false);
	one_case("ipmod_stub", AT_STUB, true);
	one_case("ipmod_trampoline", AT_TRAMPOLINE, true);
	return check_exit();
}

#else

int main(void)
{
	(void)f(0);
	(void)g(0);
	(void)f_new(0);
	(void)g_new(0);
	printf("SKIP stub_stalled: x86-64 only (the trap flag holds the thread)\n");
	return 0;
}

#endif
