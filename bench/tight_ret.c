// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Which hooked return the branch predictors like (bench/tight_ret.S has
 * the four ways):
 *
 *   cc -O2 -o tight_ret bench/tight_ret.c bench/tight_ret.S && ./tight_ret
 *
 * ns per hooked call, the best of 9 rounds each, in a tight loop and in a
 * call tree (each hooked function called twice under three plain levels),
 * where a return stack left one entry off mispredicts every return above.
 */
#include <stdio.h>
#include <time.h>

int f_a(int), f_b(int), f_c(int), f_d(int);

typedef int (*fn_t)(int);

__attribute__((noinline)) long flat(fn_t f, long n)
{
	long i, s = 0;

	for (i = 0; i < n; i++)
		s += f((int)i);
	return s;
}

__attribute__((noinline)) long m3(fn_t f, int i)
{
	return f(i) + f(i + 1);
}

__attribute__((noinline)) long m2(fn_t f, int i)
{
	return m3(f, i) + 1;
}

__attribute__((noinline)) long m1(fn_t f, int i)
{
	return m2(f, i) + 2;
}

__attribute__((noinline)) long tree(fn_t f, long n)
{
	long i, s = 0;

	for (i = 0; i < n / 2; i++)
		s += m1(f, (int)i);
	return s;
}

static double ns(long (*run)(fn_t, long), fn_t f, long n)
{
	struct timespec a, b;
	volatile long s;

	clock_gettime(CLOCK_MONOTONIC, &a);
	s = run(f, n);
	clock_gettime(CLOCK_MONOTONIC, &b);
	(void)s;
	return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n;
}

int main(void)
{
	static const char *const names[4] = {
		"A swap (fhook)", "B call-through, push+ret", "C call-through, jmp",
		"D site jmp, call-through",
	};
	fn_t fs[4] = { f_a, f_b, f_c, f_d };
	double best[2][4];
	long n = 10000000;
	int r, k, w;

	for (w = 0; w < 2; w++)
		for (k = 0; k < 4; k++)
			best[w][k] = 1e9;
	for (r = 0; r < 9; r++)
		for (w = 0; w < 2; w++)
			for (k = 0; k < 4; k++) {
				double v = ns(w ? tree : flat, fs[k], n);

				if (v < best[w][k])
					best[w][k] = v;
			}
	for (k = 0; k < 4; k++)
		printf("%-26s  tight loop %6.2f ns  call tree %6.2f ns\n", names[k], best[0][k],
		       best[1][k]);
	return 0;
}
