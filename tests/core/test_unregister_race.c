// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * unregister_ftrace_function() returns only when no thread can still call
 * the handler: with no lock on the call path, the grace period (util/
 * tasks.h) is all that stands between a returning unregister and a
 * handler still running.  Four threads call a traced function in a tight
 * loop while the main thread registers and unregisters an ops over and
 * over; after each unregister the ops is marked dead, and a handler that
 * runs for a dead ops is counted.  A handler also stays inside for a
 * while now and then, so that unregister must really wait.
 *
 * Bounded: 10,000 cycles or 10 seconds, whichever comes first (sanitizer
 * builds are slower); at least 20 cycles must have run.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#include <fhook/fhook.h>

#include "../check.h"

#define THREADS		4
#define CYCLES		10000
#define SECONDS		10

static volatile int stop;
static long calls_after_unregister, handler_calls;
static int alive;

NOINLINE int traced(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

static void handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		    struct ftrace_regs *fregs)
{
	long n = __atomic_add_fetch(&handler_calls, 1, __ATOMIC_RELAXED);

	if (!__atomic_load_n(&alive, __ATOMIC_ACQUIRE))
		__atomic_add_fetch(&calls_after_unregister, 1, __ATOMIC_RELAXED);
	/* now and then stay a while: unregister must wait for us */
	if (!(n % 4096)) {
		struct timespec ts = { 0, 200000 };

		nanosleep(&ts, NULL);
		if (!__atomic_load_n(&alive, __ATOMIC_ACQUIRE))
			__atomic_add_fetch(&calls_after_unregister, 1, __ATOMIC_RELAXED);
	}
}

static void *caller(void *arg)
{
	long s = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		s += traced((int)(s & 0xffff));
	return (void *)s;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_unregister_under_calls(void)
{
	static struct ftrace_ops ops = { .func = handler };
	pthread_t t[THREADS];
	double end = now() + SECONDS;
	int i, cycles, bad = 0;

	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, caller, NULL);
	if (ftrace_set_filter_ip(&ops, (unsigned long)traced, 0, 1))
		bad++;
	for (cycles = 0; cycles < CYCLES && now() < end; cycles++) {
		__atomic_store_n(&alive, 1, __ATOMIC_RELEASE);
		if (register_ftrace_function(&ops)) {
			bad++;
			break;
		}
		sched_yield();
		if (unregister_ftrace_function(&ops)) {
			bad++;
			break;
		}
		/* from here on no handler may run for this registration */
		__atomic_store_n(&alive, 0, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(bad, 0, "cycles_succeed");
	CHECK(cycles >= 20, "cycles_enough", "%d cycles", cycles);
	CHECK(handler_calls > 0, "handlers_ran", "%ld", handler_calls);
	CHECK_EQ(calls_after_unregister, 0, "no_call_after_unregister");
	printf("# %d cycles, %ld handler calls\n", cycles, handler_calls);
}

int main(void)
{
	test_unregister_under_calls();
	return check_exit();
}
