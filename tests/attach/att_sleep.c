// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A process whose only thread sleeps in nanosleep() (or reads its stdin,
 * "read") between calls of tick(): attaching takes that thread, which
 * makes the calls into the process and must then go back to its sleep
 * (restarted for the time left) or its read as if nothing had happened.
 * Every sleep is checked: it returned 0 and lasted at least its time.
 *
 *   att_sleep N MS      N sleeps of MS milliseconds, then print
 *                       "longest L ms" and "sleeps N eintr E short S" and
 *                       exit (1 if E or S)
 *   att_sleep read      tick() for every line read; "quit" or EOF ends it:
 *                       print "lines N" and exit
 *
 * It prints "ready PID" first, and "tick K" after each sleep or line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define noinline __attribute__((noinline, noclone))

noinline long tick(long n)
{
	__asm__ volatile("" ::: "memory");
	return n + 1;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	long n, ms, i, eintr = 0, shrt = 0;
	double longest = 0;
	char line[256];

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready %d\n", getpid());
	if (argc > 1 && !strcmp(argv[1], "read")) {
		for (n = 0; fgets(line, sizeof(line), stdin) && strncmp(line, "quit", 4); n++)
			printf("tick %ld\n", tick(n));
		printf("lines %ld\n", n);
		return 0;
	}
	n = argc > 1 ? atol(argv[1]) : 10;
	ms = argc > 2 ? atol(argv[2]) : 300;
	for (i = 0; i < n; i++) {
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
		double t0 = now_ms(), t;

		if (nanosleep(&ts, NULL))
			eintr++;
		t = now_ms() - t0;
		if (t < ms - 1)
			shrt++;
		if (t > longest)
			longest = t;
		printf("tick %ld\n", tick(i));
	}
	/* (a sleep restarted from its start, not for the time left, is long) */
	printf("longest %.0f ms\n", longest);
	printf("sleeps %ld eintr %ld short %ld\n", n, eintr, shrt);
	return eintr || shrt;
}
