// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Arguments of every width and kind in registers, for the recorder's
 * events written straight into the ring (record_fetch.c record_fast())
 * against the same events staged: "show" calls each function with known
 * values; "loop N" calls fa_one() N times, for counting instructions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static volatile long sink;

NOINLINE int fa_mix(unsigned char a, short b, int c, long d, unsigned long e, void *f)
{
	sink += a + b + c + d + (long)e + (f != NULL);
	return a + b + c + (int)d;
}

NOINLINE double fa_dbl(double x, float y)
{
	return x * y;
}

NOINLINE long fa_one(long x)
{
	sink += x;
	return x + 1;
}

int main(int argc, char **argv)
{
	long i, n;

	if (argc > 2 && !strcmp(argv[1], "loop")) {
		n = atol(argv[2]);
		for (i = 0; i < n; i++)
			fa_one(i);
		return 0;
	}
	fa_mix(200, -3, -70000, -5000000000L, 0xdeadbeefcafeUL, (void *)0x1000);
	fa_mix(7, 32767, 2147483647, 9, 0, NULL);
	printf("%.2f\n", fa_dbl(1.5, 2.0f));
	printf("%ld\n", fa_one(41));
	return 0;
}
