/* A program with its own malloc, free, calloc and realloc (a bump allocator
 * over a static arena): every call of them, also libc's, is the program's,
 * and a tracer's own allocations must not show up in its trace. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* noipa: built with -O2 too, every call in the source stays a call (tail
 * calls may become jumps) */
#define NOIPA __attribute__((noipa))

static _Alignas(16) char arena[64 << 20];
static size_t used;

NOIPA static void *bump(size_t n)
{
	size_t *p;

	n = (n + 31) & ~(size_t)15;
	if (used + n > sizeof(arena)) {
		errno = ENOMEM;
		return NULL;
	}
	p = (size_t *)(arena + used);
	used += n;
	*p = n - 16;
	return (char *)p + 16;
}

NOIPA void *malloc(size_t n)
{
	return bump(n);
}

NOIPA void free(void *p)
{
	(void)p;
}

NOIPA void *calloc(size_t a, size_t b)
{
	void *p = bump(a * b);

	if (p)
		memset(p, 0, a * b);
	return p;
}

NOIPA void *realloc(void *old, size_t n)
{
	void *p = bump(n);

	if (p && old) {
		size_t had = *(size_t *)((char *)old - 16);

		memcpy(p, old, had < n ? had : n);
	}
	return p;
}

NOIPA int use_heap(int n)
{
	int *a = malloc(n * sizeof(int));
	int *b = calloc(n, sizeof(int));
	int s = 0;

	for (int i = 0; i < n; i++)
		a[i] = i;
	a = realloc(a, 2 * n * sizeof(int));
	for (int i = 0; i < n; i++)
		s += a[i] + b[i];
	free(a);
	free(b);
	return s;
}

int main(void)
{
	int s = use_heap(4) + use_heap(8);
	char *name = strdup("own malloc");	/* libc calls the program's malloc */

	printf("%s %d\n", name, s);		/* and stdout's buffer */
	free(name);
	return s == 6 + 28 ? 0 : 1;
}
