// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Entry and exit probes on every function of a program that longjmps out
 * of hooked frames, siglongjmps out of signal handlers, takes signals on
 * its own and on an alternate stack, runs threads, exits and cancels
 * threads from hooked frames, forks, calls backtrace() and recurses deeper
 * than the shadow stack: its output traced is the output untraced.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"

#pragma GCC diagnostic ignored "-Winfinite-recursion"
#include "progs.h"

static char outbuf[1 << 16];
static size_t outlen;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

NOINLINE void out(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&out_lock);
	va_start(ap, fmt);
	outlen += vsnprintf(outbuf + outlen, sizeof(outbuf) - outlen, fmt, ap);
	va_end(ap);
	if (outlen >= sizeof(outbuf))
		outlen = sizeof(outbuf) - 1;
	pthread_mutex_unlock(&out_lock);
}

/* ---- longjmp out of hooked frames ---- */
static jmp_buf jb;

NOINLINE int lj_leaf(int n)
{
	__asm__ volatile("");
	if (n % 3 == 0)
		longjmp(jb, n + 1);
	return n * 2;
}

NOINLINE int lj_mid(int n)
{
	int r = lj_leaf(n);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

NOINLINE int lj_outer(int n)
{
	volatile int r;
	int v = setjmp(jb);

	if (v)
		return 1000 + v;
	r = lj_mid(n);
	return r;
}

NOINLINE void test_longjmp(void)
{
	long sum = 0;
	int i;

	for (i = 0; i < 20000; i++)
		sum += lj_outer(i);
	out("longjmp %ld\n", sum);
}

/* ---- signals: handlers calling hooked functions, siglongjmp out of them ---- */
static sigjmp_buf sjb;
static volatile sig_atomic_t sig_count;

NOINLINE int sig_work(int n)
{
	__asm__ volatile("");
	return n + 1;
}

static void on_usr1(int sig)
{
	sig_count += sig_work(0);
}

static void on_usr2(int sig)
{
	sig_work(1);
	siglongjmp(sjb, 1);
}

NOINLINE int sig_inner(int n)
{
	int r;

	if (n == 5)
		raise(SIGUSR2);
	raise(SIGUSR1);
	r = sig_work(n);
	__asm__ volatile("" : "+r"(r));
	return r;
}

NOINLINE int sig_outer(int n)
{
	int r = sig_inner(n);

	__asm__ volatile("" : "+r"(r));
	return r;
}

static volatile unsigned long timer_ticks;
static void on_alrm(int sig)
{
	timer_ticks += sig_work(2) > 0;
}

NOINLINE long spin(int n)
{
	long s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += sig_work(i);
	return s;
}

NOINLINE void test_signals(void)
{
	struct sigaction sa = { 0 };
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	stack_t ss = { 0 };
	long sum = 0;
	int i;

	sig_count = 0;
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	for (i = 0; i < 10; i++) {
		if (sigsetjmp(sjb, 1)) {
			sum += 100;
			continue;
		}
		sum += sig_outer(i);
	}
	out("signals %ld %d\n", sum, (int)sig_count);

	/* the same on an alternate signal stack */
	ss.ss_sp = malloc(1 << 16);
	ss.ss_size = 1 << 16;
	sigaltstack(&ss, NULL);
	sa.sa_flags = SA_ONSTACK;
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	sum = 0;
	sig_count = 0;
	for (i = 0; i < 10; i++) {
		if (sigsetjmp(sjb, 1)) {
			sum += 100;
			continue;
		}
		sum += sig_outer(i);
	}
	out("altstack %ld %d\n", sum, (int)sig_count);
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	free(ss.ss_sp);

	/* asynchronous signals landing anywhere, trampolines included */
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = on_alrm;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	sum = 0;
	for (i = 0; i < 200; i++)
		sum += spin(2000);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_IGN);
	out("timer %ld\n", sum);
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
}

/* ---- deep recursion, deeper than the shadow stack ---- */
NOINLINE long deep(int n)
{
	long r;

	if (!n)
		return 0;
	r = deep(n - 1);
	__asm__ volatile("" : "+r"(r) :: "memory");
	return r + n;
}

/* ---- threads ---- */
NOINLINE long fib(int n)
{
	long a, b;

	if (n < 2)
		return n;
	a = fib(n - 1);
	b = fib(n - 2);
	__asm__ volatile("" : "+r"(a), "+r"(b));
	return a + b;
}

