// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The program whose recording bench/reading.sh reads: about 25 million
 * calls of a dozen functions, nested up to ~20 deep with direct and mutual
 * recursion, so that a report, a call tree and a flame graph have real
 * shapes to build.  `reading_prog N`: N rounds of about 340 events each
 * (default 150000: 51 million events).
 */
#include <stdio.h>
#include <stdlib.h>

#define NI __attribute__((noinline))

static volatile long sink;

NI long leaf_a(long x) { return x * 3 + 1; }
NI long leaf_b(long x) { return x ^ (x >> 3); }
NI long mix(long x) { return leaf_a(x) + leaf_b(x); }
NI long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
NI int is_odd(int n);
NI int is_even(int n) { return n == 0 ? 1 : is_odd(n - 1); }
NI int is_odd(int n) { return n == 0 ? 0 : is_even(n - 1); }
NI long parse(long x) { return mix(x) + is_even((int)(x & 15)); }
NI long eval(long x) { return parse(x) + fib(8); }
NI long step(long x) { return eval(x) + mix(x + 1); }
NI long round_(long x) { long s = 0; for (int i = 0; i < 2; i++) s += step(x + i); return s; }

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 150000, i;

	for (i = 0; i < n; i++)
		sink += round_(i);
	printf("%ld\n", sink);
	return 0;
}
