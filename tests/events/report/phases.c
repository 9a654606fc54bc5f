// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_report.sh: calls far apart in time, for -t and --time-range.
 *
 * main -> phase_a: quick() 5 times, then nap(100 ms)
 *      -> phase_b: quick() 3 times, then nap(150 ms)
 * phase_b starts at least 100 ms after main.
 */
#include <stdio.h>
#include <time.h>

#define F __attribute__((noinline, noipa))

static volatile int sink;

F void quick(void)
{
	sink++;
}

F void nap(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

F void phase_a(void)
{
	int i;

	for (i = 0; i < 5; i++)
		quick();
	nap(100);
}

F void phase_b(void)
{
	int i;

	for (i = 0; i < 3; i++)
		quick();
	nap(150);
}

int main(void)
{
	phase_a();
	phase_b();
	printf("%d\n", sink);
	return 0;
}
