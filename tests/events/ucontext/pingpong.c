/*
 * Two contexts hand the thread to each other with swapcontext(), each
 * inside traced functions: the coroutine's stack is an array in main's
 * frame (argv[1] "local", inside the thread's own stack) or from malloc().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

static ucontext_t uc_main, uc_co;
static int sum;

__attribute__((noinline)) int leaf(int x)
{
	__asm__ volatile("");
	return x + 1;
}

__attribute__((noinline)) void co_step(int i)
{
	sum += leaf(i);
	swapcontext(&uc_co, &uc_main);
}

__attribute__((noinline)) void co_body(void)
{
	int i;

	for (i = 0; i < 3; i++)
		co_step(i);
}

__attribute__((noinline)) void main_step(int i)
{
	sum += leaf(i);
	swapcontext(&uc_main, &uc_co);
}

int main(int argc, char **argv)
{
	char local[65536] __attribute__((aligned(16)));
	int i;

	getcontext(&uc_co);
	uc_co.uc_stack.ss_sp = argc > 1 && !strcmp(argv[1], "local") ? local : malloc(65536);
	uc_co.uc_stack.ss_size = 65536;
	uc_co.uc_link = &uc_main;
	makecontext(&uc_co, co_body, 0);
	for (i = 0; i < 4; i++)
		main_step(i);
	printf("%d\n", sum);
	return 0;
}
