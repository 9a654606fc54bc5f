/* Plain nested calls and recursion: the call tree depends on argv[1] only. */
#include <stdio.h>
#include <stdlib.h>

/* noipa: built with -O2 too, every call in the source stays a call (tail
 * calls may become jumps) */
#define NOIPA __attribute__((noipa))

NOIPA int leaf(int x)
{
	return x * 2 + 1;
}

NOIPA int mid(int x)
{
	return leaf(x) + leaf(x + 1);
}

NOIPA int fib(int n)
{
	if (n < 2)
		return n;
	return fib(n - 1) + fib(n - 2);
}

int even(int n);

NOIPA int odd(int n)
{
	return n == 0 ? 0 : even(n - 1);
}

NOIPA int even(int n)
{
	return n == 0 ? 1 : odd(n - 1);
}

NOIPA int outer(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += mid(i);
	return s + fib(n) + even(n);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5;

	printf("%d\n", outer(n));
	return 0;
}
