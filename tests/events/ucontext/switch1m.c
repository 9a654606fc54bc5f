/*
 * A coroutine and main switch stacks N times (argv[1]), each time from
 * inside a traced function whose return is hooked: every hooked frame is
 * left for the other stack and returns after the next switch back.  The
 * coroutine's stack is an array in main's frame.
 */
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

static ucontext_t uc_main, uc_co;
static long n, co_sum, main_sum;

__attribute__((noinline)) void co_side(long i)
{
	co_sum += i;
	swapcontext(&uc_co, &uc_main);
}

__attribute__((noinline)) void co_body(void)
{
	long i;

	for (i = 0; i < n; i++)
		co_side(i);
}

__attribute__((noinline)) void main_side(long i)
{
	swapcontext(&uc_main, &uc_co);
	main_sum += i;
}

int main(int argc, char **argv)
{
	char stack[65536] __attribute__((aligned(16)));
	long i;

	n = argc > 1 ? atol(argv[1]) : 1000000;
	getcontext(&uc_co);
	uc_co.uc_stack.ss_sp = stack;
	uc_co.uc_stack.ss_size = sizeof(stack);
	uc_co.uc_link = &uc_main;
	makecontext(&uc_co, co_body, 0);
	for (i = 0; i < n; i++)
		main_side(i);
	printf("%ld %ld\n", co_sum, main_sum);
	return 0;
}
