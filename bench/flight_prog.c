// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A program making about a million calls a second per thread: THREADS
 * threads each call work() N times with about a microsecond of its own
 * computation between calls.   flight_prog THREADS N
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long n;

__attribute__((noinline)) unsigned long work(unsigned long x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

static void *run(void *arg)
{
	volatile unsigned long s = 0;
	long i, k;

	for (i = 0; i < n; i++) {
		for (k = 0; k < 1400; k++)	/* about 1 us of the program's own */
			s += k * i;
		s += work(i);
	}
	return arg;
}

int main(int argc, char **argv)
{
	int t = argc > 1 ? atoi(argv[1]) : 2, i;
	pthread_t th[64];

	n = argc > 2 ? atol(argv[2]) : 2000000;
	if (t < 1 || t > 64)
		t = 2;
	for (i = 0; i < t; i++)
		pthread_create(&th[i], NULL, run, NULL);
	for (i = 0; i < t; i++)
		pthread_join(th[i], NULL);
	return 0;
}
