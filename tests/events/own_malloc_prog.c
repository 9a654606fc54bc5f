// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A program with its own allocator (traceable, like the rest of it), for
 * tests/events/test_own_malloc_trace.sh: its constructor allocates once,
 * main starts a thread.  Built traceable, not linked with libfhook.
 */
#include <pthread.h>
#include <stddef.h>
#include <string.h>

static char arena[16 << 20] __attribute__((aligned(64)));
static unsigned long used;
static volatile int sink;

__attribute__((noinline)) static void *bump(size_t n)
{
	unsigned long o = __atomic_fetch_add(&used, (n + 31) & ~15UL, __ATOMIC_RELAXED);

	if (o + n + 16 > sizeof(arena))
		return NULL;
	*(size_t *)(arena + o) = n;
	return arena + o + 16;
}

__attribute__((noinline)) void *malloc(size_t n)
{
	return bump(n);
}

__attribute__((noinline)) void free(void *p)
{
	__asm__ volatile("" : : "r"(p));
}

__attribute__((noinline)) void *calloc(size_t a, size_t b)
{
	return bump(a * b);	/* the arena is never reused: zero */
}

__attribute__((noinline)) void *realloc(void *p, size_t n)
{
	void *q = bump(n);
	size_t old = p ? *(size_t *)((char *)p - 16) : 0;

	if (p && q)
		memcpy(q, p, old < n ? old : n);
	return q;
}

__attribute__((noinline)) int work(int x)
{
	sink += x;
	return x + 1;
}

static void *thread_body(void *arg)
{
	work(1);
	return NULL;
}

__attribute__((noinline)) void own_constructor(void)
{
	void *p = malloc(10);

	__asm__ volatile("" : : "r"(p) : "memory");
	free(p);
}

__attribute__((constructor)) static void ctor(void)
{
	own_constructor();
}

int main(void)
{
	pthread_t t;

	work(0);
	pthread_create(&t, NULL, thread_body, NULL);
	pthread_join(t, NULL);
	return 0;
}
