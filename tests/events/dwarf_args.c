/*
 * Functions whose parameters DWARF names and types: integers, a pointer
 * to a struct, a string, doubles (in the vector registers) and a double
 * returned, for kprobe and fprobe events with $arg*, $argN and globs.
 * Built by tests/events/test_dwarf_args.sh with and without fhook's
 * flags, with its debug information in the file or in a separate one.
 */
#include <stdio.h>

struct point {
	int x;
	double y;
};

__attribute__((noinline)) int da_add(int a, long b, struct point *p)
{
	return a + (int)b + p->x + (int)p->y;
}

__attribute__((noinline)) double da_scale(double v, const char *label, double k)
{
	printf("%s\n", label);
	return v * k;
}

__attribute__((noinline)) int da_none(void)
{
	return 7;
}

int main(void)
{
	struct point p = { 3, 1.5 };
	int s = da_add(1, 2, &p);
	double d = da_scale(2.5, "scaled", 3.0);

	printf("%d %g %d\n", s, d, da_none());
	return 0;
}
