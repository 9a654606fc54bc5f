// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The program of test_rec_order.sh: THREADS threads (more than this
 * machine's cores: they are preempted and migrate) each make N calls of
 * f(), which calls g(), yielding now and then; another thread sends them
 * signals that land at any moment, whose handler calls h().  Prints
 * the monotonic clock before the threads start and after they end, and
 * how many times h() ran, for the script to check the recording against.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define THREADS	3

static long n;
static volatile long sink, h_calls;
static int done;

__attribute__((noinline)) long g(long x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3;
}

__attribute__((noinline)) long f(long x)
{
	return g(x) + 1;
}

__attribute__((noinline)) long h(long x)
{
	__asm__ volatile("" ::: "memory");
	return x - 1;
}

static void on_sig(int sig)
{
	__atomic_add_fetch(&h_calls, 1, __ATOMIC_RELAXED);
	sink += h(sig);
}

static int finished;

static void *worker(void *arg)
{
	long i, j, s = 0;

	for (i = 0; i < n; i++) {
		s += f(i);
		/* untraced work, where most signals land (and are recorded) */
		for (j = 0; j < 64; j++)
			__asm__ volatile("" : "+r"(s));
		if (!(i % 4096))
			sched_yield();
	}
	sink += s;
	/* signalled until every worker is done: wait for the signaller to stop */
	__atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE))
		usleep(100);
	return NULL;
}

static void *signaller(void *arg)
{
	pthread_t *t = arg;
	int i;

	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
		for (i = 0; i < THREADS; i++)
			pthread_kill(t[i], SIGUSR1);
		usleep(100);
	}
	return NULL;
}

static long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000L + t.tv_nsec;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_sig, .sa_flags = SA_RESTART };
	pthread_t t[THREADS], sig;
	long t0, t1;
	int i;

	n = argc > 1 ? atol(argv[1]) : 100000;
	sigaction(SIGUSR1, &sa, NULL);
	t0 = now_ns();
	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	pthread_create(&sig, NULL, signaller, t);
	while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < THREADS)
		usleep(100);
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	pthread_join(sig, NULL);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	t1 = now_ns();
	printf("t0 %ld\nt1 %ld\nh %ld\n", t0, t1, h_calls);
	return 0;
}
