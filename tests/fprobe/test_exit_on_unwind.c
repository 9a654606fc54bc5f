// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * FPROBE_FL_EXIT_ON_UNWIND in C: frames left by longjmp (to an unhooked
 * and to a hooked function), siglongjmp out of a hooked signal handler,
 * pthread_exit() and cancellation through hooked frames.  Each check
 * compares the exact sequence of entries (E), returns (X) and unwound
 * exits (U) the handlers saw, and that every entry got exactly one exit.
 * siglongjmp is tested from a handler on the thread's stack and from one
 * on a sigaltstack.
 * Without the flag the same jump reports nothing (the kernel's semantics),
 * and a coroutine parked in hooked frames on another stack is not taken
 * for dead by a longjmp on the thread's stack.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "../check.h"
#include "unwind_log.h"

static jmp_buf jb;
static sigjmp_buf sjb;
static int mode;
static volatile int sink;

enum { JUMP, SIGNAL_JUMP, THREAD_EXIT, CANCEL };

NOINLINE void t_mark(void)
{
	sink++;
}

static int reached;

NOINLINE int t_c(int n)
{
	if (mode == JUMP)
		longjmp(jb, 1);
	if (mode == SIGNAL_JUMP)
		raise(SIGUSR1);
	if (mode == THREAD_EXIT)
		pthread_exit(NULL);
	__atomic_store_n(&reached, 1, __ATOMIC_RELEASE);
	for (;;) {
		pthread_testcancel();
		usleep(1000);
	}
	return n;
}

NOINLINE int t_b(int n)
{
	int r = t_c(n + 1);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

NOINLINE int t_a(int n)
{
	int r = t_b(n + 1);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

NOINLINE void t_sig(int sig)
{
	siglongjmp(sjb, 1);
}

NOINLINE int t_setter(void)
{
	int r = 0;

	if (!setjmp(jb))
		r = t_a(0);
	t_mark();
	__asm__ volatile("" : "+r"(r));
	return r;
}

static ucontext_t main_ctx, co_ctx;

NOINLINE int t_co2(int n)
{
	swapcontext(&co_ctx, &main_ctx);
	return n + 1;
}

NOINLINE int t_co1(int n)
{
	int r = t_co2(n);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

static void co_body(void)
{
	sink += t_co1(0);
}

static const char *const names[] = {
	"t_a", "t_b", "t_c", "t_mark", "t_sig", "t_setter", "t_co1", "t_co2", NULL,
};

static struct fprobe fp;

static void jump_unhooked(void)
{
	mode = JUMP;
	if (!setjmp(jb))
		t_a(0);
	t_mark();
}

static void *thread_body(void *arg)
{
	t_a(0);
	return NULL;
}

static void expect(const char *name, const char *want)
{
	CHECK(!strcmp(ul_log, want), name, "saw \"%s\", expected \"%s\"", ul_log, want);
}

static void expect_balanced(const char *name)
{
	CHECK(ul_balanced(ul_log), name, "unbalanced: \"%s\"", ul_log);
}

/*
 * Each case probes the functions afresh, so that it can run alone, and
 * checks that its own fprobe missed nothing (the "nmissed" check of the
 * whole run, one a case now).
 */
static bool setup(unsigned int flags)
{
	if (ul_register(&fp, names, flags)) {
		printf("FAIL register: %s\n", strerror(errno));
		check_failed++;
		return false;
	}
	ul_reset();
	return true;
}

static void teardown(const char *nmissed_name)
{
	CHECK_EQ(fprobe_nmissed(&fp), 0, nmissed_name);
	unregister_fprobe(&fp);
}

static void case_longjmp_to_unhooked(void)
{
	if (!setup(FPROBE_FL_EXIT_ON_UNWIND))
		return;
	jump_unhooked();
	expect("longjmp_to_unhooked",
	       "E t_a,E t_b,E t_c,U t_c,U t_b,U t_a,E t_mark,X t_mark");
	expect_balanced("longjmp_to_unhooked_balanced");
	teardown("longjmp_to_unhooked_nmissed");
}

static void case_longjmp_to_hooked(void)
{
	if (!setup(FPROBE_FL_EXIT_ON_UNWIND))
		return;
	mode = JUMP;
	t_setter();
	expect("longjmp_to_hooked",
	       "E t_setter,E t_a,E t_b,E t_c,U t_c,U t_b,U t_a,E t_mark,X t_mark,X t_setter");
	expect_balanced("longjmp_to_hooked_balanced");
	teardown("longjmp_to_hooked_nmissed");
}

static void case_siglongjmp_from_handler(void)
{
	struct sigaction sa;

	if (!setup(FPROBE_FL_EXIT_ON_UNWIND))
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = t_sig;
	sigaction(SIGUSR1, &sa, NULL);
	mode = SIGNAL_JUMP;
	if (!sigsetjmp(sjb, 1))
		t_a(0);
	t_mark();
	expect("siglongjmp_from_handler",
	       "E t_a,E t_b,E t_c,E t_sig,U t_sig,U t_c,U t_b,U t_a,E t_mark,X t_mark");
	expect_balanced("siglongjmp_from_handler_balanced");
	teardown("siglongjmp_from_handler_nmissed");
}

/* the same from a handler on the signal stack: its frames are gone too */
static void case_siglongjmp_from_altstack(void)
{
	struct sigaction sa;
	stack_t ss;

	if (!setup(FPROBE_FL_EXIT_ON_UNWIND))
		return;
	ss.ss_sp = malloc(64 * 1024);
	ss.ss_size = 64 * 1024;
	ss.ss_flags = 0;
	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = t_sig;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	mode = SIGNAL_JUMP;
	if (!sigsetjmp(sjb, 1))
		t_a(0);
	t_mark();
	expect("siglongjmp_from_altstack",
	       "E t_a,E t_b,E t_c,E t_sig,U t_sig,U t_c,U t_b,U t_a,E t_mark,X t_mark");
	expect_balanced("siglongjmp_from_altstack_balanced");
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	free(ss.ss_sp);
	teardown("siglongjmp_from_altstack_nmissed");
}

static void case_pthread_exit(void)
{
	pthread_t th;

	if (!setup(FPROBE_FL_EXIT_ON_UNWIND))
		return;
	mode = THREAD_EXIT;
	pthread_create(&th, NULL, thread_body, NULL);
	pthread_join(th, NULL);
	expect("pthread_exit", "E t_a,E t_b,E t_c,U t_c,U t_b,U t_a");
	expect_balanced("pthread_exit_balanced");
	teardown("pthread_exit_nmissed");
}

static void case_cancel(void)
{
	pthread_t th;

	if (!setup(FPROBE_FL_EXIT_ON_UNWIND))
		return;
	mode = CANCEL;
	reached = 0;
	pthread_create(&th, NULL, thread_body, NULL);
	while (!__atomic_load_n(&reached, __ATOMIC_ACQUIRE))
		usleep(1000);
	pthread_cancel(th);
	pthread_join(th, NULL);
	expect("cancel", "E t_a,E t_b,E t_c,U t_c,U t_b,U t_a");
	expect_balanced("cancel_balanced");
	teardown("cancel_nmissed");
}

/* a coroutine parked in hooked frames is alive, whatever longjmp does here */
static void case_coroutine_alive(void)
{
	char *stack;

	if (!setup(FPROBE_FL_EXIT_ON_UNWIND))
		return;
	stack = malloc(256 * 1024);
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = 256 * 1024;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, co_body, 0);
	swapcontext(&main_ctx, &co_ctx);
	jump_unhooked();
	swapcontext(&main_ctx, &co_ctx);
	expect("coroutine_alive",
	       "E t_co1,E t_co2,E t_a,E t_b,E t_c,U t_c,U t_b,U t_a,E t_mark,X t_mark,"
	       "X t_co2,X t_co1");
	free(stack);
	teardown("nmissed");
}

/* without the flag: the kernel's semantics, no exit for those frames */
static void case_no_flag_no_exit(void)
{
	if (!setup(0))
		return;
	jump_unhooked();
	expect("no_flag_no_exit", "E t_a,E t_b,E t_c,E t_mark,X t_mark");
	unregister_fprobe(&fp);
}

static const struct check_case cases[] = {
	CHECK_CASE(longjmp_to_unhooked),
	CHECK_CASE(longjmp_to_hooked),
	CHECK_CASE(siglongjmp_from_handler),
	CHECK_CASE(siglongjmp_from_altstack),
	CHECK_CASE(pthread_exit),
	CHECK_CASE(cancel),
	CHECK_CASE(coroutine_alive),
	CHECK_CASE(no_flag_no_exit),
};

int main(void)
{
	return check_run_cases(cases);
}
