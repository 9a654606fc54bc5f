// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench: N threads, each calling a tiny function M times (make bench's
 * recording workload: `fhook record` of every call, nothing may be lost).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long per_thread;
static volatile long sink;

__attribute__((noinline)) long tiny(long x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

static void *run(void *arg)
{
	long i, s = 0;

	for (i = 0; i < per_thread; i++)
		s += tiny(i);
	sink += s;
	return NULL;
}

int main(int argc, char **argv)
{
	int i, n = argc > 2 ? atoi(argv[1]) : 4;
	pthread_t th[1024];

	per_thread = argc > 2 ? atol(argv[2]) : 1000;
	if (n < 1 || n > 1024)
		return 2;
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, run, NULL))
			return 1;
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
