/*
 * A child that allocates with the program's own (traced) allocator and
 * ends at once: exit(), _exit() or abort() (argv[1]).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

static char arena[1 << 20] __attribute__((aligned(16)));
static unsigned long used;

__attribute__((noinline)) void *malloc(size_t n)
{
	void *p = arena + used;

	used += (n + 15) & ~15UL;
	return p;
}

__attribute__((noinline)) void free(void *p)
{
	__asm__ volatile("" : : "r"(p));
}

__attribute__((noinline)) void *calloc(size_t a, size_t b)
{
	return malloc(a * b);	/* the arena is never reused: zero */
}

__attribute__((noinline)) void *realloc(void *p, size_t n)
{
	void *q = malloc(n);

	if (p)
		__builtin_memcpy(q, p, n);
	return q;
}

int main(int argc, char **argv)
{
	pid_t pid = fork();

	if (pid == 0) {
		void *p = malloc(10);

		free(p);
		if (argc > 1 && !strcmp(argv[1], "_exit"))
			_exit(0);
		if (argc > 1 && !strcmp(argv[1], "abort"))
			abort();
		exit(0);
	}
	waitpid(pid, NULL, 0);
	return 0;
}
