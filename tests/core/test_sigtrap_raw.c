// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Threads that block SIGTRAP where fhook's interposed sigprocmask cannot
 * see it: by the raw rt_sigprocmask system call, and by
 * swapcontext() to a context whose mask is full.  While one does, a batch
 * is refused with -EBUSY (an int3 would kill it); nobody is killed, and
 * once the thread unblocks, registration works again.  Bounded: about two
 * seconds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <fhook/fhook.h>

#include "../check.h"

NOINLINE long r_work(long x) { __asm__ volatile(""); return x * 3 + 1; }

static atomic_int phase;		/* 0: blocked, 1: unblock, 2: stop */
static atomic_int ready, bad;
static atomic_ulong calls;

static void raw_mask(int how, int sig)
{
	unsigned long set = 1UL << (sig - 1);

	syscall(SYS_rt_sigprocmask, how, &set, NULL, sizeof(set));
}

static void spin(void)
{
	long i;

	for (i = 0; i < 1000; i++)
		if (r_work(i) != i * 3 + 1)
			atomic_fetch_add(&bad, 1);
	atomic_fetch_add(&calls, 1000);
}

static void *raw_thread(void *arg)
{
	raw_mask(SIG_BLOCK, SIGTRAP);
	atomic_fetch_add(&ready, 1);
	while (atomic_load(&phase) == 0)
		spin();
	raw_mask(SIG_UNBLOCK, SIGTRAP);
	atomic_fetch_add(&ready, 1);
	while (atomic_load(&phase) < 2)
		spin();
	return NULL;
}

static ucontext_t uc_main, uc_full;

static void in_full_context(void)
{
	atomic_fetch_add(&ready, 1);
	while (atomic_load(&phase) == 0)
		spin();
}	/* returns to uc_main (uc_link) with its mask */

static void *ctx_thread(void *arg)
{
	static char stack[256 * 1024];

	getcontext(&uc_full);
	uc_full.uc_stack.ss_sp = stack;
	uc_full.uc_stack.ss_size = sizeof(stack);
	uc_full.uc_link = &uc_main;
	sigfillset(&uc_full.uc_sigmask);
	makecontext(&uc_full, in_full_context, 0);
	swapcontext(&uc_main, &uc_full);
	atomic_fetch_add(&ready, 1);
	while (atomic_load(&phase) < 2)
		spin();
	return NULL;
}

/* A thread that blocks nothing, calling the function throughout. */
static void *free_thread(void *arg)
{
	while (atomic_load(&phase) < 2)
		spin();
	return NULL;
}

static void handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		    struct ftrace_regs *fregs)
{
}

static void wait_ready(int n)
{
	while (atomic_load(&ready) < n)
		usleep(1000);
}

/* Register and unregister for @ms; counts of -EBUSY and other results. */
static void cycles(struct ftrace_ops *ops, int ms, int *ok, int *busy, int *other)
{
	struct timespec t0, t;
	int r;

	*ok = *busy = *other = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		r = register_ftrace_function(ops);
		if (!r) {
			if (unregister_ftrace_function(ops))
				(*other)++;
			(*ok)++;
		} else if (r == -EBUSY) {
			(*busy)++;
		} else {
			(*other)++;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

int main(void)
{
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
	printf("SKIP sigtrap_raw: sanitizer runtimes block signals themselves\n");
	return 0;
#endif
	struct ftrace_ops ops = { .func = handler };
	pthread_t th[4];
	int ok, busy, other, i;

	ftrace_set_filter_ip(&ops, (unsigned long)r_work, 0, 1);
	pthread_create(&th[0], NULL, raw_thread, NULL);
	pthread_create(&th[1], NULL, ctx_thread, NULL);
	pthread_create(&th[2], NULL, free_thread, NULL);
	pthread_create(&th[3], NULL, free_thread, NULL);
	wait_ready(2);

	/* both threads have SIGTRAP blocked behind libc's back: refused */
	cycles(&ops, 500, &ok, &busy, &other);
	CHECK(ok == 0 && busy > 0 && other == 0, "raw_and_ucontext_refused_ebusy",
	      "ok %d, -EBUSY %d, other %d", ok, busy, other);

	/* both leave that state: patching works, with every thread running */
	atomic_store(&phase, 1);
	wait_ready(4);
	cycles(&ops, 1000, &ok, &busy, &other);
	CHECK(ok > 0 && busy == 0 && other == 0, "unblocked_registers",
	      "ok %d, -EBUSY %d, other %d", ok, busy, other);

	atomic_store(&phase, 2);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	ftrace_free_filter(&ops);
	printf("# %lu calls\n", atomic_load(&calls));
	CHECK_EQ(atomic_load(&bad), 0, "sigtrap_raw_survived_results_right");
	return check_exit();
}
