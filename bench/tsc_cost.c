// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What one timestamp costs on this machine: rdtsc (x86-64) or an isb and
 * cntvct_el0 read (aarch64), as the record paths take them, back to back,
 * best of 20 rounds of 1M.  Prints nanoseconds per timestamp.
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static inline uint64_t stamp(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
#elif defined(__aarch64__)
	uint64_t v;

	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v));
	return v;
#else
	return 0;
#endif
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(void)
{
	double best = 1e9;
	uint64_t sum = 0;
	int r, i;

	for (r = 0; r < 20; r++) {
		double t = now_ns(), d;

		for (i = 0; i < 1000000; i++)
			sum += stamp();
		d = (now_ns() - t) / 1e6;
		if (d < best)
			best = d;
	}
	printf("%.2f\n", best + (double)(sum & 1) * 0);
	return 0;
}
