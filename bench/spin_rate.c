// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Threads calling a tiny traceable function as fast as they can; every
 * 200 ms the main thread prints the calls made in that interval, so that
 * a script can compare the rate before an attach, during it and after the
 * tracer is gone.   spin_rate [THREADS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static unsigned long counts[64][8];	/* one cache line per thread */
static volatile unsigned long sink;

__attribute__((noinline)) unsigned long work(unsigned long x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

static void *spin(void *arg)
{
	unsigned long *c = arg, i = 0;

	for (;;) {
		sink += work(i++);
		__atomic_store_n(c, i, __ATOMIC_RELAXED);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2, i;
	unsigned long last = 0;
	pthread_t th;

	if (n < 1 || n > 64)
		n = 2;
	for (i = 0; i < n; i++)
		pthread_create(&th, NULL, spin, counts[i]);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		struct timespec ts = { 0, 200 * 1000 * 1000 };
		unsigned long sum = 0;

		nanosleep(&ts, NULL);
		for (i = 0; i < n; i++)
			sum += __atomic_load_n(&counts[i][0], __ATOMIC_RELAXED);
		printf("%lu\n", sum - last);
		fflush(stdout);
		last = sum;
	}
}
