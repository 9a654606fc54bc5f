/* longjmp out of nested traced frames, from several depths, and a second
 * setjmp in a traced function that is itself left by a later longjmp;
 * siglongjmp out of a signal handler, through the frames the signal
 * interrupted. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>

/* noipa: built with -O2 too, every call in the source stays a call (tail
 * calls may become jumps) */
#define NOIPA __attribute__((noipa))

static jmp_buf top, inner;
static sigjmp_buf sig_env;

NOIPA int note(int x)
{
	return x + 1;
}

NOIPA void jump_from(int n, jmp_buf *to)
{
	if (n == 0)
		longjmp(*to, 1);
	note(n);
	jump_from(n - 1, to);
	note(-n);	/* never reached: no tail call, -O2 keeps the recursion */
}

NOIPA int catch_jump(int n)
{
	if (setjmp(inner) == 0) {
		jump_from(n, &inner);
		return 0;
	}
	return note(n);
}

NOIPA void leave_twice(void)
{
	note(catch_jump(2));
	jump_from(3, &top);
}

NOIPA void handler(int sig)
{
	note(sig);
	siglongjmp(sig_env, 1);
}

NOIPA void deep(int n)
{
	if (n == 0)
		raise(SIGUSR1);
	else
		deep(n - 1);
	note(-n);	/* never reached */
}

NOIPA int catch_sig(int n)
{
	if (sigsetjmp(sig_env, 1) == 0) {
		deep(n);
		return 0;
	}
	return note(n);
}

int main(void)
{
	int s = 0;

	s += catch_jump(0);
	s += catch_jump(1);
	s += catch_jump(10);
	if (setjmp(top) == 0)
		leave_twice();
	signal(SIGUSR1, handler);
	s += catch_sig(3);
	s += catch_sig(0);
	s += note(s);
	printf("%d\n", s);
	return 0;
}
