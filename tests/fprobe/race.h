/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * unregister_fprobe() under calling threads, shared by the graph
 * trampolines' tests: four threads call traced() and outer() (which
 * tail-calls traced(), so that some entries take the C path) in a tight
 * loop while a probe on both is registered and unregistered, up to 10,000
 * cycles or 10 seconds.  race_alive is 1 from before each registration to
 * after each unregistration: a handler that finds it 0 ran too late.
 */
#ifndef FHOOK_TEST_FPROBE_RACE_H
#define FHOOK_TEST_FPROBE_RACE_H

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include <fhook/fprobe.h>

#include "../check.h"

#define RACE_THREADS	4
#define RACE_CYCLES	10000
#define RACE_SECONDS	10

static int race_alive;
static volatile int race_stop;
static int race_started;

NOINLINE int traced(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

/* a tail call into traced(): its entry takes fprobe's C path (the slot holds a stub) */
NOINLINE int outer(int x)
{
	__asm__ volatile("" ::: "memory");
	return traced(x + 1);
}

static void *race_caller(void *arg)
{
	long s = 0;

	__atomic_add_fetch(&race_started, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&race_stop, __ATOMIC_RELAXED))
		s += traced((int)(s & 0xffff)) + outer((int)(s & 0xff));
	return (void *)s;
}

static double race_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The race, with @fp set up by @setup before each registration and
 * @registered (may be NULL) called after it: the cycles done, or -1 when a
 * register or unregister failed.
 */
static int race_run(struct fprobe *fp, void (*setup)(struct fprobe *fp),
		    void (*registered)(struct fprobe *fp))
{
	unsigned long addrs[2] = { (unsigned long)traced, (unsigned long)outer };
	pthread_t t[RACE_THREADS];
	double end = race_now() + RACE_SECONDS;
	int i, cycles, bad = 0;

	race_stop = 0;
	for (i = 0; i < RACE_THREADS; i++)
		pthread_create(&t[i], NULL, race_caller, NULL);
	/* a thread glibc is still starting has every signal blocked: patching waits for it */
	while (__atomic_load_n(&race_started, __ATOMIC_ACQUIRE) < RACE_THREADS)
		sched_yield();
	for (cycles = 0; cycles < RACE_CYCLES && race_now() < end; cycles++) {
		memset(fp, 0, sizeof(*fp));
		setup(fp);
		__atomic_store_n(&race_alive, 1, __ATOMIC_RELEASE);
		if (register_fprobe_ips(fp, addrs, 2)) {
			bad = 1;
			break;
		}
		if (registered)
			registered(fp);
		sched_yield();
		if (unregister_fprobe(fp)) {
			bad = 1;
			break;
		}
		/* from here no entry or exit handler may run */
		__atomic_store_n(&race_alive, 0, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&race_stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < RACE_THREADS; i++)
		pthread_join(t[i], NULL);
	return bad ? -1 : cycles;
}

#endif
