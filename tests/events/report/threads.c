// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_report.sh: calls per thread.
 *
 * main -> run_threads, which starts two threads and calls step() twice:
 *   work_a: step() 3 times, then rec(3) -> rec(2) -> rec(1) -> rec(0)
 *   work_b: step() 5 times, then rec(2) -> rec(1) -> rec(0)
 * Both rec(0) wait for each other (a barrier): the two threads are inside
 * the recursion of rec at the same time.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define F __attribute__((noinline, noipa))

static volatile int sink;
static pthread_barrier_t bar;

F int rec(int n)
{
	if (n == 0) {
		pthread_barrier_wait(&bar);
		return 0;
	}
	return rec(n - 1) + 1;
}

F void step(void)
{
	sink++;
}

F void *work_a(void *arg)
{
	int i;

	for (i = 0; i < 3; i++)
		step();
	rec(3);
	return arg;
}

F void *work_b(void *arg)
{
	int i;

	for (i = 0; i < 5; i++)
		step();
	rec(2);
	return arg;
}

F void run_threads(void)
{
	pthread_t a, b;

	if (pthread_barrier_init(&bar, NULL, 2) || pthread_create(&a, NULL, work_a, NULL) ||
	    pthread_create(&b, NULL, work_b, NULL))
		abort();
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	step();
	step();
}

int main(void)
{
	run_threads();
	printf("%d\n", sink);
	return 0;
}
