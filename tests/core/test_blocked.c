// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Threads that block every signal, and signal handlers installed with every
 * signal in sa_mask, run traced code while sites are being patched: the
 * int3 they may meet must still reach fhook (a blocked SIGTRAP would make
 * the kernel kill the process).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/time.h>

#include <fhook/fhook.h>

#include "../check.h"

NOINLINE long b_work(long x) { __asm__ volatile(""); return x * 3 + 1; }

static atomic_int stop;
static atomic_ulong bad, calls_blocked, sigs;

static void *blocked_thread(void *arg)
{
	sigset_t all, now;
	long i = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_sigmask(SIG_BLOCK, NULL, &now);
	if (sigismember(&now, SIGTRAP))
		atomic_fetch_add(&bad, 1000000);
	while (!atomic_load(&stop)) {
		if (b_work(i) != i * 3 + 1)
			atomic_fetch_add(&bad, 1);
		i++;
	}
	atomic_store(&calls_blocked, (unsigned long)i);
	return NULL;
}

static void on_alarm(int sig)
{
	if (b_work(5) != 16)
		atomic_fetch_add(&bad, 1);
	atomic_fetch_add(&sigs, 1);
}

static void handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		    struct ftrace_regs *fregs)
{
}

int main(void)
{
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
	printf("SKIP blocked_sigtrap: sanitizer runtimes block signals themselves\n");
	return 0;
#endif
	struct ftrace_ops ops = { .func = handler };
	struct itimerval it = { { 0, 300 }, { 0, 300 } };
	struct sigaction sa;
	struct fhook_stats st0, st1;
	pthread_t th[2];
	int i, errs = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigfillset(&sa.sa_mask);		/* every signal blocked in the handler */
	sigaction(SIGALRM, &sa, NULL);
	ftrace_set_filter_ip(&ops, (unsigned long)b_work, 0, 1);
	fhook_get_stats(&st0);
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, blocked_thread, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; i < 1500; i++) {
		if (register_ftrace_function(&ops) || unregister_ftrace_function(&ops))
			errs++;
	}
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	atomic_store(&stop, 1);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	fhook_get_stats(&st1);
	ftrace_free_filter(&ops);
	printf("# %lu calls in blocked threads, %lu signals, %lu traps emulated\n",
	       atomic_load(&calls_blocked), atomic_load(&sigs),
	       st1.traps_emulated - st0.traps_emulated);
	CHECK_EQ(errs, 0, "register_cycles");
	CHECK_EQ(atomic_load(&bad), 0, "survived_with_results_right");
	CHECK(atomic_load(&sigs) > 0, "signals_arrived", "");
	return check_exit();
}
