// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A call tree for kprobe globs ("p *", "r *"): built without fhook's
 * flags (gcc -O2 and -O0) and with them, its calls recorded both ways
 * must make the same tree.  Static and global functions, recursion, a
 * loop, a call through a pointer, a library's functions (kpglob_lib.so).
 *
 *   kpglob_prog [N]
 */
#include <stdio.h>
#include <stdlib.h>

long kpg_lib_add(long a, long b);
long kpg_lib_twice(long a);
long other_lib_fn(long a);

static volatile long sink;

__attribute__((noinline)) static long leaf(long x)
{
	sink += x;
	return x * 3 + 1;
}

__attribute__((noinline)) long fib(int n)
{
	long r;

	if (n < 2)
		return leaf(n);
	r = fib(n - 1);
	r += fib(n - 2);
	sink += r;
	return r;
}

__attribute__((noinline)) static long mid(int n)
{
	long s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += leaf(i);
	sink += s;
	return s;
}

__attribute__((noinline)) static long by_pointer(long (*fn)(long), long x)
{
	long r = fn(x);

	sink += r;
	return r;
}

__attribute__((noinline)) long outer(int n)
{
	long r = mid(n);

	r += fib(n);
	r += by_pointer(leaf, n);
	r += kpg_lib_twice(kpg_lib_add(n, 1));
	r += other_lib_fn(n);
	sink += r;
	return r;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;

	printf("%ld\n", outer(n));
	return 0;
}
