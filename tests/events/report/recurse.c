// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_report.sh: recursion with known call counts.
 *
 *   recurse [N [extra]]
 *
 * main -> run -> fib(N) (fib(10): 177 calls, 10 levels below the first),
 *               is_even(7) -> is_odd(6) -> ... -> is_odd(0) (4 + 4 calls),
 *               touch() N times,
 *               extra() once when a second argument is given.
 */
#include <stdio.h>
#include <stdlib.h>

#define F __attribute__((noinline, noipa))

static volatile int sink;

F int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

F int is_odd(int n);

F int is_even(int n)
{
	return n == 0 ? 1 : is_odd(n - 1);
}

F int is_odd(int n)
{
	return n == 0 ? 0 : is_even(n - 1);
}

F void touch(int i)
{
	sink += i;
}

F void extra(void)
{
	sink++;
}

F int run(int n, int more)
{
	int f, e, i;

	f = fib(n);
	e = is_even(7);
	for (i = 0; i < n; i++)
		touch(i);
	if (more)
		extra();
	return f + e;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;

	printf("%d\n", run(n, argc > 2));
	return 0;
}