static void cleanup_note(void *arg)
{
	*(int *)arg = 1;
}

NOINLINE void exit_deep(int n, int *flag)
{
	if (!n)
		pthread_exit((void *)(long)(42 + fib(5)));
	exit_deep(n - 1, flag);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void *th_exit(void *arg)
{
	pthread_cleanup_push(cleanup_note, arg);
	exit_deep(10, arg);
	pthread_cleanup_pop(0);
	return NULL;
}

static volatile int cancel_ready;
NOINLINE void cancel_loop(int n)
{
	if (n) {
		cancel_loop(n - 1);
		__asm__ volatile("" ::: "memory");
		return;
	}
	for (;;) {
		__atomic_store_n(&cancel_ready, 1, __ATOMIC_RELAXED);
		fib(3);
		pthread_testcancel();
	}
}

NOINLINE void *th_cancel(void *arg)
{
	pthread_cleanup_push(cleanup_note, arg);
	cancel_loop(8);
	pthread_cleanup_pop(0);
	return NULL;
}

NOINLINE void *th_fib(void *arg)
{
	long n = (long)arg;

	return (void *)(fib((int)n) + deep(1000));
}

NOINLINE void test_threads(void)
{
	pthread_t t[8];
	int flag1 = 0, flag2 = 0;
	void *rv;
	long i;

	for (i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, th_fib, (void *)(16 + i));
	for (i = 0; i < 8; i++) {
		pthread_join(t[i], &rv);
		out("thread %ld %ld\n", i, (long)rv);
	}
	pthread_create(&t[0], NULL, th_exit, &flag1);
	pthread_join(t[0], &rv);
	out("pthread_exit %ld cleanup %d\n", (long)rv, flag1);
	__atomic_store_n(&cancel_ready, 0, __ATOMIC_RELAXED);
	pthread_create(&t[0], NULL, th_cancel, &flag2);
	while (!__atomic_load_n(&cancel_ready, __ATOMIC_RELAXED))
		sched_yield();
	pthread_cancel(t[0]);
	pthread_join(t[0], &rv);
	out("cancel %d cleanup %d\n", rv == PTHREAD_CANCELED, flag2);
}

/* ---- backtrace() from hooked frames ---- */
NOINLINE int bt_leaf(void)
{
	void *buf[64];
	char **names;
	int n = backtrace(buf, 64), i, known = 0;

	names = backtrace_symbols(buf, n);
	for (i = 0; i < n && names; i++)
		known += strstr(names[i], "bt_") != NULL || strstr(names[i], "test_") != NULL;
	free(names);
	out("backtrace %d\n", known);
	return n;
}

NOINLINE int bt_mid(void) { int r = bt_leaf(); __asm__ volatile("" : "+r"(r)); return r; }

/* ---- fork ---- */
NOINLINE void test_fork(void)
{
	int status = 0;
	pid_t pid = fork();

	if (!pid)
		_exit((int)(fib(10) + deep(100)) & 0x7f);
	waitpid(pid, &status, 0);
	out("fork %d\n", WEXITSTATUS(status));
}

NOINLINE void workload(void)
{
	outlen = 0;
	outbuf[0] = 0;
	test_longjmp();
	test_signals();
	out("deep %ld\n", deep(50000));
	out("fib %ld\n", fib(20));
	test_threads();
	out("bt %d\n", bt_mid() > 3);
	test_fork();
}

int main(void)
{
	static char plain[sizeof(outbuf)];
	int r;

	workload();
	memcpy(plain, outbuf, sizeof(plain));

	r = h_all_register();
	CHECK_EQ(r, 0, "register_all");
	workload();
	CHECK(!strcmp(plain, outbuf), "traced_output_identical", "\n--- untraced\n%s--- traced\n%s",
	      plain, outbuf);
	CHECK(h_entries > 100000 && h_exits > 100000, "handlers_ran", "entries %lu exits %lu",
	      h_entries, h_exits);
	CHECK_EQ(h_bad, 0, "entry_data_intact");
	printf("# entries %lu exits %lu nmissed %lu\n", h_entries, h_exits,
	       fprobe_nmissed(&h_all_fp));
	r = unregister_fprobe(&h_all_fp);
	CHECK_EQ(r, 0, "unregister_all");
	workload();
	CHECK(!strcmp(plain, outbuf), "untraced_again_identical", "\n%s", outbuf);
	fputs(plain, stdout);
	return check_exit();
}
