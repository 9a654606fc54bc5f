// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_report.sh: calls that never return.
 *
 *   ends exit       main -> outer -> middle -> inner, which calls exit(3);
 *                   bye(), an atexit handler, runs inside exit()
 *   ends thread     a worker thread: worker -> block, which waits forever
 *                   on a pipe; main returns once block has started
 *   ends kill       main -> k1 -> k2 -> k3, which raises SIGKILL
 *   ends longjmp    main -> catcher -> jumper(3) -> ... -> jumper(0), which
 *                   longjmps back to catcher; then after() once
 */
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define F __attribute__((noinline, noipa))

static volatile int sink;

/* ---- exit() three frames below main */
F void bye(void)
{
	sink++;
}

F void inner(void)
{
	sink++;
	exit(3);
}

F void middle(void)
{
	inner();
	sink++;
}

F void outer(void)
{
	middle();
	sink++;
}

/* ---- a thread still blocked when the program ends */
static sem_t started;
static int fds[2];

F void block(void)
{
	char c;

	sem_post(&started);
	for (;;)
		if (read(fds[0], &c, 1) <= 0)
			pause();
}

F void *worker(void *arg)
{
	block();
	return arg;
}

F void spawn(void)
{
	pthread_t t;

	if (pipe(fds) || sem_init(&started, 0, 0) ||
	    pthread_create(&t, NULL, worker, NULL))
		abort();
	while (sem_wait(&started))
		;
}

F void finish(void)
{
	sink++;
}

/* ---- SIGKILL from inside */
F void k3(void)
{
	fflush(stdout);
	raise(SIGKILL);
}

F void k2(void)
{
	k3();
	sink++;
}

F void k1(void)
{
	k2();
	sink++;
}

/* ---- longjmp out of nested frames */
static jmp_buf env;

F void jumper(int n)
{
	if (n == 0)
		longjmp(env, 1);
	jumper(n - 1);
	sink++;
}

F int catcher(void)
{
	if (setjmp(env))
		return 1;
	jumper(3);
	return 0;
}

F void after(void)
{
	sink++;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "exit")) {
		atexit(bye);
		outer();
	} else if (!strcmp(mode, "thread")) {
		spawn();
		finish();
		return 0;
	} else if (!strcmp(mode, "kill")) {
		k1();
	} else if (!strcmp(mode, "longjmp")) {
		printf("%d\n", catcher());
		after();
		return 0;
	}
	return 2;
}
