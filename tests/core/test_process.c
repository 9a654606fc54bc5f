// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The process around the hooks: signals arriving inside hooked functions
 * and inside handlers, fork() of a traced program, and a batch of many
 * sites costing a constant number of serializations.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fhook/fhook.h>

#include "../check.h"

NOINLINE long p_work(long x)
{
	volatile long s = 0;
	long i;

	for (i = 0; i < 50; i++)
		s += x ^ i;
	return s;
}

NOINLINE long p_in_signal(long x) { __asm__ volatile(""); return x * 7; }

static atomic_ulong h_work, h_sig, sig_calls, sig_bad;
/* the handler's ip is p_work's site (ftrace_location()) */
static unsigned long work_ip;
static volatile sig_atomic_t in_handler;

static void handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		    struct ftrace_regs *fregs)
{
	volatile int spin;

	if (ip == work_ip) {
		atomic_fetch_add(&h_work, 1);
		/* linger, so that signals land inside the handler too */
		in_handler = 1;
		for (spin = 0; spin < 200; spin++)
			;
		in_handler = 0;
	} else {
		atomic_fetch_add(&h_sig, 1);
	}
}

static struct ftrace_ops ops = { .func = handler };

static void on_alarm(int sig)
{
	int saved = errno;

	if (p_in_signal(6) != 42)
		atomic_fetch_add(&sig_bad, 1);
	atomic_fetch_add(&sig_calls, 1);
	errno = saved;
}

/* 200 functions, for the batching check */
#define F(n) NOINLINE int batch_##n(int x) { __asm__ volatile(""); return x + n; }
#define F10(n) F(n##0) F(n##1) F(n##2) F(n##3) F(n##4) F(n##5) F(n##6) F(n##7) F(n##8) F(n##9)
F10(1) F10(2) F10(3) F10(4) F10(5) F10(6) F10(7) F10(8) F10(9) F10(10)
F10(11) F10(12) F10(13) F10(14) F10(15) F10(16) F10(17) F10(18) F10(19) F10(20)

static void noop(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		 struct ftrace_regs *fregs)
{
}

int main(void)
{
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	struct fhook_stats s0, s1;
	unsigned long ips[2];
	long i, calls = 0;
	int status, r;
	pid_t pid;

	work_ip = ftrace_location((unsigned long)p_work);
	ips[0] = (unsigned long)p_work;
	ips[1] = (unsigned long)p_in_signal;
	ftrace_set_filter_ips(&ops, ips, 2, 0, 1);
	CHECK_EQ(register_ftrace_function(&ops), 0, "register");

	/* signals land in hooked functions, in trampolines and in the handler */
	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; i < 200000 && atomic_load(&sig_calls) < 2000; i++) {
		p_work(i);
		calls++;
	}
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_DFL);
	printf("# %ld calls, %lu signals\n", calls, atomic_load(&sig_calls));
	CHECK(atomic_load(&sig_calls) > 10, "signals_arrived", "%lu", atomic_load(&sig_calls));
	CHECK_EQ(atomic_load(&h_work), calls, "calls_counted_under_signals");
	CHECK_EQ(atomic_load(&h_sig), atomic_load(&sig_calls), "signal_handler_calls_counted");
	CHECK_EQ(atomic_load(&sig_bad), 0, "signal_results");

	/* fork: the child keeps the hooks and can drop them on its own */
	h_work = 0;
	pid = fork();
	if (!pid) {
		int bad = 0;

		p_work(1);
		if (atomic_load(&h_work) != 1)
			bad |= 1;
		if (unregister_ftrace_function(&ops))
			bad |= 2;
		p_work(1);
		if (atomic_load(&h_work) != 1)
			bad |= 4;
		_exit(bad);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fork_child", "status %#x", status);
	p_work(1);
	CHECK_EQ(atomic_load(&h_work), 1, "fork_parent_keeps_hooks");
	CHECK_EQ(unregister_ftrace_function(&ops), 0, "unregister");

	/* many sites, one batch: a few serializations, not a few per site */
	{
		static struct ftrace_ops many = { .func = noop };

		r = ftrace_set_filter(&many, (unsigned char *)"batch_*", 7, 1);
		CHECK_EQ(r, 0, "batch_filter");
		fhook_get_stats(&s0);
		r = register_ftrace_function(&many);
		fhook_get_stats(&s1);
		CHECK_EQ(r, 0, "batch_register");
		CHECK_EQ(s1.nr_enabled - s0.nr_enabled, 200, "batch_sites");
		CHECK_EQ(s1.syncs - s0.syncs, TEST_BATCH_SYNCS, "batch_syncs");
		CHECK_EQ(s1.batches - s0.batches, 1, "batch_one_batch");
		CHECK_EQ(batch_200(1), 201, "batch_result");
		unregister_ftrace_function(&many);
	}
	return check_exit();
}
