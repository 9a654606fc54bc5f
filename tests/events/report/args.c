// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_report.sh: arguments of every type class in the graph.
 *
 * main -> show -> add(5, 3), add(-7, 2), big(2^63 + 5), ptr(0x1234abcd),
 * slen("hi you"), up('q'), scale(2.5, 3), scalef(0.25f), sum({1, -2, 3, 40}, 4)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define F __attribute__((noinline, noipa))

F int add(int a, int b)
{
	return a + b;
}

F unsigned long long big(unsigned long long v)
{
	return v + 1;
}

F void *ptr(void *p)
{
	return (char *)p + 16;
}

F size_t slen(const char *s)
{
	return strlen(s);
}

F char up(char c)
{
	return c - 'a' + 'A';
}

F double scale(double x, int k)
{
	return x * k;
}

F float scalef(float x)
{
	return x * 2;
}

F int sum(const int *a, int n)
{
	int s = 0;

	while (n--)
		s += a[n];
	return s;
}

F long show(void)
{
	static const int arr[4] = { 1, -2, 3, 40 };
	long r = 0;

	r += add(5, 3);
	r += add(-7, 2);
	r += (long)big(9223372036854775813ULL);
	r += (long)(uintptr_t)ptr((void *)(uintptr_t)0x1234abcd);
	r += (long)slen("hi you");
	r += up('q');
	r += (long)scale(2.5, 3);
	r += (long)scalef(0.25f);
	r += sum(arr, 4);
	return r;
}

int main(void)
{
	printf("%ld\n", show());
	return 0;
}
