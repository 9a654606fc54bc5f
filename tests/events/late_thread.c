// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A thread that starts late: main() calls slow() (60 ms), sleeps 200 ms
 * (a flight recorder's dump of slow() is written meanwhile), then starts
 * a thread that calls late() five times; prints 20.  Built by the tests
 * that use it, with `fhook cflags`.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) int late(int x) { __asm__ volatile(""); return x + 2; }
__attribute__((noinline)) int slow(int x) { usleep(60000); return x + 1; }

static void *run(void *arg)
{
	long s = 0;
	int i;

	for (i = 0; i < 5; i++)
		s += late(i);
	return (void *)s;
}

int main(void)
{
	pthread_t t;
	void *s;

	slow(1);
	usleep(200000);
	pthread_create(&t, NULL, run, NULL);
	pthread_join(t, &s);
	printf("%ld\n", (long)s);
	return 0;
}
