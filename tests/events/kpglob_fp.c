// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Floating point kept in registers across calls: built with gcc -O2 (its
 * -fipa-ra on), acc keeps its values in %xmm1-%xmm6 across each call of
 * sq, which touches %xmm0 only.  Under "r *" the return hook must leave
 * them as sq did.
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static double sq(double x)
{
	return x * x;
}

__attribute__((noinline)) static double acc(int n, double k)
{
	double s = 0, t = k * 1.5, u = k + 0.25;
	int i;

	for (i = 0; i < n; i++) {
		s += sq(i * 0.5) * t + u;
		t += 0.125;
		u *= 1.0001;
	}
	return s;
}

int main(int argc, char **argv)
{
	printf("%.6f\n", acc(argc > 1 ? atoi(argv[1]) : 100, 3.0));
	return 0;
}
