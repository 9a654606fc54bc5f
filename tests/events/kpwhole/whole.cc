// A program recorded whole: exceptions, longjmp, a thread and a forked
// child, called the same way built with fhook's flags and without.
#include <pthread.h>
#include <setjmp.h>
#include <stdexcept>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static jmp_buf jb;
static volatile int sink;

extern "C" {
__attribute__((noinline)) int leaf(int x)
{
	sink = x;
	return x + 1;
}

__attribute__((noinline)) int thrower(int x)
{
	if (x > 0)
		throw std::runtime_error("thrown");
	return leaf(x);
}

__attribute__((noinline)) int middle(int x)
{
	return leaf(x) + thrower(x);
}

__attribute__((noinline)) int catcher(int x)
{
	try {
		return middle(x);
	} catch (const std::exception &) {
		return leaf(-1);
	}
}

__attribute__((noinline)) void jumper(int x)
{
	leaf(x);
	longjmp(jb, 1);
}

__attribute__((noinline)) int jdeep(int x)
{
	jumper(x);
	return sink;
}

__attribute__((noinline)) int jtop(int x)
{
	if (!setjmp(jb))
		return jdeep(x);
	return leaf(x);
}

__attribute__((noinline)) void *worker(void *arg)
{
	return (void *)(long)catcher((int)(long)arg);
}

__attribute__((noinline)) int child_work(int x)
{
	return leaf(x) + leaf(x + 1);
}
}

int main(void)
{
	pthread_t t;
	pid_t pid;

	catcher(1);
	catcher(0);
	jtop(2);
	if (pthread_create(&t, NULL, worker, (void *)1L))
		return 1;
	pthread_join(t, NULL);
	pid = fork();
	if (pid == 0) {
		child_work(3);
		exit(0);
	}
	waitpid(pid, NULL, 0);
	printf("done\n");
	return 0;
}
